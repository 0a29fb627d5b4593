/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Minimal freestanding Linux syscalls for the guest programs (x86-64, i386,
 * arm in ARM or Thumb state, arm64, mips o32 and n64, sparc64), so the small guests need
 * no libc and record in a few hundred instructions. */
#ifndef GUEST_SYS_H
#define GUEST_SYS_H

typedef unsigned long size_t;
typedef long ssize_t;

#if defined(__x86_64__)
#define NR_write 1
#define NR_exit_group 231
static inline long sys3(long n, long a, long b, long c) {
  long r;
  __asm__ volatile("syscall"
                   : "=a"(r)
                   : "a"(n), "D"(a), "S"(b), "d"(c)
                   : "rcx", "r11", "memory");
  return r;
}
/* _start: pass the initial stack pointer to cmain. */
#define GUEST_START                                                            \
  __asm__(".globl _start\n_start:\n xor %rbp,%rbp\n mov %rsp,%rdi\n"           \
          " and $-16,%rsp\n call cmain\n hlt\n");
#elif defined(__i386__)
#define NR_write 4
#define NR_exit_group 252
static inline long sys3(long n, long a, long b, long c) {
  long r;
  __asm__ volatile("int $0x80"
                   : "=a"(r)
                   : "a"(n), "b"(a), "c"(b), "d"(c)
                   : "memory");
  return r;
}
#define GUEST_START                                                            \
  __asm__(".globl _start\n_start:\n xor %ebp,%ebp\n mov %esp,%eax\n"           \
          " and $-16,%esp\n sub $12,%esp\n push %eax\n call cmain\n hlt\n");
#elif defined(__aarch64__)
#define NR_write 64
#define NR_exit_group 94
static inline long sys3(long n, long a, long b, long c) {
  register long x8 __asm__("x8") = n;
  register long x0 __asm__("x0") = a;
  register long x1 __asm__("x1") = b;
  register long x2 __asm__("x2") = c;
  __asm__ volatile("svc 0" : "+r"(x0) : "r"(x8), "r"(x1), "r"(x2) : "memory");
  return x0;
}
#define GUEST_START                                                            \
  __asm__(".globl _start\n.type _start, %function\n_start:\n"                  \
          " mov x29, #0\n mov x0, sp\n bl cmain\n brk #0\n");
#elif defined(__arm__)
#define NR_write 4
#define NR_exit_group 248
static inline long sys3(long n, long a, long b, long c) {
  register long r7 __asm__("r7") = n;
  register long r0 __asm__("r0") = a;
  register long r1 __asm__("r1") = b;
  register long r2 __asm__("r2") = c;
  __asm__ volatile("svc 0" : "+r"(r0) : "r"(r7), "r"(r1), "r"(r2) : "memory");
  return r0;
}
/* A Thumb build starts in Thumb state: %function + .thumb_func make the
 * ELF entry odd, as the kernel expects. */
#if defined(__thumb__)
#define GUEST_ISA ".thumb\n.thumb_func\n"
#else
#define GUEST_ISA ".arm\n"
#endif
#define GUEST_START                                                            \
  __asm__(GUEST_ISA                                                            \
          ".globl _start\n.type _start, %function\n_start:\n"                  \
          " mov r0, #0\n mov fp, r0\n mov r0, sp\n bl cmain\n udf #0\n");
#elif defined(__mips__)
#if _MIPS_SIM == _ABI64
#define NR_write 5001
#define NR_exit_group 5205
#define G_ADDIU "daddiu"
#else
#define NR_write 4004
#define NR_exit_group 4246
#define G_ADDIU "addiu"
#endif
/* v0 = number, a0..a2 = arguments; a3 != 0 flags an error (v0 = errno). */
static inline long sys3(long n, long a, long b, long c) {
  register long v0 __asm__("$2") = n;
  register long a0 __asm__("$4") = a;
  register long a1 __asm__("$5") = b;
  register long a2 __asm__("$6") = c;
  register long a3 __asm__("$7");
  __asm__ volatile("syscall"
                   : "+r"(v0), "=r"(a3)
                   : "r"(a0), "r"(a1), "r"(a2)
                   : "$1", "$3", "$8", "$9", "$10", "$11", "$12", "$13", "$14",
                     "$15", "$24", "$25", "hi", "lo", "memory");
  return a3 ? -v0 : v0;
}
/* The assembler fills jal's delay slot; 32 bytes of argument save area. */
#define GUEST_START                                                            \
  __asm__(".globl _start\n.globl __start\n_start:\n__start:\n"                 \
          " move $4, $sp\n and $sp, $sp, -16\n " G_ADDIU " $sp, $sp, -32\n"    \
          " jal cmain\n break\n");
#elif defined(__sparc__) && defined(__arch64__)
#define NR_write 4
#define NR_exit_group 188
/* ta 0x6d: g1 = number, o0..o2 = arguments; the carry flag (xcc.C) set
 * flags an error, o0 then holding the errno. */
static inline long sys3(long n, long a, long b, long c) {
  register long g1 __asm__("g1") = n;
  register long o0 __asm__("o0") = a;
  register long o1 __asm__("o1") = b;
  register long o2 __asm__("o2") = c;
  __asm__ volatile("ta 0x6d\n bcs,a,pn %%xcc, 1f\n sub %%g0, %%o0, %%o0\n1:"
                   : "+r"(o0)
                   : "r"(g1), "r"(o1), "r"(o2)
                   : "memory", "cc");
  return o0;
}
/* The stack pointer is biased by 2047; argc sits past the 16-register
 * save area (glibc's start.S reads it the same way). */
#define GUEST_START                                                            \
  __asm__(".globl _start\n_start:\n mov %g0, %fp\n sub %sp, 48, %sp\n"       \
          " add %sp, 2047+22*8, %o0\n call cmain\n nop\n illtrap 0\n");
#else
#error "unsupported guest arch"
#endif

static inline size_t g_strlen(const char *s) {
  size_t n = 0;
  while (s[n])
    n++;
  return n;
}
static inline void g_puts(const char *s) {
  sys3(NR_write, 1, (long)s, (long)g_strlen(s));
}
static inline void g_exit(int code) {
  sys3(NR_exit_group, code, 0, 0);
  for (;;) {
  }
}
/* Unsigned to decimal. */
static inline void g_putu(unsigned long v) {
  char buf[24];
  int i = 23;
  buf[i] = 0;
  do {
    buf[--i] = (char)('0' + v % 10);
    v /= 10;
  } while (v);
  g_puts(buf + i);
}
static inline void g_puthex(unsigned long v) {
  char buf[20];
  int i = 19;
  buf[i] = 0;
  do {
    buf[--i] = "0123456789abcdef"[v & 15];
    v >>= 4;
  } while (v);
  g_puts("0x");
  g_puts(buf + i);
}
#endif
