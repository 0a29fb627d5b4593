/* Per-PC decode cache (see decode.h). */
#include "recorder/decode.h"

#include <capstone/capstone.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Capstone register id -> tracecorn register index, or one of: */
enum { MAP_NONE = -1, MAP_FPU = -2, MAP_SEGMENT = -3, MAP_IGNORE = -4 };

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
  int mxcsr;
  size_t used;
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
  if (!d->table.slots) {
    free(d);
    tc_error_set(err, "out of memory");
    return NULL;
  }
  int mode = arch->cs_mode | (arch->big_endian ? CS_MODE_BIG_ENDIAN : 0);
  if (cs_open((cs_arch)arch->cs_arch, (cs_mode)mode, &d->cs) == CS_ERR_OK) {
    d->cs_ok = 1;
    cs_option(d->cs, CS_OPT_DETAIL, CS_OPT_ON);
  }
  for (int i = 0; i < 512; i++) {
    d->regmap[i] = d->regmap2[i] = MAP_NONE;
    const char *nm = d->cs_ok ? cs_reg_name(d->cs, (unsigned)i) : NULL;
    if (!nm)
      continue;
    int second = -1, m = tc_arch_reg_from_capstone(arch, nm, &second);
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
  d->link_reg = arch->id == TC_ARCH_ARM     ? tc_arch_reg_index(arch, "lr")
                : arch->id == TC_ARCH_ARM64 ? tc_arch_reg_index(arch, "x30")
                                            : -1;
  for (int i = 0; i < arch->nregs && d->nfpu < 24; i++)
    if (arch->regs[i].flags & TC_REG_FPU)
      d->fpu_regs[d->nfpu++] = i;
  d->mxcsr = tc_arch_reg_index(arch, "mxcsr");
  d->vstatus = d->mxcsr;
  if (arch->id == TC_ARCH_ARM)
    d->vstatus = tc_arch_reg_index(arch, "fpscr");
  else if (arch->id == TC_ARCH_ARM64)
    d->vstatus = tc_arch_reg_index(arch, "fpsr");
  return d;
}

void tc_decoder_free(tc_decoder *d) {
  if (!d)
    return;
  if (d->cs_ok)
    cs_close(&d->cs);
  free(d->table.slots);
  free(d);
}

static size_t slot_of(const tc_decoder *d, uint64_t pc) {
  return tc_decoder_slot(&d->table, pc);
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
  if (d->arch->id == TC_ARCH_ARM) {
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

static void decode_regs(tc_decoder *d, tc_decoded *e) {
  e->full_read = false;
  e->is_rep = false;
  e->privileged = false;
  e->emulate = TC_DEC_EMU_NONE;
  e->nwrite = 0;
  add_write(e, d->arch->pc_reg);
  if (d->cs_ok && d->arch->id == TC_ARCH_ARM)
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
  if (d->arch->id == TC_ARCH_ARM || d->arch->id == TC_ARCH_ARM64)
    arm_extra_writes(d, e, insn);
  if (d->arch->uc_arch == 4 /* x86 */) {
    const cs_detail *det = insn->detail;
    e->privileged = x86_privileged(insn);
    if (strcmp(insn->mnemonic, "rdtsc") == 0)
      e->emulate = TC_DEC_EMU_RDTSC;
    else if (strcmp(insn->mnemonic, "rdtscp") == 0)
      e->emulate = TC_DEC_EMU_RDTSCP;
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
  if (!ns)
    return -1;
  tc_decoded *old = d->table.slots;
  size_t ocap = d->table.cap;
  d->table.slots = ns;
  d->table.cap = ncap;
  d->used = 0;
  for (size_t i = 0; i < ocap; i++) {
    if (!old[i].valid)
      continue;
    size_t s = slot_of(d, old[i].pc);
    while (d->table.slots[s].valid)
      s = (s + 1) & (d->table.cap - 1);
    d->table.slots[s] = old[i];
    d->used++;
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
        e->size = (uint8_t)size;
        e->thumb = thumb;
        memcpy(e->bytes, bytes, size);
        decode_into(d, e);
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
      d->used = 0;
    } else if (grow(d) < 0) {
      return NULL;
    }
    return tc_decoder_get(d, pc, bytes, size, thumb);
  }
  tc_decoded *e = &d->table.slots[s];
  memset(e, 0, sizeof *e);
  e->valid = true;
  e->pc = pc;
  e->size = (uint8_t)size;
  e->thumb = thumb;
  memcpy(e->bytes, bytes, size);
  decode_into(d, e);
  d->used++;
  return e;
}

void tc_decoder_invalidate(tc_decoder *d, uint64_t addr, uint64_t size) {
  /* Rare (self-modifying code, unmaps): a size of 0 forces a re-decode
   * from memory at the next hook. */
  for (size_t i = 0; i < d->table.cap; i++) {
    tc_decoded *e = &d->table.slots[i];
    if (e->valid && e->pc < addr + size && e->pc + e->size > addr)
      e->size = 0;
  }
}
