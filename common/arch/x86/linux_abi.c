/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The Linux ABI of x86-64 and i386 where it is not the host's (x86-64's):
 * struct layouts. Flags, errnos and signals are the host's. */
#include <fcntl.h>

#include "common/linux/linux_abi_tables.h"

/* x86_64 struct stat (arch/x86/include/uapi/asm/stat.h), 144 bytes. */
static const tc_stat_layout stat_x86_64 = {
    144,
    {
        [SF_DEV] = {0, 8, OV_ERROR},
        [SF_INO] = {8, 8, OV_ERROR},
        [SF_NLINK] = {16, 8, OV_ERROR},
        [SF_MODE] = {24, 4, OV_TRUNC},
        [SF_UID] = {28, 4, OV_TRUNC},
        [SF_GID] = {32, 4, OV_TRUNC},
        [SF_RDEV] = {40, 8, OV_ERROR},
        [SF_SIZE] = {48, 8, OV_ERROR},
        [SF_BLKSIZE] = {56, 8, OV_TRUNC},
        [SF_BLOCKS] = {64, 8, OV_TRUNC},
        [SF_ATIME] = {72, 8, OV_TRUNC},
        [SF_ATIME_NS] = {80, 8, OV_TRUNC},
        [SF_MTIME] = {88, 8, OV_TRUNC},
        [SF_MTIME_NS] = {96, 8, OV_TRUNC},
        [SF_CTIME] = {104, 8, OV_TRUNC},
        [SF_CTIME_NS] = {112, 8, OV_TRUNC},
        [SF_INO64] = TC_STAT_NO_FIELD,
    }};

/* i386 struct stat (the "new" stat of stat/fstat/lstat), 64 bytes. */
static const tc_stat_layout stat_x86 = {64,
                                        {
                                            [SF_DEV] = {0, 4, OV_ERROR},
                                            [SF_INO] = {4, 4, OV_ERROR},
                                            [SF_MODE] = {8, 2, OV_TRUNC},
                                            [SF_NLINK] = {10, 2, OV_ERROR},
                                            [SF_UID] = {12, 2, OV_MUNGE},
                                            [SF_GID] = {14, 2, OV_MUNGE},
                                            [SF_RDEV] = {16, 4, OV_ERROR},
                                            [SF_SIZE] = {20, 4, OV_ERROR},
                                            [SF_BLKSIZE] = {24, 4, OV_TRUNC},
                                            [SF_BLOCKS] = {28, 4, OV_TRUNC},
                                            [SF_ATIME] = {32, 4, OV_TRUNC},
                                            [SF_ATIME_NS] = {36, 4, OV_TRUNC},
                                            [SF_MTIME] = {40, 4, OV_TRUNC},
                                            [SF_MTIME_NS] = {44, 4, OV_TRUNC},
                                            [SF_CTIME] = {48, 4, OV_TRUNC},
                                            [SF_CTIME_NS] = {52, 4, OV_TRUNC},
                                            [SF_INO64] = TC_STAT_NO_FIELD,
                                        }};

/* i386 struct stat64, 96 bytes (64-bit fields only 4-byte aligned). */
static const tc_stat_layout stat64_x86 = {
    96,
    {
        [SF_DEV] = {0, 8, OV_TRUNC},
        [SF_INO] = {12, 4, OV_TRUNC}, /* __st_ino */
        [SF_MODE] = {16, 4, OV_TRUNC},
        [SF_NLINK] = {20, 4, OV_ERROR},
        [SF_UID] = {24, 4, OV_TRUNC},
        [SF_GID] = {28, 4, OV_TRUNC},
        [SF_RDEV] = {32, 8, OV_TRUNC},
        [SF_SIZE] = {44, 8, OV_TRUNC},
        [SF_BLKSIZE] = {52, 4, OV_TRUNC},
        [SF_BLOCKS] = {56, 8, OV_TRUNC},
        [SF_ATIME] = {64, 4, OV_TRUNC},
        [SF_ATIME_NS] = {68, 4, OV_TRUNC},
        [SF_MTIME] = {72, 4, OV_TRUNC},
        [SF_MTIME_NS] = {76, 4, OV_TRUNC},
        [SF_CTIME] = {80, 4, OV_TRUNC},
        [SF_CTIME_NS] = {84, 4, OV_TRUNC},
        [SF_INO64] = {88, 8, OV_TRUNC},
    }};

extern const tc_linux_abi tc_linux_abi_x86_64, tc_linux_abi_i386;

const tc_linux_abi tc_linux_abi_x86_64 = {
    .stat = &stat_x86_64,
    .stat64 = NULL,
    .statfs = &tc_statfs_generic64,
    .statfs64 = NULL,
    .sigset_size = 8,
    .ioctl_generic = 1,
};

const tc_linux_abi tc_linux_abi_i386 = {
    .stat = &stat_x86,
    .stat64 = &stat64_x86,
    .statfs = &tc_statfs_generic32,
    .statfs64 = &tc_statfs64_generic32,
    .sigset_size = 8,
    .ioctl_generic = 1,
};
