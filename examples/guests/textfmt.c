/* SPDX-License-Identifier: GPL-2.0-or-later */
/* textfmt: a static glibc workload for bench/: N lines formatted with
 * snprintf (integers, floating point, strings), then parsed back with
 * strtol/strtod and summed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv) {
  long n = argc > 1 ? atol(argv[1]) : 1000;
  char line[128];
  double fsum = 0;
  long isum = 0;
  size_t bytes = 0;
  for (long i = 0; i < n; i++) {
    int len = snprintf(line, sizeof line, "%ld %08lx %.3f item-%ld\n", i * 7,
                       (unsigned long)i * 2654435761ul, (double)i / 7.0, i);
    bytes += (size_t)len;
    char *end;
    isum += strtol(line, &end, 10);
    strtoul(end, &end, 16);
    fsum += strtod(end, &end);
    if (!strstr(end, "item-"))
      return 1;
  }
  printf("textfmt: %ld lines, %zu bytes, %ld %.3f\n", n, bytes, isum, fsum);
  return 0;
}
