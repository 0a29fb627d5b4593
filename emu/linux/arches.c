/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The registry of the emulated Linux's arches: the one list of arches
 * (common/arch/arches.def) expanded with the kernel's names, mapping each
 * id to the ops table its folder emu/linux/<arch>/ defines. */
#include "emu/linux/linux_arch.h"

/* An arch with no folder (none in the list): uname's machine is its name,
 * user space the pointer size's, clone takes (flags, sp, ptid, tls, ctid)
 * as most arches do, no frames (no handler runs), nothing of its own. */
const tc_linux_arch_ops tc_linux_arch_none = {.clone_backwards = true,
                                              .ill_code = 2};

#define TC_ARCH(id, desc, engine, kernel)                                      \
  extern const tc_linux_arch_ops tc_linux_arch_##kernel;
#include "common/arch/arches.def"
#undef TC_ARCH

static const tc_linux_arch_ops *const arches[] = {
#define TC_ARCH(id, desc, engine, kernel)                                      \
  [TC_ARCH_##id] = &tc_linux_arch_##kernel,
#include "common/arch/arches.def"
#undef TC_ARCH
};

const tc_linux_arch_ops *tc_linux_arch_of(const tc_arch *arch) {
  unsigned id = (unsigned)arch->id;
  if (id < sizeof arches / sizeof *arches && arches[id])
    return arches[id];
  return &tc_linux_arch_none;
}
