/* SPDX-License-Identifier: GPL-2.0-or-later */
/* tc_disasm: the public one-instruction disassembler (capstone, like the
 * decode cache next to it), for listings (text, dump, rvn's reader). */
#include <capstone/capstone.h>
#include <pthread.h>
#include <stdio.h>

#include "common/arch.h"
#include "common/isa/isa.h"
#include "tracecorn/tracecorn.h"

/* One cached handle per arch (dump disassembles millions of lines), used
 * under a lock: writers on writer threads (lib/pipe.h) disassemble at the
 * same time, and a capstone handle (its mode, its errors) is one
 * thread's. */
static pthread_mutex_t disasm_lock = PTHREAD_MUTEX_INITIALIZER;

static int disasm_locked(const tc_arch *arch, uint64_t pc, const uint8_t *bytes,
                         size_t n, char *out, size_t outmax) {
  static csh handles[16];
  static int opened[16];
  unsigned slot = (unsigned)arch->id & 15;
  if (!opened[slot]) {
    int ca = 0, mode = 0;
    bool known = tc_isa_cs_mode(arch, &ca, &mode);
    mode |= arch->big_endian ? CS_MODE_BIG_ENDIAN : 0;
    opened[slot] = known && cs_open((cs_arch)ca, (cs_mode)mode,
                                    &handles[slot]) == CS_ERR_OK
                       ? 1
                       : -1;
  }
  if (opened[slot] < 0) {
    snprintf(out, outmax, "(no disassembler)");
    return 0;
  }
  cs_insn *insn = NULL;
  int len = 0;
  if (arch->traits.thumb_bit) { /* odd pc: Thumb (the ARM convention) */
    cs_option(handles[slot], CS_OPT_MODE,
              (pc & 1) ? CS_MODE_THUMB : CS_MODE_ARM);
    pc &= ~1ull;
  }
  if (cs_disasm(handles[slot], bytes, n, pc, 1, &insn) == 1) {
    if (insn->op_str[0])
      snprintf(out, outmax, "%s %s", insn->mnemonic, insn->op_str);
    else
      snprintf(out, outmax, "%s", insn->mnemonic);
    len = insn->size;
    cs_free(insn, 1);
  } else {
    snprintf(out, outmax, "(bad)");
  }
  return len;
}

int tc_disasm(const tc_arch *arch, uint64_t pc, const uint8_t *bytes, size_t n,
              char *out, size_t outmax) {
  pthread_mutex_lock(&disasm_lock);
  int len = disasm_locked(arch, pc, bytes, n, out, outmax);
  pthread_mutex_unlock(&disasm_lock);
  return len;
}

int tc_insn_thumb(const tc_arch *arch, const tc_insn_event *e) {
  uint32_t tbit = arch->traits.thumb_bit;
  if (!tbit || !e->state_before)
    return 0;
  return (tc_state_get(arch, e->state_before, arch->flags_reg) & tbit) != 0;
}
