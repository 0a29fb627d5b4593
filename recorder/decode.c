/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Per-PC decode cache (see decode.h). */
#include "recorder/decode.h"

#include "emu/engine/emu.h"

#include "common/arch.h"
#include "common/isa/isa.h"

#include <capstone/capstone.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Capstone register id -> tracecorn register index, or one of: */
enum { MAP_NONE = -1, MAP_FPU = -2, MAP_SEGMENT = -3, MAP_IGNORE = -4 };

/* Invalidation by code page, as QEMU tracks the pages that hold
 * translated code: a store to a page with no cached instruction costs one
 * lookup here, not a scan of the cache (issue 39: on an executable stack
 * every push is a store to an executable page). */
#define CODE_PAGE_BITS 12
#define SLOT_NONE UINT32_MAX
/* The longest instruction a slot holds (tc_decoded.bytes). */
#define INSN_MAX 16

typedef struct code_page {
  uint64_t page; /* address >> CODE_PAGE_BITS */
  uint32_t head; /* its first slot (next[] links the rest), or SLOT_NONE */
  uint32_t n;    /* slots in the list; 0: this entry is free */
  uint32_t live; /* of those, the ones with a size (not invalidated) */
} code_page;

struct tc_decoder {
  tc_decoder_table table; /* first: decode.h's inline lookup reads it */
  const tc_arch *arch;
  csh cs;
  int cs_ok;
  int16_t regmap[512];
  int16_t regmap2[512]; /* a second register the name covers (arm qN) */
  int vstatus;          /* FP/vector status register: mxcsr, fpscr, fpsr */
  int link_reg;         /* arm lr / arm64 x30, written by bl/blx/blr */
  int fpu_regs[24];
  int nfpu;
  int mips_f0, mips_fcsr; /* mips+fpu: f0's index (f1..f31 follow), fcsr's;
                             -1 without the FPU registers */
  size_t used;
  /* Code pages: which slots hold instructions of which page, outside the
   * 64-byte slots (decode.h). next[i] links slot i into its page's list
   * (the page of its pc; an instruction running into the next page is
   * found from the page before). */
  uint32_t *next;
  code_page *pages; /* open addressing, power-of-two capacity */
  size_t pcap, npages;
  size_t live; /* slots with a size (not invalidated), all pages */
};

/* n zeroed slots, cache-line aligned (one line each). */
static tc_decoded *slots_new(size_t n) {
  tc_decoded *s = aligned_alloc(64, n * sizeof *s);
  if (s)
    memset(s, 0, n * sizeof *s);
  return s;
}

tc_decoder *tc_decoder_new(const tc_arch *arch, tc_error *err) {
  tc_decoder *d = calloc(1, sizeof *d);
  if (!d) {
    tc_error_set(err, "out of memory");
    return NULL;
  }
  d->arch = arch;
  d->table.cap = 4096;
  d->table.slots = slots_new(d->table.cap);
  d->next = malloc(d->table.cap * sizeof *d->next);
  d->pcap = 64;
  d->pages = calloc(d->pcap, sizeof *d->pages);
  if (!d->table.slots || !d->next || !d->pages) {
    free(d->table.slots);
    free(d->next);
    free(d->pages);
    free(d);
    tc_error_set(err, "out of memory");
    return NULL;
  }
  int ca = 0, mode = 0;
  bool known = tc_isa_cs_mode(arch, &ca, &mode);
  mode |= arch->big_endian ? CS_MODE_BIG_ENDIAN : 0;
  if (known && cs_open((cs_arch)ca, (cs_mode)mode, &d->cs) == CS_ERR_OK) {
    d->cs_ok = 1;
    cs_option(d->cs, CS_OPT_DETAIL, CS_OPT_ON);
  }
  /* What needs capstone's per-arch detail dispatches on capstone's arch
   * (the descriptor's cs_arch), not on tracecorn's ids. */
  bool mips = arch->cs_arch == CS_ARCH_MIPS;
  for (int i = 0; i < 512; i++) {
    d->regmap[i] = d->regmap2[i] = MAP_NONE;
    const char *nm = d->cs_ok ? cs_reg_name(d->cs, (unsigned)i) : NULL;
    if (!nm)
      continue;
    int second = -1, m = tc_arch_reg_from_capstone(arch, nm, &second);
    if (m < 0 && mips && strcmp(nm, "ac0") == 0) {
      m = tc_arch_reg_index(arch, "hi"); /* mips: hi and lo together */
      second = tc_arch_reg_index(arch, "lo");
    }
    if (m == -2)
      m = MAP_IGNORE; /* a zero register */
    else if (m >= 0 && (arch->regs[m].flags & TC_REG_FPU))
      m = MAP_FPU; /* x87 stack rotation: read everything */
    else if (m >= 0 && (arch->regs[m].flags & TC_REG_SEGMENT))
      m = MAP_SEGMENT; /* hidden descriptor bases */
    else if (m < 0 && strncmp(nm, "mm", 2) == 0)
      m = MAP_FPU; /* MMX registers alias the x87 ones */
    d->regmap[i] = (int16_t)m;
    d->regmap2[i] = (int16_t)second;
  }
  const char *lr = arch->traits.link_reg, *vs = arch->traits.vstatus_reg;
  d->link_reg = lr ? tc_arch_reg_index(arch, lr) : -1;
  for (int i = 0; i < arch->nregs && d->nfpu < 24; i++)
    if (arch->regs[i].flags & TC_REG_FPU)
      d->fpu_regs[d->nfpu++] = i;
  d->mips_f0 = mips ? tc_arch_reg_index(arch, "f0") : -1;
  d->mips_fcsr = mips ? tc_arch_reg_index(arch, "fcsr") : -1;
  d->vstatus = vs ? tc_arch_reg_index(arch, vs) : -1;
  return d;
}

void tc_decoder_free(tc_decoder *d) {
  if (!d)
    return;
  if (d->cs_ok)
    cs_close(&d->cs);
  free(d->table.slots);
  free(d->next);
  free(d->pages);
  free(d);
}

static size_t slot_of(const tc_decoder *d, uint64_t pc) {
  return tc_decoder_slot(&d->table, pc);
}

/* ------------------------------------------------------------ code pages */

static size_t page_hash(const tc_decoder *d, uint64_t page) {
  return (size_t)((page * 0x9e3779b97f4a7c15ull) >> 32) & (d->pcap - 1);
}

/* The entry of a page, or NULL if no slot holds code of it. */
static code_page *page_find(const tc_decoder *d, uint64_t page) {
  size_t h = page_hash(d, page);
  while (d->pages[h].n) {
    if (d->pages[h].page == page)
      return &d->pages[h];
    h = (h + 1) & (d->pcap - 1);
  }
  return NULL;
}

/* Doubles the page table (entries keep their slot lists); -1: no memory. */
static int pages_grow(tc_decoder *d) {
  size_t ocap = d->pcap;
  code_page *old = d->pages;
  code_page *np = calloc(ocap * 2, sizeof *np);
  if (!np)
    return -1;
  d->pages = np;
  d->pcap = ocap * 2;
  for (size_t i = 0; i < ocap; i++) {
    if (!old[i].n)
      continue;
    size_t h = page_hash(d, old[i].page);
    while (d->pages[h].n)
      h = (h + 1) & (d->pcap - 1);
    d->pages[h] = old[i];
  }
  free(old);
  return 0;
}

/* Links slot s (its pc and size set) into its page's list; -1: no memory
 * (nothing changed). */
static int page_add(tc_decoder *d, size_t s) {
  const tc_decoded *e = &d->table.slots[s];
  uint64_t page = e->pc >> CODE_PAGE_BITS;
  code_page *cp = page_find(d, page);
  if (!cp) {
    if ((d->npages + 1) * 2 > d->pcap && pages_grow(d) < 0)
      return -1;
    size_t h = page_hash(d, page);
    while (d->pages[h].n)
      h = (h + 1) & (d->pcap - 1);
    cp = &d->pages[h];
    *cp = (code_page){.page = page, .head = SLOT_NONE};
    d->npages++;
  }
  d->next[s] = cp->head;
  cp->head = (uint32_t)s;
  cp->n++;
  if (e->size) {
    cp->live++;
    d->live++;
  }
  return 0;
}

/* Drops every page entry (the slots are rehashed or cleared). */
static void pages_clear(tc_decoder *d) {
  memset(d->pages, 0, d->pcap * sizeof *d->pages);
  d->npages = 0;
  d->live = 0;
}

/* Slot e of page cp loses its size: the next hook decodes it again. */
static void drop(tc_decoder *d, code_page *cp, tc_decoded *e) {
  e->size = 0;
  cp->live--;
  d->live--;
}

/* Drops the live slots of page cp that overlap [addr, end); lo: the lowest
 * pc that can (addr - INSN_MAX + 1). Walks the page's list, or looks up
 * each pc that can overlap when that is fewer. */
static void page_invalidate(tc_decoder *d, code_page *cp, uint64_t lo,
                            uint64_t addr, uint64_t end) {
  uint64_t base = cp->page << CODE_PAGE_BITS;
  uint64_t from = lo > base ? lo : base;
  uint64_t to =
      end - base < (1u << CODE_PAGE_BITS) ? end : base + (1u << CODE_PAGE_BITS);
  if (to - from < cp->n) {
    for (uint64_t pc = from; pc < to && cp->live; pc++) {
      tc_decoded *e = (tc_decoded *)tc_decoder_peek(d, pc);
      if (e && e->size && e->pc + e->size > addr)
        drop(d, cp, e);
    }
    return;
  }
  for (uint32_t s = cp->head; s != SLOT_NONE && cp->live; s = d->next[s]) {
    tc_decoded *e = &d->table.slots[s];
    if (e->size && e->pc < end && e->pc + e->size > addr)
      drop(d, cp, e);
  }
}

static void add_write(tc_decoded *e, int reg) {
  for (int i = 0; i < e->nwrite; i++)
    if (e->write[i] == reg)
      return;
  if (e->nwrite < sizeof e->write / sizeof e->write[0])
    e->write[e->nwrite++] = (uint16_t)reg;
  else
    e->full_read = true;
}

/* arm / arm64: what capstone 4's access lists leave out. */
static void arm_extra_writes(tc_decoder *d, tc_decoded *e,
                             const cs_insn *insn) {
  const cs_detail *det = insn->detail;
  const char *mn = insn->mnemonic;
  /* Flags: cheap to read, and capstone does not always list them. */
  add_write(e, d->arch->flags_reg);
  if (strncmp(mn, "bl", 2) == 0 && d->link_reg >= 0)
    add_write(e, d->link_reg);
  /* Traps and system/coprocessor accesses write what no list says. */
  if (strncmp(mn, "svc", 3) == 0 || strncmp(mn, "mrc", 3) == 0 ||
      strncmp(mn, "mcr", 3) == 0 || strncmp(mn, "msr", 3) == 0 ||
      strncmp(mn, "mrs", 3) == 0 || strncmp(mn, "vmrs", 4) == 0 ||
      strncmp(mn, "vmsr", 4) == 0 || strncmp(mn, "sys", 3) == 0 ||
      strncmp(mn, "bkpt", 4) == 0 || strncmp(mn, "udf", 3) == 0 ||
      strncmp(mn, "hvc", 3) == 0 || strncmp(mn, "brk", 3) == 0 ||
      strncmp(mn, "cps", 3) == 0 || strncmp(mn, "setend", 6) == 0)
    e->full_read = true;
  /* Writeback addressing updates the base register. */
  if (d->arch->cs_arch == CS_ARCH_ARM) {
    const cs_arm *a = &det->arm;
    bool wb = a->writeback;
    for (int i = 0; i < a->op_count; i++) {
      int reg = -1;
      if (a->operands[i].type == ARM_OP_MEM && wb)
        reg = (int)a->operands[i].mem.base;
      else if (a->operands[i].type == ARM_OP_REG && wb && i == 0 &&
               (strncmp(mn, "ldm", 3) == 0 || strncmp(mn, "stm", 3) == 0))
        reg = (int)a->operands[i].reg;
      else if (a->operands[i].type == ARM_OP_REG &&
               (a->operands[i].access & CS_AC_WRITE))
        reg = (int)a->operands[i].reg;
      if (reg > 0 && reg < 512 && d->regmap[reg] >= 0) {
        add_write(e, d->regmap[reg]);
        if (d->regmap2[reg] >= 0)
          add_write(e, d->regmap2[reg]);
      }
    }
    if (strcmp(mn, "push") == 0 || strcmp(mn, "pop") == 0 ||
        strncmp(mn, "vpush", 5) == 0 || strncmp(mn, "vpop", 4) == 0)
      add_write(e, d->arch->sp_reg);
  } else {
    const cs_arm64 *a = &det->arm64;
    for (int i = 0; i < a->op_count; i++) {
      int reg = -1;
      if (a->operands[i].type == ARM64_OP_MEM && a->writeback)
        reg = (int)a->operands[i].mem.base;
      else if (a->operands[i].type == ARM64_OP_REG &&
               (a->operands[i].access & CS_AC_WRITE))
        reg = (int)a->operands[i].reg;
      if (reg > 0 && reg < 512 && d->regmap[reg] >= 0)
        add_write(e, d->regmap[reg]);
    }
  }
}

/* x86 instructions Linux user mode cannot execute (#GP -> SIGSEGV). */
static bool x86_privileged(const cs_insn *insn) {
  static const char *const names[] = {
      "hlt",     "cli",     "sti",    "in",        "out",    "insb",
      "insw",    "insd",    "outsb",  "outsw",     "outsd",  "rdmsr",
      "wrmsr",   "lgdt",    "lidt",   "lldt",      "ltr",    "lmsw",
      "clts",    "invd",    "wbinvd", "invlpg",    "swapgs", "sysret",
      "sysretq", "sysexit", "rdpmc",  "hypercall", "vmcall"};
  /* By name: capstone 4's PRIVILEGE group also holds user-mode
   * instructions such as `mov gs, eax`. */
  const cs_detail *det = insn->detail;
  const char *mn = insn->mnemonic;
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (strcmp(mn, names[i]) == 0)
      return true;
  /* mov to/from control and debug registers */
  return strcmp(mn, "mov") == 0 &&
         (strstr(insn->op_str, "cr") || strstr(insn->op_str, "dr")) &&
         det->x86.op_count == 2 && det->x86.operands[0].type == X86_OP_REG &&
         det->x86.operands[1].type == X86_OP_REG &&
         ((det->x86.operands[0].reg >= X86_REG_CR0 &&
           det->x86.operands[0].reg <= X86_REG_CR15) ||
          (det->x86.operands[1].reg >= X86_REG_CR0 &&
           det->x86.operands[1].reg <= X86_REG_CR15) ||
          (det->x86.operands[0].reg >= X86_REG_DR0 &&
           det->x86.operands[0].reg <= X86_REG_DR15) ||
          (det->x86.operands[1].reg >= X86_REG_DR0 &&
           det->x86.operands[1].reg <= X86_REG_DR15));
}

/* mips: capstone 4 has no access lists for MIPS (cs_regs_access fails),
 * and reading every register after each instruction made mips recordings
 * twice as slow per instruction as arm's. What a MIPS32 instruction can
 * write is in its register operands (the destination is one; no
 * addressing mode writes its base back) and capstone's implicit writes
 * (ra for the linking jumps and branches, ac0 = hi/lo for mult, div,
 * madd, mthi...): all of them are listed, sources too (reading a register
 * that did not change costs a read, missing one would lose it). Registers
 * tracecorn does not record (DSP accumulators; the FPU where the engine
 * cannot read it) are left out; traps, system calls and coprocessor-0
 * instructions read everything. Where the arch table has the FPU's
 * registers, an FPU instruction (COP1, COP1X, lwc1, ldc1) lists the
 * register pairs its ft, fs and fd fields name (a double is an even/odd
 * pair with FR=0; whichever field is the destination, mtc1's fs, lwc1's
 * ft, arithmetic's fd, is among them) and fcsr (ctc1; the exception flags
 * arithmetic sets), sources too: 7 registers, not the 70 of a full read
 * (fpenv-mipsel libm recorded 2.3x faster than with full reads). */
static void mips_writes(tc_decoder *d, tc_decoded *e, const cs_insn *insn) {
  static const char *const all[] = {
      "syscall", "break", "sdbbp", "eret", "deret",  "wait",  "cache",
      "mtc0",    "mfc0",  "di",    "ei",   "rdpgpr", "wrpgpr"};
  static const char *const prefixes[] = {"teq", "tge", "tlt", "tne", "tlb"};
  const char *mn = insn->mnemonic;
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
    if (strcmp(mn, all[i]) == 0)
      e->full_read = true;
  for (size_t i = 0; i < sizeof prefixes / sizeof prefixes[0]; i++)
    if (strncmp(mn, prefixes[i], 3) == 0)
      e->full_read = true;
  if (d->mips_f0 >= 0 && d->mips_fcsr >= 0 && e->size == 4) {
    const uint8_t *b = e->bytes;
    uint32_t w = d->arch->big_endian
                     ? (uint32_t)b[0] << 24 | b[1] << 16 | b[2] << 8 | b[3]
                     : (uint32_t)b[3] << 24 | b[2] << 16 | b[1] << 8 | b[0];
    unsigned op = w >> 26;
    if (op == 0x11 || op == 0x13 || op == 0x31 || op == 0x35) {
      const unsigned field[3] = {(w >> 16) & 31, (w >> 11) & 31, (w >> 6) & 31};
      for (int k = 0; k < 3; k++) {
        add_write(e, d->mips_f0 + (int)(field[k] & ~1u));
        add_write(e, d->mips_f0 + (int)(field[k] | 1u));
      }
      add_write(e, d->mips_fcsr);
    }
  }
  const cs_detail *det = insn->detail;
  unsigned regs[8 + sizeof det->regs_write / sizeof det->regs_write[0]];
  int n = 0;
  for (int i = 0; i < det->mips.op_count && i < 8; i++)
    if (det->mips.operands[i].type == MIPS_OP_REG)
      regs[n++] = det->mips.operands[i].reg;
  for (int i = 0; i < det->regs_write_count; i++)
    regs[n++] = det->regs_write[i];
  for (int i = 0; i < n; i++) {
    if (regs[i] >= 512 || d->regmap[regs[i]] < 0)
      continue;
    add_write(e, d->regmap[regs[i]]);
    if (d->regmap2[regs[i]] >= 0)
      add_write(e, d->regmap2[regs[i]]);
  }
}

static void decode_regs(tc_decoder *d, tc_decoded *e);

/* Decodes e and sorts its write list ascending: the recorder lists the
 * registers that changed in that order without sorting per instruction. */
static void decode_into(tc_decoder *d, tc_decoded *e) {
  decode_regs(d, e);
  for (int i = 1; i < e->nwrite; i++) {
    uint16_t v = e->write[i];
    int j = i - 1;
    while (j >= 0 && e->write[j] > v) {
      e->write[j + 1] = e->write[j];
      j--;
    }
    e->write[j + 1] = v;
  }
}

/* How many instructions after e are inside its control (tc_decoded's
 * guards), from its bytes: more than it has is harmless (a stop moves a
 * little earlier), fewer is not. */
static unsigned guards_of(const tc_arch *a, const tc_decoded *e) {
  const uint8_t *b = e->bytes;
  if (a->traits.thumb_bit && e->thumb && e->size == 2 && b[1] == 0xbf &&
      (b[0] & 0xf)) {
    /* IT (0xbfXY, mask Y != 0): 4 - trailing zeros of the mask */
    unsigned m = b[0] & 0xf, n = 4;
    while (!(m & 1))
      m >>= 1, n--;
    return n;
  }
  if (a->cs_arch == CS_ARCH_SPARC && e->size == 4) {
    /* call, b*, fb*, cb*, jmpl, return: a delay slot (or an annulled one) */
    uint32_t w = (uint32_t)b[0] << 24 | b[1] << 16 | b[2] << 8 | b[3];
    unsigned op = w >> 30, op2 = (w >> 22) & 7, op3 = (w >> 19) & 0x3f;
    return op == 1 || (op == 0 && op2 != 0 && op2 != 4) ||
           (op == 2 && (op3 == 0x38 || op3 == 0x39));
  }
  if (a->cs_arch != CS_ARCH_MIPS || e->size != 4)
    return 0;
  uint32_t w = a->big_endian
                   ? (uint32_t)b[0] << 24 | b[1] << 16 | b[2] << 8 | b[3]
                   : (uint32_t)b[3] << 24 | b[2] << 16 | b[1] << 8 | b[0];
  unsigned op = w >> 26, rs = (w >> 21) & 31, rt = (w >> 16) & 31;
  switch (op) {
  case 0x00: /* jr, jalr */
    return (w & 0x3f) == 0x08 || (w & 0x3f) == 0x09;
  case 0x01: /* bltz, bgez(l), bltzal(l), bgezal(l); DSP's bposge32/64 */
    return (rt & 0x0c) == 0 || rt == 0x1c || rt == 0x1d;
  case 0x02: /* j, jal, beq, bne, blez, bgtz */
  case 0x03:
  case 0x04:
  case 0x05:
  case 0x06:
  case 0x07:
  case 0x14: /* the branch-likely forms */
  case 0x15:
  case 0x16:
  case 0x17:
  case 0x1d: /* jalx */
    return 1;
  case 0x11: /* bc1f, bc1t (and -l); bc1any2/4 */
  case 0x12: /* bc2f, bc2t */
    return rs == 0x08 || rs == 0x09 || rs == 0x0a;
  default:
    return 0;
  }
}

static void decode_regs(tc_decoder *d, tc_decoded *e) {
  e->full_read = false;
  e->is_rep = false;
  e->privileged = false;
  e->emulate = TC_DEC_EMU_NONE;
  e->nwrite = 0;
  e->guards = guards_of(d->arch, e) & 7;
  add_write(e, d->arch->pc_reg);
  if (d->cs_ok && d->arch->traits.thumb_bit)
    cs_option(d->cs, CS_OPT_MODE, e->thumb ? CS_MODE_THUMB : CS_MODE_ARM);
  cs_insn *insn = NULL;
  if (!d->cs_ok || cs_disasm(d->cs, e->bytes, e->size, e->pc, 1, &insn) != 1) {
    e->full_read = true;
    return;
  }
  /* Unicorn reports a size of 16 for instructions that raise at
   * translation (x86 ud2): the instruction is what capstone decoded. */
  if (insn->size < e->size)
    e->size = (uint8_t)insn->size;
  if (d->arch->cs_arch == CS_ARCH_MIPS) {
    mips_writes(d, e, insn);
    cs_free(insn, 1);
    return;
  }
  cs_regs rd, wr;
  uint8_t nrd = 0, nwr = 0;
  if (cs_regs_access(d->cs, insn, rd, &nrd, wr, &nwr) != CS_ERR_OK) {
    e->full_read = true;
    cs_free(insn, 1);
    return;
  }
  bool vector = false;
  for (int i = 0; i < nwr; i++) {
    int m = wr[i] < 512 ? d->regmap[wr[i]] : MAP_NONE;
    if (m == MAP_IGNORE)
      continue;
    if (m == MAP_FPU || m == MAP_SEGMENT || m == MAP_NONE)
      e->full_read = true; /* x87 stack rotation, hidden bases, unknown */
    else {
      add_write(e, m);
      if (wr[i] < 512 && d->regmap2[wr[i]] >= 0)
        add_write(e, d->regmap2[wr[i]]);
      if (d->arch->regs[m].flags & TC_REG_VECTOR)
        vector = true;
    }
  }
  for (int i = 0; i < nrd; i++) {
    int m = rd[i] < 512 ? d->regmap[rd[i]] : MAP_NONE;
    if (m == MAP_FPU)
      e->full_read = true;
    else if (m >= 0 && (d->arch->regs[m].flags & TC_REG_VECTOR))
      vector = true;
  }
  /* Vector/FP arithmetic sets the sticky exception flags (MXCSR, FPSCR,
   * FPSR). */
  if (vector && d->vstatus >= 0)
    add_write(e, d->vstatus);
  if (d->arch->cs_arch == CS_ARCH_ARM || d->arch->cs_arch == CS_ARCH_ARM64)
    arm_extra_writes(d, e, insn);
  if (d->arch->cs_arch == CS_ARCH_X86) {
    const cs_detail *det = insn->detail;
    e->privileged = x86_privileged(insn);
    if (strcmp(insn->mnemonic, "rdtsc") == 0)
      e->emulate = TC_DEC_EMU_RDTSC;
    else if (strcmp(insn->mnemonic, "rdtscp") == 0)
      e->emulate = TC_DEC_EMU_RDTSCP;
    else if (tc_x87_host_can(e->bytes, e->size))
      e->emulate = TC_DEC_EMU_X87;
    for (int g = 0; g < det->groups_count; g++)
      if (det->groups[g] == X86_GRP_FPU || det->groups[g] == X86_GRP_INT ||
          det->groups[g] == CS_GRP_INT)
        e->full_read = true;
    /* Flags writes: capstone's eflags bits say more than regs_access,
     * which misses them for lock-prefixed cmpxchg/xadd. */
    const uint64_t flag_writes =
        0x7FFull | (0xFFFull << 21) | (0x7Full << 40) | (0xFFull << 51);
    if ((det->x86.eflags & flag_writes) || det->x86.prefix[0] == 0xf0)
      add_write(e, d->arch->flags_reg);
    const char *mn = insn->mnemonic;
    if (strncmp(mn, "rep", 3) == 0)
      e->is_rep = true;
    /* capstone's regs_access omits the accumulator cmpxchg loads when the
     * comparison fails, and operands of lock-prefixed forms; rare enough
     * (contended atomics, with threads) to read everything after them. */
    if (strncmp(mn, "cmpxchg", 7) == 0 || strcmp(mn, "xadd") == 0 ||
        det->x86.prefix[0] == 0xf0)
      e->full_read = true;
    /* Traps and state-restoring instructions touch registers capstone
     * does not list. */
    if (strcmp(mn, "syscall") == 0 || strcmp(mn, "sysenter") == 0 ||
        strncmp(mn, "int", 3) == 0 || strncmp(mn, "fx", 2) == 0 ||
        strncmp(mn, "xrstor", 6) == 0 || strcmp(mn, "ldmxcsr") == 0 ||
        strcmp(mn, "cpuid") == 0 || strncmp(mn, "f", 1) == 0 ||
        strcmp(mn, "emms") == 0 || strncmp(mn, "wr", 2) == 0)
      e->full_read = true;
    for (int i = 0; i < det->x86.op_count; i++)
      if (det->x86.operands[i].type == X86_OP_REG) {
        int m = d->regmap[det->x86.operands[i].reg];
        if (m == MAP_FPU)
          e->full_read = true;
      }
  }
  cs_free(insn, 1);
}

/* 2^18 slots of 64 bytes: 16 MB, 128 k instructions cached. */
#define DECODE_MAX_SLOTS (1u << 18)

static int grow(tc_decoder *d) {
  size_t ncap = d->table.cap * 2;
  tc_decoded *ns = slots_new(ncap);
  uint32_t *nn = malloc(ncap * sizeof *nn);
  /* The rehash adds at most a page per slot in use (under ncap / 4): with
   * ncap entries the page table needs no growing in the loop below. */
  code_page *np = d->pcap < ncap ? calloc(ncap, sizeof *np) : NULL;
  if (!ns || !nn || (d->pcap < ncap && !np)) {
    free(ns);
    free(nn);
    free(np);
    return -1;
  }
  tc_decoded *old = d->table.slots;
  size_t ocap = d->table.cap;
  d->table.slots = ns;
  d->table.cap = ncap;
  free(d->next);
  d->next = nn;
  if (np) {
    free(d->pages);
    d->pages = np;
    d->pcap = ncap;
  }
  pages_clear(d);
  d->used = 0;
  for (size_t i = 0; i < ocap; i++) {
    if (!old[i].valid)
      continue;
    size_t s = slot_of(d, old[i].pc);
    while (d->table.slots[s].valid)
      s = (s + 1) & (d->table.cap - 1);
    d->table.slots[s] = old[i];
    d->used++;
    page_add(d, s); /* cannot fail: pcap >= 2 * used */
  }
  free(old);
  return 0;
}

const tc_decoded *tc_decoder_get(tc_decoder *d, uint64_t pc,
                                 const uint8_t *bytes, uint32_t size,
                                 bool thumb) {
  if (size > 16)
    size = 16;
  size_t s = slot_of(d, pc);
  while (d->table.slots[s].valid) {
    tc_decoded *e = &d->table.slots[s];
    if (e->pc == pc) {
      if (e->size != size || e->thumb != thumb ||
          memcmp(e->bytes, bytes, size) != 0) {
        bool was_live = e->size != 0;
        e->size = (uint8_t)size;
        e->thumb = thumb;
        memcpy(e->bytes, bytes, size);
        decode_into(d, e);
        if (!was_live && e->size) { /* invalidated, decoded again */
          page_find(d, pc >> CODE_PAGE_BITS)->live++;
          d->live++;
        } else if (was_live && !e->size) {
          drop(d, page_find(d, pc >> CODE_PAGE_BITS), e);
        }
      }
      return e;
    }
    s = (s + 1) & (d->table.cap - 1);
  }
  if ((d->used + 1) * 2 > d->table.cap) {
    /* Bounded: past DECODE_MAX_SLOTS the cache starts again empty (as
     * QEMU flushes its translation cache), so a guest running megabytes
     * of distinct code costs at most DECODE_MAX_SLOTS slots (decode.h:
     * what get returned before is valid only until this call). */
    if (d->table.cap >= DECODE_MAX_SLOTS) {
      memset(d->table.slots, 0, d->table.cap * sizeof *d->table.slots);
      pages_clear(d);
      d->used = 0;
    } else if (grow(d) < 0) {
      return NULL;
    }
    return tc_decoder_get(d, pc, bytes, size, thumb);
  }
  tc_decoded *e = &d->table.slots[s];
  memset(e, 0, sizeof *e);
  e->pc = pc;
  e->size = (uint8_t)size;
  e->thumb = thumb;
  memcpy(e->bytes, bytes, size);
  decode_into(d, e);
  if (page_add(d, s) < 0) {
    memset(e, 0, sizeof *e);
    return NULL;
  }
  e->valid = true;
  d->used++;
  return e;
}

void tc_decoder_invalidate(tc_decoder *d, uint64_t addr, uint64_t size) {
  /* A size of 0 forces a re-decode from memory at the next hook. Only the
   * pages of [addr - INSN_MAX + 1, addr + size) can hold an instruction
   * that overlaps: one lookup each (usually one page), or one pass over
   * the page table when the range spans more pages than it holds
   * (munmap of a large region). */
  if (!d->live || size == 0)
    return;
  uint64_t end = addr + size < addr ? UINT64_MAX : addr + size;
  uint64_t lo = addr > INSN_MAX - 1 ? addr - (INSN_MAX - 1) : 0;
  uint64_t first = lo >> CODE_PAGE_BITS, last = (end - 1) >> CODE_PAGE_BITS;
  if (last - first < d->npages) {
    for (uint64_t p = first; p <= last && d->live; p++) {
      code_page *cp = page_find(d, p);
      if (cp && cp->live)
        page_invalidate(d, cp, lo, addr, end);
    }
    return;
  }
  for (size_t i = 0; i < d->pcap && d->live; i++) {
    code_page *cp = &d->pages[i];
    if (cp->n && cp->live && cp->page >= first && cp->page <= last)
      page_invalidate(d, cp, lo, addr, end);
  }
}
