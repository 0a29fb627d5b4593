/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Registers read and written per instruction, from capstone (see
 * insn_access.h). */
#include "common/isa/insn_access.h"
#include "common/arch.h"
#include "common/isa/isa.h"

#include <capstone/capstone.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
  /* Two ways a set, least recently used replaced: direct-mapped 8192
   * slots missed 15 % of textfmt64's instructions (6817 PCs, ~650 ns a
   * capstone decode); this misses 2.4 %. Slots are touched as used. */
  CACHE_SETS = 8192, /* power of two */
  CS_MAX_REG = 1024  /* capstone register ids looked at */
};

typedef struct slot {
  uint64_t pc;
  uint8_t size; /* 0 = empty */
  uint8_t bytes[16];
  tc_insn_access acc;
} slot;

struct tc_insn_access_cache {
  const tc_arch *arch;
  csh cs, thumb; /* thumb: arm's T32 decoder, opened on first use */
  int cs_ok, thumb_ok;
  int is_x86, is_mips;
  int16_t regmap[CS_MAX_REG];   /* capstone id -> tc index, -1 = none */
  int16_t second[CS_MAX_REG];   /* arm qN -> d2N+1 (read and write) */
  int16_t alsoread[CS_MAX_REG]; /* fs -> fs_base, gs -> gs_base */
  uint8_t *mark_r, *mark_w;     /* nregs each, scratch */
  int16_t mips_gpr[32];         /* mips: $n -> tc index */
  int16_t mips_hi, mips_lo, mips_ul;
  slot *slots;    /* 2 * CACHE_SETS: set i is slots 2i, 2i + 1 */
  uint8_t *older; /* CACHE_SETS: the way to replace next */
};

tc_insn_access_cache *tc_insn_access_new(const tc_arch *arch, tc_error *err) {
  tc_insn_access_cache *c = calloc(1, sizeof *c);
  if (!c) {
    tc_error_set(err, "out of memory");
    return NULL;
  }
  c->arch = arch;
  /* capstone's detail differs per capstone arch: the one of the arch's
   * own table (a reader's built table, writers/ucir/, names none) */
  const tc_arch *own = tc_arch_by_id(arch->id);
  c->is_x86 = own && own->cs_arch == CS_ARCH_X86;
  c->is_mips = own && own->cs_arch == CS_ARCH_MIPS;
  c->slots = calloc(2 * CACHE_SETS, sizeof *c->slots);
  c->older = calloc(CACHE_SETS, 1);
  c->mark_r = calloc(arch->nregs ? arch->nregs : 1, 1);
  c->mark_w = calloc(arch->nregs ? arch->nregs : 1, 1);
  if (!c->slots || !c->older || !c->mark_r || !c->mark_w) {
    tc_insn_access_free(c);
    tc_error_set(err, "out of memory");
    return NULL;
  }
  int ca = 0, mode = 0;
  bool known = tc_isa_cs_mode(arch, &ca, &mode);
  mode |= arch->big_endian ? CS_MODE_BIG_ENDIAN : 0;
  if (!known || cs_open((cs_arch)ca, (cs_mode)mode, &c->cs) != CS_ERR_OK) {
    tc_insn_access_free(c);
    tc_error_set(err, "capstone cannot disassemble %s", arch->name);
    return NULL;
  }
  c->cs_ok = 1;
  cs_option(c->cs, CS_OPT_DETAIL, CS_OPT_ON);
  int fs_base = tc_arch_reg_index(arch, "fs_base");
  int gs_base = tc_arch_reg_index(arch, "gs_base");
  for (int i = 0; i < CS_MAX_REG; i++) {
    const char *nm = i ? cs_reg_name(c->cs, (unsigned)i) : NULL;
    c->regmap[i] = c->second[i] = c->alsoread[i] = -1;
    if (!nm)
      continue;
    int second = -1, m = tc_arch_reg_from_capstone(arch, nm, &second);
    c->regmap[i] = (int16_t)(m < 0 ? -1 : m);
    c->second[i] = (int16_t)second;
    if (c->is_x86 && strcmp(nm, "fs") == 0)
      c->alsoread[i] = (int16_t)fs_base;
    if (c->is_x86 && strcmp(nm, "gs") == 0)
      c->alsoread[i] = (int16_t)gs_base;
  }
  if (c->is_mips) {
    static const char *const gpr[32] = {
        "zero", "at", "v0", "v1", "a0", "a1", "a2", "a3", "t0", "t1", "t2",
        "t3",   "t4", "t5", "t6", "t7", "s0", "s1", "s2", "s3", "s4", "s5",
        "s6",   "s7", "t8", "t9", "k0", "k1", "gp", "sp", "fp", "ra"};
    for (int i = 0; i < 32; i++)
      c->mips_gpr[i] = (int16_t)tc_arch_reg_index(arch, gpr[i]);
    c->mips_hi = (int16_t)tc_arch_reg_index(arch, "hi");
    c->mips_lo = (int16_t)tc_arch_reg_index(arch, "lo");
    c->mips_ul = (int16_t)tc_arch_reg_index(arch, "userlocal");
  }
  return c;
}

void tc_insn_access_free(tc_insn_access_cache *c) {
  if (!c)
    return;
  if (c->cs_ok)
    cs_close(&c->cs);
  if (c->thumb_ok > 0)
    cs_close(&c->thumb);
  free(c->slots);
  free(c->older);
  free(c->mark_r);
  free(c->mark_w);
  free(c);
}

static void mark(uint8_t *m, const tc_arch *arch, int reg) {
  if (reg >= 0 && reg < arch->nregs)
    m[reg] = 1;
}

/* Gathers the marked registers in ascending order and clears the marks. */
static uint8_t gather(uint8_t *m, const tc_arch *arch, uint16_t *out) {
  uint8_t n = 0;
  for (int r = 0; r < arch->nregs; r++)
    if (m[r]) {
      m[r] = 0;
      if (n < TC_INSN_ACCESS_MAX)
        out[n++] = (uint16_t)r;
    }
  return n;
}

/* mips: capstone 4 has no access information for mips (and names
 * rdhwr's hardware register $29 "sp"), so the registers come from the
 * encoding. Bits 0-31 of a mask are $0-$31, then HI, LO, UserLocal. */
enum { M_HI = 32, M_LO = 33, M_UL = 34 };
#define G(n) (1ull << (n))

/* 1 if the word is an instruction these rules know (MIPS32 release 2,
 * its FPU moves, and with is64 the MIPS64 additions), with *rd and *wr
 * the registers read and written; *trap for `syscall`. */
static int mips_rules(uint32_t w, int is64, uint64_t *rd, uint64_t *wr,
                      int *trap) {
  const unsigned op = w >> 26, rs = (w >> 21) & 31, rt = (w >> 16) & 31,
                 rdn = (w >> 11) & 31, sa = (w >> 6) & 31, fn = w & 63;
  uint64_t R = 0, W = 0;
  int ok = 1;
  switch (op) {
  case 0: /* SPECIAL */
    switch (fn) {
    case 0: /* sll; with rd = $0: nop, ssnop, ehb, pause (no effect) */
    case 2: /* srl, rotr */
    case 3: /* sra */
      if (rdn)
        R = G(rt), W = G(rdn);
      break;
    case 1: /* movf/movt rd, rs, cc: rd keeps its value when not moved */
      R = G(rs) | G(rdn), W = G(rdn);
      break;
    case 4:  /* sllv */
    case 6:  /* srlv, rotrv */
    case 7:  /* srav */
    case 32: /* add */
    case 33: /* addu */
    case 34: /* sub */
    case 35: /* subu */
    case 36: /* and */
    case 37: /* or */
    case 38: /* xor */
    case 39: /* nor */
    case 42: /* slt */
    case 43: /* sltu */
      R = G(rs) | G(rt), W = G(rdn);
      break;
    case 8: /* jr, jr.hb */
      R = G(rs);
      break;
    case 9: /* jalr rd, rs */
      R = G(rs), W = G(rdn);
      break;
    case 10: /* movz */
    case 11: /* movn: rd keeps its value when not moved */
      R = G(rs) | G(rt) | G(rdn), W = G(rdn);
      break;
    case 12: /* syscall */
      *trap = 1;
      break;
    case 13: /* break */
    case 15: /* sync */
      break;
    case 16: /* mfhi */
      R = G(M_HI), W = G(rdn);
      break;
    case 17: /* mthi */
      R = G(rs), W = G(M_HI);
      break;
    case 18: /* mflo */
      R = G(M_LO), W = G(rdn);
      break;
    case 19: /* mtlo */
      R = G(rs), W = G(M_LO);
      break;
    case 24: /* mult */
    case 25: /* multu */
    case 26: /* div */
    case 27: /* divu */
      R = G(rs) | G(rt), W = G(M_HI) | G(M_LO);
      break;
    case 48: /* tge */
    case 49: /* tgeu */
    case 50: /* tlt */
    case 51: /* tltu */
    case 52: /* teq */
    case 54: /* tne */
      R = G(rs) | G(rt);
      break;
    case 20: /* dsllv */
    case 22: /* dsrlv, drotrv */
    case 23: /* dsrav */
    case 44: /* dadd */
    case 45: /* daddu */
    case 46: /* dsub */
    case 47: /* dsubu */
      ok = is64, R = G(rs) | G(rt), W = G(rdn);
      break;
    case 28: /* dmult */
    case 29: /* dmultu */
    case 30: /* ddiv */
    case 31: /* ddivu */
      ok = is64, R = G(rs) | G(rt), W = G(M_HI) | G(M_LO);
      break;
    case 56: /* dsll */
    case 58: /* dsrl, drotr */
    case 59: /* dsra */
    case 60: /* dsll32 */
    case 62: /* dsrl32, drotr32 */
    case 63: /* dsra32 */
      ok = is64, R = G(rt), W = G(rdn);
      break;
    default:
      ok = 0;
    }
    break;
  case 1: /* REGIMM */
    switch (rt) {
    case 0:  /* bltz */
    case 1:  /* bgez */
    case 2:  /* bltzl */
    case 3:  /* bgezl */
    case 8:  /* tgei */
    case 9:  /* tgeiu */
    case 10: /* tlti */
    case 11: /* tltiu */
    case 12: /* teqi */
    case 14: /* tnei */
    case 31: /* synci */
      R = G(rs);
      break;
    case 16: /* bltzal */
    case 17: /* bgezal, bal: the link is written taken or not */
    case 18: /* bltzall */
    case 19: /* bgezall */
      R = G(rs), W = G(31);
      break;
    default:
      ok = 0;
    }
    break;
  case 2: /* j */
    break;
  case 3:  /* jal */
  case 29: /* jalx */
    W = G(31);
    break;
  case 4:  /* beq */
  case 5:  /* bne */
  case 20: /* beql */
  case 21: /* bnel */
    R = G(rs) | G(rt);
    break;
  case 6:  /* blez */
  case 7:  /* bgtz */
  case 22: /* blezl */
  case 23: /* bgtzl */
    R = G(rs);
    break;
  case 8:  /* addi */
  case 9:  /* addiu */
  case 10: /* slti */
  case 11: /* sltiu */
  case 12: /* andi */
  case 13: /* ori */
  case 14: /* xori */
    R = G(rs), W = G(rt);
    break;
  case 24: /* daddi */
  case 25: /* daddiu */
    ok = is64, R = G(rs), W = G(rt);
    break;
  case 15: /* lui */
    W = G(rt);
    break;
  case 16: /* COP0 (privileged: faults in user mode) */
  case 18: /* COP2 */
  case 17: /* COP1: only the moves touch integer registers */
    if (rs == 0 || rs == 2 || rs == 3 || (rs == 1 && is64) ||
        (op == 16 && rs == 11)) /* mfcN, cfcN, mfhcN, dmfcN; di/ei */
      W = G(rt);
    else if (rs == 4 || rs == 6 || rs == 7 || (rs == 5 && is64))
      R = G(rt); /* mtcN, ctcN, mthcN, dmtcN */
    else if (op == 17 && (rs == 16 || rs == 17 || rs == 22) &&
             (fn == 18 || fn == 19))
      R = G(rt); /* movz.fmt, movn.fmt test a GPR */
    break;
  case 19: /* COP1X */
    if (fn == 0 || fn == 1 || fn == 5 || fn == 8 || fn == 9 || fn == 13 ||
        fn == 15) /* l/s w/d/u xc1 base(rs) + index(rt), prefx */
      R = G(rs) | G(rt);
    break;
  case 28: /* SPECIAL2 */
    switch (fn) {
    case 0: /* madd */
    case 1: /* maddu */
    case 4: /* msub */
    case 5: /* msubu */
      R = G(rs) | G(rt) | G(M_HI) | G(M_LO), W = G(M_HI) | G(M_LO);
      break;
    case 2: /* mul (HI/LO unpredictable; QEMU leaves them) */
      R = G(rs) | G(rt), W = G(rdn);
      break;
    case 32: /* clz */
    case 33: /* clo */
      R = G(rs), W = G(rdn);
      break;
    case 36: /* dclz */
    case 37: /* dclo */
      ok = is64, R = G(rs), W = G(rdn);
      break;
    case 63: /* sdbbp */
      break;
    default:
      ok = 0;
    }
    break;
  case 31: /* SPECIAL3 */
    switch (fn) {
    case 0: /* ext */
      R = G(rs), W = G(rt);
      break;
    case 4: /* ins: the other bits of rt stay */
      R = G(rs) | G(rt), W = G(rt);
      break;
    case 1: /* dextm */
    case 2: /* dextu */
    case 3: /* dext */
      ok = is64, R = G(rs), W = G(rt);
      break;
    case 5: /* dinsm */
    case 6: /* dinsu */
    case 7: /* dins */
      ok = is64, R = G(rs) | G(rt), W = G(rt);
      break;
    case 32: /* bshfl: wsbh, seb, seh */
      ok = sa == 2 || sa == 16 || sa == 24, R = G(rt), W = G(rdn);
      break;
    case 36: /* dbshfl: dsbh, dshd */
      ok = is64 && (sa == 2 || sa == 5), R = G(rt), W = G(rdn);
      break;
    case 59: /* rdhwr rt, $rd: $29 is UserLocal (TLS) */
      W = G(rt);
      if (rdn == 29)
        R = G(M_UL);
      break;
    default:
      ok = 0;
    }
    break;
  case 32: /* lb */
  case 33: /* lh */
  case 35: /* lw */
  case 36: /* lbu */
  case 37: /* lhu */
  case 48: /* ll */
    R = G(rs), W = G(rt);
    break;
  case 34: /* lwl: merges into rt */
  case 38: /* lwr */
  case 56: /* sc: rt becomes the success flag */
    R = G(rs) | G(rt), W = G(rt);
    break;
  case 39: /* lwu */
  case 52: /* lld */
  case 55: /* ld */
    ok = is64, R = G(rs), W = G(rt);
    break;
  case 26: /* ldl */
  case 27: /* ldr */
  case 60: /* scd */
    ok = is64, R = G(rs) | G(rt), W = G(rt);
    break;
  case 40: /* sb */
  case 41: /* sh */
  case 42: /* swl */
  case 43: /* sw */
  case 46: /* swr */
    R = G(rs) | G(rt);
    break;
  case 44: /* sdl */
  case 45: /* sdr */
  case 63: /* sd */
    ok = is64, R = G(rs) | G(rt);
    break;
  case 47:     /* cache */
  case 51:     /* pref */
  case 49:     /* lwc1 */
  case 50:     /* lwc2 */
  case 53:     /* ldc1 */
  case 54:     /* ldc2 */
  case 57:     /* swc1 */
  case 58:     /* swc2 */
  case 61:     /* sdc1 */
  case 62:     /* sdc2 */
    R = G(rs); /* the FPU/COP2 register is not recorded */
    break;
  default:
    ok = 0;
  }
  *rd = R;
  *wr = W & ~G(0); /* writes to $zero are discarded */
  return ok;
}

static void decode_mips(tc_insn_access_cache *c, slot *s) {
  const tc_arch *arch = c->arch;
  tc_insn_access *a = &s->acc;
  if (s->size < 4)
    return;
  const uint8_t *b = s->bytes;
  uint32_t w = arch->big_endian ? (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 |
                                      (uint32_t)b[2] << 8 | b[3]
                                : (uint32_t)b[3] << 24 | (uint32_t)b[2] << 16 |
                                      (uint32_t)b[1] << 8 | b[0];
  uint64_t rd = 0, wr = 0;
  int trap = 0;
  if (!mips_rules(w, arch->ptr_size == 8, &rd, &wr, &trap))
    return;
  a->decoded = 1;
  for (int i = 0; i < 35; i++) {
    int reg = i < 32      ? c->mips_gpr[i]
              : i == M_HI ? c->mips_hi
              : i == M_LO ? c->mips_lo
                          : c->mips_ul;
    if (rd & G(i))
      mark(c->mark_r, arch, reg);
    if (wr & G(i))
      mark(c->mark_w, arch, reg);
  }
  if (trap) {
    /* The kernel reads the number and arguments (o32: the fifth on are
     * on the stack) and writes the result and the a3 error flag. */
    a->trap = 1;
    mark(c->mark_r, arch, arch->sys.nr_reg);
    for (int i = 0; i < 6; i++)
      if (!arch->sys.first_stack_arg || i < arch->sys.first_stack_arg)
        mark(c->mark_r, arch, arch->sys.arg_regs[i]);
    mark(c->mark_w, arch, arch->sys.ret_reg);
    mark(c->mark_w, arch, arch->sys.err_reg);
  }
  a->nread = gather(c->mark_r, arch, a->read);
  a->nwrite = gather(c->mark_w, arch, a->write);
}
#undef G

static void decode(tc_insn_access_cache *c, slot *s) {
  const tc_arch *arch = c->arch;
  tc_insn_access *a = &s->acc;
  memset(a, 0, sizeof *a);
  if (c->is_mips) {
    decode_mips(c, s);
    return;
  }
  csh h = c->cs;
  uint64_t pc = s->pc;
  if (arch->traits.thumb_bit && (pc & 1)) {
    if (!c->thumb_ok) {
      c->thumb_ok =
          cs_open(CS_ARCH_ARM, CS_MODE_THUMB, &c->thumb) == CS_ERR_OK ? 1 : -1;
      if (c->thumb_ok > 0)
        cs_option(c->thumb, CS_OPT_DETAIL, CS_OPT_ON);
    }
    if (c->thumb_ok < 0)
      return;
    h = c->thumb;
    pc &= ~1ull;
  }
  cs_insn *insn = NULL;
  if (cs_disasm(h, s->bytes, s->size, pc, 1, &insn) != 1)
    return;
  cs_regs rd, wr;
  uint8_t nrd = 0, nwr = 0;
  if (cs_regs_access(h, insn, rd, &nrd, wr, &nwr) != CS_ERR_OK) {
    cs_free(insn, 1);
    return;
  }
  a->decoded = 1;
  for (int i = 0; i < nrd; i++)
    if (rd[i] < CS_MAX_REG) {
      mark(c->mark_r, arch, c->regmap[rd[i]]);
      mark(c->mark_r, arch, c->second[rd[i]]);
      mark(c->mark_r, arch, c->alsoread[rd[i]]);
    }
  for (int i = 0; i < nwr; i++)
    if (wr[i] < CS_MAX_REG) {
      mark(c->mark_w, arch, c->regmap[wr[i]]);
      mark(c->mark_w, arch, c->second[wr[i]]);
    }
  const cs_detail *det = insn->detail;
  int trap = 0, fpu = 0;
  for (int g = 0; g < det->groups_count; g++) {
    trap |= det->groups[g] == CS_GRP_INT;
    fpu |= c->is_x86 && det->groups[g] == X86_GRP_FPU;
  }
  if (c->is_x86 && !fpu) {
    /* For x87 instructions this field holds FPU flags instead. */
    const uint64_t tested =
        X86_EFLAGS_TEST_OF | X86_EFLAGS_TEST_SF | X86_EFLAGS_TEST_ZF |
        X86_EFLAGS_TEST_PF | X86_EFLAGS_TEST_CF | X86_EFLAGS_TEST_NT |
        X86_EFLAGS_TEST_DF | X86_EFLAGS_TEST_RF | X86_EFLAGS_TEST_IF |
        X86_EFLAGS_TEST_TF | X86_EFLAGS_TEST_AF;
    const uint64_t modified = 0x7FFull | (0xFFFull << 21) | (0x7Full << 40) |
                              (1ull << 46) | (0xFFull << 51);
    if (det->x86.eflags & tested)
      mark(c->mark_r, arch, arch->flags_reg);
    if (det->x86.eflags & modified)
      mark(c->mark_w, arch, arch->flags_reg);
  }
  if (trap || (c->is_x86 && (strcmp(insn->mnemonic, "syscall") == 0 ||
                             strcmp(insn->mnemonic, "sysenter") == 0))) {
    /* The kernel reads the syscall number and arguments. */
    a->trap = 1;
    mark(c->mark_r, arch, arch->sys.nr_reg);
    for (int i = 0; i < 6; i++)
      mark(c->mark_r, arch, arch->sys.arg_regs[i]);
  }
  cs_free(insn, 1);
  a->nread = gather(c->mark_r, arch, a->read);
  a->nwrite = gather(c->mark_w, arch, a->write);
}

const tc_insn_access *tc_insn_access_get(tc_insn_access_cache *c, uint64_t pc,
                                         const uint8_t *bytes, uint32_t size) {
  if (size > 16)
    size = 16;
  size_t set = (size_t)((pc * 0x9e3779b97f4a7c15ull) >> 40) & (CACHE_SETS - 1);
  slot *ways = &c->slots[2 * set];
  for (int way = 0; way < 2; way++) {
    slot *s = &ways[way];
    if (s->size == size && size && s->pc == pc &&
        memcmp(s->bytes, bytes, size) == 0) {
      c->older[set] = (uint8_t)!way;
      return &s->acc;
    }
  }
  slot *s = &ways[c->older[set]];
  c->older[set] = !c->older[set];
  s->pc = pc;
  s->size = (uint8_t)size;
  memcpy(s->bytes, bytes, size);
  if (size)
    decode(c, s);
  else
    memset(&s->acc, 0, sizeof s->acc);
  return &s->acc;
}
