/* SPDX-License-Identifier: GPL-2.0-or-later */
/* MurmurHash3 x86_32 and x64_128, following the reference implementation
 * (smhasher's MurmurHash3.cpp). Blocks are loaded with memcpy so unaligned
 * input is fine; the reference takes an int length, which is identical for
 * every length below 2 GiB. */
#include "common/murmurhash3.h"

#include <string.h>

static uint32_t rotl32(uint32_t x, int r) { return (x << r) | (x >> (32 - r)); }
static uint64_t rotl64(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }

static uint32_t fmix32(uint32_t h) {
  h ^= h >> 16;
  h *= 0x85ebca6bu;
  h ^= h >> 13;
  h *= 0xc2b2ae35u;
  h ^= h >> 16;
  return h;
}

static uint64_t fmix64(uint64_t k) {
  k ^= k >> 33;
  k *= 0xff51afd7ed558ccdull;
  k ^= k >> 33;
  k *= 0xc4ceb9fe1a85ec53ull;
  k ^= k >> 33;
  return k;
}

static uint32_t load32(const uint8_t *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
         (uint32_t)p[3] << 24;
}

static uint64_t load64(const uint8_t *p) {
  return (uint64_t)load32(p) | (uint64_t)load32(p + 4) << 32;
}

uint32_t tc_murmur3_x86_32(const void *key, size_t len, uint32_t seed) {
  const uint8_t *data = key;
  const uint32_t c1 = 0xcc9e2d51u, c2 = 0x1b873593u;
  size_t nblocks = len / 4;
  uint32_t h1 = seed;

  for (size_t i = 0; i < nblocks; i++) {
    uint32_t k1 = load32(data + 4 * i);
    k1 *= c1;
    k1 = rotl32(k1, 15);
    k1 *= c2;
    h1 ^= k1;
    h1 = rotl32(h1, 13);
    h1 = h1 * 5 + 0xe6546b64u;
  }

  const uint8_t *tail = data + 4 * nblocks;
  uint32_t k1 = 0;
  switch (len & 3) {
  case 3:
    k1 ^= (uint32_t)tail[2] << 16;
    /* fall through */
  case 2:
    k1 ^= (uint32_t)tail[1] << 8;
    /* fall through */
  case 1:
    k1 ^= tail[0];
    k1 *= c1;
    k1 = rotl32(k1, 15);
    k1 *= c2;
    h1 ^= k1;
  }

  h1 ^= (uint32_t)len;
  return fmix32(h1);
}

void tc_murmur3_x64_128(const void *key, size_t len, uint32_t seed,
                        uint64_t out[2]) {
  const uint8_t *data = key;
  const uint64_t c1 = 0x87c37b91114253d5ull, c2 = 0x4cf5ad432745937full;
  size_t nblocks = len / 16;
  uint64_t h1 = seed, h2 = seed;

  for (size_t i = 0; i < nblocks; i++) {
    uint64_t k1 = load64(data + 16 * i);
    uint64_t k2 = load64(data + 16 * i + 8);
    k1 *= c1;
    k1 = rotl64(k1, 31);
    k1 *= c2;
    h1 ^= k1;
    h1 = rotl64(h1, 27);
    h1 += h2;
    h1 = h1 * 5 + 0x52dce729;
    k2 *= c2;
    k2 = rotl64(k2, 33);
    k2 *= c1;
    h2 ^= k2;
    h2 = rotl64(h2, 31);
    h2 += h1;
    h2 = h2 * 5 + 0x38495ab5;
  }

  const uint8_t *tail = data + 16 * nblocks;
  uint64_t k1 = 0, k2 = 0;
  size_t rest = len & 15;
  /* Same as the reference's fall-through switch: bytes 8..14 feed k2,
   * bytes 0..7 feed k1, each mixed once if any of its bytes exist. */
  for (size_t i = rest; i > 8; i--)
    k2 ^= (uint64_t)tail[i - 1] << (8 * (i - 9));
  if (rest > 8) {
    k2 *= c2;
    k2 = rotl64(k2, 33);
    k2 *= c1;
    h2 ^= k2;
  }
  for (size_t i = rest < 8 ? rest : 8; i > 0; i--)
    k1 ^= (uint64_t)tail[i - 1] << (8 * (i - 1));
  if (rest > 0) {
    k1 *= c1;
    k1 = rotl64(k1, 31);
    k1 *= c2;
    h1 ^= k1;
  }

  h1 ^= (uint64_t)len;
  h2 ^= (uint64_t)len;
  h1 += h2;
  h2 += h1;
  h1 = fmix64(h1);
  h2 = fmix64(h2);
  h1 += h2;
  h2 += h1;
  out[0] = h1;
  out[1] = h2;
}
