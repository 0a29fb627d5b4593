/* SPDX-License-Identifier: GPL-2.0-or-later */
/* ELF symbol tables for listings (see symbols.h). */
#include "common/elf/symbols.h"
#include "common/byteorder.h"
#include "common/elf/elf.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct sym {
  uint64_t addr, size;
  const char *name; /* into names */
} sym;

struct tc_symtab {
  sym *syms;
  size_t n;
  char *names;
  struct tc_symtab *more; /* merged tables: their names live on */
};

static uint64_t rd(const uint8_t *p, unsigned n, int be) {
  return get_uint(p, n, be);
}

static int by_addr(const void *a, const void *b) {
  const sym *x = a, *y = b;
  if (x->addr != y->addr)
    return x->addr < y->addr ? -1 : 1;
  return strcmp(x->name, y->name); /* deterministic among aliases */
}

tc_symtab *tc_symtab_from_elf(const uint8_t *d, size_t n, uint64_t bias) {
  tc_elf_header h;
  if (!d || tc_elf_read_header(d, n, &h, NULL) < 0)
    return NULL;
  int is64 = h.is64, be = h.big_endian;
  /* arm: bit 0 of a function symbol's value marks Thumb code */
  bool arm = h.machine == 40;
  unsigned shnum = tc_elf_section_count(&h, n);
  if (shnum == 0)
    return NULL;
  /* .symtab if present, else .dynsym */
  tc_elf_section symsec = {0}, strsec;
  bool found = false;
  for (int pass = 0; pass < 2 && !found; pass++)
    for (unsigned i = 0; i < shnum && !found; i++) {
      tc_elf_section_at(d, &h, i, &symsec);
      found = symsec.type == (pass ? 11u : 2u);
    }
  if (!found)
    return NULL;
  uint64_t off = symsec.offset, size = symsec.size;
  unsigned entsize = is64 ? 24 : 16;
  if (off > n || size > n - off || symsec.link >= shnum)
    return NULL;
  tc_elf_section_at(d, &h, symsec.link, &strsec);
  uint64_t soff = strsec.offset, ssize = strsec.size;
  if (soff > n || ssize > n - soff || ssize == 0)
    return NULL;
  size_t count = (size_t)(size / entsize);
  tc_symtab *t = calloc(1, sizeof *t);
  if (!t)
    return NULL;
  t->syms = calloc(count ? count : 1, sizeof *t->syms);
  t->names = malloc((size_t)ssize + 1);
  if (!t->syms || !t->names) {
    tc_symtab_free(t);
    return NULL;
  }
  memcpy(t->names, d + soff, (size_t)ssize);
  t->names[ssize] = 0; /* every name ends inside the copy */
  for (size_t i = 0; i < count; i++) {
    const uint8_t *s = d + off + i * entsize;
    uint32_t name = (uint32_t)rd(s, 4, be);
    uint8_t info = is64 ? s[4] : s[12];
    uint16_t shndx = (uint16_t)rd(s + (is64 ? 6 : 14), 2, be);
    uint64_t value = is64 ? rd(s + 8, 8, be) : rd(s + 4, 4, be);
    uint64_t ssz = is64 ? rd(s + 16, 8, be) : rd(s + 8, 4, be);
    unsigned type = info & 0xf;
    /* functions, and untyped labels in a section (_start in assembly) */
    if ((type != 2 && type != 0) || shndx == 0 || name == 0 || name >= ssize ||
        t->names[name] == 0 || value == 0)
      continue;
    if (type == 0 && t->names[name] == '$')
      continue; /* arm/aarch64 mapping symbols ($a, $t, $d, $x) */
    if (arm && type == 2)
      value &= ~(uint64_t)1;
    t->syms[t->n].addr = value + bias;
    t->syms[t->n].size = ssz;
    t->syms[t->n].name = t->names + name;
    t->n++;
  }
  if (t->n == 0) {
    tc_symtab_free(t);
    return NULL;
  }
  qsort(t->syms, t->n, sizeof *t->syms, by_addr);
  return t;
}

void tc_symtab_free(tc_symtab *t) {
  while (t) {
    tc_symtab *next = t->more;
    free(t->syms);
    free(t->names);
    free(t);
    t = next;
  }
}

tc_symtab *tc_symtab_merge(tc_symtab *into, tc_symtab *from) {
  if (!into || !from)
    return into ? into : from;
  sym *all = malloc((into->n + from->n) * sizeof *all);
  if (!all) {
    tc_symtab_free(from);
    return into;
  }
  memcpy(all, into->syms, into->n * sizeof *all);
  memcpy(all + into->n, from->syms, from->n * sizeof *all);
  qsort(all, into->n + from->n, sizeof *all, by_addr);
  free(into->syms);
  into->syms = all;
  into->n += from->n;
  free(from->syms); /* its names stay, chained behind `into` */
  from->syms = NULL;
  from->n = 0;
  from->more = into->more;
  into->more = from;
  return into;
}

FILE *tc_open_regular(const char *path, uint64_t max_size) {
  struct stat st;
  if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
    return NULL; /* not even opened: a FIFO's open waits for a writer */
  /* Between the stat and the open the path may change: O_NONBLOCK makes
   * the open of a FIFO or device return at once, and fstat decides. */
  int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0)
    return NULL;
  FILE *f = NULL;
  if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
      (uint64_t)st.st_size <= max_size)
    f = fdopen(fd, "rb");
  if (!f)
    close(fd);
  return f;
}

FILE *tc_open_module_file(const char *root, const char *path) {
  if (!root || !root[0] || strcmp(root, "/") == 0)
    return tc_open_regular(path, TC_SYMTAB_MAX_FILE);
  char full[8192];
  int n = snprintf(full, sizeof full, "%s%s", root, path);
  return n > 0 && (size_t)n < sizeof full
             ? tc_open_regular(full, TC_SYMTAB_MAX_FILE)
             : NULL;
}

/* A module a trace maps from a file: its symbols where the map puts it.
 * The file must be a regular ELF of the given machine no larger than
 * 512 MiB (a trace names host files; a hostile one gains nothing). */
tc_symtab *tc_symtab_from_file(const char *path, uint16_t machine,
                               uint64_t map_addr, uint64_t file_offset) {
  FILE *f = tc_open_regular(path, TC_SYMTAB_MAX_FILE);
  return f ? tc_symtab_from_stream(f, machine, map_addr, file_offset) : NULL;
}

tc_symtab *tc_symtab_from_stream(FILE *f, uint16_t machine, uint64_t map_addr,
                                 uint64_t file_offset) {
  struct stat st;
  uint8_t *d = NULL;
  size_t n = 0;
  if (fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode) && st.st_size >= 64 &&
      (uint64_t)st.st_size <= TC_SYMTAB_MAX_FILE &&
      (d = malloc((size_t)st.st_size)))
    n = fread(d, 1, (size_t)st.st_size, f);
  fclose(f);
  tc_symtab *t = NULL;
  tc_elf_header h;
  if (d && n == (size_t)st.st_size && tc_elf_read_header(d, n, &h, NULL) == 0 &&
      h.machine == machine) {
    unsigned nph = tc_elf_program_count(&h, n);
    for (unsigned i = 0; i < nph && !t; i++) {
      tc_elf_program p;
      tc_elf_program_at(d, &h, i, &p);
      /* the PT_LOAD holding the mapped offset (page-aligned down) */
      uint64_t lo = p.offset & ~(uint64_t)0xfff;
      if (p.type == 1 && file_offset >= lo && file_offset < p.offset + p.filesz)
        t = tc_symtab_from_elf(
            d, n,
            map_addr - ((p.vaddr & ~(uint64_t)0xfff) + (file_offset - lo)));
    }
  }
  free(d);
  return t;
}

/* Index of the last symbol with addr <= a, or -1. */
static long last_at_or_below(const tc_symtab *t, uint64_t a) {
  size_t lo = 0, hi = t->n;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (t->syms[mid].addr <= a)
      lo = mid + 1;
    else
      hi = mid;
  }
  return (long)lo - 1;
}

const char *tc_symtab_exact(const tc_symtab *t, uint64_t addr) {
  if (!t)
    return NULL;
  long i = last_at_or_below(t, addr);
  /* among aliases at one address, the first name in order */
  while (i > 0 && t->syms[i - 1].addr == addr)
    i--;
  return i >= 0 && t->syms[i].addr == addr ? t->syms[i].name : NULL;
}

const char *tc_symtab_find(const tc_symtab *t, uint64_t addr, uint64_t *off) {
  if (!t)
    return NULL;
  long i = last_at_or_below(t, addr);
  if (i < 0)
    return NULL;
  uint64_t base = t->syms[i].addr;
  while (i > 0 && t->syms[i - 1].addr == base)
    i--;
  const sym *s = &t->syms[i];
  uint64_t end = s->size ? s->addr + s->size : 0;
  if (!end) { /* up to the next symbol */
    size_t j = (size_t)i;
    while (j < t->n && t->syms[j].addr == base)
      j++;
    end = j < t->n ? t->syms[j].addr : base + 0x10000;
  }
  if (addr >= end)
    return NULL;
  if (off)
    *off = addr - base;
  return s->name;
}

int tc_symtab_lookup(const tc_symtab *t, const char *name, size_t nth,
                     uint64_t *start, uint64_t *end) {
  if (!t || !name)
    return 0;
  for (size_t i = 0; i < t->n; i++) {
    if (strcmp(t->syms[i].name, name) != 0 || nth-- > 0)
      continue;
    const sym *s = &t->syms[i];
    uint64_t e = s->size ? s->addr + s->size : 0;
    if (!e) { /* up to the next symbol at a higher address */
      size_t j = i;
      while (j < t->n && t->syms[j].addr == s->addr)
        j++;
      e = j < t->n ? t->syms[j].addr : s->addr + 1;
    }
    *start = s->addr;
    *end = e;
    return 1;
  }
  return 0;
}

/* C++ names through the C++ runtime's own demangler, looked up at run
 * time (no link-time dependency on libstdc++). */
typedef char *(*cxa_demangle_fn)(const char *, char *, size_t *, int *);

static cxa_demangle_fn demangle_fn;
static pthread_once_t demangle_once = PTHREAD_ONCE_INIT;

static void find_demangler(void) {
  void *h = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_LOCAL);
  if (h)
    *(void **)&demangle_fn = dlsym(h, "__cxa_demangle");
}

const char *tc_demangle(const char *name, char *out, size_t max) {
  if (!name || name[0] != '_' || name[1] != 'Z' || max == 0)
    return name;
  /* once for every thread: writers run on writer threads (lib/pipe.h) */
  pthread_once(&demangle_once, find_demangler);
  cxa_demangle_fn fn = demangle_fn;
  int status = -1;
  char *d = fn ? fn(name, NULL, NULL, &status) : NULL;
  if (!d || status != 0) {
    free(d);
    return name;
  }
  snprintf(out, max, "%s", d);
  free(d);
  return out;
}
