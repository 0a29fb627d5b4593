/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The registry of guest architectures: each one's descriptor lives in its
 * folder, common/arch/<arch>/ (registers, syscall ABI, ELF identity, engine
 * modes, process layout, Linux ABI tables); this file expands the one
 * list of arches (common/arch/arches.def) into their table and holds what
 * is the same for all. */
#include <string.h>
#include <strings.h>

#include "common/arch.h"

#define TC_ARCH(id, desc, engine, kernel)                                      \
  extern const tc_arch tc_arch_desc_##desc;
#include "common/arch/arches.def"
#undef TC_ARCH

static const tc_arch *const arches[] = {
#define TC_ARCH(id, desc, engine, kernel) &tc_arch_desc_##desc,
#include "common/arch/arches.def"
#undef TC_ARCH
};

#define NARCHES (sizeof arches / sizeof arches[0])

const tc_arch *tc_arch_by_id(tc_arch_id id) {
  for (size_t i = 0; i < NARCHES; i++)
    if (arches[i]->id == id)
      return arches[i];
  return NULL;
}

const tc_arch *tc_arch_at(size_t i) { return i < NARCHES ? arches[i] : NULL; }

const tc_arch *tc_arch_by_name(const char *name) {
  if (!name)
    return NULL;
  for (size_t i = 0; i < NARCHES; i++) {
    if (strcasecmp(arches[i]->name, name) == 0)
      return arches[i];
    for (const char *const *a = arches[i]->aliases; a && *a; a++)
      if (strcasecmp(*a, name) == 0)
        return arches[i];
  }
  return NULL;
}

const tc_arch *tc_arch_by_elf(uint16_t machine, int is64, int big_endian) {
  for (size_t i = 0; i < NARCHES; i++) {
    const tc_arch *a = arches[i];
    if ((a->elf_machine == machine ||
         (a->elf_machine_alt && a->elf_machine_alt == machine)) &&
        (a->ptr_size == 8) == !!is64 && a->big_endian == !!big_endian)
      return a;
  }
  return NULL;
}

const tc_arch *tc_arch_with_fpu(const tc_arch *arch) {
  return arch && !arch->base ? arch->with_fpu : NULL;
}

unsigned tc_arch_wire_id(const tc_arch *arch) {
  return (unsigned)arch->id | (arch->base ? TC_ARCH_WIRE_FPU : 0u);
}

const tc_arch *tc_arch_by_wire_id(uint64_t wire) {
  if (wire & TC_ARCH_WIRE_FPU)
    return wire >> 9 ? NULL
                     : tc_arch_with_fpu(tc_arch_by_id(
                           (tc_arch_id)(wire & ~(uint64_t)TC_ARCH_WIRE_FPU)));
  return wire >> 8 ? NULL : tc_arch_by_id((tc_arch_id)wire);
}

/* The public accessors (the struct is private: common/arch.h). */
const char *tc_arch_name(const tc_arch *arch) { return arch->name; }

tc_arch_id tc_arch_id_of(const tc_arch *arch) { return arch->id; }

unsigned tc_arch_ptr_size(const tc_arch *arch) { return arch->ptr_size; }

int tc_arch_big_endian(const tc_arch *arch) { return arch->big_endian; }

size_t tc_arch_state_size(const tc_arch *arch) { return arch->state_size; }

int tc_arch_reg_count(const tc_arch *arch) { return arch->nregs; }

static const tc_reg_info *reg_at(const tc_arch *arch, int reg) {
  return reg >= 0 && reg < arch->nregs ? &arch->regs[reg] : NULL;
}

const char *tc_arch_reg_name(const tc_arch *arch, int reg) {
  const tc_reg_info *r = reg_at(arch, reg);
  return r ? r->name : NULL;
}

unsigned tc_arch_reg_size(const tc_arch *arch, int reg) {
  const tc_reg_info *r = reg_at(arch, reg);
  return r ? r->size : 0;
}

unsigned tc_arch_reg_flags(const tc_arch *arch, int reg) {
  const tc_reg_info *r = reg_at(arch, reg);
  return r ? r->flags : 0;
}

size_t tc_arch_reg_offset(const tc_arch *arch, int reg) {
  const tc_reg_info *r = reg_at(arch, reg);
  return r ? r->offset : 0;
}

int tc_arch_pc_reg(const tc_arch *arch) { return arch->pc_reg; }

int tc_arch_sp_reg(const tc_arch *arch) { return arch->sp_reg; }

int tc_arch_reg_index(const tc_arch *arch, const char *name) {
  for (int i = 0; i < arch->nregs; i++)
    if (strcmp(arch->regs[i].name, name) == 0)
      return i;
  return -1;
}

int tc_arch_reg_from_capstone(const tc_arch *arch, const char *name,
                              int *second) {
  int other = -1, r;
  if (!name)
    r = -1;
  else if (arch->reg_from_capstone)
    r = arch->reg_from_capstone(arch, name, &other);
  else
    r = tc_arch_reg_index(arch, name);
  if (second)
    *second = other;
  return r;
}

const tc_arch *tc_arch_compat_table(const tc_arch *arch) {
  return arch->compat ? arch->compat : arch;
}

bool tc_arch_compat_trap(const tc_arch *arch, const uint8_t *bytes,
                         size_t size) {
  return arch->compat && size == sizeof arch->compat_insn &&
         memcmp(bytes, arch->compat_insn, size) == 0;
}

const int *tc_arch_compat_arg_regs(const tc_arch *arch) {
  return arch->compat ? arch->compat_arg_regs : arch->sys.arg_regs;
}

const char *tc_arch_syscall_name(const tc_arch *arch, uint32_t nr) {
  size_t lo = 0, hi = arch->sys.nnames;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    uint32_t m = arch->sys.names[mid].nr;
    if (m == nr)
      return arch->sys.names[mid].name;
    if (m < nr)
      lo = mid + 1;
    else
      hi = mid;
  }
  return NULL;
}

uint64_t tc_state_get(const tc_arch *arch, const uint8_t *state, int reg) {
  const tc_reg_info *r = &arch->regs[reg];
  uint64_t v = 0;
  memcpy(&v, state + r->offset, r->size < 8 ? r->size : 8);
  return v; /* host (little-endian) order, see tracecorn.h */
}

void tc_state_set(const tc_arch *arch, uint8_t *state, int reg, uint64_t v) {
  const tc_reg_info *r = &arch->regs[reg];
  memset(state + r->offset, 0, r->size);
  memcpy(state + r->offset, &v, r->size < 8 ? r->size : 8);
}
