/* SPDX-License-Identifier: GPL-2.0-or-later */
/* tracecorn verify: record, then check every format's round trip. */
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

#include "tools/cli.h"
#include "writers/format.h"

#define TC_MAX_PROCS_SEEN 1024

/* The pids of the child processes a recording made: PREFIX.PID.tct[.zst]
 * files next to PREFIX.tct, in increasing order. Returns how many. */
int child_pids(const char *prefix, const char *zsfx, unsigned *pids, int max) {
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
/* The table: one row per verified format, one column per check: ok,
 * - (the format cannot hold it) or the instruction of the first
 * difference. */
static void print_check_table(FILE *out, const tc_format *const *check,
                              int ncheck, const tc_verify_table *tab,
                              const int *state) {
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

/* A verdict line per format, with each first difference in full: 1 if
 * one failed. */
static int print_verdicts(FILE *out, const tc_format *const *check, int ncheck,
                          const tc_verify_table *tab, const int *state,
                          const char (*msg)[600]) {
  int failed = 0;
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
      failed = 1;
      fprintf(out, "%-6s FAILED: %" PRIu64 " instructions compared\n", f->name,
              t->insns);
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
  return failed;
}

int cmd_verify(int argc, char **argv) {
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
  cli_record_to_scratch = prefix == pathbuf; /* deleted afterwards */
  int st = cmd_record(n, rec);
  cli_record_to_scratch = false;
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
        for (size_t i = 0; tc_arch_at(i); i++) {
          const tc_arch *a = tc_arch_at(i);
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
      tc_verify_table_init(&tab[i]);
      if (tc_verify_checks(ref, path, f, &tab[i], &err) < 0) {
        snprintf(msg[i], sizeof msg[i], "%s", err.msg);
        state[i] = 2;
        result = 1;
      } else {
        state[i] = 1;
        rows++;
      }
    }
    if (rows)
      print_check_table(out, check, ncheck, tab, state);
    if (print_verdicts(out, check, ncheck, tab, state, (const char(*)[600])msg))
      result = 1;
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
