/* SPDX-License-Identifier: GPL-2.0-or-later */
/* emu/regfile: direct register reads, found by calibration (regfile.h). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "regfile.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

/* How far from the first register found the others are looked for: the
 * whole CPU state of every arch fits (x86's is ~20 KiB, arm64's ~10). */
#define WINDOW (96u << 10)
/* Mappings larger than this are not scanned (guest RAM, code buffers):
 * the CPU state is a small heap allocation made at uc_open. */
#define MAX_MAPPING (256ull << 20)
/* At most this much is scanned in all: the state is found in the first
 * megabytes; a process with gigabytes of heap gives up, not stalls. */
#define MAX_SCAN (1ull << 30)
#define REG_MAX 64 /* bytes kept per register while calibrating */

/* Reads [addr, addr+n) of this process; the bytes read (0 if unmapped). */
static size_t peek(uintptr_t addr, void *buf, size_t n) {
  struct iovec local = {buf, n}, remote = {(void *)addr, n};
  ssize_t k = process_vm_readv(getpid(), &local, 1, &remote, 1, 0);
  return k < 0 ? 0 : (size_t)k;
}

static uint64_t splitmix(uint64_t *s) {
  uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/* Fills n bytes with values no earlier calibration of this process used:
 * a freed engine's state may still hold old ones. */
static void random_bytes(uint64_t *s, uint8_t *p, size_t n) {
  for (size_t i = 0; i < n; i += 8) {
    uint64_t v = splitmix(s);
    memcpy(p + i, &v, n - i < 8 ? n - i : 8);
  }
}

static bool candidate(const tc_arch *a, int i) {
  const tc_reg_info *ri = &a->regs[i];
  if (i == a->pc_reg || ri->uc_id < 0)
    return false;
  if (ri->flags & TC_REG_GPR)
    return ri->size == 4 || ri->size == 8;
  return (ri->flags & TC_REG_VECTOR) && ri->size == 16;
}

typedef struct span {
  uintptr_t lo, hi, dist;
} span;

static int by_distance(const void *a, const void *b) {
  const span *x = a, *y = b;
  return x->dist < y->dist ? -1 : x->dist > y->dist;
}

/* The scannable mappings (writable, not executable, not the stack, not
 * huge), nearest to `near` first: the CPU state is allocated next to the
 * engine's own struct. */
static span *scannable(uintptr_t near, size_t *count) {
  FILE *m = fopen("/proc/self/maps", "re");
  span *v = NULL;
  size_t n = 0, cap = 0;
  char line[512];
  while (m && fgets(line, sizeof line, m)) {
    unsigned long lo, hi;
    char perms[8];
    if (sscanf(line, "%lx-%lx %7s", &lo, &hi, perms) != 3 || perms[0] != 'r' ||
        perms[1] != 'w' || perms[2] == 'x' || strstr(line, "[stack") ||
        hi - lo > MAX_MAPPING)
      continue;
    if (n == cap) {
      size_t c = cap ? 2 * cap : 256;
      span *nv = realloc(v, c * sizeof *nv);
      if (!nv)
        break;
      v = nv, cap = c;
    }
    uintptr_t d = near < lo ? lo - near : near >= hi ? near - hi + 1 : 0;
    v[n++] = (span){lo, hi, d};
  }
  if (m)
    fclose(m);
  if (v)
    qsort(v, n, sizeof *v, by_distance);
  *count = n;
  return v;
}

static int reg_write(const tc_regfile *rf, int i, const uint8_t *v) {
  return uc_reg_write(rf->uc, rf->arch->regs[i].uc_id, v) == UC_ERR_OK ? 0 : -1;
}

/* Whether the storage at addr follows register i: two more values written
 * through the API must appear there. On failure i holds `back` again. */
static bool confirm(tc_regfile *rf, int i, uintptr_t addr, unsigned n,
                    const uint8_t *back, uint64_t *seed) {
  for (int round = 0; round < 2; round++) {
    uint8_t v[REG_MAX] = {0}, got[REG_MAX];
    random_bytes(seed, v, rf->arch->regs[i].size);
    if (reg_write(rf, i, v) < 0 || peek(addr, got, n) != n ||
        memcmp(got, v, n) != 0) {
      reg_write(rf, i, back);
      return false;
    }
  }
  return true;
}

/* The first place, nearest the engine first, holding register i's value
 * v[0..n) and confirmed to follow it; 0 if none (in MAX_SCAN bytes). */
static uintptr_t scan_process(tc_regfile *rf, int i, const uint8_t *v,
                              unsigned n, uint64_t *seed,
                              const tc_regfile_skip *skip, size_t nskip) {
  size_t nspans = 0;
  span *spans = scannable((uintptr_t)rf->uc, &nspans);
  size_t cap = 1u << 20;
  uint8_t *buf = spans ? malloc(cap + 64) : NULL;
  uint64_t scanned = 0;
  uintptr_t found = 0;
  for (size_t k = 0; buf && k < nspans && !found && scanned < MAX_SCAN; k++) {
    uintptr_t lo = spans[k].lo, hi = spans[k].hi;
    /* in chunks overlapping by n - 1 bytes; copies in buf are not hits */
    for (uintptr_t at = lo; at < hi && !found && scanned < MAX_SCAN;) {
      bool skipped = false;
      for (size_t q = 0; q < nskip && !skipped; q++)
        if (at >= skip[q].start && at < skip[q].end) {
          at = skip[q].end;
          skipped = true;
        }
      if (skipped)
        continue;
      size_t len = hi - at < cap + n - 1 ? hi - at : cap + n - 1;
      scanned += len;
      size_t got = peek(at, buf, len);
      if (got < n)
        break;
      for (size_t off = 0; off + n <= got && !found;) {
        uint8_t *p = memmem(buf + off, got - off, v, n);
        if (!p)
          break;
        off = (size_t)(p - buf);
        uintptr_t addr = at + off;
        bool own = addr >= (uintptr_t)buf && addr < (uintptr_t)buf + cap + 64;
        if (!own && (addr & (n >= 8 ? 7 : 3)) == 0 &&
            confirm(rf, i, addr, n, v, seed))
          found = addr;
        off++;
      }
      if (got < len)
        break;
      at += cap;
    }
  }
  free(buf);
  free(spans);
  return found;
}

/* The first candidate's address: where a value written to it appears and
 * follows two more; 0 if not found. */
static uintptr_t find_anchor(tc_regfile *rf, int i, uint64_t *seed,
                             const tc_regfile_skip *skip, size_t nskip) {
  unsigned size = rf->arch->regs[i].size > 8 ? 8 : rf->arch->regs[i].size;
  uint8_t v[REG_MAX] = {0};
  random_bytes(seed, v, rf->arch->regs[i].size);
  if (reg_write(rf, i, v) < 0)
    return 0;
  return scan_process(rf, i, v, size, seed, skip, nskip);
}

/* Reads [base, base+len) page by page, unmapped pages as zeros. */
static void peek_window(uintptr_t base, uint8_t *win, size_t len) {
  for (size_t off = 0; off < len; off += 4096) {
    size_t n = len - off < 4096 ? len - off : 4096;
    if (peek(base + off, win + off, n) != n)
      memset(win + off, 0, n);
  }
}

/* Where value v[0..n) appears exactly once, aligned, in win, or -1. */
static long find_once(const uint8_t *win, size_t len, const uint8_t *v,
                      size_t n) {
  long found = -1;
  size_t step = n >= 8 ? 8 : 4;
  for (size_t off = 0; off + n <= len; off += step)
    if (memcmp(win + off, v, n) == 0) {
      if (found >= 0)
        return -1;
      found = (long)off;
    }
  return found;
}

#define MAX_REGS 160

static void calibrate(tc_regfile *rf, const tc_regfile_skip *skip,
                      size_t nskip) {
  const tc_arch *a = rf->arch;
  /* The values live on the stack, which is never scanned: a copy in the
   * heap near the CPU state would make every register ambiguous. */
  uint8_t orig[MAX_REGS][REG_MAX], v[2][MAX_REGS][REG_MAX];
  long at[MAX_REGS];
  static uint64_t calls; /* a new seed for each engine of the process */
  uint64_t seed =
      (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32) ^
      __atomic_add_fetch(&calls, 1, __ATOMIC_RELAXED) * 0xd1b54a32d192ed03ull;
  int first = -1;
  if (a->nregs > MAX_REGS)
    return;
  for (int i = 0; i < a->nregs; i++)
    if (candidate(a, i)) {
      if (uc_reg_read(rf->uc, a->regs[i].uc_id, orig[i]))
        return;
      if (first < 0)
        first = i;
    }
  uint8_t *win = first >= 0 ? malloc(2 * WINDOW) : NULL;
  if (!win)
    return;
  uintptr_t anchor = find_anchor(rf, first, &seed, skip, nskip);
  if (!anchor || anchor < WINDOW)
    goto restore;
  uintptr_t base = anchor - WINDOW;
  for (int pass = 0; pass < 2; pass++) {
    for (int i = 0; i < a->nregs; i++)
      if (candidate(a, i)) {
        random_bytes(&seed, v[pass][i], a->regs[i].size);
        reg_write(rf, i, v[pass][i]);
      }
    peek_window(base, win, 2 * WINDOW);
    for (int i = 0; i < a->nregs; i++) {
      if (!candidate(a, i))
        continue;
      unsigned n = a->regs[i].size;
      if (pass == 0)
        at[i] = find_once(win, 2 * WINDOW, v[0][i], n);
      else if (at[i] >= 0 && memcmp(win + at[i], v[1][i], n) != 0)
        at[i] = -1;
    }
  }
  for (int i = 0; i < a->nregs; i++) {
    uintptr_t addr = base + (uintptr_t)at[i];
    /* not a copy inside win itself (its mapping may be near) */
    if (candidate(a, i) && at[i] >= 0 &&
        (addr + REG_MAX <= (uintptr_t)win ||
         addr >= (uintptr_t)win + 2 * WINDOW)) {
      rf->ptr[i] = (const uint8_t *)addr;
      rf->ndirect++;
    }
  }
restore:
  for (int i = 0; i < a->nregs; i++)
    if (candidate(a, i))
      reg_write(rf, i, orig[i]);
  free(win);
}

/* ------------------------------------------------------- x86 lazy flags */

enum {
  CC_C = 0x1,
  CC_P = 0x4,
  CC_A = 0x10,
  CC_Z = 0x40,
  CC_S = 0x80,
  CC_O = 0x800,
  DF = 0x400
};

/* Unicorn 2.0.1's CCOp (QEMU 5.0): DYNAMIC, EFLAGS, then MUL, ADD, ADC,
 * SUB, SBB, LOGIC, INC, DEC, SHL, SAR, BMILG in sizes B W L Q, then ADCX,
 * ADOX, ADCOX, CLR, POPCNT. */
enum {
  OP_EFLAGS = 1,
  OP_MUL = 2,
  OP_ADD = 6,
  OP_ADC = 10,
  OP_SUB = 14,
  OP_SBB = 18,
  OP_LOGIC = 22,
  OP_INC = 26,
  OP_DEC = 30,
  OP_SHL = 34,
  OP_SAR = 38,
  OP_BMILG = 42,
  OP_ADCX = 46,
  OP_ADOX = 47,
  OP_ADCOX = 48,
  OP_CLR = 49,
  OP_POPCNT = 50
};

/* QEMU's cc_helper_template.h, every size in one body: the operands are
 * truncated to the operation's width; bit `bits - 1` is the sign. */
static bool cc_compute_all(uint32_t op, uint64_t dst, uint64_t src1,
                           uint64_t src2, uint32_t *out) {
  if (op == OP_EFLAGS) {
    *out = (uint32_t)src1;
    return true;
  }
  if (op >= OP_ADCX) {
    switch (op) {
    case OP_ADCX:
      *out = (uint32_t)((src1 & ~(uint64_t)CC_C) | (dst * CC_C));
      return true;
    case OP_ADOX:
      *out = (uint32_t)((src1 & ~(uint64_t)CC_O) | (src2 * CC_O));
      return true;
    case OP_ADCOX:
      *out = (uint32_t)((src1 & ~(uint64_t)(CC_O | CC_C)) | (dst * CC_C) |
                        (src2 * CC_O));
      return true;
    case OP_CLR:
      *out = CC_Z | CC_P;
      return true;
    case OP_POPCNT:
      *out = src1 ? 0 : CC_Z;
      return true;
    default:
      return false;
    }
  }
  if (op < OP_MUL)
    return false; /* DYNAMIC: never stored */
  unsigned k = (op - OP_MUL) & 3, bits = 8u << k;
  uint32_t group = op - k;
  uint64_t m = bits == 64 ? ~0ull : (1ull << bits) - 1;
  uint64_t sign = 1ull << (bits - 1);
  uint64_t mul_src = src1; /* MUL's src1 is not truncated */
  dst &= m, src1 &= m, src2 &= m;
#define MSB(x) ((((x)&sign) != 0) ? 1u : 0u)
  uint32_t pf = __builtin_parity((uint8_t)dst) ? 0 : CC_P;
  uint32_t zf = dst == 0 ? CC_Z : 0, sf = MSB(dst) ? CC_S : 0;
  uint32_t cf = 0, af = 0, of = 0;
  switch (group) {
  case OP_MUL:
    cf = mul_src != 0;
    of = cf * CC_O;
    break;
  case OP_ADD: {
    uint64_t s2 = (dst - src1) & m;
    cf = dst < src1;
    af = (uint32_t)((dst ^ src1 ^ s2) & CC_A);
    of = MSB((src1 ^ s2 ^ ~0ull) & (src1 ^ dst)) * CC_O;
    break;
  }
  case OP_ADC: {
    uint64_t s2 = (dst - src1 - src2) & m;
    cf = src2 ? dst <= src1 : dst < src1;
    af = (uint32_t)((dst ^ src1 ^ s2) & CC_A);
    of = MSB((src1 ^ s2 ^ ~0ull) & (src1 ^ dst)) * CC_O;
    break;
  }
  case OP_SUB: { /* (dst, src2 = CC_SRC) */
    uint64_t b = src1, a = (dst + b) & m;
    cf = a < b;
    af = (uint32_t)((dst ^ a ^ b) & CC_A);
    of = MSB((a ^ b) & (a ^ dst)) * CC_O;
    break;
  }
  case OP_SBB: { /* (dst, src2 = CC_SRC, src3 = CC_SRC2) */
    uint64_t b = src1, a = (dst + b + src2) & m;
    cf = src2 ? a <= b : a < b;
    af = (uint32_t)((dst ^ a ^ b) & CC_A);
    of = MSB((a ^ b) & (a ^ dst)) * CC_O;
    break;
  }
  case OP_LOGIC:
    break;
  case OP_INC: {
    cf = (uint32_t)src1;
    uint64_t a = (dst - 1) & m;
    af = (uint32_t)((dst ^ a ^ 1) & CC_A);
    of = dst == sign ? CC_O : 0;
    break;
  }
  case OP_DEC: {
    cf = (uint32_t)src1;
    uint64_t a = (dst + 1) & m;
    af = (uint32_t)((dst ^ a ^ 1) & CC_A);
    of = dst == sign - 1 ? CC_O : 0;
    break;
  }
  case OP_SHL:
    cf = MSB(src1);
    of = MSB(src1 ^ dst) * CC_O;
    break;
  case OP_SAR:
    cf = (uint32_t)(src1 & 1);
    of = MSB(src1 ^ dst) * CC_O;
    break;
  case OP_BMILG:
    cf = src1 == 0;
    pf = 0;
    break;
  default:
    return false;
  }
#undef MSB
  *out = cf | pf | af | zf | sf | of;
  return true;
}

static inline uint64_t load64(const uint8_t *p) {
  uint64_t v;
  memcpy(&v, p, 8);
  return v;
}

static inline uint32_t load32(const uint8_t *p) {
  uint32_t v;
  memcpy(&v, p, 4);
  return v;
}

bool tc_regfile_x86_flags(const tc_regfile *rf, uint64_t *out) {
  const uint8_t *cc = rf->x86_cc;
  if (!cc)
    return false;
  uint32_t all;
  if (!cc_compute_all(load32(cc + 32), load64(cc + 8), load64(cc + 16),
                      load64(cc + 24), &all))
    return false;
  uint64_t eflags = load64(cc);
  int32_t df = (int32_t)load32(cc + 36);
  /* the stored eflags may hold stale arithmetic bits (the translator
   * syncs them only when the flags operation changes) */
  *out = (uint32_t)((eflags & ~(uint64_t)(CC_C | CC_P | CC_A | CC_Z | CC_S |
                                          CC_O | DF)) |
                    all | ((uint32_t)df & DF));
  return true;
}

/* x86: QEMU's CPUX86State begins with regs[16] (RAX RCX RDX RBX RSP RBP
 * RSI RDI R8..R15, 8 bytes each), eip, eflags, cc_dst, cc_src, cc_src2,
 * cc_op, df. The layout is confirmed through the API before use. */
static void calibrate_x86_flags(tc_regfile *rf) {
  const tc_arch *a = rf->arch;
  bool w64 = a->ptr_size == 8;
  static const char *const order64[8] = {"rax", "rcx", "rdx", "rbx",
                                         "rsp", "rbp", "rsi", "rdi"};
  static const char *const order32[8] = {"eax", "ecx", "edx", "ebx",
                                         "esp", "ebp", "esi", "edi"};
  const uint8_t *regs0 = NULL;
  for (int k = 0; k < 8; k++) {
    int i = tc_arch_reg_index(a, w64 ? order64[k] : order32[k]);
    if (i < 0 || !rf->ptr[i])
      return;
    if (k == 0)
      regs0 = rf->ptr[i];
    else if (rf->ptr[i] != regs0 + 8 * k)
      return;
  }
  const uint8_t *cc = regs0 + 16 * 8 + 8; /* eflags, after regs and eip */
  int fl = w64 ? UC_X86_REG_RFLAGS : UC_X86_REG_EFLAGS;
  uint64_t orig = 0;
  if (uc_reg_read(rf->uc, fl, &orig))
    return;
  static const uint32_t probes[] = {0x8d7, 0x202, 0x646, 0x283};
  bool ok = true;
  rf->x86_cc = cc;
  for (size_t p = 0; p < sizeof probes / sizeof *probes && ok; p++) {
    uint64_t v = probes[p], back = 0, mine = 0;
    if (uc_reg_write(rf->uc, fl, &v) || uc_reg_read(rf->uc, fl, &back)) {
      ok = false;
      break;
    }
    int32_t df = (int32_t)load32(cc + 36);
    ok = load32(cc + 32) == OP_EFLAGS && load64(cc + 16) == (v & 0x8d5) &&
         df == ((v & DF) ? -1 : 1) && tc_regfile_x86_flags(rf, &mine) &&
         mine == (w64 ? back : (uint32_t)back);
  }
  uc_reg_write(rf->uc, fl, &orig);
  if (!ok)
    rf->x86_cc = NULL;
}

/* ---------------------------------------------------------------- API */

tc_regfile *tc_regfile_open(uc_engine *uc, const tc_arch *arch,
                            const tc_regfile_skip *skip, size_t nskip, int mode,
                            bool debug) {
  if (mode == TC_REGFILE_OFF)
    return NULL;
  tc_regfile *rf = calloc(1, sizeof *rf);
  if (!rf || !(rf->ptr = calloc(arch->nregs, sizeof *rf->ptr))) {
    free(rf);
    return NULL;
  }
  rf->arch = arch;
  rf->uc = uc;
  rf->check = mode == TC_REGFILE_CHECK;
  calibrate(rf, skip, nskip);
  if (arch->uc_arch == UC_ARCH_X86) /* QEMU's lazy x86 flags (CC_OP) */
    calibrate_x86_flags(rf);
  if (debug)
    fprintf(stderr, "tracecorn: regfile: %d of %d registers direct%s\n",
            rf->ndirect, arch->nregs, rf->x86_cc ? ", x86 flags computed" : "");
  return rf;
}

void tc_regfile_free(tc_regfile *rf) {
  if (!rf)
    return;
  free(rf->ptr);
  free(rf);
}

void tc_regfile_check(const tc_regfile *rf, int i, const uint8_t *direct,
                      unsigned size) {
  uint8_t want[REG_MAX] = {0};
  const tc_reg_info *ri = &rf->arch->regs[i];
  uc_reg_read(rf->uc, ri->uc_id, want);
  if (memcmp(want, direct, size) == 0)
    return;
  uint64_t pc = 0;
  uc_reg_read(rf->uc, rf->arch->regs[rf->arch->pc_reg].uc_id, &pc);
  fprintf(stderr,
          "tracecorn: regfile check: %s read directly differs from "
          "uc_reg_read at pc 0x%llx:",
          ri->name, (unsigned long long)pc);
  for (unsigned k = 0; k < size; k++)
    fprintf(stderr, " %02x/%02x", direct[k], want[k]);
  fprintf(stderr, "\n");
  abort();
}
