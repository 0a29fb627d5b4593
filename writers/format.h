/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The format module contract (private to libtracecorn, as the registry
 * is): one module per format (writers/<name>/) defines one tc_format,
 * listed in writers/registry.c. The public header has tc_format as an
 * opaque handle with accessors (tc_format_name...); the library's own
 * layers, tools and tests call the modules through this vtable. */
#ifndef TC_WRITERS_FORMAT_H
#define TC_WRITERS_FORMAT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "common/arch.h"
#include "tracecorn/tracecorn.h"

typedef struct tc_writer tc_writer; /* format-private */
typedef struct tc_reader tc_reader; /* format-private */

/* A watched range for chunk_may_stop: [addr, addr + len), kinds
 * TC_MEM_READ and/or TC_MEM_WRITE. */
typedef struct tc_chunk_watch {
  uint64_t addr, len;
  int kinds;
} tc_chunk_watch;

struct tc_format {
  const char *name; /* "text", "tct", "trac", "tfile", ... */
  const char *description;
  uint32_t caps; /* TC_CAP_* */
  /* 1 if register `reg` of `arch` round-trips through this format; NULL
   * means every register does. */
  int (*holds_reg)(const tc_arch *arch, int reg);
  /* file extension for an arch (".trace64" / ".trace32" for trac). */
  const char *(*extension)(const tc_arch *arch);
  /* 0 if the format can hold this arch, else -1 with a message. */
  int (*supports)(const tc_arch *arch, tc_error *err);

  tc_writer *(*open_writer)(const char *path, const tc_trace_info *info,
                            tc_error *err);
  /* Events arrive in recording order; pointers are valid during the call. */
  int (*write_event)(tc_writer *w, const tc_event *ev, tc_error *err);
  /* Flushes, writes trailers, frees. Returns -1 if anything failed. */
  int (*close_writer)(tc_writer *w, tc_error *err);

  /* Readers: NULL if the format has none. Probe returns 1 if the first
   * bytes of a file look like this format. */
  int (*probe)(const uint8_t *head, size_t n, const char *path);
  tc_reader *(*open_reader)(const char *path, tc_error *err);
  const tc_trace_info *(*reader_info)(tc_reader *r);
  /* 1: *ev filled (valid until the next call), 0: end, -1: error. */
  int (*next_event)(tc_reader *r, tc_event *ev, tc_error *err);
  void (*close_reader)(tc_reader *r);
  /* Random access, NULL if the format has none: positions the reader so
   * that next_event yields a KEYFRAME holding the full register state
   * before instruction `insn`, then INSN `insn` (with memory values as
   * they were then) and the rest of the trace. A format that holds maps
   * may first replay the MAP, UNMAP and PROTECT events a forward read
   * gives before `insn`, without their data (tct does: names resolve as
   * after a forward read). Returns 0, or -1 if the trace has no such
   * instruction or is corrupt. */
  int (*seek)(tc_reader *r, uint64_t insn, tc_error *err);
  /* Optional, for writers that keep state across events (the memory
   * image text, json and strace read syscall arguments from): an event a
   * filter (tc_filter) left out, passed on so that state stays right.
   * It prints nothing. NULL: left-out events are not passed. */
  int (*skip_event)(tc_writer *w, const tc_event *ev, tc_error *err);
  /* Optional: the program (and version) that wrote the file being read, as
   * the file states it, or NULL when the format does not say. Valid until
   * close_reader. */
  const char *(*reader_writer)(tc_reader *r);
  /* 1 if the writer runs a worker thread of its own (tct's compressor):
   * a session then keeps it on the recording thread instead of giving it
   * a writer thread (lib/pipe.h), which measured slower for it. */
  uint8_t own_thread;
  /* Optional: fills sum's counts, exit and modules from an index the
   * file holds (tct's footer), exactly as reading every event would
   * (tc_trace_summarize). 1 filled, 0 no index (read the trace), -1
   * error. */
  int (*summary)(tc_reader *r, tc_trace_summary *sum, tc_error *err);
  /* Optional: memory at a far position without reading the trace up to
   * it (tct's chunk memory summaries, issue 33). mem_base: 1 and *base
   * the first instruction of a chunk at or before insn where
   * mem_page can rebuild memory, else 0. mem_page: the 4 KiB page pn at
   * position base (before instruction base runs): 4096 bytes, then 512
   * bytes of known bits (bit i & 7 of byte i >> 3: byte i is in a map at
   * base); 0, or -1 with err. chunk_seek: positions the reader so that
   * next_event yields every event from the start of that chunk (its
   * KEYFRAME or the state its first INSN has) on, with data; 0 or -1. The
   * reader's position after mem_page is undefined. */
  int (*mem_base)(tc_reader *r, uint64_t insn, uint64_t *base);
  int (*mem_page)(tc_reader *r, uint64_t base, uint64_t pn, uint8_t *out,
                  tc_error *err);
  int (*chunk_seek)(tc_reader *r, uint64_t base, tc_error *err);
  /* Optional: chunk filters (tct, issue 33), for a debugger's runs.
   * chunk_span: 1 and [*first, *end), the instructions of the chunk that
   * holds instruction insn (the last one starting at or before it; *end
   * the next one's first, or the trace's count), where chunk_seek and
   * mem_base can start; 0 where there is none (no index, a chunk that
   * starts where another does). chunk_may_stop: 0 if no instruction
   * first..end-1 of that chunk is at one of the pcs (its state_before's
   * pc) and none of their memory effects overlaps a watch of its kinds
   * (TC_MEM_READ: the instructions' loads; TC_MEM_WRITE: their stores,
   * the kernel's writes and signal frames, a MAP's data); 1 if they may
   * (a chunk without filters: always). Exact: a 1 from sets that hold
   * none is a bug the tests look for. */
  int (*chunk_span)(tc_reader *r, uint64_t insn, uint64_t *first,
                    uint64_t *end);
  int (*chunk_may_stop)(tc_reader *r, uint64_t first, const uint64_t *pcs,
                        size_t npcs, const tc_chunk_watch *w, size_t nw);
};

/* tc_trace_summary's modules: a file-backed map's name, first seen first
 * (the first 8 kept, the others counted). */
static inline void tc_summary_note_module(tc_trace_summary *st, const char *n) {
  if (!n || !n[0] || n[0] == '[')
    return;
  for (int i = 0; i < st->nmodules; i++)
    if (strcmp(st->modules[i], n) == 0)
      return;
  if (st->nmodules < 8)
    snprintf(st->modules[st->nmodules++], sizeof st->modules[0], "%s", n);
  else
    st->more_modules++;
}

/* The value of writer option FORMAT.KEY in info->writer_options (the last
 * one given wins), or NULL. */
const char *tc_writer_option(const tc_trace_info *info, const char *format,
                             const char *key);
/* 0 if every option of `format` has a key in the NULL-terminated `known`
 * list (and every option is well formed), else -1 naming the bad one. */
int tc_writer_options_check(const tc_trace_info *info, const char *format,
                            const char *const *known, tc_error *err);

#endif
