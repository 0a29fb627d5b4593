/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The arch descriptors (common/arch/<arch>/, listed in
 * common/arch/arches.def, expanded by common/arch.c) as
 * the library sees them: the public header has tc_arch as an opaque handle
 * with accessors; every layer of the library (and its tests) reads the
 * table itself through this header. */
#ifndef TC_COMMON_ARCH_H
#define TC_COMMON_ARCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tracecorn/tracecorn.h"

/* A register index that names no register (mips has no flags register). */
#define TC_NO_REG 0xffffu

/* One register: its bytes in the state image are [offset, offset+size). */
typedef struct tc_reg_info {
  const char *name; /* lower-case, as GDB/capstone spell it: "rax", "st0" */
  uint16_t size;    /* bytes: 1..32 */
  uint16_t flags;   /* TC_REG_* */
  uint32_t offset;  /* offset in the state image */
  int uc_id;        /* Unicorn 2's register number (UCIR's wire id too) */
} tc_reg_info;

/* How a syscall traps on this arch (the engine uses it; kept here so the
 * arch table is one table). */
typedef enum tc_trap_kind {
  TC_TRAP_NONE = 0,
  TC_TRAP_INSN_SYSCALL, /* x86 `syscall` via UC_HOOK_INSN; PC = insn addr */
  TC_TRAP_INSN_SYSENTER,
  TC_TRAP_INTR /* UC_HOOK_INTR with intno; PC may or may not be advanced */
} tc_trap_kind;

typedef struct tc_trap {
  tc_trap_kind kind;
  uint32_t intno;      /* for TC_TRAP_INTR */
  uint32_t pc_advance; /* bytes to add to PC after the trap (0 if Unicorn
                          already advanced it) */
  uint8_t compat;      /* 1: the call goes to the arch's compat table
                          (x86-64's int $0x80: i386's, as in Linux) */
} tc_trap;

typedef struct tc_syscall_name {
  uint32_t nr;
  const char *name;
} tc_syscall_name;

typedef struct tc_syscall_abi {
  tc_trap traps[3]; /* kind == TC_TRAP_NONE terminates */
  int nr_reg;       /* register index (into regs[]) of the number */
  int arg_regs[6];  /* register indices of the arguments */
  int ret_reg;      /* register index of the return value */
  int err_reg;      /* -1, or a register flagging errors (mips a3) */
  /* Arguments from this index on are read from the stack, as 32-bit words
   * at sp + stack_arg_offset (mips o32: 4 and 16); 0 = all in registers. */
  int first_stack_arg;
  uint32_t stack_arg_offset;
  const tc_syscall_name *names; /* number -> name, sorted by nr */
  size_t nnames;
} tc_syscall_abi;

/* See tc_arch.traits. */
typedef struct tc_arch_traits {
  /* The flags register's bit that selects the second instruction set
   * (arm's CPSR.T, 0x20: Thumb); an odd pc is Thumb code too, the ARM
   * convention. 0: one instruction set. */
  uint32_t thumb_bit;
  /* Branches have a delay slot: the instruction after a jump runs before
   * it lands (mips, sparc). */
  bool delay_slots;
  /* A call pushes its return address on the stack (x86); else it leaves
   * it in link_reg. */
  bool ret_on_stack;
  /* The register a call leaves its return address in (arm's lr, arm64's
   * x30, mips' ra), NULL: none the recorder follows (sparc's o7 is the
   * call's own address). */
  const char *link_reg;
  /* The FP/vector status register whose sticky exception flags vector and
   * FP arithmetic set (x86's mxcsr, arm's fpscr, arm64's fpsr), or NULL. */
  const char *vstatus_reg;
  /* GDB's watchpoints stop after the accessing instruction, as x86's
   * debug registers trap after it; elsewhere before it. */
  bool watch_after;
  /* record -j N records it (not mips64el: common/arch/mips/mips.c says
   * why). */
  bool parallel;
  /* The light recorder (record -j's run) looks at every instruction: some
   * the library runs itself (rdtsc, x87 on the host FPU), privileged ones
   * fault, rep strings restart (x86). Elsewhere only those near a
   * checkpoint. */
  bool decode_every_insn;
  /* Other names a user may give a register (filter --reg), lower-case:
   * writes the table's name into alias (n bytes) and returns 1, or 0.
   * NULL: only the table's names. */
  int (*reg_alias)(const char *lower, char *alias, size_t n);
  /* The Linux ABI's points strace's decoding reads
   * (common/linux/sysdecode.c). */
  struct {
    /* mips' own UAPI numbering (arch/mips/include/uapi): ioctls, fcntl
     * commands, sigprocmask's how, rlimits, socket types and
     * SOCK_NONBLOCK, signal 7 SIGEMT, 128 signals, stack_t's order {sp,
     * size, flags}, RLIM_INFINITY */
    bool mips_uapi;
    /* getgroups' gid_t is 16 bits (i386, arm: the 16-bit id calls) */
    bool gids16;
    /* set_thread_area takes a struct user_desc (i386) */
    bool user_desc;
    /* mmap takes one pointer to its six arguments (i386's old_mmap) */
    bool old_mmap;
    /* a 64-bit argument takes an even/odd register pair (arm EABI, mips
     * o32), on a 32-bit arch */
    bool pair64_even;
    /* clone(flags, stack, ptid, ctid, tls) (x86-64); else tls before
     * ctid */
    bool clone_ctid_first;
    /* mmap's MAP_32BIT exists (x86) */
    bool map_32bit;
    /* An illegal instruction's si_code: "SI_KERNEL" (mips: no si_addr),
     * or NULL: ILL_ILLOPN; arm's ILL_ILLOPC. */
    const char *ill_code;
  } sys;
} tc_arch_traits;

struct tc_arch {
  tc_arch_id id;
  const char *name;   /* "x86_64", "x86", "arm", ... */
  uint8_t big_endian; /* target byte order */
  uint8_t ptr_size;   /* 4 or 8 */
  uint32_t page_size; /* guest page size */
  uint32_t max_insn_size;
  const tc_reg_info *regs;
  uint16_t nregs;
  uint16_t pc_reg, sp_reg; /* indices into regs[] */
  uint16_t flags_reg;      /* index, or TC_NO_REG (mips) */
  uint32_t state_size;     /* bytes of a state image */
  tc_syscall_abi sys;
  const char *elf_platform; /* AT_PLATFORM string */
  uint16_t elf_machine;     /* EM_* */
  uint16_t elf_machine_alt; /* another e_machine it runs (0: none) */

  /* Other names --arch and tc_arch_by_name accept, NULL-terminated. */
  const char *const *aliases;

  /* The engine's and the disassembler's names of this CPU, as plain
   * numbers (this layer includes neither Unicorn nor capstone): Unicorn's
   * uc_arch and uc_mode (the engine adds UC_MODE_BIG_ENDIAN from
   * big_endian), capstone's cs_arch and cs_mode. The arch folder's
   * engine.inc lists them by name and number; emu/engine/uc_arch.c and
   * common/isa/flow.c check each against the headers at compile time. */
  int uc_arch, uc_mode, cs_arch, cs_mode;

  /* Linux's process image: the stack's and the mmap area's tops, AT_HWCAP,
   * the initial stack pointer's alignment (arch_align_stack). */
  uint64_t stack_top, mmap_top, hwcap;
  uint32_t stack_align;
  /* How far below argc the initial stack pointer starts: 0, or SPARC's
   * first register-window save area (16 words) plus its 2047 bias on
   * 64-bit (Linux's start_thread). */
  uint32_t initial_sp_below;

  /* Capstone's register names for this arch's (sub-registers, aliases);
   * NULL: capstone spells them as the table does. See
   * tc_arch_reg_from_capstone. */
  int (*reg_from_capstone)(const tc_arch *arch, const char *name, int *second);

  /* The compat syscall table an instruction may reach instead (x86-64's
   * `int $0x80`: i386's), or NULL; its argument registers (indices into
   * regs) and the instruction's bytes. */
  const tc_arch *compat;
  const int *compat_arg_regs;
  uint8_t compat_insn[2];

  /* Where the Linux ABI's values and layouts differ from the host's
   * (common/linux/linux_abi_tables.h); NULL until the table is set. */
  const struct tc_linux_abi *linux_abi;
  /* NULL for an arch's own table; for a variant with more registers (mips
   * with its FPU: recordings on an engine that reads it), the arch's own
   * table, whose registers are the variant's first ones at the same
   * offsets. tc_arch_by_id gives the arch's own table; a format says which
   * one a trace holds (docs/arches.md, "MIPS FPU registers"). */
  const struct tc_arch *base;
  /* The variant with the FPU registers (mips, mipsel), or NULL. */
  const struct tc_arch *with_fpu;

  /* What the generic code of every layer asks about the arch's ISA and
   * ABI, instead of testing its id (a reader that builds a table from a
   * trace copies them from the arch's own: writers/ucir/). */
  tc_arch_traits traits;
};

/* The variant of arch with its FPU registers (mips and mipsel o32), or
 * NULL if the arch has none. */
const tc_arch *tc_arch_with_fpu(const tc_arch *arch);
/* The arches, in the list's order (common/arch/arches.def): the i-th, or
 * NULL past the last. */
const tc_arch *tc_arch_at(size_t i);
/* The arch's own table: arch itself, or the one a variant extends. */
static inline const tc_arch *tc_arch_base(const tc_arch *a) {
  return a->base ? a->base : a;
}
/* One number per table, base tables and variants alike, for formats that
 * name the table in a header (tct): the arch id, plus TC_ARCH_WIRE_FPU
 * for the FPU variant. tc_arch_by_wire_id: NULL for an unknown number. */
enum { TC_ARCH_WIRE_FPU = 0x100 };
unsigned tc_arch_wire_id(const tc_arch *arch);
const tc_arch *tc_arch_by_wire_id(uint64_t wire);

/* The arch folder's engine.inc lines, TC_ENGINE_MODES(NAME, UC_ARCH_x, N,
 * UC_MODE_x, N, CS_ARCH_x, N, CS_MODE_x, N), as constants NAME_uc_arch,
 * NAME_uc_mode, NAME_cs_arch, NAME_cs_mode for the descriptor. */
#define TC_ENGINE_MODES_AS_ENUM(name, ua, uan, um, umn, ca, can, cm, cmn)      \
  enum {                                                                       \
    name##_uc_arch = (uan),                                                    \
    name##_uc_mode = (umn),                                                    \
    name##_cs_arch = (can),                                                    \
    name##_cs_mode = (cmn)                                                     \
  };

#define TC_ARCH_COUNT(a) ((uint16_t)(sizeof(a) / sizeof(a[0])))

/* The register a capstone register name stands for: sub-registers and
 * aliases give the arch-table register holding them (x86 eax/ax/al -> rax,
 * r8d -> r8, ymm3 -> xmm3, st(2) -> st2; arm sb -> r9, sN -> d(N/2), qN ->
 * d(2N) with *second = d(2N+1); arm64 wN -> xN, b/h/s/d/qN -> vN). Returns
 * -1 if the table has none (x86 mmN, unknown names) and -2 for a name that
 * holds no state (arm64 xzr/wzr). second may be NULL; else set to -1 or
 * the second register. */
int tc_arch_reg_from_capstone(const tc_arch *arch, const char *name,
                              int *second);

/* The arch an ELF file's e_machine, class and byte order name, or NULL. */
const tc_arch *tc_arch_by_elf(uint16_t machine, int is64, int big_endian);

/* The arch whose numbers and names a compat syscall uses
 * (tc_syscall_event.compat): i386 for x86-64, else the arch itself. */
const tc_arch *tc_arch_compat_table(const tc_arch *arch);
/* Whether an instruction traps into the compat table (x86-64's
 * `int $0x80`), for readers that rebuild syscalls from registers. */
bool tc_arch_compat_trap(const tc_arch *arch, const uint8_t *bytes,
                         size_t size);
/* The compat table's argument registers (indices into arch's regs; their
 * low 32 bits): x86-64's rbx, rcx, rdx, rsi, rdi, rbp. */
const int *tc_arch_compat_arg_regs(const tc_arch *arch);

#endif
