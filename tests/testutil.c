/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "testutil.h"

#include <CUnit/TestRun.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "emu/engine/emu.h"
#include "loaders/loader.h"

static char tmpdir_path[4096]; /* tu_tmpdir's, once made */

static int remove_entry(const char *path, const struct stat *st, int flag,
                        struct FTW *ftw) {
  (void)st, (void)flag, (void)ftw;
  return remove(path) == 0 || errno == ENOENT ? 0 : -1;
}

/* The runner's own reporting: CUnit's basic runner prints every failed
 * assertion, and one wrong assertion in a loop over a trace printed
 * thousands of identical lines. Here a test shows its first few failures,
 * then how many more there were, and how long it took. */
enum { TU_FAILURES_SHOWN = 10 };
static double test_started;

static double now_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void on_test_start(const CU_pTest test, const CU_pSuite suite) {
  (void)suite;
  printf("  Test: %s ...", test->pName);
  fflush(stdout);
  test_started = now_seconds();
}

static void on_test_complete(const CU_pTest test, const CU_pSuite suite,
                             const CU_pFailureRecord failure) {
  (void)suite;
  double took = now_seconds() - test_started;
  if (!failure) {
    printf("passed (%.1f s)\n", took);
    return;
  }
  printf("FAILED (%.1f s)\n", took);
  unsigned n = 0;
  for (CU_pFailureRecord f = failure; f && f->pTest == test; f = f->pNext) {
    if (n < TU_FAILURES_SHOWN)
      printf("    %u. %s:%u  - %s\n", n + 1, f->strFileName, f->uiLineNumber,
             f->strCondition);
    n++;
  }
  if (n > TU_FAILURES_SHOWN)
    printf("    ... and %u more failed assertions\n", n - TU_FAILURES_SHOWN);
}

/* A failing suite's kept files stay bounded: recordings over 100 MB (a
 * tfile of a glibc program is gigabytes) are removed, being checked already. */
enum { TU_KEEP_MAX_BYTES = 100 << 20 };
static unsigned big_removed;

static int remove_big_file(const char *path, const struct stat *st, int flag,
                           struct FTW *ftw) {
  (void)ftw;
  if (flag == FTW_F && st->st_size > TU_KEEP_MAX_BYTES && remove(path) == 0)
    big_removed++;
  return 0;
}

int tu_run_suite(const char *suite, const tu_case *cases) {
  setvbuf(stdout, NULL, _IOLBF, 0);
  if (CU_initialize_registry() != CUE_SUCCESS)
    return 2;
  CU_pSuite s = CU_add_suite(suite, NULL, NULL);
  if (!s)
    return 2;
  for (const tu_case *c = cases; c->name; c++)
    if (!CU_add_test(s, c->name, c->fn))
      return 2;
  CU_set_test_start_handler(on_test_start);
  CU_set_test_complete_handler(on_test_complete);
  printf("Suite: %s\n", suite);
  double started = now_seconds();
  CU_run_all_tests();
  CU_pRunSummary sum = CU_get_run_summary();
  unsigned failed =
      CU_get_number_of_failures() + CU_get_number_of_tests_failed();
  printf("%s: %u of %u tests failed, %u of %u assertions failed (%.1f s)\n",
         suite, sum->nTestsFailed, sum->nTestsRun, sum->nAssertsFailed,
         sum->nAsserts, now_seconds() - started);
  CU_cleanup_registry();
  /* A passing suite leaves no files (some write gigabytes); a failing one
   * keeps them to look at, as does TC_KEEP_TMP=1. */
  if (tmpdir_path[0]) {
    if (!failed && !getenv("TC_KEEP_TMP"))
      nftw(tmpdir_path, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
    else {
      if (!getenv("TC_KEEP_TMP"))
        nftw(tmpdir_path, remove_big_file, 16, FTW_PHYS);
      printf("%s: its files are kept in %s", suite, tmpdir_path);
      if (big_removed)
        printf(" (%u over 100 MB removed)", big_removed);
      printf("\n");
    }
  }
  return failed ? 1 : 0;
}

uint8_t *tu_read_file(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return NULL;
  size_t cap = 1 << 16, n = 0;
  uint8_t *buf = malloc(cap + 1);
  size_t got;
  while (buf && (got = fread(buf + n, 1, cap - n, f)) > 0) {
    n += got;
    if (n == cap) {
      cap *= 2;
      uint8_t *nb = realloc(buf, cap + 1);
      if (!nb) {
        free(buf);
        buf = NULL;
      }
      buf = nb;
    }
  }
  fclose(f);
  if (!buf)
    return NULL;
  buf[n] = 0;
  if (len)
    *len = n;
  return buf;
}

int tu_same_file(const char *a, const char *b) {
  size_t na = 0, nb = 0;
  uint8_t *x = tu_read_file(a, &na), *y = tu_read_file(b, &nb);
  int same = x && y && na == nb && na > 0 && memcmp(x, y, na) == 0;
  free(x);
  free(y);
  return same;
}

int tu_write_file(const char *path, const void *data, size_t len) {
  FILE *f = fopen(path, "wb");
  if (!f)
    return -1;
  size_t w = fwrite(data, 1, len, f);
  return (fclose(f) == 0 && w == len) ? 0 : -1;
}

int tu_runf(char **out, int merge_stderr, const char *fmt, ...) {
  char cmd[8192];
  va_list ap;
  va_start(ap, fmt);
  int k = vsnprintf(cmd, sizeof cmd, fmt, ap);
  va_end(ap);
  if (k < 0 || (size_t)k >= sizeof cmd) {
    if (out)
      *out = NULL;
    return -1;
  }
  return tu_run(cmd, out, merge_stderr);
}

int tu_run(const char *cmd, char **out, int merge_stderr) {
  char *full = NULL;
  if (asprintf(&full, "%s%s", cmd, merge_stderr ? " 2>&1" : "") < 0)
    return -1;
  FILE *p = popen(full, "r");
  free(full);
  if (!p)
    return -1;
  size_t cap = 4096, n = 0;
  char *buf = malloc(cap);
  size_t got;
  while (buf && (got = fread(buf + n, 1, cap - n - 1, p)) > 0) {
    n += got;
    if (cap - n < 2) {
      cap *= 2;
      char *nb = realloc(buf, cap);
      if (!nb)
        free(buf);
      buf = nb;
    }
  }
  if (buf)
    buf[n] = 0;
  int st = pclose(p);
  if (out)
    *out = buf;
  else
    free(buf);
  if (st == -1)
    return -1;
  if (WIFEXITED(st))
    return WEXITSTATUS(st);
  if (WIFSIGNALED(st))
    return 128 + WTERMSIG(st);
  return -1;
}

const char *tu_tmpdir(void) {
  char *dir = tmpdir_path;
  if (!dir[0]) {
    snprintf(dir, sizeof tmpdir_path, "%s/tests/tmp-%d", TC_BINARY_DIR,
             (int)getpid());
    mkdir(TC_BINARY_DIR "/tests", 0755);
    if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
      perror(dir);
      abort();
    }
  }
  return dir;
}

const char *tu_tmp(const char *name) {
  static char bufs[8][4096];
  static int i;
  char *b = bufs[i++ & 7];
  int k = snprintf(b, 4096, "%s/%s", tu_tmpdir(), name);
  if (k < 0 || k >= 4096)
    abort(); /* a test path never gets this long */
  return b;
}

const char *tu_guest(const char *name) {
  static char bufs[8][4096];
  static int i;
  char *b = bufs[i++ & 7];
  snprintf(b, 4096, "%s/%s", TC_GUEST_DIR, name);
  return b;
}

int tu_have(const char *path) { return access(path, R_OK) == 0; }

int tu_run_merge(char **out, const char *prog, ...) {
  char cmd[16384];
  size_t n = 0;
  va_list ap;
  va_start(ap, prog);
  for (const char *a = prog; a; a = va_arg(ap, const char *)) {
    /* single-quote each argument */
    if (n + 4 * strlen(a) + 4 >= sizeof cmd)
      break;
    cmd[n++] = '\'';
    for (const char *c = a; *c; c++) {
      if (*c == '\'') {
        memcpy(cmd + n, "'\\''", 4);
        n += 4;
      } else {
        cmd[n++] = *c;
      }
    }
    cmd[n++] = '\'';
    cmd[n++] = ' ';
  }
  va_end(ap);
  cmd[n] = 0;
  return tu_run(cmd, out, 1);
}

/* ------------------------------------------------------ reference runs */

tu_ref_mode tu_ref_default_mode(void) {
  const char *e = getenv("TC_REFERENCE");
  if (e && strcmp(e, "native") == 0)
    return TU_REF_NATIVE;
  if (e && strcmp(e, "qemu") == 0)
    return TU_REF_QEMU;
  return TU_REF_AUTO;
}

const char *tu_qemu_for(const char *prog, char *why, size_t whylen) {
  uint8_t h[64];
  FILE *f = fopen(prog, "rb");
  size_t n = f ? fread(h, 1, sizeof h, f) : 0;
  if (f)
    fclose(f);
  if (n < 52 || memcmp(h, "\177ELF", 4) != 0) {
    snprintf(why, whylen, "%s: not an ELF file", prog);
    return NULL;
  }
  int is64 = h[4] == 2, be = h[5] == 2;
  unsigned mach =
      be ? (unsigned)(h[18] << 8 | h[19]) : (unsigned)(h[19] << 8 | h[18]);
  /* e_flags sits after e_entry/e_phoff/e_shoff: 36 (32-bit) or 48. */
  const uint8_t *fl = h + (is64 ? 48 : 36);
  uint32_t flags = be ? (uint32_t)fl[0] << 24 | (uint32_t)fl[1] << 16 |
                            (uint32_t)fl[2] << 8 | fl[3]
                      : (uint32_t)fl[3] << 24 | (uint32_t)fl[2] << 16 |
                            (uint32_t)fl[1] << 8 | fl[0];
  switch (mach) {
  case 3: /* EM_386 */
    return "qemu-i386-static";
  case 62: /* EM_X86_64 */
    return "qemu-x86_64-static";
  case 40: /* EM_ARM */
    return be ? "qemu-armeb-static" : "qemu-arm-static";
  case 183: /* EM_AARCH64 */
    return be ? "qemu-aarch64_be-static" : "qemu-aarch64-static";
  case 8: /* EM_MIPS; EF_MIPS_ABI2 (0x20) marks n32 */
    if (is64)
      return be ? "qemu-mips64-static" : "qemu-mips64el-static";
    if (flags & 0x20)
      return be ? "qemu-mipsn32-static" : "qemu-mipsn32el-static";
    return be ? "qemu-mips-static" : "qemu-mipsel-static";
  case 2: /* EM_SPARC */
    return "qemu-sparc-static";
  case 18: /* EM_SPARC32PLUS */
    return "qemu-sparc32plus-static";
  case 43: /* EM_SPARCV9 */
    return "qemu-sparc64-static";
  default:
    snprintf(why, whylen, "%s: no qemu-user for ELF machine %u", prog, mach);
    return NULL;
  }
}

int tu_spawn(const char *const *argv, const char *const *envp, const char *cwd,
             const char *in, const char *errfile, unsigned limit,
             tu_ref_run *r) {
  int outp[2], errp[2];
  if (pipe(outp) < 0)
    return -1;
  if (pipe2(errp, O_CLOEXEC) < 0) {
    close(outp[0]);
    close(outp[1]);
    return -1;
  }
  pid_t pid = fork();
  if (pid < 0)
    return -1;
  if (pid == 0) {
    int e = 0;
    int fin = open(in ? in : "/dev/null", O_RDONLY);
    int ferr = errfile ? open(errfile, O_WRONLY | O_CREAT | O_TRUNC, 0644) : 2;
    if (fin < 0 || ferr < 0)
      e = errno;
    else if (cwd && chdir(cwd) < 0)
      e = errno;
    else {
      dup2(fin, 0);
      dup2(outp[1], 1);
      dup2(ferr, 2);
      close(outp[0]);
      extern char **environ;
      alarm(limit); /* survives execve */
      execve(argv[0], (char *const *)argv,
             envp ? (char *const *)envp : environ);
      e = errno;
    }
    if (write(errp[1], &e, sizeof e) < 0)
      _exit(127);
    _exit(127);
  }
  close(outp[1]);
  close(errp[1]);
  size_t cap = 1 << 16, n = 0;
  char *buf = malloc(cap);
  for (;;) {
    if (buf && cap - n < 2) {
      char *nb = realloc(buf, cap *= 2);
      if (!nb)
        free(buf);
      buf = nb;
    }
    if (!buf)
      break;
    ssize_t got = read(outp[0], buf + n, cap - n - 1);
    if (got < 0 && errno == EINTR)
      continue;
    if (got <= 0)
      break;
    n += (size_t)got;
  }
  close(outp[0]);
  int exec_errno = 0;
  ssize_t eg = read(errp[0], &exec_errno, sizeof exec_errno);
  close(errp[0]);
  int st = 0;
  while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
    ;
  if (eg == (ssize_t)sizeof exec_errno && exec_errno) {
    free(buf);
    return exec_errno;
  }
  if (!buf)
    return -1;
  buf[n] = 0;
  r->out = buf;
  r->status = WIFEXITED(st)     ? WEXITSTATUS(st)
              : WIFSIGNALED(st) ? 128 + WTERMSIG(st)
                                : -1;
  return 0;
}

/* A reference run: stdin from /dev/null, stderr shown; a reference that
 * hangs (a stop nobody continues) ends at the timer (status 142) instead
 * of blocking the suite. */
static int spawn_capture(const char *cwd, const char *const *argv,
                         tu_ref_run *r) {
  return tu_spawn(argv, NULL, cwd, NULL, NULL, 120, r);
}

/* Finds a program on PATH (qemu binaries live in /usr/bin). */
static int find_on_path(const char *name, char *out, size_t max) {
  const char *path = getenv("PATH");
  char dirs[4096];
  snprintf(dirs, sizeof dirs, "%s:/usr/bin:/usr/local/bin", path ? path : "");
  for (char *save = NULL, *d = strtok_r(dirs, ":", &save); d;
       d = strtok_r(NULL, ":", &save)) {
    int k = snprintf(out, max, "%s/%s", d, name);
    if (k > 0 && (size_t)k < max && access(out, X_OK) == 0)
      return 0;
  }
  return -1;
}

int tu_reference_run(tu_ref_mode mode, const char *cwd, const char *prog,
                     const char *const *args, tu_ref_run *r, char *why,
                     size_t whylen) {
  memset(r, 0, sizeof *r);
  if (mode == TU_REF_AUTO)
    mode = tu_ref_default_mode();
  const char *argv[64];
  size_t na = 0;
  argv[na++] = prog;
  for (; args && *args && na < 62; args++)
    argv[na++] = *args;
  argv[na] = NULL;
  char native_why[256] = "";
  if (mode != TU_REF_QEMU) {
    int rc = spawn_capture(cwd, argv, r);
    if (rc == 0) {
      snprintf(r->how, sizeof r->how, "native");
      return 0;
    }
    snprintf(native_why, sizeof native_why,
             "native run of %s did not start: %s", prog,
             rc > 0 ? strerror(rc) : "fork/pipe failed");
    if (mode == TU_REF_NATIVE) {
      snprintf(why, whylen, "%s", native_why);
      return -1;
    }
  }
  char qwhy[256] = "", qpath[1024];
  const char *qemu = tu_qemu_for(prog, qwhy, sizeof qwhy);
  if (!qemu) {
    snprintf(why, whylen, "%s%s%s", native_why, native_why[0] ? "; " : "",
             qwhy);
    return -1;
  }
  if (find_on_path(qemu, qpath, sizeof qpath) < 0) {
    snprintf(why, whylen,
             "%s%s%s not found (install Debian's qemu-user-static: "
             "scripts/setup-debian.sh)",
             native_why, native_why[0] ? "; " : "", qemu);
    return -1;
  }
  const char *qargv[66];
  size_t nq = 0;
  qargv[nq++] = qpath;
  for (size_t i = 0; i <= na; i++)
    qargv[nq++] = argv[i];
  int rc = spawn_capture(cwd, qargv, r);
  if (rc != 0) {
    snprintf(why, whylen, "%s%s%s did not start: %s", native_why,
             native_why[0] ? "; " : "", qpath,
             rc > 0 ? strerror(rc) : "fork/pipe failed");
    return -1;
  }
  snprintf(r->how, sizeof r->how, "%s", qemu);
  return 0;
}

/* Splits a space-separated argument string into argv (in buf). */
static void split_args(const char *arg, char *buf, size_t max,
                       const char **argv, size_t maxargs) {
  snprintf(buf, max, "%s", arg);
  size_t n = 0;
  for (char *save = NULL, *t = strtok_r(buf, " ", &save); t && n + 1 < maxargs;
       t = strtok_r(NULL, " ", &save))
    argv[n++] = t;
  argv[n] = NULL;
}

void tu_check_reference(tu_ref_mode mode, const char *guest, const char *arg) {
  tu_check_reference_prog(mode, guest, tu_guest(guest), arg);
}

const char *tu_engine_refuses_arch(const tc_arch *arch) {
  static char why[512];
  return tc_engine_refusal(arch, true, why, sizeof why);
}

const char *tu_engine_refuses(const char *prog) {
  size_t n = 0;
  uint8_t *data = tu_read_file(prog, &n);
  tc_elf_image img;
  tc_error err = {{0}};
  int ok = data && tc_elf_parse(data, n, &img, &err) == 0 && img.arch;
  free(data);
  if (!ok)
    return NULL; /* not an ELF file of a known arch: recording will say so */
  return tu_engine_refuses_arch(img.arch);
}

int tu_expect_refusal(const char *prog) {
  const char *why = tu_engine_refuses(prog);
  if (!why)
    return 0;
  char expect[512], *out = NULL;
  snprintf(expect, sizeof expect, "%s", why);
  int st = tu_runf(&out, 1, "cd %s && %s record -q -f tct -o %s -- %s 2>&1",
                   tu_tmpdir(), TC_CLI, tu_tmp("refused"), prog);
  const char *t = out ? out : "";
  CU_ASSERT_EQUAL(st, 125);
  /* one line: the probe's message, nothing of the program */
  char line[600];
  snprintf(line, sizeof line, "tracecorn: %s\n", expect);
  CU_ASSERT_STRING_EQUAL(t, line);
  if (st != 125 || strcmp(t, line) != 0)
    fprintf(stderr, "\n%s: expected the refusal [%s], got %d [%s]\n", prog,
            expect, st, t);
  free(out);
  return 1;
}

void tu_check_reference_prog(tu_ref_mode mode, const char *label,
                             const char *prog, const char *arg) {
  if (tu_expect_refusal(prog))
    return;
  char *emu = NULL, abuf[1024], why[512], cmd[8192], g[4096];
  const char *args[16];
  snprintf(g, sizeof g, "%s", prog);
  split_args(arg, abuf, sizeof abuf, args, 16);
  tu_ref_run ref;
  int started =
      tu_reference_run(mode, tu_tmpdir(), g, args, &ref, why, sizeof why) == 0;
  if (!started)
    fprintf(stderr, "\n%s: no reference run: %s\n", label, why);
  CU_ASSERT_FATAL(started);
  int k =
      snprintf(cmd, sizeof cmd, "cd %s && %s record -q -f tct -o %s -- %s %s",
               tu_tmpdir(), TC_CLI, tu_tmp(label), g, arg);
  CU_ASSERT_FATAL(k > 0 && (size_t)k < sizeof cmd);
  int es = tu_run(cmd, &emu, 0);
  CU_ASSERT_EQUAL(ref.status, es);
  CU_ASSERT_PTR_NOT_NULL_FATAL(emu);
  CU_ASSERT_STRING_EQUAL(ref.out, emu);
  if (ref.status != es || strcmp(ref.out, emu) != 0)
    fprintf(stderr, "\n%s %s: %s %d [%s] vs tracecorn %d [%s]\n", label, arg,
            ref.how, ref.status, ref.out, es, emu);
  free(ref.out);
  free(emu);
}
