/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Structs that carry their size (sized.h). */
#include "common/sized.h"

#include <string.h>

static size_t size_of(const void *p) {
  size_t n;
  memcpy(&n, p, sizeof n);
  return n;
}

int tc_sized_in(void *dst, size_t dst_size, const void *src, const char *what,
                tc_error *err) {
  size_t n = size_of(src);
  if (n < sizeof n) {
    tc_error_set(err, "%s not initialised (call %s_init first)", what, what);
    return -1;
  }
  /* A newer caller's fields this library lacks must be unset (zero, as
   * their init function leaves them): they cannot be honoured. */
  const unsigned char *extra = (const unsigned char *)src + dst_size;
  for (size_t i = 0; n > dst_size && i < n - dst_size; i++)
    if (extra[i]) {
      tc_error_set(err,
                   "%s sets a field this library (tracecorn " TC_VERSION_STRING
                   ") does not have: built against a newer header",
                   what);
      return -1;
    }
  size_t common = n < dst_size ? n : dst_size;
  memcpy((char *)dst + sizeof n, (const char *)src + sizeof n,
         common - sizeof n);
  return 0;
}

int tc_sized_check(const void *out, const char *what, tc_error *err) {
  if (out && size_of(out) < sizeof(size_t)) {
    tc_error_set(err, "%s not initialised (call %s_init first)", what, what);
    return -1;
  }
  return 0;
}

void tc_sized_out(void *dst, const void *src, size_t src_size) {
  size_t n = size_of(dst);
  size_t common = n < src_size ? n : src_size;
  if (common > sizeof n)
    memcpy((char *)dst + sizeof n, (const char *)src + sizeof n,
           common - sizeof n);
}
