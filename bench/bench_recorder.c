/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The recorder alone (no trace format): instructions per second into an
 * event sink that does nothing, so the cost of hooks, register reads and
 * the delta encoder is measured apart from encoding and I/O.
 * Usage: bench_recorder PROGRAM [ARGS...] [--memory] [--exact] */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <tracecorn/tracecorn.h>

#include "lib/session_internal.h"
#include "tools/debug_env.h"

static int discard(void *ctx, const tc_event *ev, tc_error *err) {
  (void)ctx, (void)ev, (void)err;
  return 0;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s PROGRAM [ARGS...] [--memory] [--exact]\n",
            argv[0]);
    return 2;
  }
  tc_options o;
  tc_options_init(&o);
  tc_options_from_env(&o); /* TRACECORN_* */
  o.quiet = 1;
  o.record_memory = 0;
  const char *av[64] = {argv[1]};
  int nav = 1;
  for (int i = 2; i < argc; i++) {
    if (strcmp(argv[i], "--memory") == 0)
      o.record_memory = 1;
    else if (strcmp(argv[i], "--exact") == 0)
      o.exact = 1;
    else if (nav < 63)
      av[nav++] = argv[i];
  }
  o.stdout_fd = open("/dev/null", O_WRONLY);
  tc_error err = {{0}};
  tc_session *s = tc_session_new(&o, &err);
  tc_debug_options dbg = tc_debug_from_env();
  if (s)
    tc_session_set_debug(s, &dbg);
  if (!s || tc_session_load_elf(s, av[0], av, &err) ||
      tc_session_add_sink(s, discard, NULL, &err)) {
    fprintf(stderr, "bench_recorder: %s\n", err.msg);
    return 1;
  }
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  tc_run_result res;
  tc_run_result_init(&res);
  if (tc_session_run(s, &res, &err)) {
    fprintf(stderr, "bench_recorder: %s\n", err.msg);
    return 1;
  }
  clock_gettime(CLOCK_MONOTONIC, &t1);
  double t = (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
  printf("%llu instructions in %.3f s: %.2f M insn/s, %.0f ns/insn\n",
         (unsigned long long)res.insns, t, res.insns / t / 1e6,
         t / (double)res.insns * 1e9);
  tc_session_free(s);
  return 0;
}
