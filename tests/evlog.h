/* SPDX-License-Identifier: GPL-2.0-or-later */
/* An in-memory copy of an event stream, for comparing recordings. */
#ifndef TC_EVLOG_H
#define TC_EVLOG_H

#include "common/arch.h"
#include "tracecorn/tracecorn.h"
#include "writers/format.h"

typedef struct evlog {
  const tc_arch *arch;
  tc_event *ev; /* deep copies: every pointer owned by the log */
  size_t n, cap;
} evlog;

/* A tc_event_sink that appends a deep copy to the evlog in ctx. */
int evlog_sink(void *ctx, const tc_event *ev, tc_error *err);
void evlog_free(evlog *l);
size_t evlog_count(const evlog *l, tc_event_kind kind);
/* Reads a trace file (format detected) into a log; -1 on error. */
int evlog_read(evlog *l, const char *path, tc_error *err);
/* Records a program (argv[0] = path) with the library into a log. */
int evlog_record(evlog *l, const tc_options *opt, const char *const *argv,
                 tc_run_result *res, tc_error *err);
/* 0 if equal; else fills why (event index and field). */
int evlog_equal(const evlog *a, const evlog *b, char *why, size_t max);

/* Records prog (no arguments) in the default mode and with --exact
 * (keyframes every 1000 instructions) and compares the two streams: 0 if
 * equal, 1 if they differ or hold under 50 instructions, -1 if recording
 * failed; why says what. */
int evlog_exact_equal(const char *prog, char *why, size_t max);
/* Writes a hand-made 4-instruction mips64el recording (entry 0x120000000,
 * "/bin/prog64", an sd and an ld of ra at sp+8, exit) to ref as tct. */
int evlog_write_mips64el_tct(const char *ref, tc_error *err);

#endif
