/* SPDX-License-Identifier: GPL-2.0-or-later */
/* arm64 (AArch64): registers, syscall ABI, ELF identity, engine modes,
 * process layout, capstone's register names. */
#include <stdio.h>
#include <string.h>

#define TC_REG(name, size, flags, offset, uc, uc_id)                           \
  {name, size, flags, offset, uc_id},
#include "common/arch.h"

extern const struct tc_linux_abi tc_linux_abi_arm64;

#define TC_ENGINE_MODES TC_ENGINE_MODES_AS_ENUM
#include "common/arch/arm64/engine.inc"
#undef TC_ENGINE_MODES

/* Syscall numbers and names (tools/gen_sysnames.sh). */
static const tc_syscall_name sysnames_arm64[] = {
#include "common/arch/arm64/sysnames-arm64.inc"
};

static const tc_reg_info regs_arm64[] = {
#include "common/arch/arm64/regs-arm64.inc"
};
/* state image: 796 bytes, 69 registers */

enum { A64_X0 = 0, A64_X8 = 8, A64_SP = 31, A64_PC = 32, A64_NZCV = 33 };

static int from_capstone_arm64(const tc_arch *arch, const char *name,
                               int *second);

/* filter --reg's names for arm64's registers: wN -> xN, lr, fp. */
static int alias_arm64(const char *low, char *alias, size_t n) {
  if (low[0] == 'w')
    snprintf(alias, n, "x%s", low + 1);
  else if (strcmp(low, "lr") == 0)
    snprintf(alias, n, "x30");
  else if (strcmp(low, "fp") == 0)
    snprintf(alias, n, "x29");
  else
    return 0;
  return 1;
}

const tc_arch tc_arch_desc_arm64 = {
    .id = TC_ARCH_ARM64,
    .name = "arm64",
    .big_endian = 0,
    .ptr_size = 8,
    .page_size = 4096,
    .max_insn_size = 4,
    .regs = regs_arm64,
    .nregs = TC_ARCH_COUNT(regs_arm64),
    .pc_reg = A64_PC,
    .sp_reg = A64_SP,
    .flags_reg = A64_NZCV,
    .state_size = 796,
    .sys = {.traps = {{TC_TRAP_INTR, 2, 0, 0}},
            .nr_reg = A64_X8,
            .arg_regs = {A64_X0, A64_X0 + 1, A64_X0 + 2, A64_X0 + 3, A64_X0 + 4,
                         A64_X0 + 5},
            .ret_reg = A64_X0,
            .err_reg = -1,
            .names = sysnames_arm64,
            .nnames = TC_ARCH_COUNT(sysnames_arm64)},
    .elf_platform = "aarch64",
    .elf_machine = 183, /* EM_AARCH64 */
    .aliases = (const char *const[]){"aarch64", NULL},
    .uc_arch = arm64_uc_arch,
    .uc_mode = arm64_uc_mode,
    .cs_arch = arm64_cs_arch,
    .cs_mode = arm64_cs_mode,
    .stack_top = 0x7ffffffff000ull,
    .mmap_top = 0x7ffff7fff000ull,
    /* FP ASIMD only; glibc then picks the generic string functions */
    .hwcap = 0x1ull | 0x2,
    .stack_align = 16,
    .reg_from_capstone = from_capstone_arm64,
    .linux_abi = &tc_linux_abi_arm64,
    .traits = {.link_reg = "x30",
               .vstatus_reg = "fpsr",
               .parallel = true,
               .reg_alias = alias_arm64,
               .sys = {.ill_code = "ILL_ILLOPC"}},
};

/* arm64 names as capstone spells them: wN is the low half of xN;
 * b/h/s/d/qN are parts of vN. */
static int from_capstone_arm64(const tc_arch *arch, const char *name,
                               int *second) {
  (void)second;
  unsigned n;
  char buf[16];
  if (strcmp(name, "wsp") == 0)
    return tc_arch_reg_index(arch, "sp");
  if (strcmp(name, "fp") == 0)
    return tc_arch_reg_index(arch, "x29");
  if (strcmp(name, "lr") == 0)
    return tc_arch_reg_index(arch, "x30");
  if (name[0] == 'w' && sscanf(name + 1, "%u", &n) == 1 && n < 31) {
    snprintf(buf, sizeof buf, "x%u", n);
    return tc_arch_reg_index(arch, buf);
  }
  if (strchr("vqdshb", name[0]) && name[1] >= '0' && name[1] <= '9' &&
      sscanf(name + 1, "%u", &n) == 1 && n < 32) {
    snprintf(buf, sizeof buf, "v%u", n);
    return tc_arch_reg_index(arch, buf);
  }
  if (strcmp(name, "xzr") == 0 || strcmp(name, "wzr") == 0)
    return -2;
  return tc_arch_reg_index(arch, name);
}
