/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The Linux ABI of arm (EABI) where it is not the host's: struct layouts,
 * open flags. */
#include <fcntl.h>

#include "common/linux/linux_abi_tables.h"

/* arm struct stat (old-style, as i386), 64 bytes. */
static const tc_stat_layout stat_arm = {64,
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

/* arm EABI struct stat64, 104 bytes (64-bit fields 8-byte aligned;
 * offsets checked with the cross compiler's <asm/stat.h>). */
static const tc_stat_layout stat64_arm = {
    104,
    {
        [SF_DEV] = {0, 8, OV_TRUNC},
        [SF_INO] = {12, 4, OV_TRUNC}, /* __st_ino */
        [SF_MODE] = {16, 4, OV_TRUNC},
        [SF_NLINK] = {20, 4, OV_ERROR},
        [SF_UID] = {24, 4, OV_TRUNC},
        [SF_GID] = {28, 4, OV_TRUNC},
        [SF_RDEV] = {32, 8, OV_TRUNC},
        [SF_SIZE] = {48, 8, OV_TRUNC},
        [SF_BLKSIZE] = {56, 4, OV_TRUNC},
        [SF_BLOCKS] = {64, 8, OV_TRUNC},
        [SF_ATIME] = {72, 4, OV_TRUNC},
        [SF_ATIME_NS] = {76, 4, OV_TRUNC},
        [SF_MTIME] = {80, 4, OV_TRUNC},
        [SF_MTIME_NS] = {84, 4, OV_TRUNC},
        [SF_CTIME] = {88, 4, OV_TRUNC},
        [SF_CTIME_NS] = {92, 4, OV_TRUNC},
        [SF_INO64] = {96, 8, OV_TRUNC},
    }};

/* arm's uapi asm/fcntl.h */
static const tc_bit_pair open_arm[] = {
    {040000, O_DIRECTORY},
    {0100000, O_NOFOLLOW},
    {0200000, O_DIRECT},
    {0400000, 0100000 /* the host kernel's O_LARGEFILE */}};

extern const tc_linux_abi tc_linux_abi_arm;

const tc_linux_abi tc_linux_abi_arm = {
    .stat = &stat_arm,
    .stat64 = &stat64_arm,
    .statfs = &tc_statfs_generic32,
    .statfs64 = &tc_statfs64_generic32,
    /* sys_statfs64_wrapper also takes 88, the size of EABI userland's
     * unpacked struct (glibc passes it), for the kernel's packed 84 */
    .statfs64_size_also = 88,
    .open_flags = open_arm,
    .n_open_flags = TC_ABI_COUNT(open_arm),
    .sigset_size = 8,
    .ioctl_generic = 1,
};
