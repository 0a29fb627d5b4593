/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Emulated kernel: process identity, exit and signals, time, randomness,
 * limits, system information, futexes.
 *
 * Everything here is deterministic: ids are fixed, time is the virtual
 * emu->clock_ns (2024-01-01 at start; every clock read advances it by
 * CLOCK_STEP_NS so loops that wait for time to pass terminate; sleeps
 * advance it by their duration and return at once), randomness comes from
 * tc_emu_random (seeded by opt.seed). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "common/linux/linux_xlat.h"
#include "common/notice.h"
#include "emu/linux/linux_arch.h"
#include "emu/linux/linux_sys.h"

#define CLOCK_STEP_NS 1000u            /* per clock read: 1 us */
#define BOOT_UPTIME_NS 100000000000ull /* CLOCK_MONOTONIC at start: 100 s */
#define GUEST_UID 1000u

/* ------------------------------------------------------------------ ids */

static int64_t sys_getpid(tc_sys_call *c) { return c->emu->pid; }
static int64_t sys_gettid(tc_sys_call *c) { return c->emu->tid; }
static int64_t sys_getuid(tc_sys_call *c) { return GUEST_UID; }

static int64_t sys_getresuid(tc_sys_call *c) {
  /* uid_t is 16 bits in the legacy getresuid of i386 and arm. */
  unsigned sz = (tc_linux_arch_of(c->emu->arch)->uid16 &&
                 !strstr(c->name ? c->name : "", "32"))
                    ? 2
                    : 4;
  for (int i = 0; i < 3; i++) {
    int r = tc_sys_put_uint(c->emu, c->a[i], sz, GUEST_UID);
    if (r < 0)
      return r;
  }
  return 0;
}

/* The guest is an unprivileged process: it may "change" its ids only to
 * the ones it has (-1 keeps one), as setuid/setresuid allow a non-root
 * user; anything else is EPERM. Legacy 16-bit calls take 0xffff as -1. */
static int64_t sys_setids(tc_sys_call *c) {
  const char *n = c->name ? c->name : "";
  int nargs = strstr(n, "setres") ? 3 : strstr(n, "setre") ? 2 : 1;
  bool narrow = tc_linux_arch_of(c->emu->arch)->uid16 && !strstr(n, "32");
  for (int i = 0; i < nargs; i++) {
    uint64_t v = c->a[i] & (narrow ? 0xffffu : 0xffffffffu);
    if (v != GUEST_UID && v != (narrow ? 0xffffu : 0xffffffffu))
      return -EPERM;
  }
  return 0;
}

static int64_t sys_getgroups(tc_sys_call *c) {
  return tc_sys_int(c, 0) < 0 ? -EINVAL : 0; /* no supplementary groups */
}

/* Every guest process is in the first one's group (no job control). */
static int64_t sys_getpgrp(tc_sys_call *c) { return c->emu->pgid; }

static int64_t sys_getpgid(tc_sys_call *c) {
  int pid = tc_sys_int(c, 0);
  return (pid == 0 || (uint32_t)pid == c->emu->pid) ? (int64_t)c->emu->pgid
                                                    : -ESRCH;
}

static int64_t sys_set_tid_address(tc_sys_call *c) {
  c->emu->clear_child_tid = c->a[0];
  return c->emu->tid;
}

static int64_t sys_set_robust_list(tc_sys_call *c) {
  /* struct robust_list_head: three pointer-sized fields. */
  if (c->a[1] != 3u * c->emu->arch->ptr_size)
    return -EINVAL;
  c->st->robust_list = c->a[0];
  return 0;
}

static int64_t sys_rseq(tc_sys_call *c) {
  return -ENOSYS; /* glibc then runs without restartable sequences */
}

static int64_t sys_umask(tc_sys_call *c) {
  uint32_t old = c->st->umask;
  c->st->umask = (uint32_t)c->a[0] & 0777;
  return old;
}

/* ----------------------------------------------------------------- exit */

static int64_t sys_exit_group(tc_sys_call *c) {
  c->action = TC_SYS_ACT_EXIT;
  c->action_arg = tc_sys_int(c, 0) & 0xff;
  c->no_return = true;
  return 0;
}

/* exit() ends the calling thread; the last one's ends the process. */
static int64_t sys_exit(tc_sys_call *c) {
  if (tc_thread_exit(c))
    return 0;
  return sys_exit_group(c);
}

/* -------------------------------------------------------------- signals */

enum { SIG_DFL_V = 0, SIG_IGN_V = 1 };

static bool is_stop_signal(int sig) { return sig >= 19 && sig <= 22; }

/* Drops the pending signals in set, of the process and of every thread. */
static void drop_pending(tc_emu *emu, tc_linux_state *st, uint64_t set) {
  st->pending_set &= ~set;
  st->thread_pending &= ~set;
  for (size_t i = 0; i < emu->nthreads; i++)
    emu->threads[i].sig_pending &= ~set;
}

/* Job control when a signal is sent, whatever its disposition (Linux's
 * prepare_signal): SIGCONT continues a stopped process and drops its
 * pending stop signals; a stop signal drops a pending SIGCONT. */
static void job_control_on_send(tc_emu *emu, tc_linux_state *st, int sig) {
  if (sig == 18) {
    drop_pending(emu, st, 0xfull << 18); /* SIGSTOP, TSTP, TTIN, TTOU */
    tc_proc_job_continue(emu);
  } else if (is_stop_signal(sig)) {
    drop_pending(emu, st, 1ull << 17); /* SIGCONT */
  }
}

void tc_signal_job_stop(tc_sys_call *c, int sig) {
  tc_emu *emu = c->emu;
  tc_proc_job_stop(emu, sig);
  if (c->posted)
    return; /* not running: the session does not give it turns */
  /* The call returns, then the engine stops and the scheduler holds the
   * whole process (tc_emu_schedule) until a SIGCONT. */
  if (emu->resched < TC_RESCHED_BLOCK)
    emu->resched = TC_RESCHED_BLOCK;
  uc_emu_stop(emu->uc);
}

/* Sends sig to the calling thread. A caught signal runs its handler when
 * this syscall returns (linux_signal.c); a blocked one waits in the
 * pending set for the unblock; an ignored one, or one whose default action
 * is to ignore, has no effect; a default action of "stop" stops the whole
 * process (tc_signal_job_stop). A default action of "terminate" or
 * "core" ends the process after the syscall has been reported. */
static int64_t send_self(tc_sys_call *c, int sig) {
  if (sig == 0)
    return 0;
  tc_linux_state *st = c->st;
  job_control_on_send(c->emu, st, sig);
  bool kill = false, stop = false;
  if (sig == 9) {
    kill = true;
  } else if (sig == 19) {
    stop = true; /* SIGSTOP cannot be caught, blocked or ignored */
  } else if (st->sigmask & (1ull << (sig - 1))) {
    kill = false; /* pending until unblocked (tc_signal_syscall_end) */
    if (st->sigact[sig].handler != SIG_IGN_V &&
        strcmp(c->name ? c->name : "", "kill") != 0) {
      /* tkill/tgkill of the calling thread: pending for it alone (swapped
       * with the thread on a switch); in the process's set another
       * thread saw it, and a wait of that thread ended with EINTR */
      st->thread_pending |= 1ull << (sig - 1);
      st->thread_pending_user &= ~(1ull << (sig - 1));
      tc_thread_wake_sigwaiters(c->emu, sig);
    } else if (st->sigact[sig].handler != SIG_IGN_V) {
      st->pending_set |= 1ull << (sig - 1);
      st->pending_set_code[sig] = 0;
      tc_thread_wake_sigwaiters(c->emu, sig);
    }
  } else if (st->sigact[sig].handler != SIG_DFL_V) {
    kill = false; /* SIG_IGN, or a handler */
    if (st->sigact[sig].handler != SIG_IGN_V && tc_signal_can_deliver(c->emu)) {
      st->pending_sig = sig; /* runs when this syscall returns */
      st->pending_code = strcmp(c->name ? c->name : "", "kill") ? -6 : 0;
    } else if (st->sigact[sig].handler != SIG_IGN_V && !st->handler_reported &&
               !c->emu->opt.quiet) {
      /* not silently: the run diverges from Linux here */
      tc_notice("signal %d has a guest handler; delivery to "
                "handlers is not implemented on %s, so it is dropped and the "
                "program goes on as if it never came",
                sig, c->emu->arch->name);
      st->handler_reported = true;
    }
  } else if (is_stop_signal(sig)) {
    stop = true; /* SIGTSTP, SIGTTIN, SIGTTOU: their default action */
  } else {
    kill = tc_signal_default_kills(sig);
  }
  if (stop)
    tc_signal_job_stop(c, sig);
  if (kill) {
    c->action = TC_SYS_ACT_KILL;
    c->action_arg = sig;
    c->no_return = true;
  }
  return 0;
}

/* The guest's signal number in host numbering; -1 if it has none. */
static int host_sig(tc_sys_call *c, int gsig) {
  if (gsig == 0)
    return 0;
  int h = tc_xlat_signal_to_host(c->emu->arch, gsig);
  return h > 0 ? h : -1;
}

/* kill() of the caller's own process: with threads, to the thread Linux
 * would pick (complete_signal); else as a signal to itself. */
static int64_t kill_own_process(tc_sys_call *c, int sig) {
  uint32_t tid = 0;
  if (sig != 0 && sig != 9 && sig != 19 &&
      c->st->sigact[sig].handler > SIG_IGN_V && tc_signal_can_deliver(c->emu))
    tid = tc_thread_pick_for_signal(c->emu, sig);
  if (tid) {
    job_control_on_send(c->emu, c->st, sig);
    return tc_thread_queue_signal(c->emu, tid, sig, true);
  }
  return send_self(c, sig);
}

static int64_t sys_kill(tc_sys_call *c) {
  int pid = tc_sys_int(c, 0), sig = host_sig(c, tc_sys_int(c, 1));
  if (sig < 0 || sig > TC_NSIG)
    return -EINVAL;
  if ((uint32_t)pid == c->emu->pid)
    return kill_own_process(c, sig);
  /* Another guest process, or a group: the others first, then itself
   * (kill(-1) reaches every process but the caller, as on Linux). */
  int64_t r = tc_proc_kill(c, pid, sig);
  if (pid == 0 || (pid < -1 && (uint32_t)-pid == c->emu->pgid))
    return kill_own_process(c, sig);
  return r;
}

void tc_signal_post_chld(tc_emu *target, int code, uint32_t pid,
                         int32_t status) {
  tc_linux_state *st = tc_linux_state_of(target);
  if (!st->chld_code) { /* one pending SIGCHLD keeps the first child's */
    st->chld_code = code;
    st->chld_pid = pid;
    st->chld_status = status;
  }
  tc_signal_post(target, 17);
}

/* A signal for another guest process (tc_proc_kill): as if it sent it to
 * itself. (With threads it goes to the process, not to the thread
 * Linux's complete_signal would pick: the thread running there takes it.) */
void tc_signal_post(tc_emu *target, int sig) {
  tc_sys_call c;
  memset(&c, 0, sizeof c);
  c.emu = target;
  c.st = tc_linux_state_of(target);
  c.name = "kill";
  c.posted = true;
  send_self(&c, sig);
  if (c.action == TC_SYS_ACT_KILL) {
    tc_emu_kill(target, c.action_arg);
  } else if (c.st->pending_sig) {
    /* It runs the handler at the end of its next syscall. */
    c.st->pending_set |= 1ull << (c.st->pending_sig - 1);
    c.st->pending_set_code[c.st->pending_sig] = c.st->pending_code;
    c.st->pending_sig = 0;
  }
}

/* A signal for another thread of the process. Its default action (end the
 * process, or nothing) is the same whichever thread takes it; a handler
 * runs on that thread when it next runs (tc_thread_queue_signal). */
static int64_t send_other_thread(tc_sys_call *c, int sig, uint32_t tid) {
  tc_linux_state *st = c->st;
  if (sig != 0 && sig != 9 && sig != 19 &&
      st->sigact[sig].handler != SIG_DFL_V &&
      st->sigact[sig].handler != SIG_IGN_V) {
    if (tc_signal_can_deliver(c->emu)) {
      job_control_on_send(c->emu, st, sig);
      return tc_thread_queue_signal(c->emu, tid, sig, false);
    }
    if (!st->tkill_reported && !c->emu->opt.quiet)
      tc_notice("signal %d for thread %u has a guest handler; "
                "delivery to another thread is not implemented, so it is "
                "dropped",
                sig, (unsigned)tid);
    st->tkill_reported = true;
    return 0;
  }
  return send_self(c, sig);
}

static int64_t sys_tkill(tc_sys_call *c) {
  int tid = tc_sys_int(c, 0), sig = host_sig(c, tc_sys_int(c, 1));
  if (tid <= 0 || sig < 0 || sig > TC_NSIG)
    return -EINVAL;
  if ((uint32_t)tid == c->emu->tid)
    return send_self(c, sig);
  if (tc_thread_exists(c->emu, (uint32_t)tid))
    return send_other_thread(c, sig, (uint32_t)tid);
  return -ESRCH;
}

static int64_t sys_tgkill(tc_sys_call *c) {
  int tgid = tc_sys_int(c, 0), tid = tc_sys_int(c, 1),
      sig = host_sig(c, tc_sys_int(c, 2));
  if (tgid <= 0 || tid <= 0 || sig < 0 || sig > TC_NSIG)
    return -EINVAL;
  if ((uint32_t)tgid != c->emu->pid || !tc_thread_exists(c->emu, (uint32_t)tid))
    return -ESRCH;
  if ((uint32_t)tid != c->emu->tid)
    return send_other_thread(c, sig, (uint32_t)tid);
  return send_self(c, sig);
}

/* sigset_t as the kernel sees it: an array of longs, signal n at bit n-1. */
static uint64_t decode_sigset(const tc_arch *arch, const uint8_t *p) {
  if (arch->ptr_size == 8)
    return tc_abi_get(arch, p, 8);
  return tc_abi_get(arch, p, 4) | (tc_abi_get(arch, p + 4, 4) << 32);
}

static void encode_sigset(const tc_arch *arch, uint64_t set, uint8_t *p) {
  if (arch->ptr_size == 8) {
    tc_abi_put(arch, p, 8, set);
  } else {
    tc_abi_put(arch, p, 4, set & 0xffffffffu);
    tc_abi_put(arch, p + 4, 4, set >> 32);
  }
}

#define UNBLOCKABLE ((1ull << 8) | (1ull << 18)) /* SIGKILL, SIGSTOP */

/* struct sigaction as the kernel reads it: {handler, flags, restorer,
 * mask} with long fields on most arches; mips has {unsigned flags,
 * handler, mask} and no restorer. Offsets of each, and the size. */
typedef struct sigaction_layout {
  unsigned handler, flags, flags_size, restorer, mask, size;
} sigaction_layout;

static sigaction_layout sigaction_layout_of(const tc_arch *arch) {
  unsigned l = arch->ptr_size, ss = tc_xlat_sigset_size(arch);
  if (ss == 16) /* mips: restorer == 0 means "none" */
    return (sigaction_layout){l, 0, 4, 0, 2 * l, 2 * l + ss};
  return (sigaction_layout){0, l, l, 2 * l, 3 * l, 3 * l + ss};
}

static int64_t sys_rt_sigaction(tc_sys_call *c) {
  tc_emu *emu = c->emu;
  const tc_arch *arch = emu->arch;
  int gsig = tc_sys_int(c, 0);
  if (c->a[3] != tc_xlat_sigset_size(arch))
    return -EINVAL;
  int sig = tc_xlat_signal_to_host(arch, gsig);
  if (gsig < 1 || sig < 1 || sig > TC_NSIG)
    return -EINVAL;
  if (c->a[1] && (sig == 9 || sig == 19))
    return -EINVAL;
  sigaction_layout lay = sigaction_layout_of(arch);
  unsigned l = arch->ptr_size;
  bool has_restorer = lay.restorer != 0;
  uint8_t in[48], out[48];
  int r;
  if (c->a[1] && (r = tc_sys_read(emu, c->a[1], in, lay.size)) < 0)
    return r;
  if (c->a[2]) {
    memset(out, 0, sizeof out);
    tc_abi_put(arch, out + lay.handler, l, c->st->sigact[sig].handler);
    tc_abi_put(arch, out + lay.flags, lay.flags_size, c->st->sigact[sig].flags);
    if (has_restorer)
      tc_abi_put(arch, out + lay.restorer, l, c->st->sigact[sig].restorer);
    encode_sigset(arch, tc_xlat_sigset_to_guest(arch, c->st->sigact[sig].mask),
                  out + lay.mask);
    if ((r = tc_sys_write(emu, c->a[2], out, lay.size)) < 0)
      return r;
  }
  if (c->a[1]) {
    c->st->sigact[sig].handler = tc_abi_get(arch, in + lay.handler, l);
    c->st->sigact[sig].flags = tc_abi_get(arch, in + lay.flags, lay.flags_size);
    c->st->sigact[sig].restorer =
        has_restorer ? tc_abi_get(arch, in + lay.restorer, l) : 0;
    c->st->sigact[sig].mask =
        tc_xlat_sigset_to_host(arch, decode_sigset(arch, in + lay.mask)) &
        ~UNBLOCKABLE;
  }
  return 0;
}

static int64_t sys_rt_sigprocmask(tc_sys_call *c) {
  tc_emu *emu = c->emu;
  const tc_arch *arch = emu->arch;
  int how = tc_sys_int(c, 0);
  unsigned ss = tc_xlat_sigset_size(arch);
  if (ss == 16) /* mips numbers SIG_BLOCK/UNBLOCK/SETMASK 1, 2, 3 */
    how -= 1;
  if (c->a[3] != ss)
    return -EINVAL;
  uint8_t buf[16];
  uint64_t set = 0;
  int r;
  if (c->a[1]) {
    if (how < 0 || how > 2) /* SIG_BLOCK, SIG_UNBLOCK, SIG_SETMASK */
      return -EINVAL;
    if ((r = tc_sys_read(emu, c->a[1], buf, ss)) < 0)
      return r;
    set = tc_xlat_sigset_to_host(arch, decode_sigset(arch, buf));
  }
  if (c->a[2]) {
    memset(buf, 0, sizeof buf);
    encode_sigset(arch, tc_xlat_sigset_to_guest(arch, c->st->sigmask), buf);
    if ((r = tc_sys_write(emu, c->a[2], buf, ss)) < 0)
      return r;
  }
  if (c->a[1]) {
    uint64_t m = c->st->sigmask;
    m = how == 0 ? (m | set) : how == 1 ? (m & ~set) : set;
    c->st->sigmask = m & ~UNBLOCKABLE;
  }
  return 0;
}

static int64_t sys_sigaltstack(tc_sys_call *c) {
  tc_emu *emu = c->emu;
  const tc_arch *arch = emu->arch;
  /* stack_t: {void *ss_sp; int ss_flags; size_t ss_size}; mips has
   * {void *ss_sp; size_t ss_size; int ss_flags}. */
  unsigned l = arch->ptr_size, size = 3 * l;
  bool mips = tc_xlat_sigset_size(arch) == 16;
  unsigned flags_off = mips ? 2 * l : l, size_off = mips ? l : 2 * l;
  uint8_t in[24], out[24];
  int r;
  if (c->a[0] && (r = tc_sys_read(emu, c->a[0], in, size)) < 0)
    return r;
  /* running on it (a handler with SA_ONSTACK): SS_ONSTACK, and it cannot
   * be changed (the kernel's on_sig_stack / sas_ss_flags) */
  uint64_t cur_sp = tc_emu_reg(emu, arch->sp_reg);
  const tc_linux_state *st = c->st;
  bool on = st->altstack_size && !(st->altstack_flags & (1u << 31)) &&
            cur_sp > st->altstack_sp &&
            cur_sp - st->altstack_sp <= st->altstack_size;
  if (c->a[1]) {
    memset(out, 0, sizeof out);
    uint32_t oflags = (uint32_t)st->altstack_flags;
    if (st->altstack_size)
      oflags = (oflags & ~2u) | (on ? 1u : 0u); /* SS_ONSTACK */
    tc_abi_put(arch, out, l, c->st->altstack_sp);
    tc_abi_put(arch, out + flags_off, 4, oflags);
    tc_abi_put(arch, out + size_off, l, c->st->altstack_size);
    if ((r = tc_sys_write(emu, c->a[1], out, size)) < 0)
      return r;
  }
  if (c->a[0] && on)
    return -EPERM;
  if (c->a[0]) {
    uint64_t sp = tc_abi_get(arch, in, l),
             ssz = tc_abi_get(arch, in + size_off, l);
    uint32_t flags = (uint32_t)tc_abi_get(arch, in + flags_off, 4);
    const uint32_t SS_DISABLE = 2, SS_AUTODISARM = 1u << 31;
    if (flags & ~(SS_DISABLE | SS_AUTODISARM))
      return -EINVAL;
    if (flags & SS_DISABLE) {
      c->st->altstack_sp = c->st->altstack_size = 0;
      c->st->altstack_flags = (int)SS_DISABLE;
    } else {
      if (ssz < 2048) /* MINSIGSTKSZ */
        return -ENOMEM;
      c->st->altstack_sp = sp;
      c->st->altstack_size = ssz;
      c->st->altstack_flags = (int)(flags & SS_AUTODISARM);
    }
  }
  return 0;
}

/* ------------------------------------------------------------------ time */

uint64_t tc_sys_now_ns(tc_emu *emu, int clockid) {
  uint64_t t = emu->clock_ns;
  uint64_t since_start = t >= TC_EPOCH_NS ? t - TC_EPOCH_NS : 0;
  switch (clockid) {
  case 0:  /* CLOCK_REALTIME */
  case 5:  /* CLOCK_REALTIME_COARSE */
  case 8:  /* CLOCK_REALTIME_ALARM */
  case 11: /* CLOCK_TAI */
    return t;
  case 1: /* CLOCK_MONOTONIC */
  case 4: /* CLOCK_MONOTONIC_RAW */
  case 6: /* CLOCK_MONOTONIC_COARSE */
  case 7: /* CLOCK_BOOTTIME */
  case 9: /* CLOCK_BOOTTIME_ALARM */
    return BOOT_UPTIME_NS + since_start;
  case 2: /* CLOCK_PROCESS_CPUTIME_ID */
  case 3: /* CLOCK_THREAD_CPUTIME_ID */
    return since_start;
  default:
    return UINT64_MAX;
  }
}

static int64_t put_timespec(tc_sys_call *c, uint64_t addr, bool time64,
                            uint64_t ns, uint64_t unit) {
  uint8_t ts[16];
  tc_abi_encode_timespec(c->emu->arch, time64, (int64_t)(ns / 1000000000u),
                         (int64_t)((ns % 1000000000u) / unit), ts);
  return tc_sys_write(c->emu, addr, ts,
                      tc_abi_timespec_size(c->emu->arch, time64));
}

static int64_t clock_gettime_common(tc_sys_call *c, bool time64) {
  uint64_t now = tc_sys_now_ns(c->emu, tc_sys_int(c, 0));
  if (now == UINT64_MAX)
    return -EINVAL;
  int64_t r = put_timespec(c, c->a[1], time64, now, 1);
  if (r == 0)
    c->emu->clock_ns += CLOCK_STEP_NS;
  return r;
}

static int64_t sys_clock_gettime(tc_sys_call *c) {
  return clock_gettime_common(c, false);
}
static int64_t sys_clock_gettime64(tc_sys_call *c) {
  return clock_gettime_common(c, true);
}

static int64_t clock_getres_common(tc_sys_call *c, bool time64) {
  if (tc_sys_now_ns(c->emu, tc_sys_int(c, 0)) == UINT64_MAX)
    return -EINVAL;
  return c->a[1] ? put_timespec(c, c->a[1], time64, 1, 1) : 0;
}
static int64_t sys_clock_getres(tc_sys_call *c) {
  return clock_getres_common(c, false);
}
static int64_t sys_clock_getres_time64(tc_sys_call *c) {
  return clock_getres_common(c, true);
}

static int64_t sys_gettimeofday(tc_sys_call *c) {
  uint64_t now = c->emu->clock_ns;
  int64_t r;
  if (c->a[0] && (r = put_timespec(c, c->a[0], false, now, 1000)) < 0)
    return r;
  if (c->a[1]) { /* struct timezone {int minuteswest, dsttime}: UTC */
    uint8_t tz[8] = {0};
    if ((r = tc_sys_write(c->emu, c->a[1], tz, sizeof tz)) < 0)
      return r;
  }
  c->emu->clock_ns += CLOCK_STEP_NS;
  return 0;
}

static int64_t sys_time(tc_sys_call *c) {
  uint64_t sec = c->emu->clock_ns / 1000000000u;
  if (c->a[0]) {
    int r = tc_sys_put_uint(c->emu, c->a[0], c->emu->arch->ptr_size, sec);
    if (r < 0)
      return r;
  }
  c->emu->clock_ns += CLOCK_STEP_NS;
  return (int64_t)sec;
}

/* Reads a relative or absolute timespec argument into nanoseconds. */
int tc_sys_read_timespec_ns(tc_sys_call *c, uint64_t addr, bool time64,
                            uint64_t *ns) {
  uint8_t ts[16];
  int r =
      tc_sys_read(c->emu, addr, ts, tc_abi_timespec_size(c->emu->arch, time64));
  if (r < 0)
    return r;
  int64_t sec, nsec;
  tc_abi_decode_timespec(c->emu->arch, time64, ts, &sec, &nsec);
  if (sec < 0 || nsec < 0 || nsec >= 1000000000)
    return -EINVAL;
  if ((uint64_t)sec > UINT64_MAX / 1000000000u / 4)
    sec = (int64_t)(UINT64_MAX / 1000000000u / 4); /* "forever" */
  *ns = (uint64_t)sec * 1000000000u + (uint64_t)nsec;
  return 0;
}

static int64_t sys_nanosleep(tc_sys_call *c) {
  uint64_t ns;
  int r = tc_sys_read_timespec_ns(c, c->a[0], false, &ns);
  if (r < 0)
    return r;
  bool intr;
  c->emu->clock_ns += tc_signal_sleep_ns(c, ns, &intr);
  tc_thread_yield(c);       /* the other threads run meanwhile */
  return intr ? -EINTR : 0; /* the timer's SIGALRM cut it short */
}

static int64_t clock_nanosleep_common(tc_sys_call *c, bool time64) {
  int clockid = tc_sys_int(c, 0);
  if (clockid == 3) /* CLOCK_THREAD_CPUTIME_ID */
    return -EINVAL;
  uint64_t now = tc_sys_now_ns(c->emu, clockid);
  if (now == UINT64_MAX)
    return -EINVAL;
  uint64_t ns;
  int r = tc_sys_read_timespec_ns(c, c->a[2], time64, &ns);
  if (r < 0)
    return r;
  if (c->a[1] & 1) /* TIMER_ABSTIME */
    ns = ns > now ? ns - now : 0;
  bool intr;
  c->emu->clock_ns += tc_signal_sleep_ns(c, ns, &intr);
  tc_thread_yield(c);
  return intr ? -EINTR : 0;
}

static int64_t sys_clock_nanosleep(tc_sys_call *c) {
  return clock_nanosleep_common(c, false);
}
static int64_t sys_clock_nanosleep_time64(tc_sys_call *c) {
  return clock_nanosleep_common(c, true);
}

/* ---------------------------------------------------------------- random */

static int64_t sys_getrandom(tc_sys_call *c) {
  uint32_t flags = (uint32_t)c->a[2];
  if (flags & ~7u) /* GRND_NONBLOCK | GRND_RANDOM | GRND_INSECURE */
    return -EINVAL;
  if ((flags & 6u) == 6u)
    return -EINVAL;
  uint64_t len = c->a[1];
  if (len > (1u << 20))
    len = 1u << 20; /* a short read is part of getrandom's contract */
  uint8_t buf[4096];
  uint64_t done = 0;
  while (done < len) {
    size_t n = len - done < sizeof buf ? (size_t)(len - done) : sizeof buf;
    if (!tc_sys_range_ok(c->emu, c->a[0] + done, n, TC_PROT_WRITE))
      break;
    tc_emu_random(c->emu, buf, n);
    if (tc_sys_write(c->emu, c->a[0] + done, buf, n) < 0)
      break;
    done += n;
  }
  return (done == 0 && len > 0) ? -EFAULT : (int64_t)done;
}

/* ---------------------------------------------------------------- limits */

static int64_t sys_prlimit64(tc_sys_call *c) {
  int pid = tc_sys_int(c, 0), res = tc_sys_int(c, 1);
  if (pid != 0 && (uint32_t)pid != c->emu->pid)
    return -ESRCH;
  if (res < 0 || res >= TC_RLIM_NLIMITS)
    return -EINVAL;
  uint8_t in[16], out[16];
  int r;
  uint64_t cur = 0, max = 0;
  if (c->a[2]) {
    if ((r = tc_sys_read(c->emu, c->a[2], in, 16)) < 0)
      return r;
    cur = tc_abi_get(c->emu->arch, in, 8);
    max = tc_abi_get(c->emu->arch, in + 8, 8);
    if (cur > max)
      return -EINVAL;
    if (max > c->st->rlim_max[res])
      return -EPERM; /* an unprivileged process cannot raise the hard limit */
  }
  if (c->a[3]) {
    tc_abi_put(c->emu->arch, out, 8, c->st->rlim_cur[res]);
    tc_abi_put(c->emu->arch, out + 8, 8, c->st->rlim_max[res]);
    if ((r = tc_sys_write(c->emu, c->a[3], out, 16)) < 0)
      return r;
  }
  if (c->a[2]) {
    c->st->rlim_cur[res] = cur;
    c->st->rlim_max[res] = max;
  }
  return 0;
}

/* struct rlimit of two longs. `old_clamp`: i386's legacy getrlimit, which
 * reports anything above 0x7fffffff as 0x7fffffff. */
static int64_t getrlimit_common(tc_sys_call *c, bool old_clamp) {
  int res = tc_sys_int(c, 0);
  if (res < 0 || res >= TC_RLIM_NLIMITS)
    return -EINVAL;
  unsigned l = c->emu->arch->ptr_size;
  uint64_t v[2] = {c->st->rlim_cur[res], c->st->rlim_max[res]};
  uint8_t out[16];
  for (int i = 0; i < 2; i++) {
    if (l == 4 && old_clamp && v[i] > 0x7fffffffu)
      v[i] = 0x7fffffffu;
    else if (l == 4 && v[i] > 0xffffffffu)
      v[i] = 0xffffffffu; /* RLIM_INFINITY of a 32-bit long */
    tc_abi_put(c->emu->arch, out + i * l, l, v[i]);
  }
  return tc_sys_write(c->emu, c->a[1], out, 2 * l);
}

static int64_t sys_getrlimit(tc_sys_call *c) {
  return getrlimit_common(c, c->emu->arch->ptr_size == 4);
}
static int64_t sys_ugetrlimit(tc_sys_call *c) {
  return getrlimit_common(c, false);
}

static int64_t sys_setrlimit(tc_sys_call *c) {
  int res = tc_sys_int(c, 0);
  if (res < 0 || res >= TC_RLIM_NLIMITS)
    return -EINVAL;
  unsigned l = c->emu->arch->ptr_size;
  uint8_t in[16];
  int r = tc_sys_read(c->emu, c->a[1], in, 2 * l);
  if (r < 0)
    return r;
  uint64_t v[2];
  for (int i = 0; i < 2; i++) {
    v[i] = tc_abi_get(c->emu->arch, in + i * l, l);
    if (l == 4 && v[i] == 0xffffffffu)
      v[i] = UINT64_MAX;
  }
  if (v[0] > v[1])
    return -EINVAL;
  if (v[1] > c->st->rlim_max[res])
    return -EPERM;
  c->st->rlim_cur[res] = v[0];
  c->st->rlim_max[res] = v[1];
  return 0;
}

/* ------------------------------------------------------------ system info */

static const char *uname_machine(const tc_arch *arch) {
  const char *m = tc_linux_arch_of(arch)->uname_machine;
  return m ? m : arch->name;
}

static int64_t sys_uname(tc_sys_call *c) {
  /* struct new_utsname: six 65-byte strings. */
  char u[6][65];
  memset(u, 0, sizeof u);
  snprintf(u[0], 65, "Linux");
  snprintf(u[1], 65, "tracecorn");
  snprintf(u[2], 65, "6.1.0");
  snprintf(u[3], 65, "#1 SMP tracecorn");
  snprintf(u[4], 65, "%s", uname_machine(c->emu->arch));
  snprintf(u[5], 65, "(none)");
  return tc_sys_write(c->emu, c->a[0], u, sizeof u);
}

static int64_t sys_sysinfo(tc_sys_call *c) {
  /* struct sysinfo, laid out by the size L of a long: uptime 0, loads
   * L..4L, totalram 4L, freeram 5L, sharedram 6L, bufferram 7L,
   * totalswap 8L, freeswap 9L, procs (u16) 10L, totalhigh 11L,
   * freehigh 12L, mem_unit (u32) 13L, padding to 11L + 20 rounded to L. */
  const tc_arch *arch = c->emu->arch;
  unsigned l = arch->ptr_size;
  size_t size = (11 * l + 20 + l - 1) & ~(size_t)(l - 1);
  uint8_t b[128];
  memset(b, 0, sizeof b);
  uint64_t up = tc_sys_now_ns(c->emu, 1) / 1000000000u;
  tc_abi_put(arch, b, l, up);
  tc_abi_put(arch, b + 4 * l, l, 1ull << 30);   /* totalram: 1 GiB */
  tc_abi_put(arch, b + 5 * l, l, 512ull << 20); /* freeram */
  tc_abi_put(arch, b + 10 * l, 2, 1);           /* procs */
  tc_abi_put(arch, b + 13 * l, 4, 1);           /* mem_unit */
  return tc_sys_write(c->emu, c->a[0], b, size);
}

static int64_t sys_sched_getaffinity(tc_sys_call *c) {
  int pid = tc_sys_int(c, 0);
  unsigned l = c->emu->arch->ptr_size;
  uint64_t len = c->a[1];
  if (pid != 0 && (uint32_t)pid != c->emu->pid)
    return -ESRCH;
  if (len < l || (len & (l - 1)))
    return -EINVAL;
  uint8_t mask[8] = {0};
  tc_abi_put(c->emu->arch, mask, l, 1); /* one CPU: cpu 0 */
  int r = tc_sys_write(c->emu, c->a[2], mask, l);
  return r < 0 ? r : (int64_t)l;
}

static int64_t sys_sched_setaffinity(tc_sys_call *c) {
  int pid = tc_sys_int(c, 0);
  if (pid != 0 && (uint32_t)pid != c->emu->pid)
    return -ESRCH;
  return 0;
}

static int64_t sys_getcpu(tc_sys_call *c) {
  int r;
  for (int i = 0; i < 2; i++)
    if (c->a[i] && (r = tc_sys_put_uint(c->emu, c->a[i], 4, 0)) < 0)
      return r;
  return 0;
}

static int64_t sys_prctl(tc_sys_call *c) {
  int option = tc_sys_int(c, 0);
  switch (option) {
  case 15: { /* PR_SET_NAME: up to 15 characters are kept */
    char name[16];
    int r = tc_emu_read_str(c->emu, c->a[1], name, sizeof name);
    if (r == -EFAULT)
      return r;
    name[15] = 0;
    memcpy(c->st->comm, name, sizeof name);
    return 0;
  }
  case 16: /* PR_GET_NAME */
    return tc_sys_write(c->emu, c->a[1], c->st->comm, sizeof c->st->comm);
  case 1: /* PR_SET_PDEATHSIG */
    return (c->a[1] > TC_NSIG) ? -EINVAL : 0;
  case 2: /* PR_GET_PDEATHSIG */
    return tc_sys_put_uint(c->emu, c->a[1], 4, 0);
  case 3: /* PR_GET_DUMPABLE */
    return 1;
  case 4: /* PR_SET_DUMPABLE */
    return c->a[1] > 1 ? -EINVAL : 0;
  case 38: /* PR_SET_NO_NEW_PRIVS */
    return c->a[1] == 1 ? 0 : -EINVAL;
  case 39: /* PR_GET_NO_NEW_PRIVS */
    return 0;
  case 0x53564d41: /* PR_SET_VMA (naming anonymous memory) */
    return 0;
  default:
    return -EINVAL;
  }
}

const tc_sys_entry tc_sys_misc_table[] = {
    {"getpid", sys_getpid},
    {"gettid", sys_gettid},
    {"getuid", sys_getuid},
    {"geteuid", sys_getuid},
    {"getgid", sys_getuid},
    {"getegid", sys_getuid},
    {"getuid32", sys_getuid},
    {"geteuid32", sys_getuid},
    {"getgid32", sys_getuid},
    {"getegid32", sys_getuid},
    {"getresuid", sys_getresuid},
    {"getresgid", sys_getresuid},
    {"getresuid32", sys_getresuid},
    {"getresgid32", sys_getresuid},
    {"setuid", sys_setids},
    {"setgid", sys_setids},
    {"setreuid", sys_setids},
    {"setregid", sys_setids},
    {"setresuid", sys_setids},
    {"setresgid", sys_setids},
    {"setuid32", sys_setids},
    {"setgid32", sys_setids},
    {"setreuid32", sys_setids},
    {"setregid32", sys_setids},
    {"setresuid32", sys_setids},
    {"setresgid32", sys_setids},
    {"getgroups", sys_getgroups},
    {"getgroups32", sys_getgroups},
    {"getpgrp", sys_getpgrp},
    {"getpgid", sys_getpgid},
    {"getsid", sys_getpgid},
    {"set_tid_address", sys_set_tid_address},
    {"set_robust_list", sys_set_robust_list},
    {"rseq", sys_rseq},
    {"umask", sys_umask},
    {"exit", sys_exit},
    {"exit_group", sys_exit_group},
    {"kill", sys_kill},
    {"tkill", sys_tkill},
    {"tgkill", sys_tgkill},
    {"rt_sigaction", sys_rt_sigaction},
    {"rt_sigreturn", tc_sys_rt_sigreturn},
    {"alarm", tc_sys_alarm},
    {"setitimer", tc_sys_setitimer},
    {"getitimer", tc_sys_getitimer},
    {"pause", tc_sys_pause},
    {"rt_sigsuspend", tc_sys_rt_sigsuspend},
    {"rt_sigpending", tc_sys_rt_sigpending},
    {"rt_sigtimedwait", tc_sys_rt_sigtimedwait},
    {"rt_sigtimedwait_time64", tc_sys_rt_sigtimedwait_time64},
    {"sigreturn", tc_sys_sigreturn},
    {"rt_sigprocmask", sys_rt_sigprocmask},
    {"sigaltstack", sys_sigaltstack},
    {"clock_gettime", sys_clock_gettime},
    {"clock_gettime64", sys_clock_gettime64},
    {"clock_getres", sys_clock_getres},
    {"clock_getres_time64", sys_clock_getres_time64},
    {"gettimeofday", sys_gettimeofday},
    {"time", sys_time},
    {"nanosleep", sys_nanosleep},
    {"clock_nanosleep", sys_clock_nanosleep},
    {"clock_nanosleep_time64", sys_clock_nanosleep_time64},
    {"getrandom", sys_getrandom},
    {"prlimit64", sys_prlimit64},
    {"getrlimit", sys_getrlimit},
    {"ugetrlimit", sys_ugetrlimit},
    {"setrlimit", sys_setrlimit},
    {"uname", sys_uname},
    {"sysinfo", sys_sysinfo},
    {"sched_getaffinity", sys_sched_getaffinity},
    {"sched_setaffinity", sys_sched_setaffinity},
    {"getcpu", sys_getcpu},
    {"prctl", sys_prctl},
    {NULL, NULL},
};
