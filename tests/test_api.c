/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The public API as a contract (docs/api.md): libtracecorn.so exports
 * exactly the functions of lib/libtracecorn.map, which are exactly the
 * TC_API declarations of the public header; the header defines no
 * internal struct or debug switch; the examples build against that header
 * alone; and the structs a caller allocates honour their size field, so a
 * program built against an older or newer header keeps working. */
#include <ctype.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "tracecorn/tracecorn.h"

#define SRC TC_SOURCE_DIR
#define BIN TC_BINARY_DIR

/* The size field comes first in every struct the caller allocates. */
_Static_assert(offsetof(tc_options, size) == 0, "tc_options.size first");
_Static_assert(offsetof(tc_run_result, size) == 0, "tc_run_result.size");
_Static_assert(offsetof(tc_trace_summary, size) == 0, "summary.size");
_Static_assert(offsetof(tc_verify_report, size) == 0, "report.size");
_Static_assert(offsetof(tc_verify_table, size) == 0, "table.size");
_Static_assert(offsetof(tc_convert_report, size) == 0, "report.size");
_Static_assert(offsetof(tc_filter, size) == 0, "tc_filter.size");

/* ------------------------------------------------------------ name sets */

typedef struct names {
  char v[256][64];
  int n;
} names;

static bool has(const names *s, const char *x) {
  for (int i = 0; i < s->n; i++)
    if (strcmp(s->v[i], x) == 0)
      return true;
  return false;
}

static void add(names *s, const char *x, size_t len) {
  char tmp[64];
  if (len >= sizeof tmp)
    len = sizeof tmp - 1;
  memcpy(tmp, x, len);
  tmp[len] = 0;
  if (!has(s, tmp) && s->n < 256)
    snprintf(s->v[s->n++], sizeof s->v[0], "%s", tmp);
}

static bool ident(char c) { return isalnum((unsigned char)c) || c == '_'; }

/* Every name of a that b lacks is reported as `what`; true if none. */
static bool covered(const names *a, const names *b, const char *what) {
  bool ok = true;
  for (int i = 0; i < a->n; i++)
    if (!has(b, a->v[i])) {
      fprintf(stderr, "\n%s: %s\n", what, a->v[i]);
      ok = false;
    }
  return ok;
}

static char *read_text(const char *path) {
  size_t n;
  char *t = (char *)tu_read_file(path, &n);
  if (!t)
    fprintf(stderr, "\ncannot read %s\n", path);
  return t;
}

static int sh(char **out, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static int sh(char **out, const char *fmt, ...) {
  char cmd[8192];
  va_list ap;
  va_start(ap, fmt);
  int k = vsnprintf(cmd, sizeof cmd, fmt, ap);
  va_end(ap);
  if (k < 0 || (size_t)k >= sizeof cmd)
    return -1;
  char *o = NULL;
  int st = tu_run(cmd, &o, 1);
  if (st != 0)
    fprintf(stderr, "\nexit %d from: %s\n%s\n", st, cmd, o ? o : "");
  if (out)
    *out = o;
  else
    free(o);
  return st;
}

/* The global names of the version script (between "global:" and
 * "local:", comments aside). */
static void map_names(names *map) {
  char *t = read_text(SRC "/lib/libtracecorn.map");
  CU_ASSERT_FATAL(t != NULL);
  for (char *c = strstr(t, "/*"); c; c = strstr(c, "/*")) {
    char *e = strstr(c + 2, "*/");
    CU_ASSERT_FATAL(e != NULL);
    memset(c, ' ', (size_t)(e + 2 - c));
  }
  char *g = strstr(t, "global:"), *l = strstr(t, "local:");
  CU_ASSERT_FATAL(g && l && g < l);
  for (char *p = g + 7; p < l;) {
    while (p < l && !ident(*p))
      p++;
    char *w = p;
    while (p < l && ident(*p))
      p++;
    if (p > w)
      add(map, w, (size_t)(p - w));
  }
  free(t);
}

/* The functions the header declares with TC_API. Each has a comment right
 * above it; a prototype without TC_API would be hidden in the shared
 * library, so there is none (static inline helpers aside: they are
 * compiled into the caller). */
static void header_api(names *api) {
  char *h = read_text(SRC "/include/tracecorn/tracecorn.h");
  CU_ASSERT_FATAL(h != NULL);
  for (char *l = h; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL) {
    /* a prototype starts at column 0 with its type; struct members and
     * function pointers are indented or typedefs */
    bool decl = islower((unsigned char)*l) && strncmp(l, "typedef", 7) &&
                strncmp(l, "struct", 6) && strncmp(l, "enum", 4) &&
                strncmp(l, "static inline ", 14);
    char *nl = strchr(l, '\n');
    char *paren = strchr(l, '(');
    if (decl && paren && (!nl || paren < nl) && paren > l && ident(paren[-1])) {
      fprintf(stderr, "\ntracecorn.h: declared without TC_API: %.*s\n",
              nl ? (int)(nl - l) : 80, l);
      CU_FAIL("a public function without TC_API");
    }
  }
  for (char *p = h; (p = strstr(p, "\nTC_API ")) != NULL; p++) {
    const char *q = p; /* the line above ends a comment */
    while (q > h && isspace((unsigned char)q[-1]))
      q--;
    bool documented = q - h >= 2 && q[-2] == '*' && q[-1] == '/';
    char *paren = strchr(p, '(');
    CU_ASSERT_FATAL(paren != NULL);
    char *b = paren;
    while (b > p && ident(b[-1]))
      b--;
    add(api, b, (size_t)(paren - b));
    if (!documented)
      fprintf(stderr, "\ntracecorn.h: %.*s has no comment above it\n",
              (int)(paren - b), b);
    CU_ASSERT(documented);
  }
  free(h);
}

static void test_exports_are_the_map(void) {
  names map = {0}, exported = {0};
  map_names(&map);
  CU_ASSERT(map.n >= 40 && has(&map, "tc_version") &&
            has(&map, "tc_arch_reg_name") && has(&map, "tc_format_name"));
  char *out = NULL;
  CU_ASSERT_EQUAL_FATAL(
      sh(&out,
         "nm -D --defined-only %s/libtracecorn.so | awk '$2 != \"A\" "
         "{ print $3 }'",
         BIN),
      0);
  for (char *p = out; p && *p;) {
    char *e = strchr(p, '\n');
    size_t n = e ? (size_t)(e - p) : strlen(p);
    char *at = memchr(p, '@', n); /* a version, were there one */
    if (n)
      add(&exported, p, at ? (size_t)(at - p) : n);
    p = e ? e + 1 : NULL;
  }
  free(out);
  CU_ASSERT(covered(&map, &exported, "in libtracecorn.map, not exported"));
  CU_ASSERT(covered(&exported, &map, "exported, not in libtracecorn.map"));
}

static void test_header_is_the_map(void) {
  names map = {0}, api = {0};
  map_names(&map);
  header_api(&api);
  CU_ASSERT(covered(&api, &map, "TC_API in tracecorn.h, not in the map"));
  CU_ASSERT(covered(&map, &api, "in the map, not TC_API in tracecorn.h"));
}

/* The internal contract stays out of the public header: the format vtable,
 * the arch table's struct, the debug switches. */
static void test_header_keeps_internals_out(void) {
  char *h = read_text(SRC "/include/tracecorn/tracecorn.h");
  CU_ASSERT_FATAL(h != NULL);
  static const char *const internal[] = {"struct tc_arch {",
                                         "struct tc_format {",
                                         "tc_reg_info",
                                         "open_writer",
                                         "next_event",
                                         "tc_syscall_abi",
                                         "TC_NO_REG",
                                         "regfile",
                                         "not_continuous",
                                         "writer_threads_check",
                                         "tc_writer_option",
                                         "uc_id",
                                         NULL};
  for (int i = 0; internal[i]; i++) {
    bool absent = strstr(h, internal[i]) == NULL;
    if (!absent)
      fprintf(stderr, "\ntracecorn.h mentions %s\n", internal[i]);
    CU_ASSERT(absent);
  }
  free(h);
}

/* The examples compile with nothing but the public header on the include
 * path (a copy of it) and link against the shared library; the header also
 * compiles as C++ and under -pedantic. */
static void test_examples_public_only(void) {
  const char *dir = tu_tmp("public");
  CU_ASSERT_EQUAL(sh(NULL,
                     "rm -rf %s && mkdir -p %s/include/tracecorn && cp "
                     "%s/include/tracecorn/tracecorn.h %s/include/tracecorn/",
                     dir, dir, SRC, dir),
                  0);
  static const char *const examples[] = {"embed_raw", "record_elf",
                                         "count_events", NULL};
  for (int i = 0; examples[i]; i++)
    CU_ASSERT_EQUAL(sh(NULL,
                       "cd %s && %s -std=c11 -pedantic -Wall -Wextra -Werror "
                       "-Iinclude -o %s %s/examples/%s.c -L%s -ltracecorn "
                       "-Wl,-rpath,%s",
                       dir, TC_C_COMPILER, examples[i], SRC, examples[i], BIN,
                       BIN),
                    0);
  /* and the one built this way runs */
  char *out = NULL;
  CU_ASSERT_EQUAL(sh(&out, "%s/embed_raw", dir), 0);
  CU_ASSERT(out && strstr(out, "exit status 42") && strstr(out, "rax=0x2a"));
  free(out);
  CU_ASSERT_EQUAL(sh(NULL,
                     "cd %s && printf '#include <tracecorn/tracecorn.h>\\n' "
                     "| c++ -x c++ -std=c++11 -Wall -Wextra -Werror -Iinclude "
                     "-fsyntax-only -",
                     dir),
                  0);
}

/* ----------------------------------------------------------- accessors */

static void test_arch_accessors(void) {
  const tc_arch *a = tc_arch_by_name("amd64");
  CU_ASSERT_FATAL(a != NULL);
  CU_ASSERT_STRING_EQUAL(tc_arch_name(a), "x86_64");
  CU_ASSERT_EQUAL(tc_arch_id_of(a), TC_ARCH_X86_64);
  CU_ASSERT_EQUAL(tc_arch_ptr_size(a), 8);
  CU_ASSERT_EQUAL(tc_arch_big_endian(a), 0);
  CU_ASSERT_EQUAL(tc_arch_big_endian(tc_arch_by_id(TC_ARCH_MIPS)), 1);
  CU_ASSERT_EQUAL(tc_arch_ptr_size(tc_arch_by_id(TC_ARCH_X86)), 4);
  int pc = tc_arch_pc_reg(a), sp = tc_arch_sp_reg(a);
  CU_ASSERT_STRING_EQUAL(tc_arch_reg_name(a, pc), "rip");
  CU_ASSERT_STRING_EQUAL(tc_arch_reg_name(a, sp), "rsp");
  CU_ASSERT_EQUAL(tc_arch_reg_size(a, pc), 8);
  CU_ASSERT(tc_arch_reg_flags(a, pc) & TC_REG_PC);
  CU_ASSERT(tc_arch_reg_flags(a, sp) & TC_REG_SP);
  CU_ASSERT_EQUAL(tc_arch_reg_index(a, "rip"), pc);
  /* every register lies inside the state image, none overlap the next */
  int n = tc_arch_reg_count(a);
  CU_ASSERT(n > 16);
  size_t end = 0;
  for (int r = 0; r < n; r++) {
    CU_ASSERT(tc_arch_reg_offset(a, r) >= end);
    end = tc_arch_reg_offset(a, r) + tc_arch_reg_size(a, r);
  }
  CU_ASSERT(end <= tc_arch_state_size(a));
  /* a register that is not there */
  CU_ASSERT_PTR_NULL(tc_arch_reg_name(a, n));
  CU_ASSERT_PTR_NULL(tc_arch_reg_name(a, -1));
  CU_ASSERT_EQUAL(tc_arch_reg_size(a, n), 0);
  CU_ASSERT_EQUAL(tc_arch_reg_flags(a, n), 0);
  CU_ASSERT_EQUAL(tc_arch_reg_offset(a, n), 0);
  /* state images through the accessors */
  uint8_t state[4096] = {0};
  CU_ASSERT_FATAL(tc_arch_state_size(a) <= sizeof state);
  tc_state_set(a, state, pc, 0x401000);
  CU_ASSERT_EQUAL(tc_state_get(a, state, pc), 0x401000);
  CU_ASSERT_EQUAL(state[tc_arch_reg_offset(a, pc) + 1], 0x10);
  CU_ASSERT_STRING_EQUAL(tc_arch_syscall_name(a, 60), "exit");
}

static void test_format_accessors(void) {
  const tc_format *trac = tc_format_by_name("trac");
  CU_ASSERT_FATAL(trac != NULL);
  CU_ASSERT_STRING_EQUAL(tc_format_name(trac), "trac");
  CU_ASSERT(tc_format_description(trac) && tc_format_description(trac)[0]);
  CU_ASSERT_STRING_EQUAL(
      tc_format_extension(trac, tc_arch_by_id(TC_ARCH_X86_64)), ".trace64");
  CU_ASSERT_STRING_EQUAL(tc_format_extension(trac, tc_arch_by_id(TC_ARCH_X86)),
                         ".trace32");
  CU_ASSERT_STRING_EQUAL(tc_format_extension(trac, NULL), ".trace64");
  CU_ASSERT(tc_format_can_write(trac) && tc_format_can_read(trac));
  CU_ASSERT(tc_format_caps(trac) & TC_CAP_MEM);
  CU_ASSERT_PTR_EQUAL(tc_format_by_extension("x.trace32"), trac);
  /* every registered format answers; strace has no reader */
  int n = 0;
  for (const tc_format *const *f = tc_formats(); *f; f++, n++) {
    CU_ASSERT_PTR_EQUAL(tc_format_by_name(tc_format_name(*f)), *f);
    CU_ASSERT(!tc_format_can_write(*f) || tc_format_extension(*f, NULL));
  }
  CU_ASSERT(n >= 10);
  CU_ASSERT(!tc_format_can_read(tc_format_by_name("strace")));
}

/* ---------------------------------------------------- structs that grow */

/* mov eax, 7; add eax, 35; mov edi, eax; mov eax, 60; syscall (exit 42) */
static const uint8_t exit42[] = {0xb8, 7,    0,  0, 0, 0x83, 0xc0, 35,  0x89,
                                 0xc7, 0xb8, 60, 0, 0, 0,    0x0f, 0x05};

/* A session over the raw blob above, from options of o->size bytes. */
static tc_session *raw_session(const tc_options *o, tc_error *err) {
  tc_session *s = tc_session_new(o, err);
  if (s &&
      tc_session_load_raw(s, exit42, sizeof exit42, 0x1000, 0x1000, err) < 0) {
    tc_session_free(s);
    return NULL;
  }
  return s;
}

/* Options as a program built against another header has them: a struct
 * of `size` bytes in a buffer whose bytes past it are `fill`. */
typedef union options_buf {
  tc_options o;
  unsigned char b[sizeof(tc_options) + 64];
} options_buf;

static void options_of_size(options_buf *u, size_t size, unsigned char fill) {
  memset(u->b, fill, sizeof u->b);
  tc_options_defaults(&u->o, size);
  u->o.arch = "x86_64";
}

static void test_options_size(void) {
  tc_error err = {{0}};
  /* never initialised */
  tc_options o;
  memset(&o, 0, sizeof o);
  o.arch = "x86_64";
  CU_ASSERT_PTR_NULL(tc_session_new(&o, &err));
  CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "tc_options_init"));
  /* an older header's: the fields it lacks keep their defaults, the bytes
   * past it are neither written nor read */
  options_buf u;
  size_t older = offsetof(tc_options, writer_threads);
  options_of_size(&u, older, 0xa5);
  CU_ASSERT_EQUAL(u.o.size, older);
  CU_ASSERT_EQUAL(u.o.record_memory, 1);
  CU_ASSERT_EQUAL(u.o.stderr_fd, 2);
  CU_ASSERT_EQUAL(u.b[older], 0xa5);
  tc_session *s = raw_session(&u.o, &err);
  CU_ASSERT_PTR_NOT_NULL(s);
  tc_run_result res;
  tc_run_result_init(&res);
  CU_ASSERT_EQUAL(tc_session_run(s, &res, &err), 0);
  CU_ASSERT_EQUAL(res.status, 42);
  tc_session_free(s);
  /* a newer header's: its unknown fields are zero (accepted) or set
   * (refused, it would be ignored) */
  size_t newer = sizeof(tc_options) + 16;
  options_of_size(&u, newer, 0xa5);
  CU_ASSERT_EQUAL(u.o.size, newer);
  CU_ASSERT_EQUAL(u.b[sizeof(tc_options)], 0);
  CU_ASSERT_EQUAL(u.b[newer - 1], 0);
  CU_ASSERT_EQUAL(u.b[newer], 0xa5);
  s = raw_session(&u.o, &err);
  CU_ASSERT_PTR_NOT_NULL(s);
  tc_session_free(s);
  u.b[newer - 1] = 1;
  CU_ASSERT_PTR_NULL(tc_session_new(&u.o, &err));
  CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "newer header"));
}

static void test_results_size(void) {
  tc_error err = {{0}};
  tc_options o;
  tc_options_init(&o);
  o.arch = "x86_64";
  char tct[4200];
  snprintf(tct, sizeof tct, "%s.tct", tu_tmp("sized"));
  tc_session *s = raw_session(&o, &err);
  CU_ASSERT_FATAL(s != NULL);
  CU_ASSERT_EQUAL(tc_session_add_writer(s, tc_format_by_name("tct"), tct, &err),
                  0);
  /* not initialised: refused before anything runs */
  tc_run_result res;
  memset(&res, 0, sizeof res);
  CU_ASSERT_EQUAL(tc_session_run(s, &res, &err), -1);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "tc_run_result_init"));
  /* an older header's result: filled as far as it reaches */
  union {
    tc_run_result r;
    unsigned char b[sizeof(tc_run_result)];
  } old;
  memset(old.b, 0xa5, sizeof old.b);
  old.r.size = offsetof(tc_run_result, mem_accesses);
  CU_ASSERT_EQUAL(tc_session_run(s, &old.r, &err), 0);
  CU_ASSERT_EQUAL(old.r.size, offsetof(tc_run_result, mem_accesses));
  CU_ASSERT_EQUAL(old.r.status, 42);
  CU_ASSERT_EQUAL(old.r.insns, 5);
  CU_ASSERT_EQUAL(old.b[offsetof(tc_run_result, mem_accesses)], 0xa5);
  tc_session_free(s);

  /* the reports */
  tc_trace_summary sum;
  memset(&sum, 0, sizeof sum);
  CU_ASSERT_EQUAL(tc_trace_summarize(tct, &sum, &err), -1);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "tc_trace_summary_init"));
  tc_trace_summary_init(&sum);
  memset(sum.exit_message, 0xa5, sizeof sum.exit_message);
  sum.size = offsetof(tc_trace_summary, exit_message);
  CU_ASSERT_EQUAL(tc_trace_summarize(tct, &sum, &err), 0);
  CU_ASSERT_EQUAL(sum.insns, 5);
  CU_ASSERT_EQUAL(sum.exit_status, 42);
  CU_ASSERT_EQUAL((unsigned char)sum.exit_message[0], 0xa5);

  tc_verify_report rep;
  memset(&rep, 0, sizeof rep);
  CU_ASSERT_EQUAL(tc_verify(tct, tct, NULL, &rep, &err), -1);
  tc_verify_report_init(&rep);
  CU_ASSERT_EQUAL(tc_verify(tct, tct, NULL, &rep, &err), 0);
  CU_ASSERT(rep.insns == 5 && rep.mismatches == 0);
  tc_verify_table *t = calloc(1, sizeof *t);
  CU_ASSERT_FATAL(t != NULL);
  CU_ASSERT_EQUAL(tc_verify_checks(tct, tct, NULL, t, &err), -1);
  tc_verify_table_init(t);
  CU_ASSERT_EQUAL(tc_verify_checks(tct, tct, NULL, t, &err), 0);
  CU_ASSERT(t->insns == 5 && t->checks[TC_VCHK_REGS].held);
  free(t);

  char text[4200];
  snprintf(text, sizeof text, "%s.txt", tu_tmp("sized"));
  tc_filter f;
  memset(&f, 0, sizeof f);
  CU_ASSERT_EQUAL(tc_convert_filtered(tct, NULL, tc_format_by_name("text"),
                                      text, &f, NULL, &err),
                  -1);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "tc_filter_init"));
  tc_filter_init(&f);
  f.count = 2;
  tc_convert_report cr;
  tc_convert_report_init(&cr);
  CU_ASSERT_EQUAL(tc_convert_checked(tct, NULL, tc_format_by_name("text"), text,
                                     &f, NULL, 0, &cr, &err),
                  0);
  CU_ASSERT_EQUAL(cr.dropped_kinds, 0);
}

/* ------------------------------------------------- reading step by step */

typedef struct seen {
  uint64_t events, insns;
} seen;

static int count_sink(void *ctx, const tc_event *ev, tc_error *err) {
  (void)err;
  seen *s = ctx;
  s->events++;
  s->insns += ev->kind == TC_EV_INSN;
  return 0;
}

/* A recording of fib64 in tct and trac (a format without seek or exit). */
static const char *pull_trace(const char *ext) {
  static char path[2][4200];
  int i = strcmp(ext, ".tct") != 0;
  const char *prefix = tu_tmp("pull");
  if (!tu_have(path[0]) || !path[0][0]) {
    CU_ASSERT_EQUAL_FATAL(sh(NULL,
                             "%s record -q -f tct,trac -o %s -- %s >/dev/null",
                             TC_CLI, prefix, tu_guest("fib64")),
                          0);
    snprintf(path[0], sizeof path[0], "%s.tct", prefix);
    snprintf(path[1], sizeof path[1], "%s.trace64", prefix);
  }
  return path[i];
}

/* tc_trace gives the events tc_read_trace does (a trac file then a
 * synthetic EXIT), packed records the same events one by one or many at a
 * time, columns one row per instruction, and a seek a KEYFRAME then the
 * instruction. */
static void test_pull_reader(void) {
  static const char *const exts[] = {".tct", ".trace64"};
  for (int f = 0; f < 2; f++) {
    const char *path = pull_trace(exts[f]);
    tc_error err = {{0}};
    seen pushed = {0, 0};
    CU_ASSERT_EQUAL_FATAL(tc_read_trace(path, NULL, count_sink, &pushed, &err),
                          0);
    tc_trace *t = tc_trace_open(path, NULL, &err);
    tc_trace *p = tc_trace_open(path, NULL, &err);
    CU_ASSERT_FATAL(t && p);
    const tc_arch *arch = tc_trace_get_info(t)->arch;
    CU_ASSERT_PTR_NOT_NULL_FATAL(arch);
    uint64_t n = 0, insns = 0, *pcs = calloc(pushed.insns, sizeof *pcs);
    size_t cap = 16, len = 0;
    uint8_t *buf = malloc(cap);
    const tc_event *ev = NULL;
    int last_kind = 0, last_reason = 0, rc;
    while ((rc = tc_trace_next(t, &ev, &err)) == 1) {
      n++;
      last_kind = ev->kind;
      if (ev->kind == TC_EV_EXIT)
        last_reason = ev->u.exit.reason;
      if (ev->kind == TC_EV_INSN && insns < pushed.insns)
        pcs[insns++] = ev->u.insn.pc;
      /* the same event, packed alone: grown once when it does not fit */
      size_t k = 0;
      CU_ASSERT_EQUAL(tc_trace_read_packed(p, buf, cap, 1, &k, &len, &err), 1);
      if (k == 0) {
        CU_ASSERT(len > cap);
        buf = realloc(buf, cap = len);
        CU_ASSERT_EQUAL(tc_trace_read_packed(p, buf, cap, 1, &k, &len, &err),
                        1);
      }
      CU_ASSERT(k == 1 && len >= 5 && buf[4] == ev->kind);
      uint32_t rlen = (uint32_t)buf[0] | (uint32_t)buf[1] << 8 |
                      (uint32_t)buf[2] << 16 | (uint32_t)buf[3] << 24;
      CU_ASSERT_EQUAL(rlen + 4, len);
      if (ev->kind == TC_EV_INSN && len >= 21) {
        uint64_t pc = 0;
        for (int b = 0; b < 8; b++)
          pc |= (uint64_t)buf[4 + 9 + b] << (8 * b);
        CU_ASSERT_EQUAL(pc, ev->u.insn.pc);
      }
    }
    CU_ASSERT_EQUAL(rc, 0);
    size_t k = 0;
    CU_ASSERT_EQUAL(tc_trace_read_packed(p, buf, cap, 1, &k, &len, &err), 0);
    /* many at a time: the same number of records, each whole */
    CU_ASSERT_EQUAL(tc_trace_seek(p, 0, &err), 0);
    size_t big = 1 << 22, records = 0, bad = 0;
    uint8_t *many = malloc(big);
    while ((rc = tc_trace_read_packed(p, many, big, 0, &k, &len, &err)) == 1) {
      CU_ASSERT(k > 0);
      size_t off = 0;
      for (size_t r = 0; r < k; r++) {
        uint32_t l = (uint32_t)many[off] | (uint32_t)many[off + 1] << 8 |
                     (uint32_t)many[off + 2] << 16 |
                     (uint32_t)many[off + 3] << 24;
        bad += many[off + 4] < TC_EV_INSN || many[off + 4] > TC_EV_SIGNAL;
        off += 4 + l;
      }
      bad += off != len;
      records += k;
      if (k == 0)
        break;
    }
    CU_ASSERT_EQUAL(rc, 0);
    CU_ASSERT_EQUAL(bad, 0);
    free(many);
    CU_ASSERT_EQUAL(insns, pushed.insns);
    CU_ASSERT_EQUAL(last_kind, TC_EV_EXIT);
    /* tct holds the exit; a trac file ends with the synthetic one */
    CU_ASSERT_EQUAL(n, pushed.events + (f == 1));
    /* after a seek to 0: the maps (without data), a KEYFRAME (trac: made
     * by the seek), the rest */
    if (!(records >= insns && records <= n + 1))
      fprintf(stderr, "\n%s: %zu records, %llu events, %llu insns\n", path,
              records, (unsigned long long)n, (unsigned long long)insns);
    CU_ASSERT(records >= insns && records <= n + 1);
    CU_ASSERT_EQUAL(last_reason, f == 0 ? TC_EXIT_EXITED : TC_EXIT_ERROR);

    /* columns, in chunks of 1000 instructions */
    CU_ASSERT_EQUAL(tc_trace_seek(t, 0, &err), 0);
    uint64_t col_pc[1000], col_idx[1000], total = 0;
    uint8_t kinds[4000];
    void *cols[TC_COL_COUNT] = {0};
    cols[TC_COL_PC] = col_pc;
    cols[TC_COL_INDEX] = col_idx;
    cols[TC_COL_MEM_KIND] = kinds;
    size_t ni = 0, nm = 0;
    bool same = true;
    do {
      rc = tc_trace_columns(t, cols, TC_COL_COUNT, 1000, 4000, &ni, &nm, &err);
      for (size_t r = 0; r < ni && total + r < insns; r++)
        same &= col_pc[r] == pcs[total + r];
      for (size_t r = 0; r < nm; r++)
        same &= (kinds[r] & 3) != 0;
      total += ni;
    } while (rc == 1);
    CU_ASSERT_EQUAL(rc, 0);
    CU_ASSERT(same);
    CU_ASSERT_EQUAL(total, insns);

    /* seek: a KEYFRAME (after tct's maps) then the instruction */
    for (uint64_t at = 0; at < insns; at += insns / 5 + 1) {
      CU_ASSERT_EQUAL_FATAL(tc_trace_seek(t, at, &err), 0);
      while ((rc = tc_trace_next(t, &ev, &err)) == 1 &&
             ev->kind != TC_EV_KEYFRAME)
        CU_ASSERT(ev->kind == TC_EV_MAP || ev->kind == TC_EV_UNMAP ||
                  ev->kind == TC_EV_PROTECT);
      CU_ASSERT_FATAL(rc == 1);
      CU_ASSERT_EQUAL(ev->u.key.insn_index, at);
      CU_ASSERT_EQUAL(tc_state_get(arch, ev->u.key.state, tc_arch_pc_reg(arch)),
                      pcs[at]);
      CU_ASSERT_EQUAL(tc_trace_next(t, &ev, &err), 1);
      CU_ASSERT(ev->kind == TC_EV_INSN && ev->u.insn.index == at &&
                ev->u.insn.pc == pcs[at]);
    }
    CU_ASSERT_EQUAL(tc_trace_seek(t, insns + 10, &err), -1);
    CU_ASSERT(err.msg[0] != 0);
    free(buf);
    free(pcs);
    tc_trace_close(t);
    tc_trace_close(p);
  }
  /* a truncated copy: an error with a message, and the same again */
  const char *cut = tu_tmp("pull-cut.tct");
  CU_ASSERT_EQUAL(sh(NULL, "head -c 20000 %s > %s", pull_trace(".tct"), cut),
                  0);
  tc_error err = {{0}};
  tc_trace *t = tc_trace_open(cut, NULL, &err);
  if (t) {
    const tc_event *ev;
    int rc;
    while ((rc = tc_trace_next(t, &ev, &err)) == 1)
      ;
    CU_ASSERT_EQUAL(rc, -1);
    char first[512];
    snprintf(first, sizeof first, "%s", err.msg);
    CU_ASSERT(first[0] != 0);
    memset(&err, 0, sizeof err);
    CU_ASSERT_EQUAL(tc_trace_next(t, &ev, &err), -1);
    CU_ASSERT_STRING_EQUAL(err.msg, first);
    tc_trace_close(t);
  } else {
    CU_ASSERT(err.msg[0] != 0);
  }
  tc_trace_close(NULL);
  CU_ASSERT_PTR_NULL(tc_trace_open(tu_tmp("no-such.tct"), NULL, &err));
}

/* tc_timeline: the state before instruction n is INSN n's state_before,
 * and memory after an instruction holds what it wrote. */
static void test_timeline(void) {
  tc_error err = {{0}};
  const char *path = pull_trace(".tct");
  tc_timeline *tl = tc_timeline_open(path, NULL, &err);
  tc_trace *t = tc_trace_open(path, NULL, &err);
  CU_ASSERT_FATAL(tl && t);
  const tc_arch *arch = tc_trace_get_info(t)->arch;
  size_t ss = tc_arch_state_size(arch);
  CU_ASSERT_PTR_NULL(tc_timeline_truncated(tl));
  const tc_event *ev;
  uint64_t checked = 0, writes = 0;
  while (tc_trace_next(t, &ev, &err) == 1) {
    if (ev->kind != TC_EV_INSN || ev->u.insn.index % 97)
      continue;
    const tc_insn_event *e = &ev->u.insn;
    uint32_t tid = 0;
    const uint8_t *st = tc_timeline_state(tl, e->index, &tid, &err);
    CU_ASSERT_FATAL(st != NULL);
    CU_ASSERT(memcmp(st, e->state_before, ss) == 0);
    CU_ASSERT_EQUAL(tid, e->tid);
    for (uint32_t m = 0; m < e->nmem; m++) {
      if (e->mem[m].kind != TC_MEM_WRITE || e->mem[m].size > 64)
        continue;
      uint8_t got[64];
      CU_ASSERT_EQUAL(tc_timeline_read(tl, e->index + 1, e->mem[m].addr,
                                       e->mem[m].size, got, &err),
                      (int64_t)e->mem[m].size);
      CU_ASSERT(memcmp(got, e->mem[m].after, e->mem[m].size) == 0);
      writes++;
    }
    checked++;
  }
  CU_ASSERT(checked > 50 && writes > 5);
  uint64_t n = tc_timeline_insns(tl);
  CU_ASSERT_PTR_NOT_NULL(tc_timeline_state(tl, n, NULL, &err));
  CU_ASSERT_PTR_NULL(tc_timeline_state(tl, n + 1, NULL, &err));
  CU_ASSERT(strstr(err.msg, "past the end") != NULL);
  uint8_t b;
  CU_ASSERT_EQUAL(tc_timeline_read(tl, n + 1, 0, 1, &b, &err), -1);
  tc_trace_close(t);
  tc_timeline_free(tl);
  tc_timeline_free(NULL);
}

int main(void) {
  static const tu_case cases[] = {
      {"exports_are_the_map", test_exports_are_the_map},
      {"header_is_the_map", test_header_is_the_map},
      {"header_keeps_internals_out", test_header_keeps_internals_out},
      {"examples_public_only", test_examples_public_only},
      {"arch_accessors", test_arch_accessors},
      {"format_accessors", test_format_accessors},
      {"options_size", test_options_size},
      {"results_size", test_results_size},
      {"pull_reader", test_pull_reader},
      {"timeline", test_timeline},
      {NULL, NULL}};
  return tu_run_suite("api", cases);
}
