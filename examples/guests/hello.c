/* SPDX-License-Identifier: GPL-2.0-or-later */
/* hello: the bundled example. Prints a greeting and its arguments, exits
 * with the argument count, so exit status and argv handling are checked. */
#include "sys.h"

GUEST_START

void cmain(long *sp) {
  long argc = sp[0];
  char **argv = (char **)(sp + 1);
  g_puts("Hello from tracecorn!\n");
  for (long i = 1; i < argc; i++) {
    g_puts("arg: ");
    g_puts(argv[i]);
    g_puts("\n");
  }
  g_exit((int)argc - 1);
}
