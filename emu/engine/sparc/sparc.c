/* SPDX-License-Identifier: GPL-2.0-or-later */
/* SPARC register windows and the syscall carry flag on Unicorn 2.0.1
 * (issue 30, docs/arches.md).
 *
 * Unicorn exposes no CWP, CANSAVE or CANRESTORE, and both counts are 0, so
 * every `save`, `restore`, `return` and `flushw` traps (0x80 spill, 0xc0
 * fill) with the PC at the instruction. The engine carries them out itself
 * with every window kept spilled, which the SPARC ABI allows: `save`
 * stores the current window's locals and ins into the save area at %sp
 * (+2047 when %sp is odd: 64-bit slots; 32-bit slots at an even %sp), makes
 * the outs the new ins and clears the rest (Linux hands out clean
 * windows); `restore` and `return` do the reverse, reloading the caller's
 * locals and ins from the save area at the restored %sp. Each writes its
 * destination from operands read in the old window.
 *
 * Control flow: the engine cannot set nPC (writing the PC sets nPC =
 * PC + 4), so
 *  - a window instruction in the delay slot of `call`, `jmpl` or `ba` goes
 *    to that branch's target, which this file's code hook saw executed
 *    just before (a conditional branch's is refused: its direction needs
 *    the condition codes, which Unicorn cannot read);
 *  - `return` (a jump with a delay slot) resumes at its delay slot, and the
 *    code hook stops the engine at the instruction after it, before it
 *    runs, so the run loop resumes at the target (tc_emu_resume_pc).
 *
 * Syscalls report errors in the carry flag (icc.C and xcc.C), which the
 * API cannot write either: the engine keeps a private page of two
 * instructions, `wr %g0, 0, %ccr` and `wr %g0, 0x11, %ccr`, runs the
 * right one after the syscall and redirects to the instruction after the
 * trap. The page is no guest mapping (not in the process's map) and the
 * recorder never records what runs there (tc_sparc_hidden). */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unicorn/unicorn.h>

#include "common/byteorder.h"
#include "emu/engine/emu.h"

/* Above the stack top (loaders/loader.h) and below the 41 bits Unicorn
 * addresses (emu.h), so no guest mapping can be there. */
#define SPARC_PRIVATE_PAGE (TC_SPARC64_ADDR_LIMIT - 0x2000)
#define SPARC_PAGE 8192u
#define CCR_CLEAR_AT (SPARC_PRIVATE_PAGE + 0)
#define CCR_CARRY_AT (SPARC_PRIVATE_PAGE + 8)
#define NO_ADDR UINT64_MAX

enum { R_G0 = 0, R_O0 = 8, R_SP = 14, R_O7 = 15, R_L0 = 16, R_I0 = 24 };

static inline uint32_t bits(uint32_t w, int hi, int lo) {
  return (w >> lo) & ((1u << (hi - lo + 1)) - 1);
}

static int64_t sext(uint64_t v, int width) {
  uint64_t m = 1ull << (width - 1);
  return (int64_t)((v ^ m) - m);
}

bool tc_sparc_hidden(const tc_emu *emu, uint64_t pc) {
  return emu->sparc_private && pc >= SPARC_PRIVATE_PAGE &&
         pc < SPARC_PRIVATE_PAGE + SPARC_PAGE;
}

/* The second operand of a format-3 instruction: simm13 or rs2. */
static uint64_t operand2(tc_emu *emu, uint32_t w) {
  if (bits(w, 13, 13))
    return (uint64_t)sext(bits(w, 12, 0), 13);
  return tc_emu_reg(emu, (int)bits(w, 4, 0));
}

static uint64_t effective(tc_emu *emu, uint32_t w) {
  return tc_emu_reg(emu, (int)bits(w, 18, 14)) + operand2(emu, w);
}

/* Where the window of a frame whose stack pointer is sp is kept: as
 * Linux's spill and fill handlers do, an odd %sp is a 64-bit frame (8-byte
 * slots at %sp + 2047), an even one a 32-bit frame (4-byte slots). */
static void save_area(uint64_t sp, uint64_t *addr, unsigned *slot) {
  bool biased = sp & 1;
  *addr = biased ? sp + 2047 : sp & 0xffffffffull;
  *slot = biased ? 8 : 4;
}

static int spill(tc_emu *emu, uint64_t sp) {
  uint64_t at;
  unsigned slot;
  save_area(sp, &at, &slot);
  uint8_t buf[16 * 8];
  for (int i = 0; i < 16; i++)
    put_uint(buf + i * slot, tc_emu_reg(emu, R_L0 + i), slot, 1);
  return tc_emu_write(emu, at, buf, 16 * slot) < 0 ? -1 : 0;
}

static int fill(tc_emu *emu, uint64_t sp) {
  uint64_t at;
  unsigned slot;
  save_area(sp, &at, &slot);
  uint8_t buf[16 * 8];
  if (tc_emu_read(emu, at, buf, 16 * slot) < 0)
    return -1;
  for (int i = 0; i < 16; i++)
    tc_emu_set_reg(emu, R_L0 + i, get_uint(buf + i * slot, slot, 1));
  return 0;
}

/* The target of the control transfer whose delay slot is at pc, from
 * the instruction before it (which this file's code hook saw run): 0 and
 * a message when it cannot be known. */
static bool delay_slot_target(tc_emu *emu, uint64_t pc, uint64_t *target,
                              bool *in_slot) {
  *in_slot = false;
  if (emu->sparc_prev_pc != pc - 4)
    return true;
  uint8_t b[4];
  if (tc_emu_read(emu, pc - 4, b, 4) < 0)
    return true;
  uint32_t w = (uint32_t)get_uint(b, 4, 1);
  uint32_t op = bits(w, 31, 30), op2 = bits(w, 24, 22), op3 = bits(w, 24, 19);
  if (op == 1) { /* call */
    *in_slot = true;
    *target = pc - 4 + (uint64_t)(sext(bits(w, 29, 0), 30) * 4);
    return true;
  }
  if (op == 2 && op3 == 0x38) { /* jmpl: rd got pc - 4, rs1 unless rd */
    *in_slot = true;
    uint32_t rd = bits(w, 29, 25), rs1 = bits(w, 18, 14);
    if (rd != 0 && (rd == rs1 || (!bits(w, 13, 13) && rd == bits(w, 4, 0))))
      return false;
    *target = effective(emu, w);
    return true;
  }
  if (op == 0 && (op2 == 2 || op2 == 1 || op2 == 6 || op2 == 5 ||
                  op2 == 3)) { /* Bicc, BPcc, FBfcc, FBPfcc, BPr */
    uint32_t cond = bits(w, 28, 25);
    if (op2 != 3 && cond == 8) { /* ba: always, the slot runs unless ,a */
      *in_slot = true;
      int64_t disp = op2 == 2 || op2 == 6 ? sext(bits(w, 21, 0), 22)
                                          : sext(bits(w, 18, 0), 19);
      *target = pc - 4 + (uint64_t)(disp * 4);
      return true;
    }
    if (op2 != 3 && cond == 0) /* bn: falls through */
      return true;
    *in_slot = true;
    return false;
  }
  return true;
}

/* fp_disabled (0x20): Linux turns the FPU on at a program's first FP
 * instruction and runs it again. Unicorn 2.0.1 starts its sparc64 CPU
 * with PSTATE.PEF clear, and neither its API nor a user-mode instruction
 * can set it (FPRS.FEF, which `wr %fprs` sets, is not enough): no FP or
 * VIS instruction can run (docs/arches.md), so the recording ends here
 * with an error rather than a signal Linux never sends. */
static bool fp_disabled(tc_emu *emu) {
  uint64_t pc = tc_emu_reg(emu, emu->arch->pc_reg);
  snprintf(emu->unsupported, sizeof emu->unsupported,
           "sparc64: this Unicorn cannot run floating-point or VIS "
           "instructions (its CPU has PSTATE.PEF clear, which nothing can "
           "set): the instruction at 0x%llx",
           (unsigned long long)pc);
  uc_emu_stop(emu->uc);
  return true;
}

/* A window trap or fp_disabled: false if it was none of ours (the caller then
 * treats it as a fault). */
bool tc_sparc_window_trap(tc_emu *emu, uint32_t intno) {
  if (intno == 0x20)
    return fp_disabled(emu);
  if (intno < 0x80 || intno >= 0x100)
    return false;
  uint64_t pc = tc_emu_reg(emu, emu->arch->pc_reg);
  uint8_t b[4];
  if (tc_emu_read(emu, pc, b, 4) < 0)
    return false;
  uint32_t w = (uint32_t)get_uint(b, 4, 1);
  uint32_t op = bits(w, 31, 30), op3 = bits(w, 24, 19);
  if (op != 2 || (op3 != 0x3c && op3 != 0x3d && op3 != 0x39 && op3 != 0x2b))
    return false;
  uint64_t next = pc + 4, target = 0;
  bool in_slot;
  if (!delay_slot_target(emu, pc, &target, &in_slot)) {
    snprintf(emu->unsupported, sizeof emu->unsupported,
             "sparc: a window instruction at 0x%llx in the delay slot of a "
             "conditional branch is not supported (its direction needs the "
             "condition codes, which Unicorn cannot read)",
             (unsigned long long)pc);
    uc_emu_stop(emu->uc);
    return true;
  }
  if (in_slot)
    next = target;
  uint32_t rd = bits(w, 29, 25);
  uint64_t value = 0;
  switch (op3) {
  case 0x2b: /* flushw: every window is in memory already */
    break;
  case 0x3c: { /* save */
    value = effective(emu, w);
    if (spill(emu, tc_emu_reg(emu, R_SP)) < 0) {
      tc_emu_fault(emu, TC_FAULT_UNMAPPED_WRITE, pc, SIGSEGV);
      return true;
    }
    for (int i = 0; i < 8; i++) {
      tc_emu_set_reg(emu, R_I0 + i, tc_emu_reg(emu, R_O0 + i));
      tc_emu_set_reg(emu, R_L0 + i, 0);
      tc_emu_set_reg(emu, R_O0 + i, 0);
    }
    if (rd)
      tc_emu_set_reg(emu, (int)rd, value);
    break;
  }
  case 0x3d:   /* restore */
  case 0x39: { /* return: a restore and a jump with a delay slot */
    value = effective(emu, w);
    uint64_t caller_sp = tc_emu_reg(emu, R_I0 + 6);
    uint64_t saved[16];
    for (int i = 0; i < 16; i++)
      saved[i] = tc_emu_reg(emu, R_L0 + i);
    for (int i = 0; i < 8; i++)
      tc_emu_set_reg(emu, R_O0 + i, saved[8 + i]);
    if (fill(emu, caller_sp) < 0) {
      for (int i = 0; i < 16; i++) /* as it was: the fault is precise */
        tc_emu_set_reg(emu, R_L0 + i, saved[i]);
      tc_emu_fault(emu, TC_FAULT_UNMAPPED_READ, pc, SIGSEGV);
      return true;
    }
    if (op3 == 0x3d && rd)
      tc_emu_set_reg(emu, (int)rd, value);
    if (op3 == 0x39) {
      emu->sparc_redirect_at = pc + 8;
      emu->sparc_redirect_to = value & ~3ull;
    }
    break;
  }
  }
  tc_emu_set_reg(emu, emu->arch->pc_reg, next);
  return true;
}

/* After a syscall: the carry flag says whether it failed; then the
 * instruction after the trap. */
void tc_sparc_syscall_done(tc_emu *emu, bool failed) {
  uint64_t next = tc_emu_reg(emu, emu->arch->pc_reg);
  uint64_t at = failed ? CCR_CARRY_AT : CCR_CLEAR_AT;
  emu->sparc_redirect_at = at + 4;
  emu->sparc_redirect_to = next;
  tc_emu_set_reg(emu, emu->arch->pc_reg, at);
}

void tc_sparc_first_run(tc_emu *emu) {
  emu->sparc_started = true;
  tc_sparc_syscall_done(emu, false);
}

static void hook_code(uc_engine *uc, uint64_t address, uint32_t size,
                      void *user) {
  tc_emu *emu = user;
  (void)size;
  if (address == emu->sparc_redirect_at) {
    /* Stopped before it runs (no later hook sees it): the run loop goes
     * on at the target (tc_emu_resume_pc). */
    emu->sparc_redirect_at = NO_ADDR;
    emu->resume_override = emu->sparc_redirect_to;
    emu->has_resume_override = true;
    uc_emu_stop(uc);
    return;
  }
  if (!tc_sparc_hidden(emu, address)) {
    /* The hook runs for a trapping instruction too: at its trap, prev is
     * the instruction before it. */
    emu->sparc_prev_pc = emu->sparc_cur_pc;
    emu->sparc_cur_pc = address;
  }
}

int tc_sparc_install(tc_emu *emu, tc_error *err) {
  emu->sparc_redirect_at = NO_ADDR;
  emu->sparc_prev_pc = emu->sparc_cur_pc = NO_ADDR;
  /* wr %g0, 0, %ccr ; nop ; wr %g0, 0x11, %ccr ; nop */
  static const uint32_t stubs[4] = {0x85802000, 0x01000000, 0x85802011,
                                    0x01000000};
  uint8_t code[16];
  for (int i = 0; i < 4; i++)
    put_uint(code + 4 * i, stubs[i], 4, 1);
  uc_err e = uc_mem_map(emu->uc, SPARC_PRIVATE_PAGE, SPARC_PAGE,
                        UC_PROT_READ | UC_PROT_EXEC);
  if (!e)
    e = uc_mem_write(emu->uc, SPARC_PRIVATE_PAGE, code, sizeof code);
  uc_hook h;
  if (!e)
    e = uc_hook_add(emu->uc, &h, UC_HOOK_CODE, (void *)hook_code, emu, 1, 0);
  if (e) {
    tc_error_set(err, "unicorn: cannot set up sparc: %s", uc_strerror(e));
    return -1;
  }
  emu->sparc_private = true;
  return 0;
}

/* SPARC V9 trap types (QEMU's TT_*), as Linux turns them into signals. */
static int sparc_signal_for_intno(uint32_t intno, tc_fault_kind *kind) {
  *kind = TC_FAULT_OTHER;
  switch (intno) {
  case 0x02: /* illegal instruction (illtrap, unimplemented) */
  case 0x03: /* privileged opcode */
  case 0x11: /* privileged action */
    *kind = TC_FAULT_INVALID_INSN;
    return SIGILL;
  case 0x28: /* division by zero */
    *kind = TC_FAULT_DIVIDE;
    return SIGFPE;
  case 0x21: /* fp exception */
  case 0x22:
    return SIGFPE;
  case 0x34: /* misaligned address */
    return SIGBUS;
  case 0x101: /* ta 1: the breakpoint trap */
    return SIGTRAP;
  default:
    return intno >= 0x100 ? SIGILL : SIGSEGV; /* other ta: a bad trap */
  }
}

static int intr_signal(tc_emu *emu, uint32_t intno, tc_fault_kind *kind) {
  if (tc_sparc_window_trap(emu, intno))
    return 0;
  return sparc_signal_for_intno(intno, kind);
}

/* The OS returns -errno like everywhere; the ABI wants the errno positive
 * and the carry flag set, unless the call did not come back here (exit,
 * execve, sigreturn, a restart). */
static void syscall_with_carry(tc_emu *emu) {
  if (!emu->sparc_private) {
    emu->os->syscall(emu);
    return;
  }
  uint64_t next = tc_emu_reg(emu, emu->arch->pc_reg);
  emu->os->syscall(emu);
  if (emu->exited || emu->faulted || emu->restart_pending ||
      tc_emu_reg(emu, emu->arch->pc_reg) != next)
    return;
  int ret = emu->arch->sys.ret_reg;
  int64_t v = (int64_t)tc_emu_reg(emu, ret);
  bool failed = v < 0 && v >= -4095;
  if (failed)
    tc_emu_set_reg(emu, ret, (uint64_t)-v);
  tc_sparc_syscall_done(emu, failed);
}

static void before_run(tc_emu *emu) {
  if (emu->sparc_private && !emu->sparc_started)
    tc_sparc_first_run(emu);
}

const tc_engine_arch_ops tc_engine_sparc64 = {
    .install = tc_sparc_install,
    .intr_signal = intr_signal,
    .syscall = syscall_with_carry,
    .before_run = before_run,
    .addr_limit = TC_SPARC64_ADDR_LIMIT,
};
