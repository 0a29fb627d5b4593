/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Helpers the commands share: numbers, sizes, files, output names. */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "analysis/index.h"
#include "tools/cli.h"
#include "writers/format.h"

int parse_u64(const char *s, uint64_t *out) {
  char *end;
  errno = 0;
  unsigned long long v = strtoull(s, &end, 0);
  if (errno || end == s || *end || s[0] == '-')
    return -1;
  *out = v;
  return 0;
}

/* A size: a number with an optional K, M, G or T suffix (powers of
 * 1024), more than 0. */
int parse_size(const char *s, uint64_t *out) {
  char *end = NULL;
  errno = 0;
  unsigned long long v = strtoull(s, &end, 0);
  unsigned shift = 0;
  if (end && *end && !end[1])
    shift = *end == 'K' || *end == 'k'   ? 10
            : *end == 'M' || *end == 'm' ? 20
            : *end == 'G' || *end == 'g' ? 30
            : *end == 'T' || *end == 't' ? 40
                                         : 99;
  else if (end && *end)
    shift = 99;
  if (errno || end == s || s[0] == '-' || shift == 99 || v == 0 ||
      v > (UINT64_MAX >> shift))
    return -1;
  *out = (uint64_t)v << shift;
  return 0;
}

const char *base_name(const char *p) {
  const char *s = strrchr(p, '/');
  return s ? s + 1 : p;
}

void human_size(uint64_t n, char *out, size_t max) {
  if (n < 10 * 1024)
    snprintf(out, max, "%" PRIu64 " B", n);
  else if (n < 10 * 1024 * 1024)
    snprintf(out, max, "%.1f KiB", n / 1024.0);
  else
    snprintf(out, max, "%.1f MiB", n / 1048576.0);
}

/* Bytes of an output: a file, or the files of a directory output (rvn). */
/* Removes an output file, or a directory output and its files. */
void remove_output(const char *path) {
  if (unlink(path) == 0 || errno != EISDIR)
    return;
  DIR *d = opendir(path);
  for (struct dirent *e; d && (e = readdir(d));) {
    char sub[PATH_MAX + 512];
    snprintf(sub, sizeof sub, "%s/%s", path, e->d_name);
    if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
      unlink(sub);
  }
  if (d)
    closedir(d);
  rmdir(path);
}

/* 1 if path is "-" or the same pipe, socket or file as tracecorn's own
 * stdout or stderr (terminals and /dev/null aside), which the recorded
 * program writes to. */
int is_own_stdio(const char *path) {
  struct stat a, b;
  if (strcmp(path, "-") == 0)
    return 1;
  if (stat(path, &a) != 0 || S_ISCHR(a.st_mode))
    return 0;
  for (int fd = 1; fd <= 2; fd++)
    if (fstat(fd, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino)
      return 1;
  return 0;
}

void refuse_clobber(const char *path) {
  fprintf(stderr,
          "tracecorn: %s exists and is not a trace file; not overwriting it "
          "(--force does)\n",
          path);
}

static int cmp_pid(const void *a, const void *b) {
  unsigned long x = *(const unsigned long *)a, y = *(const unsigned long *)b;
  return x < y ? -1 : x > y;
}

int cli_family_find(const char *path, const char *ext, cli_family *fam,
                    char *parent, size_t parent_max, unsigned long *child_pid) {
  memset(fam, 0, sizeof *fam);
  if (parent_max)
    parent[0] = 0;
  const char *slash = strrchr(path, '/');
  const char *base = slash ? slash + 1 : path;
  char dir[PATH_MAX];
  snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - path) + 1 : 0, path);
  size_t n = strlen(base), e = strlen(ext);
  bool zst = n > 4 && strcmp(base + n - 4, ".zst") == 0;
  size_t tail = e + (zst ? 4 : 0);
  if (!e || n <= tail || strncmp(base + n - tail, ext, e) != 0)
    return -1;
  size_t stem = n - tail; /* base[0, stem) is PREFIX */
  /* A child: PREFIX ends in .PID and PREFIX without it names a file. */
  size_t d = stem;
  while (d > 0 && base[d - 1] >= '0' && base[d - 1] <= '9')
    d--;
  if (d > 1 && d < stem && base[d - 1] == '.') {
    char up[PATH_MAX];
    int k = snprintf(up, sizeof up, "%s%.*s%s", dir, (int)(d - 1), base,
                     base + stem);
    if (k > 0 && (size_t)k < sizeof up && access(up, F_OK) == 0) {
      snprintf(parent, parent_max, "%s", up);
      *child_pid = strtoul(base + d, NULL, 10);
      return 0;
    }
  }
  DIR *dp = opendir(slash ? dir : ".");
  if (!dp)
    return 0;
  struct dirent *de;
  while ((de = readdir(dp))) {
    const char *x = de->d_name;
    size_t m = strlen(x);
    if (m <= n + 1 || strncmp(x, base, stem) != 0 || x[stem] != '.' ||
        strcmp(x + m - tail, base + stem) != 0)
      continue;
    char *end;
    unsigned long pid = strtoul(x + stem + 1, &end, 10);
    if (end == x + stem + 1 || end != x + m - tail)
      continue;
    if (fam->n < CLI_FAMILY_MAX)
      fam->pids[fam->n++] = pid;
    else
      fam->more++;
  }
  closedir(dp);
  qsort(fam->pids, (size_t)fam->n, sizeof *fam->pids, cmp_pid);
  int kept = 0;
  for (int i = 0; i < fam->n; i++) {
    int k = snprintf(fam->paths[kept], sizeof fam->paths[kept], "%s%.*s.%lu%s",
                     dir, (int)stem, base, fam->pids[i], base + stem);
    if (k > 0 && (size_t)k < sizeof fam->paths[kept])
      fam->pids[kept++] = fam->pids[i];
  }
  fam->n = kept;
  return 0;
}

void cli_index_large(const char *path, const tc_format *fmt) {
  struct stat st;
  char tct[4300];
  tc_error err = {{0}};
  if (stat(path, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size < CLI_INDEX_AT)
    return;
  if (!fmt && !(fmt = tc_format_detect(path, &err)))
    return;
  if (fmt->seek || !fmt->open_reader || (fmt->caps & TC_CAP_COVERAGE) ||
      tc_index_find(path, fmt, tct, sizeof tct) == 1)
    return;
  char dir[4200];
  tc_index_dir(path, dir, sizeof dir);
  fprintf(stderr,
          "tracecorn: indexing %s once, into %s, so that seeks and counts "
          "answer at once\n",
          path, dir);
  if (tc_index_build(path, fmt, &err) < 0)
    fprintf(stderr, "tracecorn: no index (%s); reading the whole file\n",
            err.msg);
}
