/* SPDX-License-Identifier: GPL-2.0-or-later */
/* windows: call patterns that exercise SPARC register windows (issue 30),
 * written so any other arch runs it too: deep recursion past any window
 * count, many live values across calls, tail calls (sparc64 gcc -O2: a
 * `restore` in the delay slot of `call`/`jmpl`), `return` with work in its
 * delay slot, and longjmp-free unwinding through 40 frames. Prints a
 * checksum of every result; exits 0. */
#include "sys.h"

GUEST_START

static volatile long sink;

__attribute__((noinline)) static long deep(long n, long a, long b, long c) {
  if (n == 0)
    return a * 3 + b * 5 + c * 7;
  long x = deep(n - 1, a + n, b ^ n, c - n); /* a, b, c live across */
  /* not additive in x: no accumulator turns the recursion into a loop */
  return (x ^ (a + n)) * 3 - b + (c & 0xff);
}

__attribute__((noinline)) static long leaf(long x) { return x * 2 + 1; }

/* -O2: a sibling call, `call leaf; restore` */
__attribute__((noinline)) static long tail(long x, long y) {
  sink = y;
  return leaf(x + y);
}

__attribute__((noinline)) static long many(long a, long b, long c, long d,
                                           long e, long f, long g, long h) {
  long s = a + 2 * b + 3 * c + 4 * d + 5 * e + 6 * f + 7 * g + 8 * h;
  return s + tail(a ^ h, b ^ g);
}

__attribute__((noinline)) static long mutual_b(long n);
__attribute__((noinline)) static long mutual_a(long n) {
  return n <= 0 ? 1 : n + mutual_b(n - 1);
}
__attribute__((noinline)) static long mutual_b(long n) {
  return n <= 0 ? 2 : n * 2 + mutual_a(n - 1);
}

void cmain(long *sp) {
  (void)sp;
  unsigned long sum = 0;
  for (long i = 0; i < 5; i++)
    sum = sum * 31 + (unsigned long)deep(40 + i, i, 7 * i, 100 - i);
  for (long i = 0; i < 20; i++)
    sum = sum * 31 + (unsigned long)many(i, i + 1, i + 2, i + 3, i + 4, i + 5,
                                         i + 6, i + 7);
  sum = sum * 31 + (unsigned long)mutual_a(33);
  g_puts("windows: ");
  g_puthex(sum);
  g_puts("\n");
  g_exit(0);
}
