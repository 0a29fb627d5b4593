/* SPDX-License-Identifier: GPL-2.0-or-later */
/* tenet: the text trace of Tenet, the trace explorer for IDA Pro and
 * Binary Ninja (gaasedelen/tenet; see docs/formats/tenet.md). One line per
 * executed instruction, as Tenet's tracers write it, and a last line with
 * the state the recording ended in:
 *
 *   rax=0x0,rbx=0x0,...,r15=0x0,rip=0x401000
 *   rsp=0x7fffffffee28,rip=0x401010,mw=0x7fffffffee28:0f10400000000000
 *
 * Line i is the state at instruction i: the registers that changed since
 * the line before (all of them on the first line), the PC last, then the
 * memory the previous instruction read (mr=ADDR:HEX) and wrote (mw=...),
 * values as hex bytes in address order. Registers are Tenet's own sets:
 * the 16 GPRs and rip (x86-64), the 8 GPRs and eip (x86), r0-r12, sp, lr
 * and pc (arm). Other arches are refused. */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/hex.h"
#include "common/notice.h"
#include "writers/format.h"
#include "writers/io/outfile.h"
#include "writers/io/zst.h"

#define MAX_TREGS 17

/* One of Tenet's arch definitions (tenet/trace/arch/): its registers, the
 * instruction pointer last. */
typedef struct tenet_arch {
  tc_arch_id id;
  const char *regs[MAX_TREGS];
  unsigned nregs; /* including the PC */
} tenet_arch;

static const tenet_arch tenet_arches[] = {
    {TC_ARCH_X86_64,
     {"rax", "rbx", "rcx", "rdx", "rbp", "rsp", "rsi", "rdi", "r8", "r9", "r10",
      "r11", "r12", "r13", "r14", "r15", "rip"},
     17},
    {TC_ARCH_X86,
     {"eax", "ebx", "ecx", "edx", "ebp", "esp", "esi", "edi", "eip"},
     9},
    {TC_ARCH_ARM,
     {"r0", "r1", "r2", "r3", "r4", "r5", "r6", "r7", "r8", "r9", "r10", "r11",
      "r12", "sp", "lr", "pc"},
     16},
};

static const tenet_arch *tenet_arch_of(const tc_arch *a) {
  for (size_t i = 0; i < sizeof tenet_arches / sizeof tenet_arches[0]; i++)
    if (a && tenet_arches[i].id == a->id)
      return &tenet_arches[i];
  return NULL;
}

/* The arch-table indices of a Tenet register set; false if one is
 * missing (never, for the arches above). */
static bool map_regs(const tc_arch *a, const tenet_arch *ta, int *idx) {
  for (unsigned i = 0; i < ta->nregs; i++)
    if ((idx[i] = tc_arch_reg_index(a, ta->regs[i])) < 0)
      return false;
  return true;
}

static int tenet_holds_reg(const tc_arch *arch, int reg) {
  const tenet_arch *ta = tenet_arch_of(arch);
  for (unsigned i = 0; ta && i < ta->nregs; i++)
    if (strcmp(arch->regs[reg].name, ta->regs[i]) == 0)
      return 1;
  return 0;
}

static int tenet_supports(const tc_arch *arch, tc_error *err) {
  if (tenet_arch_of(arch))
    return 0;
  tc_error_set(err,
               "tenet: Tenet traces hold only x86-64, x86 and arm (Tenet's "
               "arch definitions), not %s",
               arch ? arch->name : "this arch");
  return -1;
}

static const char *tenet_extension(const tc_arch *arch) {
  (void)arch;
  return ".tenet";
}

/* ================================================================ writer */

struct tc_writer {
  FILE *f;
  char *path;
  const tc_arch *arch;
  const tenet_arch *ta;
  int idx[MAX_TREGS];
  uint64_t last[MAX_TREGS];  /* values on the lines written */
  uint64_t after[MAX_TREGS]; /* after the last instruction */
  uint64_t addr_mask;
  bool started;
  /* The previous instruction's memory (and its syscall's writes), written
   * on the next line. */
  char *pend;
  size_t plen, pcap;
  /* The start state, for a recording without instructions (a process
   * killed before it ran): one line, so the file is still a trace. */
  uint64_t start[MAX_TREGS];
  bool have_start;
};

static void writer_free(tc_writer *w) {
  if (!w)
    return;
  free(w->pend);
  free(w->path);
  free(w);
}

static tc_writer *tenet_open_writer(const char *path, const tc_trace_info *info,
                                    tc_error *err) {
  if (tenet_supports(info->arch, err) < 0)
    return NULL;
  tc_writer *w = calloc(1, sizeof *w);
  if (!w || !(w->path = strdup(path))) {
    tc_error_set(err, "tenet: out of memory");
    free(w);
    return NULL;
  }
  w->arch = info->arch;
  w->ta = tenet_arch_of(info->arch);
  w->addr_mask = info->arch->ptr_size == 8 ? UINT64_MAX : UINT32_MAX;
  if (!map_regs(w->arch, w->ta, w->idx)) {
    tc_error_set(err, "tenet: the %s register table lacks Tenet's registers",
                 w->arch->name);
    writer_free(w);
    return NULL;
  }
  w->f = tc_outfile_fopen(path, "w");
  if (!w->f) {
    tc_error_set(err, "tenet: %s: cannot create: %s", path, strerror(errno));
    writer_free(w);
    return NULL;
  }
  if (info->initial_state) {
    for (unsigned i = 0; i < w->ta->nregs; i++)
      w->start[i] = tc_state_get(w->arch, info->initial_state, w->idx[i]);
    w->start[w->ta->nregs - 1] = info->entry;
    w->have_start = true;
  }
  return w;
}

static bool pend_reserve(tc_writer *w, size_t n) {
  if (w->plen + n + 1 <= w->pcap)
    return true;
  size_t cap = w->pcap ? w->pcap : 256;
  while (cap < w->plen + n + 1)
    cap *= 2;
  char *p = realloc(w->pend, cap);
  if (!p)
    return false;
  w->pend = p;
  w->pcap = cap;
  return true;
}

/* Appends ",mr=0xADDR:HEX" (or mw) to the pending memory text. */
static bool pend_mem(tc_writer *w, bool write, uint64_t addr,
                     const uint8_t *bytes, uint32_t size) {
  static const char hex[] = "0123456789abcdef";
  if (!size)
    return true;
  if (!pend_reserve(w, 32 + 2 * (size_t)size))
    return false;
  char *p = w->pend + w->plen;
  p +=
      sprintf(p, ",m%c=0x%" PRIx64 ":", write ? 'w' : 'r', addr & w->addr_mask);
  for (uint32_t i = 0; i < size; i++) {
    *p++ = hex[bytes[i] >> 4];
    *p++ = hex[bytes[i] & 15];
  }
  *p = 0;
  w->plen = (size_t)(p - w->pend);
  return true;
}

/* Writes one line: the registers that differ from the last line (all on
 * the first), the PC, then the pending memory. vals are in Tenet's order,
 * the PC last. */
static void put_line(tc_writer *w, const uint64_t *vals) {
  unsigned pc_slot = w->ta->nregs - 1;
  for (unsigned i = 0; i < pc_slot; i++) {
    if (w->started && vals[i] == w->last[i])
      continue;
    fprintf(w->f, "%s=0x%" PRIx64 ",", w->ta->regs[i], vals[i]);
    w->last[i] = vals[i];
  }
  fprintf(w->f, "%s=0x%" PRIx64 "%s\n", w->ta->regs[pc_slot],
          vals[pc_slot] & w->addr_mask, w->plen ? w->pend : "");
  w->started = true;
  w->plen = 0;
}

static void get_vals(const tc_writer *w, const uint8_t *state, uint64_t *vals) {
  for (unsigned i = 0; i < w->ta->nregs; i++)
    vals[i] = tc_state_get(w->arch, state, w->idx[i]);
}

static int write_insn(tc_writer *w, const tc_insn_event *e, tc_error *err) {
  if (!e->state_before || !e->state_after) {
    tc_error_set(err, "tenet: instruction %" PRIu64 " has no register state",
                 e->index);
    return -1;
  }
  if (e->size == 0 && e->tid == TC_TID_BLOCK) {
    tc_error_set(err,
                 "tenet: event %" PRIu64 " at 0x%" PRIx64
                 " is a coverage block (drcov), not an instruction",
                 e->index, e->pc);
    return -1;
  }
  uint64_t vals[MAX_TREGS];
  get_vals(w, e->state_before, vals);
  vals[w->ta->nregs - 1] = e->pc;
  put_line(w, vals);
  for (uint32_t i = 0; i < e->nmem; i++) {
    const tc_mem_access *m = &e->mem[i];
    bool wr = m->kind == TC_MEM_WRITE;
    if (!pend_mem(w, wr, m->addr, wr ? m->after : m->before, m->size)) {
      tc_error_set(err, "tenet: out of memory");
      return -1;
    }
  }
  get_vals(w, e->state_after, w->after);
  return 0;
}

static int tenet_write_event(tc_writer *w, const tc_event *ev, tc_error *err) {
  if (ev->kind == TC_EV_INSN)
    return write_insn(w, &ev->u.insn, err);
  if (ev->kind == TC_EV_SYSCALL || ev->kind == TC_EV_SIGNAL) {
    /* What the kernel wrote is part of the change the next line shows
     * (Tenet's memory view then has read(2)'s data, a signal's frame). */
    bool sys = ev->kind == TC_EV_SYSCALL;
    uint32_t n = sys ? ev->u.sys.nmem : ev->u.sig.nmem;
    for (uint32_t i = 0; i < n; i++) {
      const tc_mem_access *m = sys ? &ev->u.sys.mem[i] : &ev->u.sig.mem[i];
      if (!pend_mem(w, true, m->addr, m->after, m->size)) {
        tc_error_set(err, "tenet: out of memory");
        return -1;
      }
    }
  }
  return 0;
}

static int tenet_close_writer(tc_writer *w, tc_error *err) {
  /* A last line with the last instruction's effects: the state where the
   * recording stopped (Tenet's final timestamp; readers take it as the
   * state after the last instruction, not as one more). */
  if (w->started)
    put_line(w, w->after);
  else if (w->have_start)
    put_line(w, w->start); /* no instruction: the state it would start in */
  int rc = 0;
  if (ferror(w->f)) {
    tc_error_set(err, "tenet: %s: write failed: %s", w->path, strerror(errno));
    rc = -1;
  }
  if (fclose(w->f) != 0 && rc == 0) {
    tc_error_set(err, "tenet: %s: %s", w->path, strerror(errno));
    rc = -1;
  }
  writer_free(w);
  return rc;
}

/* ================================================================ reader */

/* One parsed line: the registers it set and its memory entries. */
typedef struct tline {
  uint64_t vals[MAX_TREGS];
  uint32_t set; /* bit i: regs[i] given on this line */
  tc_mem_access *acc;
  uint32_t nacc, capacc;
  uint8_t *data;
  size_t dlen, dcap;
  unsigned lineno;
} tline;

struct tc_reader {
  FILE *f;
  char *path;
  tc_trace_info info;
  const tenet_arch *ta;
  int idx[MAX_TREGS];
  uint64_t addr_mask;
  char *buf;
  size_t bufcap;
  unsigned lineno;
  bool cut;       /* the line just read ends the file without a newline */
  tline lines[2]; /* the current line and the one after it */
  int cur;        /* lines[cur] is the current instruction */
  bool have_cur;
  uint8_t *state_a, *state_b, *initial;
  uint16_t changed[MAX_TREGS];
  uint64_t index;
};

static void reader_free(tc_reader *r) {
  if (!r)
    return;
  if (r->f)
    fclose(r->f);
  for (int i = 0; i < 2; i++) {
    free(r->lines[i].acc);
    free(r->lines[i].data);
  }
  free(r->buf);
  free(r->state_a);
  free(r->state_b);
  free(r->initial);
  free(r->path);
  free(r);
}

static void tenet_close_reader(tc_reader *r) { reader_free(r); }

static bool name_eq(const char *s, size_t n, const char *name) {
  if (strlen(name) != n)
    return false;
  for (size_t i = 0; i < n; i++)
    if (tolower((unsigned char)s[i]) != name[i])
      return false;
  return true;
}

static int reg_slot(const tenet_arch *ta, const char *s, size_t n) {
  for (unsigned i = 0; i < ta->nregs; i++)
    if (name_eq(s, n, ta->regs[i]))
      return (int)i;
  return -1;
}

static int tenet_probe(const uint8_t *head, size_t n, const char *path) {
  size_t pl = path ? strlen(path) : 0;
  if (pl > 6 && strcmp(path + pl - 6, ".tenet") == 0)
    return 1;
  /* A first line that starts with one of Tenet's registers = hex. */
  size_t k = 0;
  while (k < n && k < 8 && isalnum(head[k]))
    k++;
  if (k == 0 || k >= n || head[k] != '=' || k + 1 >= n ||
      !isxdigit(head[k + 1]))
    return 0;
  for (size_t i = 0; i < sizeof tenet_arches / sizeof tenet_arches[0]; i++)
    if (reg_slot(&tenet_arches[i], (const char *)head, k) >= 0)
      return 1;
  return 0;
}

static bool parse_hex(const char *s, size_t n, uint64_t *out) {
  while (n && isspace((unsigned char)*s))
    s++, n--;
  while (n && isspace((unsigned char)s[n - 1]))
    n--;
  if (n > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
    s += 2, n -= 2;
  if (!n)
    return false;
  uint64_t v = 0;
  for (size_t i = 0; i < n; i++) {
    int c = (unsigned char)s[i];
    if (!isxdigit(c) || v >> 60)
      return false;
    v = v << 4 | (uint64_t)(isdigit(c) ? c - '0' : tolower(c) - 'a' + 10);
  }
  *out = v;
  return true;
}

/* Reads the next non-blank line into r->buf; 1, 0 at the end, -1. */
static int read_line(tc_reader *r, size_t *len, tc_error *err) {
  for (;;) {
    errno = 0;
    ssize_t n = getline(&r->buf, &r->bufcap, r->f);
    if (n < 0) {
      if (ferror(r->f)) {
        tc_error_set(err, "tenet: %s: read failed: %s", r->path,
                     tc_infile_strerror(errno));
        return -1;
      }
      return 0;
    }
    r->lineno++;
    r->cut = r->buf[n - 1] != '\n';
    while (n && (r->buf[n - 1] == '\n' || r->buf[n - 1] == '\r' ||
                 r->buf[n - 1] == ' '))
      n--;
    r->buf[n] = 0;
    if (memchr(r->buf, 0, (size_t)n)) {
      tc_error_set(err, "tenet: %s: line %u: a NUL byte in a text trace",
                   r->path, r->lineno);
      return -1;
    }
    if (n) {
      *len = (size_t)n;
      return 1;
    }
  }
}

static bool line_add_mem(tline *l, uint8_t kind, uint64_t addr, size_t off,
                         uint32_t size) {
  if (l->nacc == l->capacc) {
    uint32_t cap = l->capacc ? l->capacc * 2 : 8;
    tc_mem_access *p = realloc(l->acc, cap * sizeof *p);
    if (!p)
      return false;
    l->acc = p;
    l->capacc = cap;
  }
  /* Data pointers are fixed up once the line's data buffer is final. */
  l->acc[l->nacc++] =
      (tc_mem_access){addr, size, kind, (const uint8_t *)(uintptr_t)off,
                      (const uint8_t *)(uintptr_t)off};
  return true;
}

/* Parses r->buf (len bytes) into l. */
static int parse_line(tc_reader *r, tline *l, size_t len, tc_error *err) {
  l->set = 0;
  l->nacc = 0;
  l->dlen = 0;
  l->lineno = r->lineno;
  const char *s = r->buf, *end = r->buf + len;
  uint64_t reg_mask = r->info.arch->ptr_size == 8 ? UINT64_MAX : UINT32_MAX;
  while (s < end) {
    const char *comma = memchr(s, ',', (size_t)(end - s));
    const char *e = comma ? comma : end;
    const char *eq = memchr(s, '=', (size_t)(e - s));
    if (!eq) {
      tc_error_set(err, "tenet: %s: line %u: '%.*s' is not NAME=VALUE", r->path,
                   r->lineno, (int)(e - s > 40 ? 40 : e - s), s);
      return -1;
    }
    const char *name = s, *val = eq + 1;
    size_t nl = (size_t)(eq - s), vl = (size_t)(e - val);
    while (nl && isspace((unsigned char)*name))
      name++, nl--;
    while (nl && isspace((unsigned char)name[nl - 1]))
      nl--;
    int slot = reg_slot(r->ta, name, nl);
    if (slot >= 0) {
      uint64_t v;
      if (!parse_hex(val, vl, &v) || (v & ~reg_mask)) {
        tc_error_set(err, "tenet: %s: line %u: bad value for %.*s", r->path,
                     r->lineno, (int)nl, name);
        return -1;
      }
      l->vals[slot] = v;
      l->set |= 1u << slot;
    } else if (name_eq(name, nl, "mr") || name_eq(name, nl, "mw") ||
               name_eq(name, nl, "mrw")) {
      const char *colon = memchr(val, ':', vl);
      uint64_t addr;
      if (!colon || !parse_hex(val, (size_t)(colon - val), &addr) ||
          (addr & ~r->addr_mask)) {
        tc_error_set(err, "tenet: %s: line %u: bad address in %.*s", r->path,
                     r->lineno, (int)nl, name);
        return -1;
      }
      const char *h = colon + 1;
      size_t hl = (size_t)(e - h);
      while (hl && isspace((unsigned char)*h))
        h++, hl--;
      while (hl && isspace((unsigned char)h[hl - 1]))
        hl--;
      if (hl % 2 || hl / 2 > UINT32_MAX) {
        tc_error_set(err, "tenet: %s: line %u: odd number of hex digits",
                     r->path, r->lineno);
        return -1;
      }
      size_t size = hl / 2, off = l->dlen;
      if (size &&
          (addr + size - 1 < addr || (addr + size - 1) & ~r->addr_mask)) {
        tc_error_set(err,
                     "tenet: %s: line %u: %.*s wraps around the address "
                     "space",
                     r->path, r->lineno, (int)nl, name);
        return -1;
      }
      if (l->dlen + size > l->dcap) {
        size_t cap = l->dcap ? l->dcap : 256;
        while (cap < l->dlen + size)
          cap *= 2;
        uint8_t *p = realloc(l->data, cap);
        if (!p) {
          tc_error_set(err, "tenet: out of memory");
          return -1;
        }
        l->data = p;
        l->dcap = cap;
      }
      for (size_t i = 0; i < size; i++) {
        if (!isxdigit((unsigned char)h[2 * i]) ||
            !isxdigit((unsigned char)h[2 * i + 1])) {
          tc_error_set(err, "tenet: %s: line %u: bad hex byte in %.*s", r->path,
                       r->lineno, (int)nl, name);
          return -1;
        }
        l->data[off + i] =
            (uint8_t)(tc_hex_digit((unsigned char)h[2 * i]) << 4 |
                      tc_hex_digit((unsigned char)h[2 * i + 1]));
      }
      l->dlen += size;
      /* No bytes: nothing was accessed (Tenet maps none either). */
      bool rd = tolower((unsigned char)name[1]) == 'r',
           wr = nl == 3 || tolower((unsigned char)name[1]) == 'w';
      if (size &&
          ((rd && !line_add_mem(l, TC_MEM_READ, addr, off, (uint32_t)size)) ||
           (wr && !line_add_mem(l, TC_MEM_WRITE, addr, off, (uint32_t)size)))) {
        tc_error_set(err, "tenet: out of memory");
        return -1;
      }
    } else {
      tc_error_set(err, "tenet: %s: line %u: unknown entry '%.*s'", r->path,
                   r->lineno, (int)(nl > 40 ? 40 : nl), name);
      return -1;
    }
    s = comma ? comma + 1 : end;
  }
  if (!(l->set & 1u << (r->ta->nregs - 1))) {
    tc_error_set(err, "tenet: %s: line %u: no %s", r->path, r->lineno,
                 r->ta->regs[r->ta->nregs - 1]);
    return -1;
  }
  for (uint32_t i = 0; i < l->nacc; i++) {
    size_t off = (size_t)(uintptr_t)l->acc[i].before;
    l->acc[i].before = l->acc[i].after = l->data + off;
  }
  return 0;
}

/* Applies a line's registers to a state image. */
static void apply(tc_reader *r, const tline *l, uint8_t *state) {
  for (unsigned i = 0; i < r->ta->nregs; i++)
    if (l->set & 1u << i)
      tc_state_set(r->info.arch, state, r->idx[i], l->vals[i]);
}

/* The arch from the first line's register names: the first name only one
 * of Tenet's sets has decides (r8-r12 are x86-64 and arm registers; rip,
 * eip, pc... are not). */
static const tenet_arch *detect_arch(const char *s, size_t len) {
  const char *end = s + len;
  const tenet_arch *shared = NULL;
  while (s < end) {
    const char *eq = memchr(s, '=', (size_t)(end - s));
    if (!eq)
      break;
    size_t nl = (size_t)(eq - s);
    int hits = 0;
    const tenet_arch *hit = NULL;
    for (size_t i = 0; i < sizeof tenet_arches / sizeof tenet_arches[0]; i++)
      if (reg_slot(&tenet_arches[i], s, nl) >= 0) {
        hits++;
        hit = &tenet_arches[i];
      }
    if (hits == 1)
      return hit;
    if (hits && !shared)
      shared = hit;
    const char *comma = memchr(eq, ',', (size_t)(end - eq));
    if (!comma)
      break;
    s = comma + 1;
  }
  return shared;
}

static tc_reader *tenet_open_reader(const char *path, tc_error *err) {
  tc_reader *r = calloc(1, sizeof *r);
  if (!r || !(r->path = strdup(path))) {
    tc_error_set(err, "tenet: out of memory");
    free(r);
    return NULL;
  }
  r->f = tc_infile_open(path, TC_INFILE_STREAM, "tenet", err);
  if (!r->f)
    goto fail;
  size_t len;
  int rc = read_line(r, &len, err);
  if (rc <= 0) {
    if (rc == 0)
      tc_error_set(err, "tenet: %s: empty trace", path);
    goto fail;
  }
  r->ta = detect_arch(r->buf, len);
  if (!r->ta) {
    tc_error_set(err,
                 "tenet: %s: line %u: no register of Tenet's x86-64, x86 "
                 "or arm sets",
                 path, r->lineno);
    goto fail;
  }
  const tc_arch *a = tc_arch_by_id(r->ta->id);
  r->info.arch = a;
  r->addr_mask = a->ptr_size == 8 ? UINT64_MAX : UINT32_MAX;
  if (!map_regs(a, r->ta, r->idx)) {
    tc_error_set(err, "tenet: the %s register table lacks Tenet's registers",
                 a->name);
    goto fail;
  }
  r->state_a = calloc(1, a->state_size);
  r->state_b = calloc(1, a->state_size);
  r->initial = calloc(1, a->state_size);
  if (!r->state_a || !r->state_b || !r->initial) {
    tc_error_set(err, "tenet: out of memory");
    goto fail;
  }
  if (parse_line(r, &r->lines[0], len, err) < 0)
    goto fail;
  apply(r, &r->lines[0], r->initial);
  memcpy(r->state_a, r->initial, a->state_size);
  r->info.initial_state = r->initial;
  r->info.entry = r->lines[0].vals[r->ta->nregs - 1];
  r->cur = 0;
  r->have_cur = true;
  return r;
fail:
  reader_free(r);
  return NULL;
}

static const tc_trace_info *tenet_reader_info(tc_reader *r) { return &r->info; }

/* Line i gives the state before instruction i; line i+1 the state after
 * it and the memory it touched. */
static int tenet_next_event(tc_reader *r, tc_event *ev, tc_error *err) {
  if (!r->have_cur)
    return 0;
  const tc_arch *a = r->info.arch;
  tline *cur = &r->lines[r->cur], *nxt = &r->lines[r->cur ^ 1];
  size_t len;
  int rc = read_line(r, &len, err);
  if (rc <= 0) {
    /* The last line is the state the trace ends in, not an instruction. */
    r->have_cur = false;
    return rc;
  }
  if (r->cut) {
    /* A recording that was killed ends in a line cut short (every line
     * tracecorn writes ends in a newline): the trace ends before it, with
     * the instructions of every whole line. */
    tc_notice("tenet: %s: line %u is cut short (no newline at the end): "
              "read up to it",
              r->path, r->lineno);
    r->have_cur = false;
    return 0;
  }
  if (parse_line(r, nxt, len, err) < 0)
    return -1;
  memcpy(r->state_b, r->state_a, a->state_size);
  apply(r, nxt, r->state_b);
  memset(ev, 0, sizeof *ev);
  ev->kind = TC_EV_INSN;
  tc_insn_event *in = &ev->u.insn;
  in->index = r->index++;
  in->pc = cur->vals[r->ta->nregs - 1];
  in->state_before = r->state_a;
  in->state_after = r->state_b;
  /* Changed registers, ascending by arch index. */
  uint16_t n = 0;
  for (int reg = 0; reg < a->nregs; reg++)
    if (memcmp(r->state_a + a->regs[reg].offset,
               r->state_b + a->regs[reg].offset, a->regs[reg].size) != 0)
      r->changed[n++] = (uint16_t)reg;
  in->nregs = n;
  in->regs = r->changed;
  in->nmem = nxt->nacc;
  in->mem = nxt->acc;
  /* The next call's current line is this one's next; the states swap. */
  uint8_t *t = r->state_a;
  r->state_a = r->state_b;
  r->state_b = t;
  r->cur ^= 1;
  return 1;
}

const tc_format tc_format_tenet = {
    .name = "tenet",
    .description = "Tenet text trace (IDA Pro, Binary Ninja)",
    .caps = TC_CAP_MEM | TC_CAP_MEM_KIND | TC_CAP_MEM_EXACT,
    .holds_reg = tenet_holds_reg,
    .extension = tenet_extension,
    .supports = tenet_supports,
    .open_writer = tenet_open_writer,
    .write_event = tenet_write_event,
    .close_writer = tenet_close_writer,
    .probe = tenet_probe,
    .open_reader = tenet_open_reader,
    .reader_info = tenet_reader_info,
    .next_event = tenet_next_event,
    .close_reader = tenet_close_reader,
};
