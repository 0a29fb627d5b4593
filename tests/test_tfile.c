/* SPDX-License-Identifier: GPL-2.0-or-later */
/* tfile format: GDB (`target tfile`) is the judge of what the writer
 * produces; the reader must give back what was written and reject broken
 * files with GDB's messages. */
#include <CUnit/CUnit.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/elf/symbols.h"
#include "testutil.h"
#include "tracecorn/tracecorn.h"

extern const tc_format tc_format_tfile;
static const tc_format *const fmt = &tc_format_tfile;

/* ------------------------------------------------------ synthetic traces */

enum { MAX_INSNS = 4, MAX_MEM = 4, STATE_MAX = 1024, BIG = 70000 };

typedef struct synth {
  const tc_arch *arch;
  size_t n;
  uint8_t states[MAX_INSNS + 1][STATE_MAX];
  tc_insn_event ev[MAX_INSNS];
  uint16_t regs[MAX_INSNS][128];
  tc_mem_access mem[MAX_INSNS][MAX_MEM];
  uint8_t data[MAX_INSNS][MAX_MEM][2][16]; /* before, after */
} synth;

static uint8_t big_after[BIG], big_before[BIG];

static int reg(const tc_arch *a, const char *name) {
  int i = tc_arch_reg_index(a, name);
  CU_ASSERT_FATAL(i >= 0);
  return i;
}

static void set(synth *s, size_t st, const char *name, uint64_t v) {
  tc_state_set(s->arch, s->states[st], reg(s->arch, name), v);
}

static void set_bytes(synth *s, size_t st, const char *name, const void *p,
                      size_t n) {
  const tc_reg_info *ri = &s->arch->regs[reg(s->arch, name)];
  CU_ASSERT_FATAL(ri->size == n);
  memcpy(s->states[st] + ri->offset, p, n);
}

/* Instruction i: bytes at pc; state i+1 must already be filled. */
static void add_insn(synth *s, uint64_t pc, const char *hex) {
  size_t i = s->n++;
  tc_insn_event *in = &s->ev[i];
  in->index = i;
  in->pc = pc;
  for (; hex[0] && hex[1]; hex += 2) {
    unsigned b;
    sscanf(hex, "%2x", &b);
    in->bytes[in->size++] = (uint8_t)b;
  }
  in->state_before = s->states[i];
  in->state_after = s->states[i + 1];
  in->regs = s->regs[i];
  const tc_arch *a = s->arch;
  for (int r = 0; r < a->nregs; r++)
    if (memcmp(s->states[i] + a->regs[r].offset,
               s->states[i + 1] + a->regs[r].offset, a->regs[r].size) != 0)
      s->regs[i][in->nregs++] = (uint16_t)r;
  in->mem = s->mem[i];
}

static void add_mem(synth *s, int kind, uint64_t addr, const char *before,
                    const char *after) {
  tc_insn_event *in = &s->ev[s->n - 1];
  uint32_t k = in->nmem++;
  tc_mem_access *m = &s->mem[s->n - 1][k];
  uint8_t *b = s->data[s->n - 1][k][0], *a = s->data[s->n - 1][k][1];
  m->addr = addr;
  m->kind = (uint8_t)kind;
  m->size = (uint32_t)strlen(before) / 2;
  for (uint32_t j = 0; j < m->size; j++) {
    unsigned x, y;
    sscanf(before + 2 * j, "%2x", &x);
    sscanf(after + 2 * j, "%2x", &y);
    b[j] = (uint8_t)x;
    a[j] = (uint8_t)y;
  }
  m->before = b;
  m->after = kind == TC_MEM_READ ? b : a;
}

static void copy_state(synth *s, size_t from) {
  memcpy(s->states[from + 1], s->states[from], STATE_MAX);
}

/* x87 1.0 as the 10-byte extended format, little-endian. */
static const uint8_t st_one[10] = {0, 0, 0, 0, 0, 0, 0, 0x80, 0xff, 0x3f};

static void synth_x64(synth *s) {
  memset(s, 0, sizeof *s);
  s->arch = tc_arch_by_id(TC_ARCH_X86_64);
  CU_ASSERT_FATAL(s->arch != NULL);
  set(s, 0, "rip", 0x401000);
  set(s, 0, "rax", 0x1122334455667788ull);
  set(s, 0, "rbx", 0x10);
  set(s, 0, "rcx", 0x20);
  set(s, 0, "rdx", 0x30);
  set(s, 0, "rsi", 0x40);
  set(s, 0, "rdi", 0x50);
  set(s, 0, "rsp", 0x7ffffffde000ull);
  set(s, 0, "rbp", 0x7ffffffde100ull);
  set(s, 0, "r8", 0x808);
  set(s, 0, "r15", 0xf15f15f15ull);
  set(s, 0, "rflags", 0x246);
  set(s, 0, "cs", 0x33);
  set(s, 0, "ss", 0x2b);
  set(s, 0, "ds", 0x2b);
  set(s, 0, "gs", 0x63);
  set(s, 0, "fs_base", 0x4c3880);
  set(s, 0, "fpcw", 0x37f);
  set(s, 0, "fptag", 0xffff);
  set(s, 0, "fip", 0x401234);
  set(s, 0, "mxcsr", 0x1f80);
  uint8_t x[16];
  for (int i = 0; i < 16; i++)
    x[i] = (uint8_t)i;
  set_bytes(s, 0, "xmm0", x, 16);
  for (int i = 0; i < 16; i++)
    x[i] = (uint8_t)(0xa0 + i);
  set_bytes(s, 0, "xmm15", x, 16);
  set_bytes(s, 0, "st0", st_one, 10);

  /* 0: mov [rsp-8], rax */
  copy_state(s, 0);
  set(s, 1, "rip", 0x401005);
  add_insn(s, 0x401000, "48894424f8");
  add_mem(s, TC_MEM_WRITE, 0x7ffffffddff8ull, "0000000000000000",
          "8877665544332211");
  /* 1: mov ebx, [0x601000] */
  copy_state(s, 1);
  set(s, 2, "rip", 0x40100c);
  set(s, 2, "rbx", 0x04030201);
  add_insn(s, 0x401005, "8b1c2500106000");
  add_mem(s, TC_MEM_READ, 0x601000, "01020304", "01020304");
  /* 2: overlapping read/write and an adjacent read, merged in one block
   * of post-values */
  copy_state(s, 2);
  set(s, 3, "rip", 0x401014);
  set(s, 3, "rflags", 0x202);
  add_insn(s, 0x40100c, "4801042500106000");
  add_mem(s, TC_MEM_READ, 0x601000, "0102030405060708", "0102030405060708");
  add_mem(s, TC_MEM_WRITE, 0x601004, "05060708", "aabbccdd");
  add_mem(s, TC_MEM_READ, 0x601008, "090a", "090a");
  /* 3: a write larger than one M block */
  copy_state(s, 3);
  set(s, 4, "rip", 0x401015);
  add_insn(s, 0x401014, "90");
  for (int i = 0; i < BIG; i++)
    big_after[i] = (uint8_t)(i * 7);
  tc_insn_event *in = &s->ev[3];
  s->mem[3][0] =
      (tc_mem_access){0x700000, BIG, TC_MEM_WRITE, big_before, big_after};
  in->nmem = 1;
}

static void synth_x86(synth *s) {
  memset(s, 0, sizeof *s);
  s->arch = tc_arch_by_id(TC_ARCH_X86);
  CU_ASSERT_FATAL(s->arch != NULL);
  set(s, 0, "eip", 0x8049000);
  set(s, 0, "eax", 0x11111111);
  set(s, 0, "ecx", 0x22222222);
  set(s, 0, "edx", 0x33333333);
  set(s, 0, "ebx", 0x44444444);
  set(s, 0, "esp", 0xffffd000);
  set(s, 0, "ebp", 0xffffd010);
  set(s, 0, "esi", 0x55);
  set(s, 0, "edi", 0x66);
  set(s, 0, "eflags", 0x286);
  set(s, 0, "cs", 0x23);
  set(s, 0, "ss", 0x2b);
  set(s, 0, "ds", 0x2b);
  set(s, 0, "gs", 0x63);
  set(s, 0, "fpcw", 0x37f);
  uint8_t x[16];
  for (int i = 0; i < 16; i++)
    x[i] = (uint8_t)(0x70 + i);
  set_bytes(s, 0, "xmm7", x, 16);
  set_bytes(s, 0, "st0", st_one, 10);
  /* 0: push eax */
  copy_state(s, 0);
  set(s, 1, "eip", 0x8049001);
  set(s, 1, "esp", 0xffffcffc);
  add_insn(s, 0x8049000, "50");
  add_mem(s, TC_MEM_WRITE, 0xffffcffc, "00000000", "11111111");
  /* 1: inc ecx */
  copy_state(s, 1);
  set(s, 2, "eip", 0x8049002);
  set(s, 2, "ecx", 0x22222223);
  set(s, 2, "eflags", 0x202);
  add_insn(s, 0x8049001, "41");
}

static int write_synth(const synth *s, const char *path, tc_error *err) {
  tc_trace_info info = {0};
  info.arch = s->arch;
  info.entry = s->ev[0].pc;
  info.has_memory = 1;
  info.initial_state = s->states[0];
  tc_writer *w = fmt->open_writer(path, &info, err);
  if (!w)
    return -1;
  int rc = 0;
  for (size_t i = 0; i < s->n && rc == 0; i++) {
    tc_event ev = {.kind = TC_EV_INSN};
    ev.u.insn = s->ev[i];
    rc = fmt->write_event(w, &ev, err);
    /* events tfile cannot hold are skipped */
    tc_event sys = {.kind = TC_EV_SYSCALL};
    if (rc == 0)
      rc = fmt->write_event(w, &sys, err);
  }
  tc_event ex = {.kind = TC_EV_EXIT};
  ex.u.exit.reason = TC_EXIT_EXITED;
  if (rc == 0)
    rc = fmt->write_event(w, &ex, err);
  if (fmt->close_writer(w, err) != 0)
    rc = -1;
  return rc;
}

/* ---------------------------------------------------------- GDB output */

/* Runs gdb on `tf` with the given -ex arguments; returns its output. */
static char *gdb(const char *tf, const char *cmds) {
  char *cmd = NULL, *out = NULL;
  CU_ASSERT_FATAL(
      asprintf(&cmd, "gdb -batch -nx -ex 'target tfile %s' %s", tf, cmds) > 0);
  int st = tu_run(cmd, &out, 1);
  free(cmd);
  CU_ASSERT(st == 0);
  CU_ASSERT_FATAL(out != NULL);
  return out;
}

/* The text after "@@name\n" up to the next "@@" (static copy). */
static const char *section(const char *out, const char *name) {
  static char buf[1 << 16];
  char marker[64];
  snprintf(marker, sizeof marker, "@@%s\n", name);
  const char *p = strstr(out, marker);
  CU_ASSERT_FATAL(p != NULL);
  p += strlen(marker);
  const char *e = strstr(p, "@@");
  size_t n = e ? (size_t)(e - p) : strlen(p);
  if (n >= sizeof buf)
    n = sizeof buf - 1;
  memcpy(buf, p, n);
  buf[n] = 0;
  return buf;
}

/* `info registers` line "name   0xVALUE ..." -> 0 and *v. */
static int reg_line(const char *sect, const char *name, uint64_t *v) {
  size_t n = strlen(name);
  for (const char *p = sect; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : p)
    if (strncmp(p, name, n) == 0 && p[n] == ' ')
      return sscanf(p + n, " 0x%" SCNx64, v) == 1 ? 0 : -1;
  return -1;
}

static void assert_reg(const char *sect, const char *name, uint64_t want) {
  uint64_t got = ~want;
  int rc = reg_line(sect, name, &got);
  CU_ASSERT(rc == 0);
  CU_ASSERT(got == want);
  if (rc != 0 || got != want)
    fprintf(stderr, "GDB %s: want %#" PRIx64 " got %#" PRIx64 " (rc %d)\n",
            name, want, got, rc);
}

/* "key=VALUE" emitted by -ex 'echo key=' -ex 'output ...' */
static const char *keyval(const char *sect, const char *key) {
  static char val[256];
  char k[64];
  int kn = snprintf(k, sizeof k, "%s=", key);
  if (kn < 0 || (size_t)kn >= sizeof k)
    return "";
  const char *p = strstr(sect, k);
  if (!p)
    return "";
  p += strlen(k);
  size_t n = strcspn(p, "\n");
  if (n >= sizeof val)
    n = sizeof val - 1;
  memcpy(val, p, n);
  val[n] = 0;
  return val;
}

/* Parses `x/Nxb` lines into vals[addr - base] (-1 = <unavailable>,
 * -2 = not shown). */
static void x_bytes(const char *sect, uint64_t base, int *vals, size_t n) {
  for (size_t i = 0; i < n; i++)
    vals[i] = -2;
  for (const char *p = sect; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : p) {
    uint64_t a;
    int used;
    if (sscanf(p, "0x%" SCNx64 ":%n", &a, &used) != 1)
      continue;
    const char *q = p + used;
    for (;;) {
      while (*q == '\t' || *q == ' ')
        q++;
      if (*q == '\n' || !*q)
        break;
      int v = -1;
      unsigned b;
      if (strncmp(q, "<unavailable>", 13) == 0)
        q += 13;
      else if (sscanf(q, "0x%2x", &b) == 1) {
        v = (int)b;
        q += 4;
      } else
        break;
      if (a >= base && a - base < n)
        vals[a - base] = v;
      a++;
    }
  }
}

static void assert_mem(const char *sect, uint64_t addr, const uint8_t *want,
                       size_t n) {
  int vals[64];
  CU_ASSERT_FATAL(n <= 64);
  x_bytes(sect, addr, vals, n);
  for (size_t i = 0; i < n; i++) {
    CU_ASSERT(vals[i] == want[i]);
    if (vals[i] != want[i])
      fprintf(stderr, "GDB mem %#" PRIx64 ": want %02x got %d\n", addr + i,
              want[i], vals[i]);
  }
}

/* ------------------------------------------------------------ GDB tests */

static void test_gdb_x64(void) {
  synth *s = malloc(sizeof *s);
  synth_x64(s);
  const char *tf = tu_tmp("x64.tf");
  tc_error err = {{0}};
  CU_ASSERT_FATAL(write_synth(s, tf, &err) == 0);
  char *out = gdb(
      tf,
      "-ex 'echo @@F0\\n' -ex 'tfind 0' "
      "-ex 'info registers rip rax rbx rcx rdx rsi rdi rbp rsp r8 r15 eflags "
      "cs ss ds es fs gs fs_base gs_base fctrl ftag fioff mxcsr' "
      "-ex 'echo xmm0=' -ex 'output/x $xmm0' -ex 'echo \\n' "
      "-ex 'echo xmm15=' -ex 'output/x $xmm15' -ex 'echo \\n' "
      "-ex 'echo st0=' -ex 'output $st0' -ex 'echo \\n' "
      "-ex 'echo orig_rax=' -ex 'output $orig_rax' -ex 'echo \\n' "
      "-ex 'echo icount=' -ex 'output $icount' -ex 'echo \\n' "
      "-ex 'x/5xb 0x401000' -ex 'x/9xb 0x7ffffffddff8' "
      "-ex 'echo @@TDUMP0\\n' -ex 'tdump' "
      "-ex 'echo @@F1\\n' -ex 'tfind' -ex 'info registers rip rbx' "
      "-ex 'x/4xb 0x601000' -ex 'x/8xb 0x7ffffffddff8' "
      "-ex 'echo @@TDUMP1\\n' -ex 'tdump' "
      "-ex 'echo @@F2\\n' -ex 'tfind 2' -ex 'info registers rip eflags' "
      "-ex 'x/11xb 0x601000' "
      "-ex 'echo icount=' -ex 'output $icount' -ex 'echo \\n' "
      "-ex 'echo @@F3\\n' -ex 'tfind 3' -ex 'x/2xb 0x70fffe' "
      "-ex 'x/2xb 0x71116f' "
      "-ex 'echo frame=' -ex 'output $trace_frame' -ex 'echo \\n' "
      "-ex 'echo @@FINAL\\n' -ex 'tfind' -ex 'info registers rip' "
      "-ex 'echo icount=' -ex 'output $icount' -ex 'echo \\n' "
      "-ex 'echo @@END\\n' -ex 'tfind' "
      "-ex 'echo frame=' -ex 'output $trace_frame' -ex 'echo \\n' "
      "-ex 'tfind 4' -ex 'echo @@STATUS\\n' -ex 'tstatus' "
      "-ex 'info tracepoints' -ex 'echo @@\\n'");
  CU_ASSERT(strstr(out, "Premature end") == NULL);
  CU_ASSERT(strstr(out, "warning") == NULL);
  CU_ASSERT(strstr(out, "Ignoring") == NULL);
  if (strstr(out, "warning") || strstr(out, "Premature"))
    fprintf(stderr, "%s\n", out);

  const char *f0 = section(out, "F0");
  CU_ASSERT(strstr(f0, "Found trace frame 0, tracepoint 1") != NULL);
  const char *names[] = {"rip", "rax", "rbx", "rcx",     "rdx",    "rsi", "rdi",
                         "rbp", "rsp", "r8",  "r15",     "cs",     "ss",  "ds",
                         "es",  "fs",  "gs",  "fs_base", "gs_base"};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    assert_reg(f0, names[i],
               tc_state_get(s->arch, s->states[0], reg(s->arch, names[i])));
  assert_reg(f0, "eflags", 0x246);
  assert_reg(f0, "fctrl", 0x37f);
  assert_reg(f0, "ftag", 0xffff);
  assert_reg(f0, "fioff", 0x401234);
  assert_reg(f0, "mxcsr", 0x1f80);
  CU_ASSERT_STRING_EQUAL(keyval(f0, "xmm0"),
                         "0xf0e0d0c0b0a09080706050403020100");
  CU_ASSERT_STRING_EQUAL(keyval(f0, "xmm15"),
                         "0xafaeadacabaaa9a8a7a6a5a4a3a2a1a0");
  CU_ASSERT_STRING_EQUAL(keyval(f0, "st0"), "1");
  CU_ASSERT_STRING_EQUAL(keyval(f0, "orig_rax"), "-1");
  CU_ASSERT_STRING_EQUAL(keyval(f0, "icount"), "1");
  assert_mem(f0, 0x401000, s->ev[0].bytes, 5);
  /* the write's value after the instruction; the byte after it was not
   * collected */
  assert_mem(f0, 0x7ffffffddff8ull,
             (const uint8_t *)"\x88\x77\x66\x55\x44\x33\x22\x11", 8);
  int vals[9];
  x_bytes(f0, 0x7ffffffddff8ull, vals, 9);
  CU_ASSERT(vals[8] == -1);

  /* tdump shows $regs both at the tracepoint and in stepping frames. */
  const char *t0 = section(out, "TDUMP0");
  CU_ASSERT(strstr(t0, "Data collected at tracepoint 1, trace frame 0") !=
            NULL);
  assert_reg(t0, "rax", 0x1122334455667788ull);
  assert_reg(t0, "rip", 0x401000);
  const char *t1 = section(out, "TDUMP1");
  CU_ASSERT(strstr(t1, "trace frame 1") != NULL);
  assert_reg(t1, "rip", 0x401005);
  assert_reg(t1, "rbx", 0x10);

  const char *f1 = section(out, "F1");
  /* one tracepoint per instruction address */
  CU_ASSERT(strstr(f1, "Found trace frame 1, tracepoint 2") != NULL);
  assert_reg(f1, "rip", 0x401005);
  assert_reg(f1, "rbx", 0x10); /* state before the load */
  assert_mem(f1, 0x601000, (const uint8_t *)"\x01\x02\x03\x04", 4);
  x_bytes(f1, 0x7ffffffddff8ull, vals, 8); /* memory is per frame */
  CU_ASSERT(vals[0] == -1);

  const char *f2 = section(out, "F2");
  assert_reg(f2, "rip", 0x40100c);
  assert_reg(f2, "eflags", 0x246);
  assert_mem(f2, 0x601000,
             (const uint8_t *)"\x01\x02\x03\x04\xaa\xbb\xcc\xdd\x09\x0a", 10);
  int v11[11];
  x_bytes(f2, 0x601000, v11, 11);
  CU_ASSERT(v11[10] == -1);
  CU_ASSERT_STRING_EQUAL(keyval(f2, "icount"), "3");

  /* a 70000-byte region split into M blocks, stitched by GDB */
  const char *f3 = section(out, "F3");
  assert_mem(f3, 0x70fffe, big_after + 65534, 2);
  int tail[2];
  x_bytes(f3, 0x71116f, tail, 2);
  CU_ASSERT(tail[0] == big_after[BIG - 1]);
  CU_ASSERT(tail[1] == -1);
  CU_ASSERT_STRING_EQUAL(keyval(f3, "frame"), "3");

  /* after the last instruction: its state after, $icount 0 */
  const char *fin = section(out, "FINAL");
  CU_ASSERT(strstr(fin, "Found trace frame 4, tracepoint 5") != NULL);
  assert_reg(fin, "rip", 0x401015);
  CU_ASSERT_STRING_EQUAL(keyval(fin, "icount"), "0");
  /* past the last frame: the end marker is found, no premature end */
  const char *end = section(out, "END");
  CU_ASSERT(strstr(end, "No trace frame found") != NULL);
  CU_ASSERT_STRING_EQUAL(keyval(end, "frame"), "-1");
  const char *st = section(out, "STATUS");
  CU_ASSERT(strstr(st, "Collected 5 trace frames") != NULL);
  CU_ASSERT(strstr(st, "0x0000000000401000") != NULL);
  CU_ASSERT(strstr(st, "0x0000000000401014") != NULL);
  /* the catch-all tracepoint of the final frame steps */
  CU_ASSERT(strstr(st, "while-stepping 65535") != NULL);
  CU_ASSERT(strstr(st, "tracepoint already hit 1 time") != NULL);
  if (strstr(st, "5 trace frames") == NULL)
    fprintf(stderr, "%s\n", out);
  free(out);
  free(s);
}

static void test_gdb_x86(void) {
  synth *s = malloc(sizeof *s);
  synth_x86(s);
  const char *tf = tu_tmp("x86.tf");
  tc_error err = {{0}};
  CU_ASSERT_FATAL(write_synth(s, tf, &err) == 0);
  char *out = gdb(tf, "-ex 'echo @@F0\\n' -ex 'tfind 0' "
                      "-ex 'info registers eip eax ecx edx ebx esp ebp esi "
                      "edi eflags cs ss ds es fs gs fctrl' "
                      "-ex 'echo xmm7=' -ex 'output/x $xmm7' "
                      "-ex 'echo \\n' "
                      "-ex 'echo st0=' -ex 'output $st0' -ex 'echo \\n' "
                      "-ex 'echo orig_eax=' -ex 'output $orig_eax' "
                      "-ex 'echo \\n' -ex 'x/1xb 0x8049000' "
                      "-ex 'x/4xb 0xffffcffc' "
                      "-ex 'echo @@F1\\n' -ex 'tfind 1' "
                      "-ex 'info registers eip ecx esp eflags' "
                      "-ex 'echo arch=' -ex 'show architecture' "
                      "-ex 'echo @@END\\n' -ex 'tfind 3' -ex 'echo @@\\n'");
  CU_ASSERT(strstr(out, "warning") == NULL);
  const char *f0 = section(out, "F0");
  const char *names[] = {"eip", "eax", "ecx", "edx",    "ebx",  "esp",
                         "ebp", "esi", "edi", "eflags", "cs",   "ss",
                         "ds",  "es",  "fs",  "gs",     "fctrl"};
  const char *src[] = {"eip", "eax", "ecx", "edx",    "ebx", "esp",
                       "ebp", "esi", "edi", "eflags", "cs",  "ss",
                       "ds",  "es",  "fs",  "gs",     "fpcw"};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    assert_reg(f0, names[i],
               tc_state_get(s->arch, s->states[0], reg(s->arch, src[i])));
  CU_ASSERT_STRING_EQUAL(keyval(f0, "xmm7"),
                         "0x7f7e7d7c7b7a79787776757473727170");
  CU_ASSERT_STRING_EQUAL(keyval(f0, "st0"), "1");
  CU_ASSERT_STRING_EQUAL(keyval(f0, "orig_eax"), "-1");
  assert_mem(f0, 0x8049000, (const uint8_t *)"\x50", 1);
  assert_mem(f0, 0xffffcffc, (const uint8_t *)"\x11\x11\x11\x11", 4);
  const char *f1 = section(out, "F1");
  assert_reg(f1, "eip", 0x8049001);
  assert_reg(f1, "ecx", 0x22222222);
  assert_reg(f1, "esp", 0xffffcffc);
  assert_reg(f1, "eflags", 0x286);
  CU_ASSERT(strstr(f1, "\"i386\"") != NULL);
  CU_ASSERT(strstr(section(out, "END"), "No trace frame found") != NULL);
  free(out);
  free(s);
}

/* ------------------------------------------------------- reader tests */

typedef struct collected {
  size_t n;
  tc_insn_event ev[MAX_INSNS + 2];
  uint8_t before[MAX_INSNS + 2][STATE_MAX], after[MAX_INSNS + 2][STATE_MAX];
  size_t nmem[MAX_INSNS + 2];
  tc_mem_access mem[MAX_INSNS + 2][8];
  uint8_t *memdata[MAX_INSNS + 2][8];
} collected;

/* Reads a whole file; returns 0 on clean end, -1 on error (msg in err). */
static int read_all(const char *path, collected *c, tc_trace_info *info,
                    tc_error *err) {
  memset(c, 0, sizeof *c);
  tc_reader *r = fmt->open_reader(path, err);
  if (!r)
    return -1;
  const tc_trace_info *ri = fmt->reader_info(r);
  if (info)
    *info = *ri;
  size_t ssize = ri->arch->state_size;
  tc_event ev;
  int rc;
  while ((rc = fmt->next_event(r, &ev, err)) == 1) {
    if (ev.kind != TC_EV_INSN || c->n >= MAX_INSNS + 2)
      continue;
    size_t i = c->n++;
    c->ev[i] = ev.u.insn;
    memcpy(c->before[i], ev.u.insn.state_before, ssize);
    memcpy(c->after[i], ev.u.insn.state_after, ssize);
    c->nmem[i] = ev.u.insn.nmem;
    for (uint32_t k = 0; k < ev.u.insn.nmem && k < 8; k++) {
      c->mem[i][k] = ev.u.insn.mem[k];
      c->memdata[i][k] = malloc(ev.u.insn.mem[k].size + 1);
      memcpy(c->memdata[i][k], ev.u.insn.mem[k].after, ev.u.insn.mem[k].size);
    }
  }
  if (info && info->initial_state)
    info->initial_state = NULL; /* owned by the reader, closed below */
  fmt->close_reader(r);
  return rc;
}

static void free_collected(collected *c) {
  for (size_t i = 0; i < MAX_INSNS + 2; i++)
    for (size_t k = 0; k < 8; k++)
      free(c->memdata[i][k]);
}

/* Held registers of two state images are equal. */
static int same_held(const tc_arch *a, const uint8_t *x, const uint8_t *y) {
  for (int r = 0; r < a->nregs; r++)
    if (fmt->holds_reg(a, r) &&
        memcmp(x + a->regs[r].offset, y + a->regs[r].offset, a->regs[r].size) !=
            0) {
      fprintf(stderr, "register %s differs\n", a->regs[r].name);
      return 0;
    }
  return 1;
}

/* Reads tf (written from s) back and compares. */
static void roundtrip_file(synth *s, const char *tf) {
  tc_error err = {{0}};
  collected *c = malloc(sizeof *c);
  tc_trace_info info;
  int rc = read_all(tf, c, &info, &err);
  CU_ASSERT(rc == 0);
  if (rc != 0)
    fprintf(stderr, "read: %s\n", err.msg);
  CU_ASSERT(info.arch == s->arch);
  CU_ASSERT(info.entry == s->ev[0].pc);
  CU_ASSERT(info.has_memory == 1);
  CU_ASSERT_FATAL(c->n == s->n);
  const tc_arch *a = s->arch;
  for (size_t i = 0; i < s->n; i++) {
    const tc_insn_event *w = &s->ev[i], *g = &c->ev[i];
    CU_ASSERT(g->index == w->index);
    CU_ASSERT(g->pc == w->pc);
    CU_ASSERT(g->size == w->size);
    CU_ASSERT(memcmp(g->bytes, w->bytes, w->size) == 0);
    CU_ASSERT(same_held(a, c->before[i], s->states[i]));
    /* the last one's from the final-state frame */
    CU_ASSERT(same_held(a, c->after[i], s->states[i + 1]));
    CU_ASSERT(g->nregs <= a->nregs);
  }
  /* register diffs come from consecutive frames */
  CU_ASSERT(c->ev[0].nregs == s->ev[0].nregs);
  if (a->id == TC_ARCH_X86_64) {
    CU_ASSERT(c->nmem[0] == 1);
    CU_ASSERT(c->mem[0][0].addr == 0x7ffffffddff8ull);
    CU_ASSERT(c->mem[0][0].size == 8);
    CU_ASSERT(c->mem[0][0].kind == TC_MEM_READ);
    CU_ASSERT(memcmp(c->memdata[0][0], "\x88\x77\x66\x55\x44\x33\x22\x11", 8) ==
              0);
    /* overlapping + adjacent accesses: one block of post-values */
    CU_ASSERT(c->nmem[2] == 1);
    CU_ASSERT(c->mem[2][0].addr == 0x601000);
    CU_ASSERT(c->mem[2][0].size == 10);
    CU_ASSERT(memcmp(c->memdata[2][0],
                     "\x01\x02\x03\x04\xaa\xbb\xcc\xdd\x09\x0a", 10) == 0);
    /* 70000 bytes = 65535 + 4465 */
    CU_ASSERT_FATAL(c->nmem[3] == 2);
    CU_ASSERT(c->mem[3][0].addr == 0x700000 && c->mem[3][0].size == 65535);
    CU_ASSERT(c->mem[3][1].addr == 0x700000 + 65535 &&
              c->mem[3][1].size == BIG - 65535);
    CU_ASSERT(memcmp(c->memdata[3][0], big_after, 65535) == 0);
    CU_ASSERT(memcmp(c->memdata[3][1], big_after + 65535, BIG - 65535) == 0);
    /* fip is 64-bit in tracecorn, 32-bit (fioff) in GDB's layout */
    CU_ASSERT(fmt->holds_reg(a, reg(a, "fip")) == 0);
    CU_ASSERT(fmt->holds_reg(a, reg(a, "rflags")) == 1);
    CU_ASSERT(fmt->holds_reg(a, reg(a, "fs_base")) == 1);
  } else if (a->id == TC_ARCH_X86) {
    CU_ASSERT(fmt->holds_reg(a, reg(a, "fs_base")) == 0);
    CU_ASSERT(fmt->holds_reg(a, reg(a, "fip")) == 1);
    CU_ASSERT(c->nmem[1] == 0);
  }
  free_collected(c);
  free(c);
}

static void roundtrip(synth *s, const char *name) {
  const char *tf = tu_tmp(name);
  tc_error err = {{0}};
  CU_ASSERT_FATAL(write_synth(s, tf, &err) == 0);
  roundtrip_file(s, tf);
}

static void test_roundtrip_x64(void) {
  synth *s = malloc(sizeof *s);
  synth_x64(s);
  roundtrip(s, "rt64.tf");
  free(s);
}

static void test_roundtrip_x86(void) {
  synth *s = malloc(sizeof *s);
  synth_x86(s);
  roundtrip(s, "rt32.tf");
  free(s);
}

/* ----------------------------------------------------- corrupted files */

static uint8_t *good_file(size_t *len, size_t *frames_at) {
  synth *s = malloc(sizeof *s);
  synth_x86(s);
  const char *tf = tu_tmp("good.tf");
  tc_error err = {{0}};
  CU_ASSERT_FATAL(write_synth(s, tf, &err) == 0);
  free(s);
  uint8_t *buf = tu_read_file(tf, len);
  CU_ASSERT_FATAL(buf != NULL);
  const uint8_t *p = memmem(buf, *len, "\n\n", 2);
  CU_ASSERT_FATAL(p != NULL);
  *frames_at = (size_t)(p - buf) + 2;
  return buf;
}

/* Writes a variant and returns the error message reading it (or "" if it
 * read cleanly). */
static const char *read_variant(const void *data, size_t len) {
  static tc_error err;
  const char *tf = tu_tmp("bad.tf");
  CU_ASSERT_FATAL(tu_write_file(tf, data, len) == 0);
  collected *c = malloc(sizeof *c);
  memset(&err, 0, sizeof err);
  int rc = read_all(tf, c, NULL, &err);
  free_collected(c);
  free(c);
  if (rc == 0)
    return "";
  CU_ASSERT(err.msg[0] != 0);
  CU_ASSERT(strchr(err.msg, '\n') == NULL);
  return err.msg;
}

static void test_corrupt(void) {
  size_t len, frames;
  uint8_t *good = good_file(&len, &frames);
  CU_ASSERT_STRING_EQUAL(read_variant(good, len), "");
  CU_ASSERT(fmt->probe(good, len, "x") == 1);
  CU_ASSERT(fmt->probe((const uint8_t *)"\x7fTRACE1\n", 8, "x") == 0);

  /* no R line */
  uint8_t *v = malloc(len + 2048);
  const uint8_t *rl = memmem(good, len, "\nR 138\n", 7);
  CU_ASSERT_FATAL(rl != NULL);
  size_t cut = (size_t)(rl - good) + 1;
  memcpy(v, good, cut);
  memcpy(v + cut, good + cut + 6, len - cut - 6);
  CU_ASSERT(strstr(read_variant(v, len - 6),
                   "No register block size recorded in trace file") != NULL);

  /* unknown block type in place of 'R' */
  memcpy(v, good, len);
  CU_ASSERT_FATAL(v[frames + 6] == 'R');
  v[frames + 6] = 'X';
  CU_ASSERT(strstr(read_variant(v, len), "Unknown block type 'X'") != NULL);

  /* huge frame size */
  memcpy(v, good, len);
  memset(v + frames + 2, 0xff, 4);
  CU_ASSERT(strstr(read_variant(v, len),
                   "Premature end of file while reading trace file") != NULL);

  /* an M block claiming more than the frame holds: frame 0 = 'R' + 312,
   * then the instruction M block */
  memcpy(v, good, len);
  size_t m = frames + 6 + 1 + 0x138;
  CU_ASSERT_FATAL(v[m] == 'M');
  v[m + 9] = 0xff;
  v[m + 10] = 0xff;
  CU_ASSERT(strstr(read_variant(v, len), "Premature end") != NULL);

  /* bad R sizes, an over-long line, a malformed tdesc register */
  const char *bad_r[] = {"\nR ffffffff\n", "\nR 0\n", "\nR zz\n"};
  for (size_t k = 0; k < 3; k++) {
    size_t nl = strlen(bad_r[k]);
    memcpy(v, good, cut - 1);
    memcpy(v + cut - 1, bad_r[k], nl);
    memcpy(v + cut - 1 + nl, good + cut + 6, len - cut - 6);
    CU_ASSERT(strstr(read_variant(v, len - 7 + nl),
                     "bad register block size") != NULL);
  }
  memcpy(v, good, cut);
  memset(v + cut, 'a', 1200);
  v[cut + 1200] = '\n';
  memcpy(v + cut + 1201, good + cut, len - cut);
  CU_ASSERT(strstr(read_variant(v, len + 1201), "Excessively long lines") !=
            NULL);
  const uint8_t *bs = memmem(good, len, "bitsize=\"32\"", 12);
  CU_ASSERT_FATAL(bs != NULL);
  memcpy(v, good, len);
  v[bs - good + 10] = 'x'; /* bitsize="3x" */
  CU_ASSERT(strstr(read_variant(v, len), "malformed <reg>") != NULL);
  const uint8_t *ar = memmem(good, len, ">i386<", 6);
  CU_ASSERT_FATAL(ar != NULL);
  memcpy(v, good, len);
  memcpy(v + (ar - good) + 1, "sprc", 4);
  CU_ASSERT(strstr(read_variant(v, len), "'sprc' is not supported") != NULL);

  /* truncation anywhere before the end marker's tracepoint number */
  size_t errors = 0;
  for (size_t t = 0; t + 4 < len; t++) {
    const char *msg = read_variant(good, t);
    if (msg[0])
      errors++;
    else
      fprintf(stderr, "truncated at %zu of %zu read cleanly\n", t, len);
  }
  CU_ASSERT(errors == len - 4);
  CU_ASSERT(strstr(read_variant(good, len - 10), "Premature end") != NULL);
  CU_ASSERT(strstr(read_variant(good, 4), "bad header") != NULL);
  /* a 4-byte end marker (as GDB's tsave writes) is fine */
  CU_ASSERT_STRING_EQUAL(read_variant(good, len - 2), "");
  free(v);
  free(good);
}

/* Every byte flipped in turn: errors or clean reads, never a crash. */
static void test_fuzz_bytes(void) {
  size_t len, frames;
  uint8_t *good = good_file(&len, &frames);
  uint8_t *v = malloc(len);
  size_t errors = 0;
  for (size_t i = 0; i < len; i++) {
    memcpy(v, good, len);
    v[i] ^= 0xa5;
    if (read_variant(v, len)[0])
      errors++;
  }
  CU_ASSERT(errors > 0 && errors < len);
  free(v);
  free(good);
}

static void test_writer_errors(void) {
  tc_error err = {{0}};
  tc_trace_info info = {0};
  CU_ASSERT(fmt->supports(tc_arch_by_id(TC_ARCH_X86_64), &err) == 0);
  CU_ASSERT(fmt->supports(tc_arch_by_id(TC_ARCH_X86), &err) == 0);
  CU_ASSERT(fmt->supports(NULL, &err) == -1);
  /* an arch tracecorn does not know: refused with a message */
  tc_arch fake = *tc_arch_by_id(TC_ARCH_X86);
  fake.id = TC_ARCH_ARM64;
  fake.name = "arm64";
  err.msg[0] = 0;
  CU_ASSERT(fmt->supports(&fake, &err) == -1);
  CU_ASSERT(strstr(err.msg, "arm64") != NULL);
  CU_ASSERT_STRING_EQUAL(fmt->extension(&fake), ".tf");
  CU_ASSERT(fmt->caps == (TC_CAP_INSN_BYTES | TC_CAP_MEM));

  info.arch = tc_arch_by_id(TC_ARCH_X86_64);
  CU_ASSERT(fmt->open_writer("/nonexistent-dir/x.tf", &info, &err) == NULL);
  CU_ASSERT(strstr(err.msg, "/nonexistent-dir/x.tf") != NULL);

  /* full disk: the failure surfaces (at the latest at close) */
  synth *s = malloc(sizeof *s);
  synth_x64(s);
  err.msg[0] = 0;
  CU_ASSERT(write_synth(s, "/dev/full", &err) == -1);
  CU_ASSERT(strstr(err.msg, "No space left") != NULL);
  free(s);
}

/* ------------------------------------------ recordings checked by GDB */

typedef struct rec_insn {
  uint64_t pc;
  uint8_t *state;
  size_t nexp; /* expected post-instruction memory bytes */
  uint64_t *exp_addr;
  uint8_t *exp_val;
} rec_insn;

typedef struct recording {
  const tc_arch *arch;
  size_t n, cap;
  rec_insn *insns;
} recording;

/* Post-instruction value of every byte the instruction touched: the last
 * write wins, read bytes count where nothing was written. */
static void expect_mem(rec_insn *ri, const tc_insn_event *in) {
  size_t total = 0;
  for (uint32_t k = 0; k < in->nmem; k++)
    total += in->mem[k].size < 64 ? in->mem[k].size : 64;
  ri->exp_addr = calloc(total + 1, sizeof *ri->exp_addr);
  ri->exp_val = calloc(total + 1, 1);
  for (int pass = TC_MEM_READ; pass <= TC_MEM_WRITE; pass++)
    for (uint32_t k = 0; k < in->nmem; k++) {
      const tc_mem_access *m = &in->mem[k];
      if (m->kind != pass)
        continue;
      for (uint32_t b = 0; b < m->size && b < 64; b++) {
        size_t j = 0;
        while (j < ri->nexp && ri->exp_addr[j] != m->addr + b)
          j++;
        if (j == ri->nexp)
          ri->exp_addr[ri->nexp++] = m->addr + b;
        ri->exp_val[j] = m->after[b];
      }
    }
}

static int record_sink(void *ctx, const tc_event *ev, tc_error *err) {
  (void)err;
  recording *r = ctx;
  if (ev->kind != TC_EV_INSN)
    return 0;
  if (r->n == r->cap) {
    r->cap = r->cap ? 2 * r->cap : 1024;
    r->insns = realloc(r->insns, r->cap * sizeof *r->insns);
    CU_ASSERT_FATAL(r->insns != NULL);
  }
  rec_insn *ri = &r->insns[r->n++];
  memset(ri, 0, sizeof *ri);
  ri->pc = ev->u.insn.pc;
  ri->state = malloc(r->arch->state_size);
  memcpy(ri->state, ev->u.insn.state_before, r->arch->state_size);
  expect_mem(ri, &ev->u.insn);
  return 0;
}

static void free_recording(recording *r) {
  for (size_t i = 0; i < r->n; i++) {
    free(r->insns[i].state);
    free(r->insns[i].exp_addr);
    free(r->insns[i].exp_val);
  }
  free(r->insns);
}

/* Records `guest [arg]` through the library into `tf` (writer options
 * wopts, NULL-terminated, or NULL) and into `r`, up to max_insns
 * instructions (0: to its exit). */
static int record_guest_opts(const char *guest, const char *arg,
                             const char *const *wopts, const char *tf,
                             recording *r, uint64_t max_insns) {
  memset(r, 0, sizeof *r);
  tc_options o;
  tc_options_init(&o);
  o.quiet = 1;
  o.max_insns = max_insns;
  o.writer_options = wopts;
  FILE *devnull = fopen("/dev/null", "w");
  CU_ASSERT_FATAL(devnull != NULL);
  o.stdout_fd = fileno(devnull);
  tc_error err = {{0}};
  tc_session *s = tc_session_new(&o, &err);
  CU_ASSERT_FATAL(s != NULL);
  const char *argv[] = {guest, arg, NULL};
  int ok = tc_session_load_elf(s, guest, argv, &err) == 0;
  CU_ASSERT(ok);
  if (ok) {
    r->arch = tc_session_info(s)->arch;
    ok = tc_session_add_writer(s, fmt, tf, &err) == 0 &&
         tc_session_add_sink(s, record_sink, r, &err) == 0;
    CU_ASSERT(ok);
  }
  tc_run_result res;
  tc_run_result_init(&res);
  if (ok) {
    ok = tc_session_run(s, &res, &err) == 0;
    CU_ASSERT(ok);
    CU_ASSERT(res.reason == (max_insns ? TC_EXIT_MAX_INSNS : TC_EXIT_EXITED));
  }
  if (!ok)
    fprintf(stderr, "%s: %s\n", guest, err.msg);
  tc_session_free(s);
  fclose(devnull);
  return ok ? 0 : -1;
}

static int record_guest_n(const char *guest, const char *tf, recording *r,
                          uint64_t max_insns) {
  return record_guest_opts(guest, NULL, NULL, tf, r, max_insns);
}

static int record_guest(const char *guest, const char *tf, recording *r) {
  return record_guest_n(guest, tf, r, 0);
}

/* Checks frames `which` (ascending) of `tf` in one GDB run: every integer
 * register GDB shows and every collected memory byte. */
static void gdb_check_frames(const char *tf, const recording *r,
                             const size_t *which, size_t nwhich) {
  const tc_arch *a = r->arch;
  int is64 = a->id == TC_ARCH_X86_64;
  static const char *const g64[] = {
      "rax", "rbx", "rcx", "rdx", "rsi", "rdi",     "rbp",     "rsp",   "r8",
      "r9",  "r10", "r11", "r12", "r13", "r14",     "r15",     "rip",   "cs",
      "ss",  "ds",  "es",  "fs",  "gs",  "fs_base", "gs_base", "eflags"};
  static const char *const g32[] = {"eax", "ecx", "edx", "ebx",   "esp", "ebp",
                                    "esi", "edi", "eip", "cs",    "ss",  "ds",
                                    "es",  "fs",  "gs",  "eflags"};
  const char *const *names = is64 ? g64 : g32;
  size_t nnames =
      is64 ? sizeof g64 / sizeof g64[0] : sizeof g32 / sizeof g32[0];
  const char *script = tu_tmp("check.gdb");
  FILE *f = fopen(script, "w");
  CU_ASSERT_FATAL(f != NULL);
  fprintf(f, "target tfile %s\n", tf);
  for (size_t w = 0; w < nwhich; w++) {
    const rec_insn *ri = &r->insns[which[w]];
    fprintf(f, "echo @@%zu\\n\ntfind %zu\ninfo registers", which[w], which[w]);
    for (size_t k = 0; k < nnames; k++)
      fprintf(f, " %s", names[k]);
    fprintf(f, "\nx/i $pc\n");
    for (size_t k = 0; k < ri->nexp; k++)
      fprintf(f, "x/1xb 0x%" PRIx64 "\n", ri->exp_addr[k]);
  }
  /* frame n: the state after the last instruction; then the end */
  fprintf(f,
          "echo @@final\\n\ntfind %zu\necho icount=\noutput $icount\n"
          "echo \\n\necho @@end\\n\ntfind\necho @@\\n\n",
          r->n);
  fclose(f);
  char *cmd = NULL, *out = NULL;
  CU_ASSERT_FATAL(asprintf(&cmd, "gdb -batch -nx -x %s", script) > 0);
  CU_ASSERT(tu_run(cmd, &out, 1) == 0);
  free(cmd);
  CU_ASSERT_FATAL(out != NULL);
  CU_ASSERT(strstr(out, "Premature end") == NULL);
  size_t checked_regs = 0, checked_mem = 0;
  for (size_t w = 0; w < nwhich; w++) {
    const rec_insn *ri = &r->insns[which[w]];
    char name[32];
    snprintf(name, sizeof name, "%zu", which[w]);
    const char *sect = section(out, name);
    char found[64];
    snprintf(found, sizeof found, "Found trace frame %zu,", which[w]);
    CU_ASSERT(strstr(sect, found) != NULL);
    for (size_t k = 0; k < nnames; k++) {
      const char *src = strcmp(names[k], "eflags") == 0
                            ? a->regs[a->flags_reg].name
                            : names[k];
      uint64_t want = tc_state_get(a, ri->state, reg(a, src));
      if (strcmp(names[k], "eflags") == 0)
        want &= 0xffffffffu;
      assert_reg(sect, names[k], want);
      checked_regs++;
    }
    CU_ASSERT(strstr(sect, "=> 0x") != NULL); /* x/i: code bytes present */
    for (size_t k = 0; k < ri->nexp; k++) {
      int v = -2;
      x_bytes(sect, ri->exp_addr[k], &v, 1);
      CU_ASSERT(v == ri->exp_val[k]);
      if (v != ri->exp_val[k])
        fprintf(stderr, "frame %zu mem %#" PRIx64 ": want %02x got %d\n",
                which[w], ri->exp_addr[k], ri->exp_val[k], v);
      checked_mem++;
    }
  }
  char found[64];
  snprintf(found, sizeof found, "Found trace frame %zu,", r->n);
  CU_ASSERT(strstr(section(out, "final"), found) != NULL);
  CU_ASSERT_STRING_EQUAL(keyval(section(out, "final"), "icount"), "0");
  CU_ASSERT(strstr(section(out, "end"), "No trace frame found") != NULL);
  CU_ASSERT(checked_regs > 0);
  fprintf(stderr,
          "[%s: %zu frames, %zu register and %zu memory values "
          "checked by GDB]\n",
          tf, nwhich, checked_regs, checked_mem);
  free(out);
}

static void check_guest(const char *name, size_t all_up_to) {
  const char *guest = tu_guest(name);
  CU_ASSERT_FATAL(tu_have(guest));
  char tfname[64];
  snprintf(tfname, sizeof tfname, "%s.tf", name);
  const char *tf = tu_tmp(tfname);
  recording r;
  if (record_guest(guest, tf, &r) != 0) {
    free_recording(&r);
    return;
  }
  CU_ASSERT_FATAL(r.n > 2);
  size_t *which = calloc(r.n, sizeof *which), nw = 0;
  if (r.n <= all_up_to) {
    for (size_t i = 0; i < r.n; i++)
      which[nw++] = i;
  } else {
    which[nw++] = 0;
    which[nw++] = 1;
    which[nw++] = r.n / 2;
    which[nw++] = r.n - 1;
  }
  gdb_check_frames(tf, &r, which, nw);

  /* the reader gives the same instructions back */
  tc_reader *rd = fmt->open_reader(tf, NULL);
  CU_ASSERT_FATAL(rd != NULL);
  tc_event ev;
  size_t n = 0, same = 0;
  while (fmt->next_event(rd, &ev, NULL) == 1 && n < r.n) {
    same += ev.u.insn.pc == r.insns[n].pc && ev.u.insn.index == n &&
            tc_state_get(r.arch, ev.u.insn.state_before, r.arch->sp_reg) ==
                tc_state_get(r.arch, r.insns[n].state, r.arch->sp_reg);
    n++;
  }
  fmt->close_reader(rd);
  CU_ASSERT(n == r.n);
  CU_ASSERT(same == r.n);
  free(which);
  free_recording(&r);
}

static void test_session_hello64(void) { check_guest("hello64", 2000); }
static void test_session_hello32(void) { check_guest("hello32", 2000); }

/* The CLI writes PREFIX.tf with the same frames as the library. */
static void test_cli(void) {
  const char *prefix = tu_tmp("cli-hello64");
  char *cmd = NULL, *out = NULL;
  CU_ASSERT_FATAL(asprintf(&cmd, "%s record --format tfile -o %s -- %s", TC_CLI,
                           prefix, tu_guest("hello64")) > 0);
  int st = tu_run(cmd, &out, 1);
  free(cmd);
  CU_ASSERT(st == 0);
  if (st != 0)
    fprintf(stderr, "%s\n", out ? out : "");
  free(out);
  char tf[4200];
  snprintf(tf, sizeof tf, "%s.tf", prefix);
  recording r;
  CU_ASSERT_FATAL(
      record_guest(tu_guest("hello64"), tu_tmp("lib-hello64.tf"), &r) == 0);
  tc_error err = {{0}};
  tc_reader *rd = fmt->open_reader(tf, &err);
  CU_ASSERT_FATAL(rd != NULL);
  CU_ASSERT(fmt->reader_info(rd)->arch == r.arch);
  CU_ASSERT(fmt->reader_info(rd)->entry == r.insns[0].pc);
  tc_event ev;
  size_t n = 0;
  while (fmt->next_event(rd, &ev, &err) == 1)
    n++;
  fmt->close_reader(rd);
  CU_ASSERT(n == r.n);
  char *gout = gdb(tf, "-ex 'tfind 0' -ex 'info registers rip'");
  assert_reg(gout, "rip", r.insns[0].pc);
  free(gout);
  free_recording(&r);
}

/* ------------------------------------------- arm, arm64, mips, mipsel */

/* GDB's name of a tracecorn register (the tdesc's names; mips: GDB's
 * user names, where s8 is r30 and $fp is GDB's frame-pointer alias). */
static const char *gdb_name(const tc_arch *a, const char *tc) {
  if (a->id == TC_ARCH_ARM64 && strcmp(tc, "nzcv") == 0)
    return "cpsr";
  if (a->id == TC_ARCH_ARM64 && strcmp(tc, "tpidr_el0") == 0)
    return "tpidr";
  if ((a->id == TC_ARCH_MIPS || a->id == TC_ARCH_MIPSEL) &&
      strcmp(tc, "fp") == 0)
    return "s8";
  return tc;
}

/* `output/x $reg` of register r in a state image: the value as an
 * unsigned number of the register's width (raw bits for doubles). */
static void want_hex(const tc_arch *a, const uint8_t *st, int r, char *out) {
  const tc_reg_info *ri = &a->regs[r];
  int i = ri->size - 1;
  while (i > 0 && st[ri->offset + i] == 0)
    i--;
  out += sprintf(out, "0x%x", st[ri->offset + i]);
  for (i--; i >= 0; i--)
    out += sprintf(out, "%02x", st[ri->offset + i]);
}

static int is_mips(const tc_arch *a) {
  return a->id == TC_ARCH_MIPS || a->id == TC_ARCH_MIPSEL;
}

static const char *gdb_endian(const tc_arch *a) {
  return a->big_endian ? "set endian big\n" : "";
}

/* Writes GDB commands printing every held register as "@name=VALUE". */
static void script_regs(FILE *f, const tc_arch *a) {
  for (int r = 0; r < a->nregs; r++)
    if (fmt->holds_reg(a, r)) {
      const char *g = gdb_name(a, a->regs[r].name);
      fprintf(f, "echo @%s=\noutput/x $%s\necho \\n\n", g, g);
    }
}

/* Asserts that section `sect` shows every held register of state `st`;
 * returns how many were checked. */
static size_t check_regs(const char *sect, const tc_arch *a, const uint8_t *st,
                         const char *where) {
  size_t n = 0;
  for (int r = 0; r < a->nregs; r++) {
    if (!fmt->holds_reg(a, r))
      continue;
    char key[64], want[80];
    snprintf(key, sizeof key, "@%s", gdb_name(a, a->regs[r].name));
    want_hex(a, st, r, want);
    const char *got = keyval(sect, key);
    CU_ASSERT_STRING_EQUAL(got, want);
    if (strcmp(got, want) != 0)
      fprintf(stderr, "%s: GDB $%s = '%s', recorded %s\n", where, key + 1, got,
              want);
    n++;
  }
  return n;
}

/* Runs `gdb-multiarch -batch -nx -x script`; returns its output. */
static char *gdb_multiarch_script(const char *script) {
  char *cmd = NULL, *out = NULL;
  CU_ASSERT_FATAL(
      asprintf(&cmd, "gdb-multiarch -batch -nx -x %s 2>&1", script) > 0);
  int st = tu_run(cmd, &out, 1);
  free(cmd);
  CU_ASSERT(st == 0);
  CU_ASSERT_FATAL(out != NULL);
  /* the tdesc is accepted, the frames parse */
  CU_ASSERT(strstr(out, "rejected") == NULL);
  CU_ASSERT(strstr(out, "Premature end") == NULL);
  CU_ASSERT(strstr(out, "Ignoring") == NULL);
  return out;
}

static void fill(synth *s, const char *name, uint8_t seed) {
  const tc_reg_info *ri = &s->arch->regs[reg(s->arch, name)];
  uint8_t b[32];
  for (unsigned i = 0; i < ri->size; i++)
    b[i] = (uint8_t)(seed + 0x11 * i);
  set_bytes(s, 0, name, b, ri->size);
}

static void synth_arm(synth *s) {
  memset(s, 0, sizeof *s);
  s->arch = tc_arch_by_id(TC_ARCH_ARM);
  CU_ASSERT_FATAL(s->arch != NULL);
  for (int i = 0; i <= 12; i++) {
    char n[8];
    snprintf(n, sizeof n, "r%d", i);
    set(s, 0, n, 0x01010101u * (unsigned)(i + 1));
  }
  set(s, 0, "sp", 0xbefff000);
  set(s, 0, "lr", 0x10081);
  set(s, 0, "pc", 0x10074);
  set(s, 0, "cpsr", 0x60000030); /* Z C, Thumb, user mode */
  set(s, 0, "fpscr", 0x03000010);
  set(s, 0, "tpidruro", 0x6d500);
  for (int i = 0; i < 32; i++) {
    char n[8];
    snprintf(n, sizeof n, "d%d", i);
    fill(s, n, (uint8_t)(0x80 + i));
  }
  set(s, 0, "d0", 0x3ff8000000000000ull); /* 1.5 */
  set(s, 0, "d1", 0x3ff0000000000000ull); /* 1.0 */
  /* 0: str r1, [sp, #4] (Thumb) */
  copy_state(s, 0);
  set(s, 1, "pc", 0x10076);
  add_insn(s, 0x10074, "0191");
  add_mem(s, TC_MEM_WRITE, 0xbefff004, "00000000", "02020202");
  /* 1: vadd.f64 d0, d0, d1 */
  copy_state(s, 1);
  set(s, 2, "pc", 0x1007a);
  set(s, 2, "d0", 0x4004000000000000ull); /* 2.5 */
  add_insn(s, 0x10076, "30ee010b");
  /* 2: ldr r2, [r3] (Thumb) */
  copy_state(s, 2);
  set(s, 3, "pc", 0x1007c);
  set(s, 3, "r2", 0x44332211);
  add_insn(s, 0x1007a, "1a68");
  add_mem(s, TC_MEM_READ, 0x04040404, "11223344", "11223344");
}

static void synth_arm64(synth *s) {
  memset(s, 0, sizeof *s);
  s->arch = tc_arch_by_id(TC_ARCH_ARM64);
  CU_ASSERT_FATAL(s->arch != NULL);
  for (int i = 0; i <= 30; i++) {
    char n[8];
    snprintf(n, sizeof n, "x%d", i);
    set(s, 0, n, 0x0101010101010101ull * (uint64_t)(i + 1));
  }
  set(s, 0, "x5", 0xfffffffffffffff0ull);
  set(s, 0, "sp", 0x7fffffffee20ull);
  set(s, 0, "pc", 0x400100);
  set(s, 0, "nzcv", 0x60000000);
  set(s, 0, "fpsr", 0x10);
  set(s, 0, "fpcr", 0x00c00000);
  set(s, 0, "tpidr_el0", 0x498740);
  for (int i = 0; i < 32; i++) {
    char n[8];
    snprintf(n, sizeof n, "v%d", i);
    fill(s, n, (uint8_t)(0x40 + 3 * i));
  }
  /* 0: str x1, [sp, #8] */
  copy_state(s, 0);
  set(s, 1, "pc", 0x400104);
  add_insn(s, 0x400100, "e10700f9");
  add_mem(s, TC_MEM_WRITE, 0x7fffffffee28ull, "0000000000000000",
          "0202020202020202");
  /* 1: movi v0.16b, #0xff */
  copy_state(s, 1);
  set(s, 2, "pc", 0x400108);
  uint8_t ones[16];
  memset(ones, 0xff, sizeof ones);
  set_bytes(s, 2, "v0", ones, 16);
  add_insn(s, 0x400104, "e0e7074f");
  /* 2: cmp x0, x0 */
  copy_state(s, 2);
  set(s, 3, "pc", 0x40010c);
  set(s, 3, "nzcv", 0x60000000);
  add_insn(s, 0x400108, "1f0000eb");
}

/* Instruction bytes as hex in the target's byte order. */
static const char *mips_word(const tc_arch *a, uint32_t w) {
  static char buf[4][9];
  static int k;
  char *b = buf[k++ & 3];
  if (a->big_endian)
    snprintf(b, 9, "%08x", w);
  else
    snprintf(b, 9, "%02x%02x%02x%02x", w & 0xff, (w >> 8) & 0xff,
             (w >> 16) & 0xff, w >> 24);
  return b;
}

static void synth_mips(synth *s, tc_arch_id id) {
  memset(s, 0, sizeof *s);
  s->arch = tc_arch_by_id(id);
  CU_ASSERT_FATAL(s->arch != NULL);
  const tc_arch *a = s->arch;
  for (int r = 1; r < 32; r++)
    tc_state_set(a, s->states[0], r, 0x01010101u * (unsigned)r);
  set(s, 0, "at", 0xfffffff0);
  set(s, 0, "sp", 0x7ffefec0);
  set(s, 0, "fp", 0x7ffefed0);
  set(s, 0, "ra", 0x400104);
  set(s, 0, "pc", 0x400100);
  set(s, 0, "hi", 0x12345678);
  set(s, 0, "lo", 0x9abcdef0);
  set(s, 0, "userlocal", 0x4a7000);
  /* 0: sw a0, 4(sp) */
  copy_state(s, 0);
  set(s, 1, "pc", 0x400104);
  add_insn(s, 0x400100, mips_word(a, 0xafa40004));
  add_mem(s, TC_MEM_WRITE, 0x7ffefec4, "00000000", "deadbeef");
  /* 1: multu a0, a1 */
  copy_state(s, 1);
  set(s, 2, "pc", 0x400108);
  set(s, 2, "hi", 0x00102030);
  set(s, 2, "lo", 0x40506070);
  add_insn(s, 0x400104, mips_word(a, 0x00850019));
  /* 2: lw v0, 0(gp) */
  copy_state(s, 2);
  set(s, 3, "pc", 0x40010c);
  set(s, 3, "v0", 0x01020304);
  add_insn(s, 0x400108, mips_word(a, 0x8f820000));
  add_mem(s, TC_MEM_READ, 0x1c1c1c1c, a->big_endian ? "01020304" : "04030201",
          a->big_endian ? "01020304" : "04030201");
}

static void make_synth(synth *s, tc_arch_id id) {
  if (id == TC_ARCH_ARM)
    synth_arm(s);
  else if (id == TC_ARCH_ARM64)
    synth_arm64(s);
  else
    synth_mips(s, id);
}

/* Every register GDB shows in every frame, the instruction and memory
 * bytes, and for each arch its vector/FP or hi/lo registers by value. */
static void gdb_synth(tc_arch_id id, const char *name) {
  synth *s = malloc(sizeof *s);
  make_synth(s, id);
  const tc_arch *a = s->arch;
  const char *tf = tu_tmp(name);
  tc_error err = {{0}};
  CU_ASSERT_FATAL(write_synth(s, tf, &err) == 0);
  const char *script = tu_tmp("synth.gdb");
  FILE *f = fopen(script, "w");
  CU_ASSERT_FATAL(f != NULL);
  fprintf(f, "%starget tfile %s\n", gdb_endian(a), tf);
  for (size_t i = 0; i < s->n; i++) {
    fprintf(f, "echo @@F%zu\\n\ntfind %zu\n", i, i);
    script_regs(f, a);
    fprintf(f, "x/i $pc\nx/%uxb 0x%" PRIx64 "\n", s->ev[i].size, s->ev[i].pc);
    for (uint32_t k = 0; k < s->ev[i].nmem; k++)
      fprintf(f, "x/%uxb 0x%" PRIx64 "\n", s->mem[i][k].size + 1,
              s->mem[i][k].addr);
  }
  fprintf(f, "echo @@X\\n\ntfind 1\n");
  if (id == TC_ARCH_ARM)
    fprintf(f, "echo @d0=\noutput $d0\necho \\n\n"
               "echo @d5=\noutput/x $d5\necho \\n\n"
               "echo @thumb=\noutput ($cpsr >> 5) & 1\necho \\n\n");
  if (id == TC_ARCH_ARM64)
    fprintf(f, "echo @v1=\noutput/x $v1\necho \\n\n");
  if (id == TC_ARCH_MIPS || id == TC_ARCH_MIPSEL)
    fprintf(f, "echo @f0=\noutput $f0\necho \\n\n"
               "echo @fcsr=\noutput $fcsr\necho \\n\n"
               "echo @status=\noutput/x $status\necho \\n\n");
  fprintf(f,
          "echo @@END\\n\ntfind %zu\necho @@STATUS\\n\ntstatus\n"
          "show architecture\necho @@\\n\n",
          s->n + 1);
  fclose(f);
  char *out = gdb_multiarch_script(script);
  size_t checked = 0;
  for (size_t i = 0; i < s->n; i++) {
    char sec[32], where[128];
    snprintf(sec, sizeof sec, "F%zu", i);
    snprintf(where, sizeof where, "%s frame %zu", name, i);
    const char *t = section(out, sec);
    char found[96];
    snprintf(found, sizeof found, "Found trace frame %zu, tracepoint %zu", i,
             i + 1);
    CU_ASSERT(strstr(t, found) != NULL);
    checked += check_regs(t, a, s->states[i], where);
    CU_ASSERT(strstr(t, "=> 0x") != NULL);
    assert_mem(t, s->ev[i].pc, s->ev[i].bytes, s->ev[i].size);
    for (uint32_t k = 0; k < s->ev[i].nmem; k++) {
      const tc_mem_access *m = &s->mem[i][k];
      assert_mem(t, m->addr, m->after, m->size);
      int v[32];
      x_bytes(t, m->addr, v, m->size + 1);
      CU_ASSERT(v[m->size] == -1); /* only what the instruction touched */
    }
  }
  char *x = strdup(section(out, "X")); /* section() reuses its buffer */
  if (id == TC_ARCH_ARM) {
    CU_ASSERT(strstr(section(out, "F0"), "str\tr1, [sp, #4]") != NULL);
    CU_ASSERT(strstr(section(out, "F1"), "vadd.f64\td0, d0, d1") != NULL);
    CU_ASSERT_STRING_EQUAL(keyval(x, "@d0"), "1.5");
    CU_ASSERT_STRING_EQUAL(keyval(x, "@d5"), "0xfcebdac9b8a79685");
    CU_ASSERT_STRING_EQUAL(keyval(x, "@thumb"), "1");
    CU_ASSERT_STRING_EQUAL(keyval(section(out, "F2"), "@d0"),
                           "0x4004000000000000");
  } else if (id == TC_ARCH_ARM64) {
    CU_ASSERT(strstr(section(out, "F0"), "str\tx1, [sp, #8]") != NULL);
    CU_ASSERT_STRING_EQUAL(keyval(x, "@v1"),
                           "0x4231200ffeeddccbbaa9988776655443");
    CU_ASSERT_STRING_EQUAL(keyval(section(out, "F2"), "@v0"),
                           "0xffffffffffffffffffffffffffffffff");
  } else {
    CU_ASSERT(strstr(section(out, "F0"), "sw\ta0,4(sp)") != NULL);
    CU_ASSERT_STRING_EQUAL(keyval(section(out, "F1"), "@hi"), "0x12345678");
    CU_ASSERT_STRING_EQUAL(keyval(section(out, "F1"), "@lo"), "0x9abcdef0");
    CU_ASSERT_STRING_EQUAL(keyval(section(out, "F2"), "@hi"), "0x102030");
    CU_ASSERT_STRING_EQUAL(keyval(section(out, "F2"), "@lo"), "0x40506070");
    CU_ASSERT_STRING_EQUAL(keyval(x, "@f0"), "<unavailable>");
    CU_ASSERT_STRING_EQUAL(keyval(x, "@fcsr"), "<unavailable>");
    CU_ASSERT_STRING_EQUAL(keyval(x, "@status"), "0x0");
  }
  free(x);
  CU_ASSERT(strstr(section(out, "END"), "No trace frame found") != NULL);
  const char *st = section(out, "STATUS");
  char frames[64];
  snprintf(frames, sizeof frames, "Collected %zu trace frames", s->n + 1);
  CU_ASSERT(strstr(st, frames) != NULL);
  const char *want_arch = id == TC_ARCH_ARM     ? "\"arm\""
                          : id == TC_ARCH_ARM64 ? "\"aarch64\""
                                                : "\"mips\"";
  CU_ASSERT(strstr(st, want_arch) != NULL);
  CU_ASSERT(checked == s->n * (size_t)(a->nregs - (a->id == TC_ARCH_MIPS ||
                                                   a->id == TC_ARCH_MIPSEL)));
  if (checked == 0 || strstr(st, frames) == NULL)
    fprintf(stderr, "%s\n", out);
  free(out);
  roundtrip(s, name);
  free(s);
}

static void test_gdb_arm(void) { gdb_synth(TC_ARCH_ARM, "arm.tf"); }
static void test_gdb_arm64(void) { gdb_synth(TC_ARCH_ARM64, "arm64.tf"); }
static void test_gdb_mips(void) { gdb_synth(TC_ARCH_MIPS, "mips.tf"); }
static void test_gdb_mipsel(void) { gdb_synth(TC_ARCH_MIPSEL, "mipsel.tf"); }

/* What each arch's block holds: every register of tracecorn's state that
 * GDB's description has, at full width. */
static void test_holds(void) {
  static const struct {
    tc_arch_id id;
    int held, nregs;
    uint32_t rsize;
    const char *not_held;
  } want[] = {
      {TC_ARCH_ARM, 51, 51, 332, NULL},
      {TC_ARCH_ARM64, 69, 69, 796, NULL},
      {TC_ARCH_MIPS, 35, 36, 152, "userlocal"},
      {TC_ARCH_MIPSEL, 35, 36, 152, "userlocal"},
  };
  for (size_t k = 0; k < sizeof want / sizeof want[0]; k++) {
    const tc_arch *a = tc_arch_by_id(want[k].id);
    CU_ASSERT_FATAL(a != NULL);
    CU_ASSERT(fmt->supports(a, NULL) == 0);
    CU_ASSERT(a->nregs == want[k].nregs);
    int held = 0;
    for (int r = 0; r < a->nregs; r++)
      held += fmt->holds_reg(a, r);
    CU_ASSERT(held == want[k].held);
    if (want[k].not_held)
      CU_ASSERT(fmt->holds_reg(a, reg(a, want[k].not_held)) == 0);
    CU_ASSERT(fmt->holds_reg(a, a->pc_reg) == 1);
    CU_ASSERT(fmt->holds_reg(a, -1) == 0 && fmt->holds_reg(a, a->nregs) == 0);
    /* the R line */
    synth *s = malloc(sizeof *s);
    make_synth(s, want[k].id);
    const char *tf = tu_tmp("holds.tf");
    CU_ASSERT_FATAL(write_synth(s, tf, NULL) == 0);
    size_t len;
    uint8_t *buf = tu_read_file(tf, &len);
    CU_ASSERT_FATAL(buf != NULL);
    char rline[32];
    snprintf(rline, sizeof rline, "\nR %x\n", want[k].rsize);
    CU_ASSERT(strstr((char *)buf, rline) != NULL);
    free(buf);
    free(s);
  }
  /* mips64el has no verified layout */
  const tc_arch *m64 = tc_arch_by_id(TC_ARCH_MIPS64EL);
  if (m64) {
    tc_error err = {{0}};
    CU_ASSERT(fmt->supports(m64, &err) == -1);
    CU_ASSERT(strstr(err.msg, "mips64el") != NULL);
  }
}

/* Replaces the first occurrence of `from` (up to the next `until` byte)
 * in a file by `to`. */
static void edit_file(const char *path, const char *from, char until,
                      const char *to) {
  size_t len;
  uint8_t *buf = tu_read_file(path, &len);
  CU_ASSERT_FATAL(buf != NULL);
  uint8_t *p = memmem(buf, len, from, strlen(from));
  CU_ASSERT_FATAL(p != NULL);
  uint8_t *e = memchr(p, until, len - (size_t)(p - buf));
  CU_ASSERT_FATAL(e != NULL);
  uint8_t *v = malloc(len + strlen(to));
  size_t a = (size_t)(p - buf), tl = strlen(to);
  memcpy(v, buf, a);
  memcpy(v + a, to, tl);
  memcpy(v + a + tl, e, len - (size_t)(e - buf));
  CU_ASSERT(tu_write_file(path, v, a + tl + len - (size_t)(e - buf)) == 0);
  free(v);
  free(buf);
}

static const tc_arch *reader_arch(const char *path, tc_error *err) {
  tc_reader *r = fmt->open_reader(path, err);
  if (!r)
    return NULL;
  const tc_arch *a = fmt->reader_info(r)->arch;
  fmt->close_reader(r);
  return a;
}

/* A tfile does not record the byte order: mips and mipsel files share the
 * tdesc. tracecorn's notes tell; without them the first frame header does
 * (the old reader took every "mips" file as big-endian and failed on
 * mipsel with "Premature end of file"). */
static void test_mips_byte_order(void) {
  static const tc_arch_id ids[] = {TC_ARCH_MIPS, TC_ARCH_MIPSEL};
  for (size_t k = 0; k < 2; k++) {
    synth *s = malloc(sizeof *s);
    synth_mips(s, ids[k]);
    const char *tf = tu_tmp("order.tf");
    tc_error err = {{0}};
    CU_ASSERT_FATAL(write_synth(s, tf, &err) == 0);
    size_t len;
    uint8_t *buf = tu_read_file(tf, &len);
    CU_ASSERT_FATAL(buf != NULL);
    char notes[128] = "notes:";
    const char *text = k == 0 ? "tracecorn memory big-endian"
                              : "tracecorn memory little-endian";
    for (size_t i = 0; text[i]; i++)
      sprintf(notes + 6 + 2 * i, "%02x", (unsigned char)text[i]);
    CU_ASSERT(memmem(buf, len, notes, strlen(notes)) != NULL);
    free(buf);
    CU_ASSERT(reader_arch(tf, &err) == s->arch);
    /* without the notes: judged by the first frame */
    edit_file(tf, ";notes:", '\n', "");
    CU_ASSERT(reader_arch(tf, &err) == s->arch);
    roundtrip_file(s, tf);
    /* notes of another program: still judged by the frames */
    edit_file(tf, "tframes:", ';', "tframes:3;notes:6869");
    CU_ASSERT(reader_arch(tf, &err) == s->arch);
    free(s);
  }
  /* no frames at all: the notes decide */
  tc_trace_info info = {0};
  info.arch = tc_arch_by_id(TC_ARCH_MIPSEL);
  info.has_memory = 1;
  const char *tf = tu_tmp("empty-mipsel.tf");
  tc_error err = {{0}};
  tc_writer *w = fmt->open_writer(tf, &info, &err);
  CU_ASSERT_FATAL(w != NULL);
  CU_ASSERT(fmt->close_writer(w, &err) == 0);
  CU_ASSERT(reader_arch(tf, &err) == info.arch);
}

/* Broken arm64 / mips copies are refused, never crash. */
static void test_corrupt_arches(void) {
  static const tc_arch_id ids[] = {TC_ARCH_ARM, TC_ARCH_ARM64, TC_ARCH_MIPS,
                                   TC_ARCH_MIPSEL};
  for (size_t k = 0; k < sizeof ids / sizeof ids[0]; k++) {
    synth *s = malloc(sizeof *s);
    make_synth(s, ids[k]);
    const char *tf = tu_tmp("arch-good.tf");
    CU_ASSERT_FATAL(write_synth(s, tf, NULL) == 0);
    size_t len;
    uint8_t *good = tu_read_file(tf, &len);
    CU_ASSERT_FATAL(good != NULL);
    CU_ASSERT_STRING_EQUAL(read_variant(good, len), "");
    size_t errors = 0;
    for (size_t t = 0; t + 4 < len; t++)
      errors += read_variant(good, t)[0] != 0;
    CU_ASSERT(errors == len - 4);
    CU_ASSERT(strstr(read_variant(good, len - 10), "Premature end") != NULL);
    uint8_t *v = malloc(len);
    size_t flip_errors = 0;
    for (size_t i = 0; i < len; i += 7) {
      memcpy(v, good, len);
      v[i] ^= 0xa5;
      flip_errors += read_variant(v, len)[0] != 0;
    }
    CU_ASSERT(flip_errors > 0);
    free(v);
    free(good);
    free(s);
  }
  /* GDB refuses a truncated mipsel copy the same way */
  synth *s = malloc(sizeof *s);
  synth_mips(s, TC_ARCH_MIPSEL);
  const char *tf = tu_tmp("trunc-mipsel.tf");
  CU_ASSERT_FATAL(write_synth(s, tf, NULL) == 0);
  size_t len;
  uint8_t *buf = tu_read_file(tf, &len);
  CU_ASSERT_FATAL(buf != NULL);
  CU_ASSERT(tu_write_file(tf, buf, len - 20) == 0);
  free(buf);
  const char *script = tu_tmp("trunc.gdb");
  FILE *f = fopen(script, "w");
  CU_ASSERT_FATAL(f != NULL);
  fprintf(f, "target tfile %s\ntfind 0\ntfind 2\ntfind 4\n", tf);
  fclose(f);
  char *cmd = NULL, *out = NULL;
  CU_ASSERT_FATAL(
      asprintf(&cmd, "gdb-multiarch -batch -nx -x %s 2>&1", script) > 0);
  tu_run(cmd, &out, 1);
  free(cmd);
  CU_ASSERT(out && strstr(out, "Found trace frame 0") != NULL);
  CU_ASSERT(out && strstr(out, "Premature end of file") != NULL);
  free(out);
  free(s);
}

/* A recording checked by gdb-multiarch at chosen frames: every held
 * register and every collected memory byte. Returns the frames' count of
 * checked registers. */
static size_t gdb_check_any(const char *tf, const recording *r,
                            const size_t *which, size_t nwhich) {
  const tc_arch *a = r->arch;
  const char *script = tu_tmp("check-any.gdb");
  FILE *f = fopen(script, "w");
  CU_ASSERT_FATAL(f != NULL);
  fprintf(f, "%starget tfile %s\n", gdb_endian(a), tf);
  for (size_t w = 0; w < nwhich; w++) {
    const rec_insn *ri = &r->insns[which[w]];
    fprintf(f, "echo @@%zu\\n\ntfind %zu\n", which[w], which[w]);
    script_regs(f, a);
    /* mips: x/i also shows a branch's delay slot, whose bytes are in the
     * next frame (and an error would end the script) */
    fprintf(f, "%s\n", is_mips(a) ? "x/4xb $pc" : "x/i $pc");
    for (size_t k = 0; k < ri->nexp; k++)
      fprintf(f, "x/1xb 0x%" PRIx64 "\n", ri->exp_addr[k]);
  }
  fprintf(f, "echo @@end\\n\ntfind %zu\necho @@\\n\n", r->n + 1);
  fclose(f);
  char *out = gdb_multiarch_script(script);
  size_t checked_regs = 0, checked_mem = 0;
  for (size_t w = 0; w < nwhich; w++) {
    const rec_insn *ri = &r->insns[which[w]];
    char name[32], where[4200];
    snprintf(name, sizeof name, "%zu", which[w]);
    snprintf(where, sizeof where, "%s frame %zu", tf, which[w]);
    const char *sect = section(out, name);
    char found[64];
    snprintf(found, sizeof found, "Found trace frame %zu,", which[w]);
    CU_ASSERT(strstr(sect, found) != NULL);
    checked_regs += check_regs(sect, a, ri->state, where);
    if (is_mips(a)) {
      int v[4];
      x_bytes(sect, ri->pc, v, 4);
      CU_ASSERT(v[0] >= 0 && v[3] >= 0); /* code bytes present */
    } else {
      CU_ASSERT(strstr(sect, "=> 0x") != NULL);
    }
    for (size_t k = 0; k < ri->nexp; k++) {
      int v = -2;
      x_bytes(sect, ri->exp_addr[k], &v, 1);
      CU_ASSERT(v == ri->exp_val[k]);
      checked_mem++;
    }
  }
  CU_ASSERT(strstr(section(out, "end"), "No trace frame found") != NULL);
  fprintf(stderr,
          "[%s: %zu frames, %zu register and %zu memory values "
          "checked by gdb-multiarch]\n",
          tf, nwhich, checked_regs, checked_mem);
  free(out);
  return checked_regs;
}

/* The first frame (from `from`) where register `name` is not zero. */
static size_t first_nonzero(const recording *r, const char *name, size_t from) {
  const tc_arch *a = r->arch;
  const tc_reg_info *ri = &a->regs[reg(a, name)];
  static const uint8_t zero[32];
  for (size_t i = from; i < r->n; i++)
    if (memcmp(r->insns[i].state + ri->offset, zero, ri->size) != 0)
      return i;
  return SIZE_MAX;
}

static int cmp_size(const void *x, const void *y) {
  size_t a = *(const size_t *)x, b = *(const size_t *)y;
  return a < b ? -1 : a > b;
}

/* Records a guest (max_insns: 0 = to its end) and has gdb-multiarch show
 * frames 0, 1, the middle, the last and the first where each of `nonzero`
 * (NULL-terminated) holds a value; the reader gives the trace back. */
static void check_guest_any(const char *name, uint64_t max_insns,
                            const char *const *nonzero) {
  const char *guest = tu_guest(name);
  CU_ASSERT_FATAL(tu_have(guest));
  char tfname[64];
  snprintf(tfname, sizeof tfname, "%s.tf", name);
  const char *tf = tu_tmp(tfname);
  recording r;
  if (record_guest_n(guest, tf, &r, max_insns) != 0) {
    free_recording(&r);
    return;
  }
  CU_ASSERT_FATAL(r.n > 2);
  size_t which[16], nw = 0;
  which[nw++] = 0;
  which[nw++] = 1;
  which[nw++] = r.n / 2;
  which[nw++] = r.n - 1;
  for (size_t i = r.n / 2; i < r.n; i++)
    if (r.insns[i].nexp > 0) { /* and one that touched memory */
      which[nw++] = i;
      break;
    }
  for (size_t k = 0; nonzero && nonzero[k] && nw < 16; k++) {
    size_t i = first_nonzero(&r, nonzero[k], 1);
    CU_ASSERT(i != SIZE_MAX);
    if (i == SIZE_MAX)
      fprintf(stderr, "%s: %s is zero in every frame\n", name, nonzero[k]);
    else
      which[nw++] = i;
  }
  qsort(which, nw, sizeof which[0], cmp_size);
  size_t u = 0;
  for (size_t k = 0; k < nw; k++)
    if (u == 0 || which[k] != which[u - 1])
      which[u++] = which[k];
  size_t held = 0;
  for (int i = 0; i < r.arch->nregs; i++)
    held += (size_t)fmt->holds_reg(r.arch, i);
  CU_ASSERT(gdb_check_any(tf, &r, which, u) == u * held);

  /* the reader gives the same states back */
  tc_error err = {{0}};
  tc_reader *rd = fmt->open_reader(tf, &err);
  CU_ASSERT_FATAL(rd != NULL);
  CU_ASSERT(fmt->reader_info(rd)->arch == r.arch);
  tc_event ev;
  size_t n = 0, same = 0;
  while (fmt->next_event(rd, &ev, &err) == 1 && n < r.n) {
    same += ev.u.insn.pc == r.insns[n].pc && ev.u.insn.index == n &&
            same_held(r.arch, ev.u.insn.state_before, r.insns[n].state);
    n++;
  }
  fmt->close_reader(rd);
  CU_ASSERT(n == r.n);
  CU_ASSERT(same == r.n);
  free_recording(&r);
}

static void test_session_armhf(void) {
  /* ARM and Thumb code, VFP/NEON arithmetic */
  static const char *const nz[] = {"d7", "fpscr", NULL};
  check_guest_any("interwork-armhf", 0, nz);
}
static void test_session_armel(void) {
  static const char *const nz[] = {"tpidruro", NULL};
  check_guest_any("glibc-armel", 3000, nz);
}
static void test_session_arm64(void) {
  static const char *const nz[] = {"v0", "tpidr_el0", NULL};
  check_guest_any("glibc-arm64", 6000, nz);
}
static void test_session_mips(void) {
  static const char *const nz[] = {"hi", NULL};
  check_guest_any("glibc-mips", 1500, nz);
}
static void test_session_mipsel(void) {
  static const char *const nz[] = {"hi", NULL};
  check_guest_any("glibc-mipsel", 1500, nz);
}

/* `tracecorn verify -f tfile` on each arch's guests, with the number of
 * registers the tfile holds. */
static void test_verify_arches(void) {
  static const struct {
    const char *guest, *held;
  } cases[] = {
      {"hello-arm64", "(69 of 69 registers held"},
      {"hello-armhf", "(51 of 51 registers held"},
      {"hello-armel", "(51 of 51 registers held"},
      {"interwork-armhf", "(51 of 51 registers held"},
      {"hello-mips", "(35 of 36 registers held"},
      {"hello-mipsel", "(35 of 36 registers held"},
      /* static glibc: stdio, malloc, files, floating point */
      {"glibc-arm64", "(69 of 69 registers held"},
      {"glibc-armhf", "(51 of 51 registers held"},
      {"glibc-armel", "(51 of 51 registers held"},
      {"glibc-mips", "(35 of 36 registers held"},
      {"glibc-mipsel", "(35 of 36 registers held"},
  };
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    const char *guest = tu_guest(cases[k].guest);
    CU_ASSERT_FATAL(tu_have(guest));
    char *out = NULL;
    int st = tu_run_merge(&out, TC_CLI, "verify", "-f", "tfile", "--", guest,
                          (char *)NULL);
    CU_ASSERT(st == 0);
    CU_ASSERT(out && strstr(out, "tfile  ok: ") != NULL);
    CU_ASSERT(out && strstr(out, cases[k].held) != NULL);
    if (st != 0 || !out || !strstr(out, cases[k].held))
      fprintf(stderr, "%s: %s\n", cases[k].guest, out ? out : "");
    free(out);
  }
}

/* ------------------------------------------ GDB's searches on a tfile */

/* `gdbbin -batch -nx -ex 'file GUEST' -ex 'target tfile TF' CMDS`. */
static char *gdb_with_file(const char *gdbbin, const char *guest,
                           const char *tf, const char *cmds) {
  char *cmd = NULL, *out = NULL;
  CU_ASSERT_FATAL(asprintf(&cmd,
                           "%s -batch -nx -ex 'file %s' -ex 'target tfile %s' "
                           "%s 2>&1",
                           gdbbin, guest, tf, cmds) > 0);
  tu_run(cmd, &out, 1);
  free(cmd);
  CU_ASSERT_FATAL(out != NULL);
  CU_ASSERT(strstr(out, "rejected") == NULL);
  CU_ASSERT(strstr(out, "Ignoring") == NULL);
  return out;
}

/* The first frame from `from` whose PC is in [lo, hi]; SIZE_MAX if none. */
static size_t first_in(const recording *r, size_t from, uint64_t lo,
                       uint64_t hi) {
  for (size_t i = from; i < r->n; i++)
    if (r->insns[i].pc >= lo && r->insns[i].pc <= hi)
      return i;
  return SIZE_MAX;
}

/* The address of function `name` of the recorded program: the first
 * executed PC the ELF's symbols name so. */
static uint64_t func_addr(const char *guest, const recording *r,
                          const char *name) {
  size_t n;
  uint8_t *elf = tu_read_file(guest, &n);
  CU_ASSERT_FATAL(elf != NULL);
  tc_symtab *t = tc_symtab_from_elf(elf, n, 0);
  CU_ASSERT_FATAL(t != NULL);
  uint64_t a = 0;
  for (size_t i = 0; i < r->n && !a; i++) {
    const char *s = tc_symtab_exact(t, r->insns[i].pc);
    if (s && strcmp(s, name) == 0)
      a = r->insns[i].pc;
  }
  tc_symtab_free(t);
  free(elf);
  CU_ASSERT_FATAL(a != 0);
  return a;
}

/* The line of crackme.c holding `text`. */
static int crackme_line(const char *text) {
  char path[4200];
  snprintf(path, sizeof path, "%s/examples/guests/crackme.c", TC_SOURCE_DIR);
  size_t n;
  char *src = (char *)tu_read_file(path, &n);
  CU_ASSERT_FATAL(src != NULL);
  char *p = strstr(src, text);
  CU_ASSERT_FATAL(p != NULL);
  int line = 1;
  for (char *q = src; q < p; q++)
    line += *q == '\n';
  free(src);
  return line;
}

/* The last "Found trace frame N" in a section; -1 if none. */
static long found_frame(const char *sect) {
  const char *last = NULL;
  for (const char *p = sect; (p = strstr(p, "Found trace frame ")); p++)
    last = p;
  return last ? strtol(last + strlen("Found trace frame "), NULL, 10) : -1;
}

static void assert_frame(const char *out, const char *name, size_t want) {
  const char *sect = section(out, name);
  long got = found_frame(sect);
  CU_ASSERT(want != SIZE_MAX && got == (long)want);
  if (want == SIZE_MAX || got != (long)want)
    fprintf(stderr, "%s: want frame %zu, GDB: %s\n", name, want, sect);
}

/* Whether instruction i touched the byte at addr. */
static int touched(const recording *r, size_t i, uint64_t addr) {
  for (size_t k = 0; k < r->insns[i].nexp; k++)
    if (r->insns[i].exp_addr[k] == addr)
      return 1;
  return 0;
}

/* x86-64, GDB with the program's symbols and line table: tfind pc (an
 * address, the next hit, a function), tfind range, tfind line (and
 * outside the line), from a fresh GDB, after tfind N, after the last
 * instruction, and a miss; registers and x/s at the frames found. */
static void test_tfind_pc(void) {
  const char *guest = tu_guest("crackme64");
  CU_ASSERT_FATAL(tu_have(guest));
  const char *tf = tu_tmp("crackme64.tf");
  recording r;
  CU_ASSERT_FATAL(record_guest_opts(guest, "open-sesame", NULL, tf, &r, 0) ==
                  0);
  const tc_arch *a = r.arch;
  uint64_t check = func_addr(guest, &r, "check");
  size_t f_sym = first_in(&r, 0, check, check);
  /* an address of check's loop: executed more than once */
  uint64_t loop = 0;
  size_t f_pc1 = SIZE_MAX, f_pc2 = SIZE_MAX;
  for (size_t i = f_sym + 1; i < r.n && !loop; i++) {
    size_t again = first_in(&r, i + 1, r.insns[i].pc, r.insns[i].pc);
    if (again != SIZE_MAX) {
      loop = r.insns[i].pc;
      f_pc1 = i;
      f_pc2 = again;
    }
  }
  CU_ASSERT_FATAL(loop != 0);
  size_t f_range = first_in(&r, 1, loop, loop + 2);
  int line = crackme_line("secret++;");
  char cmds[2048];
  snprintf(cmds, sizeof cmds,
           /* fresh: no frame was ever selected */
           "-ex 'echo @@PC1\\n' -ex 'tfind pc 0x%" PRIx64 "' "
           "-ex 'info registers rip rsp rdi rsi' "
           "-ex 'echo @@PC2\\n' -ex 'tfind pc' "
           "-ex 'echo @@SYM\\n' -ex 'tfind none' -ex 'tfind pc check' "
           "-ex 'info registers rip rsp rdi rsi' -ex 'x/s $rsi' "
           "-ex 'echo @@RANGE\\n' -ex 'tfind start' "
           "-ex 'tfind range 0x%" PRIx64 ", 0x%" PRIx64 "' "
           "-ex 'echo @@LINE\\n' -ex 'tfind none' "
           "-ex 'info line crackme.c:%d' -ex 'tfind line crackme.c:%d' "
           "-ex 'echo @@OUTSIDE\\n' -ex 'tfind line' "
           "-ex 'echo @@AFTERLAST\\n' -ex 'tfind %zu' -ex 'tfind none' "
           "-ex 'tfind pc check' "
           "-ex 'echo @@MISS\\n' -ex 'tfind pc 0x12345' "
           "-ex 'echo frame=' -ex 'output $trace_frame' -ex 'echo \\n' "
           "-ex 'echo @@END\\n'",
           loop, loop, loop + 2, line, line, r.n - 1);
  char *out = gdb_with_file("gdb", guest, tf, cmds);
  assert_frame(out, "PC1", f_pc1);
  const char *s1 = section(out, "PC1");
  assert_reg(s1, "rip", loop);
  assert_reg(s1, "rsp", tc_state_get(a, r.insns[f_pc1].state, a->sp_reg));
  assert_reg(s1, "rdi", tc_state_get(a, r.insns[f_pc1].state, reg(a, "rdi")));
  assert_frame(out, "PC2", f_pc2);
  assert_frame(out, "SYM", f_sym);
  const char *s2 = section(out, "SYM");
  assert_reg(s2, "rip", check);
  uint64_t secret = tc_state_get(a, r.insns[f_sym].state, reg(a, "rsi"));
  assert_reg(s2, "rsi", secret);
  /* the key built on the stack, untouched by this instruction: shown
   * from the stack collected with every frame */
  CU_ASSERT(!touched(&r, f_sym, secret));
  CU_ASSERT(strstr(s2, "\"open-sesame\"") != NULL);
  assert_frame(out, "RANGE", f_range);
  /* tfind line: GDB's own range of the line */
  const char *sl = section(out, "LINE");
  const char *at = strstr(sl, "starts at address ");
  CU_ASSERT_FATAL(at != NULL);
  uint64_t lo = strtoull(at + strlen("starts at address "), NULL, 16);
  const char *to = strstr(at, "and ends at ");
  CU_ASSERT_FATAL(to != NULL);
  uint64_t hi = strtoull(to + strlen("and ends at "), NULL, 16);
  CU_ASSERT(lo >= check && hi > lo);
  size_t f_line = first_in(&r, 0, lo, hi - 1);
  assert_frame(out, "LINE", f_line);
  size_t f_out = SIZE_MAX;
  for (size_t i = f_line + 1; i < r.n && f_out == SIZE_MAX; i++)
    if (r.insns[i].pc < lo || r.insns[i].pc >= hi)
      f_out = i;
  assert_frame(out, "OUTSIDE", f_out);
  assert_frame(out, "AFTERLAST", f_sym);
  /* no frame at that address: GDB's search ends with an error, and the
   * selected frame stays */
  const char *miss = section(out, "MISS");
  CU_ASSERT(found_frame(miss) == -1);
  CU_ASSERT(strstr(miss, "Premature end of file") != NULL);
  char want[32];
  snprintf(want, sizeof want, "%zu", f_sym);
  CU_ASSERT_STRING_EQUAL(keyval(miss, "frame"), want);
  free(out);
  free_recording(&r);
}

/* x/s on strings an instruction did not touch, with each tfile.memory:
 * `touched` shows only what it touched, `stack` the stack at SP, `all`
 * also where registers point (the key, in argv, far above SP). */
static void test_memory_option(void) {
  const char *guest = tu_guest("crackme64");
  static const char *const modes[] = {"touched", "stack", "all"};
  size_t sizes[3] = {0};
  for (size_t m = 0; m < 3; m++) {
    char opt[64], name[64];
    snprintf(opt, sizeof opt, "tfile.memory=%s", modes[m]);
    snprintf(name, sizeof name, "crackme64-%s.tf", modes[m]);
    const char *const wopts[] = {opt, NULL};
    const char *tf = tu_tmp(name);
    recording r;
    CU_ASSERT_FATAL(record_guest_opts(guest, "open-sesame", wopts, tf, &r, 0) ==
                    0);
    size_t f = first_in(&r, 0, func_addr(guest, &r, "check"),
                        func_addr(guest, &r, "check"));
    uint64_t key = tc_state_get(r.arch, r.insns[f].state, reg(r.arch, "rdi"));
    uint64_t secret =
        tc_state_get(r.arch, r.insns[f].state, reg(r.arch, "rsi"));
    CU_ASSERT(!touched(&r, f, key + 1) && !touched(&r, f, secret));
    char *out = gdb_with_file("gdb", guest, tf,
                              "-ex 'tfind pc check' -ex 'echo @@KEY\\n' "
                              "-ex 'x/s $rdi' -ex 'echo @@SECRET\\n' "
                              "-ex 'x/s $rsi' -ex 'echo @@BT\\n' -ex 'bt' "
                              "-ex 'echo @@\\n'");
    const char *k = section(out, "KEY");
    int key_shown = strstr(k, "\"open-sesame\"") != NULL;
    CU_ASSERT(key_shown == (m == 2));
    if (m < 2) /* its first byte, read by the instruction, and no more */
      CU_ASSERT(strstr(k, "\"o\"<error: Cannot access memory") != NULL);
    CU_ASSERT((strstr(section(out, "SECRET"), "\"open-sesame\"") != NULL) ==
              (m > 0));
    /* with the stack, GDB unwinds to _start */
    CU_ASSERT((strstr(section(out, "BT"), "in _start") != NULL) == (m > 0));
    free(out);
    size_t len;
    uint8_t *buf = tu_read_file(tf, &len);
    CU_ASSERT_FATAL(buf != NULL);
    sizes[m] = len;
    free(buf);
    free_recording(&r);
  }
  CU_ASSERT(sizes[0] < sizes[1] && sizes[1] < sizes[2]);
  fprintf(stderr, "[crackme64: touched %zu, stack %zu, all %zu bytes]\n",
          sizes[0], sizes[1], sizes[2]);
}

/* Fewer tracepoints than addresses: the lowest addresses keep theirs
 * (tfind pc works there), the others share the catch-all; 0 = only the
 * catch-all. Bad option values are refused. */
static void test_tracepoint_limit(void) {
  const char *guest = tu_guest("crackme64");
  const char *const wopts[] = {"tfile.tracepoints=5", NULL};
  const char *tf = tu_tmp("crackme64-tp5.tf");
  recording r;
  CU_ASSERT_FATAL(record_guest_opts(guest, "x", wopts, tf, &r, 0) == 0);
  uint64_t top = 0;
  for (size_t i = 0; i < r.n; i++)
    if (r.insns[i].pc > top)
      top = r.insns[i].pc;
  char cmds[512];
  snprintf(cmds, sizeof cmds,
           "-ex 'echo @@INFO\\n' -ex 'info tracepoints' "
           "-ex 'echo @@LOW\\n' -ex 'tfind pc _start' "
           "-ex 'echo @@TOP\\n' -ex 'tfind pc 0x%" PRIx64 "' -ex 'echo @@\\n'",
           top);
  char *out = gdb_with_file("gdb", guest, tf, cmds);
  const char *info = section(out, "INFO");
  CU_ASSERT(strstr(info, "\n6       tracepoint") != NULL);
  CU_ASSERT(strstr(info, "\n7       tracepoint") == NULL);
  assert_frame(out, "LOW", 0);
  CU_ASSERT(found_frame(section(out, "TOP")) == -1);
  free(out);
  free_recording(&r);

  tc_trace_info info0 = {0};
  info0.arch = tc_arch_by_id(TC_ARCH_X86_64);
  static const char *const bad[][2] = {
      {"tfile.memory=some", "memory must be touched, stack or all"},
      {"tfile.stack=lots", "stack must be a number"},
      {"tfile.stack=70000", "stack must be a number"},
      {"tfile.tracepoints=40000", "tracepoints must be a number"},
      {"tfile.colour=red", "unknown writer option"}};
  for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
    const char *const o[] = {bad[k][0], NULL};
    info0.writer_options = o;
    tc_error err = {{0}};
    CU_ASSERT(fmt->open_writer(tu_tmp("bad-opt.tf"), &info0, &err) == NULL);
    CU_ASSERT(strstr(err.msg, bad[k][1]) != NULL);
  }
}

/* The same on arm64 with gdb-multiarch. */
static void test_tfind_pc_arm64(void) {
  const char *guest = tu_guest("crackme-arm64");
  CU_ASSERT_FATAL(tu_have(guest));
  const char *tf = tu_tmp("crackme-arm64.tf");
  recording r;
  CU_ASSERT_FATAL(record_guest_opts(guest, "open-sesame", NULL, tf, &r, 0) ==
                  0);
  const tc_arch *a = r.arch;
  uint64_t check = func_addr(guest, &r, "check");
  size_t f_sym = first_in(&r, 0, check, check);
  int line = crackme_line("secret++;");
  char cmds[1024];
  snprintf(cmds, sizeof cmds,
           "-ex 'echo @@SYM\\n' -ex 'tfind pc check' "
           "-ex 'info registers pc sp x0 x1' -ex 'x/s $x1' "
           "-ex 'echo @@LINE\\n' -ex 'tfind none' "
           "-ex 'info line crackme.c:%d' -ex 'tfind line crackme.c:%d' "
           "-ex 'echo @@\\n'",
           line, line);
  char *out = gdb_with_file("gdb-multiarch", guest, tf, cmds);
  assert_frame(out, "SYM", f_sym);
  const char *s = section(out, "SYM");
  assert_reg(s, "pc", check);
  assert_reg(s, "sp", tc_state_get(a, r.insns[f_sym].state, a->sp_reg));
  assert_reg(s, "x0", tc_state_get(a, r.insns[f_sym].state, reg(a, "x0")));
  assert_reg(s, "x1", tc_state_get(a, r.insns[f_sym].state, reg(a, "x1")));
  CU_ASSERT(strstr(s, "\"open-sesame\"") != NULL);
  const char *sl = section(out, "LINE");
  const char *at = strstr(sl, "starts at address ");
  CU_ASSERT_FATAL(at != NULL);
  uint64_t lo = strtoull(at + strlen("starts at address "), NULL, 16);
  const char *to = strstr(at, "and ends at ");
  CU_ASSERT_FATAL(to != NULL);
  uint64_t hi = strtoull(to + strlen("and ends at "), NULL, 16);
  assert_frame(out, "LINE", first_in(&r, 0, lo, hi - 1));
  free(out);
  free_recording(&r);
}

int main(void) {
  static const tu_case cases[] = {{"gdb_x64", test_gdb_x64},
                                  {"gdb_x86", test_gdb_x86},
                                  {"roundtrip_x64", test_roundtrip_x64},
                                  {"roundtrip_x86", test_roundtrip_x86},
                                  {"corrupt", test_corrupt},
                                  {"fuzz_bytes", test_fuzz_bytes},
                                  {"writer_errors", test_writer_errors},
                                  {"session_hello64", test_session_hello64},
                                  {"session_hello32", test_session_hello32},
                                  {"cli", test_cli},
                                  {"gdb_arm", test_gdb_arm},
                                  {"gdb_arm64", test_gdb_arm64},
                                  {"gdb_mips", test_gdb_mips},
                                  {"gdb_mipsel", test_gdb_mipsel},
                                  {"holds", test_holds},
                                  {"mips_byte_order", test_mips_byte_order},
                                  {"corrupt_arches", test_corrupt_arches},
                                  {"session_armhf", test_session_armhf},
                                  {"session_armel", test_session_armel},
                                  {"session_arm64", test_session_arm64},
                                  {"session_mips", test_session_mips},
                                  {"session_mipsel", test_session_mipsel},
                                  {"verify_arches", test_verify_arches},
                                  {"tfind_pc", test_tfind_pc},
                                  {"memory_option", test_memory_option},
                                  {"tracepoint_limit", test_tracepoint_limit},
                                  {"tfind_pc_arm64", test_tfind_pc_arm64},
                                  {NULL, NULL}};
  /* TC_TEST_CASES="a b": only those cases (while working on one) */
  const char *only = getenv("TC_TEST_CASES");
  static tu_case some[sizeof cases / sizeof cases[0]];
  size_t n = 0;
  for (size_t i = 0; only && cases[i].name; i++) {
    const char *p = strstr(only, cases[i].name);
    size_t l = strlen(cases[i].name);
    if (p && (p == only || p[-1] == ' ') && (p[l] == 0 || p[l] == ' '))
      some[n++] = cases[i];
  }
  return tu_run_suite("tfile", only ? some : cases);
}
