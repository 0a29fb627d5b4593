/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Guest processes (issue 15): fork, vfork, pipes between processes,
 * wait statuses, kill, SIGCHLD, orphans, a bounded fork bomb and a
 * deadlock of two processes behave as the reference run (native, or
 * qemu-user) or as documented; each process is recorded into its own
 * files (PREFIX.PID.EXT), deterministically, and each verifies. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "evlog.h"
#include "testutil.h"

/* Records guest with args into tu_tmp(label) in the formats; returns the
 * exit status, stdout (and stderr) in *out when out is given. */
/* (not inlined: gcc 12's -Wdangling-pointer takes the free(o) branch for a
 * caller's own buffer) */
__attribute__((noinline)) static int record(const char *label,
                                            const char *formats,
                                            const char *guest, const char *arg,
                                            const char *arg2, char **out) {
  char *o = NULL;
  int st = tu_run_merge(&o, TC_CLI, "record", "-q", "-f", formats, "-o",
                        tu_tmp(label), "--", tu_guest(guest), arg, arg2, NULL);
  if (out)
    *out = o;
  else
    free(o);
  return st;
}

static const char *file_of(const char *label, const char *pid,
                           const char *ext) {
  static char buf[4][4200];
  static int k;
  char *b = buf[k++ % 4];
  snprintf(b, sizeof buf[0], "%s%s%s%s", tu_tmp(label), pid ? "." : "",
           pid ? pid : "", ext);
  return b;
}

/* stdout and exit status equal the reference run's. */
static void test_reference(void) {
  tu_check_reference(TU_REF_AUTO, "fork64", "");
  tu_check_reference(TU_REF_AUTO, "fork32", "");
  /* posix_spawn and vfork, each child execs (the parent waits for it) */
  tu_check_reference(TU_REF_AUTO, "fork64", "spawn");
  tu_check_reference(TU_REF_AUTO, "fork32", "spawn");
}

/* Another quantum interleaves the processes otherwise: the same output,
 * other traces. */
static void test_quantum(void) {
  tu_ref_run ref;
  char why[512];
  const char *args[] = {NULL};
  CU_ASSERT_FATAL(tu_reference_run(TU_REF_AUTO, tu_tmpdir(), tu_guest("fork64"),
                                   args, &ref, why, sizeof why) == 0);
  static const char *const quanta[] = {"37", "100000"};
  uint8_t *trace[2] = {NULL, NULL};
  size_t sizes[2] = {0, 0};
  for (int q = 0; q < 2; q++) {
    char *out = NULL, label[32];
    snprintf(label, sizeof label, "quantum-%s", quanta[q]);
    char cmd[8192];
    snprintf(cmd, sizeof cmd,
             "cd %s && %s record -q -f tct --sched-quantum %s -o %s -- %s",
             tu_tmpdir(), TC_CLI, quanta[q], tu_tmp(label), tu_guest("fork64"));
    int st = tu_run(cmd, &out, 0);
    CU_ASSERT_EQUAL(st, ref.status);
    CU_ASSERT(out && strcmp(out, ref.out) == 0);
    if (!out || strcmp(out, ref.out) != 0)
      fprintf(stderr, "\nquantum %s: [%s]\n", quanta[q], out ? out : "");
    free(out);
    trace[q] = tu_read_file(file_of(label, NULL, ".tct"), &sizes[q]);
    CU_ASSERT_PTR_NOT_NULL(trace[q]);
  }
  /* The quantum took effect: the parent's traces hold other bytes (their
   * sizes may well be equal). */
  CU_ASSERT(trace[0] && trace[1] &&
            (sizes[0] != sizes[1] || memcmp(trace[0], trace[1], sizes[0])));
  free(trace[0]);
  free(trace[1]);
  free(ref.out);
}

/* arm64 (under qemu): the same output, the SIGCHLD handler included. */
static void test_reference_arm64(void) {
  tu_ref_run ref;
  char why[512];
  const char *args[] = {NULL};
  CU_ASSERT_FATAL(tu_reference_run(TU_REF_AUTO, tu_tmpdir(),
                                   tu_guest("fork-arm64"), args, &ref, why,
                                   sizeof why) == 0);
  char *out = NULL;
  int st = record("arm64", "tct", "fork-arm64", NULL, NULL, &out);
  CU_ASSERT_EQUAL(st, ref.status);
  CU_ASSERT_PTR_NOT_NULL_FATAL(out);
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "SIGCHLD handled:"));
  CU_ASSERT_STRING_EQUAL(ref.out, out);
  free(ref.out);
  free(out);
}

/* Each process has its own files: the first PREFIX.EXT, each child
 * PREFIX.PID.EXT with pids 1001 to 1005 in fork order; two recordings
 * are byte-identical file by file. */
static void test_files_and_determinism(void) {
  CU_ASSERT_EQUAL(record("det-a", "tct,trac", "fork64", NULL, NULL, NULL), 0);
  CU_ASSERT_EQUAL(record("det-b", "tct,trac", "fork64", NULL, NULL, NULL), 0);
  static const char *const pids[] = {NULL,   "1001", "1002",
                                     "1003", "1004", "1005"};
  static const char *const exts[] = {".tct", ".trace64"};
  for (size_t p = 0; p < 6; p++)
    for (size_t e = 0; e < 2; e++) {
      bool same = tu_same_file(file_of("det-a", pids[p], exts[e]),
                               file_of("det-b", pids[p], exts[e]));
      CU_ASSERT(same);
      if (!same)
        fprintf(stderr, "\n%s differs between two recordings\n",
                file_of("det-a", pids[p], exts[e]));
    }
  CU_ASSERT_FALSE(tu_have(file_of("det-a", "1006", ".tct")));
}

/* A child's stream starts from the copied state: MAP events (with the
 * contents), a KEYFRAME of the child's tid, then the child's instructions
 * from just after the parent's fork; it ends with the child's own exit.
 * The parent's clone returned the child's pid; wait4 reported it. */
/* strace decodes fork's clone, wait4's status and options as strace does
 * (the lines of a native `strace` of the same guest, pids aside). */
static void test_strace_lines(void) {
  CU_ASSERT_EQUAL(record("strace", "tct", "fork64", NULL, NULL, NULL), 0);
  char *out = NULL;
  CU_ASSERT_EQUAL(tu_run_merge(&out, TC_CLI, "strace",
                               file_of("strace", NULL, ".tct"), NULL),
                  0);
  const char *o = out ? out : "";
  CU_ASSERT_PTR_NOT_NULL(
      strstr(o, "clone(child_stack=NULL, flags=CLONE_CHILD_CLEARTID|"
                "CLONE_CHILD_SETTID|SIGCHLD, child_tidptr=0x"));
  CU_ASSERT_PTR_NOT_NULL(
      strstr(o, "wait4(1001, [{WIFEXITED(s) && WEXITSTATUS(s) == 20}], 0, "
                "NULL) = 1001"));
  CU_ASSERT_PTR_NOT_NULL(strstr(o, "WNOHANG, NULL) = 0"));
  CU_ASSERT_PTR_NOT_NULL(
      strstr(o, "[{WIFSIGNALED(s) && WTERMSIG(s) == SIGTERM}], 0, NULL)"));
  free(out);
}

/* info lists a recording's other processes from the parent's file, and
 * names the parent from a child's (issue 32). */
static void test_info_family(void) {
  CU_ASSERT_EQUAL(record("family", "tct", "fork64", NULL, NULL, NULL), 0);
  char *out = NULL;
  CU_ASSERT_EQUAL(
      tu_run_merge(&out, TC_CLI, "info", file_of("family", NULL, ".tct"), NULL),
      0);
  const char *o = out ? out : "";
  CU_ASSERT(strstr(o, "processes:    5 more in files of their own (fork):\n"
                      "  pid 1001    ") != NULL);
  CU_ASSERT(strstr(o, "family.1005.tct\n") != NULL);
  free(out);
  out = NULL;
  CU_ASSERT_EQUAL(tu_run_merge(&out, TC_CLI, "info",
                               file_of("family", "1002", ".tct"), NULL),
                  0);
  CU_ASSERT(out && strstr(out, "family.tct (this is pid 1002's trace)\n"));
  free(out);
}

static void test_child_stream(void) {
  CU_ASSERT_EQUAL(record("stream", "tct", "fork64", NULL, NULL, NULL), 0);
  evlog parent = {0}, child = {0};
  tc_error err = {{0}};
  CU_ASSERT_EQUAL_FATAL(
      evlog_read(&parent, file_of("stream", NULL, ".tct"), &err), 0);
  CU_ASSERT_EQUAL_FATAL(
      evlog_read(&child, file_of("stream", "1001", ".tct"), &err), 0);
  uint64_t fork_next_pc = 0;
  bool waited = false;
  for (size_t i = 0; i < parent.n; i++) {
    const tc_event *e = &parent.ev[i];
    if (e->kind == TC_EV_SYSCALL && e->u.sys.part == 0 && e->u.sys.name &&
        strcmp(e->u.sys.name, "clone") == 0 && e->u.sys.ret == 1001 && i > 0 &&
        parent.ev[i - 1].kind == TC_EV_INSN && !fork_next_pc)
      fork_next_pc = parent.ev[i - 1].u.insn.pc + parent.ev[i - 1].u.insn.size;
    if (e->kind == TC_EV_SYSCALL && e->u.sys.part == 0 && e->u.sys.name &&
        strcmp(e->u.sys.name, "wait4") == 0 && e->u.sys.ret == 1001)
      waited = true;
  }
  CU_ASSERT(fork_next_pc != 0);
  CU_ASSERT(waited);
  size_t i = 0, maps = 0, with_data = 0;
  while (i < child.n && child.ev[i].kind == TC_EV_MAP) {
    maps++;
    with_data += child.ev[i].u.map.data != NULL;
    i++;
  }
  CU_ASSERT(maps >= 4 && with_data >= 2);
  CU_ASSERT_FATAL(i + 2 < child.n);
  CU_ASSERT_EQUAL(child.ev[i].kind, TC_EV_KEYFRAME);
  CU_ASSERT_EQUAL(child.ev[i].u.key.tid, 1001);
  /* then its first scheduler turn and its first instruction; the parent's
   * fork came before any turn (its events before its first TURN) */
  CU_ASSERT_EQUAL(child.ev[i + 1].kind, TC_EV_TURN);
  CU_ASSERT_EQUAL(child.ev[i + 1].u.turn.insn_index, 0);
  CU_ASSERT_EQUAL(child.ev[i + 1].u.turn.tid, 1001);
  size_t fork_at = SIZE_MAX, first_turn = SIZE_MAX;
  for (size_t k = 0; k < parent.n; k++) {
    const tc_event *e = &parent.ev[k];
    if (e->kind == TC_EV_TURN && first_turn == SIZE_MAX)
      first_turn = k;
    if (e->kind == TC_EV_SYSCALL && e->u.sys.ret == 1001 && fork_at == SIZE_MAX)
      fork_at = k;
  }
  CU_ASSERT(fork_at < first_turn);
  CU_ASSERT(first_turn != SIZE_MAX);
  i++;
  CU_ASSERT_EQUAL(child.ev[i + 1].kind, TC_EV_INSN);
  CU_ASSERT_EQUAL(child.ev[i + 1].u.insn.pc, fork_next_pc);
  size_t other_tid = 0, getppid_ok = 0;
  for (size_t k = i; k < child.n; k++) {
    const tc_event *e = &child.ev[k];
    if (e->kind == TC_EV_INSN && e->u.insn.tid != 1001)
      other_tid++;
    if (e->kind == TC_EV_SYSCALL && e->u.sys.name &&
        strcmp(e->u.sys.name, "getppid") == 0 && e->u.sys.ret == 1000)
      getppid_ok++;
  }
  CU_ASSERT_EQUAL(other_tid, 0);
  CU_ASSERT_EQUAL(getppid_ok, 1);
  const tc_event *x = &child.ev[child.n - 1];
  CU_ASSERT_EQUAL(x->kind, TC_EV_EXIT);
  CU_ASSERT(x->u.exit.reason == TC_EXIT_EXITED && x->u.exit.status == 20);
  evlog_free(&parent);
  evlog_free(&child);
}

/* A signal for a handler ends a child's blocked read with EINTR; with
 * SA_RESTART the read goes on and gets its byte (as natively). */
static void test_eintr(void) {
  tu_check_reference(TU_REF_AUTO, "fork64", "eintr");
  tu_check_reference(TU_REF_AUTO, "fork32", "eintr");
}

/* Every process's files verify against its own lossless recording. */
static void test_verify(void) {
  char *out = NULL;
  /* every readable format (trac, tfile, ucir, bap, rvn, tenet...), with
   * tenet's one-line trace of process 1003, killed before it ran */
  int st = tu_run_merge(&out, TC_CLI, "verify", "-q", "--", tu_guest("fork64"),
                        NULL);
  CU_ASSERT_EQUAL(st, 0);
  CU_ASSERT(out && strstr(out, "process 1001 ") &&
            strstr(out, "process 1004 "));
  CU_ASSERT(out && strstr(out, "tenet  ok: 0 instructions"));
  CU_ASSERT(out && !strstr(out, "FAILED"));
  if (st != 0)
    fprintf(stderr, "\nverify fork64: %s\n", out ? out : "");
  free(out);
  out = NULL;
  st = tu_run_merge(&out, TC_CLI, "verify", "-q", "-f", "trac,ucir,bap", "--",
                    tu_guest("fork32"), NULL);
  CU_ASSERT_EQUAL(st, 0);
  CU_ASSERT(out && strstr(out, "process 1002 "));
  if (st != 0)
    fprintf(stderr, "\nverify fork32: %s\n", out ? out : "");
  free(out);
}

/* A fork bomb ends at EAGAIN: RLIMIT_NPROC (16 here; at most 64 live
 * processes otherwise), every child reaped. */
static void test_bomb(void) {
  char *out = NULL;
  int st = record("bomb", "tct", "fork64", "bomb", "16", &out);
  CU_ASSERT_EQUAL(st, 0);
  CU_ASSERT(out && strstr(out, "forked 15, then EAGAIN; 15 reaped cleanly"));
  if (!out || !strstr(out, "forked 15"))
    fprintf(stderr, "\nbomb: %s\n", out ? out : "");
  free(out);
  CU_ASSERT(tu_have(file_of("bomb", "1015", ".tct")));
  CU_ASSERT_FALSE(tu_have(file_of("bomb", "1016", ".tct")));
}

/* The parent exits while its child sleeps: the run's status is the
 * first process's, the child goes on (now init's) and exits itself. */
static void test_orphan(void) {
  char *out = NULL;
  CU_ASSERT_EQUAL(record("orphan", "tct", "fork64", "orphan", NULL, &out), 3);
  CU_ASSERT(out && strstr(out, "orphan: reparented"));
  free(out);
  evlog child = {0};
  tc_error err = {{0}};
  CU_ASSERT_EQUAL_FATAL(
      evlog_read(&child, file_of("orphan", "1001", ".tct"), &err), 0);
  CU_ASSERT(child.n > 0 && child.ev[child.n - 1].kind == TC_EV_EXIT &&
            child.ev[child.n - 1].u.exit.status == 0);
  evlog_free(&child);
}

/* Two processes waiting for each other: one clear message, status 125,
 * both traces end validly with an error EXIT. */
static void test_deadlock(void) {
  char *out = NULL;
  CU_ASSERT_EQUAL(record("dead", "tct", "fork64", "deadlock", NULL, &out), 125);
  CU_ASSERT(out && strstr(out, "deadlock: every guest process waits"));
  CU_ASSERT(out && strstr(strstr(out, "deadlock") + 1, "deadlock:") == NULL);
  free(out);
  static const char *const pids[] = {NULL, "1001"};
  for (size_t p = 0; p < 2; p++) {
    evlog l = {0};
    tc_error err = {{0}};
    CU_ASSERT_EQUAL_FATAL(
        evlog_read(&l, file_of("dead", pids[p], ".tct"), &err), 0);
    CU_ASSERT(l.n > 0 && l.ev[l.n - 1].kind == TC_EV_EXIT &&
              l.ev[l.n - 1].u.exit.reason == TC_EXIT_ERROR);
    evlog_free(&l);
  }
}

/* Job control: stop signals stop a whole process until a SIGCONT; the
 * parent's WUNTRACED/WSTOPPED/WCONTINUED waits and SIGCHLD as natively. */
static void test_stop_reference(void) {
  tu_check_reference(TU_REF_AUTO, "stop64", "");
  tu_check_reference(TU_REF_AUTO, "stop32", "");
  tu_check_reference(TU_REF_AUTO, "stop64", "jobs");
  tu_check_reference(TU_REF_AUTO, "stop32", "jobs");
}

/* The stop is the kill's SYSCALL, no SIGNAL event: the stopped child's
 * stream goes on after its tgkill once continued, and ends with its exit;
 * two recordings are byte-identical; every format verifies. */
static void test_stop_stream(void) {
  CU_ASSERT_EQUAL(record("stop-a", "tct", "stop64", NULL, NULL, NULL), 0);
  CU_ASSERT_EQUAL(record("stop-b", "tct", "stop64", NULL, NULL, NULL), 0);
  static const char *const pids[] = {NULL, "1001"};
  for (size_t p = 0; p < 2; p++) {
    CU_ASSERT(tu_same_file(file_of("stop-a", pids[p], ".tct"),
                           file_of("stop-b", pids[p], ".tct")));
  }
  evlog child = {0};
  tc_error err = {{0}};
  CU_ASSERT_EQUAL_FATAL(
      evlog_read(&child, file_of("stop-a", "1001", ".tct"), &err), 0);
  size_t kill_at = 0, signals = 0, insns_after = 0;
  for (size_t i = 0; i < child.n; i++) {
    const tc_event *e = &child.ev[i];
    if (e->kind == TC_EV_SYSCALL && e->u.sys.part == 0 && e->u.sys.name &&
        strcmp(e->u.sys.name, "tgkill") == 0 && e->u.sys.ret == 0)
      kill_at = i;
    signals += e->kind == TC_EV_SIGNAL;
    insns_after += kill_at && e->kind == TC_EV_INSN;
  }
  CU_ASSERT(kill_at > 0);
  CU_ASSERT_EQUAL(signals, 0);
  CU_ASSERT(insns_after > 10);
  const tc_event *x = &child.ev[child.n - 1];
  CU_ASSERT(x->kind == TC_EV_EXIT && x->u.exit.reason == TC_EXIT_EXITED &&
            x->u.exit.status == 7);
  evlog_free(&child);
  char *out = NULL;
  int st = tu_run_merge(&out, TC_CLI, "verify", "-q", "--", tu_guest("stop64"),
                        "jobs", NULL);
  CU_ASSERT_EQUAL(st, 0);
  CU_ASSERT(out && strstr(out, "process 1001 ") && !strstr(out, "FAILED"));
  if (st != 0)
    fprintf(stderr, "\nverify stop64 jobs: %s\n", out ? out : "");
  free(out);
}

/* A process that stops with nobody in the run to continue it: a clear
 * message naming it and the signal, status 125, an error EXIT. */
static void test_stop_lone(void) {
  char *out = NULL;
  CU_ASSERT_EQUAL(record("stop-lone", "tct", "stop64", "lone", NULL, &out),
                  125);
  CU_ASSERT(out && strstr(out, "process 1000 is stopped by SIGSTOP") &&
            strstr(out, "SIGCONT from outside"));
  CU_ASSERT(out && !strstr(out, "continued from outside"));
  if (!out || !strstr(out, "SIGSTOP"))
    fprintf(stderr, "\nstop lone: %s\n", out ? out : "");
  free(out);
  evlog l = {0};
  tc_error err = {{0}};
  CU_ASSERT_EQUAL_FATAL(
      evlog_read(&l, file_of("stop-lone", NULL, ".tct"), &err), 0);
  CU_ASSERT(l.n > 0 && l.ev[l.n - 1].kind == TC_EV_EXIT &&
            l.ev[l.n - 1].u.exit.reason == TC_EXIT_ERROR &&
            l.ev[l.n - 1].u.exit.status == 125);
  evlog_free(&l);
}

/* busybox's shell: pipelines, subshells and command substitution fork
 * (and exec busybox again for wc); stdout and status as natively. */
static void test_busybox(void) {
  if (!tu_have("/bin/busybox")) {
    fprintf(stderr, "\nskipped: /bin/busybox is not installed "
                    "(scripts/setup-debian.sh installs busybox-static)\n");
    return;
  }
  static const char script[] =
      "echo hi there | { read a b; echo \"got $b $a\"; }; (exit 7); "
      "echo \"sub=$?\"; x=$(echo inner); echo \"cmd=$x\"; exit 4";
  char cmd[8192], *nat = NULL, *emu = NULL;
  snprintf(cmd, sizeof cmd, "cd %s && /bin/busybox sh -c '%s'", tu_tmpdir(),
           script);
  int ns = tu_run(cmd, &nat, 0);
  snprintf(cmd, sizeof cmd,
           "cd %s && %s record -q -f tct -o %s -- /bin/busybox sh -c '%s'",
           tu_tmpdir(), TC_CLI, tu_tmp("bb"), script);
  int es = tu_run(cmd, &emu, 0);
  CU_ASSERT_EQUAL(ns, 4);
  CU_ASSERT_EQUAL(es, ns);
  CU_ASSERT(nat && emu && strcmp(nat, emu) == 0);
  if (!nat || !emu || strcmp(nat, emu) != 0)
    fprintf(stderr, "\nbusybox: native [%s] tracecorn [%s]\n", nat, emu);
  CU_ASSERT(tu_have(file_of("bb", "1003", ".tct")));
  free(nat);
  free(emu);
  /* issue 15's example: wc is busybox again, by execve in the child */
  nat = emu = NULL;
  ns = tu_run("/bin/busybox sh -c 'echo a b c | wc -w'", &nat, 0);
  snprintf(cmd, sizeof cmd,
           "cd %s && %s record -q -f tct -o %s -- /bin/busybox sh -c 'echo a b "
           "c | wc -w'",
           tu_tmpdir(), TC_CLI, tu_tmp("bbwc"));
  es = tu_run(cmd, &emu, 0);
  CU_ASSERT_EQUAL(ns, 0);
  CU_ASSERT_EQUAL(es, ns);
  CU_ASSERT(nat && emu && strcmp(nat, "3\n") == 0 && strcmp(nat, emu) == 0);
  if (!nat || !emu || strcmp(nat, emu) != 0)
    fprintf(stderr, "\nbusybox wc: native [%s] tracecorn [%s]\n", nat, emu);
  CU_ASSERT(tu_have(file_of("bbwc", "1002", ".tct")));
  free(nat);
  free(emu);
}

int main(void) {
  static const tu_case cases[] = {
      {"x86-64 and i386 processes behave as natively", test_reference},
      {"arm64 processes behave as under qemu", test_reference_arm64},
      {"any quantum, the same output", test_quantum},
      {"one file per process, deterministic", test_files_and_determinism},
      {"a child's stream starts from the copied state", test_child_stream},
      {"strace: clone and wait4 as strace prints them", test_strace_lines},
      {"info lists the other processes' files", test_info_family},
      {"verify passes for every process", test_verify},
      {"a signal interrupts a blocked read", test_eintr},
      {"a fork bomb ends at EAGAIN", test_bomb},
      {"an orphan goes on after its parent", test_orphan},
      {"a deadlock of two processes ends clearly", test_deadlock},
      {"stop signals and SIGCONT as natively", test_stop_reference},
      {"a stopped child's stream, deterministic, verified", test_stop_stream},
      {"a lone stopped process ends clearly", test_stop_lone},
      {"busybox sh pipelines and subshells", test_busybox},
      {NULL, NULL}};
  return tu_run_suite("fork", cases);
}
