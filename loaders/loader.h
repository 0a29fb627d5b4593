/* SPDX-License-Identifier: GPL-2.0-or-later */
/* loaders/: put a program into a fresh tc_emu (internal to libtracecorn). */
#ifndef TC_LOADER_H
#define TC_LOADER_H

#include <stddef.h>
#include <stdint.h>

#include "emu/engine/emu.h"

#define TC_ELF_MAX_SEGMENTS 32

typedef struct tc_elf_segment {
  uint64_t vaddr, memsz, filesz, offset, align;
  uint32_t prot; /* TC_PROT_* from p_flags */
} tc_elf_segment;

/* What the parser learned from a file; pure data, no emulator needed. */
typedef struct tc_elf_image {
  uint8_t is64;       /* ELFCLASS64 */
  uint8_t big_endian; /* ELFDATA2MSB */
  uint16_t type;      /* ET_EXEC or ET_DYN */
  uint16_t machine;   /* EM_* */
  uint32_t flags;     /* e_flags */
  uint64_t entry;     /* e_entry (unrelocated) */
  uint64_t phoff;     /* e_phoff */
  uint16_t phentsize, phnum;
  uint64_t phdr_vaddr; /* vaddr of the program headers (PT_PHDR or derived) */
  uint64_t min_vaddr, max_vaddr; /* extent of PT_LOADs (page aligned) */
  int has_interp; /* PT_INTERP present: a dynamically linked program */
  char
      interp[256]; /* its program interpreter ("/lib64/ld-linux-x86-64.so.2") */
  int stack_exec;  /* PT_GNU_STACK has PF_X (or no PT_GNU_STACK) */
  size_t nsegs;
  tc_elf_segment segs[TC_ELF_MAX_SEGMENTS];
  const tc_arch *arch; /* resolved from machine/class/endianness */
} tc_elf_image;

/* Validates and parses an ELF file in memory. Every field and offset is
 * bounds-checked; a malformed file gets a one-line reason in err. */
int tc_elf_parse(const uint8_t *data, size_t size, tc_elf_image *img,
                 tc_error *err);

/* A dynamically linked program's interpreter (ld.so), read by the caller
 * through the guest's filesystem. */
typedef struct tc_elf_interp {
  const tc_elf_image *img;
  const uint8_t *data;
  size_t size;
  const char *guest_path; /* as the program names it (PT_INTERP) */
} tc_elf_interp;

typedef struct tc_load_result {
  uint64_t entry;     /* first PC */
  uint64_t load_base; /* relocation bias (0 for ET_EXEC) */
  uint64_t sp;        /* initial stack pointer */
  uint64_t phdr;      /* AT_PHDR */
  uint64_t brk;       /* initial program break */
} tc_load_result;

/* Maps the segments (bss zeroed, page permissions), builds the stack
 * exactly as Linux does (argc, argv, envp, auxv, AT_RANDOM bytes,
 * platform string, execfn), sets PC/SP and emu->brk_*. envp may be NULL. */
int tc_load_elf(tc_emu *emu, const tc_elf_image *img, const uint8_t *data,
                size_t size, const char *guest_path, const char *const *argv,
                const char *const *envp, tc_load_result *res, tc_error *err);
/* The same for a program with an interpreter (NULL: static only): the
 * interpreter is mapped where the kernel's top-down mmap would put it,
 * execution starts at its entry, and AT_BASE / AT_ENTRY / AT_PHDR tell
 * it where the program is, as Linux's binfmt_elf does. No vDSO is mapped
 * (no AT_SYSINFO_EHDR), so the C library makes real syscalls. */
int tc_load_elf_interp(tc_emu *emu, const tc_elf_image *img,
                       const uint8_t *data, size_t size, const char *guest_path,
                       const char *const *argv, const char *const *envp,
                       const tc_elf_interp *interp, tc_load_result *res,
                       tc_error *err);

/* The same with the file name the program was started by (AT_EXECFN, the
 * string execve(2) was given: a script's own path) apart from guest_path
 * (the ELF file, naming its maps and /proc/self/exe), and without touching
 * the registers: the first PC and SP are in *res (execve sets them once
 * the engine has stopped). res is required. */
int tc_load_elf_exec(tc_emu *emu, const tc_elf_image *img, const uint8_t *data,
                     size_t size, const char *guest_path, const char *execfn,
                     const char *const *argv, const char *const *envp,
                     const tc_elf_interp *interp, tc_load_result *res,
                     tc_error *err);

/* Reads a whole program file from an open host fd, which it closes: a
 * regular file of at most TC_LOADER_MAX_FILE bytes. NULL with a message
 * (path names the file in it). */
#define TC_LOADER_MAX_FILE (1ull << 30)
uint8_t *tc_loader_read_fd(int fd, const char *path, size_t *size,
                           tc_error *err);

/* A dynamic program's interpreter, read through the guest's view of the
 * filesystem (the host's /, or --root) and parsed; in.img points at img,
 * so the struct is not copied. */
typedef struct tc_interp_file {
  tc_elf_image img;
  tc_elf_interp in;
} tc_interp_file;
/* Opened and checked by the kernel (tc_linux_open_interp, through the
 * guest's filesystem view); released with tc_loader_interp_free. */
void tc_loader_interp_free(tc_interp_file *f);

/* Maps code RWX at base (page-rounded), a stack, and sets PC/SP. */
int tc_load_raw(tc_emu *emu, const uint8_t *code, size_t size, uint64_t base,
                uint64_t entry, tc_load_result *res, tc_error *err);

/* Shared by the ELF and raw loaders: map the stack below emu->stack_top,
 * then lay out execfn/argv/envp/auxv on it as Linux does. */
int tc_loader_map_stack(tc_emu *emu, int stack_exec, tc_error *err);
int tc_loader_setup_stack(tc_emu *emu, const char *execfn,
                          const char *const *argv, size_t argc,
                          const char *const *envp, size_t envc,
                          const uint64_t *auxv, size_t nauxv, uint64_t *sp_out,
                          tc_error *err);

/* Default placements: a PIE's base. The stack's and the mmap area's tops
 * are the arch's (common/arch/<arch>/: stack_top, mmap_top). */
#define TC_PIE_BASE_64 0x555555554000ull
#define TC_PIE_BASE_32 0x56555000ull
static inline uint64_t tc_loader_stack_top(const tc_arch *arch) {
  return arch->stack_top;
}
static inline uint64_t tc_loader_mmap_top(const tc_arch *arch) {
  return arch->mmap_top;
}

#endif
