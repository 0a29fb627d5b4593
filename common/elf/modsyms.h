/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The function symbols of every module a trace maps (the program, its
 * interpreter, each library, dlopen's included), gathered as the maps
 * arrive: what dump labels lines with, what `dump --range` and `record
 * --trace-func` resolve NAME, MODULE:NAME and MODULE against. Each
 * module keeps its own table, so a name is looked up in one module or in
 * all. */
#ifndef TC_MODSYMS_H
#define TC_MODSYMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "common/elf/symbols.h"

typedef struct tc_modsyms tc_modsyms;

/* Opens the host file of a module a map names (its guest path); NULL if
 * there is none. The default is tc_open_regular of the path itself. */
typedef FILE *(*tc_modsyms_open_fn)(void *ctx, const char *path);

/* machine: the ELF e_machine of the trace's arch (other files are not
 * read). open may be NULL. NULL when out of memory. */
tc_modsyms *tc_modsyms_new(uint16_t machine, tc_modsyms_open_fn open,
                           void *ctx);
void tc_modsyms_free(tc_modsyms *m);

/* The program, from the ELF bytes a trace carries (bias: its load base);
 * its later maps are not read again. Returns its module index or -1
 * (no symbols, or out of memory). */
int tc_modsyms_add_program(tc_modsyms *m, const char *path, const uint8_t *data,
                           size_t n, uint64_t bias);
/* More symbols for the program (an unstripped copy); t is taken. */
void tc_modsyms_merge_program(tc_modsyms *m, tc_symtab *t);

/* A MAP: an executable map of a file ("/..." path) makes its module's
 * symbols known, read once per file and placement. Returns the index of
 * the module it added, or -1 (nothing new: not executable, anonymous,
 * known, no ELF of this machine or no symbols). */
int tc_modsyms_map(tc_modsyms *m, const char *path, uint64_t addr,
                   uint64_t file_offset, uint32_t prot);

size_t tc_modsyms_count(const tc_modsyms *m);
const char *tc_modsyms_path(const tc_modsyms *m, size_t i);

/* The function containing addr in any module, with the offset into it;
 * NULL if none. */
const char *tc_modsyms_find(const tc_modsyms *m, uint64_t addr, uint64_t *off);
/* The symbol starting exactly at addr, or NULL. */
const char *tc_modsyms_exact(const tc_modsyms *m, uint64_t addr);

/* 1 if `name` names the module at `path`: the path itself, its base name
 * ("libc.so.6") or that without its ".so..." suffix ("libc"). */
bool tc_module_name_matches(const char *path, const char *name);

/* A spec "MODULE:NAME" (split at its one ':'; ELF symbols hold none, a
 * "::" is a C++ name, not a split) or "NAME": the nth function it names
 * in module i, 1 with its [lo, hi), else 0. */
int tc_modsyms_lookup(const tc_modsyms *m, size_t i, const char *spec,
                      size_t nth, uint64_t *lo, uint64_t *hi);

#endif
