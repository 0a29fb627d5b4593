/* SPDX-License-Identifier: GPL-2.0-or-later */
/* tracecorn gdbserver: options, the socket or stdio, and --stats; the
 * protocol is analysis/gdbserver.c (docs/gdbserver.md). */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <netdb.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "analysis/gdbserver.h"
#include "analysis/replay.h"
#include "tools/cli.h"
#include "writers/format.h"
#include "writers/tfile/tfile_tdesc.h"
static int listen_on(const char *spec, tc_error *err) {
  const char *colon = strrchr(spec, ':');
  if (!colon || !colon[1]) {
    tc_error_set(err, "--listen HOST:PORT (e.g. localhost:1234, :0)");
    return -1;
  }
  char host[256];
  size_t hl = (size_t)(colon - spec);
  if (hl >= sizeof host) {
    tc_error_set(err, "--listen: host too long");
    return -1;
  }
  memcpy(host, spec, hl);
  host[hl] = 0;
  if (hl >= 2 && host[0] == '[' && host[hl - 1] == ']') { /* [::1]:1234 */
    memmove(host, host + 1, hl - 2);
    host[hl - 2] = 0;
    hl -= 2;
  }
  struct addrinfo hints = {0}, *res = NULL;
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE;
  int rc = getaddrinfo(hl ? host : "localhost", colon + 1, &hints, &res);
  if (rc) {
    tc_error_set(err, "--listen %s: %s", spec, gai_strerror(rc));
    return -1;
  }
  int fd = -1;
  for (struct addrinfo *a = res; a; a = a->ai_next) {
    fd = socket(a->ai_family, a->ai_socktype, a->ai_protocol);
    if (fd < 0)
      continue;
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (bind(fd, a->ai_addr, a->ai_addrlen) == 0 && listen(fd, 1) == 0)
      break;
    close(fd);
    fd = -1;
  }
  freeaddrinfo(res);
  if (fd < 0)
    tc_error_set(err, "--listen %s: %s", spec, strerror(errno));
  return fd;
}

static void usage_gdbserver(FILE *f) {
  fprintf(f,
          "usage: tracecorn gdbserver [--stdio | --listen HOST:PORT] "
          "[options] TRACE\n"
          "\n"
          "Serves a recording to GDB over the remote serial protocol, "
          "forwards and\nbackwards: registers and memory at any "
          "instruction, breakpoints, watchpoints,\nstepi/continue and "
          "reverse-stepi/reverse-continue.\n"
          "\n"
          "  gdb PROGRAM -ex 'target remote | tracecorn gdbserver --stdio "
          "T.tct'\n"
          "  tracecorn gdbserver --listen localhost:1234 T.tct   then in "
          "gdb: target remote :1234\n"
          "\n"
          "  --stdio              speak on standard input/output (the "
          "default)\n"
          "  --listen HOST:PORT   wait for one client on a TCP port (PORT 0: "
          "any; the\n"
          "                       port is printed on stderr)\n"
          "  --interval N         instructions between checkpoints (default "
          "%u)\n"
          "  --index FILE         the index file (default TRACE.gdbidx): "
          "read if it was\n"
          "                       made from this trace, else built and "
          "written there\n"
          "  --no-index           build the index in $TMPDIR, keep no "
          "file\n"
          "  --stats              build the index, time seeks and a full "
          "reverse scan,\n"
          "                       print them and exit (no client)\n"
          "  -q, --quiet          no messages on stderr\n"
          "\n"
          "Monitor commands: `monitor seek N` (go to instruction N), "
          "`monitor info`.\n"
          "The recording is read-only: register and memory writes get an "
          "error.\n"
          "Arches: x86_64, x86, arm64, arm, mips, mipsel; threads are gdb "
          "threads\n(docs/gdbserver.md).\n",
          TC_REPLAY_INTERVAL);
}

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* A line on stderr every 5 s while a long index is built. */
typedef struct gs_progress {
  double start, last;
  bool quiet;
} gs_progress;

static void index_progress(void *ctx, uint64_t insns) {
  gs_progress *p = ctx;
  double t = now_s();
  if (p->quiet || t - p->last < 5)
    return;
  p->last = t;
  fprintf(stderr,
          "tracecorn: gdbserver: indexing: %.0f M instructions read (%.0f s)\n",
          (double)insns / 1e6, t - p->start);
}

/* --stats: what opening built and what seeks cost. */
static int print_stats(tc_replay *rp, double open_s) {
  /* the whole index first (a tct opens at once and indexes as asked) */
  tc_error berr = {{0}};
  printf("open:           %.3f s (%" PRIu64 " instructions indexed)\n", open_s,
         tc_replay_indexed(rp));
  double b0 = now_s();
  if (tc_replay_build(rp, UINT64_MAX, &berr) < 0) {
    fprintf(stderr, "tracecorn: gdbserver: %s\n", berr.msg);
    return 1;
  }
  open_s += now_s() - b0;
  tc_replay_stats st;
  tc_replay_get_stats(rp, &st);
  uint64_t n = tc_replay_insns(rp);
  printf("instructions:   %" PRIu64 "\n", n);
  printf("index (whole):  %.3f s (%.2f M insn/s)\n", open_s,
         open_s > 0 ? (double)n / open_s / 1e6 : 0.0);
  printf("checkpoints:    %" PRIu64 " (every %u instructions)\n",
         st.checkpoints, st.interval);
  printf("pages:          %" PRIu64 " (%" PRIu64 " copies, %" PRIu64
         " KiB with the states)\n",
         st.pages, st.page_versions, st.memory_bytes >> 10);
  printf("log:            %" PRIu64 " KiB (%.1f B/insn)\n", st.log_bytes >> 10,
         n ? (double)st.log_bytes / (double)n : 0.0);
  tc_error err = {{0}};
  /* random seeks, each followed by reading the stack */
  uint64_t x = 88172645463325252ull;
  int seeks = 1000;
  uint8_t buf[64];
  double t0 = now_s(), worst = 0;
  for (int i = 0; i < seeks && n; i++) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    double t1 = now_s();
    if (tc_replay_seek(rp, x % (n + 1), &err))
      return 1;
    const tc_arch *a = tc_replay_arch(rp);
    tc_replay_read(rp, tc_state_get(a, tc_replay_state(rp), a->sp_reg),
                   sizeof buf, buf);
    double d = now_s() - t1;
    if (d > worst)
      worst = d;
  }
  double t = now_s() - t0;
  printf("random seek:    %.1f us mean, %.1f us worst (%d seeks)\n",
         n ? t / seeks * 1e6 : 0.0, worst * 1e6, seeks);
  /* reverse-stepi from the end, 1000 times */
  tc_replay_seek(rp, n, &err);
  t0 = now_s();
  int steps = 0;
  for (; steps < 1000 && tc_replay_pos(rp) > 0; steps++)
    tc_replay_seek(rp, tc_replay_pos(rp) - 1, &err);
  t = now_s() - t0;
  printf("reverse-stepi:  %.1f us mean (%d from the end)\n",
         steps ? t / steps * 1e6 : 0.0, steps);
  /* reverse-continue from the end to a breakpoint at the first pc: the
   * intervals' filters skip the rest */
  tc_replay_seek(rp, 0, &err);
  const tc_arch *a = tc_replay_arch(rp);
  uint64_t first = tc_state_get(a, tc_replay_state(rp), a->pc_reg);
  tc_replay_seek(rp, n, &err);
  tc_replay_stops s = {.pcs = &first, .npcs = 1};
  tc_replay_hit h;
  t0 = now_s();
  tc_replay_run(rp, 1, &s, &h, &err);
  printf("reverse-continue to the first pc: %.3f s (to instruction %" PRIu64
         ")\n",
         now_s() - t0, tc_replay_pos(rp));
  /* the worst case: every record read (a stop no filter can rule out and
   * that never comes), forwards then backwards */
  tc_replay_stops all = {.step = 1, .step_tid = UINT32_MAX - 1};
  tc_replay_seek(rp, 0, &err);
  t0 = now_s();
  tc_replay_run(rp, 0, &all, &h, &err);
  printf("forward scan:   %.3f s (every record, nothing skipped; accesses "
         "and threads only)\n",
         now_s() - t0);
  t0 = now_s();
  tc_replay_run(rp, 1, &all, &h, &err);
  printf("reverse scan:   %.3f s (the same, backwards)\n", now_s() - t0);
  /* the same with the registers rebuilt (a breakpoint every filter lets
   * through: a range step of no thread stands for it) */
  tc_replay_stops regs = {
      .step = 1, .step_tid = UINT32_MAX - 1, .range_hi = UINT64_MAX};
  tc_replay_seek(rp, 0, &err);
  t0 = now_s();
  tc_replay_run(rp, 0, &regs, &h, &err);
  printf("forward scan, registers too:  %.3f s\n", now_s() - t0);
  t0 = now_s();
  tc_replay_run(rp, 1, &regs, &h, &err);
  printf("reverse scan, registers too:  %.3f s\n", now_s() - t0);
  return 0;
}

int cmd_gdbserver(int argc, char **argv) {
  static const char short_usage[] =
      "usage: tracecorn gdbserver [--stdio | --listen HOST:PORT] TRACE "
      "(tracecorn gdbserver --help lists the options)\n";
  static const struct option longopts[] = {
      {"stdio", no_argument, 0, 's'},
      {"listen", required_argument, 0, 'l'},
      {"interval", required_argument, 0, 'i'},
      {"stats", no_argument, 0, 'S'},
      {"index", required_argument, 0, 'I'},
      {"no-index", no_argument, 0, 'N'},
      {"quiet", no_argument, 0, 'q'},
      {"help", no_argument, 0, 'h'},
      {0, 0, 0, 0}};
  const char *listen_spec = NULL, *index_path = NULL;
  bool no_index = false;
  uint32_t interval = 0;
  bool quiet = false, stats = false;
  int c;
  optind = 1;
  while ((c = getopt_long(argc, argv, "qh", longopts, NULL)) != -1) {
    switch (c) {
    case 's':
      listen_spec = NULL;
      break;
    case 'l':
      listen_spec = optarg;
      break;
    case 'i': {
      char *end;
      errno = 0;
      unsigned long v = strtoul(optarg, &end, 0);
      if (*end || errno || v == 0 || v > (1ul << 30) || optarg[0] == '-') {
        fprintf(stderr, "tracecorn: gdbserver: --interval: not a count: %s\n",
                optarg);
        return 2;
      }
      interval = (uint32_t)v;
      break;
    }
    case 'S':
      stats = true;
      break;
    case 'I':
      index_path = optarg;
      no_index = false;
      break;
    case 'N':
      no_index = true;
      break;
    case 'q':
      quiet = true;
      break;
    case 'h':
      usage_gdbserver(stdout);
      return 0;
    default: /* getopt said what was wrong: one hint, not the whole help */
      fprintf(stderr, "%s", short_usage);
      return 2;
    }
  }
  if (optind != argc - 1) {
    fprintf(stderr, "%s", short_usage);
    return 2;
  }
  const char *path = argv[optind];
  signal(SIGPIPE, SIG_IGN);
  tc_error err = {{0}};
  double t0 = now_s();
  gs_progress prog = {.start = t0, .last = t0, .quiet = quiet};
  /* the index file: TRACE.gdbidx unless told otherwise */
  char *def_index = NULL;
  if (!no_index && !index_path) {
    size_t n = strlen(path) + sizeof ".gdbidx";
    if ((def_index = malloc(n)))
      snprintf(def_index, n, "%s.gdbidx", path);
    index_path = def_index;
  }
  tc_replay_opts ro = {.interval = interval,
                       .progress = index_progress,
                       .ctx = &prog,
                       .index_path = no_index ? NULL : index_path};
  tc_replay *rp = tc_replay_open_opts(path, NULL, &ro, &err);
  if (!rp) {
    fprintf(stderr, "tracecorn: gdbserver: %s\n", err.msg);
    free(def_index);
    return 1;
  }
  double open_s = now_s() - t0;
  const char *note = tc_replay_index_note(rp);
  if (note && !quiet)
    fprintf(stderr, "tracecorn: gdbserver: %s\n", note);
  const char *how = "indexed";
  if (tc_replay_index_state(rp) == TC_REPLAY_INDEX_READ)
    how = "index read from its file";
  else if (tc_replay_index_state(rp) == TC_REPLAY_INDEX_SAVED)
    how = "indexed (the index file is kept for the next start)";
  free(def_index);
  if (!tf_layout_for_arch(tc_replay_arch(rp)->id)) {
    fprintf(stderr,
            "tracecorn: gdbserver: %s: no GDB register layout for %s yet\n",
            path, tc_replay_arch(rp)->name);
    tc_replay_free(rp);
    return 1;
  }
  char safe[512];
  if (tc_replay_truncated(rp) && !quiet)
    fprintf(stderr,
            "tracecorn: gdbserver: %s ends early after %" PRIu64
            " instructions (%s); serving what it holds\n",
            path, tc_replay_insns(rp),
            tc_escape_text(tc_replay_truncated(rp), safe, sizeof safe));
  if (stats) {
    printf("index file:     %s\n",
           tc_replay_index_state(rp) == TC_REPLAY_INDEX_READ    ? "read"
           : tc_replay_index_state(rp) == TC_REPLAY_INDEX_SAVED ? "written"
                                                                : "none");
    int rc = print_stats(rp, open_s);
    tc_replay_free(rp);
    return rc;
  }
  if (!quiet)
    fprintf(stderr,
            "tracecorn: gdbserver: %s: %" PRIu64 " instructions (%s), "
            "%s in %.2f s\n",
            tc_escape_text(path, safe, sizeof safe), tc_replay_insns(rp),
            tc_replay_arch(rp)->name, how, open_s);
  int rc = 0;
  if (listen_spec) {
    int lfd = listen_on(listen_spec, &err);
    if (lfd < 0) {
      fprintf(stderr, "tracecorn: gdbserver: %s\n", err.msg);
      tc_replay_free(rp);
      return 1;
    }
    struct sockaddr_storage ss;
    socklen_t sl = sizeof ss;
    char port[32] = "?";
    if (getsockname(lfd, (struct sockaddr *)&ss, &sl) == 0)
      getnameinfo((struct sockaddr *)&ss, sl, NULL, 0, port, sizeof port,
                  NI_NUMERICSERV);
    if (!quiet)
      fprintf(stderr, "tracecorn: gdbserver: listening on port %s\n", port);
    int cfd;
    do
      cfd = accept(lfd, NULL, NULL);
    while (cfd < 0 && errno == EINTR);
    close(lfd);
    if (cfd < 0) {
      fprintf(stderr, "tracecorn: gdbserver: accept: %s\n", strerror(errno));
      tc_replay_free(rp);
      return 1;
    }
    rc = gs_serve_fds(rp, cfd, cfd, &err);
    close(cfd);
  } else {
    rc = gs_serve_fds(rp, 0, 1, &err);
  }
  if (rc)
    fprintf(stderr, "tracecorn: gdbserver: %s\n", err.msg);
  tc_replay_free(rp);
  return rc ? 1 : 0;
}
