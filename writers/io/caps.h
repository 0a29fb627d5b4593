/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The kinds of data a trace holds, from the formats' capabilities
 * (tc_format.caps and holds_reg): one list behind convert's loss report,
 * verify's table and the capability table in docs/formats/README.md. */
#ifndef TC_CAPS_H
#define TC_CAPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tracecorn/tracecorn.h"

/* What a source stream actually contained, counted while it is converted,
 * and what the conversion had to rebuild. */
typedef struct tc_loss {
  const tc_format *src, *dst;
  const tc_arch *arch;
  uint64_t insns, reads, writes, syscalls, sysmem, maps, named_maps, data_maps,
      faults, exit_syscalls, signals, compat_syscalls, turns;
  bool tids, have_exit;
  tc_exit_reason exit_reason;
  bool first_state_seen;
  uint8_t *reg_data; /* per register: it held a non-zero value */
  bool synthetic_exit;
  uint64_t rebuilt_pages; /* initial memory rebuilt (analysis/rebuild.h) */
} tc_loss;

/* 0, or -1 (out of memory). */
int tc_loss_init(tc_loss *l, const tc_format *src, const tc_format *dst,
                 const tc_arch *arch);
void tc_loss_see(tc_loss *l, const tc_event *ev);
void tc_loss_free(tc_loss *l);
/* What dst cannot hold of what the stream held, as one readable list
 * ("syscalls, maps, 34 of 43 registers (rflags, fs_base, ...)"), "" if
 * nothing; returns the number of kinds dropped. */
int tc_loss_dropped(const tc_loss *l, char *buf, size_t max);
/* What was rebuilt for dst ("an exit record (the trac input has none)"),
 * "" if nothing. */
void tc_loss_rebuilt(const tc_loss *l, char *buf, size_t max);

/* The capability table of every format with a reader and a writer, as a
 * Markdown table (docs/formats/README.md holds a copy; a test compares). */
size_t tc_caps_markdown(char *buf, size_t max);

/* Registers of arch that format f holds (f->holds_reg, NULL = all). */
int tc_caps_regs_held(const tc_format *f, const tc_arch *arch);

#endif
