/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The recorder: per-instruction code hook, memory hooks and kernel
 * observer, turned into tc_events.
 *
 * Record i is emitted at the code hook of instruction i+1 (or at the end):
 * by then its register and memory effects are known, a stop inside a hook
 * leaves no phantom record, and `rep` iterations collapse naturally. Only
 * the registers an instruction can write (from the per-PC decode cache)
 * are read after it; --exact reads all of them, and keyframes re-check the
 * whole state. */
#include "recorder/recorder.h"
#include "common/notice.h"

#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/small_copy.h"
#include "recorder/decode.h"

#define MAX_EXEC_RANGES 64

typedef struct mem_rec {
  uint64_t addr;
  uint32_t size;
  uint8_t kind;
  size_t off; /* before bytes at arena+off, after bytes at arena+off+size */
} mem_rec;

/* A growable list of accesses with their bytes. */
typedef struct mem_list {
  mem_rec *recs;
  size_t n, cap;
  uint8_t *arena;
  size_t len, acap;
  tc_mem_access *out; /* built at emit time */
  size_t outcap;
} mem_list;

typedef struct kernel_ev {
  tc_event_kind kind;
  uint64_t addr, size;
  uint32_t prot;
  uint64_t file_offset;
  char name[128];
} kernel_ev;

struct tc_recorder {
  /* What the hooks use for every instruction, first: a few cache lines
   * (the rest of the struct is large). */
  tc_emu *emu;
  const tc_arch *arch;
  tc_decoder *dec;
  tc_emit_fn emit;
  void *emit_ctx;
  uint32_t keyframe_interval;
  uint32_t keyframe_countdown; /* instructions until the next keyframe */
  /* Per register, its place in a state and how it is read (directly
   * from the engine, emu/engine/regfile.h, or through Unicorn's API), in one
   * 16-byte record: the hot paths touch one cache line per register. */
  struct reg_desc *rd;
  uint8_t *state_cur, *state_next, *state_tmp;
  const tc_regfile *regfile;
  bool check_reads; /* TRACECORN_REGFILE=check */
  bool windowed, skipping;
  /* The instruction whose code hook ran and whose record is pending. */
  bool have_pending;
  bool rep_tail; /* the next hook at the same PC is a rep no-op pass */
  uint64_t rep_pc;
  /* mips64el on an engine with the delay-slot defect (emu->mips_ds_guard,
   * hook_code): the last branch run, whether the next hook follows a
   * delay slot that accessed memory, the last hook's PC. */
  bool ds_guard, ds_fads_next;
  uint64_t ds_branch_pc, ds_last_pc;
  /* The pending instruction's decode: the cache slot itself (no copy per
   * instruction), or pend_own once the slot may change under it
   * (pend_detach) or when it was rebuilt from memory. */
  const tc_decoded *pendp;
  mem_list mem;
  uint64_t insn_index; /* instructions emitted */
  uint64_t executed;   /* code hooks counted against --max-insns */
  /* The code hook stops at `executed == insn_limit`: the --max-insns
   * limit or the end of the running thread's quantum, whichever is first
   * (one comparison per instruction, threads or not). */
  uint64_t insn_limit, max_limit;
  /* The running thread's turn ends before this instruction (UINT64_MAX:
   * it shares the CPU with nobody); insn_limit is at most this. */
  uint64_t turn_end;
  /* Instructions still guarded by the last guarding one (a mips delay
   * slot, a Thumb IT block: tc_decoded.guards): a turn that ends there
   * ends after them, as the engine cannot resume inside. */
  uint8_t guard_left;
  volatile sig_atomic_t stop_requested;
  volatile sig_atomic_t in_engine, in_emit;
  bool oom;
  uint16_t *changed, *stale; /* the two lists swap after each instruction */
  int nstale;
  bool stale_all;
  bool kspooled;
  bool have_sys;
  bool in_signal_frame, have_sig;

  /* The rest. */
  bool exact, memory;
  uint64_t max_insns;
  uint8_t (*scratch)[64]; /* per register, Unicorn may overwrite > size */
  int *uc_ids;
  /* The registers read_all_regs asks Unicorn for: those the mode has
   * (tc_emu_reg_absent); the others keep their zeroed scratch. */
  int *all_ids, nall;
  void **all_ptrs;
  void **scratch_ptrs;
  int flags_reg; /* computed directly, or -1 */
  int count_reg; /* rcx/ecx for rep detection */
  /* The recording window (tc_recorder_set_window): instructions outside
   * it run but are not recorded; `skipping` while outside. */
  tc_window win;
  bool func_active; /* inside a --trace-func activation */
  /* the session's look at each map (tc_recorder_set_map_hook) */
  tc_map_hook map_hook;
  void *map_hook_ctx;
  uint64_t func_sp, func_ret;
  /* Activations are per thread: the others' wait here while one runs. */
  struct {
    uint32_t tid;
    bool active;
    uint64_t sp, ret;
  } func_saved[64];
  int nfunc_saved;
  /* An instruction tracecorn runs itself (decode.h: emulate), stopped
   * before Unicorn runs it. */
  uint8_t emulate_kind, emulate_size;
  uint8_t emulate_bytes[2]; /* x87: the opcode, as decoded */
  uint64_t emulate_at;

  tc_decoded pend_own;

  /* Kernel effects of the pending instruction: the first KMEM_INLINE
   * bytes in kmem, the rest spooled to a temporary file (kspool) and
   * emitted as further parts of the SYSCALL event. */
  mem_list kmem;
  FILE *kspool;
  tc_syscall_record sys;
  /* A signal delivered to a guest handler: its frame (the kernel writes
   * after on_signal_frame) and the event, emitted after the SYSCALL that
   * sent it or right away after a fault. */
  mem_list sigmem;
  tc_signal_event sig;
  bool fault_emitted;
  kernel_ev *kev;
  size_t nkev, capkev;

  /* tc_recorder_set_turn: a TURN event goes before the next event */
  bool turn_pending;
  uint64_t turn_no;
  uint64_t quantum; /* instructions per thread turn */
  bool switch_due;  /* the quantum ended: the scheduler runs next */
  bool turn_ending; /* switch_thread after a quantum's end */
  bool deadlock;    /* every thread blocked for good */
  bool hit_max;
  int stop_status; /* 128 + the signal that asked to stop */
  /* The watchdog's way out of an engine that does not return after a
   * stop (tc_recorder_escape): set while inside uc_emu_start, and while a
   * writer is being given an event (no escape then). */
  sigjmp_buf escape;
  bool escaped;
  bool stopped;
  /* Turn by turn (tc_recorder_turn): every thread waits (the session runs
   * another process), the run ended, why it did. */
  bool blocked, done, began, deadlock_said;
  int run_rc;
  const char *message;
  char msgbuf[256];
  bool warned_drift;

  uint64_t exec_lo[MAX_EXEC_RANGES], exec_hi[MAX_EXEC_RANGES];
  int nexec;
  bool exec_overflow; /* more executable ranges than exec_lo holds */

  /* record -j (lib/parallel.c, tc_recorder_set_light): the run phase
   * has only a code hook that counts (light) and emits nothing; it stops
   * before instruction ckpt_next and calls ckpt there (a fork), every
   * ckpt_every instructions. lpend: the last instruction was a rep, at
   * lpend_pc (its passes count as hook_code counts them). A
   * segment (tc_recorder_materialize) stops before instruction seg_to:
   * seg_end. */
  bool light, light_x86, ckpt_due, seg_end, lpend;
  bool test_early; /* every checkpoint early (a test hook) */
  uint64_t lpend_pc, ckpt_every, ckpt_next, seg_to;
  tc_checkpoint_fn ckpt;
  void *ckpt_ctx;
  uc_hook light_hook;
  const char *light_refusal; /* what the run phase cannot log */
  tc_fault_ops fault_ops;    /* a fault's delivery (record -j), or none */
  /* The run phase's look at an x86 instruction (hook_code_light): 16
   * bytes an entry, direct-mapped, 4 to a cache line where the decode
   * cache has one: whether it needs its decode (a rep, an instruction
   * tracecorn runs itself, a privileged one). Cleared with the decode
   * cache's invalidations. */
  uint64_t *lcache;

  uint16_t changed_buf[512];
  /* Registers in which state_next may differ from state_cur: the last
   * instruction's changes (the buffers swap), or all after a resync. */
  uint16_t stale_buf[512];
  tc_run_result stats;
};

static void emit_event(tc_recorder *r, const tc_event *ev);

/* The bytes of a register the engine's mode lacks (tc_emu_reg_absent). */
static const uint8_t absent_zero[64];

/* How finalize reads a register after an instruction. */
enum {
  RD_BATCH, /* through uc_reg_read_batch */
  RD_DIRECT8,
  RD_DIRECT4,
  RD_DIRECT16,
  RD_DIRECT, /* other sizes */
  RD_FLAGS,  /* x86 flags from the lazy flags state */
  RD_PC      /* the next hook's address (set before the loop) */
};

/* An entry: the PC << 12 | the size << 4 | LC_* (0: empty; user-space
 * PCs are under 2^52). */
#define LCACHE_BITS 13
#define LC_REP 1u  /* a rep instruction */
#define LC_SLOW 2u /* privileged, run by tracecorn: its decode is needed */
typedef uint64_t lcache_ent;

static void lcache_clear(tc_recorder *r) {
  if (r->lcache)
    memset(r->lcache, 0, sizeof(lcache_ent) << LCACHE_BITS);
}

typedef struct reg_desc {
  const uint8_t *src; /* RD_DIRECT*: its bytes in the engine */
  uint32_t off;       /* in a state */
  uint16_t size;
  uint8_t kind;
} reg_desc;

/* ------------------------------------------------------------ mem lists */

static inline uint8_t *mem_reserve(tc_recorder *r, mem_list *m, size_t bytes) {
  if (m->len + bytes > m->acap) {
    size_t cap = m->acap ? m->acap * 2 : 4096;
    while (cap < m->len + bytes)
      cap *= 2;
    uint8_t *na = realloc(m->arena, cap);
    if (!na) {
      r->oom = true;
      return NULL;
    }
    m->arena = na;
    m->acap = cap;
  }
  return m->arena + m->len;
}

static void mem_add(tc_recorder *r, mem_list *m, uint64_t addr, uint32_t size,
                    uint8_t kind, const uint8_t *before, const uint8_t *after) {
  if (m->n > 0) {
    mem_rec *last = &m->recs[m->n - 1];
    /* Unicorn repeats some callbacks (page-crossing reads): drop exact
     * duplicates. */
    if (last->kind == kind && last->addr == addr && last->size == size &&
        memcmp(m->arena + last->off, before, size) == 0 &&
        memcmp(m->arena + last->off + size, after, size) == 0)
      return;
    /* Wide accesses arrive split (movdqu = 2 x 8 bytes): merge adjacent
     * pieces of the same kind back into one access. */
    if (last->kind == kind && last->addr + last->size == addr &&
        last->size + size <= 4096 && last->off + 2 * last->size == m->len) {
      uint8_t *p = mem_reserve(r, m, 2 * (size_t)size);
      if (!p)
        return;
      uint8_t *base = m->arena + last->off;
      /* layout: before[old] after[old] -> before[old+new] after[old+new] */
      memmove(base + last->size + size, base + last->size, last->size);
      memcpy(base + last->size, before, size);
      memcpy(base + 2 * last->size + size, after, size);
      last->size += size;
      m->len += 2 * (size_t)size;
      return;
    }
  }
  if (m->n == m->cap) {
    size_t cap = m->cap ? m->cap * 2 : 16;
    mem_rec *nr = realloc(m->recs, cap * sizeof *nr);
    if (!nr) {
      r->oom = true;
      return;
    }
    m->recs = nr;
    m->cap = cap;
  }
  uint8_t *p = mem_reserve(r, m, 2 * (size_t)size);
  if (!p)
    return;
  tc_copy_small(p, before, size); /* the hooks' sizes: inline copies */
  tc_copy_small(p + size, after, size);
  m->recs[m->n++] = (mem_rec){addr, size, kind, m->len};
  m->len += 2 * (size_t)size;
}

static const tc_mem_access *mem_build(tc_recorder *r, mem_list *m) {
  if (m->n == 0)
    return NULL;
  if (m->outcap < m->n) {
    tc_mem_access *no = realloc(m->out, m->n * sizeof *no);
    if (!no) {
      r->oom = true;
      return NULL;
    }
    m->out = no;
    m->outcap = m->n;
  }
  for (size_t i = 0; i < m->n; i++) {
    const mem_rec *mr = &m->recs[i];
    m->out[i] =
        (tc_mem_access){mr->addr, mr->size, mr->kind, m->arena + mr->off,
                        m->arena + mr->off + mr->size};
  }
  return m->out;
}

static void mem_clear(mem_list *m) {
  m->n = 0;
  m->len = 0;
}

static void mem_free(mem_list *m) {
  free(m->recs);
  free(m->arena);
  free(m->out);
}

/* --------------------------------------------------- self-modifying code */

static void exec_ranges_rebuild(tc_recorder *r) {
  r->nexec = 0;
  r->exec_overflow = false;
  for (size_t i = 0; i < r->emu->nregions; i++) {
    const tc_region *g = &r->emu->regions[i];
    if (!(g->prot & TC_PROT_EXEC))
      continue;
    if (r->nexec > 0 && r->exec_hi[r->nexec - 1] == g->start) {
      r->exec_hi[r->nexec - 1] = g->end;
      continue;
    }
    if (r->nexec == MAX_EXEC_RANGES) {
      r->exec_overflow = true; /* every write is checked */
      break;
    }
    r->exec_lo[r->nexec] = g->start;
    r->exec_hi[r->nexec] = g->end;
    r->nexec++;
  }
}

/* The pending instruction keeps its own copy of its decode before the
 * cache changes (its slot may be the one invalidated). */
static void pend_detach(tc_recorder *r) {
  if (r->have_pending && r->pendp != &r->pend_own) {
    r->pend_own = *r->pendp;
    r->pendp = &r->pend_own;
  }
}

/* A write to an executable page drops what the decode cache holds of
 * the bytes it changes: one lookup when the page holds no cached code
 * (decode.c), so writes to an executable stack cost little. */
static void check_code_write(tc_recorder *r, uint64_t addr, uint64_t size) {
  bool exec = r->exec_overflow;
  for (int i = 0; i < r->nexec && !exec; i++)
    exec = addr < r->exec_hi[i] && addr + size > r->exec_lo[i];
  if (exec) {
    pend_detach(r);
    tc_decoder_invalidate(r->dec, addr, size);
    lcache_clear(r);
  }
}

/* ----------------------------------------------------------- registers */

static void read_all_regs(tc_recorder *r, uint8_t *state) {
  uc_reg_read_batch(r->emu->uc, r->all_ids, r->all_ptrs, r->nall);
  for (int i = 0; i < r->arch->nregs; i++) {
    const tc_reg_info *ri = &r->arch->regs[i];
    memcpy(state + ri->offset, r->scratch[i], ri->size);
  }
  tc_emu_fix_state(r->emu, state);
}

static inline bool reg_differs(const tc_recorder *r, int i, const uint8_t *a,
                               const uint8_t *b) {
  const reg_desc *d = &r->rd[i];
  return !tc_equal_small(a + d->off, b + d->off, d->size);
}

static inline void set_pc(const tc_recorder *r, uint8_t *state, uint64_t pc) {
  int k = r->arch->pc_reg;
  uint8_t *p = state + r->rd[k].off;
  if (r->rd[k].size == 8) { /* little-endian host */
    memcpy(p, &pc, 8);
  } else {
    uint32_t v = (uint32_t)pc;
    memcpy(p, &v, 4);
  }
}

/* The hot path of finalize: reads the registers idx[0..n) (ascending)
 * into state_next, compares each with state_cur and lists those that
 * differ in r->changed, in one pass; returns how many. The PC is already
 * in state_next. Registers only Unicorn's API reads are read in one
 * batch at the end, and then the list is made again in order. */
static int read_compare(tc_recorder *r, const uint16_t *idx, int n) {
  const uint8_t *cur = r->state_cur;
  uint8_t *next = r->state_next;
  uint16_t *changed = r->changed;
  const reg_desc *rd = r->rd;
  int nchanged = 0;
  bool batch = false, flags_batch = false;
  for (int k = 0; k < n; k++) {
    unsigned i = idx[k];
    const reg_desc *d = &rd[i];
    changed[nchanged] = (uint16_t)i; /* kept if it differs */
    switch (d->kind) {
    case RD_DIRECT8: {
      uint64_t v, o;
      memcpy(&v, d->src, 8);
      memcpy(&o, cur + d->off, 8);
      memcpy(next + d->off, &v, 8);
      nchanged += v != o;
      break;
    }
    case RD_DIRECT4: {
      uint32_t v, o;
      memcpy(&v, d->src, 4);
      memcpy(&o, cur + d->off, 4);
      memcpy(next + d->off, &v, 4);
      nchanged += v != o;
      break;
    }
    case RD_DIRECT16: {
      uint64_t v[2], o[2];
      memcpy(v, d->src, 16);
      memcpy(o, cur + d->off, 16);
      memcpy(next + d->off, v, 16);
      nchanged += ((v[0] ^ o[0]) | (v[1] ^ o[1])) != 0;
      break;
    }
    case RD_DIRECT:
      memcpy(next + d->off, d->src, d->size);
      nchanged += memcmp(next + d->off, cur + d->off, d->size) != 0;
      break;
    case RD_PC:
      nchanged += !tc_equal_small(next + d->off, cur + d->off, d->size);
      break;
    case RD_FLAGS: {
      uint64_t f;
      if (tc_regfile_x86_flags(r->regfile, &f)) {
        uint64_t o = 0;
        memcpy(next + d->off, &f, d->size); /* little-endian host */
        memcpy(&o, cur + d->off, d->size);
        nchanged += (f & (d->size == 8 ? ~0ull : 0xffffffffull)) != o;
        break;
      }
      batch = flags_batch = true; /* a flags state it cannot compute */
      break;
    }
    default:
      batch = true;
    }
  }
  if (__builtin_expect(r->check_reads, 0))
    for (int k = 0; k < n; k++) {
      const reg_desc *d = &rd[idx[k]];
      if (d->kind != RD_BATCH && d->kind != RD_PC &&
          (d->kind != RD_FLAGS || !flags_batch) && d->src != absent_zero)
        tc_regfile_check(r->regfile, idx[k], next + d->off, d->size);
    }
  if (!batch)
    return nchanged;
  int ids[64];
  void *ptrs[64];
  uint16_t got[64];
  int m = 0;
  for (int k = 0; k < n && m < 64; k++) {
    unsigned i = idx[k];
    uint8_t kind = rd[i].kind;
    if (kind == RD_BATCH || (kind == RD_FLAGS && flags_batch)) {
      got[m] = (uint16_t)i;
      ids[m] = r->uc_ids[i];
      ptrs[m++] = r->scratch_ptrs[i];
    }
  }
  uc_reg_read_batch(r->emu->uc, ids, ptrs, m);
  for (int k = 0; k < m; k++)
    tc_copy_small(next + rd[got[k]].off, r->scratch[got[k]], rd[got[k]].size);
  nchanged = 0;
  for (int k = 0; k < n; k++)
    if (!tc_equal_small(next + rd[idx[k]].off, cur + rd[idx[k]].off,
                        rd[idx[k]].size))
      changed[nchanged++] = idx[k];
  return nchanged;
}

/* Makes state_next equal to state_cur, copying only what can differ. */
static void sync_next(tc_recorder *r) {
  if (r->stale_all) {
    memcpy(r->state_next, r->state_cur, r->arch->state_size);
    r->stale_all = false;
    return;
  }
  const reg_desc *rd = r->rd;
  for (int k = 0; k < r->nstale; k++) {
    const reg_desc *d = &rd[r->stale[k]];
    tc_copy_small(r->state_next + d->off, r->state_cur + d->off, d->size);
  }
}

/* ------------------------------------------------------------- emitting */

static void emit_event(tc_recorder *r, const tc_event *ev) {
  r->in_emit = 1;
  if (r->turn_pending) {
    /* emitted with the turn's first event, so a turn in which the process
     * only found itself still blocked leaves nothing in its stream */
    r->turn_pending = false;
    tc_event t = {.kind = TC_EV_TURN};
    t.u.turn.turn = r->turn_no;
    t.u.turn.insn_index = r->insn_index;
    t.u.turn.tid = r->emu->tid;
    r->emit(r->emit_ctx, &t);
  }
  r->emit(r->emit_ctx, ev);
  r->in_emit = 0;
}

/* Kernel writes kept in memory per SYSCALL event part (old + new bytes). */
#define KMEM_INLINE (4u << 20)

/* Refills kmem from the spool with up to KMEM_INLINE bytes; returns 1 if
 * the spool has more after them. */
static int kspool_next_part(tc_recorder *r) {
  mem_clear(&r->kmem);
  for (;;) {
    long at = ftell(r->kspool);
    uint64_t addr;
    uint32_t size;
    if (fread(&addr, sizeof addr, 1, r->kspool) != 1 ||
        fread(&size, sizeof size, 1, r->kspool) != 1)
      return 0;
    if (r->kmem.len && r->kmem.len + 2 * (size_t)size > KMEM_INLINE) {
      fseek(r->kspool, at, SEEK_SET);
      return 1;
    }
    uint8_t buf[2 * 4096];
    if (size > 4096 || fread(buf, 1, 2 * (size_t)size, r->kspool) != 2 * size) {
      r->oom = true; /* the spool file failed: treated as out of memory */
      return 0;
    }
    mem_add(r, &r->kmem, addr, size, TC_MEM_WRITE, buf, buf + size);
  }
}

static void emit_signal(tc_recorder *r, uint64_t insn_index) {
  if (!r->have_sig)
    return;
  tc_event ev = {.kind = TC_EV_SIGNAL};
  ev.u.sig = r->sig;
  ev.u.sig.insn_index = insn_index;
  ev.u.sig.nmem = (uint32_t)r->sigmem.n;
  ev.u.sig.mem = mem_build(r, &r->sigmem);
  emit_event(r, &ev);
  mem_clear(&r->sigmem);
  r->have_sig = false;
}

/* MAP, UNMAP and PROTECT events of the kernel since the last flush. */
static void emit_map_events(tc_recorder *r) {
  for (size_t i = 0; i < r->nkev; i++) {
    kernel_ev *k = &r->kev[i];
    tc_event ev = {.kind = k->kind};
    ev.u.map = (tc_map_event){k->addr, k->size,        k->prot,
                              k->name, k->file_offset, NULL};
    emit_event(r, &ev);
  }
  r->nkev = 0;
}

static void emit_kernel_events(tc_recorder *r, uint64_t insn_index) {
  emit_map_events(r);
  if (r->have_sys) {
    tc_event ev = {.kind = TC_EV_SYSCALL};
    tc_syscall_event *s = &ev.u.sys;
    s->insn_index = insn_index;
    s->tid = r->emu->tid;
    s->nr = r->sys.nr;
    s->name = r->sys.name;
    memcpy(s->args, r->sys.args, sizeof s->args);
    s->ret = r->sys.ret;
    s->unknown = r->sys.unknown;
    s->compat = r->sys.compat;
    s->more = r->kspooled;
    if (r->kspooled) {
      fflush(r->kspool);
      rewind(r->kspool);
    }
    for (;;) {
      s->nmem = (uint32_t)r->kmem.n;
      s->mem = mem_build(r, &r->kmem);
      emit_event(r, &ev);
      if (!s->more)
        break;
      s->part++;
      s->more = (uint8_t)kspool_next_part(r);
    }
    r->stats.syscalls++;
    r->have_sys = false;
  }
  emit_signal(r, insn_index);
  if (r->kspooled) {
    rewind(r->kspool);
    if (ftruncate(fileno(r->kspool), 0) < 0)
      r->oom = true;
    r->kspooled = false;
  }
  mem_clear(&r->kmem);
}

static void emit_keyframe(tc_recorder *r) {
  tc_event ev = {.kind = TC_EV_KEYFRAME};
  ev.u.key = (tc_keyframe_event){r->insn_index, r->emu->tid, r->state_cur};
  emit_event(r, &ev);
}

/* Emits the pending instruction. completed = false for a faulting one
 * (nothing it did takes effect). */
static void finalize(tc_recorder *r, uint64_t next_pc, bool completed) {
  const tc_arch *a = r->arch;
  int nchanged = 0;
  const tc_decoded *pd = r->pendp;
  sync_next(r);
  if (completed) {
    set_pc(r, r->state_next, next_pc);
    if (r->exact || pd->full_read) {
      read_all_regs(r, r->state_next);
      set_pc(r, r->state_next, next_pc);
      for (int i = 0; i < a->nregs; i++)
        if (reg_differs(r, i, r->state_cur, r->state_next))
          r->changed[nchanged++] = (uint16_t)i;
    } else {
      nchanged = read_compare(r, pd->write, pd->nwrite);
    }
  } else {
    mem_clear(&r->mem);
  }
  tc_event ev; /* every field set below: no zero-fill per instruction */
  ev.kind = TC_EV_INSN;
  tc_insn_event *e = &ev.u.insn;
  e->index = r->insn_index;
  e->pc = pd->pc;
  e->tid = r->emu->tid;
  e->size = pd->size;
  memcpy(e->bytes, pd->bytes, sizeof e->bytes);
  e->nregs = (uint16_t)nchanged;
  e->regs = r->changed;
  e->state_before = r->state_cur;
  e->state_after = r->state_next;
  e->nmem = (uint32_t)r->mem.n;
  e->mem = mem_build(r, &r->mem);
  emit_event(r, &ev);
  r->stats.mem_accesses += r->mem.n;
  mem_clear(&r->mem);
  if (r->nkev || r->have_sys || r->have_sig || r->kspooled || r->kmem.n)
    emit_kernel_events(r, r->insn_index);

  uint8_t *t = r->state_cur;
  r->state_cur = r->state_next;
  r->state_next = t;
  uint16_t *ts = r->stale; /* this instruction's changes become stale */
  r->stale = r->changed;
  r->changed = ts;
  r->nstale = nchanged;
  /* relaxed atomic: a progress display reads it from another thread */
  __atomic_store_n(&r->insn_index, r->insn_index + 1, __ATOMIC_RELAXED);
  r->have_pending = false;

  if (r->keyframe_interval && --r->keyframe_countdown == 0) {
    r->keyframe_countdown = r->keyframe_interval;
    if (!r->exact) {
      /* Whole-state check: a register the decoder did not predict. */
      read_all_regs(r, r->state_tmp);
      set_pc(r, r->state_tmp, next_pc);
      if (completed && memcmp(r->state_tmp, r->state_cur, a->state_size) != 0) {
        for (int i = 0; i < a->nregs && !r->warned_drift; i++)
          if (reg_differs(r, i, r->state_tmp, r->state_cur)) {
            tc_notice("warning: register %s changed unrecorded "
                      "before instruction %llu; --exact records it",
                      a->regs[i].name, (unsigned long long)r->insn_index);
            r->warned_drift = true;
          }
        memcpy(r->state_cur, r->state_tmp, a->state_size);
        r->stale_all = true;
      }
    }
    emit_keyframe(r);
  }
}

/* --------------------------------------------------------------- hooks */

/* Whether the instruction at pc is recorded: inside a range, or inside an
 * activation of a traced function (from its entry until it returns to
 * its caller: pc at the return address with the stack popped back). */
static bool in_window(tc_recorder *r, uint64_t pc) {
  const tc_window *w = &r->win;
  if (r->func_active) {
    uint64_t sp = tc_emu_reg(r->emu, r->arch->sp_reg);
    bool popped = r->arch->traits.ret_on_stack;
    if (pc == r->func_ret && (popped ? sp > r->func_sp : sp >= r->func_sp))
      r->func_active = false;
    else
      return true;
  }
  for (size_t i = 0; i < w->nfuncs; i++)
    if (pc == w->funcs[i]) {
      r->func_active = true;
      r->func_sp = tc_emu_reg(r->emu, r->arch->sp_reg);
      if (r->arch->traits.ret_on_stack) {
        uint8_t b[8] = {0};
        uc_mem_read(r->emu->uc, r->func_sp, b, r->arch->ptr_size);
        r->func_ret = 0;
        memcpy(&r->func_ret, b, r->arch->ptr_size);
      } else { /* the link register: lr, x30, ra */
        const char *lr = r->arch->traits.link_reg;
        int k = lr ? tc_arch_reg_index(r->arch, lr) : -1;
        r->func_ret = k >= 0 ? tc_emu_reg(r->emu, k) & ~(uint64_t)1 : 0;
      }
      return true;
    }
  for (size_t i = 0; i < w->nranges; i++)
    if (pc >= w->lo[i] && pc < w->hi[i])
      return true;
  return false;
}

/* Back inside the window after a gap: the state is read again whole and
 * given as a KEYFRAME, so the next INSN's state_before is right. */
static void window_resume(tc_recorder *r) {
  read_all_regs(r, r->state_cur);
  r->stale_all = true;
  r->skipping = false;
  emit_keyframe(r);
}

/* The decoded instruction at addr: the cache's, or decoded now (the bytes
 * read from the engine); NULL when out of memory, the run then stops. */
static inline const tc_decoded *decoded_at(tc_recorder *r, uc_engine *uc,
                                           uint64_t addr, uint32_t size) {
  const tc_decoded *d = tc_decoder_peek(r->dec, addr);
  if (d && d->size == size)
    return d;
  uint8_t bytes[16] = {0};
  uint32_t n = size > 16 ? 16 : size;
  uc_mem_read(uc, addr, bytes, n);
  /* arm: the ISA state matters only on a miss (CPSR.T, bit 5). */
  uint32_t tbit = r->arch->traits.thumb_bit;
  bool thumb =
      tbit && (size == 2 || (tc_emu_reg(r->emu, r->arch->flags_reg) & tbit));
  d = tc_decoder_get(r->dec, addr, bytes, n, thumb);
  if (!d) {
    r->oom = true;
    uc_emu_stop(uc);
  }
  return d;
}

/* The engine ran the instruction after a delay slot that accessed memory
 * as if it were a delay slot itself (upstream #2272: the flags restored
 * for the access stay set), then jumped back to it: its code hook comes
 * twice in a row. The first run is the right one (recorded, its memory
 * accesses included); the second is skipped by moving the PC on, which
 * stops the engine before it runs. A branch there raises a reserved
 * instruction, a syscall would run twice: mips.c stops the recording at
 * those (intr_defect). */
static bool ds_replay(tc_recorder *r, uint64_t addr, uint32_t size) {
  if (addr != r->ds_last_pc || addr != r->emu->mips_fads_pc)
    return false;
  if (r->have_pending)
    finalize(r, addr + size, true);
  r->emu->mips_fads_pc = UINT64_MAX;
  r->ds_fads_next = false;
  r->ds_branch_pc = r->ds_last_pc = UINT64_MAX;
  tc_emu_set_reg(r->emu, r->arch->pc_reg, addr + size);
  return true;
}

static void hook_code(uc_engine *uc, uint64_t addr, uint32_t size, void *user) {
  tc_recorder *r = user;
  /* SPARC's carry-flag stubs stand for the kernel: never recorded. */
  if (r->emu->sparc_private && tc_sparc_hidden(r->emu, addr))
    return;
  if (r->ds_guard && ds_replay(r, addr, size))
    return;
  if (r->have_pending) {
    if (r->pendp->is_rep && addr == r->pendp->pc && r->count_reg >= 0 &&
        tc_emu_reg(r->emu, r->count_reg) == 0) {
      /* Unicorn runs a rep instruction's hook once more with the count
       * at zero; single-stepping sees the last iteration move on to the
       * next instruction instead. */
      finalize(r, addr + size, true);
      r->rep_tail = true;
      r->rep_pc = addr;
      return;
    }
    finalize(r, addr, true);
  } else if (r->rep_tail && addr == r->rep_pc) {
    return;
  }
  r->rep_tail = false;
  if (r->stop_requested || r->oom || r->executed >= r->insn_limit) {
    if (!r->stop_requested && !r->oom && r->executed < r->max_limit) {
      if (r->seg_to && r->executed >= r->seg_to) {
        r->seg_end = r->stopped = true; /* the segment's end (record -j) */
        uc_emu_stop(uc);
        return;
      }
      /* The thread's turn is over, before this instruction runs; not in
       * a delay slot or an IT block (guard_left), nor after a delay slot
       * the engine may have left flagged (ds_replay), where a stop would
       * come only after it ran: the turn ends after them. */
      if (!r->guard_left && !(r->ds_guard && r->ds_fads_next)) {
        r->switch_due = true;
        uc_emu_stop(uc);
        return;
      }
    } else {
      if (r->max_insns && r->executed >= r->max_limit)
        r->hit_max = true;
      r->stopped = true;
      uc_emu_stop(uc);
      return;
    }
  }
  r->executed++;
  r->emu->cur_pc = addr;
  const tc_decoded *d = decoded_at(r, uc, addr, size);
  if (!d)
    return;
  r->guard_left = d->guards ? d->guards : r->guard_left - (r->guard_left > 0);
  if (r->ds_guard) {
    bool slot = r->ds_branch_pc != UINT64_MAX && addr == r->ds_branch_pc + 4;
    r->emu->mips_fads_pc = r->ds_fads_next ? addr : UINT64_MAX;
    r->ds_fads_next = slot && tc_engine_mips_memory_insn(r->arch, d->bytes);
    r->ds_branch_pc = d->guards ? addr : UINT64_MAX;
    r->ds_last_pc = addr;
  }
  if (r->windowed) {
    bool in = in_window(r, addr);
    if (in && r->skipping)
      window_resume(r);
    r->skipping = !in; /* outside: runs, unrecorded */
  }
  if (!r->skipping) {
    r->pendp = d;
    r->have_pending = true;
  }
  if (d->privileged) {
    /* Linux runs it at CPL 3: #GP, SIGSEGV. Unicorn runs at ring 0 and
     * would execute it; stopping here means it never runs. */
    tc_emu_fault(r->emu, TC_FAULT_OTHER, addr, SIGSEGV);
  } else if (d->emulate) {
    /* Stopped before it runs; tc_recorder_run carries it out. */
    r->emulate_at = addr;
    r->emulate_kind = d->emulate;
    r->emulate_size = d->size;
    memcpy(r->emulate_bytes, d->bytes, sizeof r->emulate_bytes);
    uc_emu_stop(uc);
  }
}

/* The run phase's code hook (record -j): what hook_code does to count
 * instructions, stop and run what tracecorn runs itself, and nothing it
 * does to record them. */
static void hook_code_light(uc_engine *uc, uint64_t addr, uint32_t size,
                            void *user) {
  tc_recorder *r = user;
  if (r->emu->sparc_private && tc_sparc_hidden(r->emu, addr))
    return;
  if (r->lpend) { /* a rep instruction ran last */
    r->lpend = false;
    if (addr == r->lpend_pc && r->count_reg >= 0 &&
        tc_emu_reg(r->emu, r->count_reg) == 0) {
      r->rep_tail = true; /* the rep's no-op pass (hook_code) */
      r->rep_pc = addr;
      return;
    }
  } else if (r->rep_tail && addr == r->rep_pc) {
    return;
  }
  r->rep_tail = false;
  if (r->stop_requested || r->oom || r->executed >= r->insn_limit) {
    if (!r->stop_requested && !r->oom && r->executed < r->max_limit) {
      if (r->executed == r->ckpt_next) {
        r->ckpt_due = true;
        uc_emu_stop(uc);
        return;
      }
      if (!r->guard_left) { /* as hook_code: a turn ends after guards */
        r->switch_due = true;
        uc_emu_stop(uc);
        return;
      }
    } else {
      if (r->max_insns && r->executed >= r->max_limit)
        r->hit_max = true;
      r->stopped = true;
      uc_emu_stop(uc);
      return;
    }
  }
  r->executed++;
  r->emu->cur_pc = addr;
  /* Most instructions need nothing more: x86's that are no rep, not run
   * by tracecorn and not privileged (the small cache says), and on the
   * other arches every one but near a checkpoint (a guard's reach). */
  const tc_decoded *d = NULL;
  if (r->lcache) {
    lcache_ent *e =
        &r->lcache[(addr ^ addr >> LCACHE_BITS) & ((1u << LCACHE_BITS) - 1)];
    lcache_ent key = addr << 12 | (uint64_t)(size & 0xff) << 4;
    if ((*e & ~(lcache_ent)0xf) != key) {
      if (!(d = decoded_at(r, uc, addr, size)))
        return;
      *e = key | (d->is_rep ? LC_REP : 0) |
           (d->privileged || d->emulate || d->guards ? LC_SLOW : 0);
    }
    if (!(*e & LC_SLOW)) {
      if (*e & LC_REP) {
        r->lpend = true;
        r->lpend_pc = addr;
      }
      return;
    }
  } else if (!r->light_x86 && r->executed + 3 < r->insn_limit) {
    /* far from a checkpoint and a turn's end: no guard reaches them */
    r->guard_left = 0;
    return;
  }
  if (!d && !(d = decoded_at(r, uc, addr, size)))
    return;
  unsigned guards = d->guards ? d->guards : r->test_early;
  if (guards && r->executed - 1 + guards >= r->ckpt_next &&
      r->executed <= r->ckpt_next && r->ckpt_next < r->max_limit) {
    /* The checkpoint would fall in what this instruction controls (a
     * delay slot, an IT block), where the engine cannot resume: it is
     * taken before this instruction instead; the segment's recorder runs
     * from here and writes from ckpt_next on. */
    r->executed--;
    r->ckpt_due = true;
    uc_emu_stop(uc);
    return;
  }
  r->lpend = d->is_rep;
  r->lpend_pc = d->pc;
  r->guard_left = d->guards ? d->guards : r->guard_left - (r->guard_left > 0);
  if (d->privileged) {
    tc_emu_fault(r->emu, TC_FAULT_OTHER, addr, SIGSEGV);
  } else if (d->emulate) {
    r->emulate_at = addr;
    r->emulate_kind = d->emulate;
    r->emulate_size = d->size;
    memcpy(r->emulate_bytes, d->bytes, sizeof r->emulate_bytes);
    uc_emu_stop(uc);
  }
}

/* The time-stamp counter the guest reads: a function of the instructions
 * run, so recordings are deterministic (Unicorn returns the host's). It
 * grows by TSC_PER_INSN per instruction from TSC_BASE. */
#define TSC_BASE 0x100000000000ull
#define TSC_PER_INSN 3u

static void run_emulated(tc_recorder *r) {
  const tc_arch *a = r->arch;
  if (r->emulate_kind == TC_DEC_EMU_X87) {
    /* The bytes the decoder classified (tc_x87_host_can): it cannot fail
     * on them, so the instruction never runs twice. */
    tc_x87_host_run(r->emu, r->emulate_bytes, r->emulate_size);
    tc_emu_set_reg(r->emu, a->pc_reg, r->emulate_at + r->emulate_size);
    r->emulate_kind = TC_DEC_EMU_NONE;
    return;
  }
  bool w64 = a->ptr_size == 8;
  uint64_t tsc = TSC_BASE + r->executed * TSC_PER_INSN;
  tc_emu_set_reg(r->emu, tc_arch_reg_index(a, w64 ? "rax" : "eax"),
                 tsc & 0xffffffffu);
  tc_emu_set_reg(r->emu, tc_arch_reg_index(a, w64 ? "rdx" : "edx"), tsc >> 32);
  if (r->emulate_kind == TC_DEC_EMU_RDTSCP) /* IA32_TSC_AUX: cpu 0 */
    tc_emu_set_reg(r->emu, tc_arch_reg_index(a, w64 ? "rcx" : "ecx"), 0);
  tc_emu_set_reg(r->emu, a->pc_reg, r->emulate_at + r->emulate_size);
  r->emulate_kind = TC_DEC_EMU_NONE;
}

static inline void value_bytes(const tc_recorder *r, int64_t value, int size,
                               uint8_t *out) {
  uint64_t v = (uint64_t)value;
  if (!r->arch->big_endian) { /* little-endian host */
    memcpy(out, &v, 8);       /* out has room for 8; size bytes count */
    return;
  }
  for (int i = 0; i < size; i++)
    out[size - 1 - i] = (uint8_t)(v >> (8 * i));
}

static void hook_mem_read_noop(uc_engine *uc, uc_mem_type type, uint64_t addr,
                               int size, int64_t value, void *user) {
  /* Needed: READ_AFTER alone never fires on TLB hits (Unicorn 2.0.1). */
  (void)uc, (void)type, (void)addr, (void)size, (void)value, (void)user;
}

static void hook_mem_read_after(uc_engine *uc, uc_mem_type type, uint64_t addr,
                                int size, int64_t value, void *user) {
  tc_recorder *r = user;
  (void)uc, (void)type;
  if (!r->have_pending || size <= 0 || size > 8)
    return;
  uint8_t b[8];
  value_bytes(r, value, size, b);
  mem_add(r, &r->mem, addr, (uint32_t)size, TC_MEM_READ, b, b);
}

static void hook_mem_write(uc_engine *uc, uc_mem_type type, uint64_t addr,
                           int size, int64_t value, void *user) {
  tc_recorder *r = user;
  (void)type;
  if (!r->have_pending || size <= 0 || size > 8) {
    if (r->skipping && size > 0) /* unrecorded, but code may change */
      check_code_write(r, addr, (uint64_t)size);
    return;
  }
  uint8_t old[8] = {0}, nw[8];
  /* fires before the store: the host memory still holds the old bytes */
  const uint8_t *host = tc_emu_host(r->emu, addr, (uint64_t)size);
  if (host) {
    tc_copy_small(old, host, (unsigned)size);
    if (r->check_reads) {
      uint8_t want[8] = {0};
      uc_mem_read(uc, addr, want, (size_t)size);
      if (memcmp(want, old, (size_t)size) != 0) {
        tc_notice("regfile check: guest memory at 0x%llx "
                  "read directly differs from uc_mem_read",
                  (unsigned long long)addr);
        abort();
      }
    }
  } else {
    uc_mem_read(uc, addr, old, (size_t)size);
  }
  value_bytes(r, value, size, nw);
  mem_add(r, &r->mem, addr, (uint32_t)size, TC_MEM_WRITE, old, nw);
  check_code_write(r, addr, (uint64_t)size);
}

/* ------------------------------------------------------ kernel observer */

static void push_kernel_ev(tc_recorder *r, tc_event_kind kind, uint64_t addr,
                           uint64_t size, uint32_t prot, const char *name,
                           uint64_t off) {
  if (r->light)
    return; /* the run phase records nothing */
  if (r->skipping && !r->have_pending) {
    /* a syscall outside the window: its maps are still recorded (the
     * address space stays right), at once */
    tc_event ev = {.kind = kind};
    ev.u.map = (tc_map_event){addr, size, prot, name ? name : "", off, NULL};
    emit_event(r, &ev);
    return;
  }
  if (r->nkev == r->capkev) {
    size_t cap = r->capkev ? r->capkev * 2 : 8;
    kernel_ev *nk = realloc(r->kev, cap * sizeof *nk);
    if (!nk) {
      r->oom = true;
      return;
    }
    r->kev = nk;
    r->capkev = cap;
  }
  kernel_ev *k = &r->kev[r->nkev++];
  k->kind = kind;
  k->addr = addr;
  k->size = size;
  k->prot = prot;
  k->file_offset = off;
  snprintf(k->name, sizeof k->name, "%s", name ? name : "");
}

static void obs_map(void *ctx, const tc_region *g, const uint8_t *data) {
  tc_recorder *r = ctx;
  (void)data;
  if (r->map_hook)
    r->map_hook(r->map_hook_ctx, r, r->emu, g);
  push_kernel_ev(r, TC_EV_MAP, g->start, g->end - g->start, g->prot, g->name,
                 g->file_offset);
  exec_ranges_rebuild(r);
}

static void obs_unmap(void *ctx, uint64_t addr, uint64_t size) {
  tc_recorder *r = ctx;
  push_kernel_ev(r, TC_EV_UNMAP, addr, size, 0, NULL, 0);
  pend_detach(r);
  tc_decoder_invalidate(r->dec, addr, size);
  lcache_clear(r);
  exec_ranges_rebuild(r);
}

static void obs_protect(void *ctx, uint64_t addr, uint64_t size,
                        uint32_t prot) {
  tc_recorder *r = ctx;
  push_kernel_ev(r, TC_EV_PROTECT, addr, size, prot, NULL, 0);
  /* Code written while the page was not executable (W^X: RW, write, RX)
   * was never checked: what the cache holds of it is stale. */
  pend_detach(r);
  tc_decoder_invalidate(r->dec, addr, size);
  lcache_clear(r);
  exec_ranges_rebuild(r);
}

static void obs_kernel_write(void *ctx, uint64_t addr, const uint8_t *old,
                             const uint8_t *nw, size_t size) {
  tc_recorder *r = ctx;
  if (r->light || (r->skipping && !r->have_pending)) {
    check_code_write(r, addr, size);
    return;
  }
  if (r->in_signal_frame) {
    mem_add(r, &r->sigmem, addr, (uint32_t)size, TC_MEM_WRITE, old, nw);
    return;
  }
  /* Large kernel writes (read(2) into a buffer) are kept whole: they
   * are the guest's input and must be in the trace. Past KMEM_INLINE
   * bytes they go to a spool file, so host memory stays bounded. */
  for (size_t off = 0; off < size; off += 4096) {
    size_t n = size - off < 4096 ? size - off : 4096;
    if (!r->kspooled && r->kmem.len + 2 * n <= KMEM_INLINE) {
      mem_add(r, &r->kmem, addr + off, (uint32_t)n, TC_MEM_WRITE, old + off,
              nw + off);
      continue;
    }
    if (!r->kspool && !(r->kspool = tmpfile())) {
      r->oom = true;
      return;
    }
    uint64_t a = addr + off;
    uint32_t sz = (uint32_t)n;
    if (fwrite(&a, sizeof a, 1, r->kspool) != 1 ||
        fwrite(&sz, sizeof sz, 1, r->kspool) != 1 ||
        fwrite(old + off, 1, n, r->kspool) != n ||
        fwrite(nw + off, 1, n, r->kspool) != n) {
      r->oom = true;
      return;
    }
    r->kspooled = true;
  }
  check_code_write(r, addr, size);
}

static void obs_syscall(void *ctx, const tc_syscall_record *rec) {
  tc_recorder *r = ctx;
  if (r->light || (r->skipping && !r->have_pending))
    return; /* outside the window */
  r->sys = *rec;
  r->have_sys = true;
}

static void obs_signal_frame(void *ctx) {
  tc_recorder *r = ctx;
  if (r->light)
    return;
  mem_clear(&r->sigmem);
  r->in_signal_frame = true;
}

static void obs_signal(void *ctx, const tc_signal_event *rec) {
  tc_recorder *r = ctx;
  if (r->light)
    return;
  r->in_signal_frame = false;
  r->sig = *rec;
  r->have_sig = !(r->skipping && !r->have_pending);
}

/* ------------------------------------------------------------ lifecycle */

tc_recorder *tc_recorder_new(tc_emu *emu, tc_emit_fn emit, void *ctx,
                             tc_error *err) {
  tc_recorder *r = calloc(1, sizeof *r);
  const tc_arch *a = emu->arch;
  if (!r)
    goto oom;
  r->emu = emu;
  r->arch = a;
  r->emit = emit;
  r->emit_ctx = ctx;
  r->exact = emu->opt.exact != 0;
  r->memory = emu->opt.record_memory != 0;
  r->max_insns = emu->opt.max_insns;
  r->max_limit = r->max_insns ? r->max_insns : UINT64_MAX;
  r->insn_limit = r->max_limit;
  r->turn_end = UINT64_MAX;
  r->quantum = emu->opt.sched_quantum ? emu->opt.sched_quantum : 10000;
  r->keyframe_interval = emu->opt.keyframe_interval;
  r->keyframe_countdown = r->keyframe_interval;
  r->changed = r->changed_buf;
  r->stale = r->stale_buf;
  r->state_cur = calloc(1, a->state_size);
  r->state_next = calloc(1, a->state_size);
  r->state_tmp = calloc(1, a->state_size);
  r->scratch = calloc(a->nregs, sizeof *r->scratch);
  r->uc_ids = calloc(a->nregs, sizeof *r->uc_ids);
  r->scratch_ptrs = calloc(a->nregs, sizeof *r->scratch_ptrs);
  r->all_ids = calloc(a->nregs, sizeof *r->all_ids);
  r->all_ptrs = calloc(a->nregs, sizeof *r->all_ptrs);
  r->rd = calloc(a->nregs, sizeof *r->rd);
  if (!r->rd || !r->state_cur || !r->state_next || !r->state_tmp ||
      !r->scratch || !r->uc_ids || !r->scratch_ptrs || !r->all_ids ||
      !r->all_ptrs)
    goto oom;
  r->regfile = tc_emu_regfile(emu);
  r->flags_reg = -1;
  if (r->regfile) {
    if (r->regfile->x86_cc)
      r->flags_reg = a->flags_reg;
    r->check_reads = r->regfile->check;
  }
  for (int i = 0; i < a->nregs; i++) {
    r->uc_ids[i] = a->regs[i].uc_id;
    r->scratch_ptrs[i] = r->scratch[i];
    reg_desc *d = &r->rd[i];
    d->off = a->regs[i].offset;
    d->size = a->regs[i].size;
    d->src = r->regfile ? r->regfile->ptr[i] : NULL;
    if (tc_emu_reg_absent(a, i)) {
      d->src = absent_zero; /* 0, as Unicorn gave it (never asked) */
    } else {
      r->all_ids[r->nall] = a->regs[i].uc_id;
      r->all_ptrs[r->nall++] = r->scratch[i];
    }
    d->kind = i == a->pc_reg      ? RD_PC
              : d->src            ? RD_DIRECT
              : i == r->flags_reg ? RD_FLAGS
                                  : RD_BATCH;
    if (d->kind == RD_DIRECT)
      d->kind = d->size == 8    ? RD_DIRECT8
                : d->size == 4  ? RD_DIRECT4
                : d->size == 16 ? RD_DIRECT16
                                : RD_DIRECT;
  }
  r->count_reg = tc_arch_reg_index(a, a->ptr_size == 8 ? "rcx" : "ecx");
  r->dec = tc_decoder_new(a, err);
  if (!r->dec) {
    tc_recorder_free(r);
    return NULL;
  }
  return r;
oom:
  tc_recorder_free(r);
  tc_error_set(err, "out of memory");
  return NULL;
}

void tc_recorder_free(tc_recorder *r) {
  if (!r)
    return;
  tc_decoder_free(r->dec);
  free(r->state_cur);
  free(r->state_next);
  free(r->state_tmp);
  free(r->scratch);
  free(r->uc_ids);
  free(r->scratch_ptrs);
  free(r->all_ids);
  free(r->all_ptrs);
  free(r->rd);
  mem_free(&r->mem);
  mem_free(&r->kmem);
  mem_free(&r->sigmem);
  if (r->kspool)
    fclose(r->kspool);
  free(r->kev);
  free(r->lcache);
  free(r);
}

void tc_recorder_set_window(tc_recorder *r, const tc_window *w) {
  r->win = *w;
  r->windowed = w->on || w->nranges > 0 || w->nfuncs > 0;
}

int tc_window_add(tc_window *w, bool func, uint64_t lo, uint64_t hi) {
  if (func) {
    for (size_t i = 0; i < w->nfuncs; i++)
      if (w->funcs[i] == lo)
        return 0;
    if (w->nfuncs == TC_WINDOW_CAP)
      return -1;
    w->funcs[w->nfuncs++] = lo;
    return 0;
  }
  for (size_t i = 0; i < w->nranges; i++)
    if (w->lo[i] == lo && w->hi[i] == hi)
      return 0;
  if (w->nranges == TC_WINDOW_CAP)
    return -1;
  w->lo[w->nranges] = lo;
  w->hi[w->nranges++] = hi;
  return 0;
}

int tc_recorder_window_add(tc_recorder *r, bool func, uint64_t lo,
                           uint64_t hi) {
  r->windowed = true;
  return tc_window_add(&r->win, func, lo, hi);
}

void tc_recorder_set_map_hook(tc_recorder *r, tc_map_hook hook, void *ctx) {
  r->map_hook = hook;
  r->map_hook_ctx = ctx;
}

void tc_recorder_stop(tc_recorder *r, int status) {
  r->stop_status = status;
  r->stop_requested = 1;
}

int tc_recorder_escape(tc_recorder *r) {
  if (!r->in_engine || r->in_emit)
    return -1;
  r->in_engine = 0;
  siglongjmp(r->escape, 1);
}

bool tc_recorder_escaped(const tc_recorder *r) { return r->escaped; }

uint64_t tc_recorder_executed(const tc_recorder *r) { return r->executed; }

void tc_recorder_set_budget(tc_recorder *r, uint64_t remaining) {
  r->max_limit = remaining > UINT64_MAX - r->executed ? UINT64_MAX
                                                      : r->executed + remaining;
  if (r->insn_limit > r->max_limit)
    r->insn_limit = r->max_limit;
}

void tc_recorder_stop_max(tc_recorder *r) {
  r->hit_max = r->max_insns != 0;
  tc_recorder_stop(r, 124);
}

uint64_t tc_recorder_insns(const tc_recorder *r) {
  /* record -j's run phase emits none: how far it ran */
  if (r->light)
    return *(const volatile uint64_t *)&r->executed;
  return __atomic_load_n(&r->insn_index, __ATOMIC_RELAXED);
}

static bool all_zero(const uint8_t *p, size_t n) {
  /* p[0] == 0 and every byte equals the next: memcmp's vector speed on
   * the 8 MiB stack instead of a byte loop. */
  return n == 0 || (p[0] == 0 && memcmp(p, p + 1, n - 1) == 0);
}

/* Regions up to INITIAL_MAP_WHOLE bytes are one MAP event; larger ones
 * arrive as several adjacent MAP events of INITIAL_MAP_CHUNK bytes (same
 * name and protection, file offsets following), each run of all-zero
 * chunks merged into one event without data, so host memory stays bounded
 * whatever sizes the guest maps (a 1 GiB bss costs one 16 MiB buffer). */
#define INITIAL_MAP_WHOLE (16u << 20)
#define INITIAL_MAP_CHUNK (1u << 20)

static void emit_initial_piece(tc_recorder *r, const tc_region *g,
                               uint64_t start, uint64_t size,
                               const uint8_t *data) {
  tc_event ev = {.kind = TC_EV_MAP};
  uint64_t off = g->file_offset ? g->file_offset + (start - g->start) : 0;
  ev.u.map = (tc_map_event){start, size, g->prot, g->name, off, data};
  emit_event(r, &ev);
}

/* The memory image at the start: one MAP event per region (or per chunk
 * of a large region), with its contents unless they are all zero. */
static int emit_initial_maps(tc_recorder *r, tc_error *err) {
  uint8_t *buf = NULL;
  for (size_t i = 0; i < r->emu->nregions; i++) {
    const tc_region *g = &r->emu->regions[i];
    uint64_t total = g->end - g->start;
    uint64_t step = total <= INITIAL_MAP_WHOLE ? total : INITIAL_MAP_CHUNK;
    if (!buf && !(buf = malloc(INITIAL_MAP_WHOLE))) {
      tc_error_set(err, "out of memory reading the initial image");
      return -1;
    }
    uint64_t zero_from = g->start, zero_len = 0;
    for (uint64_t at = g->start; at < g->end; at += step) {
      size_t n = (size_t)(g->end - at < step ? g->end - at : step);
      if (uc_mem_read(r->emu->uc, at, buf, n) != UC_ERR_OK)
        memset(buf, 0, n);
      if (all_zero(buf, n)) {
        if (!zero_len)
          zero_from = at;
        zero_len += n;
        continue;
      }
      if (zero_len)
        emit_initial_piece(r, g, zero_from, zero_len, NULL);
      zero_len = 0;
      emit_initial_piece(r, g, at, n, buf);
    }
    if (zero_len)
      emit_initial_piece(r, g, zero_from, zero_len, NULL);
  }
  free(buf);
  return 0;
}

static int install_hooks(tc_recorder *r, tc_error *err) {
  uc_engine *uc = r->emu->uc;
  uc_hook h;
  uc_err e = uc_hook_add(uc, &h, UC_HOOK_CODE, (void *)hook_code, r, 1, 0);
  if (!e && r->memory)
    e = uc_hook_add(uc, &h, UC_HOOK_MEM_READ, (void *)hook_mem_read_noop, r, 1,
                    0);
  if (!e && r->memory)
    e = uc_hook_add(uc, &h, UC_HOOK_MEM_READ_AFTER, (void *)hook_mem_read_after,
                    r, 1, 0);
  if (!e && r->memory)
    e = uc_hook_add(uc, &h, UC_HOOK_MEM_WRITE, (void *)hook_mem_write, r, 1, 0);
  if (e) {
    tc_error_set(err, "unicorn: cannot install recording hooks: %s",
                 uc_strerror(e));
    return -1;
  }
  return 0;
}

/* The faulting instruction when no code hook ran for it (undecodable
 * instruction): rebuild its record from memory. */
static void pend_from_memory(tc_recorder *r, uint64_t pc) {
  uint8_t bytes[16] = {0};
  size_t n = 0;
  while (n < r->arch->max_insn_size && n < 16 &&
         tc_emu_read(r->emu, pc + n, &bytes[n], 1) == 0)
    n++;
  char text[64];
  uint64_t dpc = pc | (tc_emu_thumb(r->emu) ? 1 : 0);
  int len = n ? tc_disasm(r->arch, dpc, bytes, n, text, sizeof text) : 0;
  memset(&r->pend_own, 0, sizeof r->pend_own);
  r->pend_own.pc = pc;
  r->pend_own.size = (uint8_t)(len > 0 ? len : (n ? 1 : 0));
  memcpy(r->pend_own.bytes, bytes, r->pend_own.size);
  r->pendp = &r->pend_own;
  r->have_pending = r->pend_own.size > 0;
}

/* The faulting instruction (did not complete) and the FAULT event. */
static void emit_fault(tc_recorder *r) {
  tc_emu *emu = r->emu;
  if (r->skipping && !r->have_pending)
    window_resume(r);
  uint64_t fpc = emu->fault.pc;
  if (r->have_pending && r->pendp->pc != fpc)
    finalize(r, fpc, true);
  if (!r->have_pending && emu->fault.kind != TC_FAULT_UNMAPPED_FETCH &&
      emu->fault.kind != TC_FAULT_PROT_FETCH)
    pend_from_memory(r, fpc);
  if (r->have_pending)
    finalize(r, fpc, false);
  tc_event ev = {.kind = TC_EV_FAULT};
  ev.u.fault = emu->fault;
  ev.u.fault.insn_index = r->insn_index ? r->insn_index - 1 : 0;
  emit_event(r, &ev);
  r->fault_emitted = true;
}

/* A fault the guest has a handler for: the faulting instruction and the
 * FAULT, then the SIGNAL with the frame and a KEYFRAME with the handler's
 * entry state; the run goes on in the handler. False if it ends the run. */
static bool deliver_fault(tc_recorder *r) {
  tc_emu *emu = r->emu;
  const tc_fault_ops *fo = &r->fault_ops;
  if (r->stop_requested ||
      !(fo->handled ? fo->handled(fo->ctx, emu) : tc_linux_fault_handled(emu)))
    return false;
  if (r->light) {
    if (!fo->deliver) {
      r->light_refusal = "a fault went to the guest's signal handler";
      r->stopped = true;
      return false;
    }
    /* record -j's run phase: delivered and logged, nothing emitted */
    if (!fo->deliver(fo->ctx, emu)) {
      tc_emu_kill(emu, 11);
      return false;
    }
    r->lpend = r->rep_tail = false;
    r->guard_left = 0;
    return true;
  }
  r->guard_left = 0;
  emit_fault(r);
  if (!(fo->deliver ? fo->deliver(fo->ctx, emu)
                    : tc_linux_deliver_fault(emu))) {
    tc_emu_kill(emu, 11); /* the frame could not be written */
    return false;
  }
  r->fault_emitted = false;
  /* the frame may need the sigreturn page mapped first ([sigpage]) */
  emit_map_events(r);
  emit_signal(r, r->insn_index ? r->insn_index - 1 : 0);
  read_all_regs(r, r->state_cur);
  r->stale_all = true;
  emit_keyframe(r);
  return true;
}

/* --trace-func: keeps the outgoing thread's activation, takes up the
 * incoming one's (none if it has not been seen). */
static void swap_func_activation(tc_recorder *r, uint32_t from, uint32_t to) {
  int slot = -1;
  for (int i = 0; i < r->nfunc_saved && slot < 0; i++)
    if (r->func_saved[i].tid == from)
      slot = i;
  if (slot < 0 && r->nfunc_saved < 64)
    slot = r->nfunc_saved++;
  if (slot >= 0) {
    r->func_saved[slot].tid = from;
    r->func_saved[slot].active = r->func_active;
    r->func_saved[slot].sp = r->func_sp;
    r->func_saved[slot].ret = r->func_ret;
  }
  r->func_active = false;
  for (int i = 0; i < r->nfunc_saved; i++)
    if (r->func_saved[i].tid == to) {
      r->func_active = r->func_saved[i].active;
      r->func_sp = r->func_saved[i].sp;
      r->func_ret = r->func_saved[i].ret;
    }
}

/* record -j: the run phase stops at its next checkpoint, a segment at
 * its end. */
static void clamp_limit(tc_recorder *r) {
  if (r->turn_end < r->insn_limit)
    r->insn_limit = r->turn_end;
  if (r->light && r->ckpt_next < r->insn_limit)
    r->insn_limit = r->ckpt_next;
  if (r->seg_to && r->seg_to < r->insn_limit)
    r->insn_limit = r->seg_to;
}

/* A new turn: a quantum when other threads or processes share the CPU,
 * else only --max-insns. */
static void set_turn_limit(tc_recorder *r) {
  tc_emu *emu = r->emu;
  const tc_fault_ops *fo = &r->fault_ops;
  bool shares = fo->shares ? fo->shares(fo->ctx, emu)
                           : tc_emu_live_threads(emu) > 1 ||
                                 tc_procs_others_live(emu) > 0;
  r->turn_end = shares && r->executed < UINT64_MAX - r->quantum
                    ? r->executed + r->quantum
                    : UINT64_MAX;
  r->insn_limit = r->max_limit;
  clamp_limit(r);
}

/* The engine stopped for the scheduler (a quantum ended, or a syscall
 * blocked, yielded, exited a thread or made one): the pending instruction
 * is emitted under the thread that ran it, the scheduler picks the next
 * thread, and if that is another one a KEYFRAME with its tid and whole
 * state follows, so every reader sees the registers change hands. */
static int switch_thread(tc_recorder *r, tc_error *err) {
  tc_emu *emu = r->emu;
  tc_emu_restart_pc(emu);
  if (r->have_pending)
    finalize(r, tc_emu_reg(emu, r->arch->pc_reg), true);
  r->lpend = false;
  bool quantum = r->switch_due;
  r->switch_due = false;
  r->guard_left = 0;
  if (emu->execed) {
    /* execve: the new image runs from here; its whole start state as a
     * KEYFRAME after the SYSCALL, in the tid it now has. */
    tc_emu_exec_done(emu);
    emu->resched = TC_RESCHED_NONE;
    set_turn_limit(r);
    r->rep_tail = false;
    if (!r->skipping) {
      read_all_regs(r, r->state_cur);
      r->stale_all = true;
      emit_keyframe(r);
    }
    return 0;
  }
  if (emu->resched == TC_RESCHED_NONE)
    emu->resched = TC_RESCHED_YIELD; /* the quantum ended */
  uint32_t before = emu->tid;
  const tc_fault_ops *fo = &r->fault_ops;
  int s = fo->schedule ? fo->schedule(fo->ctx, emu, err)
                       : tc_emu_schedule(emu, err);
  if (s < 0) {
    r->deadlock = true;
    return -1;
  }
  if (s > 0) {
    r->blocked = true; /* nothing to run here until another process acts */
    return 1;
  }
  r->blocked = false;
  r->rep_tail = false;
  r->turn_ending = quantum;
  if (emu->tid != before && r->win.nfuncs)
    swap_func_activation(r, before, emu->tid);
  set_turn_limit(r);
  /* a signal aimed at the thread now running went to its handler
   * (emu/linux/linux_signal.c): SIGNAL with the frame, then the keyframe */
  if (r->have_sig) {
    emit_map_events(r);
    emit_signal(r, r->insn_index ? r->insn_index - 1 : 0);
  }
  if (emu->tid != before && !r->skipping) {
    read_all_regs(r, r->state_cur);
    r->stale_all = true;
    emit_keyframe(r);
  }
  r->turn_ending = false;
  return 0;
}

/* The start of the stream: the memory image, a KEYFRAME, the hooks. */
static int recorder_begin(tc_recorder *r, tc_error *err) {
  tc_emu *emu = r->emu;
  r->began = true;
  if (r->light) {
    /* the run phase: its first checkpoint is the start (the child that
     * writes the first segment begins the stream as below) */
    r->ckpt(r->ckpt_ctx, r, 0);
    r->ckpt_next = r->ckpt_every;
    exec_ranges_rebuild(r);
    emu->obs = (tc_emu_observer){
        r,           obs_map,          obs_unmap, obs_protect, obs_kernel_write,
        obs_syscall, obs_signal_frame, obs_signal};
    uc_err e = uc_hook_add(emu->uc, &r->light_hook, UC_HOOK_CODE,
                           (void *)hook_code_light, r, 1, 0);
    if (e) {
      tc_error_set(err, "unicorn: cannot install the run's hook: %s",
                   uc_strerror(e));
      return -1;
    }
    clamp_limit(r);
    return 0;
  }
  /* A child's copied image is its state at the fork: it comes first, as
   * any stream starts, and its first TURN after it. */
  bool turn_pending = r->turn_pending;
  r->turn_pending = false;
  if (emit_initial_maps(r, err) < 0)
    return -1;
  read_all_regs(r, r->state_cur);
  r->stale_all = true;
  emit_keyframe(r);
  r->turn_pending = turn_pending;
  exec_ranges_rebuild(r);
  emu->obs = (tc_emu_observer){
      r,           obs_map,          obs_unmap, obs_protect, obs_kernel_write,
      obs_syscall, obs_signal_frame, obs_signal};
  if (install_hooks(r, err) < 0)
    return -1;
  /* Born into a run of several processes: it takes turns from the start. */
  if (tc_procs_others_live(emu) > 0 && r->executed < UINT64_MAX - r->quantum)
    r->turn_end = r->executed + r->quantum;
  r->insn_limit = r->max_limit;
  clamp_limit(r);
  return 0;
}

int tc_recorder_turn(tc_recorder *r, tc_error *err) {
  tc_emu *emu = r->emu;
  const tc_arch *a = r->arch;
  if (r->done)
    return TC_TURN_DONE;
  if (!r->began && recorder_begin(r, err) < 0) {
    r->run_rc = -1;
    r->done = true;
    return TC_TURN_DONE;
  }
  if (r->blocked && !emu->exited && !r->stop_requested) {
    /* Woken (tc_emu_can_run said so): the scheduler picks the thread. */
    emu->resched = TC_RESCHED_BLOCK;
    int s = switch_thread(r, err);
    if (s > 0)
      return TC_TURN_BLOCKED;
    if (s < 0) {
      r->done = true;
      return TC_TURN_DONE;
    }
  } else if (!r->blocked && tc_procs_others_live(emu) > 0 &&
             r->insn_limit == r->max_limit &&
             r->executed < UINT64_MAX - r->quantum &&
             r->executed + r->quantum < r->max_limit) {
    r->turn_end = r->insn_limit = r->executed + r->quantum; /* a fork */
  }
  uint64_t until = a->ptr_size == 8 ? UINT64_MAX : 0xffffffffull;
  if (sigsetjmp(r->escape, 1)) {
    /* The watchdog abandoned an engine that did not return after a
     * stop: nothing half-made is flushed, Unicorn is never called again,
     * and the trace ends validly with the events already written. */
    r->escaped = true;
    r->done = true;
    emu->obs = (tc_emu_observer){0};
    return TC_TURN_DONE;
  }
  for (int spins = 0; !emu->exited && !r->stopped; spins++) {
    if (r->stop_requested && !r->stopped) {
      r->stopped = true; /* asked between turns */
      break;
    }
    uint64_t pc = tc_emu_resume_pc(emu);
    uint64_t before = r->executed;
    /* mips64el's delay-slot guard (hook_code) follows one run */
    r->ds_guard = emu->mips_ds_guard;
    r->ds_fads_next = false;
    r->ds_branch_pc = r->ds_last_pc = emu->mips_fads_pc = UINT64_MAX;
    r->in_engine = 1;
    uc_err e = uc_emu_start(emu->uc, pc, until, 0, 0);
    r->in_engine = 0;
    if (emu->unsupported[0]) {
      /* The engine cannot run what comes next (no Linux would stop here):
       * the recording ends with an error, not a signal the program
       * never gets. */
      tc_error_set(err, "%s", emu->unsupported);
      r->run_rc = -1;
      break;
    }
    if (r->emulate_kind && !emu->exited && !r->stopped && !emu->faulted) {
      run_emulated(r);
      continue;
    }
    if (emu->faulted && !r->stopped && deliver_fault(r)) {
      spins = 0;
      continue;
    }
    if (emu->exited || r->stopped)
      break;
    if (r->ckpt_due) {
      /* record -j: a checkpoint (the callback forks; its child goes on
       * as the segment's recorder and never returns here) */
      r->ckpt_due = false;
      r->ckpt(r->ckpt_ctx, r, r->ckpt_next);
      r->ckpt_next += r->ckpt_every;
      r->insn_limit = r->max_limit; /* the turn's end too (clamp_limit) */
      clamp_limit(r);
      spins = 0;
      continue;
    }
    if (r->switch_due || emu->resched) {
      /* Another process's turn after a quantum or a yield; a clone or
       * fork (KEEP) goes on. */
      bool give_way = r->switch_due || emu->resched == TC_RESCHED_YIELD;
      int s = switch_thread(r, err);
      if (s < 0)
        break;
      if (s > 0)
        return TC_TURN_BLOCKED;
      if (give_way && tc_procs_others_live(emu) > 0)
        return TC_TURN_YIELD;
      spins = 0;
      continue;
    }
    if (e != UC_ERR_OK) {
      /* An exception no hook turned into a signal. */
      tc_emu_fault(emu, TC_FAULT_OTHER, emu->cur_pc, SIGSEGV);
      snprintf(r->msgbuf, sizeof r->msgbuf, "emulation error: %s",
               uc_strerror(e));
      r->message = r->msgbuf;
      break;
    }
    if (r->executed == before && spins > 2) {
      tc_error_set(err, "emulation makes no progress at 0x%llx",
                   (unsigned long long)pc);
      r->run_rc = -1;
      break;
    }
  }
  r->done = true;
  return TC_TURN_DONE;
}

int tc_recorder_finish(tc_recorder *r, tc_run_result *res, tc_error *err) {
  tc_emu *emu = r->emu;
  const tc_arch *a = r->arch;
  const char *message = r->message;
  if (r->escaped || !r->began) {
    if (r->escaped) {
      tc_exit_event x = {TC_EXIT_INTERRUPTED, r->stop_status, 0, r->insn_index,
                         "interrupted; the engine did not return, abandoned"};
      tc_event ev = {.kind = TC_EV_EXIT};
      ev.u.exit = x;
      emit_event(r, &ev);
      r->stats.reason = x.reason;
      r->stats.status = x.status;
      r->stats.insns = r->insn_index;
    }
    if (res)
      *res = r->stats;
    return r->escaped ? 0 : -1;
  }
  /* Flush the last record, or the faulting instruction's (recorded even
   * outside the window: the fault ends the program). */
  if (r->seg_end) {
    /* a segment of record -j that is not the last: no EXIT */
    if (res)
      *res = r->stats;
    return r->run_rc;
  }
  tc_emu_restart_pc(emu);
  if (r->light) {
    r->insn_index = r->executed; /* the run phase emitted nothing */
  } else if (emu->faulted && !r->fault_emitted) {
    emit_fault(r);
  } else if (emu->faulted) {
    /* delivery failed after the FAULT was written: Linux's SIGSEGV */
  } else if (r->have_pending) {
    finalize(r, tc_emu_reg(emu, a->pc_reg), true);
  }

  tc_exit_event x = {0};
  if (emu->exec_stopped) {
    x.reason = TC_EXIT_INTERRUPTED;
    x.status = 0;
    message = emu->exec_notice;
  } else if (emu->exited && emu->exit_signal) {
    x.reason = TC_EXIT_SIGNALED;
    x.signal = emu->exit_signal;
    x.status = 128 + emu->exit_signal;
  } else if (emu->exited) {
    x.reason = TC_EXIT_EXITED;
    x.status = emu->exit_code;
  } else if (r->deadlock) {
    x.reason = TC_EXIT_ERROR;
    x.status = 125;
    message = err && err->msg[0] ? err->msg : "deadlock";
    /* an error of the guest's, said even with -q: it never ends natively
     * (the session says a deadlock of several processes once; record -j:
     * the segment that records the end) */
    if (!r->deadlock_said && !r->light)
      tc_notice("%s", message);
  } else if (r->hit_max) {
    x.reason = TC_EXIT_MAX_INSNS;
    x.status = 124;
    message = "stopped at the --max-insns limit";
  } else if (r->oom) {
    x.reason = TC_EXIT_ERROR;
    x.status = 125;
    message = "out of memory while recording";
  } else if (r->stop_requested) {
    x.reason = TC_EXIT_INTERRUPTED;
    x.status = r->stop_status ? r->stop_status : 130;
    message = "interrupted";
  } else {
    x.reason = TC_EXIT_ERROR;
    x.status = 125;
    if (!message)
      message = err && err->msg[0] ? err->msg : "emulation stopped";
  }
  x.insn_count = r->insn_index;
  x.message = message;
  tc_event ev = {.kind = TC_EV_EXIT};
  ev.u.exit = x;
  emit_event(r, &ev);
  emu->obs = (tc_emu_observer){0};

  r->stats.reason = x.reason;
  r->stats.status = x.status;
  r->stats.signal = x.signal;
  r->stats.insns = r->insn_index;
  if (res)
    *res = r->stats;
  return r->run_rc;
}

void tc_recorder_set_deadlock(tc_recorder *r) {
  r->deadlock = true;
  r->deadlock_said = true;
  r->done = true;
}

bool tc_recorder_blocked(const tc_recorder *r) { return r->blocked; }

void tc_recorder_set_turn(tc_recorder *r, uint64_t turn) {
  r->turn_pending = true;
  r->turn_no = turn;
}

int tc_recorder_run(tc_recorder *r, tc_run_result *res, tc_error *err) {
  while (tc_recorder_turn(r, err) != TC_TURN_DONE) {
    /* alone, a process is never blocked or asked to give way */
  }
  return tc_recorder_finish(r, res, err);
}

void tc_recorder_set_light(tc_recorder *r, uint64_t every, tc_checkpoint_fn fn,
                           void *ctx) {
  r->light = true;
  r->light_x86 = r->arch->traits.decode_every_insn;
  if (r->light_x86 && !r->lcache)
    r->lcache = calloc((size_t)1 << LCACHE_BITS, sizeof *r->lcache);
  r->ckpt_every = every;
  r->ckpt = fn;
  r->ckpt_ctx = ctx;
}

int tc_recorder_materialize(tc_recorder *r, uint64_t to, tc_emit_fn emit,
                            void *ctx, tc_error *err) {
  tc_emu *emu = r->emu;
  r->light = false;
  free(r->lcache);
  r->lcache = NULL;
  if (r->light_hook) {
    uc_hook_del(emu->uc, r->light_hook);
    r->light_hook = 0;
  }
  r->emit = emit;
  r->emit_ctx = ctx;
  r->seg_to = to;
  r->lpend = r->rep_tail = false;
  /* a fresh decoder: the run phase's was never told of code the guest
   * wrote (it has no memory hooks) */
  tc_decoder_free(r->dec);
  if (!(r->dec = tc_decoder_new(r->arch, err)))
    return -1;
  if (r->executed == 0) {
    r->began = false; /* tc_recorder_turn begins the stream */
    return 0;
  }
  /* where a recording from the start would be: a KEYFRAME before this
   * instruction (the segment starts on a keyframe), the hooks */
  r->insn_index = r->executed;
  if (r->keyframe_interval)
    r->keyframe_countdown =
        r->keyframe_interval - (uint32_t)(r->executed % r->keyframe_interval);
  read_all_regs(r, r->state_cur);
  r->stale_all = true;
  emit_keyframe(r);
  exec_ranges_rebuild(r);
  if (install_hooks(r, err) < 0)
    return -1;
  r->insn_limit = r->max_limit;
  clamp_limit(r);
  return 0;
}

bool tc_recorder_segment_ended(const tc_recorder *r) { return r->seg_end; }

bool tc_recorder_turn_ending(const tc_recorder *r) { return r->turn_ending; }

void tc_recorder_test_early_checkpoints(tc_recorder *r) {
  /* Only where one instruction early splits nothing the checkpoint guards
   * keep together (no delay slot, no IT block) and the light recorder
   * looks at instructions only near checkpoints: arm64, as it was written
   * for. Elsewhere it started segments inside those (armhf's materialize
   * diverged, mipsel's -j 2 crashed). */
  const tc_arch_traits *t = &r->arch->traits;
  r->test_early = !t->thumb_bit && !t->delay_slots && !t->decode_every_insn;
}

void tc_recorder_set_fault_ops(tc_recorder *r, const tc_fault_ops *ops) {
  r->fault_ops = *ops;
}

void tc_recorder_counts(const tc_recorder *r, uint64_t *syscalls,
                        uint64_t *mem_accesses) {
  *syscalls = r->stats.syscalls;
  *mem_accesses = r->stats.mem_accesses;
}

const char *tc_recorder_light_refusal(const tc_recorder *r) {
  return r->light_refusal;
}
