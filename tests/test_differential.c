/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Differential tests (issue 29): dynamically linked programs of the
 * distribution (python3, perl, mawk, bc, coreutils) and dynamic guests (the
 * printf-of-doubles reproducer, the FP environment and libm, dlopen, C++
 * exceptions and iostreams), on x86-64, i386, arm64, armhf and mipsel. Each
 * is run under `tracecorn record` and as its reference (natively on
 * x86-64, else qemu-user with the same root as -L): stdout and exit status
 * must be equal, and the reference must print what Linux prints.
 *
 * x86-64 runs the host's own programs; the other arches run Debian's
 * packages of that arch, unpacked by scripts/fetch-foreign-rootfs.sh into
 * /var/cache/tracecorn/rootfs-<arch>; the test works on a hard-linked copy
 * with its own files added, used as --root and as -L.
 *
 * Where tracecorn still differs from Linux, the difference is pinned (both
 * outputs) and explained in docs/arches.md, "What still differs from
 * Linux": a change there makes these tests fail until the page is
 * updated. TC_DIFF_TIMES=1 prints each run's time. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "testutil.h"

#define ROOTFS_CACHE "/var/cache/tracecorn"
#define STAMP ".tracecorn-rootfs"
/* the fixed time of the test's files, and date -d's */
#define FIXED_TIME 1234567890

/* snprintf for paths and labels, which never get long enough to cut. */
__attribute__((format(printf, 3, 4))) static void fmt(char *dst, size_t max,
                                                      const char *f, ...) {
  va_list ap;
  va_start(ap, f);
  int n = vsnprintf(dst, max, f, ap);
  va_end(ap);
  if (n < 0 || (size_t)n >= max)
    abort();
}

typedef struct target {
  const char *arch;  /* as the tests name it */
  const char *qemu;  /* reference runner; NULL: native */
  const char *cache; /* rootfs-<arch> under ROOTFS_CACHE; NULL: host / */
  const char *sfx;   /* examples/guests name suffix */
  int ready;         /* 1 prepared, -1 failed */
  char root[4200];   /* the test's copy of the rootfs ("" for the host) */
  char data[4300];   /* the test's files: guest path */
  char hdata[4300];  /* and host path */
} target;

static target targets[] = {
    {"x86-64", NULL, NULL, "64", 0, "", "", ""},
    {"i386", "qemu-i386-static", "rootfs-i386", "32", 0, "", "", ""},
    {"arm64", "qemu-aarch64-static", "rootfs-arm64", "-arm64", 0, "", "", ""},
    {"armhf", "qemu-arm-static", "rootfs-armhf", "-armhf", 0, "", "", ""},
    {"mipsel", "qemu-mipsel-static", "rootfs-mipsel", "-mipsel", 0, "", "", ""},
};
enum { NTARGETS = sizeof targets / sizeof targets[0] };
enum { T_X86_64, T_I386, T_ARM64, T_ARMHF, T_MIPSEL };

/* ------------------------------------------------------------ processes */

typedef struct proc_out {
  int status; /* exit status, 128+signal; -1: did not start */
  char *out;  /* stdout, NUL-terminated (malloc'd) */
  char why[256];
} proc_out;

/* Runs argv (argv[0] a path) in cwd with stdin from in (NULL: /dev/null),
 * stderr to errfile, envp as its environment (NULL: this process's), and
 * captures stdout. An exec that fails is told apart from a program that
 * ran (status -1 and the reason in why). A limit (seconds, 0: none) ends a
 * run that hangs with SIGALRM (status 142). */
static void spawn(const char *const *argv, const char *const *envp,
                  const char *cwd, const char *in, const char *errfile,
                  unsigned limit, proc_out *r) {
  memset(r, 0, sizeof *r);
  r->status = -1;
  tu_ref_run run = {0};
  int rc = tu_spawn(argv, envp, cwd, in, errfile, limit, &run);
  if (rc > 0)
    snprintf(r->why, sizeof r->why, "%s did not start: %s", argv[0],
             strerror(rc));
  else if (rc < 0)
    snprintf(r->why, sizeof r->why, "%s: could not be run", argv[0]);
  else {
    r->status = run.status;
    r->out = run.out;
  }
}

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* ------------------------------------------------------ the test's root */

static int put(const char *dir, const char *name, const char *text) {
  char p[4400];
  fmt(p, sizeof p, "%s/%s", dir, name);
  return tu_write_file(p, text, strlen(text));
}

/* The files the programs read: a directory to list and hash (fixed times,
 * so `ls -l` is the same everywhere), numbers for sort -g, a bc program. */
static int make_data(const char *d) {
  char sub[4400], p[4400];
  fmt(sub, sizeof sub, "%s/dir", d);
  if (mkdir(d, 0755) < 0 || mkdir(sub, 0755) < 0)
    return -1;
  fmt(p, sizeof p, "%s/sub", sub);
  if (mkdir(p, 0755) < 0 || put(sub, "alpha.txt", "alpha\n") < 0 ||
      put(sub, "beta.txt", "beta beta\n") < 0 ||
      put(sub, "gamma.dat", "3.25 -1e3 0x1p-2\n") < 0)
    return -1;
  fmt(p, sizeof p, "%s/link", sub);
  if (symlink("alpha.txt", p) < 0)
    return -1;
  /* fixed times, the directory's last (its entries changed it) */
  const char *names[] = {"alpha.txt", "beta.txt", "gamma.dat",
                         "link",      "sub",      ""};
  struct timespec ts[2] = {{FIXED_TIME, 0}, {FIXED_TIME, 0}};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    fmt(p, sizeof p, "%s/%s", sub, names[i]);
    if (utimensat(AT_FDCWD, p, ts, AT_SYMLINK_NOFOLLOW) < 0)
      return -1;
  }
  if (put(d, "nums",
          "3.5\n-1e3\n2.25e-1\n0x10\n1e2\n-inf\nnan\n7\n"
          "1.5e-310\n-0\n") < 0 ||
      put(d, "words", "pear\nApple\nfig\n10\n9\napple\n") < 0 ||
      put(d, "prog.bc",
          "scale=30\n4*a(1)\ne(1)\nsqrt(2)\nl(10)/l(2)\n"
          "s(1)+c(1)\n2^100/3\nquit\n") < 0)
    return -1;
  return 0;
}

/* Prepares a target once: the host's / for x86-64, else a hard-linked
 * copy of its rootfs (a plain copy where links cannot be made). */
static target *prepare(int i) {
  target *t = &targets[i];
  if (t->ready)
    return t->ready > 0 ? t : NULL;
  t->ready = -1;
  char cmd[9000], label[64];
  if (!t->cache) {
    fmt(t->hdata, sizeof t->hdata, "%s", tu_tmp("data-x86-64"));
    fmt(t->data, sizeof t->data, "%s", t->hdata);
  } else {
    char src[512], stamp[600];
    fmt(src, sizeof src, "%s/%s", ROOTFS_CACHE, t->cache);
    fmt(stamp, sizeof stamp, "%s/%s", src, STAMP);
    if (!tu_have(stamp)) {
      fprintf(stderr,
              "\n%s: no %s (scripts/setup-debian.sh runs "
              "scripts/fetch-foreign-rootfs.sh)\n",
              t->arch, src);
      CU_FAIL("foreign rootfs missing");
      return NULL;
    }
    fmt(label, sizeof label, "root-%s", t->arch);
    fmt(t->root, sizeof t->root, "%s", tu_tmp(label));
    fmt(cmd, sizeof cmd, "cp -al %s %s 2>/dev/null || cp -a %s %s", src,
        t->root, src, t->root);
    if (tu_run(cmd, NULL, 0) != 0) {
      fprintf(stderr, "\n%s: could not copy %s\n", t->arch, src);
      CU_FAIL("rootfs copy failed");
      return NULL;
    }
    fmt(t->hdata, sizeof t->hdata, "%s/data", t->root);
    /* relative to the root (the cwd of both runs): qemu-user's statx
     * does not look in -L, and `ls /data` found nothing */
    fmt(t->data, sizeof t->data, "data");
  }
  if (make_data(t->hdata) < 0) {
    fprintf(stderr, "\n%s: could not make %s: %s\n", t->arch, t->hdata,
            strerror(errno));
    CU_FAIL("test files not made");
    return NULL;
  }
  t->ready = 1;
  return t;
}

/* ------------------------------------------------------------ the runs */

typedef struct run {
  const char *label;
  const char *prog;   /* a program of the distribution (guest path) */
  const char *guest;  /* or an examples/guests name, without its suffix */
  const char *arg[8]; /* "@D" is replaced by the data directory */
  const char *in;     /* stdin: a file of the data directory; NULL: none */
  int status;         /* the reference's exit status */
  const char *expect; /* the reference prints this (Linux's output) */
} run;

typedef struct result {
  proc_out ref, emu;
  double ref_s, emu_s;
} result;

/* The program's host path and its arguments for target t. */
static void build_argv(const target *t, const run *r, char *prog,
                       size_t progmax, char args[8][4400],
                       const char **argv_tail) {
  if (r->guest) {
    char name[128];
    fmt(name, sizeof name, "%s%s", r->guest, t->sfx);
    fmt(prog, progmax, "%s", tu_guest(name));
  } else {
    fmt(prog, progmax, "%s%s", t->root, r->prog);
  }
  size_t n = 0;
  for (; n < 8 && r->arg[n]; n++) {
    if (strcmp(r->arg[n], "@D") == 0)
      fmt(args[n], sizeof args[n], "%s/dir", t->data);
    else if (strncmp(r->arg[n], "@D/", 3) == 0)
      fmt(args[n], sizeof args[n], "%s/dir/%s", t->data, r->arg[n] + 3);
    else
      fmt(args[n], sizeof args[n], "%s", r->arg[n]);
    argv_tail[n] = args[n];
  }
  argv_tail[n] = NULL;
}

static const char *const ref_env[] = {"TZ=UTC0", NULL};

/* Runs r on t as the reference (with env, or ref_env when NULL) and under
 * tracecorn (extra: one more record option or NULL). */
static void run_both(const target *t, const run *r, const char *const *env,
                     const char *extra, result *res, bool with_ref) {
  char prog[4400], args[8][4400], in[4500] = "", out[4300], rerr[4300],
                                  eerr[4300], label[128];
  const char *tail[9];
  build_argv(t, r, prog, sizeof prog, args, tail);
  if (r->in)
    fmt(in, sizeof in, "%s/%s", t->hdata, r->in);
  fmt(label, sizeof label, "%s-%s", r->label, t->arch);
  fmt(out, sizeof out, "%s", tu_tmp(label));
  fmt(rerr, sizeof rerr, "%s.ref.err", out);
  fmt(eerr, sizeof eerr, "%s.emu.err", out);

  const char *argv[32];
  size_t n = 0;
  char qpath[512] = "";
  if (t->qemu) {
    fmt(qpath, sizeof qpath, "/usr/bin/%s", t->qemu);
    argv[n++] = qpath;
    argv[n++] = "-L";
    argv[n++] = t->root;
  }
  argv[n++] = prog;
  for (size_t i = 0; tail[i]; i++)
    argv[n++] = tail[i];
  argv[n] = NULL;
  const char *cwd = t->root[0] ? t->root : tu_tmpdir();
  double t0 = now();
  memset(res, 0, sizeof *res);
  if (with_ref)
    spawn(argv, env ? env : ref_env, cwd, r->in ? in : NULL, rerr, 120,
          &res->ref);
  res->ref_s = now() - t0;

  n = 0;
  argv[n++] = TC_CLI;
  argv[n++] = "record";
  argv[n++] = "-q";
  argv[n++] = "-f";
  argv[n++] = "tct";
  argv[n++] = "-o";
  argv[n++] = out;
  argv[n++] = "-E";
  argv[n++] = "TZ=UTC0";
  if (extra)
    argv[n++] = extra;
  if (t->root[0]) {
    argv[n++] = "--root";
    argv[n++] = t->root;
  }
  argv[n++] = "--";
  argv[n++] = prog;
  for (size_t i = 0; tail[i]; i++)
    argv[n++] = tail[i];
  argv[n] = NULL;
  t0 = now();
  /* no timer: the guest's own alarm() is tracecorn's to emulate; ctest's
   * limit ends a hang */
  spawn(argv, NULL, tu_tmpdir(), r->in ? in : NULL, eerr, 0, &res->emu);
  res->emu_s = now() - t0;
}

static void result_free(result *res) {
  free(res->ref.out);
  free(res->emu.out);
}

static void show(const target *t, const run *r, const result *res,
                 const char *what) {
  fprintf(stderr,
          "\n%s %s: %s\n  reference (%s) %d: [%s]\n"
          "  tracecorn %d: [%s]\n",
          r->label, t->arch, what, t->qemu ? t->qemu : "native",
          res->ref.status, res->ref.out ? res->ref.out : res->ref.why,
          res->emu.status, res->emu.out ? res->emu.out : res->emu.why);
}

/* The reference ran and printed what Linux prints. */
static int ref_ok(const target *t, const run *r, const result *res) {
  int ok = res->ref.out && res->ref.status == r->status &&
           (!r->expect || strstr(res->ref.out, r->expect));
  CU_ASSERT(ok);
  if (!ok)
    show(t, r, res,
         res->ref.out ? "the reference is not Linux's output"
                      : "the reference did not run");
  return ok;
}

/* The engine's refusal of t's arch (issue 37: its probes), or NULL. */
static const char *refusal(const target *t) {
  static const tc_arch_id ids[NTARGETS] = {
      TC_ARCH_X86_64, TC_ARCH_X86, TC_ARCH_ARM64, TC_ARCH_ARM, TC_ARCH_MIPSEL};
  return tu_engine_refuses_arch(tc_arch_by_id(ids[t - targets]));
}

/* Records r on target i and compares it with its reference; on an engine
 * that refuses the arch, asserts the refusal instead: status 125, nothing
 * printed, the probe's line on stderr. */
static void check(int i, const run *r) {
  target *t = prepare(i);
  CU_ASSERT_PTR_NOT_NULL_FATAL(t);
  result res;
  const char *why = refusal(t);
  if (why) {
    char want[600], eerr[4400], label[128];
    fmt(want, sizeof want, "%s", why);
    run_both(t, r, NULL, NULL, &res, false);
    fmt(label, sizeof label, "%s-%s", r->label, t->arch);
    fmt(eerr, sizeof eerr, "%s.emu.err", tu_tmp(label));
    char *err = (char *)tu_read_file(eerr, NULL);
    CU_ASSERT_EQUAL(res.emu.status, 125);
    CU_ASSERT(res.emu.out && !res.emu.out[0]);
    CU_ASSERT(err && strstr(err, want));
    if (res.emu.status != 125 || !err || !strstr(err, want))
      show(t, r, &res, "expected the engine's refusal");
    free(err);
    result_free(&res);
    return;
  }
  run_both(t, r, NULL, NULL, &res, true);
  int ok = ref_ok(t, r, &res);
  int same = res.emu.out && res.ref.out && res.emu.status == res.ref.status &&
             strcmp(res.emu.out, res.ref.out) == 0;
  CU_ASSERT(same);
  if (ok && !same)
    show(t, r, &res, "differs");
  if (getenv("TC_DIFF_TIMES"))
    fprintf(stderr, "  %-8s %-7s reference %.2f s, tracecorn %.2f s\n",
            r->label, t->arch, res.ref_s, res.emu_s);
  if (same) { /* the trace is not looked at: keep the disk free */
    char tct[4400];
    fmt(tct, sizeof tct, "%s-%s.tct", tu_tmp(r->label), t->arch);
    unlink(tct);
  }
  result_free(&res);
}

static void check_all(const run *r) {
  for (int i = 0; i < NTARGETS; i++)
    check(i, r);
}

/* ----------------------------------------------- the distribution's */

/* Python's startup is 20-30 M instructions (3-4 s recorded, 8 s on
 * mipsel); a sanitized build records it on the 64-bit arches only. */
static void test_python(void) {
  static const run r = {
      "python",
      "/usr/bin/python3.11",
      NULL,
      {"-I", "-S", "-c",
       "import math; print(1.5*3.25, 2**0.5, math.sin(1), math.fsum([0.1]*10),"
       " '%.17g' % (1/3), round(2.675, 2), math.atan2(1, -1), math.log(10),"
       " divmod(7.5, 2), (0.1).hex(), int(1e20), float('1e-310')*3,"
       " 1e300*1e300, math.sqrt(2)*1e-300, sorted([3.5, -0.0, 1e-9, -2]))"},
      NULL,
      0,
      "4.875 1.4142135623730951 0.8414709848078965 1.0 0.33333333333333331 "
      "2.67 2.356194490192345 2.302585092994046 (3.0, 1.5) "
      "0x1.999999999999ap-4 100000000000000000000 3e-310 inf "
      "1.4142135623730952e-300 [-2, -0.0, 1e-09, 3.5]\n"};
  for (int i = 0; i < NTARGETS; i++) {
    if (TC_SANITIZED && i != T_X86_64 && i != T_ARM64)
      continue;
    check(i, &r);
  }
  if (TC_SANITIZED)
    printf("(python on i386, armhf, mipsel: in the normal build only) ");
}

static void test_perl_mawk_bc(void) {
  static const run perl = {
      "perl",
      "/usr/bin/perl",
      NULL,
      {"-e", "printf \"%.6f %.15g %g %s %.3e\\n\", sqrt(2)*atan2(1,1), exp(1),"
             " log(1000)/log(10), 1/7, 2**0.5*1e100; print 9**0.5, \" \","
             " int(-3.7), \" \", 10/3, \" \", 0.1+0.2, \"\\n\";"
             " printf \"%s\\n\", join \" \", sort { $a <=> $b } (3.5, -1e3,"
             " 2.25e-1, 1e2)"},
      NULL,
      0,
      "1.110721 2.71828182845905 3 0.142857142857143 1.414e+100\n"
      "3 -3 3.33333333333333 0.3\n-1000 0.225 3.5 100\n"};
  static const run mawk = {
      "mawk",
      "/usr/bin/mawk",
      NULL,
      {"BEGIN { printf \"%.6f %.10g %g %d %.3e\\n\", sqrt(2), exp(1),"
       " atan2(0, -1), int(-3.7), 2^0.5 * 1e100; x = 0.1 + 0.2;"
       " print x, x == 0.3, 1e300 * 1e10, sin(1) + cos(1), log(10) }"},
      NULL,
      0,
      "1.414214 2.718281828 3.14159 -3 1.414e+100\n"
      "0.3 0 inf 1.38177 2.30259\n"};
  static const run bc = {"bc",
                         "/usr/bin/bc",
                         NULL,
                         {"-lq"},
                         "prog.bc",
                         0,
                         "3.141592653589793238462643383276\n"
                         "2.718281828459045235360287471352\n"
                         "1.414213562373095048801688724209\n"
                         "3.321928094887362347870319429489\n"
                         "1.381773290676036224053438929072\n"
                         "422550200076076467165567735125.3333333333333333333"
                         "33333333333\n"};
  check_all(&perl);
  check_all(&mawk);
  check_all(&bc);
}

static void test_coreutils(void) {
  static const run runs[] = {
      {"ls",
       "/bin/ls",
       NULL,
       {"-ln", "--time-style=+%s", "@D"},
       NULL,
       0,
       " 6 1234567890 alpha.txt\n"},
      {"sha256sum",
       "/usr/bin/sha256sum",
       NULL,
       {"@D/alpha.txt", "@D/beta.txt"},
       NULL,
       0,
       "b6a98d9ce9a2d9149288fa3df42d377c3e42737afdcdaf714e33c0a100b51060  "},
      {"sort",
       "/usr/bin/sort",
       NULL,
       {"-f"},
       "words",
       0,
       "10\n9\nApple\napple\nfig\npear\n"},
      {"sort-g",
       "/usr/bin/sort",
       NULL,
       {"-g"},
       "nums",
       0,
       "nan\n-inf\n-1e3\n-0\n1.5e-310\n2.25e-1\n3.5\n7\n0x10\n1e2\n"},
      {"date",
       "/bin/date",
       NULL,
       {"-d", "@1234567890", "+%Y-%m-%d %H:%M:%S %Z %s %j %A %V"},
       NULL,
       0,
       "2009-02-13 23:31:30 UTC 1234567890 044 Friday 07\n"},
      {"printf",
       "/usr/bin/printf",
       NULL,
       {"%f %.3e %g %s %.20g|%08.3f\\n", "3.25", "1234.5", "0.0001", "x", "0.1",
        "-2.5"},
       NULL,
       0,
       "3.250000 1.234e+03 0.0001 x 0.1"},
  };
  for (size_t k = 0; k < sizeof runs / sizeof runs[0]; k++)
    check_all(&runs[k]);
}

/* ------------------------------------------------------ the guests */

static void test_lazy_binding_printf(void) {
  static const run r = {"fpdyn",
                        NULL,
                        "fpdyn",
                        {"1.75"},
                        NULL,
                        0,
                        "1.7500 3.5000 5.2500\n2.3150\n"};
  check_all(&r);
}

static void test_fp_environment(void) {
  static const run r = {
      "fpenv",
      NULL,
      "fpenv",
      {"env", "1", "3"},
      NULL,
      0,
      "nearest    0x1.5555555555555p-2 -0x1.5555555555555p-2 0x1.555556p-2 "
      "1.7320508075688772 rint(2.5)=2\n"
      "upward     0x1.5555555555556p-2 -0x1.5555555555555p-2 0x1.555556p-2 "
      "1.7320508075688775 rint(2.5)=3\n"
      "downward   0x1.5555555555555p-2 -0x1.5555555555556p-2 0x1.555554p-2 "
      "1.7320508075688771 rint(2.5)=2\n"
      "towardzero 0x1.5555555555555p-2 -0x1.5555555555555p-2 0x1.555554p-2 "
      "1.7320508075688771 rint(2.5)=2\n"
      "DBL_MIN/3 = 0x0.5555555555555p-1022 (subnormal 1)\n"
      "DBL_MIN^2 = 0x0p+0, DBL_MAX*3 = inf\n"
      "FLT_MIN/8 = 0x1p-129, 5e-324*0.5 = 0x0p+0\n"
      "sqrt(-1) is nan 1, fma -0x1p-54, nextafter 0x1.0000000000001p+0\n"};
  check_all(&r);
}

/* The exception flags (<fenv.h>) as Linux keeps them: exact on arm and
 * mips; x86 is pinned below. */
static const char flags_linux[] =
    "1/0 = inf flags -Z---\n"
    "0/0 is nan 1 flags I----\n"
    "DBL_MIN/3 = 0x0.5555555555555p-1022 (subnormal 1) flags ---UX\n"
    "DBL_MAX*3 = inf flags --O-X\n"
    "DBL_MIN^2 = 0x0p+0 flags ---UX\n"
    "1/3 flags ----X\n";

static void test_fp_flags(void) {
  static const run r = {"fpflags", NULL, "fpenv",    {"flags"},
                        NULL,      0,    flags_linux};
  for (int i = T_ARM64; i < NTARGETS; i++)
    check(i, &r);
}

/* libm over 2000 inputs a function, last bits included (arm64 is the
 * FMA code path, armhf and mipsel the plain one; x86 is pinned below). */
static void test_libm(void) {
  static const run r = {"libm",
                        NULL,
                        "fpenv",
                        {"libm"},
                        NULL,
                        0,
                        "log(-1) nan log(0) -inf pow(-8,1/3) nan log2(-1) nan\n"
                        "fmod(10,0.3) 0x1.99999999999b4p-4 fmod(1e300,7.1) "
                        "0x1.cdd44378a168p-2\n"};
  for (int i = T_ARM64; i < NTARGETS; i++)
    check(i, &r);
}

static void test_dlopen(void) {
  static const run r = {
      "dlcos",
      NULL,
      "dlcos",
      {"0.5", "2", "1e3"},
      NULL,
      4,
      "cos(0.5) = 0.877582561890 pow(0.5, 0.5) = 0.707106781187\n"
      "cos(2) = -0.416146836547 pow(2, 0.5) = 1.414213562373\n"
      "cos(1000) = 0.562379076291 pow(1000, 0.5) = 31.622776601684\n"
      "missing: not loaded\n"};
  check_all(&r);
}

static void test_cxx(void) {
  static const run r = {"cxxdyn",
                        NULL,
                        "cxxdyn",
                        {"3.5", "x", "1e3", "2.5q", "-0.25"},
                        NULL,
                        2,
                        "error at 2: not a number: x\n"
                        "error at 4: trailing text: 2.5q\n"
                        "-0.2500:0.1963 3.5000:38.4845 1000.0000:3141592.6536 "
                        "\nsum 1.003250e+03 mean 3.344167e+02\n"
                        "out_of_range caught\n"};
  check_all(&r);
}

/* ---------------------------------- what differs (docs/arches.md) */

/* Runs r on t once more and asserts both outputs: the reference's (Linux)
 * and tracecorn's (the engine's, as documented). */
static void pin(int i, const run *r, const char *const *env, const char *extra,
                const char *emu_out) {
  target *t = prepare(i);
  CU_ASSERT_PTR_NOT_NULL_FATAL(t);
  result res;
  run_both(t, r, env, extra, &res, true);
  ref_ok(t, r, &res);
  int as_pinned = res.emu.out && res.emu.status == r->status &&
                  strcmp(res.emu.out, emu_out) == 0;
  CU_ASSERT(as_pinned);
  if (!as_pinned)
    show(t, r, &res,
         "tracecorn no longer prints the pinned output: if it now equals "
         "the reference, update docs/arches.md and this test");
  result_free(&res);
}

/* x86: Unicorn 2.0.1 (QEMU 5.0's helpers) sets no MXCSR exception flags,
 * and its x87 division raises only ZE (0/0 too); arm and mips are exact. */
static void test_pinned_x86_flags(void) {
  static const run r = {"fpflags", NULL, "fpenv",    {"flags"},
                        NULL,      0,    flags_linux};
  pin(T_X86_64, &r, NULL, NULL,
      "1/0 = inf flags -----\n"
      "0/0 is nan 1 flags -----\n"
      "DBL_MIN/3 = 0x0.5555555555555p-1022 (subnormal 1) flags -----\n"
      "DBL_MAX*3 = inf flags -----\n"
      "DBL_MIN^2 = 0x0p+0 flags -----\n"
      "1/3 flags -----\n");
  pin(T_I386, &r, NULL, NULL,
      "1/0 = inf flags -Z---\n"
      "0/0 is nan 1 flags -Z---\n"
      "DBL_MIN/3 = 0x0.5555555555555p-1022 (subnormal 1) flags -----\n"
      "DBL_MAX*3 = inf flags -----\n"
      "DBL_MIN^2 = 0x0p+0 flags -----\n"
      "1/3 flags -----\n");
}

/* The lines of a and b that differ, by their first word. */
static void differing(const char *a, const char *b, char *out, size_t max) {
  out[0] = 0;
  while (*a && *b) {
    size_t la = strcspn(a, "\n"), lb = strcspn(b, "\n");
    if (la != lb || memcmp(a, b, la) != 0) {
      size_t w = strcspn(a, " \n"), n = strlen(out);
      fmt(out + n, max - n, "%s%.*s", n ? " " : "", (int)w, a);
    }
    a += la + (a[la] != 0);
    b += lb + (b[lb] != 0);
  }
}

/* i386: libm's x87 code (fyl2x, f2xm1, fyl2xp1, fpatan, fprem...), which
 * Unicorn 2.0.1 computes on host doubles (4,790 of these 34,000 results
 * differed in the last bits, fmod was wrong, log(-1) was -1), runs on the
 * host's FPU (emu/engine/x86/x87_host.c): the same as Linux to the last bit, and in
 * a program of the distribution. */
static void test_i386_x87(void) {
  static const run r = {
      "libm",
      NULL,
      "fpenv",
      {"libm"},
      NULL,
      0,
      "log(-1) -nan log(0) -inf pow(-8,1/3) -nan log2(-1) -nan\n"
      "fmod(10,0.3) 0x1.99999999999b4p-4 fmod(1e300,7.1) "
      "0x1.cdd44378a168p-2\n"};
  check(T_I386, &r);
  static const run mawk = {
      "mawk-x87",
      "/usr/bin/mawk",
      NULL,
      {"BEGIN { printf \"%.17g %.17g\\n\", 10 % 0.3, 1e300 % 7.1;"
       " print log(-1), log(0), log(10) }"},
      NULL,
      0,
      "0.10000000000000037 0.45100503371973133\n-nan -inf 2.30259\n"};
  check(T_I386, &mawk);
}

/* x86-64: tracecorn's CPUID has no AVX, AVX2 or FMA (Unicorn 2.0.1 runs
 * none of them), so glibc's libm takes its SSE2 variants: the results are
 * those of Linux on such a CPU, i.e. of a native run told the same through
 * GLIBC_TUNABLES (a native run on an FMA host differs in the last bit of a
 * few), long double (the x87) included. */
static void test_pinned_x86_64_libm(void) {
  target *t = prepare(T_X86_64);
  CU_ASSERT_PTR_NOT_NULL_FATAL(t);
  static const char *const no_fma[] = {
      "TZ=UTC0", "GLIBC_TUNABLES=glibc.cpu.hwcaps=-AVX,-AVX2,-FMA,-FMA4", NULL};
  static const run r = {
      "libm",
      NULL,
      "fpenv",
      {"libm"},
      NULL,
      0,
      "log(-1) -nan log(0) -inf pow(-8,1/3) -nan log2(-1) -nan\n"
      "fmod(10,0.3) 0x1.99999999999b4p-4 fmod(1e300,7.1) "
      "0x1.cdd44378a168p-2\n"};
  result res;
  run_both(t, &r, no_fma, NULL, &res, true);
  if (ref_ok(t, &r, &res)) {
    char diff[512];
    CU_ASSERT_PTR_NOT_NULL_FATAL(res.emu.out);
    differing(res.ref.out, res.emu.out, diff, sizeof diff);
    CU_ASSERT_STRING_EQUAL(diff, ""); /* long double (x87) included */
    if (diff[0])
      show(t, &r, &res, "differs from Linux without AVX/FMA");
  }
  result_free(&res);
  /* for the record: the plain native run on this host */
  run_both(t, &r, NULL, NULL, &res, true);
  if (res.ref.out && res.emu.out) {
    char diff[512];
    differing(res.ref.out, res.emu.out, diff, sizeof diff);
    printf("(native with this CPU's libm variants differs in: %s) ",
           diff[0] ? diff : "none");
  }
  result_free(&res);
}

/* Stat results are made reproducible by default (st_ino from the path,
 * st_dev fixed, atime = mtime); --host-stat passes the host's through. */
static void test_pinned_stat(void) {
  static const run r = {"ls-i", "/bin/ls", NULL, {"-i", "@D"}, NULL, 0, NULL};
  target *t = prepare(T_X86_64);
  CU_ASSERT_PTR_NOT_NULL_FATAL(t);
  result res;
  run_both(t, &r, NULL, NULL, &res, true);
  if (ref_ok(t, &r, &res)) {
    CU_ASSERT_PTR_NOT_NULL_FATAL(res.emu.out);
    CU_ASSERT(strcmp(res.emu.out, res.ref.out) != 0);
  }
  result_free(&res);
  run_both(t, &r, NULL, "--host-stat", &res, true);
  if (ref_ok(t, &r, &res)) {
    CU_ASSERT_PTR_NOT_NULL_FATAL(res.emu.out);
    CU_ASSERT_STRING_EQUAL(res.emu.out, res.ref.out);
  }
  result_free(&res);
}

int main(void) {
  static const tu_case cases[] = {
      {"python3 one-liner, FP", test_python},
      {"perl, mawk, bc with FP", test_perl_mawk_bc},
      {"coreutils: ls, sha256sum, sort, sort -g, date, printf", test_coreutils},
      {"printf of doubles after lazy binding (issue 29)",
       test_lazy_binding_printf},
      {"FP environment: start state, rounding, subnormals",
       test_fp_environment},
      {"FP exception flags (arm, mips)", test_fp_flags},
      {"libm, 17 functions x 2000 inputs (arm, mips)", test_libm},
      {"dlopen of libm", test_dlopen},
      {"C++ exceptions, iostreams", test_cxx},
      {"pinned: x86 FP exception flags", test_pinned_x86_flags},
      {"i386 x87 transcendentals (libm, mawk) = Linux", test_i386_x87},
      {"pinned: x86-64 libm = Linux without AVX/FMA", test_pinned_x86_64_libm},
      {"pinned: stat without --host-stat", test_pinned_stat},
      {NULL, NULL}};
  return tu_run_suite("differential", cases);
}
