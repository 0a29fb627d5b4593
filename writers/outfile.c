/* Temporary output names and their commit (see outfile.h). */
#include "writers/outfile.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Removes a directory output and the regular files in it (one level: the
 * only directory format, REVEN's, holds trace.bin and trace.cache). */
static int remove_dir_output(const char *path) {
  DIR *d = opendir(path);
  if (!d)
    return -1;
  struct dirent *e;
  char sub[4200];
  while ((e = readdir(d))) {
    if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
      continue;
    snprintf(sub, sizeof sub, "%s/%s", path, e->d_name);
    unlink(sub);
  }
  closedir(d);
  return rmdir(path);
}

static void remove_output(const char *path) {
  struct stat st;
  if (lstat(path, &st) != 0)
    return;
  if (S_ISDIR(st.st_mode))
    remove_dir_output(path);
  else
    unlink(path);
}

void tc_outfile_discard(const char *tmp) { remove_output(tmp); }

uint64_t tc_output_size(const char *path) {
  struct stat st;
  if (stat(path, &st) < 0)
    return 0;
  if (!S_ISDIR(st.st_mode))
    return (uint64_t)st.st_size;
  uint64_t total = 0;
  DIR *d = opendir(path);
  for (struct dirent *e; d && (e = readdir(d));) {
    char sub[4200];
    int k = snprintf(sub, sizeof sub, "%s/%s", path, e->d_name);
    if (k < 0 || (size_t)k >= sizeof sub)
      continue;
    if (e->d_name[0] != '.' && stat(sub, &st) == 0 && S_ISREG(st.st_mode))
      total += (uint64_t)st.st_size;
  }
  if (d)
    closedir(d);
  return total;
}

void tc_outfile_temp(const char *final, char *tmp, size_t max) {
  struct stat st;
  if (strcmp(final, "-") == 0 ||
      (stat(final, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode))) {
    snprintf(tmp, max, "%s", final);
    return;
  }
  const char *slash = strrchr(final, '/');
  const char *base = slash ? slash + 1 : final;
  const char *dot = strrchr(base, '.');
  if (!dot || dot == base)
    snprintf(tmp, max, "%s.partial", final);
  else
    snprintf(tmp, max, "%.*s.partial%s", (int)(dot - final), final, dot);
  remove_output(tmp);
}

int tc_outfile_commit(const char *tmp, const char *final, tc_error *err) {
  if (strcmp(tmp, final) == 0)
    return 0;
  struct stat st;
  if (lstat(final, &st) == 0 && S_ISDIR(st.st_mode))
    remove_dir_output(final); /* rename cannot replace a directory */
  if (rename(tmp, final) != 0) {
    tc_error_set(err,
                 "%s: cannot rename to %s: %s (the trace is complete there)",
                 tmp, final, strerror(errno));
    return -1;
  }
  return 0;
}
