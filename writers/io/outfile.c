/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Temporary output names and their commit (see outfile.h). */
#include "writers/io/outfile.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "writers/format.h"
#include "writers/io/zst.h"

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

/* 1 if dir (resolved) is a process's descriptor directory, /proc/PID/fd
 * or /proc/PID/task/TID/fd; *pid is PID. */
static bool proc_fd_dir(const char *dir, long *pid) {
  char *end;
  if (strncmp(dir, "/proc/", 6) != 0)
    return false;
  *pid = strtol(dir + 6, &end, 10);
  if (end == dir + 6 || *pid <= 0)
    return false;
  if (strncmp(end, "/task/", 6) == 0) {
    const char *t = end + 6;
    strtol(t, &end, 10);
    if (end == t)
      return false;
  }
  return strcmp(end, "/fd") == 0;
}

/* The descriptor of this process that path names through its symlinks
 * (/dev/stdout -> /proc/self/fd/1, /dev/fd/N, /proc/self/fd/N): N, -2
 * for another process's descriptor, -1 for none. Each link is read as
 * text (readlink), so a descriptor's own target is never followed. */
static int named_fd(const char *path) {
  char cur[PATH_MAX], dir[PATH_MAX], rdir[PATH_MAX], link[PATH_MAX];
  if (snprintf(cur, sizeof cur, "%s", path) >= (int)sizeof cur)
    return -1;
  for (int hops = 0; hops < 40; hops++) {
    const char *slash = strrchr(cur, '/');
    const char *base = slash ? slash + 1 : cur;
    if (!slash)
      snprintf(dir, sizeof dir, ".");
    else
      snprintf(dir, sizeof dir, "%.*s", slash == cur ? 1 : (int)(slash - cur),
               cur);
    if (!realpath(dir, rdir))
      return -1;
    long pid;
    if (proc_fd_dir(rdir, &pid)) {
      char *end;
      long n = strtol(base, &end, 10);
      if (end == base || *end || n < 0 || n > INT_MAX)
        return -1;
      return pid == (long)getpid() ? (int)n : -2;
    }
    struct stat st;
    if (lstat(cur, &st) != 0 || !S_ISLNK(st.st_mode))
      return -1;
    ssize_t k = readlink(cur, link, sizeof link - 1);
    if (k <= 0)
      return -1;
    link[k] = 0;
    int w = link[0] == '/' ? snprintf(cur, sizeof cur, "%s", link)
                           : snprintf(cur, sizeof cur, "%s/%s",
                                      strcmp(rdir, "/") == 0 ? "" : rdir, link);
    if (w < 0 || w >= (int)sizeof cur)
      return -1;
  }
  return -1;
}

int tc_output_is_stream(const char *path) {
  struct stat st;
  if (strcmp(path, "-") == 0 || named_fd(path) != -1)
    return 1;
  return stat(path, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode);
}

int tc_outfile_open(const char *path, int mode) {
  int fd = strcmp(path, "-") == 0 ? 1 : named_fd(path);
  if (fd >= 0)
    return fcntl(fd, F_DUPFD_CLOEXEC, 3);
  return open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
}

FILE *tc_outfile_fopen(const char *path, const char *mode) {
  int fd = tc_outfile_open(path, 0666);
  if (fd < 0)
    return NULL;
  FILE *f = fdopen(fd, mode);
  if (!f) {
    int e = errno;
    close(fd);
    errno = e;
  }
  return f;
}

int tc_output_clobbers(const char *path, const tc_format *fmt) {
  struct stat st;
  if (tc_output_is_stream(path) || stat(path, &st) != 0)
    return 0;
  if (S_ISREG(st.st_mode) && st.st_size == 0)
    return 0;
  tc_error err = {{0}};
  if (tc_format_detect(path, &err))
    return 0;
  if (S_ISDIR(st.st_mode) || !fmt)
    return 1;
  /* Writers without a reader: their own first bytes. */
  const char *sig = strcmp(fmt->name, "text") == 0   ? "# tracecorn trace: "
                    : strcmp(fmt->name, "json") == 0 ? "{\"type\":"
                                                     : NULL;
  char head[32] = {0};
  FILE *f = sig ? fopen(path, "rb") : NULL;
  if (f) {
    size_t n = fread(head, 1, sizeof head - 1, f);
    head[n] = 0;
    fclose(f);
    if (strncmp(head, sig, strlen(sig)) == 0)
      return 0;
  }
  return 1;
}

void tc_outfile_discard(const char *tmp) {
  if (!tc_output_is_stream(tmp)) /* never /dev/stdout itself */
    remove_output(tmp);
}

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
  bool zst = tc_zst_name(final);
  size_t len = strlen(final) - (zst ? 4 : 0);
  if (tc_output_is_stream(final)) {
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
  bool direct = tc_output_is_stream(final);
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
