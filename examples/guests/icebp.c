/* SPDX-License-Identifier: GPL-2.0-or-later */
/* icebp (0xf1): Linux (exc_debug_user -> send_sigtrap) sends SIGTRAP with
 * si_code TRAP_BRKPT, si_addr the instruction after it, trapno 1 (#DB),
 * error 0, and a handler that returns goes on after it. Prints what the
 * handler saw (issue 38). No reference run can say it: qemu-user calls
 * icebp invalid (SIGILL) and on a virtual machine a native run loops on
 * the re-injected trap, so tests/test_cli.c holds Linux's answer. */
#define _GNU_SOURCE
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <ucontext.h>

static volatile int hits, code;
static volatile uintptr_t addr;
static volatile long trapno = -1, err = -1;
extern const char after_icebp[];

static void on_trap(int sig, siginfo_t *si, void *ctx) {
  ucontext_t *uc = ctx;
  (void)sig;
  hits++;
  code = si->si_code;
  addr = (uintptr_t)si->si_addr;
  trapno = (long)uc->uc_mcontext.gregs[REG_TRAPNO];
  err = (long)uc->uc_mcontext.gregs[REG_ERR];
}

int main(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = on_trap;
  sa.sa_flags = SA_SIGINFO;
  sigaction(SIGTRAP, &sa, NULL);
  __asm__ volatile(".byte 0xf1\n.globl after_icebp\nafter_icebp:\n");
  printf("icebp: hits=%d si_code=%d si_addr=%s trapno=%ld err=%ld\n", hits,
         code, addr == (uintptr_t)after_icebp ? "after" : "elsewhere", trapno,
         err);
  /* int3 beside it: do_int3 sends SIGTRAP with SI_KERNEL and no address */
  __asm__ volatile("int3");
  printf("int3: hits=%d si_code=%d si_addr=%s trapno=%ld\n", hits, code,
         addr ? "set" : "0", trapno);
  return 0;
}
