/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The engine's arm and arm64, as QEMU's target/arm/ holds both
 * (tc_engine_arch_ops, emu/engine/emu.h): the CPU state Linux starts a
 * process with, exceptions as signals, Thumb. */
#include <signal.h>
#include <unicorn/unicorn.h>

#include "common/arch.h"
#include "emu/engine/emu.h"

static void start_state_arm(tc_emu *emu) {
  /* Linux enables VFP/NEON for user processes (FPEXC.EN); Unicorn's reset
   * leaves it off and hard-float code would fault. */
  uint32_t fpexc = 0x40000000u;
  uc_reg_write(emu->uc, UC_ARM_REG_FPEXC, &fpexc);
  /* User mode (Unicorn resets into SVC mode), interrupts enabled: the CPSR
   * a Linux process starts with. */
  uint32_t cpsr = 0x10;
  uc_reg_write(emu->uc, UC_ARM_REG_CPSR, &cpsr);
}

static void start_state_arm64(tc_emu *emu) {
  /* CPACR_EL1.FPEN = 0b11: FP/SIMD accessible, as Linux sets it. */
  uint64_t cpacr = 3ull << 20;
  uc_reg_write(emu->uc, UC_ARM64_REG_CPACR_EL1, &cpacr);
}

/* QEMU's ARM exception numbers (target/arm/cpu.h), as Unicorn reports
 * them to UC_HOOK_INTR, for both arm and arm64. */
static int intr_signal(tc_emu *emu, uint32_t intno, tc_fault_kind *kind) {
  (void)emu;
  switch (intno) {
  case 1: /* EXCP_UDEF */
    *kind = TC_FAULT_INVALID_INSN;
    return SIGILL;
  case 3: /* EXCP_PREFETCH_ABORT */
    *kind = TC_FAULT_PROT_FETCH;
    return SIGSEGV;
  case 4: /* EXCP_DATA_ABORT (alignment faults included) */
    *kind = TC_FAULT_OTHER;
    return SIGSEGV;
  case 7: /* EXCP_BKPT */
    *kind = TC_FAULT_OTHER;
    return SIGTRAP;
  default:
    *kind = TC_FAULT_OTHER;
    return SIGILL;
  }
}

static bool thumb(tc_emu *emu) {
  return (tc_emu_reg(emu, emu->arch->flags_reg) & 0x20) != 0; /* CPSR.T */
}

const tc_engine_arch_ops tc_engine_arm = {
    .start_state = start_state_arm,
    .intr_signal = intr_signal,
    .thumb = thumb,
};

const tc_engine_arch_ops tc_engine_arm64 = {
    .start_state = start_state_arm64,
    .intr_signal = intr_signal,
};
