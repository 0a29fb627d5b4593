/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lib/pipe.c, the writer threads' queue: consumers rebuild exactly the
 * states pushed (every register changed at once included), a queue that
 * cannot take an event says so, and a session whose queue runs out of
 * memory stops with an error and keeps every event up to there in every
 * file. The tc_options that replace the TRACECORN_* variables change no
 * byte. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "evlog.h"
#include "lib/pipe.h"
#include "lib/session_internal.h"
#include "testutil.h"

/* ------------------------------------------------------ the queue alone */

/* FNV-1a over a state pair: what a consumer saw of one instruction. */
static uint64_t fnv(uint64_t h, const uint8_t *p, size_t n) {
  for (size_t i = 0; i < n; i++)
    h = (h ^ p[i]) * 0x100000001b3ull;
  return h;
}

typedef struct seen {
  const tc_arch *arch;
  uint64_t *insn_hash; /* per instruction index */
  size_t ninsns, nkeys, nexits, bad_regs;
} seen;

static void consume(void *ctx, const tc_event *ev) {
  seen *s = ctx;
  if (ev->kind == TC_EV_KEYFRAME)
    s->nkeys++;
  if (ev->kind == TC_EV_EXIT)
    s->nexits++;
  if (ev->kind != TC_EV_INSN)
    return;
  const tc_insn_event *e = &ev->u.insn;
  size_t ss = s->arch->state_size;
  uint64_t h = fnv(0xcbf29ce484222325ull, e->state_before, ss);
  h = fnv(h, e->state_after, ss);
  h = fnv(h, (const uint8_t *)e->regs, 2 * (size_t)e->nregs);
  s->insn_hash[e->index] = h;
  s->ninsns++;
}

enum { SYN_INSNS = 3000 };

/* Pushes a KEYFRAME and SYN_INSNS instructions that each change random
 * registers (all of them every 100th) through a pipe with two consumers;
 * both see every state as pushed. */
static void synthetic_run(tc_arch_id id, bool check) {
  const tc_arch *a = tc_arch_by_id(id);
  CU_ASSERT_PTR_NOT_NULL_FATAL(a);
  size_t ss = a->state_size;
  uint8_t *before = calloc(1, ss), *after = calloc(1, ss);
  uint16_t *regs = calloc(a->nregs, sizeof *regs);
  uint64_t *want = calloc(SYN_INSNS, sizeof *want);
  seen s[2] = {{a, calloc(SYN_INSNS, 8), 0, 0, 0, 0},
               {a, calloc(SYN_INSNS, 8), 0, 0, 0, 0}};
  tc_pipe_consumer fns[2] = {consume, consume};
  void *ctxs[2] = {&s[0], &s[1]};
  tc_error err = {{0}};
  tc_pipe *p = tc_pipe_new(a, 2, fns, ctxs, check, &err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(p);
  uint64_t rng = 0x5eed ^ id;
  for (size_t i = 0; i < ss; i++)
    before[i] = (uint8_t)tu_xorshift(&rng);
  tc_event key = {.kind = TC_EV_KEYFRAME};
  key.u.key.state = before;
  CU_ASSERT_EQUAL(tc_pipe_push(p, &key, &err), 0);
  for (uint64_t n = 0; n < SYN_INSNS; n++) {
    memcpy(after, before, ss);
    int nregs = 0;
    for (int r = 0; r < a->nregs; r++) /* ascending, as the recorder lists */
      if (n % 100 == 99 || tu_xorshift(&rng) % 8 == 0) {
        const tc_reg_info *ri = &a->regs[r];
        for (uint32_t k = 0; k < ri->size; k++)
          after[ri->offset + k] = (uint8_t)tu_xorshift(&rng);
        regs[nregs++] = (uint16_t)r;
      }
    tc_event ev = {.kind = TC_EV_INSN};
    ev.u.insn = (tc_insn_event){.index = n,
                                .pc = 0x1000 + 4 * n,
                                .size = 4,
                                .nregs = (uint16_t)nregs,
                                .regs = regs,
                                .state_before = before,
                                .state_after = after};
    uint64_t h = fnv(0xcbf29ce484222325ull, before, ss);
    h = fnv(h, after, ss);
    want[n] = fnv(h, (const uint8_t *)regs, 2 * (size_t)nregs);
    CU_ASSERT_EQUAL(tc_pipe_push(p, &ev, &err), 0);
    memcpy(before, after, ss);
  }
  tc_event x = {.kind = TC_EV_EXIT};
  x.u.exit.reason = TC_EXIT_EXITED;
  CU_ASSERT_EQUAL(tc_pipe_push(p, &x, &err), 0);
  tc_pipe_close(p);
  for (int c = 0; c < 2; c++) {
    CU_ASSERT_EQUAL(s[c].nkeys, 1);
    CU_ASSERT_EQUAL(s[c].nexits, 1);
    CU_ASSERT_EQUAL(s[c].ninsns, SYN_INSNS);
    CU_ASSERT_EQUAL(memcmp(s[c].insn_hash, want, SYN_INSNS * 8), 0);
    free(s[c].insn_hash);
  }
  free(before);
  free(after);
  free(regs);
  free(want);
}

static void test_rebuilt_states(void) {
  synthetic_run(TC_ARCH_X86_64, false);
  synthetic_run(TC_ARCH_ARM64, true); /* the arch with the most registers */
  synthetic_run(TC_ARCH_MIPS, false);
}

/* An event the queue cannot take is refused whole, with a message; what
 * was queued before still reaches the consumer. */
static void test_refused_events(void) {
  const tc_arch *a = tc_arch_by_id(TC_ARCH_X86_64);
  size_t ss = a->state_size;
  uint8_t *state = calloc(1, ss);
  uint16_t regs[1024];
  for (int i = 0; i < 1024; i++)
    regs[i] = (uint16_t)(i % a->nregs);
  seen s = {a, calloc(4, 8), 0, 0, 0, 0};
  tc_pipe_consumer fn = consume;
  void *ctx = &s;
  tc_error err = {{0}};
  tc_pipe *p = tc_pipe_new(a, 1, &fn, &ctx, false, &err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(p);
  tc_event key = {.kind = TC_EV_KEYFRAME};
  key.u.key.state = state;
  CU_ASSERT_EQUAL(tc_pipe_push(p, &key, &err), 0);
  tc_event ev = {.kind = TC_EV_INSN};
  ev.u.insn = (tc_insn_event){.index = 0,
                              .size = 1,
                              .nregs = (uint16_t)(a->nregs + 1),
                              .regs = regs,
                              .state_before = state,
                              .state_after = state};
  CU_ASSERT_EQUAL(tc_pipe_push(p, &ev, &err), -1);
  char want[64];
  snprintf(want, sizeof want, "more than the %d of x86_64", a->nregs);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, want));
  /* out of memory: the block in hand is full, no other can be had */
  tc_pipe_test_limit_blocks(0);
  uint8_t *big = calloc(1, 300 << 10);
  tc_event map = {.kind = TC_EV_MAP};
  map.u.map.addr = 0x10000;
  map.u.map.size = 300 << 10;
  map.u.map.data = big;
  err.msg[0] = 0;
  CU_ASSERT_EQUAL(tc_pipe_push(p, &map, &err), -1);
  CU_ASSERT_STRING_EQUAL(err.msg, "out of memory queueing trace events");
  tc_pipe_test_limit_blocks(-1);
  CU_ASSERT_EQUAL(tc_pipe_close(p), 0); /* no consumer failed */
  CU_ASSERT_EQUAL(s.nkeys, 1);          /* queued before: delivered */
  CU_ASSERT_EQUAL(s.ninsns, 0);
  free(big);
  free(state);
  free(s.insn_hash);
}

/* A consumer that runs out of memory takes no more events, the others go
 * on, and closing says which failed. */
static void test_consumer_out_of_memory(void) {
  const tc_arch *a = tc_arch_by_id(TC_ARCH_X86_64);
  uint8_t *state = calloc(1, a->state_size);
  seen s[2] = {{a, calloc(4, 8), 0, 0, 0, 0}, {a, calloc(4, 8), 0, 0, 0, 0}};
  tc_pipe_consumer fns[2] = {consume, consume};
  void *ctxs[2] = {&s[0], &s[1]};
  tc_error err = {{0}};
  tc_pipe *p = tc_pipe_new(a, 2, fns, ctxs, false, &err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(p);
  /* one consumer allocation left: the first to need one gets it */
  tc_pipe_test_limit_consumer_allocs(1);
  tc_event key = {.kind = TC_EV_KEYFRAME};
  key.u.key.state = state;
  CU_ASSERT_EQUAL(tc_pipe_push(p, &key, &err), 0);
  uint8_t bytes[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  tc_mem_access m = {0x1000, 8, TC_MEM_READ, bytes, bytes};
  tc_event ev = {.kind = TC_EV_INSN};
  ev.u.insn = (tc_insn_event){.size = 1,
                              .state_before = state,
                              .state_after = state,
                              .nmem = 1,
                              .mem = &m};
  CU_ASSERT_EQUAL(tc_pipe_push(p, &ev, &err), 0);
  tc_event x = {.kind = TC_EV_EXIT};
  CU_ASSERT_EQUAL(tc_pipe_push(p, &x, &err), 0);
  int failed = tc_pipe_close(p);
  tc_pipe_test_limit_consumer_allocs(-1);
  CU_ASSERT(failed == 1 || failed == 2);
  int bad = failed == 1 ? 0 : 1;
  CU_ASSERT_EQUAL(s[bad].nkeys, 1);
  CU_ASSERT_EQUAL(s[bad].ninsns + s[bad].nexits, 0);
  CU_ASSERT_EQUAL(s[!bad].ninsns, 1);
  CU_ASSERT_EQUAL(s[!bad].nexits, 1);
  free(state);
  free(s[0].insn_hash);
  free(s[1].insn_hash);
}

/* ------------------------------------------------------ in a session */

/* Lines of path that start with prefix; the last line in last. */
static size_t count_lines(const char *path, const char *prefix, char *last,
                          size_t max) {
  FILE *f = fopen(path, "r");
  if (!f)
    return 0;
  size_t n = 0, plen = strlen(prefix), cap = 0;
  char *line = NULL;
  ssize_t len;
  while ((len = getline(&line, &cap, f)) >= 0) {
    n += strncmp(line, prefix, plen) == 0;
    size_t keep = (size_t)len < max ? (size_t)len : max - 1;
    memcpy(last, line, keep);
    last[keep] = 0;
  }
  free(line);
  fclose(f);
  return n;
}

/* The queue runs out of memory after four blocks:
 * the recording stops there with an error (status 125, the session's
 * error and every file's EXIT say why), and the files written by writer
 * threads and on the recording thread hold the same events, every one
 * up to the stop. */
static void out_of_memory_session(bool in_consumer) {
  tc_options o;
  tc_options_init(&o);
  o.quiet = 1;
  o.stdout_fd = open("/dev/null", O_WRONLY);
  o.writer_threads = TC_WRITER_THREADS_ON; /* even on one CPU */
  char tct[4200], trac[4200], json[4200];
  const char *label = in_consumer ? "oom-consumer" : "oom-queue";
  snprintf(tct, sizeof tct, "%s.tct", tu_tmp(label));
  snprintf(trac, sizeof trac, "%s.trace64", tu_tmp(label));
  snprintf(json, sizeof json, "%s.jsonl", tu_tmp(label));
  tc_session *s = tc_session_new(&o, NULL);
  const char *argv[] = {tu_guest("kernels64"), "qsort", "20000", NULL};
  tc_error err = {{0}};
  evlog sink = {0};
  CU_ASSERT_PTR_NOT_NULL_FATAL(s);
  CU_ASSERT_EQUAL_FATAL(tc_session_load_elf(s, argv[0], argv, &err), 0);
  sink.arch = tc_session_info(s)->arch;
  CU_ASSERT_EQUAL(tc_session_add_writer(s, tc_format_by_name("tct"), tct, &err),
                  0);
  CU_ASSERT_EQUAL(
      tc_session_add_writer(s, tc_format_by_name("trac"), trac, &err), 0);
  CU_ASSERT_EQUAL(
      tc_session_add_writer(s, tc_format_by_name("json"), json, &err), 0);
  CU_ASSERT_EQUAL(tc_session_add_sink(s, evlog_sink, &sink, &err), 0);
  if (in_consumer)
    tc_pipe_test_limit_consumer_allocs(0);
  else
    tc_pipe_test_limit_blocks(4);
  tc_run_result res;
  tc_run_result_init(&res);
  int rc = tc_session_run(s, &res, &err);
  tc_pipe_test_limit_blocks(-1);
  tc_pipe_test_limit_consumer_allocs(-1);
  const char *why = in_consumer ? "out of memory in a trace writer thread"
                                : "out of memory queueing";
  CU_ASSERT_EQUAL(rc, -1);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, why));
  CU_ASSERT_EQUAL(res.reason, TC_EXIT_ERROR);
  CU_ASSERT_EQUAL(res.status, 125);
  /* stopped early (queue: ~8500 instructions, the first blocks hold the
   * initial maps' bytes); the whole run is ~5 M instructions */
  CU_ASSERT(res.insns < 1000000);
  if (!in_consumer)
    CU_ASSERT(res.insns > 1000);
  /* the files are complete up to the stop, but those of writer threads
   * that missed events */
  CU_ASSERT_TRUE(tc_session_output_ok(s, tct));
  CU_ASSERT_EQUAL(tc_session_output_ok(s, trac), !in_consumer);
  CU_ASSERT_EQUAL(tc_session_output_ok(s, json), !in_consumer);
  tc_session_free(s);
  close(o.stdout_fd);

  size_t ninsns = evlog_count(&sink, TC_EV_INSN);
  CU_ASSERT_EQUAL(ninsns, res.insns);
  CU_ASSERT_TRUE_FATAL(sink.n > 0);
  const tc_event *x = &sink.ev[sink.n - 1];
  CU_ASSERT_EQUAL(x->kind, TC_EV_EXIT);
  CU_ASSERT_EQUAL(x->u.exit.reason, TC_EXIT_ERROR);
  CU_ASSERT_EQUAL(x->u.exit.status, 125);
  CU_ASSERT(x->u.exit.message && strstr(x->u.exit.message, why));
  /* tct (the recording thread) holds exactly what the sink saw */
  evlog back = {0};
  char differs[256] = "";
  CU_ASSERT_EQUAL(evlog_read(&back, tct, &err), 0);
  CU_ASSERT_EQUAL(evlog_equal(&sink, &back, differs, sizeof differs), 0);
  evlog_free(&back);
  if (in_consumer) { /* trac and json are partial, kept as such */
    evlog_free(&sink);
    return;
  }
  /* trac and json (writer threads, then the recording thread) too */
  memset(&back, 0, sizeof back);
  CU_ASSERT_EQUAL(evlog_read(&back, trac, &err), 0);
  CU_ASSERT_EQUAL(evlog_count(&back, TC_EV_INSN), ninsns);
  evlog_free(&back);
  char last[4096] = "";
  CU_ASSERT_EQUAL(count_lines(json, "{\"type\":\"insn\"", last, sizeof last),
                  ninsns);
  CU_ASSERT_PTR_NOT_NULL(strstr(last, "\"type\":\"exit\""));
  CU_ASSERT_PTR_NOT_NULL(strstr(last, why));
  evlog_free(&sink);
}

static void test_queue_out_of_memory(void) { out_of_memory_session(false); }

/* A writer thread out of memory: its file failed (kept partial), the
 * recording stops as above, the other files are complete. */
static void test_writer_thread_out_of_memory(void) {
  out_of_memory_session(true);
}

/* What `tracecorn record` prints on stderr with environment ENV
 * (recording hello64 to trac under the temporary name NAME); "" if it
 * failed (asserted). */
static char *cli_stderr(const char *env, const char *name) {
  char *out = NULL;
  char cmd[8192];
  snprintf(cmd, sizeof cmd,
           "%s %s record -q -f trac -o %s -- %s 2>&1 >/dev/null", env, TC_CLI,
           tu_tmp(name), tu_guest("hello64"));
  CU_ASSERT_EQUAL(tu_run(cmd, &out, 0), 0);
  return out ? out : strdup("");
}

/* The command maps the TRACECORN_* variables onto the options and debug
 * switches (the library reads none): the regfile's debug line comes and goes
 * with them (test_record runs the others). */
static void test_cli_environment(void) {
  char *out = cli_stderr("TRACECORN_REGFILE_DEBUG=1", "env-on");
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "registers direct"));
  free(out);
  /* off: no regfile, so nothing to say */
  out =
      cli_stderr("TRACECORN_REGFILE=off TRACECORN_REGFILE_DEBUG=1", "env-off");
  CU_ASSERT_PTR_NULL(strstr(out, "registers direct"));
  free(out);
}

/* The switches that were environment variables, through the library's
 * options and private debug interface: the fast paths with their checks
 * and the slow paths give the same files. */
static void test_options_same_bytes(void) {
  const char *guests[] = {"glibc64", "glibc-arm64", "sigthread-64"};
  for (size_t g = 0; g < 3; g++) {
    char paths[2][2][4200];
    for (int fast = 0; fast < 2; fast++) {
      tc_options o;
      tc_options_init(&o);
      o.quiet = 1;
      o.stdout_fd = open("/dev/null", O_WRONLY);
      o.writer_threads = fast ? TC_WRITER_THREADS_ON : TC_WRITER_THREADS_OFF;
      tc_debug_options dbg = {0};
      dbg.regfile = fast ? TC_REGFILE_CHECK : TC_REGFILE_OFF;
      dbg.writer_threads_check = fast;
      dbg.not_continuous = !fast;
      char label[64];
      snprintf(label, sizeof label, "opt-%s-%d", guests[g], fast);
      snprintf(paths[fast][0], sizeof paths[fast][0], "%s.ucir", tu_tmp(label));
      snprintf(paths[fast][1], sizeof paths[fast][1], "%s.txt", tu_tmp(label));
      tc_session *s = tc_session_new(&o, NULL);
      tc_session_set_debug(s, &dbg);
      const char *argv[] = {tu_guest(guests[g]), NULL};
      tc_error err = {{0}};
      CU_ASSERT_EQUAL_FATAL(tc_session_load_elf(s, argv[0], argv, &err), 0);
      CU_ASSERT_EQUAL(tc_session_add_writer(s, tc_format_by_name("ucir"),
                                            paths[fast][0], &err),
                      0);
      CU_ASSERT_EQUAL(tc_session_add_writer(s, tc_format_by_name("text"),
                                            paths[fast][1], &err),
                      0);
      tc_run_result res;
      tc_run_result_init(&res);
      CU_ASSERT_EQUAL(tc_session_run(s, &res, &err), 0);
      CU_ASSERT(res.insns > 1000);
      tc_session_free(s);
      close(o.stdout_fd);
    }
    for (int f = 0; f < 2; f++)
      CU_ASSERT_TRUE(tu_same_file(paths[0][f], paths[1][f]));
  }
}

int main(void) {
  static const tu_case cases[] = {
      {"consumers rebuild every pushed state", test_rebuilt_states},
      {"an event the queue cannot take is refused", test_refused_events},
      {"a consumer out of memory", test_consumer_out_of_memory},
      {"out of memory in the queue fails the recording, keeps the files",
       test_queue_out_of_memory},
      {"out of memory in a writer thread fails it and the recording",
       test_writer_thread_out_of_memory},
      {"the command maps TRACECORN_* onto the options", test_cli_environment},
      {"speed-path options change no byte", test_options_same_bytes},
      {NULL, NULL}};
  return tu_run_suite("pipe", cases);
}
