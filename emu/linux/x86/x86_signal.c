/* SPDX-License-Identifier: GPL-2.0-or-later */
/* x86 signal frames (arch/x86/kernel/signal.c, signal_32.c): x86-64's
 * rt_sigframe, i386's rt and legacy frames, the fxsave-layout FP area both
 * save, and their sigreturns. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "common/byteorder.h"
#include "emu/linux/linux_arch.h"
#include "emu/linux/x86/x86_linux.h"

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
  uint64_t fcw = tc_linux_reg(emu, "fpcw"), fsw = tc_linux_reg(emu, "fpsw");
  fx[0] = (uint8_t)fcw, fx[1] = (uint8_t)(fcw >> 8);
  fx[2] = (uint8_t)fsw, fx[3] = (uint8_t)(fsw >> 8);
  uint64_t mx = tc_linux_reg(emu, "mxcsr");
  for (int i = 0; i < 4; i++)
    fx[24 + i] = (uint8_t)(mx >> (8 * i));
  fx[28] = 0xff, fx[29] = 0xff; /* mxcsr_mask */
  fx_regs(emu, fx, true);
}

static void fx_restore(tc_emu *emu, const uint8_t *fx) {
  tc_linux_set_reg(emu, "fpcw", (uint64_t)fx[0] | (uint64_t)fx[1] << 8);
  tc_linux_set_reg(emu, "fpsw", (uint64_t)fx[2] | (uint64_t)fx[3] << 8);
  uint64_t mx = 0;
  for (int i = 0; i < 4; i++)
    mx |= (uint64_t)fx[24 + i] << (8 * i);
  tc_linux_set_reg(emu, "mxcsr", mx & 0xffff);
  fx_regs(emu, (uint8_t *)fx, false); /* only read when restoring */
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
                               uint64_t mask, const tc_sig_desc *d) {
  put32(m + 0, (uint32_t)tc_linux_reg(emu, "gs"));
  put32(m + 4, (uint32_t)tc_linux_reg(emu, "fs"));
  put32(m + 8, (uint32_t)tc_linux_reg(emu, "es"));
  put32(m + 12, (uint32_t)tc_linux_reg(emu, "ds"));
  for (int i = 0; i < 8; i++)
    put32(m + 16 + 4 * i, (uint32_t)tc_linux_reg(emu, i_regs[i]));
  put32(m + 48, d->trapno);
  put32(m + 52, d->err);
  put32(m + 56, (uint32_t)d->resume);
  put32(m + 60, (uint32_t)tc_linux_reg(emu, "cs"));
  put32(m + 64, (uint32_t)tc_linux_reg(emu, "eflags"));
  put32(m + 68, (uint32_t)tc_linux_reg(emu, "esp"));
  put32(m + 72, (uint32_t)tc_linux_reg(emu, "ss") | 3); /* RPL 3, as Linux */
  put32(m + 76, fp);
  put32(m + 80, (uint32_t)mask);
  put32(m + 84, d->fault ? (uint32_t)d->addr : 0); /* cr2 */
}

static void restore_sigcontext_32(tc_emu *emu, const uint8_t *m) {
  for (int i = 0; i < 8; i++)
    tc_linux_set_reg(emu, i_regs[i], get32(m + 16 + 4 * i));
  tc_linux_set_reg(emu, "eip", get32(m + 56));
  tc_linux_set_reg(emu, "eflags",
                   (tc_linux_reg(emu, "eflags") & ~(uint64_t)0x50dd5) |
                       (get32(m + 64) & 0x50dd5));
  uint8_t fx[FXSAVE_SIZE];
  uint32_t fp = get32(m + 76);
  if (fp && tc_emu_read(emu, fp, fx, sizeof fx) == 0)
    fx_restore(emu, fx);
}

/* int 0x80 has already moved EIP past itself when its hook runs: what
 * is written to EIP here is where execution goes on. */
int tc_linux_i386_signal_frame(tc_emu *emu, tc_linux_state *st,
                               const tc_sig_desc *d, uint64_t *frame_at) {
  int sig = d->sig;
  uint64_t flags = st->sigact[sig].flags;
  uint32_t sp = (uint32_t)tc_linux_reg(emu, "esp");
  bool on_alt = st->altstack_size && sp > st->altstack_sp &&
                sp <= st->altstack_sp + st->altstack_size;
  if ((flags & TC_SA_ONSTACK) && st->altstack_size && !on_alt &&
      !(st->altstack_flags & TC_SS_DISABLE))
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
    if (!(flags & TC_SA_RESTORER) || tc_emu_write(emu, fp, fx, sizeof fx) < 0 ||
        tc_emu_write(emu, lframe, l, sizeof l) < 0)
      return -1;
    tc_linux_set_reg(emu, "eax", (uint64_t)sig);
    tc_linux_set_reg(emu, "edx", 0);
    tc_linux_set_reg(emu, "ecx", 0);
    tc_linux_set_reg(emu, "esp", lframe);
    tc_linux_set_reg(emu, "eflags",
                     tc_linux_reg(emu, "eflags") & ~(uint64_t)0x10500);
    tc_linux_set_reg(emu, "eip", st->sigact[sig].handler);
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
        st->altstack_size ? (on_alt ? TC_SS_ONSTACK : 0) : TC_SS_DISABLE);
  put32(uc + I_UC_STACK + 8, (uint32_t)st->altstack_size);
  fill_sigcontext_32(emu, uc + I_MCTX, fp, d->mask, d);
  put64(uc + I_SIGMASK, d->mask);
  if (!(flags & TC_SA_RESTORER) || tc_emu_write(emu, fp, fx, sizeof fx) < 0 ||
      tc_emu_write(emu, frame, f, sizeof f) < 0)
    return -1;
  tc_linux_set_reg(emu, "eax", (uint64_t)sig);
  tc_linux_set_reg(emu, "edx", frame + I_INFO);
  tc_linux_set_reg(emu, "ecx", frame + I_UC);
  tc_linux_set_reg(emu, "esp", frame);
  tc_linux_set_reg(emu, "eflags",
                   tc_linux_reg(emu, "eflags") & ~(uint64_t)0x10500);
  tc_linux_set_reg(emu, "eip", st->sigact[sig].handler);
  *frame_at = frame;
  return 0;
}

int64_t tc_linux_i386_rt_sigreturn(tc_sys_call *c) {
  tc_emu *emu = c->emu;
  uint8_t uc[I_UC_SIZE];
  /* the handler's ret popped pretcode */
  uint32_t frame = (uint32_t)tc_linux_reg(emu, "esp") - 4;
  if (tc_sys_read(emu, frame + I_UC, uc, sizeof uc) < 0)
    return -EFAULT;
  restore_sigcontext_32(emu, uc + I_MCTX);
  c->st->sigmask = get64(uc + I_SIGMASK) & ~((1ull << 8) | (1ull << 18));
  return 0;
}

/* sigreturn, i386's frame without siginfo: glibc's __restore popped the
 * signal number, so the frame starts 8 bytes below esp. */
int64_t tc_linux_i386_sigreturn(tc_sys_call *c) {
  tc_emu *emu = c->emu;
  uint8_t l[L_FRAME];
  uint32_t frame = (uint32_t)tc_linux_reg(emu, "esp") - 8;
  if (tc_sys_read(emu, frame, l, sizeof l) < 0)
    return -EFAULT;
  restore_sigcontext_32(emu, l + L_SC);
  c->st->sigmask =
      ((uint64_t)get32(l + L_EXTRAMASK) << 32 | get32(l + L_SC + 80)) &
      ~((1ull << 8) | (1ull << 18));
  return 0;
}

/* x86-64: return address = sa_restorer (there is no other), ucontext
 * with the interrupted registers and mask, siginfo; the FP area below. */
int tc_linux_x86_64_signal_frame(tc_emu *emu, tc_linux_state *st,
                                 const tc_sig_desc *d, uint64_t *frame_at) {
  int sig = d->sig;
  uint64_t sp = tc_linux_reg(emu, "rsp");
  uint64_t flags = st->sigact[sig].flags;
  bool on_alt = st->altstack_size && sp > st->altstack_sp &&
                sp <= st->altstack_sp + st->altstack_size;
  if ((flags & TC_SA_ONSTACK) && st->altstack_size && !on_alt &&
      !(st->altstack_flags & TC_SS_DISABLE))
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
  uint32_t ssf =
      st->altstack_size ? (on_alt ? TC_SS_ONSTACK : 0) : TC_SS_DISABLE;
  memcpy(uc + UC_STACK + 8, &ssf, 4);
  put64(uc + UC_STACK + 16, st->altstack_size);
  for (size_t i = 0; i < N_MCTX; i++)
    put64(uc + UC_MCTX + 8 * i,
          i == 16 ? d->resume : tc_linux_reg(emu, mctx_regs[i]));
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
  if (!(flags & TC_SA_RESTORER) || tc_emu_write(emu, fp, fx, sizeof fx) < 0 ||
      tc_emu_write(emu, frame, f, sizeof f) < 0)
    return -1;
  tc_linux_set_reg(emu, "rdi", (uint64_t)sig);
  tc_linux_set_reg(emu, "rsi", frame + INFO_OFF);
  tc_linux_set_reg(emu, "rdx", frame + UC_OFF);
  tc_linux_set_reg(emu, "rax", 0);
  tc_linux_set_reg(emu, "rsp", frame);
  /* DF, RF and TF cleared */
  tc_linux_set_reg(emu, "rflags",
                   tc_linux_reg(emu, "rflags") & ~(uint64_t)0x10500);
  tc_linux_set_reg(emu, "rip", st->sigact[sig].handler - d->bias);
  *frame_at = frame;
  return 0;
}

/* rt_sigreturn: the handler returned through sa_restorer, whose syscall
 * finds the ucontext at rsp (the handler's `ret` popped pretcode). */
int64_t tc_linux_x86_64_rt_sigreturn(tc_sys_call *c) {
  tc_emu *emu = c->emu;
  uint8_t uc[UC_SIZE], fx[FXSAVE_SIZE];
  uint64_t at = tc_linux_reg(emu, "rsp");
  if (tc_sys_read(emu, at, uc, sizeof uc) < 0)
    return -EFAULT; /* a bad frame: SIGSEGV, as Linux */
  for (size_t i = 0; i < N_MCTX; i++) {
    uint64_t v = get64(uc + UC_MCTX + 8 * i);
    if (i == 16)
      v -= 2;         /* rip: Unicorn adds the syscall's 2 bytes */
    else if (i == 17) /* user-changeable flags only */
      v = (tc_linux_reg(emu, "rflags") & ~(uint64_t)0x50dd5) | (v & 0x50dd5);
    tc_linux_set_reg(emu, mctx_regs[i], v);
  }
  uint64_t fp = get64(uc + UC_MCTX + MCTX_FPSTATE);
  if (fp && tc_sys_read(emu, fp, fx, sizeof fx) == 0)
    fx_restore(emu, fx);
  uint64_t mask = get64(uc + UC_SIGMASK);
  c->st->sigmask = mask & ~((1ull << 8) | (1ull << 18)); /* not KILL/STOP */
  return 0;
}
