/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Control transfers for drcov's block ends (common/isa/isa.h). */
#include <capstone/capstone.h>
#include <stdlib.h>

#include "common/arch.h"
#include "common/isa/isa.h"

bool tc_isa_cs_mode(const tc_arch *arch, int *cs_arch, int *cs_mode) {
  int a, m;
  switch (arch->id) {
  case TC_ARCH_X86_64:
    a = CS_ARCH_X86, m = CS_MODE_64;
    break;
  case TC_ARCH_X86:
    a = CS_ARCH_X86, m = CS_MODE_32;
    break;
  case TC_ARCH_ARM:
    a = CS_ARCH_ARM, m = CS_MODE_ARM;
    break;
  case TC_ARCH_ARM64:
    a = CS_ARCH_ARM64, m = CS_MODE_ARM;
    break;
  case TC_ARCH_MIPS:
  case TC_ARCH_MIPSEL:
    a = CS_ARCH_MIPS, m = CS_MODE_MIPS32;
    break;
  case TC_ARCH_MIPS64EL:
    a = CS_ARCH_MIPS, m = CS_MODE_MIPS64;
    break;
  case TC_ARCH_SPARC:
    a = CS_ARCH_SPARC, m = 0;
    break;
  case TC_ARCH_SPARC64:
    a = CS_ARCH_SPARC, m = CS_MODE_V9;
    break;
  default:
    return false;
  }
  *cs_arch = a;
  *cs_mode = m;
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
  if (a->id == TC_ARCH_ARM &&
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
