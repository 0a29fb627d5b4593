/* SPDX-License-Identifier: GPL-2.0-or-later */
/* tracecorn convert: any readable format to any writable one. */
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
      "IN's arch\n(trac, rvn: x86 and x86-64; tenet: also arm; tfile: not "
      "mips64el or sparc64).\n\n"
      "Losses: each format holds only part of a recording (registers, "
      "memory values,\nread/write kinds, old values, syscalls and their "
      "memory writes, maps, module\nnames, thread ids, faults, the exit; see "
      "docs/formats/README.md). What OUT\ncannot hold of what IN held is "
      "named on stderr in one line:\n  tracecorn: convert: tenet drops: "
      "instruction bytes, 4 of 59 registers, ...\nNothing is printed when "
      "nothing is lost. --strict makes any loss an error:\nOUT is not "
      "written and the status is 1. What OUT needs and IN lacks is\nrebuilt "
      "and said so (`rebuilt: an exit record`), or the conversion fails\n"
      "saying what is missing (trac needs instruction bytes, which tenet and "
      "drcov\nlack).\n\n"
      "Output: OUT may not be IN; it is written under a temporary name, "
      "renamed when\ncomplete and named on stderr with its size (`wrote OUT "
      "(SIZE)`; -q, --quiet:\nnot); a failed conversion leaves nothing. An "
      "existing OUT that is not a trace\nis only replaced with --force. -O "
      "(--writer-option) passes writer options (see\n`record --help`). An "
      "OUT named *.zst is compressed with zstd (every format but\nrvn, a "
      "directory); IN may be zstd-compressed, as every command's input may\n"
      "(told by its content).\n\n"
      "Selection (as in `tracecorn dump --help`): --range R, --pc ADDR, "
      "--mem R,\n--reads, --writes, --reg NAME, --skip N, --count N, --last "
      "N, --syscalls-only,\n--syscall NAMES, -e trace=NAMES write only part "
      "of IN; --from-insn N starts at\ninstruction N (a keyframe with the "
      "state there first; through IN's index IN.tcidx\nwhen it has one, "
      "see `tracecorn index`; --no-index: never), --to-insn N stops\n"
      "before instruction N. The events left out still keep the writer's "
      "memory image\nright.\n\n"
      "Exit status: 0 written (with or without losses), 1 IN unreadable, "
      "OUT not\nwritable, or a loss with --strict, 2 usage error or an "
      "existing OUT that is not\na trace.\n");
}

int cmd_convert(int argc, char **argv) {
  static const struct option longopts[] = {
      {"from", required_argument, 0, 'F'},
      {"to", required_argument, 0, 't'},
      {"writer-option", required_argument, 0, 'O'},
      {"force", no_argument, 0, 'y'},
      {"strict", no_argument, 0, 'S'},
      {"quiet", no_argument, 0, 'q'},
      {"help", no_argument, 0, 'h'},
      {"from-insn", required_argument, 0, OPT_FROM},
      {"to-insn", required_argument, 0, OPT_TO},
      FILTER_LONGOPTS,
      {0, 0, 0, 0}};
  const char *from = NULL, *to = NULL;
  const char *wopts[33];
  int nwopts = 0, c;
  bool force = false, strict = false, quiet = false;
  cli_filter cf;
  memset(&cf, 0, sizeof cf);
  tc_filter_init(&cf.f);
  optind = 1;
  while ((c = getopt_long(argc, argv, "F:t:O:e:hq", longopts, NULL)) != -1) {
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
    else if (c == 'q')
      quiet = true;
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
  filter_done(&cf);
  tc_error err = {{0}};
  tc_convert_report rep;
  tc_convert_report_init(&rep);
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
  /* as record says it: where the recording went and its size (a stream
   * output has no file to name) */
  if (!quiet && !tc_output_is_stream(argv[optind + 1])) {
    char sz[32];
    human_size(tc_output_size(argv[optind + 1]), sz, sizeof sz);
    fprintf(stderr, "tracecorn: wrote %s (%s)\n", argv[optind + 1], sz);
  }
  return 0;
}
