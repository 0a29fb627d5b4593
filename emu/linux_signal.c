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

#define SA_ONSTACK_V 0x08000000u
#define SA_RESETHAND_V 0x80000000u
#define SA_NODEFER_V 0x40000000u
#define SA_RESTORER_V 0x04000000u
#define SS_ONSTACK_V 1
#define SS_DISABLE_V 2

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

static uint64_t reg(tc_emu *emu, const char *name) {
  return tc_emu_reg(emu, tc_arch_reg_index(emu->arch, name));
}
static void set(tc_emu *emu, const char *name, uint64_t v) {
  tc_emu_set_reg(emu, tc_arch_reg_index(emu->arch, name), v);
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
  char n[8];
  for (int i = 0; i < 8; i++) {
    snprintf(n, sizeof n, "st%d", i);
    tc_emu_read_reg_bytes(emu, tc_arch_reg_index(emu->arch, n),
                          fx + 32 + 16 * i, 10);
  }
  for (int i = 0; i < 16; i++) {
    snprintf(n, sizeof n, "xmm%d", i);
    tc_emu_read_reg_bytes(emu, tc_arch_reg_index(emu->arch, n),
                          fx + 160 + 16 * i, 16);
  }
}

static void fx_restore(tc_emu *emu, const uint8_t *fx) {
  set(emu, "fpcw", (uint64_t)fx[0] | (uint64_t)fx[1] << 8);
  set(emu, "fpsw", (uint64_t)fx[2] | (uint64_t)fx[3] << 8);
  uint64_t mx = 0;
  for (int i = 0; i < 4; i++)
    mx |= (uint64_t)fx[24 + i] << (8 * i);
  set(emu, "mxcsr", mx & 0xffff);
  char n[8];
  for (int i = 0; i < 8; i++) {
    snprintf(n, sizeof n, "st%d", i);
    tc_emu_write_reg_bytes(emu, tc_arch_reg_index(emu->arch, n),
                           fx + 32 + 16 * i, 10);
  }
  for (int i = 0; i < 16; i++) {
    snprintf(n, sizeof n, "xmm%d", i);
    tc_emu_write_reg_bytes(emu, tc_arch_reg_index(emu->arch, n),
                           fx + 160 + 16 * i, 16);
  }
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
                               uint64_t mask) {
  put32(m + 0, (uint32_t)reg(emu, "gs"));
  put32(m + 4, (uint32_t)reg(emu, "fs"));
  put32(m + 8, (uint32_t)reg(emu, "es"));
  put32(m + 12, (uint32_t)reg(emu, "ds"));
  for (int i = 0; i < 8; i++)
    put32(m + 16 + 4 * i, (uint32_t)reg(emu, i_regs[i]));
  put32(m + 56, (uint32_t)reg(emu, "eip"));
  put32(m + 60, (uint32_t)reg(emu, "cs"));
  put32(m + 64, (uint32_t)reg(emu, "eflags"));
  put32(m + 68, (uint32_t)reg(emu, "esp"));
  put32(m + 72, (uint32_t)reg(emu, "ss") | 3); /* RPL 3, as Linux */
  put32(m + 76, fp);
  put32(m + 80, (uint32_t)mask);
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
static int deliver_i386(tc_sys_call *c, int sig) {
  tc_emu *emu = c->emu;
  tc_linux_state *st = c->st;
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
    fill_sigcontext_32(emu, l + L_SC, fp, st->sigmask);
    put32(l + L_EXTRAMASK, (uint32_t)(st->sigmask >> 32));
    if (!(flags & SA_RESTORER_V) || tc_emu_write(emu, fp, fx, sizeof fx) < 0 ||
        tc_emu_write(emu, lframe, l, sizeof l) < 0)
      return -1;
    set(emu, "eax", (uint64_t)sig);
    set(emu, "edx", 0);
    set(emu, "ecx", 0);
    set(emu, "esp", lframe);
    set(emu, "eflags", reg(emu, "eflags") & ~(uint64_t)0x10500);
    set(emu, "eip", st->sigact[sig].handler);
    return 0;
  }
  uint32_t frame = ((fp - I_FRAME + 4) & ~15u) - 4; /* (esp+4) % 16 == 0 */
  uint8_t f[I_FRAME];
  memset(f, 0, sizeof f);
  put32(f, (uint32_t)st->sigact[sig].restorer);
  put32(f + 4, (uint32_t)sig);
  put32(f + 8, frame + I_INFO);
  put32(f + 12, frame + I_UC);
  int32_t v[3] = {sig, 0, st->pending_code};
  memcpy(f + I_INFO, v, sizeof v);
  put32(f + I_INFO + 12, emu->pid);
  put32(f + I_INFO + 16, TC_GUEST_UID);
  uint8_t *uc = f + I_UC;
  put32(uc + I_UC_STACK, (uint32_t)st->altstack_sp);
  put32(uc + I_UC_STACK + 4,
        st->altstack_size ? (on_alt ? SS_ONSTACK_V : 0) : SS_DISABLE_V);
  put32(uc + I_UC_STACK + 8, (uint32_t)st->altstack_size);
  fill_sigcontext_32(emu, uc + I_MCTX, fp, st->sigmask);
  put64(uc + I_SIGMASK, st->sigmask);
  if (!(flags & SA_RESTORER_V) || tc_emu_write(emu, fp, fx, sizeof fx) < 0 ||
      tc_emu_write(emu, frame, f, sizeof f) < 0)
    return -1;
  set(emu, "eax", (uint64_t)sig);
  set(emu, "edx", frame + I_INFO);
  set(emu, "ecx", frame + I_UC);
  set(emu, "esp", frame);
  set(emu, "eflags", reg(emu, "eflags") & ~(uint64_t)0x10500);
  set(emu, "eip", st->sigact[sig].handler);
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

/* Called at the end of the syscall that sent the signal (the syscall
 * instruction's own hook: RIP is still its address and Unicorn adds its
 * 2 bytes after the hook returns). */
int tc_signal_deliver(tc_sys_call *c) {
  tc_emu *emu = c->emu;
  tc_linux_state *st = c->st;
  int sig = st->pending_sig;
  st->pending_sig = 0;
  if (emu->arch->id == TC_ARCH_X86) {
    uint64_t handler = st->sigact[sig].handler, flags = st->sigact[sig].flags;
    if (deliver_i386(c, sig) < 0) {
      c->action = TC_SYS_ACT_KILL; /* no way to run it: SIGSEGV */
      c->action_arg = 11;
      return -1;
    }
    st->sigmask |= st->sigact[sig].mask;
    if (!(flags & SA_NODEFER_V))
      st->sigmask |= 1ull << (sig - 1);
    if (flags & SA_RESETHAND_V)
      st->sigact[sig].handler = 0;
    (void)handler;
    return 0;
  }
  const uint64_t resume = reg(emu, "rip") + 2;
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
    put64(uc + UC_MCTX + 8 * i, i == 16 ? resume : reg(emu, mctx_regs[i]));
  put64(uc + UC_MCTX + 8 * 18, 0x2b000000000033ull);       /* ss, fs, gs, cs */
  put64(uc + UC_MCTX + 8 * 21, st->sigmask & 0xffffffffu); /* oldmask */
  put64(uc + UC_MCTX + MCTX_FPSTATE, fp);
  put64(uc + UC_SIGMASK, st->sigmask);
  uint8_t *si = f + INFO_OFF;
  int32_t v[4] = {sig, 0, st->pending_code, 0};
  memcpy(si, v, sizeof v);
  uint32_t pid = emu->pid, uid = TC_GUEST_UID;
  memcpy(si + 16, &pid, 4);
  memcpy(si + 20, &uid, 4);
  fx_save(emu, fx);
  if (!(flags & SA_RESTORER_V) || tc_emu_write(emu, fp, fx, sizeof fx) < 0 ||
      tc_emu_write(emu, frame, f, sizeof f) < 0) {
    /* No way to run the handler: Linux kills with SIGSEGV. */
    c->action = TC_SYS_ACT_KILL;
    c->action_arg = 11;
    return -1;
  }
  uint64_t handler = st->sigact[sig].handler;
  st->sigmask |= st->sigact[sig].mask;
  if (!(flags & SA_NODEFER_V))
    st->sigmask |= 1ull << (sig - 1);
  if (flags & SA_RESETHAND_V)
    st->sigact[sig].handler = 0;
  set(emu, "rdi", (uint64_t)sig);
  set(emu, "rsi", frame + INFO_OFF);
  set(emu, "rdx", frame + UC_OFF);
  set(emu, "rax", 0);
  set(emu, "rsp", frame);
  set(emu, "rflags", reg(emu, "rflags") & ~(uint64_t)0x10500); /* DF RF TF */
  set(emu, "rip", handler - 2); /* Unicorn adds 2 */
  return 0;
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
  uint64_t at = reg(emu, "rsp");
  c->no_return = true; /* every register comes from the frame */
  if (emu->arch->id == TC_ARCH_X86) {
    int64_t r = sigreturn_i386(c);
    if (r < 0) {
      c->action = TC_SYS_ACT_KILL;
      c->action_arg = 11;
    }
    return r;
  }
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
