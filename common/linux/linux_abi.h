/* SPDX-License-Identifier: GPL-2.0-or-later */
/* common/linux/linux_abi.c: guest struct layouts of the Linux syscall ABI.
 *
 * The kernel never copies a host struct into the guest: every struct is
 * encoded field by field at the guest arch's offsets and sizes, in target
 * byte order. Layouts that follow from the size of a C `long` alone
 * (timespec, iovec, rlimit, sigaction, sysinfo...) are computed from
 * arch->ptr_size; the irregular ones (struct stat) are tables here. */
#ifndef TC_LINUX_ABI_H
#define TC_LINUX_ABI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include "tracecorn/tracecorn.h"

/* Target-order integer encode/decode (size 1, 2, 4 or 8). */
void tc_abi_put(const tc_arch *arch, uint8_t *p, unsigned size, uint64_t v);
uint64_t tc_abi_get(const tc_arch *arch, const uint8_t *p, unsigned size);

typedef enum tc_stat_kind {
  TC_STAT_NATIVE, /* the arch's `struct stat` (stat, fstat, newfstatat) */
  TC_STAT_64      /* `struct stat64` (stat64, fstat64, fstatat64) */
} tc_stat_kind;

/* Largest encoded struct (statx: 256). */
#define TC_ABI_STAT_MAX 256

/* Encodes a host stat as the guest's struct. Returns the struct size,
 * -ENOSYS if the arch has no such struct, -EOVERFLOW if a value does not
 * fit (as the kernel does for 32-bit stat). */
int tc_abi_encode_stat(const tc_arch *arch, tc_stat_kind kind,
                       const struct stat *st, uint8_t *out);
/* The size of the guest's struct (-ENOSYS if the arch has none), and its
 * fields decoded into a host struct stat (for syscall decoding: the same
 * table serves both directions). */
int tc_abi_stat_size(const tc_arch *arch, tc_stat_kind kind);
int tc_abi_decode_stat(const tc_arch *arch, tc_stat_kind kind,
                       const uint8_t *in, struct stat *st);
/* struct statfs's values, host-independent (the kernel's kstatfs). */
typedef struct tc_statfs_vals {
  uint64_t type, bsize, blocks, bfree, bavail, files, ffree, namelen, frsize,
      flags;
  uint32_t fsid[2];
} tc_statfs_vals;
/* Encodes them as the guest's struct statfs (kind TC_STAT_NATIVE) or
 * struct statfs64 (TC_STAT_64: i386, arm, mips o32). Returns its size,
 * -ENOSYS if the arch has no such struct, -EOVERFLOW where a 32-bit
 * struct cannot hold a count (as the kernel's put_compat_statfs). */
int tc_abi_encode_statfs(const tc_arch *arch, tc_stat_kind kind,
                         const tc_statfs_vals *v, uint8_t *out);
/* struct statx (same on every arch). Returns 256. */
int tc_abi_encode_statx(const tc_arch *arch, const struct stat *st,
                        uint8_t *out);

/* struct timespec / timeval: two longs, or two 64-bit values for the
 * *_time64 syscalls of 32-bit arches. */
unsigned tc_abi_timespec_size(const tc_arch *arch, bool time64);
void tc_abi_encode_timespec(const tc_arch *arch, bool time64, int64_t sec,
                            int64_t frac, uint8_t *out);
void tc_abi_decode_timespec(const tc_arch *arch, bool time64, const uint8_t *in,
                            int64_t *sec, int64_t *frac);

/* struct linux_dirent64 / linux_dirent records. Return the record length,
 * 0 if it does not fit in max, -EOVERFLOW if ino does not fit. */
int tc_abi_encode_dirent64(const tc_arch *arch, uint64_t ino, int64_t off,
                           uint8_t type, const char *name, uint8_t *out,
                           size_t max);
int tc_abi_encode_dirent(const tc_arch *arch, uint64_t ino, int64_t off,
                         uint8_t type, const char *name, uint8_t *out,
                         size_t max);

#endif
