/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Coverage and disassembler interchange formats: drcov (DynamoRIO's
 * coverage log, read by Lighthouse, Lightkeeper, bncov) and Tenet's text
 * trace. Real guests are recorded as tct + drcov + tenet; the drcov file
 * is read back by an independent parser written here from DynamoRIO's
 * layout, the tenet text is checked line by line against the tct
 * recording, and `tracecorn verify` / `convert` round trips, files as
 * DynamoRIO and Tenet's tracers write them, and corrupt inputs are
 * exercised. */
#include <ctype.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testutil.h"
#include "tracecorn/tracecorn.h"

static const tc_format *DRCOV, *TENET, *TCT;

/* ------------------------------------------------------------- recording */

typedef struct rinsn {
  uint64_t pc;
  uint8_t size;
  uint8_t bytes[16];
} rinsn;

typedef struct rmap {
  uint64_t addr, size, file_offset;
  uint32_t prot;
  char name[512];
} rmap;

typedef struct recording {
  const tc_arch *arch;
  char exe[512];
  uint64_t entry, load_base;
  rinsn *in;
  size_t n, cap;
  rmap maps[64];
  int nmaps;
  int failed;
  char tct[256], drcov[256], tenet[256];
  int has_tenet;
} recording;

static int collect(void *ctx, const tc_event *ev, tc_error *err) {
  recording *r = ctx;
  (void)err;
  if (ev->kind == TC_EV_MAP && r->nmaps < 64) {
    rmap *m = &r->maps[r->nmaps++];
    m->addr = ev->u.map.addr;
    m->size = ev->u.map.size;
    m->file_offset = ev->u.map.file_offset;
    m->prot = ev->u.map.prot;
    snprintf(m->name, sizeof m->name, "%s",
             ev->u.map.name ? ev->u.map.name : "");
  }
  if (ev->kind != TC_EV_INSN)
    return 0;
  if (r->n == r->cap) {
    r->cap = r->cap ? 2 * r->cap : 4096;
    rinsn *p = realloc(r->in, r->cap * sizeof *p);
    if (!p) {
      r->failed = 1;
      return -1;
    }
    r->in = p;
  }
  rinsn *i = &r->in[r->n++];
  i->pc = ev->u.insn.pc;
  i->size = ev->u.insn.size;
  memcpy(i->bytes, ev->u.insn.bytes, 16);
  return 0;
}

/* Records a guest as tct, drcov (with writer options opts, NULL-ended)
 * and tenet when the arch allows, collecting instructions and maps. */
static int record(const char *guest, const char *arg, const char *tag,
                  const char *const *opts, recording *r) {
  memset(r, 0, sizeof *r);
  const char *prog = tu_guest(guest);
  if (!tu_have(prog)) {
    fprintf(stderr, "missing guest %s\n", prog);
    return -1;
  }
  tc_error err = {{0}};
  tc_options opt;
  tc_options_init(&opt);
  opt.quiet = 1;
  opt.writer_options = opts;
  int devnull = open("/dev/null", O_WRONLY);
  opt.stdout_fd = devnull;
  tc_session *s = tc_session_new(&opt, &err);
  if (!s)
    return -1;
  const char *argv[3] = {prog, arg, NULL};
  int rc = tc_session_load_elf(s, prog, argv, &err);
  const tc_trace_info *info = rc == 0 ? tc_session_info(s) : NULL;
  if (info) {
    r->arch = info->arch;
    snprintf(r->exe, sizeof r->exe, "%s", info->exe_path);
    r->entry = info->entry;
    r->load_base = info->load_base;
    snprintf(r->tct, sizeof r->tct, "%s.tct", tu_tmp(tag));
    snprintf(r->drcov, sizeof r->drcov, "%s.drcov", tu_tmp(tag));
    snprintf(r->tenet, sizeof r->tenet, "%s.tenet", tu_tmp(tag));
    r->has_tenet = TENET->supports(info->arch, NULL) == 0;
    rc = tc_session_add_writer(s, TCT, r->tct, &err);
    if (rc == 0)
      rc = tc_session_add_writer(s, DRCOV, r->drcov, &err);
    if (rc == 0 && r->has_tenet)
      rc = tc_session_add_writer(s, TENET, r->tenet, &err);
    if (rc == 0)
      rc = tc_session_add_sink(s, collect, r, &err);
    tc_run_result res;
    tc_run_result_init(&res);
    if (rc == 0)
      rc = tc_session_run(s, &res, &err);
  }
  tc_session_free(s);
  close(devnull);
  if (rc < 0 || r->failed) {
    fprintf(stderr, "%s: %s\n", guest, err.msg);
    return -1;
  }
  return 0;
}

static void free_recording(recording *r) { free(r->in); }

/* ------------------------------------------- an independent drcov parser */

typedef struct dmod {
  unsigned id, containing;
  uint64_t base, end, entry, offset, preferred;
  char path[512];
} dmod;

typedef struct dbb {
  uint32_t start;
  uint16_t size, mod;
} dbb;

typedef struct dfile {
  int version, table_version;
  char flavor[64];
  dmod mods[64];
  unsigned nmods;
  dbb *bbs;
  size_t nbbs;
} dfile;

/* One text line at *pos (without '\n'); NULL at the end. */
static char *take_line(const uint8_t *f, size_t len, size_t *pos, char *buf,
                       size_t max) {
  if (*pos >= len)
    return NULL;
  const uint8_t *nl = memchr(f + *pos, '\n', len - *pos);
  if (!nl)
    return NULL;
  size_t n = (size_t)(nl - (f + *pos));
  if (n >= max)
    return NULL;
  memcpy(buf, f + *pos, n);
  buf[n] = 0;
  *pos += n + 1;
  return buf;
}

/* "0x" + exactly digits hex digits at s; the value in *v, the end in
 * *end. */
static int hexfield(const char *s, int prefix, unsigned digits, uint64_t *v,
                    const char **end) {
  if (prefix && strncmp(s, "0x", 2) != 0)
    return -1;
  s += prefix ? 2 : 0;
  size_t n = strspn(s, "0123456789abcdef");
  if (n != digits)
    return -1;
  *v = strtoull(s, NULL, 16);
  *end = s + n;
  return 0;
}

/* Parses a drcov file as DynamoRIO's drcov writes it on Linux: version 2
 * (module table version 2) or version 3 (module table version 5). Returns
 * 0, or -1 with the reason in why. */
static int parse_drcov(const uint8_t *f, size_t len, unsigned ptr_size,
                       dfile *d, char *why, size_t whymax) {
  memset(d, 0, sizeof *d);
  char line[1024];
  size_t pos = 0;
  unsigned digits = ptr_size == 8 ? 16 : 8;
#define BAD(...)                                                               \
  do {                                                                         \
    snprintf(why, whymax, __VA_ARGS__);                                        \
    return -1;                                                                 \
  } while (0)
  if (!take_line(f, len, &pos, line, sizeof line) ||
      sscanf(line, "DRCOV VERSION: %d", &d->version) != 1)
    BAD("no version line");
  if (!take_line(f, len, &pos, line, sizeof line) ||
      strncmp(line, "DRCOV FLAVOR: ", 14) != 0)
    BAD("no flavor line");
  snprintf(d->flavor, sizeof d->flavor, "%.60s", line + 14);
  unsigned count;
  char tail;
  if (!take_line(f, len, &pos, line, sizeof line) ||
      sscanf(line, "Module Table: version %d, count %u%c", &d->table_version,
             &count, &tail) != 2)
    BAD("bad module table header '%.80s'", line);
  if (count > 64)
    BAD("too many modules");
  const char *want = d->table_version == 2
                         ? "Columns: id, base, end, entry, path"
                         : "Columns: id, containing_id, start, end, entry, "
                           "offset, preferred_base, path";
  if (!take_line(f, len, &pos, line, sizeof line) || strcmp(line, want) != 0)
    BAD("columns line '%.80s'", line);
  for (unsigned i = 0; i < count; i++) {
    dmod *m = &d->mods[i];
    if (!take_line(f, len, &pos, line, sizeof line))
      BAD("module %u missing", i);
    /* "%3u, " then the fields DynamoRIO prints with PFX (0x + 8 or 16
     * digits) and, in table version 5, the offset as 16 bare digits. */
    const char *s = line;
    char *e;
    m->id = (unsigned)strtoul(s, &e, 10);
    if (e - s != 3 || strncmp(e, ", ", 2) != 0)
      BAD("module row '%.80s': id", line);
    s = e + 2;
    if (d->table_version == 5) {
      m->containing = (unsigned)strtoul(s, &e, 10);
      if (e - s != 3 || strncmp(e, ", ", 2) != 0)
        BAD("module row '%.80s': containing id", line);
      s = e + 2;
    } else {
      m->containing = m->id;
    }
    const char *end;
    if (hexfield(s, 1, digits, &m->base, &end) || strncmp(end, ", ", 2) ||
        hexfield(end + 2, 1, digits, &m->end, &end) || strncmp(end, ", ", 2) ||
        hexfield(end + 2, 1, digits, &m->entry, &end) || strncmp(end, ", ", 2))
      BAD("module row '%.80s': addresses", line);
    s = end + 2;
    if (d->table_version == 5) {
      if (hexfield(s, 0, 16, &m->offset, &end) || strncmp(end, ", ", 2) ||
          hexfield(end + 2, 1, digits, &m->preferred, &end) ||
          strncmp(end, ",  ", 3))
        BAD("module row '%.80s': offset/preferred base", line);
      s = end + 3;
    }
    snprintf(m->path, sizeof m->path, "%.500s", s);
    if (m->id != i)
      BAD("module id %u at row %u", m->id, i);
  }
  d->nmods = count;
  unsigned long nbbs;
  if (!take_line(f, len, &pos, line, sizeof line) ||
      sscanf(line, "BB Table: %lu bbs%c", &nbbs, &tail) != 1)
    BAD("bad BB table header '%.80s'", line);
  if (len - pos != nbbs * 8)
    BAD("%zu bytes after the BB header for %lu bbs", len - pos, nbbs);
  d->nbbs = nbbs;
  d->bbs = calloc(nbbs ? nbbs : 1, sizeof *d->bbs);
  for (size_t i = 0; i < nbbs; i++) {
    const uint8_t *p = f + pos + 8 * i;
    d->bbs[i].start = (uint32_t)p[0] | (uint32_t)p[1] << 8 |
                      (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
    d->bbs[i].size = (uint16_t)(p[4] | p[5] << 8);
    d->bbs[i].mod = (uint16_t)(p[6] | p[7] << 8);
  }
#undef BAD
  return 0;
}

/* ------------------------------------------------------ executed code */

typedef struct pcset {
  uint64_t *pc;
  uint8_t *size, *hit;
  size_t *first; /* index of its first execution */
  size_t n;
} pcset;

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

/* The distinct executed PCs, sorted, with their sizes. */
static void build_pcset(const recording *r, pcset *s) {
  uint64_t *all = malloc((r->n ? r->n : 1) * sizeof *all);
  for (size_t i = 0; i < r->n; i++)
    all[i] = r->in[i].pc;
  qsort(all, r->n, sizeof *all, cmp_u64);
  s->n = 0;
  for (size_t i = 0; i < r->n; i++)
    if (!s->n || all[i] != all[s->n - 1])
      all[s->n++] = all[i];
  s->pc = all;
  s->size = calloc(s->n ? s->n : 1, 1);
  s->hit = calloc(s->n ? s->n : 1, 1);
  s->first = calloc(s->n ? s->n : 1, sizeof *s->first);
  for (size_t i = r->n; i-- > 0;) {
    uint64_t *p = bsearch(&r->in[i].pc, s->pc, s->n, sizeof *s->pc, cmp_u64);
    s->size[p - s->pc] = r->in[i].size;
    s->first[p - s->pc] = i;
  }
}

static long pc_index(const pcset *s, uint64_t pc) {
  uint64_t *p = bsearch(&pc, s->pc, s->n, sizeof *s->pc, cmp_u64);
  return p ? (long)(p - s->pc) : -1;
}

static void free_pcset(pcset *s) {
  free(s->pc);
  free(s->size);
  free(s->hit);
  free(s->first);
}

/* x86 control transfers by opcode (an independent classifier): jcc, jmp,
 * call, ret, loop/jcxz, int, syscall/sysenter, indirect ff /2-/5. */
static int x86_cti(const uint8_t *b, unsigned n, int is64) {
  unsigned i = 0;
  while (i < n && (b[i] == 0x66 || b[i] == 0x67 || b[i] == 0xf2 ||
                   b[i] == 0xf3 || b[i] == 0x2e || b[i] == 0x3e ||
                   b[i] == 0x64 || b[i] == 0x65 || b[i] == 0xf0))
    i++;
  if (is64 && i < n && (b[i] & 0xf0) == 0x40)
    i++;
  if (i >= n)
    return 0;
  uint8_t op = b[i];
  if ((op >= 0x70 && op <= 0x7f) || (op >= 0xe0 && op <= 0xe3) || op == 0xe8 ||
      op == 0xe9 || op == 0xeb || op == 0xc2 || op == 0xc3 || op == 0xcd ||
      op == 0xcc)
    return 1;
  if (op == 0xff && i + 1 < n) {
    unsigned reg = (b[i + 1] >> 3) & 7;
    return reg >= 2 && reg <= 5;
  }
  if (op == 0x0f && i + 1 < n)
    return (b[i + 1] >= 0x80 && b[i + 1] <= 0x8f) || b[i + 1] == 0x05 ||
           b[i + 1] == 0x34;
  return 0;
}

/* ------------------------------------------------ drcov of real guests */

/* again: record a second time and compare the bytes (determinism). */
static void check_drcov(const char *guest, const char *arg, int again) {
  recording r;
  char tag[64];
  snprintf(tag, sizeof tag, "cov-%s", guest);
  CU_ASSERT_EQUAL_FATAL(record(guest, arg, tag, NULL, &r), 0);
  CU_ASSERT(r.n > 0);
  size_t len;
  uint8_t *f = tu_read_file(r.drcov, &len);
  CU_ASSERT_PTR_NOT_NULL_FATAL(f);
  dfile d;
  char why[256] = "";
  int prc = parse_drcov(f, len, r.arch->ptr_size, &d, why, sizeof why);
  if (prc)
    fprintf(stderr, "%s: %s\n", guest, why);
  CU_ASSERT_EQUAL_FATAL(prc, 0);
  CU_ASSERT_EQUAL(d.version, 2);
  CU_ASSERT_EQUAL(d.table_version, 2);
  char flavor[32];
  snprintf(flavor, sizeof flavor, "drcov-%u", r.arch->ptr_size * 8);
  CU_ASSERT_STRING_EQUAL(d.flavor, flavor);

  /* The program is module 0: its base and end are those of its maps,
   * its entry the recording's. */
  CU_ASSERT_FATAL(d.nmods >= 1);
  CU_ASSERT_STRING_EQUAL(d.mods[0].path, r.exe);
  uint64_t lo = UINT64_MAX, hi = 0;
  for (int i = 0; i < r.nmaps; i++)
    if (strcmp(r.maps[i].name, r.exe) == 0) {
      if (r.maps[i].addr < lo)
        lo = r.maps[i].addr;
      if (r.maps[i].addr + r.maps[i].size > hi)
        hi = r.maps[i].addr + r.maps[i].size;
    }
  CU_ASSERT_EQUAL(d.mods[0].base, lo);
  CU_ASSERT_EQUAL(d.mods[0].end, hi);
  CU_ASSERT_EQUAL(d.mods[0].entry, r.entry);
  for (unsigned i = 1; i < d.nmods; i++)
    CU_ASSERT_STRING_NOT_EQUAL(d.mods[i].path, r.exe);

  /* Every block starts at an executed instruction, is tiled exactly by
   * executed instructions, and starts only once; every executed
   * instruction is in a block. */
  pcset s;
  build_pcset(&r, &s);
  uint64_t *starts = malloc((d.nbbs ? d.nbbs : 1) * sizeof *starts);
  size_t bad = 0, midcti = 0;
  int is_x86 = r.arch->id == TC_ARCH_X86_64 || r.arch->id == TC_ARCH_X86;
  for (size_t i = 0; i < d.nbbs; i++) {
    const dbb *b = &d.bbs[i];
    CU_ASSERT(b->mod < d.nmods);
    if (b->mod >= d.nmods)
      continue;
    uint64_t start = d.mods[b->mod].base + b->start, end = start + b->size;
    starts[i] = start;
    CU_ASSERT(b->size > 0);
    uint64_t pc = start;
    while (pc < end) {
      long k = pc_index(&s, pc);
      if (k < 0) {
        bad++;
        break;
      }
      s.hit[k] = 1;
      /* DynamoRIO blocks end at control transfers: none inside. */
      if (is_x86 && pc + s.size[k] < end) {
        const rinsn *ri = &r.in[s.first[k]];
        midcti += x86_cti(ri->bytes, ri->size, r.arch->id == TC_ARCH_X86_64);
      }
      pc += s.size[k];
    }
    if (pc != end)
      bad++;
  }
  size_t uncovered = 0;
  for (size_t k = 0; k < s.n; k++)
    uncovered += !s.hit[k];
  CU_ASSERT_EQUAL(bad, 0);
  CU_ASSERT_EQUAL(uncovered, 0);
  CU_ASSERT_EQUAL(midcti, 0);
  if (bad || uncovered || midcti)
    fprintf(stderr,
            "%s: %zu bad blocks, %zu uncovered pcs, %zu mid-block "
            "control transfers\n",
            guest, bad, uncovered, midcti);
  /* The first block starts at the first instruction (first-execution
   * order); no start twice. */
  CU_ASSERT(d.nbbs > 0 && starts[0] == r.in[0].pc);
  qsort(starts, d.nbbs, sizeof *starts, cmp_u64);
  size_t dups = 0;
  for (size_t i = 1; i < d.nbbs; i++)
    dups += starts[i] == starts[i - 1];
  CU_ASSERT_EQUAL(dups, 0);
  /* x86: after a conditional branch that falls through, a block starts. */
  if (is_x86)
    for (size_t i = 0; i + 1 < r.n; i++) {
      const rinsn *a = &r.in[i];
      if (x86_cti(a->bytes, a->size, r.arch->id == TC_ARCH_X86_64) &&
          r.in[i + 1].pc == a->pc + a->size)
        CU_ASSERT(bsearch(&r.in[i + 1].pc, starts, d.nbbs, sizeof *starts,
                          cmp_u64) != NULL);
    }
  free(starts);
  free_pcset(&s);
  free(d.bbs);
  free(f);

  if (!again) {
    free_recording(&r);
    return;
  }
  /* A second recording gives the same bytes. */
  recording r2;
  snprintf(tag, sizeof tag, "cov2-%s", guest);
  CU_ASSERT_EQUAL_FATAL(record(guest, arg, tag, NULL, &r2), 0);
  size_t l1, l2;
  uint8_t *a = tu_read_file(r.drcov, &l1), *b = tu_read_file(r2.drcov, &l2);
  CU_ASSERT(a && b && l1 == l2 && memcmp(a, b, l1) == 0);
  free(a);
  free(b);
  if (r.has_tenet) {
    a = tu_read_file(r.tenet, &l1);
    b = tu_read_file(r2.tenet, &l2);
    CU_ASSERT(a && b && l1 == l2 && memcmp(a, b, l1) == 0);
    free(a);
    free(b);
  }
  free_recording(&r2);
  free_recording(&r);
}

static void test_drcov_x86_64(void) {
  check_drcov("hello64", "x", 1);
  check_drcov("insns64", NULL, 1);
  check_drcov("hello64-pie", NULL, 1);
  check_drcov("segv64", NULL, 1);
}
static void test_drcov_glibc(void) { check_drcov("glibc64", NULL, 0); }
static void test_drcov_i386(void) {
  check_drcov("hello32", "x", 1);
  check_drcov("insns32", NULL, 1);
}
static void test_drcov_other_arches(void) {
  check_drcov("hello-armhf", NULL, 1);
  check_drcov("interwork-armhf", NULL, 1);
  check_drcov("hello-arm64", NULL, 1);
  check_drcov("hello-mipsel", NULL, 1);
  check_drcov("hello-mips", NULL, 1);
}

/* drcov version 3 (-O drcov.version=3): module table version 5, one row
 * per segment with the maps' file offsets, blocks relative to their
 * segment. */
static void test_drcov_version3(void) {
  static const char *const opts[] = {"drcov.version=3", NULL};
  recording r;
  CU_ASSERT_EQUAL_FATAL(record("hello64-pie", NULL, "cov-v3", opts, &r), 0);
  size_t len;
  uint8_t *f = tu_read_file(r.drcov, &len);
  CU_ASSERT_PTR_NOT_NULL_FATAL(f);
  dfile d;
  char why[256] = "";
  int prc = parse_drcov(f, len, 8, &d, why, sizeof why);
  if (prc)
    fprintf(stderr, "v3: %s\n", why);
  CU_ASSERT_EQUAL_FATAL(prc, 0);
  CU_ASSERT_EQUAL(d.version, 3);
  CU_ASSERT_EQUAL(d.table_version, 5);
  /* One row per map of the program, in address order, all contained in
   * row 0; preferred bases are the link-time addresses (PIE: from 0). */
  int nexe = 0;
  for (int i = 0; i < r.nmaps; i++)
    if (strcmp(r.maps[i].name, r.exe) == 0) {
      CU_ASSERT_FATAL((unsigned)nexe < d.nmods);
      const dmod *m = &d.mods[nexe++];
      CU_ASSERT_EQUAL(m->base, r.maps[i].addr);
      CU_ASSERT_EQUAL(m->end, r.maps[i].addr + r.maps[i].size);
      CU_ASSERT_EQUAL(m->offset, r.maps[i].file_offset);
      CU_ASSERT_EQUAL(m->preferred, r.maps[i].addr - r.load_base);
      CU_ASSERT_EQUAL(m->containing, 0);
      CU_ASSERT_STRING_EQUAL(m->path, r.exe);
    }
  CU_ASSERT(nexe >= 2);
  CU_ASSERT(r.load_base != 0);
  CU_ASSERT_EQUAL(d.mods[0].preferred, 0);
  pcset s;
  build_pcset(&r, &s);
  size_t bad = 0;
  for (size_t i = 0; i < d.nbbs; i++) {
    const dbb *b = &d.bbs[i];
    CU_ASSERT_FATAL(b->mod < d.nmods);
    uint64_t start = d.mods[b->mod].base + b->start;
    /* relative to the segment: inside it */
    CU_ASSERT(start + b->size <= d.mods[b->mod].end);
    long k = pc_index(&s, start);
    if (k < 0)
      bad++;
    for (uint64_t pc = start; k >= 0 && pc < start + b->size;) {
      s.hit[k] = 1;
      pc += s.size[k];
      k = pc_index(&s, pc);
      if (k < 0 && pc < start + b->size)
        bad++;
    }
  }
  size_t uncovered = 0;
  for (size_t k = 0; k < s.n; k++)
    uncovered += !s.hit[k];
  CU_ASSERT_EQUAL(bad, 0);
  CU_ASSERT_EQUAL(uncovered, 0);
  free_pcset(&s);
  free(d.bbs);
  free(f);

  /* version 3 -> 2 by convert is what recording version 2 gives */
  recording r2;
  CU_ASSERT_EQUAL_FATAL(record("hello64-pie", NULL, "cov-v2", NULL, &r2), 0);
  char *out = NULL;
  const char *conv = tu_tmp("cov-v3to2.drcov");
  CU_ASSERT_EQUAL(tu_run_merge(&out, TC_CLI, "convert", r.drcov, "--to",
                               "drcov", conv, NULL),
                  0);
  free(out);
  size_t l1, l2;
  uint8_t *a = tu_read_file(conv, &l1), *b = tu_read_file(r2.drcov, &l2);
  CU_ASSERT(a && b && l1 == l2 && memcmp(a, b, l1) == 0);
  free(a);
  free(b);
  free_recording(&r2);
  free_recording(&r);
}

/* ------------------------------------------------- tenet line by line */

static const char *const tenet_x64[] = {
    "rax", "rbx", "rcx", "rdx", "rbp", "rsp", "rsi", "rdi", "r8",
    "r9",  "r10", "r11", "r12", "r13", "r14", "r15", "rip", NULL};
static const char *const tenet_x86[] = {"eax", "ebx", "ecx", "edx", "ebp",
                                        "esp", "esi", "edi", "eip", NULL};
static const char *const tenet_arm[] = {"r0",  "r1", "r2", "r3", "r4",  "r5",
                                        "r6",  "r7", "r8", "r9", "r10", "r11",
                                        "r12", "sp", "lr", "pc", NULL};

typedef struct strbuf {
  char *p;
  size_t n, cap;
} strbuf;

static void sb_add(strbuf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void sb_add(strbuf *b, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int k = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (b->n + (size_t)k + 1 > b->cap) {
    b->cap = (b->n + (size_t)k + 1) * 2;
    b->p = realloc(b->p, b->cap);
  }
  va_start(ap, fmt);
  vsnprintf(b->p + b->n, (size_t)k + 1, fmt, ap);
  va_end(ap);
  b->n += (size_t)k;
}

static void sb_mem(strbuf *b, const char *kind, uint64_t addr, const uint8_t *v,
                   uint32_t n) {
  sb_add(b, ",%s=0x%" PRIx64 ":", kind, addr);
  for (uint32_t i = 0; i < n; i++)
    sb_add(b, "%02x", v[i]);
}

/* The tenet file of a recording, line by line against the tct file read
 * back: line i holds the registers that changed since line i-1 (all on
 * line 0) in Tenet's order, the PC, then the memory instruction i-1 read
 * and wrote and what its syscall wrote. */
static void check_tenet(const recording *r) {
  const char *const *names = r->arch->id == TC_ARCH_X86_64 ? tenet_x64
                             : r->arch->id == TC_ARCH_X86  ? tenet_x86
                                                           : tenet_arm;
  int idx[20], nn = 0;
  for (; names[nn]; nn++)
    idx[nn] = tc_arch_reg_index(r->arch, names[nn]);
  size_t len;
  char *text = (char *)tu_read_file(r->tenet, &len);
  CU_ASSERT_PTR_NOT_NULL_FATAL(text);
  tc_error err = {{0}};
  tc_reader *rd = TCT->open_reader(r->tct, &err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(rd);
  tc_event ev;
  strbuf pend = {0}, want = {0};
  uint64_t last[20] = {0}, after[20] = {0};
  size_t line = 0, bad = 0;
  char *cur = text;
  uint64_t mask = r->arch->ptr_size == 8 ? UINT64_MAX : UINT32_MAX;
  while (TCT->next_event(rd, &ev, &err) == 1) {
    if (ev.kind == TC_EV_SYSCALL) {
      for (uint32_t i = 0; i < ev.u.sys.nmem; i++)
        sb_mem(&pend, "mw", ev.u.sys.mem[i].addr, ev.u.sys.mem[i].after,
               ev.u.sys.mem[i].size);
      continue;
    }
    if (ev.kind != TC_EV_INSN)
      continue;
    const tc_insn_event *in = &ev.u.insn;
    want.n = 0;
    sb_add(&want, "%s", "");
    for (int k = 0; k + 1 < nn; k++) {
      uint64_t v = tc_state_get(r->arch, in->state_before, idx[k]);
      if (line == 0 || v != last[k])
        sb_add(&want, "%s=0x%" PRIx64 ",", names[k], v);
      last[k] = v;
    }
    sb_add(&want, "%s=0x%" PRIx64 "%s", names[nn - 1], in->pc & mask,
           pend.n ? pend.p : "");
    pend.n = 0;
    if (pend.p)
      pend.p[0] = 0;
    for (uint32_t i = 0; i < in->nmem; i++) {
      const tc_mem_access *m = &in->mem[i];
      if (m->size)
        sb_mem(&pend, m->kind == TC_MEM_WRITE ? "mw" : "mr", m->addr,
               m->kind == TC_MEM_WRITE ? m->after : m->before, m->size);
    }
    for (int k = 0; k < nn; k++)
      after[k] = tc_state_get(r->arch, in->state_after, idx[k]);
    char *nl = strchr(cur, '\n');
    CU_ASSERT_PTR_NOT_NULL_FATAL(nl);
    *nl = 0;
    if (strcmp(cur, want.p) != 0 && bad++ == 0)
      fprintf(stderr, "%s line %zu:\n  got  %s\n  want %s\n", r->tenet,
              line + 1, cur, want.p);
    cur = nl + 1;
    line++;
  }
  /* The last line: the state after the last instruction, with its memory
   * (and its syscall's), where the recording stopped. */
  want.n = 0;
  sb_add(&want, "%s", "");
  for (int k = 0; k + 1 < nn; k++)
    if (after[k] != last[k])
      sb_add(&want, "%s=0x%" PRIx64 ",", names[k], after[k]);
  sb_add(&want, "%s=0x%" PRIx64 "%s", names[nn - 1], after[nn - 1] & mask,
         pend.n ? pend.p : "");
  char *nl = strchr(cur, '\n');
  CU_ASSERT_PTR_NOT_NULL_FATAL(nl);
  *nl = 0;
  if (strcmp(cur, want.p) != 0 && bad++ == 0)
    fprintf(stderr, "%s last line:\n  got  %s\n  want %s\n", r->tenet, cur,
            want.p);
  cur = nl + 1;
  CU_ASSERT_EQUAL(bad, 0);
  CU_ASSERT_EQUAL(line, r->n);
  CU_ASSERT_EQUAL(*cur, 0); /* nothing after it */
  TCT->close_reader(rd);
  free(pend.p);
  free(want.p);
  free(text);
}

static void tenet_guest(const char *guest, const char *arg) {
  recording r;
  char tag[64];
  snprintf(tag, sizeof tag, "tenet-%s", guest);
  CU_ASSERT_EQUAL_FATAL(record(guest, arg, tag, NULL, &r), 0);
  CU_ASSERT_FATAL(r.has_tenet);
  check_tenet(&r);
  free_recording(&r);
}

static void test_tenet_lines(void) {
  tenet_guest("hello64", "x");
  tenet_guest("insns64", NULL);
  tenet_guest("hello32", "x");
  tenet_guest("insns32", NULL);
  tenet_guest("hello-armhf", NULL);
  tenet_guest("interwork-armhf", NULL);
  tenet_guest("segv64", NULL);
  tenet_guest("loop64", "200");
}

/* ------------------------------------------- CLI: verify and convert */

static void verify_guest(const char *guest, const char *arg,
                         const char *formats, int want_tenet) {
  char *out = NULL;
  int st = arg ? tu_run_merge(&out, TC_CLI, "verify", "-q", "-f", formats, "--",
                              tu_guest(guest), arg, NULL)
               : tu_run_merge(&out, TC_CLI, "verify", "-q", "-f", formats, "--",
                              tu_guest(guest), NULL);
  CU_ASSERT_EQUAL(st, 0);
  CU_ASSERT_PTR_NOT_NULL_FATAL(out);
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "drcov  ok: "));
  if (want_tenet)
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "tenet  ok: "));
  if (st != 0)
    fprintf(stderr, "verify %s: %s\n", guest, out);
  free(out);
}

static void test_cli_verify(void) {
  verify_guest("hello64", "x", "drcov,tenet", 1);
  verify_guest("hello64-pie", NULL, "drcov,tenet", 1);
  verify_guest("loop32", "300", "drcov,tenet", 1);
  verify_guest("loop-armhf", "100", "drcov,tenet", 1);
  verify_guest("div64", NULL, "drcov,tenet", 1);
  verify_guest("hello-arm64", NULL, "drcov", 0);
  verify_guest("loop-mipsel", "100", "drcov", 0);
  /* Cut after an instruction that wrote memory (the call at #3): the last
   * tenet line still has its effects. */
  for (int n = 3; n <= 6; n++) {
    char max[16], *out = NULL;
    snprintf(max, sizeof max, "%d", n);
    int st = tu_run_merge(&out, TC_CLI, "verify", "-q", "-f", "drcov,tenet",
                          "--max-insns", max, "--", tu_guest("hello64"), NULL);
    CU_ASSERT_EQUAL(st, 0);
    CU_ASSERT(out && strstr(out, "tenet  ok: ") && strstr(out, "drcov  ok: "));
    free(out);
  }
  /* Tenet refuses arm64, naming formats that can hold it. */
  char *out = NULL;
  int st =
      tu_run_merge(&out, TC_CLI, "record", "-q", "-f", "tenet", "-o",
                   tu_tmp("cov-refuse"), "--", tu_guest("hello-arm64"), NULL);
  CU_ASSERT_NOT_EQUAL(st, 0);
  CU_ASSERT(out && strstr(out, "tenet: Tenet traces hold only "
                               "x86-64, x86 and arm"));
  CU_ASSERT(out && strstr(out, "drcov"));
  free(out);
}

static int convert(const char *in, const char *to, const char *out,
                   char **msg) {
  return tu_run_merge(msg, TC_CLI, "convert", in, "--to", to, out, NULL);
}

static void test_convert_round_trips(void) {
  recording r;
  CU_ASSERT_EQUAL_FATAL(record("insns64", NULL, "cov-conv", NULL, &r), 0);
  char *msg = NULL;
  /* tct -> drcov / tenet: what the recording wrote */
  const char *d1 = tu_tmp("cov-conv1.drcov"), *t1 = tu_tmp("cov-conv1.tenet");
  CU_ASSERT_EQUAL(convert(r.tct, "drcov", d1, &msg), 0);
  free(msg);
  CU_ASSERT(tu_same_file(d1, r.drcov));
  CU_ASSERT_EQUAL(convert(r.tct, "tenet", t1, &msg), 0);
  free(msg);
  CU_ASSERT(tu_same_file(t1, r.tenet));
  /* drcov -> drcov, tenet -> tenet: identical */
  const char *d2 = tu_tmp("cov-conv2.drcov"), *t2 = tu_tmp("cov-conv2.tenet");
  CU_ASSERT_EQUAL(convert(r.drcov, "drcov", d2, &msg), 0);
  free(msg);
  CU_ASSERT(tu_same_file(d2, r.drcov));
  CU_ASSERT_EQUAL(convert(r.tenet, "tenet", t2, &msg), 0);
  free(msg);
  CU_ASSERT(tu_same_file(t2, r.tenet));
  /* drcov's block events survive tct: drcov -> tct -> drcov */
  const char *bt = tu_tmp("cov-blocks.tct"), *d3 = tu_tmp("cov-conv3.drcov");
  CU_ASSERT_EQUAL(convert(r.drcov, "tct", bt, &msg), 0);
  free(msg);
  CU_ASSERT_EQUAL(convert(bt, "drcov", d3, &msg), 0);
  free(msg);
  CU_ASSERT(tu_same_file(d3, r.drcov));
  /* tenet -> tct -> tenet */
  const char *tt = tu_tmp("cov-tenet.tct"), *t3 = tu_tmp("cov-conv3.tenet");
  CU_ASSERT_EQUAL(convert(r.tenet, "tct", tt, &msg), 0);
  free(msg);
  CU_ASSERT_EQUAL(convert(tt, "tenet", t3, &msg), 0);
  free(msg);
  CU_ASSERT(tu_same_file(t3, r.tenet));
  /* Tenet holds no instruction lengths: drcov cannot be made from it. */
  CU_ASSERT_NOT_EQUAL(convert(r.tenet, "drcov", tu_tmp("cov-x.drcov"), &msg),
                      0);
  CU_ASSERT(msg && strstr(msg, "has no length"));
  free(msg);
  /* Writer options are checked. */
  msg = NULL;
  CU_ASSERT_NOT_EQUAL(tu_run_merge(&msg, TC_CLI, "convert", "-O",
                                   "drcov.version=4", r.tct, "--to", "drcov",
                                   tu_tmp("cov-y.drcov"), NULL),
                      0);
  CU_ASSERT(msg && strstr(msg, "drcov: version must be 2"));
  free(msg);
  msg = NULL;
  CU_ASSERT_NOT_EQUAL(tu_run_merge(&msg, TC_CLI, "convert", "-O",
                                   "drcov.bogus=1", r.tct, "--to", "drcov",
                                   tu_tmp("cov-y.drcov"), NULL),
                      0);
  CU_ASSERT(msg && strstr(msg, "unknown writer option"));
  free(msg);
  /* info and format detection */
  msg = NULL;
  CU_ASSERT_EQUAL(tu_run_merge(&msg, TC_CLI, "info", r.drcov, NULL), 0);
  CU_ASSERT(msg && strstr(msg, "format:       drcov"));
  CU_ASSERT(msg && strstr(msg, "arch:         x86_64"));
  free(msg);
  msg = NULL;
  CU_ASSERT_EQUAL(tu_run_merge(&msg, TC_CLI, "info", r.tenet, NULL), 0);
  CU_ASSERT(msg && strstr(msg, "format:       tenet"));
  free(msg);
  free_recording(&r);
}

/* ------------------------------- files as DynamoRIO and Tenet write them */

typedef struct got_events {
  uint64_t map_addr[8], map_size[8], map_off[8];
  char map_name[8][64];
  int nmaps;
  uint64_t start[16], end[16];
  int nblocks;
} got_events;

static int read_events(const tc_format *fmt, const char *path, got_events *g,
                       tc_error *err, const tc_arch **arch) {
  memset(g, 0, sizeof *g);
  tc_reader *r = fmt->open_reader(path, err);
  if (!r)
    return -1;
  if (arch)
    *arch = fmt->reader_info(r)->arch;
  const tc_arch *a = fmt->reader_info(r)->arch;
  tc_event ev;
  int rc;
  while ((rc = fmt->next_event(r, &ev, err)) == 1) {
    if (ev.kind == TC_EV_MAP && g->nmaps < 8) {
      g->map_addr[g->nmaps] = ev.u.map.addr;
      g->map_size[g->nmaps] = ev.u.map.size;
      g->map_off[g->nmaps] = ev.u.map.file_offset;
      snprintf(g->map_name[g->nmaps++], 64, "%s", ev.u.map.name);
    } else if (ev.kind == TC_EV_INSN && g->nblocks < 16) {
      g->start[g->nblocks] = ev.u.insn.pc;
      g->end[g->nblocks++] = tc_state_get(a, ev.u.insn.state_after, a->pc_reg);
    }
  }
  fmt->close_reader(r);
  return rc;
}

static void put_bb(strbuf *b, uint32_t start, uint16_t size, uint16_t mod) {
  uint8_t e[8] = {(uint8_t)start,         (uint8_t)(start >> 8),
                  (uint8_t)(start >> 16), (uint8_t)(start >> 24),
                  (uint8_t)size,          (uint8_t)(size >> 8),
                  (uint8_t)mod,           (uint8_t)(mod >> 8)};
  if (b->n + 8 > b->cap) {
    b->cap = (b->n + 8) * 2;
    b->p = realloc(b->p, b->cap);
  }
  memcpy(b->p + b->n, e, 8);
  b->n += 8;
}

static void test_drcov_foreign(void) {
  tc_error err = {{0}};
  got_events g;
  const tc_arch *arch;
  const char *p = tu_tmp("dr8.drcov");
  /* DynamoRIO 8 on Linux: version 2, module table version 4 with segment
   * rows; offsets are from the containing module's base. */
  strbuf b = {0};
  sb_add(&b, "DRCOV VERSION: 2\nDRCOV FLAVOR: drcov-64\n"
             "Module Table: version 4, count 3\n"
             "Columns: id, containing_id, start, end, entry, offset, path\n"
             "  0,   0, 0x0000000000400000, 0x0000000000401000, "
             "0x0000000000401000, 0000000000000000, /nonexistent/prog\n"
             "  1,   0, 0x0000000000401000, 0x0000000000402000, "
             "0x0000000000401000, 0000000000001000, /nonexistent/prog\n"
             "  2,   2, 0x00007fff00000000, 0x00007fff00002000, "
             "0x0000000000000000, 0000000000000000, [vdso]\n"
             "BB Table: 4 bbs\n");
  put_bb(&b, 0x1010, 5, 1);
  put_bb(&b, 0x0020, 7, 2);
  put_bb(&b, 0x12345678, 3, 0xffff);
  put_bb(&b, 0x1000, 16, 0);
  CU_ASSERT_EQUAL_FATAL(tu_write_file(p, b.p, b.n), 0);
  CU_ASSERT_EQUAL(read_events(DRCOV, p, &g, &err, &arch), 0);
  CU_ASSERT_EQUAL(arch->id, TC_ARCH_X86_64);
  CU_ASSERT_EQUAL(g.nmaps, 3);
  CU_ASSERT_EQUAL(g.map_addr[1], 0x401000);
  CU_ASSERT_EQUAL(g.map_size[1], 0x1000);
  CU_ASSERT_EQUAL(g.map_off[1], 0x1000);
  CU_ASSERT_STRING_EQUAL(g.map_name[2], "[vdso]");
  CU_ASSERT_EQUAL(g.nblocks, 4);
  CU_ASSERT_EQUAL(g.start[0], 0x401010);
  CU_ASSERT_EQUAL(g.end[0], 0x401015);
  CU_ASSERT_EQUAL(g.start[1], 0x7fff00000020);
  CU_ASSERT_EQUAL(g.start[2], 0x12345678);
  CU_ASSERT_EQUAL(g.end[3], 0x401010);

  /* DynamoRIO 9+: version 3, table version 5, offsets from the segment. */
  b.n = 0;
  sb_add(&b, "DRCOV VERSION: 3\nDRCOV FLAVOR: drcov-64\n"
             "Module Table: version 5, count 2\n"
             "Columns: id, containing_id, start, end, entry, offset, "
             "preferred_base, path\n"
             "  0,   0, 0x0000555555554000, 0x0000555555555000, "
             "0x0000555555555040, 0000000000000000, 0x0000000000000000,  "
             "/nonexistent/pie\n"
             "  1,   0, 0x0000555555555000, 0x0000555555556000, "
             "0x0000555555555040, 0000000000001000, 0x0000000000001000,  "
             "/nonexistent/pie\n"
             "BB Table: 2 bbs\n");
  put_bb(&b, 0x40, 9, 1);
  put_bb(&b, 0x10, 2, 0);
  CU_ASSERT_EQUAL_FATAL(tu_write_file(p, b.p, b.n), 0);
  tc_reader *r = DRCOV->open_reader(p, &err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(r);
  CU_ASSERT_EQUAL(DRCOV->reader_info(r)->load_base, 0x555555554000);
  CU_ASSERT_EQUAL(DRCOV->reader_info(r)->entry, 0x555555555040);
  CU_ASSERT_STRING_EQUAL(DRCOV->reader_info(r)->exe_path, "/nonexistent/pie");
  DRCOV->close_reader(r);
  CU_ASSERT_EQUAL(read_events(DRCOV, p, &g, &err, NULL), 0);
  CU_ASSERT_EQUAL(g.start[0], 0x555555555040);
  CU_ASSERT_EQUAL(g.end[0], 0x555555555049);
  CU_ASSERT_EQUAL(g.start[1], 0x555555554010);

  /* Windows columns (checksum, timestamp), 32-bit addresses, no -32/-64
   * flavor, and a text BB table (drcov -dump_text). */
  b.n = 0;
  sb_add(&b, "DRCOV VERSION: 2\r\nDRCOV FLAVOR: drcov\r\n"
             "Module Table: version 2, count 1\r\n"
             "Columns: id, base, end, entry, checksum, timestamp, path\r\n"
             "  0, 0x00400000, 0x00410000, 0x00401000, 0x0001abcd, "
             "0x5f000000, C:\\app, with comma.exe\r\n"
             "BB Table: 2 bbs\r\n"
             "module id, start, size:\r\n"
             "module[  0]: 0x00001000,   5\r\n"
             "module[  0]: 0x00001005,  12\r\n");
  CU_ASSERT_EQUAL_FATAL(tu_write_file(p, b.p, b.n), 0);
  CU_ASSERT_EQUAL(read_events(DRCOV, p, &g, &err, &arch), 0);
  CU_ASSERT_EQUAL(arch->id, TC_ARCH_X86);
  CU_ASSERT_STRING_EQUAL(g.map_name[0], "C:\\app, with comma.exe");
  CU_ASSERT_EQUAL(g.nblocks, 2);
  CU_ASSERT_EQUAL(g.start[1], 0x401005);
  CU_ASSERT_EQUAL(g.end[1], 0x401011);
  free(b.p);
  if (err.msg[0])
    fprintf(stderr, "foreign drcov: %s\n", err.msg);
}

/* drcov names no CPU: the arch comes from the program's ELF header, but
 * only from a file whose entry point is the module row's. */
static void test_drcov_arch(void) {
  recording r;
  CU_ASSERT_EQUAL_FATAL(record("hello-arm64", NULL, "cov-arch", NULL, &r), 0);
  tc_error err = {{0}};
  tc_reader *rd = DRCOV->open_reader(r.drcov, &err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(rd);
  CU_ASSERT_EQUAL(DRCOV->reader_info(rd)->arch->id, TC_ARCH_ARM64);
  DRCOV->close_reader(rd);
  size_t len;
  char *f = (char *)tu_read_file(r.drcov, &len);
  CU_ASSERT_PTR_NOT_NULL_FATAL(f);
  char entry[32];
  snprintf(entry, sizeof entry, ", 0x%016" PRIx64 ", ", r.entry);
  char *at = memmem(f, len, entry, strlen(entry));
  CU_ASSERT_PTR_NOT_NULL_FATAL(at);
  memcpy(at + 2, "0x0000000000001234", 18); /* another program's entry */
  const char *p = tu_tmp("cov-arch2.drcov");
  tu_write_file(p, f, len);
  rd = DRCOV->open_reader(p, &err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(rd);
  /* not the file's: the flavor's width decides (x86-64) */
  CU_ASSERT_EQUAL(DRCOV->reader_info(rd)->arch->id, TC_ARCH_X86_64);
  DRCOV->close_reader(rd);
  free(f);
  free_recording(&r);
}

static void test_tenet_foreign(void) {
  tc_error err = {{0}};
  const char *p = tu_tmp("foreign.tenet");
  /* Tenet's README example (Pin tracer, x86): lower case, 0x values. */
  const char *pin = "eax=0x1,ebx=0x2,ecx=0x3,edx=0x4,ebp=0x5,esp=0xcfef8,"
                    "esi=0x6,edi=0x7,eip=0x1005f90\n"
                    "esp=0xcfef4,eip=0x1005f91,mr=0xcfef0:915f0001\n"
                    "ebx=0x0,eip=0x1005f93\n"
                    "esp=0xcfef0,eip=0x1005f94,mw=0xcfef0:00000000\n";
  CU_ASSERT_EQUAL_FATAL(tu_write_file(p, pin, strlen(pin)), 0);
  tc_reader *r = TENET->open_reader(p, &err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(r);
  const tc_arch *a = TENET->reader_info(r)->arch;
  CU_ASSERT_EQUAL(a->id, TC_ARCH_X86);
  tc_event ev;
  uint64_t pcs[4];
  int n = 0;
  while (TENET->next_event(r, &ev, &err) == 1 && n < 4) {
    CU_ASSERT_EQUAL(ev.kind, TC_EV_INSN);
    pcs[n] = ev.u.insn.pc;
    if (n == 0) {
      /* instruction 0's effects are on line 1: esp, and a 4-byte read */
      CU_ASSERT_EQUAL(
          tc_state_get(a, ev.u.insn.state_after, tc_arch_reg_index(a, "esp")),
          0xcfef4);
      CU_ASSERT_EQUAL_FATAL(ev.u.insn.nmem, 1);
      CU_ASSERT_EQUAL(ev.u.insn.mem[0].kind, TC_MEM_READ);
      CU_ASSERT_EQUAL(ev.u.insn.mem[0].addr, 0xcfef0);
      CU_ASSERT_EQUAL(ev.u.insn.mem[0].size, 4);
      CU_ASSERT(memcmp(ev.u.insn.mem[0].before, "\x91\x5f\x00\x01", 4) == 0);
    }
    if (n == 2) {
      CU_ASSERT_EQUAL_FATAL(ev.u.insn.nmem, 1);
      CU_ASSERT_EQUAL(ev.u.insn.mem[0].kind, TC_MEM_WRITE);
    }
    n++;
  }
  /* the last line is the state the trace ends in */
  CU_ASSERT_EQUAL(n, 3);
  CU_ASSERT_EQUAL(pcs[2], 0x1005f93);
  TENET->close_reader(r);
  /* QEMU arm32 tracer: upper case names, hex without 0x; mrw. */
  const char *qemu = "R0=0,R1=1,R2=2,R3=3,R4=4,R5=5,R6=6,R7=7,R8=8,R9=9,"
                     "R10=A,R11=B,R12=C,SP=7FFF0000,LR=0,PC=10074\n"
                     "R3=1F,PC=10078,mrw=7FFF0000:01020304\n"
                     "PC=1007C\n";
  CU_ASSERT_EQUAL_FATAL(tu_write_file(p, qemu, strlen(qemu)), 0);
  r = TENET->open_reader(p, &err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(r);
  a = TENET->reader_info(r)->arch;
  CU_ASSERT_EQUAL(a->id, TC_ARCH_ARM);
  CU_ASSERT_EQUAL(TENET->reader_info(r)->entry, 0x10074);
  CU_ASSERT_EQUAL(TENET->next_event(r, &ev, &err), 1);
  CU_ASSERT_EQUAL(ev.u.insn.pc, 0x10074);
  CU_ASSERT_EQUAL(
      tc_state_get(a, ev.u.insn.state_after, tc_arch_reg_index(a, "r3")), 0x1f);
  CU_ASSERT_EQUAL(ev.u.insn.nmem, 2); /* mrw: a read and a write */
  CU_ASSERT_EQUAL(TENET->next_event(r, &ev, &err), 1);
  CU_ASSERT_EQUAL(ev.u.insn.pc, 0x10078);
  CU_ASSERT_EQUAL(
      tc_state_get(a, ev.u.insn.state_after, tc_arch_reg_index(a, "pc")),
      0x1007c);
  CU_ASSERT_EQUAL(TENET->next_event(r, &ev, &err), 0);
  TENET->close_reader(r);
}

/* --------------------------------------------------- corrupt inputs */

/* The reader refuses the file (at open or while reading) with a one-line
 * message starting "fmt: "; 1 if refused. */
static int refused(const tc_format *fmt, const char *path, const char *want) {
  tc_error err = {{0}};
  tc_reader *r = fmt->open_reader(path, &err);
  int rc = 0;
  if (r) {
    tc_event ev;
    while ((rc = fmt->next_event(r, &ev, &err)) == 1)
      ;
    fmt->close_reader(r);
    if (rc == 0)
      return 0;
  }
  char prefix[16];
  snprintf(prefix, sizeof prefix, "%s: ", fmt->name);
  CU_ASSERT(strncmp(err.msg, prefix, strlen(prefix)) == 0);
  CU_ASSERT_PTR_NULL(strchr(err.msg, '\n'));
  if (want && !strstr(err.msg, want)) {
    fprintf(stderr, "%s: '%s' lacks '%s'\n", path, err.msg, want);
    CU_FAIL("message");
  }
  return 1;
}

static void test_drcov_corrupt(void) {
  recording r;
  CU_ASSERT_EQUAL_FATAL(record("hello64", "x", "cov-bad", NULL, &r), 0);
  size_t len;
  uint8_t *f = tu_read_file(r.drcov, &len);
  CU_ASSERT_PTR_NOT_NULL_FATAL(f);
  const char *p = tu_tmp("bad.drcov");
  /* Every truncation is refused. */
  size_t accepted = 0;
  for (size_t cut = 0; cut < len; cut++) {
    tu_write_file(p, f, cut);
    accepted += !refused(DRCOV, p, NULL);
  }
  CU_ASSERT_EQUAL(accepted, 0);
  /* Named defects, each on an otherwise good file. */
  static const struct {
    const char *from, *to, *msg;
  } edits[] = {
      {"DRCOV VERSION: 2", "DRCOV VERSION: 7", "DRCOV VERSION 7"},
      {"DRCOV VERSION: 2", "DRCOV VERSI0N: 2", "not a drcov file"},
      {"DRCOV FLAVOR", "DRCOV FLAVOUR", "DRCOV FLAVOR"},
      {"version 2, count 1", "version 9, count 1", "module table version 9"},
      {"Module Table: version 2, count 1", "Module Table: 1", "version 1"},
      {"count 1", "count 9999999", "too large"},
      {"Columns: id, base, end, entry, path", "Columns: id, base, path",
       "columns"},
      {"  0, 0x", "  5, 0x", "module id 5"},
      {"0x0000000000400000, 0x0000000000403000",
       "0x0000000000403000, 0x0000000000400000", "ends below"},
      {"0x0000000000400000,", "0x00000000004g0000,", "bad number"},
      {"BB Table: ", "BB Tabel: ", "BB Table"},
  };
  char *text = malloc(len + 64);
  for (size_t i = 0; i < sizeof edits / sizeof edits[0]; i++) {
    char *at = memmem(f, len, edits[i].from, strlen(edits[i].from));
    CU_ASSERT_PTR_NOT_NULL_FATAL(at);
    size_t pre = (size_t)(at - (char *)f), fl = strlen(edits[i].from),
           tl = strlen(edits[i].to);
    memcpy(text, f, pre);
    memcpy(text + pre, edits[i].to, tl);
    memcpy(text + pre + tl, f + pre + fl, len - pre - fl);
    tu_write_file(p, text, len - fl + tl);
    CU_ASSERT(refused(DRCOV, p, edits[i].msg));
  }
  /* More blocks declared than follow; a block naming a missing module. */
  char *bbs = memmem(f, len, "BB Table: ", 10);
  unsigned nbbs = (unsigned)atoi(bbs + 10);
  size_t hdr = (size_t)(strchr(bbs, '\n') + 1 - (char *)f);
  int k = snprintf(text, len + 64, "%.*sBB Table: %u bbs\n",
                   (int)(bbs - (char *)f), (char *)f, nbbs + 1);
  memcpy(text + k, f + hdr, len - hdr);
  tu_write_file(p, text, (size_t)k + len - hdr);
  CU_ASSERT(refused(DRCOV, p, "truncated BB table"));
  memcpy(text, f, len);
  text[hdr + 6] = 7; /* module id of block 0 */
  tu_write_file(p, text, len);
  CU_ASSERT(refused(DRCOV, p, "names module 7"));
  /* The CLI says so in one line and fails. */
  char *out = NULL;
  CU_ASSERT_NOT_EQUAL(
      tu_run_merge(&out, TC_CLI, "dump", "--format", "drcov", p, NULL), 0);
  CU_ASSERT(out && strstr(out, "drcov: "));
  free(out);
  free(text);
  free(f);
  free_recording(&r);
}

static void test_tenet_corrupt(void) {
  const char *p = tu_tmp("bad.tenet");
  static const struct {
    const char *text, *msg;
  } cases[] = {
      {"", "empty trace"},
      {"\n\n", "empty trace"},
      {"foo=0x1\n", "no register"},
      {"rax=0x1,rip=0x10\nrip=0xZZ\n", "bad value for rip"},
      {"rax=0x1,rip=0x10\nbogus=1,rip=0x12\n", "unknown entry 'bogus'"},
      {"rax=0x1,rip=0x10\nrip=0x12,mr=0x10:abc\n", "odd number"},
      {"rax=0x1,rip=0x10\nrip=0x12,mr=0x10\n", "bad address"},
      {"rax=0x1,rip=0x10\nrip=0x12,mw=0x10:zz\n", "bad hex byte"},
      {"rax=0x1,rip=0x10\nrax=0x2\n", "no rip"},
      {"eax=0x100000000,eip=0x10\n", "bad value for eax"},
      {"rax=0x1,rip=0x10\nrip 0x12\n", "is not NAME=VALUE"},
      {"rax=0x1,rip=0x10\nrip=0x12,mr=0x1ffffffffffffffff:00\n", "bad address"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    tu_write_file(p, cases[i].text, strlen(cases[i].text));
    CU_ASSERT(refused(TENET, p, cases[i].msg));
  }
  const char nul[] = "rax=0x1,rip=0x10\nrip=0x\0"
                     "12\n";
  tu_write_file(p, nul, sizeof nul - 1);
  CU_ASSERT(refused(TENET, p, "NUL byte"));
  /* Truncations of a real trace: read whole or refused, never a crash. */
  recording r;
  CU_ASSERT_EQUAL_FATAL(record("hello32", "x", "cov-tbad", NULL, &r), 0);
  size_t len;
  uint8_t *f = tu_read_file(r.tenet, &len);
  CU_ASSERT_PTR_NOT_NULL_FATAL(f);
  size_t refusals = 0;
  for (size_t cut = 0; cut < len; cut += 7) {
    tu_write_file(p, f, cut);
    refusals += refused(TENET, p, NULL);
  }
  CU_ASSERT(refusals > 0);
  free(f);
  free_recording(&r);
}

/* ------------------------------------------------------------- identity */

static void test_identity(void) {
  CU_ASSERT_PTR_EQUAL(tc_format_by_name("drcov"), DRCOV);
  CU_ASSERT_PTR_EQUAL(tc_format_by_name("tenet"), TENET);
  CU_ASSERT(DRCOV->caps & TC_CAP_COVERAGE);
  CU_ASSERT_FALSE(TENET->caps & TC_CAP_COVERAGE);
  CU_ASSERT(TENET->caps & TC_CAP_MEM);
  CU_ASSERT_FALSE(TENET->caps & TC_CAP_MEM_OLD);
  CU_ASSERT_STRING_EQUAL(DRCOV->extension(tc_arch_by_name("x86_64")), ".drcov");
  CU_ASSERT_STRING_EQUAL(TENET->extension(tc_arch_by_name("x86_64")), ".tenet");
  /* Registers held: none (drcov); Tenet's GPR sets with the PC. */
  static const struct {
    const char *arch;
    int held;
  } want[] = {{"x86_64", 17}, {"x86", 9}, {"arm", 16}};
  for (size_t i = 0; i < 3; i++) {
    const tc_arch *a = tc_arch_by_name(want[i].arch);
    int h = 0, d = 0;
    for (int r = 0; r < a->nregs; r++) {
      h += TENET->holds_reg(a, r);
      d += DRCOV->holds_reg(a, r);
    }
    CU_ASSERT_EQUAL(h, want[i].held);
    CU_ASSERT_EQUAL(d, 0);
    CU_ASSERT_EQUAL(TENET->supports(a, NULL), 0);
  }
  tc_error err = {{0}};
  CU_ASSERT_EQUAL(TENET->supports(tc_arch_by_name("arm64"), &err), -1);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "not arm64"));
  CU_ASSERT_EQUAL(TENET->supports(tc_arch_by_name("mips"), NULL), -1);
  /* Probes: DynamoRIO's first line; a register=hex first line. */
  CU_ASSERT(DRCOV->probe((const uint8_t *)"DRCOV VERSION: 2\n", 17, "x"));
  CU_ASSERT_FALSE(DRCOV->probe((const uint8_t *)"DRCOV", 5, "x"));
  CU_ASSERT(TENET->probe((const uint8_t *)"rax=0x0,rbx=0x1", 15, "x"));
  CU_ASSERT(TENET->probe((const uint8_t *)"R0=0,R1=1", 9, "x"));
  CU_ASSERT_FALSE(TENET->probe((const uint8_t *)"# tracecorn", 11, "x"));
  CU_ASSERT_FALSE(TENET->probe((const uint8_t *)"zz=0x1", 6, "x"));
}

int main(void) {
  DRCOV = tc_format_by_name("drcov");
  TENET = tc_format_by_name("tenet");
  TCT = tc_format_by_name("tct");
  if (!DRCOV || !TENET || !TCT) {
    fprintf(stderr, "drcov/tenet formats are not registered\n");
    return 1;
  }
  static const tu_case cases[] = {
      {"format identity", test_identity},
      {"drcov x86-64 guests (independent parser)", test_drcov_x86_64},
      {"drcov glibc64", test_drcov_glibc},
      {"drcov i386 guests", test_drcov_i386},
      {"drcov arm, arm64, mips guests", test_drcov_other_arches},
      {"drcov version 3 (module table 5, segments)", test_drcov_version3},
      {"tenet line by line against tct", test_tenet_lines},
      {"tracecorn verify -f drcov,tenet", test_cli_verify},
      {"convert round trips", test_convert_round_trips},
      {"drcov as DynamoRIO writes it", test_drcov_foreign},
      {"drcov arch from the program's ELF", test_drcov_arch},
      {"tenet as Tenet's tracers write it", test_tenet_foreign},
      {"drcov corrupt and truncated", test_drcov_corrupt},
      {"tenet corrupt and truncated", test_tenet_corrupt},
      {NULL, NULL}};
  return tu_run_suite("cov", cases);
}
