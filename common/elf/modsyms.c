/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Function symbols of every mapped module (see modsyms.h). */
#include "common/elf/modsyms.h"

#include <stdlib.h>
#include <string.h>

#include "tracecorn/tracecorn.h"

/* Modules read at most: a trace naming thousands of files costs no more. */
#define MAX_MODULES 256

typedef struct module {
  char *path;
  tc_symtab *syms;
  /* map address minus file offset of the executable map it was read
   * for: the same file mapped elsewhere again (dlopen after dlclose) is
   * another module */
  uint64_t slide;
  bool have_slide;
} module;

struct tc_modsyms {
  uint16_t machine;
  tc_modsyms_open_fn open;
  void *ctx;
  module *mods;
  size_t n, cap;
  int program; /* index of the program's module, or -1 */
  /* paths whose file gave nothing: not read again */
  char **tried;
  size_t ntried, captried;
};

tc_modsyms *tc_modsyms_new(uint16_t machine, tc_modsyms_open_fn open,
                           void *ctx) {
  tc_modsyms *m = calloc(1, sizeof *m);
  if (!m)
    return NULL;
  m->machine = machine;
  m->open = open;
  m->ctx = ctx;
  m->program = -1;
  return m;
}

void tc_modsyms_free(tc_modsyms *m) {
  if (!m)
    return;
  for (size_t i = 0; i < m->n; i++) {
    free(m->mods[i].path);
    tc_symtab_free(m->mods[i].syms);
  }
  for (size_t i = 0; i < m->ntried; i++)
    free(m->tried[i]);
  free(m->tried);
  free(m->mods);
  free(m);
}

static int add_module(tc_modsyms *m, const char *path, tc_symtab *t) {
  if (m->n == MAX_MODULES) {
    tc_symtab_free(t);
    return -1;
  }
  if (m->n == m->cap) {
    size_t cap = m->cap ? 2 * m->cap : 8;
    module *r = realloc(m->mods, cap * sizeof *r);
    if (!r) {
      tc_symtab_free(t);
      return -1;
    }
    m->mods = r;
    m->cap = cap;
  }
  char *p = strdup(path ? path : "");
  if (!p) {
    tc_symtab_free(t);
    return -1;
  }
  m->mods[m->n] = (module){p, t, 0, false};
  return (int)m->n++;
}

int tc_modsyms_add_program(tc_modsyms *m, const char *path, const uint8_t *data,
                           size_t n, uint64_t bias) {
  tc_symtab *t = tc_symtab_from_elf(data, n, bias);
  if (!t)
    return -1;
  int i = add_module(m, path, t);
  m->program = i;
  return i;
}

void tc_modsyms_merge_program(tc_modsyms *m, tc_symtab *t) {
  if (!t)
    return;
  if (m->program < 0) {
    m->program = add_module(m, "", t);
    return;
  }
  module *p = &m->mods[m->program];
  p->syms = tc_symtab_merge(p->syms, t);
}

static bool tried(const tc_modsyms *m, const char *path) {
  for (size_t i = 0; i < m->ntried; i++)
    if (strcmp(m->tried[i], path) == 0)
      return true;
  return false;
}

static void note_tried(tc_modsyms *m, const char *path) {
  if (m->ntried == MAX_MODULES)
    return;
  if (m->ntried == m->captried) {
    size_t cap = m->captried ? 2 * m->captried : 8;
    char **r = realloc(m->tried, cap * sizeof *r);
    if (!r)
      return;
    m->tried = r;
    m->captried = cap;
  }
  char *p = strdup(path);
  if (p)
    m->tried[m->ntried++] = p;
}

int tc_modsyms_map(tc_modsyms *m, const char *path, uint64_t addr,
                   uint64_t file_offset, uint32_t prot) {
  if (!(prot & TC_PROT_EXEC) || !path || path[0] != '/' || tried(m, path))
    return -1;
  uint64_t slide = addr - file_offset;
  for (size_t i = 0; i < m->n; i++) {
    module *d = &m->mods[i];
    if (strcmp(d->path, path) != 0)
      continue;
    if (!d->have_slide) { /* the program, from the trace's own bytes */
      d->slide = slide;
      d->have_slide = true;
    }
    if (d->slide == slide || (int)i == m->program)
      return -1;
  }
  FILE *f = m->open ? m->open(m->ctx, path)
                    : tc_open_regular(path, TC_SYMTAB_MAX_FILE);
  tc_symtab *t =
      f ? tc_symtab_from_stream(f, m->machine, addr, file_offset) : NULL;
  if (!t) {
    note_tried(m, path);
    return -1;
  }
  int i = add_module(m, path, t);
  if (i >= 0) {
    m->mods[i].slide = slide;
    m->mods[i].have_slide = true;
  }
  return i;
}

size_t tc_modsyms_count(const tc_modsyms *m) { return m ? m->n : 0; }

const char *tc_modsyms_path(const tc_modsyms *m, size_t i) {
  return i < m->n ? m->mods[i].path : NULL;
}

const char *tc_modsyms_find(const tc_modsyms *m, uint64_t addr, uint64_t *off) {
  const char *best = NULL;
  uint64_t best_off = 0;
  for (size_t i = 0; m && i < m->n; i++) {
    uint64_t o;
    const char *s = tc_symtab_find(m->mods[i].syms, addr, &o);
    /* the nearest symbol below addr among the modules that have one */
    if (s && (!best || o < best_off)) {
      best = s;
      best_off = o;
    }
  }
  if (best && off)
    *off = best_off;
  return best;
}

const char *tc_modsyms_exact(const tc_modsyms *m, uint64_t addr) {
  for (size_t i = 0; m && i < m->n; i++) {
    const char *s = tc_symtab_exact(m->mods[i].syms, addr);
    if (s)
      return s;
  }
  return NULL;
}

bool tc_module_name_matches(const char *path, const char *name) {
  if (!path || !name || !name[0])
    return false;
  if (strcmp(path, name) == 0)
    return true;
  const char *base = strrchr(path, '/');
  base = base ? base + 1 : path;
  if (strcmp(base, name) == 0)
    return true;
  /* "libc" for libc.so.6, "ld-linux-x86-64" for ld-linux-x86-64.so.2 */
  const char *so = strstr(base, ".so");
  size_t n = strlen(name);
  return so && (size_t)(so - base) == n && strncmp(base, name, n) == 0 &&
         (so[3] == 0 || so[3] == '.');
}

int tc_modsyms_lookup(const tc_modsyms *m, size_t i, const char *spec,
                      size_t nth, uint64_t *lo, uint64_t *hi) {
  if (!m || i >= m->n || !spec)
    return 0;
  const char *name = spec;
  const char *colon = strchr(spec, ':');
  if (colon && !strstr(spec, "::")) {
    char mod[4096];
    size_t n = (size_t)(colon - spec);
    if (n >= sizeof mod)
      return 0;
    memcpy(mod, spec, n);
    mod[n] = 0;
    /* the program also answers to "" (":main") */
    if (!(n == 0 && (int)i == m->program) &&
        !tc_module_name_matches(m->mods[i].path, mod))
      return 0;
    name = colon + 1;
  }
  return tc_symtab_lookup(m->mods[i].syms, name, nth, lo, hi);
}
