/* SPDX-License-Identifier: GPL-2.0-or-later */
/* fault: prints a line, then dies the way the build flag says:
 * FAULT_SEGV (store to NULL), FAULT_ILL (ud2), FAULT_DIV (divide by 0),
 * FAULT_PRIV (a privileged instruction: hlt / in). */
#include "sys.h"

GUEST_START

volatile int zero = 0;

void cmain(long *sp) {
  (void)sp;
  g_puts("about to fault\n");
#if defined(FAULT_SEGV)
  *(volatile int *)(long)zero = 42;
#elif defined(FAULT_ILL) && (defined(__arm__) || defined(__aarch64__))
  __asm__ volatile("udf #0");
#elif defined(FAULT_ILL) && defined(__mips__)
  __asm__ volatile(".word 0x00000028"); /* SPECIAL, reserved function */
#elif defined(FAULT_ILL) && defined(__sparc__)
  __asm__ volatile("illtrap 0");
#elif defined(FAULT_ILL)
  __asm__ volatile("ud2");
#elif defined(FAULT_PRIV) && defined(__x86_64__)
  __asm__ volatile("hlt"); /* ring 0 only: SIGSEGV */
#elif defined(FAULT_PRIV) && defined(__i386__)
  __asm__ volatile("inb $0x80, %%al" ::: "eax"); /* no ioperm: SIGSEGV */
#elif defined(FAULT_DIV)
  volatile int r = 100 / zero;
  (void)r;
#endif
  g_puts("not reached\n");
  g_exit(0);
}
