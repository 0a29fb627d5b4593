/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Instruction-set knowledge over capstone, for the layers that may not see
 * capstone (formats, analysis): the one-instruction disassembler of the
 * public header (tc_disasm), access lists (insn_access.h), and control
 * transfers (below). */
#ifndef TC_COMMON_ISA_H
#define TC_COMMON_ISA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tracecorn/tracecorn.h"

/* capstone's cs_arch and cs_mode for an arch, without the byte-order
 * flag; false if capstone has none. */
bool tc_isa_cs_mode(const tc_arch *arch, int *cs_arch, int *cs_mode);

/* Finds control transfers (jumps, calls, returns, traps, relative
 * branches), taken or not: drcov's block ends. */
typedef struct tc_isa_flow tc_isa_flow;
/* NULL if out of memory; a flow that cannot decode answers false. */
tc_isa_flow *tc_isa_flow_new(const tc_arch *arch);
void tc_isa_flow_free(tc_isa_flow *f);
bool tc_isa_is_cti(tc_isa_flow *f, uint64_t pc, const uint8_t *bytes,
                   size_t size, bool thumb);

#endif
