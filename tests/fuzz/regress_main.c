/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Replays every file under a directory through a fuzz harness, without
 * libFuzzer: the regression tests of the crashes the fuzzers found
 * (tests/fuzz/regress/<harness>/). Under the ASan build an allocation
 * above the test's max_allocation_size_mb counts as a failure too. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/fuzz/fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int main(int argc, char **argv) {
  int n = 0;
  for (int i = 1; i < argc; i++) {
    DIR *d = opendir(argv[i]);
    if (!d) {
      perror(argv[i]);
      return 1;
    }
    struct dirent *e;
    char p[4096];
    while ((e = readdir(d)) != NULL) {
      if (e->d_name[0] == '.')
        continue;
      snprintf(p, sizeof p, "%s/%s", argv[i], e->d_name);
      size_t len;
      uint8_t *data = fz_read_file(p, &len);
      if (!data) {
        perror(p);
        closedir(d);
        return 1;
      }
      printf("%s\n", p);
      fflush(stdout);
      LLVMFuzzerTestOneInput(data, len);
      free(data);
      n++;
    }
    closedir(d);
  }
  printf("%d inputs replayed\n", n);
  return 0;
}
