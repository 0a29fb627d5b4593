/* SPDX-License-Identifier: GPL-2.0-or-later */
/* UCIR reader (usercorn's trace format, .ucir; the layout is in
 * ucir_internal.h): replays the ops (registers, PC from JMP/STEP, memory
 * from the keyframe and every write) and yields the event stream; also the
 * module's tc_format_ucir and its ucir.h helpers. */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/byteorder.h"
#include "common/memimage.h"
#include "common/notice.h"
#include "writers/format.h"
#include "writers/io/outfile.h"
#include "writers/io/snappy_frame.h"
#include "writers/io/zst.h"
#include "writers/ucir/ucir.h"
#include "writers/ucir/ucir_internal.h"

static const char *const op_names[OP_COUNT] = {
    "NOP",       "FRAME",    "KEYFRAME", "JMP",       "STEP",
    "REG",       "SPREG",    "MEM_READ", "MEM_WRITE", "MEM_MAP",
    "MEM_UNMAP", "MEM_PROT", "SYSCALL",  "EXIT"};

/* The arch/os pairs `usercorn trace` accepts (arch.GetArch). */
static int usercorn_accepts(const char *arch, const char *os) {
  static const char *const pairs[][2] = {
      {"x86", "linux"},   {"x86_64", "linux"},  {"arm", "linux"},
      {"arm64", "linux"}, {"mips", "linux"},    {"sparc", "linux"},
      {"x86", "darwin"},  {"x86_64", "darwin"}, {"x86", "cgc"},
      {"x86_16", "DOS"}};
  for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++)
    if (strcmp(pairs[i][0], arch) == 0 && strcmp(pairs[i][1], os) == 0)
      return 1;
  return 0;
}

/* ================================================================ reader */

/* Limits that keep a hostile file from asking for huge allocations. */
enum {
  MAX_READ_VALUE = 1 << 20, /* a MEM_READ whose value is rebuilt */
  MAX_MAP_DATA = 64 << 20,  /* keyframe mapping contents in one event */
  MAX_SYS_DEPTH = 256,      /* nested SYSCALL ops */
  SPEC_READ = 1 << 16
};

enum {
  W_ARCH = 1u << 0,
  W_FIRST_NOT_KF = 1u << 1,
  W_TOPLEVEL = 1u << 2,
  W_STEP0 = 1u << 3,
  W_PROT = 1u << 4,
  W_UNKNOWN_REG = 1u << 5,
  W_KF_REG = 1u << 6,
  W_KF_MEM = 1u << 7,
  W_BIG_READ = 1u << 8,
  W_BIG_STEP = 1u << 9,
  W_SPREG = 1u << 10,
  W_ARGC = 1u << 11
};

typedef struct racc {
  uint64_t addr;
  uint32_t size;
  uint8_t kind;
  size_t ob, oa; /* offsets of before/after in the entry's bytes */
} racc;

typedef struct qent {
  tc_event ev;
  int final;
  ubuf bytes;
  racc *acc;
  size_t nacc, capacc;
  tc_mem_access *mem;
  size_t capmem;
  uint8_t *before, *after;
  uint16_t *regs;
  int fresh; /* building: `before` not taken yet */
} qent;

typedef struct lvl {
  uint8_t op;
  uint32_t left;
  qent *sys;
  uint64_t arg0;
} lvl;

typedef struct kmap {
  uint64_t addr, size;
  uint32_t prot;
  size_t name_off;
} kmap;

/* One parsed op (pointers into the source buffer, valid until the next). */
typedef struct uop {
  uint8_t op;
  uint64_t a, b, off, len; /* addr/pid/num, size/count/value, map fields */
  uint32_t count;
  uint8_t prot, argc;
  const uint8_t *data; /* MEM_WRITE/SPREG bytes, SYSCALL args, MAP desc */
  size_t dlen;
  const uint8_t *file;
  size_t flen;
} uop;

struct tc_reader {
  char *path;
  FILE *fp;
  uint64_t fsize, foff;
  int layout;
  /* decoded op stream */
  uint8_t *chunk, *dec;
  ubuf in;
  size_t pos;
  uint64_t in_base; /* decoded offset of in.p[0] */
  int src_eof, seen_id;
  /* header */
  char arch_name[33], os_name[33];
  uint8_t dorder;
  const tc_arch *arch;
  int16_t *regmap;
  size_t nregmap;
  uint64_t pc_mask;
  tc_trace_info info;
  uint8_t *initial_state;
  char *exe_path;
  /* replay */
  uint8_t *cur;
  tc_memimage *mem;
  uint64_t nsteps;
  uint32_t tid;
  qent *build, *stepped, *kfpend, *popped;
  qent **q;
  size_t qhead, qlen, qcap;
  qent **pool;
  size_t npool, cappool;
  lvl lv[MAX_SYS_DEPTH + 2];
  int depth;
  int nkeyframes, kf_first, kf_mapped, ops_seen, resolved;
  /* The current KEYFRAME is another thread's (guest threads): its
   * registers are that thread's, not a check of the replay. */
  int kf_switch;
  kmap *kmaps;
  size_t nkmaps, capkmaps;
  ubuf knames;
  uint64_t *kw; /* keyframe write ranges [lo, hi) pairs */
  size_t nkw, capkw;
  int have_exit;
  tc_exit_event exit;
  unsigned warned;
  int done;
  tc_ucir_stats *stats; /* counts ops when set */
  /* pre-scan (arches without a register table) */
  int scanning;
  uint32_t *scan_size; /* per register number: 0 unseen, else bytes */
};

static void r_warn(tc_reader *r, unsigned kind, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void r_warn(tc_reader *r, unsigned kind, const char *fmt, ...) {
  if (r->warned & kind || r->scanning)
    return;
  r->warned |= kind;
  va_list ap;
  va_start(ap, fmt);
  char msg[400];
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  tc_notice("ucir: warning: %s: %s", r->path, msg);
}

/* ---- source: the decoded op stream */

static int file_read(tc_reader *r, void *p, size_t n, tc_error *err) {
  size_t got = fread(p, 1, n, r->fp);
  r->foff += got;
  if (got == n)
    return 0;
  if (ferror(r->fp))
    tc_error_set(err, "ucir: %s: read failed: %s", r->path, strerror(errno));
  return -1;
}

/* Appends the next piece of decoded data; 0 at the end of the file. */
static int src_fill(tc_reader *r, tc_error *err) {
  if (r->src_eof)
    return 0;
  if (r->pos && (r->pos == r->in.len || r->pos >= (1u << 20))) {
    memmove(r->in.p, r->in.p + r->pos, r->in.len - r->pos);
    r->in.len -= r->pos;
    r->in_base += r->pos;
    r->pos = 0;
  }
  if (r->layout == LAYOUT_SPEC) {
    if (ub_reserve(&r->in, SPEC_READ) < 0)
      goto oom;
    size_t got = fread(r->in.p + r->in.len, 1, SPEC_READ, r->fp);
    r->foff += got;
    r->in.len += got;
    if (got == 0) {
      if (ferror(r->fp)) {
        tc_error_set(err, "ucir: %s: read failed: %s", r->path,
                     strerror(errno));
        return -1;
      }
      r->src_eof = 1;
      return 0;
    }
    return 1;
  }
  for (;;) {
    uint64_t at = r->foff;
    uint8_t h[4];
    size_t got = fread(h, 1, 4, r->fp);
    r->foff += got;
    if (got == 0 && !ferror(r->fp)) {
      r->src_eof = 1;
      return 0;
    }
    if (got < 4) {
      if (ferror(r->fp))
        tc_error_set(err, "ucir: %s: read failed: %s", r->path,
                     strerror(errno));
      else
        tc_error_set(err,
                     "ucir: %s: truncated snappy chunk header at offset "
                     "0x%" PRIx64,
                     r->path, at);
      return -1;
    }
    size_t len = (size_t)get_le(h + 1, 3);
    if (len > SNAPPY_FRAME_MAX_CHUNK) {
      tc_error_set(err,
                   "ucir: %s: snappy chunk of %zu bytes at offset 0x%" PRIx64
                   " (at most %d)",
                   r->path, len, at, SNAPPY_FRAME_MAX_CHUNK);
      return -1;
    }
    if (r->fsize - r->foff < len || file_read(r, r->chunk, len, err) < 0) {
      if (!ferror(r->fp))
        tc_error_set(err,
                     "ucir: %s: truncated snappy chunk at offset 0x%" PRIx64,
                     r->path, at);
      return -1;
    }
    if (!r->seen_id && h[0] != 0xff) {
      tc_error_set(err,
                   "ucir: %s: the snappy stream does not start with its "
                   "identifier",
                   r->path);
      return -1;
    }
    r->seen_id = 1;
    size_t n = 0;
    const char *why = NULL;
    int rc = tc_snappy_unchunk(h[0], r->chunk, len, r->dec, &n, &why);
    if (rc < 0) {
      tc_error_set(err, "ucir: %s: snappy chunk at offset 0x%" PRIx64 ": %s",
                   r->path, at, why);
      return -1;
    }
    if (rc == 0 || n == 0)
      continue;
    if (ub_append(&r->in, r->dec, n) < 0)
      goto oom;
    return 1;
  }
oom:
  tc_error_set(err, "ucir: out of memory");
  return -1;
}

/* 1 if n bytes are available at pos, 0 if the stream ends first. */
static int src_need(tc_reader *r, size_t n, tc_error *err) {
  while (r->in.len - r->pos < n) {
    int rc = src_fill(r, err);
    if (rc <= 0)
      return rc;
  }
  return 1;
}

/* ---- op parsing */

static int truncated(tc_reader *r, uint8_t op, tc_error *err) {
  tc_error_set(err, "ucir: %s: truncated %s op at %s offset 0x%" PRIx64,
               r->path, op < OP_COUNT ? op_names[op] : "?",
               r->layout == LAYOUT_USERCORN ? "decoded" : "file",
               r->in_base + r->pos +
                   (r->layout == LAYOUT_SPEC ? UCIR_HEADER : 0));
  return -1;
}

/* Parses the op at pos into o and consumes it: 1, 0 at a clean end, -1. */
static int parse_op(tc_reader *r, uop *o, tc_error *err) {
  int rc = src_need(r, 1, err);
  if (rc <= 0)
    return rc;
  const int uc = r->layout == LAYOUT_USERCORN;
  uint8_t op = r->in.p[r->pos];
  static const uint8_t fixed_uc[OP_COUNT] = {1,  13, 13, 13, 2,  11, 5,
                                             13, 13, 38, 17, 18, 16, 1};
  static const uint8_t fixed_spec[OP_COUNT] = {1,  13, 13, 13, 2,  11, 5,
                                               13, 13, 34, 13, 14, 14, 1};
  if (op >= OP_COUNT) {
    tc_error_set(err, "ucir: %s: unknown op %u at %s offset 0x%" PRIx64,
                 r->path, op, uc ? "decoded" : "file",
                 r->in_base + r->pos + (uc ? 0 : UCIR_HEADER));
    return -1;
  }
  size_t fixed = uc ? fixed_uc[op] : fixed_spec[op];
  if ((rc = src_need(r, fixed, err)) <= 0)
    return rc < 0 ? -1 : truncated(r, op, err);
  const uint8_t *p = r->in.p + r->pos + 1;
  size_t var = 0;
  memset(o, 0, sizeof *o);
  o->op = op;
  switch (op) {
  case OP_FRAME:
  case OP_KEYFRAME:
    o->a = get_le(p, 8);
    o->count = (uint32_t)get_le(p + 8, 4);
    break;
  case OP_JMP:
  case OP_MEM_READ:
    o->a = get_le(p, 8);
    o->b = get_le(p + 8, 4);
    break;
  case OP_MEM_WRITE:
    o->a = get_le(p, 8);
    o->b = get_le(p + 8, 4);
    var = (size_t)o->b;
    break;
  case OP_STEP:
    o->b = p[0];
    break;
  case OP_REG:
    o->a = get_le(p, 2);
    o->b = get_le(p + 2, 8);
    break;
  case OP_SPREG:
    o->a = get_le(p, 2);
    var = (size_t)get_le(p + 2, 2);
    break;
  case OP_MEM_MAP: {
    unsigned sz = uc ? 8 : 4;
    o->a = get_le(p, 8);
    o->b = get_le(p + 8, sz);
    o->prot = p[8 + sz];
    o->off = get_le(p + 9 + sz, 8);
    o->len = get_le(p + 17 + sz, 8);
    o->dlen = (size_t)get_le(p + 25 + sz, 2);
    o->flen = (size_t)get_le(p + 27 + sz, 2);
    var = o->dlen + o->flen;
    break;
  }
  case OP_MEM_UNMAP:
  case OP_MEM_PROT: {
    unsigned sz = uc ? 8 : 4;
    o->a = get_le(p, 8);
    o->b = get_le(p + 8, sz);
    if (op == OP_MEM_PROT)
      o->prot = p[8 + sz];
    break;
  }
  case OP_SYSCALL: {
    unsigned nsz = uc ? 4 : 2;
    o->a = get_le(p, nsz);
    o->b = get_le(p + nsz, 8);
    o->argc = p[nsz + 8];
    o->count = (uint32_t)get_le(p + nsz + 9, 2);
    var = 8u * o->argc;
    break;
  }
  default:
    break;
  }
  if (var) {
    /* src_need grows the buffer only as decoded data really arrives */
    if ((rc = src_need(r, fixed + var, err)) <= 0)
      return rc < 0 ? -1 : truncated(r, op, err);
    o->data = r->in.p + r->pos + fixed;
    if (op == OP_MEM_WRITE)
      o->dlen = var;
    else if (op == OP_SPREG)
      o->dlen = var;
    else if (op == OP_MEM_MAP)
      o->file = o->data + o->dlen;
  }
  r->pos += fixed + var;
  return 1;
}

/* ---- queue entries */

static qent *ent_get(tc_reader *r) {
  qent *e;
  if (r->npool)
    e = r->pool[--r->npool];
  else {
    e = calloc(1, sizeof *e);
    size_t ss = r->arch->state_size ? r->arch->state_size : 1;
    if (e) {
      e->before = malloc(ss);
      e->after = malloc(ss);
      e->regs = malloc((r->arch->nregs ? r->arch->nregs : 1) * sizeof *e->regs);
    }
    if (!e || !e->before || !e->after || !e->regs) {
      if (e) {
        free(e->before);
        free(e->after);
        free(e->regs);
        free(e);
      }
      return NULL;
    }
  }
  memset(&e->ev, 0, sizeof e->ev);
  e->final = 0;
  e->bytes.len = 0;
  e->nacc = 0;
  e->fresh = 1;
  return e;
}

static void ent_free(qent *e) {
  if (!e)
    return;
  free(e->bytes.p);
  free(e->acc);
  free(e->mem);
  free(e->before);
  free(e->after);
  free(e->regs);
  free(e);
}

static int ent_put(tc_reader *r, qent *e) {
  if (!e)
    return 0;
  if (r->npool == r->cappool) {
    size_t cap = r->cappool ? r->cappool * 2 : 16;
    qent **np = realloc(r->pool, cap * sizeof *np);
    if (!np) {
      ent_free(e);
      return 0;
    }
    r->pool = np;
    r->cappool = cap;
  }
  /* keep big buffers from one huge event from living forever */
  if (e->bytes.cap > (4u << 20)) {
    free(e->bytes.p);
    memset(&e->bytes, 0, sizeof e->bytes);
  }
  r->pool[r->npool++] = e;
  return 0;
}

static int q_push(tc_reader *r, qent *e) {
  if (r->qhead && r->qhead + r->qlen == r->qcap) {
    memmove(r->q, r->q + r->qhead, r->qlen * sizeof *r->q);
    r->qhead = 0;
  }
  if (r->qhead + r->qlen == r->qcap) {
    size_t cap = r->qcap ? r->qcap * 2 : 16;
    qent **nq = realloc(r->q, cap * sizeof *nq);
    if (!nq)
      return -1;
    r->q = nq;
    r->qcap = cap;
  }
  r->q[r->qhead + r->qlen++] = e;
  return 0;
}

static int acc_add(qent *e, uint64_t addr, uint32_t size, uint8_t kind,
                   size_t ob, size_t oa) {
  if (e->nacc == e->capacc) {
    size_t cap = e->capacc ? e->capacc * 2 : 8;
    racc *na = realloc(e->acc, cap * sizeof *na);
    if (!na)
      return -1;
    e->acc = na;
    e->capacc = cap;
  }
  e->acc[e->nacc++] = (racc){addr, size, kind, ob, oa};
  return 0;
}

/* Fills e->mem from e->acc (pointers into e->bytes, now stable). */
static int acc_publish(qent *e, const tc_mem_access **mem, uint32_t *n) {
  if (e->nacc > e->capmem) {
    tc_mem_access *nm = realloc(e->mem, e->nacc * sizeof *nm);
    if (!nm)
      return -1;
    e->mem = nm;
    e->capmem = e->nacc;
  }
  uint32_t k = 0;
  for (size_t i = 0; i < e->nacc; i++) {
    const racc *a = &e->acc[i];
    if (a->ob == NONE)
      continue; /* a read too large to carry its value */
    e->mem[k++] = (tc_mem_access){a->addr, a->size, a->kind, e->bytes.p + a->ob,
                                  e->bytes.p + a->oa};
  }
  *mem = e->mem;
  *n = k;
  return 0;
}

/* ---- replay */

static int oom(tc_error *err) {
  tc_error_set(err, "ucir: out of memory");
  return -1;
}

static void set_pc(tc_reader *r, uint8_t *state, uint64_t pc) {
  tc_state_set(r->arch, state, r->arch->pc_reg, pc & r->pc_mask);
}

static uint64_t get_pc(tc_reader *r, const uint8_t *state) {
  return tc_state_get(r->arch, state, r->arch->pc_reg);
}

/* The keyframe waiting for the PC of the next instruction gets it. */
static void resolve_kf(tc_reader *r) {
  if (r->kfpend) {
    set_pc(r, r->kfpend->after, get_pc(r, r->cur));
    r->kfpend->final = 1;
    if (!r->resolved) {
      memcpy(r->initial_state, r->kfpend->after, r->arch->state_size);
      r->info.entry = get_pc(r, r->cur);
    }
    r->kfpend = NULL;
  }
  if (!r->resolved && r->nkeyframes == 0)
    memcpy(r->initial_state, r->cur, r->arch->state_size);
  r->resolved = 1;
}

/* Before the building instruction's first effect: its state before. */
static void build_touch(tc_reader *r) {
  if (r->build->fresh) {
    memcpy(r->build->before, r->cur, r->arch->state_size);
    r->build->fresh = 0;
  }
}

static int finalize_stepped(tc_reader *r, tc_error *err) {
  qent *e = r->stepped;
  if (!e)
    return 0;
  const tc_arch *a = r->arch;
  memcpy(e->after, r->cur, a->state_size);
  tc_insn_event *in = &e->ev.u.insn;
  uint16_t n = 0;
  for (uint16_t i = 0; i < a->nregs; i++) {
    const tc_reg_info *ri = &a->regs[i];
    if (memcmp(e->before + ri->offset, e->after + ri->offset, ri->size))
      e->regs[n++] = i;
  }
  in->nregs = n;
  in->regs = e->regs;
  in->state_before = e->before;
  in->state_after = e->after;
  if (acc_publish(e, &in->mem, &in->nmem) < 0)
    return oom(err);
  e->final = 1;
  r->stepped = NULL;
  r->build->fresh = 1;
  return 0;
}

/* Copies n image bytes at addr into e->bytes; returns the offset. */
static size_t img_copy(tc_reader *r, qent *e, uint64_t addr, size_t n) {
  /* At least one byte, so e->bytes.p is not NULL even for a zero-size
   * access (callers add the offset to it). */
  if (ub_reserve(&e->bytes, n ? n : 1) < 0)
    return NONE;
  size_t off = e->bytes.len;
  tc_memimage_read(r->mem, addr, e->bytes.p + off, n);
  e->bytes.len += n;
  return off;
}

/* Undoes the writes of e after access `from` on buf = [addr, addr+n). */
static void undo_writes(qent *e, size_t from, uint64_t addr, uint8_t *buf,
                        size_t n) {
  for (size_t j = e->nacc; j-- > from;) {
    const racc *w = &e->acc[j];
    if (w->kind != TC_MEM_WRITE)
      continue;
    for (uint32_t k = 0; k < w->size; k++) {
      uint64_t x = w->addr + k;
      if (x >= addr && x - addr < n)
        buf[x - addr] = e->bytes.p[w->ob + k];
    }
  }
}

static int do_step(tc_reader *r, uint64_t size, tc_error *err) {
  if (finalize_stepped(r, err) < 0)
    return -1;
  resolve_kf(r);
  if (size == 0)
    r_warn(r, W_STEP0, "STEP of size 0");
  build_touch(r);
  qent *e = r->build;
  tc_insn_event *in = &e->ev.u.insn;
  e->ev.kind = TC_EV_INSN;
  in->index = r->nsteps++;
  in->pc = get_pc(r, r->cur);
  in->tid = r->tid;
  if (size > sizeof in->bytes)
    r_warn(r, W_BIG_STEP,
           "STEP of %u bytes: longer than any instruction; the event "
           "carries the first 16",
           (unsigned)size);
  in->size = (uint8_t)(size > sizeof in->bytes ? sizeof in->bytes : size);
  /* Values of reads: the image now, with this instruction's later writes
   * undone. */
  size_t nacc = e->nacc;
  for (size_t i = 0; i < nacc; i++) {
    racc *a = &e->acc[i];
    if (a->kind != TC_MEM_READ)
      continue;
    if (a->size > MAX_READ_VALUE) {
      r_warn(r, W_BIG_READ,
             "MEM_READ of %u bytes at 0x%" PRIx64
             " is not given to its instruction (values are rebuilt for "
             "reads up to 1 MiB)",
             a->size, a->addr);
      continue;
    }
    size_t off = img_copy(r, e, a->addr, a->size);
    if (off == NONE)
      return oom(err);
    undo_writes(e, i + 1, a->addr, e->bytes.p + off, a->size);
    a->ob = a->oa = off;
  }
  /* Instruction bytes: memory before the instruction's own writes. */
  tc_memimage_read(r->mem, in->pc, in->bytes, in->size);
  undo_writes(e, 0, in->pc, in->bytes, in->size);
  if (q_push(r, e) < 0)
    return oom(err);
  r->stepped = e;
  set_pc(r, r->cur, in->pc + size);
  if (!(r->build = ent_get(r)))
    return oom(err);
  return 0;
}

static int reg_index(tc_reader *r, uint64_t num) {
  return num < r->nregmap ? r->regmap[num] : -1;
}

static int set_reg(tc_reader *r, const uop *o, int check) {
  int idx = reg_index(r, o->a);
  if (idx < 0) {
    r_warn(r, W_UNKNOWN_REG,
           "register number %u is not a register of %s; ignored",
           (unsigned)o->a, r->arch->name);
    return 0;
  }
  const tc_reg_info *ri = &r->arch->regs[idx];
  uint8_t v[64] = {0};
  size_t n = ri->size < sizeof v ? ri->size : sizeof v;
  if (o->op == OP_REG) {
    for (size_t i = 0; i < n && i < 8; i++)
      v[i] = (uint8_t)(o->b >> (8 * i));
  } else {
    if (o->dlen != ri->size)
      r_warn(r, W_SPREG, "SPREG of %zu bytes for %s (%u bytes)", o->dlen,
             ri->name, ri->size);
    for (size_t i = 0; i < n && i < o->dlen; i++)
      v[i] = r->arch->big_endian ? o->data[o->dlen - 1 - i] : o->data[i];
  }
  uint8_t *dst = r->cur + ri->offset;
  if (check && memcmp(dst, v, n) != 0)
    r_warn(r, W_KF_REG,
           "a later KEYFRAME's %s differs from the value replayed so far",
           ri->name);
  memcpy(dst, v, n);
  return 0;
}

static char *map_name(const uop *o, char *buf, size_t max) {
  if (o->flen) {
    snprintf(buf, max, "%.*s", (int)o->flen, (const char *)o->file);
  } else if (o->dlen == 3 && memcmp(o->data, "brk", 3) == 0) {
    snprintf(buf, max, "[heap]");
  } else if (o->dlen == 0 || (o->dlen == 4 && !memcmp(o->data, "mmap", 4)) ||
             (o->dlen == 3 && !memcmp(o->data, "exe", 3)) ||
             (o->dlen == 6 && !memcmp(o->data, "interp", 6))) {
    buf[0] = 0;
  } else {
    snprintf(buf, max, "[%.*s]", (int)o->dlen, (const char *)o->data);
  }
  return buf;
}

static int push_map_event(tc_reader *r, tc_event_kind kind, uint64_t addr,
                          uint64_t size, uint32_t prot, const char *name,
                          const uint8_t *data, size_t dlen, tc_error *err) {
  qent *e = ent_get(r);
  if (!e)
    return oom(err);
  e->ev.kind = kind;
  size_t nlen = name ? strlen(name) + 1 : 1;
  if (ub_reserve(&e->bytes, nlen + dlen) < 0) {
    ent_put(r, e);
    return oom(err);
  }
  memcpy(e->bytes.p, name ? name : "", nlen);
  if (data)
    memcpy(e->bytes.p + nlen, data, dlen);
  e->ev.u.map = (tc_map_event){addr, size,
                               prot, (const char *)e->bytes.p,
                               0,    data ? e->bytes.p + nlen : NULL};
  e->final = 1;
  if (q_push(r, e) < 0) {
    ent_put(r, e);
    return oom(err);
  }
  return 0;
}

static int apply_map(tc_reader *r, uint8_t op, uint64_t addr, uint64_t size) {
  tc_event ev = {.kind = op == OP_MEM_MAP ? TC_EV_MAP : TC_EV_UNMAP};
  ev.u.map.addr = addr;
  ev.u.map.size = size;
  return tc_memimage_apply(r->mem, &ev);
}

/* The first KEYFRAME has been read: MAP events with their contents, then
 * the KEYFRAME event (its PC comes with the first JMP). */
/* One MAP event for [addr, addr+size) of keyframe mapping m, carrying the
 * replayed contents (NULL when all zero). size <= MAX_MAP_DATA if data. */
static int kf_map_event(tc_reader *r, const kmap *m, uint64_t addr,
                        uint64_t size, int with_data, tc_error *err) {
  const char *name = (const char *)r->knames.p + m->name_off;
  uint8_t *buf = NULL;
  const uint8_t *data = NULL;
  if (with_data && size) {
    buf = malloc((size_t)size);
    if (!buf)
      return oom(err);
    tc_memimage_read(r->mem, addr, buf, (size_t)size);
    for (size_t k = 0; k < size; k++)
      if (buf[k]) {
        data = buf;
        break;
      }
  }
  int rc = push_map_event(r, TC_EV_MAP, addr, size, m->prot, name, data,
                          data ? (size_t)size : 0, err);
  free(buf);
  return rc;
}

static int cmp_range(const void *a, const void *b) {
  const uint64_t *x = a, *y = b;
  return x[0] < y[0] ? -1 : x[0] > y[0];
}

/* The first KEYFRAME has been read: MAP events with their contents, then
 * the KEYFRAME event (its PC comes with the first JMP). A mapping larger
 * than MAX_MAP_DATA is given as several MAP events: zero gaps, and pieces
 * of at most MAX_MAP_DATA around the bytes the keyframe wrote. */
static int close_first_keyframe(tc_reader *r, tc_error *err) {
  uint64_t *rg = NULL;
  for (size_t i = 0; i < r->nkmaps; i++) {
    const kmap *m = &r->kmaps[i];
    uint64_t end = m->addr + m->size < m->addr ? UINT64_MAX : m->addr + m->size;
    size_t n = 0;
    for (size_t k = 0; k < r->nkw; k++)
      if (r->kw[2 * k + 1] > m->addr && r->kw[2 * k] < end)
        n++;
    if (m->size <= MAX_MAP_DATA || n == 0) {
      if (kf_map_event(r, m, m->addr, m->size, n > 0 && m->size <= MAX_MAP_DATA,
                       err) < 0)
        goto fail;
      continue;
    }
    free(rg);
    rg = malloc(n * 2 * sizeof *rg);
    if (!rg) {
      oom(err);
      goto fail;
    }
    n = 0;
    for (size_t k = 0; k < r->nkw; k++) {
      uint64_t lo = r->kw[2 * k], hi = r->kw[2 * k + 1];
      if (hi > m->addr && lo < end) {
        rg[2 * n] = lo < m->addr ? m->addr : lo;
        rg[2 * n + 1] = hi > end ? end : hi;
        n++;
      }
    }
    qsort(rg, n, 2 * sizeof *rg, cmp_range);
    uint64_t at = m->addr;
    for (size_t k = 0; k < n;) {
      if (rg[2 * k + 1] <= at) {
        k++;
        continue;
      }
      uint64_t lo = rg[2 * k] < at ? at : rg[2 * k] & ~(uint64_t)4095;
      if (lo < at)
        lo = at;
      uint64_t hi = lo + MAX_MAP_DATA > end || lo + MAX_MAP_DATA < lo
                        ? end
                        : lo + MAX_MAP_DATA;
      /* end the piece after the last write that starts within it */
      uint64_t last = rg[2 * k + 1];
      for (size_t q = k; q < n && rg[2 * q] < hi; q++)
        if (rg[2 * q + 1] > last)
          last = rg[2 * q + 1];
      uint64_t pe = ((last - m->addr + 4095) & ~(uint64_t)4095) + m->addr;
      if (pe > hi || pe < last)
        pe = hi;
      if (lo > at && kf_map_event(r, m, at, lo - at, 0, err) < 0)
        goto fail;
      if (kf_map_event(r, m, lo, pe - lo, 1, err) < 0)
        goto fail;
      at = pe;
    }
    if (at < end && kf_map_event(r, m, at, end - at, 0, err) < 0)
      goto fail;
  }
  free(rg);
  r->nkmaps = r->nkw = 0;
  r->knames.len = 0;
  return 0;
fail:
  free(rg);
  return -1;
}

static int push_keyframe(tc_reader *r, tc_error *err) {
  qent *e = ent_get(r);
  if (!e)
    return oom(err);
  if (r->kfpend)
    resolve_kf(r); /* an earlier one without a JMP since */
  e->ev.kind = TC_EV_KEYFRAME;
  memcpy(e->after, r->cur, r->arch->state_size);
  e->ev.u.key = (tc_keyframe_event){r->nsteps, r->tid, e->after};
  if (q_push(r, e) < 0) {
    ent_put(r, e);
    return oom(err);
  }
  r->kfpend = e;
  return 0;
}

static int close_level(tc_reader *r, tc_error *err) {
  lvl *l = &r->lv[--r->depth];
  if (l->op == OP_SYSCALL) {
    qent *e = l->sys;
    if (acc_publish(e, &e->ev.u.sys.mem, &e->ev.u.sys.nmem) < 0)
      return oom(err);
    e->final = 1;
    if (q_push(r, e) < 0)
      return oom(err);
    return 0;
  }
  if (l->op == OP_KEYFRAME && r->kf_first) {
    if (close_first_keyframe(r, err) < 0 || push_keyframe(r, err) < 0)
      return -1;
    r->build->fresh = 1;
  } else if (l->op == OP_KEYFRAME) {
    return push_keyframe(r, err);
  }
  return 0;
}

/* Applies one op to the replay state, queuing the events it makes. */
static int apply_op(tc_reader *r, const uop *o, tc_error *err) {
  qent *sys = NULL;
  for (int d = r->depth - 1; d >= 0 && !sys; d--)
    if (r->lv[d].op == OP_SYSCALL)
      sys = r->lv[d].sys;
  int in_kf = r->depth > 0 && r->lv[0].op == OP_KEYFRAME;
  int later_kf = in_kf && !r->kf_first;
  int frame_level = !sys && !in_kf;

  if (r->depth == 0 && o->op != OP_FRAME && o->op != OP_KEYFRAME)
    r_warn(r, W_TOPLEVEL, "a %s op outside any FRAME", op_names[o->op]);
  if (!r->ops_seen++ && o->op != OP_KEYFRAME)
    r_warn(r, W_FIRST_NOT_KF, "the first op is a %s, not a KEYFRAME",
           op_names[o->op]);
  if (frame_level && r->stepped &&
      (o->op == OP_REG || o->op == OP_SPREG || o->op == OP_MEM_READ ||
       o->op == OP_MEM_WRITE) &&
      finalize_stepped(r, err) < 0)
    return -1;

  switch (o->op) {
  case OP_NOP:
    return 0;
  case OP_FRAME:
  case OP_KEYFRAME:
    if (r->depth > 0) {
      tc_error_set(err, "ucir: %s: nested frame (a %s inside a %s)", r->path,
                   op_names[o->op], op_names[r->lv[r->depth - 1].op]);
      return -1;
    }
    r->kf_switch = o->op == OP_KEYFRAME && (uint32_t)o->a != r->tid;
    r->tid = (uint32_t)o->a;
    r->kf_mapped = 0;
    if (o->op == OP_KEYFRAME)
      r->kf_first = r->nkeyframes++ == 0;
    return 0;
  case OP_JMP:
    set_pc(r, r->cur, o->a);
    if (r->stepped) {
      if (finalize_stepped(r, err) < 0)
        return -1;
    } else {
      /* effects with no STEP (usercorn's keyframe reads) stay unowned */
      r->build->nacc = 0;
      r->build->bytes.len = 0;
      r->build->fresh = 1;
    }
    resolve_kf(r);
    return 0;
  case OP_STEP:
    return do_step(r, o->b, err);
  case OP_REG:
  case OP_SPREG:
    if (frame_level)
      build_touch(r);
    return set_reg(r, o, later_kf && !r->kf_switch);
  case OP_MEM_READ:
    if (!frame_level)
      return 0; /* the kernel's (or strace's) reads carry nothing */
    build_touch(r);
    if (acc_add(r->build, o->a, (uint32_t)o->b, TC_MEM_READ, NONE, NONE) < 0)
      return oom(err);
    return 0;
  case OP_MEM_WRITE: {
    qent *e = frame_level ? r->build : sys;
    if (in_kf) {
      if (later_kf && !r->kf_mapped) {
        /* (after a MEM_MAP in this keyframe the image was zero-filled) */
        uint8_t tmp[256];
        for (size_t k = 0; k < o->dlen; k += sizeof tmp) {
          size_t n = o->dlen - k < sizeof tmp ? o->dlen - k : sizeof tmp;
          tc_memimage_read(r->mem, o->a + k, tmp, n);
          if (memcmp(tmp, o->data + k, n) != 0) {
            r_warn(r, W_KF_MEM,
                   "a later KEYFRAME's memory at 0x%" PRIx64
                   " differs from the replayed memory",
                   o->a + k);
            break;
          }
        }
      } else if (o->dlen) {
        if (r->nkw == r->capkw) {
          size_t cap = r->capkw ? r->capkw * 2 : 16;
          uint64_t *nk = realloc(r->kw, cap * 2 * sizeof *nk);
          if (!nk)
            return oom(err);
          r->kw = nk;
          r->capkw = cap;
        }
        r->kw[2 * r->nkw] = o->a;
        r->kw[2 * r->nkw + 1] =
            o->a + o->dlen < o->a ? UINT64_MAX : o->a + o->dlen;
        r->nkw++;
      }
    } else {
      if (frame_level)
        build_touch(r);
      size_t ob = img_copy(r, e, o->a, o->dlen);
      if (ob == NONE || ub_append(&e->bytes, o->data, o->dlen) < 0 ||
          acc_add(e, o->a, (uint32_t)o->dlen, TC_MEM_WRITE, ob, ob + o->dlen) <
              0)
        return oom(err);
    }
    tc_event ev = {.kind = TC_EV_SYSCALL};
    tc_mem_access acc = {o->a, (uint32_t)o->dlen, TC_MEM_WRITE, o->data,
                         o->data};
    ev.u.sys.nmem = 1;
    ev.u.sys.mem = &acc;
    if (o->dlen && tc_memimage_apply(r->mem, &ev) < 0)
      return oom(err);
    return 0;
  }
  case OP_MEM_MAP:
  case OP_MEM_UNMAP:
  case OP_MEM_PROT: {
    if (o->prot & ~7u)
      r_warn(r, W_PROT, "protection bits 0x%x beyond RWX", o->prot);
    if (o->op != OP_MEM_PROT && apply_map(r, o->op, o->a, o->b) < 0)
      return oom(err);
    char name[512] = "";
    if (o->op == OP_MEM_MAP)
      map_name(o, name, sizeof name);
    if (o->op == OP_MEM_MAP && !r->exe_path && o->flen && o->dlen == 3 &&
        memcmp(o->data, "exe", 3) == 0) {
      r->exe_path = strdup(name);
      r->info.exe_path = r->exe_path;
    }
    if (in_kf && r->kf_first) {
      if (o->op != OP_MEM_MAP)
        return 0;
      if (r->nkmaps == r->capkmaps) {
        size_t cap = r->capkmaps ? r->capkmaps * 2 : 16;
        kmap *nk = realloc(r->kmaps, cap * sizeof *nk);
        if (!nk)
          return oom(err);
        r->kmaps = nk;
        r->capkmaps = cap;
      }
      r->kmaps[r->nkmaps++] = (kmap){o->a, o->b, o->prot & 7u, r->knames.len};
      if (ub_append(&r->knames, name, strlen(name) + 1) < 0)
        return oom(err);
      return 0;
    }
    if (later_kf) {
      r->kf_mapped = 1;
      return 0;
    }
    resolve_kf(r);
    return push_map_event(r,
                          o->op == OP_MEM_MAP     ? TC_EV_MAP
                          : o->op == OP_MEM_UNMAP ? TC_EV_UNMAP
                                                  : TC_EV_PROTECT,
                          o->a, o->b, o->prot & 7u, name, NULL, 0, err);
  }
  case OP_SYSCALL: {
    int nsys = r->depth - (r->depth > 0 && r->lv[0].op != OP_SYSCALL);
    if (nsys >= MAX_SYS_DEPTH) {
      tc_error_set(err, "ucir: %s: SYSCALL ops nested more than %d deep",
                   r->path, MAX_SYS_DEPTH);
      return -1;
    }
    resolve_kf(r);
    qent *e = ent_get(r);
    if (!e)
      return oom(err);
    e->ev.kind = TC_EV_SYSCALL;
    tc_syscall_event *s = &e->ev.u.sys;
    s->insn_index = r->nsteps ? r->nsteps - 1 : 0;
    s->tid = r->tid;
    s->nr = (uint32_t)o->a;
    s->name = tc_arch_syscall_name(r->arch, s->nr);
    s->ret = (int64_t)o->b;
    if (o->argc > 6)
      r_warn(r, W_ARGC, "a SYSCALL with %u arguments (the events keep 6)",
             o->argc);
    for (unsigned i = 0; i < o->argc && i < 6; i++)
      s->args[i] = get_le(o->data + 8 * i, 8);
    r->lv[r->depth++] = (lvl){OP_SYSCALL, o->count, e, s->args[0]};
    return 0;
  }
  case OP_EXIT: {
    memset(&r->exit, 0, sizeof r->exit);
    r->exit.reason = TC_EXIT_EXITED;
    int found = 0;
    for (int d = r->depth - 1; d >= 0; d--)
      if (r->lv[d].op == OP_SYSCALL) {
        r->exit.status = (int)(r->lv[d].arg0 & 0xff);
        found = 1;
        break;
      }
    if (!found)
      r->exit.message = "stopped; UCIR does not record why";
    r->have_exit = 1;
    return 0;
  }
  }
  return 0;
}

/* Records which register numbers a file uses (arches with no table). */
static void scan_op(tc_reader *r, const uop *o) {
  if (o->op != OP_REG && o->op != OP_SPREG)
    return;
  uint32_t n = o->op == OP_REG ? 8 : (uint32_t)o->dlen;
  if (n == 0)
    n = 1;
  if (n > r->scan_size[o->a])
    r->scan_size[o->a] = n;
}

static int finish(tc_reader *r, tc_error *err) {
  if (r->depth > 0) {
    const lvl *l = &r->lv[r->depth - 1];
    tc_error_set(err,
                 "ucir: %s: the file ends inside a %s (%u more ops "
                 "announced)",
                 r->path, op_names[l->op], l->left);
    return -1;
  }
  r->done = 1;
  if (r->scanning)
    return 0;
  if (finalize_stepped(r, err) < 0)
    return -1;
  resolve_kf(r);
  if (r->have_exit) {
    qent *e = ent_get(r);
    if (!e)
      return oom(err);
    e->ev.kind = TC_EV_EXIT;
    e->ev.u.exit = r->exit;
    e->ev.u.exit.insn_count = r->nsteps;
    e->final = 1;
    if (q_push(r, e) < 0)
      return oom(err);
  }
  return 0;
}

/* Reads and applies one op. 1: progress, 0: the end, -1: error. */
static int pump(tc_reader *r, tc_error *err) {
  if (r->done)
    return 0;
  uop o;
  int rc = parse_op(r, &o, err);
  if (rc < 0)
    return -1;
  if (rc == 0)
    return finish(r, err) < 0 ? -1 : 0;
  if (r->depth > 0 && r->lv[r->depth - 1].left == 0) {
    /* cannot happen: levels close when their count runs out */
    tc_error_set(err, "ucir: %s: internal nesting error", r->path);
    return -1;
  }
  if (r->stats && !r->scanning) {
    r->stats->ops[o.op]++;
    r->stats->toplevel += r->depth == 0;
  }
  if (r->depth > 0)
    r->lv[r->depth - 1].left--;
  if (r->scanning) {
    if ((o.op == OP_FRAME || o.op == OP_KEYFRAME) && r->depth > 0) {
      tc_error_set(err, "ucir: %s: nested frame (a %s inside a %s)", r->path,
                   op_names[o.op], op_names[r->lv[r->depth - 1].op]);
      return -1;
    }
    if (o.op == OP_SYSCALL && r->depth > MAX_SYS_DEPTH) {
      tc_error_set(err, "ucir: %s: SYSCALL ops nested more than %d deep",
                   r->path, MAX_SYS_DEPTH);
      return -1;
    }
    scan_op(r, &o);
    if (o.op == OP_SYSCALL)
      r->lv[r->depth++] = (lvl){OP_SYSCALL, o.count, NULL, 0};
  } else if (apply_op(r, &o, err) < 0) {
    return -1;
  }
  if (o.op == OP_FRAME || o.op == OP_KEYFRAME)
    r->lv[r->depth++] = (lvl){o.op, o.count, NULL, 0};
  while (r->depth > 0 && r->lv[r->depth - 1].left == 0) {
    if (r->scanning)
      r->depth--;
    else if (close_level(r, err) < 0)
      return -1;
  }
  return 1;
}

/* ---- arches the reader builds itself */

typedef struct fb_reg {
  const char *name;
  int uc_id;
  uint16_t flags;
} fb_reg;

static const fb_reg fb_arm[] = {{"r0", 66, TC_REG_GPR},
                                {"r1", 67, TC_REG_GPR},
                                {"r2", 68, TC_REG_GPR},
                                {"r3", 69, TC_REG_GPR},
                                {"r4", 70, TC_REG_GPR},
                                {"r5", 71, TC_REG_GPR},
                                {"r6", 72, TC_REG_GPR},
                                {"r7", 73, TC_REG_GPR},
                                {"r8", 74, TC_REG_GPR},
                                {"r9", 75, TC_REG_GPR},
                                {"r10", 76, TC_REG_GPR},
                                {"r11", 77, TC_REG_GPR},
                                {"r12", 78, TC_REG_GPR},
                                {"sp", 12, TC_REG_SP},
                                {"lr", 10, TC_REG_GPR},
                                {"pc", 11, TC_REG_PC},
                                {NULL, 0, 0}};
static const fb_reg fb_mips[] = {
    {"at", 3, TC_REG_GPR},  {"v0", 4, TC_REG_GPR},  {"v1", 5, TC_REG_GPR},
    {"a0", 6, TC_REG_GPR},  {"a1", 7, TC_REG_GPR},  {"a2", 8, TC_REG_GPR},
    {"a3", 9, TC_REG_GPR},  {"t0", 10, TC_REG_GPR}, {"t1", 11, TC_REG_GPR},
    {"t2", 12, TC_REG_GPR}, {"t3", 13, TC_REG_GPR}, {"t4", 14, TC_REG_GPR},
    {"t5", 15, TC_REG_GPR}, {"t6", 16, TC_REG_GPR}, {"t7", 17, TC_REG_GPR},
    {"s0", 18, TC_REG_GPR}, {"s1", 19, TC_REG_GPR}, {"s2", 20, TC_REG_GPR},
    {"s3", 21, TC_REG_GPR}, {"s4", 22, TC_REG_GPR}, {"s5", 23, TC_REG_GPR},
    {"s6", 24, TC_REG_GPR}, {"s7", 25, TC_REG_GPR}, {"t8", 26, TC_REG_GPR},
    {"t9", 27, TC_REG_GPR}, {"k0", 28, TC_REG_GPR}, {"k1", 29, TC_REG_GPR},
    {"gp", 30, TC_REG_GPR}, {"sp", 31, TC_REG_SP},  {"fp", 32, TC_REG_GPR},
    {"ra", 33, TC_REG_GPR}, {"pc", 1, TC_REG_PC},   {NULL, 0, 0}};
static const fb_reg fb_arm64[] = {
    {"x0", 199, TC_REG_GPR},  {"x1", 200, TC_REG_GPR},
    {"x2", 201, TC_REG_GPR},  {"x3", 202, TC_REG_GPR},
    {"x4", 203, TC_REG_GPR},  {"x5", 204, TC_REG_GPR},
    {"x6", 205, TC_REG_GPR},  {"x7", 206, TC_REG_GPR},
    {"x8", 207, TC_REG_GPR},  {"x9", 208, TC_REG_GPR},
    {"x10", 209, TC_REG_GPR}, {"x11", 210, TC_REG_GPR},
    {"x12", 211, TC_REG_GPR}, {"x13", 212, TC_REG_GPR},
    {"x14", 213, TC_REG_GPR}, {"x15", 214, TC_REG_GPR},
    {"x16", 215, TC_REG_GPR}, {"x17", 216, TC_REG_GPR},
    {"x18", 217, TC_REG_GPR}, {"x19", 218, TC_REG_GPR},
    {"x20", 219, TC_REG_GPR}, {"x21", 220, TC_REG_GPR},
    {"x22", 221, TC_REG_GPR}, {"x23", 222, TC_REG_GPR},
    {"x24", 223, TC_REG_GPR}, {"x25", 224, TC_REG_GPR},
    {"x26", 225, TC_REG_GPR}, {"x27", 226, TC_REG_GPR},
    {"x28", 227, TC_REG_GPR}, {"fp", 1, TC_REG_GPR},
    {"lr", 2, TC_REG_GPR},    {"sp", 4, TC_REG_SP},
    {"pc", 260, TC_REG_PC},   {NULL, 0, 0}};
static const fb_reg fb_sparc[] = {
    {"g1", 54, TC_REG_GPR}, {"g2", 55, TC_REG_GPR}, {"g3", 56, TC_REG_GPR},
    {"g4", 57, TC_REG_GPR}, {"g5", 58, TC_REG_GPR}, {"g6", 59, TC_REG_GPR},
    {"g7", 60, TC_REG_GPR}, {"o0", 78, TC_REG_GPR}, {"o1", 79, TC_REG_GPR},
    {"o2", 80, TC_REG_GPR}, {"o3", 81, TC_REG_GPR}, {"o4", 82, TC_REG_GPR},
    {"o5", 83, TC_REG_GPR}, {"sp", 84, TC_REG_SP},  {"o7", 85, TC_REG_GPR},
    {"l0", 70, TC_REG_GPR}, {"l1", 71, TC_REG_GPR}, {"l2", 72, TC_REG_GPR},
    {"l3", 73, TC_REG_GPR}, {"l4", 74, TC_REG_GPR}, {"l5", 75, TC_REG_GPR},
    {"l6", 76, TC_REG_GPR}, {"l7", 77, TC_REG_GPR}, {"i0", 61, TC_REG_GPR},
    {"i1", 62, TC_REG_GPR}, {"i2", 63, TC_REG_GPR}, {"i3", 64, TC_REG_GPR},
    {"i4", 65, TC_REG_GPR}, {"i5", 66, TC_REG_GPR}, {"fp", 67, TC_REG_GPR},
    {"i7", 68, TC_REG_GPR}, {"pc", 88, TC_REG_PC},  {NULL, 0, 0}};

typedef struct fb_arch {
  const char *name;
  tc_arch_id id;
  const fb_reg *regs;
  uint8_t ptr;
} fb_arch;

static const fb_arch fb_arches[] = {
    {"arm", TC_ARCH_ARM, fb_arm, 4},
    {"arm64", TC_ARCH_ARM64, fb_arm64, 8},
    {"mips", TC_ARCH_MIPSEL, fb_mips, 4},
    {"sparc", TC_ARCH_SPARC, fb_sparc, 4},
};

/* Arches the reader builds live as long as the process: events and the
 * trace info point at them after the reader is closed (evlog, convert).
 * Identical ones are shared, so reading many files does not grow this. */
typedef struct built_arch {
  struct built_arch *next;
  tc_arch arch;
  tc_reg_info *regs;
  char *names;
} built_arch;

static built_arch *built_arches;
static pthread_mutex_t built_lock = PTHREAD_MUTEX_INITIALIZER;

static int same_arch(const tc_arch *a, const tc_arch *b) {
  if (strcmp(a->name, b->name) != 0 || a->id != b->id ||
      a->big_endian != b->big_endian || a->nregs != b->nregs)
    return 0;
  for (int i = 0; i < a->nregs; i++)
    if (strcmp(a->regs[i].name, b->regs[i].name) != 0 ||
        a->regs[i].size != b->regs[i].size ||
        a->regs[i].uc_id != b->regs[i].uc_id)
      return 0;
  return 1;
}

/* Builds the reader's arch: from a table (fb) or the registers the
 * pre-scan saw (fb == NULL). Every register takes its pointer size (8 for
 * unknown arches, more for wider SPREG values). */
static int build_arch(tc_reader *r, const fb_arch *fb, tc_error *err) {
  size_t n = 1, names = 8 + strlen(r->arch_name) + 1;
  if (fb) {
    n = 0;
    for (const fb_reg *g = fb->regs; g->name; g++)
      n++;
  } else {
    for (size_t i = 0; i < 65536; i++)
      if (r->scan_size[i]) {
        n++;
        names += 8;
      }
  }
  built_arch *b = calloc(1, sizeof *b);
  tc_reg_info *regs = calloc(n, sizeof *regs);
  char *nb = malloc(names);
  if (!b || !regs || !nb) {
    free(b);
    free(regs);
    free(nb);
    return oom(err);
  }
  tc_arch *a = &b->arch;
  b->regs = regs;
  b->names = nb;
  uint8_t ptr = fb ? fb->ptr : 8;
  uint32_t off = 0;
  size_t k = 0, o = 0;
  if (fb) {
    for (const fb_reg *g = fb->regs; g->name; g++, k++) {
      regs[k] = (tc_reg_info){g->name, ptr, g->flags, off, g->uc_id};
      if (g->flags & TC_REG_PC)
        a->pc_reg = (uint16_t)k;
      if (g->flags & TC_REG_SP)
        a->sp_reg = a->flags_reg = (uint16_t)k;
      off += ptr;
    }
  } else {
    regs[k++] = (tc_reg_info){"pc", 8, TC_REG_PC, off, -1};
    off += 8;
    for (size_t i = 0; i < 65536 && k < n && k < 0xFFFF; i++) {
      if (!r->scan_size[i])
        continue;
      uint32_t sz = r->scan_size[i] < 8 ? 8 : r->scan_size[i];
      int w = snprintf(nb + o, 8, "r%zu", i);
      regs[k++] = (tc_reg_info){nb + o, (uint16_t)sz, TC_REG_GPR, off, (int)i};
      o += (size_t)w + 1;
      off += sz;
    }
  }
  snprintf(nb + o, names - o, "%s", fb ? fb->name : r->arch_name);
  a->name = nb + o;
  a->id = fb ? (r->dorder && fb->id == TC_ARCH_MIPSEL ? TC_ARCH_MIPS : fb->id)
             : TC_ARCH_NONE;
  /* What the generic code asks of the ISA: the arch's own table's (32-bit
   * sparc has none: its branches have delay slots, as sparc64's). */
  const tc_arch *known = tc_arch_by_id(a->id);
  a->uc_arch = a->uc_mode = a->cs_arch = a->cs_mode = -1; /* no capstone */
  if (known) {
    a->traits = known->traits;
    /* capstone's arch and mode for block ends and access lists (a zero
     * left here would be capstone's ARM for every arch) */
    a->uc_arch = known->uc_arch;
    a->uc_mode = known->uc_mode;
    a->cs_arch = known->cs_arch;
    a->cs_mode = known->cs_mode;
  } else if (a->id == TC_ARCH_SPARC) {
    a->traits = tc_arch_by_id(TC_ARCH_SPARC64)->traits;
  }
  a->big_endian = r->dorder;
  a->ptr_size = ptr;
  a->page_size = 4096;
  a->max_insn_size = 16;
  a->regs = regs;
  a->nregs = (uint16_t)k;
  a->state_size = off ? off : 1;
  a->sys.ret_reg = a->sys.nr_reg = a->sys.err_reg = -1;
  for (int i = 0; i < 6; i++)
    a->sys.arg_regs[i] = -1;
  pthread_mutex_lock(&built_lock);
  for (built_arch *e = built_arches; e; e = e->next)
    if (same_arch(&e->arch, a)) {
      r->arch = &e->arch;
      pthread_mutex_unlock(&built_lock);
      free(b);
      free(regs);
      free(nb);
      return 0;
    }
  b->next = built_arches;
  built_arches = b;
  r->arch = &b->arch;
  pthread_mutex_unlock(&built_lock);
  return 0;
}

/* ---- open / next / close */

static void ucir_close_reader(tc_reader *r) {
  if (!r)
    return;
  if (r->fp)
    fclose(r->fp);
  ent_put(r, r->popped);
  ent_put(r, r->build);
  for (size_t i = 0; i < r->qlen; i++)
    ent_free(r->q[r->qhead + i]);
  for (int d = 0; d < r->depth; d++)
    if (r->lv[d].op == OP_SYSCALL)
      ent_free(r->lv[d].sys);
  for (size_t i = 0; i < r->npool; i++)
    ent_free(r->pool[i]);
  free(r->pool);
  free(r->q);
  tc_memimage_free(r->mem);
  free(r->chunk);
  free(r->dec);
  free(r->in.p);
  free(r->regmap);
  free(r->cur);
  free(r->initial_state);
  free(r->exe_path);
  free(r->kmaps);
  free(r->knames.p);
  free(r->kw);
  free(r->scan_size);
  free(r->path);
  free(r);
}

static int ucir_probe(const uint8_t *head, size_t n, const char *path) {
  (void)path;
  return n >= 4 && memcmp(head, "UCIR", 4) == 0;
}

static int read_header(tc_reader *r, tc_error *err) {
  uint8_t h[UCIR_HEADER + SNAPPY_FRAME_ID_LEN];
  size_t got = fread(h, 1, sizeof h, r->fp);
  if (got < 4 || memcmp(h, "UCIR", 4) != 0) {
    tc_error_set(err, "ucir: %s: not a UCIR file (bad magic)", r->path);
    return -1;
  }
  if (got < UCIR_HEADER) {
    tc_error_set(err, "ucir: %s: truncated header (%zu of 74 bytes)", r->path,
                 got);
    return -1;
  }
  if (h[72] > 1 || h[73] > 1) {
    tc_error_set(err,
                 "ucir: %s: bad byte order in the header (corder %u, dorder "
                 "%u; 0 or 1 expected)",
                 r->path, h[72], h[73]);
    return -1;
  }
  memcpy(r->arch_name, h + 8, 32);
  memcpy(r->os_name, h + 40, 32);
  r->dorder = h[73];
  size_t rest = got - UCIR_HEADER;
  /* Layout: the snappy stream identifier (a prefix of it in a truncated
   * file) means usercorn's; a header-only file goes by the version. */
  if (rest == 0)
    r->layout = get_le(h + 4, 4) == 0x01000000u ? LAYOUT_USERCORN : LAYOUT_SPEC;
  else
    r->layout = memcmp(h + UCIR_HEADER, tc_snappy_stream_id, rest) == 0
                    ? LAYOUT_USERCORN
                    : LAYOUT_SPEC;
  if (fseeko(r->fp, UCIR_HEADER, SEEK_SET) != 0) {
    tc_error_set(err, "ucir: %s: cannot seek: %s", r->path, strerror(errno));
    return -1;
  }
  r->foff = UCIR_HEADER;
  return 0;
}

static int resolve_arch(tc_reader *r, tc_error *err) {
  const char *n = r->arch_name;
  static const struct {
    const char *name;
    tc_arch_id le, be;
  } names[] = {{"x86_64", TC_ARCH_X86_64, TC_ARCH_X86_64},
               {"x86", TC_ARCH_X86, TC_ARCH_X86},
               {"arm", TC_ARCH_ARM, TC_ARCH_ARM},
               {"arm64", TC_ARCH_ARM64, TC_ARCH_ARM64},
               {"mips", TC_ARCH_MIPSEL, TC_ARCH_MIPS},
               {"mipsel", TC_ARCH_MIPSEL, TC_ARCH_MIPSEL},
               {"sparc", TC_ARCH_SPARC, TC_ARCH_SPARC},
               {"sparc64", TC_ARCH_SPARC64, TC_ARCH_SPARC64},
               /* the descriptive name tracecorn writes (usercorn has none);
                * big-endian mips64 is no tracecorn arch */
               {"mips64el", TC_ARCH_MIPS64EL, TC_ARCH_NONE}};
  if (!usercorn_accepts(r->arch_name, r->os_name))
    r_warn(r, W_ARCH,
           "arch \"%s\" / os \"%s\" is not a pair usercorn accepts "
           "(reading it anyway)",
           r->arch_name, r->os_name);
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (strcmp(names[i].name, n) == 0) {
      const tc_arch *a = tc_arch_by_id(r->dorder ? names[i].be : names[i].le);
      if (a) {
        r->arch = a;
        return 0;
      }
    }
  for (size_t i = 0; i < sizeof fb_arches / sizeof fb_arches[0]; i++)
    if (strcmp(fb_arches[i].name, n) == 0 ||
        (strcmp(n, "mipsel") == 0 && fb_arches[i].id == TC_ARCH_MIPSEL))
      return build_arch(r, &fb_arches[i], err);
  /* No table: the registers are the numbers the file uses. */
  r->scan_size = calloc(65536, sizeof *r->scan_size);
  if (!r->scan_size)
    return oom(err);
  r->scanning = 1;
  int rc;
  while ((rc = pump(r, err)) == 1)
    ;
  r->scanning = 0;
  if (rc < 0)
    return -1;
  r->done = 0;
  r->depth = 0;
  r->in.len = r->pos = 0;
  r->in_base = 0;
  r->src_eof = r->seen_id = 0;
  clearerr(r->fp);
  if (fseeko(r->fp, UCIR_HEADER, SEEK_SET) != 0) {
    tc_error_set(err, "ucir: %s: cannot seek: %s", r->path, strerror(errno));
    return -1;
  }
  r->foff = UCIR_HEADER;
  return build_arch(r, NULL, err);
}

static tc_reader *open_reader(const char *path, tc_ucir_stats *stats,
                              tc_error *err) {
  tc_reader *r = calloc(1, sizeof *r);
  if (!r || !(r->path = strdup(path))) {
    free(r);
    tc_error_set(err, "ucir: out of memory");
    return NULL;
  }
  r->stats = stats;
  r->fp = tc_infile_open(path, TC_INFILE_SEEK, "ucir", err);
  if (!r->fp)
    goto fail;
  setvbuf(r->fp, NULL, _IOFBF, 1 << 20);
  struct stat st;
  if (fstat(fileno(r->fp), &st) != 0 || !S_ISREG(st.st_mode)) {
    tc_error_set(err, "ucir: %s: not a regular file", path);
    goto fail;
  }
  r->fsize = (uint64_t)st.st_size;
  if (read_header(r, err) < 0)
    goto fail;
  r->chunk = malloc(SNAPPY_FRAME_MAX_CHUNK);
  r->dec = malloc(SNAPPY_FRAME_MAX_DATA);
  if (!r->chunk || !r->dec) {
    oom(err);
    goto fail;
  }
  if (resolve_arch(r, err) < 0)
    goto fail;
  const tc_arch *a = r->arch;
  int maxid = 0;
  for (int i = 0; i < a->nregs; i++)
    if (a->regs[i].uc_id > maxid && a->regs[i].uc_id <= 0xFFFF)
      maxid = a->regs[i].uc_id;
  r->nregmap = (size_t)maxid + 1;
  r->regmap = malloc(r->nregmap * sizeof *r->regmap);
  r->cur = calloc(1, a->state_size);
  r->initial_state = calloc(1, a->state_size);
  r->mem = tc_memimage_new();
  if (!r->regmap || !r->cur || !r->initial_state || !r->mem) {
    oom(err);
    goto fail;
  }
  for (size_t i = 0; i < r->nregmap; i++)
    r->regmap[i] = -1;
  for (int i = 0; i < a->nregs; i++)
    if (a->regs[i].uc_id >= 0 && a->regs[i].uc_id <= 0xFFFF &&
        r->regmap[a->regs[i].uc_id] < 0)
      r->regmap[a->regs[i].uc_id] = (int16_t)i;
  r->pc_mask =
      a->ptr_size >= 8 ? UINT64_MAX : ((uint64_t)1 << (8 * a->ptr_size)) - 1;
  if (!(r->build = ent_get(r))) {
    oom(err);
    goto fail;
  }
  r->info.arch = a;
  r->info.has_memory = 1;
  r->info.initial_state = r->initial_state;
  r->info.keyframe_interval = 0;
  /* Read up to the first instruction: the entry PC and the initial state
   * come with its JMP. */
  while (!r->resolved) {
    int rc = pump(r, err);
    if (rc < 0)
      goto fail;
    if (rc == 0)
      break;
  }
  r->info.pid = r->tid;
  if (stats)
    stats->spec_layout = r->layout == LAYOUT_SPEC;
  return r;
fail:
  ucir_close_reader(r);
  return NULL;
}

static tc_reader *ucir_open_reader(const char *path, tc_error *err) {
  return open_reader(path, NULL, err);
}

static const tc_trace_info *ucir_reader_info(tc_reader *r) { return &r->info; }

static int ucir_next_event(tc_reader *r, tc_event *ev, tc_error *err) {
  if (r->popped) {
    ent_put(r, r->popped);
    r->popped = NULL;
  }
  for (;;) {
    if (r->qlen && r->q[r->qhead]->final) {
      qent *e = r->q[r->qhead++];
      if (--r->qlen == 0)
        r->qhead = 0;
      *ev = e->ev;
      r->popped = e;
      return 1;
    }
    int rc = pump(r, err);
    if (rc < 0) {
      r->done = 1; /* queued entries are freed at close */
      return -1;
    }
    if (rc == 0 && !(r->qlen && r->q[r->qhead]->final))
      return 0;
  }
}

const char *tc_ucir_op_name(unsigned op) {
  return op < OP_COUNT ? op_names[op] : NULL;
}

int tc_ucir_stats_read(const char *path, tc_ucir_stats *st, tc_error *err) {
  memset(st, 0, sizeof *st);
  tc_reader *r = open_reader(path, st, err);
  if (!r)
    return -1;
  tc_event ev;
  int rc;
  while ((rc = ucir_next_event(r, &ev, err)) == 1)
    st->events++;
  ucir_close_reader(r);
  return rc;
}

const tc_format tc_format_ucir = {
    .name = "ucir",
    .description = "usercorn trace (UCIR, .ucir): snappy-framed op stream "
                   "that usercorn trace reads; the reader replays it",
    .caps = TC_CAP_INSN_BYTES | TC_CAP_MEM | TC_CAP_MEM_KIND |
            TC_CAP_MEM_EXACT | TC_CAP_MEM_OLD | TC_CAP_SYSCALLS | TC_CAP_MAPS |
            TC_CAP_TID | TC_CAP_SYSCALL_MEM | TC_CAP_MODULES | TC_CAP_MAP_DATA,
    .holds_reg = ucir_holds_reg,
    .extension = ucir_extension,
    .supports = ucir_supports,
    .open_writer = ucir_open_writer,
    .write_event = ucir_write_event,
    .close_writer = ucir_close_writer,
    .probe = ucir_probe,
    .open_reader = ucir_open_reader,
    .reader_info = ucir_reader_info,
    .next_event = ucir_next_event,
    .close_reader = ucir_close_reader,
};
