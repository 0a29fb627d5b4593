/* SPDX-License-Identifier: GPL-2.0-or-later */
/* UCIR (usercorn trace) helpers beyond the tc_format vtable, for tests and
 * tools: op statistics of a file, read with the full reader. */
#ifndef TC_UCIR_H
#define TC_UCIR_H

#include <stdint.h>

#include "writers/format.h"

enum { TC_UCIR_NOPS = 14 }; /* NOP .. EXIT */

typedef struct tc_ucir_stats {
  uint64_t ops[TC_UCIR_NOPS]; /* every op, nested ones included */
  uint64_t toplevel;          /* ops outside any FRAME/KEYFRAME/SYSCALL */
  uint64_t events;            /* events the reader yielded */
  int spec_layout;            /* 1: PROTOCOL.md's layout, 0: usercorn's */
} tc_ucir_stats;

/* The name of op `op` ("NOP", "FRAME", ...), or NULL. */
const char *tc_ucir_op_name(unsigned op);
/* Reads the whole file (every check of the reader applies) and counts its
 * ops. 0, or -1 with a message. */
int tc_ucir_stats_read(const char *path, tc_ucir_stats *st, tc_error *err);

#endif
