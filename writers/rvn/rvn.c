/* SPDX-License-Identifier: GPL-2.0-or-later */
/* REVEN binary trace format 1.0 (rvnbintrace): the writer and the format
 * vtable. Facts and rules: /work/shared/specs/rvnbintrace.md; user notes:
 * docs/formats/rvn.md. The reader is in rvn_read.c.
 *
 * `-o P` writes the directory P.rvn/ with trace.bin and trace.cache. The
 * machine is a user-mode amd64 process seen as REVEN sees a whole system:
 * physical = virtual for user pages, one region per range ever mapped,
 * synthetic page tables identity-mapping them, the control state of a
 * 64-bit (or, for i386 guests, compatibility-mode) process. Regions must
 * precede the initial memory but mmap/brk happen later, so events are
 * spooled to unlinked temporary files in P.rvn/ during the run (memory
 * stays bounded) and both files are assembled at close. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/byteorder.h"
#include "writers/rvn/rvn.h"

enum {
  SPOOL_BUF = 1 << 20,
  MAX_TOTAL_REGIONS_GIB = 64 /* initial memory holds every region */
};

/* ================================================================ format */

/* The session names the formats that can hold a refused arch. */
static int rvn_supports(const tc_arch *arch, tc_error *err) {
  rvn_map m;
  if (arch && rvn_map_init(&m, arch) == 0)
    return 0;
  tc_error_set(err,
               "rvn: REVEN traces hold only x86-64 and i386 programs (the "
               "amd64 'x641' machine), not %s",
               arch ? arch->name : "an unknown arch");
  return -1;
}

static const char *rvn_extension(const tc_arch *arch) {
  (void)arch;
  return ".rvn";
}

/* ================================================================ spools */

/* An unlinked temporary file with a write buffer. */
typedef struct spool {
  int fd;
  uint8_t *buf;
  size_t len;
  uint64_t size; /* bytes put so far */
} spool;

static int spool_open(spool *s, const char *dir, tc_error *err) {
  memset(s, 0, sizeof *s);
  s->fd = -1;
  size_t n = strlen(dir) + 32;
  char *tmpl = malloc(n);
  s->buf = malloc(SPOOL_BUF);
  if (!tmpl || !s->buf) {
    free(tmpl);
    tc_error_set(err, "rvn: out of memory");
    return -1;
  }
  snprintf(tmpl, n, "%s/.spool-XXXXXX", dir);
  s->fd = mkstemp(tmpl);
  if (s->fd < 0) {
    tc_error_set(err, "rvn: %s: cannot create a spool file: %s", dir,
                 strerror(errno));
    free(tmpl);
    return -1;
  }
  unlink(tmpl);
  free(tmpl);
  return 0;
}

static int write_all(int fd, const void *p, size_t n) {
  const uint8_t *b = p;
  while (n) {
    ssize_t k = write(fd, b, n);
    if (k < 0 && errno == EINTR)
      continue;
    if (k <= 0) {
      if (k == 0)
        errno = EIO;
      return -1;
    }
    b += k;
    n -= (size_t)k;
  }
  return 0;
}

static int pwrite_all(int fd, const void *p, size_t n, uint64_t off) {
  const uint8_t *b = p;
  while (n) {
    ssize_t k = pwrite(fd, b, n, (off_t)off);
    if (k < 0 && errno == EINTR)
      continue;
    if (k <= 0) {
      if (k == 0)
        errno = EIO;
      return -1;
    }
    b += k;
    n -= (size_t)k;
    off += (uint64_t)k;
  }
  return 0;
}

static int spool_flush(spool *s) {
  if (s->len && write_all(s->fd, s->buf, s->len) < 0)
    return -1;
  s->len = 0;
  return 0;
}

static int spool_put(spool *s, const void *p, size_t n) {
  s->size += n;
  if (s->len + n > SPOOL_BUF) {
    if (spool_flush(s) < 0)
      return -1;
    if (n > SPOOL_BUF)
      return write_all(s->fd, p, n);
  }
  memcpy(s->buf + s->len, p, n);
  s->len += n;
  return 0;
}

static int spool_u64(spool *s, uint64_t v, unsigned n) {
  uint8_t b[8];
  put_le(b, v, n);
  return spool_put(s, b, n);
}

/* Copies the spool's bytes to out_fd at offset off: in the kernel when
 * it can, else through the buffer. */
static int spool_copy(spool *s, int out_fd, uint64_t off) {
  if (spool_flush(s) < 0)
    return -1;
  uint64_t left = s->size;
  loff_t in_off = 0, out_off = (loff_t)off;
  while (left) {
    size_t n = left < (1u << 30) ? (size_t)left : (1u << 30);
    ssize_t k = copy_file_range(s->fd, &in_off, out_fd, &out_off, n, 0);
    if (k < 0 && errno == EINTR)
      continue;
    if (k <= 0)
      break; /* not supported here (or nothing copied): fall back */
    left -= (uint64_t)k;
  }
  if (!left)
    return 0;
  off = (uint64_t)out_off;
  if (lseek(s->fd, in_off, SEEK_SET) < 0)
    return -1;
  while (left) {
    size_t n = left < SPOOL_BUF ? (size_t)left : SPOOL_BUF;
    ssize_t k = read(s->fd, s->buf, n);
    if (k < 0 && errno == EINTR)
      continue;
    if (k <= 0) {
      if (k == 0)
        errno = EIO;
      return -1;
    }
    if (pwrite_all(out_fd, s->buf, (size_t)k, off) < 0)
      return -1;
    off += (uint64_t)k;
    left -= (uint64_t)k;
  }
  return 0;
}

static void spool_close(spool *s) {
  if (s->fd >= 0)
    close(s->fd);
  free(s->buf);
  memset(s, 0, sizeof *s);
  s->fd = -1;
}

/* ================================================================ writer */

/* One memory entry of the event being built; data in an arena. */
typedef struct mem_ent {
  uint64_t addr;
  uint64_t size;
  size_t off;
} mem_ent;

typedef struct mem_list {
  mem_ent *e;
  size_t n, cap;
  uint8_t *data;
  size_t len, dcap;
} mem_list;

typedef struct prot_iv {
  uint64_t start, end;
  uint32_t prot;
} prot_iv;

typedef struct point_ix {
  uint64_t context, insn;
} point_ix;

struct tc_writer {
  char *dir, *bin_path, *cache_path;
  const tc_arch *arch;
  rvn_map map;
  uint64_t every;   /* cache point interval in events, 0 = none */
  uint32_t key_tid; /* the thread of the latest KEYFRAME */
  char tool_info[2048];
  int failed;
  tc_error ferr;

  spool ev, init, cpts, cidx;

  /* the REVEN register state after the last event */
  uint8_t cur[RVN_NREGS][RVN_SLOT];
  uint8_t *pre_state; /* tracecorn state before instruction 0 */
  int started;        /* the first instruction arrived */

  rvn_pages mem; /* REVEN memory of user pages (initial image + writes) */
  uint64_t epoch;
  rvn_page **dirty;
  size_t ndirty, capdirty;
  rvn_ivset regions;
  prot_iv *prots;
  size_t nprots, capprots;

  /* the event being built (flushed when the next one starts) */
  int active, other;
  char desc[256];
  uint8_t dlen;
  uint64_t mask[2];
  uint8_t old[RVN_NREGS][RVN_SLOT];
  mem_list pm;
  uint64_t insn_pc;
  uint8_t insn_size;
  mem_list kpend; /* memory a MAP set, for the syscall's other event */
  uint8_t after[RVN_NREGS][RVN_SLOT];

  uint64_t nevents, ninsns;
  uint8_t *enc;
  size_t enclen, enccap;
  point_ix *points;
  size_t npoints, cappoints;
};

static void fail(tc_writer *w, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void fail(tc_writer *w, const char *fmt, ...) {
  if (w->failed)
    return;
  w->failed = 1;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(w->ferr.msg, sizeof w->ferr.msg, fmt, ap);
  va_end(ap);
}

static void fail_io(tc_writer *w, const char *what) {
  fail(w, "rvn: %s: %s failed: %s", w->dir, what, strerror(errno));
}

static int mem_list_add(mem_list *l, uint64_t addr, const uint8_t *data,
                        uint64_t size) {
  if (l->n == l->cap) {
    size_t cap = l->cap ? l->cap * 2 : 64;
    mem_ent *ne = realloc(l->e, cap * sizeof *ne);
    if (!ne)
      return -1;
    l->e = ne;
    l->cap = cap;
  }
  if (l->len + size > l->dcap) {
    size_t cap = l->dcap ? l->dcap : 4096;
    while (cap < l->len + size)
      cap *= 2;
    uint8_t *nd = realloc(l->data, cap);
    if (!nd)
      return -1;
    l->data = nd;
    l->dcap = cap;
  }
  /* Joins a write that continues the previous one. */
  if (l->n && l->e[l->n - 1].addr + l->e[l->n - 1].size == addr &&
      l->e[l->n - 1].off + l->e[l->n - 1].size == l->len) {
    memcpy(l->data + l->len, data, size);
    l->len += size;
    l->e[l->n - 1].size += size;
    return 0;
  }
  l->e[l->n++] = (mem_ent){addr, size, l->len};
  memcpy(l->data + l->len, data, size);
  l->len += size;
  return 0;
}

static void mem_list_reset(mem_list *l) { l->n = l->len = 0; }

static void mem_list_free(mem_list *l) {
  free(l->e);
  free(l->data);
  memset(l, 0, sizeof *l);
}

static int enc_reserve(tc_writer *w, size_t n) {
  if (w->enclen + n <= w->enccap)
    return 0;
  size_t cap = w->enccap ? w->enccap : 4096;
  while (cap < w->enclen + n)
    cap *= 2;
  uint8_t *ne = realloc(w->enc, cap);
  if (!ne) {
    fail(w, "rvn: out of memory");
    return -1;
  }
  w->enc = ne;
  w->enccap = cap;
  return 0;
}

/* ----------------------------------------------------------- memory */

static int add_prot(tc_writer *w, uint64_t start, uint64_t end, uint32_t prot) {
  if (w->nprots == w->capprots) {
    size_t cap = w->capprots ? w->capprots * 2 : 64;
    prot_iv *np = realloc(w->prots, cap * sizeof *np);
    if (!np)
      return -1;
    w->prots = np;
    w->capprots = cap;
  }
  w->prots[w->nprots++] = (prot_iv){start, end, prot};
  return 0;
}

static uint64_t page_down(uint64_t a) { return a & ~(uint64_t)(RVN_PAGE - 1); }
static uint64_t page_up(uint64_t a) {
  return (a + RVN_PAGE - 1) & ~(uint64_t)(RVN_PAGE - 1);
}

/* A mapped range: it becomes (part of) a region. */
static int add_region(tc_writer *w, uint64_t addr, uint64_t size,
                      uint32_t prot) {
  uint64_t s = page_down(addr), e = page_up(addr + size);
  if (e <= s)
    return 0;
  if (rvn_ivset_add(&w->regions, s, e) < 0 || add_prot(w, s, e, prot) < 0) {
    fail(w, "rvn: out of memory");
    return -1;
  }
  return 0;
}

/* Every written byte must lie inside a region: a write outside every
 * mapped range (only in converted traces without map events) maps its
 * pages read-write. */
static int ensure_region(tc_writer *w, uint64_t addr, uint64_t size) {
  if (size == 0 || rvn_ivset_covers(&w->regions, addr, size))
    return 0;
  return add_region(w, addr, size, TC_PROT_READ | TC_PROT_WRITE);
}

static int mark_dirty(tc_writer *w, rvn_page *pg) {
  if (pg->epoch == w->epoch)
    return 0;
  pg->epoch = w->epoch;
  if (w->ndirty == w->capdirty) {
    size_t cap = w->capdirty ? w->capdirty * 2 : 256;
    rvn_page **nd = realloc(w->dirty, cap * sizeof *nd);
    if (!nd)
      return -1;
    w->dirty = nd;
    w->capdirty = cap;
  }
  w->dirty[w->ndirty++] = pg;
  return 0;
}

/* Applies a write to the REVEN memory image; dirty = 1 marks the pages
 * for the next cache point. */
static int apply_write(tc_writer *w, uint64_t addr, const uint8_t *data,
                       uint64_t size, int dirty) {
  while (size) {
    uint64_t pn = addr / RVN_PAGE, in = addr % RVN_PAGE;
    uint64_t n = RVN_PAGE - in < size ? RVN_PAGE - in : size;
    rvn_page *pg = rvn_pages_add(&w->mem, pn, NULL);
    if (!pg || (dirty && mark_dirty(w, pg) < 0)) {
      fail(w, "rvn: out of memory");
      return -1;
    }
    if (data)
      memcpy(pg->data + in, data, n);
    else
      memset(pg->data + in, 0, n);
    addr += n;
    size -= n;
    if (data)
      data += n;
  }
  return 0;
}

/* The writes that turn REVEN memory [addr, addr+size) into `data` (NULL =
 * zeros): one per differing span of each page, contiguous spans joined. */
static int diff_into(tc_writer *w, mem_list *l, uint64_t addr,
                     const uint8_t *data, uint64_t size) {
  static const uint8_t zeros[RVN_PAGE];
  uint64_t end = addr + size;
  for (uint64_t a = addr; a < end;) {
    uint64_t pn = a / RVN_PAGE, in = a % RVN_PAGE;
    uint64_t n = RVN_PAGE - in < end - a ? RVN_PAGE - in : end - a;
    const uint8_t *now = zeros;
    rvn_page *pg = rvn_pages_get(&w->mem, pn);
    if (pg)
      now = pg->data + in;
    const uint8_t *want = data ? data + (a - addr) : zeros;
    uint64_t first = n, last = 0;
    for (uint64_t i = 0; i < n; i++)
      if (now[i] != want[i]) {
        if (first == n)
          first = i;
        last = i;
      }
    if (first < n &&
        mem_list_add(l, a + first, want + first, last - first + 1) < 0) {
      fail(w, "rvn: out of memory");
      return -1;
    }
    a += n;
  }
  return 0;
}

/* ---------------------------------------------------------- registers */

static int bit_get(const uint64_t *m, int r) {
  return (m[r >> 6] >> (r & 63)) & 1;
}
static void bit_set(uint64_t *m, int r) { m[r >> 6] |= 1ull << (r & 63); }

/* Sets canonical register r in the event being built. */
static void pend_set(tc_writer *w, int r, const uint8_t *val) {
  if (!bit_get(w->mask, r)) {
    memcpy(w->old[r], w->cur[r], RVN_SLOT);
    bit_set(w->mask, r);
  }
  memcpy(w->cur[r], val, RVN_SLOT);
}

/* Canonical registers fed by tracecorn register t, from `state`. */
/* Register values of the common sizes compared inline: a memcmp call per
 * register per instruction was a sixth of the writer's time. */
static inline int value_equal(const uint8_t *a, const uint8_t *b,
                              unsigned size) {
  if (size == 8) {
    uint64_t x, y;
    memcpy(&x, a, 8);
    memcpy(&y, b, 8);
    return x == y;
  }
  if (size == 4) {
    uint32_t x, y;
    memcpy(&x, a, 4);
    memcpy(&y, b, 4);
    return x == y;
  }
  return memcmp(a, b, size) == 0;
}

static void update_from(tc_writer *w, int t, const uint8_t *state) {
  uint8_t v[RVN_SLOT];
  for (unsigned k = 0; k < w->map.ndeps[t]; k++) {
    int r = w->map.deps[t][k];
    rvn_value(&w->map, r, state, v);
    if (!value_equal(v, w->cur[r], rvn_regs[r].size))
      pend_set(w, r, v);
  }
}

/* ----------------------------------------------------------- encoding */

typedef struct reg_item {
  uint8_t r;
  uint8_t op; /* 0 = the register's value */
} reg_item;

static void enc_put(tc_writer *w, const void *p, size_t n) {
  memcpy(w->enc + w->enclen, p, n);
  w->enclen += n;
}

static void enc_u8(tc_writer *w, uint8_t v) { w->enc[w->enclen++] = v; }

/* The register entries of the event: operations where one describes the
 * change (rip += 1..15, rsp += +-2/4/8/16, eflags bit set/clear when
 * fewer than 5 of those bits and nothing else changed), else values. */
static size_t reg_item_of(tc_writer *w, int r, reg_item *it);
static size_t reg_items(tc_writer *w, reg_item *it) {
  size_t n = 0;
  /* the set bits of the mask, ascending (a few per event) */
  for (int k = 0; k < 2; k++)
    for (uint64_t bits = w->mask[k]; bits; bits &= bits - 1) {
      int r = 64 * k + __builtin_ctzll(bits);
      if (r >= RVN_NREGS)
        break;
      n += reg_item_of(w, r, it + n);
    }
  return n;
}

/* The entries of register r (0 if it did not change). */
static size_t reg_item_of(tc_writer *w, int r, reg_item *it) {
  size_t n = 0;
  {
    unsigned size = rvn_regs[r].size;
    if (value_equal(w->cur[r], w->old[r], size))
      return 0;
    uint64_t nv = get_le(w->cur[r], size < 8 ? size : 8);
    uint64_t ov = get_le(w->old[r], size < 8 ? size : 8);
    if (r == RV_RIP && nv - ov >= 1 && nv - ov <= 15) {
      it[n++] = (reg_item){(uint8_t)r, rvn_op_rip((unsigned)(nv - ov))};
      return n;
    }
    if (r == RV_RSP && rvn_op_rsp((int64_t)(nv - ov))) {
      it[n++] = (reg_item){(uint8_t)r, rvn_op_rsp((int64_t)(nv - ov))};
      return n;
    }
    if (r == RV_EFLAGS) {
      uint32_t x = (uint32_t)(nv ^ ov);
      if (!(x & ~RVN_FLAG_MASK) && __builtin_popcount(x) < 5) {
        for (unsigned k = 0; k < 9; k++)
          if (x & (1u << rvn_flag_bits[k]))
            it[n++] = (reg_item){(uint8_t)r, (nv >> rvn_flag_bits[k]) & 1
                                                 ? rvn_op_flag_set(k)
                                                 : rvn_op_flag_clr(k)};
        return n;
      }
    }
    it[n++] = (reg_item){(uint8_t)r, 0};
  }
  return n;
}

static size_t item_size(const reg_item *it) {
  if (it->op)
    return 1;
  const rvn_reg_def *d = &rvn_regs[it->r];
  return (d->id < 0xff ? 1u : 3u) + d->size;
}

static void enc_item(tc_writer *w, const reg_item *it) {
  if (it->op) {
    enc_u8(w, it->op);
    return;
  }
  const rvn_reg_def *d = &rvn_regs[it->r];
  if (d->id < 0xff) {
    enc_u8(w, (uint8_t)d->id);
  } else {
    enc_u8(w, 0xff);
    enc_u8(w, (uint8_t)d->id);
    enc_u8(w, (uint8_t)(d->id >> 8));
  }
  enc_put(w, w->cur[it->r], d->size);
}

static void enc_mem(tc_writer *w, const mem_list *l, size_t i) {
  uint8_t b[8];
  const mem_ent *e = &l->e[i];
  put_le(b, e->addr, RVN_PHY_SIZE);
  enc_put(w, b, RVN_PHY_SIZE);
  if (e->size < 0xff) {
    enc_u8(w, (uint8_t)e->size);
  } else {
    enc_u8(w, 0xff);
    put_le(b, e->size, RVN_PHY_SIZE);
    enc_put(w, b, RVN_PHY_SIZE);
  }
  enc_put(w, l->data + e->off, (size_t)e->size);
}

/* Encodes the event being built into w->enc: [ff ff len description]
 * then chunks of at most 14 memory entries and 14 register entries,
 * memory first; a nibble of 0xf means 14 entries and another chunk. */
static int encode(tc_writer *w) {
  reg_item items[RVN_NREGS + 16];
  size_t R = reg_items(w, items), M = w->pm.n;
  size_t need = 3 + w->dlen + M / RVN_MAX_ENTRIES + R / RVN_MAX_ENTRIES + 3 +
                w->pm.len + M * (1 + 2 * RVN_PHY_SIZE);
  for (size_t i = 0; i < R; i++)
    need += item_size(&items[i]);
  w->enclen = 0;
  if (enc_reserve(w, need) < 0)
    return -1;
  if (w->other) {
    enc_u8(w, 0xff);
    enc_u8(w, 0xff);
    enc_u8(w, w->dlen);
    enc_put(w, w->desc, w->dlen);
  }
  size_t mi = 0, ri = 0;
  for (;;) {
    size_t mrem = M - mi, rrem = R - ri;
    unsigned m = mrem > RVN_MAX_ENTRIES ? 0xf : (unsigned)mrem;
    /* Tetrane's writer never mixes: a chunk continuing memory holds no
     * registers. */
    unsigned r = m == 0xf ? 0 : rrem > RVN_MAX_ENTRIES ? 0xf : (unsigned)rrem;
    enc_u8(w, (uint8_t)(r << 4 | m));
    for (unsigned k = 0; k < (m == 0xf ? RVN_MAX_ENTRIES : m); k++)
      enc_mem(w, &w->pm, mi++);
    for (unsigned k = 0; k < (r == 0xf ? RVN_MAX_ENTRIES : r); k++)
      enc_item(w, &items[ri++]);
    if (m != 0xf && r != 0xf)
      break;
  }
  return 0;
}

/* ------------------------------------------------------------- cache */

static int cmp_page(const void *x, const void *y) {
  const rvn_page *a = *(rvn_page *const *)x, *b = *(rvn_page *const *)y;
  return a->pn < b->pn ? -1 : a->pn > b->pn;
}

/* A cache point at the current context: every register, then the pages
 * written since the previous point. */
static int cache_point(tc_writer *w) {
  uint64_t cpu_off = w->cpts.size;
  int rc = spool_u64(&w->cpts, RVN_NREGS, 2);
  for (int r = 0; r < RVN_NREGS && rc == 0; r++) {
    rc |= spool_u64(&w->cpts, rvn_regs[r].id, 2);
    rc |= spool_u64(&w->cpts, rvn_regs[r].size, 2);
    rc |= spool_put(&w->cpts, w->cur[r], rvn_regs[r].size);
  }
  if (w->ndirty > 1)
    qsort(w->dirty, w->ndirty, sizeof *w->dirty, cmp_page);
  rc |= spool_u64(&w->cidx, w->nevents, 8);
  rc |= spool_u64(&w->cidx, 8 + w->ev.size, 8);
  rc |= spool_u64(&w->cidx, cpu_off, 8);
  rc |= spool_u64(&w->cidx, w->ndirty, 4);
  for (size_t i = 0; i < w->ndirty && rc == 0; i++) {
    rc |= spool_u64(&w->cidx, (w->dirty[i]->pn - 1) * RVN_PAGE, 8);
    rc |= spool_u64(&w->cidx, w->cpts.size, 8);
    rc |= spool_put(&w->cpts, w->dirty[i]->data, RVN_PAGE);
  }
  if (rc) {
    fail_io(w, "writing the cache spool");
    return -1;
  }
  w->ndirty = 0;
  w->epoch++;
  if (w->npoints == w->cappoints) {
    size_t cap = w->cappoints ? w->cappoints * 2 : 16;
    point_ix *np = realloc(w->points, cap * sizeof *np);
    if (!np) {
      fail(w, "rvn: out of memory");
      return -1;
    }
    w->points = np;
    w->cappoints = cap;
  }
  w->points[w->npoints++] = (point_ix){w->nevents, w->ninsns};
  return 0;
}

/* ------------------------------------------------------------- events */

/* Writes the event being built to the spool. */
static int flush(tc_writer *w) {
  if (!w->active || w->failed)
    return w->failed ? -1 : 0;
  if (encode(w) < 0)
    return -1;
  if (spool_put(&w->ev, w->enc, w->enclen) < 0) {
    fail_io(w, "writing the event spool");
    return -1;
  }
  w->nevents++;
  if (!w->other)
    w->ninsns++;
  w->active = 0;
  w->mask[0] = w->mask[1] = 0;
  mem_list_reset(&w->pm);
  if (w->every && w->nevents % w->every == 0)
    return cache_point(w);
  return 0;
}

static void begin(tc_writer *w, int other, const char *desc) {
  w->active = 1;
  w->other = other;
  w->mask[0] = w->mask[1] = 0;
  mem_list_reset(&w->pm);
  size_t n = desc ? strlen(desc) : 0;
  w->dlen = (uint8_t)(n > 255 ? 255 : n);
  if (n)
    memcpy(w->desc, desc, w->dlen);
}

/* Kernel writes pending from MAP events become part of the current
 * (other) event. */
typedef struct span {
  uint64_t start, end;
} span;

static int span_cmp(const void *a, const void *b) {
  const span *x = a, *y = b;
  return x->start < y->start ? -1 : x->start > y->start;
}

/* Adds bytes [a, a+n) of a pending write, less what `cover` (sorted,
 * disjoint) holds: the syscall writes those bytes itself right after. */
static int take_uncovered(tc_writer *w, uint64_t a, const uint8_t *d,
                          uint64_t n, const span *cover, size_t ncover) {
  uint64_t end = a + n;
  /* the first span that ends after a */
  size_t lo = 0, hi = ncover;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (cover[mid].end <= a)
      lo = mid + 1;
    else
      hi = mid;
  }
  for (size_t k = lo; a < end; k++) {
    uint64_t stop = k < ncover && cover[k].start < end ? cover[k].start : end;
    if (stop > a) {
      if (mem_list_add(&w->pm, a, d, stop - a) < 0) {
        fail(w, "rvn: out of memory");
        return -1;
      }
      if (apply_write(w, a, d, stop - a, 1) < 0)
        return -1;
      d += stop - a;
      a = stop;
    }
    if (k >= ncover || a >= end)
      break;
    uint64_t skip_to = cover[k].end < end ? cover[k].end : end;
    if (skip_to > a) {
      d += skip_to - a;
      a = skip_to;
    }
  }
  return 0;
}

/* The kernel's pending effects (a MAP's new contents) join the current
 * event, except the bytes the syscall's own writes `mem` set: a file
 * mapped over an older mapping would otherwise come as zeros and then
 * as its contents, twice the data and not the call's real writes. */
static int take_kpend_except(tc_writer *w, const tc_mem_access *mem,
                             uint32_t nmem) {
  span *cover = NULL;
  size_t ncover = 0;
  if (nmem && w->kpend.n) {
    cover = malloc(nmem * sizeof *cover);
    if (!cover) {
      fail(w, "rvn: out of memory");
      return -1;
    }
    for (uint32_t i = 0; i < nmem; i++)
      if (mem[i].size)
        cover[ncover++] = (span){mem[i].addr, mem[i].addr + mem[i].size};
    qsort(cover, ncover, sizeof *cover, span_cmp);
    size_t m = 0; /* merge overlaps so the spans are disjoint */
    for (size_t i = 0; i < ncover; i++) {
      if (m && cover[i].start <= cover[m - 1].end) {
        if (cover[i].end > cover[m - 1].end)
          cover[m - 1].end = cover[i].end;
      } else
        cover[m++] = cover[i];
    }
    ncover = m;
  }
  int rc = 0;
  for (size_t i = 0; i < w->kpend.n && rc == 0; i++) {
    const mem_ent *e = &w->kpend.e[i];
    rc = take_uncovered(w, e->addr, w->kpend.data + e->off, e->size, cover,
                        ncover);
  }
  free(cover);
  mem_list_reset(&w->kpend);
  return rc;
}

static int take_kpend(tc_writer *w) { return take_kpend_except(w, NULL, 0); }

/* Memory set up by a MAP outside any syscall: an event of its own. */
static int flush_orphan_kpend(tc_writer *w) {
  if (!w->kpend.n)
    return 0;
  if (flush(w) < 0)
    return -1;
  begin(w, 1, "map");
  if (take_kpend(w) < 0)
    return -1;
  return flush(w);
}

/* The first event that needs registers fixes the initial state: the
 * keyframe before instruction 0, else the trace info's, else `fallback`
 * (the first instruction's state before), else zeros. */
static int ensure_started(tc_writer *w, const uint8_t *fallback) {
  if (w->started)
    return 0;
  if (!w->pre_state) {
    w->pre_state = calloc(1, w->arch->state_size);
    if (!w->pre_state) {
      fail(w, "rvn: out of memory");
      return -1;
    }
    if (fallback)
      memcpy(w->pre_state, fallback, w->arch->state_size);
  }
  for (int r = 0; r < RVN_NREGS; r++)
    rvn_value(&w->map, r, w->pre_state, w->cur[r]);
  w->started = 1;
  return 0;
}

static int on_insn(tc_writer *w, const tc_insn_event *in) {
  if (ensure_started(w, in->state_before) < 0 || flush_orphan_kpend(w) < 0 ||
      flush(w) < 0)
    return -1;
  begin(w, 0, NULL);
  w->insn_pc = in->pc;
  w->insn_size = in->size;
  for (uint32_t i = 0; i < in->nmem; i++) {
    const tc_mem_access *a = &in->mem[i];
    if (a->kind != TC_MEM_WRITE || a->size == 0)
      continue;
    if (ensure_region(w, a->addr, a->size) < 0 ||
        mem_list_add(&w->pm, a->addr, a->after, a->size) < 0 ||
        apply_write(w, a->addr, a->after, a->size, 1) < 0) {
      fail(w, "rvn: out of memory");
      return -1;
    }
  }
  for (uint16_t i = 0; i < in->nregs; i++)
    if (in->regs[i] < w->arch->nregs)
      update_from(w, in->regs[i], in->state_after);
  return w->failed ? -1 : 0;
}

/* The syscall instruction's event keeps only its move to the next
 * instruction; what the kernel did (registers, memory) becomes the
 * following "syscall N name" event. */
static int sys_writes(tc_writer *w, const tc_syscall_event *s);

static int on_syscall(tc_writer *w, const tc_syscall_event *s) {
  char desc[256];
  if (s->part > 0) /* more kernel writes of the call already begun */
    return sys_writes(w, s);
  if (s->name)
    snprintf(desc, sizeof desc, "syscall %u %s", s->nr, s->name);
  else
    snprintf(desc, sizeof desc, "syscall %u", s->nr);
  if (ensure_started(w, NULL) < 0)
    return -1;
  uint64_t moved[2] = {0, 0};
  if (w->active && !w->other) {
    /* Undo the kernel's effects, emit the instruction alone, redo them. */
    moved[0] = w->mask[0];
    moved[1] = w->mask[1];
    /* rip too, even unchanged: a syscall that does not return to the
     * next instruction (a restart) moves it back in the kernel's event */
    if (!bit_get(moved, RV_RIP)) {
      memcpy(w->old[RV_RIP], w->cur[RV_RIP], RVN_SLOT);
      bit_set(moved, RV_RIP);
    }
    for (int r = 0; r < RVN_NREGS; r++)
      if (bit_get(moved, r)) {
        memcpy(w->after[r], w->cur[r], RVN_SLOT);
        memcpy(w->cur[r], w->old[r], RVN_SLOT);
      }
    w->mask[0] = w->mask[1] = 0;
    uint8_t rip[RVN_SLOT] = {0};
    uint64_t next = w->insn_pc + w->insn_size;
    if (w->arch->ptr_size == 4)
      next &= 0xffffffffu;
    put_le(rip, next, 8);
    pend_set(w, RV_RIP, rip);
  }
  if (flush(w) < 0)
    return -1;
  begin(w, 1, desc);
  for (int r = 0; r < RVN_NREGS; r++)
    if (bit_get(moved, r) && memcmp(w->after[r], w->cur[r], RVN_SLOT))
      pend_set(w, r, w->after[r]);
  if (take_kpend_except(w, s->mem, s->nmem) < 0)
    return -1;
  return sys_writes(w, s);
}

static int kernel_writes(tc_writer *w, const tc_mem_access *mem, uint32_t n);
static int sys_writes(tc_writer *w, const tc_syscall_event *s) {
  return kernel_writes(w, s->mem, s->nmem);
}

/* Memory the kernel wrote (a syscall's results, a signal frame): part of
 * the "other" event begun for the syscall or fault. */
static int kernel_writes(tc_writer *w, const tc_mem_access *mem, uint32_t n) {
  for (uint32_t i = 0; i < n; i++) {
    const tc_mem_access *a = &mem[i];
    if (a->size == 0)
      continue;
    if (ensure_region(w, a->addr, a->size) < 0 ||
        mem_list_add(&w->pm, a->addr, a->after, a->size) < 0 ||
        apply_write(w, a->addr, a->after, a->size, 1) < 0) {
      fail(w, "rvn: out of memory");
      return -1;
    }
  }
  return w->failed ? -1 : 0;
}

/* REVEN's exception names (PANDA's exception_event_description). */
static const char *fault_name(const tc_fault_event *f) {
  switch (f->kind) {
  case TC_FAULT_UNMAPPED_READ:
  case TC_FAULT_UNMAPPED_WRITE:
  case TC_FAULT_UNMAPPED_FETCH:
  case TC_FAULT_PROT_READ:
  case TC_FAULT_PROT_WRITE:
  case TC_FAULT_PROT_FETCH:
    return "page fault";
  case TC_FAULT_INVALID_INSN:
    return "invalid opcode";
  case TC_FAULT_DIVIDE:
    return "divide error";
  default:
    break;
  }
  switch (f->signal) {
  case 11: /* SIGSEGV */
    return "general protection";
  case 5: /* SIGTRAP */
    return "breakpoint";
  case 7: /* SIGBUS */
    return "alignment check";
  case 8: /* SIGFPE */
    return "floating-point error";
  case 4: /* SIGILL */
    return "invalid opcode";
  default:
    return "unknown exception";
  }
}

static int on_fault(tc_writer *w, const tc_fault_event *f) {
  if (ensure_started(w, NULL) < 0 || flush_orphan_kpend(w) < 0 || flush(w) < 0)
    return -1;
  const char *name = fault_name(f);
  begin(w, 1, name);
  if (strcmp(name, "page fault") == 0) {
    uint8_t v[RVN_SLOT] = {0};
    put_le(v, f->addr, 8);
    if (memcmp(v, w->cur[RV_CR2], 8) != 0)
      pend_set(w, RV_CR2, v);
  }
  return 0;
}

static int on_map(tc_writer *w, const tc_map_event *m) {
  if (add_region(w, m->addr, m->size, m->prot) < 0)
    return -1;
  if (!w->started) {
    /* The initial image: part of the initial memory section. */
    int has = m->data != NULL;
    if (spool_u64(&w->init, m->addr, 8) < 0 ||
        spool_u64(&w->init, m->size, 8) < 0 ||
        spool_u64(&w->init, (uint64_t)has, 1) < 0 ||
        (has && spool_put(&w->init, m->data, (size_t)m->size) < 0)) {
      fail_io(w, "writing the memory spool");
      return -1;
    }
    /* Keep non-zero pages only: absent pages read as zeros. */
    for (uint64_t a = m->addr; a < m->addr + m->size;) {
      uint64_t in = a % RVN_PAGE;
      uint64_t n = RVN_PAGE - in < m->addr + m->size - a
                       ? RVN_PAGE - in
                       : m->addr + m->size - a;
      const uint8_t *d = has ? m->data + (a - m->addr) : NULL;
      int nz = 0;
      for (uint64_t i = 0; d && i < n && !nz; i++)
        nz = d[i] != 0;
      if (nz || rvn_pages_get(&w->mem, a / RVN_PAGE))
        if (apply_write(w, a, d, n, 0) < 0)
          return -1;
      a += n;
    }
    return 0;
  }
  /* A later mapping: its pages get their new contents (data or zeros)
   * through the writes of the syscall that mapped them. */
  return diff_into(w, &w->kpend, m->addr, m->data, m->size);
}

static int on_keyframe(tc_writer *w, const tc_keyframe_event *k) {
  if (!w->started) {
    if (!w->pre_state)
      w->pre_state = malloc(w->arch->state_size);
    if (!w->pre_state) {
      fail(w, "rvn: out of memory");
      return -1;
    }
    memcpy(w->pre_state, k->state, w->arch->state_size);
    w->key_tid = k->tid;
    return 0;
  }
  /* Another thread's registers: an event of their own, never folded into
   * the event still open (a syscall's: its result is read from the
   * registers after it, which are the calling thread's). */
  if (k->tid != w->key_tid) {
    if (flush_orphan_kpend(w) < 0 || flush(w) < 0)
      return -1;
    w->key_tid = k->tid;
  }
  /* A register the instruction events did not report (the recorder's
   * keyframe drift): fold it into the latest event. */
  uint8_t v[RVN_SLOT];
  for (int r = 0; r < RVN_NREGS; r++) {
    if (w->map.kind[r] == RVN_SRC_CONST)
      continue;
    rvn_value(&w->map, r, k->state, v);
    if (memcmp(v, w->cur[r], rvn_regs[r].size) != 0) {
      if (!w->active)
        begin(w, 1, "state");
      pend_set(w, r, v);
    }
  }
  return 0;
}

static int rvn_write_event(tc_writer *w, const tc_event *ev, tc_error *err) {
  if (w->failed) {
    tc_error_set(err, "%s", w->ferr.msg);
    return -1;
  }
  int rc = 0;
  switch (ev->kind) {
  case TC_EV_INSN:
    rc = on_insn(w, &ev->u.insn);
    break;
  case TC_EV_SYSCALL:
    rc = on_syscall(w, &ev->u.sys);
    break;
  case TC_EV_MAP:
    rc = on_map(w, &ev->u.map);
    break;
  case TC_EV_PROTECT:
    if (add_prot(w, page_down(ev->u.map.addr),
                 page_up(ev->u.map.addr + ev->u.map.size),
                 ev->u.map.prot) < 0) {
      fail(w, "rvn: out of memory");
      rc = -1;
    }
    break;
  case TC_EV_KEYFRAME:
    rc = on_keyframe(w, &ev->u.key);
    break;
  case TC_EV_FAULT:
    rc = on_fault(w, &ev->u.fault);
    break;
  case TC_EV_SIGNAL: /* the frame joins the syscall's or fault's event */
    rc = ensure_started(w, NULL) < 0
             ? -1
             : kernel_writes(w, ev->u.sig.mem, ev->u.sig.nmem);
    break;
  case TC_EV_EXIT:
    if (w->started)
      rc = flush_orphan_kpend(w) < 0 || flush(w) < 0 ? -1 : 0;
    break;
  case TC_EV_UNMAP:
    /* REVEN's memory is physical and outlives an unmap; the guest sees
     * zeros in whatever is mapped there later. Zeroed now, as writes of
     * the syscall that unmapped (so a later map, brk, or the next image
     * of an execve finds the zeros it expects). */
    rc = w->started
             ? diff_into(w, &w->kpend, ev->u.map.addr, NULL, ev->u.map.size)
             : 0;
    break;
  default:
    break;
  }
  if (rc < 0 || w->failed) {
    tc_error_set(err, "%s", w->failed ? w->ferr.msg : "rvn: write failed");
    return -1;
  }
  return 0;
}

static void free_writer(tc_writer *w) {
  spool_close(&w->ev);
  spool_close(&w->init);
  spool_close(&w->cpts);
  spool_close(&w->cidx);
  rvn_pages_free(&w->mem);
  rvn_ivset_free(&w->regions);
  mem_list_free(&w->pm);
  mem_list_free(&w->kpend);
  free(w->prots);
  free(w->dirty);
  free(w->enc);
  free(w->points);
  free(w->pre_state);
  free(w->dir);
  free(w->bin_path);
  free(w->cache_path);
  free(w);
}

static tc_writer *rvn_open_writer(const char *path, const tc_trace_info *info,
                                  tc_error *err) {
  static const char *const known[] = {"cache-every", NULL};
  if (tc_writer_options_check(info, "rvn", known, err) < 0)
    return NULL;
  if (rvn_supports(info->arch, err) < 0)
    return NULL;
  uint64_t every = RVN_DEFAULT_CACHE_EVERY;
  const char *opt = tc_writer_option(info, "rvn", "cache-every");
  if (opt) {
    char *end;
    errno = 0;
    unsigned long long v = strtoull(opt, &end, 0);
    if (!*opt || *end || errno || opt[0] == '-') {
      tc_error_set(err,
                   "rvn: cache-every must be a number of events (0 = no "
                   "cache points), not '%s'",
                   opt);
      return NULL;
    }
    every = v;
  }
  if (tc_output_is_stream(path)) {
    tc_error_set(err,
                 "rvn: %s: a stream (standard output, a pipe, a device) "
                 "cannot hold rvn, a directory of two files: write it to a "
                 "directory name",
                 path);
    return NULL;
  }
  if (mkdir(path, 0777) < 0 && errno != EEXIST) {
    tc_error_set(err, "rvn: %s: cannot create the directory: %s", path,
                 strerror(errno));
    return NULL;
  }
  struct stat st;
  if (stat(path, &st) < 0 || !S_ISDIR(st.st_mode)) {
    tc_error_set(err, "rvn: %s exists and is not a directory", path);
    return NULL;
  }
  tc_writer *w = calloc(1, sizeof *w);
  if (!w) {
    tc_error_set(err, "rvn: out of memory");
    return NULL;
  }
  w->ev.fd = w->init.fd = w->cpts.fd = w->cidx.fd = -1;
  size_t n = strlen(path) + 16;
  w->dir = strdup(path);
  w->bin_path = malloc(n);
  w->cache_path = malloc(n);
  if (!w->dir || !w->bin_path || !w->cache_path ||
      rvn_pages_init(&w->mem) < 0) {
    tc_error_set(err, "rvn: out of memory");
    goto fail;
  }
  snprintf(w->bin_path, n, "%s/trace.bin", path);
  snprintf(w->cache_path, n, "%s/trace.cache", path);
  w->arch = info->arch;
  rvn_map_init(&w->map, w->arch);
  w->every = every;
  w->epoch = 1;
  snprintf(w->tool_info, sizeof w->tool_info,
           "tracecorn %s user-mode recording of %s (%s process%s)",
           TC_VERSION_STRING, info->exe_path ? info->exe_path : "a program",
           w->arch->name, w->map.compat ? ", compatibility mode" : "");
  if (info->initial_state) {
    w->pre_state = malloc(w->arch->state_size);
    if (!w->pre_state) {
      tc_error_set(err, "rvn: out of memory");
      goto fail;
    }
    memcpy(w->pre_state, info->initial_state, w->arch->state_size);
  }
  if (spool_open(&w->ev, path, err) < 0 ||
      spool_open(&w->init, path, err) < 0 ||
      spool_open(&w->cpts, path, err) < 0 ||
      spool_open(&w->cidx, path, err) < 0)
    goto fail;
  return w;
fail:
  free_writer(w);
  return NULL;
}

/* --------------------------------------------------------- assembling */

typedef struct region {
  uint64_t start, size, off; /* off: in the initial memory body */
} region;

typedef struct layout {
  region *reg;
  size_t nreg;
  uint64_t total;
  uint64_t (*tables)[512];
  size_t ntables;
} layout;

static const region *region_of(const layout *l, uint64_t addr) {
  size_t lo = 0, hi = l->nreg;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (l->reg[mid].start + l->reg[mid].size <= addr)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo < l->nreg && addr >= l->reg[lo].start ? &l->reg[lo] : NULL;
}

static int new_table(layout *l, size_t *cap) {
  if (l->ntables == *cap) {
    size_t nc = *cap ? *cap * 2 : 16;
    uint64_t(*nt)[512] = realloc(l->tables, nc * sizeof *nt);
    if (!nt)
      return -1;
    l->tables = nt;
    *cap = nc;
  }
  memset(l->tables[l->ntables], 0, sizeof l->tables[0]);
  return (int)l->ntables++;
}

/* Regions (user ranges, then the page tables) and the 4-level tables
 * identity-mapping every user page: user/supervisor = 1, writable if
 * ever mapped writable, NX unless ever executable, not present if only
 * ever mapped PROT_NONE. */
static int build_layout(tc_writer *w, layout *l) {
  rvn_ivset_merge(&w->regions);
  size_t nu = w->regions.n;
  l->reg = calloc(nu + 1, sizeof *l->reg);
  if (!l->reg)
    goto oom;
  uint64_t pages = 0;
  for (size_t i = 0; i < nu; i++) {
    const rvn_iv *v = &w->regions.v[i];
    if (v->end > RVN_PT_BASE) {
      fail(w,
           "rvn: memory at 0x%" PRIx64 " lies above 2^47, where no user "
           "page can be identity-mapped",
           v->end - 1);
      return -1;
    }
    l->reg[i] = (region){v->start, v->end - v->start, l->total};
    l->total += v->end - v->start;
    pages += (v->end - v->start) / RVN_PAGE;
  }
  l->nreg = nu;
  if (l->total > (uint64_t)MAX_TOTAL_REGIONS_GIB << 30) {
    fail(w,
         "rvn: the program mapped %" PRIu64 " MiB in all; REVEN's initial "
         "memory would hold every byte of it (limit %u GiB)",
         l->total >> 20, MAX_TOTAL_REGIONS_GIB);
    return -1;
  }
  uint8_t *prot = calloc(pages ? pages : 1, 1);
  if (!prot)
    goto oom;
  /* Page index of a region start: its offset / page. */
  for (size_t i = 0; i < w->nprots; i++) {
    const prot_iv *p = &w->prots[i];
    for (uint64_t a = p->start; a < p->end; a += RVN_PAGE) {
      const region *rg = region_of(l, a);
      if (rg)
        prot[(rg->off + (a - rg->start)) / RVN_PAGE] |= (uint8_t)(p->prot | 8);
    }
  }
  size_t cap = 0;
  if (new_table(l, &cap) < 0) { /* the PML4 */
    free(prot);
    goto oom;
  }
  uint64_t last4 = UINT64_MAX, last3 = UINT64_MAX, last2 = UINT64_MAX;
  size_t pdpt = 0, pd = 0, pt = 0;
  for (size_t i = 0; i < nu; i++) {
    const region *rg = &l->reg[i];
    for (uint64_t a = rg->start; a < rg->start + rg->size; a += RVN_PAGE) {
      int t;
      if (a >> 39 != last4) {
        if ((t = new_table(l, &cap)) < 0)
          break;
        pdpt = (size_t)t;
        l->tables[0][(a >> 39) & 511] =
            (RVN_PT_BASE + (uint64_t)pdpt * RVN_PAGE) | 0x27;
        last4 = a >> 39;
        last3 = UINT64_MAX;
      }
      if (a >> 30 != last3) {
        if ((t = new_table(l, &cap)) < 0)
          break;
        pd = (size_t)t;
        l->tables[pdpt][(a >> 30) & 511] =
            (RVN_PT_BASE + (uint64_t)pd * RVN_PAGE) | 0x27;
        last3 = a >> 30;
        last2 = UINT64_MAX;
      }
      if (a >> 21 != last2) {
        if ((t = new_table(l, &cap)) < 0)
          break;
        pt = (size_t)t;
        l->tables[pd][(a >> 21) & 511] =
            (RVN_PT_BASE + (uint64_t)pt * RVN_PAGE) | 0x27;
        last2 = a >> 21;
      }
      uint8_t p = prot[(rg->off + (a - rg->start)) / RVN_PAGE];
      uint64_t pte = 0;
      if (p & 7) {
        pte = a | 0x25; /* present, user, accessed */
        if (p & TC_PROT_WRITE)
          pte |= 0x42; /* writable, dirty */
        if (!(p & TC_PROT_EXEC))
          pte |= 1ull << 63; /* NX */
      }
      l->tables[pt][(a >> 12) & 511] = pte;
    }
  }
  free(prot);
  if (w->failed)
    return -1;
  l->reg[nu] = (region){RVN_PT_BASE, (uint64_t)l->ntables * RVN_PAGE, l->total};
  l->total += l->reg[nu].size;
  l->nreg = nu + 1;
  return 0;
oom:
  fail(w, "rvn: out of memory");
  return -1;
}

typedef struct buf {
  uint8_t *p;
  size_t len, cap;
  int oom;
} buf;

static void buf_put(buf *b, const void *p, size_t n) {
  if (b->oom)
    return;
  if (b->len + n > b->cap) {
    size_t cap = b->cap ? b->cap : 4096;
    while (cap < b->len + n)
      cap *= 2;
    uint8_t *np = realloc(b->p, cap);
    if (!np) {
      b->oom = 1;
      return;
    }
    b->p = np;
    b->cap = cap;
  }
  memcpy(b->p + b->len, p, n);
  b->len += n;
}

static void buf_le(buf *b, uint64_t v, unsigned n) {
  uint8_t t[8];
  put_le(t, v, n);
  buf_put(b, t, n);
}

/* The machine description section body. */
static void machine_body(const layout *l, buf *b) {
  buf_le(b, RVN_ARCH_X64, 4);
  buf_le(b, RVN_PHY_SIZE, 1);
  buf_le(b, l->nreg, 4);
  for (size_t i = 0; i < l->nreg; i++) {
    buf_le(b, l->reg[i].start, RVN_PHY_SIZE);
    buf_le(b, l->reg[i].size, RVN_PHY_SIZE);
  }
  buf_le(b, RVN_NREGS, 4);
  for (int r = 0; r < RVN_NREGS; r++) {
    size_t n = strlen(rvn_regs[r].name);
    buf_le(b, rvn_regs[r].id, 2);
    buf_le(b, rvn_regs[r].size, 2);
    buf_le(b, n, 1);
    buf_put(b, rvn_regs[r].name, n);
  }
  buf_le(b, RVN_NOPS, 4);
  for (int i = 0; i < RVN_NOPS; i++) {
    const rvn_op_def *o = &rvn_ops[i];
    buf_le(b, o->id, 1);
    buf_le(b, rvn_regs[o->reg].id, 2);
    buf_le(b, o->oper, 1);
    buf_le(b, o->value, rvn_regs[o->reg].size);
  }
  buf_le(b, RVN_NSTATIC, 4);
  for (int i = 0; i < RVN_NSTATIC; i++) {
    size_t n = strlen(rvn_statics[i].name);
    buf_le(b, n, 1);
    buf_put(b, rvn_statics[i].name, n);
    buf_le(b, 1, 1);
    buf_le(b, rvn_statics[i].value, 1);
  }
}

/* Replays the initial-image spool into the initial memory body at off. */
static int write_initial_memory(tc_writer *w, const layout *l, int fd,
                                uint64_t off) {
  spool *s = &w->init;
  if (spool_flush(s) < 0 || lseek(s->fd, 0, SEEK_SET) < 0)
    return -1;
  FILE *fp = fdopen(dup(s->fd), "rb");
  if (!fp)
    return -1;
  uint8_t *chunk = malloc(SPOOL_BUF);
  int rc = chunk ? 0 : -1;
  rvn_ivset written = {0};
  uint8_t hdr[17];
  while (rc == 0 && fread(hdr, 1, 17, fp) == 17) {
    uint64_t addr = get_le(hdr, 8), size = get_le(hdr + 8, 8);
    int has = hdr[16];
    while (size && rc == 0) {
      size_t n = size < SPOOL_BUF ? (size_t)size : SPOOL_BUF;
      if (has) {
        if (fread(chunk, 1, n, fp) != n)
          rc = -1;
      } else {
        memset(chunk, 0, n);
      }
      /* Page pieces; an all-zero one is skipped (a hole reads as zeros)
       * unless an earlier record wrote there. */
      for (size_t i = 0; i < n && rc == 0;) {
        uint64_t a = addr + i;
        size_t k = RVN_PAGE - a % RVN_PAGE;
        if (k > n - i)
          k = n - i;
        int zero = 1;
        for (size_t j = 0; j < k && zero; j++)
          zero = chunk[i + j] == 0;
        const region *rg = region_of(l, a);
        if (rg && (!zero || rvn_ivset_covers(&written, page_down(a), 1))) {
          if (pwrite_all(fd, chunk + i, k, off + rg->off + (a - rg->start)) <
                  0 ||
              rvn_ivset_add(&written, page_down(a), page_down(a) + RVN_PAGE) <
                  0)
            rc = -1;
        }
        i += k;
      }
      addr += n;
      size -= n;
    }
  }
  free(chunk);
  rvn_ivset_free(&written);
  fclose(fp);
  return rc;
}

static int assemble_trace(tc_writer *w, const layout *l) {
  int fd = open(w->bin_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  if (fd < 0) {
    fail(w, "rvn: %s: cannot create: %s", w->bin_path, strerror(errno));
    return -1;
  }
  buf b = {0};
  uint8_t hdr[RVN_HEADER_SIZE];
  rvn_header_build(hdr, RVN_TYPE_TRACE, w->tool_info);
  buf_put(&b, hdr, sizeof hdr);
  buf_le(&b, 1, 8); /* header section: compression 0 */
  buf_le(&b, 0, 1);
  buf md = {0};
  machine_body(l, &md);
  buf_le(&b, md.len, 8);
  buf_put(&b, md.p, md.len);
  free(md.p);
  buf_le(&b, l->total, 8);
  uint64_t mem_off = b.len;
  int rc = b.oom ? -1 : pwrite_all(fd, b.p, b.len, 0);
  /* Zeros are holes: the initial memory section costs what it holds. */
  if (rc == 0 && ftruncate(fd, (off_t)(mem_off + l->total)) < 0)
    rc = -1;
  if (rc == 0)
    rc = write_initial_memory(w, l, fd, mem_off);
  const region *pt = &l->reg[l->nreg - 1];
  if (rc == 0)
    rc = pwrite_all(fd, l->tables, l->ntables * sizeof l->tables[0],
                    mem_off + pt->off);
  /* Initial registers: every register once, in id order. */
  b.len = 0;
  size_t regs_size = 4;
  for (int r = 0; r < RVN_NREGS; r++)
    regs_size += 2 + rvn_regs[r].size;
  buf_le(&b, regs_size, 8);
  buf_le(&b, RVN_NREGS, 4);
  for (int r = 0; r < RVN_NREGS; r++) {
    buf_le(&b, rvn_regs[r].id, 2);
    buf_put(&b, w->old[r], rvn_regs[r].size);
  }
  buf_le(&b, 8 + w->ev.size, 8);
  buf_le(&b, w->nevents, 8);
  uint64_t off = mem_off + l->total;
  if (rc == 0)
    rc = b.oom ? -1 : pwrite_all(fd, b.p, b.len, off);
  if (rc == 0)
    rc = spool_copy(&w->ev, fd, off + b.len);
  free(b.p);
  if (close(fd) < 0)
    rc = -1;
  if (rc < 0)
    fail(w, "rvn: %s: write failed: %s", w->bin_path,
         b.oom ? "out of memory" : strerror(errno));
  return rc;
}

static int assemble_cache(tc_writer *w) {
  int fd = open(w->cache_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  if (fd < 0) {
    fail(w, "rvn: %s: cannot create: %s", w->cache_path, strerror(errno));
    return -1;
  }
  buf b = {0};
  uint8_t hdr[RVN_HEADER_SIZE];
  rvn_header_build(hdr, RVN_TYPE_CACHE, w->tool_info);
  buf_put(&b, hdr, sizeof hdr);
  /* Header: the page size, then tracecorn's instruction index of the
   * points (Tetrane's reader skips the rest of this section). */
  buf_le(&b, 4 + RVN_IX_MAGIC_LEN + 8 + 16 * (uint64_t)w->npoints, 8);
  buf_le(&b, RVN_PAGE, 4);
  buf_put(&b, RVN_IX_MAGIC, RVN_IX_MAGIC_LEN);
  buf_le(&b, w->npoints, 8);
  for (size_t i = 0; i < w->npoints; i++) {
    buf_le(&b, w->points[i].context, 8);
    buf_le(&b, w->points[i].insn, 8);
  }
  buf_le(&b, w->cpts.size, 8);
  int rc = b.oom ? -1 : pwrite_all(fd, b.p, b.len, 0);
  uint64_t off = b.len;
  if (rc == 0)
    rc = spool_copy(&w->cpts, fd, off);
  off += w->cpts.size;
  uint8_t t[16];
  put_le(t, 8 + w->cidx.size, 8);
  put_le(t + 8, w->npoints, 8);
  if (rc == 0)
    rc = pwrite_all(fd, t, 16, off);
  if (rc == 0)
    rc = spool_copy(&w->cidx, fd, off + 16);
  free(b.p);
  if (close(fd) < 0)
    rc = -1;
  if (rc < 0)
    fail(w, "rvn: %s: write failed: %s", w->cache_path, strerror(errno));
  return rc;
}

static int rvn_close_writer(tc_writer *w, tc_error *err) {
  if (!w->failed) {
    if (w->started) {
      flush_orphan_kpend(w);
      flush(w);
    } else {
      ensure_started(w, NULL);
    }
    /* w->old is scratch from here on: the initial registers. */
    for (int r = 0; r < RVN_NREGS && w->pre_state; r++)
      rvn_value(&w->map, r, w->pre_state, w->old[r]);
  }
  layout l = {0};
  if (!w->failed && build_layout(w, &l) == 0 && assemble_trace(w, &l) == 0)
    assemble_cache(w);
  free(l.reg);
  free(l.tables);
  int rc = 0;
  if (w->failed) {
    tc_error_set(err, "%s", w->ferr.msg);
    rc = -1;
  }
  free_writer(w);
  return rc;
}

/* Which registers of x86 and x86_64 a trace holds: called per register
 * per instruction by verify, so computed once per arch; through
 * pthread_once since writers and verify may run on several threads. */
static uint64_t rvn_held[2]; /* bit t: register t of the arch table */
static pthread_once_t rvn_held_once[2] = {PTHREAD_ONCE_INIT, PTHREAD_ONCE_INIT};

static void rvn_held_init(int k, tc_arch_id id) {
  const tc_arch *arch = tc_arch_by_id(id);
  rvn_map m;
  uint64_t bits = 0;
  if (arch && rvn_map_init(&m, arch) == 0)
    for (int t = 0; t < arch->nregs && t < 64; t++)
      if (rvn_map_holds(&m, t))
        bits |= 1ull << t;
  rvn_held[k] = bits;
}

static void rvn_held_init_x86(void) { rvn_held_init(0, TC_ARCH_X86); }
static void rvn_held_init_x86_64(void) { rvn_held_init(1, TC_ARCH_X86_64); }

static int rvn_holds(const tc_arch *arch, int reg) {
  if (!arch || (arch->id != TC_ARCH_X86 && arch->id != TC_ARCH_X86_64) ||
      reg < 0 || reg >= 64)
    return 0;
  int k = arch->id == TC_ARCH_X86_64;
  pthread_once(&rvn_held_once[k], k ? rvn_held_init_x86_64 : rvn_held_init_x86);
  return (rvn_held[k] >> reg) & 1;
}

/* rvn_read.c */
int rvn_probe(const uint8_t *head, size_t n, const char *path);
tc_reader *rvn_open_reader(const char *path, tc_error *err);
const tc_trace_info *rvn_reader_info(tc_reader *r);
const char *rvn_reader_writer(tc_reader *r);
int rvn_next_event(tc_reader *r, tc_event *ev, tc_error *err);
void rvn_close_reader(tc_reader *r);
int rvn_seek(tc_reader *r, uint64_t insn, tc_error *err);

const tc_format tc_format_rvn = {
    .name = "rvn",
    .description = "REVEN binary trace 1.0 (rvnbintrace): directory with "
                   "trace.bin and trace.cache, seekable",
    .caps = TC_CAP_INSN_BYTES | TC_CAP_MEM | TC_CAP_MEM_EXACT | TC_CAP_MEM_OLD |
            TC_CAP_MEM_WRITES_ONLY | TC_CAP_SYSCALLS | TC_CAP_SYSCALL_MEM |
            TC_CAP_SYSCALL_COMPAT | TC_CAP_MAP_DATA | TC_CAP_FAULTS,
    .holds_reg = rvn_holds,
    .extension = rvn_extension,
    .supports = rvn_supports,
    .open_writer = rvn_open_writer,
    .write_event = rvn_write_event,
    .close_writer = rvn_close_writer,
    .probe = rvn_probe,
    .open_reader = rvn_open_reader,
    .reader_info = rvn_reader_info,
    .reader_writer = rvn_reader_writer,
    .next_event = rvn_next_event,
    .close_reader = rvn_close_reader,
    .seek = rvn_seek,
};
