/* SPDX-License-Identifier: GPL-2.0-or-later */
/* recorder/: Unicorn hooks -> delta encoder -> tc_event stream.
 * The recorder knows the emulator and the event model, never a format. */
#ifndef TC_RECORDER_H
#define TC_RECORDER_H

#include "emu/engine/emu.h"
#include "tracecorn/tracecorn.h"

typedef struct tc_recorder tc_recorder;

/* Receives each event; returning -1 does not stop the recording (the
 * session decides what a failed output means).
 *
 * Continuity, which lib/pipe.h relies on: the stream starts with a
 * KEYFRAME; every INSN's state_before equals the previous INSN's
 * state_after, or the state of a KEYFRAME emitted since (whenever the
 * recorder re-reads the state whole it emits one); and its state_after
 * differs from state_before in regs[] only. */
typedef void (*tc_emit_fn)(void *ctx, const tc_event *ev);

tc_recorder *tc_recorder_new(tc_emu *emu, tc_emit_fn emit, void *ctx,
                             tc_error *err);
void tc_recorder_free(tc_recorder *r);
/* Emits the initial MAP events and keyframe, runs the guest to its end
 * (exit, fault, --max-insns, stop request), emits the final events.
 * Returns -1 only if the emulator itself failed. */
int tc_recorder_run(tc_recorder *r, tc_run_result *res, tc_error *err);

/* Turn by turn, for several processes (the session's scheduler): the
 * first turn emits the initial MAP events and KEYFRAME; each runs the
 * process until its quantum ends or it yields (TC_TURN_YIELD), until
 * every thread of it waits for something another process does
 * (TC_TURN_BLOCKED: run it again once tc_emu_can_run says so), or until it
 * ends (TC_TURN_DONE). tc_recorder_finish then emits the final events. */
enum { TC_TURN_DONE = 0, TC_TURN_YIELD, TC_TURN_BLOCKED };
int tc_recorder_turn(tc_recorder *r, tc_error *err);
int tc_recorder_finish(tc_recorder *r, tc_run_result *res, tc_error *err);
bool tc_recorder_blocked(const tc_recorder *r);
/* The scheduler's turn number `turn` (across the processes) is about to
 * run: a TC_EV_TURN event goes before the next event this recorder emits. */
void tc_recorder_set_turn(tc_recorder *r, uint64_t turn);
/* Every process waits for another for good: this one ends so (the
 * caller has said why). */
void tc_recorder_set_deadlock(tc_recorder *r);

/* What to record of the run (record --trace-range / --trace-func): the
 * whole program runs, only these instructions become INSN events (each
 * return into the window after a gap starts with a KEYFRAME). Maps are
 * always recorded; syscalls and faults where their instruction is. */
#define TC_WINDOW_MAX 16 /* names or ranges given, of each kind */
/* what they resolve to: a name can be in several modules, a module maps
 * several regions */
#define TC_WINDOW_CAP 256
typedef struct tc_window {
  uint64_t lo[TC_WINDOW_CAP], hi[TC_WINDOW_CAP]; /* pc ranges [lo, hi) */
  size_t nranges;
  uint64_t funcs[TC_WINDOW_CAP]; /* entries: record while inside a call */
  size_t nfuncs;
  /* a window was asked for: only it is recorded even while it is empty
   * (its names resolve when their modules are mapped) */
  bool on;
} tc_window;
/* Before tc_recorder_run. */
void tc_recorder_set_window(tc_recorder *r, const tc_window *w);
/* Adds a pc range [lo, hi) (func false) or a function entry lo (func
 * true) to the window: 0, or -1 when it is full. */
int tc_window_add(tc_window *w, bool func, uint64_t lo, uint64_t hi);
/* The same on a running recorder's window. */
int tc_recorder_window_add(tc_recorder *r, bool func, uint64_t lo, uint64_t hi);
/* Called for every region the guest maps while it is recorded (after the
 * initial image), before the region's MAP event: the session resolves
 * --trace-func names there as libraries arrive, through
 * tc_recorder_window_add. */
typedef void (*tc_map_hook)(void *ctx, tc_recorder *r, tc_emu *emu,
                            const tc_region *g);
void tc_recorder_set_map_hook(tc_recorder *r, tc_map_hook hook, void *ctx);
/* Async-signal-safe stop request; the run ends with exit status `status`
 * (130 for SIGINT, 143 for SIGTERM). */
void tc_recorder_stop(tc_recorder *r, int status);
/* From a signal handler on the thread inside tc_recorder_run: leaves an
 * engine that did not return after a stop (never returns then); the run
 * ends with an INTERRUPTED exit event. Returns -1 if it cannot now (not
 * inside the engine, or a writer is being given an event): try later. */
int tc_recorder_escape(tc_recorder *r);
/* Instructions recorded so far; may be read from another thread while the
 * recording runs (progress display), a value at most a moment old. */
uint64_t tc_recorder_insns(const tc_recorder *r);
/* 1 after an escape: the engine is abandoned and must not be used. */
bool tc_recorder_escaped(const tc_recorder *r);
/* --max-insns counts every process of a recording: before each turn the
 * session gives a process what is left (tc_recorder_set_budget), and once
 * all is spent stops every process as at the limit (tc_recorder_stop_max:
 * each ends with a MAX_INSNS exit, status 124). Instructions executed. */
uint64_t tc_recorder_executed(const tc_recorder *r);
void tc_recorder_set_budget(tc_recorder *r, uint64_t remaining);
void tc_recorder_stop_max(tc_recorder *r);

/* record -j N (lib/parallel.c, docs/speed.md): the run phase and its
 * segments. tc_recorder_set_light, before the run: the recorder only
 * counts instructions (and runs what tracecorn runs itself), emits
 * nothing, and before instruction 0 and every `every` instructions
 * calls fn outside the engine, where the caller forks (with the index
 * of the segment's first instruction; tc_recorder_executed may be a few
 * instructions before it, where a delay slot or an IT block would have
 * put the stop: the segment then writes from index on). In the child,
 * tc_recorder_materialize makes it a full recorder from there (emitting
 * to emit): the start of the stream at 0, else a KEYFRAME; it stops
 * before instruction `to` (tc_recorder_segment_ended, and no EXIT) unless
 * the guest ends first. Then tc_recorder_run as usual. */
typedef void (*tc_checkpoint_fn)(void *ctx, tc_recorder *r, uint64_t index);
void tc_recorder_set_light(tc_recorder *r, uint64_t every, tc_checkpoint_fn fn,
                           void *ctx);
int tc_recorder_materialize(tc_recorder *r, uint64_t to, tc_emit_fn emit,
                            void *ctx, tc_error *err);
bool tc_recorder_segment_ended(const tc_recorder *r);
/* Whether the events emitted now come from a thread switch at the end
 * of a quantum (after the instruction's code hook stopped the engine). */
bool tc_recorder_turn_ending(const tc_recorder *r);
/* Test hook (tc_debug_options.test_early_checkpoint): the run phase takes
 * every checkpoint one instruction early (where the light recorder looks
 * at the instruction: near a checkpoint; test_parallel uses it on arm64,
 * the arch it applies to: no delay slots, IT blocks or x86's every-
 * instruction light hook; elsewhere it does nothing). */
void tc_recorder_test_early_checkpoints(tc_recorder *r);
/* How a fault the guest has a handler for is delivered (record -j: the
 * run phase logs the delivery, a segment takes it from the log): handled
 * says whether it will be (the default: tc_linux_fault_handled), deliver
 * builds the frame and moves the registers (tc_linux_deliver_fault),
 * false if it could not (the guest is then killed with SIGSEGV). */
typedef struct tc_fault_ops {
  bool (*handled)(void *ctx, tc_emu *emu);
  bool (*deliver)(void *ctx, tc_emu *emu);
  void *ctx;
  /* The thread switch (default tc_emu_schedule; record -j logs it, a
   * segment takes it from the log) and whether the running thread shares
   * the CPU (default: other threads or processes live), asked after it. */
  int (*schedule)(void *ctx, tc_emu *emu, tc_error *err);
  bool (*shares)(void *ctx, tc_emu *emu);
} tc_fault_ops;
void tc_recorder_set_fault_ops(tc_recorder *r, const tc_fault_ops *ops);
/* The syscalls and memory accesses recorded so far. */
void tc_recorder_counts(const tc_recorder *r, uint64_t *syscalls,
                        uint64_t *mem_accesses);
/* What stopped the run phase because it cannot log it, or NULL. */
const char *tc_recorder_light_refusal(const tc_recorder *r);

#endif
