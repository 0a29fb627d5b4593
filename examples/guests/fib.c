/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Recursion for symbol and --trace-func tests: fib(n), and twice() which
 * calls it. */
#include <stdio.h>
#include <stdlib.h>
__attribute__((noinline)) long fib(long n) {
  return n < 2 ? n : fib(n - 1) + fib(n - 2);
}
__attribute__((noinline)) long twice(long x) { return fib(x) * 2; }
int main(int argc, char **argv) {
  long n = argc > 1 ? atol(argv[1]) : 10;
  printf("%ld %ld\n", fib(n), twice(5));
  return 0;
}
