/* SPDX-License-Identifier: GPL-2.0-or-later */
/* sparc64 guests (issue 30) on the engine as it is: freestanding programs
 * behave as under qemu-sparc64 (register windows, the syscall carry flag,
 * faults), the window instructions are recorded with their effects, the
 * formats that hold sparc64 read back what was recorded, and what the
 * engine cannot run (floating point on Unicorn 2.0.1) ends the recording
 * with an error instead of a made-up signal. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/arch.h"
#include "emu/engine/emu.h"
#include "testutil.h"
#include "tracecorn/tracecorn.h"

/* Output and exit status equal to qemu-sparc64's: arguments, deep
 * recursion past any window count, `return` and `restore` in delay slots
 * (windows), failing and succeeding syscalls in turn (errs: a stale carry
 * flag would turn a success into an error), a store to NULL and an
 * illtrap. */
static void test_reference(void) {
  tu_check_reference(TU_REF_AUTO, "hello-sparc64", "one two");
  tu_check_reference(TU_REF_AUTO, "loop-sparc64", "3000");
  tu_check_reference(TU_REF_AUTO, "windows-sparc64", "");
  tu_check_reference(TU_REF_AUTO, "errs-sparc64", "");
  tu_check_reference(TU_REF_AUTO, "segv-sparc64", "");
  tu_check_reference(TU_REF_AUTO, "ill-sparc64", "");
}

/* The same error convention test on the other ABIs (a negative result,
 * mips' a3). */
static void test_errs_other_arches(void) {
  tu_check_reference(TU_REF_AUTO, "errs64", "");
  tu_check_reference(TU_REF_AUTO, "errs-mips", "");
  tu_check_reference(TU_REF_AUTO, "errs-mipsel", "");
}

/* Division by zero: Linux sends SIGFPE (trap 0x28, FPE_INTDIV);
 * qemu-sparc64 7.2 stops with "Unhandled trap: 0x28" instead, so the
 * kernel's answer is the reference. */
static void test_divide_by_zero(void) {
  char *out = NULL;
  if (tu_expect_refusal(tu_guest("div-sparc64")))
    return;
  int st = tu_runf(&out, 1, "cd '%s' && %s record -q -o div-sparc64 -- %s",
                   tu_tmpdir(), TC_CLI, tu_guest("div-sparc64"));
  CU_ASSERT_EQUAL(st, 128 + 8);
  free(out);
}

typedef struct window_check {
  const tc_arch *arch;
  int sp, o7, i6, i7, o0, i0;
  uint64_t saves, restores, returns, insns;
  uint64_t bad;
} window_check;

static uint32_t word_of(const tc_insn_event *e) {
  return (uint32_t)e->bytes[0] << 24 | (uint32_t)e->bytes[1] << 16 |
         (uint32_t)e->bytes[2] << 8 | e->bytes[3];
}

/* Every `save` moves the outs to the ins and sets %sp from the old
 * window; every `restore` brings the caller's ins back (its %sp is the
 * callee's %fp); a `return` jumps to its target after its delay slot. */
static int on_event(void *ctx, const tc_event *ev, tc_error *err) {
  window_check *w = ctx;
  (void)err;
  if (ev->kind != TC_EV_INSN)
    return 0;
  const tc_insn_event *e = &ev->u.insn;
  w->insns++;
  if (e->size != 4 || !e->state_before || !e->state_after)
    return 0;
  uint32_t x = word_of(e);
  uint32_t op = x >> 30, op3 = (x >> 19) & 0x3f;
  const tc_arch *a = w->arch;
  if (op != 2)
    return 0;
  uint64_t sp0 = tc_state_get(a, e->state_before, w->sp);
  uint64_t sp1 = tc_state_get(a, e->state_after, w->sp);
  if (op3 == 0x3c) { /* save %sp, -N, %sp */
    w->saves++;
    int64_t simm = (int64_t)((x & 0x1fff) ^ 0x1000) - 0x1000;
    if ((x >> 13 & 1) && ((x >> 14) & 31) == 14 && ((x >> 25) & 31) == 14 &&
        sp1 != sp0 + (uint64_t)simm)
      w->bad++;
    if (tc_state_get(a, e->state_after, w->i7) !=
            tc_state_get(a, e->state_before, w->o7) ||
        tc_state_get(a, e->state_after, w->i6) != sp0 ||
        tc_state_get(a, e->state_after, w->i0) !=
            tc_state_get(a, e->state_before, w->o0))
      w->bad++;
  } else if (op3 == 0x3d || op3 == 0x39) {
    if (op3 == 0x3d)
      w->restores++;
    else
      w->returns++;
    /* the caller's %sp is the callee's %fp */
    if (sp1 != tc_state_get(a, e->state_before, w->i6))
      w->bad++;
  }
  return 0;
}

static void test_window_effects(void) {
  if (tu_expect_refusal(tu_guest("windows-sparc64")))
    return;
  const char *tct = tu_tmp("windows-sparc64.tct");
  char *out = NULL;
  int st = tu_runf(&out, 1, "%s record -q -o %s -- %s", TC_CLI, tct,
                   tu_guest("windows-sparc64"));
  CU_ASSERT_EQUAL_FATAL(st, 0);
  free(out);
  window_check w = {.arch = tc_arch_by_id(TC_ARCH_SPARC64)};
  CU_ASSERT_PTR_NOT_NULL_FATAL(w.arch);
  w.sp = tc_arch_reg_index(w.arch, "sp");
  w.o7 = tc_arch_reg_index(w.arch, "o7");
  w.i6 = tc_arch_reg_index(w.arch, "fp");
  w.i7 = tc_arch_reg_index(w.arch, "i7");
  w.o0 = tc_arch_reg_index(w.arch, "o0");
  w.i0 = tc_arch_reg_index(w.arch, "i0");
  tc_error err = {{0}};
  CU_ASSERT_EQUAL(tc_read_trace(tct, NULL, on_event, &w, &err), 0);
  CU_ASSERT(w.insns > 3000);
  CU_ASSERT(w.saves > 200);   /* 5 recursions 40+ deep, and more */
  CU_ASSERT(w.restores > 30); /* `ret; restore` */
  CU_ASSERT(w.returns > 200);
  CU_ASSERT_EQUAL(w.bad, 0);
}

/* tct, UCIR, BAP frames and drcov read back what was recorded; the
 * formats that cannot hold sparc64 are skipped with a reason. */
static void test_verify(void) {
  char *out = NULL;
  int st;
  if (!tu_expect_refusal(tu_guest("windows-sparc64"))) {
    st = tu_runf(&out, 1, "%s verify -f tct,ucir,bap,drcov -o %s -- %s 2>&1",
                 TC_CLI, tu_tmp("verify-sparc64"), tu_guest("windows-sparc64"));
    const char *t = out ? out : "";
    if (st != 0)
      fprintf(stderr, "\nverify: %s\n", t);
    CU_ASSERT_EQUAL(st, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(t, "ucir   ok"));
    CU_ASSERT_PTR_NOT_NULL(strstr(t, "bap    ok"));
    CU_ASSERT_PTR_NOT_NULL(strstr(t, "drcov  ok"));
    free(out);
  }
  /* trac is refused (after the engine's own refusal, where it has one) */
  st = tu_runf(&out, 1, "cd '%s' && %s record -f trac -o trac-sparc64 -- %s",
               tu_tmpdir(), TC_CLI, tu_guest("hello-sparc64"));
  CU_ASSERT_NOT_EQUAL(st, 0);
  CU_ASSERT(out && strstr(out, tu_engine_refuses(tu_guest("hello-sparc64"))
                                   ? "it cannot record sparc64"
                                   : "not sparc64"));
  free(out);
}

/* The same program and arguments give the same bytes. */
static void test_deterministic(void) {
  if (tu_expect_refusal(tu_guest("errs-sparc64")))
    return;
  char *out = NULL;
  const char *a = tu_tmp("det-a.tct"), *b = tu_tmp("det-b.tct");
  CU_ASSERT_EQUAL(
      tu_runf(&out, 1, "%s record -q -o %s -- %s && %s record -q -o %s -- %s",
              TC_CLI, a, tu_guest("errs-sparc64"), TC_CLI, b,
              tu_guest("errs-sparc64")),
      0);
  free(out);
  CU_ASSERT_TRUE(tu_same_file(a, b));
}

/* Unicorn 2.0.1's sparc64 CPU has PSTATE.PEF clear and nothing can set
 * it: glibc's memset (VIS block stores) cannot run. The recording ends
 * with an error naming it (status 125), not with a signal the program
 * would never get; the trace up to it stays readable. */
static void test_fpu_unavailable(void) {
  if (tu_expect_refusal(tu_guest("glibc-sparc64")))
    return;
  char *out = NULL;
  const char *tct = tu_tmp("glibc-sparc64.tct");
  int st = tu_runf(&out, 1, "%s record -o %s -- %s", TC_CLI, tct,
                   tu_guest("glibc-sparc64"));
  CU_ASSERT_EQUAL(st, 125);
  CU_ASSERT(out && strstr(out, "PSTATE.PEF"));
  CU_ASSERT(out && !strstr(out, "SIGSEGV"));
  free(out);
  CU_ASSERT_EQUAL(tu_runf(&out, 1, "%s info %s", TC_CLI, tct), 0);
  free(out);
}

/* The engine's delay-slot probe (issue 37, emu/engine/probes.c): the
 * engines measured give the measured answer (2.1.2-2.1.4 set nPC to 1
 * after a retl under a code hook), once per process. */
static void test_engine_probe(void) {
  const char *v = tc_engine_version();
  const char *why = tu_engine_refuses(tu_guest("hello-sparc64"));
  if (strcmp(v, "2.0.1") == 0 || strcmp(v, "2.1.1") == 0)
    CU_ASSERT_PTR_NULL(why);
  if (strcmp(v, "2.1.4") == 0) {
    CU_ASSERT_PTR_NOT_NULL_FATAL(why);
    CU_ASSERT_PTR_NOT_NULL(strstr(why, "nPC becomes 1 after retl"));
    CU_ASSERT_PTR_NOT_NULL(strstr(why, "it cannot record sparc64"));
  }
  /* every sparc64 guest gets the same answer */
  CU_ASSERT_EQUAL(tu_engine_refuses(tu_guest("glibc-sparc64")) != NULL,
                  why != NULL);
}

int main(void) {
  static const tu_case cases[] = {{"reference", test_reference},
                                  {"errs_other_arches", test_errs_other_arches},
                                  {"divide_by_zero", test_divide_by_zero},
                                  {"window_effects", test_window_effects},
                                  {"verify", test_verify},
                                  {"deterministic", test_deterministic},
                                  {"fpu_unavailable", test_fpu_unavailable},
                                  {"engine_probe", test_engine_probe},
                                  {NULL, NULL}};
  return tu_run_suite("sparc", cases);
}
