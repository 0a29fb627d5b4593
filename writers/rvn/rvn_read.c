/* SPDX-License-Identifier: GPL-2.0-or-later */
/* REVEN binary trace format 1.0 (rvnbintrace): the reader. Facts and
 * rules: /work/shared/specs/rvnbintrace.md; the writer is rvn.c.
 *
 * Both files are mapped read-only and every length is checked against
 * them before use, so allocations are bounded by the file size. The
 * reader checks what Tetrane's TraceReader / CacheReader check (magic,
 * versions, compression, register and operation ids, continuation rules,
 * section sizes, cache register sizes), plus REVEN's naming rules
 * (mandatory registers, sizes, statics), writes inside declared regions,
 * the declared event count and no trailing bytes.
 *
 * Events come back in tracecorn's model: MAP per region and a KEYFRAME,
 * then per instruction event an INSN (its bytes read from the memory the
 * trace rebuilds; a following "syscall N name" event is folded into its
 * state after and yielded as a SYSCALL), FAULT for an exception event,
 * and EXIT. Memory writes come with the bytes they replaced. seek(n)
 * restores the closest cache point before instruction n and replays only
 * from there. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/byteorder.h"
#include "writers/io/zst.h"
#include "writers/rvn/rvn.h"

int rvn_probe(const uint8_t *head, size_t n, const char *path);
tc_reader *rvn_open_reader(const char *path, tc_error *err);
const tc_trace_info *rvn_reader_info(tc_reader *r);
const char *rvn_reader_writer(tc_reader *r);
int rvn_next_event(tc_reader *r, tc_event *ev, tc_error *err);
void rvn_close_reader(tc_reader *r);
int rvn_seek(tc_reader *r, uint64_t insn, tc_error *err);

typedef struct freg { /* a register the file declares */
  uint16_t id, size;
  uint32_t off; /* in the register state buffer */
  int16_t canon;
  uint8_t nlen;
  const uint8_t *name;
} freg;

typedef struct fop {
  uint8_t valid, oper;
  uint16_t reg; /* freg index */
  const uint8_t *value;
} fop;

typedef struct rregion {
  uint64_t start, size, off; /* off: file offset of its initial bytes */
} rregion;

typedef struct cpoint {
  uint64_t ctx, toff, cpu_off, insn;
  uint32_t npages;
  uint64_t pages_at; /* cache file offset of its (address, offset) list */
} cpoint;

typedef struct dmem {
  uint64_t addr, size;
  const uint8_t *data;
} dmem;

typedef struct dreg {
  uint16_t fr; /* freg index, or the op id */
  uint8_t is_op;
  const uint8_t *value;
} dreg;

typedef struct devent { /* one decoded event */
  int other;
  const uint8_t *desc;
  uint8_t dlen;
  size_t nmem, nreg;
  uint64_t end;
} devent;

typedef struct accset { /* memory accesses handed out with an event */
  tc_mem_access *a;
  size_t n, cap;
  uint8_t *before;
  size_t len, bcap;
} accset;

enum { PH_MAPS, PH_KEY, PH_EVENTS, PH_EXIT, PH_DONE };
enum { LEN_CACHE = 4096 };

typedef struct len_entry {
  uint64_t pc;
  uint8_t len;
  uint8_t bytes[16];
} len_entry;

struct tc_reader {
  char *bin_path, *cache_path;
  const uint8_t *bin;
  size_t bin_size;
  const uint8_t *cache;
  size_t cache_size;
  rvn_meta meta;
  char writer[1100]; /* meta's tool name and version */
  uint8_t phy;
  rregion *reg;
  size_t nreg;
  freg *fr;
  size_t nfr;
  uint16_t *id2fr; /* id -> freg index + 1 */
  fop ops[256];
  int canon[RVN_NREGS];
  const uint8_t *vals[RVN_NREGS];
  int8_t canon2tc[RVN_NREGS]; /* -2: the x87 group */
  uint8_t *rstate, *rinit;
  size_t rsize;
  rvn_map map;
  const tc_arch *arch;
  uint64_t ev_first, ev_end, ev_count;
  uint64_t pos, ctx, insn;
  rvn_pages ov; /* pages written since the initial memory */
  uint8_t *tc_cur, *tc_before, *tc_init, *tc_key;
  uint64_t tcdirty;
  uint16_t changed[64];
  dmem *dm;
  size_t capdm;
  dreg *dr;
  size_t capdr;
  accset ai, as;
  int phase;
  size_t map_i;
  int q_sys, q_fault, q_key;
  tc_syscall_event sys;
  tc_fault_event fault;
  uint64_t key_index;
  char sysname[256];
  int exited, exit_status, last_signal;
  /* cache */
  int have_cache, points_ready, have_ix;
  cpoint *pts;
  size_t npts;
  uint64_t cpts_body, cpts_size;
  len_entry *lens;
  uint64_t replayed;
  tc_trace_info info;
};

static void clean_name(const uint8_t *p, size_t n, char *out, size_t max) {
  size_t o = 0;
  for (size_t i = 0; i < n && o + 1 < max; i++)
    out[o++] = p[i] >= 0x20 && p[i] < 0x7f ? (char)p[i] : '?';
  out[o] = 0;
}

static int bad(tc_reader *r, tc_error *err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int bad(tc_reader *r, tc_error *err, const char *fmt, ...) {
  char msg[400];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  tc_error_set(err, "rvn: %s: %s", r->bin_path, msg);
  return -1;
}

static int bad_cache(tc_reader *r, tc_error *err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int bad_cache(tc_reader *r, tc_error *err, const char *fmt, ...) {
  char msg[400];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  tc_error_set(err, "rvn: %s: %s", r->cache_path, msg);
  return -1;
}

/* A section: u64 size, then the body, inside the file. */
static int section(tc_reader *r, const uint8_t *file, size_t fsize,
                   uint64_t *pos, uint64_t *body, uint64_t *size,
                   const char *name, int cache, tc_error *err) {
  if (fsize - *pos < 8)
    return (cache ? bad_cache : bad)(r, err, "truncated before the %s section",
                                     name);
  *size = get_le(file + *pos, 8);
  *body = *pos + 8;
  if (*size > fsize - *body)
    return (cache ? bad_cache
                  : bad)(r, err,
                         "the %s section at 0x%" PRIx64 " declares %" PRIu64
                         " bytes, the file has %" PRIu64 " left (truncated?)",
                         name, *pos, *size, (uint64_t)(fsize - *body));
  *pos = *body + *size;
  return 0;
}

/* A bounded cursor over one section. */
typedef struct cur {
  const uint8_t *p;
  uint64_t o, end;
} cur;

static int cur_need(cur *c, uint64_t n) { return c->end - c->o >= n; }

static uint64_t cur_get(cur *c, unsigned n) {
  uint64_t v = get_le(c->p + c->o, n);
  c->o += n;
  return v;
}

/* ------------------------------------------------------------- memory */

static const rregion *region_at(const tc_reader *r, uint64_t addr) {
  size_t lo = 0, hi = r->nreg;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (r->reg[mid].start + r->reg[mid].size <= addr)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo < r->nreg && addr >= r->reg[lo].start ? &r->reg[lo] : NULL;
}

/* 1 if every byte of [addr, addr+size) lies in a region. */
static int covered(const tc_reader *r, uint64_t addr, uint64_t size) {
  while (size) {
    const rregion *g = region_at(r, addr);
    if (!g)
      return 0;
    uint64_t left = g->start + g->size - addr;
    if (left >= size)
      return 1;
    addr += left;
    size -= left;
  }
  return 1;
}

/* The initial memory (zeros outside regions). */
static void base_read(const tc_reader *r, uint64_t addr, uint8_t *out,
                      size_t n) {
  while (n) {
    const rregion *g = region_at(r, addr);
    size_t k;
    if (g) {
      uint64_t left = g->start + g->size - addr;
      k = left < n ? (size_t)left : n;
      memcpy(out, r->bin + g->off + (addr - g->start), k);
    } else {
      /* up to the next region */
      size_t lo = 0, hi = r->nreg;
      while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (r->reg[mid].start <= addr)
          lo = mid + 1;
        else
          hi = mid;
      }
      uint64_t gap = lo < r->nreg ? r->reg[lo].start - addr : UINT64_MAX;
      k = gap < n ? (size_t)gap : n;
      memset(out, 0, k);
    }
    addr += k;
    out += k;
    n -= k;
  }
}

static void mem_read(tc_reader *r, uint64_t addr, uint8_t *out, size_t n) {
  while (n) {
    uint64_t pn = addr / RVN_PAGE, in = addr % RVN_PAGE;
    size_t k = RVN_PAGE - in < n ? (size_t)(RVN_PAGE - in) : n;
    rvn_page *pg = rvn_pages_get(&r->ov, pn);
    if (pg)
      memcpy(out, pg->data + in, k);
    else
      base_read(r, addr, out, k);
    addr += k;
    out += k;
    n -= k;
  }
}

static int mem_write(tc_reader *r, uint64_t addr, const uint8_t *data,
                     uint64_t n) {
  while (n) {
    uint64_t pn = addr / RVN_PAGE, in = addr % RVN_PAGE;
    uint64_t k = RVN_PAGE - in < n ? RVN_PAGE - in : n;
    int created;
    rvn_page *pg = rvn_pages_add(&r->ov, pn, &created);
    if (!pg)
      return -1;
    if (created)
      base_read(r, pn * RVN_PAGE, pg->data, RVN_PAGE);
    memcpy(pg->data + in, data, (size_t)k);
    addr += k;
    data += k;
    n -= k;
  }
  return 0;
}

int rvn_reader_read_mem(tc_reader *r, uint64_t addr, uint8_t *out, size_t n) {
  if (n && !covered(r, addr, n))
    return -1;
  mem_read(r, addr, out, n);
  return 0;
}

/* ------------------------------------------------------------- header */

static int cmp_region(const void *x, const void *y) {
  const rregion *a = x, *b = y;
  return a->start < b->start ? -1 : a->start > b->start;
}

static const char *const mandatory[] = {"gdtr_base",
                                        "gdtr_limit",
                                        "ldtr_base",
                                        "ldtr_limit",
                                        "idtr_base",
                                        "idtr_limit",
                                        "tr_base",
                                        "tr_limit",
                                        "cs_shadow",
                                        "ds_shadow",
                                        "es_shadow",
                                        "ss_shadow",
                                        "fs_shadow",
                                        "gs_shadow",
                                        "cr0",
                                        "cr3",
                                        "cr4",
                                        "msr_c0000080",
                                        "msr_c0000100",
                                        "msr_c0000101",
                                        "pkru",
                                        "eflags",
                                        NULL};

static int read_machine(tc_reader *r, uint64_t body, uint64_t size,
                        tc_error *err) {
  cur c = {r->bin, body, body + size};
  const char *what = "machine description section too short";
  if (!cur_need(&c, 5))
    return bad(r, err, "%s", what);
  uint32_t magic = (uint32_t)cur_get(&c, 4);
  if (magic == RVN_ARCH_ARM64)
    return bad(r, err,
               "an arm64 ('arm1') REVEN trace: tracecorn reads only "
               "amd64 ('x641') traces");
  if (magic != RVN_ARCH_X64)
    return bad(r, err, "unsupported architecture magic 0x%08x", magic);
  r->phy = (uint8_t)cur_get(&c, 1);
  if (r->phy < 1 || r->phy > 8)
    return bad(r, err, "physical address size %u: must be between 1 and 8",
               r->phy);
  /* regions */
  if (!cur_need(&c, 4))
    return bad(r, err, "%s", what);
  uint64_t n = cur_get(&c, 4);
  if (n > (c.end - c.o) / (2u * r->phy))
    return bad(r, err,
               "%" PRIu64 " memory regions do not fit the machine "
               "description section",
               n);
  r->reg = calloc(n ? n : 1, sizeof *r->reg);
  if (!r->reg)
    return bad(r, err, "out of memory");
  r->nreg = n;
  uint64_t rel = 0;
  for (uint64_t i = 0; i < n; i++) {
    r->reg[i].start = cur_get(&c, r->phy);
    r->reg[i].size = cur_get(&c, r->phy);
    r->reg[i].off = rel; /* in the initial memory body, declaration order */
    if (r->reg[i].start + r->reg[i].size < r->reg[i].start ||
        r->reg[i].size > UINT64_MAX - rel)
      return bad(r, err, "memory region %" PRIu64 " wraps around", i);
    rel += r->reg[i].size;
  }
  /* registers */
  if (!cur_need(&c, 4))
    return bad(r, err, "%s", what);
  n = cur_get(&c, 4);
  if (n > (c.end - c.o) / 5)
    return bad(r, err,
               "%" PRIu64 " registers do not fit the machine "
               "description section",
               n);
  r->fr = calloc(n ? n : 1, sizeof *r->fr);
  r->id2fr = calloc(65536, sizeof *r->id2fr);
  if (!r->fr || !r->id2fr)
    return bad(r, err, "out of memory");
  for (int k = 0; k < RVN_NREGS; k++)
    r->canon[k] = -1;
  for (uint64_t i = 0; i < n; i++) {
    if (!cur_need(&c, 5))
      return bad(r, err, "%s", what);
    freg *f = &r->fr[i];
    f->id = (uint16_t)cur_get(&c, 2);
    f->size = (uint16_t)cur_get(&c, 2);
    f->nlen = (uint8_t)cur_get(&c, 1);
    if (!cur_need(&c, f->nlen))
      return bad(r, err, "%s", what);
    f->name = c.p + c.o;
    c.o += f->nlen;
    char nm[300];
    clean_name(f->name, f->nlen, nm, sizeof nm);
    if (r->id2fr[f->id])
      return bad(r, err, "register id %u is defined twice", f->id);
    r->id2fr[f->id] = (uint16_t)(i + 1);
    for (uint64_t j = 0; j < i; j++)
      if (r->fr[j].nlen == f->nlen && !memcmp(r->fr[j].name, f->name, f->nlen))
        return bad(r, err, "register %s is defined twice", nm);
    int want = rvn_expected_size((const char *)f->name, f->nlen);
    if (want < 0)
      return bad(r, err,
                 "register %s: REVEN's amd64 machine has eflags, "
                 "not rflags",
                 nm);
    if (want > 0 && f->size != want)
      return bad(r, err, "register %s is %u bytes, REVEN's is %d", nm, f->size,
                 want);
    f->off = (uint32_t)r->rsize;
    r->rsize += f->size;
    f->canon = (int16_t)rvn_reg_by_name((const char *)f->name, f->nlen);
    if (f->canon >= 0)
      r->canon[f->canon] = (int)i;
  }
  r->nfr = n;
  for (const char *const *m = mandatory; *m; m++)
    if (r->canon[rvn_reg_by_name(*m, strlen(*m))] < 0)
      return bad(r, err, "the mandatory register %s is not declared", *m);
  /* operations */
  if (!cur_need(&c, 4))
    return bad(r, err, "%s", what);
  n = cur_get(&c, 4);
  if (n > 256)
    return bad(r, err, "%" PRIu64 " register operations (ids are 1 byte)", n);
  for (uint64_t i = 0; i < n; i++) {
    if (!cur_need(&c, 4))
      return bad(r, err, "%s", what);
    unsigned id = (unsigned)cur_get(&c, 1);
    unsigned dest = (unsigned)cur_get(&c, 2);
    unsigned oper = (unsigned)cur_get(&c, 1);
    if (r->ops[id].valid)
      return bad(r, err, "register operation %u is defined twice", id);
    if (r->id2fr[id])
      return bad(r, err, "register operation %u overlaps with a register id",
                 id);
    if (id == 0xff)
      return bad(r, err, "register operation id cannot be 0xff");
    if (!r->id2fr[dest])
      return bad(r, err,
                 "register operation %u refers to unknown register id %u", id,
                 dest);
    if (oper > RVN_OP_OR)
      return bad(r, err, "register operation %u: unknown operator %u", id,
                 oper);
    const freg *d = &r->fr[r->id2fr[dest] - 1];
    if (!cur_need(&c, d->size))
      return bad(r, err, "%s", what);
    r->ops[id] =
        (fop){1, (uint8_t)oper, (uint16_t)(r->id2fr[dest] - 1), c.p + c.o};
    c.o += d->size;
  }
  /* static registers */
  if (!cur_need(&c, 4))
    return bad(r, err, "%s", what);
  n = cur_get(&c, 4);
  if (n > (c.end - c.o) / 2)
    return bad(r, err,
               "%" PRIu64 " static registers do not fit the machine "
               "description section",
               n);
  const uint8_t *snames[RVN_NSTATIC] = {0};
  const uint8_t **seen = calloc(n ? n : 1, sizeof *seen);
  uint8_t *seenlen = calloc(n ? n : 1, 1);
  int rc = 0;
  if (!seen || !seenlen)
    rc = bad(r, err, "out of memory");
  for (uint64_t i = 0; i < n && rc == 0; i++) {
    if (!cur_need(&c, 1)) {
      rc = bad(r, err, "%s", what);
      break;
    }
    uint8_t len = (uint8_t)cur_get(&c, 1);
    if (!cur_need(&c, (uint64_t)len + 1)) {
      rc = bad(r, err, "%s", what);
      break;
    }
    const uint8_t *nm = c.p + c.o;
    c.o += len;
    uint8_t vlen = (uint8_t)cur_get(&c, 1);
    if (!cur_need(&c, vlen)) {
      rc = bad(r, err, "%s", what);
      break;
    }
    c.o += vlen;
    for (uint64_t j = 0; j < i; j++)
      if (seenlen[j] == len && !memcmp(seen[j], nm, len)) {
        char t[300];
        clean_name(nm, len, t, sizeof t);
        rc = bad(r, err, "static register %s is defined twice", t);
      }
    seen[i] = nm;
    seenlen[i] = len;
    for (int k = 0; k < RVN_NSTATIC; k++)
      if (strlen(rvn_statics[k].name) == len &&
          !memcmp(rvn_statics[k].name, nm, len))
        snames[k] = nm;
  }
  free(seen);
  free(seenlen);
  if (rc)
    return rc;
  for (int k = 0; k < RVN_NSTATIC; k++)
    if (!snames[k])
      return bad(r, err, "the static register %s is not declared",
                 rvn_statics[k].name);
  if (r->nreg > 1)
    qsort(r->reg, r->nreg, sizeof *r->reg, cmp_region);
  return 0;
}

/* ------------------------------------------------------------- events */

static int grow(void **p, size_t *cap, size_t need, size_t elem) {
  if (need <= *cap)
    return 0;
  size_t c = *cap ? *cap : 64;
  while (c < need)
    c *= 2;
  void *np = realloc(*p, c * elem);
  if (!np)
    return -1;
  *p = np;
  *cap = c;
  return 0;
}

/* Decodes the event at pos without applying it. */
static int decode(tc_reader *r, uint64_t pos, devent *d, tc_error *err) {
  const uint8_t *p = r->bin;
  uint64_t o = pos, end = r->ev_end;
  memset(d, 0, sizeof *d);
#define NEED(k)                                                                \
  do {                                                                         \
    if (end - o < (uint64_t)(k))                                               \
      return bad(r, err,                                                       \
                 "event %" PRIu64 " at 0x%" PRIx64 " is truncated (the "       \
                 "events section ends at 0x%" PRIx64 ")",                      \
                 r->ctx, pos, end);                                            \
  } while (0)
  NEED(1);
  uint8_t b = p[o++];
  if (b == 0xff) {
    NEED(2);
    uint8_t type = p[o++];
    if (type != 0xff)
      return bad(r, err,
                 "event %" PRIu64 " at 0x%" PRIx64
                 ": %u is an unknown type of event",
                 r->ctx, pos, type);
    d->other = 1;
    d->dlen = p[o++];
    NEED(d->dlen);
    d->desc = p + o;
    o += d->dlen;
    NEED(1);
    b = p[o++];
  }
  for (;;) {
    unsigned m = b & 15, n = b >> 4;
    for (unsigned i = 0; i < m && i < RVN_MAX_ENTRIES; i++) {
      NEED(r->phy + 1u);
      uint64_t addr = get_le(p + o, r->phy);
      o += r->phy;
      uint64_t size = p[o++];
      if (size == 0xff) {
        NEED(r->phy);
        size = get_le(p + o, r->phy);
        o += r->phy;
      }
      NEED(size);
      if (size && !covered(r, addr, size))
        return bad(r, err,
                   "event %" PRIu64 " at 0x%" PRIx64 " writes %" PRIu64
                   " bytes at 0x%" PRIx64 ", outside every memory region",
                   r->ctx, pos, size, addr);
      if (grow((void **)&r->dm, &r->capdm, d->nmem + 1, sizeof *r->dm) < 0)
        return bad(r, err, "out of memory");
      r->dm[d->nmem++] = (dmem){addr, size, p + o};
      o += size;
    }
    for (unsigned i = 0; i < n && i < RVN_MAX_ENTRIES; i++) {
      NEED(1);
      unsigned id = p[o++];
      if (id == 0xff) {
        NEED(2);
        id = (unsigned)get_le(p + o, 2);
        o += 2;
      }
      if (grow((void **)&r->dr, &r->capdr, d->nreg + 1, sizeof *r->dr) < 0)
        return bad(r, err, "out of memory");
      if (id < 256 && r->ops[id].valid) {
        r->dr[d->nreg++] = (dreg){(uint16_t)id, 1, NULL};
        continue;
      }
      if (!r->id2fr[id])
        return bad(r, err,
                   "event %" PRIu64 " at 0x%" PRIx64
                   ": register or operation %u is not defined in the "
                   "machine description",
                   r->ctx, pos, id);
      const freg *f = &r->fr[r->id2fr[id] - 1];
      NEED(f->size);
      r->dr[d->nreg++] = (dreg){(uint16_t)(r->id2fr[id] - 1), 0, p + o};
      o += f->size;
    }
    if (m != 0xf && n != 0xf)
      break;
    NEED(1);
    b = p[o++];
    if (b == 0xff)
      return bad(r, err,
                 "event %" PRIu64 " at 0x%" PRIx64
                 ": a continuation chunk cannot be 0xff",
                 r->ctx, pos);
  }
#undef NEED
  d->end = o;
  return 0;
}

static void mark_changed(tc_reader *r, const freg *f) {
  if (f->canon < 0)
    return;
  int t = r->canon2tc[f->canon];
  if (t == -2) {
    r->tcdirty |= 1ull << r->map.fpsw;
    for (int i = 0; i < 8; i++)
      r->tcdirty |= 1ull << (r->map.st0 + i);
  } else if (t >= 0) {
    r->tcdirty |= 1ull << t;
  }
}

static void apply_op(tc_reader *r, const fop *op) {
  const freg *f = &r->fr[op->reg];
  uint8_t *v = r->rstate + f->off;
  unsigned carry = 0;
  for (unsigned i = 0; i < f->size; i++) {
    switch (op->oper) {
    case RVN_OP_SET:
      v[i] = op->value[i];
      break;
    case RVN_OP_ADD: {
      unsigned s = v[i] + op->value[i] + carry;
      v[i] = (uint8_t)s;
      carry = s >> 8;
      break;
    }
    case RVN_OP_AND:
      v[i] &= op->value[i];
      break;
    default:
      v[i] |= op->value[i];
      break;
    }
  }
  mark_changed(r, f);
}

static int acc_add(accset *s, uint64_t addr, uint64_t size,
                   const uint8_t *after) {
  if (grow((void **)&s->a, &s->cap, s->n + 1, sizeof *s->a) < 0 ||
      grow((void **)&s->before, &s->bcap, s->len + size, 1) < 0)
    return -1;
  s->a[s->n++] = (tc_mem_access){addr, (uint32_t)size, TC_MEM_WRITE,
                                 (const uint8_t *)(uintptr_t)s->len, after};
  s->len += size;
  return 0;
}

/* Applies a decoded event; with acc, records its writes (and the bytes
 * they replaced) there. */
static int apply(tc_reader *r, const devent *d, accset *acc, tc_error *err) {
  if (acc)
    acc->n = acc->len = 0;
  for (size_t i = 0; i < d->nmem; i++) {
    const dmem *m = &r->dm[i];
    if (!m->size)
      continue;
    if (acc) {
      if (m->size > UINT32_MAX || acc_add(acc, m->addr, m->size, m->data) < 0)
        return bad(r, err, "out of memory");
      mem_read(r, m->addr, acc->before + acc->len - m->size, (size_t)m->size);
    }
    if (mem_write(r, m->addr, m->data, m->size) < 0)
      return bad(r, err, "out of memory");
  }
  if (acc) /* before pointers are offsets until the arena stops moving */
    for (size_t i = 0; i < acc->n; i++)
      acc->a[i].before = acc->before + (uintptr_t)acc->a[i].before;
  for (size_t i = 0; i < d->nreg; i++) {
    const dreg *g = &r->dr[i];
    if (g->is_op) {
      apply_op(r, &r->ops[g->fr]);
    } else {
      const freg *f = &r->fr[g->fr];
      memcpy(r->rstate + f->off, g->value, f->size);
      mark_changed(r, f);
    }
  }
  return 0;
}

/* Brings the tracecorn state up to date with the register state. */
static void sync_tc(tc_reader *r, int all) {
  for (int t = 0; t < r->arch->nregs; t++)
    if (all || (r->tcdirty >> t & 1))
      rvn_tc_value(&r->map, t, r->vals, r->tc_cur);
}

static int parse_syscall(const devent *d, uint32_t *nr, char *name,
                         size_t max) {
  char s[256];
  memcpy(s, d->desc, d->dlen);
  s[d->dlen] = 0;
  if (strncmp(s, "syscall ", 8) != 0 || s[8] < '0' || s[8] > '9')
    return 0;
  char *e;
  unsigned long v = strtoul(s + 8, &e, 10);
  if (*e && *e != ' ')
    return 0;
  *nr = (uint32_t)v;
  snprintf(name, max, "%s", *e ? e + 1 : "");
  return 1;
}

static int is_syscall_at(tc_reader *r, uint64_t pos) {
  const uint8_t *p = r->bin;
  return r->ev_end - pos >= 11 && p[pos] == 0xff && p[pos + 1] == 0xff &&
         memcmp(p + pos + 3, "syscall ", 8) == 0;
}

typedef struct fault_name {
  const char *name;
  tc_fault_kind kind;
  int signal;
} fault_name;

/* REVEN's exception names (PANDA's exception_event_description). */
static const fault_name faults[] = {
    {"page fault", TC_FAULT_UNMAPPED_READ, 11},
    {"invalid opcode", TC_FAULT_INVALID_INSN, 4},
    {"divide error", TC_FAULT_DIVIDE, 8},
    {"general protection", TC_FAULT_OTHER, 11},
    {"breakpoint", TC_FAULT_OTHER, 5},
    {"debug", TC_FAULT_OTHER, 5},
    {"overflow", TC_FAULT_OTHER, 11},
    {"bound range exceeded", TC_FAULT_OTHER, 11},
    {"stack segment fault", TC_FAULT_OTHER, 7},
    {"segment not present", TC_FAULT_OTHER, 7},
    {"alignment check", TC_FAULT_OTHER, 7},
    {"floating-point error", TC_FAULT_OTHER, 8},
    {"device not available", TC_FAULT_OTHER, 11},
    {"machine check", TC_FAULT_OTHER, 7},
    {"unknown exception", TC_FAULT_OTHER, 11},
    {NULL, 0, 0}};

static const fault_name *fault_of(const devent *d) {
  for (const fault_name *f = faults; f->name; f++)
    if (strlen(f->name) == d->dlen && !memcmp(f->name, d->desc, d->dlen))
      return f;
  return NULL;
}

static uint64_t tc_get(tc_reader *r, const uint8_t *state, int reg) {
  return tc_state_get(r->arch, state, reg);
}

/* The SYSCALL event of a "syscall N name" event; `before` is the state
 * before the syscall instruction. */
static void make_syscall(tc_reader *r, const devent *d, const uint8_t *before,
                         uint64_t insn_index, bool compat) {
  tc_syscall_event *s = &r->sys;
  memset(s, 0, sizeof *s);
  parse_syscall(d, &s->nr, r->sysname, sizeof r->sysname);
  s->insn_index = insn_index;
  s->name = r->sysname[0] ? r->sysname : NULL;
  /* x86-64's int $0x80: i386's registers, their low 32 bits; the full rax */
  s->compat = compat;
  const int *regs =
      compat ? tc_arch_compat_arg_regs(r->arch) : r->arch->sys.arg_regs;
  for (int i = 0; i < 6; i++)
    s->args[i] = tc_get(r, before, regs[i]) & (compat ? 0xffffffffull : ~0ull);
  uint64_t ret = tc_get(r, r->tc_cur, r->arch->sys.ret_reg);
  s->ret = r->arch->ptr_size == 4 ? (int64_t)(int32_t)ret : (int64_t)ret;
  s->nmem = (uint32_t)r->as.n;
  s->mem = r->as.a;
  if (s->name &&
      (strcmp(s->name, "exit") == 0 || strcmp(s->name, "exit_group") == 0)) {
    r->exited = 1;
    r->exit_status = (int)(s->args[0] & 0xff);
    r->last_signal = 0; /* a fault before it was handled (icebp, int3) */
    s->ret = 0;         /* it never returns: rax still holds the number */
  }
}

/* Instruction length from its bytes: capstone, cached per address. */
static uint8_t insn_len(tc_reader *r, uint64_t pc, const uint8_t *bytes) {
  len_entry *e = &r->lens[(pc ^ (pc >> 12)) & (LEN_CACHE - 1)];
  if (e->len && e->pc == pc && memcmp(e->bytes, bytes, e->len) == 0)
    return e->len;
  char text[160];
  int n =
      tc_disasm(r->arch, pc, bytes, r->arch->max_insn_size, text, sizeof text);
  /* Undecodable (a faulting invalid instruction): one byte, as the
   * recorder records it. */
  uint8_t len = (uint8_t)(n > 0 && n <= 15 ? n : 1);
  e->pc = pc;
  e->len = len;
  memcpy(e->bytes, bytes, 16);
  return len;
}

static int at_end(tc_reader *r, tc_error *err) {
  if (r->ctx == r->ev_count) {
    if (r->pos != r->ev_end)
      return bad(r, err,
                 "%" PRIu64 " trailing bytes after the %" PRIu64
                 " declared events",
                 r->ev_end - r->pos, r->ev_count);
    return 1;
  }
  if (r->pos >= r->ev_end)
    return bad(r, err,
               "the events section ends after %" PRIu64 " of the %" PRIu64
               " declared events",
               r->ctx, r->ev_count);
  return 0;
}

static int next_from_events(tc_reader *r, tc_event *ev, tc_error *err) {
  for (;;) {
    if (r->q_sys) {
      r->q_sys = 0;
      ev->kind = TC_EV_SYSCALL;
      ev->u.sys = r->sys;
      return 1;
    }
    if (r->q_fault) {
      r->q_fault = 0;
      ev->kind = TC_EV_FAULT;
      ev->u.fault = r->fault;
      return 1;
    }
    if (r->q_key) {
      r->q_key = 0;
      memcpy(r->tc_key, r->tc_cur, r->arch->state_size);
      ev->kind = TC_EV_KEYFRAME;
      ev->u.key = (tc_keyframe_event){r->key_index, 0, r->tc_key};
      return 1;
    }
    int e = at_end(r, err);
    if (e < 0)
      return -1;
    if (e) {
      r->phase = PH_EXIT;
      return 0;
    }
    devent d;
    if (decode(r, r->pos, &d, err) < 0)
      return -1;
    r->tcdirty = 0;
    if (!d.other) {
      const tc_arch *a = r->arch;
      memcpy(r->tc_before, r->tc_cur, a->state_size);
      tc_insn_event *in = &ev->u.insn;
      memset(ev, 0, sizeof *ev);
      ev->kind = TC_EV_INSN;
      in->index = r->insn;
      in->pc = tc_get(r, r->tc_before, a->pc_reg);
      mem_read(r, in->pc, in->bytes, 16);
      in->size = insn_len(r, in->pc, in->bytes);
      memset(in->bytes + in->size, 0, 16 - in->size);
      if (apply(r, &d, &r->ai, err) < 0)
        return -1;
      r->pos = d.end;
      r->ctx++;
      if (r->ctx < r->ev_count && is_syscall_at(r, r->pos)) {
        /* The kernel's side of this instruction. */
        devent s;
        if (decode(r, r->pos, &s, err) < 0 || apply(r, &s, &r->as, err) < 0)
          return -1;
        r->pos = s.end;
        r->ctx++;
        sync_tc(r, 0);
        make_syscall(r, &s, r->tc_before, r->insn,
                     tc_arch_compat_trap(a, in->bytes, in->size));
        r->q_sys = 1;
      } else {
        sync_tc(r, 0);
      }
      uint16_t n = 0;
      for (int t = 0; t < a->nregs; t++) {
        const tc_reg_info *ri = &a->regs[t];
        if ((r->tcdirty >> t & 1) &&
            memcmp(r->tc_before + ri->offset, r->tc_cur + ri->offset,
                   ri->size) != 0)
          r->changed[n++] = (uint16_t)t;
      }
      in->nregs = n;
      in->regs = r->changed;
      in->state_before = r->tc_before;
      in->state_after = r->tc_cur;
      in->nmem = (uint32_t)r->ai.n;
      in->mem = r->ai.a;
      r->insn++;
      return 1;
    }
    /* An event of its own: a syscall without its instruction, an
     * exception, or anything else REVEN records. */
    memcpy(r->tc_before, r->tc_cur, r->arch->state_size);
    if (apply(r, &d, &r->as, err) < 0)
      return -1;
    r->pos = d.end;
    r->ctx++;
    sync_tc(r, 0);
    uint32_t nr;
    char tmp[256];
    const fault_name *f;
    if (parse_syscall(&d, &nr, tmp, sizeof tmp)) {
      make_syscall(r, &d, r->tc_before, r->insn ? r->insn - 1 : 0, false);
      r->q_sys = 1;
    } else if ((f = fault_of(&d))) {
      tc_fault_event *fe = &r->fault;
      fe->insn_index = r->insn ? r->insn - 1 : 0;
      /* the state before the event: after it, a handler may run */
      fe->pc = tc_get(r, r->tc_before, r->arch->pc_reg);
      fe->addr = fe->pc;
      fe->kind = f->kind;
      fe->signal = f->signal;
      if (f->kind == TC_FAULT_UNMAPPED_READ && r->canon[RV_CR2] >= 0) {
        fe->addr = get_le(r->vals[RV_CR2], 8);
        if (fe->addr == fe->pc)
          fe->kind = TC_FAULT_UNMAPPED_FETCH;
      }
      r->last_signal = f->signal;
      r->q_fault = 1;
    }
    if (memcmp(r->tc_before, r->tc_cur, r->arch->state_size) != 0) {
      r->q_key = 1;
      r->key_index = r->insn;
    }
  }
}

int rvn_next_event(tc_reader *r, tc_event *ev, tc_error *err) {
  switch (r->phase) {
  case PH_MAPS:
    while (r->map_i < r->nreg) {
      const rregion *g = &r->reg[r->map_i++];
      if (g->start >= RVN_PT_BASE)
        continue; /* tracecorn's synthetic page tables */
      memset(ev, 0, sizeof *ev);
      ev->kind = TC_EV_MAP;
      ev->u.map = (tc_map_event){
          g->start, g->size, TC_PROT_READ | TC_PROT_WRITE | TC_PROT_EXEC,
          "",       0,       r->bin + g->off};
      return 1;
    }
    r->phase = PH_KEY;
    /* fall through */
  case PH_KEY:
    r->phase = PH_EVENTS;
    memcpy(r->tc_key, r->tc_cur, r->arch->state_size);
    memset(ev, 0, sizeof *ev);
    ev->kind = TC_EV_KEYFRAME;
    ev->u.key = (tc_keyframe_event){r->insn, 0, r->tc_key};
    return 1;
  case PH_EVENTS: {
    int rc = next_from_events(r, ev, err);
    if (rc < 0) {
      r->phase = PH_DONE;
      return -1;
    }
    if (rc)
      return 1;
  }
    /* fall through */
  case PH_EXIT: {
    r->phase = PH_DONE;
    memset(ev, 0, sizeof *ev);
    ev->kind = TC_EV_EXIT;
    tc_exit_event *x = &ev->u.exit;
    x->insn_count = r->insn;
    if (r->last_signal) {
      x->reason = TC_EXIT_SIGNALED;
      x->signal = r->last_signal;
      x->status = 128 + r->last_signal;
    } else if (r->exited) {
      x->reason = TC_EXIT_EXITED;
      x->status = r->exit_status;
    } else {
      x->reason = TC_EXIT_INTERRUPTED;
      x->status = 130;
      x->message = "the REVEN trace ends here without an exit";
    }
    return 1;
  }
  default:
    return 0;
  }
}

/* -------------------------------------------------------------- cache */

/* Opens and checks trace.cache; a missing file is no error. */
static int open_cache(tc_reader *r, tc_error *err) {
  int fd = open(r->cache_path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT)
      return 0;
    return bad_cache(r, err, "cannot open: %s", strerror(errno));
  }
  struct stat st;
  if (fstat(fd, &st) < 0 || st.st_size == 0) {
    close(fd);
    return bad_cache(r, err, "empty file");
  }
  void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
  close(fd);
  if (m == MAP_FAILED)
    return bad_cache(r, err, "cannot map: %s", strerror(errno));
  r->cache = m;
  r->cache_size = (size_t)st.st_size;
  const uint8_t *p = r->cache;
  size_t n = r->cache_size;
  rvn_meta meta;
  char why[300];
  if (rvn_header_parse(p, n, RVN_TYPE_CACHE, &meta, why, sizeof why) < 0)
    return bad_cache(r, err, "%s", why);
  uint64_t pos = meta.size, hb = 0, hs = 0, pb = 0, ps = 0, ib = 0, is = 0;
  if (section(r, p, n, &pos, &hb, &hs, "cache header", 1, err) < 0 ||
      section(r, p, n, &pos, &pb, &ps, "cache points", 1, err) < 0 ||
      section(r, p, n, &pos, &ib, &is, "cache index", 1, err) < 0)
    return -1;
  if (pos != n)
    return bad_cache(r, err, "%" PRIu64 " trailing bytes after the index",
                     n - pos);
  if (hs < 4)
    return bad_cache(r, err, "cache header section too short");
  uint32_t page = (uint32_t)get_le(p + hb, 4);
  if (page != RVN_PAGE)
    return bad_cache(r, err, "page size %u: tracecorn reads %u-byte pages",
                     page, RVN_PAGE);
  r->cpts_body = pb;
  r->cpts_size = ps;
  cur c = {p, ib, ib + is};
  if (!cur_need(&c, 8))
    return bad_cache(r, err, "cache index section too short");
  uint64_t np = cur_get(&c, 8);
  if (np > (c.end - c.o) / 28)
    return bad_cache(r, err, "%" PRIu64 " cache points do not fit the index",
                     np);
  r->pts = calloc(np ? np : 1, sizeof *r->pts);
  uint8_t *seen = calloc(r->nfr ? r->nfr : 1, 1);
  if (!r->pts || !seen) {
    free(seen);
    return bad_cache(r, err, "out of memory");
  }
  int rc = 0;
  uint64_t evsize = r->ev_end - (r->ev_first - 8);
  for (uint64_t i = 0; i < np && rc == 0; i++) {
    cpoint *q = &r->pts[i];
    if (!cur_need(&c, 28)) {
      rc = bad_cache(r, err, "cache index section too short");
      break;
    }
    q->ctx = cur_get(&c, 8);
    q->toff = cur_get(&c, 8);
    q->cpu_off = cur_get(&c, 8);
    q->npages = (uint32_t)cur_get(&c, 4);
    q->pages_at = c.o;
    if (q->npages > (c.end - c.o) / 16) {
      rc = bad_cache(r, err, "cache point %" PRIu64 ": %u pages do not fit", i,
                     q->npages);
      break;
    }
    c.o += 16ull * q->npages;
    if (q->ctx == 0 || q->ctx > r->ev_count)
      rc = bad_cache(r, err,
                     "cache point %" PRIu64 ": context %" PRIu64
                     " is not in 1..%" PRIu64,
                     i, q->ctx, r->ev_count);
    else if (q->toff < 8 || q->toff > evsize)
      rc = bad_cache(r, err,
                     "cache point %" PRIu64 ": trace offset %" PRIu64
                     " is outside the events section",
                     i, q->toff);
    for (uint32_t k = 0; k < q->npages && rc == 0; k++) {
      uint64_t addr = get_le(p + q->pages_at + 16ull * k, 8);
      uint64_t off = get_le(p + q->pages_at + 16ull * k + 8, 8);
      const rregion *g = region_at(r, addr);
      if (addr % RVN_PAGE)
        rc = bad_cache(r, err,
                       "cache point %" PRIu64 ": page 0x%" PRIx64
                       " is not aligned on the page size",
                       i, addr);
      else if (!g || addr + RVN_PAGE > g->start + g->size)
        rc = bad_cache(r, err,
                       "cache point %" PRIu64 ": page 0x%" PRIx64
                       " is outside the memory regions",
                       i, addr);
      else if (off > ps || ps - off < RVN_PAGE)
        rc = bad_cache(r, err,
                       "cache point %" PRIu64 ": page 0x%" PRIx64
                       " lies outside the cache points section",
                       i, addr);
    }
    /* its registers: all of them, declared sizes, each once */
    if (rc == 0) {
      cur rc2 = {p, pb + q->cpu_off, pb + ps};
      if (q->cpu_off > ps || !cur_need(&rc2, 2)) {
        rc = bad_cache(r, err,
                       "cache point %" PRIu64
                       ": registers outside the cache points section",
                       i);
        break;
      }
      uint64_t cnt = cur_get(&rc2, 2);
      if (cnt != r->nfr) {
        rc = bad_cache(r, err,
                       "cache point %" PRIu64 " holds %" PRIu64
                       " registers, the machine declares %zu",
                       i, cnt, r->nfr);
        break;
      }
      memset(seen, 0, r->nfr);
      for (uint64_t k = 0; k < cnt && rc == 0; k++) {
        if (!cur_need(&rc2, 4)) {
          rc = bad_cache(r, err, "cache point %" PRIu64 ": truncated registers",
                         i);
          break;
        }
        unsigned id = (unsigned)cur_get(&rc2, 2),
                 size = (unsigned)cur_get(&rc2, 2);
        unsigned fi = r->id2fr[id];
        if (!fi)
          rc = bad_cache(r, err,
                         "cache point %" PRIu64 ": %u is an unknown "
                         "register id",
                         i, id);
        else if (seen[fi - 1])
          rc = bad_cache(r, err,
                         "cache point %" PRIu64 ": register %u is "
                         "contained twice",
                         i, id);
        else if (size != r->fr[fi - 1].size)
          rc = bad_cache(r, err,
                         "cache point %" PRIu64 ": %u's size %u "
                         "doesn't match declared %u",
                         i, id, size, r->fr[fi - 1].size);
        else if (!cur_need(&rc2, size))
          rc = bad_cache(r, err, "cache point %" PRIu64 ": truncated registers",
                         i);
        else {
          seen[fi - 1] = 1;
          rc2.o += size;
        }
      }
    }
  }
  free(seen);
  if (rc)
    return rc;
  if (c.o != c.end)
    return bad_cache(r, err,
                     "%" PRIu64 " unread bytes at the end of the "
                     "cache index section",
                     c.end - c.o);
  r->npts = np;
  /* by context */
  for (size_t i = 1; i < r->npts; i++)
    for (size_t j = i; j > 0 && r->pts[j - 1].ctx > r->pts[j].ctx; j--) {
      cpoint t = r->pts[j];
      r->pts[j] = r->pts[j - 1];
      r->pts[j - 1] = t;
    }
  for (size_t i = 1; i < r->npts; i++)
    if (r->pts[i].ctx == r->pts[i - 1].ctx)
      return bad_cache(r, err, "two cache points for context %" PRIu64,
                       r->pts[i].ctx);
  /* tracecorn's instruction index, after the page size */
  if (hs >= 4 + RVN_IX_MAGIC_LEN + 8 &&
      memcmp(p + hb + 4, RVN_IX_MAGIC, RVN_IX_MAGIC_LEN) == 0) {
    uint64_t k = get_le(p + hb + 4 + RVN_IX_MAGIC_LEN, 8);
    if (k != r->npts || hs != 4 + RVN_IX_MAGIC_LEN + 8 + 16 * k)
      return bad_cache(r, err,
                       "the instruction index in the cache header "
                       "does not match the cache points");
    const uint8_t *q = p + hb + 4 + RVN_IX_MAGIC_LEN + 8;
    for (uint64_t i = 0; i < k; i++) {
      uint64_t ctx = get_le(q + 16 * i, 8), insn = get_le(q + 16 * i + 8, 8);
      if (ctx != r->pts[i].ctx || insn > ctx ||
          (i && insn < r->pts[i - 1].insn))
        return bad_cache(r, err,
                         "the instruction index in the cache header "
                         "does not match the cache points");
      r->pts[i].insn = insn;
    }
    r->have_ix = 1;
    r->points_ready = 1;
  }
  r->have_cache = 1;
  return 0;
}

/* Without tracecorn's index: one pass over the events (decoding only)
 * gives each point's instruction index and checks its trace offset. */
static int scan_points(tc_reader *r, tc_error *err) {
  uint64_t pos = r->ev_first, insn = 0, save_ctx = r->ctx;
  size_t k = 0;
  r->ctx = 0;
  while (k < r->npts) {
    while (k < r->npts && r->pts[k].ctx == r->ctx) {
      if (r->pts[k].toff != pos - r->ev_first + 8) {
        r->ctx = save_ctx;
        return bad_cache(r, err,
                         "cache point at context %" PRIu64
                         ": trace offset %" PRIu64 ", the event is at %" PRIu64,
                         r->pts[k].ctx, r->pts[k].toff, pos - r->ev_first + 8);
      }
      r->pts[k++].insn = insn;
    }
    if (k == r->npts)
      break;
    devent d;
    if (r->ctx >= r->ev_count || decode(r, pos, &d, err) < 0) {
      r->ctx = save_ctx;
      return r->ctx >= r->ev_count ? bad(r, err, "events end early") : -1;
    }
    insn += !d.other;
    pos = d.end;
    r->ctx++;
  }
  r->ctx = save_ctx;
  r->points_ready = 1;
  return 0;
}

int rvn_seek(tc_reader *r, uint64_t n, tc_error *err) {
  if (!r->points_ready && r->have_cache && scan_points(r, err) < 0)
    return -1;
  const cpoint *q = NULL;
  for (size_t i = 0; i < r->npts; i++)
    if (r->pts[i].insn <= n)
      q = &r->pts[i];
  rvn_pages_clear(&r->ov);
  memcpy(r->rstate, r->rinit, r->rsize);
  r->pos = r->ev_first;
  r->ctx = r->insn = 0;
  r->exited = r->last_signal = 0;
  if (q) {
    /* Memory: the latest copy of each page at a point <= q. */
    for (size_t oi = (size_t)(q - r->pts) + 1; oi-- > 0;)
      for (uint32_t k = 0; k < r->pts[oi].npages; k++) {
        const cpoint *o = &r->pts[oi];
        uint64_t addr = get_le(r->cache + o->pages_at + 16ull * k, 8);
        uint64_t off = get_le(r->cache + o->pages_at + 16ull * k + 8, 8);
        int created;
        rvn_page *pg = rvn_pages_add(&r->ov, addr / RVN_PAGE, &created);
        if (!pg)
          return bad(r, err, "out of memory");
        if (created)
          memcpy(pg->data, r->cache + r->cpts_body + off, RVN_PAGE);
      }
    const uint8_t *p = r->cache + r->cpts_body + q->cpu_off + 2;
    for (size_t k = 0; k < r->nfr; k++) {
      unsigned id = (unsigned)get_le(p, 2), size = (unsigned)get_le(p + 2, 2);
      memcpy(r->rstate + r->fr[r->id2fr[id] - 1].off, p + 4, size);
      p += 4 + size;
    }
    r->pos = r->ev_first + q->toff - 8;
    r->ctx = q->ctx;
    r->insn = q->insn;
  }
  uint64_t from = r->insn;
  /* Replay to the instruction, and the events before it. */
  for (;;) {
    int e = at_end(r, err);
    if (e < 0)
      return -1;
    if (e)
      return bad(r, err, "no instruction %" PRIu64 ": the trace has %" PRIu64,
                 n, r->insn);
    devent d;
    if (decode(r, r->pos, &d, err) < 0)
      return -1;
    if (!d.other && r->insn == n)
      break;
    if (apply(r, &d, NULL, err) < 0)
      return -1;
    if (!d.other)
      r->insn++;
    else {
      uint32_t nr;
      char name[256];
      const fault_name *f = fault_of(&d);
      if (f)
        r->last_signal = f->signal;
      if (parse_syscall(&d, &nr, name, sizeof name) &&
          (!strcmp(name, "exit") || !strcmp(name, "exit_group"))) {
        r->exited = 1;
        r->last_signal = 0; /* the fault before it was handled */
      }
    }
    r->pos = d.end;
    r->ctx++;
  }
  r->tcdirty = 0;
  sync_tc(r, 1);
  r->replayed = n - from;
  r->q_sys = r->q_fault = 0;
  r->q_key = 1;
  r->key_index = n;
  r->phase = PH_EVENTS;
  r->map_i = r->nreg;
  return 0;
}

/* ------------------------------------------------------------- open */

int rvn_probe(const uint8_t *head, size_t n, const char *path) {
  (void)path;
  if (n < 16)
    return 0;
  uint64_t magic = get_le(head, 8);
  if (magic == RVN_MAGIC)
    return get_le(head + 12, 4) == RVN_TYPE_TRACE;
  if (magic == RVN_MAGIC_V0)
    return get_le(head + 8, 4) == RVN_TYPE_TRACE;
  return 0;
}

void rvn_close_reader(tc_reader *r) {
  if (!r)
    return;
  if (r->bin)
    munmap((void *)(uintptr_t)r->bin, r->bin_size);
  if (r->cache)
    munmap((void *)(uintptr_t)r->cache, r->cache_size);
  rvn_pages_free(&r->ov);
  free(r->bin_path);
  free(r->cache_path);
  free(r->reg);
  free(r->fr);
  free(r->id2fr);
  free(r->rstate);
  free(r->rinit);
  free(r->tc_cur);
  free(r->tc_before);
  free(r->tc_init);
  free(r->tc_key);
  free(r->dm);
  free(r->dr);
  free(r->ai.a);
  free(r->ai.before);
  free(r->as.a);
  free(r->as.before);
  free(r->pts);
  free(r->lens);
  free(r);
}

static int set_paths(tc_reader *r, const char *path) {
  struct stat st;
  size_t n = strlen(path) + 32;
  r->bin_path = malloc(n);
  r->cache_path = malloc(n);
  if (!r->bin_path || !r->cache_path)
    return -1;
  if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
    snprintf(r->bin_path, n, "%s/trace.bin", path);
    snprintf(r->cache_path, n, "%s/trace.cache", path);
  } else {
    snprintf(r->bin_path, n, "%s", path);
    const char *slash = strrchr(path, '/');
    int dl = slash ? (int)(slash - path + 1) : 0;
    snprintf(r->cache_path, n, "%.*strace.cache", dl, path);
  }
  return 0;
}

tc_reader *rvn_open_reader(const char *path, tc_error *err) {
  tc_reader *r = calloc(1, sizeof *r);
  if (!r || set_paths(r, path) < 0 || rvn_pages_init(&r->ov) < 0) {
    tc_error_set(err, "rvn: out of memory");
    rvn_close_reader(r);
    return NULL;
  }
  /* trace.bin itself, or its decompressed bytes if it is zstd. */
  FILE *bin = tc_infile_open(r->bin_path, TC_INFILE_SEEK, "rvn", err);
  int fd = bin ? dup(fileno(bin)) : -1;
  struct stat st;
  if (bin && (fd < 0 || fstat(fd, &st) < 0)) {
    tc_error_set(err, "rvn: %s: cannot open: %s", r->bin_path, strerror(errno));
    if (fd >= 0)
      close(fd);
    fd = -1;
  }
  if (bin)
    fclose(bin);
  if (fd < 0) {
    rvn_close_reader(r);
    return NULL;
  }
  if (st.st_size == 0) {
    close(fd);
    bad(r, err, "empty file");
    rvn_close_reader(r);
    return NULL;
  }
  void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
  close(fd);
  if (m == MAP_FAILED) {
    bad(r, err, "cannot map: %s", strerror(errno));
    rvn_close_reader(r);
    return NULL;
  }
  r->bin = m;
  r->bin_size = (size_t)st.st_size;
  const uint8_t *p = r->bin;
  size_t fsize = r->bin_size;
  char why[300];
  uint64_t pos = 0, hb = 0, hs = 0, mb = 0, ms = 0, ib = 0, is = 0, rb = 0,
           rs = 0, eb = 0, es = 0;
  if (rvn_header_parse(p, fsize, RVN_TYPE_TRACE, &r->meta, why, sizeof why) <
      0) {
    bad(r, err, "%s", why);
    goto fail;
  }
  pos = r->meta.size;
  if (section(r, p, fsize, &pos, &hb, &hs, "header", 0, err) < 0)
    goto fail;
  if (hs < 1) {
    bad(r, err, "header section too short");
    goto fail;
  }
  if (p[hb] != 0) {
    bad(r, err, "unsupported feature: compression %u", p[hb]);
    goto fail;
  }
  if (section(r, p, fsize, &pos, &mb, &ms, "machine description", 0, err) < 0 ||
      read_machine(r, mb, ms, err) < 0 ||
      section(r, p, fsize, &pos, &ib, &is, "initial memory", 0, err) < 0)
    goto fail;
  uint64_t total = 0;
  for (size_t i = 0; i < r->nreg; i++) {
    total += r->reg[i].size; /* no overflow: checked in read_machine */
    r->reg[i].off += ib;
  }
  if (is != total) {
    bad(r, err,
        "the initial memory section holds %" PRIu64
        " bytes, the regions add up to %" PRIu64,
        is, total);
    goto fail;
  }
  /* Sorted regions must not overlap: memory would be ambiguous. */
  for (size_t i = 1; i < r->nreg; i++)
    if (r->reg[i].start < r->reg[i - 1].start + r->reg[i - 1].size) {
      bad(r, err, "memory regions 0x%" PRIx64 " and 0x%" PRIx64 " overlap",
          r->reg[i - 1].start, r->reg[i].start);
      goto fail;
    }
  if (section(r, p, fsize, &pos, &rb, &rs, "initial registers", 0, err) < 0)
    goto fail;
  r->rstate = calloc(r->rsize ? r->rsize : 1, 1);
  r->rinit = calloc(r->rsize ? r->rsize : 1, 1);
  uint8_t *seen = calloc(r->nfr ? r->nfr : 1, 1);
  if (!r->rstate || !r->rinit || !seen) {
    free(seen);
    bad(r, err, "out of memory");
    goto fail;
  }
  {
    cur c = {p, rb, rb + rs};
    int rc = 0;
    if (!cur_need(&c, 4))
      rc = bad(r, err, "initial registers section too short");
    uint64_t cnt = rc ? 0 : cur_get(&c, 4);
    for (uint64_t i = 0; i < cnt && rc == 0; i++) {
      if (!cur_need(&c, 2)) {
        rc = bad(r, err, "initial registers section too short");
        break;
      }
      unsigned id = (unsigned)cur_get(&c, 2), fi = r->id2fr[id];
      if (!fi)
        rc = bad(r, err,
                 "initial register %u is not defined in the machine "
                 "description",
                 id);
      else if (seen[fi - 1])
        rc = bad(r, err, "register %u appears twice in the initial registers",
                 id);
      else if (!cur_need(&c, r->fr[fi - 1].size))
        rc = bad(r, err, "initial registers section too short");
      else {
        seen[fi - 1] = 1;
        memcpy(r->rinit + r->fr[fi - 1].off, p + c.o, r->fr[fi - 1].size);
        c.o += r->fr[fi - 1].size;
      }
    }
    if (rc == 0 && cnt != r->nfr)
      rc = bad(r, err,
               "%" PRIu64 " register(s) missing from the initial "
               "registers",
               (uint64_t)r->nfr - cnt);
    free(seen);
    if (rc)
      goto fail;
  }
  if (section(r, p, fsize, &pos, &eb, &es, "events", 0, err) < 0)
    goto fail;
  if (es < 8) {
    bad(r, err, "the events section cannot be shorter than its event count");
    goto fail;
  }
  if (pos != fsize) {
    bad(r, err, "%" PRIu64 " trailing bytes after the events section",
        (uint64_t)fsize - pos);
    goto fail;
  }
  r->ev_count = get_le(p + eb, 8);
  r->ev_first = eb + 8;
  r->ev_end = eb + es;
  r->pos = r->ev_first;
  memcpy(r->rstate, r->rinit, r->rsize);

  /* The arch: a 64-bit code segment (L) or a 32-bit one (D) in cs. */
  uint64_t cs = get_le(r->rinit + r->fr[r->canon[RV_CS_SHADOW]].off, 8);
  tc_arch_id aid = (cs >> 53) & 1   ? TC_ARCH_X86_64
                   : (cs >> 54) & 1 ? TC_ARCH_X86
                                    : TC_ARCH_NONE;
  if (aid == TC_ARCH_NONE) {
    bad(r, err,
        "cs_shadow 0x%016" PRIx64 " is neither a 64-bit nor a 32-bit "
        "code segment",
        cs);
    goto fail;
  }
  r->arch = tc_arch_by_id(aid);
  if (!r->arch || rvn_map_init(&r->map, r->arch) < 0) {
    bad(r, err, "no %s arch in this tracecorn",
        aid == TC_ARCH_X86 ? "x86" : "x86_64");
    goto fail;
  }
  for (int k = 0; k < RVN_NREGS; k++) {
    r->vals[k] = r->canon[k] >= 0 ? r->rstate + r->fr[r->canon[k]].off : NULL;
    r->canon2tc[k] = -1;
  }
  for (int t = 0; t < r->arch->nregs; t++)
    if (r->map.inv[t] >= 0)
      r->canon2tc[r->map.inv[t]] = (int8_t)t;
  r->canon2tc[RV_TOP] = r->canon2tc[RV_X87STATUS] = -2;
  for (int k = 0; k < 8; k++)
    r->canon2tc[RV_X87R0 + k] = -2;
  size_t ss = r->arch->state_size;
  r->tc_cur = calloc(1, ss);
  r->tc_before = calloc(1, ss);
  r->tc_init = calloc(1, ss);
  r->tc_key = calloc(1, ss);
  r->lens = calloc(LEN_CACHE, sizeof *r->lens);
  if (!r->tc_cur || !r->tc_before || !r->tc_init || !r->tc_key || !r->lens) {
    bad(r, err, "out of memory");
    goto fail;
  }
  sync_tc(r, 1);
  memcpy(r->tc_init, r->tc_cur, ss);
  if (open_cache(r, err) < 0)
    goto fail;
  r->info.arch = r->arch;
  r->info.entry = tc_state_get(r->arch, r->tc_init, r->arch->pc_reg);
  r->info.has_memory = 1;
  r->info.initial_state = r->tc_init;
  return r;
fail:
  rvn_close_reader(r);
  return NULL;
}

const tc_trace_info *rvn_reader_info(tc_reader *r) { return &r->info; }

const char *rvn_reader_writer(tc_reader *r) {
  snprintf(r->writer, sizeof r->writer, "%s %s", r->meta.tool_name,
           r->meta.tool_version);
  return r->meta.tool_name[0] ? r->writer : NULL;
}

void rvn_reader_get_stats(tc_reader *r, rvn_reader_stats *st) {
  st->events = r->ev_count;
  st->cache_points = r->npts;
  st->insns_replayed_by_last_seek = r->replayed;
  st->cache_index_extension = r->have_ix;
}
