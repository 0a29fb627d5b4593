/* Reading one trace and writing it in another format (dump = convert to
 * text or json on stdout). Format-neutral: only the tc_format vtables. */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "tracecorn/tracecorn.h"
#include "writers/filter.h"
#include "writers/outfile.h"

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
  tc_filter f = {0};
  f.from = from_insn;
  return tc_convert_filtered(in_path, in_fmt, out_fmt, out_path, &f,
                             writer_options, err);
}

int tc_convert_filtered(const char *in_path, const tc_format *in_fmt,
                        const tc_format *out_fmt, const char *out_path,
                        const tc_filter *filter,
                        const char *const *writer_options, tc_error *err) {
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
  uint64_t from_insn = filter ? filter->from : 0;
  tc_reader *r = in_fmt->open_reader(in_path, err);
  if (!r)
    return -1;
  /* --from: the format's seek when it has one, else the filter reads
   * forward */
  bool seeked = from_insn && in_fmt->seek;
  if (seeked && in_fmt->seek(r, from_insn, err) < 0) {
    in_fmt->close_reader(r);
    return -1;
  }
  const tc_trace_info *info = in_fmt->reader_info(r);
  if (out_fmt->supports && out_fmt->supports(info->arch, err) < 0) {
    in_fmt->close_reader(r);
    return -1;
  }
  tc_filter_state *fs = tc_filter_new(filter, info, seeked, err);
  if (!fs) {
    in_fmt->close_reader(r);
    return -1;
  }
  tc_trace_info winfo = *info;
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
    tc_filter_free(fs);
    in_fmt->close_reader(r);
    return -1;
  }
  tc_event ev;
  int rc;
  bool stopped = false;
  tc_error werr = {{0}};
  while ((rc = in_fmt->next_event(r, &ev, err)) == 1) {
    if (ev.kind == TC_EV_EXIT)
      c.seen_exit = true;
    else if (ev.kind == TC_EV_INSN)
      c.insns++;
    int k = tc_filter_event(fs, &ev, out_fmt, c.w, &werr);
    if (k < 0) {
      rc = -1;
      snprintf(err ? err->msg : werr.msg, sizeof werr.msg, "%s", werr.msg);
      break;
    }
    if (k == 0) {
      stopped = true; /* the count is reached */
      break;
    }
  }
  if (rc == 0 && !stopped && tc_filter_finish(fs, err) < 0)
    rc = -1;
  /* Formats without an exit record (TRAC, tfile) still end the stream the
   * event model promises: a synthetic EXIT that says it was not recorded. */
  if (rc == 0 && !stopped && !c.seen_exit) {
    char msg[128];
    snprintf(msg, sizeof msg, "no exit record in the %s input", in_fmt->name);
    tc_event x = {.kind = TC_EV_EXIT};
    x.u.exit.reason = TC_EXIT_ERROR;
    x.u.exit.insn_count = c.insns;
    x.u.exit.message = msg;
    if (convert_sink(&c, &x, &werr) < 0) {
      rc = -1;
      tc_error_set(err, "%s", werr.msg);
    }
  }
  /* Close the output even after a read error: what was read is kept. */
  tc_error cerr = {{0}};
  if (out_fmt->close_writer(c.w, &cerr) < 0) {
    if (rc >= 0)
      tc_error_set(err, "%s (the partial output is kept as %s)", cerr.msg, tmp);
    rc = -1;
  } else if (tc_outfile_commit(tmp, out_path, &cerr) < 0 && rc >= 0) {
    tc_error_set(err, "%s", cerr.msg);
    rc = -1;
  }
  tc_filter_free(fs);
  in_fmt->close_reader(r);
  return rc < 0 ? -1 : 0;
}
