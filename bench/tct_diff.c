/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Differential check for work on the tct writer's speed (issue 19): random
 * event streams (every arch; registers changed listed or not, out of
 * order, odd instruction sizes; memory accesses of 0 to 300000 bytes,
 * page-crossing, hitting and missing the memory value cache, after-bytes
 * held by registers; syscalls, keyframes, maps, signals) are written by
 * an older tct writer (tc_format_tct_base: writers/tct/tct.c of another
 * commit, compiled with -Dtc_format_tct=tc_format_tct_base) and by this
 * build's; the files must be byte-identical, and both readers must read
 * the same events from them. bench/tct-diff.sh builds and runs it.
 *   tct_diff [STREAMS] [DIR] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tracecorn/tracecorn.h>

extern const tc_format tc_format_tct_base;
extern const tc_format tc_format_tct;

static uint64_t rs = 88172645463325252ull;
static int valid; /* only what the reader accepts */
static uint64_t rnd(void) {
  rs ^= rs << 13;
  rs ^= rs >> 7;
  rs ^= rs << 17;
  return rs;
}
static uint64_t rn(uint64_t n) { return n ? rnd() % n : 0; }

#define NEV 3000
#define MAXM 6

typedef struct acc {
  uint64_t addr;
  uint32_t size;
  uint8_t kind;
  uint8_t before[5000], after[5000];
} acc;

static acc recent[64];
/* A hot region whose accesses read what the last ones left (0 where none
 * did): cache hits over partly known ranges. */
#define HOT 0x50000000ull
static uint8_t shadow[3 * 4096];
static int nrecent;

static void fill(uint8_t *p, size_t n) {
  int mode = (int)rn(3);
  for (size_t i = 0; i < n; i++)
    p[i] = mode == 0 ? 0 : mode == 1 ? (uint8_t)rn(4) : (uint8_t)rnd();
}

static uint32_t pick_size(void) {
  static const uint32_t sz[] = {1, 2,  4,  8,  8,  8,   4,    3,
                                5, 16, 10, 32, 64, 100, 4100, 0};
  unsigned k = (unsigned)rn(100);
  if (k < 85)
    return sz[rn(7)];
  uint32_t v = sz[rn(16)];
  return valid && v == 0 ? 1 : v;
}

static uint64_t pick_addr(uint32_t size) {
  static const uint64_t pages[] = {0x400000,   0x401000,   0x7fff0000,
                                   0x10000000, 0x20000000, 0x20001000};
  uint64_t base = pages[rn(6)] + (rn(4) << 12) * (rn(3) == 0 ? 4096 : 1);
  unsigned k = (unsigned)rn(10);
  if (k < 3)
    return base + 4096 - rn(size + 1); /* crosses or touches the end */
  if (k < 4)
    return base + 64 * rn(64) - rn(2) * rn(9);
  return base + rn(4096);
}

static void make_mem(tc_mem_access *m, acc *store, uint32_t n,
                     const uint8_t *state_after, const tc_arch *a, int kernel) {
  for (uint32_t i = 0; i < n; i++) {
    acc *x = &store[i];
    if (rn(4) == 0) {
      static const uint32_t hs[] = {1,  2,  4,   8,   8,   8,    16,  63,
                                    64, 65, 100, 130, 200, 4096, 5000};
      x->size = hs[rn(15)];
      x->addr = HOT + rn(3 * 4096 - x->size + 1);
      if (rn(3) == 0)
        x->addr &= ~63ull;
      memcpy(x->before, shadow + (x->addr - HOT), x->size);
    } else if (nrecent && rn(3) == 0) {
      *x = recent[rn((uint64_t)nrecent)];
      memcpy(x->before, x->after, x->size); /* the cache holds it */
      if (rn(5) == 0 && x->size)
        x->before[rn(x->size)] ^= 1;
    } else {
      x->size = pick_size();
      x->addr = pick_addr(x->size);
      fill(x->before, x->size);
    }
    x->kind = kernel || rn(2) ? TC_MEM_WRITE : TC_MEM_READ;
    if (x->kind == TC_MEM_READ) {
      memcpy(x->after, x->before, x->size);
    } else if (state_after && rn(2) && x->size <= 8) {
      int r = (int)rn((uint64_t)a->nregs);
      uint32_t rsz = a->regs[r].size;
      memcpy(x->after, state_after + a->regs[r].offset,
             rsz < x->size ? rsz : x->size);
      if (rsz < x->size)
        fill(x->after + rsz, x->size - rsz);
    } else {
      fill(x->after, x->size);
    }
    if (rn(4) == 0 && x->size)
      x->addr = (x->addr & ~0xfffull) + rn(8) * 8; /* word-aligned */
    if (x->addr >= HOT && x->addr + x->size <= HOT + sizeof shadow)
      memcpy(shadow + (x->addr - HOT), x->after, x->size);
    m[i] = (tc_mem_access){x->addr, x->size, x->kind, x->before, x->after};
    if (nrecent < 64)
      recent[nrecent++] = *x;
    else
      recent[rn(64)] = *x;
  }
}

static int run(const tc_arch *a, uint64_t seed, const char *pa,
               const char *pb) {
  rs = seed * 0x9e3779b97f4a7c15ull + 1;
  nrecent = 0;
  memset(shadow, 0, sizeof shadow);
  size_t ss = a->state_size;
  uint8_t *init = calloc(1, ss), *before = calloc(1, ss),
          *after = calloc(1, ss);
  fill(init, ss);
  tc_trace_info info;
  memset(&info, 0, sizeof info);
  info.arch = a;
  info.entry = 0x401000;
  info.has_memory = 1;
  info.keyframe_interval = 4096;
  info.initial_state = rn(2) ? init : NULL;
  const char *argv[] = {"prog", NULL};
  info.argc = 1;
  info.argv = argv;
  info.exe_path = "/prog";
  tc_error err = {{0}};
  tc_writer *wa = tc_format_tct_base.open_writer(pa, &info, &err);
  tc_writer *wb = tc_format_tct.open_writer(pb, &info, &err);
  if (!wa || !wb) {
    fprintf(stderr, "open: %s\n", err.msg);
    return 1;
  }
  memcpy(after, init, ss);
  static acc store[MAXM];
  static tc_mem_access m[MAXM];
  static uint16_t regs[600];
  uint64_t index = 0, pcs[8];
  uint32_t tid = 1000;
  for (int k = 0; k < 8; k++)
    pcs[k] = 0x401000 + rn(0x3000);
  for (int e = 0; e < NEV; e++) {
    tc_event ev;
    memset(&ev, 0, sizeof ev);
    unsigned kind = (unsigned)rn(100);
    if (kind < 90) {
      memcpy(before, after, ss);
      if (rn(20) == 0) /* a change the previous event did not list */
        before[rn(ss)] ^= (uint8_t)(1 + rn(255));
      memcpy(after, before, ss);
      int nregs = 0;
      int prev = -1;
      for (int r = 0; r < a->nregs; r++) {
        if (rn(a->nregs) < 3 || (r == a->pc_reg && rn(4))) {
          uint8_t *p = after + a->regs[r].offset;
          unsigned md = (unsigned)rn(4);
          if (md == 0)
            fill(p, a->regs[r].size);
          else if (md == 1)
            p[0] = (uint8_t)(p[0] + 1);
          else if (md == 2)
            p[0] = (uint8_t)(p[0] - rn(3));
          if (rn(10) && nregs < 600)
            regs[nregs++] = (uint16_t)r, prev = r;
        }
      }
      (void)prev;
      if (!valid && rn(50) == 0 && nregs > 1) { /* out of order */
        uint16_t t = regs[0];
        regs[0] = regs[nregs - 1];
        regs[nregs - 1] = t;
      }
      tc_insn_event *i = &ev.u.insn;
      ev.kind = TC_EV_INSN;
      i->index = rn(30) == 0 ? index + rn(5) : index;
      index = i->index + 1;
      i->pc = rn(3) ? tc_state_get(a, before, a->pc_reg) : pcs[rn(8)];
      if (rn(40) == 0)
        tid = 1000 + (uint32_t)rn(3);
      i->tid = tid;
      i->size = (uint8_t)(1 + rn(rn(30) == 0 ? (valid ? 16 : 20) : 8));
      for (int b = 0; b < 16; b++)
        i->bytes[b] = (uint8_t)((i->pc * 31 + (uint64_t)b) >> 3);
      if (rn(20) == 0)
        i->bytes[rn(16)] ^= 1;
      i->nregs = (uint16_t)nregs;
      i->regs = regs;
      i->state_before = before;
      i->state_after = after;
      i->nmem = (uint32_t)(rn(3) ? rn(3) : rn(MAXM + 1));
      make_mem(m, store, i->nmem, after, a, 0);
      if (i->nmem > 1 && rn(200) == 0) {
        static uint8_t big_b[200000], big_a[200000];
        fill(big_b, sizeof big_b);
        fill(big_a, sizeof big_a);
        m[1] = (tc_mem_access){0x61000000 + rn(4096),
                               (uint32_t)(50000 + rn(150000)), TC_MEM_WRITE,
                               big_b, big_a};
      }
      i->mem = m;
    } else if (kind < 94) {
      ev.kind = TC_EV_SYSCALL;
      tc_syscall_event *s = &ev.u.sys;
      s->insn_index = index;
      s->tid = tid;
      s->nr = (uint32_t)rn(300);
      s->ret = (int64_t)rn(100) - 50;
      s->nmem = (uint32_t)rn(4);
      make_mem(m, store, s->nmem, NULL, a, 1);
      if (s->nmem && rn(10) == 0) { /* a big kernel write: buffer growth */
        static uint8_t big_b[300000], big_a[300000];
        fill(big_b, sizeof big_b);
        fill(big_a, sizeof big_a);
        m[0] = (tc_mem_access){0x60000000 + rn(4096),
                               (uint32_t)(100000 + rn(200000)), TC_MEM_WRITE,
                               big_b, big_a};
      }
      s->mem = m;
    } else if (kind < 96) {
      ev.kind = TC_EV_KEYFRAME;
      ev.u.key.insn_index = index;
      ev.u.key.tid = tid;
      if (rn(2))
        after[rn(ss)] ^= 0x10;
      ev.u.key.state = after;
    } else if (kind < 98) {
      ev.kind = TC_EV_MAP;
      ev.u.map.addr = 0x30000000 + (rn(16) << 12);
      ev.u.map.size = 4096;
      ev.u.map.prot = 3;
      ev.u.map.name = "[anon]";
    } else {
      ev.kind = TC_EV_SIGNAL;
      ev.u.sig.insn_index = index;
      ev.u.sig.tid = tid;
      ev.u.sig.signal = 11;
      ev.u.sig.nmem = (uint32_t)rn(3);
      make_mem(m, store, ev.u.sig.nmem, NULL, a, 1);
      ev.u.sig.mem = m;
    }
    if (tc_format_tct_base.write_event(wa, &ev, &err) < 0 ||
        tc_format_tct.write_event(wb, &ev, &err) < 0) {
      fprintf(stderr, "write: %s\n", err.msg);
      return 1;
    }
  }
  tc_event ex;
  memset(&ex, 0, sizeof ex);
  ex.kind = TC_EV_EXIT;
  ex.u.exit.insn_count = index;
  tc_format_tct_base.write_event(wa, &ex, &err);
  tc_format_tct.write_event(wb, &ex, &err);
  if (tc_format_tct_base.close_writer(wa, &err) < 0 ||
      tc_format_tct.close_writer(wb, &err) < 0) {
    fprintf(stderr, "close: %s\n", err.msg);
    return 1;
  }
  free(init);
  free(before);
  free(after);
  return 0;
}

static int same_file(const char *a, const char *b) {
  FILE *fa = fopen(a, "rb"), *fb = fopen(b, "rb");
  int same = fa && fb;
  while (same) {
    int ca = getc(fa), cb = getc(fb);
    if (ca != cb)
      same = 0;
    if (ca == EOF)
      break;
  }
  if (fa)
    fclose(fa);
  if (fb)
    fclose(fb);
  return same;
}

/* Reads the file with the base reader and the new one: same events. */
static int same_read(const char *path, const tc_arch *a) {
  tc_error ea = {{0}}, eb = {{0}};
  tc_reader *ra = tc_format_tct_base.open_reader(path, &ea);
  tc_reader *rb = tc_format_tct.open_reader(path, &eb);
  if (!ra || !rb) {
    printf("open_reader: %s / %s\n", ea.msg, eb.msg);
    return 0;
  }
  int ok = 1;
  long n = 0;
  for (;; n++) {
    tc_event x, y;
    int ga = tc_format_tct_base.next_event(ra, &x, &ea);
    int gb = tc_format_tct.next_event(rb, &y, &eb);
    if (ga != gb || (ga < 0 && strcmp(ea.msg, eb.msg) != 0)) {
      printf("read differs at event %ld: %d %d %s / %s\n", n, ga, gb, ea.msg,
             eb.msg);
      ok = 0;
      break;
    }
    if (ga <= 0)
      break;
    if (x.kind != y.kind) {
      ok = 0;
      break;
    }
    const tc_mem_access *ma = NULL, *mb = NULL;
    uint32_t nm = 0;
    if (x.kind == TC_EV_INSN) {
      const tc_insn_event *i = &x.u.insn, *j = &y.u.insn;
      if (i->index != j->index || i->pc != j->pc || i->tid != j->tid ||
          i->size != j->size || memcmp(i->bytes, j->bytes, 16) != 0 ||
          i->nregs != j->nregs || memcmp(i->regs, j->regs, i->nregs * 2) != 0 ||
          memcmp(i->state_after, j->state_after, a->state_size) != 0 ||
          i->nmem != j->nmem)
        ok = 0;
      ma = i->mem, mb = j->mem, nm = i->nmem;
    } else if (x.kind == TC_EV_SYSCALL) {
      if (x.u.sys.nmem != y.u.sys.nmem)
        ok = 0;
      ma = x.u.sys.mem, mb = y.u.sys.mem, nm = x.u.sys.nmem;
    }
    for (uint32_t k = 0; ok && k < nm; k++)
      if (ma[k].addr != mb[k].addr || ma[k].size != mb[k].size ||
          ma[k].kind != mb[k].kind ||
          memcmp(ma[k].before, mb[k].before, ma[k].size) != 0 ||
          memcmp(ma[k].after, mb[k].after, ma[k].size) != 0)
        ok = 0;
    if (!ok) {
      printf("events differ at %ld\n", n);
      break;
    }
  }
  if (getenv("DIFF_VERBOSE"))
    printf("read %ld events%s%s\n", n, ea.msg[0] ? ": " : "", ea.msg);
  tc_format_tct_base.close_reader(ra);
  tc_format_tct.close_reader(rb);
  return ok;
}

int main(int argc, char **argv) {
  int iters = argc > 1 ? atoi(argv[1]) : 50;
  const char *dir = argc > 2 ? argv[2] : "/tmp";
  char pa[4096], pb[4096];
  snprintf(pa, sizeof pa, "%s/tct_diff.a.tct", dir);
  snprintf(pb, sizeof pb, "%s/tct_diff.b.tct", dir);
  const char *arches[] = {"x86-64", "x86",    "arm64",   "arm",
                          "mips",   "mipsel", "mips64el"};
  int fail = 0;
  for (int it = 0; it < iters; it++) {
    const tc_arch *a = tc_arch_by_name(arches[it % 7]);
    valid = (it / 7) % 2;
    if (run(a, (uint64_t)it + 1, pa, pb))
      return 2;
    if (!same_file(pa, pb)) {
      printf("DIFF: iteration %d arch %s\n", it, arches[it % 7]);
      fail = 1;
    }
    if (!same_read(pb, a)) {
      printf("READ DIFF: iteration %d arch %s\n", it, arches[it % 7]);
      fail = 1;
    }
  }
  printf("%d streams, %s\n", iters, fail ? "DIFFERENCES" : "all identical");
  remove(pa);
  remove(pb);
  return fail;
}
