/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lib/parallel.h: record -j N (issue 34, docs/speed.md "Recording on
 * several cores"). The program runs once at the engine's speed (the run
 * phase: the recorder only counts instructions; every syscall's effects
 * go to a log); before every `every` instructions the run forks, and the
 * child, holding the CPU, the guest memory and the kernel as they were
 * (copy-on-write), records that segment with every hook, taking each
 * syscall's effects from the log instead of calling the kernel again,
 * into a tct part; the parts join into the one file a single recorder
 * writes, byte for byte. Not installed. */
#ifndef TC_LIB_PARALLEL_H
#define TC_LIB_PARALLEL_H

#include "common/debug_options.h"
#include "emu/engine/emu.h"
#include "lib/session_internal.h"
#include "recorder/recorder.h"
#include "tracecorn/tracecorn.h"

typedef struct tc_par_args {
  tc_emu *emu;
  const tc_trace_info *info;
  const char *path; /* the joined tct file */
  int jobs;         /* segments recorded at once */
  uint64_t every;   /* instructions per segment (the tct chunk size) */
  tc_debug_options debug;
  /* set while the run phase runs (the session stops it on Ctrl-C) */
  tc_recorder **running;
  /* record --log-only (TC_LOG_WRITE: the run only, its log kept in
   * log_path with the recipe the command gives, no trace) or tracecorn
   * materialize (TC_LOG_READ: the run replays log_path instead of calling
   * the kernel; the segments record as usual). */
  int log_mode;
  const char *log_path;
  const void *recipe;
  size_t recipe_len;
} tc_par_args;

/* The recipe a log holds (malloc'd, *n bytes), or NULL with err. */
char *tc_parallel_log_recipe(const char *path, size_t *n, tc_error *err);

/* What record -j N cannot do yet, said in one line (NULL: it can). */
const char *tc_parallel_refusal(const tc_trace_info *info,
                                const tc_options *opt, int jobs);

/* Records the loaded program into a->path. -1 with err set when the
 * recording failed or was refused on the way (the file is then not
 * complete); *res gets the guest's result. */
int tc_parallel_record(const tc_par_args *a, tc_run_result *res, tc_error *err);

#endif
