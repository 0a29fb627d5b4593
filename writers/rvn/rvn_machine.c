/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The amd64 ("x641") machine tracecorn declares in REVEN traces, and its
 * mapping to tracecorn's x86 / x86_64 state images. See writers/rvn/rvn.h and
 * rvnbintrace.md section 4: REVEN's names and sizes as its producers
 * (PANDA's reven_tracer_bin) declare them, their id layout (general
 * registers, eflags and rip at 0-17, the 41 register operations at 18-58),
 * then the rest: registers that change often on 1-byte ids, the others
 * from 0x100 (the 2-byte id form). */
#include <string.h>

#include "common/byteorder.h"
#include "writers/rvn/rvn.h"

#define R8(n, id)                                                              \
  { n, id, 8 }

const rvn_reg_def rvn_regs[RVN_NREGS] = {
    /* 0-17: PANDA's priority registers, same order and ids */
    R8("rax", 0),
    R8("rbx", 1),
    R8("rcx", 2),
    R8("rdx", 3),
    R8("rsi", 4),
    R8("rdi", 5),
    R8("rbp", 6),
    R8("r8", 7),
    R8("r9", 8),
    R8("r10", 9),
    R8("r11", 10),
    R8("r12", 11),
    R8("r13", 12),
    R8("r14", 13),
    R8("r15", 14),
    R8("rsp", 15),
    {"eflags", 16, 4},
    R8("rip", 17),
    /* 18-58 are the register operations; 59-92 the x87 and SSE state */
    {"top", 59, 1},
    {"x87r0", 60, 10},
    {"x87r1", 61, 10},
    {"x87r2", 62, 10},
    {"x87r3", 63, 10},
    {"x87r4", 64, 10},
    {"x87r5", 65, 10},
    {"x87r6", 66, 10},
    {"x87r7", 67, 10},
    R8("x87lastip", 68),
    R8("x87lastdp", 69),
    {"x87opcode", 70, 2},
    {"x87status", 71, 2},
    {"x87control", 72, 2},
    {"x87tags", 73, 2},
    {"x87lastcs", 74, 2},
    {"x87lastds", 75, 2},
    {"zmm0", 76, 64},
    {"zmm1", 77, 64},
    {"zmm2", 78, 64},
    {"zmm3", 79, 64},
    {"zmm4", 80, 64},
    {"zmm5", 81, 64},
    {"zmm6", 82, 64},
    {"zmm7", 83, 64},
    {"zmm8", 84, 64},
    {"zmm9", 85, 64},
    {"zmm10", 86, 64},
    {"zmm11", 87, 64},
    {"zmm12", 88, 64},
    {"zmm13", 89, 64},
    {"zmm14", 90, 64},
    {"zmm15", 91, 64},
    {"mxcsr", 92, 4},
    /* from 0x100: registers a user-mode process rarely or never changes */
    {"cs", 0x100, 2},
    {"ds", 0x101, 2},
    {"es", 0x102, 2},
    {"ss", 0x103, 2},
    {"fs", 0x104, 2},
    {"gs", 0x105, 2},
    R8("cs_shadow", 0x106),
    R8("ds_shadow", 0x107),
    R8("es_shadow", 0x108),
    R8("ss_shadow", 0x109),
    R8("fs_shadow", 0x10a),
    R8("gs_shadow", 0x10b),
    {"pkru", 0x10c, 4},
    R8("gdtr_base", 0x10d),
    R8("ldtr_base", 0x10e),
    R8("idtr_base", 0x10f),
    R8("tr_base", 0x110),
    {"gdtr_limit", 0x111, 2},
    {"ldtr_limit", 0x112, 3},
    {"idtr_limit", 0x113, 2},
    {"tr_limit", 0x114, 3},
    R8("cr0", 0x115),
    R8("cr2", 0x116),
    R8("cr3", 0x117),
    R8("cr4", 0x118),
    R8("cr8", 0x119),
    R8("dr0", 0x11a),
    R8("dr1", 0x11b),
    R8("dr2", 0x11c),
    R8("dr3", 0x11d),
    R8("dr6", 0x11e),
    R8("dr7", 0x11f),
    {"zmm16", 0x120, 64},
    {"zmm17", 0x121, 64},
    {"zmm18", 0x122, 64},
    {"zmm19", 0x123, 64},
    {"zmm20", 0x124, 64},
    {"zmm21", 0x125, 64},
    {"zmm22", 0x126, 64},
    {"zmm23", 0x127, 64},
    {"zmm24", 0x128, 64},
    {"zmm25", 0x129, 64},
    {"zmm26", 0x12a, 64},
    {"zmm27", 0x12b, 64},
    {"zmm28", 0x12c, 64},
    {"zmm29", 0x12d, 64},
    {"zmm30", 0x12e, 64},
    {"zmm31", 0x12f, 64},
    R8("msr_00000174", 0x130), /* SYSENTER_CS */
    R8("msr_00000175", 0x131), /* SYSENTER_ESP */
    R8("msr_00000176", 0x132), /* SYSENTER_EIP */
    R8("msr_0000001b", 0x133), /* APIC_BASE */
    R8("msr_c0000080", 0x134), /* EFER */
    R8("msr_c0000081", 0x135), /* STAR */
    R8("msr_00000277", 0x136), /* PAT */
    R8("msr_c0000082", 0x137), /* LSTAR */
    R8("msr_c0000083", 0x138), /* CSTAR */
    R8("msr_c0000084", 0x139), /* FMASK */
    R8("msr_c0000100", 0x13a), /* FS_BASE */
    R8("msr_c0000101", 0x13b), /* GS_BASE */
    R8("msr_c0000102", 0x13c), /* KERNEL_GS_BASE */
    R8("msr_c0000103", 0x13d), /* TSC_AUX */
};

const uint8_t rvn_flag_bits[9] = {0, 2, 4, 6, 7, 8, 9, 10, 11};

#define OP(id, reg, oper, v)                                                   \
  { id, reg, oper, (uint64_t)(v) }

/* PANDA's order: rip ADD 1..15, eflags OR bit, eflags AND ~bit, rsp ADD
 * 2 4 8 16, rsp ADD -2 -4 -8 -16. */
const rvn_op_def rvn_ops[RVN_NOPS] = {
    OP(18, RV_RIP, RVN_OP_ADD, 1),
    OP(19, RV_RIP, RVN_OP_ADD, 2),
    OP(20, RV_RIP, RVN_OP_ADD, 3),
    OP(21, RV_RIP, RVN_OP_ADD, 4),
    OP(22, RV_RIP, RVN_OP_ADD, 5),
    OP(23, RV_RIP, RVN_OP_ADD, 6),
    OP(24, RV_RIP, RVN_OP_ADD, 7),
    OP(25, RV_RIP, RVN_OP_ADD, 8),
    OP(26, RV_RIP, RVN_OP_ADD, 9),
    OP(27, RV_RIP, RVN_OP_ADD, 10),
    OP(28, RV_RIP, RVN_OP_ADD, 11),
    OP(29, RV_RIP, RVN_OP_ADD, 12),
    OP(30, RV_RIP, RVN_OP_ADD, 13),
    OP(31, RV_RIP, RVN_OP_ADD, 14),
    OP(32, RV_RIP, RVN_OP_ADD, 15),
    OP(33, RV_EFLAGS, RVN_OP_OR, 1u << 0),
    OP(34, RV_EFLAGS, RVN_OP_OR, 1u << 2),
    OP(35, RV_EFLAGS, RVN_OP_OR, 1u << 4),
    OP(36, RV_EFLAGS, RVN_OP_OR, 1u << 6),
    OP(37, RV_EFLAGS, RVN_OP_OR, 1u << 7),
    OP(38, RV_EFLAGS, RVN_OP_OR, 1u << 8),
    OP(39, RV_EFLAGS, RVN_OP_OR, 1u << 9),
    OP(40, RV_EFLAGS, RVN_OP_OR, 1u << 10),
    OP(41, RV_EFLAGS, RVN_OP_OR, 1u << 11),
    OP(42, RV_EFLAGS, RVN_OP_AND, ~(1u << 0)),
    OP(43, RV_EFLAGS, RVN_OP_AND, ~(1u << 2)),
    OP(44, RV_EFLAGS, RVN_OP_AND, ~(1u << 4)),
    OP(45, RV_EFLAGS, RVN_OP_AND, ~(1u << 6)),
    OP(46, RV_EFLAGS, RVN_OP_AND, ~(1u << 7)),
    OP(47, RV_EFLAGS, RVN_OP_AND, ~(1u << 8)),
    OP(48, RV_EFLAGS, RVN_OP_AND, ~(1u << 9)),
    OP(49, RV_EFLAGS, RVN_OP_AND, ~(1u << 10)),
    OP(50, RV_EFLAGS, RVN_OP_AND, ~(1u << 11)),
    OP(51, RV_RSP, RVN_OP_ADD, 2),
    OP(52, RV_RSP, RVN_OP_ADD, 4),
    OP(53, RV_RSP, RVN_OP_ADD, 8),
    OP(54, RV_RSP, RVN_OP_ADD, 16),
    OP(55, RV_RSP, RVN_OP_ADD, -2),
    OP(56, RV_RSP, RVN_OP_ADD, -4),
    OP(57, RV_RSP, RVN_OP_ADD, -8),
    OP(58, RV_RSP, RVN_OP_ADD, -16),
};

/* What a page walker needs (rvnbintrace.md section 7): PAT, PSE36 and
 * 1 GiB pages supported, 48-bit physical and linear addresses. */
const rvn_static_def rvn_statics[RVN_NSTATIC] = {
    {"cpuid_pat", 1},           {"cpuid_pse36", 1},
    {"cpuid_1gb_pages", 1},     {"cpuid_max_phy_addr", 48},
    {"cpuid_max_lin_addr", 48},
};

uint8_t rvn_op_rsp(int64_t delta) {
  switch (delta) {
  case 2:
    return 51;
  case 4:
    return 52;
  case 8:
    return 53;
  case 16:
    return 54;
  case -2:
    return 55;
  case -4:
    return 56;
  case -8:
    return 57;
  case -16:
    return 58;
  default:
    return 0;
  }
}

int rvn_reg_by_name(const char *name, size_t len) {
  for (int i = 0; i < RVN_NREGS; i++)
    if (strlen(rvn_regs[i].name) == len &&
        memcmp(rvn_regs[i].name, name, len) == 0)
      return i;
  return -1;
}

static int has_prefix(const char *s, size_t len, const char *p) {
  size_t n = strlen(p);
  return len > n && memcmp(s, p, n) == 0;
}

int rvn_expected_size(const char *name, size_t len) {
  if (len == 6 && memcmp(name, "rflags", 6) == 0)
    return -1;
  int r = rvn_reg_by_name(name, len);
  if (r >= 0)
    return rvn_regs[r].size;
  if (has_prefix(name, len, "msr_") || has_prefix(name, len, "cr") ||
      has_prefix(name, len, "dr"))
    return 8;
  if (has_prefix(name, len, "zmm"))
    return 64;
  if (has_prefix(name, len, "x87r"))
    return 10;
  return 0;
}

uint64_t rvn_data_descriptor(uint64_t base) {
  return 0x00cff3000000ffffull | (base & 0xffffffull) << 16 |
         ((base >> 24) & 0xffull) << 56;
}

/* Control state of the user-mode process (rvnbintrace.md section 7). */
enum {
  CR0_USER = 0x80050033, /* PE MP ET NE WP AM PG */
  CR4_USER = 0x620,      /* PAE OSFXSR OSXMMEXCPT */
  EFER_USER = 0xd01      /* SCE LME LMA NXE */
};

static void add_dep(rvn_map *m, int t, int r) {
  if (t >= 0 && m->ndeps[t] < 10)
    m->deps[t][m->ndeps[t]++] = (uint8_t)r;
}

static void direct(rvn_map *m, int r, const char *tcname) {
  int t = tc_arch_reg_index(m->arch, tcname);
  if (t < 0)
    return; /* stays a constant 0 */
  m->kind[r] = RVN_SRC_DIRECT;
  m->src[r] = (int16_t)t;
  m->inv[t] = (int8_t)r;
  add_dep(m, t, r);
}

int rvn_map_init(rvn_map *m, const tc_arch *arch) {
  memset(m, 0, sizeof *m);
  if (!arch || (arch->id != TC_ARCH_X86_64 && arch->id != TC_ARCH_X86) ||
      arch->nregs > 64)
    return -1;
  m->arch = arch;
  m->compat = arch->id == TC_ARCH_X86;
  for (int r = 0; r < RVN_NREGS; r++)
    m->src[r] = -1;
  memset(m->inv, -1, sizeof m->inv);
  static const char *const gpr64[] = {"rax", "rbx", "rcx", "rdx", "rsi", "rdi",
                                      "rbp", "r8",  "r9",  "r10", "r11", "r12",
                                      "r13", "r14", "r15", "rsp"};
  static const char *const gpr32[] = {"eax", "ebx", "ecx", "edx", "esi", "edi",
                                      "ebp", NULL,  NULL,  NULL,  NULL,  NULL,
                                      NULL,  NULL,  NULL,  "esp"};
  for (int i = 0; i < 16; i++) {
    const char *n = m->compat ? gpr32[i] : gpr64[i];
    if (n)
      direct(m, RV_RAX + i, n);
  }
  direct(m, RV_RIP, m->compat ? "eip" : "rip");
  direct(m, RV_EFLAGS, m->compat ? "eflags" : "rflags");
  static const char *const seg[] = {"cs", "ds", "es", "ss", "fs", "gs"};
  for (int i = 0; i < 6; i++)
    direct(m, RV_CS + i, seg[i]);
  direct(m, RV_X87LASTIP, "fip");
  direct(m, RV_X87LASTDP, "fdp");
  direct(m, RV_X87LASTCS, "fcs");
  direct(m, RV_X87LASTDS, "fds");
  direct(m, RV_X87OPCODE, "fop");
  direct(m, RV_X87CONTROL, "fpcw");
  direct(m, RV_X87TAGS, "fptag");
  direct(m, RV_MXCSR, "mxcsr");
  for (int i = 0; i < 16; i++) {
    char n[8] = "xmm";
    n[3] = (char)(i < 10 ? '0' + i : '1');
    n[4] = (char)(i < 10 ? 0 : '0' + i - 10);
    direct(m, RV_ZMM0 + i, n);
  }
  direct(m, RV_MSR_FSBASE, "fs_base");
  direct(m, RV_MSR_GSBASE, "gs_base");

  /* x87: REVEN holds the physical registers and TOP apart from the
   * status word; tracecorn holds st(i) and the full status word. */
  m->fpsw = tc_arch_reg_index(arch, "fpsw");
  m->st0 = tc_arch_reg_index(arch, "st0");
  if (m->fpsw < 0 || m->st0 < 0)
    return -1;
  for (int i = 1; i < 8; i++) {
    char n[4] = {'s', 't', (char)('0' + i), 0};
    if (tc_arch_reg_index(arch, n) != m->st0 + i)
      return -1;
  }
  m->kind[RV_TOP] = RVN_SRC_TOP;
  m->kind[RV_X87STATUS] = RVN_SRC_STATUS;
  add_dep(m, m->fpsw, RV_TOP);
  add_dep(m, m->fpsw, RV_X87STATUS);
  for (int k = 0; k < 8; k++) {
    m->kind[RV_X87R0 + k] = RVN_SRC_X87R;
    add_dep(m, m->fpsw, RV_X87R0 + k);
    for (int i = 0; i < 8; i++)
      add_dep(m, m->st0 + i, RV_X87R0 + k);
  }
  m->fs_base = tc_arch_reg_index(arch, "fs_base");
  m->gs_base = tc_arch_reg_index(arch, "gs_base");
  m->kind[RV_FS_SHADOW] = RVN_SRC_FS_SHADOW;
  m->kind[RV_GS_SHADOW] = RVN_SRC_GS_SHADOW;
  add_dep(m, m->fs_base, RV_FS_SHADOW);
  add_dep(m, m->gs_base, RV_GS_SHADOW);

  /* Constants of a user-mode process. cs: a 64-bit DPL3 code segment
   * (L=1), or for an i386 guest a 32-bit one (L=0, D=1): a
   * compatibility-mode process under a 64-bit kernel. */
  m->konst[RV_CS_SHADOW] =
      m->compat ? 0x00cffb000000ffffull : 0x00affb000000ffffull;
  m->konst[RV_DS_SHADOW] = m->konst[RV_ES_SHADOW] = m->konst[RV_SS_SHADOW] =
      rvn_data_descriptor(0);
  m->konst[RV_CR0] = CR0_USER;
  m->konst[RV_CR3] = RVN_PT_BASE;
  m->konst[RV_CR4] = CR4_USER;
  m->konst[RV_DR6] = 0xffff0ff0u;
  m->konst[RV_DR7] = 0x400;
  m->konst[RV_MSR_APICBASE] = 0xfee00900u;
  m->konst[RV_MSR_EFER] = EFER_USER;
  m->konst[RV_MSR_PAT] = 0x0007040600070406ull;
  return 0;
}

static uint64_t get_tc(const tc_arch *a, const uint8_t *state, int t) {
  return t >= 0 ? tc_state_get(a, state, t) : 0;
}

void rvn_value(const rvn_map *m, int r, const uint8_t *state, uint8_t *out) {
  const tc_arch *a = m->arch;
  memset(out, 0, RVN_SLOT);
  uint64_t v = 0;
  switch (m->kind[r]) {
  case RVN_SRC_DIRECT: {
    const tc_reg_info *ri = &a->regs[m->src[r]];
    memcpy(out, state + ri->offset,
           ri->size < rvn_regs[r].size ? ri->size : rvn_regs[r].size);
    return;
  }
  case RVN_SRC_X87R: {
    unsigned top = (unsigned)(get_tc(a, state, m->fpsw) >> 11) & 7;
    unsigned st = ((unsigned)(r - RV_X87R0) - top) & 7;
    memcpy(out, state + a->regs[m->st0 + (int)st].offset, 10);
    return;
  }
  case RVN_SRC_TOP:
    v = (get_tc(a, state, m->fpsw) >> 11) & 7;
    break;
  case RVN_SRC_STATUS:
    v = get_tc(a, state, m->fpsw) & ~0x3800ull;
    break;
  case RVN_SRC_FS_SHADOW:
    v = rvn_data_descriptor(get_tc(a, state, m->fs_base));
    break;
  case RVN_SRC_GS_SHADOW:
    v = rvn_data_descriptor(get_tc(a, state, m->gs_base));
    break;
  default:
    v = m->konst[r];
    break;
  }
  for (unsigned i = 0; i < 8 && i < rvn_regs[r].size; i++)
    out[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t le_get(const uint8_t *p, unsigned n) {
  return get_le(p, n < 8 ? n : 8);
}

void rvn_tc_value(const rvn_map *m, int t, const uint8_t *const *vals,
                  uint8_t *state) {
  const tc_arch *a = m->arch;
  const tc_reg_info *ri = &a->regs[t];
  uint8_t *dst = state + ri->offset;
  memset(dst, 0, ri->size);
  const uint8_t *top_p = vals[RV_TOP];
  unsigned top = top_p ? (unsigned)top_p[0] & 7 : 0;
  if (t == m->fpsw) {
    uint64_t st = vals[RV_X87STATUS] ? le_get(vals[RV_X87STATUS], 2) : 0;
    tc_state_set(a, state, t, (st & ~0x3800ull) | (uint64_t)top << 11);
    return;
  }
  if (t >= m->st0 && t < m->st0 + 8) {
    const uint8_t *v = vals[RV_X87R0 + (int)((unsigned)(t - m->st0) + top) % 8];
    if (v)
      memcpy(dst, v, 10);
    return;
  }
  int r = m->inv[t];
  if (r >= 0 && vals[r])
    memcpy(dst, vals[r],
           ri->size < rvn_regs[r].size ? ri->size : rvn_regs[r].size);
}

int rvn_map_holds(const rvn_map *m, int t) {
  if (t == m->fpsw || (t >= m->st0 && t < m->st0 + 8))
    return 1;
  int r = m->inv[t];
  if (r < 0)
    return 0;
  /* rflags: bits 32-63 are reserved (always 0), eflags holds the rest. */
  return r == RV_EFLAGS || rvn_regs[r].size >= m->arch->regs[t].size;
}
