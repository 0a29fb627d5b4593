/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Per-arch Linux ABI values (see linux_xlat.h). Each table lists only what
 * differs from the host (x86-64, whose values the syscall layer uses). */
#include "common/linux/linux_xlat.h"
#include "common/arch.h"

#include <fcntl.h>
#include <stddef.h>

typedef struct bit_pair {
  int guest, host;
} bit_pair;

/* arm and arm64 (their uapi asm/fcntl.h). */
static const bit_pair open_arm[] = {
    {040000, O_DIRECTORY},
    {0100000, O_NOFOLLOW},
    {0200000, O_DIRECT},
    {0400000, 0100000 /* the host kernel's O_LARGEFILE */}};

/* mips o32 and n64 (arch/mips uapi asm/fcntl.h); O_DIRECTORY, O_NOFOLLOW,
 * O_NOATIME, O_CLOEXEC and O_PATH have the host's values. */
static const bit_pair open_mips[] = {
    {0x8, O_APPEND},   {0x10, O_DSYNC},   {0x80, O_NONBLOCK},
    {0x100, O_CREAT},  {0x400, O_EXCL},   {0x800, O_NOCTTY},
    {0x1000, O_ASYNC}, {0x2000, 0100000}, {0x4000, 04000000 /* __O_SYNC */},
    {0x8000, O_DIRECT}};

/* sparc (arch/sparc uapi asm/fcntl.h). */
static const bit_pair open_sparc[] = {
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

typedef struct open_table {
  tc_arch_id arch;
  const bit_pair *pairs;
  size_t n;
} open_table;

static const open_table open_tables[] = {
    {TC_ARCH_ARM, open_arm, sizeof open_arm / sizeof open_arm[0]},
    {TC_ARCH_ARM64, open_arm, sizeof open_arm / sizeof open_arm[0]},
    {TC_ARCH_MIPS, open_mips, sizeof open_mips / sizeof open_mips[0]},
    {TC_ARCH_MIPSEL, open_mips, sizeof open_mips / sizeof open_mips[0]},
    {TC_ARCH_MIPS64EL, open_mips, sizeof open_mips / sizeof open_mips[0]},
    {TC_ARCH_SPARC, open_sparc, sizeof open_sparc / sizeof open_sparc[0]},
    {TC_ARCH_SPARC64, open_sparc, sizeof open_sparc / sizeof open_sparc[0]},
};

static const open_table *open_table_for(const tc_arch *arch) {
  for (size_t i = 0; i < sizeof open_tables / sizeof open_tables[0]; i++)
    if (open_tables[i].arch == arch->id)
      return &open_tables[i];
  return NULL;
}

/* Moves each listed bit from one side's value to the other's. */
static int remap(const open_table *t, int flags, int to_host) {
  if (!t)
    return flags;
  int moved = 0, clear = 0;
  for (size_t i = 0; i < t->n; i++) {
    int from = to_host ? t->pairs[i].guest : t->pairs[i].host;
    int to = to_host ? t->pairs[i].host : t->pairs[i].guest;
    clear |= from;
    if (flags & from)
      moved |= to;
  }
  return (flags & ~clear) | moved;
}

int tc_xlat_open_to_host(const tc_arch *arch, int guest_flags) {
  return remap(open_table_for(arch), guest_flags, 1);
}

int tc_xlat_open_to_guest(const tc_arch *arch, int host_flags) {
  return remap(open_table_for(arch), host_flags, 0);
}

/* mips errno values (arch/mips uapi asm/errno.h) for host errnos 35..133;
 * 1..34 are the same everywhere. Generated with the cross compiler. */
static const uint16_t errno_mips[][2] = {
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

/* sparc errno values (arch/sparc uapi asm/errno.h) for host errnos
 * 35..133, as errno_mips. */
static const uint16_t errno_sparc[][2] = {
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

/* The arch's own errno numbers (host, guest), or NULL: the host's. */
static const uint16_t (*errno_table(const tc_arch *arch, size_t *n))[2] {
  if (tc_arch_is_mips(arch)) {
    *n = sizeof errno_mips / sizeof errno_mips[0];
    return errno_mips;
  }
  if (tc_arch_is_sparc(arch)) {
    *n = sizeof errno_sparc / sizeof errno_sparc[0];
    return errno_sparc;
  }
  *n = 0;
  return NULL;
}

int tc_xlat_errno_to_guest(const tc_arch *arch, int host_errno) {
  size_t n;
  const uint16_t(*tab)[2] = errno_table(arch, &n);
  for (size_t i = 0; i < n; i++)
    if (tab[i][0] == host_errno)
      return tab[i][1];
  return host_errno;
}

int tc_xlat_errno_to_host(const tc_arch *arch, int guest_errno) {
  size_t n;
  const uint16_t(*tab)[2] = errno_table(arch, &n);
  if (!tab)
    return guest_errno;
  for (size_t i = 0; i < n; i++)
    if (tab[i][1] == guest_errno)
      return tab[i][0];
  /* a host number that the arch uses for something else has no host name */
  return guest_errno >= 35 ? -1 : guest_errno;
}

/* mips MAP_* (arch/mips uapi asm/mman.h) -> host values. */
static const bit_pair mmap_mips[] = {{0x800, 0x20},      {0x400, 0x4000},
                                     {0x1000, 0x100},    {0x2000, 0x800},
                                     {0x4000, 0x1000},   {0x8000, 0x2000},
                                     {0x10000, 0x8000},  {0x20000, 0x10000},
                                     {0x40000, 0x20000}, {0x80000, 0x40000}};

/* sparc MAP_* (arch/sparc uapi asm/mman.h) -> host values; MAP_INHERIT
 * has no host counterpart (0: dropped; MAP_RENAME is MAP_ANONYMOUS). */
static const bit_pair mmap_sparc[] = {
    {0x40, 0x4000}, {0x100, 0x2000}, {0x200, 0x100}, {0x80, 0}};

int tc_xlat_mmap_to_host(const tc_arch *arch, int guest_flags) {
  if (tc_arch_is_sparc(arch)) {
    open_table t = {arch->id, mmap_sparc,
                    sizeof mmap_sparc / sizeof mmap_sparc[0]};
    return remap(&t, guest_flags, 1);
  }
  if (!tc_arch_is_mips(arch))
    return guest_flags;
  open_table t = {arch->id, mmap_mips, sizeof mmap_mips / sizeof mmap_mips[0]};
  return remap(&t, guest_flags, 1);
}

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

static const uint8_t (*signal_table(const tc_arch *arch, size_t *n))[2] {
  if (tc_arch_is_mips(arch)) {
    *n = sizeof sig_mips / sizeof sig_mips[0];
    return sig_mips;
  }
  if (tc_arch_is_sparc(arch)) {
    *n = sizeof sig_sparc / sizeof sig_sparc[0];
    return sig_sparc;
  }
  *n = 0;
  return NULL;
}

int tc_xlat_signal_to_host(const tc_arch *arch, int guest_sig) {
  size_t n;
  const uint8_t(*tab)[2] = signal_table(arch, &n);
  for (size_t i = 0; i < n; i++)
    if (tab[i][0] == guest_sig)
      return tab[i][1];
  return guest_sig;
}

int tc_xlat_signal_to_guest(const tc_arch *arch, int host_sig) {
  size_t n;
  const uint8_t(*tab)[2] = signal_table(arch, &n);
  for (size_t i = 0; i < n; i++)
    if (tab[i][1] == host_sig && host_sig)
      return tab[i][0];
  return host_sig;
}

static uint64_t map_set(const tc_arch *arch, uint64_t set, int to_host) {
  size_t n;
  if (!signal_table(arch, &n)) /* the host's numbering */
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
  return tc_arch_is_mips(arch) ? 16 : 8;
}
