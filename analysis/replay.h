/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The state of a recording at any instruction: registers and memory at
 * position N (before instruction N runs; position insns() is after the
 * last one), for time-travel debugging (tracecorn gdbserver).
 *
 * Opening reads the trace once, forwards, through its format's reader and
 * keeps:
 *  - a log of every instruction's effects (the registers that changed,
 *    XOR-coded, and its memory writes, reads, unmaps and kernel writes) in
 *    an unlinked temporary file, mapped once read;
 *  - a checkpoint every `interval` instructions: the whole register state
 *    and the memory pages written since the previous checkpoint (a page's
 *    versions, so the image at checkpoint c is each page's latest version
 *    up to c);
 *  - the maps, unmaps and their positions.
 * A position is rebuilt from the nearest checkpoint at or before it plus at
 * most `interval` records of the log: no seek reads the trace again.
 *
 * Memory holds only what the recording shows: the MAP events' data (a MAP
 * without data is zeros, as fresh pages are), every write's new bytes and
 * the kernel's writes; a byte outside every map at that position, or of a
 * recording made without memory, is unknown (tc_replay_read stops there).
 */
#ifndef TC_REPLAY_H
#define TC_REPLAY_H

#include <stddef.h>
#include <stdint.h>

#include "tracecorn/tracecorn.h"

typedef struct tc_replay tc_replay;

enum { TC_REPLAY_INTERVAL = 8192 }; /* default instructions per checkpoint */

/* Reads the trace at path (fmt NULL = detected) once. A trace that ends
 * early (truncated, corrupt) is kept up to its last whole instruction and
 * tc_replay_truncated says why. NULL with err set if nothing is usable. */
tc_replay *tc_replay_open(const char *path, const tc_format *fmt,
                          uint32_t interval, tc_error *err);
/* The same, calling progress(ctx, instructions read) every 2^20
 * instructions (a long index). */
tc_replay *tc_replay_open_progress(const char *path, const tc_format *fmt,
                                   uint32_t interval,
                                   void (*progress)(void *ctx, uint64_t insns),
                                   void *ctx, tc_error *err);
/* Options of tc_replay_open_opts. */
typedef struct tc_replay_opts {
  uint32_t interval; /* 0: TC_REPLAY_INTERVAL */
  /* called every 2^20 instructions while the index is built (NULL: no) */
  void (*progress)(void *ctx, uint64_t insns);
  void *ctx;
  /* The index file (NULL: none, the log is an unlinked temporary file).
   * If it holds the index of this trace (same size, modification time and
   * bytes at both ends) with this interval, it is read instead of the
   * trace: no scan. Else the index is built into it (written beside it as
   * PATH.XXXXXX and renamed when complete); where that cannot be written,
   * the build goes on in $TMPDIR and tc_replay_index_note says why. */
  const char *index_path;
  /* 1: read the whole trace when opening. 0: a trace whose own index
   * says how many instructions it holds (a tct with its footer) is
   * indexed as far as it is asked (seeks, runs, tc_replay_build) and
   * opens at once; others are read whole. */
  int eager;
} tc_replay_opts;
tc_replay *tc_replay_open_opts(const char *path, const tc_format *fmt,
                               const tc_replay_opts *opts, tc_error *err);
enum {
  TC_REPLAY_INDEX_BUILT = 0, /* built, not kept (no index path, or failed) */
  TC_REPLAY_INDEX_READ,      /* read from the index file */
  TC_REPLAY_INDEX_SAVED      /* built and written to the index file */
};
int tc_replay_index_state(const tc_replay *r);
/* Why an index file was not read or not written (NULL: nothing to say). */
const char *tc_replay_index_note(const tc_replay *r);
void tc_replay_free(tc_replay *r);
/* Indexes up to insns more instructions (UINT64_MAX: all): 1 if some are
 * left, 0 when the index is whole, -1 on an error. */
int tc_replay_build(tc_replay *r, uint64_t insns, tc_error *err);
/* Positions 0..tc_replay_indexed are indexed (tc_replay_insns when the
 * index is whole). */
uint64_t tc_replay_indexed(const tc_replay *r);

const tc_trace_info *tc_replay_info(const tc_replay *r);
/* The format it was read with (its holds_reg says which registers the
 * file really holds: the others read back as zero). */
const tc_format *tc_replay_format(const tc_replay *r);
const tc_arch *tc_replay_arch(const tc_replay *r);
/* Instructions in the recording: positions are 0..insns. */
uint64_t tc_replay_insns(const tc_replay *r);
/* NULL when the trace was read to its end, else the reader's message. */
const char *tc_replay_truncated(const tc_replay *r);
/* 1 if memory accesses were recorded (else every read is unknown). */
int tc_replay_has_memory(const tc_replay *r);

/* Moves to position pos (0..insns). 0, or -1 past the end. */
int tc_replay_seek(tc_replay *r, uint64_t pos, tc_error *err);
uint64_t tc_replay_pos(const tc_replay *r);
/* The register state image at the position, and its thread. */
const uint8_t *tc_replay_state(const tc_replay *r);
uint32_t tc_replay_tid(const tc_replay *r);
/* Memory at the position: copies [addr, addr+len) into out up to the first
 * byte the recording does not hold; returns how many bytes were copied. */
size_t tc_replay_read(tc_replay *r, uint64_t addr, size_t len, uint8_t *out);
/* The threads at the position: the running one first, then the others
 * seen so far and not exited, in tid order. Fills up to max, returns how
 * many there are. */
size_t tc_replay_threads(const tc_replay *r, uint32_t *tids, size_t max);
/* A thread's registers at the position: the running thread's state, or
 * another's when it last ran; NULL for no such thread. */
const uint8_t *tc_replay_thread_state(const tc_replay *r, uint32_t tid);

/* The positions where a new program starts: the one after each execve
 * that succeeded, in order, as far as the recording is indexed (the
 * whole of it once tc_replay_build has reached its end). Fills up to max,
 * returns how many there are. */
size_t tc_replay_execs(const tc_replay *r, uint64_t *pos, size_t max);

/* Running to a stop. A watch covers [addr, addr+len) for TC_MEM_READ
 * and/or TC_MEM_WRITE accesses (a syscall's kernel writes are its
 * instruction's writes). */
typedef struct tc_replay_watch {
  uint64_t addr, len;
  int kinds;
} tc_replay_watch;

typedef struct tc_replay_stops {
  const uint64_t *pcs; /* breakpoints: stop where the next pc is one */
  size_t npcs;
  const tc_replay_watch *watches;
  size_t nwatches;
  /* 0: a watch stops after the accessing instruction (x86, whose
   * watchpoints trap after it; backwards: before it, at the access);
   * 1: before it (arm, arm64, mips: gdb then steps over the access;
   * backwards: after it, and gdb steps back onto it). */
  int watch_before;
  /* Asked now and then during a long run (NULL: never): 1 stops it where
   * it has got to (a client's Ctrl-C). */
  int (*interrupted)(void *ctx);
  void *ctx;
  /* step: also stop once thread step_tid has run one instruction
   * (forwards: after it; backwards: before its latest one). */
  int step;
  uint32_t step_tid;
  /* forwards, with step: range stepping (gdb's vCont;r): go on while the
   * thread's next pc is in [range_lo, range_hi) and it keeps running
   * (lo == hi: one instruction); pcs and watches still stop it. */
  uint64_t range_lo, range_hi;
} tc_replay_stops;

enum {
  TC_REPLAY_END = 0,     /* no stop: at the end (forwards) or position 0 */
  TC_REPLAY_BREAK,       /* hit.index: the pc in pcs[] */
  TC_REPLAY_WATCH,       /* hit.index: the watch; hit.addr, hit.kind */
  TC_REPLAY_INTERRUPTED, /* interrupted() said so */
  TC_REPLAY_STEP         /* step_tid ran an instruction */
};

typedef struct tc_replay_hit {
  int why;
  size_t index;
  uint64_t addr; /* the access's first address inside the watch */
  int kind;      /* TC_MEM_READ / TC_MEM_WRITE */
  uint32_t tid;  /* the thread that hit it (ran the instruction) */
} tc_replay_hit;

/* Runs from the position forwards (to insns at most) or backwards (to 0)
 * until a stop, and moves there. Forwards never stops at the position it
 * starts from; backwards, at the latest earlier position. 0, or -1. */
int tc_replay_run(tc_replay *r, int backwards, const tc_replay_stops *s,
                  tc_replay_hit *hit, tc_error *err);

/* What opening built, for `monitor info` and docs/gdbserver.md. */
typedef struct tc_replay_stats {
  uint64_t checkpoints;
  uint64_t pages;         /* distinct pages ever written or mapped */
  uint64_t page_versions; /* page copies kept by checkpoints */
  uint64_t log_bytes;     /* the effect log */
  uint64_t memory_bytes;  /* checkpoints' states and page copies */
  uint32_t interval;
  uint64_t chunks_skipped; /* chunks runs past the index did not decode */
} tc_replay_stats;
void tc_replay_get_stats(const tc_replay *r, tc_replay_stats *st);

#endif
