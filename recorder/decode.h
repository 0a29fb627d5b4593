/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Per-PC decode cache: each instruction is disassembled once (capstone,
 * with detail) to learn which registers it can write, so the recorder reads
 * only those after it executes. */
#ifndef TC_DECODE_H
#define TC_DECODE_H

#include <stdbool.h>
#include <stdint.h>

#include "tracecorn/tracecorn.h"

enum {
  TC_DEC_EMU_NONE = 0,
  TC_DEC_EMU_RDTSC,
  TC_DEC_EMU_RDTSCP,
  TC_DEC_EMU_X87 /* on the host's FPU (tc_x87_host_run) */
};

/* One cache slot: 64 bytes, one cache line (the table is line-aligned):
 * the code hook's lookup and finalize's reads touch a single line. */
typedef struct tc_decoded {
  uint64_t pc;
  uint8_t bytes[16];
  uint8_t size;
  uint8_t nwrite; /* registers it may write (indices into arch->regs),
                     ascending; more than fit make it full_read */
  /* Run by tracecorn instead of Unicorn (TC_DEC_EMU_*): its result would
   * otherwise come from the host (rdtsc reads the host's clock). */
  uint8_t emulate;
  bool valid : 1;      /* slot in use */
  bool full_read : 1;  /* read every register after it (traps, x87, unknown) */
  bool is_rep : 1;     /* rep/repe/repne-prefixed string instruction */
  bool thumb : 1;      /* arm: decoded as Thumb (CPSR.T was set) */
  bool privileged : 1; /* faults in user mode (x86: hlt, cli, in/out,
                          wrmsr...) though Unicorn, running at ring 0, would
                          execute it */
  /* The next `guards` instructions cannot be where a run stops and
   * resumes: a mips branch's delay slot (1), the instructions a Thumb IT
   * covers (up to 4). The engine keeps that state only inside a
   * translated block (record -j stops before such an instruction). */
  uint8_t guards : 3;
  uint16_t write[18]; /* the most seen is 12 (arm's push/pop lists) */
} tc_decoded;
_Static_assert(sizeof(tc_decoded) == 64, "a decode slot is one cache line");

typedef struct tc_decoder tc_decoder;

tc_decoder *tc_decoder_new(const tc_arch *arch, tc_error *err);
void tc_decoder_free(tc_decoder *d);
/* The cache's slots (open addressing, power-of-two capacity): the
 * decoder's first member, so the lookup below inlines into the code
 * hook. */
typedef struct tc_decoder_table {
  tc_decoded *slots;
  size_t cap;
} tc_decoder_table;

static inline size_t tc_decoder_slot(const tc_decoder_table *t, uint64_t pc) {
  uint64_t h = pc * 0x9e3779b97f4a7c15ull;
  return (size_t)(h >> 20) & (t->cap - 1);
}

/* The cached decode of pc, or NULL. */
static inline const tc_decoded *tc_decoder_peek(const tc_decoder *d,
                                                uint64_t pc) {
  const tc_decoder_table *t = (const tc_decoder_table *)d;
  size_t s = tc_decoder_slot(t, pc);
  while (t->slots[s].valid) {
    if (t->slots[s].pc == pc)
      return &t->slots[s];
    s = (s + 1) & (t->cap - 1);
  }
  return NULL;
}

/* Returns the cached decode for pc, decoding `bytes` (size bytes) on a miss
 * or when the cached bytes or ISA mode differ. thumb: arm's Thumb state.
 * What peek and get return points into the cache: it stays valid until
 * the next get or invalidate (copy it to keep it longer). */
const tc_decoded *tc_decoder_get(tc_decoder *d, uint64_t pc,
                                 const uint8_t *bytes, uint32_t size,
                                 bool thumb);
/* Drops cached decodes overlapping [addr, addr+size) (self-modifying code).
 * Slots are indexed by code page outside the slots: a range over pages
 * with no cached code costs one lookup a page (usually one), and only the
 * slots of the pages it covers are looked at. */
void tc_decoder_invalidate(tc_decoder *d, uint64_t addr, uint64_t size);
#endif
