/* SPDX-License-Identifier: GPL-2.0-or-later */
/* TRACE.tcidx: the seek index of a format that cannot seek (index.h). */
#include "analysis/index.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/md5.h"
#include "writers/format.h"

#define STAMP_EDGE (64u << 10)

void tc_index_dir(const char *trace, char *out, size_t max) {
  size_t n = strlen(trace);
  while (n > 1 && trace[n - 1] == '/')
    n--;
  snprintf(out, max, "%.*s.tcidx", (int)n, trace);
}

static void hex16(const uint8_t d[16], char out[33]) {
  for (int i = 0; i < 16; i++)
    snprintf(out + 2 * i, 3, "%02x", d[i]);
}

/* What identifies the trace: its format, size, modification time and the
 * digests of its first and last 64 KiB. -1 if it cannot be read. */
static int make_stamp(const char *trace, const tc_format *fmt, char *out,
                      size_t max) {
  int fd = open(trace, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return -1;
  struct stat st;
  uint8_t *buf = malloc(STAMP_EDGE);
  if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || !buf) {
    free(buf);
    close(fd);
    return -1;
  }
  char head[33], tail[33];
  uint8_t d[16];
  ssize_t k = pread(fd, buf, STAMP_EDGE, 0);
  tc_md5(buf, k > 0 ? (size_t)k : 0, d);
  hex16(d, head);
  off_t at = st.st_size > (off_t)STAMP_EDGE ? st.st_size - STAMP_EDGE : 0;
  k = pread(fd, buf, STAMP_EDGE, at);
  tc_md5(buf, k > 0 ? (size_t)k : 0, d);
  hex16(d, tail);
  free(buf);
  close(fd);
  snprintf(out, max,
           "tracecorn index 1\nformat %s\nsize %" PRIu64
           "\nmtime %lld.%09ld\nhead %s\ntail %s\n",
           fmt->name, (uint64_t)st.st_size, (long long)st.st_mtim.tv_sec,
           st.st_mtim.tv_nsec, head, tail);
  return 0;
}

int tc_index_find(const char *trace, const tc_format *fmt, char *tct,
                  size_t max) {
  if (fmt->seek || !fmt->open_reader)
    return 0;
  char dir[4200], path[4300], want[512], have[512];
  tc_index_dir(trace, dir, sizeof dir);
  snprintf(path, sizeof path, "%s/stamp", dir);
  FILE *f = fopen(path, "re");
  if (!f)
    return 0;
  size_t n = fread(have, 1, sizeof have - 1, f);
  fclose(f);
  have[n] = 0;
  if (make_stamp(trace, fmt, want, sizeof want) < 0 || strcmp(have, want))
    return 0;
  snprintf(tct, max, "%s/trace.tct", dir);
  return access(tct, R_OK) == 0;
}

/* The reader's events, each as it comes, into a tct at path (through a
 * temporary name): not tc_convert, which rebuilds a memory image and adds
 * an exit the input lacks; the index must give what the trace gives. */
static int copy_events(const char *trace, const tc_format *fmt,
                       const char *path, tc_error *err) {
  const tc_format *tct = tc_format_by_name("tct");
  char tmp[4400];
  snprintf(tmp, sizeof tmp, "%s.tmp", path);
  tc_reader *r = fmt->open_reader(trace, err);
  if (!r)
    return -1;
  tc_trace_info info = *fmt->reader_info(r);
  info.continuous = 0;
  /* chunks of 2^18 instructions (2^19 where the trace has no keyframes):
   * a seek decodes at most that much, for a few KB per chunk */
  static const char *const chunked[] = {"tct.chunk=262144", NULL};
  info.writer_options = chunked;
  tc_writer *w = tct->open_writer(tmp, &info, err);
  if (!w) {
    fmt->close_reader(r);
    return -1;
  }
  tc_event ev;
  int rc;
  bool exited = false;
  uint64_t insns = 0;
  while ((rc = fmt->next_event(r, &ev, err)) == 1) {
    exited |= ev.kind == TC_EV_EXIT;
    insns += ev.kind == TC_EV_INSN;
    if (tct->write_event(w, &ev, err) < 0) {
      rc = -1;
      break;
    }
  }
  if (rc == 0 && !exited) {
    /* tct ends with an exit record; a format without one (trac, tfile)
     * gets the one a reading of it ends with (tc_convert's, and
     * TC_INDEX_NO_EXIT for tc_trace_summarize, which shows none) */
    char msg[128];
    snprintf(msg, sizeof msg, TC_INDEX_NO_EXIT, fmt->name);
    tc_event x = {.kind = TC_EV_EXIT};
    x.u.exit.reason = TC_EXIT_ERROR;
    x.u.exit.insn_count = insns;
    x.u.exit.message = msg;
    rc = tct->write_event(w, &x, err);
  }
  fmt->close_reader(r);
  tc_error cerr = {{0}};
  if (tct->close_writer(w, rc < 0 ? &cerr : err) < 0)
    rc = -1;
  if (rc < 0 || rename(tmp, path) < 0) {
    if (rc == 0)
      tc_error_set(err, "%s: %s", path, strerror(errno));
    unlink(tmp);
    unlink(path);
    return -1;
  }
  return 0;
}

int tc_index_build(const char *trace, const tc_format *fmt, tc_error *err) {
  char dir[4200], stamp[4300], tmp[4300], tct[4300], text[512];
  if (fmt->seek || !fmt->open_reader || (fmt->caps & TC_CAP_COVERAGE)) {
    tc_error_set(err, "%s: the %s format needs no index", trace, fmt->name);
    return -1;
  }
  if (make_stamp(trace, fmt, text, sizeof text) < 0) {
    tc_error_set(err, "%s: cannot read it: %s", trace, strerror(errno));
    return -1;
  }
  tc_index_dir(trace, dir, sizeof dir);
  if (mkdir(dir, 0755) < 0 && errno != EEXIST) {
    tc_error_set(err, "%s: cannot make the index: %s", dir, strerror(errno));
    return -1;
  }
  snprintf(stamp, sizeof stamp, "%s/stamp", dir);
  snprintf(tmp, sizeof tmp, "%s/stamp.tmp", dir);
  snprintf(tct, sizeof tct, "%s/trace.tct", dir);
  /* the stamp goes last: an index half rebuilt is never trusted */
  if (unlink(stamp) < 0 && errno != ENOENT) {
    tc_error_set(err, "%s: %s", stamp, strerror(errno));
    return -1;
  }
  if (copy_events(trace, fmt, tct, err) < 0) {
    rmdir(dir);
    return -1;
  }
  FILE *f = fopen(tmp, "we");
  bool ok = f && fputs(text, f) >= 0;
  if (f && fclose(f) != 0)
    ok = false;
  if (!ok || rename(tmp, stamp) < 0) {
    tc_error_set(err, "%s: cannot write the index's stamp: %s", dir,
                 strerror(errno));
    unlink(tmp);
    return -1;
  }
  return 0;
}
