/* SPDX-License-Identifier: GPL-2.0-or-later */
/* strace-style decoding of SYSCALL events, for every arch from one table
 * (common/linux/sysdecode.c): `openat(AT_FDCWD, "/tmp/x", O_RDONLY|O_CLOEXEC) =
 * 3` instead of `openat(-100, 0x7fffffffefe2, 524288, 00) = 3`.
 *
 * Where arguments come from. A SYSCALL event carries the six argument
 * registers, the return value and the bytes the kernel wrote (read(2)
 * data, struct stat...), but not the guest memory its input pointers
 * point at (paths, write(2) buffers, iovec arrays). The decoder therefore
 * keeps a memory image (common/memimage.c) replayed from the events it
 * observes: MAP contents, instruction writes and reads, kernel writes.
 * Inputs are read from the image as it was when the syscall trapped;
 * outputs from the image overlaid with the event's kernel writes, so they
 * show what the kernel wrote, as strace shows them at syscall exit. Bytes
 * the image does not know (a trace recorded --no-memory, a format without
 * memory values, a dump started with --from) print as the address, as
 * strace prints a pointer it cannot read. Without recorded memory only
 * read-only mapped contents (string literals) are trusted.
 *
 * Format-neutral: events in, text out; never includes Unicorn. */
#ifndef TC_SYSDECODE_H
#define TC_SYSDECODE_H

#include <stdint.h>

#include "tracecorn/tracecorn.h"

typedef struct tc_sysdecode tc_sysdecode;

/* strace's default string limit (-s 32). */
#define TC_SYSDECODE_STRSIZE 32u

/* NULL on out-of-memory. strsize: the -s limit (0 = 32). has_memory:
 * the trace records memory accesses (tc_trace_info.has_memory); without
 * them only read-only mapped contents are known (writable memory may
 * have changed unseen), so the rest prints as addresses. */
tc_sysdecode *tc_sysdecode_new(const tc_arch *arch, unsigned strsize,
                               int has_memory);
void tc_sysdecode_free(tc_sysdecode *d);

/* Updates the memory image with what the event does to memory. Call it
 * for every event in order, AFTER formatting a SYSCALL event (its inputs
 * are read as they were before the kernel wrote). -1 on out-of-memory. */
int tc_sysdecode_observe(tc_sysdecode *d, const tc_event *ev);
/* The same, with "PATH: out of memory" in err on failure. */
int tc_sysdecode_observe_or_fail(tc_sysdecode *d, const tc_event *ev,
                                 const char *path, tc_error *err);

enum {
  /* Pad the line with spaces so " = " starts at column 40, as strace
   * does (strace's -a 40). */
  TC_SYSDECODE_ALIGN = 1u << 0
};

/* One syscall as strace prints it, without a newline: "write(1, "hi\n",
 * 3) = 3", "exit_group(0) = ?", "openat(...) = -1 ENOENT (No such file or
 * directory)". The string stays valid until the next call. */
const char *tc_sysdecode_syscall(tc_sysdecode *d, const tc_syscall_event *s,
                                 unsigned flags);
/* A fault as strace shows the signal: "--- SIGSEGV {si_signo=SIGSEGV,
 * si_code=SEGV_MAPERR, si_addr=0x10} ---". */
const char *tc_sysdecode_fault(tc_sysdecode *d, const tc_fault_event *f);
/* A signal delivered to a handler, as strace shows it: "--- SIGUSR1
 * {si_signo=SIGUSR1, si_code=SI_USER, si_pid=1000, si_uid=1000} ---",
 * "--- SIGALRM {si_signo=SIGALRM, si_code=SI_KERNEL} ---". */
const char *tc_sysdecode_signal(tc_sysdecode *d, const tc_signal_event *g);
/* The end of the process: "+++ exited with 0 +++", "+++ killed by SIGSEGV
 * +++"; NULL when the recording did not end the process (--max-insns,
 * Ctrl-C, an error). */
const char *tc_sysdecode_exit(tc_sysdecode *d, const tc_exit_event *x);

/* The name strace shows for a syscall: i386's socketcall shows as the
 * call it multiplexes ("connect"); else the event's name (may be NULL). */
const char *tc_sysdecode_name(const tc_syscall_event *s);

/* strace's name of a signal ("SIGSEGV") or errno ("ENOENT"), with the
 * guest arch's numbering; NULL if unknown. */
const char *tc_sysdecode_signame(const tc_arch *arch, int guest_sig);
const char *tc_sysdecode_errname(const tc_arch *arch, int guest_errno);

#endif
