/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The format registry: one tc_format per module, listed once here, and
 * the public accessors of the (private, writers/format.h) struct. */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "writers/format.h"
#include "writers/io/zst.h"

extern const tc_format tc_format_text;
extern const tc_format tc_format_json;
extern const tc_format tc_format_tct;
extern const tc_format tc_format_trac;
extern const tc_format tc_format_tfile;
extern const tc_format tc_format_ucir;
extern const tc_format tc_format_bap;
extern const tc_format tc_format_rvn;
extern const tc_format tc_format_drcov;
extern const tc_format tc_format_tenet;
extern const tc_format tc_format_strace;

static const tc_format *const registry[] = {
    &tc_format_tct,   &tc_format_text,  &tc_format_json,   &tc_format_trac,
    &tc_format_tfile, &tc_format_ucir,  &tc_format_bap,    &tc_format_rvn,
    &tc_format_drcov, &tc_format_tenet, &tc_format_strace, NULL,
};

const tc_format *const *tc_formats(void) { return registry; }

const char *tc_format_name(const tc_format *fmt) { return fmt->name; }

const char *tc_format_description(const tc_format *fmt) {
  return fmt->description;
}

const char *tc_format_extension(const tc_format *fmt, const tc_arch *arch) {
  if (!fmt->open_writer || !fmt->extension)
    return NULL;
  return fmt->extension(arch ? arch : tc_arch_by_id(TC_ARCH_X86_64));
}

uint32_t tc_format_caps(const tc_format *fmt) { return fmt->caps; }

int tc_format_can_write(const tc_format *fmt) {
  return fmt->open_writer != NULL;
}

int tc_format_can_read(const tc_format *fmt) {
  return fmt->open_reader != NULL;
}

const tc_format *tc_format_by_name(const char *name) {
  for (const tc_format *const *f = registry; *f; f++)
    if (strcmp((*f)->name, name) == 0)
      return *f;
  return NULL;
}

const tc_format *tc_format_by_extension(const char *path) {
  size_t n = strlen(path);
  if (n > 4 && strcmp(path + n - 4, ".zst") == 0)
    n -= 4;
  while (n > 1 && path[n - 1] == '/')
    n--;
  const tc_format *found = NULL;
  for (const tc_format *const *f = registry; *f; f++) {
    if (!(*f)->open_writer)
      continue;
    bool match = false;
    const tc_arch *a;
    for (size_t i = 0; !match && (a = tc_arch_at(i)); i++) {
      const char *ext = (*f)->extension(a);
      size_t e = ext ? strlen(ext) : 0;
      match = e && n > e && strncmp(path + n - e, ext, e) == 0;
    }
    if (match && found && found != *f)
      return NULL; /* ambiguous */
    if (match)
      found = *f;
  }
  return found;
}

const tc_format *tc_format_detect(const char *path, tc_error *err) {
  /* A trace that is a directory (REVEN's P.rvn/) is probed by the first
   * bytes of its trace.bin. */
  char sub[4096];
  struct stat st;
  const char *file = path;
  if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
    snprintf(sub, sizeof sub, "%s/trace.bin", path);
    file = sub;
  }
  /* The first bytes as the readers see them: decompressed if the file is
   * zstd (zst.h), whatever its name. */
  uint8_t head[64];
  long got = tc_infile_head(file, head, sizeof head, err);
  if (got < 0)
    return NULL;
  size_t n = (size_t)got;
  /* Probes that look at the name see it without ".zst". */
  char plain[4096];
  snprintf(plain, sizeof plain, "%.*s",
           (int)(strlen(path) - (tc_zst_name(path) ? 4 : 0)), path);
  for (const tc_format *const *f = registry; *f; f++)
    if ((*f)->probe && (*f)->open_reader && (*f)->probe(head, n, plain))
      return *f;
  tc_error_set(err, "%s: not a trace file tracecorn can read", path);
  return NULL;
}

/* Splits "FORMAT.KEY=VALUE": returns 1 and the key/value spans if the option
 * belongs to `format`. */
static int option_of(const char *opt, const char *format, const char **key,
                     size_t *keylen, const char **value) {
  size_t fl = strlen(format);
  if (strncmp(opt, format, fl) != 0 || opt[fl] != '.')
    return 0;
  *key = opt + fl + 1;
  const char *eq = strchr(*key, '=');
  *keylen = eq ? (size_t)(eq - *key) : strlen(*key);
  *value = eq ? eq + 1 : NULL;
  return 1;
}

const char *tc_writer_option(const tc_trace_info *info, const char *format,
                             const char *key) {
  const char *found = NULL;
  if (!info || !info->writer_options)
    return NULL;
  for (const char *const *o = info->writer_options; *o; o++) {
    const char *k, *v;
    size_t kl;
    if (option_of(*o, format, &k, &kl, &v) && v && kl == strlen(key) &&
        strncmp(k, key, kl) == 0)
      found = v;
  }
  return found;
}

int tc_writer_options_check(const tc_trace_info *info, const char *format,
                            const char *const *known, tc_error *err) {
  if (!info || !info->writer_options)
    return 0;
  for (const char *const *o = info->writer_options; *o; o++) {
    const char *k, *v;
    size_t kl;
    if (!option_of(*o, format, &k, &kl, &v))
      continue;
    int ok = 0;
    for (const char *const *n = known; v && *n; n++)
      if (strlen(*n) == kl && strncmp(*n, k, kl) == 0)
        ok = 1;
    if (!ok) {
      tc_error_set(err, "%s: unknown writer option '%s'%s", format, *o,
                   v ? "" : " (expected FORMAT.KEY=VALUE)");
      return -1;
    }
  }
  return 0;
}

int tc_read_trace(const char *path, const tc_format *fmt, tc_event_sink sink,
                  void *ctx, tc_error *err) {
  if (!fmt)
    fmt = tc_format_detect(path, err);
  if (!fmt)
    return -1;
  if (!fmt->open_reader) {
    tc_error_set(err, "%s: the %s format has no reader", path, fmt->name);
    return -1;
  }
  tc_reader *r = fmt->open_reader(path, err);
  if (!r)
    return -1;
  tc_event ev;
  int rc;
  while ((rc = fmt->next_event(r, &ev, err)) == 1)
    if (sink(ctx, &ev, err) < 0) {
      rc = -1;
      break;
    }
  fmt->close_reader(r);
  return rc < 0 ? -1 : 0;
}
