/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Sparse memory image (see memimage.h): 4 KiB pages with a known-byte
 * bitmap in an open-addressing hash table, plus the list of mapped ranges
 * whose untouched pages read as known zeros (an 8 MiB stack costs
 * nothing until written). */
#include "common/memimage.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define PAGE_BITS 12
#define PAGE_SIZE (1u << PAGE_BITS)

typedef struct page {
  uint64_t pn; /* page number + 1; 0 = empty slot */
  uint8_t data[PAGE_SIZE];
  uint8_t known[PAGE_SIZE / 8];
} page;

typedef struct range {
  uint64_t start, end;
} range;

struct tc_memimage {
  page **slots;
  size_t cap, used;
  range *ranges;
  size_t nranges, capranges;
};

tc_memimage *tc_memimage_new(void) {
  tc_memimage *m = calloc(1, sizeof *m);
  if (!m)
    return NULL;
  m->cap = 256;
  m->slots = calloc(m->cap, sizeof *m->slots);
  if (!m->slots) {
    free(m);
    return NULL;
  }
  return m;
}

void tc_memimage_free(tc_memimage *m) {
  if (!m)
    return;
  for (size_t i = 0; i < m->cap; i++)
    free(m->slots[i]);
  free(m->slots);
  free(m->ranges);
  free(m);
}

static size_t hash_pn(uint64_t pn, size_t cap) {
  return (size_t)((pn * 0x9e3779b97f4a7c15ull) >> 17) & (cap - 1);
}

static page *find(const tc_memimage *m, uint64_t pn) {
  for (size_t s = hash_pn(pn, m->cap);; s = (s + 1) & (m->cap - 1)) {
    page *p = m->slots[s];
    if (!p)
      return NULL;
    if (p->pn == pn + 1)
      return p;
  }
}

static bool in_ranges(const tc_memimage *m, uint64_t addr) {
  for (size_t i = 0; i < m->nranges; i++)
    if (addr >= m->ranges[i].start && addr < m->ranges[i].end)
      return true;
  return false;
}

static int grow(tc_memimage *m) {
  size_t ncap = m->cap * 2;
  page **ns = calloc(ncap, sizeof *ns);
  if (!ns)
    return -1;
  for (size_t i = 0; i < m->cap; i++) {
    page *p = m->slots[i];
    if (!p)
      continue;
    size_t s = hash_pn(p->pn - 1, ncap);
    while (ns[s])
      s = (s + 1) & (ncap - 1);
    ns[s] = p;
  }
  free(m->slots);
  m->slots = ns;
  m->cap = ncap;
  return 0;
}

static page *get_or_add(tc_memimage *m, uint64_t pn) {
  page *p = find(m, pn);
  if (p)
    return p;
  if ((m->used + 1) * 2 > m->cap && grow(m) < 0)
    return NULL;
  p = calloc(1, sizeof *p);
  if (!p)
    return NULL;
  p->pn = pn + 1;
  /* A page inside a mapped range starts as known zeros. */
  if (in_ranges(m, pn << PAGE_BITS))
    memset(p->known, 0xff, sizeof p->known);
  size_t s = hash_pn(pn, m->cap);
  while (m->slots[s])
    s = (s + 1) & (m->cap - 1);
  m->slots[s] = p;
  m->used++;
  return p;
}

/* Removes a page, re-inserting the rest of its probe chain. */
static void drop(tc_memimage *m, uint64_t pn) {
  size_t s = hash_pn(pn, m->cap);
  while (m->slots[s] && m->slots[s]->pn != pn + 1)
    s = (s + 1) & (m->cap - 1);
  if (!m->slots[s])
    return;
  free(m->slots[s]);
  m->slots[s] = NULL;
  m->used--;
  for (size_t t = (s + 1) & (m->cap - 1); m->slots[t];
       t = (t + 1) & (m->cap - 1)) {
    page *p = m->slots[t];
    m->slots[t] = NULL;
    size_t u = hash_pn(p->pn - 1, m->cap);
    while (m->slots[u])
      u = (u + 1) & (m->cap - 1);
    m->slots[u] = p;
  }
}

static int write_bytes(tc_memimage *m, uint64_t addr, const uint8_t *src,
                       size_t n, bool only_unknown) {
  while (n) {
    uint64_t pn = addr >> PAGE_BITS;
    size_t off = (size_t)(addr & (PAGE_SIZE - 1));
    size_t k = PAGE_SIZE - off < n ? PAGE_SIZE - off : n;
    page *p = get_or_add(m, pn);
    if (!p)
      return -1;
    for (size_t i = 0; i < k; i++) {
      size_t b = off + i;
      bool known = p->known[b >> 3] & (1u << (b & 7));
      if (only_unknown && known)
        continue;
      p->data[b] = src[i];
      p->known[b >> 3] |= (uint8_t)(1u << (b & 7));
    }
    addr += k;
    src += k;
    n -= k;
  }
  return 0;
}

static int add_range(tc_memimage *m, uint64_t start, uint64_t end) {
  if (m->nranges == m->capranges) {
    size_t cap = m->capranges ? m->capranges * 2 : 16;
    range *nr = realloc(m->ranges, cap * sizeof *nr);
    if (!nr)
      return -1;
    m->ranges = nr;
    m->capranges = cap;
  }
  m->ranges[m->nranges++] = (range){start, end};
  return 0;
}

static void remove_range(tc_memimage *m, uint64_t start, uint64_t end) {
  for (size_t i = 0; i < m->nranges; i++) {
    range *r = &m->ranges[i];
    if (r->end <= start || r->start >= end)
      continue;
    if (r->start < start && r->end > end) { /* keep both sides */
      range tail = {end, r->end};
      r->end = start;
      add_range(m, tail.start, tail.end);
    } else if (r->start < start) {
      r->end = start;
    } else if (r->end > end) {
      r->start = end;
    } else {
      *r = m->ranges[--m->nranges];
      i--;
    }
  }
  if (end <= start)
    return;
  uint64_t first = start >> PAGE_BITS, last = (end - 1) >> PAGE_BITS;
  if (last - first < m->cap) {
    for (uint64_t pn = first; pn <= last; pn++)
      drop(m, pn);
    return;
  }
  /* A range of more pages than the table has slots (a corrupt trace may
   * unmap 2^60 bytes): walk the table instead, dropping in batches since
   * drop() moves entries around. */
  for (;;) {
    uint64_t batch[256];
    size_t n = 0;
    for (size_t i = 0; i < m->cap && n < 256; i++)
      if (m->slots[i] && m->slots[i]->pn - 1 >= first &&
          m->slots[i]->pn - 1 <= last)
        batch[n++] = m->slots[i]->pn - 1;
    if (n == 0)
      return;
    for (size_t i = 0; i < n; i++)
      drop(m, batch[i]);
  }
}

static bool all_zero(const uint8_t *p, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (p[i])
      return false;
  return true;
}

static int apply_map(tc_memimage *m, const tc_map_event *e) {
  if (e->size == 0 || e->addr + e->size < e->addr)
    return 0;
  remove_range(m, e->addr, e->addr + e->size);
  if (add_range(m, e->addr, e->addr + e->size) < 0)
    return -1;
  if (!e->data)
    return 0;
  /* Only non-zero pages take memory; the range answers for the rest. */
  for (uint64_t off = 0; off < e->size; off += PAGE_SIZE) {
    size_t k = e->size - off < PAGE_SIZE ? (size_t)(e->size - off) : PAGE_SIZE;
    if (!all_zero(e->data + off, k) &&
        write_bytes(m, e->addr + off, e->data + off, k, false) < 0)
      return -1;
  }
  return 0;
}

static int apply_accesses(tc_memimage *m, const tc_mem_access *a, uint32_t n) {
  for (uint32_t i = 0; i < n; i++) {
    if (a[i].kind == TC_MEM_WRITE) {
      if (write_bytes(m, a[i].addr, a[i].after, a[i].size, false) < 0)
        return -1;
    } else if (write_bytes(m, a[i].addr, a[i].before, a[i].size, false) < 0) {
      /* a read is what memory held: it also corrects the image */
      return -1;
    }
  }
  return 0;
}

int tc_memimage_apply(tc_memimage *m, const tc_event *ev) {
  switch (ev->kind) {
  case TC_EV_MAP:
    return apply_map(m, &ev->u.map);
  case TC_EV_UNMAP:
    remove_range(m, ev->u.map.addr, ev->u.map.addr + ev->u.map.size);
    return 0;
  case TC_EV_INSN:
    return apply_accesses(m, ev->u.insn.mem, ev->u.insn.nmem);
  case TC_EV_SYSCALL:
    return apply_accesses(m, ev->u.sys.mem, ev->u.sys.nmem);
  case TC_EV_SIGNAL:
    return apply_accesses(m, ev->u.sig.mem, ev->u.sig.nmem);
  default:
    return 0;
  }
}

int tc_memimage_read(const tc_memimage *m, uint64_t addr, uint8_t *out,
                     size_t n) {
  int all = 1;
  while (n) {
    size_t off = (size_t)(addr & (PAGE_SIZE - 1));
    size_t k = PAGE_SIZE - off < n ? PAGE_SIZE - off : n;
    const page *p = find(m, addr >> PAGE_BITS);
    if (!p) {
      /* mapped but never written reads as known zeros */
      memset(out, 0, k);
      if (!in_ranges(m, addr))
        all = 0;
    } else {
      for (size_t i = 0; i < k; i++) {
        size_t b = off + i;
        bool known = p->known[b >> 3] & (1u << (b & 7));
        out[i] = known ? p->data[b] : 0;
        all &= known;
      }
    }
    addr += k;
    out += k;
    n -= k;
  }
  return all;
}

size_t tc_memimage_read_known(const tc_memimage *m, uint64_t addr, uint8_t *out,
                              size_t n) {
  if (n > UINT64_MAX - addr) /* no wrap past the top of the address space */
    n = (size_t)(UINT64_MAX - addr);
  size_t done = 0;
  while (done < n) {
    uint64_t a = addr + done;
    size_t off = (size_t)(a & (PAGE_SIZE - 1));
    size_t k = PAGE_SIZE - off < n - done ? PAGE_SIZE - off : n - done;
    const page *p = find(m, a >> PAGE_BITS);
    if (!p) {
      /* mapped but never written: known zeros, up to the range's end */
      uint64_t end = a;
      for (size_t i = 0; i < m->nranges; i++)
        if (a >= m->ranges[i].start && a < m->ranges[i].end)
          end = m->ranges[i].end;
      if (end == a)
        return done;
      if (end - a < k)
        k = (size_t)(end - a);
      memset(out + done, 0, k);
      done += k;
      continue;
    }
    for (size_t i = 0; i < k;) {
      size_t b = off + i;
      if ((b & 7) == 0 && k - i >= 8 && p->known[b >> 3] == 0xff) {
        memcpy(out + done + i, p->data + b, 8); /* 8 known bytes */
        i += 8;
        continue;
      }
      if (!(p->known[b >> 3] & (1u << (b & 7))))
        return done + i;
      out[done + i] = p->data[b];
      i++;
    }
    done += k;
  }
  return done;
}
