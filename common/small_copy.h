/* SPDX-License-Identifier: GPL-2.0-or-later */
/* common/small_copy.h: copies and compares of a few bytes, by size.
 *
 * Registers and memory accesses are 1, 2, 4, 8 or 16 bytes. A memcpy or
 * memcmp of a size known only at run time is a libc call; the same call
 * with a constant size compiles to a load and a store. On the hot paths
 * (the recorder, the writer-thread queue, the BAP packer) that call was
 * a tenth to a third of the time, so these switch to the constant size.
 *
 * Internal and header-only: any layer may include it (emu, recorder,
 * writers, lib, tools); it is not installed and not part of the API. */
#ifndef TC_COMMON_SMALL_COPY_H
#define TC_COMMON_SMALL_COPY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* memcpy(dst, src, n), inline for the usual register and access sizes. */
static inline void tc_copy_small(void *dst, const void *src, size_t n) {
  switch (n) {
  case 1:
    *(uint8_t *)dst = *(const uint8_t *)src;
    break;
  case 2:
    memcpy(dst, src, 2);
    break;
  case 4:
    memcpy(dst, src, 4);
    break;
  case 8:
    memcpy(dst, src, 8);
    break;
  case 16:
    memcpy(dst, src, 16);
    break;
  default:
    memcpy(dst, src, n);
  }
}

/* memcmp(a, b, n) == 0, inline for the usual sizes. */
static inline bool tc_equal_small(const void *a, const void *b, size_t n) {
  switch (n) {
  case 1:
    return *(const uint8_t *)a == *(const uint8_t *)b;
  case 2: {
    uint16_t x, y;
    memcpy(&x, a, 2);
    memcpy(&y, b, 2);
    return x == y;
  }
  case 4: {
    uint32_t x, y;
    memcpy(&x, a, 4);
    memcpy(&y, b, 4);
    return x == y;
  }
  case 8: {
    uint64_t x, y;
    memcpy(&x, a, 8);
    memcpy(&y, b, 8);
    return x == y;
  }
  case 16: {
    uint64_t x[2], y[2];
    memcpy(x, a, 16);
    memcpy(y, b, 16);
    return ((x[0] ^ y[0]) | (x[1] ^ y[1])) == 0;
  }
  default:
    return memcmp(a, b, n) == 0;
  }
}

/* Copies n bytes to dst and returns the end of the copy: for packing
 * values one after the other. */
static inline uint8_t *tc_put_small(uint8_t *dst, const void *src, size_t n) {
  tc_copy_small(dst, src, n);
  return dst + n;
}

#endif
