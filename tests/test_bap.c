/* SPDX-License-Identifier: GPL-2.0-or-later */
/* BAP frames format: container bytes, the worked example of
 * bap-frames.md, the TOC rule and seeking, the readers' rules (crafted
 * frames), truncated and corrupted files, protoc decoding frames and the
 * meta frame and comparing them with the recording, round trips through
 * the reader, `tracecorn verify -f bap` on every example guest, writer
 * options and failures, MD5, the capstone access helper, and the
 * hand-written std_frame encoder against protobuf-c's packer. */
#include <capstone/capstone.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "common/arch.h"
#include "common/isa/insn_access.h"
#include "common/md5.h"
#include "evlog.h"
#include "testutil.h"
#include "tracecorn/tracecorn.h"
#include "writers/bap/bap.h"
#include "writers/bap/bap_frame.pb-c.h"
#include "writers/bap/bap_pack.h"

extern const tc_format tc_format_bap;
static const tc_format *F = &tc_format_bap;

static bool is_mips(const tc_arch *a) {
  return a->id == TC_ARCH_MIPS || a->id == TC_ARCH_MIPSEL ||
         a->id == TC_ARCH_MIPS64EL;
}

/* ------------------------------------------------------------- helpers */

static uint64_t le64(const uint8_t *p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; i++)
    v |= (uint64_t)p[i] << (8 * i);
  return v;
}

static void put64(uint8_t *p, uint64_t v) {
  for (int i = 0; i < 8; i++)
    p[i] = (uint8_t)(v >> (8 * i));
}

static int reg(const tc_arch *a, const char *name) {
  int r = tc_arch_reg_index(a, name);
  CU_ASSERT_FATAL(r >= 0);
  return r;
}

/* An independent walk over a whole file in memory. */
typedef struct walked {
  uint64_t n, T, m, ntoc;
  size_t meta_off, meta_len;
  size_t *off; /* frame k's size field */
  size_t *len; /* frame k's byte count */
  uint64_t *toc;
} walked;

static int walk_file(const uint8_t *f, size_t flen, walked *w) {
  memset(w, 0, sizeof *w);
  if (flen < 48 + 8)
    return -1;
  w->n = le64(f + 32);
  w->T = le64(f + 40);
  if (w->T + 8 > flen)
    return -1;
  w->meta_off = 48;
  w->meta_len = (size_t)le64(f + 48);
  size_t o = 56 + w->meta_len;
  w->off = calloc(w->n + 1, sizeof *w->off);
  w->len = calloc(w->n + 1, sizeof *w->len);
  for (uint64_t k = 0; k < w->n; k++) {
    if (o + 8 > w->T)
      return -1;
    w->off[k] = o;
    w->len[k] = (size_t)le64(f + o);
    o += 8 + w->len[k];
  }
  if (o != w->T)
    return -1;
  w->m = le64(f + w->T);
  w->ntoc = (flen - w->T - 8) / 8;
  w->toc = calloc(w->ntoc + 1, sizeof *w->toc);
  for (uint64_t j = 0; j < w->ntoc; j++)
    w->toc[j] = le64(f + w->T + 8 + 8 * j);
  return 0;
}

static void walked_free(walked *w) {
  free(w->off);
  free(w->len);
  free(w->toc);
}

/* Reads a whole trace; returns the number of events, or -1 with err. */
static long read_all(const char *path, tc_error *err) {
  tc_reader *r = F->open_reader(path, err);
  if (!r)
    return -1;
  tc_event ev;
  long n = 0;
  int rc;
  while ((rc = F->next_event(r, &ev, err)) == 1)
    n++;
  F->close_reader(r);
  return rc < 0 ? -1 : n;
}

/* ------------------------------------------------ protobuf byte builder */

typedef struct pbuf {
  uint8_t d[8192];
  size_t n;
} pbuf;

static void b_raw(pbuf *b, const void *p, size_t n) {
  CU_ASSERT_FATAL(b->n + n <= sizeof b->d);
  memcpy(b->d + b->n, p, n);
  b->n += n;
}
static void b_varint(pbuf *b, uint64_t v) {
  do {
    uint8_t c = (uint8_t)(v & 0x7F);
    v >>= 7;
    if (v)
      c |= 0x80;
    b_raw(b, &c, 1);
  } while (v);
}
static void b_key(pbuf *b, unsigned field, unsigned wt) {
  b_varint(b, (uint64_t)field << 3 | wt);
}
static void b_uint(pbuf *b, unsigned field, uint64_t v) {
  b_key(b, field, 0);
  b_varint(b, v);
}
static void b_bytes(pbuf *b, unsigned field, const void *p, size_t n) {
  b_key(b, field, 2);
  b_varint(b, n);
  b_raw(b, p, n);
}
static void b_str(pbuf *b, unsigned field, const char *s) {
  b_bytes(b, field, s, strlen(s));
}
static void b_msg(pbuf *b, unsigned field, const pbuf *m) {
  b_bytes(b, field, m->d, m->n);
}
static void b_double(pbuf *b, unsigned field, double v) {
  uint8_t x[8];
  memcpy(x, &v, 8);
  b_key(b, field, 1);
  b_raw(b, x, 8);
}

/* A meta_frame; omit: a field number to leave out (0 = none). */
static void make_meta(pbuf *b, unsigned omit) {
  pbuf tr = {0}, tg = {0}, fs = {0};
  memset(b, 0, sizeof *b);
  b_str(&tr, 1, "t");
  b_str(&tr, 4, "1");
  uint8_t md5[16] = {0};
  b_str(&tg, 1, "/p");
  b_bytes(&tg, 4, md5, 16);
  b_uint(&fs, 1, 0);
  b_double(&fs, 2, 0);
  b_double(&fs, 3, 0);
  b_double(&fs, 4, 0);
  if (omit != 1)
    b_msg(b, 1, &tr);
  if (omit != 2)
    b_msg(b, 2, &tg);
  if (omit != 3)
    b_msg(b, 3, &fs);
  if (omit != 4)
    b_str(b, 4, "u");
  if (omit != 5)
    b_str(b, 5, "h");
  if (omit != 6)
    b_double(b, 6, 0);
}

/* The worked example of bap-frames.md: `mov eax,1` at 0x401000, tid 1,
 * writing RAX = 1. */
static const uint8_t worked[] = {
    0x0a, 0x38, 0x08, 0x80, 0xa0, 0x80, 0x02, 0x10, 0x01, 0x1a, 0x05, 0xb8,
    0x01, 0x00, 0x00, 0x00, 0x22, 0x00, 0x2a, 0x26, 0x0a, 0x24, 0x0a, 0x07,
    0x12, 0x05, 0x0a, 0x03, 'R',  'A',  'X',  0x10, 0x80, 0x01, 0x1a, 0x08,
    0x08, 0x00, 0x10, 0x01, 0x18, 0x00, 0x20, 0x00, 0x22, 0x02, 0x08, 0x01,
    0x2a, 0x08, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00};

/* A std_frame operand; flags: usage read/written/index/base bytes,
 * no_taint value; name NULL = memory operand at addr. */
static int g_bitlen_zero; /* QEMU's tracewrap writes 0 for registers */

static void make_operand(pbuf *b, const char *name, uint64_t addr,
                         const uint8_t usage[4], int no_taint,
                         const uint8_t *val, size_t vlen) {
  pbuf spec = {0}, inner = {0}, use = {0}, taint = {0};
  memset(b, 0, sizeof *b);
  if (name) {
    b_str(&inner, 1, name);
    b_msg(&spec, 2, &inner);
  } else {
    b_uint(&inner, 1, addr);
    b_msg(&spec, 1, &inner);
  }
  for (unsigned i = 0; i < 4; i++)
    b_uint(&use, i + 1, usage[i]);
  b_uint(&taint, 1, (uint64_t)no_taint);
  b_msg(b, 1, &spec);
  b_uint(b, 2, g_bitlen_zero && name ? 0 : (vlen * 8) << 1); /* zigzag */
  b_msg(b, 3, &use);
  b_msg(b, 4, &taint);
  b_bytes(b, 5, val, vlen);
}

/* Writes a container around frames (sizes, n, T, a ceil(n/m) TOC). */
static void make_file(const char *path, uint64_t version, uint64_t arch,
                      uint64_t mach, const pbuf *meta, const pbuf *frames,
                      size_t n, uint64_t m) {
  size_t cap = 48 + 8 + meta->n + 64;
  for (size_t i = 0; i < n; i++)
    cap += 8 + frames[i].n + 8;
  uint8_t *f = calloc(1, cap + 8 * (n / m + 2));
  put64(f, BAP_MAGIC);
  put64(f + 8, version);
  put64(f + 16, arch);
  put64(f + 24, mach);
  put64(f + 32, n);
  size_t o = 48;
  put64(f + o, meta->n);
  memcpy(f + o + 8, meta->d, meta->n);
  o += 8 + meta->n;
  uint64_t *offs = calloc(n + 1, sizeof *offs);
  for (size_t i = 0; i < n; i++) {
    offs[i] = o;
    put64(f + o, frames[i].n);
    memcpy(f + o + 8, frames[i].d, frames[i].n);
    o += 8 + frames[i].n;
  }
  uint64_t T = o;
  put64(f + 40, T);
  put64(f + o, m);
  o += 8;
  for (uint64_t j = 0; j < (n + m - 1) / m; j++, o += 8)
    put64(f + o, (j + 1) * m < n ? offs[(j + 1) * m] : T);
  CU_ASSERT_EQUAL(tu_write_file(path, f, o), 0);
  free(offs);
  free(f);
}

/* ------------------------------------------------------- event streams */

typedef struct sevent {
  tc_event ev;
  uint8_t *before, *after, *key;
  uint16_t *regs;
  tc_mem_access *mem;
  char *name;
} sevent;

typedef struct stream {
  const tc_arch *arch;
  sevent *e;
  size_t n, cap;
} stream;

static uint8_t *dupb(const void *p, size_t n) {
  uint8_t *d = malloc(n ? n : 1);
  if (n)
    memcpy(d, p, n);
  return d;
}

/* A deep copy of every event (a session sink or a reader's output). */
static int collect(void *ctx, const tc_event *ev, tc_error *err) {
  (void)err;
  stream *s = ctx;
  if (s->n == s->cap) {
    s->cap = s->cap ? 2 * s->cap : 1024;
    s->e = realloc(s->e, s->cap * sizeof *s->e);
  }
  sevent *x = &s->e[s->n++];
  memset(x, 0, sizeof *x);
  x->ev = *ev;
  size_t ss = s->arch->state_size;
  if (ev->kind == TC_EV_INSN) {
    const tc_insn_event *in = &ev->u.insn;
    x->before = dupb(in->state_before, ss);
    x->after = dupb(in->state_after, ss);
    x->regs = (uint16_t *)dupb(in->regs, in->nregs * sizeof *in->regs);
    x->mem = (tc_mem_access *)dupb(in->mem, in->nmem * sizeof *in->mem);
    for (uint32_t i = 0; i < in->nmem; i++) {
      x->mem[i].before = dupb(in->mem[i].before, in->mem[i].size);
      x->mem[i].after = dupb(in->mem[i].after, in->mem[i].size);
    }
    x->ev.u.insn.state_before = x->before;
    x->ev.u.insn.state_after = x->after;
    x->ev.u.insn.regs = x->regs;
    x->ev.u.insn.mem = x->mem;
  } else if (ev->kind == TC_EV_KEYFRAME) {
    x->key = dupb(ev->u.key.state, ss);
    x->ev.u.key.state = x->key;
  } else if (ev->kind == TC_EV_MAP) {
    x->name = strdup(ev->u.map.name ? ev->u.map.name : "");
    x->ev.u.map.name = x->name;
    x->ev.u.map.data = NULL;
  } else if (ev->kind == TC_EV_SYSCALL) {
    x->ev.u.sys.mem = NULL;
    x->ev.u.sys.nmem = 0;
  }
  return 0;
}

static void stream_free(stream *s) {
  for (size_t i = 0; i < s->n; i++) {
    sevent *x = &s->e[i];
    for (uint32_t k = 0; x->mem && k < x->ev.u.insn.nmem; k++) {
      free((void *)x->mem[k].before);
      free((void *)x->mem[k].after);
    }
    free(x->before);
    free(x->after);
    free(x->key);
    free(x->regs);
    free(x->mem);
    free(x->name);
  }
  free(s->e);
  memset(s, 0, sizeof *s);
}

/* Records guest (args) with bap + a collecting sink; path gets the file. */
static int record(const char *guest, const char *arg, const char *path,
                  stream *s, const char *const *wopts) {
  const char *prog = tu_guest(guest);
  if (!tu_have(prog)) {
    fprintf(stderr, "missing guest %s\n", prog);
    return -1;
  }
  tc_error err = {{0}};
  tc_options opt;
  tc_options_init(&opt);
  opt.quiet = 1;
  /* mipsel guests are written only when forced (bap-frames.md) */
  static const char *const force_le_mips[] = {"bap.mipsel=force", NULL};
  opt.writer_options = wopts ? wopts : force_le_mips;
  int devnull = open("/dev/null", O_WRONLY);
  opt.stdout_fd = devnull;
  opt.stderr_fd = devnull;
  tc_session *ses = tc_session_new(&opt, &err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(ses);
  const char *argv[3] = {prog, arg, NULL};
  CU_ASSERT_EQUAL_FATAL(tc_session_load_elf(ses, prog, argv, &err), 0);
  s->arch = tc_session_info(ses)->arch;
  CU_ASSERT_EQUAL_FATAL(tc_session_add_writer(ses, F, path, &err), 0);
  CU_ASSERT_EQUAL_FATAL(tc_session_add_sink(ses, collect, s, &err), 0);
  tc_run_result res;
  tc_run_result_init(&res);
  int rc = tc_session_run(ses, &res, &err);
  CU_ASSERT_TRUE(tc_session_output_ok(ses, path));
  tc_session_free(ses);
  close(devnull);
  CU_ASSERT_EQUAL(rc, 0);
  return rc;
}

/* ---------------------------------------------------------- 0. identity */

static void test_identity(void) {
  tc_error err = {{0}};
  const tc_arch *x64 = tc_arch_by_id(TC_ARCH_X86_64);
  const tc_arch *x86 = tc_arch_by_id(TC_ARCH_X86);
  CU_ASSERT_PTR_EQUAL(tc_format_by_name("bap"), F);
  CU_ASSERT_STRING_EQUAL(F->extension(x64), ".frames");
  CU_ASSERT_STRING_EQUAL(F->extension(x86), ".frames");
  CU_ASSERT_EQUAL(F->supports(x64, &err), 0);
  CU_ASSERT_EQUAL(F->supports(x86, &err), 0);
  CU_ASSERT_EQUAL(F->caps, TC_CAP_INSN_BYTES | TC_CAP_MEM | TC_CAP_MEM_KIND |
                               TC_CAP_MEM_EXACT | TC_CAP_SYSCALLS |
                               TC_CAP_FAULTS | TC_CAP_TID | TC_CAP_MODULES |
                               TC_CAP_SYSCALL_COMPAT);
  CU_ASSERT_PTR_NULL(F->holds_reg); /* key frames: every register */
  uint64_t a = 0, m = 0;
  /* mips: 8/32 both ways round, mips64el 8/64; BAP's mips is big-endian,
   * so every mips trace holds big-endian values, and the little-endian
   * ones say what they are in the meta frame. */
  static const struct {
    tc_arch_id id;
    uint64_t mach;
    const char *marker;
  } mips[] = {{TC_ARCH_MIPS, 32, NULL},
              {TC_ARCH_MIPSEL, 32, "arch=mipsel"},
              {TC_ARCH_MIPS64EL, 64, "arch=mips64el"}};
  for (size_t i = 0; i < sizeof mips / sizeof mips[0]; i++) {
    const tc_arch *ma = tc_arch_by_id(mips[i].id);
    CU_ASSERT_PTR_NOT_NULL_FATAL(ma);
    CU_ASSERT_EQUAL(F->supports(ma, &err), 0);
    CU_ASSERT_EQUAL(bap_arch_numbers(ma, &a, &m, &err), 0);
    CU_ASSERT(a == 8 && m == mips[i].mach);
    CU_ASSERT_TRUE(bap_values_big_endian(ma));
    if (mips[i].marker) {
      CU_ASSERT_STRING_EQUAL(bap_le_mips_marker(ma), mips[i].marker);
    } else {
      CU_ASSERT_PTR_NULL(bap_le_mips_marker(ma));
    }
  }
  for (uint64_t mach = 0; mach <= 33; mach += mach ? 1 : 32)
    CU_ASSERT_PTR_EQUAL(bap_arch_from_numbers(8, mach),
                        tc_arch_by_id(TC_ARCH_MIPS));
  CU_ASSERT_PTR_NULL(bap_arch_from_numbers(8, 64)); /* big-endian mips64 */
  CU_ASSERT_FALSE(bap_values_big_endian(x64));
  CU_ASSERT_EQUAL(bap_arch_numbers(x64, &a, &m, &err), 0);
  CU_ASSERT(a == 9 && m == 64);
  CU_ASSERT_EQUAL(bap_arch_numbers(x86, &a, &m, &err), 0);
  CU_ASSERT(a == 9 && m == 1);
  CU_ASSERT_PTR_EQUAL(bap_arch_from_numbers(9, 64), x64);
  CU_ASSERT_PTR_EQUAL(bap_arch_from_numbers(9, 65), x64);
  for (uint64_t mach = 0; mach <= 3; mach++)
    CU_ASSERT_PTR_EQUAL(bap_arch_from_numbers(9, mach), x86);
  CU_ASSERT_PTR_NULL(bap_arch_from_numbers(9, 7));
  CU_ASSERT_PTR_NULL(bap_arch_from_numbers(2, 0)); /* m68k */
  const tc_arch *arm = tc_arch_by_id(TC_ARCH_ARM);
  if (arm) {
    CU_ASSERT_EQUAL(bap_arch_numbers(arm, &a, &m, &err), 0);
    CU_ASSERT(a == 35 && m == 0);
    CU_ASSERT_PTR_EQUAL(bap_arch_from_numbers(35, 0), arm);
  }
  const tc_arch *arm64 = tc_arch_by_id(TC_ARCH_ARM64);
  if (arm64) {
    CU_ASSERT_EQUAL(bap_arch_numbers(arm64, &a, &m, &err), 0);
    CU_ASSERT(a == 78 && m == 0);
  }
  char nm[24];
  bap_reg_name(x64, reg(x64, "rflags"), nm, sizeof nm);
  CU_ASSERT_STRING_EQUAL(nm, "RFLAGS");
  bap_reg_name(x64, reg(x64, "fs_base"), nm, sizeof nm);
  CU_ASSERT_STRING_EQUAL(nm, "FS_BASE");
  bap_reg_name(x86, reg(x86, "eflags"), nm, sizeof nm);
  CU_ASSERT_STRING_EQUAL(nm, "EFLAGS");
  uint8_t head[8] = {0x25, 0x60, 0xAF, 0x8A, 0x82, 0x28, 0x7C, 0x67};
  CU_ASSERT_TRUE(F->probe(head, 8, "x"));
  head[7] ^= 1;
  CU_ASSERT_FALSE(F->probe(head, 8, "x"));
  CU_ASSERT_FALSE(F->probe(head, 7, "x"));
}

/* ------------------------------------------- 1. exact bytes and the TOC */

/* A synthetic x86-64 stream: n instructions `mov eax, i` at 0x401000+5i. */
static void write_movs(const char *path, size_t n, const char *const *opts) {
  const tc_arch *a = tc_arch_by_id(TC_ARCH_X86_64);
  tc_error err = {{0}};
  tc_trace_info info = {0};
  info.arch = a;
  info.exe_path = "/bin/prog";
  const char *argv[] = {"/bin/prog", "x", NULL};
  info.argv = argv;
  info.writer_options = opts;
  tc_writer *w = F->open_writer(path, &info, &err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(w);
  uint8_t *s0 = calloc(1, a->state_size), *s1 = calloc(1, a->state_size);
  uint16_t changed[2] = {(uint16_t)reg(a, "rax"), (uint16_t)a->pc_reg};
  for (size_t i = 0; i < n; i++) {
    uint64_t pc = 0x401000 + 5 * i;
    tc_state_set(a, s0, a->pc_reg, pc);
    tc_state_set(a, s0, reg(a, "rax"), i);
    memcpy(s1, s0, a->state_size);
    tc_state_set(a, s1, a->pc_reg, pc + 5);
    tc_state_set(a, s1, reg(a, "rax"), i + 1);
    tc_event ev = {.kind = TC_EV_INSN};
    tc_insn_event *in = &ev.u.insn;
    in->index = i;
    in->pc = pc;
    in->tid = 1;
    in->size = 5;
    uint8_t bytes[5] = {0xb8, (uint8_t)(i + 1), 0, 0, 0};
    memcpy(in->bytes, bytes, 5);
    in->nregs = 2;
    in->regs = changed;
    in->state_before = s0;
    in->state_after = s1;
    CU_ASSERT_EQUAL(F->write_event(w, &ev, &err), 0);
  }
  CU_ASSERT_EQUAL(F->close_writer(w, &err), 0);
  free(s0);
  free(s1);
}

static void test_exact_bytes(void) {
  const char *path = tu_tmp("worked.frames");
  write_movs(path, 1, NULL);
  size_t len;
  uint8_t *f = tu_read_file(path, &len);
  CU_ASSERT_PTR_NOT_NULL_FATAL(f);
  static const uint8_t magic[8] = {0x25, 0x60, 0xAF, 0x8A,
                                   0x82, 0x28, 0x7C, 0x67};
  CU_ASSERT_EQUAL(memcmp(f, magic, 8), 0);
  CU_ASSERT_EQUAL(le64(f + 8), 3);
  CU_ASSERT_EQUAL(le64(f + 16), 9);
  CU_ASSERT_EQUAL(le64(f + 24), 64);
  walked w;
  CU_ASSERT_EQUAL_FATAL(walk_file(f, len, &w), 0);
  /* A key_frame (the initial state), then the instruction. */
  CU_ASSERT_EQUAL(w.n, 2);
  CU_ASSERT_EQUAL(f[w.off[0] + 8], 0x32); /* frame.key_frame */
  /* The std_frame is byte for byte the example of bap-frames.md. */
  CU_ASSERT_EQUAL(w.len[1], sizeof worked);
  CU_ASSERT_EQUAL(memcmp(f + w.off[1] + 8, worked, sizeof worked), 0);
  /* TOC: m = 64, ceil(2/64) = 1 entry, the padding T, then EOF. */
  CU_ASSERT_EQUAL(w.m, 64);
  CU_ASSERT_EQUAL(w.ntoc, 1);
  CU_ASSERT_EQUAL(w.toc[0], w.T);
  CU_ASSERT_EQUAL(len, w.T + 16);
  tc_error err = {{0}};
  CU_ASSERT_EQUAL(bap_check_message("frame", worked, sizeof worked, &err), 0);
  walked_free(&w);
  free(f);
}

static void test_toc_and_seek(void) {
  static const size_t counts[] = {1, 2, 3, 4, 5, 7, 8, 9, 63, 64, 65, 200};
  for (unsigned mi = 0; mi < 3; mi++) {
    const char *opts4[] = {"bap.toc=4", NULL};
    const char *opts1[] = {"bap.toc=1", NULL};
    const char *const *opts = mi == 0 ? NULL : mi == 1 ? opts4 : opts1;
    uint64_t m = mi == 0 ? 64 : mi == 1 ? 4 : 1;
    for (size_t ci = 0; ci < sizeof counts / sizeof counts[0]; ci++) {
      const char *path = tu_tmp("toc.frames");
      write_movs(path, counts[ci], opts);
      size_t len;
      uint8_t *f = tu_read_file(path, &len);
      walked w;
      CU_ASSERT_EQUAL_FATAL(walk_file(f, len, &w), 0);
      uint64_t n = w.n;
      CU_ASSERT_EQUAL(n, counts[ci] + 1);
      CU_ASSERT_EQUAL(w.m, m);
      /* ceil(n/m) entries: frames m, 2m, ... below n, then T. */
      CU_ASSERT_EQUAL(w.ntoc, (n + m - 1) / m);
      CU_ASSERT_EQUAL(len, w.T + 8 + 8 * w.ntoc);
      for (uint64_t j = 0; j < w.ntoc; j++) {
        uint64_t k = (j + 1) * m;
        CU_ASSERT_EQUAL(w.toc[j], k < n ? w.off[k] : w.T);
      }
      /* Seeking through the TOC finds every frame. */
      tc_error err = {{0}};
      tc_reader *r = F->open_reader(path, &err);
      CU_ASSERT_PTR_NOT_NULL_FATAL(r);
      CU_ASSERT_EQUAL(bap_reader_frame_count(r), n);
      for (uint64_t k = n; k-- > 0;) {
        const uint8_t *d;
        size_t dl;
        CU_ASSERT_EQUAL_FATAL(bap_reader_frame_at(r, k, &d, &dl, &err), 0);
        CU_ASSERT_EQUAL(dl, w.len[k]);
        CU_ASSERT_EQUAL(memcmp(d, f + w.off[k] + 8, dl), 0);
      }
      const uint8_t *d;
      size_t dl;
      CU_ASSERT_EQUAL(bap_reader_frame_at(r, n, &d, &dl, &err), -1);
      CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "no frame"));
      /* Seeking does not disturb sequential reading. */
      tc_event ev;
      long insns = 0;
      int rc;
      while ((rc = F->next_event(r, &ev, &err)) == 1)
        if (ev.kind == TC_EV_INSN) {
          CU_ASSERT_EQUAL(ev.u.insn.pc, 0x401000 + 5 * (uint64_t)insns);
          CU_ASSERT_EQUAL(
              tc_state_get(F->reader_info(r)->arch, ev.u.insn.state_after, 0),
              (uint64_t)insns + 1);
          insns++;
        }
      CU_ASSERT_EQUAL(rc, 0);
      CU_ASSERT_EQUAL(insns, (long)counts[ci]);
      F->close_reader(r);
      walked_free(&w);
      free(f);
    }
  }
}

/* ---------------------------------------- 2. the readers' rules, crafted */

typedef struct crafted {
  const char *what;
  const char *expect; /* substring of the error */
} crafted;

static void expect_refused(const char *path, const char *expect) {
  tc_error err = {{0}};
  long n = read_all(path, &err);
  CU_ASSERT_EQUAL(n, -1);
  if (!strstr(err.msg, expect)) {
    fprintf(stderr, "expected \"%s\", got \"%s\"\n", expect, err.msg);
    CU_FAIL("wrong error message");
  }
}

static void test_crafted_frames(void) {
  pbuf meta;
  make_meta(&meta, 0);
  pbuf ok = {0};
  b_raw(&ok, worked, sizeof worked);
  const char *path = tu_tmp("crafted.frames");
  /* The worked frame alone is a valid trace. */
  make_file(path, 3, 9, 64, &meta, &ok, 1, 64);
  tc_error err = {{0}};
  CU_ASSERT_EQUAL(read_all(path, &err), 2); /* INSN, EXIT */
  /* Version 2 is read too; 1 and 4 are not. */
  make_file(path, 2, 9, 64, &meta, &ok, 1, 64);
  CU_ASSERT_EQUAL(read_all(path, &err), 2);
  make_file(path, 1, 9, 64, &meta, &ok, 1, 64);
  expect_refused(path, "trace version 1");
  make_file(path, 4, 9, 64, &meta, &ok, 1, 64);
  expect_refused(path, "trace version 4");
  make_file(path, 3, 2, 0, &meta, &ok, 1, 64);
  expect_refused(path, "BFD arch 2 mach 0");
  /* mips64 without tracecorn's little-endian marker: big-endian mips64 */
  make_file(path, 3, 8, 64, &meta, &ok, 1, 64);
  expect_refused(path, "big-endian mips64");

  uint8_t rd[4] = {1, 0, 0, 0}, wr[4] = {0, 1, 0, 0};
  uint8_t val[8] = {1, 0, 0, 0, 0, 0, 0, 0};
  struct {
    const char *expect;
    int variant; /* which broken frame to build */
  } cases[] = {
      {"frame: a variant with 2 options", 0},
      {"frame: unknown option code 9 in a variant", 1},
      {"frame.std_frame: missing required field operand_pre_list", 2},
      {"taint_info: flag option no_taint is 0", 3},
      {"operand_usage: bool read is 2", 4},
      {"argument_list: field elem has wire type 2", 5},
      {"operand_pre_list: list element with code 2", 6},
      {"operand_info_specific: a variant with 0 options", 7},
      {"frame.std_frame: field 3 runs past its message", 8},
      {"frame.syscall_frame: missing required field argument_list", 9},
      {"frame.exception_frame: missing required field exception_number", 10},
  };
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    pbuf fr = {0}, sf = {0}, pre = {0}, op = {0}, x = {0};
    switch (cases[c].variant) {
    case 0: /* std_frame and syscall_frame in one frame */
      b_raw(&fr, worked, sizeof worked);
      b_uint(&x, 1, 1);
      b_uint(&x, 2, 1);
      b_uint(&x, 3, 1);
      b_bytes(&x, 4, "", 0);
      b_msg(&fr, 2, &x);
      break;
    case 1:
      b_bytes(&fr, 9, "", 0);
      break;
    case 2:
      b_uint(&sf, 1, 0x1000);
      b_uint(&sf, 2, 1);
      b_bytes(&sf, 3, "\x90", 1);
      b_msg(&fr, 1, &sf);
      break;
    case 3:
    case 4:
    case 6:
    case 7: {
      uint8_t use[4] = {rd[0], rd[1], rd[2], rd[3]};
      if (cases[c].variant == 4)
        use[0] = 2;
      make_operand(&op, "RAX", 0, use, cases[c].variant == 3 ? 0 : 1, val, 8);
      if (cases[c].variant == 7) { /* an operand_info_specific with nothing */
        memset(&op, 0, sizeof op);
        pbuf use_m = {0}, taint = {0};
        for (unsigned i = 0; i < 4; i++)
          b_uint(&use_m, i + 1, wr[i]);
        b_uint(&taint, 1, 1);
        b_bytes(&op, 1, "", 0);
        b_uint(&op, 2, 128);
        b_msg(&op, 3, &use_m);
        b_msg(&op, 4, &taint);
        b_bytes(&op, 5, val, 8);
      }
      b_msg(&pre, cases[c].variant == 6 ? 2 : 1, &op);
      b_uint(&sf, 1, 0x1000);
      b_uint(&sf, 2, 1);
      b_bytes(&sf, 3, "\x90", 1);
      b_msg(&sf, 4, &pre);
      b_msg(&fr, 1, &sf);
      break;
    }
    case 5: { /* a packed argument list (proto3 style) */
      pbuf al = {0}, packed = {0};
      for (int i = 0; i < 6; i++)
        b_varint(&packed, (uint64_t)i);
      b_msg(&al, 1, &packed);
      b_uint(&x, 1, 0x1000);
      b_uint(&x, 2, 1);
      b_uint(&x, 3, 60);
      b_msg(&x, 4, &al);
      b_msg(&fr, 2, &x);
      break;
    }
    case 8: /* a length running past the std_frame */
      b_uint(&sf, 1, 0x1000);
      b_uint(&sf, 2, 1);
      b_key(&sf, 3, 2);
      b_varint(&sf, 50);
      b_raw(&sf, "\x90", 1);
      b_msg(&fr, 1, &sf);
      break;
    case 9:
      b_uint(&x, 1, 0x1000);
      b_uint(&x, 2, 1);
      b_uint(&x, 3, 60);
      b_msg(&fr, 2, &x);
      break;
    case 10:
      b_uint(&x, 2, 1);
      b_msg(&fr, 3, &x);
      break;
    }
    pbuf frames[2] = {ok, fr};
    make_file(path, 3, 9, 64, &meta, frames, 2, 64);
    expect_refused(path, cases[c].expect);
    /* bap_check_message says the same. */
    tc_error e2 = {{0}};
    CU_ASSERT_EQUAL(bap_check_message("frame", fr.d, fr.n, &e2), -1);
  }

  /* Meta frame rules: every field is required. */
  for (unsigned omit = 1; omit <= 6; omit++) {
    static const char *const names[] = {"",     "tracer", "target", "fstats",
                                        "user", "host",   "time"};
    pbuf bad;
    make_meta(&bad, omit);
    make_file(path, 3, 9, 64, &bad, &ok, 1, 64);
    char want[80];
    snprintf(want, sizeof want,
             "meta frame: meta_frame: missing required "
             "field %s",
             names[omit]);
    expect_refused(path, want);
  }
  /* Unknown fields in a record are ignored by both readers. */
  pbuf extra = {0};
  b_raw(&extra, worked, sizeof worked);
  extra.d[1] += 2; /* std_frame grows by field 15 = 7 */
  b_uint(&extra, 15, 7);
  pbuf fr2[1] = {extra};
  make_file(path, 3, 9, 64, &meta, fr2, 1, 64);
  CU_ASSERT_EQUAL(read_all(path, &err), 2);
  /* A taint_intro_frame is valid and yields no event. */
  pbuf ti = {0}, tl = {0}, tie = {0};
  b_uint(&tie, 1, 0x1000);
  b_uint(&tie, 2, 5);
  b_msg(&tl, 1, &tie);
  pbuf tif = {0};
  b_msg(&tif, 1, &tl);
  b_msg(&ti, 4, &tif);
  pbuf fr3[2] = {ti, ok};
  make_file(path, 3, 9, 64, &meta, fr3, 2, 64);
  CU_ASSERT_EQUAL(read_all(path, &err), 2);
}

/* A foreign trace as QEMU's tracewrap writes it: version 2, TOC of
 * floor(n/m), no key frames, bit_length 0, lower-case names. The reader
 * rebuilds what the operands show. */
static void test_foreign_trace(void) {
  pbuf meta;
  make_meta(&meta, 0);
  uint8_t rd[4] = {1, 0, 0, 0}, wr[4] = {0, 1, 0, 0};
  pbuf frames[3];
  g_bitlen_zero = 1;
  for (int i = 0; i < 3; i++) {
    pbuf sf = {0}, pre = {0}, post = {0}, op = {0};
    uint8_t v[8] = {(uint8_t)(10 + i)}, v2[8] = {(uint8_t)(11 + i)};
    make_operand(&op, "rcx", 0, rd, 1, v, 8);
    b_msg(&pre, 1, &op);
    make_operand(&op, "rcx", 0, wr, 1, v2, 8);
    b_msg(&post, 1, &op);
    uint8_t mv[4] = {0xde, 0xad, 0xbe, (uint8_t)i};
    make_operand(&op, NULL, 0x5000 + 4 * (uint64_t)i, wr, 1, mv, 4);
    b_msg(&post, 1, &op);
    b_uint(&sf, 1, 0x1000 + 3 * (uint64_t)i);
    b_uint(&sf, 2, 1);
    b_bytes(&sf, 3, "\x48\xff\xc1", 3); /* inc rcx */
    b_msg(&sf, 4, &pre);
    b_msg(&sf, 5, &post);
    memset(&frames[i], 0, sizeof frames[i]);
    b_msg(&frames[i], 1, &sf);
  }
  g_bitlen_zero = 0;
  const char *path = tu_tmp("foreign.frames");
  make_file(path, 2, 9, 64, &meta, frames, 3, 2);
  /* make_file wrote ceil(3/2) = 2 entries; qemu wrote floor(3/2) = 1. */
  size_t len;
  uint8_t *f = tu_read_file(path, &len);
  CU_ASSERT_EQUAL_FATAL(tu_write_file(path, f, len - 8), 0);
  free(f);
  tc_error err = {{0}};
  tc_reader *r = F->open_reader(path, &err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(r);
  const tc_arch *a = F->reader_info(r)->arch;
  CU_ASSERT_EQUAL(a->id, TC_ARCH_X86_64);
  CU_ASSERT_EQUAL(F->reader_info(r)->entry, 0x1000);
  CU_ASSERT_STRING_EQUAL(F->reader_info(r)->exe_path, "/p");
  CU_ASSERT_EQUAL(
      tc_state_get(a, F->reader_info(r)->initial_state, reg(a, "rcx")), 10);
  tc_event ev;
  for (int i = 0; i < 3; i++) {
    CU_ASSERT_EQUAL_FATAL(F->next_event(r, &ev, &err), 1);
    CU_ASSERT_EQUAL_FATAL(ev.kind, TC_EV_INSN);
    const tc_insn_event *in = &ev.u.insn;
    CU_ASSERT_EQUAL(in->pc, 0x1000 + 3 * (uint64_t)i);
    CU_ASSERT_EQUAL(tc_state_get(a, in->state_before, reg(a, "rcx")),
                    10 + (uint64_t)i);
    CU_ASSERT_EQUAL(tc_state_get(a, in->state_after, reg(a, "rcx")),
                    11 + (uint64_t)i);
    CU_ASSERT_EQUAL(tc_state_get(a, in->state_after, a->pc_reg),
                    0x1003 + 3 * (uint64_t)i);
    CU_ASSERT_EQUAL_FATAL(in->nregs, 2);
    CU_ASSERT_EQUAL(in->regs[0], reg(a, "rcx"));
    CU_ASSERT_EQUAL(in->regs[1], a->pc_reg);
    CU_ASSERT_EQUAL_FATAL(in->nmem, 1);
    CU_ASSERT_EQUAL(in->mem[0].kind, TC_MEM_WRITE);
    CU_ASSERT_EQUAL(in->mem[0].addr, 0x5000 + 4 * (uint64_t)i);
    CU_ASSERT_EQUAL(in->mem[0].size, 4);
    CU_ASSERT_EQUAL(in->mem[0].after[3], i);
  }
  CU_ASSERT_EQUAL(F->next_event(r, &ev, &err), 1);
  CU_ASSERT_EQUAL(ev.kind, TC_EV_EXIT);
  CU_ASSERT_EQUAL(ev.u.exit.insn_count, 3);
  CU_ASSERT_EQUAL(F->next_event(r, &ev, &err), 0);
  F->close_reader(r);
}

/* --------------------------------------- 3. truncated and corrupt files */

static void test_truncation_and_flips(void) {
  const char *path = tu_tmp("t-hello64.frames");
  stream s = {0};
  CU_ASSERT_EQUAL_FATAL(record("hello64", NULL, path, &s, NULL), 0);
  stream_free(&s);
  size_t len;
  uint8_t *f = tu_read_file(path, &len);
  CU_ASSERT_PTR_NOT_NULL_FATAL(f);
  walked w;
  CU_ASSERT_EQUAL_FATAL(walk_file(f, len, &w), 0);
  tc_error err = {{0}};
  long full = read_all(path, &err);
  CU_ASSERT(full > 50);
  const char *cut = tu_tmp("cut.frames");
  /* Every cut is refused, except 8 bytes short: that is a valid TOC by
   * libtrace's own rule (floor((n-1)/m) entries). */
  size_t tried = 0, refused = 0;
  for (size_t at = 0; at < len; at += (at < 200 || at > len - 200) ? 1 : 97) {
    CU_ASSERT_EQUAL_FATAL(tu_write_file(cut, f, at), 0);
    tc_error e = {{0}};
    long n = read_all(cut, &e);
    tried++;
    if (at == len - 8) {
      CU_ASSERT_EQUAL(n, full);
      continue;
    }
    if (n == -1 && e.msg[0])
      refused++;
    else
      fprintf(stderr, "cut at %zu accepted\n", at);
  }
  CU_ASSERT_EQUAL(refused, tried - 1);
  /* Bytes flipped anywhere never crash the reader; in the container
   * (header, sizes, TOC) they are always refused. */
  uint8_t *g = malloc(len);
  size_t flips = 0, flip_refused = 0;
  for (size_t at = 0; at < len; at += (at < 400 ? 1 : 13)) {
    memcpy(g, f, len);
    g[at] ^= 0x41;
    CU_ASSERT_EQUAL_FATAL(tu_write_file(cut, g, len), 0);
    tc_error e = {{0}};
    long n = read_all(cut, &e);
    flips++;
    int structural = at < 56 || at >= w.T;
    for (uint64_t k = 0; k < w.n && !structural; k++)
      structural = at >= w.off[k] && at < w.off[k] + 8;
    if (n < 0)
      flip_refused++;
    if (structural && n >= 0 && !(at >= 16 && at < 32)) {
      fprintf(stderr, "flip at %zu accepted\n", at);
      CU_FAIL("a flipped container byte was accepted");
    }
  }
  CU_ASSERT(flip_refused > flips / 4);
  free(g);

  /* Targeted: each container rule with its message. */
  struct {
    size_t off;
    uint64_t value;
    const char *expect;
  } pokes[] = {
      {0, 0x1234, "bad magic"},
      {8, 1, "trace version 1"},
      {8, 4, "trace version 4"},
      {40, 0, "the trace was not finished"},
      {40, 1ull << 40, "outside the file"},
      {32, 100000, "frames cannot fit"},
      {32, w.n + 200, "the TOC does not end at EOF"},
      {32, w.n - 1, "but the TOC is at"},
      {w.T, 0, "0 frames per entry"},
      {w.off[3], 0, "has length 0"},
      {w.off[3], 1ull << 33, "past the TOC"},
      {w.T + 8, w.off[1], "TOC entry 0 says frame 64"},
  };
  for (size_t i = 0; i < sizeof pokes / sizeof pokes[0]; i++) {
    uint8_t *h = dupb(f, len);
    put64(h + pokes[i].off, pokes[i].value);
    CU_ASSERT_EQUAL_FATAL(tu_write_file(cut, h, len), 0);
    expect_refused(cut, pokes[i].expect);
    free(h);
  }
  /* Trailing junk: the TOC no longer ends at EOF. */
  uint8_t *h = malloc(len + 8);
  memcpy(h, f, len);
  memset(h + len, 0, 8);
  for (size_t extra = 1; extra <= 8; extra++) {
    CU_ASSERT_EQUAL_FATAL(tu_write_file(cut, h, len + extra), 0);
    expect_refused(cut, "the TOC does not end at EOF");
  }
  free(h);
  /* The CLI refuses with the message and a non-zero exit. */
  put64(f + 8, 7);
  CU_ASSERT_EQUAL_FATAL(tu_write_file(cut, f, len), 0);
  char *out = NULL;
  int st = tu_run_merge(&out, TC_CLI, "dump", cut, NULL);
  CU_ASSERT_NOT_EQUAL(st, 0);
  CU_ASSERT(out && strstr(out, "trace version 7"));
  free(out);
  walked_free(&w);
  free(f);
}

/* ------------------------------------------ 4. protoc decodes our frames */

typedef struct tnode {
  char *name, *value; /* value NULL for a message */
  struct tnode **kids;
  size_t nkids;
} tnode;

static void tnode_free(tnode *t) {
  if (!t)
    return;
  for (size_t i = 0; i < t->nkids; i++)
    tnode_free(t->kids[i]);
  free(t->kids);
  free(t->name);
  free(t->value);
  free(t);
}

static void skip_ws(const char **p) {
  while (**p == ' ' || **p == '\n' || **p == '\t' || **p == '\r')
    (*p)++;
}

/* Parses protoc's text format (messages and scalar fields). */
static tnode *parse_text(const char **p, int top) {
  tnode *t = calloc(1, sizeof *t);
  for (;;) {
    skip_ws(p);
    if (!**p || **p == '}') {
      if (**p == '}' && !top)
        (*p)++;
      return t;
    }
    const char *s = *p;
    while (**p && **p != ' ' && **p != ':' && **p != '{' && **p != '\n')
      (*p)++;
    tnode *k;
    char *name = strndup(s, (size_t)(*p - s));
    skip_ws(p);
    if (**p == '{') {
      (*p)++;
      k = parse_text(p, 0);
    } else {
      CU_ASSERT_EQUAL_FATAL(**p, ':');
      (*p)++;
      skip_ws(p);
      k = calloc(1, sizeof *k);
      const char *v = *p;
      if (**p == '"') {
        (*p)++;
        while (**p && **p != '"') {
          if (**p == '\\')
            (*p)++;
          (*p)++;
        }
        (*p)++;
      } else
        while (**p && **p != '\n')
          (*p)++;
      k->value = strndup(v, (size_t)(*p - v));
    }
    k->name = name;
    t->kids = realloc(t->kids, (t->nkids + 1) * sizeof *t->kids);
    t->kids[t->nkids++] = k;
  }
}

static const tnode *kid(const tnode *t, const char *name, size_t idx) {
  for (size_t i = 0; t && i < t->nkids; i++)
    if (strcmp(t->kids[i]->name, name) == 0 && idx-- == 0)
      return t->kids[i];
  return NULL;
}

static size_t nkid(const tnode *t, const char *name) {
  size_t n = 0;
  for (size_t i = 0; t && i < t->nkids; i++)
    n += strcmp(t->kids[i]->name, name) == 0;
  return n;
}

static uint64_t num(const tnode *t) {
  CU_ASSERT_PTR_NOT_NULL_FATAL(t);
  CU_ASSERT_PTR_NOT_NULL_FATAL(t->value);
  return strtoull(t->value, NULL, 10);
}

/* Unescapes a protoc string literal ("..." with C escapes). */
static size_t unescape(const tnode *t, uint8_t *out, size_t max) {
  CU_ASSERT_PTR_NOT_NULL_FATAL(t);
  const char *s = t->value;
  CU_ASSERT_EQUAL_FATAL(s[0], '"');
  size_t n = 0;
  for (s++; *s && *s != '"' && n < max; s++) {
    if (*s != '\\') {
      out[n++] = (uint8_t)*s;
      continue;
    }
    s++;
    if (*s >= '0' && *s <= '7') {
      unsigned v = 0;
      for (int k = 0; k < 3 && *s >= '0' && *s <= '7'; k++, s++)
        v = v * 8 + (unsigned)(*s - '0');
      s--;
      out[n++] = (uint8_t)v;
    } else
      out[n++] = (uint8_t)(*s == 'n'   ? '\n'
                           : *s == 'r' ? '\r'
                           : *s == 't' ? '\t'
                                       : *s);
  }
  return n;
}

static int streq(const tnode *t, const char *s) {
  return t && t->value && strcmp(t->value, s) == 0;
}

/* protoc judges the frames with the upstream schema (piqi's real field
 * names, no package; tests/data/README.md says where it came from), not
 * with writers/bap/bap_frame.proto, which renames one field for protobuf-c. */
#define BAP_PROTO_DIR TC_DATA_DIR
#define BAP_PROTO "bap-frame.proto"

/* Runs protoc --decode=TYPE on data; returns its text (malloc'd). */
static char *protoc_decode(const char *type, const uint8_t *data, size_t n) {
  const char *in = tu_tmp("protoc-in.bin");
  CU_ASSERT_EQUAL_FATAL(tu_write_file(in, data, n), 0);
  char cmd[8192];
  snprintf(cmd, sizeof cmd, "protoc --decode=%s -I'%s' '%s' < '%s'", type,
           BAP_PROTO_DIR, BAP_PROTO, in);
  char *out = NULL;
  int st = tu_run(cmd, &out, 0);
  CU_ASSERT_EQUAL(st, 0);
  if (st != 0)
    fprintf(stderr, "%s: %s\n", cmd, out ? out : "");
  return out;
}

/* Finds the arch register a frame names (upper case). */
static int reg_by_frame_name(const tc_arch *a, const char *quoted) {
  char nm[32];
  snprintf(nm, sizeof nm, "%.*s", (int)strlen(quoted) - 2, quoted + 1);
  for (int r = 0; r < a->nregs; r++)
    if (strcasecmp(a->regs[r].name, nm) == 0)
      return r;
  return -1;
}

/* The bytes a frame must hold for register r of a state image, worked
 * out from its integer value: big-endian on big-endian targets and every
 * mips (bap-frames.md: values in the byte order BAP decodes them with),
 * else little-endian; vectors as byte arrays. */
static void frame_reg_bytes(const tc_arch *a, const uint8_t *state, int r,
                            uint8_t *out) {
  const tc_reg_info *ri = &a->regs[r];
  if (ri->size > 8 || (ri->flags & TC_REG_VECTOR)) {
    memcpy(out, state + ri->offset, ri->size);
    return;
  }
  uint64_t v = tc_state_get(a, state, r);
  int be =
      a->big_endian || a->id == TC_ARCH_MIPSEL || a->id == TC_ARCH_MIPS64EL;
  for (unsigned k = 0; k < ri->size; k++)
    out[k] = (uint8_t)(v >> (8 * (be ? ri->size - 1 - k : k)));
}

static int le_mips(const tc_arch *a) {
  return a->id == TC_ARCH_MIPSEL || a->id == TC_ARCH_MIPS64EL;
}

static void reverse(uint8_t *p, size_t n) {
  for (size_t i = 0; i < n / 2; i++) {
    uint8_t t = p[i];
    p[i] = p[n - 1 - i];
    p[n - 1 - i] = t;
  }
}

/* Checks one decoded operand list against an instruction. */
static void check_operands(const tc_arch *a, const tnode *list, const sevent *x,
                           int post, size_t *nmem_seen) {
  const tc_insn_event *in = &x->ev.u.insn;
  const uint8_t *state = post ? in->state_after : in->state_before;
  uint8_t v[4096];
  for (size_t i = 0; i < nkid(list, "elem"); i++) {
    const tnode *e = kid(list, "elem", i);
    const tnode *spec = kid(e, "operand_info_specific", 0);
    const tnode *use = kid(e, "operand_usage", 0);
    CU_ASSERT_TRUE(streq(kid(use, "read", 0), post ? "false" : "true"));
    CU_ASSERT_TRUE(streq(kid(use, "written", 0), post ? "true" : "false"));
    CU_ASSERT_TRUE(streq(kid(use, "index", 0), "false"));
    CU_ASSERT_TRUE(streq(kid(use, "base", 0), "false"));
    CU_ASSERT_TRUE(streq(kid(kid(e, "taint_info", 0), "no_taint", 0), "true"));
    size_t vl = unescape(kid(e, "value", 0), v, sizeof v);
    CU_ASSERT_EQUAL(num(kid(e, "bit_length", 0)), vl * 8);
    const tnode *ro = kid(spec, "reg_operand", 0);
    if (ro) {
      int r = reg_by_frame_name(a, kid(ro, "name", 0)->value);
      CU_ASSERT_FATAL(r >= 0);
      CU_ASSERT_EQUAL(vl, a->regs[r].size);
      uint8_t want[64];
      frame_reg_bytes(a, state, r, want);
      CU_ASSERT_EQUAL(memcmp(v, want, vl), 0);
      continue;
    }
    uint64_t addr = num(kid(kid(spec, "mem_operand", 0), "address", 0));
    if (le_mips(a)) /* each access's value big-endian */
      reverse(v, vl);
    int found = 0;
    for (uint32_t k = 0; k < in->nmem; k++) {
      const tc_mem_access *ma = &in->mem[k];
      if (ma->addr == addr && ma->size == vl &&
          ma->kind == (post ? TC_MEM_WRITE : TC_MEM_READ) &&
          memcmp(v, post ? ma->after : ma->before, vl) == 0)
        found = 1;
    }
    CU_ASSERT_TRUE(found);
    (*nmem_seen)++;
  }
  if (post) { /* every changed register is there (the PC if it jumped) */
    for (unsigned k = 0; k < in->nregs; k++) {
      int r = in->regs[k];
      uint64_t fall =
          (in->pc + in->size) & (a->ptr_size == 8 ? ~0ull : 0xFFFFFFFFull);
      if (r == a->pc_reg && tc_state_get(a, in->state_after, r) == fall)
        continue;
      char want[40];
      snprintf(want, sizeof want, "\"%s\"", a->regs[r].name);
      int listed = 0;
      for (size_t i = 0; i < nkid(list, "elem"); i++) {
        const tnode *ro =
            kid(kid(kid(list, "elem", i), "operand_info_specific", 0),
                "reg_operand", 0);
        listed |= ro && strcasecmp(kid(ro, "name", 0)->value, want) == 0;
      }
      CU_ASSERT_TRUE(listed);
    }
  }
}

/* mips `lw rt, off(base)` (opcode 35 in the big-endian word BAP
 * disassembles): the loaded value, read big-endian as BAP does, is the
 * value rt gets in the post list, also big-endian (bap-frames.md: values
 * in the target's order, BAP's mips being big-endian). */
static size_t g_mips_lw;
static void check_mips_lw(const tc_arch *a, const tnode *sf,
                          const uint8_t *word_mem) {
  uint8_t w[4];
  memcpy(w, word_mem, 4);
  if (le_mips(a))
    reverse(w, 4); /* what the frame holds: big-endian */
  uint32_t word =
      (uint32_t)w[0] << 24 | (uint32_t)w[1] << 16 | (uint32_t)w[2] << 8 | w[3];
  unsigned rt = (word >> 16) & 31;
  if (word >> 26 != 35 || rt == 0)
    return;
  static const char *const gpr[32] = {
      "zero", "at", "v0", "v1", "a0", "a1", "a2", "a3", "t0", "t1", "t2",
      "t3",   "t4", "t5", "t6", "t7", "s0", "s1", "s2", "s3", "s4", "s5",
      "s6",   "s7", "t8", "t9", "k0", "k1", "gp", "sp", "fp", "ra"};
  uint8_t mem[8] = {0}, regv[8] = {0};
  int have_mem = 0, have_reg = 0;
  const tnode *pre = kid(sf, "operand_pre_list", 0);
  for (size_t i = 0; i < nkid(pre, "elem"); i++) {
    const tnode *e = kid(pre, "elem", i);
    if (kid(kid(e, "operand_info_specific", 0), "mem_operand", 0)) {
      CU_ASSERT_EQUAL(unescape(kid(e, "value", 0), mem, sizeof mem), 4);
      have_mem = 1;
    }
  }
  const tnode *post = kid(sf, "operand_post_list", 0);
  char want[16];
  snprintf(want, sizeof want, "\"%s\"", gpr[rt]);
  for (size_t i = 0; i < nkid(post, "elem"); i++) {
    const tnode *e = kid(post, "elem", i);
    const tnode *ro = kid(kid(e, "operand_info_specific", 0), "reg_operand", 0);
    if (ro && strcasecmp(kid(ro, "name", 0)->value, want) == 0) {
      CU_ASSERT_EQUAL(unescape(kid(e, "value", 0), regv, sizeof regv),
                      a->ptr_size);
      have_reg = 1;
    }
  }
  CU_ASSERT_TRUE(have_mem && have_reg);
  /* o32: a 4-byte register holds the word as is */
  CU_ASSERT_EQUAL(memcmp(mem, regv + a->ptr_size - 4, 4), 0);
  g_mips_lw++;
}

/* Records guest, decodes every frame with protoc (one call for the whole
 * file through a wrapper message, a few frames one by one) and the meta
 * frame, and compares the decoded fields with the recording. */
static void protoc_compare(const char *guest, const char *arg) {
  char name[64];
  snprintf(name, sizeof name, "pc-%s.frames", guest);
  const char *path = tu_tmp(name);
  stream s = {0};
  if (record(guest, arg, path, &s, NULL) < 0) {
    CU_FAIL("recording failed");
    return;
  }
  const tc_arch *a = s.arch;
  size_t len;
  uint8_t *f = tu_read_file(path, &len);
  walked w;
  CU_ASSERT_EQUAL_FATAL(walk_file(f, len, &w), 0);

  /* The meta frame. */
  char *meta = protoc_decode("meta_frame", f + 56, w.meta_len);
  CU_ASSERT_PTR_NOT_NULL_FATAL(meta);
  const char *mp = meta;
  tnode *mt = parse_text(&mp, 1);
  CU_ASSERT_TRUE(streq(kid(kid(mt, "tracer", 0), "name", 0), "\"tracecorn\""));
  char ver[32];
  snprintf(ver, sizeof ver, "\"%s\"", TC_VERSION_STRING);
  CU_ASSERT_TRUE(streq(kid(kid(mt, "tracer", 0), "version", 0), ver));
  /* no tracer arguments, but little-endian mips's marker */
  if (le_mips(a)) {
    char mk[40];
    snprintf(mk, sizeof mk, "\"%s\"", bap_le_mips_marker(a));
    CU_ASSERT_EQUAL(nkid(kid(mt, "tracer", 0), "args"), 1);
    CU_ASSERT_TRUE(streq(kid(kid(mt, "tracer", 0), "args", 0), mk));
  } else
    CU_ASSERT_EQUAL(nkid(kid(mt, "tracer", 0), "args"), 0);
  const tnode *tg = kid(mt, "target", 0);
  char want[4200];
  snprintf(want, sizeof want, "\"%s\"", tu_guest(guest));
  CU_ASSERT_TRUE(streq(kid(tg, "path", 0), want));
  CU_ASSERT_TRUE(streq(kid(tg, "args", 0), want));
  CU_ASSERT_EQUAL(nkid(tg, "args"), arg ? 2u : 1u);
  uint8_t md5[16], filemd5[16];
  CU_ASSERT_EQUAL(unescape(kid(tg, "md5sum", 0), md5, sizeof md5), 16);
  size_t glen;
  uint8_t *g = tu_read_file(tu_guest(guest), &glen);
  tc_md5(g, glen, filemd5);
  CU_ASSERT_EQUAL(memcmp(md5, filemd5, 16), 0);
  /* ...and the same as md5sum(1) says. */
  char cmd[4200], *out = NULL, hex[40];
  snprintf(cmd, sizeof cmd, "md5sum '%s'", tu_guest(guest));
  CU_ASSERT_EQUAL(tu_run(cmd, &out, 0), 0);
  for (int i = 0; i < 16; i++)
    snprintf(hex + 2 * i, 3, "%02x", md5[i]);
  CU_ASSERT_EQUAL(strncmp(out ? out : "", hex, 32), 0);
  free(out);
  free(g);
  CU_ASSERT_EQUAL(num(kid(kid(mt, "fstats", 0), "size", 0)), glen);
  CU_ASSERT_TRUE(streq(kid(mt, "user", 0), "\"tracecorn\""));
  CU_ASSERT_TRUE(streq(kid(mt, "host", 0), "\"tracecorn\""));
  CU_ASSERT_TRUE(streq(kid(mt, "time", 0), "1704067200"));
  tnode_free(mt);
  free(meta);

  /* Three frames one by one, as a user would cut them out. */
  for (uint64_t k = 0; k < 3 && k < w.n; k++) {
    char *one = protoc_decode("frame", f + w.off[k] + 8, w.len[k]);
    CU_ASSERT_PTR_NOT_NULL(one);
    CU_ASSERT(one &&
              (strstr(one, "std_frame {") || strstr(one, "modload_frame {") ||
               strstr(one, "key_frame {")));
    free(one);
  }

  /* Every frame through one protoc run. */
  const char *wrap = tu_tmp("wrap.proto");
  char wtxt[512];
  snprintf(wtxt, sizeof wtxt,
           "syntax = \"proto2\";\nimport \"%s\";\n"
           "message all_frames { repeated frame f = 1; }\n",
           BAP_PROTO);
  CU_ASSERT_EQUAL(tu_write_file(wrap, wtxt, strlen(wtxt)), 0);
  uint8_t *cat = malloc(len + 16 * w.n);
  size_t cn = 0;
  for (uint64_t k = 0; k < w.n; k++) {
    cat[cn++] = 0x0a;
    uint64_t l = w.len[k];
    do {
      cat[cn++] = (uint8_t)((l & 0x7F) | (l > 0x7F ? 0x80 : 0));
      l >>= 7;
    } while (l);
    memcpy(cat + cn, f + w.off[k] + 8, w.len[k]);
    cn += w.len[k];
  }
  const char *catp = tu_tmp("all.bin");
  CU_ASSERT_EQUAL(tu_write_file(catp, cat, cn), 0);
  free(cat);
  snprintf(cmd, sizeof cmd,
           "protoc --decode=all_frames -I'%s' -I'%s' '%s' < '%s'",
           BAP_PROTO_DIR, tu_tmpdir(), wrap, catp);
  out = NULL;
  CU_ASSERT_EQUAL_FATAL(tu_run(cmd, &out, 0), 0);
  const char *op = out;
  tnode *all = parse_text(&op, 1);
  CU_ASSERT_EQUAL(nkid(all, "f"), w.n);

  size_t ei = 0, insns = 0, syscalls = 0, modloads = 0, keys = 0, thumb = 0;
  g_mips_lw = 0;
  for (size_t k = 0; k < nkid(all, "f"); k++) {
    const tnode *fr = kid(all, "f", k);
    CU_ASSERT_EQUAL(fr->nkids, 1); /* exactly one option */
    const tnode *sf = kid(fr, "std_frame", 0);
    const tnode *sy = kid(fr, "syscall_frame", 0);
    const tnode *ml = kid(fr, "modload_frame", 0);
    const tnode *kf = kid(fr, "key_frame", 0);
    const tnode *ex = kid(fr, "exception_frame", 0);
    tc_event_kind want_kind = sf   ? TC_EV_INSN
                              : sy ? TC_EV_SYSCALL
                              : ml ? TC_EV_MAP
                              : kf ? TC_EV_KEYFRAME
                              : ex ? TC_EV_FAULT
                                   : 0;
    /* The recording's next event of that kind (maps of one file merge;
     * unnamed maps have no frame). */
    while (ei < s.n && (s.e[ei].ev.kind != want_kind ||
                        (want_kind == TC_EV_MAP &&
                         (!s.e[ei].name[0] || s.e[ei].name[0] == '['))))
      ei++;
    CU_ASSERT_FATAL(ei < s.n);
    const sevent *x = &s.e[ei++];
    if (sf) {
      const tc_insn_event *in = &x->ev.u.insn;
      CU_ASSERT_EQUAL(num(kid(sf, "address", 0)), in->pc);
      CU_ASSERT_EQUAL(num(kid(sf, "thread_id", 0)), in->tid);
      uint8_t raw[32];
      CU_ASSERT_EQUAL(unescape(kid(sf, "rawbytes", 0), raw, sizeof raw),
                      in->size);
      if (le_mips(a)) { /* the instruction word big-endian */
        CU_ASSERT_EQUAL_FATAL(in->size, 4);
        reverse(raw, 4);
      }
      CU_ASSERT_EQUAL(memcmp(raw, in->bytes, in->size), 0);
      /* arm: every frame says its instruction set; no mode elsewhere */
      const tnode *mode = kid(sf, "mode", 0);
      if (a->id == TC_ARCH_ARM) {
        int t = tc_insn_thumb(a, in);
        CU_ASSERT_TRUE(streq(mode, t ? "\"arm:t32\"" : "\"arm:a32\""));
        thumb += t;
      } else
        CU_ASSERT_PTR_NULL(mode);
      if (is_mips(a))
        check_mips_lw(a, sf, raw);
      size_t nmem = 0;
      CU_ASSERT_PTR_NOT_NULL(kid(sf, "operand_pre_list", 0));
      check_operands(a, kid(sf, "operand_pre_list", 0), x, 0, &nmem);
      check_operands(a, kid(sf, "operand_post_list", 0), x, 1, &nmem);
      CU_ASSERT_EQUAL(nmem, in->nmem);
      insns++;
    } else if (sy) {
      const tc_syscall_event *e = &x->ev.u.sys;
      CU_ASSERT_EQUAL(num(kid(sy, "number", 0)), e->nr);
      CU_ASSERT_EQUAL(num(kid(sy, "thread_id", 0)), e->tid);
      const tnode *al = kid(sy, "argument_list", 0);
      CU_ASSERT_EQUAL(nkid(al, "elem"), 6);
      for (size_t i = 0; i < 6; i++)
        CU_ASSERT_EQUAL((uint64_t)strtoll(kid(al, "elem", i)->value, NULL, 10),
                        e->args[i]);
      /* the address is the trapping instruction's */
      size_t t = ei - 1;
      while (t > 0 && s.e[t].ev.kind != TC_EV_INSN)
        t--;
      CU_ASSERT_EQUAL(num(kid(sy, "address", 0)), s.e[t].ev.u.insn.pc);
      syscalls++;
    } else if (ml) {
      snprintf(want, sizeof want, "\"%s\"", x->name);
      CU_ASSERT_TRUE(streq(kid(ml, "module_name", 0), want));
      CU_ASSERT_EQUAL(num(kid(ml, "low_address", 0)), x->ev.u.map.addr);
      /* high: the last byte of the file's last consecutive map */
      uint64_t hi = x->ev.u.map.addr + x->ev.u.map.size - 1;
      while (ei < s.n && s.e[ei].ev.kind == TC_EV_MAP &&
             strcmp(s.e[ei].name, x->name) == 0) {
        hi = s.e[ei].ev.u.map.addr + s.e[ei].ev.u.map.size - 1;
        ei++;
      }
      CU_ASSERT_EQUAL(num(kid(ml, "high_address", 0)), hi);
      modloads++;
    } else if (kf) {
      const tnode *tvl = kid(kid(kf, "tagged_value_lists", 0), "elem", 0);
      const tnode *vl = kid(tvl, "value_list", 0);
      CU_ASSERT_EQUAL(nkid(vl, "elem"), a->nregs);
      for (int r = 0; r < a->nregs; r++) {
        const tnode *e = kid(vl, "elem", (size_t)r);
        uint8_t v[64], vwant[64];
        CU_ASSERT_EQUAL(unescape(kid(e, "value", 0), v, sizeof v),
                        a->regs[r].size);
        frame_reg_bytes(a, x->ev.u.key.state, r, vwant);
        CU_ASSERT_EQUAL(memcmp(v, vwant, a->regs[r].size), 0);
      }
      keys++;
    } else if (ex) {
      CU_ASSERT_EQUAL(num(kid(ex, "exception_number", 0)),
                      (uint64_t)x->ev.u.fault.signal);
      CU_ASSERT_EQUAL(num(kid(ex, "from_addr", 0)), x->ev.u.fault.pc);
    }
  }
  size_t want_insns = 0, want_sys = 0;
  for (size_t i = 0; i < s.n; i++) {
    want_insns += s.e[i].ev.kind == TC_EV_INSN;
    want_sys += s.e[i].ev.kind == TC_EV_SYSCALL;
  }
  CU_ASSERT_EQUAL(insns, want_insns);
  CU_ASSERT_EQUAL(syscalls, want_sys);
  CU_ASSERT(modloads >= 1);
  CU_ASSERT(keys >= 1);
  if (a->id == TC_ARCH_ARM && strstr(guest, "armhf")) /* Thumb-2 code */
    CU_ASSERT(thumb > insns / 2);
  if (is_mips(a))
    CU_ASSERT(g_mips_lw >= 1);
  tnode_free(all);
  free(out);
  walked_free(&w);
  free(f);
  stream_free(&s);
}

static void test_protoc_hello64(void) { protoc_compare("hello64", "world"); }
static void test_protoc_insns32(void) { protoc_compare("insns32", NULL); }
static void test_protoc_segv64(void) { protoc_compare("segv64", NULL); }
/* arm (A32 and Thumb-2), arm64, mips big- and little-endian */
static void test_protoc_arm_mips(void) {
  static const char *const guests[][2] = {
      {"hello-armhf", NULL}, {"hello-armel", NULL},  {"hello-arm64", NULL},
      {"hello-mips", NULL},  {"hello-mipsel", NULL}, {"loop-mips", "60"},
      {"loop-mipsel", "60"}};
  for (size_t i = 0; i < sizeof guests / sizeof guests[0]; i++)
    if (tu_have(tu_guest(guests[i][0])))
      protoc_compare(guests[i][0], guests[i][1]);
    else
      fprintf(stderr, "(no %s in this build)\n", guests[i][0]);
}

/* --------------------------------------- 5. round trips through the reader */

/* Every event the reader yields equals the recording, within what frames
 * hold. */
static void roundtrip(const char *guest, const char *arg) {
  char name[64];
  snprintf(name, sizeof name, "rt-%s.frames", guest);
  const char *path = tu_tmp(name);
  stream s = {0};
  if (record(guest, arg, path, &s, NULL) < 0) {
    CU_FAIL("recording failed");
    return;
  }
  stream got = {s.arch, NULL, 0, 0};
  tc_error err = {{0}};
  CU_ASSERT_EQUAL_FATAL(tc_read_trace(path, F, collect, &got, &err), 0);
  const tc_arch *a = s.arch;
  size_t ss = a->state_size;
  size_t gi = 0, mismatches = 0;
  uint64_t fault_signal = 0;
  for (size_t i = 0; i < s.n; i++) {
    const tc_event *x = &s.e[i].ev;
    if (x->kind == TC_EV_MAP || x->kind == TC_EV_UNMAP ||
        x->kind == TC_EV_PROTECT || x->kind == TC_EV_EXIT)
      continue;
    while (gi < got.n && got.e[gi].ev.kind == TC_EV_MAP)
      gi++;
    CU_ASSERT_FATAL(gi < got.n);
    const tc_event *y = &got.e[gi++].ev;
    CU_ASSERT_EQUAL_FATAL(y->kind, x->kind);
    int bad = 0;
    if (x->kind == TC_EV_INSN) {
      const tc_insn_event *p = &x->u.insn, *q = &y->u.insn;
      bad |= p->index != q->index || p->pc != q->pc || p->tid != q->tid ||
             p->size != q->size || memcmp(p->bytes, q->bytes, p->size);
      bad |= memcmp(p->state_before, q->state_before, ss) != 0;
      bad |= memcmp(p->state_after, q->state_after, ss) != 0;
      bad |= p->nregs != q->nregs ||
             memcmp(p->regs, q->regs, p->nregs * sizeof *p->regs);
      bad |= p->nmem != q->nmem;
      /* reads come first, then writes; each in recording order */
      uint32_t k = 0;
      for (int kind = TC_MEM_READ; kind <= TC_MEM_WRITE && !bad; kind++)
        for (uint32_t m = 0; m < p->nmem; m++) {
          const tc_mem_access *pm = &p->mem[m];
          if (pm->kind != kind)
            continue;
          const tc_mem_access *qm = &q->mem[k++];
          bad |=
              pm->addr != qm->addr || pm->size != qm->size ||
              pm->kind != qm->kind || memcmp(pm->after, qm->after, pm->size) ||
              (kind == TC_MEM_READ && memcmp(pm->before, qm->before, pm->size));
        }
    } else if (x->kind == TC_EV_SYSCALL) {
      const tc_syscall_event *p = &x->u.sys, *q = &y->u.sys;
      bad |= p->nr != q->nr || p->tid != q->tid || p->ret != q->ret ||
             p->insn_index != q->insn_index ||
             memcmp(p->args, q->args, sizeof p->args) ||
             (p->name && (!q->name || strcmp(p->name, q->name)));
    } else if (x->kind == TC_EV_KEYFRAME) {
      bad |= x->u.key.insn_index != y->u.key.insn_index ||
             x->u.key.tid != y->u.key.tid ||
             memcmp(x->u.key.state, y->u.key.state, ss);
    } else if (x->kind == TC_EV_FAULT) {
      bad |= x->u.fault.pc != y->u.fault.pc ||
             x->u.fault.signal != y->u.fault.signal ||
             x->u.fault.insn_index != y->u.fault.insn_index;
      fault_signal = (uint64_t)x->u.fault.signal;
    }
    if (bad && !mismatches++)
      fprintf(stderr, "%s: event %zu (kind %d) differs\n", guest, i, x->kind);
  }
  CU_ASSERT_EQUAL(mismatches, 0);
  /* The reader's EXIT: from the exit syscall or the fault. */
  CU_ASSERT_FATAL(gi < got.n);
  const tc_event *ye = &got.e[got.n - 1].ev;
  const tc_event *xe = &s.e[s.n - 1].ev;
  CU_ASSERT_EQUAL(ye->kind, TC_EV_EXIT);
  CU_ASSERT_EQUAL(xe->kind, TC_EV_EXIT);
  CU_ASSERT_EQUAL(ye->u.exit.reason, xe->u.exit.reason);
  CU_ASSERT_EQUAL(ye->u.exit.status, xe->u.exit.status);
  CU_ASSERT_EQUAL(ye->u.exit.insn_count, xe->u.exit.insn_count);
  CU_ASSERT_EQUAL((uint64_t)ye->u.exit.signal,
                  fault_signal ? fault_signal : (uint64_t)xe->u.exit.signal);
  /* Reader info. */
  tc_reader *r = F->open_reader(path, &err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(r);
  const tc_trace_info *info = F->reader_info(r);
  CU_ASSERT_PTR_EQUAL(info->arch, a);
  CU_ASSERT_STRING_EQUAL(info->exe_path, tu_guest(guest));
  CU_ASSERT_STRING_EQUAL(info->argv[0], tu_guest(guest));
  for (size_t i = 0; i < s.n; i++)
    if (s.e[i].ev.kind == TC_EV_INSN) {
      CU_ASSERT_EQUAL(info->entry, s.e[i].ev.u.insn.pc);
      CU_ASSERT_EQUAL(
          memcmp(info->initial_state, s.e[i].ev.u.insn.state_before, ss), 0);
      break;
    }
  F->close_reader(r);
  stream_free(&got);
  stream_free(&s);
}

static void test_roundtrip_hello64(void) { roundtrip("hello64", "a b"); }
static void test_roundtrip_insns64(void) { roundtrip("insns64", NULL); }
static void test_roundtrip_hello32(void) { roundtrip("hello32", NULL); }
static void test_roundtrip_segv32(void) { roundtrip("segv32", NULL); }
static void test_roundtrip_div64(void) { roundtrip("div64", NULL); }

/* A stream whose states jump (as a converted trace may) gets a key_frame
 * at the jump, and the reader follows it. */
static void test_keyframe_on_jump(void) {
  const tc_arch *a = tc_arch_by_id(TC_ARCH_X86_64);
  tc_error err = {{0}};
  tc_trace_info info = {0};
  info.arch = a;
  const char *path = tu_tmp("jump.frames");
  tc_writer *w = F->open_writer(path, &info, &err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(w);
  /* insn 0: s0 -> s1; insn 1: s1x -> s2, where s1x = s1 + xmm3 = 0x77,
   * a change no instruction's post list shows. */
  uint8_t *s0 = calloc(1, a->state_size), *s1 = calloc(1, a->state_size);
  uint8_t *s1x = calloc(1, a->state_size), *s2 = calloc(1, a->state_size);
  tc_state_set(a, s0, a->pc_reg, 0x1000);
  tc_state_set(a, s1, a->pc_reg, 0x1001);
  memcpy(s1x, s1, a->state_size);
  tc_state_set(a, s1x, reg(a, "xmm3"), 0x77);
  memcpy(s2, s1x, a->state_size);
  tc_state_set(a, s2, a->pc_reg, 0x1002);
  uint16_t pcl[1] = {(uint16_t)a->pc_reg};
  const uint8_t *bef[2] = {s0, s1x}, *aft[2] = {s1, s2};
  for (int i = 0; i < 2; i++) {
    tc_event ev = {.kind = TC_EV_INSN};
    ev.u.insn.index = (uint64_t)i;
    ev.u.insn.pc = 0x1000 + (uint64_t)i;
    ev.u.insn.tid = 5;
    ev.u.insn.size = 1;
    ev.u.insn.bytes[0] = 0x90;
    ev.u.insn.nregs = 1;
    ev.u.insn.regs = pcl;
    ev.u.insn.state_before = bef[i];
    ev.u.insn.state_after = aft[i];
    CU_ASSERT_EQUAL(F->write_event(w, &ev, &err), 0);
  }
  CU_ASSERT_EQUAL(F->close_writer(w, &err), 0);
  stream got = {a, NULL, 0, 0};
  CU_ASSERT_EQUAL_FATAL(tc_read_trace(path, F, collect, &got, &err), 0);
  /* KEYFRAME, INSN 0, KEYFRAME, INSN 1, EXIT */
  CU_ASSERT_EQUAL_FATAL(got.n, 5);
  CU_ASSERT_EQUAL(got.e[0].ev.kind, TC_EV_KEYFRAME);
  CU_ASSERT_EQUAL(got.e[2].ev.kind, TC_EV_KEYFRAME);
  CU_ASSERT_EQUAL(got.e[2].ev.u.key.insn_index, 1);
  CU_ASSERT_EQUAL(got.e[2].ev.u.key.tid, 5);
  CU_ASSERT_EQUAL_FATAL(got.e[3].ev.kind, TC_EV_INSN);
  CU_ASSERT_EQUAL(memcmp(got.e[3].ev.u.insn.state_before, s1x, a->state_size),
                  0);
  CU_ASSERT_EQUAL(memcmp(got.e[3].ev.u.insn.state_after, s2, a->state_size), 0);
  stream_free(&got);
  free(s0);
  free(s1);
  free(s1x);
  free(s2);
}

/* --------------------------------- 6. verify, convert, determinism (CLI) */

static void verify_guest(const char *guest, const char *arg) {
  const char *prog = tu_guest(guest);
  if (!tu_have(prog)) {
    fprintf(stderr, "missing guest %s\n", prog);
    CU_FAIL("guest program missing");
    return;
  }
  char *out = NULL;
  int st = tu_run_merge(&out, TC_CLI, "verify", "-q", "-f", "bap", "-O",
                        "bap.mipsel=force", "--", prog, arg, NULL);
  CU_ASSERT_EQUAL(st, 0);
  const char *line = out ? strstr(out, "bap    ok: ") : NULL;
  CU_ASSERT_PTR_NOT_NULL(line);
  if (st != 0 || !line)
    fprintf(stderr, "verify %s: %s\n", guest, out ? out : "");
  free(out);
}

static void test_verify_x86_64(void) {
  verify_guest("hello64", "x");
  verify_guest("insns64", NULL);
  verify_guest("glibc64", NULL);
  verify_guest("hello64-pie", NULL);
  verify_guest("glibc64-pie", NULL);
  verify_guest("loop64", "3000");
  verify_guest("segv64", NULL);
  verify_guest("ill64", NULL);
  verify_guest("div64", NULL);
}

static void test_verify_i386(void) {
  verify_guest("hello32", "x");
  verify_guest("insns32", NULL);
  verify_guest("glibc32", NULL);
  verify_guest("loop32", "3000");
  verify_guest("segv32", NULL);
}

/* The arm guests, where this build has them. */
static void test_verify_arm(void) {
  static const char *const guests[] = {"hello-armhf", "interwork-armhf",
                                       "segv-armhf",  "hello-armel",
                                       "hello-arm64", "segv-arm64"};
  int any = 0;
  for (size_t i = 0; i < sizeof guests / sizeof guests[0]; i++)
    if (tu_have(tu_guest(guests[i]))) {
      verify_guest(guests[i], NULL);
      any = 1;
    }
  if (!any)
    fprintf(stderr, "(no arm guests in this build)\n");
}

/* mips and mipsel: freestanding, faults, static glibc. */
static void test_verify_mips(void) {
  static const char *const guests[] = {
      "hello-mips",  "loop-mips",  "segv-mips",    "ill-mips",
      "div-mips",    "glibc-mips", "hello-mipsel", "loop-mipsel",
      "segv-mipsel", "div-mipsel", "glibc-mipsel"};
  int any = 0;
  for (size_t i = 0; i < sizeof guests / sizeof guests[0]; i++)
    if (tu_have(tu_guest(guests[i]))) {
      verify_guest(guests[i], NULL);
      any = 1;
    }
  if (!any)
    fprintf(stderr, "(no mips guests in this build)\n");
  /* little-endian mips is refused unless forced, then written with a
   * warning (bap-frames.md) */
  if (tu_have(tu_guest("hello-mipsel"))) {
    char *out = NULL, frames[4300];
    snprintf(frames, sizeof frames, "%s.frames", tu_tmp("refused"));
    tu_run_merge(&out, TC_CLI, "record", "-q", "-f", "bap", "-o",
                 tu_tmp("refused"), "--", tu_guest("hello-mipsel"), NULL);
    CU_ASSERT(out && strstr(out, "cannot express a mipsel trace"));
    CU_ASSERT_FALSE(tu_have(frames));
    free(out);
    tu_run_merge(&out, TC_CLI, "record", "-q", "-f", "bap", "-O",
                 "bap.mipsel=force", "-o", tu_tmp("warn"), "--",
                 tu_guest("hello-mipsel"), NULL);
    CU_ASSERT(out && strstr(out, "bap: warning") &&
              strstr(out, "BAP's mips is big-endian"));
    free(out);
  }
}

static void test_determinism_and_convert(void) {
  const char *g = tu_guest("hello64");
  char p1[4200], p2[4200], p3[4200], p4[4200];
  snprintf(p1, sizeof p1, "%s", tu_tmp("det1"));
  snprintf(p2, sizeof p2, "%s", tu_tmp("det2"));
  char *out = NULL;
  /* hello64 exits with its argument count */
  CU_ASSERT_EQUAL(tu_run_merge(&out, TC_CLI, "record", "-q", "-f", "bap,tct",
                               "-o", p1, "--", g, "z", NULL),
                  1);
  free(out);
  CU_ASSERT_EQUAL(tu_run_merge(&out, TC_CLI, "record", "-q", "-f", "bap", "-o",
                               p2, "--", g, "z", NULL),
                  1);
  free(out);
  snprintf(p1, sizeof p1, "%s.frames", tu_tmp("det1"));
  snprintf(p2, sizeof p2, "%s.frames", tu_tmp("det2"));
  size_t l1, l2, l3, l4;
  uint8_t *a = tu_read_file(p1, &l1), *b = tu_read_file(p2, &l2);
  CU_ASSERT_PTR_NOT_NULL_FATAL(a);
  CU_ASSERT_PTR_NOT_NULL_FATAL(b);
  CU_ASSERT_EQUAL(l1, l2);
  CU_ASSERT(l1 == l2 && memcmp(a, b, l1) == 0); /* byte-identical */
  /* tct -> bap gives the same frames (the meta frame may differ: tct may
   * not hold the program's bytes for the MD5). */
  snprintf(p3, sizeof p3, "%s.tct", tu_tmp("det1"));
  snprintf(p4, sizeof p4, "%s", tu_tmp("conv.frames"));
  CU_ASSERT_EQUAL(
      tu_run_merge(&out, TC_CLI, "convert", p3, "--to", "bap", p4, NULL), 0);
  free(out);
  uint8_t *c = tu_read_file(p4, &l3);
  CU_ASSERT_PTR_NOT_NULL_FATAL(c);
  size_t m1 = 56 + (size_t)le64(a + 48), m3 = 56 + (size_t)le64(c + 48);
  uint64_t T1 = le64(a + 40), T3 = le64(c + 40);
  CU_ASSERT_EQUAL(le64(a + 32), le64(c + 32));
  CU_ASSERT_EQUAL(T1 - m1, T3 - m3);
  CU_ASSERT(T1 - m1 == T3 - m3 && memcmp(a + m1, c + m3, T1 - m1) == 0);
  /* bap -> bap: the frames survive their own reader and writer. */
  snprintf(p3, sizeof p3, "%s", tu_tmp("conv2.frames"));
  CU_ASSERT_EQUAL(
      tu_run_merge(&out, TC_CLI, "convert", p1, "--to", "bap", p3, NULL), 0);
  free(out);
  uint8_t *d = tu_read_file(p3, &l4);
  CU_ASSERT_PTR_NOT_NULL_FATAL(d);
  size_t m4 = 56 + (size_t)le64(d + 48);
  CU_ASSERT_EQUAL(l4 - m4, l1 - m1);
  /* same frames; the TOC holds offsets, which shift with the meta frame */
  uint64_t T4 = le64(d + 40);
  CU_ASSERT(T1 - m1 == T4 - m4 && memcmp(a + m1, d + m4, T1 - m1) == 0);
  /* dump reads it and shows syscalls and the exit */
  CU_ASSERT_EQUAL(tu_run_merge(&out, TC_CLI, "dump", p1, NULL), 0);
  CU_ASSERT(out && strstr(out, "syscall write(1,"));
  CU_ASSERT(out && strstr(out, "exit    exited, status"));
  free(out);
  free(a);
  free(b);
  free(c);
  free(d);
}

/* ------------------------------------------ 7. writer options, failures */

static void test_writer_options_and_failures(void) {
  const tc_arch *a = tc_arch_by_id(TC_ARCH_X86_64);
  tc_error err = {{0}};
  tc_trace_info info = {0};
  info.arch = a;
  info.exe_path = "/bin/prog";
  struct {
    const char *opt, *expect;
  } bad[] = {
      {"bap.foo=1", "unknown writer option 'bap.foo=1'"},
      {"bap.toc=0", "bap.toc=0"},
      {"bap.toc=-3", "bap.toc=-3"},
      {"bap.toc=12x", "bap.toc=12x"},
      {"bap.meta=yes", "expected fixed or host"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    const char *opts[] = {bad[i].opt, NULL};
    info.writer_options = opts;
    err.msg[0] = 0;
    CU_ASSERT_PTR_NULL(F->open_writer(tu_tmp("o.frames"), &info, &err));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, bad[i].expect));
  }
  /* Other formats' options are not ours to refuse. */
  const char *other[] = {"trac.x=1", NULL};
  info.writer_options = other;
  tc_writer *w = F->open_writer(tu_tmp("o.frames"), &info, &err);
  CU_ASSERT_PTR_NOT_NULL(w);
  CU_ASSERT_EQUAL(F->close_writer(w, &err), 0);
  /* meta=host: real user, host, time, tracer command line. */
  const char *host[] = {"bap.meta=host", NULL};
  info.writer_options = host;
  info.exe_path = tu_guest("hello64");
  const char *path = tu_tmp("host.frames");
  w = F->open_writer(path, &info, &err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(w);
  CU_ASSERT_EQUAL(F->close_writer(w, &err), 0);
  size_t len;
  uint8_t *f = tu_read_file(path, &len);
  char *meta = protoc_decode("meta_frame", f + 56, (size_t)le64(f + 48));
  char hn[256] = "", want[300];
  gethostname(hn, sizeof hn);
  snprintf(want, sizeof want, "host: \"%s\"", hn);
  CU_ASSERT(meta && strstr(meta, want));
  CU_ASSERT(meta && strstr(meta, "test_bap"));
  CU_ASSERT(!(meta && strstr(meta, "time: 1704067200\n")));
  free(meta);
  free(f);
  /* An empty recording is still a well-formed file (n = 0). */
  info.writer_options = NULL;
  path = tu_tmp("empty.frames");
  w = F->open_writer(path, &info, &err);
  CU_ASSERT_EQUAL(F->close_writer(w, &err), 0);
  CU_ASSERT_EQUAL(read_all(path, &err), 1); /* EXIT */
  /* Failures: no directory; a full disk. */
  CU_ASSERT_PTR_NULL(F->open_writer("/nonexistent/dir/x.frames", &info, &err));
  CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "cannot create"));
  if (tu_have("/dev/full")) {
    w = F->open_writer("/dev/full", &info, &err);
    CU_ASSERT_PTR_NULL(w);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "write failed"));
  }
  /* An unfinished file (a killed writer: frame count and TOC offset still
   * 0, no TOC) reads as its whole frames before the cut (issue 38). */
  path = tu_tmp("unfinished.frames");
  write_movs(path, 3, NULL);
  long whole = read_all(path, &err);
  CU_ASSERT(whole > 3);
  f = tu_read_file(path, &len);
  uint64_t toc = le64(f + 40);
  CU_ASSERT_FATAL(toc > 64 && toc < len);
  put64(f + 32, 0);
  put64(f + 40, 0);
  CU_ASSERT_EQUAL(tu_write_file(path, f, (size_t)toc), 0); /* before the TOC */
  CU_ASSERT_EQUAL(read_all(path, &err), whole);
  CU_ASSERT_EQUAL(tu_write_file(path, f, (size_t)toc - 3), 0); /* in a frame */
  long cut = read_all(path, &err);
  CU_ASSERT(cut > 0 && cut < whole);
  /* a count without a TOC offset is no writer's: refused */
  put64(f + 32, 3);
  CU_ASSERT_EQUAL(tu_write_file(path, f, len), 0);
  expect_refused(path, "not finished");
  free(f);
}

/* ------------------------------------------------ 8. MD5, access helper */

static void test_md5(void) {
  static const struct {
    const char *in, *hex;
  } v[] = {
      {"", "d41d8cd98f00b204e9800998ecf8427e"},
      {"a", "0cc175b9c0f1b6a831c399e269772661"},
      {"abc", "900150983cd24fb0d6963f7d28e17f72"},
      {"message digest", "f96b697d7cb7938d525a2f31aaf161d0"},
      {"abcdefghijklmnopqrstuvwxyz", "c3fcd3d76192e4007dfb496cca67e13b"},
      {"12345678901234567890123456789012345678901234567890123456789012345678"
       "901234567890",
       "57edf4a22be3c955ac49da2e2107b67a"},
  };
  for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
    uint8_t d[16];
    char hex[33];
    tc_md5(v[i].in, strlen(v[i].in), d);
    for (int k = 0; k < 16; k++)
      snprintf(hex + 2 * k, 3, "%02x", d[k]);
    CU_ASSERT_STRING_EQUAL(hex, v[i].hex);
  }
}

static int has(const uint16_t *l, unsigned n, int r) {
  for (unsigned i = 0; i < n; i++)
    if (l[i] == r)
      return 1;
  return 0;
}

static void test_insn_access(void) {
  const tc_arch *a = tc_arch_by_id(TC_ARCH_X86_64);
  tc_error err = {{0}};
  tc_insn_access_cache *c = tc_insn_access_new(a, &err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(c);
  const tc_insn_access *x;
  x = tc_insn_access_get(c, 0x1000, (const uint8_t *)"\x48\x01\xd8", 3);
  CU_ASSERT_TRUE(x->decoded); /* add rax, rbx */
  CU_ASSERT_EQUAL(x->nread, 2);
  CU_ASSERT(has(x->read, x->nread, reg(a, "rax")) &&
            has(x->read, x->nread, reg(a, "rbx")));
  CU_ASSERT_EQUAL(x->nwrite, 2);
  CU_ASSERT(has(x->write, x->nwrite, reg(a, "rax")) &&
            has(x->write, x->nwrite, a->flags_reg));
  CU_ASSERT(x->read[0] < x->read[1] && x->write[0] < x->write[1]);
  /* Same pc, other bytes: decoded again. push rax */
  x = tc_insn_access_get(c, 0x1000, (const uint8_t *)"\x50", 1);
  CU_ASSERT(has(x->read, x->nread, reg(a, "rsp")) &&
            has(x->read, x->nread, reg(a, "rax")));
  CU_ASSERT(x->nwrite == 1 && x->write[0] == reg(a, "rsp"));
  /* mov eax, 1: a sub-register write is the full register */
  x = tc_insn_access_get(c, 0x2000, (const uint8_t *)"\xb8\x01\0\0\0", 5);
  CU_ASSERT(x->nread == 0 && x->nwrite == 1 && x->write[0] == reg(a, "rax"));
  /* jne: flags read */
  x = tc_insn_access_get(c, 0x3000, (const uint8_t *)"\x75\xf3", 2);
  CU_ASSERT(x->nread == 1 && x->read[0] == a->flags_reg);
  /* mov rax, fs:[0x28] reads fs and fs_base */
  x = tc_insn_access_get(c, 0x4000,
                         (const uint8_t *)"\x64\x48\x8b\x04\x25\x28\0\0\0", 9);
  CU_ASSERT(has(x->read, x->nread, reg(a, "fs")) &&
            has(x->read, x->nread, reg(a, "fs_base")));
  /* syscall: the ABI registers are read */
  x = tc_insn_access_get(c, 0x5000, (const uint8_t *)"\x0f\x05", 2);
  CU_ASSERT_TRUE(x->trap);
  static const char *const abi[] = {"rax", "rdi", "rsi", "rdx",
                                    "r10", "r8",  "r9"};
  for (int i = 0; i < 7; i++)
    CU_ASSERT_TRUE(has(x->read, x->nread, reg(a, abi[i])));
  /* fld st(1): st1 read, fpsw written; pxor xmm0 */
  x = tc_insn_access_get(c, 0x6000, (const uint8_t *)"\xd9\xc1", 2);
  CU_ASSERT(has(x->read, x->nread, reg(a, "st1")) &&
            has(x->write, x->nwrite, reg(a, "fpsw")));
  x = tc_insn_access_get(c, 0x7000, (const uint8_t *)"\x66\x0f\xef\xc0", 4);
  CU_ASSERT(has(x->read, x->nread, reg(a, "xmm0")) &&
            has(x->write, x->nwrite, reg(a, "xmm0")));
  /* lock cmpxchg: capstone's regs miss the flags, its eflags bits not */
  x = tc_insn_access_get(c, 0x8000, (const uint8_t *)"\xf0\x0f\xb1\x0a", 4);
  CU_ASSERT_TRUE(has(x->write, x->nwrite, a->flags_reg));
  /* garbage */
  x = tc_insn_access_get(c, 0x9000, (const uint8_t *)"\x06", 1);
  CU_ASSERT(!x->decoded && x->nread == 0 && x->nwrite == 0);
  tc_insn_access_free(c);

  const tc_arch *b = tc_arch_by_id(TC_ARCH_X86);
  c = tc_insn_access_new(b, &err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(c);
  x = tc_insn_access_get(c, 0x1000, (const uint8_t *)"\xcd\x80", 2);
  static const char *const abi32[] = {"eax", "ebx", "ecx", "edx",
                                      "esi", "edi", "ebp"};
  CU_ASSERT_TRUE(x->trap);
  for (int i = 0; i < 7; i++)
    CU_ASSERT_TRUE(has(x->read, x->nread, reg(b, abi32[i])));
  x = tc_insn_access_get(c, 0x1002, (const uint8_t *)"\x60", 1); /* pushal */
  CU_ASSERT_EQUAL(x->nread, 8);
  tc_insn_access_free(c);

  const tc_arch *arm = tc_arch_by_id(TC_ARCH_ARM);
  if (arm) {
    c = tc_insn_access_new(arm, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    /* mov r11, r0 (Thumb 0x4683): capstone says fp, we say r11 */
    x = tc_insn_access_get(c, 0x1001, (const uint8_t *)"\x83\x46", 2);
    CU_ASSERT(x->nwrite == 1 && x->write[0] == reg(arm, "r11"));
    CU_ASSERT(x->nread == 1 && x->read[0] == reg(arm, "r0"));
    tc_insn_access_free(c);
  }
}

/* mips64el: Unicorn 2.0.1 cannot run it, so a hand-made n64 stream
 * (daddiu, sd, ld, syscall exit) written as tct and converted. */
static void test_mips64el_stream(void) {
  const tc_arch *a = tc_arch_by_id(TC_ARCH_MIPS64EL);
  CU_ASSERT_PTR_NOT_NULL_FATAL(a);
  char ref[4200], path[4200];
  snprintf(ref, sizeof ref, "%s", tu_tmp("m64.tct"));
  snprintf(path, sizeof path, "%s", tu_tmp("m64.frames"));
  tc_error err = {{0}};
  CU_ASSERT_EQUAL_FATAL(evlog_write_mips64el_tct(ref, &err), 0);

  char *out = NULL;
  CU_ASSERT_EQUAL(tu_run_merge(&out, TC_CLI, "convert", "-O",
                               "bap.mipsel=force", ref, "--to", "bap", path,
                               NULL),
                  0);
  CU_ASSERT(out && strstr(out, "bap: warning") && strstr(out, "mips64el"));
  free(out);
  size_t len;
  uint8_t *f = tu_read_file(path, &len);
  walked wk;
  CU_ASSERT_EQUAL_FATAL(walk_file(f, len, &wk), 0);
  CU_ASSERT(le64(f + 16) == 8 && le64(f + 24) == 64);
  char *meta = protoc_decode("meta_frame", f + 56, wk.meta_len);
  CU_ASSERT(meta && strstr(meta, "args: \"arch=mips64el\""));
  free(meta);
  /* BAP's view: big-endian instruction words, registers and values */
  int seen_sd = 0;
  for (uint64_t k = 0; k < wk.n; k++) {
    char *one = protoc_decode("frame", f + wk.off[k] + 8, wk.len[k]);
    CU_ASSERT_PTR_NOT_NULL_FATAL(one);
    if (strstr(one, "rawbytes: \"\\377\\277\\000\\010\"")) { /* sd ra */
      seen_sd = 1;
      /* RA and the stored doubleword: 0x8877665544332211 big-endian */
      const char *be = "value: \"\\210wfUD3\\\"\\021\"";
      const char *r = strstr(one, "name: \"RA\"");
      CU_ASSERT(r && strstr(r, be));
      const char *m = strstr(one, "mem_operand");
      CU_ASSERT(m && strstr(m, be));
    }
    free(one);
  }
  CU_ASSERT_TRUE(seen_sd);
  walked_free(&wk);
  free(f);
  /* tracecorn reads it back as mips64el, equal to the recording */
  tc_verify_report rep;
  tc_verify_report_init(&rep);
  CU_ASSERT_EQUAL(tc_verify(ref, path, F, &rep, &err), 0);
  CU_ASSERT_EQUAL(rep.insns, 4);
  CU_ASSERT_EQUAL(rep.mismatches, 0);
  if (rep.mismatches)
    fprintf(stderr, "mips64el: %s\n", rep.first);
  tc_reader *r = F->open_reader(path, &err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(r);
  CU_ASSERT_PTR_EQUAL(F->reader_info(r)->arch, a);
  F->close_reader(r);
}

/* mips registers from the encoding (capstone 4 has no access information
 * for mips): hand-made words, then every instruction of recorded guests
 * against what they changed and against capstone's operand lists. */
typedef struct mips_case {
  uint32_t word;
  const char *read, *write; /* space-separated names */
} mips_case;

static void expect_names(const tc_arch *a, const uint16_t *l, unsigned n,
                         const char *names, uint32_t word) {
  char buf[128];
  snprintf(buf, sizeof buf, "%s", names);
  unsigned want = 0;
  for (char *save = NULL, *t = strtok_r(buf, " ", &save); t;
       t = strtok_r(NULL, " ", &save)) {
    want++;
    if (!has(l, n, reg(a, t)))
      fprintf(stderr, "%s %08x: %s missing\n", a->name, word, t);
    CU_ASSERT_TRUE(has(l, n, reg(a, t)));
  }
  if (want != n)
    fprintf(stderr, "%s %08x: %u registers, expected %s\n", a->name, word, n,
            names);
  CU_ASSERT_EQUAL(n, want);
}

static void mips_words(const tc_arch *a, const mips_case *cs, size_t n) {
  tc_error err = {{0}};
  tc_insn_access_cache *c = tc_insn_access_new(a, &err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(c);
  for (size_t i = 0; i < n; i++) {
    uint32_t w = cs[i].word;
    uint8_t b[4];
    for (int k = 0; k < 4; k++)
      b[k] = (uint8_t)(w >> (a->big_endian ? 24 - 8 * k : 8 * k));
    const tc_insn_access *x = tc_insn_access_get(c, 0x400000 + 4 * i, b, 4);
    if (!cs[i].read) {
      CU_ASSERT_FALSE(x->decoded);
      continue;
    }
    CU_ASSERT_TRUE(x->decoded);
    expect_names(a, x->read, x->nread, cs[i].read, w);
    expect_names(a, x->write, x->nwrite, cs[i].write, w);
    CU_ASSERT_EQUAL(x->trap, w == 0x0000000c);
  }
  tc_insn_access_free(c);
}

typedef struct mips_check {
  const tc_arch *arch;
  tc_insn_access_cache *acc;
  csh cs;
  int cs_ok;
  int16_t capmap[512]; /* capstone register -> tc index */
  uint64_t insns, undecoded, unlisted, disagree;
  char first[256], first_cs[256];
} mips_check;

/* A session sink: every instruction is decoded, every register it changed
 * (the PC aside) is among those written, and the general registers
 * capstone lists as operands are among those read or written. */
static int mips_sink(void *ctx, const tc_event *ev, tc_error *err) {
  (void)err;
  mips_check *m = ctx;
  if (ev->kind != TC_EV_INSN)
    return 0;
  const tc_arch *a = m->arch;
  const tc_insn_event *in = &ev->u.insn;
  m->insns++;
  const tc_insn_access *x =
      tc_insn_access_get(m->acc, in->pc, in->bytes, in->size);
  if (!x->decoded) {
    m->undecoded++;
    return 0;
  }
  /* A syscall's other effects depend on the call (v1 for pipe, UserLocal
   * for set_thread_area...): the writer adds every changed register. */
  for (unsigned k = 0; k < in->nregs && !x->trap; k++)
    if (in->regs[k] != a->pc_reg && !has(x->write, x->nwrite, in->regs[k])) {
      if (!m->unlisted++)
        snprintf(m->first, sizeof m->first,
                 "%08" PRIx64 ": %02x%02x%02x%02x changes %s, not listed",
                 in->pc, in->bytes[0], in->bytes[1], in->bytes[2], in->bytes[3],
                 a->regs[in->regs[k]].name);
    }
  cs_insn *ci = NULL;
  if (cs_disasm(m->cs, in->bytes, in->size, in->pc, 1, &ci) == 1) {
    /* capstone names rdhwr's hardware register $29 "sp" and cfc1/ctc1's
     * FPU control register $31 "ra": not general registers */
    int hw = strcmp(ci->mnemonic, "rdhwr") == 0 ||
             strcmp(ci->mnemonic, "cfc1") == 0 ||
             strcmp(ci->mnemonic, "ctc1") == 0;
    const cs_mips *d = &ci->detail->mips;
    for (int k = 0; k < d->op_count; k++) {
      unsigned r = d->operands[k].type == MIPS_OP_REG ? d->operands[k].reg
                   : d->operands[k].type == MIPS_OP_MEM
                       ? d->operands[k].mem.base
                       : 0;
      int idx = r < 512 ? m->capmap[r] : -1;
      if (idx < 0 || (hw && k == 1) || idx == reg(a, "zero"))
        continue;
      if (!has(x->read, x->nread, idx) && !has(x->write, x->nwrite, idx) &&
          !m->disagree++)
        snprintf(m->first_cs, sizeof m->first_cs,
                 "%08" PRIx64 ": %s %s: %s unlisted", in->pc, ci->mnemonic,
                 ci->op_str, a->regs[idx].name);
    }
    cs_free(ci, 1);
  }
  return 0;
}

static void mips_guest(const char *guest) {
  const char *prog = tu_guest(guest);
  if (!tu_have(prog)) {
    fprintf(stderr, "(no %s in this build)\n", guest);
    return;
  }
  tc_error err = {{0}};
  tc_options opt;
  tc_options_init(&opt);
  opt.quiet = 1;
  int devnull = open("/dev/null", O_WRONLY);
  opt.stdout_fd = opt.stderr_fd = devnull;
  tc_session *ses = tc_session_new(&opt, &err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(ses);
  const char *argv[2] = {prog, NULL};
  CU_ASSERT_EQUAL_FATAL(tc_session_load_elf(ses, prog, argv, &err), 0);
  mips_check m = {0};
  m.arch = tc_session_info(ses)->arch;
  CU_ASSERT_FATAL(is_mips(m.arch));
  m.acc = tc_insn_access_new(m.arch, &err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(m.acc);
  CU_ASSERT_EQUAL_FATAL(
      cs_open(CS_ARCH_MIPS,
              (cs_mode)(CS_MODE_MIPS32 |
                        (m.arch->big_endian ? CS_MODE_BIG_ENDIAN : 0)),
              &m.cs),
      CS_ERR_OK);
  cs_option(m.cs, CS_OPT_DETAIL, CS_OPT_ON);
  for (unsigned r = 0; r < 512; r++) {
    const char *nm = r ? cs_reg_name(m.cs, r) : NULL;
    int idx = -1;
    if (nm && nm[0] >= '0' && nm[0] <= '9' && atoi(nm) < 32)
      idx = atoi(nm); /* $0..$31 are the first 32 registers */
    else if (nm && strcmp(nm, "s8") != 0)
      idx = tc_arch_reg_index(m.arch, nm);
    else if (nm)
      idx = reg(m.arch, "fp");
    m.capmap[r] =
        (int16_t)(idx >= 0 && m.arch->regs[idx].flags & TC_REG_GPR ? idx : -1);
  }
  CU_ASSERT_EQUAL_FATAL(tc_session_add_sink(ses, mips_sink, &m, &err), 0);
  tc_run_result res;
  tc_run_result_init(&res);
  CU_ASSERT_EQUAL(tc_session_run(ses, &res, &err), 0);
  tc_session_free(ses);
  close(devnull);
  cs_close(&m.cs);
  tc_insn_access_free(m.acc);
  CU_ASSERT(m.insns > 100);
  CU_ASSERT_EQUAL(m.undecoded, 0);
  CU_ASSERT_EQUAL(m.unlisted, 0);
  CU_ASSERT_EQUAL(m.disagree, 0);
  if (m.undecoded || m.unlisted || m.disagree)
    fprintf(stderr,
            "%s: %" PRIu64 " insns, %" PRIu64 " undecoded, %" PRIu64
            " unlisted writes (%s), %" PRIu64 " capstone disagreements (%s)\n",
            guest, m.insns, m.undecoded, m.unlisted, m.first, m.disagree,
            m.first_cs);
}

static void test_mips_access(void) {
  static const mips_case words[] = {
      {0x00851021, "a0 a1", "v0"},             /* addu v0, a0, a1 */
      {0x00801021, "a0 zero", "v0"},           /* move v0, a0 */
      {0x00000000, "", ""},                    /* nop */
      {0x000000c0, "", ""},                    /* ehb */
      {0x00041080, "a0", "v0"},                /* sll v0, a0, 2 */
      {0x0320f809, "t9", "ra"},                /* jalr t9 */
      {0x03e00008, "ra", ""},                  /* jr ra */
      {0x00850018, "a0 a1", "hi lo"},          /* mult a0, a1 */
      {0x0085001b, "a0 a1", "hi lo"},          /* divu a0, a1 */
      {0x00004010, "hi", "t0"},                /* mfhi t0 */
      {0x00004012, "lo", "t0"},                /* mflo t0 */
      {0x00800011, "a0", "hi"},                /* mthi a0 */
      {0x70850000, "a0 a1 hi lo", "hi lo"},    /* madd a0, a1 */
      {0x70851002, "a0 a1", "v0"},             /* mul v0, a0, a1 */
      {0x0085100a, "a0 a1 v0", "v0"},          /* movz v0, a0, a1 */
      {0x0c000400, "", "ra"},                  /* jal */
      {0x04110003, "zero", "ra"},              /* bal */
      {0x10850003, "a0 a1", ""},               /* beq a0, a1 */
      {0x18800003, "a0", ""},                  /* blez a0 */
      {0x8fbf001c, "sp", "ra"},                /* lw ra, 28(sp) */
      {0x88a20000, "a1 v0", "v0"},             /* lwl v0, 0(a1) */
      {0xafbf001c, "sp ra", ""},               /* sw ra, 28(sp) */
      {0xe0a20000, "a1 v0", "v0"},             /* sc v0, 0(a1) */
      {0xc0a20000, "a1", "v0"},                /* ll v0, 0(a1) */
      {0x3c1c0004, "", "gp"},                  /* lui gp, 4 */
      {0x24420010, "v0", "v0"},                /* addiu v0, v0, 16 */
      {0x7c03e83b, "userlocal", "v1"},         /* rdhwr v1, $29 */
      {0x7c851804, "a0 a1", "a1"},             /* ins a1, a0, 0, 4 */
      {0x7c851800, "a0", "a1"},                /* ext a1, a0, 0, 4 */
      {0x7c041420, "a0", "v0"},                /* seb v0, a0 */
      {0x44020000, "", "v0"},                  /* mfc1 v0, f0 */
      {0x44820000, "v0", ""},                  /* mtc1 v0, f0 */
      {0xc4a00000, "a1", ""},                  /* lwc1 f0, 0(a1) */
      {0x00850034, "a0 a1", ""},               /* teq a0, a1 */
      {0x70821020, "a0", "v0"},                /* clz v0, a0 */
      {0x00001025, "zero", "v0"},              /* move v0, zero (or) */
      {0x00000025, "zero", ""},                /* or zero, zero, zero */
      {0x0000000c, "v0 a0 a1 a2 a3", "v0 a3"}, /* syscall (o32) */
      {0x0085102d, NULL, NULL},                /* daddu: MIPS64 only */
      {0xfc000000, NULL, NULL},                /* sd: MIPS64 only */
      {0x7c000000 | 0x3f, NULL, NULL},         /* SPECIAL3 funct 63 */
  };
  mips_words(tc_arch_by_id(TC_ARCH_MIPS), words, sizeof words / sizeof *words);
  mips_words(tc_arch_by_id(TC_ARCH_MIPSEL), words,
             sizeof words / sizeof *words);
  static const mips_case words64[] = {
      {0x0085102d, "a0 a1", "v0"},                   /* daddu */
      {0xdfbf0008, "sp", "ra"},                      /* ld ra, 8(sp) */
      {0xffbf0008, "sp ra", ""},                     /* sd ra, 8(sp) */
      {0x0004103c, "a0", "v0"},                      /* dsll32 v0, a0, 0 */
      {0x0000000c, "v0 a0 a1 a2 a3 t0 t1", "v0 a3"}, /* syscall (n64) */
  };
  mips_words(tc_arch_by_id(TC_ARCH_MIPS64EL), words64,
             sizeof words64 / sizeof *words64);
  mips_guest("hello-mips");
  mips_guest("loop-mips");
  mips_guest("glibc-mips");
  mips_guest("glibc-mipsel");
}

/* ------------------------------- 9. the std_frame encoder vs protobuf-c */

/* One operand as the writer used to build it for protobuf-c. */
typedef struct ref_operand {
  char name[BAP_NAME_MAX]; /* "" for memory */
  uint64_t addr;
  int32_t bit_length;
  int written;
  uint8_t value[300];
  uint32_t len;
} ref_operand;

static uint64_t g_rng = 0x9E3779B97F4A7C15ull;
static uint64_t rnd(void) { /* xorshift64: deterministic runs */
  g_rng ^= g_rng << 13;
  g_rng ^= g_rng >> 7;
  g_rng ^= g_rng << 17;
  return g_rng;
}

/* A number of 0 to 64 bits, so that every varint length occurs. */
static uint64_t rnd_bits(void) {
  unsigned bits = (unsigned)(rnd() % 65);
  return bits == 64 ? rnd() : rnd() & ((1ull << bits) - 1);
}

static void rnd_operand(ref_operand *o) {
  memset(o, 0, sizeof *o);
  if (rnd() % 3) {
    size_t n = 1 + (size_t)(rnd() % (BAP_NAME_MAX - 1));
    for (size_t i = 0; i < n; i++)
      o->name[i] = (char)('A' + rnd() % 26);
  } else
    o->addr = rnd_bits();
  o->written = (int)(rnd() & 1);
  unsigned r = (unsigned)(rnd() % 8);
  o->len = r < 6 ? 1u << (r % 5) : (uint32_t)(rnd() % sizeof o->value);
  o->bit_length = rnd() % 16 ? (int32_t)(o->len * 8) : (int32_t)rnd_bits();
  for (uint32_t i = 0; i < o->len; i++)
    o->value[i] = (uint8_t)rnd();
}

/* protobuf-c's packing of the frame, built as writers/bap/bap.c built it
 * before it had its own encoder. */
static size_t ref_pack(const bap_std_frame *f, const ref_operand *pre,
                       const ref_operand *post, uint8_t *out) {
  size_t n = f->npre + f->npost;
  Tcbap__OperandInfo *ops = calloc(n + 1, sizeof *ops);
  Tcbap__OperandInfo **ptrs = calloc(n + 1, sizeof *ptrs);
  Tcbap__OperandInfoSpecific *spec = calloc(n + 1, sizeof *spec);
  Tcbap__RegOperand *reg = calloc(n + 1, sizeof *reg);
  Tcbap__MemOperand *mem = calloc(n + 1, sizeof *mem);
  Tcbap__OperandUsage use[2] = {TCBAP__OPERAND_USAGE__INIT,
                                TCBAP__OPERAND_USAGE__INIT};
  use[0].read = 1;
  use[1].written = 1;
  Tcbap__TaintInfo no_taint = TCBAP__TAINT_INFO__INIT;
  no_taint.has_no_taint = 1;
  no_taint.no_taint = 1;
  CU_ASSERT_FATAL(ops && ptrs && spec && reg && mem);
  for (size_t i = 0; i < n; i++) {
    const ref_operand *o = i < f->npre ? &pre[i] : &post[i - f->npre];
    Tcbap__OperandInfoSpecific sp = TCBAP__OPERAND_INFO_SPECIFIC__INIT;
    spec[i] = sp;
    if (o->name[0]) {
      Tcbap__RegOperand ro = TCBAP__REG_OPERAND__INIT;
      ro.name = (char *)o->name;
      reg[i] = ro;
      spec[i].reg_operand = &reg[i];
    } else {
      Tcbap__MemOperand mo = TCBAP__MEM_OPERAND__INIT;
      mo.address = o->addr;
      mem[i] = mo;
      spec[i].mem_operand = &mem[i];
    }
    Tcbap__OperandInfo init = TCBAP__OPERAND_INFO__INIT;
    ops[i] = init;
    ops[i].operand_info_specific = &spec[i];
    ops[i].bit_length = o->bit_length;
    ops[i].operand_usage = &use[o->written];
    ops[i].taint_info = &no_taint;
    ops[i].value.len = o->len;
    ops[i].value.data = (uint8_t *)o->value;
    ptrs[i] = &ops[i];
  }
  Tcbap__OperandValueList pl = TCBAP__OPERAND_VALUE_LIST__INIT;
  pl.n_elem = f->npre;
  pl.elem = ptrs;
  Tcbap__OperandValueList ql = TCBAP__OPERAND_VALUE_LIST__INIT;
  ql.n_elem = f->npost;
  ql.elem = ptrs + f->npre;
  Tcbap__StdFrame sf = TCBAP__STD_FRAME__INIT;
  sf.address = f->address;
  sf.thread_id = f->thread_id;
  sf.rawbytes.len = f->nraw;
  sf.rawbytes.data = (uint8_t *)f->rawbytes;
  sf.operand_pre_list = &pl;
  sf.operand_post_list = &ql;
  sf.mode = (char *)f->mode;
  Tcbap__Frame fr = TCBAP__FRAME__INIT;
  fr.std_frame = &sf;
  size_t len = protobuf_c_message_pack(&fr.base, out);
  CU_ASSERT_EQUAL(len, protobuf_c_message_get_packed_size(&fr.base));
  free(ops);
  free(ptrs);
  free(spec);
  free(reg);
  free(mem);
  return len;
}

/* Random frames (every varint length of addresses, thread ids, bit
 * lengths and list/frame lengths up to 3 bytes, empty lists, with and
 * without mode) packed by bap_pack and by protobuf-c: the same bytes. */
static void test_pack_vs_protobuf_c(void) {
  enum { MAXOPS = 160 };
  ref_operand *pre = calloc(MAXOPS, sizeof *pre);
  ref_operand *post = calloc(MAXOPS, sizeof *post);
  bap_operand *bpre = calloc(MAXOPS, sizeof *bpre);
  bap_operand *bpost = calloc(MAXOPS, sizeof *bpost);
  uint8_t(*heads)[BAP_HEAD_MAX] = calloc(2 * MAXOPS, BAP_HEAD_MAX);
  size_t cap = 2 * MAXOPS * (BAP_HEAD_MAX + 300) + 256;
  uint8_t *mine = malloc(cap), *theirs = malloc(cap);
  CU_ASSERT_FATAL(pre && post && bpre && bpost && heads && mine && theirs);
  static const char *const modes[] = {NULL, "arm:a32", "arm:t32", ""};
  size_t same = 0, big = 0, rounds = 3000;
  for (size_t round = 0; round < rounds; round++) {
    uint8_t raw[16];
    for (size_t i = 0; i < sizeof raw; i++)
      raw[i] = (uint8_t)rnd();
    /* mostly small frames, some long enough for 3-byte lengths */
    size_t most = round % 10 == 0 ? MAXOPS : 8;
    bap_std_frame f = {.address = rnd_bits(),
                       .thread_id = rnd_bits(),
                       .rawbytes = raw,
                       .nraw = (size_t)(rnd() % 17),
                       .pre = bpre,
                       .post = bpost,
                       .npre = (size_t)(rnd() % (most + 1)),
                       .npost = (size_t)(rnd() % (most + 1)),
                       .mode = modes[rnd() % 4]};
    for (size_t i = 0; i < f.npre + f.npost; i++) {
      int in_pre = i < f.npre;
      ref_operand *o = in_pre ? &pre[i] : &post[i - f.npre];
      bap_operand *b = in_pre ? &bpre[i] : &bpost[i - f.npre];
      rnd_operand(o);
      b->head = heads[i];
      b->head_len = (uint32_t)bap_operand_head(
          heads[i], o->name[0] ? o->name : NULL, o->addr, o->bit_length,
          o->written, o->len);
      CU_ASSERT(b->head_len <= BAP_HEAD_MAX);
      b->value = o->value;
      b->value_len = o->len;
    }
    size_t size = bap_std_frame_size(&f);
    CU_ASSERT_FATAL(size + BAP_PACK_SLACK <= cap);
    uint8_t *end = bap_pack_std_frame(&f, mine);
    CU_ASSERT_EQUAL((size_t)(end - mine), size);
    size_t ref = ref_pack(&f, pre, post, theirs);
    if (ref == size && memcmp(mine, theirs, size) == 0)
      same++;
    else if (same == round) /* the first difference only */
      fprintf(stderr, "round %zu: %zu vs protobuf-c's %zu bytes\n", round, size,
              ref);
    big += size > 16384;
    /* and BAP's readers' rules hold */
    tc_error err = {{0}};
    CU_ASSERT_EQUAL(bap_check_message("frame", mine, size, &err), 0);
  }
  CU_ASSERT_EQUAL(same, rounds);
  CU_ASSERT(big > 0);
  free(pre);
  free(post);
  free(bpre);
  free(bpost);
  free(heads);
  free(mine);
  free(theirs);
}

/* Every frame the writer wrote for real guests is what protobuf-c packs
 * of it once unpacked: the encoder's bytes are canonical for their
 * fields on every arch (x86 flags, arm modes, mips byte swaps). */
static void test_pack_recorded(void) {
  static const char *const guests[][2] = {
      {"hello64", "x y"},    {"insns32", NULL},         {"segv64", NULL},
      {"hello-armhf", NULL}, {"interwork-armhf", NULL}, {"hello-arm64", NULL},
      {"hello-mips", NULL},  {"hello-mipsel", NULL}};
  for (size_t g = 0; g < sizeof guests / sizeof guests[0]; g++) {
    if (!tu_have(tu_guest(guests[g][0]))) {
      fprintf(stderr, "(no %s in this build)\n", guests[g][0]);
      continue;
    }
    const char *path = tu_tmp("repack.frames");
    stream s = {0};
    if (record(guests[g][0], guests[g][1], path, &s, NULL) < 0) {
      CU_FAIL("recording failed");
      continue;
    }
    stream_free(&s);
    tc_error err = {{0}};
    tc_reader *r = F->open_reader(path, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    uint64_t n = bap_reader_frame_count(r), std = 0, same = 0;
    uint8_t *buf = NULL;
    size_t cap = 0;
    for (uint64_t k = 0; k < n; k++) {
      const uint8_t *d;
      size_t dl;
      CU_ASSERT_EQUAL_FATAL(bap_reader_frame_at(r, k, &d, &dl, &err), 0);
      Tcbap__Frame *fr = tcbap__frame__unpack(NULL, dl, d);
      CU_ASSERT_PTR_NOT_NULL_FATAL(fr);
      if (fr->std_frame) {
        std++;
        size_t len = protobuf_c_message_get_packed_size(&fr->base);
        if (len > cap) {
          cap = 2 * len;
          buf = realloc(buf, cap);
          CU_ASSERT_PTR_NOT_NULL_FATAL(buf);
        }
        same += protobuf_c_message_pack(&fr->base, buf) == dl && len == dl &&
                memcmp(buf, d, dl) == 0;
      }
      tcbap__frame__free_unpacked(fr, NULL);
    }
    CU_ASSERT(std > 10);
    CU_ASSERT_EQUAL(same, std);
    if (same != std)
      fprintf(stderr, "%s: %" PRIu64 " of %" PRIu64 " std frames differ\n",
              guests[g][0], std - same, std);
    free(buf);
    F->close_reader(r);
  }
}

int main(void) {
  static const tu_case cases[] = {
      {"format identity and arch numbers", test_identity},
      {"exact bytes: the worked example, header, TOC", test_exact_bytes},
      {"TOC rule and seeking, m = 64, 4, 1", test_toc_and_seek},
      {"readers' rules on crafted frames", test_crafted_frames},
      {"a foreign (qemu tracewrap style) trace", test_foreign_trace},
      {"truncated and corrupted files", test_truncation_and_flips},
      {"protoc decodes hello64 and compares", test_protoc_hello64},
      {"protoc decodes insns32 and compares", test_protoc_insns32},
      {"protoc decodes segv64 and compares", test_protoc_segv64},
      {"protoc decodes arm, arm64, mips, mipsel", test_protoc_arm_mips},
      {"round trip hello64", test_roundtrip_hello64},
      {"round trip insns64", test_roundtrip_insns64},
      {"round trip hello32", test_roundtrip_hello32},
      {"round trip segv32", test_roundtrip_segv32},
      {"round trip div64", test_roundtrip_div64},
      {"key frame where the state jumps", test_keyframe_on_jump},
      {"tracecorn verify -f bap, x86-64 guests", test_verify_x86_64},
      {"tracecorn verify -f bap, i386 guests", test_verify_i386},
      {"tracecorn verify -f bap, arm guests", test_verify_arm},
      {"tracecorn verify -f bap, mips guests", test_verify_mips},
      {"determinism, convert tct/bap -> bap, dump",
       test_determinism_and_convert},
      {"writer options and failures", test_writer_options_and_failures},
      {"MD5 vectors", test_md5},
      {"capstone register access", test_insn_access},
      {"mips registers read and written", test_mips_access},
      {"mips64el: a converted stream", test_mips64el_stream},
      {"std_frame encoder = protobuf-c, random frames",
       test_pack_vs_protobuf_c},
      {"std_frame encoder = protobuf-c, recorded guests", test_pack_recorded},
      {NULL, NULL}};
  return tu_run_suite("bap", cases);
}
