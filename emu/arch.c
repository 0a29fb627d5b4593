/* The arch table: one entry per supported guest architecture. Everything
 * arch-specific that is data (registers, syscall ABI, ELF identity) lives
 * here; code elsewhere is table-driven. */
#include <capstone/capstone.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <unicorn/unicorn.h>

#include "emu/sysnames.h"
#include "tracecorn/tracecorn.h"

/* Register order is the state-image order. Indices are used by the
 * syscall ABI below, so keep the two in step. */
static const tc_reg_info regs_x86_64[] = {
    {"rax", 8, TC_REG_GPR, 0, UC_X86_REG_RAX},
    {"rbx", 8, TC_REG_GPR, 8, UC_X86_REG_RBX},
    {"rcx", 8, TC_REG_GPR, 16, UC_X86_REG_RCX},
    {"rdx", 8, TC_REG_GPR, 24, UC_X86_REG_RDX},
    {"rsi", 8, TC_REG_GPR, 32, UC_X86_REG_RSI},
    {"rdi", 8, TC_REG_GPR, 40, UC_X86_REG_RDI},
    {"rbp", 8, TC_REG_GPR, 48, UC_X86_REG_RBP},
    {"rsp", 8, TC_REG_GPR | TC_REG_SP, 56, UC_X86_REG_RSP},
    {"r8", 8, TC_REG_GPR, 64, UC_X86_REG_R8},
    {"r9", 8, TC_REG_GPR, 72, UC_X86_REG_R9},
    {"r10", 8, TC_REG_GPR, 80, UC_X86_REG_R10},
    {"r11", 8, TC_REG_GPR, 88, UC_X86_REG_R11},
    {"r12", 8, TC_REG_GPR, 96, UC_X86_REG_R12},
    {"r13", 8, TC_REG_GPR, 104, UC_X86_REG_R13},
    {"r14", 8, TC_REG_GPR, 112, UC_X86_REG_R14},
    {"r15", 8, TC_REG_GPR, 120, UC_X86_REG_R15},
    {"rip", 8, TC_REG_PC, 128, UC_X86_REG_RIP},
    {"rflags", 8, TC_REG_FLAGS, 136, UC_X86_REG_RFLAGS},
    {"cs", 2, TC_REG_SEGMENT, 144, UC_X86_REG_CS},
    {"ss", 2, TC_REG_SEGMENT, 146, UC_X86_REG_SS},
    {"ds", 2, TC_REG_SEGMENT, 148, UC_X86_REG_DS},
    {"es", 2, TC_REG_SEGMENT, 150, UC_X86_REG_ES},
    {"fs", 2, TC_REG_SEGMENT, 152, UC_X86_REG_FS},
    {"gs", 2, TC_REG_SEGMENT, 154, UC_X86_REG_GS},
    {"fs_base", 8, TC_REG_SEGMENT, 156, UC_X86_REG_FS_BASE},
    {"gs_base", 8, TC_REG_SEGMENT, 164, UC_X86_REG_GS_BASE},
    {"st0", 10, TC_REG_FPU, 172, UC_X86_REG_ST0},
    {"st1", 10, TC_REG_FPU, 182, UC_X86_REG_ST1},
    {"st2", 10, TC_REG_FPU, 192, UC_X86_REG_ST2},
    {"st3", 10, TC_REG_FPU, 202, UC_X86_REG_ST3},
    {"st4", 10, TC_REG_FPU, 212, UC_X86_REG_ST4},
    {"st5", 10, TC_REG_FPU, 222, UC_X86_REG_ST5},
    {"st6", 10, TC_REG_FPU, 232, UC_X86_REG_ST6},
    {"st7", 10, TC_REG_FPU, 242, UC_X86_REG_ST7},
    {"fpcw", 2, TC_REG_FPU, 252, UC_X86_REG_FPCW},
    {"fpsw", 2, TC_REG_FPU, 254, UC_X86_REG_FPSW},
    {"fptag", 2, TC_REG_FPU, 256, UC_X86_REG_FPTAG},
    {"fip", 8, TC_REG_FPU, 258, UC_X86_REG_FIP},
    {"fcs", 2, TC_REG_FPU, 266, UC_X86_REG_FCS},
    {"fdp", 8, TC_REG_FPU, 268, UC_X86_REG_FDP},
    {"fds", 2, TC_REG_FPU, 276, UC_X86_REG_FDS},
    {"fop", 2, TC_REG_FPU, 278, UC_X86_REG_FOP},
    {"mxcsr", 4, TC_REG_VECTOR, 280, UC_X86_REG_MXCSR},
    {"xmm0", 16, TC_REG_VECTOR, 284, UC_X86_REG_XMM0},
    {"xmm1", 16, TC_REG_VECTOR, 300, UC_X86_REG_XMM1},
    {"xmm2", 16, TC_REG_VECTOR, 316, UC_X86_REG_XMM2},
    {"xmm3", 16, TC_REG_VECTOR, 332, UC_X86_REG_XMM3},
    {"xmm4", 16, TC_REG_VECTOR, 348, UC_X86_REG_XMM4},
    {"xmm5", 16, TC_REG_VECTOR, 364, UC_X86_REG_XMM5},
    {"xmm6", 16, TC_REG_VECTOR, 380, UC_X86_REG_XMM6},
    {"xmm7", 16, TC_REG_VECTOR, 396, UC_X86_REG_XMM7},
    {"xmm8", 16, TC_REG_VECTOR, 412, UC_X86_REG_XMM8},
    {"xmm9", 16, TC_REG_VECTOR, 428, UC_X86_REG_XMM9},
    {"xmm10", 16, TC_REG_VECTOR, 444, UC_X86_REG_XMM10},
    {"xmm11", 16, TC_REG_VECTOR, 460, UC_X86_REG_XMM11},
    {"xmm12", 16, TC_REG_VECTOR, 476, UC_X86_REG_XMM12},
    {"xmm13", 16, TC_REG_VECTOR, 492, UC_X86_REG_XMM13},
    {"xmm14", 16, TC_REG_VECTOR, 508, UC_X86_REG_XMM14},
    {"xmm15", 16, TC_REG_VECTOR, 524, UC_X86_REG_XMM15},
};
/* state image: 540 bytes, 59 registers */

static const tc_reg_info regs_x86[] = {
    {"eax", 4, TC_REG_GPR, 0, UC_X86_REG_EAX},
    {"ebx", 4, TC_REG_GPR, 4, UC_X86_REG_EBX},
    {"ecx", 4, TC_REG_GPR, 8, UC_X86_REG_ECX},
    {"edx", 4, TC_REG_GPR, 12, UC_X86_REG_EDX},
    {"esi", 4, TC_REG_GPR, 16, UC_X86_REG_ESI},
    {"edi", 4, TC_REG_GPR, 20, UC_X86_REG_EDI},
    {"ebp", 4, TC_REG_GPR, 24, UC_X86_REG_EBP},
    {"esp", 4, TC_REG_GPR | TC_REG_SP, 28, UC_X86_REG_ESP},
    {"eip", 4, TC_REG_PC, 32, UC_X86_REG_EIP},
    {"eflags", 4, TC_REG_FLAGS, 36, UC_X86_REG_EFLAGS},
    {"cs", 2, TC_REG_SEGMENT, 40, UC_X86_REG_CS},
    {"ss", 2, TC_REG_SEGMENT, 42, UC_X86_REG_SS},
    {"ds", 2, TC_REG_SEGMENT, 44, UC_X86_REG_DS},
    {"es", 2, TC_REG_SEGMENT, 46, UC_X86_REG_ES},
    {"fs", 2, TC_REG_SEGMENT, 48, UC_X86_REG_FS},
    {"gs", 2, TC_REG_SEGMENT, 50, UC_X86_REG_GS},
    {"fs_base", 4, TC_REG_SEGMENT, 52, UC_X86_REG_FS_BASE},
    {"gs_base", 4, TC_REG_SEGMENT, 56, UC_X86_REG_GS_BASE},
    {"st0", 10, TC_REG_FPU, 60, UC_X86_REG_ST0},
    {"st1", 10, TC_REG_FPU, 70, UC_X86_REG_ST1},
    {"st2", 10, TC_REG_FPU, 80, UC_X86_REG_ST2},
    {"st3", 10, TC_REG_FPU, 90, UC_X86_REG_ST3},
    {"st4", 10, TC_REG_FPU, 100, UC_X86_REG_ST4},
    {"st5", 10, TC_REG_FPU, 110, UC_X86_REG_ST5},
    {"st6", 10, TC_REG_FPU, 120, UC_X86_REG_ST6},
    {"st7", 10, TC_REG_FPU, 130, UC_X86_REG_ST7},
    {"fpcw", 2, TC_REG_FPU, 140, UC_X86_REG_FPCW},
    {"fpsw", 2, TC_REG_FPU, 142, UC_X86_REG_FPSW},
    {"fptag", 2, TC_REG_FPU, 144, UC_X86_REG_FPTAG},
    {"fip", 4, TC_REG_FPU, 146, UC_X86_REG_FIP},
    {"fcs", 2, TC_REG_FPU, 150, UC_X86_REG_FCS},
    {"fdp", 4, TC_REG_FPU, 152, UC_X86_REG_FDP},
    {"fds", 2, TC_REG_FPU, 156, UC_X86_REG_FDS},
    {"fop", 2, TC_REG_FPU, 158, UC_X86_REG_FOP},
    {"mxcsr", 4, TC_REG_VECTOR, 160, UC_X86_REG_MXCSR},
    {"xmm0", 16, TC_REG_VECTOR, 164, UC_X86_REG_XMM0},
    {"xmm1", 16, TC_REG_VECTOR, 180, UC_X86_REG_XMM1},
    {"xmm2", 16, TC_REG_VECTOR, 196, UC_X86_REG_XMM2},
    {"xmm3", 16, TC_REG_VECTOR, 212, UC_X86_REG_XMM3},
    {"xmm4", 16, TC_REG_VECTOR, 228, UC_X86_REG_XMM4},
    {"xmm5", 16, TC_REG_VECTOR, 244, UC_X86_REG_XMM5},
    {"xmm6", 16, TC_REG_VECTOR, 260, UC_X86_REG_XMM6},
    {"xmm7", 16, TC_REG_VECTOR, 276, UC_X86_REG_XMM7},
};
/* state image: 292 bytes, 43 registers */

static const tc_reg_info regs_arm[] = {
    {"r0", 4, TC_REG_GPR, 0, UC_ARM_REG_R0},
    {"r1", 4, TC_REG_GPR, 4, UC_ARM_REG_R1},
    {"r2", 4, TC_REG_GPR, 8, UC_ARM_REG_R2},
    {"r3", 4, TC_REG_GPR, 12, UC_ARM_REG_R3},
    {"r4", 4, TC_REG_GPR, 16, UC_ARM_REG_R4},
    {"r5", 4, TC_REG_GPR, 20, UC_ARM_REG_R5},
    {"r6", 4, TC_REG_GPR, 24, UC_ARM_REG_R6},
    {"r7", 4, TC_REG_GPR, 28, UC_ARM_REG_R7},
    {"r8", 4, TC_REG_GPR, 32, UC_ARM_REG_R8},
    {"r9", 4, TC_REG_GPR, 36, UC_ARM_REG_R9},
    {"r10", 4, TC_REG_GPR, 40, UC_ARM_REG_R10},
    {"r11", 4, TC_REG_GPR, 44, UC_ARM_REG_R11},
    {"r12", 4, TC_REG_GPR, 48, UC_ARM_REG_R12},
    {"sp", 4, TC_REG_GPR | TC_REG_SP, 52, UC_ARM_REG_SP},
    {"lr", 4, TC_REG_GPR, 56, UC_ARM_REG_LR},
    {"pc", 4, TC_REG_PC, 60, UC_ARM_REG_PC},
    {"cpsr", 4, TC_REG_FLAGS, 64, UC_ARM_REG_CPSR},
    {"fpscr", 4, TC_REG_VECTOR, 68, UC_ARM_REG_FPSCR},
    {"tpidruro", 4, TC_REG_SYSTEM, 72, UC_ARM_REG_C13_C0_3},
    {"d0", 8, TC_REG_VECTOR, 76, UC_ARM_REG_D0},
    {"d1", 8, TC_REG_VECTOR, 84, UC_ARM_REG_D1},
    {"d2", 8, TC_REG_VECTOR, 92, UC_ARM_REG_D2},
    {"d3", 8, TC_REG_VECTOR, 100, UC_ARM_REG_D3},
    {"d4", 8, TC_REG_VECTOR, 108, UC_ARM_REG_D4},
    {"d5", 8, TC_REG_VECTOR, 116, UC_ARM_REG_D5},
    {"d6", 8, TC_REG_VECTOR, 124, UC_ARM_REG_D6},
    {"d7", 8, TC_REG_VECTOR, 132, UC_ARM_REG_D7},
    {"d8", 8, TC_REG_VECTOR, 140, UC_ARM_REG_D8},
    {"d9", 8, TC_REG_VECTOR, 148, UC_ARM_REG_D9},
    {"d10", 8, TC_REG_VECTOR, 156, UC_ARM_REG_D10},
    {"d11", 8, TC_REG_VECTOR, 164, UC_ARM_REG_D11},
    {"d12", 8, TC_REG_VECTOR, 172, UC_ARM_REG_D12},
    {"d13", 8, TC_REG_VECTOR, 180, UC_ARM_REG_D13},
    {"d14", 8, TC_REG_VECTOR, 188, UC_ARM_REG_D14},
    {"d15", 8, TC_REG_VECTOR, 196, UC_ARM_REG_D15},
    {"d16", 8, TC_REG_VECTOR, 204, UC_ARM_REG_D16},
    {"d17", 8, TC_REG_VECTOR, 212, UC_ARM_REG_D17},
    {"d18", 8, TC_REG_VECTOR, 220, UC_ARM_REG_D18},
    {"d19", 8, TC_REG_VECTOR, 228, UC_ARM_REG_D19},
    {"d20", 8, TC_REG_VECTOR, 236, UC_ARM_REG_D20},
    {"d21", 8, TC_REG_VECTOR, 244, UC_ARM_REG_D21},
    {"d22", 8, TC_REG_VECTOR, 252, UC_ARM_REG_D22},
    {"d23", 8, TC_REG_VECTOR, 260, UC_ARM_REG_D23},
    {"d24", 8, TC_REG_VECTOR, 268, UC_ARM_REG_D24},
    {"d25", 8, TC_REG_VECTOR, 276, UC_ARM_REG_D25},
    {"d26", 8, TC_REG_VECTOR, 284, UC_ARM_REG_D26},
    {"d27", 8, TC_REG_VECTOR, 292, UC_ARM_REG_D27},
    {"d28", 8, TC_REG_VECTOR, 300, UC_ARM_REG_D28},
    {"d29", 8, TC_REG_VECTOR, 308, UC_ARM_REG_D29},
    {"d30", 8, TC_REG_VECTOR, 316, UC_ARM_REG_D30},
    {"d31", 8, TC_REG_VECTOR, 324, UC_ARM_REG_D31},
};
/* state image: 332 bytes, 51 registers */

static const tc_reg_info regs_arm64[] = {
    {"x0", 8, TC_REG_GPR, 0, UC_ARM64_REG_X0},
    {"x1", 8, TC_REG_GPR, 8, UC_ARM64_REG_X1},
    {"x2", 8, TC_REG_GPR, 16, UC_ARM64_REG_X2},
    {"x3", 8, TC_REG_GPR, 24, UC_ARM64_REG_X3},
    {"x4", 8, TC_REG_GPR, 32, UC_ARM64_REG_X4},
    {"x5", 8, TC_REG_GPR, 40, UC_ARM64_REG_X5},
    {"x6", 8, TC_REG_GPR, 48, UC_ARM64_REG_X6},
    {"x7", 8, TC_REG_GPR, 56, UC_ARM64_REG_X7},
    {"x8", 8, TC_REG_GPR, 64, UC_ARM64_REG_X8},
    {"x9", 8, TC_REG_GPR, 72, UC_ARM64_REG_X9},
    {"x10", 8, TC_REG_GPR, 80, UC_ARM64_REG_X10},
    {"x11", 8, TC_REG_GPR, 88, UC_ARM64_REG_X11},
    {"x12", 8, TC_REG_GPR, 96, UC_ARM64_REG_X12},
    {"x13", 8, TC_REG_GPR, 104, UC_ARM64_REG_X13},
    {"x14", 8, TC_REG_GPR, 112, UC_ARM64_REG_X14},
    {"x15", 8, TC_REG_GPR, 120, UC_ARM64_REG_X15},
    {"x16", 8, TC_REG_GPR, 128, UC_ARM64_REG_X16},
    {"x17", 8, TC_REG_GPR, 136, UC_ARM64_REG_X17},
    {"x18", 8, TC_REG_GPR, 144, UC_ARM64_REG_X18},
    {"x19", 8, TC_REG_GPR, 152, UC_ARM64_REG_X19},
    {"x20", 8, TC_REG_GPR, 160, UC_ARM64_REG_X20},
    {"x21", 8, TC_REG_GPR, 168, UC_ARM64_REG_X21},
    {"x22", 8, TC_REG_GPR, 176, UC_ARM64_REG_X22},
    {"x23", 8, TC_REG_GPR, 184, UC_ARM64_REG_X23},
    {"x24", 8, TC_REG_GPR, 192, UC_ARM64_REG_X24},
    {"x25", 8, TC_REG_GPR, 200, UC_ARM64_REG_X25},
    {"x26", 8, TC_REG_GPR, 208, UC_ARM64_REG_X26},
    {"x27", 8, TC_REG_GPR, 216, UC_ARM64_REG_X27},
    {"x28", 8, TC_REG_GPR, 224, UC_ARM64_REG_X28},
    {"x29", 8, TC_REG_GPR, 232, UC_ARM64_REG_X29},
    {"x30", 8, TC_REG_GPR, 240, UC_ARM64_REG_X30},
    {"sp", 8, TC_REG_GPR | TC_REG_SP, 248, UC_ARM64_REG_SP},
    {"pc", 8, TC_REG_PC, 256, UC_ARM64_REG_PC},
    {"nzcv", 4, TC_REG_FLAGS, 264, UC_ARM64_REG_NZCV},
    {"fpcr", 4, TC_REG_VECTOR, 268, UC_ARM64_REG_FPCR},
    {"fpsr", 4, TC_REG_VECTOR, 272, UC_ARM64_REG_FPSR},
    {"tpidr_el0", 8, TC_REG_SYSTEM, 276, UC_ARM64_REG_TPIDR_EL0},
    {"v0", 16, TC_REG_VECTOR, 284, UC_ARM64_REG_Q0},
    {"v1", 16, TC_REG_VECTOR, 300, UC_ARM64_REG_Q1},
    {"v2", 16, TC_REG_VECTOR, 316, UC_ARM64_REG_Q2},
    {"v3", 16, TC_REG_VECTOR, 332, UC_ARM64_REG_Q3},
    {"v4", 16, TC_REG_VECTOR, 348, UC_ARM64_REG_Q4},
    {"v5", 16, TC_REG_VECTOR, 364, UC_ARM64_REG_Q5},
    {"v6", 16, TC_REG_VECTOR, 380, UC_ARM64_REG_Q6},
    {"v7", 16, TC_REG_VECTOR, 396, UC_ARM64_REG_Q7},
    {"v8", 16, TC_REG_VECTOR, 412, UC_ARM64_REG_Q8},
    {"v9", 16, TC_REG_VECTOR, 428, UC_ARM64_REG_Q9},
    {"v10", 16, TC_REG_VECTOR, 444, UC_ARM64_REG_Q10},
    {"v11", 16, TC_REG_VECTOR, 460, UC_ARM64_REG_Q11},
    {"v12", 16, TC_REG_VECTOR, 476, UC_ARM64_REG_Q12},
    {"v13", 16, TC_REG_VECTOR, 492, UC_ARM64_REG_Q13},
    {"v14", 16, TC_REG_VECTOR, 508, UC_ARM64_REG_Q14},
    {"v15", 16, TC_REG_VECTOR, 524, UC_ARM64_REG_Q15},
    {"v16", 16, TC_REG_VECTOR, 540, UC_ARM64_REG_Q16},
    {"v17", 16, TC_REG_VECTOR, 556, UC_ARM64_REG_Q17},
    {"v18", 16, TC_REG_VECTOR, 572, UC_ARM64_REG_Q18},
    {"v19", 16, TC_REG_VECTOR, 588, UC_ARM64_REG_Q19},
    {"v20", 16, TC_REG_VECTOR, 604, UC_ARM64_REG_Q20},
    {"v21", 16, TC_REG_VECTOR, 620, UC_ARM64_REG_Q21},
    {"v22", 16, TC_REG_VECTOR, 636, UC_ARM64_REG_Q22},
    {"v23", 16, TC_REG_VECTOR, 652, UC_ARM64_REG_Q23},
    {"v24", 16, TC_REG_VECTOR, 668, UC_ARM64_REG_Q24},
    {"v25", 16, TC_REG_VECTOR, 684, UC_ARM64_REG_Q25},
    {"v26", 16, TC_REG_VECTOR, 700, UC_ARM64_REG_Q26},
    {"v27", 16, TC_REG_VECTOR, 716, UC_ARM64_REG_Q27},
    {"v28", 16, TC_REG_VECTOR, 732, UC_ARM64_REG_Q28},
    {"v29", 16, TC_REG_VECTOR, 748, UC_ARM64_REG_Q29},
    {"v30", 16, TC_REG_VECTOR, 764, UC_ARM64_REG_Q30},
    {"v31", 16, TC_REG_VECTOR, 780, UC_ARM64_REG_Q31},
};
/* state image: 796 bytes, 69 registers */

static const tc_reg_info regs_mips[] = {
    {"zero", 4, TC_REG_GPR, 0, UC_MIPS_REG_0},
    {"at", 4, TC_REG_GPR, 4, UC_MIPS_REG_1},
    {"v0", 4, TC_REG_GPR, 8, UC_MIPS_REG_2},
    {"v1", 4, TC_REG_GPR, 12, UC_MIPS_REG_3},
    {"a0", 4, TC_REG_GPR, 16, UC_MIPS_REG_4},
    {"a1", 4, TC_REG_GPR, 20, UC_MIPS_REG_5},
    {"a2", 4, TC_REG_GPR, 24, UC_MIPS_REG_6},
    {"a3", 4, TC_REG_GPR, 28, UC_MIPS_REG_7},
    {"t0", 4, TC_REG_GPR, 32, UC_MIPS_REG_8},
    {"t1", 4, TC_REG_GPR, 36, UC_MIPS_REG_9},
    {"t2", 4, TC_REG_GPR, 40, UC_MIPS_REG_10},
    {"t3", 4, TC_REG_GPR, 44, UC_MIPS_REG_11},
    {"t4", 4, TC_REG_GPR, 48, UC_MIPS_REG_12},
    {"t5", 4, TC_REG_GPR, 52, UC_MIPS_REG_13},
    {"t6", 4, TC_REG_GPR, 56, UC_MIPS_REG_14},
    {"t7", 4, TC_REG_GPR, 60, UC_MIPS_REG_15},
    {"s0", 4, TC_REG_GPR, 64, UC_MIPS_REG_16},
    {"s1", 4, TC_REG_GPR, 68, UC_MIPS_REG_17},
    {"s2", 4, TC_REG_GPR, 72, UC_MIPS_REG_18},
    {"s3", 4, TC_REG_GPR, 76, UC_MIPS_REG_19},
    {"s4", 4, TC_REG_GPR, 80, UC_MIPS_REG_20},
    {"s5", 4, TC_REG_GPR, 84, UC_MIPS_REG_21},
    {"s6", 4, TC_REG_GPR, 88, UC_MIPS_REG_22},
    {"s7", 4, TC_REG_GPR, 92, UC_MIPS_REG_23},
    {"t8", 4, TC_REG_GPR, 96, UC_MIPS_REG_24},
    {"t9", 4, TC_REG_GPR, 100, UC_MIPS_REG_25},
    {"k0", 4, TC_REG_GPR, 104, UC_MIPS_REG_26},
    {"k1", 4, TC_REG_GPR, 108, UC_MIPS_REG_27},
    {"gp", 4, TC_REG_GPR, 112, UC_MIPS_REG_28},
    {"sp", 4, TC_REG_GPR | TC_REG_SP, 116, UC_MIPS_REG_29},
    {"fp", 4, TC_REG_GPR, 120, UC_MIPS_REG_30},
    {"ra", 4, TC_REG_GPR, 124, UC_MIPS_REG_31},
    {"pc", 4, TC_REG_PC, 128, UC_MIPS_REG_PC},
    {"hi", 4, TC_REG_GPR, 132, UC_MIPS_REG_HI},
    {"lo", 4, TC_REG_GPR, 136, UC_MIPS_REG_LO},
    {"userlocal", 4, TC_REG_SYSTEM, 140, UC_MIPS_REG_CP0_USERLOCAL},
};
/* state image: 144 bytes, 36 registers */

static const tc_reg_info regs_mips64[] = {
    {"zero", 8, TC_REG_GPR, 0, UC_MIPS_REG_0},
    {"at", 8, TC_REG_GPR, 8, UC_MIPS_REG_1},
    {"v0", 8, TC_REG_GPR, 16, UC_MIPS_REG_2},
    {"v1", 8, TC_REG_GPR, 24, UC_MIPS_REG_3},
    {"a0", 8, TC_REG_GPR, 32, UC_MIPS_REG_4},
    {"a1", 8, TC_REG_GPR, 40, UC_MIPS_REG_5},
    {"a2", 8, TC_REG_GPR, 48, UC_MIPS_REG_6},
    {"a3", 8, TC_REG_GPR, 56, UC_MIPS_REG_7},
    {"t0", 8, TC_REG_GPR, 64, UC_MIPS_REG_8},
    {"t1", 8, TC_REG_GPR, 72, UC_MIPS_REG_9},
    {"t2", 8, TC_REG_GPR, 80, UC_MIPS_REG_10},
    {"t3", 8, TC_REG_GPR, 88, UC_MIPS_REG_11},
    {"t4", 8, TC_REG_GPR, 96, UC_MIPS_REG_12},
    {"t5", 8, TC_REG_GPR, 104, UC_MIPS_REG_13},
    {"t6", 8, TC_REG_GPR, 112, UC_MIPS_REG_14},
    {"t7", 8, TC_REG_GPR, 120, UC_MIPS_REG_15},
    {"s0", 8, TC_REG_GPR, 128, UC_MIPS_REG_16},
    {"s1", 8, TC_REG_GPR, 136, UC_MIPS_REG_17},
    {"s2", 8, TC_REG_GPR, 144, UC_MIPS_REG_18},
    {"s3", 8, TC_REG_GPR, 152, UC_MIPS_REG_19},
    {"s4", 8, TC_REG_GPR, 160, UC_MIPS_REG_20},
    {"s5", 8, TC_REG_GPR, 168, UC_MIPS_REG_21},
    {"s6", 8, TC_REG_GPR, 176, UC_MIPS_REG_22},
    {"s7", 8, TC_REG_GPR, 184, UC_MIPS_REG_23},
    {"t8", 8, TC_REG_GPR, 192, UC_MIPS_REG_24},
    {"t9", 8, TC_REG_GPR, 200, UC_MIPS_REG_25},
    {"k0", 8, TC_REG_GPR, 208, UC_MIPS_REG_26},
    {"k1", 8, TC_REG_GPR, 216, UC_MIPS_REG_27},
    {"gp", 8, TC_REG_GPR, 224, UC_MIPS_REG_28},
    {"sp", 8, TC_REG_GPR | TC_REG_SP, 232, UC_MIPS_REG_29},
    {"fp", 8, TC_REG_GPR, 240, UC_MIPS_REG_30},
    {"ra", 8, TC_REG_GPR, 248, UC_MIPS_REG_31},
    {"pc", 8, TC_REG_PC, 256, UC_MIPS_REG_PC},
    {"hi", 8, TC_REG_GPR, 264, UC_MIPS_REG_HI},
    {"lo", 8, TC_REG_GPR, 272, UC_MIPS_REG_LO},
    {"userlocal", 8, TC_REG_SYSTEM, 280, UC_MIPS_REG_CP0_USERLOCAL},
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
    .uc_arch = UC_ARCH_X86,
    .uc_mode = UC_MODE_64,
    .cs_arch = CS_ARCH_X86,
    .cs_mode = CS_MODE_64,
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
    /* int 0x80 in a 64-bit process would need the i386 ABI (numbers and
     * struct layouts); until then it faults instead of misbehaving. */
    .sys = {.traps = {{TC_TRAP_INSN_SYSCALL, 0, 2}},
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
    .uc_arch = UC_ARCH_X86,
    .uc_mode = UC_MODE_32,
    .cs_arch = CS_ARCH_X86,
    .cs_mode = CS_MODE_32,
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
    .sys = {.traps = {{TC_TRAP_INTR, 0x80, 0}, {TC_TRAP_INSN_SYSENTER, 0, 2}},
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
    .uc_arch = UC_ARCH_ARM,
    .uc_mode = UC_MODE_ARM,
    .cs_arch = CS_ARCH_ARM,
    .cs_mode = CS_MODE_ARM,
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
    .sys = {.traps = {{TC_TRAP_INTR, 2, 0}},
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
    .uc_arch = UC_ARCH_ARM64,
    .uc_mode = UC_MODE_ARM,
    .cs_arch = CS_ARCH_ARM64,
    .cs_mode = CS_MODE_ARM,
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
    .sys = {.traps = {{TC_TRAP_INTR, 2, 0}},
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
    .traps = {{TC_TRAP_INTR, 17, 0}}, .nr_reg = MIPS_V0,                       \
    .arg_regs = {MIPS_A0,     MIPS_A0 + 1, MIPS_A0 + 2,                        \
                 MIPS_A0 + 3, MIPS_A0,     MIPS_A0},                           \
    .ret_reg = MIPS_V0, .err_reg = MIPS_A3, .names = names_, .nnames = count_, \
    .first_stack_arg = 4, .stack_arg_offset = 16                               \
  }

static const tc_arch arch_mips = {
    .id = TC_ARCH_MIPS,
    .name = "mips",
    .uc_arch = UC_ARCH_MIPS,
    .uc_mode = UC_MODE_MIPS32,
    .cs_arch = CS_ARCH_MIPS,
    .cs_mode = CS_MODE_MIPS32,
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
    .uc_arch = UC_ARCH_MIPS,
    .uc_mode = UC_MODE_MIPS32,
    .cs_arch = CS_ARCH_MIPS,
    .cs_mode = CS_MODE_MIPS32,
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
    .uc_arch = UC_ARCH_MIPS,
    .uc_mode = UC_MODE_MIPS64,
    .cs_arch = CS_ARCH_MIPS,
    .cs_mode = CS_MODE_MIPS64,
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
    .sys = {.traps = {{TC_TRAP_INTR, 17, 0}},
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

static const tc_arch *const arches[] = {&arch_x86_64,  &arch_x86,  &arch_arm,
                                        &arch_arm64,   &arch_mips, &arch_mipsel,
                                        &arch_mips64el};

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
    {"x86_64", TC_ARCH_X86_64}, {"x86-64", TC_ARCH_X86_64},
    {"amd64", TC_ARCH_X86_64},  {"x64", TC_ARCH_X86_64},
    {"x86", TC_ARCH_X86},       {"i386", TC_ARCH_X86},
    {"i686", TC_ARCH_X86},      {"x32", TC_ARCH_X86},
    {"arm", TC_ARCH_ARM},       {"armhf", TC_ARCH_ARM},
    {"armel", TC_ARCH_ARM},     {"armv7", TC_ARCH_ARM},
    {"arm64", TC_ARCH_ARM64},   {"aarch64", TC_ARCH_ARM64},
    {"mips", TC_ARCH_MIPS},     {"mipsbe", TC_ARCH_MIPS},
    {"mipsel", TC_ARCH_MIPSEL}, {"mips64el", TC_ARCH_MIPS64EL},
};

const tc_arch *tc_arch_by_name(const char *name) {
  if (!name)
    return NULL;
  for (size_t i = 0; i < sizeof arch_aliases / sizeof arch_aliases[0]; i++)
    if (strcasecmp(arch_aliases[i].alias, name) == 0)
      return tc_arch_by_id(arch_aliases[i].id);
  return NULL;
}

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
  else if (arch->cs_arch == CS_ARCH_X86)
    r = from_capstone_x86(arch, name);
  else if (arch->id == TC_ARCH_ARM || arch->id == TC_ARCH_ARM64)
    r = from_capstone_arm(arch, name, &other);
  else
    r = tc_arch_reg_index(arch, name);
  if (second)
    *second = other;
  return r;
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
