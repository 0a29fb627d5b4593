/* SPDX-License-Identifier: GPL-2.0-or-later */
/* TRAC: x64dbg's trace file format (.trace64 / .trace32), writer and
 * reader. Facts and rules: /work/shared/specs/trac.md; user notes:
 * docs/formats/trac.md.
 *
 * File = "TRAC", u32 JSON length, JSON header, then instruction blocks.
 * Block i holds the REGDUMP state BEFORE instruction i as slot deltas
 * against block i-1, plus instruction i's memory accesses as
 * pointer-sized words. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/byteorder.h"
#include "common/memimage.h"
#include "common/murmurhash3.h"
#include "common/notice.h"
#include "writers/io/outfile.h"
#include "writers/io/zst.h"
#include "writers/trac/trac.h"

enum {
  TRAC_HEADER_MAX_WRITE = 16384, /* what every x64dbg build accepts */
  TRAC_HEADER_MAX_READ = 102400, /* newer builds' limit */
  TRAC_HASH_SEED = 0x1337,
  TRAC_OUT_BUF = 1 << 20,
  /* type R M F tid opcode pos[N] value[N*P] mflags addr old new */
  TRAC_BLOCK_MAX = 4 + 4 + 15 + 216 + TRAC_DUMP_MAX + 32 + 3 * 32 * 8,
  TRAC_JSON_DEPTH = 64
};
#define TRAC_MAX_INSNS 0xFFFFFFFFull /* TRACEINDEX is a DWORD */

/* Length of the valid UTF-8 sequence at s (n bytes available), 0 if the
 * bytes there are not valid UTF-8. */
static size_t utf8_seq_len(const unsigned char *s, size_t n) {
  unsigned char c = s[0];
  size_t len;
  unsigned char lo = 0x80, hi = 0xBF;
  if (c < 0x80)
    return 1;
  if (c >= 0xC2 && c <= 0xDF)
    len = 2;
  else if (c >= 0xE0 && c <= 0xEF) {
    len = 3;
    if (c == 0xE0)
      lo = 0xA0;
    if (c == 0xED)
      hi = 0x9F; /* no UTF-16 surrogates */
  } else if (c >= 0xF0 && c <= 0xF4) {
    len = 4;
    if (c == 0xF0)
      lo = 0x90;
    if (c == 0xF4)
      hi = 0x8F;
  } else
    return 0;
  if (n < len || s[1] < lo || s[1] > hi)
    return 0;
  for (size_t i = 2; i < len; i++)
    if (s[i] < 0x80 || s[i] > 0xBF)
      return 0;
  return len;
}

/* ================================================================ format */

static int trac_supports(const tc_arch *arch, tc_error *err) {
  if (arch && trac_layout_for(arch))
    return 0;
  tc_error_set(err, "trac: x64dbg trace files hold only x86 and x86-64, not %s",
               arch ? arch->name : "an unknown arch");
  return -1;
}

static const char *trac_extension(const tc_arch *arch) {
  return arch && arch->id == TC_ARCH_X86 ? ".trace32" : ".trace64";
}

/* ================================================================ writer */

struct tc_writer {
  int fd;
  char *path;
  trac_regmap map;
  uint8_t prev[TRAC_DUMP_MAX]; /* REGDUMP of the previous block */
  uint8_t cur[TRAC_DUMP_MAX];
  /* The state cur was built from (the last instruction's after-state):
   * when the next before-state equals it, cur is kept, updated only in
   * the slots of the registers that changed. */
  uint8_t *state;
  int have_state;
  /* Slots of cur that may differ from prev (bit per slot); all_dirty
   * after a rebuild. */
  uint64_t dirty[(TRAC_DUMP_MAX / 4 + 63) / 64];
  int all_dirty;
  uint64_t ninsns; /* blocks written to this file */
  uint32_t last_tid;
  uint64_t dropped; /* memory words beyond 32 per block */
  uint8_t *buf;     /* whole blocks only, so the file always ends on one */
  size_t len;
  int failed;
  tc_memimage *mem; /* guest memory, for the bytes around each access */
};

static int writer_flush(tc_writer *w, tc_error *err) {
  size_t done = 0;
  while (done < w->len) {
    ssize_t n = write(w->fd, w->buf + done, w->len - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      tc_error_set(err, "trac: %s: write failed: %s", w->path,
                   n < 0 ? strerror(errno) : "no progress");
      w->failed = 1;
      return -1;
    }
    done += (size_t)n;
  }
  w->len = 0;
  return 0;
}

/* Appends the JSON-escaped path, stopping (at a character boundary)
 * before `room` bytes are exceeded. Invalid UTF-8 becomes U+FFFD. */
static size_t json_escape_path(const char *path, char *out, size_t room,
                               int *truncated) {
  const unsigned char *s = (const unsigned char *)path;
  size_t n = strlen(path), o = 0;
  *truncated = 0;
  for (size_t i = 0; i < n;) {
    char tmp[8];
    size_t tlen, adv = 1;
    unsigned char c = s[i];
    if (c == '"' || c == '\\') {
      tmp[0] = '\\';
      tmp[1] = (char)c;
      tlen = 2;
    } else if (c < 0x20) {
      static const char hex[] = "0123456789abcdef";
      const char *named = c == '\n'   ? "\\n"
                          : c == '\t' ? "\\t"
                          : c == '\r' ? "\\r"
                          : c == '\b' ? "\\b"
                          : c == '\f' ? "\\f"
                                      : NULL;
      if (named) {
        memcpy(tmp, named, 2);
        tlen = 2;
      } else {
        memcpy(tmp, "\\u00", 4);
        tmp[4] = hex[c >> 4];
        tmp[5] = hex[c & 15];
        tlen = 6;
      }
    } else {
      adv = utf8_seq_len(s + i, n - i);
      if (adv) {
        memcpy(tmp, s + i, adv);
        tlen = adv;
      } else {
        memcpy(tmp, "\\ufffd", 6);
        tlen = 6;
        adv = 1;
      }
    }
    if (o + tlen > room) {
      *truncated = 1;
      break;
    }
    memcpy(out + o, tmp, tlen);
    o += tlen;
    i += adv;
  }
  return o;
}

static tc_writer *trac_open_writer(const char *path, const tc_trace_info *info,
                                   tc_error *err) {
  if (!info || trac_supports(info->arch, err) < 0)
    return NULL;
  const tc_arch *arch = info->arch;
  int is64 = arch->id == TC_ARCH_X86_64;

  char hash[32] = "0x0";
  if (info->exe_data) {
    if (is64) {
      uint64_t h[2];
      tc_murmur3_x64_128(info->exe_data, info->exe_size, TRAC_HASH_SEED, h);
      snprintf(hash, sizeof hash, "0x%llX", (unsigned long long)h[0]);
    } else {
      snprintf(hash, sizeof hash, "0x%llX",
               (unsigned long long)tc_murmur3_x86_32(
                   info->exe_data, info->exe_size, TRAC_HASH_SEED));
    }
  }

  /* 8-byte file prefix + JSON (at most 16384 bytes, no NUL). */
  char *head = malloc(8 + TRAC_HEADER_MAX_WRITE);
  tc_writer *w = calloc(1, sizeof *w);
  if (!head || !w) {
    free(head);
    free(w);
    tc_error_set(err, "trac: out of memory");
    return NULL;
  }
  char *json = head + 8;
  int plen = snprintf(json, TRAC_HEADER_MAX_WRITE,
                      "{\"ver\":1,\"arch\":\"%s\",\"hashAlgorithm\":"
                      "\"murmurhash\",\"hash\":\"%s\",\"compression\":\"\","
                      "\"path\":\"",
                      is64 ? "x64" : "x86", hash);
  int truncated = 0;
  size_t L = (size_t)plen;
  L += json_escape_path(info->exe_path ? info->exe_path : "", json + L,
                        TRAC_HEADER_MAX_WRITE - 2 - L, &truncated);
  json[L++] = '"';
  json[L++] = '}';
  if (truncated)
    tc_notice("trac: %s: program path truncated to fit x64dbg's 16 KiB "
              "header",
              path);
  memcpy(head, "TRAC", 4);
  put_le((uint8_t *)head + 4, L, 4);

  w->fd = -1;
  w->path = strdup(path);
  w->buf = malloc(TRAC_OUT_BUF);
  w->mem = tc_memimage_new();
  w->state = calloc(1, arch->state_size);
  if (!w->path || !w->buf || !w->mem || !w->state) {
    tc_error_set(err, "trac: out of memory");
    goto fail;
  }
  trac_regmap_init(&w->map, arch);
  w->fd = tc_outfile_open(path, 0644);
  if (w->fd < 0) {
    tc_error_set(err, "trac: %s: cannot create: %s", path, strerror(errno));
    goto fail;
  }
  memcpy(w->buf, head, 8 + L);
  w->len = 8 + L;
  /* The header goes out now so that even an empty recording is a file. */
  if (writer_flush(w, err) < 0)
    goto fail;
  free(head);
  return w;

fail:
  if (w->fd >= 0)
    close(w->fd);
  tc_memimage_free(w->mem);
  free(w->state);
  free(w->buf);
  free(w->path);
  free(w);
  free(head);
  return NULL;
}

/* Slots are compared as integers: a memcmp call per slot dominated. */
static inline int slot_differs(const uint8_t *a, const uint8_t *b, unsigned P) {
  if (P == 8) {
    uint64_t x, y;
    memcpy(&x, a, 8);
    memcpy(&y, b, 8);
    return x != y;
  }
  uint32_t x, y;
  memcpy(&x, a, 4);
  memcpy(&y, b, 4);
  return x != y;
}

/* a[0..n) == b[0..n): 8-byte words OR-ed together (vectorised), no libc
 * call. */
static inline int run_equal(const uint8_t *a, const uint8_t *b, size_t n) {
  uint64_t acc = 0;
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t x, y;
    memcpy(&x, a + i, 8);
    memcpy(&y, b + i, 8);
    acc |= x ^ y;
  }
  return acc == 0 && (i == n || memcmp(a + i, b + i, n - i) == 0);
}

/* Encodes one instruction block into w->buf. */
static int write_insn(tc_writer *w, const tc_event *ev, tc_error *err) {
  const tc_insn_event *in = &ev->u.insn;
  const trac_layout *l = w->map.l;
  const unsigned P = l->ptr, N = l->nslots, cip_slot = l->cip / l->ptr;

  if (in->size < 1 || in->size > 15) {
    tc_error_set(err,
                 "trac: instruction %" PRIu64 " at 0x%" PRIx64
                 " has %u bytes; TRAC holds 1 to 15 opcode bytes",
                 in->index, in->pc, (unsigned)in->size);
    return -1;
  }
  if (!in->state_before) {
    tc_error_set(err, "trac: instruction %" PRIu64 " has no register state",
                 in->index);
    return -1;
  }
  if (w->ninsns >= TRAC_MAX_INSNS) {
    tc_error_set(err,
                 "trac: %s: x64dbg trace files hold at most %llu "
                 "instructions",
                 w->path, TRAC_MAX_INSNS);
    return -1;
  }
  if (TRAC_OUT_BUF - w->len < TRAC_BLOCK_MAX && writer_flush(w, err) < 0)
    return -1;

  size_t ssize = w->map.arch->state_size;
  if (!w->have_state || memcmp(w->state, in->state_before, ssize) != 0) {
    trac_regdump_from_state(&w->map, in->state_before, w->cur);
    memcpy(w->state, in->state_before, ssize);
    w->all_dirty = 1;
  }
  /* x64dbg pages start at full dumps; keep them at most 512 long. */
  int full = w->ninsns % TRAC_FULL_DUMP_EVERY == 0;
  int with_tid = full || in->tid != w->last_tid;

  uint8_t *b = w->buf + w->len, *p = b;
  uint8_t pos[216];
  uint16_t slots[216];
  unsigned R = 0;
  int last = -1;
  if (full || w->all_dirty) {
    /* 64-byte runs of equal slots are skipped with one compare. */
    const unsigned per = 64 / P;
    for (unsigned s0 = 0; s0 < N; s0 += per) {
      unsigned s1 = s0 + per < N ? s0 + per : N;
      int same =
          !full && run_equal(w->cur + s0 * P, w->prev + s0 * P, (s1 - s0) * P);
      if (same && (cip_slot < s0 || cip_slot >= s1))
        continue;
      for (unsigned s = s0; s < s1; s++)
        if (full || s == cip_slot ||
            (!same && slot_differs(w->cur + s * P, w->prev + s * P, P))) {
          pos[R] = (uint8_t)(full ? 0 : (int)s - last - 1);
          slots[R++] = (uint16_t)s;
          last = (int)s;
        }
    }
  } else {
    /* only the slots the last updates wrote can differ */
    w->dirty[cip_slot / 64] |= 1ull << (cip_slot % 64);
    for (unsigned k = 0; k < sizeof w->dirty / sizeof w->dirty[0]; k++)
      for (uint64_t bits = w->dirty[k]; bits; bits &= bits - 1) {
        unsigned s = 64 * k + (unsigned)__builtin_ctzll(bits);
        if (s == cip_slot || slot_differs(w->cur + s * P, w->prev + s * P, P)) {
          pos[R] = (uint8_t)((int)s - last - 1);
          slots[R++] = (uint16_t)s;
          last = (int)s;
        }
      }
  }
  memset(w->dirty, 0, sizeof w->dirty);
  w->all_dirty = 0;

  /* Memory: each access becomes pointer-sized words at addr, addr+P, ...
   * As in x64dbg, a word's bytes past the access itself are the real
   * memory there, taken from the image the event stream rebuilds. */
  uint8_t mflags[TRAC_MAX_MEM];
  uint64_t maddr[TRAC_MAX_MEM], mold[TRAC_MAX_MEM], mnew[TRAC_MAX_MEM];
  unsigned M = 0;
  for (uint32_t a = 0; a < in->nmem; a++) {
    const tc_mem_access *ma = &in->mem[a];
    for (uint32_t off = 0; off < ma->size; off += P) {
      if (M == TRAC_MAX_MEM) {
        w->dropped++;
        continue;
      }
      uint8_t ob[8] = {0};
      uint32_t n = ma->size - off < P ? ma->size - off : P;
      tc_memimage_read(w->mem, ma->addr + off, ob, P);
      if (ma->before)
        memcpy(ob, ma->before + off, n);
      maddr[M] = ma->addr + off;
      mold[M] = get_le(ob, P);
      M++;
    }
  }
  if (tc_memimage_apply(w->mem, ev) < 0) {
    tc_error_set(err, "trac: out of memory");
    return -1;
  }
  for (unsigned i = 0; i < M; i++) {
    /* new = the word after the instruction, as x64dbg reads it */
    uint8_t nb[8] = {0};
    tc_memimage_read(w->mem, maddr[i], nb, P);
    mnew[i] = get_le(nb, P);
    mflags[i] = mold[i] == mnew[i]; /* bit 0: no new value follows */
  }

  *p++ = 0;
  *p++ = (uint8_t)R;
  *p++ = (uint8_t)M;
  *p++ = (uint8_t)(in->size | (with_tid ? 0x80 : 0));
  if (with_tid) {
    put_le(p, in->tid, 4);
    p += 4;
  }
  memcpy(p, in->bytes, in->size);
  p += in->size;
  memcpy(p, pos, R);
  p += R;
  for (unsigned i = 0; i < R; i++, p += P)
    memcpy(p, w->cur + slots[i] * P, P);
  memcpy(p, mflags, M);
  p += M;
  for (unsigned i = 0; i < M; i++, p += P)
    put_le(p, maddr[i], P);
  for (unsigned i = 0; i < M; i++, p += P)
    put_le(p, mold[i], P);
  for (unsigned i = 0; i < M; i++)
    if (!(mflags[i] & 1)) {
      put_le(p, mnew[i], P);
      p += P;
    }
  w->len += (size_t)(p - b);

  /* prev = cur: only the slots written differ */
  if (full)
    memcpy(w->prev, w->cur, l->size);
  else
    for (unsigned i = 0; i < R; i++)
      memcpy(w->prev + slots[i] * P, w->cur + slots[i] * P, P);
  w->last_tid = in->tid;
  w->ninsns++;

  /* cur for the next instruction: this one's after-state */
  w->have_state = in->state_after != NULL;
  if (w->have_state) {
    const tc_arch *arch = w->map.arch;
    int rebuild = 0;
    for (unsigned i = 0; i < in->nregs; i++) {
      const tc_reg_info *ri = &arch->regs[in->regs[i]];
      memcpy(w->state + ri->offset, in->state_after + ri->offset, ri->size);
      uint16_t t[4];
      int nt = rebuild ? 0
                       : trac_regdump_update(&w->map, in->state_after,
                                             in->regs[i], w->cur, t);
      if (!rebuild && nt == 0)
        rebuild = 1;
      for (int k = 0; k < nt; k++) /* mark the slots of each byte range */
        for (unsigned s = t[2 * k] / P; s <= (t[2 * k] + t[2 * k + 1] - 1u) / P;
             s++)
          w->dirty[s / 64] |= 1ull << (s % 64);
    }
    if (rebuild) {
      trac_regdump_from_state(&w->map, w->state, w->cur);
      w->all_dirty = 1;
    }
  }
  return 0;
}

static int trac_write_event(tc_writer *w, const tc_event *ev, tc_error *err) {
  if (w->failed) {
    tc_error_set(err, "trac: %s: an earlier write failed", w->path);
    return -1;
  }
  /* TRAC holds only instructions: syscalls, maps, faults and the exit
   * have no block type (user blocks are not emitted by default). */
  if (ev->kind != TC_EV_INSN) {
    /* ...but their memory effects feed the image behind the words. */
    if (tc_memimage_apply(w->mem, ev) < 0) {
      tc_error_set(err, "trac: out of memory");
      w->failed = 1;
      return -1;
    }
    return 0;
  }
  if (write_insn(w, ev, err) < 0) {
    w->failed = 1;
    return -1;
  }
  return 0;
}

static int trac_close_writer(tc_writer *w, tc_error *err) {
  if (!w)
    return 0;
  int rc = w->failed ? -1 : 0;
  if (w->failed)
    tc_error_set(err, "trac: %s: an earlier write failed", w->path);
  else if (writer_flush(w, err) < 0)
    rc = -1;
  if (close(w->fd) < 0 && rc == 0) {
    tc_error_set(err, "trac: %s: close failed: %s", w->path, strerror(errno));
    rc = -1;
  }
  if (w->dropped)
    tc_notice("trac: %" PRIu64 " memory accesses beyond x64dbg's 32 per "
              "instruction were dropped",
              w->dropped);
  tc_memimage_free(w->mem);
  free(w->state);
  free(w->buf);
  free(w->path);
  free(w);
  return rc;
}

/* ============================================================ JSON header */

typedef enum { J_NONE, J_STR, J_NUM, J_BOOL, J_NULL, J_OBJ, J_ARR } jtype;

typedef struct jvalue {
  jtype type;
  double num;
  char *str; /* J_STR only, malloc'd, NUL-terminated (may hold NULs) */
} jvalue;

typedef struct jparser {
  const unsigned char *s;
  size_t n, i;
  int depth;
} jparser;

static void jp_ws(jparser *p) {
  while (p->i < p->n && (p->s[p->i] == ' ' || p->s[p->i] == '\t' ||
                         p->s[p->i] == '\n' || p->s[p->i] == '\r'))
    p->i++;
}

static int jp_lit(jparser *p, const char *lit) {
  size_t len = strlen(lit);
  if (p->n - p->i < len || memcmp(p->s + p->i, lit, len) != 0)
    return -1;
  p->i += len;
  return 0;
}

static int jp_hex4(jparser *p, uint32_t *out) {
  if (p->n - p->i < 4)
    return -1;
  uint32_t v = 0;
  for (int k = 0; k < 4; k++) {
    unsigned char c = p->s[p->i++];
    v <<= 4;
    if (c >= '0' && c <= '9')
      v |= c - '0';
    else if (c >= 'a' && c <= 'f')
      v |= c - 'a' + 10;
    else if (c >= 'A' && c <= 'F')
      v |= c - 'A' + 10;
    else
      return -1;
  }
  *out = v;
  return 0;
}

static size_t utf8_put(uint32_t cp, char *o) {
  if (cp < 0x80) {
    o[0] = (char)cp;
    return 1;
  }
  if (cp < 0x800) {
    o[0] = (char)(0xC0 | cp >> 6);
    o[1] = (char)(0x80 | (cp & 0x3F));
    return 2;
  }
  if (cp < 0x10000) {
    o[0] = (char)(0xE0 | cp >> 12);
    o[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
    o[2] = (char)(0x80 | (cp & 0x3F));
    return 3;
  }
  o[0] = (char)(0xF0 | cp >> 18);
  o[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
  o[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
  o[3] = (char)(0x80 | (cp & 0x3F));
  return 4;
}

/* Parses a string at p->i ('"' expected); *out (if non-NULL) gets a
 * malloc'd UTF-8 copy. Decoded output is never longer than the input. */
static int jp_string(jparser *p, char **out) {
  if (p->i >= p->n || p->s[p->i] != '"')
    return -1;
  p->i++;
  char *buf = out ? malloc(p->n - p->i + 1) : NULL;
  size_t o = 0;
  if (out && !buf)
    return -1;
  for (;;) {
    if (p->i >= p->n)
      goto bad;
    unsigned char c = p->s[p->i++];
    if (c == '"')
      break;
    if (c < 0x20)
      goto bad;
    if (c != '\\') {
      if (buf)
        buf[o++] = (char)c;
      continue;
    }
    if (p->i >= p->n)
      goto bad;
    c = p->s[p->i++];
    char ch;
    switch (c) {
    case '"':
      ch = '"';
      break;
    case '\\':
      ch = '\\';
      break;
    case '/':
      ch = '/';
      break;
    case 'b':
      ch = '\b';
      break;
    case 'f':
      ch = '\f';
      break;
    case 'n':
      ch = '\n';
      break;
    case 'r':
      ch = '\r';
      break;
    case 't':
      ch = '\t';
      break;
    case 'u': {
      uint32_t cp, lo;
      if (jp_hex4(p, &cp) < 0)
        goto bad;
      if (cp >= 0xD800 && cp <= 0xDBFF && p->n - p->i >= 6 &&
          p->s[p->i] == '\\' && p->s[p->i + 1] == 'u') {
        size_t save = p->i;
        p->i += 2;
        if (jp_hex4(p, &lo) < 0)
          goto bad;
        if (lo >= 0xDC00 && lo <= 0xDFFF)
          cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
        else
          p->i = save; /* a lone high surrogate; the next escape stays */
      }
      if (cp >= 0xD800 && cp <= 0xDFFF)
        cp = 0xFFFD; /* lone surrogate */
      /* \uXXXX (6 bytes in) -> at most 3 bytes out; a pair (12) -> 4. */
      if (buf)
        o += utf8_put(cp, buf + o);
      continue;
    }
    default:
      goto bad;
    }
    if (buf)
      buf[o++] = ch;
  }
  if (out) {
    buf[o] = 0;
    *out = buf;
  }
  return 0;
bad:
  free(buf);
  return -1;
}

/* Skips decimal digits; returns how many. */
static size_t jp_digits(jparser *p) {
  size_t start = p->i;
  while (p->i < p->n && p->s[p->i] >= '0' && p->s[p->i] <= '9')
    p->i++;
  return p->i - start;
}

static int jp_number(jparser *p, double *out) {
  size_t start = p->i;
  if (p->i < p->n && p->s[p->i] == '-')
    p->i++;
  if (p->i >= p->n)
    return -1;
  if (p->s[p->i] == '0')
    p->i++;
  else if (p->s[p->i] >= '1' && p->s[p->i] <= '9')
    jp_digits(p);
  else
    return -1;
  if (p->i < p->n && p->s[p->i] == '.') {
    p->i++;
    if (jp_digits(p) == 0)
      return -1;
  }
  if (p->i < p->n && (p->s[p->i] == 'e' || p->s[p->i] == 'E')) {
    p->i++;
    if (p->i < p->n && (p->s[p->i] == '+' || p->s[p->i] == '-'))
      p->i++;
    if (jp_digits(p) == 0)
      return -1;
  }
  char tmp[64];
  size_t len = p->i - start;
  if (len >= sizeof tmp) {
    /* Absurdly long but valid numbers are still numbers; only exact
     * small values (ver) matter, so a long one is "not 1". */
    *out = 2;
    return 0;
  }
  memcpy(tmp, p->s + start, len);
  tmp[len] = 0;
  *out = strtod(tmp, NULL);
  return 0;
}

static int jp_value(jparser *p, jvalue *v);

static int jp_container(jparser *p, int is_obj) {
  if (++p->depth > TRAC_JSON_DEPTH)
    return -1;
  p->i++; /* '{' or '[' */
  jp_ws(p);
  char close = is_obj ? '}' : ']';
  if (p->i < p->n && p->s[p->i] == close) {
    p->i++;
    p->depth--;
    return 0;
  }
  for (;;) {
    if (is_obj) {
      if (jp_string(p, NULL) < 0)
        return -1;
      jp_ws(p);
      if (p->i >= p->n || p->s[p->i] != ':')
        return -1;
      p->i++;
    }
    if (jp_value(p, NULL) < 0)
      return -1;
    jp_ws(p);
    if (p->i >= p->n)
      return -1;
    if (p->s[p->i] == ',') {
      p->i++;
      jp_ws(p);
      continue;
    }
    if (p->s[p->i] != close)
      return -1;
    p->i++;
    p->depth--;
    return 0;
  }
}

/* Parses any value; v (if non-NULL) gets strings and numbers. */
static int jp_value(jparser *p, jvalue *v) {
  jvalue dummy;
  if (!v)
    v = &dummy;
  memset(v, 0, sizeof *v);
  jp_ws(p);
  if (p->i >= p->n)
    return -1;
  switch (p->s[p->i]) {
  case '"':
    v->type = J_STR;
    return jp_string(p, v == &dummy ? NULL : &v->str);
  case '{':
    v->type = J_OBJ;
    return jp_container(p, 1);
  case '[':
    v->type = J_ARR;
    return jp_container(p, 0);
  case 't':
    v->type = J_BOOL;
    return jp_lit(p, "true");
  case 'f':
    v->type = J_BOOL;
    return jp_lit(p, "false");
  case 'n':
    v->type = J_NULL;
    return jp_lit(p, "null");
  default:
    v->type = J_NUM;
    return jp_number(p, &v->num);
  }
}

typedef struct trac_header {
  jvalue ver, arch, compression, path;
  int trailing_ws; /* whitespace after the object (tolerated, warned) */
} trac_header;

static void header_free(trac_header *h) {
  free(h->ver.str);
  free(h->arch.str);
  free(h->compression.str);
  free(h->path.str);
  memset(h, 0, sizeof *h);
}

/* Parses the whole header strictly: one object, nothing after it but
 * JSON whitespace. 0 or -1. */
static int parse_header(const uint8_t *json, size_t n, trac_header *h) {
  jparser p = {json, n, 0, 0};
  memset(h, 0, sizeof *h);
  jp_ws(&p);
  if (p.i >= p.n || p.s[p.i] != '{')
    return -1;
  p.i++;
  p.depth = 1;
  jp_ws(&p);
  if (p.i < p.n && p.s[p.i] == '}')
    p.i++;
  else
    for (;;) {
      char *key = NULL;
      if (jp_string(&p, &key) < 0)
        goto bad;
      jp_ws(&p);
      if (p.i >= p.n || p.s[p.i] != ':') {
        free(key);
        goto bad;
      }
      p.i++;
      jvalue *slot = strcmp(key, "ver") == 0           ? &h->ver
                     : strcmp(key, "arch") == 0        ? &h->arch
                     : strcmp(key, "compression") == 0 ? &h->compression
                     : strcmp(key, "path") == 0        ? &h->path
                                                       : NULL;
      free(key);
      jvalue v;
      if (jp_value(&p, &v) < 0)
        goto bad;
      if (slot) { /* a duplicate key: the last one wins */
        free(slot->str);
        *slot = v;
      } else
        free(v.str);
      jp_ws(&p);
      if (p.i >= p.n)
        goto bad;
      if (p.s[p.i] == ',') {
        p.i++;
        jp_ws(&p);
        continue;
      }
      if (p.s[p.i] != '}')
        goto bad;
      p.i++;
      break;
    }
  size_t end = p.i;
  jp_ws(&p);
  if (p.i != p.n)
    goto bad;
  h->trailing_ws = end != p.n;
  return 0;
bad:
  header_free(h);
  return -1;
}

/* ================================================================ reader */

enum {
  W_FIRST_NOT_FULL = 1u << 0,
  W_R_ZERO = 1u << 1,
  W_FULL_NO_TID = 1u << 2,
  W_LONG_PAGE = 1u << 3,
  W_RESERVED = 1u << 4,
  W_TRAILING = 1u << 5,
  W_UNCHANGED_NOT_FLAGGED = 1u << 6,
  W_BIG_HEADER = 1u << 7,
  W_EXTENSION = 1u << 8,
  W_COMPRESSION = 1u << 9,
  W_NO_BLOCKS = 1u << 10,
  W_ARCH = 1u << 11
};

typedef struct trac_block {
  uint64_t offset; /* file offset of the block (for messages) */
  uint64_t pc;
  uint32_t tid;
  uint8_t oplen;
  uint8_t opcode[15];
  uint8_t nmem;
  uint8_t mold[TRAC_MAX_MEM][8], mnew[TRAC_MAX_MEM][8];
  tc_mem_access mem[TRAC_MAX_MEM];
  uint8_t *state; /* arch->state_size bytes */
} trac_block;

struct tc_reader {
  FILE *fp;
  char *path;
  int have_size;
  uint64_t fsize, off; /* file size (regular files) and read position */
  const tc_arch *arch;
  trac_regmap map;
  tc_trace_info info;
  char *exe_path;
  uint8_t *initial_state, *end_state;
  uint16_t *changed;
  uint8_t dump[TRAC_DUMP_MAX]; /* REGDUMP after the latest block read */
  trac_block blk[2];
  int cur; /* blk[cur] is the next event's block */
  int have_cur;
  int nblocks; /* blocks read so far (saturating at 2: only 0 matters) */
  uint64_t index;
  uint64_t since_full;
  uint32_t tid;
  unsigned warned;
  /* scratch for one block */
  uint8_t pos[216];
  uint8_t values[TRAC_DUMP_MAX];
};

static void warn_once(tc_reader *r, unsigned kind, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void warn_once(tc_reader *r, unsigned kind, const char *fmt, ...) {
  if (r->warned & kind)
    return;
  r->warned |= kind;
  va_list ap;
  va_start(ap, fmt);
  char msg[400];
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  tc_notice("trac: warning: %s: %s", r->path, msg);
}

/* Reads exactly n bytes of the block at `boff`; -1 = truncated/IO error. */
static int rd(tc_reader *r, void *buf, size_t n, uint64_t boff, tc_error *err) {
  if (n == 0)
    return 0;
  size_t got = fread(buf, 1, n, r->fp);
  r->off += got;
  if (got == n)
    return 0;
  if (ferror(r->fp))
    tc_error_set(err, "trac: %s: read failed at offset 0x%" PRIx64 ": %s",
                 r->path, r->off, tc_infile_strerror(errno));
  else
    tc_error_set(err, "trac: %s: truncated block at offset 0x%" PRIx64, r->path,
                 boff);
  return -1;
}

/* Fails early (without reading) if fewer than n bytes remain. */
static int need(tc_reader *r, uint64_t n, uint64_t boff, tc_error *err) {
  if (r->have_size && (r->off > r->fsize || r->fsize - r->off < n)) {
    tc_error_set(err, "trac: %s: truncated block at offset 0x%" PRIx64, r->path,
                 boff);
    return -1;
  }
  return 0;
}

static int skip(tc_reader *r, uint64_t n, uint64_t boff, tc_error *err) {
  if (need(r, n, boff, err) < 0)
    return -1;
  if (r->have_size && n <= INT64_MAX) {
    if (fseeko(r->fp, (off_t)n, SEEK_CUR) == 0) {
      r->off += n;
      return 0;
    }
  }
  uint8_t tmp[4096];
  while (n) {
    size_t chunk = n < sizeof tmp ? (size_t)n : sizeof tmp;
    if (rd(r, tmp, chunk, boff, err) < 0)
      return -1;
    n -= chunk;
  }
  return 0;
}

/* Reads the next instruction block into *b (user blocks are skipped),
 * applying its deltas to r->dump and deriving b->state from the previous
 * block's state `prev_state`. 1: a block, 0: end of file, -1: error. */
static int read_block(tc_reader *r, trac_block *b, const uint8_t *prev_state,
                      tc_error *err) {
  const trac_layout *l = r->map.l;
  const unsigned P = l->ptr, N = l->nslots;
  uint8_t hdr[4];
  uint64_t boff;

  for (;;) {
    boff = r->off;
    size_t got = fread(hdr, 1, 1, r->fp);
    if (got == 0) {
      if (ferror(r->fp)) {
        tc_error_set(err, "trac: %s: read failed at offset 0x%" PRIx64 ": %s",
                     r->path, r->off, tc_infile_strerror(errno));
        return -1;
      }
      return 0;
    }
    r->off++;
    if (hdr[0] == 0)
      break;
    if (hdr[0] < 0x80) {
      tc_error_set(err,
                   "trac: %s: Unsupported block type %u at offset 0x%" PRIx64,
                   r->path, hdr[0], boff);
      return -1;
    }
    /* A user block (0x80-0xFF): u32 size, payload; not an instruction. */
    uint8_t sz[4];
    if (need(r, 4, boff, err) < 0 || rd(r, sz, 4, boff, err) < 0 ||
        skip(r, get_le(sz, 4), boff, err) < 0)
      return -1;
  }

  if (need(r, 3, boff, err) < 0 || rd(r, hdr + 1, 3, boff, err) < 0)
    return -1;
  unsigned R = hdr[1], M = hdr[2], F = hdr[3], oplen = F & 15;
  if (R > N) {
    tc_error_set(err,
                 "trac: %s: Bad count (%u register changes > %u) in block at "
                 "offset 0x%" PRIx64,
                 r->path, R, N, boff);
    return -1;
  }
  if (M > TRAC_MAX_MEM) {
    tc_error_set(err,
                 "trac: %s: Too many memory operands (%u > 32) in block at "
                 "offset 0x%" PRIx64,
                 r->path, M, boff);
    return -1;
  }
  if (oplen == 0) {
    tc_error_set(err, "trac: %s: No opcode in block at offset 0x%" PRIx64,
                 r->path, boff);
    return -1;
  }
  if (F & 0x70)
    warn_once(r, W_RESERVED, "reserved flag bits set (block at 0x%" PRIx64 ")",
              boff);

  int has_tid = (F & 0x80) != 0;
  uint64_t fixed =
      (has_tid ? 4u : 0u) + oplen + R + (uint64_t)R * P + M + 2ull * M * P;
  if (need(r, fixed, boff, err) < 0)
    return -1;
  uint8_t tidb[4] = {0}, mflags[TRAC_MAX_MEM], maddr[TRAC_MAX_MEM * 8];
  if ((has_tid && rd(r, tidb, 4, boff, err) < 0) ||
      rd(r, b->opcode, oplen, boff, err) < 0 ||
      rd(r, r->pos, R, boff, err) < 0 ||
      rd(r, r->values, (size_t)R * P, boff, err) < 0 ||
      rd(r, mflags, M, boff, err) < 0 ||
      rd(r, maddr, (size_t)M * P, boff, err) < 0)
    return -1;
  for (unsigned i = 0; i < M; i++)
    if (rd(r, b->mold[i], P, boff, err) < 0)
      return -1;
  unsigned k = 0;
  for (unsigned i = 0; i < M; i++)
    k += !(mflags[i] & 1);
  if (need(r, (uint64_t)k * P, boff, err) < 0)
    return -1;
  for (unsigned i = 0; i < M; i++) {
    if (mflags[i] & 1)
      memcpy(b->mnew[i], b->mold[i], P);
    else if (rd(r, b->mnew[i], P, boff, err) < 0)
      return -1;
  }

  /* Validate every position before changing any state. */
  unsigned abs_pos = 0;
  for (unsigned i = 0; i < R; i++) {
    abs_pos = (i == 0 ? 0 : abs_pos + 1) + r->pos[i];
    if (abs_pos >= N) {
      tc_error_set(err,
                   "trac: %s: Changes out of bounds (slot %u >= %u) in block "
                   "at offset 0x%" PRIx64,
                   r->path, abs_pos, N, boff);
      return -1;
    }
  }
  int full = R == N; /* x64dbg: a page starts exactly where R == N */
  if (r->nblocks == 0 && !full)
    warn_once(r, W_FIRST_NOT_FULL,
              "the first block is not a full register dump (x64dbg cannot "
              "show instructions before one)");
  if (R == 0)
    warn_once(r, W_R_ZERO,
              "a block without register changes (x64dbg misplaces the rest "
              "of its page) at 0x%" PRIx64,
              boff);
  if (full && !has_tid)
    warn_once(r, W_FULL_NO_TID,
              "a full register dump without a thread id at 0x%" PRIx64, boff);
  r->since_full = full ? 0 : r->since_full + 1;
  if (r->since_full >= TRAC_FULL_DUMP_EVERY)
    warn_once(r, W_LONG_PAGE,
              "more than 512 instructions between full register dumps "
              "(at 0x%" PRIx64 ")",
              boff);

  abs_pos = 0;
  for (unsigned i = 0; i < R; i++) {
    abs_pos = (i == 0 ? 0 : abs_pos + 1) + r->pos[i];
    memcpy(r->dump + abs_pos * P, r->values + i * P, P);
  }
  /* Without a tid the thread is the previous block's (x64dbg resets to 0
   * at a page start; keeping the last one is what the writer meant). */
  if (has_tid)
    r->tid = (uint32_t)get_le(tidb, 4);

  b->offset = boff;
  b->tid = r->tid;
  b->oplen = (uint8_t)oplen;
  b->nmem = (uint8_t)M;
  b->pc = get_le(r->dump + l->cip, P);
  for (unsigned i = 0; i < M; i++) {
    if (mflags[i] & 0xFE)
      warn_once(r, W_RESERVED,
                "reserved memory flag bits set (block at 0x%" PRIx64 ")", boff);
    if (!(mflags[i] & 1) && memcmp(b->mold[i], b->mnew[i], P) == 0)
      warn_once(r, W_UNCHANGED_NOT_FLAGGED,
                "a memory entry with new == old is not flagged unchanged "
                "(block at 0x%" PRIx64 ")",
                boff);
    tc_mem_access *ma = &b->mem[i];
    ma->addr = get_le(maddr + i * P, P);
    ma->size = P;
    ma->kind = (mflags[i] & 1) ? TC_MEM_READ : TC_MEM_WRITE;
    ma->before = b->mold[i];
    ma->after = b->mnew[i];
  }
  memcpy(b->state, prev_state, r->arch->state_size);
  trac_state_from_regdump(&r->map, r->dump, b->state);
  if (r->nblocks < 2)
    r->nblocks++;
  return 1;
}

static int trac_probe(const uint8_t *head, size_t n, const char *path) {
  (void)path;
  return n >= 4 && memcmp(head, "TRAC", 4) == 0;
}

static int ends_with(const char *s, const char *suffix) {
  size_t a = strlen(s), b = strlen(suffix);
  return a >= b && strcmp(s + a - b, suffix) == 0;
}

static void trac_close_reader(tc_reader *r) {
  if (!r)
    return;
  if (r->fp)
    fclose(r->fp);
  free(r->path);
  free(r->exe_path);
  free(r->initial_state);
  free(r->end_state);
  free(r->changed);
  free(r->blk[0].state);
  free(r->blk[1].state);
  free(r);
}

/* Reads and checks the magic and the JSON header; sets r->arch. */
static int read_header(tc_reader *r, tc_error *err) {
  uint8_t pre[8];
  size_t got = fread(pre, 1, 8, r->fp);
  r->off = got;
  if (got < 4 || memcmp(pre, "TRAC", 4) != 0) {
    tc_error_set(err, "trac: %s: File type mismatch (no TRAC magic)", r->path);
    return -1;
  }
  if (got < 8) {
    tc_error_set(err, "trac: %s: truncated header", r->path);
    return -1;
  }
  int32_t L = (int32_t)(uint32_t)get_le(pre + 4, 4);
  if (L < 0 || L > TRAC_HEADER_MAX_READ) {
    tc_error_set(err, "trac: %s: Header info is too big (%ld bytes)", r->path,
                 (long)L);
    return -1;
  }
  if (L > TRAC_HEADER_MAX_WRITE)
    warn_once(r, W_BIG_HEADER,
              "%ld-byte JSON header; x64dbg builds before late 2025 refuse "
              "more than 16384",
              (long)L);
  uint8_t *json = malloc((size_t)L + 1);
  if (!json) {
    tc_error_set(err, "trac: out of memory");
    return -1;
  }
  if (fread(json, 1, (size_t)L, r->fp) != (size_t)L) {
    free(json);
    tc_error_set(err, "trac: %s: truncated header", r->path);
    return -1;
  }
  r->off += (uint64_t)L;

  trac_header h;
  int prc = parse_header(json, (size_t)L, &h);
  free(json);
  if (prc < 0) {
    tc_error_set(err, "trac: %s: JSON header is corrupted", r->path);
    return -1;
  }
  int rc = -1;
  if (h.trailing_ws)
    warn_once(r, W_TRAILING, "trailing bytes after the JSON header");
  if (h.ver.type != J_NUM || h.ver.num != 1.0) {
    tc_error_set(err,
                 "trac: %s: Version not supported (\"ver\" must be the "
                 "number 1)",
                 r->path);
    goto out;
  }
  if (h.arch.type == J_NONE) {
    tc_error_set(err, "trac: %s: Missing key: arch", r->path);
    goto out;
  }
  if (h.compression.type == J_NONE) {
    tc_error_set(err, "trac: %s: Missing key: compression", r->path);
    goto out;
  }
  if (h.compression.type != J_STR || h.compression.str[0])
    warn_once(r, W_COMPRESSION,
              "\"compression\" is not \"\"; reading the blocks as "
              "uncompressed, as x64dbg does");

  int ext64 = ends_with(r->path, ".trace64"),
      ext32 = ends_with(r->path, ".trace32");
  const char *arch_name = h.arch.type == J_STR ? h.arch.str : "";
  if (strcmp(arch_name, "x64") == 0)
    r->arch = tc_arch_by_id(TC_ARCH_X86_64);
  else if (strcmp(arch_name, "x86") == 0)
    r->arch = tc_arch_by_id(TC_ARCH_X86);
  else if (ext64 || ext32) {
    /* x64dbg takes the pointer size from its own build; the extension is
     * the best stand-in for that here. */
    r->arch = tc_arch_by_id(ext64 ? TC_ARCH_X86_64 : TC_ARCH_X86);
    warn_once(r, W_ARCH,
              "unknown arch in header; using %s from the "
              "file extension",
              r->arch->name);
  } else {
    tc_error_set(err,
                 "trac: %s: unknown arch in header (expected \"x64\" or "
                 "\"x86\")",
                 r->path);
    goto out;
  }
  if ((ext64 && r->arch->id != TC_ARCH_X86_64) ||
      (ext32 && r->arch->id != TC_ARCH_X86))
    warn_once(r, W_EXTENSION,
              "the extension does not match arch \"%s\" (some readers take "
              "the pointer size from the extension)",
              arch_name);
  if (h.path.type == J_STR) {
    r->exe_path = h.path.str;
    h.path.str = NULL;
  }
  rc = 0;
out:
  header_free(&h);
  return rc;
}

static tc_reader *trac_open_reader(const char *path, tc_error *err) {
  tc_reader *r = calloc(1, sizeof *r);
  if (!r || !(r->path = strdup(path))) {
    free(r);
    tc_error_set(err, "trac: out of memory");
    return NULL;
  }
  r->fp = tc_infile_open(path, TC_INFILE_STREAM, "trac", err);
  if (!r->fp)
    goto fail;
  /* Traces reach gigabytes: stream them through a large buffer. */
  setvbuf(r->fp, NULL, _IOFBF, 1 << 20);
  struct stat st;
  if (fstat(fileno(r->fp), &st) == 0 && S_ISREG(st.st_mode)) {
    r->have_size = 1;
    r->fsize = (uint64_t)st.st_size;
  }
  if (r->have_size && r->fsize == 0) {
    tc_error_set(err, "trac: %s: File type mismatch (empty file)", path);
    goto fail;
  }
  if (read_header(r, err) < 0)
    goto fail;
  trac_regmap_init(&r->map, r->arch);
  size_t ss = r->arch->state_size;
  r->initial_state = calloc(1, ss);
  r->end_state = calloc(1, ss);
  r->blk[0].state = calloc(1, ss);
  r->blk[1].state = calloc(1, ss);
  r->changed = calloc(r->arch->nregs, sizeof *r->changed);
  if (!r->initial_state || !r->end_state || !r->blk[0].state ||
      !r->blk[1].state || !r->changed) {
    tc_error_set(err, "trac: out of memory");
    goto fail;
  }
  /* The first block gives the entry point and initial state. */
  int rc = read_block(r, &r->blk[0], r->initial_state, err);
  if (rc < 0)
    goto fail;
  r->cur = 0;
  r->have_cur = rc;
  if (rc) {
    memcpy(r->initial_state, r->blk[0].state, ss);
    r->info.entry = r->blk[0].pc;
  } else
    warn_once(r, W_NO_BLOCKS,
              "no instruction blocks (x64dbg refuses an "
              "empty trace)");
  r->info.arch = r->arch;
  r->info.exe_path = r->exe_path;
  r->info.has_memory = 1;
  r->info.initial_state = r->initial_state;
  return r;
fail:
  trac_close_reader(r);
  return NULL;
}

static const tc_trace_info *trac_reader_info(tc_reader *r) { return &r->info; }

static int trac_next_event(tc_reader *r, tc_event *ev, tc_error *err) {
  if (!r->have_cur)
    return 0;
  trac_block *b = &r->blk[r->cur], *next = &r->blk[r->cur ^ 1];
  const tc_arch *arch = r->arch;
  /* The state after instruction i is block i+1's; read one ahead. */
  int rc = read_block(r, next, b->state, err);
  if (rc < 0) {
    r->have_cur = 0;
    return -1;
  }
  const uint8_t *after;
  if (rc) {
    after = next->state;
  } else {
    /* The last instruction: no later block, so only the PC is known to
     * move (by its length: exact unless it branched). */
    memcpy(r->end_state, b->state, arch->state_size);
    uint64_t pc = b->pc + b->oplen;
    if (arch->ptr_size == 4)
      pc &= 0xFFFFFFFFu;
    tc_state_set(arch, r->end_state, arch->pc_reg, pc);
    after = r->end_state;
  }
  uint16_t nchanged = 0;
  for (uint16_t i = 0; i < arch->nregs; i++) {
    const tc_reg_info *ri = &arch->regs[i];
    if (memcmp(b->state + ri->offset, after + ri->offset, ri->size) != 0)
      r->changed[nchanged++] = i;
  }

  memset(ev, 0, sizeof *ev);
  ev->kind = TC_EV_INSN;
  tc_insn_event *in = &ev->u.insn;
  in->index = r->index++;
  in->pc = b->pc;
  in->tid = b->tid;
  in->size = b->oplen;
  memcpy(in->bytes, b->opcode, b->oplen);
  in->nregs = nchanged;
  in->regs = r->changed;
  in->state_before = b->state;
  in->state_after = after;
  in->nmem = b->nmem;
  in->mem = b->mem;

  r->cur ^= 1;
  r->have_cur = rc;
  return 1;
}

static int trac_holds(const tc_arch *arch, int reg) {
  return trac_holds_reg(arch, reg);
}

const tc_format tc_format_trac = {
    .name = "trac",
    .description = "x64dbg trace file (TRAC, .trace64 / .trace32)",
    .caps = TC_CAP_INSN_BYTES | TC_CAP_MEM | TC_CAP_MEM_OLD | TC_CAP_TID |
            TC_CAP_MEM_BOUNDED,
    .holds_reg = trac_holds,
    .extension = trac_extension,
    .supports = trac_supports,
    .open_writer = trac_open_writer,
    .write_event = trac_write_event,
    .close_writer = trac_close_writer,
    .probe = trac_probe,
    .open_reader = trac_open_reader,
    .reader_info = trac_reader_info,
    .next_event = trac_next_event,
    .close_reader = trac_close_reader,
};
