/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Emulated kernel: guest threads (clone/clone3 with CLONE_THREAD), futexes,
 * thread exit, and the deterministic scheduler.
 *
 * All threads share the one Unicorn engine. The running thread's
 * registers are the engine's; a switch saves them with uc_context_save and
 * loads the next thread's, between instructions, with the engine stopped
 * (the recorder's run loop calls tc_emu_schedule). The scheduler is
 * round-robin in creation order: a thread runs until its quantum of
 * instructions ends (tc_options.sched_quantum) or it blocks (futex wait),
 * yields (sched_yield, nanosleep) or exits. Nothing depends on the host's
 * timing, so the same input gives the same interleaving.
 *
 * A wait that blocks does not complete: the thread's PC goes back to the
 * trap instruction (as Linux restarts an interrupted call), and when the
 * thread is woken it runs that instruction again, which then returns the
 * wake's result (0, or -ETIMEDOUT) without waiting. So every SYSCALL event
 * has its real result, and the first, blocked pass is an instruction that
 * left the PC where it was.
 *
 * The table is created by the first clone; a program that never clones
 * has none, and nothing here costs it anything. */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/notice.h"
#include "emu/linux/linux_arch.h"
#include "emu/linux/linux_sys.h"

#define CLONE_VM 0x100u
#define CLONE_FS 0x200u
#define CLONE_FILES 0x400u
#define CLONE_SIGHAND 0x800u
#define CLONE_VFORK 0x4000u
#define CLONE_THREAD 0x10000u
#define CLONE_SYSVSEM 0x40000u
#define CLONE_SETTLS 0x80000u
#define CLONE_PARENT_SETTID 0x100000u
#define CLONE_CHILD_CLEARTID 0x200000u
#define CLONE_DETACHED 0x400000u
#define CLONE_CHILD_SETTID 0x1000000u
/* What a thread may share or ask for; anything else is refused. */
#define CLONE_THREAD_OK                                                        \
  (CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD |          \
   CLONE_SYSVSEM | CLONE_SETTLS | CLONE_PARENT_SETTID | CLONE_CHILD_CLEARTID | \
   CLONE_DETACHED | CLONE_CHILD_SETTID)

#define BITSET_MATCH_ANY 0xffffffffu

/* ------------------------------------------------------------ the table */

size_t tc_emu_live_threads(const tc_emu *emu) {
  if (emu->nthreads == 0)
    return 1;
  size_t n = 0;
  for (size_t i = 0; i < emu->nthreads; i++)
    n += emu->threads[i].state != TC_THREAD_EXITED;
  return n;
}

bool tc_thread_exists(const tc_emu *emu, uint32_t tid) {
  if (emu->nthreads == 0)
    return tid == emu->tid;
  for (size_t i = 0; i < emu->nthreads; i++)
    if (emu->threads[i].tid == tid && emu->threads[i].state != TC_THREAD_EXITED)
      return true;
  return false;
}

static tc_thread *thread_add(tc_emu *emu) {
  if (emu->nthreads == emu->cap_threads) {
    size_t cap = emu->cap_threads ? emu->cap_threads * 2 : 8;
    tc_thread *t = realloc(emu->threads, cap * sizeof *t);
    if (!t)
      return NULL;
    emu->threads = t;
    emu->cap_threads = cap;
  }
  tc_thread *t = &emu->threads[emu->nthreads];
  memset(t, 0, sizeof *t);
  if (uc_context_alloc(emu->uc, &t->ctx) != UC_ERR_OK)
    return NULL;
  emu->nthreads++;
  return t;
}

/* The main thread's entry, made by the first clone. */
static int table_init(tc_emu *emu) {
  if (emu->nthreads)
    return 0;
  tc_thread *t = thread_add(emu);
  if (!t)
    return -ENOMEM;
  t->tid = emu->tid;
  t->state = TC_THREAD_RUNNABLE;
  emu->cur_thread = 0;
  return 0;
}

void tc_linux_threads_free(tc_emu *emu) {
  for (size_t i = 0; i < emu->nthreads; i++) {
    uc_context_free(emu->threads[i].ctx);
    free(emu->threads[i].wait_set);
  }
  free(emu->threads);
  emu->threads = NULL;
  emu->nthreads = emu->cap_threads = 0;
}

/* Per-thread kernel state out of / into the running thread's places. */
static void thread_park(tc_emu *emu, tc_thread *t) {
  tc_linux_state *st = tc_linux_state_of(emu);
  t->clear_child_tid = emu->clear_child_tid;
  t->gdt_addr = emu->gdt_addr;
  t->robust_list = st->robust_list;
  t->sigmask = st->sigmask;
  t->altstack_sp = st->altstack_sp;
  t->altstack_size = st->altstack_size;
  t->altstack_flags = st->altstack_flags;
  t->sig_pending = st->thread_pending;
  t->sig_user = st->thread_pending_user;
}

static void thread_unpark(tc_emu *emu, const tc_thread *t) {
  tc_linux_state *st = tc_linux_state_of(emu);
  emu->tid = t->tid;
  emu->clear_child_tid = t->clear_child_tid;
  emu->gdt_addr = t->gdt_addr;
  st->robust_list = t->robust_list;
  st->sigmask = t->sigmask;
  st->altstack_sp = t->altstack_sp;
  st->altstack_size = t->altstack_size;
  st->altstack_flags = t->altstack_flags;
  st->thread_pending = t->sig_pending;
  st->thread_pending_user = t->sig_user;
}

int tc_thread_queue_signal(tc_emu *emu, uint32_t tid, int sig, bool user) {
  uint64_t bit = 1ull << (sig - 1);
  for (size_t i = 0; i < emu->nthreads; i++) {
    tc_thread *t = &emu->threads[i];
    if (t->tid != tid || t->state == TC_THREAD_EXITED || i == emu->cur_thread)
      continue;
    t->sig_pending |= bit;
    t->sig_user = user ? t->sig_user | bit : t->sig_user & ~bit;
    /* Woken: its PC is still at the trap, so the call runs again once
     * the handler returns. A futex wait without a timeout then fails with
     * -EINTR unless the handler has SA_RESTART (Linux's -ERESTARTSYS; a
     * timed wait restarts in any case); a pipe wait restarts. */
    if ((t->state == TC_THREAD_FUTEX || t->state == TC_THREAD_FD) &&
        !(t->sigmask & bit)) {
      const tc_linux_state *st = tc_linux_state_of(emu);
      if (t->state == TC_THREAD_FUTEX && t->deadline == UINT64_MAX &&
          !(st->sigact[sig].flags & 0x10000000u /* SA_RESTART */)) {
        t->restart = true;
        t->restart_ret = -EINTR;
      }
      t->state = TC_THREAD_RUNNABLE;
    }
    if (t->state == TC_THREAD_SIGWAIT && !(t->sigwait_mask & bit)) {
      t->state = TC_THREAD_RUNNABLE;
      t->sig_woken = true; /* the wait itself takes it */
    }
    return 0;
  }
  return -ESRCH;
}

/* What a thread blocks: while it waits for a signal, the wait's mask. */
static uint64_t blocked_by(const tc_thread *t) {
  return t->state == TC_THREAD_SIGWAIT ? t->sigwait_mask : t->sigmask;
}

void tc_thread_wake_sigwaiters(tc_emu *emu, int sig) {
  uint64_t bit = 1ull << (sig - 1);
  for (size_t i = 0; i < emu->nthreads; i++) {
    tc_thread *t = &emu->threads[i];
    if (t->state == TC_THREAD_SIGWAIT && !(t->sigwait_mask & bit)) {
      t->state = TC_THREAD_RUNNABLE;
      t->sig_woken = true;
    }
  }
}

static bool others_live(const tc_emu *emu);

bool tc_thread_wait_signal(tc_sys_call *c, uint64_t mask) {
  tc_emu *emu = c->emu;
  /* another thread, or another process, may send one */
  if (!others_live(emu) || table_init(emu) < 0)
    return false;
  tc_thread *self = &emu->threads[emu->cur_thread];
  self->state = TC_THREAD_SIGWAIT;
  self->sigwait_mask = mask;
  c->restart = true;
  emu->resched = TC_RESCHED_BLOCK;
  uc_emu_stop(emu->uc);
  return true;
}

uint32_t tc_thread_pick_for_signal(tc_emu *emu, int sig) {
  if (emu->nthreads == 0)
    return 0;
  tc_linux_state *st = tc_linux_state_of(emu);
  uint64_t bit = 1ull << (sig - 1);
  for (size_t i = 0; i < emu->nthreads; i++) {
    const tc_thread *t = &emu->threads[i];
    if (t->tid != emu->pid || t->state == TC_THREAD_EXITED)
      continue;
    if (i == emu->cur_thread ? !(st->sigmask & bit) : !(blocked_by(t) & bit))
      return i == emu->cur_thread ? 0 : t->tid;
    break;
  }
  if (!(st->sigmask & bit))
    return 0;
  for (size_t i = 0; i < emu->nthreads; i++) {
    const tc_thread *t = &emu->threads[i];
    if (i != emu->cur_thread && t->state != TC_THREAD_EXITED &&
        !(blocked_by(t) & bit))
      return t->tid;
  }
  return 0;
}

/* Writes the PC keeping the ISA state (arm: Unicorn takes Thumb from bit 0
 * of a PC write). */
static void set_pc(tc_emu *emu, uint64_t pc) {
  tc_emu_set_reg(emu, emu->arch->pc_reg, pc | (tc_emu_thumb(emu) ? 1 : 0));
}

/* A fresh thread's first switch-in: the parent's registers at the clone,
 * then what the kernel gives a new thread. */
static int thread_start(tc_emu *emu, tc_thread *t) {
  const tc_arch *a = emu->arch;
  const tc_syscall_abi *abi = &a->sys;
  set_pc(emu, t->start_pc);
  if (t->start_sp)
    tc_emu_set_reg(emu, a->sp_reg, t->start_sp);
  tc_emu_set_reg(emu, abi->ret_reg, 0);
  if (abi->err_reg >= 0)
    tc_emu_set_reg(emu, abi->err_reg, 0);
  const tc_linux_arch_ops *ops = tc_linux_arch_of(a);
  if (t->set_tls && ops->tls_reg) {
    int reg = tc_arch_reg_index(a, ops->tls_reg);
    if (reg >= 0)
      tc_emu_set_reg(emu, reg, t->tls);
  }
  if (ops->thread_start && ops->thread_start(emu, t) < 0)
    return -1;
  t->fresh = false;
  return 0;
}

/* ---------------------------------------------------------------- clone */

typedef struct clone_req {
  uint64_t flags, stack, ptid, ctid, tls;
} clone_req;

static int64_t clone_thread(tc_sys_call *c, const clone_req *q) {
  tc_emu *emu = c->emu;
  uint64_t f = q->flags;
  if (!(f & CLONE_THREAD))
    /* fork, vfork, posix_spawn: a second process (linux_process.c). */
    return tc_proc_fork(c, f, q->stack, q->ptid, q->ctid);
  if (!(f & CLONE_VM))
    return -EINVAL;
  if (!(f & CLONE_SIGHAND) || (f & ~(uint64_t)CLONE_THREAD_OK & ~0xffull))
    return -EINVAL;
  if (table_init(emu) < 0)
    return -ENOMEM;
  uint64_t gdt = emu->gdt_addr;
  const tc_linux_arch_ops *ops = tc_linux_arch_of(emu->arch);
  if ((f & CLONE_SETTLS) && ops->clone_settls) {
    int r = ops->clone_settls(emu, q->tls, &gdt);
    if (r < 0)
      return r;
  }
  tc_thread *t = thread_add(emu);
  if (!t)
    return -ENOMEM;
  /* thread_add may move the table; the parent's entry is re-read below. */
  t->tid = tc_procs_new_id(emu);
  t->state = TC_THREAD_RUNNABLE;
  t->fresh = true;
  t->start_pc = tc_emu_reg(emu, emu->arch->pc_reg) + emu->trap_insn_size;
  t->start_sp = q->stack;
  t->set_tls = (f & CLONE_SETTLS) != 0;
  t->tls = q->tls;
  t->gdt_addr = gdt;
  t->clear_child_tid = (f & CLONE_CHILD_CLEARTID) ? q->ctid : 0;
  t->sigmask = c->st->sigmask; /* inherited; the alt stack is not */
  t->altstack_flags = 2;       /* SS_DISABLE */
  if (uc_context_save(emu->uc, t->ctx) != UC_ERR_OK) {
    uc_context_free(t->ctx);
    emu->nthreads--;
    return -ENOMEM;
  }
  int r;
  if ((f & CLONE_PARENT_SETTID) &&
      (r = tc_sys_put_uint(emu, q->ptid, 4, t->tid)) < 0)
    return r;
  if ((f & CLONE_CHILD_SETTID) &&
      (r = tc_sys_put_uint(emu, q->ctid, 4, t->tid)) < 0)
    return r;
  /* The parent goes on; the scheduler now counts its quantum. */
  if (emu->resched < TC_RESCHED_KEEP)
    emu->resched = TC_RESCHED_KEEP;
  uc_emu_stop(emu->uc);
  return t->tid;
}

static int64_t sys_clone(tc_sys_call *c) {
  clone_req q = {.flags = c->a[0], .stack = c->a[1], .ptid = c->a[2]};
  if (tc_linux_arch_of(c->emu->arch)->clone_backwards) {
    q.tls = c->a[3]; /* (flags, sp, ptid, tls, ctid): i386, arm, arm64, mips */
    q.ctid = c->a[4];
  } else { /* (flags, sp, ptid, ctid, tls): x86-64 */
    q.ctid = c->a[3];
    q.tls = c->a[4];
  }
  return clone_thread(c, &q); /* a thread's exit signal is ignored */
}

/* struct clone_args: u64 flags, pidfd, child_tid, parent_tid, exit_signal,
 * stack, stack_size, tls, set_tid, set_tid_size, cgroup. */
static int64_t sys_clone3(tc_sys_call *c) {
  tc_emu *emu = c->emu;
  uint64_t size = c->a[1];
  if (size < 64 || size > 4096)
    return -EINVAL;
  uint8_t b[88] = {0};
  int r = tc_sys_read(emu, c->a[0], b, size < sizeof b ? size : sizeof b);
  if (r < 0)
    return r;
  uint64_t v[11];
  for (int i = 0; i < 11; i++)
    v[i] = tc_abi_get(emu->arch, b + 8 * i, 8);
  if (v[4] && (v[0] & CLONE_THREAD))
    return -EINVAL;          /* exit_signal */
  if (v[8] || v[9] || v[10]) /* set_tid, cgroup */
    return -EINVAL;
  if ((v[5] == 0) != (v[6] == 0))
    return -EINVAL;
  clone_req q = {.flags = v[0],
                 .ctid = v[2],
                 .ptid = v[3],
                 .stack = v[5] ? v[5] + v[6] : 0,
                 .tls = v[7]};
  if (q.flags >> 32)
    return -EINVAL;
  return clone_thread(c, &q);
}

/* ---------------------------------------------------------------- futex */

/* Wakes up to n waiters on addr whose bitset meets bitset, oldest first.
 * Returns how many. */
static int futex_wake(tc_emu *emu, uint64_t addr, uint32_t bitset, int n) {
  int woken = 0;
  while (woken < n) {
    tc_thread *best = NULL;
    for (size_t i = 0; i < emu->nthreads; i++) {
      tc_thread *t = &emu->threads[i];
      if (t->state == TC_THREAD_FUTEX && t->futex_addr == addr &&
          (t->futex_bitset & bitset) && (!best || t->wait_seq < best->wait_seq))
        best = t;
    }
    if (!best)
      break;
    best->state = TC_THREAD_RUNNABLE;
    best->restart = true;
    best->restart_ret = 0;
    woken++;
  }
  return woken;
}

/* Moves up to n waiters on addr to addr2 (oldest first). */
static int futex_requeue(tc_emu *emu, uint64_t addr, uint64_t addr2, int n) {
  int moved = 0;
  for (int k = 0; k < n; k++) {
    tc_thread *best = NULL;
    for (size_t i = 0; i < emu->nthreads; i++) {
      tc_thread *t = &emu->threads[i];
      if (t->state == TC_THREAD_FUTEX && t->futex_addr == addr &&
          (!best || t->wait_seq < best->wait_seq))
        best = t;
    }
    if (!best)
      break;
    best->futex_addr = addr2;
    best->wait_seq = ++emu->wait_seq; /* behind addr2's own waiters */
    moved++;
  }
  return moved;
}

static int64_t futex_wait(tc_sys_call *c, int op, bool time64) {
  tc_emu *emu = c->emu;
  int cmd = op & 127;
  uint64_t uaddr = c->a[0];
  uint32_t val = (uint32_t)c->a[2], val3 = (uint32_t)c->a[5];
  tc_thread *self = emu->nthreads ? &emu->threads[emu->cur_thread] : NULL;
  if (self && self->restart) {
    /* The wait ran before and blocked; it has been woken or timed out. */
    self->restart = false;
    return self->restart_ret;
  }
  if (cmd == 9 && val3 == 0)
    return -EINVAL;
  uint64_t cur;
  int r;
  if ((r = tc_sys_get_uint(emu, uaddr, 4, &cur)) < 0)
    return r;
  if ((uint32_t)cur != val)
    return -EAGAIN;
  uint64_t deadline = UINT64_MAX;
  if (c->a[3]) {
    uint64_t ns;
    if ((r = tc_sys_read_timespec_ns(c, c->a[3], time64, &ns)) < 0)
      return r;
    if (cmd == 9) { /* absolute, on CLOCK_REALTIME or CLOCK_MONOTONIC */
      uint64_t now = tc_sys_now_ns(emu, (op & 256) ? 0 : 1);
      ns = ns > now ? ns - now : 0;
    }
    deadline = emu->clock_ns + ns;
  }
  if (tc_emu_live_threads(emu) <= 1) {
    /* Nobody else can wake it: a timed wait times out at once (the clock
     * jumps), an untimed one would sleep forever. */
    if (deadline != UINT64_MAX) {
      emu->clock_ns = deadline;
      return -ETIMEDOUT;
    }
    if (!c->st->futex_reported && !emu->opt.quiet)
      tc_notice("futex wait at 0x%llx would block forever (no other "
                "thread can wake it); returning -ETIMEDOUT",
                (unsigned long long)uaddr);
    c->st->futex_reported = true;
    return -ETIMEDOUT;
  }
  self->state = TC_THREAD_FUTEX;
  self->futex_addr = uaddr;
  self->futex_bitset = cmd == 9 ? val3 : BITSET_MATCH_ANY;
  self->deadline = deadline;
  self->wait_seq = ++emu->wait_seq;
  c->restart = true;
  emu->resched = TC_RESCHED_BLOCK;
  uc_emu_stop(emu->uc);
  return 0;
}

/* FUTEX_WAKE_OP's comparison of the old value with cmparg. */
static bool wake_op_cmp(int cmp, uint32_t old, int32_t cmparg) {
  int32_t o = (int32_t)old;
  switch (cmp) {
  case 0:
    return o == cmparg;
  case 1:
    return o != cmparg;
  case 2:
    return o < cmparg;
  case 3:
    return o <= cmparg;
  case 4:
    return o > cmparg;
  case 5:
    return o >= cmparg;
  default:
    return false;
  }
}

static int64_t futex_common(tc_sys_call *c, bool time64) {
  tc_emu *emu = c->emu;
  uint64_t uaddr = c->a[0], uaddr2 = c->a[4];
  int op = tc_sys_int(c, 1);
  int cmd = op & ~(128 | 256); /* FUTEX_PRIVATE_FLAG, FUTEX_CLOCK_REALTIME */
  uint32_t val = (uint32_t)c->a[2], val3 = (uint32_t)c->a[5];
  /* FUTEX_REQUEUE's val2 is the timeout argument, as a number. */
  int val2 = (int)(uint32_t)c->a[3];
  if (uaddr & 3)
    return -EINVAL;
  uint64_t cur;
  int r;
  switch (cmd) {
  case 0: /* FUTEX_WAIT */
  case 9: /* FUTEX_WAIT_BITSET */
    return futex_wait(c, op, time64);
  case 1:  /* FUTEX_WAKE */
  case 10: /* FUTEX_WAKE_BITSET */
    if (cmd == 10 && val3 == 0)
      return -EINVAL;
    if ((int)val <= 0)
      return 0;
    return futex_wake(emu, uaddr, cmd == 10 ? val3 : BITSET_MATCH_ANY,
                      (int)val);
  case 3: /* FUTEX_REQUEUE */
  case 4: /* FUTEX_CMP_REQUEUE */
    if (uaddr2 & 3)
      return -EINVAL;
    if (cmd == 4) {
      if ((r = tc_sys_get_uint(emu, uaddr, 4, &cur)) < 0)
        return r;
      if ((uint32_t)cur != val3)
        return -EAGAIN;
    }
    if ((int)val < 0 || val2 < 0)
      return -EINVAL;
    r = futex_wake(emu, uaddr, BITSET_MATCH_ANY, (int)val);
    return r + futex_requeue(emu, uaddr, uaddr2, val2);
  case 5: { /* FUTEX_WAKE_OP: *uaddr2 = *uaddr2 OP oparg, then wake */
    if (uaddr2 & 3)
      return -EINVAL;
    int fop = (int)((val3 >> 28) & 7);
    int fcmp = (int)((val3 >> 24) & 15);
    int32_t oparg = (int32_t)(val3 << 8) >> 20;
    int32_t cmparg = (int32_t)(val3 << 20) >> 20;
    if ((val3 >> 28) & 8) /* FUTEX_OP_OPARG_SHIFT */
      oparg = (oparg < 0 || oparg > 31) ? 0 : (int32_t)(1u << oparg);
    if ((r = tc_sys_get_uint(emu, uaddr2, 4, &cur)) < 0)
      return r;
    uint32_t old = (uint32_t)cur, nv;
    switch (fop) {
    case 0:
      nv = (uint32_t)oparg;
      break;
    case 1:
      nv = old + (uint32_t)oparg;
      break;
    case 2:
      nv = old | (uint32_t)oparg;
      break;
    case 3:
      nv = old & ~(uint32_t)oparg;
      break;
    case 4:
      nv = old ^ (uint32_t)oparg;
      break;
    default:
      return -ENOSYS;
    }
    if (fcmp > 5)
      return -ENOSYS;
    if ((r = tc_sys_put_uint(emu, uaddr2, 4, nv)) < 0)
      return r;
    int woken = futex_wake(emu, uaddr, BITSET_MATCH_ANY, (int)val);
    if (wake_op_cmp(fcmp, old, cmparg))
      woken += futex_wake(emu, uaddr2, BITSET_MATCH_ANY, val2);
    return woken;
  }
  default:
    return -ENOSYS; /* PI futexes, FUTEX_WAITV... */
  }
}

static int64_t sys_futex(tc_sys_call *c) { return futex_common(c, false); }
static int64_t sys_futex_time64(tc_sys_call *c) {
  return futex_common(c, true);
}

/* ------------------------------------------------------ exit and yield */

bool tc_thread_exit(tc_sys_call *c) {
  tc_emu *emu = c->emu;
  if (tc_emu_live_threads(emu) <= 1)
    return false;
  tc_thread *self = &emu->threads[emu->cur_thread];
  /* CLONE_CHILD_CLEARTID / set_tid_address: 0 at the address and a wake,
   * which is what pthread_join waits for. A bad address is ignored, as
   * the kernel does. */
  if (emu->clear_child_tid &&
      tc_sys_put_uint(emu, emu->clear_child_tid, 4, 0) == 0)
    futex_wake(emu, emu->clear_child_tid, BITSET_MATCH_ANY, 1);
  self->state = TC_THREAD_EXITED;
  c->no_return = true;
  c->action = TC_SYS_ACT_THREAD_EXIT;
  emu->resched = TC_RESCHED_BLOCK;
  uc_emu_stop(emu->uc);
  return true;
}

/* Whether anybody but the calling thread could change what it waits for. */
static bool others_live(const tc_emu *emu) {
  return tc_emu_live_threads(emu) > 1 || tc_procs_others_live(emu) > 0;
}

bool tc_thread_block(tc_sys_call *c, tc_thread_state state, int64_t wait_pid) {
  tc_emu *emu = c->emu;
  if (!others_live(emu) || table_init(emu) < 0)
    return false;
  tc_thread *self = &emu->threads[emu->cur_thread];
  self->state = state;
  self->wait_pid = wait_pid;
  c->restart = true;
  emu->resched = TC_RESCHED_BLOCK;
  uc_emu_stop(emu->uc);
  return true;
}

bool tc_thread_restarted(tc_sys_call *c, int64_t *ret) {
  tc_emu *emu = c->emu;
  if (!emu->nthreads || !emu->threads[emu->cur_thread].restart)
    return false;
  emu->threads[emu->cur_thread].restart = false;
  *ret = emu->threads[emu->cur_thread].restart_ret;
  return true;
}

bool tc_thread_wait_poll(tc_sys_call *c, const struct pollfd *set, size_t n,
                         uint64_t deadline) {
  tc_emu *emu = c->emu;
  if (!others_live(emu) || table_init(emu) < 0)
    return false;
  struct pollfd *copy = malloc((n ? n : 1) * sizeof *copy);
  if (!copy)
    return false;
  memcpy(copy, set, n * sizeof *copy);
  tc_thread *self = &emu->threads[emu->cur_thread];
  free(self->wait_set);
  self->wait_set = copy;
  self->wait_nfds = n;
  self->deadline = deadline;
  return tc_thread_block(c, TC_THREAD_POLL, 0);
}

bool tc_thread_wait_fd(tc_sys_call *c, int host_fd, short events) {
  tc_emu *emu = c->emu;
  if (!others_live(emu))
    return false;
  struct pollfd p = {host_fd, events, 0};
  if (poll(&p, 1, 0) != 0)
    return false; /* ready, hung up, or an error the call will report */
  if (table_init(emu) < 0)
    return false;
  tc_thread *self = &emu->threads[emu->cur_thread];
  self->state = TC_THREAD_FD;
  self->wait_fd = host_fd;
  self->wait_events = events;
  c->restart = true;
  emu->resched = TC_RESCHED_BLOCK;
  uc_emu_stop(emu->uc);
  return true;
}

void tc_thread_yield(tc_sys_call *c) {
  tc_emu *emu = c->emu;
  if (!others_live(emu))
    return;
  if (emu->resched < TC_RESCHED_YIELD)
    emu->resched = TC_RESCHED_YIELD;
  uc_emu_stop(emu->uc);
}

static int64_t sys_sched_yield(tc_sys_call *c) {
  tc_thread_yield(c);
  return 0;
}

/* ------------------------------------------------------------ scheduler */

void tc_emu_restart_pc(tc_emu *emu) {
  if (!emu->restart_pending)
    return;
  tc_emu_set_reg(emu, emu->arch->pc_reg, emu->restart_pc);
  emu->restart_pending = false;
}

/* Waits whose deadline has passed on the virtual clock end with
 * -ETIMEDOUT. */
/* A signal another process sent is pending for thread i, with a handler
 * that interrupts its wait: any for poll and futex waits, one without
 * SA_RESTART for pipe reads/writes and wait4 (those would restart; they go
 * on waiting and the handler runs when they end). */
static bool interrupts_wait(tc_emu *emu, tc_linux_state *st, size_t i) {
  const tc_thread *t = &emu->threads[i];
  if (t->state != TC_THREAD_FD && t->state != TC_THREAD_POLL &&
      t->state != TC_THREAD_CHILD && t->state != TC_THREAD_FUTEX)
    return false;
  uint64_t mask = i == emu->cur_thread ? st->sigmask : t->sigmask;
  uint64_t ready = st->pending_set & ~mask;
  if (!ready || !tc_signal_can_deliver(emu))
    return false;
  for (int sig = 1; sig <= TC_NSIG; sig++) {
    if (!(ready & (1ull << (sig - 1))) || st->sigact[sig].handler <= 1)
      continue;
    bool restarts = (st->sigact[sig].flags & 0x10000000u) != 0; /* SA_RESTART */
    if (!restarts || t->state == TC_THREAD_POLL || t->state == TC_THREAD_FUTEX)
      return true;
  }
  return false;
}

bool tc_thread_take_eintr(tc_emu *emu) {
  if (!emu->nthreads || !emu->threads[emu->cur_thread].eintr)
    return false;
  emu->threads[emu->cur_thread].eintr = false;
  emu->threads[emu->cur_thread].restart = false;
  return true;
}

static void wake_timed_out(tc_emu *emu) {
  tc_linux_state *st = tc_linux_state_of(emu);
  for (size_t i = 0; i < emu->nthreads; i++) {
    tc_thread *t = &emu->threads[i];
    if (t->state == TC_THREAD_CHILD &&
        tc_proc_wait_ready(emu, t->wait_pid, t->wait_options))
      t->state = TC_THREAD_RUNNABLE; /* the wait runs again and reaps */
    if (t->state == TC_THREAD_VFORK && tc_proc_vfork_ready(emu, t->wait_pid)) {
      t->state = TC_THREAD_RUNNABLE;
      t->restart = true; /* vfork returns the child's pid */
      t->restart_ret = t->wait_pid;
    }
    /* a signal another process left pending (tc_signal_post) */
    if (t->state == TC_THREAD_SIGWAIT && (st->pending_set & ~t->sigwait_mask)) {
      t->state = TC_THREAD_RUNNABLE;
      t->sig_woken = true; /* the wait, run again, takes it */
    }
    if (t->state == TC_THREAD_FD) {
      /* Guest pipes: what is in them depends only on what the guest's
       * threads did, so this is deterministic. The call runs again. */
      struct pollfd p = {t->wait_fd, t->wait_events, 0};
      if (poll(&p, 1, 0) != 0)
        t->state = TC_THREAD_RUNNABLE;
    }
    if (t->state == TC_THREAD_POLL) {
      if (poll(t->wait_set, (nfds_t)t->wait_nfds, 0) != 0) {
        t->state = TC_THREAD_RUNNABLE; /* the poll runs again: ready */
      } else if (t->deadline <= emu->clock_ns) {
        t->state = TC_THREAD_RUNNABLE; /* timed out: it returns 0 */
        t->restart = true;
        t->restart_ret = 0;
      }
    }
    if (t->state == TC_THREAD_FUTEX && t->deadline <= emu->clock_ns) {
      t->state = TC_THREAD_RUNNABLE;
      t->restart = true;
      t->restart_ret = -ETIMEDOUT;
    }
    /* What it waited for came first; else a signal may end the wait. */
    if (interrupts_wait(emu, st, i)) {
      t->state = TC_THREAD_RUNNABLE;
      t->eintr = true;
    }
    if (t->state == TC_THREAD_RUNNABLE && t->wait_set) {
      free(t->wait_set);
      t->wait_set = NULL;
    }
  }
}

static size_t pick_next(const tc_emu *emu, bool include_current) {
  size_t n = emu->nthreads;
  for (size_t k = 1; k <= n; k++) {
    size_t i = (emu->cur_thread + k) % n;
    if (i == emu->cur_thread && !include_current)
      break;
    if (emu->threads[i].state == TC_THREAD_RUNNABLE)
      return i;
  }
  return SIZE_MAX;
}

int tc_emu_schedule(tc_emu *emu, tc_error *err) {
  int why = emu->resched;
  emu->resched = TC_RESCHED_NONE;
  tc_emu_restart_pc(emu);
  if (emu->job_stop_sig) {
    /* Stopped (job control): no thread runs until another process sends
     * SIGCONT; with nobody left to send it, the run cannot go on. */
    if (tc_procs_others_live(emu))
      return 1;
    char what[160];
    tc_emu_describe_wait(emu, what, sizeof what);
    tc_error_set(err,
                 "stopped: process %u %s, and no other guest process is "
                 "left to send SIGCONT",
                 (unsigned)emu->pid, what);
    return -1;
  }
  if (emu->nthreads == 0 || why == TC_RESCHED_KEEP)
    return 0;
  wake_timed_out(emu);
  size_t next = pick_next(emu, true);
  if (next == SIZE_MAX && tc_procs_others_live(emu))
    return 1; /* another process may wake it: the session decides */
  while (next == SIZE_MAX) {
    /* Nobody can run: the earliest timed wait ends (the clock jumps). */
    uint64_t first = UINT64_MAX;
    for (size_t i = 0; i < emu->nthreads; i++)
      if ((emu->threads[i].state == TC_THREAD_FUTEX ||
           emu->threads[i].state == TC_THREAD_POLL) &&
          emu->threads[i].deadline < first)
        first = emu->threads[i].deadline;
    if (first == UINT64_MAX) {
      char list[200] = "";
      size_t len = 0;
      for (size_t i = 0; i < emu->nthreads && len < sizeof list - 48; i++) {
        const tc_thread *t = &emu->threads[i];
        if (t->state == TC_THREAD_FUTEX)
          len += (size_t)snprintf(list + len, sizeof list - len,
                                  "%s%u on futex 0x%llx", len ? ", " : "",
                                  (unsigned)t->tid,
                                  (unsigned long long)t->futex_addr);
        else if (t->state == TC_THREAD_FD || t->state == TC_THREAD_POLL)
          len += (size_t)snprintf(list + len, sizeof list - len, "%s%u on %s",
                                  len ? ", " : "", (unsigned)t->tid,
                                  t->state == TC_THREAD_FD ? "a pipe" : "poll");
        else if (t->state == TC_THREAD_SIGWAIT)
          len += (size_t)snprintf(list + len, sizeof list - len,
                                  "%s%u for a signal", len ? ", " : "",
                                  (unsigned)t->tid);
      }
      tc_error_set(
          err, "deadlock: every guest thread waits for another one (%s)", list);
      return -1;
    }
    emu->clock_ns = first;
    wake_timed_out(emu);
    next = pick_next(emu, true);
  }
  if (next == emu->cur_thread)
    return 0;
  tc_thread *cur = &emu->threads[emu->cur_thread];
  thread_park(emu, cur);
  if (cur->state != TC_THREAD_EXITED &&
      uc_context_save(emu->uc, cur->ctx) != UC_ERR_OK) {
    tc_error_set(err, "unicorn: cannot save a thread's registers");
    return -1;
  }
  tc_thread *t = &emu->threads[next];
  if (uc_context_restore(emu->uc, t->ctx) != UC_ERR_OK) {
    tc_error_set(err, "unicorn: cannot load a thread's registers");
    return -1;
  }
  emu->cur_thread = next;
  thread_unpark(emu, t);
  if (t->fresh && thread_start(emu, t) < 0) {
    tc_error_set(err, "unicorn: cannot start thread %u", (unsigned)t->tid);
    return -1;
  }
  if (!t->sig_woken)
    tc_signal_thread_resumed(emu);
  t->sig_woken = false;
  return 0;
}

/* record -j's replay (lib/parallel.c): a segment never calls the kernel,
 * so the threads the run made and its switches come from the run's log. */
int tc_thread_replay_add(tc_emu *emu, const tc_thread *proto) {
  if (table_init(emu) < 0)
    return -1;
  tc_thread *t = thread_add(emu);
  if (!t)
    return -1;
  t->tid = proto->tid;
  t->state = TC_THREAD_RUNNABLE;
  t->fresh = true;
  t->start_pc = proto->start_pc;
  t->start_sp = proto->start_sp;
  t->set_tls = proto->set_tls;
  t->tls = proto->tls;
  t->gdt_addr = proto->gdt_addr;
  t->clear_child_tid = proto->clear_child_tid;
  t->sigmask = proto->sigmask;
  t->altstack_flags = 2; /* SS_DISABLE */
  /* the registers at the clone, as clone_thread saves them */
  return uc_context_save(emu->uc, t->ctx) == UC_ERR_OK ? 0 : -1;
}

int tc_thread_replay_switch(tc_emu *emu, uint32_t tid) {
  size_t next = SIZE_MAX;
  for (size_t i = 0; i < emu->nthreads; i++)
    if (emu->threads[i].tid == tid)
      next = i;
  if (next == SIZE_MAX)
    return -1;
  if (next == emu->cur_thread)
    return 0;
  tc_thread *cur = &emu->threads[emu->cur_thread];
  thread_park(emu, cur);
  tc_thread *t = &emu->threads[next];
  if (uc_context_save(emu->uc, cur->ctx) != UC_ERR_OK ||
      uc_context_restore(emu->uc, t->ctx) != UC_ERR_OK)
    return -1;
  emu->cur_thread = next;
  thread_unpark(emu, t);
  return t->fresh ? thread_start(emu, t) : 0;
}

bool tc_emu_job_stopped(const tc_emu *emu) { return emu->job_stop_sig != 0; }

bool tc_emu_can_run(tc_emu *emu) {
  if (emu->job_stop_sig)
    return false;
  if (emu->nthreads == 0)
    return true;
  wake_timed_out(emu);
  return pick_next(emu, true) != SIZE_MAX;
}

uint64_t tc_emu_next_deadline(const tc_emu *emu) {
  uint64_t first = UINT64_MAX;
  if (emu->job_stop_sig)
    return first; /* no wait of a stopped process ends */
  for (size_t i = 0; i < emu->nthreads; i++)
    if ((emu->threads[i].state == TC_THREAD_FUTEX ||
         emu->threads[i].state == TC_THREAD_POLL) &&
        emu->threads[i].deadline < first)
      first = emu->threads[i].deadline;
  return first;
}

/* The name of a stop signal (host numbering). */
static const char *stop_signal_name(int sig) {
  switch (sig) {
  case 19:
    return "SIGSTOP";
  case 20:
    return "SIGTSTP";
  case 21:
    return "SIGTTIN";
  case 22:
    return "SIGTTOU";
  default:
    return "a stop signal";
  }
}

void tc_emu_describe_wait(const tc_emu *emu, char *out, size_t max) {
  size_t len = 0;
  out[0] = 0;
  if (emu->job_stop_sig) {
    snprintf(out, max,
             "is stopped by %s (natively it would wait forever for a SIGCONT "
             "from outside, such as a shell's fg)",
             stop_signal_name(emu->job_stop_sig));
    return;
  }
  for (size_t i = 0; i < emu->nthreads && len + 48 < max; i++) {
    const tc_thread *t = &emu->threads[i];
    const char *what = t->state == TC_THREAD_FUTEX     ? "a futex"
                       : t->state == TC_THREAD_FD      ? "a pipe"
                       : t->state == TC_THREAD_CHILD   ? "a child"
                       : t->state == TC_THREAD_VFORK   ? "its vfork child"
                       : t->state == TC_THREAD_SIGWAIT ? "a signal"
                       : t->state == TC_THREAD_POLL    ? "poll"
                                                       : NULL;
    if (what)
      len += (size_t)snprintf(out + len, max - len, "%s%u on %s",
                              len ? ", " : "", (unsigned)t->tid, what);
  }
}

const tc_sys_entry tc_sys_thread_table[] = {
    {"clone", sys_clone},
    {"clone3", sys_clone3},
    {"futex", sys_futex},
    {"futex_time64", sys_futex_time64},
    {"sched_yield", sys_sched_yield},
    {NULL, NULL},
};
