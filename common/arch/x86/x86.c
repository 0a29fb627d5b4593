/* SPDX-License-Identifier: GPL-2.0-or-later */
/* x86-64 and i386: registers, syscall ABI, ELF identity, engine modes,
 * process layout, capstone's register names, and the compat table that
 * x86-64's `int $0x80` reaches (i386's, as in Linux). */
#include <stdio.h>
#include <string.h>

#define TC_REG(name, size, flags, offset, uc, uc_id)                           \
  {name, size, flags, offset, uc_id},
#include "common/arch.h"

extern const struct tc_linux_abi tc_linux_abi_x86_64, tc_linux_abi_i386;

#define TC_ENGINE_MODES TC_ENGINE_MODES_AS_ENUM
#include "common/arch/x86/engine.inc"
#undef TC_ENGINE_MODES

/* Syscall numbers and names (tools/gen_sysnames.sh). */
static const tc_syscall_name sysnames_x86_64[] = {
#include "common/arch/x86/sysnames-x86_64.inc"
};

static const tc_syscall_name sysnames_i386[] = {
#include "common/arch/x86/sysnames-i386.inc"
};

/* Register order is the state-image order. Indices are used by the
 * syscall ABI below, so keep the two in step. */
static const tc_reg_info regs_x86_64[] = {
#include "common/arch/x86/regs-x86_64.inc"
};
/* state image: 540 bytes, 59 registers */

static const tc_reg_info regs_x86[] = {
#include "common/arch/x86/regs-x86.inc"
};
/* state image: 292 bytes, 43 registers */
enum {
  X64_RAX = 0,
  X64_RBX,
  X64_RCX,
  X64_RDX,
  X64_RSI,
  X64_RDI,
  X64_RBP,
  X64_RSP,
  X64_R8,
  X64_R9,
  X64_R10,
  X64_R11,
  X64_R12,
  X64_R13,
  X64_R14,
  X64_R15,
  X64_RIP,
  X64_RFLAGS
};
enum {
  X86_EAX = 0,
  X86_EBX,
  X86_ECX,
  X86_EDX,
  X86_ESI,
  X86_EDI,
  X86_EBP,
  X86_ESP,
  X86_EIP,
  X86_EFLAGS
};

/* AT_HWCAP: the CPUID.1 EDX features the engine's CPU model reports. */
#define HWCAP_X86 0x178bfbffull

static int from_capstone_x86(const tc_arch *arch, const char *name,
                             int *second);

extern const tc_arch tc_arch_desc_x86;

/* filter --reg's names for x86-64's registers: the 32-bit ones (eax ->
 * rax) and r8d/r8w/r8b -> r8. */
static int alias_x86_64(const char *low, char *alias, size_t n) {
  size_t len = strlen(low);
  if (low[0] == 'e')
    snprintf(alias, n, "r%s", low + 1);
  else if (low[0] == 'r' && len > 2 &&
           (low[len - 1] == 'd' || low[len - 1] == 'w' || low[len - 1] == 'b'))
    snprintf(alias, n, "%.*s", (int)len - 1, low);
  else
    return 0;
  return 1;
}

static const int x86_64_ia32_args[6] = {X64_RBX, X64_RCX, X64_RDX,
                                        X64_RSI, X64_RDI, X64_RBP};

const tc_arch tc_arch_desc_x86_64 = {
    .id = TC_ARCH_X86_64,
    .name = "x86_64",
    .big_endian = 0,
    .ptr_size = 8,
    .page_size = 4096,
    .max_insn_size = 15,
    .regs = regs_x86_64,
    .nregs = TC_ARCH_COUNT(regs_x86_64),
    .pc_reg = X64_RIP,
    .sp_reg = X64_RSP,
    .flags_reg = X64_RFLAGS,
    .state_size = 540,
    /* int 0x80 in 64-bit code calls the i386 table, as Linux does
     * (emu/linux/x86/x86_compat.c). */
    .sys = {.traps = {{TC_TRAP_INSN_SYSCALL, 0, 2, 0},
                      {TC_TRAP_INTR, 0x80, 0, 1}},
            .nr_reg = X64_RAX,
            .arg_regs = {X64_RDI, X64_RSI, X64_RDX, X64_R10, X64_R8, X64_R9},
            .ret_reg = X64_RAX,
            .err_reg = -1,
            .names = sysnames_x86_64,
            .nnames = TC_ARCH_COUNT(sysnames_x86_64)},
    .elf_platform = "x86_64",
    .elf_machine = 62, /* EM_X86_64 */
    .aliases = (const char *const[]){"x86-64", "amd64", "x64", NULL},
    .uc_arch = x86_64_uc_arch,
    .uc_mode = x86_64_uc_mode,
    .cs_arch = x86_64_cs_arch,
    .cs_mode = x86_64_cs_mode,
    .stack_top = 0x7ffffffff000ull,
    .mmap_top = 0x7ffff7fff000ull,
    .hwcap = HWCAP_X86,
    .stack_align = 16,
    .reg_from_capstone = from_capstone_x86,
    .compat = &tc_arch_desc_x86,
    .compat_arg_regs = x86_64_ia32_args,
    .compat_insn = {0xcd, 0x80},
    .linux_abi = &tc_linux_abi_x86_64,
    .traits = {.ret_on_stack = true,
               .vstatus_reg = "mxcsr",
               .watch_after = true,
               .parallel = true,
               .decode_every_insn = true,
               .reg_alias = alias_x86_64,
               .sys = {.clone_ctid_first = true, .map_32bit = true}},
};

const tc_arch tc_arch_desc_x86 = {
    .id = TC_ARCH_X86,
    .name = "x86",
    .big_endian = 0,
    .ptr_size = 4,
    .page_size = 4096,
    .max_insn_size = 15,
    .regs = regs_x86,
    .nregs = TC_ARCH_COUNT(regs_x86),
    .pc_reg = X86_EIP,
    .sp_reg = X86_ESP,
    .flags_reg = X86_EFLAGS,
    .state_size = 292,
    .sys = {.traps = {{TC_TRAP_INTR, 0x80, 0, 0},
                      {TC_TRAP_INSN_SYSENTER, 0, 2, 0}},
            .nr_reg = X86_EAX,
            .arg_regs = {X86_EBX, X86_ECX, X86_EDX, X86_ESI, X86_EDI, X86_EBP},
            .ret_reg = X86_EAX,
            .err_reg = -1,
            .names = sysnames_i386,
            .nnames = TC_ARCH_COUNT(sysnames_i386)},
    .elf_platform = "i686",
    .elf_machine = 3, /* EM_386 */
    .aliases = (const char *const[]){"i386", "i686", "x32", NULL},
    .uc_arch = x86_uc_arch,
    .uc_mode = x86_uc_mode,
    .cs_arch = x86_cs_arch,
    .cs_mode = x86_cs_mode,
    /* as a 64-bit kernel runs i386 */
    .stack_top = 0xffffe000ull,
    .mmap_top = 0xf7fff000ull,
    .hwcap = HWCAP_X86,
    .stack_align = 16,
    .reg_from_capstone = from_capstone_x86,
    .linux_abi = &tc_linux_abi_i386,
    .traits = {.ret_on_stack = true,
               .vstatus_reg = "mxcsr",
               .watch_after = true,
               .parallel = true,
               .decode_every_insn = true,
               .sys = {.gids16 = true,
                       .user_desc = true,
                       .old_mmap = true,
                       .map_32bit = true}},
};

/* ------------------------------------------- capstone register names */

/* x86 sub-register families: a member stands for the first member the
 * arch table has. */
static const char *const x86_families[][5] = {
    {"rax", "eax", "ax", "al", "ah"},
    {"rbx", "ebx", "bx", "bl", "bh"},
    {"rcx", "ecx", "cx", "cl", "ch"},
    {"rdx", "edx", "dx", "dl", "dh"},
    {"rsi", "esi", "si", "sil", NULL},
    {"rdi", "edi", "di", "dil", NULL},
    {"rbp", "ebp", "bp", "bpl", NULL},
    {"rsp", "esp", "sp", "spl", NULL},
    {"rip", "eip", "ip", NULL, NULL},
    {"rflags", "eflags", "flags", NULL, NULL},
};

static int from_capstone_x86(const tc_arch *arch, const char *name,
                             int *second) {
  (void)second;
  for (size_t f = 0; f < sizeof x86_families / sizeof x86_families[0]; f++) {
    int member = 0;
    for (int k = 0; k < 5 && x86_families[f][k]; k++)
      member |= strcmp(x86_families[f][k], name) == 0;
    if (!member)
      continue;
    for (int k = 0; k < 5 && x86_families[f][k]; k++) {
      int idx = tc_arch_reg_index(arch, x86_families[f][k]);
      if (idx >= 0)
        return idx;
    }
    return -1;
  }
  char buf[16];
  /* r8..r15 with d/w/b suffixes */
  if (name[0] == 'r' && name[1] >= '0' && name[1] <= '9') {
    size_t n = strspn(name + 1, "0123456789");
    snprintf(buf, sizeof buf, "r%.*s", (int)n, name + 1);
    return tc_arch_reg_index(arch, buf);
  }
  /* xmmN / ymmN / zmmN -> xmmN */
  if ((name[0] == 'x' || name[0] == 'y' || name[0] == 'z') &&
      strncmp(name + 1, "mm", 2) == 0) {
    snprintf(buf, sizeof buf, "xmm%s", name + 3);
    return tc_arch_reg_index(arch, buf);
  }
  /* st(N) -> stN (both in ST order) */
  if (strncmp(name, "st(", 3) == 0 && name[3] >= '0' && name[3] <= '7' &&
      name[4] == ')') {
    snprintf(buf, sizeof buf, "st%c", name[3]);
    return tc_arch_reg_index(arch, buf);
  }
  if (strncmp(name, "mm", 2) == 0)
    return -1; /* MMX: physical x87 registers, not ST(i) */
  return tc_arch_reg_index(arch, name);
}
