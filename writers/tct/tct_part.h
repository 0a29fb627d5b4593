/* SPDX-License-Identifier: GPL-2.0-or-later */
/* writers/tct/tct_part.h: a tct trace written in parts by several
 * processes (record -j N, lib/parallel.c) and joined into the one file a
 * single writer would have made, byte for byte.
 *
 * A chunk starts at the first KEYFRAME on or past each multiple of the
 * chunk size (-O tct.chunk, tc_tct_chunk_insns), whatever came before, so
 * a part that starts at such a KEYFRAME starts a chunk there as the whole
 * trace's writer does: every cache empty, the state the header's. Part 0
 * holds the magic and the header; a later part starts with its first
 * KEYFRAME (at instruction `first`). Each part ends with its share of
 * the footer (summary, map log, chunk index); tc_tct_join_add appends a
 * part's frames to the joined file and tc_tct_join_close writes the
 * footer of them all. */
#ifndef TC_WRITERS_TCT_PART_H
#define TC_WRITERS_TCT_PART_H

#include <stdbool.h>
#include <stdint.h>

#include "writers/format.h"

tc_writer *tc_tct_open_part(const char *path, const tc_trace_info *info,
                            uint64_t first, tc_error *err);
int tc_tct_write_part(tc_writer *w, const tc_event *ev, tc_error *err);
int tc_tct_close_part(tc_writer *w, tc_error *err);
/* The chunk size the writer will use (instructions; 0: one chunk, or an
 * option the writer refuses). */
uint64_t tc_tct_chunk_insns(const tc_trace_info *info);

/* The joined file (parts appended in order; ok false: no footer, the file
 * is being discarded). */
tc_writer *tc_tct_join_open(const char *path, const tc_trace_info *info,
                            tc_error *err);
int tc_tct_join_add(tc_writer *j, const char *part, tc_error *err);
int tc_tct_join_close(tc_writer *j, bool ok, tc_error *err);

#endif
