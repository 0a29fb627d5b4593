/* What dump selects (issue 32): the memory and register filters, the
 * window's end, the last records, and who last wrote a byte, on a guest
 * that plants one (examples/guests/plant.c). */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

int main(void) {
  static const tu_case cases[] = {
      {"who last wrote a byte (--mem --writes --to --last)", test_last_writer},
      {"a syscall's kernel writes count as its instruction's",
       test_kernel_writer},
      {"--reg", test_reg},
      {"--to and --last", test_window_end},
      {"--json sym field", test_json_sym},
      {"bad selection values", test_bad_values},
      {NULL, NULL}};
  return tu_run_suite("select", cases);
}
