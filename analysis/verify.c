/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Round-trip verification: a trace in any readable format against the
 * lossless tct recording of the same run, instruction by instruction,
 * within what the format holds (its caps and holds_reg). Both files
 * are streamed in lockstep, so memory use does not grow with the trace. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/verify.h"
#include "common/sized.h"
#include "tracecorn/tracecorn.h"
#include "writers/format.h"

/* The memory an instruction touched, per byte: the value before it (first
 * access) and after it (last access). */
typedef struct byte_rec {
  uint64_t addr;
  uint32_t seq;
  uint8_t before, after;
} byte_rec;

typedef struct byte_map {
  byte_rec *b;
  size_t n, cap;
} byte_map;

static int cmp_byte(const void *x, const void *y) {
  const byte_rec *a = x, *b = y;
  if (a->addr != b->addr)
    return a->addr < b->addr ? -1 : 1;
  return a->seq < b->seq ? -1 : a->seq > b->seq;
}

/* Fills m with one record per touched byte (before of its first access,
 * after of its last), only written bytes if writes_only. Returns -1 on
 * out-of-memory. */
static int build_map(byte_map *m, const tc_mem_access *acc, uint32_t n,
                     bool writes_only) {
  m->n = 0;
  uint32_t seq = 0;
  for (uint32_t i = 0; i < n; i++)
    for (uint32_t k = 0; k < acc[i].size; k++) {
      if (writes_only && acc[i].kind != TC_MEM_WRITE)
        break;
      if (m->n == m->cap) {
        size_t cap = m->cap ? m->cap * 2 : 256;
        byte_rec *nb = realloc(m->b, cap * sizeof *nb);
        if (!nb)
          return -1;
        m->b = nb;
        m->cap = cap;
      }
      const uint8_t *after =
          acc[i].kind == TC_MEM_WRITE ? acc[i].after : acc[i].before;
      m->b[m->n++] =
          (byte_rec){acc[i].addr + k, seq++, acc[i].before[k], after[k]};
    }
  if (m->n > 1)
    qsort(m->b, m->n, sizeof *m->b, cmp_byte);
  size_t out = 0;
  for (size_t i = 0; i < m->n;) {
    size_t j = i;
    while (j + 1 < m->n && m->b[j + 1].addr == m->b[i].addr)
      j++;
    byte_rec r = m->b[i];
    r.after = m->b[j].after;
    m->b[out++] = r;
    i = j + 1;
  }
  m->n = out;
  return 0;
}

static const byte_rec *find_byte(const byte_map *m, uint64_t addr) {
  size_t lo = 0, hi = m->n;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (m->b[mid].addr == addr)
      return &m->b[mid];
    if (m->b[mid].addr < addr)
      lo = mid + 1;
    else
      hi = mid;
  }
  return NULL;
}

/* ------------------------------------------- events between instructions
 * Syscalls, maps, faults and the exit come between two instructions; each
 * side collects those of one gap, and the two gaps are compared when both
 * reach the next instruction (or the end). */
typedef struct sys_rec {
  uint64_t insn, args[6], digest, nbytes;
  uint64_t nz_digest; /* the digest of the non-zero bytes alone */
  /* a signal frame written on this syscall's return: formats without
   * signal events may fold it into the syscall's writes (rvn) or not */
  uint64_t sig_digest, sig_nbytes;
  int64_t ret;
  uint32_t nr;
  uint8_t compat;
  const char *name;
} sys_rec;

typedef struct map_rec {
  tc_event_kind kind;
  uint64_t addr, size;
  uint32_t prot;
  char name[96];
} map_rec;

typedef struct gap {
  sys_rec *sys;
  map_rec *map;
  tc_fault_event *fault;
  size_t nsys, nmap, nfault, capsys, capmap, capfault;
  int have_exit;
  tc_exit_event exit;
  int oom;
} gap;

typedef struct side {
  const tc_format *fmt;
  tc_reader *r;
  tc_event ev;
  gap g;
  uint64_t last_insn; /* index of the last instruction read */
  uint64_t exit_syscalls, faults;
} side;

static void *grow(void *p, size_t *cap, size_t n, size_t elem) {
  if (n < *cap)
    return p;
  size_t c = *cap ? *cap * 2 : 16;
  void *q = realloc(p, c * elem);
  if (q)
    *cap = c;
  return q;
}

/* An order-independent digest of the bytes a syscall wrote: how a format
 * splits or orders the regions does not matter, their contents do. */
static uint64_t mix(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ull;
  return x ^ (x >> 33);
}

static void gap_add(side *s, const tc_event *ev) {
  gap *g = &s->g;
  void *p;
  switch (ev->kind) {
  case TC_EV_SYSCALL: {
    const tc_syscall_event *y = &ev->u.sys;
    if (y->part == 0 || !g->nsys) {
      if (!(p = grow(g->sys, &g->capsys, g->nsys, sizeof *g->sys))) {
        g->oom = 1;
        return;
      }
      g->sys = p;
      sys_rec *r = &g->sys[g->nsys++];
      memset(r, 0, sizeof *r);
      r->insn = y->insn_index;
      memcpy(r->args, y->args, sizeof r->args);
      r->ret = y->ret;
      r->nr = y->nr;
      r->compat = y->compat;
      r->name = y->name;
      if (y->name &&
          (!strcmp(y->name, "exit") || !strcmp(y->name, "exit_group")))
        s->exit_syscalls++;
    }
    sys_rec *r = &g->sys[g->nsys - 1];
    for (uint32_t i = 0; i < y->nmem; i++)
      for (uint32_t k = 0; k < y->mem[i].size; k++) {
        uint64_t h = mix((y->mem[i].addr + k) * 257 + y->mem[i].after[k]);
        r->digest += h;
        r->nz_digest += y->mem[i].after[k] ? h : 0;
        r->nbytes++;
      }
    return;
  }
  case TC_EV_SIGNAL: {
    const tc_signal_event *sg = &ev->u.sig;
    if (!g->nsys || g->sys[g->nsys - 1].insn != sg->insn_index)
      return; /* a fault's: compared as memory by the next instructions */
    sys_rec *r = &g->sys[g->nsys - 1];
    for (uint32_t i = 0; i < sg->nmem; i++)
      for (uint32_t k = 0; k < sg->mem[i].size; k++) {
        r->sig_digest += mix((sg->mem[i].addr + k) * 257 + sg->mem[i].after[k]);
        r->sig_nbytes++;
      }
    return;
  }
  case TC_EV_MAP:
  case TC_EV_UNMAP:
  case TC_EV_PROTECT: {
    if (!(p = grow(g->map, &g->capmap, g->nmap, sizeof *g->map))) {
      g->oom = 1;
      return;
    }
    g->map = p;
    map_rec *m = &g->map[g->nmap++];
    memset(m, 0, sizeof *m);
    m->kind = ev->kind;
    m->addr = ev->u.map.addr;
    m->size = ev->u.map.size;
    m->prot = ev->kind == TC_EV_UNMAP ? 0 : ev->u.map.prot;
    if (ev->kind == TC_EV_MAP && ev->u.map.name)
      snprintf(m->name, sizeof m->name, "%s", ev->u.map.name);
    return;
  }
  case TC_EV_FAULT:
    if (!(p = grow(g->fault, &g->capfault, g->nfault, sizeof *g->fault))) {
      g->oom = 1;
      return;
    }
    g->fault = p;
    g->fault[g->nfault++] = ev->u.fault;
    s->faults++;
    return;
  case TC_EV_EXIT:
    g->have_exit = 1;
    g->exit = ev->u.exit;
    g->exit.message = NULL;
    return;
  default:
    return;
  }
}

static void gap_reset(gap *g) {
  g->nsys = g->nmap = g->nfault = 0;
  g->have_exit = 0;
}

static void gap_free(gap *g) {
  free(g->sys);
  free(g->map);
  free(g->fault);
}

/* Next INSN event (1), end (0), error (-1); what comes before it goes to
 * the side's gap. */
static int next_insn(side *s, tc_error *err) {
  int rc;
  while ((rc = s->fmt->next_event(s->r, &s->ev, err)) == 1) {
    if (s->ev.kind == TC_EV_INSN) {
      s->last_insn = s->ev.u.insn.index;
      return 1;
    }
    gap_add(s, &s->ev);
  }
  return rc;
}

static bool held(const tc_format *f, const tc_arch *a, int r) {
  return !f->holds_reg || f->holds_reg(a, r);
}

static const char *const check_names[TC_VCHK_COUNT] = {
    "pc",       "bytes",         "tid",  "registers", "memory", "old values",
    "syscalls", "kernel writes", "maps", "faults",    "exit"};

const char *tc_verify_check_name(int check) {
  return check >= 0 && check < TC_VCHK_COUNT ? check_names[check] : NULL;
}

static void differ(tc_verify_table *t, int check, uint64_t insn,
                   const char *field, const char *fmt_expected, ...)
    __attribute__((format(printf, 5, 6)));
/* Counts a difference in `check`; the first one is kept. The variadic
 * arguments format two strings: "expected\0found" via two passes. */
static void differ(tc_verify_table *t, int check, uint64_t insn,
                   const char *field, const char *fmt_expected, ...) {
  tc_verify_result *c = &t->checks[check];
  if (c->mismatches++)
    return;
  c->insn = insn;
  snprintf(c->field, sizeof c->field, "%s", field);
  char both[256];
  va_list ap;
  va_start(ap, fmt_expected);
  vsnprintf(both, sizeof both, fmt_expected, ap);
  va_end(ap);
  char *bar = strchr(both, '|');
  if (bar)
    *bar = 0;
  const char *found = bar ? bar + 1 : "";
  size_t ne = strlen(both), nf = strlen(found);
  if (ne >= sizeof c->expected)
    ne = sizeof c->expected - 1;
  if (nf >= sizeof c->found)
    nf = sizeof c->found - 1;
  memcpy(c->expected, both, ne);
  c->expected[ne] = 0;
  memcpy(c->found, found, nf);
  c->found[nf] = 0;
}

static void reg_text(const tc_reg_info *ri, const uint8_t *v, char *out,
                     size_t max) {
  if (ri->size <= 8) {
    uint64_t x = 0;
    for (int k = ri->size - 1; k >= 0; k--)
      x = x << 8 | v[k];
    snprintf(out, max, "0x%" PRIx64, x);
    return;
  }
  size_t n = 0;
  out[0] = 0;
  for (int k = ri->size - 1; k >= 0 && n + 3 < max; k--)
    n += (size_t)snprintf(out + n, max - n, "%02x", v[k]);
}

/* Compares one instruction in every check that `f` holds. */
static void compare_insn(tc_verify_table *t, const tc_format *f,
                         const tc_arch *a, const tc_insn_event *x,
                         const tc_insn_event *y, byte_map *mx, byte_map *my) {
  uint32_t caps = f->caps;
  uint64_t i = x->index;
  if (x->pc != y->pc) {
    differ(t, TC_VCHK_PC, i, "pc", "0x%" PRIx64 "|0x%" PRIx64, x->pc, y->pc);
    return; /* the rest would only repeat it */
  }
  if ((caps & TC_CAP_INSN_BYTES) &&
      (x->size != y->size || memcmp(x->bytes, y->bytes, x->size) != 0))
    differ(t, TC_VCHK_BYTES, i, "bytes", "%u bytes|%u bytes%s", x->size,
           y->size, x->size == y->size ? ", other values" : "");
  if ((caps & TC_CAP_TID) && x->tid != y->tid)
    differ(t, TC_VCHK_TID, i, "tid", "%u|%u", x->tid, y->tid);
  for (int r = 0; r < a->nregs; r++) {
    const tc_reg_info *ri = &a->regs[r];
    if (held(f, a, r) && memcmp(x->state_before + ri->offset,
                                y->state_before + ri->offset, ri->size)) {
      char e[80], g[80];
      reg_text(ri, x->state_before + ri->offset, e, sizeof e);
      reg_text(ri, y->state_before + ri->offset, g, sizeof g);
      differ(t, TC_VCHK_REGS, i, ri->name, "%s|%s", e, g);
      break;
    }
  }
  if (!(caps & TC_CAP_MEM))
    return;
  if (build_map(mx, x->mem, x->nmem, caps & TC_CAP_MEM_WRITES_ONLY) < 0 ||
      build_map(my, y->mem, y->nmem, false) < 0) {
    differ(t, TC_VCHK_MEM, i, "memory", "|out of memory");
    return;
  }
  bool mem_bad = false, old_bad = false;
  /* A bounded format holds an instruction's first entries only: bytes
   * past a full set are the format's limit, not a loss to report. */
  bool full = (caps & TC_CAP_MEM_BOUNDED) && y->nmem >= TC_MEM_BOUND_WORDS;
  for (size_t k = 0; k < mx->n && !(mem_bad && old_bad); k++) {
    const byte_rec *want = &mx->b[k];
    const byte_rec *got = find_byte(my, want->addr);
    char field[64];
    snprintf(field, sizeof field, "memory 0x%" PRIx64, want->addr);
    if (!got && full)
      continue;
    if (!got) {
      if (!mem_bad)
        differ(t, TC_VCHK_MEM, i, field, "0x%02x|missing", want->after);
      mem_bad = true;
      continue;
    }
    if (got->after != want->after && !mem_bad) {
      differ(t, TC_VCHK_MEM, i, field, "0x%02x|0x%02x", want->after,
             got->after);
      mem_bad = true;
    }
    if ((caps & TC_CAP_MEM_OLD) && got->before != want->before && !old_bad) {
      snprintf(field, sizeof field, "memory 0x%" PRIx64 " before", want->addr);
      differ(t, TC_VCHK_MEM_OLD, i, field, "0x%02x|0x%02x", want->before,
             got->before);
      old_bad = true;
    }
  }
}

/* The exit the file must hold: its own record, or one its reader rebuilds
 * from the exit syscall or the fault. */
static bool exit_comparable(const tc_format *f, const side *ref) {
  if (f->caps & TC_CAP_EXIT)
    return true;
  if (ref->g.exit.reason == TC_EXIT_EXITED)
    return (f->caps & TC_CAP_SYSCALLS) && ref->exit_syscalls;
  if (ref->g.exit.reason == TC_EXIT_SIGNALED)
    return (f->caps & TC_CAP_FAULTS) && ref->faults;
  return false;
}

/* final: the gap after the last instruction. A syscall there ended the
 * process (exit, a fatal signal): a format that keeps no return value and
 * rebuilds it from the register after the call (bap, rvn) has none. */
static void compare_gaps(tc_verify_table *t, const tc_format *f,
                         const tc_arch *a, side *x, side *y, bool final) {
  uint32_t caps = f->caps;
  /* 32-bit guests: a return value compares in its 32 bits */
  uint64_t ret_mask = a->ptr_size == 4 ? 0xffffffffu : UINT64_MAX;
  uint64_t i = x->last_insn;
  if (caps & TC_CAP_SYSCALLS) {
    size_t n = x->g.nsys < y->g.nsys ? x->g.nsys : y->g.nsys;
    for (size_t k = 0; k < n; k++) {
      const sys_rec *e = &x->g.sys[k], *g = &y->g.sys[k];
      char field[64];
      snprintf(field, sizeof field, "syscall %s", e->name ? e->name : "?");
      if (e->nr != g->nr)
        differ(t, TC_VCHK_SYSCALLS, e->insn, "syscall number", "%u|%u", e->nr,
               g->nr);
      if ((caps & TC_CAP_SYSCALL_COMPAT) && e->compat != g->compat)
        differ(t, TC_VCHK_SYSCALLS, e->insn, "syscall table", "%s|%s",
               e->compat ? "compat" : "native",
               g->compat ? "compat" : "native");
      /* A handler entered on the syscall's return: its registers are what
       * follows the call, so a format that rebuilds the return value from
       * them (bap, rvn) sees the handler's argument instead. */
      else if (!final && !(e->sig_nbytes && !(caps & TC_CAP_SIGNALS)) &&
               (uint64_t)(e->ret ^ g->ret) & ret_mask)
        differ(t, TC_VCHK_SYSCALLS, e->insn, field, "= %" PRId64 "|= %" PRId64,
               e->ret, g->ret);
      else
        for (int ai = 0; ai < 6; ai++)
          /* an argument a format does not keep (ucir keeps the call's
           * own, not all six registers) reads as 0 */
          if (e->args[ai] != g->args[ai] && g->args[ai]) {
            snprintf(field, sizeof field, "syscall %s argument %d",
                     e->name ? e->name : "?", ai + 1);
            differ(t, TC_VCHK_SYSCALLS, e->insn, field,
                   "0x%" PRIx64 "|0x%" PRIx64, e->args[ai], g->args[ai]);
            break;
          }
      bool plain = e->digest == g->digest && e->nbytes == g->nbytes;
      bool folded = e->sig_nbytes && e->digest + e->sig_digest == g->digest &&
                    e->nbytes + e->sig_nbytes == g->nbytes;
      /* A format without maps (rvn) writes as the call's writes the zeros
       * a new mapping puts over older contents, and those an unmap leaves
       * (REVEN's memory outlives an unmap; execve unmaps the whole image):
       * the same non-zero bytes, and more bytes, all zero. */
      bool zero_fill = !(caps & TC_CAP_MAPS) && x->g.nmap &&
                       e->nz_digest == g->nz_digest && g->nbytes > e->nbytes;
      if ((caps & TC_CAP_SYSCALL_MEM) && !plain && !folded && !zero_fill) {
        snprintf(field, sizeof field, "syscall %s memory",
                 e->name ? e->name : "?");
        differ(t, TC_VCHK_SYSMEM, e->insn, field,
               "%" PRIu64 " bytes|%" PRIu64 " bytes%s", e->nbytes, g->nbytes,
               e->nbytes == g->nbytes ? ", other values" : "");
      }
    }
    if (x->g.nsys != y->g.nsys)
      differ(t, TC_VCHK_SYSCALLS, i, "syscalls after the instruction",
             "%zu|%zu", x->g.nsys, y->g.nsys);
  }
  if (caps & TC_CAP_MAPS) {
    size_t n = x->g.nmap < y->g.nmap ? x->g.nmap : y->g.nmap;
    static const char *const kinds[] = {[TC_EV_MAP] = "map",
                                        [TC_EV_UNMAP] = "unmap",
                                        [TC_EV_PROTECT] = "protect"};
    for (size_t k = 0; k < n; k++) {
      const map_rec *e = &x->g.map[k], *g = &y->g.map[k];
      if (e->kind != g->kind || e->addr != g->addr || e->size != g->size ||
          e->prot != g->prot || strcmp(e->name, g->name) != 0)
        differ(t, TC_VCHK_MAPS, i, kinds[e->kind],
               "0x%" PRIx64 "+0x%" PRIx64 " prot %u %.24s|%s 0x%" PRIx64
               "+0x%" PRIx64 " prot %u %.24s",
               e->addr, e->size, e->prot, e->name,
               g->kind <= TC_EV_PROTECT && kinds[g->kind] ? kinds[g->kind]
                                                          : "?",
               g->addr, g->size, g->prot, g->name);
    }
    if (x->g.nmap != y->g.nmap)
      differ(t, TC_VCHK_MAPS, i, "maps after the instruction", "%zu|%zu",
             x->g.nmap, y->g.nmap);
  }
  if (caps & TC_CAP_FAULTS) {
    size_t n = x->g.nfault < y->g.nfault ? x->g.nfault : y->g.nfault;
    for (size_t k = 0; k < n; k++) {
      const tc_fault_event *e = &x->g.fault[k], *g = &y->g.fault[k];
      if (e->insn_index != g->insn_index || e->pc != g->pc ||
          e->signal != g->signal)
        differ(t, TC_VCHK_FAULTS, e->insn_index, "fault",
               "signal %d at 0x%" PRIx64 "|signal %d at 0x%" PRIx64, e->signal,
               e->pc, g->signal, g->pc);
    }
    if (x->g.nfault != y->g.nfault)
      differ(t, TC_VCHK_FAULTS, i, "faults", "%zu|%zu", x->g.nfault,
             y->g.nfault);
  }
  if (x->g.have_exit && t->checks[TC_VCHK_EXIT].held && exit_comparable(f, x)) {
    const tc_exit_event *e = &x->g.exit, *g = &y->g.exit;
    if (!y->g.have_exit)
      differ(t, TC_VCHK_EXIT, i, "exit", "status %d|none", e->status);
    else if (e->reason != g->reason || e->status != g->status ||
             e->signal != g->signal)
      differ(t, TC_VCHK_EXIT, i, "exit",
             "reason %d status %d|reason %d status %d", (int)e->reason,
             e->status, (int)g->reason, g->status);
  }
  gap_reset(&x->g);
  gap_reset(&y->g);
}

/* Coverage formats (TC_CAP_COVERAGE) hold each distinct basic block once:
 * the comparison is of code, not of a sequence. Every block must start at
 * an executed instruction and be tiled exactly by executed instructions;
 * every executed instruction must lie in a block. The executed PCs are
 * kept in an open-addressing table (size grows with the code, not the
 * trace). */
typedef struct pc_ent {
  uint64_t pc;
  uint8_t size, used, covered;
} pc_ent;

typedef struct pc_set {
  pc_ent *e;
  size_t cap, n;
} pc_set;

static size_t pc_hash(uint64_t pc, size_t cap) {
  pc ^= pc >> 31;
  pc *= 0x9E3779B97F4A7C15ull;
  return (size_t)(pc >> 17) & (cap - 1);
}

static pc_ent *pc_find(const pc_set *s, uint64_t pc) {
  if (!s->cap)
    return NULL;
  for (size_t i = pc_hash(pc, s->cap);; i = (i + 1) & (s->cap - 1)) {
    if (!s->e[i].used)
      return NULL;
    if (s->e[i].pc == pc)
      return &s->e[i];
  }
}

static int pc_add(pc_set *s, uint64_t pc, uint8_t size) {
  if ((s->n + 1) * 2 > s->cap) {
    size_t cap = s->cap ? s->cap * 2 : 4096;
    pc_ent *e = calloc(cap, sizeof *e);
    if (!e)
      return -1;
    for (size_t i = 0; i < s->cap; i++)
      if (s->e[i].used) {
        size_t j = pc_hash(s->e[i].pc, cap);
        while (e[j].used)
          j = (j + 1) & (cap - 1);
        e[j] = s->e[i];
      }
    free(s->e);
    s->e = e;
    s->cap = cap;
  }
  size_t i = pc_hash(pc, s->cap);
  while (s->e[i].used) {
    if (s->e[i].pc == pc)
      return 0; /* the first execution's size stands */
    i = (i + 1) & (s->cap - 1);
  }
  s->e[i] = (pc_ent){pc, size, 1, 0};
  s->n++;
  return 0;
}

static void cov_mismatch(tc_verify_table *t, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void cov_mismatch(tc_verify_table *t, const char *fmt, ...) {
  tc_verify_result *c = &t->checks[TC_VCHK_PC];
  if (c->mismatches++ == 0) {
    va_list ap;
    va_start(ap, fmt);
    snprintf(c->field, sizeof c->field, "coverage");
    snprintf(c->expected, sizeof c->expected, "every block executed");
    vsnprintf(c->found, sizeof c->found, fmt, ap);
    va_end(ap);
  }
}

static int verify_coverage(side *ref, side *oth, const tc_arch *a,
                           tc_verify_table *t, tc_error *err) {
  pc_set set = {0};
  int rc = 0, g;
  uint64_t mask = a->ptr_size == 8 ? UINT64_MAX : UINT32_MAX;
  while ((g = next_insn(ref, err)) == 1) {
    t->insns++;
    if (pc_add(&set, ref->ev.u.insn.pc, ref->ev.u.insn.size) < 0) {
      tc_error_set(err, "out of memory");
      g = -1;
      break;
    }
  }
  if (g < 0) {
    free(set.e);
    return -1;
  }
  tc_error oerr = {{0}};
  while ((g = next_insn(oth, &oerr)) == 1) {
    const tc_insn_event *b = &oth->ev.u.insn;
    uint64_t end = tc_state_get(a, b->state_after, a->pc_reg);
    if (b->size || b->tid != TC_TID_BLOCK) {
      cov_mismatch(t, "event %" PRIu64 " at 0x%" PRIx64 " is not a block",
                   b->index, b->pc);
      continue;
    }
    if (end == b->pc)
      continue; /* an empty block claims nothing */
    if (end < b->pc) {
      cov_mismatch(t, "block at 0x%" PRIx64 " ends below its start", b->pc);
      continue;
    }
    uint64_t pc = b->pc;
    while (pc < end) {
      pc_ent *e = pc_find(&set, pc);
      if (!e || !e->size) {
        cov_mismatch(t,
                     "block 0x%" PRIx64 "-0x%" PRIx64 ": 0x%" PRIx64
                     " is not an executed instruction",
                     b->pc, end, pc);
        break;
      }
      e->covered = 1;
      pc = (pc + e->size) & mask;
      if (pc > end)
        cov_mismatch(t,
                     "block 0x%" PRIx64 "-0x%" PRIx64
                     " ends inside the instruction at 0x%" PRIx64,
                     b->pc, end, e->pc);
    }
  }
  if (g < 0) {
    tc_error_set(err, "%s", oerr.msg);
    rc = -1;
  }
  for (size_t i = 0; rc == 0 && i < set.cap; i++)
    if (set.e[i].used && !set.e[i].covered)
      cov_mismatch(t,
                   "the instruction at 0x%" PRIx64 " ran; no block covers it",
                   set.e[i].pc);
  free(set.e);
  return rc;
}

int tc_verify_streams(const char *ref_path, const tc_format *ref_fmt,
                      const char *path, const tc_format *fmt,
                      const tc_format *within, tc_verify_table *t,
                      tc_error *err) {
  tc_verify_table_init(t);
  if (!fmt)
    fmt = tc_format_detect(path, err);
  if (!fmt)
    return -1;
  if (!within)
    within = fmt;
  if (!fmt->open_reader || !ref_fmt->open_reader) {
    tc_error_set(err, "%s: the %s format has no reader to verify with", path,
                 fmt->name);
    return -1;
  }
  side ref = {.fmt = ref_fmt, .r = ref_fmt->open_reader(ref_path, err)};
  if (!ref.r)
    return -1;
  side oth = {.fmt = fmt, .r = fmt->open_reader(path, err)};
  if (!oth.r) {
    ref_fmt->close_reader(ref.r);
    return -1;
  }
  const tc_arch *a = ref_fmt->reader_info(ref.r)->arch;
  const tc_arch *oa = fmt->reader_info(oth.r)->arch;
  int rc = 0;
  byte_map mx = {0}, my = {0};
  if (oa != a && tc_arch_base(oa) != tc_arch_base(a)) {
    tc_error_set(err, "%s is a %s trace, the reference is %s", path, oa->name,
                 a->name);
    rc = -1;
    goto out;
  }
  /* mips with and without its FPU registers (a format that does not carry
   * them reads back the arch's own table): the registers both have, at
   * the same offsets in both states. */
  if (oa != a)
    a = tc_arch_base(a);
  for (int r = 0; r < a->nregs; r++)
    t->regs_held += held(within, a, r);
  t->regs_total = a->nregs;
  uint32_t c = within->caps;
  t->checks[TC_VCHK_PC].held = 1;
  if (c & TC_CAP_COVERAGE) {
    t->coverage = 1;
    rc = verify_coverage(&ref, &oth, a, t, err);
    goto out;
  }
  t->checks[TC_VCHK_BYTES].held = (c & TC_CAP_INSN_BYTES) != 0;
  t->checks[TC_VCHK_TID].held = (c & TC_CAP_TID) != 0;
  t->checks[TC_VCHK_REGS].held = t->regs_held != 0;
  t->checks[TC_VCHK_MEM].held = (c & TC_CAP_MEM) != 0;
  t->checks[TC_VCHK_MEM_OLD].held = (c & TC_CAP_MEM) && (c & TC_CAP_MEM_OLD);
  t->checks[TC_VCHK_SYSCALLS].held = (c & TC_CAP_SYSCALLS) != 0;
  t->checks[TC_VCHK_SYSMEM].held =
      (c & TC_CAP_SYSCALLS) && (c & TC_CAP_SYSCALL_MEM);
  t->checks[TC_VCHK_MAPS].held = (c & TC_CAP_MAPS) != 0;
  t->checks[TC_VCHK_FAULTS].held = (c & TC_CAP_FAULTS) != 0;
  t->checks[TC_VCHK_EXIT].held =
      (c & (TC_CAP_EXIT | TC_CAP_SYSCALLS | TC_CAP_FAULTS)) != 0;
  for (;;) {
    int gx = next_insn(&ref, err);
    if (gx < 0) {
      rc = -1;
      break;
    }
    tc_error oerr = {{0}};
    int gy = next_insn(&oth, &oerr);
    if (gy < 0) {
      tc_error_set(err, "%s", oerr.msg);
      rc = -1;
      break;
    }
    if (ref.g.oom || oth.g.oom) {
      tc_error_set(err, "out of memory");
      rc = -1;
      break;
    }
    if (!gx || !gy) {
      /* the events after the last instruction: exit, last syscall... */
      if (gx == gy)
        compare_gaps(t, within, a, &ref, &oth, true);
      else
        differ(t, TC_VCHK_PC, gx ? ref.ev.u.insn.index : t->insns,
               "instruction count", "%s|%" PRIu64 " instructions",
               gx ? "more instructions" : "no more", t->insns);
      break;
    }
    /* the events before this instruction, after the previous one */
    compare_gaps(t, within, a, &ref, &oth, false);
    compare_insn(t, within, a, &ref.ev.u.insn, &oth.ev.u.insn, &mx, &my);
    t->insns++;
  }
out:
  free(mx.b);
  free(my.b);
  gap_free(&ref.g);
  gap_free(&oth.g);
  ref_fmt->close_reader(ref.r);
  fmt->close_reader(oth.r);
  return rc;
}

/* tc_verify_checks into this library's own table. */
static int verify_checks(const char *ref_tct, const char *path,
                         const tc_format *fmt, tc_verify_table *t,
                         tc_error *err) {
  if (!fmt)
    fmt = tc_format_detect(path, err);
  if (!fmt) {
    tc_verify_table_init(t);
    return -1;
  }
  return tc_verify_streams(ref_tct, tc_format_by_name("tct"), path, fmt, fmt, t,
                           err);
}

int tc_verify_checks(const char *ref_tct, const char *path,
                     const tc_format *fmt, tc_verify_table *t, tc_error *err) {
  if (tc_sized_check(t, "tc_verify_table", err) < 0)
    return -1;
  tc_verify_table full;
  int rc = verify_checks(ref_tct, path, fmt, &full, err);
  tc_sized_out(t, &full, sizeof full);
  return rc;
}

int tc_verify(const char *ref_tct, const char *path, const tc_format *fmt,
              tc_verify_report *rep, tc_error *err) {
  if (tc_sized_check(rep, "tc_verify_report", err) < 0)
    return -1;
  tc_verify_table t;
  int rc = verify_checks(ref_tct, path, fmt, &t, err);
  tc_verify_report r;
  tc_verify_report_init(&r);
  r.insns = t.insns;
  r.regs_held = t.regs_held;
  r.regs_total = t.regs_total;
  const tc_verify_result *first = NULL;
  for (int k = 0; k < TC_VCHK_COUNT; k++) {
    const tc_verify_result *c = &t.checks[k];
    r.mismatches += c->mismatches;
    if (c->mismatches && (!first || c->insn < first->insn))
      first = c;
  }
  if (first)
    snprintf(r.first, sizeof r.first,
             "instruction %" PRIu64 ": %s: expected %s, found %s", first->insn,
             first->field, first->expected, first->found);
  tc_sized_out(rep, &r, sizeof r);
  return rc;
}
