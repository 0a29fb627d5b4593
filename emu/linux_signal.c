/* Signal delivery to guest handlers and rt_sigreturn, as Linux does it
 * (arch/x86/kernel/signal.c), x86-64 for now: a signal sent to the process
 * itself (kill, tkill, tgkill, raise) with a handler installed is delivered
 * when the syscall that sent it returns. The frame the kernel builds
 * (return address = sa_restorer, ucontext with the interrupted registers
 * and mask, siginfo, an fxsave-layout FP area) is written to the guest
 * stack like any kernel write, so every format records it. i386 has its
 * own frame (arch/x86/kernel/signal_32.c); other arches keep the notice
 * (linux_sys_misc.c) until their frames are done. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "emu/emu.h"
#include "emu/linux_abi.h"
#include "emu/linux_sys.h"
#include "emu/linux_xlat.h"

#define SA_ONSTACK_V 0x08000000u
#define SA_RESETHAND_V 0x80000000u
#define SA_NODEFER_V 0x40000000u
#define SA_RESTORER_V 0x04000000u
#define SS_ONSTACK_V 1
#define SS_DISABLE_V 2

/* One delivery: what the frame says and where the interrupted code goes
 * on. */
typedef struct sig_desc {
  int sig, code;
  bool fault;      /* si_addr instead of si_pid/si_uid */
  uint64_t addr;   /* si_addr, cr2 */
  uint32_t trapno; /* x86 exception vector of a fault */
  uint32_t err;    /* its error code (page faults) */
  uint64_t resume; /* the interrupted pc saved in the frame */
  uint64_t mask;   /* the mask the frame saves (sigreturn restores it) */
  uint64_t bias;   /* subtracted from the handler address written to the
                      pc (x86-64 syscall hook: Unicorn adds 2 after it) */
} sig_desc;

/* struct rt_sigframe (x86-64): pretcode, ucontext, siginfo. */
enum {
  UC_OFF = 8,       /* ucontext */
  UC_STACK = 16,    /* uc_stack: ss_sp, ss_flags, ss_size */
  UC_MCTX = 40,     /* struct sigcontext (256 bytes) */
  UC_SIGMASK = 296, /* uc_sigmask */
  UC_SIZE = 304,    /* the kernel's struct ucontext */
  INFO_OFF = 8 + UC_SIZE,
  FRAME_SIZE = INFO_OFF + 128,
  FXSAVE_SIZE = 512
};

/* sigcontext order: r8..r15, rdi, rsi, rbp, rbx, rdx, rax, rcx, rsp, rip,
 * eflags, then cs/gs/fs/ss, err, trapno, oldmask, cr2, fpstate. */
static const char *const mctx_regs[] = {
    "r8",  "r9",  "r10", "r11", "r12", "r13", "r14", "r15", "rdi",
    "rsi", "rbp", "rbx", "rdx", "rax", "rcx", "rsp", "rip", "rflags"};
#define N_MCTX (sizeof mctx_regs / sizeof *mctx_regs)
enum { MCTX_FPSTATE = 8 * 23 };

/* By name; a register the arch lacks reads 0 and ignores writes (one
 * frame code serves x86-64 and i386). */
static uint64_t reg(tc_emu *emu, const char *name) {
  int r = tc_arch_reg_index(emu->arch, name);
  return r < 0 ? 0 : tc_emu_reg(emu, r);
}
static void set(tc_emu *emu, const char *name, uint64_t v) {
  int r = tc_arch_reg_index(emu->arch, name);
  if (r >= 0)
    tc_emu_set_reg(emu, r, v);
}

static void put64(uint8_t *p, uint64_t v) {
  for (int i = 0; i < 8; i++)
    p[i] = (uint8_t)(v >> (8 * i));
}
static uint64_t get64(const uint8_t *p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; i++)
    v |= (uint64_t)p[i] << (8 * i);
  return v;
}

/* The FP/SSE registers held in the fxsave area, with their offsets: one
 * table read one way to save and the other to restore. */
static void fx_regs(tc_emu *emu, uint8_t *fx, bool save) {
  char n[8];
  for (int i = 0; i < 8 + 16; i++) {
    bool st = i < 8;
    snprintf(n, sizeof n, st ? "st%d" : "xmm%d", st ? i : i - 8);
    int r = tc_arch_reg_index(emu->arch, n); /* i386: xmm8-15 absent */
    uint8_t *at = st ? fx + 32 + 16 * i : fx + 160 + 16 * (i - 8);
    if (save)
      tc_emu_read_reg_bytes(emu, r, at, st ? 10 : 16);
    else
      tc_emu_write_reg_bytes(emu, r, at, st ? 10 : 16);
  }
}

/* The FP/SSE state in fxsave layout: fcw@0, fsw@2, mxcsr@24, st0-7@32
 * (16 bytes each), xmm0-15@160. */
static void fx_save(tc_emu *emu, uint8_t *fx) {
  memset(fx, 0, FXSAVE_SIZE);
  uint64_t fcw = reg(emu, "fpcw"), fsw = reg(emu, "fpsw");
  fx[0] = (uint8_t)fcw, fx[1] = (uint8_t)(fcw >> 8);
  fx[2] = (uint8_t)fsw, fx[3] = (uint8_t)(fsw >> 8);
  uint64_t mx = reg(emu, "mxcsr");
  for (int i = 0; i < 4; i++)
    fx[24 + i] = (uint8_t)(mx >> (8 * i));
  fx[28] = 0xff, fx[29] = 0xff; /* mxcsr_mask */
  fx_regs(emu, fx, true);
}

static void fx_restore(tc_emu *emu, const uint8_t *fx) {
  set(emu, "fpcw", (uint64_t)fx[0] | (uint64_t)fx[1] << 8);
  set(emu, "fpsw", (uint64_t)fx[2] | (uint64_t)fx[3] << 8);
  uint64_t mx = 0;
  for (int i = 0; i < 4; i++)
    mx |= (uint64_t)fx[24 + i] << (8 * i);
  set(emu, "mxcsr", mx & 0xffff);
  fx_regs(emu, (uint8_t *)fx, false); /* only read when restoring */
}

bool tc_signal_can_deliver(const tc_emu *emu) {
  return emu->arch->id == TC_ARCH_X86_64 || emu->arch->id == TC_ARCH_X86;
}

/* ------------------------------------------------------------- i386 */

/* struct rt_sigframe (ia32): pretcode, sig, pinfo, puc, siginfo,
 * ucontext (flags, link, stack, sigcontext, sigmask), retcode. */
enum {
  I_INFO = 16,
  I_UC = 144,
  I_UC_STACK = 8,
  I_MCTX = 20, /* in the ucontext: struct sigcontext_32, 88 bytes */
  I_SIGMASK = 108,
  I_UC_SIZE = 116,
  I_FRAME = I_UC + I_UC_SIZE + 8
};
/* sigcontext_32 from offset 16: edi esi ebp esp ebx edx ecx eax, then
 * trapno err eip cs eflags esp_at_signal ss fpstate oldmask cr2 */
static const char *const i_regs[] = {"edi", "esi", "ebp", "esp",
                                     "ebx", "edx", "ecx", "eax"};

static void put32(uint8_t *p, uint32_t v) { memcpy(p, &v, 4); }
static uint32_t get32(const uint8_t *p) {
  uint32_t v;
  memcpy(&v, p, 4);
  return v;
}

/* Without SA_SIGINFO i386 uses the legacy frame (glibc's restorer then
 * calls sigreturn, not rt_sigreturn): pretcode, sig, sigcontext, an
 * unused _fpstate_32, extramask, retcode. */
enum { L_SC = 8, L_EXTRAMASK = 8 + 88 + 624, L_FRAME = L_EXTRAMASK + 4 + 8 };

static void fill_sigcontext_32(tc_emu *emu, uint8_t *m, uint32_t fp,
                               uint64_t mask, const sig_desc *d) {
  put32(m + 0, (uint32_t)reg(emu, "gs"));
  put32(m + 4, (uint32_t)reg(emu, "fs"));
  put32(m + 8, (uint32_t)reg(emu, "es"));
  put32(m + 12, (uint32_t)reg(emu, "ds"));
  for (int i = 0; i < 8; i++)
    put32(m + 16 + 4 * i, (uint32_t)reg(emu, i_regs[i]));
  put32(m + 48, d->trapno);
  put32(m + 52, d->err);
  put32(m + 56, (uint32_t)d->resume);
  put32(m + 60, (uint32_t)reg(emu, "cs"));
  put32(m + 64, (uint32_t)reg(emu, "eflags"));
  put32(m + 68, (uint32_t)reg(emu, "esp"));
  put32(m + 72, (uint32_t)reg(emu, "ss") | 3); /* RPL 3, as Linux */
  put32(m + 76, fp);
  put32(m + 80, (uint32_t)mask);
  put32(m + 84, d->fault ? (uint32_t)d->addr : 0); /* cr2 */
}

static void restore_sigcontext_32(tc_emu *emu, const uint8_t *m) {
  for (int i = 0; i < 8; i++)
    set(emu, i_regs[i], get32(m + 16 + 4 * i));
  set(emu, "eip", get32(m + 56));
  set(emu, "eflags",
      (reg(emu, "eflags") & ~(uint64_t)0x50dd5) | (get32(m + 64) & 0x50dd5));
  uint8_t fx[FXSAVE_SIZE];
  uint32_t fp = get32(m + 76);
  if (fp && tc_emu_read(emu, fp, fx, sizeof fx) == 0)
    fx_restore(emu, fx);
}

/* int 0x80 has already moved EIP past itself when its hook runs: what
 * is written to EIP here is where execution goes on. */
static int deliver_i386(tc_emu *emu, tc_linux_state *st, const sig_desc *d,
                        uint64_t *frame_at) {
  int sig = d->sig;
  uint64_t flags = st->sigact[sig].flags;
  uint32_t sp = (uint32_t)reg(emu, "esp");
  bool on_alt = st->altstack_size && sp > st->altstack_sp &&
                sp <= st->altstack_sp + st->altstack_size;
  if ((flags & SA_ONSTACK_V) && st->altstack_size && !on_alt &&
      !(st->altstack_flags & SS_DISABLE_V))
    sp = (uint32_t)(st->altstack_sp + st->altstack_size);
  uint32_t fp = (sp - FXSAVE_SIZE) & ~63u;
  uint8_t fx[FXSAVE_SIZE];
  fx_save(emu, fx);
  if (!(flags & 4u)) { /* no SA_SIGINFO: the legacy frame */
    uint8_t l[L_FRAME];
    uint32_t lframe = ((fp - L_FRAME + 4) & ~15u) - 4;
    memset(l, 0, sizeof l);
    put32(l, (uint32_t)st->sigact[sig].restorer);
    put32(l + 4, (uint32_t)sig);
    fill_sigcontext_32(emu, l + L_SC, fp, d->mask, d);
    put32(l + L_EXTRAMASK, (uint32_t)(d->mask >> 32));
    if (!(flags & SA_RESTORER_V) || tc_emu_write(emu, fp, fx, sizeof fx) < 0 ||
        tc_emu_write(emu, lframe, l, sizeof l) < 0)
      return -1;
    set(emu, "eax", (uint64_t)sig);
    set(emu, "edx", 0);
    set(emu, "ecx", 0);
    set(emu, "esp", lframe);
    set(emu, "eflags", reg(emu, "eflags") & ~(uint64_t)0x10500);
    set(emu, "eip", st->sigact[sig].handler);
    *frame_at = lframe;
    return 0;
  }
  uint32_t frame = ((fp - I_FRAME + 4) & ~15u) - 4; /* (esp+4) % 16 == 0 */
  uint8_t f[I_FRAME];
  memset(f, 0, sizeof f);
  put32(f, (uint32_t)st->sigact[sig].restorer);
  put32(f + 4, (uint32_t)sig);
  put32(f + 8, frame + I_INFO);
  put32(f + 12, frame + I_UC);
  int32_t v[3] = {sig, 0, d->code};
  memcpy(f + I_INFO, v, sizeof v);
  if (d->fault) {
    put32(f + I_INFO + 12, (uint32_t)d->addr);
  } else {
    put32(f + I_INFO + 12, emu->pid);
    put32(f + I_INFO + 16, TC_GUEST_UID);
  }
  uint8_t *uc = f + I_UC;
  put32(uc + I_UC_STACK, (uint32_t)st->altstack_sp);
  put32(uc + I_UC_STACK + 4,
        st->altstack_size ? (on_alt ? SS_ONSTACK_V : 0) : SS_DISABLE_V);
  put32(uc + I_UC_STACK + 8, (uint32_t)st->altstack_size);
  fill_sigcontext_32(emu, uc + I_MCTX, fp, d->mask, d);
  put64(uc + I_SIGMASK, d->mask);
  if (!(flags & SA_RESTORER_V) || tc_emu_write(emu, fp, fx, sizeof fx) < 0 ||
      tc_emu_write(emu, frame, f, sizeof f) < 0)
    return -1;
  set(emu, "eax", (uint64_t)sig);
  set(emu, "edx", frame + I_INFO);
  set(emu, "ecx", frame + I_UC);
  set(emu, "esp", frame);
  set(emu, "eflags", reg(emu, "eflags") & ~(uint64_t)0x10500);
  set(emu, "eip", st->sigact[sig].handler);
  *frame_at = frame;
  return 0;
}

static int64_t sigreturn_i386(tc_sys_call *c) {
  tc_emu *emu = c->emu;
  uint8_t uc[I_UC_SIZE];
  uint32_t frame = (uint32_t)reg(emu, "esp") - 4; /* ret popped pretcode */
  if (tc_sys_read(emu, frame + I_UC, uc, sizeof uc) < 0)
    return -EFAULT;
  restore_sigcontext_32(emu, uc + I_MCTX);
  c->st->sigmask = get64(uc + I_SIGMASK) & ~((1ull << 8) | (1ull << 18));
  return 0;
}

/* sigreturn (i386, legacy frame): glibc's __restore popped the signal
 * number, so the frame starts 8 bytes below esp. */
int64_t tc_sys_sigreturn(tc_sys_call *c) {
  tc_emu *emu = c->emu;
  c->no_return = true;
  uint8_t l[L_FRAME];
  uint32_t frame = (uint32_t)reg(emu, "esp") - 8;
  if (emu->arch->id != TC_ARCH_X86 ||
      tc_sys_read(emu, frame, l, sizeof l) < 0) {
    c->action = TC_SYS_ACT_KILL;
    c->action_arg = 11;
    return -EFAULT;
  }
  restore_sigcontext_32(emu, l + L_SC);
  c->st->sigmask =
      ((uint64_t)get32(l + L_EXTRAMASK) << 32 | get32(l + L_SC + 80)) &
      ~((1ull << 8) | (1ull << 18));
  return 0;
}

static int deliver_x86_64(tc_emu *emu, tc_linux_state *st, const sig_desc *d,
                          uint64_t *frame_at) {
  int sig = d->sig;
  uint64_t sp = reg(emu, "rsp");
  uint64_t flags = st->sigact[sig].flags;
  bool on_alt = st->altstack_size && sp > st->altstack_sp &&
                sp <= st->altstack_sp + st->altstack_size;
  if ((flags & SA_ONSTACK_V) && st->altstack_size && !on_alt &&
      !(st->altstack_flags & SS_DISABLE_V))
    sp = st->altstack_sp + st->altstack_size;
  else
    sp -= 128; /* the red zone */
  /* the FP area (64-byte aligned), then the frame, rsp+8 16-aligned */
  uint64_t fp = (sp - FXSAVE_SIZE) & ~(uint64_t)63;
  uint64_t frame = ((fp - FRAME_SIZE) & ~(uint64_t)15) - 8;
  uint8_t f[FRAME_SIZE], fx[FXSAVE_SIZE];
  memset(f, 0, sizeof f);
  put64(f, st->sigact[sig].restorer);
  uint8_t *uc = f + UC_OFF;
  put64(uc + UC_STACK, st->altstack_sp);
  uint32_t ssf = st->altstack_size ? (on_alt ? SS_ONSTACK_V : 0) : SS_DISABLE_V;
  memcpy(uc + UC_STACK + 8, &ssf, 4);
  put64(uc + UC_STACK + 16, st->altstack_size);
  for (size_t i = 0; i < N_MCTX; i++)
    put64(uc + UC_MCTX + 8 * i, i == 16 ? d->resume : reg(emu, mctx_regs[i]));
  put64(uc + UC_MCTX + 8 * 18, 0x2b000000000033ull); /* ss, fs, gs, cs */
  put64(uc + UC_MCTX + 8 * 19, d->err);
  put64(uc + UC_MCTX + 8 * 20, d->trapno);
  put64(uc + UC_MCTX + 8 * 21, d->mask & 0xffffffffu);  /* oldmask */
  put64(uc + UC_MCTX + 8 * 22, d->fault ? d->addr : 0); /* cr2 */
  put64(uc + UC_MCTX + MCTX_FPSTATE, fp);
  put64(uc + UC_SIGMASK, d->mask);
  uint8_t *si = f + INFO_OFF;
  int32_t v[4] = {sig, 0, d->code, 0};
  memcpy(si, v, sizeof v);
  if (d->fault) {
    put64(si + 16, d->addr);
  } else {
    uint32_t pid = emu->pid, uid = TC_GUEST_UID;
    memcpy(si + 16, &pid, 4);
    memcpy(si + 20, &uid, 4);
  }
  fx_save(emu, fx);
  if (!(flags & SA_RESTORER_V) || tc_emu_write(emu, fp, fx, sizeof fx) < 0 ||
      tc_emu_write(emu, frame, f, sizeof f) < 0)
    return -1;
  set(emu, "rdi", (uint64_t)sig);
  set(emu, "rsi", frame + INFO_OFF);
  set(emu, "rdx", frame + UC_OFF);
  set(emu, "rax", 0);
  set(emu, "rsp", frame);
  set(emu, "rflags", reg(emu, "rflags") & ~(uint64_t)0x10500); /* DF RF TF */
  set(emu, "rip", st->sigact[sig].handler - d->bias);
  *frame_at = frame;
  return 0;
}

/* Builds the frame, moves the registers to the handler, applies the
 * handler's mask and flags and reports the delivery. -1 if the frame
 * cannot be written (the caller kills with SIGSEGV, as Linux). */
static int deliver(tc_emu *emu, tc_linux_state *st, const sig_desc *d) {
  int sig = d->sig;
  uint64_t handler = st->sigact[sig].handler, flags = st->sigact[sig].flags;
  if (emu->obs.on_signal_frame)
    emu->obs.on_signal_frame(emu->obs.ctx);
  uint64_t frame = 0;
  int r = emu->arch->id == TC_ARCH_X86 ? deliver_i386(emu, st, d, &frame)
                                       : deliver_x86_64(emu, st, d, &frame);
  if (r < 0)
    return -1;
  st->sigmask |= st->sigact[sig].mask;
  if (!(flags & SA_NODEFER_V))
    st->sigmask |= 1ull << (sig - 1);
  if (flags & SA_RESETHAND_V)
    st->sigact[sig].handler = 0;
  if (emu->obs.on_signal) {
    tc_signal_event ev = {0};
    ev.tid = emu->tid;
    ev.signal = sig;
    ev.code = d->code;
    ev.addr = d->fault ? d->addr : 0;
    if (!d->fault) {
      ev.pid = emu->pid;
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
 * adds its 2 bytes after the hook returns; int 0x80 has moved EIP past
 * itself already). */
int tc_signal_deliver(tc_sys_call *c) {
  tc_emu *emu = c->emu;
  tc_linux_state *st = c->st;
  sig_desc d = {0};
  d.sig = st->pending_sig;
  d.code = st->pending_code;
  d.mask = st->suspend_active ? st->suspend_saved : st->sigmask;
  st->pending_sig = 0;
  if (emu->arch->id == TC_ARCH_X86) {
    d.resume = reg(emu, "eip");
  } else {
    d.resume = reg(emu, "rip") + 2;
    d.bias = 2;
  }
  if (deliver(emu, st, &d) < 0) {
    c->action = TC_SYS_ACT_KILL; /* no way to run it: SIGSEGV */
    c->action_arg = 11;
    return -1;
  }
  return 0;
}

/* si_code and the x86 exception of a fault, as arch/x86/mm/fault.c and
 * traps.c report them. */
static void fault_desc(const tc_fault_event *f, sig_desc *d) {
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
    d->code = 2; /* ILL_ILLOPN */
    d->trapno = 6;
    d->addr = f->pc;
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
  sig_desc d = {0};
  d.sig = emu->fault.signal;
  d.mask = st->sigmask;
  fault_desc(&emu->fault, &d);
  d.resume = emu->fault.pc;
  /* The frame saves the faulting instruction as the place to go on. */
  tc_emu_set_reg(emu, emu->arch->pc_reg, d.resume);
  if (deliver(emu, st, &d) < 0)
    return false;
  emu->faulted = false;
  emu->exited = false;
  emu->exit_signal = 0;
  emu->exit_code = 0;
  return true;
}

/* rt_sigreturn: the handler returned through sa_restorer, whose syscall
 * finds the ucontext at rsp (the handler's `ret` popped pretcode). */
int64_t tc_sys_rt_sigreturn(tc_sys_call *c) {
  tc_emu *emu = c->emu;
  if (!tc_signal_can_deliver(emu)) {
    c->action = TC_SYS_ACT_KILL;
    c->action_arg = 11;
    c->no_return = true;
    return -ENOSYS;
  }
  uint8_t uc[UC_SIZE], fx[FXSAVE_SIZE];
  c->no_return = true; /* every register comes from the frame */
  if (emu->arch->id == TC_ARCH_X86) {
    int64_t r = sigreturn_i386(c);
    if (r < 0) {
      c->action = TC_SYS_ACT_KILL;
      c->action_arg = 11;
    }
    return r;
  }
  uint64_t at = reg(emu, "rsp"); /* x86-64 only: i386 has no rsp */
  if (tc_sys_read(emu, at, uc, sizeof uc) < 0) {
    c->action = TC_SYS_ACT_KILL; /* a bad frame: SIGSEGV, as Linux */
    c->action_arg = 11;
    return -EFAULT;
  }
  for (size_t i = 0; i < N_MCTX; i++) {
    uint64_t v = get64(uc + UC_MCTX + 8 * i);
    if (i == 16)
      v -= 2;         /* rip: Unicorn adds the syscall's 2 bytes */
    else if (i == 17) /* user-changeable flags only */
      v = (reg(emu, "rflags") & ~(uint64_t)0x50dd5) | (v & 0x50dd5);
    set(emu, mctx_regs[i], v);
  }
  uint64_t fp = get64(uc + UC_MCTX + MCTX_FPSTATE);
  if (fp && tc_sys_read(emu, fp, fx, sizeof fx) == 0)
    fx_restore(emu, fx);
  uint64_t mask = get64(uc + UC_SIGMASK);
  c->st->sigmask = mask & ~((1ull << 8) | (1ull << 18)); /* not KILL/STOP */
  return 0;
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
    uint64_t ready = st->pending_set & ~st->sigmask;
    if (ready) {
      int sig = __builtin_ctzll(ready) + 1;
      st->pending_set &= ~(1ull << (sig - 1));
      uint64_t h = st->sigact[sig].handler;
      if (h > 1 && tc_signal_can_deliver(c->emu)) {
        st->pending_sig = sig;
        st->pending_code = st->pending_set_code[sig];
      } else if (h == 0 && sig == SIGALRM_V) {
        c->action = TC_SYS_ACT_KILL;
        c->action_arg = sig;
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
static int64_t wait_for_signal(tc_sys_call *c, const char *what) {
  tc_linux_state *st = c->st;
  if (st->pending_set & ~st->sigmask)
    return -EINTR;
  uint64_t alrm = 1ull << (SIGALRM_V - 1);
  if (st->timer_deadline && st->sigact[SIGALRM_V].handler != 1 &&
      !(st->sigmask & alrm)) {
    if (c->emu->clock_ns < st->timer_deadline)
      c->emu->clock_ns = st->timer_deadline;
    return -EINTR;
  }
  /* Another guest process may send one: wait for it (the call runs
   * again once a signal is pending). */
  if (tc_thread_block(c, TC_THREAD_SIGNAL, 0))
    return 0;
  if (!c->emu->opt.quiet)
    fprintf(stderr,
            "tracecorn: %s would wait forever (no timer armed and no other "
            "thread or process to send a signal); returning -EINTR\n",
            what);
  return -EINTR;
}

int64_t tc_sys_pause(tc_sys_call *c) { return wait_for_signal(c, "pause"); }

int64_t tc_sys_rt_sigsuspend(tc_sys_call *c) {
  tc_linux_state *st = c->st;
  const tc_arch *arch = c->emu->arch;
  if (c->a[1] != tc_xlat_sigset_size(arch))
    return -EINVAL;
  uint8_t buf[8];
  int r = tc_sys_read(c->emu, c->a[0], buf, sizeof buf);
  if (r < 0)
    return r;
  uint64_t m = get64(buf);   /* x86: little-endian words, signals 1..64 */
  if (!st->suspend_active) { /* not when it runs again after a wait */
    st->suspend_saved = st->sigmask;
    st->suspend_active = true;
  }
  st->sigmask = tc_xlat_sigset_to_host(arch, m) & ~((1ull << 8) | (1ull << 18));
  r = (int)wait_for_signal(c, "sigsuspend");
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
