/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Raw code loading: a blob of machine code mapped RWX with a stack. */
#include <inttypes.h>
#include <string.h>

#include "loaders/loader.h"

int tc_load_raw(tc_emu *emu, const uint8_t *code, size_t size, uint64_t base,
                uint64_t entry, tc_load_result *res, tc_error *err) {
  if (!emu || !code) {
    tc_error_set(err, "tc_load_raw: missing emulator or code");
    return -1;
  }
  if (size == 0) {
    tc_error_set(err, "raw code is empty");
    return -1;
  }
  const tc_arch *arch = emu->arch;
  uint64_t page = arch->page_size;
  /* Everything must sit below the stack top, which is below the end of
   * the address space, so page rounding cannot overflow either. */
  uint64_t top = tc_loader_stack_top(arch);
  if (base >= top || size > top - base) {
    tc_error_set(err,
                 "raw code at 0x%" PRIx64 " of 0x%zx bytes does not fit "
                 "below 0x%" PRIx64,
                 base, size, top);
    return -1;
  }
  uint64_t end = base + size;
  if (entry < base || entry >= end) {
    tc_error_set(err,
                 "entry 0x%" PRIx64 " is outside the code at 0x%" PRIx64
                 "-0x%" PRIx64,
                 entry, base, end);
    return -1;
  }
  uint64_t map_lo = base & ~(page - 1);
  uint64_t map_hi = (end + page - 1) & ~(page - 1);
  int rc = tc_emu_map(emu, map_lo, map_hi - map_lo,
                      TC_PROT_READ | TC_PROT_WRITE | TC_PROT_EXEC, "[code]", 0);
  if (rc < 0) {
    tc_error_set(err, "cannot map code at 0x%" PRIx64 "-0x%" PRIx64 ": %s",
                 map_lo, map_hi, strerror(-rc));
    return -1;
  }
  rc = tc_emu_write(emu, base, code, size);
  if (rc < 0) {
    tc_error_set(err, "cannot write code at 0x%" PRIx64 ": %s", base,
                 strerror(-rc));
    return -1;
  }
  /* A stack that still looks like a process start: argc 0, empty argv and
   * envp, an empty auxv. */
  uint64_t sp;
  if (tc_loader_map_stack(emu, 1, err) < 0 ||
      tc_loader_setup_stack(emu, NULL, NULL, 0, NULL, 0, NULL, 0, &sp, err) < 0)
    return -1;
  tc_emu_set_reg(emu, arch->pc_reg, entry);
  tc_emu_set_reg(emu, arch->sp_reg, sp);
  emu->brk_start = emu->brk_cur = map_hi;
  if (res) {
    res->entry = entry;
    res->load_base = base;
    res->sp = sp;
    res->phdr = 0;
    res->brk = map_hi;
  }
  return 0;
}
