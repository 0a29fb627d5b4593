/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The seek index of a trace whose format cannot seek (trac, ucir, tfile,
 * tenet, bap): TRACE.tcidx/, a directory beside the trace holding `stamp`
 * (which file it indexes: format, size, modification time, digests of its
 * first and last 64 KiB) and `trace.tct`, the same events converted to
 * tct. tct seeks through its footer's chunk index and summarizes from it,
 * so `dump --from N` and `info` of a 500 MB trac answer in a fraction of a
 * second once the index is built (one pass, about as long as reading the
 * trace). A stale or foreign index is ignored, never trusted.
 * Format-neutral: formats only through tc_format. */
#ifndef TC_ANALYSIS_INDEX_H
#define TC_ANALYSIS_INDEX_H

#include <stddef.h>

#include "tracecorn/tracecorn.h"

/* The message of the exit that ends a stream without one (tc_convert's
 * and the index's: a format without exit records), %s the format's name. */
#define TC_INDEX_NO_EXIT "no exit record in the %s input"

/* TRACE.tcidx (the directory) for trace. */
void tc_index_dir(const char *trace, char *out, size_t max);
/* 1 and the index's tct path in tct if trace (format fmt) has an index
 * that matches it; 0 if none or stale. */
int tc_index_find(const char *trace, const tc_format *fmt, char *tct,
                  size_t max);
/* Builds (or rebuilds) the index of trace: 0, or -1 with a message (the
 * directory is not writable, the trace is corrupt...); nothing half-made
 * is left behind. */
int tc_index_build(const char *trace, const tc_format *fmt, tc_error *err);

/* tc_trace_summarize reading the trace itself, never its index
 * (`info --no-index`). */
int tc_summarize_no_index(const char *path, tc_trace_summary *sum,
                          tc_error *err);

#endif
