/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The public session API: the one place that joins the layers. It loads a
 * program (loaders/), records it (recorder/, which knows no format) and
 * fans every event out to the writers and sinks (writers/, which know no
 * emulator). A failing output is reported once and closed; the others go
 * on. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/elf/modsyms.h"
#include "common/elf/symbols.h"
#include "common/notice.h"
#include "common/sized.h"
#include "emu/engine/emu.h"
#include "emu/linux/linux_sys.h"
#include "loaders/loader.h"
#include "parallel.h"
#include "pipe.h"
#include "recorder/recorder.h"
#include "recorder/sched.h"
#include "session_internal.h"
#include "tracecorn/tracecorn.h"
#include "writers/format.h"
#include "writers/io/outfile.h"
#include "writers/tct/tct_part.h"

#define MAX_OUTPUTS 16

typedef struct output {
  const tc_format *fmt; /* NULL for a sink */
  tc_writer *w;
  tc_event_sink sink;
  void *ctx;
  char path[PATH_MAX];
  char tmp[PATH_MAX]; /* written under this name until closed */
  bool failed;
  bool stream; /* tc_output_is_stream: written directly, no child files */
  bool async;  /* written on a worker thread (lib/pipe.h) */
  tc_error err;
} output;

/* A guest process after the first (made by fork): its own engine,
 * recorder and outputs (PREFIX.PID.EXT for each of the first's files). */
typedef struct child_proc {
  tc_session *session; /* whose recording it is part of */
  tc_emu *emu;
  tc_recorder *rec;
  output *out;
  int nout;
  tc_trace_info info;
  uint8_t *initial_state;
} child_proc;

struct tc_session {
  tc_options opt;
  tc_debug_options debug; /* given to every process (session_internal.h) */
  tc_emu *emu;
  tc_recorder *rec;
  tc_sched *sched; /* its processes (recorder/sched.h) */
  tc_window win;
  /* --trace-range / --trace-func names, resolved in every module as it is
   * mapped (window_map): the symbols, which names matched (per list),
   * whether the program has an interpreter (names can still come), and
   * the process whose map is being looked at (its files). */
  tc_modsyms *win_syms;
  bool win_found[2][TC_WINDOW_MAX];
  bool win_full;
  bool has_interp;
  tc_emu *win_emu;
  tc_pipe *pipe; /* writer threads of the first process's files, or NULL */
  /* The writer threads' queue failed (out of memory): the recording was
   * stopped there and fails (tc_session_run). */
  bool pipe_failed;
  tc_error pipe_err;
  int failed_outputs;
  uint32_t *pids; /* every process's, in creation order */
  size_t npids, cap_pids;
  /* Each finished child's output paths, "1" or "0" (complete) first. */
  char **child_outs;
  size_t nchild_outs, cap_child_outs;
  tc_trace_info info;
  uint8_t *exe_data;
  size_t exe_size;
  char *exe_path;
  char **argv;
  int argc;
  uint8_t *initial_state;
  output out[MAX_OUTPUTS];
  int nout;
  int jobs; /* record -j N (tc_session_set_jobs) */
  /* record --log-only, tracecorn materialize (tc_session_set_log) */
  int log_mode;
  char *log_path;
  void *recipe;
  size_t recipe_len;
};

static void child_free(child_proc *c);
static tc_recorder *attach_child(void *ctx, tc_emu *emu, void **user,
                                 tc_error *err);
static void process_ended(void *ctx, void *user, const tc_run_result *r,
                          bool escaped);
static void free_child(void *user) { child_free(user); }

tc_session *tc_session_new(const tc_options *opt, tc_error *err) {
  tc_session *s = calloc(1, sizeof *s);
  if (!s) {
    tc_error_set(err, "out of memory");
    return NULL;
  }
  tc_options_init(&s->opt);
  if (opt && tc_sized_in(&s->opt, sizeof s->opt, opt, "tc_options", err) < 0) {
    free(s);
    return NULL;
  }
  if (!s->opt.keyframe_interval)
    s->opt.keyframe_interval = 4096;
  if (!s->opt.stack_size)
    s->opt.stack_size = 8u << 20;
  tc_sched_ops ops = {s, attach_child, process_ended};
  if (!(s->sched = tc_sched_new(s->opt.max_insns, &ops))) {
    tc_error_set(err, "out of memory");
    free(s);
    return NULL;
  }
  return s;
}

void tc_session_set_debug(tc_session *s, const tc_debug_options *debug) {
  s->debug = *debug;
  if (s->emu)
    s->emu->debug = *debug;
}

/* Engines abandoned by tc_session_escape: kept reachable, never freed
 * (closing one in an unknown state could crash; the process is ending). */
static tc_emu *abandoned_engines[8];

void tc_session_free(tc_session *s) {
  if (!s)
    return;
  tc_pipe_close(s->pipe); /* a run that failed on its way */
  tc_modsyms_free(s->win_syms);
  /* Outputs of a session that never ran hold nothing: removed. */
  for (int i = 0; i < s->nout; i++)
    if (s->out[i].w) {
      s->out[i].fmt->close_writer(s->out[i].w, NULL);
      if (strcmp(s->out[i].tmp, s->out[i].path) != 0)
        tc_outfile_discard(s->out[i].tmp);
    }
  /* An engine abandoned by tc_session_escape is in no state to be closed:
   * it is left to the process's exit. */
  tc_sched_free(s->sched, free_child);
  bool abandoned = s->rec && tc_recorder_escaped(s->rec);
  tc_recorder_free(s->rec);
  if (!abandoned) {
    tc_emu_free(s->emu);
  } else {
    for (size_t i = 0; i < sizeof abandoned_engines / sizeof *abandoned_engines;
         i++)
      if (!abandoned_engines[i]) {
        abandoned_engines[i] = s->emu;
        break;
      }
  }
  free(s->exe_data);
  free(s->exe_path);
  for (int i = 0; i < s->argc; i++)
    free(s->argv[i]);
  free(s->argv);
  free(s->initial_state);
  free(s->pids);
  for (size_t i = 0; i < s->nchild_outs; i++)
    free(s->child_outs[i]);
  free(s->child_outs);
  free(s->log_path);
  free(s->recipe);
  free(s);
}

/* Reads a program file given on the command line (a host path). */
static uint8_t *read_program(const char *path, size_t *size, tc_error *err) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    tc_error_set(err, "%s: %s", path, strerror(errno));
    return NULL;
  }
  return tc_loader_read_fd(fd, path, size, err);
}

static int copy_argv(tc_session *s, const char *const *argv) {
  int n = 0;
  while (argv && argv[n])
    n++;
  s->argv = calloc((size_t)n + 1, sizeof *s->argv);
  if (!s->argv)
    return -1;
  for (int i = 0; i < n; i++)
    if (!(s->argv[i] = strdup(argv[i])))
      return -1;
  s->argc = n;
  return 0;
}

static int finish_load(tc_session *s, const tc_load_result *lr, tc_error *err) {
  const tc_arch *a = s->emu->arch;
  int rc = tc_linux_process_init(s->emu);
  if (rc < 0) {
    tc_error_set(err, "cannot set up the process: %s", strerror(-rc));
    return -1;
  }
  s->initial_state = calloc(1, a->state_size);
  if (!s->initial_state) {
    tc_error_set(err, "out of memory");
    return -1;
  }
  tc_emu_read_state(s->emu, s->initial_state);
  s->info.arch = a;
  s->info.entry = lr->entry;
  s->info.load_base = lr->load_base;
  s->info.pid = s->emu->pid;
  s->info.exe_path = s->exe_path;
  s->info.exe_data = s->exe_data;
  s->info.exe_size = s->exe_size;
  s->info.argc = s->argc;
  s->info.argv = (const char *const *)s->argv;
  s->info.seed = s->opt.seed;
  s->info.keyframe_interval = s->opt.keyframe_interval;
  s->info.has_memory = s->opt.record_memory != 0;
  /* recorder/recorder.h: continuity (not_continuous: writers compare
   * whole states, as for converted streams; the tests compare both) */
  s->info.continuous = !s->debug.not_continuous;
  s->info.initial_state = s->initial_state;
  s->info.writer_options = s->opt.writer_options;
  return 0;
}

int tc_session_load_elf(tc_session *s, const char *path,
                        const char *const *argv, tc_error *err) {
  if (s->emu) {
    tc_error_set(err, "a program is already loaded");
    return -1;
  }
  s->exe_data = read_program(path, &s->exe_size, err);
  if (!s->exe_data)
    return -1;
  tc_elf_image img;
  if (tc_elf_parse(s->exe_data, s->exe_size, &img, err) < 0) {
    char m[sizeof err->msg];
    snprintf(m, sizeof m, "%s", err ? err->msg : "");
    tc_error_set(err, "%s: %s", path, m);
    return -1;
  }
  const tc_arch *want = s->opt.arch ? tc_arch_by_name(s->opt.arch) : NULL;
  if (want && want != img.arch) {
    tc_error_set(err, "%s is a %s program, but --arch says %s", path,
                 img.arch->name, want->name);
    return -1;
  }
  const char *default_argv[] = {path, NULL};
  if (copy_argv(s, argv && argv[0] ? argv : default_argv) < 0 ||
      !(s->exe_path = strdup(path))) {
    tc_error_set(err, "out of memory");
    return -1;
  }
  s->emu = tc_linux_emu_new(img.arch, &s->opt, err);
  if (!s->emu)
    return -1;
  s->emu->debug = s->debug;
  s->has_interp = img.has_interp;
  char host[TC_PATH_MAX];
  if (!realpath(path, host))
    snprintf(host, sizeof host, "%s", path);
  /* Held open from before the guest runs: /proc/self/exe acts on this
   * file whatever the guest later renames or links. */
  int exe = open(path, O_RDONLY | O_CLOEXEC);
  if (exe < 0 || tc_emu_set_exe(s->emu, exe, host) < 0) {
    tc_error_set(err, "%s: %s", path, strerror(errno));
    if (exe >= 0)
      close(exe);
    return -1;
  }
  close(exe);
  /* A dynamic program: its interpreter comes from the guest's view of
   * the filesystem (the host's /, or --root: e.g. a cross sysroot). */
  tc_interp_file interp;
  if (img.has_interp && tc_linux_open_interp(s->emu, &img, &interp, err) < 0) {
    char m[sizeof err->msg];
    snprintf(m, sizeof m, "%s", err ? err->msg : "");
    tc_error_set(err, "%s: %s", path, m);
    tc_loader_interp_free(&interp);
    return -1;
  }
  tc_load_result lr;
  int lrc = tc_load_elf_interp(s->emu, &img, s->exe_data, s->exe_size, path,
                               (const char *const *)s->argv, s->opt.env,
                               img.has_interp ? &interp.in : NULL, &lr, err);
  if (img.has_interp)
    tc_loader_interp_free(&interp);
  if (lrc < 0)
    return -1;
  /* /proc/self/exe is always absolute (glibc asserts it); AT_EXECFN keeps
   * the name as given, like execve. */
  if (!s->opt.fs_root)
    snprintf(s->emu->exe_guest_path, sizeof s->emu->exe_guest_path, "%s",
             s->emu->exe_host_path);
  return finish_load(s, &lr, err);
}

int tc_session_load_raw(tc_session *s, const uint8_t *code, size_t size,
                        uint64_t base, uint64_t entry, tc_error *err) {
  if (s->emu) {
    tc_error_set(err, "a program is already loaded");
    return -1;
  }
  const tc_arch *a = tc_arch_by_name(s->opt.arch);
  if (!a) {
    tc_error_set(err, "raw code needs a known --arch (got %s)",
                 s->opt.arch ? s->opt.arch : "none");
    return -1;
  }
  s->exe_data = malloc(size ? size : 1);
  if (!s->exe_data || copy_argv(s, NULL) < 0 ||
      !(s->exe_path = strdup("[raw]"))) {
    tc_error_set(err, "out of memory");
    return -1;
  }
  memcpy(s->exe_data, code, size);
  s->exe_size = size;
  s->emu = tc_linux_emu_new(a, &s->opt, err);
  if (!s->emu)
    return -1;
  s->emu->debug = s->debug;
  tc_load_result lr;
  if (tc_load_raw(s->emu, code, size, base, entry, &lr, err) < 0)
    return -1;
  return finish_load(s, &lr, err);
}

/* --trace-range / --trace-func. "A-B" and "0x..." are addresses; a name
 * is NAME (a function of that name in any module), MODULE:NAME or MODULE
 * (its code), resolved in every module as it is mapped: the program and
 * its interpreter at the start, each library when the guest maps it
 * (window_map), ld.so's and dlopen's alike. */

/* "A-B" or "0x..." (hex): 1 with the range, else 0. */
static int window_numeric(const char *name, uint64_t *lo, uint64_t *hi) {
  if (strncmp(name, "0x", 2) != 0 && !strchr(name, '-'))
    return 0;
  char *end = NULL;
  *lo = strtoull(name, &end, 16);
  if (*end == '-')
    *hi = strtoull(end + 1, &end, 16);
  else
    *hi = *lo + 1;
  return *end == 0 && *hi > *lo;
}

/* Adds to the session's window (the one later processes start with) and
 * to r's, running, if there is one. */
static void window_add(tc_session *s, tc_recorder *r, bool func, uint64_t lo,
                       uint64_t hi) {
  if (tc_window_add(&s->win, func, lo, hi) < 0 ||
      (r && tc_recorder_window_add(r, func, lo, hi) < 0))
    s->win_full = true;
}

/* What the names resolve to in module i. */
static void window_module(tc_session *s, tc_recorder *r, size_t i) {
  const char *const *lists[2] = {s->opt.trace_ranges, s->opt.trace_funcs};
  for (int k = 0; k < 2; k++)
    for (size_t j = 0; lists[k] && lists[k][j] && j < TC_WINDOW_MAX; j++) {
      uint64_t lo, hi;
      if (window_numeric(lists[k][j], &lo, &hi))
        continue;
      for (size_t nth = 0;
           tc_modsyms_lookup(s->win_syms, i, lists[k][j], nth, &lo, &hi);
           nth++) {
        s->win_found[k][j] = true;
        window_add(s, r, k == 1, lo, hi);
      }
    }
}

/* A region: the names of its module (MODULE) take its code. */
static void window_region(tc_session *s, tc_recorder *r, const tc_region *g) {
  if (!(g->prot & TC_PROT_EXEC) || g->name[0] != '/')
    return;
  const char *const *lists[2] = {s->opt.trace_ranges, s->opt.trace_funcs};
  for (int k = 0; k < 2; k++)
    for (size_t j = 0; lists[k] && lists[k][j] && j < TC_WINDOW_MAX; j++)
      if (tc_module_name_matches(g->name, lists[k][j])) {
        s->win_found[k][j] = true;
        window_add(s, r, false, g->start, g->end);
      }
  int i =
      tc_modsyms_map(s->win_syms, g->name, g->start, g->file_offset, g->prot);
  if (i >= 0)
    window_module(s, r, (size_t)i);
}

/* A module's file as the guest sees it (under --root), through the
 * process's own file system view. */
static FILE *window_open(void *ctx, const char *path) {
  tc_session *s = ctx;
  int fd = s->win_emu ? tc_guestfs_open_read(s->win_emu, path) : -1;
  if (fd < 0)
    return NULL;
  FILE *f = fdopen(fd, "rb");
  if (!f)
    close(fd);
  return f;
}

/* The recorder's look at each map the guest makes. */
static void window_map(void *ctx, tc_recorder *r, tc_emu *emu,
                       const tc_region *g) {
  tc_session *s = ctx;
  s->win_emu = emu;
  window_region(s, r, g);
  s->win_emu = NULL;
}

static int resolve_window(tc_session *s, tc_window *w, tc_error *err) {
  memset(w, 0, sizeof *w);
  const char *const *lists[2] = {s->opt.trace_ranges, s->opt.trace_funcs};
  if (!lists[0] && !lists[1])
    return 0;
  w->on = true;
  for (int k = 0; k < 2; k++) {
    size_t n = 0;
    while (lists[k] && lists[k][n])
      n++;
    if (n > TC_WINDOW_MAX) {
      tc_error_set(err, "at most %d %s", TC_WINDOW_MAX,
                   k ? "--trace-func" : "--trace-range");
      return -1;
    }
    for (size_t j = 0; j < n; j++) {
      uint64_t lo, hi;
      if (window_numeric(lists[k][j], &lo, &hi)) {
        s->win_found[k][j] = true;
        window_add(s, NULL, k == 1, lo, hi);
      }
    }
  }
  s->win_syms = tc_modsyms_new(s->info.arch->elf_machine, window_open, s);
  if (!s->win_syms) {
    tc_error_set(err, "out of memory");
    return -1;
  }
  int prog = tc_modsyms_add_program(s->win_syms, s->exe_path, s->exe_data,
                                    s->exe_size, s->info.load_base);
  if (prog >= 0)
    window_module(s, NULL, (size_t)prog);
  /* the program's regions and its interpreter's, mapped by the loader */
  s->win_emu = s->emu;
  for (size_t i = 0; i < s->emu->nregions; i++)
    window_region(s, NULL, &s->emu->regions[i]);
  s->win_emu = NULL;
  /* without an interpreter no module comes later: a name not found now
   * never will be */
  for (int k = 0; k < 2 && !s->has_interp; k++)
    for (size_t j = 0; lists[k] && lists[k][j]; j++)
      if (!s->win_found[k][j]) {
        tc_error_set(err, "%s %s: no such address range or function in %s",
                     k ? "--trace-func" : "--trace-range", lists[k][j],
                     s->exe_path ? s->exe_path : "the program");
        return -1;
      }
  return 0;
}

/* After the run: the names that never matched, said once each. */
static void window_unresolved(tc_session *s) {
  const char *const *lists[2] = {s->opt.trace_ranges, s->opt.trace_funcs};
  if (s->opt.quiet || !s->win.on)
    return;
  for (int k = 0; k < 2; k++)
    for (size_t j = 0; lists[k] && lists[k][j] && j < TC_WINDOW_MAX; j++)
      if (!s->win_found[k][j])
        tc_notice("%s %s: no function or module of that name in the "
                  "program or the libraries it loaded; nothing recorded for "
                  "it",
                  k ? "--trace-func" : "--trace-range", lists[k][j]);
  if (s->win_full)
    tc_notice("the recording window holds at most %d ranges and %d "
              "functions; the names matched more, the rest were not recorded",
              TC_WINDOW_CAP, TC_WINDOW_CAP);
}

uint64_t tc_session_output_bytes(tc_session *s) {
  uint64_t total = 0;
  for (int i = 0; i < s->nout; i++)
    if (s->out[i].fmt) /* written under tmp until closed */
      total += tc_output_size(s->out[i].tmp);
  return total;
}

uint64_t tc_session_progress(tc_session *s) {
  tc_recorder *r = __atomic_load_n(&s->rec, __ATOMIC_ACQUIRE);
  return r ? tc_recorder_insns(r) : 0;
}

const tc_trace_info *tc_session_info(tc_session *s) {
  return s->emu ? &s->info : NULL;
}

/* 1 (with a message) if an output file would be inside the guest's --root:
 * the guest could rename it, put a symlink in its place and have a host
 * file read into the trace at the end (-z) or the trace written through
 * the link. Outputs go outside the root; a stream is a descriptor. */
static bool output_in_root(const tc_session *s, const char *path,
                           tc_error *err) {
  if (!s->opt.fs_root || !s->opt.fs_root[0])
    return false;
  char dir[PATH_MAX], real_dir[PATH_MAX], real_root[PATH_MAX];
  snprintf(dir, sizeof dir, "%s", path);
  char *slash = strrchr(dir, '/');
  if (!slash)
    snprintf(dir, sizeof dir, ".");
  else if (slash == dir)
    dir[1] = 0;
  else
    *slash = 0;
  if (!realpath(dir, real_dir) || !realpath(s->opt.fs_root, real_root) ||
      strcmp(real_root, "/") == 0)
    return false; /* no such directory (the open fails), or no sandbox */
  size_t n = strlen(real_root);
  if (strncmp(real_dir, real_root, n) != 0 ||
      (real_dir[n] != 0 && real_dir[n] != '/'))
    return false;
  tc_error_set(err,
               "%s: inside the guest's root %s, where the guest could replace "
               "it: write the trace outside the root (-o DIR/NAME)",
               path, s->opt.fs_root);
  return true;
}

int tc_session_add_writer(tc_session *s, const tc_format *fmt, const char *path,
                          tc_error *err) {
  if (!s->emu) {
    tc_error_set(err, "load a program before adding outputs");
    return -1;
  }
  if (s->nout == MAX_OUTPUTS) {
    tc_error_set(err, "too many outputs (at most %d)", MAX_OUTPUTS);
    return -1;
  }
  if (!fmt->open_writer) {
    tc_error_set(err, "%s: this format has no writer", fmt->name);
    return -1;
  }
  if (fmt->supports && fmt->supports(s->info.arch, err) < 0) {
    /* Say which formats can hold this arch instead. */
    char alt[256] = "";
    size_t n = 0;
    for (const tc_format *const *f = tc_formats(); *f; f++) {
      if (!(*f)->open_writer ||
          ((*f)->supports && (*f)->supports(s->info.arch, NULL) < 0))
        continue;
      int k =
          snprintf(alt + n, sizeof alt - n, "%s%s", n ? ", " : "", (*f)->name);
      if (k < 0 || (size_t)k >= sizeof alt - n)
        break;
      n += (size_t)k;
    }
    if (err && n) {
      size_t m = strlen(err->msg);
      snprintf(err->msg + m, sizeof err->msg - m, " (formats for %s: %s)",
               s->info.arch->name, alt);
    }
    return -1;
  }
  char tmp[PATH_MAX];
  bool stream = tc_output_is_stream(path);
  if (!stream && output_in_root(s, path, err))
    return -1;
  tc_outfile_temp(path, tmp, sizeof tmp);
  tc_writer *w = fmt->open_writer(tmp, &s->info, err);
  if (!w)
    return -1;
  if (tc_outfile_check(tmp, path, err) < 0) {
    fmt->close_writer(w, NULL);
    tc_outfile_discard(tmp);
    return -1;
  }
  output *o = &s->out[s->nout++];
  memset(o, 0, sizeof *o);
  o->fmt = fmt;
  o->w = w;
  snprintf(o->path, sizeof o->path, "%s", path);
  snprintf(o->tmp, sizeof o->tmp, "%s", tmp);
  o->stream = stream;
  return 0;
}

int tc_session_add_sink(tc_session *s, tc_event_sink sink, void *ctx,
                        tc_error *err) {
  if (s->nout == MAX_OUTPUTS) {
    tc_error_set(err, "too many outputs (at most %d)", MAX_OUTPUTS);
    return -1;
  }
  output *o = &s->out[s->nout++];
  memset(o, 0, sizeof *o);
  o->sink = sink;
  o->ctx = ctx;
  return 0;
}

static void deliver_one(void *ctx, const tc_event *ev) {
  output *o = ctx;
  if (o->failed)
    return;
  int rc = o->fmt ? o->fmt->write_event(o->w, ev, &o->err)
                  : o->sink(o->ctx, ev, &o->err);
  if (rc < 0) {
    o->failed = true;
    tc_notice("%s (this output stops here)", o->err.msg);
  }
}

static void deliver(output *out, int nout, const tc_event *ev) {
  for (int i = 0; i < nout; i++)
    if (!out[i].async)
      deliver_one(&out[i], ev);
}

/* After the queue failed: the EXIT of a process the session stopped for
 * it says why, not "interrupted" (*tmp holds the copy). */
static const tc_event *failure_exit(tc_session *s, const tc_event *ev,
                                    tc_event *tmp) {
  if (!s->pipe_failed || ev->kind != TC_EV_EXIT ||
      ev->u.exit.reason != TC_EXIT_INTERRUPTED)
    return ev;
  *tmp = *ev;
  tmp->u.exit.reason = TC_EXIT_ERROR;
  tmp->u.exit.status = 125;
  tmp->u.exit.signal = 0;
  tmp->u.exit.message = s->pipe_err.msg;
  return tmp;
}

static void stop_processes(tc_session *s, int status);
static void stop_writer_threads(tc_session *s);

/* The queue could not take ev: what it holds is written by the writer
 * threads, which then end; ev and everything after it are written on
 * this thread, and the recording stops, failed, as on any out of memory
 * (the files keep every event until the end). */
static void writer_threads_failed(tc_session *s, const tc_event *ev) {
  bool was_async[MAX_OUTPUTS];
  for (int i = 0; i < s->nout; i++)
    was_async[i] = s->out[i].async;
  stop_writer_threads(s);
  for (int i = 0; i < s->nout; i++)
    if (was_async[i])
      deliver_one(&s->out[i], ev);
  char why[sizeof s->pipe_err.msg];
  snprintf(why, sizeof why, "%s", s->pipe_err.msg);
  tc_error_set(&s->pipe_err, "writer threads: %s; the recording stopped there",
               why);
  s->pipe_failed = true;
  stop_processes(s, 125);
}

static void fan_out(void *ctx, const tc_event *ev) {
  tc_session *s = ctx;
  tc_event tmp;
  ev = failure_exit(s, ev, &tmp);
  deliver(s->out, s->nout, ev);
  if (s->pipe && tc_pipe_push(s->pipe, ev, &s->pipe_err) < 0)
    writer_threads_failed(s, ev);
}

/* The first process's trace files get a writer thread each when the host
 * has a second CPU (tc_options.writer_threads); sinks, standard output and
 * writers with a thread of their own (tct) stay on the recorder's
 * thread. */
static void start_writer_threads(tc_session *s) {
  if (s->opt.writer_threads == TC_WRITER_THREADS_OFF ||
      (s->opt.writer_threads != TC_WRITER_THREADS_ON &&
       sysconf(_SC_NPROCESSORS_ONLN) < 2))
    return;
  tc_pipe_consumer fns[MAX_OUTPUTS];
  void *ctxs[MAX_OUTPUTS];
  int n = 0;
  for (int i = 0; i < s->nout; i++) {
    output *o = &s->out[i];
    if (o->fmt && o->w && !o->fmt->own_thread && strcmp(o->path, "-") != 0 &&
        strncmp(o->path, "/dev/", 5) != 0) {
      fns[n] = deliver_one;
      ctxs[n++] = o;
    }
  }
  tc_error err = {{0}};
  if (!n || !(s->pipe = tc_pipe_new(s->info.arch, n, fns, ctxs,
                                    s->debug.writer_threads_check != 0, &err)))
    return; /* the writers run on this thread */
  for (int i = 0; i < n; i++)
    ((output *)ctxs[i])->async = true;
}

/* Every queued event written: the worker threads end. An output whose
 * thread ran out of memory missed events: it failed. */
static void stop_writer_threads(tc_session *s) {
  int failed = tc_pipe_close(s->pipe);
  s->pipe = NULL;
  for (int i = 0, k = 0; i < s->nout; i++) {
    output *o = &s->out[i];
    if (o->async && (failed >> k++) & 1 && !o->failed) {
      o->failed = true;
      tc_error_set(&o->err, "%s: out of memory in its writer thread", o->path);
      tc_notice("%s (this output stops here)", o->err.msg);
    }
    o->async = false;
  }
}

static void fan_out_child(void *ctx, const tc_event *ev) {
  child_proc *c = ctx;
  tc_event tmp;
  deliver(c->out, c->nout, failure_exit(c->session, ev, &tmp));
}

int tc_session_output_ok(tc_session *s, const char *path) {
  for (int i = 0; i < s->nout; i++)
    if (s->out[i].fmt && strcmp(s->out[i].path, path) == 0)
      return !s->out[i].failed;
  for (size_t i = 0; i < s->nchild_outs; i++)
    if (strcmp(s->child_outs[i] + 1, path) == 0)
      return s->child_outs[i][0] == '1';
  return 0;
}

/* Remembers how a child's output ended (tc_session_output_ok). */
static void note_child_output(tc_session *s, const output *o) {
  if (s->nchild_outs == s->cap_child_outs) {
    size_t cap = s->cap_child_outs ? 2 * s->cap_child_outs : 16;
    char **p = realloc(s->child_outs, cap * sizeof *p);
    if (!p)
      return;
    s->child_outs = p;
    s->cap_child_outs = cap;
  }
  size_t n = strlen(o->path);
  char *e = malloc(n + 2);
  if (!e)
    return;
  e[0] = o->failed ? '0' : '1';
  memcpy(e + 1, o->path, n + 1);
  s->child_outs[s->nchild_outs++] = e;
}

void tc_session_stop(tc_session *s) { tc_session_interrupt(s, 2); }

void tc_session_interrupt(tc_session *s, int signal) {
  stop_processes(s, 128 + signal);
}

/* Every process ends before its next instruction, with status. */
static void stop_processes(tc_session *s, int status) {
  tc_sched_stop(s->sched, status);
  tc_recorder *first = s->rec; /* made before the scheduler has it */
  if (first)
    tc_recorder_stop(first, status);
}

int tc_session_escape(tc_session *s) {
  tc_recorder *r = tc_sched_running(s->sched);
  return r ? tc_recorder_escape(r) : -1;
}

/* Closes and commits a process's outputs; counts the failed ones. */
static void close_outputs(tc_session *s, output *out, int nout) {
  for (int i = 0; i < nout; i++) {
    output *o = &out[i];
    if (o->w) {
      tc_error cerr = {{0}};
      if (o->fmt->close_writer(o->w, &cerr) < 0) {
        tc_notice("%s", cerr.msg);
        o->failed = true;
      }
      o->w = NULL;
      if (o->failed && strcmp(o->tmp, o->path) != 0)
        tc_notice("the partial trace is kept as %s", o->tmp);
      else if (tc_outfile_commit(o->tmp, o->path, &cerr) < 0) {
        tc_notice("%s", cerr.msg);
        o->failed = true;
      }
    }
    if (o->failed)
      s->failed_outputs++;
  }
}

/* PREFIX.PID.EXT for an output PREFIX.EXT[.zst] of the first process
 * (PATH.PID when the path does not end in the format's extension). */
static int child_path(const char *path, const char *ext, uint32_t pid,
                      char *out, size_t max) {
  size_t n = strlen(path), e = strlen(ext);
  const char *base = strrchr(path, '/');
  base = base ? base + 1 : path;
  size_t cut = n;
  for (int zst = 0; zst < 2; zst++) {
    size_t tail = e + (zst ? 4 : 0);
    if (e && n >= tail && (size_t)(path + n - base) > tail &&
        strncmp(path + n - tail, ext, e) == 0 &&
        (!zst || strcmp(path + n - 4, ".zst") == 0)) {
      cut = n - tail;
      break;
    }
  }
  int k = snprintf(out, max, "%.*s.%u%s", (int)cut, path, (unsigned)pid,
                   path + cut);
  return k < 0 || (size_t)k >= max ? -1 : 0;
}

static void child_free(child_proc *c) {
  if (!c)
    return;
  for (int i = 0; i < c->nout; i++)
    if (c->out[i].w) {
      c->out[i].fmt->close_writer(c->out[i].w, NULL);
      tc_outfile_discard(c->out[i].tmp);
    }
  tc_recorder_free(c->rec);
  tc_emu_free(c->emu);
  free(c->out);
  free(c->initial_state);
  free(c);
}

static void note_pid(tc_session *s, uint32_t pid) {
  if (s->npids == s->cap_pids) {
    size_t cap = s->cap_pids ? 2 * s->cap_pids : 16;
    uint32_t *p = realloc(s->pids, cap * sizeof *p);
    if (!p)
      return; /* only the list for tc_session_pids is shorter */
    s->pids = p;
    s->cap_pids = cap;
  }
  s->pids[s->npids++] = pid;
}

size_t tc_session_pids(tc_session *s, uint32_t *pids, size_t max) {
  for (size_t i = 0; i < s->npids && i < max; i++)
    pids[i] = s->pids[i];
  return s->npids;
}

/* A child made by fork (the scheduler's attach): its outputs, named after
 * the first process's, and its recorder, whose stream starts from the
 * copied state (MAP events with the contents, a KEYFRAME). */
static tc_recorder *attach_child(void *ctx, tc_emu *emu, void **user,
                                 tc_error *err) {
  tc_session *s = ctx;
  emu->debug = s->debug; /* before its recorder reads the regfile mode */
  child_proc *c = calloc(1, sizeof *c);
  if (c) {
    c->session = s;
    c->out = calloc((size_t)(s->nout ? s->nout : 1), sizeof *c->out);
    c->initial_state = calloc(1, emu->arch->state_size);
  }
  if (!c || !c->out || !c->initial_state) {
    if (c) {
      free(c->out);
      free(c->initial_state);
      free(c);
    }
    tc_error_set(err, "out of memory for process %u", (unsigned)emu->pid);
    tc_emu_kill(emu, 9);
    tc_proc_exited(emu);
    tc_emu_free(emu);
    return NULL;
  }
  c->emu = emu;
  note_pid(s, emu->pid);
  tc_emu_read_state(emu, c->initial_state);
  c->info = s->info;
  c->info.pid = emu->pid;
  c->info.entry = tc_emu_reg(emu, emu->arch->pc_reg);
  c->info.initial_state = c->initial_state;
  for (int i = 0; i < s->nout; i++) {
    const output *po = &s->out[i];
    if (!po->fmt)
      continue; /* sinks take the first process's events only */
    output *o = &c->out[c->nout];
    o->fmt = po->fmt;
    tc_error werr = {{0}};
    if (po->stream) {
      /* /dev/fd/3, a FIFO, /dev/null: there is no name beside it */
      if (!s->opt.quiet)
        tc_notice("process %u is not recorded in %s: a stream "
                  "holds the first process only",
                  (unsigned)emu->pid, po->path);
      continue;
    }
    if (child_path(po->path, po->fmt->extension(emu->arch), emu->pid, o->path,
                   sizeof o->path) < 0) {
      tc_notice("%s: name too long for process %u", po->path,
                (unsigned)emu->pid);
      s->failed_outputs++;
      continue;
    }
    /* The first outputs' rule (record checks them before any is made):
     * a file that is not a trace is only replaced when forced. */
    if (!s->opt.force && tc_output_clobbers(o->path, po->fmt)) {
      tc_notice("%s exists and is not a trace file; not overwriting "
                "it (--force does): process %u is not recorded there",
                o->path, (unsigned)emu->pid);
      s->failed_outputs++;
      memset(o, 0, sizeof *o);
      continue;
    }
    tc_outfile_temp(o->path, o->tmp, sizeof o->tmp);
    o->w = po->fmt->open_writer(o->tmp, &c->info, &werr);
    if (!o->w || tc_outfile_check(o->tmp, o->path, &werr) < 0) {
      if (o->w) {
        po->fmt->close_writer(o->w, NULL);
        tc_outfile_discard(o->tmp);
      }
      tc_notice("%s", werr.msg);
      s->failed_outputs++;
      memset(o, 0, sizeof *o);
      continue;
    }
    c->nout++;
  }
  c->rec = tc_recorder_new(emu, fan_out_child, c, err);
  if (!c->rec) {
    tc_emu_kill(emu, 9);
    tc_proc_exited(emu);
    child_free(c);
    return NULL;
  }
  tc_recorder_set_window(c->rec, &s->win);
  if (s->win.on)
    tc_recorder_set_map_hook(c->rec, window_map, s);
  *user = c;
  return c->rec;
}

/* A process ended (the scheduler's ended): the first's files closed, or a
 * child's, noted and freed. */
static void process_ended(void *ctx, void *user, const tc_run_result *r,
                          bool escaped) {
  tc_session *s = ctx;
  child_proc *c = user;
  (void)r;
  if (!c) {
    stop_writer_threads(s);
    close_outputs(s, s->out, s->nout);
    return;
  }
  close_outputs(s, c->out, c->nout);
  for (int i = 0; i < c->nout; i++)
    note_child_output(s, &c->out[i]);
  if (escaped) /* its engine is abandoned with the first's (session_free) */
    c->emu = NULL;
  child_free(c);
}

void tc_session_set_jobs(tc_session *s, int jobs) {
  s->jobs = jobs > 0 ? jobs : 1;
}

char *tc_session_log_recipe(const char *path, size_t *n, tc_error *err) {
  return tc_parallel_log_recipe(path, n, err);
}

int tc_session_set_log(tc_session *s, int mode, const char *path,
                       const void *recipe, size_t n) {
  free(s->log_path);
  free(s->recipe);
  s->log_path = strdup(path);
  s->recipe = malloc(n ? n : 1);
  if (!s->log_path || !s->recipe)
    return -1;
  if (n)
    memcpy(s->recipe, recipe, n);
  s->recipe_len = n;
  s->log_mode = mode;
  return 0;
}

/* record -j N (lib/parallel.h): what it covers, else one line why not
 * (nothing ran then, nothing is written). The trace is recorded as tct
 * in parallel (into the tct output, or a temporary file beside the first
 * output); every other format is converted from it (the same bytes as
 * recording it: the tct holds every event, each writer gets the same
 * stream). */
static int run_parallel(tc_session *s, tc_run_result *res, tc_error *err) {
  const char *why = NULL;
  int tct = -1;
  for (int i = 0; i < s->nout && !why; i++) {
    const output *o = &s->out[i];
    size_t n = strlen(o->path);
    if (!o->fmt)
      why = "-j N writes files, not library sinks";
    else if (o->stream)
      why = "-j N writes files, not a stream";
    else if (n > 4 && strcmp(o->path + n - 4, ".zst") == 0)
      why = "-j N does not write .zst yet (zstd compresses the files after)";
    else if (strcmp(o->fmt->name, "tct") == 0)
      tct = i;
  }
  if (!why && s->nout == 0 && s->log_mode != TC_LOG_WRITE)
    why = "-j N: no output";
  if (!why)
    why = tc_parallel_refusal(&s->info, &s->opt, s->jobs);
  if (why) {
    tc_error_set(err, "record %s", why);
    return -1;
  }
  char tmp_tct[PATH_MAX + 16] = "";
  if (tct >= 0)
    snprintf(tmp_tct, sizeof tmp_tct, "%s", s->out[tct].tmp);
  else if (s->nout > 0)
    snprintf(tmp_tct, sizeof tmp_tct, "%s.j.tct", s->out[0].tmp);
  for (int i = 0; i < s->nout; i++) {
    output *o = &s->out[i];
    o->fmt->close_writer(o->w, NULL);
    o->w = NULL;
    if (i != tct)
      tc_outfile_discard(o->tmp);
  }
  note_pid(s, s->emu->pid);
  tc_par_args a = {s->emu,
                   &s->info,
                   tmp_tct,
                   s->jobs,
                   tc_tct_chunk_insns(&s->info),
                   s->debug,
                   &s->rec,
                   s->log_mode,
                   s->log_path,
                   s->recipe,
                   s->recipe_len};
  tc_run_result r;
  tc_run_result_init(&r);
  int rc = tc_parallel_record(&a, &r, err);
  if (res)
    tc_sized_out(res, &r, sizeof r);
  const tc_format *tct_fmt = tc_format_by_name("tct");
  for (int i = 0; i < s->nout && rc == 0; i++) {
    output *o = &s->out[i];
    if (i == tct)
      continue;
    tc_error cerr = {{0}};
    if (tc_convert_opts(tmp_tct, tct_fmt, o->fmt, o->tmp, 0,
                        s->opt.writer_options, &cerr) < 0) {
      tc_error_set(err, "%s: %s", o->path, cerr.msg);
      rc = -1;
    }
  }
  if (tct < 0 && s->nout > 0 && !s->debug.par_run_only)
    unlink(tmp_tct);
  for (int i = 0; i < s->nout; i++) {
    output *o = &s->out[i];
    tc_error cerr = {{0}};
    if (rc == 0 && tc_outfile_commit(o->tmp, o->path, &cerr) < 0) {
      tc_error_set(err, "%s", cerr.msg);
      rc = -1;
    }
    if (rc < 0) {
      tc_outfile_discard(o->tmp);
      o->failed = true;
      s->failed_outputs++;
    }
  }
  if (tct < 0 && s->nout > 0 && s->debug.par_run_only)
    unlink(tmp_tct);
  return rc < 0 ? -1 : 0;
}

int tc_session_run(tc_session *s, tc_run_result *res, tc_error *err) {
  if (tc_sized_check(res, "tc_run_result", err) < 0)
    return -1;
  if (!s->emu) {
    tc_error_set(err, "no program loaded");
    return -1;
  }
  if (s->jobs > 1 || s->log_mode != TC_LOG_NONE)
    return run_parallel(s, res, err);
  if (resolve_window(s, &s->win, err) < 0)
    return -1;
  start_writer_threads(s);
  /* One output on this thread (the common case): the recorder hands
   * each event straight to it, without the fan-out. */
  bool single = s->nout == 1 && !s->out[0].async && !s->pipe;
  __atomic_store_n(&s->rec,
                   single
                       ? tc_recorder_new(s->emu, deliver_one, &s->out[0], err)
                       : tc_recorder_new(s->emu, fan_out, s, err),
                   __ATOMIC_RELEASE);
  if (!s->rec)
    return -1;
  tc_recorder_set_window(s->rec, &s->win);
  if (s->win.on)
    tc_recorder_set_map_hook(s->rec, window_map, s);
  tc_sched_add_first(s->sched, s->emu, s->rec);
  note_pid(s, s->emu->pid);
  tc_run_result r;
  tc_run_result_init(&r);
  int rc = tc_sched_run(s->sched, &r, err);
  window_unresolved(s);
  if (s->pipe_failed && r.reason == TC_EXIT_INTERRUPTED) {
    r.reason = TC_EXIT_ERROR; /* as its EXIT event says (failure_exit) */
    r.status = 125;
    r.signal = 0;
  }
  if (res)
    tc_sized_out(res, &r, sizeof r);
  if (s->pipe_failed) {
    tc_error_set(err, "%s", s->pipe_err.msg);
    return -1;
  }
  if (rc == 0 && s->failed_outputs) {
    tc_error_set(err, "%d output%s could not be written completely",
                 s->failed_outputs, s->failed_outputs > 1 ? "s" : "");
    return -1;
  }
  return rc;
}
