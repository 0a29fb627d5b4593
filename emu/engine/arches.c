/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The engine's arch tables (tc_engine_arch_ops): one line per arch, each
 * defined in its folder, emu/engine/<arch>/. */
#include "common/arch.h"
#include "emu/engine/emu.h"

extern const tc_engine_arch_ops tc_engine_x86_64, tc_engine_i386, tc_engine_arm,
    tc_engine_arm64, tc_engine_mips_o32, tc_engine_mips_n64, tc_engine_sparc64;

static const tc_engine_arch_ops *const tables[] = {
    [TC_ARCH_X86_64] = &tc_engine_x86_64,
    [TC_ARCH_X86] = &tc_engine_i386,
    [TC_ARCH_ARM] = &tc_engine_arm,
    [TC_ARCH_ARM64] = &tc_engine_arm64,
    [TC_ARCH_MIPS] = &tc_engine_mips_o32,
    [TC_ARCH_MIPSEL] = &tc_engine_mips_o32,
    [TC_ARCH_MIPS64EL] = &tc_engine_mips_n64,
    [TC_ARCH_SPARC64] = &tc_engine_sparc64,
};

const tc_engine_arch_ops *tc_engine_arch_ops_of(const tc_arch *arch) {
  static const tc_engine_arch_ops none;
  unsigned id = (unsigned)arch->id;
  return id < sizeof tables / sizeof *tables && tables[id] ? tables[id] : &none;
}
