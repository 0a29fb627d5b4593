/* SPDX-License-Identifier: GPL-2.0-or-later */
/* mips o32 hard float: the FPU registers in a trace and in signal frames
 * (issue 37; tests/test_arches.c, test_mips_fpu). Static, built for mips
 * and mipsel.
 *   fpsig compute  0.1 + 0.2 in f0..f5 by round-to-nearest, then with
 *                  FCSR's rounding mode set to -inf (ctc1): the sums' bits
 *                  and FCSR (its inexact flags) are printed
 *   fpsig signal   f20:f21 = 0.1, f22:f23 = 0.2, FCSR rounding mode +inf,
 *                  then kill(getpid(), SIGUSR1) in the same asm block; the
 *                  handler clobbers every FPU register and FCSR; after
 *                  sigreturn the interrupted code's values must be back
 *   fpsig frame    the same, also printing FCSR after sigreturn and what
 *                  the handler found in its sigcontext (sc_fpregs[20],
 *                  sc_fpc_csr, sc_used_math): Linux saves and restores
 *                  FCSR (copy_fp_to/from_sigcontext), qemu-user 7.2
 *                  neither writes sc_fpc_csr nor restores FCSR, so these
 *                  lines are checked against the kernel's code, not qemu */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static volatile uint32_t seen_fcsr, seen_used_math, seen_csr;
static volatile uint64_t seen_fp20;

static void compute(void) {
  static const uint64_t a = 0x3fb999999999999aull; /* 0.1 */
  static const uint64_t b = 0x3fc999999999999aull; /* 0.2 */
  uint64_t near = 0, down = 0;
  uint32_t fcsr = 0;
  __asm__ volatile(".set push\n\t.set noreorder\n\t"
                   "ldc1 $f0, 0(%3)\n\t"
                   "ldc1 $f2, 0(%4)\n\t"
                   "add.d $f4, $f0, $f2\n\t"
                   "sdc1 $f4, 0(%0)\n\t"
                   "li $8, 3\n\t"
                   "ctc1 $8, $31\n\t"
                   "add.d $f4, $f0, $f2\n\t"
                   "sdc1 $f4, 0(%1)\n\t"
                   "cfc1 $8, $31\n\t"
                   "sw $8, 0(%2)\n\t"
                   "ctc1 $0, $31\n\t"
                   ".set pop"
                   :
                   : "r"(&near), "r"(&down), "r"(&fcsr), "r"(&a), "r"(&b)
                   : "$8", "$f0", "$f1", "$f2", "$f3", "$f4", "$f5", "memory");
  printf("0.1+0.2 nearest %016llx down %016llx fcsr %#x\n",
         (unsigned long long)near, (unsigned long long)down, fcsr);
}

static void handler(int sig, siginfo_t *si, void *ucv) {
  (void)sig, (void)si;
  const unsigned char *sc = (const unsigned char *)ucv + 24; /* uc_mcontext */
  uint64_t fp20;
  uint32_t csr, used, now;
  memcpy(&fp20, sc + 272 + 8 * 20, 8);
  memcpy(&csr, sc + 532, 4);
  memcpy(&used, sc + 540, 4);
  __asm__ volatile("cfc1 %0, $31" : "=r"(now));
  seen_fp20 = fp20, seen_csr = csr, seen_used_math = used, seen_fcsr = now;
  /* every FPU register and FCSR clobbered (rounding toward zero); FPXX
   * code names the odd halves through mthc1 */
  __asm__ volatile(
      ".set push\n\t.set noreorder\n\t"
      "li $8, 0x7ff4dead\n\t"
      "mtc1 $8, $f0\n\tmthc1 $8, $f0\n\tmtc1 $8, $f2\n\tmthc1 $8, $f2\n\t"
      "mtc1 $8, $f4\n\tmthc1 $8, $f4\n\tmtc1 $8, $f6\n\tmthc1 $8, $f6\n\t"
      "mtc1 $8, $f8\n\tmthc1 $8, $f8\n\tmtc1 $8, $f10\n\tmthc1 $8, $f10\n\t"
      "mtc1 $8, $f12\n\tmthc1 $8, $f12\n\tmtc1 $8, $f14\n\tmthc1 $8, $f14\n\t"
      "mtc1 $8, $f16\n\tmthc1 $8, $f16\n\tmtc1 $8, $f18\n\tmthc1 $8, $f18\n\t"
      "mtc1 $8, $f20\n\tmthc1 $8, $f20\n\tmtc1 $8, $f22\n\tmthc1 $8, $f22\n\t"
      "mtc1 $8, $f24\n\tmthc1 $8, $f24\n\tmtc1 $8, $f26\n\tmthc1 $8, $f26\n\t"
      "mtc1 $8, $f28\n\tmthc1 $8, $f28\n\tmtc1 $8, $f30\n\tmthc1 $8, $f30\n\t"
      "li $8, 1\n\t"
      "ctc1 $8, $31\n\t"
      ".set pop" ::
          : "$8", "$f0", "$f1", "$f2", "$f3", "$f4", "$f5", "$f6", "$f7", "$f8",
            "$f9", "$f10", "$f11", "$f12", "$f13", "$f14", "$f15", "$f16",
            "$f17", "$f18", "$f19", "$f20", "$f21", "$f22", "$f23", "$f24",
            "$f25", "$f26", "$f27", "$f28", "$f29", "$f30", "$f31");
}

static void signal_test(int frame) {
  static const uint64_t a = 0x3fb999999999999aull; /* 0.1 */
  static const uint64_t b = 0x3fc999999999999aull; /* 0.2 */
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = handler;
  sa.sa_flags = SA_SIGINFO;
  sigaction(SIGUSR1, &sa, NULL);
  uint64_t x = 0, y = 0;
  uint32_t fcsr = 0;
  long pid = getpid();
  /* kill(pid, SIGUSR1) by its o32 number (4037): the handler runs on the
   * way back from it, with the values above in the FPU. */
  __asm__ volatile(".set push\n\t.set noreorder\n\t"
                   "ldc1 $f20, 0(%3)\n\t"
                   "ldc1 $f22, 0(%4)\n\t"
                   "li $8, 2\n\t"
                   "ctc1 $8, $31\n\t"
                   "move $4, %5\n\t"
                   "li $5, %6\n\t"
                   "li $2, 4037\n\t"
                   "syscall\n\t"
                   "sdc1 $f20, 0(%0)\n\t"
                   "sdc1 $f22, 0(%1)\n\t"
                   "cfc1 $8, $31\n\t"
                   "sw $8, 0(%2)\n\t"
                   "ctc1 $0, $31\n\t"
                   ".set pop"
                   :
                   : "r"(&x), "r"(&y), "r"(&fcsr), "r"(&a), "r"(&b), "r"(pid),
                     "i"(SIGUSR1)
                   : "$2", "$3", "$4", "$5", "$6", "$7", "$8", "$f20", "$f21",
                     "$f22", "$f23", "memory");
  printf("handler saw fcsr %#x\n", (unsigned)seen_fcsr);
  printf("after sigreturn f20 %016llx f22 %016llx\n", (unsigned long long)x,
         (unsigned long long)y);
  if (frame)
    printf("after sigreturn fcsr %#x; frame sc_fpregs[20] %016llx "
           "sc_fpc_csr %#x sc_used_math %u\n",
           fcsr, (unsigned long long)seen_fp20, (unsigned)seen_csr,
           (unsigned)seen_used_math);
}

int main(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "compute";
  if (strcmp(mode, "compute") == 0)
    compute();
  else if (strcmp(mode, "signal") == 0 || strcmp(mode, "frame") == 0)
    signal_test(strcmp(mode, "frame") == 0);
  else {
    fprintf(stderr, "usage: fpsig compute|signal|frame\n");
    return 2;
  }
  return 0;
}
