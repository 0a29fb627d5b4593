/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What the tracecorn command's files share (tools/: one file per
 * command, helpers in cli.c). */
#ifndef TC_TOOLS_CLI_H
#define TC_TOOLS_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "tracecorn/tracecorn.h"

#define MAX_ENV 256
#define MAX_FORMATS 16

/* The formats the last `record` could not open an output for (it said
 * why): `verify` does not look for their files. */
extern const tc_format *g_refused[MAX_FORMATS];
extern int g_nrefused;

/* The files of a forked recording's other processes: PREFIX.PID.EXT (and
 * .zst) beside PREFIX.EXT, as record names them (cli.c). */
#define CLI_FAMILY_MAX 64
typedef struct cli_family {
  int n, more; /* pids[0, n) in order; more: past CLI_FAMILY_MAX */
  unsigned long pids[CLI_FAMILY_MAX];
  char paths[CLI_FAMILY_MAX][4096];
} cli_family;
/* The children of path (its file extension ext), or, when path is itself
 * a child's file, its parent's path in parent (and its pid). -1: path does
 * not end in ext. */
int cli_family_find(const char *path, const char *ext, cli_family *fam,
                    char *parent, size_t parent_max, unsigned long *child_pid);

/* A trace of CLI_INDEX_AT bytes or more whose format cannot seek gets its
 * index (analysis/index.h) built before info or a --from reads it, said on
 * stderr; a failure is said and the file is read as before. fmt NULL:
 * detected. */
#define CLI_INDEX_AT (64ll << 20)
void cli_index_large(const char *path, const tc_format *fmt);
int cmd_index(int argc, char **argv);

/* dump / strace / convert selection options (cmd_dump.c) */
enum {
  OPT_RANGE = 0x100,
  OPT_PC,
  OPT_SKIP,
  OPT_COUNT,
  OPT_SYSCALLS_ONLY,
  OPT_SYSCALL,
  OPT_FROM,
  OPT_TO,
  OPT_MEM,
  OPT_READS,
  OPT_WRITES,
  OPT_REG,
  OPT_LAST,
  OPT_NO_INDEX
};

#define FILTER_LONGOPTS                                                        \
  {"range", required_argument, 0, OPT_RANGE},                                  \
      {"pc", required_argument, 0, OPT_PC},                                    \
      {"skip", required_argument, 0, OPT_SKIP},                                \
      {"count", required_argument, 0, OPT_COUNT},                              \
      {"syscalls-only", no_argument, 0, OPT_SYSCALLS_ONLY},                    \
      {"syscall", required_argument, 0, OPT_SYSCALL},                          \
      {"mem", required_argument, 0, OPT_MEM},                                  \
      {"reads", no_argument, 0, OPT_READS},                                    \
      {"writes", no_argument, 0, OPT_WRITES},                                  \
      {"reg", required_argument, 0, OPT_REG},                                  \
      {"last", required_argument, 0, OPT_LAST}, {                              \
    "no-index", no_argument, 0, OPT_NO_INDEX                                   \
  }

#define FILTER_MAX 64

typedef struct cli_filter {
  tc_filter f;
  const char *ranges[FILTER_MAX + 1];
  const char *names[FILTER_MAX + 1];
  const char *mem[FILTER_MAX + 1];
  const char *regs[FILTER_MAX + 1];
  uint64_t pcs[FILTER_MAX];
  int nranges, nnames, nmem, nregs;
} cli_filter;

/* cli.c */
int parse_u64(const char *s, uint64_t *out);
int parse_size(const char *s, uint64_t *out);
const char *base_name(const char *p);
void human_size(uint64_t n, char *out, size_t max);
void remove_output(const char *path);
int is_own_stdio(const char *path);
void refuse_clobber(const char *path);

/* cmd_record.c */
void usage_record(FILE *f);
double elapsed_since(const struct timespec *t0);
int cmd_record(int argc, char **argv);
/* tracecorn materialize (cmd_record.c: it records as record does) */
void usage_materialize(FILE *f);
int cmd_materialize(int argc, char **argv);
/* Set by verify around its cmd_record into a scratch directory: the files
 * are deleted afterwards, so the summary names none of them (issue 36). */
extern bool cli_record_to_scratch;

/* cmd_dump.c */
int filter_option(cli_filter *cf, int c, char *arg);
void filter_done(cli_filter *cf);
int run_dump(const char *path, const tc_format *in, const tc_format *out,
             cli_filter *cf, const char *const *wopts);
int one_input(int argc, const char *usage, const char *fmt_name,
              const tc_format **in);
int cmd_strace(int argc, char **argv);
int cmd_dump(int argc, char **argv);

/* cmd_convert.c */
int cmd_convert(int argc, char **argv);

/* cmd_verify.c */
int child_pids(const char *prefix, const char *zsfx, unsigned *pids, int max);
int cmd_verify(int argc, char **argv);

/* cmd_info.c */
int cmd_info(int argc, char **argv);
int cmd_formats(void);

/* cmd_gdbserver.c (the protocol: analysis/gdbserver.h) */
int cmd_gdbserver(int argc, char **argv);

/* main.c */
void usage(FILE *f);

#endif
