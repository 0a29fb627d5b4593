/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The public pull reader (tc_trace: one event at a time, packed records,
 * columns, seek) and the public face of analysis/replay.c (tc_timeline:
 * the state and memory at any instruction). The Python binding (python/)
 * is built on these; see docs/python.md for the packed layout. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/index.h"
#include "analysis/replay.h"
#include "common/byteorder.h"
#include "tracecorn/tracecorn.h"
#include "writers/format.h"

struct tc_trace {
  const tc_format *fmt;  /* the reader's: the index's tct after a seek */
  const tc_format *orig; /* the file's */
  tc_reader *rd;
  char *path;
  tc_event cur; /* the reader's next event, not handed out yet (have) */
  tc_event key; /* a KEYFRAME a read-forward seek made: next (have_key) */
  bool have, have_key, end, failed;
  bool seen_exit; /* else the end is a synthetic EXIT (as tc_convert's) */
  uint64_t insns; /* INSN events handed out since the start or the seek */
  char msg[sizeof(((tc_error *)0)->msg)];
  char exit_msg[128];
};

/* ------------------------------------------------------------ the reader */

static int trace_fail(tc_trace *t, const tc_error *e, tc_error *err) {
  t->failed = true;
  if (e->msg[0])
    snprintf(t->msg, sizeof t->msg, "%s", e->msg);
  else
    snprintf(t->msg, sizeof t->msg, "%s: cannot read the trace", t->path);
  tc_error_set(err, "%s", t->msg);
  return -1;
}

static tc_reader *reopen(tc_trace *t, tc_error *err) {
  tc_error e = {{0}};
  tc_reader *rd = t->fmt->open_reader(t->path, &e);
  if (!rd)
    tc_error_set(err, "%s",
                 e.msg[0] ? e.msg : "cannot open the trace for reading");
  return rd;
}

tc_trace *tc_trace_open(const char *path, const tc_format *fmt, tc_error *err) {
  if (!path) {
    tc_error_set(err, "no trace path");
    return NULL;
  }
  if (!fmt && !(fmt = tc_format_detect(path, err)))
    return NULL;
  if (!fmt->open_reader) {
    tc_error_set(err, "format %s has no reader", fmt->name);
    return NULL;
  }
  tc_trace *t = calloc(1, sizeof *t);
  if (!t || !(t->path = strdup(path))) {
    free(t);
    tc_error_set(err, "out of memory");
    return NULL;
  }
  t->fmt = t->orig = fmt;
  if (!(t->rd = reopen(t, err))) {
    free(t->path);
    free(t);
    return NULL;
  }
  return t;
}

void tc_trace_close(tc_trace *t) {
  if (!t)
    return;
  if (t->rd)
    t->fmt->close_reader(t->rd);
  free(t->path);
  free(t);
}

const tc_trace_info *tc_trace_get_info(tc_trace *t) {
  return t->fmt->reader_info(t->rd);
}

const tc_format *tc_trace_format(tc_trace *t) { return t->orig; }

/* The next event without taking it: 1 (*ev), 0 end, -1 error. */
static int peek(tc_trace *t, const tc_event **ev, tc_error *err) {
  if (t->failed) {
    tc_error_set(err, "%s", t->msg);
    return -1;
  }
  if (t->have_key) {
    *ev = &t->key;
    return 1;
  }
  if (!t->have) {
    if (t->end)
      return 0;
    tc_error e = {{0}};
    memset(&t->cur, 0, sizeof t->cur);
    int rc = t->fmt->next_event(t->rd, &t->cur, &e);
    if (rc < 0)
      return trace_fail(t, &e, err);
    t->end = rc == 0;
    if (rc == 0 && t->seen_exit)
      return 0;
    if (rc == 0) {
      /* Formats without an exit record (TRAC, tfile) still end as the
       * event model promises, as tc_convert ends them. */
      snprintf(t->exit_msg, sizeof t->exit_msg, TC_INDEX_NO_EXIT,
               t->orig->name);
      memset(&t->cur, 0, sizeof t->cur);
      t->cur.kind = TC_EV_EXIT;
      t->cur.u.exit.reason = TC_EXIT_ERROR;
      t->cur.u.exit.insn_count = t->insns;
      t->cur.u.exit.message = t->exit_msg;
    }
    t->have = true;
    if (t->cur.kind == TC_EV_EXIT)
      t->seen_exit = true;
  }
  *ev = &t->cur;
  return 1;
}

static void take(tc_trace *t) {
  if (t->have_key) {
    t->have_key = false;
    return;
  }
  t->have = false;
  if (t->cur.kind == TC_EV_INSN)
    t->insns++;
}

int tc_trace_next(tc_trace *t, const tc_event **ev, tc_error *err) {
  int rc = peek(t, ev, err);
  if (rc == 1)
    take(t);
  return rc;
}

int tc_trace_seek(tc_trace *t, uint64_t insn, tc_error *err) {
  t->have = t->have_key = t->end = t->failed = t->seen_exit = false;
  t->insns = 0;
  tc_error e = {{0}};
  if (t->fmt->seek) {
    if (t->fmt->seek(t->rd, insn, &e) < 0)
      return trace_fail(t, &e, err);
    return 0;
  }
  /* no seek of its own: its index's (TRACE.tcidx, the same events as a
   * tct), which later seeks use too */
  char idx[4300];
  const tc_format *tct = tc_format_by_name("tct");
  if (tc_index_find(t->path, t->fmt, idx, sizeof idx) == 1) {
    tc_reader *ir = tct->open_reader(idx, &e);
    if (ir && tct->seek(ir, insn, &e) == 0) {
      t->fmt->close_reader(t->rd);
      t->rd = ir;
      t->fmt = tct;
      return 0;
    }
    if (ir)
      tct->close_reader(ir);
    return trace_fail(t, &e, err);
  }
  /* else read the file again up to instruction insn */
  tc_reader *rd = reopen(t, err);
  if (!rd)
    return -1;
  t->fmt->close_reader(t->rd);
  t->rd = rd;
  for (;;) {
    const tc_event *ev;
    int rc = peek(t, &ev, &e);
    if (rc < 0) {
      tc_error_set(err, "%s", e.msg);
      return -1;
    }
    if (rc == 0 || ev->kind == TC_EV_EXIT ||
        (ev->kind == TC_EV_INSN && ev->u.insn.index > insn)) {
      snprintf(e.msg, sizeof e.msg, "%s: the trace has no instruction %llu",
               t->path, (unsigned long long)insn);
      return trace_fail(t, &e, err);
    }
    if (ev->kind == TC_EV_INSN && ev->u.insn.index == insn) {
      /* the state there first, as a format's seek gives it */
      memset(&t->key, 0, sizeof t->key);
      t->key.kind = TC_EV_KEYFRAME;
      t->key.u.key.insn_index = insn;
      t->key.u.key.tid = ev->u.insn.tid;
      t->key.u.key.state = ev->u.insn.state_before;
      t->have_key = ev->u.insn.state_before != NULL;
      t->insns = 0;
      return 0;
    }
    take(t);
  }
}

/* ---------------------------------------------------------- packed records
 * Little-endian, unaligned; docs/python.md lists them. */

typedef struct packer {
  uint8_t *p; /* NULL: only count */
  size_t n;
} packer;

static void put(packer *k, const void *src, size_t n) {
  if (k->p && n)
    memcpy(k->p + k->n, src, n);
  k->n += n;
}
/* little-endian, n bytes (common/byteorder.h) */
static void put_n(packer *k, uint64_t v, unsigned n) {
  uint8_t b[8];
  put_le(b, v, n);
  put(k, b, n);
}
static void put8(packer *k, uint8_t v) { put(k, &v, 1); }
static void put16(packer *k, uint16_t v) { put_n(k, v, 2); }
static void put32(packer *k, uint32_t v) { put_n(k, v, 4); }
static void put64(packer *k, uint64_t v) { put_n(k, v, 8); }
/* u16 length, then the bytes (a NULL string: length 0xFFFF, none) */
static void put_str(packer *k, const char *s) {
  if (!s) {
    put16(k, 0xFFFF);
    return;
  }
  size_t n = strlen(s);
  if (n > 0xFFFE)
    n = 0xFFFE;
  put16(k, (uint16_t)n);
  put(k, s, n);
}
static void put_mem(packer *k, const tc_mem_access *m, uint32_t n) {
  for (uint32_t i = 0; i < n; i++) {
    put64(k, m[i].addr);
    put32(k, m[i].size);
    put8(k, m[i].kind);
    put(k, m[i].before, m[i].size);
    if (m[i].kind == TC_MEM_WRITE)
      put(k, m[i].after, m[i].size);
  }
}

static void pack(packer *k, const tc_arch *arch, const tc_event *ev) {
  put8(k, (uint8_t)ev->kind);
  switch (ev->kind) {
  case TC_EV_INSN: {
    const tc_insn_event *e = &ev->u.insn;
    uint16_t n8 = 0, nwide = 0;
    for (uint16_t i = 0; e->state_after && i < e->nregs; i++) {
      if (tc_arch_reg_size(arch, e->regs[i]) <= 8)
        n8++;
      else
        nwide++;
    }
    put64(k, e->index);
    put64(k, e->pc);
    put32(k, e->tid);
    put8(k, e->size);
    put(k, e->bytes, 16);
    put16(k, n8);
    put16(k, nwide);
    put32(k, e->nmem);
    if (!e->state_after)
      n8 = 0;
    for (int pass = 0; pass < 2 && n8; pass++)
      for (uint16_t i = 0; i < e->nregs; i++) {
        int r = e->regs[i];
        if (tc_arch_reg_size(arch, r) > 8)
          continue;
        if (pass == 0)
          put16(k, (uint16_t)r);
        else
          put64(k, tc_state_get(arch, e->state_after, r));
      }
    for (uint16_t i = 0; nwide && i < e->nregs; i++) {
      int r = e->regs[i];
      unsigned sz = tc_arch_reg_size(arch, r);
      if (sz <= 8)
        continue;
      put16(k, (uint16_t)r);
      put8(k, (uint8_t)sz);
      put(k, e->state_after + tc_arch_reg_offset(arch, r), sz);
    }
    put_mem(k, e->mem, e->nmem);
    break;
  }
  case TC_EV_SYSCALL: {
    const tc_syscall_event *s = &ev->u.sys;
    put64(k, s->insn_index);
    put32(k, s->tid);
    put32(k, s->nr);
    for (int i = 0; i < 6; i++)
      put64(k, s->args[i]);
    put64(k, (uint64_t)s->ret);
    put8(k, s->unknown);
    put32(k, s->part);
    put8(k, s->more);
    put8(k, s->compat);
    put32(k, s->nmem);
    put_str(k, s->name);
    put_mem(k, s->mem, s->nmem);
    break;
  }
  case TC_EV_MAP:
  case TC_EV_UNMAP:
  case TC_EV_PROTECT: {
    const tc_map_event *m = &ev->u.map;
    bool data = ev->kind == TC_EV_MAP && m->data;
    put64(k, m->addr);
    put64(k, m->size);
    put32(k, m->prot);
    put64(k, m->file_offset);
    put8(k, data);
    put_str(k, ev->kind == TC_EV_MAP ? m->name : NULL);
    if (data)
      put(k, m->data, m->size);
    break;
  }
  case TC_EV_KEYFRAME: {
    uint32_t n = ev->u.key.state ? (uint32_t)tc_arch_state_size(arch) : 0;
    put64(k, ev->u.key.insn_index);
    put32(k, ev->u.key.tid);
    put32(k, n);
    put(k, ev->u.key.state, n);
    break;
  }
  case TC_EV_FAULT:
    put64(k, ev->u.fault.insn_index);
    put64(k, ev->u.fault.pc);
    put64(k, ev->u.fault.addr);
    put32(k, (uint32_t)ev->u.fault.kind);
    put32(k, (uint32_t)ev->u.fault.signal);
    break;
  case TC_EV_EXIT:
    put32(k, (uint32_t)ev->u.exit.reason);
    put32(k, (uint32_t)ev->u.exit.status);
    put32(k, (uint32_t)ev->u.exit.signal);
    put64(k, ev->u.exit.insn_count);
    put_str(k, ev->u.exit.message);
    break;
  case TC_EV_SIGNAL: {
    const tc_signal_event *g = &ev->u.sig;
    put64(k, g->insn_index);
    put32(k, g->tid);
    put32(k, (uint32_t)g->signal);
    put32(k, (uint32_t)g->code);
    put64(k, g->addr);
    put32(k, g->pid);
    put32(k, g->uid);
    put64(k, g->handler);
    put64(k, g->frame);
    put32(k, g->nmem);
    put_mem(k, g->mem, g->nmem);
    break;
  }
  case TC_EV_TURN:
    put64(k, ev->u.turn.turn);
    put64(k, ev->u.turn.insn_index);
    put32(k, ev->u.turn.tid);
    break;
  }
}

int tc_trace_read_packed(tc_trace *t, void *buf, size_t cap, size_t max,
                         size_t *n, size_t *len, tc_error *err) {
  const tc_arch *arch = tc_trace_get_info(t)->arch;
  size_t used = 0, count = 0;
  *n = *len = 0;
  while (!max || count < max) {
    const tc_event *ev;
    int rc = peek(t, &ev, err);
    if (rc != 1) {
      if (count) /* the end or the error at the next call */
        break;
      return rc;
    }
    packer k = {NULL, 0};
    pack(&k, arch, ev);
    if (k.n > UINT32_MAX) {
      tc_error_set(err, "an event of %zu bytes is too large to pack", k.n);
      return count ? 1 : -1;
    }
    if (!buf || k.n + 4 > cap - used) {
      if (count)
        break;
      *len = k.n + 4; /* the room it needs */
      return 1;
    }
    packer out = {(uint8_t *)buf + used, 0};
    put32(&out, (uint32_t)k.n);
    pack(&out, arch, ev);
    used += out.n;
    count++;
    take(t);
  }
  *n = count;
  *len = used;
  return 1;
}

/* ----------------------------------------------------------------- columns */

static size_t col_size(int c) {
  switch (c) {
  case TC_COL_INDEX:
  case TC_COL_PC:
  case TC_COL_MEM_INDEX:
  case TC_COL_MEM_ADDR:
    return 8;
  case TC_COL_TID:
  case TC_COL_NMEM:
  case TC_COL_MEM_SIZE:
    return 4;
  default:
    return 1;
  }
}

static void col_put(void *const *cols, int ncols, int c, size_t row,
                    uint64_t v) {
  if (c >= ncols || !cols[c])
    return;
  uint8_t *p = (uint8_t *)cols[c] + row * col_size(c);
  switch (col_size(c)) {
  case 8: {
    uint64_t x = v;
    memcpy(p, &x, 8);
    break;
  }
  case 4: {
    uint32_t x = (uint32_t)v;
    memcpy(p, &x, 4);
    break;
  }
  default:
    *p = (uint8_t)v;
  }
}

static void mem_rows(void *const *cols, int ncols, size_t *row, uint64_t index,
                     const tc_mem_access *m, uint32_t n, uint8_t extra) {
  for (uint32_t i = 0; i < n; i++, (*row)++) {
    col_put(cols, ncols, TC_COL_MEM_INDEX, *row, index);
    col_put(cols, ncols, TC_COL_MEM_ADDR, *row, m[i].addr);
    col_put(cols, ncols, TC_COL_MEM_SIZE, *row, m[i].size);
    col_put(cols, ncols, TC_COL_MEM_KIND, *row, m[i].kind | extra);
  }
}

int tc_trace_columns(tc_trace *t, void *const *cols, int ncols,
                     size_t max_insns, size_t max_mem, size_t *n_insns,
                     size_t *n_mem, tc_error *err) {
  size_t ni = 0, nm = 0;
  int rc;
  if (ncols > TC_COL_COUNT)
    ncols = TC_COL_COUNT;
  for (;;) {
    const tc_event *ev;
    rc = peek(t, &ev, err);
    if (rc != 1)
      break;
    uint32_t need = 0;
    uint64_t index = 0;
    const tc_mem_access *mem = NULL;
    bool insn = ev->kind == TC_EV_INSN;
    if (insn) {
      need = ev->u.insn.nmem;
      mem = ev->u.insn.mem;
      index = ev->u.insn.index;
    } else if (ev->kind == TC_EV_SYSCALL) {
      need = ev->u.sys.nmem;
      mem = ev->u.sys.mem;
      index = ev->u.sys.insn_index;
    } else if (ev->kind == TC_EV_SIGNAL) {
      need = ev->u.sig.nmem;
      mem = ev->u.sig.mem;
      index = ev->u.sig.insn_index;
    }
    if (need > max_mem) {
      tc_error_set(err,
                   "instruction %llu has %u memory rows, more than the %zu "
                   "asked for at most",
                   (unsigned long long)index, need, max_mem);
      rc = -1;
      break;
    }
    if ((insn && ni == max_insns) || nm + need > max_mem) {
      rc = 1;
      break;
    }
    if (insn) {
      const tc_insn_event *e = &ev->u.insn;
      col_put(cols, ncols, TC_COL_INDEX, ni, e->index);
      col_put(cols, ncols, TC_COL_PC, ni, e->pc);
      col_put(cols, ncols, TC_COL_TID, ni, e->tid);
      col_put(cols, ncols, TC_COL_SIZE, ni, e->size);
      col_put(cols, ncols, TC_COL_NMEM, ni, e->nmem);
      ni++;
    }
    mem_rows(cols, ncols, &nm, index, mem, need, insn ? 0 : TC_MEM_KERNEL);
    take(t);
  }
  *n_insns = ni;
  *n_mem = nm;
  return rc;
}

/* ---------------------------------------------------------------- timeline */

struct tc_timeline {
  tc_replay *r;
};

tc_timeline *tc_timeline_open(const char *path, const tc_format *fmt,
                              tc_error *err) {
  tc_timeline *tl = calloc(1, sizeof *tl);
  if (!tl) {
    tc_error_set(err, "out of memory");
    return NULL;
  }
  if (!(tl->r = tc_replay_open(path, fmt, TC_REPLAY_INTERVAL, err))) {
    free(tl);
    return NULL;
  }
  return tl;
}

void tc_timeline_free(tc_timeline *tl) {
  if (!tl)
    return;
  tc_replay_free(tl->r);
  free(tl);
}

uint64_t tc_timeline_insns(const tc_timeline *tl) {
  return tc_replay_insns(tl->r);
}

const char *tc_timeline_truncated(const tc_timeline *tl) {
  return tc_replay_truncated(tl->r);
}

const uint8_t *tc_timeline_state(tc_timeline *tl, uint64_t pos, uint32_t *tid,
                                 tc_error *err) {
  if (tc_replay_seek(tl->r, pos, err) < 0)
    return NULL;
  if (tid)
    *tid = tc_replay_tid(tl->r);
  return tc_replay_state(tl->r);
}

int64_t tc_timeline_read(tc_timeline *tl, uint64_t pos, uint64_t addr,
                         size_t len, uint8_t *out, tc_error *err) {
  if (tc_replay_seek(tl->r, pos, err) < 0)
    return -1;
  return (int64_t)tc_replay_read(tl->r, addr, len, out);
}
