/* SPDX-License-Identifier: GPL-2.0-or-later */
/* UCIR (usercorn trace): snappy framing and CRC-32C, hand-derived op bytes
 * in both layouts, the real usercorn sample files (op counts from their
 * README), round trips of real recordings through `verify`, and corrupt
 * or truncated input refused cleanly. */
#include <snappy-c.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "evlog.h"
#include "testutil.h"
#include "tracecorn/tracecorn.h"
#include "writers/io/snappy_frame.h"
#include "writers/ucir/ucir.h"

extern const tc_format tc_format_ucir;
static const tc_format *F = &tc_format_ucir;

/* ------------------------------------------------------------- helpers */

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static uint64_t rnd(void) { return tu_xorshift(&rng_state); }

static uint64_t le(const uint8_t *p, unsigned n) {
  uint64_t v = 0;
  for (unsigned i = 0; i < n; i++)
    v |= (uint64_t)p[i] << (8 * i);
  return v;
}

/* A byte-vector builder: fields written with explicit widths. */
typedef struct vec {
  uint8_t b[8192];
  size_t n;
} vec;

static void v8(vec *v, uint64_t x) { v->b[v->n++] = (uint8_t)x; }
static void vle(vec *v, uint64_t x, unsigned w) {
  for (unsigned i = 0; i < w; i++)
    v8(v, x >> (8 * i));
}
static void vbytes(vec *v, const void *p, size_t n) {
  memcpy(v->b + v->n, p, n);
  v->n += n;
}
static void vstr(vec *v, const char *s) { vbytes(v, s, strlen(s)); }

/* The decoded op stream of a UCIR file (either layout). */
static uint8_t *body_of(const char *path, size_t *len, int *usercorn) {
  size_t n;
  uint8_t *f = tu_read_file(path, &n);
  CU_ASSERT_FATAL(f != NULL);
  CU_ASSERT_FATAL(n >= 74);
  *usercorn = n >= 84 && memcmp(f + 74, tc_snappy_stream_id, 10) == 0;
  uint8_t *out = malloc(n * 32 + 1);
  size_t o = 0;
  if (!*usercorn) {
    memcpy(out, f + 74, n - 74);
    o = n - 74;
  } else {
    for (size_t i = 74; i < n;) {
      CU_ASSERT_FATAL(n - i >= 4);
      size_t clen = (size_t)le(f + i + 1, 3);
      CU_ASSERT_FATAL(n - i - 4 >= clen);
      size_t got = 0;
      const char *why = NULL;
      uint8_t *dec = malloc(65536);
      int rc = tc_snappy_unchunk(f[i], f + i + 4, clen, dec, &got, &why);
      CU_ASSERT_FATAL(rc >= 0);
      if (rc == 1) {
        memcpy(out + o, dec, got);
        o += got;
      }
      free(dec);
      i += 4 + clen;
    }
  }
  free(f);
  *len = o;
  return out;
}

static const tc_arch *x64(void) { return tc_arch_by_id(TC_ARCH_X86_64); }

static int reg(const tc_arch *a, const char *name) {
  int r = tc_arch_reg_index(a, name);
  CU_ASSERT_FATAL(r >= 0);
  return r;
}

/* Writes events through the UCIR writer with options. */
static void write_events(const char *path, const tc_arch *a,
                         const char *const *opts, const uint8_t *init,
                         const tc_event *ev, size_t n) {
  tc_trace_info info = {0};
  info.arch = a;
  info.pid = 7;
  info.initial_state = init;
  info.writer_options = opts;
  tc_error err = {{0}};
  tc_writer *w = F->open_writer(path, &info, &err);
  CU_ASSERT_FATAL(w != NULL);
  for (size_t i = 0; i < n; i++)
    CU_ASSERT_EQUAL(F->write_event(w, &ev[i], &err), 0);
  CU_ASSERT_EQUAL(F->close_writer(w, &err), 0);
}

/* ------------------------------------------------- CRC and snappy framing */

static void test_crc32c(void) {
  /* The CRC-32C check value (RFC 3720 B.4, iSCSI) and the framing mask. */
  CU_ASSERT_EQUAL(tc_crc32c("123456789", 9), 0xe3069283u);
  uint8_t zeros[32] = {0};
  CU_ASSERT_EQUAL(tc_crc32c(zeros, 32), 0x8a9136aau);
  CU_ASSERT_EQUAL(tc_crc32c("", 0), 0u);
  /* mask(c) = ((c >> 15) | (c << 17)) + 0xa282ead8 */
  CU_ASSERT_EQUAL(tc_snappy_mask(0), 0xa282ead8u);
  CU_ASSERT_EQUAL(
      tc_snappy_mask(0xe3069283u),
      (uint32_t)(((0xe3069283u >> 15) | (0xe3069283u << 17)) + 0xa282ead8u));
  /* slicing-by-8 vs every length and alignment of a bitwise CRC */
  uint8_t buf[100];
  for (int i = 0; i < 100; i++)
    buf[i] = (uint8_t)rnd();
  for (size_t len = 0; len < 40; len++) {
    uint32_t c = 0xffffffffu;
    for (size_t i = 0; i < len; i++) {
      c ^= buf[3 + i];
      for (int k = 0; k < 8; k++)
        c = (c >> 1) ^ (0x82f63b78u & (0u - (c & 1)));
    }
    CU_ASSERT_EQUAL(tc_crc32c(buf + 3, len), ~c);
  }
}

static void test_snappy_chunks(void) {
  /* compressible data: a type-0 chunk the library itself decodes */
  uint8_t *data = malloc(65536), *out = malloc(tc_snappy_chunk_bound(65536));
  uint8_t *dec = malloc(65536);
  for (size_t i = 0; i < 65536; i++)
    data[i] = (uint8_t)(i % 251 < 200 ? 'a' : i);
  size_t n = tc_snappy_chunk(out, data, 65536, 1);
  CU_ASSERT_EQUAL(out[0], 0x00);
  CU_ASSERT_EQUAL(le(out + 1, 3), n - 4);
  CU_ASSERT(n < 65536 / 2);
  size_t got = 65536;
  CU_ASSERT_EQUAL(
      snappy_uncompress((const char *)out + 8, n - 8, (char *)dec, &got),
      SNAPPY_OK);
  CU_ASSERT_EQUAL(got, 65536);
  CU_ASSERT_EQUAL(memcmp(dec, data, 65536), 0);
  CU_ASSERT_EQUAL(le(out + 4, 4), tc_snappy_mask(tc_crc32c(data, 65536)));
  const char *why = NULL;
  got = 0;
  CU_ASSERT_EQUAL(tc_snappy_unchunk(out[0], out + 4, n - 4, dec, &got, &why),
                  1);
  CU_ASSERT_EQUAL(got, 65536);
  CU_ASSERT_EQUAL(memcmp(dec, data, 65536), 0);
  /* a wrong CRC is caught */
  out[5] ^= 1;
  CU_ASSERT_EQUAL(tc_snappy_unchunk(out[0], out + 4, n - 4, dec, &got, &why),
                  -1);
  CU_ASSERT_STRING_EQUAL(why, "checksum mismatch");
  out[5] ^= 1;

  /* random data does not shrink by 1/8: a type-1 chunk, stored as is */
  for (size_t i = 0; i < 1000; i++)
    data[i] = (uint8_t)rnd();
  n = tc_snappy_chunk(out, data, 1000, 1);
  CU_ASSERT_EQUAL(n, 1008);
  CU_ASSERT_EQUAL(out[0], 0x01);
  CU_ASSERT_EQUAL(le(out + 1, 3), 1004);
  CU_ASSERT_EQUAL(memcmp(out + 8, data, 1000), 0);
  CU_ASSERT_EQUAL(tc_snappy_unchunk(1, out + 4, 1004, dec, &got, &why), 1);
  CU_ASSERT_EQUAL(got, 1000);
  /* uncompressed on request */
  n = tc_snappy_chunk(out, (const uint8_t *)"aaaaaaaaaaaaaaaaaaaa", 20, 0);
  CU_ASSERT_EQUAL(out[0], 0x01);
  CU_ASSERT_EQUAL(n, 28);

  /* stream identifier, skippable, reserved and oversized chunks */
  CU_ASSERT_EQUAL(
      tc_snappy_unchunk(0xff, (const uint8_t *)"sNaPpY", 6, dec, &got, &why),
      0);
  CU_ASSERT_EQUAL(
      tc_snappy_unchunk(0xff, (const uint8_t *)"snappy", 6, dec, &got, &why),
      -1);
  CU_ASSERT_EQUAL(tc_snappy_unchunk(0xfe, data, 10, dec, &got, &why), 0);
  CU_ASSERT_EQUAL(tc_snappy_unchunk(0x80, data, 10, dec, &got, &why), 0);
  CU_ASSERT_EQUAL(tc_snappy_unchunk(0x02, data, 10, dec, &got, &why), -1);
  CU_ASSERT_EQUAL(tc_snappy_unchunk(0x7f, data, 10, dec, &got, &why), -1);
  CU_ASSERT_EQUAL(tc_snappy_unchunk(0x01, data, 3, dec, &got, &why), -1);
  CU_ASSERT_EQUAL(tc_snappy_unchunk(0x01, data, SNAPPY_FRAME_MAX_CHUNK + 1, dec,
                                    &got, &why),
                  -1);
  /* an uncompressed chunk of 65537 data bytes */
  uint8_t *big = calloc(1, 65541);
  CU_ASSERT_EQUAL(tc_snappy_unchunk(0x01, big, 65541, dec, &got, &why), -1);
  free(big);
  free(data);
  free(out);
  free(dec);
}

/* ------------------------------------------------ hand-derived op vectors */

static uint8_t code[4096];

/* The small program of the byte-vector tests (x86-64): one mapping, two
 * instructions (mov rax, 0x3c / syscall), an mmap/mprotect/munmap inside
 * exit(5)'s syscall, EXIT. */
static size_t sample_events(tc_event *ev, uint8_t *st0, uint8_t *st1,
                            uint8_t *st2, const uint8_t **init) {
  const tc_arch *a = x64();
  static const uint8_t prog[9] = {0x48, 0xc7, 0xc0, 0x3c, 0x00,
                                  0x00, 0x00, 0x0f, 0x05};
  memset(code, 0, sizeof code);
  memcpy(code, prog, 9);
  code[0x100] = 0x11; /* not yet written: "before" of the write below */
  memset(st0, 0, a->state_size);
  tc_state_set(a, st0, reg(a, "rsp"), 0x7ffff000);
  tc_state_set(a, st0, a->pc_reg, 0x400000);
  memcpy(st1, st0, a->state_size);
  tc_state_set(a, st1, reg(a, "rax"), 0x3c);
  tc_state_set(a, st1, a->pc_reg, 0x400007);
  memcpy(st2, st1, a->state_size);
  tc_state_set(a, st2, a->pc_reg, 0x400009);
  *init = st0;
  static uint16_t regs1[2], regs2[1];
  regs1[0] = (uint16_t)reg(a, "rax");
  regs1[1] = (uint16_t)a->pc_reg;
  regs2[0] = (uint16_t)a->pc_reg;
  static uint8_t rd[2] = {0x48, 0xc7}, wb[2] = {0x11, 0x00},
                 wa[2] = {0xaa, 0xbb}, kw[3] = {1, 2, 3}, kb[3] = {0};
  static tc_mem_access acc[2], kacc[1];
  acc[0] = (tc_mem_access){0x400000, 2, TC_MEM_READ, rd, rd};
  acc[1] = (tc_mem_access){0x400100, 2, TC_MEM_WRITE, wb, wa};
  kacc[0] = (tc_mem_access){0x10000, 3, TC_MEM_WRITE, kb, kw};
  size_t n = 0;
  ev[n].kind = TC_EV_MAP;
  ev[n++].u.map = (tc_map_event){0x400000, 0x1000, 5, "/bin/true", 0, code};
  ev[n].kind = TC_EV_KEYFRAME;
  ev[n++].u.key = (tc_keyframe_event){0, 7, st0};
  ev[n].kind = TC_EV_INSN;
  ev[n++].u.insn =
      (tc_insn_event){0, 0x400000, 7, 7, {0}, 2, regs1, st0, st1, 2, acc};
  memcpy(ev[n - 1].u.insn.bytes, prog, 7);
  ev[n].kind = TC_EV_INSN;
  ev[n++].u.insn = (tc_insn_event){1,     0x400007, 7,   2, {0x0f, 0x05}, 1,
                                   regs2, st1,      st2, 0, NULL};
  ev[n].kind = TC_EV_MAP;
  ev[n++].u.map = (tc_map_event){0x10000, 0x2000, 3, "", 0, NULL};
  ev[n].kind = TC_EV_PROTECT;
  ev[n++].u.map = (tc_map_event){0x10000, 0x1000, 1, NULL, 0, NULL};
  ev[n].kind = TC_EV_UNMAP;
  ev[n++].u.map = (tc_map_event){0x11000, 0x1000, 0, NULL, 0, NULL};
  ev[n].kind = TC_EV_SYSCALL;
  ev[n].u.sys =
      (tc_syscall_event){1, 7, 60, "exit", {5}, 0, 0, 1, kacc, 0, 0, 0};
  n++;
  ev[n].kind = TC_EV_EXIT;
  ev[n++].u.exit = (tc_exit_event){TC_EXIT_EXITED, 5, 0, 2, NULL};
  return n;
}

/* The op stream the sample must give, field by field from ucir.md s.4. */
static void expected_ops(vec *v, int usercorn) {
  unsigned SZ = usercorn ? 8 : 4; /* MAP/UNMAP/PROT sizes */
  /* KEYFRAME pid 7: REG rsp, MEM_MAP, MEM_WRITE of the 9 non-zero bytes
   * plus the 0x11 at 0x100 (trimmed at both ends, address kept right) */
  v8(v, 2), vle(v, 7, 8), vle(v, 3, 4);
  v8(v, 5), vle(v, 44, 2), vle(v, 0x7ffff000, 8);
  v8(v, 9), vle(v, 0x400000, 8), vle(v, 0x1000, SZ), v8(v, 5), vle(v, 0, 8),
      vle(v, 0x1000, 8), vle(v, 3, 2), vle(v, 9, 2), vstr(v, "exe"),
      vstr(v, "/bin/true");
  v8(v, 8), vle(v, 0x400000, 8), vle(v, 0x101, 4), vbytes(v, code, 0x101);
  /* FRAME pid 7, 7 ops: JMP (block of 9 bytes), the first instruction's
   * read, write and rax before its STEP, the syscall's STEP, SYSCALL */
  v8(v, 1), vle(v, 7, 8), vle(v, 7, 4);
  v8(v, 3), vle(v, 0x400000, 8), vle(v, 9, 4);
  v8(v, 7), vle(v, 0x400000, 8), vle(v, 2, 4);
  v8(v, 8), vle(v, 0x400100, 8), vle(v, 2, 4), v8(v, 0xaa), v8(v, 0xbb);
  v8(v, 5), vle(v, 35, 2), vle(v, 0x3c, 8);
  v8(v, 4), v8(v, 7);
  v8(v, 4), v8(v, 2);
  /* SYSCALL exit: num, ret, argc 1, 5 ops, args; then MAP PROT UNMAP
   * WRITE EXIT inside it */
  v8(v, 12), vle(v, 60, usercorn ? 4 : 2), vle(v, 0, 8), v8(v, 1), vle(v, 5, 2),
      vle(v, 5, 8);
  v8(v, 9), vle(v, 0x10000, 8), vle(v, 0x2000, SZ), v8(v, 3), vle(v, 0, 8),
      vle(v, 0, 8), vle(v, 4, 2), vle(v, 0, 2), vstr(v, "mmap");
  v8(v, 11), vle(v, 0x10000, 8), vle(v, 0x1000, SZ), v8(v, 1);
  v8(v, 10), vle(v, 0x11000, 8), vle(v, 0x1000, SZ);
  v8(v, 8), vle(v, 0x10000, 8), vle(v, 3, 4), v8(v, 1), v8(v, 2), v8(v, 3);
  v8(v, 13);
}

static void check_layout(const char *layout, int usercorn) {
  const tc_arch *a = x64();
  uint8_t *st0 = malloc(a->state_size), *st1 = malloc(a->state_size),
          *st2 = malloc(a->state_size);
  const uint8_t *init;
  tc_event ev[16];
  memset(ev, 0, sizeof ev);
  size_t n = sample_events(ev, st0, st1, st2, &init);
  char o1[64], o2[] = "ucir.keyframe-every=0";
  snprintf(o1, sizeof o1, "ucir.layout=%s", layout);
  const char *opts[] = {o1, o2, NULL};
  const char *path = tu_tmp(usercorn ? "vec-usercorn.ucir" : "vec-spec.ucir");
  write_events(path, a, opts, init, ev, n);

  size_t flen;
  uint8_t *f = tu_read_file(path, &flen);
  CU_ASSERT_FATAL(f && flen >= 74);
  /* header: magic, version (BE 1 / LE 0), arch, os, corder, dorder */
  vec h = {.n = 0};
  vstr(&h, "UCIR");
  if (usercorn)
    v8(&h, 0), v8(&h, 0), v8(&h, 0), v8(&h, 1);
  else
    vle(&h, 0, 4);
  char name[32] = "x86_64", os[32] = "linux";
  vbytes(&h, name, 32), vbytes(&h, os, 32), v8(&h, 0), v8(&h, 0);
  CU_ASSERT_EQUAL(memcmp(f, h.b, 74), 0);
  if (usercorn) {
    CU_ASSERT_EQUAL(memcmp(f + 74, "\xff\x06\x00\x00sNaPpY", 10), 0);
    CU_ASSERT(f[84] == 0x00 || f[84] == 0x01); /* then a data chunk */
  }
  free(f);

  size_t blen;
  int uc;
  uint8_t *body = body_of(path, &blen, &uc);
  CU_ASSERT_EQUAL(uc, usercorn);
  vec *want = calloc(1, sizeof *want);
  expected_ops(want, usercorn);
  CU_ASSERT_EQUAL(blen, want->n);
  for (size_t i = 0; i < blen && i < want->n; i++)
    if (body[i] != want->b[i]) {
      fprintf(stderr, "%s layout: op stream byte %zu is %02x, want %02x\n",
              layout, i, body[i], want->b[i]);
      CU_FAIL("op stream differs");
      break;
    }
  free(body);
  free(want);

  /* ...and reads back as the same events */
  evlog l = {0};
  tc_error err = {{0}};
  CU_ASSERT_FATAL(evlog_read(&l, path, &err) == 0);
  CU_ASSERT_EQUAL_FATAL(l.n, 9);
  CU_ASSERT_EQUAL(l.ev[0].kind, TC_EV_MAP);
  CU_ASSERT_EQUAL(l.ev[0].u.map.addr, 0x400000);
  CU_ASSERT_EQUAL(l.ev[0].u.map.size, 0x1000);
  CU_ASSERT_EQUAL(l.ev[0].u.map.prot, 5);
  CU_ASSERT_STRING_EQUAL(l.ev[0].u.map.name, "/bin/true");
  CU_ASSERT(l.ev[0].u.map.data && !memcmp(l.ev[0].u.map.data, code, 4096));
  CU_ASSERT_EQUAL(l.ev[1].kind, TC_EV_KEYFRAME);
  CU_ASSERT_EQUAL(memcmp(l.ev[1].u.key.state, st0, a->state_size), 0);
  const tc_insn_event *i0 = &l.ev[2].u.insn, *i1 = &l.ev[3].u.insn;
  CU_ASSERT_EQUAL(l.ev[2].kind, TC_EV_INSN);
  CU_ASSERT_EQUAL(i0->pc, 0x400000);
  CU_ASSERT_EQUAL(i0->tid, 7);
  CU_ASSERT_EQUAL(i0->size, 7);
  CU_ASSERT_EQUAL(memcmp(i0->bytes, code, 7), 0); /* rebuilt from memory */
  CU_ASSERT_EQUAL(memcmp(i0->state_before, st0, a->state_size), 0);
  CU_ASSERT_EQUAL(memcmp(i0->state_after, st1, a->state_size), 0);
  CU_ASSERT_EQUAL(i0->nregs, 2);
  CU_ASSERT_EQUAL_FATAL(i0->nmem, 2);
  CU_ASSERT_EQUAL(i0->mem[0].kind, TC_MEM_READ);
  CU_ASSERT_EQUAL(memcmp(i0->mem[0].before, "\x48\xc7", 2), 0);
  CU_ASSERT_EQUAL(i0->mem[1].kind, TC_MEM_WRITE);
  CU_ASSERT_EQUAL(memcmp(i0->mem[1].before, "\x11\x00", 2), 0); /* replayed */
  CU_ASSERT_EQUAL(memcmp(i0->mem[1].after, "\xaa\xbb", 2), 0);
  CU_ASSERT_EQUAL(i1->pc, 0x400007);
  CU_ASSERT_EQUAL(memcmp(i1->bytes, "\x0f\x05", 2), 0);
  CU_ASSERT_EQUAL(tc_state_get(a, i1->state_after, a->pc_reg), 0x400009);
  CU_ASSERT_EQUAL(l.ev[4].kind, TC_EV_MAP);
  CU_ASSERT_STRING_EQUAL(l.ev[4].u.map.name, "");
  CU_ASSERT_EQUAL(l.ev[5].kind, TC_EV_PROTECT);
  CU_ASSERT_EQUAL(l.ev[5].u.map.prot, 1);
  CU_ASSERT_EQUAL(l.ev[6].kind, TC_EV_UNMAP);
  CU_ASSERT_EQUAL(l.ev[6].u.map.addr, 0x11000);
  const tc_syscall_event *s = &l.ev[7].u.sys;
  CU_ASSERT_EQUAL(l.ev[7].kind, TC_EV_SYSCALL);
  CU_ASSERT_EQUAL(s->nr, 60);
  CU_ASSERT_STRING_EQUAL(s->name, "exit");
  CU_ASSERT_EQUAL(s->args[0], 5);
  CU_ASSERT_EQUAL(s->insn_index, 1);
  CU_ASSERT_EQUAL_FATAL(s->nmem, 1);
  CU_ASSERT_EQUAL(memcmp(s->mem[0].after, "\x01\x02\x03", 3), 0);
  CU_ASSERT_EQUAL(l.ev[8].kind, TC_EV_EXIT);
  CU_ASSERT_EQUAL(l.ev[8].u.exit.reason, TC_EXIT_EXITED);
  CU_ASSERT_EQUAL(l.ev[8].u.exit.status, 5);
  CU_ASSERT_EQUAL(l.ev[8].u.exit.insn_count, 2);
  evlog_free(&l);

  tc_ucir_stats st;
  CU_ASSERT_EQUAL(tc_ucir_stats_read(path, &st, &err), 0);
  CU_ASSERT_EQUAL(st.spec_layout, !usercorn);
  CU_ASSERT_EQUAL(st.toplevel, 2);
  free(st0);
  free(st1);
  free(st2);
}

static void test_vectors_usercorn(void) { check_layout("usercorn", 1); }
static void test_vectors_spec(void) { check_layout("spec", 0); }

/* SPREG (regs=all): xmm0 as 16 bytes; the PC is never a REG. */
static void test_spreg_and_all_regs(void) {
  const tc_arch *a = x64();
  uint8_t *st0 = calloc(1, a->state_size), *st1 = calloc(1, a->state_size);
  int xmm0 = reg(a, "xmm0"), rfl = reg(a, "rflags");
  tc_state_set(a, st0, a->pc_reg, 0x1000);
  memcpy(st1, st0, a->state_size);
  for (int i = 0; i < 16; i++)
    st1[a->regs[xmm0].offset + i] = (uint8_t)(0xa0 + i);
  tc_state_set(a, st1, rfl, 0x246);
  tc_state_set(a, st1, a->pc_reg, 0x1004);
  uint16_t regs[3] = {(uint16_t)a->pc_reg, (uint16_t)rfl, (uint16_t)xmm0};
  if (rfl > xmm0) {
    regs[1] = (uint16_t)xmm0;
    regs[2] = (uint16_t)rfl;
  }
  tc_event ev[3] = {{0}};
  ev[0].kind = TC_EV_INSN;
  ev[0].u.insn = (tc_insn_event){
      0, 0x1000, 1, 4, {0x66, 0x0f, 0xef, 0xc0}, 3, regs, st0, st1, 0, NULL};
  ev[1].kind = TC_EV_EXIT;
  ev[1].u.exit = (tc_exit_event){TC_EXIT_MAX_INSNS, 124, 0, 1, NULL};
  const char *opts[] = {"ucir.layout=spec", "ucir.regs=all", NULL};
  const char *path = tu_tmp("spreg.ucir");
  write_events(path, a, opts, st0, ev, 2);
  size_t n;
  int uc;
  uint8_t *b = body_of(path, &n, &uc);
  /* KEYFRAME (only non-zero registers: none but the PC, never written) */
  vec v = {.n = 0};
  v8(&v, 2), vle(&v, 1, 8), vle(&v, 0, 4);
  v8(&v, 1), vle(&v, 1, 8), vle(&v, 5, 4); /* JMP REG SPREG STEP EXIT */
  v8(&v, 3), vle(&v, 0x1000, 8), vle(&v, 4, 4);
  vec r1 = {.n = 0}, r2 = {.n = 0};
  v8(&r1, 5), vle(&r1, (uint64_t)a->regs[rfl].uc_id, 2), vle(&r1, 0x246, 8);
  v8(&r2, 6), vle(&r2, (uint64_t)a->regs[xmm0].uc_id, 2), vle(&r2, 16, 2);
  for (int i = 0; i < 16; i++)
    v8(&r2, 0xa0 + i);
  if (rfl < xmm0)
    vbytes(&v, r1.b, r1.n), vbytes(&v, r2.b, r2.n);
  else
    vbytes(&v, r2.b, r2.n), vbytes(&v, r1.b, r1.n);
  v8(&v, 4), v8(&v, 4), v8(&v, 13);
  CU_ASSERT_EQUAL(n, v.n);
  CU_ASSERT(n == v.n && memcmp(b, v.b, n) == 0);
  free(b);
  evlog l = {0};
  tc_error err = {{0}};
  CU_ASSERT_FATAL(evlog_read(&l, path, &err) == 0);
  CU_ASSERT_EQUAL_FATAL(l.n, 3); /* KEYFRAME, INSN, EXIT */
  CU_ASSERT_EQUAL(memcmp(l.ev[1].u.insn.state_after, st1, a->state_size), 0);
  CU_ASSERT_EQUAL(l.ev[1].u.insn.nregs, 3);
  CU_ASSERT_PTR_NOT_NULL(l.ev[2].u.exit.message); /* EXIT outside syscall */
  evlog_free(&l);
  free(st0);
  free(st1);
}

/* ------------------------------------------------- usercorn's own files */

typedef struct sample {
  const char *file;
  uint64_t top;
  /* NOP FRAME KEYFRAME JMP STEP REG SPREG MEM_READ MEM_WRITE MEM_MAP
   * MEM_UNMAP MEM_PROT SYSCALL EXIT (tests/data/ucir-samples/README.md) */
  uint64_t ops[14];
  const char *arch;
} sample;

static const sample samples[] = {
    {"x86_64.strace.ucir",
     2,
     {0, 1, 1, 0, 0, 174, 0, 0, 4, 4, 0, 0, 28, 1},
     "x86_64"},
    {"x86_64.etrace-mtrace-rtrace-strace.ucir",
     50810,
     {0, 50809, 1, 50808, 200806, 55676, 0, 3304, 46710, 8, 4, 0, 28, 1},
     "x86_64"},
    {"x86_64.trace.ucir",
     50810,
     {48213, 50809, 1, 50808, 200806, 55676, 0, 3304, 46710, 8, 4, 0, 28, 1},
     "x86_64"},
    {"x86_64.btrace-strace.ucir",
     860,
     {0, 859, 1, 50808, 0, 174, 0, 3304, 46710, 8, 4, 0, 28, 1},
     "x86_64"},
    {"x86.etrace-strace.ucir",
     124676,
     {0, 124675, 1, 124674, 328526, 211282, 0, 69302, 64558, 8, 4, 0, 31, 1},
     "x86"},
    {"mipsel.etrace-strace.ucir",
     114958,
     {0, 114957, 1, 114956, 243132, 71377, 0, 5467, 55640, 7, 0, 0, 30, 1},
     "mips"},
    {"writer-sample.ucir",
     2,
     {1, 1, 1, 1, 2, 2, 1, 1, 1, 2, 1, 1, 1, 1},
     "x86_64"},
};

static const char *sample_path(const char *name) {
  static char buf[4][1024];
  static int k;
  k = (k + 1) & 3;
  snprintf(buf[k], sizeof buf[k], "%s/ucir-samples/%s", TC_DATA_DIR, name);
  return buf[k];
}

static void test_samples_op_counts(void) {
  for (size_t i = 0; i < sizeof samples / sizeof samples[0]; i++) {
    const sample *s = &samples[i];
    tc_ucir_stats st;
    tc_error err = {{0}};
    int rc = tc_ucir_stats_read(sample_path(s->file), &st, &err);
    if (rc != 0)
      fprintf(stderr, "%s: %s\n", s->file, err.msg);
    CU_ASSERT_EQUAL_FATAL(rc, 0);
    CU_ASSERT_EQUAL(st.spec_layout, 0);
    CU_ASSERT_EQUAL(st.toplevel, s->top);
    for (unsigned op = 0; op < 14; op++)
      if (st.ops[op] != s->ops[op]) {
        fprintf(stderr, "%s: %s %llu, README says %llu\n", s->file,
                tc_ucir_op_name(op), (unsigned long long)st.ops[op],
                (unsigned long long)s->ops[op]);
        CU_FAIL("op count differs from the README");
      }
    /* events: one INSN per STEP, one SYSCALL per SYSCALL op */
    evlog l = {0};
    CU_ASSERT_FATAL(evlog_read(&l, sample_path(s->file), &err) == 0);
    /* "mips": read with tracecorn's mipsel table once it has one */
    CU_ASSERT(
        strcmp(l.arch->name, s->arch) == 0 ||
        (strcmp(s->arch, "mips") == 0 && strcmp(l.arch->name, "mipsel") == 0));
    CU_ASSERT_EQUAL(evlog_count(&l, TC_EV_INSN), s->ops[4]);
    CU_ASSERT_EQUAL(evlog_count(&l, TC_EV_SYSCALL), s->ops[12]);
    CU_ASSERT_EQUAL(evlog_count(&l, TC_EV_EXIT), 1);
    CU_ASSERT_EQUAL(l.ev[l.n - 1].kind, TC_EV_EXIT);
    evlog_free(&l);
  }
}

/* Decoded contents of writer-sample.ucir (ucir.md s.9). */
static void test_writer_sample_contents(void) {
  evlog l = {0};
  tc_error err = {{0}};
  CU_ASSERT_FATAL(evlog_read(&l, sample_path("writer-sample.ucir"), &err) == 0);
  const tc_arch *a = l.arch;
  CU_ASSERT_EQUAL_FATAL(l.n, 9);
  CU_ASSERT_EQUAL(l.ev[0].kind, TC_EV_MAP);
  CU_ASSERT_STRING_EQUAL(l.ev[0].u.map.name, "/bin/true");
  CU_ASSERT_EQUAL(l.ev[0].u.map.prot, 5);
  CU_ASSERT_EQUAL(l.ev[1].kind, TC_EV_KEYFRAME);
  CU_ASSERT_EQUAL(tc_state_get(a, l.ev[1].u.key.state, reg(a, "rsp")),
                  0x7ffff000);
  CU_ASSERT_EQUAL(tc_state_get(a, l.ev[1].u.key.state, a->pc_reg), 0x400000);
  const tc_insn_event *i0 = &l.ev[2].u.insn, *i1 = &l.ev[3].u.insn;
  CU_ASSERT_EQUAL(i0->pc, 0x400000);
  CU_ASSERT_EQUAL(i0->size, 7);
  CU_ASSERT_EQUAL(memcmp(i0->bytes, "\x48\xc7\xc0\x3c\x00\x00\x00", 7), 0);
  CU_ASSERT_EQUAL(tc_state_get(a, i0->state_after, reg(a, "rax")), 0x3c);
  CU_ASSERT_EQUAL(i1->pc, 0x400007);
  CU_ASSERT_EQUAL(memcmp(i1->bytes, "\x0f\x05", 2), 0);
  CU_ASSERT_EQUAL_FATAL(i1->nmem, 1);
  CU_ASSERT_EQUAL(i1->mem[0].addr, 0x7ffff000);
  CU_ASSERT_EQUAL(i1->mem[0].size, 8);
  CU_ASSERT_EQUAL(l.ev[4].kind, TC_EV_MAP);
  CU_ASSERT_EQUAL(l.ev[4].u.map.addr, 0x1000);
  CU_ASSERT_EQUAL(l.ev[4].u.map.size, 0x2000);
  CU_ASSERT_EQUAL(l.ev[5].kind, TC_EV_PROTECT);
  CU_ASSERT_EQUAL(l.ev[6].kind, TC_EV_UNMAP);
  CU_ASSERT_EQUAL(l.ev[7].kind, TC_EV_SYSCALL);
  CU_ASSERT_EQUAL(l.ev[7].u.sys.nr, 60);
  CU_ASSERT_EQUAL(l.ev[7].u.sys.args[2], 2);
  CU_ASSERT_EQUAL(l.ev[8].u.exit.status, 0);
  evlog_free(&l);
}

/* The mipsel sample: arch "mips" read with o32 numbers, disassembled. */
static void test_mipsel_sample_dump(void) {
  char *out = NULL;
  int st = tu_run_merge(&out, TC_CLI, "dump",
                        sample_path("mipsel.etrace-strace.ucir"), NULL);
  CU_ASSERT_EQUAL(st, 0);
  CU_ASSERT_PTR_NOT_NULL_FATAL(out);
  CU_ASSERT(strstr(out, "(mips), entry 0x401560") ||
            strstr(out, "(mipsel), entry 0x401560"));
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "lui $gp, 0x42"));
  CU_ASSERT(strstr(out, "syscall_4004(0x1") || /* write, o32 */
            strstr(out, "write(1, "));
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "exited, status 0, 243132"));
  CU_ASSERT_PTR_NULL(strstr(out, "warning"));
  free(out);
}

/* An arch with no register table: registers are the numbers used. */
static void test_unknown_arch(void) {
  vec v = {.n = 0};
  char name[32] = "riscv64", os[32] = "linux";
  vstr(&v, "UCIR"), vle(&v, 0, 4), vbytes(&v, name, 32), vbytes(&v, os, 32);
  v8(&v, 0), v8(&v, 0);
  v8(&v, 2), vle(&v, 0, 8), vle(&v, 1, 4);
  v8(&v, 5), vle(&v, 3, 2), vle(&v, 0x1234, 8);
  v8(&v, 1), vle(&v, 0, 8), vle(&v, 3, 4);
  v8(&v, 3), vle(&v, 0x1000, 8), vle(&v, 4, 4);
  v8(&v, 6), vle(&v, 70, 2), vle(&v, 16, 2);
  for (int i = 0; i < 16; i++)
    v8(&v, i);
  v8(&v, 4), v8(&v, 4);
  const char *path = tu_tmp("riscv.ucir");
  tu_write_file(path, v.b, v.n);
  evlog l = {0};
  tc_error err = {{0}};
  CU_ASSERT_FATAL(evlog_read(&l, path, &err) == 0);
  const tc_arch *a = l.arch;
  CU_ASSERT_STRING_EQUAL(a->name, "riscv64");
  CU_ASSERT_EQUAL_FATAL(a->nregs, 3); /* pc, r3, r70 */
  CU_ASSERT_STRING_EQUAL(a->regs[1].name, "r3");
  CU_ASSERT_EQUAL(a->regs[2].size, 16);
  CU_ASSERT_EQUAL(evlog_count(&l, TC_EV_INSN), 1);
  const tc_insn_event *in = NULL;
  for (size_t i = 0; i < l.n; i++)
    if (l.ev[i].kind == TC_EV_INSN)
      in = &l.ev[i].u.insn;
  CU_ASSERT_FATAL(in != NULL);
  CU_ASSERT_EQUAL(in->pc, 0x1000);
  CU_ASSERT_EQUAL(tc_state_get(a, in->state_before, 1), 0x1234);
  CU_ASSERT_EQUAL(in->state_after[a->regs[2].offset + 15], 15);
  evlog_free(&l);
}

/* ------------------------------------------ arm, arm64, mips and mipsel */

/* What one op stream holds, walked by hand (ucir.md s.4, usercorn
 * layout): nested ops follow their FRAME/KEYFRAME/SYSCALL header inline. */
typedef struct opscan {
  uint64_t ops[14];
  uint8_t reg_seen[65536 / 8];
  uint64_t sp_val;      /* the keyframe's REG of the SP enum */
  uint32_t sys_nums[8]; /* the first SYSCALL numbers */
  unsigned nsys;
  uint64_t steps_not4; /* STEPs other than 4 bytes */
  int ok;
} opscan;

static void scan_ops(const uint8_t *p, size_t n, unsigned sp_enum, opscan *o) {
  memset(o, 0, sizeof *o);
  size_t i = 0;
  int in_key = 0;
  while (i < n) {
    unsigned op = p[i++];
    CU_ASSERT_FATAL(op < 14);
    o->ops[op]++;
    size_t need = 0;
    switch (op) {
    case 1: /* FRAME */
    case 2: /* KEYFRAME */
      in_key = op == 2;
      need = 12;
      break;
    case 3:
      need = 12;
      break;
    case 4:
      o->steps_not4 += p[i] != 4;
      need = 1;
      break;
    case 5: {
      unsigned num = (unsigned)le(p + i, 2);
      o->reg_seen[num / 8] |= (uint8_t)(1u << (num % 8));
      if (in_key && num == sp_enum)
        o->sp_val = le(p + i + 2, 8);
      need = 10;
      break;
    }
    case 6:
      need = 4 + (size_t)le(p + i + 2, 2);
      break;
    case 7:
      need = 12;
      break;
    case 8:
      need = 12 + (size_t)le(p + i + 8, 4);
      break;
    case 9:
      need = 37 + (size_t)le(p + i + 33, 2) + (size_t)le(p + i + 35, 2);
      break;
    case 10:
      need = 16;
      break;
    case 11:
      need = 17;
      break;
    case 12:
      if (o->nsys < 8)
        o->sys_nums[o->nsys++] = (uint32_t)le(p + i, 4);
      need = 15 + 8 * (size_t)p[i + 12];
      break;
    default:
      need = 0;
    }
    CU_ASSERT_FATAL(n - i >= need);
    i += need;
  }
  o->ok = i == n;
}

/* Each arch's header and the REG numbers usercorn's tracer emits (ucir.md
 * s.5, s.6, written out here from the spec, not from the writer). */
static void check_new_arch(const char *guest, const char *name, int be,
                           const unsigned *set, size_t nset, unsigned sp_enum,
                           uint32_t write_nr) {
  const char *g = tu_guest(guest);
  if (!tu_have(g)) {
    fprintf(stderr, "(skipping %s: not built)\n", guest);
    return;
  }
  char prefix[256], path[300], *out = NULL;
  snprintf(prefix, sizeof prefix, "%s", tu_tmp(guest));
  int st = tu_run_merge(&out, TC_CLI, "record", "-q", "-f", "tct,ucir", "-o",
                        prefix, "--", g, NULL);
  CU_ASSERT_EQUAL(st, 0);
  CU_ASSERT_PTR_NULL(out ? strstr(out, "warning") : NULL); /* usercorn's */
  free(out);
  snprintf(path, sizeof path, "%s.ucir", prefix);
  size_t n;
  uint8_t *f = tu_read_file(path, &n);
  CU_ASSERT_FATAL(f && n > 84);
  char a[33] = {0}, os[33] = {0};
  memcpy(a, f + 8, 32), memcpy(os, f + 40, 32);
  CU_ASSERT_STRING_EQUAL(a, name);
  CU_ASSERT_STRING_EQUAL(os, "linux");
  CU_ASSERT_EQUAL(f[72], be); /* corder */
  CU_ASSERT_EQUAL(f[73], be); /* dorder */
  free(f);
  int uc = 0;
  uint8_t *body = body_of(path, &n, &uc);
  CU_ASSERT_TRUE(uc);
  opscan o;
  scan_ops(body, n, sp_enum, &o);
  free(body);
  CU_ASSERT_TRUE(o.ok);
  CU_ASSERT(o.ops[5] > 10);
  CU_ASSERT_EQUAL(o.ops[6], 0); /* no SPREG by default */
  for (unsigned num = 0; num < 65536; num++) {
    if (!(o.reg_seen[num / 8] & (1u << (num % 8))))
      continue;
    int in = 0;
    for (size_t k = 0; k < nset; k++)
      in |= set[k] == num;
    if (!in)
      fprintf(stderr, "%s: REG %u is not one usercorn traces\n", guest, num);
    CU_ASSERT_TRUE(in);
  }
  /* REG values are little-endian u64 whatever the target: the stack
   * pointer reads as a stack address */
  CU_ASSERT(o.sp_val > 0x10000 && o.sp_val < 0x800000000000ull &&
            o.sp_val % 8 == 0);
  if (strcmp(name, "mips") == 0 || strcmp(name, "arm64") == 0)
    CU_ASSERT_EQUAL(o.steps_not4, 0);
  /* syscall numbers of the guest's ABI (write: o32 4004, EABI 4, arm64 64) */
  int saw_write = 0;
  for (unsigned k = 0; k < o.nsys; k++)
    saw_write |= o.sys_nums[k] == write_nr;
  CU_ASSERT_TRUE(saw_write);
  /* and it verifies against the tct recording */
  char ref[300];
  snprintf(ref, sizeof ref, "%s.tct", prefix);
  tc_verify_report rep;
  tc_verify_report_init(&rep);
  tc_error err = {{0}};
  CU_ASSERT_EQUAL(tc_verify(ref, path, F, &rep, &err), 0);
  CU_ASSERT_EQUAL(rep.mismatches, 0);
  CU_ASSERT(rep.insns > 50);
}

static void test_new_arches(void) {
  unsigned arm[15] = {10, 12}, arm64[32] = {1, 2, 4}, mips[31];
  for (unsigned i = 0; i <= 12; i++)
    arm[2 + i] = 66 + i; /* r0-r12 */
  for (unsigned i = 0; i <= 28; i++)
    arm64[3 + i] = 199 + i; /* x0-x28 */
  for (unsigned i = 0; i < 31; i++)
    mips[i] = 3 + i; /* $1-$31: at .. ra */
  check_new_arch("hello-armhf", "arm", 0, arm, 15, 12, 4);
  check_new_arch("hello-armel", "arm", 0, arm, 15, 12, 4);
  check_new_arch("hello-arm64", "arm64", 0, arm64, 32, 4, 64);
  check_new_arch("hello-mips", "mips", 1, mips, 31, 31, 4004);
  check_new_arch("hello-mipsel", "mips", 0, mips, 31, 31, 4004);
}

/* mips64el: Unicorn 2.0.1 cannot run it, so a hand-made n64 stream
 * (daddiu, sd, ld, syscall exit) written as tct and converted: usercorn
 * has no name for it, so the file is "mips64el" with a warning, and it
 * reads back as mips64el. */
static void test_mips64el_stream(void) {
  const tc_arch *a = tc_arch_by_id(TC_ARCH_MIPS64EL);
  CU_ASSERT_PTR_NOT_NULL_FATAL(a);
  char ref[4200], path[4200];
  snprintf(ref, sizeof ref, "%s", tu_tmp("m64.tct"));
  snprintf(path, sizeof path, "%s", tu_tmp("m64.ucir"));
  tc_error err = {{0}};
  CU_ASSERT_EQUAL_FATAL(evlog_write_mips64el_tct(ref, &err), 0);

  char *out = NULL;
  CU_ASSERT_EQUAL(
      tu_run_merge(&out, TC_CLI, "convert", ref, "--to", "ucir", path, NULL),
      0);
  CU_ASSERT(out && strstr(out, "warning") && strstr(out, "\"mips64el\""));
  free(out);
  size_t len;
  uint8_t *f = tu_read_file(path, &len);
  CU_ASSERT_FATAL(f && len > 84);
  CU_ASSERT_STRING_EQUAL((const char *)f + 8, "mips64el");
  CU_ASSERT(f[72] == 0 && f[73] == 0);
  free(f);
  tc_verify_report rep;
  tc_verify_report_init(&rep);
  CU_ASSERT_EQUAL(tc_verify(ref, path, F, &rep, &err), 0);
  CU_ASSERT_EQUAL(rep.insns, 4);
  CU_ASSERT_EQUAL(rep.mismatches, 0);
  CU_ASSERT(rep.regs_held == 35 && rep.regs_total == 36); /* no UserLocal */
  if (rep.mismatches)
    fprintf(stderr, "mips64el: %s\n", rep.first);
  evlog l = {0};
  CU_ASSERT_FATAL(evlog_read(&l, path, &err) == 0);
  CU_ASSERT_PTR_EQUAL(l.arch, a);
  CU_ASSERT_EQUAL(evlog_count(&l, TC_EV_INSN), 4);
  for (size_t i = 0; i < l.n; i++)
    if (l.ev[i].kind == TC_EV_SYSCALL)
      CU_ASSERT_EQUAL(l.ev[i].u.sys.nr, 5058);
  evlog_free(&l);
}

/* -------------------------------------------------- recordings round trip */

static void verify_guest(const char *guest, const char *opt) {
  const char *g = tu_guest(guest);
  if (!tu_have(g)) {
    fprintf(stderr, "(skipping %s: not built)\n", guest);
    return;
  }
  char *out = NULL;
  int st = opt ? tu_run_merge(&out, TC_CLI, "verify", "-q", "-f", "ucir", "-O",
                              opt, "--", g, NULL)
               : tu_run_merge(&out, TC_CLI, "verify", "-q", "-f", "ucir", "--",
                              g, NULL);
  CU_ASSERT_PTR_NOT_NULL_FATAL(out);
  if (!strstr(out, "ucir   ok:") || strstr(out, "warning"))
    fprintf(stderr, "verify %s %s:\n%s\n", guest, opt ? opt : "", out);
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "ucir   ok:"));
  CU_ASSERT_PTR_NULL(strstr(out, "warning"));
  (void)st;
  free(out);
}

static void test_verify_guests(void) {
  static const char *const guests[] = {"hello64", "insns64", "glibc64",
                                       "segv64",  "hello32", "insns32",
                                       "glibc32", "div64",   NULL};
  for (int i = 0; guests[i]; i++)
    verify_guest(guests[i], NULL);
  verify_guest("insns64", "ucir.layout=spec");
  verify_guest("insns64", "ucir.keyframe-every=7");
  verify_guest("hello-arm64", NULL);
  verify_guest("hello-armhf", NULL);
  verify_guest("interwork-armhf", NULL); /* ARM and Thumb */
  verify_guest("hello-armel", NULL);
  verify_guest("hello-mips", NULL);
  verify_guest("glibc-mips", NULL);
  verify_guest("hello-mipsel", NULL);
}

/* regs=all: every register round-trips (SPREG for x87/xmm and arm64's
 * vN; REG for arm's cpsr and dN, mips's hi, lo and UserLocal). */
static void test_all_regs_round_trip(void) {
  const char *guests[] = {"insns64",         "insns32",    "hello-arm64",
                          "interwork-armhf", "hello-mips", "hello-mipsel"};
  for (int i = 0; i < 6; i++) {
    if (!tu_have(tu_guest(guests[i]))) {
      fprintf(stderr, "(skipping %s: not built)\n", guests[i]);
      continue;
    }
    char prefix[256];
    snprintf(prefix, sizeof prefix, "%s", tu_tmp(guests[i]));
    char *out = NULL;
    int st = tu_run_merge(&out, TC_CLI, "record", "-q", "-f", "tct,ucir", "-O",
                          "ucir.regs=all", "-o", prefix, "--",
                          tu_guest(guests[i]), NULL);
    CU_ASSERT_EQUAL(st, 0);
    free(out);
    char ref[300], path[300];
    snprintf(ref, sizeof ref, "%s.tct", prefix);
    snprintf(path, sizeof path, "%s.ucir", prefix);
    tc_format all = *F;
    all.holds_reg = NULL; /* compare every register */
    tc_verify_report rep;
    tc_verify_report_init(&rep);
    tc_error err = {{0}};
    CU_ASSERT_EQUAL(tc_verify(ref, path, &all, &rep, &err), 0);
    if (rep.mismatches)
      fprintf(stderr, "%s: %s\n", guests[i], rep.first);
    CU_ASSERT_EQUAL(rep.mismatches, 0);
    CU_ASSERT(rep.insns > (i < 2 ? 1000u : 80u));
    CU_ASSERT_EQUAL(rep.regs_held, rep.regs_total);
  }
}

/* Same recording, same bytes; periodic keyframes agree with the replay. */
static void test_deterministic_and_keyframes(void) {
  const char *g = tu_guest("loop64"); /* 160k instructions */
  char *out = NULL;
  char a[256], b[256];
  snprintf(a, sizeof a, "%s", tu_tmp("det-a"));
  snprintf(b, sizeof b, "%s", tu_tmp("det-b"));
  tu_run_merge(&out, TC_CLI, "record", "-q", "-f", "ucir", "-O",
               "ucir.keyframe-every=1000", "-o", a, "--", g, NULL);
  free(out);
  tu_run_merge(&out, TC_CLI, "record", "-q", "-f", "ucir", "-O",
               "ucir.keyframe-every=1000", "-o", b, "--", g, NULL);
  free(out);
  char pa[300], pb[300];
  snprintf(pa, sizeof pa, "%s.ucir", a);
  snprintf(pb, sizeof pb, "%s.ucir", b);
  size_t na, nb;
  uint8_t *fa = tu_read_file(pa, &na), *fb = tu_read_file(pb, &nb);
  CU_ASSERT_FATAL(fa && fb);
  CU_ASSERT(na == nb && memcmp(fa, fb, na) == 0);
  free(fa);
  free(fb);
  /* one KEYFRAME per 1000 instructions, each equal to the state before
   * its instruction (the reader warns if its contents disagree) */
  tc_error err = {{0}};
  tc_reader *r = F->open_reader(pa, &err);
  CU_ASSERT_FATAL(r != NULL);
  const tc_arch *arch = F->reader_info(r)->arch;
  uint8_t *kst = malloc(arch->state_size);
  uint64_t nkf = 0, ninsn = 0, checked = 0, pending = UINT64_MAX;
  tc_event ev;
  while (F->next_event(r, &ev, &err) == 1) {
    if (ev.kind == TC_EV_KEYFRAME) {
      nkf++;
      memcpy(kst, ev.u.key.state, arch->state_size);
      pending = ev.u.key.insn_index;
    } else if (ev.kind == TC_EV_INSN) {
      if (ev.u.insn.index == pending) {
        for (int k = 0; k < arch->nregs; k++)
          if (F->holds_reg(arch, k)) {
            CU_ASSERT_EQUAL(
                memcmp(kst + arch->regs[k].offset,
                       ev.u.insn.state_before + arch->regs[k].offset,
                       arch->regs[k].size),
                0);
          }
        checked++;
        pending = UINT64_MAX;
      }
      ninsn++;
    }
  }
  F->close_reader(r);
  free(kst);
  CU_ASSERT(ninsn > 100000);
  CU_ASSERT_EQUAL(nkf, 1 + (ninsn - 1) / 1000);
  CU_ASSERT_EQUAL(checked, nkf);
  /* the same through the CLI, with no warning from the checks */
  CU_ASSERT_EQUAL(tu_run_merge(&out, TC_CLI, "dump", pa, NULL), 0);
  CU_ASSERT_PTR_NULL(strstr(out, "warning"));
  free(out);
}

/* ------------------------------------------------------ corrupt input */

static int read_rc(const char *path, char *msg, size_t max) {
  tc_ucir_stats st;
  tc_error err = {{0}};
  int rc = tc_ucir_stats_read(path, &st, &err);
  if (rc < 0) {
    snprintf(msg, max, "%s", err.msg);
    CU_ASSERT(strncmp(err.msg, "ucir: ", 6) == 0);
    CU_ASSERT_PTR_NULL(strchr(err.msg, '\n'));
  }
  return rc;
}

static char *record_small(const char *name, const char *layout) {
  static char path[2][300];
  static int k;
  k ^= 1;
  char prefix[256], opt[64];
  snprintf(prefix, sizeof prefix, "%s", tu_tmp(name));
  snprintf(opt, sizeof opt, "ucir.layout=%s", layout);
  char *out = NULL;
  tu_run_merge(&out, TC_CLI, "record", "-q", "-f", "ucir", "-O", opt, "-o",
               prefix, "--", tu_guest("hello64"), NULL);
  free(out);
  snprintf(path[k], sizeof path[k], "%s.ucir", prefix);
  return path[k];
}

static void test_truncations(void) {
  const char *layouts[] = {"usercorn", "spec"};
  for (int li = 0; li < 2; li++) {
    const char *src = record_small("trunc-src", layouts[li]);
    size_t n;
    uint8_t *f = tu_read_file(src, &n);
    CU_ASSERT_FATAL(f && n > 200);
    const char *t = tu_tmp("trunc.ucir");
    char msg[512];
    size_t ok = 0, failed = 0, tried = 0;
    /* every cut through the header and the first records; past them a
     * sanitizer build (a full read per cut, 36 s there) takes every 11th.
     * Not 7th: hello64's spec-layout frames are 56 bytes apart, so a
     * stride of 7 hit either all of them or none, by the guest path's
     * length; 11 is coprime to that spacing and lands on some of them. */
    for (size_t cut = 0; cut < n;
         cut += TC_SANITIZED && cut >= 256 ? 11 : 1, tried++) {
      tu_write_file(t, f, cut);
      int rc = read_rc(t, msg, sizeof msg);
      if (rc == 0) {
        ok++;
        /* only the empty stream (header, or header + identifier) and, in
         * the spec layout, cuts between two top-level frames are valid */
        if (li == 0) {
          CU_ASSERT(cut == 74 || cut == 84);
        }
      } else {
        failed++;
        if (cut < 4) {
          CU_ASSERT_PTR_NOT_NULL(strstr(msg, "bad magic"));
        } else if (cut < 74) {
          CU_ASSERT_PTR_NOT_NULL(strstr(msg, "truncated header"));
        }
      }
    }
    if (li == 0) {
      CU_ASSERT_EQUAL(ok, 2);
    }
    CU_ASSERT(ok >= 2);
    CU_ASSERT(failed > tried / 2);
    free(f);
  }
}

static void test_byte_flips(void) {
  const char *src = record_small("flip-src", "usercorn");
  size_t n;
  uint8_t *f = tu_read_file(src, &n);
  CU_ASSERT_FATAL(f != NULL);
  /* chunk payload bytes (CRC + data): any flip must be refused */
  uint8_t *payload = calloc(1, n);
  for (size_t i = 84; i + 4 <= n;) {
    size_t len = (size_t)le(f + i + 1, 3);
    for (size_t k = i + 4; k < i + 4 + len && k < n; k++)
      payload[k] = 1;
    i += 4 + len;
  }
  const char *t = tu_tmp("flip.ucir");
  char msg[512];
  tc_ucir_stats orig, now;
  tc_error err = {{0}};
  CU_ASSERT_FATAL(tc_ucir_stats_read(src, &orig, &err) == 0);
  for (int iter = 0; iter < 400; iter++) {
    size_t at = (size_t)(rnd() % n);
    uint8_t bit = (uint8_t)(1u << (rnd() % 8));
    f[at] ^= bit;
    tu_write_file(t, f, n);
    int rc = read_rc(t, msg, sizeof msg);
    /* a flip the CRC accepts decodes to the same bytes (a snappy copy
     * from another run of equal bytes): the same ops */
    if (payload[at] && rc == 0) {
      CU_ASSERT_EQUAL(tc_ucir_stats_read(t, &now, &err), 0);
      CU_ASSERT_EQUAL(memcmp(now.ops, orig.ops, sizeof now.ops), 0);
    }
    f[at] ^= bit;
  }
  /* spec layout: flips anywhere must not crash (ASan checks) */
  src = record_small("flip-spec", "spec");
  free(f);
  f = tu_read_file(src, &n);
  CU_ASSERT_FATAL(f != NULL);
  for (int iter = 0; iter < 400; iter++) {
    size_t at = 74 + (size_t)(rnd() % (n - 74));
    uint8_t old = f[at];
    f[at] = (uint8_t)rnd();
    tu_write_file(t, f, n);
    read_rc(t, msg, sizeof msg);
    f[at] = old;
  }
  free(f);
  free(payload);
}

/* Each error the reader knows, with its message and the CLI's exit. */
static void test_error_messages(void) {
  vec h = {.n = 0};
  char name[32] = "x86_64", os[32] = "linux";
  vstr(&h, "UCIR"), vle(&h, 0, 4), vbytes(&h, name, 32), vbytes(&h, os, 32);
  v8(&h, 0), v8(&h, 0);
  const char *t = tu_tmp("err.ucir");
  char msg[512];
  struct {
    const char *what;
    uint8_t body[64];
    size_t n;
    int usercorn;
  } cases[] = {
      {"unknown op 14", {14}, 1, 0},
      {"nested frame",
       {1, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0,
        2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
       26,
       0},
      {"truncated MEM_WRITE",
       {8, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 1, 2},
       15,
       0},
      {"ends inside a FRAME",
       {1, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0},
       14,
       0},
      {"ends inside a SYSCALL",
       {12, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0},
       14,
       0},
      {"truncated snappy chunk",
       {0xff, 6, 0, 0, 's', 'N', 'a', 'P', 'p', 'Y', 1, 9, 0, 0, 0},
       15,
       1},
      {"reserved",
       {0xff, 6, 0, 0, 's', 'N', 'a', 'P', 'p', 'Y', 2, 0, 0, 0},
       14,
       1},
      {"checksum mismatch",
       {0xff, 6, 0, 0, 's', 'N', 'a', 'P', 'p', 'Y', 1, 5, 0, 0, 0, 0, 0, 0, 0},
       19,
       1},
      {"76494",
       {0xff, 6, 0, 0, 's', 'N', 'a', 'P', 'p', 'Y', 1, 0xff, 0xff, 0x01},
       14,
       1},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    vec v = h;
    vbytes(&v, cases[i].body, cases[i].n);
    tu_write_file(t, v.b, v.n);
    CU_ASSERT_EQUAL(read_rc(t, msg, sizeof msg), -1);
    if (!strstr(msg, cases[i].what))
      fprintf(stderr, "want '%s', got '%s'\n", cases[i].what, msg);
    CU_ASSERT_PTR_NOT_NULL(strstr(msg, cases[i].what));
  }
  /* a stream without its identifier */
  vec v = h;
  vbytes(&v, "\x01\x05\x00\x00\x00\x00\x00\x00\x00", 9);
  v.b[7] = 1; /* version BE 1 */
  tu_write_file(t, v.b, v.n);
  CU_ASSERT_EQUAL(read_rc(t, msg, sizeof msg), -1);
  /* header errors */
  v = h;
  v.b[0] = 'X';
  tu_write_file(t, v.b, v.n);
  CU_ASSERT_EQUAL(read_rc(t, msg, sizeof msg), -1);
  CU_ASSERT_PTR_NOT_NULL(strstr(msg, "bad magic"));
  v = h;
  v.b[73] = 2;
  tu_write_file(t, v.b, v.n);
  CU_ASSERT_EQUAL(read_rc(t, msg, sizeof msg), -1);
  CU_ASSERT_PTR_NOT_NULL(strstr(msg, "byte order"));
  /* a 4 GiB MEM_READ is kept without its value, not allocated */
  v = h;
  v8(&v, 1), vle(&v, 0, 8), vle(&v, 3, 4);
  v8(&v, 3), vle(&v, 0x1000, 8), vle(&v, 1, 4);
  v8(&v, 7), vle(&v, 0, 8), vle(&v, 0xffffffff, 4);
  v8(&v, 4), v8(&v, 1);
  tu_write_file(t, v.b, v.n);
  CU_ASSERT_EQUAL(read_rc(t, msg, sizeof msg), 0);
  /* a 4 GiB mapping with a write at its top: pieces, no 4 GiB buffer */
  v = h;
  v8(&v, 2), vle(&v, 0, 8), vle(&v, 2, 4);
  v8(&v, 9), vle(&v, 0, 8), vle(&v, 0xffffffff, 4), v8(&v, 3), vle(&v, 0, 8),
      vle(&v, 0, 8), vle(&v, 0, 2), vle(&v, 0, 2);
  v8(&v, 8), vle(&v, 0xfffffff0, 8), vle(&v, 4, 4), vle(&v, 0x01020304, 4);
  tu_write_file(t, v.b, v.n);
  CU_ASSERT_EQUAL(read_rc(t, msg, sizeof msg), 0);
  evlog l = {0};
  tc_error err = {{0}};
  CU_ASSERT_FATAL(evlog_read(&l, t, &err) == 0);
  CU_ASSERT_EQUAL_FATAL(evlog_count(&l, TC_EV_MAP), 2);
  CU_ASSERT_EQUAL(l.ev[0].u.map.size, 0xfffff000ull);
  CU_ASSERT_PTR_NULL(l.ev[0].u.map.data);
  CU_ASSERT_EQUAL(l.ev[1].u.map.addr, 0xfffff000ull);
  CU_ASSERT_EQUAL(l.ev[1].u.map.size, 0xfffull);
  CU_ASSERT(l.ev[1].u.map.data &&
            !memcmp(l.ev[1].u.map.data + 0xff0, "\x04\x03\x02\x01", 4));
  evlog_free(&l);
  /* the CLI: non-zero exit, one line */
  v = h;
  v8(&v, 14);
  tu_write_file(t, v.b, v.n);
  char *out = NULL;
  CU_ASSERT_NOT_EQUAL(tu_run_merge(&out, TC_CLI, "dump", t, NULL), 0);
  CU_ASSERT(out && strstr(out, "unknown op 14"));
  free(out);
}

/* Writer options are checked. */
static void test_writer_options(void) {
  const tc_arch *a = x64();
  tc_trace_info info = {0};
  info.arch = a;
  const char *bad[][2] = {{"ucir.bogus=1", NULL},
                          {"ucir.layout=zip", NULL},
                          {"ucir.regs=some", NULL},
                          {"ucir.keyframe-every=x", NULL}};
  for (int i = 0; i < 4; i++) {
    info.writer_options = bad[i];
    tc_error err = {{0}};
    CU_ASSERT_PTR_NULL(F->open_writer(tu_tmp("opt.ucir"), &info, &err));
    CU_ASSERT(strlen(err.msg) > 0);
  }
  CU_ASSERT_STRING_EQUAL(F->extension(a), ".ucir");
  CU_ASSERT(F->holds_reg(a, a->pc_reg));
  CU_ASSERT(F->holds_reg(a, reg(a, "r15")));
  CU_ASSERT(!F->holds_reg(a, reg(a, "rflags")));
  const tc_arch *a32 = tc_arch_by_id(TC_ARCH_X86);
  CU_ASSERT(F->holds_reg(a32, reg(a32, "eflags")));
  CU_ASSERT(F->holds_reg(a32, reg(a32, "gs")));
  CU_ASSERT(!F->holds_reg(a32, reg(a32, "fs_base")));
}

int main(void) {
  static const tu_case cases[] = {
      {"crc32c", test_crc32c},
      {"snappy chunks", test_snappy_chunks},
      {"byte vectors, usercorn layout", test_vectors_usercorn},
      {"byte vectors, spec layout", test_vectors_spec},
      {"SPREG and regs=all", test_spreg_and_all_regs},
      {"usercorn samples: op counts", test_samples_op_counts},
      {"writer-sample contents", test_writer_sample_contents},
      {"mipsel sample dump", test_mipsel_sample_dump},
      {"unknown arch", test_unknown_arch},
      {"verify guests", test_verify_guests},
      {"arm, arm64, mips, mipsel: names, byte order, REG numbers",
       test_new_arches},
      {"mips64el: a converted stream", test_mips64el_stream},
      {"regs=all round trip", test_all_regs_round_trip},
      {"deterministic, periodic keyframes", test_deterministic_and_keyframes},
      {"truncations", test_truncations},
      {"byte flips", test_byte_flips},
      {"error messages", test_error_messages},
      {"writer options", test_writer_options},
      {NULL, NULL}};
  return tu_run_suite("ucir", cases);
}
