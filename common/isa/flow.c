/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Control transfers for drcov's block ends (common/isa/isa.h). */
#include <capstone/capstone.h>
#include <stdlib.h>

#include "common/arch.h"
#include "common/isa/isa.h"

/* The arch folders' capstone numbers (common/arch/<arch>/engine.inc),
 * checked against this capstone's header. */
#define TC_ENGINE_MODES(name, ua, uan, um, umn, ca, can, cm, cmn)              \
  _Static_assert(ca == (can) && cm == (cmn), "capstone's modes of " #name);
#include "arch/all_engine.inc"
#undef TC_ENGINE_MODES

bool tc_isa_cs_mode(const tc_arch *arch, int *cs_arch, int *cs_mode) {
  if (arch->cs_arch < 0)
    return false;
  *cs_arch = arch->cs_arch;
  *cs_mode = arch->cs_mode;
  return true;
}

struct tc_isa_flow {
  csh cs, cs_thumb;
  bool cs_ok, thumb_ok;
  cs_insn *ci;
};

tc_isa_flow *tc_isa_flow_new(const tc_arch *a) {
  tc_isa_flow *f = calloc(1, sizeof *f);
  if (!f)
    return NULL;
  int ca, cm;
  if (tc_isa_cs_mode(a, &ca, &cm) &&
      cs_open((cs_arch)ca, (cs_mode)cm, &f->cs) == CS_ERR_OK) {
    f->cs_ok = true;
    cs_option(f->cs, CS_OPT_DETAIL, CS_OPT_ON);
    f->ci = cs_malloc(f->cs);
  }
  if (a->traits.thumb_bit &&
      cs_open(CS_ARCH_ARM, CS_MODE_THUMB, &f->cs_thumb) == CS_ERR_OK) {
    f->thumb_ok = true;
    cs_option(f->cs_thumb, CS_OPT_DETAIL, CS_OPT_ON);
  }
  return f;
}

void tc_isa_flow_free(tc_isa_flow *f) {
  if (!f)
    return;
  if (f->ci)
    cs_free(f->ci, 1);
  if (f->cs_ok)
    cs_close(&f->cs);
  if (f->thumb_ok)
    cs_close(&f->cs_thumb);
  free(f);
}

bool tc_isa_is_cti(tc_isa_flow *f, uint64_t pc, const uint8_t *bytes,
                   size_t size, bool thumb) {
  if (!f->ci || (thumb ? !f->thumb_ok : !f->cs_ok))
    return false;
  csh h = thumb ? f->cs_thumb : f->cs;
  const uint8_t *code = bytes;
  size_t n = size;
  uint64_t addr = pc;
  if (!cs_disasm_iter(h, &code, &n, &addr, f->ci))
    return false;
  static const uint8_t groups[] = {CS_GRP_JUMP, CS_GRP_CALL,
                                   CS_GRP_RET,  CS_GRP_INT,
                                   CS_GRP_IRET, CS_GRP_BRANCH_RELATIVE};
  for (size_t i = 0; i < sizeof groups; i++)
    if (cs_insn_group(h, f->ci, groups[i]))
      return true;
  return false;
}
