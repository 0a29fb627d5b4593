/* SPDX-License-Identifier: GPL-2.0-or-later */
/* text: a human-readable listing of the event stream, one line per
 * instruction (what `tracecorn dump` prints). Writer only: tct is the format
 * to read back. Path "-" writes to stdout. Also the listing writer that
 * text and json share (listing.h): opening, closing, value renderings. */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/elf/symbols.h"
#include "common/linux/sysdecode.h"
#include "writers/format.h"
#include "writers/io/outfile.h"
#include "writers/text/listing.h"

/* Colours (only with text.color=1, which dump sets on a terminal unless
 * NO_COLOR or --color=never). */
enum {
  C_INDEX,
  C_ADDR,
  C_BYTES,
  C_MNEMONIC,
  C_REG,
  C_MEM,
  C_SYS,
  C_LABEL,
  C_OFF
};
static const char *const color_seq[] = {"\033[2m",  "\033[36m",   "\033[2m",
                                        "\033[1m",  "\033[32m",   "\033[35m",
                                        "\033[33m", "\033[1;34m", "\033[0m"};

static void col(tc_writer *w, int c) {
  if (w->color)
    fputs(color_seq[c], w->f);
}

static const char *sig_name(int sig) {
  static const char *names[] = {"0",       "SIGHUP",  "SIGINT",  "SIGQUIT",
                                "SIGILL",  "SIGTRAP", "SIGABRT", "SIGBUS",
                                "SIGFPE",  "SIGKILL", "SIGUSR1", "SIGSEGV",
                                "SIGUSR2", "SIGPIPE", "SIGALRM", "SIGTERM"};
  return sig > 0 && sig < 16 ? names[sig] : "signal";
}

const char *listing_fault_what(tc_fault_kind k) {
  switch (k) {
  case TC_FAULT_UNMAPPED_READ:
    return "read of unmapped memory";
  case TC_FAULT_UNMAPPED_WRITE:
    return "write to unmapped memory";
  case TC_FAULT_UNMAPPED_FETCH:
    return "jump to unmapped memory";
  case TC_FAULT_PROT_READ:
    return "read of protected memory";
  case TC_FAULT_PROT_WRITE:
    return "write to read-only memory";
  case TC_FAULT_PROT_FETCH:
    return "jump to non-executable memory";
  case TC_FAULT_INVALID_INSN:
    return "invalid instruction";
  case TC_FAULT_DIVIDE:
    return "division error";
  default:
    return "fault";
  }
}

const char *listing_exit_reason(tc_exit_reason r) {
  switch (r) {
  case TC_EXIT_EXITED:
    return "exited";
  case TC_EXIT_SIGNALED:
    return "killed";
  case TC_EXIT_MAX_INSNS:
    return "max-insns";
  case TC_EXIT_INTERRUPTED:
    return "interrupted";
  default:
    return "error";
  }
}

void listing_prot_str(uint32_t p, char out[4]) {
  out[0] = p & TC_PROT_READ ? 'r' : '-';
  out[1] = p & TC_PROT_WRITE ? 'w' : '-';
  out[2] = p & TC_PROT_EXEC ? 'x' : '-';
  out[3] = 0;
}

void listing_put_hexbytes(FILE *f, const uint8_t *p, size_t n) {
  static const char hx[] = "0123456789abcdef";
  for (size_t i = 0; i < n; i++) {
    fputc(hx[p[i] >> 4], f);
    fputc(hx[p[i] & 15], f);
  }
}

/* A register value: integers in hex, wide registers as 0x + bytes from
 * the most significant end (state images are little-endian). */
void listing_put_reg_value(FILE *f, const tc_reg_info *ri, const uint8_t *p) {
  if (ri->size <= 8) {
    uint64_t v = 0;
    memcpy(&v, p, ri->size);
    fprintf(f, "0x%" PRIx64, v);
    return;
  }
  fputs("0x", f);
  for (int i = ri->size - 1; i >= 0; i--)
    fprintf(f, "%02x", p[i]);
}

/* A memory value: up to 8 bytes as an integer in target order. */
static void put_mem_value(FILE *f, const tc_arch *a, const uint8_t *p,
                          uint32_t n) {
  if (n > 8) {
    listing_put_hexbytes(f, p, n > 64 ? 64 : n);
    if (n > 64)
      fputs("...", f);
    return;
  }
  uint64_t v = 0;
  for (uint32_t i = 0; i < n; i++)
    v |= (uint64_t)p[a->big_endian ? n - 1 - i : i] << (8 * i);
  fprintf(f, "0x%" PRIx64, v);
}

/* Length of the well-formed UTF-8 sequence at p (RFC 3629: no overlong
 * forms, surrogates or code points past U+10FFFF), or 0. */
int listing_utf8_len(const unsigned char *p) {
  unsigned c = p[0];
  int n = c >= 0xc2 && c <= 0xdf   ? 2
          : c >= 0xe0 && c <= 0xef ? 3
          : c >= 0xf0 && c <= 0xf4 ? 4
                                   : 0;
  for (int k = 1; k < n; k++)
    if ((p[k] & 0xc0) != 0x80)
      return 0;
  if ((c == 0xe0 && p[1] < 0xa0) || (c == 0xed && p[1] > 0x9f) ||
      (c == 0xf0 && p[1] < 0x90) || (c == 0xf4 && p[1] > 0x8f))
    return 0;
  return n;
}

/* Prints a guest-chosen string (paths, messages) so that it cannot drive
 * the terminal: C0 controls, DEL, C1 controls (U+0080-U+009F, e.g. CSI)
 * and bytes that are not valid UTF-8 become \xNN; backslash is doubled. */
static void put_text(FILE *f, const char *str) {
  const unsigned char *p = (const unsigned char *)(str ? str : "");
  while (*p) {
    unsigned c = *p;
    if (c < 0x80) {
      if (c < 0x20 || c == 0x7f)
        fprintf(f, "\\x%02x", c);
      else if (c == '\\')
        fputs("\\\\", f);
      else
        fputc((int)c, f);
      p++;
      continue;
    }
    int n = listing_utf8_len(p);
    if (n == 2 && c == 0xc2 && p[1] < 0xa0)
      n = 0; /* C1 control */
    if (n == 0) {
      fprintf(f, "\\x%02x", c);
      p++;
    } else {
      fwrite(p, 1, (size_t)n, f);
      p += n;
    }
  }
}

const char *tc_escape_text(const char *in, char *out, size_t max) {
  if (max == 0)
    return out;
  out[0] = 0;
  FILE *f = fmemopen(out, max, "w");
  if (!f)
    return out;
  setvbuf(f, NULL, _IONBF, 0);
  put_text(f, in);
  fclose(f);
  out[max - 1] = 0;
  return out;
}

/* ------------------------------------------------------------ text lines */

/* Names a direct branch or call target: `call 0x401690` becomes
 * `call 0x401690 <fib>` (x86 call/j*, arm b/bl/blx/cb*, mips j/jal/b*). */
static void annotate_target(const tc_writer *w, char *dis, size_t max) {
  if (!w->syms || !strchr("cjb", dis[0]))
    return;
  const char *last = strrchr(dis, ' ');
  if (!last)
    return;
  last++;
  if (*last == '#')
    last++;
  if (strncmp(last, "0x", 2) != 0)
    return;
  char *end;
  unsigned long long target = strtoull(last, &end, 16);
  if (*end)
    return;
  uint64_t off = 0;
  const char *name = tc_modsyms_find(w->syms, target, &off);
  size_t len = strlen(dis);
  if (!name || len + 4 >= max)
    return;
  /* a symbol name is the file's choice: escaped like every other name */
  char dm[512], safe[512];
  if (w->demangle)
    name = tc_demangle(name, dm, sizeof dm);
  name = tc_escape_text(name, safe, sizeof safe);
  if (off)
    snprintf(dis + len, max - len, " <%s+0x%llx>", name,
             (unsigned long long)off);
  else
    snprintf(dis + len, max - len, " <%s>", name);
}

static void text_insn(tc_writer *w, const tc_insn_event *e) {
  FILE *f = w->f;
  const tc_arch *a = w->arch;
  char dis[192];
  if (w->seen_insn && e->tid != w->last_tid)
    fprintf(f, "thread  %u\n", e->tid);
  w->seen_insn = true;
  w->last_tid = e->tid;
  if (e->tid == TC_TID_BLOCK && e->size == 0) {
    /* a coverage block: its extent, not a disassembly of nothing */
    uint64_t end =
        e->state_after ? tc_state_get(a, e->state_after, a->pc_reg) : e->pc;
    snprintf(dis, sizeof dis,
             "block 0x%" PRIx64 "-0x%" PRIx64 " (%" PRIu64 " bytes)", e->pc,
             end, end - e->pc);
  } else {
    tc_disasm(a, e->pc | (uint64_t)tc_insn_thumb(a, e), e->bytes, e->size, dis,
              sizeof dis);
    annotate_target(w, dis, sizeof dis);
  }
  const char *label = tc_modsyms_exact(w->syms, e->pc);
  char dm[512];
  if (label && w->demangle)
    label = tc_demangle(label, dm, sizeof dm);
  if (label) {
    col(w, C_LABEL);
    fputc('<', f);
    put_text(f, label);
    fputs(">:", f);
    col(w, C_OFF);
    fputc('\n', f);
  }
  col(w, C_INDEX);
  fprintf(f, "%-8" PRIu64, e->index);
  col(w, C_OFF);
  fputc(' ', f);
  col(w, C_ADDR);
  fprintf(f, "0x%08" PRIx64, e->pc);
  col(w, C_OFF);
  fputs("  ", f);
  col(w, C_BYTES);
  int width = 0;
  for (int i = 0; i < e->size; i++)
    width += fprintf(f, "%02x ", e->bytes[i]);
  col(w, C_OFF);
  fprintf(f, "%*s ", width < 24 ? 24 - width : 0, "");
  /* the mnemonic stands out; operands plain */
  size_t mlen = strcspn(dis, " ");
  col(w, C_MNEMONIC);
  fwrite(dis, 1, mlen, f);
  col(w, C_OFF);
  fputs(dis + mlen, f);
  bool more = e->nmem > 0;
  for (int i = 0; i < e->nregs && !more; i++)
    more = e->regs[i] != a->pc_reg;
  /* pad to the effects column only when effects follow: no trailing
   * spaces */
  int dlen = (int)strlen(dis);
  if (more && dlen < 32)
    fprintf(f, "%*s", 32 - dlen, "");
  for (int i = 0; i < e->nregs; i++) {
    const tc_reg_info *ri = &a->regs[e->regs[i]];
    if (e->regs[i] == a->pc_reg)
      continue; /* the next line shows it */
    fputc(' ', f);
    col(w, C_REG);
    fprintf(f, "%s=", ri->name);
    listing_put_reg_value(f, ri, e->state_after + ri->offset);
    col(w, C_OFF);
  }
  for (uint32_t i = 0; i < e->nmem; i++) {
    const tc_mem_access *m = &e->mem[i];
    fputc(' ', f);
    col(w, C_MEM);
    if (m->kind == TC_MEM_READ) {
      fprintf(f, "R[0x%" PRIx64 ":%u]=", m->addr, m->size);
      put_mem_value(f, a, m->before, m->size);
    } else {
      fprintf(f, "W[0x%" PRIx64 ":%u]=", m->addr, m->size);
      put_mem_value(f, a, m->after, m->size);
      fputs(" (was ", f);
      put_mem_value(f, a, m->before, m->size);
      fputc(')', f);
    }
    col(w, C_OFF);
  }
  fputc('\n', f);
}

static void text_regs(tc_writer *w, const uint8_t *state, bool all) {
  const tc_arch *a = w->arch;
  for (int i = 0; i < a->nregs; i++) {
    const tc_reg_info *ri = &a->regs[i];
    bool zero = true;
    for (int k = 0; k < ri->size; k++)
      zero = zero && state[ri->offset + k] == 0;
    if (!all && zero && !(ri->flags & (TC_REG_GPR | TC_REG_PC)))
      continue;
    fprintf(w->f, " %s=", ri->name);
    listing_put_reg_value(w->f, ri, state + ri->offset);
  }
}

static int text_event(tc_writer *w, const tc_event *ev) {
  FILE *f = w->f;
  char p[4];
  switch (ev->kind) {
  case TC_EV_INSN:
    text_insn(w, &ev->u.insn);
    break;
  case TC_EV_SYSCALL: {
    const tc_syscall_event *s = &ev->u.sys;
    if (s->part > 0) { /* more of the same call's kernel writes */
      fputs("         ...", f);
      for (uint32_t i = 0; i < s->nmem; i++)
        fprintf(f, " W[0x%" PRIx64 ":%u]", s->mem[i].addr, s->mem[i].size);
      fputc('\n', f);
      break;
    }
    fputs("         ", f);
    col(w, C_SYS);
    fputs("syscall ", f);
    fputs(tc_sysdecode_syscall(w->dec, s, 0), f);
    col(w, C_OFF);
    if (s->unknown)
      fputs(" [not implemented]", f);
    for (uint32_t i = 0; i < s->nmem; i++)
      fprintf(f, " W[0x%" PRIx64 ":%u]", s->mem[i].addr, s->mem[i].size);
    fputc('\n', f);
    break;
  }
  case TC_EV_MAP:
    listing_prot_str(ev->u.map.prot, p);
    fprintf(f, "map     0x%08" PRIx64 "-0x%08" PRIx64 " %s ", ev->u.map.addr,
            ev->u.map.addr + ev->u.map.size, p);
    put_text(f, ev->u.map.name);
    fprintf(f, "%s\n", ev->u.map.data ? "" : " (zero)");
    break;
  case TC_EV_UNMAP:
    fprintf(f, "unmap   0x%08" PRIx64 "-0x%08" PRIx64 "\n", ev->u.map.addr,
            ev->u.map.addr + ev->u.map.size);
    break;
  case TC_EV_PROTECT:
    listing_prot_str(ev->u.map.prot, p);
    fprintf(f, "protect 0x%08" PRIx64 "-0x%08" PRIx64 " %s\n", ev->u.map.addr,
            ev->u.map.addr + ev->u.map.size, p);
    break;
  case TC_EV_KEYFRAME:
    /* The first keyframe shows the state; the periodic ones (random-
     * access points, every 4096 instructions) only where they are,
     * unless text.keyframes=full (dump -v). */
    col(w, C_INDEX);
    fprintf(f, "keyframe #%" PRIu64 " tid %u", ev->u.key.insn_index,
            ev->u.key.tid);
    if (w->keyframes++ == 0 || w->full_keyframes) {
      fputc(':', f);
      text_regs(w, ev->u.key.state, false);
    }
    col(w, C_OFF);
    fputc('\n', f);
    break;
  case TC_EV_FAULT: {
    const tc_fault_event *x = &ev->u.fault;
    fprintf(f, "fault   %s: %s at 0x%" PRIx64 " (pc 0x%" PRIx64 ")\n",
            sig_name(x->signal), listing_fault_what(x->kind), x->addr, x->pc);
    break;
  }
  case TC_EV_SIGNAL: {
    const tc_signal_event *g = &ev->u.sig;
    fprintf(f, "signal  %s (code %d", sig_name(g->signal), g->code);
    if (g->code > 0)
      fprintf(f, ", addr 0x%" PRIx64, g->addr);
    else
      fprintf(f, ", from pid %u", g->pid);
    fprintf(f, ") to handler 0x%" PRIx64, g->handler);
    uint64_t off = 1;
    const char *hs = tc_modsyms_find(w->syms, g->handler, &off);
    if (hs && off == 0) {
      fputs(" <", f);
      put_text(f, hs);
      fputc('>', f);
    }
    fprintf(f, ", frame 0x%" PRIx64, g->frame);
    for (uint32_t i = 0; i < g->nmem; i++)
      fprintf(f, " W[0x%" PRIx64 ":%u]", g->mem[i].addr, g->mem[i].size);
    fputc('\n', f);
    break;
  }
  case TC_EV_TURN: /* the listing shows one process: no line */
    break;
  case TC_EV_EXIT: {
    const tc_exit_event *x = &ev->u.exit;
    fprintf(f, "exit    %s", listing_exit_reason(x->reason));
    if (x->reason == TC_EXIT_SIGNALED)
      fprintf(f, " by %s", sig_name(x->signal));
    fprintf(f, ", status %d, %" PRIu64 " instructions", x->status,
            x->insn_count);
    if (x->message) {
      fputs(" (", f);
      put_text(f, x->message);
      fputc(')', f);
    }
    fputc('\n', f);
    break;
  }
  }
  return 0;
}

/* ------------------------------------------ the listing (text and json) */

/* A module's host file: its path under FORMAT.root when given. */
static FILE *open_module(void *ctx, const char *path) {
  const tc_writer *w = ctx;
  return tc_open_module_file(w->root, path);
}

static void listing_free(tc_writer *w) {
  tc_modsyms_free(w->syms);
  tc_sysdecode_free(w->dec);
  free(w);
}

tc_writer *listing_open(const char *path, const tc_trace_info *info,
                        const char *format, listing_setup setup,
                        tc_error *err) {
  tc_writer *w = calloc(1, sizeof *w);
  if (!w) {
    tc_error_set(err, "out of memory");
    return NULL;
  }
  w->arch = info->arch;
  const char *root = tc_writer_option(info, format, "root");
  if (root)
    snprintf(w->root, sizeof w->root, "%s", root);
  w->dec = tc_sysdecode_new(info->arch, 0, info->has_memory);
  w->syms = tc_modsyms_new(info->arch->elf_machine, open_module, w);
  if (!w->dec || !w->syms) {
    listing_free(w);
    tc_error_set(err, "out of memory");
    return NULL;
  }
  tc_modsyms_add_program(w->syms, info->exe_path, info->exe_data,
                         info->exe_size, info->load_base);
  if (setup && setup(w, info, err) < 0) {
    listing_free(w);
    return NULL;
  }
  snprintf(w->path, sizeof w->path, "%s", path);
  if (strcmp(path, "-") == 0) {
    w->f = stdout;
  } else {
    w->f = tc_outfile_fopen(path, "w");
    w->own = true;
    if (!w->f) {
      tc_error_set(err, "%s: %s", path, strerror(errno));
      listing_free(w);
      return NULL;
    }
    setvbuf(w->f, NULL, _IOFBF, 1 << 20);
  }
  return w;
}

/* Every event, printed or not: a map of a module makes its symbols
 * known (a filtered dump names library functions too). */
static void listing_observe_map(tc_writer *w, const tc_event *ev) {
  if (ev->kind == TC_EV_MAP)
    tc_modsyms_map(w->syms, ev->u.map.name, ev->u.map.addr,
                   ev->u.map.file_offset, ev->u.map.prot);
}

int listing_event_done(tc_writer *w, const tc_event *ev, tc_error *err) {
  listing_observe_map(w, ev);
  if (tc_sysdecode_observe(w->dec, ev) < 0) {
    tc_error_set(err, "%s: out of memory", w->path);
    return -1;
  }
  if (ferror(w->f)) {
    tc_error_set(err, "%s: write failed: %s", w->path, strerror(errno));
    return -1;
  }
  return 0;
}

/* An event a filter left out: only its effect on memory and symbols
 * matters. */
int listing_skip_event(tc_writer *w, const tc_event *ev, tc_error *err) {
  listing_observe_map(w, ev);
  return tc_sysdecode_observe_or_fail(w->dec, ev, w->path, err);
}

int listing_close_writer(tc_writer *w, tc_error *err) {
  int rc = tc_outfile_close_stream(w->f, w->own, w->path, err);
  listing_free(w);
  return rc;
}

const char *listing_sym(const tc_writer *w, uint64_t addr, char *out,
                        size_t max) {
  uint64_t off = 0;
  const char *name = tc_modsyms_find(w->syms, addr, &off);
  if (!name)
    return NULL;
  char dm[512];
  if (w->demangle)
    name = tc_demangle(name, dm, sizeof dm);
  if (off)
    snprintf(out, max, "%s+0x%" PRIx64, name, off);
  else
    snprintf(out, max, "%s", name);
  return out;
}

/* ---------------------------------------------------------------- vtable */

/* The text options (-O text.*) and the program's symbols, read before the
 * output file is made (a bad option leaves no file). */
static int text_setup(tc_writer *w, const tc_trace_info *info, tc_error *err) {
  static const char *const known[] = {"color",    "keyframes", "symbols",
                                      "demangle", "root",      NULL};
  if (tc_writer_options_check(info, "text", known, err) < 0)
    return -1;
  const char *opt_color = tc_writer_option(info, "text", "color");
  const char *opt_keys = tc_writer_option(info, "text", "keyframes");
  const char *opt_syms = tc_writer_option(info, "text", "symbols");
  w->color = opt_color && strcmp(opt_color, "1") == 0;
  w->full_keyframes = opt_keys && strcmp(opt_keys, "full") == 0;
  const char *opt_dm = tc_writer_option(info, "text", "demangle");
  w->demangle = opt_dm && strcmp(opt_dm, "1") == 0;
  if (opt_syms) {
    /* --symbols FILE: an unstripped copy or debug file of the program,
     * placed at the program's load base */
    tc_symtab *extra = NULL;
    FILE *sf = fopen(opt_syms, "rb");
    uint8_t *d = NULL;
    size_t n = 0;
    if (sf && fseek(sf, 0, SEEK_END) == 0) {
      long len = ftell(sf);
      if (len > 0 && len <= (512L << 20) && (d = malloc((size_t)len)) &&
          fseek(sf, 0, SEEK_SET) == 0)
        n = fread(d, 1, (size_t)len, sf);
    }
    if (sf)
      fclose(sf);
    extra = n ? tc_symtab_from_elf(d, n, info->load_base) : NULL;
    free(d);
    if (!extra) {
      tc_error_set(err, "--symbols %s: no ELF symbols of this arch there",
                   opt_syms);
      return -1;
    }
    tc_modsyms_merge_program(w->syms, extra);
  }
  return 0;
}

static tc_writer *text_open(const char *path, const tc_trace_info *info,
                            tc_error *err) {
  tc_writer *w = listing_open(path, info, "text", text_setup, err);
  if (!w)
    return NULL;
  fputs("# tracecorn trace: ", w->f);
  put_text(w->f, info->exe_path ? info->exe_path : "?");
  fprintf(w->f, " (%s), entry 0x%" PRIx64 ", pid %u\n", info->arch->name,
          info->entry, info->pid);
  return w;
}

static int text_write_event(tc_writer *w, const tc_event *ev, tc_error *err) {
  text_event(w, ev);
  return listing_event_done(w, ev, err);
}

static const char *text_ext(const tc_arch *a) {
  (void)a;
  return ".txt";
}

const tc_format tc_format_text = {
    .name = "text",
    .description = "readable listing, one line per instruction (no reader)",
    .caps = TC_CAP_BLOCKS,
    .extension = text_ext,
    .open_writer = text_open,
    .write_event = text_write_event,
    .close_writer = listing_close_writer,
    .skip_event = listing_skip_event,
};
