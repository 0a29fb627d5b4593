/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What Unicorn calls each arch, and a check at compile time that the
 * numbers of the arch folders (common/arch/<arch>/regs-*.inc and
 * engine.inc, which may not include Unicorn) are this Unicorn's: register
 * numbers (also UCIR's wire ids), uc_arch and uc_mode. */
#include <unicorn/unicorn.h>

#include "emu/engine/emu.h"

/* mips+fpu's fir and fcsr (common/arch/mips/regs-mips-fpu.inc): the two
 * numbers after CP0_STATUS in 2.1's header; 2.0.1's and 2.1.1's have
 * neither (tc_engine_mips_fpu_readable is false there), 2.1.4's, measured,
 * both. */
#define UC_MIPS_REG_FIR_ (UC_MIPS_REG_CP0_STATUS + 1)
#define UC_MIPS_REG_FCSR_ (UC_MIPS_REG_CP0_STATUS + 2)
#if UC_API_MAJOR > 2 ||                                                        \
    (UC_API_MAJOR == 2 &&                                                      \
     (UC_API_MINOR > 1 || (UC_API_MINOR == 1 && UC_API_PATCH >= 4)))
_Static_assert(UC_MIPS_REG_FIR == UC_MIPS_REG_FIR_, "Unicorn's FIR number");
_Static_assert(UC_MIPS_REG_FCSR == UC_MIPS_REG_FCSR_, "Unicorn's FCSR number");
#endif

#define TC_REG(name, size, flags, offset, uc, uc_id)                           \
  _Static_assert(UC_##uc == (uc_id), "Unicorn's number of " name);
#include "arch/all_regs.inc"
#undef TC_REG

#define TC_ENGINE_MODES(name, ua, uan, um, umn, ca, can, cm, cmn)              \
  _Static_assert(ua == (uan) && um == (umn), "Unicorn's modes of " #name);
#include "arch/all_engine.inc"
#undef TC_ENGINE_MODES

bool tc_uc_arch_mode(const tc_arch *arch, int *uc_arch, int *uc_mode) {
  *uc_arch = arch->uc_arch;
  *uc_mode = arch->uc_mode | (arch->big_endian ? UC_MODE_BIG_ENDIAN : 0);
  return true;
}
