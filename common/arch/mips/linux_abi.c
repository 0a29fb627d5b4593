/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The Linux ABI of mips o32 (big- and little-endian) and n64 where it is
 * not the host's: struct layouts, open and mmap flags, errno and signal
 * numbers, a 128-bit sigset_t. */
#include <fcntl.h>

#include "common/linux/linux_abi_tables.h"

/* mips o32 struct stat, 144 bytes (offsets from the cross compiler's
   <asm/stat.h>) */
static const tc_stat_layout stat_o32 = {144,
                                        {
                                            [SF_DEV] = {0, 4, OV_ERROR},
                                            [SF_INO] = {16, 4, OV_ERROR},
                                            [SF_MODE] = {20, 4, OV_TRUNC},
                                            [SF_NLINK] = {24, 4, OV_ERROR},
                                            [SF_UID] = {28, 4, OV_TRUNC},
                                            [SF_GID] = {32, 4, OV_TRUNC},
                                            [SF_RDEV] = {36, 4, OV_ERROR},
                                            [SF_SIZE] = {48, 4, OV_ERROR},
                                            [SF_BLKSIZE] = {80, 4, OV_TRUNC},
                                            [SF_BLOCKS] = {84, 4, OV_TRUNC},
                                            [SF_ATIME] = {56, 4, OV_TRUNC},
                                            [SF_ATIME_NS] = {60, 4, OV_TRUNC},
                                            [SF_MTIME] = {64, 4, OV_TRUNC},
                                            [SF_MTIME_NS] = {68, 4, OV_TRUNC},
                                            [SF_CTIME] = {72, 4, OV_TRUNC},
                                            [SF_CTIME_NS] = {76, 4, OV_TRUNC},
                                            [SF_INO64] = TC_STAT_NO_FIELD,
                                        }};

/* mips o32 struct stat64, 104 bytes */
static const tc_stat_layout stat64_o32 = {104,
                                          {
                                              [SF_DEV] = {0, 4, OV_TRUNC},
                                              [SF_INO] = {16, 8, OV_TRUNC},
                                              [SF_MODE] = {24, 4, OV_TRUNC},
                                              [SF_NLINK] = {28, 4, OV_ERROR},
                                              [SF_UID] = {32, 4, OV_TRUNC},
                                              [SF_GID] = {36, 4, OV_TRUNC},
                                              [SF_RDEV] = {40, 4, OV_TRUNC},
                                              [SF_SIZE] = {56, 8, OV_TRUNC},
                                              [SF_BLKSIZE] = {88, 4, OV_TRUNC},
                                              [SF_BLOCKS] = {96, 8, OV_TRUNC},
                                              [SF_ATIME] = {64, 4, OV_TRUNC},
                                              [SF_ATIME_NS] = {68, 4, OV_TRUNC},
                                              [SF_MTIME] = {72, 4, OV_TRUNC},
                                              [SF_MTIME_NS] = {76, 4, OV_TRUNC},
                                              [SF_CTIME] = {80, 4, OV_TRUNC},
                                              [SF_CTIME_NS] = {84, 4, OV_TRUNC},
                                              [SF_INO64] = TC_STAT_NO_FIELD,
                                          }};

/* mips n64 struct stat, 104 bytes */
static const tc_stat_layout stat_n64 = {104,
                                        {
                                            [SF_DEV] = {0, 4, OV_ERROR},
                                            [SF_INO] = {16, 8, OV_ERROR},
                                            [SF_MODE] = {24, 4, OV_TRUNC},
                                            [SF_NLINK] = {28, 4, OV_ERROR},
                                            [SF_UID] = {32, 4, OV_TRUNC},
                                            [SF_GID] = {36, 4, OV_TRUNC},
                                            [SF_RDEV] = {40, 4, OV_ERROR},
                                            [SF_SIZE] = {56, 8, OV_ERROR},
                                            [SF_BLKSIZE] = {88, 4, OV_TRUNC},
                                            [SF_BLOCKS] = {96, 8, OV_TRUNC},
                                            [SF_ATIME] = {64, 4, OV_TRUNC},
                                            [SF_ATIME_NS] = {68, 4, OV_TRUNC},
                                            [SF_MTIME] = {72, 4, OV_TRUNC},
                                            [SF_MTIME_NS] = {76, 4, OV_TRUNC},
                                            [SF_CTIME] = {80, 4, OV_TRUNC},
                                            [SF_CTIME_NS] = {84, 4, OV_TRUNC},
                                            [SF_INO64] = TC_STAT_NO_FIELD,
                                        }};

/* struct statfs in mips' own order (frsize third, bavail last) for o32
 * (68 bytes), n64 (128) and o32's statfs64 (96, a pad after frsize). */
static const tc_statfs_layout statfs_o32 = {
    68,
    {0, 4, 12, 16, 28, 20, 24, 32, 36, 40, 8, 44},
    {4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4}};
static const tc_statfs_layout statfs_n64 = {
    128,
    {0, 8, 24, 32, 56, 40, 48, 64, 68, 72, 16, 80},
    {8, 8, 8, 8, 8, 8, 8, 4, 4, 8, 8, 8}};
static const tc_statfs_layout statfs64_o32 = {
    96,
    {0, 4, 16, 24, 48, 32, 40, 56, 60, 64, 8, 68},
    {4, 4, 8, 8, 8, 8, 8, 4, 4, 4, 4, 4}};

/* mips o32 and n64 (arch/mips uapi asm/fcntl.h); O_DIRECTORY, O_NOFOLLOW,
 * O_NOATIME, O_CLOEXEC and O_PATH have the host's values. */
static const tc_bit_pair open_mips[] = {
    {0x8, O_APPEND},   {0x10, O_DSYNC},   {0x80, O_NONBLOCK},
    {0x100, O_CREAT},  {0x400, O_EXCL},   {0x800, O_NOCTTY},
    {0x1000, O_ASYNC}, {0x2000, 0100000}, {0x4000, 04000000 /* __O_SYNC */},
    {0x8000, O_DIRECT}};

/* mips MAP_* (arch/mips uapi asm/mman.h) -> host values. */
static const tc_bit_pair mmap_mips[] = {{0x800, 0x20},      {0x400, 0x4000},
                                        {0x1000, 0x100},    {0x2000, 0x800},
                                        {0x4000, 0x1000},   {0x8000, 0x2000},
                                        {0x10000, 0x8000},  {0x20000, 0x10000},
                                        {0x40000, 0x20000}, {0x80000, 0x40000}};

/* mips errno values (arch/mips uapi asm/errno.h) for host errnos 35..133;
 * 1..34 are the same everywhere. Generated with the cross compiler. */
static const uint16_t errnos_mips[][2] = {
    {35, 45},   {36, 78},   {37, 46},   {38, 89},   {39, 93},   {40, 90},
    {42, 35},   {43, 36},   {44, 37},   {45, 38},   {46, 39},   {47, 40},
    {48, 41},   {49, 42},   {50, 43},   {51, 44},   {52, 50},   {53, 51},
    {54, 52},   {55, 53},   {56, 54},   {57, 55},   {72, 74},   {74, 77},
    {75, 79},   {76, 80},   {77, 81},   {78, 82},   {79, 83},   {80, 84},
    {81, 85},   {82, 86},   {83, 87},   {84, 88},   {85, 91},   {86, 92},
    {87, 94},   {88, 95},   {89, 96},   {90, 97},   {91, 98},   {92, 99},
    {93, 120},  {94, 121},  {95, 122},  {96, 123},  {97, 124},  {98, 125},
    {99, 126},  {100, 127}, {101, 128}, {102, 129}, {103, 130}, {104, 131},
    {105, 132}, {106, 133}, {107, 134}, {108, 143}, {109, 144}, {110, 145},
    {111, 146}, {112, 147}, {113, 148}, {114, 149}, {115, 150}, {116, 151},
    {117, 135}, {118, 137}, {119, 138}, {120, 139}, {121, 140}, {122, 1133},
    {123, 159}, {124, 160}, {125, 158}, {126, 161}, {127, 162}, {128, 163},
    {129, 164}, {130, 165}, {131, 166}, {132, 167}, {133, 168}};

/* mips signal numbers that differ from the host's (guest, host). */
static const uint8_t sig_mips[][2] = {{10, 7},
                                      {12, 31},
                                      {16, 10},
                                      {17, 12},
                                      {18, 17},
                                      {19, 30},
                                      {20, 28},
                                      {21, 23},
                                      {22, 29},
                                      {23, 19},
                                      {24, 20},
                                      {25, 18},
                                      {26, 21},
                                      {27, 22},
                                      {28, 26},
                                      {29, 27},
                                      {30, 24},
                                      {31, 25},
                                      {7, 0 /* SIGEMT: none on the host */}};

extern const tc_linux_abi tc_linux_abi_mips_o32, tc_linux_abi_mips_n64;

const tc_linux_abi tc_linux_abi_mips_o32 = {
    .stat = &stat_o32,
    .stat64 = &stat64_o32,
    .statfs = &statfs_o32,
    .statfs64 = &statfs64_o32,
    .open_flags = open_mips,
    .n_open_flags = TC_ABI_COUNT(open_mips),
    .mmap_flags = mmap_mips,
    .n_mmap_flags = TC_ABI_COUNT(mmap_mips),
    .errnos = errnos_mips,
    .n_errnos = TC_ABI_COUNT(errnos_mips),
    .signals = sig_mips,
    .n_signals = TC_ABI_COUNT(sig_mips),
    .sigset_size = 16,
};

const tc_linux_abi tc_linux_abi_mips_n64 = {
    .stat = &stat_n64,
    .stat64 = NULL,
    .statfs = &statfs_n64,
    .statfs64 = NULL,
    .open_flags = open_mips,
    .n_open_flags = TC_ABI_COUNT(open_mips),
    .mmap_flags = mmap_mips,
    .n_mmap_flags = TC_ABI_COUNT(mmap_mips),
    .errnos = errnos_mips,
    .n_errnos = TC_ABI_COUNT(errnos_mips),
    .signals = sig_mips,
    .n_signals = TC_ABI_COUNT(sig_mips),
    .sigset_size = 16,
};
