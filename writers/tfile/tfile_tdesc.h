/* SPDX-License-Identifier: GPL-2.0-or-later */
/* GDB register layouts for the tfile format: one row per GDB architecture,
 * each register tied to the tracecorn register it comes from (by name).
 * The layouts are gdbserver's g-packet layouts (see specs tfile.md §5). */
#ifndef TC_TFILE_TDESC_H
#define TC_TFILE_TDESC_H

#include <stddef.h>
#include <stdint.h>

#include "writers/format.h"

/* How a GDB register gets its value when writing. */
enum {
  TF_FROM_REG = 0, /* from tracecorn register `src` (zero-extended/truncated) */
  TF_ZERO,         /* no tracecorn source: all zero bytes */
  TF_ONES          /* no tracecorn source: all 0xff (orig_rax = -1) */
};

typedef struct tf_reg {
  const char *name;    /* GDB register name */
  uint16_t bitsize;    /* multiple of 8 */
  const char *type;    /* tdesc type: int64, code_ptr, i387_ext, ... */
  const char *feature; /* tdesc feature this register belongs to */
  const char *src;     /* tracecorn register name (TF_FROM_REG) */
  uint8_t fill;        /* TF_* */
  int16_t regnum;      /* explicit tdesc regnum, or -1 = previous + 1 */
} tf_reg;

typedef struct tf_layout {
  tc_arch_id arch;      /* tracecorn arch this row describes */
  const char *gdb_arch; /* tdesc <architecture> */
  uint32_t rsize;       /* register block bytes written: the regs packed by
                           regnum, cut after the last one tracecorn has */
  const tf_reg *regs;   /* in regnum order, so packed offsets = layout */
  size_t nregs;
} tf_layout;

/* The row for a tracecorn arch id, or NULL. */
const tf_layout *tf_layout_for_arch(tc_arch_id id);
/* The row for an arch table: tf_layout_for_arch's for an arch's own
 * table, the row with the FPU registers for mips+fpu (tc_arch_with_fpu);
 * NULL if none. */
const tf_layout *tf_layout_for_table(const tc_arch *arch);
/* The FPU row of a row's arch (mips, mipsel), or NULL. */
const tf_layout *tf_layout_with_fpu(const tf_layout *row);
/* The row whose <architecture> is `gdb_arch` for a target of that byte
 * order (big_endian 1/0; -1: any), else the first row of that
 * <architecture>, or NULL. */
const tf_layout *tf_layout_for_gdb_arch(const char *gdb_arch, int big_endian);
/* 1 if another row has the same <architecture> (mips/mipsel: the file's
 * byte order decides, and a tfile does not record it). */
int tf_layout_byte_order_ambiguous(const tf_layout *l);
/* The first row whose register block is `rsize` bytes (files without a
 * tdesc), or NULL. */
const tf_layout *tf_layout_for_rsize(uint32_t rsize);
/* The register named `name` in a row, or NULL. */
const tf_reg *tf_layout_reg(const tf_layout *l, const char *name);

/* The row's target description (qXfer:features:read:target.xml, the
 * tfile's tdesc lines), '\n'-separated, malloc'd; NULL out of memory. */
char *tf_tdesc_xml(const tf_layout *row);

/* A register of the row in g-packet order: GDB packs a target's registers
 * by regnum. */
typedef struct tf_packed {
  const tf_reg *reg;
  long regnum;
  uint32_t offset, size; /* in the g packet's register block */
} tf_packed;
/* Fills out[0..l->nregs) in regnum order with their block offsets;
 * returns l->nregs. */
size_t tf_layout_pack(const tf_layout *l, tf_packed *out);

#endif
