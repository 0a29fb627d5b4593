/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Which registers an instruction reads and writes, as tracecorn register
 * indices, from capstone's access information (mips: from the encoding,
 * capstone 4 having none). The event model carries
 * only the registers that changed; a format that lists registers read
 * (BAP's operand_pre_list) or written-but-unchanged asks this helper, so
 * a recording and a `convert` from any format give the same lists.
 * Format-neutral: an arch and instruction bytes in, index lists out. */
#ifndef TC_INSN_ACCESS_H
#define TC_INSN_ACCESS_H

#include <stdint.h>

#include "tracecorn/tracecorn.h"

enum { TC_INSN_ACCESS_MAX = 40 };

typedef struct tc_insn_access {
  uint8_t decoded; /* 0: capstone could not decode it (lists empty) */
  uint8_t trap;    /* a syscall trap: the ABI's number and argument
                      registers are in read[] */
  uint8_t nread, nwrite;
  uint16_t read[TC_INSN_ACCESS_MAX];  /* ascending, no duplicates */
  uint16_t write[TC_INSN_ACCESS_MAX]; /* ascending, no duplicates */
} tc_insn_access;

typedef struct tc_insn_access_cache tc_insn_access_cache;

/* NULL with a message if capstone cannot open the arch. */
tc_insn_access_cache *tc_insn_access_new(const tc_arch *arch, tc_error *err);
void tc_insn_access_free(tc_insn_access_cache *c);
/* The access lists of the instruction `bytes` (size bytes) at pc. Cached
 * per pc (direct-mapped, re-decoded when the bytes differ), so the pointer
 * is valid until the next call. Never NULL. On arm, an odd pc means a
 * Thumb instruction at pc - 1 (as for tc_disasm).
 *
 * x86 specifics: sub-registers are reported as their full register (eax,
 * ax, al -> rax on x86-64), ymm/zmm as xmm, st(i) as stI; a read through
 * an fs:/gs: override also reads fs_base/gs_base where the arch has them;
 * flags tested (capstone's eflags bits) are a read of the flags register,
 * flags modified a write; MMX registers (which alias the x87 stack by
 * physical number, not ST order) and registers tracecorn does not record
 * are left out. arm: capstone's sb/sl/fp/ip are r9-r12, apsr is cpsr,
 * sN/qN are parts of dN registers; arm64: wN is xN, b/h/s/d/qN are vN.
 * mips (MIPS32r2, MIPS64 on 64-bit arches): rs/rt read, rd/rt written by
 * encoding class, hi/lo for mult/div/madd/mfhi..., ra for jal/bal/bgezal,
 * UserLocal for `rdhwr $29`, GPRs of FPU moves; writes to $zero dropped;
 * `syscall` also writes the return and error (a3) registers. An encoding
 * the rules do not know is not decoded. */
const tc_insn_access *tc_insn_access_get(tc_insn_access_cache *c, uint64_t pc,
                                         const uint8_t *bytes, uint32_t size);

#endif
