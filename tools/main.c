/* SPDX-License-Identifier: GPL-2.0-or-later */
/* tracecorn: the command-line tool. It parses options and calls
 * libtracecorn; all behaviour lives in the library. One file per
 * command (tools/cmd_*.c). */
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

void usage(FILE *f) {
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
          "       tracecorn materialize [-f LIST] [-j N] LOG     write the "
          "trace of a\n"
          "                                                      record "
          "--log-only run\n"
          "       tracecorn info FILE                            summarise a "
          "trace\n"
          "       tracecorn index FILE                           make a trac, "
          "ucir, tfile,\n"
          "                                                      tenet or bap "
          "file seek\n"
          "       tracecorn gdbserver [--stdio|--listen H:P] FILE   serve it "
          "to gdb,\n"
          "                                                      forwards "
          "and backwards\n"
          "       tracecorn formats                              list the "
          "formats\n"
          "       tracecorn COMMAND --help                       help for a "
          "command\n"
          "\n"
          "Every command reads zstd-compressed traces (FILE.zst) as they "
          "are; record -z\nand convert ... OUT.zst write them.\n",
          TC_VERSION_STRING);
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
  if (strcmp(cmd, "index") == 0)
    return cmd_index(argc - 1, argv + 1);
  if (strcmp(cmd, "verify") == 0)
    return cmd_verify(argc - 1, argv + 1);
  if (strcmp(cmd, "materialize") == 0)
    return cmd_materialize(argc - 1, argv + 1);
  if (strcmp(cmd, "gdbserver") == 0)
    return cmd_gdbserver(argc - 1, argv + 1);
  if (strcmp(cmd, "help") == 0 && argc >= 3) {
    /* `tracecorn help CMD` is `tracecorn CMD --help`. */
    char *sub[] = {argv[2], "--help", NULL};
    if (strcmp(argv[2], "formats") == 0 || strcmp(argv[2], "help") == 0) {
      usage(stdout);
      return 0;
    }
    if (strcmp(argv[2], "record") && strcmp(argv[2], "dump") &&
        strcmp(argv[2], "convert") && strcmp(argv[2], "info") &&
        strcmp(argv[2], "verify") && strcmp(argv[2], "strace") &&
        strcmp(argv[2], "materialize") && strcmp(argv[2], "gdbserver") &&
        strcmp(argv[2], "index")) {
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
  fprintf(stderr,
          "tracecorn: unknown command '%s' (tracecorn --help lists the "
          "commands)\n",
          cmd);
  return 2;
}
