/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The one ELF reader of tracecorn: the file header and the section
 * headers, every offset and count checked against the data. The loader
 * (loaders/elf.c) builds its program image on it, the symbol tables
 * (symbols.c) read sections with it. */
#ifndef TC_COMMON_ELF_H
#define TC_COMMON_ELF_H

#include <stddef.h>
#include <stdint.h>

#include "tracecorn/tracecorn.h"

typedef struct tc_elf_header {
  uint8_t is64, big_endian;
  uint16_t type, machine;
  uint32_t flags;
  uint64_t entry;
  uint64_t phoff;
  uint16_t phentsize, phnum;
  uint64_t shoff;
  uint16_t shentsize, shnum, shstrndx;
} tc_elf_header;

/* Reads and checks the identification and the file header: 0, or -1 with
 * a one-line reason (err may be NULL). Nothing past the header is read. */
int tc_elf_read_header(const uint8_t *data, size_t size, tc_elf_header *h,
                       tc_error *err);

typedef struct tc_elf_section {
  uint32_t name, type, link;
  uint64_t offset, size;
} tc_elf_section;

/* The number of section headers that lie inside the data (0 when the table
 * is missing, has a short entry size or runs past the end). */
unsigned tc_elf_section_count(const tc_elf_header *h, size_t size);
/* Section header i (i < tc_elf_section_count). */
void tc_elf_section_at(const uint8_t *data, const tc_elf_header *h, unsigned i,
                       tc_elf_section *s);

typedef struct tc_elf_program {
  uint32_t type, flags;
  uint64_t offset, vaddr, filesz, memsz, align;
} tc_elf_program;

/* The number of program headers that lie inside the data (0 when the
 * table runs past the end or has a short entry size). */
unsigned tc_elf_program_count(const tc_elf_header *h, size_t size);
/* Program header i (i < tc_elf_program_count). */
void tc_elf_program_at(const uint8_t *data, const tc_elf_header *h, unsigned i,
                       tc_elf_program *p);

#endif
