/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "evlog.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void *dup_bytes(const void *p, size_t n) {
  if (!p)
    return NULL;
  void *q = malloc(n ? n : 1);
  if (q)
    memcpy(q, p, n);
  return q;
}

static tc_mem_access *dup_mem(const tc_mem_access *m, uint32_t n) {
  if (!n)
    return NULL;
  tc_mem_access *c = malloc(n * sizeof *c);
  for (uint32_t i = 0; i < n; i++) {
    c[i] = m[i];
    c[i].before = dup_bytes(m[i].before, m[i].size);
    c[i].after = dup_bytes(m[i].after, m[i].size);
  }
  return c;
}

int evlog_sink(void *ctx, const tc_event *ev, tc_error *err) {
  evlog *l = ctx;
  (void)err;
  if (l->n == l->cap) {
    l->cap = l->cap ? l->cap * 2 : 1024;
    l->ev = realloc(l->ev, l->cap * sizeof *l->ev);
  }
  tc_event *c = &l->ev[l->n++];
  *c = *ev;
  size_t ss = l->arch ? l->arch->state_size : 0;
  switch (ev->kind) {
  case TC_EV_INSN:
    c->u.insn.regs = dup_bytes(ev->u.insn.regs, ev->u.insn.nregs * 2u);
    c->u.insn.state_before = dup_bytes(ev->u.insn.state_before, ss);
    c->u.insn.state_after = dup_bytes(ev->u.insn.state_after, ss);
    c->u.insn.mem = dup_mem(ev->u.insn.mem, ev->u.insn.nmem);
    break;
  case TC_EV_SYSCALL:
    c->u.sys.mem = dup_mem(ev->u.sys.mem, ev->u.sys.nmem);
    break;
  case TC_EV_SIGNAL:
    c->u.sig.mem = dup_mem(ev->u.sig.mem, ev->u.sig.nmem);
    break;
  case TC_EV_MAP:
  case TC_EV_UNMAP:
  case TC_EV_PROTECT:
    c->u.map.name = ev->u.map.name ? strdup(ev->u.map.name) : NULL;
    c->u.map.data = dup_bytes(ev->u.map.data, ev->u.map.size);
    break;
  case TC_EV_KEYFRAME:
    c->u.key.state = dup_bytes(ev->u.key.state, ss);
    break;
  case TC_EV_EXIT:
    c->u.exit.message = ev->u.exit.message ? strdup(ev->u.exit.message) : NULL;
    break;
  default:
    break;
  }
  return 0;
}

static void free_mem(const tc_mem_access *m, uint32_t n) {
  for (uint32_t i = 0; i < n; i++) {
    free((void *)m[i].before);
    free((void *)m[i].after);
  }
  free((void *)m);
}

void evlog_free(evlog *l) {
  for (size_t i = 0; i < l->n; i++) {
    tc_event *e = &l->ev[i];
    switch (e->kind) {
    case TC_EV_INSN:
      free((void *)e->u.insn.regs);
      free((void *)e->u.insn.state_before);
      free((void *)e->u.insn.state_after);
      free_mem(e->u.insn.mem, e->u.insn.nmem);
      break;
    case TC_EV_SYSCALL:
      free_mem(e->u.sys.mem, e->u.sys.nmem);
      break;
    case TC_EV_SIGNAL:
      free_mem(e->u.sig.mem, e->u.sig.nmem);
      break;
    case TC_EV_MAP:
    case TC_EV_UNMAP:
    case TC_EV_PROTECT:
      free((void *)e->u.map.name);
      free((void *)e->u.map.data);
      break;
    case TC_EV_KEYFRAME:
      free((void *)e->u.key.state);
      break;
    case TC_EV_EXIT:
      free((void *)e->u.exit.message);
      break;
    default:
      break;
    }
  }
  free(l->ev);
  memset(l, 0, sizeof *l);
}

size_t evlog_count(const evlog *l, tc_event_kind kind) {
  size_t n = 0;
  for (size_t i = 0; i < l->n; i++)
    n += l->ev[i].kind == kind;
  return n;
}

int evlog_read(evlog *l, const char *path, tc_error *err) {
  const tc_format *f = tc_format_detect(path, err);
  if (!f)
    return -1;
  tc_reader *r = f->open_reader(path, err);
  if (!r)
    return -1;
  l->arch = f->reader_info(r)->arch;
  tc_event ev;
  int rc;
  while ((rc = f->next_event(r, &ev, err)) == 1)
    evlog_sink(l, &ev, err);
  f->close_reader(r);
  return rc;
}

int evlog_record(evlog *l, const tc_options *opt, const char *const *argv,
                 tc_run_result *res, tc_error *err) {
  tc_session *s = tc_session_new(opt, err);
  if (!s)
    return -1;
  int rc = tc_session_load_elf(s, argv[0], argv, err);
  if (rc == 0) {
    l->arch = tc_session_info(s)->arch;
    rc = tc_session_add_sink(s, evlog_sink, l, err);
  }
  if (rc == 0)
    rc = tc_session_run(s, res, err);
  tc_session_free(s);
  return rc;
}

static int mem_equal(const tc_mem_access *a, const tc_mem_access *b,
                     uint32_t n) {
  for (uint32_t i = 0; i < n; i++)
    if (a[i].addr != b[i].addr || a[i].size != b[i].size ||
        a[i].kind != b[i].kind ||
        memcmp(a[i].before, b[i].before, a[i].size) != 0 ||
        memcmp(a[i].after, b[i].after, a[i].size) != 0)
      return 0;
  return 1;
}

#define DIFF(cond, what)                                                       \
  do {                                                                         \
    if (cond) {                                                                \
      snprintf(why, max, "event %zu (kind %d): %s differs", i, x->kind, what); \
      return -1;                                                               \
    }                                                                          \
  } while (0)

int evlog_equal(const evlog *a, const evlog *b, char *why, size_t max) {
  size_t ss = a->arch->state_size;
  if (a->arch != b->arch) {
    snprintf(why, max, "arch differs");
    return -1;
  }
  size_t n = a->n < b->n ? a->n : b->n;
  for (size_t i = 0; i < n; i++) {
    const tc_event *x = &a->ev[i], *y = &b->ev[i];
    DIFF(x->kind != y->kind, "kind");
    switch (x->kind) {
    case TC_EV_INSN: {
      const tc_insn_event *p = &x->u.insn, *q = &y->u.insn;
      DIFF(p->index != q->index || p->pc != q->pc || p->tid != q->tid,
           "index/pc/tid");
      DIFF(p->size != q->size || memcmp(p->bytes, q->bytes, p->size), "bytes");
      DIFF(p->nregs != q->nregs || memcmp(p->regs, q->regs, p->nregs * 2u) != 0,
           "changed register list");
      DIFF(memcmp(p->state_before, q->state_before, ss), "state_before");
      DIFF(memcmp(p->state_after, q->state_after, ss), "state_after");
      DIFF(p->nmem != q->nmem || !mem_equal(p->mem, q->mem, p->nmem),
           "memory accesses");
      break;
    }
    case TC_EV_SYSCALL: {
      const tc_syscall_event *p = &x->u.sys, *q = &y->u.sys;
      DIFF(p->nr != q->nr || p->ret != q->ret || p->unknown != q->unknown ||
               memcmp(p->args, q->args, sizeof p->args) ||
               p->insn_index != q->insn_index,
           "syscall");
      DIFF(p->nmem != q->nmem || !mem_equal(p->mem, q->mem, p->nmem),
           "syscall memory");
      break;
    }
    case TC_EV_MAP:
    case TC_EV_UNMAP:
    case TC_EV_PROTECT: {
      const tc_map_event *p = &x->u.map, *q = &y->u.map;
      DIFF(p->addr != q->addr || p->size != q->size || p->prot != q->prot,
           "map range");
      if (x->kind == TC_EV_MAP) {
        DIFF(strcmp(p->name ? p->name : "", q->name ? q->name : ""),
             "map name");
        DIFF(!p->data != !q->data ||
                 (p->data && memcmp(p->data, q->data, p->size)),
             "map data");
      }
      break;
    }
    case TC_EV_KEYFRAME:
      DIFF(x->u.key.insn_index != y->u.key.insn_index ||
               memcmp(x->u.key.state, y->u.key.state, ss),
           "keyframe");
      break;
    case TC_EV_FAULT:
      DIFF(memcmp(&x->u.fault, &y->u.fault, sizeof x->u.fault), "fault");
      break;
    case TC_EV_SIGNAL: {
      const tc_signal_event *p = &x->u.sig, *q = &y->u.sig;
      DIFF(p->insn_index != q->insn_index || p->tid != q->tid ||
               p->signal != q->signal || p->code != q->code ||
               p->addr != q->addr || p->pid != q->pid || p->uid != q->uid ||
               p->handler != q->handler || p->frame != q->frame,
           "signal");
      DIFF(p->nmem != q->nmem || !mem_equal(p->mem, q->mem, p->nmem),
           "signal frame memory");
      break;
    }
    case TC_EV_EXIT:
      DIFF(x->u.exit.reason != y->u.exit.reason ||
               x->u.exit.status != y->u.exit.status ||
               x->u.exit.insn_count != y->u.exit.insn_count,
           "exit");
      break;
    case TC_EV_TURN:
      DIFF(x->u.turn.turn != y->u.turn.turn ||
               x->u.turn.insn_index != y->u.turn.insn_index ||
               x->u.turn.tid != y->u.turn.tid,
           "turn");
      break;
    }
  }
  if (a->n != b->n) {
    snprintf(why, max, "event counts differ: %zu vs %zu", a->n, b->n);
    return -1;
  }
  return 0;
}

/* A hand-made mips64el (n64) recording, since Unicorn 2.0.1 cannot run
 * one: daddiu v0, v0, 1; sd ra, 8(sp); ld t0, 8(sp); syscall exit. */
int evlog_write_mips64el_tct(const char *ref, tc_error *err) {
  const tc_arch *a = tc_arch_by_id(TC_ARCH_MIPS64EL);
  const tc_format *tct = tc_format_by_name("tct");
  if (!a || !tct) {
    tc_error_set(err, "no mips64el arch or tct format");
    return -1;
  }
  static uint8_t text[4096];
  static const uint32_t words[4] = {0x64420001,  /* daddiu v0, v0, 1 */
                                    0xffbf0008,  /* sd ra, 8(sp) */
                                    0xdfa80008,  /* ld t0, 8(sp) */
                                    0x0000000c}; /* syscall */
  for (int i = 0; i < 16; i++)
    text[i] = (uint8_t)(words[i / 4] >> (8 * (i % 4)));
  const uint64_t base = 0x120000000ull, sp = 0x7fff0000;
  const uint64_t ra = 0x8877665544332211ull;
  const int v0 = tc_arch_reg_index(a, "v0"), t0 = tc_arch_reg_index(a, "t0");
  size_t ss = a->state_size;
  uint8_t *st[5];
  for (int i = 0; i < 5; i++)
    st[i] = calloc(1, ss);
  tc_state_set(a, st[0], a->pc_reg, base);
  tc_state_set(a, st[0], tc_arch_reg_index(a, "sp"), sp);
  tc_state_set(a, st[0], v0, 0x1122334455667788ull);
  tc_state_set(a, st[0], tc_arch_reg_index(a, "ra"), ra);
  for (int i = 1; i < 5; i++) {
    memcpy(st[i], st[i - 1], ss);
    tc_state_set(a, st[i], a->pc_reg, base + 4 * (uint64_t)i);
    if (i == 1)
      tc_state_set(a, st[i], v0, 0x1122334455667789ull);
    if (i == 3)
      tc_state_set(a, st[i], t0, ra);
    if (i == 4)
      tc_state_set(a, st[i], v0, 0); /* exit's "return" */
  }
  const uint16_t ch[4][2] = {{(uint16_t)v0, (uint16_t)a->pc_reg},
                             {(uint16_t)a->pc_reg, 0},
                             {(uint16_t)t0, (uint16_t)a->pc_reg},
                             {(uint16_t)v0, (uint16_t)a->pc_reg}};
  const uint16_t nch[4] = {2, 1, 2, 2};
  uint8_t zero8[8] = {0}, ra8[8];
  for (int i = 0; i < 8; i++)
    ra8[i] = (uint8_t)(ra >> (8 * i));
  tc_mem_access sd = {sp + 8, 8, TC_MEM_WRITE, zero8, ra8};
  tc_mem_access ld = {sp + 8, 8, TC_MEM_READ, ra8, ra8};
  tc_event ev[10];
  size_t n = 0;
  memset(ev, 0, sizeof ev);
  ev[n].kind = TC_EV_MAP;
  ev[n++].u.map = (tc_map_event){base, 0x1000, 5, "/bin/prog64", 0, text};
  ev[n].kind = TC_EV_MAP;
  ev[n++].u.map = (tc_map_event){sp - 0x10000, 0x20000, 3, "[stack]", 0, NULL};
  ev[n].kind = TC_EV_KEYFRAME;
  ev[n++].u.key = (tc_keyframe_event){0, 42, st[0]};
  for (int i = 0; i < 4; i++) {
    ev[n].kind = TC_EV_INSN;
    tc_insn_event *in = &ev[n++].u.insn;
    in->index = (uint64_t)i;
    in->pc = base + 4 * (uint64_t)i;
    in->tid = 42;
    in->size = 4;
    memcpy(in->bytes, text + 4 * i, 4);
    in->nregs = nch[i];
    in->regs = ch[i];
    in->state_before = st[i];
    in->state_after = st[i + 1];
    in->nmem = i == 1 || i == 2;
    in->mem = i == 1 ? &sd : i == 2 ? &ld : NULL;
  }
  ev[n].kind = TC_EV_SYSCALL;
  ev[n++].u.sys =
      (tc_syscall_event){3, 42, 5058, "exit", {0}, 0, 0, 0, NULL, 0, 0, 0};
  ev[n].kind = TC_EV_EXIT;
  ev[n++].u.exit = (tc_exit_event){TC_EXIT_EXITED, 0, 0, 4, NULL};
  tc_trace_info info = {0};
  info.arch = a;
  info.entry = base;
  info.pid = 42;
  info.exe_path = "/bin/prog64";
  info.has_memory = 1;
  info.initial_state = st[0];
  int rc = 0;
  tc_writer *w = tct->open_writer(ref, &info, err);
  if (!w)
    rc = -1;
  for (size_t i = 0; w && rc == 0 && i < n; i++)
    rc = tct->write_event(w, &ev[i], err);
  if (w && tct->close_writer(w, err) < 0)
    rc = -1;
  for (int i = 0; i < 5; i++)
    free(st[i]);
  return rc;
}

int evlog_exact_equal(const char *prog, char *why, size_t max) {
  evlog fast, exact;
  memset(&fast, 0, sizeof fast);
  memset(&exact, 0, sizeof exact);
  tc_options o;
  tc_options_init(&o);
  o.quiet = 1;
  o.keyframe_interval = 1000;
  int devnull = open("/dev/null", O_WRONLY);
  o.stdout_fd = o.stderr_fd = devnull;
  const char *argv[] = {prog, NULL};
  tc_error err = {{0}};
  int rc = evlog_record(&fast, &o, argv, NULL, &err);
  o.exact = 1;
  if (rc == 0)
    rc = evlog_record(&exact, &o, argv, NULL, &err);
  if (rc < 0)
    snprintf(why, max, "record: %s", err.msg);
  else if (evlog_count(&fast, TC_EV_INSN) < 50) {
    snprintf(why, max, "only %zu instructions", evlog_count(&fast, TC_EV_INSN));
    rc = 1;
  } else
    rc = evlog_equal(&fast, &exact, why, max) ? 1 : 0;
  evlog_free(&fast);
  evlog_free(&exact);
  if (devnull >= 0)
    close(devnull);
  return rc;
}
