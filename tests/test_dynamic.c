/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Dynamically linked programs (issue 15): the interpreter is loaded from
 * the guest's filesystem view and the programs behave as their reference
 * runs (native, or qemu-user with the same cross sysroot as -L). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "evlog.h"
#include "testutil.h"

/* Host programs: stdout and exit status equal their native runs. */
static void test_host_programs(void) {
  if (tu_ref_default_mode() == TU_REF_QEMU)
    return; /* x86-64 host binaries: only meaningful natively */
  char dir[4200], file[4300], arg[8800];
  snprintf(dir, sizeof dir, "%s", tu_tmp("lsdir"));
  mkdir(dir, 0755);
  for (int i = 0; i < 3; i++) {
    snprintf(file, sizeof file, "%s/file%d.txt", dir, i);
    char text[32];
    snprintf(text, sizeof text, "content %d\n", i);
    CU_ASSERT_EQUAL_FATAL(tu_write_file(file, text, strlen(text)), 0);
  }
  tu_check_reference_prog(TU_REF_AUTO, "true", "/bin/true", "");
  tu_check_reference_prog(TU_REF_AUTO, "ls", "/bin/ls", dir);
  snprintf(arg, sizeof arg, "%s/file0.txt %s/file2.txt", dir, dir);
  tu_check_reference_prog(TU_REF_AUTO, "sha256sum", "/usr/bin/sha256sum", arg);
  tu_check_reference(TU_REF_AUTO, "dyn64", "one");
}

/* The loader's work is visible in the trace: execution starts in ld.so,
 * whose map is named, and libc is mapped by the guest's own mmap. */
static void test_trace_shape(void) {
  tu_check_reference(TU_REF_AUTO, "dyn64", "shape");
  char tct[4200];
  snprintf(tct, sizeof tct, "%s.tct", tu_tmp("dyn64"));
  evlog l = {0};
  tc_error err = {{0}};
  CU_ASSERT_EQUAL_FATAL(evlog_read(&l, tct, &err), 0);
  uint64_t first_pc = 0;
  int ld_map = 0, libc_map = 0, entry_in_ld = 0;
  for (size_t i = 0; i < l.n; i++) {
    const tc_event *e = &l.ev[i];
    if (e->kind == TC_EV_INSN && !first_pc)
      first_pc = e->u.insn.pc;
    if (e->kind == TC_EV_MAP && strstr(e->u.map.name, "ld-linux"))
      ld_map = 1;
    if (e->kind == TC_EV_MAP && strstr(e->u.map.name, "libc.so"))
      libc_map = 1;
  }
  for (size_t i = 0; i < l.n; i++) {
    const tc_map_event *m = &l.ev[i].u.map;
    if (l.ev[i].kind == TC_EV_MAP && strstr(m->name, "ld-linux") &&
        first_pc >= m->addr && first_pc < m->addr + m->size)
      entry_in_ld = 1;
  }
  CU_ASSERT(ld_map && libc_map && entry_in_ld);
  evlog_free(&l);
}

/* Two recordings of a dynamic program are byte-identical, and every
 * readable format verifies against the lossless one. */
static void test_deterministic_and_verified(void) {
  char *out = NULL, a[4200], b[4200];
  for (int i = 0; i < 2; i++) {
    CU_ASSERT_EQUAL(tu_run_merge(&out, TC_CLI, "record", "-q", "-f", "tct",
                                 "-o", tu_tmp(i ? "det-b" : "det-a"), "--",
                                 tu_guest("dyn64"), "det", NULL),
                    3);
    free(out);
  }
  snprintf(a, sizeof a, "%s.tct", tu_tmp("det-a"));
  snprintf(b, sizeof b, "%s.tct", tu_tmp("det-b"));
  CU_ASSERT(tu_same_file(a, b));
  /* rvn and bap too: file mappings over older ones (ld.so's libc) */
  int st = tu_run_merge(&out, TC_CLI, "verify", "-q", "-f",
                        "trac,tfile,ucir,rvn,bap", "--", tu_guest("dyn64"), "v",
                        NULL);
  CU_ASSERT_EQUAL(st, 0);
  if (st != 0)
    fprintf(stderr, "\nverify: %s\n", out ? out : "");
  free(out);
}

/* Cross-built dynamic programs with Debian's cross sysroot as --root,
 * against qemu-user with the same sysroot as -L. */
static void cross(const char *guest, const char *qemu, const char *root) {
  char cmd[9000], *ref = NULL, *emu = NULL;
  if (access(root, F_OK) != 0) {
    fprintf(stderr, "\n%s: no sysroot %s\n", guest, root);
    CU_FAIL("cross sysroot missing (scripts/setup-debian.sh installs it)");
    return;
  }
  if (tu_expect_refusal(tu_guest(guest)))
    return;
  snprintf(cmd, sizeof cmd, "%s -L %s %s abc", qemu, root, tu_guest(guest));
  int rs = tu_run(cmd, &ref, 0);
  snprintf(cmd, sizeof cmd, "%s record -q -f tct --root %s -o %s -- %s abc",
           TC_CLI, root, tu_tmp(guest), tu_guest(guest));
  int es = tu_run(cmd, &emu, 0);
  CU_ASSERT_EQUAL(rs, 3); /* the reference run started and ran */
  CU_ASSERT_EQUAL(es, rs);
  CU_ASSERT_PTR_NOT_NULL_FATAL(ref);
  CU_ASSERT_PTR_NOT_NULL_FATAL(emu);
  CU_ASSERT_STRING_EQUAL(emu, ref);
  CU_ASSERT_PTR_NOT_NULL(strstr(ref, "dynamic abc with 2 args"));
  free(ref);
  free(emu);
}

static void test_cross_arm64(void) {
  cross("dyn-arm64", "qemu-aarch64-static", "/usr/aarch64-linux-gnu");
}
static void test_cross_armhf(void) {
  cross("dyn-armhf", "qemu-arm-static", "/usr/arm-linux-gnueabihf");
}
static void test_cross_mipsel(void) {
  cross("dyn-mipsel", "qemu-mipsel-static", "/usr/mipsel-linux-gnu");
}
static void test_cross_i386(void) {
  cross("dyn32", "qemu-i386-static", "/usr/i686-linux-gnu");
}

/* A dynamic program whose interpreter is missing: a clear error. */
static void test_missing_interpreter(void) {
  char *out = NULL, empty[4200];
  snprintf(empty, sizeof empty, "%s", tu_tmp("emptyroot"));
  mkdir(empty, 0755);
  int st =
      tu_run_merge(&out, TC_CLI, "record", "-q", "-f", "tct", "--root", empty,
                   "-o", tu_tmp("noint"), "--", tu_guest("dyn64"), NULL);
  CU_ASSERT(st != 0 && st != 3);
  CU_ASSERT_PTR_NOT_NULL(strstr(out ? out : "", "interpreter"));
  free(out);
}

int main(void) {
  static const tu_case cases[] = {
      {"host /bin/true, ls, sha256sum, dyn64 = native", test_host_programs},
      {"trace starts in ld.so, libc mapped", test_trace_shape},
      {"deterministic, verified", test_deterministic_and_verified},
      {"arm64 dynamic, cross sysroot = qemu -L", test_cross_arm64},
      {"armhf dynamic, cross sysroot = qemu -L", test_cross_armhf},
      {"mipsel dynamic, cross sysroot = qemu -L", test_cross_mipsel},
      {"i386 dynamic, cross sysroot = qemu -L", test_cross_i386},
      {"missing interpreter", test_missing_interpreter},
      {NULL, NULL}};
  return tu_run_suite("dynamic", cases);
}
