/* SPDX-License-Identifier: GPL-2.0-or-later */
/* tc_trace_summarize: what a trace file holds, read through its format's
 * reader (what `tracecorn info` prints). Format-neutral. */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "analysis/index.h"
#include "common/sized.h"
#include "tracecorn/tracecorn.h"
#include "writers/format.h"

static int summary_sink(void *ctx, const tc_event *ev, tc_error *err) {
  tc_trace_summary *st = ctx;
  (void)err;
  switch (ev->kind) {
  case TC_EV_INSN:
    if (st->insns++ == 0)
      st->first_pc = ev->u.insn.pc;
    st->last_pc = ev->u.insn.pc;
    break;
  case TC_EV_SYSCALL:
    if (ev->u.sys.part == 0)
      st->syscalls++;
    break;
  case TC_EV_MAP:
    st->maps++;
    tc_summary_note_module(st, ev->u.map.name); /* a file-backed module */
    break;
  case TC_EV_FAULT:
    st->faults++;
    break;
  case TC_EV_KEYFRAME:
    st->keyframes++;
    break;
  case TC_EV_EXIT:
    st->have_exit = 1;
    st->exit_status = ev->u.exit.status;
    snprintf(st->exit_message, sizeof st->exit_message, "%s",
             ev->u.exit.message ? ev->u.exit.message : "");
    break;
  default:
    break;
  }
  return 0;
}

static int summarize(const char *path, tc_trace_summary *sum, bool use_index,
                     tc_error *err) {
  const tc_format *fmt = tc_format_detect(path, err);
  if (!fmt)
    return -1;
  tc_reader *r = fmt->open_reader(path, err);
  if (!r)
    return -1;
  const tc_trace_info *ti = fmt->reader_info(r);
  sum->format = fmt;
  sum->arch = ti->arch;
  sum->entry = ti->entry;
  snprintf(sum->exe_path, sizeof sum->exe_path, "%s",
           ti->exe_path ? ti->exe_path : "");
  /* an index the file holds (tct's footer) answers without a scan */
  int from_index = fmt->summary ? fmt->summary(r, sum, err) : 0;
  fmt->close_reader(r);
  if (from_index)
    return from_index < 0 ? -1 : 0;
  /* or the index beside it (TRACE.tcidx: the same events as a tct) */
  char idx[4300];
  const tc_format *tct = tc_format_by_name("tct");
  if (use_index && tc_index_find(path, fmt, idx, sizeof idx) == 1 &&
      tct->summary) {
    tc_error ierr = {{0}};
    tc_reader *ir = tct->open_reader(idx, &ierr);
    int got = ir ? tct->summary(ir, sum, &ierr) : 0;
    if (ir)
      tct->close_reader(ir);
    char none[128];
    snprintf(none, sizeof none, TC_INDEX_NO_EXIT, fmt->name);
    if (got == 1 && sum->have_exit && sum->exit_status == 0 &&
        strcmp(sum->exit_message, none) == 0) {
      sum->have_exit = 0; /* the index's stand-in: the trace has none */
      sum->exit_message[0] = 0;
    }
    if (got == 1)
      return 0; /* else (a damaged index) the trace itself is read */
  }
  /* what was read before an error is kept in sum */
  return tc_read_trace(path, fmt, summary_sink, sum, err);
}

static int summarize_sized(const char *path, tc_trace_summary *sum,
                           bool use_index, tc_error *err) {
  if (tc_sized_check(sum, "tc_trace_summary", err) < 0)
    return -1;
  tc_trace_summary full;
  tc_trace_summary_init(&full);
  int rc = summarize(path, &full, use_index, err);
  tc_sized_out(sum, &full, sizeof full);
  return rc;
}

int tc_trace_summarize(const char *path, tc_trace_summary *sum, tc_error *err) {
  return summarize_sized(path, sum, true, err);
}

int tc_summarize_no_index(const char *path, tc_trace_summary *sum,
                          tc_error *err) {
  return summarize_sized(path, sum, false, err);
}
