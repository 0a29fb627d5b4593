/* SPDX-License-Identifier: GPL-2.0-or-later */
/* strace: the syscalls of a recording as strace prints them, one line
 * each, plus the signal that killed the process and how it ended
 * (`tracecorn strace`, `tracecorn dump --syscalls-only`, `record -f
 * strace`). Writer only. It observes every event, instructions included,
 * to keep the memory image that string and struct arguments are read
 * from (common/linux/sysdecode.h). Path "-" writes to stdout.
 *
 * Writer options: strace.s=N, the string limit (strace's -s; default 32);
 * strace.turns=1 (for `tracecorn strace -f`, which merges the processes'
 * outputs): a first line "\036pid P" and, at each TC_EV_TURN, a line
 * "\036turn T", so the merge knows whose lines happened when. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/linux/sysdecode.h"
#include "writers/format.h"
#include "writers/io/outfile.h"

struct tc_writer {
  FILE *f;
  int own;
  tc_sysdecode *dec;
  char path[4096];
  bool after_fault; /* the last event was a FAULT (its line is shown) */
  bool compat;      /* the last call went through the compat table */
  uint32_t pid;
  bool turns; /* strace.turns=1: marker lines (see above) */
};

static tc_writer *strace_open(const char *path, const tc_trace_info *info,
                              tc_error *err) {
  static const char *const known[] = {"s", "turns", NULL};
  if (tc_writer_options_check(info, "strace", known, err) < 0)
    return NULL;
  unsigned strsize = 0;
  const char *s = tc_writer_option(info, "strace", "s");
  if (s) {
    char *end;
    errno = 0;
    unsigned long v = strtoul(s, &end, 10);
    if (errno || end == s || *end || v == 0 || v > 1u << 20 || s[0] == '-') {
      tc_error_set(err, "strace: strace.s must be a number from 1 to %u: %s",
                   1u << 20, s);
      return NULL;
    }
    strsize = (unsigned)v;
  }
  tc_writer *w = calloc(1, sizeof *w);
  if (!w ||
      !(w->dec = tc_sysdecode_new(info->arch, strsize, info->has_memory))) {
    free(w);
    tc_error_set(err, "out of memory");
    return NULL;
  }
  snprintf(w->path, sizeof w->path, "%s", path);
  w->pid = info->pid;
  const char *turns = tc_writer_option(info, "strace", "turns");
  w->turns = turns && strcmp(turns, "0") != 0;
  if (strcmp(path, "-") == 0) {
    w->f = stdout;
  } else {
    w->f = tc_outfile_fopen(path, "w");
    w->own = 1;
    if (!w->f) {
      tc_error_set(err, "%s: %s", path, strerror(errno));
      tc_sysdecode_free(w->dec);
      free(w);
      return NULL;
    }
  }
  if (w->turns && fprintf(w->f, "\036pid %u\n", w->pid) < 0) {
    tc_error_set(err, "%s: write failed: %s", path, strerror(errno));
    tc_outfile_close_stream(w->f, w->own, w->path, NULL);
    tc_sysdecode_free(w->dec);
    free(w);
    return NULL;
  }
  return w;
}

static int line(tc_writer *w, const char *text, tc_error *err) {
  if (text && fprintf(w->f, "%s\n", text) < 0) {
    tc_error_set(err, "%s: write failed: %s", w->path, strerror(errno));
    return -1;
  }
  return 0;
}

/* A turn marker (strace.turns=1); nothing else changes. */
static int turn_line(tc_writer *w, const tc_event *ev, tc_error *err) {
  if (!w->turns)
    return 0;
  char mark[32];
  snprintf(mark, sizeof mark, "\036turn %llu",
           (unsigned long long)ev->u.turn.turn);
  return line(w, mark, err);
}

static int strace_write(tc_writer *w, const tc_event *ev, tc_error *err) {
  if (ev->kind == TC_EV_TURN)
    return turn_line(w, ev, err);
  int rc = 0;
  switch (ev->kind) {
  case TC_EV_SYSCALL: /* one line per call: later parts add only memory */
    if (ev->u.sys.part > 0)
      break;
    if ((ev->u.sys.compat != 0) != w->compat) {
      /* int $0x80 in 64-bit code and back: strace's personality lines */
      w->compat = ev->u.sys.compat != 0;
      char said[64];
      snprintf(said, sizeof said, "[ Process PID=%u runs in %s mode. ]", w->pid,
               w->compat ? "32 bit" : "64 bit");
      rc = line(w, said, err);
    }
    if (rc == 0)
      rc = line(w, tc_sysdecode_syscall(w->dec, &ev->u.sys, TC_SYSDECODE_ALIGN),
                err);
    break;
  case TC_EV_FAULT:
    rc = line(w, tc_sysdecode_fault(w->dec, &ev->u.fault), err);
    break;
  case TC_EV_SIGNAL: /* a fault's signal was shown at the FAULT */
    if (!w->after_fault)
      rc = line(w, tc_sysdecode_signal(w->dec, &ev->u.sig), err);
    break;
  case TC_EV_EXIT:
    rc = line(w, tc_sysdecode_exit(w->dec, &ev->u.exit), err);
    break;
  default:
    break;
  }
  w->after_fault = ev->kind == TC_EV_FAULT;
  if (tc_sysdecode_observe_or_fail(w->dec, ev, w->path, rc ? NULL : err) < 0)
    rc = -1;
  return rc;
}

/* An event a filter left out: only its effect on memory matters. */
static int strace_skip(tc_writer *w, const tc_event *ev, tc_error *err) {
  if (ev->kind == TC_EV_TURN) /* a selection never hides the time order */
    return turn_line(w, ev, err);
  return tc_sysdecode_observe_or_fail(w->dec, ev, w->path, err);
}

static int strace_close(tc_writer *w, tc_error *err) {
  int rc = tc_outfile_close_stream(w->f, w->own, w->path, err);
  tc_sysdecode_free(w->dec);
  free(w);
  return rc;
}

static const char *strace_ext(const tc_arch *a) {
  (void)a;
  return ".strace";
}

const tc_format tc_format_strace = {
    .name = "strace",
    .description = "syscalls as strace prints them (no reader)",
    .caps = TC_CAP_BLOCKS, /* it shows no instructions */
    .extension = strace_ext,
    .open_writer = strace_open,
    .write_event = strace_write,
    .close_writer = strace_close,
    .skip_event = strace_skip,
};
