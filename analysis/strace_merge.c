/* SPDX-License-Identifier: GPL-2.0-or-later */
/* strace -f: the strace listings of a recording's processes merged in the
 * order they ran (strace_merge.h). Format-neutral: the strace writer makes
 * each process's listing, with turn markers (strace.turns=1). */
#include "analysis/strace_merge.h"

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/notice.h"
#include "common/read_whole.h"

typedef struct strace_seg {
  long long turn; /* -1: before the process's first turn */
  int member;     /* the file it came from: 0 is the first */
  size_t seq;     /* its place in that file */
  char *text;     /* whole lines */
  size_t len;
} strace_seg;

static int seg_cmp(const void *a, const void *b) {
  const strace_seg *x = a, *y = b;
  if (x->turn != y->turn)
    return x->turn < y->turn ? -1 : 1;
  if (x->member != y->member)
    return x->member < y->member ? -1 : 1;
  return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Each file's strace lines with turn markers (strace.turns=1), cut at the
 * markers into segments; segments sorted by turn (processes run one at a
 * time, so a turn's lines come after every earlier turn's) and printed
 * with strace -f's "[pid N] " while more than one process lives. */
int tc_strace_merge(const char *const *paths, int npaths, const tc_format *in,
                    const tc_filter *filter, const char *sopt, FILE *out,
                    tc_error *err) {
  const char *tmp = getenv("TMPDIR");
  char dir[PATH_MAX];
  snprintf(dir, sizeof dir, "%s/tracecorn-strace-XXXXXX",
           tmp && *tmp ? tmp : "/tmp");
  if (!mkdtemp(dir)) {
    tc_error_set(err, "strace: cannot make a temporary directory: %s",
                 strerror(errno));
    return -1;
  }
  const char *wopts[3] = {"strace.turns=1", sopt, NULL};
  strace_seg *segs = NULL;
  size_t nsegs = 0, capsegs = 0;
  char **bufs = calloc((size_t)npaths, sizeof *bufs);
  unsigned *pids = calloc((size_t)npaths, sizeof *pids);
  bool *born = calloc((size_t)npaths, sizeof *born);
  int rc = 0, unordered = 0;
  if (!bufs || !pids || !born) {
    tc_error_set(err, "out of memory");
    rc = -1;
  }
  for (int i = 0; rc == 0 && i < npaths; i++) {
    char listing[PATH_MAX + 32];
    snprintf(listing, sizeof listing, "%s/%d.strace", dir, i);
    int k = tc_convert_filtered(paths[i], in, tc_format_by_name("strace"),
                                listing, filter, wopts, err);
    size_t n = 0;
    char *text = k < 0 ? NULL : tc_read_whole(listing, &n);
    unlink(listing);
    if (k < 0 || !text) {
      if (k == 0)
        tc_error_set(err, "strace: cannot read back a process's calls: %s",
                     strerror(errno));
      free(text);
      rc = -1;
      break;
    }
    bufs[i] = text;
    long long turn = -1;
    bool marked = false;
    for (char *p = text, *end = text + n; p < end;) {
      char *nl = memchr(p, '\n', (size_t)(end - p));
      char *next = nl ? nl + 1 : end;
      if (*p == '\036') {
        if (!strncmp(p, "\036pid ", 5))
          pids[i] = (unsigned)strtoul(p + 5, NULL, 10);
        else if (!strncmp(p, "\036turn ", 6)) {
          turn = strtoll(p + 6, NULL, 10);
          marked = true;
        }
        p = next;
        continue;
      }
      strace_seg *last = nsegs ? &segs[nsegs - 1] : NULL;
      if (last && last->member == i && last->turn == turn &&
          last->text + last->len == p) {
        last->len += (size_t)(next - p);
      } else {
        if (nsegs == capsegs) {
          size_t cap = capsegs ? 2 * capsegs : 64;
          strace_seg *g = realloc(segs, cap * sizeof *g);
          if (!g) {
            tc_error_set(err, "out of memory");
            rc = -1;
            break;
          }
          segs = g;
          capsegs = cap;
        }
        segs[nsegs] = (strace_seg){turn, i, nsegs, p, (size_t)(next - p)};
        nsegs++;
      }
      p = next;
    }
    if (i > 0 && !marked)
      unordered++;
  }
  rmdir(dir);
  if (rc == 0 && unordered) {
    /* a format without scheduler turns: each process after the last */
    tc_notice("strace: %d of the files hold no scheduler turns (only tct "
              "does): each process's calls follow the previous process's, not "
              "in time order",
              unordered);
    for (size_t j = 0; j < nsegs; j++)
      segs[j].turn = -1;
  }
  if (rc == 0)
    qsort(segs, nsegs, sizeof *segs, seg_cmp);
  int live = npaths ? 1 : 0;
  if (npaths)
    born[0] = true;
  const char *resumed[8]; /* vfork lines shown as strace's resumptions */
  int nresumed = 0;
  for (size_t j = 0; rc == 0 && j < nsegs; j++) {
    const strace_seg *g = &segs[j];
    if (!born[g->member]) {
      /* A child that runs before its parent's fork line: a vfork, whose
       * parent waits in it. strace shows the call unfinished here and
       * resumed where it returns. */
      char want[32];
      snprintf(want, sizeof want, " = %u\n", pids[g->member]);
      for (size_t k = j + 1; k < nsegs && nresumed < 8; k++) {
        const char *t = segs[k].text, *e = t + segs[k].len;
        const char *hit = NULL;
        for (const char *q = t; q < e && !hit;) {
          const char *nl = memchr(q, '\n', (size_t)(e - q));
          const char *next = nl ? nl + 1 : e;
          size_t wl = strlen(want);
          if (!strncmp(q, "vfork()", 7) && (size_t)(next - q) > wl &&
              !memcmp(next - wl, want, wl))
            hit = q;
          q = next;
        }
        if (hit) {
          resumed[nresumed++] = hit;
          if (live + 1 > 1)
            fprintf(out, "[pid %5u] ", pids[segs[k].member]);
          fprintf(out, "vfork( <unfinished ...>\n");
          break;
        }
      }
      born[g->member] = true;
      live++;
    }
    for (const char *p = g->text, *end = g->text + g->len; p < end;) {
      const char *nl = memchr(p, '\n', (size_t)(end - p));
      size_t len = (size_t)((nl ? nl + 1 : end) - p);
      if (live > 1)
        fprintf(out, "[pid %5u] ", pids[g->member]);
      bool resumption = false;
      for (int k = 0; k < nresumed; k++)
        resumption |= resumed[k] == p;
      if (resumption) {
        const char *eq = strstr(p, " = ");
        fprintf(out, "%-39s%.*s", "<... vfork resumed>)", (int)(p + len - eq),
                eq);
      } else {
        fwrite(p, 1, len, out);
      }
      if (!strncmp(p, "+++ ", 4) && live > 0)
        live--; /* it exited or was killed */
      else if (!strncmp(p, "clone", 5) || !strncmp(p, "fork(", 5) ||
               !strncmp(p, "vfork(", 6)) {
        /* a child is born at its parent's fork, as strace -f counts */
        const char *eq = NULL;
        for (const char *q = p; q + 3 < p + len; q++)
          if (!memcmp(q, " = ", 3))
            eq = q;
        unsigned long child = eq ? strtoul(eq + 3, NULL, 10) : 0;
        for (int m = 0; child && m < npaths; m++)
          if (!born[m] && pids[m] == child) {
            born[m] = true;
            live++;
          }
      }
      p += len;
    }
  }
  if (rc == 0 && (fflush(out) != 0 || ferror(out))) {
    tc_error_set(err, "strace: writing the output failed: %s", strerror(errno));
    rc = -1;
  }
  for (int i = 0; bufs && i < npaths; i++)
    free(bufs[i]);
  free(bufs);
  free(pids);
  free(born);
  free(segs);
  return rc;
}
