/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Function symbols of the traced program, from the ELF bytes a trace
 * carries (tc_trace_info.exe_data), for annotating listings. Bounded by
 * the data: a hostile ELF gives fewer symbols, never a crash. */
#ifndef TC_SYMBOLS_H
#define TC_SYMBOLS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef struct tc_symtab tc_symtab;

/* NULL when the data is no ELF or has no symbols. bias: the load base
 * (static-pie), added to every symbol value. */
tc_symtab *tc_symtab_from_elf(const uint8_t *data, size_t n, uint64_t bias);
void tc_symtab_free(tc_symtab *t);
/* Adds the symbols of `from` to `into` (either may be NULL); returns the
 * merged table, which owns both. */
tc_symtab *tc_symtab_merge(tc_symtab *into, tc_symtab *from);
/* Opens a host file a trace names (a module's path), following symlinks,
 * only if it is a regular file of at most max_size bytes: NULL for
 * anything else (a FIFO, whose open would wait for a writer, a device, a
 * directory), which is never opened for reading but with O_NONBLOCK (the
 * path can change after a check: fstat of what was opened decides). */
FILE *tc_open_regular(const char *path, uint64_t max_size);

#define TC_SYMTAB_MAX_FILE (512ull << 20)
/* A module's file, by the path a trace names, under root (a recording's
 * --root; NULL, "" or "/": the path as it is), opened as tc_open_regular
 * does, at most TC_SYMTAB_MAX_FILE bytes. */
FILE *tc_open_module_file(const char *root, const char *path);
/* The symbols of a host ELF file a trace maps (a shared library), placed
 * where its map at map_addr of file_offset puts them; NULL if the file is
 * missing, not a regular file (tc_open_regular), no ELF of `machine`,
 * over 512 MiB, or has no symbols. */
tc_symtab *tc_symtab_from_file(const char *path, uint16_t machine,
                               uint64_t map_addr, uint64_t file_offset);
/* The same from a file already opened (closed here): a regular file of
 * at most 512 MiB. */
tc_symtab *tc_symtab_from_stream(FILE *f, uint16_t machine, uint64_t map_addr,
                                 uint64_t file_offset);
/* The symbol starting exactly at addr, or NULL. */
const char *tc_symtab_exact(const tc_symtab *t, uint64_t addr);
/* The function containing addr (within its size, or before the next symbol
 * when the size is 0), with the offset into it; NULL if none. */
const char *tc_symtab_find(const tc_symtab *t, uint64_t addr, uint64_t *off);
/* The nth (0-based) function named `name`: its [start, end) (up to the
 * next symbol when its size is 0). 1 if there is one, else 0. */
int tc_symtab_lookup(const tc_symtab *t, const char *name, size_t nth,
                     uint64_t *start, uint64_t *end);

/* A C++ symbol's demangled name in out (as c++filt prints it), or name
 * itself when it is not mangled or no C++ runtime is on the system. */
const char *tc_demangle(const char *name, char *out, size_t max);

#endif
