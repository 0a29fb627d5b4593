/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Emulated kernel: guest processes. fork, vfork and clone/clone3 without
 * CLONE_THREAD make a second guest process; wait4/waitpid/waitid reap
 * children; kill reaches other processes; getppid.
 *
 * A child is a new tc_emu with its own Unicorn engine: every mapping is
 * copied with its contents and protection, the registers of the calling
 * thread are copied (the child returns 0 from the call), the fd table is
 * copied with every host fd the guest opened duplicated (so a pipe made
 * before the fork joins the two processes, and a reader sees EOF once
 * every writer's copy is closed), and the signal dispositions, mask,
 * limits, umask, cwd and break are inherited. Two engines cannot share
 * memory, so CLONE_VM without CLONE_THREAD (vfork, glibc's posix_spawn)
 * is a fork too: the child writes into its own copy, and the parent waits
 * (state TC_THREAD_VFORK) until the child execs or exits, as vfork
 * promises.
 *
 * Ids are handed out by one counter for pids and tids alike (the first
 * process is TC_GUEST_PID, then +1 for each new thread or process), so a
 * run's ids depend only on the order the guest asked for them.
 *
 * The table of processes is shared by every emu of the run; the session
 * takes new children from it (tc_procs_take_new), runs each with its own
 * recorder, and reports each end (tc_proc_exited). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/linux/linux_xlat.h"
#include "emu/linux/linux_arch.h"
#include "emu/linux/linux_sys.h"

#define CLONE_VM 0x100u
#define CLONE_PIDFD 0x1000u
/* CLONE_NEWNS, NEWCGROUP, NEWUTS, NEWIPC, NEWUSER, NEWPID, NEWNET */
#define CLONE_NEW_ANY 0x7e020000u
#define CLONE_VFORK 0x4000u
#define CLONE_PARENT_SETTID 0x100000u
#define CLONE_CHILD_CLEARTID 0x200000u
#define CLONE_CHILD_SETTID 0x1000000u

#define WNOHANG 1
#define WUNTRACED 2 /* waitid's WSTOPPED */
#define WEXITED 4
#define WCONTINUED 8
#define WNOWAIT 0x01000000
#define SIGCHLD_HOST 17
#define SIGCONT_HOST 18
#define OUTSIDE_PPID 1u /* the first process's parent: not a guest */

typedef struct tc_proc {
  uint32_t pid, ppid;
  tc_emu *emu;   /* NULL once it ended */
  bool handed;   /* given to the session (tc_procs_take_new) */
  bool in_vfork; /* a vfork child that has not exec'd or exited */
  bool zombie;   /* ended, waits to be reaped */
  int wstatus;   /* Linux wait status of a zombie */
  /* Job control not yet reported to a wait: stopped by this (host) signal
   * (WUNTRACED), continued (WCONTINUED). */
  int stop_report;
  bool cont_report;
} tc_proc;

struct tc_procs {
  tc_proc *v;
  size_t n, cap;
  uint64_t made; /* processes forked in the whole recording */
  uint32_t next_id;
  int refs;
};

/* ------------------------------------------------------------ the table */

static struct tc_procs *procs_of(tc_emu *emu) {
  if (!emu->procs) {
    struct tc_procs *p = calloc(1, sizeof *p);
    if (!p || !(p->v = calloc(8, sizeof *p->v)))
      abort(); /* a few bytes: out of memory is fatal */
    p->cap = 8;
    p->n = 1;
    p->v[0] = (tc_proc){
        .pid = emu->pid, .ppid = emu->ppid, .emu = emu, .handed = true};
    p->next_id = emu->tid + 1;
    p->refs = 1;
    emu->procs = p;
  }
  return emu->procs;
}

static tc_proc *proc_find(struct tc_procs *p, uint32_t pid) {
  for (size_t i = 0; p && i < p->n; i++)
    if (p->v[i].pid == pid)
      return &p->v[i];
  return NULL;
}

static void proc_remove(struct tc_procs *p, tc_proc *e) {
  size_t i = (size_t)(e - p->v);
  memmove(e, e + 1, (p->n - i - 1) * sizeof *e);
  p->n--;
}

uint32_t tc_procs_new_id(tc_emu *emu) { return procs_of(emu)->next_id++; }

void tc_procs_release(tc_emu *emu) {
  struct tc_procs *p = emu->procs;
  if (!p)
    return;
  tc_proc *e = proc_find(p, emu->pid);
  if (e && e->emu == emu)
    e->emu = NULL;
  emu->procs = NULL;
  if (--p->refs == 0) {
    free(p->v);
    free(p);
  }
}

size_t tc_procs_others_live(const tc_emu *emu) {
  const struct tc_procs *p = emu->procs;
  size_t n = 0;
  for (size_t i = 0; p && i < p->n; i++)
    n += p->v[i].emu && p->v[i].emu != emu; /* until its end is handled */
  return n;
}

uint64_t tc_procs_others_mapped(const tc_emu *emu) {
  const struct tc_procs *p = emu->procs;
  uint64_t n = 0;
  for (size_t i = 0; p && i < p->n; i++)
    if (p->v[i].emu && p->v[i].emu != emu)
      n += tc_emu_mapped(p->v[i].emu);
  return n;
}

tc_emu *tc_procs_take_new(tc_emu *emu) {
  struct tc_procs *p = emu->procs;
  for (size_t i = 0; p && i < p->n; i++)
    if (p->v[i].emu && !p->v[i].handed) {
      p->v[i].handed = true;
      return p->v[i].emu;
    }
  return NULL;
}

void tc_proc_vfork_release(tc_emu *emu) {
  tc_proc *e = proc_find(emu->procs, emu->pid);
  if (e)
    e->in_vfork = false;
}

/* A host-numbered signal as the guest's architecture numbers it. */
static int guest_signal(const tc_emu *emu, int sig) {
  int g = tc_xlat_signal_to_guest(emu->arch, sig);
  return g > 0 ? g : sig;
}

/* Linux's wait status for how the process ended. */
static int wait_status(const tc_emu *emu) {
  if (emu->exit_signal) {
    int g = tc_xlat_signal_to_guest(emu->arch, emu->exit_signal);
    return (g > 0 ? g : emu->exit_signal) & 0x7f;
  }
  return (emu->exit_code & 0xff) << 8;
}

/* SIGCHLD to the parent with the child's siginfo: CLD_EXITED and the exit
 * code, or CLD_KILLED and the (guest) signal (no core is dumped, as
 * wait_status says: never CLD_DUMPED). */
static void post_chld(tc_emu *parent, const tc_emu *child) {
  if (child->exit_signal) {
    int g = tc_xlat_signal_to_guest(child->arch, child->exit_signal);
    tc_signal_post_chld(parent, 2, child->pid, g > 0 ? g : child->exit_signal);
  } else {
    tc_signal_post_chld(parent, 1, child->pid, child->exit_code & 0xff);
  }
}

/* Whether the parent will never wait: SIGCHLD ignored or SA_NOCLDWAIT. */
static bool parent_reaps(tc_emu *parent) {
  tc_linux_state *st = tc_linux_state_of(parent);
  return st->sigact[SIGCHLD_HOST].handler == 1 ||
         (st->sigact[SIGCHLD_HOST].flags & 2);
}

void tc_proc_exited(tc_emu *emu) {
  /* The fds close now, not when the engine is freed: a pipe's reader in
   * another process sees EOF once the last writer has gone. */
  for (int i = 0; i < TC_MAX_FDS; i++) {
    tc_fd *f = &emu->fds[i];
    if (f->kind != TC_FD_CLOSED && f->owned)
      close(f->host_fd);
    f->kind = TC_FD_CLOSED;
  }
  struct tc_procs *p = emu->procs;
  tc_proc *e = proc_find(p, emu->pid);
  if (!e)
    return;
  e->in_vfork = false;
  e->emu = NULL;
  /* Its children are orphans: nobody waits for them (init reaps). */
  for (size_t i = 0; i < p->n; i++)
    if (p->v[i].ppid == emu->pid) {
      p->v[i].ppid = OUTSIDE_PPID;
      if (p->v[i].zombie) {
        proc_remove(p, &p->v[i]);
        i--;
      }
    }
  e = proc_find(p, emu->pid);
  tc_proc *parent = proc_find(p, e->ppid);
  if (!parent || !parent->emu || parent->emu->exited ||
      parent_reaps(parent->emu)) {
    if (parent && parent->emu && !parent->emu->exited)
      post_chld(parent->emu, emu);
    proc_remove(p, e);
    return;
  }
  e->zombie = true;
  e->wstatus = wait_status(emu);
  post_chld(parent->emu, emu);
}

/* ----------------------------------------------------------- job control */

/* The parent hears of a stop or a continue: SIGCHLD unless its action has
 * SA_NOCLDSTOP (1). */
static void notify_parent_cldstop(tc_emu *emu, int code, int sig) {
  tc_proc *e = proc_find(emu->procs, emu->pid);
  tc_proc *parent = e ? proc_find(emu->procs, e->ppid) : NULL;
  if (!parent || !parent->emu || parent->emu->exited)
    return;
  int g = tc_xlat_signal_to_guest(emu->arch, sig);
  if (!(tc_linux_state_of(parent->emu)->sigact[SIGCHLD_HOST].flags & 1))
    tc_signal_post_chld(parent->emu, code, emu->pid, g > 0 ? g : sig);
}

void tc_proc_job_stop(tc_emu *emu, int sig) {
  if (emu->job_stop_sig || emu->exited)
    return;
  emu->job_stop_sig = sig;
  tc_proc *e = proc_find(emu->procs, emu->pid);
  if (e) {
    e->stop_report = sig;
    e->cont_report = false;
  }
  notify_parent_cldstop(emu, 5 /* CLD_STOPPED */, sig);
}

void tc_proc_job_continue(tc_emu *emu) {
  if (!emu->job_stop_sig)
    return;
  emu->job_stop_sig = 0;
  tc_proc *e = proc_find(emu->procs, emu->pid);
  if (e) {
    e->stop_report = 0; /* a stop not yet waited for is not reported */
    e->cont_report = true;
  }
  notify_parent_cldstop(emu, 6 /* CLD_CONTINUED */, 18 /* SIGCONT */);
}

/* ------------------------------------------------------------------ fork */

/* Copies the parent's memory, kernel state and fds into child. */
static int copy_process(tc_emu *parent, tc_emu *child) {
  enum { CHUNK = 64u << 10 };
  uint8_t *buf = malloc(CHUNK);
  if (!buf)
    return -ENOMEM;
  int rc = 0;
  for (size_t i = 0; i < parent->nregions && rc == 0; i++) {
    const tc_region *g = &parent->regions[i];
    rc = tc_emu_map(child, g->start, g->end - g->start, g->prot, g->name,
                    g->file_offset);
    for (uint64_t at = g->start; rc == 0 && at < g->end; at += CHUNK) {
      size_t n = (size_t)(g->end - at < CHUNK ? g->end - at : CHUNK);
      if (uc_mem_read(parent->uc, at, buf, n) != UC_ERR_OK) {
        rc = -ENOMEM;
        break;
      }
      /* The new mapping is zero already: an untouched stack or bss
       * costs the child no memory. */
      if (buf[0] == 0 && memcmp(buf, buf + 1, n - 1) == 0)
        continue;
      if (uc_mem_write(child->uc, at, buf, n) != UC_ERR_OK)
        rc = -ENOMEM;
    }
  }
  free(buf);
  if (rc < 0)
    return rc;
  child->mmap_top = parent->mmap_top;
  child->brk_start = parent->brk_start;
  child->brk_cur = parent->brk_cur;
  child->stack_top = parent->stack_top;
  if (parent->exe_fd < 0)
    memcpy(child->exe_host_path, parent->exe_host_path, TC_PATH_MAX);
  else if ((rc = tc_emu_set_exe(child, parent->exe_fd, parent->exe_host_path)) <
           0)
    return rc;
  memcpy(child->exe_guest_path, parent->exe_guest_path, TC_PATH_MAX);
  memcpy(child->cwd, parent->cwd, TC_PATH_MAX);
  child->clock_ns = parent->clock_ns;
  child->host_start = parent->host_start;
  if (parent->nwritten_files &&
      (child->written_files =
           malloc(parent->nwritten_files * sizeof *child->written_files))) {
    memcpy(child->written_files, parent->written_files,
           parent->nwritten_files * sizeof *child->written_files);
    child->nwritten_files = child->capwritten_files = parent->nwritten_files;
  }
  child->gdt_addr = parent->gdt_addr;
  child->flat_segments = parent->flat_segments;
  child->trap_insn_size = parent->trap_insn_size;
  memcpy(child->unknown_reported, parent->unknown_reported,
         sizeof child->unknown_reported);
  /* Its own random stream, still a function of the seed. */
  child->rng_state = parent->rng_state ^ (0x9e3779b97f4a7c15ull * child->pid);
  for (int i = 0; i < TC_MAX_FDS; i++) {
    tc_fd f = parent->fds[i];
    if (f.kind != TC_FD_CLOSED && f.owned) {
      int h = fcntl(f.host_fd, F_DUPFD_CLOEXEC, 3);
      if (h < 0)
        return -errno;
      f.host_fd = h;
    }
    child->fds[i] = f;
  }
  tc_linux_state *pst = tc_linux_state_of(parent);
  tc_linux_state *cst = tc_linux_state_of(child);
  *cst = *pst;
  cst->emu = child;
  cst->uc = child->uc;
  /* Pending signals and timers are not inherited (fork(2)). */
  cst->pending_sig = 0;
  cst->pending_set = 0;
  cst->timer_deadline = cst->timer_interval = 0;
  cst->suspend_active = false;
  return 0;
}

/* The child's registers: the calling thread's, returning 0 after the
 * trap (on a new stack if clone gave one). */
static int copy_registers(tc_emu *parent, tc_emu *child, uint64_t stack) {
  uc_context *ctx = NULL;
  if (uc_context_alloc(parent->uc, &ctx) != UC_ERR_OK)
    return -ENOMEM;
  int rc = 0;
  if (uc_context_save(parent->uc, ctx) != UC_ERR_OK ||
      uc_context_restore(child->uc, ctx) != UC_ERR_OK)
    rc = -ENOMEM;
  uc_context_free(ctx);
  if (rc < 0)
    return rc;
  const tc_arch *a = parent->arch;
  uint64_t pc = tc_emu_reg(parent, a->pc_reg) + parent->trap_insn_size;
  tc_emu_set_reg(child, a->pc_reg, pc | (tc_emu_thumb(parent) ? 1 : 0));
  tc_emu_set_reg(child, a->sys.ret_reg, 0);
  if (a->sys.err_reg >= 0)
    tc_emu_set_reg(child, a->sys.err_reg, 0);
  if (stack)
    tc_emu_set_reg(child, a->sp_reg, stack);
  return 0;
}

/* Processes whose end the session has not handled: each holds a slot of
 * the session's (TC_MAX_PROCS), killed ones until their end is recorded. */
static size_t live_processes(const struct tc_procs *p) {
  size_t n = 0;
  for (size_t i = 0; i < p->n; i++)
    n += p->v[i].emu != NULL;
  return n;
}

int64_t tc_proc_fork(tc_sys_call *c, uint64_t flags, uint64_t stack,
                     uint64_t ptid, uint64_t ctid) {
  tc_emu *emu = c->emu;
  int64_t restarted;
  if (tc_thread_restarted(c, &restarted))
    return restarted; /* vfork's parent, released by its child */
  /* New namespaces need privileges the guest does not have; pidfds are
   * not emulated. */
  if (flags & CLONE_NEW_ANY)
    return -EPERM;
  if (flags & CLONE_PIDFD)
    return -EINVAL;
  struct tc_procs *p = procs_of(emu);
  /* RLIMIT_NPROC (6) lowers the bound; a fork bomb ends at EAGAIN. */
  uint64_t limit =
      c->st->rlim_cur[6] < TC_MAX_PROCS ? c->st->rlim_cur[6] : TC_MAX_PROCS;
  if (live_processes(p) >= limit)
    return -EAGAIN;
  /* The whole recording's budgets: processes made, and memory (the copy
   * would take all processes together past --max-memory). */
  uint64_t max_made =
      emu->opt.max_procs ? emu->opt.max_procs : TC_DEFAULT_MAX_PROCS;
  if (p->made >= max_made)
    return -EAGAIN;
  uint64_t cap =
      emu->opt.max_memory ? emu->opt.max_memory : TC_DEFAULT_MAX_MEMORY;
  uint64_t own = tc_emu_mapped(emu), all = own + tc_procs_others_mapped(emu);
  if (own > cap || all > cap - own)
    return -ENOMEM;
  if (p->n == p->cap) {
    tc_proc *v = realloc(p->v, p->cap * 2 * sizeof *v);
    if (!v)
      return -ENOMEM;
    p->v = v;
    p->cap *= 2;
  }
  tc_error err = {{0}};
  tc_emu *child = tc_linux_emu_new(emu->arch, &emu->opt, &err);
  if (!child)
    return -ENOMEM;
  child->pid = child->tid = p->next_id++;
  child->ppid = emu->pid;
  child->pgid = emu->pgid;
  int rc = copy_process(emu, child);
  if (rc == 0)
    rc = copy_registers(emu, child, stack);
  if (rc == 0 && (flags & CLONE_CHILD_SETTID)) {
    /* In the child's memory: part of its initial image. */
    uint8_t b[4];
    tc_abi_put(emu->arch, b, 4, child->tid);
    if (uc_mem_write(child->uc, ctid, b, 4) != UC_ERR_OK)
      rc = -EFAULT;
  }
  if (rc < 0) {
    tc_emu_free(child);
    return rc;
  }
  child->clear_child_tid = (flags & CLONE_CHILD_CLEARTID) ? ctid : 0;
  child->procs = p;
  p->refs++;
  p->made++;
  bool vfork = (flags & CLONE_VFORK) != 0;
  p->v[p->n++] = (tc_proc){
      .pid = child->pid, .ppid = emu->pid, .emu = child, .in_vfork = vfork};
  if ((flags & CLONE_PARENT_SETTID) &&
      (rc = tc_sys_put_uint(emu, ptid, 4, child->pid)) < 0)
    return rc;
  if (vfork && tc_thread_block(c, TC_THREAD_VFORK, child->pid))
    return 0; /* returns the child's pid once released */
  /* The parent goes on; the session takes the child at its next stop. */
  if (emu->resched < TC_RESCHED_KEEP)
    emu->resched = TC_RESCHED_KEEP;
  uc_emu_stop(emu->uc);
  return child->pid;
}

static int64_t sys_fork(tc_sys_call *c) { return tc_proc_fork(c, 0, 0, 0, 0); }

static int64_t sys_vfork(tc_sys_call *c) {
  return tc_proc_fork(c, CLONE_VM | CLONE_VFORK, 0, 0, 0);
}

/* ------------------------------------------------------------------ wait */

/* Whether child e is one wait's pid argument names. Every guest process
 * is in one process group, so 0 and -pgid mean any child. */
static bool wait_matches(const tc_proc *e, int64_t pid) {
  return pid <= 0 || (uint32_t)pid == e->pid;
}

/* What child e has to report to a wait with these options (0: nothing):
 * WEXITED (it ended), WUNTRACED (it stopped) or WCONTINUED. */
static int report_of(const tc_proc *e, int options) {
  if (e->zombie)
    return options & WEXITED;
  if (e->stop_report)
    return options & WUNTRACED;
  if (e->cont_report)
    return options & WCONTINUED;
  return 0;
}

bool tc_proc_wait_ready(tc_emu *emu, int64_t pid, int options) {
  struct tc_procs *p = emu->procs;
  bool any = false;
  for (size_t i = 0; p && i < p->n; i++) {
    const tc_proc *e = &p->v[i];
    if (e->ppid != emu->pid || !wait_matches(e, pid))
      continue;
    if (report_of(e, options))
      return true;
    any = true;
  }
  return !any; /* no such child: the call fails with ECHILD */
}

bool tc_proc_vfork_ready(tc_emu *emu, int64_t pid) {
  const tc_proc *e = proc_find(emu->procs, (uint32_t)pid);
  return !e || !e->in_vfork;
}

/* The child to report (NULL: none yet) and what (*kind, report_of);
 * -ECHILD in *err when no child matches at all. */
static tc_proc *find_report(tc_emu *emu, int64_t pid, int options, int *err,
                            int *kind) {
  struct tc_procs *p = emu->procs;
  *err = -ECHILD;
  for (size_t i = 0; p && i < p->n; i++) {
    tc_proc *e = &p->v[i];
    if (e->ppid != emu->pid || !wait_matches(e, pid))
      continue;
    *err = 0;
    if ((*kind = report_of(e, options)))
      return e;
  }
  return NULL;
}

/* The child's report is taken: a zombie is reaped, a stop or continue is
 * reported once. */
static uint32_t consume_report(tc_emu *emu, tc_proc *e, int kind) {
  uint32_t pid = e->pid;
  if (kind == WEXITED)
    proc_remove(emu->procs, e);
  else if (kind == WUNTRACED)
    e->stop_report = 0;
  else
    e->cont_report = false;
  return pid;
}

static int put_rusage(tc_sys_call *c, uint64_t addr) {
  /* struct rusage: two timevals and 14 longs, all zero (no time passes
   * on the virtual clock while a guest computes). */
  uint8_t z[18 * 8] = {0};
  return addr ? tc_sys_write(c->emu, addr, z, 18u * c->emu->arch->ptr_size) : 0;
}

/* The blocking part shared by the wait calls: a child to report (*out,
 * what in *kind), 0 (WNOHANG, or the thread now waits: c->restart), or
 * -errno. */
static int64_t wait_common(tc_sys_call *c, int64_t pid, int options,
                           tc_proc **out, int *kind) {
  int err;
  *out = find_report(c->emu, pid, options, &err, kind);
  if (*out)
    return 0;
  if (err < 0)
    return err;
  if (options & WNOHANG)
    return 0;
  if (tc_thread_block(c, TC_THREAD_CHILD, pid)) {
    c->emu->threads[c->emu->cur_thread].wait_options = options;
    return 0;
  }
  return -ECHILD; /* nobody else lives: it would wait forever */
}

static int64_t do_wait4(tc_sys_call *c, uint64_t status_addr,
                        uint64_t rusage_addr) {
  int64_t pid = tc_sys_int(c, 0);
  int options = tc_sys_int(c, 2);
  if (options & ~(WNOHANG | WUNTRACED | WCONTINUED | 0x20000000 | 0x40000000 |
                  0x80000000))
    return -EINVAL;
  tc_proc *z;
  int kind;
  int64_t r = wait_common(c, pid, options | WEXITED, &z, &kind);
  if (r < 0 || !z)
    return r;
  /* stopped: 0x7f | sig << 8; continued: 0xffff */
  uint32_t status = kind == WEXITED ? (uint32_t)z->wstatus
                    : kind == WUNTRACED
                        ? 0x7fu | (uint32_t)guest_signal(c->emu, z->stop_report)
                                      << 8
                        : 0xffffu;
  if (status_addr && (r = tc_sys_put_uint(c->emu, status_addr, 4, status)) < 0)
    return r;
  if ((r = put_rusage(c, rusage_addr)) < 0)
    return r;
  return consume_report(c->emu, z, kind);
}

static int64_t sys_wait4(tc_sys_call *c) {
  return do_wait4(c, c->a[1], c->a[3]);
}
static int64_t sys_waitpid(tc_sys_call *c) { return do_wait4(c, c->a[1], 0); }

/* waitid(idtype, id, siginfo_t *, options, rusage *). */
static int64_t sys_waitid(tc_sys_call *c) {
  tc_emu *emu = c->emu;
  int idtype = tc_sys_int(c, 0);
  int64_t pid = idtype == 0 ? -1 : idtype == 1 ? (int64_t)(uint32_t)c->a[1] : 0;
  int options = tc_sys_int(c, 3);
  if (idtype < 0 || idtype > 3 ||
      !(options & (WEXITED | WUNTRACED | WCONTINUED)) ||
      (idtype == 1 && pid <= 0))
    return -EINVAL;
  tc_proc *z;
  int kind = 0;
  int64_t r = wait_common(c, pid, options, &z, &kind);
  if (r < 0 || (!z && c->restart))
    return r;
  uint8_t si[128] = {0};
  const tc_arch *a = emu->arch;
  if (z) {
    bool swapped = tc_linux_arch_of(a)->siginfo_swapped; /* mips */
    bool killed = (z->wstatus & 0x7f) != 0;
    int sigchld = tc_xlat_signal_to_guest(a, SIGCHLD_HOST);
    /* CLD_EXITED 1, CLD_KILLED 2, CLD_STOPPED 5, CLD_CONTINUED 6 */
    int code = kind == WUNTRACED ? 5 : kind == WCONTINUED ? 6 : killed ? 2 : 1;
    uint32_t status =
        kind == WUNTRACED    ? (uint32_t)guest_signal(emu, z->stop_report)
        : kind == WCONTINUED ? (uint32_t)guest_signal(emu, SIGCONT_HOST)
        : killed             ? (uint32_t)(z->wstatus & 0x7f)
                             : (uint32_t)((z->wstatus >> 8) & 0xff);
    tc_abi_put(a, si, 4, (uint32_t)sigchld);
    tc_abi_put(a, si + (swapped ? 4 : 8), 4, (uint32_t)code);
    size_t u = a->ptr_size == 8 ? 16 : 12; /* the union */
    tc_abi_put(a, si + u, 4, z->pid);
    tc_abi_put(a, si + u + 4, 4, TC_GUEST_UID);
    tc_abi_put(a, si + u + 8, 4, status);
  }
  /* WNOHANG with nothing to report: the kernel zeroes si_pid (and all). */
  if (c->a[2] && (r = tc_sys_write(emu, c->a[2], si, 128)) < 0)
    return r;
  if ((r = put_rusage(c, c->a[4])) < 0)
    return r;
  if (z && !(options & WNOWAIT))
    consume_report(emu, z, kind);
  return 0;
}

/* The parent as the table knows it: an orphan's is init's (1). */
static int64_t sys_getppid(tc_sys_call *c) {
  const tc_proc *e = proc_find(c->emu->procs, c->emu->pid);
  uint32_t ppid = e ? e->ppid : c->emu->ppid;
  return ppid ? ppid : OUTSIDE_PPID;
}

/* ---------------------------------------------------------------- kill */

int64_t tc_proc_kill(tc_sys_call *c, int64_t pid, int sig) {
  struct tc_procs *p = c->emu->procs;
  if (pid > 0) {
    tc_proc *e = proc_find(p, (uint32_t)pid);
    if (!e)
      return -ESRCH;
    if (e->emu && !e->emu->exited && sig)
      tc_signal_post(e->emu, sig);
    return 0; /* a zombie takes signals and ignores them */
  }
  /* 0, -1, -pgid: every guest process of the group (the caller itself is
   * signalled by the caller, last). */
  bool found = false;
  for (size_t i = 0; p && i < p->n; i++) {
    tc_emu *t = p->v[i].emu;
    if (!t || t == c->emu || t->exited)
      continue;
    if (pid < -1 && (uint32_t)-pid != t->pgid)
      continue;
    found = true;
    if (sig)
      tc_signal_post(t, sig);
  }
  return found ? 0 : -ESRCH;
}

const tc_sys_entry tc_sys_process_table[] = {
    {"fork", sys_fork},     {"vfork", sys_vfork},
    {"wait4", sys_wait4},   {"waitpid", sys_waitpid},
    {"waitid", sys_waitid}, {"getppid", sys_getppid},
    {NULL, NULL},
};
