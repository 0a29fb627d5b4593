/* SPDX-License-Identifier: GPL-2.0-or-later */
/* insns: exercises the instruction kinds a tracer gets wrong: rep string
 * ops, push/pop/call, wide SSE loads/stores, x87, cmov, xchg, div, cpuid,
 * page-crossing unaligned access. Prints a checksum that must equal the
 * native run's. */
#include "sys.h"

GUEST_START

static unsigned char src[256], dst[256];
static unsigned char page_buf[8192] __attribute__((aligned(4096)));

static unsigned long mix(unsigned long h, unsigned long v) {
  return (h ^ v) * (unsigned long)0x100000001b3ull;
}

void cmain(long *sp) {
  (void)sp;
  unsigned long h = (unsigned long)0xcbf29ce484222325ull;
  for (int i = 0; i < 256; i++)
    src[i] = (unsigned char)(i * 7 + 1);

  /* rep movsb / rep stosb */
  {
    void *d = dst;
    const void *s = src;
    unsigned long n = 100;
    __asm__ volatile("rep movsb" : "+D"(d), "+S"(s), "+c"(n) : : "memory");
    d = dst + 120;
    n = 17;
    __asm__ volatile("rep stosb" : "+D"(d), "+c"(n) : "a"(0x5a) : "memory");
    for (int i = 0; i < 256; i++)
      h = mix(h, dst[i]);
  }
  /* SSE: 16-byte unaligned load/store */
  {
    __asm__ volatile("movdqu (%0), %%xmm0\n\tpaddb %%xmm0, %%xmm0\n\t"
                     "movdqu %%xmm0, (%1)"
                     :
                     : "r"(src + 3), "r"(dst + 5)
                     : "xmm0", "memory");
    for (int i = 0; i < 32; i++)
      h = mix(h, dst[i]);
  }
  /* x87 */
  {
    volatile double a = 1.5, b = 2.25, c;
    __asm__ volatile("fldl %1\n\tfldl %2\n\tfmulp\n\tfstpl %0"
                     : "=m"(c)
                     : "m"(a), "m"(b));
    unsigned long bits;
    __builtin_memcpy(&bits, (const void *)&c, sizeof bits < sizeof c ? sizeof bits : sizeof c);
    h = mix(h, bits);
  }
  /* cmov, xchg, div */
  {
    unsigned long x = 12345, y = 678, q, r;
    __asm__ volatile("xchg %0, %1" : "+r"(x), "+r"(y));
    q = y / 7;
    r = y % 7;
    unsigned long m = q > r ? q : r;
    h = mix(h, x);
    h = mix(h, m);
  }
  /* cpuid: the baseline must say FPU + SSE2 */
  {
    unsigned int a = 1, b, c, d;
    __asm__ volatile("cpuid" : "+a"(a), "=b"(b), "=c"(c), "=d"(d));
    h = mix(h, (d & 1) | ((d >> 26) & 1) << 1);
  }
  /* unaligned 8-byte access crossing a page boundary */
  {
    volatile unsigned long *p = (volatile unsigned long *)(page_buf + 4093);
    *p = (unsigned long)0x1122334455667788ull;
    h = mix(h, *p);
  }
  g_puts("insns checksum: ");
  g_puthex(h);
  g_puts("\n");
  g_exit(0);
}
