/* SPDX-License-Identifier: GPL-2.0-or-later */
/* x86-64's compat table: `int $0x80` in 64-bit code makes an i386 call,
 * as Linux does (CONFIG_IA32_EMULATION): i386 numbers, arguments the low
 * 32 bits of ebx, ecx, edx, esi, edi, ebp, the result in the full rax.
 * The calls below take no structure whose i386 layout differs from
 * x86-64's (numbers, paths, byte buffers, int arrays), so x86-64's own
 * handlers serve them unchanged; every other call answers -ENOSYS with a
 * notice naming it, never a wrong answer from a 64-bit layout. */
#include <string.h>

#include "emu/linux/linux_arch.h"
#include "emu/linux/x86/x86_linux.h"

static const char *const same_layout[] = {
    "exit",        "exit_group", "read",      "write",     "open",
    "openat",      "close",      "creat",     "link",      "linkat",
    "unlink",      "unlinkat",   "symlink",   "symlinkat", "readlink",
    "readlinkat",  "rename",     "renameat",  "mkdir",     "mkdirat",
    "rmdir",       "chdir",      "fchdir",    "getcwd",    "access",
    "faccessat",   "chmod",      "fchmod",    "fchmodat",  "umask",
    "dup",         "dup2",       "dup3",      "pipe",      "pipe2",
    "sync",        "fsync",      "fdatasync", "getpid",    "getppid",
    "gettid",      "getpgid",    "setpgid",   "getsid",    "setsid",
    "kill",        "tkill",      "tgkill",    "alarm",     "pause",
    "sched_yield", "brk",        "munmap",    "mprotect",
};

/* i386's 32-bit id calls are x86-64's plain ones (its 16-bit getuid and
 * co. are not: they answer -ENOSYS). */
static const struct {
  const char *i386, *x86_64;
} renamed[] = {{"getuid32", "getuid"},
               {"getgid32", "getgid"},
               {"geteuid32", "geteuid"},
               {"getegid32", "getegid"}};

static const char *x86_64_for_i386(const char *name) {
  for (size_t i = 0; i < sizeof same_layout / sizeof *same_layout; i++)
    if (strcmp(same_layout[i], name) == 0)
      return same_layout[i];
  for (size_t i = 0; i < sizeof renamed / sizeof *renamed; i++)
    if (strcmp(renamed[i].i386, name) == 0)
      return renamed[i].x86_64;
  return NULL;
}

const tc_linux_compat tc_linux_x86_64_ia32 = {
    .names_of = TC_ARCH_X86,
    .nr_reg = "rax",
    .arg_regs = {"rbx", "rcx", "rdx", "rsi", "rdi", "rbp"},
    .ret_reg = "rax",
    .native = x86_64_for_i386,
};
