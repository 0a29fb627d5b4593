/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
int main(int argc, char **argv) {
  char *p = malloc(64);
  snprintf(p, 64, "dynamic %s with %d args", argc > 1 ? argv[1] : "-", argc);
  puts(p);
  printf("strlen=%zu\n", strlen(p));
  free(p);
  return 3;
}
