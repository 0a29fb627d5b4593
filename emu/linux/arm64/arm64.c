/* SPDX-License-Identifier: GPL-2.0-or-later */
/* arm64 in the emulated Linux: its signal frame and rt_sigreturn, and its
 * ops table. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "common/linux/linux_xlat.h"
#include "emu/linux/linux_arch.h"

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

/* The "[sigpage]" trampolines: mov x8, #139; svc #0 (rt only). */
static const uint32_t sigpage_code[4] = {0xd2801168u, 0xd4000001u, 0xd2801168u,
                                         0xd4000001u};

static int arm64_signal_frame(tc_emu *emu, tc_linux_state *st,
                              const tc_sig_desc *d, uint64_t *frame_at) {
  const tc_arch *a = emu->arch;
  int sig = d->sig;
  uint64_t flags = st->sigact[sig].flags;
  bool on_alt;
  uint64_t sp = tc_sigframe_sp(st, flags, tc_linux_reg(emu, "sp"), &on_alt);
  uint64_t rec = (sp - 16) & ~(uint64_t)15;
  uint64_t frame = rec - A64_FRAME;
  uint8_t f[A64_FRAME];
  uint8_t r16[16];
  memset(f, 0, sizeof f);
  tc_sigframe_put_siginfo(emu, f, d);
  tc_sigframe_put_stack(a, f + A64_UC_STACK, st, on_alt);
  tc_sigframe_put_sigset(a, f + A64_UC_MASK, d->mask);
  uint8_t *m = f + A64_MCTX;
  tc_abi_put(a, m, 8, d->fault ? d->addr : 0);
  char n[8];
  for (int i = 0; i < 31; i++) {
    snprintf(n, sizeof n, "x%d", i);
    tc_abi_put(a, m + 8 + 8 * i, 8, tc_linux_reg(emu, n));
  }
  tc_abi_put(a, m + 256, 8, tc_linux_reg(emu, "sp"));
  tc_abi_put(a, m + 264, 8, d->resume);
  tc_abi_put(a, m + 272, 8, tc_linux_reg(emu, "nzcv") & 0xf0000000u);
  uint8_t *fp = f + A64_RES;
  tc_abi_put(a, fp, 4, A64_FPSIMD_MAGIC);
  tc_abi_put(a, fp + 4, 4, A64_FPSIMD_SIZE);
  tc_abi_put(a, fp + 8, 4, tc_linux_reg(emu, "fpsr"));
  tc_abi_put(a, fp + 12, 4, tc_linux_reg(emu, "fpcr"));
  tc_linux_reg_bank(emu, "v", 16, fp + 16, true);
  /* the terminator {0, 0} follows at A64_RES + 528: already zero */
  tc_abi_put(a, r16, 8, tc_linux_reg(emu, "x29"));
  tc_abi_put(a, r16 + 8, 8, tc_linux_reg(emu, "x30"));
  uint64_t ret = tc_sigframe_return_address(emu, st, sig, true, sigpage_code);
  if (!ret || tc_emu_write(emu, rec, r16, sizeof r16) < 0 ||
      tc_emu_write(emu, frame, f, sizeof f) < 0)
    return -1;
  tc_linux_set_reg(emu, "x0", (uint64_t)tc_xlat_signal_to_guest(a, sig));
  if (flags & 4u) { /* SA_SIGINFO */
    tc_linux_set_reg(emu, "x1", frame);
    tc_linux_set_reg(emu, "x2", frame + A64_UC);
  }
  tc_linux_set_reg(emu, "sp", frame);
  tc_linux_set_reg(emu, "x29", rec);
  tc_linux_set_reg(emu, "x30", ret);
  tc_linux_set_reg(emu, "pc", st->sigact[sig].handler);
  *frame_at = frame;
  return 0;
}

static int64_t arm64_rt_sigreturn(tc_sys_call *c) {
  tc_emu *emu = c->emu;
  const tc_arch *a = emu->arch;
  uint8_t f[A64_FRAME - A64_UC];
  uint64_t frame = tc_linux_reg(emu, "sp");
  if ((frame & 15) || tc_sys_read(emu, frame + A64_UC, f, sizeof f) < 0)
    return -EFAULT;
  const uint8_t *m = f + (A64_MCTX - A64_UC);
  char n[8];
  for (int i = 0; i < 31; i++) {
    snprintf(n, sizeof n, "x%d", i);
    tc_linux_set_reg(emu, n, tc_abi_get(a, m + 8 + 8 * i, 8));
  }
  tc_linux_set_reg(emu, "sp", tc_abi_get(a, m + 256, 8));
  tc_linux_set_reg(emu, "pc", tc_abi_get(a, m + 264, 8));
  tc_linux_set_reg(emu, "nzcv", tc_abi_get(a, m + 272, 8) & 0xf0000000u);
  const uint8_t *fp = f + (A64_RES - A64_UC);
  if (tc_abi_get(a, fp, 4) == A64_FPSIMD_MAGIC &&
      tc_abi_get(a, fp + 4, 4) == A64_FPSIMD_SIZE) {
    tc_linux_set_reg(emu, "fpsr", tc_abi_get(a, fp + 8, 4));
    tc_linux_set_reg(emu, "fpcr", tc_abi_get(a, fp + 12, 4));
    tc_linux_reg_bank(emu, "v", 16, (uint8_t *)fp + 16, false); /* only read */
  }
  c->st->sigmask = tc_sigframe_get_sigset(a, f + (A64_UC_MASK - A64_UC));
  return 0;
}

const tc_linux_arch_ops tc_linux_arch_arm64 = {
    .uname_machine = "aarch64",
    .task_size = 0x800000000000ull,
    .clone_backwards = true,
    .ill_code = 1, /* ILL_ILLOPC (do_undefinstr) */
    .tls_reg = "tpidr_el0",
    .signal_frame = arm64_signal_frame,
    .rt_sigreturn = arm64_rt_sigreturn,
};
