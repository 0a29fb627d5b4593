/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The engine's arch tables (tc_engine_arch_ops), each defined in its
 * folder, emu/engine/<arch>/, by the arch's id: the one list of arches
 * (common/arch/arches.def) expanded with the engine's names. */
#include "common/arch.h"
#include "emu/engine/emu.h"

/* An arch with no engine folder (none in the list): nothing of its own. */
const tc_engine_arch_ops tc_engine_none;

#define TC_ARCH(id, desc, engine, kernel)                                      \
  extern const tc_engine_arch_ops tc_engine_##engine;
#include "common/arch/arches.def"
#undef TC_ARCH

static const tc_engine_arch_ops *const tables[] = {
#define TC_ARCH(id, desc, engine, kernel) [TC_ARCH_##id] = &tc_engine_##engine,
#include "common/arch/arches.def"
#undef TC_ARCH
};

const tc_engine_arch_ops *tc_engine_arch_ops_of(const tc_arch *arch) {
  unsigned id = (unsigned)arch->id;
  return id < sizeof tables / sizeof *tables && tables[id] ? tables[id]
                                                           : &tc_engine_none;
}
