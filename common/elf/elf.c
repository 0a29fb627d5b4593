/* SPDX-License-Identifier: GPL-2.0-or-later */
/* ELF file and section headers (see elf.h). */
#include "common/elf/elf.h"

#include <elf.h>
#include <string.h>

#include "common/byteorder.h"

int tc_elf_read_header(const uint8_t *data, size_t size, tc_elf_header *h,
                       tc_error *err) {
  memset(h, 0, sizeof *h);
  if (size < SELFMAG) {
    tc_error_set(err, "not an ELF file: only %zu bytes", size);
    return -1;
  }
  if (memcmp(data, ELFMAG, SELFMAG) != 0) {
    tc_error_set(err, "not an ELF file (bad magic %02x %02x %02x %02x)",
                 data[0], data[1], data[2], data[3]);
    return -1;
  }
  if (size < EI_NIDENT) {
    tc_error_set(err,
                 "truncated ELF: identification needs %d bytes but file is "
                 "%zu bytes",
                 EI_NIDENT, size);
    return -1;
  }
  uint8_t cls = data[EI_CLASS], enc = data[EI_DATA];
  if (cls != ELFCLASS32 && cls != ELFCLASS64) {
    tc_error_set(err, "bad ELF class %u (expected 1 = 32-bit or 2 = 64-bit)",
                 cls);
    return -1;
  }
  if (enc != ELFDATA2LSB && enc != ELFDATA2MSB) {
    tc_error_set(err,
                 "bad ELF data encoding %u (expected 1 = little-endian or "
                 "2 = big-endian)",
                 enc);
    return -1;
  }
  if (data[EI_VERSION] != EV_CURRENT) {
    tc_error_set(err, "bad ELF identification version %u (expected 1)",
                 data[EI_VERSION]);
    return -1;
  }
  int is64 = cls == ELFCLASS64, be = enc == ELFDATA2MSB;
  size_t ehsize = is64 ? sizeof(Elf64_Ehdr) : sizeof(Elf32_Ehdr);
  if (size < ehsize) {
    tc_error_set(err,
                 "truncated ELF: header needs %zu bytes but file is %zu bytes",
                 ehsize, size);
    return -1;
  }
  h->is64 = (uint8_t)is64;
  h->big_endian = (uint8_t)be;
  h->type = (uint16_t)get_uint(data + 16, 2, be);
  h->machine = (uint16_t)get_uint(data + 18, 2, be);
  if (is64) {
    h->entry = get_uint(data + 24, 8, be);
    h->phoff = get_uint(data + 32, 8, be);
    h->shoff = get_uint(data + 40, 8, be);
    h->flags = (uint32_t)get_uint(data + 48, 4, be);
    h->phentsize = (uint16_t)get_uint(data + 54, 2, be);
    h->phnum = (uint16_t)get_uint(data + 56, 2, be);
    h->shentsize = (uint16_t)get_uint(data + 58, 2, be);
    h->shnum = (uint16_t)get_uint(data + 60, 2, be);
    h->shstrndx = (uint16_t)get_uint(data + 62, 2, be);
  } else {
    h->entry = get_uint(data + 24, 4, be);
    h->phoff = get_uint(data + 28, 4, be);
    h->shoff = get_uint(data + 32, 4, be);
    h->flags = (uint32_t)get_uint(data + 36, 4, be);
    h->phentsize = (uint16_t)get_uint(data + 42, 2, be);
    h->phnum = (uint16_t)get_uint(data + 44, 2, be);
    h->shentsize = (uint16_t)get_uint(data + 46, 2, be);
    h->shnum = (uint16_t)get_uint(data + 48, 2, be);
    h->shstrndx = (uint16_t)get_uint(data + 50, 2, be);
  }
  return 0;
}

unsigned tc_elf_section_count(const tc_elf_header *h, size_t size) {
  unsigned want = h->is64 ? 64 : 40;
  if (h->shentsize < want || h->shoff > size || h->shnum == 0 ||
      (uint64_t)h->shnum * h->shentsize > size - h->shoff)
    return 0;
  return h->shnum;
}

void tc_elf_section_at(const uint8_t *data, const tc_elf_header *h, unsigned i,
                       tc_elf_section *s) {
  const uint8_t *sh = data + h->shoff + (uint64_t)i * h->shentsize;
  int be = h->big_endian, is64 = h->is64;
  s->name = (uint32_t)get_uint(sh, 4, be);
  s->type = (uint32_t)get_uint(sh + 4, 4, be);
  s->offset = is64 ? get_uint(sh + 24, 8, be) : get_uint(sh + 16, 4, be);
  s->size = is64 ? get_uint(sh + 32, 8, be) : get_uint(sh + 20, 4, be);
  s->link = (uint32_t)get_uint(sh + (is64 ? 40 : 24), 4, be);
}

unsigned tc_elf_program_count(const tc_elf_header *h, size_t size) {
  unsigned want = h->is64 ? 56 : 32;
  if (h->phentsize < want || h->phoff > size ||
      (uint64_t)h->phnum * h->phentsize > size - h->phoff)
    return 0;
  return h->phnum;
}

void tc_elf_program_at(const uint8_t *data, const tc_elf_header *h, unsigned i,
                       tc_elf_program *p) {
  const uint8_t *ph = data + h->phoff + (uint64_t)i * h->phentsize;
  int be = h->big_endian;
  p->type = (uint32_t)get_uint(ph, 4, be);
  if (h->is64) {
    p->flags = (uint32_t)get_uint(ph + 4, 4, be);
    p->offset = get_uint(ph + 8, 8, be);
    p->vaddr = get_uint(ph + 16, 8, be);
    p->filesz = get_uint(ph + 32, 8, be);
    p->memsz = get_uint(ph + 40, 8, be);
    p->align = get_uint(ph + 48, 8, be);
  } else {
    p->offset = get_uint(ph + 4, 4, be);
    p->vaddr = get_uint(ph + 8, 4, be);
    p->filesz = get_uint(ph + 16, 4, be);
    p->memsz = get_uint(ph + 20, 4, be);
    p->flags = (uint32_t)get_uint(ph + 24, 4, be);
    p->align = get_uint(ph + 28, 4, be);
  }
}
