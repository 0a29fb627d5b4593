/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Switches for the speed paths' self-checks and for tests: not public API
 * (docs/api.md, "Debug switches"). The tracecorn command sets them from
 * the TRACECORN_* variables (tools/debug_env.h), tests through
 * lib/session_internal.h; the library reads no environment for them. All
 * 0 = the defaults. */
#ifndef TC_COMMON_DEBUG_OPTIONS_H
#define TC_COMMON_DEBUG_OPTIONS_H

/* tc_debug_options.regfile */
enum { TC_REGFILE_ON = 0, TC_REGFILE_OFF = 1, TC_REGFILE_CHECK = 2 };

typedef struct tc_debug_options {
  /* Direct register reads (emu/engine/regfile.h): TC_REGFILE_ON reads the
   * registers it finds in the engine's memory straight from there;
   * TC_REGFILE_OFF reads every register through Unicorn's API
   * (TRACECORN_REGFILE=off); TC_REGFILE_CHECK does both and aborts at the
   * first difference (=check). */
  int regfile;
  /* Says on stderr how many registers are read directly, once per
   * process (TRACECORN_REGFILE_DEBUG set). */
  int regfile_debug;
  /* Writer threads (lib/pipe.h) also get every state whole and abort if
   * one they rebuilt differs (TRACECORN_PIPE_CHECK=1). */
  int writer_threads_check;
  /* Tells the writers the stream is not continuous
   * (tc_trace_info.continuous = 0), so those that rely on it compare
   * whole states instead, as for a converted stream: slower, same bytes
   * (TRACECORN_CONTINUOUS=0). */
  int not_continuous;
  /* Test hook (tests/test_limits.c): the syscall of this name never
   * returns, as a stall inside the engine would, so the watchdog that
   * abandons such an engine is tested for real
   * (TRACECORN_TEST_STALL=NAME). */
  const char *stall_syscall;
  /* Test hook (tests/test_parallel.c): record -j N's run phase writes
   * its Nth syscall record (1-based) with the instruction index off by
   * one, so the replay's divergence check is tested for real
   * (TRACECORN_TEST_CORRUPT_LOG=N). */
  unsigned long long test_corrupt_log;
  /* Benchmark hook (bench/parallel.sh): record -j N runs its run phase
   * only (no checkpoint, no segment) and writes no trace, so the run
   * phase's speed can be set against the bare engine
   * (TRACECORN_PAR_RUN_ONLY=1). */
  int par_run_only;
  /* Test hook (tests/test_parallel.c): on arm64 (no delay slot, no IT
   * block: a stop is safe anywhere) record -j N's run phase takes every
   * checkpoint one instruction early, as a delay slot or an IT block
   * makes it, so the segments begun early are tested on any code
   * (TRACECORN_TEST_EARLY_CHECKPOINT=1). */
  int test_early_checkpoint;
} tc_debug_options;

#endif
