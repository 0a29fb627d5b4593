/* SPDX-License-Identifier: GPL-2.0-or-later */
/* GDB trace file ("tfile", `target tfile FILE`): writer and reader.
 *
 * Facts in /work/shared/specs/tfile.md. One trace frame per executed
 * instruction: a full register block (state before the instruction), an
 * M block with the instruction bytes at PC (always the FIRST M block of a
 * frame), M blocks with the post-instruction values of the memory it
 * touched, a V block for the trace state variable $icount (instruction
 * index + 1), then context: M blocks of memory it did not touch (the
 * stack, where registers point), which tracecorn's reader skips. Every
 * instruction address has its own tracepoint and every frame the same
 * size, so that GDB's `tfind pc` works (see the writer). A last frame
 * with $icount 0 holds the state after the last instruction. */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/byteorder.h"
#include "common/hex.h"
#include "common/memimage.h"
#include "common/small_copy.h"
#include "writers/format.h"
#include "writers/io/outfile.h"
#include "writers/io/zst.h"
#include "writers/tfile/tfile_tdesc.h"

static const char tf_magic[8] = {0x7f, 'T', 'R', 'A', 'C', 'E', '0', '\n'};

enum {
  TF_LINE_MAX = 1000,         /* GDB rejects description lines this long */
  TF_MBLOCK_MAX = 65535,      /* u16 length of an M block */
  TF_RSIZE_MAX = 1 << 20,     /* sanity bound on a file's register block */
  TF_TDESC_MAX = 4 << 20,     /* sanity bound on the joined tdesc XML */
  TF_XREGS_MAX = 4096,        /* sanity bound on tdesc registers */
  TF_TRACEPOINTS_MAX = 32768, /* tracepoints kept from tp T lines */
  TF_WHILE_STEPPING = 65535   /* display only: GDB needs some count > 0 */
};

/* The trace notes (`tstatus` shows them): whether memory was recorded and,
 * where the <architecture> leaves it open (mips), the target byte order. */
#define TF_NOTES_MEM "tracecorn memory"
#define TF_NOTES_NOMEM "tracecorn no-memory"
#define TF_NOTES_BE " big-endian"
#define TF_NOTES_LE " little-endian"

/* ------------------------------------------------------------ byte order */

/* common/byteorder.h: put_uint, get_uint */

/* ------------------------------------------------------ resolved layouts */

/* A register as a tdesc declares it. */
typedef struct tf_xreg {
  char name[64];
  uint32_t bitsize;
  long regnum; /* -1: previous + 1 */
} tf_xreg;

/* One register of a register block, with its tracecorn counterpart. */
typedef struct tf_slot {
  uint32_t offset, size; /* in the register block */
  int tc_reg;            /* index in arch->regs, or -1 */
  uint8_t fill;          /* TF_ZERO / TF_ONES when tc_reg < 0 */
} tf_slot;

typedef struct tf_map {
  uint32_t rsize;
  size_t nslots;
  tf_slot *slots;
} tf_map;

typedef struct tf_numbered {
  long regnum;
  size_t order;
} tf_numbered;

static int cmp_numbered(const void *a, const void *b) {
  const tf_numbered *x = a, *y = b;
  if (x->regnum != y->regnum)
    return x->regnum < y->regnum ? -1 : 1;
  return x->order < y->order ? -1 : x->order > y->order;
}

/* Packs `xregs` by regnum as GDB does, maps each to a tracecorn register
 * through the row `row` (by GDB name) and keeps those that fit in rsize
 * (GDB stops at the first register that does not). */
static int map_build(tf_map *m, const tc_arch *arch, const tf_layout *row,
                     const tf_xreg *xregs, size_t n, uint32_t rsize,
                     tc_error *err) {
  memset(m, 0, sizeof *m);
  m->rsize = rsize;
  tf_numbered *order = calloc(n ? n : 1, sizeof *order);
  m->slots = calloc(n ? n : 1, sizeof *m->slots);
  if (!order || !m->slots) {
    free(order);
    free(m->slots);
    m->slots = NULL;
    tc_error_set(err, "tfile: out of memory");
    return -1;
  }
  long next = 0;
  for (size_t i = 0; i < n; i++) {
    order[i].regnum = xregs[i].regnum >= 0 ? xregs[i].regnum : next;
    order[i].order = i;
    next = order[i].regnum + 1;
  }
  qsort(order, n, sizeof *order, cmp_numbered);
  uint64_t off = 0;
  for (size_t k = 0; k < n; k++) {
    const tf_xreg *x = &xregs[order[k].order];
    uint32_t size = x->bitsize / 8;
    if (off + size > rsize)
      break;
    tf_slot *s = &m->slots[m->nslots++];
    s->offset = (uint32_t)off;
    s->size = size;
    s->tc_reg = -1;
    s->fill = TF_ZERO;
    const tf_reg *r = row ? tf_layout_reg(row, x->name) : NULL;
    if (r && r->fill == TF_FROM_REG && r->src)
      s->tc_reg = tc_arch_reg_index(arch, r->src);
    else if (r)
      s->fill = r->fill;
    off += size;
  }
  free(order);
  return 0;
}

/* The row's own registers as tdesc registers. */
static tf_xreg *row_xregs(const tf_layout *row) {
  tf_xreg *x = calloc(row->nregs, sizeof *x);
  if (!x)
    return NULL;
  for (size_t i = 0; i < row->nregs; i++) {
    snprintf(x[i].name, sizeof x[i].name, "%s", row->regs[i].name);
    x[i].bitsize = row->regs[i].bitsize;
    x[i].regnum = row->regs[i].regnum;
  }
  return x;
}

static int map_from_row(tf_map *m, const tc_arch *arch, const tf_layout *row,
                        uint32_t rsize, tc_error *err) {
  tf_xreg *x = row_xregs(row);
  if (!x) {
    tc_error_set(err, "tfile: out of memory");
    return -1;
  }
  int rc = map_build(m, arch, row, x, row->nregs, rsize, err);
  free(x);
  return rc;
}

/* state image (host-order integers) -> register block (target order) */
/* One slot of the register block from the state. */
static void slot_encode(const tf_slot *s, const tc_arch *arch,
                        const uint8_t *state, uint8_t *block) {
  uint8_t *dst = block + s->offset;
  if (s->tc_reg < 0) {
    memset(dst, s->fill == TF_ONES ? 0xff : 0, s->size);
    return;
  }
  const tc_reg_info *r = &arch->regs[s->tc_reg];
  uint32_t n = r->size < s->size ? r->size : s->size;
  memcpy(dst, state + r->offset, n);
  memset(dst + n, 0, s->size - n); /* zero-extended */
  if (arch->big_endian)
    for (uint32_t a = 0, b = s->size - 1; a < b; a++, b--) {
      uint8_t t = dst[a];
      dst[a] = dst[b];
      dst[b] = t;
    }
}

static void map_encode(const tf_map *m, const tc_arch *arch,
                       const uint8_t *state, uint8_t *block) {
  memset(block, 0, m->rsize);
  for (size_t i = 0; i < m->nslots; i++)
    slot_encode(&m->slots[i], arch, state, block);
}

/* register block -> state image; registers not in the block stay zero */
static void map_decode(const tf_map *m, const tc_arch *arch,
                       const uint8_t *block, uint8_t *state) {
  memset(state, 0, arch->state_size);
  uint8_t tmp[64];
  for (size_t i = 0; i < m->nslots; i++) {
    const tf_slot *s = &m->slots[i];
    if (s->tc_reg < 0)
      continue;
    const tc_reg_info *r = &arch->regs[s->tc_reg];
    uint32_t n = s->size < sizeof tmp ? s->size : sizeof tmp;
    for (uint32_t k = 0; k < n; k++)
      tmp[k] = block[s->offset + (arch->big_endian ? s->size - 1 - k : k)];
    memcpy(state + r->offset, tmp, r->size < n ? r->size : n);
  }
}

/* ------------------------------------------------------- format queries */

static int tfile_supports(const tc_arch *arch, tc_error *err) {
  if (!arch) {
    tc_error_set(err, "tfile: no architecture");
    return -1;
  }
  const tf_layout *row = tf_layout_for_table(arch);
  if (!row || tc_arch_by_id(arch->id) != tc_arch_base(arch)) {
    tc_error_set(err,
                 "tfile: no GDB register layout verified for arch %s "
                 "(tfile supports x86_64, x86, arm, arm64, mips and mipsel)",
                 arch->name ? arch->name : "?");
    return -1;
  }
  return 0;
}

/* Which registers of an arch a tfile holds: those the row maps from a
 * tracecorn register at full width inside the written block. A narrower
 * GDB register loses the high bytes (x86-64 fioff/fooff hold 32 of
 * fip/fdp's 64 bits), except x86-64 rflags whose high half is
 * reserved-zero. */
static void compute_held(const tc_arch *arch, uint8_t *held) {
  memset(held, 0, arch->nregs);
  const tf_layout *row = tf_layout_for_table(arch);
  tf_map m;
  if (!row || map_from_row(&m, arch, row, row->rsize, NULL) != 0)
    return;
  for (size_t i = 0; i < m.nslots; i++) {
    const tf_slot *s = &m.slots[i];
    if (s->tc_reg < 0)
      continue;
    held[s->tc_reg] =
        s->size >= arch->regs[s->tc_reg].size ||
        (arch->id == TC_ARCH_X86_64 && s->tc_reg == arch->flags_reg);
  }
  free(m.slots);
}

enum { TF_HELD_ARCHES = 16, TF_HELD_REGS = 512 };

static int tfile_holds_reg(const tc_arch *arch, int reg) {
  if (!arch || reg < 0 || reg >= arch->nregs)
    return 0;
  /* verify asks for every register of every instruction: the answer for
   * the built-in arches is computed once. */
  static uint8_t held[TF_HELD_ARCHES][TF_HELD_REGS];
  static atomic_int ready[TF_HELD_ARCHES];
  unsigned id = (unsigned)arch->id;
  if (id < TF_HELD_ARCHES && arch->nregs <= TF_HELD_REGS &&
      tc_arch_by_id(arch->id) == arch) {
    if (!atomic_load_explicit(&ready[id], memory_order_acquire)) {
      uint8_t tmp[TF_HELD_REGS];
      compute_held(arch, tmp);
      memcpy(held[id], tmp, arch->nregs); /* same bytes in every thread */
      atomic_store_explicit(&ready[id], 1, memory_order_release);
    }
    return held[id][reg];
  }
  uint8_t *tmp = malloc(arch->nregs);
  if (!tmp)
    return 0;
  compute_held(arch, tmp);
  int h = tmp[reg];
  free(tmp);
  return h;
}

static const char *tfile_extension(const tc_arch *arch) {
  (void)arch;
  return ".tf";
}

static int tfile_probe(const uint8_t *head, size_t n, const char *path) {
  (void)path;
  return n >= sizeof tf_magic && memcmp(head, tf_magic, sizeof tf_magic) == 0;
}

/* ---------------------------------------------------------------- writer
 *
 * Why the file looks as it does (details in docs/formats/tfile.md):
 *
 * - `tfind pc|range|line|outside` compare each frame's TRACEPOINT address,
 *   not the PC in its registers, so every distinct instruction address gets
 *   its own tracepoint (up to tfile.tracepoints; the rest, and the final
 *   frame, share a catch-all tracepoint at an address never executed).
 * - While GDB searches (tfile_get_traceframe_address), it seeks back to
 *   the data of the frame selected last (file offset 0 if none) and skips
 *   the size of the frame it just looked at from there. The search walks
 *   the right frames only if every frame has the same size D, so that
 *   "selected frame + D" is always the next frame's header, and if file
 *   offset D holds a frame header for the no-frame-selected case: the
 *   status line carries one there.
 * - Frames are padded to D with more of the stack, which GDB shows.
 * - Neither the tracepoints nor D are known before the end: frames go to
 *   a temporary file and the tfile is written when the writer closes. */

enum tf_memory { TF_MEM_TOUCHED, TF_MEM_STACK, TF_MEM_ALL };

enum {
  TF_STACK_DEFAULT = 256,        /* bytes at SP in every frame (stack, all) */
  TF_TRACEPOINTS_DEFAULT = 4096, /* GDB takes ~1 s CPU to create 4096 */
  TF_TRACEPOINTS_LIMIT = 32766,  /* int16 numbers, and the catch-all */
  TF_SLACK = 64,       /* stack bytes kept beyond the window, to pad with */
  TF_POINTED = 64,     /* bytes collected where a register points (all) */
  TF_POINTED_REGS = 8, /* registers followed per frame (all) */
  TF_PAD_MARGIN = 120, /* every length >= 120 is a sum of 11s and 13s */
  TF_PAD_TSV = 2,      /* tsv of padding V blocks: never defined */
  TF_PLANT_TPNUM = -1, /* tracepoint number of the header at offset D */
  TF_REC_FINAL = 1     /* the state after the last instruction */
};

/* One instruction address. */
typedef struct tf_pcent {
  uint64_t pc, count, first; /* hits, index of the first frame */
  int32_t tp;                /* tracepoint number, 0 = the catch-all */
  uint8_t used;
} tf_pcent;

/* A frame in the temporary file: this header, the registers that differ
 * from the previous frame's (nregs times a u16 index and the value as in
 * a state image), req_len bytes of blocks after the R block (instruction,
 * accesses, $icount, pointed memory), then stack_len bytes of the stack
 * at stack_addr to pad the frame with. Compact: the temporary file is
 * written and read once more than the tfile. */
typedef struct tf_rec {
  uint64_t pc, stack_addr;
  uint32_t req_len, stack_len, flags, nregs;
} tf_rec;

typedef struct tf_range {
  uint64_t start, end; /* [start, end) */
  size_t buf_off;      /* offset of its post-values in the scratch buffer */
} tf_range;

struct tc_writer {
  FILE *fp, *tmp;
  char *fp_buf, *tmp_buf; /* their stdio buffers (tc_outfile_buffer) */
  char *path;
  const tc_arch *arch;
  const tf_layout *row;
  tf_map map;
  enum tf_memory memory;
  uint32_t stack_bytes; /* guaranteed stack window (0 with touched) */
  uint32_t max_tracepoints;
  char notes[128];    /* hex */
  tc_memimage *image; /* guest memory, NULL without recorded memory */
  uint64_t ninsns;
  uint64_t max_req;   /* largest required part of a frame */
  uint32_t max_stack; /* largest stack window a frame has (<= stack_bytes) */
  int small_source;   /* a frame has under 11 stack bytes to pad with */
  tf_pcent *pcs;
  size_t pcs_cap, npcs;
  uint8_t *final_state;
  int have_final;
  uint8_t *prev_state; /* registers of the previous frame */
  uint8_t *diff;       /* changed registers, as stored in the temp file */
  int failed;
  uint8_t *frame;
  size_t frame_cap;
  tf_range *ranges;
  size_t ranges_cap;
  const tc_mem_access **sorted;
  size_t sorted_cap;
  uint8_t *post;
  size_t post_cap;
  uint8_t *stack; /* stack_bytes + TF_SLACK */
  uint8_t *seen;  /* per register, while following pointers */
};

static int grow(void **p, size_t *cap, size_t need, size_t elem) {
  if (need <= *cap)
    return 0;
  size_t ncap = *cap ? *cap : 64;
  while (ncap < need) {
    if (ncap > SIZE_MAX / 2 / elem)
      return -1;
    ncap *= 2;
  }
  void *np = realloc(*p, ncap * elem);
  if (!np)
    return -1;
  *p = np;
  *cap = ncap;
  return 0;
}

static int w_fail(tc_writer *w, tc_error *err) {
  if (!w->failed)
    tc_error_set(err, "tfile: writing %s failed: %s", w->path,
                 strerror(errno ? errno : EIO));
  w->failed = 1;
  return -1;
}

static int w_oom(tc_writer *w, tc_error *err) {
  if (!w->failed)
    tc_error_set(err, "tfile: out of memory");
  w->failed = 1;
  return -1;
}

static int w_bytes(tc_writer *w, const void *p, size_t n, tc_error *err) {
  errno = 0;
  if (n && fwrite(p, 1, n, w->fp) != n)
    return w_fail(w, err);
  return 0;
}

/* One description line; GDB refuses lines of 1000 bytes or more. */
static int w_line(tc_writer *w, tc_error *err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int w_line(tc_writer *w, tc_error *err, const char *fmt, ...) {
  char line[TF_LINE_MAX];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(line, sizeof line - 1, fmt, ap);
  va_end(ap);
  if (n < 0 || n >= (int)sizeof line - 1) {
    tc_error_set(err, "tfile: description line too long for GDB");
    w->failed = 1;
    return -1;
  }
  line[n++] = '\n';
  return w_bytes(w, line, (size_t)n, err);
}

static void hex_of(const char *s, char *out, size_t outsz) {
  size_t k = 0;
  for (; *s && k + 3 <= outsz; s++, k += 2)
    snprintf(out + k, 3, "%02x", (unsigned char)*s);
  out[k] = 0;
}

/* A `tp Z<num>:<addr>:<kind>:0:<len>:<hex>` source line. */
static int w_source(tc_writer *w, int num, uint64_t addr, const char *kind,
                    const char *src, tc_error *err) {
  char hex[256];
  hex_of(src, hex, sizeof hex);
  return w_line(w, err, "tp Z%x:%" PRIx64 ":%s:0:%zx:%s", num, addr, kind,
                strlen(src), hex);
}

/* The target description as "tdesc ..." lines, '\n'-separated: each line
 * of tf_tdesc_xml behind the prefix. */
static char *tdesc_lines(const tf_layout *row) {
  char *xml = tf_tdesc_xml(row);
  if (!xml)
    return NULL;
  size_t lines = 0, n = strlen(xml);
  for (size_t i = 0; i < n; i++)
    lines += xml[i] == '\n';
  char *buf = malloc(n + lines * 6 + 1);
  if (!buf) {
    free(xml);
    return NULL;
  }
  size_t len = 0;
  for (const char *l = xml; *l;) {
    const char *nl = strchr(l, '\n');
    size_t k = nl ? (size_t)(nl - l) : strlen(l);
    if (k + 6 >= TF_LINE_MAX - 1) {
      free(xml);
      free(buf);
      return NULL;
    }
    memcpy(buf + len, "tdesc ", 6);
    memcpy(buf + len + 6, l, k);
    len += 6 + k;
    buf[len++] = '\n';
    l += k + (nl ? 1 : 0);
  }
  buf[len] = 0;
  free(xml);
  return buf;
}

static void writer_free(tc_writer *w) {
  if (w->fp)
    fclose(w->fp);
  if (w->tmp)
    fclose(w->tmp);
  free(w->fp_buf);
  free(w->tmp_buf);
  tc_memimage_free(w->image);
  free(w->path);
  free(w->map.slots);
  free(w->pcs);
  free(w->final_state);
  free(w->prev_state);
  free(w->diff);
  free(w->frame);
  free(w->ranges);
  free(w->sorted);
  free(w->post);
  free(w->stack);
  free(w->seen);
  free(w);
}

static int parse_uint(const char *s, unsigned long max, unsigned long *out) {
  char *end;
  if (!s || *s < '0' || *s > '9')
    return -1;
  errno = 0;
  unsigned long v = strtoul(s, &end, 10);
  if (errno || *end || v > max)
    return -1;
  *out = v;
  return 0;
}

static int parse_options(tc_writer *w, const tc_trace_info *info,
                         tc_error *err) {
  static const char *const known[] = {"memory", "stack", "tracepoints", NULL};
  if (tc_writer_options_check(info, "tfile", known, err) < 0)
    return -1;
  w->memory = TF_MEM_STACK;
  const char *opt = tc_writer_option(info, "tfile", "memory");
  if (opt && strcmp(opt, "touched") == 0)
    w->memory = TF_MEM_TOUCHED;
  else if (opt && strcmp(opt, "all") == 0)
    w->memory = TF_MEM_ALL;
  else if (opt && strcmp(opt, "stack") != 0) {
    tc_error_set(err, "tfile: memory must be touched, stack or all, not '%s'",
                 opt);
    return -1;
  }
  unsigned long v = TF_STACK_DEFAULT;
  opt = tc_writer_option(info, "tfile", "stack");
  if (opt && parse_uint(opt, TF_MBLOCK_MAX - TF_SLACK, &v) < 0) {
    tc_error_set(err, "tfile: stack must be a number of bytes (0-%d), not '%s'",
                 TF_MBLOCK_MAX - TF_SLACK, opt);
    return -1;
  }
  w->stack_bytes = w->memory == TF_MEM_TOUCHED ? 0 : (uint32_t)v;
  v = TF_TRACEPOINTS_DEFAULT;
  opt = tc_writer_option(info, "tfile", "tracepoints");
  if (opt && parse_uint(opt, TF_TRACEPOINTS_LIMIT, &v) < 0) {
    tc_error_set(err,
                 "tfile: tracepoints must be a number (0-%d; 0: one "
                 "tracepoint, no tfind pc), not '%s'",
                 TF_TRACEPOINTS_LIMIT, opt);
    return -1;
  }
  w->max_tracepoints = (uint32_t)v;
  return 0;
}

/* A temporary file for the frames: next to the output when that is a
 * regular file (same disk), else in TMPDIR. Unlinked at once. */
static FILE *open_tmp(const char *path) {
  struct stat st;
  if (stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
    size_t n = strlen(path);
    char *t = malloc(n + 16);
    if (t) {
      memcpy(t, path, n);
      memcpy(t + n, ".tmp-XXXXXX", 12);
      int fd = mkstemp(t);
      FILE *f = fd >= 0 ? fdopen(fd, "w+b") : NULL;
      if (fd >= 0) {
        unlink(t);
        if (!f)
          close(fd);
      }
      free(t);
      if (f)
        return f;
    }
  }
  return tmpfile();
}

static tc_writer *tfile_open_writer(const char *path, const tc_trace_info *info,
                                    tc_error *err) {
  if (!info || tfile_supports(info->arch, err) != 0)
    return NULL;
  const tc_arch *arch = info->arch;
  tc_writer *w = calloc(1, sizeof *w);
  if (!w || !(w->path = strdup(path))) {
    free(w);
    tc_error_set(err, "tfile: out of memory");
    return NULL;
  }
  w->arch = arch;
  w->row = tf_layout_for_table(arch);
  if (parse_options(w, info, err) != 0 ||
      map_from_row(&w->map, arch, w->row, w->row->rsize, err) != 0) {
    writer_free(w);
    return NULL;
  }
  if (!(w->final_state = malloc(arch->state_size)) ||
      !(w->prev_state = calloc(1, arch->state_size)) ||
      !(w->diff = malloc(arch->state_size + 2u * arch->nregs)) ||
      !(w->stack = malloc(w->stack_bytes + TF_SLACK)) ||
      !(w->seen = calloc(arch->nregs, 1)) ||
      (info->has_memory && !(w->image = tc_memimage_new()))) {
    tc_error_set(err, "tfile: out of memory");
    writer_free(w);
    return NULL;
  }
  w->fp = tc_outfile_fopen(path, "wb");
  if (!w->fp) {
    tc_error_set(err, "tfile: cannot create %s: %s", path, strerror(errno));
    writer_free(w);
    return NULL;
  }
  if (!(w->tmp = open_tmp(path))) {
    tc_error_set(err, "tfile: cannot create a temporary file for %s: %s", path,
                 strerror(errno));
    writer_free(w);
    return NULL;
  }
  /* ~800 B per frame: stdio's default buffers made the kernel's time
   * most of tfile's */
  tc_outfile_buffer(w->fp, &w->fp_buf);
  tc_outfile_buffer(w->tmp, &w->tmp_buf);
  char text[64];
  snprintf(text, sizeof text, "%s%s",
           info->has_memory ? TF_NOTES_MEM : TF_NOTES_NOMEM,
           !tf_layout_byte_order_ambiguous(w->row) ? ""
           : arch->big_endian                      ? TF_NOTES_BE
                                                   : TF_NOTES_LE);
  hex_of(text, w->notes, sizeof w->notes);
  return w;
}

/* ------------------------------------------------------ instruction pcs */

static size_t pc_slot(const tc_writer *w, uint64_t pc) {
  size_t s = (size_t)((pc * 0x9e3779b97f4a7c15ull) >> 20) & (w->pcs_cap - 1);
  while (w->pcs[s].used && w->pcs[s].pc != pc)
    s = (s + 1) & (w->pcs_cap - 1);
  return s;
}

static tf_pcent *pc_find(const tc_writer *w, uint64_t pc) {
  if (!w->pcs_cap)
    return NULL;
  tf_pcent *e = &w->pcs[pc_slot(w, pc)];
  return e->used ? e : NULL;
}

static int pc_hit(tc_writer *w, uint64_t pc, uint64_t frame) {
  if ((w->npcs + 1) * 2 > w->pcs_cap) {
    size_t ncap = w->pcs_cap ? w->pcs_cap * 2 : 1024;
    tf_pcent *old = w->pcs;
    size_t ocap = w->pcs_cap;
    if (!(w->pcs = calloc(ncap, sizeof *w->pcs))) {
      w->pcs = old;
      return -1;
    }
    w->pcs_cap = ncap;
    for (size_t i = 0; i < ocap; i++)
      if (old[i].used)
        w->pcs[pc_slot(w, old[i].pc)] = old[i];
    free(old);
  }
  tf_pcent *e = &w->pcs[pc_slot(w, pc)];
  if (!e->used) {
    *e = (tf_pcent){pc, 0, frame, 0, 1};
    w->npcs++;
  }
  e->count++;
  return 0;
}

/* ----------------------------------------------------------- one frame */

static int cmp_access(const void *a, const void *b) {
  const tc_mem_access *x = *(const tc_mem_access *const *)a;
  const tc_mem_access *y = *(const tc_mem_access *const *)b;
  return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* End of an access, clipped at the top of the address space. */
static uint64_t access_end(const tc_mem_access *a) {
  return a->size > UINT64_MAX - a->addr ? UINT64_MAX : a->addr + a->size;
}

/* Merges the accesses into disjoint ranges of post-instruction values:
 * reads contribute the bytes read, writes (applied after, in order) the
 * bytes written. Returns the number of ranges, -1 on failure. */
static long merge_accesses(tc_writer *w, const tc_insn_event *in,
                           tc_error *err) {
  size_t n = 0;
  if (grow((void **)&w->sorted, &w->sorted_cap, in->nmem ? in->nmem : 1,
           sizeof *w->sorted))
    goto oom;
  for (uint32_t i = 0; i < in->nmem; i++)
    if (in->mem[i].size > 0)
      w->sorted[n++] = &in->mem[i];
  qsort(w->sorted, n, sizeof *w->sorted, cmp_access);
  size_t nr = 0, total = 0;
  for (size_t i = 0; i < n; i++) {
    const tc_mem_access *a = w->sorted[i];
    uint64_t end = access_end(a);
    if (nr && a->addr <= w->ranges[nr - 1].end) {
      tf_range *r = &w->ranges[nr - 1];
      if (end > r->end) {
        total += end - r->end;
        r->end = end;
      }
    } else {
      if (grow((void **)&w->ranges, &w->ranges_cap, nr + 1, sizeof *w->ranges))
        goto oom;
      w->ranges[nr++] = (tf_range){a->addr, end, total};
      total += end - a->addr;
    }
    if (total > UINT32_MAX) {
      tc_error_set(err,
                   "tfile: instruction %" PRIu64
                   " touches too much memory for one trace frame",
                   in->index);
      return -1;
    }
  }
  if (grow((void **)&w->post, &w->post_cap, total ? total : 1, 1))
    goto oom;
  for (int pass = TC_MEM_READ; pass <= TC_MEM_WRITE; pass++)
    for (uint32_t i = 0; i < in->nmem; i++) {
      const tc_mem_access *a = &in->mem[i];
      int is_write = a->kind == TC_MEM_WRITE;
      if (a->size == 0 || is_write != (pass == TC_MEM_WRITE))
        continue;
      const uint8_t *data =
          is_write ? a->after : (a->after ? a->after : a->before);
      size_t lo = 0, hi = nr; /* the range holding a->addr */
      while (hi - lo > 1) {
        size_t mid = (lo + hi) / 2;
        if (w->ranges[mid].start <= a->addr)
          lo = mid;
        else
          hi = mid;
      }
      const tf_range *r = &w->ranges[lo];
      uint8_t *dst = w->post + r->buf_off + (a->addr - r->start);
      size_t len = (size_t)(access_end(a) - a->addr);
      if (data)
        memcpy(dst, data, len);
      else
        memset(dst, 0, len);
    }
  return (long)nr;
oom:
  tc_error_set(err, "tfile: out of memory");
  return -1;
}

/* Appends one M block (space already reserved). */
static size_t put_mblock(uint8_t *p, uint64_t addr, const uint8_t *data,
                         uint16_t len, int be) {
  p[0] = 'M';
  put_uint(p + 1, addr, 8, be);
  put_uint(p + 9, len, 2, be);
  if (len)
    memcpy(p + 11, data, len);
  return 11u + len;
}

static size_t put_vblock(uint8_t *p, int32_t num, int64_t value, int be) {
  p[0] = 'V';
  put_uint(p + 1, (uint32_t)num, 4, be);
  put_uint(p + 5, (uint64_t)value, 8, be);
  return 13;
}

static int cmp_range(const void *a, const void *b) {
  const tf_range *x = a, *y = b;
  return x->start < y->start ? -1 : x->start > y->start;
}

/* memory=all: where the registers point (argument registers first), up
 * to TF_POINTED bytes each, outside the stack window; merged, in
 * w->ranges. Returns the count. */
static size_t pointed_ranges(tc_writer *w, const uint8_t *state, uint64_t sp,
                             uint64_t stack_len) {
  const tc_arch *a = w->arch;
  tf_range win[TF_POINTED_REGS];
  size_t n = 0;
  uint8_t scratch[TF_POINTED];
  memset(w->seen, 0, a->nregs);
  for (int pass = 0; pass < 2 && n < TF_POINTED_REGS; pass++)
    for (int k = 0; k < (pass ? a->nregs : 6) && n < TF_POINTED_REGS; k++) {
      int r = pass ? k : a->sys.arg_regs[k];
      if (r < 0 || r >= a->nregs || w->seen[r] || r == a->sp_reg ||
          r == a->pc_reg || !(a->regs[r].flags & TC_REG_GPR) ||
          a->regs[r].size > 8)
        continue;
      w->seen[r] = 1;
      uint64_t v = tc_state_get(a, state, r);
      size_t len = tc_memimage_read_known(w->image, v, scratch, TF_POINTED);
      if (len == 0 || (v >= sp && v - sp + len <= stack_len))
        continue;
      win[n++] = (tf_range){v, v + len, 0};
    }
  qsort(win, n, sizeof win[0], cmp_range);
  size_t nr = 0;
  for (size_t i = 0; i < n; i++) {
    if (nr && win[i].start <= w->ranges[nr - 1].end) {
      if (win[i].end > w->ranges[nr - 1].end)
        w->ranges[nr - 1].end = win[i].end;
    } else {
      w->ranges[nr++] = win[i];
    }
  }
  return nr;
}

/* A frame's blocks into the temporary file. `state` holds the registers,
 * `in` the instruction (NULL for the final state). */
static int put_frame(tc_writer *w, const tc_insn_event *in,
                     const uint8_t *state, uint64_t icount, uint32_t flags,
                     tc_error *err) {
  const tc_arch *arch = w->arch;
  int be = arch->big_endian;
  long nr = in ? merge_accesses(w, in, err) : 0;
  if (nr < 0)
    return -1;
  /* the stack, from SP, to pad the frame with */
  uint64_t sp = tc_state_get(arch, state, arch->sp_reg);
  size_t stack_len = w->image
                         ? tc_memimage_read_known(w->image, sp, w->stack,
                                                  w->stack_bytes + TF_SLACK)
                         : 0;
  /* instruction, accesses, $icount (the R block is added at close) */
  uint64_t size = 13;
  uint8_t isize = 0;
  if (in) {
    isize = in->size <= sizeof in->bytes ? in->size : sizeof in->bytes;
    if (isize)
      size += 11 + isize;
  }
  for (long i = 0; i < nr; i++) {
    uint64_t len = w->ranges[i].end - w->ranges[i].start;
    size += len + 11 * ((len + TF_MBLOCK_MAX - 1) / TF_MBLOCK_MAX);
  }
  if (size > UINT32_MAX / 2) {
    tc_error_set(err,
                 "tfile: trace frame of instruction %" PRIu64 " exceeds 2 GiB",
                 icount - 1);
    return -1;
  }
  if (grow((void **)&w->frame, &w->frame_cap,
           size + TF_POINTED_REGS * (11 + TF_POINTED), 1))
    return w_oom(w, err);
  uint8_t *p = w->frame;
  size_t pos = 0;
  if (isize) /* first M block = the instruction bytes (the reader's rule) */
    pos += put_mblock(p + pos, in->pc, in->bytes, isize, be);
  for (long i = 0; i < nr; i++) {
    const tf_range *r = &w->ranges[i];
    uint64_t len = r->end - r->start;
    for (uint64_t done = 0; done < len; done += TF_MBLOCK_MAX) {
      uint64_t chunk = len - done < TF_MBLOCK_MAX ? len - done : TF_MBLOCK_MAX;
      pos += put_mblock(p + pos, r->start + done, w->post + r->buf_off + done,
                        (uint16_t)chunk, be);
    }
  }
  /* M blocks after the $icount V block are context, not accesses */
  pos += put_vblock(p + pos, 1, (int64_t)icount, be);
  if (w->memory == TF_MEM_ALL && w->image) {
    if (grow((void **)&w->ranges, &w->ranges_cap, TF_POINTED_REGS,
             sizeof *w->ranges))
      return w_oom(w, err);
    size_t guaranteed = stack_len < w->stack_bytes ? stack_len : w->stack_bytes;
    size_t np = pointed_ranges(w, state, sp, guaranteed);
    for (size_t i = 0; i < np; i++) {
      uint8_t buf[TF_POINTED * TF_POINTED_REGS];
      size_t want = (size_t)(w->ranges[i].end - w->ranges[i].start);
      size_t got =
          tc_memimage_read_known(w->image, w->ranges[i].start, buf,
                                 want < sizeof buf ? want : sizeof buf);
      if (got)
        pos += put_mblock(p + pos, w->ranges[i].start, buf, (uint16_t)got, be);
    }
  }
  /* the registers that changed since the previous frame */
  size_t dlen = 0;
  uint32_t nregs = 0;
  for (int r = 0; r < arch->nregs; r++) {
    const tc_reg_info *ri = &arch->regs[r];
    if (tc_equal_small(state + ri->offset, w->prev_state + ri->offset,
                       ri->size))
      continue;
    memcpy(w->diff + dlen, &(uint16_t){(uint16_t)r}, 2);
    memcpy(w->diff + dlen + 2, state + ri->offset, ri->size);
    memcpy(w->prev_state + ri->offset, state + ri->offset, ri->size);
    dlen += 2u + ri->size;
    nregs++;
  }
  tf_rec rec = {in ? in->pc : tc_state_get(arch, state, arch->pc_reg),
                sp,
                (uint32_t)pos,
                (uint32_t)stack_len,
                flags,
                nregs};
  errno = 0;
  if (fwrite(&rec, sizeof rec, 1, w->tmp) != 1 ||
      (dlen && fwrite(w->diff, 1, dlen, w->tmp) != dlen) ||
      fwrite(p, 1, pos, w->tmp) != pos ||
      (stack_len && fwrite(w->stack, 1, stack_len, w->tmp) != stack_len))
    return w_fail(w, err);
  pos += 1 + w->map.rsize;
  if (pos > w->max_req)
    w->max_req = pos;
  if (stack_len < 11)
    w->small_source = 1;
  if (stack_len > w->max_stack)
    w->max_stack =
        stack_len < w->stack_bytes ? (uint32_t)stack_len : w->stack_bytes;
  return 0;
}

static int write_insn(tc_writer *w, const tc_event *ev, tc_error *err) {
  const tc_insn_event *in = &ev->u.insn;
  if (!in->state_before) {
    tc_error_set(err, "tfile: instruction %" PRIu64 " has no register state",
                 in->index);
    return -1;
  }
  /* collected memory shows its values after the instruction */
  if (w->image && tc_memimage_apply(w->image, ev) < 0)
    return w_oom(w, err);
  if (pc_hit(w, in->pc, w->ninsns) < 0)
    return w_oom(w, err);
  if (put_frame(w, in, in->state_before, in->index + 1, 0, err) != 0)
    return -1;
  w->ninsns++;
  const uint8_t *after = in->state_after ? in->state_after : in->state_before;
  memcpy(w->final_state, after, w->arch->state_size);
  w->have_final = 1;
  return 0;
}

static int tfile_write_event(tc_writer *w, const tc_event *ev, tc_error *err) {
  if (w->failed) {
    tc_error_set(err, "tfile: %s: an earlier write failed", w->path);
    return -1;
  }
  switch (ev->kind) {
  case TC_EV_INSN:
    if (write_insn(w, ev, err) != 0) {
      w->failed = 1;
      return -1;
    }
    return 0;
  case TC_EV_KEYFRAME:
    /* A trace with no instruction (usercorn's strace-only and block-only
     * files) still gets one frame, the registers its keyframe holds, so
     * that GDB has a frame to select. */
    if (!w->ninsns) {
      memcpy(w->final_state, ev->u.key.state, w->arch->state_size);
      w->have_final = 1;
    }
    return 0;
  case TC_EV_MAP:
  case TC_EV_UNMAP:
  case TC_EV_SYSCALL:
  case TC_EV_SIGNAL:
    /* not stored, but they change the memory frames show */
    if (w->image && tc_memimage_apply(w->image, ev) < 0)
      return w_oom(w, err);
    return 0;
  default:
    return 0;
  }
}

/* --------------------------------------------------------------- close */

static int cmp_pc_addr(const void *a, const void *b) {
  const tf_pcent *x = *(tf_pcent *const *)a, *y = *(tf_pcent *const *)b;
  return x->pc < y->pc ? -1 : x->pc > y->pc;
}

/* Most hit first: GDB finds a tracepoint by walking its list from number
 * 1, once per frame while searching, so hot addresses get low numbers. */
static int cmp_pc_hits(const void *a, const void *b) {
  const tf_pcent *x = *(tf_pcent *const *)a, *y = *(tf_pcent *const *)b;
  if (x->count != y->count)
    return x->count > y->count ? -1 : 1;
  return x->first < y->first ? -1 : x->first > y->first;
}

/* Numbers the tracked addresses (the lowest ones if there are more than
 * allowed: in a static executable the program's own code comes before
 * libc's) and returns how many got a tracepoint. */
static long number_tracepoints(tc_writer *w, tf_pcent ***out) {
  tf_pcent **v = malloc((w->npcs ? w->npcs : 1) * sizeof *v);
  if (!v)
    return -1;
  size_t n = 0;
  for (size_t i = 0; i < w->pcs_cap; i++)
    if (w->pcs[i].used)
      v[n++] = &w->pcs[i];
  size_t t = n < w->max_tracepoints ? n : w->max_tracepoints;
  if (t < n)
    qsort(v, n, sizeof *v, cmp_pc_addr);
  qsort(v, t, sizeof *v, cmp_pc_hits);
  for (size_t i = 0; i < n; i++)
    v[i]->tp = i < t ? (int32_t)(i + 1) : 0;
  *out = v;
  return (long)t;
}

/* Whether D, as the u32 of a frame header, can sit in the status line:
 * no newline, no ';' (GDB's field separator). */
static int plantable(uint64_t d, int be) {
  uint8_t b[4];
  put_uint(b, d, 4, be);
  for (int i = 0; i < 4; i++)
    if (b[i] == '\n' || b[i] == ';')
      return 0;
  return 1;
}

/* Fills r bytes (0, or >= 11) of frame padding with M blocks of the
 * stack (the data at addr, len bytes, repeated if need be) or, with under
 * 11 bytes of stack, with empty M blocks and unused V blocks (then
 * r >= TF_PAD_MARGIN or r is a sum of 11s and 13s). Returns 0, -1 if r
 * cannot be made. */
static int put_padding(uint8_t *p, size_t r, uint64_t addr, const uint8_t *data,
                       size_t len, int be) {
  if (r == 0)
    return 0;
  if (r < 11)
    return -1;
  if (len >= r - 11) {
    put_mblock(p, addr, data, (uint16_t)(r - 11), be);
    return 0;
  }
  if (len >= 11) {
    size_t k = (r + 11 + len - 1) / (11 + len);
    size_t rest = r - 11 * k; /* <= k * len */
    for (size_t i = 0; i < k; i++) {
      size_t l = rest < len ? rest : len;
      p += put_mblock(p, addr, data, (uint16_t)l, be);
      rest -= l;
    }
    return 0;
  }
  for (size_t b = 0; b <= 10 && 13 * b <= r; b++)
    if ((r - 13 * b) % 11 == 0) {
      for (size_t i = 0; i < (r - 13 * b) / 11; i++)
        p += put_mblock(p, 0, NULL, 0, be);
      for (size_t i = 0; i < b; i++)
        p += put_vblock(p, TF_PAD_TSV, 0, be);
      return 0;
    }
  return -1;
}

/* The description section, with a frame header (tracepoint -1, size D)
 * at file offset D in the status line. */
static int write_description(tc_writer *w, uint64_t nframes, uint64_t d,
                             tf_pcent **tps, long ntps, int catch_num,
                             uint64_t catch_addr, uint64_t catch_hits,
                             tc_error *err) {
  const int be = w->arch->big_endian;
  char *tdesc = tdesc_lines(w->row);
  if (!tdesc)
    return w_oom(w, err);
  char prefix[TF_LINE_MAX];
  int pl = snprintf(prefix, sizeof prefix,
                    "status 0;tstop::0;tframes:%x;tcreated:%x;notes:%s;"
                    "tcframe:",
                    (unsigned)(nframes > 0x7fffffff ? 0x7fffffff : nframes),
                    (unsigned)(nframes > 0x7fffffff ? 0x7fffffff : nframes),
                    w->notes);
  /* the status line: prefix, '0' * pad, 6 header bytes, '\n' */
  const uint64_t pad_max = TF_LINE_MAX - 10 - (uint64_t)pl;
  uint64_t off = sizeof tf_magic;
  char rline[32];
  int rl = snprintf(rline, sizeof rline, "R %x\n", w->row->rsize);
  if (w_bytes(w, tf_magic, sizeof tf_magic, err) ||
      w_bytes(w, rline, (size_t)rl, err))
    goto fail;
  off += (uint64_t)rl;
  const char *t = tdesc;
  int planted = nframes == 0; /* no frames: nothing to search */
  if (!planted && d < off + (uint64_t)pl) {
    free(tdesc);
    tc_error_set(err,
                 "tfile: internal error: frame size %" PRIu64
                 " too small for the description",
                 d);
    w->failed = 1;
    return -1;
  }
  while (!planted) {
    /* tdesc lines while they fit before D, then the status line */
    const char *nl = *t ? strchr(t, '\n') : NULL;
    size_t len = nl ? (size_t)(nl - t) + 1 : 0;
    if (len && off + len + (uint64_t)pl <= d) {
      if (w_bytes(w, t, len, err))
        goto fail;
      t += len;
      off += len;
      continue;
    }
    if (d - off - (uint64_t)pl <= pad_max) {
      char line[TF_LINE_MAX + 16];
      size_t pad = (size_t)(d - off - (uint64_t)pl);
      memcpy(line, prefix, (size_t)pl);
      memset(line + pl, '0', pad);
      put_uint((uint8_t *)line + pl + pad, (uint64_t)(uint16_t)TF_PLANT_TPNUM,
               2, be);
      put_uint((uint8_t *)line + pl + pad + 2, d, 4, be);
      line[(size_t)pl + pad + 6] = '\n';
      if (w_bytes(w, line, (size_t)pl + pad + 7, err))
        goto fail;
      off += (uint64_t)pl + pad + 7;
      planted = 1;
      break;
    }
    /* still too far: whitespace after the XML */
    uint64_t gap = d - off - (uint64_t)pl - pad_max; /* > 0 */
    size_t spaces = gap + 7 < TF_LINE_MAX - 10 ? (size_t)gap : TF_LINE_MAX - 17;
    char line[TF_LINE_MAX];
    memcpy(line, "tdesc ", 6);
    memset(line + 6, ' ', spaces);
    line[6 + spaces] = '\n';
    if (w_bytes(w, line, spaces + 7, err))
      goto fail;
    off += spaces + 7;
  }
  if (nframes == 0 &&
      w_line(w, err, "status 0;tstop::0;tframes:0;tcreated:0;notes:%s",
             w->notes))
    goto fail;
  if (w_bytes(w, t, strlen(t), err))
    goto fail;
  char icount[32];
  hex_of("icount", icount, sizeof icount);
  if (w_line(w, err, "tsv 1:0:0:%s", icount))
    goto fail;
  /* tracepoints in descending order, so GDB's numbers equal the file's */
  char at[32], step[64];
  snprintf(step, sizeof step, "while-stepping %d", TF_WHILE_STEPPING);
  if (catch_hits || ntps == 0) {
    snprintf(at, sizeof at, "*0x%" PRIx64, catch_addr);
    if (w_line(w, err, "tp T%x:%" PRIx64 ":E:0:0", catch_num, catch_addr) ||
        w_source(w, catch_num, catch_addr, "at", at, err) ||
        w_source(w, catch_num, catch_addr, "cmd", "collect $regs", err) ||
        w_source(w, catch_num, catch_addr, "cmd", step, err) ||
        w_source(w, catch_num, catch_addr, "cmd", "collect $regs", err) ||
        w_source(w, catch_num, catch_addr, "cmd", "end", err) ||
        w_line(w, err, "tp V%x:%" PRIx64 ":%" PRIx64 ":0", catch_num,
               catch_addr, catch_hits))
      goto fail;
  }
  for (long i = ntps - 1; i >= 0; i--) {
    const tf_pcent *e = tps[i];
    snprintf(at, sizeof at, "*0x%" PRIx64, e->pc);
    if (w_line(w, err, "tp T%x:%" PRIx64 ":E:0:0", e->tp, e->pc) ||
        w_source(w, e->tp, e->pc, "at", at, err) ||
        w_source(w, e->tp, e->pc, "cmd", "collect $regs", err) ||
        w_line(w, err, "tp V%x:%" PRIx64 ":%" PRIx64 ":0", e->tp, e->pc,
               e->count))
      goto fail;
  }
  if (w_line(w, err, "%s", ""))
    goto fail;
  free(tdesc);
  return 0;
fail:
  free(tdesc);
  return -1;
}

static int finish(tc_writer *w, tc_error *err) {
  const tc_arch *arch = w->arch;
  const int be = arch->big_endian;
  if (w->have_final &&
      put_frame(w, NULL, w->final_state, 0, TF_REC_FINAL, err) != 0)
    return -1;
  uint64_t nframes = w->ninsns + (uint64_t)w->have_final;
  tf_pcent **tps = NULL;
  long ntps = number_tracepoints(w, &tps);
  if (ntps < 0)
    return w_oom(w, err);
  int catch_num = (int)ntps + 1;
  uint64_t mask = arch->ptr_size >= 8 ? UINT64_MAX : 0xffffffffu;
  uint64_t catch_addr = pc_find(w, 0) ? mask : 0; /* never executed */
  uint64_t catch_hits = (uint64_t)w->have_final;
  for (long i = ntps; i < (long)w->npcs; i++)
    catch_hits += tps[i]->count;
  /* D: the largest frame, the stack window (when any stack is known),
   * room for a padding block */
  uint64_t d =
      w->max_req + 11 + w->max_stack + (w->small_source ? TF_PAD_MARGIN : 0);
  uint64_t min_d = sizeof tf_magic + 16 + 80 + strlen(w->notes) + 16;
  if (d < min_d)
    d = min_d;
  while (!plantable(d, be))
    d++;
  if (nframes && d > UINT32_MAX) {
    free(tps);
    tc_error_set(err, "tfile: a trace frame of %s exceeds 4 GiB", w->path);
    w->failed = 1;
    return -1;
  }
  int rc = write_description(w, nframes, d, tps, ntps, catch_num, catch_addr,
                             catch_hits, err);
  free(tps);
  if (rc != 0)
    return -1;
  /* the frames, padded to D */
  errno = 0;
  if (fflush(w->tmp) != 0 || fseek(w->tmp, 0, SEEK_SET) != 0)
    return w_fail(w, err);
  uint8_t *buf = NULL, *stack = NULL;
  size_t cap = 0, scap = 0;
  /* the register block is encoded into buf even with no frame to write
   * (a writer closed before any event: D is then smaller than it) */
  size_t need = 6 + d > 7 + w->map.rsize ? 6 + d : 7 + w->map.rsize;
  if (grow((void **)&buf, &cap, need, 1)) {
    free(buf);
    return w_oom(w, err);
  }
  uint8_t *state = w->prev_state; /* rebuilt from the changes */
  memset(state, 0, arch->state_size);
  const size_t rlen = 1 + w->map.rsize;
  buf[6] = 'R';
  /* The register block is kept from one frame to the next and only the
   * slots of the registers a frame changed are encoded again: per
   * register, its slots (slot_of[r] .. a chain through slot_next). */
  int *slot_of = malloc((size_t)arch->nregs * sizeof *slot_of);
  int *slot_next = malloc((w->map.nslots + 1) * sizeof *slot_next);
  uint16_t *changed = malloc(((size_t)arch->nregs + 1) * sizeof *changed);
  if (!slot_of || !slot_next || !changed) {
    free(slot_of), free(slot_next), free(changed), free(buf);
    return w_oom(w, err);
  }
  for (int r = 0; r < arch->nregs; r++)
    slot_of[r] = -1;
  for (size_t i = w->map.nslots; i-- > 0;) {
    int r = w->map.slots[i].tc_reg;
    slot_next[i] = r >= 0 ? slot_of[r] : -1;
    if (r >= 0)
      slot_of[r] = (int)i;
  }
  map_encode(&w->map, arch, state, buf + 7);
  for (uint64_t f = 0; f < nframes; f++) {
    tf_rec rec;
    int ok = fread(&rec, sizeof rec, 1, w->tmp) == 1 &&
             rec.nregs <= arch->nregs && rec.req_len <= d - 11 - rlen;
    for (uint32_t k = 0; ok && k < rec.nregs; k++) {
      uint16_t r;
      ok = fread(&r, 2, 1, w->tmp) == 1 && r < arch->nregs &&
           fread(state + arch->regs[r].offset, arch->regs[r].size, 1, w->tmp) ==
               1;
      if (ok)
        changed[k] = r;
    }
    if (!ok ||
        grow((void **)&stack, &scap, rec.stack_len ? rec.stack_len : 1, 1) ||
        fread(buf + 6 + rlen, 1, rec.req_len, w->tmp) != rec.req_len ||
        fread(stack, 1, rec.stack_len, w->tmp) != rec.stack_len) {
      free(buf), free(stack), free(slot_of), free(slot_next), free(changed);
      tc_error_set(err, "tfile: %s: reading back the temporary frames failed",
                   w->path);
      w->failed = 1;
      return -1;
    }
    const tf_pcent *e = rec.flags & TF_REC_FINAL ? NULL : pc_find(w, rec.pc);
    int tp = e && e->tp ? e->tp : catch_num;
    put_uint(buf, (uint64_t)tp, 2, be);
    put_uint(buf + 2, d, 4, be);
    for (uint32_t k = 0; k < rec.nregs; k++)
      for (int i = slot_of[changed[k]]; i >= 0; i = slot_next[i])
        slot_encode(&w->map.slots[i], arch, state, buf + 7);
    size_t used = rlen + rec.req_len;
    if (put_padding(buf + 6 + used, (size_t)(d - used), rec.stack_addr, stack,
                    rec.stack_len, be) != 0) {
      free(buf), free(stack), free(slot_of), free(slot_next), free(changed);
      tc_error_set(err, "tfile: internal error: cannot pad a frame");
      w->failed = 1;
      return -1;
    }
    if (w_bytes(w, buf, (size_t)(6 + d), err)) {
      free(buf), free(stack), free(slot_of), free(slot_next), free(changed);
      return -1;
    }
  }
  free(buf), free(stack), free(slot_of), free(slot_next), free(changed);
  static const uint8_t end_marker[6] = {0};
  return w_bytes(w, end_marker, sizeof end_marker, err);
}

static int tfile_close_writer(tc_writer *w, tc_error *err) {
  if (!w)
    return 0;
  int rc = w->failed ? -1 : finish(w, err);
  FILE *fp = w->fp;
  w->fp = NULL;
  errno = 0;
  if (fclose(fp) != 0 && rc == 0) {
    w_fail(w, err);
    rc = -1;
  }
  writer_free(w);
  return rc;
}

/* ---------------------------------------------------------------- reader */

typedef struct tf_mblock {
  uint64_t addr;
  uint16_t len;
  const uint8_t *data;
} tf_mblock;

typedef struct tf_frame {
  int16_t tpnum;
  uint8_t *buf;
  size_t cap;
  tf_mblock *m;
  size_t nm, mcap;
  int has_icount;
  int64_t icount;
  int final; /* $icount 0: the state after the last instruction */
  uint8_t *state;
} tf_frame;

typedef struct tf_tracepoint {
  long num;
  uint64_t addr;
} tf_tracepoint;

struct tc_reader {
  FILE *fp;
  char *path;
  uint64_t file_size, pos;
  const tc_arch *arch;
  tf_map map;
  tc_trace_info info;
  uint8_t *initial_state;
  long icount_tsv; /* tsv number named "icount", or -1 */
  int notes_be;    /* byte order named by tracecorn's notes, or -1 */
  tf_tracepoint *tps;
  size_t ntps, tps_cap;
  tf_frame frames[2];
  int cur;       /* frames[cur] is the frame returned last */
  int have_next; /* frames[!cur] holds a frame not yet returned */
  uint64_t frame_no;
  uint16_t *regidx;
  tc_mem_access *acc;
  size_t acc_cap;
  int done;
};

#define PREMATURE "Premature end of file while reading trace file"

static int r_read(tc_reader *r, void *p, size_t n, tc_error *err) {
  if (n == 0)
    return 0;
  if (fread(p, 1, n, r->fp) != n) {
    if (ferror(r->fp))
      tc_error_set(err, "tfile: %s: read error: %s", r->path, strerror(errno));
    else
      tc_error_set(err, "tfile: %s: " PREMATURE, r->path);
    return -1;
  }
  r->pos += n;
  return 0;
}

/* Reads one description line into line (NUL-terminated, no newline).
 * Returns its length, -1 on error. */
static long r_line(tc_reader *r, char *line, tc_error *err) {
  size_t n = 0;
  for (;;) {
    int c = getc(r->fp);
    if (c == EOF) {
      if (ferror(r->fp))
        tc_error_set(err, "tfile: %s: read error: %s", r->path,
                     strerror(errno));
      else
        tc_error_set(err, "tfile: %s: " PREMATURE, r->path);
      return -1;
    }
    r->pos++;
    if (c == '\n')
      break;
    if (n + 1 >= TF_LINE_MAX) {
      tc_error_set(err, "tfile: %s: Excessively long lines in trace file",
                   r->path);
      return -1;
    }
    line[n++] = (char)c;
  }
  line[n] = 0;
  return (long)n;
}

/* Decodes hex (up to a ':' ';' or NUL) into out; returns 0 if well formed. */
static int unhex(const char *s, char *out, size_t outsz) {
  size_t k = 0;
  while (tc_hex_digit(s[0]) >= 0 && tc_hex_digit(s[1]) >= 0 && k + 1 < outsz) {
    out[k++] = (char)(tc_hex_digit(s[0]) * 16 + tc_hex_digit(s[1]));
    s += 2;
  }
  out[k] = 0;
  return (*s == 0 || *s == ':' || *s == ';') ? 0 : -1;
}

/* Finds attribute `attr` in the tag text [tag, end) and copies its quoted
 * value; returns 0 if found. */
static int xml_attr(const char *tag, const char *end, const char *attr,
                    char *out, size_t outsz) {
  size_t alen = strlen(attr);
  for (const char *p = tag; p + alen + 2 < end; p++) {
    if ((p[-1] != ' ' && p[-1] != '\t' && p[-1] != '\n') ||
        strncmp(p, attr, alen) != 0)
      continue;
    const char *q = p + alen;
    while (q < end && (*q == ' ' || *q == '\t'))
      q++;
    if (q >= end || *q != '=')
      continue;
    q++;
    while (q < end && (*q == ' ' || *q == '\t'))
      q++;
    if (q >= end || (*q != '"' && *q != '\''))
      continue;
    char quote = *q++;
    const char *v = q;
    while (q < end && *q != quote)
      q++;
    if (q >= end || (size_t)(q - v) >= outsz)
      return -1;
    memcpy(out, v, (size_t)(q - v));
    out[q - v] = 0;
    return 0;
  }
  return -1;
}

static int parse_dec(const char *s, unsigned long max, unsigned long *out) {
  if (!*s)
    return -1;
  unsigned long v = 0;
  for (; *s; s++) {
    if (*s < '0' || *s > '9')
      return -1;
    v = v * 10 + (unsigned long)(*s - '0');
    if (v > max)
      return -1;
  }
  *out = v;
  return 0;
}

/* Extracts <architecture> and the <reg>s of a tdesc. */
static int parse_tdesc(tc_reader *r, const char *xml, char *gdb_arch,
                       size_t archsz, tf_xreg **out, size_t *nout,
                       tc_error *err) {
  *out = NULL;
  *nout = 0;
  gdb_arch[0] = 0;
  const char *a = strstr(xml, "<architecture>");
  if (a) {
    a += strlen("<architecture>");
    const char *e = strstr(a, "</architecture>");
    if (!e || (size_t)(e - a) >= archsz) {
      tc_error_set(err, "tfile: %s: malformed <architecture> in tdesc",
                   r->path);
      return -1;
    }
    memcpy(gdb_arch, a, (size_t)(e - a));
    gdb_arch[e - a] = 0;
  }
  size_t n = 0, cap = 0;
  tf_xreg *x = NULL;
  for (const char *p = xml; (p = strstr(p, "<reg")) != NULL; p += 4) {
    if (p[4] != ' ' && p[4] != '\t' && p[4] != '\n')
      continue;
    const char *end = strchr(p, '>');
    if (!end)
      break;
    char name[64], bits[16], num[16];
    unsigned long bitsize = 0, regnum = 0;
    int has_num = xml_attr(p + 4, end, "regnum", num, sizeof num) == 0;
    if (xml_attr(p + 4, end, "name", name, sizeof name) != 0 ||
        xml_attr(p + 4, end, "bitsize", bits, sizeof bits) != 0 ||
        parse_dec(bits, 65535, &bitsize) != 0 || bitsize == 0 ||
        bitsize % 8 != 0 ||
        (has_num && parse_dec(num, 1000000, &regnum) != 0)) {
      tc_error_set(err, "tfile: %s: malformed <reg> in tdesc", r->path);
      free(x);
      return -1;
    }
    if (n >= TF_XREGS_MAX || grow((void **)&x, &cap, n + 1, sizeof *x) != 0) {
      tc_error_set(err, "tfile: %s: too many registers in tdesc", r->path);
      free(x);
      return -1;
    }
    snprintf(x[n].name, sizeof x[n].name, "%s", name);
    x[n].bitsize = (uint32_t)bitsize;
    x[n].regnum = has_num ? (long)regnum : -1;
    n++;
  }
  *out = x;
  *nout = n;
  return 0;
}

static void frame_free(tf_frame *f) {
  free(f->buf);
  free(f->m);
  free(f->state);
}

static void tfile_close_reader(tc_reader *r) {
  if (!r)
    return;
  if (r->fp)
    fclose(r->fp);
  free(r->path);
  free(r->map.slots);
  free(r->initial_state);
  free(r->tps);
  frame_free(&r->frames[0]);
  frame_free(&r->frames[1]);
  free(r->regidx);
  free(r->acc);
  free(r);
}

/* Reads the next frame into f. 1: a frame, 0: the end marker, -1: error. */
static int read_frame(tc_reader *r, tf_frame *f, tc_error *err) {
  const tc_arch *arch = r->arch;
  int be = arch->big_endian;
  uint8_t head[6];
  if (r_read(r, head, 2, err))
    return -1;
  f->tpnum = (int16_t)get_uint(head, 2, be);
  if (f->tpnum == 0)
    return 0; /* the size of the end marker, if any, is not needed */
  if (r_read(r, head + 2, 4, err))
    return -1;
  uint64_t size = get_uint(head + 2, 4, be);
  if (size > r->file_size - r->pos) {
    tc_error_set(err, "tfile: %s: " PREMATURE, r->path);
    return -1;
  }
  if (grow((void **)&f->buf, &f->cap, size ? size : 1, 1)) {
    tc_error_set(err, "tfile: out of memory");
    return -1;
  }
  if (r_read(r, f->buf, size, err))
    return -1;
  const uint8_t *rblock = NULL;
  f->nm = 0;
  f->has_icount = 0;
  int context = 0; /* M blocks after $icount: not the instruction's */
  for (uint64_t p = 0; p < size;) {
    uint8_t type = f->buf[p++];
    switch (type) {
    case 'R':
      if (size - p < r->map.rsize)
        goto short_frame;
      if (!rblock) /* GDB uses the first R block */
        rblock = f->buf + p;
      p += r->map.rsize;
      break;
    case 'M': {
      if (size - p < 10)
        goto short_frame;
      uint64_t addr = get_uint(f->buf + p, 8, be);
      uint16_t len = (uint16_t)get_uint(f->buf + p + 8, 2, be);
      p += 10;
      if (size - p < len)
        goto short_frame;
      if (context) {
        p += len;
        break;
      }
      if (grow((void **)&f->m, &f->mcap, f->nm + 1, sizeof *f->m)) {
        tc_error_set(err, "tfile: out of memory");
        return -1;
      }
      f->m[f->nm++] = (tf_mblock){addr, len, f->buf + p};
      p += len;
      break;
    }
    case 'V': {
      if (size - p < 12)
        goto short_frame;
      int32_t num = (int32_t)get_uint(f->buf + p, 4, be);
      if (num == r->icount_tsv) { /* the last V block wins, as in GDB */
        f->has_icount = 1;
        f->icount = (int64_t)get_uint(f->buf + p + 4, 8, be);
        context = 1;
      }
      p += 12;
      break;
    }
    default:
      if (type >= 0x20 && type < 0x7f)
        tc_error_set(err, "tfile: %s: Unknown block type '%c'", r->path, type);
      else
        tc_error_set(err, "tfile: %s: Unknown block type '\\x%02x'", r->path,
                     type);
      return -1;
    }
  }
  f->final = f->has_icount && f->icount == 0;
  if (rblock) {
    map_decode(&r->map, arch, rblock, f->state);
  } else {
    /* No registers: like GDB, guess PC = the tracepoint's address. */
    memset(f->state, 0, arch->state_size);
    for (size_t i = 0; i < r->ntps; i++)
      if (r->tps[i].num == f->tpnum)
        tc_state_set(arch, f->state, arch->pc_reg, r->tps[i].addr);
  }
  return 1;
short_frame:
  tc_error_set(err, "tfile: %s: " PREMATURE, r->path);
  return -1;
}

/* Whether a frame header `h` (n bytes, up to 7) read in byte order `be` is
 * plausible where it stands: a known tracepoint (or the end marker), a
 * size that fits in the file and a known first block. */
static int header_plausible(const tc_reader *r, const uint8_t *h, size_t n,
                            int be, uint32_t rsize) {
  if (n < 2)
    return 0;
  int16_t tp = (int16_t)get_uint(h, 2, be);
  if (tp == 0)
    return 1;
  if (tp < 0 || n < 7)
    return 0;
  int known = r->ntps == 0;
  for (size_t i = 0; i < r->ntps && !known; i++)
    known = r->tps[i].num == tp;
  uint64_t size = get_uint(h + 2, 4, be);
  uint64_t left = r->file_size - r->pos - 6;
  return known && size >= 1 && size <= left &&
         (h[6] == 'M' || h[6] == 'V' || (h[6] == 'R' && size > rsize));
}

/* The byte order of the frames that follow (1 big, 0 little), or -1 if
 * the first frame header does not tell. The file position is kept. */
static int frames_byte_order(tc_reader *r, uint32_t rsize) {
  long here = ftell(r->fp);
  uint8_t h[7];
  size_t n = here < 0 ? 0 : fread(h, 1, sizeof h, r->fp);
  if (here < 0 || fseek(r->fp, here, SEEK_SET) != 0)
    return -1;
  int le = header_plausible(r, h, n, 0, rsize);
  int be = header_plausible(r, h, n, 1, rsize);
  return le == be ? -1 : be;
}

static int parse_description(tc_reader *r, char **xml, size_t *xml_len,
                             uint32_t *rsize, tc_error *err) {
  char line[TF_LINE_MAX];
  size_t xml_cap = 0;
  for (;;) {
    long n = r_line(r, line, err);
    if (n < 0)
      return -1;
    if (n == 0)
      return 0;
    if (strncmp(line, "R ", 2) == 0) {
      char *end;
      errno = 0;
      unsigned long v = strtoul(line + 2, &end, 16);
      if (errno || end == line + 2 || v == 0 || v > TF_RSIZE_MAX) {
        tc_error_set(err, "tfile: %s: bad register block size '%s'", r->path,
                     line + 2);
        return -1;
      }
      *rsize = (uint32_t)v;
    } else if (strncmp(line, "tdesc ", 6) == 0 &&
               strspn(line + 6, " ") != (size_t)n - 6) {
      /* (lines of spaces pad tracecorn's files: skipped) */
      size_t add = (size_t)n - 6;
      if (*xml_len + add + 2 > TF_TDESC_MAX ||
          grow((void **)xml, &xml_cap, *xml_len + add + 2, 1)) {
        tc_error_set(err, "tfile: %s: target description too large", r->path);
        return -1;
      }
      memcpy(*xml + *xml_len, line + 6, add);
      *xml_len += add;
      (*xml)[(*xml_len)++] = '\n';
      (*xml)[*xml_len] = 0;
    } else if (strncmp(line, "status ", 7) == 0) {
      const char *notes = strstr(line, ";notes:");
      char text[TF_LINE_MAX];
      if (notes && unhex(notes + 7, text, sizeof text) == 0 &&
          strncmp(text, "tracecorn ", 10) == 0) {
        r->info.has_memory =
            strncmp(text, TF_NOTES_NOMEM, strlen(TF_NOTES_NOMEM)) != 0;
        if (strstr(text, TF_NOTES_BE))
          r->notes_be = 1;
        else if (strstr(text, TF_NOTES_LE))
          r->notes_be = 0;
      }
    } else if (strncmp(line, "tsv ", 4) == 0) {
      /* N:INIT:BUILTIN:HEXNAME */
      char *p = line + 4, *end;
      long num = strtol(p, &end, 16);
      const char *name = end;
      for (int k = 0; k < 3 && name; k++)
        name = strchr(name, ':') ? strchr(name, ':') + 1 : NULL;
      char text[TF_LINE_MAX];
      if (end != p && name && unhex(name, text, sizeof text) == 0 &&
          strcmp(text, "icount") == 0)
        r->icount_tsv = num;
    } else if (strncmp(line, "tp T", 4) == 0) {
      char *p = line + 4, *end;
      long num = strtol(p, &end, 16);
      if (end != p && *end == ':') {
        char *q = end + 1;
        uint64_t addr = strtoull(q, &end, 16);
        if (end != q && r->ntps < TF_TRACEPOINTS_MAX &&
            !grow((void **)&r->tps, &r->tps_cap, r->ntps + 1, sizeof *r->tps))
          r->tps[r->ntps++] = (tf_tracepoint){num, addr};
      }
    }
    /* anything else: ignored, as GDB does (with a warning) */
  }
}

static tc_reader *tfile_open_reader(const char *path, tc_error *err) {
  tc_reader *r = calloc(1, sizeof *r);
  char *xml = NULL;
  tf_xreg *xregs = NULL;
  size_t nxregs = 0, xml_len = 0;
  if (!r || !(r->path = strdup(path))) {
    free(r);
    tc_error_set(err, "tfile: out of memory");
    return NULL;
  }
  r->icount_tsv = -1;
  r->notes_be = -1;
  r->info.has_memory = 1;
  r->fp = tc_infile_open(path, TC_INFILE_SEEK, "tfile", err);
  struct stat st;
  if (!r->fp)
    goto fail;
  if (fstat(fileno(r->fp), &st) != 0) {
    tc_error_set(err, "tfile: cannot open %s: %s", path, strerror(errno));
    goto fail;
  }
  r->file_size = (uint64_t)st.st_size;
  uint8_t magic[sizeof tf_magic];
  if (fread(magic, 1, sizeof magic, r->fp) != sizeof magic ||
      memcmp(magic, tf_magic, sizeof magic) != 0) {
    tc_error_set(err, "tfile: %s: not a GDB trace file (bad header)", path);
    goto fail;
  }
  r->pos = sizeof magic;
  uint32_t rsize = 0;
  if (parse_description(r, &xml, &xml_len, &rsize, err) != 0)
    goto fail;
  if (rsize == 0) {
    tc_error_set(
        err, "tfile: %s: No register block size recorded in trace file", path);
    goto fail;
  }
  char gdb_arch[64] = "";
  if (xml &&
      parse_tdesc(r, xml, gdb_arch, sizeof gdb_arch, &xregs, &nxregs, err) != 0)
    goto fail;
  const tf_layout *row;
  if (gdb_arch[0]) {
    row = tf_layout_for_gdb_arch(gdb_arch, -1);
    if (!row) {
      tc_error_set(err, "tfile: %s: GDB architecture '%s' is not supported",
                   path, gdb_arch);
      goto fail;
    }
  } else {
    /* No tdesc: GDB would use its default layout; ours equal them. */
    row = tf_layout_for_rsize(rsize);
    if (!row) {
      tc_error_set(err,
                   "tfile: %s: no target description and no known layout of "
                   "%u register bytes",
                   path, rsize);
      goto fail;
    }
  }
  if (tf_layout_byte_order_ambiguous(row)) {
    /* mips or mipsel: the file does not say (reading a mipsel file as
     * big-endian misreads the first frame's size). tracecorn's notes
     * tell; other files are judged by their first frame header. */
    int be = r->notes_be >= 0 ? r->notes_be : frames_byte_order(r, rsize);
    if (be >= 0)
      row = tf_layout_for_gdb_arch(row->gdb_arch, be);
  }
  r->arch = tc_arch_by_id(row->arch);
  /* mips: a block that goes on to fir holds the FPU registers (a recording
   * on an engine that reads them): the mips+fpu table. */
  const tf_layout *fpu_row = tf_layout_with_fpu(row);
  if (r->arch && fpu_row && rsize >= fpu_row->rsize) {
    r->arch = tc_arch_with_fpu(r->arch);
    row = fpu_row;
  }
  if (!r->arch) {
    tc_error_set(err, "tfile: %s: architecture %s is not emulated by tracecorn",
                 path, row->gdb_arch);
    goto fail;
  }
  if ((nxregs ? map_build(&r->map, r->arch, row, xregs, nxregs, rsize, err)
              : map_from_row(&r->map, r->arch, row, rsize, err)) != 0)
    goto fail;
  const tc_arch *arch = r->arch;
  for (int k = 0; k < 2; k++)
    if (!(r->frames[k].state = calloc(1, arch->state_size)))
      goto oom;
  if (!(r->regidx = calloc(arch->nregs, sizeof *r->regidx)) ||
      !(r->initial_state = calloc(1, arch->state_size)))
    goto oom;
  r->info.arch = arch;
  for (size_t i = 0; i < r->ntps; i++) /* without frames */
    if (i == 0 || r->tps[i].num == 1)
      r->info.entry = r->tps[i].addr;
  /* Read ahead one frame: state_after of a frame is the next one's state. */
  r->cur = 0;
  int rc = read_frame(r, &r->frames[1], err);
  if (rc < 0)
    goto fail;
  r->have_next = rc;
  if (rc == 1) {
    memcpy(r->initial_state, r->frames[1].state, arch->state_size);
    r->info.initial_state = r->initial_state;
    r->info.entry = tc_state_get(arch, r->initial_state, arch->pc_reg);
  }
  free(xml);
  free(xregs);
  return r;
oom:
  tc_error_set(err, "tfile: out of memory");
fail:
  free(xml);
  free(xregs);
  tfile_close_reader(r);
  return NULL;
}

static const tc_trace_info *tfile_reader_info(tc_reader *r) { return &r->info; }

static int tfile_next_event(tc_reader *r, tc_event *ev, tc_error *err) {
  const tc_arch *arch = r->arch;
  tf_frame *f, *next;
  int rc;
  do { /* a final-state frame is only the previous one's state_after */
    if (!r->have_next)
      return 0;
    r->cur = !r->cur;
    f = &r->frames[r->cur];
    next = &r->frames[!r->cur];
    rc = read_frame(r, next, err);
    if (rc < 0) {
      r->have_next = 0;
      return -1;
    }
    r->have_next = rc;
  } while (f->final);
  const uint8_t *after = rc ? next->state : f->state;

  memset(ev, 0, sizeof *ev);
  ev->kind = TC_EV_INSN;
  tc_insn_event *in = &ev->u.insn;
  in->index =
      f->has_icount && f->icount > 0 ? (uint64_t)f->icount - 1 : r->frame_no;
  r->frame_no++;
  in->pc = tc_state_get(arch, f->state, arch->pc_reg);
  in->state_before = f->state;
  in->state_after = after;
  uint16_t nregs = 0;
  for (int i = 0; i < arch->nregs; i++) {
    const tc_reg_info *ri = &arch->regs[i];
    if (memcmp(f->state + ri->offset, after + ri->offset, ri->size) != 0)
      r->regidx[nregs++] = (uint16_t)i;
  }
  in->nregs = nregs;
  in->regs = r->regidx;
  /* The writer puts the instruction bytes first; other files: any M block
   * at PC small enough to be an instruction. */
  size_t insn_block = SIZE_MAX;
  for (size_t i = 0; i < f->nm; i++)
    if (f->m[i].addr == in->pc && f->m[i].len > 0 &&
        f->m[i].len <= sizeof in->bytes) {
      insn_block = i;
      break;
    }
  if (insn_block != SIZE_MAX) {
    in->size = (uint8_t)f->m[insn_block].len;
    memcpy(in->bytes, f->m[insn_block].data, in->size);
  }
  if (grow((void **)&r->acc, &r->acc_cap, f->nm ? f->nm : 1, sizeof *r->acc)) {
    tc_error_set(err, "tfile: out of memory");
    return -1;
  }
  uint32_t nmem = 0;
  for (size_t i = 0; i < f->nm; i++) {
    if (i == insn_block)
      continue;
    /* tfile keeps neither the access kind nor old values. */
    r->acc[nmem++] = (tc_mem_access){f->m[i].addr, f->m[i].len, TC_MEM_READ,
                                     f->m[i].data, f->m[i].data};
  }
  in->nmem = nmem;
  in->mem = r->acc;
  return 1;
}

const tc_format tc_format_tfile = {
    .name = "tfile",
    .description = "GDB trace file (target tfile): registers, instruction "
                   "bytes and post-instruction memory per instruction",
    .caps = TC_CAP_INSN_BYTES | TC_CAP_MEM,
    .holds_reg = tfile_holds_reg,
    .extension = tfile_extension,
    .supports = tfile_supports,
    .open_writer = tfile_open_writer,
    .write_event = tfile_write_event,
    .close_writer = tfile_close_writer,
    .probe = tfile_probe,
    .open_reader = tfile_open_reader,
    .reader_info = tfile_reader_info,
    .next_event = tfile_next_event,
    .close_reader = tfile_close_reader,
};
