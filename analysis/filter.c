/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Event filters (see filter.h and tc_filter). */
#include "analysis/filter.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/elf/elf.h"
#include "common/elf/modsyms.h"
#include "common/linux/sysdecode.h"
#include "writers/format.h"

typedef struct range {
  uint64_t lo, hi;
} range;

/* A copy of an INSN event that outlives the reader's buffers. */
typedef struct held_insn {
  tc_event ev;
  uint16_t *regs;
  uint8_t *states; /* state_before, state_after */
  tc_mem_access *mem;
  uint8_t *bytes; /* every access's before and after bytes */
  size_t capregs, capstates, capmem, capbytes;
} held_insn;

/* One --range: what it names and whether anything matched it yet. */
typedef struct spec {
  const char *text;
  bool numeric, found;
} spec;

struct tc_filter_state {
  tc_filter f;
  bool plain;
  bool seeked;  /* the reader started at f.from */
  bool reached; /* an instruction >= from was seen */
  bool checked; /* range names were checked at the first instruction */
  /* Names can still match after the first instruction: the program has an
   * interpreter (libraries come later) or the trace lacks its bytes. Then
   * they are checked at the end. */
  bool late_names;
  /* the symbols of every module mapped so far, and where module paths
   * are found (tc_filter.root) */
  tc_modsyms *syms;
  char root[4096];
  bool insn_passed;  /* the last instruction passed the pc tests */
  bool insn_shown;   /* the last instruction was written */
  bool insn_mem_hit; /* its own accesses passed --mem (or there is none) */
  bool stop_next;    /* the count is reached: stop at the next record */
  uint64_t seen, written;
  spec *specs;
  size_t nspecs;
  range *ranges;
  size_t nranges, capranges;
  /* --mem: the byte ranges and the access kinds looked at */
  range *mem;
  size_t nmem;
  int mem_kind;
  /* --reg: register indices */
  int *regs;
  size_t nregs;
  /* An instruction that passed every test but the memory or syscall
   * one, held (a copy) until the next event says whether it made a
   * syscall (of a --syscall name, whose kernel writes touch the --mem
   * range): the SYSCALL event comes after its INSN. */
  bool held;
  held_insn hold;
  size_t state_size;
};

static bool add_range(tc_filter_state *s, uint64_t lo, uint64_t hi) {
  if (s->nranges == s->capranges) {
    size_t cap = s->capranges ? 2 * s->capranges : 8;
    range *r = realloc(s->ranges, cap * sizeof *r);
    if (!r)
      return false;
    s->ranges = r;
    s->capranges = cap;
  }
  s->ranges[s->nranges++] = (range){lo, hi};
  return true;
}

/* "A-B" with hex numbers (0x optional). */
static bool parse_hex_range(const char *t, uint64_t *lo, uint64_t *hi) {
  const char *dash = strchr(t, '-');
  if (!dash || dash == t || !dash[1])
    return false;
  for (const char *p = t; *p; p++)
    if (p != dash && !isxdigit((unsigned char)*p) && *p != 'x' && *p != 'X')
      return false;
  char *end;
  *lo = strtoull(t, &end, 16);
  if (end != dash)
    return false;
  *hi = strtoull(dash + 1, &end, 16);
  return *end == 0;
}

bool tc_filter_is_plain(const tc_filter *f) {
  return !f || (!(f->ranges && f->ranges[0]) && !f->npcs && !f->syscalls &&
                !f->syscalls_only && !f->from && !f->skip && !f->count &&
                !(f->mem && f->mem[0]) && !(f->regs && f->regs[0]) && !f->to);
}

/* Grows *p to hold need bytes. */
static bool grow(void *p, size_t *cap, size_t need) {
  if (need <= *cap)
    return true;
  size_t n = *cap ? *cap : 256;
  while (n < need)
    n *= 2;
  void *q = realloc(*(void **)p, n);
  if (!q)
    return false;
  *(void **)p = q;
  *cap = n;
  return true;
}

/* --mem: "A", "A-B" or "A:LEN" (addresses hex, LEN decimal or 0x-hex). */
static bool parse_mem_range(const char *t, uint64_t *lo, uint64_t *hi) {
  const char *sep = t + strcspn(t, "-:");
  for (const char *p = t; p < sep; p++)
    if (!isxdigit((unsigned char)*p) && *p != 'x' && *p != 'X')
      return false;
  if (sep == t)
    return false;
  char *end;
  errno = 0;
  *lo = strtoull(t, &end, 16);
  if (end != sep || errno)
    return false;
  if (!*sep) {
    *hi = *lo + 1;
    return *hi > *lo;
  }
  if (!sep[1] || !isxdigit((unsigned char)sep[1]))
    return false;
  uint64_t v = strtoull(sep + 1, &end, *sep == '-' ? 16 : 0);
  if (*end || errno)
    return false;
  if (*sep == '-')
    *hi = v;
  else if (v == 0 || v > UINT64_MAX - *lo)
    return false;
  else
    *hi = *lo + v;
  return *hi > *lo;
}

/* --reg: a register of the trace's arch by name, any case; the 32-bit
 * names of x86-64 and arm64 (eax, w0) and arm64's lr and fp stand for
 * the register they are part of. -1 if none. */
static int reg_by_name(const tc_arch *a, const char *name) {
  char low[32];
  size_t n = strlen(name);
  if (n == 0 || n >= sizeof low)
    return -1;
  for (size_t i = 0; i <= n; i++)
    low[i] = (char)tolower((unsigned char)name[i]);
  int k = tc_arch_reg_index(a, low);
  if (k >= 0)
    return k;
  char alias[40] = "";
  if (a->traits.reg_alias && a->traits.reg_alias(low, alias, sizeof alias))
    return tc_arch_reg_index(a, alias);
  return -1;
}

/* The --mem and --reg tests, checked and resolved for the trace's arch. */
static int prepare_mem_regs(tc_filter_state *s, const tc_trace_info *info,
                            tc_error *err) {
  size_t n = 0;
  while (s->f.mem && s->f.mem[n])
    n++;
  if (n && !(s->mem = calloc(n, sizeof *s->mem)))
    goto oom;
  for (size_t i = 0; i < n; i++) {
    if (!parse_mem_range(s->f.mem[i], &s->mem[i].lo, &s->mem[i].hi)) {
      tc_error_set(err,
                   "--mem %s: not a memory range (ADDR, ADDR-END or "
                   "ADDR:LEN; addresses in hex, END above ADDR)",
                   s->f.mem[i]);
      return -1;
    }
    s->nmem++;
  }
  s->mem_kind = s->f.mem_kind & (TC_MEM_READ | TC_MEM_WRITE);
  if (!s->mem_kind)
    s->mem_kind = TC_MEM_READ | TC_MEM_WRITE;
  n = 0;
  while (s->f.regs && s->f.regs[n])
    n++;
  if (n && !(s->regs = calloc(n, sizeof *s->regs)))
    goto oom;
  for (size_t i = 0; i < n; i++) {
    int k = info->arch ? reg_by_name(info->arch, s->f.regs[i]) : -1;
    if (k < 0) {
      tc_error_set(err, "--reg %s: no register of that name on %s (%s, %s...)",
                   s->f.regs[i], info->arch ? info->arch->name : "this arch",
                   info->arch ? tc_arch_reg_name(info->arch, 0) : "",
                   info->arch ? tc_arch_reg_name(info->arch, 1) : "");
      return -1;
    }
    s->regs[s->nregs++] = k;
  }
  if (s->f.to && s->f.from >= s->f.to) {
    tc_error_set(err,
                 "--to %" PRIu64 ": must be above --from %" PRIu64
                 " (the window is [from, to))",
                 s->f.to, s->f.from);
    return -1;
  }
  s->state_size = info->arch ? tc_arch_state_size(info->arch) : 0;
  return 0;
oom:
  tc_error_set(err, "out of memory");
  return -1;
}

/* 1 if the program the trace carries has a PT_INTERP. */
static bool has_interp(const tc_trace_info *info) {
  tc_elf_header h;
  if (tc_elf_read_header(info->exe_data, info->exe_size, &h, NULL) < 0)
    return false;
  unsigned n = tc_elf_program_count(&h, info->exe_size);
  for (unsigned i = 0; i < n; i++) {
    tc_elf_program p;
    tc_elf_program_at(info->exe_data, &h, i, &p);
    if (p.type == 3)
      return true;
  }
  return false;
}

/* A module's host file: its path under tc_filter.root when given. */
static FILE *open_module(void *ctx, const char *path) {
  const tc_filter_state *s = ctx;
  return tc_open_module_file(s->root, path);
}

/* The functions the --range names (NAME or MODULE:NAME) match in module
 * i, every one of that name. false: out of memory. */
static bool names_in_module(tc_filter_state *s, size_t i) {
  for (size_t k = 0; k < s->nspecs; k++) {
    spec *sp = &s->specs[k];
    uint64_t lo, hi;
    for (size_t nth = 0;
         !sp->numeric && tc_modsyms_lookup(s->syms, i, sp->text, nth, &lo, &hi);
         nth++) {
      sp->found = true;
      if (!add_range(s, lo, hi))
        return false;
    }
  }
  return true;
}

tc_filter_state *tc_filter_new(const tc_filter *f, const tc_trace_info *info,
                               bool seeked, tc_error *err) {
  tc_filter_state *s = calloc(1, sizeof *s);
  if (!s) {
    tc_error_set(err, "out of memory");
    return NULL;
  }
  static const tc_filter none = {0};
  s->f = f ? *f : none;
  s->plain = tc_filter_is_plain(f);
  s->seeked = seeked;
  size_t n = 0;
  while (s->f.ranges && s->f.ranges[n])
    n++;
  s->specs = calloc(n ? n : 1, sizeof *s->specs);
  if (!s->specs) {
    tc_filter_free(s);
    tc_error_set(err, "out of memory");
    return NULL;
  }
  s->nspecs = n;
  if (prepare_mem_regs(s, info, err) < 0) {
    tc_filter_free(s);
    return NULL;
  }
  for (size_t i = 0; i < n; i++) {
    spec *sp = &s->specs[i];
    sp->text = s->f.ranges[i];
    uint64_t lo, hi;
    if (parse_hex_range(sp->text, &lo, &hi)) {
      if (lo >= hi) {
        tc_error_set(err, "--range %s: the end must be above the start",
                     sp->text);
        tc_filter_free(s);
        return NULL;
      }
      sp->numeric = sp->found = true;
      if (!add_range(s, lo, hi))
        goto oom;
    }
  }
  if (n) {
    /* names: functions of the program now, of each module as it is
     * mapped (note_map); modules by their maps */
    if (s->f.root)
      snprintf(s->root, sizeof s->root, "%s", s->f.root);
    s->late_names = !info->exe_data || has_interp(info);
    s->syms = tc_modsyms_new(info->arch ? info->arch->elf_machine : 0,
                             open_module, s);
    if (!s->syms)
      goto oom;
    int prog = tc_modsyms_add_program(s->syms, info->exe_path, info->exe_data,
                                      info->exe_size, info->load_base);
    if (prog >= 0 && !names_in_module(s, (size_t)prog))
      goto oom;
  }
  return s;
oom:
  tc_filter_free(s);
  tc_error_set(err, "out of memory");
  return NULL;
}

void tc_filter_free(tc_filter_state *s) {
  if (!s)
    return;
  tc_modsyms_free(s->syms);
  free(s->specs);
  free(s->ranges);
  free(s->mem);
  free(s->regs);
  free(s->hold.regs);
  free(s->hold.states);
  free(s->hold.mem);
  free(s->hold.bytes);
  free(s);
}

/* A MAP: a module a --range names adds its region; an executable one
 * makes its module's functions known. */
static bool note_map(tc_filter_state *s, const tc_map_event *m) {
  if (!m->name || !m->name[0] || !s->nspecs)
    return true;
  for (size_t i = 0; i < s->nspecs; i++) {
    spec *sp = &s->specs[i];
    if (sp->numeric || !tc_module_name_matches(m->name, sp->text))
      continue;
    sp->found = true;
    if (!add_range(s, m->addr, m->addr + m->size))
      return false;
  }
  int mod = tc_modsyms_map(s->syms, m->name, m->addr, m->file_offset, m->prot);
  return mod < 0 || names_in_module(s, (size_t)mod);
}

/* The names unmatched: -1 with a message naming the first. */
static int names_check(const tc_filter_state *s, tc_error *err) {
  for (size_t i = 0; i < s->nspecs; i++)
    if (!s->specs[i].found) {
      tc_error_set(err,
                   "--range %s: no function or module of that name "
                   "(ranges are A-B in hex, NAME, MODULE:NAME or MODULE)",
                   s->specs[i].text);
      return -1;
    }
  return 0;
}

static bool pc_passes(const tc_filter_state *s, uint64_t pc) {
  if (s->nspecs) {
    bool in = false;
    for (size_t i = 0; i < s->nranges && !in; i++)
      in = pc >= s->ranges[i].lo && pc < s->ranges[i].hi;
    if (!in)
      return false;
  }
  if (s->f.npcs) {
    for (size_t i = 0; i < s->f.npcs; i++)
      if (s->f.pcs[i] == pc)
        return true;
    return false;
  }
  return true;
}

/* Whether any access of a kind --mem looks at touches its ranges. */
static bool mem_touches(const tc_filter_state *s, const tc_mem_access *m,
                        uint32_t n) {
  for (uint32_t i = 0; i < n; i++) {
    if (!(m[i].kind & s->mem_kind) || m[i].size == 0)
      continue;
    uint64_t a = m[i].addr;
    for (size_t k = 0; k < s->nmem; k++)
      if (a < s->mem[k].hi &&
          (s->mem[k].lo <= a || s->mem[k].lo - a < m[i].size))
        return true;
  }
  return false;
}

static bool regs_pass(const tc_filter_state *s, const tc_insn_event *e) {
  if (!s->nregs)
    return true;
  for (uint16_t i = 0; i < e->nregs; i++)
    for (size_t k = 0; k < s->nregs; k++)
      if (e->regs[i] == s->regs[k])
        return true;
  return false;
}

/* Keeps a copy of an INSN event (see held_insn). */
static bool hold_insn(tc_filter_state *s, const tc_event *ev) {
  held_insn *h = &s->hold;
  const tc_insn_event *e = &ev->u.insn;
  size_t nbytes = 0;
  for (uint32_t i = 0; i < e->nmem; i++)
    nbytes += (size_t)e->mem[i].size * 2;
  if (!grow(&h->regs, &h->capregs, e->nregs * sizeof *h->regs) ||
      !grow(&h->states, &h->capstates, 2 * s->state_size) ||
      !grow(&h->mem, &h->capmem, e->nmem * sizeof *h->mem) ||
      !grow(&h->bytes, &h->capbytes, nbytes))
    return false;
  h->ev = *ev;
  tc_insn_event *c = &h->ev.u.insn;
  if (e->nregs)
    memcpy(h->regs, e->regs, e->nregs * sizeof *h->regs);
  c->regs = h->regs;
  if (e->state_before) {
    memcpy(h->states, e->state_before, s->state_size);
    c->state_before = h->states;
  }
  if (e->state_after) {
    memcpy(h->states + s->state_size, e->state_after, s->state_size);
    c->state_after = h->states + s->state_size;
  }
  uint8_t *b = h->bytes;
  for (uint32_t i = 0; i < e->nmem; i++) {
    const tc_mem_access *m = &e->mem[i];
    h->mem[i] = *m;
    if (m->before) {
      memcpy(b, m->before, m->size);
      h->mem[i].before = b;
      b += m->size;
    }
    if (m->after && m->after != m->before) {
      memcpy(b, m->after, m->size);
      h->mem[i].after = b;
      b += m->size;
    } else if (m->after) {
      h->mem[i].after = h->mem[i].before;
    }
  }
  c->mem = h->mem;
  s->held = true;
  return true;
}

static bool name_passes(const tc_filter_state *s, const tc_syscall_event *y) {
  if (!s->f.syscalls)
    return true;
  /* by the name strace shows (i386 socketcall: the call it stands for) */
  const char *name = tc_sysdecode_name(y);
  for (const char *const *n = s->f.syscalls; *n; n++)
    if (name && strcmp(*n, name) == 0)
      return true;
  return false;
}

/* Only a window (from/skip/count): maps and keyframes inside it show. */
static bool window_only(const tc_filter_state *s) {
  return !s->nspecs && !s->f.npcs && !s->f.syscalls && !s->f.syscalls_only &&
         !s->nmem && !s->nregs;
}

static bool window_open(const tc_filter_state *s) {
  return (s->reached || !s->f.from) && s->seen >= s->f.skip;
}

/* With out NULL (tc_filter_count) nothing is written. */
static int pass(const tc_event *ev, const tc_format *out, tc_writer *w,
                tc_error *err) {
  return out && out->write_event(w, ev, err) < 0 ? -1 : 1;
}

static int hide(const tc_event *ev, const tc_format *out, tc_writer *w,
                tc_error *err) {
  if (out && out->skip_event && out->skip_event(w, ev, err) < 0)
    return -1;
  return 1;
}

/* A record passed every test: is it inside the skip/count window? Returns
 * 1 write it, 0 leave it out, -1 stop before it. */
static int window(tc_filter_state *s) {
  if (s->stop_next)
    return -1;
  if (s->seen++ < s->f.skip)
    return 0;
  s->written++;
  if (s->f.count && s->written == s->f.count)
    s->stop_next = true;
  return 1;
}

/* An instruction that passed every test: written if the window says so. */
static int show_insn(tc_filter_state *s, const tc_event *ev,
                     const tc_format *out, tc_writer *w, tc_error *err) {
  int win = window(s);
  if (win < 0)
    return 0;
  if (!win)
    return hide(ev, out, w, err);
  s->insn_shown = true;
  return pass(ev, out, w, err);
}

/* The held instruction is decided by the event after it, which says
 * whether it made a syscall: shown if its own accesses or the kernel's
 * writes touch the --mem range, and (with --syscall) the syscall is one
 * of those named. */
static int decide_held(tc_filter_state *s, const tc_event *ev,
                       const tc_format *out, tc_writer *w, tc_error *err) {
  s->held = false;
  const tc_event *h = &s->hold.ev;
  const tc_syscall_event *y = &ev->u.sys;
  bool its_sys = ev->kind == TC_EV_SYSCALL &&
                 y->insn_index == h->u.insn.index && y->part == 0;
  bool hit =
      (s->insn_mem_hit || (its_sys && mem_touches(s, y->mem, y->nmem))) &&
      (!s->f.syscalls || (its_sys && name_passes(s, y)));
  return hit ? show_insn(s, h, out, w, err) : hide(h, out, w, err);
}

int tc_filter_event(tc_filter_state *s, const tc_event *ev,
                    const tc_format *out, tc_writer *w, tc_error *err) {
  if (s->plain) {
    s->written += ev->kind == TC_EV_INSN; /* every instruction a record */
    return pass(ev, out, w, err);
  }
  if (s->held) {
    int k = decide_held(s, ev, out, w, err);
    if (k <= 0)
      return k;
  }
  switch (ev->kind) {
  case TC_EV_INSN: {
    const tc_insn_event *e = &ev->u.insn;
    if (!s->checked) {
      /* the initial maps are in: a static program's names must have
       * matched by now */
      s->checked = true;
      if (!s->late_names && names_check(s, err) < 0)
        return -1;
    }
    if (s->f.to && e->index >= s->f.to)
      return 0; /* the window's end */
    if (e->index < s->f.from) {
      s->insn_passed = s->insn_shown = false;
      return hide(ev, out, w, err);
    }
    if (!s->reached && s->f.from && !s->seeked) {
      /* reading forward to --from: start with the state there, as a
       * format's seek does */
      tc_event k = {.kind = TC_EV_KEYFRAME};
      k.u.key.insn_index = e->index;
      k.u.key.tid = e->tid;
      k.u.key.state = e->state_before;
      s->reached = true;
      if (window_only(s) && s->f.skip == 0 && pass(&k, out, w, err) < 0)
        return -1;
    }
    s->reached = true;
    s->insn_passed = pc_passes(s, e->pc) && regs_pass(s, e);
    s->insn_shown = false;
    s->insn_mem_hit = !s->nmem || mem_touches(s, e->mem, e->nmem);
    if (s->f.syscalls_only || !s->insn_passed)
      return hide(ev, out, w, err);
    if (!s->insn_mem_hit && !(s->mem_kind & TC_MEM_WRITE))
      return hide(ev, out, w, err);
    if (!s->insn_mem_hit || s->f.syscalls) {
      /* its syscall's kernel writes may still touch the range; with
       * --syscall only an instruction that makes one of those shows */
      if (!hold_insn(s, ev)) {
        tc_error_set(err, "out of memory");
        return -1;
      }
      return 1;
    }
    return show_insn(s, ev, out, w, err);
  }
  case TC_EV_SYSCALL: {
    const tc_syscall_event *y = &ev->u.sys;
    if (y->insn_index < s->f.from || !name_passes(s, y))
      return hide(ev, out, w, err);
    if (!s->f.syscalls_only)
      return s->insn_shown ? pass(ev, out, w, err) : hide(ev, out, w, err);
    if (!s->insn_passed ||
        (!s->insn_mem_hit && !mem_touches(s, y->mem, y->nmem)))
      return hide(ev, out, w, err);
    int win = window(s);
    if (win < 0)
      return 0;
    return win ? pass(ev, out, w, err) : hide(ev, out, w, err);
  }
  case TC_EV_MAP:
    if (!note_map(s, &ev->u.map)) {
      tc_error_set(err, "out of memory");
      return -1;
    }
    /* fall through */
  case TC_EV_UNMAP:
  case TC_EV_PROTECT:
    if (s->stop_next && window_only(s))
      return hide(ev, out, w, err);
    return window_only(s) && window_open(s) ? pass(ev, out, w, err)
                                            : hide(ev, out, w, err);
  case TC_EV_KEYFRAME:
    if (s->stop_next || !window_only(s) || ev->u.key.insn_index < s->f.from ||
        (s->f.to && ev->u.key.insn_index >= s->f.to))
      return hide(ev, out, w, err);
    if (s->f.from && ev->u.key.insn_index >= s->f.from)
      s->reached = true;
    return window_open(s) ? pass(ev, out, w, err) : hide(ev, out, w, err);
  case TC_EV_FAULT:
    if (ev->u.fault.insn_index < s->f.from)
      return hide(ev, out, w, err);
    return (s->f.syscalls_only && s->insn_passed && !s->stop_next) ||
                   s->insn_shown
               ? pass(ev, out, w, err)
               : hide(ev, out, w, err);
  case TC_EV_SIGNAL: /* shown where a fault would be (strace shows both) */
    if (ev->u.sig.insn_index < s->f.from)
      return hide(ev, out, w, err);
    return (s->f.syscalls_only && s->insn_passed && !s->stop_next) ||
                   s->insn_shown
               ? pass(ev, out, w, err)
               : hide(ev, out, w, err);
  case TC_EV_EXIT:
  case TC_EV_TURN: /* a marker of time order, kept whatever the selection */
    return pass(ev, out, w, err);
  }
  return hide(ev, out, w, err);
}

uint64_t tc_filter_records(const tc_filter_state *s) { return s->written; }

int tc_filter_finish(tc_filter_state *s, tc_error *err) {
  if (!s->plain && names_check(s, err) < 0)
    return -1;
  if (!s->plain && s->f.from && !s->reached && !s->seeked) {
    tc_error_set(err, "no instruction %" PRIu64 " in the trace", s->f.from);
    return -1;
  }
  return 0;
}
