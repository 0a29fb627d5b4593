/* SPDX-License-Identifier: GPL-2.0-or-later */
/* strace-style syscall decoding and the dump filters.
 *
 * The reference for decoding is strace itself: the sysmix guests make a
 * varied set of syscalls (paths, open flags, buffers in and out, struct
 * stat, iovecs, mmap flags, signal sets, socket addresses, errors), and
 * `tracecorn strace` of a recording must print what `strace -q` prints for
 * a native run of the same binary, after normalising only what differs
 * between two runs: addresses of 8+ hex digits (stack, mmap results). For
 * arches the host cannot strace, the values come from qemu-user's -strace
 * (mips) and from the cross compiler's kernel headers (arm64, mips). The
 * filters are checked against the full dump of the same trace, and symbol
 * ranges against binutils' nm. */
#include <ctype.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/linux/sysdecode.h"
#include "testutil.h"
#include "tracecorn/tracecorn.h"

/* ---------------------------------------------------------------- helpers */

/* Runs a shell command (printf-style) and returns its stdout (malloc'd,
 * never NULL); *status gets the exit status if status is not NULL. */
__attribute__((format(printf, 2, 3))) static char *sh(int *status,
                                                      const char *fmt, ...) {
  char *cmd = NULL;
  va_list ap;
  va_start(ap, fmt);
  int k = vasprintf(&cmd, fmt, ap);
  va_end(ap);
  char *out = NULL;
  int st = k < 0 ? -1 : tu_run(cmd, &out, 0);
  free(cmd);
  if (status)
    *status = st;
  return out ? out : strdup("");
}

/* Splits text into lines in place; returns the count (max lines). */
static size_t split_lines(char *text, char **lines, size_t max) {
  size_t n = 0;
  for (char *save = NULL, *l = strtok_r(text, "\n", &save); l && n < max;
       l = strtok_r(NULL, "\n", &save))
    lines[n++] = l;
  return n;
}

/* Addresses that legitimately differ between two runs (stack, mmap and
 * heap results): hex numbers of 8 or more digits become 0xADDR. */
static void normalise(char *line) {
  char *w = line;
  for (char *r = line; *r;) {
    if (r[0] == '0' && r[1] == 'x') {
      size_t n = 0;
      while (isxdigit((unsigned char)r[2 + n]))
        n++;
      if (n >= 8) {
        memcpy(w, "0xADDR", 6);
        w += 6;
        r += 2 + n;
        continue;
      }
    }
    *w++ = *r++;
  }
  *w = 0;
}

/* Runs argv in the scratch directory as a native reference: umask 022,
 * no descriptors but 0-2 (a test runner may leak some, which would shift
 * the guest's fd numbers), stdout a pipe (tracecorn shows the guest's
 * stdio as pipes), stderr to err_path (or the pipe). Returns the exit
 * status (128+signal), -1 if it could not run. */
static int run_clean(char *const argv[], const char *err_path) {
  int p[2];
  if (pipe(p) < 0)
    return -1;
  pid_t pid = fork();
  if (pid < 0)
    return -1;
  if (pid == 0) {
    dup2(p[1], 1);
    int e = err_path ? open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0644) : 1;
    dup2(e < 0 ? 1 : e, 2);
    for (int fd = 3; fd < 1024; fd++)
      close(fd);
    umask(022);
    if (chdir(tu_tmpdir()) == 0)
      execvp(argv[0], argv);
    _exit(127);
  }
  close(p[1]);
  char buf[4096];
  while (read(p[0], buf, sizeof buf) > 0)
    ;
  close(p[0]);
  int st;
  if (waitpid(pid, &st, 0) < 0)
    return -1;
  return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* 1 if strace can trace a process here (ptrace may be forbidden). */
static int strace_works(void) {
  static int works = -1;
  if (works < 0) {
    int st;
    free(sh(&st, "strace -q -o /dev/null /bin/true 2>/dev/null"));
    works = st == 0;
    if (!works)
      printf("\n  strace cannot trace here (not installed, or ptrace is "
             "forbidden): strace comparisons skipped\n");
  }
  return works;
}

/* Records guest (in the scratch directory, as the guest's cwd) under
 * prefix; returns the .tct path. */
static const char *record(const char *guest, const char *prefix,
                          const char *extra) {
  static char path[4][4096];
  static int slot;
  char *p = path[slot++ % 4];
  int st;
  free(sh(&st, "cd %s && umask 022 && %s record -q %s -o %s -- %s > %s.out",
          tu_tmpdir(), TC_CLI, extra ? extra : "", prefix, tu_guest(guest),
          prefix));
  snprintf(p, 4096, "%s/%s.tct", tu_tmpdir(), prefix);
  return p;
}

/* -------------------------------------------------- strace comparisons */

/* Compares `tracecorn strace -e trace=LIST` of a recording with strace's
 * decoding of a native run of the same guest, line by line. */
static void compare_native(const char *guest, const char *list) {
  if (!strace_works())
    return;
  int st;
  char native[4200];
  snprintf(native, sizeof native, "%s/%s.native", tu_tmpdir(), guest);
  char trace[2048];
  snprintf(trace, sizeof trace, "trace=%s", list);
  char *argv[] = {
      "strace", "-q", "-o", native, "-e", trace, (char *)tu_guest(guest), NULL};
  run_clean(argv, NULL);
  size_t nlen = 0;
  char *ntext = (char *)tu_read_file(native, &nlen);
  if (!ntext || !strstr(ntext, "+++ exited with 0 +++")) {
    /* e.g. an i386 guest on a kernel without ia32 support */
    printf("\n  %s: no native run to compare (%s)\n", guest,
           ntext ? "it did not run to its end" : "no strace output");
    free(ntext);
    return;
  }
  char prefix[64];
  snprintf(prefix, sizeof prefix, "%s-strace", guest);
  const char *tct = record(guest, prefix, NULL);
  char *ours = sh(&st, "%s strace -e trace=%s %s", TC_CLI, list, tct);
  CU_ASSERT_EQUAL(st, 0);
  /* dump --syscalls-only is the same listing */
  char *dump =
      sh(&st, "%s dump --syscalls-only -e trace=%s %s", TC_CLI, list, tct);
  CU_ASSERT_STRING_EQUAL(dump, ours);
  free(dump);

  char *nl[512], *ol[512];
  size_t nn = split_lines(ntext, nl, 512), no = split_lines(ours, ol, 512);
  /* the native run starts with the execve that tracecorn does not make */
  size_t skip = nn && strncmp(nl[0], "execve(", 7) == 0 ? 1 : 0;
  CU_ASSERT_EQUAL(nn - skip, no);
  size_t same_raw = 0, same = 0, n = no < nn - skip ? no : nn - skip;
  for (size_t i = 0; i < n; i++) {
    char *a = nl[i + skip], *b = ol[i];
    if (strcmp(a, b) == 0) {
      same_raw++;
      same++;
      continue;
    }
    normalise(a);
    normalise(b);
    if (strcmp(a, b) == 0) {
      same++;
      continue;
    }
    printf("\n  %s line %zu differs:\n    strace:    %s\n    tracecorn: %s\n",
           guest, i + 1, a, b);
    CU_FAIL("a syscall line differs from strace's");
  }
  CU_ASSERT(n >= 40); /* the guest makes that many of the listed calls */
  printf("\n  %s: %zu lines, %zu byte-equal to strace, %zu after "
         "normalising addresses\n",
         guest, n, same_raw, same);
  free(ntext);
  free(ours);
}

/* Everyday coreutils calls that tracecorn answered ENOSYS (issue 32's
 * survey: `touch` and `chmod` failed, `install -m` too): utimensat,
 * fchmodat, fchmod, sync; cp's FICLONE (was ENOTTY). Each command runs natively
 * under strace in one directory and recorded in another with the same names:
 * the files end with the same modes and times, and `tracecorn strace` prints
 * strace's lines (TZ=UTC: strace dates its timespecs in the local zone). */
static void test_coreutils_calls(void) {
  static const struct {
    const char *cmd, *calls;
  } runs[] = {
      {"/usr/bin/touch -d @1000000000.25 f", "utimensat"},
      {"/usr/bin/touch -a -d @5 f", "utimensat"},
      {"/usr/bin/touch -m f2", "utimensat"},
      {"/usr/bin/chmod 640 f", "fchmodat"},
      {"/usr/bin/chmod 750 link", "fchmodat"},
      /* install also calls fchmod(4, 0600) under tracecorn, where
       * fsetxattr of its ACL fails as on a file system without xattrs
       * (sys_no_xattr: deliberate); the mode it ends with is compared */
      {"/usr/bin/install -m 604 f2 g", "fchmodat,copy_file_range"},
      {"/usr/bin/sync", "sync"},
      /* cp tries a reflink first (FICLONE: the host file system's answer,
       * EOPNOTSUPP on ext4), then copy_file_range */
      {"/usr/bin/cp f2 h", "ioctl,copy_file_range"},
  };
  const char *sides[2] = {"native", "tracecorn"};
  char *stats[2];
  int st;
  for (int k = 0; k < 2; k++) {
    free(sh(&st,
            "cd %s && rm -rf cu-%s && mkdir cu-%s && cd cu-%s && echo x > f "
            "&& echo y > f2 && ln -s f2 link",
            tu_tmpdir(), sides[k], sides[k], sides[k]));
    CU_ASSERT_EQUAL(st, 0);
  }
  for (size_t i = 0; i < sizeof runs / sizeof runs[0]; i++) {
    char *out =
        sh(&st,
           "cd %s/cu-tracecorn && %s record -q -o rec%zu -- %s "
           "</dev/null && %s strace -e trace=%s rec%zu.tct",
           tu_tmpdir(), TC_CLI, i, runs[i].cmd, TC_CLI, runs[i].calls, i);
    CU_ASSERT_EQUAL(st, 0);
    CU_ASSERT_PTR_NULL(strstr(out, "ENOSYS"));
    if (st != 0 || strstr(out, "ENOSYS"))
      printf("\n  %s: %s\n", runs[i].cmd, out);
    if (strace_works()) {
      /* run_clean: no fd of this process leaks into the native run */
      char script[8800], npath[4200];
      snprintf(npath, sizeof npath, "%s/cu-strace.txt", tu_tmpdir());
      snprintf(script, sizeof script,
               "cd cu-native && TZ=UTC exec strace -q -o %s -e trace=%s %s "
               "</dev/null",
               npath, runs[i].calls, runs[i].cmd);
      char *argv[] = {"sh", "-c", script, NULL};
      run_clean(argv, NULL);
      char *native = sh(NULL, "grep -v '^+++' %s", npath);
      char *ours = strdup(out); /* less strace's +++ lines */
      char *w = ours;
      for (char *l = out; *l;) {
        char *e = strchr(l, '\n');
        size_t n = e ? (size_t)(e - l) + 1 : strlen(l);
        if (strncmp(l, "+++", 3) != 0) {
          memmove(w, l, n);
          w += n;
        }
        l += n;
      }
      *w = 0;
      CU_ASSERT_STRING_EQUAL(native, ours);
      if (strcmp(native, ours) != 0)
        printf("\n  %s:\n    strace:    %s    tracecorn: %s", runs[i].cmd,
               native, ours);
      free(native);
      free(ours);
    } else {
      free(sh(&st, "cd %s/cu-native && %s </dev/null", tu_tmpdir(),
              runs[i].cmd));
    }
    free(out);
  }
  /* f's times were set; g's and f2's are "now" on both sides */
  for (int k = 0; k < 2; k++)
    stats[k] = sh(&st,
                  "cd %s/cu-%s && stat -c '%%n %%a %%X %%Y' f && "
                  "stat -c '%%n %%a' g f2",
                  tu_tmpdir(), sides[k]);
  CU_ASSERT_STRING_EQUAL(stats[0], stats[1]);
  CU_ASSERT_PTR_NOT_NULL(strstr(stats[1], "f 640 5 1000000000\n"));
  CU_ASSERT_PTR_NOT_NULL(strstr(stats[1], "g 604\n"));
  CU_ASSERT_PTR_NOT_NULL(strstr(stats[1], "f2 750\n"));
  printf("\n  native:    %s  tracecorn: %s", stats[0], stats[1]);
  free(stats[0]);
  free(stats[1]);
}

/* What sysmix calls (and strace and tracecorn both trace). Left out:
 * calls whose results differ between an emulated and a native process
 * (rseq, getrandom's random bytes, pids, brk addresses); i386's
 * rt_sigaction too, since glibc sets SA_RESTORER only without a vDSO. */
#define SYSMIX_COMMON                                                          \
  "openat,writev,write,fsync,close,fstat,read,pread64,readv,munmap,"           \
  "mprotect,dup,dup2,dup3,access,faccessat,mkdir,rename,rmdir,getcwd,"         \
  "unlink,pipe2,connect,bind,rt_sigprocmask,clock_nanosleep,umask,"            \
  "exit_group"

static void test_native_x86_64(void) {
  compare_native("sysmix64",
                 SYSMIX_COMMON ",newfstatat,lseek,mmap,fcntl,rt_sigaction,"
                               "setregid,setresuid");
}

static void test_native_i386(void) {
  compare_native("sysmix32", SYSMIX_COMMON
                 ",statx,_llseek,mmap2,fcntl64,setregid32,setresuid32");
}

/* Faults: the signal line and how the process ended. */
static void test_native_faults(void) {
  if (!strace_works())
    return;
  const char *guests[] = {"segv64", "ill64", "div64", "priv64"};
  for (int g = 0; g < 4; g++) {
    int st;
    char native[4200];
    snprintf(native, sizeof native, "%s/%s.native", tu_tmpdir(), guests[g]);
    char *argv[] = {"strace", "-q", "-o", native, (char *)tu_guest(guests[g]),
                    NULL};
    CU_ASSERT_EQUAL(run_clean(argv, NULL), 128 + (g == 1   ? SIGILL
                                                  : g == 2 ? SIGFPE
                                                           : SIGSEGV));
    char *ntext = (char *)tu_read_file(native, NULL);
    const char *tct = record(guests[g], guests[g], NULL);
    char *ours = sh(&st, "%s strace %s", TC_CLI, tct);
    const char *nbody = ntext ? strchr(ntext, '\n') : NULL; /* no execve */
    CU_ASSERT_PTR_NOT_NULL(nbody);
    CU_ASSERT(strstr(ours, "+++ killed by SIG") != NULL);
    if (nbody && strcmp(nbody + 1, ours) != 0) {
      printf("\n  %s:\n  strace:\n%s  tracecorn:\n%s", guests[g], nbody + 1,
             ours);
      CU_FAIL("a fault listing differs from strace's");
    }
    free(ntext);
    free(ours);
  }
}

/* ----------------------------------------------- the decoder's tables */

/* errno and signal names against the host C library's own. */
static void test_names_match_libc(void) {
  const tc_arch *x64 = tc_arch_by_id(TC_ARCH_X86_64);
  int checked = 0;
  for (int e = 1; e <= 133; e++) {
    const char *libc = strerrorname_np(e);
    const char *ours = tc_sysdecode_errname(x64, e);
    if (!libc) /* 41 and 58 are aliases only */
      continue;
    if (!ours || strcmp(ours, libc) != 0)
      printf("\n  errno %d: libc %s, tracecorn %s\n", e, libc,
             ours ? ours : "(none)");
    CU_ASSERT(ours && strcmp(ours, libc) == 0);
    checked++;
  }
  CU_ASSERT(checked >= 130);
  for (int s = 1; s < 32; s++) {
    char want[32];
    snprintf(want, sizeof want, "SIG%s", sigabbrev_np(s));
    if (s == SIGIOT || s == SIGPOLL) /* aliases glibc may name */
      snprintf(want, sizeof want, "%s", s == SIGIOT ? "SIGABRT" : "SIGIO");
    const char *ours = tc_sysdecode_signame(x64, s);
    CU_ASSERT(ours && strcmp(ours, want) == 0);
  }
}

/* Reads NAME=VALUE pairs out of the cross compiler's preprocessor:
 * expressions like (04000000|00010000) are or-ed numbers. */
typedef struct macro {
  char name[48];
  uint64_t value;
  int known;
} macro;

static int cross_macros(const char *cc, const char *header, macro *m, int n) {
  char src[4096];
  size_t off = (size_t)snprintf(src, sizeof src, "#include <%s>\n", header);
  for (int i = 0; i < n; i++)
    off += (size_t)snprintf(src + off, sizeof src - off, "@k%d %s\n", i,
                            m[i].name);
  char path[4200];
  snprintf(path, sizeof path, "%s/macros.c", tu_tmpdir());
  tu_write_file(path, src, off);
  int st;
  char *out = sh(&st, "%s -E -P %s 2>/dev/null", cc, path);
  if (st != 0) {
    free(out);
    return -1;
  }
  for (int i = 0; i < n; i++) {
    char key[64];
    snprintf(key, sizeof key, "@k%d ", i);
    const char *p = strstr(out, key);
    if (!p)
      continue;
    p += strlen(key);
    uint64_t v = 0;
    int ok = 1, any = 0;
    for (; *p && *p != '\n'; p++) {
      if (*p == '(' || *p == ')' || *p == '|' || *p == ' ')
        continue;
      if (!isdigit((unsigned char)*p)) {
        ok = 0; /* an unresolved name */
        break;
      }
      char *end;
      v |= strtoull(p, &end, 0);
      while (*end == 'U' || *end == 'L' || *end == 'u' || *end == 'l')
        end++;
      p = end - 1;
      any = 1;
    }
    m[i].value = v;
    m[i].known = ok && any;
  }
  free(out);
  return 0;
}

/* The decoded flags of every openat and mmap of a recording must be the
 * bits the arch's own kernel headers define, and every errno name must
 * have the number the guest saw. */
static void check_against_headers(const char *guest, const char *cc) {
  if (tu_expect_refusal(tu_guest(guest)))
    return;
  static macro open_m[] = {
      {"O_CREAT", 0, 0},     {"O_EXCL", 0, 0},     {"O_NOCTTY", 0, 0},
      {"O_TRUNC", 0, 0},     {"O_APPEND", 0, 0},   {"O_NONBLOCK", 0, 0},
      {"O_DSYNC", 0, 0},     {"O_DIRECT", 0, 0},   {"O_LARGEFILE", 0, 0},
      {"O_DIRECTORY", 0, 0}, {"O_NOFOLLOW", 0, 0}, {"O_NOATIME", 0, 0},
      {"O_CLOEXEC", 0, 0},   {"O_PATH", 0, 0}};
  static macro map_m[] = {{"MAP_SHARED", 0, 0},    {"MAP_PRIVATE", 0, 0},
                          {"MAP_FIXED", 0, 0},     {"MAP_ANONYMOUS", 0, 0},
                          {"MAP_NORESERVE", 0, 0}, {"MAP_STACK", 0, 0}};
  static macro err_m[] = {
      {"ENOENT", 0, 0},   {"EBADF", 0, 0},  {"EEXIST", 0, 0}, {"EACCES", 0, 0},
      {"ENOTSOCK", 0, 0}, {"ENOSYS", 0, 0}, {"ENOMEM", 0, 0}};
  int no = (int)(sizeof open_m / sizeof open_m[0]),
      nm = (int)(sizeof map_m / sizeof map_m[0]),
      ne = (int)(sizeof err_m / sizeof err_m[0]);
  if (cross_macros(cc, "asm/fcntl.h", open_m, no) < 0 ||
      cross_macros(cc, "asm/mman.h", map_m, nm) < 0 ||
      cross_macros(cc, "asm/errno.h", err_m, ne) < 0) {
    CU_FAIL("the cross compiler's preprocessor did not run");
    return;
  }
  CU_ASSERT(open_m[10].known && map_m[3].known && err_m[0].known);
  char prefix[64];
  snprintf(prefix, sizeof prefix, "%s-hdr", guest);
  const char *tct = record(guest, prefix, NULL);
  int st;
  char *json = sh(&st, "%s dump --json --syscalls-only %s", TC_CLI, tct);
  CU_ASSERT_EQUAL(st, 0);
  int opens = 0, maps = 0, errors = 0;
  char *lines[2048];
  size_t n = split_lines(json, lines, 2048);
  for (size_t i = 0; i < n; i++) {
    const char *l = lines[i];
    const char *name = strstr(l, "\"name\":\"");
    const char *args = strstr(l, "\"args\":[\"");
    const char *ret = strstr(l, "\"ret\":");
    const char *dec = strstr(l, "\"strace\":\"");
    if (!name || !args || !ret || !dec)
      continue;
    name += 8;
    dec += 10;
    uint64_t a[6] = {0};
    const char *p = args;
    for (int k = 0; k < 6 && (p = strstr(p, "\"0x")); k++) {
      char *end;
      a[k] = strtoull(p + 1, &end, 16);
      p = end;
    }
    long long r = strtoll(ret + 6, NULL, 10);
    /* the flags argument's text: the third (openat) or fourth (mmap*)
     * comma-separated field of the decoded call */
    int field = !strncmp(name, "openat\"", 7)  ? 2
                : !strncmp(name, "mmap2\"", 6) ? 3
                : !strncmp(name, "mmap\"", 5)  ? 3
                                               : -1;
    if (field >= 0) {
      const char *f = strchr(dec, '(');
      for (int k = 0; k < field && f; k++)
        f = strstr(f + 1, ", ");
      char text[256] = "";
      if (f)
        sscanf(f + (field ? 2 : 1), "%255[A-Z_|0-9x]", text);
      uint64_t raw = a[field];
      macro *m = field == 2 ? open_m : map_m;
      int cnt = field == 2 ? no : nm;
      /* every header flag that is set must be named, and every named one
       * must be set */
      for (int k = 0; k < cnt; k++) {
        if (!m[k].known || !m[k].value)
          continue;
        char needle[128];
        snprintf(needle, sizeof needle, "|%.48s|", m[k].name);
        char padded[300];
        snprintf(padded, sizeof padded, "|%s|", text);
        int named = strstr(padded, needle) != NULL;
        int set = (raw & m[k].value) == m[k].value;
        if (m[k].value == 3) /* MAP_SHARED_VALIDATE-like overlaps */
          set = (raw & 0xf) == m[k].value;
        if (!strcmp(m[k].name, "MAP_SHARED") ||
            !strcmp(m[k].name, "MAP_PRIVATE"))
          set = (raw & 0xf) == m[k].value;
        if (named != set)
          printf("\n  %s: %s %s in \"%s\" (raw %#" PRIx64 ")\n", guest,
                 m[k].name, set ? "set but not named" : "named but not set",
                 text, raw);
        CU_ASSERT_EQUAL(named, set);
      }
      if (field == 2)
        opens++;
      else
        maps++;
    }
    /* "= -1 ENAME (": the header's number for ENAME is -ret */
    const char *e = strstr(dec, "= -1 E");
    if (e && r < 0) {
      char ename[32] = "";
      sscanf(e + 5, "%31[A-Z0-9]", ename);
      for (int k = 0; k < ne; k++)
        if (err_m[k].known && !strcmp(err_m[k].name, ename)) {
          CU_ASSERT_EQUAL((long long)err_m[k].value, -r);
          errors++;
        }
    }
  }
  CU_ASSERT(opens >= 3);
  CU_ASSERT(maps >= 2);
  CU_ASSERT(errors >= 3);
  free(json);
}

static void test_headers_arm64(void) {
  check_against_headers("sysmix-arm64", "aarch64-linux-gnu-gcc");
}

static void test_headers_mips(void) {
  check_against_headers("sysmix-mips", "mips-linux-gnu-gcc");
}

/* mips against qemu-user's -strace, which decodes mips open and mmap
 * flags in mips numbering (its arm64 table prints O_NOFOLLOW as
 * O_LARGEFILE, so arm64 is checked against the headers only). */
static void test_qemu_mips(void) {
  if (tu_expect_refusal(tu_guest("sysmix-mips")))
    return;
  char qpath[4200];
  snprintf(qpath, sizeof qpath, "%s/sysmix-mips.qemu", tu_tmpdir());
  char *argv[] = {"qemu-mips-static", "-strace",
                  (char *)tu_guest("sysmix-mips"), NULL};
  run_clean(argv, qpath);
  char *q = (char *)tu_read_file(qpath, NULL);
  if (!q)
    q = strdup("");
  int st;
  if (!strstr(q, "openat(")) {
    printf("\n  qemu-mips-static -strace did not run: not compared\n");
    free(q);
    return;
  }
  const char *tct = record("sysmix-mips", "sysmix-mips-qemu", NULL);
  char *ours = sh(&st, "%s strace -e trace=openat,mmap2 %s", TC_CLI, tct);
  char *ql[1024], *ol[256];
  size_t nq = split_lines(q, ql, 1024), no = split_lines(ours, ol, 256);
  size_t k = 0, compared = 0;
  for (size_t i = 0; i < nq; i++) {
    /* "PID name(args) = ret" */
    char *call = strchr(ql[i], ' ');
    if (!call || (strncmp(call + 1, "openat(", 7) != 0 &&
                  strncmp(call + 1, "mmap2(", 6) != 0))
      continue;
    call++;
    if (k >= no) {
      CU_FAIL("qemu shows more openat/mmap2 calls than the recording");
      break;
    }
    /* ours with ", " -> "," and the alignment dropped reads as qemu */
    char mine[1024];
    size_t w = 0;
    for (const char *p = ol[k++]; *p && w < sizeof mine - 1; p++) {
      if (p[0] == ',' && p[1] == ' ') {
        mine[w++] = ',';
        p++;
      } else if (p[0] == ' ' && (p[1] == ' ' || p[1] == '=')) {
        continue;
      } else {
        mine[w++] = *p;
      }
    }
    mine[w] = 0;
    /* the call up to its return value, which qemu prints otherwise for
     * errors and addresses */
    char *qe = strstr(call, ") = "), *me = strstr(mine, ")= ");
    if (!qe || !me) {
      CU_FAIL("unparsable line");
      continue;
    }
    *qe = 0;
    *me = 0;
    if (strcmp(call, mine) != 0)
      printf("\n  qemu:      %s\n  tracecorn: %s\n", call, mine);
    CU_ASSERT_STRING_EQUAL(call, mine);
    compared++;
  }
  CU_ASSERT(compared >= 5);
  free(ours);
  /* rt_sigprocmask: mips numbers `how` 1-3; the same names and results
   * (qemu prints the sets as pointers) */
  char *masks = sh(&st, "%s strace -e trace=rt_sigprocmask %s", TC_CLI, tct);
  char *ml[16];
  size_t nmk = split_lines(masks, ml, 16), km = 0;
  for (size_t i = 0; i < nq; i++) {
    char *call = strchr(ql[i], ' ');
    if (!call || strncmp(call + 1, "rt_sigprocmask(", 15) != 0)
      continue;
    char qhow[32] = "", mhow[32] = "", *qr = strstr(call, ") = "),
         *mr = km < nmk ? strstr(ml[km], " = ") : NULL;
    sscanf(call + 16, "%31[A-Z_]", qhow);
    if (km < nmk)
      sscanf(ml[km] + 15, "%31[A-Z_]", mhow);
    km++;
    CU_ASSERT_STRING_EQUAL(qhow, mhow);
    CU_ASSERT(qr && mr && strcmp(qr + 4, mr + 3) == 0);
  }
  CU_ASSERT_EQUAL(km, 2);
  free(masks);
  free(q);
}

/* ------------------------------------------------------------- filters */

typedef struct insn_line {
  uint64_t index, pc;
  const char *text;
} insn_line;

/* The instruction lines of a text dump. */
static size_t parse_insns(char *dump, insn_line *out, size_t max, char **lines,
                          size_t maxl) {
  size_t nl = split_lines(dump, lines, maxl), n = 0;
  for (size_t i = 0; i < nl && n < max; i++) {
    char *end;
    if (!isdigit((unsigned char)lines[i][0]))
      continue;
    uint64_t idx = strtoull(lines[i], &end, 10);
    const char *pc = strstr(end, "0x");
    if (!pc)
      continue;
    out[n++] = (insn_line){idx, strtoull(pc, NULL, 16), lines[i]};
  }
  return n;
}

#define MAXI 20000

static void test_filters(void) {
  const char *tct = record("sysmix64", "filters", NULL);
  int st;
  char *full = sh(&st, "%s dump %s", TC_CLI, tct);
  CU_ASSERT_EQUAL(st, 0);
  char *fullcopy = strdup(full);
  static insn_line all[MAXI];
  static char *lines[MAXI * 3];
  size_t n = parse_insns(full, all, MAXI, lines, MAXI * 3);
  CU_ASSERT(n > 5000 && n < MAXI);

  /* --skip/--count: exactly that window of instruction lines */
  char *win = sh(&st, "%s dump --skip 100 --count 50 %s", TC_CLI, tct);
  static insn_line got[MAXI];
  static char *glines[MAXI * 3];
  size_t g = parse_insns(win, got, MAXI, glines, MAXI * 3);
  CU_ASSERT_EQUAL(g, 50);
  for (size_t i = 0; i < g && i < 50; i++)
    CU_ASSERT_STRING_EQUAL(got[i].text, all[100 + i].text);
  free(win);

  /* --range SYMBOL: main's bytes as binutils' nm gives them */
  char *nm = sh(&st, "nm -S %s | awk '$4 == \"main\" {print $1, $2}'",
                tu_guest("sysmix64"));
  uint64_t start = 0, size = 0;
  CU_ASSERT_EQUAL(sscanf(nm, "%" SCNx64 " %" SCNx64, &start, &size), 2);
  free(nm);
  size_t want = 0;
  for (size_t i = 0; i < n; i++)
    want += all[i].pc >= start && all[i].pc < start + size;
  CU_ASSERT(want > 100);
  char *bysym = sh(&st, "%s dump --range main %s", TC_CLI, tct);
  CU_ASSERT_EQUAL(st, 0);
  char *byhex = sh(&st, "%s dump --range %" PRIx64 "-%" PRIx64 " %s", TC_CLI,
                   start, start + size, tct);
  CU_ASSERT_STRING_EQUAL(bysym, byhex);
  g = parse_insns(bysym, got, MAXI, glines, MAXI * 3);
  CU_ASSERT_EQUAL(g, want);
  for (size_t i = 0, j = 0; i < n && j < g; i++)
    if (all[i].pc >= start && all[i].pc < start + size)
      CU_ASSERT_STRING_EQUAL(got[j++].text, all[i].text);
  free(bysym);
  free(byhex);

  /* --range MODULE: the program's own maps hold every instruction */
  char *bymod =
      sh(&st, "%s dump --range sysmix64 %s | grep -c '^[0-9]'", TC_CLI, tct);
  CU_ASSERT_EQUAL((size_t)atol(bymod), n);
  free(bymod);

  /* --pc: every execution of one instruction (main's first) */
  char *bypc = sh(&st, "%s dump --pc %" PRIx64 " %s", TC_CLI, start, tct);
  g = parse_insns(bypc, got, MAXI, glines, MAXI * 3);
  size_t at = 0;
  for (size_t i = 0; i < n; i++)
    at += all[i].pc == start;
  CU_ASSERT(at >= 1);
  CU_ASSERT_EQUAL(g, at);
  for (size_t i = 0; i < g; i++)
    CU_ASSERT_EQUAL(got[i].pc, start);
  free(bypc);

  /* --syscalls-only: one strace line per syscall line of the full dump,
   * the same calls; --skip/--count window them */
  size_t nsys = 0;
  for (const char *p = fullcopy; (p = strstr(p, "\n         syscall ")); p++)
    nsys++;
  char *sys = sh(&st, "%s dump --syscalls-only %s", TC_CLI, tct);
  char *sl[1024];
  size_t ns = split_lines(sys, sl, 1024);
  CU_ASSERT_EQUAL(ns, nsys + 1); /* and the exit */
  CU_ASSERT(ns > 0 && strcmp(sl[ns - 1], "+++ exited with 0 +++") == 0);
  char *sub = sh(&st, "%s strace --skip 10 --count 5 %s", TC_CLI, tct);
  char *subl[16];
  size_t nsub = split_lines(sub, subl, 16);
  CU_ASSERT_EQUAL(nsub, 5);
  for (size_t i = 0; i < nsub && 10 + i < ns; i++)
    CU_ASSERT_STRING_EQUAL(subl[i], sl[10 + i]);
  /* the text dump's syscall lines decode the same way (without the
   * alignment) */
  char plain[1024];
  size_t w = 0;
  for (const char *p = sl[20]; *p && w < sizeof plain - 1; p++)
    if (!(p[0] == ' ' && p[1] == ' ') && !(p[0] == ' ' && p[1] == '='))
      plain[w++] = *p;
    else if (p[0] == ' ' && p[1] == '=')
      plain[w++] = ' ';
  plain[w] = 0;
  CU_ASSERT_PTR_NOT_NULL(strstr(fullcopy, plain));
  free(sub);
  free(sys);

  /* --syscall NAMES: only those */
  char *wr =
      sh(&st, "%s strace --syscall write,writev %s | grep -c .", TC_CLI, tct);
  size_t writes = 0;
  for (const char *p = fullcopy; (p = strstr(p, " syscall write")); p++)
    writes++;
  CU_ASSERT_EQUAL((size_t)atol(wr), writes + 1);
  free(wr);

  /* --from on a format without seek: the lines from there on */
  char *from = sh(&st, "%s dump --from 3000 --count 20 %s", TC_CLI, tct);
  CU_ASSERT_PTR_NOT_NULL(strstr(from, "keyframe #3000"));
  g = parse_insns(from, got, MAXI, glines, MAXI * 3);
  CU_ASSERT_EQUAL(g, 20);
  for (size_t i = 0; i < g; i++)
    CU_ASSERT_STRING_EQUAL(got[i].text, all[3000 + i].text);
  free(from);

  /* bad selections: one line, non-zero exit */
  struct {
    const char *args;
    int status;
    const char *msg;
  } bad[] = {
      {"--range no_such_function", 1, "no function or module"},
      {"--range 2000-1000", 1, "end must be above"},
      {"--pc zz", 2, "not a hex address"},
      {"--count 0", 2, "positive number"},
      {"--from 99999999", 1, "no instruction 99999999"},
      {"-e read", 2, "trace=NAMES"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    char *o =
        sh(&st, "%s dump %s %s 2>&1 >/dev/null", TC_CLI, bad[i].args, tct);
    CU_ASSERT_EQUAL(st, bad[i].status);
    CU_ASSERT_PTR_NOT_NULL(strstr(o, bad[i].msg));
    free(o);
  }
  free(full);
  free(fullcopy);
}

/* ------------------------------------------------ writers and memory */

/* record -f strace writes what `tracecorn strace` prints; json carries
 * the decoded line; a trace without memory shows pointers, as strace does
 * for memory it cannot read. */
static void test_writers(void) {
  const char *tct = record("sysmix64", "writers", "-f tct,strace,json");
  int st;
  char *ours = sh(&st, "%s strace %s", TC_CLI, tct);
  char path[4200];
  snprintf(path, sizeof path, "%s/writers.strace", tu_tmpdir());
  char *file = (char *)tu_read_file(path, NULL);
  CU_ASSERT_PTR_NOT_NULL_FATAL(file);
  CU_ASSERT_STRING_EQUAL(file, ours);
  snprintf(path, sizeof path, "%s/writers.jsonl", tu_tmpdir());
  char *json = (char *)tu_read_file(path, NULL);
  CU_ASSERT(json && strstr(json, "\"strace\":\"openat(AT_FDCWD, "
                                 "\\\"sysmix.txt\\\", "
                                 "O_WRONLY|O_CREAT|O_TRUNC, "
                                 "0640) = 3\""));
  free(json);
  free(file);
  free(ours);

  const char *bare = record("sysmix64", "nomem", "--no-memory");
  char *o = sh(&st, "%s strace -e trace=write,openat %s", TC_CLI, bare);
  CU_ASSERT_EQUAL(st, 0);
  CU_ASSERT_PTR_NOT_NULL(strstr(o, "write(1, 0x"));
  /* paths in the program's own data (from its MAP contents) still show */
  CU_ASSERT_PTR_NOT_NULL(strstr(o, "openat(AT_FDCWD, \"sysmix.txt\""));
  free(o);

  /* -s N: strace's string limit */
  o = sh(&st, "%s strace -s 8 -e trace=write %s", TC_CLI, tct);
  CU_ASSERT_PTR_NOT_NULL(strstr(o, "write(3, \"abcdefgh\"..., 100)"));
  free(o);
}

/* Every syscall name of every arch, with arguments that point into a
 * mapped region of random bytes or hold random values, random return
 * values and random kernel writes: the decoder must always give a
 * well-formed line (ASan/UBSan builds check the rest). */
static void test_random_events(void) {
  static const tc_arch_id arches[] = {
      TC_ARCH_X86_64, TC_ARCH_X86,    TC_ARCH_ARM,     TC_ARCH_ARM64,
      TC_ARCH_MIPS,   TC_ARCH_MIPSEL, TC_ARCH_MIPS64EL};
  enum { BASE = 0x10000, SIZE = 0x10000 };
  static uint8_t region[SIZE], kern[2][256];
  uint64_t seed = 0x5eed;
  size_t lines = 0;
  for (size_t ai = 0; ai < sizeof arches / sizeof arches[0]; ai++) {
    const tc_arch *a = tc_arch_by_id(arches[ai]);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    uint64_t mask = a->ptr_size == 4 ? 0xffffffffu : ~0ull;
    for (int round = 0; round < 3; round++) {
      tc_sysdecode *d = tc_sysdecode_new(a, round == 2 ? 4 : 0, round != 1);
      CU_ASSERT_PTR_NOT_NULL_FATAL(d);
      for (size_t i = 0; i < SIZE; i++)
        region[i] = (uint8_t)tu_xorshift(&seed);
      tc_event map = {.kind = TC_EV_MAP};
      map.u.map = (tc_map_event){BASE, SIZE, 3, "[heap]", 0, region};
      CU_ASSERT_EQUAL(tc_sysdecode_observe(d, &map), 0);
      for (size_t k = 0; k < a->sys.nnames; k++) {
        tc_syscall_event s = {0};
        s.nr = a->sys.names[k].nr;
        s.name = (tu_xorshift(&seed) & 15) ? a->sys.names[k].name : NULL;
        for (int i = 0; i < 6; i++) {
          uint64_t r = tu_xorshift(&seed);
          switch (r & 3) {
          case 0: /* into the region, sometimes near its end */
            s.args[i] = BASE + (r >> 8) % SIZE;
            break;
          case 1:
            s.args[i] = (r >> 8) & 0xff;
            break;
          case 2:
            s.args[i] = (uint64_t) - (int64_t)((r >> 8) & 0xff);
            break;
          default:
            s.args[i] = r >> 2;
          }
          s.args[i] &= mask;
        }
        uint64_t r = tu_xorshift(&seed);
        s.ret = (r & 3) == 0   ? -(int64_t)(1 + (r >> 8) % 600)
                : (r & 3) == 1 ? (int64_t)((r >> 8) % 300)
                               : (int64_t)(r >> 4);
        tc_mem_access m[2];
        s.nmem = (uint32_t)(r >> 60) % 3;
        for (uint32_t i = 0; i < s.nmem; i++) {
          for (size_t b = 0; b < sizeof kern[i]; b++)
            kern[i][b] = (uint8_t)tu_xorshift(&seed);
          m[i] = (tc_mem_access){s.args[i + 1], (uint32_t)(r >> 8) % 256,
                                 TC_MEM_WRITE, kern[i], kern[i]};
        }
        s.mem = m;
        const char *line = tc_sysdecode_syscall(d, &s, TC_SYSDECODE_ALIGN);
        char head[64];
        if (s.name)
          snprintf(head, sizeof head, "%s(", s.name);
        else
          snprintf(head, sizeof head, "syscall_%#x(", s.nr);
        const char *eq = line ? strstr(line, " = ") : NULL;
        int ok = line && strncmp(line, head, strlen(head)) == 0 && eq &&
                 eq[3] && memchr(line, ')', (size_t)(eq - line)) &&
                 !strchr(line, '\n');
        if (!ok)
          printf("\n  %s: %s\n", a->name, line ? line : "(null)");
        CU_ASSERT(ok);
        tc_event ev = {.kind = TC_EV_SYSCALL};
        ev.u.sys = s;
        CU_ASSERT_EQUAL(tc_sysdecode_observe(d, &ev), 0);
        lines++;
      }
      tc_fault_event f = {1, BASE, 0, (tc_fault_kind)(1 + round * 3), 11};
      CU_ASSERT_PTR_NOT_NULL(strstr(tc_sysdecode_fault(d, &f), "--- SIGSEGV"));
      tc_sysdecode_free(d);
    }
  }
  CU_ASSERT(lines > 5000);
}

/* ------------------------------------------------ strace -f (processes) */

typedef struct pline {
  unsigned pid;
  char *text; /* the call, without the pid prefix */
} pline;

/* `tracecorn strace -f` lines: "[pid N] call" or, when one process
 * lives, "call" (the parent's here: fork64's parent outlives its
 * children). */
static size_t parse_merged(char *text, pline *out, size_t max,
                           unsigned parent) {
  char *lines[2048];
  size_t n = split_lines(text, lines, 2048), k = 0;
  for (size_t i = 0; i < n && k < max; i++) {
    unsigned pid = parent;
    char *t = lines[i];
    if (sscanf(t, "[pid %u] ", &pid) == 1)
      t = strchr(t, ']') + 2;
    out[k++] = (pline){pid, t};
  }
  return k;
}

/* The index of pid's first line starting with what (and ending "= ret"
 * if ret), or -1. */
static long find_line(const pline *l, size_t n, unsigned pid, const char *what,
                      const char *ret) {
  for (size_t i = 0; i < n; i++) {
    if (l[i].pid != pid || strncmp(l[i].text, what, strlen(what)) != 0)
      continue;
    size_t tl = strlen(l[i].text), rl = ret ? strlen(ret) : 0;
    if (!ret || (tl > rl + 3 && strcmp(l[i].text + tl - rl, ret) == 0 &&
                 strncmp(l[i].text + tl - rl - 3, " = ", 3) == 0))
      return (long)i;
  }
  return -1;
}

/* The syscall names of one process in strace -f -o output ("PID call"),
 * an <unfinished ...> call counted once (its resumption is skipped). */
static size_t native_names(char *text, unsigned pid, char names[][32],
                           size_t max) {
  size_t k = 0;
  char *lines[4096];
  size_t n = split_lines(text, lines, 4096);
  for (size_t i = 0; i < n && k < max; i++) {
    unsigned p;
    int off = 0;
    if (sscanf(lines[i], "%u %n", &p, &off) != 1 || p != pid)
      continue;
    const char *t = lines[i] + off;
    if (!strncmp(t, "<...", 4) || !strncmp(t, "+++", 3) ||
        !strncmp(t, "---", 3))
      continue;
    size_t m = strcspn(t, "(");
    snprintf(names[k++], 32, "%.*s", (int)(m < 31 ? m : 31), t);
  }
  return k;
}

static void test_follow_forks(void) {
  const char *tct = record("fork64", "fk", NULL);
  int st;
  char *merged = sh(&st, "%s strace -f %s", TC_CLI, tct);
  CU_ASSERT_EQUAL_FATAL(st, 0);
  /* the files given one by one merge the same way */
  char *given = sh(&st,
                   "cd %s && %s strace fk.tct fk.1001.tct fk.1002.tct "
                   "fk.1003.tct fk.1004.tct fk.1005.tct",
                   tu_tmpdir(), TC_CLI);
  CU_ASSERT_EQUAL(st, 0);
  CU_ASSERT_STRING_EQUAL(given, merged);
  free(given);
  /* -f is strace's: one line of strace -f per call, prefixed while several
   * processes live */
  CU_ASSERT_PTR_NOT_NULL(strstr(merged, "[pid  1001] read(3, "));
  static pline l[2048];
  char *copy = strdup(merged);
  size_t n = parse_merged(copy, l, 2048, 1000);
  CU_ASSERT(n > 60);
  /* each process's lines, in order, are its own file's strace */
  unsigned pids[] = {1000, 1001, 1002, 1003, 1004, 1005};
  for (int p = 0; p < 6; p++) {
    char *own = p ? sh(&st, "cd %s && %s strace fk.%u.tct", tu_tmpdir(), TC_CLI,
                       pids[p])
                  : sh(&st, "%s strace %s", TC_CLI, tct);
    CU_ASSERT_EQUAL(st, 0);
    char *ol[1024];
    size_t no = split_lines(own, ol, 1024), k = 0;
    for (size_t i = 0; i < n; i++) {
      if (l[i].pid != pids[p])
        continue;
      /* strace's vfork: unfinished while the child runs, resumed after */
      if (!strcmp(l[i].text, "vfork( <unfinished ...>"))
        continue;
      static char joined[8][512];
      static int njoined;
      if (!strncmp(l[i].text, "<... vfork resumed>)", 20)) {
        char *j = joined[njoined++ % 8];
        snprintf(j, sizeof joined[0], "vfork()%s", l[i].text + 20);
        l[i].text = j;
        if (k < no && !strncmp(ol[k], "vfork()", 7)) {
          /* the same call; only the alignment differs */
          CU_ASSERT_STRING_EQUAL(strstr(ol[k], " = "),
                                 strstr(l[i].text, " = "));
          k++;
          continue;
        }
      }
      if (k < no && strcmp(ol[k], l[i].text) != 0) {
        printf("\n  pid %u line %zu: merged %s, own %s\n", pids[p], k,
               l[i].text, ol[k]);
        CU_FAIL("a process's merged lines differ from its own strace");
      }
      k++;
    }
    CU_ASSERT_EQUAL(k, no);
    free(own);
  }
  /* time order: a child runs after the clone that made it, and ends before
   * the wait that reaps it; the pipe's reader reads after its writer */
  for (unsigned c = 1001; c <= 1005; c++) {
    char ret[16];
    snprintf(ret, sizeof ret, "%u", c);
    long made = find_line(l, n, 1000, "clone(", ret);
    long first = -1, end = -1;
    for (size_t i = 0; i < n; i++)
      if (l[i].pid == c) {
        if (first < 0)
          first = (long)i;
        if (!strncmp(l[i].text, "+++ ", 4))
          end = (long)i;
      }
    long reaped = find_line(l, n, 1000, "wait4(", ret);
    CU_ASSERT(end >= 0);
    if (made >= 0) /* clone children (not vfork's, whose parent waits) */
      CU_ASSERT(made < first);
    if (reaped >= 0)
      CU_ASSERT(end < reaped);
  }
  /* vfork's child (1004) runs inside its parent's vfork */
  long unfinished = find_line(l, n, 1000, "vfork( <unfinished ...>", NULL);
  long vchild = find_line(l, n, 1004, "exit_group(5)", NULL);
  long vdone = find_line(l, n, 1000, "vfork()", "1004");
  CU_ASSERT(unfinished >= 0 && unfinished < vchild && vchild < vdone);
  long wrote = find_line(l, n, 1001, "write(6, \"got 20\"", NULL);
  long read = find_line(l, n, 1000, "read(5, \"got 20\"", NULL);
  CU_ASSERT(wrote >= 0 && read >= 0 && wrote < read);
  free(copy);

  /* the same processes under real strace -f: the calls each makes (names,
   * in order) are ours, for the children that ran to their exit */
  if (strace_works()) {
    char native[4200];
    snprintf(native, sizeof native, "%s/fork64.native-f", tu_tmpdir());
    char *argv[] = {"strace",
                    "-f",
                    "-qq",
                    "-o",
                    native,
                    "-e",
                    "trace=read,write,close,pipe2,exit_group,wait4,kill",
                    (char *)tu_guest("fork64"),
                    NULL};
    run_clean(argv, NULL);
    size_t nlen = 0;
    char *ntext = (char *)tu_read_file(native, &nlen);
    CU_ASSERT_PTR_NOT_NULL_FATAL(ntext);
    /* native pids in the order they first appear: the parent, then its
     * children one after another (fork64 waits for each before the next) */
    unsigned npid[16];
    int nn = 0;
    char *tmp = strdup(ntext), *lines[4096];
    size_t nl = split_lines(tmp, lines, 4096);
    for (size_t i = 0; i < nl; i++) {
      unsigned p;
      if (sscanf(lines[i], "%u", &p) != 1)
        continue;
      int seen = 0;
      for (int j = 0; j < nn; j++)
        seen |= npid[j] == p;
      if (!seen && nn < 16)
        npid[nn++] = p;
    }
    free(tmp);
    char *ours = sh(&st,
                    "%s strace -f -e "
                    "trace=read,write,close,pipe2,exit_group,wait4,kill "
                    "%s",
                    TC_CLI, tct);
    static pline ol[2048];
    size_t on = parse_merged(ours, ol, 2048, 1000);
    int compared = 0;
    for (int p = 0; p < 6 && p < nn; p++) {
      /* a child killed before it ran (the sleeper) may or may not have
       * made calls: scheduling, not behaviour */
      char exited[64];
      snprintf(exited, sizeof exited, "+++ exited with");
      if (find_line(ol, on, pids[p], exited, NULL) < 0)
        continue;
      static char a[512][32], b[512][32];
      char *t2 = strdup(ntext);
      size_t na = native_names(t2, npid[p], a, 512);
      free(t2);
      size_t nb = 0;
      for (size_t i = 0; i < on && nb < 512; i++) {
        if (ol[i].pid != pids[p] || !strncmp(ol[i].text, "+++", 3) ||
            !strncmp(ol[i].text, "---", 3))
          continue;
        size_t m = strcspn(ol[i].text, "(");
        snprintf(b[nb++], 32, "%.*s", (int)(m < 31 ? m : 31), ol[i].text);
      }
      CU_ASSERT_EQUAL(na, nb);
      for (size_t i = 0; i < na && i < nb; i++)
        if (strcmp(a[i], b[i]) != 0) {
          printf("\n  pid %u call %zu: strace %s, tracecorn %s\n", pids[p], i,
                 a[i], b[i]);
          CU_FAIL("a process's calls differ from strace -f's");
          break;
        }
      compared++;
    }
    CU_ASSERT(compared >= 4);
    printf("\n  fork64: %d processes' calls equal strace -f's\n", compared);
    free(ours);
    free(ntext);
  }
  /* a format without turns: each process after the last, said on stderr */
  char *conv =
      sh(&st,
         "cd %s && for p in '' .1001 .1002 .1003 .1004 .1005; do "
         "%s convert -q fk$p.tct fku$p.ucir 2>/dev/null || exit 1; done && "
         "%s strace -f fku.ucir 2>&1 >/dev/null",
         tu_tmpdir(), TC_CLI, TC_CLI);
  CU_ASSERT_EQUAL(st, 0);
  CU_ASSERT_PTR_NOT_NULL(strstr(conv, "hold no scheduler turns"));
  free(conv);
  /* a file that cannot be read: one line naming it, status 1 */
  char *bad = sh(&st, "%s strace %s %s/nosuch.tct 2>&1", TC_CLI, tct,
                 tu_tmpdir());
  CU_ASSERT_EQUAL(st, 1);
  CU_ASSERT_PTR_NOT_NULL(strstr(bad, "nosuch.tct"));
  free(bad);
  free(merged);
}

int main(void) {
  static const tu_case cases[] = {
      {"x86-64 syscalls equal strace's decoding of a native run",
       test_native_x86_64},
      {"i386 syscalls equal strace's decoding of a native run",
       test_native_i386},
      {"fault signals and exits equal strace's", test_native_faults},
      {"errno and signal names equal the C library's", test_names_match_libc},
      {"coreutils touch, chmod, install, sync = native and strace",
       test_coreutils_calls},
      {"arm64 flags and errnos follow its kernel headers", test_headers_arm64},
      {"mips flags and errnos follow its kernel headers", test_headers_mips},
      {"mips openat/mmap2/rt_sigprocmask equal qemu-user -strace",
       test_qemu_mips},
      {"dump filters against the full dump", test_filters},
      {"strace and json writers, traces without memory", test_writers},
      {"random syscall events decode to well-formed lines", test_random_events},
      {"strace -f: processes merged in time order = strace -f",
       test_follow_forks},
      {NULL, NULL}};
  return tu_run_suite("strace", cases);
}
