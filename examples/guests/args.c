/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Prints its arguments and environment, one per line, and exits with the
 * number of arguments: what a program exec'd by exec.c (issue 15) saw. */
#include <stdio.h>
#include <unistd.h>

extern char **environ;

int main(int argc, char **argv) {
  printf("argc=%d\n", argc);
  for (int i = 0; i < argc; i++)
    printf("argv[%d]=%s\n", i, argv[i]);
  for (char **e = environ; *e; e++)
    printf("env %s\n", *e);
  return argc;
}
