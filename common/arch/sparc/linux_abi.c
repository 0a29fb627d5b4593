/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The Linux ABI of sparc64 where it is not the host's: struct layouts, open
 * and mmap flags, errno and signal numbers (the BSD ones). */
#include <fcntl.h>

#include "common/linux/linux_abi_tables.h"

/* sparc64 struct stat (arch/sparc uapi asm/stat.h), 104 bytes: no
 * nanoseconds. */
static const tc_stat_layout stat_sparc64 = {
    104,
    {
        [SF_DEV] = {0, 4, OV_ERROR},
        [SF_INO] = {8, 8, OV_ERROR},
        [SF_MODE] = {16, 4, OV_TRUNC},
        [SF_NLINK] = {20, 2, OV_ERROR},
        [SF_UID] = {24, 4, OV_TRUNC},
        [SF_GID] = {28, 4, OV_TRUNC},
        [SF_RDEV] = {32, 4, OV_ERROR},
        [SF_SIZE] = {40, 8, OV_ERROR},
        [SF_BLKSIZE] = {72, 8, OV_TRUNC},
        [SF_BLOCKS] = {80, 8, OV_TRUNC},
        [SF_ATIME] = {48, 8, OV_TRUNC},
        [SF_ATIME_NS] = TC_STAT_NO_FIELD,
        [SF_MTIME] = {56, 8, OV_TRUNC},
        [SF_MTIME_NS] = TC_STAT_NO_FIELD,
        [SF_CTIME] = {64, 8, OV_TRUNC},
        [SF_CTIME_NS] = TC_STAT_NO_FIELD,
        [SF_INO64] = TC_STAT_NO_FIELD,
    }};

/* sparc64 struct stat64 (stat64, fstatat64), 144 bytes */
static const tc_stat_layout stat64_sparc64 = {
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

/* sparc (arch/sparc uapi asm/fcntl.h). */
static const tc_bit_pair open_sparc[] = {
    {0x8, O_APPEND},
    {0x200, O_CREAT},
    {0x400, O_TRUNC},
    {0x800, O_EXCL},
    {0x2000, O_DSYNC},
    {0x4000, O_NONBLOCK},
    {0x8000, O_NOCTTY},
    {0x10000, O_DIRECTORY},
    {0x20000, O_NOFOLLOW},
    {0x40000, 0100000 /* the host kernel's O_LARGEFILE */},
    {0x100000, O_DIRECT},
    {0x200000, O_NOATIME},
    {0x400000, O_CLOEXEC},
    {0x800000, 04000000 /* __O_SYNC */},
    {0x1000000, O_PATH},
    {0x2000000, 020000000 /* __O_TMPFILE */}};

/* sparc MAP_* (arch/sparc uapi asm/mman.h) -> host values; MAP_INHERIT
 * has no host counterpart (0: dropped; MAP_RENAME is MAP_ANONYMOUS). */
static const tc_bit_pair mmap_sparc[] = {
    {0x40, 0x4000}, {0x100, 0x2000}, {0x200, 0x100}, {0x80, 0}};

/* sparc errno values (arch/sparc uapi asm/errno.h) for host errnos
 * 35..133, as errno_mips. */
static const uint16_t errnos_sparc[][2] = {
    {35, 78},   {36, 63},   {37, 79},   {38, 90},   {39, 66},   {40, 62},
    {42, 75},   {43, 77},   {44, 94},   {45, 95},   {46, 96},   {47, 97},
    {48, 98},   {49, 99},   {50, 100},  {51, 101},  {52, 102},  {53, 103},
    {54, 104},  {55, 105},  {56, 106},  {57, 107},  {59, 109},  {60, 72},
    {61, 111},  {62, 73},   {63, 74},   {64, 80},   {65, 113},  {66, 71},
    {67, 82},   {68, 83},   {69, 84},   {70, 85},   {71, 86},   {72, 87},
    {73, 88},   {74, 76},   {75, 92},   {76, 115},  {77, 93},   {78, 89},
    {79, 114},  {80, 112},  {81, 124},  {82, 123},  {83, 110},  {84, 122},
    {85, 116},  {86, 91},   {87, 68},   {88, 38},   {89, 39},   {90, 40},
    {91, 41},   {92, 42},   {93, 43},   {94, 44},   {95, 45},   {96, 46},
    {97, 47},   {98, 48},   {99, 49},   {100, 50},  {101, 51},  {102, 52},
    {103, 53},  {104, 54},  {105, 55},  {106, 56},  {107, 57},  {108, 58},
    {109, 59},  {110, 60},  {111, 61},  {112, 64},  {113, 65},  {114, 37},
    {115, 36},  {116, 70},  {122, 69},  {123, 125}, {124, 126}, {125, 127},
    {126, 128}, {127, 129}, {128, 130}, {129, 131}, {130, 132}, {131, 133},
    {132, 134}, {133, 135}};

/* sparc signal numbers that differ from the host's (guest, host): the
 * BSD numbering (arch/sparc uapi asm/signal.h). */
static const uint8_t sig_sparc[][2] = {{7, 0 /* SIGEMT: none on the host */},
                                       {10, 7},
                                       {12, 31},
                                       {16, 23},
                                       {17, 19},
                                       {18, 20},
                                       {19, 18},
                                       {20, 17},
                                       {23, 29},
                                       {29, 30},
                                       {30, 10},
                                       {31, 12}};

extern const tc_linux_abi tc_linux_abi_sparc64;

const tc_linux_abi tc_linux_abi_sparc64 = {
    .stat = &stat_sparc64,
    .stat64 = &stat64_sparc64,
    .statfs = &tc_statfs_generic64,
    .statfs64 = NULL,
    .open_flags = open_sparc,
    .n_open_flags = TC_ABI_COUNT(open_sparc),
    .mmap_flags = mmap_sparc,
    .n_mmap_flags = TC_ABI_COUNT(mmap_sparc),
    .errnos = errnos_sparc,
    .n_errnos = TC_ABI_COUNT(errnos_sparc),
    .signals = sig_sparc,
    .n_signals = TC_ABI_COUNT(sig_sparc),
    .sigset_size = 8,
};
