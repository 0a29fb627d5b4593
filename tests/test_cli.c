/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The command line as a user meets it (issue 16): help for each command,
 * options checked before the guest starts, the environment given, verify's
 * verdicts apart from the guest's output, progress on a terminal. */
#include <ctype.h>
#include <errno.h>
#include <glob.h>
#include <pty.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testutil.h"
#include "tracecorn/tracecorn.h"
#include "writers/format.h"

static void test_help_command(void) {
  const char *cmds[] = {"record", "dump", "convert", "info", "verify"};
  for (int i = 0; i < 5; i++) {
    char *a = NULL, *b = NULL;
    CU_ASSERT_EQUAL(tu_run_merge(&a, TC_CLI, "help", cmds[i], NULL), 0);
    CU_ASSERT_EQUAL(tu_run_merge(&b, TC_CLI, cmds[i], "--help", NULL), 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    CU_ASSERT_PTR_NOT_NULL_FATAL(b);
    CU_ASSERT_STRING_EQUAL(a, b);
    char want[64];
    snprintf(want, sizeof want, "usage: tracecorn %s", cmds[i]);
    CU_ASSERT_PTR_NOT_NULL(strstr(a, want));
    free(a);
    free(b);
  }
  char *out = NULL;
  CU_ASSERT_EQUAL(tu_run_merge(&out, TC_CLI, "help", "nosuch", NULL), 2);
  free(out);
  /* A wrong option or command: the error and a one-line hint (issue 36),
   * not the whole help */
  const char *bad[][3] = {{"record", "--bogus", "unrecognized option"},
                          {"dump", "--bogus", "unrecognized option"},
                          {"convert", "--bogus", "unrecognized option"},
                          {"bogus", NULL, "unknown command 'bogus'"}};
  for (int i = 0; i < 4; i++) {
    out = NULL;
    CU_ASSERT_EQUAL(
        tu_run_merge(&out, TC_CLI, bad[i][0], bad[i][1], (char *)NULL), 2);
    int lines = 0;
    for (const char *p = out ? out : ""; *p; p++)
      lines += *p == '\n';
    CU_ASSERT(out && strstr(out, bad[i][2]) && lines <= 2);
    if (lines > 2)
      fprintf(stderr, "\n%s %s: %d lines\n", bad[i][0],
              bad[i][1] ? bad[i][1] : "", lines);
    free(out);
  }
}

/* Bad options are refused before anything runs or is written. */
static void test_checked_before_start(void) {
  char *out = NULL, tct[4200];
  snprintf(tct, sizeof tct, "%s.tct", tu_tmp("early"));
  CU_ASSERT_EQUAL(tu_run_merge(&out, TC_CLI, "record", NULL), 2);
  CU_ASSERT_PTR_NOT_NULL(strstr(out ? out : "", "missing PROGRAM"));
  free(out);
  CU_ASSERT_EQUAL(tu_run_merge(&out, TC_CLI, "record", "-o", tu_tmp("early"),
                               "--root", "/nonexistent-root", "--",
                               tu_guest("hello64"), NULL),
                  2);
  CU_ASSERT_PTR_NOT_NULL(strstr(out ? out : "", "--root /nonexistent-root"));
  free(out);
  CU_ASSERT_EQUAL(tu_run_merge(&out, TC_CLI, "record", "-o", tu_tmp("early"),
                               "--cwd", "/nonexistent-cwd", "--",
                               tu_guest("hello64"), NULL),
                  2);
  CU_ASSERT_PTR_NOT_NULL(strstr(out ? out : "", "--cwd /nonexistent-cwd"));
  free(out);
  CU_ASSERT_NOT_EQUAL(access(tct, F_OK), 0);
}

/* -E K=V replaces K of the inherited environment. */
static void test_env_override(void) {
  char *out = NULL, cmd[8400];
  snprintf(cmd, sizeof cmd,
           "PATH=/usr/bin:/bin TC_KEEP=kept %s record -q -o %s --inherit-env "
           "-E PATH=/bin -E TC_NEW=new -- /usr/bin/env",
           TC_CLI, tu_tmp("env"));
  CU_ASSERT_EQUAL(tu_run(cmd, &out, 0), 0);
  const char *t = out ? out : "";
  CU_ASSERT(strstr(t, "\nPATH=/bin\n") != NULL ||
            strncmp(t, "PATH=/bin\n", 10) == 0);
  CU_ASSERT_PTR_NULL(strstr(t, "PATH=/usr/bin:/bin"));
  CU_ASSERT_PTR_NOT_NULL(strstr(t, "TC_KEEP=kept"));
  CU_ASSERT_PTR_NOT_NULL(strstr(t, "TC_NEW=new"));
  free(out);
}

/* verify: the guest's stdout is untouched, the verdicts go to stderr or
 * to --report; a bad format list is a usage error (2). */
static void test_verify_streams(void) {
  char *out = NULL, cmd[8400], report[4200];
  snprintf(report, sizeof report, "%s", tu_tmp("verify.txt"));
  snprintf(cmd, sizeof cmd, "%s verify -q -f trac,tfile -- %s 2>/dev/null",
           TC_CLI, tu_guest("hello64"));
  CU_ASSERT_EQUAL(tu_run(cmd, &out, 0), 0);
  CU_ASSERT_STRING_EQUAL(out ? out : "", "Hello from tracecorn!\n");
  free(out);
  snprintf(cmd, sizeof cmd, "%s verify -q --report %s -f trac -- %s 2>&1",
           TC_CLI, report, tu_guest("hello64"));
  CU_ASSERT_EQUAL(tu_run(cmd, &out, 0), 0);
  CU_ASSERT_PTR_NULL(strstr(out ? out : "", "ok:"));
  free(out);
  size_t n = 0;
  char *rep = (char *)tu_read_file(report, &n);
  CU_ASSERT(rep && strstr(rep, "trac   ok: "));
  free(rep);
  CU_ASSERT_EQUAL(tu_run_merge(&out, TC_CLI, "verify", "-f", "nosuch", "--",
                               tu_guest("hello64"), NULL),
                  2);
  free(out);
  /* the scratch files it deletes are not named as written (issue 36);
   * with -o PREFIX, kept, they are */
  CU_ASSERT_EQUAL(tu_run_merge(&out, TC_CLI, "verify", "-f", "trac", "--",
                               tu_guest("hello64"), NULL),
                  0);
  CU_ASSERT(out && strstr(out, "hello64 exited (status 0)") &&
            !strstr(out, "tracecorn-verify-") && !strstr(out, "wrote "));
  free(out);
  CU_ASSERT_EQUAL(tu_run_merge(&out, TC_CLI, "verify", "-o",
                               tu_tmp("verify-kept"), "-f", "trac", "--",
                               tu_guest("hello64"), NULL),
                  0);
  CU_ASSERT(out && strstr(out, "wrote ") && strstr(out, "verify-kept.tct"));
  free(out);
  /* nor in a writer's warning: bap's on a mipsel trace named the file it
   * was writing, verify's scratch file or record's NAME.partial.frames */
  CU_ASSERT_EQUAL(tu_run_merge(&out, TC_CLI, "verify", "-f", "bap", "-O",
                               "bap.mipsel=force", "--",
                               tu_guest("hello-mipsel"), NULL),
                  0);
  CU_ASSERT(out && strstr(out, "BAP's mips is big-endian") &&
            !strstr(out, "tracecorn-verify-") && !strstr(out, ".partial."));
  free(out);
  CU_ASSERT_EQUAL(tu_run_merge(&out, TC_CLI, "record", "-f", "bap", "-O",
                               "bap.mipsel=force", "-o", tu_tmp("bapmipsel"),
                               "--", tu_guest("hello-mipsel"), NULL),
                  0);
  CU_ASSERT(out && strstr(out, "BAP's mips is big-endian") &&
            !strstr(out, ".partial."));
  free(out);
}

/* Under a pty, record shows a progress line and then the summary; in a
 * pipe it shows only the summary. */
/* Output of `sh -c cmd` run on a new pseudo-terminal of 91x37. */
static char *run_on_pty(const char *cmd) {
  int master;
  struct winsize ws = {.ws_row = 37, .ws_col = 91};
  pid_t pid = forkpty(&master, NULL, NULL, &ws);
  if (pid < 0)
    return NULL;
  if (pid == 0) {
    execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
    _exit(127);
  }
  size_t len = 0, cap = 1 << 16;
  char *buf = calloc(cap, 1);
  for (;;) {
    ssize_t k = read(master, buf + len, cap - 1 - len);
    if (k < 0 && errno == EINTR)
      continue;
    if (k <= 0 || (len += (size_t)k) + 1 >= cap)
      break; /* EIO once the child has gone */
  }
  buf[len] = 0;
  waitpid(pid, NULL, 0);
  close(master);
  return buf;
}

/* A notice in the middle of a run stands on a line of its own: the
 * progress line is cleared before it (tc_set_notice_handler), not
 * continued by it. */
static void test_notice_beside_progress(void) {
  char cmd[4400];
  snprintf(cmd, sizeof cmd, "%s record -f tct -o %s -- %s 4000000", TC_CLI,
           tu_tmp("notice"), tu_guest("notice64"));
  char *out = run_on_pty(cmd);
  CU_ASSERT_PTR_NOT_NULL_FATAL(out);
  const char *n = strstr(out, "tracecorn: unimplemented syscall 999");
  CU_ASSERT_PTR_NOT_NULL_FATAL(n);
  /* the progress line was drawn before it, and cleared: the notice starts
   * right after "\r\033[K" (or a newline), never after "... s" */
  const char *p = strstr(out, "insn/s");
  CU_ASSERT(p != NULL && p < n);
  CU_ASSERT(n > out && (n[-1] == '\n' || (n >= out + 3 && n[-1] == 'K' &&
                                          n[-2] == '[' && n[-3] == '\033')));
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "syscall 999: -1"));
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "notice64 exited (status 0)"));
  free(out);
}

/* record --tty: the program's terminal answers as it does natively (or
 * under qemu-user: the reference must start, it prints the size), its modes are
 * back after the run even when the program left them raw; without --tty the
 * program sees no terminal. */
static void test_tty(void) {
  static const struct {
    const char *guest, *runner;
  } cases[] = {
      {"tty64", ""}, {"tty32", ""}, {"tty-arm64", "qemu-aarch64-static"}};
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    char cmd[8192];
    snprintf(cmd, sizeof cmd,
             "%s %s; echo @@; %s record -q --tty -o %s -- %s; echo @@; "
             "%s record -q -o %s -- %s",
             cases[i].runner, tu_guest(cases[i].guest), TC_CLI, tu_tmp("tty-a"),
             tu_guest(cases[i].guest), TC_CLI, tu_tmp("tty-b"),
             tu_guest(cases[i].guest));
    char *out = run_on_pty(cmd);
    CU_ASSERT_PTR_NOT_NULL_FATAL(out);
    char *sep = strstr(out, "@@"), *sep2 = sep ? strstr(sep + 2, "@@") : NULL;
    CU_ASSERT_PTR_NOT_NULL_FATAL(sep2);
    *sep = *sep2 = 0;
    const char *native = out, *tty = sep + 2, *plain = sep2 + 2;
    while (*tty == '\r' || *tty == '\n')
      tty++;
    CU_ASSERT_PTR_NOT_NULL(strstr(native, "winsize: 91 cols 37 rows"));
    CU_ASSERT_PTR_NOT_NULL(strstr(native, "isatty: 1 1 1"));
    CU_ASSERT_STRING_EQUAL(tty, native);
    CU_ASSERT_PTR_NOT_NULL(strstr(plain, "isatty: 0 0 0"));
    CU_ASSERT_PTR_NOT_NULL(strstr(plain, "termios: none"));
    free(out);
  }
  /* a program that leaves the terminal raw: natively it stays raw, under
   * record --tty the terminal gets its modes back */
  char cmd[8192];
  snprintf(cmd, sizeof cmd,
           "%s stay-raw >/dev/null; stty -a | grep -o -- ' -*echo ' | head -1; "
           "stty sane; %s record -q --tty -o %s -- %s stay-raw >/dev/null; "
           "stty -a | grep -o -- ' -*echo ' | head -1",
           tu_guest("tty64"), TC_CLI, tu_tmp("tty-c"), tu_guest("tty64"));
  char *out = run_on_pty(cmd);
  CU_ASSERT_PTR_NOT_NULL_FATAL(out);
  CU_ASSERT_PTR_NOT_NULL(strstr(out, " -echo "));
  const char *after = strstr(out, " -echo ");
  CU_ASSERT(after && strstr(after + 7, " echo ") != NULL);
  free(out);
}

static void test_progress_on_terminal(void) {
  int master;
  pid_t pid = forkpty(&master, NULL, NULL, NULL);
  CU_ASSERT_FATAL(pid >= 0);
  if (pid == 0) {
    execl(TC_CLI, TC_CLI, "record", "-f", "tct", "-o", tu_tmp("pty"), "--",
          tu_guest("loop64"), "1500000", (char *)NULL);
    _exit(127);
  }
  size_t len = 0, cap = 1 << 16;
  char *buf = calloc(cap, 1);
  for (;;) {
    ssize_t k = read(master, buf + len, cap - 1 - len);
    if (k <= 0 && errno == EINTR)
      continue;
    if (k <= 0)
      break; /* EIO once the child has gone */
    len += (size_t)k;
    if (len + 1 >= cap)
      break;
  }
  buf[len] = 0;
  int st = 0;
  waitpid(pid, &st, 0);
  CU_ASSERT(WIFEXITED(st) && WEXITSTATUS(st) == 0);
  CU_ASSERT_PTR_NOT_NULL(strstr(buf, "M instructions, "));
  CU_ASSERT_PTR_NOT_NULL(strstr(buf, "insn/s"));
  CU_ASSERT_PTR_NOT_NULL(strstr(buf, "loop64 exited (status 0)"));
  free(buf);
  close(master);
  char *out = NULL;
  CU_ASSERT_EQUAL(tu_run_merge(&out, TC_CLI, "record", "-f", "tct", "-o",
                               tu_tmp("pipe"), "--", tu_guest("loop64"),
                               "300000", NULL),
                  0);
  CU_ASSERT_PTR_NULL(strstr(out ? out : "", "insn/s"));
  CU_ASSERT_PTR_NOT_NULL(strstr(out ? out : "", "loop64 exited (status 0)"));
  free(out);
}

/* dump: colour only when asked or on a terminal, never with NO_COLOR or
 * --color=never; no trailing spaces; later keyframes compact unless -v;
 * --symbols names a stripped program's functions. */
static void test_dump_presentation(void) {
  char *out = NULL, cmd[9000], tct[4200], stripped[4200];
  snprintf(stripped, sizeof stripped, "%s", tu_tmp("glibc64-stripped"));
  snprintf(cmd, sizeof cmd, "strip -o %s %s", stripped, tu_guest("glibc64"));
  CU_ASSERT_EQUAL_FATAL(tu_run(cmd, &out, 1), 0);
  free(out);
  tu_run_merge(&out, TC_CLI, "record", "-q", "-f", "tct", "-o", tu_tmp("pres"),
               "--", stripped, NULL); /* the guest ends in a fault */
  free(out);
  snprintf(tct, sizeof tct, "%s.tct", tu_tmp("pres"));
  CU_ASSERT_EQUAL_FATAL(access(tct, F_OK), 0);
  /* pipe: no colour, and no line ends in a space */
  CU_ASSERT_EQUAL(tu_run_merge(&out, TC_CLI, "dump", tct, NULL), 0);
  const char *t = out ? out : "";
  CU_ASSERT_PTR_NULL(strchr(t, 0x1b));
  CU_ASSERT_PTR_NULL(strstr(t, " \n"));
  int full = 0, compact = 0;
  for (const char *l = strstr(t, "keyframe #"); l;
       l = strstr(l + 1, "\nkeyframe #")) {
    const char *eol = strchr(l + 1, '\n');
    const char *colon = strchr(l + 1, ':');
    if (colon && (!eol || colon < eol))
      full++;
    else
      compact++;
  }
  CU_ASSERT_EQUAL(full, 1);
  CU_ASSERT(compact >= 10);
  CU_ASSERT_PTR_NULL(strstr(t, "<main>:")); /* stripped */
  free(out);
  CU_ASSERT_EQUAL(tu_run_merge(&out, TC_CLI, "dump", "-v", tct, NULL), 0);
  t = out ? out : "";
  CU_ASSERT_PTR_NULL(strstr(t, "tid 1000\n"));
  free(out);
  CU_ASSERT_EQUAL(tu_run_merge(&out, TC_CLI, "dump", "--symbols",
                               tu_guest("glibc64"), tct, NULL),
                  0);
  CU_ASSERT_PTR_NOT_NULL(strstr(out ? out : "", "<main>:"));
  free(out);
  /* colour: always, but never under NO_COLOR with auto, nor with never */
  CU_ASSERT_EQUAL(tu_run_merge(&out, TC_CLI, "dump", "--color=always",
                               "--count", "5", tct, NULL),
                  0);
  CU_ASSERT_PTR_NOT_NULL(strstr(out ? out : "", "\033[36m0x"));
  free(out);
  snprintf(cmd, sizeof cmd, "NO_COLOR=1 %s dump --count 5 %s", TC_CLI, tct);
  CU_ASSERT_EQUAL(tu_run(cmd, &out, 0), 0);
  CU_ASSERT_PTR_NULL(strchr(out ? out : "", 0x1b));
  free(out);
  CU_ASSERT_EQUAL(
      tu_run_merge(&out, TC_CLI, "dump", "--color=sometimes", tct, NULL), 2);
  free(out);
}

/* record --trace-func / --trace-range: the whole program runs (same
 * output), only the selection is recorded, each entry after a gap starts
 * with a keyframe, and the formats that hold registers verify. */
static void window_case(const char *guest, const char *opt, const char *val,
                        uint64_t *n_out) {
  char *out = NULL, tct[4200], label[64];
  snprintf(label, sizeof label, "win-%s-%s", guest, opt + 8);
  snprintf(tct, sizeof tct, "%s.tct", tu_tmp(label));
  int st = tu_run_merge(&out, TC_CLI, "record", "-f", "tct", opt, val, "-o",
                        tu_tmp(label), "--", tu_guest(guest), "7", NULL);
  CU_ASSERT_EQUAL(st, 0);
  CU_ASSERT_PTR_NOT_NULL(strstr(out ? out : "", "13 10")); /* fib(7), 2*5 */
  free(out);
  CU_ASSERT_EQUAL(tu_run_merge(&out, TC_CLI, "dump", tct, NULL), 0);
  const char *t = out ? out : "";
  /* every recorded instruction is in twice or fib: no <main> label */
  CU_ASSERT_PTR_NOT_NULL(strstr(t, "<fib>:"));
  CU_ASSERT_PTR_NULL(strstr(t, "<main>:"));
  CU_ASSERT_PTR_NULL(strstr(t, "<__libc_start_main"));
  uint64_t n = 0;
  for (const char *l = t; (l = strchr(l, '\n')); l++)
    if (l[1] >= '0' && l[1] <= '9')
      n++;
  *n_out = n;
  free(out);
  st = tu_run_merge(&out, TC_CLI, "verify", "-q", "-f", "trac,tfile,bap", opt,
                    val, "--", tu_guest(guest), "7", NULL);
  CU_ASSERT_EQUAL(st, 0);
  if (st)
    fprintf(stderr, "\nverify %s %s: %s\n", opt, val, out ? out : "");
  free(out);
}

static void test_record_window(void) {
  uint64_t in_twice = 0, in_fib = 0;
  window_case("fib64", "--trace-func", "twice", &in_twice);
  window_case("fib64", "--trace-range", "fib", &in_fib);
  /* fib(7) and fib(5) (through twice) run inside fib; twice adds its own
   * few instructions around fib(5) */
  CU_ASSERT(in_fib > in_twice && in_twice > 20);
  uint64_t arm = 0;
  window_case("fib-arm64", "--trace-func", "twice", &arm);
  CU_ASSERT(arm > 20);
  char *out = NULL;
  CU_ASSERT_EQUAL(tu_run_merge(&out, TC_CLI, "record", "-q", "--trace-func",
                               "nosuchfunction", "-o", tu_tmp("win-bad"), "--",
                               tu_guest("fib64"), NULL),
                  125);
  CU_ASSERT_PTR_NOT_NULL(strstr(out ? out : "", "nosuchfunction"));
  free(out);
}

/* dump --demangle: C++ names as c++filt prints them; mangled without. */
static void test_demangle(void) {
  char *out = NULL, tct[4200];
  CU_ASSERT_EQUAL(tu_run_merge(&out, TC_CLI, "record", "-q", "-f", "tct", "-o",
                               tu_tmp("cxx"), "--", tu_guest("cxx64"), NULL),
                  0);
  CU_ASSERT_PTR_NOT_NULL(strstr(out ? out : "", "7 42"));
  free(out);
  snprintf(tct, sizeof tct, "%s.tct", tu_tmp("cxx"));
  CU_ASSERT_EQUAL(tu_run_merge(&out, TC_CLI, "dump", tct, NULL), 0);
  CU_ASSERT_PTR_NOT_NULL(strstr(out ? out : "", "<_ZN7Counter4bumpEi>:"));
  free(out);
  CU_ASSERT_EQUAL(tu_run_merge(&out, TC_CLI, "dump", "--demangle", tct, NULL),
                  0);
  const char *t = out ? out : "";
  CU_ASSERT_PTR_NOT_NULL(strstr(t, "<Counter::bump(int)>:"));
  CU_ASSERT_PTR_NOT_NULL(strstr(t, "<long twice<long>(long)>"));
  CU_ASSERT_PTR_NULL(strstr(t, "_ZN7Counter4bumpEi"));
  free(out);
}

/* Signals to the process itself run the guest's handlers on x86-64
 * (issue 15): output and exit status equal Linux's (handlers, SA_SIGINFO,
 * the mask inside a handler, a nested signal, SA_RESETHAND then the
 * default action), every format verifies; i386 likewise (its legacy
 * frame without SA_SIGINFO, the rt frame with it). Where delivery is not
 * done yet (arm64), never silently: a notice says the run diverges. */
static void test_signal_handlers(void) {
  tu_check_reference(TU_REF_AUTO, "sigself64", "");
  tu_check_reference(TU_REF_AUTO, "sigself32", ""); /* legacy and rt frames */
  char *out = NULL;
  int st = tu_run_merge(&out, TC_CLI, "verify", "-q", "-f",
                        "trac,tfile,ucir,bap,rvn", "--", tu_guest("sigself64"),
                        NULL);
  CU_ASSERT_EQUAL(st, 0); /* every format matches */
  CU_ASSERT_PTR_NULL(strstr(out ? out : "", "FAILED"));
  CU_ASSERT_PTR_NOT_NULL(strstr(out ? out : "", "rvn    ok"));
  free(out);
  st = tu_run_merge(&out, TC_CLI, "verify", "-q", "-f", "trac,tfile,bap", "--",
                    tu_guest("sigself32"), NULL);
  CU_ASSERT_EQUAL(st, 0);
  CU_ASSERT_PTR_NULL(strstr(out ? out : "", "FAILED"));
  free(out);
  /* arm64, armhf (Thumb handlers), mips, mipsel: their own frames,
   * equal to qemu-user, every format of the arch verifies */
  static const char *const cross[] = {"sigself-arm64", "sigself-armhf",
                                      "sigself-mips", "sigself-mipsel"};
  for (size_t i = 0; i < sizeof cross / sizeof *cross; i++) {
    tu_check_reference(TU_REF_AUTO, cross[i], "");
    st = tu_run_merge(&out, TC_CLI, "verify", "-q", "--", tu_guest(cross[i]),
                      NULL);
    CU_ASSERT_EQUAL(st, 0);
    CU_ASSERT_PTR_NULL(strstr(out ? out : "", "FAILED"));
    CU_ASSERT_PTR_NULL(strstr(out ? out : "", "has a guest handler"));
    free(out);
  }
}

/* icebp (issue 38): SIGTRAP as Linux's exc_debug_user sends it
 * (TRAP_BRKPT, si_addr after the instruction, trapno 1, err 0), the
 * handler returning after it, on x86-64 and i386. The expected line is
 * Linux's, from its source: qemu-user reports SIGILL and a native run on
 * a virtual machine loops on the re-injected trap (examples/guests/icebp.c). */
static void test_icebp(void) {
  const char *guests[] = {"icebp64", "icebp32"};
  for (int i = 0; i < 2; i++) {
    char *out = NULL;
    int st = tu_run_merge(&out, TC_CLI, "record", "-q", "-o", tu_tmp(guests[i]),
                          "--", tu_guest(guests[i]), NULL);
    CU_ASSERT_EQUAL(st, 0);
    CU_ASSERT(out && strstr(out, "icebp: hits=1 si_code=1 si_addr=after "
                                 "trapno=1 err=0\n"));
    /* int3 after it: SI_KERNEL (0x80), no address, trapno 3 */
    CU_ASSERT(out && strstr(out, "int3: hits=2 si_code=128 si_addr=0 "
                                 "trapno=3\n"));
    if (st != 0 || !out || !strstr(out, "si_code=1 si_addr=after"))
      fprintf(stderr, "\n%s: %s\n", guests[i], out ? out : "");
    free(out);
    /* strace's lines for them, as strace 6.1 prints a native int3's
     * (measured) and print_si_info prints SIGTRAP's si_addr */
    char prefix[4200];
    snprintf(prefix, sizeof prefix, "%s", tu_tmp(guests[i]));
    out = NULL;
    st = tu_run_merge(&out, TC_CLI, "record", "-q", "-f", "strace", "-o",
                      prefix, "--", tu_guest(guests[i]), NULL);
    CU_ASSERT_EQUAL(st, 0);
    free(out);
    char path[4300];
    snprintf(path, sizeof path, "%s.strace", prefix);
    char *text = (char *)tu_read_file(path, NULL);
    const char *brk =
        text ? strstr(text, "--- SIGTRAP {si_signo=SIGTRAP, si_code="
                            "TRAP_BRKPT, si_addr=0x")
             : NULL;
    CU_ASSERT_PTR_NOT_NULL(brk);
    const char *kern = brk ? strstr(brk, "--- SIGTRAP {si_signo=SIGTRAP, "
                                         "si_code=SI_KERNEL, si_addr=NULL} ---")
                           : NULL;
    CU_ASSERT_PTR_NOT_NULL(kern);
    if (!brk || !kern)
      fprintf(stderr, "\n%s strace: %s\n", guests[i], text ? text : "");
    free(text);
    /* bap and rvn hold no exit record: a handled trap before exit_group is
     * not a death by SIGTRAP (their readers said "killed", status 133) */
    out = NULL;
    st = tu_run_merge(&out, TC_CLI, "verify", "-f", "bap,rvn", "-o", prefix,
                      "--", tu_guest(guests[i]), NULL);
    CU_ASSERT_EQUAL(st, 0);
    if (st != 0)
      fprintf(stderr, "\n%s verify: %s\n", guests[i], out ? out : "");
    free(out);
  }
}

/* int $0x80 in 64-bit code (issue 38) runs the i386 table, as Linux
 * does: a write from static data (below 4 GiB) works, one from the stack
 * gets -EFAULT (its address cut to 32 bits), getpid answers, an unknown
 * number -ENOSYS, exit_group(7) ends it. The expected line is a native
 * run's on a kernel with IA32 emulation (examples/guests/int80.c); where
 * this host runs it natively, the native run must agree too. strace shows
 * the calls with i386's names between strace's personality lines, the
 * json dump marks them, verify passes and a format without the marker
 * names the loss. A call tracecorn does not emulate says so. */
static void test_int80_64(void) {
  const char *want = "int80: hello from the i386 table\n"
                     "write=33 stack-write=-14 getpid-same=1 bad=-38\n";
  char *out = NULL;
  int st = tu_runf(&out, 0, "'%s'", tu_guest("int80-64"));
  if (st == 7)
    CU_ASSERT_STRING_EQUAL(out ? out : "", want);
  free(out);
  char tct[4200];
  snprintf(tct, sizeof tct, "%s", tu_tmp("int80.tct"));
  out = NULL;
  st = tu_run_merge(&out, TC_CLI, "record", "-q", "-o", tct, "--",
                    tu_guest("int80-64"), NULL);
  CU_ASSERT_EQUAL(st, 7);
  CU_ASSERT(out && strstr(out, want));
  free(out);
  out = NULL;
  CU_ASSERT_EQUAL(tu_run_merge(&out, TC_CLI, "strace", tct, NULL), 0);
  const char *s = out ? out : "";
  const char *p32 = strstr(s, "[ Process PID=1000 runs in 32 bit mode. ]\n"
                              "write(1, \"int80: hello from the i386 table\""
                              "..., 33) = 33\n");
  CU_ASSERT(p32 != NULL);
  CU_ASSERT(p32 && strstr(p32, "= -1 EFAULT (Bad address)\n"
                               "getpid()                                = "
                               "1000\n"));
  const char *p64 =
      p32 ? strstr(p32, "[ Process PID=1000 runs in 64 bit mode. ]\n") : NULL;
  CU_ASSERT(p64 && strstr(p64, "[ Process PID=1000 runs in 32 bit mode. ]\n"
                               "exit_group(7)"));
  free(out);
  out = NULL;
  CU_ASSERT_EQUAL(
      tu_runf(&out, 0, "'%s' dump --json --syscalls-only '%s'", TC_CLI, tct),
      0);
  CU_ASSERT(out && strstr(out, "\"nr\":4,\"name\":\"write\"") &&
            strstr(out, "\"compat\":true"));
  free(out);
  out = NULL;
  st = tu_run_merge(&out, TC_CLI, "convert", tct, "--to", "ucir",
                    tu_tmp("int80.ucir"), NULL);
  CU_ASSERT_EQUAL(st, 0);
  CU_ASSERT(out && strstr(out, "which table 5 syscalls used"));
  free(out);
  out = NULL;
  st = tu_run_merge(&out, TC_CLI, "verify", "-q", "--", tu_guest("int80-64"),
                    NULL);
  CU_ASSERT_EQUAL(st, 0);
  CU_ASSERT(out && !strstr(out, "FAILED"));
  free(out);
  out = NULL;
  st = tu_run_merge(&out, TC_CLI, "record", "-o", tu_tmp("int80n.tct"), "--",
                    tu_guest("int80-64"), "nanosleep", NULL);
  CU_ASSERT_EQUAL(st, 0);
  CU_ASSERT(out && strstr(out, "nanosleep: -38\n") &&
            strstr(out, "int $0x80 in 64-bit code: i386 syscall 162 "
                        "(nanosleep) at pc 0x"));
  free(out);
}

/* Faults go to the guest's handlers (issue 15): SIGSEGV (unmapped,
 * write-protected then repaired and the store re-run), SIGFPE, SIGILL with
 * Linux's si_code/si_addr/trapno/err, siglongjmp out of handlers, alarm()
 * and setitimer() waking pause()/sigsuspend() on the virtual clock, and a
 * blocked fault signal killing: output and status equal Linux's on x86-64
 * and i386. The trace holds FAULT, SIGNAL and the handler's KEYFRAME;
 * strace shows the signals as strace does; every format verifies. */
static void test_fault_handlers(void) {
  tu_check_reference(TU_REF_AUTO, "sigfault64", "");
  tu_check_reference(TU_REF_AUTO, "sigfault32", "");
  char *out = NULL, tct[4200];
  snprintf(tct, sizeof tct, "%s.tct", tu_tmp("sigfault"));
  int st = tu_run_merge(&out, TC_CLI, "record", "-q", "-o", tu_tmp("sigfault"),
                        "--", tu_guest("sigfault64"), NULL);
  CU_ASSERT_EQUAL(st, 128 + 8); /* the blocked SIGFPE at the end */
  free(out);
  out = NULL;
  tu_run_merge(&out, TC_CLI, "strace", tct, NULL);
  const char *o = out ? out : "";
  CU_ASSERT_PTR_NOT_NULL(strstr(
      o,
      "--- SIGSEGV {si_signo=SIGSEGV, si_code=SEGV_MAPERR, si_addr=0x10} ---"));
  CU_ASSERT_PTR_NOT_NULL(strstr(o, "si_code=FPE_INTDIV"));
  CU_ASSERT_PTR_NOT_NULL(strstr(o, "si_code=ILL_ILLOPN"));
  CU_ASSERT_PTR_NOT_NULL(
      strstr(o, "--- SIGALRM {si_signo=SIGALRM, si_code=SI_KERNEL} ---"));
  CU_ASSERT_PTR_NOT_NULL(strstr(o, "+++ killed by SIGFPE +++"));
  /* one line per fault, not one for the FAULT and one for the SIGNAL */
  int segv = 0;
  for (const char *p = o; (p = strstr(p, "--- SIGSEGV")) != NULL; p++)
    segv++;
  CU_ASSERT_EQUAL(segv, 3);
  free(out);
  out = NULL;
  tu_run_merge(&out, TC_CLI, "dump", tct, NULL);
  o = out ? out : "";
  CU_ASSERT_PTR_NOT_NULL(strstr(o, "signal  SIGSEGV (code 1, addr 0x10) to "
                                   "handler"));
  CU_ASSERT_PTR_NOT_NULL(strstr(o, "<on_write_protect>"));
  free(out);
  out = NULL;
  st = tu_run_merge(&out, TC_CLI, "verify", "-q", "--", tu_guest("sigfault64"),
                    NULL);
  CU_ASSERT_EQUAL(st, 0);
  CU_ASSERT_PTR_NULL(strstr(out ? out : "", "FAILED"));
  free(out);
  out = NULL;
  st = tu_run_merge(&out, TC_CLI, "verify", "-q", "-f", "trac,tfile,bap,rvn",
                    "--", tu_guest("sigfault32"), NULL);
  CU_ASSERT_EQUAL(st, 0);
  CU_ASSERT_PTR_NULL(strstr(out ? out : "", "FAILED"));
  free(out);
  /* arm64, armhf, mips, mipsel: the same faults through their own frames
   * (the handler returns through the [sigpage] trampoline where glibc
   * sets no sa_restorer), equal to qemu-user, and verified */
  static const struct {
    const char *guest, *ill;
  } cross[] = {
      {"sigfault-arm64", "si_code=ILL_ILLOPC"},
      {"sigfault-armhf", "si_code=ILL_ILLOPC"},
      {"sigfault-mips", "--- SIGILL {si_signo=SIGILL, si_code=SI_KERNEL} ---"},
      {"sigfault-mipsel",
       "--- SIGILL {si_signo=SIGILL, si_code=SI_KERNEL} ---"},
  };
  for (size_t i = 0; i < sizeof cross / sizeof *cross; i++) {
    tu_check_reference(TU_REF_AUTO, cross[i].guest, "");
    char prefix[4000];
    snprintf(prefix, sizeof prefix, "%s", tu_tmp(cross[i].guest));
    snprintf(tct, sizeof tct, "%s.tct", prefix);
    st = tu_run_merge(&out, TC_CLI, "record", "-q", "-f", "tct", "-o", prefix,
                      "--", tu_guest(cross[i].guest), NULL);
    CU_ASSERT_EQUAL(st, 128 + 11); /* the blocked SIGSEGV at the end */
    free(out);
    out = NULL;
    /* deterministic: a second recording is byte-identical */
    char prefix2[4100], tct2[4200];
    snprintf(prefix2, sizeof prefix2, "%s-2", prefix);
    snprintf(tct2, sizeof tct2, "%s.tct", prefix2);
    tu_run_merge(&out, TC_CLI, "record", "-q", "-f", "tct", "-o", prefix2, "--",
                 tu_guest(cross[i].guest), NULL);
    free(out);
    out = NULL;
    size_t n1 = 0, n2 = 0;
    uint8_t *d1 = tu_read_file(tct, &n1), *d2 = tu_read_file(tct2, &n2);
    CU_ASSERT(d1 && d2 && n1 == n2 && n1 > 0 && memcmp(d1, d2, n1) == 0);
    free(d1);
    free(d2);
    tu_run_merge(&out, TC_CLI, "strace", tct, NULL);
    o = out ? out : "";
    /* Linux's si_code for an undefined instruction (qemu-user differs,
     * so the guest does not print it) */
    CU_ASSERT_PTR_NOT_NULL(strstr(o, cross[i].ill));
    CU_ASSERT_PTR_NOT_NULL(strstr(
        o, "--- SIGSEGV {si_signo=SIGSEGV, si_code=SEGV_MAPERR, si_addr=0x20} "
           "---"));
    CU_ASSERT_PTR_NOT_NULL(strstr(o, "+++ killed by SIGSEGV +++"));
    free(out);
    out = NULL;
    st = tu_run_merge(&out, TC_CLI, "verify", "-q", "--",
                      tu_guest(cross[i].guest), NULL);
    CU_ASSERT_EQUAL(st, 0);
    CU_ASSERT_PTR_NULL(strstr(out ? out : "", "FAILED"));
    free(out);
    out = NULL;
  }
  /* mips divides by zero with `teq ..., 7`: Linux raises SIGFPE with
   * FPE_INTDIV at the teq (qemu-user 7.2 wrongly raises SIGTRAP, so this
   * guest has no reference run) */
  snprintf(tct, sizeof tct, "%s.tct", tu_tmp("sigfault-div-mipsel"));
  st = tu_run_merge(&out, TC_CLI, "record", "-q", "-f", "tct", "-o",
                    tu_tmp("sigfault-div-mipsel"), "--",
                    tu_guest("sigfault-div-mipsel"), NULL);
  CU_ASSERT_EQUAL(st, 128 + 8);
  CU_ASSERT_PTR_NOT_NULL(strstr(out ? out : "", "fpe: sig=8 code=1"));
  free(out);
  out = NULL;
  tu_run_merge(&out, TC_CLI, "strace", tct, NULL);
  o = out ? out : "";
  CU_ASSERT_PTR_NOT_NULL(
      strstr(o, "--- SIGFPE {si_signo=SIGFPE, si_code=FPE_INTDIV, si_addr="));
  CU_ASSERT_PTR_NOT_NULL(strstr(o, "+++ killed by SIGFPE +++"));
  free(out);
}

/* convert takes dump's selection: a tct of one function's instructions
 * that reads back, and --syscalls-only keeps only the syscalls. */
static void test_convert_selection(void) {
  char *out = NULL, full[4200], part[4200], sys[4200];
  snprintf(full, sizeof full, "%s.tct", tu_tmp("sel-full"));
  snprintf(part, sizeof part, "%s", tu_tmp("sel-part.tct"));
  snprintf(sys, sizeof sys, "%s", tu_tmp("sel-sys.jsonl"));
  tu_run_merge(&out, TC_CLI, "record", "-q", "-f", "tct", "-o",
               tu_tmp("sel-full"), "--", tu_guest("fib64"), "6", NULL);
  free(out);
  CU_ASSERT_EQUAL(tu_run_merge(&out, TC_CLI, "convert", full, "--to", "tct",
                               part, "--range", "0x401000-0x401100", NULL),
                  0);
  free(out);
  CU_ASSERT_EQUAL(tu_run_merge(&out, TC_CLI, "dump", part, NULL), 0);
  const char *t = out ? out : "";
  size_t insns = 0, outside = 0;
  for (const char *l = t; (l = strchr(l, '\n')); l++) {
    unsigned long long idx, pc;
    if (sscanf(l + 1, "%llu 0x%llx", &idx, &pc) == 2) {
      insns++;
      outside += pc < 0x401000 || pc >= 0x401100;
    }
  }
  CU_ASSERT(insns > 0);
  CU_ASSERT_EQUAL(outside, 0);
  free(out);
  CU_ASSERT_EQUAL(tu_run_merge(&out, TC_CLI, "convert", full, "--to", "json",
                               sys, "--syscalls-only", NULL),
                  0);
  free(out);
  size_t n = 0;
  char *j = (char *)tu_read_file(sys, &n);
  CU_ASSERT(j && strstr(j, "\"type\":\"syscall\"") &&
            !strstr(j, "\"type\":\"insn\""));
  free(j);
}

/* -o names the file itself when it already ends in the format's extension
 * (and .zst compresses); otherwise it is a prefix. */
static void test_output_names(void) {
  char *out = NULL, want[4200], doubled[4200];
  const char *named = tu_tmp("named.tct"), *pfx = tu_tmp("prefix");
  CU_ASSERT_EQUAL(tu_run_merge(&out, TC_CLI, "record", "-q", "-o", named, "--",
                               tu_guest("hello64"), NULL),
                  0);
  free(out);
  snprintf(doubled, sizeof doubled, "%s.tct", named);
  CU_ASSERT_EQUAL(access(named, F_OK), 0);
  CU_ASSERT_NOT_EQUAL(access(doubled, F_OK), 0);
  CU_ASSERT_EQUAL(tu_run_merge(&out, TC_CLI, "record", "-q", "-f", "trac,tct",
                               "-o", tu_tmp("z.trace64.zst"), "--",
                               tu_guest("hello64"), NULL),
                  0);
  free(out);
  snprintf(want, sizeof want, "%s", tu_tmp("z.tct.zst"));
  CU_ASSERT_EQUAL(access(want, F_OK), 0);
  CU_ASSERT_EQUAL(access(tu_tmp("z.trace64.zst"), F_OK), 0);
  CU_ASSERT_EQUAL(tu_run_merge(&out, TC_CLI, "info", want, NULL), 0);
  CU_ASSERT_PTR_NOT_NULL(strstr(out ? out : "", "instructions:"));
  free(out);
  CU_ASSERT_EQUAL(tu_run_merge(&out, TC_CLI, "record", "-q", "-o", pfx, "--",
                               tu_guest("hello64"), NULL),
                  0);
  free(out);
  snprintf(want, sizeof want, "%s.tct", pfx);
  CU_ASSERT_EQUAL(access(want, F_OK), 0);
}

/* info says who wrote the file when the file says it, and whether it can
 * really seek (tried, not taken from the format's name). */
static void test_info_writer_seek(void) {
  char *out = NULL, path[4200];
  const char *pfx = tu_tmp("infows");
  CU_ASSERT_EQUAL(tu_run_merge(&out, TC_CLI, "record", "-q", "-f",
                               "tct,bap,rvn,trac", "-o", pfx, "--",
                               tu_guest("loop64"), NULL),
                  0);
  free(out);
  static const struct {
    const char *ext, *writer, *seek;
  } want[] = {{".tct", "writer:       tracecorn\n", "seekable:     yes"},
              {".frames", "writer:       tracecorn " TC_VERSION_STRING "\n",
               "seekable:     no ("},
              {".rvn", "writer:       tracecorn " TC_VERSION_STRING "\n",
               "seekable:     yes"},
              {".trace64", "writer:       not stated", "seekable:     no ("}};
  for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
    snprintf(path, sizeof path, "%s%s", pfx, want[i].ext);
    CU_ASSERT_EQUAL(tu_run_merge(&out, TC_CLI, "info", path, NULL), 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(out ? out : "", want[i].writer));
    CU_ASSERT_PTR_NOT_NULL(strstr(out ? out : "", want[i].seek));
    free(out);
  }
}

/* ------------------------------------------- hostile files and outputs */

/* Runs a shell command (stdout into *out unless NULL; stderr as the
 * command redirects it), returns its exit status. */
static int shf(char **out, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static int shf(char **out, const char *fmt, ...) {
  char cmd[16384];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(cmd, sizeof cmd, fmt, ap);
  va_end(ap);
  char *o = NULL;
  int st = tu_run(cmd, &o, 0);
  if (out)
    *out = o;
  else
    free(o);
  return st;
}

static int has(const char *path) { return access(path, F_OK) == 0; }

/* A stream output (standard output by any name, /dev/fd/N, a FIFO) is
 * written as it is: no NAME.partial beside it, nothing renamed over it.
 * `convert IN --to tct /dev/stdout > FILE` renamed /dev/stdout.partial
 * over the symlink /dev/stdout and left FILE empty (here a symlink of our
 * own to /proc/self/fd/1 stands for /dev/stdout, so a regression cannot
 * replace the host's). */
static void test_stream_outputs(void) {
  const char *d = tu_tmpdir();
  char *out = NULL;
  CU_ASSERT_EQUAL_FATAL(shf(NULL,
                            "cd %s && %s record -q -f tct -o so-ref -- %s "
                            ">/dev/null 2>&1 && %s convert so-ref.tct --to "
                            "tct so-plain.tct 2>/dev/null",
                            d, TC_CLI, tu_guest("hello64"), TC_CLI),
                        0);
  CU_ASSERT_EQUAL(shf(NULL, "cd %s && ln -sf /proc/self/fd/1 so-stdout", d), 0);
  static const char *const names[] = {"so-stdout", "-", "/dev/fd/1",
                                      "/proc/self/fd/1"};
  for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
    char got[4200];
    snprintf(got, sizeof got, "%s/so-got%zu.tct", d, i);
    CU_ASSERT_EQUAL(shf(NULL,
                        "cd %s && %s convert so-ref.tct --to tct %s > %s "
                        "2>/dev/null",
                        d, TC_CLI, names[i], got),
                    0);
    CU_ASSERT(tu_same_file(got, tu_tmp("so-plain.tct")));
  }
  struct stat st;
  CU_ASSERT(lstat(tu_tmp("so-stdout"), &st) == 0 && S_ISLNK(st.st_mode));
  CU_ASSERT_FALSE(has(tu_tmp("so-stdout.partial")));
  CU_ASSERT_FALSE(has(tu_tmp("-")));
  /* appended under >>, after what the file held */
  CU_ASSERT_EQUAL(shf(NULL,
                      "cd %s && printf head > so-app && %s convert so-ref.tct "
                      "--to tct /dev/stdout >> so-app 2>/dev/null && tail -c "
                      "+5 so-app > so-app.tct",
                      d, TC_CLI),
                  0);
  CU_ASSERT(tu_same_file(tu_tmp("so-app.tct"), tu_tmp("so-plain.tct")));
  /* rvn (a directory) and bap (seeks back) refuse a pipe, in one line */
  CU_ASSERT_EQUAL(shf(&out,
                      "cd %s && %s convert so-ref.tct --to rvn - 2>&1 "
                      ">/dev/null",
                      d, TC_CLI),
                  1);
  CU_ASSERT_PTR_NOT_NULL(strstr(out ? out : "", "cannot hold rvn"));
  free(out);
  CU_ASSERT_EQUAL(shf(&out,
                      "cd %s && { %s convert so-ref.tct --to bap - "
                      "2>so-bap.err; echo $? >so-bap.rc; } | cat >/dev/null "
                      "&& cat so-bap.rc so-bap.err",
                      d, TC_CLI),
                  0);
  const char *bap = "1\ntracecorn: convert: bap: -: ";
  CU_ASSERT_EQUAL(strncmp(out ? out : "", bap, strlen(bap)), 0);
  CU_ASSERT_PTR_NOT_NULL(strstr(out ? out : "", "cannot seek back"));
  free(out);
  /* record: -o is the stream itself (no extension added); not the
   * program's own stdout, where it prints */
  CU_ASSERT_EQUAL(shf(&out,
                      "cd %s && %s record -q -o /dev/fd/3 -- %s 3>so-rec.tct "
                      ">/dev/null && %s info so-rec.tct",
                      d, TC_CLI, tu_guest("hello64"), TC_CLI),
                  0);
  CU_ASSERT_PTR_NOT_NULL(strstr(out ? out : "", "format:       tct"));
  free(out);
  CU_ASSERT_EQUAL(shf(&out,
                      "cd %s && %s record -q -o so-stdout -- %s 2>&1 "
                      ">so-mixed",
                      d, TC_CLI, tu_guest("hello64")),
                  2);
  CU_ASSERT_PTR_NOT_NULL(strstr(out ? out : "", "the program's own output"));
  free(out);
  CU_ASSERT(lstat(tu_tmp("so-stdout"), &st) == 0 && S_ISLNK(st.st_mode));
  CU_ASSERT_FALSE(has(tu_tmp("so-stdout.tct")));
  /* a forked child has no name beside a stream: said, not made up */
  CU_ASSERT_EQUAL(shf(&out,
                      "cd %s && mkfifo so-fifo && { timeout 60 cat so-fifo > "
                      "so-fork.tct & %s record -o so-fifo -- %s 2>&1 "
                      ">/dev/null; wait; }",
                      d, TC_CLI, tu_guest("fork64")),
                  0);
  CU_ASSERT_PTR_NOT_NULL(
      strstr(out ? out : "", "process 1001 is not recorded in so-fifo"));
  free(out);
  CU_ASSERT_FALSE(has(tu_tmp("so-fifo.tct")));
  CU_ASSERT_FALSE(has(tu_tmp("so-fifo.1001")));
  CU_ASSERT_EQUAL(shf(&out, "%s info %s", TC_CLI, tu_tmp("so-fork.tct")), 0);
  CU_ASSERT_PTR_NOT_NULL(strstr(out ? out : "", "exit:         status 0"));
  free(out);
}

/* A copy of the tct trace `in` with every executable map named `name`. */
typedef struct rename_ctx {
  const tc_format *fmt;
  tc_writer *w;
  const char *name;
} rename_ctx;

static int rename_exec_maps(void *vctx, const tc_event *ev, tc_error *err) {
  rename_ctx *c = vctx;
  tc_event e = *ev;
  if (e.kind == TC_EV_MAP && (e.u.map.prot & TC_PROT_EXEC))
    e.u.map.name = c->name;
  return c->fmt->write_event(c->w, &e, err);
}

static int rewrite_maps(const char *in, const char *out, const char *name) {
  const tc_format *tct = tc_format_by_name("tct");
  tc_error err = {{0}};
  tc_reader *r = tct->open_reader(in, &err);
  if (!r)
    return -1;
  tc_trace_info info = *tct->reader_info(r);
  info.continuous = 0;
  rename_ctx c = {tct, tct->open_writer(out, &info, &err), name};
  int rc = c.w && tc_read_trace(in, tct, rename_exec_maps, &c, &err) == 0;
  if (c.w && tct->close_writer(c.w, &err) < 0)
    rc = 0;
  tct->close_reader(r);
  return rc ? 0 : -1;
}

/* A trace names host files for its modules, and dump reads their symbols:
 * a FIFO (or a link to one) there is never opened for reading, which
 * waited forever for a writer; only regular files are read. */
static void test_dump_map_names_fifo(void) {
  const char *d = tu_tmpdir();
  char *out = NULL, fifo[4200], link[4200];
  snprintf(fifo, sizeof fifo, "%s", tu_tmp("mf-fifo"));
  snprintf(link, sizeof link, "%s", tu_tmp("mf-link"));
  CU_ASSERT_EQUAL_FATAL(shf(NULL,
                            "cd %s && %s record -q -o mf-ref -- %s >/dev/null "
                            "2>&1 && mkfifo mf-fifo && ln -s mf-fifo mf-link",
                            d, TC_CLI, tu_guest("hello64")),
                        0);
  const char *names[] = {fifo, link};
  for (int i = 0; i < 2; i++) {
    char trace[4200];
    snprintf(trace, sizeof trace, "%s/mf-%d.tct", d, i);
    CU_ASSERT_EQUAL_FATAL(rewrite_maps(tu_tmp("mf-ref.tct"), trace, names[i]),
                          0);
    CU_ASSERT_EQUAL(shf(&out, "timeout 60 %s dump %s 2>&1", TC_CLI, trace), 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(out ? out : "", "syscall write"));
    free(out);
  }
}

/* Guest-chosen names (the program's path, so its maps, its argv and what
 * it writes) with bytes that are not UTF-8 and control characters: every
 * line of the json output is still JSON (read as bytes, so as strict
 * UTF-8); valid UTF-8 passes through, each other byte is \u00XX of its
 * value, controls are escaped. */
static void test_json_hostile_names(void) {
  const char *d = tu_tmpdir();
  char *out = NULL, prog[4200];
  static const char name[] = "jn-\x80\xff\x01\x1b[31m\xc3\xa9\xe2\x82";
  snprintf(prog, sizeof prog, "%s/%s", d, name);
  CU_ASSERT_EQUAL_FATAL(shf(NULL, "cp %s '%s'", tu_guest("args64"), prog), 0);
  CU_ASSERT_EQUAL(shf(NULL,
                      "cd %s && %s record -q -f json,tct -o jn -- '%s' "
                      "\"$(printf 'a\\200\\376\\007\\303\\251\\355"
                      "\\240\\200\\302\\205')\" >/dev/null 2>&1",
                      d, TC_CLI, prog),
                  2); /* args64 exits with argc */
  CU_ASSERT_EQUAL(
      shf(&out,
          "cd %s && python3 -c 'import json,sys; "
          "[json.loads(l) for l in sys.stdin.buffer]' < jn.jsonl 2>&1 "
          "&& %s convert jn.tct --to json - | python3 -c 'import "
          "json,sys; [json.loads(l) for l in sys.stdin.buffer]' 2>&1",
          d, TC_CLI),
      0);
  if (out && *out)
    fprintf(stderr, "\n%s\n", out);
  free(out);
  uint8_t *j = tu_read_file(tu_tmp("jn.jsonl"), NULL);
  CU_ASSERT_PTR_NOT_NULL_FATAL(j);
  const char *want[] = {
      "\"exe\":\"",
      "jn-\\u0080\\u00ff\\u0001\\u001b[31m\xc3\xa9\\u00e2\\u0082\"",
      "\"a\\u0080\\u00fe\\u0007\xc3\xa9\\u00ed\\u00a0\\u0080\\u0085\"]",
      "\"type\":\"map\""};
  for (size_t i = 0; i < sizeof want / sizeof *want; i++)
    CU_ASSERT_PTR_NOT_NULL(strstr((char *)j, want[i]));
  free(j);
}

/* A forked child's PREFIX.PID.EXT follows the first outputs' rule: an
 * existing file that is not a trace is not replaced without --force. That
 * process is not recorded there (said at once), the others are, and the
 * recording ends with 125; --force replaces it. */
static void test_child_output_clobber(void) {
  const char *d = tu_tmpdir();
  char *out = NULL;
  CU_ASSERT_EQUAL_FATAL(tu_write_file(tu_tmp("co.1001.tct"), "my notes\n", 9),
                        0);
  CU_ASSERT_EQUAL(shf(&out, "cd %s && %s record -o co -- %s 2>&1 >/dev/null", d,
                      TC_CLI, tu_guest("fork64")),
                  125);
  CU_ASSERT_PTR_NOT_NULL(
      strstr(out ? out : "", "tracecorn: co.1001.tct exists and is not a "
                             "trace file; not overwriting it (--force does)"));
  free(out);
  size_t n = 0;
  uint8_t *notes = tu_read_file(tu_tmp("co.1001.tct"), &n);
  CU_ASSERT(notes && n == 9 && memcmp(notes, "my notes\n", 9) == 0);
  free(notes);
  CU_ASSERT_FALSE(has(tu_tmp("co.1001.partial.tct")));
  CU_ASSERT_EQUAL(
      tu_run_merge(&out, TC_CLI, "info", tu_tmp("co.1002.tct"), NULL), 0);
  free(out);
  CU_ASSERT_EQUAL(shf(NULL,
                      "cd %s && %s record --force -q -o co -- %s >/dev/null "
                      "2>&1",
                      d, TC_CLI, tu_guest("fork64")),
                  0);
  CU_ASSERT_EQUAL(
      tu_run_merge(&out, TC_CLI, "info", tu_tmp("co.1001.tct"), NULL), 0);
  free(out);
}

/* ------------------------------------------------ the docs against it */

/* Issue 36: the README, the man page, the completions and every --help
 * must not go stale. These checks read the option tables of the command's
 * own source (tools/), so an option added, renamed or dropped there and
 * not in a doc fails here; and they run the README's samples. */

typedef struct optset {
  char cmd[32];
  char *v[96];
  int n;
} optset;

static bool optset_has(const optset *s, const char *name, size_t len) {
  for (int i = 0; i < s->n; i++)
    if (strlen(s->v[i]) == len && !strncmp(s->v[i], name, len))
      return true;
  return false;
}

static void optset_add(optset *s, const char *name, size_t len) {
  if (s->n < 96 && !optset_has(s, name, len))
    s->v[s->n++] = strndup(name, len);
}

/* The long names of the struct option entries in [p, end): each is a
 * string followed by `, no_argument` / `required_argument` / ... */
static void scan_longopts(optset *s, const char *p, const char *end) {
  for (const char *q = p; (q = strstr(q, "_argument")) && q < end; q++) {
    const char *a = q;
    while (a > p && ((a[-1] >= 'a' && a[-1] <= 'z') || a[-1] == '_'))
      a--;
    while (a > p && (a[-1] == ' ' || a[-1] == ',' || a[-1] == '\n'))
      a--;
    if (a <= p || a[-1] != '"')
      continue;
    const char *e = a - 1, *b = e;
    while (b > p && b[-1] != '"')
      b--;
    if (b > p && e > b)
      optset_add(s, b, (size_t)(e - b));
  }
}

/* Every getopt table of tools/cmd_*.c, by the command it parses for. */
static int read_cli_options(optset *sets, int max) {
  char path[4200];
  snprintf(path, sizeof path, "%s/tools/cli.h", TC_SOURCE_DIR);
  char *cli = (char *)tu_read_file(path, NULL);
  CU_ASSERT_FATAL(cli != NULL);
  const char *fb = strstr(cli, "#define FILTER_LONGOPTS");
  CU_ASSERT_FATAL(fb != NULL);
  const char *fe = strstr(fb, "\n\n");
  optset filter = {.cmd = "filter"};
  scan_longopts(&filter, fb, fe ? fe : fb + strlen(fb));
  CU_ASSERT(filter.n >= 10);
  /* every tools/cmd_*.c; a table belongs to the function it is in:
   * int cmd_NAME( parses NAME's options, parse_record_args( record's */
  snprintf(path, sizeof path, "%s/tools/cmd_*.c", TC_SOURCE_DIR);
  glob_t g;
  CU_ASSERT_FATAL(glob(path, 0, NULL, &g) == 0 && g.gl_pathc >= 6);
  int n = 0;
  for (size_t f = 0; f < g.gl_pathc; f++) {
    char *src = (char *)tu_read_file(g.gl_pathv[f], NULL);
    CU_ASSERT_FATAL(src != NULL);
    for (char *t = src; (t = strstr(t, "struct option longopts[]"));) {
      char *end = strstr(t, "{0, 0, 0, 0}");
      CU_ASSERT_FATAL(end != NULL && n < max);
      char cmd[32] = "";
      const char *at = NULL;
      for (const char *y = src; y < t; y++) {
        if (!strncmp(y, "\nint cmd_", 9) && y + 9 < t) {
          at = y;
          sscanf(y + 9, "%31[a-z_]", cmd);
        } else if (!strncmp(y, "parse_record_args(", 18) && (!at || y > at)) {
          at = y;
          strcpy(cmd, "record");
        }
      }
      CU_ASSERT_FATAL(cmd[0] != 0);
      optset *s = &sets[n++];
      memset(s, 0, sizeof *s);
      snprintf(s->cmd, sizeof s->cmd, "%s", cmd);
      scan_longopts(s, t, end);
      if (strstr(t, "FILTER_LONGOPTS") && strstr(t, "FILTER_LONGOPTS") < end)
        for (int i = 0; i < filter.n; i++)
          optset_add(s, filter.v[i], strlen(filter.v[i]));
      t = end;
    }
    free(src);
  }
  globfree(&g);
  for (int i = 0; i < filter.n; i++)
    free(filter.v[i]);
  free(cli);
  return n;
}

static void optsets_free(optset *sets, int n) {
  for (int i = 0; i < n; i++)
    for (int k = 0; k < sets[i].n; k++)
      free(sets[i].v[k]);
}

static const optset *optset_of(const optset *sets, int n, const char *cmd) {
  for (int i = 0; i < n; i++)
    if (!strcmp(sets[i].cmd, cmd))
      return &sets[i];
  return NULL;
}

/* 1 if `--name` stands in text as a whole option name. */
static bool names_option(const char *text, const char *name) {
  size_t len = strlen(name);
  for (const char *p = text; p && (p = strstr(p, "--")); p += 2) {
    if (p > text && (isalnum((unsigned char)p[-1]) || p[-1] == '-'))
      continue;
    if (!strncmp(p + 2, name, len) &&
        !(isalnum((unsigned char)p[2 + len]) || p[2 + len] == '-'))
      return true;
  }
  return false;
}

/* The text between `from` and `to` (or the end), with roff's `\-` as `-`
 * and its font changes removed; NULL when `from` is not there. */
static char *section(const char *text, const char *from, const char *to) {
  const char *b = strstr(text, from);
  if (!b)
    return NULL;
  b += strlen(from);
  const char *e = strstr(b, to);
  size_t len = e ? (size_t)(e - b) : strlen(b);
  char *out = malloc(len + 1), *w = out;
  for (size_t i = 0; i < len;) {
    if (b[i] == '\\' && b[i + 1] == '-') {
      *w++ = '-';
      i += 2;
    } else if (b[i] == '\\' && b[i + 1] == 'f' && i + 2 < len) {
      i += 3;
    } else {
      *w++ = b[i++];
    }
  }
  *w = 0;
  return out;
}

static char *source_file(const char *rel) {
  char path[4200];
  snprintf(path, sizeof path, "%s/%s", TC_SOURCE_DIR, rel);
  size_t len = 0;
  char *t = (char *)tu_read_file(path, &len);
  CU_ASSERT_FATAL(t != NULL);
  return t;
}

/* Every long option a command's getopt takes is in its --help, in its
 * section of the man page and in its bash and zsh completions. */
static void test_options_documented(void) {
  optset sets[16];
  int n = read_cli_options(sets, 16);
  CU_ASSERT(n >= 6);
  const optset *rec = optset_of(sets, n, "record");
  CU_ASSERT_FATAL(rec != NULL);
  CU_ASSERT(rec->n >= 30);
  char *man = source_file("man/tracecorn.1.in");
  char *bash = source_file("completions/tracecorn.bash");
  char *zsh = source_file("completions/_tracecorn");
  for (int i = 0; i < n; i++) {
    const optset *s = &sets[i];
    char *help = NULL, key[128];
    CU_ASSERT_EQUAL(tu_run_merge(&help, TC_CLI, s->cmd, "--help", NULL), 0);
    snprintf(key, sizeof key, ".SS %.31s\n", s->cmd);
    char *msec = section(man, key, "\n.SS");
    snprintf(key, sizeof key, "_tracecorn_opts_%.31s=\"", s->cmd);
    char *bsec = section(bash, key, "\"");
    snprintf(key, sizeof key, "\n_tracecorn_cmd_%.31s() {\n", s->cmd);
    char *zsec = section(zsh, key, "\n}\n");
    CU_ASSERT_FATAL(help && msec && bsec && zsec);
    for (int k = 0; k < s->n; k++) {
      const char *o = s->v[k];
      if (!strcmp(o, "help"))
        continue; /* every command's: `tracecorn COMMAND --help` */
      const char *docs[][2] = {{"--help", help},
                               {"tracecorn.1", msec},
                               {"tracecorn.bash", bsec},
                               {"_tracecorn", zsec}};
      for (int d = 0; d < 4; d++) {
        bool ok = names_option(docs[d][1], o);
        if (!ok)
          fprintf(stderr, "\n%s: %s --%s is not there\n", docs[d][0], s->cmd,
                  o);
        CU_ASSERT(ok);
      }
    }
    free(help);
    free(msec);
    free(bsec);
    free(zsec);
  }
  free(man);
  free(bash);
  free(zsh);
  optsets_free(sets, n);
}

/* 1 if `word` stands in text as a whole word. */
static bool names_word(const char *text, const char *word) {
  size_t len = strlen(word);
  for (const char *p = text; p && (p = strstr(p, word)); p++)
    if ((p == text || !isalnum((unsigned char)p[-1])) &&
        !isalnum((unsigned char)p[len]) && p[len] != '_')
      return true;
  return false;
}

/* Every arch tracecorn knows is one --arch lists (help, man page,
 * completions): they named six of the eight. */
static void test_arches_documented(void) {
  char *help = NULL;
  CU_ASSERT_EQUAL(tu_run_merge(&help, TC_CLI, "record", "--help", NULL), 0);
  CU_ASSERT_FATAL(help != NULL);
  char *man = source_file("man/tracecorn.1.in");
  char *bash = source_file("completions/tracecorn.bash");
  char *zsh = source_file("completions/_tracecorn");
  char *h = section(help, "--arch ARCH  ", "--base");
  char *m = section(man, ".BI \\-\\-arch", ".BI \\-\\-base");
  char *b = section(bash, "_tracecorn_arches=\"", "\"");
  char *z = section(zsh, "arch of the raw code]:arch:(", ")");
  CU_ASSERT_FATAL(h && m && b && z);
  int n = 0;
  for (int id = 1; id <= TC_ARCH_MIPS64EL; id++) {
    const tc_arch *a = tc_arch_by_id((tc_arch_id)id);
    if (!a)
      continue;
    n++;
    const char *docs[][2] = {
        {"record --help", h}, {"tracecorn.1", m}, {"bash", b}, {"zsh", z}};
    for (int d = 0; d < 4; d++) {
      bool ok = names_word(docs[d][1], a->name);
      if (!ok)
        fprintf(stderr, "\n%s: --arch does not list %s\n", docs[d][0], a->name);
      CU_ASSERT(ok);
    }
  }
  CU_ASSERT(n >= 8);
  free(h);
  free(m);
  free(b);
  free(z);
  free(help);
  free(man);
  free(bash);
  free(zsh);
}

/* Every `tracecorn CMD ... --opt` the README and docs/ show names an
 * option CMD takes (verify: its own, or record's that it passes on). */
static void test_docs_options_exist(void) {
  optset sets[16];
  int n = read_cli_options(sets, 16);
  static const char *verify_own[] = {"format", "output", "zst", "report",
                                     "help"};
  static const char *docs[] = {
      "README.md",       "docs/analysis.md",      "docs/api.md",
      "docs/arches.md",  "docs/gdbserver.md",     "docs/limits.md",
      "docs/python.md",  "docs/sandbox.md",       "docs/speed.md",
      "docs/fuzzing.md", "docs/formats/README.md"};
  int checked = 0;
  for (size_t d = 0; d < sizeof docs / sizeof *docs; d++) {
    char *text = source_file(docs[d]);
    int lineno = 1;
    for (char *l = text; *l; lineno++) {
      char *nl = strchr(l, '\n');
      if (nl)
        *nl = 0;
      for (char *p = l; (p = strstr(p, "tracecorn ")); p++) {
        char cmd[32];
        if (sscanf(p + 10, "%31[a-z]", cmd) != 1)
          continue;
        bool is_verify = !strcmp(cmd, "verify");
        const optset *s = optset_of(sets, n, is_verify ? "record" : cmd);
        if (!s && strcmp(cmd, "info") && strcmp(cmd, "formats"))
          continue; /* not a command: "tracecorn records ..." */
        /* the command line runs to its closing backquote, a comment or
         * the end of the line */
        char *end = p + 10 + strlen(cmd);
        while (*end && *end != '`' && *end != '#' &&
               !(end[0] == ' ' && end[1] == ' '))
          end++;
        for (char *o = p + 10; o < end; o++) {
          if (o[0] != '-' || o[1] != '-' || !isalpha((unsigned char)o[2]) ||
              isalnum((unsigned char)o[-1]))
            continue;
          size_t len = 0;
          while (isalnum((unsigned char)o[2 + len]) || o[2 + len] == '-')
            len++;
          bool ok = (s && optset_has(s, o + 2, len)) ||
                    (len == 4 && !strncmp(o + 2, "help", 4));
          for (size_t v = 0; is_verify && v < 5; v++)
            ok |= strlen(verify_own[v]) == len &&
                  !strncmp(o + 2, verify_own[v], len);
          if (!ok)
            fprintf(stderr, "\n%s:%d: tracecorn %s takes no --%.*s\n", docs[d],
                    lineno, cmd, (int)len, o + 2);
          CU_ASSERT(ok);
          checked++;
        }
      }
      l = nl ? nl + 1 : l + strlen(l);
    }
    free(text);
  }
  CU_ASSERT(checked >= 40);
  optsets_free(sets, n);
}

/* The lines of `text` from the one after the line starting with `from` up
 * to the line starting with `to` (excluded), each without trailing spaces. */
static int sample_lines(char *text, const char *from, const char *to,
                        char **lines, int max) {
  char *b = strstr(text, from);
  CU_ASSERT_FATAL(b != NULL);
  b = strchr(b, '\n') + 1;
  int n = 0;
  while (*b && strncmp(b, to, strlen(to)) && n < max) {
    char *nl = strchr(b, '\n');
    CU_ASSERT_FATAL(nl != NULL);
    size_t len = (size_t)(nl - b);
    while (len && b[len - 1] == ' ')
      len--;
    lines[n++] = strndup(b, len);
    b = nl + 1;
  }
  return n;
}

/* Each sample line but "..." is a line of out, in order (with `exact`,
 * out has no other line). */
static void check_sample(const char *what, char **lines, int n, const char *out,
                         bool exact) {
  const char *p = out ? out : "";
  int matched = 0;
  for (int i = 0; i < n; i++) {
    if (!strcmp(lines[i], "..."))
      continue;
    const char *at = NULL;
    for (const char *q = p; *q;) {
      const char *nl = strchr(q, '\n');
      size_t len = nl ? (size_t)(nl - q) : strlen(q);
      while (len && q[len - 1] == ' ')
        len--;
      if (len == strlen(lines[i]) && !strncmp(q, lines[i], len)) {
        at = q;
        break;
      }
      if (exact)
        break;
      q = nl ? nl + 1 : q + strlen(q);
    }
    if (!at)
      fprintf(stderr, "\nsample %s: not in the output: %s\n", what, lines[i]);
    CU_ASSERT(at != NULL);
    if (!at)
      break;
    matched++;
    const char *nl = strchr(at, '\n');
    p = nl ? nl + 1 : at + strlen(at);
  }
  if (exact && *p)
    fprintf(stderr, "\nsample %s: more output: %s\n", what, p);
  CU_ASSERT(!exact || *p == 0);
  CU_ASSERT(matched > 0);
}

/* The README's Layout table names every folder of the tree and its docs
 * list every page of docs/ (the table had no analysis/ when it came). */
static void test_readme_layout(void) {
  char *readme = source_file("README.md");
  char *layout = section(readme, "## Layout\n", "\n## ");
  CU_ASSERT_FATAL(layout != NULL);
  char *dirs = NULL;
  int st = shf(&dirs,
               "cd '%s' && git ls-files 2>/dev/null | sed -n 's|/.*||p' | "
               "sort -u",
               TC_SOURCE_DIR);
  int n = 0;
  for (char *l = st == 0 && dirs ? strtok(dirs, "\n") : NULL; l;
       l = strtok(NULL, "\n")) {
    if (l[0] == '.')
      continue; /* .ci/: the row of scripts/ says what calls it */
    char want[300];
    snprintf(want, sizeof want, "`%s/`", l);
    n++;
    if (!strstr(layout, want))
      fprintf(stderr, "\nREADME's Layout: no row for %s\n", want);
    CU_ASSERT(strstr(layout, want) != NULL);
  }
  if (st == 0)
    CU_ASSERT(n >= 15); /* not a git checkout: no list to check */
  free(dirs);
  char *pages = NULL;
  CU_ASSERT_EQUAL(shf(&pages, "cd '%s/docs' && ls *.md", TC_SOURCE_DIR), 0);
  char *docs_row = section(layout, "| `docs/` |", "\n");
  CU_ASSERT_FATAL(docs_row != NULL);
  n = 0;
  for (char *l = pages ? strtok(pages, "\n") : NULL; l;
       l = strtok(NULL, "\n"), n++) {
    char want[300];
    snprintf(want, sizeof want, "`%s`", l);
    bool ok = strstr(docs_row, want) != NULL;
    if (!ok)
      fprintf(stderr, "\nREADME's Layout: docs/ does not name %s\n", l);
    CU_ASSERT(ok);
  }
  CU_ASSERT(n >= 10);
  free(pages);
  free(docs_row);
  free(layout);
  free(readme);
}

/* The arches a doc says format `f` holds, against f->supports: `claim`
 * is "all..." or "... every arch ..." for all of them, else the arch names
 * in it (x86-64 for x86_64); a claim naming none is not checked. */
static int check_arch_claim(const char *where, const tc_format *f,
                            const char *claim) {
  bool all = !strncmp(claim, "all", 3) || strstr(claim, "every arch");
  bool said[TC_ARCH_MIPS64EL + 1] = {0}, any = false;
  for (const char *p = claim; *p;) {
    size_t n = 0;
    while (isalnum((unsigned char)p[n]) || p[n] == '-' || p[n] == '_')
      n++;
    if (!n) {
      p++;
      continue;
    }
    char w[32];
    snprintf(w, sizeof w, "%.*s", (int)(n < 31 ? n : 31), p);
    if (!strcmp(w, "x86-64"))
      strcpy(w, "x86_64");
    for (int id = 1; id <= TC_ARCH_MIPS64EL; id++) {
      const tc_arch *a = tc_arch_by_id((tc_arch_id)id);
      if (a && !strcmp(a->name, w))
        said[id] = any = true;
    }
    p += n;
  }
  if (!all && !any)
    return 0;
  for (int id = 1; id <= TC_ARCH_MIPS64EL; id++) {
    const tc_arch *a = tc_arch_by_id((tc_arch_id)id);
    if (!a)
      continue;
    tc_error err;
    bool holds = !f->supports || f->supports(a, &err) == 0;
    bool ok = holds == (all || said[id]);
    if (!ok)
      fprintf(stderr, "\n%s: %s %s %s, which it %s\n", where, f->name,
              holds ? "does not list" : "lists", a->name,
              holds ? "holds" : "cannot hold");
    CU_ASSERT(ok);
  }
  return 1;
}

/* The arches of each format in the README's table and the man page's
 * FORMATS are those its writer takes. */
static void test_format_arches_documented(void) {
  char *readme = source_file("README.md");
  char *table = section(readme, "| format | `--format` |", "\n\n");
  CU_ASSERT_FATAL(table != NULL);
  int rows = 0, claims = 0;
  for (char *l = strtok(table, "\n"); l; l = strtok(NULL, "\n")) {
    char name[32];
    char *col = l;
    for (int c = 0; c < 4 && col; c++)
      col = strchr(col + 1, '|');
    if (sscanf(l, "| %*[^|]| `%31[a-z]` |", name) != 1 || !col)
      continue;
    const tc_format *f = tc_format_by_name(name);
    CU_ASSERT(f != NULL);
    if (!f)
      continue;
    rows++;
    col++;
    while (*col == ' ')
      col++;
    claims += check_arch_claim("README's format table", f, col);
  }
  CU_ASSERT(rows >= 10 && claims >= 10); /* bap: "see docs/formats/bap.md" */
  free(table);
  free(readme);

  char *man = source_file("man/tracecorn.1.in");
  char *fsec = section(man, "\n.SH FORMATS\n", "\n.SS");
  CU_ASSERT_FATAL(fsec != NULL);
  int paras = 0;
  for (const tc_format *const *fp = tc_formats(); *fp; fp++) {
    char key[64];
    snprintf(key, sizeof key, "\n.B %s\n", (*fp)->name);
    char *para = section(fsec, key, "\n.TP");
    if (!para)
      continue;
    paras++;
    /* the first of its ';'-separated parts that names arches */
    char *save = NULL;
    for (char *part = strtok_r(para, ";", &save); part;
         part = strtok_r(NULL, ";", &save)) {
      if (check_arch_claim("tracecorn.1 FORMATS", *fp, part)) {
        claims++;
        break;
      }
    }
    free(para);
  }
  CU_ASSERT(paras >= 10 && claims >= 18);
  free(fsec);
  free(man);
}

/* The options (-x, --xx) in text, into s. */
static void usage_options(optset *s, const char *text) {
  for (const char *p = text; *p; p++) {
    if (p[0] != '-' || (p > text && (isalnum((unsigned char)p[-1]) ||
                                     p[-1] == '-' || p[-1] == '.')))
      continue;
    size_t n = p[1] == '-' ? 2 : 1;
    if (!isalpha((unsigned char)p[n]))
      continue;
    size_t k = n;
    while (n == 2 ? isalnum((unsigned char)p[k]) || p[k] == '-' : k < 2)
      k++;
    optset_add(s, p, k);
    p += k - 1;
  }
}

/* Each command's usage line (its --help's first paragraph) names the
 * options that the man page's SYNOPSIS and the command's own section name
 * in theirs, and no other. */
static void test_synopsis(void) {
  /* the commands `tracecorn --help` lists (formats has no options) */
  char *top = NULL, cmds[16][32];
  size_t ncmds = 0;
  CU_ASSERT_EQUAL(tu_run_merge(&top, TC_CLI, "--help", NULL), 0);
  for (char *p = top; p && (p = strstr(p, "tracecorn ")) && ncmds < 16; p++)
    if (sscanf(p + 10, "%31[a-z]", cmds[ncmds]) == 1 &&
        p[10 + strlen(cmds[ncmds])] == ' ' && strcmp(cmds[ncmds], "formats"))
      ncmds++;
  free(top);
  CU_ASSERT(ncmds >= 9);
  char *man = source_file("man/tracecorn.1.in");
  char *syn = section(man, "\n.SH SYNOPSIS\n", "\n.SH");
  CU_ASSERT_FATAL(syn != NULL);
  for (size_t c = 0; c < ncmds; c++) {
    char *help = NULL;
    CU_ASSERT_EQUAL(tu_run_merge(&help, TC_CLI, cmds[c], "--help", NULL), 0);
    CU_ASSERT_FATAL(help != NULL);
    char *end = strstr(help, "\n\n");
    if (end)
      *end = 0;
    optset want = {0};
    usage_options(&want, help);
    /* "[options]": the man page may show some of them */
    bool more = strstr(help, "[options]") != NULL;
    free(help);
    /* every SYNOPSIS entry of the command; then its section's own */
    optset in_syn = {0}, in_sec = {0};
    char key[64];
    snprintf(key, sizeof key, ".B tracecorn %.31s", cmds[c]);
    int entries = 0;
    for (char *p = syn; (p = strstr(p, key)); p += strlen(key)) {
      if (p[strlen(key)] != '\n' && p[strlen(key)] != ' ')
        continue; /* another command's prefix */
      entries++;
      char *e = strstr(p, ".br");
      char *entry = strndup(p + strlen(key), e ? (size_t)(e - p) : 0);
      usage_options(&in_syn, entry);
      free(entry);
    }
    snprintf(key, sizeof key, ".SS %.31s\n", cmds[c]);
    char *sec = section(man, key, "\n.PP");
    CU_ASSERT(entries >= 1 && sec != NULL);
    if (sec)
      usage_options(&in_sec, sec);
    free(sec);
    const optset *docs[] = {&in_syn, &in_sec};
    const char *names[] = {"SYNOPSIS", "its section"};
    for (int d = 0; d < 2; d++) {
      for (int i = 0; i < want.n; i++) {
        bool ok = optset_has(docs[d], want.v[i], strlen(want.v[i]));
        if (!ok)
          fprintf(stderr, "\ntracecorn.1 %s: %s lacks %s (in its usage)\n",
                  names[d], cmds[c], want.v[i]);
        CU_ASSERT(ok);
      }
      for (int i = 0; i < docs[d]->n && !more; i++) {
        bool ok = optset_has(&want, docs[d]->v[i], strlen(docs[d]->v[i]));
        if (!ok)
          fprintf(stderr, "\ntracecorn.1 %s: %s shows %s, its usage not\n",
                  names[d], cmds[c], docs[d]->v[i]);
        CU_ASSERT(ok);
      }
    }
    for (int i = 0; i < want.n; i++)
      free(want.v[i]);
    for (int i = 0; i < in_syn.n; i++)
      free(in_syn.v[i]);
    for (int i = 0; i < in_sec.n; i++)
      free(in_sec.v[i]);
  }
  free(syn);
  free(man);
}

/* A copy of text with every hex number (0x...) and every number that
 * starts a line as "#": addresses and counts that move with the program's
 * path and build. */
static char *masked(const char *text) {
  char *out = malloc(strlen(text) + 1), *w = out;
  for (const char *r = text; *r;) {
    bool line_start = r == text || r[-1] == '\n';
    if (r[0] == '0' && r[1] == 'x' && isxdigit((unsigned char)r[2])) {
      r += 2;
      while (isxdigit((unsigned char)*r))
        r++;
      *w++ = '#';
    } else if (line_start && isdigit((unsigned char)*r)) {
      while (isdigit((unsigned char)*r))
        r++;
      *w++ = '#';
    } else {
      *w++ = *r++;
    }
  }
  *w = 0;
  return out;
}

/* The sample sessions of the README and docs/, run as they show them. */
static void test_readme_samples(void) {
  char *readme = source_file("README.md");
  char *lines[64];
  const char *d = tu_tmp("readme");
  char *out = NULL;
  CU_ASSERT_EQUAL_FATAL(shf(NULL, "rm -rf %s && mkdir %s && cp %s %s/", d, d,
                            tu_guest("hello64"), d),
                        0);

  /* record: the guest's output, then the summary, exactly */
  int st = shf(&out,
               "cd %s && %s record -f tct,trac,tfile -- ./hello64 "
               "world 2>&1",
               d, TC_CLI);
  CU_ASSERT_EQUAL(st, 1); /* "exits 1 like hello64 itself" */
  int n = sample_lines(readme,
                       "$ tracecorn record -f tct,trac,tfile -- "
                       "./hello64 world",
                       "$ ", lines, 64);
  CU_ASSERT(n == 6);
  check_sample("record", lines, n, out, true);
  for (int i = 0; i < n; i++)
    free(lines[i]);
  free(out);

  /* dump: its lines in order, "..." for those left out */
  out = NULL;
  CU_ASSERT_EQUAL(shf(&out, "cd %s && %s dump hello64.tct", d, TC_CLI), 0);
  n = sample_lines(readme, "$ tracecorn dump hello64.tct", "$ ", lines, 64);
  CU_ASSERT(n >= 6);
  check_sample("dump", lines, n, out, false);
  for (int i = 0; i < n; i++)
    free(lines[i]);
  free(out);

  /* gdb reads the tfile */
  if (tu_have("/usr/bin/gdb")) {
    out = NULL;
    CU_ASSERT_EQUAL(shf(&out,
                        "cd %s && gdb -nx -batch -ex 'target tfile hello64.tf' "
                        "-ex 'tfind 3' -ex 'x/i $pc' 2>&1",
                        d),
                    0);
    n = sample_lines(readme, "$ gdb -batch -ex 'target tfile hello64.tf'",
                     "```", lines, 64);
    CU_ASSERT(n >= 2);
    check_sample("gdb", lines, n, out, false);
    for (int i = 0; i < n; i++)
      free(lines[i]);
    free(out);
  }

  /* verify: the README runs glibc64 (4 s); hello64 gives the same table
   * and the same lines but for the instruction count */
  out = NULL;
  CU_ASSERT_EQUAL(shf(&out,
                      "cd %s && %s verify -q -- ./hello64 2>&1 "
                      ">/dev/null | sed -E 's/ [0-9]+ instructions/ N "
                      "instructions/'",
                      d, TC_CLI),
                  0);
  n = sample_lines(readme, "$ tracecorn verify -q -- ./glibc64", "```", lines,
                   64);
  CU_ASSERT(n >= 8);
  for (int i = 0; i < n; i++) {
    char *num = strstr(lines[i], "ok: ");
    if (num && isdigit((unsigned char)num[4])) {
      char *e = num + 4;
      while (isdigit((unsigned char)*e))
        e++;
      memmove(num + 5, e, strlen(e) + 1);
      num[4] = 'N';
    }
  }
  check_sample("verify", lines, n, out, true);
  for (int i = 0; i < n; i++)
    free(lines[i]);
  free(out);
  free(readme);

  /* docs/formats/README.md: what convert names as lost */
  char *fmts = source_file("docs/formats/README.md");
  out = NULL;
  CU_ASSERT_EQUAL(shf(NULL,
                      "cp %s %s/ && cd %s && %s record -q -- ./sysmix64 "
                      ">/dev/null 2>&1",
                      tu_guest("sysmix64"), d, d, TC_CLI),
                  0);
  CU_ASSERT_EQUAL(shf(&out,
                      "cd %s && %s convert sysmix64.tct --to tenet "
                      "sysmix64.tenet 2>&1",
                      d, TC_CLI),
                  0);
  n = sample_lines(fmts,
                   "$ tracecorn convert sysmix64.tct --to tenet "
                   "sysmix64.tenet",
                   "```", lines, 64);
  CU_ASSERT(n == 1); /* then "wrote sysmix64.tenet (SIZE)", SIZE by cwd */
  check_sample("docs/formats convert", lines, n, out, false);
  for (int i = 0; i < n; i++)
    free(lines[i]);
  free(out);
  free(fmts);

  /* docs/analysis.md: strace and dump of the same recording */
  char *an = source_file("docs/analysis.md");
  /* where glibc's start code runs and what it leaves on the stack move
   * with the program's path: the dump is compared with numbers masked */
  static const char *runs[][3] = {
      {"strace sysmix64.tct", "$ tracecorn strace sysmix64.tct", "```"},
      {"dump --range main --count 3 sysmix64.tct",
       "$ tracecorn dump --range main --count 3 sysmix64.tct", "$ "},
      {"strace -e trace=openat,close --skip 1 --count 2 sysmix64.tct",
       "$ tracecorn strace -e trace=openat,close --skip 1 --count 2 "
       "sysmix64.tct",
       "```"}};
  for (int r = 0; r < 3; r++) {
    out = NULL;
    CU_ASSERT_EQUAL(shf(&out, "cd %s && %s %s", d, TC_CLI, runs[r][0]), 0);
    n = sample_lines(an, runs[r][1], runs[r][2], lines, 64);
    CU_ASSERT(n >= 2);
    /* exact unless the sample leaves lines out */
    bool cut = false;
    for (int i = 0; i < n; i++)
      cut |= !strcmp(lines[i], "...");
    if (r == 1 && out) {
      char *m = masked(out);
      free(out);
      out = m;
      for (int i = 0; i < n; i++) {
        m = masked(lines[i]);
        free(lines[i]);
        lines[i] = m;
      }
    }
    check_sample(runs[r][0], lines, n, out, !cut);
    for (int i = 0; i < n; i++)
      free(lines[i]);
    free(out);
  }
  free(an);
}

int main(void) {
  static const tu_case cases[] = {
      {"help CMD = CMD --help", test_help_command},
      {"options checked before the guest starts", test_checked_before_start},
      {"-E overrides the inherited environment", test_env_override},
      {"verify: verdicts on stderr or --report", test_verify_streams},
      {"progress on a terminal only", test_progress_on_terminal},
      {"a notice during the progress line has its own line",
       test_notice_beside_progress},
      {"record --tty: the terminal as natively; modes restored", test_tty},
      {"dump: colour, no trailing spaces, keyframes, --symbols",
       test_dump_presentation},
      {"record --trace-func / --trace-range", test_record_window},
      {"dump --demangle", test_demangle},
      {"convert with a selection", test_convert_selection},
      {"signal handlers: x86-64 = native; elsewhere a notice",
       test_signal_handlers},
      {"fault handlers, alarm, setitimer: x86-64, i386 = native",
       test_fault_handlers},
      {"icebp: SIGTRAP as Linux sends it", test_icebp},
      {"int $0x80 in 64-bit code: the i386 table", test_int80_64},
      {"-o NAME.EXT names the file", test_output_names},
      {"info: writer and seekable from the file", test_info_writer_seek},
      {"stream outputs: written as they are, never renamed over",
       test_stream_outputs},
      {"dump: a map naming a FIFO is not opened", test_dump_map_names_fifo},
      {"json: every line is JSON whatever the guest's names",
       test_json_hostile_names},
      {"child outputs: no non-trace file replaced without --force",
       test_child_output_clobber},
      {"every getopt option in --help, man page, completions",
       test_options_documented},
      {"every arch in --arch's lists", test_arches_documented},
      {"README's Layout: every folder and docs/ page", test_readme_layout},
      {"the man page's usage lines are each command's", test_synopsis},
      {"each format's arches in the README and man page",
       test_format_arches_documented},
      {"every option the README and docs/ show exists",
       test_docs_options_exist},
      {"the samples of the README and docs/ are what a run prints",
       test_readme_samples},
      {NULL, NULL}};
  return tu_run_suite("cli", cases);
}
