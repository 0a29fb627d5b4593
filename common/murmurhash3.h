/* SPDX-License-Identifier: GPL-2.0-or-later */
/* MurmurHash3 (Austin Appleby's public-domain reference algorithm), as
 * x64dbg uses it for the "hash" key of a TRAC header. Inputs are byte
 * strings; results are the reference's on a little-endian host. */
#ifndef TC_MURMURHASH3_H
#define TC_MURMURHASH3_H

#include <stddef.h>
#include <stdint.h>

uint32_t tc_murmur3_x86_32(const void *key, size_t len, uint32_t seed);
/* out[0] = h1 (the first 64-bit word), out[1] = h2. */
void tc_murmur3_x64_128(const void *key, size_t len, uint32_t seed,
                        uint64_t out[2]);

#endif
