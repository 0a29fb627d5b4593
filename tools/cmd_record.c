/* SPDX-License-Identifier: GPL-2.0-or-later */
/* tracecorn record: runs a program under the library and writes its
 * traces; Ctrl-C, the watchdog and the progress line. */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "common/read_whole.h"
#include "lib/session_internal.h"
#include "tools/cli.h"
#include "tools/debug_env.h"
#include "writers/format.h"

static tc_session *g_session;
/* The formats the last `record` could not open an output for (it said
 * why): `verify` does not look for their files. */
const tc_format *g_refused[MAX_FORMATS];
int g_nrefused;

/* Ctrl-C / SIGTERM: stop after the current instruction, status 128+sig.
 * A watchdog alarm follows: if the engine has not returned 2 s later (a
 * stall inside Unicorn, a blocked host call), the run is abandoned where
 * it is and every trace is closed validly; a second signal does the same
 * at once. */
static volatile sig_atomic_t g_stopping;

static void on_sigint(int sig) {
  if (!g_session)
    return;
  if (g_stopping) {
    tc_session_escape(g_session);
    return;
  }
  g_stopping = 1;
  tc_session_interrupt(g_session, sig);
  alarm(2);
}

static void on_watchdog(int sig) {
  (void)sig;
  if (g_session && tc_session_escape(g_session) < 0)
    alarm(1); /* busy writing an event: it will see the stop itself */
}

void usage_record(FILE *f) {
  fprintf(f,
          "usage: tracecorn record [options] -- PROGRAM [ARGS...]\n"
          "       tracecorn record --raw FILE --arch ARCH --base ADDR "
          "[--entry ADDR] [options]\n"
          "\n"
          "Runs a Linux program (x86-64, i386, arm, arm64, mips, mipsel ELF; "
          "static,\n"
          "static-pie or dynamically linked, its libraries loaded by its own "
          "ld.so from\n"
          "the guest's root; sparc64: freestanding) under Unicorn and records "
          "every\n"
          "instruction. The guest's stdin/stdout/stderr are passed through; "
          "tracecorn\n"
          "exits with the guest's exit status (128+N if a signal N killed it, "
          "124 at\n"
          "--max-insns, 130 on Ctrl-C, 143 on SIGTERM).\n"
          "\n"
          "Output:\n"
          "  -o, --output PREFIX   output name without extension (default: "
          "the program's\n"
          "                        base name in the current directory); "
          "`-o x.tct`\n"
          "                        and `-o x.tct.zst` name the file itself; a "
          "forked\n"
          "                        child process goes to PREFIX.PID.EXT; a "
          "stream\n"
          "                        (/dev/fd/3, a FIFO) takes the one trace "
          "itself\n"
          "  -f, --format LIST     comma-separated formats (default: tct); "
          "`all`: every\n"
          "                        format the arch can hold, `readable`: those "
          "with a\n"
          "                        reader too; see `tracecorn formats`\n"
          "  -z, --zst             compress every output with zstd: "
          "NAME.EXT.zst\n"
          "                        (read back by every command; zstd "
          "decompresses\n"
          "                        them to the plain files; not for rvn, a "
          "directory)\n"
          "      --force           replace existing files that are not "
          "traces, a\n"
          "                        child's PREFIX.PID.EXT too (each output is "
          "written\n"
          "                        as NAME.partial.EXT and renamed when "
          "complete; a\n"
          "                        failed one stays there)\n"
          "  -q, --quiet           no summary and no notices on stderr\n"
          "\n"
          "Guest:\n"
          "      --seed N          seed for AT_RANDOM and getrandom "
          "(default 0)\n"
          "  -E, --env K=V         add an environment variable (repeatable; "
          "default: empty env)\n"
          "      --inherit-env     start from tracecorn's own environment\n"
          "      --root DIR        guest filesystem root: every path, symlink "
          "and \"..\" is\n"
          "                        resolved inside DIR (default: the host's /, "
          "read and\n"
          "                        written with your permissions; untrusted "
          "programs\n"
          "                        need --root). /proc shows no host process "
          "either way;\n"
          "                        see docs/sandbox.md\n"
          "      --cwd DIR         guest working directory (a guest path; "
          "default: / with\n"
          "                        --root, else tracecorn's own)\n"
          "      --host-stat       pass host stat results through (default: "
          "atime = mtime,\n"
          "                        fixed st_dev, st_ino from the path, fixed "
          "statfs\n"
          "                        sizes and counts, so traces are "
          "reproducible)\n"
          "\n"
          "Raw code:\n"
          "      --raw FILE        record a raw code blob instead of an ELF\n"
          "      --arch ARCH       x86_64, x86, arm, arm64, mips, mipsel, "
          "mips64el,\n"
          "                        sparc64 (aliases: amd64, i386, armhf, "
          "aarch64...)\n"
          "      --base ADDR       load address of the blob\n"
          "      --entry ADDR      first instruction (default: --base)\n"
          "\n"
          "Recording:\n"
          "      --max-insns N     stop after N instructions (all "
          "processes together)\n"
          "      --max-memory SIZE guest address-space cap for all "
          "processes together\n"
          "                        (default 4G); maps past it fail with "
          "ENOMEM\n"
          "      --max-procs N     processes the guest may create "
          "(default 4096); forks\n"
          "                        past it fail with EAGAIN\n"
          "      --no-memory       do not record memory accesses (faster)\n"
          "      --exact           read every register after every "
          "instruction (slow;\n"
          "                        must give the same trace)\n"
          "      --trace-range R   record only instructions in R: A-B (hex), "
          "NAME (a\n"
          "                        function of the program or any library "
          "it loads),\n"
          "                        MODULE:NAME (libc.so.6:malloc) or MODULE "
          "(libc);\n"
          "                        repeatable; the whole program still "
          "runs\n"
          "      --trace-func F    record only while F (a name as above or "
          "0xADDR) runs,\n"
          "                        from its call to its return, callees "
          "included\n"
          "  -O, --writer-option FORMAT.KEY=VALUE\n"
          "                        a format's writer option (repeatable); "
          "unknown keys\n"
          "                        are refused by that format's writer\n"
          "      --ucir-layout L   same as -O ucir.layout=L (usercorn or "
          "spec)\n"
          "      --cache-every N   same as -O rvn.cache-every=N\n"
          "      --keyframe N      full-state keyframe every N instructions "
          "(default 4096)\n"
          "      --sched-quantum N guest threads and processes: instructions "
          "one runs\n"
          "                        before the next one's turn (default 10000; "
          "also at\n"
          "                        blocking waits, yields and exits)\n"
          "      --no-follow       do not follow execve: a call that would "
          "succeed ends\n"
          "                        the recording there (with a notice; "
          "status 0); calls\n"
          "                        that fail still return their error\n"
          "      --tty             the program's standard streams that are "
          "terminals\n"
          "                        answer as terminals (window size, modes; "
          "x86, arm,\n"
          "                        arm64); without it the program sees no "
          "terminal\n"
          "  -j, --jobs N          record on N cores (default 1): the program "
          "runs once\n"
          "                        at the engine's speed and N processes "
          "record its\n"
          "                        segments (one per tct chunk) from the "
          "run's log into\n"
          "                        tct, the other formats converted from it: "
          "the same\n"
          "                        files as -j 1. Covers one thread and one "
          "process\n"
          "                        (signal handlers included; not mips64el),"
          "\n"
          "                        files only (no stream, no -z); anything "
          "else is refused\n"
          "      --log-only        run the program once at the engine's speed "
          "and write\n"
          "                        only its log (PREFIX.tclog: what every "
          "syscall did);\n"
          "                        `tracecorn materialize` writes its trace "
          "later\n"
          "                        (docs/speed.md)\n");
}

/* Progress on a terminal: a line on stderr redrawn four times a second
 * (instructions, rate, bytes written, elapsed), cleared at the end, so
 * the final summary line stands alone. Runs on its own thread, with every
 * signal blocked (Ctrl-C and the watchdog belong to the recording). */
typedef struct progress {
  tc_session *s;
  pthread_t thread;
  volatile int done;
  struct timespec start;
} progress;

double elapsed_since(const struct timespec *t0) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)(t.tv_sec - t0->tv_sec) +
         (double)(t.tv_nsec - t0->tv_nsec) / 1e9;
}

/* The library's notices while the progress line shows: the line is
 * cleared first, so a notice stands on a line of its own (the next tick
 * draws the progress again below it). */
static pthread_mutex_t progress_lock = PTHREAD_MUTEX_INITIALIZER;
static bool progress_drawn;

/* A checkpoint forked (record -j N) while the progress thread draws gets
 * the lock free. */
static void progress_before_fork(void) { pthread_mutex_lock(&progress_lock); }
static void progress_after_fork(void) { pthread_mutex_unlock(&progress_lock); }

static void notice_beside_progress(const char *line, void *user) {
  (void)user;
  pthread_mutex_lock(&progress_lock);
  if (progress_drawn)
    fputs("\r\033[K", stderr);
  progress_drawn = false;
  fprintf(stderr, "tracecorn: %s\n", line);
  pthread_mutex_unlock(&progress_lock);
}

static void *progress_loop(void *arg) {
  progress *p = arg;
  while (!__atomic_load_n(&p->done, __ATOMIC_ACQUIRE)) {
    struct timespec nap = {0, 250 * 1000 * 1000};
    nanosleep(&nap, NULL);
    if (__atomic_load_n(&p->done, __ATOMIC_ACQUIRE))
      break;
    double secs = elapsed_since(&p->start);
    uint64_t n = tc_session_progress(p->s);
    char sz[32];
    human_size(tc_session_output_bytes(p->s), sz, sizeof sz);
    pthread_mutex_lock(&progress_lock);
    fprintf(stderr,
            "\rtracecorn: %.1fM instructions, %.2fM insn/s, %s written, "
            "%.1f s\033[K",
            (double)n / 1e6, secs > 0 ? (double)n / secs / 1e6 : 0.0, sz, secs);
    progress_drawn = true;
    pthread_mutex_unlock(&progress_lock);
  }
  pthread_mutex_lock(&progress_lock);
  fputs("\r\033[K", stderr);
  progress_drawn = false;
  pthread_mutex_unlock(&progress_lock);
  return NULL;
}

static int progress_start(progress *p, tc_session *s) {
  p->s = s;
  p->done = 0;
  clock_gettime(CLOCK_MONOTONIC, &p->start);
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  int rc = pthread_create(&p->thread, NULL, progress_loop, p);
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  static bool atfork_set;
  if (rc == 0 && !atfork_set)
    atfork_set = pthread_atfork(progress_before_fork, progress_after_fork,
                                progress_after_fork) == 0;
  if (rc == 0)
    tc_set_notice_handler(notice_beside_progress, NULL);
  return rc == 0 ? 0 : -1;
}

static void progress_stop(progress *p) {
  __atomic_store_n(&p->done, 1, __ATOMIC_RELEASE);
  pthread_join(p->thread, NULL);
  tc_set_notice_handler(NULL, NULL);
}

/* Everything `record` was told, parsed. */
enum { MAX_WOPTS = 32 };

typedef struct record_args {
  tc_options opt;
  tc_debug_options debug; /* from TRACECORN_* (tools/debug_env.h) */
  const char *prefix, *formats, *raw;
  uint64_t base, entry;
  bool have_base, have_entry, inherit_env, force, zst;
  int jobs;      /* -j N */
  bool log_only; /* --log-only */
  const char *env[MAX_ENV + 1];
  int nenv;
  /* Writer options, "FORMAT.KEY=VALUE"; the aliases are kept in walias so
   * the pointers stay valid through the run. */
  const char *wopts[MAX_WOPTS + 1];
  char walias[2][256];
  int nwopts;
  const char *tranges[17], *tfuncs[17];
  int ntranges, ntfuncs;
  char **prog_argv;
  int prog_argc;
  char defprefix[PATH_MAX];
} record_args;

/* The outputs opened: their paths and extensions. */
typedef struct record_outputs {
  char paths[MAX_FORMATS][PATH_MAX];
  const char *exts[MAX_FORMATS];
  int npaths;
  bool stream;
} record_outputs;

/* Parses the options into *a: -1 to go on, else the exit status (0 for
 * --help, 2 for a usage error). */
static int parse_record_args(int argc, char **argv, record_args *a) {
  static const struct option longopts[] = {
      {"output", required_argument, 0, 'o'},
      {"format", required_argument, 0, 'f'},
      {"quiet", no_argument, 0, 'q'},
      {"env", required_argument, 0, 'E'},
      {"seed", required_argument, 0, 1},
      {"inherit-env", no_argument, 0, 2},
      {"root", required_argument, 0, 3},
      {"cwd", required_argument, 0, 4},
      {"raw", required_argument, 0, 5},
      {"arch", required_argument, 0, 6},
      {"base", required_argument, 0, 7},
      {"entry", required_argument, 0, 8},
      {"max-insns", required_argument, 0, 9},
      {"no-memory", no_argument, 0, 10},
      {"exact", no_argument, 0, 11},
      {"keyframe", required_argument, 0, 12},
      {"sched-quantum", required_argument, 0, 20},
      {"no-follow", no_argument, 0, 21},
      {"tty", no_argument, 0, 23},
      {"writer-option", required_argument, 0, 'O'},
      {"host-stat", no_argument, 0, 15},
      {"max-memory", required_argument, 0, 16},
      {"max-procs", required_argument, 0, 22},
      {"force", no_argument, 0, 17},
      {"zst", no_argument, 0, 'z'},
      {"trace-range", required_argument, 0, 18},
      {"trace-func", required_argument, 0, 19},
      {"ucir-layout", required_argument, 0, 13},
      {"cache-every", required_argument, 0, 14},
      {"jobs", required_argument, 0, 'j'},
      {"log-only", no_argument, 0, 24},
      {"help", no_argument, 0, 'h'},
      {0, 0, 0, 0}};
  tc_options_init(&a->opt);
  /* TRACECORN_REGFILE and the other speed-path switches (man page) */
  tc_options_from_env(&a->opt);
  a->debug = tc_debug_from_env();
  a->formats = "tct";
  int c;
  optind = 1;
  while ((c = getopt_long(argc, argv, "+o:f:qzE:O:j:h", longopts, NULL)) !=
         -1) {
    if ((c == 'O' || c == 13 || c == 14) && a->nwopts == MAX_WOPTS) {
      fprintf(stderr, "tracecorn: too many writer options (at most %d)\n",
              MAX_WOPTS);
      return 2;
    }
    switch (c) {
    case 'O':
      if (!strchr(optarg, '.') || !strchr(optarg, '=')) {
        fprintf(stderr,
                "tracecorn: -O takes FORMAT.KEY=VALUE (e.g. ucir.layout=spec)"
                "\n");
        return 2;
      }
      a->wopts[a->nwopts++] = optarg;
      break;
    case 15:
      a->opt.host_stat = 1;
      break;
    case 17:
      a->force = true;
      a->opt.force = 1;
      break;
    case 'z':
      a->zst = true;
      break;
    case 18:
    case 19:
      if ((c == 18 ? a->ntranges : a->ntfuncs) == 16) {
        fprintf(stderr, "tracecorn: at most 16 --%s\n",
                c == 18 ? "trace-range" : "trace-func");
        return 2;
      }
      if (c == 18)
        a->tranges[a->ntranges++] = optarg;
      else
        a->tfuncs[a->ntfuncs++] = optarg;
      break;
    case 16:
      if (parse_size(optarg, &a->opt.max_memory) < 0) {
        fprintf(stderr,
                "tracecorn: --max-memory: not a size (e.g. 512M, 8G): %s\n",
                optarg);
        return 2;
      }
      break;
    case 13:
    case 14:
      snprintf(a->walias[c - 13], sizeof a->walias[0], "%s=%.200s",
               c == 13 ? "ucir.layout" : "rvn.cache-every", optarg);
      a->wopts[a->nwopts++] = a->walias[c - 13];
      break;
    case 'o':
      a->prefix = optarg;
      break;
    case 'f':
      a->formats = optarg;
      break;
    case 'q':
      a->opt.quiet = 1;
      break;
    case 'E':
      if (!strchr(optarg, '=') || a->nenv == MAX_ENV) {
        fprintf(stderr, "tracecorn: --env takes K=V (at most %d)\n", MAX_ENV);
        return 2;
      }
      a->env[a->nenv++] = optarg;
      break;
    case 1:
      if (parse_u64(optarg, &a->opt.seed) < 0) {
        fprintf(stderr, "tracecorn: --seed: not a number: %s\n", optarg);
        return 2;
      }
      break;
    case 2:
      a->inherit_env = true;
      break;
    case 3:
      a->opt.fs_root = optarg;
      break;
    case 4:
      a->opt.cwd = optarg;
      break;
    case 5:
      a->raw = optarg;
      break;
    case 6:
      a->opt.arch = optarg;
      if (!tc_arch_by_name(optarg)) {
        fprintf(stderr,
                "tracecorn: unknown --arch %s (known: x86_64, x86, arm, arm64, "
                "mips, mipsel, mips64el, sparc64)\n",
                optarg);
        return 2;
      }
      break;
    case 7:
    case 8:
      if (parse_u64(optarg, c == 7 ? &a->base : &a->entry) < 0) {
        fprintf(stderr, "tracecorn: --%s: not an address: %s\n",
                c == 7 ? "base" : "entry", optarg);
        return 2;
      }
      if (c == 7)
        a->have_base = true;
      else
        a->have_entry = true;
      break;
    case 'j': {
      uint64_t j;
      if (parse_u64(optarg, &j) < 0 || j == 0 || j > 64) {
        fprintf(stderr,
                "tracecorn: -j: not a number of jobs from 1 to 64: %s\n",
                optarg);
        return 2;
      }
      a->jobs = (int)j;
      break;
    }
    case 9:
      if (parse_u64(optarg, &a->opt.max_insns) < 0 || a->opt.max_insns == 0) {
        fprintf(stderr, "tracecorn: --max-insns: not a positive number: %s\n",
                optarg);
        return 2;
      }
      break;
    case 22:
      if (parse_u64(optarg, &a->opt.max_procs) < 0 || a->opt.max_procs == 0) {
        fprintf(stderr, "tracecorn: --max-procs: not a positive number: %s\n",
                optarg);
        return 2;
      }
      break;
    case 10:
      a->opt.record_memory = 0;
      break;
    case 11:
      a->opt.exact = 1;
      break;
    case 12: {
      uint64_t k;
      if (parse_u64(optarg, &k) < 0 || k == 0 || k > UINT32_MAX) {
        fprintf(stderr, "tracecorn: --keyframe: bad interval: %s\n", optarg);
        return 2;
      }
      a->opt.keyframe_interval = (uint32_t)k;
      break;
    }
    case 20:
      if (parse_u64(optarg, &a->opt.sched_quantum) < 0 ||
          a->opt.sched_quantum == 0) {
        fprintf(stderr,
                "tracecorn: --sched-quantum: not a positive number: %s\n",
                optarg);
        return 2;
      }
      break;
    case 21:
      a->opt.no_follow_exec = 1;
      break;
    case 23:
      a->opt.tty = 1;
      break;
    case 24:
      a->log_only = true;
      break;
    case 'h':
      usage_record(stdout);
      return 0;
    default: /* getopt said what was wrong: one hint, not the whole help */
      fprintf(stderr,
              "usage: tracecorn record [options] -- PROGRAM "
              "[ARGS...] (tracecorn record --help lists the options)\n");
      return 2;
    }
  }
  a->prog_argv = argv + optind;
  a->prog_argc = argc - optind;
  return -1;
}

/* Checks what can be checked before the guest starts (a typo must not
 * record anything) and completes the options: 0, or the exit status. */
static int check_record_args(record_args *a) {
  if (a->raw && a->prog_argc > 0) {
    fprintf(stderr, "tracecorn: --raw takes no PROGRAM\n");
    return 2;
  }
  if (!a->raw && a->prog_argc == 0) {
    fprintf(stderr, "tracecorn: record: missing PROGRAM (usage: tracecorn "
                    "record [options] -- PROGRAM [ARGS...])\n");
    return 2;
  }
  if (a->raw && (!a->opt.arch || !a->have_base)) {
    fprintf(stderr, "tracecorn: --raw needs --arch and --base\n");
    return 2;
  }
  /* Checked before the guest starts: a typo must not record anything. */
  struct stat dst;
  if (a->opt.fs_root) {
    int bad = stat(a->opt.fs_root, &dst) != 0 ? errno
              : !S_ISDIR(dst.st_mode)         ? ENOTDIR
                                              : 0;
    if (bad) {
      fprintf(stderr, "tracecorn: --root %s: %s\n", a->opt.fs_root,
              strerror(bad));
      return 2;
    }
  }
  if (a->opt.cwd && !a->opt.fs_root &&
      (stat(a->opt.cwd, &dst) != 0 || !S_ISDIR(dst.st_mode))) {
    fprintf(stderr, "tracecorn: --cwd %s: no such directory\n", a->opt.cwd);
    return 2;
  }
  if (a->opt.cwd && a->opt.fs_root) {
    char in_root[PATH_MAX];
    snprintf(in_root, sizeof in_root, "%s/%s", a->opt.fs_root, a->opt.cwd);
    if (stat(in_root, &dst) != 0 || !S_ISDIR(dst.st_mode)) {
      fprintf(stderr, "tracecorn: --cwd %s: no such directory in --root %s\n",
              a->opt.cwd, a->opt.fs_root);
      return 2;
    }
  }
  if (a->inherit_env) {
    /* tracecorn's environment first; every -E K=V replaces its K. */
    extern char **environ;
    const char *given[MAX_ENV];
    int ngiven = a->nenv;
    memcpy(given, a->env, sizeof *a->env * (size_t)a->nenv);
    a->nenv = 0;
    for (char **e = environ; *e && a->nenv < MAX_ENV; e++) {
      size_t klen = strcspn(*e, "=");
      bool replaced = false;
      for (int i = 0; i < ngiven && !replaced; i++)
        replaced = strncmp(given[i], *e, klen) == 0 && given[i][klen] == '=';
      if (!replaced)
        a->env[a->nenv++] = *e;
    }
    for (int i = 0; i < ngiven && a->nenv < MAX_ENV; i++)
      a->env[a->nenv++] = given[i];
  }
  a->env[a->nenv] = NULL;
  a->opt.env = a->env;
  a->tranges[a->ntranges] = NULL;
  a->tfuncs[a->ntfuncs] = NULL;
  a->opt.trace_ranges = a->ntranges ? a->tranges : NULL;
  a->opt.trace_funcs = a->ntfuncs ? a->tfuncs : NULL;
  a->wopts[a->nwopts] = NULL;
  a->opt.writer_options = a->wopts;

  return 0;
}

/* Loads the program or the raw code: 0, or -1 after a message. */
static int load_program(tc_session *s, record_args *a, tc_error *err) {
  int rc;
  if (a->raw) {
    size_t n = 0;
    uint8_t *code = tc_read_whole(a->raw, &n);
    if (!code) {
      fprintf(stderr, "tracecorn: %s: %s\n", a->raw, strerror(errno));
      return -1;
    }
    rc = tc_session_load_raw(s, code, n, a->base,
                             a->have_entry ? a->entry : a->base, err);
    free(code);
  } else {
    rc = tc_session_load_elf(s, a->prog_argv[0],
                             (const char *const *)a->prog_argv, err);
  }
  if (rc < 0)
    fprintf(stderr, "tracecorn: %s\n", err->msg);
  return rc < 0 ? -1 : 0;
}

/* Chooses and opens the outputs: 0, or the exit status after a message
 * (the session is still the caller's to free). */
static int open_outputs(tc_session *s, record_args *a, record_outputs *o,
                        tc_error *err) {
  const tc_trace_info *info = tc_session_info(s);
  if (!a->prefix) {
    snprintf(a->defprefix, sizeof a->defprefix, "%s",
             base_name(a->raw ? a->raw : a->prog_argv[0]));
    a->prefix = a->defprefix;
  }

  /* Outputs. The whole list is checked before any file is created (a typo
   * must not leave half-made traces behind). "all" means every format with
   * a writer that can hold this arch: the others are left out without a
   * word (x64dbg's trac on an arm program is not what "all" asked for). A
   * format asked for by name that cannot hold the arch is refused with a
   * message; the other a->formats still run. */
  const tc_format *chosen[MAX_FORMATS];
  bool grouped[MAX_FORMATS] = {false}; /* chosen by "all"/"readable" only */
  int nchosen = 0;
  bool all = false;
  char list[1024];
  snprintf(list, sizeof list, "%s", a->formats);
  for (char *save = NULL, *name = strtok_r(list, ",", &save); name;
       name = strtok_r(NULL, ",", &save)) {
    if (strcmp(name, "all") == 0 || strcmp(name, "readable") == 0) {
      bool readable = name[0] == 'r';
      all = true;
      for (const tc_format *const *f = tc_formats(); *f; f++) {
        bool dup = false;
        for (int i = 0; i < nchosen; i++)
          dup |= chosen[i] == *f;
        if (!dup && (*f)->open_writer && (!readable || (*f)->open_reader) &&
            nchosen < MAX_FORMATS) {
          grouped[nchosen] = true;
          chosen[nchosen++] = *f;
        }
      }
      continue;
    }
    const tc_format *fmt = tc_format_by_name(name);
    if (!fmt || !fmt->open_writer) {
      fprintf(stderr,
              "tracecorn: unknown format '%s' (see `tracecorn "
              "formats`)\n",
              name);
      return 2;
    }
    bool dup = false;
    for (int i = 0; i < nchosen; i++)
      if (chosen[i] == fmt) {
        dup = true;
        grouped[i] = false; /* named too: its refusal is worth a line */
      }
    if (!dup && nchosen < MAX_FORMATS)
      chosen[nchosen++] = fmt;
  }
  /* `-o -`, `-o /dev/stdout`, `-o /dev/fd/3`, a FIFO or a device: a
   * o->stream, which takes the one trace as it is written (no extension, no
   * temporary name). Not tracecorn's own stdout or stderr, where the
   * program writes too. */
  o->stream = tc_output_is_stream(a->prefix);
  if (o->stream) {
    const char *why =
        all || nchosen != 1 ? "holds one format (-f names more)"
        : a->zst ? "cannot be compressed by -z (pipe it through zstd)"
        : is_own_stdio(a->prefix)
            ? "is where the program's own output goes too: the trace would "
              "be mixed with it (-o /dev/fd/3 3>FILE keeps them apart)"
            : NULL;
    if (why) {
      fprintf(stderr, "tracecorn: -o %s: a stream output %s\n", a->prefix, why);
      return 2;
    }
  }
  /* `-o NAME.EXT` names the file itself when EXT is a chosen format's
   * extension (users type `-o x.tct`, not `-o x`); a `.zst` suffix asks for
   * compression as -z does. */
  if (a->prefix != a->defprefix) {
    snprintf(a->defprefix, sizeof a->defprefix, "%s", a->prefix);
    a->prefix = a->defprefix;
  }
  size_t plen = strlen(a->defprefix);
  if (!o->stream && plen > 4 && strcmp(a->defprefix + plen - 4, ".zst") == 0) {
    a->zst = true;
    a->defprefix[plen -= 4] = '\0';
  }
  for (int i = 0; i < nchosen && !o->stream; i++) {
    const char *ext = chosen[i]->extension(info->arch);
    size_t elen = strlen(ext);
    if (elen && plen > elen && strcmp(a->defprefix + plen - elen, ext) == 0) {
      a->defprefix[plen - elen] = '\0';
      break;
    }
  }
  /* No existing non-trace file is replaced unless --a->force (checked for
   * every output before any is created). */
  for (int i = 0; i < nchosen && !a->force; i++) {
    char path[PATH_MAX];
    int k = snprintf(path, sizeof path, "%s%s%s", a->prefix,
                     o->stream ? "" : chosen[i]->extension(info->arch),
                     a->zst ? ".zst" : "");
    if (k < 0 || k >= (int)sizeof path) {
      fprintf(stderr, "tracecorn: -o %s: name too long\n", a->prefix);
      return 2;
    }
    if (tc_output_clobbers(path, chosen[i])) {
      refuse_clobber(path);
      return 2;
    }
  }
  for (int i = 0; i < nchosen; i++) {
    const tc_format *fmt = chosen[i];
    tc_error why = {{0}};
    if (grouped[i] && fmt->supports && fmt->supports(info->arch, &why) < 0)
      continue;
    int k = snprintf(o->paths[o->npaths], PATH_MAX, "%s%s%s", a->prefix,
                     o->stream ? "" : fmt->extension(info->arch),
                     a->zst ? ".zst" : "");
    if (k < 0 || k >= PATH_MAX) {
      fprintf(stderr, "tracecorn: -o %s: name too long\n", a->prefix);
      continue;
    }
    o->exts[o->npaths] = fmt->extension(info->arch);
    if (tc_session_add_writer(s, fmt, o->paths[o->npaths], err) < 0) {
      fprintf(stderr, "tracecorn: %s\n", err->msg);
      if (g_nrefused < MAX_FORMATS)
        g_refused[g_nrefused++] = fmt;
      continue;
    }
    o->npaths++;
  }
  if (o->npaths == 0) {
    fprintf(stderr, "tracecorn: no output can be written\n");
    return 125;
  }

  return 0;
}

bool cli_record_to_scratch;

/* The summary on stderr: how the program ended and what was written. */
static void report(tc_session *s, const record_args *a, const record_outputs *o,
                   const tc_run_result *res) {
  const tc_trace_info *info = tc_session_info(s);
  {
    const char *what = res->reason == TC_EXIT_EXITED      ? "exited"
                       : res->reason == TC_EXIT_SIGNALED  ? "was killed"
                       : res->reason == TC_EXIT_MAX_INSNS ? "was stopped"
                       : res->reason == TC_EXIT_INTERRUPTED &&
                               a->opt.no_follow_exec && res->status == 0
                           ? "stopped at execve (--no-follow)"
                       : res->reason == TC_EXIT_INTERRUPTED ? "was interrupted"
                                                            : "failed";
    fprintf(stderr,
            "tracecorn: %s %s (status %d): %" PRIu64 " instructions, %" PRIu64
            " syscalls, %" PRIu64 " memory accesses\n",
            base_name(info->exe_path), what, res->status, res->insns,
            res->syscalls, res->mem_accesses);
    for (int i = 0; i < o->npaths && !cli_record_to_scratch; i++) {
      char sz[32];
      /* never claimed when it is not there */
      struct stat st;
      if (!o->stream && stat(o->paths[i], &st) != 0) {
        fprintf(stderr, "tracecorn: did not write %s\n", o->paths[i]);
        continue;
      }
      uint64_t bytes = tc_output_size(o->paths[i]);
      human_size(bytes, sz, sizeof sz);
      fprintf(stderr, "tracecorn: %s %s (%s, %.2f B/insn)\n",
              tc_session_output_ok(s, o->paths[i]) ? "wrote" : "INCOMPLETE",
              o->paths[i], sz,
              res->insns ? (double)bytes / (double)res->insns : 0.0);
    }
    /* Forked children: PREFIX.PID.EXT each (none for a o->stream). */
    uint32_t pids[64];
    size_t nprocs =
        o->stream || cli_record_to_scratch ? 0 : tc_session_pids(s, pids, 64);
    for (size_t k = 1; k < nprocs && k < 64; k++)
      for (int i = 0; i < o->npaths; i++) {
        char path[PATH_MAX + 32], sz[32];
        snprintf(path, sizeof path, "%s.%u%s%s", a->prefix, (unsigned)pids[k],
                 o->exts[i], a->zst ? ".zst" : "");
        if (!tc_session_output_ok(s, path) && !a->force &&
            tc_output_clobbers(path, NULL)) {
          fprintf(stderr, "tracecorn: did not write %s (process %u)\n", path,
                  (unsigned)pids[k]);
          continue;
        }
        human_size(tc_output_size(path), sz, sizeof sz);
        fprintf(stderr, "tracecorn: %s %s (%s, process %u)\n",
                tc_session_output_ok(s, path) ? "wrote" : "INCOMPLETE", path,
                sz, (unsigned)pids[k]);
      }
    if (nprocs > 64)
      fprintf(stderr, "tracecorn: ... and %zu more processes (%s.PID.*)\n",
              nprocs - 64, a->prefix);
  }
}

/* Records the program a describes (parsed and checked); log_mode: a
 * run with --log-only (TC_LOG_WRITE, recipe stored in the log) or a
 * materialisation of a log (TC_LOG_READ). */
static int record_go(record_args *a, int log_mode, const char *log_path,
                     const void *recipe, size_t recipe_len) {
  int rc;
  tc_error err = {{0}};
  tc_session *s = tc_session_new(&a->opt, &err);
  if (!s) {
    fprintf(stderr, "tracecorn: %s\n", err.msg);
    return 125;
  }
  tc_session_set_debug(s, &a->debug);
  tc_session_set_jobs(s, a->jobs);
  if (log_mode != TC_LOG_NONE &&
      tc_session_set_log(s, log_mode, log_path, recipe, recipe_len) < 0) {
    fprintf(stderr, "tracecorn: out of memory\n");
    tc_session_free(s);
    return 125;
  }
  if (load_program(s, a, &err) < 0) {
    tc_session_free(s);
    return 125;
  }
  static record_outputs outs;
  record_outputs *o = &outs;
  memset(o, 0, sizeof *o);
  if (log_mode != TC_LOG_WRITE && (rc = open_outputs(s, a, o, &err)) != 0) {
    tc_session_free(s);
    return rc;
  }
  g_session = s;
  struct sigaction sa = {0};
  sa.sa_handler = on_sigint;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
  sa.sa_handler = on_watchdog;
  sigaction(SIGALRM, &sa, NULL);
  /* A guest writing to a closed pipe gets EPIPE/SIGPIPE from the emulated
   * kernel; tracecorn itself must not die of the host's signal. */
  signal(SIGPIPE, SIG_IGN);
  /* Over a file-size limit, writes fail with EFBIG and are reported like a
   * full disk instead of killing tracecorn with every trace unclosed. */
  signal(SIGXFSZ, SIG_IGN);

  /* Said once, where a person reads it: without --root the program can
   * touch every host file this user can (docs/sandbox.md). */
  if (!a->opt.fs_root && !a->opt.quiet && !a->raw && isatty(2))
    fprintf(stderr, "tracecorn: note: the guest sees the host's files with "
                    "your permissions; --root DIR confines it\n");
  progress prog;
  bool show_progress =
      !a->opt.quiet && isatty(2) && progress_start(&prog, s) == 0;
  tc_run_result res;
  tc_run_result_init(&res);
  /* --tty: the program may change its terminals' modes (raw mode); they
   * get back what they had, whatever way the run ends. */
  struct termios saved_tty[3];
  bool tty_saved[3] = {false, false, false};
  for (int fd = 0; fd < 3 && a->opt.tty; fd++)
    tty_saved[fd] = isatty(fd) && tcgetattr(fd, &saved_tty[fd]) == 0;
  rc = tc_session_run(s, &res, &err);
  for (int fd = 0; fd < 3; fd++)
    if (tty_saved[fd])
      tcsetattr(fd, TCSANOW, &saved_tty[fd]);
  alarm(0);
  if (show_progress)
    progress_stop(&prog);
  g_session = NULL;
  if (rc < 0)
    fprintf(stderr, "tracecorn: %s\n", err.msg);
  /* A run refused before its first instruction (reason still 0) ran
   * nothing and wrote nothing: no summary to give. */
  if (!a->opt.quiet && !(rc < 0 && res.reason == 0))
    report(s, a, o, &res);
  if (log_mode == TC_LOG_WRITE && rc == 0 && !a->opt.quiet) {
    char sz[32];
    human_size(tc_output_size(log_path), sz, sizeof sz);
    fprintf(stderr,
            "tracecorn: wrote %s (%s; tracecorn materialize %s writes its "
            "trace)\n",
            log_path, sz, log_path);
  }
  tc_session_free(s);
  /* Ctrl-C or SIGTERM under -j N fails the run (no partial trace is kept)
   * but exits as an interrupted -j 1 does */
  if (rc < 0 && res.reason == TC_EXIT_INTERRUPTED &&
      (res.status == 130 || res.status == 143))
    return res.status;
  if (rc < 0)
    return 125;
  return res.status;
}

/* The log's name: PREFIX.tclog (-o PREFIX, default the program's base
 * name), or -o itself when it ends in .tclog. */
static void log_name(const record_args *a, char *out, size_t max) {
  const char *pre =
      a->prefix ? a->prefix : base_name(a->raw ? a->raw : a->prog_argv[0]);
  size_t n = strlen(pre);
  bool has = n > 6 && strcmp(pre + n - 6, ".tclog") == 0;
  snprintf(out, max, "%s%s", pre, has ? "" : ".tclog");
}

int cmd_record(int argc, char **argv) {
  static record_args args;
  record_args *a = &args;
  memset(a, 0, sizeof *a);
  int rc = parse_record_args(argc, argv, a);
  if (rc >= 0)
    return rc;
  if ((rc = check_record_args(a)) != 0)
    return rc;
  if (!a->log_only)
    return record_go(a, TC_LOG_NONE, NULL, NULL, 0);
  if (strcmp(a->formats, "tct") != 0 || a->zst) {
    fprintf(stderr, "tracecorn: --log-only writes the log alone: give the "
                    "formats to tracecorn materialize\n");
    return 2;
  }
  /* The recipe: the working directory, then this command's arguments,
   * each NUL-terminated (materialize parses them again). */
  char cwd[PATH_MAX];
  if (!getcwd(cwd, sizeof cwd)) {
    fprintf(stderr, "tracecorn: getcwd: %s\n", strerror(errno));
    return 125;
  }
  size_t n = strlen(cwd) + 1;
  for (int i = 1; i < argc; i++)
    n += strlen(argv[i]) + 1;
  char *recipe = malloc(n), *p = recipe;
  if (!recipe)
    return 125;
  p = stpcpy(p, cwd) + 1;
  for (int i = 1; i < argc; i++)
    p = stpcpy(p, argv[i]) + 1;
  char path[PATH_MAX + 8];
  log_name(a, path, sizeof path);
  if (!a->force && tc_output_clobbers(path, NULL)) {
    refuse_clobber(path);
    free(recipe);
    return 2;
  }
  rc = record_go(a, TC_LOG_WRITE, path, recipe, n);
  free(recipe);
  return rc;
}

void usage_materialize(FILE *f) {
  fprintf(f, "usage: tracecorn materialize [-f LIST] [-o PREFIX] [-j N] [-q] "
             "[--force] LOG\n"
             "\n"
             "Writes the trace of a run that record --log-only logged: the "
             "program is\n"
             "loaded again as that command said (from its working directory; "
             "the program\n"
             "and its loader must be the same files), replayed at the engine's "
             "speed with\n"
             "every syscall's result and kernel writes taken from the log (the "
             "kernel is\n"
             "never called: nothing the program did to files happens again), "
             "and recorded\n"
             "in segments as record -j N does: the same files record would "
             "have written\n"
             "of that run.\n"
             "\n"
             "  -f, --format LIST     formats (default: tct), as record's\n"
             "  -o, --output PREFIX   output name (default: LOG without "
             ".tclog)\n"
             "  -j, --jobs N          record on N cores (default 1)\n"
             "  -q, --quiet           no summary on stderr\n"
             "      --force           replace existing files that are not "
             "traces\n"
             "  -h, --help            this help\n");
}

static void materialize_usage_line(void) {
  fprintf(stderr, "usage: tracecorn materialize [-f LIST] [-o PREFIX] "
                  "[-j N] LOG\n");
}

int cmd_materialize(int argc, char **argv) {
  static const struct option longopts[] = {
      {"format", required_argument, 0, 'f'},
      {"output", required_argument, 0, 'o'},
      {"jobs", required_argument, 0, 'j'},
      {"quiet", no_argument, 0, 'q'},
      {"force", no_argument, 0, 1},
      {"help", no_argument, 0, 'h'},
      {0, 0, 0, 0}};
  const char *formats = NULL, *prefix = NULL;
  int jobs = 1, c;
  bool quiet = false, force = false;
  optind = 1;
  while ((c = getopt_long(argc, argv, "+f:o:j:qh", longopts, NULL)) != -1) {
    uint64_t v;
    switch (c) {
    case 'f':
      formats = optarg;
      break;
    case 'o':
      prefix = optarg;
      break;
    case 'j':
      if (parse_u64(optarg, &v) < 0 || v == 0 || v > 64) {
        fprintf(stderr,
                "tracecorn: -j: not a number of jobs from 1 to 64: %s\n",
                optarg);
        return 2;
      }
      jobs = (int)v;
      break;
    case 'q':
      quiet = true;
      break;
    case 1:
      force = true;
      break;
    case 'h':
      usage_materialize(stdout);
      return 0;
    default:
      materialize_usage_line();
      return 2;
    }
  }
  if (optind != argc - 1) {
    materialize_usage_line();
    return 2;
  }
  const char *logp = argv[optind];
  static char logabs[PATH_MAX], outabs[PATH_MAX * 2], here[PATH_MAX];
  if (!realpath(logp, logabs) || !getcwd(here, sizeof here)) {
    fprintf(stderr, "tracecorn: %s: %s\n", logp, strerror(errno));
    return 125;
  }
  tc_error err = {{0}};
  size_t n = 0;
  static char *recipe;
  recipe = tc_session_log_recipe(logabs, &n, &err);
  if (!recipe) {
    fprintf(stderr, "tracecorn: %s\n", err.msg);
    return 125;
  }
  /* outputs are named from here; the program loads from the logged
   * run's directory */
  if (prefix && prefix[0] == '/')
    snprintf(outabs, sizeof outabs, "%s", prefix);
  else if (prefix)
    snprintf(outabs, sizeof outabs, "%s/%s", here, prefix);
  else {
    snprintf(outabs, sizeof outabs, "%s", logabs);
    size_t k = strlen(outabs);
    if (k > 6 && strcmp(outabs + k - 6, ".tclog") == 0)
      outabs[k - 6] = 0;
  }
  static char *rargv[1024];
  int rargc = 0;
  rargv[rargc++] = "record";
  const char *cwd = recipe;
  for (size_t at = strlen(recipe) + 1; at < n && rargc < 1023;
       at += strlen(recipe + at) + 1)
    rargv[rargc++] = recipe + at;
  rargv[rargc] = NULL;
  if (chdir(cwd) != 0) {
    fprintf(stderr, "tracecorn: %s: the logged run's directory %s: %s\n", logp,
            cwd, strerror(errno));
    return 125;
  }
  static record_args args;
  record_args *a = &args;
  memset(a, 0, sizeof *a);
  int rc = parse_record_args(rargc, rargv, a);
  if (rc >= 0) {
    fprintf(stderr, "tracecorn: %s: its recipe does not parse\n", logp);
    return 125;
  }
  a->log_only = false;
  a->formats = formats ? formats : "tct";
  a->prefix = outabs;
  a->jobs = jobs;
  a->opt.quiet |= quiet;
  a->force |= force;
  a->zst = false;
  if ((rc = check_record_args(a)) != 0)
    return rc;
  return record_go(a, TC_LOG_READ, logabs, NULL, 0);
}
