/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Initial memory rebuilt for a target that keeps memory as an image (tct,
 * ucir, rvn: TC_CAP_MAP_DATA) from a source that has none (trac, tfile,
 * bap, tenet): the bytes of every executed instruction and the first value
 * seen at every address an instruction read (or overwrote, when the source
 * keeps old values). ucir and rvn read instruction bytes and read values
 * back from that image, so without it they would read zeros. */
#ifndef TC_REBUILD_H
#define TC_REBUILD_H

#include <stdint.h>

#include "tracecorn/tracecorn.h"

typedef struct tc_rebuild tc_rebuild;

/* Reads the whole source once (its own reader on path). NULL when there is
 * nothing to rebuild or on error (err set then). */
tc_rebuild *tc_rebuild_scan(const char *path, const tc_format *src,
                            tc_error *err);
/* A source MAP without contents gets them from the image: data for
 * [addr, addr+size) (zeros where unknown), valid until the next call. */
const uint8_t *tc_rebuild_fill(tc_rebuild *rb, uint64_t addr, uint64_t size);
/* The image's pages outside the source's own maps, as MAP events (rwx,
 * unnamed), one call per region: 1 and *ev filled, 0 when done. */
int tc_rebuild_next_map(tc_rebuild *rb, tc_event *ev);
uint64_t tc_rebuild_pages(const tc_rebuild *rb);
void tc_rebuild_free(tc_rebuild *rb);

#endif
