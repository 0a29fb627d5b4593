/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Resource limits (issue 14): guest sizes never become host memory
 * (a 1 GiB bss, a read(2) larger than what one SYSCALL event part holds),
 * and outputs survive interruption. Peak host memory is measured in
 * bench/memory.sh, not here. */
#include <fcntl.h>
#include <glob.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "evlog.h"
#include "testutil.h"

/* A 1 GiB bss: the guest behaves as natively, and the initial image comes
 * as bounded MAP events (no event carries more than 16 MiB of data) that
 * still cover the whole bss. */
static void test_big_bss(void) {
  tu_check_reference(TU_REF_AUTO, "bigmem64", "bss");
  char tct[4200];
  snprintf(tct, sizeof tct, "%s.tct", tu_tmp("bigmem64"));
  evlog l = {0};
  tc_error err = {{0}};
  CU_ASSERT_EQUAL_FATAL(evlog_read(&l, tct, &err), 0);
  uint64_t covered = 0, largest_data = 0;
  for (size_t i = 0; i < l.n && l.ev[i].kind != TC_EV_KEYFRAME; i++) {
    const tc_map_event *m = &l.ev[i].u.map;
    CU_ASSERT_EQUAL(l.ev[i].kind, TC_EV_MAP);
    if (strstr(m->name, "bigmem64") && (m->prot & TC_PROT_WRITE))
      covered += m->size;
    if (m->data && m->size > largest_data)
      largest_data = m->size;
  }
  CU_ASSERT(covered >= (1ull << 30));
  CU_ASSERT(largest_data <= (16ull << 20));
  evlog_free(&l);
}

/* A 24 MiB read(2) in one call: one syscall, delivered as several SYSCALL
 * event parts that hold every byte the kernel wrote, in order. */
static void test_big_read_parts(void) {
  size_t n = 24u << 20;
  uint8_t *data = malloc(n);
  CU_ASSERT_PTR_NOT_NULL_FATAL(data);
  uint64_t x = 0x9e3779b97f4a7c15ull;
  for (size_t i = 0; i < n; i++)
    data[i] = (uint8_t)(tu_xorshift(&x) >> 24);
  const char *file = tu_tmp("big.bin");
  CU_ASSERT_EQUAL_FATAL(tu_write_file(file, data, n), 0);
  char arg[4300];
  snprintf(arg, sizeof arg, "read %s", file);
  tu_check_reference(TU_REF_AUTO, "bigmem64", arg);

  char tct[4200];
  snprintf(tct, sizeof tct, "%s.tct", tu_tmp("bigmem64"));
  evlog l = {0};
  tc_error err = {{0}};
  CU_ASSERT_EQUAL_FATAL(evlog_read(&l, tct, &err), 0);
  size_t parts = 0, got = 0, bad = 0;
  uint64_t index = 0, buf = 0;
  for (size_t i = 0; i < l.n; i++) {
    const tc_syscall_event *s = &l.ev[i].u.sys;
    if (l.ev[i].kind != TC_EV_SYSCALL || !s->name ||
        strcmp(s->name, "read") != 0 || s->ret != (int64_t)n)
      continue;
    if (parts == 0) {
      index = s->insn_index;
      buf = s->args[1];
    }
    CU_ASSERT_EQUAL(s->insn_index, index);
    CU_ASSERT_EQUAL(s->part, parts);
    parts++;
    for (uint32_t k = 0; k < s->nmem; k++) {
      const tc_mem_access *a = &s->mem[k];
      if (a->addr != buf + got || got + a->size > n ||
          memcmp(a->after, data + got, a->size) != 0)
        bad++;
      got += a->size;
    }
    if (!s->more)
      break;
  }
  CU_ASSERT(parts >= 4);
  CU_ASSERT_EQUAL(got, n);
  CU_ASSERT_EQUAL(bad, 0);
  evlog_free(&l);

  /* `info` counts it once; every other format holds it as it can. */
  char *out = NULL;
  CU_ASSERT_EQUAL(tu_run_merge(&out, TC_CLI, "info", tct, NULL), 0);
  CU_ASSERT_PTR_NOT_NULL(strstr(out ? out : "", "syscalls:     "));
  int reads = 0;
  if (out && strstr(out, "syscalls:     "))
    reads = atoi(strstr(out, "syscalls:     ") + 14);
  free(out);
  evlog_free(&l);
  tc_options o;
  tc_options_init(&o);
  o.quiet = 1;
  int devnull = open("/dev/null", O_WRONLY);
  o.stdout_fd = devnull;
  const char *argv[] = {tu_guest("bigmem64"), "read", file, NULL};
  tc_run_result res;
  tc_run_result_init(&res);
  CU_ASSERT_EQUAL(evlog_record(&l, &o, argv, &res, &err), 0);
  close(devnull);
  CU_ASSERT_EQUAL((uint64_t)reads, res.syscalls);
  evlog_free(&l);
  int vst = tu_run_merge(&out, TC_CLI, "verify", "-q", "-f",
                         "tct,trac,tfile,ucir,rvn,bap", "--",
                         tu_guest("bigmem64"), "read", file, NULL);
  CU_ASSERT_EQUAL(vst, 0);
  if (vst != 0)
    fprintf(stderr, "\nverify: %s\n", out ? out : "");
  free(out);
  free(data);
}

/* Outputs never destroy a file that is not a trace: record and convert
 * refuse unless --force, and leave the file as it was. */
static void test_no_clobber(void) {
  char notes[4200], tct[4200], *out = NULL;
  snprintf(notes, sizeof notes, "%s.txt", tu_tmp("notes"));
  snprintf(tct, sizeof tct, "%s.tct", tu_tmp("notes"));
  CU_ASSERT_EQUAL_FATAL(tu_write_file(notes, "my notes\n", 9), 0);
  unlink(tct);
  CU_ASSERT_EQUAL(tu_run_merge(&out, TC_CLI, "record", "-q", "-f", "tct,text",
                               "-o", tu_tmp("notes"), "--", tu_guest("hello64"),
                               NULL),
                  2);
  CU_ASSERT_PTR_NOT_NULL(strstr(out ? out : "", "not a trace file"));
  free(out);
  size_t n = 0;
  uint8_t *kept = tu_read_file(notes, &n);
  CU_ASSERT(kept && n == 9 && memcmp(kept, "my notes\n", 9) == 0);
  free(kept);
  CU_ASSERT_NOT_EQUAL(access(tct, F_OK), 0); /* checked before any output */
  /* A trace may be replaced; a text trace too. */
  CU_ASSERT_EQUAL(tu_run_merge(&out, TC_CLI, "record", "-q", "-f", "tct", "-o",
                               tu_tmp("notes"), "--", tu_guest("hello64"),
                               NULL),
                  0);
  free(out);
  CU_ASSERT_EQUAL(tu_run_merge(&out, TC_CLI, "record", "-q", "-f", "tct", "-o",
                               tu_tmp("notes"), "--", tu_guest("hello64"),
                               NULL),
                  0);
  free(out);
  CU_ASSERT_EQUAL(
      tu_run_merge(&out, TC_CLI, "convert", tct, "--to", "text", notes, NULL),
      2);
  free(out);
  CU_ASSERT_EQUAL(tu_run_merge(&out, TC_CLI, "convert", "--force", tct, "--to",
                               "text", notes, NULL),
                  0);
  free(out);
  kept = tu_read_file(notes, &n);
  CU_ASSERT(kept && n > 20 && memcmp(kept, "# tracecorn trace: ", 19) == 0);
  free(kept);
  CU_ASSERT_EQUAL(
      tu_run_merge(&out, TC_CLI, "convert", tct, "--to", "text", notes, NULL),
      0);
  free(out);
}

/* Runs `record` of glibc64 with a syscall that never returns (a stall
 * inside the engine: TRACECORN_TEST_STALL), sends `sig` (twice if
 * `twice`) once the recording runs, and checks that tracecorn ends with
 * 128+sig and a valid trace that says it was interrupted. */
static void stall_and_signal(const char *label, int sig, int twice) {
  char tct[4200], partial[4200], log[4200];
  snprintf(tct, sizeof tct, "%s.tct", tu_tmp(label));
  snprintf(partial, sizeof partial, "%s.partial.tct", tu_tmp(label));
  snprintf(log, sizeof log, "%s.log", tu_tmp(label));
  unlink(tct);
  unlink(log);
  pid_t pid = fork();
  CU_ASSERT_FATAL(pid >= 0);
  if (pid == 0) {
    int fd = open("/dev/null", O_WRONLY);
    int lfd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(fd, 1);
    dup2(lfd, 2);
    setenv("TRACECORN_TEST_STALL", "write", 1);
    execl(TC_CLI, TC_CLI, "record", "-f", "tct", "-o", tu_tmp(label), "--",
          tu_guest("glibc64"), (char *)NULL);
    _exit(127);
  }
  /* Until the engine is stalled (the hook says so on stderr). */
  for (int i = 0; i < 600; i++) {
    size_t n = 0;
    char *said = (char *)tu_read_file(log, &n);
    int stalled = said && memmem(said, n, "test stall", 10) != NULL;
    free(said);
    if (stalled)
      break;
    usleep(50 * 1000);
  }
  CU_ASSERT_EQUAL(access(partial, F_OK), 0);
  kill(pid, sig);
  if (twice) {
    usleep(100 * 1000);
    kill(pid, sig);
  }
  /* Give the watchdog time (2 s; a loaded machine and a sanitized build
   * take longer to close the files), but not forever. */
  int st = 0, done = 0;
  for (int i = 0; i < 600 && !(done = waitpid(pid, &st, WNOHANG)); i++)
    usleep(100 * 1000);
  if (!done) {
    kill(pid, SIGKILL);
    waitpid(pid, &st, 0);
  }
  CU_ASSERT(done > 0);
  CU_ASSERT(WIFEXITED(st) && WEXITSTATUS(st) == 128 + sig);
  evlog l = {0};
  tc_error err = {{0}};
  CU_ASSERT_EQUAL_FATAL(evlog_read(&l, tct, &err), 0);
  const tc_event *last = l.n ? &l.ev[l.n - 1] : NULL;
  CU_ASSERT(last && last->kind == TC_EV_EXIT &&
            last->u.exit.reason == TC_EXIT_INTERRUPTED &&
            last->u.exit.status == 128 + sig && last->u.exit.message &&
            strstr(last->u.exit.message, "abandoned"));
  CU_ASSERT(evlog_count(&l, TC_EV_INSN) > 1000);
  evlog_free(&l);
  /* strace ends it as strace does a run it stopped following */
  char *out = NULL;
  CU_ASSERT_EQUAL(tu_run_merge(&out, TC_CLI, "strace", tct, NULL), 0);
  size_t n = out ? strlen(out) : 0;
  CU_ASSERT(n >= 20 && strcmp(out + n - 20, "+++ interrupted +++\n") == 0);
  free(out);
}

static void test_watchdog_sigterm(void) {
  stall_and_signal("stall-term", SIGTERM, 0);
}

static void test_watchdog_twice(void) {
  stall_and_signal("stall-int", SIGINT, 1);
}

/* Records hostile64 with the CLI options and arguments (a string each, for
 * the shell); returns the status and the guest's output in *out. */
static int hostile(const char *label, const char *options, const char *args,
                   char **out) {
  char cmd[16384];
  snprintf(cmd, sizeof cmd, "cd %s && %s record -q -f tct %s -o %s -- %s %s",
           tu_tmpdir(), TC_CLI, options, tu_tmp(label), tu_guest("hostile64"),
           args);
  return tu_run(cmd, out, 1);
}

/* Issue 38: --max-insns counts every process. A loop of forks (in every
 * child too) ended only when all processes had run N instructions (before:
 * still running after 400 s with --max-insns 3000000). Each process's
 * trace ends with the MAX_INSNS exit, and all of them hold N at most. */
static void test_budget_insns(void) {
  char *out = NULL;
  CU_ASSERT_EQUAL(hostile("budget", "--max-insns 200000", "forkloop", &out),
                  124);
  free(out);
  char pattern[4200];
  snprintf(pattern, sizeof pattern, "%s*.tct", tu_tmp("budget"));
  glob_t g;
  CU_ASSERT_EQUAL_FATAL(glob(pattern, 0, NULL, &g), 0);
  CU_ASSERT(g.gl_pathc > 1); /* it did fork */
  uint64_t total = 0;
  size_t at_limit = 0;
  for (size_t i = 0; i < g.gl_pathc; i++) {
    evlog l = {0};
    tc_error err = {{0}};
    CU_ASSERT_EQUAL_FATAL(evlog_read(&l, g.gl_pathv[i], &err), 0);
    for (size_t k = 0; k < l.n; k++)
      if (l.ev[k].kind == TC_EV_EXIT) {
        total += l.ev[k].u.exit.insn_count;
        at_limit += l.ev[k].u.exit.reason == TC_EXIT_MAX_INSNS;
      }
    evlog_free(&l);
  }
  CU_ASSERT(total <= 200000);
  CU_ASSERT(total > 190000);
  CU_ASSERT_EQUAL(at_limit, g.gl_pathc);
  globfree(&g);
}

/* --max-memory is one budget for every process: five children of 900 MiB
 * alive at once under 1G (before: each had 1G of its own, 4.67 GB RSS). */
static void test_budget_memory(void) {
  char *out = NULL;
  CU_ASSERT_EQUAL(hostile("budget-mem", "--max-memory 1G", "mem 5 900", &out),
                  0);
  CU_ASSERT(out && strstr(out, "1 of 5 children mapped 900 MiB\n"));
  free(out);
  /* within the budget, as natively */
  CU_ASSERT_EQUAL(hostile("budget-mem2", "--max-memory 1G", "mem 5 100", &out),
                  0);
  CU_ASSERT(out && strstr(out, "5 of 5 children mapped 100 MiB\n"));
  free(out);
}

/* Thousands of maps of alternating protections tripped an assertion in
 * Unicorn's QEMU (phys_section_add: exit 134): past 1024 regions map,
 * mprotect and munmap fail with ENOMEM, as past vm.max_map_count. Below
 * it, the same calls succeed as natively. */
static void test_many_maps(void) {
  char *out = NULL;
  CU_ASSERT_EQUAL(hostile("maps-many", "", "maps 3000", &out), 0);
  CU_ASSERT(out && strstr(out, "(ENOMEM)\n") && !strstr(out, "mmap: 0 of"));
  if (!out || !strstr(out, "(ENOMEM)"))
    fprintf(stderr, "\n%s\n", out ? out : "");
  free(out);
  tu_check_reference(TU_REF_AUTO, "hostile64", "maps 300");
}

/* --max-procs: forks past the recording's count fail with EAGAIN. */
static void test_max_procs(void) {
  char *out = NULL;
  CU_ASSERT_EQUAL(hostile("procs", "--max-procs 8", "forks 20", &out), 0);
  CU_ASSERT(out && strstr(out, "8 of 20 forks succeeded\n"));
  free(out);
  tu_check_reference(TU_REF_AUTO, "hostile64", "forks 20");
}

int main(void) {
  static const tu_case cases[] = {
      {"--max-insns: one budget for every process (fork loop)",
       test_budget_insns},
      {"--max-memory: one budget for every process", test_budget_memory},
      {"past 1024 maps: ENOMEM, no engine abort", test_many_maps},
      {"--max-procs: forks past it fail", test_max_procs},
      {"1 GiB bss: reference output, bounded MAP events", test_big_bss},
      {"large read(2): SYSCALL parts hold every byte", test_big_read_parts},
      {"no existing non-trace file is overwritten without --force",
       test_no_clobber},
      {"SIGTERM during an engine stall: watchdog, valid trace, 143",
       test_watchdog_sigterm},
      {"Ctrl-C twice during an engine stall: valid trace, 130",
       test_watchdog_twice},
      {NULL, NULL}};
  return tu_run_suite("limits", cases);
}
