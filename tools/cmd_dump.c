/* SPDX-License-Identifier: GPL-2.0-or-later */
/* tracecorn dump and strace: a trace printed through a selection. */
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

#include "analysis/strace_merge.h"
#include "tools/cli.h"

/* ------------------------------------------------ dump / strace selection
 * The options that choose what `dump` and `strace` print, turned into one
 * tc_filter (the library applies it: analysis/filter.c). */

static const char filter_help[] =
    "Selection (dump and strace):\n"
    "  --range R          instructions whose address is in R: A-B (hex, B "
    "excluded),\n"
    "                     NAME (a function of the program or of any "
    "library it maps),\n"
    "                     MODULE:NAME (libc.so.6:malloc) or MODULE (a "
    "mapped file: path,\n"
    "                     base name, or base name up to .so: libc); "
    "repeatable or\n"
    "                     comma-separated\n"
    "  --pc ADDR          instructions at ADDR (hex); repeatable or "
    "comma-separated\n"
    "  --mem R            instructions whose memory accesses touch R: ADDR, "
    "ADDR-END\n"
    "                     (hex, END excluded) or ADDR:LEN (LEN decimal or "
    "0x-hex); a\n"
    "                     syscall's kernel writes count as its "
    "instruction's; repeatable\n"
    "                     or comma-separated\n"
    "  --reads, --writes  --mem looks only at reads, or only at writes\n"
    "  --reg NAME         instructions that change register NAME (rax, eax, "
    "x0, w0...);\n"
    "                     repeatable or comma-separated\n"
    "  --from N           start at instruction N, a keyframe with the "
    "state there\n"
    "                     first: through the format's own seek\n"
    "                     (tct, rvn) or its index's (trac, ucir, tfile, "
    "tenet, bap:\n"
    "                     TRACE.tcidx, made by `tracecorn index`, and by "
    "--from itself\n"
    "                     for a file of 64 MiB or more), else reading "
    "forward\n"
    "  --no-index         read the trace itself, not its index; make none\n"
    "  --to N             stop before instruction N\n"
    "  --skip N           leave out the first N selected records\n"
    "  --count M          then print M records and stop\n"
    "  --last M           only the last M selected records (the trace is "
    "read twice)\n"
    "  --syscalls-only    records are syscalls (made by instructions that "
    "pass the\n"
    "                     tests above), printed as strace prints them\n"
    "  --syscall NAMES    instructions that make one of these syscalls "
    "(with\n"
    "                     --syscalls-only: these syscalls); comma-separated; "
    "also\n"
    "                     `-e trace=NAMES`\n"
    "A record is an instruction (with its syscall and fault lines), or a "
    "syscall with\n--syscalls-only; it must pass every test given (one "
    "of the values of each).\nWith a test only records and the exit are "
    "printed; --from/--to/--skip/--count\nalone keep the map and keyframe "
    "lines inside the window. Who last wrote the\n4 bytes at 0x4000 "
    "before instruction 5000:\n"
    "  tracecorn dump --mem 0x4000:4 --writes --to 5000 --last 1 FILE\n";

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
int filter_option(cli_filter *cf, int c, char *arg) {
  uint64_t v;
  switch (c) {
  case OPT_RANGE:
    return filter_list(arg, cf->ranges, &cf->nranges, "--range") < 0 ? -1 : 1;
  case OPT_SYSCALL:
    return filter_list(arg, cf->names, &cf->nnames, "--syscall") < 0 ? -1 : 1;
  case OPT_MEM:
    return filter_list(arg, cf->mem, &cf->nmem, "--mem") < 0 ? -1 : 1;
  case OPT_REG:
    return filter_list(arg, cf->regs, &cf->nregs, "--reg") < 0 ? -1 : 1;
  case OPT_READS:
    cf->f.mem_kind |= TC_MEM_READ;
    return 1;
  case OPT_WRITES:
    cf->f.mem_kind |= TC_MEM_WRITE;
    return 1;
  case OPT_NO_INDEX:
    cf->f.no_index = 1;
    return 1;
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
  case OPT_TO:
  case OPT_LAST: {
    bool positive = c == OPT_COUNT || c == OPT_TO || c == OPT_LAST;
    if (parse_u64(arg, &v) < 0 || (positive && v == 0)) {
      fprintf(stderr, "tracecorn: --%s: not a %snumber: %s\n",
              c == OPT_SKIP    ? "skip"
              : c == OPT_COUNT ? "count"
              : c == OPT_TO    ? "to"
              : c == OPT_LAST  ? "last"
                               : "from",
              positive ? "positive " : "", arg);
      return -1;
    }
    *(c == OPT_SKIP    ? &cf->f.skip
      : c == OPT_COUNT ? &cf->f.count
      : c == OPT_TO    ? &cf->f.to
      : c == OPT_LAST  ? &cf->f.last
                       : &cf->f.from) = v;
    return 1;
  }
  case OPT_SYSCALLS_ONLY:
    cf->f.syscalls_only = 1;
    return 1;
  default:
    return 0;
  }
}

/* Points the filter at the lists the options filled. */
void filter_done(cli_filter *cf) {
  cf->ranges[cf->nranges] = NULL;
  cf->names[cf->nnames] = NULL;
  cf->mem[cf->nmem] = NULL;
  cf->regs[cf->nregs] = NULL;
  cf->f.ranges = cf->nranges ? cf->ranges : NULL;
  cf->f.syscalls = cf->nnames ? cf->names : NULL;
  cf->f.mem = cf->nmem ? cf->mem : NULL;
  cf->f.regs = cf->nregs ? cf->regs : NULL;
  cf->f.pcs = cf->pcs;
}

/* Prints FILE through the selection in out_fmt on stdout. */
int run_dump(const char *path, const tc_format *in, const tc_format *out,
             cli_filter *cf, const char *const *wopts) {
  filter_done(cf);
  if (cf->f.from && !cf->f.no_index)
    cli_index_large(path, in);
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
int one_input(int argc, const char *usage, const char *fmt_name,
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

/* --root DIR (dump, strace): where the trace's module paths are. */
static int check_root(const char *dir) {
  struct stat st;
  if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
    fprintf(stderr, "tracecorn: --root %s: not a directory\n", dir);
    return -1;
  }
  return 0;
}

/* strace -f: the library merges the processes' listings
 * (analysis/strace_merge.h). */
static int strace_merge(const char *const *paths, int npaths,
                        const tc_format *in, cli_filter *cf, const char *sopt) {
  filter_done(cf);
  tc_error err = {{0}};
  if (tc_strace_merge(paths, npaths, in, &cf->f, sopt[0] ? sopt : NULL, stdout,
                      &err) < 0) {
    fflush(stdout);
    fprintf(stderr, "tracecorn: %s\n", err.msg);
    return 1;
  }
  return 0;
}

int cmd_strace(int argc, char **argv) {
  static const struct option longopts[] = {
      FILTER_LONGOPTS,
      {"from", required_argument, 0, OPT_FROM},
      {"to", required_argument, 0, OPT_TO},
      {"root", required_argument, 0, 'R'},
      {"format", required_argument, 0, 'F'},
      {"follow-forks", no_argument, 0, 'f'},
      {"help", no_argument, 0, 'h'},
      {0, 0, 0, 0}};
  cli_filter cf;
  memset(&cf, 0, sizeof cf);
  tc_filter_init(&cf.f);
  cf.f.syscalls_only = 1;
  const char *in_fmt_name = NULL;
  char sopt[64] = "";
  bool follow = false;
  int c;
  optind = 1;
  while ((c = getopt_long(argc, argv, "fe:s:h", longopts, NULL)) != -1) {
    int k = filter_option(&cf, c, optarg);
    if (k < 0)
      return 2;
    if (k > 0)
      continue;
    switch (c) {
    case 'F':
      in_fmt_name = optarg;
      break;
    case 'f':
      follow = true;
      break;
    case 'R':
      if (check_root(optarg) < 0)
        return 2;
      cf.f.root = optarg;
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
      printf("usage: tracecorn strace [-f] [-s N] [-e trace=NAMES] [--format "
             "FMT] [selection]\n                       FILE [FILE...]\n\n"
             "Prints the syscalls of a trace (any readable format) as "
             "strace does: decoded\narguments (strings, flags, structs), "
             "return values with errno names, the\nsignal that killed the "
             "process and its exit. Strings and structs are read\nfrom the "
             "guest memory the trace rebuilds (a trace recorded --no-memory "
             "shows\npointers). -s N: string limit (default 32). --root "
             "DIR: the module paths\n(for --range names) are under DIR. "
             "Same as `dump --syscalls-only`.\n\n"
             "-f, --follow-forks: also the recording's other processes (the "
             "files PREFIX.PID.EXT\nbeside FILE that a forking program's "
             "recording makes), merged in the order they\nran, with strace "
             "-f's [pid N] prefixes. Several FILEs: those processes, merged\n"
             "the same way. The order comes from the scheduler's turns, which "
             "tct files hold;\nfiles of other formats are shown one process "
             "after another (said on stderr).\n\n%s",
             filter_help);
      return 0;
    default:
      return 2;
    }
  }
  const tc_format *in = NULL;
  if (in_fmt_name && !(in = tc_format_by_name(in_fmt_name))) {
    fprintf(stderr, "tracecorn: unknown format '%s'\n", in_fmt_name);
    return 2;
  }
  if (optind >= argc || (follow && optind != argc - 1)) {
    fprintf(stderr, "usage: tracecorn strace [options] FILE%s\n",
            follow ? " (one FILE with -f: its processes are found beside it)"
                   : " [FILE...]");
    return 2;
  }
  const char *wopts[2] = {sopt[0] ? sopt : NULL, NULL};
  if (!follow && optind == argc - 1)
    return run_dump(argv[optind], in, tc_format_by_name("strace"), &cf, wopts);
  /* several processes: the files given, or FILE and its children */
  cli_family *fam = calloc(1, sizeof *fam);
  const char **paths = calloc(CLI_FAMILY_MAX + 1 + (size_t)argc, sizeof *paths);
  if (!fam || !paths) {
    free(fam);
    free(paths);
    fprintf(stderr, "tracecorn: out of memory\n");
    return 1;
  }
  int npaths = 0;
  if (follow) {
    const char *path = argv[optind];
    paths[npaths++] = path;
    /* PREFIX.EXT: EXT is the last dot's, a trailing .zst aside */
    const char *base = base_name(path);
    size_t n = strlen(base);
    if (n > 4 && strcmp(base + n - 4, ".zst") == 0)
      n -= 4;
    char ext[64] = "";
    for (size_t k = n; k-- > 0;)
      if (base[k] == '.') {
        snprintf(ext, sizeof ext, "%.*s", (int)(n - k), base + k);
        break;
      }
    char parent[PATH_MAX];
    unsigned long child_pid = 0;
    if (ext[0] && cli_family_find(path, ext, fam, parent, sizeof parent,
                                  &child_pid) == 0) {
      if (parent[0])
        fprintf(stderr,
                "tracecorn: strace: %s is pid %lu's file; its parent's is %s "
                "(give that one for the whole recording)\n",
                path, child_pid, parent);
      if (fam->more)
        fprintf(stderr,
                "tracecorn: strace: %d more processes than %d are left out\n",
                fam->more, CLI_FAMILY_MAX);
      for (int i = 0; i < fam->n; i++)
        paths[npaths++] = fam->paths[i];
    }
  } else {
    for (int i = optind; i < argc; i++)
      paths[npaths++] = argv[i];
  }
  int rc = strace_merge(paths, npaths, in, &cf, sopt);
  free(paths);
  free(fam);
  return rc;
}

int cmd_dump(int argc, char **argv) {
  static const struct option longopts[] = {
      {"json", no_argument, 0, 'j'},
      {"format", required_argument, 0, 'f'},
      {"from", required_argument, 0, 'F'},
      {"help", no_argument, 0, 'h'},
      {"verbose", no_argument, 0, 'v'},
      {"color", required_argument, 0, 'C'},
      {"symbols", required_argument, 0, 'S'},
      {"demangle", no_argument, 0, 'D'},
      {"root", required_argument, 0, 'R'},
      {"to", required_argument, 0, OPT_TO},
      FILTER_LONGOPTS,
      {0, 0, 0, 0}};
  bool json = false, verbose = false, demangle = false;
  const char *in_fmt_name = NULL, *color = "auto", *symbols = NULL;
  const char *root = NULL;
  uint64_t from = 0;
  cli_filter cf;
  memset(&cf, 0, sizeof cf);
  tc_filter_init(&cf.f);
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
    case 'R':
      if (check_root(optarg) < 0)
        return 2;
      root = optarg;
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
             "--json prints one JSON object per event instead (an "
             "instruction's \"sym\":\n"
             "\"malloc+0x1c\", the function it is in, or null). The input "
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
             "      --demangle        C++ names as c++filt prints them\n"
             "      --root DIR        the module paths the trace names are "
             "under DIR (a\n"
             "                        recording made with record --root "
             "DIR)\n\n"
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
  cf.f.root = root;
  const char *out = json ? "json" : cf.f.syscalls_only ? "strace" : "text";
  /* text writer options: colour on a terminal (NO_COLOR honoured), full
   * keyframes with -v, extra symbols */
  const char *nc = getenv("NO_COLOR");
  bool use_color = strcmp(color, "always") == 0 ||
                   (strcmp(color, "auto") == 0 && isatty(1) && !(nc && *nc));
  static char symopt[PATH_MAX + 16], rootopt[PATH_MAX + 16];
  const char *wopts[6];
  int nw = 0;
  if (root && strcmp(out, "strace") != 0) {
    snprintf(rootopt, sizeof rootopt, "%s.root=%s", out, root);
    wopts[nw++] = rootopt;
  }
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
