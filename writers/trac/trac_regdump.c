/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The REGDUMP image of x64dbg trace files, filled by explicit byte offsets
 * (MSVC layout: pack(16) on x64, pack(8) on x86, 16-aligned XMM). The
 * derived fields follow x64dbg's DbgGetRegDumpEx so the GUI shows them
 * consistently. */
#include <stdio.h>
#include <string.h>

#include "common/byteorder.h"
#include "writers/trac/trac.h"

static const trac_layout layout_x64 = {
    .ptr = 8,
    .nslots = 172,
    .size = 1376,
    .nxmm = 16,
    .gpr = 0,
    .cip = 128,
    .eflags = 136,
    .gs = 144,
    .fs = 146,
    .es = 148,
    .ds = 150,
    .cs = 152,
    .ss = 154,
    .dr = 160,
    .reg_area = 208,
    .cw = 288,
    .sw = 290,
    .tw = 292,
    .err_off = 296,
    .err_sel = 300,
    .data_off = 304,
    .data_sel = 308,
    .cr0npx = 312,
    .mxcsr = 316,
    .xmm = 320,
    .ymm = 576,
    .flags = 1088,
    .fpu_regs = 1100,
    .mmx = 1264,
    .mxcsr_fields = 1328,
    .sw_fields = 1344,
    .cw_fields = 1360,
    .last_error = 1372,
};

static const trac_layout layout_x86 = {
    .ptr = 4,
    .nslots = 216,
    .size = 864,
    .nxmm = 8,
    .gpr = 0,
    .cip = 32,
    .eflags = 36,
    .gs = 40,
    .fs = 42,
    .es = 44,
    .ds = 46,
    .cs = 48,
    .ss = 50,
    .dr = 52,
    .reg_area = 76,
    .cw = 156,
    .sw = 158,
    .tw = 160,
    .err_off = 164,
    .err_sel = 168,
    .data_off = 172,
    .data_sel = 176,
    .cr0npx = 180,
    .mxcsr = 184,
    .xmm = 192,
    .ymm = 320,
    .flags = 576,
    .fpu_regs = 588,
    .mmx = 752,
    .mxcsr_fields = 816,
    .sw_fields = 832,
    .cw_fields = 848,
    .last_error = 860,
};

const trac_layout *trac_layout_for(const tc_arch *arch) {
  if (!arch)
    return NULL;
  if (arch->id == TC_ARCH_X86_64)
    return &layout_x64;
  if (arch->id == TC_ARCH_X86)
    return &layout_x86;
  return NULL;
}

/* Registers a TRAC file does not hold (for every TRAC arch) ... */
static const char *const not_held[] = {"fs_base", "gs_base", "fop"};
/* ... and those it holds only 32 bits of (X87FPU offsets are DWORDs). */
static const char *const not_held_x64[] = {"fip", "fdp"};

int trac_holds_reg(const tc_arch *arch, int reg) {
  if (!trac_layout_for(arch) || reg < 0 || reg >= arch->nregs)
    return 0;
  const char *name = arch->regs[reg].name;
  for (size_t i = 0; i < sizeof not_held / sizeof not_held[0]; i++)
    if (strcmp(name, not_held[i]) == 0)
      return 0;
  if (arch->id == TC_ARCH_X86_64)
    for (size_t i = 0; i < sizeof not_held_x64 / sizeof not_held_x64[0]; i++)
      if (strcmp(name, not_held_x64[i]) == 0)
        return 0;
  return 1;
}

int trac_regmap_init(trac_regmap *m, const tc_arch *arch) {
  static const char *const gpr64[16] = {
      "rax", "rcx", "rdx", "rbx", "rsp", "rbp", "rsi", "rdi",
      "r8",  "r9",  "r10", "r11", "r12", "r13", "r14", "r15"};
  static const char *const gpr32[8] = {"eax", "ecx", "edx", "ebx",
                                       "esp", "ebp", "esi", "edi"};
  static const char *const segs[6] = {"gs", "fs", "es", "ds", "cs", "ss"};
  char name[16];

  memset(m, 0, sizeof *m);
  m->l = trac_layout_for(arch);
  if (!m->l)
    return -1;
  m->arch = arch;
  int is64 = arch->id == TC_ARCH_X86_64;
  for (int i = 0; i < 16; i++)
    m->gpr[i] = i < (is64 ? 16 : 8)
                    ? tc_arch_reg_index(arch, is64 ? gpr64[i] : gpr32[i])
                    : -1;
  m->pc = arch->pc_reg;
  m->flags = arch->flags_reg;
  for (int i = 0; i < 6; i++)
    m->seg[i] = tc_arch_reg_index(arch, segs[i]);
  for (int i = 0; i < 8; i++) {
    snprintf(name, sizeof name, "st%d", i);
    m->st[i] = tc_arch_reg_index(arch, name);
  }
  m->fpcw = tc_arch_reg_index(arch, "fpcw");
  m->fpsw = tc_arch_reg_index(arch, "fpsw");
  m->fptag = tc_arch_reg_index(arch, "fptag");
  m->fip = tc_arch_reg_index(arch, "fip");
  m->fcs = tc_arch_reg_index(arch, "fcs");
  m->fdp = tc_arch_reg_index(arch, "fdp");
  m->fds = tc_arch_reg_index(arch, "fds");
  m->mxcsr = tc_arch_reg_index(arch, "mxcsr");
  for (int i = 0; i < 16; i++) {
    snprintf(name, sizeof name, "xmm%d", i);
    m->xmm[i] = i < m->l->nxmm ? tc_arch_reg_index(arch, name) : -1;
  }
  return 0;
}

static uint64_t reg_get(const trac_regmap *m, const uint8_t *state, int r) {
  return r < 0 ? 0 : tc_state_get(m->arch, state, r);
}

/* Copies a register's raw bytes (x87 / vector) into the dump. */
static void reg_bytes(const trac_regmap *m, const uint8_t *state, int r,
                      uint8_t *dst, unsigned n) {
  if (r < 0)
    return;
  const tc_reg_info *ri = &m->arch->regs[r];
  memcpy(dst, state + ri->offset, ri->size < n ? ri->size : n);
}

/* Writes one bool byte per mask, in order. */
static void put_bools(uint8_t *p, uint32_t v, const uint32_t *masks,
                      unsigned n) {
  for (unsigned i = 0; i < n; i++)
    p[i] = (v & masks[i]) ? 1 : 0;
}

void trac_regdump_from_state(const trac_regmap *m, const uint8_t *state,
                             uint8_t *dump) {
  static const uint32_t eflags_bits[9] = {1u << 0, 1u << 2,  1u << 4,
                                          1u << 6, 1u << 7,  1u << 8,
                                          1u << 9, 1u << 10, 1u << 11};
  /* FZ PM UM OM ZM IM DM DAZ PE UE OE ZE DE IE */
  static const uint32_t mxcsr_bits[14] = {0x8000, 0x1000, 0x800, 0x400, 0x200,
                                          0x80,   0x100,  0x40,  0x20,  0x10,
                                          0x8,    0x4,    0x2,   0x1};
  /* B C3 C2 C1 C0 ES SF P U O Z D I */
  static const uint32_t sw_bits[13] = {0x8000, 0x4000, 0x400, 0x200, 0x100,
                                       0x80,   0x40,   0x20,  0x10,  0x8,
                                       0x4,    0x2,    0x1};
  /* IC IEM PM UM OM ZM DM IM */
  static const uint32_t cw_bits[8] = {0x1000, 0x80, 0x20, 0x10,
                                      0x8,    0x4,  0x2,  0x1};
  const trac_layout *l = m->l;
  unsigned P = l->ptr;

  memset(dump, 0, l->size);
  for (int i = 0; i < (P == 8 ? 16 : 8); i++)
    put_le(dump + l->gpr + P * i, reg_get(m, state, m->gpr[i]), P);
  put_le(dump + l->cip, reg_get(m, state, m->pc), P);
  uint64_t eflags = reg_get(m, state, m->flags);
  put_le(dump + l->eflags, eflags, P);
  const uint16_t seg_off[6] = {l->gs, l->fs, l->es, l->ds, l->cs, l->ss};
  for (int i = 0; i < 6; i++)
    put_le(dump + seg_off[i], reg_get(m, state, m->seg[i]), 2);
  /* dr0..dr7: Unicorn user-mode guests have no debug registers: zero. */
  for (int i = 0; i < 8; i++)
    reg_bytes(m, state, m->st[i], dump + l->reg_area + 10 * i, 10);

  uint32_t cw = (uint32_t)reg_get(m, state, m->fpcw) & 0xffff;
  uint32_t sw = (uint32_t)reg_get(m, state, m->fpsw) & 0xffff;
  uint32_t tw = (uint32_t)reg_get(m, state, m->fptag) & 0xffff;
  uint32_t mxcsr = (uint32_t)reg_get(m, state, m->mxcsr);
  put_le(dump + l->cw, cw, 2);
  put_le(dump + l->sw, sw, 2);
  put_le(dump + l->tw, tw, 2);
  put_le(dump + l->err_off, reg_get(m, state, m->fip), 4);
  put_le(dump + l->err_sel, reg_get(m, state, m->fcs) & 0xffff, 4);
  put_le(dump + l->data_off, reg_get(m, state, m->fdp), 4);
  put_le(dump + l->data_sel, reg_get(m, state, m->fds) & 0xffff, 4);
  put_le(dump + l->mxcsr, mxcsr, 4);
  for (int i = 0; i < l->nxmm; i++) {
    reg_bytes(m, state, m->xmm[i], dump + l->xmm + 16 * i, 16);
    /* YMM low half duplicates XMM; the high half (AVX) is not recorded. */
    reg_bytes(m, state, m->xmm[i], dump + l->ymm + 32 * i, 16);
  }

  put_bools(dump + l->flags, (uint32_t)eflags, eflags_bits, 9);

  unsigned top = (sw >> 11) & 7;
  unsigned r0 = (8 - top) % 8;
  for (unsigned i = 0; i < 8; i++) {
    uint8_t *fr = dump + l->fpu_regs + 20 * i;
    unsigned st = (r0 + i) % 8;
    memcpy(fr, dump + l->reg_area + 10 * st, 10);
    put_le(fr + 12, st, 4);
    put_le(fr + 16, (tw >> (2 * i)) & 3, 4);
    memcpy(dump + l->mmx + 8 * i, fr, 8);
  }

  put_bools(dump + l->mxcsr_fields, mxcsr, mxcsr_bits, 14);
  put_le(dump + l->mxcsr_fields + 14, (mxcsr >> 13) & 3, 2);
  put_bools(dump + l->sw_fields, sw, sw_bits, 13);
  put_le(dump + l->sw_fields + 14, top, 2);
  put_bools(dump + l->cw_fields, cw, cw_bits, 8);
  put_le(dump + l->cw_fields + 8, (cw >> 10) & 3, 2);
  put_le(dump + l->cw_fields + 10, (cw >> 8) & 3, 2);
  /* lastError.code is a Windows concept: 0 (already zeroed). */
}

/* After register r changed in state: updates only its part of a dump
 * built from the earlier state, and gives the byte ranges it wrote as
 * (offset, length) pairs in touched. Returns their count (1 or 2), or 0
 * if r is not one it updates alone (x87, segment, status registers...):
 * rebuild the dump then. */
int trac_regdump_update(const trac_regmap *m, const uint8_t *state, int r,
                        uint8_t *dump, uint16_t touched[4]) {
  static const uint32_t eflags_bits[9] = {1u << 0, 1u << 2,  1u << 4,
                                          1u << 6, 1u << 7,  1u << 8,
                                          1u << 9, 1u << 10, 1u << 11};
  const trac_layout *l = m->l;
  unsigned P = l->ptr;
  if (r < 0)
    return 0;
  if (r == m->pc) {
    put_le(dump + l->cip, reg_get(m, state, r), P);
    touched[0] = l->cip, touched[1] = (uint16_t)P;
    return 1;
  }
  if (r == m->flags) {
    uint64_t eflags = reg_get(m, state, r);
    put_le(dump + l->eflags, eflags, P);
    put_bools(dump + l->flags, (uint32_t)eflags, eflags_bits, 9);
    touched[0] = l->eflags, touched[1] = (uint16_t)P;
    touched[2] = l->flags, touched[3] = 9;
    return 2;
  }
  for (int i = 0; i < (P == 8 ? 16 : 8); i++)
    if (m->gpr[i] == r) {
      put_le(dump + l->gpr + P * i, reg_get(m, state, r), P);
      touched[0] = (uint16_t)(l->gpr + P * i), touched[1] = (uint16_t)P;
      return 1;
    }
  for (int i = 0; i < l->nxmm; i++)
    if (m->xmm[i] == r) {
      reg_bytes(m, state, r, dump + l->xmm + 16 * i, 16);
      reg_bytes(m, state, r, dump + l->ymm + 32 * i, 16);
      touched[0] = (uint16_t)(l->xmm + 16 * i), touched[1] = 16;
      touched[2] = (uint16_t)(l->ymm + 32 * i), touched[3] = 16;
      return 2;
    }
  return 0;
}

static void reg_set(const trac_regmap *m, uint8_t *state, int r, uint64_t v) {
  if (r >= 0)
    tc_state_set(m->arch, state, r, v);
}

static void reg_set_bytes(const trac_regmap *m, uint8_t *state, int r,
                          const uint8_t *src, unsigned n) {
  if (r < 0)
    return;
  const tc_reg_info *ri = &m->arch->regs[r];
  memset(state + ri->offset, 0, ri->size);
  memcpy(state + ri->offset, src, ri->size < n ? ri->size : n);
}

void trac_state_from_regdump(const trac_regmap *m, const uint8_t *dump,
                             uint8_t *state) {
  const trac_layout *l = m->l;
  unsigned P = l->ptr;

  for (int i = 0; i < (P == 8 ? 16 : 8); i++)
    reg_set(m, state, m->gpr[i], get_le(dump + l->gpr + P * i, P));
  reg_set(m, state, m->pc, get_le(dump + l->cip, P));
  reg_set(m, state, m->flags, get_le(dump + l->eflags, P));
  const uint16_t seg_off[6] = {l->gs, l->fs, l->es, l->ds, l->cs, l->ss};
  for (int i = 0; i < 6; i++)
    reg_set(m, state, m->seg[i], get_le(dump + seg_off[i], 2));
  for (int i = 0; i < 8; i++)
    reg_set_bytes(m, state, m->st[i], dump + l->reg_area + 10 * i, 10);
  reg_set(m, state, m->fpcw, get_le(dump + l->cw, 2));
  reg_set(m, state, m->fpsw, get_le(dump + l->sw, 2));
  reg_set(m, state, m->fptag, get_le(dump + l->tw, 2));
  reg_set(m, state, m->fip, get_le(dump + l->err_off, 4));
  reg_set(m, state, m->fcs, get_le(dump + l->err_sel, 2));
  reg_set(m, state, m->fdp, get_le(dump + l->data_off, 4));
  reg_set(m, state, m->fds, get_le(dump + l->data_sel, 2));
  reg_set(m, state, m->mxcsr, get_le(dump + l->mxcsr, 4));
  for (int i = 0; i < l->nxmm; i++)
    reg_set_bytes(m, state, m->xmm[i], dump + l->xmm + 16 * i, 16);
}
