/* SPDX-License-Identifier: GPL-2.0-or-later */
/* GDB register layouts for tfile (specs tfile.md §5). Rows are listed in
 * tdesc (feature) order; the g-packet offsets come from sorting by regnum
 * and packing, exactly as GDB does, so a row is pure data. */
#include "writers/tfile/tfile_tdesc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CORE86 "org.gnu.gdb.i386.core"
#define SSE86 "org.gnu.gdb.i386.sse"
#define LINUX86 "org.gnu.gdb.i386.linux"
#define SEG86 "org.gnu.gdb.i386.segments"

/* A register copied from the tracecorn register of the same name. */
#define R(n, bits, ty, feat)                                                   \
  { n, bits, ty, feat, n, TF_FROM_REG, -1 }
/* A register copied from a differently named tracecorn register. */
#define RS(n, bits, ty, feat, s)                                               \
  { n, bits, ty, feat, s, TF_FROM_REG, -1 }

#define X87_REGS(feat)                                                         \
  R("st0", 80, "i387_ext", feat), R("st1", 80, "i387_ext", feat),              \
      R("st2", 80, "i387_ext", feat), R("st3", 80, "i387_ext", feat),          \
      R("st4", 80, "i387_ext", feat), R("st5", 80, "i387_ext", feat),          \
      R("st6", 80, "i387_ext", feat), R("st7", 80, "i387_ext", feat),          \
      RS("fctrl", 32, "int", feat, "fpcw"),                                    \
      RS("fstat", 32, "int", feat, "fpsw"),                                    \
      RS("ftag", 32, "int", feat, "fptag"),                                    \
      RS("fiseg", 32, "int", feat, "fcs"),                                     \
      RS("fioff", 32, "int", feat, "fip"),                                     \
      RS("foseg", 32, "int", feat, "fds"),                                     \
      RS("fooff", 32, "int", feat, "fdp"), R("fop", 32, "int", feat)

#define SEGSEL_REGS(feat)                                                      \
  R("cs", 32, "int32", feat), R("ss", 32, "int32", feat),                      \
      R("ds", 32, "int32", feat), R("es", 32, "int32", feat),                  \
      R("fs", 32, "int32", feat), R("gs", 32, "int32", feat)

#define XMM(i) R("xmm" #i, 128, "uint128", SSE86)

static const tf_reg regs_amd64[] = {
    R("rax", 64, "int64", CORE86),
    R("rbx", 64, "int64", CORE86),
    R("rcx", 64, "int64", CORE86),
    R("rdx", 64, "int64", CORE86),
    R("rsi", 64, "int64", CORE86),
    R("rdi", 64, "int64", CORE86),
    R("rbp", 64, "data_ptr", CORE86),
    R("rsp", 64, "data_ptr", CORE86),
    R("r8", 64, "int64", CORE86),
    R("r9", 64, "int64", CORE86),
    R("r10", 64, "int64", CORE86),
    R("r11", 64, "int64", CORE86),
    R("r12", 64, "int64", CORE86),
    R("r13", 64, "int64", CORE86),
    R("r14", 64, "int64", CORE86),
    R("r15", 64, "int64", CORE86),
    R("rip", 64, "code_ptr", CORE86),
    /* GDB's eflags is the low half of rflags (the high half is reserved). */
    RS("eflags", 32, "int32", CORE86, "rflags"),
    SEGSEL_REGS(CORE86),
    X87_REGS(CORE86),
    XMM(0),
    XMM(1),
    XMM(2),
    XMM(3),
    XMM(4),
    XMM(5),
    XMM(6),
    XMM(7),
    XMM(8),
    XMM(9),
    XMM(10),
    XMM(11),
    XMM(12),
    XMM(13),
    XMM(14),
    XMM(15),
    R("mxcsr", 32, "int", SSE86),
    /* -1 = "not in a syscall": a frame's state is before its instruction. */
    {"orig_rax", 64, "int", LINUX86, NULL, TF_ONES, -1},
    R("fs_base", 64, "int", SEG86),
    R("gs_base", 64, "int", SEG86),
};

static const tf_reg regs_i386[] = {
    R("eax", 32, "int32", CORE86),
    R("ecx", 32, "int32", CORE86),
    R("edx", 32, "int32", CORE86),
    R("ebx", 32, "int32", CORE86),
    R("esp", 32, "data_ptr", CORE86),
    R("ebp", 32, "data_ptr", CORE86),
    R("esi", 32, "int32", CORE86),
    R("edi", 32, "int32", CORE86),
    R("eip", 32, "code_ptr", CORE86),
    R("eflags", 32, "int32", CORE86),
    SEGSEL_REGS(CORE86),
    X87_REGS(CORE86),
    XMM(0),
    XMM(1),
    XMM(2),
    XMM(3),
    XMM(4),
    XMM(5),
    XMM(6),
    XMM(7),
    R("mxcsr", 32, "int", SSE86),
    {"orig_eax", 32, "int", LINUX86, NULL, TF_ONES, -1},
};

/* aarch64: gdbserver's aarch64-core + aarch64-fpu + aarch64-tls (GDB 12+;
 * GDB's vector union types simplified to uint128). GDB's cpsr is
 * tracecorn's nzcv: Unicorn reports the flags at their PSTATE bit
 * positions (31..28). */
#define A64CORE "org.gnu.gdb.aarch64.core"
#define A64FPU "org.gnu.gdb.aarch64.fpu"
#define A64TLS "org.gnu.gdb.aarch64.tls"
#define X(i) R("x" #i, 64, "int64", A64CORE)
#define V(i) R("v" #i, 128, "uint128", A64FPU)

static const tf_reg regs_aarch64[] = {
    X(0),
    X(1),
    X(2),
    X(3),
    X(4),
    X(5),
    X(6),
    X(7),
    X(8),
    X(9),
    X(10),
    X(11),
    X(12),
    X(13),
    X(14),
    X(15),
    X(16),
    X(17),
    X(18),
    X(19),
    X(20),
    X(21),
    X(22),
    X(23),
    X(24),
    X(25),
    X(26),
    X(27),
    X(28),
    X(29),
    X(30),
    R("sp", 64, "data_ptr", A64CORE),
    R("pc", 64, "code_ptr", A64CORE),
    RS("cpsr", 32, "int32", A64CORE, "nzcv"),
    V(0),
    V(1),
    V(2),
    V(3),
    V(4),
    V(5),
    V(6),
    V(7),
    V(8),
    V(9),
    V(10),
    V(11),
    V(12),
    V(13),
    V(14),
    V(15),
    V(16),
    V(17),
    V(18),
    V(19),
    V(20),
    V(21),
    V(22),
    V(23),
    V(24),
    V(25),
    V(26),
    V(27),
    V(28),
    V(29),
    V(30),
    V(31),
    R("fpsr", 32, "int32", A64FPU),
    R("fpcr", 32, "int32", A64FPU),
    RS("tpidr", 64, "data_ptr", A64TLS, "tpidr_el0"),
};

/* arm: GDB's arm-core + arm-vfpv3 + arm-tls (GDB 13; gdbserver's
 * arm-with-vfpv3 g packet plus tpidruro). cpsr is regnum 25 (the FPA
 * registers of old g packets were numbered in between); the others follow
 * it, and packing by regnum leaves no gap: cpsr at 64, d0 at 68, fpscr at
 * 324, tpidruro at 328. */
#define ARMCORE "org.gnu.gdb.arm.core"
#define ARMVFP "org.gnu.gdb.arm.vfp"
#define ARMTLS "org.gnu.gdb.arm.tls"
#define AR(i) R("r" #i, 32, "uint32", ARMCORE)
#define AD(i) R("d" #i, 64, "ieee_double", ARMVFP)
static const tf_reg regs_arm[] = {
    AR(0),
    AR(1),
    AR(2),
    AR(3),
    AR(4),
    AR(5),
    AR(6),
    AR(7),
    AR(8),
    AR(9),
    AR(10),
    AR(11),
    AR(12),
    R("sp", 32, "data_ptr", ARMCORE),
    R("lr", 32, "uint32", ARMCORE),
    R("pc", 32, "code_ptr", ARMCORE),
    {"cpsr", 32, "uint32", ARMCORE, "cpsr", TF_FROM_REG, 25},
    AD(0),
    AD(1),
    AD(2),
    AD(3),
    AD(4),
    AD(5),
    AD(6),
    AD(7),
    AD(8),
    AD(9),
    AD(10),
    AD(11),
    AD(12),
    AD(13),
    AD(14),
    AD(15),
    AD(16),
    AD(17),
    AD(18),
    AD(19),
    AD(20),
    AD(21),
    AD(22),
    AD(23),
    AD(24),
    AD(25),
    AD(26),
    AD(27),
    AD(28),
    AD(29),
    AD(30),
    AD(31),
    R("fpscr", 32, "int", ARMVFP),
    R("tpidruro", 32, "data_ptr", ARMTLS),
};

/* mips o32: GDB's mips-cpu/cp0/fpu/linux, numbered as GDB's mips
 * registers (zero..ra, sr, lo, hi, bad, cause, pc, f0..). The tdesc names
 * r0..r31 are tracecorn's zero..ra. tracecorn's mips state has no status,
 * badvaddr, cause (written as zero: they precede pc in the block). Its FPU
 * registers are in a trace only where the engine reads them (the "+fpu"
 * table, regs_mips_fpu below); without them the block ends after pc, so
 * GDB shows f0..f31, fcsr, fir and restart as <unavailable>. The fpu
 * feature stays in the tdesc because GDB rejects a mips tdesc without
 * it. */
#define MCPU "org.gnu.gdb.mips.cpu"
#define MCP0 "org.gnu.gdb.mips.cp0"
#define MFPU "org.gnu.gdb.mips.fpu"
#define MLINUX "org.gnu.gdb.mips.linux"
#define MR(i, abi) RS("r" #i, 32, "int32", MCPU, abi)
#define MRN(n, ty, feat, num)                                                  \
  { n, 32, ty, feat, n, TF_FROM_REG, num }
#define MZ(n, ty, feat, num)                                                   \
  { n, 32, ty, feat, NULL, TF_ZERO, num }
#define MF(i) MZ("f" #i, "ieee_single", MFPU, 38 + i)
#define MIPS_CPU_REGS                                                          \
  MR(0, "zero"), MR(1, "at"), MR(2, "v0"), MR(3, "v1"), MR(4, "a0"),           \
      MR(5, "a1"), MR(6, "a2"), MR(7, "a3"), MR(8, "t0"), MR(9, "t1"),         \
      MR(10, "t2"), MR(11, "t3"), MR(12, "t4"), MR(13, "t5"), MR(14, "t6"),    \
      MR(15, "t7"), MR(16, "s0"), MR(17, "s1"), MR(18, "s2"), MR(19, "s3"),    \
      MR(20, "s4"), MR(21, "s5"), MR(22, "s6"), MR(23, "s7"), MR(24, "t8"),    \
      MR(25, "t9"), MR(26, "k0"), MR(27, "k1"), MR(28, "gp"), MR(29, "sp"),    \
      MR(30, "fp"), MR(31, "ra"), MRN("lo", "int32", MCPU, 33),                \
      MRN("hi", "int32", MCPU, 34), MRN("pc", "code_ptr", MCPU, 37),           \
      MZ("status", "int32", MCP0, 32), MZ("badvaddr", "int32", MCP0, 35),      \
      MZ("cause", "int32", MCP0, 36)
static const tf_reg regs_mips[] = {
    MIPS_CPU_REGS,
    MF(0),
    MF(1),
    MF(2),
    MF(3),
    MF(4),
    MF(5),
    MF(6),
    MF(7),
    MF(8),
    MF(9),
    MF(10),
    MF(11),
    MF(12),
    MF(13),
    MF(14),
    MF(15),
    MF(16),
    MF(17),
    MF(18),
    MF(19),
    MF(20),
    MF(21),
    MF(22),
    MF(23),
    MF(24),
    MF(25),
    MF(26),
    MF(27),
    MF(28),
    MF(29),
    MF(30),
    MF(31),
    MZ("fcsr", "int32", MFPU, 70),
    MZ("fir", "int32", MFPU, 71),
    MZ("restart", "int32", MLINUX, 72),
};
/* The same with the FPU registers from the trace (mips+fpu: engines that
 * read them): the block ends after fir. */
#define MFR(i) MRN("f" #i, "ieee_single", MFPU, 38 + i)
static const tf_reg regs_mips_fpu[] = {
    MIPS_CPU_REGS,
    MFR(0),
    MFR(1),
    MFR(2),
    MFR(3),
    MFR(4),
    MFR(5),
    MFR(6),
    MFR(7),
    MFR(8),
    MFR(9),
    MFR(10),
    MFR(11),
    MFR(12),
    MFR(13),
    MFR(14),
    MFR(15),
    MFR(16),
    MFR(17),
    MFR(18),
    MFR(19),
    MFR(20),
    MFR(21),
    MFR(22),
    MFR(23),
    MFR(24),
    MFR(25),
    MFR(26),
    MFR(27),
    MFR(28),
    MFR(29),
    MFR(30),
    MFR(31),
    MRN("fcsr", "int32", MFPU, 70),
    MRN("fir", "int32", MFPU, 71),
    MZ("restart", "int32", MLINUX, 72),
};

#define ROW(id, gdb, size, regs)                                               \
  { id, gdb, size, regs, sizeof regs / sizeof regs[0] }
static const tf_layout layouts[] = {
    ROW(TC_ARCH_X86_64, "i386:x86-64", 560, regs_amd64),
    ROW(TC_ARCH_X86, "i386", 312, regs_i386),
    ROW(TC_ARCH_ARM64, "aarch64", 796, regs_aarch64),
    ROW(TC_ARCH_ARM, "arm", 332, regs_arm),
    /* The block ends after pc (152 of the tdesc's 292 bytes). Same layout
     * for both byte orders, which a tfile does not record: the big-endian
     * row comes first (GDB's and tracecorn's "mips"). */
    ROW(TC_ARCH_MIPS, "mips", 152, regs_mips),
    ROW(TC_ARCH_MIPSEL, "mips", 152, regs_mips),
};

/* mips+fpu: the same tdesc, a block that goes on to fir (72 registers of
 * 4 bytes). Not in layouts[]: a reader finds them by the block size of a
 * mips file (tf_layout_with_fpu). */
static const tf_layout fpu_layouts[] = {
    ROW(TC_ARCH_MIPS, "mips", 288, regs_mips_fpu),
    ROW(TC_ARCH_MIPSEL, "mips", 288, regs_mips_fpu),
};

const tf_layout *tf_layout_with_fpu(const tf_layout *row) {
  for (size_t i = 0; i < sizeof fpu_layouts / sizeof fpu_layouts[0]; i++)
    if (fpu_layouts[i].arch == row->arch)
      return &fpu_layouts[i];
  return NULL;
}

const tf_layout *tf_layout_for_table(const tc_arch *arch) {
  const tf_layout *row = tf_layout_for_arch(arch->id);
  if (row && arch->base)
    return arch->base == tc_arch_by_id(arch->id) &&
                   arch == tc_arch_with_fpu(arch->base)
               ? tf_layout_with_fpu(row)
               : NULL;
  return row;
}

const tf_layout *tf_layout_for_arch(tc_arch_id id) {
  for (size_t i = 0; i < sizeof layouts / sizeof layouts[0]; i++)
    if (layouts[i].arch == id)
      return &layouts[i];
  return NULL;
}

const tf_layout *tf_layout_for_gdb_arch(const char *gdb_arch, int big_endian) {
  const tf_layout *first = NULL;
  for (size_t i = 0; i < sizeof layouts / sizeof layouts[0]; i++) {
    if (strcmp(layouts[i].gdb_arch, gdb_arch) != 0)
      continue;
    const tc_arch *a = tc_arch_by_id(layouts[i].arch);
    if (big_endian < 0 || (a && a->big_endian == big_endian))
      return &layouts[i];
    if (!first)
      first = &layouts[i];
  }
  return first;
}

int tf_layout_byte_order_ambiguous(const tf_layout *l) {
  for (size_t i = 0; i < sizeof layouts / sizeof layouts[0]; i++)
    if (&layouts[i] != l && strcmp(layouts[i].gdb_arch, l->gdb_arch) == 0)
      return 1;
  return 0;
}

const tf_layout *tf_layout_for_rsize(uint32_t rsize) {
  for (size_t i = 0; i < sizeof layouts / sizeof layouts[0]; i++)
    if (layouts[i].rsize == rsize)
      return &layouts[i];
  return NULL;
}

const tf_reg *tf_layout_reg(const tf_layout *l, const char *name) {
  for (size_t i = 0; i < l->nregs; i++)
    if (strcmp(l->regs[i].name, name) == 0)
      return &l->regs[i];
  return NULL;
}

char *tf_tdesc_xml(const tf_layout *row) {
  size_t cap = 8192, len = 0;
  char *buf = malloc(cap);
  if (!buf)
    return NULL;
#define ADD(...)                                                               \
  do {                                                                         \
    char l_[512];                                                              \
    int n_ = snprintf(l_, sizeof l_, __VA_ARGS__);                             \
    if (n_ < 0 || n_ >= (int)sizeof l_ - 1) {                                  \
      free(buf);                                                               \
      return NULL;                                                             \
    }                                                                          \
    if (len + (size_t)n_ + 2 > cap) {                                          \
      char *g_ = realloc(buf, cap * 2 + (size_t)n_);                           \
      if (!g_) {                                                               \
        free(buf);                                                             \
        return NULL;                                                           \
      }                                                                        \
      buf = g_;                                                                \
      cap = cap * 2 + (size_t)n_;                                              \
    }                                                                          \
    memcpy(buf + len, l_, (size_t)n_);                                         \
    len += (size_t)n_;                                                         \
    buf[len++] = '\n';                                                         \
  } while (0)
  ADD("<?xml version=\"1.0\"?>");
  ADD("<!DOCTYPE target SYSTEM \"gdb-target.dtd\">");
  ADD("<target>");
  ADD("<architecture>%s</architecture>", row->gdb_arch);
  ADD("<osabi>GNU/Linux</osabi>");
  const char *feature = NULL;
  for (size_t i = 0; i < row->nregs; i++) {
    const tf_reg *r = &row->regs[i];
    if (!feature || strcmp(feature, r->feature) != 0) {
      if (feature)
        ADD("</feature>");
      feature = r->feature;
      ADD("<feature name=\"%s\">", feature);
    }
    char regnum[32] = "";
    if (r->regnum >= 0)
      snprintf(regnum, sizeof regnum, " regnum=\"%d\"", r->regnum);
    ADD("<reg name=\"%s\" bitsize=\"%u\" type=\"%s\"%s/>", r->name, r->bitsize,
        r->type, regnum);
  }
  if (feature)
    ADD("</feature>");
  ADD("</target>");
#undef ADD
  buf[len] = 0;
  return buf;
}

size_t tf_layout_pack(const tf_layout *l, tf_packed *out) {
  long next = 0;
  for (size_t i = 0; i < l->nregs; i++) {
    out[i].reg = &l->regs[i];
    out[i].regnum = l->regs[i].regnum >= 0 ? l->regs[i].regnum : next;
    next = out[i].regnum + 1;
  }
  /* stable insertion sort by regnum (rows are short) */
  for (size_t i = 1; i < l->nregs; i++) {
    tf_packed t = out[i];
    size_t j = i;
    while (j > 0 && out[j - 1].regnum > t.regnum) {
      out[j] = out[j - 1];
      j--;
    }
    out[j] = t;
  }
  uint32_t off = 0;
  for (size_t i = 0; i < l->nregs; i++) {
    out[i].offset = off;
    out[i].size = out[i].reg->bitsize / 8u;
    off += out[i].size;
  }
  return l->nregs;
}
