/* SPDX-License-Identifier: GPL-2.0-or-later */
/* common/: the internal helpers every layer may include. small_copy.h's
 * inline copies and compares agree with memcpy and memcmp for every size
 * (the switched ones and the fallback), at unaligned addresses. */
#include <stdint.h>
#include <string.h>

#include "common/small_copy.h"
#include "testutil.h"

#define MAX_N 40

static void fill(uint8_t *p, size_t n, uint64_t *rng) {
  for (size_t i = 0; i < n; i++)
    p[i] = (uint8_t)tu_xorshift(rng);
}

static void test_copy_small(void) {
  uint64_t rng = 0x1234567;
  for (size_t n = 0; n <= MAX_N; n++)
    for (size_t off = 0; off < 8; off++) {
      uint8_t src[MAX_N + 16], got[MAX_N + 16], want[MAX_N + 16];
      fill(src, sizeof src, &rng);
      fill(got, sizeof got, &rng);
      memcpy(want, got, sizeof want);
      tc_copy_small(got + off, src + 7 - off % 8, n);
      memcpy(want + off, src + 7 - off % 8, n);
      /* the n bytes copied, nothing around them touched */
      CU_ASSERT_EQUAL(memcmp(got, want, sizeof got), 0);
      uint8_t *end = tc_put_small(got + off, src, n);
      CU_ASSERT_PTR_EQUAL(end, got + off + n);
      CU_ASSERT_EQUAL(memcmp(got + off, src, n), 0);
    }
}

static void test_equal_small(void) {
  uint64_t rng = 0x89abcdef;
  for (size_t n = 0; n <= MAX_N; n++)
    for (size_t off = 0; off < 8; off++) {
      uint8_t a[MAX_N + 8], b[MAX_N + 8];
      fill(a, sizeof a, &rng);
      memcpy(b, a, sizeof b);
      CU_ASSERT_TRUE(tc_equal_small(a + off, b + off, n));
      /* one bit flipped anywhere in the n bytes is seen, one just past
       * them is not */
      for (size_t i = 0; i < n; i++)
        for (int bit = 0; bit < 8; bit += 7) {
          b[off + i] ^= (uint8_t)(1u << bit);
          CU_ASSERT_FALSE(tc_equal_small(a + off, b + off, n));
          CU_ASSERT_EQUAL(tc_equal_small(a + off, b + off, n),
                          memcmp(a + off, b + off, n) == 0);
          b[off + i] ^= (uint8_t)(1u << bit);
        }
      b[off + n] ^= 0xff;
      CU_ASSERT_TRUE(tc_equal_small(a + off, b + off, n));
    }
}

int main(void) {
  static const tu_case cases[] = {
      {"tc_copy_small copies as memcpy, every size", test_copy_small},
      {"tc_equal_small compares as memcmp, every size", test_equal_small},
      {NULL, NULL}};
  return tu_run_suite("common", cases);
}
