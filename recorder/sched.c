/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The scheduler of a recording's processes (recorder/sched.h). */
#include "recorder/sched.h"
#include "common/notice.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>

/* One process of the run: slot 0 is the first (user NULL), the others
 * children made by fork. */
typedef struct proc_slot {
  tc_emu *emu;
  tc_recorder *rec;
  void *user; /* the session's child handle, NULL for the first */
  bool used, done;
} proc_slot;

struct tc_sched {
  tc_sched_ops ops;
  uint64_t max_insns;
  proc_slot procs[TC_MAX_PROCS];
  uint64_t insns_ended; /* executed by the processes that ended */
  bool budget_spent;    /* --max-insns reached: every process stops */
  /* Turns given since the first fork: numbered in every process's stream
   * (TC_EV_TURN) so their files merge in time order. */
  bool several;
  uint64_t turns;
  /* The recorder inside the engine now (tc_session_escape). */
  tc_recorder *volatile running;
  volatile sig_atomic_t stop_requested;
  volatile sig_atomic_t stop_status;
};

tc_sched *tc_sched_new(uint64_t max_insns, const tc_sched_ops *ops) {
  tc_sched *s = calloc(1, sizeof *s);
  if (!s)
    return NULL;
  s->ops = *ops;
  s->max_insns = max_insns;
  return s;
}

void tc_sched_free(tc_sched *s, void (*free_child)(void *user)) {
  if (!s)
    return;
  for (int i = 0; i < TC_MAX_PROCS; i++)
    if (s->procs[i].used && s->procs[i].user && free_child)
      free_child(s->procs[i].user);
  free(s);
}

void tc_sched_add_first(tc_sched *s, tc_emu *emu, tc_recorder *rec) {
  s->procs[0] = (proc_slot){emu, rec, NULL, true, false};
  if (s->stop_requested) /* after: a stop from now on finds the slot */
    tc_recorder_stop(rec, s->stop_status);
}

void tc_sched_stop(tc_sched *s, int status) {
  s->stop_status = status;
  s->stop_requested = 1;
  for (int i = 0; i < TC_MAX_PROCS; i++)
    if (s->procs[i].used && s->procs[i].rec)
      tc_recorder_stop(s->procs[i].rec, s->stop_status);
}

bool tc_sched_stop_requested(const tc_sched *s) {
  return s->stop_requested != 0;
}

tc_recorder *tc_sched_running(const tc_sched *s) { return s->running; }

/* A child made by fork: a slot (the first process's too, once it has
 * ended, its result kept), then its recorder from the session, which
 * starts stopped when the recording is stopping. */
static int attach(tc_sched *s, tc_emu *emu, tc_error *err) {
  int slot = -1;
  for (int i = 0; i < TC_MAX_PROCS && slot < 0; i++)
    if (!s->procs[i].used || (i == 0 && s->procs[0].done))
      slot = i;
  if (slot < 0) {
    tc_error_set(err, "out of memory for process %u", (unsigned)emu->pid);
    tc_emu_kill(emu, 9);
    tc_proc_exited(emu);
    tc_emu_free(emu);
    return -1;
  }
  void *user = NULL;
  tc_recorder *rec = s->ops.attach(s->ops.ctx, emu, &user, err);
  if (!rec)
    return -1;
  s->procs[slot] = (proc_slot){emu, rec, user, true, false};
  if (s->budget_spent)
    tc_recorder_stop_max(rec);
  else if (s->stop_requested)
    tc_recorder_stop(rec, s->stop_status);
  return 0;
}

/* --max-insns is one budget for every process: the turn about to run gets
 * what is left; when nothing is, every process stops as at the limit. */
static void spend_budget(tc_sched *s, proc_slot *next) {
  uint64_t used = s->insns_ended;
  for (int i = 0; i < TC_MAX_PROCS; i++)
    if (s->procs[i].used && !s->procs[i].done && s->procs[i].rec)
      used += tc_recorder_executed(s->procs[i].rec);
  if (used < s->max_insns) {
    tc_recorder_set_budget(next->rec, s->max_insns - used);
    return;
  }
  s->stop_status = 124;
  s->stop_requested = 1;
  s->budget_spent = true;
  for (int i = 0; i < TC_MAX_PROCS; i++)
    if (s->procs[i].used && !s->procs[i].done && s->procs[i].rec)
      tc_recorder_stop_max(s->procs[i].rec);
}

/* A process ended: its final events, then the session closes its files;
 * a child's slot is freed, the first's keeps its place until reused. */
static int end_process(tc_sched *s, proc_slot *p, tc_run_result *res,
                       tc_error *err) {
  tc_run_result r = {0};
  s->insns_ended += tc_recorder_executed(p->rec);
  int rc = tc_recorder_finish(p->rec, &r, err);
  bool escaped = tc_recorder_escaped(p->rec);
  if (!escaped)
    tc_proc_exited(p->emu);
  p->done = true;
  void *user = p->user;
  s->ops.ended(s->ops.ctx, user, &r, escaped);
  if (!user) {
    if (res)
      *res = r;
    return rc;
  }
  *p = (proc_slot){0};
  return rc;
}

/* Every live process waits for another: the earliest timed wait ends
 * (every clock jumps to it), or it is a deadlock (false). */
static bool wake_by_clock(tc_sched *s, uint64_t *clock) {
  uint64_t first = UINT64_MAX;
  for (int i = 0; i < TC_MAX_PROCS; i++)
    if (s->procs[i].used && !s->procs[i].done) {
      uint64_t d = tc_emu_next_deadline(s->procs[i].emu);
      first = d < first ? d : first;
    }
  /* Every clock has reached it already (a full round judged them all on
   * the latest time): the clock cannot help. */
  if (first == UINT64_MAX || first <= *clock)
    return false;
  for (int i = 0; i < TC_MAX_PROCS; i++)
    if (s->procs[i].used && !s->procs[i].done &&
        s->procs[i].emu->clock_ns < first)
      s->procs[i].emu->clock_ns = first;
  *clock = first > *clock ? first : *clock;
  return true;
}

static void deadlock_message(tc_sched *s, tc_error *err) {
  char list[600] = "";
  size_t len = 0;
  bool stopped = false;
  for (int i = 0; i < TC_MAX_PROCS && len + 200 < sizeof list; i++)
    if (s->procs[i].used && !s->procs[i].done) {
      stopped |= tc_emu_job_stopped(s->procs[i].emu);
      char what[200];
      tc_emu_describe_wait(s->procs[i].emu, what, sizeof what);
      len += (size_t)snprintf(list + len, sizeof list - len, "%sprocess %u: %s",
                              len ? "; " : "", (unsigned)s->procs[i].emu->pid,
                              what);
    }
  if (stopped)
    tc_error_set(err,
                 "stopped: no guest process is left to continue the stopped "
                 "ones (%s)",
                 list);
  else
    tc_error_set(err, "deadlock: every guest process waits for another (%s)",
                 list);
}

/* Round-robin over the processes in slot order: each runs one turn (a
 * quantum, or until it blocks, yields or ends); one that waits is passed
 * over until tc_emu_can_run says it can go on. Nothing depends on the
 * host's timing. The virtual clock is carried from one process to the
 * next, so time is one for all of them. */
int tc_sched_run(tc_sched *s, tc_run_result *res, tc_error *err) {
  tc_error local = {{0}};
  if (!err)
    err = &local;
  int rc = 0;
  int cur = 0, idle = 0;
  uint64_t clock = 0;
  for (;;) {
    bool any = false;
    for (int i = 0; i < TC_MAX_PROCS; i++)
      any |= s->procs[i].used && !s->procs[i].done;
    if (!any)
      break;
    proc_slot *p = &s->procs[cur];
    /* One time for all: a wait's deadline is judged on the latest clock. */
    if (p->used && !p->done && p->emu->clock_ns < clock)
      p->emu->clock_ns = clock;
    /* A process stopped by another (job control) gets no turn until a
     * SIGCONT; one that stopped itself is blocked (tc_emu_can_run). */
    bool can =
        p->used && !p->done &&
        (!tc_recorder_blocked(p->rec) || p->emu->exited || s->stop_requested ||
         tc_emu_can_run(p->emu)) &&
        (!tc_emu_job_stopped(p->emu) || p->emu->exited || s->stop_requested);
    if (!can) {
      cur = (cur + 1) % TC_MAX_PROCS;
      if (++idle < TC_MAX_PROCS)
        continue;
      idle = 0;
      if (wake_by_clock(s, &clock))
        continue;
      deadlock_message(s, err);
      tc_notice("%s", err->msg);
      for (int i = 0; i < TC_MAX_PROCS; i++) {
        proc_slot *q = &s->procs[i];
        if (q->used && !q->done) {
          tc_recorder_set_deadlock(q->rec);
          int r = end_process(s, q, q->user ? NULL : res, err);
          if (i == 0) /* the first, or a child in its place once it ended */
            rc = r;
        }
      }
      break;
    }
    idle = 0;
    if (s->max_insns && !s->stop_requested)
      spend_budget(s, p);
    s->running = p->rec;
    if (s->several)
      tc_recorder_set_turn(p->rec, s->turns++);
    int turn = tc_recorder_turn(p->rec, err);
    s->running = NULL;
    clock = p->emu->clock_ns;
    /* Children made in this turn join the round. */
    for (tc_emu *c; (c = tc_procs_take_new(p->emu));) {
      s->several = true;
      if (attach(s, c, err) < 0)
        tc_notice("%s", err->msg);
    }
    if (turn == TC_TURN_DONE) {
      bool first = p->user == NULL;
      int r = end_process(s, p, first ? res : NULL, err);
      if (first)
        rc = r;
    }
    cur = (cur + 1) % TC_MAX_PROCS;
  }
  return rc;
}
