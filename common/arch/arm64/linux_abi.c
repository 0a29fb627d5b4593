/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The Linux ABI of arm64 where it is not the host's: struct stat, open
 * flags. */
#include <fcntl.h>

#include "common/linux/linux_abi_tables.h"

/* arm64: asm-generic struct stat, 128 bytes. */
static const tc_stat_layout stat_arm64 = {
    128,
    {
        [SF_DEV] = {0, 8, OV_ERROR},
        [SF_INO] = {8, 8, OV_ERROR},
        [SF_MODE] = {16, 4, OV_TRUNC},
        [SF_NLINK] = {20, 4, OV_ERROR},
        [SF_UID] = {24, 4, OV_TRUNC},
        [SF_GID] = {28, 4, OV_TRUNC},
        [SF_RDEV] = {32, 8, OV_ERROR},
        [SF_SIZE] = {48, 8, OV_ERROR},
        [SF_BLKSIZE] = {56, 4, OV_TRUNC},
        [SF_BLOCKS] = {64, 8, OV_TRUNC},
        [SF_ATIME] = {72, 8, OV_TRUNC},
        [SF_ATIME_NS] = {80, 8, OV_TRUNC},
        [SF_MTIME] = {88, 8, OV_TRUNC},
        [SF_MTIME_NS] = {96, 8, OV_TRUNC},
        [SF_CTIME] = {104, 8, OV_TRUNC},
        [SF_CTIME_NS] = {112, 8, OV_TRUNC},
        [SF_INO64] = TC_STAT_NO_FIELD,
    }};

/* arm64's uapi asm/fcntl.h (arm's values) */
static const tc_bit_pair open_arm64[] = {
    {040000, O_DIRECTORY},
    {0100000, O_NOFOLLOW},
    {0200000, O_DIRECT},
    {0400000, 0100000 /* the host kernel's O_LARGEFILE */}};

extern const tc_linux_abi tc_linux_abi_arm64;

const tc_linux_abi tc_linux_abi_arm64 = {
    .stat = &stat_arm64,
    .stat64 = NULL,
    .statfs = &tc_statfs_generic64,
    .statfs64 = NULL,
    .open_flags = open_arm64,
    .n_open_flags = TC_ABI_COUNT(open_arm64),
    .sigset_size = 8,
    .ioctl_generic = 1,
};
