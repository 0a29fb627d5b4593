/* SPDX-License-Identifier: GPL-2.0-or-later */
/* int $0x80 in 64-bit code (issue 38): Linux runs the i386 table
 * (numbers, arguments in the low 32 bits of ebx, ecx, edx, esi, edi, ebp),
 * so a static non-PIE program's data, below 4 GiB, can be written, while a
 * stack buffer's address is cut to 32 bits and faults (-EFAULT). Prints
 * what each call returned; exits through i386's exit_group with 7.
 * `int80 nanosleep` makes one call tracecorn does not emulate (its
 * timespec is i386's): -ENOSYS there, 0 on Linux. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static long int80(long nr, long a, long b, long c) {
  long ret;
  __asm__ volatile("int $0x80"
                   : "=a"(ret)
                   : "a"(nr), "b"(a), "c"(b), "d"(c)
                   : "memory");
  return ret;
}

static char msg[] = "int80: hello from the i386 table\n";

int main(int argc, char **argv) {
  if (argc > 1 && strcmp(argv[1], "nanosleep") == 0) {
    static int ts[2] = {0, 1000}; /* i386 struct timespec: 1 us */
    printf("nanosleep: %ld\n", int80(162, (long)ts, 0, 0));
    return 0;
  }
  fflush(stdout);
  long w = int80(4, 1, (long)msg, (long)strlen(msg)); /* write */
  char on_stack[8] = "stack\n";
  long s = int80(4, 1, (long)on_stack, 6); /* address cut to 32 bits */
  long pid = int80(20, 0, 0, 0);           /* getpid */
  long bad = int80(100000, 0, 0, 0);       /* no such call */
  printf("write=%ld stack-write=%ld getpid-same=%d bad=%ld\n", w, s,
         pid == (long)getpid(), bad);
  fflush(stdout);
  int80(252, 7, 0, 0); /* exit_group(7) */
  return 1;
}
