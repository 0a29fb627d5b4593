/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Stream comparison behind `tracecorn verify`, open to any pair of
 * readable traces (the round-trip tests compare A with A -> B -> A). */
#ifndef TC_VERIFY_H
#define TC_VERIFY_H

#include "tracecorn/tracecorn.h"
#include "writers/format.h"

/* Compares the trace at path (fmt, NULL = detected) with the one at
 * ref_path (ref_fmt) within what `within` holds (its caps and holds_reg;
 * NULL = fmt). 0 with *t filled, or -1 with a message. */
int tc_verify_streams(const char *ref_path, const tc_format *ref_fmt,
                      const char *path, const tc_format *fmt,
                      const tc_format *within, tc_verify_table *t,
                      tc_error *err);

#endif
