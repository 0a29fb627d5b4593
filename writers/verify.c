/* Round-trip verification: a trace in any readable format against the
 * lossless tct recording of the same run, instruction by instruction,
 * within what the format holds (tc_format.caps and holds_reg). Both files
 * are streamed in lockstep, so memory use does not grow with the trace. */
#include <inttypes.h>
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
