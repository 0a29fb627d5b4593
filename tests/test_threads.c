/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Guest threads (issue 15): pthread programs behave as their reference
 * runs (native, or qemu-user), recordings are deterministic, every event
 * is attributed to the thread that made it, the formats that hold thread
 * ids give them back, and `tracecorn verify` passes. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "evlog.h"
#include "testutil.h"

/* stdout and exit status equal the reference run's. */
static void test_reference_x86(void) {
  tu_check_reference(TU_REF_AUTO, "threads2-64", "300");
  tu_check_reference(TU_REF_AUTO, "threads2-64", "");
  tu_check_reference(TU_REF_AUTO, "threads8-64", "");
  tu_check_reference(TU_REF_AUTO, "threads2-64", "pipe");
  tu_check_reference(TU_REF_AUTO, "threads2-32", "300");
  tu_check_reference(TU_REF_AUTO, "threads2-32", "pipe");
  tu_check_reference(TU_REF_AUTO, "threads8-32", "");
}

static void test_reference_other_arches(void) {
  tu_check_reference(TU_REF_AUTO, "threads2-arm64", "300");
  tu_check_reference(TU_REF_AUTO, "threads8-arm64", "");
  tu_check_reference(TU_REF_AUTO, "threads2-arm64", "pipe");
  tu_check_reference(TU_REF_AUTO, "threads2-armhf", "300");
  tu_check_reference(TU_REF_AUTO, "threads2-mipsel", "300");
}

/* A turn that would end in a mips delay slot (or a Thumb IT block) ends
 * after it: resumed at the slot, the engine ran it and fell through,
 * dropping the branch (threads2-mipsel deadlocked or asserted with quanta
 * 7 to 1000). Small quanta end turns on every kind of instruction; the
 * output and status are qemu's. */
static void quantum_reference(const char *guest, const char *quantum) {
  if (tu_expect_refusal(tu_guest(guest))) /* an engine's probe refuses it */
    return;
  const char *args[] = {"300", NULL}; /* sigthread ignores it */
  tu_ref_run ref;
  char why[512];
  CU_ASSERT_EQUAL_FATAL(tu_reference_run(TU_REF_AUTO, tu_tmpdir(),
                                         tu_guest(guest), args, &ref, why,
                                         sizeof why),
                        0);
  char *out = NULL;
  int st = tu_runf(&out, 0, "%s record -q -o %s --sched-quantum %s -- %s 300",
                   TC_CLI, tu_tmp("quantum"), quantum, tu_guest(guest));
  if (st != ref.status || !out || strcmp(out, ref.out) != 0)
    fprintf(stderr, "\n%s --sched-quantum %s: %d [%s] vs %s %d [%s]\n", guest,
            quantum, st, out ? out : "", ref.how, ref.status, ref.out);
  CU_ASSERT_EQUAL(st, ref.status);
  CU_ASSERT_STRING_EQUAL(out ? out : "", ref.out);
  free(out);
  free(ref.out);
}

static void test_turn_in_delay_slot(void) {
  quantum_reference("threads2-mipsel", "7");
  quantum_reference("threads2-mipsel", "31");
  quantum_reference("threads2-armhf", "7");
}

/* A signal a thread sends itself while it blocks it (raise, tgkill) is
 * pending for that thread alone: in the process's set, the thread that
 * ran next took it for its own, and a futex wait of that thread ended
 * with EINTR that the next syscall (a handler's sigreturn) returned
 * instead of restoring the frame (sigthread-64 segfaulted with quanta 97
 * and 101 and printed in_worker=0 with 7; natively 1). */
static void test_own_pending_signal(void) {
  quantum_reference("sigthread-64", "7");
  quantum_reference("sigthread-64", "97");
  quantum_reference("sigthread-mips", "101");
}

/* Records guest (args: up to 2) with --sched-quantum quantum into
 * tu_tmp(label).tct; returns the exit status. */
static int record(const char *label, const char *quantum, const char *extra,
                  const char *guest, const char *arg) {
  char *out = NULL;
  int st = tu_run_merge(&out, TC_CLI, "record", "-q", "-f", "tct", "-o",
                        tu_tmp(label), "--sched-quantum", quantum,
                        extra ? extra : "-q", "--", tu_guest(guest), arg, NULL);
  free(out);
  return st;
}

static char *tct_path(const char *label, char *buf, size_t max) {
  snprintf(buf, max, "%s.tct", tu_tmp(label));
  return buf;
}

/* Same input, same interleaving: two recordings are byte-identical, with
 * any quantum; another quantum interleaves otherwise, same output. */
static void test_deterministic(void) {
  char a[4200], b[4200], c[4200];
  CU_ASSERT_EQUAL(record("det-a", "250", NULL, "threads8-64", ""), 0);
  CU_ASSERT_EQUAL(record("det-b", "250", NULL, "threads8-64", ""), 0);
  CU_ASSERT_EQUAL(record("det-c", "3000", NULL, "threads8-64", ""), 0);
  CU_ASSERT(tu_same_file(tct_path("det-a", a, sizeof a),
                         tct_path("det-b", b, sizeof b)));
  /* another quantum, another interleaving: the file differs */
  CU_ASSERT(tu_have(tct_path("det-c", c, sizeof c)) && !tu_same_file(a, c));
}

/* Every INSN carries the tid of the thread that ran it: a switch to
 * another tid comes right after a KEYFRAME of that tid (the new thread's
 * whole state), syscalls carry their instruction's tid, gettid returns the
 * tid of the instruction that asked, clone returns a tid that then runs. */
static void check_attribution(const char *label, int nthreads) {
  char path[4200];
  evlog l = {0};
  tc_error err = {{0}};
  CU_ASSERT_EQUAL_FATAL(
      evlog_read(&l, tct_path(label, path, sizeof path), &err), 0);
  uint32_t tids[64];
  size_t ntids = 0, switches = 0, bad_switch = 0, bad_sys = 0, gettids = 0,
         bad_gettid = 0;
  uint32_t last_insn_tid = 0, last_key_tid = 0;
  uint64_t cloned[64];
  size_t ncloned = 0;
  bool last_was_key = false;
  for (size_t i = 0; i < l.n; i++) {
    const tc_event *e = &l.ev[i];
    if (e->kind == TC_EV_KEYFRAME) {
      last_key_tid = e->u.key.tid;
      last_was_key = true;
    } else if (e->kind == TC_EV_INSN) {
      uint32_t t = e->u.insn.tid;
      size_t k = 0;
      while (k < ntids && tids[k] != t)
        k++;
      if (k == ntids && ntids < 64)
        tids[ntids++] = t;
      if (last_insn_tid && t != last_insn_tid) {
        switches++;
        if (!last_was_key || last_key_tid != t)
          bad_switch++;
      }
      last_insn_tid = t;
      last_was_key = false;
    } else if (e->kind == TC_EV_SYSCALL && e->u.sys.part == 0) {
      const tc_syscall_event *s = &e->u.sys;
      if (s->tid != last_insn_tid)
        bad_sys++;
      if (s->name && strcmp(s->name, "gettid") == 0) {
        gettids++;
        if ((uint64_t)s->ret != s->tid)
          bad_gettid++;
      }
      if (s->name && strncmp(s->name, "clone", 5) == 0 && s->ret > 0 &&
          ncloned < 64)
        cloned[ncloned++] = (uint64_t)s->ret;
    }
  }
  CU_ASSERT_EQUAL(ntids, (size_t)nthreads);
  CU_ASSERT(switches >= (size_t)nthreads - 1);
  CU_ASSERT_EQUAL(bad_switch, 0);
  CU_ASSERT_EQUAL(bad_sys, 0);
  if (nthreads == 2) /* threads2's worker asks for its tid */
    CU_ASSERT(gettids > 0);
  CU_ASSERT_EQUAL(bad_gettid, 0);
  CU_ASSERT_EQUAL(ncloned, (size_t)nthreads - 1);
  for (size_t c = 0; c < ncloned; c++) {
    bool ran = false;
    for (size_t k = 0; k < ntids; k++)
      ran |= tids[k] == cloned[c];
    CU_ASSERT(ran);
  }
  evlog_free(&l);
}

static void test_attribution(void) {
  CU_ASSERT_EQUAL(record("attr2", "400", NULL, "threads2-64", "50"), 5);
  check_attribution("attr2", 2);
  CU_ASSERT_EQUAL(record("attr8", "400", NULL, "threads8-64", ""), 0);
  check_attribution("attr8", 9);
  CU_ASSERT_EQUAL(record("attr32", "400", NULL, "threads2-32", "50"), 5);
  check_attribution("attr32", 2);
}

/* The dump shows both threads: json gives each instruction's tid, text
 * marks each change of thread. */
static void test_dump_shows_tids(void) {
  char path[4200], *out = NULL;
  CU_ASSERT_EQUAL(record("dump2", "400", NULL, "threads2-64", "20"), 5);
  tct_path("dump2", path, sizeof path);
  CU_ASSERT_EQUAL(tu_run_merge(&out, TC_CLI, "dump", "--json", path, NULL), 0);
  CU_ASSERT_PTR_NOT_NULL_FATAL(out);
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "\"type\":\"insn\""));
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "\"tid\":1000"));
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "\"tid\":1001"));
  free(out);
  out = NULL;
  CU_ASSERT_EQUAL(tu_run_merge(&out, TC_CLI, "dump", path, NULL), 0);
  CU_ASSERT_PTR_NOT_NULL_FATAL(out);
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "\nthread  1001\n"));
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "\nthread  1000\n"));
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "keyframe #"));
  free(out);
}

/* The formats that hold a thread id per record give every instruction's
 * back (TRAC, UCIR, BAP frames); --exact records the same stream. */
static void test_formats_keep_tids(void) {
  char path[4200], conv[4300];
  CU_ASSERT_EQUAL(record("fmt", "300", NULL, "threads2-64", "20"), 5);
  tct_path("fmt", path, sizeof path);
  evlog ref = {0};
  tc_error err = {{0}};
  CU_ASSERT_EQUAL_FATAL(evlog_read(&ref, path, &err), 0);
  static const char *const formats[] = {"trac", "ucir", "bap"};
  for (size_t f = 0; f < 3; f++) {
    snprintf(conv, sizeof conv, "%s.%s", tu_tmp("fmt-conv"), formats[f]);
    char *out = NULL;
    int st = tu_run_merge(&out, TC_CLI, "convert", path, "--to", formats[f],
                          conv, NULL);
    CU_ASSERT_EQUAL(st, 0);
    if (st != 0)
      fprintf(stderr, "\nconvert to %s: %s\n", formats[f], out ? out : "");
    free(out);
    evlog got = {0};
    tc_error e2 = {{0}};
    CU_ASSERT_EQUAL_FATAL(evlog_read(&got, conv, &e2), 0);
    size_t i = 0, k = 0, checked = 0, wrong = 0;
    for (;;) {
      while (i < ref.n && ref.ev[i].kind != TC_EV_INSN)
        i++;
      while (k < got.n && got.ev[k].kind != TC_EV_INSN)
        k++;
      if (i >= ref.n || k >= got.n)
        break;
      checked++;
      wrong += ref.ev[i].u.insn.tid != got.ev[k].u.insn.tid ||
               ref.ev[i].u.insn.pc != got.ev[k].u.insn.pc;
      i++;
      k++;
    }
    CU_ASSERT(checked == evlog_count(&ref, TC_EV_INSN) && checked > 1000);
    CU_ASSERT_EQUAL(wrong, 0);
    if (wrong)
      fprintf(stderr, "\n%s: %zu of %zu instructions with another tid\n",
              formats[f], wrong, checked);
    evlog_free(&got);
  }
  /* --exact: the same events (contended atomics included) */
  CU_ASSERT_EQUAL(record("fmt-exact", "300", "--exact", "threads2-64", "20"),
                  5);
  evlog ex = {0};
  CU_ASSERT_EQUAL_FATAL(
      evlog_read(&ex, tct_path("fmt-exact", path, sizeof path), &err), 0);
  char why[256] = "";
  CU_ASSERT_EQUAL(evlog_equal(&ref, &ex, why, sizeof why), 0);
  if (why[0])
    fprintf(stderr, "\n--exact differs: %s\n", why);
  evlog_free(&ex);
  evlog_free(&ref);
}

/* Every readable format round-trips against the lossless recording. */
static void test_verify(void) {
  char *out = NULL;
  int st = tu_run_merge(&out, TC_CLI, "verify", "-q", "--sched-quantum", "300",
                        "--", tu_guest("threads2-64"), "15", NULL);
  CU_ASSERT_EQUAL(st, 0);
  if (st != 0)
    fprintf(stderr, "\nverify threads2-64: %s\n", out ? out : "");
  free(out);
  out = NULL;
  st = tu_run_merge(&out, TC_CLI, "verify", "-q", "-f", "trac,ucir,bap,rvn",
                    "--sched-quantum", "500", "--", tu_guest("threads2-32"),
                    "15", NULL);
  CU_ASSERT_EQUAL(st, 0);
  if (st != 0)
    fprintf(stderr, "\nverify threads2-32: %s\n", out ? out : "");
  free(out);
  static const char *const others[] = {"threads2-arm64", "threads2-armhf",
                                       "threads2-mipsel"};
  for (size_t i = 0; i < 3; i++) {
    if (tu_expect_refusal(tu_guest(others[i])))
      continue;
    out = NULL;
    st = tu_run_merge(&out, TC_CLI, "verify", "-q", "-f", "tfile,ucir,tenet",
                      "--sched-quantum", "400", "--", tu_guest(others[i]), "15",
                      NULL);
    CU_ASSERT_EQUAL(st, 0);
    if (st != 0)
      fprintf(stderr, "\nverify %s: %s\n", others[i], out ? out : "");
    free(out);
  }
}

/* Whether the line starting at p holds what. */
static bool first_line_has(const char *p, const char *what) {
  if (!p)
    return false;
  size_t n = strcspn(p, "\n");
  const char *at = strstr(p, what);
  return at && (size_t)(at - p) < n;
}

/* Signals aimed at threads: pthread_kill() to a thread blocked on a
 * mutex runs the handler on that thread and its wait goes on; kill() from
 * the second thread runs the handler on the main thread (Linux's choice);
 * a signal the target blocks waits for the unblock; sigwait and
 * sigsuspend take another thread's signal. Output equals Linux's (x86-64
 * and i386 native; arm64, armhf, mips under qemu-user); the SIGNAL carries
 * the target's tid; the recording is deterministic and verifies. */
static void test_signals_to_threads(void) {
  tu_check_reference(TU_REF_AUTO, "sigthread-64", "");
  tu_check_reference(TU_REF_AUTO, "sigthread-arm64", "");
  tu_check_reference(TU_REF_AUTO, "sigthread-32", "");
  tu_check_reference(TU_REF_AUTO, "sigthread-armhf", "");
  tu_check_reference(TU_REF_AUTO, "sigthread-mips", "");
  char a[4200], b[4200], c[4200];
  CU_ASSERT_EQUAL(record("sigt-a", "200", NULL, "sigthread-64", NULL), 0);
  CU_ASSERT_EQUAL(record("sigt-b", "200", NULL, "sigthread-64", NULL), 0);
  CU_ASSERT_EQUAL(record("sigt-c", "5000", NULL, "sigthread-64", NULL), 0);
  CU_ASSERT(tu_same_file(tct_path("sigt-a", a, sizeof a),
                         tct_path("sigt-b", b, sizeof b)));
  char *out = NULL;
  tu_run_merge(&out, TC_CLI, "dump", tct_path("sigt-c", c, sizeof c), NULL);
  const char *o = out ? out : "";
  /* SIGUSR1 then the keyframe of the thread it went to (1001); SIGUSR2
   * to the main thread (1000) */
  const char *u1 = strstr(o, "signal  SIGUSR1 (code -6, from pid 1000)");
  CU_ASSERT_PTR_NOT_NULL(u1);
  CU_ASSERT(first_line_has(u1 ? strstr(u1, "keyframe #") : NULL, " tid 1001"));
  const char *u2 = strstr(o, "signal  SIGUSR2 (code 0, from pid 1000)");
  CU_ASSERT_PTR_NOT_NULL(u2);
  CU_ASSERT(first_line_has(u2 ? strstr(u2, "keyframe #") : NULL, " tid 1000"));
  CU_ASSERT_PTR_NULL(strstr(o, "delivery to another thread is not"));
  free(out);
  out = NULL;
  /* quantum 300 puts a switch right after madvise: rvn must not fold the
   * next thread's registers into the syscall's event (its result) */
  int st = tu_run_merge(&out, TC_CLI, "verify", "-q", "--sched-quantum", "300",
                        "--", tu_guest("sigthread-64"), NULL);
  CU_ASSERT_EQUAL(st, 0);
  CU_ASSERT_PTR_NULL(strstr(out ? out : "", "FAILED"));
  free(out);
}

/* A read of an empty guest pipe waits for the writing thread: the read
 * that found nothing restarts (an INSN without SYSCALL at the same pc,
 * then the same INSN again with the data), and the recording stays
 * deterministic. */
static void test_pipe_between_threads(void) {
  char a[4200], b[4200];
  CU_ASSERT_EQUAL(record("pipe-a", "10000", NULL, "threads2-64", "pipe"), 0);
  CU_ASSERT_EQUAL(record("pipe-b", "10000", NULL, "threads2-64", "pipe"), 0);
  CU_ASSERT(tu_same_file(tct_path("pipe-a", a, sizeof a),
                         tct_path("pipe-b", b, sizeof b)));
  evlog l = {0};
  tc_error err = {{0}};
  CU_ASSERT_EQUAL_FATAL(evlog_read(&l, a, &err), 0);
  size_t restarts = 0, reads = 0;
  for (size_t i = 0; i + 1 < l.n; i++) {
    const tc_event *e = &l.ev[i];
    if (e->kind == TC_EV_SYSCALL && e->u.sys.name &&
        strcmp(e->u.sys.name, "read") == 0 && e->u.sys.args[0] == 3)
      reads++;
    /* a trap that did not complete: PC unchanged, no SYSCALL follows */
    if (e->kind == TC_EV_INSN && e->u.insn.tid == 1000 && e->u.insn.size == 2 &&
        e->u.insn.bytes[0] == 0x0f && e->u.insn.bytes[1] == 0x05 &&
        l.ev[i + 1].kind != TC_EV_SYSCALL)
      restarts++;
  }
  CU_ASSERT(reads >= 2);
  CU_ASSERT(restarts >= 1);
  evlog_free(&l);
}

/* Every thread blocked for good: a clear message, status 125, and a
 * trace that ends validly with an error EXIT. */
static void test_deadlock(void) {
  char *out = NULL, path[4200];
  int st = tu_run_merge(&out, TC_CLI, "record", "-q", "-f", "tct", "-o",
                        tu_tmp("deadlock"), "--", tu_guest("threads2-64"),
                        "deadlock", NULL);
  CU_ASSERT_EQUAL(st, 125);
  CU_ASSERT(out && strstr(out, "deadlock: every guest thread"));
  free(out);
  evlog l = {0};
  tc_error err = {{0}};
  CU_ASSERT_EQUAL_FATAL(
      evlog_read(&l, tct_path("deadlock", path, sizeof path), &err), 0);
  CU_ASSERT(l.n > 0 && l.ev[l.n - 1].kind == TC_EV_EXIT &&
            l.ev[l.n - 1].u.exit.reason == TC_EXIT_ERROR);
  evlog_free(&l);
}

/* Bad option values are refused. */
static void test_bad_quantum(void) {
  char *out = NULL;
  CU_ASSERT_EQUAL(tu_run_merge(&out, TC_CLI, "record", "--sched-quantum", "0",
                               "--", tu_guest("hello64"), NULL),
                  2);
  CU_ASSERT(out && strstr(out, "--sched-quantum"));
  free(out);
}

int main(void) {
  static const tu_case cases[] = {
      {"x86-64 and i386 threads behave as natively", test_reference_x86},
      {"arm64, armhf, mipsel threads behave as under qemu",
       test_reference_other_arches},
      {"a turn never ends in a delay slot or an IT block",
       test_turn_in_delay_slot},
      {"a signal pending for one thread is not another's",
       test_own_pending_signal},
      {"recordings are deterministic", test_deterministic},
      {"events carry their thread's tid", test_attribution},
      {"dump shows the threads", test_dump_shows_tids},
      {"formats keep tids; --exact agrees", test_formats_keep_tids},
      {"verify passes", test_verify},
      {"signals to other threads", test_signals_to_threads},
      {"a pipe between threads", test_pipe_between_threads},
      {"deadlock ends the run clearly", test_deadlock},
      {"bad --sched-quantum", test_bad_quantum},
      {NULL, NULL}};
  return tu_run_suite("threads", cases);
}
