/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The shapes of an arch's Linux ABI tables: what its folder
 * (common/arch/<arch>/linux_abi.c) fills in and the descriptor points to
 * (tc_arch.linux_abi), and the generic code of common/linux/ reads:
 * struct layouts (linux_abi.c) and the values that differ from the host's
 * (linux_xlat.c). An arch with the host's values leaves a table empty. */
#ifndef TC_LINUX_ABI_TABLES_H
#define TC_LINUX_ABI_TABLES_H

#include <stddef.h>
#include <stdint.h>

/* The fields of struct stat / stat64. */
enum {
  SF_DEV,
  SF_INO,
  SF_MODE,
  SF_NLINK,
  SF_UID,
  SF_GID,
  SF_RDEV,
  SF_SIZE,
  SF_BLKSIZE,
  SF_BLOCKS,
  SF_ATIME,
  SF_ATIME_NS,
  SF_MTIME,
  SF_MTIME_NS,
  SF_CTIME,
  SF_CTIME_NS,
  SF_INO64, /* stat64's trailing full st_ino */
  SF_COUNT
};

/* What to do when a value is wider than its field. */
enum {
  OV_TRUNC = 0, /* keep the low bits (times, the legacy __st_ino) */
  OV_ERROR,     /* the kernel's -EOVERFLOW (ino, size, nlink, dev) */
  OV_MUNGE      /* 16-bit uid/gid: the kernel's overflowuid 65534 */
};

typedef struct tc_stat_field {
  int16_t off; /* -1: not present */
  uint8_t size;
  uint8_t overflow;
} tc_stat_field;

typedef struct tc_stat_layout {
  uint16_t size;
  tc_stat_field f[SF_COUNT];
} tc_stat_layout;

#define TC_STAT_NO_FIELD                                                       \
  { -1, 0, 0 }

/* The fields of struct statfs / statfs64. */
enum {
  FS_TYPE,
  FS_BSIZE,
  FS_BLOCKS,
  FS_BFREE,
  FS_BAVAIL,
  FS_FILES,
  FS_FFREE,
  FS_FSID0,
  FS_FSID1,
  FS_NAMELEN,
  FS_FRSIZE,
  FS_FLAGS,
  FS_COUNT
};
typedef struct tc_statfs_layout {
  uint16_t size;
  uint8_t off[FS_COUNT], width[FS_COUNT];
} tc_statfs_layout;

/* asm-generic's struct statfs with 8-byte longs (x86-64, arm64, sparc64;
 * 120 bytes), with 4-byte ones (i386, arm; 64), and its statfs64 (84: i386
 * packs it naturally, arm EABI with ARCH_PACK_STATFS64). */
extern const tc_statfs_layout tc_statfs_generic64, tc_statfs_generic32,
    tc_statfs64_generic32;

/* A flag bit's value on the guest and on the host. */
typedef struct tc_bit_pair {
  int guest, host;
} tc_bit_pair;

typedef struct tc_linux_abi {
  /* struct stat and stat64 (NULL: the arch has none) */
  const tc_stat_layout *stat, *stat64;
  /* struct statfs and statfs64 (NULL: none) */
  const tc_statfs_layout *statfs, *statfs64;
  /* another size statfs64(path, size, buf) accepts (0: none) */
  uint16_t statfs64_size_also;
  /* open(2) and mmap(2) flag bits that differ from the host's */
  const tc_bit_pair *open_flags;
  size_t n_open_flags;
  const tc_bit_pair *mmap_flags;
  size_t n_mmap_flags;
  /* errno numbers (host, guest) that differ, for host errnos 35..133
   * (1..34 are the same everywhere); NULL: the host's numbering */
  const uint16_t (*errnos)[2];
  size_t n_errnos;
  /* signal numbers (guest, host) that differ; host 0: none on the host */
  const uint8_t (*signals)[2];
  size_t n_signals;
  /* bytes of the kernel's sigset_t (8; mips 16) */
  unsigned sigset_size;
  /* asm-generic's ioctl numbering (_IOC's direction bits at 30-31), its
   * terminal ioctls and struct termios (4 flag words, c_line, 19 control
   * characters): x86, arm, arm64; mips and sparc have their own */
  uint8_t ioctl_generic;
} tc_linux_abi;

#define TC_ABI_COUNT(a) (sizeof(a) / sizeof((a)[0]))

#endif
