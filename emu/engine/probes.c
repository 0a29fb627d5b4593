/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Engine probes (issue 37): known Unicorn defects that would make a
 * recording silently wrong, each found by running a few instructions in a
 * scratch engine of its own, once per process (the first time an arch
 * asks), whatever the engine's version number says. An engine that fails
 * a probe is refused for that arch with one line naming the defect and the
 * version (tc_emu_new; the CLI's status 125); one that passes is used.
 *
 * Measured (docs/arches.md, engine x arch table):
 *  - sparc64: nPC becomes 1 in a `retl`'s delay slot under a code hook
 *    (2.1.2-2.1.4, upstream c22651c9).
 *  - arm (Thumb): a load or store that ends an IT block, run under a memory
 *    hook of its kind, leaves the IT state behind: the first instruction of
 *    the next block is skipped as if it failed its condition (2.1.4; 2.0.1
 *    and 2.1.1 pass). busybox-armhf `wc -lc` printed 6 lines, not 3.
 *  - mips (o32 both orders, n64): a store in a delay slot under a memory
 *    hook leaves the delay-slot flags set, and the branch at the target
 *    raises a reserved-instruction exception (2.1.4; upstream #2272).
 *  - mips64el: 2.0.1's engine cannot execute MIPS64 code at all (its
 *    uc_emu_start writes a 32-bit PC; upstream PR #2111, 2.1.3).
 *  - mips64el, handled while recording instead of refused (2.1.4): the
 *    delay-slot defect above, which the virtual TLB's fills trigger too
 *    (the recorder skips the engine's rerun of the instruction after the
 *    slot, mips64_ds_guard_works checking that this puts it right), and
 *    ll/lld raising an exception at 0x80000000 and above under the
 *    virtual TLB (upstream #2345); what the guard cannot put right ends
 *    the recording there with one line (emu/engine/mips/mips.c).
 * Both memory-hook defects come from the engine restoring the CPU state of
 * the instruction's start before each hooked access; without memory hooks
 * (record --no-memory) those arches record correctly and are not refused.
 *
 * And one capability, used rather than refused: whether the MIPS FPU
 * registers can be read and written (2.0.1 and 2.1.1 read F0-F31 as 0
 * whatever the program put there and have no FCSR; 2.1.3+ have both).
 * Where they can, mips and mipsel processes get the arch table with the
 * FPU registers (tc_arch_with_fpu; tc_emu_new), so traces and signal
 * frames hold them; where they cannot, nothing shows them: no trace or
 * signal frame holds made-up FPU values. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unicorn/unicorn.h>

#include "common/byteorder.h"
#include "emu/engine/emu.h"

#define PROBE_CODE 0x10000u
#define PROBE_DATA 0x20000u
#define PROBE_PAGE 0x2000u /* sparc64's 8 KiB pages; 2 pages elsewhere */

static char version[32];

static void version_init(void) {
  unsigned major = 0, minor = 0;
  unsigned v = uc_version(&major, &minor);
  snprintf(version, sizeof version, "%u.%u.%u", major, minor, (v >> 8) & 0xff);
}

const char *tc_engine_version(void) {
  static pthread_once_t once = PTHREAD_ONCE_INIT;
  pthread_once(&once, version_init);
  return version;
}

/* ------------------------------------------------------------ helpers */

static void ignore_code(uc_engine *uc, uint64_t address, uint32_t size,
                        void *user) {
  (void)uc, (void)address, (void)size, (void)user;
}

static void ignore_mem(uc_engine *uc, uc_mem_type type, uint64_t address,
                       int size, int64_t value, void *user) {
  (void)uc, (void)type, (void)address, (void)size, (void)value, (void)user;
}

static void stop_intr(uc_engine *uc, uint32_t intno, void *user) {
  *(uint32_t *)user = intno;
  uc_emu_stop(uc);
}

/* A scratch engine with code and data pages, the 32-bit words of code
 * written in its byte order, and the hooks a recording installs: the code
 * hook, and with memory the read, read-after and write hooks. An interrupt
 * stops it (its number in *intno). NULL if any step failed. */
static uc_engine *scratch_at(uint64_t base, uc_arch a, int mode, int cpu_model,
                             const uint32_t *code, size_t n, bool big_endian,
                             bool memory, uint32_t *intno) {
  uc_engine *uc = NULL;
  if (uc_open(a, (uc_mode)mode, &uc) != UC_ERR_OK)
    return NULL;
  if (cpu_model >= 0)
    uc_ctl_set_cpu_model(uc, cpu_model);
  if (a == UC_ARCH_MIPS && (mode & UC_MODE_MIPS64))
    tc_emu_virtual_tlb(uc); /* as tc_emu_new does */
  uint8_t bytes[64];
  if (n * 4 > sizeof bytes)
    goto fail;
  for (size_t i = 0; i < n; i++)
    put_uint(bytes + 4 * i, code[i], 4, big_endian);
  uc_hook h;
  if (uc_mem_map(uc, base, PROBE_PAGE, UC_PROT_ALL) != UC_ERR_OK ||
      uc_mem_map(uc, PROBE_DATA, PROBE_PAGE, UC_PROT_ALL) != UC_ERR_OK ||
      uc_mem_write(uc, base, bytes, n * 4) != UC_ERR_OK ||
      uc_hook_add(uc, &h, UC_HOOK_CODE, (void *)ignore_code, NULL, 1, 0) ||
      uc_hook_add(uc, &h, UC_HOOK_INTR, (void *)stop_intr, intno, 1, 0))
    goto fail;
  if (memory &&
      (uc_hook_add(uc, &h, UC_HOOK_MEM_READ, (void *)ignore_mem, NULL, 1, 0) ||
       uc_hook_add(uc, &h, UC_HOOK_MEM_READ_AFTER, (void *)ignore_mem, NULL, 1,
                   0) ||
       uc_hook_add(uc, &h, UC_HOOK_MEM_WRITE, (void *)ignore_mem, NULL, 1, 0)))
    goto fail;
  return uc;
fail:
  uc_close(uc);
  return NULL;
}

static uc_engine *scratch(uc_arch a, int mode, int cpu_model,
                          const uint32_t *code, size_t n, bool big_endian,
                          bool memory, uint32_t *intno) {
  return scratch_at(PROBE_CODE, a, mode, cpu_model, code, n, big_endian, memory,
                    intno);
}

/* --------------------------------------------------------------- sparc64 */

/* `call f; nop; ta 0x6d; f: retl; nop` under a code hook must reach the
 * `ta` (trap 0x16d with the PC at it). */
static bool sparc_delay_slots_work(void) {
  static const uint32_t code[5] = {0x40000003, 0x01000000, 0x91d0206d,
                                   0x81c3e008, 0x01000000};
  uint32_t intno = 0;
  uc_engine *uc = scratch(UC_ARCH_SPARC, UC_MODE_SPARC64 | UC_MODE_BIG_ENDIAN,
                          -1, code, 5, true, false, &intno);
  if (!uc)
    return false;
  uint64_t pc = 0;
  bool ok = uc_emu_start(uc, PROBE_CODE, UINT64_MAX, 0, 0) == UC_ERR_OK &&
            intno == 0x16d && uc_reg_read(uc, UC_SPARC_REG_PC, &pc) == 0 &&
            pc == PROBE_CODE + 8;
  uc_close(uc);
  return ok;
}

/* ------------------------------------------------------------------- arm */

/* Thumb: `cmp r0, #1; it lo; str r1, [r2]; cmp r0, #0; b.n next;
 * next: movs r3, #1; nop` with r0 = 0 under memory hooks. The store ends
 * the IT block; the second cmp makes `lo` false, so an IT state left
 * behind skips the `movs` (r3 stays 0). */
static bool arm_it_blocks_work(void) {
  static const uint32_t code[4] = {0xbf382801, 0x28006011, 0x2301e7ff,
                                   0xbf00bf00};
  uint32_t intno = 0;
  uc_engine *uc =
      scratch(UC_ARCH_ARM, UC_MODE_ARM, -1, code, 4, false, true, &intno);
  if (!uc)
    return false;
  uint32_t cpsr = 0x10, r0 = 0, r1 = 0x55, r2 = PROBE_DATA, r3 = 0, back = 0;
  uint32_t fpexc = 0x40000000u;
  uc_reg_write(uc, UC_ARM_REG_FPEXC, &fpexc);
  uc_reg_write(uc, UC_ARM_REG_CPSR, &cpsr);
  uc_reg_write(uc, UC_ARM_REG_R0, &r0);
  uc_reg_write(uc, UC_ARM_REG_R1, &r1);
  uc_reg_write(uc, UC_ARM_REG_R2, &r2);
  uc_reg_write(uc, UC_ARM_REG_R3, &r3);
  bool ok =
      uc_emu_start(uc, PROBE_CODE | 1, PROBE_CODE + 12, 0, 0) == UC_ERR_OK &&
      intno == 0 && uc_reg_read(uc, UC_ARM_REG_R3, &r3) == 0 && r3 == 1 &&
      uc_mem_read(uc, PROBE_DATA, &back, 4) == 0 && back == 0x55;
  uc_close(uc);
  return ok;
}

/* ------------------------------------------------------------------ mips */

static int mips_mode(const tc_arch *arch) {
  return (arch->id == TC_ARCH_MIPS64EL ? UC_MODE_MIPS64 : UC_MODE_MIPS32) |
         (arch->big_endian ? UC_MODE_BIG_ENDIAN : 0);
}

static int mips_model(const tc_arch *arch) {
  return arch->id == TC_ARCH_MIPS64EL ? UC_CPU_MIPS64_MIPS64R2_GENERIC : -1;
}

/* `li v0, 5` at base. Unicorn 2.0.1 builds MIPS64 engines that fault on
 * the first instruction anywhere (its uc_emu_start writes a 32-bit PC;
 * upstream PR #2111); 2.1.4's runs at 0x10000 but not at 0x120000000,
 * where n64 programs live, unless the virtual TLB is chosen
 * (uc_ctl_tlb_mode), which tracecorn does not do yet. */
static bool mips_runs(const tc_arch *arch, uint64_t base) {
  static const uint32_t code[2] = {0x24020005, 0};
  uint32_t intno = 0;
  uc_engine *uc =
      scratch_at(base, UC_ARCH_MIPS, mips_mode(arch), mips_model(arch), code, 2,
                 arch->big_endian, false, &intno);
  if (!uc)
    return false;
  uint64_t v0 = 0;
  bool ok = uc_emu_start(uc, base, base + 4, 0, 0) == UC_ERR_OK && intno == 0 &&
            uc_reg_read(uc, UC_MIPS_REG_V0, &v0) == 0 && v0 == 5;
  uc_close(uc);
  return ok;
}

/* `b 1f; sw t0, 0(t1); 1: bne zero, zero, 2f; nop; li v0, 1; 2: nop`
 * under memory hooks must set v0, with no exception (a delay-slot flag
 * left behind makes the `bne` a reserved instruction: interrupt 20). */
static bool mips_delay_slots_work(const tc_arch *arch) {
  static const uint32_t code[6] = {0x10000001, 0xad280000, 0x14000001,
                                   0,          0x24020001, 0};
  uint32_t intno = 0;
  uc_engine *uc = scratch(UC_ARCH_MIPS, mips_mode(arch), mips_model(arch), code,
                          6, arch->big_endian, true, &intno);
  if (!uc)
    return false;
  uint64_t t1 = PROBE_DATA, v0 = 0;
  uc_reg_write(uc, UC_MIPS_REG_T1, &t1);
  bool ok = uc_emu_start(uc, PROBE_CODE, PROBE_CODE + 20, 0, 0) == UC_ERR_OK &&
            intno == 0 && uc_reg_read(uc, UC_MIPS_REG_V0, &v0) == 0 && v0 == 1;
  uc_close(uc);
  return ok;
}

/* mips64el: `ll v0, 0x100(t1); lld v1, 0x100(t1)` at 0x120000000 must
 * load the word and doubleword there; under the virtual TLB 2.1.4 raises
 * an address error for ll/lld at 0x80000000 and above (upstream #2345, fix
 * PR #2346 unreleased), and glibc's atomics use them. */
static bool mips64_ll_works(void) {
  static const uint32_t code[3] = {0xc1220100, 0xd1230100, 0};
  static const uint8_t data[8] = {0x78, 0x56, 0x34, 0x12,
                                  0x44, 0x33, 0x22, 0x11};
  const uint64_t base = 0x120000000ull;
  const tc_arch *arch = tc_arch_by_id(TC_ARCH_MIPS64EL);
  uint32_t intno = 0;
  uc_engine *uc = scratch_at(base, UC_ARCH_MIPS, mips_mode(arch),
                             mips_model(arch), code, 3, false, false, &intno);
  if (!uc)
    return false;
  uint64_t t1 = base, v0 = 0, v1 = 0;
  uc_reg_write(uc, UC_MIPS_REG_T1, &t1);
  bool ok = uc_mem_write(uc, base + 0x100, data, 8) == UC_ERR_OK &&
            uc_emu_start(uc, base, base + 8, 0, 0) == UC_ERR_OK && intno == 0 &&
            uc_reg_read(uc, UC_MIPS_REG_V0, &v0) == 0 &&
            uc_reg_read(uc, UC_MIPS_REG_V1, &v1) == 0 && v0 == 0x12345678u &&
            v1 == 0x1122334412345678ull;
  uc_close(uc);
  return ok;
}

/* How the delay-slot defect shows when the branch target is not a branch
 * (mips64el, what the recorder's guard relies on; recorder.c ds_replay):
 * `b 1f; sd t0, 0(t1); 1: daddiu v0, v0, 1; daddiu v0, v0, 1; nop` at
 * 0x120000000 under memory hooks and the virtual TLB. An engine with the
 * defect runs the first daddiu as a delay slot and jumps back to it (its
 * code hook comes twice in a row, 2.1.4 measured); moving the PC past it
 * at the second hook, as the guard does, must leave v0 = 2 and raise
 * nothing. An engine without the defect passes too (no second hook). */
struct replay_probe {
  uint64_t target, last;
  int replays;
};

static void replay_code(uc_engine *uc, uint64_t address, uint32_t size,
                        void *user) {
  struct replay_probe *p = user;
  if (address == p->target && p->last == p->target) {
    uint64_t next = address + size;
    p->replays++;
    uc_reg_write(uc, UC_MIPS_REG_PC, &next);
  }
  p->last = address;
}

static bool mips64_ds_guard_works(void) {
  static const uint32_t code[5] = {0x10000001, 0xfd280000, 0x64420001,
                                   0x64420001, 0};
  const uint64_t base = 0x120000000ull;
  const tc_arch *arch = tc_arch_by_id(TC_ARCH_MIPS64EL);
  uint32_t intno = 0;
  struct replay_probe p = {base + 8, 0, 0};
  uc_engine *uc = scratch_at(base, UC_ARCH_MIPS, mips_mode(arch),
                             mips_model(arch), code, 5, false, true, &intno);
  if (!uc)
    return false;
  uc_hook h;
  uint64_t t1 = PROBE_DATA, v0 = 0;
  uc_reg_write(uc, UC_MIPS_REG_T1, &t1);
  bool ok = uc_hook_add(uc, &h, UC_HOOK_CODE, (void *)replay_code, &p, 1, 0) ==
                UC_ERR_OK &&
            uc_emu_start(uc, base, base + 16, 0, 0) == UC_ERR_OK &&
            intno == 0 && p.replays <= 1 &&
            uc_reg_read(uc, UC_MIPS_REG_V0, &v0) == 0 && v0 == 2;
  uc_close(uc);
  return ok;
}

/* `lui t0, 0x1234; ori t0, t0, 0x5678; mtc1 t0, $f2; li t1, 3;
 * ctc1 t1, $31`: f2 and FCSR must read back what the program put there,
 * FIR must read (non-zero: an FPU is there) and f4 must take a write
 * (mipsel o32). 2.0.1 and 2.1.1 read f2 as 0 and have no FCSR. */
static bool mips_fpu_readable(void) {
  static const uint32_t code[6] = {0x3c081234, 0x35085678, 0x44881000,
                                   0x24090003, 0x44c9f800, 0};
  uint32_t intno = 0;
  uc_engine *uc =
      scratch(UC_ARCH_MIPS, UC_MODE_MIPS32, -1, code, 6, false, false, &intno);
  if (!uc)
    return false;
  uint64_t f2 = 0, f4 = 0x3ff00000u, back = 0;
  uint32_t fcsr = 0, fir = 0;
  bool ok = uc_emu_start(uc, PROBE_CODE, PROBE_CODE + 20, 0, 0) == UC_ERR_OK &&
            intno == 0 && uc_reg_read(uc, UC_MIPS_REG_F2, &f2) == 0 &&
            (uint32_t)f2 == 0x12345678u &&
            uc_reg_read(uc, UC_MIPS_REG_CP0_STATUS + 2, &fcsr) == 0 &&
            fcsr == 3 &&
            uc_reg_read(uc, UC_MIPS_REG_CP0_STATUS + 1, &fir) == 0 &&
            fir != 0 && uc_reg_write(uc, UC_MIPS_REG_F4, &f4) == 0 &&
            uc_reg_read(uc, UC_MIPS_REG_F4, &back) == 0 && back == f4;
  uc_close(uc);
  return ok;
}

/* ----------------------------------------------------- once per process */

enum {
  P_SPARC,
  P_ARM,
  P_MIPS_RUNS_BE,
  P_MIPS_RUNS_LE,
  P_MIPS_RUNS_64,
  P_MIPS_RUNS_64_HIGH,
  P_MIPS64_LL,
  P_MIPS_DS_BE,
  P_MIPS_DS_LE,
  P_MIPS_DS_64,
  P_MIPS_FPU,
  P_MIPS64_DS_GUARD,
  P_COUNT
};

static bool result[P_COUNT];
/* one initializer per probe */
static pthread_once_t onces[P_COUNT] = {
    PTHREAD_ONCE_INIT, PTHREAD_ONCE_INIT, PTHREAD_ONCE_INIT, PTHREAD_ONCE_INIT,
    PTHREAD_ONCE_INIT, PTHREAD_ONCE_INIT, PTHREAD_ONCE_INIT, PTHREAD_ONCE_INIT,
    PTHREAD_ONCE_INIT, PTHREAD_ONCE_INIT, PTHREAD_ONCE_INIT, PTHREAD_ONCE_INIT};

static void run_sparc(void) { result[P_SPARC] = sparc_delay_slots_work(); }
static void run_arm(void) { result[P_ARM] = arm_it_blocks_work(); }
static void run_runs_be(void) {
  result[P_MIPS_RUNS_BE] = mips_runs(tc_arch_by_id(TC_ARCH_MIPS), PROBE_CODE);
}
static void run_runs_le(void) {
  result[P_MIPS_RUNS_LE] = mips_runs(tc_arch_by_id(TC_ARCH_MIPSEL), PROBE_CODE);
}
static void run_runs_64(void) {
  result[P_MIPS_RUNS_64] =
      mips_runs(tc_arch_by_id(TC_ARCH_MIPS64EL), PROBE_CODE);
}
static void run_runs_64_high(void) {
  result[P_MIPS_RUNS_64_HIGH] =
      mips_runs(tc_arch_by_id(TC_ARCH_MIPS64EL), 0x120000000ull);
}
static void run_ll_64(void) { result[P_MIPS64_LL] = mips64_ll_works(); }
static void run_ds_be(void) {
  result[P_MIPS_DS_BE] = mips_delay_slots_work(tc_arch_by_id(TC_ARCH_MIPS));
}
static void run_ds_le(void) {
  result[P_MIPS_DS_LE] = mips_delay_slots_work(tc_arch_by_id(TC_ARCH_MIPSEL));
}
static void run_ds_64(void) {
  result[P_MIPS_DS_64] = mips_delay_slots_work(tc_arch_by_id(TC_ARCH_MIPS64EL));
}
static void run_fpu(void) { result[P_MIPS_FPU] = mips_fpu_readable(); }
static void run_ds_guard(void) {
  result[P_MIPS64_DS_GUARD] = mips64_ds_guard_works();
}

static void (*const runners[P_COUNT])(void) = {
    run_sparc,   run_arm,          run_runs_be, run_runs_le,
    run_runs_64, run_runs_64_high, run_ll_64,   run_ds_be,
    run_ds_le,   run_ds_64,        run_fpu,     run_ds_guard};

static bool passes(int p) {
  pthread_once(&onces[p], runners[p]);
  return result[p];
}

bool tc_engine_mips_fpu_readable(void) { return passes(P_MIPS_FPU); }
bool tc_engine_mips64_ds_defect(void) { return !passes(P_MIPS_DS_64); }
bool tc_engine_mips64_ll_defect(void) { return !passes(P_MIPS64_LL); }

const char *tc_engine_refusal(const tc_arch *arch, bool memory_hooks, char *buf,
                              size_t size) {
  const char *defect = NULL;
  int runs = -1, ds = -1;
  bool hooked = false; /* a defect under memory hooks only */
  switch (arch->id) {
  case TC_ARCH_SPARC64:
  case TC_ARCH_SPARC:
    if (!passes(P_SPARC))
      defect = "runs sparc delay slots wrongly under a code hook (nPC "
               "becomes 1 after retl: a regression of 2.1.2 to 2.1.4)";
    break;
  case TC_ARCH_ARM:
    if (memory_hooks && !passes(P_ARM))
      defect = "leaves a Thumb IT block's state behind after a load or store "
               "that ends it under a memory hook (the next block's first "
               "instruction is skipped)";
    hooked = defect != NULL;
    break;
  case TC_ARCH_MIPS:
    runs = P_MIPS_RUNS_BE, ds = P_MIPS_DS_BE;
    break;
  case TC_ARCH_MIPSEL:
    runs = P_MIPS_RUNS_LE, ds = P_MIPS_DS_LE;
    break;
  case TC_ARCH_MIPS64EL:
    /* its delay-slot and ll/lld defects are handled at run time
     * (tc_engine_mips64_ds_defect, tc_engine_mips64_ll_defect) */
    runs = P_MIPS_RUNS_64;
    break;
  default:
    break;
  }
  if (runs >= 0 && !passes(runs))
    defect = arch->id == TC_ARCH_MIPS64EL
                 ? "cannot execute MIPS64 code: every instruction raises an "
                   "exception (fixed in Unicorn 2.1.3); mips64el traces can "
                   "still be read and converted"
                 : "cannot execute MIPS code";
  else if (arch->id == TC_ARCH_MIPS64EL && !passes(P_MIPS_RUNS_64_HIGH))
    defect = "runs MIPS64 code at 0x10000 but not at 0x120000000, where n64 "
             "programs live, even with its virtual TLB";
  else if (arch->id == TC_ARCH_MIPS64EL && !passes(P_MIPS_DS_64) &&
           !passes(P_MIPS64_DS_GUARD))
    defect = "leaves a delay slot's flags set after a memory access in it "
             "(upstream issue #2272) in a way tracecorn's guard does not "
             "recognise";
  else if (ds >= 0 && memory_hooks && !passes(ds)) {
    defect = "makes a branch after a delay slot a reserved instruction "
             "under a memory hook (upstream issue #2272)";
    hooked = true;
  }
  if (!defect)
    return NULL;
  snprintf(buf, size, "this Unicorn (%s) %s; it cannot record %s%s",
           tc_engine_version(), defect, arch->name,
           hooked ? " with memory accesses (--no-memory records without them)"
                  : "");
  return buf;
}
