/* SPDX-License-Identifier: GPL-2.0-or-later */
/* MD5 (RFC 1321), for the BAP meta frame's target.md5sum. */
#ifndef TC_MD5_H
#define TC_MD5_H

#include <stddef.h>
#include <stdint.h>

/* The raw 16-byte digest of data[0..n). */
void tc_md5(const void *data, size_t n, uint8_t digest[16]);

#endif
