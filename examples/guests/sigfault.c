/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Synchronous faults delivered to the program's own handlers: SIGSEGV
 * (unmapped and write-protected), SIGFPE, SIGILL, each caught; a handler
 * that repairs the fault (mprotect) and returns so the instruction runs
 * again; handlers that leave by siglongjmp. Then alarm(2) and setitimer
 * wake pause()/sigsuspend() through SIGALRM. Prints what each handler saw;
 * the output must equal a native run. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/time.h>
#include <ucontext.h>
#include <unistd.h>

static sigjmp_buf env;
static volatile int hits;
static volatile int last_code;
static volatile uintptr_t last_addr;
static volatile long trapno, errcode;
static char *page;

static void on_fault(int sig, siginfo_t *si, void *ctx) {
  ucontext_t *uc = ctx;
  hits++;
  last_code = si->si_code;
  last_addr = (uintptr_t)si->si_addr;
#if defined(__x86_64__) || defined(__i386__)
  trapno = (long)uc->uc_mcontext.gregs[REG_TRAPNO];
  errcode = (long)uc->uc_mcontext.gregs[REG_ERR];
#else
  (void)uc;
#endif
  siglongjmp(env, sig);
}

static void on_write_protect(int sig, siginfo_t *si, void *ctx) {
  (void)sig;
  (void)ctx;
  hits++;
  last_code = si->si_code;
  last_addr = (uintptr_t)si->si_addr;
  /* make the page writable: returning re-runs the faulting store */
  mprotect(page, 4096, PROT_READ | PROT_WRITE);
}

#if defined(__x86_64__) || defined(__i386__)
/* int3 is a trap: returning goes on after it (not at it, forever) */
static void on_trap(int sig, siginfo_t *si, void *ctx) {
  (void)sig;
  hits++;
  last_code = si->si_code;
  last_addr = (uintptr_t)si->si_addr;
  trapno = (long)((ucontext_t *)ctx)->uc_mcontext.gregs[REG_TRAPNO];
}
#endif

static volatile int alarms;
static void on_alarm(int sig) {
  (void)sig;
  alarms++;
}

static void catch (int sig, void (*fn)(int, siginfo_t *, void *)) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = fn;
  sa.sa_flags = SA_SIGINFO;
  sigaction(sig, &sa, NULL);
}

int main(void) {
  catch (SIGSEGV, on_fault);
  catch (SIGFPE, on_fault);
  catch (SIGILL, on_fault);

  volatile int *bad = (volatile int *)0x10;
  int sig = sigsetjmp(env, 1);
  if (sig == 0)
    *bad = 1; /* unmapped write */
  printf("segv write: sig=%d code=%d addr=%#lx trapno=%ld err=%ld\n", sig,
         last_code, (unsigned long)last_addr, trapno, errcode);

  sig = sigsetjmp(env, 1);
  if (sig == 0)
    (void)*(volatile int *)0x20; /* unmapped read */
  printf("segv read: sig=%d code=%d addr=%#lx trapno=%ld err=%ld\n", sig,
         last_code, (unsigned long)last_addr, trapno, errcode);

  volatile int zero = 0, num = 7;
  sig = sigsetjmp(env, 1);
#if defined(__mips__) && !defined(MIPS_DIV_TRAP)
  /* mips traps a division by zero (teq ..., 7), which Linux turns into
   * SIGFPE/FPE_INTDIV but qemu-user 7.2 into SIGTRAP: left out where qemu
   * is the reference (sigfault-div-* keeps it) */
  (void)num;
#else
  if (sig == 0)
    num = num / zero;
#endif
  printf("fpe: sig=%d code=%d trapno=%ld\n", sig, last_code, trapno);

  sig = sigsetjmp(env, 1);
  if (sig == 0) {
#if defined(__arm__) || defined(__aarch64__)
    __asm__ volatile("udf #0");
#elif defined(__mips__)
    __asm__ volatile(".word 0x00000028"); /* SPECIAL, reserved function */
#else
    __asm__ volatile("ud2");
#endif
  }
#if defined(__arm__) || defined(__aarch64__)
  /* Linux says ILL_ILLOPC here, qemu-user ILL_ILLOPN: the trace is checked
   * instead (tests/test_cli.c) */
  printf("ill: sig=%d trapno=%ld\n", sig, trapno);
#else
  printf("ill: sig=%d code=%d trapno=%ld\n", sig, last_code, trapno);
#endif

#if defined(__x86_64__) || defined(__i386__)
  catch (SIGTRAP, on_trap);
  int traps = hits;
  __asm__ volatile("int3");
  printf("int3: handled=%d code=%d addr=%#lx trapno=%ld\n", hits - traps,
         last_code, (unsigned long)last_addr, trapno);
#endif

  /* the mask is restored by siglongjmp: SIGSEGV is deliverable again */
  sigset_t cur;
  sigprocmask(SIG_BLOCK, NULL, &cur);
  printf("segv blocked after longjmp: %d\n", sigismember(&cur, SIGSEGV));

  page = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  catch (SIGSEGV, on_write_protect);
  int before = hits;
  page[100] = 42; /* faults once, the handler fixes it, the store re-runs */
  printf("write-protect: handled=%d code=%d at_page=%d value=%d\n",
         hits - before, last_code, last_addr == (uintptr_t)(page + 100),
         page[100]);

  signal(SIGALRM, on_alarm);
  alarm(2);
  pause();
  printf("alarm: alarms=%d remaining=%u\n", alarms, alarm(0));

  struct itimerval it = {{0, 0}, {0, 50000}};
  sigset_t block, old;
  sigemptyset(&block);
  sigaddset(&block, SIGALRM);
  sigprocmask(SIG_BLOCK, &block, &old);
  setitimer(ITIMER_REAL, &it, NULL);
  sigsuspend(&old);
  sigprocmask(SIG_SETMASK, &old, NULL);
  printf("setitimer: alarms=%d\n", alarms);

  /* a fault whose signal is blocked kills, as Linux forces it (arm and
   * arm64 divide by zero without a trap, mips as above: a store to an
   * unmapped page) */
  sigprocmask(SIG_BLOCK, NULL, &cur);
  fflush(stdout);
#if defined(__arm__) || defined(__aarch64__) ||                                \
    (defined(__mips__) && !defined(MIPS_DIV_TRAP))
  sigaddset(&cur, SIGSEGV);
  sigprocmask(SIG_SETMASK, &cur, NULL);
  *bad = 2;
#else
  sigaddset(&cur, SIGFPE);
  sigprocmask(SIG_SETMASK, &cur, NULL);
  num = num / zero;
#endif
  printf("not reached\n");
  return 0;
}
