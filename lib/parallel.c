/* SPDX-License-Identifier: GPL-2.0-or-later */
/* record -j N (lib/parallel.h): a run phase at the engine's speed that
 * forks a checkpoint every N instructions, children that record their
 * segment from the run's log of syscalls, and the join of their tct
 * parts. docs/speed.md ("Recording on several cores") tells the design
 * and what is covered. */
#include "lib/parallel.h"

#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "emu/linux/linux_sys.h"
#include "writers/tct/tct_part.h"

#define PAR_MAX_JOBS 64

/* What a child says back (shared memory, one slot per running child). */
typedef struct par_slot {
  int status;     /* 0 written, 1 failed, 2 diverged from the log */
  bool last;      /* it ran to the guest's end (its part has the EXIT) */
  bool empty;     /* the guest ended before its first instruction */
  int fds_closed; /* it holds none of the guest's host fds any more */
  char msg[480];
  tc_run_result res;
} par_slot;

typedef struct par_shared {
  uint64_t published; /* bytes of the log written (the run phase's) */
  uint64_t run_at;    /* every syscall before this instruction is in it */
  int run_done;       /* no record comes after `published` */
  par_slot slot[PAR_MAX_JOBS];
} par_shared;

typedef struct par_seg {
  pid_t pid;
  int slot;
  uint64_t first, log_off;
  bool done, empty;
  char path[4200];
} par_seg;

typedef struct par {
  const tc_par_args *a;
  tc_emu *emu;
  tc_recorder *rec;
  const tc_os_ops *inner; /* the emulated Linux */
  tc_os_ops ops;          /* run phase: log; child: replay */
  par_shared *sh;
  int log_fd;
  uint64_t log_len; /* the run phase: bytes written */
  uint64_t nrecords;
  /* the record being built (run phase) or read (child) */
  uint8_t *buf;
  size_t len, cap;
  bool oom;
  tc_emu_observer saved; /* the recorder's, around a logged call */
  uint8_t *before, *after;
  char refused[400];
  /* run phase: segments and the join */
  par_seg *segs;
  size_t nsegs, cap_segs, next_join;
  int nlive;
  bool slot_used[PAR_MAX_JOBS];
  tc_writer *join;
  char failed[600];
  tc_run_result res;
  bool have_res;
  bool killing; /* the recording failed: the children are killed */
  uint64_t syscalls, mem_accesses; /* of every segment */
  /* child */
  bool child;
  uint64_t log_off, seg_to;
  int slot;
  tc_writer *part;
  tc_error part_err;
  bool part_failed;
  bool held;
  /* begun a few instructions before its first (tc_recorder_set_light):
   * nothing is written before the KEYFRAME of instruction `first` */
  bool before_first, first_key;
  uint64_t first, base_syscalls, base_mem;
  tc_event first_ev; /* the KEYFRAME of `first`, until an INSN follows */
  uint8_t *first_state;
  tc_event held_ev;
  uint8_t *held_state;
  char sysname[64];
  char mapname[128];
  /* materialize: the run replays the log too (a divergence there jumps
   * back out of the syscall) */
  bool reading;
  jmp_buf div_jmp;
  bool fault_rec; /* replay_fault_handled read the delivery's record */
  /* threads: the table's size when a record began (a clone adds one);
   * the replay: whether the running thread shares the CPU (as the run's
   * scheduler said last), and registers written only where they differ
   * (after a switch, which loads the thread's own) */
  size_t nthreads;
  bool shares, cmp_regs;
} par;

/* The os ops have no context: one parallel recording at a time per
 * process (the run phase, or one child). */
static par *g_par;

/* ------------------------------------------------------------- the log */

static void put(par *p, const void *d, size_t n) {
  if (p->len + n > p->cap) {
    size_t cap = p->cap ? p->cap : 4096;
    while (cap < p->len + n)
      cap *= 2;
    uint8_t *nb = realloc(p->buf, cap);
    if (!nb) {
      p->oom = true;
      return;
    }
    p->buf = nb;
    p->cap = cap;
  }
  memcpy(p->buf + p->len, d, n);
  p->len += n;
}
#define PUT(p, v)                                                              \
  do {                                                                         \
    __typeof__(v) put_v_ = (v);                                                \
    put(p, &put_v_, sizeof put_v_);                                            \
  } while (0)

static void put_str(par *p, const char *s) {
  size_t n = s ? strlen(s) : 0;
  if (n > 255)
    n = 255;
  PUT(p, (uint8_t)n);
  put(p, s ? s : "", n);
}

static void refuse(par *p, const char *why) {
  if (!p->refused[0])
    snprintf(p->refused, sizeof p->refused, "%s", why);
}

static void lg_map(void *ctx, const tc_region *g, const uint8_t *data) {
  par *p = ctx;
  PUT(p, (uint8_t)'M');
  PUT(p, g->start);
  PUT(p, g->end);
  PUT(p, g->prot);
  PUT(p, g->file_offset);
  put_str(p, g->name);
  if (p->saved.on_map)
    p->saved.on_map(p->saved.ctx, g, data);
}

static void lg_unmap(void *ctx, uint64_t addr, uint64_t size) {
  par *p = ctx;
  PUT(p, (uint8_t)'U');
  PUT(p, addr);
  PUT(p, size);
  if (p->saved.on_unmap)
    p->saved.on_unmap(p->saved.ctx, addr, size);
}

static void lg_protect(void *ctx, uint64_t addr, uint64_t size, uint32_t prot) {
  par *p = ctx;
  PUT(p, (uint8_t)'P');
  PUT(p, addr);
  PUT(p, size);
  PUT(p, prot);
  if (p->saved.on_protect)
    p->saved.on_protect(p->saved.ctx, addr, size, prot);
}

static void lg_write(void *ctx, uint64_t addr, const uint8_t *old,
                     const uint8_t *nw, size_t size) {
  par *p = ctx;
  PUT(p, (uint8_t)'W');
  PUT(p, addr);
  PUT(p, (uint64_t)size);
  put(p, nw, size);
  if (p->saved.on_kernel_write)
    p->saved.on_kernel_write(p->saved.ctx, addr, old, nw, size);
}

static void lg_syscall(void *ctx, const tc_syscall_record *rec) {
  par *p = ctx;
  PUT(p, (uint8_t)'S');
  PUT(p, rec->nr);
  put_str(p, rec->name);
  put(p, rec->args, sizeof rec->args);
  PUT(p, rec->ret);
  PUT(p, (uint8_t)rec->unknown);
  PUT(p, (uint8_t)rec->compat);
  if (p->saved.on_syscall)
    p->saved.on_syscall(p->saved.ctx, rec);
}

static void lg_signal_frame(void *ctx) {
  par *p = ctx;
  PUT(p, (uint8_t)'F');
  if (p->saved.on_signal_frame)
    p->saved.on_signal_frame(p->saved.ctx);
}

static void lg_signal(void *ctx, const tc_signal_event *rec) {
  par *p = ctx;
  PUT(p, (uint8_t)'G');
  PUT(p, rec->tid);
  PUT(p, (int32_t)rec->signal);
  PUT(p, (int32_t)rec->code);
  PUT(p, rec->addr);
  PUT(p, rec->pid);
  PUT(p, rec->uid);
  PUT(p, rec->handler);
  PUT(p, rec->frame);
  if (p->saved.on_signal)
    p->saved.on_signal(p->saved.ctx, rec);
}

static int write_all(int fd, const uint8_t *d, size_t n) {
  while (n) {
    ssize_t k = write(fd, d, n);
    if (k < 0 && errno == EINTR)
      continue;
    if (k <= 0)
      return -1;
    d += k;
    n -= (size_t)k;
  }
  return 0;
}

/* A fault's delivery has this syscall number in the log (its record
 * is keyed by the faulting instruction, as a syscall's). */
#define FAULT_NR UINT64_MAX
/* A call of the thread scheduler (a quantum's end, a block, a yield, a
 * clone), keyed by the instruction it comes before. */
#define SWITCH_NR (UINT64_MAX - 1)

/* A record of the run phase begins: its instruction, PC and syscall
 * number; the emulated kernel's calls to the observer go to the log
 * (and on to the recorder's) until run_end. */
static void run_begin(par *p, tc_emu *emu, uint64_t index, uint64_t pc,
                      uint64_t nr) {
  p->len = 0;
  p->nthreads = emu->nthreads;
  PUT(p, (uint64_t)0); /* the length, set in run_end */
  PUT(p, index);
  PUT(p, pc);
  PUT(p, nr);
  tc_emu_read_state(emu, p->before);
  p->saved = emu->obs;
  emu->obs =
      (tc_emu_observer){p,        lg_map,     lg_unmap,        lg_protect,
                        lg_write, lg_syscall, lg_signal_frame, lg_signal};
}

/* A thread the call made (clone): its start, for the replay's table. */
static void log_new_thread(par *p, tc_emu *emu) {
  if (emu->nthreads <= p->nthreads)
    return;
  const tc_thread *t = &emu->threads[emu->nthreads - 1];
  PUT(p, (uint8_t)'C');
  PUT(p, t->tid);
  PUT(p, t->start_pc);
  PUT(p, t->start_sp);
  PUT(p, t->tls);
  PUT(p, t->gdt_addr);
  PUT(p, t->clear_child_tid);
  PUT(p, t->sigmask);
  PUT(p, (uint8_t)t->set_tls);
}

/* The registers the kernel changed (the PC too: a handler entered, a
 * sigreturn; every register after a switch to another thread: all), the
 * end, and the record to the log. */
static void run_end(par *p, tc_emu *emu, bool delivered, bool all) {
  const tc_arch *a = emu->arch;
  emu->obs = p->saved;
  log_new_thread(p, emu);
  tc_emu_read_state(emu, p->after);
  for (int i = 0; i < a->nregs; i++) {
    const tc_reg_info *r = &a->regs[i];
    if (tc_emu_reg_absent(a, i) ||
        (!all &&
         memcmp(p->before + r->offset, p->after + r->offset, r->size) == 0))
      continue;
    PUT(p, (uint8_t)'R');
    PUT(p, (uint16_t)i);
    put(p, p->after + r->offset, r->size);
  }
  PUT(p, (uint8_t)'E');
  PUT(p, (uint8_t)emu->exited);
  PUT(p, (int32_t)emu->exit_code);
  PUT(p, (int32_t)emu->exit_signal);
  PUT(p, (int32_t)emu->resched);
  PUT(p, (uint8_t)delivered);
  /* a call that blocked goes back to its trap once the engine stops */
  PUT(p, (uint8_t)emu->restart_pending);
  PUT(p, emu->restart_pc);
  if (tc_procs_others_live(emu) > 0)
    refuse(p, "the guest made a process (fork, vfork, clone)");
  uint64_t len = p->len;
  memcpy(p->buf, &len, sizeof len);
  p->nrecords++;
  if (p->a->debug.test_corrupt_log &&
      p->nrecords == p->a->debug.test_corrupt_log && !p->oom) {
    /* test switch: this record claims the next instruction */
    uint64_t wrong;
    memcpy(&wrong, p->buf + 8, sizeof wrong);
    wrong++;
    memcpy(p->buf + 8, &wrong, sizeof wrong);
  }
  if (p->oom || write_all(p->log_fd, p->buf, p->len) < 0) {
    refuse(p, "the run's log could not be written (out of memory or disk)");
  } else {
    p->log_len += p->len;
    __atomic_store_n(&p->sh->published, p->log_len, __ATOMIC_RELEASE);
  }
  if (p->refused[0])
    tc_recorder_stop(p->rec, 125);
}

/* The run phase's syscall: the kernel runs it (its host I/O happens once,
 * here), and what it did to the guest goes to the log: maps, writes, the
 * SYSCALL, a signal's frame and delivery, the registers. */
static void run_syscall(tc_emu *emu) {
  par *p = g_par;
  run_begin(p, emu, tc_recorder_executed(p->rec) - 1, emu->cur_pc,
            tc_emu_reg(emu, emu->arch->sys.nr_reg));
  size_t head = p->len;
  p->inner->syscall(emu);
  if (emu->execed || emu->exec_stopped) {
    /* execve: X first, so that the replay drops the old image's
     * translated code before the unmaps that follow (as replace_image
     * does); a call that ended the recording (--no-follow) says why */
    size_t body = p->len - head;
    PUT(p, (uint8_t)'X');
    PUT(p, (uint8_t)(emu->execed ? 1 : 2));
    put_str(p, emu->exec_stopped ? emu->exec_notice : "");
    if (!p->oom && body) {
      size_t xlen = p->len - head - body;
      uint8_t x[300];
      memcpy(x, p->buf + head + body, xlen);
      memmove(p->buf + head + xlen, p->buf + head, body);
      memcpy(p->buf + head, x, xlen);
    }
  }
  run_end(p, emu, false, false);
}

/* The run phase's thread switch: the scheduler runs, and its choice goes
 * to the log first (the thread, what it returned, whether the thread
 * shares the CPU), then what it did (a signal's delivery on the switch)
 * and the registers, all of them when another thread runs. */
static int run_schedule(void *ctx, tc_emu *emu, tc_error *err) {
  par *p = ctx;
  uint32_t from = emu->tid;
  run_begin(p, emu, tc_recorder_executed(p->rec), emu->cur_pc, SWITCH_NR);
  size_t head = p->len;
  int s = tc_emu_schedule(emu, err);
  size_t body = p->len - head; /* the observer's calls */
  PUT(p, (uint8_t)'T');
  PUT(p, (int32_t)s);
  PUT(p, emu->tid);
  PUT(p,
      (uint8_t)(tc_emu_live_threads(emu) > 1 || tc_procs_others_live(emu) > 0));
  put_str(p, s < 0 && err ? err->msg : "");
  if (!p->oom && body) { /* T first: the replay switches, then the rest */
    size_t tlen = p->len - head - body;
    uint8_t t[300];
    memcpy(t, p->buf + head + body, tlen);
    memmove(p->buf + head + tlen, p->buf + head, body);
    memcpy(p->buf + head, t, tlen);
  }
  run_end(p, emu, false, emu->tid != from);
  return s;
}

static bool run_fault_handled(void *ctx, tc_emu *emu) {
  (void)ctx;
  return tc_linux_fault_handled(emu);
}

/* A fault the guest has a handler for: delivered by the kernel, logged
 * as a record of its own. */
static bool run_fault_deliver(void *ctx, tc_emu *emu) {
  par *p = ctx;
  run_begin(p, emu, tc_recorder_executed(p->rec) - 1, emu->fault.pc, FAULT_NR);
  bool ok = tc_linux_deliver_fault(emu);
  run_end(p, emu, ok, false);
  return ok;
}

static uint64_t run_others_mapped(const tc_emu *emu) {
  return g_par->inner->others_mapped(emu);
}

static void run_release(tc_emu *emu) { g_par->inner->release(emu); }

/* ------------------------------------------------------------- a child */

static void child_exit(par *p, int status, const char *msg) {
  par_slot *s = &p->sh->slot[p->slot];
  if (msg && !s->msg[0])
    snprintf(s->msg, sizeof s->msg, "%s", msg);
  s->status = status;
  _exit(status);
}

/* The replay made a syscall the log does not have where it is: the
 * engine or tracecorn is not deterministic here; nothing is written. */
static void set_failed(par *p, const char *msg);

static void diverged(par *p, const char *what) {
  char m[480];
  snprintf(m, sizeof m,
           "the replay of instructions from %llu diverged from the run's "
           "log at instruction %llu: %s",
           (unsigned long long)(p->child ? p->seg_to - p->a->every : 0),
           (unsigned long long)(tc_recorder_executed(p->rec) - 1), what);
  if (!p->child) { /* materialize's run */
    set_failed(p, m);
    tc_recorder_stop(p->rec, 125);
    longjmp(p->div_jmp, 1);
  }
  if (p->part)
    tc_tct_close_part(p->part, NULL);
  child_exit(p, 2, m);
}

/* Reads the next record of the log into p->buf, waiting for the run
 * phase to write it; false if the run ended without it (it has passed
 * instruction `here`, the key the record would have). */
static bool next_record(par *p, uint64_t here) {
  for (;;) {
    uint64_t pub = __atomic_load_n(&p->sh->published, __ATOMIC_ACQUIRE);
    uint64_t len = 0;
    if (pub >= p->log_off + 8 &&
        pread(p->log_fd, &len, 8, (off_t)p->log_off) == 8 &&
        pub >= p->log_off + len) {
      p->len = 0;
      if (len < 8 || len > SIZE_MAX / 2)
        return false;
      size_t n = (size_t)len;
      if (n > p->cap) {
        uint8_t *nb = realloc(p->buf, n);
        if (!nb)
          child_exit(p, 1, "out of memory reading the run's log");
        p->buf = nb;
        p->cap = n;
      }
      size_t got = 0;
      while (got < n) {
        ssize_t k =
            pread(p->log_fd, p->buf + got, n - got, (off_t)(p->log_off + got));
        if (k <= 0)
          child_exit(p, 1, "cannot read the run's log");
        got += (size_t)k;
      }
      p->len = n;
      p->log_off += len;
      return true;
    }
    /* the run has passed this instruction (it waits for this segment
     * at a checkpoint, or ended) and logged no syscall there */
    if ((__atomic_load_n(&p->sh->run_done, __ATOMIC_ACQUIRE) ||
         __atomic_load_n(&p->sh->run_at, __ATOMIC_ACQUIRE) > here) &&
        pub == __atomic_load_n(&p->sh->published, __ATOMIC_ACQUIRE))
      return false;
    struct timespec ts = {0, 200000};
    nanosleep(&ts, NULL);
  }
}

typedef struct cur {
  par *p;
  size_t at;
} cur;

static void take(cur *c, void *out, size_t n) {
  if (c->at + n > c->p->len)
    diverged(c->p, "a corrupt record in the run's log");
  memcpy(out, c->p->buf + c->at, n);
  c->at += n;
}
#define TAKE(c, v) take(c, &(v), sizeof(v))

static void take_str(cur *c, char *out, size_t max) {
  uint8_t n;
  TAKE(c, n);
  char tmp[256];
  take(c, tmp, n);
  size_t k = n < max - 1 ? n : max - 1;
  memcpy(out, tmp, k);
  out[k] = 0;
}

/* Applies the log's record in p->buf from c (past its header) through
 * the engine calls the kernel made, so the recorder sees what it saw in a
 * recording from the start; the PC last (arm: with the Thumb state the
 * CPSR now has). Whether the record says a fault was delivered. */
static bool apply_record(par *p, tc_emu *emu, cur *cc) {
  const tc_arch *a = emu->arch;
  cur c = *cc;
  bool have_pc = false;
  uint64_t new_pc = 0;
  uint8_t exec_kind = 0;
  for (;;) {
    uint8_t op;
    TAKE(&c, op);
    switch (op) {
    case 'X': /* execve: the old image's translated code goes first */
      TAKE(&c, exec_kind);
      take_str(&c, emu->exec_notice, sizeof emu->exec_notice);
      if (exec_kind == 1) { /* as the kernel's exec: one thread left */
        tc_linux_threads_free(emu);
        emu->tid = emu->pid;
        emu->cur_thread = 0;
        tc_emu_drop_code(emu);
      }
      break;
    case 'M': {
      uint64_t start, end, off;
      uint32_t prot;
      TAKE(&c, start);
      TAKE(&c, end);
      TAKE(&c, prot);
      TAKE(&c, off);
      take_str(&c, p->mapname, sizeof p->mapname);
      if (tc_emu_map(emu, start, end - start, prot, p->mapname, off) < 0)
        diverged(p, "a mapping of the log could not be made again");
      break;
    }
    case 'U': {
      uint64_t addr, size;
      TAKE(&c, addr);
      TAKE(&c, size);
      if (tc_emu_unmap(emu, addr, size) < 0)
        diverged(p, "an unmap of the log could not be made again");
      break;
    }
    case 'P': {
      uint64_t addr, size;
      uint32_t prot;
      TAKE(&c, addr);
      TAKE(&c, size);
      TAKE(&c, prot);
      if (tc_emu_protect(emu, addr, size, prot) < 0)
        diverged(p, "an mprotect of the log could not be made again");
      break;
    }
    case 'W': {
      uint64_t addr, n;
      TAKE(&c, addr);
      TAKE(&c, n);
      if (c.at + n > p->len)
        diverged(p, "a corrupt record in the run's log");
      if (tc_emu_write(emu, addr, p->buf + c.at, (size_t)n) < 0)
        diverged(p, "a kernel write of the log could not be made again");
      c.at += n;
      break;
    }
    case 'S': {
      tc_syscall_record rec;
      memset(&rec, 0, sizeof rec);
      uint8_t unknown, compat;
      TAKE(&c, rec.nr);
      take_str(&c, p->sysname, sizeof p->sysname);
      take(&c, rec.args, sizeof rec.args);
      TAKE(&c, rec.ret);
      TAKE(&c, unknown);
      TAKE(&c, compat);
      rec.name = p->sysname;
      rec.unknown = unknown;
      rec.compat = compat;
      if (emu->obs.on_syscall)
        emu->obs.on_syscall(emu->obs.ctx, &rec);
      break;
    }
    case 'R': {
      uint16_t i;
      TAKE(&c, i);
      if (i >= a->nregs)
        diverged(p, "a corrupt record in the run's log");
      uint8_t v[64];
      take(&c, v, a->regs[i].size);
      if (i == a->pc_reg) {
        have_pc = true;
        new_pc = 0;
        memcpy(&new_pc, v, a->regs[i].size < 8 ? a->regs[i].size : 8);
      } else if (!p->cmp_regs ||
                 memcmp(p->before + a->regs[i].offset, v, a->regs[i].size)) {
        tc_emu_write_reg_bytes(emu, i, v, a->regs[i].size);
      }
      break;
    }
    case 'C': { /* a thread the call made */
      tc_thread t;
      memset(&t, 0, sizeof t);
      uint8_t set_tls;
      TAKE(&c, t.tid);
      TAKE(&c, t.start_pc);
      TAKE(&c, t.start_sp);
      TAKE(&c, t.tls);
      TAKE(&c, t.gdt_addr);
      TAKE(&c, t.clear_child_tid);
      TAKE(&c, t.sigmask);
      TAKE(&c, set_tls);
      t.set_tls = set_tls;
      if (tc_thread_replay_add(emu, &t) < 0)
        diverged(p, "a thread of the log could not be made again");
      break;
    }
    case 'F':
      if (emu->obs.on_signal_frame)
        emu->obs.on_signal_frame(emu->obs.ctx);
      break;
    case 'G': {
      tc_signal_event ev;
      memset(&ev, 0, sizeof ev);
      int32_t sig, code;
      TAKE(&c, ev.tid);
      TAKE(&c, sig);
      TAKE(&c, code);
      TAKE(&c, ev.addr);
      TAKE(&c, ev.pid);
      TAKE(&c, ev.uid);
      TAKE(&c, ev.handler);
      TAKE(&c, ev.frame);
      ev.signal = sig;
      ev.code = code;
      if (emu->obs.on_signal)
        emu->obs.on_signal(emu->obs.ctx, &ev);
      break;
    }
    case 'E': {
      uint8_t exited;
      int32_t code, sig, resched;
      TAKE(&c, exited);
      TAKE(&c, code);
      TAKE(&c, sig);
      TAKE(&c, resched);
      if (exited) {
        emu->exited = true;
        emu->exit_code = code;
        emu->exit_signal = sig;
        uc_emu_stop(emu->uc);
      }
      if (resched) {
        emu->resched = resched;
        uc_emu_stop(emu->uc);
      }
      uint8_t delivered, restart;
      uint64_t restart_pc;
      TAKE(&c, delivered);
      TAKE(&c, restart);
      TAKE(&c, restart_pc);
      emu->restart_pending = restart != 0;
      emu->restart_pc = restart_pc;
      if (exec_kind == 1) { /* the new image runs from the stop on */
        emu->execed = true;
        p->shares = false; /* one thread now */
        uc_emu_stop(emu->uc);
      } else if (exec_kind == 2) {
        emu->exec_stopped = true;
      }
      if (have_pc && p->cmp_regs) {
        uint64_t pc_now = 0;
        memcpy(&pc_now, p->before + a->regs[a->pc_reg].offset,
               a->regs[a->pc_reg].size < 8 ? a->regs[a->pc_reg].size : 8);
        have_pc = pc_now != new_pc;
      }
      if (have_pc)
        tc_emu_set_reg(emu, a->pc_reg, new_pc | (tc_emu_thumb(emu) ? 1 : 0));
      return delivered != 0;
    }
    default:
      diverged(p, "a corrupt record in the run's log");
    }
  }
}

/* What a record of the log is, for a divergence's message. */
static const char *record_name(char *buf, size_t n, uint64_t nr) {
  if (nr == FAULT_NR)
    return "a fault's delivery";
  if (nr == SWITCH_NR)
    return "a thread switch (before the instruction)";
  snprintf(buf, n, "syscall %llu", (unsigned long long)nr);
  return buf;
}

/* A child's syscall: the kernel is not called; the log's record of the
 * run's call at this instruction is applied (apply_record). */
static void replay_syscall(tc_emu *emu) {
  par *p = g_par;
  const tc_arch *a = emu->arch;
  char what[200];
  if (!p->child && setjmp(p->div_jmp))
    return;
  if (!next_record(p, tc_recorder_executed(p->rec) - 1)) {
    diverged(p, "the run made no more syscalls");
    return;
  }
  cur c = {p, 8};
  uint64_t index, pc, nr;
  TAKE(&c, index);
  TAKE(&c, pc);
  TAKE(&c, nr);
  uint64_t here = tc_recorder_executed(p->rec) - 1;
  uint64_t nr_here = tc_emu_reg(emu, a->sys.nr_reg);
  if (index != here || pc != emu->cur_pc || nr != nr_here) {
    char rn[64];
    snprintf(what, sizeof what,
             "the log has %s at instruction %llu (pc 0x%llx), the "
             "replay made syscall %llu at pc 0x%llx",
             record_name(rn, sizeof rn, nr), (unsigned long long)index,
             (unsigned long long)pc, (unsigned long long)nr_here,
             (unsigned long long)emu->cur_pc);
    diverged(p, what);
  }
  apply_record(p, emu, &c);
}

/* A call of the thread scheduler in the replay: the run's, from the log
 * (the engine loads the thread's own registers; the log's are written
 * where they differ: a fresh thread's start, a signal's delivery). */
static int replay_schedule(void *ctx, tc_emu *emu, tc_error *err) {
  par *p = ctx;
  char what[200];
  if (!p->child && setjmp(p->div_jmp)) {
    p->cmp_regs = false;
    tc_error_set(err, "%s", p->failed);
    return -1;
  }
  uint64_t here = tc_recorder_executed(p->rec);
  if (!next_record(p, here))
    diverged(p, "the run switched no thread there");
  cur c = {p, 8};
  uint64_t index, pc, nr;
  TAKE(&c, index);
  TAKE(&c, pc);
  TAKE(&c, nr);
  if (index != here || pc != emu->cur_pc || nr != SWITCH_NR) {
    char rn[64];
    snprintf(what, sizeof what,
             "the log has %s at instruction %llu (pc 0x%llx), the replay "
             "switched threads at pc 0x%llx",
             record_name(rn, sizeof rn, nr), (unsigned long long)index,
             (unsigned long long)pc, (unsigned long long)emu->cur_pc);
    diverged(p, what);
  }
  uint8_t op, shares;
  int32_t s;
  uint32_t tid;
  TAKE(&c, op);
  if (op != 'T')
    diverged(p, "a corrupt record in the run's log");
  TAKE(&c, s);
  TAKE(&c, tid);
  TAKE(&c, shares);
  char msg[256];
  take_str(&c, msg, sizeof msg);
  emu->resched = TC_RESCHED_NONE;
  p->shares = shares != 0;
  if (tid != emu->tid) {
    if (tc_thread_replay_switch(emu, tid) < 0)
      diverged(p, "a thread of the log is not there");
    tc_emu_read_state(emu, p->before);
    p->cmp_regs = true;
  }
  apply_record(p, emu, &c);
  p->cmp_regs = false;
  if (s < 0)
    tc_error_set(err, "%s", msg);
  return s;
}

static bool replay_shares(void *ctx, tc_emu *emu) {
  (void)emu;
  return ((par *)ctx)->shares;
}

/* A fault the replay met: the run delivered it to a handler if the log's
 * next record is its delivery; none (the run ended there): the fault
 * ends the program, as it did in the run. */
static bool replay_fault_handled(void *ctx, tc_emu *emu) {
  par *p = ctx;
  char what[200];
  p->fault_rec = false;
  if (!p->child && setjmp(p->div_jmp))
    return false;
  if (!next_record(p, tc_recorder_executed(p->rec) - 1))
    return false;
  cur c = {p, 8};
  uint64_t index, pc, nr;
  TAKE(&c, index);
  TAKE(&c, pc);
  TAKE(&c, nr);
  uint64_t here = tc_recorder_executed(p->rec) - 1;
  if (index != here || pc != emu->fault.pc || nr != FAULT_NR) {
    char rn[64];
    snprintf(what, sizeof what,
             "the log has %s at instruction %llu (pc 0x%llx), the replay "
             "faulted at pc 0x%llx",
             record_name(rn, sizeof rn, nr), (unsigned long long)index,
             (unsigned long long)pc, (unsigned long long)emu->fault.pc);
    diverged(p, what);
  }
  p->fault_rec = true;
  return true;
}

static bool replay_fault_deliver(void *ctx, tc_emu *emu) {
  par *p = ctx;
  if (!p->fault_rec)
    return false;
  p->fault_rec = false;
  if (!p->child && setjmp(p->div_jmp))
    return false;
  cur c = {p, 32};
  bool ok = apply_record(p, emu, &c);
  emu->fault_resume = 0;
  emu->fault_debug = false;
  if (ok) { /* as tc_linux_deliver_fault leaves it */
    emu->faulted = false;
    emu->exited = false;
    emu->exit_signal = 0;
    emu->exit_code = 0;
  }
  return ok;
}

/* The replay's kernel: the log's faults, switches and sharing. */
#define replay_ops(p)                                                          \
  (tc_fault_ops) {                                                             \
    .handled = replay_fault_handled, .deliver = replay_fault_deliver,          \
    .schedule = replay_schedule, .shares = replay_shares, .ctx = (p)           \
  }

static void child_write(par *p, const tc_event *ev) {
  if (!p->part_failed && tc_tct_write_part(p->part, ev, &p->part_err) < 0)
    p->part_failed = true;
}

/* A segment's events go to its part, but for the KEYFRAME before the
 * next segment's first instruction, which that segment writes; it is
 * held until the run shows whether one follows (the guest may end right
 * after it: then the EXIT follows it here). Where several KEYFRAMEs of
 * that instruction come (a fault to a handler on the edge: KEYFRAME,
 * FAULT, SIGNAL, the handler's KEYFRAME), the next segment starts at the
 * last, where the run's checkpoint is, and this one writes what is
 * before it. */
static void child_emit(void *ctx, const tc_event *ev) {
  par *p = ctx;
  if (p->before_first) {
    /* begun early (a delay slot, an IT block): it writes from the last
     * KEYFRAME of `first` before that instruction, as a segment whose
     * checkpoint came after the delivery does; what comes before it is
     * the previous segment's (an EXIT: the guest ended before `first`,
     * the previous segment wrote the end) */
    if (ev->kind == TC_EV_KEYFRAME && ev->u.key.insn_index == p->first &&
        !(p->first_key && tc_recorder_turn_ending(p->rec))) {
      p->first_key = true; /* held: the run may end right after it */
      p->first_ev = *ev;
      memcpy(p->first_state, ev->u.key.state, p->emu->arch->state_size);
      p->first_ev.u.key.state = p->first_state;
      return;
    }
    /* a thread switch at a quantum's end comes after the run's
     * checkpoint there: its KEYFRAME is this segment's too */
    if (!p->first_key || (ev->kind != TC_EV_INSN && ev->kind != TC_EV_KEYFRAME))
      return;
    p->before_first = false;
    tc_recorder_counts(p->rec, &p->base_syscalls, &p->base_mem);
    child_write(p, &p->first_ev);
  }
  if (ev->kind == TC_EV_KEYFRAME && ev->u.key.insn_index == p->seg_to) {
    /* a second one (a thread switch after a call that blocked): the
     * next segment starts at the last, where the run's checkpoint is */
    if (p->held)
      child_write(p, &p->held_ev);
    p->held = true;
    p->held_ev = *ev;
    memcpy(p->held_state, ev->u.key.state, p->emu->arch->state_size);
    p->held_ev.u.key.state = p->held_state;
    return;
  }
  if (p->held) {
    child_write(p, &p->held_ev);
    p->held = false;
  }
  child_write(p, ev);
}

static void child_main(par *p, uint64_t first) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = SIG_DFL;
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
  sigaction(SIGALRM, &sa, NULL);
  alarm(0);
  /* The guest's own host fds are the run's: a checkpoint holding a
   * pipe's write end open would keep its reader (a thread of the run)
   * waiting for an end of file forever. The segment never calls the
   * kernel. */
  for (int i = 0; i < TC_MAX_FDS; i++)
    if (p->emu->fds[i].kind != TC_FD_CLOSED && p->emu->fds[i].owned &&
        p->emu->fds[i].host_fd != p->log_fd)
      close(p->emu->fds[i].host_fd);
  __atomic_store_n(&p->sh->slot[p->slot].fds_closed, 1, __ATOMIC_RELEASE);
  p->child = true;
  p->first = first;
  p->before_first = tc_recorder_executed(p->rec) < first;
  p->seg_to = first + p->a->every;
  p->ops = *p->inner;
  p->ops.syscall = replay_syscall;
  p->emu->os = &p->ops;
  if (!p->reading) /* the checkpoint's table is the run's */
    p->shares =
        tc_emu_live_threads(p->emu) > 1 || tc_procs_others_live(p->emu) > 0;
  tc_recorder_set_fault_ops(p->rec, &replay_ops(p));
  free(p->segs); /* the parent's */
  p->segs = NULL;
  p->held_state = malloc(p->emu->arch->state_size);
  p->first_state = malloc(p->emu->arch->state_size);
  tc_error err = {{0}};
  if (!p->held_state || !p->first_state)
    child_exit(p, 1, "out of memory");
  char part[4200];
  snprintf(part, sizeof part, "%s.part%llu", p->a->path,
           (unsigned long long)first);
  p->part = tc_tct_open_part(part, p->a->info, first, &err);
  if (!p->part)
    child_exit(p, 1, err.msg);
  if (tc_recorder_materialize(p->rec, p->seg_to, child_emit, p, &err) < 0)
    child_exit(p, 1, err.msg);
  tc_run_result res;
  tc_run_result_init(&res);
  int rc = tc_recorder_run(p->rec, &res, &err);
  bool last = !tc_recorder_segment_ended(p->rec);
  if (p->held && last)
    child_write(p, &p->held_ev);
  tc_error cerr = {{0}};
  int crc = tc_tct_close_part(p->part, &cerr);
  par_slot *s = &p->sh->slot[p->slot];
  s->empty = p->before_first;
  s->last = last && !s->empty;
  s->res = res;
  s->res.syscalls -= p->base_syscalls;
  s->res.mem_accesses -= p->base_mem;
  if (p->part_failed)
    child_exit(p, 1, p->part_err.msg);
  if (crc < 0)
    child_exit(p, 1, cerr.msg);
  if (rc < 0 && last && res.reason == 0)
    child_exit(p, 1, err.msg[0] ? err.msg : "the segment failed");
  child_exit(p, 0, NULL);
}

/* ---------------------------------------------------------- run phase */

static void set_failed(par *p, const char *msg) {
  if (!p->failed[0])
    snprintf(p->failed, sizeof p->failed, "%s", msg);
}

static void reaped(par *p, par_seg *g, int st);

/* Collects the finished children (waiting for one if block); false if
 * none finished. Only its own children, by pid: a program using the
 * library may have others. */
static bool reap(par *p, bool block) {
  bool any = false;
  for (;;) {
    for (size_t i = p->next_join; i < p->nsegs; i++) {
      par_seg *g = &p->segs[i];
      int st;
      if (g->done || waitpid(g->pid, &st, WNOHANG) != g->pid)
        continue;
      reaped(p, g, st);
      any = true;
    }
    if (any || !block || p->nlive == 0)
      return any;
    struct timespec ts = {0, 500000};
    nanosleep(&ts, NULL);
  }
}

static void reaped(par *p, par_seg *g, int st) {
  g->done = true;
  p->nlive--;
  par_slot *s = &p->sh->slot[g->slot];
  if (p->killing && WIFSIGNALED(st)) {
    /* killed with the recording */
  } else if (!WIFEXITED(st) || WEXITSTATUS(st) != s->status) {
    char m[200];
    snprintf(m, sizeof m,
             "the recorder of instructions from %llu died (status 0x%x)",
             (unsigned long long)g->first, st);
    set_failed(p, m);
  } else if (s->status) {
    set_failed(p, s->msg);
  } else if (s->empty) {
    g->empty = true; /* the guest ended in the instructions before it */
  } else {
    p->syscalls += s->res.syscalls;
    p->mem_accesses += s->res.mem_accesses;
    if (s->last) {
      p->res = s->res;
      p->have_res = true;
    }
  }
  p->slot_used[g->slot] = false;
}

/* Appends the finished parts, in order, to the joined file. */
static void join_ready(par *p) {
  while (p->next_join < p->nsegs && p->segs[p->next_join].done) {
    par_seg *g = &p->segs[p->next_join++];
    tc_error err = {{0}};
    if (!p->failed[0] && !p->killing && !g->empty &&
        tc_tct_join_add(p->join, g->path, &err) < 0)
      set_failed(p, err.msg);
    unlink(g->path);
  }
  /* the log before the oldest segment still recording is read no more */
  uint64_t keep = p->log_len;
  for (size_t i = p->next_join; i < p->nsegs; i++)
    if (!p->segs[i].done && p->segs[i].log_off < keep)
      keep = p->segs[i].log_off;
  keep &= ~(uint64_t)0xfffff;
  if (keep && p->a->log_mode == TC_LOG_NONE) /* never a log of the user's */
    fallocate(p->log_fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0,
              (off_t)keep);
}

static void checkpoint(void *ctx, tc_recorder *r, uint64_t index) {
  par *p = ctx;
  if (!p->reading) /* where the run is (a few before index: a delay slot) */
    __atomic_store_n(&p->sh->run_at, tc_recorder_executed(r), __ATOMIC_RELEASE);
  if (p->a->debug.par_run_only || p->a->log_mode == TC_LOG_WRITE)
    return; /* the run alone: its benchmark, or --log-only */
  while (reap(p, false)) {
  }
  join_ready(p);
  while (p->nlive >= p->a->jobs && reap(p, true))
    join_ready(p);
  if (p->failed[0]) {
    tc_recorder_stop(p->rec, 125);
    return;
  }
  if (p->nsegs == p->cap_segs) {
    size_t cap = p->cap_segs ? p->cap_segs * 2 : 64;
    par_seg *n = realloc(p->segs, cap * sizeof *n);
    if (!n) {
      set_failed(p, "out of memory");
      tc_recorder_stop(p->rec, 125);
      return;
    }
    p->segs = n;
    p->cap_segs = cap;
  }
  int slot = 0;
  while (p->slot_used[slot])
    slot++;
  memset(&p->sh->slot[slot], 0, sizeof p->sh->slot[slot]);
  par_seg *g = &p->segs[p->nsegs];
  memset(g, 0, sizeof *g);
  g->first = index;
  g->slot = slot;
  g->log_off = p->reading ? p->log_off : p->log_len;
  snprintf(g->path, sizeof g->path, "%s.part%llu", p->a->path,
           (unsigned long long)index);
  fflush(stdout);
  fflush(stderr);
  pid_t pid = fork();
  if (pid < 0) {
    char m[160];
    snprintf(m, sizeof m, "cannot fork a checkpoint: %s", strerror(errno));
    set_failed(p, m);
    tc_recorder_stop(p->rec, 125);
    return;
  }
  if (pid == 0) {
    p->slot = slot;
    if (!p->reading) /* materialize: where the run's replay is */
      p->log_off = p->log_len;
    child_main(p, index); /* never returns */
  }
  /* the run goes on once the child has closed the guest's fds: what a
   * pipe's reader sees (an end of file) must not depend on the child */
  for (int st;
       !__atomic_load_n(&p->sh->slot[slot].fds_closed, __ATOMIC_ACQUIRE);) {
    if (waitpid(pid, &st, WNOHANG) == pid) {
      set_failed(p, "a checkpoint's process died at its start");
      tc_recorder_stop(p->rec, 125);
      return;
    }
    struct timespec ts = {0, 20000};
    nanosleep(&ts, NULL);
  }
  g->pid = pid;
  p->slot_used[slot] = true;
  p->nsegs++;
  p->nlive++;
}

const char *tc_parallel_refusal(const tc_trace_info *info,
                                const tc_options *opt, int jobs) {
  if (jobs > PAR_MAX_JOBS)
    return "-j: at most 64 jobs";
  if (!info->arch->traits.parallel) /* mips64el (common/arch.h) */
    return "-j N does not record mips64el or 32-bit sparc programs yet; "
           "record with -j 1";
  if (!opt->keyframe_interval)
    return "-j N needs keyframes (--keyframe 0 turns them off)";
  if (opt->trace_ranges || opt->trace_funcs)
    return "-j N does not take --trace-range/--trace-func yet; record with "
           "-j 1";
  uint64_t chunk = tc_tct_chunk_insns(info);
  if (!chunk)
    return "-j N cuts the work at tct's chunks: -O tct.chunk=0 leaves one";
  if (chunk % opt->keyframe_interval)
    return "-j N needs the tct chunk size (-O tct.chunk) to be a multiple "
           "of the keyframe interval (--keyframe)";
  return NULL;
}

static void null_emit(void *ctx, const tc_event *ev) {
  (void)ctx;
  (void)ev;
}

/* ------------------------------------------------------------- log files */

/* 002: a syscall's end says whether it blocked; thread switches and
 * clones are logged (issue 34's threads) */
static const char log_magic[8] = {'T', 'C', 'L', 'O', 'G', '0', '0', '2'};

/* What the log's run started from: the registers, the map and every
 * mapped byte (FNV-1a). materialize loads the program again and must find
 * the same, or its replay would not be the run's. */
static uint64_t start_hash(tc_emu *emu) {
  uint64_t h = 0xcbf29ce484222325ull;
#define MIX(ptr, n)                                                            \
  do {                                                                         \
    const uint8_t *b_ = (const uint8_t *)(ptr);                                \
    for (size_t k_ = 0; k_ < (n); k_++)                                        \
      h = (h ^ b_[k_]) * 0x100000001b3ull;                                     \
  } while (0)
  uint8_t *st = malloc(emu->arch->state_size);
  if (st) {
    tc_emu_read_state(emu, st);
    MIX(st, emu->arch->state_size);
    free(st);
  }
  static uint8_t buf[1 << 16];
  for (size_t i = 0; i < emu->nregions; i++) {
    const tc_region *g = &emu->regions[i];
    MIX(&g->start, 8);
    MIX(&g->end, 8);
    MIX(&g->prot, 4);
    MIX(g->name, strlen(g->name));
    for (uint64_t at = g->start; at < g->end; at += sizeof buf) {
      size_t n = g->end - at < sizeof buf ? (size_t)(g->end - at) : sizeof buf;
      if (uc_mem_read(emu->uc, at, buf, n) != UC_ERR_OK)
        memset(buf, 0, n);
      MIX(buf, n);
    }
  }
#undef MIX
  return h;
}

/* The log's header: magic, the recipe (its length first), the start's
 * hash. Records follow. */
static int open_log(par *p, tc_error *err) {
  const tc_par_args *a = p->a;
  uint64_t hash = start_hash(a->emu);
  if (a->log_mode == TC_LOG_WRITE) {
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.partial", a->log_path);
    p->log_fd = open(tmp, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    uint64_t n = a->recipe_len;
    if (p->log_fd < 0 || write_all(p->log_fd, (const uint8_t *)log_magic, 8) ||
        write_all(p->log_fd, (const uint8_t *)&n, 8) ||
        write_all(p->log_fd, a->recipe, a->recipe_len) ||
        write_all(p->log_fd, (const uint8_t *)&hash, 8)) {
      tc_error_set(err, "%s: %s", tmp, strerror(errno));
      if (p->log_fd >= 0)
        unlink(tmp);
      return -1;
    }
    return 0;
  }
  p->reading = true;
  p->log_fd = open(a->log_path, O_RDONLY | O_CLOEXEC);
  uint8_t head[16];
  uint64_t n = 0, h = 0;
  struct stat st;
  if (p->log_fd < 0 || fstat(p->log_fd, &st) < 0 ||
      pread(p->log_fd, head, 16, 0) != 16 || memcmp(head, log_magic, 8)) {
    tc_error_set(err, "%s: not a log of record --log-only", a->log_path);
    return -1;
  }
  memcpy(&n, head + 8, 8);
  if (n > (uint64_t)st.st_size - 24 ||
      pread(p->log_fd, &h, 8, (off_t)(16 + n)) != 8) {
    tc_error_set(err, "%s: a log cut short", a->log_path);
    return -1;
  }
  if (h != hash) {
    tc_error_set(err,
                 "%s: the program does not start as it did in the logged run "
                 "(its file, its libraries' loader, its arguments or "
                 "options differ): cannot materialize it",
                 a->log_path);
    return -1;
  }
  p->log_off = 24 + n;
  p->sh->published = (uint64_t)st.st_size;
  p->sh->run_at = UINT64_MAX;
  p->sh->run_done = 1;
  return 0;
}

char *tc_parallel_log_recipe(const char *path, size_t *n, tc_error *err) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  uint8_t head[16];
  uint64_t len = 0;
  struct stat st;
  if (fd < 0 || fstat(fd, &st) < 0 || pread(fd, head, 16, 0) != 16 ||
      memcmp(head, log_magic, 8)) {
    tc_error_set(err, "%s: not a log of record --log-only", path);
    if (fd >= 0)
      close(fd);
    return NULL;
  }
  memcpy(&len, head + 8, 8);
  char *r = len <= (uint64_t)st.st_size - 24 ? malloc(len + 1) : NULL;
  if (!r || pread(fd, r, len, 16) != (ssize_t)len) {
    tc_error_set(err, "%s: a log cut short", path);
    free(r);
    close(fd);
    return NULL;
  }
  close(fd);
  r[len] = 0;
  *n = (size_t)len;
  return r;
}

int tc_parallel_record(const tc_par_args *a, tc_run_result *res,
                       tc_error *err) {
  if (g_par) {
    tc_error_set(err, "-j N: one parallel recording at a time per process");
    return -1;
  }
  par *p = calloc(1, sizeof *p);
  char logpath[] = "/tmp/tracecorn-log-XXXXXX";
  if (!p)
    goto oom;
  p->a = a;
  p->emu = a->emu;
  p->log_fd = -1;
  p->before = malloc(a->emu->arch->state_size);
  p->after = malloc(a->emu->arch->state_size);
  p->sh = mmap(NULL, sizeof *p->sh, PROT_READ | PROT_WRITE,
               MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (p->sh == MAP_FAILED) {
    p->sh = NULL;
    goto oom;
  }
  if (!p->before || !p->after)
    goto oom;
  if (a->log_mode != TC_LOG_NONE) {
    if (open_log(p, err) < 0)
      goto fail;
  } else if ((p->log_fd = mkstemp(logpath)) < 0) {
    tc_error_set(err, "-j N: cannot create the run's log: %s", strerror(errno));
    goto fail;
  } else {
    unlink(logpath);
  }
  if (a->log_mode != TC_LOG_WRITE &&
      !(p->join = tc_tct_join_open(a->path, a->info, err)))
    goto fail;
  if (!(p->rec = tc_recorder_new(a->emu, null_emit, NULL, err)))
    goto fail;
  tc_recorder_set_light(p->rec, a->every, checkpoint, p);
  if (a->debug.test_early_checkpoint)
    tc_recorder_test_early_checkpoints(p->rec);
  tc_recorder_set_fault_ops(
      p->rec, p->reading ? &replay_ops(p)
                         : &(tc_fault_ops){.handled = run_fault_handled,
                                           .deliver = run_fault_deliver,
                                           .schedule = run_schedule,
                                           .ctx = p});
  p->inner = a->emu->os;
  p->ops = *p->inner;
  p->ops.syscall = p->reading ? replay_syscall : run_syscall;
  p->ops.others_mapped = run_others_mapped;
  p->ops.release = run_release;
  a->emu->os = &p->ops;
  g_par = p;
  if (a->running)
    __atomic_store_n(a->running, p->rec, __ATOMIC_RELEASE);
  tc_run_result rr;
  tc_run_result_init(&rr);
  tc_error rerr = {{0}};
  int rc = tc_recorder_run(p->rec, &rr, &rerr);
  if (a->running)
    __atomic_store_n(a->running, NULL, __ATOMIC_RELEASE);
  __atomic_store_n(&p->sh->run_done, 1, __ATOMIC_RELEASE);
  if (tc_recorder_light_refusal(p->rec))
    refuse(p, tc_recorder_light_refusal(p->rec));
  /* an execve not followed (--no-follow) ends the run as an interruption
   * does, but it is the program's end: the segments write it */
  bool interrupted = rr.reason == TC_EXIT_INTERRUPTED && !a->emu->exec_stopped;
  if (p->refused[0] || p->failed[0] || interrupted || rc < 0) {
    p->killing = true;
    for (size_t i = 0; i < p->nsegs; i++)
      if (!p->segs[i].done)
        kill(p->segs[i].pid, SIGKILL);
  }
  while (p->nlive > 0 && reap(p, true)) {
  }
  join_ready(p);
  a->emu->os = p->inner;
  g_par = NULL;
  /* a process the guest made before the run was refused: never run */
  for (tc_emu *c; (c = tc_procs_take_new(a->emu));)
    tc_emu_free(c);
  int out = 0;
  if (p->refused[0]) {
    tc_error_set(err,
                 "record -j N does not cover this program yet (issue 34): "
                 "%s at instruction %llu; record it with -j 1 (no trace "
                 "written)",
                 p->refused, (unsigned long long)tc_recorder_executed(p->rec));
    out = -1;
  } else if (p->failed[0]) {
    tc_error_set(err, "-j N: %s (no trace written)", p->failed);
    out = -1;
  } else if (interrupted) {
    tc_error_set(err, "interrupted: record -j N keeps no partial trace");
    out = -1;
  } else if (rc < 0) {
    tc_error_set(err, "%s", rerr.msg);
    out = -1;
  } else if (a->debug.par_run_only || a->log_mode == TC_LOG_WRITE) {
    p->res = rr; /* the run's own result; no trace */
    p->syscalls = p->nrecords;
  } else if (!p->have_res) {
    tc_error_set(err, "-j N: no segment ended the recording");
    out = -1;
  }
  *res = out == 0 ? p->res : rr;
  if (out == 0) {
    res->syscalls = p->syscalls;
    res->mem_accesses = p->mem_accesses;
  }
  if (out < 0 && res->reason == 0)
    res->reason = TC_EXIT_ERROR, res->status = 125;
  tc_error jerr = {{0}};
  if (p->join &&
      tc_tct_join_close(p->join, out == 0 && !a->debug.par_run_only, &jerr) <
          0 &&
      out == 0) {
    tc_error_set(err, "%s", jerr.msg);
    out = -1;
  }
  if (a->log_mode == TC_LOG_WRITE && p->log_fd >= 0) {
    /* the log is complete: its name (written as NAME.partial) */
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.partial", a->log_path);
    if (out == 0 && fsync(p->log_fd) == 0 && rename(tmp, a->log_path) == 0) {
    } else {
      if (out == 0)
        tc_error_set(err, "%s: %s", a->log_path, strerror(errno));
      out = -1;
      unlink(tmp);
    }
  }
  p->join = NULL;
  tc_recorder_free(p->rec);
  close(p->log_fd);
  munmap(p->sh, sizeof *p->sh);
  free(p->segs);
  free(p->buf);
  free(p->before);
  free(p->after);
  free(p);
  return out;
oom:
  tc_error_set(err, "out of memory");
fail:
  if (p) {
    if (p->join)
      tc_tct_join_close(p->join, false, NULL);
    if (p->log_fd >= 0)
      close(p->log_fd);
    if (p->sh)
      munmap(p->sh, sizeof *p->sh);
    free(p->before);
    free(p->after);
    free(p);
  }
  return -1;
}
