/* SPDX-License-Identifier: GPL-2.0-or-later */
/* tct version 4: chunks, the footer and seek (docs/formats/tct.md).
 * Recordings with small chunks (-O tct.chunk=N) on several guests and
 * arches: seeking to N gives exactly the events a forward read gives from
 * N (after the maps before N, replayed); the footer's summary equals a
 * full scan; chunks lose nothing; a file cut short, without its trailer,
 * with a corrupt footer or compressed as .zst still reads (a scan). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "evlog.h"
#include "testutil.h"

static const tc_format *tct(void) { return tc_format_by_name("tct"); }

/* Records guest (with arg, may be NULL) to out with extra CLI options. */
static int record(const char *guest, const char *arg, const char *opts,
                  const char *out) {
  char *o = NULL;
  int rc = tu_runf(&o, 1, "%s record -q %s -o %s -- %s %s </dev/null", TC_CLI,
                   opts, out, tu_guest(guest), arg ? arg : "");
  /* the status is the guest's (glibc64 exits 7, sigself32 129); 125: not
   * recorded, 2: a usage error */
  bool ok = rc >= 0 && rc != 125 && rc != 2 && tu_have(out);
  if (!ok)
    fprintf(stderr, "record %s (%d): %s\n", guest, rc, o ? o : "");
  free(o);
  return ok ? 0 : -1;
}

static bool is_map(const tc_event *e) {
  return e->kind == TC_EV_MAP || e->kind == TC_EV_UNMAP ||
         e->kind == TC_EV_PROTECT;
}

/* Seeks a reader of path to n and checks what it yields against the
 * forward log f: the maps before INSN n (without data), a KEYFRAME with
 * the state before it, then f's events from INSN n on, equal (up to an
 * error where the file is cut short). */
static void check_seek_cut(const char *path, const evlog *f, uint64_t n,
                           bool cut) {
  size_t at = 0;
  while (at < f->n &&
         !(f->ev[at].kind == TC_EV_INSN && f->ev[at].u.insn.index == n))
    at++;
  CU_ASSERT_FATAL(at < f->n);
  tc_error err = {{0}};
  tc_reader *r = tct()->open_reader(path, &err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(r);
  int rc = tct()->seek(r, n, &err);
  if (rc != 0)
    fprintf(stderr, "seek %llu: %s\n", (unsigned long long)n, err.msg);
  CU_ASSERT_EQUAL_FATAL(rc, 0);
  evlog s = {f->arch, NULL, 0, 0};
  tc_event ev;
  while ((rc = tct()->next_event(r, &ev, &err)) == 1)
    evlog_sink(&s, &ev, &err);
  CU_ASSERT_EQUAL(rc, cut ? -1 : 0);
  tct()->close_reader(r);
  /* the maps, as the forward read had them before n */
  size_t k = 0;
  for (size_t i = 0; i < at; i++) {
    const tc_event *x = &f->ev[i];
    if (!is_map(x))
      continue;
    CU_ASSERT_FATAL(k < s.n);
    const tc_event *y = &s.ev[k++];
    CU_ASSERT_EQUAL(x->kind, y->kind);
    CU_ASSERT_EQUAL(x->u.map.addr, y->u.map.addr);
    CU_ASSERT_EQUAL(x->u.map.size, y->u.map.size);
    CU_ASSERT_EQUAL(x->u.map.prot, y->u.map.prot);
    if (x->kind == TC_EV_MAP) {
      CU_ASSERT_STRING_EQUAL(x->u.map.name, y->u.map.name);
      CU_ASSERT_EQUAL(x->u.map.file_offset, y->u.map.file_offset);
    }
  }
  CU_ASSERT_FATAL(k < s.n);
  const tc_event *key = &s.ev[k];
  CU_ASSERT_EQUAL_FATAL(key->kind, TC_EV_KEYFRAME);
  CU_ASSERT_EQUAL(key->u.key.insn_index, n);
  CU_ASSERT_EQUAL(key->u.key.tid, f->ev[at].u.insn.tid);
  CU_ASSERT(memcmp(key->u.key.state, f->ev[at].u.insn.state_before,
                   f->arch->state_size) == 0);
  /* then everything from INSN n, as read forward */
  evlog a = {f->arch, f->ev + at, f->n - at, 0};
  evlog b = {f->arch, s.ev + k + 1, s.n - k - 1, 0};
  char why[512] = "";
  if (cut)
    a.n = b.n < a.n ? b.n : a.n + 1; /* a prefix */
  CU_ASSERT_EQUAL(a.n, b.n);
  int eq = evlog_equal(&a, &b, why, sizeof why);
  if (eq != 0)
    fprintf(stderr, "seek %llu: %s\n", (unsigned long long)n, why);
  CU_ASSERT_EQUAL(eq, 0);
  evlog_free(&s);
}

static void check_seek(const char *path, const evlog *f, uint64_t n) {
  check_seek_cut(path, f, n, false);
}

/* The summary a full scan gives: the same file without its trailer. */
static void summary_scan(const char *path, tc_trace_summary *sum) {
  size_t n = 0;
  uint8_t *d = tu_read_file(path, &n);
  CU_ASSERT_FATAL(d && n > 24);
  const char *cut = tu_tmp("notrailer.tct");
  CU_ASSERT_EQUAL_FATAL(tu_write_file(cut, d, n - 24), 0);
  free(d);
  tc_error err = {{0}};
  tc_trace_summary_init(sum);
  CU_ASSERT_EQUAL(tc_trace_summarize(cut, sum, &err), 0);
}

static void check_summary(const char *path) {
  tc_trace_summary a, b;
  tc_error err = {{0}};
  tc_trace_summary_init(&a);
  CU_ASSERT_EQUAL(tc_trace_summarize(path, &a, &err), 0);
  summary_scan(path, &b);
  CU_ASSERT(a.insns > 0);
  CU_ASSERT_EQUAL(a.insns, b.insns);
  CU_ASSERT_EQUAL(a.syscalls, b.syscalls);
  CU_ASSERT_EQUAL(a.maps, b.maps);
  CU_ASSERT_EQUAL(a.faults, b.faults);
  CU_ASSERT_EQUAL(a.keyframes, b.keyframes);
  CU_ASSERT_EQUAL(a.first_pc, b.first_pc);
  CU_ASSERT_EQUAL(a.last_pc, b.last_pc);
  CU_ASSERT_EQUAL(a.have_exit, b.have_exit);
  CU_ASSERT_EQUAL(a.exit_status, b.exit_status);
  CU_ASSERT_STRING_EQUAL(a.exit_message, b.exit_message);
  CU_ASSERT_EQUAL(a.nmodules, b.nmodules);
  CU_ASSERT_EQUAL(a.more_modules, b.more_modules);
  for (int i = 0; i < a.nmodules && i < b.nmodules; i++)
    CU_ASSERT_STRING_EQUAL(a.modules[i], b.modules[i]);
  CU_ASSERT(memcmp(&a, &b, sizeof a) == 0);
}

/* The guests: several arches, static and dynamic, threads, signals. The
 * sanitizer build takes the first three (x86-64, arm64, i386): the reader
 * code is the same for all, and under ASan the full set took 97 s. */
static const struct {
  const char *guest, *arg;
} guests[] = {{"glibc64", NULL},     {"glibc-arm64", NULL},
              {"glibc32", NULL},     {"glibc-armhf", NULL},
              {"glibc-mips", NULL},  {"dyn64", NULL},
              {"sigself32", NULL},   {"loop64", "3000"}};
#define NGUESTS (TC_SANITIZED ? 3 : sizeof guests / sizeof *guests)

static void test_seek_equals_forward(void) {
  for (size_t g = 0; g < NGUESTS; g++) {
    const char *path = tu_tmp("seek.tct");
    if (record(guests[g].guest, guests[g].arg, "-O tct.chunk=7000", path) !=
        0) {
      CU_FAIL("record");
      continue;
    }
    evlog f = {0};
    tc_error err = {{0}};
    CU_ASSERT_EQUAL_FATAL(evlog_read(&f, path, &err), 0);
    uint64_t insns = evlog_count(&f, TC_EV_INSN);
    CU_ASSERT_FATAL(insns > 20000);
    /* chunk edges (the first instructions of chunks 1 and 2, around
     * them), the start, the middle, the end */
    const uint64_t at[] = {0,     1,         6999,      7000,     7001,
                           14000, insns / 2, insns - 2, insns - 1};
    for (size_t i = 0; i < sizeof at / sizeof *at; i++)
      check_seek(path, &f, at[i]);
    /* past the end: an error, nothing else */
    tc_reader *r = tct()->open_reader(path, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    CU_ASSERT_EQUAL(tct()->seek(r, insns + 5, &err), -1);
    CU_ASSERT(strstr(err.msg, "no instruction") != NULL);
    tct()->close_reader(r);
    check_summary(path);
    evlog_free(&f);
  }
}

/* Chunks lose nothing: the same events as one chunk (chunk=0), and the
 * same bytes twice. */
static void test_chunks_lossless(void) {
  for (size_t g = 0; g < NGUESTS; g++) {
    const char *a = tu_tmp("a.tct"), *b = tu_tmp("b.tct"), *c = tu_tmp("c.tct");
    CU_ASSERT_EQUAL_FATAL(
        record(guests[g].guest, guests[g].arg, "-O tct.chunk=5000", a), 0);
    CU_ASSERT_EQUAL_FATAL(
        record(guests[g].guest, guests[g].arg, "-O tct.chunk=5000", b), 0);
    CU_ASSERT_EQUAL_FATAL(
        record(guests[g].guest, guests[g].arg, "-O tct.chunk=0", c), 0);
    CU_ASSERT(tu_same_file(a, b));
    evlog x = {0}, y = {0};
    tc_error err = {{0}};
    CU_ASSERT_EQUAL_FATAL(evlog_read(&x, a, &err), 0);
    CU_ASSERT_EQUAL_FATAL(evlog_read(&y, c, &err), 0);
    char why[512] = "";
    CU_ASSERT_EQUAL(x.n, y.n);
    int eq = evlog_equal(&x, &y, why, sizeof why);
    if (eq)
      fprintf(stderr, "%s: %s\n", guests[g].guest, why);
    CU_ASSERT_EQUAL(eq, 0);
    evlog_free(&x);
    evlog_free(&y);
  }
}

/* The default chunks, info from the footer, and the CLI's dump --from on
 * them. */
static void test_default_and_cli(void) {
  const char *path = tu_tmp("def.tct");
  CU_ASSERT_EQUAL_FATAL(record("loop64", "200000", "", path), 0);
  check_summary(path);
  char *o = NULL;
  CU_ASSERT_EQUAL(
      tu_runf(&o, 1, "%s dump --from 1000000 --count 2 %s", TC_CLI, path), 0);
  CU_ASSERT(o && strstr(o, "\n1000000 ") && strstr(o, "\n1000001 "));
  free(o);
  CU_ASSERT_EQUAL(tu_runf(&o, 1, "%s info %s", TC_CLI, path), 0);
  CU_ASSERT(o && strstr(o, "seekable:     yes"));
  free(o);
  /* names after a seek: the maps before --from are replayed (a chunk's
   * from the footer, the rest read), as when reading from the start */
  const char *d1 = tu_tmp("dyn1.tct"), *d0 = tu_tmp("dyn0.tct");
  CU_ASSERT_EQUAL_FATAL(record("dyn64", NULL, "-O tct.chunk=20000", d1), 0);
  CU_ASSERT_EQUAL_FATAL(record("dyn64", NULL, "-O tct.chunk=0", d0), 0);
  char *o1 = NULL, *o0 = NULL;
  CU_ASSERT_EQUAL(tu_runf(&o1, 1,
                          "%s dump --from 60000 --range puts --count 3 %s",
                          TC_CLI, d1),
                  0);
  CU_ASSERT_EQUAL(tu_runf(&o0, 1,
                          "%s dump --from 60000 --range puts --count 3 %s",
                          TC_CLI, d0),
                  0);
  CU_ASSERT(o1 && o0 && strcmp(o1, o0) == 0);
  int lines = 0;
  for (const char *q = o1 ? o1 : ""; (q = strchr(q, '\n')); q++)
    lines += q[1] >= '6' && q[1] <= '9';
  CU_ASSERT_EQUAL(lines, 3);
  free(o1);
  free(o0);
  /* the records are plain zstd after the 8-byte magic */
  CU_ASSERT_EQUAL(
      tu_runf(&o, 1, "tail -c +9 %s | zstd -dc >/dev/null && echo ok", path),
      0);
  CU_ASSERT(o && strstr(o, "ok"));
  free(o);
}

/* Reads a copy of path changed by fix (bytes, length) and checks that the
 * reader neither crashes nor lies: the events read forward equal f's (or
 * stop at an error), summarize works or fails cleanly, seeks give f's
 * events or an error. */
static void check_damaged(const char *copy, const evlog *f, bool whole) {
  evlog g = {0};
  tc_error err = {{0}};
  int rc = evlog_read(&g, copy, &err);
  if (whole) {
    CU_ASSERT_EQUAL(rc, 0);
    CU_ASSERT_EQUAL(g.n, f->n);
  } else {
    CU_ASSERT_EQUAL(rc, -1);
  }
  char why[512];
  if (g.n && g.n <= f->n) {
    evlog head = {f->arch, f->ev, g.n, 0};
    CU_ASSERT_EQUAL(evlog_equal(&head, &g, why, sizeof why), 0);
  }
  tc_trace_summary s;
  tc_trace_summary_init(&s);
  rc = tc_trace_summarize(copy, &s, &err);
  CU_ASSERT(whole ? rc == 0 : rc == -1);
  uint64_t insns = evlog_count(&g, TC_EV_INSN);
  if (whole) {
    CU_ASSERT_EQUAL(s.insns, insns);
    check_seek(copy, f, insns / 3);
    check_seek(copy, f, insns - 1);
  } else if (insns > 10) {
    check_seek_cut(copy, f, insns / 2, true);
  }
  evlog_free(&g);
}

static void put64(uint8_t *p, uint64_t v) {
  for (int i = 0; i < 8; i++)
    p[i] = (uint8_t)(v >> (8 * i));
}

static void test_damaged(void) {
  const char *path = tu_tmp("dmg.tct"), *copy = tu_tmp("dmg-copy.tct");
  CU_ASSERT_EQUAL_FATAL(record("glibc64", NULL, "-O tct.chunk=7000", path), 0);
  evlog f = {0};
  tc_error err = {{0}};
  CU_ASSERT_EQUAL_FATAL(evlog_read(&f, path, &err), 0);
  size_t n = 0;
  uint8_t *d = tu_read_file(path, &n);
  CU_ASSERT_FATAL(d && n > 1000);
  uint64_t foot = 0;
  for (int i = 7; i >= 0; i--)
    foot = foot << 8 | d[n - 16 + i];
  CU_ASSERT_FATAL(foot > 8 && foot < n - 24);
  uint8_t *m = malloc(n);
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  /* without the trailer, without the footer: a scan */
  CU_ASSERT_EQUAL(tu_write_file(copy, d, n - 24), 0);
  check_damaged(copy, &f, true);
  CU_ASSERT_EQUAL(tu_write_file(copy, d, foot), 0);
  check_damaged(copy, &f, true);
  /* trailer offsets out of range, pointing at the wrong place */
  const uint64_t offs[] = {0, 7,     8,        n - 24,  n - 25,
                           n, ~0ull, foot + 1, foot - 1};
  for (size_t i = 0; i < sizeof offs / sizeof *offs; i++) {
    memcpy(m, d, n);
    put64(m + n - 16, offs[i]);
    CU_ASSERT_EQUAL(tu_write_file(copy, m, n), 0);
    check_damaged(copy, &f, true);
  }
  /* the footer's bytes changed one at a time (its zstd frame fails its
   * checks or says other things: counts, offsets), and its frame size;
   * a sanitizer build (each damaged footer is a full scan there, 30 s in
   * all) changes every third byte, the plain build every one */
  const uint64_t stride = TC_SANITIZED ? 3 : 1;
  for (uint64_t at = foot; at < n - 24; at += stride) {
    for (int v = 0; v < 2; v++) {
      memcpy(m, d, n);
      m[at] ^= v ? 0xff : 0x01;
      CU_ASSERT_EQUAL(tu_write_file(copy, m, n), 0);
      tc_reader *r = tct()->open_reader(copy, &err);
      CU_ASSERT_PTR_NOT_NULL_FATAL(r);
      tc_trace_summary s;
      tc_trace_summary_init(&s);
      CU_ASSERT(tct()->summary(r, &s, &err) >= 0);
      tc_event ev;
      if (tct()->seek(r, 20000, &err) == 0) { /* the right one */
        CU_ASSERT_EQUAL(tct()->next_event(r, &ev, &err), 1);
        while (tct()->next_event(r, &ev, &err) == 1 &&
               ev.kind != TC_EV_KEYFRAME)
          ;
        CU_ASSERT_EQUAL(ev.kind, TC_EV_KEYFRAME);
        CU_ASSERT_EQUAL(ev.u.key.insn_index, 20000);
      }
      tct()->close_reader(r);
    }
  }
  /* cut short: in the middle of the records */
  CU_ASSERT_EQUAL(tu_write_file(copy, d, n / 2), 0);
  check_damaged(copy, &f, false);
  free(m);
  free(d);
  evlog_free(&f);
}

/* A .zst recording (record -z): the footer is inside the compressed
 * stream, which is not seekable: info and seek read it through. */
static void test_zst(void) {
  const char *path = tu_tmp("z.tct.zst");
  CU_ASSERT_EQUAL_FATAL(record("glibc64", NULL, "-O tct.chunk=7000", path), 0);
  evlog f = {0};
  tc_error err = {{0}};
  CU_ASSERT_EQUAL_FATAL(evlog_read(&f, path, &err), 0);
  tc_trace_summary s;
  tc_trace_summary_init(&s);
  CU_ASSERT_EQUAL(tc_trace_summarize(path, &s, &err), 0);
  CU_ASSERT_EQUAL(s.insns, evlog_count(&f, TC_EV_INSN));
  check_seek(path, &f, 5);
  check_seek(path, &f, s.insns - 1);
  evlog_free(&f);
}

int main(void) {
  static const tu_case cases[] = {
      {"seek gives the forward read's events", test_seek_equals_forward},
      {"chunks lose nothing, same bytes twice", test_chunks_lossless},
      {"default chunks, dump --from, info", test_default_and_cli},
      {"damaged footers and files", test_damaged},
      {"tct.zst: scans", test_zst},
      {NULL, NULL}};
  return tu_run_suite("tctseek", cases);
}
