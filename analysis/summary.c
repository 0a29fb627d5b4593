/* SPDX-License-Identifier: GPL-2.0-or-later */
/* tc_trace_summarize: what a trace file holds, read through its format's
 * reader (what `tracecorn info` prints). Format-neutral. */
#include <stdio.h>
#include <string.h>

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

static int summarize(const char *path, tc_trace_summary *sum, tc_error *err) {
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
  /* what was read before an error is kept in sum */
  return tc_read_trace(path, fmt, summary_sink, sum, err);
}

int tc_trace_summarize(const char *path, tc_trace_summary *sum, tc_error *err) {
  if (tc_sized_check(sum, "tc_trace_summary", err) < 0)
    return -1;
  tc_trace_summary full;
  tc_trace_summary_init(&full);
  int rc = summarize(path, &full, err);
  tc_sized_out(sum, &full, sizeof full);
  return rc;
}
