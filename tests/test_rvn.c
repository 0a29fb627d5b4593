/* SPDX-License-Identifier: GPL-2.0-or-later */
/* REVEN binary trace format (rvn): the container header, machine
 * description and every event shape byte by byte (derived by hand from
 * rvnbintrace.md), the cache, the synthetic page tables, round trips of
 * every x86 example guest through `tracecorn verify`, seek against
 * replay, determinism, and refusal of corrupted copies. */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "testutil.h"
#include "tracecorn/tracecorn.h"
#include "writers/rvn/rvn.h"

extern const tc_format tc_format_rvn;
static const tc_format *F = &tc_format_rvn;

/* ------------------------------------------------------------- helpers */

static uint64_t rng_state = 0x2545F4914F6CDD1Dull;
static uint64_t rnd(void) { return tu_xorshift(&rng_state); }

static uint64_t le(const uint8_t *p, unsigned n) {
  uint64_t v = 0;
  for (unsigned i = 0; i < n; i++)
    v |= (uint64_t)p[i] << (8 * i);
  return v;
}

static void put(uint8_t *p, uint64_t v, unsigned n) {
  for (unsigned i = 0; i < n; i++)
    p[i] = (uint8_t)(v >> (8 * i));
}

static int reg(const tc_arch *a, const char *name) {
  int r = tc_arch_reg_index(a, name);
  CU_ASSERT_FATAL(r >= 0);
  return r;
}

static void set(const tc_arch *a, uint8_t *st, const char *name, uint64_t v) {
  tc_state_set(a, st, reg(a, name), v);
}

static uint64_t get(const tc_arch *a, const uint8_t *st, const char *name) {
  return tc_state_get(a, st, reg(a, name));
}

/* A growable byte string for expected encodings. */
typedef struct bytes {
  uint8_t b[4096];
  size_t n;
} bytes;

static void b_u(bytes *x, uint64_t v, unsigned n) {
  put(x->b + x->n, v, n);
  x->n += n;
}
static void b_s(bytes *x, const char *s) {
  memcpy(x->b + x->n, s, strlen(s));
  x->n += strlen(s);
}
static void b_fill(bytes *x, uint8_t v, size_t n) {
  memset(x->b + x->n, v, n);
  x->n += n;
}

/* The five sections of a trace.bin: body offsets and sizes. */
typedef struct sections {
  uint64_t off[5], size[5];
} sections;

static int split(const uint8_t *f, size_t n, sections *s) {
  uint64_t pos = RVN_HEADER_SIZE;
  for (int i = 0; i < 5; i++) {
    if (pos + 8 > n)
      return -1;
    s->size[i] = le(f + pos, 8);
    s->off[i] = pos + 8;
    pos = s->off[i] + s->size[i];
  }
  return pos == n ? 0 : -1;
}

static char *path_in(const char *dir, const char *file) {
  static char buf[4][1024];
  static int k;
  k = (k + 1) & 3;
  if (snprintf(buf[k], sizeof buf[k], "%s/%s", dir, file) >= (int)sizeof buf[k])
    abort();
  return buf[k];
}

static int copy_file(const char *from, const char *to) {
  size_t n;
  uint8_t *d = tu_read_file(from, &n);
  if (!d)
    return -1;
  int rc = tu_write_file(to, d, n);
  free(d);
  return rc;
}

/* Copies a trace directory. */
static void copy_trace(const char *from, const char *to) {
  mkdir(to, 0777);
  CU_ASSERT_EQUAL_FATAL(
      copy_file(path_in(from, "trace.bin"), path_in(to, "trace.bin")), 0);
  CU_ASSERT_EQUAL_FATAL(
      copy_file(path_in(from, "trace.cache"), path_in(to, "trace.cache")), 0);
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

static const char *run_guest(const char *guest, const char *out,
                             const char *every) {
  char *o = NULL;
  char opt[64];
  snprintf(opt, sizeof opt, "rvn.cache-every=%s", every);
  int st = tu_run_merge(&o, TC_CLI, "record", "-q", "-f", "rvn,tct", "-O", opt,
                        "-o", out, "--", tu_guest(guest), NULL);
  free(o);
  (void)st;
  static char p[1024];
  snprintf(p, sizeof p, "%s.rvn", out);
  return p;
}

/* ------------------------------------------------------ format identity */

static void test_format_identity(void) {
  CU_ASSERT_PTR_EQUAL(tc_format_by_name("rvn"), F);
  CU_ASSERT_STRING_EQUAL(F->extension(tc_arch_by_id(TC_ARCH_X86_64)), ".rvn");
  CU_ASSERT_EQUAL(F->caps, TC_CAP_INSN_BYTES | TC_CAP_MEM | TC_CAP_MEM_EXACT |
                               TC_CAP_MEM_OLD | TC_CAP_MEM_WRITES_ONLY |
                               TC_CAP_SYSCALLS | TC_CAP_SYSCALL_MEM |
                               TC_CAP_MAP_DATA | TC_CAP_FAULTS |
                               TC_CAP_SYSCALL_COMPAT);
  CU_ASSERT_PTR_NOT_NULL(F->seek);
  tc_error err = {{0}};
  CU_ASSERT_EQUAL(F->supports(tc_arch_by_id(TC_ARCH_X86_64), &err), 0);
  CU_ASSERT_EQUAL(F->supports(tc_arch_by_id(TC_ARCH_X86), &err), 0);
  const tc_arch_id others[] = {TC_ARCH_ARM, TC_ARCH_ARM64, TC_ARCH_MIPS};
  for (size_t i = 0; i < 3; i++) {
    const tc_arch *a = tc_arch_by_id(others[i]);
    if (!a)
      continue;
    CU_ASSERT_EQUAL(F->supports(a, &err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "x86-64 and i386"));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, a->name));
  }
  /* every x86 register round-trips */
  for (int k = 0; k < 2; k++) {
    const tc_arch *a = tc_arch_by_id(k ? TC_ARCH_X86 : TC_ARCH_X86_64);
    for (int r = 0; r < a->nregs; r++)
      CU_ASSERT_EQUAL(F->holds_reg(a, r), 1);
  }
}

/* holds_reg's table is built on first use, once for every thread
 * (writers and verify run on several): threads asking at the same time
 * all get the full answer. First in the suite, so this is the first use. */
enum { HOLDS_THREADS = 4 };
static pthread_barrier_t holds_start;

static void *ask_holds(void *arg) {
  (void)arg;
  pthread_barrier_wait(&holds_start);
  intptr_t wrong = 0;
  for (int k = 0; k < 2; k++) {
    const tc_arch *a = tc_arch_by_id(k ? TC_ARCH_X86 : TC_ARCH_X86_64);
    for (int r = 0; r < a->nregs; r++)
      wrong += F->holds_reg(a, r) != 1;
    wrong += F->holds_reg(a, -1) != 0;
    wrong += F->holds_reg(a, 64) != 0;
  }
  wrong += F->holds_reg(tc_arch_by_id(TC_ARCH_ARM64), 0) != 0;
  return (void *)wrong;
}

static void test_holds_reg_threads(void) {
  pthread_t t[HOLDS_THREADS];
  pthread_barrier_init(&holds_start, NULL, HOLDS_THREADS);
  for (int i = 0; i < HOLDS_THREADS; i++)
    CU_ASSERT_EQUAL_FATAL(pthread_create(&t[i], NULL, ask_holds, NULL), 0);
  for (int i = 0; i < HOLDS_THREADS; i++) {
    void *wrong = NULL;
    pthread_join(t[i], &wrong);
    CU_ASSERT_EQUAL((intptr_t)wrong, 0);
  }
  pthread_barrier_destroy(&holds_start);
}

static void test_refuse_arm_record(void) {
  const char *g = tu_guest("hello-arm64");
  if (!tu_have(g))
    return;
  char *o = NULL;
  int st = tu_run_merge(&o, TC_CLI, "record", "-f", "rvn", "-o", tu_tmp("arm"),
                        "--", g, NULL);
  CU_ASSERT_NOT_EQUAL(st, 0);
  CU_ASSERT(o && strstr(o, "REVEN traces hold only"));
  CU_ASSERT(o && strstr(o, "tct")); /* names other formats */
  free(o);
}

/* ------------------------------------------- the synthetic x86-64 trace */

enum { CODE = 0x401000, STACK = 0x7fff0000, STACK_END = 0x80000000 };

static uint8_t code[4096];
static uint8_t states[16][540];

static void code_init(void) {
  static const uint8_t prog[] = {
      0x50,             /* 0x401000 push rax */
      0x48, 0x89, 0xc3, /* 0x401001 mov rbx, rax (20 writes, made up) */
      0x31, 0xc0,       /* 0x401004 xor eax, eax (flags) */
      0x8e, 0xe0,       /* 0x401006 mov fs, eax */
      0x0f, 0x05,       /* 0x401008 syscall */
      0x31, 0xc0,       /* 0x40100a (15 registers) */
      0x31, 0xc0,       /* 0x40100c (5 flags: whole eflags) */
      0xc6, 0x04, 0x25, 0x10, 0x00, 0x00, 0x00, 0x01 /* mov byte [0x10], 1 */
  };
  memset(code, 0x90, sizeof code);
  memcpy(code, prog, sizeof prog);
}

/* Writes the synthetic trace to dir with the writer API. */
static void write_synthetic(const char *dir, const char *every) {
  const tc_arch *a = tc_arch_by_id(TC_ARCH_X86_64);
  code_init();
  uint8_t *s = states[0];
  memset(s, 0, a->state_size);
  set(a, s, "rip", CODE);
  set(a, s, "rsp", 0x7ffff000);
  set(a, s, "rflags", 0x203);
  set(a, s, "rax", 0x1122334455667788ull);
  set(a, s, "fpcw", 0x37f);
  set(a, s, "fptag", 0xffff);
  set(a, s, "mxcsr", 0x1f80);
  set(a, s, "cs", 0x33);
  set(a, s, "ss", 0x2b);
  char opt[64];
  snprintf(opt, sizeof opt, "rvn.cache-every=%s", every);
  const char *const opts[] = {opt, NULL};
  tc_trace_info info = {0};
  info.arch = a;
  info.exe_path = "/synthetic";
  info.initial_state = s;
  info.writer_options = opts;
  tc_error err = {{0}};
  tc_writer *w = F->open_writer(dir, &info, &err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(w);
  tc_event ev;
#define EMIT()                                                                 \
  do {                                                                         \
    int rc_ = F->write_event(w, &ev, &err);                                    \
    CU_ASSERT_EQUAL(rc_, 0);                                                   \
    if (rc_)                                                                   \
      fprintf(stderr, "write_event: %s\n", err.msg);                           \
  } while (0)
  memset(&ev, 0, sizeof ev);
  ev.kind = TC_EV_MAP;
  ev.u.map = (tc_map_event){CODE,         4096, TC_PROT_READ | TC_PROT_EXEC,
                            "/synthetic", 0,    code};
  EMIT();
  ev.u.map = (tc_map_event){
      STACK, STACK_END - STACK, TC_PROT_READ | TC_PROT_WRITE, "[stack]", 0,
      NULL};
  EMIT();
  ev.kind = TC_EV_KEYFRAME;
  ev.u.key = (tc_keyframe_event){0, 1, s};
  EMIT();

  static uint16_t changed[64];
  static tc_mem_access mem[32];
  static uint8_t zero[512], big[300], one[20][1];
  uint64_t idx = 0;
  /* Emits INSN idx from states[idx] to states[idx+1]. */
#define INSN(sz, nm)                                                           \
  do {                                                                         \
    const uint8_t *b_ = states[idx], *a_ = states[idx + 1];                    \
    uint16_t n_ = 0;                                                           \
    for (int r_ = 0; r_ < a->nregs; r_++)                                      \
      if (memcmp(b_ + a->regs[r_].offset, a_ + a->regs[r_].offset,             \
                 a->regs[r_].size))                                            \
        changed[n_++] = (uint16_t)r_;                                          \
    memset(&ev, 0, sizeof ev);                                                 \
    ev.kind = TC_EV_INSN;                                                      \
    tc_insn_event *in_ = &ev.u.insn;                                           \
    in_->index = idx;                                                          \
    in_->pc = get(a, b_, "rip");                                               \
    in_->size = sz;                                                            \
    memcpy(in_->bytes, code + (in_->pc - CODE), sz);                           \
    in_->nregs = n_;                                                           \
    in_->regs = changed;                                                       \
    in_->state_before = b_;                                                    \
    in_->state_after = a_;                                                     \
    in_->nmem = nm;                                                            \
    in_->mem = mem;                                                            \
    EMIT();                                                                    \
    idx++;                                                                     \
  } while (0)
#define NEXT(sz)                                                               \
  do {                                                                         \
    memcpy(states[idx + 1], states[idx], a->state_size);                       \
    set(a, states[idx + 1], "rip", get(a, states[idx], "rip") + (sz));         \
  } while (0)

  /* 0: push rax: one 8-byte write, rsp -= 8, rip += 1 */
  NEXT(1);
  set(a, states[1], "rsp", 0x7fffeff8);
  static uint8_t raxb[8];
  put(raxb, 0x1122334455667788ull, 8);
  mem[0] = (tc_mem_access){0x7fffeff8, 8, TC_MEM_WRITE, zero, raxb};
  INSN(1, 1);
  /* 1: 20 writes (a 300-byte one first) and a read, rip += 3 */
  NEXT(3);
  memset(big, 0xaa, sizeof big);
  mem[0] = (tc_mem_access){STACK, 300, TC_MEM_WRITE, zero, big};
  for (int i = 1; i < 20; i++) {
    one[i][0] = (uint8_t)i;
    mem[i] = (tc_mem_access){STACK + 0x1000 + 16u * (unsigned)i, 1,
                             TC_MEM_WRITE, zero, one[i]};
  }
  mem[20] = (tc_mem_access){CODE, 1, TC_MEM_READ, code, code};
  INSN(3, 21);
  /* 2: CF cleared, ZF set: two flag operations */
  NEXT(2);
  set(a, states[3], "rflags", 0x242);
  INSN(2, 0);
  /* 3: fs = 0x63 (a 2-byte register id) */
  NEXT(2);
  set(a, states[4], "fs", 0x63);
  INSN(2, 0);
  /* 4: syscall write(1, ...) = 5; the kernel writes 4 bytes */
  NEXT(2);
  set(a, states[5], "rax", 5);
  set(a, states[5], "rcx", 0x40100a);
  set(a, states[5], "r11", 0x242);
  INSN(2, 0);
  memset(&ev, 0, sizeof ev);
  ev.kind = TC_EV_SYSCALL;
  static uint8_t abcd[4] = {'a', 'b', 'c', 'd'};
  mem[0] = (tc_mem_access){STACK + 0x2000, 4, TC_MEM_WRITE, zero, abcd};
  ev.u.sys = (tc_syscall_event){
      4, 1, 1, "write", {1, STACK, 4, 0, 0, 0}, 5, 0, 1, mem, 0, 0, 0};
  EMIT();
  /* 5: 15 general registers change: a register continuation chunk */
  NEXT(2);
  static const char *const gprs[] = {"rax", "rbx", "rcx", "rdx", "rsi",
                                     "rdi", "rbp", "r8",  "r9",  "r10",
                                     "r11", "r12", "r13", "r14", "r15"};
  for (int i = 0; i < 15; i++)
    set(a, states[6], gprs[i], 0x100 + (uint64_t)i);
  INSN(2, 0);
  /* 6: five flag bits: eflags whole */
  NEXT(2);
  set(a, states[7], "rflags", 0x242 ^ 0x8d5);
  INSN(2, 0);
  /* 7: faults: no effect, then a page fault at 0x10 */
  memcpy(states[8], states[7], a->state_size);
  INSN(8, 0);
  memset(&ev, 0, sizeof ev);
  ev.kind = TC_EV_FAULT;
  ev.u.fault = (tc_fault_event){7, 0x40100e, 0x10, TC_FAULT_UNMAPPED_WRITE, 11};
  EMIT();
  memset(&ev, 0, sizeof ev);
  ev.kind = TC_EV_EXIT;
  ev.u.exit = (tc_exit_event){TC_EXIT_SIGNALED, 139, 11, 8, NULL};
  EMIT();
  CU_ASSERT_EQUAL(F->close_writer(w, &err), 0);
#undef EMIT
#undef INSN
#undef NEXT
}

/* The expected events section (after the count), by hand. */
static void expected_events(bytes *x) {
  x->n = 0;
  /* push rax: R=2 M=1; the write; rsp ADD -8 (0x39), rip ADD 1 (0x12) */
  b_u(x, 0x21, 1);
  b_u(x, 0x7fffeff8, 6);
  b_u(x, 8, 1);
  b_u(x, 0x1122334455667788ull, 8);
  b_u(x, 0x39, 1);
  b_u(x, 0x12, 1);
  /* 20 writes: 0f + 14 (the first with a size escape), 16 + 6 + rip+3 */
  b_u(x, 0x0f, 1);
  b_u(x, STACK, 6);
  b_u(x, 0xff, 1);
  b_u(x, 300, 6);
  b_fill(x, 0xaa, 300);
  for (int i = 1; i < 20; i++) {
    if (i == 14)
      b_u(x, 0x16, 1);
    b_u(x, STACK + 0x1000 + 16u * (unsigned)i, 6);
    b_u(x, 1, 1);
    b_u(x, (uint64_t)i, 1);
  }
  b_u(x, 0x14, 1);
  /* flags: CF clear (0x2a), ZF set (0x24), rip ADD 2 (0x13) */
  b_u(x, 0x30, 1);
  b_u(x, 0x2a, 1);
  b_u(x, 0x24, 1);
  b_u(x, 0x13, 1);
  /* fs = 0x63: rip op, then ff 0x0104 and the value */
  b_u(x, 0x20, 1);
  b_u(x, 0x13, 1);
  b_u(x, 0xff, 1);
  b_u(x, 0x104, 2);
  b_u(x, 0x63, 2);
  /* syscall: rip ADD 2 alone, then the kernel's side */
  b_u(x, 0x10, 1);
  b_u(x, 0x13, 1);
  b_u(x, 0xffff, 2);
  b_u(x, 15, 1);
  b_s(x, "syscall 1 write");
  b_u(x, 0x31, 1);
  b_u(x, STACK + 0x2000, 6);
  b_u(x, 4, 1);
  b_s(x, "abcd");
  b_u(x, 0, 1); /* rax */
  b_u(x, 5, 8);
  b_u(x, 2, 1); /* rcx */
  b_u(x, 0x40100a, 8);
  b_u(x, 10, 1); /* r11 */
  b_u(x, 0x242, 8);
  /* 15 registers: f0 + rax..r14, then 20 + r15 and rip ADD 2 */
  b_u(x, 0xf0, 1);
  for (unsigned i = 0; i < 15; i++) {
    if (i == 14)
      b_u(x, 0x20, 1);
    b_u(x, i, 1);
    b_u(x, 0x100 + i, 8);
  }
  b_u(x, 0x13, 1);
  /* five flag bits: eflags (id 16) whole, rip ADD 2 */
  b_u(x, 0x20, 1);
  b_u(x, 16, 1);
  b_u(x, 0x242 ^ 0x8d5, 4);
  b_u(x, 0x13, 1);
  /* the faulting instruction: an empty diff */
  b_u(x, 0x00, 1);
  /* page fault: cr2 (id 0x116) = 0x10 */
  b_u(x, 0xffff, 2);
  b_u(x, 10, 1);
  b_s(x, "page fault");
  b_u(x, 0x10, 1);
  b_u(x, 0xff, 1);
  b_u(x, 0x116, 2);
  b_u(x, 0x10, 8);
}

static void test_container_header(void) {
  const char *dir = tu_tmp("syn.rvn");
  write_synthetic(dir, "3");
  for (int k = 0; k < 2; k++) {
    size_t n;
    uint8_t *f =
        tu_read_file(path_in(dir, k ? "trace.cache" : "trace.bin"), &n);
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    CU_ASSERT_FATAL(n > RVN_HEADER_SIZE);
    CU_ASSERT_EQUAL(memcmp(f, "srnibnvr", 8), 0);
    CU_ASSERT_EQUAL(le(f + 8, 4), 1);           /* metadata version */
    CU_ASSERT_EQUAL(le(f + 12, 4), k ? 2 : 1u); /* TraceCache / TraceBin */
    CU_ASSERT_EQUAL(le(f + 16, 8), 5);
    CU_ASSERT_EQUAL(memcmp(f + 24, "1.0.1", 5), 0);
    for (int i = 5; i < 512; i++)
      CU_ASSERT_EQUAL_FATAL(f[24 + i], 0);
    CU_ASSERT_EQUAL(le(f + 536, 8), 9);
    CU_ASSERT_EQUAL(memcmp(f + 544, "tracecorn", 9), 0);
    uint64_t vl = le(f + 1056, 8);
    CU_ASSERT_EQUAL(vl, strlen(TC_VERSION_STRING));
    CU_ASSERT_EQUAL(memcmp(f + 1064, TC_VERSION_STRING, vl), 0);
    uint64_t il = le(f + 1576, 8);
    CU_ASSERT(il > 0 && il <= 2048);
    CU_ASSERT_PTR_NOT_NULL(memmem(f + 1584, il, "/synthetic", 10));
    CU_ASSERT_EQUAL(le(f + 3632, 8), 1704067200u); /* fixed date */
    CU_ASSERT_EQUAL(1584 + 2048 + 8, RVN_HEADER_SIZE);
    free(f);
  }
}

static void test_machine_description(void) {
  const char *dir = tu_tmp("syn.rvn");
  write_synthetic(dir, "3");
  size_t n;
  uint8_t *f = tu_read_file(path_in(dir, "trace.bin"), &n);
  CU_ASSERT_PTR_NOT_NULL_FATAL(f);
  sections s;
  CU_ASSERT_EQUAL_FATAL(split(f, n, &s), 0);
  /* header: compression 0 */
  CU_ASSERT_EQUAL(s.size[0], 1);
  CU_ASSERT_EQUAL(f[s.off[0]], 0);
  const uint8_t *m = f + s.off[1];
  size_t o = 0;
  CU_ASSERT_EQUAL(memcmp(m, "x641", 4), 0);
  CU_ASSERT_EQUAL(m[4], 6); /* PHY_SIZE */
  o = 5;
  /* regions: code, stack, then one page-table region at 2^47 holding a
   * PML4, a PDPT, a PD and one PT for each of the two 2 MiB ranges */
  CU_ASSERT_EQUAL_FATAL(le(m + o, 4), 3);
  o += 4;
  uint64_t rs[3][2];
  for (int i = 0; i < 3; i++) {
    rs[i][0] = le(m + o, 6);
    rs[i][1] = le(m + o + 6, 6);
    o += 12;
  }
  CU_ASSERT_EQUAL(rs[0][0], CODE);
  CU_ASSERT_EQUAL(rs[0][1], 4096);
  CU_ASSERT_EQUAL(rs[1][0], STACK);
  CU_ASSERT_EQUAL(rs[1][1], STACK_END - STACK);
  CU_ASSERT_EQUAL(rs[2][0], 1ull << 47);
  CU_ASSERT_EQUAL(rs[2][1], 6 * 4096); /* PML4, 2 PDPT, 2 PD, 2 PT -1 */
  CU_ASSERT_EQUAL(s.size[2], 4096 + (STACK_END - STACK) + rs[2][1]);
  /* registers: 114, REVEN's names and sizes */
  CU_ASSERT_EQUAL_FATAL(le(m + o, 4), RVN_NREGS);
  o += 4;
  struct {
    const char *name;
    unsigned id, size;
  } want[] = {{"rax", 0, 8},
              {"rsp", 15, 8},
              {"eflags", 16, 4},
              {"rip", 17, 8},
              {"x87r0", 60, 10},
              {"zmm0", 76, 64},
              {"cs", 0x100, 2},
              {"tr_limit", 0x114, 3},
              {"ldtr_limit", 0x112, 3},
              {"cr2", 0x116, 8},
              {"msr_c0000080", 0x134, 8},
              {"pkru", 0x10c, 4}};
  int found[12] = {0};
  for (unsigned i = 0; i < RVN_NREGS; i++) {
    unsigned id = (unsigned)le(m + o, 2), size = (unsigned)le(m + o + 2, 2);
    unsigned nl = m[o + 4];
    for (int k = 0; k < 12; k++)
      if (strlen(want[k].name) == nl && !memcmp(m + o + 5, want[k].name, nl)) {
        CU_ASSERT_EQUAL(id, want[k].id);
        CU_ASSERT_EQUAL(size, want[k].size);
        found[k] = 1;
      }
    CU_ASSERT_FALSE(nl == 6 && !memcmp(m + o + 5, "rflags", 6));
    o += 5 + nl;
  }
  for (int k = 0; k < 12; k++)
    CU_ASSERT_TRUE(found[k]);
  /* 41 operations: rip ADD 1 first, rsp ADD -8 as 0x39, eflags AND ~CF */
  CU_ASSERT_EQUAL_FATAL(le(m + o, 4), 41);
  o += 4;
  static const uint8_t rip1[] = {0x12, 0x11, 0x00, 0x01, 1, 0,
                                 0,    0,    0,    0,    0, 0};
  CU_ASSERT_EQUAL(memcmp(m + o, rip1, sizeof rip1), 0);
  int seen_rsp = 0, seen_cf = 0;
  for (int i = 0; i < 41; i++) {
    unsigned id = m[o], dest = (unsigned)le(m + o + 1, 2), op = m[o + 3];
    unsigned size = dest == 16 ? 4 : 8;
    CU_ASSERT(id >= 18 && id <= 58);
    CU_ASSERT(dest == 15 || dest == 16 || dest == 17);
    if (id == 0x39) {
      CU_ASSERT_EQUAL(dest, 15);
      CU_ASSERT_EQUAL(op, 1);
      CU_ASSERT_EQUAL(le(m + o + 4, 8), (uint64_t)-8);
      seen_rsp = 1;
    }
    if (id == 0x2a) {
      CU_ASSERT_EQUAL(dest, 16);
      CU_ASSERT_EQUAL(op, 2);
      CU_ASSERT_EQUAL(le(m + o + 4, 4), 0xfffffffeu);
      seen_cf = 1;
    }
    o += 4 + size;
  }
  CU_ASSERT_TRUE(seen_rsp && seen_cf);
  /* five statics */
  bytes x = {.n = 0};
  b_u(&x, 5, 4);
  static const char *const st[] = {"cpuid_pat", "cpuid_pse36",
                                   "cpuid_1gb_pages", "cpuid_max_phy_addr",
                                   "cpuid_max_lin_addr"};
  static const uint8_t sv[] = {1, 1, 1, 48, 48};
  for (int i = 0; i < 5; i++) {
    b_u(&x, strlen(st[i]), 1);
    b_s(&x, st[i]);
    b_u(&x, 1, 1);
    b_u(&x, sv[i], 1);
  }
  CU_ASSERT_EQUAL(o + x.n, s.size[1]);
  CU_ASSERT_EQUAL(memcmp(m + o, x.b, x.n), 0);
  /* initial memory: the code, then zeros */
  CU_ASSERT_EQUAL(memcmp(f + s.off[2], code, 4096), 0);
  /* initial registers: every register once, in id order */
  const uint8_t *ir = f + s.off[3];
  CU_ASSERT_EQUAL(le(ir, 4), RVN_NREGS);
  CU_ASSERT_EQUAL(le(ir + 4, 2), 0); /* rax */
  CU_ASSERT_EQUAL(le(ir + 6, 8), 0x1122334455667788ull);
  free(f);
}

static void test_event_bytes(void) {
  const char *dir = tu_tmp("syn.rvn");
  write_synthetic(dir, "3");
  size_t n;
  uint8_t *f = tu_read_file(path_in(dir, "trace.bin"), &n);
  CU_ASSERT_PTR_NOT_NULL_FATAL(f);
  sections s;
  CU_ASSERT_EQUAL_FATAL(split(f, n, &s), 0);
  bytes x;
  expected_events(&x);
  CU_ASSERT_EQUAL(le(f + s.off[4], 8), 10); /* 8 instructions + 2 others */
  CU_ASSERT_EQUAL(s.size[4], 8 + x.n);
  size_t m = s.size[4] - 8 < x.n ? s.size[4] - 8 : x.n;
  for (size_t i = 0; i < m; i++)
    if (f[s.off[4] + 8 + i] != x.b[i]) {
      fprintf(stderr, "events differ at byte %zu: %02x, expected %02x\n", i,
              f[s.off[4] + 8 + i], x.b[i]);
      CU_FAIL("event bytes");
      break;
    }
  free(f);
}

static void test_cache_bytes(void) {
  const char *dir = tu_tmp("syn.rvn");
  write_synthetic(dir, "3");
  size_t n;
  uint8_t *c = tu_read_file(path_in(dir, "trace.cache"), &n);
  CU_ASSERT_PTR_NOT_NULL_FATAL(c);
  bytes x;
  expected_events(&x);
  uint64_t pos = RVN_HEADER_SIZE;
  uint64_t hs = le(c + pos, 8);
  CU_ASSERT_EQUAL(le(c + pos + 8, 4), 4096);
  /* 10 events: points after 3, 6 and 9 */
  CU_ASSERT_EQUAL(hs, 4 + 12 + 8 + 3 * 16);
  CU_ASSERT_EQUAL(memcmp(c + pos + 12, RVN_IX_MAGIC, 12), 0);
  pos += 8 + hs;
  uint64_t ps = le(c + pos, 8), pb = pos + 8;
  pos = pb + ps;
  uint64_t is = le(c + pos, 8), ib = pos + 8;
  CU_ASSERT_EQUAL(ib + is, n);
  CU_ASSERT_EQUAL_FATAL(le(c + ib, 8), 3);
  /* point 1: context 3, after push, the 20 writes and the flags */
  const uint8_t *p = c + ib + 8;
  CU_ASSERT_EQUAL(le(p, 8), 3);
  uint64_t off3 = 8 + 18 + (1 + 13 + 300 + 13 * 8) + (1 + 6 * 8 + 1) + 4;
  CU_ASSERT_EQUAL(le(p + 8, 8), off3);
  CU_ASSERT_EQUAL(le(p + 16, 8), 0); /* its registers open the section */
  CU_ASSERT_EQUAL_FATAL(le(p + 24, 4), 3);
  CU_ASSERT_EQUAL(le(p + 28, 8), STACK);
  CU_ASSERT_EQUAL(le(p + 44, 8), STACK + 0x1000);
  CU_ASSERT_EQUAL(le(p + 60, 8), 0x7fffe000);
  uint64_t regs = 2;
  for (int r = 0; r < RVN_NREGS; r++)
    regs += 4 + rvn_regs[r].size;
  CU_ASSERT_EQUAL(le(p + 36, 8), regs);
  CU_ASSERT_EQUAL(c[pb + regs], 0xaa);                 /* page STACK */
  CU_ASSERT_EQUAL(c[pb + regs + 4096 + 16], 1);        /* 0x7fff1010 */
  CU_ASSERT_EQUAL(le(c + pb + regs + 8192 + 0xff8, 8), /* the push */
                  0x1122334455667788ull);
  /* its registers: count, then rax = 0x1122334455667788, eflags 0x242 */
  CU_ASSERT_EQUAL(le(c + pb, 2), RVN_NREGS);
  CU_ASSERT_EQUAL(le(c + pb + 2, 2), 0);
  CU_ASSERT_EQUAL(le(c + pb + 4, 2), 8);
  CU_ASSERT_EQUAL(le(c + pb + 6, 8), 0x1122334455667788ull);
  /* point 2: context 6 = after the syscall's event, with its page */
  p += 28 + 3 * 16;
  CU_ASSERT_EQUAL(le(p, 8), 6);
  CU_ASSERT_EQUAL_FATAL(le(p + 24, 4), 1);
  CU_ASSERT_EQUAL(le(p + 28, 8), STACK + 0x2000);
  free(c);
}

/* Reading the synthetic trace back. */
static void test_read_synthetic(void) {
  const char *dir = tu_tmp("syn.rvn");
  write_synthetic(dir, "3");
  const tc_arch *a = tc_arch_by_id(TC_ARCH_X86_64);
  tc_error err = {{0}};
  CU_ASSERT_PTR_EQUAL(tc_format_detect(dir, &err), F);
  CU_ASSERT_PTR_EQUAL(tc_format_detect(path_in(dir, "trace.bin"), &err), F);
  tc_reader *r = F->open_reader(dir, &err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(r);
  const tc_trace_info *info = F->reader_info(r);
  CU_ASSERT_PTR_EQUAL(info->arch, a);
  CU_ASSERT_EQUAL(info->entry, CODE);
  tc_event ev;
  int kinds[32], nk = 0, ninsn = 0;
  while (F->next_event(r, &ev, &err) == 1 && nk < 32) {
    kinds[nk++] = ev.kind;
    if (ev.kind == TC_EV_INSN) {
      const tc_insn_event *in = &ev.u.insn;
      CU_ASSERT_EQUAL(in->index, (uint64_t)ninsn);
      CU_ASSERT_EQUAL(memcmp(in->state_before, states[ninsn], a->state_size),
                      0);
      CU_ASSERT_EQUAL(memcmp(in->state_after, states[ninsn + 1], a->state_size),
                      0);
      CU_ASSERT_EQUAL(memcmp(in->bytes, code + (in->pc - CODE), in->size), 0);
      static const uint8_t sizes[] = {1, 3, 2, 2, 2, 2, 2, 8};
      CU_ASSERT_EQUAL(in->size, sizes[ninsn]);
      if (ninsn == 0) {
        CU_ASSERT_EQUAL_FATAL(in->nmem, 1);
        CU_ASSERT_EQUAL(in->mem[0].addr, 0x7fffeff8);
        CU_ASSERT_EQUAL(in->mem[0].kind, TC_MEM_WRITE);
        CU_ASSERT_EQUAL(le(in->mem[0].after, 8), 0x1122334455667788ull);
        CU_ASSERT_EQUAL(le(in->mem[0].before, 8), 0);
        CU_ASSERT_EQUAL(in->nregs, 2); /* rsp, rip */
      }
      if (ninsn == 1)
        CU_ASSERT_EQUAL(in->nmem, 20); /* the read is not recorded */
      if (ninsn == 4)
        CU_ASSERT_EQUAL(get(a, in->state_after, "rax"), 5);
      ninsn++;
    }
    if (ev.kind == TC_EV_SYSCALL) {
      CU_ASSERT_EQUAL(ev.u.sys.nr, 1);
      CU_ASSERT_STRING_EQUAL(ev.u.sys.name, "write");
      CU_ASSERT_EQUAL(ev.u.sys.ret, 5);
      CU_ASSERT_EQUAL(ev.u.sys.insn_index, 4);
      CU_ASSERT_EQUAL(ev.u.sys.args[0], 0); /* rdi before: 0 here */
      CU_ASSERT_EQUAL_FATAL(ev.u.sys.nmem, 1);
      CU_ASSERT_EQUAL(memcmp(ev.u.sys.mem[0].after, "abcd", 4), 0);
    }
    if (ev.kind == TC_EV_FAULT) {
      CU_ASSERT_EQUAL(ev.u.fault.addr, 0x10);
      CU_ASSERT_EQUAL(ev.u.fault.pc, 0x40100e);
      CU_ASSERT_EQUAL(ev.u.fault.signal, 11);
      CU_ASSERT_EQUAL(ev.u.fault.insn_index, 7);
    }
    if (ev.kind == TC_EV_EXIT) {
      CU_ASSERT_EQUAL(ev.u.exit.reason, TC_EXIT_SIGNALED);
      CU_ASSERT_EQUAL(ev.u.exit.status, 139);
      CU_ASSERT_EQUAL(ev.u.exit.insn_count, 8);
    }
  }
  static const int want[] = {
      TC_EV_MAP,  TC_EV_MAP,  TC_EV_KEYFRAME, TC_EV_INSN,    TC_EV_INSN,
      TC_EV_INSN, TC_EV_INSN, TC_EV_INSN,     TC_EV_SYSCALL, TC_EV_INSN,
      TC_EV_INSN, TC_EV_INSN, TC_EV_FAULT,    TC_EV_EXIT};
  CU_ASSERT_EQUAL(nk, 14);
  for (int i = 0; i < nk && i < 14; i++)
    CU_ASSERT_EQUAL(kinds[i], want[i]);
  /* seek to every instruction equals the replay */
  for (uint64_t i = 0; i < 8; i++) {
    CU_ASSERT_EQUAL_FATAL(F->seek(r, i, &err), 0);
    CU_ASSERT_EQUAL_FATAL(F->next_event(r, &ev, &err), 1);
    CU_ASSERT_EQUAL(ev.kind, TC_EV_KEYFRAME);
    CU_ASSERT_EQUAL(ev.u.key.insn_index, i);
    CU_ASSERT_EQUAL(memcmp(ev.u.key.state, states[i], a->state_size), 0);
    CU_ASSERT_EQUAL_FATAL(F->next_event(r, &ev, &err), 1);
    CU_ASSERT_EQUAL(ev.kind, TC_EV_INSN);
    CU_ASSERT_EQUAL(ev.u.insn.index, i);
  }
  CU_ASSERT_EQUAL(F->seek(r, 8, &err), -1);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "no instruction 8"));
  F->close_reader(r);
}

/* The synthetic page tables map every page of every region to itself. */
static uint64_t walk(tc_reader *r, uint64_t cr3, uint64_t va, uint64_t *pte) {
  uint64_t table = cr3 & ~0xfffull;
  for (int level = 3; level >= 0; level--) {
    uint8_t e[8];
    unsigned i = (unsigned)(va >> (12 + 9 * level)) & 511;
    if (rvn_reader_read_mem(r, table + 8u * i, e, 8) < 0)
      return UINT64_MAX;
    uint64_t v = le(e, 8);
    if (!(v & 1))
      return UINT64_MAX;
    if ((v & 4) == 0)
      return UINT64_MAX; /* user pages all the way */
    table = v & 0x000ffffffffff000ull;
    if (level == 0)
      *pte = v;
  }
  return table | (va & 0xfff);
}

static void test_page_tables(void) {
  const char *path = run_guest("glibc64", tu_tmp("pt"), "100000");
  tc_error err = {{0}};
  tc_reader *r = F->open_reader(path, &err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(r);
  tc_event ev;
  uint64_t pages = 0, bad = 0, nx = 0;
  while (F->next_event(r, &ev, &err) == 1 && ev.kind == TC_EV_MAP) {
    for (uint64_t va = ev.u.map.addr; va < ev.u.map.addr + ev.u.map.size;
         va += 4096) {
      uint64_t pte = 0;
      if (walk(r, 1ull << 47, va + 0x123, &pte) != va + 0x123)
        bad++;
      nx += pte >> 63;
      pages++;
    }
  }
  CU_ASSERT(pages > 100);
  CU_ASSERT_EQUAL(bad, 0);
  CU_ASSERT(nx > 0 && nx < pages); /* the stack is NX, the code is not */
  F->close_reader(r);
}

/* ----------------------------------------------- guests and verification */

static void verify_guest(const char *guest) {
  const char *g = tu_guest(guest);
  if (!tu_have(g)) {
    CU_FAIL("guest missing");
    return;
  }
  char *o = NULL;
  int st = tu_run_merge(&o, TC_CLI, "verify", "-f", "rvn", "-O",
                        "rvn.cache-every=5000", "--", g, NULL);
  CU_ASSERT_EQUAL(st, 0);
  CU_ASSERT(o && strstr(o, "rvn    ok: "));
  if (st != 0 || !o || !strstr(o, "rvn    ok: "))
    fprintf(stderr, "verify %s:\n%s\n", guest, o ? o : "");
  free(o);
}

static void test_verify_guests(void) {
  static const char *const guests[] = {
      "hello64",     "insns64",     "glibc64", "segv64",  "div64",
      "ill64",       "hello32",     "insns32", "glibc32", "segv32",
      "hello64-pie", "glibc64-pie", NULL};
  for (const char *const *g = guests; *g; g++)
    verify_guest(*g);
}

/* Hash of all memory of the MAP regions a reader announced. */
typedef struct region_list {
  uint64_t start[64], size[64];
  int n;
} region_list;

static uint64_t mem_hash(tc_reader *r, const region_list *rl) {
  uint64_t h = 1469598103934665603ull;
  static uint8_t buf[65536];
  for (int i = 0; i < rl->n; i++)
    for (uint64_t a = rl->start[i]; a < rl->start[i] + rl->size[i];) {
      size_t k = rl->start[i] + rl->size[i] - a < sizeof buf
                     ? (size_t)(rl->start[i] + rl->size[i] - a)
                     : sizeof buf;
      CU_ASSERT_EQUAL_FATAL(rvn_reader_read_mem(r, a, buf, k), 0);
      for (size_t j = 0; j < k; j += 8)
        h = (h ^ le(buf + j, 8)) * 1099511628211ull;
      a += k;
    }
  return h;
}

static void seek_vs_replay(const char *guest, const char *every) {
  char name[64];
  snprintf(name, sizeof name, "seek-%s", guest);
  const char *path = run_guest(guest, tu_tmp(name), every);
  tc_error err = {{0}};
  tc_reader *r = F->open_reader(path, &err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(r);
  const tc_arch *a = F->reader_info(r)->arch;
  region_list rl = {.n = 0};
  tc_event ev;
  /* count and pick targets */
  uint64_t total = 0;
  while (F->next_event(r, &ev, &err) == 1) {
    if (ev.kind == TC_EV_MAP && rl.n < 64) {
      rl.start[rl.n] = ev.u.map.addr;
      rl.size[rl.n++] = ev.u.map.size;
    }
    total += ev.kind == TC_EV_INSN;
  }
  F->close_reader(r);
  CU_ASSERT_FATAL(total > 1000);
  enum { NT = 12 };
  uint64_t t[NT];
  for (int i = 0; i < NT; i++)
    t[i] = rnd() % total;
  t[0] = 0;
  t[1] = total - 1;
  /* replay: state, pc and memory at each target */
  uint8_t *st = calloc(NT, a->state_size);
  uint64_t pc[NT];
  r = F->open_reader(path, &err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(r);
  while (F->next_event(r, &ev, &err) == 1)
    if (ev.kind == TC_EV_INSN)
      for (int i = 0; i < NT; i++)
        if (ev.u.insn.index == t[i]) {
          memcpy(st + i * a->state_size, ev.u.insn.state_before, a->state_size);
          pc[i] = ev.u.insn.pc;
        }
  F->close_reader(r);
  /* memory hashes: seek to t and hash, compared with a replay to t made
   * by a reader without the cache */
  char nocache[1024];
  if (snprintf(nocache, sizeof nocache, "%s-nocache", path) >=
      (int)sizeof nocache)
    abort();
  copy_trace(path, nocache);
  unlink(path_in(nocache, "trace.cache"));
  rvn_reader_stats rs;
  r = F->open_reader(path, &err);
  tc_reader *r2 = F->open_reader(nocache, &err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(r);
  CU_ASSERT_PTR_NOT_NULL_FATAL(r2);
  uint64_t every_n = strtoull(every, NULL, 10);
  for (int i = 0; i < NT; i++) {
    CU_ASSERT_EQUAL_FATAL(F->seek(r, t[i], &err), 0);
    rvn_reader_get_stats(r, &rs);
    CU_ASSERT(rs.cache_index_extension);
    CU_ASSERT(rs.insns_replayed_by_last_seek <= every_n);
    CU_ASSERT_EQUAL_FATAL(F->next_event(r, &ev, &err), 1);
    CU_ASSERT_EQUAL(ev.kind, TC_EV_KEYFRAME);
    CU_ASSERT_EQUAL(
        memcmp(ev.u.key.state, st + i * a->state_size, a->state_size), 0);
    CU_ASSERT_EQUAL_FATAL(F->next_event(r, &ev, &err), 1);
    CU_ASSERT_EQUAL(ev.kind, TC_EV_INSN);
    CU_ASSERT_EQUAL(ev.u.insn.index, t[i]);
    CU_ASSERT_EQUAL(ev.u.insn.pc, pc[i]);
    /* memory after instruction t: same as a full replay's */
    CU_ASSERT_EQUAL_FATAL(F->seek(r2, t[i], &err), 0);
    rvn_reader_get_stats(r2, &rs);
    CU_ASSERT_EQUAL(rs.insns_replayed_by_last_seek, t[i]);
    CU_ASSERT_EQUAL_FATAL(F->next_event(r2, &ev, &err), 1);
    CU_ASSERT_EQUAL_FATAL(F->next_event(r2, &ev, &err), 1);
    CU_ASSERT_EQUAL(mem_hash(r, &rl), mem_hash(r2, &rl));
  }
  /* a next event after a seek goes on to the end */
  CU_ASSERT_EQUAL(F->seek(r, total / 2, &err), 0);
  uint64_t rest = 0;
  int rc;
  while ((rc = F->next_event(r, &ev, &err)) == 1)
    rest += ev.kind == TC_EV_INSN;
  CU_ASSERT_EQUAL(rc, 0);
  CU_ASSERT_EQUAL(rest, total - total / 2);
  F->close_reader(r);
  F->close_reader(r2);
  free(st);
}

static void test_seek_glibc64(void) { seek_vs_replay("glibc64", "20000"); }
static void test_seek_glibc32(void) { seek_vs_replay("glibc32", "7777"); }

/* A cache written by another producer has no instruction index: the
 * reader finds the points' instructions by decoding the events once. */
static void test_seek_without_index(void) {
  const char *path = run_guest("insns64", tu_tmp("noix"), "500");
  char cp[1024];
  if (snprintf(cp, sizeof cp, "%s-plain", path) >= (int)sizeof cp)
    abort();
  copy_trace(path, cp);
  size_t n;
  uint8_t *c = tu_read_file(path_in(cp, "trace.cache"), &n);
  CU_ASSERT_PTR_NOT_NULL_FATAL(c);
  uint64_t hs = le(c + RVN_HEADER_SIZE, 8);
  CU_ASSERT_FATAL(hs > 4);
  /* header section = the page size alone */
  memmove(c + RVN_HEADER_SIZE + 12, c + RVN_HEADER_SIZE + 8 + hs,
          n - (RVN_HEADER_SIZE + 8 + hs));
  n -= hs - 4;
  put(c + RVN_HEADER_SIZE, 4, 8);
  CU_ASSERT_EQUAL(tu_write_file(path_in(cp, "trace.cache"), c, n), 0);
  free(c);
  tc_error err = {{0}};
  tc_reader *r = F->open_reader(cp, &err), *r0 = F->open_reader(path, &err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(r);
  CU_ASSERT_PTR_NOT_NULL_FATAL(r0);
  for (int i = 0; i < 20; i++) {
    uint64_t t = rnd() % 3000;
    tc_event e1, e2;
    CU_ASSERT_EQUAL_FATAL(F->seek(r, t, &err), 0);
    CU_ASSERT_EQUAL_FATAL(F->seek(r0, t, &err), 0);
    rvn_reader_stats s1;
    rvn_reader_get_stats(r, &s1);
    CU_ASSERT_FALSE(s1.cache_index_extension);
    CU_ASSERT(s1.insns_replayed_by_last_seek <= 500);
    CU_ASSERT_EQUAL(F->next_event(r, &e1, &err), 1);
    CU_ASSERT_EQUAL(F->next_event(r0, &e2, &err), 1);
    CU_ASSERT_EQUAL(memcmp(e1.u.key.state, e2.u.key.state,
                           F->reader_info(r)->arch->state_size),
                    0);
  }
  F->close_reader(r);
  F->close_reader(r0);
}

static void test_dump_from(void) {
  const char *path = run_guest("insns64", tu_tmp("from"), "1000");
  char *o = NULL;
  int st = tu_run_merge(&o, TC_CLI, "dump", "--from", "2500", path, NULL);
  CU_ASSERT_EQUAL(st, 0);
  CU_ASSERT(o && strstr(o, "keyframe #2500"));
  CU_ASSERT(o && strstr(o, "\n2500 "));
  CU_ASSERT(o && !strstr(o, "\n2499 "));
  free(o);
  /* the same line as in a whole dump */
  char *all = NULL;
  tu_run_merge(&all, TC_CLI, "dump", path, NULL);
  o = NULL;
  tu_run_merge(&o, TC_CLI, "dump", "--from", "3000", path, NULL);
  char *l1 = all ? strstr(all, "\n3000 ") : NULL;
  char *l2 = o ? strstr(o, "\n3000 ") : NULL;
  if (!l1 || !l2) {
    CU_FAIL("instruction 3000 missing from a dump");
    free(all);
    free(o);
    return;
  }
  size_t n1 = strcspn(l1 + 1, "\n"), n2 = strcspn(l2 + 1, "\n");
  CU_ASSERT_EQUAL(n1, n2);
  CU_ASSERT_EQUAL(strncmp(l1, l2, n1), 0);
  free(all);
  free(o);
  o = NULL;
  st = tu_run_merge(&o, TC_CLI, "dump", "--from", "99999999", path, NULL);
  CU_ASSERT_EQUAL(st, 1);
  CU_ASSERT(o && strstr(o, "no instruction 99999999"));
  free(o);
  /* a format without seek reads forward to it: the same keyframe state
   * as rvn's seek gives (rvn holds no tid), then --count instructions */
  o = NULL;
  char tct[1024], *o2 = NULL;
  snprintf(tct, sizeof tct, "%s", tu_tmp("from.tct"));
  st = tu_run_merge(&o, TC_CLI, "dump", "--from", "2500", "--count", "3", tct,
                    NULL);
  CU_ASSERT_EQUAL(st, 0);
  tu_run_merge(&o2, TC_CLI, "dump", "--from", "2500", "--count", "3", path,
               NULL);
  const char *k1 = o ? strstr(o, "keyframe #2500") : NULL;
  const char *k2 = o2 ? strstr(o2, "keyframe #2500") : NULL;
  k1 = k1 ? strchr(k1, ':') : NULL;
  k2 = k2 ? strchr(k2, ':') : NULL;
  CU_ASSERT(k1 && k2 && strcspn(k1, "\n") == strcspn(k2, "\n") &&
            strncmp(k1, k2, strcspn(k1, "\n")) == 0);
  CU_ASSERT(o && strstr(o, "\n2500 ") && strstr(o, "\n2502 ") &&
            !strstr(o, "\n2503 ") && !strstr(o, "\n2499 "));
  free(o);
  free(o2);
  o = NULL;
  st = tu_run_merge(&o, TC_CLI, "dump", "--from", "99999999", tct, NULL);
  CU_ASSERT_EQUAL(st, 1);
  CU_ASSERT(o && strstr(o, "no instruction 99999999"));
  free(o);
}

static void test_determinism(void) {
  const char *p1 = run_guest("glibc32", tu_tmp("det1"), "50000");
  char d1[1024];
  snprintf(d1, sizeof d1, "%s", p1);
  const char *p2 = run_guest("glibc32", tu_tmp("det2"), "50000");
  for (int k = 0; k < 2; k++) {
    const char *f = k ? "trace.cache" : "trace.bin";
    size_t n1, n2;
    uint8_t *a = tu_read_file(path_in(d1, f), &n1);
    uint8_t *b = tu_read_file(path_in(p2, f), &n2);
    CU_ASSERT_FATAL(a && b);
    CU_ASSERT_EQUAL(n1, n2);
    CU_ASSERT(n1 == n2 && memcmp(a, b, n1) == 0);
    free(a);
    free(b);
  }
}

static void test_options(void) {
  char *o = NULL;
  int st = tu_run_merge(&o, TC_CLI, "record", "-f", "rvn", "-O",
                        "rvn.cache-every=abc", "-o", tu_tmp("opt"), "--",
                        tu_guest("hello64"), NULL);
  CU_ASSERT_NOT_EQUAL(st, 0);
  CU_ASSERT(o && strstr(o, "cache-every"));
  free(o);
  o = NULL;
  st = tu_run_merge(&o, TC_CLI, "record", "-f", "rvn", "-O", "rvn.colour=red",
                    "-o", tu_tmp("opt"), "--", tu_guest("hello64"), NULL);
  CU_ASSERT_NOT_EQUAL(st, 0);
  CU_ASSERT(o && strstr(o, "unknown writer option"));
  free(o);
  /* --cache-every 0: no cache points, a valid empty cache */
  o = NULL;
  st = tu_run_merge(&o, TC_CLI, "record", "-q", "-f", "rvn", "--cache-every",
                    "0", "-o", tu_tmp("opt0"), "--", tu_guest("hello64"), NULL);
  CU_ASSERT_EQUAL(st, 0);
  free(o);
  tc_error err = {{0}};
  tc_reader *r = F->open_reader(tu_tmp("opt0.rvn"), &err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(r);
  rvn_reader_stats rs;
  rvn_reader_get_stats(r, &rs);
  CU_ASSERT_EQUAL(rs.cache_points, 0);
  CU_ASSERT_EQUAL(F->seek(r, 40, &err), 0);
  F->close_reader(r);
}

/* ------------------------------------------------------------ corruption */

typedef struct patch {
  const char *what; /* expected in the message */
  int cache;        /* patch trace.cache instead */
  long off;         /* byte offset (negative: from the end) */
  unsigned width;   /* bytes to set */
  uint64_t value;
} patch;

/* Applies one patch to a copy of the synthetic trace and expects it to be
 * refused (at open or while reading) with a one-line message. */
static void expect_refused(const char *src, const char *what, int cache,
                           const uint8_t *data, size_t n) {
  const char *dir = tu_tmp("bad.rvn");
  copy_trace(src, dir);
  CU_ASSERT_EQUAL_FATAL(
      tu_write_file(path_in(dir, cache ? "trace.cache" : "trace.bin"), data, n),
      0);
  tc_error err = {{0}};
  long got = read_all(dir, &err);
  CU_ASSERT_EQUAL(got, -1);
  if (got == -1) {
    CU_ASSERT_PTR_NULL(strchr(err.msg, '\n'));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "rvn: "));
    if (what && !strstr(err.msg, what)) {
      fprintf(stderr, "expected '%s' in: %s\n", what, err.msg);
      CU_FAIL("message");
    }
  } else {
    fprintf(stderr, "accepted a corrupted copy (%s)\n", what ? what : "?");
  }
}

static long find(const uint8_t *f, size_t n, const void *s, size_t k) {
  const uint8_t *p = memmem(f, n, s, k);
  return p ? (long)(p - f) : -1;
}

static void test_corrupted(void) {
  static char src[1024]; /* tu_tmp's buffers rotate */
  snprintf(src, sizeof src, "%s", tu_tmp("syn.rvn"));
  write_synthetic(src, "3");
  size_t n, cn;
  uint8_t *f = tu_read_file(path_in(src, "trace.bin"), &n);
  uint8_t *c = tu_read_file(path_in(src, "trace.cache"), &cn);
  CU_ASSERT_FATAL(f && c);
  sections s;
  CU_ASSERT_EQUAL_FATAL(split(f, n, &s), 0);
  uint8_t *g = malloc(n + 16), *h = malloc(cn + 16);
  uint64_t md = s.off[1];
  long regs_at = (long)md + 5 + 4 + 3 * 12 + 4; /* the first register */
  long pkru = find(f, n, "\004pkru", 5);
  long eflags = find(f, n, "\006eflags", 7);
  long statics = find(f, n, "\011cpuid_pat", 10);
  long ops = find(f + md, s.size[1], "\022\021\000\001", 4) + (long)md;
  CU_ASSERT_FATAL(pkru > 0 && eflags > 0 && statics > 0 && ops > (long)md);
  const patch patches[] = {
      {"Wrong magic", 0, 0, 1, 'x'},
      {"Metadata version in the future", 0, 8, 4, 2},
      {"resource type 2", 0, 12, 4, 2},
      {"Incompatible version 2.0.1", 0, 24, 1, '2'},
      {"not a semantic version", 0, 1064, 1, 'x'},
      {"empty tool name", 0, 536, 8, 0},
      {"more than its 512-byte field", 0, 16, 8, 513},
      {"compression 1", 0, (long)s.off[0], 1, 1},
      {"unsupported architecture magic", 0, (long)md, 1, 'y'},
      {"arm64", 0, (long)md, 4, RVN_ARCH_ARM64},
      {"between 1 and 8", 0, (long)md + 4, 1, 9},
      {"register id 0 is defined twice", 0, regs_at + 8, 2, 0}, /* rbx */
      {"is 2 bytes, REVEN's is 4", 0, eflags - 2, 2, 2},
      {"mandatory register pkru", 0, pkru + 4, 1, 'v'},
      {"rflags", 0, eflags + 1, 6, 0x7367616c6672ull},
      {"overlaps with a register id", 0, ops, 1, 0x11},
      {"cannot be 0xff", 0, ops, 1, 0xff},
      {"unknown register id", 0, ops + 1, 2, 0x999},
      {"unknown operator 4", 0, ops + 3, 1, 4},
      {"static register cpuid_pat is not declared", 0, statics + 1, 1, 'C'},
      {"regions add up to", 0, (long)s.off[2] - 8, 8, s.size[2] - 1},
      {"missing from the initial registers", 0, (long)s.off[3], 4,
       RVN_NREGS - 1},
      {"appears twice", 0, (long)s.off[3] + 4 + 10, 2, 0}, /* rbx -> rax */
      {"not defined in the machine description", 0, (long)s.off[3] + 4, 2,
       0x999},
      {"ends after 10 of the 11", 0, (long)s.off[4], 8, 11},
      {"trailing bytes after the 9", 0, (long)s.off[4], 8, 9},
      {"register or operation 254", 0, (long)s.off[4] + 8 + 16, 1, 0xfe},
      {"outside every memory region", 0, (long)s.off[4] + 8 + 1, 6, 0x1000},
      {"continuation chunk cannot be 0xff", 0,
       (long)s.off[4] + 8 + 18 + 1 + 13 + 300 + 13 * 8, 1, 0xff},
      {"unknown type of event", 0, (long)s.off[4] + 8 + 499 + 1, 1, 0x01},
      /* the cache */
      {"resource type 1", 1, 12, 4, 1},
      {"page size 8192", 1, RVN_HEADER_SIZE + 8, 4, 8192},
      {"instruction index", 1, RVN_HEADER_SIZE + 8 + 4 + 12 + 8, 8, 2},
      {"holds 113 registers", 1, -1, 0, 0}, /* filled below */
      {NULL, 0, 0, 0, 0}};
  /* cache offsets */
  uint64_t hs = le(c + RVN_HEADER_SIZE, 8);
  uint64_t pb = RVN_HEADER_SIZE + 8 + hs + 8, ps = le(c + pb - 8, 8);
  uint64_t ib = pb + ps + 8;
  for (const patch *p = patches; p->what; p++) {
    const uint8_t *src_b = p->cache ? c : f;
    size_t len = p->cache ? cn : n;
    uint8_t *d = p->cache ? h : g;
    memcpy(d, src_b, len);
    long off = p->off;
    unsigned width = p->width;
    uint64_t value = p->value;
    if (p->cache && p->off == -1) { /* register count of point 1 */
      off = (long)pb;
      width = 2;
      value = RVN_NREGS - 1;
    }
    put(d + off, value, width);
    expect_refused(src, p->what, p->cache, d, len);
  }
  /* more cache damage */
  memcpy(h, c, cn);
  put(h + ib + 8 + 28, STACK + 1, 8); /* a misaligned page */
  expect_refused(src, "not aligned", 1, h, cn);
  memcpy(h, c, cn);
  put(h + ib + 8 + 28, 0x10000, 8); /* a page outside the regions */
  expect_refused(src, "outside the memory regions", 1, h, cn);
  memcpy(h, c, cn);
  put(h + ib + 8, 999, 8); /* a context beyond the trace */
  expect_refused(src, "is not in 1..10", 1, h, cn);
  memcpy(h, c, cn);
  put(h + ib + 8 + 8, 3, 8); /* a trace offset inside the event count */
  expect_refused(src, "outside the events section", 1, h, cn);
  memcpy(h, c, cn);
  put(h + pb + 4, 9, 2); /* a register size that does not match */
  expect_refused(src, "doesn't match declared", 1, h, cn);
  memcpy(h, c, cn);
  h[cn] = 0;
  expect_refused(src, "trailing bytes after the index", 1, h, cn + 1);
  /* trailing bytes after the events */
  memcpy(g, f, n);
  g[n] = 0;
  expect_refused(src, "trailing bytes after the events section", 0, g, n + 1);
  /* every truncation of trace.bin is refused */
  for (size_t k = 0; k < n; k += 1 + k / 64)
    expect_refused(src, NULL, 0, f, k);
  /* every truncation of trace.cache too */
  for (size_t k = 0; k < cn; k += 1 + k / 16)
    expect_refused(src, NULL, 1, c, k);
  /* random byte flips: refused or read, never a crash; messages are one
   * line */
  for (int i = 0; i < 400; i++) {
    memcpy(g, f, n);
    size_t at = RVN_HEADER_SIZE + rnd() % (n - RVN_HEADER_SIZE);
    if (at >= s.off[2] && at < s.off[2] + s.size[2])
      at = s.off[4] + rnd() % s.size[4]; /* memory bytes are data */
    g[at] ^= (uint8_t)(1 + rnd() % 255);
    const char *dir = tu_tmp("flip.rvn");
    copy_trace(src, dir);
    CU_ASSERT_EQUAL_FATAL(tu_write_file(path_in(dir, "trace.bin"), g, n), 0);
    tc_error err = {{0}};
    if (read_all(dir, &err) < 0)
      CU_ASSERT_PTR_NULL(strchr(err.msg, '\n'));
    tc_reader *r = F->open_reader(dir, &err);
    if (r) {
      F->seek(r, rnd() % 10, &err);
      F->close_reader(r);
    }
  }
  free(f);
  free(c);
  free(g);
  free(h);
  /* through the CLI: exit 1, one line on stderr */
  char *o = NULL;
  const char *dir = tu_tmp("bad.rvn");
  int st = tu_run_merge(&o, TC_CLI, "dump", dir, NULL);
  CU_ASSERT_EQUAL(st, 1);
  CU_ASSERT(o && strstr(o, "tracecorn: rvn: "));
  free(o);
}

int main(void) {
  static const tu_case cases[] = {
      {"holds_reg from threads at once", test_holds_reg_threads},
      {"format identity", test_format_identity},
      {"other arches refused naming formats", test_refuse_arm_record},
      {"container header bytes", test_container_header},
      {"machine description bytes", test_machine_description},
      {"event bytes: push, 20 writes, flags, id >= 0xff, syscall, 15 regs, "
       "fault",
       test_event_bytes},
      {"cache bytes", test_cache_bytes},
      {"read the synthetic trace back, seek each instruction",
       test_read_synthetic},
      {"page tables identity-map every page", test_page_tables},
      {"tracecorn verify -f rvn on every x86 guest", test_verify_guests},
      {"seek equals replay (glibc64)", test_seek_glibc64},
      {"seek equals replay (glibc32)", test_seek_glibc32},
      {"seek without tracecorn's index", test_seek_without_index},
      {"dump --from", test_dump_from},
      {"deterministic files", test_determinism},
      {"writer options", test_options},
      {"corrupted and truncated copies refused", test_corrupted},
      {NULL, NULL}};
  return tu_run_suite("rvn", cases);
}
