/* SPDX-License-Identifier: GPL-2.0-or-later */
/* x86 thread pointers: x86-64's arch_prctl (fs_base, gs_base) and i386's
 * TLS descriptors in a GDT kept in guest memory (set_thread_area, clone's
 * CLONE_SETTLS, each thread's own GDT page). */
#include <errno.h>
#include <string.h>

#include "emu/linux/linux_arch.h"
#include "emu/linux/x86/x86_linux.h"

int64_t tc_linux_x86_arch_prctl(tc_sys_call *c) {
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
  uint64_t addr = GDT_ADDR_32;
  uint64_t ps = emu->arch->page_size;
  if (tc_sys_overlaps_any(emu, addr, addr + ps) &&
      (addr = tc_emu_find_free(emu, ps)) == 0)
    return -ENOMEM;
  int r = tc_emu_map(emu, addr, ps, TC_PROT_READ | TC_PROT_WRITE, "[gdt]", 0);
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

int64_t tc_linux_i386_set_thread_area(tc_sys_call *c) {
  tc_emu *emu = c->emu;
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
  uint64_t ps = emu->arch->page_size;
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

/* A cloned thread's first switch-in: its GDT, then the selectors again so
 * that the segment bases come from its own TLS descriptors. */
int tc_linux_i386_thread_start(tc_emu *emu, const tc_thread *t) {
  if (!t->gdt_addr)
    return 0;
  uc_x86_mmr gdtr = {0, t->gdt_addr, GDT_ENTRIES * 8 - 1, 0};
  if (uc_reg_write(emu->uc, UC_X86_REG_GDTR, &gdtr) != UC_ERR_OK)
    return -1;
  int segs[2] = {UC_X86_REG_FS, UC_X86_REG_GS};
  for (int i = 0; i < 2; i++) {
    uint64_t sel = 0;
    uc_reg_read(emu->uc, segs[i], &sel);
    if ((sel & 0xfffc) && uc_reg_write(emu->uc, segs[i], &sel) != UC_ERR_OK)
      return -1;
  }
  return 0;
}
