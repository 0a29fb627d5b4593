/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The engine's x86-64 and i386 (tc_engine_arch_ops, emu/engine/emu.h): the
 * CPU model and the CPUID it is shown as, the CPU state Linux starts a
 * process with, the syscall/sysenter and cpuid hooks, interrupts and icebp
 * as signals, i386's segment bases. */
#include <signal.h>
#include <string.h>
#include <unicorn/unicorn.h>

#include "common/arch.h"
#include "emu/engine/emu.h"

/* Unicorn 2.0.1 reports no FPU/SSE in CPUID, which breaks glibc; answer
 * with one consistent baseline instead (see unicorn-2.0.1.md row 17):
 * FPU TSC CX8 CMOV MMX FXSR SSE SSE2 SSE3 SSSE3 SSE4.1 SSE4.2 CX16; no
 * AVX/XSAVE/OSXSAVE/POPCNT (Unicorn 2.0.1 cannot execute popcnt). */
static int hook_cpuid(uc_engine *uc, void *user) {
  tc_emu *emu = user;
  (void)emu;
  /* In 32-bit mode Unicorn ignores the R*X ids: use E*X there. */
  bool is64 = emu->arch->ptr_size == 8;
  int ra = is64 ? UC_X86_REG_RAX : UC_X86_REG_EAX;
  int rb = is64 ? UC_X86_REG_RBX : UC_X86_REG_EBX;
  int rc = is64 ? UC_X86_REG_RCX : UC_X86_REG_ECX;
  int rd = is64 ? UC_X86_REG_RDX : UC_X86_REG_EDX;
  uint64_t leaf = 0, sub = 0;
  uc_reg_read(uc, ra, &leaf);
  uc_reg_read(uc, rc, &sub);
  uint32_t a = 0, b = 0, c = 0, d = 0;
  switch ((uint32_t)leaf) {
  case 0: /* max leaf 7, "GenuineIntel" */
    a = 7;
    b = 0x756e6547;
    d = 0x49656e69;
    c = 0x6c65746e;
    break;
  case 1:
    a = 0x000306c3; /* family 6 model 0x3c stepping 3 */
    b = 0x00000800; /* CLFLUSH size 8 qwords, 1 logical cpu, apic 0 */
    c = (1u << 0) | (1u << 9) | (1u << 13) | (1u << 19) | (1u << 20);
    d = 0x078bfbffu & ~(1u << 28); /* FPU..SSE2, no HTT */
    break;
  case 7:
    a = b = c = d = 0; /* no extended features */
    break;
  case 0x80000000:
    a = 0x80000008;
    break;
  case 0x80000001:
    c = 1u << 0;                              /* LAHF/SAHF in 64-bit mode */
    d = (1u << 11) | (1u << 29) | (1u << 20); /* SYSCALL, LM, NX */
    break;
  case 0x80000008:
    a = 0x00003028; /* 48-bit virtual, 40-bit physical */
    break;
  default:
    break;
  }
  (void)sub;
  uint64_t va = a, vb = b, vc = c, vd = d;
  uc_reg_write(uc, ra, &va);
  uc_reg_write(uc, rb, &vb);
  uc_reg_write(uc, rc, &vc);
  uc_reg_write(uc, rd, &vd);
  return 1; /* skip the instruction: our answer stands */
}

/* x86 control register bits (Intel SDM vol. 3, 2.5) */
enum {
  TC_X86_CR0_MP = 1u << 1,
  TC_X86_CR0_EM = 1u << 2,
  TC_X86_CR0_TS = 1u << 3,
  TC_X86_CR0_NE = 1u << 5,
  TC_X86_CR4_OSFXSR = 1u << 9,
  TC_X86_CR4_OSXMMEXCPT = 1u << 10,
};

static void start_state(tc_emu *emu) {
  /* Linux starts processes with x87 exceptions masked, MXCSR default
   * and an empty x87 tag word; Unicorn starts with zeros. */
  uint64_t fpcw = 0x037f, mxcsr = 0x1f80, fptag = 0xffff;
  uc_reg_write(emu->uc, UC_X86_REG_FPCW, &fpcw);
  uc_reg_write(emu->uc, UC_X86_REG_MXCSR, &mxcsr);
  uc_reg_write(emu->uc, UC_X86_REG_FPTAG, &fptag);
  /* CR4.OSFXSR and OSXMMEXCPT, as Linux runs user code: without OSFXSR,
   * fxsave/fxrstor skip MXCSR and XMM0-15, and ld.so's lazy-binding
   * trampoline (_dl_runtime_resolve_fxsave) then loses the XMM
   * arguments of every first call (printf("%f") printed 0 or nan).
   * CR0: MP and NE set, EM and TS clear (the FPU is the process's). */
  uint64_t cr0 = 0, cr4 = 0;
  uc_reg_read(emu->uc, UC_X86_REG_CR0, &cr0);
  cr0 = (cr0 | TC_X86_CR0_MP | TC_X86_CR0_NE) &
        ~(uint64_t)(TC_X86_CR0_EM | TC_X86_CR0_TS);
  uc_reg_write(emu->uc, UC_X86_REG_CR0, &cr0);
  uc_reg_read(emu->uc, UC_X86_REG_CR4, &cr4);
  cr4 |= TC_X86_CR4_OSFXSR | TC_X86_CR4_OSXMMEXCPT;
  uc_reg_write(emu->uc, UC_X86_REG_CR4, &cr4);
}

/* The CPU the engine executes, named, not each Unicorn's default:
 * hook_cpuid reports a Haswell (SSE3, SSSE3, SSE4.1/4.2, no AVX), and
 * glibc picks its string functions from that. Unicorn 2.1's default
 * (qemu64) has no SSSE3: palignr raised SIGILL in glibc's memcpy. On 2.0.1
 * every recording is byte-identical with or without this
 * (scripts/golden.sh, 3,097 hashes). */
static void cpu_model(tc_emu *emu) {
  uc_ctl_set_cpu_model(emu->uc, UC_CPU_X86_HASWELL);
}

static void hook_syscall_insn(uc_engine *uc, void *user) {
  tc_emu *emu = user;
  if (emu->arch->ptr_size == 8) {
    /* The syscall instruction itself saves the return address in rcx and
     * rflags in r11 (Unicorn's hook path skips that); RIP is still the
     * syscall's own address here. */
    uint64_t rip = 0, rflags = 0;
    uc_reg_read(uc, UC_X86_REG_RIP, &rip);
    uc_reg_read(uc, UC_X86_REG_RFLAGS, &rflags);
    rip += 2;
    uc_reg_write(uc, UC_X86_REG_RCX, &rip);
    uc_reg_write(uc, UC_X86_REG_R11, &rflags);
  }
  emu->trap_insn_size = 2; /* the engine then steps over the instruction */
  tc_emu_os_syscall(emu);
  emu->trap_insn_size = 0;
  /* Unicorn continues after the syscall instruction by itself. */
}

static int install(tc_emu *emu, tc_error *err) {
  uc_hook h;
  uc_err e = uc_hook_add(emu->uc, &h, UC_HOOK_INSN, (void *)hook_cpuid, emu, 1,
                         0, UC_X86_INS_CPUID);
  for (int i = 0; !e && i < 3 && emu->arch->sys.traps[i].kind != TC_TRAP_NONE;
       i++) {
    tc_trap_kind k = emu->arch->sys.traps[i].kind;
    if (k == TC_TRAP_INSN_SYSCALL || k == TC_TRAP_INSN_SYSENTER)
      /* Unhooked syscall/sysenter run as NOPs in 2.0.1: always hook. */
      e = uc_hook_add(
          emu->uc, &h, UC_HOOK_INSN, (void *)hook_syscall_insn, emu, 1, 0,
          k == TC_TRAP_INSN_SYSCALL ? UC_X86_INS_SYSCALL : UC_X86_INS_SYSENTER);
  }
  if (e) {
    tc_error_set(err, "unicorn: cannot install hooks: %s", uc_strerror(e));
    return -1;
  }
  return 0;
}

static int x86_signal_for_intno(uint32_t intno, tc_fault_kind *kind) {
  switch (intno) {
  case 0: /* #DE */
    *kind = TC_FAULT_DIVIDE;
    return SIGFPE;
  case 1: /* #DB */
  case 3: /* int3 */
    *kind = TC_FAULT_OTHER;
    return SIGTRAP;
  case 4:  /* #OF (into) */
  case 5:  /* #BR */
  case 13: /* #GP */
    *kind = TC_FAULT_OTHER;
    return SIGSEGV;
  case 6: /* #UD */
    *kind = TC_FAULT_INVALID_INSN;
    return SIGILL;
  case 16: /* x87 FP error */
  case 19: /* SIMD FP */
    *kind = TC_FAULT_OTHER;
    return SIGFPE;
  case 14:
    *kind = TC_FAULT_OTHER;
    return SIGSEGV;
  default:
    *kind = TC_FAULT_OTHER;
    return SIGSEGV;
  }
}

/* Whether the x86 instruction at pc is div/idiv (F6/F7 /6, /7). */
static bool x86_is_div(tc_emu *emu, uint64_t pc) {
  uint8_t b[16];
  size_t n = 0;
  while (n < sizeof b && tc_emu_read(emu, pc + n, &b[n], 1) == 0)
    n++;
  size_t i = 0;
  while (i < n &&
         (b[i] == 0x66 || b[i] == 0x67 || b[i] == 0xf0 || b[i] == 0xf2 ||
          b[i] == 0xf3 || b[i] == 0x2e || b[i] == 0x36 || b[i] == 0x3e ||
          b[i] == 0x26 || b[i] == 0x64 || b[i] == 0x65))
    i++;
  if (emu->arch->ptr_size == 8 && i < n && (b[i] & 0xf0) == 0x40)
    i++; /* REX */
  if (i + 1 >= n || (b[i] != 0xf6 && b[i] != 0xf7))
    return false;
  unsigned reg = (b[i + 1] >> 3) & 7;
  return reg == 6 || reg == 7;
}

static int intr_signal(tc_emu *emu, uint32_t intno, tc_fault_kind *kind) {
  if (intno == 8)
    /* Unicorn 2.0.1 never clears QEMU's old_exception after an interrupt
     * hook, so the second contributory exception of a run (#DE, #GP)
     * arrives as a double fault. Which one it was: a div/idiv raises #DE
     * (the program is still at the instruction), anything else #GP. */
    return x86_is_div(emu, emu->cur_pc) ? x86_signal_for_intno(0, kind)
                                        : x86_signal_for_intno(13, kind);
  /* int3 is a trap: Linux's frame resumes after it (Unicorn's PC is there
   * already), so a handler that returns goes on. */
  if (intno == 3 && !emu->faulted)
    emu->fault_resume = tc_emu_reg(emu, emu->arch->pc_reg);
  return x86_signal_for_intno(intno, kind);
}

/* icebp (int1): Unicorn 2.0.1 calls it invalid; Linux gets a #DB trap and
 * sends SIGTRAP (TRAP_BRKPT, si_addr after it), and a handler that
 * returns goes on after it. */
static bool insn_invalid(tc_emu *emu) {
  uint8_t op = 0;
  if (tc_emu_read(emu, emu->cur_pc, &op, 1) < 0 || op != 0xf1 || emu->faulted)
    return false;
  emu->fault_resume = emu->cur_pc + 1;
  emu->fault_debug = true;
  /* the FAULT's addr is si_addr, the instruction after (int3's is its pc) */
  tc_emu_fault(emu, TC_FAULT_OTHER, emu->cur_pc + 1, SIGTRAP);
  return true;
}

static void fix_state_i386(tc_emu *emu, uint8_t *state) {
  if (!emu->gdt_addr)
    return;
  /* Unicorn runs at CPL 0, so SS holds __USER_DS with RPL 0 (see
   * tc_linux_x86_setup_gdt); the guest's state as Linux has it is RPL 3 (0x2b).
   */
  int ss_reg = tc_arch_reg_index(emu->arch, "ss");
  if (ss_reg >= 0) {
    uint64_t ss = tc_state_get(emu->arch, state, ss_reg);
    if ((ss & 3) == 0 && (ss >> 3) != 0)
      tc_state_set(emu->arch, state, ss_reg, ss | 3);
  }
  static const char *const pairs[2][2] = {{"fs", "fs_base"}, {"gs", "gs_base"}};
  for (int i = 0; i < 2; i++) {
    int sel_reg = tc_arch_reg_index(emu->arch, pairs[i][0]);
    int base_reg = tc_arch_reg_index(emu->arch, pairs[i][1]);
    if (sel_reg < 0 || base_reg < 0)
      continue;
    uint64_t sel = tc_state_get(emu->arch, state, sel_reg);
    uint8_t d[8];
    /* GDT selectors only (TI = 0); the null selector has no base. */
    if ((sel & 4) || (sel >> 3) == 0 ||
        tc_emu_read(emu, emu->gdt_addr + (sel >> 3) * 8, d, 8) < 0)
      continue;
    uint32_t base = (uint32_t)d[2] | (uint32_t)d[3] << 8 |
                    (uint32_t)d[4] << 16 | (uint32_t)d[7] << 24;
    tc_state_set(emu->arch, state, base_reg, base);
  }
}

/* fs_base and gs_base: 32-bit mode does nothing with them (a read gives 0
 * or leaves the buffer as it was, a write is ignored, and Unicorn 2.1.x
 * prints a deprecation warning for each access). */
static bool reg_absent_i386(const tc_arch *arch, int reg) {
  return arch->regs[reg].uc_id == UC_X86_REG_FS_BASE ||
         arch->regs[reg].uc_id == UC_X86_REG_GS_BASE;
}

/* The segment registers tc_emu_reset_regs leaves: the loader's (i386's
 * GDT selectors). */
static const char *const segments[] = {"cs", "ss", "ds", "es", NULL};

const tc_engine_arch_ops tc_engine_x86_64 = {
    .cpu_model = cpu_model,
    .start_state = start_state,
    .install = install,
    .intr_signal = intr_signal,
    .insn_invalid = insn_invalid,
    .reset_keeps = segments,
};

const tc_engine_arch_ops tc_engine_i386 = {
    .cpu_model = cpu_model,
    .start_state = start_state,
    .install = install,
    .intr_signal = intr_signal,
    .insn_invalid = insn_invalid,
    .fix_state = fix_state_i386,
    .reg_absent = reg_absent_i386,
    .reset_keeps = segments,
};
