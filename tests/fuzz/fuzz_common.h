/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Helpers shared by the fuzz harnesses and the seed generator. */
#ifndef TC_FUZZ_COMMON_H
#define TC_FUZZ_COMMON_H

#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static inline uint8_t *fz_read_file(const char *path, size_t *n) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return NULL;
  size_t cap = 1 << 16, len = 0;
  uint8_t *d = malloc(cap);
  size_t got;
  while (d && (got = fread(d + len, 1, cap - len, f)) > 0) {
    len += got;
    if (len == cap) {
      uint8_t *nd = realloc(d, cap *= 2);
      if (!nd)
        free(d);
      d = nd;
    }
  }
  fclose(f);
  *n = len;
  return d;
}

static inline int fz_write_file(const char *path, const uint8_t *d, size_t n) {
  FILE *f = fopen(path, "wb");
  if (!f)
    return -1;
  int ok = fwrite(d, 1, n, f) == n;
  return (fclose(f) == 0 && ok) ? 0 : -1;
}

/* Removes a file or a directory one level deep (all the traces need). */
static inline void fz_rmtree(const char *path) {
  DIR *d = opendir(path);
  if (d) {
    struct dirent *e;
    char sub[4096];
    while ((e = readdir(d)) != NULL) {
      if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
        continue;
      int k = snprintf(sub, sizeof sub, "%s/%s", path, e->d_name);
      if (k > 0 && (size_t)k < sizeof sub)
        fz_rmtree(sub);
    }
    closedir(d);
    rmdir(path);
  } else {
    unlink(path);
  }
}

/* The file name extension the harness gives each format's input (trac
 * readers look at it; rvn's is a directory). */
static inline const char *fz_extension(const char *format) {
  static const char *const ext[][2] = {
      {"tct", ".tct"},     {"trac", ".trace64"}, {"tfile", ".tf"},
      {"ucir", ".ucir"},   {"bap", ".frames"},   {"rvn", ".rvn"},
      {"drcov", ".drcov"}, {"tenet", ".tenet"}};
  for (size_t i = 0; i < sizeof ext / sizeof ext[0]; i++)
    if (strcmp(ext[i][0], format) == 0)
      return ext[i][1];
  return "";
}

/* An rvn trace is a directory of two files; a fuzz input holds both:
 * u32 little-endian length of trace.cache, trace.cache, trace.bin. */
static inline int fz_pack_rvn(const char *dir, const char *out) {
  char p[4096];
  size_t nc = 0, nb = 0;
  snprintf(p, sizeof p, "%s/trace.cache", dir);
  uint8_t *c = fz_read_file(p, &nc);
  snprintf(p, sizeof p, "%s/trace.bin", dir);
  uint8_t *b = fz_read_file(p, &nb);
  uint8_t *all = c && b ? malloc(4 + nc + nb) : NULL;
  int rc = -1;
  if (all) {
    for (int i = 0; i < 4; i++)
      all[i] = (uint8_t)(nc >> (8 * i));
    memcpy(all + 4, c, nc);
    memcpy(all + 4 + nc, b, nb);
    rc = fz_write_file(out, all, 4 + nc + nb);
  }
  free(all);
  free(c);
  free(b);
  return rc;
}

#endif
