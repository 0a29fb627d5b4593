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

#include "common/arch.h"
#include "tools/cli.h"
#include "writers/format.h"

/* The files of a forked recording's other processes: PREFIX.PID.EXT (and
 * .zst) beside PREFIX.EXT, as record names them. Prints them for the
 * parent's file and the parent for a child's; nothing for a lone one. */
static int cmp_pid(const void *a, const void *b) {
  unsigned long x = *(const unsigned long *)a, y = *(const unsigned long *)b;
  return x < y ? -1 : x > y;
}

static void print_family(const char *path, const char *ext) {
  const char *slash = strrchr(path, '/');
  const char *base = slash ? slash + 1 : path;
  char dir[PATH_MAX];
  snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - path) + 1 : 0, path);
  size_t n = strlen(base), e = strlen(ext);
  bool zst = n > 4 && strcmp(base + n - 4, ".zst") == 0;
  size_t tail = e + (zst ? 4 : 0);
  if (!e || n <= tail || strncmp(base + n - tail, ext, e) != 0)
    return;
  size_t stem = n - tail; /* base[0, stem) is PREFIX */
  char safe[1024], name[NAME_MAX + 1];
  /* A child: PREFIX ends in .PID and PREFIX without it names a file. */
  size_t d = stem;
  while (d > 0 && base[d - 1] >= '0' && base[d - 1] <= '9')
    d--;
  if (d > 1 && d < stem && base[d - 1] == '.') {
    char parent[PATH_MAX];
    int k = snprintf(parent, sizeof parent, "%s%.*s%s", dir, (int)(d - 1), base,
                     base + stem);
    if (k > 0 && (size_t)k < sizeof parent && access(parent, F_OK) == 0) {
      printf("parent file:  %s (this is pid %.*s's trace)\n",
             tc_escape_text(parent, safe, sizeof safe), (int)(stem - d),
             base + d);
      return;
    }
  }
  DIR *dp = opendir(slash ? dir : ".");
  if (!dp)
    return;
  unsigned long pids[64];
  int npids = 0, more = 0;
  struct dirent *de;
  while ((de = readdir(dp))) {
    const char *x = de->d_name;
    size_t m = strlen(x);
    if (m <= n + 1 || strncmp(x, base, stem) != 0 || x[stem] != '.' ||
        strcmp(x + m - tail, base + stem) != 0)
      continue;
    char *end;
    unsigned long pid = strtoul(x + stem + 1, &end, 10);
    if (end == x + stem + 1 || end != x + m - tail)
      continue;
    if (npids < 64)
      pids[npids++] = pid;
    else
      more++;
  }
  closedir(dp);
  if (!npids)
    return;
  qsort(pids, (size_t)npids, sizeof *pids, cmp_pid);
  printf("processes:    %d more in files of their own (fork):\n", npids + more);
  for (int i = 0; i < npids; i++) {
    int k = snprintf(name, sizeof name, "%.*s.%lu%s", (int)stem, base, pids[i],
                     base + stem);
    if (k < 0 || (size_t)k >= sizeof name)
      continue;
    printf("  pid %-6lu  %s%s\n", pids[i],
           tc_escape_text(dir, safe, sizeof safe), name);
  }
  if (more)
    printf("  (%d more)\n", more);
}

int cmd_info(int argc, char **argv) {
  if (argc != 2 || argv[1][0] == '-') {
    FILE *f = argc == 2 ? stdout : stderr;
    fprintf(f,
            "usage: tracecorn info FILE\n\n"
            "Reads a trace in any readable format and prints its format, "
            "arch, program,\ninstruction count, first and last PC, "
            "modules, syscalls, size and B/insn,\nthe writer when the "
            "file names it, whether it can seek (tried), and the files of a\n"
            "forked recording's other processes beside it (PREFIX.PID.EXT).\n");
    return argc == 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))
               ? 0
               : 2;
  }
  const char *path = argv[1];
  tc_error err = {{0}};
  tc_trace_summary st;
  tc_trace_summary_init(&st);
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
  /* a format with an index says whether this file has one: without it
   * (tct cut short or compressed) a seek reads from the start, and trying
   * one would read the file a second time */
  tc_trace_summary idx;
  tc_trace_summary_init(&idx);
  if (rd && fmt->summary && fmt->seek && fmt->summary(rd, &idx, &rerr) == 0)
    printf("seekable:     no index (no footer: cut short, or compressed; "
           "dump --from N reads from the start)\n");
  else if (rd && fmt->seek && st.insns &&
           fmt->seek(rd, st.insns - 1, &rerr) == 0)
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
