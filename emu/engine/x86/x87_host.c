/* SPDX-License-Identifier: GPL-2.0-or-later */
/* x87 instructions that Unicorn 2.0.1 computes wrongly, run on the host's
 * own FPU instead (x86 and x86-64 hosts only).
 *
 * QEMU 5.0's helpers for fyl2x, fyl2xp1, f2xm1, fpatan, fptan, fsin,
 * fcos, fsincos, fprem and fprem1 work on host doubles (53 bits, not 64),
 * and for operands out of their domain neither pop nor return NaN: i386
 * libm printed other last digits than Linux in 4,790 of 34,000 results,
 * fmod(1e300, 7.1) gave 0 and log(-1) gave -1 (docs/arches.md). The host
 * FPU runs the very instruction on the guest's whole x87 state, loaded
 * with frstor and read back with fnsave, so results, the stack, the tags
 * and the condition codes are those of a real CPU. Exceptions are masked
 * while it runs (the flags it raises are kept in the status word). */
#include "emu/engine/emu.h"

#include <string.h>

#if defined(__x86_64__) || defined(__i386__)

/* fnsave/frstor's 108-byte image (32-bit protected-mode layout, also in
 * 64-bit mode); the registers in stack order, ST(0) first. */
typedef struct __attribute__((packed)) fsave_image {
  uint16_t fcw, pad0, fsw, pad1, ftw, pad2;
  uint32_t fip;
  uint16_t fcs, fop;
  uint32_t fdp;
  uint16_t fds, pad3;
  uint8_t st[8][10];
} fsave_image;
_Static_assert(sizeof(fsave_image) == 108, "fnsave's image is 108 bytes");

/* One instruction between loading the guest's state and saving it, the
 * host's own x87 state saved and restored around it. */
#define RUN_ON_HOST(insn, img)                                                 \
  do {                                                                         \
    fsave_image host;                                                          \
    __asm__ volatile("fnsave %0\n\t"                                           \
                     "frstor %1\n\t" insn "\n\t"                               \
                     "fnsave %1\n\t"                                           \
                     "frstor %0"                                               \
                     : "+m"(host), "+m"(*(img))                                \
                     :                                                         \
                     : "memory");                                              \
  } while (0)

bool tc_x87_host_can(const uint8_t *insn, size_t n) {
  if (n != 2 || insn[0] != 0xd9)
    return false;
  switch (insn[1]) {
  case 0xf0: /* f2xm1 */
  case 0xf1: /* fyl2x */
  case 0xf2: /* fptan */
  case 0xf3: /* fpatan */
  case 0xf5: /* fprem1 */
  case 0xf8: /* fprem */
  case 0xf9: /* fyl2xp1 */
  case 0xfb: /* fsincos */
  case 0xfe: /* fsin */
  case 0xff: /* fcos */
    return true;
  default:
    return false;
  }
}

int tc_x87_host_run(tc_emu *emu, const uint8_t *insn, size_t n) {
  if (!tc_x87_host_can(insn, n))
    return -1;
  fsave_image img;
  memset(&img, 0, sizeof img);
  uint16_t fcw = 0, fsw = 0, ftw = 0;
  uc_reg_read(emu->uc, UC_X86_REG_FPCW, &fcw);
  uc_reg_read(emu->uc, UC_X86_REG_FPSW, &fsw);
  uc_reg_read(emu->uc, UC_X86_REG_FPTAG, &ftw);
  img.fcw = (uint16_t)(fcw | 0x3f); /* every exception masked */
  img.fsw = fsw;
  img.ftw = ftw;
  for (int i = 0; i < 8; i++)
    uc_reg_read(emu->uc, UC_X86_REG_ST0 + i, img.st[i]);
  switch (insn[1]) {
  case 0xf0:
    RUN_ON_HOST("f2xm1", &img);
    break;
  case 0xf1:
    RUN_ON_HOST("fyl2x", &img);
    break;
  case 0xf2:
    RUN_ON_HOST("fptan", &img);
    break;
  case 0xf3:
    RUN_ON_HOST("fpatan", &img);
    break;
  case 0xf5:
    RUN_ON_HOST("fprem1", &img);
    break;
  case 0xf8:
    RUN_ON_HOST("fprem", &img);
    break;
  case 0xf9:
    RUN_ON_HOST("fyl2xp1", &img);
    break;
  case 0xfb:
    RUN_ON_HOST("fsincos", &img);
    break;
  case 0xfe:
    RUN_ON_HOST("fsin", &img);
    break;
  case 0xff:
    RUN_ON_HOST("fcos", &img);
    break;
  }
  /* The status word first: it sets TOP, which ST(i) are relative to. */
  uint16_t nfsw = img.fsw, nftw = img.ftw;
  uc_reg_write(emu->uc, UC_X86_REG_FPSW, &nfsw);
  for (int i = 0; i < 8; i++)
    uc_reg_write(emu->uc, UC_X86_REG_ST0 + i, img.st[i]);
  uc_reg_write(emu->uc, UC_X86_REG_FPTAG, &nftw);
  return 0;
}

#else

bool tc_x87_host_can(const uint8_t *insn, size_t n) {
  (void)insn, (void)n;
  return false;
}

int tc_x87_host_run(tc_emu *emu, const uint8_t *insn, size_t n) {
  (void)emu, (void)insn, (void)n;
  return -1;
}

#endif
