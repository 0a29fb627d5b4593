/* SPDX-License-Identifier: GPL-2.0-or-later */
/* json: one JSON object per event, a script-readable rendering of the
 * event stream (`tracecorn dump --json`). Writer only: tct is the format to
 * read back. Path "-" writes to stdout. Its writer is the listing it shares
 * with text (writers/text/listing.h). */
#include <inttypes.h>
#include <stdio.h>

#include "writers/format.h"
#include "writers/text/listing.h"

/* A guest-chosen string (paths, map names, argv, messages) as a JSON
 * string that every line's parser takes: well-formed UTF-8 passes
 * through; C0 and C1 controls and DEL are \u00XX; each byte that is not
 * part of well-formed UTF-8 is \u00XX of its value (its Latin-1 character:
 * the byte is kept, but reads as U+00XX; the man page's dump --json). */
static void json_str(FILE *f, const char *str) {
  const unsigned char *p = (const unsigned char *)(str ? str : "");
  fputc('"', f);
  while (*p) {
    unsigned c = *p;
    int n = c < 0x80 ? 1 : listing_utf8_len(p);
    if (c == '"' || c == '\\')
      fprintf(f, "\\%c", c);
    else if (c < 0x20 || c == 0x7f || n == 0)
      fprintf(f, "\\u%04x", c);
    else if (n == 2 && c == 0xc2 && p[1] < 0xa0)
      fprintf(f, "\\u%04x", p[1]); /* C1 control U+0080-U+009F */
    else
      fwrite(p, 1, (size_t)n, f);
    p += n ? n : 1;
  }
  fputc('"', f);
}

/* ------------------------------------------------------------ json lines */

static void json_regs(tc_writer *w, const uint8_t *state, const uint16_t *idx,
                      int n) {
  const tc_arch *a = w->arch;
  fputc('{', w->f);
  int count = idx ? n : a->nregs;
  for (int k = 0; k < count; k++) {
    int i = idx ? idx[k] : k;
    const tc_reg_info *ri = &a->regs[i];
    fprintf(w->f, "%s\"%s\":\"", k ? "," : "", ri->name);
    listing_put_reg_value(w->f, ri, state + ri->offset);
    fputc('"', w->f);
  }
  fputc('}', w->f);
}

static void json_mem(FILE *f, const tc_mem_access *m, uint32_t n) {
  fputc('[', f);
  for (uint32_t i = 0; i < n; i++) {
    fprintf(f, "%s{\"kind\":\"%s\",\"addr\":\"0x%" PRIx64 "\",\"size\":%u,",
            i ? "," : "", m[i].kind == TC_MEM_READ ? "r" : "w", m[i].addr,
            m[i].size);
    if (m[i].kind == TC_MEM_READ) {
      fputs("\"value\":\"", f);
      listing_put_hexbytes(f, m[i].before, m[i].size);
    } else {
      fputs("\"old\":\"", f);
      listing_put_hexbytes(f, m[i].before, m[i].size);
      fputs("\",\"new\":\"", f);
      listing_put_hexbytes(f, m[i].after, m[i].size);
    }
    fputs("\"}", f);
  }
  fputc(']', f);
}

static int json_event(tc_writer *w, const tc_event *ev) {
  FILE *f = w->f;
  char p[4];
  switch (ev->kind) {
  case TC_EV_INSN: {
    const tc_insn_event *e = &ev->u.insn;
    char dis[128];
    if (e->tid == TC_TID_BLOCK && e->size == 0) {
      uint64_t end = e->state_after ? tc_state_get(w->arch, e->state_after,
                                                   w->arch->pc_reg)
                                    : e->pc;
      fprintf(f,
              "{\"type\":\"block\",\"index\":%" PRIu64 ",\"pc\":\"0x%" PRIx64
              "\",\"size\":%" PRIu64 "}\n",
              e->index, e->pc, end - e->pc);
      break;
    }
    tc_disasm(w->arch, e->pc | (uint64_t)tc_insn_thumb(w->arch, e), e->bytes,
              e->size, dis, sizeof dis);
    fprintf(f,
            "{\"type\":\"insn\",\"index\":%" PRIu64 ",\"pc\":\"0x%" PRIx64
            "\",\"sym\":",
            e->index, e->pc);
    /* the function and offset, as the text dump's <name+0xOFF> */
    char sym[600];
    if (listing_sym(w, e->pc, sym, sizeof sym))
      json_str(f, sym);
    else
      fputs("null", f);
    fprintf(f, ",\"tid\":%u,\"bytes\":\"", e->tid);
    listing_put_hexbytes(f, e->bytes, e->size);
    fputs("\",\"asm\":", f);
    json_str(f, dis);
    fputs(",\"regs\":", f);
    json_regs(w, e->state_after, e->regs, e->nregs);
    fputs(",\"mem\":", f);
    json_mem(f, e->mem, e->nmem);
    fputs("}\n", f);
    break;
  }
  case TC_EV_SYSCALL: {
    const tc_syscall_event *s = &ev->u.sys;
    fprintf(f, "{\"type\":\"syscall\",\"index\":%" PRIu64 ",\"nr\":%u,",
            s->insn_index, s->nr);
    fputs("\"name\":", f);
    if (s->name)
      json_str(f, s->name);
    else
      fputs("null", f);
    fputs(",\"args\":[", f);
    for (int i = 0; i < 6; i++)
      fprintf(f, "%s\"0x%" PRIx64 "\"", i ? "," : "", s->args[i]);
    fprintf(f, "],\"ret\":%" PRId64 ",\"unknown\":%s,", s->ret,
            s->unknown ? "true" : "false");
    if (s->part || s->more)
      fprintf(f, "\"part\":%u,\"more\":%s,", s->part,
              s->more ? "true" : "false");
    if (s->compat) /* x86-64's int $0x80: nr and name are i386's */
      fputs("\"compat\":true,", f);
    fputs("\"mem\":", f);
    json_mem(f, s->mem, s->nmem);
    fputs(",\"strace\":", f);
    json_str(f, tc_sysdecode_syscall(w->dec, s, 0));
    fputs("}\n", f);
    break;
  }
  case TC_EV_MAP:
  case TC_EV_UNMAP:
  case TC_EV_PROTECT:
    listing_prot_str(ev->u.map.prot, p);
    fprintf(f,
            "{\"type\":\"%s\",\"addr\":\"0x%" PRIx64 "\",\"size\":%" PRIu64
            ",\"prot\":\"%s\"",
            ev->kind == TC_EV_MAP     ? "map"
            : ev->kind == TC_EV_UNMAP ? "unmap"
                                      : "protect",
            ev->u.map.addr, ev->u.map.size, p);
    if (ev->kind == TC_EV_MAP) {
      fputs(",\"name\":", f);
      json_str(f, ev->u.map.name);
      fprintf(f, ",\"has_data\":%s", ev->u.map.data ? "true" : "false");
    }
    fputs("}\n", f);
    break;
  case TC_EV_KEYFRAME:
    fprintf(f, "{\"type\":\"keyframe\",\"index\":%" PRIu64 ",\"tid\":%u,",
            ev->u.key.insn_index, ev->u.key.tid);
    fputs("\"regs\":", f);
    json_regs(w, ev->u.key.state, NULL, 0);
    fputs("}\n", f);
    break;
  case TC_EV_FAULT:
    fprintf(f,
            "{\"type\":\"fault\",\"index\":%" PRIu64 ",\"pc\":\"0x%" PRIx64
            "\",\"addr\":\"0x%" PRIx64 "\",\"signal\":%d,\"what\":\"%s\"}\n",
            ev->u.fault.insn_index, ev->u.fault.pc, ev->u.fault.addr,
            ev->u.fault.signal, listing_fault_what(ev->u.fault.kind));
    break;
  case TC_EV_SIGNAL: {
    const tc_signal_event *g = &ev->u.sig;
    fprintf(f,
            "{\"type\":\"signal\",\"index\":%" PRIu64
            ",\"tid\":%u,\"signal\":%d,\"code\":%d,\"addr\":\"0x%" PRIx64
            "\",\"pid\":%u,\"uid\":%u,\"handler\":\"0x%" PRIx64
            "\",\"frame\":\"0x%" PRIx64 "\",\"mem\":",
            g->insn_index, g->tid, g->signal, g->code, g->addr, g->pid, g->uid,
            g->handler, g->frame);
    json_mem(f, g->mem, g->nmem);
    fputs("}\n", f);
    break;
  }
  case TC_EV_EXIT:
    fprintf(f,
            "{\"type\":\"exit\",\"reason\":\"%s\",\"status\":%d,\"signal\":%d,"
            "\"insns\":%" PRIu64 ",\"message\":",
            listing_exit_reason(ev->u.exit.reason), ev->u.exit.status,
            ev->u.exit.signal, ev->u.exit.insn_count);
    if (ev->u.exit.message)
      json_str(f, ev->u.exit.message);
    else
      fputs("null", f);
    fputs("}\n", f);
    break;
  case TC_EV_TURN:
    fprintf(f,
            "{\"type\":\"turn\",\"turn\":%" PRIu64 ",\"index\":%" PRIu64
            ",\"tid\":%u}\n",
            ev->u.turn.turn, ev->u.turn.insn_index, ev->u.turn.tid);
    break;
  }
  return 0;
}

/* ---------------------------------------------------------------- vtable */

/* The json options: json.root (dump --root). */
static int json_setup(tc_writer *w, const tc_trace_info *info, tc_error *err) {
  (void)w;
  static const char *const known[] = {"root", NULL};
  return tc_writer_options_check(info, "json", known, err);
}

static tc_writer *json_open(const char *path, const tc_trace_info *info,
                            tc_error *err) {
  tc_writer *w = listing_open(path, info, "json", json_setup, err);
  if (!w)
    return NULL;
  fprintf(w->f,
          "{\"type\":\"trace\",\"arch\":\"%s\",\"entry\":\"0x%" PRIx64
          "\",\"pid\":%u,\"exe\":",
          info->arch->name, info->entry, info->pid);
  json_str(w->f, info->exe_path);
  fputs(",\"argv\":[", w->f);
  for (int i = 0; i < info->argc; i++) {
    if (i)
      fputc(',', w->f);
    json_str(w->f, info->argv[i]);
  }
  fputs("]}\n", w->f);
  return w;
}

static int json_write_event(tc_writer *w, const tc_event *ev, tc_error *err) {
  json_event(w, ev);
  return listing_event_done(w, ev, err);
}

static const char *json_ext(const tc_arch *a) {
  (void)a;
  return ".jsonl";
}

const tc_format tc_format_json = {
    .name = "json",
    .description = "one JSON object per event (no reader)",
    .caps = TC_CAP_BLOCKS,
    .extension = json_ext,
    .open_writer = json_open,
    .write_event = json_write_event,
    .close_writer = listing_close_writer,
    .skip_event = listing_skip_event,
};
