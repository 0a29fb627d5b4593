/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Emulated kernel: memory (brk, mmap, munmap, mprotect, mremap, madvise).
 *
 * MAP_* values are the x86 (asm-generic) ones; arches with other values
 * (mips, sparc) will need a translation step here. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/linux/linux_xlat.h"
#include "emu/linux/linux_arch.h"
#include "emu/linux/linux_sys.h"

#define G_MAP_SHARED 0x01
#define G_MAP_PRIVATE 0x02
#define G_MAP_SHARED_VALIDATE 0x03
#define G_MAP_TYPE 0x0f
#define G_MAP_FIXED 0x10
#define G_MAP_ANONYMOUS 0x20
#define G_MAP_FIXED_NOREPLACE 0x100000

#define G_PROT_VALID 0x7u
#define G_PROT_IGNORED (0x8u | 0x01000000u | 0x02000000u) /* SEM, GROWS* */

#define MMAP_MIN_ADDR 0x10000u

static uint64_t page_size(tc_emu *emu) { return emu->arch->page_size; }

/* Rounds len up to pages; 0 on overflow. */
static uint64_t page_len(tc_emu *emu, uint64_t len) {
  uint64_t ps = page_size(emu);
  if (len > UINT64_MAX - (ps - 1))
    return 0;
  return (len + ps - 1) & ~(ps - 1);
}

/* TASK_SIZE: the end of user space. */
static uint64_t addr_limit(tc_emu *emu) {
  uint64_t limit = tc_linux_arch_of(emu->arch)->task_size;
  if (limit)
    return limit;
  return emu->arch->ptr_size == 4 ? 0x100000000ull : 0x800000000000ull;
}

bool tc_sys_overlaps_any(tc_emu *emu, uint64_t start, uint64_t end) {
  for (size_t i = 0; i < emu->nregions; i++)
    if (emu->regions[i].start < end && emu->regions[i].end > start)
      return true;
  return false;
}

static bool is_anon_region(const tc_region *r) { return r->name[0] != '/'; }

/* Copies guest memory [src, src+len) to dst (fresh zero pages) through
 * tc_emu_write; all-zero chunks are skipped since dst already reads 0. */
static int copy_guest(tc_emu *emu, uint64_t dst, uint64_t src, uint64_t len) {
  uint8_t *buf = malloc(TC_SYS_CHUNK);
  if (!buf)
    return -ENOMEM;
  int r = 0;
  for (uint64_t done = 0; done < len && r == 0;) {
    size_t n = len - done < TC_SYS_CHUNK ? (size_t)(len - done) : TC_SYS_CHUNK;
    r = tc_emu_read(emu, src + done, buf, n);
    if (r == 0) {
      bool zero = true;
      for (size_t i = 0; i < n && zero; i++)
        zero = buf[i] == 0;
      if (!zero)
        r = tc_emu_write(emu, dst + done, buf, n);
    }
    done += n;
  }
  free(buf);
  return r;
}

/* ------------------------------------------------------------------- brk */

static int64_t sys_brk(tc_sys_call *c) {
  tc_emu *emu = c->emu;
  uint64_t want = c->a[0], cur = emu->brk_cur;
  if (emu->brk_start == 0 || want < emu->brk_start)
    return (int64_t)cur;
  uint64_t old_end = page_len(emu, cur), new_end = page_len(emu, want);
  if (new_end == 0 || old_end == 0 || new_end > addr_limit(emu))
    return (int64_t)cur;
  if (new_end > old_end) {
    if (tc_sys_overlaps_any(emu, old_end, new_end))
      return (int64_t)cur; /* would run into another mapping */
    if (tc_emu_map(emu, old_end, new_end - old_end,
                   TC_PROT_READ | TC_PROT_WRITE, "[heap]", 0) < 0)
      return (int64_t)cur;
  } else if (new_end < old_end) {
    if (tc_emu_unmap(emu, new_end, old_end - new_end) < 0)
      return (int64_t)cur;
  }
  emu->brk_cur = want;
  return (int64_t)want;
}

/* ------------------------------------------------------------------ mmap */

int64_t tc_sys_do_mmap(tc_sys_call *c, uint64_t addr, uint64_t len,
                       uint32_t prot, uint32_t guest_flags, int fd,
                       uint64_t off) {
  tc_emu *emu = c->emu;
  uint32_t flags = (uint32_t)tc_xlat_mmap_to_host(emu->arch, (int)guest_flags);
  uint64_t ps = page_size(emu);
  if (prot & ~(G_PROT_VALID | G_PROT_IGNORED))
    return -EINVAL;
  prot &= G_PROT_VALID;
  uint32_t type = flags & G_MAP_TYPE;
  if (type != G_MAP_SHARED && type != G_MAP_PRIVATE &&
      type != G_MAP_SHARED_VALIDATE)
    return -EINVAL;
  if (len == 0 || (off & (ps - 1)))
    return -EINVAL;
  uint64_t rlen = page_len(emu, len);
  if (rlen == 0 || rlen > addr_limit(emu))
    return -ENOMEM;

  tc_fd *f = NULL;
  char name[128] = "";
  if (!(flags & G_MAP_ANONYMOUS)) {
    f = tc_sys_fd(emu, fd);
    if (!f)
      return -EBADF;
    if (f->kind != TC_FD_HOST || !f->owned)
      return -ENODEV; /* directories, pipes, stdio cannot be mapped */
    int acc = f->flags & O_ACCMODE;
    if (acc == O_WRONLY)
      return -EACCES;
    if (type != G_MAP_PRIVATE && (prot & TC_PROT_WRITE) && acc != O_RDWR)
      return -EACCES;
    if (off > UINT64_MAX - rlen)
      return -EOVERFLOW;
    char gpath[TC_PATH_MAX];
    if (tc_guestfs_fd_path(emu, fd, gpath, sizeof gpath) == 0) {
      size_t n = strlen(gpath);
      /* keep the tail of very long paths: the file name matters most */
      const char *p = n >= sizeof name ? gpath + n - (sizeof name - 1) : gpath;
      memcpy(name, p, strlen(p) + 1);
    }
  }

  uint64_t target;
  if (flags & (G_MAP_FIXED | G_MAP_FIXED_NOREPLACE)) {
    if (addr & (ps - 1))
      return -EINVAL;
    if (addr > addr_limit(emu) - rlen)
      return -ENOMEM;
    if (!(flags & G_MAP_FIXED) && tc_sys_overlaps_any(emu, addr, addr + rlen))
      return -EEXIST; /* MAP_FIXED_NOREPLACE alone */
    if ((flags & G_MAP_FIXED) && tc_sys_overlaps_any(emu, addr, addr + rlen)) {
      int r = tc_emu_unmap(emu, addr, rlen);
      if (r < 0)
        return r;
    }
    target = addr;
  } else {
    uint64_t hint = addr & ~(ps - 1);
    if (hint >= MMAP_MIN_ADDR && hint <= addr_limit(emu) - rlen &&
        !tc_sys_overlaps_any(emu, hint, hint + rlen))
      target = hint;
    else if ((target = tc_emu_find_free(emu, rlen)) == 0)
      return -ENOMEM;
  }
  int r = tc_emu_map(emu, target, rlen, prot, name, f ? off : 0);
  if (r < 0)
    return r;

  if (f) {
    /* A private snapshot of the file: MAP_SHARED writes are not written
     * back to the file (single process, nobody else sees them). Bytes
     * past EOF read as zero. */
    uint8_t *buf = malloc(TC_SYS_CHUNK);
    if (!buf) {
      tc_emu_unmap(emu, target, rlen);
      return -ENOMEM;
    }
    for (uint64_t done = 0; done < len;) {
      size_t want =
          len - done < TC_SYS_CHUNK ? (size_t)(len - done) : TC_SYS_CHUNK;
      ssize_t n = pread(f->host_fd, buf, want, (off_t)(off + done));
      if (n <= 0)
        break;
      if (tc_emu_write(emu, target + done, buf, (size_t)n) < 0)
        break;
      done += (uint64_t)n;
    }
    free(buf);
  }
  return (int64_t)target;
}

/* i386's mmap is its own (old_mmap, emu/linux/x86/). */
static int64_t sys_mmap(tc_sys_call *c) {
  return tc_sys_do_mmap(c, c->a[0], c->a[1], (uint32_t)c->a[2],
                        (uint32_t)c->a[3], tc_sys_int(c, 4), c->a[5]);
}

static int64_t sys_mmap2(tc_sys_call *c) {
  /* The offset is in 4096-byte units whatever the page size. */
  return tc_sys_do_mmap(c, c->a[0], c->a[1], (uint32_t)c->a[2],
                        (uint32_t)c->a[3], tc_sys_int(c, 4), c->a[5] * 4096u);
}

static int64_t sys_munmap(tc_sys_call *c) {
  tc_emu *emu = c->emu;
  uint64_t addr = c->a[0], len = page_len(emu, c->a[1]);
  if ((addr & (page_size(emu) - 1)) || c->a[1] == 0 || len == 0 ||
      len > addr_limit(emu) || addr > addr_limit(emu) - len)
    return -EINVAL;
  if (!tc_sys_overlaps_any(emu, addr, addr + len))
    return 0;
  return tc_emu_unmap(emu, addr, len);
}

static int64_t sys_mprotect(tc_sys_call *c) {
  tc_emu *emu = c->emu;
  uint64_t addr = c->a[0];
  uint32_t prot = (uint32_t)c->a[2];
  if (addr & (page_size(emu) - 1))
    return -EINVAL;
  if (prot & ~(G_PROT_VALID | G_PROT_IGNORED))
    return -EINVAL;
  if (c->a[1] == 0)
    return 0;
  uint64_t len = page_len(emu, c->a[1]);
  if (len == 0 || addr > UINT64_MAX - len)
    return -ENOMEM;
  if (!tc_emu_is_mapped(emu, addr, len))
    return -ENOMEM;
  return tc_emu_protect(emu, addr, len, prot & G_PROT_VALID);
}

#define G_MREMAP_MAYMOVE 1
#define G_MREMAP_FIXED 2

/* Maps a new range at dst like the region at src, copies, unmaps src. */
static int64_t mremap_move(tc_emu *emu, const tc_region *src_region,
                           uint64_t src, uint64_t old_len, uint64_t dst,
                           uint64_t new_len) {
  tc_region like = *src_region; /* copy: the region list will change */
  uint64_t file_off = like.file_offset + (src - like.start);
  int r = tc_emu_map(emu, dst, new_len, like.prot, like.name, file_off);
  if (r < 0)
    return r;
  r = copy_guest(emu, dst, src, old_len < new_len ? old_len : new_len);
  if (r < 0) {
    tc_emu_unmap(emu, dst, new_len);
    return r;
  }
  tc_emu_unmap(emu, src, old_len);
  return (int64_t)dst;
}

static int64_t sys_mremap(tc_sys_call *c) {
  tc_emu *emu = c->emu;
  uint64_t old = c->a[0], old_size = c->a[1], new_size = c->a[2];
  uint32_t flags = (uint32_t)c->a[3];
  uint64_t new_addr = c->a[4], ps = page_size(emu);
  if (flags & ~(uint32_t)(G_MREMAP_MAYMOVE | G_MREMAP_FIXED))
    return -EINVAL; /* MREMAP_DONTUNMAP is not emulated */
  if ((flags & G_MREMAP_FIXED) && !(flags & G_MREMAP_MAYMOVE))
    return -EINVAL;
  if (old & (ps - 1))
    return -EINVAL;
  uint64_t old_len = page_len(emu, old_size), new_len = page_len(emu, new_size);
  if (new_size == 0 || new_len == 0 || new_len > addr_limit(emu))
    return -EINVAL;
  if (old_size == 0) /* duplicating a shared mapping: not emulated */
    return -EINVAL;
  if (old_len == 0 || old > UINT64_MAX - old_len ||
      !tc_emu_is_mapped(emu, old, old_len))
    return -EFAULT;
  const tc_region *reg = tc_emu_region_at(emu, old);
  if (!reg)
    return -EFAULT;

  if (flags & G_MREMAP_FIXED) {
    if ((new_addr & (ps - 1)) || new_addr > addr_limit(emu) - new_len)
      return -EINVAL;
    if (new_addr < old + old_len && old < new_addr + new_len)
      return -EINVAL;
    if (tc_sys_overlaps_any(emu, new_addr, new_addr + new_len)) {
      int r = tc_emu_unmap(emu, new_addr, new_len);
      if (r < 0)
        return r;
      reg = tc_emu_region_at(emu, old);
      if (!reg)
        return -EFAULT;
    }
    return mremap_move(emu, reg, old, old_len, new_addr, new_len);
  }
  if (new_len <= old_len) {
    if (new_len < old_len) {
      int r = tc_emu_unmap(emu, old + new_len, old_len - new_len);
      if (r < 0)
        return r;
    }
    return (int64_t)old;
  }
  uint64_t tail = old + old_len, tail_len = new_len - old_len;
  if (tail <= addr_limit(emu) - tail_len &&
      !tc_sys_overlaps_any(emu, tail, tail + tail_len)) {
    const tc_region *last = tc_emu_region_at(emu, tail - 1);
    if (!last)
      return -EFAULT;
    int r = tc_emu_map(emu, tail, tail_len, last->prot, last->name,
                       last->file_offset + (tail - last->start));
    return r < 0 ? r : (int64_t)old;
  }
  if (!(flags & G_MREMAP_MAYMOVE))
    return -ENOMEM;
  uint64_t dst = tc_emu_find_free(emu, new_len);
  if (dst == 0)
    return -ENOMEM;
  return mremap_move(emu, reg, old, old_len, dst, new_len);
}

/* Zeroes anonymous memory in [start, end) (MADV_DONTNEED semantics). */
static int zero_anon(tc_emu *emu, uint64_t start, uint64_t end) {
  uint8_t *buf = malloc(TC_SYS_CHUNK), *zeros = calloc(1, TC_SYS_CHUNK);
  int r = 0;
  if (!buf || !zeros) {
    r = -ENOMEM;
    goto out;
  }
  for (uint64_t a = start; a < end && r == 0;) {
    const tc_region *reg = tc_emu_region_at(emu, a);
    if (!reg) {
      r = -ENOMEM;
      break;
    }
    uint64_t stop = reg->end < end ? reg->end : end;
    if (is_anon_region(reg)) {
      /* File-backed private pages would revert to the file's contents;
       * we no longer know the file, so they are left as they are. */
      for (uint64_t p = a; p < stop && r == 0;) {
        size_t n = stop - p < TC_SYS_CHUNK ? (size_t)(stop - p) : TC_SYS_CHUNK;
        r = tc_emu_read(emu, p, buf, n);
        if (r == 0 && memcmp(buf, zeros, n) != 0)
          r = tc_emu_write(emu, p, zeros, n);
        p += n;
      }
    }
    a = stop;
  }
out:
  free(buf);
  free(zeros);
  return r;
}

static int64_t sys_madvise(tc_sys_call *c) {
  tc_emu *emu = c->emu;
  uint64_t addr = c->a[0];
  int advice = tc_sys_int(c, 2);
  if (addr & (page_size(emu) - 1))
    return -EINVAL;
  bool known = (advice >= 0 && advice <= 4) || (advice >= 8 && advice <= 25);
  if (!known)
    return -EINVAL;
  if (c->a[1] == 0)
    return 0;
  uint64_t len = page_len(emu, c->a[1]);
  if (len == 0 || addr > UINT64_MAX - len)
    return -EINVAL;
  if (!tc_emu_is_mapped(emu, addr, len))
    return -ENOMEM;
  if (advice == 4) /* MADV_DONTNEED */
    return zero_anon(emu, addr, addr + len);
  return 0; /* hints (and MADV_FREE, whose contents may stay) */
}

static int64_t sys_msync(tc_sys_call *c) {
  uint64_t len = page_len(c->emu, c->a[1]);
  if (c->a[0] & (page_size(c->emu) - 1))
    return -EINVAL;
  if (c->a[1] && (len == 0 || !tc_emu_is_mapped(c->emu, c->a[0], len)))
    return -ENOMEM;
  return 0;
}

static int64_t sys_mlock(tc_sys_call *c) {
  uint64_t len = page_len(c->emu, c->a[1]);
  if (c->a[1] &&
      (len == 0 ||
       !tc_emu_is_mapped(c->emu, c->a[0] & ~(page_size(c->emu) - 1), len)))
    return -ENOMEM;
  return 0;
}

const tc_sys_entry tc_sys_mm_table[] = {
    {"brk", sys_brk},
    {"mmap", sys_mmap},
    {"mmap2", sys_mmap2},
    {"munmap", sys_munmap},
    {"mprotect", sys_mprotect},
    {"mremap", sys_mremap},
    {"madvise", sys_madvise},
    {"msync", sys_msync},
    {"mlock", sys_mlock},
    {"munlock", sys_mlock},
    {NULL, NULL},
};
