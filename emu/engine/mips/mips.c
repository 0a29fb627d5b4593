/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The engine's mips: o32 (mips, mipsel) and n64 (mips64el)
 * (tc_engine_arch_ops, emu/engine/emu.h): the CPU model and state Linux
 * gives a 64-bit process, exceptions as signals. */
#include <signal.h>
#include <unicorn/unicorn.h>

#include "common/arch.h"
#include "emu/engine/emu.h"

/* Debian's mips64el baseline is MIPS64r2; Unicorn's default model (an
 * R4000) lacks rdhwr and more. */
static void cpu_model_n64(tc_emu *emu) {
  uc_ctl_set_cpu_model(emu->uc, UC_CPU_MIPS64_MIPS64R2_GENERIC);
  tc_emu_virtual_tlb(emu->uc);
}

static void start_state_n64(tc_emu *emu) {
  /* CU1 (FPU usable), FR (64-bit FP registers, as n64 wants) and UX/SX/KX
   * (64-bit addressing): what Linux gives a 64-bit process. ERL off, or
   * Unicorn folds user addresses to 32 bits. */
  uint64_t status = 0;
  uc_reg_read(emu->uc, UC_MIPS_REG_CP0_STATUS, &status);
  status |= (1u << 29) | (1u << 26) | 0xe0;
  status &= ~(uint64_t)(1u << 2);
  uc_reg_write(emu->uc, UC_MIPS_REG_CP0_STATUS, &status);
}

/* QEMU's MIPS exception numbers (target/mips/cpu.h), as Unicorn reports
 * them. `break` and trap instructions carry a code: 6 and 7 are the
 * compiler's overflow and divide-by-zero checks, which Linux turns into
 * SIGFPE. */
static int intr_signal(tc_emu *emu, uint32_t intno, tc_fault_kind *kind) {
  *kind = TC_FAULT_OTHER;
  switch (intno) {
  case 12: /* EXCP_AdEL: unaligned or kernel-space load */
  case 13: /* EXCP_AdES */
  case 15: /* EXCP_IBE */
  case 28: /* EXCP_DBE */
    return SIGBUS;
  case 19: /* EXCP_CpU */
  case 20: /* EXCP_RI */
    *kind = TC_FAULT_INVALID_INSN;
    return SIGILL;
  case 21: /* EXCP_OVERFLOW */
  case 23: /* EXCP_FPE */
    *kind = TC_FAULT_DIVIDE;
    return SIGFPE;
  case 18:   /* EXCP_BREAK */
  case 22: { /* EXCP_TRAP */
    uint8_t b[4];
    uint32_t code = 0;
    if (tc_emu_read(emu, emu->cur_pc, b, 4) == 0) {
      uint32_t w = emu->arch->big_endian
                       ? (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 |
                             (uint32_t)b[2] << 8 | b[3]
                       : (uint32_t)b[3] << 24 | (uint32_t)b[2] << 16 |
                             (uint32_t)b[1] << 8 | b[0];
      code = intno == 18 ? (w >> 16) & 0x3ff : (w >> 6) & 0x3ff;
    }
    if (code == 6 || code == 7) {
      *kind = TC_FAULT_DIVIDE;
      return SIGFPE;
    }
    return SIGTRAP;
  }
  default:
    return SIGSEGV;
  }
}

const tc_engine_arch_ops tc_engine_mips_o32 = {
    .intr_signal = intr_signal,
};

const tc_engine_arch_ops tc_engine_mips_n64 = {
    .cpu_model = cpu_model_n64,
    .start_state = start_state_n64,
    .intr_signal = intr_signal,
};
