/* SPDX-License-Identifier: GPL-2.0-or-later */
/* hotcold: a word stored once at the start beside one stored on every
 * iteration, in one 64-byte line (tests/test_gdbserver.c: a watch on the
 * cold word and reverse-continue from the end decode only the chunks
 * that wrote its bytes, not every chunk that wrote its line). Prints the
 * cold word's address. Iterations: argv[1] or 20000. */
#include "sys.h"

GUEST_START

static struct {
  volatile unsigned long hot;
  volatile unsigned long cold;
} line __attribute__((aligned(64)));

static unsigned long parse(const char *s) {
  unsigned long v = 0;
  while (*s >= '0' && *s <= '9')
    v = v * 10 + (unsigned long)(*s++ - '0');
  return v;
}

void cmain(long *sp) {
  long argc = sp[0];
  char **argv = (char **)(sp + 1);
  unsigned long n = argc > 1 ? parse(argv[1]) : 20000;
  line.cold = 7; /* the one store to it */
  for (unsigned long i = 0; i < n; i++)
    line.hot = i * 3 + line.hot;
  g_puts("cold at ");
  g_puthex((unsigned long)&line.cold);
  g_puts("\n");
  g_exit(0);
}
