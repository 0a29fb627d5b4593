/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Integers in byte buffers, n bytes (1 to 8), little- or big-endian: the
 * one set of byte-order helpers (formats, ELF, the kernel's frames). */
#ifndef TC_BYTEORDER_H
#define TC_BYTEORDER_H

#include <stdint.h>

static inline void put_le(uint8_t *p, uint64_t v, unsigned n) {
  for (unsigned i = 0; i < n; i++)
    p[i] = (uint8_t)(v >> (8 * i));
}

static inline uint64_t get_le(const uint8_t *p, unsigned n) {
  uint64_t v = 0;
  for (unsigned i = 0; i < n; i++)
    v |= (uint64_t)p[i] << (8 * i);
  return v;
}

/* be != 0: big-endian */
static inline void put_uint(uint8_t *p, uint64_t v, unsigned n, int be) {
  for (unsigned i = 0; i < n; i++)
    p[be ? n - 1 - i : i] = (uint8_t)(v >> (8 * i));
}

static inline uint64_t get_uint(const uint8_t *p, unsigned n, int be) {
  uint64_t v = 0;
  for (unsigned i = 0; i < n; i++)
    v |= (uint64_t)p[be ? n - 1 - i : i] << (8 * i);
  return v;
}

#endif
