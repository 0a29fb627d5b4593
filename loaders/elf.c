/* SPDX-License-Identifier: GPL-2.0-or-later */
/* ELF parsing and loading: a static program becomes a fresh tc_emu process
 * laid out the way Linux's binfmt_elf would lay it out (ASLR off). */
#include <elf.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/byteorder.h"
#include "loaders/loader.h"

#include "common/elf/elf.h"

/* AT_UID/AT_EUID/AT_GID/AT_EGID: fixed so recordings are reproducible. */
#define TC_LOADER_ID 1000
/* x86 AT_HWCAP: the CPUID(1).EDX baseline Linux reports on common CPUs. */
#define TC_DEFAULT_STACK_SIZE (8ull << 20)
#define TC_CLKTCK 100

/* ------------------------------------------------------------ byte order */

static uint64_t rd(const uint8_t *p, unsigned n, int be) {
  return get_uint(p, n, be);
}

static void wr(uint8_t *p, unsigned n, int be, uint64_t v) {
  put_uint(p, v, n, be);
}

static int is_pow2(uint64_t v) { return v && !(v & (v - 1)); }

/* ------------------------------------------------------------ machines */

static const char *machine_name(uint16_t m) {
  switch (m) {
  case EM_386:
    return "x86";
  case EM_X86_64:
    return "x86_64";
  case EM_ARM:
    return "ARM";
  case EM_AARCH64:
    return "AArch64";
  case EM_MIPS:
    return "MIPS";
  case EM_SPARC:
    return "SPARC";
  case EM_SPARC32PLUS:
    return "SPARC32PLUS";
  case EM_SPARCV9:
    return "SPARC V9";
  case EM_PPC:
    return "PowerPC";
  case EM_PPC64:
    return "PowerPC64";
  case EM_RISCV:
    return "RISC-V";
  case EM_S390:
    return "S/390";
  case EM_68K:
    return "m68k";
  default:
    return NULL;
  }
}

static int resolve_arch(tc_elf_image *img, tc_error *err) {
  const char *mname = machine_name(img->machine);
  /* mips n32 is a 32-bit ELF with EF_MIPS_ABI2: another syscall table and
   * other struct layouts, none emulated. */
  if (img->machine == EM_MIPS && !img->is64 && (img->flags & 0x20)) {
    tc_error_set(err, "unsupported architecture: mips n32 ABI (EF_MIPS_ABI2); "
                      "o32 (mips, mipsel) and n64 (mips64el) are supported");
    return -1;
  }
  const char *bits = img->is64 ? "64-bit" : "32-bit";
  const char *order = img->big_endian ? "big-endian" : "little-endian";
  const tc_arch *arch =
      tc_arch_by_elf(img->machine, img->is64, img->big_endian);
  if (!arch) {
    if (mname)
      tc_error_set(err, "unsupported architecture: %s %s %s (e_machine %u)",
                   order, bits, mname, img->machine);
    else
      tc_error_set(err,
                   "unsupported architecture: unknown e_machine %u "
                   "(%s %s)",
                   img->machine, bits, order);
    return -1;
  }
  img->arch = arch;
  return 0;
}

/* ------------------------------------------------------------ parser */

typedef struct raw_phdr {
  uint32_t type, flags;
  uint64_t offset, vaddr, filesz, memsz, align;
} raw_phdr;

static void read_phdr(const uint8_t *p, int is64, int be, raw_phdr *ph) {
  ph->type = (uint32_t)rd(p, 4, be);
  if (is64) {
    ph->flags = (uint32_t)rd(p + 4, 4, be);
    ph->offset = rd(p + 8, 8, be);
    ph->vaddr = rd(p + 16, 8, be);
    ph->filesz = rd(p + 32, 8, be);
    ph->memsz = rd(p + 40, 8, be);
    ph->align = rd(p + 48, 8, be);
  } else {
    ph->offset = rd(p + 4, 4, be);
    ph->vaddr = rd(p + 8, 4, be);
    ph->filesz = rd(p + 16, 4, be);
    ph->memsz = rd(p + 20, 4, be);
    ph->flags = (uint32_t)rd(p + 24, 4, be);
    ph->align = rd(p + 28, 4, be);
  }
}

static const char *type_problem(uint16_t type) {
  switch (type) {
  case ET_NONE:
    return "ELF type ET_NONE: not an executable";
  case ET_REL:
    return "relocatable object file (ET_REL), not an executable: link it "
           "first";
  case ET_CORE:
    return "core dump (ET_CORE), not an executable";
  default:
    return NULL;
  }
}

static int parse_load(tc_elf_image *img, unsigned idx, const raw_phdr *ph,
                      size_t size, uint64_t page, tc_error *err) {
  if (ph->memsz == 0)
    return 0; /* maps nothing, as in Linux */
  if (img->nsegs == TC_ELF_MAX_SEGMENTS) {
    tc_error_set(err, "too many PT_LOAD segments (more than %d)",
                 TC_ELF_MAX_SEGMENTS);
    return -1;
  }
  if (ph->filesz > ph->memsz) {
    tc_error_set(err,
                 "bad program header %u: p_filesz 0x%" PRIx64
                 " exceeds p_memsz 0x%" PRIx64,
                 idx, ph->filesz, ph->memsz);
    return -1;
  }
  /* A bss-only segment (p_filesz 0) may point past the end: Linux reads
   * nothing from it. */
  if (ph->filesz && (ph->offset > size || ph->filesz > size - ph->offset)) {
    tc_error_set(err,
                 "truncated ELF: program header %u's data (p_offset 0x%" PRIx64
                 ", p_filesz 0x%" PRIx64 ") ends beyond the file (0x%zx bytes)",
                 idx, ph->offset, ph->filesz, size);
    return -1;
  }
  /* The whole segment plus its page rounding must fit the address space. */
  uint64_t limit = img->is64 ? UINT64_MAX : UINT32_MAX;
  if (ph->vaddr > limit || ph->memsz > limit - ph->vaddr ||
      ph->vaddr + ph->memsz > limit - (page - 1)) {
    tc_error_set(err,
                 "bad program header %u: segment at 0x%" PRIx64 " of 0x%" PRIx64
                 " bytes overflows the %d-bit address space",
                 idx, ph->vaddr, ph->memsz, img->is64 ? 64 : 32);
    return -1;
  }
  if (ph->align > 1 && !is_pow2(ph->align)) {
    tc_error_set(err,
                 "bad program header %u: p_align 0x%" PRIx64
                 " is not a power of two",
                 idx, ph->align);
    return -1;
  }
  /* Linux maps file pages, so address and offset must agree within a
   * page; we copy instead, but such a file would not run natively. */
  if ((ph->vaddr & (page - 1)) != (ph->offset & (page - 1))) {
    tc_error_set(err,
                 "bad program header %u: p_vaddr 0x%" PRIx64
                 " and p_offset 0x%" PRIx64 " differ modulo the page size",
                 idx, ph->vaddr, ph->offset);
    return -1;
  }
  if (img->nsegs > 0) {
    const tc_elf_segment *prev = &img->segs[img->nsegs - 1];
    if (ph->vaddr < prev->vaddr + prev->memsz) {
      tc_error_set(err,
                   "bad program header %u: PT_LOAD at 0x%" PRIx64
                   " overlaps or precedes the previous one (0x%" PRIx64
                   "-0x%" PRIx64 ")",
                   idx, ph->vaddr, prev->vaddr, prev->vaddr + prev->memsz);
      return -1;
    }
  }
  tc_elf_segment *s = &img->segs[img->nsegs++];
  s->vaddr = ph->vaddr;
  s->memsz = ph->memsz;
  s->filesz = ph->filesz;
  s->offset = ph->offset;
  s->align = ph->align;
  s->prot = ((ph->flags & PF_R) ? TC_PROT_READ : 0) |
            ((ph->flags & PF_W) ? TC_PROT_WRITE : 0) |
            ((ph->flags & PF_X) ? TC_PROT_EXEC : 0);
  return 0;
}

int tc_elf_parse(const uint8_t *data, size_t size, tc_elf_image *img,
                 tc_error *err) {
  if (!img || (!data && size)) {
    tc_error_set(err, "tc_elf_parse: no image or data");
    return -1;
  }
  memset(img, 0, sizeof *img);
  tc_elf_header h;
  if (tc_elf_read_header(data, size, &h, err) < 0)
    return -1;
  int is64 = h.is64, be = h.big_endian;
  img->is64 = h.is64;
  img->big_endian = h.big_endian;
  img->type = h.type;
  img->machine = h.machine;
  img->entry = h.entry;
  img->phoff = h.phoff;
  img->flags = h.flags;
  img->phentsize = h.phentsize;
  img->phnum = h.phnum;
  if (img->type != ET_EXEC && img->type != ET_DYN) {
    const char *why = type_problem(img->type);
    if (why)
      tc_error_set(err, "%s", why);
    else
      tc_error_set(err, "unsupported ELF type %u (expected ET_EXEC or ET_DYN)",
                   img->type);
    return -1;
  }
  if (resolve_arch(img, err) < 0)
    return -1;
  size_t want = is64 ? sizeof(Elf64_Phdr) : sizeof(Elf32_Phdr);
  if (img->phentsize != want) {
    tc_error_set(err, "bad e_phentsize %u (expected %zu for ELFCLASS%d)",
                 img->phentsize, want, is64 ? 64 : 32);
    return -1;
  }
  if (img->phnum == 0) {
    tc_error_set(err, "no program headers (e_phnum is 0): nothing to load");
    return -1;
  }
  if (img->phnum == PN_XNUM) {
    tc_error_set(err, "extended program header numbering (e_phnum 0xffff) "
                      "is not supported");
    return -1;
  }
  uint64_t phsize = (uint64_t)img->phnum * img->phentsize;
  if (img->phoff > size || phsize > size - img->phoff) {
    if (img->phoff > size)
      tc_error_set(err,
                   "truncated ELF: e_phoff 0x%" PRIx64
                   " is beyond the end of the file (0x%zx bytes)",
                   img->phoff, size);
    else
      tc_error_set(err,
                   "truncated ELF: program headers end at 0x%" PRIx64
                   " but file is 0x%zx bytes",
                   img->phoff + phsize, size);
    return -1;
  }

  uint64_t page = img->arch->page_size;
  int have_phdr = 0, have_gnu_stack = 0;
  for (unsigned i = 0; i < img->phnum; i++) {
    raw_phdr ph;
    read_phdr(data + img->phoff + (uint64_t)i * img->phentsize, is64, be, &ph);
    switch (ph.type) {
    case PT_LOAD:
      if (parse_load(img, i, &ph, size, page, err) < 0)
        return -1;
      break;
    case PT_INTERP:
      /* The interpreter's path: its last byte NUL, as binfmt_elf checks. */
      if (ph.filesz < 2 || ph.filesz > sizeof img->interp || ph.offset > size ||
          ph.filesz > size - ph.offset ||
          data[ph.offset + ph.filesz - 1] != 0 || data[ph.offset] == 0) {
        tc_error_set(err, "bad PT_INTERP (interpreter path)");
        return -1;
      }
      memcpy(img->interp, data + ph.offset, ph.filesz);
      img->has_interp = 1;
      break;
    case PT_GNU_STACK:
      have_gnu_stack = 1;
      img->stack_exec = (ph.flags & PF_X) != 0;
      break;
    case PT_PHDR:
      have_phdr = 1;
      img->phdr_vaddr = ph.vaddr;
      break;
    default:
      break;
    }
  }
  if (!have_gnu_stack)
    img->stack_exec = 1; /* Linux's default for old binaries */
  if (img->nsegs == 0) {
    tc_error_set(err, "no PT_LOAD segment: nothing to load");
    return -1;
  }
  const tc_elf_segment *first = &img->segs[0];
  const tc_elf_segment *last = &img->segs[img->nsegs - 1];
  img->min_vaddr = first->vaddr & ~(page - 1);
  img->max_vaddr = (last->vaddr + last->memsz + page - 1) & ~(page - 1);

  int entry_ok = 0;
  for (size_t i = 0; i < img->nsegs; i++) {
    const tc_elf_segment *s = &img->segs[i];
    if (img->entry >= s->vaddr && img->entry - s->vaddr < s->memsz)
      entry_ok = 1;
    /* Linux: AT_PHDR is where the loaded file bytes hold the headers. */
    if (!have_phdr && s->offset <= img->phoff &&
        img->phoff - s->offset < s->filesz) {
      img->phdr_vaddr = s->vaddr + (img->phoff - s->offset);
      have_phdr = 1;
    }
  }
  if (!entry_ok) {
    tc_error_set(err,
                 "entry point 0x%" PRIx64 " is outside every PT_LOAD segment",
                 img->entry);
    return -1;
  }
  return 0;
}

/* ------------------------------------------------------------ loading */

static uint64_t page_down(uint64_t v, uint64_t page) { return v & ~(page - 1); }
static uint64_t page_up(uint64_t v, uint64_t page) {
  return (v + page - 1) & ~(page - 1);
}

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

/* Maps the page ranges of all segments once each; a page shared by two
 * segments gets the union of their permissions. */
static int map_segments(tc_emu *emu, const tc_elf_image *img, uint64_t bias,
                        const char *name, tc_error *err) {
  uint64_t page = img->arch->page_size;
  uint64_t bounds[2 * TC_ELF_MAX_SEGMENTS];
  size_t nb = 0;
  for (size_t i = 0; i < img->nsegs; i++) {
    const tc_elf_segment *s = &img->segs[i];
    bounds[nb++] = page_down(s->vaddr + bias, page);
    bounds[nb++] = page_up(s->vaddr + bias + s->memsz, page);
  }
  qsort(bounds, nb, sizeof bounds[0], cmp_u64);

  /* Walk the pieces between consecutive bounds; coalesce neighbours with
   * the same protection into one mapping. */
  struct {
    uint64_t start, end, file_offset;
    uint32_t prot;
  } runs[2 * TC_ELF_MAX_SEGMENTS];
  size_t nruns = 0;
  for (size_t b = 0; b + 1 < nb; b++) {
    uint64_t lo = bounds[b], hi = bounds[b + 1];
    if (lo == hi)
      continue;
    uint32_t prot = 0;
    uint64_t off = 0;
    int covered = 0;
    for (size_t i = 0; i < img->nsegs; i++) {
      const tc_elf_segment *s = &img->segs[i];
      uint64_t s_lo = page_down(s->vaddr + bias, page);
      uint64_t s_hi = page_up(s->vaddr + bias + s->memsz, page);
      if (s_lo < hi && s_hi > lo) {
        if (!covered)
          off = page_down(s->offset, page) + (lo - s_lo);
        covered = 1;
        prot |= s->prot;
      }
    }
    if (!covered)
      continue; /* a hole between segments */
    if (nruns && runs[nruns - 1].end == lo && runs[nruns - 1].prot == prot &&
        runs[nruns - 1].file_offset + (lo - runs[nruns - 1].start) == off) {
      runs[nruns - 1].end = hi;
      continue;
    }
    runs[nruns].start = lo;
    runs[nruns].end = hi;
    runs[nruns].file_offset = off;
    runs[nruns].prot = prot;
    nruns++;
  }
  for (size_t r = 0; r < nruns; r++) {
    int rc = tc_emu_map(emu, runs[r].start, runs[r].end - runs[r].start,
                        runs[r].prot, name, runs[r].file_offset);
    if (rc < 0) {
      tc_error_set(err,
                   "cannot map program segment 0x%" PRIx64 "-0x%" PRIx64 ": %s",
                   runs[r].start, runs[r].end, strerror(-rc));
      return -1;
    }
  }
  return 0;
}

static int write_mem(tc_emu *emu, uint64_t addr, const void *buf, size_t n,
                     tc_error *err) {
  if (n == 0)
    return 0;
  int rc = tc_emu_write(emu, addr, buf, n);
  if (rc < 0) {
    tc_error_set(err, "cannot write %zu bytes at 0x%" PRIx64 ": %s", n, addr,
                 strerror(-rc));
    return -1;
  }
  return 0;
}

static int zero_mem(tc_emu *emu, uint64_t addr, uint64_t n, tc_error *err) {
  static const uint8_t zeros[4096];
  while (n > 0) {
    size_t chunk = n < sizeof zeros ? (size_t)n : sizeof zeros;
    if (write_mem(emu, addr, zeros, chunk, err) < 0)
      return -1;
    addr += chunk;
    n -= chunk;
  }
  return 0;
}

/* Fills the segments. Mirrors Linux: whole file pages appear (bytes around a
 * segment inside its first/last page come from the file), the rest of the
 * page after p_filesz is zeroed when there is bss, and every segment's own
 * bytes win where pages are shared. */
static int fill_segments(tc_emu *emu, const tc_elf_image *img,
                         const uint8_t *data, size_t size, uint64_t bias,
                         tc_error *err) {
  uint64_t page = img->arch->page_size;
  for (size_t i = 0; i < img->nsegs; i++) {
    const tc_elf_segment *s = &img->segs[i];
    if (s->filesz == 0)
      continue; /* pure bss: anonymous memory only */
    uint64_t f_lo = page_down(s->offset, page);
    uint64_t f_hi = s->offset + s->filesz;
    if (s->memsz == s->filesz) {
      /* The file mapping shows the rest of the last page (up to EOF). */
      f_hi = page_up(f_hi, page);
      if (f_hi > size)
        f_hi = size;
    }
    if (write_mem(emu, page_down(s->vaddr + bias, page), data + f_lo,
                  f_hi - f_lo, err) < 0)
      return -1;
  }
  for (size_t i = 0; i < img->nsegs; i++) {
    const tc_elf_segment *s = &img->segs[i];
    if (s->memsz == s->filesz)
      continue;
    uint64_t bss = s->vaddr + bias + s->filesz;
    uint64_t end = s->vaddr + bias + s->memsz;
    /* Only partial pages can hold bytes written above; whole bss pages are
     * fresh anonymous (zero) memory. padzero() clears to the page end. */
    if (zero_mem(emu, bss, page_up(bss, page) - bss, err) < 0)
      return -1;
    uint64_t tail = page_down(end, page);
    if (tail > bss && zero_mem(emu, tail, end - tail, err) < 0)
      return -1;
  }
  for (size_t i = 0; i < img->nsegs; i++) {
    const tc_elf_segment *s = &img->segs[i];
    /* A bss-only segment's p_offset may point anywhere: no data + offset. */
    if (s->filesz == 0)
      continue;
    if (write_mem(emu, s->vaddr + bias, data + s->offset, s->filesz, err) < 0)
      return -1;
  }
  return 0;
}

/* Where the stack goes: [*bottom, *top). */
static int stack_range(tc_emu *emu, uint64_t *bottom, uint64_t *top,
                       tc_error *err) {
  const tc_arch *arch = emu->arch;
  uint64_t t = tc_loader_stack_top(arch);
  uint64_t size =
      emu->opt.stack_size ? emu->opt.stack_size : TC_DEFAULT_STACK_SIZE;
  if (size > t / 2) {
    tc_error_set(err, "stack size 0x%" PRIx64 " is too large", size);
    return -1;
  }
  *top = t;
  *bottom = t - page_up(size, arch->page_size);
  return 0;
}

/* Maps the stack (opt.stack_size, default 8 MiB, below the stack top) and
 * sets emu->stack_top and emu->mmap_top. Shared with raw.c. */
int tc_loader_map_stack(tc_emu *emu, int stack_exec, tc_error *err) {
  const tc_arch *arch = emu->arch;
  uint64_t bottom, top;
  if (stack_range(emu, &bottom, &top, err) < 0)
    return -1;
  uint32_t prot =
      TC_PROT_READ | TC_PROT_WRITE | (stack_exec ? TC_PROT_EXEC : 0);
  int rc = tc_emu_map(emu, bottom, top - bottom, prot, "[stack]", 0);
  if (rc < 0) {
    tc_error_set(err, "cannot map the stack at 0x%" PRIx64 "-0x%" PRIx64 ": %s",
                 bottom, top, strerror(-rc));
    return -1;
  }
  uint64_t mmap_top = tc_loader_mmap_top(arch);
  emu->stack_top = top;
  /* A big stack reaching into the mmap area pushes mmaps below it. */
  emu->mmap_top = mmap_top > bottom && mmap_top <= top ? bottom : mmap_top;
  return 0;
}

/* Reserves room for string s below *p; 0 once the strings exceed max. */
static int push_string(uint64_t *p, uint64_t *used, uint64_t max, const char *s,
                       uint64_t *addr) {
  uint64_t len = (uint64_t)strlen(s) + 1;
  if (len > max - *used)
    return 0;
  *used += len;
  *p -= len;
  *addr = *p;
  return 1;
}

/* Writes the initial stack exactly as Linux's fs/exec.c and binfmt_elf.c
 * create_elf_tables() do, given the auxv pairs (AT_NULL excluded; the
 * values of AT_RANDOM/AT_EXECFN/AT_PLATFORM are filled in here). Strings
 * and words are in target byte order and pointer size. */
int tc_loader_setup_stack(tc_emu *emu, const char *execfn,
                          const char *const *argv, size_t argc,
                          const char *const *envp, size_t envc,
                          const uint64_t *auxv, size_t nauxv, uint64_t *sp_out,
                          tc_error *err) {
  const tc_arch *arch = emu->arch;
  unsigned ptr = arch->ptr_size;
  int be = arch->big_endian;
  uint64_t top = emu->stack_top;
  uint64_t size =
      emu->opt.stack_size ? emu->opt.stack_size : TC_DEFAULT_STACK_SIZE;
  /* Linux allows strings up to a quarter of the stack limit. */
  uint64_t strings_max = size / 4, strings = 0;
  const char *platform = arch->elf_platform;
  size_t nstr = argc + envc + (execfn ? 1 : 0);
  uint64_t *str_addr = calloc(nstr ? nstr : 1, sizeof *str_addr);
  if (!str_addr) {
    tc_error_set(err, "out of memory building the stack");
    return -1;
  }

  /* fs/exec.c: p starts one pointer below the top; then the file name,
   * envp strings and argv strings, each list copied last to first. */
  uint64_t p = top - ptr;
  size_t k = nstr;
  int fits = 1;
  if (execfn)
    fits = push_string(&p, &strings, strings_max, execfn, &str_addr[--k]);
  for (size_t i = envc; fits && i-- > 0;)
    fits = push_string(&p, &strings, strings_max, envp[i], &str_addr[--k]);
  for (size_t i = argc; fits && i-- > 0;)
    fits = push_string(&p, &strings, strings_max, argv[i], &str_addr[--k]);
  if (!fits) {
    tc_error_set(err,
                 "arguments and environment are too large for a 0x%" PRIx64
                 "-byte stack",
                 size);
    free(str_addr);
    return -1;
  }
  /* str_addr: argv[0..argc), envp[0..envc), execfn. */
  uint64_t execfn_addr = execfn ? str_addr[argc + envc] : 0;

  p &= ~((uint64_t)arch->stack_align - 1);
  uint64_t platform_addr = 0, random_addr = 0;
  if (nauxv > 0) { /* raw code gets no auxv, so no platform or random */
    if (platform) {
      p -= strlen(platform) + 1;
      platform_addr = p;
    }
    p -= 16;
    random_addr = p;
  }

  size_t aux_words = 2 * (nauxv + 1);
  uint64_t sp = p - aux_words * ptr;
  uint64_t items = (argc + 1) + (envc + 1) + 1;
  sp = (sp - items * ptr) & ~15ull;
  if (top - sp > size) {
    tc_error_set(err, "initial stack does not fit in 0x%" PRIx64 " bytes",
                 size);
    free(str_addr);
    return -1;
  }

  size_t len = (size_t)(top - sp);
  uint8_t *buf = calloc(len, 1);
  if (!buf) {
    free(str_addr);
    tc_error_set(err, "out of memory building the stack");
    return -1;
  }
#define AT(addr) (buf + ((addr)-sp))
  for (size_t i = 0; i < argc; i++)
    memcpy(AT(str_addr[i]), argv[i], strlen(argv[i]) + 1);
  for (size_t i = 0; i < envc; i++)
    memcpy(AT(str_addr[argc + i]), envp[i], strlen(envp[i]) + 1);
  if (execfn)
    memcpy(AT(execfn_addr), execfn, strlen(execfn) + 1);
  if (platform_addr)
    memcpy(AT(platform_addr), platform, strlen(platform) + 1);
  if (random_addr)
    tc_emu_random(emu, AT(random_addr), 16);

  uint64_t w = sp;
#define PUT_WORD(v)                                                            \
  do {                                                                         \
    wr(AT(w), ptr, be, (v));                                                   \
    w += ptr;                                                                  \
  } while (0)
  PUT_WORD(argc);
  for (size_t i = 0; i < argc; i++)
    PUT_WORD(str_addr[i]);
  PUT_WORD(0);
  for (size_t i = 0; i < envc; i++)
    PUT_WORD(str_addr[argc + i]);
  PUT_WORD(0);
  for (size_t i = 0; i < nauxv; i++) {
    uint64_t type = auxv[2 * i], val = auxv[2 * i + 1];
    if (type == AT_RANDOM)
      val = random_addr;
    else if (type == AT_EXECFN)
      val = execfn_addr;
    else if (type == AT_PLATFORM)
      val = platform_addr;
    PUT_WORD(type);
    PUT_WORD(val);
  }
  PUT_WORD(AT_NULL);
  PUT_WORD(0);
#undef PUT_WORD
#undef AT
  free(str_addr);
  int rc = write_mem(emu, sp, buf, len, err);
  free(buf);
  if (rc < 0)
    return -1;
  /* SPARC's stack pointer is not the address of argc (initial_sp_below). */
  sp -= emu->arch->initial_sp_below;
  *sp_out = sp;
  return 0;
}

int tc_load_elf(tc_emu *emu, const tc_elf_image *img, const uint8_t *data,
                size_t size, const char *guest_path, const char *const *argv,
                const char *const *envp, tc_load_result *res, tc_error *err) {
  return tc_load_elf_interp(emu, img, data, size, guest_path, argv, envp, NULL,
                            res, err);
}

/* Maps the interpreter below the stack, where the kernel's top-down mmap
 * would: its relocation bias in *bias. */
static int load_interp(tc_emu *emu, const tc_elf_interp *in, uint64_t *bias,
                       tc_error *err) {
  const tc_elf_image *ii = in->img;
  if (ii->arch != tc_arch_base(emu->arch) || ii->has_interp) {
    tc_error_set(err, "%s: not a %s program interpreter", in->guest_path,
                 emu->arch->name);
    return -1;
  }
  for (size_t i = 0; i < ii->nsegs; i++) {
    const tc_elf_segment *s = &ii->segs[i];
    if (s->filesz &&
        (s->offset > in->size || s->filesz > in->size - s->offset)) {
      tc_error_set(err, "%s: ELF image does not match the file data",
                   in->guest_path);
      return -1;
    }
  }
  uint64_t span = ii->max_vaddr - ii->min_vaddr;
  uint64_t at =
      ii->type == ET_DYN ? tc_emu_find_free(emu, span) : ii->min_vaddr;
  if (ii->type == ET_DYN && at == 0) {
    tc_error_set(err, "%s: no room for the interpreter", in->guest_path);
    return -1;
  }
  *bias = at - ii->min_vaddr;
  if (map_segments(emu, ii, *bias, in->guest_path, err) < 0 ||
      fill_segments(emu, ii, in->data, in->size, *bias, err) < 0)
    return -1;
  return 0;
}

int tc_load_elf_interp(tc_emu *emu, const tc_elf_image *img,
                       const uint8_t *data, size_t size, const char *guest_path,
                       const char *const *argv, const char *const *envp,
                       const tc_elf_interp *interp, tc_load_result *res,
                       tc_error *err) {
  tc_load_result lr;
  if (tc_load_elf_exec(emu, img, data, size, guest_path, guest_path, argv, envp,
                       interp, &lr, err) < 0)
    return -1;
  tc_emu_set_reg(emu, emu->arch->pc_reg, lr.entry);
  tc_emu_set_reg(emu, emu->arch->sp_reg, lr.sp);
  if (res)
    *res = lr;
  return 0;
}

int tc_load_elf_exec(tc_emu *emu, const tc_elf_image *img, const uint8_t *data,
                     size_t size, const char *guest_path, const char *execfn,
                     const char *const *argv, const char *const *envp,
                     const tc_elf_interp *interp, tc_load_result *res,
                     tc_error *err) {
  if (!emu || !img || !data || !guest_path || !execfn || !img->arch) {
    tc_error_set(err, "tc_load_elf: missing emulator, image or path");
    return -1;
  }
  const tc_arch *arch = emu->arch;
  if (img->arch != tc_arch_base(arch)) {
    tc_error_set(err, "%s is a %s program but the emulator runs %s", guest_path,
                 img->arch->name, arch->name);
    return -1;
  }
  if (img->has_interp && !interp) {
    tc_error_set(err,
                 "%s: dynamically linked (interpreter %s), but no interpreter "
                 "was loaded",
                 guest_path, img->interp);
    return -1;
  }
  size_t plen = strlen(guest_path);
  if (plen == 0 || plen >= sizeof emu->exe_guest_path) {
    tc_error_set(err, "bad guest path length %zu", plen);
    return -1;
  }
  for (size_t i = 0; i < img->nsegs; i++) {
    const tc_elf_segment *s = &img->segs[i];
    if (s->filesz && (s->offset > size || s->filesz > size - s->offset)) {
      tc_error_set(err, "ELF image does not match the file data");
      return -1;
    }
  }

  uint64_t page = arch->page_size;
  uint64_t top = tc_loader_stack_top(arch);
  uint64_t bias = 0;
  if (img->type == ET_DYN)
    bias = (arch->ptr_size == 8 ? TC_PIE_BASE_64 : TC_PIE_BASE_32) -
           img->min_vaddr;
  uint64_t lo = img->min_vaddr + bias;
  uint64_t span = img->max_vaddr - img->min_vaddr;
  if (lo >= top || span > top - lo) {
    tc_error_set(err,
                 "program segments 0x%" PRIx64 "-0x%" PRIx64
                 " do not fit below the stack top 0x%" PRIx64,
                 img->min_vaddr, img->max_vaddr, top);
    return -1;
  }
  if (lo < page) {
    tc_error_set(err, "program maps the zero page (segment at 0x%" PRIx64 ")",
                 lo);
    return -1;
  }
  uint64_t brk = lo + span;

  uint64_t stack_bottom, stack_top;
  if (stack_range(emu, &stack_bottom, &stack_top, err) < 0)
    return -1;
  if (brk > stack_bottom) {
    tc_error_set(err,
                 "program segments 0x%" PRIx64 "-0x%" PRIx64
                 " overlap the stack at 0x%" PRIx64 "-0x%" PRIx64,
                 lo, brk, stack_bottom, stack_top);
    return -1;
  }
  if (map_segments(emu, img, bias, guest_path, err) < 0 ||
      fill_segments(emu, img, data, size, bias, err) < 0 ||
      tc_loader_map_stack(emu, img->stack_exec, err) < 0)
    return -1;
  uint64_t ibias = 0;
  if (img->has_interp && load_interp(emu, interp, &ibias, err) < 0)
    return -1;

  /* Linux (5.18+) gives an empty argv a single "" argument. */
  static const char *const empty_argv[] = {"", NULL};
  if (!argv || !argv[0])
    argv = empty_argv;
  size_t argc = 0, envc = 0;
  while (argv[argc])
    argc++;
  while (envp && envp[envc])
    envc++;

  uint64_t entry = img->entry + bias;
  uint64_t phdr = img->phdr_vaddr + bias;
  uint64_t auxv[] = {
      AT_HWCAP,
      arch->hwcap,
      AT_PAGESZ,
      page,
      AT_CLKTCK,
      TC_CLKTCK,
      AT_PHDR,
      phdr,
      AT_PHENT,
      arch->ptr_size == 8 ? sizeof(Elf64_Phdr) : sizeof(Elf32_Phdr),
      AT_PHNUM,
      img->phnum,
      AT_BASE,
      img->has_interp ? ibias : 0,
      AT_FLAGS,
      0,
      AT_ENTRY,
      entry,
      AT_UID,
      TC_LOADER_ID,
      AT_EUID,
      TC_LOADER_ID,
      AT_GID,
      TC_LOADER_ID,
      AT_EGID,
      TC_LOADER_ID,
      AT_SECURE,
      0,
      AT_RANDOM,
      0, /* filled by tc_loader_setup_stack */
      AT_HWCAP2,
      0,
      AT_EXECFN,
      0,
      AT_PLATFORM,
      0,
  };
  size_t nauxv = sizeof auxv / sizeof auxv[0] / 2;
  if (!arch->elf_platform)
    nauxv--; /* AT_PLATFORM is last */

  uint64_t sp;
  if (tc_loader_setup_stack(emu, execfn, argv, argc, envp, envc, auxv, nauxv,
                            &sp, err) < 0)
    return -1;

  uint64_t first_pc = img->has_interp ? interp->img->entry + ibias : entry;
  emu->brk_start = emu->brk_cur = brk;
  memcpy(emu->exe_guest_path, guest_path, plen + 1);
  if (res) {
    res->entry = first_pc;
    res->load_base = bias;
    res->sp = sp;
    res->phdr = phdr;
    res->brk = brk;
  }
  return 0;
}

/* ------------------------------------------------------------ files */

uint8_t *tc_loader_read_fd(int fd, const char *path, size_t *size,
                           tc_error *err) {
  FILE *f = fdopen(fd, "rb");
  if (!f) {
    tc_error_set(err, "%s: %s", path, strerror(errno));
    close(fd);
    return NULL;
  }
  struct stat st;
  if (fstat(fileno(f), &st) < 0 || !S_ISREG(st.st_mode)) {
    tc_error_set(err, "%s: not a regular file", path);
    fclose(f);
    return NULL;
  }
  if ((unsigned long long)st.st_size > TC_LOADER_MAX_FILE) {
    tc_error_set(err, "%s: too large (%lld bytes)", path,
                 (long long)st.st_size);
    fclose(f);
    return NULL;
  }
  size_t n = (size_t)st.st_size;
  uint8_t *data = malloc(n ? n : 1);
  if (!data || fread(data, 1, n, f) != n) {
    tc_error_set(err, "%s: cannot read: %s", path,
                 data ? strerror(errno) : "out of memory");
    free(data);
    fclose(f);
    return NULL;
  }
  fclose(f);
  *size = n;
  return data;
}

void tc_loader_interp_free(tc_interp_file *f) {
  free((void *)f->in.data);
  f->in.data = NULL;
}
