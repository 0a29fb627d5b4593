/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The tct writer alone: records a guest's first N instruction events into
 * memory, then replays them into the tct writer ROUNDS times and prints
 * the writer's CPU time per instruction (the calling thread's only: zstd
 * runs on the writer's own worker thread and is left out), after skipping
 * the first SKIP instructions (a glibc program's start-up). No Unicorn, no
 * recorder in the timed loop, so a change to writers/tct/tct.c shows as itself
 * (issue 19; docs/speed.md).
 *   bench_tct [-n N] [-s SKIP] [-r ROUNDS] [-o FILE] [-c] -- PROGRAM [ARGS...]
 * -o keeps the last round's trace (default: written to /dev/null); -c
 * checks the replayed states against whole copies. bench/tct-writer.sh
 * builds it against build/libtracecorn.a and runs the bench guests (not a
 * CMake target yet: it only needs the public API, tc_format_by_name). */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <tracecorn/tracecorn.h>

#include "common/arch.h"
#include "lib/session_internal.h"
#include "tools/debug_env.h"
#include "writers/format.h"

/* The states of the replayed events live in two hot buffers, as they do
 * in the recorder (kept as 200k copies they would stream from DRAM and the
 * writer's 540-byte state compare would measure cache misses): each event
 * keeps the 8-byte words its state_after changes, and a whole
 * state_before only when it is not the previous state_after. */
typedef struct word_diff {
  uint32_t n;
  uint16_t *off; /* 8-byte words at these offsets (the last may overlap) */
  uint64_t *val;
} word_diff;

typedef struct kept {
  tc_event ev;                         /* state pointers set at replay */
  uint8_t *before;                     /* NULL: the previous state_after */
  word_diff after;                     /* state_after against state_before */
  uint8_t *check_before, *check_after; /* whole copies with -c */
} kept;

typedef struct capture {
  const tc_arch *arch;
  size_t ss, max, n;
  uint64_t skip; /* events before this index are not kept */
  kept *ev;
  uint8_t *first_after; /* state_after of event 0 (whole) */
  uint8_t *last_after;  /* scratch: the previous state_after */
  int oom, check;
} capture;

static void *dup_bytes(capture *c, const void *p, size_t n) {
  void *q = malloc(n ? n : 1);
  if (!q) {
    c->oom = 1;
    return NULL;
  }
  if (n)
    memcpy(q, p, n);
  return q;
}

/* Offsets of the 8-byte words covering a state: 0, 8, ... and, when
 * the size is no multiple of 8, one last word ending at its end. */
static size_t word_off(size_t ss, size_t w) {
  return w * 8 + 8 <= ss ? w * 8 : ss - 8;
}

static void diff_make(capture *c, word_diff *d, const uint8_t *from,
                      const uint8_t *to) {
  size_t nw = (c->ss + 7) / 8;
  uint32_t n = 0;
  uint16_t off[1024];
  for (size_t w = 0; w < nw && n < 1024; w++) {
    size_t o = word_off(c->ss, w);
    if (memcmp(from + o, to + o, 8) != 0)
      off[n++] = (uint16_t)o;
  }
  d->n = n;
  d->off = dup_bytes(c, off, n * sizeof *off);
  d->val = malloc((n ? n : 1) * sizeof *d->val);
  if (!d->val) {
    c->oom = 1;
    return;
  }
  for (uint32_t i = 0; i < n; i++)
    memcpy(&d->val[i], to + off[i], 8);
}

static void diff_apply(const word_diff *d, uint8_t *s) {
  for (uint32_t i = 0; i < d->n; i++)
    memcpy(s + d->off[i], &d->val[i], 8);
}

static int keep(void *ctx, const tc_event *ev, tc_error *err) {
  (void)err;
  capture *c = ctx;
  if (ev->kind != TC_EV_INSN || ev->u.insn.index < c->skip || c->n >= c->max ||
      c->oom)
    return 0;
  const tc_insn_event *e = &ev->u.insn;
  kept *k = &c->ev[c->n];
  k->ev = *ev;
  tc_insn_event *o = &k->ev.u.insn;
  o->regs = dup_bytes(c, e->regs, e->nregs * sizeof *e->regs);
  o->state_before = o->state_after = NULL;
  k->before = c->n && memcmp(c->last_after, e->state_before, c->ss) == 0
                  ? NULL
                  : dup_bytes(c, e->state_before, c->ss);
  diff_make(c, &k->after, e->state_before, e->state_after);
  if (c->n == 0)
    c->first_after = dup_bytes(c, e->state_after, c->ss);
  memcpy(c->last_after, e->state_after, c->ss);
  if (c->check) {
    k->check_before = dup_bytes(c, e->state_before, c->ss);
    k->check_after = dup_bytes(c, e->state_after, c->ss);
  }
  tc_mem_access *m = dup_bytes(c, e->mem, e->nmem * sizeof *e->mem);
  for (uint32_t i = 0; m && i < e->nmem; i++) {
    m[i].before = dup_bytes(c, e->mem[i].before, e->mem[i].size);
    m[i].after = dup_bytes(c, e->mem[i].after, e->mem[i].size);
  }
  o->mem = m;
  c->n++;
  return 0;
}

/* Writes every kept event; the states go through two hot buffers. */
__attribute__((noinline)) static int replay(const capture *c,
                                            const tc_format *fmt, tc_writer *w,
                                            uint8_t *hot[2], tc_error *err) {
  size_t ss = c->ss;
  int b = 0; /* hot[b]: state_before, hot[!b]: state_after */
  memcpy(hot[0], c->ev[0].before, ss);
  memcpy(hot[1], c->first_after, ss);
  for (size_t k = 0; k < c->n; k++) {
    const kept *e = &c->ev[k];
    if (k > 0) {
      /* hot[b] holds before(k-1), hot[!b] after(k-1) */
      const kept *p = &c->ev[k - 1];
      diff_apply(&p->after, hot[b]); /* now after(k-1) */
      if (e->before) {
        memcpy(hot[b], e->before, ss);
        memcpy(hot[!b], e->before, ss);
      }
      diff_apply(&e->after, hot[b]); /* after(k) */
      b = !b;
    }
    if (c->check && (memcmp(hot[b], e->check_before, ss) != 0 ||
                     memcmp(hot[!b], e->check_after, ss) != 0)) {
      tc_error_set(err, "replayed states differ at event %zu", k);
      return -1;
    }
    tc_event ev = e->ev;
    ev.u.insn.state_before = hot[b];
    ev.u.insn.state_after = hot[!b];
    if (fmt->write_event(w, &ev, err) < 0)
      return -1;
  }
  return 0;
}

static double thread_seconds(void) {
  struct timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
  size_t max = 200000;
  int rounds = 5;
  const char *out_path = "/dev/null";
  int check = 0;
  uint64_t skip = 0;
  int i = 1;
  for (; i < argc && strcmp(argv[i], "--") != 0; i++) {
    if (strcmp(argv[i], "-n") == 0 && i + 1 < argc)
      max = strtoull(argv[++i], NULL, 10);
    else if (strcmp(argv[i], "-r") == 0 && i + 1 < argc)
      rounds = atoi(argv[++i]);
    else if (strcmp(argv[i], "-o") == 0 && i + 1 < argc)
      out_path = argv[++i];
    else if (strcmp(argv[i], "-s") == 0 && i + 1 < argc)
      skip = strtoull(argv[++i], NULL, 10);
    else if (strcmp(argv[i], "-c") == 0)
      check = 1;
    else
      break;
  }
  if (i + 1 >= argc || strcmp(argv[i], "--") != 0 || rounds < 1 ||
      rounds > 99 || max == 0) {
    fprintf(stderr,
            "usage: %s [-n N] [-s SKIP] [-r ROUNDS] [-o FILE] [-c] -- PROGRAM "
            "[ARGS...]\n",
            argv[0]);
    return 2;
  }
  const char *av[64];
  int nav = 0;
  for (i++; i < argc && nav < 63; i++)
    av[nav++] = argv[i];
  av[nav] = NULL;

  tc_options o;
  tc_options_init(&o);
  tc_options_from_env(&o); /* TRACECORN_* */
  o.quiet = 1;
  o.record_memory = 1;
  o.max_insns = skip + max;
  o.stdout_fd = open("/dev/null", O_WRONLY);
  tc_error err = {{0}};
  tc_session *s = tc_session_new(&o, &err);
  tc_debug_options dbg = tc_debug_from_env();
  if (s)
    tc_session_set_debug(s, &dbg);
  capture c = {0};
  c.max = max;
  c.check = check;
  c.skip = skip;
  c.ev = calloc(max, sizeof *c.ev);
  if (!s || !c.ev || tc_session_load_elf(s, av[0], av, &err) ||
      tc_session_add_sink(s, keep, &c, &err)) {
    fprintf(stderr, "bench_tct: %s\n", err.msg[0] ? err.msg : "out of memory");
    return 1;
  }
  c.arch = tc_session_info(s)->arch;
  c.ss = c.arch->state_size;
  if (c.ss < 8 || c.ss > 65535) {
    fprintf(stderr, "bench_tct: state size %zu out of range\n", c.ss);
    return 1;
  }
  c.last_after = malloc(c.ss);
  uint8_t *hot[2] = {aligned_alloc(64, (c.ss + 63) / 64 * 64),
                     aligned_alloc(64, (c.ss + 63) / 64 * 64)};
  if (!c.last_after || !hot[0] || !hot[1]) {
    fprintf(stderr, "bench_tct: out of memory\n");
    return 1;
  }
  tc_run_result res;
  tc_run_result_init(&res);
  if (tc_session_run(s, &res, &err) && c.n < max) {
    fprintf(stderr, "bench_tct: %s\n", err.msg);
    return 1;
  }
  if (c.oom || c.n == 0) {
    fprintf(stderr, "bench_tct: out of memory keeping %zu events\n", c.n);
    return 1;
  }
  const tc_format *tct = tc_format_by_name("tct");
  double t[100];
  for (int r = 0; r < rounds; r++) {
    tc_writer *w = tct->open_writer(out_path, tc_session_info(s), &err);
    if (!w) {
      fprintf(stderr, "bench_tct: %s\n", err.msg);
      return 1;
    }
    double t0 = thread_seconds();
    if (replay(&c, tct, w, hot, &err) < 0) {
      fprintf(stderr, "bench_tct: %s\n", err.msg);
      return 1;
    }
    t[r] = thread_seconds() - t0;
    if (tct->close_writer(w, &err) < 0) {
      fprintf(stderr, "bench_tct: %s\n", err.msg);
      return 1;
    }
  }
  qsort(t, (size_t)rounds, sizeof *t, cmp_double);
  printf("%-28s %8zu insns  writer ns/insn: min %6.1f  median %6.1f\n", av[0],
         c.n, t[0] / (double)c.n * 1e9, t[rounds / 2] / (double)c.n * 1e9);
  tc_session_free(s);
  return 0;
}
