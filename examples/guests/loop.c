/* SPDX-License-Identifier: GPL-2.0-or-later */
/* loop: a long-running arithmetic loop (for page-crossing traces,
 * --max-insns and benchmarks). Iterations: argv[1] or 20000. */
#include "sys.h"

GUEST_START

static unsigned long parse(const char *s) {
  unsigned long v = 0;
  while (*s >= '0' && *s <= '9')
    v = v * 10 + (unsigned long)(*s++ - '0');
  return v;
}

static volatile unsigned long sink[64];

void cmain(long *sp) {
  long argc = sp[0];
  char **argv = (char **)(sp + 1);
  unsigned long n = argc > 1 ? parse(argv[1]) : 20000;
  unsigned long h = (unsigned long)1469598103934665603ull;
  for (unsigned long i = 0; i < n; i++) {
    h ^= i;
    h *= (unsigned long)1099511628211ull;
    sink[i & 63] = h; /* a store per iteration */
  }
  g_puts("loop done: ");
  g_puthex(h & 0xffffffff);
  g_puts("\n");
  g_exit(0);
}
