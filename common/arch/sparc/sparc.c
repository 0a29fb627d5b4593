/* SPDX-License-Identifier: GPL-2.0-or-later */
/* sparc64 (V9, big-endian, the 64-bit ABI): registers, syscall ABI, ELF
 * identity, engine modes, process layout. Capstone spells the registers as
 * the table does. */
#define TC_REG(name, size, flags, offset, uc, uc_id)                           \
  {name, size, flags, offset, uc_id},
#include "common/arch.h"

extern const struct tc_linux_abi tc_linux_abi_sparc64;

#define TC_ENGINE_MODES TC_ENGINE_MODES_AS_ENUM
#include "common/arch/sparc/engine.inc"
#undef TC_ENGINE_MODES

/* Syscall numbers and names (tools/gen_sysnames.sh). */
static const tc_syscall_name sysnames_sparc64[] = {
#include "common/arch/sparc/sysnames-sparc64.inc"
};

static const tc_reg_info regs_sparc64[] = {
#include "common/arch/sparc/regs-sparc64.inc"
};
/* state image: 288 bytes, 36 registers */

/* sparc64: V9, big-endian, the 64-bit ABI (biased %sp, %g7 the thread
 * pointer). Syscalls are `ta 0x6d` (intno 0x16d, PC at the ta): g1 the
 * number, o0-o5 the arguments, o0 the result, the carry flag set on an
 * error (emu/engine/sparc/sparc.c sets it). */
enum { SPARC_G1 = 1, SPARC_O0 = 8, SPARC_SP = 14, SPARC_PC = 32 };
const tc_arch tc_arch_desc_sparc64 = {
    .id = TC_ARCH_SPARC64,
    .name = "sparc64",
    .big_endian = 1,
    .ptr_size = 8,
    .page_size = 8192,
    .max_insn_size = 4,
    .regs = regs_sparc64,
    .nregs = TC_ARCH_COUNT(regs_sparc64),
    .pc_reg = SPARC_PC,
    .sp_reg = SPARC_SP,
    .flags_reg = TC_NO_REG,
    .state_size = 264,
    .sys = {.traps = {{TC_TRAP_INTR, 0x16d, 4, 0}},
            .nr_reg = SPARC_G1,
            .arg_regs = {SPARC_O0, SPARC_O0 + 1, SPARC_O0 + 2, SPARC_O0 + 3,
                         SPARC_O0 + 4, SPARC_O0 + 5},
            .ret_reg = SPARC_O0,
            .err_reg = -1,
            .names = sysnames_sparc64,
            .nnames = TC_ARCH_COUNT(sysnames_sparc64)},
    .elf_platform = "sparc64",
    .elf_machine = 43, /* EM_SPARCV9 */
    .aliases = (const char *const[]){"sparcv9", NULL},
    .uc_arch = sparc64_uc_arch,
    .uc_mode = sparc64_uc_mode,
    .cs_arch = sparc64_cs_arch,
    .cs_mode = sparc64_cs_mode,
    /* Linux's stack top is 2^43 - 4 GiB and its mmaps go in the upper half
     * of the address space (0xfffff80000000000 up); Unicorn 2.0.1's sparc64
     * addresses only 41 bits (TC_SPARC64_ADDR_LIMIT), so both sit below
     * 2^41 here (docs/arches.md). */
    .stack_top = 0x1ff00000000ull,
    .mmap_top = 0x1fef0000000ull,
    .stack_align = 16,
    .initial_sp_below = 2047 + 16 * 8,
    .linux_abi = &tc_linux_abi_sparc64,
    .traits = {.delay_slots = true, .parallel = true},
};
