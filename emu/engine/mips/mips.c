/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The engine's mips: o32 (mips, mipsel) and n64 (mips64el)
 * (tc_engine_arch_ops, emu/engine/emu.h): the CPU model and state Linux
 * gives a 64-bit process, exceptions as signals. */
#include <signal.h>
#include <stdio.h>
#include <unicorn/unicorn.h>

#include "common/arch.h"
#include "common/byteorder.h"
#include "emu/engine/emu.h"

/* Debian's mips64el baseline is MIPS64r2; Unicorn's default model (an
 * R4000) lacks rdhwr and more. */
static void cpu_model_n64(tc_emu *emu) {
  uc_ctl_set_cpu_model(emu->uc, UC_CPU_MIPS64_MIPS64R2_GENERIC);
  tc_emu_virtual_tlb(emu->uc);
  /* the engine defects the run detects (probes.c; intr_defect_n64 and the
   * recorder's ds_replay) */
  emu->mips_ds_guard = tc_engine_mips64_ds_defect();
  emu->mips_ll_guard = tc_engine_mips64_ll_defect();
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

/* mips64el's engine defects found at run time (emu->mips_ll_guard and
 * mips_ds_guard, set where the probes found them; docs/arches.md): the
 * recording ends at the instruction, which does not run, with one line
 * naming the defect (the CLI's status 125), the trace kept up to there,
 * instead of going on with what Linux would not do. */

static uint32_t word_at(tc_emu *emu, uint64_t pc, bool *ok) {
  uint8_t b[4];
  *ok = tc_emu_read(emu, pc, b, 4) == 0;
  return (uint32_t)b[3] << 24 | (uint32_t)b[2] << 16 | (uint32_t)b[1] << 8 |
         b[0]; /* mips64el only */
}

/* A branch or jump with a delay slot (recorder/decode.c's guards). */
static bool is_branch(uint32_t w) {
  unsigned op = w >> 26, rs = (w >> 21) & 31, rt = (w >> 16) & 31;
  switch (op) {
  case 0x00:
    return (w & 0x3f) == 0x08 || (w & 0x3f) == 0x09;
  case 0x01:
    return (rt & 0x0c) == 0 || rt == 0x1c || rt == 0x1d;
  case 0x02:
  case 0x03:
  case 0x04:
  case 0x05:
  case 0x06:
  case 0x07:
  case 0x14:
  case 0x15:
  case 0x16:
  case 0x17:
  case 0x1d:
    return true;
  case 0x11:
  case 0x12:
    return rs == 0x08 || rs == 0x09 || rs == 0x0a;
  default:
    return false;
  }
}

static bool stop_defect(tc_emu *emu, const char *what, const char *issue) {
  snprintf(emu->unsupported, sizeof emu->unsupported,
           "this Unicorn (%s) %s at 0x%llx (upstream issue %s); the "
           "recording ends there",
           tc_engine_version(), what, (unsigned long long)emu->cur_pc, issue);
  uc_emu_stop(emu->uc);
  return true;
}

static bool intr_defect_n64(tc_emu *emu, uint32_t intno) {
  bool ok;
  /* EXCP_AdEL (the probe's ll in its code page), EXCP_TLBL (glibc's ll on
   * a data page) */
  if ((intno == 12 || intno == 26) && emu->mips_ll_guard) {
    uint32_t w = word_at(emu, emu->cur_pc, &ok);
    unsigned op = w >> 26;
    if (!ok || (op != 0x30 && op != 0x34)) /* ll, lld */
      return false;
    uint64_t ea = tc_emu_reg(emu, (w >> 21) & 31) + (uint64_t)(int16_t)w;
    uint8_t probe;
    /* unaligned or unmapped: the program's own fault */
    if ((ea & (op == 0x30 ? 3 : 7)) || tc_emu_read(emu, ea, &probe, 1) < 0)
      return false;
    return stop_defect(emu,
                       op == 0x30 ? "raises an exception for ll at 0x80000000 "
                                    "and above under its virtual TLB"
                                  : "raises an exception for lld at "
                                    "0x80000000 and above under its virtual "
                                    "TLB",
                       "#2345");
  }
  if (!emu->mips_ds_guard || emu->cur_pc != emu->mips_fads_pc)
    return false;
  /* The first instruction after a branch's delay slot that accessed
   * memory (taken or not), where the engine may have left the delay-slot
   * flags set. */
  uint32_t w = word_at(emu, emu->cur_pc, &ok);
  if (intno == 20 && ok && is_branch(w)) /* EXCP_RI at a valid branch */
    return stop_defect(emu,
                       "makes the branch after a delay slot that accessed "
                       "memory a reserved instruction",
                       "#2272");
  if (intno == 17) /* EXCP_SYSCALL: would run again after the next one */
    return stop_defect(emu,
                       "cannot run a syscall right after a delay slot that "
                       "accessed memory",
                       "#2272");
  return false;
}

const tc_engine_arch_ops tc_engine_mips_o32 = {
    .intr_signal = intr_signal,
};

const tc_engine_arch_ops tc_engine_mips_n64 = {
    .cpu_model = cpu_model_n64,
    .start_state = start_state_n64,
    .intr_signal = intr_signal,
    .intr_defect = intr_defect_n64,
};

/* lwl..sd, ll..sdc2, pref and cache included (major opcodes 0x20 and up),
 * COP1X's indexed loads and stores (0x13), ldl/ldr (0x1a, 0x1b). */
bool tc_engine_mips_memory_insn(const tc_arch *arch, const uint8_t *insn) {
  unsigned op = (unsigned)(get_uint(insn, 4, arch->big_endian) >> 26);
  return op >= 0x20 || op == 0x1a || op == 0x1b || op == 0x13;
}
