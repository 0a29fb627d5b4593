/* Temporary output names and their commit (see outfile.h). */
#include "writers/outfile.h"

#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "writers/zst.h"

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

/* "DIR/NAME.partial.EXT" for "DIR/NAME.EXT" ("NAME.partial" without an
 * extension). */
static void partial_name(const char *final, size_t len, char *tmp, size_t max) {
  const char *slash = memrchr(final, '/', len);
  const char *base = slash ? slash + 1 : final;
  const char *dot = memrchr(base, '.', len - (size_t)(base - final));
  if (!dot || dot == base)
    snprintf(tmp, max, "%.*s.partial", (int)len, final);
  else
    snprintf(tmp, max, "%.*s.partial%.*s", (int)(dot - final), final,
             (int)(len - (size_t)(dot - final)), dot);
}

void tc_outfile_temp(const char *final, char *tmp, size_t max) {
  struct stat st;
  bool zst = tc_zst_name(final);
  size_t len = strlen(final) - (zst ? 4 : 0);
  if (strcmp(final, "-") == 0 ||
      (stat(final, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode))) {
    if (!zst) {
      snprintf(tmp, max, "%s", final);
      return;
    }
    /* A FIFO or device named *.zst: the plain trace goes to a temporary
     * file, compressed into it at commit. */
    const char *dir = getenv("TMPDIR");
    const char *slash = memrchr(final, '/', len);
    const char *base = slash ? slash + 1 : final;
    snprintf(tmp, max, "%s/tracecorn-%ld-%.*s", dir && *dir ? dir : "/tmp",
             (long)getpid(), (int)(len - (size_t)(base - final)), base);
  } else {
    partial_name(final, len, tmp, max);
  }
  remove_output(tmp);
  if (zst) {
    char ztmp[4200];
    snprintf(ztmp, sizeof ztmp, "%s.zst", tmp);
    remove_output(ztmp);
  }
}

int tc_outfile_check(const char *tmp, const char *final, tc_error *err) {
  struct stat st;
  if (tc_zst_name(final) && strcmp(tmp, final) != 0 && stat(tmp, &st) == 0 &&
      S_ISDIR(st.st_mode)) {
    tc_error_set(err,
                 "%s: this format writes a directory, which .zst cannot "
                 "hold (write it without .zst)",
                 final);
    return -1;
  }
  return 0;
}

static int rename_over(const char *tmp, const char *final, tc_error *err) {
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

/* A .zst output: the plain trace in tmp compressed into final (through
 * tmp.zst, renamed, when final is a regular file), tmp removed. */
static int commit_zst(const char *tmp, const char *final, tc_error *err) {
  struct stat st;
  if (stat(tmp, &st) == 0 && S_ISDIR(st.st_mode))
    return tc_outfile_check(tmp, final, err);
  bool direct =
      stat(final, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode);
  char ztmp[4200];
  snprintf(ztmp, sizeof ztmp, "%s%s", direct ? final : tmp,
           direct ? "" : ".zst");
  tc_error why = {{0}};
  if (tc_zst_compress_file(tmp, ztmp, &why) < 0) {
    tc_error_set(err,
                 "%s: cannot compress: %s (the trace is complete, "
                 "uncompressed, in %s)",
                 final, why.msg, tmp);
    return -1;
  }
  unlink(tmp);
  if (!direct && rename_over(ztmp, final, err) < 0)
    return -1;
  return 0;
}

int tc_outfile_commit(const char *tmp, const char *final, tc_error *err) {
  if (strcmp(tmp, final) == 0)
    return 0;
  if (tc_zst_name(final))
    return commit_zst(tmp, final, err);
  return rename_over(tmp, final, err);
}

int tc_outfile_close_stream(FILE *f, int own, const char *path, tc_error *err) {
  int rc = 0;
  if (fflush(f) != 0 || ferror(f)) {
    tc_error_set(err, "%s: write failed: %s", path, strerror(errno));
    rc = -1;
  }
  if (own && fclose(f) != 0 && rc == 0) {
    tc_error_set(err, "%s: %s", path, strerror(errno));
    rc = -1;
  }
  return rc;
}

void tc_outfile_buffer(FILE *f, char **buf) {
  enum { SIZE = 1 << 20 };
  *buf = f ? malloc(SIZE) : NULL;
  if (*buf)
    setvbuf(f, *buf, _IOFBF, SIZE);
}
