/* Per-arch Linux ABI values (see linux_xlat.h). Each table lists only what
 * differs from the host (x86-64, whose values the syscall layer uses). */
#include "emu/linux_xlat.h"

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

typedef struct open_table {
  tc_arch_id arch;
  const bit_pair *pairs;
  size_t n;
} open_table;

static const open_table open_tables[] = {
    {TC_ARCH_ARM, open_arm, sizeof open_arm / sizeof open_arm[0]},
    {TC_ARCH_ARM64, open_arm, sizeof open_arm / sizeof open_arm[0]},
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

int tc_xlat_errno_to_guest(const tc_arch *arch, int host_errno) {
  (void)arch;
  return host_errno;
}
