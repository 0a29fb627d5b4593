/* SPDX-License-Identifier: GPL-2.0-or-later */
/* State of a recording at any instruction (see replay.h). */
#include "analysis/replay.h"
#include "writers/format.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define RP_PAGE 4096u
#define RP_KNOWN (RP_PAGE / 8)
#define RP_BUF (RP_PAGE + RP_KNOWN) /* a page's bytes, then its known bits */
/* Each checkpoint interval's filters (one bit per hash, no false
 * negatives): the pcs at its positions, the 64-byte lines its stores and
 * its loads touched. A run skips an interval none of whose filters can
 * hold one of its stops. */
#define RP_PC_BITS 13 /* 8192 bits */
#define RP_LINE_BITS 11
#define RP_BLOOM ((1u << RP_PC_BITS) / 8 + 2 * (1u << RP_LINE_BITS) / 8)
#define RP_BLOOM_W ((1u << RP_PC_BITS) / 8)
#define RP_BLOOM_R (RP_BLOOM_W + (1u << RP_LINE_BITS) / 8)

/* OP_SAVE: a thread switched out, with its state (state_size bytes);
 * OP_GONE: a thread exited. */
/* OP_FILL: a load's value, for the bytes not yet known (formats without
 * map data). */
enum { OP_WRITE = 1, OP_READ, OP_CLEAR, OP_TID, OP_SAVE, OP_GONE, OP_FILL };
enum { ML_ZERO = 1, ML_UNMAP };

/* ------------------------------------------------------------ hash map */

typedef struct rp_map {
  uint64_t *keys;
  void **vals;
  size_t cap, n; /* cap a power of two, 0 = empty */
} rp_map;

static size_t map_hash(uint64_t k, size_t cap) {
  return (size_t)((k * 0x9E3779B97F4A7C15ull) >> 17) & (cap - 1);
}

static void *map_get(const rp_map *m, uint64_t k) {
  if (!m->cap)
    return NULL;
  for (size_t i = map_hash(k, m->cap);; i = (i + 1) & (m->cap - 1)) {
    if (!m->vals[i])
      return NULL;
    if (m->keys[i] == k)
      return m->vals[i];
  }
}

/* Inserts (k is absent). -1 out of memory. */
static int map_put(rp_map *m, uint64_t k, void *v) {
  if ((m->n + 1) * 2 > m->cap) {
    size_t cap = m->cap ? m->cap * 2 : 64;
    uint64_t *keys = calloc(cap, sizeof *keys);
    void **vals = calloc(cap, sizeof *vals);
    if (!keys || !vals) {
      free(keys);
      free(vals);
      return -1;
    }
    for (size_t i = 0; i < m->cap; i++)
      if (m->vals[i]) {
        size_t j = map_hash(m->keys[i], cap);
        while (vals[j])
          j = (j + 1) & (cap - 1);
        keys[j] = m->keys[i];
        vals[j] = m->vals[i];
      }
    free(m->keys);
    free(m->vals);
    m->keys = keys;
    m->vals = vals;
    m->cap = cap;
  }
  size_t i = map_hash(k, m->cap);
  while (m->vals[i])
    i = (i + 1) & (m->cap - 1);
  m->keys[i] = k;
  m->vals[i] = v;
  m->n++;
  return 0;
}

/* Empties the map, freeing every value. */
static void map_clear(rp_map *m) {
  if (!m->n)
    return;
  for (size_t i = 0; i < m->cap; i++)
    if (m->vals[i]) {
      free(m->vals[i]);
      m->vals[i] = NULL;
    }
  m->n = 0;
}

static void map_free(rp_map *m) {
  map_clear(m);
  free(m->keys);
  free(m->vals);
  memset(m, 0, sizeof *m);
}

/* ------------------------------------------------------------- structures */

typedef struct rp_version {
  uint32_t cp;
  uint8_t *buf; /* RP_BUF bytes */
} rp_version;

typedef struct rp_page {
  uint64_t pn;
  uint8_t *cur; /* while opening: the page now */
  bool dirty;   /* changed since the last checkpoint */
  rp_version *v;
  uint32_t nv, capv;
} rp_page;

/* The threads that are not running, each with its state when it last
 * ran. */
typedef struct rp_thread {
  uint32_t tid;
  uint8_t *state;
} rp_thread;

typedef struct rp_threads {
  rp_thread *v;
  size_t n, cap;
} rp_threads;

static void tt_del(rp_threads *t, uint32_t tid) {
  for (size_t i = 0; i < t->n; i++)
    if (t->v[i].tid == tid) {
      free(t->v[i].state);
      t->v[i] = t->v[--t->n];
      return;
    }
}

static int tt_set(rp_threads *t, uint32_t tid, const uint8_t *state,
                  size_t ss) {
  for (size_t i = 0; i < t->n; i++)
    if (t->v[i].tid == tid) {
      memcpy(t->v[i].state, state, ss);
      return 0;
    }
  if (t->n == t->cap) {
    size_t cap = t->cap ? t->cap * 2 : 4;
    rp_thread *v = realloc(t->v, cap * sizeof *v);
    if (!v)
      return -1;
    t->v = v;
    t->cap = cap;
  }
  uint8_t *s = malloc(ss);
  if (!s)
    return -1;
  memcpy(s, state, ss);
  t->v[t->n++] = (rp_thread){tid, s};
  return 0;
}

static void tt_clear(rp_threads *t) {
  for (size_t i = 0; i < t->n; i++)
    free(t->v[i].state);
  t->n = 0;
}

static void tt_free(rp_threads *t) {
  tt_clear(t);
  free(t->v);
  memset(t, 0, sizeof *t);
}

static int tt_copy(rp_threads *dst, const rp_threads *src, size_t ss) {
  tt_clear(dst);
  for (size_t i = 0; i < src->n; i++)
    if (tt_set(dst, src->v[i].tid, src->v[i].state, ss))
      return -1;
  return 0;
}

/* A thread made by clone(CLONE_THREAD) before it first runs: listed from
 * position `from` (after the clone) to `to` (its first instruction) with
 * the registers it starts with (its first instruction's state before). */
typedef struct rp_birth {
  uint32_t tid;
  uint64_t from, to;
  uint8_t *state; /* NULL while its first instruction is not indexed */
} rp_birth;

typedef struct rp_checkpoint {
  uint64_t pos;
  size_t log_off; /* where record pos starts */
  uint32_t tid;
  uint8_t *state;
  rp_threads threads; /* the others */
  uint8_t *bloom;     /* RP_BLOOM bytes: this interval's filters */
} rp_checkpoint;

typedef struct rp_mapent {
  uint64_t pos, addr, size;
  uint8_t kind;
} rp_mapent;

/* A place in the log: the state at `pos` and where record pos starts. */
typedef struct rp_cursor {
  uint64_t pos;
  size_t off;
  uint32_t tid;
  uint32_t cp; /* the checkpoint the overlay is based on */
  uint8_t *state;
} rp_cursor;

struct tc_replay {
  const tc_format *fmt;
  tc_reader *rd;
  const tc_trace_info *info;
  const tc_arch *arch;
  uint32_t interval;
  uint64_t insns;
  char *truncated;
  int has_memory;
  uint64_t chunks_skipped; /* by runs past the index (chunk_may) */

  rp_map pages; /* pn -> rp_page */
  rp_page **page_list;
  size_t npages, cap_pages;
  rp_checkpoint *cps;
  size_t ncps, cap_cps;
  rp_mapent *maplog;
  size_t nmaplog, cap_maplog;
  rp_birth *births;
  size_t nbirths, cap_births;
  uint64_t *execs; /* positions after each execve that succeeded */
  size_t nexecs, cap_execs;

  /* the log: written to a file while opening (an index file, or an
   * unlinked temporary one) after RP_HDR bytes of header, then mapped */
  FILE *logf;
  uint8_t *log;
  size_t log_len;
  uint8_t *map; /* the file's mapping: header, log (an index: tables) */
  size_t map_len;
  uint64_t version_bytes;
  /* the index file */
  char *index_path;
  char *tmp_path; /* while it is built: its temporary name */
  bool loaded;    /* read from it: states, filters, page versions in map */
  int index_state;
  char *index_note;
  uint64_t id[3]; /* the trace's identity (an index file's) */
  /* A trace whose index says how many instructions it holds (tct's
   * footer) is indexed as far as it is asked (a seek, a run, idle time):
   * positions 0..built are; bo is the build's state (NULL: complete). */
  struct rp_open *bo;
  uint64_t total;
  uint64_t built;
  bool failed;
  void (*progress)(void *ctx, uint64_t insns);
  void *pctx;

  rp_threads open_threads; /* while opening: the threads not running */
  /* the position */
  rp_cursor at;
  rp_threads threads; /* the threads not running at the position */
  rp_map overlay;     /* pn -> RP_BUF bytes: pages changed since at.cp */
  /* A far position (far_seek): past the index, rebuilt from its chunk */
  char *path;
  tc_reader *far_rd;
  bool far;       /* the position is a far one */
  bool far_valid; /* far_pos's state and overlay are held */
  uint64_t far_pos, far_base;
  uint8_t *far_state;
  uint32_t far_tid;
  /* far_cur: the reader of the chunk being read (far_rd answers the
   * memory summaries, which move it). live: far_cur is just past INSN
   * far_pos (held in far_ev, its effects not yet applied), or at the end
   * (far_end); nomem: a run's scan that keeps no memory */
  tc_reader *far_cur;
  bool far_live, far_end, far_nomem;
  tc_event far_ev;
  uint8_t *far_next; /* the state after the record being read */
  uint32_t far_next_tid;
  /* The records read last with memory (far_step), to step back without
   * reading the chunk again: undo_n of them, the newest before
   * undo_head; far_rec: the one being read */
  struct rp_undo *undo;
  size_t undo_n, undo_head;
  struct rp_undo *far_rec;
  rp_map far_pages;  /* pn -> RP_BUF: memory at far_base */
  rp_map far_ov;     /* pn -> RP_FAR_BUF: what the chunk changed before */
  rp_mapent *far_ml; /* its maps and unmaps, in order */
  size_t nfar_ml, cap_far_ml;
};

/* --------------------------------------------------------------- varints */

typedef struct rp_buf {
  uint8_t *p;
  size_t n, cap;
} rp_buf;

static int buf_need(rp_buf *b, size_t more) {
  if (b->n + more <= b->cap)
    return 0;
  size_t cap = b->cap ? b->cap : 256;
  while (cap < b->n + more)
    cap *= 2;
  uint8_t *p = realloc(b->p, cap);
  if (!p)
    return -1;
  b->p = p;
  b->cap = cap;
  return 0;
}

static int put_uv(rp_buf *b, uint64_t v) {
  if (buf_need(b, 10))
    return -1;
  while (v >= 0x80) {
    b->p[b->n++] = (uint8_t)(v | 0x80);
    v >>= 7;
  }
  b->p[b->n++] = (uint8_t)v;
  return 0;
}

static int put_raw(rp_buf *b, const void *p, size_t n) {
  if (buf_need(b, n))
    return -1;
  memcpy(b->p + b->n, p, n);
  b->n += n;
  return 0;
}

/* Reads a varint from the log, not past end. */
static uint64_t get_uvb(const uint8_t **pp, const uint8_t *end) {
  const uint8_t *p = *pp;
  uint64_t v = 0;
  unsigned shift = 0;
  while (p < end) {
    uint8_t b = *p++;
    if (shift < 64)
      v |= (uint64_t)(b & 0x7f) << shift;
    shift += 7;
    if (!(b & 0x80))
      break;
  }
  *pp = p;
  return v;
}

/* ------------------------------------------------------------ known bits */

static void bits_set(uint8_t *known, size_t off, size_t n, bool on) {
  for (size_t i = off; i < off + n; i++) {
    if ((i & 7) == 0 && i + 8 <= off + n) {
      known[i >> 3] = on ? 0xff : 0;
      i += 7;
      continue;
    }
    if (on)
      known[i >> 3] |= (uint8_t)(1u << (i & 7));
    else
      known[i >> 3] &= (uint8_t) ~(1u << (i & 7));
  }
}

static inline bool bit_get(const uint8_t *known, size_t i) {
  return (known[i >> 3] >> (i & 7)) & 1;
}

/* ----------------------------------------------------------------- pages */

/* The page's latest version at or before checkpoint cp, or NULL. */
static const uint8_t *version_at(const rp_page *pg, uint32_t cp) {
  size_t lo = 0, hi = pg->nv;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (pg->v[mid].cp <= cp)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo ? pg->v[lo - 1].buf : NULL;
}

/* Files a new page in the map and the list of pages. -1 (out of memory):
 * a page the map did not take is freed; one it took stays the map's. */
static int add_page(tc_replay *r, rp_page *pg) {
  if (map_put(&r->pages, pg->pn, pg)) {
    free(pg);
    return -1;
  }
  if (r->npages == r->cap_pages) {
    size_t cap = r->cap_pages ? r->cap_pages * 2 : 256;
    rp_page **l = realloc(r->page_list, cap * sizeof *l);
    if (!l)
      return -1;
    r->page_list = l;
    r->cap_pages = cap;
  }
  r->page_list[r->npages++] = pg;
  return 0;
}

/* Opening: the page now, made if new. */
static uint8_t *open_page(tc_replay *r, uint64_t pn) {
  rp_page *pg = map_get(&r->pages, pn);
  if (!pg) {
    pg = calloc(1, sizeof *pg);
    if (!pg)
      return NULL;
    pg->pn = pn;
    if (add_page(r, pg) < 0)
      return NULL;
  }
  if (!pg->cur && !(pg->cur = calloc(1, RP_BUF)))
    return NULL;
  pg->dirty = true;
  return pg->cur;
}

/* At a position: the overlay's copy of the page, made from its version. */
static uint8_t *overlay_page(tc_replay *r, uint64_t pn) {
  uint8_t *b = map_get(&r->overlay, pn);
  if (b)
    return b;
  b = malloc(RP_BUF);
  if (!b)
    return NULL;
  const rp_page *pg = map_get(&r->pages, pn);
  const uint8_t *v = pg ? version_at(pg, r->at.cp) : NULL;
  if (v)
    memcpy(b, v, RP_BUF);
  else
    memset(b, 0, RP_BUF);
  if (map_put(&r->overlay, pn, b)) {
    free(b);
    return NULL;
  }
  return b;
}

typedef uint8_t *(*page_fn)(tc_replay *r, uint64_t pn);

static int mem_write(tc_replay *r, page_fn get, uint64_t addr,
                     const uint8_t *data, uint64_t size) {
  while (size) {
    uint64_t pn = addr / RP_PAGE;
    size_t off = (size_t)(addr % RP_PAGE);
    size_t n = RP_PAGE - off < size ? RP_PAGE - off : (size_t)size;
    uint8_t *b = get(r, pn);
    if (!b)
      return -1;
    if (data) {
      memcpy(b + off, data, n);
      data += n;
    } else
      memset(b + off, 0, n);
    bits_set(b + RP_PAGE, off, n, true);
    addr += n;
    size -= n;
  }
  return 0;
}

/* A load's bytes, where nothing is known yet. */
static int mem_fill(tc_replay *r, page_fn get, uint64_t addr,
                    const uint8_t *data, uint64_t size) {
  while (size) {
    uint64_t pn = addr / RP_PAGE;
    size_t off = (size_t)(addr % RP_PAGE);
    size_t n = RP_PAGE - off < size ? RP_PAGE - off : (size_t)size;
    uint8_t *b = get(r, pn);
    if (!b)
      return -1;
    for (size_t i = 0; i < n; i++)
      if (!bit_get(b + RP_PAGE, off + i)) {
        b[off + i] = data[i];
        bits_set(b + RP_PAGE, off + i, 1, true);
      }
    data += n;
    addr += n;
    size -= n;
  }
  return 0;
}

/* Forgets [addr, addr+size) in the pages that hold any of it. */
static int clear_one(tc_replay *r, page_fn get, const rp_page *pg,
                     uint64_t addr, uint64_t end) {
  uint64_t lo = pg->pn * RP_PAGE, hi = lo + RP_PAGE;
  if (addr > lo)
    lo = addr;
  if (end < hi)
    hi = end;
  if (lo >= hi)
    return 0;
  if (get == overlay_page && !map_get(&r->overlay, pg->pn) &&
      !version_at(pg, r->at.cp))
    return 0; /* nothing known there yet */
  if (get == open_page && !pg->cur)
    return 0;
  uint8_t *b = get(r, pg->pn);
  if (!b)
    return -1;
  bits_set(b + RP_PAGE, (size_t)(lo % RP_PAGE), (size_t)(hi - lo), false);
  return 0;
}

static int mem_clear(tc_replay *r, page_fn get, uint64_t addr, uint64_t size) {
  uint64_t end = addr + size < addr ? UINT64_MAX : addr + size;
  uint64_t first = addr / RP_PAGE, last = (end - 1) / RP_PAGE;
  if (!size)
    return 0;
  if (last - first < r->npages) {
    for (uint64_t pn = first; pn <= last; pn++) {
      const rp_page *pg = map_get(&r->pages, pn);
      if (pg && clear_one(r, get, pg, addr, end))
        return -1;
    }
  } else {
    for (size_t i = 0; i < r->npages; i++)
      if (clear_one(r, get, r->page_list[i], addr, end))
        return -1;
  }
  return 0;
}

/* ------------------------------------------------------------- the log */

/* Applies a record's register changes to state and passes its operations
 * to op (NULL: none); returns where the next record starts. */
typedef int (*op_fn)(void *ctx, int kind, uint64_t addr, uint64_t size,
                     const uint8_t *data);

/* The log is read within its bounds: one read from an index file may be
 * damaged (its tables are checked against their hash, the log is not); a
 * record that would run past the end ends the log there. state NULL: the
 * registers are skipped (a run that needs only the accesses and threads). */
static size_t apply_record(const tc_replay *r, size_t off, uint8_t *state,
                           uint32_t *tid, op_fn op, void *ctx) {
  if (off >= r->log_len)
    return r->log_len;
  const uint8_t *p = r->log + off, *end = r->log + r->log_len;
  const tc_arch *a = r->arch;
  uint64_t rlen = get_uvb(&p, end);
  if (rlen > (uint64_t)(end - p))
    return r->log_len;
  const uint8_t *rend = p + rlen;
  while (state && p < rend) {
    uint64_t reg = get_uvb(&p, rend);
    const tc_reg_info *ri = &a->regs[reg < a->nregs ? reg : 0];
    if (ri->size <= 8) {
      uint64_t x = get_uvb(&p, rend);
      uint8_t *dst = state + ri->offset;
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
      if (ri->size == 8) { /* byte b of x is byte b of the register */
        uint64_t v;
        memcpy(&v, dst, 8);
        v ^= x;
        memcpy(dst, &v, 8);
        continue;
      }
#endif
      for (unsigned b = 0; b < ri->size; b++)
        dst[b] ^= (uint8_t)(x >> (8 * b));
    } else {
      if ((size_t)(rend - p) < ri->size)
        return r->log_len;
      memcpy(state + ri->offset, p, ri->size);
      p += ri->size;
    }
  }
  p = rend;
  uint64_t nops = get_uvb(&p, end);
  for (uint64_t i = 0; i < nops && p < end; i++) {
    int kind = *p++;
    if (kind == OP_TID || kind == OP_GONE) {
      uint32_t t = (uint32_t)get_uvb(&p, end);
      if (kind == OP_TID)
        *tid = t;
      if (op)
        op(ctx, kind, t, 0, NULL);
      continue;
    }
    if (kind == OP_SAVE) {
      uint32_t t = (uint32_t)get_uvb(&p, end);
      if ((size_t)(end - p) < a->state_size)
        return r->log_len;
      if (op)
        op(ctx, kind, t, a->state_size, p);
      p += a->state_size;
      continue;
    }
    uint64_t addr = get_uvb(&p, end), size = get_uvb(&p, end);
    const uint8_t *data = NULL;
    if (kind == OP_WRITE || kind == OP_FILL) {
      if ((uint64_t)(end - p) < size)
        return r->log_len;
      data = p;
      p += size;
    }
    if (op)
      op(ctx, kind, addr, size, data);
  }
  return (size_t)(p - r->log);
}

/* ----------------------------------------------------------------- filters */

static inline size_t hash_bits(uint64_t v, unsigned bits) {
  return (size_t)((v * 0x9E3779B97F4A7C15ull) >> (64 - bits));
}

static inline void bloom_set(uint8_t *b, size_t bit) {
  b[bit >> 3] |= (uint8_t)(1u << (bit & 7));
}

static inline bool bloom_get(const uint8_t *b, size_t bit) {
  return (b[bit >> 3] >> (bit & 7)) & 1;
}

static void bloom_pc(uint8_t *b, uint64_t pc) {
  bloom_set(b, hash_bits(pc, RP_PC_BITS));
}

/* The lines of [addr, addr+size) in the store (kind OP_WRITE) or load
 * filter; a large access fills it. */
static void bloom_mem(uint8_t *b, int kind, uint64_t addr, uint64_t size) {
  uint8_t *f = b + (kind == OP_WRITE ? RP_BLOOM_W : RP_BLOOM_R);
  if (!size)
    return;
  if (size > 64 * 1024) {
    memset(f, 0xff, (1u << RP_LINE_BITS) / 8);
    return;
  }
  for (uint64_t l = addr >> 6; l <= (addr + size - 1) >> 6; l++)
    bloom_set(f, hash_bits(l, RP_LINE_BITS));
}

/* ---------------------------------------------------------------- opening */

enum { RP_BUILD_STEP = 1 << 16 }; /* instructions a run indexes at a time */

typedef struct rp_open {
  tc_replay *r;
  rp_buf rec;       /* the record being built (its operations) */
  rp_buf regs, hdr; /* its registers; its head (reused) */
  uint32_t nops;
  uint8_t *cur, *next; /* state at the position; state after it */
  uint8_t *after;      /* the instruction's own state_after */
  uint16_t *chg;       /* its changed registers (INSN regs[]) */
  uint32_t nchg;
  bool have_chg;
  bool have_next;
  uint32_t cur_tid, next_tid;
  bool started; /* INSN 0 seen */
  bool gone;    /* the running thread exited in this record */
  bool fill;    /* loads' values are knowledge (no map data) */
  bool saw_mem; /* an instruction had memory accesses */
  uint64_t pos; /* the instruction whose record is being built */
  int err;
} rp_open;

static int op_add(rp_open *o, int kind, uint64_t addr, uint64_t size,
                  const uint8_t *data) {
  if ((kind == OP_WRITE || kind == OP_READ) && o->r->ncps)
    bloom_mem(o->r->cps[o->r->ncps - 1].bloom, kind, addr, size);
  if (put_raw(&o->rec, (uint8_t[]){(uint8_t)kind}, 1) ||
      put_uv(&o->rec, addr) || put_uv(&o->rec, size) ||
      (data && put_raw(&o->rec, data, size)))
    return -1;
  o->nops++;
  return 0;
}

static int maplog_add(tc_replay *r, uint64_t pos, uint64_t addr, uint64_t size,
                      uint8_t kind) {
  if (r->nmaplog == r->cap_maplog) {
    size_t cap = r->cap_maplog ? r->cap_maplog * 2 : 64;
    rp_mapent *m = realloc(r->maplog, cap * sizeof *m);
    if (!m)
      return -1;
    r->maplog = m;
    r->cap_maplog = cap;
  }
  r->maplog[r->nmaplog++] = (rp_mapent){pos, addr, size, kind};
  return 0;
}

static int checkpoint(rp_open *o, uint64_t pos) {
  tc_replay *r = o->r;
  if (r->ncps == r->cap_cps) {
    size_t cap = r->cap_cps ? r->cap_cps * 2 : 64;
    rp_checkpoint *c = realloc(r->cps, cap * sizeof *c);
    if (!c)
      return -1;
    r->cps = c;
    r->cap_cps = cap;
  }
  rp_checkpoint *c = &r->cps[r->ncps];
  c->pos = pos;
  c->log_off = r->log_len;
  c->tid = o->cur_tid;
  memset(&c->threads, 0, sizeof c->threads);
  c->bloom = NULL;
  if (!(c->state = malloc(r->arch->state_size)) ||
      !(c->bloom = calloc(1, RP_BLOOM)))
    return -1;
  r->version_bytes += RP_BLOOM;
  if (tt_copy(&c->threads, &r->open_threads, r->arch->state_size))
    return -1;
  r->version_bytes += r->open_threads.n * r->arch->state_size;
  memcpy(c->state, o->cur, r->arch->state_size);
  r->version_bytes += r->arch->state_size;
  uint32_t idx = (uint32_t)r->ncps++;
  for (size_t i = 0; i < r->npages; i++) {
    rp_page *pg = r->page_list[i];
    if (!pg->dirty)
      continue;
    if (pg->nv == pg->capv) {
      uint32_t cap = pg->capv ? pg->capv * 2 : 2;
      rp_version *v = realloc(pg->v, cap * sizeof *v);
      if (!v)
        return -1;
      pg->v = v;
      pg->capv = cap;
    }
    uint8_t *b = malloc(RP_BUF);
    if (!b)
      return -1;
    memcpy(b, pg->cur, RP_BUF);
    pg->v[pg->nv++] = (rp_version){idx, b};
    pg->dirty = false;
    r->version_bytes += RP_BUF;
  }
  return 0;
}

/* Writes the record of instruction o->pos: the registers that differ
 * between o->cur and o->next, then its operations. */
static int finish_record(rp_open *o) {
  tc_replay *r = o->r;
  const tc_arch *a = r->arch;
  rp_buf *rg = &o->regs, *hdr = &o->hdr;
  rg->n = hdr->n = 0;
  if (r->ncps) { /* the pcs before and after it, for the run filters */
    uint8_t *b = r->cps[r->ncps - 1].bloom;
    bloom_pc(b, tc_state_get(a, o->cur, a->pc_reg));
    bloom_pc(b, tc_state_get(a, o->next, a->pc_reg));
  }
  /* The common case: the next state is this instruction's state_after,
   * which differs from its state_before in its regs[] only. */
  bool listed = o->have_chg && memcmp(o->next, o->after, a->state_size) == 0;
  uint32_t count = listed ? o->nchg : a->nregs;
  for (uint32_t k = 0; k < count; k++) {
    uint16_t i = listed ? o->chg[k] : (uint16_t)k;
    if (i >= a->nregs)
      continue;
    const tc_reg_info *ri = &a->regs[i];
    const uint8_t *x = o->cur + ri->offset, *y = o->next + ri->offset;
    if (memcmp(x, y, ri->size) == 0)
      continue;
    if (put_uv(rg, i))
      goto oom;
    if (ri->size <= 8) {
      uint64_t v = 0;
      for (unsigned b = 0; b < ri->size; b++)
        v |= (uint64_t)(x[b] ^ y[b]) << (8 * b);
      if (put_uv(rg, v))
        goto oom;
    } else if (put_raw(rg, y, ri->size))
      goto oom;
  }
  /* the registers' bytes first: a run that needs only the accesses skips
   * them */
  if (put_uv(hdr, rg->n) || put_raw(hdr, rg->p, rg->n))
    goto oom;
  if (o->next_tid != o->cur_tid) {
    /* the thread switched out keeps its state after its instruction */
    if (!o->gone && o->have_chg) {
      if (put_raw(&o->rec, (uint8_t[]){OP_SAVE}, 1) ||
          put_uv(&o->rec, o->cur_tid) ||
          put_raw(&o->rec, o->after, a->state_size) ||
          tt_set(&r->open_threads, o->cur_tid, o->after, a->state_size))
        goto oom;
      o->nops++;
    }
    tt_del(&r->open_threads, o->next_tid);
    if (put_raw(&o->rec, (uint8_t[]){OP_TID}, 1) ||
        put_uv(&o->rec, o->next_tid))
      goto oom;
    o->nops++;
  }
  o->gone = false;
  if (put_uv(hdr, o->nops))
    goto oom;
  if (fwrite(hdr->p, 1, hdr->n, r->logf) != hdr->n ||
      (o->rec.n && fwrite(o->rec.p, 1, o->rec.n, r->logf) != o->rec.n)) {
    return -2;
  }
  r->log_len += hdr->n + o->rec.n;
  o->rec.n = 0;
  o->nops = 0;
  memcpy(o->cur, o->next, a->state_size);
  o->cur_tid = o->next_tid;
  return 0;
oom:
  return -1;
}

/* One memory effect, at the position after the current instruction (or
 * the initial image before instruction 0). */
static int open_write(rp_open *o, uint64_t addr, uint64_t size,
                      const uint8_t *data) {
  if (o->started && op_add(o, OP_WRITE, addr, size, data))
    return -1;
  return mem_write(o->r, open_page, addr, data, size);
}

/* A MAP's data, page by page, to write(ctx, ...): only the pages that are
 * not all zero (the map itself made them zeros). 0, or write's -1. */
static int map_data_pages(const tc_map_event *m,
                          int (*write)(void *ctx, uint64_t addr, uint64_t size,
                                       const uint8_t *data),
                          void *ctx) {
  for (uint64_t off = 0; m->data && off < m->size;) {
    uint64_t n = RP_PAGE - (m->addr + off) % RP_PAGE;
    if (n > m->size - off)
      n = m->size - off;
    const uint8_t *d = m->data + off;
    if ((d[0] || memcmp(d, d + 1, (size_t)n - 1)) &&
        write(ctx, m->addr + off, n, d))
      return -1;
    off += n;
  }
  return 0;
}

static int open_write_cb(void *o, uint64_t addr, uint64_t size,
                         const uint8_t *data) {
  return open_write(o, addr, size, data);
}

static int open_clear(rp_open *o, uint64_t addr, uint64_t size) {
  if (o->started && op_add(o, OP_CLEAR, addr, size, NULL))
    return -1;
  return mem_clear(o->r, open_page, addr, size);
}

static int open_accesses(rp_open *o, uint32_t n, const tc_mem_access *m,
                         bool reads) {
  for (uint32_t i = 0; i < n; i++) {
    if (m[i].kind == TC_MEM_WRITE && m[i].after) {
      if (open_write(o, m[i].addr, m[i].size, m[i].after))
        return -1;
    } else if (reads && m[i].kind == TC_MEM_READ) {
      if (o->started && op_add(o, OP_READ, m[i].addr, m[i].size, NULL))
        return -1;
      if (o->fill && m[i].before &&
          ((o->started &&
            op_add(o, OP_FILL, m[i].addr, m[i].size, m[i].before)) ||
           mem_fill(o->r, open_page, m[i].addr, m[i].before, m[i].size)))
        return -1;
    }
  }
  return 0;
}

/* While opening: memory now, as far as it is known. 1 if all of it. */
static int open_read(tc_replay *r, uint64_t addr, size_t len, uint8_t *out) {
  for (size_t i = 0; i < len; i++) {
    const rp_page *pg = map_get(&r->pages, (addr + i) / RP_PAGE);
    size_t off = (size_t)((addr + i) % RP_PAGE);
    if (!pg || !pg->cur || !bit_get(pg->cur + RP_PAGE, off))
      return 0;
    out[i] = pg->cur[off];
  }
  return 1;
}

/* A clone's or clone3's flags (clone3: the first field of its struct
 * clone_args, in memory); 0 for any other call or where unknown. */
static uint64_t clone_flags(rp_open *o, const tc_syscall_event *e) {
  if (!e->name)
    return 0;
  if (strcmp(e->name, "clone") == 0)
    return e->args[0];
  uint8_t b[8];
  if (strcmp(e->name, "clone3") != 0 || !open_read(o->r, e->args[0], 8, b))
    return 0;
  uint64_t v = 0;
  for (int i = 0; i < 8; i++)
    v |= (uint64_t)b[o->r->arch->big_endian ? 7 - i : i] << (8 * i);
  return v;
}

static int open_event(rp_open *o, const tc_event *ev, tc_error *err) {
  tc_replay *r = o->r;
  size_t ss = r->arch->state_size;
  uint64_t effect_pos = o->started ? o->pos + 1 : 0;
  switch (ev->kind) {
  case TC_EV_INSN: {
    const tc_insn_event *e = &ev->u.insn;
    if (e->tid == TC_TID_BLOCK) {
      tc_error_set(err, "coverage blocks, not instructions: a coverage "
                        "trace cannot be replayed");
      return -1;
    }
    if (o->started) {
      memcpy(o->next, e->state_before, ss);
      o->next_tid = e->tid;
      int rc = finish_record(o);
      if (rc) {
        tc_error_set(err, rc == -2 ? "replay log: %s" : "out of memory",
                     strerror(errno));
        return -1;
      }
      o->pos++;
    } else {
      memcpy(o->cur, e->state_before, ss);
      o->cur_tid = e->tid;
      o->started = true;
      o->pos = 0;
    }
    if (o->pos % r->interval == 0 && checkpoint(o, o->pos))
      goto oom;
    memcpy(o->next, e->state_after, ss);
    memcpy(o->after, e->state_after, ss);
    o->nchg = e->nregs <= r->arch->nregs ? e->nregs : 0;
    o->have_chg = e->nregs <= r->arch->nregs;
    if (o->nchg)
      memcpy(o->chg, e->regs, o->nchg * sizeof *o->chg);
    o->next_tid = e->tid;
    o->have_next = true;
    for (size_t i = 0; i < r->nbirths; i++)
      if (!r->births[i].state && r->births[i].tid == e->tid) {
        if (!(r->births[i].state = malloc(ss)))
          goto oom;
        memcpy(r->births[i].state, e->state_before, ss);
        r->births[i].to = o->pos;
      }
    o->saw_mem |= e->nmem > 0;
    if (open_accesses(o, e->nmem, e->mem, true))
      goto oom;
    r->insns = o->pos + 1;
    return 0;
  }
  case TC_EV_KEYFRAME:
    if (o->started) {
      memcpy(o->next, ev->u.key.state, ss);
      o->next_tid = ev->u.key.tid;
    } else {
      memcpy(o->cur, ev->u.key.state, ss);
      o->cur_tid = ev->u.key.tid;
    }
    return 0;
  case TC_EV_SYSCALL:
    if (open_accesses(o, ev->u.sys.nmem, ev->u.sys.mem, false))
      goto oom;
    if (o->started && ev->u.sys.part == 0 && ev->u.sys.ret > 0 &&
        ev->u.sys.ret <= UINT32_MAX &&
        (clone_flags(o, &ev->u.sys) & 0x10000) /* CLONE_THREAD */) {
      if (r->nbirths == r->cap_births) {
        size_t cap = r->cap_births ? r->cap_births * 2 : 8;
        rp_birth *b = realloc(r->births, cap * sizeof *b);
        if (!b)
          goto oom;
        r->births = b;
        r->cap_births = cap;
      }
      r->births[r->nbirths++] =
          (rp_birth){(uint32_t)ev->u.sys.ret, o->pos + 1, UINT64_MAX, NULL};
    }
    if (o->started && ev->u.sys.part == 0 && ev->u.sys.ret == 0 &&
        ev->u.sys.name && strcmp(ev->u.sys.name, "execve") == 0) {
      /* a new program from the next position on */
      if (r->nexecs == r->cap_execs) {
        size_t cap = r->cap_execs ? r->cap_execs * 2 : 4;
        uint64_t *x = realloc(r->execs, cap * sizeof *x);
        if (!x)
          goto oom;
        r->execs = x;
        r->cap_execs = cap;
      }
      r->execs[r->nexecs++] = o->pos + 1;
    }
    if (o->started && ev->u.sys.part == 0 && ev->u.sys.name &&
        strcmp(ev->u.sys.name, "exit") == 0) {
      /* the thread ends (exit_group ends the recording) */
      if (put_raw(&o->rec, (uint8_t[]){OP_GONE}, 1) ||
          put_uv(&o->rec, ev->u.sys.tid))
        goto oom;
      o->nops++;
      if (ev->u.sys.tid == o->cur_tid)
        o->gone = true;
      tt_del(&r->open_threads, ev->u.sys.tid);
    }
    return 0;
  case TC_EV_SIGNAL:
    if (open_accesses(o, ev->u.sig.nmem, ev->u.sig.mem, false))
      goto oom;
    return 0;
  case TC_EV_MAP: {
    const tc_map_event *m = &ev->u.map;
    if (!m->size)
      return 0;
    /* A map is zeros (fresh pages) plus its data's pages that are not
     * all zero: only those are kept as pages. */
    if (maplog_add(r, effect_pos, m->addr, m->size, ML_ZERO) ||
        open_clear(o, m->addr, m->size))
      goto oom;
    if (map_data_pages(m, open_write_cb, o))
      goto oom;
    return 0;
  }
  case TC_EV_UNMAP:
    if (!ev->u.map.size)
      return 0;
    if (maplog_add(r, effect_pos, ev->u.map.addr, ev->u.map.size, ML_UNMAP) ||
        open_clear(o, ev->u.map.addr, ev->u.map.size))
      goto oom;
    return 0;
  default:
    return 0;
  }
oom:
  tc_error_set(err, "out of memory building the replay index");
  return -1;
}

/* ------------------------------------------------------------ index file */

/* An index file (tc_replay_opts.index_path): a header of RP_HDR bytes, the
 * log, then the tables (checkpoints with their states, threads and filters;
 * page versions; the map log), in this machine's byte order: a cache of
 * the server's own, checked against the trace it was made from. */
#define RP_HDR 4096u
#define RP_MAGIC "TCRPIDX1"
enum { RP_IDX_VERSION = 4 };

typedef struct rp_header {
  char magic[8];
  uint64_t version, layout, interval, arch_id, state_size, nregs;
  uint64_t trace_size, trace_mtime_ns, trace_hash; /* the trace's identity */
  uint64_t log_len, tables_len, tables_hash;
  uint64_t insns, has_memory, truncated_len;
  char truncated[1024];
} rp_header;

/* A fast hash of bytes (8 at a time). */
static uint64_t hash_bytes(uint64_t h, const uint8_t *p, size_t n) {
  h ^= n * 0x9E3779B97F4A7C15ull;
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t w;
    memcpy(&w, p + i, 8);
    h = (h ^ w) * 0xff51afd7ed558ccdull;
    h ^= h >> 32;
  }
  uint64_t w = 0;
  memcpy(&w, p + i, n - i);
  h = (h ^ w) * 0xc4ceb9fe1a85ec53ull;
  return h ^ (h >> 29);
}

/* The trace's identity: size, modification time, its first and last
 * 64 KiB. */
static int trace_id(const char *path, uint64_t id[3]) {
  int fd = open(path, O_RDONLY);
  if (fd < 0)
    return -1;
  struct stat st;
  uint8_t *b = malloc(1 << 17);
  if (!b || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    free(b);
    close(fd);
    return -1;
  }
  size_t half = 1 << 16, n1, n2 = 0;
  ssize_t k = pread(fd, b, half, 0);
  n1 = k > 0 ? (size_t)k : 0;
  if ((uint64_t)st.st_size > half) {
    k = pread(fd, b + n1, half, st.st_size - (off_t)half);
    n2 = k > 0 ? (size_t)k : 0;
  }
  close(fd);
  id[0] = (uint64_t)st.st_size;
  id[1] = (uint64_t)st.st_mtim.tv_sec * 1000000000ull +
          (uint64_t)st.st_mtim.tv_nsec;
  id[2] = hash_bytes(0, b, n1 + n2);
  free(b);
  return 0;
}

static uint64_t rp_layout(void) { return (uint64_t)RP_BLOOM << 32 | RP_BUF; }

/* The note "index PATH: WHAT WHY". */
static void set_note(tc_replay *r, const char *what, const char *why) {
  char msg[1024];
  snprintf(msg, sizeof msg, "index %s: %s%s", r->index_path, what, why);
  free(r->index_note);
  r->index_note = strdup(msg);
}

/* The log's file: the index file's temporary name beside it, else (none,
 * or it cannot be written there) an unlinked one in $TMPDIR; its header
 * space written. */
static int make_log_file(tc_replay *r, bool keep, tc_error *err) {
  int fd = -1;
  if (keep && r->index_path) {
    size_t n = strlen(r->index_path) + 8;
    if ((r->tmp_path = malloc(n))) {
      snprintf(r->tmp_path, n, "%s.XXXXXX", r->index_path);
      fd = mkstemp(r->tmp_path);
      if (fd < 0) {
        set_note(r, "not written: ", strerror(errno));
        free(r->tmp_path);
        r->tmp_path = NULL;
      }
    }
  }
  if (fd < 0) {
    const char *dir = getenv("TMPDIR");
    char path[4096];
    snprintf(path, sizeof path, "%s/tracecorn-replay-XXXXXX",
             dir && *dir ? dir : "/tmp");
    fd = mkstemp(path);
    if (fd < 0) {
      tc_error_set(err, "replay log: %s: %s", path, strerror(errno));
      return -1;
    }
    unlink(path);
  }
  r->logf = fdopen(fd, "w+b");
  if (!r->logf) {
    close(fd);
    tc_error_set(err, "replay log: %s", strerror(errno));
    return -1;
  }
  static const uint8_t zero[RP_HDR];
  if (fwrite(zero, 1, RP_HDR, r->logf) != RP_HDR) {
    tc_error_set(err, "replay log: %s", strerror(errno));
    return -1;
  }
  return 0;
}

static int put_u64(rp_buf *b, uint64_t v) { return put_raw(b, &v, 8); }
static int put_u32(rp_buf *b, uint32_t v) { return put_raw(b, &v, 4); }

/* Writes the tables and the header after the log, and renames the file
 * to the index path. 0, or -1 (the file is removed; the note says why). */
static int save_index(tc_replay *r, const uint64_t id[3]) {
  size_t ss = r->arch->state_size;
  rp_buf b = {0};
  int bad = put_u64(&b, r->ncps);
  for (size_t i = 0; i < r->ncps && !bad; i++) {
    const rp_checkpoint *c = &r->cps[i];
    bad |= put_u64(&b, c->pos) || put_u64(&b, c->log_off) ||
           put_u32(&b, c->tid) || put_u32(&b, (uint32_t)c->threads.n) ||
           put_raw(&b, c->state, ss) || put_raw(&b, c->bloom, RP_BLOOM);
    for (size_t k = 0; k < c->threads.n && !bad; k++)
      bad |= put_u32(&b, c->threads.v[k].tid) ||
             put_raw(&b, c->threads.v[k].state, ss);
  }
  bad |= put_u64(&b, r->npages);
  for (size_t i = 0; i < r->npages && !bad; i++) {
    const rp_page *pg = r->page_list[i];
    bad |= put_u64(&b, pg->pn) || put_u32(&b, pg->nv);
    for (uint32_t k = 0; k < pg->nv && !bad; k++)
      bad |= put_u32(&b, pg->v[k].cp) || put_raw(&b, pg->v[k].buf, RP_BUF);
  }
  bad |= put_u64(&b, r->nmaplog);
  for (size_t i = 0; i < r->nmaplog && !bad; i++)
    bad |= put_u64(&b, r->maplog[i].pos) || put_u64(&b, r->maplog[i].addr) ||
           put_u64(&b, r->maplog[i].size) || put_u64(&b, r->maplog[i].kind);
  size_t nb = 0; /* the births whose first instruction came */
  for (size_t i = 0; i < r->nbirths; i++)
    nb += r->births[i].state != NULL;
  bad |= put_u64(&b, nb);
  for (size_t i = 0; i < r->nbirths && !bad; i++)
    if (r->births[i].state)
      bad |= put_u32(&b, r->births[i].tid) || put_u64(&b, r->births[i].from) ||
             put_u64(&b, r->births[i].to) ||
             put_raw(&b, r->births[i].state, ss);
  bad |= put_u64(&b, r->nexecs);
  for (size_t i = 0; i < r->nexecs && !bad; i++)
    bad |= put_u64(&b, r->execs[i]);
  bad |= put_u64(&b, r->version_bytes);
  rp_header h;
  memset(&h, 0, sizeof h);
  memcpy(h.magic, RP_MAGIC, 8);
  h.version = RP_IDX_VERSION;
  h.layout = rp_layout();
  h.interval = r->interval;
  h.arch_id = (uint64_t)r->arch->id;
  h.state_size = ss;
  h.nregs = r->arch->nregs;
  h.trace_size = id[0];
  h.trace_mtime_ns = id[1];
  h.trace_hash = id[2];
  h.log_len = r->log_len;
  h.tables_len = b.n;
  h.tables_hash = bad ? 0 : hash_bytes(0, b.p, b.n);
  h.insns = r->insns;
  h.has_memory = (uint64_t)r->has_memory;
  if (r->truncated) {
    snprintf(h.truncated, sizeof h.truncated, "%s", r->truncated);
    h.truncated_len = strlen(h.truncated);
  }
  int fd = fileno(r->logf);
  if (bad || fwrite(b.p, 1, b.n, r->logf) != b.n || fflush(r->logf) != 0 ||
      pwrite(fd, &h, sizeof h, 0) != (ssize_t)sizeof h ||
      rename(r->tmp_path, r->index_path) != 0) {
    set_note(r, "not written: ", bad ? "out of memory" : strerror(errno));
    unlink(r->tmp_path);
    free(b.p);
    return -1;
  }
  free(b.p);
  return 0;
}

/* Reading the tables: take(n) bytes, NULL past their end. */
typedef struct rp_in {
  const uint8_t *p, *end;
} rp_in;

static const uint8_t *take(rp_in *in, uint64_t n) {
  if ((uint64_t)(in->end - in->p) < n)
    return NULL;
  const uint8_t *p = in->p;
  in->p += n;
  return p;
}

static bool take_u64(rp_in *in, uint64_t *v) {
  const uint8_t *p = take(in, 8);
  if (p)
    memcpy(v, p, 8);
  return p != NULL;
}

static bool take_u32(rp_in *in, uint32_t *v) {
  const uint8_t *p = take(in, 4);
  if (p)
    memcpy(v, p, 4);
  return p != NULL;
}

static void free_index(tc_replay *r);

/* Reads the index file made for this trace. 0 read; 1 not usable (the
 * note says why where it is not simply absent: the caller builds it). */
static int load_index(tc_replay *r, const uint64_t id[3]) {
  const char *why = "not an index file";
  int fd = open(r->index_path, O_RDONLY);
  if (fd < 0) {
    if (errno != ENOENT)
      set_note(r, "not read: ", strerror(errno));
    return 1;
  }
  struct stat st;
  rp_header h;
  size_t ss = r->arch->state_size;
  if (fstat(fd, &st) != 0 || pread(fd, &h, sizeof h, 0) != sizeof h ||
      memcmp(h.magic, RP_MAGIC, 8) != 0)
    goto no;
  why = "made for another trace, interval or version: rebuilt";
  if (h.version != RP_IDX_VERSION || h.layout != rp_layout() ||
      h.trace_size != id[0] || h.trace_mtime_ns != id[1] ||
      h.trace_hash != id[2] || h.interval != r->interval ||
      h.arch_id != (uint64_t)r->arch->id || h.state_size != ss ||
      h.nregs != r->arch->nregs)
    goto no;
  why = "damaged: rebuilt";
  if (h.log_len > (uint64_t)st.st_size || h.tables_len > (uint64_t)st.st_size ||
      (uint64_t)st.st_size != RP_HDR + h.log_len + h.tables_len ||
      h.truncated_len >= sizeof h.truncated)
    goto no;
  void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
  if (m == MAP_FAILED) {
    why = strerror(errno);
    goto no;
  }
  close(fd);
  fd = -1;
  r->map = m;
  r->map_len = (size_t)st.st_size;
  r->log = r->map + RP_HDR;
  r->log_len = (size_t)h.log_len;
  r->loaded = true;
  rp_in in = {r->log + r->log_len, r->log + r->log_len + h.tables_len};
  if (hash_bytes(0, in.p, (size_t)h.tables_len) != h.tables_hash)
    goto bad;
  uint64_t n;
  if (!take_u64(&in, &n) || n == 0 ||
      n > (uint64_t)(in.end - in.p) / (24 + ss + RP_BLOOM) ||
      !(r->cps = calloc((size_t)n, sizeof *r->cps)))
    goto bad;
  r->cap_cps = (size_t)n;
  for (uint64_t i = 0; i < n; i++) {
    rp_checkpoint *c = &r->cps[i];
    uint32_t nt;
    uint64_t off;
    if (!take_u64(&in, &c->pos) || !take_u64(&in, &off) ||
        !take_u32(&in, &c->tid) || !take_u32(&in, &nt) ||
        !(c->state = (uint8_t *)take(&in, ss)) ||
        !(c->bloom = (uint8_t *)take(&in, RP_BLOOM)))
      goto bad;
    r->ncps = (size_t)i + 1;
    c->log_off = (size_t)off;
    if (c->log_off > r->log_len || c->pos > h.insns ||
        (i == 0 ? c->pos != 0
                : c->pos <= c[-1].pos || c->log_off < c[-1].log_off))
      goto bad;
    for (uint32_t k = 0; k < nt; k++) {
      uint32_t tid;
      const uint8_t *s;
      if (!take_u32(&in, &tid) || !(s = take(&in, ss)) ||
          tt_set(&c->threads, tid, s, ss))
        goto bad;
    }
  }
  if (!take_u64(&in, &n) || n > (uint64_t)(in.end - in.p) / 12)
    goto bad;
  for (uint64_t i = 0; i < n; i++) {
    uint64_t pn;
    uint32_t nv;
    rp_page *pg = calloc(1, sizeof *pg);
    if (!pg || !take_u64(&in, &pn) || !take_u32(&in, &nv) ||
        nv > (uint64_t)(in.end - in.p) / (4 + RP_BUF) ||
        map_get(&r->pages, pn)) {
      free(pg);
      goto bad;
    }
    pg->pn = pn;
    if (add_page(r, pg) < 0)
      goto bad;
    if (nv && !(pg->v = calloc(nv, sizeof *pg->v)))
      goto bad;
    pg->capv = nv;
    for (uint32_t k = 0; k < nv; k++) {
      rp_version *v = &pg->v[k];
      if (!take_u32(&in, &v->cp) || v->cp >= r->ncps ||
          (k && v->cp <= v[-1].cp) || !(v->buf = (uint8_t *)take(&in, RP_BUF)))
        goto bad;
      pg->nv = k + 1;
    }
  }
  if (!take_u64(&in, &n) || n > (uint64_t)(in.end - in.p) / 32 ||
      (n && !(r->maplog = calloc((size_t)n, sizeof *r->maplog))))
    goto bad;
  r->nmaplog = r->cap_maplog = (size_t)n;
  for (uint64_t i = 0; i < n; i++) {
    rp_mapent *e = &r->maplog[i];
    uint64_t kind;
    if (!take_u64(&in, &e->pos) || !take_u64(&in, &e->addr) ||
        !take_u64(&in, &e->size) || !take_u64(&in, &kind) ||
        (kind != ML_ZERO && kind != ML_UNMAP))
      goto bad;
    e->kind = (uint8_t)kind;
  }
  if (!take_u64(&in, &n) || n > (uint64_t)(in.end - in.p) / (20 + ss) ||
      (n && !(r->births = calloc((size_t)n, sizeof *r->births))))
    goto bad;
  r->cap_births = (size_t)n;
  for (uint64_t i = 0; i < n; i++) {
    rp_birth *bi = &r->births[i];
    const uint8_t *s;
    if (!take_u32(&in, &bi->tid) || !take_u64(&in, &bi->from) ||
        !take_u64(&in, &bi->to) || !(s = take(&in, ss)) ||
        !(bi->state = malloc(ss)))
      goto bad;
    memcpy(bi->state, s, ss);
    r->nbirths = (size_t)i + 1;
  }
  if (!take_u64(&in, &n) || n > (uint64_t)(in.end - in.p) / 8 ||
      (n && !(r->execs = calloc((size_t)n, sizeof *r->execs))))
    goto bad;
  r->cap_execs = (size_t)n;
  for (uint64_t i = 0; i < n; i++) {
    if (!take_u64(&in, &r->execs[i]) || r->execs[i] > h.insns ||
        (i && r->execs[i] <= r->execs[i - 1]))
      goto bad;
    r->nexecs = (size_t)i + 1;
  }
  if (!take_u64(&in, &r->version_bytes) || in.p != in.end)
    goto bad;
  r->insns = h.insns;
  r->has_memory = h.has_memory != 0;
  if (h.truncated_len) {
    h.truncated[h.truncated_len] = 0;
    r->truncated = strdup(h.truncated);
  }
  return 0;
bad:
  free_index(r);
  why = "damaged: rebuilt";
no:
  if (fd >= 0)
    close(fd);
  set_note(r, why, "");
  return 1;
}

tc_replay *tc_replay_open(const char *path, const tc_format *fmt,
                          uint32_t interval, tc_error *err) {
  tc_replay_opts o = {.interval = interval};
  return tc_replay_open_opts(path, fmt, &o, err);
}

tc_replay *tc_replay_open_progress(const char *path, const tc_format *fmt,
                                   uint32_t interval,
                                   void (*progress)(void *ctx, uint64_t insns),
                                   void *ctx, tc_error *err) {
  tc_replay_opts o = {.interval = interval, .progress = progress, .ctx = ctx};
  return tc_replay_open_opts(path, fmt, &o, err);
}

int tc_replay_index_state(const tc_replay *r) { return r->index_state; }
const char *tc_replay_index_note(const tc_replay *r) { return r->index_note; }

static void open_free(rp_open *o) {
  if (!o)
    return;
  free(o->cur);
  free(o->next);
  free(o->after);
  free(o->chg);
  free(o->rec.p);
  free(o->regs.p);
  free(o->hdr.p);
  free(o);
}

/* Maps the log as far as it is written (a larger mapping while it grows:
 * the bytes past the file's end are never read). */
static int map_log(tc_replay *r, tc_error *err) {
  if (fflush(r->logf) != 0) {
    tc_error_set(err, "replay log: %s", strerror(errno));
    return -1;
  }
  size_t need = RP_HDR + r->log_len;
  if (need <= r->map_len)
    return 0;
  size_t cap = need;
  if (r->bo) {
    cap = r->map_len ? r->map_len : (size_t)64 << 20;
    while (cap < need)
      cap *= 2;
  }
  if (r->map)
    munmap(r->map, r->map_len);
  r->map = r->log = NULL;
  r->map_len = 0;
  void *m = mmap(NULL, cap, PROT_READ, MAP_SHARED, fileno(r->logf), 0);
  if (m == MAP_FAILED) {
    tc_error_set(err, "replay log: mmap: %s", strerror(errno));
    return -1;
  }
  r->map = m;
  r->map_len = cap;
  r->log = r->map + RP_HDR;
  return 0;
}

/* The trace has been read to its end: the last record, the index file. */
static int build_finish(tc_replay *r, tc_error *err) {
  rp_open *o = r->bo;
  /* a reader that does not say so (tenet) but gave memory accesses */
  r->has_memory = r->info->has_memory || o->saw_mem;
  if (o->started) {
    /* the last record: to the state after the last instruction */
    int rc = finish_record(o);
    if (rc) {
      tc_error_set(err, rc == -2 ? "replay log: %s" : "out of memory",
                   strerror(errno));
      return -1;
    }
  } else if (checkpoint(o, 0)) {
    tc_error_set(err, "out of memory");
    return -1;
  }
  for (size_t i = 0; i < r->npages; i++) {
    free(r->page_list[i]->cur);
    r->page_list[i]->cur = NULL;
  }
  open_free(o);
  r->bo = NULL;
  r->built = r->insns;
  if (map_log(r, err))
    return -1;
  if (r->tmp_path) {
    if (save_index(r, r->id) == 0)
      r->index_state = TC_REPLAY_INDEX_SAVED;
    free(r->tmp_path);
    r->tmp_path = NULL;
  }
  fclose(r->logf); /* the mapping stays */
  r->logf = NULL;
  return 0;
}

/* Reads the trace on until position pos is indexed, or to its end. */
static int build_to(tc_replay *r, uint64_t pos, tc_error *err) {
  rp_open *o = r->bo;
  if (!o)
    return 0;
  if (r->failed) {
    tc_error_set(err, "the replay index could not be built");
    return -1;
  }
  tc_event ev;
  tc_error rerr = {{0}};
  bool end = false;
  while (!(o->started && o->pos >= pos)) {
    int rc = r->fmt->next_event(r->rd, &ev, &rerr);
    if (rc == 0 || ev.kind == TC_EV_EXIT) {
      end = true;
      break;
    }
    if (rc < 0) {
      r->truncated = strdup(rerr.msg[0] ? rerr.msg : "read error");
      end = true;
      break;
    }
    if (r->progress && ev.kind == TC_EV_INSN &&
        (ev.u.insn.index & 0xfffff) == 0)
      r->progress(r->pctx, ev.u.insn.index);
    if (open_event(o, &ev, err) < 0) {
      r->failed = true;
      return -1;
    }
  }
  int rc = end ? build_finish(r, err) : map_log(r, err);
  if (rc)
    r->failed = true;
  else if (!end)
    r->built = o->pos;
  return rc;
}

int tc_replay_build(tc_replay *r, uint64_t insns, tc_error *err) {
  if (!r->bo)
    return 0;
  uint64_t to = r->built + insns < r->built ? UINT64_MAX : r->built + insns;
  if (build_to(r, to, err))
    return -1;
  return r->bo != NULL;
}

uint64_t tc_replay_indexed(const tc_replay *r) { return r->built; }

tc_replay *tc_replay_open_opts(const char *path, const tc_format *fmt,
                               const tc_replay_opts *opts, tc_error *err) {
  if (!fmt && !(fmt = tc_format_detect(path, err)))
    return NULL;
  if (!fmt->open_reader) {
    tc_error_set(err, "%s: the %s format has no reader", path, fmt->name);
    return NULL;
  }
  tc_replay *r = calloc(1, sizeof *r);
  if (!r) {
    tc_error_set(err, "out of memory");
    return NULL;
  }
  r->fmt = fmt;
  r->interval = opts->interval ? opts->interval : TC_REPLAY_INTERVAL;
  r->progress = opts->progress;
  r->pctx = opts->ctx;
  if (!(r->rd = fmt->open_reader(path, err))) {
    free(r);
    return NULL;
  }
  r->info = fmt->reader_info(r->rd);
  r->arch = r->info->arch;
  if (!r->arch) {
    tc_error_set(err, "%s: the trace names no arch", path);
    tc_replay_free(r);
    return NULL;
  }
  r->has_memory = r->info->has_memory;
  size_t ss = r->arch->state_size;
  if ((opts->index_path && !(r->index_path = strdup(opts->index_path))) ||
      !(r->path = strdup(path))) {
    tc_error_set(err, "out of memory");
    goto fail;
  }
  bool have_id = r->index_path && trace_id(path, r->id) == 0;
  if (have_id && load_index(r, r->id) == 0) {
    r->index_state = TC_REPLAY_INDEX_READ;
    r->built = r->insns;
  } else {
    rp_open *o = r->bo = calloc(1, sizeof *o);
    if (!o) {
      tc_error_set(err, "out of memory");
      goto fail;
    }
    *o = (rp_open){.r = r, .fill = !(fmt->caps & TC_CAP_MAP_DATA)};
    o->cur = calloc(1, ss);
    o->next = calloc(1, ss);
    o->after = calloc(1, ss);
    o->chg = calloc(r->arch->nregs + 1u, sizeof *o->chg);
    if (!o->cur || !o->next || !o->after || !o->chg) {
      tc_error_set(err, "out of memory");
      goto fail;
    }
    if (make_log_file(r, have_id, err))
      goto fail;
    if (r->info->initial_state)
      memcpy(o->cur, r->info->initial_state, ss);
    o->cur_tid = r->info->pid;
    /* the trace's own index says how long it is: build as asked */
    tc_trace_summary sum;
    tc_trace_summary_init(&sum);
    tc_error serr = {{0}};
    if (!opts->eager && fmt->summary && fmt->summary(r->rd, &sum, &serr) == 1 &&
        sum.insns)
      r->total = sum.insns;
    if (build_to(r, r->total ? 0 : UINT64_MAX, err))
      goto fail;
  }
  r->at.state = malloc(ss);
  if (!r->at.state) {
    tc_error_set(err, "out of memory");
    goto fail;
  }
  r->at.pos = UINT64_MAX;
  if (tc_replay_seek(r, 0, err))
    goto fail;
  return r;
fail:
  tc_replay_free(r);
  return NULL;
}

/* Forgets the index (a failed read of an index file; tc_replay_free). */
static void free_index(tc_replay *r) {
  for (size_t i = 0; i < r->npages; i++) {
    rp_page *pg = r->page_list[i];
    for (uint32_t k = 0; k < pg->nv && !r->loaded; k++)
      free(pg->v[k].buf);
    free(pg->v);
    free(pg->cur);
    free(pg);
  }
  free(r->page_list);
  r->page_list = NULL;
  r->npages = r->cap_pages = 0;
  r->pages.n = 0; /* its values were freed above */
  free(r->pages.keys);
  free(r->pages.vals);
  memset(&r->pages, 0, sizeof r->pages);
  for (size_t i = 0; i < r->ncps; i++) {
    if (!r->loaded) {
      free(r->cps[i].state);
      free(r->cps[i].bloom);
    }
    tt_free(&r->cps[i].threads);
  }
  free(r->cps);
  r->cps = NULL;
  r->ncps = r->cap_cps = 0;
  free(r->maplog);
  r->maplog = NULL;
  r->nmaplog = r->cap_maplog = 0;
  for (size_t i = 0; i < r->nbirths; i++)
    free(r->births[i].state);
  free(r->births);
  r->births = NULL;
  r->nbirths = r->cap_births = 0;
  free(r->execs);
  r->execs = NULL;
  r->nexecs = r->cap_execs = 0;
  if (r->map)
    munmap(r->map, r->map_len);
  r->map = r->log = NULL;
  r->map_len = r->log_len = 0;
  r->version_bytes = 0;
  r->loaded = false;
}

static void undo_free(tc_replay *r);

void tc_replay_free(tc_replay *r) {
  if (!r)
    return;
  free_index(r);
  tt_free(&r->open_threads);
  tt_free(&r->threads);
  map_free(&r->overlay);
  if (r->logf)
    fclose(r->logf);
  if (r->tmp_path) {
    unlink(r->tmp_path); /* an index file left unfinished */
    free(r->tmp_path);
  }
  free(r->index_note);
  free(r->index_path);
  free(r->path);
  if (r->far_rd)
    r->fmt->close_reader(r->far_rd);
  if (r->far_cur)
    r->fmt->close_reader(r->far_cur);
  free(r->far_state);
  free(r->far_next);
  undo_free(r);
  map_free(&r->far_pages);
  map_free(&r->far_ov);
  free(r->far_ml);
  open_free(r->bo);
  free(r->at.state);
  free(r->truncated);
  if (r->rd)
    r->fmt->close_reader(r->rd);
  free(r);
}

/* -------------------------------------------------------------- queries */

const tc_trace_info *tc_replay_info(const tc_replay *r) { return r->info; }
const tc_format *tc_replay_format(const tc_replay *r) { return r->fmt; }
const tc_arch *tc_replay_arch(const tc_replay *r) { return r->arch; }
uint64_t tc_replay_insns(const tc_replay *r) {
  return r->bo ? r->total : r->insns;
}
const char *tc_replay_truncated(const tc_replay *r) { return r->truncated; }
int tc_replay_has_memory(const tc_replay *r) { return r->has_memory; }
uint64_t tc_replay_pos(const tc_replay *r) { return r->at.pos; }
const uint8_t *tc_replay_state(const tc_replay *r) { return r->at.state; }
uint32_t tc_replay_tid(const tc_replay *r) { return r->at.tid; }

/* The checkpoint at or before pos. */
static uint32_t cp_for(const tc_replay *r, uint64_t pos) {
  size_t lo = 0, hi = r->ncps;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (r->cps[mid].pos <= pos)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo ? (uint32_t)(lo - 1) : 0;
}

static void cursor_at_cp(const tc_replay *r, rp_cursor *c, uint32_t cp) {
  c->cp = cp;
  c->pos = r->cps[cp].pos;
  c->off = r->cps[cp].log_off;
  c->tid = r->cps[cp].tid;
  memcpy(c->state, r->cps[cp].state, r->arch->state_size);
}

static int overlay_op(void *ctx, int kind, uint64_t addr, uint64_t size,
                      const uint8_t *data) {
  tc_replay *r = ctx;
  if (kind == OP_WRITE)
    return mem_write(r, overlay_page, addr, data, size);
  if (kind == OP_FILL)
    return mem_fill(r, overlay_page, addr, data, size);
  if (kind == OP_CLEAR)
    return mem_clear(r, overlay_page, addr, size);
  if (kind == OP_SAVE)
    return tt_set(&r->threads, (uint32_t)addr, data, r->arch->state_size);
  if (kind == OP_TID || kind == OP_GONE)
    tt_del(&r->threads, (uint32_t)addr);
  return 0;
}

/* One instruction forwards, memory included. */
static void step_at(tc_replay *r) {
  r->at.off =
      apply_record(r, r->at.off, r->at.state, &r->at.tid, overlay_op, r);
  r->at.pos++;
  if (r->at.cp + 1 < r->ncps && r->cps[r->at.cp + 1].pos == r->at.pos) {
    /* the next checkpoint's pages hold all of it */
    r->at.cp++;
    map_clear(&r->overlay);
  }
}

/* Goes to pos through the index (indexing up to it first). */
static int seek_index(tc_replay *r, uint64_t pos, tc_error *err) {
  if (pos > r->built && pos <= tc_replay_insns(r) && build_to(r, pos, err))
    return -1;
  if (pos > r->built) {
    tc_error_set(err, "position %llu is past the end (%llu instructions)",
                 (unsigned long long)pos,
                 (unsigned long long)tc_replay_insns(r));
    return -1;
  }
  if (pos == r->at.pos)
    return 0;
  uint32_t cp = cp_for(r, pos);
  if (r->at.pos == UINT64_MAX || pos < r->at.pos || cp != r->at.cp) {
    cursor_at_cp(r, &r->at, cp);
    map_clear(&r->overlay);
    if (tt_copy(&r->threads, &r->cps[cp].threads, r->arch->state_size)) {
      tc_error_set(err, "out of memory");
      r->at.pos = UINT64_MAX;
      return -1;
    }
  }
  while (r->at.pos < pos)
    step_at(r);
  /* a thread cloned before pos whose first instruction is not indexed
   * yet: index on to it (its registers) */
  for (size_t i = 0; i < r->nbirths && r->bo; i++)
    if (!r->births[i].state && r->births[i].from <= pos) {
      if (build_to(r, r->built + RP_BUILD_STEP, err))
        return -1;
      i = (size_t)-1; /* again */
    }
  return 0;
}

/* The stops a run looks for in a record's operations. */
typedef struct rp_scan {
  const tc_replay_stops *s;
  bool hit;
  tc_replay_hit h;
} rp_scan;

static int scan_op(void *ctx, int kind, uint64_t addr, uint64_t size,
                   const uint8_t *data) {
  (void)data;
  rp_scan *sc = ctx;
  if (sc->hit || (kind != OP_WRITE && kind != OP_READ) || !size)
    return 0;
  int k = kind == OP_WRITE ? TC_MEM_WRITE : TC_MEM_READ;
  for (size_t i = 0; i < sc->s->nwatches; i++) {
    const tc_replay_watch *w = &sc->s->watches[i];
    if (!(w->kinds & k) || !w->len)
      continue;
    uint64_t lo = addr > w->addr ? addr : w->addr;
    uint64_t e1 = addr + size < addr ? UINT64_MAX : addr + size;
    uint64_t e2 = w->addr + w->len < w->addr ? UINT64_MAX : w->addr + w->len;
    if (lo < (e1 < e2 ? e1 : e2)) {
      sc->hit = true;
      sc->h = (tc_replay_hit){
          .why = TC_REPLAY_WATCH, .index = i, .addr = lo, .kind = k};
      return 0;
    }
  }
  return 0;
}

/* ------------------------------------------------------------ far seeks */

/* A position past the index, in a chunk of a trace that can rebuild
 * memory at the chunk's start (tct's chunk memory summaries,
 * fmt->mem_base): the seek reads the chunk's events up to it with a
 * reader of its own (registers: the INSN's state_before; memory: the
 * chunk's stores, maps and unmaps before it over the pages at the chunk's
 * start, asked of the format page by page as they are read). No index is
 * built: a run or step from there first indexes up to it (far_settle). */

#define RP_FAR_BUF (RP_BUF + RP_KNOWN) /* bytes, known bits, touched bits */
#define RP_FAR_MIN (1u << 21)

static uint8_t *far_page(tc_replay *r, uint64_t pn) {
  uint8_t *b = map_get(&r->far_ov, pn);
  if (b)
    return b;
  if (!(b = calloc(1, RP_FAR_BUF)))
    return NULL;
  if (map_put(&r->far_ov, pn, b)) {
    free(b);
    return NULL;
  }
  return b;
}

static int far_write(tc_replay *r, uint64_t addr, uint64_t size,
                     const uint8_t *data) {
  while (size) {
    size_t off = (size_t)(addr % RP_PAGE);
    size_t n = RP_PAGE - off < size ? RP_PAGE - off : (size_t)size;
    uint8_t *b = far_page(r, addr / RP_PAGE);
    if (!b)
      return -1;
    memcpy(b + off, data, n);
    bits_set(b + RP_PAGE, off, n, true);
    bits_set(b + RP_BUF, off, n, true);
    addr += n, data += n, size -= n;
  }
  return 0;
}

static void far_untouch(uint8_t *b, uint64_t pn, uint64_t addr, uint64_t end) {
  uint64_t lo = pn * RP_PAGE, hi = lo + RP_PAGE;
  if (addr > lo)
    lo = addr;
  if (end < hi)
    hi = end;
  if (lo < hi)
    bits_set(b + RP_BUF, (size_t)(lo % RP_PAGE), (size_t)(hi - lo), false);
}

/* A map (kind ML_ZERO) or unmap: later reads of the range see it, not
 * the stores before it. */
static int far_map(tc_replay *r, uint64_t addr, uint64_t size, uint8_t kind) {
  if (r->nfar_ml == r->cap_far_ml) {
    size_t cap = r->cap_far_ml ? r->cap_far_ml * 2 : 16;
    rp_mapent *m = realloc(r->far_ml, cap * sizeof *m);
    if (!m)
      return -1;
    r->far_ml = m;
    r->cap_far_ml = cap;
  }
  r->far_ml[r->nfar_ml++] = (rp_mapent){0, addr, size, kind};
  uint64_t end = addr + size < addr ? UINT64_MAX : addr + size;
  uint64_t first = addr / RP_PAGE, last = (end - 1) / RP_PAGE;
  if (last - first < r->far_ov.cap) {
    for (uint64_t pn = first; pn <= last; pn++) {
      uint8_t *b = map_get(&r->far_ov, pn);
      if (b)
        far_untouch(b, pn, addr, end);
    }
  } else {
    for (size_t i = 0; i < r->far_ov.cap; i++)
      if (r->far_ov.vals[i])
        far_untouch(r->far_ov.vals[i], r->far_ov.keys[i], addr, end);
  }
  return 0;
}

/* One record read with memory: its state and thread, and its accesses
 * (kind byte, address, size; a write's bytes before it), so that
 * memory can be taken back over it. ok false: it cannot (a map, an
 * unmap, a write without its old bytes, too many bytes). */
typedef struct rp_undo {
  uint64_t pos;
  uint32_t tid;
  bool ok;
  uint8_t *state;
  rp_buf ops;
} rp_undo;

enum { RP_UNDO = 1024, RP_UNDO_BYTES = 1 << 16 };

static void undo_free(tc_replay *r) {
  for (size_t i = 0; r->undo && i < RP_UNDO; i++) {
    free(r->undo[i].state);
    free(r->undo[i].ops.p);
  }
  free(r->undo);
  r->undo = NULL;
}

/* Notes an access of the record being read. */
static void undo_note(tc_replay *r, int kind, uint64_t addr, uint64_t size,
                      const uint8_t *before) {
  rp_undo *e = r->far_rec;
  if (!e || !e->ok)
    return;
  if ((kind == OP_WRITE && !before) || e->ops.n + size + 32 > RP_UNDO_BYTES ||
      put_raw(&e->ops, (uint8_t[]){(uint8_t)kind}, 1) ||
      put_uv(&e->ops, addr) || put_uv(&e->ops, size) ||
      (kind == OP_WRITE && put_raw(&e->ops, before, size)))
    e->ok = false;
}

/* A record's memory effect while reading a chunk: kept (unless a run's
 * scan keeps none) and shown to the run's scan. */
static int far_op(tc_replay *r, rp_scan *sc, int kind, uint64_t addr,
                  uint64_t size, const uint8_t *data, const uint8_t *before) {
  if (sc)
    scan_op(sc, kind, addr, size, data);
  undo_note(r, kind, addr, size, before);
  if (kind == OP_WRITE && !r->far_nomem)
    return far_write(r, addr, size, data);
  return 0;
}

static int far_accesses(tc_replay *r, rp_scan *sc, uint32_t n,
                        const tc_mem_access *m, bool reads) {
  for (uint32_t i = 0; i < n; i++)
    if (m[i].kind == TC_MEM_WRITE && m[i].after) {
      if (far_op(r, sc, OP_WRITE, m[i].addr, m[i].size, m[i].after,
                 m[i].before))
        return -1;
    } else if (reads && m[i].kind == TC_MEM_READ) {
      if (sc)
        scan_op(sc, OP_READ, m[i].addr, m[i].size, NULL);
      undo_note(r, OP_READ, m[i].addr, m[i].size, NULL);
    }
  return 0;
}

typedef struct far_map_ctx {
  tc_replay *r;
  rp_scan *sc;
} far_map_ctx;

static int far_map_cb(void *ctx, uint64_t addr, uint64_t size,
                      const uint8_t *data) {
  far_map_ctx *c = ctx;
  return far_op(c->r, c->sc, OP_WRITE, addr, size, data, NULL);
}

static void far_forget(tc_replay *r) {
  map_clear(&r->far_ov);
  r->nfar_ml = 0;
  r->far_valid = false;
  r->undo_n = 0;
}

/* An event between two INSNs (of the record before the next one): its
 * effects. 0, or -1 out of memory. */
static int far_event(tc_replay *r, const tc_event *ev, rp_scan *sc) {
  switch (ev->kind) {
  case TC_EV_SYSCALL:
    return far_accesses(r, sc, ev->u.sys.nmem, ev->u.sys.mem, false);
  case TC_EV_SIGNAL:
    return far_accesses(r, sc, ev->u.sig.nmem, ev->u.sig.mem, false);
  case TC_EV_MAP: {
    const tc_map_event *m = &ev->u.map;
    if (!m->size)
      return 0;
    if (r->far_rec)
      r->far_rec->ok = false;
    if (!r->far_nomem && far_map(r, m->addr, m->size, ML_ZERO))
      return -1;
    far_map_ctx c = {r, sc};
    return map_data_pages(m, far_map_cb, &c);
  }
  case TC_EV_UNMAP:
    if (r->far_rec)
      r->far_rec->ok = false;
    if (!r->far_nomem && ev->u.map.size &&
        far_map(r, ev->u.map.addr, ev->u.map.size, ML_UNMAP))
      return -1;
    return 0;
  case TC_EV_KEYFRAME:
    memcpy(r->far_next, ev->u.key.state, r->arch->state_size);
    r->far_next_tid = ev->u.key.tid;
    return 0;
  default:
    return 0;
  }
}

/* Does the format have chunks that far_start can start at? */
static bool far_ok(const tc_replay *r) {
  const tc_format *f = r->fmt;
  return r->bo && f->mem_base && f->mem_page && f->chunk_seek && r->path &&
         r->has_memory;
}

static int far_readers(tc_replay *r) {
  tc_error e = {{0}};
  size_t ss = r->arch->state_size;
  if (!r->far_rd && !(r->far_rd = r->fmt->open_reader(r->path, &e)))
    return 0;
  if (!r->far_cur && !(r->far_cur = r->fmt->open_reader(r->path, &e)))
    return 0;
  if ((!r->far_state && !(r->far_state = malloc(ss))) ||
      (!r->far_next && !(r->far_next = malloc(ss))))
    return -1;
  return 1;
}

/* Starts reading at the chunk that starts at instruction base, whose
 * memory the format rebuilds (mem_base): reads the events before its
 * first INSN (the record before it: shown to sc) and that INSN, the
 * position base. 1, 0 not possible here, -1 out of memory. */
static int far_start(tc_replay *r, uint64_t base, rp_scan *sc) {
  const tc_format *f = r->fmt;
  tc_error e = {{0}};
  uint64_t b;
  int rc = far_readers(r);
  if (rc <= 0)
    return rc;
  r->far_live = false;
  r->far_rec = NULL;
  if (f->mem_base(r->far_rd, base, &b) != 1 || b != base)
    return 0;
  far_forget(r);
  if (base != r->far_base)
    map_clear(&r->far_pages);
  r->far_base = base;
  if (f->chunk_seek(r->far_cur, base, &e) < 0)
    return 0;
  tc_event ev;
  while (f->next_event(r->far_cur, &ev, &e) == 1) {
    if (ev.kind == TC_EV_INSN) {
      if (ev.u.insn.index != base)
        return 0;
      memcpy(r->far_state, ev.u.insn.state_before, r->arch->state_size);
      r->far_tid = ev.u.insn.tid;
      r->far_ev = ev;
      r->far_pos = base;
      r->far_live = true;
      r->far_end = false;
      r->far_valid = !r->far_nomem;
      return 1;
    }
    if (ev.kind == TC_EV_EXIT)
      break;
    if (far_event(r, &ev, sc))
      return -1;
  }
  return 0;
}

/* One record on from a live position: INSN far_pos's effects and the
 * events after it (shown to sc), up to the next INSN (far_pos + 1) or
 * the end of the trace. 1 moved, 0 not possible (at the end; the trace
 * does not go on as its index said), -1 out of memory. */
static int far_step(tc_replay *r, rp_scan *sc) {
  const tc_format *f = r->fmt;
  size_t ss = r->arch->state_size;
  tc_error e = {{0}};
  if (!r->far_live || r->far_end)
    return 0;
  r->far_live = false;
  if (r->far_nomem) {
    r->undo_n = 0;
  } else if (r->undo || (r->undo = calloc(RP_UNDO, sizeof *r->undo))) {
    rp_undo *u = &r->undo[r->undo_head];
    if (u->state || (u->state = malloc(ss))) {
      u->pos = r->far_pos;
      u->tid = r->far_tid;
      u->ok = true;
      u->ops.n = 0;
      memcpy(u->state, r->far_state, ss);
      r->far_rec = u;
    }
  }
  const tc_insn_event *in = &r->far_ev.u.insn;
  memcpy(r->far_next, in->state_after, ss);
  r->far_next_tid = in->tid;
  if (far_accesses(r, sc, in->nmem, in->mem, true))
    return -1;
  tc_event ev;
  int rc;
  while ((rc = f->next_event(r->far_cur, &ev, &e)) == 1 &&
         ev.kind != TC_EV_INSN && ev.kind != TC_EV_EXIT)
    if (far_event(r, &ev, sc))
      return -1;
  bool insn = rc == 1 && ev.kind == TC_EV_INSN;
  rp_undo *u = r->far_rec;
  r->far_rec = NULL;
  if (insn ? ev.u.insn.index != r->far_pos + 1
           : r->far_pos + 1 != tc_replay_insns(r))
    return 0;
  if (u) {
    r->undo_head = (r->undo_head + 1) % RP_UNDO;
    if (r->undo_n < RP_UNDO)
      r->undo_n++;
  }
  r->far_pos++;
  if (insn) {
    memcpy(r->far_state, ev.u.insn.state_before, ss);
    r->far_tid = ev.u.insn.tid;
    r->far_ev = ev;
  } else {
    memcpy(r->far_state, r->far_next, ss);
    r->far_tid = r->far_next_tid;
    r->far_end = true;
  }
  r->far_live = true;
  r->far_valid = !r->far_nomem;
  return 1;
}

/* Reads the chunk's events up to pos: 1 done, 0 not possible here (the
 * caller indexes up to pos instead), -1 out of memory. */
static int far_seek(tc_replay *r, uint64_t pos) {
  const tc_format *f = r->fmt;
  uint64_t base;
  if (!far_ok(r))
    return 0;
  if (r->far_valid && r->far_pos == pos)
    goto at;
  int rc = far_readers(r);
  if (rc <= 0)
    return rc;
  /* far when indexing on to pos (about 3 times a plain read's work an
   * instruction) would cost more than reading the chunk up to it; from
   * the first chunk only for a long way (a seek near the start indexes) */
  uint64_t gap = pos - r->built;
  if (f->mem_base(r->far_rd, pos, &base) != 1 || gap * 3 <= pos - base ||
      (base == 0 && gap < RP_FAR_MIN))
    return 0;
  r->far_nomem = false;
  /* on from the chunk's position read last, else from its start */
  if (!(r->far_valid && r->far_live && r->far_base == base &&
        r->far_pos < pos) &&
      (rc = far_start(r, base, NULL)) <= 0)
    return rc;
  while (r->far_pos < pos)
    if ((rc = far_step(r, NULL)) <= 0) {
      far_forget(r);
      r->far_live = false;
      return rc;
    }
at:
  r->far = true;
  r->at.pos = pos;
  r->at.tid = r->far_tid;
  memcpy(r->at.state, r->far_state, r->arch->state_size);
  tt_clear(&r->threads); /* the running thread only */
  map_clear(&r->overlay);
  return 1;
}

/* Far: the byte at a, into *out; false if unknown. */
static bool far_byte(tc_replay *r, uint64_t a, uint8_t *out) {
  uint64_t pn = a / RP_PAGE;
  size_t off = (size_t)(a % RP_PAGE);
  const uint8_t *b = map_get(&r->far_ov, pn);
  if (b && bit_get(b + RP_BUF, off)) {
    *out = b[off];
    return bit_get(b + RP_PAGE, off);
  }
  for (size_t i = r->nfar_ml; i-- > 0;) {
    const rp_mapent *m = &r->far_ml[i];
    if (a >= m->addr && a - m->addr < m->size) {
      *out = 0;
      return m->kind == ML_ZERO;
    }
  }
  b = map_get(&r->far_pages, pn);
  if (!b) {
    uint8_t *nb = malloc(RP_BUF);
    tc_error e = {{0}};
    if (!nb)
      return false;
    if (r->fmt->mem_page(r->far_rd, r->far_base, pn, nb, &e) < 0)
      memset(nb, 0, RP_BUF); /* unknown */
    if (map_put(&r->far_pages, pn, nb)) {
      free(nb);
      return false;
    }
    b = nb;
  }
  *out = b[off];
  return bit_get(b + RP_PAGE, off);
}

/* From a far position: indexes up to it and goes there the usual way. */
static int far_settle(tc_replay *r, tc_error *err) {
  if (!r->far)
    return 0;
  uint64_t pos = r->at.pos;
  r->far = false;
  r->at.pos = UINT64_MAX;
  return seek_index(r, pos, err);
}

int tc_replay_seek(tc_replay *r, uint64_t pos, tc_error *err) {
  if (pos > r->built && pos <= tc_replay_insns(r)) {
    int rc = far_seek(r, pos);
    if (rc < 0) {
      tc_error_set(err, "out of memory");
      return -1;
    }
    if (rc)
      return 0;
  }
  if (r->far) { /* leaving a far position: the cursor is not there */
    r->far = false;
    r->at.pos = UINT64_MAX;
  }
  return seek_index(r, pos, err);
}

/* A thread born (cloned) and not yet run at the position, or NULL. */
static const rp_birth *born(const tc_replay *r, uint32_t tid) {
  for (size_t i = 0; i < r->nbirths; i++) {
    const rp_birth *b = &r->births[i];
    if (b->tid == tid && b->state && b->from <= r->at.pos && r->at.pos < b->to)
      return b;
  }
  return NULL;
}

size_t tc_replay_threads(const tc_replay *r, uint32_t *tids, size_t max) {
  size_t n = 0;
  if (n < max)
    tids[n] = r->at.tid;
  n++;
  /* the others in tid order (those seen running, those born since) */
  uint32_t last = 0;
  for (size_t k = 0; k < r->threads.n + r->nbirths; k++) {
    uint32_t best = UINT32_MAX;
    for (size_t i = 0; i < r->threads.n + r->nbirths; i++) {
      uint32_t t;
      if (i < r->threads.n)
        t = r->threads.v[i].tid;
      else if (born(r, r->births[i - r->threads.n].tid))
        t = r->births[i - r->threads.n].tid;
      else
        continue;
      if ((k == 0 || t > last) && t < best && t != r->at.tid)
        best = t;
    }
    if (best == UINT32_MAX)
      break;
    if (n < max)
      tids[n] = best;
    n++;
    last = best;
  }
  return n;
}

size_t tc_replay_execs(const tc_replay *r, uint64_t *pos, size_t max) {
  for (size_t i = 0; i < r->nexecs && i < max; i++)
    pos[i] = r->execs[i];
  return r->nexecs;
}

const uint8_t *tc_replay_thread_state(const tc_replay *r, uint32_t tid) {
  if (tid == r->at.tid)
    return r->at.state;
  for (size_t i = 0; i < r->threads.n; i++)
    if (r->threads.v[i].tid == tid)
      return r->threads.v[i].state;
  const rp_birth *b = born(r, tid);
  return b ? b->state : NULL;
}

/* Is addr in a map without data (zeros until written) at pos? */
static bool mapped_zero(const tc_replay *r, uint64_t addr, uint64_t pos) {
  size_t lo = 0, hi = r->nmaplog;
  while (lo < hi) { /* entries are in position order */
    size_t mid = (lo + hi) / 2;
    if (r->maplog[mid].pos <= pos)
      lo = mid + 1;
    else
      hi = mid;
  }
  for (size_t i = lo; i-- > 0;) {
    const rp_mapent *m = &r->maplog[i];
    if (addr >= m->addr && addr - m->addr < m->size)
      return m->kind == ML_ZERO;
  }
  return false;
}

size_t tc_replay_read(tc_replay *r, uint64_t addr, size_t len, uint8_t *out) {
  if (!r->has_memory)
    return 0;
  size_t done = 0;
  if (r->far) {
    while (done < len && addr + done >= addr &&
           far_byte(r, addr + done, out + done))
      done++;
    return done;
  }
  while (done < len) {
    uint64_t a = addr + done;
    if (a < addr)
      break; /* wrapped */
    uint64_t pn = a / RP_PAGE;
    size_t off = (size_t)(a % RP_PAGE);
    const uint8_t *b = map_get(&r->overlay, pn);
    if (!b) {
      const rp_page *pg = map_get(&r->pages, pn);
      b = pg ? version_at(pg, r->at.cp) : NULL;
    }
    size_t n = RP_PAGE - off < len - done ? RP_PAGE - off : len - done;
    for (size_t i = 0; i < n; i++) {
      if (b && bit_get(b + RP_PAGE, off + i))
        out[done] = b[off + i];
      else if (mapped_zero(r, a + i, r->at.pos))
        out[done] = 0;
      else
        return done;
      done++;
    }
  }
  return done;
}

/* ------------------------------------------------------------------- run */

static bool at_break(const tc_replay *r, const tc_replay_stops *s,
                     const uint8_t *state, size_t *which) {
  if (!s->npcs)
    return false;
  uint64_t pc = tc_state_get(r->arch, state, r->arch->pc_reg);
  for (size_t i = 0; i < s->npcs; i++)
    if (s->pcs[i] == pc) {
      *which = i;
      return true;
    }
  return false;
}

/* Can checkpoint interval k hold one of the stops? No false "no". */
static bool interval_may_stop(const tc_replay *r, size_t k,
                              const tc_replay_stops *s) {
  if (s->step || (r->bo && k + 1 >= r->ncps))
    return true; /* (the interval being indexed: its filters are not whole) */
  const uint8_t *b = r->cps[k].bloom;
  for (size_t i = 0; i < s->npcs; i++)
    if (bloom_get(b, hash_bits(s->pcs[i], RP_PC_BITS)))
      return true;
  for (size_t i = 0; i < s->nwatches; i++) {
    const tc_replay_watch *w = &s->watches[i];
    if (!w->len)
      continue;
    uint64_t last =
        w->addr + w->len - 1 < w->addr ? UINT64_MAX : w->addr + w->len - 1;
    for (uint64_t l = w->addr >> 6; l <= last >> 6; l++) {
      size_t bit = hash_bits(l, RP_LINE_BITS);
      if (((w->kinds & TC_MEM_WRITE) && bloom_get(b + RP_BLOOM_W, bit)) ||
          ((w->kinds & TC_MEM_READ) && bloom_get(b + RP_BLOOM_R, bit)))
        return true;
      if (l == UINT64_MAX >> 6)
        break;
    }
  }
  return false;
}

/* ------------------------------------------------- runs through chunks */

/* Runs past the index without indexing, through the format's chunk
 * filters (tct: each chunk's exact sets of pcs and stored and loaded
 * lines): a chunk none of whose sets holds a stop is skipped, the others
 * are read from their start (far_start) or on from the position. */

enum { RP_FAR_RUN_AFTER = 1 << 18 }; /* instructions indexed by a run first */

static bool far_chunks(const tc_replay *r) {
  return far_ok(r) && r->fmt->chunk_span && r->fmt->chunk_may_stop;
}

/* Can the chunk that starts at first hold a stop? */
static bool chunk_may(tc_replay *r, uint64_t first, const tc_replay_stops *s,
                      const tc_chunk_watch *cw) {
  if (s->step)
    return true;
  if (r->fmt->chunk_may_stop(r->far_rd, first, s->pcs, s->npcs, cw,
                             s->nwatches) != 0)
    return true;
  r->chunks_skipped++;
  return false;
}

/* Does a chunk start at pos (where far_start can begin)? */
static bool chunk_starts(tc_replay *r, uint64_t pos, uint64_t *end) {
  uint64_t f, b;
  return r->fmt->chunk_span(r->far_rd, pos, &f, end) == 1 && f == pos &&
         r->fmt->mem_base(r->far_rd, pos, &b) == 1 && b == pos;
}

static tc_chunk_watch *chunk_watches(const tc_replay_stops *s) {
  tc_chunk_watch *cw = malloc((s->nwatches ? s->nwatches : 1) * sizeof *cw);
  for (size_t i = 0; cw && i < s->nwatches; i++)
    cw[i] = (tc_chunk_watch){s->watches[i].addr, s->watches[i].len,
                             s->watches[i].kinds};
  return cw;
}

/* Forwards from position from (>= the index's end; start: where the run
 * began). 1 with *stop and hit set, 0 not possible here, -1 out of
 * memory. */
static int far_run_fwd(tc_replay *r, uint64_t from, uint64_t start,
                       const tc_replay_stops *s, tc_replay_hit *hit,
                       uint64_t *stop) {
  uint64_t first, end, n = tc_replay_insns(r);
  int rc = far_readers(r);
  if (rc <= 0)
    return rc;
  if (r->fmt->chunk_span(r->far_rd, from, &first, &end) != 1)
    return 0;
  r->far_nomem = false;
  if (!(r->far_valid && r->far_live && r->far_base == first &&
        r->far_pos <= from) &&
      (rc = far_start(r, first, NULL)) <= 0)
    return rc;
  while (r->far_pos < from)
    if ((rc = far_step(r, NULL)) <= 0)
      return rc;
  tc_chunk_watch *cw = chunk_watches(s);
  if (!cw)
    return -1;
  rp_scan sc = {.s = s};
  rc = 1;
  bool check = true; /* the chunk of from, too */
  for (uint64_t done = 0;; done++) {
    size_t which;
    if (check || (r->far_pos == end && end < n)) {
      /* skip the chunks (or the rest of this one) that cannot stop */
      uint64_t j = check ? first : end, e = 0, e2;
      check = false;
      while (chunk_starts(r, j, &e) && e < n && chunk_may(r, j, s, cw) == 0 &&
             chunk_starts(r, e, &e2))
        j = e;
      if (j > r->far_pos) {
        if (s->interrupted && s->interrupted(s->ctx)) {
          *hit = (tc_replay_hit){.why = TC_REPLAY_INTERRUPTED};
          *stop = r->far_pos;
          break;
        }
        sc.hit = false;
        if ((rc = far_start(r, j, &sc)) <= 0)
          break;
        if (sc.hit && !(s->watch_before && j - 1 == start)) {
          /* in the events before j's first INSN: the record before it */
          *hit = sc.h;
          hit->tid = r->far_tid;
          *stop = s->watch_before ? j - 1 : j;
          break;
        }
        if (at_break(r, s, r->far_state, &which)) {
          *hit = (tc_replay_hit){
              .why = TC_REPLAY_BREAK, .index = which, .tid = r->far_tid};
          *stop = j;
          break;
        }
      }
      if (r->fmt->chunk_span(r->far_rd, r->far_pos, &first, &end) != 1)
        end = UINT64_MAX; /* (read on) */
    }
    sc.hit = false;
    uint32_t qtid = r->far_tid;
    uint64_t rec = r->far_pos;
    if ((rc = far_step(r, &sc)) < 0)
      break;
    if (rc == 0) {
      if (r->far_pos != n)
        break; /* the trace does not go on as its index says */
      rc = 1;
      *stop = n; /* the end */
      break;
    }
    if (((done + 1) & 0x3ffff) == 0 && s->interrupted &&
        s->interrupted(s->ctx)) {
      *hit = (tc_replay_hit){.why = TC_REPLAY_INTERRUPTED};
      *stop = r->far_pos;
      break;
    }
    if (sc.hit && !(s->watch_before && rec == start)) {
      *hit = sc.h;
      hit->tid = qtid;
      *stop = s->watch_before ? rec : r->far_pos;
      break;
    }
    if (s->step && qtid == s->step_tid) {
      uint64_t npc = tc_state_get(r->arch, r->far_state, r->arch->pc_reg);
      if (!(r->far_tid == qtid && npc >= s->range_lo && npc < s->range_hi)) {
        *hit = (tc_replay_hit){.why = TC_REPLAY_STEP, .tid = qtid};
        *stop = r->far_pos;
        break;
      }
    }
    if (at_break(r, s, r->far_state, &which)) {
      *hit = (tc_replay_hit){
          .why = TC_REPLAY_BREAK, .index = which, .tid = r->far_tid};
      *stop = r->far_pos;
      break;
    }
    if (r->far_end) {
      *stop = n;
      break;
    }
  }
  free(cw);
  return rc;
}

/* Backwards from position from (past the index): the latest stop before
 * it, chunk by chunk, newest first. 1 with *stop and hit set; 2 with
 * *stop the position from which the index (which holds everything
 * before it) goes on; 0 not possible here; -1 out of memory. */
static int far_run_back(tc_replay *r, uint64_t from, const tc_replay_stops *s,
                        tc_replay_hit *hit, uint64_t *stop) {
  uint64_t hi = from, first, end;
  int rc = far_readers(r);
  if (rc <= 0)
    return rc;
  tc_chunk_watch *cw = chunk_watches(s);
  if (!cw)
    return -1;
  rp_scan sc = {.s = s};
  rc = 0;
  while (hi > 0) {
    if (hi <= r->built) {
      *stop = hi;
      rc = 2;
      break;
    }
    if (r->fmt->chunk_span(r->far_rd, hi - 1, &first, &end) != 1 ||
        !chunk_starts(r, first, &end)) {
      rc = 0;
      break;
    }
    if (s->interrupted && hi != from && s->interrupted(s->ctx)) {
      *hit = (tc_replay_hit){.why = TC_REPLAY_INTERRUPTED};
      *stop = hi;
      rc = 1;
      break;
    }
    /* the chunk's sets cover all of it; at the start of another chunk,
     * that one's events before its first INSN are the record before */
    uint64_t e3, f3;
    if (chunk_may(r, first, s, cw) ||
        (hi == from && hi == end && hi < tc_replay_insns(r) &&
         (r->fmt->chunk_span(r->far_rd, hi, &f3, &e3) != 1 ||
          chunk_may(r, hi, s, cw)))) {
      bool found = false;
      r->far_nomem = true;
      sc.hit = false;
      if ((rc = far_start(r, first, &sc)) <= 0)
        break;
      if (sc.hit && first > 0) { /* the record before the chunk's first */
        *hit = sc.h;
        hit->tid = r->far_tid;
        *stop = s->watch_before ? first : first - 1;
        found = true;
      }
      while (r->far_pos < hi) {
        size_t which;
        uint64_t p = r->far_pos;
        bool brk = at_break(r, s, r->far_state, &which);
        uint32_t qtid = r->far_tid;
        sc.hit = false;
        if ((rc = far_step(r, &sc)) <= 0)
          break;
        if (sc.hit) {
          *hit = sc.h;
          hit->tid = qtid;
          *stop = s->watch_before ? p + 1 : p;
          found = true;
        } else if (s->step && qtid == s->step_tid) {
          *hit = (tc_replay_hit){.why = TC_REPLAY_STEP, .tid = qtid};
          *stop = p;
          found = true;
        } else if (brk) {
          *hit = (tc_replay_hit){
              .why = TC_REPLAY_BREAK, .index = which, .tid = qtid};
          *stop = p;
          found = true;
        }
      }
      r->far_nomem = false;
      if (rc <= 0)
        break;
      if (found) {
        rc = 1;
        break;
      }
    }
    hi = first;
  }
  r->far_nomem = false;
  if (hi == 0 && rc != 2) { /* nothing found: position 0 */
    *stop = 0;
    rc = 1;
  }
  free(cw);
  return rc;
}

/* Backwards from a far position over the records read last (the undo
 * ring): memory taken back write by write. 1 with *stop and hit set; 0
 * none there: the position (far_pos) is the oldest one reached. */
static int far_undo_back(tc_replay *r, const tc_replay_stops *s,
                         tc_replay_hit *hit, uint64_t *stop) {
  rp_scan sc = {.s = s};
  size_t ss = r->arch->state_size;
  /* a write takes 4 bytes of ops at least */
  const uint8_t **ops = malloc((RP_UNDO_BYTES / 4 + 1) * sizeof *ops);
  int rc = 0;
  if (!ops)
    return 0;
  while (r->undo_n && r->far_valid) {
    size_t i = (r->undo_head + RP_UNDO - 1) % RP_UNDO;
    rp_undo *e = &r->undo[i];
    if (!e->ok || e->pos + 1 != r->far_pos)
      break;
    uint64_t q = r->far_pos, p = e->pos;
    /* its accesses, in order; then taken back, the last first */
    size_t nw = 0;
    sc.hit = false;
    for (const uint8_t *x = e->ops.p, *end = x + e->ops.n; x < end;) {
      const uint8_t *op = x;
      int kind = *x++;
      uint64_t addr = get_uvb(&x, end), size = get_uvb(&x, end);
      scan_op(&sc, kind, addr, size, NULL);
      if (kind == OP_WRITE) {
        ops[nw++] = op;
        x += size;
      }
    }
    size_t which;
    bool found = true;
    if (sc.hit) {
      *hit = sc.h;
      hit->tid = e->tid;
      *stop = s->watch_before ? q : p;
    } else if (s->step && e->tid == s->step_tid) {
      *hit = (tc_replay_hit){.why = TC_REPLAY_STEP, .tid = e->tid};
      *stop = p;
    } else if (at_break(r, s, e->state, &which)) {
      *hit = (tc_replay_hit){
          .why = TC_REPLAY_BREAK, .index = which, .tid = e->tid};
      *stop = p;
    } else {
      found = false;
    }
    if (found && *stop == q) {
      rc = 1;
      break;
    }
    while (nw--) {
      const uint8_t *x = ops[nw] + 1, *end = e->ops.p + e->ops.n;
      uint64_t addr = get_uvb(&x, end), size = get_uvb(&x, end);
      if (far_write(r, addr, size, x)) {
        far_forget(r);
        break;
      }
    }
    memcpy(r->far_state, e->state, ss);
    r->far_tid = e->tid;
    r->far_pos = p;
    r->far_live = false;
    r->undo_head = i;
    r->undo_n--;
    if (found) {
      rc = 1;
      break;
    }
  }
  free(ops);
  return rc;
}

int tc_replay_run(tc_replay *r, int backwards, const tc_replay_stops *s,
                  tc_replay_hit *hit, tc_error *err) {
  static const tc_replay_stops none = {0};
  if (!s)
    s = &none;
  memset(hit, 0, sizeof *hit);
  uint64_t stop = backwards ? 0 : UINT64_MAX, from = r->at.pos;
  if (r->far && far_chunks(r)) { /* through the chunks, not the index */
    int rc = 0;
    if (!backwards) {
      rc = far_run_fwd(r, from, from, s, hit, &stop);
    } else if (r->far_valid && r->far_pos == from) {
      rc = far_undo_back(r, s, hit, &stop); /* the records read last */
      if (rc == 0)                          /* on from the oldest of them */
        rc = far_run_back(r, r->far_valid ? r->far_pos : from, s, hit, &stop);
    } else {
      rc = far_run_back(r, from, s, hit, &stop);
    }
    if (rc < 0) {
      tc_error_set(err, "out of memory");
      return -1;
    }
    if (rc == 1)
      return tc_replay_seek(r, stop, err);
    memset(hit, 0, sizeof *hit);
    if (rc == 2) { /* the index holds the rest, before stop */
      if (tc_replay_seek(r, stop, err))
        return -1;
      from = stop;
      stop = 0;
    }
  }
  if (far_settle(r, err))
    return -1;
  rp_cursor c = r->at;
  c.state = malloc(r->arch->state_size);
  if (!c.state) {
    tc_error_set(err, "out of memory");
    return -1;
  }
  rp_scan sc = {.s = s};
  bool scan_mem = s->nwatches > 0, far_tried = false;
  /* the registers matter to breakpoints and range steps only */
  uint8_t *rs =
      s->npcs || (s->step && s->range_lo < s->range_hi) ? c.state : NULL;
  if (!backwards) {
    memcpy(c.state, r->at.state, r->arch->state_size);
    size_t k = cp_for(r, c.pos);
    for (;;) {
      if (c.pos >= r->built) { /* index more, or the end */
        if (!far_tried && c.pos - from >= RP_FAR_RUN_AFTER && far_chunks(r)) {
          far_tried = true;
          /* a long run: on through the chunks */
          int rc = far_run_fwd(r, c.pos, from, s, hit, &stop);
          if (rc < 0) {
            free(c.state);
            tc_error_set(err, "out of memory");
            return -1;
          }
          if (rc == 1)
            goto out;
          memset(hit, 0, sizeof *hit);
          stop = UINT64_MAX;
        }
        if (r->bo && build_to(r, c.pos + RP_BUILD_STEP, err)) {
          free(c.state);
          return -1;
        }
        if (c.pos >= r->built)
          break;
      }
      /* a whole interval that cannot stop: on to the next checkpoint */
      while (k + 1 < r->ncps && c.pos == r->cps[k].pos &&
             !interval_may_stop(r, k, s)) {
        k++;
        cursor_at_cp(r, &c, (uint32_t)k);
        if ((k & 31) == 0 && s->interrupted && s->interrupted(s->ctx)) {
          hit->why = TC_REPLAY_INTERRUPTED;
          stop = c.pos;
          goto out;
        }
      }
      if (c.pos >= r->built)
        continue;
      if (k + 1 < r->ncps && c.pos + 1 == r->cps[k + 1].pos)
        k++; /* the record now applied ends interval k */
      sc.hit = false;
      uint32_t qtid = c.tid; /* the thread that runs record c.pos */
      c.off =
          apply_record(r, c.off, rs, &c.tid, scan_mem ? scan_op : NULL, &sc);
      c.pos++;
      if ((c.pos & 0x3ffff) == 0 && s->interrupted && s->interrupted(s->ctx)) {
        hit->why = TC_REPLAY_INTERRUPTED;
        stop = c.pos;
        break;
      }
      if (sc.hit && !(s->watch_before && c.pos - 1 == r->at.pos)) {
        *hit = sc.h;
        hit->tid = qtid;
        stop = s->watch_before ? c.pos - 1 : c.pos;
        break;
      }
      if (s->step && qtid == s->step_tid) {
        uint64_t npc = tc_state_get(r->arch, c.state, r->arch->pc_reg);
        if (!(c.tid == qtid && npc >= s->range_lo && npc < s->range_hi)) {
          *hit = (tc_replay_hit){.why = TC_REPLAY_STEP, .tid = qtid};
          stop = c.pos;
          break;
        }
      }
      size_t which;
      if (at_break(r, s, c.state, &which)) {
        *hit = (tc_replay_hit){
            .why = TC_REPLAY_BREAK, .index = which, .tid = c.tid};
        stop = c.pos;
        break;
      }
    }
    if (stop == UINT64_MAX)
      stop = c.pos; /* the end */
  } else if (r->at.pos > 0) {
    bool found = false;
    for (int64_t cp = cp_for(r, r->at.pos - 1); cp >= 0 && !found; cp--) {
      uint64_t end = r->at.pos;
      if ((size_t)cp + 1 < r->ncps && r->cps[cp + 1].pos < end)
        end = r->cps[cp + 1].pos;
      /* every 32 intervals: nothing was found from `end` on */
      if ((cp & 31) == 0 && s->interrupted && s->interrupted(s->ctx)) {
        hit->why = TC_REPLAY_INTERRUPTED;
        stop = end;
        break;
      }
      if (!interval_may_stop(r, (size_t)cp, s))
        continue; /* its filters hold none of the stops */
      cursor_at_cp(r, &c, (uint32_t)cp);
      while (c.pos < end) {
        size_t which;
        bool brk = at_break(r, s, c.state, &which);
        uint32_t qtid = c.tid;
        sc.hit = false;
        c.off =
            apply_record(r, c.off, rs, &c.tid, scan_mem ? scan_op : NULL, &sc);
        if (sc.hit) {
          *hit = sc.h;
          hit->tid = qtid;
          /* gdb steps back over the access itself where watchpoints
           * trap before it */
          stop = s->watch_before ? c.pos + 1 : c.pos;
          found = true;
        } else if (s->step && qtid == s->step_tid) {
          *hit = (tc_replay_hit){.why = TC_REPLAY_STEP, .tid = qtid};
          stop = c.pos;
          found = true;
        } else if (brk) {
          *hit = (tc_replay_hit){
              .why = TC_REPLAY_BREAK, .index = which, .tid = qtid};
          stop = c.pos;
          found = true;
        }
        c.pos++;
      }
    }
  }
out:
  free(c.state);
  return tc_replay_seek(r, stop, err);
}

void tc_replay_get_stats(const tc_replay *r, tc_replay_stats *st) {
  memset(st, 0, sizeof *st);
  st->checkpoints = r->ncps;
  st->pages = r->npages;
  for (size_t i = 0; i < r->npages; i++)
    st->page_versions += r->page_list[i]->nv;
  st->log_bytes = r->log_len;
  st->memory_bytes = r->version_bytes;
  st->interval = r->interval;
  st->chunks_skipped = r->chunks_skipped;
}
