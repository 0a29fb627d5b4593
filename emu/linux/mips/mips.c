/* SPDX-License-Identifier: GPL-2.0-or-later */
/* mips in the emulated Linux: o32's signal frames and sigreturns (n64
 * has none yet), set_thread_area and cacheflush, and the o32 (big- and
 * little-endian) and n64 (mips64el) ops tables. */
#include <errno.h>
#include <string.h>

#include "common/linux/linux_xlat.h"
#include "emu/linux/linux_arch.h"

/* mips o32 (arch/mips/kernel/signal.c): struct sigframe {sf_ass[4],
 * sf_pad[2], sigcontext, sigset (16 bytes)}; rt_sigframe {rs_ass[4],
 * rs_pad[2], siginfo, ucontext {flags, link, stack, sigcontext at 24,
 * sigmask}}. sigcontext: regmask, status, pc (u64), regs[32] (u64),
 * fpregs[32] (u64), acx, fpc_csr, fpc_eir, used_math, dsp, mdhi, mdlo
 * (u64), hi1..lo3. The FPU state is saved where the arch table has it
 * (mips+fpu: an engine that reads the FPU) as Linux's
 * copy_fp_to_sigcontext writes it for an o32 process (FR=0,
 * TIF_32BIT_FPREGS): fpregs[2k] = f(2k+1):f(2k) as one 64-bit value, the
 * odd slots unwritten, fpc_csr = FCSR, used_math 1 (tracecorn's processes
 * own the FPU from the start); sigreturn restores them when used_math is
 * set. Elsewhere (Unicorn 2.0.1, 2.1.1 read the FPU as 0) used_math is 0
 * and the FP registers are neither saved nor restored: no made-up
 * values. */
enum {
  M_SC_FPREGS = 272,
  M_SC_FPC_CSR = 532,
  M_SC_USED_MATH = 540,
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

/* The "[sigpage]" trampolines: li v0, 4119 / 4193; syscall. */
static const uint32_t sigpage_code[4] = {0x24021017u, 0x0000000cu, 0x24021061u,
                                         0x0000000cu};

static const char *const mips_regs[32] = {
    "zero", "at", "v0", "v1", "a0", "a1", "a2", "a3", "t0", "t1", "t2",
    "t3",   "t4", "t5", "t6", "t7", "s0", "s1", "s2", "s3", "s4", "s5",
    "s6",   "s7", "t8", "t9", "k0", "k1", "gp", "sp", "fp", "ra"};

/* Whether this process's arch table has the FPU registers (f0 = fN). */
static int mips_fpu_first(tc_emu *emu) {
  return tc_arch_reg_index(emu->arch, "f0");
}

static void mips_fill_sc(tc_emu *emu, uint8_t *sc, const tc_sig_desc *d) {
  const tc_arch *a = emu->arch;
  tc_abi_put(a, sc + 8, 8, d->resume);
  for (int i = 1; i < 32; i++)
    tc_abi_put(a, sc + 16 + 8 * i, 8, tc_linux_reg(emu, mips_regs[i]));
  tc_abi_put(a, sc + 552, 8, tc_linux_reg(emu, "hi"));
  tc_abi_put(a, sc + 560, 8, tc_linux_reg(emu, "lo"));
  int f0 = mips_fpu_first(emu);
  if (f0 < 0)
    return;
  for (int k = 0; k < 32; k += 2) {
    uint64_t lo = tc_emu_reg(emu, f0 + k) & 0xffffffffu;
    uint64_t hi = tc_emu_reg(emu, f0 + k + 1) & 0xffffffffu;
    tc_abi_put(a, sc + M_SC_FPREGS + 8 * k, 8, hi << 32 | lo);
  }
  tc_abi_put(a, sc + M_SC_FPC_CSR, 4, tc_linux_reg(emu, "fcsr"));
  tc_abi_put(a, sc + M_SC_USED_MATH, 4, 1);
}

static void mips_restore_fpu(tc_emu *emu, const uint8_t *sc) {
  const tc_arch *a = emu->arch;
  int f0 = mips_fpu_first(emu);
  if (f0 < 0 || tc_abi_get(a, sc + M_SC_USED_MATH, 4) == 0)
    return;
  for (int k = 0; k < 32; k += 2) {
    uint64_t v = tc_abi_get(a, sc + M_SC_FPREGS + 8 * k, 8);
    tc_emu_set_reg(emu, f0 + k, v & 0xffffffffu);
    tc_emu_set_reg(emu, f0 + k + 1, v >> 32);
  }
  tc_linux_set_reg(emu, "fcsr", tc_abi_get(a, sc + M_SC_FPC_CSR, 4));
}

static int mips_o32_signal_frame(tc_emu *emu, tc_linux_state *st,
                                 const tc_sig_desc *d, uint64_t *frame_at) {
  const tc_arch *a = emu->arch;
  int sig = d->sig;
  uint64_t flags = st->sigact[sig].flags;
  bool rt = (flags & 8u) != 0, on_alt; /* mips SA_SIGINFO is 8 */
  uint64_t sp =
      tc_sigframe_sp(st, flags, tc_linux_reg(emu, "sp") - 32, &on_alt);
  unsigned size = rt ? M_RT_SIGFRAME : M_SIGFRAME;
  uint64_t frame = (sp - size) & ~(uint64_t)7;
  uint8_t f[M_RT_SIGFRAME];
  memset(f, 0, sizeof f);
  uint64_t sc;
  if (rt) {
    tc_sigframe_put_siginfo(emu, f + M_INFO, d);
    tc_sigframe_put_stack(a, f + M_UC + M_UC_STACK, st, on_alt);
    mips_fill_sc(emu, f + M_UC + M_UC_MCTX, d);
    tc_sigframe_put_sigset(a, f + M_UC + M_UC_MASK, d->mask);
    sc = frame + M_UC;
  } else {
    mips_fill_sc(emu, f + M_SC, d);
    tc_sigframe_put_sigset(a, f + M_SF_MASK, d->mask);
    sc = frame + M_SC;
  }
  uint64_t handler = st->sigact[sig].handler;
  /* mips has no sa_restorer: always the trampoline */
  uint64_t ret = tc_sigframe_trampoline(emu, st, rt, sigpage_code);
  if (!ret || tc_emu_write(emu, frame, f, size) < 0)
    return -1;
  tc_linux_set_reg(emu, "a0", (uint64_t)tc_xlat_signal_to_guest(a, sig));
  tc_linux_set_reg(emu, "a1", rt ? frame + M_INFO : 0);
  tc_linux_set_reg(emu, "a2", sc);
  tc_linux_set_reg(emu, "sp", frame);
  tc_linux_set_reg(emu, "ra", ret);
  tc_linux_set_reg(emu, "t9", handler);
  tc_linux_set_reg(emu, "pc", handler);
  *frame_at = frame;
  return 0;
}

static int64_t mips_o32_sigreturn_frame(tc_sys_call *c, bool rt) {
  tc_emu *emu = c->emu;
  const tc_arch *a = emu->arch;
  uint8_t f[M_RT_SIGFRAME];
  uint64_t frame = tc_linux_reg(emu, "sp");
  unsigned size = rt ? M_RT_SIGFRAME : M_SIGFRAME;
  if (tc_sys_read(emu, frame, f, size) < 0)
    return -EFAULT;
  const uint8_t *sc = f + (rt ? M_UC + M_UC_MCTX : M_SC);
  for (int i = 1; i < 32; i++)
    tc_linux_set_reg(emu, mips_regs[i], tc_abi_get(a, sc + 16 + 8 * i, 8));
  tc_linux_set_reg(emu, "hi", tc_abi_get(a, sc + 552, 8));
  tc_linux_set_reg(emu, "lo", tc_abi_get(a, sc + 560, 8));
  mips_restore_fpu(emu, sc);
  tc_linux_set_reg(emu, "pc", tc_abi_get(a, sc + 8, 8));
  c->st->sigmask =
      tc_sigframe_get_sigset(a, f + (rt ? M_UC + M_UC_MASK : M_SF_MASK));
  return 0;
}

static int64_t mips_o32_sigreturn(tc_sys_call *c) {
  return mips_o32_sigreturn_frame(c, false);
}
static int64_t mips_o32_rt_sigreturn(tc_sys_call *c) {
  return mips_o32_sigreturn_frame(c, true);
}

/* set_thread_area: the pointer itself, read back with `rdhwr $29`
 * (UserLocal). */
static int64_t sys_mips_set_thread_area(tc_sys_call *c) {
  int r = tc_arch_reg_index(c->emu->arch, "userlocal");
  if (r < 0)
    return -ENOSYS;
  tc_emu_set_reg(c->emu, r, c->a[0]);
  return 0;
}

/* cacheflush(addr, nbytes, cache): Unicorn notices code writes itself,
 * so there is nothing to flush. The check is arm's (end before start),
 * kept from when both shared one handler; Linux only checks that the
 * range is accessible, so this refuses calls Linux accepts (to fix on its
 * own, with a test). */
static int64_t sys_mips_cacheflush(tc_sys_call *c) {
  if (c->a[1] < c->a[0])
    return -EINVAL;
  return 0;
}

static const tc_sys_entry mips_syscalls[] = {
    {"set_thread_area", sys_mips_set_thread_area},
    {"cacheflush", sys_mips_cacheflush},
    {NULL, NULL},
};

const tc_linux_arch_ops tc_linux_arch_mips_o32 = {
    .uname_machine = "mips",
    .task_size = 0x7fff8000ull,
    .clone_backwards = true,
    .siginfo_swapped = true,
    .ill_code = 0x80, /* do_ri: force_sig(), SI_KERNEL, no address */
    .tls_reg = "userlocal",
    .syscalls = mips_syscalls,
    .signal_frame = mips_o32_signal_frame,
    .sigreturn = mips_o32_sigreturn,
    .rt_sigreturn = mips_o32_rt_sigreturn,
};

/* n64 (mips64el): no signal frames yet, so handlers never run (a notice
 * says so, linux_sys_misc.c). */
const tc_linux_arch_ops tc_linux_arch_mips_n64 = {
    .uname_machine = "mips64",
    .task_size = 0x10000000000ull,
    .clone_backwards = true,
    .siginfo_swapped = true,
    .ill_code = 0x80,
    .tls_reg = "userlocal",
    .syscalls = mips_syscalls,
};
