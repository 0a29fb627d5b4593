/* SPDX-License-Identifier: GPL-2.0-or-later */
/* zstd-compressed traces (issue 18): outputs named *.zst are compressed
 * (record -z, convert ... OUT.zst), Debian's zstd CLI decompresses them to
 * the plain file's exact bytes, and every reader and command takes them as
 * they are, told by content, not by name. Bad compressed data is a clean
 * error. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "testutil.h"
#include "tracecorn/tracecorn.h"
#include "writers/io/zst.h"

/* Every format with a writer but rvn (a directory), with its extension
 * for x86-64. */
static const struct {
  const char *name, *ext;
  int readable;
} fmts[] = {{"tct", ".tct", 1},     {"trac", ".trace64", 1},
            {"tfile", ".tf", 1},    {"ucir", ".ucir", 1},
            {"bap", ".frames", 1},  {"drcov", ".drcov", 1},
            {"tenet", ".tenet", 1}, {"text", ".txt", 0},
            {"json", ".jsonl", 0},  {"strace", ".strace", 0}};
#define NFMTS (sizeof fmts / sizeof *fmts)
static const char all_list[] =
    "tct,trac,tfile,ucir,bap,drcov,tenet,text,json,strace";

static char *sh(int *status, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static char *sh(int *status, const char *fmt, ...) {
  char cmd[16384];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(cmd, sizeof cmd, fmt, ap);
  va_end(ap);
  char *out = NULL;
  int st = tu_run(cmd, &out, 0);
  if (status)
    *status = st;
  return out ? out : strdup("");
}

/* hello64 recorded once plain (plain.EXT) and once with -z (z.EXT.zst). */
static void record_both(void) {
  static int done;
  if (done)
    return;
  done = 1;
  int st;
  char *out = sh(&st, "cd %s && %s record -q -f %s -o plain -- %s 2>&1",
                 tu_tmpdir(), TC_CLI, all_list, tu_guest("hello64"));
  CU_ASSERT_EQUAL(st, 0);
  if (st != 0)
    fprintf(stderr, "\nrecord: status %d: %s\n", st, out);
  free(out);
  out = sh(&st, "cd %s && %s record -q -z -f %s -o z -- %s", tu_tmpdir(),
           TC_CLI, all_list, tu_guest("hello64"));
  CU_ASSERT_EQUAL(st, 0);
  free(out);
}

static const char *path_of(const char *prefix, const char *ext,
                           const char *sfx) {
  static char b[4][4200];
  static int i;
  char *p = b[i++ & 3];
  snprintf(p, 4200, "%s/%s%s%s", tu_tmpdir(), prefix, ext, sfx);
  return p;
}

/* zstd -dc of each .zst output is the plain recording, byte for byte. */
static void test_zstd_cli_gives_plain_bytes(void) {
  record_both();
  for (size_t i = 0; i < NFMTS; i++) {
    const char *z = path_of("z", fmts[i].ext, ".zst");
    const char *plain = path_of("plain", fmts[i].ext, "");
    size_t n = 0;
    uint8_t *head = tu_read_file(z, &n);
    CU_ASSERT_PTR_NOT_NULL_FATAL(head);
    CU_ASSERT(tc_zst_magic(head, n));
    free(head);
    const char *un = path_of("unz", fmts[i].ext, "");
    int st;
    free(sh(&st, "zstd -q -d -c %s > %s", z, un));
    CU_ASSERT_EQUAL(st, 0);
    if (!tu_same_file(un, plain))
      fprintf(stderr, "\n%s: zstd -dc differs from the plain recording\n",
              fmts[i].name);
    CU_ASSERT(tu_same_file(un, plain));
    /* no temporary left beside it */
    CU_ASSERT_NOT_EQUAL(access(path_of("z.partial", fmts[i].ext, ""), F_OK), 0);
    CU_ASSERT_NOT_EQUAL(access(path_of("z.partial", fmts[i].ext, ".zst"), F_OK),
                        0);
  }
}

/* Two recordings give the same compressed bytes. */
static void test_deterministic(void) {
  record_both();
  int st;
  free(sh(&st, "cd %s && %s record -q -z -f %s -o z2 -- %s", tu_tmpdir(),
          TC_CLI, all_list, tu_guest("hello64")));
  CU_ASSERT_EQUAL(st, 0);
  for (size_t i = 0; i < NFMTS; i++)
    CU_ASSERT(tu_same_file(path_of("z", fmts[i].ext, ".zst"),
                           path_of("z2", fmts[i].ext, ".zst")));
}

/* dump, strace and info read the .zst as the plain file. */
static void test_commands_read_zst(void) {
  record_both();
  for (size_t i = 0; i < NFMTS; i++) {
    if (!fmts[i].readable)
      continue;
    const char *z = path_of("z", fmts[i].ext, ".zst");
    const char *plain = path_of("plain", fmts[i].ext, "");
    const char *cmds[] = {"dump", "dump --json", "strace"};
    for (int c = 0; c < 3; c++) {
      int s1, s2;
      char *a = sh(&s1, "%s %s %s", TC_CLI, cmds[c], plain);
      char *b = sh(&s2, "%s %s %s", TC_CLI, cmds[c], z);
      CU_ASSERT_EQUAL(s1, 0);
      CU_ASSERT_EQUAL(s2, s1);
      if (c < 2) /* drcov and tenet hold no syscalls for strace */
        CU_ASSERT(strlen(a) > 0);
      CU_ASSERT_STRING_EQUAL(a, b);
      free(a);
      free(b);
    }
    int st;
    char *info = sh(&st, "%s info %s", TC_CLI, z);
    CU_ASSERT_EQUAL(st, 0);
    char want[64];
    snprintf(want, sizeof want, "format:       %s ", fmts[i].name);
    CU_ASSERT_PTR_NOT_NULL(strstr(info, want));
    free(info);
  }
}

/* The library's reader API: detection by content, whatever the name. */
static int count_insns(void *ctx, const tc_event *ev, tc_error *err) {
  (void)err;
  if (ev->kind == TC_EV_INSN)
    ++*(uint64_t *)ctx;
  return 0;
}

static void test_library_by_content(void) {
  record_both();
  for (size_t i = 0; i < NFMTS; i++) {
    if (!fmts[i].readable)
      continue;
    /* named without .zst (tenet's probe also knows its extension) */
    const char *noext = path_of("renamed", fmts[i].ext, ".bin");
    int st;
    free(sh(&st, "cp %s %s", path_of("z", fmts[i].ext, ".zst"), noext));
    tc_error err = {{0}};
    const tc_format *f = tc_format_detect(noext, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    CU_ASSERT_STRING_EQUAL(f->name, fmts[i].name);
    uint64_t nz = 0, np = 0;
    CU_ASSERT_EQUAL(tc_read_trace(noext, f, count_insns, &nz, &err), 0);
    CU_ASSERT_EQUAL(tc_read_trace(path_of("plain", fmts[i].ext, ""), f,
                                  count_insns, &np, &err),
                    0);
    CU_ASSERT(np > 0);
    CU_ASSERT_EQUAL(nz, np);
  }
}

/* convert from a .zst, and to a .zst. */
static void test_convert(void) {
  record_both();
  int st;
  const char *in = path_of("z", ".tct", ".zst");
  const char *a = path_of("conv_plain", ".trace64", "");
  const char *b = path_of("conv_z", ".trace64", ".zst");
  char *out = sh(&st, "%s convert %s --to trac %s", TC_CLI,
                 path_of("plain", ".tct", ""), a);
  CU_ASSERT_EQUAL(st, 0);
  free(out);
  out = sh(&st, "%s convert %s --to trac %s", TC_CLI, in, b);
  CU_ASSERT_EQUAL(st, 0);
  free(out);
  const char *un = path_of("conv_unz", ".trace64", "");
  free(sh(&st, "zstd -q -d -c %s > %s", b, un));
  CU_ASSERT_EQUAL(st, 0);
  CU_ASSERT(tu_same_file(un, a));
  /* a .zst input in a format that seeks (tfile), to a .zst output */
  const char *c = path_of("conv_tf", ".tct", ".zst");
  out = sh(&st, "%s convert %s --to tct %s && %s dump %s", TC_CLI,
           path_of("z", ".tf", ".zst"), c, TC_CLI, c);
  CU_ASSERT_EQUAL(st, 0);
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "exit"));
  free(out);
}

/* verify -z records every format compressed and reads it back. */
static void test_verify_zst(void) {
  int st;
  char *out = sh(&st, "%s verify -z -f trac,tfile,ucir,tenet -- %s 2>&1",
                 TC_CLI, tu_guest("hello64"));
  CU_ASSERT_EQUAL(st, 0);
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "trac   ok"));
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "tfile  ok"));
  if (st != 0)
    fprintf(stderr, "\n%s\n", out);
  free(out);
}

/* rvn writes a directory: refused for .zst, nothing left behind. */
static void test_rvn_refused(void) {
  int st;
  char *out = sh(&st, "cd %s && %s record -q -z -f rvn -o rz -- %s 2>&1",
                 tu_tmpdir(), TC_CLI, tu_guest("hello64"));
  CU_ASSERT_EQUAL(st, 125);
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "rz.rvn.zst: this format writes a "
                                     "directory"));
  free(out);
  CU_ASSERT_NOT_EQUAL(access(path_of("rz", ".rvn", ".zst"), F_OK), 0);
  CU_ASSERT_NOT_EQUAL(access(path_of("rz.partial", ".rvn", ""), F_OK), 0);
  out = sh(&st, "%s convert %s --to rvn %s 2>&1", TC_CLI,
           path_of("plain", ".tct", ""), path_of("cz", ".rvn", ".zst"));
  CU_ASSERT_EQUAL(st, 1);
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "directory"));
  free(out);
  CU_ASSERT_NOT_EQUAL(access(path_of("cz.partial", ".rvn", ""), F_OK), 0);
}

/* One line on stderr, status 1, never a crash. */
static void expect_clean_failure(const char *cmd, const char *path,
                                 const char *want) {
  int st;
  char *out = sh(&st, "%s %s %s 2>&1 >/dev/null", TC_CLI, cmd, path);
  CU_ASSERT_EQUAL(st, 1);
  if (st != 1 || !strstr(out, want))
    fprintf(stderr, "\n%s %s: status %d: %s\n", cmd, path, st, out);
  CU_ASSERT_PTR_NOT_NULL(strstr(out, want));
  const char *nl = strchr(out, '\n');
  CU_ASSERT(nl && nl[1] == 0);
  free(out);
}

static void truncate_copy(const char *from, const char *to, double frac) {
  size_t n = 0;
  uint8_t *d = tu_read_file(from, &n);
  CU_ASSERT_PTR_NOT_NULL_FATAL(d);
  tu_write_file(to, d, (size_t)((double)n * frac));
  free(d);
}

/* Truncated and corrupt compressed data, for each readable format: the
 * small hello64 traces fail while detecting; a trace larger than a zstd
 * block (glibc64, 20000 instructions) fails in the middle of reading, in
 * a reader that decompresses as it reads (trac) and in one that
 * decompresses first (tfile). */
static void test_bad_input(void) {
  record_both();
  for (size_t i = 0; i < NFMTS; i++) {
    if (!fmts[i].readable)
      continue;
    const char *t = path_of("trunc", fmts[i].ext, ".zst");
    truncate_copy(path_of("z", fmts[i].ext, ".zst"), t, 0.6);
    expect_clean_failure("dump", t, "truncated zstd data");
    expect_clean_failure("info", t, "truncated zstd data");
  }
  const char *bad = path_of("corrupt", ".trace64", ".zst");
  static const char garbage[] = "\x28\xb5\x2f\xfd garbage, not a frame";
  tu_write_file(bad, garbage, sizeof garbage - 1);
  expect_clean_failure("dump", bad, "corrupt zstd data");
  expect_clean_failure("dump --format trac", bad, "corrupt zstd data");

  int st;
  char *out = sh(&st,
                 "cd %s && %s record -q -z -f trac,tfile,tct --max-insns 20000 "
                 "-o big -- %s",
                 tu_tmpdir(), TC_CLI, tu_guest("glibc64"));
  CU_ASSERT_EQUAL(st, 124);
  free(out);
  const char *exts[] = {".trace64", ".tf", ".tct"};
  for (int k = 0; k < 3; k++) {
    const char *t = path_of("bigtrunc", exts[k], ".zst");
    truncate_copy(path_of("big", exts[k], ".zst"), t, 0.5);
    out = sh(&st, "%s dump %s 2>&1 >/dev/null", TC_CLI, t);
    CU_ASSERT_EQUAL(st, 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "truncated zstd data"));
    free(out);
    /* whatever was read before the cut was printed */
    if (k == 0) {
      out = sh(&st, "%s dump %s 2>/dev/null | wc -l", TC_CLI, t);
      CU_ASSERT(atoi(out) > 1000);
      free(out);
    }
  }
  /* a reader that decompresses first into $TMPDIR: a full disk there
   * (here a file-size limit: record and dump ignore SIGXFSZ) is an error */
  out = sh(&st, "ulimit -f 64; %s dump %s 2>&1 >/dev/null", TC_CLI,
           path_of("big", ".tf", ".zst"));
  CU_ASSERT_EQUAL(st, 1);
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "cannot decompress into"));
  free(out);
}

/* A zstd bomb: a small .tf.zst (a real trace, then 256 MiB of zeros: 1 KiB
 * of zstd each) was decompressed whole into $TMPDIR (a 135 KB one took
 * 4 GiB and 85 s) and read on. An input may decompress to 1000 times its
 * size, at least 64 MiB and at most 16 GiB: past it the command stops
 * with one line and status 1; TRACECORN_MAX_DECOMPRESSED sets the limit. */
static void test_decompression_limit(void) {
  record_both();
  CU_ASSERT_EQUAL(tc_zst_limit(0), 64ull << 20);
  CU_ASSERT_EQUAL(tc_zst_limit(1 << 20), 1000ull << 20);
  CU_ASSERT_EQUAL(tc_zst_limit(1ull << 30), 16ull << 30);
  const char *bomb = path_of("bomb", ".tf", ".zst");
  int st;
  char *out = sh(&st, "{ cat %s; head -c 256M /dev/zero; } | zstd -q -c > %s",
                 path_of("plain", ".tf", ""), bomb);
  CU_ASSERT_EQUAL_FATAL(st, 0);
  free(out);
  struct stat sb;
  CU_ASSERT(stat(bomb, &sb) == 0 && sb.st_size < (1 << 20));
  static const char *const cmds[] = {"info", "dump", "strace"};
  for (int i = 0; i < 3; i++) {
    out = sh(&st, "%s %s %s 2>&1 >/dev/null", TC_CLI, cmds[i], bomb);
    CU_ASSERT_EQUAL(st, 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, ": decompresses to more than 64 MiB, "
                                       "the limit for this input "
                                       "(TRACECORN_MAX_DECOMPRESSED=SIZE "
                                       "raises it)\n"));
    const char *nl = strchr(out, '\n');
    CU_ASSERT(nl && nl[1] == 0);
    free(out);
  }
  out = sh(&st, "cd %s && %s convert %s --to tct bomb-out.tct 2>&1",
           tu_tmpdir(), TC_CLI, bomb);
  CU_ASSERT_EQUAL(st, 1);
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "decompresses to more than 64 MiB"));
  free(out);
  CU_ASSERT_NOT_EQUAL(access(path_of("bomb-out", ".tct", ""), F_OK), 0);
  /* raised, the same file is read through (the zeros after the trace
   * are tfile's to judge) */
  out = sh(&st, "TRACECORN_MAX_DECOMPRESSED=1G %s info %s 2>&1", TC_CLI, bomb);
  CU_ASSERT_PTR_NULL(strstr(out, "decompresses to more than"));
  free(out);
  out =
      sh(&st, "TRACECORN_MAX_DECOMPRESSED=lots %s info %s 2>&1", TC_CLI, bomb);
  CU_ASSERT_EQUAL(st, 2);
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "TRACECORN_MAX_DECOMPRESSED: not a size"));
  free(out);
}

int main(void) {
  static const tu_case cases[] = {
      {"zstd_cli_gives_plain_bytes", test_zstd_cli_gives_plain_bytes},
      {"deterministic", test_deterministic},
      {"commands_read_zst", test_commands_read_zst},
      {"library_by_content", test_library_by_content},
      {"convert", test_convert},
      {"verify_zst", test_verify_zst},
      {"rvn_refused", test_rvn_refused},
      {"bad_input", test_bad_input},
      {"decompression_limit", test_decompression_limit},
      {NULL, NULL}};
  return tu_run_suite("zst", cases);
}
