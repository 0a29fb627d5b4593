/* SPDX-License-Identifier: GPL-2.0-or-later */
/* emu/regfile: reading the engine's registers straight from its memory.
 *
 * uc_reg_read costs ~10 ns per register and ~20 ns for x86 EFLAGS (a
 * switch per register, then the lazy flags computed); a recorder reads
 * one to four registers per instruction, so that is most of its time.
 * Unicorn keeps the guest's integer and vector registers as plain words
 * in its CPU state, synced to memory before every hook, so once their
 * addresses are known a read is a load.
 *
 * Unicorn 2.0.1 has no API that gives those addresses, so they are
 * found by calibration: a random value written with uc_reg_write is
 * looked for in the process's writable memory (read through
 * process_vm_readv, which cannot fault), nearest the engine first, until
 * a place follows two more values; the other registers are then found
 * near it, each exactly once and confirmed by a second value. A
 * register not found keeps
 * going through uc_reg_read; nothing depends on the engine's struct
 * layout except x86's lazy flags, which are checked against
 * uc_reg_read before they are used.
 *
 * tc_debug_options.regfile (TRACECORN_REGFILE for the command) =
 * TC_REGFILE_OFF disables it; TC_REGFILE_CHECK compares every direct read
 * with uc_reg_read and aborts on the first difference (tests use it). */
#ifndef TC_REGFILE_H
#define TC_REGFILE_H

#include <stdbool.h>
#include <stdint.h>
#include <unicorn/unicorn.h>

#include "common/arch.h"
#include "common/debug_options.h"
#include "tracecorn/tracecorn.h"

typedef struct tc_regfile {
  const tc_arch *arch;
  uc_engine *uc;
  /* per register of the arch table: where its bytes live, or NULL */
  const uint8_t **ptr;
  int ndirect;
  /* x86: the CPU state's eflags, cc_dst, cc_src, cc_src2 (target_ulong),
   * cc_op and df (32-bit) */
  const uint8_t *x86_cc;
  bool check; /* TC_REGFILE_CHECK: the recorder's check_reads */
} tc_regfile;

/* Host memory calibration does not scan (guest RAM: large, never the
 * CPU state). */
typedef struct tc_regfile_skip {
  uintptr_t start, end;
} tc_regfile_skip;

/* Calibrates against uc (whose registers it saves and restores); NULL if
 * mode (tc_debug_options.regfile) is TC_REGFILE_OFF or out of memory. A
 * regfile with no register found is still returned (every read then goes
 * through Unicorn). debug: says on stderr how many registers were found. */
tc_regfile *tc_regfile_open(uc_engine *uc, const tc_arch *arch,
                            const tc_regfile_skip *skip, size_t nskip, int mode,
                            bool debug);
void tc_regfile_free(tc_regfile *rf);

/* x86 EFLAGS/RFLAGS as uc_reg_read gives it, from the lazy flags state;
 * false if this regfile cannot (then read it through Unicorn). */
bool tc_regfile_x86_flags(const tc_regfile *rf, uint64_t *out);

/* Check mode: compares size bytes read directly for register i with
 * uc_reg_read's; prints and aborts on a difference. */
void tc_regfile_check(const tc_regfile *rf, int i, const uint8_t *direct,
                      unsigned size);

#endif
