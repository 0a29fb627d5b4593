/* SPDX-License-Identifier: GPL-2.0-or-later */
/* interwork (arm only): ARM and Thumb code calling each other, with the
 * instruction kinds a tracer gets wrong on arm: conditional execution, IT
 * blocks, LDM/STM and PUSH/POP with writeback, exclusive monitors, VFP and
 * NEON arithmetic, multiply-accumulate and hardware divide. Prints a
 * checksum that must equal the reference run's. */
#include "sys.h"

GUEST_START

static unsigned mix(unsigned h, unsigned v) { return (h ^ v) * 16777619u; }

/* ARM state: conditional instructions and LDM/STM with writeback. */
__attribute__((target("arm"), noinline)) static unsigned arm_part(unsigned x) {
  unsigned buf[4] = {x, x + 1, x + 2, x + 3}, out[4];
  /* An LDM/STM register list is a set, loaded in ascending order: name
   * the registers so that a gets the first word, d the last. */
  register unsigned a __asm__("r4"), b __asm__("r5"), c __asm__("r6"),
      d __asm__("r8");
  unsigned *p = buf, *q = out;
  __asm__ volatile("ldmia %[p]!, {%[a], %[b], %[c], %[d]}\n\t"
                   "cmp %[a], #100\n\t"
                   "addgt %[a], %[a], #7\n\t"
                   "suble %[b], %[b], #3\n\t"
                   "movs %[c], %[c], lsl #1\n\t"
                   "stmia %[q]!, {%[a], %[b], %[c], %[d]}\n\t"
                   : [p] "+r"(p), [q] "+r"(q), [a] "=&r"(a), [b] "=&r"(b),
                     [c] "=&r"(c), [d] "=&r"(d)
                   :
                   : "cc", "memory");
  unsigned h = 2166136261u;
  for (int i = 0; i < 4; i++)
    h = mix(h, out[i]);
  return h + (unsigned)(p - buf) + (unsigned)(q - out);
}

/* Thumb state: an IT block and an exclusive load/store pair. */
__attribute__((target("thumb"), noinline)) static unsigned
thumb_part(unsigned x) {
  static unsigned word = 5;
  unsigned r, fail;
  __asm__ volatile("cmp %[x], #50\n\t"
                   "ite lt\n\t"
                   "addlt %[x], %[x], #9\n\t"
                   "subge %[x], %[x], #4\n\t"
                   : [x] "+r"(x)
                   :
                   : "cc");
  do {
    __asm__ volatile("ldrex %0, [%1]" : "=r"(r) : "r"(&word) : "memory");
    r += x;
    __asm__ volatile("strex %0, %2, [%1]"
                     : "=&r"(fail)
                     : "r"(&word), "r"(r)
                     : "memory");
  } while (fail);
  return word ^ arm_part(x); /* Thumb -> ARM call */
}

/* VFP / NEON (hard-float builds), multiply-accumulate, divide. */
__attribute__((noinline)) static unsigned fp_part(unsigned x) {
  volatile double a = x, b = 1.25;
  double c = a * b + 0.5;
  volatile float f = (float)c / 3.0f;
  unsigned long long m = (unsigned long long)x * 2654435761u + 12345;
  unsigned q = x / 7, rem = x % 7;
  return (unsigned)(c * 16) ^ (unsigned)(f * 64) ^ (unsigned)(m >> 7) ^ q ^
         (rem << 24);
}

void cmain(long *sp) {
  (void)sp;
  unsigned h = 2166136261u;
  for (unsigned i = 0; i < 40; i++) {
    h = mix(h, thumb_part(i * 13));
    h = mix(h, arm_part(i * 31));
    h = mix(h, fp_part(i * 1000 + 17));
  }
  g_puts("interwork checksum: ");
  g_puthex(h);
  g_puts("\n");
  g_exit(0);
}
