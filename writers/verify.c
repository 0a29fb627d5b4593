/* Round-trip verification: a trace in any readable format against the
 * lossless tct recording of the same run, instruction by instruction,
 * within what the format holds (tc_format.caps and holds_reg). Both files
 * are streamed in lockstep, so memory use does not grow with the trace. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tracecorn/tracecorn.h"

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

typedef struct side {
  const tc_format *fmt;
  tc_reader *r;
  tc_event ev;
} side;

/* Next INSN event (1), end (0), error (-1). */
static int next_insn(side *s, tc_error *err) {
  int rc;
  while ((rc = s->fmt->next_event(s->r, &s->ev, err)) == 1)
    if (s->ev.kind == TC_EV_INSN)
      return 1;
  return rc;
}

static bool held(const tc_format *f, const tc_arch *a, int r) {
  return !f->holds_reg || f->holds_reg(a, r);
}

/* Describes the first difference of one instruction in buf; 0 if none. */
static int compare_insn(const tc_format *f, const tc_arch *a,
                        const tc_insn_event *x, const tc_insn_event *y,
                        byte_map *mx, byte_map *my, char *buf, size_t max) {
  uint32_t caps = f->caps;
  if (x->pc != y->pc) {
    snprintf(buf, max, "pc 0x%" PRIx64 " vs 0x%" PRIx64, x->pc, y->pc);
    return 1;
  }
  if ((caps & TC_CAP_INSN_BYTES) &&
      (x->size != y->size || memcmp(x->bytes, y->bytes, x->size) != 0)) {
    snprintf(buf, max, "instruction bytes (size %u vs %u)", x->size, y->size);
    return 1;
  }
  if ((caps & TC_CAP_TID) && x->tid != y->tid) {
    snprintf(buf, max, "tid %u vs %u", x->tid, y->tid);
    return 1;
  }
  for (int r = 0; r < a->nregs; r++) {
    const tc_reg_info *ri = &a->regs[r];
    if (held(f, a, r) && memcmp(x->state_before + ri->offset,
                                y->state_before + ri->offset, ri->size)) {
      snprintf(buf, max, "register %s before the instruction", ri->name);
      return 1;
    }
  }
  if (!(caps & TC_CAP_MEM))
    return 0;
  if (build_map(mx, x->mem, x->nmem, caps & TC_CAP_MEM_WRITES_ONLY) < 0 ||
      build_map(my, y->mem, y->nmem, false) < 0) {
    snprintf(buf, max, "out of memory");
    return 1;
  }
  for (size_t i = 0; i < mx->n; i++) {
    const byte_rec *want = &mx->b[i];
    const byte_rec *got = find_byte(my, want->addr);
    if (!got) {
      snprintf(buf, max, "memory at 0x%" PRIx64 " missing", want->addr);
      return 1;
    }
    if (got->after != want->after) {
      snprintf(buf, max, "memory at 0x%" PRIx64 " after: 0x%02x vs 0x%02x",
               want->addr, want->after, got->after);
      return 1;
    }
    if ((caps & TC_CAP_MEM_OLD) && got->before != want->before) {
      snprintf(buf, max, "memory at 0x%" PRIx64 " before: 0x%02x vs 0x%02x",
               want->addr, want->before, got->before);
      return 1;
    }
  }
  return 0;
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

static void cov_mismatch(tc_verify_report *rep, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void cov_mismatch(tc_verify_report *rep, const char *fmt, ...) {
  if (rep->mismatches++ == 0) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(rep->first, sizeof rep->first, fmt, ap);
    va_end(ap);
  }
}

static int verify_coverage(side *ref, side *oth, const tc_arch *a,
                           tc_verify_report *rep, tc_error *err) {
  pc_set set = {0};
  int rc = 0, g;
  uint64_t mask = a->ptr_size == 8 ? UINT64_MAX : UINT32_MAX;
  while ((g = next_insn(ref, err)) == 1) {
    rep->insns++;
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
      cov_mismatch(rep, "event %" PRIu64 " at 0x%" PRIx64 " is not a block",
                   b->index, b->pc);
      continue;
    }
    if (end == b->pc)
      continue; /* an empty block claims nothing */
    if (end < b->pc) {
      cov_mismatch(rep, "block at 0x%" PRIx64 " ends below its start", b->pc);
      continue;
    }
    uint64_t pc = b->pc;
    while (pc < end) {
      pc_ent *e = pc_find(&set, pc);
      if (!e || !e->size) {
        cov_mismatch(rep,
                     "block 0x%" PRIx64 "-0x%" PRIx64 ": 0x%" PRIx64
                     " is not an executed instruction",
                     b->pc, end, pc);
        break;
      }
      e->covered = 1;
      pc = (pc + e->size) & mask;
      if (pc > end)
        cov_mismatch(rep,
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
      cov_mismatch(rep,
                   "the instruction at 0x%" PRIx64 " ran; no block covers it",
                   set.e[i].pc);
  free(set.e);
  return rc;
}

int tc_verify(const char *ref_tct, const char *path, const tc_format *fmt,
              tc_verify_report *rep, tc_error *err) {
  const tc_format *tct = tc_format_by_name("tct");
  memset(rep, 0, sizeof *rep);
  if (!fmt)
    fmt = tc_format_detect(path, err);
  if (!fmt)
    return -1;
  if (!fmt->open_reader) {
    tc_error_set(err, "%s: the %s format has no reader to verify with", path,
                 fmt->name);
    return -1;
  }
  side ref = {tct, tct->open_reader(ref_tct, err), {0}};
  if (!ref.r)
    return -1;
  side oth = {fmt, fmt->open_reader(path, err), {0}};
  if (!oth.r) {
    tct->close_reader(ref.r);
    return -1;
  }
  const tc_arch *a = tct->reader_info(ref.r)->arch;
  int rc = 0;
  if (fmt->reader_info(oth.r)->arch != a) {
    tc_error_set(err, "%s is a %s trace, the reference is %s", path,
                 fmt->reader_info(oth.r)->arch->name, a->name);
    rc = -1;
    goto out;
  }
  for (int r = 0; r < a->nregs; r++)
    rep->regs_held += held(fmt, a, r);
  rep->regs_total = a->nregs;
  if (fmt->caps & TC_CAP_COVERAGE) {
    rc = verify_coverage(&ref, &oth, a, rep, err);
    goto out;
  }
  byte_map mx = {0}, my = {0};
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
    if (!gx || !gy) {
      if (gx != gy) {
        rep->mismatches++;
        if (!rep->first[0])
          snprintf(rep->first, sizeof rep->first,
                   "%s ends after %" PRIu64 " instructions, the recording %s",
                   fmt->name, rep->insns, gx ? "goes on" : "has no more");
      }
      break;
    }
    char why[256];
    if (compare_insn(fmt, a, &ref.ev.u.insn, &oth.ev.u.insn, &mx, &my, why,
                     sizeof why)) {
      rep->mismatches++;
      if (!rep->first[0])
        snprintf(rep->first, sizeof rep->first,
                 "instruction %" PRIu64 " at 0x%" PRIx64 ": %s",
                 ref.ev.u.insn.index, ref.ev.u.insn.pc, why);
    }
    rep->insns++;
  }
  free(mx.b);
  free(my.b);
out:
  tct->close_reader(ref.r);
  fmt->close_reader(oth.r);
  return rc;
}
