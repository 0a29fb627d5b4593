/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What the files of emu/linux/x86/ share: the frame code (x86_signal.c)
 * and the thread pointers (x86_tls.c) that x86_ops.c binds into the
 * x86-64 and i386 ops tables. */
#ifndef TC_LINUX_X86_H
#define TC_LINUX_X86_H

#include <stdint.h>

#include "emu/linux/linux_arch.h"

/* x86_signal.c */
int tc_linux_x86_64_signal_frame(tc_emu *emu, tc_linux_state *st,
                                 const tc_sig_desc *d, uint64_t *frame_at);
int64_t tc_linux_x86_64_rt_sigreturn(tc_sys_call *c);
int tc_linux_i386_signal_frame(tc_emu *emu, tc_linux_state *st,
                               const tc_sig_desc *d, uint64_t *frame_at);
int64_t tc_linux_i386_sigreturn(tc_sys_call *c);
int64_t tc_linux_i386_rt_sigreturn(tc_sys_call *c);

/* x86_tls.c */
/* arch_prctl: ARCH_SET/GET_FS/GS on x86-64, -EINVAL on i386. */
int64_t tc_linux_x86_arch_prctl(tc_sys_call *c);
/* x86-64's int $0x80 table (x86_compat.c). */
extern const tc_linux_compat tc_linux_x86_64_ia32;
/* i386: maps the "[gdt]" page, points GDTR at it and loads flat 32-bit
 * CS/SS/DS/ES (0x23/0x28/0x2b/0x2b). Done at process start (the ops'
 * process_init), before the first instruction is recorded, or by the
 * first set_thread_area at the latest. 0 or -errno. */
int tc_linux_x86_setup_gdt(tc_emu *emu);
/* i386 CLONE_SETTLS: a GDT page for a new thread, the current one's with
 * the TLS entry of the user_desc at desc_addr set. 0 or -errno. */
int tc_linux_x86_thread_gdt(tc_emu *emu, uint64_t desc_addr, uint64_t *gdt);
int64_t tc_linux_i386_set_thread_area(tc_sys_call *c);
/* A cloned thread's first switch-in: its own GDT page loaded. */
int tc_linux_i386_thread_start(tc_emu *emu, const tc_thread *t);

#endif
