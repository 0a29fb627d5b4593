/* SPDX-License-Identifier: GPL-2.0-or-later */
/* strsort: a static glibc workload for bench/: N random words built with
 * malloc, sorted with qsort(strcmp), de-duplicated and hashed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

int main(int argc, char **argv) {
  long n = argc > 1 ? atol(argv[1]) : 1000;
  char **w = malloc(sizeof *w * (size_t)(n > 0 ? n : 1));
  unsigned long x = 12345;
  for (long i = 0; i < n; i++) {
    char buf[16];
    int len = 3 + (int)(x % 9);
    for (int k = 0; k < len; k++) {
      x = x * 6364136223846793005ul + 1442695040888963407ul;
      buf[k] = (char)('a' + (x >> 33) % 8);
    }
    buf[len] = 0;
    w[i] = strdup(buf);
  }
  qsort(w, (size_t)n, sizeof *w, cmp);
  long uniq = 0;
  unsigned long h = 0;
  for (long i = 0; i < n; i++) {
    if (i == 0 || strcmp(w[i], w[i - 1]) != 0)
      uniq++;
    for (const char *p = w[i]; *p; p++)
      h = h * 131 + (unsigned char)*p;
  }
  for (long i = 0; i < n; i++)
    free(w[i]);
  free(w);
  printf("strsort: %ld words, %ld distinct, hash %lx\n", n, uniq, h);
  return 0;
}
