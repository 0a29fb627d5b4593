/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Linux ABI values that differ between guest arches and the host: open
 * flags, and (for the arches that have their own) errno numbers. The
 * syscall layer works in host values; these convert at its edges. */
#ifndef TC_LINUX_XLAT_H
#define TC_LINUX_XLAT_H

#include <stdint.h>

#include "tracecorn/tracecorn.h"

/* Guest O_* bits -> host O_* bits, and back. Unknown bits pass through. */
int tc_xlat_open_to_host(const tc_arch *arch, int guest_flags);
int tc_xlat_open_to_guest(const tc_arch *arch, int host_flags);
/* A host errno as the guest numbers it. */
int tc_xlat_errno_to_guest(const tc_arch *arch, int host_errno);
/* A guest errno as the host numbers it (unknown numbers pass through). */
int tc_xlat_errno_to_host(const tc_arch *arch, int guest_errno);
/* Guest MAP_* flags -> the host (x86) values the mmap code uses. */
int tc_xlat_mmap_to_host(const tc_arch *arch, int guest_flags);
/* Signal numbers and sets: the guest's -> the host's and back (0 if the
 * signal has no host counterpart). Sets are 64-bit, signal n at bit n-1. */
int tc_xlat_signal_to_host(const tc_arch *arch, int guest_sig);
int tc_xlat_signal_to_guest(const tc_arch *arch, int host_sig);
uint64_t tc_xlat_sigset_to_host(const tc_arch *arch, uint64_t guest_set);
uint64_t tc_xlat_sigset_to_guest(const tc_arch *arch, uint64_t host_set);
/* sizeof(sigset_t) in the kernel ABI: 8, or 16 on mips (128 signals). */
unsigned tc_xlat_sigset_size(const tc_arch *arch);

#endif
