/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Private helpers of the TRAC (x64dbg trace) format module: the REGDUMP
 * image that TRAC blocks index, built with explicit byte offsets (MSVC's
 * layout, never a native struct). See docs/formats/trac.md. */
#ifndef TC_TRAC_H
#define TC_TRAC_H

#include <stdint.h>

#include "writers/format.h"

enum {
  TRAC_DUMP_MAX = 1376, /* bytes of the largest (x64) REGDUMP image */
  TRAC_SLOTS_MAX = 172, /* slots of the largest REGDUMP (x86 has 216 x 4) */
  TRAC_MAX_MEM = TC_MEM_BOUND_WORDS, /* memory entries per block (x64dbg's
                                        limit) */
  TRAC_FULL_DUMP_EVERY = 512
};

/* Byte offsets of every REGDUMP field for one pointer size. */
typedef struct trac_layout {
  uint8_t ptr;     /* P: 8 or 4 */
  uint16_t nslots; /* N: 172 or 216 */
  uint16_t size;   /* N * P */
  uint16_t nxmm;   /* 16 or 8 */
  uint16_t gpr;    /* cax ccx cdx cbx csp cbp csi cdi [r8..r15], P each */
  uint16_t cip, eflags;
  uint16_t gs, fs, es, ds, cs, ss; /* u16 each */
  uint16_t dr;                     /* dr0 dr1 dr2 dr3 dr6 dr7, P each */
  uint16_t reg_area; /* x87 registers in ST order, 10 bytes each */
  uint16_t cw, sw, tw, err_off, err_sel, data_off, data_sel, cr0npx;
  uint16_t mxcsr;
  uint16_t xmm, ymm;     /* 16 / 32 bytes each */
  uint16_t flags;        /* 9 bools: c p a z s t i d o */
  uint16_t fpu_regs;     /* 8 x 20 bytes: data[10], pad 2, st_value, tag */
  uint16_t mmx;          /* 8 x u64 */
  uint16_t mxcsr_fields; /* 14 bools then u16 RC at +14 */
  uint16_t sw_fields;    /* 13 bools, pad, u16 TOP at +14 */
  uint16_t cw_fields;    /* 8 bools, u16 RC at +8, u16 PC at +10 */
  uint16_t last_error;
} trac_layout;

/* The layout for a TRAC-capable arch (x86 / x86_64), else NULL. */
const trac_layout *trac_layout_for(const tc_arch *arch);

/* Register indices of an arch for the REGDUMP fields, looked up by name
 * once (-1 where the arch lacks one). */
typedef struct trac_regmap {
  const tc_arch *arch;
  const trac_layout *l;
  int gpr[16]; /* in REGDUMP order: ax cx dx bx sp bp si di r8..r15 */
  int pc, flags;
  int seg[6]; /* gs fs es ds cs ss, the REGDUMP order */
  int st[8];
  int fpcw, fpsw, fptag, fip, fcs, fdp, fds, mxcsr;
  int xmm[16];
} trac_regmap;

/* 0, or -1 if the arch has no TRAC layout. */
int trac_regmap_init(trac_regmap *m, const tc_arch *arch);

/* Fills a REGDUMP image (l->size bytes, zeroed here first) from a
 * tracecorn state image, derived fields included. */
void trac_regdump_from_state(const trac_regmap *m, const uint8_t *state,
                             uint8_t *dump);
/* The inverse: sets every register TRAC holds in `state` from `dump`;
 * other registers are left as they are. */
/* Updates a dump for register r's new value in state (the rest of state
 * as the dump was built from); returns the count of (offset, length)
 * pairs written to touched, 0 if r needs trac_regdump_from_state. */
int trac_regdump_update(const trac_regmap *m, const uint8_t *state, int r,
                        uint8_t *dump, uint16_t touched[4]);
void trac_state_from_regdump(const trac_regmap *m, const uint8_t *dump,
                             uint8_t *state);
/* 1 if register `reg` of `arch` round-trips through a TRAC file. */
int trac_holds_reg(const tc_arch *arch, int reg);

#endif
