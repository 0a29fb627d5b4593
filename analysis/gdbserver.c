/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The GDB remote serial protocol over a recording, forwards and backwards
 * (tracecorn gdbserver, docs/gdbserver.md). The state at each instruction
 * comes from analysis/replay.h; this file is the protocol: framing
 * (gs_feed), packets (gs_packet) and the loop over a client's descriptors
 * (gs_serve_fds). tools/cmd_gdbserver.c parses options and opens the
 * socket or stdio. */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/gdbserver.h"
#include "analysis/replay.h"
#include "common/arch.h"
#include "common/hex.h"
#include "writers/format.h"
#include "writers/tfile/tfile_tdesc.h"

enum {
  GS_PACKET_SIZE = 0x4000, /* PacketSize we announce (bytes of a packet) */
  GS_MAX_IN = 1 << 20,     /* a longer incoming packet is dropped */
  GS_MAX_POINTS = 4096     /* breakpoints + watchpoints */
};

typedef struct gs_point {
  int type; /* Z type: 0 sw, 1 hw, 2 write, 3 read, 4 access watch */
  uint64_t addr, len;
} gs_point;

typedef struct gs_out {
  char *p;
  size_t n, cap;
  bool oom;
} gs_out;

struct gs_session {
  tc_replay *rp;
  const tc_arch *arch;
  const tf_layout *row;
  tf_packed *regs; /* row's registers in regnum order */
  int *src;        /* tracecorn register of each, -1 = none */
  size_t nregs;
  char *xml;
  size_t xml_len;
  /* The program at the position: the recording's, or the one the latest
   * execve before it started (img: that position, 0 for the first) */
  uint64_t img;
  uint8_t *auxv; /* its initial stack's auxiliary vector, or NULL */
  size_t auxv_len;
  char *exe;        /* an exec'd one's file name (AT_EXECFN), or NULL */
  bool exec_events; /* gdb takes exec stop replies */
  gs_point *points;
  size_t npoints;
  bool noack;
  bool done;           /* k, D: the session ends after this reply */
  uint32_t gtid, ctid; /* Hg, Hc: 0 = the running thread */
  gs_out reply, last;
  /* framing */
  char *in;
  size_t in_n, in_cap;
  int in_state; /* 0 between packets, 1 in a packet, 2/3 checksum chars */
  uint8_t sum;
  char csum[2];
  /* where replies go */
  int (*write)(void *ctx, const char *buf, size_t n);
  int (*interrupted)(void *ctx); /* a Ctrl-C came (NULL: none comes) */
  void *wctx;
  bool write_failed;
};

/* ------------------------------------------------------------ output */

static void out_add(gs_out *o, const void *p, size_t n) {
  if (o->oom)
    return;
  if (o->n + n + 1 > o->cap) {
    size_t cap = o->cap ? o->cap : 256;
    while (cap < o->n + n + 1)
      cap *= 2;
    char *q = realloc(o->p, cap);
    if (!q) {
      o->oom = true;
      return;
    }
    o->p = q;
    o->cap = cap;
  }
  memcpy(o->p + o->n, p, n);
  o->n += n;
  o->p[o->n] = 0;
}

static void out_str(gs_out *o, const char *s) { out_add(o, s, strlen(s)); }

__attribute__((format(printf, 2, 3))) static void
out_fmt(gs_out *o, const char *fmt, ...) {
  char buf[512];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  if (n > 0)
    out_add(o, buf, (size_t)n < sizeof buf ? (size_t)n : sizeof buf - 1);
}

static void out_hex(gs_out *o, const uint8_t *p, size_t n) {
  static const char hx[] = "0123456789abcdef";
  for (size_t i = 0; i < n; i++) {
    char c[2] = {hx[p[i] >> 4], hx[p[i] & 15]};
    out_add(o, c, 2);
  }
}

/* Binary data in a reply ($, #, } and * escaped). */
static void out_binary(gs_out *o, const char *p, size_t n) {
  for (size_t i = 0; i < n; i++) {
    char c = p[i];
    if (c == '$' || c == '#' || c == '}' || c == '*') {
      char e[2] = {'}', (char)(c ^ 0x20)};
      out_add(o, e, 2);
    } else
      out_add(o, &c, 1);
  }
}

static void gs_send_raw(gs_session *s, const char *p, size_t n) {
  if (s->write_failed)
    return;
  if (s->write(s->wctx, p, n) < 0)
    s->write_failed = true;
}

/* Frames and sends a packet: $payload#checksum. */
static void gs_send(gs_session *s, const char *payload, size_t n) {
  gs_out f = {0};
  uint8_t sum = 0;
  for (size_t i = 0; i < n; i++)
    sum = (uint8_t)(sum + (uint8_t)payload[i]);
  out_add(&f, "$", 1);
  out_add(&f, payload, n);
  out_fmt(&f, "#%02x", sum);
  if (f.oom)
    gs_send_raw(s, "$E0c#a6", 7); /* E0c: ENOMEM */
  else
    gs_send_raw(s, f.p, f.n);
  free(f.p);
}

/* Console output for `monitor` (an O packet, hex text). */
static void gs_console(gs_session *s, const char *text) {
  gs_out o = {0};
  out_add(&o, "O", 1);
  out_hex(&o, (const uint8_t *)text, strlen(text));
  if (!o.oom)
    gs_send(s, o.p, o.n);
  free(o.p);
}

/* ----------------------------------------------------------- parsing */

/* A hex number at *p (at least one digit, at most 16), *p moved past it. */
static int parse_hex(const char **p, const char *end, uint64_t *v) {
  const char *q = *p;
  uint64_t x = 0;
  int n = 0;
  while (q < end && tc_hex_digit((unsigned char)*q) >= 0) {
    if (++n > 16)
      return -1;
    x = x << 4 | (uint64_t)tc_hex_digit((unsigned char)*q);
    q++;
  }
  if (!n)
    return -1;
  *p = q;
  *v = x;
  return 0;
}

static bool starts(const char *p, const char *end, const char *prefix) {
  size_t n = strlen(prefix);
  return (size_t)(end - p) >= n && memcmp(p, prefix, n) == 0;
}

/* ------------------------------------------------------------ registers */

/* One register at the position in target byte order; 0 if unavailable. */
static int reg_value(gs_session *s, size_t i, uint8_t *out) {
  const tf_packed *pk = &s->regs[i];
  memset(out, 0, pk->size);
  if (s->src[i] < 0) {
    if (pk->reg->fill == TF_ONES) {
      memset(out, 0xff, pk->size);
      return 1;
    }
    return 0;
  }
  const tc_reg_info *ri = &s->arch->regs[s->src[i]];
  uint32_t n = ri->size < pk->size ? ri->size : pk->size;
  const uint8_t *st = s->gtid ? tc_replay_thread_state(s->rp, s->gtid) : NULL;
  memcpy(out, (st ? st : tc_replay_state(s->rp)) + ri->offset, n);
  if (s->arch->big_endian)
    for (uint32_t a = 0, b = pk->size - 1; a < b; a++, b--) {
      uint8_t t = out[a];
      out[a] = out[b];
      out[b] = t;
    }
  return 1;
}

static void out_reg(gs_session *s, gs_out *o, size_t i) {
  uint8_t v[64];
  size_t size = s->regs[i].size < sizeof v ? s->regs[i].size : sizeof v;
  if (reg_value(s, i, v))
    out_hex(o, v, size);
  else
    for (size_t k = 0; k < size; k++)
      out_add(o, "xx", 2);
}

/* --------------------------------------------------------- stop replies */

static void stop_reply(gs_session *s, gs_out *o, const tc_replay_hit *h,
                       int backwards) {
  /* T02 (SIGINT): a Ctrl-C stopped the run where it had got to */
  bool intr = h && h->why == TC_REPLAY_INTERRUPTED;
  uint32_t tid = h && h->tid && tc_replay_thread_state(s->rp, h->tid)
                     ? h->tid
                     : tc_replay_tid(s->rp);
  out_fmt(o, "T%sthread:%x;", intr ? "02" : "05", tid ? tid : 1);
  if (!h || intr || h->why == TC_REPLAY_STEP)
    return;
  if (h->why == TC_REPLAY_BREAK) {
    /* which kind: the first point at that pc */
    uint64_t pc =
        tc_state_get(s->arch, tc_replay_state(s->rp), s->arch->pc_reg);
    int type = 0;
    for (size_t i = 0; i < s->npoints; i++)
      if (s->points[i].type <= 1 && s->points[i].addr == pc) {
        type = s->points[i].type;
        break;
      }
    out_str(o, type == 1 ? "hwbreak:;" : "swbreak:;");
  } else if (h->why == TC_REPLAY_WATCH) {
    const char *k = "watch";
    /* the watchpoint that was hit, by its Z type */
    uint64_t addr = h->addr;
    size_t seen = 0;
    for (size_t i = 0; i < s->npoints; i++) {
      if (s->points[i].type < 2)
        continue;
      if (seen++ == h->index) {
        k = s->points[i].type == 3   ? "rwatch"
            : s->points[i].type == 4 ? "awatch"
                                     : "watch";
        addr = s->points[i].addr;
        break;
      }
    }
    out_fmt(o, "%s:%" PRIx64 ";", k, addr);
  } else {
    out_str(o, backwards ? "replaylog:begin;" : "replaylog:end;");
  }
}

static uint64_t *execs(gs_session *s, size_t *n);
static const char *exe_here(gs_session *s);

/* Runs, then the stop reply; a forward run that crossed an execve stops
 * right after it with an exec stop reply (gdb loads the new program). */
static void run_reply(gs_session *s, gs_out *o, const tc_replay_stops *st,
                      int backwards) {
  tc_error err = {{0}};
  tc_replay_hit h = {0};
  uint64_t from = tc_replay_pos(s->rp);
  if (tc_replay_run(s->rp, backwards, st, &h, &err)) {
    out_str(o, "E01");
    return;
  }
  uint64_t to = tc_replay_pos(s->rp), x = UINT64_MAX;
  size_t n;
  uint64_t *xs = s->exec_events && !backwards ? execs(s, &n) : NULL;
  for (size_t i = 0; xs && i < n && x == UINT64_MAX; i++)
    if (xs[i] > from && xs[i] <= to)
      x = xs[i];
  free(xs);
  const char *exe;
  if (x != UINT64_MAX && !tc_replay_seek(s->rp, x, &err) &&
      (exe = exe_here(s)) != NULL) {
    uint32_t tid = tc_replay_tid(s->rp);
    out_fmt(o, "T05thread:%x;exec:", tid ? tid : 1);
    out_hex(o, (const uint8_t *)exe, strlen(exe));
    out_str(o, ";");
    return;
  }
  stop_reply(s, o, &h, backwards);
}

/* Resumes: a step of thread `tid` (0: the Hc thread, else the running
 * one) to its next (or, backwards, previous) instruction, a range step
 * (lo < hi: on while its pc stays in [lo, hi), breakpoints and watches
 * stopping it), or a continue; then the stop reply. */
static void resume(gs_session *s, gs_out *o, bool step, int backwards,
                   uint32_t tid, uint64_t lo, uint64_t hi) {
  if (step && lo >= hi) {
    if (!tid && s->ctid && tc_replay_thread_state(s->rp, s->ctid))
      tid = s->ctid;
    if (!tid || !tc_replay_thread_state(s->rp, tid))
      tid = tc_replay_tid(s->rp);
    tc_replay_stops st = {.interrupted = s->interrupted,
                          .ctx = s->wctx,
                          .step = 1,
                          .step_tid = tid};
    run_reply(s, o, &st, backwards);
    return;
  }
  uint64_t pcs[GS_MAX_POINTS];
  tc_replay_watch w[GS_MAX_POINTS];
  size_t npcs = 0, nw = 0;
  for (size_t i = 0; i < s->npoints; i++) {
    const gs_point *p = &s->points[i];
    if (p->type <= 1)
      pcs[npcs++] = p->addr;
    else
      w[nw++] = (tc_replay_watch){p->addr, p->len,
                                  p->type == 2   ? TC_MEM_WRITE
                                  : p->type == 3 ? TC_MEM_READ
                                                 : TC_MEM_READ | TC_MEM_WRITE};
  }
  if (step) { /* a range step: its thread, as a plain step's */
    if (!tid && s->ctid && tc_replay_thread_state(s->rp, s->ctid))
      tid = s->ctid;
    if (!tid || !tc_replay_thread_state(s->rp, tid))
      tid = tc_replay_tid(s->rp);
  }
  tc_replay_stops st = {.pcs = pcs,
                        .npcs = npcs,
                        .watches = w,
                        .nwatches = nw,
                        .watch_before = !s->arch->traits.watch_after,
                        .interrupted = s->interrupted,
                        .ctx = s->wctx,
                        .step = step,
                        .step_tid = tid,
                        .range_lo = lo,
                        .range_hi = hi};
  run_reply(s, o, &st, backwards);
}

/* ------------------------------------------------------------ monitor */

static void monitor(gs_session *s, const char *cmd, gs_out *o) {
  char line[1024];
  while (*cmd == ' ')
    cmd++;
  if (strncmp(cmd, "seek", 4) == 0 && (cmd[4] == ' ' || !cmd[4])) {
    char *end;
    const char *a = cmd + 4;
    while (*a == ' ')
      a++;
    errno = 0;
    unsigned long long v = strtoull(a, &end, 0);
    while (*end == ' ' || *end == '\n')
      end++;
    if (!*a || *end || errno || *a == '-') {
      gs_console(s, "usage: monitor seek N (an instruction number)\n");
      out_str(o, "OK");
      return;
    }
    tc_error err = {{0}};
    if (tc_replay_seek(s->rp, v, &err)) {
      snprintf(line, sizeof line, "%s\n", err.msg);
      gs_console(s, line);
      out_str(o, "OK");
      return;
    }
    snprintf(line, sizeof line,
             "at instruction %" PRIu64 " of %" PRIu64
             " (run `maintenance flush register-cache` so gdb rereads the "
             "registers, or define a hookpost-monitor that does)\n",
             tc_replay_pos(s->rp), tc_replay_insns(s->rp));
    gs_console(s, line);
    out_str(o, "OK");
    return;
  }
  if (strncmp(cmd, "info", 4) == 0 && (!cmd[4] || cmd[4] == ' ')) {
    tc_replay_stats st;
    tc_replay_get_stats(s->rp, &st);
    uint64_t pc =
        tc_state_get(s->arch, tc_replay_state(s->rp), s->arch->pc_reg);
    if (tc_replay_indexed(s->rp) < tc_replay_insns(s->rp)) {
      snprintf(line, sizeof line,
               "indexed so far: instructions 0 to %" PRIu64
               " (the rest as it is asked for)\n",
               tc_replay_indexed(s->rp));
      gs_console(s, line);
    }
    snprintf(line, sizeof line,
             "position %" PRIu64 " of %" PRIu64 " instructions, pc 0x%" PRIx64
             ", thread %u, arch %s\n"
             "index: %" PRIu64 " checkpoints every %u instructions, %" PRIu64
             " page copies, %" PRIu64 " KiB in memory, %" PRIu64
             " KiB of log\n",
             tc_replay_pos(s->rp), tc_replay_insns(s->rp), pc,
             tc_replay_tid(s->rp), s->arch->name, st.checkpoints, st.interval,
             st.page_versions, st.memory_bytes >> 10, st.log_bytes >> 10);
    gs_console(s, line);
    if (!tc_replay_has_memory(s->rp))
      gs_console(s, "memory: not recorded (every read is unavailable)\n");
    if (tc_replay_truncated(s->rp)) {
      snprintf(line, sizeof line, "the trace ends early: %s\n",
               tc_replay_truncated(s->rp));
      gs_console(s, line);
    }
    out_str(o, "OK");
    return;
  }
  if (strncmp(cmd, "help", 4) != 0) {
    char safe[256];
    snprintf(line, sizeof line, "unknown monitor command: %s\n",
             tc_escape_text(cmd, safe, sizeof safe));
    gs_console(s, line);
  }
  gs_console(s, "tracecorn gdbserver monitor commands:\n"
                "  seek N   go to instruction N (0 = the first; the number "
                "of instructions = after the last)\n"
                "  info     position, instruction count, arch, index\n");
  out_str(o, "OK");
}

/* --------------------------------------------------------------- qXfer */

static void xfer(gs_out *o, const char *data, size_t len, const char *p,
                 const char *end) {
  uint64_t off, n;
  if (parse_hex(&p, end, &off) || p >= end || *p++ != ',' ||
      parse_hex(&p, end, &n) || p != end) {
    out_str(o, "E01");
    return;
  }
  if (off > len) {
    out_str(o, "E01");
    return;
  }
  if (n > GS_PACKET_SIZE / 2)
    n = GS_PACKET_SIZE / 2;
  size_t k = len - off < n ? (size_t)(len - off) : (size_t)n;
  out_str(o, off + k < len ? "m" : "l");
  out_binary(o, data + off, k);
}

/* The auxiliary vector the kernel put on the stack, read at instruction 0
 * (argc, argv..., NULL, envp..., NULL, then the pairs up to AT_NULL), for
 * qXfer:auxv:read: gdb finds a PIE's base and a dynamic program's loader
 * (AT_BASE) there. The position is kept. */
static int read_word(gs_session *s, uint64_t addr, uint64_t *out) {
  const unsigned w = s->arch->ptr_size;
  uint8_t buf[8];
  if (tc_replay_read(s->rp, addr, w, buf) != w)
    return -1;
  uint64_t v = 0;
  for (unsigned k = 0; k < w; k++)
    v |= (uint64_t)buf[s->arch->big_endian ? w - 1 - k : k] << (8 * k);
  *out = v;
  return 0;
}

/* The execve positions known (indexed); *n of them, or NULL. */
static uint64_t *execs(gs_session *s, size_t *n) {
  *n = tc_replay_execs(s->rp, NULL, 0);
  uint64_t *x = *n ? malloc(*n * sizeof *x) : NULL;
  if (!x)
    *n = 0;
  else
    tc_replay_execs(s->rp, x, *n);
  return x;
}

/* Where the program at pos started: after the latest execve at or before
 * it, else 0. */
static uint64_t image_start(gs_session *s, uint64_t pos) {
  size_t n;
  uint64_t *x = execs(s, &n), start = 0;
  for (size_t i = 0; i < n && x[i] <= pos; i++)
    start = x[i];
  free(x);
  return start;
}

/* A NUL-terminated string of the recording's memory, or NULL. */
static char *read_string(gs_session *s, uint64_t addr) {
  char buf[4096];
  for (size_t i = 0; i < sizeof buf; i++) {
    if (tc_replay_read(s->rp, addr + i, 1, (uint8_t *)&buf[i]) != 1)
      return NULL;
    if (!buf[i])
      return i ? strdup(buf) : NULL;
  }
  return NULL;
}

static void read_auxv_at(gs_session *s, uint64_t at) {
  tc_replay *rp = s->rp;
  uint64_t keep = tc_replay_pos(rp);
  tc_error err = {{0}};
  free(s->auxv);
  free(s->exe);
  s->auxv = NULL;
  s->auxv_len = 0;
  s->exe = NULL;
  s->img = at;
  if (tc_replay_seek(rp, at, &err))
    return;
  const unsigned w = s->arch->ptr_size;
  uint64_t sp = tc_state_get(s->arch, tc_replay_state(rp), s->arch->sp_reg);
  uint64_t argc, v, p;
  if (read_word(s, sp, &argc) || argc > 65536)
    goto done;
  p = sp + (argc + 2) * w; /* past argv and its NULL */
  for (int n = 0;; n++, p += w) {
    if (read_word(s, p, &v) || n > 65536)
      goto done;
    if (!v)
      break;
  }
  p += w; /* the auxv */
  uint64_t start = p;
  /* Only a real one: AT_PAGESZ and AT_ENTRY present, every key one Linux
   * uses (a forked child's recording starts at the fork, not on a fresh
   * stack, and has none to offer). */
  bool pagesz = false, entry = false;
  for (int n = 0; n < 512; n++, p += 2 * w) {
    if (read_word(s, p, &v) || v > 64)
      goto done;
    pagesz |= v == 6;
    entry |= v == 9;
    if (v == 0) { /* AT_NULL */
      if (!pagesz || !entry)
        goto done;
      size_t len = (size_t)(p + 2 * w - start);
      uint8_t *a = malloc(len);
      if (a && tc_replay_read(rp, start, len, a) == len) {
        s->auxv = a;
        s->auxv_len = len;
      } else
        free(a);
      /* an exec'd program's name: AT_EXECFN's string, on its stack */
      for (uint64_t q = start; at && s->auxv && q < p; q += 2 * w)
        if (!read_word(s, q, &v) && v == 31 && !read_word(s, q + w, &v))
          s->exe = read_string(s, v);
      break;
    }
  }
done:
  tc_replay_seek(rp, keep, &err);
}

/* The auxv and exec file of the program at the position. */
static void image_here(gs_session *s) {
  uint64_t at = image_start(s, tc_replay_pos(s->rp));
  if (at != s->img)
    read_auxv_at(s, at);
}

static const char *exe_here(gs_session *s) {
  image_here(s);
  return s->img ? s->exe : tc_replay_info(s->rp)->exe_path;
}

/* --------------------------------------------------------------- packets */

static void points_change(gs_session *s, gs_out *o, const char *p,
                          const char *end, bool insert) {
  uint64_t type, addr, kind;
  p++;
  if (parse_hex(&p, end, &type) || type > 4 || p >= end || *p++ != ',' ||
      parse_hex(&p, end, &addr) || p >= end || *p++ != ',' ||
      parse_hex(&p, end, &kind) || (p < end && *p != ';')) {
    out_str(o, "E01");
    return;
  }
  if (type >= 2 && (kind == 0 || kind > 1024)) {
    out_str(o, "E01");
    return;
  }
  if (insert) {
    if (s->npoints >= GS_MAX_POINTS) {
      out_str(o, "E01");
      return;
    }
    s->points[s->npoints++] = (gs_point){(int)type, addr, type >= 2 ? kind : 1};
    out_str(o, "OK");
    return;
  }
  for (size_t i = 0; i < s->npoints; i++)
    if (s->points[i].type == (int)type && s->points[i].addr == addr &&
        (type < 2 || s->points[i].len == kind)) {
      memmove(&s->points[i], &s->points[i + 1],
              (s->npoints - i - 1) * sizeof *s->points);
      s->npoints--;
      break;
    }
  out_str(o, "OK");
}

static void read_memory(gs_session *s, gs_out *o, const char *p,
                        const char *end) {
  uint64_t addr, len;
  p++;
  if (parse_hex(&p, end, &addr) || p >= end || *p++ != ',' ||
      parse_hex(&p, end, &len) || p != end) {
    out_str(o, "E01");
    return;
  }
  if (len > GS_PACKET_SIZE / 2 - 8)
    len = GS_PACKET_SIZE / 2 - 8;
  if (len == 0)
    return; /* an empty reply: zero bytes read */
  uint8_t buf[GS_PACKET_SIZE / 2];
  size_t got = tc_replay_read(s->rp, addr, (size_t)len, buf);
  if (!got) {
    out_str(o, "E01"); /* the recording does not hold that byte */
    return;
  }
  out_hex(o, buf, got); /* a short read: GDB asks again from there */
}

/* A thread id: hex, or -1 (all) and 0 (any), both 0 here. */
static int parse_tid(const char **p, const char *end, uint32_t *tid) {
  uint64_t v;
  if (*p + 2 <= end && (*p)[0] == '-' && (*p)[1] == '1') {
    *p += 2;
    *tid = 0;
    return 0;
  }
  if (parse_hex(p, end, &v) || v > UINT32_MAX)
    return -1;
  *tid = (uint32_t)v;
  return 0;
}

/* What the first action of vCont is: 'c', 's' or 0 (malformed); *tid the
 * thread it names (0: none). */
static char vcont_action(const char *p, const char *end, uint32_t *tid,
                         uint64_t *lo, uint64_t *hi) {
  *tid = 0;
  *lo = *hi = 0;
  if (p >= end || *p != ';')
    return 0;
  p++;
  if (p >= end)
    return 0;
  char a = *p++;
  if (a == 'C' || a == 'S') {
    uint64_t sig;
    if (parse_hex(&p, end, &sig))
      return 0;
    a = a == 'C' ? 'c' : 's';
  }
  if (a == 'r') { /* r START,END: a range step */
    if (parse_hex(&p, end, lo) || p >= end || *p++ != ',' ||
        parse_hex(&p, end, hi))
      return 0;
    if (*lo >= *hi)
      *lo = *hi = 0; /* an empty range: one step */
    a = 's';
  }
  if (a != 'c' && a != 's')
    return 0;
  if (p < end && *p == ':') {
    p++;
    if (parse_tid(&p, end, tid))
      return 0;
  }
  if (p < end && *p != ';')
    return 0;
  return a;
}

/* Handles one packet's payload; the reply goes into o. */
static void gs_packet(gs_session *s, const char *p, size_t len, gs_out *o) {
  const char *end = p + len;
  if (!len)
    return;
  switch (p[0]) {
  case '?':
    stop_reply(s, o, NULL, 0);
    return;
  case 'g':
    if (len != 1)
      break;
    for (size_t i = 0; i < s->nregs; i++)
      out_reg(s, o, i);
    return;
  case 'p': {
    const char *q = p + 1;
    uint64_t n;
    if (parse_hex(&q, end, &n) || q != end) {
      out_str(o, "E01");
      return;
    }
    for (size_t i = 0; i < s->nregs; i++)
      if ((uint64_t)s->regs[i].regnum == n) {
        out_reg(s, o, i);
        return;
      }
    out_str(o, "E01");
    return;
  }
  case 'G':
  case 'P':
  case 'M':
  case 'X':
    out_str(o, "E01"); /* a recording is read-only */
    return;
  case 'm':
    read_memory(s, o, p, end);
    return;
  case 'Z':
  case 'z':
    if (len < 2 || p[1] < '0' || p[1] > '4') {
      if (len >= 2 && p[1] >= '5' && p[1] <= '9')
        return; /* unknown point types: unsupported */
      out_str(o, "E01");
      return;
    }
    points_change(s, o, p, end, p[0] == 'Z');
    return;
  case 'c':
  case 's':
  case 'C':
  case 'S':
    resume(s, o, p[0] == 's' || p[0] == 'S', 0, 0, 0, 0);
    return;
  case 'b':
    if (len == 2 && (p[1] == 's' || p[1] == 'c')) {
      resume(s, o, p[1] == 's', 1, 0, 0, 0);
      return;
    }
    break;
  case 'H': {
    const char *q = p + 2;
    uint32_t t;
    if (len < 3 || (p[1] != 'g' && p[1] != 'c') || parse_tid(&q, end, &t) ||
        q != end || (t && !tc_replay_thread_state(s->rp, t))) {
      out_str(o, "E01");
      return;
    }
    *(p[1] == 'g' ? &s->gtid : &s->ctid) = t;
    out_str(o, "OK");
    return;
  }
  case 'T': {
    const char *q = p + 1;
    uint32_t t;
    out_str(o, parse_tid(&q, end, &t) || q != end || !t ||
                       !tc_replay_thread_state(s->rp, t)
                   ? "E01"
                   : "OK");
    return;
  }
  case 'k':
    s->done = true;
    return;
  case 'D':
    out_str(o, "OK");
    s->done = true;
    return;
  case 'q':
  case 'Q':
  case 'v':
    break;
  default:
    return; /* unknown: an empty reply */
  }
  if (starts(p, end, "qSupported")) {
    /* exec stop replies where gdb offers to take them */
    s->exec_events = false;
    for (const char *q = p; q + 12 <= end; q++)
      if (memcmp(q, "exec-events+", 12) == 0)
        s->exec_events = true;
    out_fmt(o,
            "PacketSize=%x;QStartNoAckMode+;ReverseStep+;ReverseContinue+;"
            "qXfer:features:read+;qXfer:auxv:read+;qXfer:exec-file:read+;"
            "swbreak+;hwbreak+%s",
            GS_PACKET_SIZE, s->exec_events ? ";exec-events+" : "");
  } else if (starts(p, end, "QStartNoAckMode") && len == 15) {
    out_str(o, "OK");
    s->noack = true; /* after this reply */
  } else if (starts(p, end, "qXfer:features:read:target.xml:")) {
    xfer(o, s->xml, s->xml_len, p + 31, end);
  } else if (starts(p, end, "qXfer:features:read:")) {
    out_str(o, "E00");
  } else if (starts(p, end, "qXfer:auxv:read::")) {
    image_here(s);
    if (!s->auxv)
      out_str(o, "E00");
    else
      xfer(o, (const char *)s->auxv, s->auxv_len, p + 17, end);
  } else if (starts(p, end, "qXfer:exec-file:read:")) {
    const char *q = memchr(p + 21, ':', (size_t)(end - p - 21));
    const char *exe = exe_here(s);
    if (!q || !exe || !*exe)
      out_str(o, "E00");
    else
      xfer(o, exe, strlen(exe), q + 1, end);
  } else if (starts(p, end, "qAttached")) {
    out_str(o, "1");
  } else if (starts(p, end, "qC") && len == 2) {
    out_fmt(o, "QC%x", tc_replay_tid(s->rp) ? tc_replay_tid(s->rp) : 1);
  } else if (starts(p, end, "qfThreadInfo") && len == 12) {
    uint32_t tids[256];
    size_t n = tc_replay_threads(s->rp, tids, 256);
    out_str(o, "m");
    for (size_t i = 0; i < n && i < 256; i++)
      out_fmt(o, "%s%x", i ? "," : "", tids[i] ? tids[i] : 1);
  } else if (starts(p, end, "qsThreadInfo") && len == 12) {
    out_str(o, "l");
  } else if (starts(p, end, "qOffsets") && len == 8) {
    uint64_t b = tc_replay_info(s->rp)->load_base;
    if (b)
      out_fmt(o, "Text=%" PRIx64 ";Data=%" PRIx64 ";Bss=%" PRIx64, b, b, b);
  } else if (starts(p, end, "qSymbol")) {
    out_str(o, "OK");
  } else if (starts(p, end, "qRcmd,")) {
    const char *q = p + 6;
    size_t n = (size_t)(end - q);
    if (n % 2 || n / 2 >= 512) {
      out_str(o, "E01");
      return;
    }
    char cmd[512];
    for (size_t i = 0; i < n / 2; i++) {
      int hi = tc_hex_digit((unsigned char)q[2 * i]),
          lo = tc_hex_digit((unsigned char)q[2 * i + 1]);
      if (hi < 0 || lo < 0 || (hi == 0 && lo == 0)) {
        out_str(o, "E01");
        return;
      }
      cmd[i] = (char)(hi << 4 | lo);
    }
    cmd[n / 2] = 0;
    monitor(s, cmd, o);
  } else if (starts(p, end, "vCont?")) {
    out_str(o, "vCont;c;C;s;S;r");
  } else if (starts(p, end, "vCont;")) {
    uint32_t t;
    uint64_t lo, hi;
    char a = vcont_action(p + 5, end, &t, &lo, &hi);
    if (!a)
      out_str(o, "E01");
    else
      resume(s, o, a == 's', 0, t, lo, hi);
  } else if (starts(p, end, "vKill")) {
    out_str(o, "OK");
    s->done = true;
  } else if (starts(p, end, "vMustReplyEmpty")) {
    /* empty */
  }
  /* everything else: an empty reply (not supported) */
}

/* ------------------------------------------------------------- framing */

static void gs_dispatch(gs_session *s) {
  s->reply.n = 0;
  s->reply.oom = false;
  if (s->reply.p)
    s->reply.p[0] = 0;
  bool noack_before = s->noack;
  if (!noack_before)
    gs_send_raw(s, "+", 1);
  gs_packet(s, s->in, s->in_n, &s->reply);
  if (s->done && s->reply.n == 0)
    return; /* k: no reply */
  if (s->reply.oom) {
    gs_send(s, "E0c", 3);
    return;
  }
  gs_send(s, s->reply.p ? s->reply.p : "", s->reply.n);
  /* kept for a retransmission ('-') */
  s->last.n = 0;
  out_add(&s->last, s->reply.p ? s->reply.p : "", s->reply.n);
}

/* Feeds bytes from the client; 1 when the session is over (k, D, a write
 * that failed), else 0. */
int gs_feed(gs_session *s, const uint8_t *buf, size_t n) {
  for (size_t i = 0; i < n && !s->done && !s->write_failed; i++) {
    uint8_t c = buf[i];
    switch (s->in_state) {
    case 0:
      if (c == '$') {
        s->in_state = 1;
        s->in_n = 0;
        s->sum = 0;
      } else if (c == '-' && !s->noack && s->last.p) {
        gs_send(s, s->last.p, s->last.n);
      }
      /* '+', ^C (nothing runs between packets) and noise: ignored */
      break;
    case 1:
      if (c == '#') {
        s->in_state = 2;
        break;
      }
      s->sum = (uint8_t)(s->sum + c);
      if (s->in_n + 1 >= GS_MAX_IN) {
        s->in_state = 0; /* too long: dropped */
        if (!s->noack)
          gs_send_raw(s, "-", 1);
        break;
      }
      if (s->in_n + 2 > s->in_cap) {
        size_t cap = s->in_cap ? s->in_cap * 2 : 1024;
        char *p = realloc(s->in, cap);
        if (!p) {
          s->in_state = 0;
          break;
        }
        s->in = p;
        s->in_cap = cap;
      }
      s->in[s->in_n++] = (char)c;
      break;
    case 2:
      s->csum[0] = (char)c;
      s->in_state = 3;
      break;
    case 3: {
      s->csum[1] = (char)c;
      s->in_state = 0;
      int hi = tc_hex_digit((unsigned char)s->csum[0]),
          lo = tc_hex_digit((unsigned char)s->csum[1]);
      if (!s->noack &&
          (hi < 0 || lo < 0 || (uint8_t)(hi << 4 | lo) != s->sum)) {
        gs_send_raw(s, "-", 1);
        break;
      }
      if (!s->in)
        break;
      s->in[s->in_n] = 0;
      gs_dispatch(s);
      break;
    }
    }
  }
  return s->done || s->write_failed;
}

gs_session *gs_new(tc_replay *rp, int (*write)(void *, const char *, size_t),
                   void *wctx, tc_error *err) {
  const tc_arch *arch = tc_replay_arch(rp);
  const tf_layout *row = tf_layout_for_table(arch);
  if (!row) {
    tc_error_set(err, "gdbserver: no GDB register layout for %s yet",
                 arch->name);
    return NULL;
  }
  gs_session *s = calloc(1, sizeof *s);
  if (!s) {
    tc_error_set(err, "out of memory");
    return NULL;
  }
  s->rp = rp;
  s->arch = arch;
  s->row = row;
  s->write = write;
  s->wctx = wctx;
  s->regs = calloc(row->nregs, sizeof *s->regs);
  s->src = calloc(row->nregs, sizeof *s->src);
  s->points = calloc(GS_MAX_POINTS, sizeof *s->points);
  s->xml = tf_tdesc_xml(row);
  if (!s->regs || !s->src || !s->points || !s->xml) {
    free(s->regs);
    free(s->src);
    free(s->points);
    free(s->xml);
    free(s);
    tc_error_set(err, "out of memory");
    return NULL;
  }
  s->xml_len = strlen(s->xml);
  s->nregs = tf_layout_pack(row, s->regs);
  for (size_t i = 0; i < s->nregs; i++) {
    const tf_reg *r = s->regs[i].reg;
    s->src[i] =
        r->fill == TF_FROM_REG && r->src ? tc_arch_reg_index(arch, r->src) : -1;
    /* a register the file's format does not hold is unavailable, not the
     * zero its reader gives (ucir keeps 17 of x86-64's 59) */
    const tc_format *fmt = tc_replay_format(rp);
    if (s->src[i] >= 0 && fmt->holds_reg && !fmt->holds_reg(arch, s->src[i]))
      s->src[i] = -1;
  }
  read_auxv_at(s, 0);
  return s;
}

void gs_set_interrupt(gs_session *s, int (*fn)(void *ctx)) {
  s->interrupted = fn;
}

void gs_free(gs_session *s) {
  if (!s)
    return;
  free(s->regs);
  free(s->src);
  free(s->points);
  free(s->xml);
  free(s->auxv);
  free(s->exe);
  free(s->reply.p);
  free(s->last.p);
  free(s->in);
  free(s);
}

/* ----------------------------------------------------------- transports */

/* A client on two descriptors, and what it sent while a run was going. */
typedef struct gs_io {
  int in, out;
  uint8_t pending[4096];
  size_t npending;
} gs_io;

static int fd_write(void *ctx, const char *buf, size_t n) {
  int fd = ((gs_io *)ctx)->out;
  while (n) {
    ssize_t k = write(fd, buf, n);
    if (k < 0 && errno == EINTR)
      continue;
    if (k <= 0)
      return -1;
    buf += k;
    n -= (size_t)k;
  }
  return 0;
}

/* During a run: has the client sent a Ctrl-C (0x03)? Other bytes are kept
 * for after the run. */
static int io_interrupted(void *ctx) {
  gs_io *io = ctx;
  struct pollfd p = {.fd = io->in, .events = POLLIN};
  if (io->npending == sizeof io->pending || poll(&p, 1, 0) != 1)
    return 0;
  ssize_t n = read(io->in, io->pending + io->npending,
                   sizeof io->pending - io->npending);
  if (n <= 0)
    return 0;
  int hit = 0;
  size_t k = io->npending;
  for (size_t i = io->npending; i < io->npending + (size_t)n; i++) {
    if (io->pending[i] == 0x03)
      hit = 1;
    else
      io->pending[k++] = io->pending[i];
  }
  io->npending = k;
  return hit;
}

int gs_serve_fds(tc_replay *rp, int in, int out, tc_error *err) {
  gs_io io = {.in = in, .out = out};
  gs_session *s = gs_new(rp, fd_write, &io, err);
  if (!s)
    return -1;
  gs_set_interrupt(s, io_interrupted);
  uint8_t buf[65536];
  for (;;) {
    /* once the client has been quiet for 50 ms, index more of the trace
     * (steps of 2^16 instructions, 10-30 ms: an answer waits at most
     * that) */
    struct pollfd pf = {.fd = in, .events = POLLIN};
    int wait_ms = 50;
    while (tc_replay_indexed(rp) < tc_replay_insns(rp) &&
           poll(&pf, 1, wait_ms) == 0) {
      tc_error berr = {{0}};
      wait_ms = 0;
      if (tc_replay_build(rp, 1 << 16, &berr) < 0)
        break; /* a seek there will say why */
    }
    ssize_t n = read(in, buf, sizeof buf);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      break; /* the client went away */
    int end = gs_feed(s, buf, (size_t)n);
    while (!end && io.npending) { /* what came during a run */
      uint8_t more[sizeof io.pending];
      size_t m = io.npending;
      memcpy(more, io.pending, m);
      io.npending = 0;
      end = gs_feed(s, more, m);
    }
    if (end)
      break;
  }
  gs_free(s);
  return 0;
}
