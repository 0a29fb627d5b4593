/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Guest struct layouts of the Linux syscall ABI (see linux_abi.h). */
#include "common/linux/linux_abi.h"
#include "common/arch.h"
#include "common/linux/linux_abi_tables.h"

#include <errno.h>
#include <string.h>
#include <sys/sysmacros.h>

void tc_abi_put(const tc_arch *arch, uint8_t *p, unsigned size, uint64_t v) {
  for (unsigned i = 0; i < size; i++) {
    unsigned shift = arch->big_endian ? (size - 1 - i) * 8 : i * 8;
    p[i] = (uint8_t)(v >> shift);
  }
}

uint64_t tc_abi_get(const tc_arch *arch, const uint8_t *p, unsigned size) {
  uint64_t v = 0;
  for (unsigned i = 0; i < size; i++) {
    unsigned shift = arch->big_endian ? (size - 1 - i) * 8 : i * 8;
    v |= (uint64_t)p[i] << shift;
  }
  return v;
}

/* ------------------------------------------------------------ struct stat */

static const tc_stat_layout *find_stat_layout(const tc_arch *arch,
                                              tc_stat_kind kind) {
  const tc_linux_abi *abi = arch->linux_abi;
  return !abi ? NULL : kind == TC_STAT_64 ? abi->stat64 : abi->stat;
}

int tc_abi_encode_stat(const tc_arch *arch, tc_stat_kind kind,
                       const struct stat *st, uint8_t *out) {
  const tc_stat_layout *l = find_stat_layout(arch, kind);
  if (!l)
    return -ENOSYS;
  uint64_t v[SF_COUNT] = {
      [SF_DEV] = (uint64_t)st->st_dev,
      [SF_INO] = (uint64_t)st->st_ino,
      [SF_MODE] = (uint64_t)st->st_mode,
      [SF_NLINK] = (uint64_t)st->st_nlink,
      [SF_UID] = (uint64_t)st->st_uid,
      [SF_GID] = (uint64_t)st->st_gid,
      [SF_RDEV] = (uint64_t)st->st_rdev,
      [SF_SIZE] = (uint64_t)st->st_size,
      [SF_BLKSIZE] = (uint64_t)st->st_blksize,
      [SF_BLOCKS] = (uint64_t)st->st_blocks,
      [SF_ATIME] = (uint64_t)st->st_atim.tv_sec,
      [SF_ATIME_NS] = (uint64_t)st->st_atim.tv_nsec,
      [SF_MTIME] = (uint64_t)st->st_mtim.tv_sec,
      [SF_MTIME_NS] = (uint64_t)st->st_mtim.tv_nsec,
      [SF_CTIME] = (uint64_t)st->st_ctim.tv_sec,
      [SF_CTIME_NS] = (uint64_t)st->st_ctim.tv_nsec,
      [SF_INO64] = (uint64_t)st->st_ino,
  };
  memset(out, 0, l->size);
  for (int i = 0; i < SF_COUNT; i++) {
    const tc_stat_field *f = &l->f[i];
    if (f->off < 0 || f->size == 0)
      continue;
    uint64_t x = v[i];
    if (f->size < 8 && (x >> (f->size * 8)) != 0) {
      if (f->overflow == OV_ERROR)
        return -EOVERFLOW;
      if (f->overflow == OV_MUNGE)
        x = 65534;
    }
    tc_abi_put(arch, out + f->off, f->size, x);
  }
  return l->size;
}

int tc_abi_stat_size(const tc_arch *arch, tc_stat_kind kind) {
  const tc_stat_layout *l = find_stat_layout(arch, kind);
  return l ? l->size : -ENOSYS;
}

int tc_abi_decode_stat(const tc_arch *arch, tc_stat_kind kind,
                       const uint8_t *in, struct stat *st) {
  const tc_stat_layout *l = find_stat_layout(arch, kind);
  if (!l)
    return -ENOSYS;
  uint64_t v[SF_COUNT] = {0};
  for (int i = 0; i < SF_COUNT; i++)
    if (l->f[i].off >= 0 && l->f[i].size)
      v[i] = tc_abi_get(arch, in + l->f[i].off, l->f[i].size);
  memset(st, 0, sizeof *st);
  st->st_dev = (dev_t)v[SF_DEV];
  st->st_ino = (ino_t)(l->f[SF_INO64].size ? v[SF_INO64] : v[SF_INO]);
  st->st_mode = (mode_t)v[SF_MODE];
  st->st_nlink = (nlink_t)v[SF_NLINK];
  st->st_uid = (uid_t)v[SF_UID];
  st->st_gid = (gid_t)v[SF_GID];
  st->st_rdev = (dev_t)v[SF_RDEV];
  st->st_size = (off_t)v[SF_SIZE];
  st->st_blksize = (blksize_t)v[SF_BLKSIZE];
  st->st_blocks = (blkcnt_t)v[SF_BLOCKS];
  st->st_atim.tv_sec = (time_t)v[SF_ATIME];
  st->st_atim.tv_nsec = (long)v[SF_ATIME_NS];
  st->st_mtim.tv_sec = (time_t)v[SF_MTIME];
  st->st_mtim.tv_nsec = (long)v[SF_MTIME_NS];
  st->st_ctim.tv_sec = (time_t)v[SF_CTIME];
  st->st_ctim.tv_nsec = (long)v[SF_CTIME_NS];
  return l->size;
}

/* struct statx (include/uapi/linux/stat.h). */
int tc_abi_encode_statx(const tc_arch *arch, const struct stat *st,
                        uint8_t *out) {
  memset(out, 0, 256);
  /* STATX_BASIC_STATS | STATX_MNT_ID, as Linux 5.8+ reports; the mount
   * id is fixed like st_dev (see tc_options.host_stat). */
  tc_abi_put(arch, out + 0, 4, 0x17ff);
  tc_abi_put(arch, out + 144, 8, 1);
  tc_abi_put(arch, out + 4, 4, (uint64_t)st->st_blksize);
  tc_abi_put(arch, out + 16, 4, (uint64_t)st->st_nlink);
  tc_abi_put(arch, out + 20, 4, st->st_uid);
  tc_abi_put(arch, out + 24, 4, st->st_gid);
  tc_abi_put(arch, out + 28, 2, st->st_mode);
  tc_abi_put(arch, out + 32, 8, (uint64_t)st->st_ino);
  tc_abi_put(arch, out + 40, 8, (uint64_t)st->st_size);
  tc_abi_put(arch, out + 48, 8, (uint64_t)st->st_blocks);
  /* statx_timestamp {s64 sec; u32 nsec; s32 pad}: atime 64, btime 80
   * (not reported: STATX_BTIME is not in the mask), ctime 96, mtime 112. */
  tc_abi_put(arch, out + 64, 8, (uint64_t)st->st_atim.tv_sec);
  tc_abi_put(arch, out + 72, 4, (uint64_t)st->st_atim.tv_nsec);
  tc_abi_put(arch, out + 96, 8, (uint64_t)st->st_ctim.tv_sec);
  tc_abi_put(arch, out + 104, 4, (uint64_t)st->st_ctim.tv_nsec);
  tc_abi_put(arch, out + 112, 8, (uint64_t)st->st_mtim.tv_sec);
  tc_abi_put(arch, out + 120, 4, (uint64_t)st->st_mtim.tv_nsec);
  tc_abi_put(arch, out + 128, 4, major(st->st_rdev));
  tc_abi_put(arch, out + 132, 4, minor(st->st_rdev));
  tc_abi_put(arch, out + 136, 4, major(st->st_dev));
  tc_abi_put(arch, out + 140, 4, minor(st->st_dev));
  return 256;
}

/* --------------------------------------------------------------- timespec */

unsigned tc_abi_timespec_size(const tc_arch *arch, bool time64) {
  return time64 ? 16u : 2u * arch->ptr_size;
}

void tc_abi_encode_timespec(const tc_arch *arch, bool time64, int64_t sec,
                            int64_t frac, uint8_t *out) {
  unsigned w = time64 ? 8u : arch->ptr_size;
  tc_abi_put(arch, out, w, (uint64_t)sec);
  tc_abi_put(arch, out + w, w, (uint64_t)frac);
}

static int64_t sign_extend(uint64_t v, unsigned size) {
  if (size >= 8)
    return (int64_t)v;
  unsigned shift = 64 - size * 8;
  return (int64_t)(v << shift) >> shift;
}

void tc_abi_decode_timespec(const tc_arch *arch, bool time64, const uint8_t *in,
                            int64_t *sec, int64_t *frac) {
  unsigned w = time64 ? 8u : arch->ptr_size;
  *sec = sign_extend(tc_abi_get(arch, in, w), w);
  /* A 32-bit time64 nanosecond field is 64 bits wide but the kernel only
   * looks at the low 32 bits in compat mode; keep it simple and exact. */
  *frac = sign_extend(tc_abi_get(arch, in + w, w), w);
}

/* ----------------------------------------------------------------- dirent */

int tc_abi_encode_dirent64(const tc_arch *arch, uint64_t ino, int64_t off,
                           uint8_t type, const char *name, uint8_t *out,
                           size_t max) {
  /* {u64 d_ino; s64 d_off; u16 d_reclen; u8 d_type; char d_name[]},
   * reclen aligned to 8 on every arch. */
  size_t namelen = strlen(name);
  size_t reclen = (19 + namelen + 1 + 7) & ~(size_t)7;
  if (reclen > max)
    return 0;
  memset(out, 0, reclen);
  tc_abi_put(arch, out, 8, ino);
  tc_abi_put(arch, out + 8, 8, (uint64_t)off);
  tc_abi_put(arch, out + 16, 2, reclen);
  out[18] = type;
  memcpy(out + 19, name, namelen);
  return (int)reclen;
}

int tc_abi_encode_dirent(const tc_arch *arch, uint64_t ino, int64_t off,
                         uint8_t type, const char *name, uint8_t *out,
                         size_t max) {
  /* {ulong d_ino; ulong d_off; u16 d_reclen; char d_name[]; ...; u8 d_type
   * as the record's last byte}, reclen aligned to sizeof(long). */
  unsigned l = arch->ptr_size;
  size_t namelen = strlen(name);
  size_t hdr = 2 * (size_t)l + 2;
  size_t reclen = (hdr + namelen + 2 + l - 1) & ~(size_t)(l - 1);
  /* d_off is an opaque cookie for the guest (we re-seek with the host's
   * own), so a 64-bit host cookie is truncated rather than refused. */
  if (l < 8 && (ino >> (l * 8)) != 0)
    return -EOVERFLOW;
  if (reclen > max)
    return 0;
  memset(out, 0, reclen);
  tc_abi_put(arch, out, l, ino);
  tc_abi_put(arch, out + l, l, (uint64_t)off);
  tc_abi_put(arch, out + 2 * l, 2, reclen);
  memcpy(out + hdr, name, namelen);
  out[reclen - 1] = type;
  return (int)reclen;
}

/* ---------------------------------------------------------------- statfs */

const tc_statfs_layout tc_statfs_generic64 = {
    120,
    {0, 8, 16, 24, 32, 40, 48, 56, 60, 64, 72, 80},
    {8, 8, 8, 8, 8, 8, 8, 4, 4, 8, 8, 8}};
const tc_statfs_layout tc_statfs_generic32 = {
    64,
    {0, 4, 8, 12, 16, 20, 24, 28, 32, 36, 40, 44},
    {4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4}};
const tc_statfs_layout tc_statfs64_generic32 = {
    84,
    {0, 4, 8, 16, 24, 32, 40, 48, 52, 56, 60, 64},
    {4, 4, 8, 8, 8, 8, 8, 4, 4, 4, 4, 4}};

int tc_abi_encode_statfs(const tc_arch *arch, tc_stat_kind kind,
                         const tc_statfs_vals *v, uint8_t *out) {
  const tc_linux_abi *abi = arch->linux_abi;
  const tc_statfs_layout *l = !abi                 ? NULL
                              : kind == TC_STAT_64 ? abi->statfs64
                                                   : abi->statfs;
  if (!l)
    return -ENOSYS;
  uint64_t x[FS_COUNT] = {
      [FS_TYPE] = v->type,     [FS_BSIZE] = v->bsize,
      [FS_BLOCKS] = v->blocks, [FS_BFREE] = v->bfree,
      [FS_BAVAIL] = v->bavail, [FS_FILES] = v->files,
      [FS_FFREE] = v->ffree,   [FS_FSID0] = v->fsid[0],
      [FS_FSID1] = v->fsid[1], [FS_NAMELEN] = v->namelen,
      [FS_FRSIZE] = v->frsize, [FS_FLAGS] = v->flags,
  };
  /* put_compat_statfs: counts that do not fit fail (files and ffree of
   * ~0, "unknown", pass as ~0 cut) */
  if (l->width[FS_BLOCKS] == 4 &&
      ((v->blocks | v->bfree | v->bavail | v->bsize | v->frsize) >> 32 ||
       (v->files != UINT64_MAX && v->files >> 32) ||
       (v->ffree != UINT64_MAX && v->ffree >> 32)))
    return -EOVERFLOW;
  memset(out, 0, l->size);
  for (int i = 0; i < FS_COUNT; i++)
    tc_abi_put(arch, out + l->off[i], l->width[i], x[i]);
  return l->size;
}
