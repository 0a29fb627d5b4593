/* SPDX-License-Identifier: GPL-2.0-or-later */
/* drcov: DynamoRIO's code coverage log, as its drcov tool writes it and as
 * Lighthouse (IDA, Binary Ninja), Lightkeeper (Ghidra), bncov and
 * drcov2lcov read it (see docs/formats/drcov.md):
 *
 *   DRCOV VERSION: 2
 *   DRCOV FLAVOR: drcov-64
 *   Module Table: version 2, count N
 *   Columns: id, base, end, entry, path
 *     0, 0x0000000000400000, 0x0000000000403000, 0x0000000000401000, /p
 *   BB Table: M bbs
 *   M binary bb_entry_t {u32 start (offset from the module); u16 size;
 *                        u16 mod_id}, little-endian
 *
 * `-O drcov.version=3` writes DynamoRIO 9+'s layout instead: DRCOV
 * VERSION 3, module table version 5 with one row per segment (id,
 * containing_id, start, end, entry, offset, preferred_base, path) and block
 * offsets relative to their segment.
 *
 * The writer turns the instruction stream into basic blocks as DynamoRIO
 * does: a block starts where execution arrives after a control transfer
 * and runs to the first control transfer (its delay slot on mips), a
 * syscall, or 256 instructions (DynamoRIO's -max_bb_instrs). Each distinct
 * block is written once, in the order blocks first ran. The reader gives
 * the module table back as MAP events, then every block as a block event
 * (tracecorn.h: an INSN with tid TC_TID_BLOCK, size 0, its end in
 * state_after's PC). */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/byteorder.h"
#include "common/elf/symbols.h"
#include "common/isa/isa.h"
#include "writers/format.h"
#include "writers/io/outfile.h"
#include "writers/io/zst.h"

#define UNKNOWN_MODULE 0xFFFFu /* DynamoRIO's id for code outside modules */
#define MAX_BB_INSNS 256       /* DynamoRIO's -max_bb_instrs default */
#define NONE UINT32_MAX

/* ================================================================ writer */

/* One MAP event: a candidate module (or module segment). */
typedef struct map_rec {
  uint64_t addr, size, file_offset;
  char *name;
  bool exec; /* mapped or later made executable */
  bool used; /* a block started in it */
  uint32_t group;
} map_rec;

/* A live piece of the address space and the MAP event it came from. */
typedef struct region {
  uint64_t start, end;
  uint32_t rec;
} region;

typedef struct block {
  uint64_t start;
  uint32_t size;
  uint32_t rec; /* map_rec it started in, or NONE */
} block;

/* A module table row. */
typedef struct module {
  uint64_t base, end, entry, offset, preferred;
  uint32_t containing;
  const char *path;
} module;

enum { AT_START, BUILD, REPLAY };

struct tc_writer {
  FILE *f;
  char *path;
  const tc_arch *arch;
  int version;
  char *exe_path;
  uint64_t entry, load_base, addr_mask;
  bool exe_entry_found; /* entry is the executable's own (its header) */
  map_rec *recs;
  size_t nrecs, caprecs;
  region *live;
  size_t nlive, caplive;
  block *blocks;
  size_t nblocks, capblocks;
  uint64_t *hkey; /* block starts -> index + 1 (open addressing) */
  uint32_t *hval;
  size_t hcap, hcount;
  /* Block derivation. */
  int state;
  bool have_next, delay_pending;
  uint64_t next_pc, replay_end;
  size_t cur;
  uint32_t cur_insns;
  bool delay_slots;
  tc_isa_flow *flow; /* block ends */
};

static bool oom(tc_error *err) {
  tc_error_set(err, "drcov: out of memory");
  return false;
}

/* -1 with the out-of-memory message, for the int-returning callers. */
static int oom_rc(tc_error *err) {
  oom(err);
  return -1;
}

static bool grow(void **p, size_t *cap, size_t need, size_t elem) {
  if (need <= *cap)
    return true;
  size_t n = *cap ? *cap * 2 : 64;
  while (n < need)
    n *= 2;
  void *q = realloc(*p, n * elem);
  if (!q)
    return false;
  *p = q;
  *cap = n;
  return true;
}

static size_t hash_pc(uint64_t pc, size_t cap) {
  pc ^= pc >> 33;
  pc *= 0xff51afd7ed558ccdull;
  pc ^= pc >> 33;
  return (size_t)pc & (cap - 1);
}

/* Index of the block starting at pc, or -1. */
static long block_find(const tc_writer *w, uint64_t pc) {
  if (!w->hcap)
    return -1;
  for (size_t i = hash_pc(pc, w->hcap);; i = (i + 1) & (w->hcap - 1)) {
    if (!w->hval[i])
      return -1;
    if (w->hkey[i] == pc)
      return (long)w->hval[i] - 1;
  }
}

static bool hash_put(tc_writer *w, uint64_t pc, uint32_t idx) {
  if ((w->hcount + 1) * 2 > w->hcap) {
    size_t ncap = w->hcap ? w->hcap * 2 : 1024;
    uint64_t *nk = calloc(ncap, sizeof *nk);
    uint32_t *nv = calloc(ncap, sizeof *nv);
    if (!nk || !nv) {
      free(nk);
      free(nv);
      return false;
    }
    for (size_t i = 0; i < w->hcap; i++)
      if (w->hval[i]) {
        size_t j = hash_pc(w->hkey[i], ncap);
        while (nv[j])
          j = (j + 1) & (ncap - 1);
        nk[j] = w->hkey[i];
        nv[j] = w->hval[i];
      }
    free(w->hkey);
    free(w->hval);
    w->hkey = nk;
    w->hval = nv;
    w->hcap = ncap;
  }
  size_t i = hash_pc(pc, w->hcap);
  while (w->hval[i])
    i = (i + 1) & (w->hcap - 1);
  w->hkey[i] = pc;
  w->hval[i] = idx + 1;
  w->hcount++;
  return true;
}

/* The live region holding addr: index into live[], or -1. */
static long live_find(const tc_writer *w, uint64_t addr) {
  size_t lo = 0, hi = w->nlive;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (w->live[mid].end <= addr)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo < w->nlive && w->live[lo].start <= addr ? (long)lo : -1;
}

/* Removes [start, end) from the live regions, splitting pieces. */
static bool live_cut(tc_writer *w, uint64_t start, uint64_t end) {
  for (size_t i = 0; i < w->nlive; i++) {
    region *r = &w->live[i];
    if (r->end <= start || r->start >= end)
      continue;
    if (r->start < start && r->end > end) { /* a hole in the middle */
      if (!grow((void **)&w->live, &w->caplive, w->nlive + 1, sizeof *r))
        return false;
      r = &w->live[i];
      memmove(r + 1, r, (w->nlive - i) * sizeof *r);
      w->nlive++;
      r->end = start;
      r[1].start = end;
      return true;
    }
    if (r->start < start) {
      r->end = start;
    } else if (r->end > end) {
      r->start = end;
    } else {
      memmove(r, r + 1, (w->nlive - i - 1) * sizeof *r);
      w->nlive--;
      i--;
    }
  }
  return true;
}

static bool live_add(tc_writer *w, uint64_t start, uint64_t end, uint32_t rec) {
  if (end <= start)
    return true;
  if (!live_cut(w, start, end) ||
      !grow((void **)&w->live, &w->caplive, w->nlive + 1, sizeof *w->live))
    return false;
  size_t i = 0;
  while (i < w->nlive && w->live[i].start < start)
    i++;
  memmove(&w->live[i + 1], &w->live[i], (w->nlive - i) * sizeof *w->live);
  w->live[i] = (region){start, end, rec};
  w->nlive++;
  return true;
}

static const char *drcov_extension(const tc_arch *arch) {
  (void)arch;
  return ".drcov";
}

static void writer_free(tc_writer *w) {
  if (!w)
    return;
  for (size_t i = 0; i < w->nrecs; i++)
    free(w->recs[i].name);
  free(w->recs);
  free(w->live);
  free(w->blocks);
  free(w->hkey);
  free(w->hval);
  free(w->exe_path);
  free(w->path);
  tc_isa_flow_free(w->flow);
  free(w);
}

static tc_writer *drcov_open_writer(const char *path, const tc_trace_info *info,
                                    tc_error *err) {
  static const char *const known[] = {"version", NULL};
  if (tc_writer_options_check(info, "drcov", known, err) < 0)
    return NULL;
  const char *v = tc_writer_option(info, "drcov", "version");
  int version = 2;
  if (v && strcmp(v, "2") != 0 && strcmp(v, "3") != 0) {
    tc_error_set(err,
                 "drcov: version must be 2 (DynamoRIO 7-8, what every "
                 "reader loads) or 3 (DynamoRIO 9+), not '%s'",
                 v);
    return NULL;
  }
  if (v)
    version = v[0] - '0';
  tc_writer *w = calloc(1, sizeof *w);
  if (!w) {
    oom(err);
    return NULL;
  }
  const tc_arch *a = info->arch;
  w->arch = a;
  w->version = version;
  w->entry = info->entry;
  w->load_base = info->load_base;
  w->addr_mask = a->ptr_size == 8 ? UINT64_MAX : UINT32_MAX;
  w->delay_slots = a->traits.delay_slots;
  w->path = strdup(path);
  w->exe_path = info->exe_path ? strdup(info->exe_path) : NULL;
  if (!w->path || (info->exe_path && !w->exe_path)) {
    oom(err);
    writer_free(w);
    return NULL;
  }
  /* Capstone finds the control transfers that end blocks even when not
   * taken; without it, blocks end only where execution jumps. */
  w->flow = tc_isa_flow_new(a);
  if (!w->flow) {
    oom(err);
    writer_free(w);
    return NULL;
  }
  w->f = tc_outfile_fopen(path, "wb");
  if (!w->f) {
    tc_error_set(err, "drcov: %s: cannot create: %s", path, strerror(errno));
    writer_free(w);
    return NULL;
  }
  return w;
}

/* 1 if the instruction transfers control (taken or not): jumps, calls,
 * returns, traps, relative branches. */
static bool is_cti(tc_writer *w, const tc_insn_event *e) {
  return tc_isa_is_cti(w->flow, e->pc, e->bytes, e->size,
                       tc_insn_thumb(w->arch, e) != 0);
}

static bool new_block(tc_writer *w, uint64_t start, uint32_t size,
                      tc_error *err) {
  if (!grow((void **)&w->blocks, &w->capblocks, w->nblocks + 1,
            sizeof *w->blocks))
    return oom(err);
  long li = live_find(w, start);
  uint32_t rec = li < 0 ? NONE : w->live[li].rec;
  if (rec != NONE)
    w->recs[rec].used = true;
  w->blocks[w->nblocks] = (block){start, size, rec};
  if (block_find(w, start) < 0 && !hash_put(w, start, (uint32_t)w->nblocks))
    return oom(err);
  w->cur = w->nblocks++;
  return true;
}

static int write_insn(tc_writer *w, const tc_insn_event *e, tc_error *err) {
  if (!e->state_after) {
    tc_error_set(err, "drcov: instruction %" PRIu64 " has no register state",
                 e->index);
    return -1;
  }
  if (e->size == 0 && e->tid == TC_TID_BLOCK) {
    /* A block event (from the drcov reader): take the block as it is. */
    uint64_t end = tc_state_get(w->arch, e->state_after, w->arch->pc_reg);
    w->state = AT_START;
    w->have_next = false;
    if (end <= e->pc)
      return 0; /* an empty block covers nothing */
    uint64_t size = end - e->pc;
    long bi = block_find(w, e->pc);
    if (bi >= 0 && w->blocks[bi].size == size)
      return 0;
    return new_block(w, e->pc, size > 0xFFFF ? 0xFFFF : (uint32_t)size, err)
               ? 0
               : -1;
  }
  if (e->size == 0) {
    tc_error_set(err,
                 "drcov: instruction %" PRIu64 " at 0x%" PRIx64
                 " has no length (its format does not hold instruction "
                 "bytes); drcov blocks need it",
                 e->index, e->pc);
    return -1;
  }
  uint64_t pc = e->pc, end = (pc + e->size) & w->addr_mask;
  if (w->state != AT_START && (!w->have_next || pc != w->next_pc))
    w->state = AT_START; /* execution jumped: the block ended before */
  if (w->state == AT_START) {
    long bi = block_find(w, pc);
    if (bi >= 0) {
      w->state = REPLAY;
      w->replay_end = w->blocks[bi].start + w->blocks[bi].size;
    } else {
      if (!new_block(w, pc, 0, err))
        return -1;
      w->state = BUILD;
      w->cur_insns = 0;
      w->delay_pending = false;
    }
  }
  bool ends;
  if (w->state == BUILD) {
    block *b = &w->blocks[w->cur];
    b->size = (uint32_t)(end - b->start);
    w->cur_insns++;
    bool cti = is_cti(w, e);
    if (w->delay_pending) {
      ends = true; /* the delay slot of the branch before */
    } else if (cti && w->delay_slots) {
      w->delay_pending = true;
      ends = false;
    } else {
      ends = cti;
    }
    ends |= w->cur_insns >= MAX_BB_INSNS;
  } else {
    ends = end >= w->replay_end || end < pc;
  }
  if (ends)
    w->state = AT_START;
  w->next_pc = end;
  w->have_next = true;
  return 0;
}

static int write_map(tc_writer *w, const tc_event *ev, tc_error *err) {
  const tc_map_event *m = &ev->u.map;
  uint64_t start = m->addr, end = m->addr + m->size;
  if (end < start)
    end = UINT64_MAX;
  if (ev->kind == TC_EV_UNMAP)
    return live_cut(w, start, end) ? 0 : oom_rc(err);
  if (ev->kind == TC_EV_PROTECT) {
    if (m->prot & TC_PROT_EXEC)
      for (size_t i = 0; i < w->nlive; i++)
        if (w->live[i].start < end && w->live[i].end > start)
          w->recs[w->live[i].rec].exec = true;
    return 0;
  }
  /* The executable's own entry point (its ELF header, mapped at file
   * offset 0): a dynamic program starts in its interpreter, so the first
   * PC is not it, and readers match the module's file by this column. */
  if (!w->exe_entry_found && m->data && m->file_offset == 0 && m->size >= 32 &&
      w->exe_path && m->name && strcmp(m->name, w->exe_path) == 0 &&
      memcmp(m->data, "\177ELF", 4) == 0 &&
      (m->data[5] == 1 || m->data[5] == 2)) {
    const uint8_t *h = m->data;
    bool be = h[5] == 2;
    unsigned ptr = h[4] == 2 ? 8 : 4;
    uint64_t entry = 0, type = be ? (uint64_t)h[16] << 8 | h[17]
                                  : (uint64_t)h[17] << 8 | h[16];
    for (unsigned i = 0; i < ptr; i++)
      entry = entry << 8 | h[be ? 24 + i : 24 + ptr - 1 - i];
    w->entry = type == 3 /* ET_DYN */ ? m->addr + entry : entry;
    w->exe_entry_found = true; /* the first such map is the header's */
  }
  if (w->nrecs >= NONE - 1 ||
      !grow((void **)&w->recs, &w->caprecs, w->nrecs + 1, sizeof *w->recs))
    return oom_rc(err);
  map_rec *r = &w->recs[w->nrecs];
  *r = (map_rec){m->addr,
                 m->size,
                 m->file_offset,
                 strdup(m->name ? m->name : ""),
                 (m->prot & TC_PROT_EXEC) != 0,
                 false,
                 NONE};
  if (!r->name)
    return oom_rc(err);
  w->nrecs++;
  return live_add(w, start, end, (uint32_t)(w->nrecs - 1)) ? 0 : oom_rc(err);
}

static int drcov_write_event(tc_writer *w, const tc_event *ev, tc_error *err) {
  switch (ev->kind) {
  case TC_EV_INSN:
    return write_insn(w, &ev->u.insn, err);
  case TC_EV_SYSCALL:
  case TC_EV_SIGNAL:
    w->state = AT_START; /* DynamoRIO ends a block at a syscall, a signal */
    return 0;
  case TC_EV_MAP:
  case TC_EV_UNMAP:
  case TC_EV_PROTECT:
    return write_map(w, ev, err);
  default:
    return 0;
  }
}

static bool file_backed(const char *name) {
  return name[0] && name[0] != '[' && name[0] != '<';
}

static int cmp_rec_addr(const void *x, const void *y, void *ctx) {
  const map_rec *recs = ctx;
  uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
  if (recs[a].addr != recs[b].addr)
    return recs[a].addr < recs[b].addr ? -1 : 1;
  return a < b ? -1 : a > b;
}

/* A path as one line of the module table. */
static void put_path(FILE *f, const char *p) {
  if (!p[0])
    p = "<unknown>";
  for (; *p; p++)
    fputc(*p == '\n' || *p == '\r' ? '?' : *p, f);
  fputc('\n', f);
}

static int drcov_close_writer(tc_writer *w, tc_error *err) {
  int rc = 0;
  const tc_arch *a = w->arch;
  /* Groups: maps with the same name form one module (an ELF's segments);
   * each unnamed map is its own. A group is a module when code ran in it
   * or, for a file, when one of its maps is executable (so an image's
   * data segments and its ELF header keep the module base DynamoRIO and
   * the disassemblers use). Modules are listed in the order their first
   * map came. */
  uint32_t ngroups = 0, *gfirst = NULL, *order = NULL, *modid = NULL;
  module *mods = NULL;
  size_t nmods = 0;
  bool *keep = NULL;
  if (w->nrecs) {
    gfirst = malloc(w->nrecs * sizeof *gfirst);
    order = malloc(w->nrecs * sizeof *order);
    keep = calloc(w->nrecs, sizeof *keep);
    modid = malloc(w->nrecs * sizeof *modid);
    mods = calloc(w->nrecs, sizeof *mods);
    if (!gfirst || !order || !keep || !modid || !mods) {
      oom(err);
      rc = -1;
      goto out;
    }
  }
  for (size_t i = 0; i < w->nrecs; i++) {
    map_rec *r = &w->recs[i];
    if (r->name[0])
      for (uint32_t g = 0; g < ngroups && r->group == NONE; g++)
        if (strcmp(w->recs[gfirst[g]].name, r->name) == 0)
          r->group = g;
    if (r->group == NONE) {
      r->group = ngroups;
      gfirst[ngroups++] = (uint32_t)i;
    }
    if (r->used || (r->exec && file_backed(r->name)))
      keep[r->group] = true;
  }
  for (uint32_t g = 0; g < ngroups; g++) {
    if (!keep[g])
      continue;
    size_t n = 0;
    for (size_t i = gfirst[g]; i < w->nrecs; i++)
      if (w->recs[i].group == g)
        order[n++] = (uint32_t)i;
    qsort_r(order, n, sizeof *order, cmp_rec_addr, w->recs);
    const map_rec *lo = &w->recs[order[0]];
    bool is_exe = w->exe_path && strcmp(lo->name, w->exe_path) == 0;
    if (w->version == 2) {
      module *m = &mods[nmods];
      m->base = lo->addr;
      m->end = lo->addr;
      for (size_t k = 0; k < n; k++) {
        const map_rec *r = &w->recs[order[k]];
        if (r->addr + r->size > m->end)
          m->end = r->addr + r->size;
        modid[order[k]] = (uint32_t)nmods;
      }
      m->entry = is_exe ? w->entry : 0;
      m->path = lo->name;
      m->containing = (uint32_t)nmods++;
    } else {
      uint32_t first = (uint32_t)nmods;
      for (size_t k = 0; k < n; k++) {
        const map_rec *r = &w->recs[order[k]];
        module *m = &mods[nmods];
        m->base = r->addr;
        m->end = r->addr + r->size;
        m->entry = is_exe ? w->entry : 0;
        m->offset = file_backed(r->name) ? r->file_offset : 0;
        m->preferred = is_exe ? r->addr - w->load_base : r->addr;
        m->path = r->name;
        m->containing = first;
        modid[order[k]] = (uint32_t)nmods++;
      }
    }
  }
  if (nmods >= UNKNOWN_MODULE) {
    tc_error_set(err, "drcov: %s: %zu modules; a bb entry holds at most %u",
                 w->path, nmods, UNKNOWN_MODULE - 1);
    rc = -1;
    goto out;
  }
  FILE *f = w->f;
  int digits = a->ptr_size == 8 ? 16 : 8;
  fprintf(f, "DRCOV VERSION: %d\nDRCOV FLAVOR: drcov-%d\n", w->version,
          a->ptr_size * 8);
  fprintf(f, "Module Table: version %d, count %zu\n", w->version == 2 ? 2 : 5,
          nmods);
  fprintf(f, w->version == 2 ? "Columns: id, base, end, entry, path\n"
                             : "Columns: id, containing_id, start, end, "
                               "entry, offset, preferred_base, path\n");
  for (size_t i = 0; i < nmods; i++) {
    const module *m = &mods[i];
    if (w->version == 2) {
      fprintf(f, "%3zu, 0x%0*" PRIx64 ", 0x%0*" PRIx64 ", 0x%0*" PRIx64 ", ", i,
              digits, m->base, digits, m->end, digits, m->entry);
    } else {
      /* DynamoRIO's module_read_entry_print: the offset without 0x, and
       * the path after ", " plus a space. */
      fprintf(f,
              "%3zu, %3u, 0x%0*" PRIx64 ", 0x%0*" PRIx64 ", 0x%0*" PRIx64
              ", %016" PRIx64 ", 0x%0*" PRIx64 ",  ",
              i, m->containing, digits, m->base, digits, m->end, digits,
              m->entry, m->offset, digits, m->preferred);
    }
    put_path(f, m->path);
  }
  fprintf(f, "BB Table: %zu bbs\n", w->nblocks);
  for (size_t i = 0; i < w->nblocks; i++) {
    const block *b = &w->blocks[i];
    uint64_t off = b->start;
    uint32_t id = UNKNOWN_MODULE;
    if (b->rec != NONE && w->recs[b->rec].group != NONE &&
        keep[w->recs[b->rec].group]) {
      /* version 2: offsets from the module base; 3: from the segment */
      const module *m = &mods[modid[b->rec]];
      if (b->start - m->base <= UINT32_MAX) {
        id = modid[b->rec];
        off = b->start - m->base;
      }
    }
    /* Outside any module: DynamoRIO's unknown id and the address
     * truncated to 32 bits. */
    uint8_t e[8];
    put_le(e, off & UINT32_MAX, 4);
    put_le(e + 4, b->size, 2);
    put_le(e + 6, id, 2);
    fwrite(e, 1, 8, f);
  }
out:
  if (ferror(w->f) && rc == 0) {
    tc_error_set(err, "drcov: %s: write failed: %s", w->path, strerror(errno));
    rc = -1;
  }
  if (fclose(w->f) != 0 && rc == 0) {
    tc_error_set(err, "drcov: %s: %s", w->path, strerror(errno));
    rc = -1;
  }
  free(gfirst);
  free(order);
  free(keep);
  free(modid);
  free(mods);
  writer_free(w);
  return rc;
}

/* ================================================================ reader */

typedef struct rmod {
  uint64_t base, end, entry, offset, preferred;
  bool has_preferred;
  uint32_t containing;
  char *path;
} rmod;

struct tc_reader {
  char *path;
  tc_trace_info info;
  int version;
  rmod *mods;
  size_t nmods;
  /* BB table: binary entries, or parsed text entries */
  uint8_t *bbs;
  size_t nbbs, next_mod, next_bb;
  uint8_t *state_a, *state_b;
  uint16_t pc_reg; /* the changed-register list of a block event */
};

static void reader_free(tc_reader *r) {
  if (!r)
    return;
  for (size_t i = 0; i < r->nmods; i++)
    free(r->mods[i].path);
  free(r->mods);
  free(r->bbs);
  free(r->state_a);
  free(r->state_b);
  free(r->path);
  free(r);
}

static void drcov_close_reader(tc_reader *r) { reader_free(r); }

static int drcov_probe(const uint8_t *head, size_t n, const char *path) {
  (void)path;
  static const char magic[] = "DRCOV VERSION: ";
  return n >= sizeof magic - 1 && memcmp(head, magic, sizeof magic - 1) == 0;
}

/* A cursor over the file's text part. */
typedef struct cursor {
  const char *p, *end;
  unsigned line;
} cursor;

/* The next line (without its \r\n) into *s / *len; false at the end. */
static bool next_line(cursor *c, const char **s, size_t *len) {
  if (c->p >= c->end)
    return false;
  const char *nl = memchr(c->p, '\n', (size_t)(c->end - c->p));
  const char *e = nl ? nl : c->end;
  *s = c->p;
  *len = (size_t)(e - c->p);
  while (*len && (*s)[*len - 1] == '\r')
    (*len)--;
  c->p = nl ? nl + 1 : c->end;
  c->line++;
  return true;
}

/* Parses an unsigned decimal (base 10) or hex (base 16, optional 0x)
 * number filling [s, s+n) after trimming spaces. */
static bool parse_num(const char *s, size_t n, int base, uint64_t *out) {
  while (n && isspace((unsigned char)*s))
    s++, n--;
  while (n && isspace((unsigned char)s[n - 1]))
    n--;
  if (base == 16 && n > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
    s += 2, n -= 2;
  if (!n || n > 20)
    return false;
  uint64_t v = 0;
  for (size_t i = 0; i < n; i++) {
    int d;
    char ch = s[i];
    if (ch >= '0' && ch <= '9')
      d = ch - '0';
    else if (base == 16 && ch >= 'a' && ch <= 'f')
      d = ch - 'a' + 10;
    else if (base == 16 && ch >= 'A' && ch <= 'F')
      d = ch - 'A' + 10;
    else
      return false;
    if (v > (UINT64_MAX - (uint64_t)d) / (uint64_t)base)
      return false;
    v = v * (uint64_t)base + (uint64_t)d;
  }
  *out = v;
  return true;
}

static bool starts(const char *s, size_t n, const char *prefix) {
  size_t k = strlen(prefix);
  return n >= k && memcmp(s, prefix, k) == 0;
}

enum {
  COL_ID,
  COL_CONTAINING,
  COL_BASE,
  COL_END,
  COL_ENTRY,
  COL_OFFSET,
  COL_PREFERRED,
  COL_OTHER
};

/* The arch of the ELF file a module row names, or NULL. Only regular
 * files are opened (a path in a coverage file is not trusted to name one),
 * and only one whose entry point is the row's (as loaded: at the same
 * address, or at the module base plus it for a PIE), so another file at
 * that path (a recording made under --root) is not taken for it. */
static const tc_arch *elf_arch(const rmod *m) {
  if (!m->entry || m->path[0] != '/')
    return NULL;
  FILE *f = tc_open_regular(m->path, UINT64_MAX);
  if (!f)
    return NULL;
  uint8_t h[32];
  size_t n = fread(h, 1, sizeof h, f);
  fclose(f);
  if (n < sizeof h || memcmp(h, "\177ELF", 4) != 0 || (h[5] != 1 && h[5] != 2))
    return NULL;
  bool be = h[5] == 2;
  unsigned ptr = h[4] == 2 ? 8 : 4;
  uint64_t machine = 0, entry = 0;
  for (unsigned i = 0; i < 2; i++)
    machine = machine << 8 | h[be ? 18 + i : 19 - i];
  for (unsigned i = 0; i < ptr; i++)
    entry = entry << 8 | h[be ? 24 + i : 24 + ptr - 1 - i];
  /* bit 0 aside: an arm ELF marks a Thumb entry point with it */
  if ((m->entry ^ entry) > 1 && (m->entry ^ (m->base + entry)) > 1)
    return NULL;
  const tc_arch *a;
  for (size_t i = 0; (a = tc_arch_at(i)); i++) {
    if (a->elf_machine == machine && a->big_endian == be && a->ptr_size == ptr)
      return a;
  }
  return NULL;
}

/* Reads the module table rows (version >= 2) with the given columns. */
static int parse_module(tc_reader *r, const char *s, size_t n, const int *cols,
                        size_t ncols, size_t idx, unsigned line,
                        tc_error *err) {
  rmod *m = &r->mods[idx];
  uint64_t id = idx, containing = idx;
  m->base = m->end = m->entry = m->offset = 0;
  m->has_preferred = false;
  for (size_t c = 0; c + 1 < ncols; c++) {
    const char *comma = memchr(s, ',', n);
    if (!comma) {
      tc_error_set(err,
                   "drcov: %s: line %u: module row has fewer than %zu "
                   "columns",
                   r->path, line, ncols);
      return -1;
    }
    size_t fl = (size_t)(comma - s);
    uint64_t v = 0;
    bool ok = true;
    switch (cols[c]) {
    case COL_ID:
      ok = parse_num(s, fl, 10, &id);
      break;
    case COL_CONTAINING:
      ok = parse_num(s, fl, 10, &containing);
      break;
    case COL_BASE:
      ok = parse_num(s, fl, 16, &m->base);
      break;
    case COL_END:
      ok = parse_num(s, fl, 16, &m->end);
      break;
    case COL_ENTRY:
      ok = parse_num(s, fl, 16, &m->entry);
      break;
    case COL_OFFSET:
      ok = parse_num(s, fl, 16, &m->offset);
      break;
    case COL_PREFERRED:
      ok = parse_num(s, fl, 16, &v);
      m->preferred = v;
      m->has_preferred = ok;
      break;
    default:
      break;
    }
    if (!ok) {
      tc_error_set(err, "drcov: %s: line %u: bad number in column %zu", r->path,
                   line, c + 1);
      return -1;
    }
    n -= fl + 1;
    s = comma + 1;
  }
  if (id != idx) {
    tc_error_set(
        err, "drcov: %s: line %u: module id %" PRIu64 " where %zu was expected",
        r->path, line, id, idx);
    return -1;
  }
  if (containing > idx) {
    tc_error_set(err,
                 "drcov: %s: line %u: containing id %" PRIu64
                 " is not an earlier module",
                 r->path, line, containing);
    return -1;
  }
  if (m->end < m->base) {
    tc_error_set(err, "drcov: %s: line %u: module ends below its start",
                 r->path, line);
    return -1;
  }
  m->containing = (uint32_t)containing;
  while (n && isspace((unsigned char)*s))
    s++, n--;
  m->path = strndup(s, n);
  if (!m->path) {
    tc_error_set(err, "drcov: out of memory");
    return -1;
  }
  return 0;
}

static int parse_columns(tc_reader *r, const char *s, size_t n, int *cols,
                         size_t *ncols, unsigned line, tc_error *err) {
  if (!starts(s, n, "Columns: ")) {
    tc_error_set(err, "drcov: %s: line %u: expected 'Columns: ...'", r->path,
                 line);
    return -1;
  }
  s += 9;
  n -= 9;
  static const struct {
    const char *name;
    int col;
  } names[] = {{"id", COL_ID},         {"containing_id", COL_CONTAINING},
               {"base", COL_BASE},     {"start", COL_BASE},
               {"end", COL_END},       {"entry", COL_ENTRY},
               {"offset", COL_OFFSET}, {"preferred_base", COL_PREFERRED}};
  size_t k = 0;
  bool last_path = false;
  while (n) {
    const char *comma = memchr(s, ',', n);
    size_t fl = comma ? (size_t)(comma - s) : n;
    const char *t = s;
    size_t tl = fl;
    while (tl && *t == ' ')
      t++, tl--;
    if (k == 32) {
      tc_error_set(err, "drcov: %s: line %u: too many columns", r->path, line);
      return -1;
    }
    cols[k] = COL_OTHER;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
      if (strlen(names[i].name) == tl && memcmp(names[i].name, t, tl) == 0)
        cols[k] = names[i].col;
    last_path = tl == 4 && memcmp(t, "path", 4) == 0;
    k++;
    if (!comma)
      break;
    n -= fl + 1;
    s = comma + 1;
  }
  bool have_base = false, have_end = false;
  for (size_t i = 0; i < k; i++) {
    have_base |= cols[i] == COL_BASE;
    have_end |= cols[i] == COL_END;
  }
  if (!last_path || !have_base || !have_end || cols[0] != COL_ID) {
    tc_error_set(err,
                 "drcov: %s: line %u: the columns must start with id, name "
                 "the start and end, and end with path",
                 r->path, line);
    return -1;
  }
  *ncols = k;
  return 0;
}

/* A text BB table ("module id, start, size:" then "module[  3]: 0x..,  12"
 * lines, DynamoRIO's -dump_text) into binary entries. */
static int parse_text_bbs(tc_reader *r, cursor *c, tc_error *err) {
  const char *s;
  size_t n;
  if (!next_line(c, &s, &n) || n != 23 ||
      memcmp(s, "module id, start, size:", 23) != 0) {
    tc_error_set(err, "drcov: %s: line %u: expected 'module id, start, size:'",
                 r->path, c->line);
    return -1;
  }
  for (size_t i = 0; i < r->nbbs; i++) {
    if (!next_line(c, &s, &n)) {
      tc_error_set(err, "drcov: %s: the BB table ends after %zu of %zu blocks",
                   r->path, i, r->nbbs);
      return -1;
    }
    const char *rb = memchr(s, ']', n), *comma = memchr(s, ',', n);
    uint64_t mod, start, size;
    if (!starts(s, n, "module[") || !rb || !comma || comma < rb ||
        (size_t)(rb - s) + 2 > n || rb[1] != ':' ||
        !parse_num(s + 7, (size_t)(rb - s) - 7, 10, &mod) ||
        !parse_num(rb + 2, (size_t)(comma - rb) - 2, 16, &start) ||
        !parse_num(comma + 1, n - (size_t)(comma - s) - 1, 10, &size) ||
        mod > 0xFFFF || start > UINT32_MAX || size > 0xFFFF) {
      tc_error_set(err, "drcov: %s: line %u: bad BB entry", r->path, c->line);
      return -1;
    }
    put_le(r->bbs + 8 * i, start, 4);
    put_le(r->bbs + 8 * i + 4, size, 2);
    put_le(r->bbs + 8 * i + 6, mod, 2);
  }
  return 0;
}

static tc_reader *drcov_open_reader(const char *path, tc_error *err) {
  tc_reader *r = calloc(1, sizeof *r);
  uint8_t *data = NULL;
  if (!r || !(r->path = strdup(path))) {
    tc_error_set(err, "drcov: out of memory");
    free(r);
    return NULL;
  }
  FILE *f = tc_infile_open(path, TC_INFILE_SEEK, "drcov", err);
  if (!f)
    goto fail;
  struct stat st;
  if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode)) {
    tc_error_set(err, "drcov: %s: not a regular file", path);
    fclose(f);
    goto fail;
  }
  size_t size = (size_t)st.st_size;
  data = malloc(size + 1);
  if (!data || fread(data, 1, size, f) != size) {
    tc_error_set(err, "drcov: %s: cannot read: %s", path,
                 data ? strerror(errno) : "out of memory");
    fclose(f);
    goto fail;
  }
  fclose(f);
  cursor c = {(const char *)data, (const char *)data + size, 0};
  const char *s;
  size_t n;
  uint64_t v, count = 0;
  if (!next_line(&c, &s, &n) || !starts(s, n, "DRCOV VERSION: ") ||
      !parse_num(s + 15, n - 15, 10, &v)) {
    tc_error_set(err, "drcov: %s: not a drcov file (no 'DRCOV VERSION: N')",
                 path);
    goto fail;
  }
  if (v != 2 && v != 3) {
    tc_error_set(err,
                 "drcov: %s: DRCOV VERSION %" PRIu64
                 " (tracecorn reads versions 2 and 3)",
                 path, v);
    goto fail;
  }
  r->version = (int)v;
  if (!next_line(&c, &s, &n) || !starts(s, n, "DRCOV FLAVOR: ")) {
    tc_error_set(err, "drcov: %s: line 2: expected 'DRCOV FLAVOR: ...'", path);
    goto fail;
  }
  int flavor_bits = 0;
  if (n >= 3 && memcmp(s + n - 3, "-64", 3) == 0)
    flavor_bits = 64;
  else if (n >= 3 && memcmp(s + n - 3, "-32", 3) == 0)
    flavor_bits = 32;
  uint64_t table_version;
  if (!next_line(&c, &s, &n) || !starts(s, n, "Module Table: ")) {
    tc_error_set(err, "drcov: %s: line 3: expected 'Module Table: ...'", path);
    goto fail;
  }
  const char *vs = s + 14, *cm = memchr(s, ',', n);
  if (starts(vs, n - 14, "version ") && cm &&
      parse_num(vs + 8, (size_t)(cm - vs) - 8, 10, &table_version) &&
      starts(cm, n - (size_t)(cm - s), ", count ") &&
      parse_num(cm + 8, n - (size_t)(cm - s) - 8, 10, &count)) {
    if (table_version < 2 || table_version > 5) {
      tc_error_set(err,
                   "drcov: %s: module table version %" PRIu64
                   " (tracecorn reads 2 to 5)",
                   path, table_version);
      goto fail;
    }
  } else if (parse_num(vs, n - 14, 10, &count)) {
    tc_error_set(err,
                 "drcov: %s: module table version 1 (DynamoRIO 6) holds no "
                 "module addresses",
                 path);
    goto fail;
  } else {
    tc_error_set(err, "drcov: %s: line 3: bad module table header", path);
    goto fail;
  }
  /* Every row takes at least a few bytes: a count beyond that is corrupt,
   * and is refused before anything is allocated for it. */
  if (count > UNKNOWN_MODULE || count > (uint64_t)(c.end - c.p) / 4) {
    tc_error_set(err, "drcov: %s: module count %" PRIu64 " is too large", path,
                 count);
    goto fail;
  }
  int cols[32];
  size_t ncols;
  if (!next_line(&c, &s, &n) ||
      parse_columns(r, s, n, cols, &ncols, c.line, err) < 0) {
    if (c.p >= c.end && !err->msg[0])
      tc_error_set(err, "drcov: %s: truncated module table", path);
    goto fail;
  }
  r->mods = calloc(count ? count : 1, sizeof *r->mods);
  if (!r->mods) {
    tc_error_set(err, "drcov: out of memory");
    goto fail;
  }
  for (size_t i = 0; i < count; i++) {
    if (!next_line(&c, &s, &n)) {
      tc_error_set(err,
                   "drcov: %s: the module table ends after %zu of %" PRIu64
                   " modules",
                   path, i, count);
      goto fail;
    }
    r->nmods = i + 1;
    if (parse_module(r, s, n, cols, ncols, i, c.line, err) < 0)
      goto fail;
  }
  if (!next_line(&c, &s, &n) || !starts(s, n, "BB Table: ") || n < 15 ||
      memcmp(s + n - 4, " bbs", 4) != 0 || !parse_num(s + 10, n - 14, 10, &v) ||
      v > UINT32_MAX) {
    tc_error_set(err, "drcov: %s: line %u: expected 'BB Table: N bbs'", path,
                 c.line);
    goto fail;
  }
  size_t left = (size_t)(c.end - c.p);
  bool text = left >= 9 && memcmp(c.p, "module id", 9) == 0;
  if (!text && v > left / 8) {
    tc_error_set(err,
                 "drcov: %s: truncated BB table: %" PRIu64
                 " blocks need %" PRIu64 " bytes, %zu follow",
                 path, v, v * 8, left);
    goto fail;
  }
  if (text && v > left / 16) {
    tc_error_set(err, "drcov: %s: truncated BB table (%" PRIu64 " blocks)",
                 path, v);
    goto fail;
  }
  r->nbbs = (size_t)v;
  r->bbs = malloc(r->nbbs ? r->nbbs * 8 : 1);
  if (!r->bbs) {
    tc_error_set(err, "drcov: out of memory");
    goto fail;
  }
  if (text) {
    if (parse_text_bbs(r, &c, err) < 0)
      goto fail;
  } else {
    memcpy(r->bbs, c.p, r->nbbs * 8);
  }
  /* Blocks must name a module of the table (or none). */
  for (size_t i = 0; i < r->nbbs; i++) {
    unsigned id = (unsigned)get_le(r->bbs + 8 * i + 6, 2);
    if (id != UNKNOWN_MODULE && id >= r->nmods) {
      tc_error_set(err,
                   "drcov: %s: block %zu names module %u; the table has %zu",
                   path, i, id, r->nmods);
      goto fail;
    }
  }
  free(data);
  data = NULL;
  /* drcov does not name the CPU: the ELF header of a module file says it,
   * else the flavor's or the addresses' width (x86-64 or x86). */
  const tc_arch *arch = NULL;
  for (size_t i = 0; i < r->nmods && i < 16 && !arch; i++)
    arch = elf_arch(&r->mods[i]);
  if (!arch) {
    bool wide = flavor_bits == 64;
    if (!flavor_bits)
      for (size_t i = 0; i < r->nmods; i++)
        wide |= r->mods[i].end > UINT32_MAX;
    arch = tc_arch_by_id(flavor_bits == 32 || !wide ? TC_ARCH_X86
                                                    : TC_ARCH_X86_64);
    if (!flavor_bits && !r->nmods)
      arch = tc_arch_by_id(TC_ARCH_X86_64);
  }
  r->state_a = calloc(1, arch->state_size);
  r->state_b = calloc(1, arch->state_size);
  if (!r->state_a || !r->state_b) {
    tc_error_set(err, "drcov: out of memory");
    goto fail;
  }
  r->info.arch = arch;
  r->pc_reg = arch->pc_reg;
  if (r->nmods && r->mods[0].path[0] == '/') {
    r->info.exe_path = r->mods[0].path;
    r->info.entry = r->mods[0].entry;
    if (r->mods[0].has_preferred)
      r->info.load_base = r->mods[0].base - r->mods[0].preferred;
  }
  return r;
fail:
  free(data);
  reader_free(r);
  return NULL;
}

static const tc_trace_info *drcov_reader_info(tc_reader *r) { return &r->info; }

static int drcov_next_event(tc_reader *r, tc_event *ev, tc_error *err) {
  (void)err;
  memset(ev, 0, sizeof *ev);
  if (r->next_mod < r->nmods) {
    const rmod *m = &r->mods[r->next_mod++];
    ev->kind = TC_EV_MAP;
    ev->u.map.addr = m->base;
    ev->u.map.size = m->end - m->base;
    ev->u.map.prot = TC_PROT_READ | TC_PROT_EXEC;
    ev->u.map.name = strcmp(m->path, "<unknown>") == 0 ? "" : m->path;
    ev->u.map.file_offset = m->offset;
    return 1;
  }
  if (r->next_bb >= r->nbbs)
    return 0;
  const tc_arch *a = r->info.arch;
  const uint8_t *e = r->bbs + 8 * r->next_bb;
  uint64_t start = get_le(e, 4), size = get_le(e + 4, 2);
  unsigned id = (unsigned)get_le(e + 6, 2);
  /* Version 3 offsets are from the segment, version 2 from the module
   * (the containing segment). */
  if (id != UNKNOWN_MODULE)
    start += r->version >= 3 ? r->mods[id].base
                             : r->mods[r->mods[id].containing].base;
  uint64_t mask = a->ptr_size == 8 ? UINT64_MAX : UINT32_MAX;
  start &= mask;
  tc_state_set(a, r->state_a, a->pc_reg, start);
  tc_state_set(a, r->state_b, a->pc_reg, (start + size) & mask);
  ev->kind = TC_EV_INSN;
  ev->u.insn.index = r->next_bb++;
  ev->u.insn.pc = start;
  ev->u.insn.tid = TC_TID_BLOCK;
  ev->u.insn.nregs = size ? 1 : 0;
  ev->u.insn.regs = &r->pc_reg;
  ev->u.insn.state_before = r->state_a;
  ev->u.insn.state_after = r->state_b;
  return 1;
}

static int drcov_holds_reg(const tc_arch *arch, int reg) {
  (void)arch;
  (void)reg;
  return 0;
}

const tc_format tc_format_drcov = {
    .name = "drcov",
    .description = "DynamoRIO drcov coverage (Lighthouse, Lightkeeper, bncov)",
    .caps = TC_CAP_BLOCKS | TC_CAP_COVERAGE | TC_CAP_MODULES,
    .holds_reg = drcov_holds_reg,
    .extension = drcov_extension,
    .supports = NULL,
    .open_writer = drcov_open_writer,
    .write_event = drcov_write_event,
    .close_writer = drcov_close_writer,
    .probe = drcov_probe,
    .open_reader = drcov_open_reader,
    .reader_info = drcov_reader_info,
    .next_event = drcov_next_event,
    .close_reader = drcov_close_reader,
};
