/* Emulated kernel: memory (brk, mmap, munmap, mprotect, mremap, madvise)
 * and x86 thread pointers (arch_prctl, set_thread_area).
 *
 * MAP_* values are the x86 (asm-generic) ones; arches with other values
 * (mips, sparc) will need a translation step here. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/linux/linux_xlat.h"
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
  switch (emu->arch->id) {
  case TC_ARCH_ARM:
    return 0xbf000000ull;
  case TC_ARCH_MIPS:
  case TC_ARCH_MIPSEL:
    return 0x7fff8000ull;
  case TC_ARCH_MIPS64EL:
    return 0x10000000000ull;
  default:
    return emu->arch->ptr_size == 4 ? 0x100000000ull : 0x800000000000ull;
  }
}

static bool overlaps_any(tc_emu *emu, uint64_t start, uint64_t end) {
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
    if (overlaps_any(emu, old_end, new_end))
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

static int64_t do_mmap(tc_sys_call *c, uint64_t addr, uint64_t len,
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
    if (!(flags & G_MAP_FIXED) && overlaps_any(emu, addr, addr + rlen))
      return -EEXIST; /* MAP_FIXED_NOREPLACE alone */
    if ((flags & G_MAP_FIXED) && overlaps_any(emu, addr, addr + rlen)) {
      int r = tc_emu_unmap(emu, addr, rlen);
      if (r < 0)
        return r;
    }
    target = addr;
  } else {
    uint64_t hint = addr & ~(ps - 1);
    if (hint >= MMAP_MIN_ADDR && hint <= addr_limit(emu) - rlen &&
        !overlaps_any(emu, hint, hint + rlen))
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

static int64_t sys_mmap(tc_sys_call *c) {
  if (c->emu->arch->id == TC_ARCH_X86) {
    /* i386 old_mmap: one pointer to {addr, len, prot, flags, fd, off}. */
    uint8_t raw[24];
    int r = tc_sys_read(c->emu, c->a[0], raw, sizeof raw);
    if (r < 0)
      return r;
    uint64_t v[6];
    for (int i = 0; i < 6; i++)
      v[i] = tc_abi_get(c->emu->arch, raw + 4 * i, 4);
    return do_mmap(c, v[0], v[1], (uint32_t)v[2], (uint32_t)v[3],
                   (int)(int32_t)v[4], v[5]);
  }
  return do_mmap(c, c->a[0], c->a[1], (uint32_t)c->a[2], (uint32_t)c->a[3],
                 tc_sys_int(c, 4), c->a[5]);
}

static int64_t sys_mmap2(tc_sys_call *c) {
  /* The offset is in 4096-byte units whatever the page size. */
  return do_mmap(c, c->a[0], c->a[1], (uint32_t)c->a[2], (uint32_t)c->a[3],
                 tc_sys_int(c, 4), c->a[5] * 4096u);
}

static int64_t sys_munmap(tc_sys_call *c) {
  tc_emu *emu = c->emu;
  uint64_t addr = c->a[0], len = page_len(emu, c->a[1]);
  if ((addr & (page_size(emu) - 1)) || c->a[1] == 0 || len == 0 ||
      len > addr_limit(emu) || addr > addr_limit(emu) - len)
    return -EINVAL;
  if (!overlaps_any(emu, addr, addr + len))
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
    if (overlaps_any(emu, new_addr, new_addr + new_len)) {
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
      !overlaps_any(emu, tail, tail + tail_len)) {
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

/* ------------------------------------------------------- x86 thread area */

static int64_t sys_arch_prctl(tc_sys_call *c) {
  tc_emu *emu = c->emu;
  if (emu->arch->ptr_size != 8)
    return -EINVAL; /* i386 has only the CPUID controls */
  int code = tc_sys_int(c, 0);
  uint64_t addr = c->a[1];
  int reg;
  switch (code) {
  case 0x1001:                     /* ARCH_SET_GS */
  case 0x1002:                     /* ARCH_SET_FS */
    if (addr >= 0x7ffffffff000ull) /* TASK_SIZE_MAX */
      return -EPERM;
    reg = tc_arch_reg_index(emu->arch, code == 0x1002 ? "fs_base" : "gs_base");
    if (reg < 0)
      return -EINVAL;
    tc_emu_set_reg(emu, reg, addr);
    return 0;
  case 0x1003: /* ARCH_GET_FS */
  case 0x1004: /* ARCH_GET_GS */
    reg = tc_arch_reg_index(emu->arch, code == 0x1003 ? "fs_base" : "gs_base");
    if (reg < 0)
      return -EINVAL;
    return tc_sys_put_uint(emu, addr, 8, tc_emu_reg(emu, reg));
  default:
    return -EINVAL; /* ARCH_CET_STATUS, ARCH_GET_CPUID, ... */
  }
}

/* i386 TLS: Linux keeps three TLS descriptors per thread in the GDT; a
 * 32-bit process on a 64-bit kernel sees them as entries 12..14 and glibc
 * then loads %gs with (12 << 3) | 3. Unicorn's segment loads read real
 * descriptors, so the GDT lives in guest memory at a fixed address above
 * the 32-bit mmap area, shown in the memory map as "[gdt]". */
#define GDT_ADDR_32 0xffffe000ull
#define GDT_ENTRIES 16
#define TLS_MIN 12
#define TLS_MAX 14

static void gdt_descriptor(uint32_t base, uint32_t limit, uint32_t flags,
                           uint32_t *lo, uint32_t *hi) {
  uint32_t seg_32bit = flags & 1, contents = (flags >> 1) & 3,
           read_exec_only = (flags >> 3) & 1, limit_in_pages = (flags >> 4) & 1,
           seg_not_present = (flags >> 5) & 1, useable = (flags >> 6) & 1;
  *lo = ((base & 0xffffu) << 16) | (limit & 0xffffu);
  *hi = (base & 0xff000000u) | ((base >> 16) & 0xffu) | (limit & 0xf0000u) |
        ((read_exec_only ^ 1u) << 9) | (contents << 10) | (1u << 8) /*A*/ |
        0x7000u /* S=1, DPL=3 */ | ((seg_not_present ^ 1u) << 15) |
        (useable << 20) | (seg_32bit << 22) | (limit_in_pages << 23);
}

static void put_descriptor(tc_emu *emu, uint8_t *p, uint32_t lo, uint32_t hi) {
  tc_abi_put(emu->arch, p, 4, lo);
  tc_abi_put(emu->arch, p + 4, 4, hi);
}

static int load_selector(tc_emu *emu, int uc_reg, uint16_t sel) {
  uint64_t v = sel;
  return uc_reg_write(emu->uc, uc_reg, &v) == UC_ERR_OK ? 0 : -EINVAL;
}

int tc_linux_x86_setup_gdt(tc_emu *emu) {
  if (emu->gdt_addr)
    return 0;
  if (emu->arch->id != TC_ARCH_X86)
    return -ENOSYS;
  uint64_t addr = GDT_ADDR_32;
  if (overlaps_any(emu, addr, addr + page_size(emu)) &&
      (addr = tc_emu_find_free(emu, page_size(emu))) == 0)
    return -ENOMEM;
  int r = tc_emu_map(emu, addr, page_size(emu), TC_PROT_READ | TC_PROT_WRITE,
                     "[gdt]", 0);
  if (r < 0)
    return r;
  /* Unicorn 2.0.1 starts 32-bit mode with null selectors whose hidden
   * descriptors lack the 32-bit (B) flag. The first segment load (glibc's
   * `mov %gs`) recomputes the stack size from SS and the stack would turn
   * 16-bit, so real flat descriptors are loaded here, at the entries where
   * a 64-bit kernel keeps them for 32-bit processes: __USER32_CS 0x23
   * (entry 4) and __USER_DS 0x2b (entry 5). Unicorn runs at CPL 0 and a
   * stack segment must match the CPL, so SS is entry 5 with RPL 0 (0x28),
   * loaded while entry 5 still has DPL 0; then entry 5 becomes DPL 3 for
   * DS and ES. */
  uint8_t d[16];
  uint32_t lo, hi;
  gdt_descriptor(0, 0xfffff, 1 | (2u << 1) /* code, readable */ | (1u << 4),
                 &lo, &hi);
  put_descriptor(emu, d, lo, hi);
  gdt_descriptor(0, 0xfffff, 1 | (1u << 4), &lo, &hi);
  put_descriptor(emu, d + 8, lo, hi & ~0x6000u /* DPL 0 */);
  if (emu->flat_segments) {
    /* After execve: CS, SS, DS and ES already hold these flat segments
     * (their hidden descriptors survive, as the kernel's do); the new
     * image gets a fresh table with the final entries. */
    put_descriptor(emu, d + 8, lo, hi);
    if ((r = tc_emu_write(emu, addr + 4 * 8, d, sizeof d)) < 0)
      return r;
    uc_x86_mmr gdtr = {0, addr, GDT_ENTRIES * 8 - 1, 0};
    if (uc_reg_write(emu->uc, UC_X86_REG_GDTR, &gdtr) != UC_ERR_OK)
      return -EINVAL;
    emu->gdt_addr = addr;
    return 0;
  }
  if ((r = tc_emu_write(emu, addr + 4 * 8, d, sizeof d)) < 0)
    return r;
  uc_x86_mmr gdtr = {0, addr, GDT_ENTRIES * 8 - 1, 0};
  if (uc_reg_write(emu->uc, UC_X86_REG_GDTR, &gdtr) != UC_ERR_OK)
    return -EINVAL;
  if ((r = load_selector(emu, UC_X86_REG_SS, 5 << 3)) < 0)
    return r;
  put_descriptor(emu, d + 8, lo, hi);
  if ((r = tc_emu_write(emu, addr + 5 * 8, d + 8, 8)) < 0)
    return r;
  if ((r = load_selector(emu, UC_X86_REG_CS, (4 << 3) | 3)) < 0 ||
      (r = load_selector(emu, UC_X86_REG_DS, (5 << 3) | 3)) < 0 ||
      (r = load_selector(emu, UC_X86_REG_ES, (5 << 3) | 3)) < 0)
    return r;
  emu->gdt_addr = addr;
  emu->flat_segments = true;
  return 0;
}

/* Writes the TLS descriptor of the user_desc at desc_addr into the GDT
 * at gdt. An entry of -1 picks a free one and stores its number back
 * (set_thread_area); clone's CLONE_SETTLS may not allocate. */
static int set_tls_desc(tc_emu *emu, uint64_t gdt, uint64_t desc_addr,
                        bool can_allocate) {
  uint8_t ud[16]; /* struct user_desc */
  int r = tc_sys_read(emu, desc_addr, ud, sizeof ud);
  if (r < 0)
    return r;
  uint32_t entry = (uint32_t)tc_abi_get(emu->arch, ud, 4);
  uint32_t base = (uint32_t)tc_abi_get(emu->arch, ud + 4, 4);
  uint32_t limit = (uint32_t)tc_abi_get(emu->arch, ud + 8, 4);
  uint32_t flags = (uint32_t)tc_abi_get(emu->arch, ud + 12, 4);
  if (entry == 0xffffffffu && can_allocate) {
    for (uint32_t e = TLS_MIN; e <= TLS_MAX && entry == 0xffffffffu; e++) {
      uint8_t cur[8];
      if (tc_emu_read(emu, gdt + e * 8, cur, 8) < 0)
        return -EFAULT;
      static const uint8_t zero[8];
      if (memcmp(cur, zero, 8) == 0)
        entry = e;
    }
    if (entry == 0xffffffffu)
      return -ESRCH;
    if ((r = tc_sys_put_uint(emu, desc_addr, 4, entry)) < 0)
      return r;
  }
  if (entry < TLS_MIN || entry > TLS_MAX)
    return -EINVAL;
  uint8_t d[8] = {0};
  /* The "empty" descriptor (read_exec_only + not present, no base) clears
   * the slot, as LDT_empty() does in the kernel. */
  bool empty =
      base == 0 && limit == 0 && (flags & 0x7f) == ((1u << 3) | (1u << 5));
  if (!empty) {
    uint32_t lo, hi;
    gdt_descriptor(base, limit, flags, &lo, &hi);
    tc_abi_put(emu->arch, d, 4, lo);
    tc_abi_put(emu->arch, d + 4, 4, hi);
  }
  return tc_emu_write(emu, gdt + entry * 8, d, 8);
}

static int64_t sys_set_thread_area(tc_sys_call *c) {
  tc_emu *emu = c->emu;
  int ulr = tc_arch_reg_index(emu->arch, "userlocal");
  if (ulr >= 0) {
    /* mips: the pointer itself, read back with `rdhwr $29` (UserLocal). */
    tc_emu_set_reg(emu, ulr, c->a[0]);
    return 0;
  }
  if (emu->arch->id != TC_ARCH_X86)
    return -ENOSYS; /* x86-64 programs use arch_prctl */
  int r = tc_linux_x86_setup_gdt(emu);
  if (r < 0)
    return r;
  return set_tls_desc(emu, emu->gdt_addr, c->a[0], true);
}

/* Linux keeps the TLS entries per thread and loads them into the GDT on a
 * switch; here each thread has its own GDT page (GDTR is in its saved
 * registers), so the descriptors the recorder reads stay right. */
int tc_linux_x86_thread_gdt(tc_emu *emu, uint64_t desc_addr, uint64_t *gdt) {
  int r = tc_linux_x86_setup_gdt(emu);
  if (r < 0)
    return r;
  uint64_t ps = page_size(emu);
  uint64_t addr = tc_emu_find_free(emu, ps);
  if (!addr)
    return -ENOMEM;
  uint8_t table[GDT_ENTRIES * 8];
  if ((r = tc_emu_read(emu, emu->gdt_addr, table, sizeof table)) < 0)
    return r;
  if ((r = tc_emu_map(emu, addr, ps, TC_PROT_READ | TC_PROT_WRITE, "[gdt]",
                      0)) < 0)
    return r;
  if ((r = tc_emu_write(emu, addr, table, sizeof table)) < 0 ||
      (r = set_tls_desc(emu, addr, desc_addr, false)) < 0) {
    tc_emu_unmap(emu, addr, ps);
    return r;
  }
  *gdt = addr;
  return 0;
}

/* ------------------------------------------------- arm private calls */

/* set_tls (0xf0005): the thread pointer user code reads with
 * `mrc p15, 0, rN, c13, c0, 3` (TPIDRURO). */
static int64_t sys_arm_set_tls(tc_sys_call *c) {
  if (c->emu->arch->id != TC_ARCH_ARM)
    return -ENOSYS;
  int r = tc_arch_reg_index(c->emu->arch, "tpidruro");
  if (r < 0)
    return -ENOSYS;
  tc_emu_set_reg(c->emu, r, c->a[0] & 0xffffffffu);
  return 0;
}

static int64_t sys_arm_get_tls(tc_sys_call *c) {
  int r = tc_arch_reg_index(c->emu->arch, "tpidruro");
  return r < 0 ? -ENOSYS : (int64_t)tc_emu_reg(c->emu, r);
}

/* cacheflush (0xf0002): Unicorn notices code writes itself (the recorder
 * drops stale decodes on writes to executable pages), so only the range
 * check remains. */
static int64_t sys_arm_cacheflush(tc_sys_call *c) {
  if (c->a[1] < c->a[0])
    return -EINVAL;
  return 0;
}

const tc_sys_entry tc_sys_mm_table[] = {
    {"set_tls", sys_arm_set_tls},
    {"get_tls", sys_arm_get_tls},
    {"cacheflush", sys_arm_cacheflush},
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
    {"arch_prctl", sys_arch_prctl},
    {"set_thread_area", sys_set_thread_area},
    {NULL, NULL},
};
