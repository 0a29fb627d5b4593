/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Page store and interval sets of the REVEN format module (rvn.h), and
 * the rvnbinresource container header both sides share. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/byteorder.h"
#include "writers/rvn/rvn.h"

/* ---------------------------------------------------------------- pages */

int rvn_pages_init(rvn_pages *p) {
  memset(p, 0, sizeof *p);
  p->cap = 256;
  p->slots = calloc(p->cap, sizeof *p->slots);
  return p->slots ? 0 : -1;
}

void rvn_pages_free(rvn_pages *p) {
  if (!p->slots)
    return;
  for (size_t i = 0; i < p->cap; i++)
    free(p->slots[i]);
  free(p->slots);
  memset(p, 0, sizeof *p);
}

void rvn_pages_clear(rvn_pages *p) {
  for (size_t i = 0; i < p->cap; i++) {
    free(p->slots[i]);
    p->slots[i] = NULL;
  }
  p->used = 0;
  p->last = NULL;
}

static size_t hash_pn(uint64_t pn, size_t cap) {
  return (size_t)((pn * 0x9e3779b97f4a7c15ull) >> 20) & (cap - 1);
}

rvn_page *rvn_pages_get(rvn_pages *p, uint64_t pn) {
  if (p->last && p->last->pn == pn + 1)
    return p->last;
  for (size_t s = hash_pn(pn, p->cap);; s = (s + 1) & (p->cap - 1)) {
    rvn_page *pg = p->slots[s];
    if (!pg)
      return NULL;
    if (pg->pn == pn + 1)
      return p->last = pg;
  }
}

static int grow(rvn_pages *p) {
  size_t ncap = p->cap * 2;
  rvn_page **ns = calloc(ncap, sizeof *ns);
  if (!ns)
    return -1;
  for (size_t i = 0; i < p->cap; i++) {
    rvn_page *pg = p->slots[i];
    if (!pg)
      continue;
    size_t s = hash_pn(pg->pn - 1, ncap);
    while (ns[s])
      s = (s + 1) & (ncap - 1);
    ns[s] = pg;
  }
  free(p->slots);
  p->slots = ns;
  p->cap = ncap;
  return 0;
}

rvn_page *rvn_pages_add(rvn_pages *p, uint64_t pn, int *created) {
  rvn_page *pg = rvn_pages_get(p, pn);
  if (created)
    *created = 0;
  if (pg)
    return pg;
  if ((p->used + 1) * 2 > p->cap && grow(p) < 0)
    return NULL;
  pg = calloc(1, sizeof *pg);
  if (!pg)
    return NULL;
  pg->pn = pn + 1;
  size_t s = hash_pn(pn, p->cap);
  while (p->slots[s])
    s = (s + 1) & (p->cap - 1);
  p->slots[s] = pg;
  p->used++;
  if (created)
    *created = 1;
  return p->last = pg;
}

/* ------------------------------------------------------------ intervals */

int rvn_ivset_add(rvn_ivset *s, uint64_t start, uint64_t end) {
  if (end <= start)
    return 0;
  if (s->n == s->cap) {
    size_t cap = s->cap ? s->cap * 2 : 64;
    rvn_iv *nv = realloc(s->v, cap * sizeof *nv);
    if (!nv)
      return -1;
    s->v = nv;
    s->cap = cap;
  }
  s->v[s->n++] = (rvn_iv){start, end};
  s->merged = 0;
  return 0;
}

static int cmp_iv(const void *x, const void *y) {
  const rvn_iv *a = x, *b = y;
  return a->start < b->start ? -1 : a->start > b->start;
}

void rvn_ivset_merge(rvn_ivset *s) {
  if (s->merged)
    return;
  if (s->n > 1)
    qsort(s->v, s->n, sizeof *s->v, cmp_iv);
  size_t out = 0;
  for (size_t i = 0; i < s->n; i++) {
    if (out && s->v[i].start <= s->v[out - 1].end) {
      if (s->v[i].end > s->v[out - 1].end)
        s->v[out - 1].end = s->v[i].end;
    } else {
      s->v[out++] = s->v[i];
    }
  }
  s->n = out;
  s->merged = 1;
  s->hint = 0;
}

int rvn_ivset_covers(rvn_ivset *s, uint64_t addr, uint64_t size) {
  rvn_ivset_merge(s);
  uint64_t end = addr + size;
  if (end < addr)
    return 0;
  if (s->hint < s->n && addr >= s->v[s->hint].start && end <= s->v[s->hint].end)
    return 1;
  size_t lo = 0, hi = s->n;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (s->v[mid].end <= addr)
      lo = mid + 1;
    else
      hi = mid;
  }
  if (lo < s->n && addr >= s->v[lo].start && end <= s->v[lo].end) {
    s->hint = lo;
    return 1;
  }
  return 0;
}

void rvn_ivset_free(rvn_ivset *s) {
  free(s->v);
  memset(s, 0, sizeof *s);
}

/* --------------------------------------------------------------- header */

/* u64 length, the text, zero padding to `width`. */
static size_t put_field(uint8_t *p, const char *s, size_t width) {
  size_t n = strlen(s);
  if (n > width)
    n = width;
  put_le(p, n, 8);
  memset(p + 8, 0, width);
  memcpy(p + 8, s, n);
  return 8 + width;
}

void rvn_header_build(uint8_t *out, uint32_t type, const char *tool_info) {
  size_t o = 0;
  put_le(out + o, RVN_MAGIC, 8);
  o += 8;
  put_le(out + o, 1, 4); /* metadata version */
  o += 4;
  put_le(out + o, type, 4);
  o += 4;
  o += put_field(out + o, RVN_FORMAT_VERSION, 512);
  o += put_field(out + o, "tracecorn", 512);
  o += put_field(out + o, TC_VERSION_STRING, 512);
  o += put_field(out + o, tool_info && *tool_info ? tool_info : "tracecorn",
                 2048);
  put_le(out + o, RVN_GENERATION_DATE, 8);
}

/* Digits without a leading zero (unless "0"); advances *s. */
static int semver_num(const char **s, uint64_t *v) {
  const char *p = *s;
  if (*p < '0' || *p > '9')
    return 0;
  if (*p == '0' && p[1] >= '0' && p[1] <= '9')
    return 0;
  uint64_t x = 0;
  while (*p >= '0' && *p <= '9') {
    if (x > (UINT64_MAX - 9) / 10)
      return 0;
    x = x * 10 + (uint64_t)(*p++ - '0');
  }
  *s = p;
  if (v)
    *v = x;
  return 1;
}

/* Dot-separated non-empty identifiers of [0-9A-Za-z-]. */
static int semver_ids(const char **s) {
  const char *p = *s;
  for (;;) {
    const char *b = p;
    while ((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'z') ||
           (*p >= 'A' && *p <= 'Z') || *p == '-')
      p++;
    if (p == b)
      return 0;
    if (*p != '.')
      break;
    p++;
  }
  *s = p;
  return 1;
}

int rvn_semver(const char *s, uint64_t *major) {
  if (!semver_num(&s, major) || *s++ != '.' || !semver_num(&s, NULL) ||
      *s++ != '.' || !semver_num(&s, NULL))
    return 0;
  if (*s == '-') {
    s++;
    if (!semver_ids(&s))
      return 0;
  }
  if (*s == '+') {
    s++;
    if (!semver_ids(&s))
      return 0;
  }
  return *s == 0;
}

/* Reads one u64-length text field of `width` bytes. */
static int get_field(const uint8_t *p, size_t n, size_t *o, size_t width,
                     char *out, const char *what, char *why, size_t whylen) {
  if (*o + 8 + width > n) {
    snprintf(why, whylen, "truncated container header (%s)", what);
    return -1;
  }
  uint64_t len = get_le(p + *o, 8);
  if (len > width) {
    snprintf(why, whylen,
             "container header: %s is %llu bytes, more than its %zu-byte "
             "field",
             what, (unsigned long long)len, width);
    return -1;
  }
  if (len == 0) {
    snprintf(why, whylen, "container header: empty %s", what);
    return -1;
  }
  memcpy(out, p + *o + 8, len);
  out[len] = 0;
  if (memchr(out, 0, len)) {
    snprintf(why, whylen, "container header: %s holds a NUL byte", what);
    return -1;
  }
  *o += 8 + width;
  return 0;
}

int rvn_header_parse(const uint8_t *p, size_t n, uint32_t want_type,
                     rvn_meta *m, char *why, size_t whylen) {
  memset(m, 0, sizeof *m);
  if (n < 8) {
    snprintf(why, whylen, "Wrong magic (file too short)");
    return -1;
  }
  uint64_t magic = get_le(p, 8);
  size_t o = 8;
  if (magic == RVN_MAGIC) {
    if (n < 12) {
      snprintf(why, whylen, "truncated container header (metadata version)");
      return -1;
    }
    m->metadata_version = (uint32_t)get_le(p + 8, 4);
    o = 12;
    if (m->metadata_version > 1) {
      snprintf(why, whylen, "Metadata version in the future (%u)",
               m->metadata_version);
      return -1;
    }
  } else if (magic == RVN_MAGIC_V0) {
    m->metadata_version = 0;
  } else {
    snprintf(why, whylen, "Wrong magic (not a REVEN binary resource)");
    return -1;
  }
  if (o + 4 > n) {
    snprintf(why, whylen, "truncated container header (type)");
    return -1;
  }
  m->type = (uint32_t)get_le(p + o, 4);
  o += 4;
  if (get_field(p, n, &o, 512, m->format_version, "format version", why,
                whylen) < 0 ||
      get_field(p, n, &o, 512, m->tool_name, "tool name", why, whylen) < 0)
    return -1;
  if (m->metadata_version >= 1) {
    if (get_field(p, n, &o, 512, m->tool_version, "tool version", why, whylen) <
        0)
      return -1;
  } else {
    snprintf(m->tool_version, sizeof m->tool_version, "1.0.0-prerelease");
  }
  if (get_field(p, n, &o, 2048, m->tool_info, "tool info", why, whylen) < 0)
    return -1;
  if (o + 8 > n) {
    snprintf(why, whylen, "truncated container header (generation date)");
    return -1;
  }
  m->generation_date = get_le(p + o, 8);
  m->size = o + 8;
  if (m->type != want_type) {
    snprintf(why, whylen,
             "resource type %u, expected %u (%s); is this the other file of "
             "the pair?",
             m->type, want_type,
             want_type == RVN_TYPE_TRACE ? "TraceBin" : "TraceCache");
    return -1;
  }
  uint64_t major = 0;
  if (!rvn_semver(m->format_version, &major)) {
    snprintf(why, whylen, "format version \"%s\" is not a semantic version",
             m->format_version);
    return -1;
  }
  if (major != 1) {
    snprintf(why, whylen, "Incompatible version %s: %s version",
             m->format_version, major < 1 ? "Past" : "Future");
    return -1;
  }
  if (!rvn_semver(m->tool_version, NULL)) {
    snprintf(why, whylen, "tool version \"%s\" is not a semantic version",
             m->tool_version);
    return -1;
  }
  return 0;
}
