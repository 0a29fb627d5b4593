/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lib/pipe: trace writers on worker threads, off one event stream.
 *
 * The recorder's thread copies each event into a queue of large blocks
 * (an instruction costs its header, the values of the registers it
 * changed and its memory accesses: tens of bytes, not two 540-byte
 * states); one worker thread per consumer takes the blocks in order,
 * rebuilds the events and calls its consumer, so every consumer sees the
 * same events in the same order as it would on the recorder's thread and
 * writes the same bytes. The queue is bounded (memory stays flat): the
 * recorder waits when the writers fall behind.
 *
 * The compact form relies on a property of the recorder's stream (see
 * recorder.h): an INSN's state_before is the previous INSN's state_after,
 * or the state of the KEYFRAME since, and its state_after differs from
 * state_before only in regs[]. check (the debug switch
 * writer_threads_check) sends both states whole as well and aborts if a rebuilt
 * one differs (tests use it). */
#ifndef TC_PIPE_H
#define TC_PIPE_H

#include <stdbool.h>

#include "tracecorn/tracecorn.h"

typedef struct tc_pipe tc_pipe;
/* A consumer: called on its own thread, in stream order. */
typedef void (*tc_pipe_consumer)(void *ctx, const tc_event *ev);

/* NULL (with err set) if threads or memory are not available. */
tc_pipe *tc_pipe_new(const tc_arch *arch, int nconsumers,
                     const tc_pipe_consumer *fns, void *const *ctxs, bool check,
                     tc_error *err);
/* Producer side: copies ev into the queue (waits while it is full). 0,
 * or -1 if it cannot (out of memory in the queue or in a consumer; an
 * INSN listing more registers than the arch has): then nothing of ev is
 * queued, what was queued before still reaches the consumers (but one
 * that failed), and the caller closes the pipe and writes on its own
 * thread if it goes on. */
int tc_pipe_push(tc_pipe *p, const tc_event *ev, tc_error *err);
/* Hands over what is queued, waits until every consumer has taken all
 * of it, ends the threads and frees p. Returns the consumers that ran out
 * of memory (bit i: consumer i), which got no event from there on (a
 * push fails once one has: the producer stops too); 0 if none. */
int tc_pipe_close(tc_pipe *p);

/* Tests only: after n more queue blocks (n >= 0) every allocation of one
 * fails, as out of memory would; -1 lifts the limit. For the whole
 * process; not thread-safe (set it before a recording starts). */
void tc_pipe_test_limit_blocks(long long n);
/* Tests only: the same for the consumers' own allocations (their lists
 * of memory accesses), counted over every consumer. */
void tc_pipe_test_limit_consumer_allocs(long long n);

#endif
