/* Internal helpers over the arch tables (common/arch.c). */
#ifndef TC_COMMON_ARCH_H
#define TC_COMMON_ARCH_H

#include <stdbool.h>

#include "tracecorn/tracecorn.h"

static inline bool tc_arch_is_x86(const tc_arch *a) {
  return a->id == TC_ARCH_X86 || a->id == TC_ARCH_X86_64;
}

static inline bool tc_arch_is_mips(const tc_arch *a) {
  return a->id == TC_ARCH_MIPS || a->id == TC_ARCH_MIPSEL ||
         a->id == TC_ARCH_MIPS64EL;
}

#endif
