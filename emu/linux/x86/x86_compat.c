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

static const struct {
  const char *i386, *x86_64;
} same_layout[] = {
    {"exit", "exit"},
    {"exit_group", "exit_group"},
    {"read", "read"},
    {"write", "write"},
    {"open", "open"},
    {"openat", "openat"},
    {"close", "close"},
    {"creat", "creat"},
    {"link", "link"},
    {"linkat", "linkat"},
    {"unlink", "unlink"},
    {"unlinkat", "unlinkat"},
    {"symlink", "symlink"},
    {"symlinkat", "symlinkat"},
    {"readlink", "readlink"},
    {"readlinkat", "readlinkat"},
    {"rename", "rename"},
    {"renameat", "renameat"},
    {"mkdir", "mkdir"},
    {"mkdirat", "mkdirat"},
    {"rmdir", "rmdir"},
    {"chdir", "chdir"},
    {"fchdir", "fchdir"},
    {"getcwd", "getcwd"},
    {"access", "access"},
    {"faccessat", "faccessat"},
    {"chmod", "chmod"},
    {"fchmod", "fchmod"},
    {"fchmodat", "fchmodat"},
    {"umask", "umask"},
    {"dup", "dup"},
    {"dup2", "dup2"},
    {"dup3", "dup3"},
    {"pipe", "pipe"},
    {"pipe2", "pipe2"},
    {"sync", "sync"},
    {"fsync", "fsync"},
    {"fdatasync", "fdatasync"},
    {"getpid", "getpid"},
    {"getppid", "getppid"},
    {"gettid", "gettid"},
    {"getpgid", "getpgid"},
    {"setpgid", "setpgid"},
    {"getsid", "getsid"},
    {"setsid", "setsid"},
    {"getuid32", "getuid"},
    {"getgid32", "getgid"},
    {"geteuid32", "geteuid"},
    {"getegid32", "getegid"},
    {"kill", "kill"},
    {"tkill", "tkill"},
    {"tgkill", "tgkill"},
    {"alarm", "alarm"},
    {"pause", "pause"},
    {"sched_yield", "sched_yield"},
    {"brk", "brk"},
    {"munmap", "munmap"},
    {"mprotect", "mprotect"},
};

static const char *x86_64_for_i386(const char *name) {
  for (size_t i = 0; i < sizeof same_layout / sizeof *same_layout; i++)
    if (strcmp(same_layout[i].i386, name) == 0)
      return same_layout[i].x86_64;
  return NULL;
}

const tc_linux_compat tc_linux_x86_64_ia32 = {
    .names_of = TC_ARCH_X86,
    .nr_reg = "rax",
    .arg_regs = {"rbx", "rcx", "rdx", "rsi", "rdi", "rbp"},
    .ret_reg = "rax",
    .native = x86_64_for_i386,
};
