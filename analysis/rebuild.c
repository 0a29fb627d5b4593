/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Initial memory from what a trace shows (see rebuild.h). Pages are kept
 * sorted by address; a page records per byte whether its first value was
 * seen (known) or the byte was first changed without a value (touched). */
#include "analysis/rebuild.h"
#include "writers/format.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define RB_PAGE 4096u
#define RB_MAX_FILL (64u << 20)

typedef struct rb_page {
  uint64_t addr;
  uint8_t data[RB_PAGE];
  uint8_t seen[RB_PAGE]; /* 1: the first value is known or unknowable */
  int in_source_map;
} rb_page;

typedef struct rb_range {
  uint64_t lo, hi;
} rb_range;

struct tc_rebuild {
  rb_page **pages;
  size_t n, cap;
  rb_range *maps;
  size_t nmaps, capmaps;
  size_t next; /* next_map cursor */
  uint8_t *buf;
  size_t bufcap;
};

static rb_page *page_of(tc_rebuild *rb, uint64_t addr, int create) {
  uint64_t pa = addr & ~(uint64_t)(RB_PAGE - 1);
  size_t lo = 0, hi = rb->n;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (rb->pages[mid]->addr == pa)
      return rb->pages[mid];
    if (rb->pages[mid]->addr < pa)
      lo = mid + 1;
    else
      hi = mid;
  }
  if (!create)
    return NULL;
  if (rb->n == rb->cap) {
    size_t cap = rb->cap ? rb->cap * 2 : 64;
    rb_page **p = realloc(rb->pages, cap * sizeof *p);
    if (!p)
      return NULL;
    rb->pages = p;
    rb->cap = cap;
  }
  rb_page *pg = calloc(1, sizeof *pg);
  if (!pg)
    return NULL;
  pg->addr = pa;
  memmove(rb->pages + lo + 1, rb->pages + lo, (rb->n - lo) * sizeof *rb->pages);
  rb->pages[lo] = pg;
  rb->n++;
  return pg;
}

/* values NULL: touched, the first value unknowable. -1 on out-of-memory. */
static int see(tc_rebuild *rb, uint64_t addr, const uint8_t *values,
               uint64_t n) {
  for (uint64_t i = 0; i < n; i++) {
    rb_page *pg = page_of(rb, addr + i, 1);
    if (!pg)
      return -1;
    size_t off = (size_t)((addr + i) & (RB_PAGE - 1));
    if (pg->seen[off])
      continue;
    pg->seen[off] = 1;
    if (values)
      pg->data[off] = values[i];
  }
  return 0;
}

tc_rebuild *tc_rebuild_scan(const char *path, const tc_format *src,
                            tc_error *err) {
  tc_reader *r = src->open_reader(path, err);
  if (!r)
    return NULL;
  tc_rebuild *rb = calloc(1, sizeof *rb);
  int rc = rb ? 0 : -1, g;
  bool old = src->caps & TC_CAP_MEM_OLD;
  tc_event ev;
  while (rc == 0 && (g = src->next_event(r, &ev, err)) == 1) {
    if (ev.kind == TC_EV_INSN) {
      const tc_insn_event *in = &ev.u.insn;
      if (in->size && in->tid != TC_TID_BLOCK)
        rc |= see(rb, in->pc, in->bytes, in->size);
      for (uint32_t i = 0; i < in->nmem && rc == 0; i++) {
        const tc_mem_access *m = &in->mem[i];
        bool value = m->kind == TC_MEM_READ || old;
        rc |= see(rb, m->addr, value ? m->before : NULL, m->size);
      }
    } else if (ev.kind == TC_EV_SYSCALL) {
      for (uint32_t i = 0; i < ev.u.sys.nmem && rc == 0; i++)
        rc |= see(rb, ev.u.sys.mem[i].addr, NULL, ev.u.sys.mem[i].size);
    } else if (ev.kind == TC_EV_MAP && !ev.u.map.data) {
      if (rb->nmaps == rb->capmaps) {
        size_t cap = rb->capmaps ? rb->capmaps * 2 : 16;
        rb_range *m = realloc(rb->maps, cap * sizeof *m);
        if (!m) {
          rc = -1;
          break;
        }
        rb->maps = m;
        rb->capmaps = cap;
      }
      rb->maps[rb->nmaps++] =
          (rb_range){ev.u.map.addr, ev.u.map.addr + ev.u.map.size};
    }
  }
  src->close_reader(r);
  if (rc < 0 || g < 0) {
    if (rc < 0)
      tc_error_set(err, "out of memory rebuilding the initial memory");
    tc_rebuild_free(rb);
    return NULL;
  }
  for (size_t i = 0; i < rb->n; i++)
    for (size_t k = 0; k < rb->nmaps; k++)
      if (rb->pages[i]->addr + RB_PAGE > rb->maps[k].lo &&
          rb->pages[i]->addr < rb->maps[k].hi)
        rb->pages[i]->in_source_map = 1;
  if (!rb->n) {
    tc_rebuild_free(rb);
    return NULL;
  }
  return rb;
}

const uint8_t *tc_rebuild_fill(tc_rebuild *rb, uint64_t addr, uint64_t size) {
  if (size > RB_MAX_FILL)
    return NULL;
  if (size > rb->bufcap) {
    uint8_t *b = realloc(rb->buf, size);
    if (!b)
      return NULL;
    rb->buf = b;
    rb->bufcap = size;
  }
  memset(rb->buf, 0, size);
  for (uint64_t a = addr; a < addr + size;) {
    rb_page *pg = page_of(rb, a, 0);
    uint64_t off = a & (RB_PAGE - 1), n = RB_PAGE - off;
    if (n > addr + size - a)
      n = addr + size - a;
    if (pg)
      memcpy(rb->buf + (a - addr), pg->data + off, n);
    a += n;
  }
  return rb->buf;
}

int tc_rebuild_next_map(tc_rebuild *rb, tc_event *ev) {
  while (rb->next < rb->n && rb->pages[rb->next]->in_source_map)
    rb->next++;
  if (rb->next >= rb->n)
    return 0;
  size_t first = rb->next, end = first + 1;
  while (end < rb->n && !rb->pages[end]->in_source_map &&
         rb->pages[end]->addr == rb->pages[end - 1]->addr + RB_PAGE &&
         (end - first) * RB_PAGE < RB_MAX_FILL)
    end++;
  rb->next = end;
  uint64_t addr = rb->pages[first]->addr, size = (end - first) * RB_PAGE;
  const uint8_t *data = tc_rebuild_fill(rb, addr, size);
  if (!data)
    return 0;
  memset(ev, 0, sizeof *ev);
  ev->kind = TC_EV_MAP;
  ev->u.map.addr = addr;
  ev->u.map.size = size;
  ev->u.map.prot = TC_PROT_READ | TC_PROT_WRITE | TC_PROT_EXEC;
  ev->u.map.name = "";
  ev->u.map.data = data;
  return 1;
}

uint64_t tc_rebuild_pages(const tc_rebuild *rb) { return rb ? rb->n : 0; }

void tc_rebuild_free(tc_rebuild *rb) {
  if (!rb)
    return;
  for (size_t i = 0; i < rb->n; i++)
    free(rb->pages[i]);
  free(rb->pages);
  free(rb->maps);
  free(rb->buf);
  free(rb);
}
