/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lib/session_internal.h: what the tracecorn command, the benchmarks and
 * the tests may ask of a session beyond the public API: the debug
 * switches (common/debug_options.h), which are not tc_options fields so
 * that the public struct carries no test knobs. Not installed. */
#ifndef TC_LIB_SESSION_INTERNAL_H
#define TC_LIB_SESSION_INTERNAL_H

#include <stddef.h>

#include "common/debug_options.h"
#include "tracecorn/tracecorn.h"

/* Gives the session, and every process of its run, these switches (a
 * copy; its strings must outlive the session). Call it before
 * tc_session_load_elf / tc_session_load_raw. */
void tc_session_set_debug(tc_session *s, const tc_debug_options *debug);

/* record -j N (lib/parallel.h, docs/speed.md): N > 1 records the
 * program in segments on N processes; what it does not cover yet is
 * refused by tc_session_run with one line. Before tc_session_run. */
void tc_session_set_jobs(tc_session *s, int jobs);
/* tc_session_set_log's modes */
enum { TC_LOG_NONE = 0, TC_LOG_WRITE, TC_LOG_READ };
/* record --log-only (mode TC_LOG_WRITE: the run alone,
 * its log written to path with the recipe, no trace) and tracecorn
 * materialize (TC_LOG_READ: the program loaded as the recipe says is
 * replayed from the log at path, its trace recorded in segments). 0, or
 * -1 out of memory. */
int tc_session_set_log(tc_session *s, int mode, const char *path,
                       const void *recipe, size_t n);
/* The recipe a log holds (malloc'd, NUL-terminated, *n bytes without the
 * NUL), or NULL with err. */
char *tc_session_log_recipe(const char *path, size_t *n, tc_error *err);

#endif
