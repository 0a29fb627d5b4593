/* SPDX-License-Identifier: GPL-2.0-or-later */
/* tools/debug_env.h: the TRACECORN_* environment variables that switch
 * the library's speed paths, self-checks and test hooks, mapped onto
 * tc_options and the session's debug switches (lib/session_internal.h;
 * the library itself reads no environment for them). For the tracecorn
 * command and the benchmarks; header-only, not installed.
 *
 *   TRACECORN_WRITER_THREADS=0|1  tc_options.writer_threads OFF | ON
 *                                 (else AUTO)
 *   TRACECORN_REGFILE=off|check   tc_debug_options.regfile
 *   TRACECORN_REGFILE_DEBUG       regfile_debug (set, any value)
 *   TRACECORN_PIPE_CHECK=1        writer_threads_check
 *   TRACECORN_CONTINUOUS=0        not_continuous
 *   TRACECORN_TEST_STALL=NAME     stall_syscall (tests/test_limits.c)
 *   TRACECORN_TEST_CORRUPT_LOG=N  test_corrupt_log (tests/test_parallel.c)
 *   TRACECORN_PAR_RUN_ONLY=1      par_run_only (bench/parallel.sh)
 *   TRACECORN_TEST_EARLY_CHECKPOINT=1  test_early_checkpoint
 *                                 (tests/test_parallel.c)
 *
 * Unknown values leave the default, as the library did when it read
 * them. */
#ifndef TC_TOOLS_DEBUG_ENV_H
#define TC_TOOLS_DEBUG_ENV_H

#include <stdlib.h>
#include <string.h>

#include "common/debug_options.h"
#include "tracecorn/tracecorn.h"

static inline int tc_env_is(const char *name, const char *value) {
  const char *v = getenv(name);
  return v && strcmp(v, value) == 0;
}

/* Sets tc_options.writer_threads in *o (after tc_options_init) from the
 * environment. */
static inline void tc_options_from_env(tc_options *o) {
  if (tc_env_is("TRACECORN_WRITER_THREADS", "0"))
    o->writer_threads = TC_WRITER_THREADS_OFF;
  else if (tc_env_is("TRACECORN_WRITER_THREADS", "1"))
    o->writer_threads = TC_WRITER_THREADS_ON;
}

/* The debug switches the environment asks for (all 0 without it), for
 * tc_session_set_debug. */
static inline tc_debug_options tc_debug_from_env(void) {
  tc_debug_options d;
  memset(&d, 0, sizeof d);
  if (tc_env_is("TRACECORN_REGFILE", "off"))
    d.regfile = TC_REGFILE_OFF;
  else if (tc_env_is("TRACECORN_REGFILE", "check"))
    d.regfile = TC_REGFILE_CHECK;
  if (getenv("TRACECORN_REGFILE_DEBUG"))
    d.regfile_debug = 1;
  if (tc_env_is("TRACECORN_PIPE_CHECK", "1"))
    d.writer_threads_check = 1;
  if (tc_env_is("TRACECORN_CONTINUOUS", "0"))
    d.not_continuous = 1;
  d.stall_syscall = getenv("TRACECORN_TEST_STALL");
  const char *corrupt = getenv("TRACECORN_TEST_CORRUPT_LOG");
  if (corrupt)
    d.test_corrupt_log = strtoull(corrupt, NULL, 10);
  if (tc_env_is("TRACECORN_PAR_RUN_ONLY", "1"))
    d.par_run_only = 1;
  if (tc_env_is("TRACECORN_TEST_EARLY_CHECKPOINT", "1"))
    d.test_early_checkpoint = 1;
  return d;
}

#endif
