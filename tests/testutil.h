/* Shared helpers for the CUnit suites. */
#ifndef TC_TESTUTIL_H
#define TC_TESTUTIL_H

#include <CUnit/CUnit.h>
#include <stddef.h>
#include <stdint.h>

typedef struct tu_case {
  const char *name;
  void (*fn)(void);
} tu_case;

/* Runs one suite of cases (NULL-terminated) with the basic runner and
 * returns the process exit code (0 when every assertion passed). */
int tu_run_suite(const char *suite, const tu_case *cases);

/* Reads a whole file (NUL-terminated as a convenience); NULL on error. */
uint8_t *tu_read_file(const char *path, size_t *len);
int tu_write_file(const char *path, const void *data, size_t len);
/* Runs `sh -c cmd`, captures stdout (+stderr if merge) into *out (malloc'd,
 * NUL-terminated, may be NULL). Returns the exit status (128+sig on signal),
 * -1 if it could not run. */
int tu_run(const char *cmd, char **out, int merge_stderr);
/* Runs prog with the NULL-terminated arguments (shell-quoted), stdout and
 * stderr merged into *out. Returns the exit status like tu_run. */
int tu_run_merge(char **out, const char *prog, ...) __attribute__((sentinel));
/* A per-process scratch directory under the build tree, created once. */
const char *tu_tmpdir(void);
/* tu_tmpdir()/name, in a static rotating buffer. */
const char *tu_tmp(const char *name);
/* Path of a guest program built in examples/guests. */
const char *tu_guest(const char *name);
/* 1 if the guest exists (i386 guests need gcc-multilib). */
int tu_have(const char *path);

#endif
