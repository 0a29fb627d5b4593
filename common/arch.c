/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The arch table: one entry per supported guest architecture. Everything
 * arch-specific that is data (registers, syscall ABI, ELF identity) lives
 * here; code elsewhere is table-driven. */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "common/linux/sysnames.h"

#define TC_REG(name, size, flags, offset, uc, uc_id)                           \
  {name, size, flags, offset, uc_id},
#include "common/arch.h"

/* Register order is the state-image order. Indices are used by the
 * syscall ABI below, so keep the two in step. */
static const tc_reg_info regs_x86_64[] = {
#include "common/arch/regs-x86_64.inc"
};
/* state image: 540 bytes, 59 registers */

static const tc_reg_info regs_x86[] = {
#include "common/arch/regs-x86.inc"
};
/* state image: 292 bytes, 43 registers */

static const tc_reg_info regs_arm[] = {
#include "common/arch/regs-arm.inc"
};
/* state image: 332 bytes, 51 registers */

static const tc_reg_info regs_arm64[] = {
#include "common/arch/regs-arm64.inc"
};
/* state image: 796 bytes, 69 registers */

static const tc_reg_info regs_mips[] = {
#include "common/arch/regs-mips.inc"
};
/* state image: 144 bytes, 36 registers */

static const tc_reg_info regs_mips64[] = {
#include "common/arch/regs-mips64.inc"
};

static const tc_reg_info regs_sparc64[] = {
#include "common/arch/regs-sparc64.inc"
};
/* state image: 288 bytes, 36 registers */

enum { MIPS_V0 = 2, MIPS_A0 = 4, MIPS_A3 = 7, MIPS_SP = 29, MIPS_PC = 32 };

enum { ARM_R0 = 0, ARM_R7 = 7, ARM_SP = 13, ARM_PC = 15, ARM_CPSR = 16 };
enum { A64_X0 = 0, A64_X8 = 8, A64_SP = 31, A64_PC = 32, A64_NZCV = 33 };

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

#define NREGS(a) ((uint16_t)(sizeof(a) / sizeof(a[0])))

static const tc_arch arch_x86_64 = {
    .id = TC_ARCH_X86_64,
    .name = "x86_64",
    .big_endian = 0,
    .ptr_size = 8,
    .page_size = 4096,
    .max_insn_size = 15,
    .regs = regs_x86_64,
    .nregs = NREGS(regs_x86_64),
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
            .names = tc_sysnames_x86_64,
            .nnames = TC_SYSNAMES_X86_64_COUNT},
    .elf_platform = "x86_64",
    .elf_machine = 62, /* EM_X86_64 */
};

static const tc_arch arch_x86 = {
    .id = TC_ARCH_X86,
    .name = "x86",
    .big_endian = 0,
    .ptr_size = 4,
    .page_size = 4096,
    .max_insn_size = 15,
    .regs = regs_x86,
    .nregs = NREGS(regs_x86),
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
            .names = tc_sysnames_i386,
            .nnames = TC_SYSNAMES_I386_COUNT},
    .elf_platform = "i686",
    .elf_machine = 3, /* EM_386 */
};

/* ARM: A32 and Thumb in one engine (UC_MODE_ARM; CPSR.T selects Thumb, the
 * recorder picks capstone's mode per instruction). EABI syscalls: `svc 0`
 * arrives as interrupt 2 with the PC already past it. */
static const tc_arch arch_arm = {
    .id = TC_ARCH_ARM,
    .name = "arm",
    .big_endian = 0,
    .ptr_size = 4,
    .page_size = 4096,
    .max_insn_size = 4,
    .regs = regs_arm,
    .nregs = NREGS(regs_arm),
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
            .names = tc_sysnames_arm,
            .nnames = TC_SYSNAMES_ARM_COUNT},
    .elf_platform = "v7l",
    .elf_machine = 40, /* EM_ARM */
};

static const tc_arch arch_arm64 = {
    .id = TC_ARCH_ARM64,
    .name = "arm64",
    .big_endian = 0,
    .ptr_size = 8,
    .page_size = 4096,
    .max_insn_size = 4,
    .regs = regs_arm64,
    .nregs = NREGS(regs_arm64),
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
            .names = tc_sysnames_arm64,
            .nnames = TC_SYSNAMES_ARM64_COUNT},
    .elf_platform = "aarch64",
    .elf_machine = 183, /* EM_AARCH64 */
};

/* mips: o32 (big- and little-endian) and n64 (little-endian). `syscall`
 * arrives as interrupt 17 with the PC already past it; errors come back as
 * a positive errno with a3 = 1. Unicorn 2.0.1 cannot read the FPU
 * registers, so the state holds the integer ones and UserLocal (TLS). */
#define MIPS_O32_SYS(names_, count_)                                           \
  {                                                                            \
    .traps = {{TC_TRAP_INTR, 17, 0, 0}}, .nr_reg = MIPS_V0,                    \
    .arg_regs = {MIPS_A0,     MIPS_A0 + 1, MIPS_A0 + 2,                        \
                 MIPS_A0 + 3, MIPS_A0,     MIPS_A0},                           \
    .ret_reg = MIPS_V0, .err_reg = MIPS_A3, .names = names_, .nnames = count_, \
    .first_stack_arg = 4, .stack_arg_offset = 16                               \
  }

static const tc_arch arch_mips = {
    .id = TC_ARCH_MIPS,
    .name = "mips",
    .big_endian = 1,
    .ptr_size = 4,
    .page_size = 4096,
    .max_insn_size = 4,
    .regs = regs_mips,
    .nregs = NREGS(regs_mips),
    .pc_reg = MIPS_PC,
    .sp_reg = MIPS_SP,
    .flags_reg = TC_NO_REG,
    .state_size = 144,
    .sys = MIPS_O32_SYS(tc_sysnames_mips, TC_SYSNAMES_MIPS_COUNT),
    .elf_platform = NULL,
    .elf_machine = 8, /* EM_MIPS */
};

static const tc_arch arch_mipsel = {
    .id = TC_ARCH_MIPSEL,
    .name = "mipsel",
    .big_endian = 0,
    .ptr_size = 4,
    .page_size = 4096,
    .max_insn_size = 4,
    .regs = regs_mips,
    .nregs = NREGS(regs_mips),
    .pc_reg = MIPS_PC,
    .sp_reg = MIPS_SP,
    .flags_reg = TC_NO_REG,
    .state_size = 144,
    .sys = MIPS_O32_SYS(tc_sysnames_mips, TC_SYSNAMES_MIPS_COUNT),
    .elf_platform = NULL,
    .elf_machine = 8, /* EM_MIPS */
};

/* n64: eight argument registers ($4-$11; six used by syscalls). */
static const tc_arch arch_mips64el = {
    .id = TC_ARCH_MIPS64EL,
    .name = "mips64el",
    .big_endian = 0,
    .ptr_size = 8,
    .page_size = 4096,
    .max_insn_size = 4,
    .regs = regs_mips64,
    .nregs = NREGS(regs_mips64),
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
            .names = tc_sysnames_mips64,
            .nnames = TC_SYSNAMES_MIPS64_COUNT},
    .elf_platform = NULL,
    .elf_machine = 8, /* EM_MIPS */
};

/* sparc64: V9, big-endian, the 64-bit ABI (biased %sp, %g7 the thread
 * pointer). Syscalls are `ta 0x6d` (intno 0x16d, PC at the ta): g1 the
 * number, o0-o5 the arguments, o0 the result, the carry flag set on an
 * error (emu/engine/sparc.c sets it). */
enum { SPARC_G1 = 1, SPARC_O0 = 8, SPARC_SP = 14, SPARC_PC = 32 };
static const tc_arch arch_sparc64 = {
    .id = TC_ARCH_SPARC64,
    .name = "sparc64",
    .big_endian = 1,
    .ptr_size = 8,
    .page_size = 8192,
    .max_insn_size = 4,
    .regs = regs_sparc64,
    .nregs = NREGS(regs_sparc64),
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
            .names = tc_sysnames_sparc64,
            .nnames = TC_SYSNAMES_SPARC64_COUNT},
    .elf_platform = "sparc64",
    .elf_machine = 43, /* EM_SPARCV9 */
};

static const tc_arch *const arches[] = {
    &arch_x86_64, &arch_x86,    &arch_arm,      &arch_arm64,
    &arch_mips,   &arch_mipsel, &arch_mips64el, &arch_sparc64};

const tc_arch *tc_arch_by_id(tc_arch_id id) {
  for (size_t i = 0; i < sizeof arches / sizeof arches[0]; i++)
    if (arches[i]->id == id)
      return arches[i];
  return NULL;
}

static const struct {
  const char *alias;
  tc_arch_id id;
} arch_aliases[] = {
    {"x86_64", TC_ARCH_X86_64},   {"x86-64", TC_ARCH_X86_64},
    {"amd64", TC_ARCH_X86_64},    {"x64", TC_ARCH_X86_64},
    {"x86", TC_ARCH_X86},         {"i386", TC_ARCH_X86},
    {"i686", TC_ARCH_X86},        {"x32", TC_ARCH_X86},
    {"arm", TC_ARCH_ARM},         {"armhf", TC_ARCH_ARM},
    {"armel", TC_ARCH_ARM},       {"armv7", TC_ARCH_ARM},
    {"arm64", TC_ARCH_ARM64},     {"aarch64", TC_ARCH_ARM64},
    {"mips", TC_ARCH_MIPS},       {"mipsbe", TC_ARCH_MIPS},
    {"mipsel", TC_ARCH_MIPSEL},   {"mips64el", TC_ARCH_MIPS64EL},
    {"sparc64", TC_ARCH_SPARC64}, {"sparcv9", TC_ARCH_SPARC64},
};

const tc_arch *tc_arch_by_name(const char *name) {
  if (!name)
    return NULL;
  for (size_t i = 0; i < sizeof arch_aliases / sizeof arch_aliases[0]; i++)
    if (strcasecmp(arch_aliases[i].alias, name) == 0)
      return tc_arch_by_id(arch_aliases[i].id);
  return NULL;
}

/* The public accessors (the struct is private: common/arch.h). */
const char *tc_arch_name(const tc_arch *arch) { return arch->name; }

tc_arch_id tc_arch_id_of(const tc_arch *arch) { return arch->id; }

unsigned tc_arch_ptr_size(const tc_arch *arch) { return arch->ptr_size; }

int tc_arch_big_endian(const tc_arch *arch) { return arch->big_endian; }

size_t tc_arch_state_size(const tc_arch *arch) { return arch->state_size; }

int tc_arch_reg_count(const tc_arch *arch) { return arch->nregs; }

static const tc_reg_info *reg_at(const tc_arch *arch, int reg) {
  return reg >= 0 && reg < arch->nregs ? &arch->regs[reg] : NULL;
}

const char *tc_arch_reg_name(const tc_arch *arch, int reg) {
  const tc_reg_info *r = reg_at(arch, reg);
  return r ? r->name : NULL;
}

unsigned tc_arch_reg_size(const tc_arch *arch, int reg) {
  const tc_reg_info *r = reg_at(arch, reg);
  return r ? r->size : 0;
}

unsigned tc_arch_reg_flags(const tc_arch *arch, int reg) {
  const tc_reg_info *r = reg_at(arch, reg);
  return r ? r->flags : 0;
}

size_t tc_arch_reg_offset(const tc_arch *arch, int reg) {
  const tc_reg_info *r = reg_at(arch, reg);
  return r ? r->offset : 0;
}

int tc_arch_pc_reg(const tc_arch *arch) { return arch->pc_reg; }

int tc_arch_sp_reg(const tc_arch *arch) { return arch->sp_reg; }

int tc_arch_reg_index(const tc_arch *arch, const char *name) {
  for (int i = 0; i < arch->nregs; i++)
    if (strcmp(arch->regs[i].name, name) == 0)
      return i;
  return -1;
}

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

static int from_capstone_x86(const tc_arch *arch, const char *name) {
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

/* arm / arm64 names as capstone spells them; *second gets the other
 * half of a register pair (arm qN = d2N:d2N+1). */
static int from_capstone_arm(const tc_arch *arch, const char *name,
                             int *second) {
  static const char *const arm_alias[][2] = {
      {"sb", "r9"},           {"sl", "r10"},    {"fp", "r11"},
      {"ip", "r12"},          {"r13", "sp"},    {"r14", "lr"},
      {"r15", "pc"},          {"apsr", "cpsr"}, {"apsr_nzcv", "cpsr"},
      {"fpscr_nzcv", "fpscr"}};
  char buf[16];
  unsigned n;
  if (arch->id == TC_ARCH_ARM) {
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
  /* arm64: wN is the low half of xN; b/h/s/d/qN are parts of vN */
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

int tc_arch_reg_from_capstone(const tc_arch *arch, const char *name,
                              int *second) {
  int other = -1, r;
  if (!name)
    r = -1;
  else if (tc_arch_is_x86(arch))
    r = from_capstone_x86(arch, name);
  else if (arch->id == TC_ARCH_ARM || arch->id == TC_ARCH_ARM64)
    r = from_capstone_arm(arch, name, &other);
  else
    r = tc_arch_reg_index(arch, name);
  if (second)
    *second = other;
  return r;
}

const tc_arch *tc_arch_compat_table(const tc_arch *arch) {
  return arch->id == TC_ARCH_X86_64 ? &arch_x86 : arch;
}

bool tc_arch_compat_trap(const tc_arch *arch, const uint8_t *bytes,
                         size_t size) {
  return arch->id == TC_ARCH_X86_64 && size == 2 && bytes[0] == 0xcd &&
         bytes[1] == 0x80;
}

const int *tc_arch_compat_arg_regs(const tc_arch *arch) {
  static const int x86_64_ia32[6] = {X64_RBX, X64_RCX, X64_RDX,
                                     X64_RSI, X64_RDI, X64_RBP};
  return arch->id == TC_ARCH_X86_64 ? x86_64_ia32 : arch->sys.arg_regs;
}

const char *tc_arch_syscall_name(const tc_arch *arch, uint32_t nr) {
  size_t lo = 0, hi = arch->sys.nnames;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    uint32_t m = arch->sys.names[mid].nr;
    if (m == nr)
      return arch->sys.names[mid].name;
    if (m < nr)
      lo = mid + 1;
    else
      hi = mid;
  }
  return NULL;
}

uint64_t tc_state_get(const tc_arch *arch, const uint8_t *state, int reg) {
  const tc_reg_info *r = &arch->regs[reg];
  uint64_t v = 0;
  memcpy(&v, state + r->offset, r->size < 8 ? r->size : 8);
  return v; /* host (little-endian) order, see tracecorn.h */
}

void tc_state_set(const tc_arch *arch, uint8_t *state, int reg, uint64_t v) {
  const tc_reg_info *r = &arch->regs[reg];
  memset(state + r->offset, 0, r->size);
  memcpy(state + r->offset, &v, r->size < 8 ? r->size : 8);
}
