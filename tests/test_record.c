/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The core: recorder, session API, tct round trip, CLI behaviour,
 * determinism, --exact equivalence, faults, limits, native equivalence. */
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "evlog.h"
#include "recorder/decode.h"
#include "testutil.h"

static int record_lib(evlog *l, const char *guest, const char *arg,
                      const tc_options *o, tc_run_result *res) {
  tc_options def;
  if (!o) {
    tc_options_init(&def);
    def.quiet = 1;
    o = &def;
  }
  const char *argv[] = {tu_guest(guest), arg, NULL};
  tc_error err = {{0}};
  memset(l, 0, sizeof *l);
  tc_options quiet = *o;
  static int devnull = -1;
  if (devnull < 0)
    devnull = open("/dev/null", O_WRONLY);
  quiet.stdout_fd = devnull;
  o = &quiet;
  int rc = evlog_record(l, o, argv, res, &err);
  if (rc < 0)
    fprintf(stderr, "record %s: %s\n", guest, err.msg);
  return rc;
}

/* Runs a command, returns its exit status and stdout. */

/* ---------------------------------------------- reference equivalence */

static void check_reference(tu_ref_mode mode, const char *guest,
                            const char *arg) {
  tu_check_reference(mode, guest, arg);
}

static void test_native_x86_64(void) {
  check_reference(TU_REF_AUTO, "hello64", "one two");
  check_reference(TU_REF_AUTO, "hello64-pie", "x");
  check_reference(TU_REF_AUTO, "insns64", "");
  check_reference(TU_REF_AUTO, "loop64", "5000");
  check_reference(TU_REF_AUTO, "glibc64", "file64.txt");
  check_reference(TU_REF_AUTO, "glibc64-pie", "file64p.txt");
  check_reference(TU_REF_AUTO, "segv64", "");
  check_reference(TU_REF_AUTO, "ill64", "");
  check_reference(TU_REF_AUTO, "div64", "");
  check_reference(TU_REF_AUTO, "priv64", "");
}

static void i386_guests(tu_ref_mode mode) {
  check_reference(mode, "hello32", "a b c");
  check_reference(mode, "insns32", "");
  check_reference(mode, "loop32", "3000");
  check_reference(mode, "segv32", "");
  check_reference(mode, "priv32", "");
  check_reference(mode, "glibc32", "file32.txt");
}

static void test_native_i386(void) { i386_guests(TU_REF_AUTO); }

/* As on a host whose kernel cannot run i386 code: every reference comes
 * from qemu-user, and still equals tracecorn. */
static void test_reference_qemu_i386(void) { i386_guests(TU_REF_QEMU); }

/* The helper itself: qemu is really used when forced, gives the native
 * result where both can run, and a program nothing can start is reported,
 * never compared. */
static void test_reference_helper(void) {
  char why[512] = "";
  const char *args[] = {"p", "q", NULL};
  tu_ref_run nat, emu;
  CU_ASSERT_EQUAL(tu_reference_run(TU_REF_QEMU, tu_tmpdir(),
                                   tu_guest("hello64"), args, &emu, why,
                                   sizeof why),
                  0);
  CU_ASSERT_STRING_EQUAL(emu.how, "qemu-x86_64-static");
  CU_ASSERT_PTR_NOT_NULL(strstr(emu.out ? emu.out : "", "arg: q"));
  if (tu_reference_run(TU_REF_NATIVE, tu_tmpdir(), tu_guest("hello64"), args,
                       &nat, why, sizeof why) == 0) {
    CU_ASSERT_STRING_EQUAL(nat.how, "native");
    CU_ASSERT_EQUAL(nat.status, emu.status);
    CU_ASSERT_STRING_EQUAL(nat.out, emu.out);
    free(nat.out);
  }
  free(emu.out);

  CU_ASSERT_STRING_EQUAL(tu_qemu_for(tu_guest("hello32"), why, sizeof why),
                         "qemu-i386-static");
  CU_ASSERT_STRING_EQUAL(tu_qemu_for(tu_guest("glibc64"), why, sizeof why),
                         "qemu-x86_64-static");

  /* An executable that is no program: exec fails (ENOEXEC), no qemu fits. */
  const char *junk = tu_tmp("not-a-program");
  CU_ASSERT_EQUAL_FATAL(tu_write_file(junk, "\x01\x02junk", 6), 0);
  CU_ASSERT_EQUAL_FATAL(chmod(junk, 0755), 0);
  tu_ref_run bad;
  why[0] = 0;
  CU_ASSERT_EQUAL(tu_reference_run(TU_REF_AUTO, tu_tmpdir(), junk, NULL, &bad,
                                   why, sizeof why),
                  -1);
  CU_ASSERT_PTR_NOT_NULL(strstr(why, "not an ELF file"));
  CU_ASSERT_PTR_NULL(bad.out);
  /* A missing program is never a reference either. */
  CU_ASSERT_EQUAL(tu_reference_run(TU_REF_NATIVE, tu_tmpdir(),
                                   tu_tmp("no-such-program"), NULL, &bad, why,
                                   sizeof why),
                  -1);
  CU_ASSERT_PTR_NOT_NULL(strstr(why, "did not start"));
}

/* ----------------------------------------------------- event semantics */

static void test_events_hello(void) {
  evlog l;
  tc_run_result res;
  tc_run_result_init(&res);
  CU_ASSERT_EQUAL_FATAL(record_lib(&l, "hello64", "arg1", NULL, &res), 0);
  CU_ASSERT_EQUAL(res.reason, TC_EXIT_EXITED);
  CU_ASSERT_EQUAL(res.status, 1);
  /* The stream: maps, a keyframe, instructions..., exit last. */
  CU_ASSERT_EQUAL(l.ev[0].kind, TC_EV_MAP);
  CU_ASSERT_EQUAL(l.ev[l.n - 1].kind, TC_EV_EXIT);
  CU_ASSERT_EQUAL(l.ev[l.n - 1].u.exit.insn_count, evlog_count(&l, TC_EV_INSN));
  CU_ASSERT_EQUAL(res.insns, evlog_count(&l, TC_EV_INSN));
  /* Syscalls: write(1, "Hello from tracecorn!\n", 22) = 22 first. */
  const tc_event *first_sys = NULL;
  uint64_t prev_index = 0;
  int insn_seen = 0;
  const uint8_t *prev_after = NULL;
  const tc_arch *a = l.arch;
  for (size_t i = 0; i < l.n; i++) {
    const tc_event *e = &l.ev[i];
    if (e->kind == TC_EV_SYSCALL && !first_sys)
      first_sys = e;
    if (e->kind != TC_EV_INSN)
      continue;
    const tc_insn_event *in = &e->u.insn;
    if (insn_seen)
      CU_ASSERT_EQUAL(in->index, prev_index + 1);
    /* Chaining: state before i == state after i-1, PC == pc. */
    if (prev_after)
      CU_ASSERT(memcmp(prev_after, in->state_before, a->state_size) == 0);
    CU_ASSERT_EQUAL(tc_state_get(a, in->state_before, a->pc_reg), in->pc);
    /* Listed registers are exactly the changed ones. */
    int listed = 0;
    for (int r = 0; r < a->nregs; r++) {
      bool ch =
          memcmp(in->state_before + a->regs[r].offset,
                 in->state_after + a->regs[r].offset, a->regs[r].size) != 0;
      bool in_list = false;
      for (int k = 0; k < in->nregs; k++)
        in_list = in_list || in->regs[k] == r;
      CU_ASSERT_EQUAL(ch, in_list);
      listed += in_list;
    }
    CU_ASSERT_EQUAL(listed, in->nregs);
    prev_after = in->state_after;
    prev_index = in->index;
    insn_seen = 1;
  }
  CU_ASSERT_PTR_NOT_NULL_FATAL(first_sys);
  CU_ASSERT_STRING_EQUAL(first_sys->u.sys.name, "write");
  CU_ASSERT_EQUAL(first_sys->u.sys.args[0], 1);
  CU_ASSERT_EQUAL(first_sys->u.sys.args[2], 22);
  CU_ASSERT_EQUAL(first_sys->u.sys.ret, 22);
  /* It follows the syscall instruction itself. */
  const tc_event *before = first_sys - 1;
  CU_ASSERT_EQUAL(before->kind, TC_EV_INSN);
  CU_ASSERT(before->u.insn.bytes[0] == 0x0f && before->u.insn.bytes[1] == 0x05);
  CU_ASSERT_EQUAL(first_sys->u.sys.insn_index, before->u.insn.index);
  evlog_free(&l);
}

/* rep movsb with count 100: 100 instructions at one PC, as single-stepping
 * sees them; only the last moves RIP on. movdqu reads are one 16-byte
 * access, not two 8-byte pieces. */
/* i386 TLS: after glibc loads %gs, gs_base is the base of the descriptor
 * it names, and every gs:[disp32] load reads gs_base + disp. */
static void test_i386_gs_base(void) {
  evlog l;
  tc_run_result res;
  tc_run_result_init(&res);
  CU_ASSERT_EQUAL_FATAL(record_lib(&l, "glibc32", NULL, NULL, &res), 0);
  int gs_base = tc_arch_reg_index(l.arch, "gs_base");
  CU_ASSERT_FATAL(gs_base >= 0);
  int checked = 0;
  for (size_t i = 0; i < l.n; i++) {
    if (l.ev[i].kind != TC_EV_INSN)
      continue;
    const tc_insn_event *e = &l.ev[i].u.insn;
    if (e->size != 6 || e->bytes[0] != 0x65 || e->bytes[1] != 0xa1)
      continue; /* mov eax, gs:[disp32] */
    uint32_t disp = (uint32_t)e->bytes[2] | (uint32_t)e->bytes[3] << 8 |
                    (uint32_t)e->bytes[4] << 16 | (uint32_t)e->bytes[5] << 24;
    uint64_t base = tc_state_get(l.arch, e->state_before, gs_base);
    CU_ASSERT_NOT_EQUAL(base, 0);
    CU_ASSERT_EQUAL_FATAL(e->nmem, 1);
    CU_ASSERT_EQUAL(e->mem[0].addr, (base + disp) & 0xffffffffu);
    checked++;
  }
  CU_ASSERT(checked > 10);
  /* Every state shows the selectors Linux gives a 32-bit process:
   * __USER32_CS 0x23 and __USER_DS 0x2b, both RPL 3. */
  int cs = tc_arch_reg_index(l.arch, "cs"),
      ss = tc_arch_reg_index(l.arch, "ss");
  CU_ASSERT_FATAL(cs >= 0 && ss >= 0);
  size_t states = 0;
  for (size_t i = 0; i < l.n; i++) {
    const uint8_t *st = l.ev[i].kind == TC_EV_INSN ? l.ev[i].u.insn.state_after
                        : l.ev[i].kind == TC_EV_KEYFRAME ? l.ev[i].u.key.state
                                                         : NULL;
    if (!st)
      continue;
    CU_ASSERT_EQUAL(tc_state_get(l.arch, st, cs), 0x23);
    CU_ASSERT_EQUAL(tc_state_get(l.arch, st, ss), 0x2b);
    states++;
  }
  CU_ASSERT(states > 1000);
  evlog_free(&l);
}

static void test_rep_and_wide_access(void) {
  evlog l;
  tc_run_result res;
  tc_run_result_init(&res);
  CU_ASSERT_EQUAL_FATAL(record_lib(&l, "insns64", NULL, NULL, &res), 0);
  const tc_arch *a = l.arch;
  uint64_t rep_pc = 0;
  int reps = 0, advanced = 0, wide = 0, rcx_seq_ok = 1;
  uint64_t expect_rcx = 100;
  for (size_t i = 0; i < l.n; i++) {
    const tc_event *e = &l.ev[i];
    if (e->kind != TC_EV_INSN)
      continue;
    const tc_insn_event *in = &e->u.insn;
    if (in->size == 2 && in->bytes[0] == 0xf3 && in->bytes[1] == 0xa4) {
      if (!rep_pc)
        rep_pc = in->pc;
      if (in->pc != rep_pc)
        continue;
      reps++;
      uint64_t rcx =
          tc_state_get(a, in->state_before, tc_arch_reg_index(a, "rcx"));
      if (rcx != expect_rcx)
        rcx_seq_ok = 0;
      expect_rcx--;
      CU_ASSERT_EQUAL(in->nmem, 2); /* one read, one write */
      if (tc_state_get(a, in->state_after, a->pc_reg) != in->pc)
        advanced++;
    }
    for (uint32_t k = 0; k < in->nmem; k++)
      if (in->mem[k].size == 16 && in->mem[k].kind == TC_MEM_READ)
        wide++;
  }
  CU_ASSERT_EQUAL(reps, 100);
  CU_ASSERT_EQUAL(advanced, 1);
  CU_ASSERT(rcx_seq_ok);
  CU_ASSERT(wide >= 1);
  evlog_free(&l);
}

/* ------------------------------------------ determinism and --exact */

static void check_same_file(const char *a, const char *b) {
  size_t na, nb;
  uint8_t *x = tu_read_file(a, &na), *y = tu_read_file(b, &nb);
  CU_ASSERT_PTR_NOT_NULL_FATAL(x);
  CU_ASSERT_PTR_NOT_NULL_FATAL(y);
  CU_ASSERT_EQUAL(na, nb);
  CU_ASSERT(na == nb && memcmp(x, y, na) == 0);
  free(x);
  free(y);
}

static void record_cli(const char *guest, const char *prefix, const char *extra,
                       const char *arg) {
  char *out = NULL;
  tu_runf(&out, 0,
          "cd %s && %s record -q -f tct,text %s -o %s -- %s %s >/dev/null",
          tu_tmpdir(), TC_CLI, extra, prefix, tu_guest(guest), arg);
  free(out);
}

static void test_determinism(void) {
  /* sysmix64 writes a file and stats it: its times are the run's */
  const char *guests[] = {"hello64", "glibc64", "hello32",
                          "insns64", "glibc32", "sysmix64"};
  for (size_t i = 0; i < sizeof guests / sizeof guests[0]; i++) {
    char a[64], b[64], pa[4200], pb[4200];
    snprintf(a, sizeof a, "det-%s-a", guests[i]);
    snprintf(b, sizeof b, "det-%s-b", guests[i]);
    /* No file argument: a file's mtime is real input that differs. */
    record_cli(guests[i], a, "", "");
    record_cli(guests[i], b, "", "");
    snprintf(pa, sizeof pa, "%s.tct", tu_tmp(a));
    snprintf(pb, sizeof pb, "%s.tct", tu_tmp(b));
    check_same_file(pa, pb);
    snprintf(pa, sizeof pa, "%s.txt", tu_tmp(a));
    snprintf(pb, sizeof pb, "%s.txt", tu_tmp(b));
    check_same_file(pa, pb);
  }
  /* A different seed changes AT_RANDOM, so the trace differs. */
  record_cli("hello64", "seed-1", "--seed 1", "");
  record_cli("hello64", "seed-2", "--seed 2", "");
  char p1[4200], p2[4200];
  snprintf(p1, sizeof p1, "%s.tct", tu_tmp("seed-1"));
  snprintf(p2, sizeof p2, "%s.tct", tu_tmp("seed-2"));
  size_t n1, n2;
  uint8_t *x = tu_read_file(p1, &n1), *y = tu_read_file(p2, &n2);
  CU_ASSERT_PTR_NOT_NULL_FATAL(x);
  CU_ASSERT_PTR_NOT_NULL_FATAL(y);
  CU_ASSERT(n1 != n2 || memcmp(x, y, n1) != 0);
  free(x);
  free(y);
}

/* Real programs that stat their inputs (Debian's busybox-static) record
 * byte-identically twice: host stat results that vary between runs are
 * normalised; --host-stat passes them through. */
static void test_determinism_busybox(void) {
  const char *bb = "/bin/busybox";
  CU_ASSERT_FATAL(tu_have(bb)); /* scripts/setup-debian.sh installs it */
  const char *dir = tu_tmp("bb-in");
  mkdir(dir, 0755);
  char in[4200], cmd[8400];
  snprintf(in, sizeof in, "%s/in.txt", dir);
  CU_ASSERT_EQUAL_FATAL(tu_write_file(in, "pear\napple\nfig\n", 15), 0);
  const char *applets[][2] = {
      {"ls -l", dir}, {"sort", in}, {"sha256sum", in}, {"stat", in}};
  for (int i = 0; i < 4; i++) {
    char a[4200], b[4200], *out = NULL;
    for (int k = 0; k < 2; k++) {
      snprintf(k ? b : a, 4200, "%s-%d", tu_tmp("bb"), 2 * i + k);
      tu_runf(&out, 0, "%s record -q -f tct -o %s -- %s %s %s >/dev/null",
              TC_CLI, k ? b : a, bb, applets[i][0], applets[i][1]);
      free(out);
    }
    strcat(a, ".tct");
    strcat(b, ".tct");
    check_same_file(a, b);
  }
  /* sort and sha256sum print exactly what the native run prints */
  for (int i = 1; i < 3; i++) {
    char *nat = NULL, *emu = NULL;
    snprintf(cmd, sizeof cmd, "%s %s %s", bb, applets[i][0], applets[i][1]);
    CU_ASSERT_EQUAL(tu_runf(&nat, 0, "%s", cmd), 0);
    CU_ASSERT_EQUAL(tu_runf(&emu, 0, "%s record -q -f tct -o %s -- %s", TC_CLI,
                            tu_tmp("bb-ref"), cmd),
                    0);
    CU_ASSERT_STRING_EQUAL(nat ? nat : "", emu ? emu : "-");
    free(nat);
    free(emu);
  }
  /* normalised vs host inode numbers */
  struct stat st;
  CU_ASSERT_EQUAL_FATAL(stat(in, &st), 0);
  char want[64], *norm = NULL, *host = NULL;
  snprintf(want, sizeof want, "Inode: %llu ", (unsigned long long)st.st_ino);
  tu_runf(&norm, 0, "%s record -q -f tct -o %s -- %s stat %s", TC_CLI,
          tu_tmp("bb-norm"), bb, in);
  tu_runf(&host, 0, "%s record -q --host-stat -f tct -o %s -- %s stat %s",
          TC_CLI, tu_tmp("bb-host"), bb, in);
  CU_ASSERT_PTR_NOT_NULL(strstr(host ? host : "", want));
  CU_ASSERT_PTR_NULL(strstr(norm ? norm : "", want));
  CU_ASSERT_PTR_NOT_NULL(strstr(norm ? norm : "", "Device: 803h"));
  free(norm);
  free(host);
}

/* The speed paths change no byte: direct register reads (emu/engine/regfile.h)
 * with every read compared against uc_reg_read, and writers on worker
 * threads (lib/pipe.h) with every rebuilt state compared against the
 * recorder's, give the same files as Unicorn's API and one thread, on
 * every arch, with signals, threads and processes. */
static void test_fast_paths_identical(void) {
  const char *guests[] = {"glibc64",      "glibc32",      "glibc-arm64",
                          "glibc-armhf",  "glibc-mipsel", "glibc-mips",
                          "sigthread-64", "sigfault32",   "fork64"};
  const bool x86[] = {1, 1, 0, 0, 0, 0, 1, 1, 1};
  for (size_t i = 0; i < sizeof guests / sizeof guests[0]; i++) {
    char fast[4200], slow[4200], *out = NULL;
    snprintf(fast, sizeof fast, "%s", tu_tmp(guests[i]));
    strcat(fast, "-fast");
    snprintf(slow, sizeof slow, "%s", tu_tmp(guests[i]));
    strcat(slow, "-slow");
    int rf =
        tu_runf(&out, 0,
                "rm -rf %s && mkdir -p %s && cd %s && TRACECORN_REGFILE=check "
                "TRACECORN_PIPE_CHECK=1 TRACECORN_REGFILE_DEBUG=1 %s record "
                "-q -f tct,trac,ucir,bap,text -o t -- %s 2>&1 >/dev/null",
                fast, fast, fast, TC_CLI, tu_guest(guests[i]));
    /* the regfile found registers: the checks above compared something */
    CU_ASSERT_PTR_NOT_NULL(strstr(out ? out : "", "registers direct"));
    CU_ASSERT_PTR_NULL(strstr(out ? out : "", ": 0 of "));
    if (x86[i])
      CU_ASSERT_PTR_NOT_NULL(strstr(out ? out : "", "x86 flags computed"));
    CU_ASSERT_PTR_NULL(strstr(out ? out : "", "check")); /* no mismatch */
    free(out);
    out = NULL;
    int rs = tu_runf(
        &out, 0,
        "rm -rf %s && mkdir -p %s && cd %s && TRACECORN_REGFILE=off "
        "TRACECORN_WRITER_THREADS=0 TRACECORN_CONTINUOUS=0 %s record -q "
        "-f tct,trac,ucir,bap,text -o t -- %s >/dev/null 2>&1",
        slow, slow, slow, TC_CLI, tu_guest(guests[i]));
    free(out);
    CU_ASSERT_EQUAL(rf, rs);
    CU_ASSERT_NOT_EQUAL(rf, 128 + SIGABRT); /* a check failed */
    out = NULL;
    CU_ASSERT_EQUAL(tu_runf(&out, 0, "diff -r %s %s", fast, slow), 0);
    if (out && *out)
      fprintf(stderr, "\n%s: %s", guests[i], out);
    free(out);
  }
}

static void test_exact_equivalence(void) {
  const char *guests[] = {"hello64", "insns64", "glibc64",
                          "hello32", "insns32", "glibc64-pie"};
  for (size_t i = 0; i < sizeof guests / sizeof guests[0]; i++) {
    char why[256] = "";
    int eq = evlog_exact_equal(tu_guest(guests[i]), why, sizeof why);
    if (eq != 0)
      fprintf(stderr, "\n%s: --exact differs: %s\n", guests[i], why);
    CU_ASSERT_EQUAL(eq, 0);
  }
}

/* ----------------------------------------------------------- tct format */

static void test_tct_roundtrip(void) {
  const char *guests[] = {"glibc64", "insns32", "segv64"};
  for (size_t i = 0; i < 3; i++) {
    evlog rec, back;
    tc_options o;
    tc_options_init(&o);
    o.quiet = 1;
    char path[4200];
    snprintf(path, sizeof path, "%s.tct", tu_tmp(guests[i]));
    tc_session *s = tc_session_new(&o, NULL);
    const char *argv[] = {tu_guest(guests[i]), tu_tmp("rt.txt"), NULL};
    tc_error err = {{0}};
    memset(&rec, 0, sizeof rec);
    memset(&back, 0, sizeof back);
    CU_ASSERT_EQUAL_FATAL(tc_session_load_elf(s, argv[0], argv, &err), 0);
    rec.arch = tc_session_info(s)->arch;
    CU_ASSERT_EQUAL(tc_session_add_sink(s, evlog_sink, &rec, &err), 0);
    CU_ASSERT_EQUAL(
        tc_session_add_writer(s, tc_format_by_name("tct"), path, &err), 0);
    CU_ASSERT_EQUAL(tc_session_run(s, NULL, &err), 0);
    tc_session_free(s);
    CU_ASSERT_EQUAL(evlog_read(&back, path, &err), 0);
    char why[256] = "";
    int eq = evlog_equal(&rec, &back, why, sizeof why);
    if (eq)
      fprintf(stderr, "\n%s: tct round trip: %s\n", guests[i], why);
    CU_ASSERT_EQUAL(eq, 0);
    evlog_free(&rec);
    evlog_free(&back);
  }
}

/* Instructions for test_tct_escapes: registers set (by name: a number, or
 * bytes for vectors) and memory accesses. */
typedef struct esc_step {
  const char *reg[2];
  uint64_t val[2];
  const uint8_t *vec[2]; /* 16 bytes, instead of val */
  tc_mem_access mem[2];
  uint32_t nmem;
} esc_step;

/* Writes the steps as INSN events (4-byte instructions from pc 0x1000)
 * through the tct writer, reads the file back and compares. */
static void escapes_roundtrip(tc_arch_id id, const esc_step *steps, int n,
                              const char *name) {
  const tc_arch *a = tc_arch_by_id(id);
  const tc_format *tct = tc_format_by_name("tct");
  CU_ASSERT_PTR_NOT_NULL_FATAL(a);
  size_t ss = a->state_size;
  uint8_t **st = calloc((size_t)n + 1, sizeof *st);
  uint16_t(*ch)[3] = calloc((size_t)n, sizeof *ch);
  tc_event *ev = calloc((size_t)n + 3, sizeof *ev);
  CU_ASSERT_FATAL(st && ch && ev);
  for (int i = 0; i <= n; i++) {
    st[i] = calloc(1, ss);
    CU_ASSERT_FATAL(st[i] != NULL);
    if (i)
      memcpy(st[i], st[i - 1], ss);
    tc_state_set(a, st[i], a->pc_reg, 0x1000 + 4 * (uint64_t)i);
    if (!i)
      continue;
    const esc_step *sp = &steps[i - 1];
    int k = 0;
    for (int j = 0; j < 2 && sp->reg[j]; j++) {
      int r = tc_arch_reg_index(a, sp->reg[j]);
      CU_ASSERT_FATAL(r >= 0);
      if (sp->vec[j])
        memcpy(st[i] + a->regs[r].offset, sp->vec[j], a->regs[r].size);
      else
        tc_state_set(a, st[i], r, sp->val[j]);
      ch[i - 1][k++] = (uint16_t)r;
    }
    ch[i - 1][k++] = (uint16_t)a->pc_reg;
    /* ascending, as the recorder lists them */
    for (int x = 0; x < k; x++)
      for (int y = x + 1; y < k; y++)
        if (ch[i - 1][y] < ch[i - 1][x]) {
          uint16_t t = ch[i - 1][x];
          ch[i - 1][x] = ch[i - 1][y];
          ch[i - 1][y] = t;
        }
  }
  size_t m = 0;
  ev[m].kind = TC_EV_KEYFRAME;
  ev[m++].u.key = (tc_keyframe_event){0, 7, st[0]};
  for (int i = 0; i < n; i++) {
    ev[m].kind = TC_EV_INSN;
    tc_insn_event *in = &ev[m++].u.insn;
    in->index = (uint64_t)i;
    in->pc = 0x1000 + 4 * (uint64_t)i;
    in->tid = 7;
    in->size = 4;
    in->bytes[0] = (uint8_t)i;
    in->nregs =
        (uint16_t)((steps[i].reg[0] != NULL) + (steps[i].reg[1] != NULL) + 1);
    in->regs = ch[i];
    in->state_before = st[i];
    in->state_after = st[i + 1];
    in->nmem = steps[i].nmem;
    in->mem = steps[i].nmem ? steps[i].mem : NULL;
  }
  ev[m].kind = TC_EV_EXIT;
  ev[m++].u.exit = (tc_exit_event){TC_EXIT_EXITED, 0, 0, (uint64_t)n, NULL};
  tc_trace_info info = {0};
  info.arch = a;
  info.entry = 0x1000;
  info.pid = 7;
  info.exe_path = "/bin/escapes";
  info.has_memory = 1;
  info.initial_state = st[0];
  info.continuous = 1; /* as a recording: no whole-state compare */
  char path[4200];
  snprintf(path, sizeof path, "%s.tct", tu_tmp(name));
  tc_error err = {{0}};
  evlog want = {0}, got = {0};
  want.arch = a;
  tc_writer *w = tct->open_writer(path, &info, &err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(w);
  for (size_t i = 0; i < m; i++) {
    CU_ASSERT_EQUAL(tct->write_event(w, &ev[i], &err), 0);
    CU_ASSERT_EQUAL(evlog_sink(&want, &ev[i], &err), 0);
  }
  CU_ASSERT_EQUAL_FATAL(tct->close_writer(w, &err), 0);
  CU_ASSERT_EQUAL_FATAL(evlog_read(&got, path, &err), 0);
  char why[256] = "";
  int eq = evlog_equal(&want, &got, why, sizeof why);
  if (eq)
    fprintf(stderr, "\n%s: %s\n", name, why);
  CU_ASSERT_EQUAL(eq, 0);
  evlog_free(&want);
  evlog_free(&got);
  for (int i = 0; i <= n; i++)
    free(st[i]);
  free(st);
  free(ch);
  free(ev);
}

/* tct version 3 names a register's new value as a read of the same
 * instruction (zero- or sign-extended, either byte order, vectors) or as
 * another register; the cases where the order of accesses matters: a
 * write before the read that sets a register must not name it. */
static void test_tct_escapes(void) {
  static const uint8_t q8[8] = {0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11};
  static const uint8_t d4[4] = {0xef, 0xcd, 0xab, 0x89};
  static const uint8_t b80[1] = {0x80};
  static const uint8_t v16[16] = {1, 2,  3,  4,  5,  6,  7,  8,
                                  9, 10, 11, 12, 13, 14, 15, 16};
  static const uint8_t v8z[16] = {0x88, 0x77, 0x66, 0x55,
                                  0x44, 0x33, 0x22, 0x11};
  static const uint8_t rdx8[8] = {0xbe, 0xba, 0xfe, 0xca,
                                  0xef, 0xbe, 0xad, 0xde};
  static const uint8_t old8[8] = {1};
  const esc_step x64[] = {
      {{"rax"},
       {0x1122334455667788ull},
       {0},
       {{0x2000, 8, TC_MEM_READ, q8, q8}},
       1},
      {{"rax"}, {0x89abcdefull}, {0}, {{0x2010, 4, TC_MEM_READ, d4, d4}}, 1},
      {{"rbx"},
       {0xffffffffffffff80ull},
       {0},
       {{0x2020, 1, TC_MEM_READ, b80, b80}},
       1},
      {{"rcx"}, {0x89abcdefull}, {0}, {{0}}, 0},
      {{"xmm0"}, {0}, {v16}, {{0x2030, 16, TC_MEM_READ, v16, v16}}, 1},
      {{"xmm1"}, {0}, {v16}, {{0}}, 0},
      {{"xmm2"}, {0}, {v8z}, {{0x2000, 8, TC_MEM_READ, q8, q8}}, 1},
      /* the write comes first and stores rdx's new value */
      {{"rdx"},
       {0xdeadbeefcafebabeull},
       {0},
       {{0x2040, 8, TC_MEM_WRITE, old8, rdx8},
        {0x2048, 8, TC_MEM_READ, rdx8, rdx8}},
       2},
      {{"rsi", "rdi"},
       {0x89abcdefull, 0x1122334455667788ull},
       {0},
       {{0x2000, 8, TC_MEM_READ, q8, q8}, {0x2010, 4, TC_MEM_READ, d4, d4}},
       2},
  };
  escapes_roundtrip(TC_ARCH_X86_64, x64, (int)(sizeof x64 / sizeof *x64),
                    "escapes-x64");
  static const uint8_t be4[4] = {0x12, 0x34, 0x56, 0x78};
  const esc_step mips[] = {
      {{"t0"}, {0x12345678}, {0}, {{0x2000, 4, TC_MEM_READ, be4, be4}}, 1},
      {{"t1"}, {0xffffff80}, {0}, {{0x2004, 1, TC_MEM_READ, b80, b80}}, 1},
      {{"t2"}, {0x12345678}, {0}, {{0}}, 0},
      {{"t3"}, {0x1234}, {0}, {{0x2000, 2, TC_MEM_READ, be4, be4}}, 1},
  };
  escapes_roundtrip(TC_ARCH_MIPS, mips, (int)(sizeof mips / sizeof *mips),
                    "escapes-mips");
}

/* The tct writer (and bap's, for instruction sizes) refuses, with a
 * message, the events its reader would reject (a converted or hand-made
 * stream), instead of writing a file that cannot be read back. */
static void test_tct_refuses(void) {
  const tc_arch *a = tc_arch_by_id(TC_ARCH_X86_64);
  const tc_format *tct = tc_format_by_name("tct");
  uint8_t *st = calloc(1, a->state_size);
  CU_ASSERT_PTR_NOT_NULL_FATAL(st);
  static const uint8_t b8[8] = {0};
  const uint16_t unsorted[2] = {3, 1}, ok[1] = {0};
  const tc_mem_access empty = {0x2000, 0, TC_MEM_READ, b8, b8};
  const tc_mem_access nokind = {0x2000, 8, 7, b8, b8};
  struct {
    uint8_t size;
    const uint16_t *regs;
    uint16_t nregs;
    const tc_mem_access *mem;
  } bad[] = {{17, ok, 1, NULL},
             {4, unsorted, 2, NULL},
             {4, ok, 1, &empty},
             {4, ok, 1, &nokind}};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    tc_trace_info info = {0};
    info.arch = a;
    info.exe_path = "/bin/bad";
    info.initial_state = st;
    char path[4200];
    snprintf(path, sizeof path, "%s-%zu.tct", tu_tmp("refused"), i);
    tc_error err = {{0}};
    tc_writer *w = tct->open_writer(path, &info, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(w);
    tc_event ev;
    memset(&ev, 0, sizeof ev);
    ev.kind = TC_EV_INSN;
    ev.u.insn.size = bad[i].size;
    ev.u.insn.regs = bad[i].regs;
    ev.u.insn.nregs = bad[i].nregs;
    ev.u.insn.mem = bad[i].mem;
    ev.u.insn.nmem = bad[i].mem != NULL;
    ev.u.insn.state_before = st;
    ev.u.insn.state_after = st;
    CU_ASSERT_EQUAL(tct->write_event(w, &ev, &err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "refused"));
    tct->close_writer(w, &err);
    if (i)
      continue;
    /* bap's reader takes at most 16 instruction bytes too */
    const tc_format *bap = tc_format_by_name("bap");
    snprintf(path, sizeof path, "%s.frames", tu_tmp("refused-bap"));
    w = bap->open_writer(path, &info, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(w);
    CU_ASSERT_EQUAL(bap->write_event(w, &ev, &err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "refused"));
    bap->close_writer(w, &err);
  }
  free(st);
}

/* Version 1, 2 and 3 files (tests/data/insns64-v1.tct1, insns64-v2.tct2
 * and insns64-v3.tct3, written by those writers: the later ones are the
 * first converted) are still read, and a conversion to the current version
 * (4) reads back as the same events. */
static void test_tct_version1(void) {
  static const char *const old[3][2] = {
      {TC_SOURCE_DIR "/tests/data/insns64-v1.tct1", "TCTRACE1"},
      {TC_SOURCE_DIR "/tests/data/insns64-v2.tct2", "TCTRACE2"},
      {TC_SOURCE_DIR "/tests/data/insns64-v3.tct3", "TCTRACE3"}};
  for (int i = 0; i < 3; i++) {
    const char *src = old[i][0];
    char v3[4200];
    snprintf(v3, sizeof v3, "%s.tct",
             tu_tmp(i == 2 ? "from-v3"
                    : i    ? "from-v2"
                           : "from-v1"));
    size_t n = 0;
    uint8_t *head = tu_read_file(src, &n);
    CU_ASSERT_FATAL(head && n > 8);
    CU_ASSERT_EQUAL(memcmp(head, old[i][1], 8), 0);
    free(head);
    tc_error err = {{0}};
    evlog a, b;
    memset(&a, 0, sizeof a);
    memset(&b, 0, sizeof b);
    CU_ASSERT_EQUAL_FATAL(evlog_read(&a, src, &err), 0);
    CU_ASSERT(evlog_count(&a, TC_EV_INSN) > 1000);
    CU_ASSERT_EQUAL(evlog_count(&a, TC_EV_EXIT), 1);
    CU_ASSERT_EQUAL_FATAL(
        tc_convert(src, NULL, tc_format_by_name("tct"), v3, &err), 0);
    head = tu_read_file(v3, &n);
    CU_ASSERT_FATAL(head && n > 8);
    CU_ASSERT_EQUAL(memcmp(head, "TCTRACE4", 8), 0);
    free(head);
    CU_ASSERT_EQUAL_FATAL(evlog_read(&b, v3, &err), 0);
    char why[256] = "";
    int eq = evlog_equal(&a, &b, why, sizeof why);
    if (eq)
      fprintf(stderr, "\ntct %s -> v3: %s\n", old[i][1], why);
    CU_ASSERT_EQUAL(eq, 0);
    evlog_free(&a);
    evlog_free(&b);
  }
}

static void test_tct_corrupt(void) {
  char path[4200];
  snprintf(path, sizeof path, "%s.tct", tu_tmp("corrupt-src"));
  record_cli("hello64", "corrupt-src", "", "");
  size_t n;
  uint8_t *data = tu_read_file(path, &n);
  CU_ASSERT_PTR_NOT_NULL_FATAL(data);
  /* Every truncation fails cleanly with a message (or reads fully at n). */
  int failures = 0;
  for (size_t cut = 0; cut < n; cut += (cut < 64 ? 1 : 7)) {
    const char *p = tu_tmp("cut.tct");
    tu_write_file(p, data, cut);
    evlog l = {0};
    tc_error err = {{0}};
    int rc = evlog_read(&l, p, &err);
    if (rc < 0) {
      failures++;
      CU_ASSERT(err.msg[0] != 0);
    }
    evlog_free(&l);
  }
  CU_ASSERT(failures > 0);
  /* Flipped bytes in the compressed body: error or valid, never a crash. */
  for (size_t pos = 8; pos < n; pos += n / 50 + 1) {
    uint8_t *c = malloc(n);
    memcpy(c, data, n);
    c[pos] ^= 0x5a;
    const char *p = tu_tmp("flip.tct");
    tu_write_file(p, c, n);
    evlog l = {0};
    tc_error err = {{0}};
    if (evlog_read(&l, p, &err) < 0)
      CU_ASSERT(err.msg[0] != 0);
    evlog_free(&l);
    free(c);
  }
  /* The CLI reports it and exits non-zero. */
  tu_write_file(tu_tmp("half.tct"), data, n / 2);
  char *out = NULL;
  int st = tu_run_merge(&out, TC_CLI, "dump", tu_tmp("half.tct"), NULL);
  CU_ASSERT_NOT_EQUAL(st, 0);
  CU_ASSERT_PTR_NOT_NULL(strstr(out ? out : "", "truncated"));
  free(out);
  free(data);
}

/* ------------------------------------------------- self-modifying code */

/* smc (examples/guests/smc.c) writes a "return K" function, calls it,
 * rewrites its first instruction with K+1, calls it, rewrites it with K+2
 * and calls it again: on its executable stack (K = 0x31), in a page it
 * made RWX (0x41) and in a page it switches between RW and RX (0x51). */
typedef struct smc_guest {
  const char *guest;
  int size; /* of the rewritten instruction */
  /* its encoding with immediate k */
  void (*encode)(uint32_t k, uint8_t *out);
} smc_guest;

static void smc_x86_64(uint32_t k, uint8_t *out) { /* mov $k, %eax */
  uint8_t b[5] = {0xb8, (uint8_t)k, 0, 0, 0};
  memcpy(out, b, sizeof b);
}
static void smc_arm(uint32_t k, uint8_t *out) { /* mov r0, #k (A32) */
  uint8_t b[4] = {(uint8_t)k, 0x00, 0xa0, 0xe3};
  memcpy(out, b, sizeof b);
}
static void smc_mips(uint32_t k, uint8_t *out) { /* addiu $v0, $zero, k */
  uint8_t b[4] = {0x24, 0x02, 0x00, (uint8_t)k};
  memcpy(out, b, sizeof b);
}
static void smc_mipsel(uint32_t k, uint8_t *out) {
  uint8_t b[4] = {(uint8_t)k, 0x00, 0x02, 0x24};
  memcpy(out, b, sizeof b);
}

/* The trace of one place: the instruction with immediate k runs at one pc
 * only, and the instructions recorded there are k, k+1, k+2 in turn (a
 * stale decode would repeat k's bytes). Returns that pc (0 if none). */
static uint64_t check_smc_place(const evlog *l, const smc_guest *g,
                                uint32_t k) {
  uint8_t want[3][16];
  for (uint32_t i = 0; i < 3; i++)
    g->encode(k + i, want[i]);
  uint64_t pc = 0;
  int found = 0;
  for (size_t i = 0; i < l->n; i++) {
    const tc_insn_event *e = &l->ev[i].u.insn;
    if (l->ev[i].kind != TC_EV_INSN || e->size != g->size ||
        memcmp(e->bytes, want[0], (size_t)g->size) != 0)
      continue;
    if (found++ == 0)
      pc = e->pc;
    CU_ASSERT_EQUAL(e->pc, pc);
  }
  CU_ASSERT_EQUAL(found, 1);
  if (!found)
    return 0;
  int n = 0;
  for (size_t i = 0; i < l->n; i++) {
    const tc_insn_event *e = &l->ev[i].u.insn;
    if (l->ev[i].kind != TC_EV_INSN || e->pc != pc)
      continue;
    if (n < 3) {
      int same =
          e->size == g->size && memcmp(e->bytes, want[n], (size_t)g->size) == 0;
      if (!same)
        fprintf(stderr, "\n%s: run %d at 0x%llx: bytes of 0x%x expected\n",
                g->guest, n + 1, (unsigned long long)pc, (unsigned)(k + n));
      CU_ASSERT(same);
    }
    n++;
  }
  CU_ASSERT_EQUAL(n, 3);
  return pc;
}

static void check_smc(const smc_guest *g) {
  tu_check_reference(TU_REF_AUTO, g->guest, "");
  evlog l;
  tc_run_result res;
  tc_run_result_init(&res);
  CU_ASSERT_EQUAL_FATAL(record_lib(&l, g->guest, NULL, NULL, &res), 0);
  CU_ASSERT_EQUAL(res.reason, TC_EXIT_EXITED);
  CU_ASSERT_EQUAL(res.status, 0);
  uint64_t on_stack = check_smc_place(&l, g, 0x31);
  check_smc_place(&l, g, 0x41);
  check_smc_place(&l, g, 0x51);
  /* the first place is the stack (linked -z execstack) */
  int in_stack = 0;
  for (size_t i = 0; i < l.n; i++) {
    const tc_map_event *m = &l.ev[i].u.map;
    if (l.ev[i].kind == TC_EV_MAP && strcmp(m->name, "[stack]") == 0 &&
        (m->prot & TC_PROT_EXEC))
      in_stack |= on_stack >= m->addr && on_stack - m->addr < m->size;
  }
  CU_ASSERT(in_stack);
  evlog_free(&l);
}

/* Whether the decode cache holds pc with a size (not invalidated). */
static int decoded(const tc_decoder *d, uint64_t pc) {
  const tc_decoded *e = tc_decoder_peek(d, pc);
  return e && e->size != 0;
}

/* The decode cache's invalidation by code page (recorder/decode.c): a write
 * drops exactly the cached instructions it overlaps, found by pc in a page
 * full of code, through the page's list in one with a few, across a page
 * boundary, after the table grew, and over a range of many pages. */
static void test_decode_invalidate(void) {
  tc_error err = {{0}};
  tc_decoder *d = tc_decoder_new(tc_arch_by_id(TC_ARCH_X86_64), &err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(d);
  const uint8_t nop = 0x90, movabs[10] = {0x48, 0xb8, 1, 2, 3, 4, 5, 6, 7, 8};
  const uint64_t page = 0x10000, other = 0x20000;
  for (uint64_t pc = page; pc < page + 300; pc++)
    CU_ASSERT_PTR_NOT_NULL(tc_decoder_get(d, pc, &nop, 1, false));
  const uint64_t cross = page + 0x1000 - 4; /* runs into the next page */
  CU_ASSERT_PTR_NOT_NULL(tc_decoder_get(d, cross, movabs, 10, false));
  for (uint64_t i = 0; i < 4; i++)
    CU_ASSERT_PTR_NOT_NULL(
        tc_decoder_get(d, other + 10 * i, movabs, 10, false));

  tc_decoder_invalidate(d, page + 100, 4);
  int wrong = 0;
  for (uint64_t pc = page; pc < page + 300; pc++)
    wrong += decoded(d, pc) == (pc >= page + 100 && pc < page + 104);
  CU_ASSERT_EQUAL(wrong, 0);
  tc_decoder_invalidate(d, other + 15, 2);
  CU_ASSERT(decoded(d, other) && !decoded(d, other + 10));
  CU_ASSERT(decoded(d, other + 20) && decoded(d, other + 30));
  CU_ASSERT(decoded(d, cross));
  tc_decoder_invalidate(d, page + 0x1000 + 5, 1);
  CU_ASSERT(!decoded(d, cross));
  /* decoded again, then dropped again */
  CU_ASSERT_PTR_NOT_NULL(tc_decoder_get(d, page + 101, &nop, 1, false));
  CU_ASSERT(decoded(d, page + 101));
  tc_decoder_invalidate(d, page + 101, 1);
  CU_ASSERT(!decoded(d, page + 101));

  /* the table grows (4096 slots at first): the page lists are rebuilt */
  const uint64_t far = 0x1000000;
  for (uint64_t i = 0; i < 5000; i++)
    CU_ASSERT_PTR_NOT_NULL(tc_decoder_get(d, far + 64 * i, &nop, 1, false));
  tc_decoder_invalidate(d, far + 64 * 1234, 1);
  CU_ASSERT(!decoded(d, far + 64 * 1234));
  CU_ASSERT(decoded(d, far + 64 * 1233) && decoded(d, far + 64 * 1235));
  CU_ASSERT(decoded(d, page) && !decoded(d, page + 100));
  /* more pages than the cache holds code in: one pass over its pages */
  tc_decoder_invalidate(d, far + 64 * 2000, 1ull << 40);
  CU_ASSERT(decoded(d, far + 64 * 1999) && !decoded(d, far + 64 * 2000));
  CU_ASSERT(!decoded(d, far + 64 * 4999) && decoded(d, other));
  tc_decoder_free(d);
}

/* Code rewritten after it ran is recorded with its new bytes each time,
 * and runs as in the reference run. */
static void test_self_modifying_code(void) {
  static const smc_guest guests[] = {{"smc64", 5, smc_x86_64},
                                     {"smc-armhf", 4, smc_arm},
                                     {"smc-mips", 4, smc_mips},
                                     {"smc-mipsel", 4, smc_mipsel}};
  for (size_t i = 0; i < sizeof guests / sizeof guests[0]; i++)
    check_smc(&guests[i]);
}

/* ------------------------------------------------- faults and limits */

static void check_fault(const char *guest, int sig, tc_fault_kind kind) {
  evlog l;
  tc_run_result res;
  tc_run_result_init(&res);
  CU_ASSERT_EQUAL_FATAL(record_lib(&l, guest, NULL, NULL, &res), 0);
  CU_ASSERT_EQUAL(res.reason, TC_EXIT_SIGNALED);
  CU_ASSERT_EQUAL(res.status, 128 + sig);
  CU_ASSERT_FATAL(l.n >= 3);
  const tc_event *x = &l.ev[l.n - 1], *f = &l.ev[l.n - 2], *in = &l.ev[l.n - 3];
  CU_ASSERT_EQUAL(x->kind, TC_EV_EXIT);
  CU_ASSERT_EQUAL(f->kind, TC_EV_FAULT);
  CU_ASSERT_EQUAL_FATAL(in->kind, TC_EV_INSN);
  CU_ASSERT_EQUAL(f->u.fault.signal, sig);
  CU_ASSERT_EQUAL(f->u.fault.kind, kind);
  /* The faulting instruction is the last one recorded, unfinished. */
  CU_ASSERT_EQUAL(f->u.fault.pc, in->u.insn.pc);
  CU_ASSERT_EQUAL(in->u.insn.nregs, 0);
  CU_ASSERT(in->u.insn.size > 0);
  evlog_free(&l);
}

static void test_faults(void) {
  check_fault("segv64", SIGSEGV, TC_FAULT_UNMAPPED_WRITE);
  check_fault("ill64", SIGILL, TC_FAULT_INVALID_INSN);
  check_fault("div64", SIGFPE, TC_FAULT_DIVIDE);
  check_fault("segv32", SIGSEGV, TC_FAULT_UNMAPPED_WRITE);
}

static void test_max_insns(void) {
  evlog l;
  tc_run_result res;
  tc_run_result_init(&res);
  tc_options o;
  tc_options_init(&o);
  o.quiet = 1;
  o.max_insns = 1000;
  CU_ASSERT_EQUAL_FATAL(record_lib(&l, "loop64", "100000", &o, &res), 0);
  CU_ASSERT_EQUAL(res.reason, TC_EXIT_MAX_INSNS);
  CU_ASSERT_EQUAL(res.status, 124);
  CU_ASSERT_EQUAL(evlog_count(&l, TC_EV_INSN), 1000);
  CU_ASSERT_EQUAL(l.ev[l.n - 1].kind, TC_EV_EXIT);
  CU_ASSERT_EQUAL(l.ev[l.n - 1].u.exit.reason, TC_EXIT_MAX_INSNS);
  evlog_free(&l);
}

/* Ctrl-C: the CLI stops, closes the trace validly, exits 130. */
static void test_interrupt(void) {
  char tct[4200];
  snprintf(tct, sizeof tct, "%s.tct", tu_tmp("sigint"));
  pid_t pid = fork();
  CU_ASSERT_FATAL(pid >= 0);
  if (pid == 0) {
    int fd = open("/dev/null", 1);
    dup2(fd, 1);
    dup2(fd, 2);
    execl(TC_CLI, TC_CLI, "record", "-f", "tct", "-o", tu_tmp("sigint"), "--",
          tu_guest("loop64"), "100000000", (char *)NULL);
    _exit(127);
  }
  /* Wait until the recording runs (its trace exists under the temporary
   * name it has until complete), then a bit. */
  char partial[4200];
  snprintf(partial, sizeof partial, "%s.partial.tct", tu_tmp("sigint"));
  for (int i = 0; i < 200 && access(partial, F_OK) != 0; i++)
    usleep(50 * 1000);
  CU_ASSERT_EQUAL(access(partial, F_OK), 0);
  CU_ASSERT_NOT_EQUAL(access(tct, F_OK), 0);
  usleep(500 * 1000);
  kill(pid, SIGINT);
  int st = 0;
  waitpid(pid, &st, 0);
  CU_ASSERT(WIFEXITED(st));
  CU_ASSERT_EQUAL(WEXITSTATUS(st), 130);
  /* Interrupted but closed validly: renamed to the final name. */
  CU_ASSERT_NOT_EQUAL(access(partial, F_OK), 0);
  evlog l = {0};
  tc_error err = {{0}};
  CU_ASSERT_EQUAL(evlog_read(&l, tct, &err), 0);
  CU_ASSERT(l.n > 0 && l.ev[l.n - 1].kind == TC_EV_EXIT &&
            l.ev[l.n - 1].u.exit.reason == TC_EXIT_INTERRUPTED);
  CU_ASSERT(evlog_count(&l, TC_EV_INSN) > 1000);
  evlog_free(&l);
}

/* The library's own threads (writer threads, tct's compressor) block every
 * signal: Ctrl-C, SIGTERM and the watchdog alarm are handled on the
 * recording thread, whose state the handler acts on (the escape jumps on
 * its stack; from a writer thread it crashed the command, status 139). */
static void test_threads_block_signals(void) {
  char partial[4200];
  snprintf(partial, sizeof partial, "%s.partial.tct", tu_tmp("sigmask"));
  pid_t pid = fork();
  CU_ASSERT_FATAL(pid >= 0);
  if (pid == 0) {
    int fd = open("/dev/null", 1);
    dup2(fd, 1);
    dup2(fd, 2);
    setenv("TRACECORN_WRITER_THREADS", "1", 1);
    execl(TC_CLI, TC_CLI, "record", "-f", "tct,text,json", "-o",
          tu_tmp("sigmask"), "--", tu_guest("loop64"), "100000000",
          (char *)NULL);
    _exit(127);
  }
  for (int i = 0; i < 200 && access(partial, F_OK) != 0; i++)
    usleep(50 * 1000);
  usleep(300 * 1000);
  char dir[64];
  snprintf(dir, sizeof dir, "/proc/%d/task", (int)pid);
  DIR *d = opendir(dir);
  CU_ASSERT_PTR_NOT_NULL_FATAL(d);
  int others = 0;
  struct dirent *de;
  while ((de = readdir(d)) != NULL) {
    int tid = atoi(de->d_name);
    if (tid <= 0 || tid == (int)pid)
      continue;
    char path[128], line[256];
    snprintf(path, sizeof path, "%s/%d/status", dir, tid);
    FILE *f = fopen(path, "r");
    if (!f)
      continue; /* gone meanwhile */
    unsigned long long blk = 0;
    while (fgets(line, sizeof line, f))
      if (sscanf(line, "SigBlk: %llx", &blk) == 1)
        break;
    fclose(f);
    others++;
    /* SIGINT (2), SIGALRM (14), SIGTERM (15) */
    CU_ASSERT_EQUAL(blk & ((1ull << 1) | (1ull << 13) | (1ull << 14)),
                    (1ull << 1) | (1ull << 13) | (1ull << 14));
  }
  closedir(d);
  CU_ASSERT(others >= 2); /* tct's compressor and the writer threads */
  kill(pid, SIGINT);
  int st = 0;
  waitpid(pid, &st, 0);
  CU_ASSERT(WIFEXITED(st) && WEXITSTATUS(st) == 130);
}

/* ------------------------------------------------------------ the CLI */

static void test_cli_errors(void) {
  char *out = NULL;
  /* A malformed ELF: clear message, non-zero exit, no crash. */
  tu_write_file(tu_tmp("bad.elf"),
                "\x7f"
                "ELF\x02\x01\x01garbage",
                15);
  int st = tu_run_merge(&out, TC_CLI, "record", "--", tu_tmp("bad.elf"), NULL);
  CU_ASSERT(st != 0 && st < 128);
  CU_ASSERT_PTR_NOT_NULL(strstr(out ? out : "", "bad.elf"));
  free(out);
  st = tu_run_merge(&out, TC_CLI, "record", "--", "/nonexistent/prog", NULL);
  CU_ASSERT(st != 0 && st < 128);
  CU_ASSERT_PTR_NOT_NULL(strstr(out ? out : "", "No such file"));
  free(out);
  st = tu_run_merge(&out, TC_CLI, "record", "-f", "nosuch", "--",
                    tu_guest("hello64"), NULL);
  CU_ASSERT_EQUAL(st, 2);
  CU_ASSERT_PTR_NOT_NULL(strstr(out ? out : "", "unknown format"));
  free(out);
  /* a bad name anywhere in the list: nothing is created */
  char badmix[4300];
  snprintf(badmix, sizeof badmix, "%s.tct", tu_tmp("badmix"));
  st = tu_run_merge(&out, TC_CLI, "record", "-f", "tct,foo", "-o",
                    tu_tmp("badmix"), "--", tu_guest("hello64"), NULL);
  CU_ASSERT_EQUAL(st, 2);
  CU_ASSERT_FALSE(tu_have(badmix));
  free(out);
  st = tu_run_merge(&out, TC_CLI, "record", "--help", NULL);
  CU_ASSERT_EQUAL(st, 0);
  const char *opts[] = {
      "--output", "--format",    "--seed",         "--env",   "--inherit-env",
      "--raw",    "--arch",      "--base",         "--entry", "--max-insns",
      "--exact",  "--no-memory", "--keyframe",     "--quiet", "--root",
      "--cwd",    "--host-stat", "--writer-option"};
  for (size_t i = 0; i < sizeof opts / sizeof opts[0]; i++)
    CU_ASSERT_PTR_NOT_NULL(strstr(out ? out : "", opts[i]));
  free(out);
}

/* Counts verify's scratch directories under this suite's own TMPDIR (other
 * suites running verify at the same time use /tmp). */
static int verify_dirs(void) {
  char *out = NULL, cmd[4400];
  snprintf(cmd, sizeof cmd, "ls -d %s/tracecorn-verify-* 2>/dev/null | wc -l",
           tu_tmp("vtmp"));
  tu_run(cmd, &out, 0);
  int n = out ? atoi(out) : -1;
  free(out);
  return n;
}

/* -f all writes every format the arch holds (the others unsaid), with a
 * summary line per file; verify checks every readable format by default
 * and refuses a bad list before creating anything. */
static void test_cli_all_formats(void) {
  char *out = NULL;
  int st = tu_run_merge(&out, TC_CLI, "record", "-f", "all", "-o",
                        tu_tmp("all32"), "--", tu_guest("hello32"), NULL);
  CU_ASSERT_EQUAL(st, 0);
  const char *t = out ? out : "";
  const char *exts[] = {".tct",    ".trace32", ".tf",  ".ucir",
                        ".frames", ".rvn",     ".txt", ".jsonl"};
  for (size_t i = 0; i < sizeof exts / sizeof exts[0]; i++) {
    char p[4300], line[4400];
    snprintf(p, sizeof p, "%s%s", tu_tmp("all32"), exts[i]);
    snprintf(line, sizeof line, "wrote %s (", p);
    CU_ASSERT(tu_have(p));
    CU_ASSERT_PTR_NOT_NULL(strstr(t, line));
  }
  CU_ASSERT_PTR_NOT_NULL(strstr(t, " B/insn)"));
  free(out);
  st = tu_run_merge(&out, TC_CLI, "record", "-f", "all", "-o", tu_tmp("allarm"),
                    "--", tu_guest("hello-arm64"), NULL);
  CU_ASSERT_EQUAL(st, 0);
  /* "all" is what the arch can hold: trac and rvn (x86 only) are left out
   * without a word, and no file of theirs is made */
  CU_ASSERT_PTR_NULL(strstr(out ? out : "", "trac:"));
  CU_ASSERT_PTR_NULL(strstr(out ? out : "", "rvn:"));
  CU_ASSERT_PTR_NOT_NULL(strstr(out ? out : "", "allarm.tct ("));
  CU_ASSERT(!tu_have(tu_tmp("allarm.trace64")) &&
            !tu_have(tu_tmp("allarm.rvn")));
  free(out);
  /* named as well, trac's refusal is said, and the others are written */
  st = tu_run_merge(&out, TC_CLI, "record", "-f", "all,trac", "-o",
                    tu_tmp("allarm2"), "--", tu_guest("hello-arm64"), NULL);
  CU_ASSERT_PTR_NOT_NULL(strstr(out ? out : "", "not arm64"));
  CU_ASSERT_PTR_NULL(strstr(out ? out : "", "rvn:"));
  CU_ASSERT(tu_have(tu_tmp("allarm2.tct")));
  free(out);
  st = tu_run_merge(&out, TC_CLI, "verify", "-q", "--", tu_guest("hello64"),
                    NULL);
  CU_ASSERT_EQUAL(st, 0);
  const char *fmts[] = {"trac   ok", "tfile  ok", "ucir   ok", "bap    ok",
                        "rvn    ok"};
  for (int i = 0; i < 5; i++)
    CU_ASSERT_PTR_NOT_NULL(strstr(out ? out : "", fmts[i]));
  free(out);
  /* a bad list: refused before anything exists, and a good run cleans up
   * after itself (scratch dirs under our own TMPDIR) */
  mkdir(tu_tmp("vtmp"), 0755);
  char cmd[8800];
  snprintf(cmd, sizeof cmd,
           "TMPDIR=%s %s verify -f trac,foo -- %s 2>&1; echo rc=$?; "
           "TMPDIR=%s %s verify -q -f trac -- %s >/dev/null 2>&1; echo rc=$?",
           tu_tmp("vtmp"), TC_CLI, tu_guest("hello64"), tu_tmp("vtmp"), TC_CLI,
           tu_guest("hello64"));
  tu_run(cmd, &out, 0);
  CU_ASSERT_PTR_NOT_NULL(strstr(out ? out : "", "unknown format 'foo'"));
  CU_ASSERT_PTR_NOT_NULL(strstr(out ? out : "", "rc=2\nrc=0\n"));
  CU_ASSERT_EQUAL(verify_dirs(), 0);
  free(out);
}

/* TRAC and tfile hold no exit record: converting them to tct still gives a
 * complete stream (a synthetic EXIT saying so), which converts again. */
static void test_convert_synthetic_exit(void) {
  char *out = NULL;
  CU_ASSERT_EQUAL_FATAL(tu_run_merge(&out, TC_CLI, "record", "-q", "-f",
                                     "trac,tfile", "-o", tu_tmp("noexit"), "--",
                                     tu_guest("hello64"), NULL),
                        0);
  free(out);
  const char *exts[] = {".trace64", ".tf"}, *names[] = {"trac", "tfile"};
  for (int i = 0; i < 2; i++) {
    char in[4300], mid[4300], again[4300], want[128];
    snprintf(in, sizeof in, "%s%s", tu_tmp("noexit"), exts[i]);
    snprintf(mid, sizeof mid, "%s-%s.tct", tu_tmp("noexit"), names[i]);
    snprintf(again, sizeof again, "%s-%s-2.tct", tu_tmp("noexit"), names[i]);
    CU_ASSERT_EQUAL(
        tu_run_merge(&out, TC_CLI, "convert", in, "--to", "tct", mid, NULL), 0);
    free(out);
    CU_ASSERT_EQUAL(tu_run_merge(&out, TC_CLI, "dump", mid, NULL), 0);
    snprintf(want, sizeof want, "(no exit record in the %s input)", names[i]);
    CU_ASSERT_PTR_NOT_NULL(strstr(out ? out : "", want));
    free(out);
    CU_ASSERT_EQUAL(
        tu_run_merge(&out, TC_CLI, "convert", mid, "--to", "tct", again, NULL),
        0);
    free(out);
    check_same_file(mid, again);
  }
}

/* info summarises any readable trace. */
static void test_cli_info(void) {
  char *out = NULL, tct[4300];
  CU_ASSERT_EQUAL_FATAL(tu_run_merge(&out, TC_CLI, "record", "-q", "-f", "tct",
                                     "-o", tu_tmp("info"), "--",
                                     tu_guest("hello64"), "a", NULL),
                        1);
  free(out);
  snprintf(tct, sizeof tct, "%s.tct", tu_tmp("info"));
  evlog l;
  tc_error err = {{0}};
  memset(&l, 0, sizeof l);
  CU_ASSERT_EQUAL_FATAL(evlog_read(&l, tct, &err), 0);
  size_t n = evlog_count(&l, TC_EV_INSN);
  CU_ASSERT_EQUAL(tu_run_merge(&out, TC_CLI, "info", tct, NULL), 0);
  const char *t = out ? out : "";
  char want[128];
  snprintf(want, sizeof want, "instructions: %zu\n", n);
  CU_ASSERT_PTR_NOT_NULL(strstr(t, want));
  CU_ASSERT_PTR_NOT_NULL(strstr(t, "format:       tct"));
  CU_ASSERT_PTR_NOT_NULL(strstr(t, "arch:         x86_64"));
  CU_ASSERT_PTR_NOT_NULL(strstr(t, "module:       "));
  CU_ASSERT_PTR_NOT_NULL(strstr(t, "exit:         status 1"));
  CU_ASSERT_PTR_NOT_NULL(strstr(t, "first, last:  0x401000, "));
  free(out);
  evlog_free(&l);
  CU_ASSERT_EQUAL(
      tu_run_merge(&out, TC_CLI, "info", tu_tmp("nonexistent"), NULL), 1);
  free(out);
}

/* dump names functions from the program's symbol table: labels where a
 * function starts, and direct call targets. */
static void test_dump_symbols(void) {
  char *out = NULL, tct[4300];
  tu_run_merge(&out, TC_CLI, "record", "-q", "-f", "tct", "-o", tu_tmp("syms"),
               "--", tu_guest("glibc64"), NULL);
  free(out);
  snprintf(tct, sizeof tct, "%s.tct", tu_tmp("syms"));
  CU_ASSERT_EQUAL(
      tu_run(strcat(strcat(strcpy((char[8600]){0}, TC_CLI " dump "), tct),
                    " | head -n 4000"),
             &out, 0),
      0);
  const char *t = out ? out : "";
  const char *start = strstr(t, "<_start>:\n0 ");
  CU_ASSERT_PTR_NOT_NULL(start);
  CU_ASSERT_PTR_NOT_NULL(strstr(t, " <__libc_start_main>"));
  CU_ASSERT_PTR_NOT_NULL(strstr(t, "\n<__libc_start_main>:\n"));
  free(out);
}

/* Guest-chosen names reach people's terminals through dump: a program
 * whose path holds an escape sequence is printed with it defused; convert
 * never writes onto its input. */
static void test_cli_hostile_names(void) {
  char prog[4300], *out = NULL;
  snprintf(prog, sizeof prog,
           "%s/evil\x1b[2J\xc2\x9b"
           "name",
           tu_tmpdir());
  uint8_t *bin;
  size_t n;
  bin = tu_read_file(tu_guest("hello64"), &n);
  CU_ASSERT_PTR_NOT_NULL_FATAL(bin);
  CU_ASSERT_EQUAL_FATAL(tu_write_file(prog, bin, n), 0);
  free(bin);
  CU_ASSERT_EQUAL_FATAL(chmod(prog, 0755), 0);
  tu_run_merge(&out, TC_CLI, "record", "-q", "-f", "tct", "-o", tu_tmp("evil"),
               "--", prog, NULL);
  free(out);
  char tct[4300];
  snprintf(tct, sizeof tct, "%s.tct", tu_tmp("evil"));
  CU_ASSERT_EQUAL(tu_run_merge(&out, TC_CLI, "dump", tct, NULL), 0);
  const char *t = out ? out : "";
  CU_ASSERT_PTR_NULL(strchr(t, 0x1b));
  CU_ASSERT_PTR_NULL(strstr(t, "\xc2\x9b"));
  CU_ASSERT_PTR_NOT_NULL(strstr(t, "evil\\x1b[2J\\xc2\\x9bname"));
  free(out);
  /* info too: the program and module names a trace holds */
  CU_ASSERT_EQUAL(tu_run_merge(&out, TC_CLI, "info", tct, NULL), 0);
  t = out ? out : "";
  CU_ASSERT_PTR_NULL(strchr(t, 0x1b));
  CU_ASSERT_PTR_NULL(strstr(t, "\xc2\x9b"));
  CU_ASSERT_PTR_NOT_NULL(strstr(t, "evil\\x1b[2J\\xc2\\x9bname"));
  free(out);
  /* convert onto the input: refused, the input intact */
  size_t before = 0, after = 0;
  free(tu_read_file(tct, &before));
  CU_ASSERT_NOT_EQUAL(
      tu_run_merge(&out, TC_CLI, "convert", tct, "--to", "tct", tct, NULL), 0);
  CU_ASSERT_PTR_NOT_NULL(strstr(out ? out : "", "onto the input"));
  free(out);
  free(tu_read_file(tct, &after));
  CU_ASSERT_EQUAL(before, after);
  CU_ASSERT(before > 0);
}

static void test_cli_env_and_output_name(void) {
  char *out = NULL;
  int st = tu_runf(&out, 0, "cd %s && %s record -q -E TRACECORN_TEST=hi -- %s",
                   tu_tmpdir(), TC_CLI, tu_guest("glibc64"));
  CU_ASSERT_EQUAL(st, 7);
  CU_ASSERT_PTR_NOT_NULL(strstr(out ? out : "", "TRACECORN_TEST=hi"));
  free(out);
  /* The default output is the program's base name in the cwd. */
  char p[4200];
  snprintf(p, sizeof p, "%s/glibc64.tct", tu_tmpdir());
  CU_ASSERT(tu_have(p));
  /* dump prints instruction lines with disassembly and syscalls. */
  st = tu_runf(&out, 0, "%s dump %s", TC_CLI, p);
  CU_ASSERT_EQUAL(st, 0);
  CU_ASSERT_PTR_NOT_NULL(strstr(out ? out : "", "syscall exit_group("));
  CU_ASSERT_PTR_NOT_NULL(strstr(out ? out : "", "syscall"));
  CU_ASSERT_PTR_NOT_NULL(strstr(out ? out : "", "exit    exited, status 7"));
  free(out);
  st = tu_runf(&out, 0, "%s dump --json %s | grep -c '\"type\":\"insn\"'",
               TC_CLI, p);
  CU_ASSERT(atol(out ? out : "0") > 100000);
  free(out);
}

static void test_raw(void) {
  /* mov eax, 60; mov edi, 42; syscall (exit 42) */
  const uint8_t code[] = {0xb8, 0x3c, 0, 0, 0, 0xbf, 0x2a, 0, 0, 0, 0x0f, 0x05};
  tu_write_file(tu_tmp("blob.bin"), code, sizeof code);
  char *out = NULL;
  int st =
      tu_runf(&out, 0,
              "%s record -q --raw %s --arch x86_64 --base 0x10000 -f tct -o %s",
              TC_CLI, tu_tmp("blob.bin"), tu_tmp("blob"));
  CU_ASSERT_EQUAL(st, 42);
  free(out);
  char p[4200];
  snprintf(p, sizeof p, "%s.tct", tu_tmp("blob"));
  evlog l = {0};
  tc_error err = {{0}};
  CU_ASSERT_EQUAL_FATAL(evlog_read(&l, p, &err), 0);
  CU_ASSERT_EQUAL(evlog_count(&l, TC_EV_INSN), 3);
  CU_ASSERT_EQUAL(evlog_count(&l, TC_EV_SYSCALL), 1);
  evlog_free(&l);
}

/* A full disk (here: a file-size limit) fails only the output that hit
 * it: clear message, non-zero exit, the other trace complete. */
static void test_disk_full(void) {
  char *out = NULL;
  int st =
      tu_runf(&out, 0,
              "bash -c 'ulimit -f 8; exec %s record -f tct,text -o %s -- %s' "
              "2>&1 >/dev/null",
              TC_CLI, tu_tmp("fsz"), tu_guest("hello64"));
  CU_ASSERT_EQUAL(st, 125);
  CU_ASSERT_PTR_NOT_NULL(strstr(out ? out : "", "File too large"));
  /* The text output failed: nothing under its final name (the summary
   * says it did not write it, not "INCOMPLETE ... (0 B)"), the partial
   * file kept under its temporary name, and the message says where. */
  CU_ASSERT_PTR_NOT_NULL(strstr(out ? out : "", "did not write "));
  CU_ASSERT_PTR_NULL(strstr(out ? out : "", "INCOMPLETE"));
  char p[4200];
  snprintf(p, sizeof p, "%s.partial.txt", tu_tmp("fsz"));
  CU_ASSERT_PTR_NOT_NULL(strstr(out ? out : "", p));
  CU_ASSERT_EQUAL(access(p, F_OK), 0);
  snprintf(p, sizeof p, "%s.txt", tu_tmp("fsz"));
  CU_ASSERT_NOT_EQUAL(access(p, F_OK), 0);
  free(out);
  snprintf(p, sizeof p, "%s.tct", tu_tmp("fsz"));
  evlog l = {0};
  tc_error err = {{0}};
  CU_ASSERT_EQUAL(evlog_read(&l, p, &err), 0);
  CU_ASSERT(l.n > 0 && l.ev[l.n - 1].kind == TC_EV_EXIT);
  evlog_free(&l);
}

/* verify: every format round-trips against the tct recording of the same
 * run; against another run's recording it must report a difference. */
static void test_verify(void) {
  char *out = NULL;
  int st = tu_runf(&out, 0, "%s verify -q -o %s -- %s x 2>&1", TC_CLI,
                   tu_tmp("vfy-a"), tu_guest("insns64"));
  CU_ASSERT_EQUAL(st, 0);
  CU_ASSERT_PTR_NOT_NULL(strstr(out ? out : "", "trac   ok: "));
  CU_ASSERT_PTR_NOT_NULL(strstr(out ? out : "", "tfile  ok: "));
  free(out);
  st = tu_runf(&out, 0, "%s verify -q -o %s -- %s 2>&1", TC_CLI,
               tu_tmp("vfy-b"), tu_guest("hello32"));
  CU_ASSERT_EQUAL(st, 0);
  free(out);
  /* hello64 with other arguments diverges after the argument loop */
  tu_runf(&out, 0, "%s verify -q -o %s -- %s one 2>&1", TC_CLI, tu_tmp("vfy-c"),
          tu_guest("hello64"));
  free(out);
  tu_runf(&out, 0, "%s verify -q -o %s -- %s two three 2>&1", TC_CLI,
          tu_tmp("vfy-d"), tu_guest("hello64"));
  free(out);
  const char *fmts[] = {"trac", "tfile"};
  const char *exts[] = {".trace64", ".tf"};
  for (int i = 0; i < 2; i++) {
    char ref[4200], other[4200];
    snprintf(ref, sizeof ref, "%s.tct", tu_tmp("vfy-c"));
    snprintf(other, sizeof other, "%s%s", tu_tmp("vfy-d"), exts[i]);
    tc_verify_report rep;
    tc_verify_report_init(&rep);
    tc_error err = {{0}};
    CU_ASSERT_EQUAL(
        tc_verify(ref, other, tc_format_by_name(fmts[i]), &rep, &err), 0);
    CU_ASSERT(rep.mismatches > 0);
    CU_ASSERT(rep.first[0] != 0);
    snprintf(other, sizeof other, "%s%s", tu_tmp("vfy-c"), exts[i]);
    CU_ASSERT_EQUAL(
        tc_verify(ref, other, tc_format_by_name(fmts[i]), &rep, &err), 0);
    CU_ASSERT_EQUAL(rep.mismatches, 0);
    CU_ASSERT(rep.insns > 100);
  }
}

/* The embedding example records its blob and prints the final state. */
static void test_embed_example(void) {
  char *out = NULL;
  int st = tu_runf(&out, 0, "%s/examples/embed_raw %s", TC_BINARY_DIR,
                   tu_tmp("embed.tct"));
  CU_ASSERT_EQUAL(st, 0);
  CU_ASSERT_PTR_NOT_NULL(strstr(out ? out : "", "0x1005: rax=0x2a"));
  CU_ASSERT_PTR_NOT_NULL(strstr(out ? out : "", "exit status 42"));
  free(out);
  evlog l = {0};
  tc_error err = {{0}};
  CU_ASSERT_EQUAL(evlog_read(&l, tu_tmp("embed.tct"), &err), 0);
  CU_ASSERT_EQUAL(evlog_count(&l, TC_EV_INSN), 5);
  evlog_free(&l);
}

int main(void) {
  static const tu_case cases[] = {
      {"x86-64 stdout and status = reference run", test_native_x86_64},
      {"i386 stdout and status = reference run", test_native_i386},
      {"qemu-user i386 reference (no native i386)", test_reference_qemu_i386},
      {"reference-run helper", test_reference_helper},
      {"event stream of hello64", test_events_hello},
      {"rep iterations and merged wide accesses", test_rep_and_wide_access},
      {"i386 gs_base from the GDT", test_i386_gs_base},
      {"byte-identical traces", test_determinism},
      {"busybox: byte-identical traces, normalised stat",
       test_determinism_busybox},
      {"direct register reads and writer threads change no byte",
       test_fast_paths_identical},
      {"--exact gives the same trace", test_exact_equivalence},
      {"tct round trip", test_tct_roundtrip},
      {"tct versions 1 and 2 still read", test_tct_version1},
      {"tct version 3's register escapes", test_tct_escapes},
      {"the tct writer refuses what its reader would", test_tct_refuses},
      {"tct corruption", test_tct_corrupt},
      {"self-modifying code: the trace has the new bytes",
       test_self_modifying_code},
      {"decode cache: a write drops what it overlaps", test_decode_invalidate},
      {"guest faults", test_faults},
      {"--max-insns", test_max_insns},
      {"Ctrl-C", test_interrupt},
      {"the library's threads block signals", test_threads_block_signals},
      {"CLI errors and help", test_cli_errors},
      {"CLI env, output name, dump", test_cli_env_and_output_name},
      {"CLI: -f all, verify every format", test_cli_all_formats},
      {"CLI: info", test_cli_info},
      {"dump names functions", test_dump_symbols},
      {"CLI: hostile names, convert onto the input", test_cli_hostile_names},
      {"convert adds the exit record TRAC/tfile lack",
       test_convert_synthetic_exit},
      {"raw code", test_raw},
      {"embedding example", test_embed_example},
      {"verify round trips", test_verify},
      {"full disk", test_disk_full},
      {NULL, NULL}};
  return tu_run_suite("record", cases);
}
