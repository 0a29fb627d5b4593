/* Event filters (see filter.h and tc_filter). */
#include "analysis/filter.h"

#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/elf/symbols.h"
#include "common/linux/sysdecode.h"
#include "writers/format.h"

typedef struct range {
  uint64_t lo, hi;
} range;

/* One --range: what it names and whether anything matched it yet. */
typedef struct spec {
  const char *text;
  bool numeric, found;
} spec;

struct tc_filter_state {
  tc_filter f;
  bool plain;
  bool seeked;      /* the reader started at f.from */
  bool reached;     /* an instruction >= from was seen */
  bool checked;     /* range names were checked at the first instruction */
  bool insn_passed; /* the last instruction passed the pc tests */
  bool insn_shown;  /* the last instruction was written */
  bool stop_next;   /* the count is reached: stop at the next record */
  uint64_t seen, written;
  spec *specs;
  size_t nspecs;
  range *ranges;
  size_t nranges, capranges;
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
                !f->syscalls_only && !f->from && !f->skip && !f->count);
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
  tc_symtab *syms =
      n ? tc_symtab_from_elf(info->exe_data, info->exe_size, info->load_base)
        : NULL;
  for (size_t i = 0; i < n; i++) {
    spec *sp = &s->specs[i];
    sp->text = s->f.ranges[i];
    uint64_t lo, hi;
    if (parse_hex_range(sp->text, &lo, &hi)) {
      if (lo >= hi) {
        tc_error_set(err, "--range %s: the end must be above the start",
                     sp->text);
        tc_symtab_free(syms);
        tc_filter_free(s);
        return NULL;
      }
      sp->numeric = sp->found = true;
      if (!add_range(s, lo, hi))
        goto oom;
      continue;
    }
    /* a function symbol (every one of that name); a module of the same
     * name is looked for in the MAP events too */
    for (size_t k = 0; tc_symtab_lookup(syms, sp->text, k, &lo, &hi); k++) {
      sp->found = true;
      if (!add_range(s, lo, hi))
        goto oom;
    }
  }
  tc_symtab_free(syms);
  return s;
oom:
  tc_symtab_free(syms);
  tc_filter_free(s);
  tc_error_set(err, "out of memory");
  return NULL;
}

void tc_filter_free(tc_filter_state *s) {
  if (!s)
    return;
  free(s->specs);
  free(s->ranges);
  free(s);
}

static const char *base_name(const char *p) {
  const char *b = strrchr(p, '/');
  return b ? b + 1 : p;
}

/* A MAP from a module a --range names adds its region. */
static bool note_map(tc_filter_state *s, const tc_map_event *m) {
  if (!m->name || !m->name[0])
    return true;
  for (size_t i = 0; i < s->nspecs; i++) {
    spec *sp = &s->specs[i];
    if (sp->numeric || (strcmp(m->name, sp->text) != 0 &&
                        strcmp(base_name(m->name), sp->text) != 0))
      continue;
    sp->found = true;
    if (!add_range(s, m->addr, m->addr + m->size))
      return false;
  }
  return true;
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
  return !s->nspecs && !s->f.npcs && !s->f.syscalls && !s->f.syscalls_only;
}

static bool window_open(const tc_filter_state *s) {
  return (s->reached || !s->f.from) && s->seen >= s->f.skip;
}

static int pass(const tc_event *ev, const tc_format *out, tc_writer *w,
                tc_error *err) {
  return out->write_event(w, ev, err) < 0 ? -1 : 1;
}

static int hide(const tc_event *ev, const tc_format *out, tc_writer *w,
                tc_error *err) {
  if (out->skip_event && out->skip_event(w, ev, err) < 0)
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

int tc_filter_event(tc_filter_state *s, const tc_event *ev,
                    const tc_format *out, tc_writer *w, tc_error *err) {
  if (s->plain)
    return pass(ev, out, w, err);
  switch (ev->kind) {
  case TC_EV_INSN: {
    const tc_insn_event *e = &ev->u.insn;
    if (!s->checked) {
      /* the initial maps are in: every name must have matched by now */
      s->checked = true;
      for (size_t i = 0; i < s->nspecs; i++)
        if (!s->specs[i].found) {
          tc_error_set(err,
                       "--range %s: no function or module of that name "
                       "(ranges are A-B in hex, a symbol, or a module)",
                       s->specs[i].text);
          return -1;
        }
    }
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
    s->insn_passed = pc_passes(s, e->pc);
    s->insn_shown = false;
    if (s->f.syscalls_only || !s->insn_passed)
      return hide(ev, out, w, err);
    int win = window(s);
    if (win < 0)
      return 0;
    if (!win)
      return hide(ev, out, w, err);
    s->insn_shown = true;
    return pass(ev, out, w, err);
  }
  case TC_EV_SYSCALL: {
    const tc_syscall_event *y = &ev->u.sys;
    if (y->insn_index < s->f.from || !name_passes(s, y))
      return hide(ev, out, w, err);
    if (!s->f.syscalls_only)
      return s->insn_shown ? pass(ev, out, w, err) : hide(ev, out, w, err);
    if (!s->insn_passed)
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
    if (s->stop_next || !window_only(s) || ev->u.key.insn_index < s->f.from)
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
    return pass(ev, out, w, err);
  }
  return hide(ev, out, w, err);
}

int tc_filter_finish(tc_filter_state *s, tc_error *err) {
  if (!s->plain && s->f.from && !s->reached && !s->seeked) {
    tc_error_set(err, "no instruction %" PRIu64 " in the trace", s->f.from);
    return -1;
  }
  return 0;
}
