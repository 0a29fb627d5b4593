/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lib/pipe: trace writers on worker threads (pipe.h). */
#include "pipe.h"
#include "common/notice.h"
#include "common/threads.h"

#include "common/arch.h"
#include "common/small_copy.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BLOCK_SIZE (256u << 10)
/* Queued at most, whatever the trace length: 8 MiB of blocks, plus one
 * (a block holds at least one event: a MAP's data may make one larger;
 * it then waits until one block is left). */
#define MAX_QUEUED (32 * (size_t)BLOCK_SIZE)
#define MAX_CONSUMERS 16

typedef struct pblock {
  struct pblock *next;
  size_t len, cap;
  int refs; /* consumers that have not finished it */
  uint8_t data[];
} pblock;

/* Each consumer's fields in cache lines of their own, and the producer's
 * apart from them: a consumer thread writes its fields for every event,
 * and sharing a line with what the producer reads for every event cost
 * the producer a cache miss per event (a fifth of tc_pipe_push). */
typedef struct consumer {
  _Alignas(64) tc_pipe *p;
  tc_pipe_consumer fn;
  void *ctx;
  pthread_t thread;
  /* the rebuilt states: before = the current one */
  uint8_t *before, *after;
  bool have_key; /* check mode compares only from the first KEYFRAME */
  /* registers after differs from before in; an instruction's register
   * list; arch->nregs entries each (the recorder lists a register once) */
  uint16_t *stale, *regs;
  int nstale;
  bool stale_all;
  bool failed; /* out of memory: takes no more events */
} consumer;

struct tc_pipe {
  /* the producer's (the recording thread) */
  _Alignas(64) const tc_arch *arch;
  int n;
  bool check;
  pblock *cur; /* being filled by the producer, not yet published */
  bool have_key;
  consumer c[MAX_CONSUMERS];
  /* shared, under mu */
  _Alignas(64) pthread_mutex_t mu;
  pthread_cond_t data, space;
  pblock *first, *last; /* published, oldest first */
  int nblocks;
  size_t queued; /* their bytes (caps) */
  bool ended;
  int failed; /* bit i: consumer i ran out of memory (atomic) */
};

/* ------------------------------------------------------------ producer */

static void publish(tc_pipe *p) {
  pblock *b = p->cur;
  p->cur = NULL;
  if (!b || !b->len) {
    free(b);
    return;
  }
  b->refs = p->n;
  pthread_mutex_lock(&p->mu);
  /* A consumer keeps the last block until the next one comes: with one
   * block queued, waiting could be for ever. */
  while (p->nblocks > 1 && p->queued + b->cap > MAX_QUEUED)
    pthread_cond_wait(&p->space, &p->mu);
  p->queued += b->cap;
  if (p->last)
    p->last->next = b;
  else
    p->first = b;
  p->last = b;
  p->nblocks++;
  pthread_cond_broadcast(&p->data);
  pthread_mutex_unlock(&p->mu);
}

/* Test hook (pipe.h): blocks that may still be allocated, or -1. */
static long long blocks_left = -1;

void tc_pipe_test_limit_blocks(long long n) { blocks_left = n; }

static pblock *new_block(size_t cap) {
  if (blocks_left == 0)
    return NULL;
  if (blocks_left > 0)
    blocks_left--;
  return malloc(sizeof(pblock) + cap);
}

/* Room for n bytes at the end of the current block; NULL if out of
 * memory (the caller fails: nothing of the event is queued). */
static uint8_t *reserve(tc_pipe *p, size_t n) {
  if (p->cur && p->cur->cap - p->cur->len < n)
    publish(p);
  if (!p->cur) {
    size_t cap = n > BLOCK_SIZE ? n : BLOCK_SIZE;
    p->cur = new_block(cap);
    if (!p->cur)
      return NULL;
    p->cur->next = NULL;
    p->cur->len = 0;
    p->cur->cap = cap;
  }
  return p->cur->data + p->cur->len;
}

/* Small copies by constant size (common/small_copy.h): a libc call per
 * register or access was a third of the queue's cost. */
static inline uint8_t *put(uint8_t *q, const void *src, size_t n) {
  return tc_put_small(q, src, n);
}

static size_t str_room(const char *s) { return s ? strlen(s) + 1 : 0; }

static uint8_t *put_str(uint8_t *q, const char *s) {
  uint8_t has = s != NULL;
  q = put(q, &has, 1);
  return s ? put(q, s, strlen(s) + 1) : q;
}

static size_t mem_room(uint32_t n, const tc_mem_access *m) {
  size_t b = 0;
  for (uint32_t i = 0; i < n; i++)
    b += sizeof *m + 2 * (size_t)m[i].size;
  return b;
}

/* The accesses, then their bytes (a read's after is its before). */
static uint8_t *put_mem(uint8_t *q, uint32_t n, const tc_mem_access *m) {
  if (!n)
    return q;
  q = put(q, m, n * sizeof *m);
  for (uint32_t i = 0; i < n; i++) {
    q = put(q, m[i].before, m[i].size);
    if (m[i].kind == TC_MEM_WRITE)
      q = put(q, m[i].after, m[i].size);
  }
  return q;
}

int tc_pipe_push(tc_pipe *p, const tc_event *ev, tc_error *err) {
  if (__atomic_load_n(&p->failed, __ATOMIC_RELAXED)) {
    tc_error_set(err, "out of memory in a trace writer thread");
    return -1;
  }
  const tc_arch *a = p->arch;
  size_t ss = a->state_size;
  size_t room = 1 + sizeof *ev + 48;
  switch (ev->kind) {
  case TC_EV_INSN: {
    const tc_insn_event *e = &ev->u.insn;
    if (e->nregs > a->nregs) { /* the consumers' lists hold nregs */
      tc_error_set(err,
                   "instruction %llu lists %d changed registers, more "
                   "than the %d of %s",
                   (unsigned long long)e->index, e->nregs, a->nregs, a->name);
      return -1;
    }
    room += 2 * (size_t)e->nregs + mem_room(e->nmem, e->mem);
    for (int i = 0; i < e->nregs; i++)
      room += a->regs[e->regs[i]].size;
    if (!p->have_key || p->check)
      room += 2 * ss;
    break;
  }
  case TC_EV_SYSCALL:
    room += str_room(ev->u.sys.name) + mem_room(ev->u.sys.nmem, ev->u.sys.mem);
    break;
  case TC_EV_MAP:
  case TC_EV_UNMAP:
  case TC_EV_PROTECT:
    room += str_room(ev->u.map.name) +
            (ev->kind == TC_EV_MAP && ev->u.map.data ? ev->u.map.size : 0);
    break;
  case TC_EV_KEYFRAME:
    room += ss;
    break;
  case TC_EV_SIGNAL:
    room += mem_room(ev->u.sig.nmem, ev->u.sig.mem);
    break;
  case TC_EV_EXIT:
    room += str_room(ev->u.exit.message);
    break;
  default:
    break;
  }
  uint8_t *q = reserve(p, room), *start = q;
  if (!q) {
    tc_error_set(err, "out of memory queueing trace events");
    return -1;
  }
  *q++ = (uint8_t)ev->kind;
  if (ev->kind != TC_EV_INSN)
    q = put(q, ev, sizeof *ev);
  switch (ev->kind) {
  case TC_EV_INSN: {
    /* the instruction's own fields only: a cache line per instruction
     * crosses to the writer's core, not the whole union */
    const tc_insn_event *e = &ev->u.insn;
    uint8_t whole = !p->have_key || p->check;
    uint8_t size = e->size > 16 ? 16 : e->size;
    q = put(q, &e->index, 8);
    q = put(q, &e->pc, 8);
    q = put(q, &e->tid, 4);
    q = put(q, &e->nregs, 2);
    q = put(q, &e->nmem, 4);
    *q++ = e->size;
    *q++ = whole;
    q = put(q, e->bytes, size);
    if (e->nregs)
      q = put(q, e->regs, 2 * (size_t)e->nregs);
    for (int i = 0; i < e->nregs; i++) {
      const tc_reg_info *ri = &a->regs[e->regs[i]];
      q = put(q, e->state_after + ri->offset, ri->size);
    }
    if (whole) {
      q = put(q, e->state_before, ss);
      q = put(q, e->state_after, ss);
    }
    q = put_mem(q, e->nmem, e->mem);
    break;
  }
  case TC_EV_SYSCALL:
    q = put_str(q, ev->u.sys.name);
    q = put_mem(q, ev->u.sys.nmem, ev->u.sys.mem);
    break;
  case TC_EV_MAP:
  case TC_EV_UNMAP:
  case TC_EV_PROTECT:
    q = put_str(q, ev->u.map.name);
    if (ev->kind == TC_EV_MAP && ev->u.map.data)
      q = put(q, ev->u.map.data, ev->u.map.size);
    break;
  case TC_EV_KEYFRAME:
    q = put(q, ev->u.key.state, ss);
    p->have_key = true;
    break;
  case TC_EV_SIGNAL:
    q = put_mem(q, ev->u.sig.nmem, ev->u.sig.mem);
    break;
  case TC_EV_EXIT:
    q = put_str(q, ev->u.exit.message);
    break;
  default:
    break;
  }
  p->cur->len += (size_t)(q - start);
  return 0;
}

/* ------------------------------------------------------------ consumer */

static inline const uint8_t *get(const uint8_t *q, void *dst, size_t n) {
  tc_copy_small(dst, q, n);
  return q + n;
}

static const uint8_t *get_str(const uint8_t *q, const char **s) {
  uint8_t has = *q++;
  *s = has ? (const char *)q : NULL;
  return has ? q + strlen((const char *)q) + 1 : q;
}

/* Test hook (pipe.h): consumer allocations that may still succeed, or
 * -1 (atomic: consumers run on their threads). */
static long long consumer_allocs_left = -1;

void tc_pipe_test_limit_consumer_allocs(long long n) {
  __atomic_store_n(&consumer_allocs_left, n, __ATOMIC_SEQ_CST);
}

static void *consumer_realloc(void *old, size_t size) {
  long long left = __atomic_load_n(&consumer_allocs_left, __ATOMIC_SEQ_CST);
  while (left >= 0) {
    if (left == 0)
      return NULL;
    if (__atomic_compare_exchange_n(&consumer_allocs_left, &left, left - 1,
                                    false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
      break;
  }
  return realloc(old, size);
}

/* Rebuilds n accesses into m (room for n), pointing into the block; NULL
 * if out of memory. */
static const uint8_t *get_mem(const uint8_t *q, uint32_t n, tc_mem_access **m,
                              tc_mem_access **buf, size_t *cap) {
  if (!n) {
    *m = NULL;
    return q;
  }
  if (n > *cap) {
    size_t c = n > 2 * *cap ? n : 2 * *cap;
    tc_mem_access *nb = consumer_realloc(*buf, c * sizeof *nb);
    if (!nb)
      return NULL;
    *buf = nb, *cap = c;
  }
  q = get(q, *buf, n * sizeof **buf);
  for (uint32_t i = 0; i < n; i++) {
    tc_mem_access *x = &(*buf)[i];
    x->before = q;
    q += x->size;
    if (x->kind == TC_MEM_WRITE) {
      x->after = q;
      q += x->size;
    } else {
      x->after = x->before;
    }
  }
  *m = *buf;
  return q;
}

static void sync_after(consumer *c, const tc_arch *a) {
  if (c->stale_all) {
    memcpy(c->after, c->before, a->state_size);
    c->stale_all = false;
    return;
  }
  for (int k = 0; k < c->nstale; k++) {
    const tc_reg_info *ri = &a->regs[c->stale[k]];
    tc_copy_small(c->after + ri->offset, c->before + ri->offset, ri->size);
  }
}

/* Hands b's events to the consumer; false if out of memory (the event
 * in hand and the rest are not given). */
static bool consume_block(consumer *c, const pblock *b, tc_mem_access **mbuf,
                          size_t *mcap) {
  const tc_arch *a = c->p->arch;
  size_t ss = a->state_size;
  const uint8_t *q = b->data, *end = b->data + b->len;
  uint16_t *regs = c->regs;
  while (q < end) {
    tc_event ev;
    tc_mem_access *m = NULL;
    uint8_t kind = *q++;
    if (kind != TC_EV_INSN)
      q = get(q, &ev, sizeof ev);
    switch (kind) {
    case TC_EV_INSN: {
      ev.kind = TC_EV_INSN;
      tc_insn_event *e = &ev.u.insn;
      q = get(q, &e->index, 8);
      q = get(q, &e->pc, 8);
      q = get(q, &e->tid, 4);
      q = get(q, &e->nregs, 2);
      q = get(q, &e->nmem, 4);
      e->size = *q++;
      uint8_t whole = *q++;
      uint8_t size = e->size > 16 ? 16 : e->size;
      memset(e->bytes, 0, sizeof e->bytes);
      q = get(q, e->bytes, size);
      q = get(q, regs, 2 * (size_t)e->nregs);
      e->regs = regs;
      sync_after(c, a);
      for (int i = 0; i < e->nregs; i++) {
        const tc_reg_info *ri = &a->regs[regs[i]];
        q = get(q, c->after + ri->offset, ri->size);
      }
      if (whole) {
        bool chk = c->p->check && c->have_key;
        if (chk && memcmp(c->before, q, ss) != 0) {
          tc_notice("pipe check: instruction %llu: the "
                    "state before differs from the one rebuilt",
                    (unsigned long long)e->index);
          abort();
        }
        memcpy(c->before, q, ss);
        q += ss;
        if (chk && memcmp(c->after, q, ss) != 0) {
          tc_notice("pipe check: instruction %llu: the "
                    "state after differs from the one rebuilt",
                    (unsigned long long)e->index);
          abort();
        }
        memcpy(c->after, q, ss);
        q += ss;
      }
      e->state_before = c->before;
      e->state_after = c->after;
      if (!(q = get_mem(q, e->nmem, &m, mbuf, mcap)))
        return false;
      e->mem = m;
      c->fn(c->ctx, &ev);
      uint8_t *t = c->before; /* the after state is the next one */
      c->before = c->after;
      c->after = t;
      memcpy(c->stale, regs, 2 * (size_t)e->nregs);
      c->nstale = e->nregs;
      if (whole)
        c->stale_all = true;
      continue;
    }
    case TC_EV_SYSCALL:
      q = get_str(q, &ev.u.sys.name);
      if (!(q = get_mem(q, ev.u.sys.nmem, &m, mbuf, mcap)))
        return false;
      ev.u.sys.mem = m;
      break;
    case TC_EV_MAP:
    case TC_EV_UNMAP:
    case TC_EV_PROTECT:
      q = get_str(q, &ev.u.map.name);
      if (ev.kind == TC_EV_MAP && ev.u.map.data) {
        ev.u.map.data = q;
        q += ev.u.map.size;
      }
      break;
    case TC_EV_KEYFRAME:
      memcpy(c->before, q, ss);
      q += ss;
      c->stale_all = true;
      c->have_key = true;
      ev.u.key.state = c->before;
      break;
    case TC_EV_SIGNAL:
      if (!(q = get_mem(q, ev.u.sig.nmem, &m, mbuf, mcap)))
        return false;
      ev.u.sig.mem = m;
      break;
    case TC_EV_EXIT:
      q = get_str(q, &ev.u.exit.message);
      break;
    default:
      break;
    }
    c->fn(c->ctx, &ev);
  }
  return true;
}

/* Done with b: the last consumer to finish it frees it (blocks are
 * finished in order by each consumer, so b is the oldest). */
static void release(tc_pipe *p, pblock *b) {
  pthread_mutex_lock(&p->mu);
  if (--b->refs == 0) {
    p->first = b->next;
    if (!p->first)
      p->last = NULL;
    p->nblocks--;
    p->queued -= b->cap;
    free(b);
    pthread_cond_broadcast(&p->space);
  }
  pthread_mutex_unlock(&p->mu);
}

static void *consumer_main(void *arg) {
  consumer *c = arg;
  tc_pipe *p = c->p;
  tc_mem_access *mbuf = NULL;
  size_t mcap = 0;
  pblock *prev = NULL;
  for (;;) {
    pthread_mutex_lock(&p->mu);
    pblock *b;
    while (!(b = prev ? prev->next : p->first) && !p->ended)
      pthread_cond_wait(&p->data, &p->mu);
    pthread_mutex_unlock(&p->mu);
    if (prev)
      release(p, prev);
    if (!b)
      break;
    /* a consumer that failed still releases the blocks it passes */
    if (!c->failed && !consume_block(c, b, &mbuf, &mcap)) {
      c->failed = true;
      __atomic_fetch_or(&p->failed, 1 << (c - p->c), __ATOMIC_RELEASE);
    }
    prev = b;
  }
  free(mbuf);
  return NULL;
}

/* ---------------------------------------------------------------- API */

static void free_consumer(consumer *c) {
  free(c->before);
  free(c->after);
  free(c->stale);
  free(c->regs);
}

tc_pipe *tc_pipe_new(const tc_arch *arch, int nconsumers,
                     const tc_pipe_consumer *fns, void *const *ctxs, bool check,
                     tc_error *err) {
  if (nconsumers < 1 || nconsumers > MAX_CONSUMERS) {
    tc_error_set(err, "writer threads: %d consumers", nconsumers);
    return NULL;
  }
  tc_pipe *p = aligned_alloc(64, sizeof *p); /* sizeof: a multiple of 64 */
  if (p)
    memset(p, 0, sizeof *p);
  if (!p) {
    tc_error_set(err, "out of memory");
    return NULL;
  }
  p->arch = arch;
  p->check = check;
  pthread_mutex_init(&p->mu, NULL);
  pthread_cond_init(&p->data, NULL);
  pthread_cond_init(&p->space, NULL);
  for (int i = 0; i < nconsumers; i++) {
    consumer *c = &p->c[i];
    c->p = p;
    c->fn = fns[i];
    c->ctx = ctxs[i];
    c->before = calloc(1, arch->state_size);
    c->after = calloc(1, arch->state_size);
    size_t nregs = arch->nregs > 0 ? (size_t)arch->nregs : 1;
    c->stale = calloc(nregs, sizeof *c->stale);
    c->regs = calloc(nregs, sizeof *c->regs);
    c->stale_all = true;
    if (!c->before || !c->after || !c->stale || !c->regs ||
        tc_thread_create(&c->thread, consumer_main, c) != 0) {
      free_consumer(c);
      tc_error_set(err, "cannot start a trace writer thread");
      p->n = i;
      tc_pipe_close(p);
      return NULL;
    }
    p->n = i + 1;
  }
  return p;
}

int tc_pipe_close(tc_pipe *p) {
  if (!p)
    return 0;
  if (p->n)
    publish(p);
  else {
    free(p->cur);
    p->cur = NULL;
  }
  pthread_mutex_lock(&p->mu);
  p->ended = true;
  pthread_cond_broadcast(&p->data);
  pthread_mutex_unlock(&p->mu);
  for (int i = 0; i < p->n; i++) {
    pthread_join(p->c[i].thread, NULL);
    free_consumer(&p->c[i]);
  }
  while (p->first) { /* none, unless no consumer ran */
    pblock *b = p->first;
    p->first = b->next;
    free(b);
  }
  pthread_mutex_destroy(&p->mu);
  pthread_cond_destroy(&p->data);
  pthread_cond_destroy(&p->space);
  int failed = p->failed; /* the threads are joined */
  free(p);
  return failed;
}
