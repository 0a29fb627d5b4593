/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A sparse guest memory image rebuilt from the event stream alone (MAP
 * contents, instruction and kernel writes), for formats that must show
 * memory the current event does not carry, e.g. TRAC's pointer-sized
 * words around a 1-byte access. Format-neutral: events in, bytes out. */
#ifndef TC_MEMIMAGE_H
#define TC_MEMIMAGE_H

#include <stddef.h>
#include <stdint.h>

#include "tracecorn/tracecorn.h"

typedef struct tc_memimage tc_memimage;

tc_memimage *tc_memimage_new(void);
void tc_memimage_free(tc_memimage *m);
/* Applies what an event does to memory: MAP (contents or zeros), UNMAP,
 * INSN and SYSCALL writes (their after bytes), INSN reads (the bytes
 * read). Returns -1 on out-of-memory. */
int tc_memimage_apply(tc_memimage *m, const tc_event *ev);
/* Copies n bytes at addr. Bytes never mapped nor seen read as 0. Returns
 * 1 if every byte was known, 0 otherwise. */
int tc_memimage_read(const tc_memimage *m, uint64_t addr, uint8_t *out,
                     size_t n);
/* Copies the known bytes at addr, up to n, stopping at the first byte
 * never mapped nor seen; returns how many were copied. */
size_t tc_memimage_read_known(const tc_memimage *m, uint64_t addr, uint8_t *out,
                              size_t n);

#endif
