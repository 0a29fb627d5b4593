/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Reading one trace and writing it in another format (dump = convert to
 * text or json on stdout). Format-neutral: only the tc_format vtables. */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "analysis/filter.h"
#include "analysis/index.h"
#include "analysis/rebuild.h"
#include "common/sized.h"
#include "tracecorn/tracecorn.h"
#include "writers/format.h"
#include "writers/io/caps.h"
#include "writers/io/outfile.h"

typedef struct convert_ctx {
  const tc_format *out;
  tc_writer *w;
  bool seen_exit;
  uint64_t insns;
} convert_ctx;

static int convert_sink(void *ctx, const tc_event *ev, tc_error *err) {
  convert_ctx *c = ctx;
  if (ev->kind == TC_EV_EXIT)
    c->seen_exit = true;
  else if (ev->kind == TC_EV_INSN)
    c->insns++;
  return c->out->write_event(c->w, ev, err);
}

int tc_convert(const char *in_path, const tc_format *in_fmt,
               const tc_format *out_fmt, const char *out_path, tc_error *err) {
  return tc_convert_from(in_path, in_fmt, out_fmt, out_path, 0, err);
}

int tc_convert_from(const char *in_path, const tc_format *in_fmt,
                    const tc_format *out_fmt, const char *out_path,
                    uint64_t from_insn, tc_error *err) {
  return tc_convert_opts(in_path, in_fmt, out_fmt, out_path, from_insn, NULL,
                         err);
}

int tc_convert_opts(const char *in_path, const tc_format *in_fmt,
                    const tc_format *out_fmt, const char *out_path,
                    uint64_t from_insn, const char *const *writer_options,
                    tc_error *err) {
  tc_filter f;
  tc_filter_init(&f);
  f.from = from_insn;
  return tc_convert_filtered(in_path, in_fmt, out_fmt, out_path, &f,
                             writer_options, err);
}

int tc_convert_filtered(const char *in_path, const tc_format *in_fmt,
                        const tc_format *out_fmt, const char *out_path,
                        const tc_filter *filter,
                        const char *const *writer_options, tc_error *err) {
  return tc_convert_checked(in_path, in_fmt, out_fmt, out_path, filter,
                            writer_options, 0, NULL, err);
}

/* tc_filter.last: the records the filter selects, counted in a pass of
 * their own that writes nothing, so the real pass can skip all but the
 * last ones. */
static int count_records(const char *in_path, const tc_format *in_fmt,
                         const tc_filter *filter, uint64_t *n, tc_error *err) {
  tc_filter f = *filter;
  f.skip = f.count = f.last = 0;
  const tc_format *rd = in_fmt; /* or its index's tct, as convert() */
  const char *rd_path = in_path;
  char idx[4300];
  if (f.from && !f.no_index &&
      tc_index_find(in_path, in_fmt, idx, sizeof idx) == 1) {
    rd = tc_format_by_name("tct");
    rd_path = idx;
  }
  tc_reader *r = rd->open_reader(rd_path, err);
  if (!r)
    return -1;
  bool seeked = f.from && rd->seek;
  tc_filter_state *fs = NULL;
  int rc = -1;
  if ((!seeked || rd->seek(r, f.from, err) == 0) &&
      (fs = tc_filter_new(&f, rd->reader_info(r), seeked, err))) {
    tc_event ev;
    while ((rc = rd->next_event(r, &ev, err)) == 1) {
      int k = tc_filter_event(fs, &ev, NULL, NULL, err);
      if (k <= 0) {
        rc = k;
        break;
      }
    }
    if (rc == 0 && tc_filter_finish(fs, err) < 0)
      rc = -1;
    *n = tc_filter_records(fs);
  }
  tc_filter_free(fs);
  rd->close_reader(r);
  return rc < 0 ? -1 : 0;
}

/* Appends a, b and c to err's message when all three fit (a path that
 * does not is left out rather than cut). */
static void error_append(tc_error *err, const char *a, const char *b,
                         const char *c) {
  if (!err)
    return;
  size_t n = strlen(err->msg), la = strlen(a), lb = strlen(b), lc = strlen(c);
  if (n + la + lb + lc + 1 > sizeof err->msg)
    return;
  memcpy(err->msg + n, a, la);
  memcpy(err->msg + n + la, b, lb);
  memcpy(err->msg + n + la + lb, c, lc + 1);
}

/* tc_convert_checked on this library's own structs (filter may be NULL). */
static int convert(const char *in_path, const tc_format *in_fmt,
                   const tc_format *out_fmt, const char *out_path,
                   const tc_filter *filter, const char *const *writer_options,
                   int strict, tc_convert_report *rep, tc_error *err) {
  if (!in_fmt)
    in_fmt = tc_format_detect(in_path, err);
  if (!in_fmt)
    return -1;
  if (!in_fmt->open_reader) {
    tc_error_set(err, "%s: the %s format has no reader", in_path, in_fmt->name);
    return -1;
  }
  if (!out_fmt->open_writer) {
    tc_error_set(err, "the %s format has no writer", out_fmt->name);
    return -1;
  }
  /* Writing onto the input would truncate it before it is read. */
  struct stat si, so;
  if (strcmp(out_path, "-") != 0 && stat(in_path, &si) == 0 &&
      stat(out_path, &so) == 0 && si.st_dev == so.st_dev &&
      si.st_ino == so.st_ino) {
    tc_error_set(err, "%s: refusing to write the output onto the input",
                 out_path);
    return -1;
  }
  /* A coverage file holds blocks (start, size), not instructions: a format
   * of instructions would take each block for one instruction at its start,
   * a file that looks like an execution and is none. */
  if ((in_fmt->caps & TC_CAP_COVERAGE) && !(out_fmt->caps & TC_CAP_BLOCKS)) {
    tc_error_set(err,
                 "%s holds instructions; the %s input holds only coverage "
                 "blocks (start and size, each once): convert it to a format "
                 "that keeps blocks (tct, text, json, drcov)",
                 out_fmt->name, in_fmt->name);
    return -1;
  }
  if (filter && filter->mem && filter->mem[0] && !(in_fmt->caps & TC_CAP_MEM)) {
    tc_error_set(err,
                 "%s: the %s format holds no memory accesses for --mem to "
                 "look at",
                 in_path, in_fmt->name);
    return -1;
  }
  tc_filter last_only;
  if (filter && filter->last) {
    uint64_t n = 0;
    if (count_records(in_path, in_fmt, filter, &n, err) < 0)
      return -1;
    last_only = *filter;
    last_only.last = 0;
    uint64_t after_skip = n > filter->skip ? n - filter->skip : 0;
    if (after_skip > filter->last)
      last_only.skip = filter->skip + (after_skip - filter->last);
    filter = &last_only;
  }
  uint64_t from_insn = filter ? filter->from : 0;
  /* --from: the format's seek when it has one, or its index's (the same
   * events as tct: analysis/index.h), else the filter reads forward. The
   * reader's format rd is the index's then; in_fmt still says what the
   * input holds. */
  const tc_format *rd = in_fmt;
  const char *rd_path = in_path;
  char idx[4300];
  if (from_insn && !filter->no_index &&
      tc_index_find(in_path, in_fmt, idx, sizeof idx) == 1) {
    rd = tc_format_by_name("tct");
    rd_path = idx;
  }
  tc_reader *r = rd->open_reader(rd_path, err);
  if (!r)
    return -1;
  bool seeked = from_insn && rd->seek;
  if (seeked && rd->seek(r, from_insn, err) < 0) {
    rd->close_reader(r);
    return -1;
  }
  const tc_trace_info *info = rd->reader_info(r);
  if (out_fmt->supports && out_fmt->supports(info->arch, err) < 0) {
    rd->close_reader(r);
    return -1;
  }
  tc_loss loss;
  if (tc_loss_init(&loss, in_fmt, out_fmt, info->arch) < 0) {
    tc_error_set(err, "out of memory");
    rd->close_reader(r);
    return -1;
  }
  tc_filter_state *fs = tc_filter_new(filter, info, seeked, err);
  if (!fs) {
    tc_loss_free(&loss);
    rd->close_reader(r);
    return -1;
  }
  tc_trace_info winfo = *info;
  winfo.continuous = 0; /* a reader's stream: whole states are compared */
  winfo.writer_options = writer_options;
  char tmp[4200];
  tc_outfile_temp(out_path, tmp, sizeof tmp);
  convert_ctx c = {out_fmt, out_fmt->open_writer(tmp, &winfo, err), false, 0};
  if (c.w && tc_outfile_check(tmp, out_path, err) < 0) {
    out_fmt->close_writer(c.w, NULL);
    tc_outfile_discard(tmp);
    c.w = NULL;
  }
  if (!c.w) {
    tc_loss_free(&loss);
    tc_filter_free(fs);
    rd->close_reader(r);
    return -1;
  }
  /* A target that keeps memory as an image gets one rebuilt from what a
   * source without map contents shows (a second pass over it). */
  tc_rebuild *rb = NULL;
  if ((out_fmt->caps & TC_CAP_MAP_DATA) && out_fmt->open_reader &&
      !(in_fmt->caps & (TC_CAP_MAP_DATA | TC_CAP_COVERAGE)) &&
      (in_fmt->caps & (TC_CAP_MEM | TC_CAP_INSN_BYTES)) && !from_insn) {
    tc_error rerr = {{0}};
    rb = tc_rebuild_scan(in_path, in_fmt, &rerr);
    if (!rb && rerr.msg[0]) {
      tc_error_set(err, "%s", rerr.msg);
      out_fmt->close_writer(c.w, &rerr);
      tc_outfile_discard(tmp);
      tc_loss_free(&loss);
      tc_filter_free(fs);
      rd->close_reader(r);
      return -1;
    }
  }
  bool rebuilt_maps = false;
  tc_event ev;
  int rc;
  bool stopped = false;
  /* The output could not be made (the target refused an event or its
   * writing failed): nothing is kept. A read error keeps what was read
   * under the partial name. */
  bool write_failed = false;
  tc_error werr = {{0}};
  while ((rc = rd->next_event(r, &ev, err)) == 1) {
    tc_loss_see(&loss, &ev);
    if (rb && ev.kind == TC_EV_MAP && !ev.u.map.data)
      ev.u.map.data = tc_rebuild_fill(rb, ev.u.map.addr, ev.u.map.size);
    if (rb && !rebuilt_maps && ev.kind != TC_EV_MAP) {
      rebuilt_maps = true;
      tc_event m;
      int k = 1;
      while (k > 0 && tc_rebuild_next_map(rb, &m) == 1)
        k = tc_filter_event(fs, &m, out_fmt, c.w, &werr);
      if (k < 0) {
        rc = -1;
        write_failed = true;
        tc_error_set(err, "%s", werr.msg);
        break;
      }
      loss.rebuilt_pages = tc_rebuild_pages(rb);
    }
    if (ev.kind == TC_EV_EXIT)
      c.seen_exit = true;
    else if (ev.kind == TC_EV_INSN)
      c.insns++;
    int k = tc_filter_event(fs, &ev, out_fmt, c.w, &werr);
    if (k < 0) {
      rc = -1;
      write_failed = true;
      snprintf(err ? err->msg : werr.msg, sizeof werr.msg, "%s", werr.msg);
      break;
    }
    if (k == 0) {
      stopped = true; /* the count is reached */
      break;
    }
  }
  if (rc == 0 && !stopped && tc_filter_finish(fs, err) < 0) {
    rc = -1;
    write_failed = true;
  }
  /* Formats without an exit record (TRAC, tfile) still end the stream the
   * event model promises: a synthetic EXIT that says it was not recorded. */
  if (rc == 0 && !stopped && !c.seen_exit) {
    char msg[128];
    snprintf(msg, sizeof msg, TC_INDEX_NO_EXIT, in_fmt->name);
    tc_event x = {.kind = TC_EV_EXIT};
    x.u.exit.reason = TC_EXIT_ERROR;
    x.u.exit.insn_count = c.insns;
    x.u.exit.message = msg;
    if (convert_sink(&c, &x, &werr) < 0) {
      rc = -1;
      write_failed = true;
      tc_error_set(err, "%s", werr.msg);
    }
    loss.synthetic_exit = true;
  }
  /* Listings without a reader (text, json, strace) are views, not
   * recordings: nothing is said to be lost to them. */
  if (out_fmt->open_reader)
    rep->dropped_kinds =
        tc_loss_dropped(&loss, rep->dropped, sizeof rep->dropped);
  tc_loss_rebuilt(&loss, rep->rebuilt, sizeof rep->rebuilt);
  tc_loss_free(&loss);
  /* --strict: a lossy output is not kept */
  bool refuse = strict && rep->dropped_kinds && rc == 0;
  /* Close the output even after a read error: what was read is kept. */
  tc_error cerr = {{0}};
  bool streamed = strcmp(tmp, out_path) == 0; /* nothing to rename */
  if (out_fmt->close_writer(c.w, &cerr) < 0) {
    if (rc >= 0)
      tc_error_set(err, "%s", cerr.msg);
    rc = -1;
    write_failed = true;
  }
  if (write_failed || refuse) {
    if (!streamed)
      tc_outfile_discard(tmp);
    if (refuse)
      tc_error_set(err, "%s drops: %s; %s not written (strict)", out_fmt->name,
                   rep->dropped, out_path);
    else if (!streamed)
      error_append(err, "; ", out_path, " not written");
    rc = -1;
  } else if (rc < 0) {
    /* the input failed part-way: what was read is kept, not as complete */
    if (!streamed)
      error_append(err, " (what was read is kept as ", tmp, ")");
  } else if (tc_outfile_commit(tmp, out_path, &cerr) < 0) {
    tc_error_set(err, "%s", cerr.msg);
    rc = -1;
  }
  tc_rebuild_free(rb);
  tc_filter_free(fs);
  rd->close_reader(r);
  return rc < 0 ? -1 : 0;
}

int tc_convert_checked(const char *in_path, const tc_format *in_fmt,
                       const tc_format *out_fmt, const char *out_path,
                       const tc_filter *filter,
                       const char *const *writer_options, int strict,
                       tc_convert_report *rep, tc_error *err) {
  tc_filter f;
  tc_filter_init(&f);
  if ((filter && tc_sized_in(&f, sizeof f, filter, "tc_filter", err) < 0) ||
      tc_sized_check(rep, "tc_convert_report", err) < 0)
    return -1;
  tc_convert_report r;
  tc_convert_report_init(&r);
  int rc = convert(in_path, in_fmt, out_fmt, out_path, filter ? &f : NULL,
                   writer_options, strict, &r, err);
  if (rep)
    tc_sized_out(rep, &r, sizeof r);
  return rc;
}
