/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Shared helpers for the CUnit suites. */
#ifndef TC_TESTUTIL_H
#define TC_TESTUTIL_H

#include <CUnit/CUnit.h>
#include <stddef.h>
#include <stdint.h>

/* The suites test the library from inside: they read the arch tables and
 * call the formats' vtables (private headers), not only the public API. */
#include "common/arch.h"
#include "writers/format.h"

typedef struct tu_case {
  const char *name;
  void (*fn)(void);
} tu_case;

/* Runs one suite of cases (NULL-terminated) with the basic runner and
 * returns the process exit code (0 when every assertion passed). */
int tu_run_suite(const char *suite, const tu_case *cases);

/* Reads a whole file (NUL-terminated as a convenience); NULL on error. */
uint8_t *tu_read_file(const char *path, size_t *len);
/* 1 if both files exist, are not empty and hold the same bytes. */
int tu_same_file(const char *a, const char *b);
int tu_write_file(const char *path, const void *data, size_t len);
/* Runs `sh -c cmd`, captures stdout (+stderr if merge) into *out (malloc'd,
 * NUL-terminated, may be NULL). Returns the exit status (128+sig on signal),
 * -1 if it could not run. */
int tu_run(const char *cmd, char **out, int merge_stderr);
/* tu_run of a printf-formatted command line (at most 8 KiB; longer is -1). */
int tu_runf(char **out, int merge_stderr, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Runs prog with the NULL-terminated arguments (shell-quoted), stdout and
 * stderr merged into *out. Returns the exit status like tu_run. */
int tu_run_merge(char **out, const char *prog, ...) __attribute__((sentinel));
/* A per-process scratch directory under the build tree, created once. */
const char *tu_tmpdir(void);
/* tu_tmpdir()/name, in a static rotating buffer. */
const char *tu_tmp(const char *name);
/* Path of a guest program built in examples/guests. */
const char *tu_guest(const char *name);
/* xorshift64: the tests' deterministic pseudo-random numbers. */
static inline uint64_t tu_xorshift(uint64_t *state) {
  *state ^= *state << 13;
  *state ^= *state >> 7;
  *state ^= *state << 17;
  return *state;
}
/* 1 if the file exists and is readable. */
int tu_have(const char *path);

/* ------------------------------------------------------ reference runs
 * The truth for a guest's behaviour: a native run when the host can execute
 * its arch, else Debian's qemu-user-static for the arch named by its ELF
 * header. A run that could not start is never a reference: the native
 * attempt falls back to qemu when exec fails, and the helper reports failure
 * when neither starts. */
typedef enum tu_ref_mode {
  TU_REF_AUTO = 0, /* native, then qemu-user if the host cannot exec it */
  TU_REF_NATIVE,   /* native only */
  TU_REF_QEMU      /* qemu-user only (as on a host that cannot run it) */
} tu_ref_mode;

typedef struct tu_ref_run {
  int status;    /* exit code, or 128+signal */
  char *out;     /* captured stdout, NUL-terminated (malloc'd) */
  char how[160]; /* "native" or the qemu binary used */
} tu_ref_run;

/* Runs argv (argv[0] a path) in cwd (NULL: here) with stdin from in
 * (NULL: /dev/null), stderr to errfile (NULL: this process's), envp as its
 * environment (NULL: this process's), and captures stdout into r. A run
 * that hangs ends at SIGALRM after limit seconds (0: none; status 142).
 * 0 when it started (r filled), the errno of an execve that failed (> 0),
 * or -1 for a local failure (pipe, fork, memory). */
int tu_spawn(const char *const *argv, const char *const *envp, const char *cwd,
             const char *in, const char *errfile, unsigned limit,
             tu_ref_run *r);

/* The mode used when a call passes TU_REF_AUTO: TC_REFERENCE=native|qemu in
 * the environment overrides auto, so a whole suite can be run as on a host
 * without native support. */
tu_ref_mode tu_ref_default_mode(void);
/* qemu-user binary name for an ELF file ("qemu-i386-static"), or NULL with a
 * reason in why. */
const char *tu_qemu_for(const char *prog, char *why, size_t whylen);
/* Runs prog (argv[0] = prog, then args; NULL-terminated) in cwd with stdin
 * from /dev/null and stdout captured. Returns 0 when a reference run
 * started and ran to its end, -1 with the reason in why otherwise. */
int tu_reference_run(tu_ref_mode mode, const char *cwd, const char *prog,
                     const char *const *args, tu_ref_run *r, char *why,
                     size_t whylen);

/* Engine probes (issue 37, emu/engine/probes.c): the message with which
 * this build's Unicorn refuses to record prog's arch (memory recorded, as
 * by default), or NULL when it records it. */
const char *tu_engine_refuses(const char *prog);
/* The same for an arch. */
const char *tu_engine_refuses_arch(const tc_arch *arch);
/* For a test that records prog: when the engine refuses its arch, asserts
 * the refusal (`tracecorn record` exits 125 with the probe's one line on
 * stderr and runs nothing) and returns 1, so the caller checks nothing
 * else; 0 when the engine records it. Never a silent skip. */
int tu_expect_refusal(const char *prog);

/* Asserts that guest (a program in examples/guests) run under `tracecorn
 * record` with the space-separated arguments gives the stdout and exit
 * status of its reference run (mode: see above). Runs in tu_tmpdir(). */
void tu_check_reference(tu_ref_mode mode, const char *guest, const char *arg);
/* The same for any program path; label names its outputs and messages.
 * On an engine that refuses the program's arch, asserts the refusal
 * instead (tu_expect_refusal). */
void tu_check_reference_prog(tu_ref_mode mode, const char *label,
                             const char *prog, const char *arg);

#endif
