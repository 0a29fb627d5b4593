/* SPDX-License-Identifier: GPL-2.0-or-later */
/* fuzz_seeds OUTDIR GUEST...: the fuzzers' seed corpus, made from the
 * example guests at build time (nothing binary is committed). Each guest is
 * recorded into every format that has a reader (its first 400
 * instructions), with a 16 KiB stack so the
 * formats that store initial memory raw (rvn) stay small, and each guest
 * ELF is a seed of the ELF harness. Layout: OUTDIR/<format>/<guest>, and
 * OUTDIR/elf/<guest>; an rvn seed is the harness's packed form (see
 * fuzz_reader.c). Each seed but rvn's has a zstd-compressed twin,
 * OUTDIR/<format>/<guest>.zst, so the readers' decompression (every reader
 * takes zstd content: writers/io/zst.h) is fuzzed too. The tctraw harness's
 * seeds are each tct seed with its record stream decompressed
 * (OUTDIR/tctraw/<guest>), and a lean one (<guest>.lean): the same events
 * written again without the program's bytes and the maps' contents, so
 * that most of its bytes are records, not copied data. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <tracecorn/tracecorn.h>

#include "tests/fuzz/fuzz_common.h"
#include "writers/format.h"
#include "writers/io/zst.h"

static int copy_file(const char *from, const char *to) {
  size_t n;
  uint8_t *d = fz_read_file(from, &n);
  if (!d)
    return -1;
  int rc = fz_write_file(to, d, n);
  free(d);
  return rc;
}

static int record(const char *guest, const tc_format *fmt, const char *path,
                  tc_error *err) {
  tc_options opt;
  tc_options_init(&opt);
  opt.stack_size = 16 * 1024;
  opt.quiet = 1;
  opt.max_insns = 400;
  FILE *devnull = fopen("/dev/null", "w");
  if (devnull)
    opt.stdout_fd = opt.stderr_fd = fileno(devnull);
  const char *argv[] = {guest, "a", NULL};
  tc_session *s = tc_session_new(&opt, err);
  int rc = -1;
  if (s && tc_session_load_elf(s, guest, argv, err) == 0 &&
      tc_session_add_writer(s, fmt, path, err) == 0 &&
      tc_session_run(s, NULL, err) == 0)
    rc = 0;
  tc_session_free(s);
  if (devnull)
    fclose(devnull);
  return rc;
}

/* The tctraw form of the tct file `from`: its 8-byte magic, then its zstd
 * record stream decompressed (by the readers' own tc_infile_open). */
static int tct_raw(const char *from, const char *to) {
  size_t n, len = 0, cap = 1 << 16, got;
  uint8_t *d = fz_read_file(from, &n);
  char body[4200];
  snprintf(body, sizeof body, "%s.body", from);
  if (!d || n < 8 || fz_write_file(body, d + 8, n - 8) < 0) {
    free(d);
    return -1;
  }
  tc_error err = {{0}};
  FILE *f = tc_infile_open(body, TC_INFILE_STREAM, "fuzz_seeds", &err);
  uint8_t *out = f ? malloc(cap) : NULL;
  int rc = -1;
  if (out) {
    memcpy(out, d, 8);
    len = 8;
    while ((got = fread(out + len, 1, cap - len, f)) > 0) {
      len += got;
      if (len == cap) {
        uint8_t *no = realloc(out, cap *= 2);
        if (!no)
          break;
        out = no;
      }
    }
    if (!ferror(f) && len < cap)
      rc = fz_write_file(to, out, len);
  }
  if (f)
    fclose(f);
  unlink(body);
  free(out);
  free(d);
  return rc;
}

/* The tct file `from` written again as `to` without the program file's
 * bytes and without the maps' initial contents (their data reads as
 * zeros): the same records, most of them no longer copied data. */
static int tct_lean(const char *from, const char *to) {
  const tc_format *fmt = tc_format_by_name("tct");
  tc_error err = {{0}};
  tc_reader *r = fmt->open_reader(from, &err);
  if (!r)
    return -1;
  tc_trace_info info = *fmt->reader_info(r);
  info.exe_data = NULL;
  info.exe_size = 0;
  tc_writer *w = fmt->open_writer(to, &info, &err);
  int rc = w ? 0 : -1, got = 0;
  tc_event ev;
  while (rc == 0 && (got = fmt->next_event(r, &ev, &err)) == 1) {
    if (ev.kind == TC_EV_MAP)
      ev.u.map.data = NULL;
    rc = fmt->write_event(w, &ev, &err);
  }
  if (rc == 0 && got < 0)
    rc = -1;
  if (w && fmt->close_writer(w, &err) < 0)
    rc = -1;
  fmt->close_reader(r);
  return rc;
}

/* OUTDIR/tctraw/<guest> and <guest>.lean from the tct seed at path. */
static int tctraw_seeds(const char *out, const char *base, const char *path) {
  char dir[4096], to[4200], lean[4200];
  snprintf(dir, sizeof dir, "%s/tctraw", out);
  mkdir(dir, 0755);
  snprintf(to, sizeof to, "%s/%s", dir, base);
  if (tct_raw(path, to) < 0)
    return -1;
  snprintf(lean, sizeof lean, "%s.lean.tct", path);
  snprintf(to, sizeof to, "%s/%s.lean", dir, base);
  int rc = tct_lean(path, lean) == 0 ? tct_raw(lean, to) : -1;
  unlink(lean);
  return rc;
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: fuzz_seeds OUTDIR GUEST...\n");
    return 2;
  }
  const char *out = argv[1];
  char dir[4096], path[4096], tmp[4096];
  mkdir(out, 0755);
  snprintf(dir, sizeof dir, "%s/elf", out);
  mkdir(dir, 0755);
  for (int i = 2; i < argc; i++) {
    const char *base = strrchr(argv[i], '/');
    base = base ? base + 1 : argv[i];
    snprintf(path, sizeof path, "%s/elf/%s", out, base);
    if (copy_file(argv[i], path) < 0) {
      fprintf(stderr, "fuzz_seeds: %s: %s\n", argv[i], strerror(errno));
      return 1;
    }
    for (const tc_format *const *f = tc_formats(); *f; f++) {
      if (!(*f)->open_reader)
        continue;
      tc_error err = {{0}};
      snprintf(dir, sizeof dir, "%s/%s", out, (*f)->name);
      mkdir(dir, 0755);
      snprintf(tmp, sizeof tmp, "%s/.tmp-%s", out, base);
      fz_rmtree(tmp);
      if (mkdir(tmp, 0755) < 0)
        return 1;
      snprintf(path, sizeof path, "%s/t%s", tmp, fz_extension((*f)->name));
      if (record(argv[i], *f, path, &err) < 0) {
        /* An arch the format cannot hold is no seed, not an error. */
        fz_rmtree(tmp);
        continue;
      }
      snprintf(dir, sizeof dir, "%s/%s/%s", out, (*f)->name, base);
      int rc = strcmp((*f)->name, "rvn") == 0 ? fz_pack_rvn(path, dir)
                                              : copy_file(path, dir);
      if (rc == 0 && strcmp((*f)->name, "rvn") != 0) {
        char zdir[4200];
        snprintf(zdir, sizeof zdir, "%s.zst", dir);
        rc = tc_zst_compress_file(path, zdir, &err);
      }
      if (rc == 0 && strcmp((*f)->name, "tct") == 0)
        rc = tctraw_seeds(out, base, path);
      fz_rmtree(tmp);
      if (rc < 0) {
        fprintf(stderr, "fuzz_seeds: %s: cannot write\n", dir);
        return 1;
      }
    }
  }
  return 0;
}
