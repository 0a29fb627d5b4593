/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Signals sent to the process itself (issue 15): handlers with and
 * without SA_SIGINFO, the mask inside a handler, SA_RESETHAND, FP state
 * kept across a handler, kill() and raise(), a handler on the
 * sigaltstack (SA_ONSTACK); the output equals Linux's. */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static volatile int got, code, same_pid, blocked_inside, depth;
static volatile double fp_in_handler;

static void plain(int s) {
  got = s;
  sigset_t cur;
  sigprocmask(SIG_BLOCK, NULL, &cur);
  blocked_inside = sigismember(&cur, s) + 2 * sigismember(&cur, SIGUSR2);
  fp_in_handler = 1.0 / 3.0; /* clobbers xmm registers */
}

static void info(int s, siginfo_t *si, void *uc) {
  (void)uc;
  got = s;
  code = si->si_code;
  same_pid = si->si_pid == getpid();
  if (depth++ == 0)
    raise(SIGUSR2); /* nested: not blocked, runs inside */
}

static char altstack[65536];
static volatile int on_alt, alt_flags, alt_eperm;

static void on_stack(int s) {
  (void)s;
  char here;
  on_alt = &here >= altstack && &here < altstack + sizeof altstack;
  stack_t cur, other = {.ss_sp = altstack, .ss_size = sizeof altstack};
  sigaltstack(NULL, &cur);
  alt_flags = cur.ss_flags;
  alt_eperm = sigaltstack(&other, NULL) == -1;
}

int main(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = plain;
  sigemptyset(&sa.sa_mask);
  sigaddset(&sa.sa_mask, SIGUSR2);
  sigaction(SIGALRM, &sa, NULL);
  volatile double x = 2.5;
  raise(SIGALRM);
  printf("alarm: got=%d blocked=%d x=%.2f fp=%.4f\n", got, blocked_inside,
         x * 2, fp_in_handler);

  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = info;
  sa.sa_flags = SA_SIGINFO;
  sigaction(SIGUSR1, &sa, NULL);
  sigaction(SIGUSR2, &sa, NULL);
  kill(getpid(), SIGUSR1);
  printf("usr1 via kill: last=%d code=%d same_pid=%d depth=%d\n", got, code,
         same_pid, depth);

  stack_t ss = {.ss_sp = altstack, .ss_size = sizeof altstack};
  sigaltstack(&ss, NULL);
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_stack;
  sa.sa_flags = SA_ONSTACK;
  sigaction(SIGWINCH, &sa, NULL);
  raise(SIGWINCH);
  stack_t after;
  sigaltstack(NULL, &after);
  printf("onstack: on_alt=%d flags_inside=%d eperm=%d flags_after=%d\n", on_alt,
         alt_flags, alt_eperm, after.ss_flags);

  memset(&sa, 0, sizeof sa);
  sa.sa_handler = plain;
  sa.sa_flags = SA_RESETHAND;
  sigaction(SIGHUP, &sa, NULL);
  raise(SIGHUP);
  struct sigaction now;
  sigaction(SIGHUP, NULL, &now);
  printf("resethand: got=%d now_default=%d\n", got, now.sa_handler == SIG_DFL);
  fflush(stdout);
  raise(SIGHUP); /* default action now: killed by SIGHUP (status 129) */
  printf("not reached\n");
  return 0;
}
