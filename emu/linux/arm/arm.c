/* SPDX-License-Identifier: GPL-2.0-or-later */
/* arm (EABI, armhf and armel) in the emulated Linux: its signal frames
 * and sigreturns, the kuser helpers page, its private calls (set_tls,
 * get_tls, cacheflush) and its ops table. */
#include <errno.h>
#include <string.h>

#include "common/linux/linux_xlat.h"
#include "emu/linux/linux_arch.h"

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

/* The "[sigpage]" trampolines: mov r7, #119 / #173; svc 0 (A32). */
static const uint32_t sigpage_code[4] = {0xe3a07077u, 0xef000000u, 0xe3a070adu,
                                         0xef000000u};

static const char *const arm_sc_regs[] = {"r0",  "r1",  "r2",  "r3", "r4",
                                          "r5",  "r6",  "r7",  "r8", "r9",
                                          "r10", "r11", "r12", "sp", "lr"};

/* The ucontext of a sigframe: sigcontext, mask, VFP area. */
static void arm_fill_uc(tc_emu *emu, uint8_t *uc, const tc_sig_desc *d) {
  const tc_arch *a = emu->arch;
  uint8_t *m = uc + ARM_UC_MCTX;
  bool undef = d->fault && d->sig == 4;
  tc_abi_put(a, m, 4, undef ? 6 : 0); /* trap_no */
  tc_abi_put(a, m + 8, 4, tc_xlat_sigset_to_guest(a, d->mask) & 0xffffffffu);
  for (int i = 0; i < 15; i++)
    tc_abi_put(a, m + 12 + 4 * i, 4, tc_linux_reg(emu, arm_sc_regs[i]));
  tc_abi_put(a, m + 72, 4, d->resume & ~1ull);
  tc_abi_put(a, m + 76, 4, tc_linux_reg(emu, "cpsr"));
  tc_abi_put(a, m + 80, 4, d->fault && !undef ? d->addr : 0);
  tc_sigframe_put_sigset(a, uc + ARM_UC_MASK, d->mask);
  uint8_t *v = uc + ARM_UC_REGSPACE;
  tc_abi_put(a, v, 4, ARM_VFP_MAGIC);
  tc_abi_put(a, v + 4, 4, ARM_VFP_SIZE);
  tc_linux_reg_bank(emu, "d", 8, v + 8, true);
  tc_abi_put(a, v + 264, 4, tc_linux_reg(emu, "fpscr"));
  tc_abi_put(a, v + 272, 4, 0x40000000u); /* fpexc: VFP enabled */
  /* end_magic 0 at +288 */
}

static int arm_signal_frame(tc_emu *emu, tc_linux_state *st,
                            const tc_sig_desc *d, uint64_t *frame_at) {
  const tc_arch *a = emu->arch;
  int sig = d->sig;
  uint64_t flags = st->sigact[sig].flags;
  bool rt = (flags & 4u) != 0, on_alt;
  uint64_t sp = tc_sigframe_sp(st, flags, tc_linux_reg(emu, "sp"), &on_alt);
  unsigned size = rt ? ARM_RT_SIGFRAME : ARM_SIGFRAME;
  uint64_t frame = (sp - size) & ~(uint64_t)7;
  uint8_t f[ARM_RT_SIGFRAME];
  memset(f, 0, sizeof f);
  uint8_t *uc = f + (rt ? 128 : 0);
  if (rt) {
    tc_sigframe_put_siginfo(emu, f, d);
    tc_sigframe_put_stack(a, uc + ARM_UC_STACK, st, on_alt);
  } else {
    tc_abi_put(a, uc, 4, 0x5ac3c35au); /* never a trap_no: the old frame */
  }
  arm_fill_uc(emu, uc, d);
  uint64_t handler = st->sigact[sig].handler;
  uint64_t ret = tc_sigframe_return_address(emu, st, sig, rt, sigpage_code);
  if (!ret || tc_emu_write(emu, frame, f, size) < 0)
    return -1;
  /* flags cleared, IT state cleared, T from the handler's bit 0 */
  uint64_t cpsr = tc_linux_reg(emu, "cpsr") &
                  ~(uint64_t)(0xff000000u | 0x0600fc00u | 0x200u | ARM_CPSR_T);
  if (handler & 1)
    cpsr |= ARM_CPSR_T;
  tc_linux_set_reg(emu, "r0", (uint64_t)tc_xlat_signal_to_guest(a, sig));
  if (rt) {
    tc_linux_set_reg(emu, "r1", frame);
    tc_linux_set_reg(emu, "r2", frame + 128);
  }
  tc_linux_set_reg(emu, "sp", frame);
  tc_linux_set_reg(emu, "lr", ret);
  tc_linux_set_reg(emu, "cpsr", cpsr);
  /* bit 0 selects Thumb, as the CPSR says */
  tc_linux_set_reg(emu, "pc", handler);
  *frame_at = frame;
  return 0;
}

static int64_t arm_sigreturn_frame(tc_sys_call *c, bool rt) {
  tc_emu *emu = c->emu;
  const tc_arch *a = emu->arch;
  uint8_t uc[ARM_UC_SIZE];
  uint64_t frame = tc_linux_reg(emu, "sp");
  if ((frame & 7) ||
      tc_sys_read(emu, frame + (rt ? 128 : 0), uc, sizeof uc) < 0)
    return -EFAULT;
  const uint8_t *m = uc + ARM_UC_MCTX;
  for (int i = 0; i < 15; i++)
    tc_linux_set_reg(emu, arm_sc_regs[i], tc_abi_get(a, m + 12 + 4 * i, 4));
  uint64_t cpsr = tc_abi_get(a, m + 76, 4);
  tc_linux_set_reg(emu, "cpsr",
                   (tc_linux_reg(emu, "cpsr") & ~(uint64_t)ARM_CPSR_USER) |
                       (cpsr & ARM_CPSR_USER));
  tc_linux_set_reg(emu, "pc",
                   (tc_abi_get(a, m + 72, 4) & ~1ull) |
                       ((cpsr & ARM_CPSR_T) ? 1 : 0));
  const uint8_t *v = uc + ARM_UC_REGSPACE;
  if (tc_abi_get(a, v, 4) == ARM_VFP_MAGIC &&
      tc_abi_get(a, v + 4, 4) == ARM_VFP_SIZE) {
    tc_linux_reg_bank(emu, "d", 8, (uint8_t *)v + 8, false); /* only read */
    tc_linux_set_reg(emu, "fpscr", tc_abi_get(a, v + 264, 4));
  }
  c->st->sigmask = tc_sigframe_get_sigset(a, uc + ARM_UC_MASK);
  return 0;
}

static int64_t arm_sigreturn(tc_sys_call *c) {
  return arm_sigreturn_frame(c, false);
}
static int64_t arm_rt_sigreturn(tc_sys_call *c) {
  return arm_sigreturn_frame(c, true);
}

/* The arm vectors page: Linux's kuser helpers at their fixed addresses
 * (Documentation/arm/kernel_user_helpers.rst), which ARMv5-baseline code
 * (Debian armel's glibc) calls for TLS and atomics. ARM-state code,
 * assembled from the kernel's SMP versions (ldrex/strex). */
static const struct {
  uint32_t offset;
  uint32_t words[13];
  unsigned n;
} kuser_helpers[] = {
    {0xf60, /* __kuser_cmpxchg64 */
     {0xe92d00f0, 0xe1c040d0, 0xe1c160d0, 0xe1b20f9f, 0xe0303004, 0x00313005,
      0x01a23f96, 0x03330001, 0x0afffff9, 0xe2730000, 0xe8bd00f0, 0xe12fff1e},
     12},
    {0xfa0, {0xf57ff05b, 0xe12fff1e}, 2}, /* __kuser_memory_barrier */
    {0xfc0,                               /* __kuser_cmpxchg */
     {0xe1923f9f, 0xe0533000, 0x01823f91, 0x03330001, 0x0afffffa, 0xe2730000,
      0xe12fff1e},
     7},
    {0xfe0, {0xee1d0f70, 0xe12fff1e}, 2}, /* __kuser_get_tls */
    {0xffc, {5}, 1},                      /* __kuser_helper_version */
};

#define TC_ARM_VECTORS 0xffff0000ull

static int arm_map_vectors(tc_emu *emu) {
  int r = tc_emu_map(emu, TC_ARM_VECTORS, 4096, TC_PROT_READ | TC_PROT_EXEC,
                     "[vectors]", 0);
  if (r < 0)
    return r;
  for (size_t i = 0; i < sizeof kuser_helpers / sizeof kuser_helpers[0]; i++)
    for (unsigned k = 0; k < kuser_helpers[i].n; k++) {
      uint8_t b[4];
      tc_abi_put(emu->arch, b, 4, kuser_helpers[i].words[k]);
      if (tc_emu_write(emu, TC_ARM_VECTORS + kuser_helpers[i].offset + 4 * k, b,
                       4) < 0)
        return -EFAULT;
    }
  return 0;
}

/* ------------------------------------------------- arm private calls */

/* set_tls (0xf0005): the thread pointer user code reads with
 * `mrc p15, 0, rN, c13, c0, 3` (TPIDRURO). */
static int64_t sys_arm_set_tls(tc_sys_call *c) {
  int r = tc_arch_reg_index(c->emu->arch, "tpidruro");
  if (r < 0)
    return -ENOSYS;
  tc_emu_set_reg(c->emu, r, c->a[0] & 0xffffffffu);
  return 0;
}

static int64_t sys_arm_get_tls(tc_sys_call *c) {
  int r = tc_arch_reg_index(c->emu->arch, "tpidruro");
  return r < 0 ? -ENOSYS : (int64_t)tc_emu_reg(c->emu, r);
}

/* cacheflush (0xf0002): Unicorn notices code writes itself (the recorder
 * drops stale decodes on writes to executable pages), so only the range
 * check remains. */
static int64_t sys_arm_cacheflush(tc_sys_call *c) {
  if (c->a[1] < c->a[0])
    return -EINVAL;
  return 0;
}

static const tc_sys_entry arm_syscalls[] = {
    {"set_tls", sys_arm_set_tls},
    {"get_tls", sys_arm_get_tls},
    {"cacheflush", sys_arm_cacheflush},
    {NULL, NULL},
};

const tc_linux_arch_ops tc_linux_arch_arm = {
    .uname_machine = "armv7l",
    .task_size = 0xbf000000ull,
    .uid16 = true,
    .clone_backwards = true,
    .ill_code = 1, /* ILL_ILLOPC (do_undefinstr) */
    .tls_reg = "tpidruro",
    .syscalls = arm_syscalls,
    .process_init = arm_map_vectors,
    .signal_frame = arm_signal_frame,
    .sigreturn = arm_sigreturn,
    .rt_sigreturn = arm_rt_sigreturn,
};
