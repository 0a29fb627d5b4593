/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The public structs a caller allocates start with `size_t size`, set by
 * their init function to the size the caller was compiled with
 * (docs/api.md, "Structs that grow"): a library with more fields reads
 * and writes only that much, so a program built against an older header
 * keeps working. The public entry points pass them through these. */
#ifndef TC_COMMON_SIZED_H
#define TC_COMMON_SIZED_H

#include <stddef.h>

#include "tracecorn/tracecorn.h"

/* Takes a caller's struct (src, of the size it says) into dst, which holds
 * this library's defaults (dst_size bytes, its size field set): the
 * fields both know are copied, the others keep their defaults. -1 with a
 * message naming `what` if src was never initialised (size 0) or sets a
 * field this library does not have. */
int tc_sized_in(void *dst, size_t dst_size, const void *src, const char *what,
                tc_error *err);
/* -1 with a message naming `what` if the caller's struct to be filled was
 * never initialised (size 0); NULL is fine. */
int tc_sized_check(const void *out, const char *what, tc_error *err);
/* Hands a result (src, this library's struct of src_size bytes) to the
 * caller's dst, as far as dst's size holds; dst's size stays. */
void tc_sized_out(void *dst, const void *src, size_t src_size);

#endif
