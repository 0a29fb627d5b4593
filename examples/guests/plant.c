/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Memory writes for dump's --mem and --reg tests (tests/test_select.c):
 * main stores 1 into target[5], plant() overwrites it with 0x5a,
 * neighbour() writes the bytes beside it, peek() reads it back; uname()
 * has the kernel fill a buffer. */
#include <stdio.h>
#include <sys/utsname.h>

volatile unsigned char target[16];
struct utsname names;

__attribute__((noinline)) void plant(void) { target[5] = 0x5a; }
__attribute__((noinline)) void neighbour(void) {
  target[4] = 0x22;
  target[6] = 0x11;
}
__attribute__((noinline)) int peek(void) { return target[5]; }

int main(void) {
  target[5] = 1;
  plant();
  neighbour();
  int v = peek();
  if (uname(&names) != 0)
    return 2;
  printf("%d %s\n", v, names.sysname);
  return v == 0x5a ? 0 : 1;
}
