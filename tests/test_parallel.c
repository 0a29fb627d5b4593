/* SPDX-License-Identifier: GPL-2.0-or-later */
/* record -j N (issue 34, lib/parallel.c, docs/speed.md): the run phase
 * at the engine's speed, a forked checkpoint per tct chunk, children that
 * record their segment from the run's syscall log, the parts joined. The
 * joined file must be byte for byte the -j 1 recording (small chunks:
 * many segments), for static and dynamic programs, syscalls and file
 * I/O, faults, signals to handlers, threads, exits and --max-insns inside a
 * segment or on its edge, on every arch -j N records; the
 * guest's own I/O happens once; what -j N does not cover is refused in
 * one line and writes nothing; a replay that leaves the log is caught
 * (a corrupted log record, the debug switch TRACECORN_TEST_CORRUPT_LOG). */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testutil.h"

/* Records guest args with opts to DIR/out.tct (run in DIR, stdin empty);
 * the exit status; *log gets stdout and stderr. */
static int rec(char **log, const char *dir, const char *opts, const char *out,
               const char *guest, const char *args, const char *env) {
  return tu_runf(
      log, 1, "cd %s && %s %s record -q -o %s %s -- %s %s </dev/null", dir,
      env ? env : "", TC_CLI, out, opts, tu_guest(guest), args ? args : "");
}

/* -j 1 and -j N (N = 2, 4) of the same program give the same file and
 * the same status and output. */
static void same_as_serial(const char *guest, const char *args,
                           const char *opts) {
  char dir[512], o1[600], on[600];
  snprintf(dir, sizeof dir, "%s", tu_tmp("par"));
  tu_runf(NULL, 1, "rm -rf %s && mkdir -p %s", dir, dir);
  char *l1 = NULL;
  int r1 = rec(&l1, dir, opts, "s1", guest, args, NULL);
  snprintf(o1, sizeof o1, "%s/s1.tct", dir);
  CU_ASSERT_FATAL(tu_have(o1));
  /* under the sanitizers (several times slower): -j 2 only */
  for (int j = 2; j <= (TC_SANITIZED ? 2 : 4); j += 2) {
    char o[600], *ln = NULL;
    snprintf(o, sizeof o, "-j %d %s", j, opts);
    /* a fresh directory: a guest's files start as they did */
    tu_runf(NULL, 1, "cd %s && rm -f sysmix.txt *.tmp", dir);
    int rn = rec(&ln, dir, o, "sn", guest, args, NULL);
    snprintf(on, sizeof on, "%s/sn.tct", dir);
    if (rn != r1 || !tu_same_file(o1, on))
      fprintf(stderr, "%s %s -j %d: status %d vs %d, %s\n", guest,
              args ? args : "", j, rn, r1, ln ? ln : "");
    CU_ASSERT_EQUAL(rn, r1);
    CU_ASSERT_TRUE(tu_same_file(o1, on));
    /* the guest's output, once (the segments never call the kernel) */
    CU_ASSERT_STRING_EQUAL(ln ? ln : "", l1 ? l1 : "");
    free(ln);
    unlink(on);
  }
  free(l1);
}

static void test_static(void) {
  same_as_serial("fib64", NULL, "-O tct.chunk=8192");
  same_as_serial("hello64", NULL, "-O tct.chunk=4096");
  same_as_serial("glibc32", NULL, "-O tct.chunk=8192");
  same_as_serial("insns64", NULL, "-O tct.chunk=4096");
}

static void test_dynamic(void) {
  same_as_serial("dyn64", NULL, "-O tct.chunk=16384");
  if (!TC_SANITIZED)
    same_as_serial("cxxdyn32", NULL, "-O tct.chunk=65536");
}

/* Files written and read back, stat, mmap, many syscalls. */
static void test_syscalls_files(void) {
  same_as_serial("sysmix64", NULL, "-O tct.chunk=4096");
  same_as_serial("statfs64", NULL, "-O tct.chunk=8192");
}

/* Several megabytes of trace, hundreds of segments; the guest exits in
 * the middle of its last one. */
static void test_many_segments(void) {
  if (!TC_SANITIZED)
    same_as_serial("strsort64", NULL, "-O tct.chunk=4096");
  same_as_serial("loop64", "20000", "-O tct.chunk=8192 --keyframe 1024");
}

/* The other arches. A checkpoint that would fall in a mips delay slot
 * or inside a Thumb IT block is taken before the branch or the IT (the
 * engine cannot resume there): small chunks put hundreds of boundaries
 * in glibc's startup, where both occur (without it, glibc-armhf and
 * loop-mips at 512 differ from -j 1). */
static void test_arches(void) {
  const char *o = "-O tct.chunk=512 --keyframe 256";
  same_as_serial("loop-mips", "3000", o);
  same_as_serial("interwork-armhf", NULL, "-O tct.chunk=256 --keyframe 256");
  /* --max-insns on a boundary a delay slot moved: no segment past it
   * (instruction 4095 is a branch; its part would repeat the end) */
  same_as_serial("loop-mips", "3000",
                 "-O tct.chunk=256 --keyframe 256 --max-insns 4096");
  if (!TC_SANITIZED) {
    same_as_serial("glibc-armhf", NULL, o);
    same_as_serial("hello-arm64", NULL, "-O tct.chunk=256 --keyframe 256");
    same_as_serial("loop-mipsel", "1000", o);
    same_as_serial("hello-armel", NULL, "-O tct.chunk=256 --keyframe 256");
    /* sparc64's delay slots (windows-sparc64 differs without the early
     * stop); not under the sanitizers: Unicorn 2.0.1's sparc64 leaks its
     * TLB under LeakSanitizer (tests/sparc.cmake) */
    same_as_serial("windows-sparc64", NULL, "-O tct.chunk=256 --keyframe 256");
  }
}

/* In dir: guest recorded with opts (s.tct) and through --log-only and
 * `materialize -j 2` (m.tct): the same exit status, the same bytes. */
static void same_materialized(const char *dir, const char *guest,
                              const char *opts) {
  char lo[300];
  snprintf(lo, sizeof lo, "--log-only %s", opts);
  int r1 = rec(NULL, dir, opts, "s", guest, NULL, NULL);
  int r2 = rec(NULL, dir, lo, "l", guest, NULL, NULL);
  int r3 = tu_runf(NULL, 1, "cd %s && %s materialize -q -j 2 -o m l.tclog", dir,
                   TC_CLI);
  CU_ASSERT_EQUAL(r2, r1);
  CU_ASSERT_EQUAL(r3, r1);
  char a[600], b[600];
  snprintf(a, sizeof a, "%s/s.tct", dir);
  snprintf(b, sizeof b, "%s/m.tct", dir);
  CU_ASSERT_TRUE(tu_same_file(a, b));
}

/* Signals delivered to handlers: from kill/raise (the frame, the SIGNAL,
 * the PC moved, sigreturn: in the syscall's record) and from faults (a
 * record of its own at the faulting instruction), on every arch; and
 * through --log-only and materialize, whose run replays the deliveries
 * from the log. */
static void test_signals(void) {
  const char *o = "-O tct.chunk=512 --keyframe 256";
  same_as_serial("sigself64", NULL, o);
  same_as_serial("sigfault-armhf", NULL, o);
  if (!TC_SANITIZED)
    same_as_serial("sigself-mips", NULL, o);
  char dir[512];
  snprintf(dir, sizeof dir, "%s", tu_tmp("parsig"));
  tu_runf(NULL, 1, "rm -rf %s && mkdir -p %s", dir, dir);
  same_materialized(dir, "sigfault-mipsel", o);
}

/* A fault to a handler by the last instruction before a checkpoint that
 * has a keyframe of its own: -j 1 writes the KEYFRAME of the next
 * instruction, the FAULT, the SIGNAL and the handler's KEYFRAME of that
 * same instruction; the run's checkpoint comes after the delivery. The
 * grid and --keyframe are put at each faulting index + 1, read from a -j 1
 * recording (the indexes move with the guest's path, whose bytes are on
 * its stack: sigfault-mipsel's third fault fell on the grid of
 * test_signals from some build directories). */
static void fault_on_edge(const char *guest, int most, bool materialize,
                          const char *env) {
  char dir[512];
  snprintf(dir, sizeof dir, "%s", tu_tmp("paredge"));
  tu_runf(NULL, 1, "rm -rf %s && mkdir -p %s", dir, dir);
  rec(NULL, dir, "", "f", guest, NULL, NULL);
  char *idx = NULL;
  tu_runf(&idx, 0,
          "%s dump --json %s/f.tct | sed -n "
          "'s/.*\"type\":\"fault\",\"index\":\\([0-9]*\\).*/\\1/p'",
          TC_CLI, dir);
  int n = 0;
  char *s = idx, *e;
  for (unsigned long long f; n < most && s && (f = strtoull(s, &e, 10), e != s);
       s = e) {
    char o[200];
    snprintf(o, sizeof o, "-O tct.chunk=%llu --keyframe %llu", f + 1, f + 1);
    if (env) { /* -j 2 with env against -j 1 */
      char jo[300], a[600], b[600];
      snprintf(jo, sizeof jo, "-j 2 %s", o);
      int r1 = rec(NULL, dir, o, "s", guest, NULL, NULL);
      int r2 = rec(NULL, dir, jo, "e", guest, NULL, env);
      CU_ASSERT_EQUAL(r2, r1);
      snprintf(a, sizeof a, "%s/s.tct", dir);
      snprintf(b, sizeof b, "%s/e.tct", dir);
      CU_ASSERT_TRUE(tu_same_file(a, b));
    } else {
      same_as_serial(guest, NULL, o);
    }
    if (materialize && n == 0)
      same_materialized(dir, guest, o);
    n++;
  }
  CU_ASSERT_EQUAL(n, most); /* the sigfault guests fault five times */
  free(idx);
}

static void test_fault_on_edge(void) {
  fault_on_edge("sigfault-mipsel", 5, true, NULL);
  fault_on_edge("sigfault64", 3, false, NULL);
  if (!TC_SANITIZED)
    fault_on_edge("sigfault-armhf", 3, false, NULL);
  /* a segment begun early (a delay slot, an IT block before the
   * checkpoint) starts at the handler's KEYFRAME too: the FAULT and the
   * SIGNAL are the previous segment's (they were written twice); every
   * checkpoint early on arm64 (the test hook) */
  fault_on_edge("sigfault-arm64", 5, false,
                "TRACECORN_TEST_EARLY_CHECKPOINT=1");
}

/* Threads: the run's calls of the thread scheduler (a quantum's end, a
 * futex wait, a read of a pipe another thread writes, a clone, a signal
 * for a thread on its switch) are logged; a segment makes the same
 * switches from the log with every thread's registers from its
 * checkpoint (the forked table) or from the clone it replayed. Small
 * quanta put switches on the chunk boundaries (256 and 512) and in
 * delay slots and IT blocks; the pipe's end of file comes once no
 * checkpoint holds its write end. */
static void test_threads(void) {
  const char *o = "-O tct.chunk=512 --keyframe 256 --sched-quantum ";
  char b[200];
  snprintf(b, sizeof b, "%s50", o);
  same_as_serial("threads2-64", "pipe", b);
  snprintf(b, sizeof b, "%s256", o);
  same_as_serial("threads2-mipsel", "300", b);
  same_as_serial("sigthread-64", NULL, "-O tct.chunk=4096 --sched-quantum 256");
  if (!TC_SANITIZED) {
    same_as_serial("threads2-32", "300",
                   "-O tct.chunk=4096 --sched-quantum 97");
    snprintf(b, sizeof b, "%s7", o);
    same_as_serial("threads2-arm64", "pipe", b);
    same_as_serial("sigthread-armhf", NULL,
                   "-O tct.chunk=1024 --keyframe 256 --sched-quantum 300");
    /* every checkpoint early (the arm64 test hook), quantum 13 (some
     * end on a chunk boundary): the switch at a quantum's end comes after
     * the run's checkpoint, so the segment begun early writes both
     * KEYFRAMEs of its first instruction, the last thread's and the
     * next one's */
    char dir[512], a[600], e[600];
    snprintf(dir, sizeof dir, "%s", tu_tmp("parthe"));
    tu_runf(NULL, 1, "rm -rf %s && mkdir -p %s", dir, dir);
    snprintf(b, sizeof b, "%s13", o);
    int r1 = rec(NULL, dir, b, "s", "threads2-arm64", "pipe", NULL);
    snprintf(b, sizeof b, "-j 2 %s13", o);
    int r2 = rec(NULL, dir, b, "e", "threads2-arm64", "pipe",
                 "TRACECORN_TEST_EARLY_CHECKPOINT=1");
    CU_ASSERT_EQUAL(r2, r1);
    snprintf(a, sizeof a, "%s/s.tct", dir);
    snprintf(e, sizeof e, "%s/e.tct", dir);
    CU_ASSERT_TRUE(tu_same_file(a, e));
  }
  char dir[512];
  snprintf(dir, sizeof dir, "%s", tu_tmp("parthr"));
  tu_runf(NULL, 1, "rm -rf %s && mkdir -p %s", dir, dir);
  snprintf(b, sizeof b, "%s256", o);
  same_materialized(dir, "sigthread-arm64", b);
}

/* --max-insns inside a segment and on its edge; a fault ends the run. */
static void test_ends(void) {
  same_as_serial("fib64", NULL, "-O tct.chunk=8192 --max-insns 50000");
  same_as_serial("fib64", NULL, "-O tct.chunk=8192 --max-insns 49152");
  same_as_serial("segv64", NULL, "-O tct.chunk=4096");
  same_as_serial("priv64", NULL, "-O tct.chunk=4096");
}

/* Every format with a writer, from the tct recorded in parallel (the tct
 * itself asked for or not): the files -j 1 writes. */
static void same_files(const char *guest, const char *args,
                       const char *formats) {
  char dir[512];
  snprintf(dir, sizeof dir, "%s", tu_tmp("parf"));
  tu_runf(NULL, 1, "rm -rf %s && mkdir -p %s/a %s/b", dir, dir, dir);
  char o1[700], o2[700], *l1 = NULL, *l2 = NULL;
  snprintf(o1, sizeof o1, "-f %s -O tct.chunk=8192", formats);
  snprintf(o2, sizeof o2, "-j 2 -f %s -O tct.chunk=8192", formats);
  int r1 = rec(&l1, dir, o1, "a/t", guest, args, NULL);
  tu_runf(NULL, 1, "cd %s && rm -f sysmix.txt", dir);
  int r2 = rec(&l2, dir, o2, "b/t", guest, args, NULL);
  CU_ASSERT_EQUAL(r1, r2);
  CU_ASSERT_STRING_EQUAL(l2 ? l2 : "", l1 ? l1 : "");
  char *d = NULL, *n = NULL;
  tu_runf(&n, 1, "ls %s/a | wc -l", dir);
  int rc = tu_runf(&d, 1, "diff -r %s/a %s/b", dir, dir);
  if (rc != 0)
    fprintf(stderr, "%s -f %s: %s\n", guest, formats, d ? d : "");
  CU_ASSERT_EQUAL(rc, 0);
  /* as many files as formats asked for (rvn: a directory); -f all: the
   * formats the arch can hold, at least tct, ucir, bap, drcov, text */
  int nf = 1;
  for (const char *p = formats; *p; p++)
    nf += *p == ',';
  if (strcmp(formats, "all") == 0) {
    CU_ASSERT(n && atoi(n) >= 5);
  } else {
    CU_ASSERT_EQUAL(n ? atoi(n) : 0, nf);
  }
  free(d), free(n), free(l1), free(l2);
}

static void test_formats(void) {
  same_files("sysmix64", NULL,
             TC_SANITIZED
                 ? "tct,trac,tfile"
                 : "tct,trac,ucir,bap,rvn,drcov,tenet,text,json,tfile");
  same_files("glibc32", NULL, "trac,ucir,json");
  same_files("dyn64", NULL, "text");
  /* threads: the tids and switches of every format */
  same_files("threads2-64", NULL,
             TC_SANITIZED ? "trac,ucir" : "trac,ucir,bap,rvn,tenet,json");
  /* every format arm can hold (the others convert from a tct that is
   * -j 1's byte for byte, test_arches) */
  if (!TC_SANITIZED)
    same_files("interwork-armhf", NULL, "all");
}

/* record --log-only, then tracecorn materialize: the files record writes
 * of that run; the guest's effects (its output, its files) happen once,
 * in the logged run. */
static void test_log_materialize(void) {
  char dir[512];
  snprintf(dir, sizeof dir, "%s", tu_tmp("parlog"));
  tu_runf(NULL, 1, "rm -rf %s && mkdir -p %s", dir, dir);
  const char *opts = "-O tct.chunk=4096";
  char *l1 = NULL, *l2 = NULL, *l3 = NULL;
  int r1 = rec(&l1, dir, opts, "s", "sysmix64", NULL, NULL);
  char fmt[64];
  snprintf(fmt, sizeof fmt, "--log-only %s", opts);
  tu_runf(NULL, 1, "cd %s && rm -f sysmix.txt && cp %s/s.tct %s/s.keep", dir,
          dir, dir);
  int r2 = rec(&l2, dir, fmt, "l", "sysmix64", NULL, NULL);
  CU_ASSERT_EQUAL(r2, r1);
  CU_ASSERT_STRING_EQUAL(l2 ? l2 : "", l1 ? l1 : ""); /* its output */
  char logp[600];
  snprintf(logp, sizeof logp, "%s/l.tclog", dir);
  CU_ASSERT_TRUE(tu_have(logp));
  tu_runf(NULL, 1, "rm -f %s/sysmix.txt", dir);
  /* from another directory, -j 2, tct and trac */
  int r3 =
      tu_runf(&l3, 1, "cd / && %s materialize -q -j 2 -f tct,trac -o %s/m %s",
              TC_CLI, dir, logp);
  CU_ASSERT_EQUAL(r3, r1);
  CU_ASSERT_STRING_EQUAL(l3 ? l3 : "", ""); /* the guest does not run */
  char a[600], b[600];
  snprintf(a, sizeof a, "%s/s.keep", dir);
  snprintf(b, sizeof b, "%s/m.tct", dir);
  CU_ASSERT_TRUE(tu_same_file(a, b));
  snprintf(b, sizeof b, "%s/m.trace64", dir);
  CU_ASSERT_TRUE(tu_have(b));
  snprintf(b, sizeof b, "%s/sysmix.txt", dir);
  CU_ASSERT_FALSE(tu_have(b)); /* no file written again */
  free(l1), free(l2), free(l3);

  /* a corrupted record: the replay leaves the log, nothing written */
  char *l4 = NULL;
  rec(NULL, dir, "--log-only -O tct.chunk=4096", "c", "fib64", NULL,
      "TRACECORN_TEST_CORRUPT_LOG=4");
  int r4 = tu_runf(&l4, 1, "cd %s && %s materialize -j 2 -o cm c.tclog", dir,
                   TC_CLI);
  CU_ASSERT_EQUAL(r4, 125);
  CU_ASSERT(l4 && strstr(l4, "diverged from the run's log"));
  snprintf(b, sizeof b, "%s/cm.tct", dir);
  CU_ASSERT_FALSE(tu_have(b));
  free(l4);

  /* the program is not the one logged: refused */
  char *l5 = NULL;
  tu_runf(NULL, 1, "cp %s %s/prog", tu_guest("hello64"), dir);
  tu_runf(NULL, 1, "cd %s && %s record -q --log-only -o p -- ./prog", dir,
          TC_CLI);
  tu_runf(NULL, 1, "cp %s %s/prog", tu_guest("fib64"), dir);
  int r5 = tu_runf(&l5, 1, "cd %s && %s materialize p.tclog", dir, TC_CLI);
  CU_ASSERT_EQUAL(r5, 125);
  CU_ASSERT(l5 && strstr(l5, "does not start as it did"));
  free(l5);
}

/* execve: the run logs what the kernel did (the old image's unmaps, the
 * new one's maps and bytes, its stack, the registers) and a segment
 * replays it; a segment begun after it starts from a checkpoint of the
 * new program. Chunks of 256 (boundaries all over both programs), a
 * boundary on the execve itself and on the new program's first
 * instruction (found in the -j 1 text trace), --log-only + materialize
 * (the new program is the log's bytes), execs that fail and go on, an
 * exec not followed (--no-follow: the recording ends there), i386. */
static void test_exec(void) {
  char args[4300], o[200];
  snprintf(args, sizeof args, "run %s x y", tu_guest("args64"));
  same_as_serial("exec64", args, "-O tct.chunk=256 --keyframe 256");
  same_as_serial("exec64", args, "--no-follow -O tct.chunk=512 --keyframe 256");
  char dir[512], a[600], b[600], *idx = NULL;
  snprintf(dir, sizeof dir, "%s", tu_tmp("parexec"));
  tu_runf(NULL, 1, "rm -rf %s && mkdir -p %s", dir, dir);
  rec(NULL, dir, "-f text", "t", "exec64", args, NULL);
  tu_runf(&idx, 1,
          "awk '/^ *syscall execve/ {print n; exit} $1 ~ /^[0-9]+$/ "
          "{n = $1}' %s/t.txt",
          dir);
  long x = idx ? atol(idx) : 0;
  free(idx);
  CU_ASSERT_FATAL(x > 1000);
  for (long at = x; at <= x + 1; at++) {
    snprintf(o, sizeof o, "-O tct.chunk=%ld --keyframe %ld", at, at);
    same_as_serial("exec64", args, o);
  }
  /* --log-only, then materialize -j 2, without args64 at hand */
  const char *lo = "-O tct.chunk=1024 --keyframe 256";
  snprintf(o, sizeof o, "--log-only %s", lo);
  int r1 = rec(NULL, dir, lo, "s", "exec64", args, NULL);
  int r2 = rec(NULL, dir, o, "l", "exec64", args, NULL);
  int r3 = tu_runf(NULL, 1, "cd / && %s materialize -q -j 2 -o %s/m %s/l.tclog",
                   TC_CLI, dir, dir);
  CU_ASSERT_EQUAL(r1, 4); /* args64: its argc */
  CU_ASSERT_EQUAL(r2, r1);
  CU_ASSERT_EQUAL(r3, r1);
  snprintf(a, sizeof a, "%s/s.tct", dir);
  snprintf(b, sizeof b, "%s/m.tct", dir);
  CU_ASSERT_TRUE(tu_same_file(a, b));
  if (!TC_SANITIZED) {
    same_as_serial("exec64", "errors", "-O tct.chunk=512 --keyframe 256");
    snprintf(args, sizeof args, "run %s a b", tu_guest("args32"));
    same_as_serial("exec32", args, "-O tct.chunk=256 --keyframe 256");
  }
}

/* What -j N does not cover yet: one line, status 125, no file. */
static void refused(const char *guest, const char *opts, const char *what) {
  char dir[512], out[600];
  snprintf(dir, sizeof dir, "%s", tu_tmp("parref"));
  tu_runf(NULL, 1, "rm -rf %s && mkdir -p %s", dir, dir);
  char *log = NULL;
  int rc = rec(&log, dir, opts, "r", guest, NULL, NULL);
  if (rc != 125 || !log || !strstr(log, what))
    fprintf(stderr, "%s %s: %d: %s\n", guest, opts, rc, log ? log : "");
  CU_ASSERT_EQUAL(rc, 125);
  CU_ASSERT(log && strstr(log, what));
  snprintf(out, sizeof out, "%s/r.tct", dir);
  CU_ASSERT_FALSE(tu_have(out));
  char *ls = NULL;
  tu_runf(&ls, 1, "ls -A %s", dir);
  CU_ASSERT_STRING_EQUAL(ls ? ls : "", ""); /* no part, no partial file */
  free(ls);
  free(log);
}

static void test_refusals(void) {
  refused("fork64", "-j 2", "made a process");
  refused("hello64", "-j 2 -z", ".zst");
  refused("hello64", "-j 2 --trace-range main", "--trace-range");
  refused("hello64", "-j 2 -O tct.chunk=1000", "multiple of the keyframe");
  refused("hello64", "-j 2 -O tct.chunk=0", "chunk");
  refused("hello-mips64el", "-j 2", "mips64el");
}

/* A log record that does not match the replay: reported with the
 * instruction, nothing written. */
static void test_divergence(void) {
  char dir[512], out[600];
  snprintf(dir, sizeof dir, "%s", tu_tmp("pardiv"));
  tu_runf(NULL, 1, "rm -rf %s && mkdir -p %s", dir, dir);
  char *log = NULL;
  int rc = rec(&log, dir, "-j 2 -O tct.chunk=4096", "d", "fib64", NULL,
               "TRACECORN_TEST_CORRUPT_LOG=5");
  CU_ASSERT_EQUAL(rc, 125);
  CU_ASSERT(log && strstr(log, "diverged from the run's log at "
                               "instruction"));
  if (log && !strstr(log, "diverged"))
    fprintf(stderr, "divergence: %d: %s\n", rc, log);
  snprintf(out, sizeof out, "%s/d.tct", dir);
  CU_ASSERT_FALSE(tu_have(out));
  free(log);
}

/* Ctrl-C under -j N: as under -j 1 the command exits 130, but keeps no
 * trace (a partial one would not be -j 1's) and says so. */
static void test_interrupt(void) {
  char tct[4200], err_path[4200];
  snprintf(tct, sizeof tct, "%s.tct", tu_tmp("par-int"));
  snprintf(err_path, sizeof err_path, "%s.err", tu_tmp("par-int"));
  pid_t pid = fork();
  CU_ASSERT_FATAL(pid >= 0);
  if (pid == 0) {
    int fd = open("/dev/null", 1), efd = creat(err_path, 0644);
    dup2(fd, 1);
    dup2(efd, 2);
    execl(TC_CLI, TC_CLI, "record", "-j", "2", "-o", tu_tmp("par-int"), "--",
          tu_guest("loop64"), "200000000", (char *)NULL);
    _exit(127);
  }
  usleep(1500 * 1000);
  kill(pid, SIGINT);
  int st = 0;
  waitpid(pid, &st, 0);
  CU_ASSERT(WIFEXITED(st));
  CU_ASSERT_EQUAL(WEXITSTATUS(st), 130);
  CU_ASSERT_NOT_EQUAL(access(tct, F_OK), 0);
  char *err = NULL;
  tu_runf(&err, 0, "cat %s", err_path);
  CU_ASSERT_PTR_NOT_NULL(strstr(err ? err : "", "keeps no partial trace"));
  CU_ASSERT_PTR_NULL(strstr(err ? err : "", "INCOMPLETE"));
  free(err);
}

int main(void) {
  static const tu_case cases[] = {
      {"static programs: -j 2, -j 4 = -j 1", test_static},
      {"dynamic programs", test_dynamic},
      {"syscalls and file I/O, guest output once", test_syscalls_files},
      {"many segments", test_many_segments},
      {"arm64, armhf, armel, mips, mipsel, sparc64: delay slots, IT blocks",
       test_arches},
      {"signals to handlers: kill, raise, faults; materialize", test_signals},
      {"a fault to a handler just before a checkpoint", test_fault_on_edge},
      {"threads: switches, futexes, a pipe, signals; materialize",
       test_threads},
      {"--max-insns and faults inside and on a segment's edge", test_ends},
      {"every format: from the tct, the same files", test_formats},
      {"record --log-only, tracecorn materialize", test_log_materialize},
      {"execve: the new image replayed from the log; materialize", test_exec},
      {"what -j N does not cover: refused", test_refusals},
      {"a replay that leaves the log: caught", test_divergence},
      {"Ctrl-C: 130, no trace kept", test_interrupt},
      {NULL, NULL}};
  return tu_run_suite("parallel", cases);
}
