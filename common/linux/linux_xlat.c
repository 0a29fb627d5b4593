/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Per-arch Linux ABI values (see linux_xlat.h), from the tables of the
 * arch's folder (common/arch/<arch>/linux_abi.c, tc_linux_abi): each lists
 * only what differs from the host (x86-64, whose values the syscall layer
 * uses). */
#include "common/linux/linux_xlat.h"
#include "common/arch.h"
#include "common/linux/linux_abi_tables.h"

#include <stddef.h>

static const tc_linux_abi no_differences = {.sigset_size = 8};

static const tc_linux_abi *abi_of(const tc_arch *arch) {
  return arch->linux_abi ? arch->linux_abi : &no_differences;
}

/* Moves each listed bit from one side's value to the other's. */
static int remap(const tc_bit_pair *pairs, size_t n, int flags, int to_host) {
  int moved = 0, clear = 0;
  for (size_t i = 0; i < n; i++) {
    int from = to_host ? pairs[i].guest : pairs[i].host;
    int to = to_host ? pairs[i].host : pairs[i].guest;
    clear |= from;
    if (flags & from)
      moved |= to;
  }
  return (flags & ~clear) | moved;
}

int tc_xlat_open_to_host(const tc_arch *arch, int guest_flags) {
  const tc_linux_abi *abi = abi_of(arch);
  return remap(abi->open_flags, abi->n_open_flags, guest_flags, 1);
}

int tc_xlat_open_to_guest(const tc_arch *arch, int host_flags) {
  const tc_linux_abi *abi = abi_of(arch);
  return remap(abi->open_flags, abi->n_open_flags, host_flags, 0);
}

int tc_xlat_errno_to_guest(const tc_arch *arch, int host_errno) {
  const tc_linux_abi *abi = abi_of(arch);
  for (size_t i = 0; i < abi->n_errnos; i++)
    if (abi->errnos[i][0] == host_errno)
      return abi->errnos[i][1];
  return host_errno;
}

int tc_xlat_errno_to_host(const tc_arch *arch, int guest_errno) {
  const tc_linux_abi *abi = abi_of(arch);
  if (!abi->errnos)
    return guest_errno;
  for (size_t i = 0; i < abi->n_errnos; i++)
    if (abi->errnos[i][1] == guest_errno)
      return abi->errnos[i][0];
  /* a host number that the arch uses for something else has no host name */
  return guest_errno >= 35 ? -1 : guest_errno;
}

int tc_xlat_mmap_to_host(const tc_arch *arch, int guest_flags) {
  const tc_linux_abi *abi = abi_of(arch);
  return remap(abi->mmap_flags, abi->n_mmap_flags, guest_flags, 1);
}

int tc_xlat_signal_to_host(const tc_arch *arch, int guest_sig) {
  const tc_linux_abi *abi = abi_of(arch);
  for (size_t i = 0; i < abi->n_signals; i++)
    if (abi->signals[i][0] == guest_sig)
      return abi->signals[i][1];
  return guest_sig;
}

int tc_xlat_signal_to_guest(const tc_arch *arch, int host_sig) {
  const tc_linux_abi *abi = abi_of(arch);
  for (size_t i = 0; i < abi->n_signals; i++)
    if (abi->signals[i][1] == host_sig && host_sig)
      return abi->signals[i][0];
  return host_sig;
}

static uint64_t map_set(const tc_arch *arch, uint64_t set, int to_host) {
  if (!abi_of(arch)->signals) /* the host's numbering */
    return set;
  uint64_t out = 0;
  for (int s = 1; s <= 64; s++)
    if (set & (1ull << (s - 1))) {
      int t = to_host ? tc_xlat_signal_to_host(arch, s)
                      : tc_xlat_signal_to_guest(arch, s);
      if (t >= 1 && t <= 64)
        out |= 1ull << (t - 1);
    }
  return out;
}

uint64_t tc_xlat_sigset_to_host(const tc_arch *arch, uint64_t guest_set) {
  return map_set(arch, guest_set, 1);
}

uint64_t tc_xlat_sigset_to_guest(const tc_arch *arch, uint64_t host_set) {
  return map_set(arch, host_set, 0);
}

unsigned tc_xlat_sigset_size(const tc_arch *arch) {
  return abi_of(arch)->sigset_size;
}
