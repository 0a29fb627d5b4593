/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The scheduler of a recording's processes (fork makes them): round-robin
 * turns on one virtual clock, one --max-insns budget for all, stop
 * requests, the deadlock verdict. It knows engines and recorders, never a
 * format: the session makes each process's outputs and recorder
 * (tc_sched_ops.attach) and closes them when it ends (ended). */
#ifndef TC_SCHED_H
#define TC_SCHED_H

#include <stdbool.h>
#include <stdint.h>

#include "emu/engine/emu.h"
#include "recorder/recorder.h"

typedef struct tc_sched tc_sched;

typedef struct tc_sched_ops {
  void *ctx;
  /* A process made by fork in the last turn: its recorder, made by the
   * caller with its outputs (*user: the caller's handle for it), or NULL
   * with err set, the caller having ended and freed the child. */
  tc_recorder *(*attach)(void *ctx, tc_emu *child, void **user, tc_error *err);
  /* A process ended: its recorder has emitted its final events (result
   * r); the caller closes its outputs and, for a child (user != NULL),
   * frees the child, its engine unless escaped (abandoned). */
  void (*ended)(void *ctx, void *user, const tc_run_result *r, bool escaped);
} tc_sched_ops;

/* max_insns: the budget of every process together (0: none). */
tc_sched *tc_sched_new(uint64_t max_insns, const tc_sched_ops *ops);
/* Frees the children still attached (through ops->ended's owner: their
 * user handles are given to free_child). */
void tc_sched_free(tc_sched *s, void (*free_child)(void *user));
/* The first process (slot 0; user NULL); a stop requested before is
 * passed on to its recorder. */
void tc_sched_add_first(tc_sched *s, tc_emu *emu, tc_recorder *rec);
/* Runs every process to its end; *res gets the first process's result.
 * Returns the first process's tc_recorder_finish result. */
int tc_sched_run(tc_sched *s, tc_run_result *res, tc_error *err);
/* Every process ends before its next instruction, with status (from a
 * signal handler too). */
void tc_sched_stop(tc_sched *s, int status);
bool tc_sched_stop_requested(const tc_sched *s);
/* The recorder inside the engine now, or NULL (tc_session_escape). */
tc_recorder *tc_sched_running(const tc_sched *s);

#endif
