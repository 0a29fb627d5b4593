/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The listing writer that the text and json formats share (what `tracecorn
 * dump` prints): its state, opening and closing the output, and the value
 * renderings both print. Private to writers/text/ and writers/json/. */
#ifndef TC_LISTING_H
#define TC_LISTING_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "common/elf/modsyms.h"
#include "common/linux/sysdecode.h"
#include "writers/format.h"

struct tc_writer {
  FILE *f;
  bool own;
  const tc_arch *arch;
  /* function symbols of the program and of every module it maps (read
   * from the host file a map names, under root) */
  tc_modsyms *syms;
  char root[4096];
  /* decodes syscall lines strace-style; it sees every event to keep the
   * memory image their string and struct arguments come from */
  tc_sysdecode *dec;
  char path[4096];
  bool color;          /* -O text.color=1: ANSI colours for a terminal */
  bool full_keyframes; /* -O text.keyframes=full: every keyframe's state */
  bool demangle;       /* -O text.demangle=1: C++ names demangled */
  uint64_t keyframes;  /* keyframes printed so far */
  /* The thread of the last instruction printed: a "thread N" line marks
   * each change (guest threads), so every instruction's thread shows. */
  uint32_t last_tid;
  bool seen_insn;
};

/* A format's own setup, run after the decoder and the symbols are made
 * and before the output file is: 0, or -1 with a message (listing_open
 * frees w). */
typedef int (*listing_setup)(tc_writer *w, const tc_trace_info *info,
                             tc_error *err);

/* Opens the output (path "-" is stdout); the caller writes its header.
 * format: whose writer options these are (FORMAT.root=DIR: where the
 * trace's module paths are found, as record --root). */
tc_writer *listing_open(const char *path, const tc_trace_info *info,
                        const char *format, listing_setup setup, tc_error *err);
/* After an event was printed: feeds the decoder and checks the stream. */
int listing_event_done(tc_writer *w, const tc_event *ev, tc_error *err);
int listing_skip_event(tc_writer *w, const tc_event *ev, tc_error *err);
int listing_close_writer(tc_writer *w, tc_error *err);

/* The function holding addr as "name" or "name+0xOFF" (demangled with
 * text.demangle) in out; NULL if no symbol holds it. */
const char *listing_sym(const tc_writer *w, uint64_t addr, char *out,
                        size_t max);
const char *listing_fault_what(tc_fault_kind k);
const char *listing_exit_reason(tc_exit_reason r);
void listing_prot_str(uint32_t p, char out[4]);
void listing_put_hexbytes(FILE *f, const uint8_t *p, size_t n);
void listing_put_reg_value(FILE *f, const tc_reg_info *ri, const uint8_t *p);
int listing_utf8_len(const unsigned char *p);

#endif
