/* SPDX-License-Identifier: GPL-2.0-or-later */
/* 32-bit arm (armhf and armel: EABI): registers, syscall ABI, ELF identity,
 * engine modes, process layout, capstone's register names. */
#include <stdio.h>
#include <string.h>

#define TC_REG(name, size, flags, offset, uc, uc_id)                           \
  {name, size, flags, offset, uc_id},
#include "common/arch.h"

extern const struct tc_linux_abi tc_linux_abi_arm;

#define TC_ENGINE_MODES TC_ENGINE_MODES_AS_ENUM
#include "common/arch/arm/engine.inc"
#undef TC_ENGINE_MODES

/* Syscall numbers and names (tools/gen_sysnames.sh). */
static const tc_syscall_name sysnames_arm[] = {
#include "common/arch/arm/sysnames-arm.inc"
};

static const tc_reg_info regs_arm[] = {
#include "common/arch/arm/regs-arm.inc"
};
/* state image: 332 bytes, 51 registers */

enum { ARM_R0 = 0, ARM_R7 = 7, ARM_SP = 13, ARM_PC = 15, ARM_CPSR = 16 };

/* AT_HWCAP for the Cortex-A15 Unicorn models: SWP HALF THUMB FAST_MULT
 * VFP EDSP NEON VFPv3 TLS VFPv4 IDIVA IDIVT VFPD32 (arch/arm hwcap.h). */
#define HWCAP_ARM                                                              \
  (0x1ull | 0x2 | 0x4 | 0x10 | 0x40 | 0x80 | 0x1000 | 0x2000 | 0x8000 |        \
   0x10000 | 0x20000 | 0x40000 | 0x80000)

static int from_capstone_arm(const tc_arch *arch, const char *name,
                             int *second);

/* ARM: A32 and Thumb in one engine (UC_MODE_ARM; CPSR.T selects Thumb, the
 * recorder picks capstone's mode per instruction). EABI syscalls: `svc 0`
 * arrives as interrupt 2 with the PC already past it. */
const tc_arch tc_arch_desc_arm = {
    .id = TC_ARCH_ARM,
    .name = "arm",
    .big_endian = 0,
    .ptr_size = 4,
    .page_size = 4096,
    .max_insn_size = 4,
    .regs = regs_arm,
    .nregs = TC_ARCH_COUNT(regs_arm),
    .pc_reg = ARM_PC,
    .sp_reg = ARM_SP,
    .flags_reg = ARM_CPSR,
    .state_size = 332,
    .sys = {.traps = {{TC_TRAP_INTR, 2, 0, 0}},
            .nr_reg = ARM_R7,
            .arg_regs = {ARM_R0, ARM_R0 + 1, ARM_R0 + 2, ARM_R0 + 3, ARM_R0 + 4,
                         ARM_R0 + 5},
            .ret_reg = ARM_R0,
            .err_reg = -1,
            .names = sysnames_arm,
            .nnames = TC_ARCH_COUNT(sysnames_arm)},
    .elf_platform = "v7l",
    .elf_machine = 40, /* EM_ARM */
    .aliases = (const char *const[]){"armhf", "armel", "armv7", NULL},
    .uc_arch = arm_uc_arch,
    .uc_mode = arm_uc_mode,
    .cs_arch = arm_cs_arch,
    .cs_mode = arm_cs_mode,
    /* a 3G/1G kernel's TASK_SIZE is the stack top; the vectors page (kuser
     * helpers) sits at 0xffff0000 above it */
    .stack_top = 0xbf000000ull,
    .mmap_top = 0xb7000000ull,
    .hwcap = HWCAP_ARM,
    .stack_align = 8,
    .reg_from_capstone = from_capstone_arm,
    .linux_abi = &tc_linux_abi_arm,
    .traits = {.thumb_bit = 0x20, /* CPSR.T */
               .link_reg = "lr",
               .vstatus_reg = "fpscr",
               .parallel = true,
               .sys = {.gids16 = true,
                       .pair64_even = true,
                       .ill_code = "ILL_ILLOPC"}},
};

/* arm names as capstone spells them; *second gets the other half of a
 * register pair (qN = d2N:d2N+1). */
static int from_capstone_arm(const tc_arch *arch, const char *name,
                             int *second) {
  static const char *const arm_alias[][2] = {
      {"sb", "r9"},           {"sl", "r10"},    {"fp", "r11"},
      {"ip", "r12"},          {"r13", "sp"},    {"r14", "lr"},
      {"r15", "pc"},          {"apsr", "cpsr"}, {"apsr_nzcv", "cpsr"},
      {"fpscr_nzcv", "fpscr"}};
  char buf[16];
  unsigned n;
  for (size_t i = 0; i < sizeof arm_alias / sizeof arm_alias[0]; i++)
    if (strcmp(name, arm_alias[i][0]) == 0)
      return tc_arch_reg_index(arch, arm_alias[i][1]);
  if (sscanf(name, "s%u", &n) == 1 && n < 64) { /* s2k, s2k+1 in dk */
    snprintf(buf, sizeof buf, "d%u", n / 2);
    return tc_arch_reg_index(arch, buf);
  }
  if (sscanf(name, "q%u", &n) == 1 && n < 16) {
    snprintf(buf, sizeof buf, "d%u", 2 * n + 1);
    *second = tc_arch_reg_index(arch, buf);
    snprintf(buf, sizeof buf, "d%u", 2 * n);
    return tc_arch_reg_index(arch, buf);
  }
  return tc_arch_reg_index(arch, name);
}
