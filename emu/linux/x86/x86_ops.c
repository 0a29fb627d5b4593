/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The x86-64 and i386 ops tables of the emulated Linux, and the calls
 * only x86 has or makes differently (arch_prctl, set_thread_area, i386's
 * old_mmap). */
#include <errno.h>

#include "emu/linux/linux_arch.h"
#include "emu/linux/x86/x86_linux.h"

/* x86-64 has the number, but its programs use arch_prctl. */
static int64_t sys_x86_64_set_thread_area(tc_sys_call *c) {
  (void)c;
  return -ENOSYS;
}

/* i386 mmap is old_mmap: one pointer to {addr, len, prot, flags, fd, off}
 * (mmap2 passes them in registers). */
static int64_t sys_i386_old_mmap(tc_sys_call *c) {
  uint8_t raw[24];
  int r = tc_sys_read(c->emu, c->a[0], raw, sizeof raw);
  if (r < 0)
    return r;
  uint64_t v[6];
  for (int i = 0; i < 6; i++)
    v[i] = tc_abi_get(c->emu->arch, raw + 4 * i, 4);
  return tc_sys_do_mmap(c, v[0], v[1], (uint32_t)v[2], (uint32_t)v[3],
                        (int)(int32_t)v[4], v[5]);
}

static const tc_sys_entry x86_64_syscalls[] = {
    {"arch_prctl", tc_linux_x86_arch_prctl},
    {"set_thread_area", sys_x86_64_set_thread_area},
    {NULL, NULL},
};

static const tc_sys_entry i386_syscalls[] = {
    {"arch_prctl", tc_linux_x86_arch_prctl},
    {"set_thread_area", tc_linux_i386_set_thread_area},
    {"mmap", sys_i386_old_mmap},
    {NULL, NULL},
};

const tc_linux_arch_ops tc_linux_arch_x86_64 = {
    .uname_machine = "x86_64",
    .task_size = 0x800000000000ull,
    .ill_code = 2, /* ILL_ILLOPN (do_error_trap) */
    .syscall_resume_skip = 2,
    .tls_reg = "fs_base",
    .syscalls = x86_64_syscalls,
    .signal_frame = tc_linux_x86_64_signal_frame,
    .rt_sigreturn = tc_linux_x86_64_rt_sigreturn,
    .compat = &tc_linux_x86_64_ia32,
};

const tc_linux_arch_ops tc_linux_arch_i386 = {
    .uname_machine = "i686",
    .task_size = 0x100000000ull,
    .uid16 = true,
    .clone_backwards = true,
    .ill_code = 2,
    .syscalls = i386_syscalls,
    .process_init = tc_linux_x86_setup_gdt,
    .clone_settls = tc_linux_x86_thread_gdt,
    .thread_start = tc_linux_i386_thread_start, /* TLS: its own GDT */
    .signal_frame = tc_linux_i386_signal_frame,
    .sigreturn = tc_linux_i386_sigreturn,
    .rt_sigreturn = tc_linux_i386_rt_sigreturn,
};
