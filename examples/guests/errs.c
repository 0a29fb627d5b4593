/* SPDX-License-Identifier: GPL-2.0-or-later */
/* errs: a syscall that fails and one that succeeds, as the raw ABI
 * reports them (sys3 returns -errno): the error convention of each arch
 * (negative result, mips' a3, sparc's carry flag), twice in a row both
 * ways, since a stale flag would turn the next success into an error. */
#include "sys.h"

GUEST_START

static void show(const char *what, long v) {
  g_puts(what);
  if (v < 0) {
    g_puts("-");
    v = -v;
  }
  g_putu((unsigned long)v);
  g_puts("\n");
}

void cmain(long *sp) {
  (void)sp;
  show("write(99): ", sys3(NR_write, 99, (long)"x", 1)); /* -EBADF */
  show("write(1): ", sys3(NR_write, 1, (long)"ok\n", 3));
  show("write(99): ", sys3(NR_write, 99, (long)"x", 1));
  show("write(99): ", sys3(NR_write, 99, (long)"x", 1));
  show("write(1): ", sys3(NR_write, 1, (long)"ok\n", 3));
  g_exit(0);
}
