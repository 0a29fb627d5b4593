/* Per-arch Linux ABI values (see linux_xlat.h). Each table lists only what
 * differs from the host (x86-64, whose values the syscall layer uses). */
#include "common/linux/linux_xlat.h"

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

static int is_mips(const tc_arch *arch) {
  return arch->id == TC_ARCH_MIPS || arch->id == TC_ARCH_MIPSEL ||
         arch->id == TC_ARCH_MIPS64EL;
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

int tc_xlat_errno_to_guest(const tc_arch *arch, int host_errno) {
  if (is_mips(arch))
    for (size_t i = 0; i < sizeof errno_mips / sizeof errno_mips[0]; i++)
      if (errno_mips[i][0] == host_errno)
        return errno_mips[i][1];
  return host_errno;
}

int tc_xlat_errno_to_host(const tc_arch *arch, int guest_errno) {
  if (is_mips(arch)) {
    for (size_t i = 0; i < sizeof errno_mips / sizeof errno_mips[0]; i++)
      if (errno_mips[i][1] == guest_errno)
        return errno_mips[i][0];
    /* a host number that mips uses for something else has no host name */
    if (guest_errno >= 35)
      return -1;
  }
  return guest_errno;
}

/* mips MAP_* (arch/mips uapi asm/mman.h) -> host values. */
static const bit_pair mmap_mips[] = {{0x800, 0x20},      {0x400, 0x4000},
                                     {0x1000, 0x100},    {0x2000, 0x800},
                                     {0x4000, 0x1000},   {0x8000, 0x2000},
                                     {0x10000, 0x8000},  {0x20000, 0x10000},
                                     {0x40000, 0x20000}, {0x80000, 0x40000}};

int tc_xlat_mmap_to_host(const tc_arch *arch, int guest_flags) {
  if (!is_mips(arch))
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

int tc_xlat_signal_to_host(const tc_arch *arch, int guest_sig) {
  if (is_mips(arch))
    for (size_t i = 0; i < sizeof sig_mips / sizeof sig_mips[0]; i++)
      if (sig_mips[i][0] == guest_sig)
        return sig_mips[i][1];
  return guest_sig;
}

int tc_xlat_signal_to_guest(const tc_arch *arch, int host_sig) {
  if (is_mips(arch))
    for (size_t i = 0; i < sizeof sig_mips / sizeof sig_mips[0]; i++)
      if (sig_mips[i][1] == host_sig && host_sig)
        return sig_mips[i][0];
  return host_sig;
}

static uint64_t map_set(const tc_arch *arch, uint64_t set, int to_host) {
  if (!is_mips(arch))
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
  return is_mips(arch) ? 16 : 8;
}
