/* tracecorn: the command-line tool. It parses options and calls
 * libtracecorn; all behaviour lives in the library. */
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
#include <time.h>
#include <unistd.h>

#include "tools/debug_env.h"
#include "tracecorn/tracecorn.h"

#define MAX_ENV 256
#define MAX_FORMATS 16

static tc_session *g_session;
/* The formats the last `record` could not open an output for (it said
 * why): `verify` does not look for their files. */
static const tc_format *g_refused[MAX_FORMATS];
static int g_nrefused;

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

static void usage_record(FILE *f) {
  fprintf(f,
          "usage: tracecorn record [options] -- PROGRAM [ARGS...]\n"
          "       tracecorn record --raw FILE --arch ARCH --base ADDR "
          "[--entry ADDR] [options]\n"
          "\n"
          "Runs a static Linux program (x86-64, i386, arm, arm64, mips or "
          "mipsel ELF,\n"
          "ET_EXEC or static-pie) under Unicorn and records every "
          "instruction. The\n"
          "guest's stdin/stdout/stderr are passed through; tracecorn exits "
          "with the\n"
          "guest's exit status (128+N if a signal N killed it, 124 at "
          "--max-insns,\n"
          "130 on Ctrl-C, 143 on SIGTERM).\n"
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
          "                        fixed st_dev, st_ino from the path, so "
          "traces are\n"
          "                        reproducible)\n"
          "\n"
          "Raw code:\n"
          "      --raw FILE        record a raw code blob instead of an ELF\n"
          "      --arch ARCH       x86_64, x86, arm, arm64, mips, mipsel "
          "(aliases: amd64,\n"
          "                        i386, armhf, aarch64...)\n"
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
          "      --trace-range R   record only instructions in R: A-B (hex) "
          "or a function\n"
          "                        name (repeatable); the whole program "
          "still runs\n"
          "      --trace-func F    record only while F (a function name or "
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
          "                        that fail still return their error\n");
}

static void usage(FILE *f) {
  fprintf(f,
          "tracecorn %s: record Linux programs under Unicorn, write real "
          "trace formats\n"
          "\n"
          "usage: tracecorn record [options] -- PROGRAM [ARGS...]   record a "
          "program\n"
          "       tracecorn dump [--json] FILE                   print a trace "
          "as text\n"
          "       tracecorn strace FILE                          its "
          "syscalls, as strace\n"
          "       tracecorn convert [--from FMT] IN [--to FMT] OUT   convert "
          "a trace\n"
          "       tracecorn verify [-f LIST] -- PROGRAM [ARGS]   record and "
          "check round trips\n"
          "       tracecorn info FILE                            summarise a "
          "trace\n"
          "       tracecorn formats                              list the "
          "formats\n"
          "       tracecorn COMMAND --help                       help for a "
          "command\n"
          "\n"
          "Every command reads zstd-compressed traces (FILE.zst) as they "
          "are; record -z\nand convert ... OUT.zst write them.\n",
          TC_VERSION_STRING);
}

static int parse_u64(const char *s, uint64_t *out) {
  char *end;
  errno = 0;
  unsigned long long v = strtoull(s, &end, 0);
  if (errno || end == s || *end || s[0] == '-')
    return -1;
  *out = v;
  return 0;
}

/* A size: a number with an optional K, M, G or T suffix (powers of
 * 1024), more than 0. */
static int parse_size(const char *s, uint64_t *out) {
  char *end = NULL;
  errno = 0;
  unsigned long long v = strtoull(s, &end, 0);
  unsigned shift = 0;
  if (end && *end && !end[1])
    shift = *end == 'K' || *end == 'k'   ? 10
            : *end == 'M' || *end == 'm' ? 20
            : *end == 'G' || *end == 'g' ? 30
            : *end == 'T' || *end == 't' ? 40
                                         : 99;
  else if (end && *end)
    shift = 99;
  if (errno || end == s || s[0] == '-' || shift == 99 || v == 0 ||
      v > (UINT64_MAX >> shift))
    return -1;
  *out = (uint64_t)v << shift;
  return 0;
}

static void *read_whole(const char *path, size_t *n) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return NULL;
  struct stat st;
  if (fstat(fileno(f), &st) < 0 || st.st_size > (1 << 30)) {
    fclose(f);
    errno = EFBIG;
    return NULL;
  }
  void *buf = malloc((size_t)st.st_size + 1);
  if (buf && fread(buf, 1, (size_t)st.st_size, f) != (size_t)st.st_size) {
    free(buf);
    buf = NULL;
  }
  fclose(f);
  *n = (size_t)st.st_size;
  return buf;
}

static const char *base_name(const char *p) {
  const char *s = strrchr(p, '/');
  return s ? s + 1 : p;
}

static void human_size(uint64_t n, char *out, size_t max) {
  if (n < 10 * 1024)
    snprintf(out, max, "%" PRIu64 " B", n);
  else if (n < 10 * 1024 * 1024)
    snprintf(out, max, "%.1f KiB", n / 1024.0);
  else
    snprintf(out, max, "%.1f MiB", n / 1048576.0);
}

/* Bytes of an output: a file, or the files of a directory output (rvn). */
/* Removes an output file, or a directory output and its files. */
static void remove_output(const char *path) {
  if (unlink(path) == 0 || errno != EISDIR)
    return;
  DIR *d = opendir(path);
  for (struct dirent *e; d && (e = readdir(d));) {
    char sub[PATH_MAX + 512];
    snprintf(sub, sizeof sub, "%s/%s", path, e->d_name);
    if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
      unlink(sub);
  }
  if (d)
    closedir(d);
  rmdir(path);
}

/* 1 if path is "-" or the same pipe, socket or file as tracecorn's own
 * stdout or stderr (terminals and /dev/null aside), which the recorded
 * program writes to. */
static int is_own_stdio(const char *path) {
  struct stat a, b;
  if (strcmp(path, "-") == 0)
    return 1;
  if (stat(path, &a) != 0 || S_ISCHR(a.st_mode))
    return 0;
  for (int fd = 1; fd <= 2; fd++)
    if (fstat(fd, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino)
      return 1;
  return 0;
}

static void refuse_clobber(const char *path) {
  fprintf(stderr,
          "tracecorn: %s exists and is not a trace file; not overwriting it "
          "(--force does)\n",
          path);
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

static double elapsed_since(const struct timespec *t0) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)(t.tv_sec - t0->tv_sec) +
         (double)(t.tv_nsec - t0->tv_nsec) / 1e9;
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
    fprintf(stderr,
            "\rtracecorn: %.1fM instructions, %.2fM insn/s, %s written, "
            "%.1f s\033[K",
            (double)n / 1e6, secs > 0 ? (double)n / secs / 1e6 : 0.0, sz, secs);
  }
  fputs("\r\033[K", stderr);
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
  return rc == 0 ? 0 : -1;
}

static void progress_stop(progress *p) {
  __atomic_store_n(&p->done, 1, __ATOMIC_RELEASE);
  pthread_join(p->thread, NULL);
}

static int cmd_record(int argc, char **argv) {
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
      {"help", no_argument, 0, 'h'},
      {0, 0, 0, 0}};
  tc_options opt;
  tc_options_init(&opt);
  /* TRACECORN_REGFILE and the other speed-path switches (man page) */
  tc_options_from_debug_env(&opt);
  const char *prefix = NULL, *formats = "tct", *raw = NULL;
  uint64_t base = 0, entry = 0;
  bool have_base = false, have_entry = false, inherit_env = false;
  const char *env[MAX_ENV + 1];
  int nenv = 0;
  /* Writer options, "FORMAT.KEY=VALUE"; the aliases are kept in the
   * strings below so the pointers stay valid through the run. */
  enum { MAX_WOPTS = 32 };
  const char *wopts[MAX_WOPTS + 1];
  char walias[2][256];
  int nwopts = 0;
  int c;
  bool force = false, zst = false;
  const char *tranges[17], *tfuncs[17];
  int ntranges = 0, ntfuncs = 0;
  optind = 1;
  while ((c = getopt_long(argc, argv, "+o:f:qzE:O:h", longopts, NULL)) != -1) {
    if ((c == 'O' || c == 13 || c == 14) && nwopts == MAX_WOPTS) {
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
      wopts[nwopts++] = optarg;
      break;
    case 15:
      opt.host_stat = 1;
      break;
    case 17:
      force = true;
      opt.force = 1;
      break;
    case 'z':
      zst = true;
      break;
    case 18:
    case 19:
      if ((c == 18 ? ntranges : ntfuncs) == 16) {
        fprintf(stderr, "tracecorn: at most 16 --%s\n",
                c == 18 ? "trace-range" : "trace-func");
        return 2;
      }
      if (c == 18)
        tranges[ntranges++] = optarg;
      else
        tfuncs[ntfuncs++] = optarg;
      break;
    case 16:
      if (parse_size(optarg, &opt.max_memory) < 0) {
        fprintf(stderr,
                "tracecorn: --max-memory: not a size (e.g. 512M, 8G): %s\n",
                optarg);
        return 2;
      }
      break;
    case 13:
    case 14:
      snprintf(walias[c - 13], sizeof walias[0], "%s=%.200s",
               c == 13 ? "ucir.layout" : "rvn.cache-every", optarg);
      wopts[nwopts++] = walias[c - 13];
      break;
    case 'o':
      prefix = optarg;
      break;
    case 'f':
      formats = optarg;
      break;
    case 'q':
      opt.quiet = 1;
      break;
    case 'E':
      if (!strchr(optarg, '=') || nenv == MAX_ENV) {
        fprintf(stderr, "tracecorn: --env takes K=V (at most %d)\n", MAX_ENV);
        return 2;
      }
      env[nenv++] = optarg;
      break;
    case 1:
      if (parse_u64(optarg, &opt.seed) < 0) {
        fprintf(stderr, "tracecorn: --seed: not a number: %s\n", optarg);
        return 2;
      }
      break;
    case 2:
      inherit_env = true;
      break;
    case 3:
      opt.fs_root = optarg;
      break;
    case 4:
      opt.cwd = optarg;
      break;
    case 5:
      raw = optarg;
      break;
    case 6:
      opt.arch = optarg;
      if (!tc_arch_by_name(optarg)) {
        fprintf(stderr,
                "tracecorn: unknown --arch %s (known: x86_64, x86, arm, arm64, "
                "mips, mipsel)\n",
                optarg);
        return 2;
      }
      break;
    case 7:
    case 8:
      if (parse_u64(optarg, c == 7 ? &base : &entry) < 0) {
        fprintf(stderr, "tracecorn: --%s: not an address: %s\n",
                c == 7 ? "base" : "entry", optarg);
        return 2;
      }
      if (c == 7)
        have_base = true;
      else
        have_entry = true;
      break;
    case 9:
      if (parse_u64(optarg, &opt.max_insns) < 0 || opt.max_insns == 0) {
        fprintf(stderr, "tracecorn: --max-insns: not a positive number: %s\n",
                optarg);
        return 2;
      }
      break;
    case 22:
      if (parse_u64(optarg, &opt.max_procs) < 0 || opt.max_procs == 0) {
        fprintf(stderr, "tracecorn: --max-procs: not a positive number: %s\n",
                optarg);
        return 2;
      }
      break;
    case 10:
      opt.record_memory = 0;
      break;
    case 11:
      opt.exact = 1;
      break;
    case 12: {
      uint64_t k;
      if (parse_u64(optarg, &k) < 0 || k == 0 || k > UINT32_MAX) {
        fprintf(stderr, "tracecorn: --keyframe: bad interval: %s\n", optarg);
        return 2;
      }
      opt.keyframe_interval = (uint32_t)k;
      break;
    }
    case 20:
      if (parse_u64(optarg, &opt.sched_quantum) < 0 || opt.sched_quantum == 0) {
        fprintf(stderr,
                "tracecorn: --sched-quantum: not a positive number: %s\n",
                optarg);
        return 2;
      }
      break;
    case 21:
      opt.no_follow_exec = 1;
      break;
    case 'h':
      usage_record(stdout);
      return 0;
    default:
      usage_record(stderr);
      return 2;
    }
  }
  char **prog_argv = argv + optind;
  int prog_argc = argc - optind;
  if (raw && prog_argc > 0) {
    fprintf(stderr, "tracecorn: --raw takes no PROGRAM\n");
    return 2;
  }
  if (!raw && prog_argc == 0) {
    fprintf(stderr, "tracecorn: record: missing PROGRAM (usage: tracecorn "
                    "record [options] -- PROGRAM [ARGS...])\n");
    return 2;
  }
  if (raw && (!opt.arch || !have_base)) {
    fprintf(stderr, "tracecorn: --raw needs --arch and --base\n");
    return 2;
  }
  /* Checked before the guest starts: a typo must not record anything. */
  struct stat dst;
  if (opt.fs_root) {
    int bad = stat(opt.fs_root, &dst) != 0 ? errno
              : !S_ISDIR(dst.st_mode)      ? ENOTDIR
                                           : 0;
    if (bad) {
      fprintf(stderr, "tracecorn: --root %s: %s\n", opt.fs_root, strerror(bad));
      return 2;
    }
  }
  if (opt.cwd && !opt.fs_root &&
      (stat(opt.cwd, &dst) != 0 || !S_ISDIR(dst.st_mode))) {
    fprintf(stderr, "tracecorn: --cwd %s: no such directory\n", opt.cwd);
    return 2;
  }
  if (opt.cwd && opt.fs_root) {
    char in_root[PATH_MAX];
    snprintf(in_root, sizeof in_root, "%s/%s", opt.fs_root, opt.cwd);
    if (stat(in_root, &dst) != 0 || !S_ISDIR(dst.st_mode)) {
      fprintf(stderr, "tracecorn: --cwd %s: no such directory in --root %s\n",
              opt.cwd, opt.fs_root);
      return 2;
    }
  }
  if (inherit_env) {
    /* tracecorn's environment first; every -E K=V replaces its K. */
    extern char **environ;
    const char *given[MAX_ENV];
    int ngiven = nenv;
    memcpy(given, env, sizeof *env * (size_t)nenv);
    nenv = 0;
    for (char **e = environ; *e && nenv < MAX_ENV; e++) {
      size_t klen = strcspn(*e, "=");
      bool replaced = false;
      for (int i = 0; i < ngiven && !replaced; i++)
        replaced = strncmp(given[i], *e, klen) == 0 && given[i][klen] == '=';
      if (!replaced)
        env[nenv++] = *e;
    }
    for (int i = 0; i < ngiven && nenv < MAX_ENV; i++)
      env[nenv++] = given[i];
  }
  env[nenv] = NULL;
  opt.env = env;
  tranges[ntranges] = NULL;
  tfuncs[ntfuncs] = NULL;
  opt.trace_ranges = ntranges ? tranges : NULL;
  opt.trace_funcs = ntfuncs ? tfuncs : NULL;
  wopts[nwopts] = NULL;
  opt.writer_options = wopts;

  tc_error err = {{0}};
  tc_session *s = tc_session_new(&opt, &err);
  if (!s) {
    fprintf(stderr, "tracecorn: %s\n", err.msg);
    return 125;
  }
  int rc;
  if (raw) {
    size_t n = 0;
    uint8_t *code = read_whole(raw, &n);
    if (!code) {
      fprintf(stderr, "tracecorn: %s: %s\n", raw, strerror(errno));
      tc_session_free(s);
      return 125;
    }
    rc = tc_session_load_raw(s, code, n, base, have_entry ? entry : base, &err);
    free(code);
  } else {
    rc = tc_session_load_elf(s, prog_argv[0], (const char *const *)prog_argv,
                             &err);
  }
  if (rc < 0) {
    fprintf(stderr, "tracecorn: %s\n", err.msg);
    tc_session_free(s);
    return 125;
  }
  const tc_trace_info *info = tc_session_info(s);
  char defprefix[PATH_MAX];
  if (!prefix) {
    snprintf(defprefix, sizeof defprefix, "%s",
             base_name(raw ? raw : prog_argv[0]));
    prefix = defprefix;
  }

  /* Outputs. The whole list is checked before any file is created (a typo
   * must not leave half-made traces behind). "all" means every format with
   * a writer; those that cannot hold this arch are named and skipped. A
   * format asked for by name that cannot hold the arch is refused with a
   * message; the other formats still run. */
  const tc_format *chosen[MAX_FORMATS];
  int nchosen = 0;
  bool all = false;
  char list[1024];
  snprintf(list, sizeof list, "%s", formats);
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
            nchosen < MAX_FORMATS)
          chosen[nchosen++] = *f;
      }
      continue;
    }
    const tc_format *fmt = tc_format_by_name(name);
    if (!fmt || !fmt->open_writer) {
      fprintf(stderr,
              "tracecorn: unknown format '%s' (see `tracecorn "
              "formats`)\n",
              name);
      tc_session_free(s);
      return 2;
    }
    bool dup = false;
    for (int i = 0; i < nchosen; i++)
      dup |= chosen[i] == fmt;
    if (!dup && nchosen < MAX_FORMATS)
      chosen[nchosen++] = fmt;
  }
  /* `-o -`, `-o /dev/stdout`, `-o /dev/fd/3`, a FIFO or a device: a
   * stream, which takes the one trace as it is written (no extension, no
   * temporary name). Not tracecorn's own stdout or stderr, where the
   * program writes too. */
  bool stream = tc_output_is_stream(prefix);
  if (stream) {
    const char *why =
        all || nchosen != 1 ? "holds one format (-f names more)"
        : zst ? "cannot be compressed by -z (pipe it through zstd)"
        : is_own_stdio(prefix)
            ? "is where the program's own output goes too: the trace would "
              "be mixed with it (-o /dev/fd/3 3>FILE keeps them apart)"
            : NULL;
    if (why) {
      fprintf(stderr, "tracecorn: -o %s: a stream output %s\n", prefix, why);
      tc_session_free(s);
      return 2;
    }
  }
  /* `-o NAME.EXT` names the file itself when EXT is a chosen format's
   * extension (users type `-o x.tct`, not `-o x`); a `.zst` suffix asks for
   * compression as -z does. */
  if (prefix != defprefix) {
    snprintf(defprefix, sizeof defprefix, "%s", prefix);
    prefix = defprefix;
  }
  size_t plen = strlen(defprefix);
  if (!stream && plen > 4 && strcmp(defprefix + plen - 4, ".zst") == 0) {
    zst = true;
    defprefix[plen -= 4] = '\0';
  }
  for (int i = 0; i < nchosen && !stream; i++) {
    const char *ext = chosen[i]->extension(info->arch);
    size_t elen = strlen(ext);
    if (elen && plen > elen && strcmp(defprefix + plen - elen, ext) == 0) {
      defprefix[plen - elen] = '\0';
      break;
    }
  }
  /* No existing non-trace file is replaced unless --force (checked for
   * every output before any is created). */
  for (int i = 0; i < nchosen && !force; i++) {
    char path[PATH_MAX];
    int k = snprintf(path, sizeof path, "%s%s%s", prefix,
                     stream ? "" : chosen[i]->extension(info->arch),
                     zst ? ".zst" : "");
    if (k < 0 || k >= (int)sizeof path) {
      fprintf(stderr, "tracecorn: -o %s: name too long\n", prefix);
      tc_session_free(s);
      return 2;
    }
    if (tc_output_clobbers(path, chosen[i])) {
      refuse_clobber(path);
      tc_session_free(s);
      return 2;
    }
  }
  char paths[MAX_FORMATS][PATH_MAX];
  const char *exts[MAX_FORMATS];
  int npaths = 0, refused = 0;
  for (int i = 0; i < nchosen; i++) {
    const tc_format *fmt = chosen[i];
    tc_error why = {{0}};
    if (all && fmt->supports && fmt->supports(info->arch, &why) < 0) {
      if (!opt.quiet)
        fprintf(stderr, "tracecorn: %s: skipped (%s)\n", fmt->name, why.msg);
      continue;
    }
    int k =
        snprintf(paths[npaths], PATH_MAX, "%s%s%s", prefix,
                 stream ? "" : fmt->extension(info->arch), zst ? ".zst" : "");
    if (k < 0 || k >= PATH_MAX) {
      fprintf(stderr, "tracecorn: -o %s: name too long\n", prefix);
      refused++;
      continue;
    }
    exts[npaths] = fmt->extension(info->arch);
    if (tc_session_add_writer(s, fmt, paths[npaths], &err) < 0) {
      fprintf(stderr, "tracecorn: %s\n", err.msg);
      refused++;
      if (g_nrefused < MAX_FORMATS)
        g_refused[g_nrefused++] = fmt;
      continue;
    }
    npaths++;
  }
  if (npaths == 0) {
    fprintf(stderr, "tracecorn: no output can be written\n");
    tc_session_free(s);
    return 125;
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
  if (!opt.fs_root && !opt.quiet && !raw && isatty(2))
    fprintf(stderr, "tracecorn: note: the guest sees the host's files with "
                    "your permissions; --root DIR confines it\n");
  progress prog;
  bool show_progress = !opt.quiet && isatty(2) && progress_start(&prog, s) == 0;
  tc_run_result res = {0};
  rc = tc_session_run(s, &res, &err);
  alarm(0);
  if (show_progress)
    progress_stop(&prog);
  g_session = NULL;
  if (rc < 0)
    fprintf(stderr, "tracecorn: %s\n", err.msg);
  if (!opt.quiet) {
    const char *what = res.reason == TC_EXIT_EXITED      ? "exited"
                       : res.reason == TC_EXIT_SIGNALED  ? "was killed"
                       : res.reason == TC_EXIT_MAX_INSNS ? "was stopped"
                       : res.reason == TC_EXIT_INTERRUPTED &&
                               opt.no_follow_exec && res.status == 0
                           ? "stopped at execve (--no-follow)"
                       : res.reason == TC_EXIT_INTERRUPTED ? "was interrupted"
                                                           : "failed";
    fprintf(stderr,
            "tracecorn: %s %s (status %d): %" PRIu64 " instructions, %" PRIu64
            " syscalls, %" PRIu64 " memory accesses\n",
            base_name(info->exe_path), what, res.status, res.insns,
            res.syscalls, res.mem_accesses);
    for (int i = 0; i < npaths; i++) {
      char sz[32];
      uint64_t bytes = tc_output_size(paths[i]);
      human_size(bytes, sz, sizeof sz);
      fprintf(stderr, "tracecorn: %s %s (%s, %.2f B/insn)\n",
              tc_session_output_ok(s, paths[i]) ? "wrote" : "INCOMPLETE",
              paths[i], sz,
              res.insns ? (double)bytes / (double)res.insns : 0.0);
    }
    /* Forked children: PREFIX.PID.EXT each (none for a stream). */
    uint32_t pids[64];
    size_t nprocs = stream ? 0 : tc_session_pids(s, pids, 64);
    for (size_t k = 1; k < nprocs && k < 64; k++)
      for (int i = 0; i < npaths; i++) {
        char path[PATH_MAX + 32], sz[32];
        snprintf(path, sizeof path, "%s.%u%s%s", prefix, (unsigned)pids[k],
                 exts[i], zst ? ".zst" : "");
        if (!tc_session_output_ok(s, path) && !force &&
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
              nprocs - 64, prefix);
  }
  tc_session_free(s);
  if (rc < 0)
    return 125;
  (void)refused;
  return res.status;
}

/* ------------------------------------------------ dump / strace selection
 * The options that choose what `dump` and `strace` print, turned into one
 * tc_filter (the library applies it: analysis/filter.c). */

enum {
  OPT_RANGE = 0x100,
  OPT_PC,
  OPT_SKIP,
  OPT_COUNT,
  OPT_SYSCALLS_ONLY,
  OPT_SYSCALL,
  OPT_FROM
};

#define FILTER_LONGOPTS                                                        \
  {"range", required_argument, 0, OPT_RANGE},                                  \
      {"pc", required_argument, 0, OPT_PC},                                    \
      {"skip", required_argument, 0, OPT_SKIP},                                \
      {"count", required_argument, 0, OPT_COUNT},                              \
      {"syscalls-only", no_argument, 0, OPT_SYSCALLS_ONLY}, {                  \
    "syscall", required_argument, 0, OPT_SYSCALL                               \
  }

#define FILTER_MAX 64

typedef struct cli_filter {
  tc_filter f;
  const char *ranges[FILTER_MAX + 1];
  const char *names[FILTER_MAX + 1];
  uint64_t pcs[FILTER_MAX];
  int nranges, nnames;
} cli_filter;

static const char filter_help[] =
    "Selection (dump and strace):\n"
    "  --range R          instructions whose address is in R: A-B (hex, B "
    "excluded),\n"
    "                     a function symbol of the program, or a module "
    "(mapped file,\n"
    "                     path or base name); repeatable or "
    "comma-separated\n"
    "  --pc ADDR          instructions at ADDR (hex); repeatable or "
    "comma-separated\n"
    "  --from N           start at instruction N: the format's seek when "
    "it has one\n"
    "                     (rvn), else reading forward; a keyframe with "
    "the state there\n"
    "                     comes first\n"
    "  --skip N           leave out the first N selected records\n"
    "  --count M          then print M records and stop\n"
    "  --syscalls-only    records are syscalls (made by instructions that "
    "pass --range\n"
    "                     and --pc), printed as strace prints them\n"
    "  --syscall NAMES    only these syscalls (comma-separated); also `-e "
    "trace=NAMES`\n"
    "A record is an instruction (with its syscall and fault lines), or a "
    "syscall with\n--syscalls-only. With --range, --pc or --syscall only "
    "records and the exit\nare printed; --from/--skip/--count alone keep "
    "the map and keyframe lines\ninside the window.\n";

/* Splits a comma-separated option value into list (in place). */
static int filter_list(char *arg, const char **list, int *n, const char *opt) {
  for (char *save = NULL, *t = strtok_r(arg, ",", &save); t;
       t = strtok_r(NULL, ",", &save)) {
    if (*n == FILTER_MAX) {
      fprintf(stderr, "tracecorn: at most %d values for %s\n", FILTER_MAX, opt);
      return -1;
    }
    list[(*n)++] = t;
  }
  return 0;
}

/* A selection option: 1 if it was one (and was good), 0 if it is not a
 * selection option, -1 after printing why it is bad. */
static int filter_option(cli_filter *cf, int c, char *arg) {
  uint64_t v;
  switch (c) {
  case OPT_RANGE:
    return filter_list(arg, cf->ranges, &cf->nranges, "--range") < 0 ? -1 : 1;
  case OPT_SYSCALL:
    return filter_list(arg, cf->names, &cf->nnames, "--syscall") < 0 ? -1 : 1;
  case 'e':
    if (strncmp(arg, "trace=", 6) != 0) {
      fprintf(stderr, "tracecorn: -e takes trace=NAMES (e.g. "
                      "trace=openat,read)\n");
      return -1;
    }
    return filter_list(arg + 6, cf->names, &cf->nnames, "-e trace=") < 0 ? -1
                                                                         : 1;
  case OPT_PC: {
    const char *pcs[FILTER_MAX];
    int n = 0;
    if (filter_list(arg, pcs, &n, "--pc") < 0)
      return -1;
    for (int i = 0; i < n; i++) {
      char *end;
      errno = 0;
      unsigned long long a = strtoull(pcs[i], &end, 16);
      if (errno || end == pcs[i] || *end || pcs[i][0] == '-' ||
          cf->f.npcs == FILTER_MAX) {
        fprintf(stderr, "tracecorn: --pc: not a hex address: %s\n", pcs[i]);
        return -1;
      }
      cf->pcs[cf->f.npcs++] = a;
    }
    return 1;
  }
  case OPT_SKIP:
  case OPT_COUNT:
  case OPT_FROM:
    if (parse_u64(arg, &v) < 0 || (c == OPT_COUNT && v == 0)) {
      fprintf(stderr, "tracecorn: --%s: not a %snumber: %s\n",
              c == OPT_SKIP    ? "skip"
              : c == OPT_COUNT ? "count"
                               : "from",
              c == OPT_COUNT ? "positive " : "", arg);
      return -1;
    }
    *(c == OPT_SKIP    ? &cf->f.skip
      : c == OPT_COUNT ? &cf->f.count
                       : &cf->f.from) = v;
    return 1;
  case OPT_SYSCALLS_ONLY:
    cf->f.syscalls_only = 1;
    return 1;
  default:
    return 0;
  }
}

/* Prints FILE through the selection in out_fmt on stdout. */
static int run_dump(const char *path, const tc_format *in, const tc_format *out,
                    cli_filter *cf, const char *const *wopts) {
  cf->ranges[cf->nranges] = NULL;
  cf->names[cf->nnames] = NULL;
  cf->f.ranges = cf->nranges ? cf->ranges : NULL;
  cf->f.syscalls = cf->nnames ? cf->names : NULL;
  cf->f.pcs = cf->pcs;
  tc_error err = {{0}};
  if (tc_convert_filtered(path, in, out, "-", &cf->f, wopts, &err) < 0) {
    fflush(stdout);
    fprintf(stderr, "tracecorn: %s\n", err.msg);
    return 1;
  }
  return 0;
}

/* strace FILE: the syscalls of any readable trace as strace prints them. */
/* dump and strace: exactly one FILE after the options, and the format
 * --format named (NULL: detected). -1 after a usage message. */
static int one_input(int argc, const char *usage, const char *fmt_name,
                     const tc_format **in) {
  if (optind != argc - 1) {
    fprintf(stderr, "usage: %s\n", usage);
    return -1;
  }
  if (fmt_name && !(*in = tc_format_by_name(fmt_name))) {
    fprintf(stderr, "tracecorn: unknown format '%s'\n", fmt_name);
    return -1;
  }
  return 0;
}

static int cmd_strace(int argc, char **argv) {
  static const struct option longopts[] = {
      FILTER_LONGOPTS,
      {"from", required_argument, 0, OPT_FROM},
      {"format", required_argument, 0, 'f'},
      {"help", no_argument, 0, 'h'},
      {0, 0, 0, 0}};
  cli_filter cf;
  memset(&cf, 0, sizeof cf);
  cf.f.syscalls_only = 1;
  const char *in_fmt_name = NULL;
  char sopt[64] = "";
  int c;
  optind = 1;
  while ((c = getopt_long(argc, argv, "f:e:s:h", longopts, NULL)) != -1) {
    int k = filter_option(&cf, c, optarg);
    if (k < 0)
      return 2;
    if (k > 0)
      continue;
    switch (c) {
    case 'f':
      in_fmt_name = optarg;
      break;
    case 's': {
      uint64_t v;
      if (parse_u64(optarg, &v) < 0 || v == 0 || v > (1u << 20)) {
        fprintf(stderr, "tracecorn: -s: not a string size: %s\n", optarg);
        return 2;
      }
      snprintf(sopt, sizeof sopt, "strace.s=%" PRIu64, v);
      break;
    }
    case 'h':
      printf("usage: tracecorn strace [-s N] [-e trace=NAMES] [--format FMT] "
             "[selection] FILE\n\n"
             "Prints the syscalls of a trace (any readable format) as "
             "strace does: decoded\narguments (strings, flags, structs), "
             "return values with errno names, the\nsignal that killed the "
             "process and its exit. Strings and structs are read\nfrom the "
             "guest memory the trace rebuilds (a trace recorded --no-memory "
             "shows\npointers). -s N: string limit (default 32). Same as "
             "`dump --syscalls-only`.\n\n%s",
             filter_help);
      return 0;
    default:
      return 2;
    }
  }
  const tc_format *in = NULL;
  if (one_input(argc, "tracecorn strace [options] FILE", in_fmt_name, &in) < 0)
    return 2;
  const char *wopts[2] = {sopt[0] ? sopt : NULL, NULL};
  return run_dump(argv[optind], in, tc_format_by_name("strace"), &cf, wopts);
}

static int cmd_dump(int argc, char **argv) {
  static const struct option longopts[] = {
      {"json", no_argument, 0, 'j'},
      {"format", required_argument, 0, 'f'},
      {"from", required_argument, 0, 'F'},
      {"help", no_argument, 0, 'h'},
      {"verbose", no_argument, 0, 'v'},
      {"color", required_argument, 0, 'C'},
      {"symbols", required_argument, 0, 'S'},
      {"demangle", no_argument, 0, 'D'},
      FILTER_LONGOPTS,
      {0, 0, 0, 0}};
  bool json = false, verbose = false, demangle = false;
  const char *in_fmt_name = NULL, *color = "auto", *symbols = NULL;
  uint64_t from = 0;
  cli_filter cf;
  memset(&cf, 0, sizeof cf);
  int c;
  optind = 1;
  while ((c = getopt_long(argc, argv, "jf:e:hv", longopts, NULL)) != -1) {
    int k = filter_option(&cf, c, optarg);
    if (k < 0)
      return 2;
    if (k > 0)
      continue;
    switch (c) {
    case 'j':
      json = true;
      break;
    case 'v':
      verbose = true;
      break;
    case 'C':
      if (strcmp(optarg, "auto") && strcmp(optarg, "always") &&
          strcmp(optarg, "never")) {
        fprintf(stderr, "tracecorn: --color takes auto, always or never\n");
        return 2;
      }
      color = optarg;
      break;
    case 'S':
      symbols = optarg;
      break;
    case 'D':
      demangle = true;
      break;
    case 'f':
      in_fmt_name = optarg;
      break;
    case 'F':
      if (parse_u64(optarg, &from) < 0) {
        fprintf(stderr, "tracecorn: --from: not a number: %s\n", optarg);
        return 2;
      }
      break;
    case 'h':
      printf("usage: tracecorn dump [--json] [--format FMT] [selection] "
             "FILE\n\n"
             "Prints a trace as text: one line per instruction (index, "
             "address, bytes,\n"
             "disassembly, changed registers, memory reads R[addr:size]=value "
             "and writes\n"
             "W[addr:size]=new (was old)), plus map, syscall, fault and exit "
             "lines.\n"
             "--json prints one JSON object per event instead. The input "
             "format is\n"
             "detected from the file unless --format names it. Syscall "
             "lines are decoded\nas strace prints them; --syscalls-only "
             "prints only those, exactly as\n`tracecorn strace` does. "
             "Functions are named from the ELF symbols of the\nprogram and "
             "of every library it maps.\n\n"
             "  -v, --verbose         every keyframe's full register state "
             "(default: the\n"
             "                        first; later ones show only where they "
             "are)\n"
             "      --color WHEN      auto (a terminal, unless NO_COLOR is "
             "set), always,\n"
             "                        never\n"
             "      --symbols FILE    more function names: an unstripped "
             "copy of the program\n"
             "      --demangle        C++ names as c++filt prints them\n\n"
             "%s",
             filter_help);
      return 0;
    default:
      return 2;
    }
  }
  const tc_format *in = NULL;
  if (one_input(argc, "tracecorn dump [--json] FILE", in_fmt_name, &in) < 0)
    return 2;
  cf.f.from = from;
  const char *out = json ? "json" : cf.f.syscalls_only ? "strace" : "text";
  /* text writer options: colour on a terminal (NO_COLOR honoured), full
   * keyframes with -v, extra symbols */
  const char *nc = getenv("NO_COLOR");
  bool use_color = strcmp(color, "always") == 0 ||
                   (strcmp(color, "auto") == 0 && isatty(1) && !(nc && *nc));
  static char symopt[PATH_MAX + 16];
  const char *wopts[5];
  int nw = 0;
  if (strcmp(out, "text") == 0) {
    if (use_color)
      wopts[nw++] = "text.color=1";
    if (verbose)
      wopts[nw++] = "text.keyframes=full";
    if (demangle)
      wopts[nw++] = "text.demangle=1";
    if (symbols) {
      snprintf(symopt, sizeof symopt, "text.symbols=%s", symbols);
      wopts[nw++] = symopt;
    }
  }
  wopts[nw] = NULL;
  return run_dump(argv[optind], in, tc_format_by_name(out), &cf, wopts);
}

static void convert_help(void) {
  printf(
      "usage: tracecorn convert [--from FMT] [-O FORMAT.KEY=VALUE] [--strict] "
      "IN [--to FMT] OUT\n\n"
      "Reads the trace IN and writes the same recording to OUT in FMT "
      "(default: the\nformat whose extension OUT has: x.trace64, x.tf, "
      "x.frames, x.tct.zst...).\n\n"
      "Formats: IN is tct, trac, tfile, ucir, bap, rvn, drcov or tenet, found "
      "from its\ncontent (--from FMT names it instead); FMT is any format with "
      "a writer\n(`tracecorn formats`), text and json included. FMT must hold "
      "IN's arch\n(trac, rvn: x86 and x86-64; tenet: also arm; tfile: no "
      "mips64el).\n\n"
      "Losses: each format holds only part of a recording (registers, "
      "memory values,\nread/write kinds, old values, syscalls and their "
      "memory writes, maps, module\nnames, thread ids, faults, the exit; see "
      "docs/formats/README.md). What OUT\ncannot hold of what IN held is "
      "named on stderr in one line:\n  tracecorn: convert: tenet drops: 5 "
      "syscalls, maps, 41 of 59 registers (...)\nNothing is printed when "
      "nothing is lost. --strict makes any loss an error:\nOUT is not "
      "written and the status is 1. What OUT needs and IN lacks is\nrebuilt "
      "and said so (`rebuilt: an exit record`), or the conversion fails\n"
      "saying what is missing (trac needs instruction bytes, which tenet and "
      "drcov\nlack).\n\n"
      "Output: OUT may not be IN; it is written under a temporary name and "
      "renamed\nwhen complete; an existing OUT that is not a trace is only "
      "replaced with\n--force. -O passes writer options (see `record "
      "--help`). An OUT named\n*.zst is compressed with zstd (every format "
      "but rvn, a directory); IN may be\nzstd-compressed, as every "
      "command's input may (told by its content).\n\n"
      "Selection (as in `tracecorn dump --help`): --range R, --pc ADDR, "
      "--skip N,\n--count N, --syscalls-only, --syscall NAMES, -e "
      "trace=NAMES write only part of\nIN; --from-insn N starts at "
      "instruction N (a keyframe with the state there\nfirst). The events "
      "left out still keep the writer's memory image right.\n\n"
      "Exit status: 0 written (with or without losses), 1 IN unreadable, "
      "OUT not\nwritable, or a loss with --strict, 2 usage error or an "
      "existing OUT that is not\na trace.\n");
}

static int cmd_convert(int argc, char **argv) {
  static const struct option longopts[] = {
      {"from", required_argument, 0, 'F'},
      {"to", required_argument, 0, 't'},
      {"writer-option", required_argument, 0, 'O'},
      {"force", no_argument, 0, 'y'},
      {"strict", no_argument, 0, 'S'},
      {"help", no_argument, 0, 'h'},
      {"from-insn", required_argument, 0, OPT_FROM},
      FILTER_LONGOPTS,
      {0, 0, 0, 0}};
  const char *from = NULL, *to = NULL;
  const char *wopts[33];
  int nwopts = 0, c;
  bool force = false, strict = false;
  cli_filter cf;
  memset(&cf, 0, sizeof cf);
  optind = 1;
  while ((c = getopt_long(argc, argv, "F:t:O:e:h", longopts, NULL)) != -1) {
    int k = filter_option(&cf, c, optarg);
    if (k < 0)
      return 2;
    if (k > 0)
      continue;
    if (c == 'F')
      from = optarg;
    else if (c == 't')
      to = optarg;
    else if (c == 'y')
      force = true;
    else if (c == 'O' && nwopts < 32 && strchr(optarg, '.') &&
             strchr(optarg, '='))
      wopts[nwopts++] = optarg;
    else if (c == 'S')
      strict = true;
    else if (c == 'h') {
      convert_help();
      return 0;
    } else {
      fprintf(stderr, "usage: tracecorn convert [--from FMT] "
                      "[-O FORMAT.KEY=VALUE] IN [--to FMT] OUT\n");
      return 2;
    }
  }
  wopts[nwopts] = NULL;
  if (optind != argc - 2) {
    fprintf(stderr,
            "usage: tracecorn convert [--from FMT] IN [--to FMT] OUT\n");
    return 2;
  }
  const tc_format *by_ext =
      to ? NULL : tc_format_by_extension(argv[optind + 1]);
  if (!to && !(to = by_ext ? by_ext->name : NULL)) {
    fprintf(stderr,
            "tracecorn: convert: no format has the extension of %s; name it "
            "with --to FMT (see `tracecorn formats`)\n",
            argv[optind + 1]);
    return 2;
  }
  const tc_format *in = from ? tc_format_by_name(from) : NULL;
  const tc_format *out = tc_format_by_name(to);
  if ((from && !in) || !out) {
    fprintf(stderr, "tracecorn: unknown format '%s'\n", !out ? to : from);
    return 2;
  }
  if (!force && tc_output_clobbers(argv[optind + 1], out)) {
    refuse_clobber(argv[optind + 1]);
    return 2;
  }
  cf.ranges[cf.nranges] = NULL;
  cf.names[cf.nnames] = NULL;
  cf.f.ranges = cf.nranges ? cf.ranges : NULL;
  cf.f.syscalls = cf.nnames ? cf.names : NULL;
  cf.f.pcs = cf.pcs;
  tc_error err = {{0}};
  tc_convert_report rep;
  int rc = tc_convert_checked(argv[optind], in, out, argv[optind + 1], &cf.f,
                              wopts, strict, &rep, &err);
  if (rc < 0) {
    fprintf(stderr, "tracecorn: convert: %s\n", err.msg);
    return 1;
  }
  if (rep.dropped_kinds)
    fprintf(stderr, "tracecorn: convert: %s drops: %s\n", out->name,
            rep.dropped);
  if (rep.rebuilt[0])
    fprintf(stderr, "tracecorn: convert: rebuilt: %s\n", rep.rebuilt);
  return 0;
}

#define TC_MAX_PROCS_SEEN 1024

/* The pids of the child processes a recording made: PREFIX.PID.tct[.zst]
 * files next to PREFIX.tct, in increasing order. Returns how many. */
static int child_pids(const char *prefix, const char *zsfx, unsigned *pids,
                      int max) {
  char dir[PATH_MAX];
  snprintf(dir, sizeof dir, "%s", prefix);
  char *slash = strrchr(dir, '/');
  const char *base = slash ? slash + 1 : prefix;
  if (slash)
    *slash = 0;
  size_t blen = strlen(base);
  DIR *d = opendir(slash ? (dir[0] ? dir : "/") : ".");
  int n = 0;
  for (struct dirent *e; d && (e = readdir(d));) {
    const char *name = e->d_name;
    if (strncmp(name, base, blen) != 0 || name[blen] != '.')
      continue;
    char *end = NULL;
    unsigned long pid = strtoul(name + blen + 1, &end, 10);
    char want[32];
    snprintf(want, sizeof want, ".tct%s", zsfx);
    if (end == name + blen + 1 || strcmp(end, want) != 0 || pid == 0 ||
        pid > 4000000000ul || n == max)
      continue;
    int at = n++;
    while (at > 0 && pids[at - 1] > pid) {
      pids[at] = pids[at - 1];
      at--;
    }
    pids[at] = (unsigned)pid;
  }
  if (d)
    closedir(d);
  return n;
}

/* verify: records once with tct (lossless) plus the formats asked for,
 * then reads each back and compares it with the tct recording. Options
 * other than -f/-o go to `record` unchanged. */
static int cmd_verify(int argc, char **argv) {
  const char *list = "readable", *prefix = NULL, *report = NULL;
  const char *zsfx = ""; /* ".zst" with -z: every file is NAME.EXT.zst */
  char **rec = calloc((size_t)argc + 6, sizeof *rec);
  int n = 0;
  if (!rec)
    return 125;
  rec[n++] = "record";
  bool passthrough = false;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!passthrough && strcmp(a, "--") == 0)
      passthrough = true;
    if (!passthrough && (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0)) {
      printf("usage: tracecorn verify [-f LIST] [-o PREFIX] [record options] "
             "-- PROGRAM [ARGS...]\n\n"
             "Records the program once as tct (lossless) and in each format "
             "of LIST\n(default all: every format that holds the arch and has "
             "a reader),\nreads every file back and "
             "compares each instruction\nwith the tct recording, within what "
             "the format holds: pc, bytes, tid,\nregisters, memory and old "
             "values, syscalls and their memory writes, maps,\nfaults, the "
             "exit. The verdicts, a table format x check (ok, - where the\n"
             "format cannot hold it, or the instruction of the first "
             "difference) and a\nline per format with each first difference "
             "(instruction, field, expected,\nfound), go to stderr (the "
             "guest's\noutput stays on stdout), or to FILE with --report FILE. "
             "Exits 0 when all\nmatch, 1 when a format differs or cannot be "
             "read, 2 on a usage error,\n125 when the program could not be "
             "recorded. Files stay under PREFIX when\n-o is given. With -z "
             "(--zst) every file is compressed and read back so.\n");
      free(rec);
      return 0;
    }
    if (!passthrough && i + 1 < argc &&
        (strcmp(a, "-f") == 0 || strcmp(a, "--format") == 0)) {
      list = argv[++i];
      continue;
    }
    if (!passthrough && i + 1 < argc && strcmp(a, "--report") == 0) {
      report = argv[++i];
      continue;
    }
    if (!passthrough && (strcmp(a, "-z") == 0 || strcmp(a, "--zst") == 0))
      zsfx = ".zst"; /* and passed on to record */
    if (!passthrough && i + 1 < argc &&
        (strcmp(a, "-o") == 0 || strcmp(a, "--output") == 0)) {
      prefix = argv[++i];
      continue;
    }
    rec[n++] = argv[i];
  }
  /* Check the list before anything is recorded or created. */
  {
    char names[1024];
    snprintf(names, sizeof names, "%s", list);
    for (char *save = NULL, *name = strtok_r(names, ",", &save); name;
         name = strtok_r(NULL, ",", &save)) {
      const tc_format *f = tc_format_by_name(name);
      if (strcmp(name, "all") == 0 || strcmp(name, "readable") == 0 ||
          (f && f->open_reader && f->open_writer))
        continue;
      fprintf(stderr,
              "tracecorn: verify: %s '%s' (formats with a reader: see "
              "`tracecorn formats`)\n",
              f ? "cannot read back the format" : "unknown format", name);
      free(rec);
      return 2;
    }
  }
  /* scratch files under $TMPDIR (default /tmp) */
  char tmpdir[PATH_MAX - 16];
  const char *tmproot = getenv("TMPDIR");
  snprintf(tmpdir, sizeof tmpdir, "%s/tracecorn-verify-XXXXXX",
           tmproot && tmproot[0] == '/' && strlen(tmproot) < PATH_MAX - 128
               ? tmproot
               : "/tmp");
  char pathbuf[PATH_MAX];
  if (!prefix) {
    if (!mkdtemp(tmpdir)) {
      fprintf(stderr, "tracecorn: cannot create a scratch directory: %s\n",
              strerror(errno));
      free(rec);
      return 125;
    }
    snprintf(pathbuf, sizeof pathbuf, "%s/trace", tmpdir);
    prefix = pathbuf;
  }
  char fmts[1024];
  snprintf(fmts, sizeof fmts, "tct,%s", list);
  /* record's own options first, then the pass-through ones */
  memmove(rec + 5, rec + 1, (size_t)(n - 1) * sizeof *rec);
  rec[1] = "-f";
  rec[2] = fmts;
  rec[3] = "-o";
  rec[4] = (char *)prefix;
  n += 4;
  int st = cmd_record(n, rec);
  free(rec);
  int result = 0;
  char ref[PATH_MAX + 32];
  snprintf(ref, sizeof ref, "%s.tct%s", prefix, zsfx);
  tc_error err = {{0}};
  const tc_format *tct = tc_format_by_name("tct");
  tc_reader *r = tct->open_reader(ref, &err);
  if (!r) {
    fprintf(stderr, "tracecorn: verify: no recording to compare (%s)\n",
            err.msg);
    if (prefix == pathbuf) { /* nothing worth keeping in the scratch dir */
      for (const tc_format *const *f = tc_formats(); *f; f++)
        for (int id = TC_ARCH_X86; id <= TC_ARCH_MIPS64EL; id++) {
          const tc_arch *a = tc_arch_by_id((tc_arch_id)id);
          if (!a)
            continue;
          char path[PATH_MAX + 32], part[PATH_MAX + 48];
          snprintf(path, sizeof path, "%s%s%s", prefix, (*f)->extension(a),
                   zsfx);
          remove_output(path);
          snprintf(part, sizeof part, "%s.partial%s", prefix,
                   (*f)->extension(a));
          remove_output(part);
        }
      rmdir(tmpdir);
    }
    return st == 2 ? 2 : 125;
  }
  const tc_arch *arch = tct->reader_info(r)->arch;
  tct->close_reader(r);
  FILE *out = stderr;
  if (report && !(out = fopen(report, "w"))) {
    fprintf(stderr, "tracecorn: verify: --report %s: %s\n", report,
            strerror(errno));
    out = stderr;
    result = 1;
  }
  /* The formats to check: the list, with all/readable expanded. */
  const tc_format *check[MAX_FORMATS];
  int ncheck = 0;
  char names[1024];
  snprintf(names, sizeof names, "%s", list);
  for (char *save = NULL, *name = strtok_r(names, ",", &save); name;
       name = strtok_r(NULL, ",", &save)) {
    bool group = strcmp(name, "all") == 0 || strcmp(name, "readable") == 0;
    for (const tc_format *const *f = tc_formats(); *f; f++) {
      bool want =
          group ? (*f)->open_reader != NULL : strcmp((*f)->name, name) == 0;
      bool dup = false;
      for (int i = 0; i < ncheck; i++)
        dup |= check[i] == *f;
      if (want && !dup && *f != tct && ncheck < MAX_FORMATS)
        check[ncheck++] = *f;
    }
  }
  /* One row per format, one column per check: ok, - (the format cannot
   * hold it) or where the first difference is; then a verdict line per
   * format with each first difference in full. */
  tc_verify_table *tab = calloc((size_t)(ncheck ? ncheck : 1), sizeof *tab);
  int *state = calloc((size_t)(ncheck ? ncheck : 1), sizeof *state);
  char(*msg)[600] = calloc((size_t)(ncheck ? ncheck : 1), sizeof *msg);
  if (!tab || !state || !msg) {
    fprintf(stderr, "tracecorn: verify: out of memory\n");
    free(tab);
    free(state);
    free(msg);
    return 125;
  }
  /* The first process, then each child (PREFIX.PID.EXT), alike. */
  unsigned pids[TC_MAX_PROCS_SEEN];
  int npids = child_pids(prefix, zsfx, pids, TC_MAX_PROCS_SEEN);
  for (int proc = -1; proc < npids; proc++) {
    char tag[16] = "";
    if (proc >= 0) {
      snprintf(tag, sizeof tag, ".%u", pids[proc]);
      snprintf(ref, sizeof ref, "%s%s.tct%s", prefix, tag, zsfx);
      fprintf(out, "process %u (%s%s.*):\n", pids[proc], prefix, tag);
      memset(tab, 0, (size_t)(ncheck ? ncheck : 1) * sizeof *tab);
    } else if (npids) {
      fprintf(out, "process 1 of %d (%s.*):\n", npids + 1, prefix);
    }
    int rows = 0;
    for (int i = 0; i < ncheck; i++) {
      const tc_format *f = check[i];
      state[i] = 0; /* 0 not verified, 1 compared, 2 unreadable */
      bool refused = f->supports && f->supports(arch, &err) < 0;
      for (int k = 0; k < g_nrefused; k++)
        refused |= g_refused[k] == f;
      if (!f->open_reader || refused)
        continue; /* no reader; or refused at record time, already reported */
      char path[PATH_MAX + 48];
      snprintf(path, sizeof path, "%s%s%s%s", prefix, tag, f->extension(arch),
               zsfx);
      if (tc_verify_checks(ref, path, f, &tab[i], &err) < 0) {
        snprintf(msg[i], sizeof msg[i], "%s", err.msg);
        state[i] = 2;
        result = 1;
      } else {
        state[i] = 1;
        rows++;
      }
    }
    if (rows) {
      int w[TC_VCHK_COUNT];
      fprintf(out, "%-6s", "format");
      for (int k = 0; k < TC_VCHK_COUNT; k++) {
        w[k] = (int)strlen(tc_verify_check_name(k));
        for (int i = 0; i < ncheck; i++) {
          const tc_verify_result *c = &tab[i].checks[k];
          char cell[40];
          snprintf(cell, sizeof cell, "insn %" PRIu64, c->insn);
          if (state[i] == 1 && c->mismatches && (int)strlen(cell) > w[k])
            w[k] = (int)strlen(cell);
        }
        /* the last column unpadded: no trailing spaces */
        fprintf(out, "  %-*s", k + 1 < TC_VCHK_COUNT ? w[k] : 0,
                tc_verify_check_name(k));
      }
      fprintf(out, "\n");
      for (int i = 0; i < ncheck; i++) {
        if (state[i] != 1)
          continue;
        fprintf(out, "%-6s", check[i]->name);
        for (int k = 0; k < TC_VCHK_COUNT; k++) {
          const tc_verify_result *c = &tab[i].checks[k];
          char cell[40];
          if (!c->held)
            snprintf(cell, sizeof cell, "-");
          else if (!c->mismatches)
            snprintf(cell, sizeof cell, "ok");
          else
            snprintf(cell, sizeof cell, "insn %" PRIu64, c->insn);
          fprintf(out, "  %-*s", k + 1 < TC_VCHK_COUNT ? w[k] : 0, cell);
        }
        fprintf(out, "\n");
      }
    }
    for (int i = 0; i < ncheck; i++) {
      const tc_format *f = check[i];
      if (!f->open_reader) {
        fprintf(out, "%-6s no reader: not verified\n", f->name);
        continue;
      }
      if (state[i] == 2) {
        fprintf(out, "%-6s FAILED: %s\n", f->name, msg[i]);
        continue;
      }
      if (state[i] != 1)
        continue;
      const tc_verify_table *t = &tab[i];
      uint64_t bad = 0;
      for (int k = 0; k < TC_VCHK_COUNT; k++)
        bad += t->checks[k].mismatches;
      if (bad) {
        result = 1;
        fprintf(out, "%-6s FAILED: %" PRIu64 " instructions compared\n",
                f->name, t->insns);
        for (int k = 0; k < TC_VCHK_COUNT; k++) {
          const tc_verify_result *c = &t->checks[k];
          if (c->mismatches)
            fprintf(out,
                    "       %s: instruction %" PRIu64 ", %s: expected %s, "
                    "found %s (%" PRIu64 " difference%s)\n",
                    tc_verify_check_name(k), c->insn, c->field, c->expected,
                    c->found, c->mismatches, c->mismatches == 1 ? "" : "s");
        }
      } else if (t->coverage) {
        fprintf(out,
                "%-6s ok: %" PRIu64 " instructions, each in a block, every "
                "block executed (coverage only)\n",
                f->name, t->insns);
      } else {
        fprintf(out,
                "%-6s ok: %" PRIu64 " instructions match (%u of %u registers "
                "held%s)\n",
                f->name, t->insns, t->regs_held, t->regs_total,
                (f->caps & TC_CAP_MEM) ? ", memory" : "");
      }
    }
  }
  free(tab);
  free(state);
  free(msg);
  if (prefix == pathbuf) {
    /* The scratch directory holds only PREFIX.<ext> files we wrote. */
    for (int proc = -1; proc < npids; proc++)
      for (const tc_format *const *f = tc_formats(); *f; f++) {
        char path[PATH_MAX + 48], tag[16] = "";
        if (proc >= 0)
          snprintf(tag, sizeof tag, ".%u", pids[proc]);
        snprintf(path, sizeof path, "%s%s%s%s", prefix, tag,
                 (*f)->extension(arch), zsfx);
        remove_output(path);
      }
    if (rmdir(tmpdir) != 0)
      fprintf(stderr, "tracecorn: could not remove %s: %s\n", tmpdir,
              strerror(errno));
  }
  if (out != stderr && fclose(out) != 0)
    result = 1;
  return result;
}

static int cmd_info(int argc, char **argv) {
  if (argc != 2 || argv[1][0] == '-') {
    FILE *f = argc == 2 ? stdout : stderr;
    fprintf(f, "usage: tracecorn info FILE\n\n"
               "Reads a trace in any readable format and prints its format, "
               "arch, program,\ninstruction count, first and last PC, "
               "modules, syscalls, size and B/insn,\nthe writer when the "
               "file names it, and whether it can seek (tried).\n");
    return argc == 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))
               ? 0
               : 2;
  }
  const char *path = argv[1];
  tc_error err = {{0}};
  tc_trace_summary st;
  int rc = tc_trace_summarize(path, &st, &err);
  if (!st.format) {
    fprintf(stderr, "tracecorn: %s\n", err.msg);
    return 1;
  }
  const tc_format *fmt = st.format;
  const char *arch = st.arch ? st.arch->name : "?", *exe = st.exe_path;
  uint64_t entry = st.entry;
  uint64_t bytes = tc_output_size(path);
  char sz[32];
  human_size(bytes, sz, sizeof sz);
  printf("file:         %s\n", path);
  printf("format:       %s (%s)\n", fmt->name, fmt->description);
  printf("arch:         %s\n", arch);
  char safe[1024];
  if (exe[0])
    printf("program:      %s\n", tc_escape_text(exe, safe, sizeof safe));
  printf("entry:        0x%" PRIx64 "\n", entry);
  printf("instructions: %" PRIu64 "\n", st.insns);
  if (st.insns)
    printf("first, last:  0x%" PRIx64 ", 0x%" PRIx64 "\n", st.first_pc,
           st.last_pc);
  printf("syscalls:     %" PRIu64 "\n", st.syscalls);
  printf("maps:         %" PRIu64 "\n", st.maps);
  for (int i = 0; i < st.nmodules; i++)
    printf("module:       %s\n",
           tc_escape_text(st.modules[i], safe, sizeof safe));
  if (st.more_modules)
    printf("module:       (%d more)\n", st.more_modules);
  if (st.faults)
    printf("faults:       %" PRIu64 "\n", st.faults);
  if (st.have_exit)
    printf("exit:         status %d%s%s\n", st.exit_status,
           st.exit_message[0] ? ", " : "",
           tc_escape_text(st.exit_message, safe, sizeof safe));
  printf("size:         %s (%" PRIu64 " bytes, %.2f B/insn)\n", sz, bytes,
         st.insns ? (double)bytes / (double)st.insns : 0.0);
  /* writer and seek come from the file itself, not the format's name */
  tc_error rerr = {{0}};
  tc_reader *rd = fmt->open_reader ? fmt->open_reader(path, &rerr) : NULL;
  const char *wr = rd && fmt->reader_writer ? fmt->reader_writer(rd) : NULL;
  if (wr)
    printf("writer:       %s\n", tc_escape_text(wr, safe, sizeof safe));
  else
    printf("writer:       not stated (%s files do not name their writer)\n",
           fmt->name);
  if (rd && fmt->seek && st.insns && fmt->seek(rd, st.insns - 1, &rerr) == 0)
    printf("seekable:     yes (dump --from N jumps to instruction N)\n");
  else if (fmt->seek && st.insns)
    printf("seekable:     no (its index fails: %s)\n",
           tc_escape_text(rerr.msg, safe, sizeof safe));
  else if (st.keyframes)
    printf("seekable:     no (dump --from N reads from the start; %" PRIu64
           " keyframes hold the full register state)\n",
           st.keyframes);
  else
    printf("seekable:     no (dump --from N reads from the start)\n");
  if (rd)
    fmt->close_reader(rd);
  if (rc < 0) {
    fprintf(stderr, "tracecorn: %s\n", err.msg);
    return 1;
  }
  return 0;
}

static int cmd_formats(void) {
  printf("%-8s %-6s %-6s %s\n", "name", "write", "read", "description");
  for (const tc_format *const *f = tc_formats(); *f; f++)
    printf("%-8s %-6s %-6s %s\n", (*f)->name, (*f)->open_writer ? "yes" : "no",
           (*f)->open_reader ? "yes" : "no", (*f)->description);
  return 0;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    usage(stderr);
    return 2;
  }
  const char *cmd = argv[1];
  /* Over a file-size limit, writes fail with EFBIG and are reported like a
   * full disk (an output, a zstd input decompressed into $TMPDIR) instead
   * of killing tracecorn. */
  signal(SIGXFSZ, SIG_IGN);
  /* What a compressed input may decompress to (a zstd bomb): the
   * library's default rule, or this one size. */
  const char *maxd = getenv("TRACECORN_MAX_DECOMPRESSED");
  if (maxd && *maxd) {
    uint64_t v = UINT64_MAX;
    if (strcmp(maxd, "unlimited") != 0 && parse_size(maxd, &v) < 0) {
      fprintf(stderr,
              "tracecorn: TRACECORN_MAX_DECOMPRESSED: not a size (e.g. 64G, "
              "unlimited): %s\n",
              maxd);
      return 2;
    }
    tc_set_max_decompressed(v);
  }
  if (strcmp(cmd, "record") == 0)
    return cmd_record(argc - 1, argv + 1);
  if (strcmp(cmd, "dump") == 0)
    return cmd_dump(argc - 1, argv + 1);
  if (strcmp(cmd, "strace") == 0)
    return cmd_strace(argc - 1, argv + 1);
  if (strcmp(cmd, "convert") == 0)
    return cmd_convert(argc - 1, argv + 1);
  if (strcmp(cmd, "formats") == 0)
    return cmd_formats();
  if (strcmp(cmd, "info") == 0)
    return cmd_info(argc - 1, argv + 1);
  if (strcmp(cmd, "verify") == 0)
    return cmd_verify(argc - 1, argv + 1);
  if (strcmp(cmd, "help") == 0 && argc >= 3) {
    /* `tracecorn help CMD` is `tracecorn CMD --help`. */
    char *sub[] = {argv[2], "--help", NULL};
    if (strcmp(argv[2], "formats") == 0 || strcmp(argv[2], "help") == 0) {
      usage(stdout);
      return 0;
    }
    if (strcmp(argv[2], "record") && strcmp(argv[2], "dump") &&
        strcmp(argv[2], "convert") && strcmp(argv[2], "info") &&
        strcmp(argv[2], "verify") && strcmp(argv[2], "strace")) {
      fprintf(stderr, "tracecorn: help: unknown command '%s'\n", argv[2]);
      usage(stderr);
      return 2;
    }
    return main(2 + 1, (char *[]){argv[0], sub[0], sub[1], NULL});
  }
  if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 ||
      strcmp(cmd, "help") == 0) {
    usage(stdout);
    return 0;
  }
  if (strcmp(cmd, "--version") == 0) {
    printf("tracecorn %s\n", TC_VERSION_STRING);
    return 0;
  }
  fprintf(stderr, "tracecorn: unknown command '%s'\n", cmd);
  usage(stderr);
  return 2;
}
