/* SPDX-License-Identifier: GPL-2.0-or-later */
/* smc: self-modifying code (issue 39). A function "return K" of two or
 * three instructions is written, called, its first instruction rewritten
 * with a new K and called again, twice, in three places:
 *   stack  a buffer on the stack (the program is linked -z execstack)
 *   rwx    a .bss page made read-write-execute with mprotect
 *   wx     a .bss page switched between RX and RW around each rewrite (W^X,
 *          as JITs do)
 * Prints each call's result. Built for x86-64, armhf (the function in ARM
 * state, called from Thumb code) and mips/mipsel (o32). tests/test_record.c
 * checks that the trace holds the first instruction's new bytes each time
 * (the immediates below are what it looks for). */
#include "sys.h"

GUEST_START

#define PROT_R 1
#define PROT_W 2
#define PROT_X 4

#if defined(__x86_64__)
#define NR_mprotect 10
#elif defined(__arm__)
#define NR_mprotect 125
#elif defined(__mips__) && _MIPS_SIM != _ABI64
#define NR_mprotect 4125
#else
#error "smc: x86-64, arm and mips o32 only"
#endif

typedef unsigned int u32;

#if defined(__x86_64__)
/* mov $K, %eax; ret (K rewritten in place: a store into the middle of the
 * instruction) */
#define CODE_SIZE 6
static void write_code(unsigned char *p, u32 k) {
  p[0] = 0xb8;
  __builtin_memcpy(p + 1, &k, 4);
  p[5] = 0xc3;
}
static void patch(unsigned char *p, u32 k) { __builtin_memcpy(p + 1, &k, 4); }
#else
#if defined(__arm__)
/* ARM state: mov r0, #K; bx lr; nop */
static u32 first(u32 k) { return 0xe3a00000u | k; }
static const u32 rest[2] = {0xe12fff1eu, 0xe320f000u};
#else
/* addiu $v0, $zero, K; jr $ra; nop (the delay slot) */
static u32 first(u32 k) { return 0x24020000u | k; }
static const u32 rest[2] = {0x03e00008u, 0};
#endif
#define CODE_SIZE 12
static void write_code(unsigned char *p, u32 k) {
  volatile u32 *w = (volatile u32 *)p;
  w[0] = first(k);
  w[1] = rest[0];
  w[2] = rest[1];
}
static void patch(unsigned char *p, u32 k) { *(volatile u32 *)p = first(k); }
#endif

#if defined(__mips__)
/* mips gcc's __builtin___clear_cache calls this (libc's, absent here):
 * cacheflush(addr, nbytes, BCACHE) */
int _flush_cache(char *addr, int nbytes, int cache);
int _flush_cache(char *addr, int nbytes, int cache) {
  return (int)sys3(4147, (long)addr, nbytes, cache);
}
#endif

static void flush(unsigned char *p) {
  /* arm and mips need it natively (and under qemu); x86 none */
  __builtin___clear_cache((char *)p, (char *)p + CODE_SIZE);
}

static u32 call(unsigned char *p) {
  u32 (*f)(void) = (u32(*)(void))(void *)p;
  return f();
}

static void show(const char *label, u32 a, u32 b, u32 c) {
  g_puts(label);
  g_puts(":");
  u32 v[3] = {a, b, c};
  for (int i = 0; i < 3; i++) {
    g_puts(" ");
    g_puthex(v[i]);
  }
  g_puts("\n");
}

static long g_mprotect(void *p, unsigned long len, int prot) {
  return sys3(NR_mprotect, (long)p, (long)len, prot);
}

static unsigned char rwx[4096] __attribute__((aligned(4096)));
static unsigned char wx[4096] __attribute__((aligned(4096)));

/* noinline: its own frame holds the code */
__attribute__((noinline)) static void on_stack(void) {
  u32 buf[8] __attribute__((aligned(16)));
  unsigned char *p = (unsigned char *)buf;
  write_code(p, 0x31);
  flush(p);
  u32 a = call(p);
  patch(p, 0x32);
  flush(p);
  u32 b = call(p);
  patch(p, 0x33);
  flush(p);
  u32 c = call(p);
  show("stack", a, b, c);
}

static void in_rwx_page(void) {
  if (g_mprotect(rwx, sizeof rwx, PROT_R | PROT_W | PROT_X) != 0) {
    g_puts("mprotect rwx failed\n");
    g_exit(1);
  }
  write_code(rwx, 0x41);
  flush(rwx);
  u32 a = call(rwx);
  patch(rwx, 0x42);
  flush(rwx);
  u32 b = call(rwx);
  patch(rwx, 0x43);
  flush(rwx);
  u32 c = call(rwx);
  show("rwx", a, b, c);
}

static void wx_patch(u32 k) {
  if (g_mprotect(wx, sizeof wx, PROT_R | PROT_W) != 0) {
    g_puts("mprotect rw failed\n");
    g_exit(1);
  }
  patch(wx, k);
  flush(wx);
  if (g_mprotect(wx, sizeof wx, PROT_R | PROT_X) != 0) {
    g_puts("mprotect rx failed\n");
    g_exit(1);
  }
}

static void in_wx_page(void) {
  write_code(wx, 0x51);
  wx_patch(0x51);
  u32 a = call(wx);
  wx_patch(0x52);
  u32 b = call(wx);
  wx_patch(0x53);
  u32 c = call(wx);
  show("wx", a, b, c);
}

void cmain(long *sp) {
  (void)sp;
  on_stack();
  in_rwx_page();
  in_wx_page();
  g_exit(0);
}
