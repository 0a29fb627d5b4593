/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Loops, then makes a syscall no kernel has (tracecorn notices it), then
 * loops again: a notice in the middle of a run, while `record` shows its
 * progress line on a terminal (test_cli). */
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char **argv) {
  long n = argc > 1 ? atol(argv[1]) : 1000;
  volatile long x = 0;
  for (long i = 0; i < n; i++)
    x += i;
  long r = syscall(999);
  for (long i = 0; i < n; i++)
    x += i;
  printf("syscall 999: %ld\n", r);
  return 0;
}
