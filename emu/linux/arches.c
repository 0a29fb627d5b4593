/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The registry of the emulated Linux's arches: one line per arch, mapping
 * its id to the ops table its folder emu/linux/<arch>/ defines. */
#include "emu/linux/linux_arch.h"

static const tc_linux_arch_ops *const arches[] = {
    [TC_ARCH_X86_64] = &tc_linux_arch_x86_64,
    [TC_ARCH_X86] = &tc_linux_arch_i386,
    [TC_ARCH_ARM] = &tc_linux_arch_arm,
    [TC_ARCH_ARM64] = &tc_linux_arch_arm64,
    [TC_ARCH_MIPS] = &tc_linux_arch_mips_o32,
    [TC_ARCH_MIPSEL] = &tc_linux_arch_mips_o32,
    [TC_ARCH_MIPS64EL] = &tc_linux_arch_mips_n64,
};

/* An arch with no folder: uname's machine is its name, user space the
 * pointer size's, clone takes (flags, sp, ptid, tls, ctid) as most arches
 * do, no frames (no handler runs), nothing of its own. */
static const tc_linux_arch_ops no_ops = {.clone_backwards = true,
                                         .ill_code = 2};

const tc_linux_arch_ops *tc_linux_arch_of(const tc_arch *arch) {
  unsigned id = (unsigned)arch->id;
  if (id < sizeof arches / sizeof *arches && arches[id])
    return arches[id];
  return &no_ops;
}
