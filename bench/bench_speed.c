/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Recording speed against the engine, side by side on the same guest.
 *
 * For each guest (PROGRAM [ARGS...]) every row runs in a forked child (so
 * each has its own peak RSS), rows interleaved, ROUNDS times; the table
 * gives medians. Ratios are to "unicorn+code" (an empty UC_HOOK_CODE)
 * of the same round, then the median: on a shared machine the absolute
 * figures move, ratios measured side by side much less.
 *
 * Rows:
 *   unicorn            the engine with tracecorn's Linux layer only
 *                      (syscall/cpuid/interrupt hooks: they fire at those
 *                      instructions only), no per-instruction hook
 *   unicorn+code       plus an empty UC_HOOK_CODE on all addresses
 *   unicorn+code+mem   plus empty UC_HOOK_MEM_READ and UC_HOOK_MEM_WRITE
 *   recorder           tracecorn's recorder (registers + memory) into a
 *                      sink that drops the events
 *   FORMAT             the recorder into that writer (a temporary file)
 * insn/s uses the instruction count the recorder reports (identical for
 * every row: recordings are deterministic). "CPU s" is the row's user +
 * system time over all its threads (the tct compressor is one): on a
 * busy machine it says what a row costs better than wall time. After each
 * table, its rows' differences split an instruction's time into the
 * layers (print_split): where the time goes, against the 50 ns that
 * 20 M insn/s leaves.
 *
 * Usage:
 *   bench_speed [-r ROUNDS] [-f FMT,FMT...] [-O FMT.KEY=VALUE]...
 *               [--no-memory] -- PROGRAM [ARGS...] [-- PROGRAM [ARGS...]]...
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <tracecorn/tracecorn.h>

#include "emu/engine/emu.h"
#include "emu/linux/linux_sys.h"
#include "lib/session_internal.h"
#include "loaders/loader.h"
#include "tools/debug_env.h"
#include "writers/format.h"

/* ROW_RUN: record -j N's run phase alone (TRACECORN_PAR_RUN_ONLY);
 * ROW_JOBS: tct with record -j N (bench/parallel.sh). */
enum {
  ROW_BARE,
  ROW_CODE,
  ROW_CODE_MEM,
  ROW_RECORDER,
  ROW_WRITER,
  ROW_RUN,
  ROW_JOBS
};
static int jobs; /* -j N */

typedef struct row {
  const char *label;
  int kind;
  const tc_format *fmt;
} row;

typedef struct sample {
  double seconds;
  double cpu; /* user + system seconds of the row, all its threads */
  uint64_t insns;
  uint64_t bytes;
  long rss_kb;
  int ok;
} sample;

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + t.tv_nsec / 1e9;
}

static double cpu_now(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
         (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
}

static void empty_code(uc_engine *uc, uint64_t a, uint32_t s, void *u) {
  (void)uc, (void)a, (void)s, (void)u;
}

static void empty_mem(uc_engine *uc, uc_mem_type t, uint64_t a, int s,
                      int64_t v, void *u) {
  (void)uc, (void)t, (void)a, (void)s, (void)v, (void)u;
}

static uint8_t *slurp(const char *path, size_t *n) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return NULL;
  fseek(f, 0, SEEK_END);
  long len = ftell(f);
  fseek(f, 0, SEEK_SET);
  uint8_t *d = len > 0 ? malloc((size_t)len) : NULL;
  if (d && fread(d, 1, (size_t)len, f) != (size_t)len) {
    free(d);
    d = NULL;
  }
  fclose(f);
  *n = (size_t)len;
  return d;
}

/* The engine alone, with tracecorn's loader and Linux layer. */
static int run_engine(int kind, char **argv, sample *out) {
  tc_error err = {{0}};
  size_t size;
  uint8_t *data = slurp(argv[0], &size);
  tc_elf_image img;
  if (!data || tc_elf_parse(data, size, &img, &err) < 0) {
    fprintf(stderr, "bench_speed: %s: %s\n", argv[0],
            data ? err.msg : strerror(errno));
    return -1;
  }
  tc_options o;
  tc_options_init(&o);
  tc_options_from_env(&o); /* TRACECORN_* */
  o.quiet = 1;
  o.stdout_fd = open("/dev/null", O_WRONLY);
  o.keyframe_interval = 4096;
  o.stack_size = 8u << 20;
  tc_emu *emu = tc_linux_emu_new(img.arch, &o, &err);
  if (emu)
    emu->debug = tc_debug_from_env(); /* as a session would set it */
  if (emu && !realpath(argv[0], emu->exe_host_path))
    snprintf(emu->exe_host_path, sizeof emu->exe_host_path, "%s", argv[0]);
  tc_load_result lr;
  if (!emu ||
      tc_load_elf(emu, &img, data, size, argv[0], (const char *const *)argv,
                  NULL, &lr, &err) < 0 ||
      tc_linux_process_init(emu) < 0) {
    fprintf(stderr, "bench_speed: %s: %s\n", argv[0], err.msg);
    return -1;
  }
  /* /proc/self/exe, absolute, as tc_session_load_elf sets it */
  snprintf(emu->exe_guest_path, sizeof emu->exe_guest_path, "%s",
           emu->exe_host_path);
  uc_hook h;
  if (kind >= ROW_CODE)
    uc_hook_add(emu->uc, &h, UC_HOOK_CODE, (void *)empty_code, NULL, 1, 0);
  if (kind >= ROW_CODE_MEM) {
    uc_hook_add(emu->uc, &h, UC_HOOK_MEM_READ, (void *)empty_mem, NULL, 1, 0);
    uc_hook_add(emu->uc, &h, UC_HOOK_MEM_WRITE, (void *)empty_mem, NULL, 1, 0);
  }
  uint64_t until = emu->arch->ptr_size == 8 ? UINT64_MAX : 0xffffffffull;
  out->cpu = cpu_now();
  double t0 = now();
  for (int spins = 0; !emu->exited && !emu->faulted && spins < 1000000;
       spins++) {
    uc_err e = uc_emu_start(emu->uc, tc_emu_resume_pc(emu), until, 0, 0);
    if (emu->exited || emu->faulted)
      break;
    if (emu->resched) {
      if (tc_emu_schedule(emu, &err) < 0)
        break;
      continue;
    }
    if (e != UC_ERR_OK) {
      fprintf(stderr, "bench_speed: %s: %s\n", argv[0], uc_strerror(e));
      return -1;
    }
  }
  out->seconds = now() - t0;
  out->ok = emu->exited && !emu->exit_signal;
  return 0;
}

static int drop_event(void *ctx, const tc_event *ev, tc_error *err) {
  (void)ctx, (void)ev, (void)err;
  return 0;
}

static const char *writer_opts[16];
static int nwriter_opts;

static int run_session(const row *rw, char **argv, int memory, const char *dir,
                       sample *out) {
  tc_options o;
  tc_options_init(&o);
  tc_options_from_env(&o); /* TRACECORN_* */
  o.writer_options = writer_opts;
  o.quiet = 1;
  o.record_memory = memory;
  o.stdout_fd = open("/dev/null", O_WRONLY);
  tc_error err = {{0}};
  tc_session *s = tc_session_new(&o, &err);
  tc_debug_options dbg = tc_debug_from_env();
  if (rw->kind == ROW_RUN)
    dbg.par_run_only = 1;
  if (s)
    tc_session_set_debug(s, &dbg);
  if (s && (rw->kind == ROW_RUN || rw->kind == ROW_JOBS))
    tc_session_set_jobs(s, jobs);
  char path[4096] = "";
  if (!s || tc_session_load_elf(s, argv[0], (const char *const *)argv, &err)) {
    fprintf(stderr, "bench_speed: %s\n", err.msg);
    return -1;
  }
  int rc;
  if (rw->kind == ROW_RECORDER) {
    rc = tc_session_add_sink(s, drop_event, NULL, &err);
  } else {
    const tc_trace_info *info = tc_session_info(s);
    snprintf(path, sizeof path, "%s/out%s", dir,
             rw->fmt->extension ? rw->fmt->extension(info->arch) : "");
    rc = tc_session_add_writer(s, rw->fmt, path, &err);
  }
  if (rc < 0) {
    fprintf(stderr, "bench_speed: %s\n", err.msg);
    return -1;
  }
  tc_run_result res;
  tc_run_result_init(&res);
  out->cpu = cpu_now();
  double t0 = now();
  if (tc_session_run(s, &res, &err)) {
    fprintf(stderr, "bench_speed: %s\n", err.msg);
    return -1;
  }
  out->seconds = now() - t0;
  out->insns = res.insns;
  out->ok = res.reason == TC_EXIT_EXITED && res.status == 0;
  if (path[0])
    out->bytes = tc_output_size(path);
  tc_session_free(s);
  return 0;
}

/* One row in a child process: its own address space, its own peak RSS. */
static int run_row(const row *rw, char **argv, int memory, sample *out) {
  int fd[2];
  if (pipe(fd) < 0)
    return -1;
  fflush(NULL);
  pid_t pid = fork();
  if (pid < 0)
    return -1;
  if (pid == 0) {
    close(fd[0]);
    sample smp = {0};
    char dir[] = "/tmp/bench_speed.XXXXXX";
    if (!mkdtemp(dir))
      _exit(1);
    int rc = rw->kind < ROW_RECORDER ? run_engine(rw->kind, argv, &smp)
                                     : run_session(rw, argv, memory, dir, &smp);
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
      rc = -1;
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    smp.rss_kb = ru.ru_maxrss;
    smp.cpu = (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
              (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6 - smp.cpu;
    /* record -j's segments run in child processes */
    getrusage(RUSAGE_CHILDREN, &ru);
    smp.cpu += (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
               (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
    if (rc == 0 && write(fd[1], &smp, sizeof smp) != (ssize_t)sizeof smp)
      rc = -1;
    _exit(rc == 0 ? 0 : 1);
  }
  close(fd[1]);
  ssize_t n = read(fd[0], out, sizeof *out);
  close(fd[0]);
  int st;
  waitpid(pid, &st, 0);
  return n == (ssize_t)sizeof *out && WIFEXITED(st) && WEXITSTATUS(st) == 0
             ? 0
             : -1;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

#define MAX_ROWS 16
#define MAX_ROUNDS 15

/* Where an instruction's time goes, from the rows' medians: each row
 * adds one layer to the one before it, so the differences are what each
 * layer adds to the wall time; a writer's CPU beyond its wall time ran
 * on other threads (tct's zstd, the writer threads). At 20 M insn/s an
 * instruction has 50 ns in all. */
static void print_split(const row *rows, int nrows, const double *wall,
                        const double *cpu, uint64_t insns) {
  for (int k = 0; k <= ROW_RECORDER; k++)
    if (wall[k] <= 0) /* a row failed: no differences to take */
      return;
  if (!insns)
    return;
  double ns = 1e9 / (double)insns;
  printf("\nns per instruction (20 M insn/s leaves 50): engine %.1f, code "
         "hook +%.1f, memory hooks +%.1f, recorder +%.1f = %.1f into a null "
         "sink\n",
         wall[ROW_BARE] * ns, (wall[ROW_CODE] - wall[ROW_BARE]) * ns,
         (wall[ROW_CODE_MEM] - wall[ROW_CODE]) * ns,
         (wall[ROW_RECORDER] - wall[ROW_CODE_MEM]) * ns,
         wall[ROW_RECORDER] * ns);
  for (int k = ROW_WRITER; k < nrows; k++) {
    if (rows[k].kind != ROW_WRITER)
      continue;
    printf("  %s: +%.1f wall", rows[k].label,
           (wall[k] - wall[ROW_RECORDER]) * ns);
    if (cpu[k] > wall[k] * 1.02)
      printf(", and %.1f of CPU on other threads", (cpu[k] - wall[k]) * ns);
    printf("\n");
  }
}

static void usage(void) {
  fprintf(stderr, "usage: bench_speed [-r ROUNDS] [-f FMT,FMT...] "
                  "[-O FMT.KEY=VALUE]... [--no-memory] [-j N] -- PROGRAM "
                  "[ARGS...] [-- PROGRAM ...]\n"
                  "  -j N: also the rows \"run phase\" (record -j's run "
                  "alone) and \"tct -j N\"\n");
  exit(2);
}

int main(int argc, char **argv) {
  int rounds = 3, memory = 1;
  const char *formats = "tct,trac,tfile,ucir,bap,rvn";
  int i = 1;
  for (; i < argc && strcmp(argv[i], "--") != 0; i++) {
    if (strcmp(argv[i], "-r") == 0 && i + 1 < argc)
      rounds = atoi(argv[++i]);
    else if (strcmp(argv[i], "-f") == 0 && i + 1 < argc)
      formats = argv[++i];
    else if (strcmp(argv[i], "-O") == 0 && i + 1 < argc && nwriter_opts < 15)
      writer_opts[nwriter_opts++] = argv[++i];
    else if (strcmp(argv[i], "--no-memory") == 0)
      memory = 0;
    else if (strcmp(argv[i], "-j") == 0 && i + 1 < argc)
      jobs = atoi(argv[++i]);
    else
      usage();
  }
  if (i >= argc || rounds < 1 || rounds > MAX_ROUNDS)
    usage();

  /* rows[k].kind == k for the first four (print_split takes them so) */
  row rows[MAX_ROWS] = {{"unicorn", ROW_BARE, NULL},
                        {"unicorn+code", ROW_CODE, NULL},
                        {"unicorn+code+mem", ROW_CODE_MEM, NULL},
                        {"recorder (null sink)", ROW_RECORDER, NULL}};
  int nrows = 4;
  char fl[256];
  snprintf(fl, sizeof fl, "%s", formats);
  for (char *tok = strtok(fl, ","); tok && nrows < MAX_ROWS;
       tok = strtok(NULL, ",")) {
    const tc_format *f = tc_format_by_name(tok);
    if (!f || !f->open_writer) {
      fprintf(stderr, "bench_speed: %s: no such writer\n", tok);
      return 2;
    }
    rows[nrows++] = (row){f->name, ROW_WRITER, f};
  }
  static char jlabel[32];
  int run_row_k = -1, jobs_row_k = -1, tct_row_k = -1;
  for (int k = 0; k < nrows; k++)
    if (rows[k].fmt && strcmp(rows[k].fmt->name, "tct") == 0)
      tct_row_k = k;
  if (jobs > 1 && nrows + 2 <= MAX_ROWS) {
    const tc_format *tct = tc_format_by_name("tct");
    snprintf(jlabel, sizeof jlabel, "tct -j %d", jobs);
    run_row_k = nrows;
    rows[nrows++] = (row){"run phase (-j)", ROW_RUN, tct};
    jobs_row_k = nrows;
    rows[nrows++] = (row){jlabel, ROW_JOBS, tct};
  }

  int failed = 0;
  while (i < argc) {
    char **prog = &argv[++i];
    int n = 0;
    while (i < argc && strcmp(argv[i], "--") != 0)
      i++, n++;
    if (n == 0)
      usage();
    char *saved = argv[i < argc ? i : argc - 1];
    if (i < argc)
      argv[i] = NULL; /* the guest's argv ends here */
    printf("\n##");
    for (int k = 0; k < n; k++)
      printf(" %s", k == 0 && strrchr(prog[k], '/') ? strrchr(prog[k], '/') + 1
                                                    : prog[k]);
    printf("%s\n", memory ? "" : " (registers only)");
    static sample smp[MAX_ROUNDS][MAX_ROWS];
    uint64_t insns = 0;
    for (int rd = 0; rd < rounds; rd++)
      for (int k = 0; k < nrows; k++) {
        if (run_row(&rows[k], prog, memory, &smp[rd][k]) < 0 ||
            !smp[rd][k].ok) {
          fprintf(stderr, "bench_speed: %s: row %s failed\n", prog[0],
                  rows[k].label);
          failed = 1;
          smp[rd][k].seconds = 0;
        }
        if (smp[rd][k].insns)
          insns = smp[rd][k].insns;
      }
    printf("%llu instructions, median of %d rounds\n\n",
           (unsigned long long)insns, rounds);
    printf("| %-20s | %9s | %10s | %8s | %8s | %8s | %8s |\n", "row", "seconds",
           "M insn/s", "ratio", "CPU s", "B/insn", "RSS MB");
    printf("|%s|%s|%s|%s|%s|%s|%s|\n", "----------------------",
           "----------:", "-----------:", "---------:", "---------:",
           "---------:", "---------:");
    double wall[MAX_ROWS], cpus[MAX_ROWS];
    for (int k = 0; k < nrows; k++) {
      double secs[MAX_ROUNDS], ratio[MAX_ROUNDS], rss[MAX_ROUNDS],
          bytes[MAX_ROUNDS], cpu[MAX_ROUNDS];
      for (int rd = 0; rd < rounds; rd++) {
        secs[rd] = smp[rd][k].seconds;
        ratio[rd] = secs[rd] > 0 ? smp[rd][ROW_CODE].seconds / secs[rd] : 0;
        rss[rd] = (double)smp[rd][k].rss_kb / 1024.0;
        bytes[rd] = (double)smp[rd][k].bytes;
        cpu[rd] = smp[rd][k].cpu;
      }
      double t = median(secs, rounds);
      printf("| %-20s | %9.3f | %10.2f | %8.3f | %8.3f | ", rows[k].label, t,
             t > 0 ? (double)insns / t / 1e6 : 0, median(ratio, rounds),
             median(cpu, rounds));
      if (rows[k].kind == ROW_WRITER || rows[k].kind == ROW_JOBS)
        printf("%8.2f | ", insns ? median(bytes, rounds) / (double)insns : 0);
      else
        printf("%8s | ", "-");
      printf("%8.0f |\n", median(rss, rounds));
      wall[k] = t;
      cpus[k] = median(cpu, rounds);
    }
    print_split(rows, nrows, wall, cpus, insns);
    if (run_row_k >= 0 && wall[run_row_k] > 0)
      printf("  record -j: the run phase runs at %.0f %% of the engine's speed "
             "(unicorn, no per-instruction hook)\n",
             100.0 * wall[ROW_BARE] / wall[run_row_k]);
    if (jobs_row_k >= 0 && tct_row_k >= 0 && wall[jobs_row_k] > 0)
      printf("  record -j: tct -j %d takes %.2f x less wall time than tct "
             "(-j 1), %.2f x its CPU\n",
             jobs, wall[tct_row_k] / wall[jobs_row_k],
             cpus[tct_row_k] > 0 ? cpus[jobs_row_k] / cpus[tct_row_k] : 0);
    fflush(stdout);
    if (i < argc)
      argv[i] = saved;
  }
  return failed;
}
