/* SPDX-License-Identifier: GPL-2.0-or-later */
/* `tracecorn strace -f`: the syscalls of several processes of one
 * recording (their files: the first process's first), merged in time order
 * by the scheduler's turns (TC_EV_TURN), as strace -f prints them: "[pid
 * N] " while more than one process lives, vfork unfinished and resumed
 * around its child. Files without turns (formats other than tct) follow one
 * another, said by a notice. */
#ifndef TC_ANALYSIS_STRACE_MERGE_H
#define TC_ANALYSIS_STRACE_MERGE_H

#include <stdio.h>

#include "tracecorn/tracecorn.h"

/* in: the files' format (NULL: detected); filter: the selection (NULL:
 * all); sopt: a strace writer option ("strace.s=N") or NULL. Writes to
 * out; 0, or -1 with a message. */
int tc_strace_merge(const char *const *paths, int npaths, const tc_format *in,
                    const tc_filter *filter, const char *sopt, FILE *out,
                    tc_error *err);

#endif
