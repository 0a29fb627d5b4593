/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The kinds of data a trace holds, from the formats' capabilities. The
 * loss report counts what the source stream really held (its caps say what
 * it could hold; a recording without syscalls loses none) and names each
 * kind the target's caps leave out. Format-neutral: only tc_format. */
#include "writers/io/caps.h"
#include "common/arch.h"
#include "writers/format.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int tc_caps_regs_held(const tc_format *f, const tc_arch *arch) {
  int n = 0;
  for (int r = 0; r < arch->nregs; r++)
    n += !f->holds_reg || f->holds_reg(arch, r) ? 1 : 0;
  return n;
}

static bool holds(const tc_format *f, const tc_arch *a, int r) {
  return !f->holds_reg || f->holds_reg(a, r);
}

int tc_loss_init(tc_loss *l, const tc_format *src, const tc_format *dst,
                 const tc_arch *arch) {
  memset(l, 0, sizeof *l);
  l->src = src;
  l->dst = dst;
  l->arch = arch;
  l->reg_data = calloc(arch->nregs ? arch->nregs : 1, 1);
  return l->reg_data ? 0 : -1;
}

void tc_loss_free(tc_loss *l) {
  free(l->reg_data);
  l->reg_data = NULL;
}

static void mark_state(tc_loss *l, const uint8_t *state) {
  const tc_arch *a = l->arch;
  for (int r = 0; state && r < a->nregs; r++) {
    const tc_reg_info *ri = &a->regs[r];
    for (unsigned k = 0; k < ri->size && !l->reg_data[r]; k++)
      l->reg_data[r] = state[ri->offset + k] != 0;
  }
}

void tc_loss_see(tc_loss *l, const tc_event *ev) {
  switch (ev->kind) {
  case TC_EV_INSN: {
    const tc_insn_event *in = &ev->u.insn;
    l->insns++;
    if (!l->first_state_seen) {
      mark_state(l, in->state_before);
      l->first_state_seen = true;
    }
    /* a register that changed held a non-zero value before or after */
    for (uint16_t i = 0; i < in->nregs; i++)
      if (in->regs[i] < l->arch->nregs)
        l->reg_data[in->regs[i]] = 1;
    for (uint32_t i = 0; i < in->nmem; i++) {
      if (in->mem[i].kind == TC_MEM_WRITE)
        l->writes++;
      else
        l->reads++;
    }
    if (in->tid && in->tid != TC_TID_BLOCK)
      l->tids = true;
    break;
  }
  case TC_EV_SYSCALL:
    if (ev->u.sys.part == 0) {
      l->syscalls++;
      l->compat_syscalls += ev->u.sys.compat != 0;
      const char *name = ev->u.sys.name;
      if (name && (!strcmp(name, "exit") || !strcmp(name, "exit_group")))
        l->exit_syscalls++;
    }
    l->sysmem += ev->u.sys.nmem;
    break;
  case TC_EV_MAP:
    l->maps++;
    l->named_maps += ev->u.map.name && ev->u.map.name[0] == '/';
    l->data_maps += ev->u.map.data != NULL;
    break;
  case TC_EV_UNMAP:
  case TC_EV_PROTECT:
    l->maps++;
    break;
  case TC_EV_KEYFRAME:
    mark_state(l, ev->u.key.state);
    break;
  case TC_EV_FAULT:
    l->faults++;
    break;
  case TC_EV_SIGNAL:
    l->signals++;
    break;
  case TC_EV_TURN:
    l->turns++;
    break;
  case TC_EV_EXIT:
    l->have_exit = true;
    l->exit_reason = ev->u.exit.reason;
    break;
  }
}

typedef struct strbuf {
  char *p;
  size_t max, n;
  int items;
} strbuf;

static void add(strbuf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void add(strbuf *b, const char *fmt, ...) {
  if (b->n + 1 >= b->max)
    return;
  if (b->items++)
    b->n += (size_t)snprintf(b->p + b->n, b->max - b->n, ", ");
  if (b->n >= b->max) {
    b->n = b->max - 1;
    return;
  }
  va_list ap;
  va_start(ap, fmt);
  b->n += (size_t)vsnprintf(b->p + b->n, b->max - b->n, fmt, ap);
  va_end(ap);
  if (b->n >= b->max)
    b->n = b->max - 1;
}

/* The exit the source stream held as a record of its own (not the
 * reader's "no exit record" stand-in). */
static bool source_exit(const tc_loss *l) {
  uint32_t c = l->src->caps;
  if (!l->have_exit)
    return false;
  if (c & TC_CAP_EXIT)
    return true;
  return (l->exit_reason == TC_EXIT_EXITED && (c & TC_CAP_SYSCALLS) &&
          l->exit_syscalls) ||
         (l->exit_reason == TC_EXIT_SIGNALED && (c & TC_CAP_FAULTS) &&
          l->faults);
}

/* The target keeps it: as a record, or rebuilt by its reader from the exit
 * syscall or the fault. */
static bool target_exit(const tc_loss *l) {
  uint32_t c = l->dst->caps;
  if (c & TC_CAP_EXIT)
    return true;
  if (l->exit_reason == TC_EXIT_EXITED)
    return (c & TC_CAP_SYSCALLS) && l->exit_syscalls;
  if (l->exit_reason == TC_EXIT_SIGNALED)
    return (c & TC_CAP_FAULTS) && l->faults;
  return false;
}

int tc_loss_dropped(const tc_loss *l, char *buf, size_t max) {
  strbuf b = {buf, max, 0, 0};
  if (max)
    buf[0] = 0;
  uint32_t s = l->src->caps, d = l->dst->caps;
  const tc_arch *a = l->arch;
  if ((d & TC_CAP_COVERAGE) && !(s & TC_CAP_COVERAGE) && l->insns)
    add(&b, "the execution order (coverage keeps each block once)");
  if ((s & TC_CAP_INSN_BYTES) && !(d & TC_CAP_INSN_BYTES) && l->insns)
    add(&b, "instruction bytes");
  else if (!(s & TC_CAP_INSN_BYTES) && (d & TC_CAP_INSN_BYTES) && l->insns)
    /* a target that holds them gets none: empty instructions (rvn's code
     * pages zeros, bap's rawbytes and ucir's sizes empty) */
    add(&b,
        "instruction bytes (the %s input has none: %s gets empty "
        "instructions)",
        l->src->name, l->dst->name);
  int src_regs = 0, lost = 0;
  char names[160] = "";
  size_t nn = 0;
  int shown = 0;
  for (int r = 0; r < a->nregs; r++) {
    if (!holds(l->src, a, r))
      continue;
    src_regs++;
    if (holds(l->dst, a, r) || !l->reg_data[r] || !l->insns)
      continue;
    lost++;
    if (shown < 6 && nn + 16 < sizeof names) {
      nn += (size_t)snprintf(names + nn, sizeof names - nn, "%s%s",
                             shown ? ", " : "", a->regs[r].name);
      shown++;
    }
  }
  if (lost)
    add(&b, "%d of %d registers (%s%s)", lost, src_regs, names,
        lost > shown ? ", ..." : "");
  uint64_t acc = l->reads + l->writes;
  if ((s & TC_CAP_MEM) && acc) {
    if (!(d & TC_CAP_MEM)) {
      add(&b, "memory accesses");
    } else {
      if ((d & TC_CAP_MEM_WRITES_ONLY) &&
          !(s & (TC_CAP_MEM_KIND | TC_CAP_MEM_WRITES_ONLY)))
        /* tfile: every access reads back as a read; a writes-only target
         * keeps none of them */
        add(&b,
            "every memory access (the %s input does not tell writes from "
            "reads; %s keeps writes only)",
            l->src->name, l->dst->name);
      else if ((d & TC_CAP_MEM_WRITES_ONLY) && !(s & TC_CAP_MEM_WRITES_ONLY) &&
               l->reads)
        add(&b, "memory read values");
      /* a writes-only source knows every access is a write */
      if ((s & (TC_CAP_MEM_KIND | TC_CAP_MEM_WRITES_ONLY)) &&
          !(d & TC_CAP_MEM_KIND) && !(d & TC_CAP_MEM_WRITES_ONLY))
        add(&b, "read/write kinds");
      if ((s & TC_CAP_MEM_EXACT) && !(d & TC_CAP_MEM_EXACT))
        add(&b, "exact access sizes");
      if ((s & TC_CAP_MEM_OLD) && !(d & TC_CAP_MEM_OLD) && l->writes)
        add(&b, "values before writes");
    }
  }
  if ((s & TC_CAP_SYSCALLS) && l->syscalls && !(d & TC_CAP_SYSCALLS))
    add(&b, "%" PRIu64 " syscall%s", l->syscalls, l->syscalls == 1 ? "" : "s");
  else if ((s & TC_CAP_SYSCALL_MEM) && l->sysmem && !(d & TC_CAP_SYSCALL_MEM))
    add(&b, "syscall memory writes");
  if ((s & TC_CAP_SYSCALL_COMPAT) && l->compat_syscalls &&
      (d & TC_CAP_SYSCALLS) && !(d & TC_CAP_SYSCALL_COMPAT))
    add(&b,
        "which table %" PRIu64 " syscall%s used (int $0x80 in 64-bit code: "
        "read back with x86-64's names)",
        l->compat_syscalls, l->compat_syscalls == 1 ? "" : "s");
  if ((s & TC_CAP_MAPS) && l->maps && !(d & TC_CAP_MAPS))
    add(&b, "%s", (d & TC_CAP_MODULES) ? "maps (module names kept)" : "maps");
  else if ((s & TC_CAP_MODULES) && l->named_maps &&
           !(d & (TC_CAP_MAPS | TC_CAP_MODULES)))
    add(&b, "module names");
  if ((s & TC_CAP_MAP_DATA) && l->data_maps && !(d & TC_CAP_MAP_DATA))
    add(&b, "initial memory contents");
  if ((s & TC_CAP_TID) && l->tids && !(d & TC_CAP_TID))
    add(&b, "thread ids");
  if ((s & TC_CAP_FAULTS) && l->faults && !(d & TC_CAP_FAULTS))
    add(&b, "%" PRIu64 " fault%s", l->faults, l->faults == 1 ? "" : "s");
  if ((s & TC_CAP_SIGNALS) && l->signals && !(d & TC_CAP_SIGNALS))
    add(&b, "%" PRIu64 " signal deliver%s (the frames' bytes are kept)",
        l->signals, l->signals == 1 ? "y" : "ies");
  if ((s & TC_CAP_TURNS) && l->turns && !(d & TC_CAP_TURNS))
    add(&b, "the scheduler's turns (the order of this process's events among "
            "the other processes')");
  if (source_exit(l) && !target_exit(l))
    add(&b, "the exit status");
  return b.items;
}

void tc_loss_rebuilt(const tc_loss *l, char *buf, size_t max) {
  strbuf b = {buf, max, 0, 0};
  if (max)
    buf[0] = 0;
  if (l->rebuilt_pages)
    add(&b, "initial memory from %s (%" PRIu64 " page%s)",
        (l->src->caps & TC_CAP_INSN_BYTES)
            ? "the instruction bytes and the values read"
            : "the values read",
        l->rebuilt_pages, l->rebuilt_pages == 1 ? "" : "s");
  if (l->synthetic_exit)
    add(&b, "an exit record (the %s input has none)", l->src->name);
}

/* ------------------------------------------------------- the docs table */

static const char *yn(bool v) { return v ? "yes" : "-"; }

size_t tc_caps_markdown(char *buf, size_t max) {
  strbuf b = {buf, max, 0, 0};
  if (max)
    buf[0] = 0;
#define OUT(...)                                                               \
  do {                                                                         \
    if (b.n < b.max)                                                           \
      b.n += (size_t)snprintf(b.p + b.n, b.max - b.n, __VA_ARGS__);            \
    if (b.n >= b.max)                                                          \
      b.n = b.max ? b.max - 1 : 0;                                             \
  } while (0)
  static const tc_arch_id reg_arches[] = {TC_ARCH_X86_64, TC_ARCH_X86,
                                          TC_ARCH_ARM64, TC_ARCH_ARM};
  OUT("| format | instructions | bytes | registers x86-64, i386, arm64, arm "
      "| memory | read values | r/w kinds | exact sizes | old values "
      "| syscalls | kernel writes | maps | module names | initial memory "
      "| tids | faults | exit |\n");
  OUT("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
      "\n");
  for (const tc_format *const *fp = tc_formats(); *fp; fp++) {
    const tc_format *f = *fp;
    if (!f->open_reader || !f->open_writer)
      continue;
    uint32_t c = f->caps;
    bool mem = c & TC_CAP_MEM;
    OUT("| %s | %s | %s | ", f->name,
        (c & TC_CAP_COVERAGE) ? "blocks, once each" : "yes",
        yn(c & TC_CAP_INSN_BYTES));
    for (size_t i = 0; i < sizeof reg_arches / sizeof *reg_arches; i++) {
      const tc_arch *a = tc_arch_by_id(reg_arches[i]);
      tc_error err;
      if (!a || (f->supports && f->supports(a, &err) < 0))
        OUT("%s-", i ? ", " : "");
      else
        OUT("%s%d/%d", i ? ", " : "", tc_caps_regs_held(f, a), a->nregs);
    }
    OUT(" | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s "
        "|\n",
        yn(mem), yn(mem && !(c & TC_CAP_MEM_WRITES_ONLY)),
        yn(mem && (c & (TC_CAP_MEM_KIND | TC_CAP_MEM_WRITES_ONLY))),
        yn(mem && (c & TC_CAP_MEM_EXACT)), yn(mem && (c & TC_CAP_MEM_OLD)),
        yn(c & TC_CAP_SYSCALLS),
        yn((c & TC_CAP_SYSCALLS) && (c & TC_CAP_SYSCALL_MEM)),
        yn(c & TC_CAP_MAPS), yn(c & (TC_CAP_MAPS | TC_CAP_MODULES)),
        yn(c & TC_CAP_MAP_DATA), yn(c & TC_CAP_TID), yn(c & TC_CAP_FAULTS),
        (c & TC_CAP_EXIT) ? "yes"
        : (c & TC_CAP_SYSCALLS)
            ? ((c & TC_CAP_FAULTS) ? "from the exit syscall or fault"
                                   : "from the exit syscall")
            : "-");
  }
#undef OUT
  return b.n;
}
