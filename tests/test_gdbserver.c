/* SPDX-License-Identifier: GPL-2.0-or-later */
/* tracecorn gdbserver (issue 33): real gdb in batch mode over a pipe
 * against recorded guests, forwards and backwards, and the protocol fed
 * malformed packets. The truth is the recording itself, as `tracecorn
 * dump --json` prints it. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "analysis/replay.h"
#include "testutil.h"

/* gdb-multiarch when installed (every arch), else gdb. */
static const char *gdb_prog(void) {
  return tu_have("/usr/bin/gdb-multiarch") ? "gdb-multiarch" : "gdb";
}

/* Records guest with args into NAME.tct once; its path. */
static const char *record(const char *name, const char *guest,
                          const char *args) {
  static char paths[8][4200];
  static char names[8][64];
  for (int i = 0; i < 8; i++)
    if (!strcmp(names[i], name))
      return paths[i];
  int slot = 0;
  while (slot < 7 && names[slot][0])
    slot++;
  char *out = NULL;
  int st = tu_runf(&out, 1, "%s record -q -f tct -o %s -- %s %s >/dev/null",
                   TC_CLI, tu_tmp(name), tu_guest(guest), args ? args : "");
  /* the guest's own exit status (dyn64 exits 3), not tracecorn's 125 */
  CU_ASSERT(st >= 0 && st < 100);
  if (st < 0 || st >= 100)
    fprintf(stderr, "\nrecord %s: %s\n", guest, out ? out : "");
  free(out);
  snprintf(names[slot], sizeof names[slot], "%s", name);
  snprintf(paths[slot], sizeof paths[slot], "%s.tct", tu_tmp(name));
  return paths[slot];
}

/* Runs gdb in batch mode on trace (and exe's symbols, NULL: none) with the
 * commands; stdout and stderr merged (malloc'd). */
static char *gdb_run_st(const char *trace, const char *exe, const char *cmds,
                        int *status) {
  static int n;
  char name[64];
  snprintf(name, sizeof name, "script%d.gdb", n++);
  const char *script = tu_tmp(name);
  FILE *f = fopen(script, "w");
  CU_ASSERT_PTR_NOT_NULL_FATAL(f);
  fprintf(f, "set pagination off\nset confirm off\nset width 0\n");
  if (exe)
    fprintf(f, "file %s\n", exe);
  fprintf(f, "target remote | %s gdbserver --stdio -q %s\n%s\n", TC_CLI, trace,
          cmds);
  fclose(f);
  char *out = NULL;
  int st = tu_runf(&out, 1, "timeout 120 %s -batch -nx -x %s </dev/null",
                   gdb_prog(), script);
  if (status)
    *status = st;
  else {
    CU_ASSERT_EQUAL(st, 0);
    if (st)
      fprintf(stderr, "\ngdb status %d:\n%s\n", st, out ? out : "");
  }
  return out ? out : strdup("");
}

/* The same, asserting that gdb exited 0. */
static char *gdb_run(const char *trace, const char *exe, const char *cmds) {
  return gdb_run_st(trace, exe, cmds, NULL);
}

/* The value printed as "@@key=VALUE" (hex without 0x, as printf %lx, or
 * decimal with d:), UINT64_MAX when missing. The n-th occurrence. */
static uint64_t at_val(const char *out, const char *key, int nth) {
  char want[64];
  snprintf(want, sizeof want, "@@%s=", key);
  const char *p = out;
  for (int i = 0; p && i <= nth; i++) {
    p = strstr(p, want);
    if (p && i < nth)
      p += strlen(want);
  }
  if (!p)
    return UINT64_MAX;
  return strtoull(p + strlen(want), NULL, 16);
}

static int count_str(const char *hay, const char *needle) {
  int n = 0;
  for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
    n++;
  return n;
}

/* A register of the keyframe line of `dump --json --from N --count 1`:
 * 1 and *v set when present. */
static int json_reg(const char *json, const char *name, uint64_t *v) {
  const char *k = strstr(json, "{\"type\":\"keyframe\"");
  if (!k)
    return 0;
  char want[64];
  snprintf(want, sizeof want, "\"%s\":\"", name);
  const char *nl = strchr(k, '\n');
  const char *f = strstr(k, want);
  if (!f || (nl && f > nl))
    return 0;
  *v = strtoull(f + strlen(want), NULL, 16);
  return 1;
}

/* Compares `info registers` (printed after the line "@@regs") with the
 * recording's state at instruction pos; returns how many registers matched
 * (every one that both name is asserted equal). */
static int check_info_registers(const char *out, const char *trace,
                                uint64_t pos, const char *arch) {
  char *json = NULL;
  int st = tu_runf(&json, 0, "%s dump --json --from %" PRIu64 " --count 1 %s",
                   TC_CLI, pos, trace);
  CU_ASSERT_EQUAL(st, 0);
  const char *p = strstr(out, "@@regs");
  CU_ASSERT_PTR_NOT_NULL(p);
  int matched = 0;
  while (p && json && (p = strchr(p, '\n'))) {
    p++;
    char name[32];
    char hex[64];
    if (sscanf(p, "%31s %63s", name, hex) != 2 || strncmp(hex, "0x", 2))
      continue;
    if (!strncmp(name, "@@", 2))
      break;
    const char *jname = name;
    if (!strcmp(arch, "x86_64") && !strcmp(name, "eflags"))
      jname = "rflags";
    if (!strcmp(arch, "arm64") && !strcmp(name, "cpsr"))
      jname = "nzcv";
    uint64_t want;
    if (!json_reg(json, jname, &want))
      continue;
    uint64_t got = strtoull(hex, NULL, 16);
    if (!strcmp(jname, "rflags"))
      want &= 0xffffffffu;
    CU_ASSERT_EQUAL(got, want);
    if (got != want)
      fprintf(stderr, "\n%s at %" PRIu64 ": gdb %s, recording 0x%" PRIx64 "\n",
              name, pos, hex, want);
    matched++;
  }
  free(json);
  return matched;
}

/* The pc of instruction `index` in `dump --json` lines. */
static uint64_t insn_pc(const char *json, uint64_t *index) {
  const char *l = strstr(json, "{\"type\":\"insn\"");
  if (!l)
    return UINT64_MAX;
  const char *i = strstr(l, "\"index\":");
  const char *pc = strstr(l, "\"pc\":\"");
  if (!i || !pc)
    return UINT64_MAX;
  if (index)
    *index = strtoull(i + 8, NULL, 10);
  return strtoull(pc + 6, NULL, 16);
}

/* ------------------------------------------------------------- cases */

#define GPRS64                                                                 \
  "printf \"@@rax=%lx @@rbx=%lx @@rcx=%lx @@rdx=%lx @@rsi=%lx @@rdi=%lx "      \
  "@@rsp=%lx @@rbp=%lx @@pc=%lx @@eflags=%lx\\n\", $rax, $rbx, $rcx, $rdx, "   \
  "$rsi, $rdi, $rsp, $rbp, $pc, $eflags\n"

/* stepi N times then reverse-stepi N times: back at the same pc and
 * registers, and each step moved. */
static void test_step_back(void) {
  const char *t = record("plant", "plant64", NULL);
  char *out = gdb_run(t, tu_guest("plant64"),
                      "break plant\ncontinue\n" GPRS64 "stepi\nstepi\nstepi\n"
                      "stepi\n" GPRS64 "reverse-stepi\nreverse-stepi\n"
                      "reverse-stepi\nreverse-stepi\n" GPRS64);
  static const char *const regs[] = {"rax", "rbx", "rcx", "rdx", "rsi",
                                     "rdi", "rsp", "rbp", "pc",  "eflags"};
  uint64_t pc0 = at_val(out, "pc", 0);
  CU_ASSERT_NOT_EQUAL(pc0, UINT64_MAX);
  CU_ASSERT_NOT_EQUAL(at_val(out, "pc", 1), pc0); /* it moved */
  for (size_t i = 0; i < sizeof regs / sizeof regs[0]; i++) {
    CU_ASSERT_NOT_EQUAL(at_val(out, regs[i], 0), UINT64_MAX);
    CU_ASSERT_EQUAL(at_val(out, regs[i], 2), at_val(out, regs[i], 0));
  }
  /* plant's first instruction, as the recording has it */
  char *json = NULL;
  CU_ASSERT_EQUAL(
      tu_runf(&json, 0, "%s dump --json --range plant --count 1 %s", TC_CLI, t),
      0);
  CU_ASSERT_EQUAL(pc0, insn_pc(json ? json : "", NULL));
  free(json);
  free(out);
}

/* break main + continue stops at main; plant is hit exactly once, then
 * continue reaches the end of the recording. */
static void test_break_continue(void) {
  const char *t = record("plant", "plant64", NULL);
  char *out = gdb_run(
      t, tu_guest("plant64"),
      "break main\nbreak plant\ncontinue\nprintf \"@@pc=%lx @@main=%lx\\n\", "
      "$pc, &main\ncontinue\nprintf \"@@pc=%lx @@plant=%lx\\n\", $pc, "
      "&plant\ncontinue\ninfo breakpoints\nprintf \"@@end=%lx\\n\", $pc\n");
  CU_ASSERT_EQUAL(at_val(out, "pc", 0), at_val(out, "main", 0));
  CU_ASSERT_NOT_EQUAL(at_val(out, "main", 0), UINT64_MAX);
  CU_ASSERT_EQUAL(at_val(out, "pc", 1), at_val(out, "plant", 0));
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "Breakpoint 1, "));
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "Breakpoint 2, "));
  /* each hit once (the recording calls plant once) */
  CU_ASSERT_EQUAL(count_str(out, "breakpoint already hit 1 time"), 2);
  /* then the end of the recording */
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "No more reverse-execution history."));
  char *json = NULL;
  CU_ASSERT_EQUAL(tu_runf(&json, 0, "%s dump --json --pc 0x%" PRIx64 " %s",
                          TC_CLI, at_val(out, "plant", 0), t),
                  0);
  CU_ASSERT_EQUAL(count_str(json ? json : "", "{\"type\":\"insn\""), 1);
  free(json);
  free(out);
}

/* watch target[5] at peek(), reverse-continue: stops at plant's store,
 * the instruction `dump` names as its last writer, with the value before
 * it (1); neighbour()'s stores beside it do not stop. Forwards again, the
 * watch reports 0x5a after the store. */
static void test_watch_reverse(void) {
  const char *t = record("plant", "plant64", NULL);
  char *out =
      gdb_run(t, tu_guest("plant64"),
              "break peek\ncontinue\ndelete\n"
              "watch *(unsigned char *)((char *)&target + 5)\n"
              "printf \"@@addr=%lx\\n\", (char *)&target + 5\n"
              "reverse-continue\n"
              "printf \"@@pc=%lx @@val=%x\\n\", $pc, *(unsigned char *)((char "
              "*)&target + 5)\n"
              "continue\n"
              "printf \"@@pc=%lx @@val=%x\\n\", $pc, *(unsigned char *)((char "
              "*)&target + 5)\n");
  uint64_t addr = at_val(out, "addr", 0);
  CU_ASSERT_NOT_EQUAL(addr, UINT64_MAX);
  char *json = NULL;
  CU_ASSERT_EQUAL(tu_runf(&json, 0,
                          "%s dump --json --mem 0x%" PRIx64
                          ":1 --writes --last 1 %s",
                          TC_CLI, addr, t),
                  0);
  uint64_t writer = insn_pc(json ? json : "", NULL);
  CU_ASSERT_NOT_EQUAL(writer, UINT64_MAX);
  CU_ASSERT_EQUAL(at_val(out, "pc", 0), writer);
  CU_ASSERT_EQUAL(at_val(out, "val", 0), 1); /* before the store */
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "Hardware watchpoint 2"));
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "New value = 1 '\\001'"));
  /* forwards: stopped after the store, 0x5a written */
  CU_ASSERT_EQUAL(at_val(out, "val", 1), 0x5a);
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "New value = 90 'Z'"));
  CU_ASSERT_NOT_EQUAL(at_val(out, "pc", 1), writer);
  free(json);
  free(out);
}

/* info registers at positions reached by monitor seek and by stepping
 * equal the recording's state there; monitor info says where. */
static void test_registers_seek(void) {
  const char *t = record("plant", "plant64", NULL);
  char *out = gdb_run(t, NULL,
                      "monitor seek 1234\nmaintenance flush register-cache\n"
                      "monitor info\necho @@regs\\n\ninfo registers\n"
                      "echo @@done\\n\n");
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "position 1234 of "));
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "arch x86_64"));
  CU_ASSERT(check_info_registers(out, t, 1234, "x86_64") >= 24);
  free(out);
  /* forwards 5000 steps by seek, then 3 back by reverse-stepi: 4997 */
  out = gdb_run(t, NULL,
                "monitor seek 5000\nmaintenance flush register-cache\n"
                "reverse-stepi\nreverse-stepi\nreverse-stepi\n"
                "echo @@regs\\n\ninfo registers\necho @@done\\n\n"
                "monitor info\n");
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "position 4997 of "));
  CU_ASSERT(check_info_registers(out, t, 4997, "x86_64") >= 24);
  /* a seek past the end says so and changes nothing */
  free(out);
  out =
      gdb_run(t, NULL, "monitor seek 99999999\nmonitor seek x\nmonitor info\n");
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "is past the end"));
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "usage: monitor seek N"));
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "position 0 of "));
  free(out);
}

/* The ends: continue runs to the end, stepi there stays, reverse-continue
 * goes back to the first instruction (the entry point); gdb says "No more
 * reverse-execution history" each time. */
static void test_ends(void) {
  const char *t = record("plant", "plant64", NULL);
  char *out = gdb_run(t, NULL,
                      "continue\nprintf \"@@pc=%lx\\n\", $pc\nstepi\n"
                      "printf \"@@pc=%lx\\n\", $pc\nmonitor info\n"
                      "reverse-continue\nprintf \"@@pc=%lx\\n\", $pc\n"
                      "reverse-stepi\nprintf \"@@pc=%lx\\n\", $pc\n");
  CU_ASSERT_EQUAL(count_str(out, "No more reverse-execution history."), 4);
  CU_ASSERT_EQUAL(at_val(out, "pc", 0), at_val(out, "pc", 1));
  char *json = NULL;
  CU_ASSERT_EQUAL(tu_runf(&json, 0, "%s dump --json --count 1 %s", TC_CLI, t),
                  0);
  uint64_t first = insn_pc(json ? json : "", NULL);
  CU_ASSERT_EQUAL(at_val(out, "pc", 2), first);
  CU_ASSERT_EQUAL(at_val(out, "pc", 3), first);
  /* at the end: position = the instruction count */
  char *info = NULL;
  CU_ASSERT_EQUAL(tu_runf(&info, 0, "%s info %s", TC_CLI, t), 0);
  const char *n = strstr(info ? info : "", "instructions: ");
  CU_ASSERT_PTR_NOT_NULL(n);
  if (n) {
    char want[96];
    uint64_t count = strtoull(n + 14, NULL, 10);
    snprintf(want, sizeof want, "position %" PRIu64 " of %" PRIu64, count,
             count);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, want));
  }
  free(info);
  free(json);
  free(out);
}

/* ------------------------------------------------------------ packets */

/* A framed packet appended to buf. */
static void add_packet(char *buf, size_t cap, const char *payload) {
  unsigned sum = 0;
  for (const char *p = payload; *p; p++)
    sum = (sum + (unsigned char)*p) & 0xff;
  size_t n = strlen(buf);
  snprintf(buf + n, cap - n, "$%s#%02x", payload, sum);
}

/* The replies ($...#xx payloads) in order, '\n'-separated. */
static char *replies(const char *raw) {
  size_t n = strlen(raw);
  char *out = calloc(1, n + 2);
  size_t k = 0;
  for (const char *p = raw; (p = strchr(p, '$'));) {
    const char *h = strchr(p, '#');
    if (!h)
      break;
    memcpy(out + k, p + 1, (size_t)(h - p - 1));
    k += (size_t)(h - p - 1);
    out[k++] = '\n';
    p = h;
  }
  return out;
}

/* Malformed packets get E replies (or the empty "unsupported"), a bad
 * checksum a NAK, writes are refused, and the session goes on; at the end
 * of the input (the client gone) the server exits 0. */
static void test_malformed(void) {
  const char *t = record("plant", "plant64", NULL);
  static char in[1 << 16];
  in[0] = 0;
  static const char *const bad[] = {
      "m",                                        /* 1 no address */
      "mzz,4",                                    /* 2 not hex */
      "m1234",                                    /* 3 no length */
      "m1,2,3",                                   /* 4 junk */
      "m11111111111111111,1",                     /* 5 over 64 bits */
      "p",                                        /* 6 */
      "p9999",                                    /* 7 no such register */
      "G00",                                      /* 8 write registers */
      "P0=00",                                    /* 9 write a register */
      "M400000,1:00",                             /* 10 write memory */
      "X400000,1:0",                              /* 11 */
      "Z0",                                       /* 12 */
      "Z0,zz,1",                                  /* 13 */
      "Z2,400000,0",                              /* 14 a zero-length watch */
      "z1,1",                                     /* 15 */
      "vCont;x",                                  /* 16 */
      "vCont;",                                   /* 17 */
      "qXfer:features:read:target.xml:zz",        /* 18 */
      "qXfer:features:read:target.xml:100000,10", /* 19 past the end */
      "qRcmd,6",                                  /* 20 odd hex */
      "qRcmd,zz",                                 /* 21 */
      "m0,10", /* 22 unmapped at address 0: unavailable */
      NULL};
  for (int i = 0; bad[i]; i++)
    add_packet(in, sizeof in, bad[i]);
  strcat(in, "$?#00"); /* 23: a bad checksum: '-' and no reply */
  add_packet(in, sizeof in, "Z9,0,0"); /* unknown type: empty */
  add_packet(in, sizeof in, "?");      /* still serving */
  add_packet(in, sizeof in, "qC");
  /* noise between packets and an unterminated packet at the end */
  strcat(in, "+++\x03garbage$m0,");
  CU_ASSERT_EQUAL(tu_write_file(tu_tmp("bad.in"), in, strlen(in)), 0);
  char *raw = NULL;
  int st = tu_runf(&raw, 0, "%s gdbserver -q --stdio %s < %s", TC_CLI, t,
                   tu_tmp("bad.in"));
  CU_ASSERT_EQUAL(st, 0);
  char *r = replies(raw ? raw : "");
  /* 22 E replies, then the empty one, the stop reply and qC */
  char *line = r;
  int i = 0;
  for (; i < 22 && line && *line; i++) {
    char *nl = strchr(line, '\n');
    *nl = 0;
    CU_ASSERT_EQUAL(line[0], 'E');
    if (line[0] != 'E')
      fprintf(stderr, "\npacket %s: reply '%s'\n", bad[i], line);
    line = nl + 1;
  }
  CU_ASSERT_EQUAL(i, 22);
  CU_ASSERT_EQUAL(strncmp(line, "\nT05thread:3e8;\nQC3e8\n", 22), 0);
  CU_ASSERT_PTR_NOT_NULL(strchr(raw ? raw : "", '-'));
  free(r);
  free(raw);
}

/* Random packets with good checksums (deterministic): the server never
 * crashes and still answers '?' after them. */
static void test_random_packets(void) {
  const char *t = record("plant", "plant64", NULL);
  static char in[1 << 20];
  in[0] = 0;
  uint64_t x = 0x9e3779b97f4a7c15ull;
  static const char alphabet[] = "mgpPGMXZzcsbvqQHTk?;:,0123456789abcdefx-";
  static const char *const heads[] = {
      "m",      "p", "Z", "z", "vCont;", "qXfer:features:read:target.xml:",
      "qRcmd,", "b", "H", "q"};
  for (int k = 0; k < 3000; k++) {
    char p[64];
    const char *h = heads[tu_xorshift(&x) % (sizeof heads / sizeof heads[0])];
    size_t n = strlen(h);
    memcpy(p, h, n);
    size_t len = tu_xorshift(&x) % 20;
    for (size_t i = 0; i < len; i++) {
      char c = alphabet[tu_xorshift(&x) % (sizeof alphabet - 1)];
      /* k, D and vKill would end the session */
      p[n++] = c == 'k' ? 'm' : c;
    }
    p[n] = 0;
    if (!strcmp(p, "D") || !strncmp(p, "vKill", 5) || p[0] == 'k')
      continue;
    add_packet(in, sizeof in, p);
  }
  add_packet(in, sizeof in, "?");
  CU_ASSERT_EQUAL(tu_write_file(tu_tmp("rand.in"), in, strlen(in)), 0);
  char *raw = NULL;
  int st = tu_runf(&raw, 0, "%s gdbserver -q --stdio %s < %s", TC_CLI, t,
                   tu_tmp("rand.in"));
  CU_ASSERT_EQUAL(st, 0);
  char *r = replies(raw ? raw : "");
  size_t n = strlen(r);
  CU_ASSERT(n > 2);
  /* the last reply is the stop reply */
  const char *last = n >= 2 ? r + n - 2 : r;
  while (last > r && last[-1] != '\n')
    last--;
  CU_ASSERT_EQUAL(strncmp(last, "T05", 3), 0);
  free(r);
  free(raw);
}

/* A truncated trace serves what it holds: gdb connects, the end is where
 * the file stops, and monitor info says the trace ends early. */
static void test_truncated(void) {
  /* big enough for several compressed frames: half of it holds some */
  const char *t = record("loop", "loop64", "100000");
  size_t len = 0;
  uint8_t *data = tu_read_file(t, &len);
  CU_ASSERT_PTR_NOT_NULL_FATAL(data);
  const char *cut = tu_tmp("cut.tct");
  CU_ASSERT_EQUAL(tu_write_file(cut, data, len / 2), 0);
  free(data);
  char *out = gdb_run(cut, NULL,
                      "monitor info\ncontinue\nprintf \"@@pc=%lx\\n\", $pc\n"
                      "reverse-stepi\nprintf \"@@pc=%lx\\n\", $pc\n");
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "the trace ends early"));
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "No more reverse-execution history."));
  CU_ASSERT_NOT_EQUAL(at_val(out, "pc", 0), UINT64_MAX);
  CU_ASSERT_NOT_EQUAL(at_val(out, "pc", 1), UINT64_MAX);
  const char *pos = strstr(out, "position 0 of ");
  CU_ASSERT_PTR_NOT_NULL(pos);
  if (pos) {
    uint64_t n = strtoull(pos + 14, NULL, 10);
    CU_ASSERT(n > 100);
  }
  free(out);
}

/* Other arches: stepi/reverse-stepi and info registers against the
 * recording, a breakpoint on the guest's cmain, and a write watchpoint on
 * sink[5] forwards (twice) then backwards: it lands on the store
 * instruction, as `dump --mem --writes` names it (gdb steps over or back
 * onto the access itself where watchpoints trap before it: arm, arm64). */
static void check_arch(const char *guest, const char *arch, int min_regs) {
  if (tu_expect_refusal(tu_guest(guest)))
    return;
  char name[64];
  snprintf(name, sizeof name, "arch-%s", guest);
  const char *t = record(name, guest, "300");
  char *out = gdb_run(
      t, tu_guest(guest),
      "break *cmain\ncontinue\nprintf \"@@pc=%lx @@cmain=%lx\\n\", $pc, "
      "&cmain\nstepi\nstepi\nreverse-stepi\nreverse-stepi\n"
      "printf \"@@pc=%lx\\n\", $pc\ndelete\n"
      "printf \"@@addr=%lx @@size=%x\\n\", (char *)&sink + 5 * sizeof(long), "
      "sizeof(long)\n"
      "watch *(long *)((char *)&sink + 5 * sizeof(long))\n"
      "continue\ncontinue\nreverse-continue\nprintf \"@@wpc=%lx\\n\", $pc\n"
      "delete\nmonitor seek 1777\n"
      "maintenance flush register-cache\necho @@regs\\n\ninfo registers\n"
      "echo @@done\\n\n");
  uint64_t cmain = at_val(out, "cmain", 0);
  CU_ASSERT_NOT_EQUAL(cmain, UINT64_MAX);
  /* arm: gdb prints Thumb addresses with the low bit clear */
  if (!strcmp(arch, "arm"))
    cmain &= ~(uint64_t)1;
  CU_ASSERT_EQUAL(at_val(out, "pc", 0), cmain);
  if (at_val(out, "pc", 0) != cmain)
    fprintf(stderr, "\n%s: pc %" PRIx64 ", cmain %" PRIx64 "\n%s\n", guest,
            at_val(out, "pc", 0), cmain, out);
  CU_ASSERT_EQUAL(at_val(out, "pc", 1), at_val(out, "pc", 0));
  /* the store that writes sink[5] */
  char *json = NULL;
  CU_ASSERT_EQUAL(tu_runf(&json, 0,
                          "%s dump --json --mem 0x%" PRIx64 ":%" PRIu64
                          " --writes --count 1 %s",
                          TC_CLI, at_val(out, "addr", 0),
                          at_val(out, "size", 0), t),
                  0);
  uint64_t store = insn_pc(json ? json : "", NULL);
  CU_ASSERT_NOT_EQUAL(store, UINT64_MAX);
  CU_ASSERT_EQUAL(at_val(out, "wpc", 0), store);
  CU_ASSERT_EQUAL(count_str(out, "Hardware watchpoint"), 4);
  free(json);
  int n = check_info_registers(out, t, 1777, arch);
  CU_ASSERT(n >= min_regs);
  if (n < min_regs)
    fprintf(stderr, "\n%s: %d registers compared\n%s\n", guest, n, out);
  free(out);
}

/* mips(el): gdb shows `info registers` as a table, so the registers are
 * printed one by one; status, badvaddr and cause (not recorded) are
 * unavailable, not zero. Breakpoint, steps both ways and the watch as on
 * the other arches. */
static void check_mips(const char *guest) {
  if (tu_expect_refusal(tu_guest(guest)))
    return;
  char name[64];
  snprintf(name, sizeof name, "arch-%s", guest);
  const char *t = record(name, guest, "300");
  char *out = gdb_run(
      t, tu_guest(guest),
      "break *cmain\ncontinue\nprintf \"@@pc=%lx @@cmain=%lx\\n\", $pc, "
      "&cmain\nstepi\nstepi\nreverse-stepi\nreverse-stepi\n"
      "printf \"@@pc=%lx\\n\", $pc\ndelete\n"
      "printf \"@@addr=%lx\\n\", (char *)&sink + 20\n"
      "watch *(int *)((char *)&sink + 20)\n"
      "continue\ncontinue\nreverse-continue\nprintf \"@@wpc=%lx\\n\", $pc\n"
      "delete\nmonitor seek 1777\nmaintenance flush register-cache\n"
      "printf \"@@v0=%lx @@a0=%lx @@s0=%lx @@sp=%lx @@ra=%lx @@lo=%lx "
      "@@xpc=%lx\\n\", $v0, $a0, $s0, $sp, $ra, $lo, $pc\n"
      "info registers status\n");
  CU_ASSERT_NOT_EQUAL(at_val(out, "cmain", 0), UINT64_MAX);
  CU_ASSERT_EQUAL(at_val(out, "pc", 0), at_val(out, "cmain", 0));
  CU_ASSERT_EQUAL(at_val(out, "pc", 1), at_val(out, "pc", 0));
  char *json = NULL;
  CU_ASSERT_EQUAL(tu_runf(&json, 0,
                          "%s dump --json --mem 0x%" PRIx64
                          ":4 --writes --count 1 %s",
                          TC_CLI, at_val(out, "addr", 0), t),
                  0);
  uint64_t store = insn_pc(json ? json : "", NULL);
  CU_ASSERT_NOT_EQUAL(store, UINT64_MAX);
  CU_ASSERT_EQUAL(at_val(out, "wpc", 0), store);
  free(json);
  json = NULL;
  CU_ASSERT_EQUAL(
      tu_runf(&json, 0, "%s dump --json --from 1777 --count 1 %s", TC_CLI, t),
      0);
  static const char *const regs[][2] = {
      {"v0", "v0"}, {"a0", "a0"}, {"s0", "s0"}, {"sp", "sp"},
      {"ra", "ra"}, {"lo", "lo"}, {"xpc", "pc"}};
  for (size_t i = 0; i < sizeof regs / sizeof regs[0]; i++) {
    uint64_t want = UINT64_MAX;
    CU_ASSERT(json_reg(json ? json : "", regs[i][1], &want));
    CU_ASSERT_EQUAL(at_val(out, regs[i][0], 0), want);
  }
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "<unavailable>"));
  free(json);
  free(out);
}

static void test_mipsel(void) { check_mips("loop-mipsel"); }
static void test_mips(void) { check_mips("loop-mips"); }

static void test_i386(void) { check_arch("loop32", "x86", 14); }
static void test_arm64(void) { check_arch("loop-arm64", "arm64", 33); }
static void test_armhf(void) { check_arch("loop-armhf", "arm", 16); }

/* A dynamic program: gdb reads the auxiliary vector (qXfer:auxv:read),
 * finds the loader and libc through it, stops in libc's write and
 * unwinds to _start, then goes back to main. */
static void test_dynamic(void) {
  const char *t = record("dyn", "dyn64", NULL);
  char *out = gdb_run(t, tu_guest("dyn64"),
                      "info auxv\nbreak main\ncontinue\n"
                      "printf \"@@pc=%lx @@main=%lx\\n\", $pc, &main\n"
                      "info sharedlibrary\nbreak write\ncontinue\nbt\n"
                      "reverse-continue\nprintf \"@@pc=%lx\\n\", $pc\n");
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "AT_BASE"));
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "AT_ENTRY"));
  CU_ASSERT_NOT_EQUAL(at_val(out, "main", 0), UINT64_MAX);
  CU_ASSERT_EQUAL(at_val(out, "pc", 0), at_val(out, "main", 0));
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "libc.so.6"));
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "Breakpoint 2, "));
  CU_ASSERT_PTR_NOT_NULL(strstr(out, " in _start ()"));
  CU_ASSERT_EQUAL(at_val(out, "pc", 1), at_val(out, "main", 0));
  free(out);
}

/* A breakpoint on a recursive function is hit as many times as the
 * recording runs its first instruction (gdb counts ignored hits too), and
 * reverse-continue from the end stops at its last call. */
static void test_hit_count(void) {
  const char *t = record("fib", "fib64", "8");
  char *json = NULL;
  CU_ASSERT_EQUAL(tu_runf(&json, 0, "%s dump --json --range fib %s", TC_CLI, t),
                  0);
  uint64_t entry = UINT64_MAX;
  char *out =
      gdb_run(t, tu_guest("fib64"),
              "printf \"@@fib=%lx\\n\", &fib\nbreak *fib\n"
              "ignore 1 100000\ncontinue\ninfo breakpoints\n"
              "ignore 1 0\nreverse-continue\nprintf \"@@pc=%lx\\n\", $pc\n"
              "monitor info\n");
  entry = at_val(out, "fib", 0);
  CU_ASSERT_NOT_EQUAL(entry, UINT64_MAX);
  /* the recording's count: instructions at fib's entry */
  char want[64];
  snprintf(want, sizeof want, "\"pc\":\"0x%" PRIx64 "\"", entry);
  int calls = count_str(json ? json : "", want);
  /* fib(8) and twice(5)'s fib(5): 67 + 15 calls */
  CU_ASSERT_EQUAL(calls, 82);
  char hits[96];
  snprintf(hits, sizeof hits, "breakpoint already hit %d times", calls);
  CU_ASSERT_PTR_NOT_NULL(strstr(out, hits));
  if (!strstr(out, hits))
    fprintf(stderr, "\nwanted '%s':\n%s\n", hits, out);
  CU_ASSERT_EQUAL(at_val(out, "pc", 0), entry);
  /* at the last call: the last instruction at fib's entry */
  uint64_t last = UINT64_MAX;
  for (const char *l = json ? strstr(json, want) : NULL; l;
       l = strstr(l + 1, want)) {
    const char *line = l;
    while (line > json && line[-1] != '\n')
      line--;
    const char *idx = strstr(line, "\"index\":");
    if (idx && idx < l)
      last = strtoull(idx + 8, NULL, 10);
  }
  char pos[64];
  snprintf(pos, sizeof pos, "position %" PRIu64 " of ", last);
  CU_ASSERT_PTR_NOT_NULL(strstr(out, pos));
  free(json);
  free(out);
}

/* Another format: plant64 converted to ucir (17 of x86-64's 59 registers
 * held). The breakpoint and steps work as on the tct; a register ucir does
 * not hold is <unavailable>, not the zero its reader gives. */
static void test_other_format(void) {
  const char *t = record("plant", "plant64", NULL);
  const char *u = tu_tmp("plant.ucir");
  char *out = NULL;
  CU_ASSERT_EQUAL(tu_runf(&out, 1, "%s convert -q %s %s", TC_CLI, t, u), 0);
  free(out);
  const char *cmds = "break plant\ncontinue\nprintf \"@@pc=%lx @@rsp=%lx\\n\", "
                     "$pc, $rsp\nreverse-stepi\nprintf \"@@pc=%lx\\n\", $pc\n"
                     "info registers eflags fs_base\n";
  char *tct = gdb_run(t, tu_guest("plant64"), cmds);
  out = gdb_run(u, tu_guest("plant64"), cmds);
  CU_ASSERT_NOT_EQUAL(at_val(out, "pc", 0), UINT64_MAX);
  CU_ASSERT_EQUAL(at_val(out, "pc", 0), at_val(tct, "pc", 0));
  CU_ASSERT_EQUAL(at_val(out, "rsp", 0), at_val(tct, "rsp", 0));
  CU_ASSERT_EQUAL(at_val(out, "pc", 1), at_val(tct, "pc", 1));
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "eflags         <unavailable>"));
  CU_ASSERT_PTR_NULL(strstr(tct, "<unavailable>"));
  free(tct);
  free(out);
  /* tenet: no map data, its reader does not say it holds memory; what its
   * stores and loads show is served (the return address peek's caller
   * pushed), a byte it never touched is not (target[0]) */
  const char *te = tu_tmp("plant.tenet");
  CU_ASSERT_EQUAL(tu_runf(&out, 1, "%s convert -q %s %s", TC_CLI, t, te), 0);
  free(out);
  cmds = "break peek\ncontinue\nprintf \"@@ret=%lx\\n\", *(long *)$rsp\n"
         "x/xb (char *)&target\n";
  /* the x of an unknown byte is gdb's last command and its error */
  int st = 0;
  tct = gdb_run(t, tu_guest("plant64"), cmds);
  out = gdb_run_st(te, tu_guest("plant64"), cmds, &st);
  CU_ASSERT_EQUAL(st, 1);
  CU_ASSERT_NOT_EQUAL(at_val(tct, "ret", 0), UINT64_MAX);
  CU_ASSERT_EQUAL(at_val(out, "ret", 0), at_val(tct, "ret", 0));
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "Cannot access memory at address"));
  CU_ASSERT_PTR_NULL(strstr(tct, "Cannot access memory at address"));
  free(tct);
  free(out);
}

/* --listen: gdb connects over TCP (port 0: the server picks one and says
 * which), steps, detaches; the server then ends with status 0. */
static void test_listen(void) {
  const char *t = record("plant", "plant64", NULL);
  const char *log = tu_tmp("listen.log");
  FILE *f = fopen(tu_tmp("listen.gdb"), "w");
  CU_ASSERT_PTR_NOT_NULL_FATAL(f);
  fprintf(f, "set confirm off\nstepi\nprintf \"@@pc=%%lx\\n\", $pc\n"
             "detach\n");
  fclose(f);
  f = fopen(tu_tmp("listen.sh"), "w");
  CU_ASSERT_PTR_NOT_NULL_FATAL(f);
  fprintf(f,
          "%s gdbserver --listen 127.0.0.1:0 %s 2>%s &\n"
          "pid=$!\n"
          "for i in $(seq 100); do grep -q 'listening on port' %s && break; "
          "sleep 0.1; done\n"
          "port=$(sed -n 's/.*listening on port \\([0-9]*\\).*/\\1/p' %s)\n"
          "timeout 60 %s -batch -nx -ex \"target remote 127.0.0.1:$port\" "
          "-x %s\n"
          "wait $pid\necho \"@@status=$?\"\n",
          TC_CLI, t, log, log, log, gdb_prog(), tu_tmp("listen.gdb"));
  fclose(f);
  char *out = NULL;
  CU_ASSERT_EQUAL(tu_runf(&out, 1, "timeout 120 sh %s", tu_tmp("listen.sh")),
                  0);
  CU_ASSERT_EQUAL(at_val(out ? out : "", "status", 0), 0);
  char *json = NULL;
  CU_ASSERT_EQUAL(
      tu_runf(&json, 0, "%s dump --json --from 1 --count 1 %s", TC_CLI, t), 0);
  uint64_t pc1 = insn_pc(json ? json : "", NULL);
  CU_ASSERT_NOT_EQUAL(pc1, UINT64_MAX);
  CU_ASSERT_EQUAL(at_val(out ? out : "", "pc", 0), pc1);
  free(json);
  free(out);
}

/* The engine against the reader: at every instruction i of the trace the
 * replay's registers are INSN i's state_before, every access's old bytes
 * (a read's value) are memory at i and a write's new bytes memory at i+1,
 * reached by stepping forwards; then the same at random seeks (both
 * directions, across checkpoints of a small interval). */
typedef struct engine_check {
  tc_replay *rp;
  const tc_arch *arch;
  uint64_t insns, mismatches, bytes;
  uint64_t sample[64], nsample;
  uint8_t *states;
  uint32_t last_tid;
  uint64_t switches; /* thread switches whose resumed state was checked */
} engine_check;

static void check_bytes(engine_check *c, uint64_t addr, uint32_t size,
                        const uint8_t *want) {
  uint8_t got[256];
  size_t n = size < sizeof got ? size : sizeof got;
  size_t have = tc_replay_read(c->rp, addr, n, got);
  if (have != n || memcmp(got, want, n)) {
    if (c->mismatches++ < 3)
      fprintf(stderr,
              "\nmemory 0x%" PRIx64 " (%u bytes) at %" PRIu64
              ": %zu bytes known\n",
              addr, size, tc_replay_pos(c->rp), have);
  }
  c->bytes += n;
}

static int engine_sink(void *ctx, const tc_event *ev, tc_error *err) {
  (void)err;
  engine_check *c = ctx;
  tc_error e = {{0}};
  /* A thread switched in resumes with the state the replay kept for it
   * while it was switched out. */
  if (ev->kind == TC_EV_KEYFRAME && ev->u.key.insn_index > 0 && c->last_tid &&
      ev->u.key.tid != c->last_tid) {
    const uint8_t *st = NULL;
    if (tc_replay_seek(c->rp, ev->u.key.insn_index - 1, &e) == 0)
      st = tc_replay_thread_state(c->rp, ev->u.key.tid);
    /* a thread's first run has no state before it */
    if (st) {
      c->switches++;
      if (memcmp(st, ev->u.key.state, c->arch->state_size) &&
          c->mismatches++ < 3)
        fprintf(stderr, "\nthread %u's state at %" PRIu64 " differs\n",
                ev->u.key.tid, ev->u.key.insn_index);
    }
  }
  if (ev->kind == TC_EV_INSN) {
    c->last_tid = ev->u.insn.tid;
    const tc_insn_event *in = &ev->u.insn;
    if (tc_replay_seek(c->rp, in->index, &e) ||
        memcmp(tc_replay_state(c->rp), in->state_before, c->arch->state_size)) {
      if (c->mismatches++ < 3)
        fprintf(stderr, "\nregisters at %" PRIu64 " differ\n", in->index);
    }
    for (uint32_t k = 0; k < in->nmem; k++)
      check_bytes(c, in->mem[k].addr, in->mem[k].size, in->mem[k].before);
    if (tc_replay_seek(c->rp, in->index + 1, &e) == 0)
      for (uint32_t k = 0; k < in->nmem; k++)
        if (in->mem[k].kind == TC_MEM_WRITE)
          check_bytes(c, in->mem[k].addr, in->mem[k].size, in->mem[k].after);
    if (in->index % 97 == 13 && c->nsample < 64) {
      c->sample[c->nsample] = in->index;
      memcpy(c->states + c->nsample * c->arch->state_size, in->state_before,
             c->arch->state_size);
      c->nsample++;
    }
    c->insns++;
  }
  return 0;
}

static uint64_t check_engine(const char *t) {
  tc_error err = {{0}};
  engine_check c = {0};
  c.rp = tc_replay_open(t, NULL, 512, &err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(c.rp);
  c.arch = tc_replay_arch(c.rp);
  c.states = malloc(64 * c.arch->state_size);
  CU_ASSERT_EQUAL(tc_read_trace(t, NULL, engine_sink, &c, &err), 0);
  CU_ASSERT_EQUAL(c.insns, tc_replay_insns(c.rp));
  CU_ASSERT_EQUAL(c.mismatches, 0);
  CU_ASSERT(c.bytes > 1000);
  CU_ASSERT(c.nsample >= 8);
  /* random seeks, backwards and forwards */
  uint64_t x = 12345;
  int bad = 0;
  for (int k = 0; k < 500; k++) {
    uint64_t j = tu_xorshift(&x) % c.nsample;
    CU_ASSERT_EQUAL(tc_replay_seek(c.rp, c.sample[j], &err), 0);
    bad += memcmp(tc_replay_state(c.rp), c.states + j * c.arch->state_size,
                  c.arch->state_size) != 0;
  }
  CU_ASSERT_EQUAL(bad, 0);
  free(c.states);
  tc_replay_free(c.rp);
  return c.switches;
}

static void test_engine(void) {
  check_engine(record("plant", "plant64", NULL));
  /* mmap, munmap, brk, a loader and libc: maps come and go */
  check_engine(record("dyn", "dyn64", NULL));
  check_engine(record("arch-loop-arm64", "loop-arm64", "300"));
  /* two threads: every switch back to a thread it had seen */
  CU_ASSERT(check_engine(record("threads", "threads2-64", NULL)) >= 2);
}

/* Threads as gdb threads: at the worker's breakpoint `info threads` lists
 * both (main in clock_nanosleep, where it was switched out), main's
 * backtrace reaches main(); stepping the worker; after the worker's exit
 * only main is left; reverse-continue brings the worker back. */
static void test_threads(void) {
  const char *t = record("threads", "threads2-64", NULL);
  char *out =
      gdb_run(t, tu_guest("threads2-64"),
              "break work\ncontinue\necho @@one\\n\ninfo threads\n"
              "thread 1\nbt\nthread 2\nprintf \"@@pc=%lx\\n\", $pc\n"
              "stepi\nprintf \"@@pc=%lx\\n\", $pc\n"
              "reverse-stepi\nprintf \"@@pc=%lx\\n\", $pc\n"
              "delete\ncontinue\necho @@two\\n\ninfo threads\necho @@end\\n\n"
              "break work\nreverse-continue\necho @@three\\n\n"
              "info threads\n");
  const char *one = strstr(out, "@@one");
  const char *two = strstr(out, "@@two");
  const char *three = strstr(out, "@@three");
  const char *two_end = strstr(out, "@@end");
  CU_ASSERT_FATAL(one && two && three && two_end);
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "hit Breakpoint 1, "));
  CU_ASSERT_PTR_NOT_NULL(strstr(one, "Thread 1000"));
  CU_ASSERT_PTR_NOT_NULL(strstr(one, "Thread 1001"));
  CU_ASSERT(strstr(one, "Thread 1001") < two);
  CU_ASSERT_PTR_NOT_NULL(strstr(one, " in main ()"));
  CU_ASSERT(strstr(one, " in main ()") < two);
  /* the worker steps and steps back */
  CU_ASSERT_NOT_EQUAL(at_val(out, "pc", 1), at_val(out, "pc", 0));
  CU_ASSERT_EQUAL(at_val(out, "pc", 2), at_val(out, "pc", 0));
  /* at the end only main; back at the breakpoint, both again */
  CU_ASSERT_PTR_NOT_NULL(strstr(two, "Thread 1000"));
  CU_ASSERT(!strstr(two, "Thread 1001") ||
            strstr(two, "Thread 1001") > two_end);
  CU_ASSERT_PTR_NOT_NULL(strstr(three, "Thread 1001"));
  CU_ASSERT_PTR_NOT_NULL(strstr(three, "Thread 1000"));
  free(out);
}

/* Runs against the reader: breakpoints at sampled pcs and write watches on
 * sampled stored bytes, from the start forwards and from the end
 * backwards, stop where the instruction list says (the first / last
 * instruction at that pc; after the first store / at the last one). The
 * intervals' filters skip most of the trace, so a wrong filter shows. */
typedef struct run_truth {
  uint64_t *pc;
  size_t n, cap;
  struct {
    uint64_t index, addr;
  } w[4096];
  size_t nw;
} run_truth;

static int truth_sink(void *ctx, const tc_event *ev, tc_error *err) {
  (void)err;
  run_truth *t = ctx;
  const tc_mem_access *m = NULL;
  uint32_t nm = 0;
  uint64_t index = 0;
  if (ev->kind == TC_EV_INSN) {
    if (t->n == t->cap) {
      t->cap = t->cap ? t->cap * 2 : 4096;
      t->pc = realloc(t->pc, t->cap * sizeof *t->pc);
    }
    t->pc[t->n++] = ev->u.insn.pc;
    m = ev->u.insn.mem;
    nm = ev->u.insn.nmem;
    index = ev->u.insn.index;
  } else if (ev->kind == TC_EV_SYSCALL) {
    m = ev->u.sys.mem;
    nm = ev->u.sys.nmem;
    index = ev->u.sys.insn_index;
  }
  for (uint32_t k = 0; k < nm && t->nw < 4096; k++)
    if (m[k].kind == TC_MEM_WRITE && (index * 7 + k) % 13 == 0) {
      t->w[t->nw].index = index;
      t->w[t->nw].addr = m[k].addr + m[k].size / 2;
      t->nw++;
    }
  return 0;
}

/* Does instruction i store into byte a (any access of it, syscall writes
 * included)? Found by reading the trace again: the truth of one watch. */
typedef struct store_scan {
  uint64_t addr, first, last;
  int seen;
} store_scan;

static int store_sink(void *ctx, const tc_event *ev, tc_error *err) {
  (void)err;
  store_scan *sc = ctx;
  const tc_mem_access *m = NULL;
  uint32_t nm = 0;
  uint64_t index = 0;
  if (ev->kind == TC_EV_INSN) {
    m = ev->u.insn.mem;
    nm = ev->u.insn.nmem;
    index = ev->u.insn.index;
  } else if (ev->kind == TC_EV_SYSCALL) {
    m = ev->u.sys.mem;
    nm = ev->u.sys.nmem;
    index = ev->u.sys.insn_index;
  } else if (ev->kind == TC_EV_SIGNAL) {
    m = ev->u.sig.mem;
    nm = ev->u.sig.nmem;
    index = ev->u.sig.insn_index;
  }
  for (uint32_t k = 0; k < nm; k++)
    if (m[k].kind == TC_MEM_WRITE && sc->addr >= m[k].addr &&
        sc->addr - m[k].addr < m[k].size) {
      if (!sc->seen)
        sc->first = index;
      sc->last = index;
      sc->seen = 1;
    }
  return 0;
}

static void check_runs(const char *t) {
  tc_error err = {{0}};
  run_truth *tr = calloc(1, sizeof *tr);
  CU_ASSERT_EQUAL_FATAL(tc_read_trace(t, NULL, truth_sink, tr, &err), 0);
  tc_replay *rp = tc_replay_open(t, NULL, 512, &err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(rp);
  uint64_t n = tc_replay_insns(rp);
  CU_ASSERT_EQUAL(n, tr->n);
  int checked = 0;
  for (size_t j = 1; j < tr->n && checked < 40; j += tr->n / 40 + 1) {
    uint64_t pc = tr->pc[j];
    uint64_t first = UINT64_MAX, last = UINT64_MAX;
    for (size_t q = 1; q < tr->n; q++)
      if (tr->pc[q] == pc) {
        if (first == UINT64_MAX)
          first = q;
        last = q;
      }
    tc_replay_stops s = {.pcs = &pc, .npcs = 1};
    tc_replay_hit h;
    CU_ASSERT_EQUAL(tc_replay_seek(rp, 0, &err), 0);
    CU_ASSERT_EQUAL(tc_replay_run(rp, 0, &s, &h, &err), 0);
    CU_ASSERT_EQUAL(h.why, TC_REPLAY_BREAK);
    CU_ASSERT_EQUAL(tc_replay_pos(rp), first);
    CU_ASSERT_EQUAL(tc_replay_seek(rp, n, &err), 0);
    CU_ASSERT_EQUAL(tc_replay_run(rp, 1, &s, &h, &err), 0);
    CU_ASSERT_EQUAL(h.why, TC_REPLAY_BREAK);
    CU_ASSERT_EQUAL(tc_replay_pos(rp), last);
    checked++;
  }
  CU_ASSERT(checked >= 20);
  int watched = 0;
  for (size_t j = 0; j < tr->nw && watched < 12; j += tr->nw / 12 + 1) {
    store_scan sc = {.addr = tr->w[j].addr};
    CU_ASSERT_EQUAL(tc_read_trace(t, NULL, store_sink, &sc, &err), 0);
    CU_ASSERT_FATAL(sc.seen);
    tc_replay_watch w = {.addr = sc.addr, .len = 1, .kinds = TC_MEM_WRITE};
    tc_replay_stops s = {.watches = &w, .nwatches = 1};
    tc_replay_hit h;
    CU_ASSERT_EQUAL(tc_replay_seek(rp, 0, &err), 0);
    CU_ASSERT_EQUAL(tc_replay_run(rp, 0, &s, &h, &err), 0);
    CU_ASSERT_EQUAL(h.why, TC_REPLAY_WATCH);
    CU_ASSERT_EQUAL(tc_replay_pos(rp), sc.first + 1); /* after it */
    CU_ASSERT_EQUAL(tc_replay_seek(rp, n, &err), 0);
    CU_ASSERT_EQUAL(tc_replay_run(rp, 1, &s, &h, &err), 0);
    CU_ASSERT_EQUAL(h.why, TC_REPLAY_WATCH);
    CU_ASSERT_EQUAL(tc_replay_pos(rp), sc.last); /* at it */
    watched++;
  }
  CU_ASSERT(watched >= 6);
  tc_replay_free(rp);
  free(tr->pc);
  free(tr);
}

static void test_runs(void) {
  check_runs(record("plant", "plant64", NULL));
  check_runs(record("dyn", "dyn64", NULL));
}

/* A run asks interrupted() now and then and stops where it got to. */
static int always(void *ctx) {
  (*(int *)ctx)++;
  return 1;
}

static void test_interrupt(void) {
  const char *t = record("loop", "loop64", "100000");
  tc_error err = {{0}};
  tc_replay *rp = tc_replay_open(t, NULL, 0, &err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(rp);
  uint64_t n = tc_replay_insns(rp);
  CU_ASSERT(n > 600000);
  int asked = 0;
  uint64_t nowhere = 1;
  tc_replay_stops s = {
      .pcs = &nowhere, .npcs = 1, .interrupted = always, .ctx = &asked};
  tc_replay_hit h;
  CU_ASSERT_EQUAL(tc_replay_run(rp, 0, &s, &h, &err), 0);
  CU_ASSERT_EQUAL(h.why, TC_REPLAY_INTERRUPTED);
  CU_ASSERT_EQUAL(tc_replay_pos(rp), 1u << 18);
  CU_ASSERT_EQUAL(asked, 1);
  /* backwards from the end: stopped at a checkpoint short of 0 */
  CU_ASSERT_EQUAL(tc_replay_seek(rp, n, &err), 0);
  CU_ASSERT_EQUAL(tc_replay_run(rp, 1, &s, &h, &err), 0);
  CU_ASSERT_EQUAL(h.why, TC_REPLAY_INTERRUPTED);
  CU_ASSERT(tc_replay_pos(rp) > 0 && tc_replay_pos(rp) < n);
  CU_ASSERT_EQUAL(tc_replay_pos(rp) % TC_REPLAY_INTERVAL, 0);
  /* without it, the same run goes to the start: END */
  s.interrupted = NULL;
  CU_ASSERT_EQUAL(tc_replay_run(rp, 1, &s, &h, &err), 0);
  CU_ASSERT_EQUAL(h.why, TC_REPLAY_END);
  CU_ASSERT_EQUAL(tc_replay_pos(rp), 0);
  tc_replay_free(rp);
}

/* --help names the command's options. */
static void test_help(void) {
  char *out = NULL;
  CU_ASSERT_EQUAL(tu_runf(&out, 1, "%s gdbserver --help", TC_CLI), 0);
  CU_ASSERT_PTR_NOT_NULL(strstr(out ? out : "", "--listen HOST:PORT"));
  CU_ASSERT_PTR_NOT_NULL(strstr(out ? out : "", "monitor seek N"));
  free(out);
  CU_ASSERT_EQUAL(tu_runf(&out, 1, "%s gdbserver", TC_CLI), 2);
  free(out);
  /* a wrong option: the error and a one-line hint (issue 36) */
  CU_ASSERT_EQUAL(tu_runf(&out, 1, "%s gdbserver --bogus x.tct", TC_CLI), 2);
  int lines = 0;
  for (const char *p = out ? out : ""; *p; p++)
    lines += *p == '\n';
  CU_ASSERT(lines <= 2);
  CU_ASSERT_PTR_NOT_NULL(strstr(out ? out : "", "unrecognized option"));
  CU_ASSERT_PTR_NOT_NULL(strstr(out ? out : "", "gdbserver --help"));
  free(out);
  CU_ASSERT_EQUAL(
      tu_runf(&out, 1, "%s gdbserver %s", TC_CLI, tu_tmp("no-such.tct")), 1);
  free(out);
}

/* The same state and memory at pos in two replays (len bytes at sp). */
static int same_at(tc_replay *a, tc_replay *b, uint64_t pos) {
  tc_error err = {{0}};
  if (tc_replay_seek(a, pos, &err) || tc_replay_seek(b, pos, &err))
    return 0;
  const tc_arch *arch = tc_replay_arch(a);
  if (memcmp(tc_replay_state(a), tc_replay_state(b), arch->state_size) ||
      tc_replay_tid(a) != tc_replay_tid(b))
    return 0;
  uint64_t sp = tc_state_get(arch, tc_replay_state(a), arch->sp_reg);
  uint8_t x[256], y[256];
  size_t nx = tc_replay_read(a, sp - 64, sizeof x, x);
  size_t ny = tc_replay_read(b, sp - 64, sizeof y, y);
  return nx == ny && nx > 0 && memcmp(x, y, nx) == 0;
}

/* A run from `from` to a breakpoint at pc (forwards or backwards): where
 * it stops. */
static uint64_t run_to(tc_replay *rp, uint64_t from, int back, uint64_t pc) {
  tc_error err = {{0}};
  tc_replay_stops s = {.pcs = &pc, .npcs = 1};
  tc_replay_hit h;
  if (tc_replay_seek(rp, from, &err) || tc_replay_run(rp, back, &s, &h, &err))
    return UINT64_MAX;
  return tc_replay_pos(rp);
}

static int count_diff(tc_replay *a, tc_replay *b, uint64_t n, int samples) {
  int bad = 0;
  uint64_t x = 99;
  for (int k = 0; k < samples; k++)
    bad += !same_at(a, b, tu_xorshift(&x) % (n + 1));
  return bad;
}

/* Records guest (args) with chunks of `chunk` instructions into NAME.tct
 * (no index file beside it); its path. */
static const char *record_chunks(const char *name, const char *guest,
                                 const char *args, int chunk) {
  static char path[8][4200];
  static int n;
  char *out = NULL, *p = path[n++ % 8];
  snprintf(p, sizeof path[0], "%s.tct", tu_tmp(name));
  int st = tu_runf(&out, 1,
                   "%s record -q -f tct -O tct.chunk=%d -o %s -- %s %s "
                   ">/dev/null && rm -f %s.gdbidx",
                   TC_CLI, chunk, tu_tmp(name), tu_guest(guest),
                   args ? args : "", p);
  CU_ASSERT(st >= 0 && st < 100);
  if (st < 0 || st >= 100)
    fprintf(stderr, "\nrecord %s: %s\n", guest, out ? out : "");
  free(out);
  return p;
}

/* Far seeks (issue 33): a replay indexed as asked that is never asked to
 * index (every seek past chunk 0 rebuilds its position from the chunk's
 * events and the chunk memory summaries) against the recording itself,
 * as the engine check does, at about 600 instructions; whole pages
 * (stack, code, every page a map or store touched) against a replay
 * indexed whole at sampled positions; then a run from a far position. */
typedef struct far_check {
  tc_replay *rp;
  const tc_arch *arch;
  uint64_t insns, seeks, bytes, stride, next;
  int mismatches;
  uint64_t pages[512];
  size_t npages;
} far_check;

static void far_page_note(far_check *c, uint64_t addr, uint64_t size) {
  for (uint64_t pn = addr >> 12; size && pn <= (addr + size - 1) >> 12; pn++) {
    size_t i = 0;
    while (i < c->npages && c->pages[i] != pn)
      i++;
    if (i == c->npages && c->npages < 512)
      c->pages[c->npages++] = pn;
    if (pn - (addr >> 12) > 64)
      break; /* a large map: its first pages */
  }
}

static int far_sink(void *ctx, const tc_event *ev, tc_error *err) {
  (void)err;
  far_check *c = ctx;
  tc_error e = {{0}};
  if (ev->kind == TC_EV_MAP || ev->kind == TC_EV_UNMAP)
    far_page_note(c, ev->u.map.addr, ev->u.map.size);
  if (ev->kind != TC_EV_INSN)
    return 0;
  const tc_insn_event *in = &ev->u.insn;
  for (uint32_t k = 0; k < in->nmem; k++)
    far_page_note(c, in->mem[k].addr, in->mem[k].size);
  c->insns++;
  /* about every stride-th instruction, the first one from there that
   * accesses memory (a fixed stride could sample few of those: which
   * ones it hits moves with the guest's path, on its stack) */
  if (in->index < c->next || (!in->nmem && in->index < c->next + c->stride))
    return 0;
  c->next = in->index + c->stride;
  c->seeks++;
  if (tc_replay_seek(c->rp, in->index, &e) ||
      memcmp(tc_replay_state(c->rp), in->state_before, c->arch->state_size) ||
      tc_replay_tid(c->rp) != in->tid) {
    if (c->mismatches++ < 3)
      fprintf(stderr, "\nfar: registers at %" PRIu64 " differ\n", in->index);
    return 0;
  }
  for (uint32_t k = 0; k < in->nmem; k++) {
    uint8_t got[256];
    size_t n = in->mem[k].size < sizeof got ? in->mem[k].size : sizeof got;
    if (tc_replay_read(c->rp, in->mem[k].addr, n, got) != n ||
        memcmp(got, in->mem[k].before, n)) {
      if (c->mismatches++ < 3)
        fprintf(stderr, "\nfar: memory 0x%" PRIx64 " at %" PRIu64 "\n",
                in->mem[k].addr, in->index);
    }
    c->bytes += n;
  }
  return 0;
}

/* Every byte of page pn the same (known or not) in both replays. */
static int same_page(tc_replay *a, tc_replay *b, uint64_t pn) {
  uint8_t x[4096], y[4096];
  for (size_t off = 0; off < 4096;) {
    size_t nx = tc_replay_read(a, pn * 4096 + off, 4096 - off, x);
    size_t ny = tc_replay_read(b, pn * 4096 + off, 4096 - off, y);
    if (nx != ny || memcmp(x, y, nx))
      return 0;
    off += nx + 1; /* past an unknown byte */
  }
  return 1;
}

static void check_far(const char *t, uint64_t min_insns) {
  tc_error err = {{0}};
  far_check c = {0};
  tc_replay_opts o = {.interval = 512};
  c.rp = tc_replay_open_opts(t, NULL, &o, &err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(c.rp);
  c.arch = tc_replay_arch(c.rp);
  uint64_t n = tc_replay_insns(c.rp);
  CU_ASSERT(n >= min_insns);
  c.stride = n / 600 > 7 ? n / 600 : 7; /* about 600 seeks */
  c.next = 3;
  CU_ASSERT_EQUAL(tc_read_trace(t, NULL, far_sink, &c, &err), 0);
  CU_ASSERT_EQUAL(c.insns, n);
  CU_ASSERT_EQUAL(c.mismatches, 0);
  CU_ASSERT(c.bytes > 1000);
  /* no index was built past the first chunk: the seeks were far ones */
  CU_ASSERT(tc_replay_indexed(c.rp) < n / 4);
  /* whole pages against the whole index, the end included */
  tc_replay_opts eager = {.interval = 512, .eager = 1};
  tc_replay *ref = tc_replay_open_opts(t, NULL, &eager, &err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(ref);
  uint64_t x = 777;
  int bad = 0, checked = 0;
  for (int k = 0; k < 6; k++) {
    uint64_t pos = k == 0 ? n : n / 2 + tu_xorshift(&x) % (n / 2);
    CU_ASSERT_EQUAL(tc_replay_seek(c.rp, pos, &err), 0);
    CU_ASSERT_EQUAL(tc_replay_seek(ref, pos, &err), 0);
    CU_ASSERT_EQUAL(
        memcmp(tc_replay_state(c.rp), tc_replay_state(ref), c.arch->state_size),
        0);
    uint64_t sp = tc_state_get(c.arch, tc_replay_state(ref), c.arch->sp_reg);
    uint64_t pc = tc_state_get(c.arch, tc_replay_state(ref), c.arch->pc_reg);
    bad += !same_page(c.rp, ref, sp >> 12) + !same_page(c.rp, ref, pc >> 12);
    for (size_t i = 0; i < c.npages; i++)
      bad += !same_page(c.rp, ref, c.pages[i]);
    checked += 2 + (int)c.npages;
  }
  CU_ASSERT_EQUAL(bad, 0);
  CU_ASSERT(checked > 50);
  CU_ASSERT(tc_replay_indexed(c.rp) < n / 4);
  /* a run from a far position goes through the chunk filters (nothing
   * indexed) and stops where the whole index's does */
  CU_ASSERT_EQUAL_FATAL(tc_replay_seek(ref, n / 4, &err), 0);
  uint64_t pc = tc_state_get(c.arch, tc_replay_state(ref), c.arch->pc_reg);
  CU_ASSERT_EQUAL(run_to(c.rp, n - 10, 1, pc), run_to(ref, n - 10, 1, pc));
  CU_ASSERT(tc_replay_indexed(c.rp) < n / 4);
  CU_ASSERT(same_at(c.rp, ref, n / 3));
  tc_replay_free(ref);
  tc_replay_free(c.rp);
}

/* A far seek in the first chunk (a long way from the start of a trace of
 * one chunk): from the trace's start, no summary needed. */
static void check_far_first_chunk(void) {
  const char *t = record_chunks("far-one", "loop64", "270000", 1 << 22);
  tc_error err = {{0}};
  tc_replay_opts o = {.interval = 512}, eager = {.interval = 512, .eager = 1};
  tc_replay *lz = tc_replay_open_opts(t, NULL, &o, &err);
  tc_replay *ref = tc_replay_open_opts(t, NULL, &eager, &err);
  CU_ASSERT_FATAL(lz && ref);
  uint64_t n = tc_replay_insns(ref);
  CU_ASSERT(n > (2u << 20) + 1000); /* past replay.c's RP_FAR_MIN */
  const tc_arch *a = tc_replay_arch(ref);
  for (uint64_t pos = n - 3; pos <= n; pos++) {
    CU_ASSERT(same_at(lz, ref, pos));
    CU_ASSERT(tc_replay_indexed(lz) < 1000); /* far */
    uint64_t sp = tc_state_get(a, tc_replay_state(ref), a->sp_reg);
    CU_ASSERT(same_page(lz, ref, sp >> 12));
    CU_ASSERT(same_page(lz, ref, 0x403000 >> 12)); /* loop64's sink */
  }
  tc_replay_free(lz);
  tc_replay_free(ref);
}

static void test_far_seek(void) {
  check_far_first_chunk();
  /* maps and unmaps come and go (mmap, munmap, brk, a loader and libc) */
  check_far(record_chunks("far-dyn", "dyn64", NULL, 2048), 50000);
  /* two threads: chunks start at switches too */
  check_far(record_chunks("far-threads", "threads2-64", NULL, 2048), 200000);
  check_far(record_chunks("far-arm64", "loop-arm64", "3000", 1024), 20000);
}

/* Runs through the chunk filters (issue 33): a replay with nothing
 * indexed runs from far positions (forwards and backwards, breakpoints,
 * write, read and access watches, both watch conventions, steps) and
 * stops exactly where an index built whole does, indexing nothing. The
 * same runs on a copy whose filters all say "nothing here" (each TCMF
 * frame's zstd frame replaced by one of empty sets, same size) must
 * differ: the runs do rely on the filters. */

/* How many of the sampled runs of `t` differ from those of `ref`. */
static int chunk_run_diffs(const char *t, tc_replay *ref, int *runs) {
  tc_error err = {{0}};
  tc_replay_opts o = {.interval = 512};
  tc_replay *lz = tc_replay_open_opts(t, NULL, &o, &err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(lz);
  const tc_arch *a = tc_replay_arch(ref);
  uint64_t n = tc_replay_insns(ref), x = 4242;
  int diffs = 0;
  *runs = 0;
  for (int k = 0; k < 36; k++) {
    /* a stop taken from the recording: a pc or an accessed byte at a
     * random position */
    uint64_t at = n / 8 + tu_xorshift(&x) % (n - n / 8);
    CU_ASSERT_EQUAL_FATAL(tc_replay_seek(ref, at, &err), 0);
    uint64_t pc = tc_state_get(a, tc_replay_state(ref), a->pc_reg);
    uint64_t sp = tc_state_get(a, tc_replay_state(ref), a->sp_reg);
    tc_replay_watch w = {
        .addr = sp - 8 * (k % 4), .len = 1 + k % 8, .kinds = 1 + k % 3};
    tc_replay_stops s = {0};
    if (k % 3 == 0) {
      s.pcs = &pc;
      s.npcs = 1;
    } else {
      s.watches = &w;
      s.nwatches = 1;
      s.watch_before = k % 2;
    }
    if (k % 9 == 4) { /* a step of the thread there */
      s = (tc_replay_stops){.step = 1, .step_tid = tc_replay_tid(ref)};
    }
    for (int back = 0; back < 2; back++) {
      uint64_t from = back ? n - tu_xorshift(&x) % (n / 4)
                           : n / 4 + tu_xorshift(&x) % (n / 4);
      tc_replay_hit h1, h2;
      int r1 = tc_replay_seek(ref, from, &err) ||
               tc_replay_run(ref, back, &s, &h1, &err);
      int r2 = tc_replay_seek(lz, from, &err) ||
               tc_replay_run(lz, back, &s, &h2, &err);
      CU_ASSERT_FALSE(r1 || r2);
      (*runs)++;
      if (r1 || r2 || tc_replay_pos(ref) != tc_replay_pos(lz) ||
          h1.why != h2.why || h1.index != h2.index || h1.tid != h2.tid ||
          (h1.why == TC_REPLAY_WATCH &&
           (h1.addr != h2.addr || h1.kind != h2.kind)) ||
          memcmp(tc_replay_state(ref), tc_replay_state(lz), a->state_size))
        diffs++;
      /* and memory there: the stack and the watched bytes */
      uint8_t m1[512], m2[512];
      uint64_t sp2 = tc_state_get(a, tc_replay_state(ref), a->sp_reg) - 256;
      size_t n1 = tc_replay_read(ref, sp2, sizeof m1, m1);
      size_t n2 = tc_replay_read(lz, sp2, sizeof m2, m2);
      if (n1 != n2 || !n1 || memcmp(m1, m2, n1))
        diffs++;
      n1 = tc_replay_read(ref, w.addr - 64, 128, m1);
      n2 = tc_replay_read(lz, w.addr - 64, 128, m2);
      if (n1 != n2 || memcmp(m1, m2, n1))
        diffs++;
    }
  }
  /* nothing indexed past the first chunks: the runs went through them */
  CU_ASSERT(tc_replay_indexed(lz) < n / 4);
  tc_replay_free(lz);
  return diffs;
}

/* A copy of tct file t with every chunk's filters emptied. */
static const char *empty_filters(const char *t, int *frames) {
  static char out[4200];
  snprintf(out, sizeof out, "%s.nofilt.tct", t);
  FILE *f = fopen(t, "rb");
  CU_ASSERT_PTR_NOT_NULL_FATAL(f);
  fseek(f, 0, SEEK_END);
  long size = ftell(f);
  fseek(f, 0, SEEK_SET);
  uint8_t *b = malloc((size_t)size);
  CU_ASSERT_FATAL(b && fread(b, 1, (size_t)size, f) == (size_t)size);
  fclose(f);
  *frames = 0;
  for (long i = 12; i + 4 <= size; i++) {
    if (memcmp(b + i, "TCMF", 4) != 0)
      continue;
    uint32_t s = (uint32_t)b[i - 4] | (uint32_t)b[i - 3] << 8 |
                 (uint32_t)b[i - 2] << 16 | (uint32_t)b[i - 1] << 24;
    long at = i + 4 - 8 - (long)s;
    static const uint8_t magic[4] = {0x5c, 0x2a, 0x4d, 0x18};
    if (at < 0 || memcmp(b + at, magic, 4) != 0 || s < 8 + 22)
      continue;
    /* a raw zstd frame of the body "version 1, no flags, no pcs, no
     * lines", then a skippable frame over the rest */
    static const uint8_t raw[14] = {0x28, 0xb5, 0x2f, 0xfd, 0x20, 5, 0x29,
                                    0,    0,    1,    0,    0,    0, 0};
    uint8_t *z = b + at + 8;
    uint32_t pad = s - 8 - 14 - 8;
    memcpy(z, raw, sizeof raw);
    memcpy(z + 14, (uint8_t[]){0x50, 0x2a, 0x4d, 0x18}, 4);
    for (int k = 0; k < 4; k++)
      z[18 + k] = (uint8_t)(pad >> (8 * k));
    memset(z + 22, 0, pad);
    (*frames)++;
  }
  f = fopen(out, "wb");
  CU_ASSERT_FATAL(f && fwrite(b, 1, (size_t)size, f) == (size_t)size);
  fclose(f);
  free(b);
  return out;
}

static void test_chunk_runs(void) {
  const char *t = record_chunks("runs-dyn", "dyn64", NULL, 2048);
  tc_error err = {{0}};
  tc_replay_opts eager = {.interval = 512, .eager = 1};
  tc_replay *ref = tc_replay_open_opts(t, NULL, &eager, &err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(ref);
  int runs = 0, frames = 0;
  CU_ASSERT_EQUAL(chunk_run_diffs(t, ref, &runs), 0);
  CU_ASSERT(runs >= 72);
  const char *m = empty_filters(t, &frames);
  CU_ASSERT(frames >= 20);
  int bad = chunk_run_diffs(m, ref, &runs);
  CU_ASSERT(bad >= 10);

  tc_replay_free(ref);
}

/* A watch on a word beside a hot one (issue 33): every chunk of hotcold64
 * stores to and loads from the cold word's 64-byte line (the unit of the
 * chunk filters' store sets), but only the first stores to the word and
 * none loads it: the chunk memory summaries know the bytes stored and the
 * load sets are by 8-byte word, so a reverse-continue from the end with
 * nothing indexed decodes next to no chunk (about 58 chunks of 4096
 * instructions: the chunk size is rounded to the keyframe interval) and stops
 * where an index built whole does. */
static void test_chunk_bytes(void) {
  char *out = NULL;
  CU_ASSERT_EQUAL_FATAL(tu_runf(&out, 0, "%s 10", tu_guest("hotcold64")), 0);
  const char *at = out ? strstr(out, "cold at 0x") : NULL;
  CU_ASSERT_PTR_NOT_NULL_FATAL(at);
  uint64_t cold = strtoull(at + 8, NULL, 16);
  free(out);
  const char *t = record_chunks("hotcold", "hotcold64", "40000", 2048);
  tc_error err = {{0}};
  tc_replay_opts lazy = {.interval = 512},
                 eager = {.interval = 512, .eager = 1};
  tc_replay *lz = tc_replay_open_opts(t, NULL, &lazy, &err);
  tc_replay *ref = tc_replay_open_opts(t, NULL, &eager, &err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(lz);
  CU_ASSERT_PTR_NOT_NULL_FATAL(ref);
  uint64_t n = tc_replay_insns(ref);
  /* write watches, then read watches (cold is never read) */
  for (int c = 0; c < 4; c++) {
    int hot = c & 1, reads = c >> 1;
    tc_replay_watch w = {.addr = cold - (hot ? 8 : 0),
                         .len = 8,
                         .kinds = reads ? TC_MEM_READ : TC_MEM_WRITE};
    tc_replay_stops s = {.watches = &w, .nwatches = 1};
    tc_replay_hit h1, h2;
    tc_replay_stats before, after;
    tc_replay_get_stats(lz, &before);
    CU_ASSERT_FALSE(tc_replay_seek(ref, n, &err) ||
                    tc_replay_run(ref, 1, &s, &h1, &err));
    CU_ASSERT_FALSE(tc_replay_seek(lz, n, &err) ||
                    tc_replay_run(lz, 1, &s, &h2, &err));
    tc_replay_get_stats(lz, &after);
    CU_ASSERT_EQUAL(h1.why, reads && !hot ? TC_REPLAY_END : TC_REPLAY_WATCH);
    CU_ASSERT_EQUAL(h2.why, h1.why);
    CU_ASSERT_EQUAL(h2.index, h1.index); /* the watch */
    CU_ASSERT_EQUAL(tc_replay_pos(lz), tc_replay_pos(ref));
    uint64_t skipped = after.chunks_skipped - before.chunks_skipped;
    if (hot) { /* the hot word: its last store or load, in the last chunk */
      CU_ASSERT(tc_replay_pos(ref) > n - 4096);
    } else { /* the cold one: the store at the start (or no load at all),
              * every chunk between skipped although each stored to and
              * loaded from its line */
      CU_ASSERT(tc_replay_pos(ref) < 4096);
      CU_ASSERT(skipped > 40);
      if (skipped <= 40)
        fprintf(stderr,
                "\nhotcold %s: %" PRIu64 " of about %" PRIu64
                " chunks skipped\n",
                reads ? "reads" : "writes", skipped, n / 4096);
    }
  }
  tc_replay_free(lz);
  tc_replay_free(ref);
}

/* A first session's far seek with gdb (no index file, nothing indexed
 * past the seek): registers equal `dump` there, a stored word's value is
 * the store's old bytes as `dump` prints them, and stack words equal a
 * session that indexed the whole trace first (continue to the end). */
static void test_far_seek_gdb(void) {
  const char *t = record_chunks("far-loop", "loop64", "100000", 65536);
  char *json = NULL;
  CU_ASSERT_EQUAL_FATAL(
      tu_runf(&json, 0, "%s dump --json --from 700000 --count 8 %s", TC_CLI, t),
      0);
  /* the first store from 700000 on: its index, address and old bytes */
  const char *w = strstr(json, "\"mem\":[{\"kind\":\"w\"");
  CU_ASSERT_PTR_NOT_NULL_FATAL(w);
  const char *line = w;
  while (line > json && line[-1] != '\n')
    line--;
  const char *ip = strstr(line, "\"index\":");
  const char *ap = strstr(w, "\"addr\":\"");
  const char *op = strstr(w, "\"old\":\"");
  CU_ASSERT_FATAL(ip && ap && op);
  uint64_t pos = strtoull(ip + 8, NULL, 10);
  uint64_t addr = strtoull(ap + 8, NULL, 16), old = 0;
  for (int i = 7; i >= 0; i--) { /* the bytes in address order */
    unsigned b;
    CU_ASSERT_FATAL(sscanf(op + 7 + 2 * i, "%2x", &b) == 1);
    old = old << 8 | b;
  }
  free(json);
  char cmds[1024];
  snprintf(cmds, sizeof cmds,
           "monitor seek %" PRIu64 "\nmaintenance flush register-cache\n"
           "monitor info\necho @@regs\\n\ninfo registers\necho @@done\\n\n"
           "printf \"@@m=%%lx\\n\", *(unsigned long *)0x%" PRIx64 "\n"
           "printf \"@@s=%%lx\\n\", *(unsigned long *)$sp\n"
           "printf \"@@s=%%lx\\n\", *(unsigned long *)($sp + 8)\n"
           "printf \"@@s=%%lx\\n\", *(unsigned long *)($sp + 24)\n",
           pos, addr);
  char *out = gdb_run(t, NULL, cmds);
  char want[64];
  snprintf(want, sizeof want, "position %" PRIu64 " of ", pos);
  CU_ASSERT_PTR_NOT_NULL(strstr(out, want));
  const char *ix = strstr(out, "indexed so far: instructions 0 to ");
  CU_ASSERT_PTR_NOT_NULL(ix);
  CU_ASSERT(ix && strtoull(ix + 34, NULL, 10) < pos);
  CU_ASSERT(check_info_registers(out, t, pos, "x86_64") >= 24);
  CU_ASSERT_EQUAL(at_val(out, "m", 0), old);
  /* the whole index first (--stats builds it into the index file, which
   * the next session reads) */
  char *st = NULL;
  CU_ASSERT_EQUAL(tu_runf(&st, 1, "%s gdbserver --stats %s", TC_CLI, t), 0);
  free(st);
  char *ref = gdb_run(t, NULL, cmds);
  CU_ASSERT_PTR_NULL(strstr(ref, "indexed so far"));
  CU_ASSERT_EQUAL(at_val(ref, "m", 0), old);
  for (int i = 0; i < 3; i++) {
    CU_ASSERT_NOT_EQUAL(at_val(out, "s", i), UINT64_MAX);
    CU_ASSERT_EQUAL(at_val(out, "s", i), at_val(ref, "s", i));
  }
  free(out);
  free(ref);
}

/* The index as far as it is asked (a tct with its footer), and the index
 * file: written when the build is whole, read at the next open (no
 * scan), rebuilt when it is another trace's, another interval's, damaged
 * or not an index; all against an index read whole at open. */
static void test_index_file(void) {
  const char *t = record("dyn", "dyn64", NULL);
  const char *idx = tu_tmp("dyn-test.gdbidx");
  remove(idx);
  tc_error err = {{0}};
  tc_replay_opts eager = {.interval = 512, .eager = 1};
  tc_replay *ref = tc_replay_open_opts(t, NULL, &eager, &err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(ref);
  uint64_t n = tc_replay_insns(ref);
  CU_ASSERT(n > 50000);
  CU_ASSERT_EQUAL(tc_replay_indexed(ref), n);
  const tc_arch *a = tc_replay_arch(ref);
  /* pcs at a quarter and at three quarters */
  CU_ASSERT_EQUAL_FATAL(tc_replay_seek(ref, n / 4, &err), 0);
  uint64_t pc1 = tc_state_get(a, tc_replay_state(ref), a->pc_reg);
  CU_ASSERT_EQUAL_FATAL(tc_replay_seek(ref, n / 4 * 3, &err), 0);
  uint64_t pc3 = tc_state_get(a, tc_replay_state(ref), a->pc_reg);
  uint64_t back1 = run_to(ref, n / 2, 1, pc1);
  uint64_t fwd3 = run_to(ref, n / 2, 0, pc3);
  CU_ASSERT(back1 <= n / 4 || back1 < n / 2);
  CU_ASSERT(fwd3 > n / 2 && fwd3 <= n / 4 * 3);

  /* built as asked: nothing at open, then to the middle */
  tc_replay_opts o = {.interval = 512, .index_path = idx};
  tc_replay *lz = tc_replay_open_opts(t, NULL, &o, &err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(lz);
  CU_ASSERT_EQUAL(tc_replay_insns(lz), n);
  CU_ASSERT(tc_replay_indexed(lz) < n / 100);
  CU_ASSERT_EQUAL(tc_replay_index_state(lz), TC_REPLAY_INDEX_BUILT);
  CU_ASSERT(same_at(lz, ref, n / 2));
  CU_ASSERT(tc_replay_indexed(lz) >= n / 2 && tc_replay_indexed(lz) < n);
  /* a reverse run over the part indexed so far, a forward run past it */
  CU_ASSERT_EQUAL(run_to(lz, n / 2, 1, pc1), back1);
  CU_ASSERT(tc_replay_indexed(lz) < n);
  CU_ASSERT_EQUAL(run_to(lz, n / 2, 0, pc3), fwd3);
  CU_ASSERT_EQUAL(tc_replay_build(lz, UINT64_MAX, &err), 0);
  CU_ASSERT_EQUAL(tc_replay_indexed(lz), n);
  CU_ASSERT_EQUAL(tc_replay_index_state(lz), TC_REPLAY_INDEX_SAVED);
  CU_ASSERT_EQUAL(count_diff(lz, ref, n, 100), 0);
  tc_replay_free(lz);
  struct stat st;
  CU_ASSERT_EQUAL_FATAL(stat(idx, &st), 0);

  /* read back: whole at once, the same answers */
  tc_replay *rd = tc_replay_open_opts(t, NULL, &o, &err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(rd);
  CU_ASSERT_EQUAL(tc_replay_index_state(rd), TC_REPLAY_INDEX_READ);
  CU_ASSERT_PTR_NULL(tc_replay_index_note(rd));
  CU_ASSERT_EQUAL(tc_replay_indexed(rd), n);
  CU_ASSERT_EQUAL(count_diff(rd, ref, n, 300), 0);
  CU_ASSERT_EQUAL(run_to(rd, n / 2, 1, pc1), back1);
  CU_ASSERT_EQUAL(run_to(rd, n / 2, 0, pc3), fwd3);
  tc_replay_free(rd);

  /* another interval: rebuilt (and written for it) */
  tc_replay_opts o2 = {.interval = 1024, .index_path = idx};
  rd = tc_replay_open_opts(t, NULL, &o2, &err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(rd);
  CU_ASSERT_EQUAL(tc_replay_index_state(rd), TC_REPLAY_INDEX_BUILT);
  CU_ASSERT(tc_replay_index_note(rd) &&
            strstr(tc_replay_index_note(rd), "another trace"));
  CU_ASSERT_EQUAL(count_diff(rd, ref, n, 50), 0);
  tc_replay_free(rd);

  /* damaged: a byte of the tables, then the file cut; each rebuilt */
  const char *dmg = tu_tmp("dyn-damaged.gdbidx");
  size_t len = 0;
  uint8_t *bytes = tu_read_file(idx, &len);
  CU_ASSERT_FATAL(bytes && len > 8192);
  tc_replay_opts od = {.interval = 512, .index_path = dmg};
  for (int k = 0; k < 3; k++) {
    if (k == 0) { /* a good copy first: read */
      CU_ASSERT_EQUAL(tu_write_file(dmg, bytes, len), 0);
    } else if (k == 1) {
      bytes[len - 100] ^= 0x40;
      CU_ASSERT_EQUAL(tu_write_file(dmg, bytes, len), 0);
    } else {
      CU_ASSERT_EQUAL(tu_write_file(dmg, bytes, len / 2), 0);
    }
    rd = tc_replay_open_opts(t, NULL, &od, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rd);
    const char *note = tc_replay_index_note(rd);
    if (k == 0)
      CU_ASSERT_EQUAL(tc_replay_index_state(rd), TC_REPLAY_INDEX_READ);
    if (k)
      CU_ASSERT(note && strstr(note, "damaged"));
    CU_ASSERT_EQUAL(count_diff(rd, ref, n, 30), 0);
    tc_replay_free(rd);
    remove(dmg);
  }
  /* a damaged log (not hashed: the file is read, answers may be wrong)
   * never makes a seek, a read or a run go out of bounds (ASan builds) */
  free(bytes);
  bytes = tu_read_file(idx, &len);
  CU_ASSERT_FATAL(bytes && len > 8192);
  uint64_t log_len;
  memcpy(&log_len, bytes + 80, 8); /* rp_header.log_len */
  CU_ASSERT_FATAL(log_len > 1000 && log_len < len);
  uint64_t x = 7;
  for (int k = 0; k < 400; k++)
    bytes[4096 + tu_xorshift(&x) % log_len] ^= (uint8_t)(1 + k % 255);
  CU_ASSERT_EQUAL(tu_write_file(dmg, bytes, len), 0);
  rd = tc_replay_open_opts(t, NULL, &od, &err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(rd);
  CU_ASSERT_EQUAL(tc_replay_index_state(rd), TC_REPLAY_INDEX_READ);
  uint8_t buf[256];
  for (int k = 0; k < 300; k++) {
    if (tc_replay_seek(rd, tu_xorshift(&x) % (n + 1), &err) == 0)
      tc_replay_read(rd, tc_state_get(a, tc_replay_state(rd), a->sp_reg),
                     sizeof buf, buf);
  }
  tc_replay_watch w = {tc_state_get(a, tc_replay_state(rd), a->sp_reg), 8,
                       TC_MEM_READ | TC_MEM_WRITE};
  tc_replay_stops sw = {.pcs = &pc1, .npcs = 1, .watches = &w, .nwatches = 1};
  tc_replay_hit h;
  for (int back = 0; back < 2; back++) {
    tc_replay_seek(rd, back ? n : 0, &err);
    tc_replay_run(rd, back, &sw, &h, &err);
    tc_replay_run(rd, back, NULL, &h, &err);
  }
  tc_replay_free(rd);
  remove(dmg);
  free(bytes);
  /* not an index (the trace itself); a place it cannot be written */
  char bad_idx[4200];
  snprintf(bad_idx, sizeof bad_idx, "%s/no-such-dir/x.gdbidx", tu_tmpdir());
  tc_replay_opts on = {.interval = 512, .index_path = t};
  rd = tc_replay_open_opts(t, NULL, &on, &err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(rd);
  CU_ASSERT(tc_replay_index_note(rd) &&
            strstr(tc_replay_index_note(rd), "not an index"));
  CU_ASSERT_EQUAL(count_diff(rd, ref, n, 20), 0);
  tc_replay_free(rd);
  on.index_path = bad_idx;
  rd = tc_replay_open_opts(t, NULL, &on, &err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(rd);
  CU_ASSERT(tc_replay_index_note(rd) &&
            strstr(tc_replay_index_note(rd), "not written"));
  CU_ASSERT_EQUAL(count_diff(rd, ref, n, 20), 0);
  CU_ASSERT_EQUAL(tc_replay_build(rd, UINT64_MAX, &err), 0);
  CU_ASSERT_EQUAL(tc_replay_index_state(rd), TC_REPLAY_INDEX_BUILT);
  tc_replay_free(rd);
  /* the trace itself was not touched */
  CU_ASSERT_EQUAL(stat(t, &st), 0);
  CU_ASSERT(st.st_size > 8192);
  tc_replay_free(ref);
  remove(idx);
}

/* gdb twice on one trace: the first session leaves T.gdbidx (the server
 * indexes the rest while gdb is idle, or as a seek asks), the second reads
 * it and answers the same. */
static void test_index_file_gdb(void) {
  const char *src = record("plant", "plant64", NULL);
  const char *t = tu_tmp("plant-idx.tct");
  size_t len = 0;
  uint8_t *b = tu_read_file(src, &len);
  CU_ASSERT_FATAL(b != NULL);
  CU_ASSERT_EQUAL_FATAL(tu_write_file(t, b, len), 0);
  free(b);
  char idx[4300];
  snprintf(idx, sizeof idx, "%s.gdbidx", t);
  remove(idx);
  const char *cmds = "break plant\ncontinue\nprintf \"@@pc=%lx\\n\", $pc\n"
                     "monitor seek 1000\nmaintenance flush register-cache\n"
                     "printf \"@@sp=%lx\\n\", $sp\n"
                     "printf \"@@pc=%lx\\n\", $pc\nmonitor info\n";
  char *one = gdb_run(t, tu_guest("plant64"), cmds);
  struct stat st;
  CU_ASSERT_EQUAL(stat(idx, &st), 0);
  char *two = gdb_run(t, tu_guest("plant64"), cmds);
  CU_ASSERT_NOT_EQUAL(at_val(one, "pc", 0), UINT64_MAX);
  CU_ASSERT_EQUAL(at_val(one, "pc", 0), at_val(two, "pc", 0));
  CU_ASSERT_EQUAL(at_val(one, "pc", 1), at_val(two, "pc", 1));
  CU_ASSERT_EQUAL(at_val(one, "sp", 0), at_val(two, "sp", 0));
  CU_ASSERT_PTR_NOT_NULL(strstr(two, "position 1000 of"));
  free(one);
  free(two);
  /* the server says where the index came from */
  char *out = NULL;
  CU_ASSERT_EQUAL(
      tu_runf(&out, 1, "%s gdbserver --stdio %s </dev/null", TC_CLI, t), 0);
  CU_ASSERT_PTR_NOT_NULL(strstr(out ? out : "", "index read from its file"));
  free(out);
  CU_ASSERT_EQUAL(tu_runf(&out, 1,
                          "%s gdbserver --no-index --stdio %s </dev/null",
                          TC_CLI, t),
                  0);
  CU_ASSERT_PTR_NULL(strstr(out ? out : "", "index read from its file"));
  free(out);
  remove(idx);
}

/* Range stepping (vCont;r): `next` and `step` through crackme64's compare
 * loop (built with -g) send vCont;r, and stop where the same commands
 * with `set range-stepping off` (one vCont;s per instruction) do; a
 * breakpoint inside the range stops it. */
static void test_range_step(void) {
  const char *t = record("crackme", "crackme64", "open-sesame");
  static const char steps[] =
      "break check\ncontinue\n"
      "next\nprintf \"@@pc=%lx\\n\", $pc\nnext\nprintf \"@@pc=%lx\\n\", $pc\n"
      "next\nprintf \"@@pc=%lx\\n\", $pc\n"
      /* at line 15's first instruction: a breakpoint on its second */
      "python f = gdb.selected_frame(); "
      "gdb.execute('break *%d' % (f.pc() + "
      "f.architecture().disassemble(f.pc())[0]['length']))\n"
      "next\nprintf \"@@pc=%lx\\n\", $pc\ndelete\n"
      "step\nprintf \"@@pc=%lx\\n\", $pc\n"
      "next 6\nprintf \"@@pc=%lx\\n\", $pc\n"
      "finish\nprintf \"@@pc=%lx\\n\", $pc\n"
      "next\nprintf \"@@pc=%lx\\n\", $pc\nmonitor info\n";
  char cmds[2048];
  snprintf(cmds, sizeof cmds, "set debug remote 1\n%s", steps);
  char *on = gdb_run(t, tu_guest("crackme64"), cmds);
  snprintf(cmds, sizeof cmds, "set range-stepping off\nset debug remote 1\n%s",
           steps);
  char *off = gdb_run(t, tu_guest("crackme64"), cmds);
  CU_ASSERT(count_str(on, "vCont;r") >= 3);
  CU_ASSERT_EQUAL(count_str(off, "vCont;r"), 0);
  /* fewer resumes with ranges */
  CU_ASSERT(count_str(on, "Sending packet: $vCont") <
            count_str(off, "Sending packet: $vCont"));
  int same = 0;
  for (int i = 0; i < 8; i++) {
    uint64_t a = at_val(on, "pc", i), b = at_val(off, "pc", i);
    CU_ASSERT_NOT_EQUAL(a, UINT64_MAX);
    CU_ASSERT_EQUAL(a, b);
    same += a == b && a != UINT64_MAX;
  }
  CU_ASSERT_EQUAL(same, 8);
  /* the breakpoint inside `next`'s range stopped it, one byte or more
   * past the line's start */
  CU_ASSERT(count_str(on, "Breakpoint 2, ") >= 1);
  CU_ASSERT(at_val(on, "pc", 3) > at_val(on, "pc", 2));
  CU_ASSERT(at_val(on, "pc", 3) < at_val(on, "pc", 2) + 16);
  free(on);
  free(off);
}

/* threads2-64's clone and its worker's first instruction. */
typedef struct clone_truth {
  uint64_t clone_at, first, exit_at;
  uint32_t tid, main_tid;
  uint8_t state[4096];
  size_t ss;
} clone_truth;

static int clone_sink(void *ctx, const tc_event *ev, tc_error *err) {
  (void)err;
  clone_truth *c = ctx;
  if (ev->kind == TC_EV_SYSCALL && ev->u.sys.name && !c->tid &&
      strncmp(ev->u.sys.name, "clone", 5) == 0 && ev->u.sys.ret > 0) {
    c->clone_at = ev->u.sys.insn_index;
    c->tid = (uint32_t)ev->u.sys.ret;
    c->main_tid = ev->u.sys.tid;
  }
  if (ev->kind == TC_EV_SYSCALL && ev->u.sys.name && c->tid &&
      ev->u.sys.tid == c->tid && strcmp(ev->u.sys.name, "exit") == 0)
    c->exit_at = ev->u.sys.insn_index;
  if (ev->kind == TC_EV_INSN && c->tid && !c->first &&
      ev->u.insn.tid == c->tid) {
    c->first = ev->u.insn.index;
    memcpy(c->state, ev->u.insn.state_before, c->ss);
  }
  return 0;
}

/* A thread made by clone is a gdb thread from the clone on, with the
 * registers it starts with (those of its first instruction, later in
 * the recording), not only from its first instruction; also from an
 * index file. */
static void test_clone_thread(void) {
  const char *t = record("threads", "threads2-64", NULL);
  tc_error err = {{0}};
  clone_truth *c = calloc(1, sizeof *c);
  tc_replay *rp = tc_replay_open(t, NULL, 512, &err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(rp);
  const tc_arch *arch = tc_replay_arch(rp);
  c->ss = arch->state_size;
  CU_ASSERT_EQUAL_FATAL(tc_read_trace(t, NULL, clone_sink, c, &err), 0);
  CU_ASSERT_FATAL(c->tid && c->first > c->clone_at + 1);
  uint32_t tids[8];
  for (int pass = 0; pass < 2; pass++) {
    /* before the clone: one thread; after it, two, the new one with its
     * first registers; at its first instruction it runs */
    CU_ASSERT_EQUAL(tc_replay_seek(rp, c->clone_at, &err), 0);
    CU_ASSERT_EQUAL(tc_replay_threads(rp, tids, 8), 1);
    CU_ASSERT_PTR_NULL(tc_replay_thread_state(rp, c->tid));
    uint64_t mid[] = {c->clone_at + 1, (c->clone_at + c->first) / 2,
                      c->first - 1};
    for (int k = 0; k < 3; k++) {
      CU_ASSERT_EQUAL(tc_replay_seek(rp, mid[k], &err), 0);
      CU_ASSERT_EQUAL(tc_replay_threads(rp, tids, 8), 2);
      CU_ASSERT_EQUAL(tids[1], c->tid);
      const uint8_t *st = tc_replay_thread_state(rp, c->tid);
      CU_ASSERT(st && memcmp(st, c->state, c->ss) == 0);
    }
    CU_ASSERT_EQUAL(tc_replay_seek(rp, c->first, &err), 0);
    CU_ASSERT_EQUAL(tc_replay_tid(rp), c->tid);
    CU_ASSERT_EQUAL(memcmp(tc_replay_state(rp), c->state, c->ss), 0);
    tc_replay_free(rp);
    if (pass == 0) { /* again from an index file */
      const char *idx = tu_tmp("threads-test.gdbidx");
      remove(idx);
      tc_replay_opts o = {.interval = 512, .index_path = idx};
      rp = tc_replay_open_opts(t, NULL, &o, &err);
      CU_ASSERT_PTR_NOT_NULL_FATAL(rp);
      CU_ASSERT_EQUAL(tc_replay_build(rp, UINT64_MAX, &err), 0);
      tc_replay_free(rp);
      rp = tc_replay_open_opts(t, NULL, &o, &err);
      CU_ASSERT_PTR_NOT_NULL_FATAL(rp);
      CU_ASSERT_EQUAL(tc_replay_index_state(rp), TC_REPLAY_INDEX_READ);
    }
  }
  /* gdb: at the clone `info threads` lists main only; right after it,
   * the worker too, whose pc is its first instruction's; at the worker's
   * exit both, after it main only */
  CU_ASSERT_FATAL(c->exit_at > c->first);
  char cmds[1024];
  snprintf(cmds, sizeof cmds,
           "define hookpost-monitor\nmaintenance flush register-cache\nend\n"
           "monitor seek %" PRIu64 "\necho @@before\\n\ninfo threads\n"
           "monitor seek %" PRIu64 "\necho @@threads\\n\ninfo threads\n"
           "thread 2\nprintf \"@@pc=%%lx\\n\", $pc\n"
           "monitor seek %" PRIu64 "\necho @@exit\\n\ninfo threads\n"
           "monitor seek %" PRIu64 "\necho @@gone\\n\ninfo threads\n"
           "echo @@end\\n\n",
           c->clone_at, c->clone_at + 1, c->exit_at, c->exit_at + 1);
  char *out = gdb_run(t, tu_guest("threads2-64"), cmds);
  const char *before = strstr(out, "@@before");
  const char *th = strstr(out, "@@threads");
  const char *ex = strstr(out, "@@exit");
  const char *gone = strstr(out, "@@gone");
  const char *end = strstr(out, "@@end");
  CU_ASSERT_FATAL(before && th && ex && gone && end);
  const char *w = strstr(before, "Thread 1001");
  CU_ASSERT(strstr(before, "Thread 1000") < th);
  CU_ASSERT(w && w > th); /* not listed at the clone */
  CU_ASSERT(strstr(th, "Thread 1001") < ex);
  CU_ASSERT_EQUAL(at_val(out, "pc", 0),
                  tc_state_get(arch, c->state, arch->pc_reg));
  CU_ASSERT(strstr(ex, "Thread 1001") < gone);
  CU_ASSERT(strstr(ex, "Thread 1000") < gone);
  CU_ASSERT(strstr(gone, "Thread 1000") < end);
  w = strstr(gone, "Thread 1001");
  CU_ASSERT(!w || w > end);
  free(out);
  free(c);
}

/* exec64's execve: the position after it (from the trace). */
static int exec_sink(void *ctx, const tc_event *ev, tc_error *err) {
  (void)err;
  uint64_t *at = ctx;
  if (ev->kind == TC_EV_SYSCALL && ev->u.sys.name && !*at &&
      strcmp(ev->u.sys.name, "execve") == 0 && ev->u.sys.ret == 0)
    *at = ev->u.sys.insn_index + 1;
  return 0;
}

/* After an execve the server answers the new program's exec file and
 * auxv, and a run that crosses it stops there with an exec stop reply:
 * gdb loads the new program, and its breakpoint on main is main of the
 * new one. */
static void test_exec(void) {
  char args64[4096], exec64[4096], args[4200];
  snprintf(args64, sizeof args64, "%s", tu_guest("args64"));
  snprintf(exec64, sizeof exec64, "%s", tu_guest("exec64"));
  snprintf(args, sizeof args, "run %s x", args64);
  const char *t = record("exec", "exec64", args);
  uint64_t at = 0;
  tc_error err = {{0}};
  CU_ASSERT_EQUAL_FATAL(tc_read_trace(t, NULL, exec_sink, &at, &err), 0);
  CU_ASSERT_FATAL(at > 1);
  tc_replay *rp = tc_replay_open(t, NULL, 0, &err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(rp);
  CU_ASSERT_EQUAL(tc_replay_build(rp, UINT64_MAX, &err), 0);
  uint64_t xs[4];
  CU_ASSERT_EQUAL(tc_replay_execs(rp, xs, 4), 1);
  CU_ASSERT_EQUAL(xs[0], at);
  tc_replay_free(rp);
  /* the same from an index file */
  const char *idx = tu_tmp("exec-test.gdbidx");
  remove(idx);
  tc_replay_opts o = {.interval = 512, .index_path = idx};
  for (int pass = 0; pass < 2; pass++) {
    rp = tc_replay_open_opts(t, NULL, &o, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rp);
    CU_ASSERT_EQUAL(tc_replay_build(rp, UINT64_MAX, &err), 0);
    CU_ASSERT_EQUAL(tc_replay_index_state(rp),
                    pass ? TC_REPLAY_INDEX_READ : TC_REPLAY_INDEX_SAVED);
    xs[0] = 0;
    CU_ASSERT_EQUAL(tc_replay_execs(rp, xs, 4), 1);
    CU_ASSERT_EQUAL(xs[0], at);
    tc_replay_free(rp);
  }
  /* the exec file by position, to a client without exec events */
  char in[1024] = "", hex[64];
  uint64_t pos[] = {at - 1, at};
  for (int i = 0; i < 2; i++) {
    char cmd[64];
    snprintf(cmd, sizeof cmd, "seek %" PRIu64, pos[i]);
    size_t k = (size_t)snprintf(hex, sizeof hex, "qRcmd,");
    for (const char *q = cmd; *q; q++)
      k += (size_t)snprintf(hex + k, sizeof hex - k, "%02x", (unsigned char)*q);
    add_packet(in, sizeof in, hex);
    add_packet(in, sizeof in, "qXfer:exec-file:read::0,fff");
  }
  CU_ASSERT_EQUAL(tu_write_file(tu_tmp("exec.in"), in, strlen(in)), 0);
  char *raw = NULL;
  CU_ASSERT_EQUAL(tu_runf(&raw, 0, "%s gdbserver -q --stdio %s < %s", TC_CLI, t,
                          tu_tmp("exec.in")),
                  0);
  char *r = replies(raw ? raw : "");
  char want[4200];
  snprintf(want, sizeof want, "\nl%s\n", exec64);
  const char *a = strstr(r, want);
  snprintf(want, sizeof want, "\nl%s\n", args64);
  const char *b = strstr(r, want);
  CU_ASSERT(a && b && a < b);
  free(r);
  free(raw);
  /* gdb: main of exec64, then across the execve to main of args64 */
  char *out = gdb_run(t, exec64,
                      "break main\ncontinue\necho @@one\\n\n"
                      "info inferiors\ninfo auxv\ninfo symbol $pc\n"
                      "printf \"@@main=%lx\\n\", &main\n"
                      "continue\necho @@two\\n\ninfo inferiors\n"
                      "info auxv\ninfo symbol $pc\n"
                      "printf \"@@main=%lx\\n\", &main\necho @@end\\n\n");
  const char *one = strstr(out, "@@one"), *two = strstr(out, "@@two");
  const char *end = strstr(out, "@@end");
  CU_ASSERT_FATAL(one && two && end);
  CU_ASSERT(strstr(one, "main in section .text") &&
            strstr(one, "main in section .text") < two);
  CU_ASSERT(strstr(one, exec64) && strstr(one, exec64) < two);
  snprintf(want, sizeof want, "executing new program: %s", args64);
  CU_ASSERT(strstr(out, want) && strstr(out, want) < two);
  /* main of args64, not exec64's: the symbols were reloaded */
  CU_ASSERT(strstr(two, "main in section .text") &&
            strstr(two, "main in section .text") < end);
  CU_ASSERT_NOT_EQUAL(at_val(out, "main", 0), at_val(out, "main", 1));
  CU_ASSERT_NOT_EQUAL(at_val(out, "main", 1), UINT64_MAX);
  snprintf(want, sizeof want, "\"%s\"", args64); /* AT_EXECFN */
  CU_ASSERT(strstr(two, want) && strstr(two, want) < end);
  CU_ASSERT(!strstr(two, exec64) || strstr(two, exec64) > end);
  free(out);
}

/* `monitor seek` cannot make gdb drop its register cache (qRcmd has no
 * stop reply); a hookpost-monitor that flushes it makes the registers
 * follow each seek, as the docs say. */
static void test_seek_hook(void) {
  const char *t = record("crackme", "crackme64", "open-sesame");
  tc_error err = {{0}};
  tc_replay *rp = tc_replay_open(t, NULL, 0, &err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(rp);
  const tc_arch *a = tc_replay_arch(rp);
  uint64_t pcs[2];
  for (int i = 0; i < 2; i++) {
    CU_ASSERT_EQUAL(tc_replay_seek(rp, 100 + 100 * (uint64_t)i, &err), 0);
    pcs[i] = tc_state_get(a, tc_replay_state(rp), a->pc_reg);
  }
  tc_replay_free(rp);
  CU_ASSERT_NOT_EQUAL(pcs[0], pcs[1]);
  char *out = gdb_run(t, NULL,
                      "printf \"@@pc=%lx\\n\", $pc\n"
                      "define hookpost-monitor\n"
                      "maintenance flush register-cache\nend\n"
                      "monitor seek 100\nprintf \"@@pc=%lx\\n\", $pc\n"
                      "monitor seek 200\nprintf \"@@pc=%lx\\n\", $pc\n");
  CU_ASSERT_EQUAL(at_val(out, "pc", 1), pcs[0]);
  CU_ASSERT_EQUAL(at_val(out, "pc", 2), pcs[1]);
  free(out);
  /* without the hook gdb keeps the registers it had */
  out = gdb_run(t, NULL,
                "printf \"@@pc=%lx\\n\", $pc\n"
                "monitor seek 100\nprintf \"@@pc=%lx\\n\", $pc\n");
  CU_ASSERT_EQUAL(at_val(out, "pc", 1), at_val(out, "pc", 0));
  free(out);
}

int main(void) {
  static const tu_case cases[] = {
      {"engine: state and memory at every instruction", test_engine},
      {"engine: an interrupted run", test_interrupt},
      {"engine: runs to breakpoints and watches", test_runs},
      {"stepi and reverse-stepi", test_step_back},
      {"break and continue", test_break_continue},
      {"watch and reverse-continue", test_watch_reverse},
      {"registers at a seek", test_registers_seek},
      {"the ends of the recording", test_ends},
      {"malformed packets", test_malformed},
      {"random packets", test_random_packets},
      {"truncated trace", test_truncated},
      {"i386", test_i386},
      {"arm64", test_arm64},
      {"armhf", test_armhf},
      {"mipsel", test_mipsel},
      {"mips", test_mips},
      {"dynamic program", test_dynamic},
      {"threads", test_threads},
      {"breakpoint hit count", test_hit_count},
      {"other formats (ucir, tenet)", test_other_format},
      {"listen on a port", test_listen},
      {"help", test_help},
      {"index file, indexed as asked", test_index_file},
      {"index file with gdb", test_index_file_gdb},
      {"range stepping (vCont;r)", test_range_step},
      {"a cloned thread before its first instruction", test_clone_thread},
      {"monitor seek with a hookpost-monitor", test_seek_hook},
      {"an execve: the new program's exec file and auxv", test_exec},
      {"far seeks: memory from the chunk summaries", test_far_seek},
      {"far seek with gdb, first session", test_far_seek_gdb},
      {"runs through the chunk filters", test_chunk_runs},
      {"a watch beside a hot word skips chunks by their bytes",
       test_chunk_bytes},
      {NULL, NULL}};
  return tu_run_suite("gdbserver", cases);
}
