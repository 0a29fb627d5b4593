/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The filter layer behind tc_convert_filtered (see tc_filter in the public
 * header): decides, event by event, what goes to the writer, what goes
 * to its skip_event, and when to stop. Format-neutral. */
#ifndef TC_FILTER_H
#define TC_FILTER_H

#include <stdbool.h>

#include "tracecorn/tracecorn.h"
#include "writers/format.h"

typedef struct tc_filter_state tc_filter_state;

/* 1 if the filter selects everything (no state needed). */
bool tc_filter_is_plain(const tc_filter *f);
/* Checks and prepares a filter for a trace (symbols come from
 * info->exe_data). seeked: the reader was already positioned at
 * f->from. NULL with a message on a bad filter. */
tc_filter_state *tc_filter_new(const tc_filter *f, const tc_trace_info *info,
                               bool seeked, tc_error *err);
void tc_filter_free(tc_filter_state *s);
/* Passes one event on to w: 1 go on, 0 stop (the count or `to` is
 * reached), -1 error (the writer's, or a range that names nothing). With
 * out NULL nothing is written: the records are only counted. */
int tc_filter_event(tc_filter_state *s, const tc_event *ev,
                    const tc_format *out, tc_writer *w, tc_error *err);
/* The records written (or counted) so far. */
uint64_t tc_filter_records(const tc_filter_state *s);
/* At the end of the input: -1 if the trace never reached f->from. */
int tc_filter_finish(tc_filter_state *s, tc_error *err);

#endif
