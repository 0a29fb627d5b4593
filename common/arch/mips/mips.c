/* SPDX-License-Identifier: GPL-2.0-or-later */
/* mips: o32 big- and little-endian (mips, mipsel) and n64 little-endian
 * (mips64el): registers, syscall ABI, ELF identity, engine modes, process
 * layout. Capstone spells the registers as the table does. */
#define TC_REG(name, size, flags, offset, uc, uc_id)                           \
  {name, size, flags, offset, uc_id},
#include "common/arch.h"

extern const struct tc_linux_abi tc_linux_abi_mips_o32, tc_linux_abi_mips_n64;

#define TC_ENGINE_MODES TC_ENGINE_MODES_AS_ENUM
#include "common/arch/mips/engine.inc"
#undef TC_ENGINE_MODES

/* Syscall numbers and names (tools/gen_sysnames.sh). */
static const tc_syscall_name sysnames_mips[] = {
#include "common/arch/mips/sysnames-mips.inc"
};

static const tc_syscall_name sysnames_mips64[] = {
#include "common/arch/mips/sysnames-mips64.inc"
};

static const tc_reg_info regs_mips[] = {
#include "common/arch/mips/regs-mips.inc"
};
/* state image: 144 bytes, 36 registers */

static const tc_reg_info regs_mips_fpu[] = {
#include "common/arch/mips/regs-mips.inc"
/* then, at offsets 144 on (this comment keeps clang-format from sorting
 * the two includes): */
#include "common/arch/mips/regs-mips-fpu.inc"
};
/* state image: 280 bytes, 70 registers */

/* mips and mipsel with the FPU registers (f0-f31, fcsr, fir), for
 * engines that read them (tc_engine_mips_fpu_readable); the same arch
 * otherwise. */
static const tc_arch arch_mips_fpu, arch_mipsel_fpu;

static const tc_reg_info regs_mips64[] = {
#include "common/arch/mips/regs-mips64.inc"
};

enum { MIPS_V0 = 2, MIPS_A0 = 4, MIPS_A3 = 7, MIPS_SP = 29, MIPS_PC = 32 };

/* user space ends at 0x80000000 (kseg0 above, which Unicorn maps to
 * physical memory itself) */
#define STACK_TOP_O32 0x7fff0000ull
#define MMAP_TOP_O32 0x77ff0000ull
/* TASK_SIZE64 is 1 TiB with 4 KiB pages */
#define STACK_TOP_N64 0xfffffff0000ull
#define MMAP_TOP_N64 0xfff7fff0000ull

/* mips: o32 (big- and little-endian) and n64 (little-endian). `syscall`
 * arrives as interrupt 17 with the PC already past it; errors come back as
 * a positive errno with a3 = 1. The state holds the integer registers and
 * UserLocal (TLS); the "+fpu" variants add the FPU's, recorded only where
 * the engine reads them (Unicorn 2.0.1 and 2.1.1 read them as 0). */
#define MIPS_O32_SYS(names_, count_)                                           \
  {                                                                            \
    .traps = {{TC_TRAP_INTR, 17, 0, 0}}, .nr_reg = MIPS_V0,                    \
    .arg_regs = {MIPS_A0,     MIPS_A0 + 1, MIPS_A0 + 2,                        \
                 MIPS_A0 + 3, MIPS_A0,     MIPS_A0},                           \
    .ret_reg = MIPS_V0, .err_reg = MIPS_A3, .names = names_, .nnames = count_, \
    .first_stack_arg = 4, .stack_arg_offset = 16                               \
  }

/* strace's view of the mips ABI (tc_arch_traits.sys): its own UAPI
 * numbering, o32's 64-bit arguments in even/odd pairs, SI_KERNEL for an
 * illegal instruction. */
#define MIPS_SYS_TRAITS                                                        \
  { .mips_uapi = true, .pair64_even = true, .ill_code = "SI_KERNEL" }

/* An o32 descriptor: big- or little-endian, the integer table or the one
 * with the FPU (same indices, then f0-f31, fcsr, fir); base/with_fpu link
 * the two tables of one arch. */
#define MIPS_O32(id_, name_, be_, engine_, aliases_, regs_, state_, links_)    \
  {                                                                            \
    .id = id_, .name = name_, .big_endian = be_, .ptr_size = 4,                \
    .page_size = 4096, .max_insn_size = 4, .regs = regs_,                      \
    .nregs = TC_ARCH_COUNT(regs_), .pc_reg = MIPS_PC, .sp_reg = MIPS_SP,       \
    .flags_reg = TC_NO_REG, .state_size = state_,                              \
    .sys = MIPS_O32_SYS(sysnames_mips, TC_ARCH_COUNT(sysnames_mips)),          \
    .elf_platform = NULL, .elf_machine = 8 /* EM_MIPS */, .aliases = aliases_, \
    .uc_arch = engine_##_uc_arch, .uc_mode = engine_##_uc_mode,                \
    .cs_arch = engine_##_cs_arch, .cs_mode = engine_##_cs_mode,                \
    .stack_top = STACK_TOP_O32, .mmap_top = MMAP_TOP_O32, .stack_align = 8,    \
    .linux_abi = &tc_linux_abi_mips_o32,                                       \
    .traits = {.delay_slots = true,                                            \
               .link_reg = "ra",                                               \
               .parallel = true,                                               \
               .sys = MIPS_SYS_TRAITS},                                        \
    links_                                                                     \
  }

static const char *const mips_aliases[] = {"mipsbe", NULL};
static const char *const no_aliases[] = {NULL};

const tc_arch tc_arch_desc_mips =
    MIPS_O32(TC_ARCH_MIPS, "mips", 1, mips, mips_aliases, regs_mips, 144,
             .with_fpu = &arch_mips_fpu);
const tc_arch tc_arch_desc_mipsel =
    MIPS_O32(TC_ARCH_MIPSEL, "mipsel", 0, mipsel, no_aliases, regs_mips, 144,
             .with_fpu = &arch_mipsel_fpu);
static const tc_arch arch_mips_fpu =
    MIPS_O32(TC_ARCH_MIPS, "mips", 1, mips, mips_aliases, regs_mips_fpu, 280,
             .base = &tc_arch_desc_mips);
static const tc_arch arch_mipsel_fpu =
    MIPS_O32(TC_ARCH_MIPSEL, "mipsel", 0, mipsel, no_aliases, regs_mips_fpu,
             280, .base = &tc_arch_desc_mipsel);

/* n64: eight argument registers ($4-$11; six used by syscalls). */
const tc_arch tc_arch_desc_mips64el = {
    .id = TC_ARCH_MIPS64EL,
    .name = "mips64el",
    .big_endian = 0,
    .ptr_size = 8,
    .page_size = 4096,
    .max_insn_size = 4,
    .regs = regs_mips64,
    .nregs = TC_ARCH_COUNT(regs_mips64),
    .pc_reg = MIPS_PC,
    .sp_reg = MIPS_SP,
    .flags_reg = TC_NO_REG,
    .state_size = 288,
    .sys = {.traps = {{TC_TRAP_INTR, 17, 0, 0}},
            .nr_reg = MIPS_V0,
            .arg_regs = {MIPS_A0, MIPS_A0 + 1, MIPS_A0 + 2, MIPS_A0 + 3,
                         MIPS_A0 + 4, MIPS_A0 + 5},
            .ret_reg = MIPS_V0,
            .err_reg = MIPS_A3,
            .names = sysnames_mips64,
            .nnames = TC_ARCH_COUNT(sysnames_mips64)},
    .elf_platform = NULL,
    .elf_machine = 8, /* EM_MIPS */
    .aliases = (const char *const[]){NULL},
    .uc_arch = mips64el_uc_arch,
    .uc_mode = mips64el_uc_mode,
    .cs_arch = mips64el_cs_arch,
    .cs_mode = mips64el_cs_mode,
    .stack_top = STACK_TOP_N64,
    .mmap_top = MMAP_TOP_N64,
    .stack_align = 16,
    .linux_abi = &tc_linux_abi_mips_n64,
    /* no -j N: only Unicorn 2.1.4 runs it, and there the recorder's
     * delay-slot guard (recorder/recorder.c ds_replay), which the run
     * phase's light hook does not have, keeps it right */
    .traits = {.delay_slots = true, .link_reg = "ra", .sys = MIPS_SYS_TRAITS},
};
