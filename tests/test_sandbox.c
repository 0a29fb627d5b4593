/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The guest filesystem view (issue 14): no escape through symlinks, "..",
 * directory fds or /proc, with and without --root. Every case attempts a
 * real escape through the syscall handlers and checks the host. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "emu/engine/emu.h"
#include "emu/linux/linux_sys.h"
#include "testutil.h"
#include "tracecorn/tracecorn.h"

#define S 0x100000ull /* scratch: paths at S, buffers at S + 0x1000.. */
#define BUF (S + 0x4000)

static char root[4200];   /* the --root directory */
static char secret[4200]; /* a host file outside the root */

static tc_emu *mk_root(const char *fs_root) {
  tc_options o;
  tc_options_init(&o);
  o.quiet = 1;
  o.fs_root = fs_root;
  o.cwd = fs_root ? "/" : NULL;
  tc_error err;
  tc_emu *e = tc_linux_emu_new(tc_arch_by_id(TC_ARCH_X86_64), &o, &err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(e);
  CU_ASSERT_EQUAL_FATAL(
      tc_emu_map(e, S, 0x10000, TC_PROT_READ | TC_PROT_WRITE, "s", 0), 0);
  return e;
}

static void rm(tc_emu *e) {
  tc_linux_forget(e);
  tc_emu_free(e);
}

static int64_t sc(tc_emu *e, const char *name, uint64_t a0, uint64_t a1,
                  uint64_t a2, uint64_t a3, uint64_t a4) {
  const tc_syscall_abi *abi = &e->arch->sys;
  uint32_t nr = 0;
  for (size_t i = 0; i < abi->nnames; i++)
    if (strcmp(abi->names[i].name, name) == 0)
      nr = abi->names[i].nr;
  CU_ASSERT_FATAL(nr != 0 || strcmp(name, "read") == 0);
  uint64_t a[5] = {a0, a1, a2, a3, a4};
  tc_emu_set_reg(e, abi->nr_reg, nr);
  for (int i = 0; i < 5; i++)
    tc_emu_set_reg(e, abi->arg_regs[i], a[i]);
  tc_linux_syscall(e);
  return (int64_t)tc_emu_reg(e, abi->ret_reg);
}
#define SC(e, n, ...) sc_(e, n, __VA_ARGS__, 0, 0, 0, 0, 0)
#define sc_(e, n, a, b, c, d, f, ...)                                          \
  sc(e, n, (uint64_t)(a), (uint64_t)(b), (uint64_t)(c), (uint64_t)(d),         \
     (uint64_t)(f))

/* Puts a path at S (or S + off) and returns its address. */
__attribute__((format(printf, 2, 3))) static uint64_t P(tc_emu *e,
                                                        const char *fmt, ...) {
  char p[8192];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(p, sizeof p, fmt, ap);
  va_end(ap);
  CU_ASSERT_EQUAL_FATAL(tc_emu_write(e, S, p, strlen(p) + 1), 0);
  return S;
}
static uint64_t P2(tc_emu *e, const char *p) {
  CU_ASSERT_EQUAL_FATAL(tc_emu_write(e, S + 0x2000, p, strlen(p) + 1), 0);
  return S + 0x2000;
}

/* Opens a guest path read-only and returns its first bytes ("" if none). */
static const char *slurp(tc_emu *e, uint64_t path, char *out, size_t max) {
  out[0] = 0;
  int64_t fd = SC(e, "open", path, O_RDONLY, 0);
  if (fd < 0)
    return out;
  int64_t n = SC(e, "read", fd, BUF, max - 1);
  if (n > 0 && tc_emu_read(e, BUF, out, (size_t)n) == 0)
    out[n] = 0;
  SC(e, "close", fd);
  return out;
}

static const char *rd_link(tc_emu *e, uint64_t path, char *out) {
  out[0] = 0;
  int64_t n = SC(e, "readlink", path, BUF, 255);
  if (n >= 0 && tc_emu_read(e, BUF, out, (size_t)n) == 0)
    out[n] = 0;
  return n < 0 ? "(error)" : out;
}

static int host_exists(const char *p) {
  struct stat st;
  return lstat(p, &st) == 0;
}

static void mkfile(const char *dir, const char *name, const char *text) {
  char p[8400];
  snprintf(p, sizeof p, "%s/%s", dir, name);
  CU_ASSERT_EQUAL_FATAL(tu_write_file(p, text, strlen(text)), 0);
}

static void mklink(const char *target, const char *dir, const char *name) {
  char p[8400];
  snprintf(p, sizeof p, "%s/%s", dir, name);
  unlink(p);
  CU_ASSERT_EQUAL_FATAL(symlink(target, p), 0);
}

/* R/{etc/hosts, tmp/, sub/dir/, esc -> /, rel -> ../../.., loop -> loop,
 * dang -> <outside>/made-by-dang, host -> <the host dir of secret>}. */
static void setup(void) {
  if (root[0])
    return;
  snprintf(root, sizeof root, "%s", tu_tmp("sbroot"));
  snprintf(secret, sizeof secret, "%s", tu_tmp("secret.txt"));
  CU_ASSERT_EQUAL_FATAL(tu_write_file(secret, "HOST SECRET", 11), 0);
  char d[8400];
  mkdir(root, 0755);
  snprintf(d, sizeof d, "%s/etc", root);
  mkdir(d, 0755);
  snprintf(d, sizeof d, "%s/tmp", root);
  mkdir(d, 0755);
  snprintf(d, sizeof d, "%s/sub", root);
  mkdir(d, 0755);
  snprintf(d, sizeof d, "%s/sub/dir", root);
  mkdir(d, 0755);
  mkfile(root, "etc/hosts", "in root");
  mklink("/", root, "esc");
  mklink("../../..", root, "rel");
  mklink("loop", root, "loop");
  mklink(tu_tmpdir(), root, "host");
  snprintf(d, sizeof d, "%s/made-by-dang", tu_tmpdir());
  mklink(d, root, "dang");
  snprintf(d, sizeof d, "../../../../../../../../..%s", secret);
  mklink(d, root, "sub/up");
}

/* ------------------------------------------------------------ with --root */

static void test_root_symlinks(void) {
  setup();
  tc_emu *e = mk_root(root);
  char buf[4096];
  /* The link to "/" is the guest root: host files are not reachable. */
  CU_ASSERT_STRING_EQUAL(slurp(e, P(e, "/esc/etc/hosts"), buf, 64), "in root");
  CU_ASSERT_STRING_EQUAL(slurp(e, P(e, "/rel/etc/hosts"), buf, 64), "in root");
  CU_ASSERT_STRING_EQUAL(slurp(e, P(e, "/rel/rel/esc/rel/etc/hosts"), buf, 64),
                         "in root");
  CU_ASSERT_EQUAL(SC(e, "open", P(e, "/esc%s", secret), O_RDONLY, 0), -ENOENT);
  CU_ASSERT_EQUAL(SC(e, "open", P(e, "/rel%s", secret), O_RDONLY, 0), -ENOENT);
  CU_ASSERT_EQUAL(SC(e, "open", P(e, "/host/secret.txt"), O_RDONLY, 0),
                  -ENOENT);
  CU_ASSERT_EQUAL(SC(e, "open", P(e, "/sub/up"), O_RDONLY, 0), -ENOENT);
  CU_ASSERT_EQUAL(SC(e, "open", P(e, "/esc/etc/shadow"), O_RDONLY, 0), -ENOENT);
  CU_ASSERT_EQUAL(SC(e, "open", P(e, "/loop/x"), O_RDONLY, 0), -ELOOP);
  CU_ASSERT_EQUAL(SC(e, "open", P(e, "/esc"), O_RDONLY | O_NOFOLLOW, 0),
                  -ELOOP);
  /* stat / lstat / access / readlink through the links. */
  CU_ASSERT_EQUAL(SC(e, "stat", P(e, "/esc%s", secret), BUF), -ENOENT);
  CU_ASSERT_EQUAL(SC(e, "access", P(e, "/rel%s", secret), R_OK), -ENOENT);
  CU_ASSERT_EQUAL(SC(e, "stat", P(e, "/esc/etc/hosts"), BUF), 0);
  uint64_t size = 0;
  tc_emu_read(e, BUF + 48, &size, 8);
  CU_ASSERT_EQUAL(size, 7);
  CU_ASSERT_EQUAL(SC(e, "lstat", P(e, "/esc"), BUF), 0);
  uint32_t mode = 0;
  tc_emu_read(e, BUF + 24, &mode, 4);
  CU_ASSERT_TRUE(S_ISLNK(mode));
  CU_ASSERT_STRING_EQUAL(rd_link(e, P(e, "/esc"), buf), "/");
  CU_ASSERT_STRING_EQUAL(rd_link(e, P(e, "/rel"), buf), "../../..");
  /* ".." beyond the root stays at the root. */
  CU_ASSERT_STRING_EQUAL(slurp(e, P(e, "/../../../../etc/hosts"), buf, 64),
                         "in root");
  CU_ASSERT_EQUAL(SC(e, "open", P(e, "/../../../../..%s", secret), O_RDONLY, 0),
                  -ENOENT);
  /* getdents of /esc lists the root, not the host's "/". */
  int64_t dfd = SC(e, "open", P(e, "/esc/"), O_RDONLY | O_DIRECTORY, 0);
  CU_ASSERT_FATAL(dfd >= 0);
  int64_t n = SC(e, "getdents64", dfd, BUF, 4096);
  CU_ASSERT_TRUE(n > 0);
  char dents[4096];
  memset(dents, 0, sizeof dents);
  tc_emu_read(e, BUF, dents, n > 0 ? (size_t)n : 0);
  int saw_sub = 0, saw_usr = 0;
  for (int64_t pos = 0; pos + 19 < n;) {
    uint16_t reclen;
    memcpy(&reclen, dents + pos + 16, 2);
    saw_sub |= strcmp(dents + pos + 19, "sub") == 0;
    saw_usr |= strcmp(dents + pos + 19, "usr") == 0;
    pos += reclen ? reclen : n;
  }
  CU_ASSERT_TRUE(saw_sub);
  CU_ASSERT_FALSE(saw_usr);
  rm(e);
}

static void test_root_changes(void) {
  setup();
  tc_emu *e = mk_root(root);
  char host[8400], buf[8400];
  /* creat through the link to "/" lands inside the root. */
  snprintf(host, sizeof host, "%s/tmp/created", root);
  unlink(host);
  int64_t fd = SC(e, "open", P(e, "/esc/tmp/created"),
                  O_CREAT | O_WRONLY | O_TRUNC, 0644);
  CU_ASSERT_TRUE(fd >= 0);
  CU_ASSERT_TRUE(host_exists(host));
  /* ... and never outside it. */
  snprintf(host, sizeof host, "%s", tu_tmp("escaped"));
  unlink(host);
  CU_ASSERT_EQUAL(SC(e, "open", P(e, "/esc%s", host), O_CREAT | O_WRONLY, 0644),
                  -ENOENT);
  CU_ASSERT_EQUAL(SC(e, "open", P(e, "/rel%s", host), O_CREAT | O_WRONLY, 0644),
                  -ENOENT);
  CU_ASSERT_EQUAL(SC(e, "mkdir", P(e, "/esc%s", host), 0755), -ENOENT);
  CU_ASSERT_EQUAL(SC(e, "rename", P(e, "/esc/tmp/created"),
                     P2(e, strcat(strcpy(buf, "/rel"), "/../escaped"))),
                  0); /* "/../escaped" is the root's /escaped */
  snprintf(buf, sizeof buf, "%s/escaped", root);
  CU_ASSERT_TRUE(host_exists(buf));
  unlink(buf);
  CU_ASSERT_FALSE(host_exists(host));
  /* A dangling link with an absolute target is re-rooted: O_CREAT through
   * it cannot make the host file. */
  snprintf(host, sizeof host, "%s/made-by-dang", tu_tmpdir());
  unlink(host);
  CU_ASSERT_EQUAL(SC(e, "open", P(e, "/dang"), O_CREAT | O_WRONLY, 0644),
                  -ENOENT);
  CU_ASSERT_FALSE(host_exists(host));
  /* O_EXCL never follows the last component (EEXIST, as on Linux). */
  CU_ASSERT_EQUAL(
      SC(e, "open", P(e, "/dang"), O_CREAT | O_EXCL | O_WRONLY, 0644), -EEXIST);
  CU_ASSERT_FALSE(host_exists(host));
  /* unlink / rename / rmdir of host files through the links. */
  CU_ASSERT_EQUAL(SC(e, "unlink", P(e, "/esc%s", secret)), -ENOENT);
  CU_ASSERT_EQUAL(SC(e, "unlink", P(e, "/rel%s", secret)), -ENOENT);
  CU_ASSERT_EQUAL(SC(e, "rename", P(e, "/rel%s", secret), P2(e, "/stolen")),
                  -ENOENT);
  CU_ASSERT_TRUE(host_exists(secret));
  /* symlink made by the guest: its text is kept as given and resolved in
   * the guest's view, so one to "/" or "../../.." leads to the root. */
  CU_ASSERT_EQUAL(SC(e, "symlink", P(e, "/"), P2(e, "/tmp/gesc")), 0);
  CU_ASSERT_EQUAL(SC(e, "symlink", P(e, "../../../.."), P2(e, "/tmp/grel")), 0);
  CU_ASSERT_EQUAL(SC(e, "symlink", P(e, "x"), P2(e, "/tmp/gesc")), -EEXIST);
  CU_ASSERT_EQUAL(SC(e, "symlink", P(e, "x"), P2(e, "/nodir/l")), -ENOENT);
  CU_ASSERT_STRING_EQUAL(slurp(e, P(e, "/tmp/gesc/etc/hosts"), buf, 64),
                         "in root");
  CU_ASSERT_STRING_EQUAL(slurp(e, P(e, "/tmp/grel/etc/hosts"), buf, 64),
                         "in root");
  CU_ASSERT_EQUAL(SC(e, "open", P(e, "/tmp/gesc%s", secret), O_RDONLY, 0),
                  -ENOENT);
  CU_ASSERT_EQUAL(SC(e, "open", P(e, "/tmp/grel%s", secret), O_RDONLY, 0),
                  -ENOENT);
  snprintf(buf, sizeof buf, "%s/tmp/gesc", root);
  char text[64] = {0};
  CU_ASSERT_EQUAL(readlink(buf, text, sizeof text - 1), 1);
  CU_ASSERT_STRING_EQUAL(text, "/");
  unlink(buf);
  snprintf(buf, sizeof buf, "%s/tmp/grel", root);
  unlink(buf);
  /* unlink of the link removes the link, not its target. */
  mklink("/etc", root, "tmp/l");
  CU_ASSERT_EQUAL(SC(e, "unlink", P(e, "/tmp/l")), 0);
  snprintf(buf, sizeof buf, "%s/etc/hosts", root);
  CU_ASSERT_TRUE(host_exists(buf));
  /* chdir through the links, then relative paths. */
  CU_ASSERT_EQUAL(SC(e, "chdir", P(e, "/esc")), 0);
  CU_ASSERT_STRING_EQUAL(e->cwd, "/");
  CU_ASSERT_EQUAL(SC(e, "chdir", P(e, "rel/sub")), 0);
  CU_ASSERT_STRING_EQUAL(e->cwd, "/sub");
  CU_ASSERT_EQUAL(SC(e, "chdir", P(e, "../../../..")), 0);
  CU_ASSERT_STRING_EQUAL(e->cwd, "/");
  CU_ASSERT_STRING_EQUAL(slurp(e, P(e, "etc/hosts"), buf, 64), "in root");
  CU_ASSERT_EQUAL(SC(e, "open", P(e, "../../../../..%s", secret), O_RDONLY, 0),
                  -ENOENT);
  snprintf(host, sizeof host, "%s", tu_tmp("escaped2"));
  CU_ASSERT_EQUAL(
      SC(e, "open", P(e, "esc/../..%s", host), O_CREAT | O_WRONLY, 0644),
      -ENOENT);
  CU_ASSERT_FALSE(host_exists(host));
  /* dirfd-relative lookups. */
  int64_t dfd = SC(e, "open", P(e, "/sub/dir"), O_RDONLY | O_DIRECTORY, 0);
  CU_ASSERT_FATAL(dfd >= 0);
  CU_ASSERT_EQUAL(
      SC(e, "openat", dfd, P(e, "../../../..%s", secret), O_RDONLY, 0),
      -ENOENT);
  CU_ASSERT_EQUAL(
      SC(e, "openat", dfd, P(e, "../../esc%s", secret), O_RDONLY, 0), -ENOENT);
  int64_t f2 = SC(e, "openat", dfd, P(e, "../../rel/etc/hosts"), O_RDONLY, 0);
  CU_ASSERT_TRUE(f2 >= 0);
  CU_ASSERT_EQUAL(SC(e, "unlinkat", dfd, P(e, "../../rel%s", secret), 0),
                  -ENOENT);
  CU_ASSERT_EQUAL(SC(e, "mkdirat", dfd, P(e, "../../esc%s", host), 0755),
                  -ENOENT);
  CU_ASSERT_EQUAL(SC(e, "newfstatat", dfd, P(e, "../up"), BUF, 0), -ENOENT);
  CU_ASSERT_TRUE(host_exists(secret));
  CU_ASSERT_FALSE(host_exists(host));
  rm(e);
}

static void test_root_proc_self(void) {
  setup();
  char prog[8400], buf[256];
  snprintf(prog, sizeof prog, "%s/sub/prog", root);
  CU_ASSERT_EQUAL_FATAL(tu_write_file(prog, "ELF", 3), 0);
  tc_emu *e = mk_root(root);
  /* The program given by a relative host path: /proc/self/exe is still
   * the absolute guest path (glibc's _dl_get_origin asserts it). */
  char host[4096];
  CU_ASSERT_PTR_NOT_NULL_FATAL(realpath(prog, host));
  int exe = open(prog, O_RDONLY);
  CU_ASSERT_FATAL(exe >= 0);
  CU_ASSERT_EQUAL(tc_emu_set_exe(e, exe, host), 0);
  close(exe);
  snprintf(e->exe_guest_path, sizeof e->exe_guest_path, "sbroot/sub/prog");
  CU_ASSERT_STRING_EQUAL(rd_link(e, P(e, "/proc/self/exe"), buf), "/sub/prog");
  CU_ASSERT_STRING_EQUAL(rd_link(e, P(e, "/proc/1000/exe"), buf), "/sub/prog");
  CU_ASSERT_STRING_EQUAL(slurp(e, P(e, "/proc/self/exe"), buf, 64), "ELF");
  CU_ASSERT_STRING_EQUAL(rd_link(e, P(e, "/proc/self"), buf), "1000");
  /* cwd, root and fd/N are guest paths; following them stays inside. */
  CU_ASSERT_EQUAL(SC(e, "chdir", P(e, "/sub")), 0);
  CU_ASSERT_STRING_EQUAL(rd_link(e, P(e, "/proc/self/cwd"), buf), "/sub");
  CU_ASSERT_STRING_EQUAL(rd_link(e, P(e, "/proc/self/root"), buf), "/");
  CU_ASSERT_STRING_EQUAL(slurp(e, P(e, "/proc/self/cwd/../etc/hosts"), buf, 64),
                         "in root");
  CU_ASSERT_EQUAL(
      SC(e, "open", P(e, "/proc/self/root/../..%s", secret), O_RDONLY, 0),
      -ENOENT);
  int64_t fd = SC(e, "open", P(e, "/etc/hosts"), O_RDONLY, 0);
  CU_ASSERT_FATAL(fd >= 0);
  char fdp[64];
  snprintf(fdp, sizeof fdp, "/proc/self/fd/%d", (int)fd);
  CU_ASSERT_STRING_EQUAL(rd_link(e, P(e, "%s", fdp), buf), "/etc/hosts");
  CU_ASSERT_STRING_EQUAL(slurp(e, P(e, "%s", fdp), buf, 64), "in root");
  /* maps: the guest's own regions in Linux's layout (the name column at
   * 25 + 6 * 8), read-only; nothing of tracecorn's host mappings. */
  char want[256];
  snprintf(want, sizeof want, "%-73s%s\n",
           "00100000-00110000 rw-p 00000000 00:00 1", "s");
  CU_ASSERT_STRING_EQUAL(slurp(e, P(e, "/proc/self/maps"), buf, sizeof buf),
                         want);
  CU_ASSERT_EQUAL(SC(e, "open", P(e, "/proc/self/maps"), O_WRONLY, 0), -EACCES);
  CU_ASSERT_EQUAL(SC(e, "open", P(e, "/proc/self/maps/x"), O_RDONLY, 0),
                  -ENOTDIR);
  rm(e);
}

/* ------------------------------------------------------ without --root */

static void test_host_proc(void) {
  setup();
  tc_emu *e = mk_root(NULL);
  char buf[256], pid[32];
  snprintf(pid, sizeof pid, "%d", (int)getpid());
  snprintf(e->exe_host_path, sizeof e->exe_host_path, "/usr/bin/true");
  snprintf(e->exe_guest_path, sizeof e->exe_guest_path, "/usr/bin/true");
  CU_ASSERT_STRING_EQUAL(rd_link(e, P(e, "/proc/self/exe"), buf),
                         "/usr/bin/true");
  CU_ASSERT_STRING_EQUAL(rd_link(e, P(e, "/proc/self"), buf), "1000");
  /* tracecorn's own pid: nothing under /proc names it. */
  CU_ASSERT_EQUAL(SC(e, "open", P(e, "/proc/%s/maps", pid), O_RDONLY, 0),
                  -ENOENT);
  CU_ASSERT_EQUAL(SC(e, "open", P(e, "/proc/%s/comm", pid), O_RDONLY, 0),
                  -ENOENT);
  CU_ASSERT_EQUAL(SC(e, "stat", P(e, "/proc/%s", pid), BUF), -ENOENT);
  CU_ASSERT_EQUAL(SC(e, "chdir", P(e, "/proc/%s", pid)), -ENOENT);
  CU_ASSERT_EQUAL(SC(e, "open", P(e, "/proc/1/environ"), O_RDONLY, 0), -ENOENT);
  /* /proc/self/maps is the guest's own map, never tracecorn's. */
  CU_ASSERT_PTR_NULL(
      strstr(slurp(e, P(e, "/proc/self/maps"), buf, sizeof buf), "tracecorn"));
  CU_ASSERT_PTR_NOT_NULL(strstr(buf, "00100000-00110000 rw-p"));
  CU_ASSERT_EQUAL(SC(e, "open", P(e, "/proc/thread-self/status"), O_RDONLY, 0),
                  -ENOENT);
  CU_ASSERT_EQUAL(SC(e, "open", P(e, "/proc/loadavg"), O_RDONLY, 0), -ENOENT);
  CU_ASSERT_EQUAL(
      SC(e, "open", P(e, "/proc/sys/kernel/ns_last_pid"), O_RDONLY, 0),
      -ENOENT);
  CU_ASSERT_EQUAL(SC(e, "open", P(e, "/proc/mounts"), O_RDONLY, 0), -ENOENT);
  int64_t cfd = SC(e, "open", P(e, "/proc/cpuinfo"), O_RDONLY, 0);
  CU_ASSERT_TRUE(cfd >= 0);
  /* ... not through a symlink to /proc or a dirfd of it either. */
  mklink("/proc", tu_tmpdir(), "plink");
  CU_ASSERT_EQUAL(SC(e, "open", P(e, "%s", tu_tmp("plink")),
                     O_RDONLY | O_DIRECTORY, 0) >= 0,
                  1);
  char p[8400];
  snprintf(p, sizeof p, "%s/%s/status", tu_tmp("plink"), pid);
  CU_ASSERT_EQUAL(SC(e, "open", P(e, "%s", p), O_RDONLY, 0), -ENOENT);
  int64_t pfd = SC(e, "open", P(e, "/proc"), O_RDONLY | O_DIRECTORY, 0);
  CU_ASSERT_FATAL(pfd >= 0);
  CU_ASSERT_EQUAL(SC(e, "openat", pfd, P(e, "%s/maps", pid), O_RDONLY, 0),
                  -ENOENT);
  CU_ASSERT_EQUAL(SC(e, "openat", pfd, P(e, "self/../%s", pid), O_RDONLY, 0),
                  -ENOENT);
  /* cgroup pid lists would name tracecorn too. */
  if (tu_have("/sys/fs/cgroup/pids/cgroup.procs"))
    CU_ASSERT_EQUAL(
        SC(e, "open", P(e, "/sys/fs/cgroup/pids/cgroup.procs"), O_RDONLY, 0),
        -ENOENT);
  if (tu_have("/sys/fs/cgroup/cgroup.procs"))
    CU_ASSERT_EQUAL(
        SC(e, "open", P(e, "/sys/fs/cgroup/cgroup.procs"), O_RDONLY, 0),
        -ENOENT);
  /* Listing /proc shows no pid at all. */
  int numeric = 0, cpuinfo = 0;
  for (int round = 0; round < 100; round++) {
    int64_t n = SC(e, "getdents64", pfd, BUF, 4096);
    if (n <= 0)
      break;
    char d[4096];
    tc_emu_read(e, BUF, d, (size_t)n);
    for (int64_t pos = 0; pos + 19 < n;) {
      uint16_t reclen;
      memcpy(&reclen, d + pos + 16, 2);
      const char *name = d + pos + 19;
      numeric += name[0] >= '0' && name[0] <= '9';
      cpuinfo += strcmp(name, "cpuinfo") == 0;
      pos += reclen ? reclen : n;
    }
  }
  CU_ASSERT_EQUAL(numeric, 0);
  CU_ASSERT_EQUAL(cpuinfo, 1);
  /* /dev/fd/N is the guest's fd N. */
  int64_t fd = SC(e, "open", P(e, "%s", secret), O_RDONLY, 0);
  CU_ASSERT_FATAL(fd >= 0);
  snprintf(p, sizeof p, "/proc/self/fd/%d", (int)fd);
  CU_ASSERT_STRING_EQUAL(rd_link(e, P(e, "%s", p), buf), secret);
  /* tracecorn's stdout is no host path but a pipe, as fstat says. */
  CU_ASSERT_STRING_EQUAL(rd_link(e, P(e, "/proc/self/fd/1"), buf),
                         "pipe:[4097]");
  int64_t ofd = SC(e, "open", P(e, "/dev/stdout"), O_WRONLY, 0);
  CU_ASSERT_TRUE(ofd >= 0);
  CU_ASSERT_EQUAL(SC(e, "fstat", ofd, BUF), 0);
  CU_ASSERT_EQUAL(SC(e, "stat", P(e, "/dev/stdout"), BUF + 0x200), 0);
  CU_ASSERT_EQUAL(SC(e, "close", ofd), 0);
  snprintf(p, sizeof p, "/dev/fd/%d", (int)fd);
  CU_ASSERT_STRING_EQUAL(slurp(e, P(e, "%s", p), buf, 64), "HOST SECRET");
  CU_ASSERT_EQUAL(SC(e, "stat", P(e, "%s", p), BUF), 0);
  uint64_t size = 0;
  tc_emu_read(e, BUF + 48, &size, 8);
  CU_ASSERT_EQUAL(size, 11);
  rm(e);
}

/* A static glibc program given by a relative path with --root runs to its
 * end (it reads /proc/self/exe and asserts the path is absolute). */
/* Issue 38: a guest execs a copy of itself, then replaces a directory on
 * that copy's path with a symlink leading out of the root on the host.
 * /proc/self/exe still reads, stats and checks the program itself (held by
 * a descriptor), never the host file the old path now names. */
static void test_exe_swap(void) {
  const char *g = tu_guest("escape64");
  CU_ASSERT_FATAL(tu_have(g));
  char host_file[4200], cmd[30000], *out = NULL;
  CU_ASSERT_EQUAL_FATAL(
      tu_run_merge(NULL, "mkdir", "-p", tu_tmp("exeswap-outside/x"), NULL), 0);
  snprintf(host_file, sizeof host_file, "%s", tu_tmp("exeswap-outside/x/prog"));
  CU_ASSERT_EQUAL_FATAL(tu_write_file(host_file, "SECRET host file", 16), 0);
  snprintf(cmd, sizeof cmd,
           "cd %s && rm -rf exeswap && mkdir -p exeswap/bin && "
           "ln -s ../exeswap-outside exeswap/out && "
           "cp %s exeswap/bin/escape && %s record -q -f tct -o exeswap-t "
           "--root exeswap -- exeswap/bin/escape /out",
           tu_tmpdir(), g, TC_CLI);
  int st = tu_run(cmd, &out, 1);
  CU_ASSERT_EQUAL(st, 0);
  CU_ASSERT_PTR_NOT_NULL(out);
  if (out) {
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "read: .ELF..\n"));
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "stat: its own size\n"));
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "access: ok\n"));
    CU_ASSERT_PTR_NULL(strstr(out, "SECRET"));
    if (st || !strstr(out, "read: .ELF"))
      fprintf(stderr, "\n%s\n", out);
  }
  free(out);
  /* nor did the host file's bytes reach the trace */
  size_t n = 0;
  uint8_t *t = tu_read_file(tu_tmp("exeswap-t.tct"), &n);
  CU_ASSERT_PTR_NOT_NULL(t);
  CU_ASSERT(t && !memmem(t, n, "SECRET", 6));
  free(t);
}

/* Issue 38: an output inside the root could be renamed by the guest and a
 * link put in its place (a host file compressed into the trace with -z,
 * the trace written through the link): refused, the default output of
 * `cd DIR && record --root .` included; outside the root it is written. */
static void test_output_in_root(void) {
  char cmd[30000], *out = NULL;
  snprintf(cmd, sizeof cmd,
           "cd %s && rm -rf outroot && mkdir -p outroot/bin && "
           "cp %s outroot/bin/prog && cd outroot && "
           "%s record -q --root . -- bin/prog 2>&1; echo \"rc=$?\"; "
           "%s record -q --root . -o sub/../x -- bin/prog 2>&1; "
           "echo \"rc=$?\"; ls; "
           "%s record -q --root . -o ../outside -- bin/prog 2>&1; "
           "echo \"rc=$?\"; ls ../outside.tct",
           tu_tmpdir(), tu_guest("hello64"), TC_CLI, TC_CLI, TC_CLI);
  tu_run(cmd, &out, 1);
  const char *t = out ? out : "";
  CU_ASSERT_PTR_NOT_NULL(
      strstr(t, "prog.tct: inside the guest's root ., where the guest could "
                "replace it"));
  CU_ASSERT_PTR_NOT_NULL(strstr(t, "rc=125\nbin\n")); /* nothing written */
  CU_ASSERT_PTR_NOT_NULL(strstr(t, "rc=0\n../outside.tct"));
  if (!strstr(t, "rc=0\n../outside.tct"))
    fprintf(stderr, "\n%s\n", t);
  free(out);
}

static void test_glibc_relative_root(void) {
  setup();
  const char *g = tu_guest("glibc64");
  if (!tu_have(g)) {
    CU_FAIL("glibc64 guest not built");
    return;
  }
  char cmd[30000], *out = NULL;
  snprintf(cmd, sizeof cmd,
           "cd %s && mkdir -p sbroot/bin && cp %s sbroot/bin/glibc64 && "
           "%s record -q -f text -o sbglibc -- sbroot/bin/glibc64 2>&1 "
           ">/dev/null; echo \"rc=$?\"; %s record -q -f text -o sbglibc2 "
           "--root sbroot -- sbroot/bin/glibc64 2>&1; echo \"rc=$?\"",
           tu_tmpdir(), g, TC_CLI, TC_CLI);
  tu_run(cmd, &out, 1);
  const char *t = out ? out : "";
  CU_ASSERT_PTR_NULL(strstr(t, "Assertion"));
  CU_ASSERT_PTR_NOT_NULL(strstr(t, "sorted sum:"));
  CU_ASSERT_PTR_NOT_NULL(strstr(t, "rc=7\n"));
  if (!strstr(t, "rc=7\n"))
    fprintf(stderr, "%s\n", t);
  free(out);
  /* The same program (by its absolute host path), told to create a host
   * file through R/esc -> / and R/rel -> ../../..: refused; through the
   * link into R/tmp: made there. */
  char outside[8400], inside[8400];
  snprintf(outside, sizeof outside, "%s", tu_tmp("cli-escape"));
  snprintf(inside, sizeof inside, "%s/tmp/cli-inside", root);
  unlink(outside);
  unlink(inside);
  snprintf(cmd, sizeof cmd,
           "cd %s && for p in /esc%s /rel%s /esc/tmp/cli-inside; do "
           "%s record -q -f text -o sbglibc3 --root sbroot -- "
           "$PWD/sbroot/bin/glibc64 $p 2>&1 | grep -E 'open failed|read back'; "
           "done",
           tu_tmpdir(), outside, outside, TC_CLI);
  out = NULL;
  tu_run(cmd, &out, 1);
  t = out ? out : "";
  CU_ASSERT_PTR_NOT_NULL(strstr(t, "open failed: No such file or directory\n"
                                   "open failed: No such file or directory\n"
                                   "read back: written by the guest\n"));
  CU_ASSERT_FALSE(host_exists(outside));
  CU_ASSERT_TRUE(host_exists(inside));
  free(out);
}

int main(void) {
  static const tu_case cases[] = {
      {"--root: symlinks to / and ../../.., ..", test_root_symlinks},
      {"--root: creat, rename, unlink, chdir, dirfds", test_root_changes},
      {"--root: /proc/self synthesised", test_root_proc_self},
      {"host view: /proc hides tracecorn", test_host_proc},
      {"glibc guest, relative path, --root", test_glibc_relative_root},
      {"--root: /proc/self/exe after its path is swapped out", test_exe_swap},
      {"--root: no output inside the root", test_output_in_root},
      {NULL, NULL},
  };
  return tu_run_suite("sandbox", cases);
}
