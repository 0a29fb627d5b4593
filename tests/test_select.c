/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What dump selects (issue 32): the memory and register filters, the
 * window's end, the last records, and who last wrote a byte, on a guest
 * that plants one (examples/guests/plant.c). */
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "evlog.h"
#include "testutil.h"

/* The JSON lines of `tracecorn dump --json ARGS... FILE`; NULL (and a
 * failed assertion) if dump failed. */
static char *dump_json(const char *file, const char *args) {
  char *out = NULL;
  int st = tu_runf(&out, 0, "%s dump --json %s %s", TC_CLI, args, file);
  CU_ASSERT_EQUAL(st, 0);
  if (st) {
    fprintf(stderr, "\ndump --json %s: status %d\n", args, st);
    free(out);
    return NULL;
  }
  return out;
}

/* The next line of type `type` at or after *p: its start, *p moved past
 * it; NULL when there is none. */
static const char *next_of(const char **p, const char *type) {
  char want[64];
  snprintf(want, sizeof want, "{\"type\":\"%s\"", type);
  while (*p && **p) {
    const char *l = *p, *nl = strchr(l, '\n');
    *p = nl ? nl + 1 : l + strlen(l);
    if (strncmp(l, want, strlen(want)) == 0)
      return l;
  }
  return NULL;
}

/* A number field ("index":N) of one line; UINT64_MAX if absent. */
static uint64_t field_u64(const char *line, const char *key) {
  char want[64];
  snprintf(want, sizeof want, "\"%s\":", key);
  const char *nl = strchr(line, '\n');
  const char *f = strstr(line, want);
  if (!f || (nl && f > nl))
    return UINT64_MAX;
  f += strlen(want);
  if (*f == '"')
    f++;
  return strtoull(f, NULL, 0);
}

/* 1 if the line (up to its newline) holds s. */
static int line_has(const char *line, const char *s) {
  const char *nl = strchr(line, '\n');
  const char *f = strstr(line, s);
  return f && (!nl || f < nl);
}

static int count_of(const char *text, const char *type) {
  int n = 0;
  for (const char *p = text; next_of(&p, type);)
    n++;
  return n;
}

static char plant_tct[4200];

/* plant64 recorded once for every case. */
static const char *plant_trace(void) {
  if (plant_tct[0])
    return plant_tct;
  char *out = NULL;
  int st = tu_run_merge(&out, TC_CLI, "record", "-q", "-f", "tct", "-o",
                        tu_tmp("plant"), "--", tu_guest("plant64"), NULL);
  CU_ASSERT_EQUAL(st, 0);
  CU_ASSERT_PTR_NOT_NULL(strstr(out ? out : "", "90 Linux"));
  free(out);
  snprintf(plant_tct, sizeof plant_tct, "%s.tct", tu_tmp("plant"));
  return plant_tct;
}

/* The byte plant() stores 0x5a into: its address and the instruction. */
static int planted(const char *tct, uint64_t *addr, uint64_t *index) {
  char *j = dump_json(tct, "--range plant");
  int found = 0;
  for (const char *p = j, *l; j && (l = next_of(&p, "insn"));) {
    const char *w = strstr(l, "{\"kind\":\"w\"");
    if (w && line_has(l, "\"size\":1,") && line_has(l, "\"new\":\"5a\"")) {
      *addr = field_u64(w, "addr");
      *index = field_u64(l, "index");
      found++;
    }
  }
  free(j);
  CU_ASSERT_EQUAL(found, 1);
  return found == 1 ? 0 : -1;
}

/* Who last wrote the planted byte before peek() read it: plant(), found
 * by --mem --writes --to --last 1; all its writers: main's and plant's. */
static void test_last_writer(void) {
  const char *tct = plant_trace();
  uint64_t a = 0, planter = 0;
  if (planted(tct, &a, &planter) < 0)
    return;
  char args[256];
  /* peek's read of it */
  snprintf(args, sizeof args, "--range peek --mem 0x%" PRIx64 " --reads", a);
  char *j = dump_json(tct, args);
  const char *p = j, *l = j ? next_of(&p, "insn") : NULL;
  CU_ASSERT_PTR_NOT_NULL_FATAL(l);
  uint64_t reader = field_u64(l, "index");
  CU_ASSERT(reader > planter);
  CU_ASSERT_PTR_NULL(next_of(&p, "insn"));
  free(j);

  snprintf(args, sizeof args,
           "--mem 0x%" PRIx64 ":4 --writes --to %" PRIu64 " --last 1", a - 2,
           reader);
  j = dump_json(tct, args);
  CU_ASSERT_EQUAL(count_of(j ? j : "", "insn"), 1);
  p = j;
  l = j ? next_of(&p, "insn") : NULL;
  /* neighbour() wrote target[4] and [6] later, but [4] is in the range */
  CU_ASSERT(l && field_u64(l, "index") > planter);
  free(j);
  snprintf(args, sizeof args,
           "--mem 0x%" PRIx64 " --writes --to %" PRIu64 " --last 1", a, reader);
  j = dump_json(tct, args);
  CU_ASSERT_EQUAL(count_of(j ? j : "", "insn"), 1);
  p = j;
  l = j ? next_of(&p, "insn") : NULL;
  CU_ASSERT(l && field_u64(l, "index") == planter);
  /* the window ends before the reader: no exit line */
  CU_ASSERT_EQUAL(count_of(j ? j : "", "exit"), 0);
  free(j);

  /* every writer of the byte: main's store of 1, then plant's */
  snprintf(args, sizeof args, "--mem 0x%" PRIx64 "-0x%" PRIx64 " --writes", a,
           a + 1);
  j = dump_json(tct, args);
  CU_ASSERT_EQUAL(count_of(j ? j : "", "insn"), 2);
  p = j;
  l = j ? next_of(&p, "insn") : NULL;
  CU_ASSERT(l && line_has(l, "\"new\":\"01\"") &&
            field_u64(l, "index") < planter);
  l = j ? next_of(&p, "insn") : NULL;
  CU_ASSERT(l && field_u64(l, "index") == planter);
  CU_ASSERT_EQUAL(count_of(j ? j : "", "exit"), 1);
  free(j);

  /* the text dump says the same, labelled */
  char *out = NULL;
  CU_ASSERT_EQUAL(tu_runf(&out, 0,
                          "%s dump --mem 0x%" PRIx64 ":1 --writes --last 1 %s",
                          TC_CLI, a, tct),
                  0);
  char want[64];
  snprintf(want, sizeof want, "\n%-8" PRIu64 " ", planter);
  CU_ASSERT_PTR_NOT_NULL(strstr(out ? out : "", want));
  free(out);
}

/* The kernel's writes count: the byte of uname's buffer is written by
 * the syscall instruction, shown with its syscall line. */
static void test_kernel_writer(void) {
  const char *tct = plant_trace();
  char *j = dump_json(tct, "--syscalls-only --syscall uname");
  const char *p = j, *l = j ? next_of(&p, "syscall") : NULL;
  CU_ASSERT_PTR_NOT_NULL_FATAL(l);
  uint64_t at = field_u64(l, "index");
  const char *args = strstr(l, "\"args\":[\"");
  CU_ASSERT_PTR_NOT_NULL_FATAL(args);
  uint64_t buf = strtoull(args + 9, NULL, 16);
  free(j);
  char opt[128];
  /* utsname's second field, nodename, 65 bytes in */
  snprintf(opt, sizeof opt, "--mem 0x%" PRIx64 ":1 --writes", buf + 65);
  j = dump_json(tct, opt);
  p = j;
  l = j ? next_of(&p, "insn") : NULL;
  CU_ASSERT(l && field_u64(l, "index") == at);
  p = j;
  l = j ? next_of(&p, "syscall") : NULL;
  CU_ASSERT(l && line_has(l, "\"name\":\"uname\""));
  free(j);
  /* reads only: the kernel's writes do not count */
  snprintf(opt, sizeof opt, "--mem 0x%" PRIx64 ":1 --reads --to %" PRIu64,
           buf + 65, at + 1);
  j = dump_json(tct, opt);
  CU_ASSERT_EQUAL(count_of(j ? j : "", "insn"), 0);
  free(j);
}

/* --reg: exactly the instructions whose changed registers include it
 * (compared with the whole dump), by its name or its 32-bit name. */
static void test_reg(void) {
  const char *tct = plant_trace();
  char *all = dump_json(tct, "");
  int want = 0, total = 0;
  for (const char *p = all, *l; all && (l = next_of(&p, "insn"));) {
    total++;
    const char *regs = strstr(l, "\"regs\":{");
    const char *mem = strstr(l, "\"mem\":[");
    const char *r = strstr(l, "\"rbx\":");
    want += r && r > regs && r < mem;
  }
  free(all);
  CU_ASSERT(want > 0 && want < total);
  const char *names[] = {"--reg rbx", "--reg EBX", "--reg rdi,rbx"};
  for (int i = 0; i < 2; i++) {
    char *j = dump_json(tct, names[i]);
    CU_ASSERT_EQUAL(count_of(j ? j : "", "insn"), want);
    free(j);
  }
  char *j = dump_json(tct, names[2]);
  CU_ASSERT(count_of(j ? j : "", "insn") > want);
  free(j);
  /* composed with --range: plant() changes no rbx */
  j = dump_json(tct, "--reg rbx --range plant");
  CU_ASSERT_EQUAL(count_of(j ? j : "", "insn"), 0);
  free(j);
}

/* --to ends the window; --last keeps the last records. */
static void test_window_end(void) {
  const char *tct = plant_trace();
  char *j = dump_json(tct, "--from 10 --to 20");
  CU_ASSERT_EQUAL(count_of(j ? j : "", "insn"), 10);
  const char *p = j, *l = j ? next_of(&p, "insn") : NULL;
  CU_ASSERT(l && field_u64(l, "index") == 10);
  free(j);
  char *all = dump_json(tct, "--reg rsp");
  int n = count_of(all ? all : "", "insn");
  j = dump_json(tct, "--reg rsp --last 3");
  CU_ASSERT_EQUAL(count_of(j ? j : "", "insn"), 3);
  /* the same three as the whole selection ends with */
  const char *tail = all;
  for (int i = 0; tail && i < n - 3; i++)
    next_of(&tail, "insn");
  const char *q = j;
  for (int i = 0; i < 3 && tail && q; i++) {
    const char *a = next_of(&tail, "insn"), *b = next_of(&q, "insn");
    CU_ASSERT(a && b && field_u64(a, "index") == field_u64(b, "index"));
  }
  free(j);
  free(all);
}

/* dump --syscall NAME without --syscalls-only: the instructions that made
 * that syscall, each with its syscall line, and nothing else (it printed
 * every instruction before); composed with --mem. */
static void test_syscall_instructions(void) {
  const char *tct = plant_trace();
  char *j = dump_json(tct, "--syscall uname");
  CU_ASSERT_EQUAL(count_of(j ? j : "", "insn"), 1);
  CU_ASSERT_EQUAL(count_of(j ? j : "", "syscall"), 1);
  const char *p = j, *l = j ? next_of(&p, "insn") : NULL;
  const char *q = j, *y = j ? next_of(&q, "syscall") : NULL;
  CU_ASSERT(l && y && field_u64(l, "index") == field_u64(y, "index"));
  CU_ASSERT(y && line_has(y, "\"name\":\"uname\""));
  uint64_t at = l ? field_u64(l, "index") : 0;
  free(j);
  /* every syscall instruction of the trace, once each */
  char *all = dump_json(tct, "--syscalls-only");
  int nsys = count_of(all ? all : "", "syscall");
  free(all);
  j = dump_json(tct, "--syscall uname,write,brk,exit_group,arch_prctl,"
                     "set_tid_address,set_robust_list,rseq,prlimit64,"
                     "readlinkat,getrandom,mprotect,newfstatat,fstat");
  CU_ASSERT(count_of(j ? j : "", "insn") > 1);
  CU_ASSERT_EQUAL(count_of(j ? j : "", "insn"),
                  count_of(j ? j : "", "syscall"));
  CU_ASSERT(count_of(j ? j : "", "syscall") <= nsys);
  free(j);
  /* composed: a range the uname call does not write selects nothing */
  char args[128];
  snprintf(args, sizeof args, "--syscall uname --mem 0x10:1 --to %" PRIu64,
           at + 1);
  j = dump_json(tct, args);
  CU_ASSERT_EQUAL(count_of(j ? j : "", "insn"), 0);
  free(j);
}

/* --json names each instruction's function as the text dump labels it:
 * "sym":"plant", then "plant+0x7"...; null outside every symbol. */
static void test_json_sym(void) {
  const char *tct = plant_trace();
  char *j = dump_json(tct, "--range plant");
  int n = 0, at_start = 0;
  for (const char *p = j, *l; j && (l = next_of(&p, "insn"));) {
    n++;
    at_start += line_has(l, "\"sym\":\"plant\",");
    CU_ASSERT(line_has(l, "\"sym\":\"plant\",") ||
              line_has(l, "\"sym\":\"plant+0x"));
  }
  CU_ASSERT(n >= 2);
  CU_ASSERT_EQUAL(at_start, 1);
  free(j);
  /* every instruction line has the field */
  j = dump_json(tct, "");
  int insns = count_of(j ? j : "", "insn"), with = 0;
  for (const char *p = j, *l; j && (l = next_of(&p, "insn"));)
    with += line_has(l, "\"sym\":");
  CU_ASSERT(insns > 1000);
  CU_ASSERT_EQUAL(with, insns);
  free(j);
}

/* ------------------------------------------------ names of every module */

/* A dynamic symbol's value and size in an ELF file, as nm reads them (a
 * second opinion on tracecorn's own ELF reader). 0, or -1. */
static int nm_symbol(const char *file, const char *name, uint64_t *value,
                     uint64_t *size) {
  char *out = NULL;
  int st = tu_runf(&out, 0, "nm -D -S --defined-only '%s'", file);
  int found = -1;
  for (char *l = out; st == 0 && l && *l && found < 1;) {
    char *nl = strchr(l, '\n');
    if (nl)
      *nl = 0;
    unsigned long long v, z;
    char type, sym[256];
    if (sscanf(l, "%llx %llx %c %255s", &v, &z, &type, sym) == 4) {
      char *at = strchr(sym, '@');
      /* the default version (name@@VERSION) when there are several */
      bool dflt = at && at[1] == '@';
      if (at)
        *at = 0;
      if (strcmp(sym, name) == 0 && (type == 'T' || type == 'W') &&
          (found < 0 || dflt)) {
        *value = v;
        *size = z;
        found = dflt ? 1 : 0;
      }
    }
    l = nl ? nl + 1 : NULL;
  }
  free(out);
  return found < 0 ? -1 : 0;
}

/* Where a module was loaded: the map of it at file offset 0 (its first
 * segment, at its base), by the end of its name. Also its path. */
static int module_base(const evlog *l, const char *suffix, uint64_t *base,
                       const char **path) {
  size_t n = strlen(suffix);
  for (size_t i = 0; i < l->n; i++) {
    const tc_map_event *m = &l->ev[i].u.map;
    size_t k = l->ev[i].kind == TC_EV_MAP ? strlen(m->name) : 0;
    if (k >= n && strcmp(m->name + k - n, suffix) == 0 && m->file_offset == 0) {
      *base = m->addr;
      *path = m->name;
      return 0;
    }
  }
  return -1;
}

/* The function's [lo, hi) where the trace loaded its module (root: the
 * --root the module's path is under, "" for none). */
static int func_range(const evlog *l, const char *root, const char *module,
                      const char *name, uint64_t *lo, uint64_t *hi) {
  uint64_t base = 0, v = 0, z = 0;
  const char *path = NULL;
  char file[8400];
  if (module_base(l, module, &base, &path) < 0)
    return -1;
  snprintf(file, sizeof file, "%s%s", root, path);
  if (nm_symbol(file, name, &v, &z) < 0 || z == 0)
    return -1;
  *lo = base + v;
  *hi = base + v + z;
  return 0;
}

/* Counts a trace's instructions, and those outside [lo, hi). */
static void pcs_in(const evlog *l, uint64_t lo, uint64_t hi, size_t *n,
                   size_t *outside) {
  *n = *outside = 0;
  for (size_t i = 0; i < l->n; i++)
    if (l->ev[i].kind == TC_EV_INSN) {
      uint64_t pc = l->ev[i].u.insn.pc;
      (*n)++;
      *outside += pc < lo || pc >= hi;
    }
}

static uint64_t first_pc(const evlog *l) {
  for (size_t i = 0; i < l->n; i++)
    if (l->ev[i].kind == TC_EV_INSN)
      return l->ev[i].u.insn.pc;
  return 0;
}

/* record --trace-range malloc of dynamic /bin/ls: libc is mapped by ld.so
 * long after the first instruction, and every instruction recorded lies
 * in libc's malloc (nm's value and size); --trace-func malloc enters it
 * at its first instruction and records its callees too. */
static void test_record_library_function(void) {
  if (!tu_have("/bin/ls") || tu_ref_default_mode() == TU_REF_QEMU)
    return;
  char *out = NULL, tct[4200];
  int st = tu_run_merge(&out, TC_CLI, "record", "-q", "-f", "tct",
                        "--trace-range", "malloc", "-o", tu_tmp("ls-malloc"),
                        "--", "/bin/ls", TC_SOURCE_DIR, NULL);
  CU_ASSERT_EQUAL(st, 0);
  CU_ASSERT_PTR_NOT_NULL(strstr(out ? out : "", "CMakeLists.txt"));
  free(out);
  snprintf(tct, sizeof tct, "%s.tct", tu_tmp("ls-malloc"));
  evlog l = {0};
  tc_error err = {{0}};
  CU_ASSERT_EQUAL_FATAL(evlog_read(&l, tct, &err), 0);
  uint64_t lo = 0, hi = 0;
  CU_ASSERT_EQUAL_FATAL(func_range(&l, "", "/libc.so.6", "malloc", &lo, &hi),
                        0);
  size_t n = 0, outside = 0;
  pcs_in(&l, lo, hi, &n, &outside);
  CU_ASSERT(n > 100);
  CU_ASSERT_EQUAL(outside, 0);
  CU_ASSERT_EQUAL(first_pc(&l), lo);
  evlog_free(&l);
  size_t in_range = n;

  /* the same as MODULE:NAME, and --trace-func */
  st = tu_run_merge(&out, TC_CLI, "record", "-q", "-f", "tct", "--trace-func",
                    "libc.so.6:malloc", "-o", tu_tmp("ls-malloc-f"), "--",
                    "/bin/ls", TC_SOURCE_DIR, NULL);
  CU_ASSERT_EQUAL(st, 0);
  free(out);
  snprintf(tct, sizeof tct, "%s.tct", tu_tmp("ls-malloc-f"));
  CU_ASSERT_EQUAL_FATAL(evlog_read(&l, tct, &err), 0);
  pcs_in(&l, lo, hi, &n, &outside);
  CU_ASSERT(n >= in_range);
  CU_ASSERT_EQUAL(n - outside, in_range);
  CU_ASSERT_EQUAL(first_pc(&l), lo);
  evlog_free(&l);

  /* dump names them: --json's sym is malloc's (glibc's first name for it,
   * __libc_malloc) on every line */
  snprintf(tct, sizeof tct, "%s.tct", tu_tmp("ls-malloc"));
  char *j = dump_json(tct, "");
  int lines = 0, named = 0;
  for (const char *p = j, *line; j && (line = next_of(&p, "insn"));) {
    lines++;
    named += line_has(line, "\"sym\":\"__libc_malloc");
  }
  CU_ASSERT_EQUAL((size_t)lines, in_range);
  CU_ASSERT_EQUAL(named, lines);
  free(j);
}

/* dump --range NAME, MODULE:NAME and MODULE on a whole /bin/ls trace:
 * the libraries' symbols are known although the names are looked up
 * before libc is mapped. */
static void test_dump_library_names(void) {
  if (!tu_have("/bin/ls") || tu_ref_default_mode() == TU_REF_QEMU)
    return;
  char *out = NULL, tct[4200];
  CU_ASSERT_EQUAL(tu_run_merge(&out, TC_CLI, "record", "-q", "-f", "tct", "-o",
                               tu_tmp("ls-all"), "--", "/bin/ls", TC_SOURCE_DIR,
                               NULL),
                  0);
  free(out);
  snprintf(tct, sizeof tct, "%s.tct", tu_tmp("ls-all"));
  evlog l = {0};
  tc_error err = {{0}};
  CU_ASSERT_EQUAL_FATAL(evlog_read(&l, tct, &err), 0);
  uint64_t lo = 0, hi = 0;
  CU_ASSERT_EQUAL_FATAL(func_range(&l, "", "/libc.so.6", "malloc", &lo, &hi),
                        0);
  size_t want = 0;
  for (size_t i = 0; i < l.n; i++)
    want += l.ev[i].kind == TC_EV_INSN && l.ev[i].u.insn.pc >= lo &&
            l.ev[i].u.insn.pc < hi;
  evlog_free(&l);
  CU_ASSERT(want > 100);
  const char *specs[] = {"--range malloc", "--range libc.so.6:malloc",
                         "--range libc:__libc_malloc"};
  for (int i = 0; i < 3; i++) {
    char *j = dump_json(tct, specs[i]);
    size_t n = 0, bad = 0;
    for (const char *p = j, *line; j && (line = next_of(&p, "insn"));) {
      uint64_t pc = field_u64(line, "pc");
      n++;
      bad += pc < lo || pc >= hi;
    }
    CU_ASSERT_EQUAL(n, want);
    CU_ASSERT_EQUAL(bad, 0);
    free(j);
  }
  /* a module: libc's code and more than malloc's */
  char *j = dump_json(tct, "--range libc.so.6 --count 100000");
  CU_ASSERT(count_of(j ? j : "", "insn") > (int)want);
  free(j);
  /* another module's name does not match */
  CU_ASSERT_EQUAL(
      tu_runf(&out, 1, "%s dump --range libm.so.6:malloc %s", TC_CLI, tct), 1);
  CU_ASSERT_PTR_NOT_NULL(strstr(out ? out : "", "libm.so.6:malloc"));
  free(out);
}

/* dlopen: libm is mapped by the program itself, mid-run; pow is called
 * through dlsym's pointer (cos is an IFUNC: its symbol is the resolver,
 * run by ld.so, not the code cos() runs). */
static void test_record_dlopen_function(void) {
  if (tu_ref_default_mode() == TU_REF_QEMU)
    return;
  char *out = NULL, tct[4200];
  int st =
      tu_run_merge(&out, TC_CLI, "record", "-q", "-f", "tct", "--trace-func",
                   "libm.so.6:pow", "-o", tu_tmp("dlcos-cos"), "--",
                   tu_guest("dlcos64"), "0.5", NULL);
  CU_ASSERT_EQUAL(st, 4);
  CU_ASSERT_PTR_NOT_NULL(strstr(out ? out : "", "cos(0.5) = 0.877582561890"));
  free(out);
  snprintf(tct, sizeof tct, "%s.tct", tu_tmp("dlcos-cos"));
  evlog l = {0};
  tc_error err = {{0}};
  CU_ASSERT_EQUAL_FATAL(evlog_read(&l, tct, &err), 0);
  uint64_t lo = 0, hi = 0;
  CU_ASSERT_EQUAL_FATAL(func_range(&l, "", "/libm.so.6", "pow", &lo, &hi), 0);
  size_t n = 0, outside = 0;
  pcs_in(&l, lo, hi, &n, &outside);
  CU_ASSERT(n > 10 && n - outside > 10);
  CU_ASSERT_EQUAL(first_pc(&l), lo);
  evlog_free(&l);
}

/* arm64 under --root: the libraries are the root's, found through the
 * guest's view of its files; dump --root reads the same ones. */
static void test_record_arm64_root(void) {
  const char *root = "/var/cache/tracecorn/rootfs-arm64";
  char prog[4200];
  snprintf(prog, sizeof prog, "%s/usr/bin/seq", root);
  if (!tu_have(prog)) {
    fprintf(stderr, "\n(skipped: no %s; scripts/fetch-foreign-rootfs.sh)\n",
            prog);
    return;
  }
  char *out = NULL, tct[4200];
  int st = tu_run_merge(&out, TC_CLI, "record", "-q", "-f", "tct", "--root",
                        root, "--trace-range", "malloc", "-o",
                        tu_tmp("seq-arm64-malloc"), "--", prog, "3", NULL);
  CU_ASSERT_EQUAL(st, 0);
  CU_ASSERT_PTR_NOT_NULL(strstr(out ? out : "", "1\n2\n3\n"));
  free(out);
  snprintf(tct, sizeof tct, "%s.tct", tu_tmp("seq-arm64-malloc"));
  evlog l = {0};
  tc_error err = {{0}};
  CU_ASSERT_EQUAL_FATAL(evlog_read(&l, tct, &err), 0);
  CU_ASSERT_EQUAL(tc_arch_id_of(l.arch), TC_ARCH_ARM64);
  uint64_t lo = 0, hi = 0;
  CU_ASSERT_EQUAL_FATAL(func_range(&l, root, "/libc.so.6", "malloc", &lo, &hi),
                        0);
  size_t n = 0, outside = 0;
  pcs_in(&l, lo, hi, &n, &outside);
  CU_ASSERT(n > 50);
  CU_ASSERT_EQUAL(outside, 0);
  CU_ASSERT_EQUAL(first_pc(&l), lo);
  evlog_free(&l);
  char args[4300];
  snprintf(args, sizeof args, "--root %s --range libc.so.6:malloc", root);
  char *j = dump_json(tct, args);
  CU_ASSERT_EQUAL((size_t)count_of(j ? j : "", "insn"), n);
  free(j);
  /* without --root the host has no arm64 libc there: no such function */
  CU_ASSERT_EQUAL(
      tu_runf(&out, 1, "%s dump --range libc.so.6:malloc %s", TC_CLI, tct), 1);
  free(out);
  /* strace too, on the whole run: the syscalls libc's brk() makes
   * (ld.so's own brk is not libc's) */
  CU_ASSERT_EQUAL(tu_run_merge(&out, TC_CLI, "record", "-q", "-f", "tct",
                               "--root", root, "-o", tu_tmp("seq-arm64"), "--",
                               prog, "3", NULL),
                  0);
  free(out);
  snprintf(tct, sizeof tct, "%s.tct", tu_tmp("seq-arm64"));
  CU_ASSERT_EQUAL(tu_runf(&out, 1,
                          "%s strace --root %s --range libc.so.6:brk %s",
                          TC_CLI, root, tct),
                  0);
  int lines = 0, brks = 0;
  for (const char *line = out; line && *line;) {
    const char *nl = strchr(line, '\n');
    lines++;
    brks += strncmp(line, "brk(", 4) == 0;
    line = nl ? nl + 1 : NULL;
  }
  CU_ASSERT(brks >= 1);
  CU_ASSERT_EQUAL(lines, brks + 1); /* and +++ exited with 0 +++ */
  free(out);
}

/* A refused recording says so and claims no file. */
static void test_refused_record(void) {
  char *out = NULL;
  CU_ASSERT_EQUAL(tu_run_merge(&out, TC_CLI, "record", "--trace-func",
                               "nosuchfunction", "-o", tu_tmp("refused"), "--",
                               tu_guest("fib64"), NULL),
                  125);
  const char *t = out ? out : "";
  CU_ASSERT_PTR_NOT_NULL(strstr(t, "nosuchfunction"));
  CU_ASSERT_PTR_NULL(strstr(t, "wrote"));
  CU_ASSERT_PTR_NULL(strstr(t, "instructions,"));
  free(out);
  char tct[4200];
  snprintf(tct, sizeof tct, "%s.tct", tu_tmp("refused"));
  CU_ASSERT_FALSE(tu_have(tct));
  /* a dynamic program may still map it: recorded, with a notice */
  if (!tu_have("/bin/true") || tu_ref_default_mode() == TU_REF_QEMU)
    return;
  CU_ASSERT_EQUAL(tu_run_merge(&out, TC_CLI, "record", "--trace-func",
                               "nosuchfunction", "-o", tu_tmp("unmatched"),
                               "--", "/bin/true", NULL),
                  0);
  t = out ? out : "";
  CU_ASSERT_PTR_NOT_NULL(strstr(t, "--trace-func nosuchfunction: no function"));
  CU_ASSERT_PTR_NOT_NULL(strstr(t, "wrote"));
  free(out);
}

/* Bad values: a clear message and status 1 or 2, never a crash. */
static void test_bad_values(void) {
  const char *tct = plant_trace();
  static const struct {
    const char *args, *msg;
  } bad[] = {
      {"--mem 0x20-0x10", "--mem 0x20-0x10"},
      {"--mem nothex", "--mem nothex"},
      {"--mem 0x10:", "--mem 0x10:"},
      {"--mem 0xffffffffffffffff:2", "not a memory range"},
      {"--reg nosuchreg", "--reg nosuchreg"},
      {"--to 0", "--to"},
      {"--from 9 --to 5", "--to 5"},
      {"--last x", "--last"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    char *out = NULL;
    int st = tu_runf(&out, 1, "%s dump %s %s", TC_CLI, bad[i].args, tct);
    CU_ASSERT(st == 1 || st == 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(out ? out : "", bad[i].msg));
    if (st != 1 && st != 2)
      fprintf(stderr, "\ndump %s: status %d\n", bad[i].args, st);
    free(out);
  }
}

/* `tracecorn index`: a format that cannot seek gets TRACE.tcidx, and
 * `dump --from N` through it prints what reading forward prints (the
 * events are the same: a tct of them); `info` counts the same from it,
 * says it seeks, and a changed trace makes the index stale, never
 * trusted. */
static void test_index(void) {
  char prefix[4200];
  snprintf(prefix, sizeof prefix, "%s", tu_tmp("idx"));
  char *out = NULL;
  CU_ASSERT_EQUAL_FATAL(tu_run_merge(&out, TC_CLI, "record", "-q", "-f",
                                     "trac,ucir,tfile,tenet,bap", "-o", prefix,
                                     "--", tu_guest("fib64"), NULL),
                        0);
  free(out);
  const char *ext[] = {".trace64", ".ucir", ".tf", ".tenet", ".frames"};
  for (int i = 0; i < 5; i++) {
    char f[4300], dir[4400];
    snprintf(f, sizeof f, "%s%s", prefix, ext[i]);
    snprintf(dir, sizeof dir, "%s.tcidx", f);
    char *info_plain = NULL, *info_idx = NULL, *plain = NULL, *fast = NULL;
    CU_ASSERT_EQUAL(tu_runf(&info_plain, 0, "%s info %s", TC_CLI, f), 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(info_plain, "seekable:     no"));
    uint64_t n = 0;
    const char *l = strstr(info_plain, "instructions: ");
    CU_ASSERT_FATAL(l != NULL);
    n = strtoull(l + 14, NULL, 10);
    CU_ASSERT_FATAL(n > 1000);
    /* a window near the end, and one in the middle */
    char args[2][128];
    snprintf(args[0], sizeof args[0], "--from %llu --count 40",
             (unsigned long long)(n - 30));
    snprintf(args[1], sizeof args[1], "--from %llu --to %llu",
             (unsigned long long)(n / 2), (unsigned long long)(n / 2 + 25));
    char *before[2];
    for (int k = 0; k < 2; k++)
      CU_ASSERT_EQUAL(
          tu_runf(&before[k], 0, "%s dump --json %s %s", TC_CLI, args[k], f),
          0);
    CU_ASSERT_EQUAL(tu_runf(&out, 0, "%s index %s", TC_CLI, f), 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, ".tcidx"));
    free(out);
    struct stat st;
    CU_ASSERT(stat(dir, &st) == 0 && S_ISDIR(st.st_mode));
    for (int k = 0; k < 2; k++) {
      CU_ASSERT_EQUAL(
          tu_runf(&fast, 0, "%s dump --json %s %s", TC_CLI, args[k], f), 0);
      CU_ASSERT_PTR_NOT_NULL(strstr(fast, "\"type\":\"insn\""));
      if (strcmp(fast, before[k]) != 0) {
        printf("\n  %s %s: through the index, dump differs\n", ext[i], args[k]);
        CU_FAIL("dump --from through the index differs from reading forward");
      }
      free(fast);
      CU_ASSERT_EQUAL(tu_runf(&plain, 0, "%s dump --no-index --json %s %s",
                              TC_CLI, args[k], f),
                      0);
      CU_ASSERT_STRING_EQUAL(plain, before[k]);
      free(plain);
    }
    CU_ASSERT_EQUAL(tu_runf(&info_idx, 0, "%s info %s", TC_CLI, f), 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(info_idx, "seekable:     yes, through"));
    /* every line but the seek line is the same */
    char *a = strstr(info_plain, "seekable:"),
         *b = strstr(info_idx, "seekable:");
    CU_ASSERT_FATAL(a && b);
    CU_ASSERT_EQUAL(a - info_plain, b - info_idx);
    CU_ASSERT(strncmp(info_plain, info_idx, (size_t)(a - info_plain)) == 0);
    if (i == 0) {
      /* the index is what --from reads: with the trace's middle damaged
       * (its size, time, first and last 64 KiB kept) it still answers,
       * while reading the trace itself fails there */
      struct stat ts;
      CU_ASSERT_FATAL(stat(f, &ts) == 0 && ts.st_size > 200 * 1024);
      CU_ASSERT_EQUAL(
          tu_runf(&out, 0,
                  "touch -r %s %s.mt && head -c 4096 /dev/zero | tr '\\0' "
                  "'\\377' | dd of=%s bs=1 seek=%lld conv=notrunc "
                  "status=none && touch -r %s.mt %s",
                  f, f, f, (long long)ts.st_size / 2, f, f),
          0);
      free(out);
      CU_ASSERT_EQUAL(
          tu_runf(&fast, 0, "%s dump --json %s %s", TC_CLI, args[0], f), 0);
      CU_ASSERT_STRING_EQUAL(fast, before[0]);
      free(fast);
      int rc = tu_runf(&plain, 1, "%s dump --no-index --json %s %s", TC_CLI,
                       args[0], f);
      CU_ASSERT(rc != 0 || strcmp(plain, before[0]) != 0);
      free(plain);
    }
    /* a changed trace: the index is stale and ignored */
    FILE *fp = fopen(f, "ab");
    CU_ASSERT_FATAL(fp != NULL);
    fputc(0, fp);
    fclose(fp);
    char *stale = NULL;
    tu_runf(&stale, 1, "%s info %s", TC_CLI, f);
    CU_ASSERT_PTR_NULL(strstr(stale, "through its index"));
    free(stale);
    free(info_plain);
    free(info_idx);
    free(before[0]);
    free(before[1]);
  }
  /* formats that seek by themselves need none */
  CU_ASSERT_EQUAL(tu_runf(&out, 0, "%s index %s", TC_CLI, plant_trace()), 0);
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "seek by themselves"));
  free(out);
}

int main(void) {
  static const tu_case cases[] = {
      {"who last wrote a byte (--mem --writes --to --last)", test_last_writer},
      {"a syscall's kernel writes count as its instruction's",
       test_kernel_writer},
      {"--reg", test_reg},
      {"--to and --last", test_window_end},
      {"--json sym field", test_json_sym},
      {"--syscall selects the instructions", test_syscall_instructions},
      {"record --trace-range/--trace-func malloc of dynamic /bin/ls",
       test_record_library_function},
      {"dump --range NAME, MODULE:NAME, MODULE of libraries",
       test_dump_library_names},
      {"record --trace-func of a dlopen'ed library",
       test_record_dlopen_function},
      {"record --trace-range malloc on arm64 under --root",
       test_record_arm64_root},
      {"a refused record claims no file", test_refused_record},
      {"bad selection values", test_bad_values},
      {"tracecorn index: --from and info of trac, ucir, tfile, tenet, bap",
       test_index},
      {NULL, NULL}};
  return tu_run_suite("select", cases);
}
