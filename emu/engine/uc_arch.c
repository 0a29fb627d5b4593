/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What Unicorn calls each arch: its uc_arch and uc_mode, and a check at
 * compile time that the register numbers of the arch tables
 * (common/arch/regs-*.inc, which may not include Unicorn) are this
 * Unicorn's. */
#include <unicorn/unicorn.h>

#include "emu/engine/emu.h"

#define TC_REG(name, size, flags, offset, uc, uc_id)                           \
  _Static_assert(UC_##uc == (uc_id), "Unicorn's number of " name);
#include "common/arch/regs-arm.inc"
#include "common/arch/regs-arm64.inc"
#include "common/arch/regs-mips.inc"
#include "common/arch/regs-mips64.inc"
#include "common/arch/regs-sparc64.inc"
#include "common/arch/regs-x86.inc"
#include "common/arch/regs-x86_64.inc"
#undef TC_REG

bool tc_uc_arch_mode(const tc_arch *arch, int *uc_arch, int *uc_mode) {
  int a, m;
  switch (arch->id) {
  case TC_ARCH_X86_64:
    a = UC_ARCH_X86, m = UC_MODE_64;
    break;
  case TC_ARCH_X86:
    a = UC_ARCH_X86, m = UC_MODE_32;
    break;
  case TC_ARCH_ARM: /* A32 and Thumb: CPSR.T selects */
    a = UC_ARCH_ARM, m = UC_MODE_ARM;
    break;
  case TC_ARCH_ARM64:
    a = UC_ARCH_ARM64, m = UC_MODE_ARM;
    break;
  case TC_ARCH_MIPS:
  case TC_ARCH_MIPSEL:
    a = UC_ARCH_MIPS, m = UC_MODE_MIPS32;
    break;
  case TC_ARCH_MIPS64EL:
    a = UC_ARCH_MIPS, m = UC_MODE_MIPS64;
    break;
  case TC_ARCH_SPARC64:
  case TC_ARCH_SPARC: /* V8+ code: the V8 models stop at V9 instructions */
    a = UC_ARCH_SPARC, m = UC_MODE_SPARC64;
    break;
  default:
    return false;
  }
  *uc_arch = a;
  *uc_mode = m | (arch->big_endian ? UC_MODE_BIG_ENDIAN : 0);
  return true;
}
