/* SPDX-License-Identifier: GPL-2.0-or-later */
/* execve in the recorded process (issue 15): programs that exec other
 * programs (static, static-pie, dynamic, `#!` scripts) behave as natively,
 * failing calls return Linux's errors and the program goes on, the trace
 * continues in the same file (UNMAP, MAP, SYSCALL, KEYFRAME), recordings
 * are deterministic, every format verifies, and --no-follow ends the run
 * at the exec as documented. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "evlog.h"
#include "testutil.h"

static char argbuf[8][4200];

/* "run PROG A B" with PROG a guest's absolute path. */
static const char *run_arg(int slot, const char *prog, const char *rest) {
  snprintf(argbuf[slot], sizeof argbuf[slot], "run %s %s", prog, rest);
  return argbuf[slot];
}

/* A `#!` script in the temporary directory; its path. */
static const char *script(const char *name, const char *text) {
  const char *p = tu_tmp(name);
  CU_ASSERT_FATAL(tu_write_file(p, text, strlen(text)) == 0);
  CU_ASSERT_FATAL(chmod(p, 0755) == 0);
  return p;
}

/* stdout and exit status equal the native run's. */
static void test_reference_x86_64(void) {
  tu_check_reference(TU_REF_AUTO, "exec64",
                     run_arg(0, tu_guest("args64"), "x y"));
  tu_check_reference(TU_REF_AUTO, "exec64",
                     run_arg(1, tu_guest("args64-pie"), "pie"));
  tu_check_reference(TU_REF_AUTO, "exec64", "errors");
}

static void test_reference_i386(void) {
  tu_check_reference(TU_REF_AUTO, "exec32",
                     run_arg(0, tu_guest("args32"), "a b"));
  tu_check_reference(TU_REF_AUTO, "exec32", "errors");
}

/* A dynamic host program: its interpreter comes from the guest's view. */
static void test_dynamic_host_program(void) {
  if (!tu_have("/bin/echo"))
    return;
  tu_check_reference(TU_REF_AUTO, "exec64",
                     run_arg(0, "/bin/echo", "hi there"));
}

/* `#!` scripts: the interpreter, its optional argument, the script's
 * path, the other arguments; a script whose interpreter is a script. */
static void test_scripts(void) {
  const char *sh = script("exec-sh.sh", "#!/bin/sh -e\necho \"sh: $# $*\"\n");
  tu_check_reference(TU_REF_AUTO, "exec64", run_arg(0, sh, "1 2"));
  char text[4300];
  snprintf(text, sizeof text, "#!%s  one arg  \n", tu_guest("args64"));
  const char *direct = script("exec-direct.sh", text);
  tu_check_reference(TU_REF_AUTO, "exec64", run_arg(1, direct, "z"));
  snprintf(text, sizeof text, "#!%s\n", direct);
  const char *nested = script("exec-nested.sh", text);
  tu_check_reference(TU_REF_AUTO, "exec64", run_arg(2, nested, "n"));
}

/* An ELF of another arch cannot run in this engine: ENOEXEC, and the
 * program goes on (the host's answer may differ with binfmt_misc). */
static void test_other_arch(void) {
  char *out = NULL;
  int st = tu_run_merge(&out, TC_CLI, "record", "-q", "-f", "tct", "-o",
                        tu_tmp("other"), "--", tu_guest("exec64"), "errors",
                        tu_guest("hello-arm64"), NULL);
  CU_ASSERT_EQUAL(st, 0);
  CU_ASSERT_PTR_NOT_NULL(strstr(out ? out : "", "other arch: -1 Exec format"));
  CU_ASSERT_PTR_NOT_NULL(strstr(out ? out : "", "\ndone\n"));
  free(out);
}

static int record(const char *label, const char *extra, const char *guest,
                  const char *a1, const char *a2) {
  char *out = NULL;
  int st = tu_run_merge(&out, TC_CLI, "record", "-q", "-f", "tct", "-o",
                        tu_tmp(label), extra ? extra : "-q", "--",
                        tu_guest(guest), a1, a2, NULL);
  free(out);
  return st;
}

static const char *tct(const char *label, char *buf, size_t max) {
  snprintf(buf, max, "%s.tct", tu_tmp(label));
  return buf;
}

/* Byte-identical recordings; the exec appears as UNMAPs of the old image,
 * MAPs of the new one (named by its path), the SYSCALL returning 0, then
 * a KEYFRAME whose state is the next instruction's state before, at the
 * new program's entry. */
static void test_stream_and_determinism(void) {
  char a[4200], b[4200];
  const char *args = tu_guest("args64");
  CU_ASSERT_EQUAL(record("det-a", NULL, "exec64", "run", args), 2);
  CU_ASSERT_EQUAL(record("det-b", NULL, "exec64", "run", args), 2);
  CU_ASSERT(tu_same_file(tct("det-a", a, sizeof a), tct("det-b", b, sizeof b)));

  evlog l = {0};
  tc_error err = {{0}};
  CU_ASSERT_EQUAL_FATAL(evlog_read(&l, a, &err), 0);
  size_t sys = SIZE_MAX;
  for (size_t i = 0; i < l.n && sys == SIZE_MAX; i++)
    if (l.ev[i].kind == TC_EV_SYSCALL && l.ev[i].u.sys.name &&
        strcmp(l.ev[i].u.sys.name, "execve") == 0)
      sys = i;
  CU_ASSERT_FATAL(sys != SIZE_MAX && sys + 2 < l.n);
  CU_ASSERT_EQUAL(l.ev[sys].u.sys.ret, 0);
  size_t unmaps = 0, maps = 0, named = 0, k = sys;
  while (k-- > 0 && l.ev[k].kind != TC_EV_INSN) {
    unmaps += l.ev[k].kind == TC_EV_UNMAP;
    if (l.ev[k].kind == TC_EV_MAP) {
      maps++;
      named += strcmp(l.ev[k].u.map.name, args) == 0;
    }
  }
  CU_ASSERT(unmaps >= 3 && maps >= 3 && named >= 2);
  /* every UNMAP comes before the first MAP: the old image goes first */
  const tc_event *key = &l.ev[sys + 1], *next = &l.ev[sys + 2];
  CU_ASSERT_EQUAL_FATAL(key->kind, TC_EV_KEYFRAME);
  CU_ASSERT_EQUAL_FATAL(next->kind, TC_EV_INSN);
  const tc_arch *arch = l.arch;
  CU_ASSERT(memcmp(key->u.key.state, next->u.insn.state_before,
                   arch->state_size) == 0);
  CU_ASSERT_EQUAL(tc_state_get(arch, key->u.key.state, arch->pc_reg),
                  next->u.insn.pc);
  /* the execve instruction's state after is the new image's start */
  CU_ASSERT_EQUAL(l.ev[k].kind, TC_EV_INSN);
  CU_ASSERT(memcmp(l.ev[k].u.insn.state_after, key->u.key.state,
                   arch->state_size) == 0);
  CU_ASSERT(l.ev[l.n - 1].kind == TC_EV_EXIT &&
            l.ev[l.n - 1].u.exit.status == 2);
  evlog_free(&l);
}

/* Every readable format round-trips the exec against the tct recording. */
static void test_verify(void) {
  static const struct {
    const char *guest, *a1, *a2, *formats;
  } runs[] = {
      {"exec64", "run", "args64", "trac,tfile,ucir,bap,rvn"},
      {"exec32", "run", "args32", "trac,tfile,ucir,bap,rvn"},
  };
  for (size_t i = 0; i < sizeof runs / sizeof runs[0]; i++) {
    char *out = NULL;
    int st = tu_run_merge(&out, TC_CLI, "verify", "-q", "-f", runs[i].formats,
                          "--", tu_guest(runs[i].guest), runs[i].a1,
                          tu_guest(runs[i].a2), NULL);
    CU_ASSERT_EQUAL(st, 0);
    if (st != 0)
      fprintf(stderr, "\nverify %s %s: %s\n", runs[i].guest, runs[i].a2,
              out ? out : "");
    free(out);
  }
  if (tu_have("/bin/echo")) {
    char *out = NULL;
    int st = tu_run_merge(&out, TC_CLI, "verify", "-q", "-f", "trac,ucir,rvn",
                          "--", tu_guest("exec64"), "run", "/bin/echo", NULL);
    CU_ASSERT_EQUAL(st, 0);
    if (st != 0)
      fprintf(stderr, "\nverify exec of /bin/echo: %s\n", out ? out : "");
    free(out);
  }
}

/* --no-follow: the run ends at an exec that would succeed (status 0, a
 * notice, an EXIT saying so); failing execs still return their errors. */
static void test_no_follow(void) {
  char *out = NULL, path[4200];
  int st = tu_run_merge(&out, TC_CLI, "record", "-f", "tct", "-o",
                        tu_tmp("nofollow"), "--no-follow", "--",
                        tu_guest("exec64"), "run", tu_guest("args64"), NULL);
  CU_ASSERT_EQUAL(st, 0);
  CU_ASSERT_PTR_NOT_NULL(strstr(out ? out : "", "before exec\n"));
  CU_ASSERT_PTR_NULL(strstr(out ? out : "", "argc="));
  CU_ASSERT_PTR_NOT_NULL(strstr(out ? out : "", "not followed (--no-follow)"));
  free(out);
  evlog l = {0};
  tc_error err = {{0}};
  CU_ASSERT_EQUAL_FATAL(
      evlog_read(&l, tct("nofollow", path, sizeof path), &err), 0);
  CU_ASSERT_FATAL(l.n > 2);
  const tc_exit_event *x = &l.ev[l.n - 1].u.exit;
  CU_ASSERT(l.ev[l.n - 1].kind == TC_EV_EXIT &&
            x->reason == TC_EXIT_INTERRUPTED && x->status == 0 && x->message &&
            strstr(x->message, "--no-follow"));
  CU_ASSERT(l.ev[l.n - 2].kind == TC_EV_SYSCALL &&
            strcmp(l.ev[l.n - 2].u.sys.name, "execve") == 0);
  CU_ASSERT_EQUAL(evlog_count(&l, TC_EV_UNMAP), 0);
  evlog_free(&l);
  /* the failing calls of `errors` are answered; its last exec ends it */
  out = NULL;
  st = tu_run_merge(&out, TC_CLI, "record", "-q", "-f", "tct", "-o",
                    tu_tmp("nofollow2"), "--no-follow", "--",
                    tu_guest("exec64"), "errors", NULL);
  CU_ASSERT_EQUAL(st, 0);
  CU_ASSERT_PTR_NOT_NULL(strstr(out ? out : "", "missing: -1 No such file"));
  CU_ASSERT_PTR_NOT_NULL(strstr(out ? out : "", "bad argv: -1 Bad address"));
  CU_ASSERT_PTR_NULL(strstr(out ? out : "", "done"));
  free(out);
}

int main(void) {
  static const tu_case cases[] = {
      {"x86-64 execs behave as natively", test_reference_x86_64},
      {"i386 execs behave as natively", test_reference_i386},
      {"exec of a dynamic host program", test_dynamic_host_program},
      {"#! scripts", test_scripts},
      {"another arch is ENOEXEC", test_other_arch},
      {"the exec in the stream; deterministic", test_stream_and_determinism},
      {"verify passes", test_verify},
      {"--no-follow", test_no_follow},
      {NULL, NULL}};
  return tu_run_suite("exec", cases);
}
