/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kernels: freestanding compute kernels for bench/ (no libc, one syscall
 * at the end), so the same binary runs under bare Unicorn and under
 * tracecorn. Usage: kernels KERNEL [N]
 *   fib N      recursive fib(N): calls, returns, stack traffic
 *   sha256 N   SHA-256 over N 64-byte blocks: ALU-heavy, few stores
 *   qsort N    quicksort of N 64-bit keys (LCG-filled): loads, stores,
 *              branches
 * Prints the result in hex. */
#include "sys.h"

GUEST_START

static unsigned long parse(const char *s) {
  unsigned long v = 0;
  while (*s >= '0' && *s <= '9')
    v = v * 10 + (unsigned long)(*s++ - '0');
  return v;
}

static int streq(const char *a, const char *b) {
  while (*a && *a == *b)
    a++, b++;
  return *a == *b;
}

__attribute__((noinline)) static unsigned long fib(unsigned long n) {
  return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

static const unsigned int K256[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1,
    0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3,
    0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786,
    0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147,
    0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
    0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
    0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a,
    0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208,
    0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

#define ROR(x, n) (((x) >> (n)) | ((x) << (32 - (n))))

static void sha256_block(unsigned int h[8], const unsigned char *p) {
  unsigned int w[64];
  for (int i = 0; i < 16; i++)
    w[i] = (unsigned int)p[4 * i] << 24 | (unsigned int)p[4 * i + 1] << 16 |
           (unsigned int)p[4 * i + 2] << 8 | p[4 * i + 3];
  for (int i = 16; i < 64; i++) {
    unsigned int s0 = ROR(w[i - 15], 7) ^ ROR(w[i - 15], 18) ^ (w[i - 15] >> 3);
    unsigned int s1 = ROR(w[i - 2], 17) ^ ROR(w[i - 2], 19) ^ (w[i - 2] >> 10);
    w[i] = w[i - 16] + s0 + w[i - 7] + s1;
  }
  unsigned int a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5],
               g = h[6], hh = h[7];
  for (int i = 0; i < 64; i++) {
    unsigned int t1 = hh + (ROR(e, 6) ^ ROR(e, 11) ^ ROR(e, 25)) +
                      ((e & f) ^ (~e & g)) + K256[i] + w[i];
    unsigned int t2 =
        (ROR(a, 2) ^ ROR(a, 13) ^ ROR(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
    hh = g, g = f, f = e, e = d + t1, d = c, c = b, b = a, a = t1 + t2;
  }
  h[0] += a, h[1] += b, h[2] += c, h[3] += d;
  h[4] += e, h[5] += f, h[6] += g, h[7] += hh;
}

static unsigned long sha256(unsigned long blocks) {
  unsigned int h[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                       0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
  unsigned char blk[64];
  for (int i = 0; i < 64; i++)
    blk[i] = (unsigned char)i;
  for (unsigned long n = 0; n < blocks; n++) {
    blk[0] = (unsigned char)n; /* each block differs */
    sha256_block(h, blk);
  }
  return (unsigned long)((unsigned long long)h[0] << 32 | h[7]);
}

#define QSORT_MAX 65536
static unsigned long keys[QSORT_MAX];

static void quicksort(unsigned long *a, long lo, long hi) {
  while (lo < hi) {
    unsigned long pivot = a[lo + (hi - lo) / 2];
    long i = lo, j = hi;
    while (i <= j) {
      while (a[i] < pivot)
        i++;
      while (a[j] > pivot)
        j--;
      if (i <= j) {
        unsigned long t = a[i];
        a[i++] = a[j];
        a[j--] = t;
      }
    }
    /* recurse into the smaller half: bounded stack */
    if (j - lo < hi - i) {
      quicksort(a, lo, j);
      lo = i;
    } else {
      quicksort(a, i, hi);
      hi = j;
    }
  }
}

static unsigned long qsort_kernel(unsigned long n) {
  if (n > QSORT_MAX)
    n = QSORT_MAX;
  unsigned long long x = 88172645463325252ull; /* 64-bit on every arch */
  for (unsigned long i = 0; i < n; i++) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    keys[i] = x >> 16;
  }
  if (n)
    quicksort(keys, 0, (long)n - 1);
  unsigned long h = 0;
  for (unsigned long i = 0; i < n; i++)
    h = h * 31 + keys[i];
  return h;
}

void cmain(long *sp) {
  long argc = sp[0];
  char **argv = (char **)(sp + 1);
  if (argc < 2) {
    g_puts("usage: kernels fib|sha256|qsort [N]\n");
    g_exit(2);
  }
  unsigned long n = argc > 2 ? parse(argv[2]) : 10;
  unsigned long r;
  if (streq(argv[1], "fib"))
    r = fib(n);
  else if (streq(argv[1], "sha256"))
    r = sha256(n);
  else if (streq(argv[1], "qsort"))
    r = qsort_kernel(n);
  else {
    g_puts("kernels: unknown kernel\n");
    g_exit(2);
  }
  g_puts(argv[1]);
  g_puts(": ");
  g_puthex(r);
  g_puts("\n");
  g_exit(0);
}
