/* fuzz_seeds OUTDIR GUEST...: the fuzzers' seed corpus, made from the
 * example guests at build time (nothing binary is committed). Each guest is
 * recorded into every format that has a reader (its first 400
 * instructions), with a 16 KiB stack so the
 * formats that store initial memory raw (rvn) stay small, and each guest
 * ELF is a seed of the ELF harness. Layout: OUTDIR/<format>/<guest>, and
 * OUTDIR/elf/<guest>; an rvn seed is the harness's packed form (see
 * fuzz_reader.c). Each seed but rvn's has a zstd-compressed twin,
 * OUTDIR/<format>/<guest>.zst, so the readers' decompression (every reader
 * takes zstd content: writers/zst.h) is fuzzed too. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <tracecorn/tracecorn.h>

#include "tests/fuzz/fuzz_common.h"
#include "writers/zst.h"

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
      fz_rmtree(tmp);
      if (rc < 0) {
        fprintf(stderr, "fuzz_seeds: %s: cannot write\n", dir);
        return 1;
      }
    }
  }
  return 0;
}
