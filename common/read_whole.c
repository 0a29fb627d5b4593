/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "common/read_whole.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

void *tc_read_whole(const char *path, size_t *n) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return NULL;
  struct stat st;
  if (fstat(fileno(f), &st) < 0 || st.st_size > (1 << 30)) {
    fclose(f);
    errno = EFBIG;
    return NULL;
  }
  void *buf = malloc((size_t)st.st_size + 1);
  if (buf && fread(buf, 1, (size_t)st.st_size, f) != (size_t)st.st_size) {
    free(buf);
    buf = NULL;
  }
  fclose(f);
  *n = (size_t)st.st_size;
  return buf;
}
