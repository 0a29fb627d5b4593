/* SPDX-License-Identifier: GPL-2.0-or-later */
// C++ names for `dump --demangle`: a method and a template function.
#include <cstdio>

struct Counter {
  int n = 0;
  __attribute__((noinline)) int bump(int by) { return n += by; }
};

template <typename T> __attribute__((noinline)) T twice(T x) { return x + x; }

int main() {
  Counter c;
  c.bump(3);
  std::printf("%d %ld\n", c.bump(4), twice<long>(21));
  return 0;
}
