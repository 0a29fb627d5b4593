/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Loader tests: ELF parsing of real and malformed files, ELF and raw loading
 * into a real tc_emu, checked by reading guest memory back. */
#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loaders/loader.h"
#include "testutil.h"

/* Where Linux puts an x86-64 / i386 process's stack and mmap area (what the
 * arch tables, common/arch/x86/, must say). */
#define TC_STACK_TOP_64 0x7ffffffff000ull
#define TC_STACK_TOP_32 0xffffe000ull
#define TC_MMAP_TOP_64 0x7ffff7fff000ull
#define TC_MMAP_TOP_32 0xf7fff000ull

#define PAGE 4096ull
#define MUST(x)                                                                \
  do {                                                                         \
    if (!(x)) {                                                                \
      CU_FAIL_FATAL(#x);                                                       \
    }                                                                          \
  } while (0)

static uint8_t *guest_file(const char *name, size_t *len) {
  const char *path = tu_guest(name);
  if (!tu_have(path))
    return NULL;
  return tu_read_file(path, len);
}

/* ------------------------------------------------------- byte helpers */

static uint64_t get(const uint8_t *p, unsigned n, int be) {
  uint64_t v = 0;
  for (unsigned i = 0; i < n; i++)
    v |= (uint64_t)p[be ? n - 1 - i : i] << (8 * i);
  return v;
}

static void put(uint8_t *p, unsigned n, int be, uint64_t v) {
  for (unsigned i = 0; i < n; i++)
    p[be ? n - 1 - i : i] = (uint8_t)(v >> (8 * i));
}

/* Field offsets of the ELF header and program headers, by class. */
typedef struct layout {
  unsigned ptr, phoff, phentsize_off, phnum_off, phent;
  unsigned p_flags, p_offset, p_vaddr, p_filesz, p_memsz, p_align;
} layout;

static const layout L64 = {8, 32, 54, 56, 56, 4, 8, 16, 32, 40, 48};
static const layout L32 = {4, 28, 42, 44, 32, 24, 4, 8, 16, 20, 28};

static const layout *layout_of(const uint8_t *d) {
  return d[EI_CLASS] == ELFCLASS64 ? &L64 : &L32;
}

static uint8_t *phdr_at(uint8_t *d, unsigned i) {
  const layout *l = layout_of(d);
  uint64_t phoff = get(d + l->phoff, l->ptr, 0);
  return d + phoff + (uint64_t)i * l->phent;
}

/* Index of the n-th PT_LOAD header (file order). */
static int nth_load(uint8_t *d, int n) {
  const layout *l = layout_of(d);
  unsigned phnum = (unsigned)get(d + l->phnum_off, 2, 0);
  for (unsigned i = 0; i < phnum; i++)
    if (get(phdr_at(d, i), 4, 0) == PT_LOAD && n-- == 0)
      return (int)i;
  return -1;
}

/* ------------------------------------------------------- parsing guests */

typedef struct guest_case {
  const char *name;
  tc_arch_id arch;
  uint16_t type;
} guest_case;

static const guest_case guests[] = {
    {"hello64", TC_ARCH_X86_64, ET_EXEC},
    {"insns64", TC_ARCH_X86_64, ET_EXEC},
    {"loop64", TC_ARCH_X86_64, ET_EXEC},
    {"segv64", TC_ARCH_X86_64, ET_EXEC},
    {"ill64", TC_ARCH_X86_64, ET_EXEC},
    {"div64", TC_ARCH_X86_64, ET_EXEC},
    {"glibc64", TC_ARCH_X86_64, ET_EXEC},
    {"glibc64-pie", TC_ARCH_X86_64, ET_DYN},
    {"hello64-pie", TC_ARCH_X86_64, ET_DYN},
    {"hello32", TC_ARCH_X86, ET_EXEC},
    {"insns32", TC_ARCH_X86, ET_EXEC},
    {"loop32", TC_ARCH_X86, ET_EXEC},
    {"segv32", TC_ARCH_X86, ET_EXEC},
    {"glibc32", TC_ARCH_X86, ET_EXEC},
};

static void test_parse_guests(void) {
  int parsed = 0;
  for (size_t g = 0; g < sizeof guests / sizeof guests[0]; g++) {
    size_t n;
    uint8_t *d = guest_file(guests[g].name, &n);
    if (!d)
      continue;
    tc_elf_image img;
    tc_error err = {{0}};
    int rc = tc_elf_parse(d, n, &img, &err);
    if (rc != 0)
      fprintf(stderr, "%s: %s\n", guests[g].name, err.msg);
    CU_ASSERT_EQUAL_FATAL(rc, 0);
    parsed++;
    CU_ASSERT_PTR_NOT_NULL_FATAL(img.arch);
    CU_ASSERT_EQUAL(img.arch->id, guests[g].arch);
    CU_ASSERT_EQUAL(img.type, guests[g].type);
    CU_ASSERT_EQUAL(img.is64, guests[g].arch == TC_ARCH_X86_64);
    CU_ASSERT_EQUAL(img.big_endian, 0);
    CU_ASSERT_EQUAL(img.has_interp, 0);
    CU_ASSERT_EQUAL(img.stack_exec, 0); /* GNU_STACK is RW */
    CU_ASSERT_EQUAL(img.phentsize, img.is64 ? 56 : 32);

    /* Independent count of the non-empty PT_LOADs. */
    const layout *l = layout_of(d);
    size_t loads = 0;
    for (unsigned i = 0; i < img.phnum; i++) {
      uint8_t *ph = phdr_at(d, i);
      if (get(ph, 4, 0) == PT_LOAD && get(ph + l->p_memsz, l->ptr, 0))
        loads++;
    }
    CU_ASSERT_EQUAL(img.nsegs, loads);
    CU_ASSERT(img.nsegs >= 3);

    /* Entry inside an executable PT_LOAD; phdr inside the PT_LOAD whose
     * file bytes are the program headers. */
    int entry_in = 0, phdr_in = 0;
    for (size_t i = 0; i < img.nsegs; i++) {
      const tc_elf_segment *s = &img.segs[i];
      if (img.entry >= s->vaddr && img.entry < s->vaddr + s->memsz &&
          (s->prot & TC_PROT_EXEC))
        entry_in = 1;
      if (img.phdr_vaddr >= s->vaddr && img.phdr_vaddr < s->vaddr + s->filesz &&
          s->offset + (img.phdr_vaddr - s->vaddr) == img.phoff)
        phdr_in = 1;
      CU_ASSERT(s->filesz <= s->memsz);
      CU_ASSERT(s->offset + s->filesz <= n);
      if (i > 0)
        CU_ASSERT(s->vaddr >= img.segs[i - 1].vaddr + img.segs[i - 1].memsz);
    }
    CU_ASSERT(entry_in);
    CU_ASSERT(phdr_in);
    CU_ASSERT_EQUAL(img.min_vaddr % PAGE, 0);
    CU_ASSERT_EQUAL(img.max_vaddr % PAGE, 0);
    CU_ASSERT(img.min_vaddr <= img.entry && img.entry < img.max_vaddr);
    if (img.type == ET_DYN)
      CU_ASSERT_EQUAL(img.min_vaddr, 0);
    free(d);
  }
  CU_ASSERT(parsed >= 9); /* the 64-bit guests always exist */
}

/* ------------------------------------------------------- malformed files */

typedef struct mutation {
  const char *what;
  size_t truncate; /* 0: keep the size */
  void (*apply)(uint8_t *d, size_t n);
  const char *expect; /* substring of the message */
} mutation;

static void m_magic(uint8_t *d, size_t n) { d[1] = 'X'; }
static void m_class(uint8_t *d, size_t n) { d[EI_CLASS] = 7; }
static void m_class_none(uint8_t *d, size_t n) { d[EI_CLASS] = 0; }
static void m_data(uint8_t *d, size_t n) { d[EI_DATA] = 3; }
static void m_version(uint8_t *d, size_t n) { d[EI_VERSION] = 0; }
static void m_phoff_eof(uint8_t *d, size_t n) {
  const layout *l = layout_of(d);
  put(d + l->phoff, l->ptr, 0, n + 0x1000);
}
static void m_phoff_huge(uint8_t *d, size_t n) {
  const layout *l = layout_of(d);
  put(d + l->phoff, l->ptr, 0, l->ptr == 8 ? UINT64_MAX - 8 : UINT32_MAX - 8);
}
static void m_phoff_tail(uint8_t *d, size_t n) {
  const layout *l = layout_of(d);
  put(d + l->phoff, l->ptr, 0, n - 8); /* headers straddle EOF */
}
static void m_phnum_huge(uint8_t *d, size_t n) {
  put(d + layout_of(d)->phnum_off, 2, 0, 0xfff0);
}
static void m_phnum_xnum(uint8_t *d, size_t n) {
  put(d + layout_of(d)->phnum_off, 2, 0, PN_XNUM);
}
static void m_phnum_zero(uint8_t *d, size_t n) {
  put(d + layout_of(d)->phnum_off, 2, 0, 0);
}
static void m_phentsize(uint8_t *d, size_t n) {
  const layout *l = layout_of(d);
  put(d + l->phentsize_off, 2, 0, l->phent + 8);
}
static void m_phentsize_other(uint8_t *d, size_t n) {
  const layout *l = layout_of(d);
  put(d + l->phentsize_off, 2, 0, l->ptr == 8 ? 32 : 56);
}
static void m_seg_beyond_eof(uint8_t *d, size_t n) {
  uint8_t *ph = phdr_at(d, (unsigned)nth_load(d, 1));
  const layout *l = layout_of(d);
  put(ph + l->p_filesz, l->ptr, 0, n);
  put(ph + l->p_memsz, l->ptr, 0, n);
}
static void m_offset_overflow(uint8_t *d, size_t n) {
  uint8_t *ph = phdr_at(d, (unsigned)nth_load(d, 1));
  const layout *l = layout_of(d);
  uint64_t big = l->ptr == 8 ? UINT64_MAX - 0xfff : UINT32_MAX - 0xfff;
  put(ph + l->p_offset, l->ptr, 0, big);
  put(ph + l->p_vaddr, l->ptr, 0, big);
}
static void m_filesz_gt_memsz(uint8_t *d, size_t n) {
  uint8_t *ph = phdr_at(d, (unsigned)nth_load(d, 1));
  const layout *l = layout_of(d);
  put(ph + l->p_memsz, l->ptr, 0, get(ph + l->p_filesz, l->ptr, 0) - 1);
}
static void m_vaddr_overflow(uint8_t *d, size_t n) {
  int last = nth_load(d, 2);
  uint8_t *ph = phdr_at(d, (unsigned)last);
  const layout *l = layout_of(d);
  uint64_t off = get(ph + l->p_offset, l->ptr, 0);
  uint64_t top = l->ptr == 8 ? UINT64_MAX : UINT32_MAX;
  put(ph + l->p_vaddr, l->ptr, 0, (top & ~0xfffull) + (off & 0xfff));
  put(ph + l->p_memsz, l->ptr, 0, get(ph + l->p_filesz, l->ptr, 0) + 0x2000);
}
static void m_vaddr_overflow_round(uint8_t *d, size_t n) {
  /* end fits, but rounding it up to a page does not */
  int last = nth_load(d, 2);
  uint8_t *ph = phdr_at(d, (unsigned)last);
  const layout *l = layout_of(d);
  uint64_t top = l->ptr == 8 ? UINT64_MAX : UINT32_MAX;
  put(ph + l->p_offset, l->ptr, 0, 0);
  put(ph + l->p_filesz, l->ptr, 0, 0);
  put(ph + l->p_vaddr, l->ptr, 0, top & ~0xfffull);
  put(ph + l->p_memsz, l->ptr, 0, 0xff0);
}
static void m_no_load(uint8_t *d, size_t n) {
  for (int i; (i = nth_load(d, 0)) >= 0;)
    put(phdr_at(d, (unsigned)i), 4, 0, PT_NOTE);
}
static void m_et_rel(uint8_t *d, size_t n) { put(d + 16, 2, 0, ET_REL); }
static void m_et_core(uint8_t *d, size_t n) { put(d + 16, 2, 0, ET_CORE); }
static void m_et_weird(uint8_t *d, size_t n) { put(d + 16, 2, 0, 0x1234); }
static void m_machine_unknown(uint8_t *d, size_t n) {
  put(d + 18, 2, 0, 0x7777);
}
static void m_machine_riscv(uint8_t *d, size_t n) {
  put(d + 18, 2, 0, EM_RISCV);
}
static void m_machine_ppc(uint8_t *d, size_t n) { put(d + 18, 2, 0, EM_PPC); }

static void m_swap_order(uint8_t *d, size_t n) { d[EI_DATA] = ELFDATA2MSB; }
static void m_align_npot(uint8_t *d, size_t n) {
  uint8_t *ph = phdr_at(d, (unsigned)nth_load(d, 1));
  put(ph + layout_of(d)->p_align, layout_of(d)->ptr, 0, 0x1800);
}
static void m_incongruent(uint8_t *d, size_t n) {
  uint8_t *ph = phdr_at(d, (unsigned)nth_load(d, 1));
  const layout *l = layout_of(d);
  put(ph + l->p_vaddr, l->ptr, 0, get(ph + l->p_vaddr, l->ptr, 0) + 0x10);
}
static void m_overlap(uint8_t *d, size_t n) {
  /* second PT_LOAD moved onto the first */
  uint8_t *a = phdr_at(d, (unsigned)nth_load(d, 0));
  uint8_t *b = phdr_at(d, (unsigned)nth_load(d, 1));
  const layout *l = layout_of(d);
  uint64_t off = get(b + l->p_offset, l->ptr, 0);
  put(b + l->p_vaddr, l->ptr, 0, get(a + l->p_vaddr, l->ptr, 0) + off % PAGE);
}
static void m_entry_outside(uint8_t *d, size_t n) {
  put(d + 24, layout_of(d)->ptr, 0, 0x7fff0000);
}

static const mutation mutations[] = {
    {"empty", 0, NULL, "only 0 bytes"},
    {"4 bytes", 4, NULL, "truncated"},
    {"16 bytes", 16, NULL, "truncated"},
    {"header minus one", 0, NULL, "truncated"}, /* size set per class */
    {"header only", 0, NULL, "truncated ELF: program headers end at 0x"},
    {"bad magic", 0, m_magic, "bad magic"},
    {"bad class", 0, m_class, "bad ELF class 7"},
    {"class none", 0, m_class_none, "bad ELF class 0"},
    {"bad data encoding", 0, m_data, "data encoding"},
    {"bad ident version", 0, m_version, "version"},
    {"e_phoff beyond EOF", 0, m_phoff_eof, "beyond"},
    {"e_phoff near 2^n", 0, m_phoff_huge, "truncated"},
    {"phdrs straddle EOF", 0, m_phoff_tail, "program headers end at"},
    {"phnum huge", 0, m_phnum_huge, "program headers end at"},
    {"phnum PN_XNUM", 0, m_phnum_xnum, "extended"},
    {"phnum zero", 0, m_phnum_zero, "no program headers"},
    {"phentsize +8", 0, m_phentsize, "e_phentsize"},
    {"phentsize of other class", 0, m_phentsize_other, "e_phentsize"},
    {"segment beyond EOF", 0, m_seg_beyond_eof, "ends beyond the file"},
    {"p_offset near 2^n", 0, m_offset_overflow, "ends beyond the file"},
    {"filesz > memsz", 0, m_filesz_gt_memsz, "exceeds p_memsz"},
    {"vaddr overflow", 0, m_vaddr_overflow, "overflows the"},
    {"vaddr page-round overflow", 0, m_vaddr_overflow_round, "overflows the"},
    {"no PT_LOAD", 0, m_no_load, "no PT_LOAD"},
    {"ET_REL", 0, m_et_rel, "ET_REL"},
    {"ET_CORE", 0, m_et_core, "core dump"},
    {"unknown e_type", 0, m_et_weird, "unsupported ELF type 4660"},
    {"unknown machine", 0, m_machine_unknown, "unknown e_machine 30583"},
    {"RISC-V machine", 0, m_machine_riscv, "RISC-V"},
    {"PowerPC machine", 0, m_machine_ppc, "PowerPC"},
    {"byte order flipped", 0, m_swap_order, "unsupported"},
    {"p_align not a power of two", 0, m_align_npot, "power of two"},
    {"vaddr/offset incongruent", 0, m_incongruent, "modulo the page size"},
    {"overlapping PT_LOADs", 0, m_overlap, "overlaps"},
    {"entry outside segments", 0, m_entry_outside, "entry point 0x7fff0000"},
};

static int run_mutations(const char *name) {
  size_t n;
  uint8_t *orig = guest_file(name, &n);
  if (!orig)
    return 0;
  int ran = 0;
  for (size_t m = 0; m < sizeof mutations / sizeof mutations[0]; m++) {
    const mutation *mu = &mutations[m];
    size_t len = n;
    size_t ehsize = orig[EI_CLASS] == ELFCLASS64 ? 64 : 52;
    if (!mu->apply) {
      len = mu->truncate;
      if (!strcmp(mu->what, "header minus one"))
        len = ehsize - 1;
      else if (!strcmp(mu->what, "header only"))
        len = ehsize;
    }
    /* An exact-size copy so ASan sees any read past the end. */
    uint8_t *d = malloc(len ? len : 1);
    MUST(d);
    memcpy(d, orig, len);
    if (mu->apply)
      mu->apply(d, len);
    tc_elf_image img;
    tc_error err = {{0}};
    int rc = tc_elf_parse(d, len, &img, &err);
    if (rc != -1 || !strstr(err.msg, mu->expect))
      fprintf(stderr, "%s / %s: rc %d, message \"%s\" (want \"%s\")\n", name,
              mu->what, rc, err.msg, mu->expect);
    CU_ASSERT_EQUAL(rc, -1);
    CU_ASSERT(err.msg[0] != 0);
    CU_ASSERT(strchr(err.msg, '\n') == NULL);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, mu->expect));
    free(d);
    ran++;
  }
  free(orig);
  return ran;
}

static void test_malformed(void) {
  CU_ASSERT_EQUAL(run_mutations("hello64"), 35);
  run_mutations("hello32");
  run_mutations("glibc64");
  run_mutations("hello64-pie");
}

/* Truncating at every length: never crashes; fails exactly while the
 * header, program headers or some segment's file bytes are cut. */
static void truncate_all(const char *name) {
  size_t n;
  uint8_t *orig = guest_file(name, &n);
  if (!orig)
    return;
  tc_elf_image full;
  tc_error err;
  MUST(tc_elf_parse(orig, n, &full, &err) == 0);
  uint64_t needed = full.phoff + (uint64_t)full.phnum * full.phentsize;
  for (size_t i = 0; i < full.nsegs; i++)
    if (full.segs[i].offset + full.segs[i].filesz > needed)
      needed = full.segs[i].offset + full.segs[i].filesz;
  /* Small files: the truncated bytes sit at the very end of a heap block,
   * so ASan catches any read past `len`. Big files (every length would be
   * quadratic to copy) reuse the original buffer. */
  int exact = n <= 64 * 1024;
  uint8_t *block = exact ? malloc(n) : NULL;
  unsigned bad = 0;
  for (size_t len = 0; len <= n; len++) {
    const uint8_t *d = orig;
    if (exact) {
      memcpy(block + (n - len), orig, len);
      d = block + (n - len);
    }
    tc_elf_image img;
    err.msg[0] = 0;
    int rc = tc_elf_parse(d, len, &img, &err);
    int want = len >= needed ? 0 : -1;
    if (rc != want || (rc < 0 && !err.msg[0]))
      bad++;
  }
  CU_ASSERT_EQUAL(bad, 0);
  free(block);
  free(orig);
}

static void test_truncate_every_length(void) {
  truncate_all("hello64");
  truncate_all("hello32");
  truncate_all("hello64-pie");
  truncate_all("glibc64");
}

/* ------------------------------------------------------- synthetic ELFs */

typedef struct syn_phdr {
  uint32_t type, flags;
  uint64_t offset, vaddr, filesz, memsz, align;
} syn_phdr;

/* Builds an ELF: header, program headers right after it, file size `size`
 * (bytes after the headers are a recognisable pattern). */
static uint8_t *build_elf(int is64, int be, uint16_t machine, uint16_t type,
                          uint64_t entry, const syn_phdr *ph, unsigned n,
                          size_t size) {
  const layout *l = is64 ? &L64 : &L32;
  unsigned eh = is64 ? 64 : 52;
  uint8_t *d = calloc(size, 1);
  if (!d)
    return NULL;
  for (size_t i = eh + n * l->phent; i < size; i++)
    d[i] = (uint8_t)(i * 7 + 1);
  memcpy(d, ELFMAG, SELFMAG);
  d[EI_CLASS] = is64 ? ELFCLASS64 : ELFCLASS32;
  d[EI_DATA] = be ? ELFDATA2MSB : ELFDATA2LSB;
  d[EI_VERSION] = EV_CURRENT;
  put(d + 16, 2, be, type);
  put(d + 18, 2, be, machine);
  put(d + 20, 4, be, EV_CURRENT);
  put(d + 24, l->ptr, be, entry);
  put(d + l->phoff, l->ptr, be, eh);
  put(d + l->phentsize_off - 2, 2, be, eh); /* e_ehsize */
  put(d + l->phentsize_off, 2, be, l->phent);
  put(d + l->phnum_off, 2, be, n);
  for (unsigned i = 0; i < n; i++) {
    uint8_t *p = d + eh + i * l->phent;
    put(p, 4, be, ph[i].type);
    put(p + l->p_flags, 4, be, ph[i].flags);
    put(p + l->p_offset, l->ptr, be, ph[i].offset);
    put(p + l->p_vaddr, l->ptr, be, ph[i].vaddr);
    put(p + l->p_vaddr + l->ptr, l->ptr, be, ph[i].vaddr); /* p_paddr */
    put(p + l->p_filesz, l->ptr, be, ph[i].filesz);
    put(p + l->p_memsz, l->ptr, be, ph[i].memsz);
    put(p + l->p_align, l->ptr, be, ph[i].align);
  }
  return d;
}

#define SYN_SIZE 0x3000

static int syn_parse(int is64, int be, uint16_t machine, uint16_t type,
                     uint64_t entry, const syn_phdr *ph, unsigned n,
                     tc_elf_image *img, tc_error *err) {
  uint8_t *d = build_elf(is64, be, machine, type, entry, ph, n, SYN_SIZE);
  if (!d)
    return -2;
  for (unsigned i = 0; i < n; i++) /* PT_INTERP's text, at 0x200 */
    if (ph[i].type == PT_INTERP)
      memcpy(d + 0x200, "/lib/ld.so.2\0\0\0", 16);
  int rc = tc_elf_parse(d, SYN_SIZE, img, err);
  free(d);
  return rc;
}

static const syn_phdr text = {PT_LOAD, PF_R | PF_X, 0,     0x400000,
                              0x1800,  0x1800,      0x1000};

static void test_synthetic_headers(void) {
  tc_elf_image img;
  tc_error err = {{0}};

  /* PT_PHDR wins; PT_GNU_STACK with X; PT_INTERP noticed. */
  syn_phdr ph[] = {
      {PT_PHDR, PF_R, 64, 0x400040, 4 * 56, 4 * 56, 8},
      {PT_INTERP, PF_R, 0x200, 0x400200, 0x10, 0x10, 1},
      text,
      {PT_GNU_STACK, PF_R | PF_W | PF_X, 0, 0, 0, 0, 16},
  };
  CU_ASSERT_EQUAL(
      syn_parse(1, 0, EM_X86_64, ET_EXEC, 0x401000, ph, 4, &img, &err), 0);
  CU_ASSERT_EQUAL(img.phdr_vaddr, 0x400040);
  CU_ASSERT_EQUAL(img.has_interp, 1);
  CU_ASSERT_STRING_EQUAL(img.interp, "/lib/ld.so.2");
  CU_ASSERT_EQUAL(img.stack_exec, 1);
  CU_ASSERT_EQUAL(img.nsegs, 1);
  CU_ASSERT_EQUAL(img.segs[0].prot, TC_PROT_READ | TC_PROT_EXEC);
  CU_ASSERT_EQUAL(img.max_vaddr, 0x402000);

  /* No PT_GNU_STACK: executable stack, as Linux defaults. */
  CU_ASSERT_EQUAL(
      syn_parse(1, 0, EM_X86_64, ET_EXEC, 0x400100, &text, 1, &img, &err), 0);
  CU_ASSERT_EQUAL(img.stack_exec, 1);
  CU_ASSERT_EQUAL(img.phdr_vaddr, 0x400040); /* derived from e_phoff */

  /* Exactly 32 PT_LOADs parse, 33 do not. */
  syn_phdr many[33];
  for (unsigned i = 0; i < 33; i++)
    many[i] = (syn_phdr){PT_LOAD, PF_R,  0,     0x400000 + i * 0x10000ull,
                         0x100,   0x100, 0x1000};
  many[0].flags = PF_R | PF_X;
  CU_ASSERT_EQUAL(
      syn_parse(1, 0, EM_X86_64, ET_EXEC, 0x400000, many, 32, &img, &err), 0);
  CU_ASSERT_EQUAL(img.nsegs, 32);
  CU_ASSERT_EQUAL(
      syn_parse(1, 0, EM_X86_64, ET_EXEC, 0x400000, many, 33, &img, &err), -1);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "too many PT_LOAD"));

  /* Architectures by machine/class/byte order; the ones not in the arch
   * table yet are refused with their name. */
  struct {
    int is64, be;
    uint16_t machine;
    tc_arch_id id;
    const char *name;
  } archs[] = {
      {0, 0, EM_ARM, TC_ARCH_ARM, "ARM (e_machine 40)"},
      {1, 0, EM_AARCH64, TC_ARCH_ARM64, "AArch64 (e_machine 183)"},
      {0, 1, EM_MIPS, TC_ARCH_MIPS, "MIPS (e_machine 8)"},
      {0, 0, EM_MIPS, TC_ARCH_MIPSEL, "MIPS (e_machine 8)"},
      {0, 1, EM_SPARC, TC_ARCH_SPARC, "SPARC (e_machine 2)"},
      {1, 1, EM_SPARCV9, TC_ARCH_SPARC64, "SPARC V9 (e_machine 43)"},
      {0, 0, EM_386, TC_ARCH_X86, "x86"},
      {1, 0, EM_X86_64, TC_ARCH_X86_64, "x86_64"},
  };
  for (size_t i = 0; i < sizeof archs / sizeof archs[0]; i++) {
    err.msg[0] = 0;
    int rc = syn_parse(archs[i].is64, archs[i].be, archs[i].machine, ET_EXEC,
                       0x400000, &text, 1, &img, &err);
    const tc_arch *a = tc_arch_by_id(archs[i].id);
    if (a) {
      CU_ASSERT_EQUAL(rc, 0);
      CU_ASSERT_PTR_EQUAL(img.arch, a);
      CU_ASSERT_EQUAL(img.big_endian, archs[i].be);
      CU_ASSERT_EQUAL(img.entry, 0x400000);
      CU_ASSERT_EQUAL(img.segs[0].filesz, 0x1800);
    } else {
      CU_ASSERT_EQUAL(rc, -1);
      CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "unsupported architecture"));
      CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, archs[i].name));
    }
  }
  /* Wrong class or byte order for a known machine. */
  CU_ASSERT_EQUAL(
      syn_parse(0, 0, EM_X86_64, ET_EXEC, 0x400000, &text, 1, &img, &err), -1);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "32-bit x86_64"));
  CU_ASSERT_EQUAL(
      syn_parse(1, 1, EM_X86_64, ET_EXEC, 0x400000, &text, 1, &img, &err), -1);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "big-endian"));
  /* mips64 is little-endian n64 only */
  CU_ASSERT_EQUAL(
      syn_parse(1, 1, EM_MIPS, ET_EXEC, 0x400000, &text, 1, &img, &err), -1);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "big-endian 64-bit MIPS"));
  CU_ASSERT_EQUAL(
      syn_parse(1, 0, EM_MIPS, ET_EXEC, 0x400000, &text, 1, &img, &err), 0);
  CU_ASSERT_EQUAL(img.arch->id, TC_ARCH_MIPS64EL);
  /* mips n32 (a 32-bit ELF with EF_MIPS_ABI2) is refused by name */
  {
    syn_phdr t32 = {PT_LOAD, PF_R | PF_X, 0, 0x400000, 0x800, 0x800, 0x1000};
    uint8_t *d = build_elf(0, 1, EM_MIPS, ET_EXEC, 0x400000, &t32, 1, SYN_SIZE);
    CU_ASSERT_PTR_NOT_NULL_FATAL(d);
    CU_ASSERT_EQUAL(tc_elf_parse(d, SYN_SIZE, &img, &err), 0);
    CU_ASSERT_EQUAL(img.arch->id, TC_ARCH_MIPS);
    put(d + 36, 4, 1, 0x20); /* e_flags: EF_MIPS_ABI2 */
    CU_ASSERT_EQUAL(tc_elf_parse(d, SYN_SIZE, &img, &err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "mips n32 ABI"));
    free(d);
  }

  /* 32-bit: a segment running past 4 GiB. */
  syn_phdr hi32 = {PT_LOAD, PF_R | PF_X, 0, 0xfffff000, 0x100, 0x2000, 0x1000};
  CU_ASSERT_EQUAL(
      syn_parse(0, 0, EM_386, ET_EXEC, 0xfffff000, &hi32, 1, &img, &err), -1);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "32-bit address space"));

  /* Empty PT_LOADs are skipped, as Linux does. */
  syn_phdr with_empty[] = {{PT_LOAD, PF_R, 0, 0x300000, 0, 0, 0x1000}, text};
  CU_ASSERT_EQUAL(
      syn_parse(1, 0, EM_X86_64, ET_EXEC, 0x400000, with_empty, 2, &img, &err),
      0);
  CU_ASSERT_EQUAL(img.nsegs, 1);
  CU_ASSERT_EQUAL(img.min_vaddr, 0x400000);
}

/* ------------------------------------------------------- loading */

static tc_emu *new_emu(tc_arch_id id, uint64_t seed, uint64_t stack_size) {
  tc_options opt;
  tc_options_init(&opt);
  opt.seed = seed;
  opt.stack_size = stack_size;
  tc_error err = {{0}};
  tc_emu *emu = tc_emu_new(tc_arch_by_id(id), &opt, &err);
  if (!emu)
    fprintf(stderr, "tc_emu_new: %s\n", err.msg);
  return emu;
}

static uint64_t rd_word(tc_emu *emu, uint64_t addr) {
  uint8_t b[8] = {0};
  unsigned ptr = emu->arch->ptr_size;
  CU_ASSERT_EQUAL(tc_emu_read(emu, addr, b, ptr), 0);
  return get(b, ptr, emu->arch->big_endian);
}

static int str_at(tc_emu *emu, uint64_t addr, const char *want) {
  char buf[512];
  if (tc_emu_read_str(emu, addr, buf, sizeof buf) != 0)
    return 0;
  return strcmp(buf, want) == 0;
}

static const uint64_t aux_order[] = {
    AT_HWCAP, AT_PAGESZ, AT_CLKTCK, AT_PHDR,   AT_PHENT,  AT_PHNUM,
    AT_BASE,  AT_FLAGS,  AT_ENTRY,  AT_UID,    AT_EUID,   AT_GID,
    AT_EGID,  AT_SECURE, AT_RANDOM, AT_HWCAP2, AT_EXECFN, AT_PLATFORM};
#define NAUX (sizeof aux_order / sizeof aux_order[0])

/* Loads a guest and checks everything a process start promises. */
static void check_guest_load(const char *name, tc_arch_id id) {
  size_t n;
  uint8_t *d = guest_file(name, &n);
  if (!d)
    return;
  tc_elf_image img;
  tc_error err = {{0}};
  MUST(tc_elf_parse(d, n, &img, &err) == 0);
  tc_emu *emu = new_emu(id, 42, 0);
  MUST(emu);
  const char *path = "/guest/bin/prog";
  const char *argv[] = {"prog", "first arg", "", "x", NULL};
  const char *envp[] = {"HOME=/root", "A=1", NULL};
  tc_load_result res;
  int rc = tc_load_elf(emu, &img, d, n, path, argv, envp, &res, &err);
  if (rc)
    fprintf(stderr, "%s: %s\n", name, err.msg);
  MUST(rc == 0);

  unsigned ptr = emu->arch->ptr_size;
  int is64 = ptr == 8;
  uint64_t bias = img.type == ET_DYN
                      ? (is64 ? TC_PIE_BASE_64 : TC_PIE_BASE_32) - img.min_vaddr
                      : 0;
  CU_ASSERT_EQUAL(res.load_base, bias);
  CU_ASSERT_EQUAL(res.entry, img.entry + bias);
  CU_ASSERT_EQUAL(tc_emu_reg(emu, emu->arch->pc_reg), res.entry);
  CU_ASSERT_EQUAL(tc_emu_reg(emu, emu->arch->sp_reg), res.sp);
  CU_ASSERT_EQUAL(res.sp % 16, 0);
  CU_ASSERT_EQUAL(res.brk, img.max_vaddr + bias);
  CU_ASSERT_EQUAL(emu->brk_start, res.brk);
  CU_ASSERT_EQUAL(emu->brk_cur, res.brk);
  CU_ASSERT_EQUAL(emu->stack_top, is64 ? TC_STACK_TOP_64 : TC_STACK_TOP_32);
  CU_ASSERT_EQUAL(emu->mmap_top, is64 ? TC_MMAP_TOP_64 : TC_MMAP_TOP_32);
  CU_ASSERT_STRING_EQUAL(emu->exe_guest_path, path);

  /* Segments: file bytes, zeroed bss (with the rest of its page), prot. */
  uint8_t *mem = malloc(img.max_vaddr - img.min_vaddr);
  MUST(mem);
  for (size_t i = 0; i < img.nsegs; i++) {
    const tc_elf_segment *s = &img.segs[i];
    uint64_t va = s->vaddr + bias;
    uint64_t zero_end = (va + s->memsz + PAGE - 1) & ~(PAGE - 1);
    if (s->memsz == s->filesz)
      zero_end = va + s->memsz;
    MUST(tc_emu_read(emu, va, mem, zero_end - va) == 0);
    CU_ASSERT_EQUAL(memcmp(mem, d + s->offset, s->filesz), 0);
    int bss_clean = 1;
    for (uint64_t k = s->filesz; k < zero_end - va; k++)
      if (mem[k])
        bss_clean = 0;
    if (s->memsz > s->filesz) /* the following page-tail too */
      CU_ASSERT(bss_clean);
    const tc_region *r = tc_emu_region_at(emu, va);
    MUST(r);
    CU_ASSERT_EQUAL(r->prot, s->prot);
    CU_ASSERT_STRING_EQUAL(r->name, path);
    CU_ASSERT(r->start <= va && r->end >= va + s->memsz);
  }
  free(mem);
  const tc_region *stack = tc_emu_region_at(emu, res.sp);
  MUST(stack);
  CU_ASSERT_STRING_EQUAL(stack->name, "[stack]");
  CU_ASSERT_EQUAL(stack->prot, TC_PROT_READ | TC_PROT_WRITE);
  CU_ASSERT_EQUAL(stack->end, emu->stack_top);
  CU_ASSERT_EQUAL(stack->end - stack->start, 8ull << 20);

  /* argc, argv, envp. */
  uint64_t sp = res.sp;
  CU_ASSERT_EQUAL(rd_word(emu, sp), 4);
  uint64_t a[4];
  for (int i = 0; i < 4; i++) {
    a[i] = rd_word(emu, sp + ptr * (1 + i));
    CU_ASSERT(str_at(emu, a[i], argv[i]));
  }
  CU_ASSERT_EQUAL(rd_word(emu, sp + ptr * 5), 0);
  uint64_t e0 = rd_word(emu, sp + ptr * 6), e1 = rd_word(emu, sp + ptr * 7);
  CU_ASSERT(str_at(emu, e0, envp[0]));
  CU_ASSERT(str_at(emu, e1, envp[1]));
  CU_ASSERT_EQUAL(rd_word(emu, sp + ptr * 8), 0);
  /* Linux packs the strings: argv[0] lowest, then envp, execfn, and one
   * zero word below the top. */
  CU_ASSERT_EQUAL(a[1], a[0] + 5);
  CU_ASSERT_EQUAL(a[2], a[1] + 10);
  CU_ASSERT_EQUAL(a[3], a[2] + 1);
  CU_ASSERT_EQUAL(e0, a[3] + 2);
  CU_ASSERT_EQUAL(e1, e0 + 11);
  uint64_t execfn = emu->stack_top - ptr - strlen(path) - 1;
  CU_ASSERT_EQUAL(execfn, e1 + 4);
  CU_ASSERT_EQUAL(rd_word(emu, emu->stack_top - ptr), 0);

  /* auxv: exactly Linux's order (no vDSO), with the right values. */
  uint64_t aux = sp + ptr * 9;
  size_t k = 0;
  uint64_t random = 0, platform = 0, phdr = 0;
  for (;; k++) {
    uint64_t type = rd_word(emu, aux + 2 * ptr * k);
    uint64_t val = rd_word(emu, aux + 2 * ptr * k + ptr);
    if (type == AT_NULL) {
      CU_ASSERT_EQUAL(val, 0);
      break;
    }
    MUST(k < NAUX);
    CU_ASSERT_EQUAL(type, aux_order[k]);
    switch (type) {
    case AT_HWCAP:
      CU_ASSERT_EQUAL(val, 0x178bfbff);
      break;
    case AT_PAGESZ:
      CU_ASSERT_EQUAL(val, 4096);
      break;
    case AT_CLKTCK:
      CU_ASSERT_EQUAL(val, 100);
      break;
    case AT_PHDR:
      phdr = val;
      CU_ASSERT_EQUAL(val, res.phdr);
      break;
    case AT_PHENT:
      CU_ASSERT_EQUAL(val, is64 ? 56 : 32);
      break;
    case AT_PHNUM:
      CU_ASSERT_EQUAL(val, img.phnum);
      break;
    case AT_ENTRY:
      CU_ASSERT_EQUAL(val, res.entry);
      break;
    case AT_UID:
    case AT_EUID:
    case AT_GID:
    case AT_EGID:
      CU_ASSERT_EQUAL(val, 1000);
      break;
    case AT_RANDOM:
      random = val;
      break;
    case AT_EXECFN:
      CU_ASSERT_EQUAL(val, execfn);
      CU_ASSERT(str_at(emu, val, path));
      break;
    case AT_PLATFORM:
      platform = val;
      CU_ASSERT(str_at(emu, val, is64 ? "x86_64" : "i686"));
      break;
    default:
      CU_ASSERT_EQUAL(val, 0); /* BASE, FLAGS, SECURE, HWCAP2 */
    }
  }
  CU_ASSERT_EQUAL(k, NAUX);
  /* Above the auxv: random bytes, then the platform string aligned below
   * the argument strings. */
  uint64_t aux_end = aux + 2 * ptr * (k + 1);
  CU_ASSERT(aux_end <= random);
  CU_ASSERT(aux_end + 16 > random); /* only sp rounding in between */
  CU_ASSERT_EQUAL(random + 16, platform);
  CU_ASSERT_EQUAL((platform + strlen(is64 ? "x86_64" : "i686") + 1) % 16, 0);
  CU_ASSERT((a[0] & ~15ull) == platform + strlen(is64 ? "x86_64" : "i686") + 1);
  uint8_t rnd[16];
  CU_ASSERT_EQUAL(tc_emu_read(emu, random, rnd, 16), 0);
  int nonzero = 0;
  for (int i = 0; i < 16; i++)
    nonzero |= rnd[i];
  CU_ASSERT(nonzero);

  /* AT_PHDR: the program headers, in mapped memory. */
  size_t phsize = (size_t)img.phnum * img.phentsize;
  uint8_t *ph = malloc(phsize);
  MUST(ph);
  CU_ASSERT_EQUAL(tc_emu_read(emu, phdr, ph, phsize), 0);
  CU_ASSERT_EQUAL(memcmp(ph, d + img.phoff, phsize), 0);
  free(ph);
  tc_emu_free(emu);
  free(d);
}

static void test_load_hello64(void) {
  check_guest_load("hello64", TC_ARCH_X86_64);
}
static void test_load_hello32(void) {
  check_guest_load("hello32", TC_ARCH_X86);
}
static void test_load_pie(void) {
  check_guest_load("hello64-pie", TC_ARCH_X86_64);
  check_guest_load("glibc64-pie", TC_ARCH_X86_64);
}
static void test_load_bss(void) {
  check_guest_load("loop64", TC_ARCH_X86_64); /* pure bss segment */
  check_guest_load("loop32", TC_ARCH_X86);
  check_guest_load("glibc64", TC_ARCH_X86_64); /* data + bss in one */
  check_guest_load("glibc32", TC_ARCH_X86);
}

/* Two segments sharing a page: mapped once with the union of rights, each
 * keeps its bytes; bss after data zeroed to the page end. */
static void test_load_shared_page(void) {
  syn_phdr ph[] = {
      {PT_LOAD, PF_R | PF_X, 0, 0x400000, 0x1800, 0x1800, 0x1000},
      {PT_LOAD, PF_R | PF_W, 0x1800, 0x401800, 0x400, 0x1000, 0x1000},
      {PT_GNU_STACK, PF_R | PF_W, 0, 0, 0, 0, 16},
  };
  uint8_t *d = build_elf(1, 0, EM_X86_64, ET_EXEC, 0x400100, ph, 3, SYN_SIZE);
  MUST(d);
  tc_elf_image img;
  tc_error err = {{0}};
  MUST(tc_elf_parse(d, SYN_SIZE, &img, &err) == 0);
  tc_emu *emu = new_emu(TC_ARCH_X86_64, 1, 0);
  MUST(emu);
  const char *argv[] = {"syn", NULL};
  tc_load_result res;
  int rc = tc_load_elf(emu, &img, d, SYN_SIZE, "/syn", argv, NULL, &res, &err);
  if (rc)
    fprintf(stderr, "shared page: %s\n", err.msg);
  MUST(rc == 0);
  const tc_region *r0 = tc_emu_region_at(emu, 0x400000);
  const tc_region *r1 = tc_emu_region_at(emu, 0x401000);
  const tc_region *r2 = tc_emu_region_at(emu, 0x402000);
  MUST(r0 && r1 && r2);
  CU_ASSERT_EQUAL(r0->prot, TC_PROT_READ | TC_PROT_EXEC);
  CU_ASSERT_EQUAL(r0->end, 0x401000);
  CU_ASSERT_EQUAL(r1->prot, TC_PROT_READ | TC_PROT_WRITE | TC_PROT_EXEC);
  CU_ASSERT_EQUAL(r1->end, 0x402000);
  CU_ASSERT_EQUAL(r1->file_offset, 0x1000);
  CU_ASSERT_EQUAL(r2->prot, TC_PROT_READ | TC_PROT_WRITE);
  CU_ASSERT_EQUAL(r2->end, 0x403000);
  uint8_t mem[0x3000];
  MUST(tc_emu_read(emu, 0x400000, mem, sizeof mem) == 0);
  CU_ASSERT_EQUAL(memcmp(mem, d, 0x1c00), 0);
  int zero = 1;
  for (size_t i = 0x1c00; i < sizeof mem; i++)
    zero &= mem[i] == 0;
  CU_ASSERT(zero);
  CU_ASSERT_EQUAL(res.brk, 0x403000);
  CU_ASSERT_EQUAL(res.phdr, 0x400040);
  /* No argv entry beyond argv[0]; envp empty. */
  CU_ASSERT_EQUAL(rd_word(emu, res.sp), 1);
  CU_ASSERT_EQUAL(rd_word(emu, res.sp + 16), 0);
  CU_ASSERT_EQUAL(rd_word(emu, res.sp + 24), 0);
  tc_emu_free(emu);
  free(d);
}

static void test_load_refusals(void) {
  tc_elf_image img;
  tc_error err = {{0}};
  tc_load_result res;
  const char *argv[] = {"p", NULL};

  /* Dynamic executables. */
  syn_phdr dyn[] = {{PT_INTERP, PF_R, 0x200, 0x400200, 0x10, 0x10, 1}, text};
  uint8_t *d = build_elf(1, 0, EM_X86_64, ET_EXEC, 0x400000, dyn, 2, SYN_SIZE);
  MUST(d);
  /* A PT_INTERP that is not a NUL-terminated path is malformed. */
  CU_ASSERT_EQUAL(tc_elf_parse(d, SYN_SIZE, &img, &err), -1);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "PT_INTERP"));
  memcpy(d + 0x200, "/lib/ld.so.2/xyz", 16); /* no terminating NUL */
  CU_ASSERT_EQUAL(tc_elf_parse(d, SYN_SIZE, &img, &err), -1);
  memcpy(d + 0x200, "/lib/ld-x.so.2\0", 16);
  MUST(tc_elf_parse(d, SYN_SIZE, &img, &err) == 0);
  tc_emu *emu = new_emu(TC_ARCH_X86_64, 1, 0);
  MUST(emu);
  /* Without its interpreter, a dynamic program cannot be loaded. */
  CU_ASSERT_EQUAL(
      tc_load_elf(emu, &img, d, SYN_SIZE, "/dyn", argv, NULL, &res, &err), -1);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "interpreter /lib/ld-x.so.2"));
  free(d);

  /* A 32-bit program into a 64-bit emulator. */
  size_t n;
  d = guest_file("hello32", &n);
  if (d) {
    MUST(tc_elf_parse(d, n, &img, &err) == 0);
    CU_ASSERT_EQUAL(
        tc_load_elf(emu, &img, d, n, "/h32", argv, NULL, &res, &err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "x86 program"));
    free(d);
  }
  tc_emu_free(emu);

  /* Segments reaching into the stack. */
  syn_phdr high = {PT_LOAD, PF_R | PF_X, 0,     0x7ffffff00000,
                   0x100,   0x100,       0x1000};
  d = build_elf(1, 0, EM_X86_64, ET_EXEC, 0x7ffffff00000, &high, 1, SYN_SIZE);
  MUST(d && tc_elf_parse(d, SYN_SIZE, &img, &err) == 0);
  emu = new_emu(TC_ARCH_X86_64, 1, 0);
  MUST(emu);
  CU_ASSERT_EQUAL(
      tc_load_elf(emu, &img, d, SYN_SIZE, "/high", argv, NULL, &res, &err), -1);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "stack"));
  tc_emu_free(emu);
  free(d);

  /* Arguments larger than a quarter of a small stack. */
  d = guest_file("hello64", &n);
  MUST(d && tc_elf_parse(d, n, &img, &err) == 0);
  emu = new_emu(TC_ARCH_X86_64, 1, 64 * 1024);
  MUST(emu);
  char *big = malloc(20000);
  MUST(big);
  memset(big, 'a', 19999);
  big[19999] = 0;
  const char *bigv[] = {"p", big, NULL};
  CU_ASSERT_EQUAL(tc_load_elf(emu, &img, d, n, "/big", bigv, NULL, &res, &err),
                  -1);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "too large"));
  free(big);
  tc_emu_free(emu);

  /* A stack bigger than the 128 MiB gap pushes mmap_top down. */
  emu = new_emu(TC_ARCH_X86_64, 1, 256ull << 20);
  MUST(emu);
  CU_ASSERT_EQUAL(tc_load_elf(emu, &img, d, n, "/h", argv, NULL, &res, &err),
                  0);
  CU_ASSERT_EQUAL(emu->mmap_top, TC_STACK_TOP_64 - (256ull << 20));
  tc_emu_free(emu);
  free(d);
}

/* Same seed, same AT_RANDOM bytes; another seed, other bytes. */
static void test_load_deterministic(void) {
  size_t n;
  uint8_t *d = guest_file("hello64", &n);
  MUST(d);
  tc_elf_image img;
  tc_error err;
  MUST(tc_elf_parse(d, n, &img, &err) == 0);
  uint8_t rnd[3][16];
  uint64_t sps[3];
  const uint64_t seeds[3] = {7, 7, 8};
  for (int i = 0; i < 3; i++) {
    tc_emu *emu = new_emu(TC_ARCH_X86_64, seeds[i], 0);
    MUST(emu);
    const char *argv[] = {"hello", NULL};
    tc_load_result res;
    MUST(tc_load_elf(emu, &img, d, n, "/hello", argv, NULL, &res, &err) == 0);
    sps[i] = res.sp;
    /* argc, argv0, NULL, NULL, then auxv: AT_RANDOM is pair 14 */
    uint64_t at = res.sp + 8 * 4 + 16 * 14;
    CU_ASSERT_EQUAL(rd_word(emu, at), AT_RANDOM);
    CU_ASSERT_EQUAL(tc_emu_read(emu, rd_word(emu, at + 8), rnd[i], 16), 0);
    tc_emu_free(emu);
  }
  CU_ASSERT_EQUAL(memcmp(rnd[0], rnd[1], 16), 0);
  CU_ASSERT_NOT_EQUAL(memcmp(rnd[0], rnd[2], 16), 0);
  CU_ASSERT_EQUAL(sps[0], sps[2]);
  free(d);
}

/* ------------------------------------------------------- raw */

static void check_raw(tc_arch_id id) {
  tc_emu *emu = new_emu(id, 1, 0);
  MUST(emu);
  const uint8_t code[] = {0x90, 0x90, 0x90, 0xf4};
  tc_load_result res;
  tc_error err = {{0}};
  uint64_t base = 0x1000800;
  int rc = tc_load_raw(emu, code, sizeof code, base, base + 1, &res, &err);
  if (rc)
    fprintf(stderr, "raw: %s\n", err.msg);
  MUST(rc == 0);
  unsigned ptr = emu->arch->ptr_size;
  CU_ASSERT_EQUAL(tc_emu_reg(emu, emu->arch->pc_reg), base + 1);
  CU_ASSERT_EQUAL(tc_emu_reg(emu, emu->arch->sp_reg), res.sp);
  CU_ASSERT_EQUAL(res.entry, base + 1);
  CU_ASSERT_EQUAL(res.sp % 16, 0);
  const tc_region *r = tc_emu_region_at(emu, base);
  MUST(r);
  CU_ASSERT_EQUAL(r->start, 0x1000000);
  CU_ASSERT_EQUAL(r->end, 0x1001000);
  CU_ASSERT_EQUAL(r->prot, TC_PROT_READ | TC_PROT_WRITE | TC_PROT_EXEC);
  CU_ASSERT_STRING_EQUAL(r->name, "[code]");
  uint8_t back[4];
  CU_ASSERT_EQUAL(tc_emu_read(emu, base, back, 4), 0);
  CU_ASSERT_EQUAL(memcmp(back, code, 4), 0);
  for (int i = 0; i < 5; i++) /* argc 0, NULL, NULL, AT_NULL pair */
    CU_ASSERT_EQUAL(rd_word(emu, res.sp + ptr * i), 0);
  r = tc_emu_region_at(emu, res.sp);
  MUST(r);
  CU_ASSERT_STRING_EQUAL(r->name, "[stack]");
  CU_ASSERT_EQUAL(r->end, ptr == 8 ? TC_STACK_TOP_64 : TC_STACK_TOP_32);
  CU_ASSERT_EQUAL(emu->brk_start, 0x1001000);
  tc_emu_free(emu);
}

static void test_raw(void) {
  check_raw(TC_ARCH_X86_64);
  check_raw(TC_ARCH_X86);
}

static void test_raw_refusals(void) {
  const uint8_t code[] = {0x90};
  tc_load_result res;
  struct {
    const char *what;
    size_t size;
    uint64_t base, entry;
    tc_arch_id arch;
    const char *expect;
  } bad[] = {
      {"empty", 0, 0x1000, 0x1000, TC_ARCH_X86_64, "empty"},
      {"entry below", 1, 0x1000, 0xfff, TC_ARCH_X86_64, "outside"},
      {"entry at end", 1, 0x1000, 0x1001, TC_ARCH_X86_64, "outside"},
      {"base overflow", 1, UINT64_MAX, UINT64_MAX, TC_ARCH_X86_64,
       "does not fit"},
      {"base above 4G on x86", 1, 0x100000000ull, 0x100000000ull, TC_ARCH_X86,
       "does not fit"},
      {"on the stack", 1, TC_STACK_TOP_64 - 0x1000, TC_STACK_TOP_64 - 0x1000,
       TC_ARCH_X86_64, "stack"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    tc_emu *emu = new_emu(bad[i].arch, 1, 0);
    MUST(emu);
    tc_error err = {{0}};
    int rc = tc_load_raw(emu, code, bad[i].size, bad[i].base, bad[i].entry,
                         &res, &err);
    if (rc != -1 || !strstr(err.msg, bad[i].expect))
      fprintf(stderr, "raw %s: rc %d \"%s\"\n", bad[i].what, rc, err.msg);
    CU_ASSERT_EQUAL(rc, -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, bad[i].expect));
    tc_emu_free(emu);
  }
}

int main(void) {
  static const tu_case cases[] = {
      {"parse every guest", test_parse_guests},
      {"malformed variants", test_malformed},
      {"truncate at every length", test_truncate_every_length},
      {"synthetic headers and arches", test_synthetic_headers},
      {"load hello64", test_load_hello64},
      {"load hello32", test_load_hello32},
      {"load static-pie", test_load_pie},
      {"load bss", test_load_bss},
      {"load shared page", test_load_shared_page},
      {"load refusals", test_load_refusals},
      {"load deterministic", test_load_deterministic},
      {"raw", test_raw},
      {"raw refusals", test_raw_refusals},
      {NULL, NULL}};
  return tu_run_suite("loader", cases);
}
