/* SPDX-License-Identifier: GPL-2.0-or-later */
/* tracecorn info and formats. */
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

#include "analysis/index.h"
#include "common/arch.h"
#include "tools/cli.h"
#include "writers/format.h"

/* The files of a forked recording's other processes beside it: printed
 * for the parent's file, and the parent for a child's; nothing for a lone
 * one. */
static void print_family(const char *path, const char *ext) {
  char parent[PATH_MAX], safe[1024];
  unsigned long child_pid = 0;
  cli_family *fam = malloc(sizeof *fam);
  if (!fam ||
      cli_family_find(path, ext, fam, parent, sizeof parent, &child_pid) < 0) {
    free(fam);
    return;
  }
  if (parent[0]) {
    printf("parent file:  %s (this is pid %lu's trace)\n",
           tc_escape_text(parent, safe, sizeof safe), child_pid);
  } else if (fam->n) {
    printf("processes:    %d more in files of their own (fork):\n",
           fam->n + fam->more);
    for (int i = 0; i < fam->n; i++)
      printf("  pid %-6lu  %s\n", fam->pids[i],
             tc_escape_text(fam->paths[i], safe, sizeof safe));
    if (fam->more)
      printf("  (%d more)\n", fam->more);
  }
  free(fam);
}

int cmd_info(int argc, char **argv) {
  bool no_index = argc == 3 && strcmp(argv[1], "--no-index") == 0;
  if (no_index) {
    argv++;
    argc--;
  }
  if (argc != 2 || argv[1][0] == '-') {
    FILE *f = argc == 2 ? stdout : stderr;
    fprintf(f,
            "usage: tracecorn info [--no-index] FILE\n\n"
            "Reads a trace in any readable format and prints its format, "
            "arch, program,\ninstruction count, first and last PC, "
            "modules, syscalls, size and B/insn,\nthe writer when the "
            "file names it, whether it can seek (tried), and the files of a\n"
            "forked recording's other processes beside it (PREFIX.PID.EXT).\n"
            "A trac, ucir, tfile, tenet or bap file's counts come from its "
            "index FILE.tcidx\n(`tracecorn index`), built here first for a "
            "file of 64 MiB or more;\n--no-index: read the file itself, "
            "make no index.\n");
    return argc == 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))
               ? 0
               : 2;
  }
  const char *path = argv[1];
  tc_error err = {{0}};
  if (!no_index)
    cli_index_large(path, NULL);
  tc_trace_summary st;
  tc_trace_summary_init(&st);
  int rc = no_index ? tc_summarize_no_index(path, &st, &err)
                    : tc_trace_summarize(path, &st, &err);
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
  /* a format with an index says whether this file has one: without it
   * (tct cut short or compressed) a seek reads from the start, and trying
   * one would read the file a second time */
  tc_trace_summary idx;
  tc_trace_summary_init(&idx);
  char idxpath[4300];
  if (rd && fmt->summary && fmt->seek && fmt->summary(rd, &idx, &rerr) == 0)
    printf("seekable:     no index (no footer: cut short, or compressed; "
           "dump --from N reads from the start)\n");
  else if (rd && fmt->seek && st.insns &&
           fmt->seek(rd, st.insns - 1, &rerr) == 0)
    printf("seekable:     yes (dump --from N jumps to instruction N)\n");
  else if (fmt->seek && st.insns)
    printf("seekable:     no (its index fails: %s)\n",
           tc_escape_text(rerr.msg, safe, sizeof safe));
  else if (!no_index &&
           tc_index_find(path, fmt, idxpath, sizeof idxpath) == 1) {
    char dir[4200];
    tc_index_dir(path, dir, sizeof dir);
    printf("seekable:     yes, through its index %s (dump --from N jumps to "
           "instruction N)\n",
           tc_escape_text(dir, safe, sizeof safe));
  } else if (st.keyframes)
    printf("seekable:     no (dump --from N reads from the start; %" PRIu64
           " keyframes hold the full register state)\n",
           st.keyframes);
  else
    printf("seekable:     no (dump --from N reads from the start; "
           "`tracecorn index FILE` makes it seek)\n");
  if (rd)
    fmt->close_reader(rd);
  if (st.arch)
    print_family(path, fmt->extension(st.arch));
  if (rc < 0) {
    fprintf(stderr, "tracecorn: %s\n", err.msg);
    return 1;
  }
  return 0;
}

int cmd_formats(void) {
  printf("%-8s %-6s %-6s %s\n", "name", "write", "read", "description");
  for (const tc_format *const *f = tc_formats(); *f; f++)
    printf("%-8s %-6s %-6s %s\n", (*f)->name, (*f)->open_writer ? "yes" : "no",
           (*f)->open_reader ? "yes" : "no", (*f)->description);
  return 0;
}

int cmd_index(int argc, char **argv) {
  if (argc < 2 || argv[1][0] == '-') {
    FILE *f =
        argc >= 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))
            ? stdout
            : stderr;
    fprintf(f,
            "usage: tracecorn index FILE...\n\n"
            "Builds the seek index of a trace whose format cannot seek (trac, "
            "ucir, tfile,\ntenet, bap): FILE.tcidx, a directory beside it "
            "holding the same events as a\ntct, so that dump, strace and "
            "convert starting at instruction N, and info,\nanswer at once "
            "instead of reading the whole file. It is used only while FILE\n"
            "is unchanged (size, time and contents checked); info and a dump "
            "from N build\nit by themselves for a file of 64 MiB or more. tct "
            "and rvn files seek by\nthemselves.\n");
    return f == stdout ? 0 : 2;
  }
  int rc = 0;
  for (int i = 1; i < argc; i++) {
    tc_error err = {{0}};
    const tc_format *fmt = tc_format_detect(argv[i], &err);
    if (!fmt) {
      fprintf(stderr, "tracecorn: %s\n", err.msg);
      rc = 1;
      continue;
    }
    if (fmt->seek) {
      printf("%s: %s files seek by themselves (no index needed)\n", argv[i],
             fmt->name);
      continue;
    }
    if (tc_index_build(argv[i], fmt, &err) < 0) {
      fprintf(stderr, "tracecorn: %s\n", err.msg);
      rc = 1;
      continue;
    }
    char dir[4200], tct[4300], sz[32];
    tc_index_dir(argv[i], dir, sizeof dir);
    snprintf(tct, sizeof tct, "%s/trace.tct", dir);
    human_size(tc_output_size(tct), sz, sizeof sz);
    printf("tracecorn: wrote %s (%s)\n", dir, sz);
  }
  return rc;
}
