/* SPDX-License-Identifier: GPL-2.0-or-later */
/* One recording, every format: convert's loss report and --strict, the
 * round trip A -> B -> A for every pair of readable formats on an x86-64,
 * an i386 and an arm64 guest, verify's table catching an injected
 * difference, usercorn's own files converted to tfile and opened by GDB,
 * and the capability table of docs/formats/README.md against the code. */
#include <dirent.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <CUnit/CUnit.h>

#include "analysis/verify.h"
#include "testutil.h"
#include "tracecorn/tracecorn.h"
#include "writers/io/caps.h"

/* ------------------------------------------------------ the docs table */

static void test_caps_table_in_docs(void) {
  char *doc =
      (char *)tu_read_file(TC_SOURCE_DIR "/docs/formats/README.md", NULL);
  CU_ASSERT_PTR_NOT_NULL_FATAL(doc);
  const char *begin = strstr(doc, "<!-- caps:begin -->\n");
  const char *end = strstr(doc, "<!-- caps:end -->");
  CU_ASSERT_PTR_NOT_NULL_FATAL(begin);
  CU_ASSERT_PTR_NOT_NULL_FATAL(end);
  begin += strlen("<!-- caps:begin -->\n");
  char want[8192];
  size_t n = tc_caps_markdown(want, sizeof want);
  CU_ASSERT(n > 200 && n < sizeof want - 1);
  bool same = (size_t)(end - begin) == n && memcmp(begin, want, n) == 0;
  CU_ASSERT(same);
  if (!same)
    fprintf(stderr, "\ndocs/formats/README.md's table should read:\n%s", want);
  free(doc);
}

/* --------------------------------------------------------- loss report */

static const char *record_all(const char *guest, const char *prefix) {
  char *out = NULL;
  const char *p = tu_tmp(prefix);
  static char saved[8][512];
  static int next;
  char *keep = saved[next++ % 8];
  snprintf(keep, 512, "%s", p);
  int st = tu_run_merge(&out, TC_CLI, "record", "-q", "-f", "all", "-o", keep,
                        "--", tu_guest(guest), NULL);
  (void)st; /* the guest's own status */
  free(out);
  return keep;
}

static void test_loss_report(void) {
  const char *p = record_all("sysmix64", "loss");
  char tct[600], out[600], trac[600];
  snprintf(tct, sizeof tct, "%s.tct", p);
  snprintf(trac, sizeof trac, "%s.trace64", p);
  tc_trace_summary sum;
  tc_trace_summary_init(&sum);
  tc_error err;
  CU_ASSERT_EQUAL_FATAL(tc_trace_summarize(tct, &sum, &err), 0);
  CU_ASSERT(sum.syscalls > 10);

  /* tenet keeps GPRs and memory: syscalls, maps, tids... go */
  char *msg = NULL;
  snprintf(out, sizeof out, "%s", tu_tmp("loss-out.tenet"));
  CU_ASSERT_EQUAL(
      tu_run_merge(&msg, TC_CLI, "convert", tct, "--to", "tenet", out, NULL),
      0);
  CU_ASSERT_PTR_NOT_NULL_FATAL(msg);
  char want[64];
  snprintf(want, sizeof want, "tenet drops: instruction bytes, ");
  CU_ASSERT_PTR_NOT_NULL(strstr(msg, want));
  snprintf(want, sizeof want, ", %" PRIu64 " syscalls, maps, ", sum.syscalls);
  CU_ASSERT_PTR_NOT_NULL(strstr(msg, want));
  CU_ASSERT_PTR_NOT_NULL(strstr(msg, " registers (rflags, fs_base, "));
  CU_ASSERT_PTR_NOT_NULL(strstr(msg, "values before writes"));
  CU_ASSERT_PTR_NOT_NULL(strstr(msg, "thread ids"));
  CU_ASSERT_PTR_NOT_NULL(strstr(msg, "the exit status"));
  CU_ASSERT(tu_have(out));
  free(msg);

  /* tct to tct loses nothing and says only where it wrote (as record
   * does; -q: nothing at all) */
  snprintf(out, sizeof out, "%s", tu_tmp("loss-out.tct"));
  CU_ASSERT_EQUAL(tu_run_merge(&msg, TC_CLI, "convert", "--strict", tct, "--to",
                               "tct", out, NULL),
                  0);
  char said[1000];
  snprintf(said, sizeof said, "tracecorn: wrote %s (", out);
  CU_ASSERT(msg && strncmp(msg, said, strlen(said)) == 0 && strchr(msg, '\n') &&
            strchr(msg, '\n')[1] == 0);
  free(msg);
  CU_ASSERT_EQUAL(tu_run_merge(&msg, TC_CLI, "convert", "-q", "--strict", tct,
                               "--to", "tct", out, NULL),
                  0);
  CU_ASSERT(msg && msg[0] == 0);
  free(msg);

  /* --strict: the lossy rvn output is not written, status 1 */
  snprintf(out, sizeof out, "%s", tu_tmp("loss-strict.rvn"));
  CU_ASSERT_EQUAL(tu_run_merge(&msg, TC_CLI, "convert", "--strict", tct, "--to",
                               "rvn", out, NULL),
                  1);
  CU_ASSERT(msg &&
            strstr(msg, "rvn drops: memory read values, maps, "
                        "thread ids; ") &&
            strstr(msg, "not written (strict)"));
  CU_ASSERT_FALSE(tu_have(out));
  struct stat st;
  char part[700];
  snprintf(part, sizeof part, "%s", tu_tmp("loss-strict.partial.rvn"));
  CU_ASSERT_NOT_EQUAL(stat(part, &st), 0);
  free(msg);

  /* what the target needs and the source lacks: a synthetic exit */
  snprintf(out, sizeof out, "%s", tu_tmp("loss-rebuilt.frames"));
  CU_ASSERT_EQUAL(
      tu_run_merge(&msg, TC_CLI, "convert", trac, "--to", "bap", out, NULL), 0);
  CU_ASSERT(msg && strstr(msg, "rebuilt: an exit record (the trac input "
                               "has none)"));
  CU_ASSERT(msg && strstr(msg, "bap drops: values before writes\n"));
  free(msg);

  /* and what it cannot rebuild is an error naming it */
  char tenet_in[600];
  snprintf(tenet_in, sizeof tenet_in, "%s.tenet", p);
  snprintf(out, sizeof out, "%s", tu_tmp("loss-bytes.trace64"));
  CU_ASSERT_EQUAL(tu_run_merge(&msg, TC_CLI, "convert", tenet_in, "--to",
                               "trac", out, NULL),
                  1);
  CU_ASSERT(msg && strstr(msg, "bytes"));
  free(msg);
  /* ... and leaves nothing behind, neither the file nor its partial name
   * (issue 36: drcov's was kept under the final name, trac's as partial) */
  CU_ASSERT_FALSE(tu_have(out));
  snprintf(part, sizeof part, "%s", tu_tmp("loss-bytes.partial.trace64"));
  CU_ASSERT_NOT_EQUAL(stat(part, &st), 0);
  snprintf(out, sizeof out, "%s", tu_tmp("loss-bytes.drcov"));
  CU_ASSERT_EQUAL(tu_run_merge(&msg, TC_CLI, "convert", tenet_in, "--to",
                               "drcov", out, NULL),
                  1);
  CU_ASSERT(msg && strstr(msg, "not written"));
  free(msg);
  CU_ASSERT_FALSE(tu_have(out));
  snprintf(part, sizeof part, "%s", tu_tmp("loss-bytes.partial.drcov"));
  CU_ASSERT_NOT_EQUAL(stat(part, &st), 0);

  /* a target that holds instruction bytes gets none from tenet: named,
   * and --strict refuses it (they were written empty, silently) */
  const char *bytes_targets[][2] = {{"rvn", "loss-nobytes.rvn"},
                                    {"bap", "loss-nobytes.frames"},
                                    {"ucir", "loss-nobytes.ucir"},
                                    {"tfile", "loss-nobytes.tf"}};
  for (int i = 0; i < 4; i++) {
    snprintf(out, sizeof out, "%s", tu_tmp(bytes_targets[i][1]));
    CU_ASSERT_EQUAL(tu_run_merge(&msg, TC_CLI, "convert", tenet_in, "--to",
                                 bytes_targets[i][0], out, NULL),
                    0);
    snprintf(want, sizeof want, "%s drops: instruction bytes (the tenet input",
             bytes_targets[i][0]);
    CU_ASSERT(msg && strstr(msg, want));
    free(msg);
    CU_ASSERT_EQUAL(tu_run_merge(&msg, TC_CLI, "convert", "--strict", "--force",
                                 tenet_in, "--to", bytes_targets[i][0], out,
                                 NULL),
                    1);
    CU_ASSERT(msg && strstr(msg, "not written (strict)"));
    free(msg);
  }

  /* tfile tells no writes from reads: a writes-only target keeps nothing
   * of its accesses, and says so (it said "memory read values") */
  char tf[600];
  snprintf(tf, sizeof tf, "%s", tu_tmp("loss-tf.tf"));
  CU_ASSERT_EQUAL(
      tu_run_merge(&msg, TC_CLI, "convert", tct, "--to", "tfile", tf, NULL), 0);
  free(msg);
  snprintf(out, sizeof out, "%s", tu_tmp("loss-tf.rvn"));
  CU_ASSERT_EQUAL(
      tu_run_merge(&msg, TC_CLI, "convert", tf, "--to", "rvn", out, NULL), 0);
  CU_ASSERT(msg && strstr(msg, "rvn drops: every memory access (the tfile "
                               "input does not tell writes from reads"));
  free(msg);
}

/* ------------------------------------------------ round trip A -> B -> A */

/* Conversions that cannot be made: the target needs what the source
 * lacks (trac and drcov need instruction bytes; tenet takes no blocks). */
static bool cannot(const tc_format *from, const tc_format *to) {
  bool bytes = from->caps & TC_CAP_INSN_BYTES;
  bool blocks = from->caps & TC_CAP_COVERAGE;
  if (!strcmp(to->name, "trac"))
    return !bytes;
  if (!strcmp(to->name, "drcov"))
    return !bytes && !blocks;
  /* coverage blocks go only where blocks are kept as blocks */
  return blocks && !(to->caps & TC_CAP_BLOCKS);
}

/* "Within what both hold": a format whose caps and registers are those
 * A and B both keep. A writes-only A (rvn) cannot tell its writes from
 * B's accesses when B keeps no kinds, so memory is not comparable then. */
static const tc_format *both_a, *both_b;
static int both_holds(const tc_arch *arch, int reg) {
  return (!both_a->holds_reg || both_a->holds_reg(arch, reg)) &&
         (!both_b->holds_reg || both_b->holds_reg(arch, reg));
}

static tc_format both_of(const tc_format *a, const tc_format *b) {
  both_a = a;
  both_b = b;
  tc_format f = *a;
  f.caps = a->caps & b->caps;
  if ((a->caps & TC_CAP_MEM_WRITES_ONLY) &&
      !(b->caps & (TC_CAP_MEM_KIND | TC_CAP_MEM_WRITES_ONLY)))
    f.caps &= ~(uint32_t)(TC_CAP_MEM | TC_CAP_MEM_OLD);
  f.caps |= (a->caps | b->caps) & TC_CAP_MEM_WRITES_ONLY;
  f.holds_reg = both_holds;
  return f;
}

typedef struct blocks {
  uint64_t v[4096][2];
  size_t n;
} blocks;

static int block_sink(void *ctx, const tc_event *ev, tc_error *err) {
  (void)err;
  blocks *b = ctx;
  if (ev->kind == TC_EV_INSN && b->n < 4096) {
    b->v[b->n][0] = ev->u.insn.pc;
    b->v[b->n][1] = ev->u.insn.tid == TC_TID_BLOCK ? 0 : ev->u.insn.size;
    b->n++;
  }
  return 0;
}

static int count_sink(void *ctx, const tc_event *ev, tc_error *err) {
  (void)ev;
  (void)err;
  (*(uint64_t *)ctx)++;
  return 0;
}

static void round_trips(const char *guest) {
  const char *p = record_all(guest, guest);
  char ref[600];
  snprintf(ref, sizeof ref, "%s.tct", p);
  tc_error err;
  tc_trace_summary sum;
  tc_trace_summary_init(&sum);
  CU_ASSERT_EQUAL_FATAL(tc_trace_summarize(ref, &sum, &err), 0);
  const tc_arch *arch = sum.arch;
  int pairs = 0, lossless = 0, refused = 0, blockless = 0;
  for (const tc_format *const *fa = tc_formats(); *fa; fa++) {
    const tc_format *A = *fa;
    if (!A->open_reader || !A->open_writer ||
        (A->supports && A->supports(arch, &err) < 0))
      continue;
    char a0[700];
    snprintf(a0, sizeof a0, "%s%s", p, A->extension(arch));
    for (const tc_format *const *fb = tc_formats(); *fb; fb++) {
      const tc_format *B = *fb;
      if (!B->open_reader || !B->open_writer ||
          (B->supports && B->supports(arch, &err) < 0))
        continue;
      char b1[700], a2[700];
      snprintf(b1, sizeof b1, "%s-%s-%s%s", p, A->name, B->name,
               B->extension(arch));
      snprintf(a2, sizeof a2, "%s-%s-%s-back%s", p, A->name, B->name,
               A->extension(arch));
      tc_convert_report there, back;
      tc_convert_report_init(&there);
      tc_convert_report_init(&back);
      tc_error e1 = {{0}}, e2 = {{0}};
      int r1 = tc_convert_checked(a0, A, B, b1, NULL, NULL, 0, &there, &e1);
      if (cannot(A, B)) {
        CU_ASSERT_EQUAL(r1, -1);
        refused++;
        continue;
      }
      if (r1 < 0)
        fprintf(stderr, "\n%s: %s -> %s: %s\n", guest, A->name, B->name,
                e1.msg);
      CU_ASSERT_EQUAL_FATAL(r1, 0);
      /* the target's reader accepts it */
      uint64_t nev = 0;
      tc_error e3 = {{0}};
      CU_ASSERT_EQUAL(tc_read_trace(b1, B, count_sink, &nev, &e3), 0);
      CU_ASSERT(nev > 0);
      if (cannot(B, A)) {
        refused++;
        continue;
      }
      /* Block events (drcov) survive only tct: other formats keep an
       * instruction at each block start, so a trip through drcov, or of
       * drcov through them, has nothing to compare. */
      bool blocks_a = A->caps & TC_CAP_COVERAGE,
           blocks_b = B->caps & TC_CAP_COVERAGE;
      if ((blocks_a && strcmp(B->name, "tct") != 0) ||
          (blocks_b && !blocks_a && strcmp(A->name, "tct") != 0)) {
        blockless++;
        continue;
      }
      int r2 = tc_convert_checked(b1, B, A, a2, NULL, NULL, 0, &back, &e2);
      if (r2 < 0)
        fprintf(stderr, "\n%s: %s -> %s -> %s: %s\n", guest, A->name, B->name,
                A->name, e2.msg);
      CU_ASSERT_EQUAL(r2, 0);
      if (r2 < 0)
        continue;
      lossless += !there.dropped_kinds;
      if (A->caps & TC_CAP_COVERAGE) {
        /* coverage: the same blocks, in the same order */
        static blocks x, y;
        x.n = y.n = 0;
        CU_ASSERT_EQUAL(tc_read_trace(a0, A, block_sink, &x, &e3), 0);
        CU_ASSERT_EQUAL(tc_read_trace(a2, A, block_sink, &y, &e3), 0);
        bool same =
            x.n == y.n && x.n > 0 && memcmp(x.v, y.v, x.n * sizeof x.v[0]) == 0;
        CU_ASSERT(same);
        if (!same)
          fprintf(stderr, "\n%s: %s -> %s -> %s: other blocks\n", guest,
                  A->name, B->name, A->name);
        pairs++;
        continue;
      }
      /* nothing dropped: A' is A in all A holds; else within what both
       * hold */
      tc_format inter = both_of(A, B);
      const tc_format *within = blocks_b ? B : there.dropped_kinds ? &inter : A;
      tc_verify_table t;
      tc_verify_table_init(&t);
      tc_error e4 = {{0}};
      CU_ASSERT_EQUAL_FATAL(tc_verify_streams(a0, A, a2, A, within, &t, &e4),
                            0);
      for (int k = 0; k < TC_VCHK_COUNT; k++)
        if (t.checks[k].mismatches) {
          CU_FAIL("round trip differs");
          fprintf(stderr,
                  "\n%s: %s -> %s -> %s: %s: instruction %" PRIu64
                  ", %s: expected %s, found %s\n",
                  guest, A->name, B->name, A->name, tc_verify_check_name(k),
                  t.checks[k].insn, t.checks[k].field, t.checks[k].expected,
                  t.checks[k].found);
        }
      CU_ASSERT(t.insns > 0);
      pairs++;
    }
  }
  printf("\n  %s: %d round trips (%d lossless), %d conversions refused "
         "(the target needs what the source lacks), %d trips of drcov blocks "
         "through formats without them ",
         guest, pairs, lossless, refused, blockless);
  CU_ASSERT(pairs >= 16);
  CU_ASSERT(lossless >= 2);
}

static void test_round_trip_x86_64(void) { round_trips("hello64"); }
static void test_round_trip_i386(void) { round_trips("hello32"); }
static void test_round_trip_arm64(void) { round_trips("hello-arm64"); }

/* ----------------------------------------------- verify catches a change */

typedef struct corrupt_ctx {
  const tc_format *fmt;
  tc_writer *w;
  const tc_arch *arch;
  uint64_t reg_from; /* rax XOR 1 in every state from this instruction */
  uint64_t mem_insn; /* the first read at or after mem_from gets a flip */
  uint64_t mem_from;
  uint64_t mem_addr;
  uint8_t mem_was;
  uint8_t sb[4096], sa[4096], val[64];
  tc_mem_access acc[64];
} corrupt_ctx;

static int corrupt_sink(void *vctx, const tc_event *ev, tc_error *err) {
  corrupt_ctx *c = vctx;
  if (ev->kind != TC_EV_INSN)
    return c->fmt->write_event(c->w, ev, err);
  tc_event e = *ev;
  tc_insn_event *in = &e.u.insn;
  int rax = tc_arch_reg_index(c->arch, "rax");
  if (in->index >= c->reg_from) {
    memcpy(c->sb, in->state_before, c->arch->state_size);
    memcpy(c->sa, in->state_after, c->arch->state_size);
    c->sb[c->arch->regs[rax].offset] ^= 1;
    c->sa[c->arch->regs[rax].offset] ^= 1;
    in->state_before = c->sb;
    in->state_after = c->sa;
  }
  if (!c->mem_insn && in->index >= c->mem_from && in->nmem && in->nmem <= 64 &&
      in->mem[0].kind == TC_MEM_READ && in->mem[0].size <= sizeof c->val) {
    memcpy(c->acc, in->mem, in->nmem * sizeof *c->acc);
    memcpy(c->val, in->mem[0].before, in->mem[0].size);
    c->mem_addr = in->mem[0].addr;
    c->mem_was = c->val[0];
    c->val[0] ^= 0x5a;
    c->acc[0].before = c->acc[0].after = c->val;
    in->mem = c->acc;
    c->mem_insn = in->index;
  }
  return c->fmt->write_event(c->w, &e, err);
}

static void test_verify_catches_corruption(void) {
  const char *p = tu_tmp("corrupt");
  char *out = NULL;
  tu_run_merge(&out, TC_CLI, "record", "-q", "-f", "tct", "-o", p, "--",
               tu_guest("hello64"), NULL);
  free(out);
  char ref[600], bad[600];
  snprintf(ref, sizeof ref, "%s.tct", p);
  snprintf(bad, sizeof bad, "%s", tu_tmp("corrupt-bad.trace64"));
  const tc_format *trac = tc_format_by_name("trac");
  const tc_format *tct = tc_format_by_name("tct");
  tc_error err;
  tc_reader *r = tct->open_reader(ref, &err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(r);
  /* the info's pointers live as long as the reader */
  tc_trace_info info = *tct->reader_info(r);
  static corrupt_ctx c;
  memset(&c, 0, sizeof c);
  c.fmt = trac;
  c.arch = info.arch;
  c.reg_from = 20;
  c.mem_from = 40;
  c.w = trac->open_writer(bad, &info, &err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(c.w);
  CU_ASSERT_EQUAL(tc_read_trace(ref, tct, corrupt_sink, &c, &err), 0);
  CU_ASSERT_EQUAL_FATAL(trac->close_writer(c.w, &err), 0);
  tct->close_reader(r);
  CU_ASSERT_FATAL(c.mem_insn >= 40);

  /* the reader still takes it; verify names both differences */
  tc_verify_table t;
  tc_verify_table_init(&t);
  CU_ASSERT_EQUAL_FATAL(tc_verify_checks(ref, bad, NULL, &t, &err), 0);
  CU_ASSERT_EQUAL(t.checks[TC_VCHK_PC].mismatches, 0);
  CU_ASSERT_EQUAL(t.checks[TC_VCHK_BYTES].mismatches, 0);
  CU_ASSERT(t.checks[TC_VCHK_REGS].mismatches > 0);
  CU_ASSERT_EQUAL(t.checks[TC_VCHK_REGS].insn, 20);
  CU_ASSERT_STRING_EQUAL(t.checks[TC_VCHK_REGS].field, "rax");
  CU_ASSERT_EQUAL(t.checks[TC_VCHK_MEM].mismatches, 1);
  CU_ASSERT_EQUAL(t.checks[TC_VCHK_MEM].insn, c.mem_insn);
  char field[64], exp[16], got[16];
  snprintf(field, sizeof field, "memory 0x%" PRIx64, c.mem_addr);
  snprintf(exp, sizeof exp, "0x%02x", c.mem_was);
  snprintf(got, sizeof got, "0x%02x", c.mem_was ^ 0x5a);
  CU_ASSERT_STRING_EQUAL(t.checks[TC_VCHK_MEM].field, field);
  CU_ASSERT_STRING_EQUAL(t.checks[TC_VCHK_MEM].expected, exp);
  CU_ASSERT_STRING_EQUAL(t.checks[TC_VCHK_MEM].found, got);
  CU_ASSERT_FALSE(t.checks[TC_VCHK_SYSCALLS].held);
  /* the rax values differ in bit 0 only */
  uint64_t e = strtoull(t.checks[TC_VCHK_REGS].expected, NULL, 16);
  uint64_t f = strtoull(t.checks[TC_VCHK_REGS].found, NULL, 16);
  CU_ASSERT_EQUAL(e ^ f, 1);
  tc_verify_report rep;
  tc_verify_report_init(&rep);
  CU_ASSERT_EQUAL(tc_verify(ref, bad, trac, &rep, &err), 0);
  CU_ASSERT(rep.mismatches > 0);
  CU_ASSERT_PTR_NOT_NULL(strstr(rep.first, "instruction 20: rax: expected "));
}

/* The CLI table: a column per check, `-` where a format holds nothing. */
static void test_verify_table_cli(void) {
  char *out = NULL;
  int st = tu_run_merge(&out, TC_CLI, "verify", "-q", "-f", "trac,ucir,drcov",
                        "--", tu_guest("sysmix64"), NULL);
  CU_ASSERT_EQUAL(st, 0);
  CU_ASSERT_PTR_NOT_NULL_FATAL(out);
  CU_ASSERT_PTR_NOT_NULL(
      strstr(out, "format  pc  bytes  tid  registers  memory  old values  "
                  "syscalls  kernel writes  maps  faults  exit\n"));
  CU_ASSERT_PTR_NOT_NULL(
      strstr(out, "trac    ok  ok     ok   ok         ok      ok          -  "
                  "       -              -     -       -\n"));
  CU_ASSERT_PTR_NOT_NULL(
      strstr(out, "ucir    ok  ok     ok   ok         ok      ok          ok "
                  "       ok             ok    -       ok\n"));
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "drcov   ok  -  "));
  CU_ASSERT_PTR_NULL(strstr(out, " \n")); /* no trailing spaces */
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "trac   ok: "));
  if (st)
    fprintf(stderr, "\n%s\n", out);
  free(out);
}

/* ------------------------------------- usercorn's own files -> GDB tfile */

static void test_ucir_samples_to_tfile(void) {
  const char *dir = TC_DATA_DIR "/ucir-samples";
  DIR *d = opendir(dir);
  CU_ASSERT_PTR_NOT_NULL_FATAL(d); /* tests/data is in the repository */
  if (!tu_have("/usr/bin/gdb-multiarch")) {
    printf("\n  no gdb-multiarch: not checked ");
    closedir(d);
    return;
  }
  int n = 0;
  for (struct dirent *e; (e = readdir(d));) {
    size_t len = strlen(e->d_name);
    if (len < 6 || strcmp(e->d_name + len - 5, ".ucir") != 0)
      continue;
    char in[1024], tf[1024];
    snprintf(in, sizeof in, "%s/%s", dir, e->d_name);
    snprintf(tf, sizeof tf, "%s.tf", tu_tmp(e->d_name));
    char *out = NULL;
    int st =
        tu_run_merge(&out, TC_CLI, "convert", in, "--to", "tfile", tf, NULL);
    CU_ASSERT_EQUAL(st, 0);
    if (st)
      fprintf(stderr, "\n%s: %s\n", e->d_name, out ? out : "");
    free(out);
    char cmd[4096];
    snprintf(cmd, sizeof cmd,
             "gdb-multiarch -batch -nx -ex 'target tfile %s' -ex tstatus "
             "-ex 'tfind 0' -ex 'info registers pc' 2>&1",
             tf);
    st = tu_run(cmd, &out, 1);
    bool ok = st == 0 && out && strstr(out, "Found trace frame 0") &&
              (strstr(out, "\npc ") || strstr(out, "\npc:") ||
               strstr(out, "\nrip ") || strstr(out, "\neip "));
    CU_ASSERT(ok);
    if (!ok)
      fprintf(stderr, "\n%s: gdb:\n%s\n", e->d_name, out ? out : "");
    free(out);
    n++;
  }
  closedir(d);
  CU_ASSERT(n >= 7);
  printf("\n  %d usercorn files opened by GDB as tfile ", n);
}

/* The output format from a file name: each format's extension, .zst and a
 * directory's slash aside; unknown names give NULL. */
static void test_format_by_extension(void) {
  static const struct {
    const char *path, *format;
  } cases[] = {
      {"x.trace64", "trac"}, {"x.trace32", "trac"}, {"d/x.tf.zst", "tfile"},
      {"x.rvn/", "rvn"},     {"x.frames", "bap"},   {"x.tct", "tct"},
      {"x.foo", NULL},       {"trace64", NULL},     {"", NULL}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    const tc_format *f = tc_format_by_extension(cases[i].path);
    if (cases[i].format) {
      CU_ASSERT_PTR_NOT_NULL(f);
      CU_ASSERT(f && strcmp(f->name, cases[i].format) == 0);
    } else {
      CU_ASSERT_PTR_NULL(f);
    }
  }
  /* and the CLI takes it when --to is left out */
  char *out = NULL, in[4200], to[4200];
  snprintf(in, sizeof in, "%s.tct", record_all("hello64", "byext"));
  snprintf(to, sizeof to, "%s", tu_tmp("byext-out.trace64"));
  CU_ASSERT_EQUAL(tu_run_merge(&out, TC_CLI, "convert", in, to, NULL), 0);
  free(out);
  tc_error err = {{0}};
  CU_ASSERT_PTR_EQUAL(tc_format_detect(to, &err), tc_format_by_name("trac"));
  CU_ASSERT_EQUAL(
      tu_run_merge(&out, TC_CLI, "convert", in, tu_tmp("byext-out.foo"), NULL),
      2);
  CU_ASSERT_PTR_NOT_NULL(strstr(out ? out : "", "--to FMT"));
  free(out);
}

/* ------------------------------------------- a recording killed mid-way */

typedef struct pc_list {
  uint64_t *pc;
  size_t n, cap;
} pc_list;

static int collect_pc(void *ctx, const tc_event *ev, tc_error *err) {
  (void)err;
  pc_list *l = ctx;
  if (ev->kind != TC_EV_INSN)
    return 0;
  if (l->n == l->cap) {
    l->cap = l->cap ? 2 * l->cap : 4096;
    uint64_t *p = realloc(l->pc, l->cap * sizeof *p);
    if (!p)
      return -1;
    l->pc = p;
  }
  l->pc[l->n++] = ev->u.insn.pc;
  return 0;
}

/* The instructions of `cut` are the first ones of `whole`, fewer. */
static void check_prefix(const char *whole, const char *cut) {
  pc_list a = {0}, b = {0};
  tc_error err = {{0}};
  CU_ASSERT_EQUAL(tc_read_trace(whole, NULL, collect_pc, &a, &err), 0);
  int rc = tc_read_trace(cut, NULL, collect_pc, &b, &err);
  CU_ASSERT_EQUAL(rc, 0);
  if (rc)
    fprintf(stderr, "\n%s: %s\n", cut, err.msg);
  CU_ASSERT(b.n > 0 && b.n < a.n);
  CU_ASSERT(b.n <= a.n && memcmp(a.pc, b.pc, b.n * sizeof *b.pc) == 0);
  free(a.pc);
  free(b.pc);
}

/* Issue 38: after SIGKILL, bap and tenet files were unreadable (bap: "the
 * TOC offset is 0", tenet: the cut last line). A bap file as its writer
 * leaves it until the end (frame count and TOC offset 0), cut inside a
 * frame, and a tenet file cut inside a line read up to the cut. */
static void test_killed_recordings(void) {
  char *out = NULL;
  CU_ASSERT_EQUAL(tu_run_merge(&out, TC_CLI, "record", "-q", "-f", "bap,tenet",
                               "-o", tu_tmp("killed"), "--",
                               tu_guest("glibc64"), NULL),
                  7);
  free(out);
  size_t n = 0;
  char whole[4200], cut[4200];
  snprintf(whole, sizeof whole, "%s.frames", tu_tmp("killed"));
  uint8_t *d = tu_read_file(whole, &n);
  CU_ASSERT_FATAL(d && n > 4096);
  memset(d + 32, 0, 16); /* frame count and TOC offset: not yet written */
  snprintf(cut, sizeof cut, "%s", tu_tmp("killed-cut.frames"));
  CU_ASSERT_EQUAL(tu_write_file(cut, d, n / 2 + 3), 0);
  free(d);
  check_prefix(whole, cut);

  snprintf(whole, sizeof whole, "%s.tenet", tu_tmp("killed"));
  d = tu_read_file(whole, &n);
  CU_ASSERT_FATAL(d && n > 4096);
  const uint8_t *nl = memchr(d + n / 2, '\n', n - n / 2);
  CU_ASSERT_FATAL(nl != NULL);
  snprintf(cut, sizeof cut, "%s", tu_tmp("killed-cut.tenet"));
  CU_ASSERT_EQUAL(tu_write_file(cut, d, (size_t)(nl - d) + 6), 0);
  free(d);
  check_prefix(whole, cut);
}

int main(void) {
  static const tu_case cases[] = {
      {"a killed recording: bap and tenet read up to the cut",
       test_killed_recordings},
      {"docs/formats/README.md capability table = the code",
       test_caps_table_in_docs},
      {"the output format from its extension", test_format_by_extension},
      {"convert: loss report, --strict, rebuilt exit", test_loss_report},
      {"A -> B -> A, every pair, x86-64", test_round_trip_x86_64},
      {"A -> B -> A, every pair, i386", test_round_trip_i386},
      {"A -> B -> A, every pair, arm64", test_round_trip_arm64},
      {"verify finds an injected register and memory change",
       test_verify_catches_corruption},
      {"verify prints a format x check table", test_verify_table_cli},
      {"usercorn's ucir samples -> tfile -> gdb", test_ucir_samples_to_tfile},
      {NULL, NULL}};
  return tu_run_suite("convert", cases);
}
