/* Per-PC decode cache: each instruction is disassembled once (capstone,
 * with detail) to learn which registers it can write, so the recorder reads
 * only those after it executes. */
#ifndef TC_DECODE_H
#define TC_DECODE_H

#include <stdbool.h>
#include <stdint.h>

#include "tracecorn/tracecorn.h"

enum { TC_DEC_EMU_NONE = 0, TC_DEC_EMU_RDTSC, TC_DEC_EMU_RDTSCP };

typedef struct tc_decoded {
  uint64_t pc;
  uint8_t size;
  uint8_t bytes[16];
  bool valid;     /* slot in use */
  bool full_read; /* read every register after it (traps, x87, unknown) */
  bool is_rep;    /* rep/repe/repne-prefixed string instruction */
  bool thumb;     /* arm: decoded as Thumb (CPSR.T was set) */
  /* Run by tracecorn instead of Unicorn (TC_DEC_EMU_*): its result would
   * otherwise come from the host (rdtsc reads the host's clock). */
  uint8_t emulate;
  bool privileged; /* faults in user mode (x86: hlt, cli, in/out, wrmsr...)
                      though Unicorn, running at ring 0, would execute it */
  uint8_t nwrite;  /* registers it may write (indices into arch->regs) */
  uint16_t write[40];
} tc_decoded;

typedef struct tc_decoder tc_decoder;

tc_decoder *tc_decoder_new(const tc_arch *arch, tc_error *err);
void tc_decoder_free(tc_decoder *d);
/* Returns the cached decode for pc, decoding `bytes` (size bytes) on a miss
 * or when the cached bytes or ISA mode differ. thumb: arm's Thumb state. */
const tc_decoded *tc_decoder_get(tc_decoder *d, uint64_t pc,
                                 const uint8_t *bytes, uint32_t size,
                                 bool thumb);
/* Looks up without decoding (NULL on miss). */
const tc_decoded *tc_decoder_peek(tc_decoder *d, uint64_t pc);
/* Drops cached decodes overlapping [addr, addr+size) (self-modifying code). */
void tc_decoder_invalidate(tc_decoder *d, uint64_t addr, uint64_t size);
#endif
