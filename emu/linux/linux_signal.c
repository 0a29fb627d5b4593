/* Signal delivery to guest handlers and rt_sigreturn, as Linux does it: a
 * signal sent to the process itself (kill, tkill, tgkill, raise) with a
 * handler installed is delivered when the syscall that sent it returns; a
 * fault when the engine stops on it; a signal for another thread when the
 * scheduler switches to that thread. The frame the kernel builds (x86-64,
 * arch/x86/kernel/signal.c: return address = sa_restorer, ucontext with the
 * interrupted registers and mask, siginfo, an fxsave-layout FP area) is
 * written to the guest stack like any kernel write, so every format
 * records it. i386 (signal_32.c), arm64, arm and mips o32 have their own
 * frames below (docs/arches.md); mips64el keeps the notice
 * (linux_sys_misc.c). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "common/byteorder.h"
#include "common/linux/linux_abi.h"
#include "common/linux/linux_xlat.h"
#include "emu/engine/emu.h"
#include "emu/linux/linux_sys.h"

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
  uint32_t pid;    /* si_pid when not the process's own (SIGCHLD: the child) */
  bool has_status; /* SIGCHLD: si_status follows si_uid */
  int32_t status;
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

static void put64(uint8_t *p, uint64_t v) { put_le(p, v, 8); }
static uint64_t get64(const uint8_t *p) { return get_le(p, 8); }

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
  switch (emu->arch->id) {
  case TC_ARCH_X86_64:
  case TC_ARCH_X86:
  case TC_ARCH_ARM:
  case TC_ARCH_ARM64:
  case TC_ARCH_MIPS:
  case TC_ARCH_MIPSEL:
    return true;
  default: /* mips64el: n64 frames are not done */
    return false;
  }
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
    put32(f + I_INFO + 12, d->pid ? d->pid : emu->pid);
    put32(f + I_INFO + 16, TC_GUEST_UID);
    if (d->has_status)
      put32(f + I_INFO + 20, (uint32_t)d->status);
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

static int64_t sigreturn_arm(tc_sys_call *c, bool rt);
static int64_t sigreturn_mips(tc_sys_call *c, bool rt);

/* sigreturn, the frame without siginfo: i386 (glibc's __restore popped
 * the signal number, so the frame starts 8 bytes below esp), arm, mips. */
int64_t tc_sys_sigreturn(tc_sys_call *c) {
  tc_emu *emu = c->emu;
  c->no_return = true;
  if (emu->arch->id == TC_ARCH_ARM || emu->arch->id == TC_ARCH_MIPS ||
      emu->arch->id == TC_ARCH_MIPSEL) {
    int64_t r = emu->arch->id == TC_ARCH_ARM ? sigreturn_arm(c, false)
                                             : sigreturn_mips(c, false);
    if (r < 0) {
      c->action = TC_SYS_ACT_KILL;
      c->action_arg = 11;
    }
    return r;
  }
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
    uint32_t pid = d->pid ? d->pid : emu->pid, uid = TC_GUEST_UID;
    memcpy(si + 16, &pid, 4);
    memcpy(si + 20, &uid, 4);
    if (d->has_status)
      memcpy(si + 24, &d->status, 4);
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

/* ------------------------------------------- arm64, arm, mips (o32) */

/* What arm, arm64 and mips have in common: the guest's own signal
 * numbers and byte order in the frame, siginfo with the union at 12 (16
 * on 64-bit), mips swapping si_code and si_errno. */
static bool is_mips32(const tc_arch *a) {
  return a->id == TC_ARCH_MIPS || a->id == TC_ARCH_MIPSEL;
}

static void put_siginfo(tc_emu *emu, uint8_t *si, const sig_desc *d) {
  const tc_arch *a = emu->arch;
  unsigned u = a->ptr_size == 8 ? 16 : 12;
  bool mips = is_mips32(a);
  tc_abi_put(a, si, 4, (uint64_t)tc_xlat_signal_to_guest(a, d->sig));
  tc_abi_put(a, si + (mips ? 4 : 8), 4, (uint64_t)(uint32_t)d->code);
  if (d->fault) {
    tc_abi_put(a, si + u, a->ptr_size, d->addr);
  } else {
    tc_abi_put(a, si + u, 4, d->pid ? d->pid : emu->pid);
    tc_abi_put(a, si + u + 4, 4, TC_GUEST_UID);
    if (d->has_status)
      tc_abi_put(a, si + u + 8, 4, (uint32_t)d->status);
  }
}

/* stack_t: {ss_sp, ss_flags, ss_size}; mips {ss_sp, ss_size, ss_flags}. */
static void put_stack(const tc_arch *a, uint8_t *p, const tc_linux_state *st,
                      bool on_alt) {
  unsigned l = a->ptr_size;
  bool mips = is_mips32(a);
  uint32_t flags =
      st->altstack_size ? (on_alt ? SS_ONSTACK_V : 0) : SS_DISABLE_V;
  tc_abi_put(a, p, l, st->altstack_sp);
  tc_abi_put(a, p + (mips ? 2 * l : l), 4, flags);
  tc_abi_put(a, p + (mips ? l : 2 * l), l, st->altstack_size);
}

/* The stack the frame goes on: the alternate one for SA_ONSTACK when it
 * is set up and not already in use (the kernel's sigsp()). */
static uint64_t signal_sp(const tc_linux_state *st, uint64_t flags, uint64_t sp,
                          bool *on_alt) {
  *on_alt = st->altstack_size && sp > st->altstack_sp &&
            sp <= st->altstack_sp + st->altstack_size;
  if ((flags & SA_ONSTACK_V) && st->altstack_size && !*on_alt &&
      !(st->altstack_flags & SS_DISABLE_V))
    return st->altstack_sp + st->altstack_size;
  return sp;
}

/* sigset_t in the frame: the guest's numbering, longs in its byte order
 * (mips: 128 bits, the upper 64 zero). */
static void put_sigset(const tc_arch *a, uint8_t *p, uint64_t host_set) {
  uint64_t g = tc_xlat_sigset_to_guest(a, host_set);
  if (a->ptr_size == 8) {
    tc_abi_put(a, p, 8, g);
  } else {
    tc_abi_put(a, p, 4, g & 0xffffffffu);
    tc_abi_put(a, p + 4, 4, g >> 32);
  }
}

static uint64_t get_sigset(const tc_arch *a, const uint8_t *p) {
  uint64_t g = a->ptr_size == 8
                   ? tc_abi_get(a, p, 8)
                   : tc_abi_get(a, p, 4) | tc_abi_get(a, p + 4, 4) << 32;
  return tc_xlat_sigset_to_host(a, g) & ~((1ull << 8) | (1ull << 18));
}

/* The sigreturn trampolines when the guest gave no sa_restorer (mips has
 * none at all): Linux keeps them in the vDSO (arm64, mips) or the
 * sigpage (arm); tracecorn maps one read-only executable "[sigpage]"
 * page on first need: sigreturn at +0, rt_sigreturn at +8, each "load
 * the syscall number; trap". 0 if it cannot be mapped. */
static uint64_t trampoline(tc_emu *emu, tc_linux_state *st, bool rt) {
  const tc_arch *a = emu->arch;
  const tc_region *g = st->sigpage ? tc_emu_region_at(emu, st->sigpage) : NULL;
  if (!g || strcmp(g->name, "[sigpage]") != 0)
    st->sigpage = 0; /* unmapped, or a new image (execve) */
  if (!st->sigpage) {
    uint32_t code[4];
    switch (a->id) {
    case TC_ARCH_ARM64: /* mov x8, #139; svc #0 (rt only) */
      code[0] = code[2] = 0xd2801168u;
      code[1] = code[3] = 0xd4000001u;
      break;
    case TC_ARCH_ARM: /* mov r7, #119 / #173; svc 0 (A32) */
      code[0] = 0xe3a07077u;
      code[2] = 0xe3a070adu;
      code[1] = code[3] = 0xef000000u;
      break;
    default: /* mips o32: li v0, 4119 / 4193; syscall */
      code[0] = 0x24021017u;
      code[2] = 0x24021061u;
      code[1] = code[3] = 0x0000000cu;
      break;
    }
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

/* Where the handler returns to: sa_restorer (glibc always sets it on arm
 * and arm64), else the trampoline. */
static uint64_t return_address(tc_emu *emu, tc_linux_state *st, int sig,
                               bool rt) {
  if ((st->sigact[sig].flags & SA_RESTORER_V) && st->sigact[sig].restorer)
    return st->sigact[sig].restorer;
  return trampoline(emu, st, rt);
}

/* arm64 (arch/arm64/kernel/signal.c): struct rt_sigframe {siginfo;
 * ucontext {flags, link, stack, sigmask, pad to 128, sigcontext
 * (16-aligned) {fault_address, regs[31], sp, pc, pstate, __reserved[4096]
 * holding fpsimd_context and a null terminator record}}}, under a
 * frame_record {fp, lr} that x29 points at. */
enum {
  A64_UC = 128,
  A64_UC_STACK = A64_UC + 16,
  A64_UC_MASK = A64_UC + 40,
  A64_MCTX = A64_UC + 176,
  A64_RES = A64_MCTX + 288,
  A64_FPSIMD_SIZE = 528,
  A64_FRAME = A64_RES + 4096 /* 4688, a multiple of 16 */
};
#define A64_FPSIMD_MAGIC 0x46508001u

/* A numbered register bank (arm64 v0..v31, arm d0..d31) saved into or
 * restored from consecutive `width`-byte slots of a frame's FP record. A
 * register the arch lacks is left alone (its slot stays zero). */
static void reg_bank(tc_emu *emu, const char *prefix, unsigned width,
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

static int deliver_arm64(tc_emu *emu, tc_linux_state *st, const sig_desc *d,
                         uint64_t *frame_at) {
  const tc_arch *a = emu->arch;
  int sig = d->sig;
  uint64_t flags = st->sigact[sig].flags;
  bool on_alt;
  uint64_t sp = signal_sp(st, flags, reg(emu, "sp"), &on_alt);
  uint64_t rec = (sp - 16) & ~(uint64_t)15;
  uint64_t frame = rec - A64_FRAME;
  uint8_t f[A64_FRAME];
  uint8_t r16[16];
  memset(f, 0, sizeof f);
  put_siginfo(emu, f, d);
  put_stack(a, f + A64_UC_STACK, st, on_alt);
  put_sigset(a, f + A64_UC_MASK, d->mask);
  uint8_t *m = f + A64_MCTX;
  tc_abi_put(a, m, 8, d->fault ? d->addr : 0);
  char n[8];
  for (int i = 0; i < 31; i++) {
    snprintf(n, sizeof n, "x%d", i);
    tc_abi_put(a, m + 8 + 8 * i, 8, reg(emu, n));
  }
  tc_abi_put(a, m + 256, 8, reg(emu, "sp"));
  tc_abi_put(a, m + 264, 8, d->resume);
  tc_abi_put(a, m + 272, 8, reg(emu, "nzcv") & 0xf0000000u);
  uint8_t *fp = f + A64_RES;
  tc_abi_put(a, fp, 4, A64_FPSIMD_MAGIC);
  tc_abi_put(a, fp + 4, 4, A64_FPSIMD_SIZE);
  tc_abi_put(a, fp + 8, 4, reg(emu, "fpsr"));
  tc_abi_put(a, fp + 12, 4, reg(emu, "fpcr"));
  reg_bank(emu, "v", 16, fp + 16, true);
  /* the terminator {0, 0} follows at A64_RES + 528: already zero */
  tc_abi_put(a, r16, 8, reg(emu, "x29"));
  tc_abi_put(a, r16 + 8, 8, reg(emu, "x30"));
  uint64_t ret = return_address(emu, st, sig, true);
  if (!ret || tc_emu_write(emu, rec, r16, sizeof r16) < 0 ||
      tc_emu_write(emu, frame, f, sizeof f) < 0)
    return -1;
  set(emu, "x0", (uint64_t)tc_xlat_signal_to_guest(a, sig));
  if (flags & 4u) { /* SA_SIGINFO */
    set(emu, "x1", frame);
    set(emu, "x2", frame + A64_UC);
  }
  set(emu, "sp", frame);
  set(emu, "x29", rec);
  set(emu, "x30", ret);
  set(emu, "pc", st->sigact[sig].handler);
  *frame_at = frame;
  return 0;
}

static int64_t sigreturn_arm64(tc_sys_call *c) {
  tc_emu *emu = c->emu;
  const tc_arch *a = emu->arch;
  uint8_t f[A64_FRAME - A64_UC];
  uint64_t frame = reg(emu, "sp");
  if ((frame & 15) || tc_sys_read(emu, frame + A64_UC, f, sizeof f) < 0)
    return -EFAULT;
  const uint8_t *m = f + (A64_MCTX - A64_UC);
  char n[8];
  for (int i = 0; i < 31; i++) {
    snprintf(n, sizeof n, "x%d", i);
    set(emu, n, tc_abi_get(a, m + 8 + 8 * i, 8));
  }
  set(emu, "sp", tc_abi_get(a, m + 256, 8));
  set(emu, "pc", tc_abi_get(a, m + 264, 8));
  set(emu, "nzcv", tc_abi_get(a, m + 272, 8) & 0xf0000000u);
  const uint8_t *fp = f + (A64_RES - A64_UC);
  if (tc_abi_get(a, fp, 4) == A64_FPSIMD_MAGIC &&
      tc_abi_get(a, fp + 4, 4) == A64_FPSIMD_SIZE) {
    set(emu, "fpsr", tc_abi_get(a, fp + 8, 4));
    set(emu, "fpcr", tc_abi_get(a, fp + 12, 4));
    reg_bank(emu, "v", 16, (uint8_t *)fp + 16, false); /* only read */
  }
  c->st->sigmask = get_sigset(a, f + (A64_UC_MASK - A64_UC));
  return 0;
}

/* arm EABI (arch/arm/kernel/signal.c): struct sigframe {ucontext {flags,
 * link, stack, sigcontext (84 bytes), sigmask (+ padding to 128),
 * regspace (vfp_sigframe, end magic)}; retcode[4]}; rt_sigframe is
 * siginfo then a sigframe. */
enum {
  ARM_UC_STACK = 8,
  ARM_UC_MCTX = 20,
  ARM_UC_MASK = 104,
  ARM_UC_REGSPACE = 232,
  ARM_UC_SIZE = 744,
  ARM_SIGFRAME = ARM_UC_SIZE + 16,
  ARM_RT_SIGFRAME = 128 + ARM_SIGFRAME,
  ARM_VFP_SIZE = 288
};
#define ARM_VFP_MAGIC 0x56465001u
#define ARM_CPSR_T 0x20u
/* what user space may change in the CPSR: NZCVQ, IT, GE, T */
#define ARM_CPSR_USER 0xfe0ffc20u

static const char *const arm_sc_regs[] = {"r0",  "r1",  "r2",  "r3", "r4",
                                          "r5",  "r6",  "r7",  "r8", "r9",
                                          "r10", "r11", "r12", "sp", "lr"};

/* The ucontext of a sigframe: sigcontext, mask, VFP area. */
static void arm_fill_uc(tc_emu *emu, uint8_t *uc, const sig_desc *d) {
  const tc_arch *a = emu->arch;
  uint8_t *m = uc + ARM_UC_MCTX;
  bool undef = d->fault && d->sig == 4;
  tc_abi_put(a, m, 4, undef ? 6 : 0); /* trap_no */
  tc_abi_put(a, m + 8, 4, tc_xlat_sigset_to_guest(a, d->mask) & 0xffffffffu);
  for (int i = 0; i < 15; i++)
    tc_abi_put(a, m + 12 + 4 * i, 4, reg(emu, arm_sc_regs[i]));
  tc_abi_put(a, m + 72, 4, d->resume & ~1ull);
  tc_abi_put(a, m + 76, 4, reg(emu, "cpsr"));
  tc_abi_put(a, m + 80, 4, d->fault && !undef ? d->addr : 0);
  put_sigset(a, uc + ARM_UC_MASK, d->mask);
  uint8_t *v = uc + ARM_UC_REGSPACE;
  tc_abi_put(a, v, 4, ARM_VFP_MAGIC);
  tc_abi_put(a, v + 4, 4, ARM_VFP_SIZE);
  reg_bank(emu, "d", 8, v + 8, true);
  tc_abi_put(a, v + 264, 4, reg(emu, "fpscr"));
  tc_abi_put(a, v + 272, 4, 0x40000000u); /* fpexc: VFP enabled */
  /* end_magic 0 at +288 */
}

static int deliver_arm(tc_emu *emu, tc_linux_state *st, const sig_desc *d,
                       uint64_t *frame_at) {
  const tc_arch *a = emu->arch;
  int sig = d->sig;
  uint64_t flags = st->sigact[sig].flags;
  bool rt = (flags & 4u) != 0, on_alt;
  uint64_t sp = signal_sp(st, flags, reg(emu, "sp"), &on_alt);
  unsigned size = rt ? ARM_RT_SIGFRAME : ARM_SIGFRAME;
  uint64_t frame = (sp - size) & ~(uint64_t)7;
  uint8_t f[ARM_RT_SIGFRAME];
  memset(f, 0, sizeof f);
  uint8_t *uc = f + (rt ? 128 : 0);
  if (rt) {
    put_siginfo(emu, f, d);
    put_stack(a, uc + ARM_UC_STACK, st, on_alt);
  } else {
    tc_abi_put(a, uc, 4, 0x5ac3c35au); /* never a trap_no: the old frame */
  }
  arm_fill_uc(emu, uc, d);
  uint64_t handler = st->sigact[sig].handler;
  uint64_t ret = return_address(emu, st, sig, rt);
  if (!ret || tc_emu_write(emu, frame, f, size) < 0)
    return -1;
  /* flags cleared, IT state cleared, T from the handler's bit 0 */
  uint64_t cpsr = reg(emu, "cpsr") &
                  ~(uint64_t)(0xff000000u | 0x0600fc00u | 0x200u | ARM_CPSR_T);
  if (handler & 1)
    cpsr |= ARM_CPSR_T;
  set(emu, "r0", (uint64_t)tc_xlat_signal_to_guest(a, sig));
  if (rt) {
    set(emu, "r1", frame);
    set(emu, "r2", frame + 128);
  }
  set(emu, "sp", frame);
  set(emu, "lr", ret);
  set(emu, "cpsr", cpsr);
  set(emu, "pc", handler); /* bit 0 selects Thumb, as the CPSR says */
  *frame_at = frame;
  return 0;
}

static int64_t sigreturn_arm(tc_sys_call *c, bool rt) {
  tc_emu *emu = c->emu;
  const tc_arch *a = emu->arch;
  uint8_t uc[ARM_UC_SIZE];
  uint64_t frame = reg(emu, "sp");
  if ((frame & 7) ||
      tc_sys_read(emu, frame + (rt ? 128 : 0), uc, sizeof uc) < 0)
    return -EFAULT;
  const uint8_t *m = uc + ARM_UC_MCTX;
  for (int i = 0; i < 15; i++)
    set(emu, arm_sc_regs[i], tc_abi_get(a, m + 12 + 4 * i, 4));
  uint64_t cpsr = tc_abi_get(a, m + 76, 4);
  set(emu, "cpsr",
      (reg(emu, "cpsr") & ~(uint64_t)ARM_CPSR_USER) | (cpsr & ARM_CPSR_USER));
  set(emu, "pc",
      (tc_abi_get(a, m + 72, 4) & ~1ull) | ((cpsr & ARM_CPSR_T) ? 1 : 0));
  const uint8_t *v = uc + ARM_UC_REGSPACE;
  if (tc_abi_get(a, v, 4) == ARM_VFP_MAGIC &&
      tc_abi_get(a, v + 4, 4) == ARM_VFP_SIZE) {
    reg_bank(emu, "d", 8, (uint8_t *)v + 8, false); /* only read */
    set(emu, "fpscr", tc_abi_get(a, v + 264, 4));
  }
  c->st->sigmask = get_sigset(a, uc + ARM_UC_MASK);
  return 0;
}

/* mips o32 (arch/mips/kernel/signal.c): struct sigframe {sf_ass[4],
 * sf_pad[2], sigcontext, sigset (16 bytes)}; rt_sigframe {rs_ass[4],
 * rs_pad[2], siginfo, ucontext {flags, link, stack, sigcontext at 24,
 * sigmask}}. sigcontext: regmask, status, pc (u64), regs[32] (u64),
 * fpregs[32], acx, fpc_csr, fpc_eir, used_math, dsp, mdhi, mdlo (u64),
 * hi1..lo3. Unicorn 2.0.1 cannot read the FPU registers, so used_math is
 * 0 and the FP registers are neither saved nor restored. */
enum {
  M_SC = 24,
  M_SF_MASK = M_SC + 592,
  M_SIGFRAME = M_SF_MASK + 16,
  M_INFO = 24,
  M_UC = M_INFO + 128,
  M_UC_STACK = 8,
  M_UC_MCTX = 24,
  M_UC_MASK = 616,
  M_RT_SIGFRAME = M_UC + 632
};

static const char *const mips_regs[32] = {
    "zero", "at", "v0", "v1", "a0", "a1", "a2", "a3", "t0", "t1", "t2",
    "t3",   "t4", "t5", "t6", "t7", "s0", "s1", "s2", "s3", "s4", "s5",
    "s6",   "s7", "t8", "t9", "k0", "k1", "gp", "sp", "fp", "ra"};

static void mips_fill_sc(tc_emu *emu, uint8_t *sc, const sig_desc *d) {
  const tc_arch *a = emu->arch;
  tc_abi_put(a, sc + 8, 8, d->resume);
  for (int i = 1; i < 32; i++)
    tc_abi_put(a, sc + 16 + 8 * i, 8, reg(emu, mips_regs[i]));
  tc_abi_put(a, sc + 552, 8, reg(emu, "hi"));
  tc_abi_put(a, sc + 560, 8, reg(emu, "lo"));
}

static int deliver_mips(tc_emu *emu, tc_linux_state *st, const sig_desc *d,
                        uint64_t *frame_at) {
  const tc_arch *a = emu->arch;
  int sig = d->sig;
  uint64_t flags = st->sigact[sig].flags;
  bool rt = (flags & 8u) != 0, on_alt; /* mips SA_SIGINFO is 8 */
  uint64_t sp = signal_sp(st, flags, reg(emu, "sp") - 32, &on_alt);
  unsigned size = rt ? M_RT_SIGFRAME : M_SIGFRAME;
  uint64_t frame = (sp - size) & ~(uint64_t)7;
  uint8_t f[M_RT_SIGFRAME];
  memset(f, 0, sizeof f);
  uint64_t sc;
  if (rt) {
    put_siginfo(emu, f + M_INFO, d);
    put_stack(a, f + M_UC + M_UC_STACK, st, on_alt);
    mips_fill_sc(emu, f + M_UC + M_UC_MCTX, d);
    put_sigset(a, f + M_UC + M_UC_MASK, d->mask);
    sc = frame + M_UC;
  } else {
    mips_fill_sc(emu, f + M_SC, d);
    put_sigset(a, f + M_SF_MASK, d->mask);
    sc = frame + M_SC;
  }
  uint64_t handler = st->sigact[sig].handler;
  uint64_t ret = trampoline(emu, st, rt); /* mips has no sa_restorer */
  if (!ret || tc_emu_write(emu, frame, f, size) < 0)
    return -1;
  set(emu, "a0", (uint64_t)tc_xlat_signal_to_guest(a, sig));
  set(emu, "a1", rt ? frame + M_INFO : 0);
  set(emu, "a2", sc);
  set(emu, "sp", frame);
  set(emu, "ra", ret);
  set(emu, "t9", handler);
  set(emu, "pc", handler);
  *frame_at = frame;
  return 0;
}

static int64_t sigreturn_mips(tc_sys_call *c, bool rt) {
  tc_emu *emu = c->emu;
  const tc_arch *a = emu->arch;
  uint8_t f[M_RT_SIGFRAME];
  uint64_t frame = reg(emu, "sp");
  unsigned size = rt ? M_RT_SIGFRAME : M_SIGFRAME;
  if (tc_sys_read(emu, frame, f, size) < 0)
    return -EFAULT;
  const uint8_t *sc = f + (rt ? M_UC + M_UC_MCTX : M_SC);
  for (int i = 1; i < 32; i++)
    set(emu, mips_regs[i], tc_abi_get(a, sc + 16 + 8 * i, 8));
  set(emu, "hi", tc_abi_get(a, sc + 552, 8));
  set(emu, "lo", tc_abi_get(a, sc + 560, 8));
  set(emu, "pc", tc_abi_get(a, sc + 8, 8));
  c->st->sigmask = get_sigset(a, f + (rt ? M_UC + M_UC_MASK : M_SF_MASK));
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
  int r;
  switch (emu->arch->id) {
  case TC_ARCH_X86:
    r = deliver_i386(emu, st, d, &frame);
    break;
  case TC_ARCH_X86_64:
    r = deliver_x86_64(emu, st, d, &frame);
    break;
  case TC_ARCH_ARM64:
    r = deliver_arm64(emu, st, d, &frame);
    break;
  case TC_ARCH_ARM:
    r = deliver_arm(emu, st, d, &frame);
    break;
  case TC_ARCH_MIPS:
  case TC_ARCH_MIPSEL:
    r = deliver_mips(emu, st, d, &frame);
    break;
  default:
    r = -1;
  }
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
 * adds its 2 bytes after the hook returns; int 0x80 has moved EIP past
 * itself already). */
int tc_signal_deliver(tc_sys_call *c) {
  tc_emu *emu = c->emu;
  tc_linux_state *st = c->st;
  sig_desc d = {0};
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
  if (emu->arch->id == TC_ARCH_X86_64) {
    d.resume = reg(emu, "rip") + 2;
    d.bias = 2;
  } else {
    /* i386's int 0x80, arm's and arm64's svc, mips' syscall: the PC is
     * past the trap already */
    d.resume = tc_emu_reg(emu, emu->arch->pc_reg);
  }
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
  sig_desc d = {0};
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
 * traps.c report them. */
static void fault_desc(tc_arch_id arch, const tc_fault_event *f, sig_desc *d) {
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
    d->code = 2; /* ILL_ILLOPN (x86's do_error_trap) */
    d->trapno = 6;
    d->addr = f->pc;
    if (arch == TC_ARCH_ARM || arch == TC_ARCH_ARM64) {
      d->code = 1; /* ILL_ILLOPC: do_undefinstr on arm and arm64 */
    } else if (arch == TC_ARCH_MIPS || arch == TC_ARCH_MIPSEL) {
      d->code = 0x80; /* do_ri: force_sig(), SI_KERNEL, no address */
      d->addr = 0;
    }
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
  fault_desc(emu->arch->id, &emu->fault, &d);
  d.resume = emu->fault_resume ? emu->fault_resume : emu->fault.pc;
  if (emu->fault_resume) {
    d.trapno = 3; /* do_int3: SIGTRAP, SI_KERNEL, no address */
    d.addr = 0;
  }
  emu->fault_resume = 0;
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
  if (emu->arch->id != TC_ARCH_X86_64) {
    int64_t r;
    switch (emu->arch->id) {
    case TC_ARCH_X86:
      r = sigreturn_i386(c);
      break;
    case TC_ARCH_ARM64:
      r = sigreturn_arm64(c);
      break;
    case TC_ARCH_ARM:
      r = sigreturn_arm(c, true);
      break;
    default:
      r = sigreturn_mips(c, true);
      break;
    }
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
    fprintf(stderr,
            "tracecorn: %s would wait forever (no timer armed and no other "
            "thread or process to send a signal); returning -EINTR\n",
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
  put_sigset(a, buf,
             (c->st->pending_set | c->st->thread_pending) & c->st->sigmask);
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
      sig_desc d = {.sig = sig, .code = code, .fault = code == SI_KERNEL_V};
      if (emu->arch->id == TC_ARCH_X86_64 || emu->arch->id == TC_ARCH_X86) {
        int32_t v[3] = {sig, 0, code};
        memcpy(si, v, sizeof v);
        unsigned u = emu->arch->ptr_size == 8 ? 16 : 12;
        if (!d.fault) {
          uint32_t pu[2] = {emu->pid, TC_GUEST_UID};
          memcpy(si + u, pu, sizeof pu);
        }
      } else {
        put_siginfo(emu, si, &d);
      }
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
    fprintf(stderr,
            "tracecorn: %s would wait forever (nothing pending, no timer and "
            "no other thread to send a signal); returning -EAGAIN\n",
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
