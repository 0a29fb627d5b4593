/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Signal delivery to guest handlers and (rt_)sigreturn, as Linux does it:
 * a signal sent to the process itself (kill, tkill, tgkill, raise) with a
 * handler installed is delivered when the syscall that sent it returns; a
 * fault when the engine stops on it; a signal for another thread when the
 * scheduler switches to that thread. Queueing, masks and the order of
 * delivery are here; the frame the kernel builds on the guest stack (like
 * any kernel write, so every format records it) is the arch's, in
 * emu/linux/<arch>/ behind its ops (linux_arch.h), which also finds the
 * frame again at sigreturn. An arch without frames (mips64el) keeps the
 * notice (linux_sys_misc.c). Also the frame helpers the arches share. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "common/linux/linux_abi.h"
#include "common/linux/linux_xlat.h"
#include "common/notice.h"
#include "emu/engine/emu.h"
#include "emu/linux/linux_arch.h"
#include "emu/linux/linux_sys.h"

uint64_t tc_linux_reg(tc_emu *emu, const char *name) {
  int r = tc_arch_reg_index(emu->arch, name);
  return r < 0 ? 0 : tc_emu_reg(emu, r);
}

void tc_linux_set_reg(tc_emu *emu, const char *name, uint64_t v) {
  int r = tc_arch_reg_index(emu->arch, name);
  if (r >= 0)
    tc_emu_set_reg(emu, r, v);
}

bool tc_signal_can_deliver(const tc_emu *emu) {
  return tc_linux_arch_of(emu->arch)->signal_frame != NULL;
}

/* sigreturn, the frame without siginfo (i386, arm, mips o32). */
int64_t tc_sys_sigreturn(tc_sys_call *c) {
  const tc_linux_arch_ops *ops = tc_linux_arch_of(c->emu->arch);
  c->no_return = true; /* every register comes from the frame */
  int64_t r = ops->sigreturn ? ops->sigreturn(c) : -EFAULT;
  if (r < 0) {
    c->action = TC_SYS_ACT_KILL; /* a bad frame: SIGSEGV, as Linux */
    c->action_arg = 11;
  }
  return r;
}

/* ----------------------------------------------------- frame helpers */

void tc_sigframe_put_siginfo(tc_emu *emu, uint8_t *si, const tc_sig_desc *d) {
  const tc_arch *a = emu->arch;
  unsigned u = a->ptr_size == 8 ? 16 : 12;
  /* n64 swaps si_code too (waitid's siginfo does, as Linux), but this one
   * (there only rt_sigtimedwait's) has had it at 8: kept as it was. */
  bool swapped = tc_linux_arch_of(a)->siginfo_swapped && a->ptr_size == 4;
  tc_abi_put(a, si, 4, (uint64_t)tc_xlat_signal_to_guest(a, d->sig));
  tc_abi_put(a, si + (swapped ? 4 : 8), 4, (uint64_t)(uint32_t)d->code);
  if (d->fault) {
    tc_abi_put(a, si + u, a->ptr_size, d->addr);
  } else {
    tc_abi_put(a, si + u, 4, d->pid ? d->pid : emu->pid);
    tc_abi_put(a, si + u + 4, 4, TC_GUEST_UID);
    if (d->has_status)
      tc_abi_put(a, si + u + 8, 4, (uint32_t)d->status);
  }
}

void tc_sigframe_put_stack(const tc_arch *a, uint8_t *p,
                           const tc_linux_state *st, bool on_alt) {
  unsigned l = a->ptr_size;
  bool mips = tc_xlat_sigset_size(a) == 16; /* as sigaltstack tells mips */
  uint32_t flags =
      st->altstack_size ? (on_alt ? TC_SS_ONSTACK : 0) : TC_SS_DISABLE;
  tc_abi_put(a, p, l, st->altstack_sp);
  tc_abi_put(a, p + (mips ? 2 * l : l), 4, flags);
  tc_abi_put(a, p + (mips ? l : 2 * l), l, st->altstack_size);
}

uint64_t tc_sigframe_sp(const tc_linux_state *st, uint64_t flags, uint64_t sp,
                        bool *on_alt) {
  *on_alt = st->altstack_size && sp > st->altstack_sp &&
            sp <= st->altstack_sp + st->altstack_size;
  if ((flags & TC_SA_ONSTACK) && st->altstack_size && !*on_alt &&
      !(st->altstack_flags & TC_SS_DISABLE))
    return st->altstack_sp + st->altstack_size;
  return sp;
}

/* mips: 128 bits, the upper 64 zero. */
void tc_sigframe_put_sigset(const tc_arch *a, uint8_t *p, uint64_t host_set) {
  uint64_t g = tc_xlat_sigset_to_guest(a, host_set);
  if (a->ptr_size == 8) {
    tc_abi_put(a, p, 8, g);
  } else {
    tc_abi_put(a, p, 4, g & 0xffffffffu);
    tc_abi_put(a, p + 4, 4, g >> 32);
  }
}

uint64_t tc_sigframe_get_sigset(const tc_arch *a, const uint8_t *p) {
  uint64_t g = a->ptr_size == 8
                   ? tc_abi_get(a, p, 8)
                   : tc_abi_get(a, p, 4) | tc_abi_get(a, p + 4, 4) << 32;
  return tc_xlat_sigset_to_host(a, g) & ~((1ull << 8) | (1ull << 18));
}

uint64_t tc_sigframe_trampoline(tc_emu *emu, tc_linux_state *st, bool rt,
                                const uint32_t code[4]) {
  const tc_arch *a = emu->arch;
  const tc_region *g = st->sigpage ? tc_emu_region_at(emu, st->sigpage) : NULL;
  if (!g || strcmp(g->name, "[sigpage]") != 0)
    st->sigpage = 0; /* unmapped, or a new image (execve) */
  if (!st->sigpage) {
    uint8_t b[16];
    for (int i = 0; i < 4; i++)
      tc_abi_put(a, b + 4 * i, 4, code[i]);
    uint64_t at = tc_emu_find_free(emu, a->page_size);
    if (!at || tc_emu_map(emu, at, a->page_size, TC_PROT_READ | TC_PROT_EXEC,
                          "[sigpage]", 0) < 0)
      return 0;
    if (tc_emu_write(emu, at, b, sizeof b) < 0)
      return 0;
    st->sigpage = at;
  }
  return st->sigpage + (rt ? 8 : 0);
}

/* glibc always sets sa_restorer on arm and arm64. */
uint64_t tc_sigframe_return_address(tc_emu *emu, tc_linux_state *st, int sig,
                                    bool rt, const uint32_t code[4]) {
  if ((st->sigact[sig].flags & TC_SA_RESTORER) && st->sigact[sig].restorer)
    return st->sigact[sig].restorer;
  return tc_sigframe_trampoline(emu, st, rt, code);
}

void tc_linux_reg_bank(tc_emu *emu, const char *prefix, unsigned width,
                       uint8_t *v, bool save) {
  char n[8];
  for (int i = 0; i < 32; i++) {
    snprintf(n, sizeof n, "%s%d", prefix, i);
    int r = tc_arch_reg_index(emu->arch, n);
    if (r < 0)
      continue;
    if (save)
      tc_emu_read_reg_bytes(emu, r, v + width * i, width);
    else
      tc_emu_write_reg_bytes(emu, r, v + width * i, width);
  }
}

/* Builds the frame, moves the registers to the handler, applies the
 * handler's mask and flags and reports the delivery. -1 if the frame
 * cannot be written (the caller kills with SIGSEGV, as Linux). */
static int deliver(tc_emu *emu, tc_linux_state *st, const tc_sig_desc *d) {
  int sig = d->sig;
  uint64_t handler = st->sigact[sig].handler, flags = st->sigact[sig].flags;
  if (emu->obs.on_signal_frame)
    emu->obs.on_signal_frame(emu->obs.ctx);
  uint64_t frame = 0;
  const tc_linux_arch_ops *ops = tc_linux_arch_of(emu->arch);
  int r = ops->signal_frame ? ops->signal_frame(emu, st, d, &frame) : -1;
  if (r < 0)
    return -1;
  st->sigmask |= st->sigact[sig].mask;
  if (!(flags & TC_SA_NODEFER))
    st->sigmask |= 1ull << (sig - 1);
  if (flags & TC_SA_RESETHAND)
    st->sigact[sig].handler = 0;
  if (emu->obs.on_signal) {
    tc_signal_event ev = {0};
    ev.tid = emu->tid;
    ev.signal = sig;
    ev.code = d->code;
    ev.addr = d->fault ? d->addr : 0;
    if (!d->fault) {
      ev.pid = d->pid ? d->pid : emu->pid;
      ev.uid = TC_GUEST_UID;
    }
    ev.handler = handler;
    ev.frame = frame;
    emu->obs.on_signal(emu->obs.ctx, &ev);
  }
  return 0;
}

/* Called at the end of the syscall that sent the signal (the syscall
 * instruction's own hook: x86-64's RIP is still its address and Unicorn
 * adds its 2 bytes after the hook returns, the arch's syscall_resume_skip;
 * int 0x80, svc and mips' syscall have moved the PC past themselves). */
int tc_signal_deliver(tc_sys_call *c) {
  tc_emu *emu = c->emu;
  tc_linux_state *st = c->st;
  tc_sig_desc d = {0};
  d.sig = st->pending_sig;
  d.code = st->pending_code;
  if (d.sig == 17 && st->chld_code) { /* a child's end */
    d.code = st->chld_code;
    d.pid = st->chld_pid;
    d.has_status = true;
    d.status = st->chld_status;
    st->chld_code = 0;
  }
  d.mask = st->suspend_active ? st->suspend_saved : st->sigmask;
  st->pending_sig = 0;
  uint8_t skip = emu->sys_compat /* int 0x80: past itself already */
                     ? 0
                     : tc_linux_arch_of(emu->arch)->syscall_resume_skip;
  d.resume = tc_emu_reg(emu, emu->arch->pc_reg) + skip;
  d.bias = skip;
  if (deliver(emu, st, &d) < 0) {
    c->action = TC_SYS_ACT_KILL; /* no way to run it: SIGSEGV */
    c->action_arg = 11;
    return -1;
  }
  return 0;
}

bool tc_signal_default_kills(int sig) {
  switch (sig) {
  case 17:        /* SIGCHLD */
  case 18:        /* SIGCONT */
  case 19:        /* SIGSTOP */
  case 20:        /* SIGTSTP */
  case 21:        /* SIGTTIN */
  case 22:        /* SIGTTOU */
  case 23:        /* SIGURG */
  case 28:        /* SIGWINCH */
    return false; /* ignore, or stop (tc_signal_job_stop) */
  default:
    return true;
  }
}

/* A thread the scheduler just switched to runs the handler of a signal
 * aimed at it (tgkill from another thread, or a kill() Linux would give
 * it), at the instruction it was about to run: the interrupted code goes
 * on there when the handler returns; a thread blocked in a syscall has
 * its PC at the trap, so the call runs again. */
void tc_signal_thread_resumed(tc_emu *emu) {
  tc_linux_state *st = tc_linux_state_of(emu);
  if (!st || !tc_signal_can_deliver(emu))
    return;
  uint64_t ready = st->thread_pending & ~st->sigmask;
  if (!ready)
    return;
  int sig = __builtin_ctzll(ready) + 1;
  uint64_t bit = 1ull << (sig - 1);
  tc_sig_desc d = {0};
  d.sig = sig;
  d.code = (st->thread_pending_user & bit) ? 0 : -6; /* SI_USER, SI_TKILL */
  d.mask = st->sigmask;
  st->thread_pending &= ~bit;
  st->thread_pending_user &= ~bit;
  uint64_t h = st->sigact[sig].handler;
  if (h <= 1) { /* the disposition changed since it was sent */
    if (h == 0 && tc_signal_default_kills(sig))
      tc_emu_kill(emu, sig);
    return;
  }
  d.resume = tc_emu_reg(emu, emu->arch->pc_reg);
  if (deliver(emu, st, &d) < 0)
    tc_emu_kill(emu, 11);
}

/* si_code and the x86 exception of a fault, as arch/x86/mm/fault.c and
 * traps.c report them (an undefined instruction: as the arch does). */
static void fault_desc(const tc_arch *arch, const tc_fault_event *f,
                       tc_sig_desc *d) {
  d->fault = true;
  d->addr = f->addr;
  switch (f->kind) {
  case TC_FAULT_UNMAPPED_READ:
  case TC_FAULT_UNMAPPED_WRITE:
  case TC_FAULT_UNMAPPED_FETCH:
  case TC_FAULT_PROT_READ:
  case TC_FAULT_PROT_WRITE:
  case TC_FAULT_PROT_FETCH: {
    bool prot = f->kind >= TC_FAULT_PROT_READ;
    d->code = prot ? 2 /* SEGV_ACCERR */ : 1 /* SEGV_MAPERR */;
    d->trapno = 14;
    d->err =
        4u /* user */ | (prot ? 1u : 0u) |
        (f->kind == TC_FAULT_UNMAPPED_WRITE || f->kind == TC_FAULT_PROT_WRITE
             ? 2u
             : 0u) |
        (f->kind == TC_FAULT_UNMAPPED_FETCH || f->kind == TC_FAULT_PROT_FETCH
             ? 16u
             : 0u);
    break;
  }
  case TC_FAULT_INVALID_INSN:
    d->code = tc_linux_arch_of(arch)->ill_code;
    d->trapno = 6;
    d->addr = d->code == 0x80 ? 0 : f->pc; /* SI_KERNEL: no address */
    break;
  case TC_FAULT_DIVIDE:
    d->code = 1; /* FPE_INTDIV */
    d->trapno = 0;
    d->addr = f->pc;
    break;
  default:          /* general protection: privileged instructions */
    d->code = 0x80; /* SI_KERNEL */
    d->trapno = 13;
    d->addr = 0;
    break;
  }
}

bool tc_linux_fault_handled(tc_emu *emu) {
  if (!emu->faulted || !tc_signal_can_deliver(emu))
    return false;
  tc_linux_state *st = tc_linux_state_of(emu);
  int sig = emu->fault.signal;
  if (!st || sig < 1 || sig > TC_NSIG)
    return false;
  uint64_t h = st->sigact[sig].handler;
  /* Linux forces a blocked or ignored fault signal to its default. */
  return h > 1 && !(st->sigmask & (1ull << (sig - 1)));
}

bool tc_linux_deliver_fault(tc_emu *emu) {
  if (!tc_linux_fault_handled(emu))
    return false;
  tc_linux_state *st = tc_linux_state_of(emu);
  tc_sig_desc d = {0};
  d.sig = emu->fault.signal;
  d.mask = st->sigmask;
  fault_desc(emu->arch, &emu->fault, &d);
  d.resume = emu->fault_resume ? emu->fault_resume : emu->fault.pc;
  if (emu->fault_resume && emu->fault_debug) {
    /* exc_debug_user: send_sigtrap(TRAP_BRKPT), si_addr = the ip after */
    d.trapno = 1;
    d.code = 1; /* TRAP_BRKPT */
    d.err = 0;
    d.addr = emu->fault_resume;
  } else if (emu->fault_resume) {
    d.trapno = 3; /* do_int3: SIGTRAP, SI_KERNEL, no address */
    d.addr = 0;
  }
  emu->fault_resume = 0;
  emu->fault_debug = false;
  /* The frame saves the faulting instruction as the place to go on (arm:
   * a PC write takes Thumb from bit 0, so the bit keeps the state). */
  tc_emu_set_reg(emu, emu->arch->pc_reg,
                 d.resume | (tc_emu_thumb(emu) ? 1 : 0));
  if (deliver(emu, st, &d) < 0)
    return false;
  emu->faulted = false;
  emu->exited = false;
  emu->exit_signal = 0;
  emu->exit_code = 0;
  return true;
}

/* rt_sigreturn: the handler returned through its return address, whose
 * syscall finds the frame (the arch's rt_sigreturn knows where). */
int64_t tc_sys_rt_sigreturn(tc_sys_call *c) {
  c->no_return = true; /* every register comes from the frame */
  if (!tc_signal_can_deliver(c->emu)) {
    c->action = TC_SYS_ACT_KILL;
    c->action_arg = 11;
    return -ENOSYS;
  }
  int64_t r = tc_linux_arch_of(c->emu->arch)->rt_sigreturn(c);
  if (r < 0) {
    c->action = TC_SYS_ACT_KILL; /* a bad frame: SIGSEGV, as Linux */
    c->action_arg = 11;
  }
  return r;
}

/* ------------------------------------------------- timers and waiting */

#define NS_PER_S 1000000000ull
enum { SIGALRM_V = 14, SI_KERNEL_V = 0x80 };

/* A signal the kernel raises for the process (timer expiry): delivered
 * at the end of this syscall, kept pending while blocked, or its default
 * action (SIGALRM: terminate). */
static void raise_self(tc_sys_call *c, int sig, int code) {
  tc_linux_state *st = c->st;
  uint64_t h = st->sigact[sig].handler;
  if (h == 1)
    return; /* SIG_IGN */
  if (st->sigmask & (1ull << (sig - 1))) {
    st->pending_set |= 1ull << (sig - 1);
    st->pending_set_code[sig] = code;
    tc_thread_wake_sigwaiters(c->emu, sig);
    return;
  }
  if (h == 0) {
    c->action = TC_SYS_ACT_KILL;
    c->action_arg = sig;
    return;
  }
  if (!st->pending_sig) {
    st->pending_sig = sig;
    st->pending_code = code;
  }
}

static void timer_check(tc_sys_call *c) {
  tc_linux_state *st = c->st;
  uint64_t now = c->emu->clock_ns;
  if (!st->timer_deadline || now < st->timer_deadline)
    return;
  if (st->timer_interval) {
    uint64_t late = (now - st->timer_deadline) / st->timer_interval + 1;
    st->timer_deadline += late * st->timer_interval;
  } else {
    st->timer_deadline = 0;
  }
  raise_self(c, SIGALRM_V, SI_KERNEL_V);
}

void tc_signal_syscall_end(tc_sys_call *c) {
  tc_linux_state *st = c->st;
  if (c->action == TC_SYS_ACT_NONE)
    timer_check(c);
  if (!st->pending_sig && c->action == TC_SYS_ACT_NONE) {
    /* the thread's own signals first, as Linux dequeues them */
    uint64_t mine = st->thread_pending & ~st->sigmask;
    uint64_t ready = mine ? mine : st->pending_set & ~st->sigmask;
    if (ready) {
      int sig = __builtin_ctzll(ready) + 1;
      uint64_t bit = 1ull << (sig - 1);
      int code = st->pending_set_code[sig];
      if (mine) {
        code = (st->thread_pending_user & bit) ? 0 : -6;
        st->thread_pending &= ~bit;
        st->thread_pending_user &= ~bit;
      } else {
        st->pending_set &= ~bit;
      }
      uint64_t h = st->sigact[sig].handler;
      if (h > 1 && tc_signal_can_deliver(c->emu)) {
        st->pending_sig = sig;
        st->pending_code = code;
      } else if (h == 0 && tc_signal_default_kills(sig)) {
        c->action = TC_SYS_ACT_KILL;
        c->action_arg = sig;
      } else if (h == 0 && sig >= 19 && sig <= 22) {
        tc_signal_job_stop(c, sig); /* a stop signal, unblocked */
      }
    }
  }
  bool delivered = false;
  if (st->pending_sig && c->action == TC_SYS_ACT_NONE)
    delivered = tc_signal_deliver(c) == 0;
  if (st->suspend_active) {
    /* delivered: the frame saved the old mask, sigreturn restores it;
     * else the old mask is back now */
    if (!delivered)
      st->sigmask = st->suspend_saved;
    st->suspend_active = false;
  }
  st->pending_sig = 0;
}

static uint64_t timer_left(tc_linux_state *st, uint64_t now) {
  return st->timer_deadline > now ? st->timer_deadline - now : 0;
}

int64_t tc_sys_alarm(tc_sys_call *c) {
  tc_linux_state *st = c->st;
  uint64_t now = c->emu->clock_ns;
  uint64_t left = st->timer_deadline ? timer_left(st, now) : 0;
  /* Linux rounds to the nearest second, and never reports 0 for a
   * pending alarm. */
  int64_t prev =
      st->timer_deadline ? (int64_t)((left + NS_PER_S / 2) / NS_PER_S) : 0;
  if (st->timer_deadline && prev == 0)
    prev = 1;
  uint32_t secs = (uint32_t)c->a[0];
  st->timer_deadline = secs ? now + secs * NS_PER_S : 0;
  st->timer_interval = 0;
  return prev;
}

/* struct itimerval: it_interval, it_value, each {tv_sec, tv_usec} longs. */
static int put_itimer(tc_sys_call *c, uint64_t at) {
  tc_linux_state *st = c->st;
  unsigned l = c->emu->arch->ptr_size;
  uint64_t left = st->timer_deadline ? timer_left(st, c->emu->clock_ns) : 0;
  if (st->timer_deadline && left == 0)
    left = 1000; /* due: 1 µs, as Linux shows an expiring timer */
  uint64_t v[4] = {st->timer_interval / NS_PER_S,
                   st->timer_interval % NS_PER_S / 1000, left / NS_PER_S,
                   (left % NS_PER_S + 999) / 1000};
  if (v[3] == 1000000) {
    v[2]++;
    v[3] = 0;
  }
  for (int i = 0; i < 4; i++) {
    int r = tc_sys_put_uint(c->emu, at + i * l, l, v[i]);
    if (r < 0)
      return r;
  }
  return 0;
}

int64_t tc_sys_getitimer(tc_sys_call *c) {
  int which = (int)c->a[0];
  if (which < 0 || which > 2)
    return -EINVAL;
  if (which != 0) { /* ITIMER_VIRTUAL/PROF: never armed here */
    unsigned l = c->emu->arch->ptr_size;
    for (int i = 0; i < 4; i++) {
      int r = tc_sys_put_uint(c->emu, c->a[1] + i * l, l, 0);
      if (r < 0)
        return r;
    }
    return 0;
  }
  return put_itimer(c, c->a[1]);
}

int64_t tc_sys_setitimer(tc_sys_call *c) {
  tc_linux_state *st = c->st;
  int which = (int)c->a[0];
  unsigned l = c->emu->arch->ptr_size;
  if (which < 0 || which > 2)
    return -EINVAL;
  uint64_t v[4] = {0, 0, 0, 0};
  if (c->a[1])
    for (int i = 0; i < 4; i++) {
      int r = tc_sys_get_uint(c->emu, c->a[1] + i * l, l, &v[i]);
      if (r < 0)
        return r;
    }
  for (int i = 1; i < 4; i += 2)
    if (v[i] >= 1000000)
      return -EINVAL;
  if (which != 0) {
    /* CPU-time timers: tracecorn has no per-process CPU clock to run
     * them on; refused rather than silently never firing. */
    return v[2] || v[3] ? -EINVAL : 0;
  }
  if (c->a[2]) {
    int r = put_itimer(c, c->a[2]);
    if (r < 0)
      return r;
  }
  /* a hostile tv_sec must not wrap the deadline: past ~146 years it is
   * "never" for any recording */
  const uint64_t max_s = UINT64_MAX / NS_PER_S / 4;
  for (int i = 0; i < 4; i += 2)
    if (v[i] > max_s)
      v[i] = max_s;
  uint64_t value = v[2] * NS_PER_S + v[3] * 1000;
  st->timer_deadline = value ? c->emu->clock_ns + value : 0;
  st->timer_interval = value ? v[0] * NS_PER_S + v[1] * 1000 : 0;
  return 0;
}

/* Waiting for a signal: the only thing that can come is the timer (one
 * thread, no other process), so the virtual clock jumps to it. */
int64_t tc_signal_wait(tc_sys_call *c, const char *what) {
  tc_linux_state *st = c->st;
  if ((st->pending_set | st->thread_pending) & ~st->sigmask)
    return -EINTR;
  uint64_t alrm = 1ull << (SIGALRM_V - 1);
  if (st->timer_deadline && st->sigact[SIGALRM_V].handler != 1 &&
      !(st->sigmask & alrm)) {
    if (c->emu->clock_ns < st->timer_deadline)
      c->emu->clock_ns = st->timer_deadline;
    return -EINTR;
  }
  /* another thread may send one: wait for it (the call runs again) */
  if (tc_thread_wait_signal(c, st->sigmask))
    return 0;
  if (!c->emu->opt.quiet)
    tc_notice("%s would wait forever (no timer armed and no other "
              "thread or process to send a signal); returning -EINTR",
              what);
  return -EINTR;
}

int64_t tc_sys_pause(tc_sys_call *c) { return tc_signal_wait(c, "pause"); }

/* A sigset_t argument: the guest's longs in its byte order and numbering,
 * as the host numbers it. */
static int read_sigset(tc_sys_call *c, uint64_t addr, uint64_t *set) {
  const tc_arch *a = c->emu->arch;
  uint8_t buf[8];
  int r = tc_sys_read(c->emu, addr, buf, sizeof buf);
  if (r < 0)
    return r;
  uint64_t g = a->ptr_size == 8
                   ? tc_abi_get(a, buf, 8)
                   : tc_abi_get(a, buf, 4) | tc_abi_get(a, buf + 4, 4) << 32;
  *set = tc_xlat_sigset_to_host(a, g);
  return 0;
}

/* rt_sigpending: the signals pending for the thread or the process that
 * it blocks. */
int64_t tc_sys_rt_sigpending(tc_sys_call *c) {
  const tc_arch *a = c->emu->arch;
  unsigned ss = tc_xlat_sigset_size(a);
  if (c->a[1] > ss)
    return -EINVAL;
  uint8_t buf[16] = {0};
  tc_sigframe_put_sigset(
      a, buf, (c->st->pending_set | c->st->thread_pending) & c->st->sigmask);
  return tc_sys_write(c->emu, c->a[0], buf, (size_t)c->a[1]);
}

/* Takes the lowest pending signal of `set` (the thread's own first): its
 * number, or 0. */
static int dequeue(tc_linux_state *st, uint64_t set, int *code) {
  uint64_t mine = st->thread_pending & set;
  uint64_t ready = mine ? mine : st->pending_set & set;
  if (!ready)
    return 0;
  int sig = __builtin_ctzll(ready) + 1;
  uint64_t bit = 1ull << (sig - 1);
  if (mine) {
    *code = (st->thread_pending_user & bit) ? 0 : -6;
    st->thread_pending &= ~bit;
    st->thread_pending_user &= ~bit;
  } else {
    *code = st->pending_set_code[sig];
    st->pending_set &= ~bit;
  }
  return sig;
}

/* rt_sigtimedwait(set, info, timeout, sigsetsize) (sigwait, sigwaitinfo,
 * sigtimedwait): a pending signal of set is taken without running its
 * handler; else the timer's SIGALRM if it comes first (the clock jumps
 * to it), the timeout (the clock advances; -EAGAIN), another thread's
 * signal (the thread waits), or a notice and -EAGAIN when nothing can
 * come. */
static int64_t sigtimedwait_common(tc_sys_call *c, bool time64) {
  tc_emu *emu = c->emu;
  tc_linux_state *st = c->st;
  if (c->a[3] != tc_xlat_sigset_size(emu->arch))
    return -EINVAL;
  uint64_t set;
  int r = read_sigset(c, c->a[0], &set);
  if (r < 0)
    return r;
  set &= ~((1ull << 8) | (1ull << 18));
  uint64_t ns = UINT64_MAX;
  if (c->a[2] && (r = tc_sys_read_timespec_ns(c, c->a[2], time64, &ns)) < 0)
    return r;
  int code = 0, sig = dequeue(st, set, &code);
  uint64_t alrm = 1ull << (SIGALRM_V - 1);
  if (!sig && st->timer_deadline && (set & alrm) &&
      (ns == UINT64_MAX || st->timer_deadline <= emu->clock_ns + ns)) {
    if (emu->clock_ns < st->timer_deadline)
      emu->clock_ns = st->timer_deadline;
    if (st->timer_interval)
      st->timer_deadline += st->timer_interval;
    else
      st->timer_deadline = 0;
    sig = SIGALRM_V;
    code = SI_KERNEL_V;
  }
  if (sig) {
    if (c->a[1]) {
      uint8_t si[128];
      memset(si, 0, sizeof si);
      tc_sig_desc d = {.sig = sig, .code = code, .fault = code == SI_KERNEL_V};
      tc_sigframe_put_siginfo(emu, si, &d);
      if ((r = tc_sys_write(emu, c->a[1], si, sizeof si)) < 0)
        return r;
    }
    return tc_xlat_signal_to_guest(emu->arch, sig);
  }
  if (ns != UINT64_MAX) {
    emu->clock_ns += ns;
    return -EAGAIN;
  }
  if (tc_thread_wait_signal(c, st->sigmask & ~set))
    return 0;
  if (!emu->opt.quiet)
    tc_notice("%s would wait forever (nothing pending, no timer and "
              "no other thread to send a signal); returning -EAGAIN",
              c->name ? c->name : "rt_sigtimedwait");
  return -EAGAIN;
}

int64_t tc_sys_rt_sigtimedwait(tc_sys_call *c) {
  return sigtimedwait_common(c, false);
}
int64_t tc_sys_rt_sigtimedwait_time64(tc_sys_call *c) {
  return sigtimedwait_common(c, true);
}

int64_t tc_sys_rt_sigsuspend(tc_sys_call *c) {
  tc_linux_state *st = c->st;
  const tc_arch *arch = c->emu->arch;
  if (c->a[1] != tc_xlat_sigset_size(arch))
    return -EINVAL;
  uint64_t m;
  int r = read_sigset(c, c->a[0], &m);
  if (r < 0)
    return r;
  st->suspend_saved = st->sigmask;
  st->suspend_active = true;
  st->sigmask = m & ~((1ull << 8) | (1ull << 18));
  r = (int)tc_signal_wait(c, "sigsuspend");
  if (c->restart) {
    /* waiting for another thread with this mask; the call runs again */
    st->sigmask = st->suspend_saved;
    st->suspend_active = false;
  }
  /* Not delivered (nothing came): the old mask is back at once. */
  return r;
}

uint64_t tc_signal_sleep_ns(tc_sys_call *c, uint64_t ns, bool *interrupted) {
  tc_linux_state *st = c->st;
  uint64_t now = c->emu->clock_ns;
  *interrupted = false;
  if (!st->timer_deadline || st->sigact[SIGALRM_V].handler == 1 ||
      (st->sigmask & (1ull << (SIGALRM_V - 1))) ||
      st->timer_deadline >= now + ns)
    return ns;
  *interrupted = true;
  return timer_left(st, now);
}
