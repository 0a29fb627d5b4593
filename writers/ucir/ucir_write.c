/* SPDX-License-Identifier: GPL-2.0-or-later */
/* UCIR writer (usercorn's trace format, .ucir; the layout is in
 * ucir_internal.h): a KEYFRAME first (registers, mappings and their
 * contents), one FRAME per basic block (JMP, then each instruction's memory
 * ops and register changes before its STEP), a SYSCALL op after a syscall
 * instruction with the kernel's effects, EXIT, and periodic KEYFRAMEs that
 * collapse everything since the previous one. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/byteorder.h"
#include "common/notice.h"
#include "writers/format.h"
#include "writers/io/outfile.h"
#include "writers/io/snappy_frame.h"
#include "writers/ucir/ucir_internal.h"

static inline uint8_t *put8(uint8_t *p, uint8_t v) {
  *p = v;
  return p + 1;
}
static inline uint8_t *put16(uint8_t *p, uint16_t v) {
  p[0] = (uint8_t)v;
  p[1] = (uint8_t)(v >> 8);
  return p + 2;
}
static inline uint8_t *put32(uint8_t *p, uint32_t v) {
  put_le(p, v, 4);
  return p + 4;
}
static inline uint8_t *put64(uint8_t *p, uint64_t v) {
  put_le(p, v, 8);
  return p + 8;
}

/* ============================================================ arch names */

/* usercorn's arch names and the registers its tracer emits (Unicorn
 * enums, ucir.md section 6). The PC is never emitted. */
static const uint16_t set_x86_64[] = {35,  36,  37,  38,  39,  40,  43,  44,
                                      106, 107, 108, 109, 110, 111, 112, 113};
static const uint16_t set_x86[] = {11, 17, 19, 20, 21, 22, 23, 24,
                                   25, 28, 29, 30, 32, 33, 49};
static const uint16_t set_arm[] = {10, 12, 66, 67, 68, 69, 70, 71,
                                   72, 73, 74, 75, 76, 77, 78};
static const uint16_t set_arm64[] = {1,   2,   4,   199, 200, 201, 202, 203,
                                     204, 205, 206, 207, 208, 209, 210, 211,
                                     212, 213, 214, 215, 216, 217, 218, 219,
                                     220, 221, 222, 223, 224, 225, 226, 227};
static const uint16_t set_mips[] = {3,  4,  5,  6,  7,  8,  9,  10, 11, 12, 13,
                                    14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24,
                                    25, 26, 27, 28, 29, 30, 31, 32, 33};
static const uint16_t set_sparc[] = {54, 55, 56, 57, 58, 59, 60, 61, 62, 63, 64,
                                     65, 66, 67, 68, 70, 71, 72, 73, 74, 75, 76,
                                     77, 78, 79, 80, 81, 82, 83, 84, 85};

typedef struct uc_arch_row {
  tc_arch_id id;
  const char *name; /* the name written to the header */
  int usercorn;     /* 1 if usercorn knows this name */
  const uint16_t *set;
  size_t nset;
} uc_arch_row;

#define SET(a) a, sizeof(a) / sizeof(a[0])
static const uc_arch_row uc_arches[] = {
    {TC_ARCH_X86_64, "x86_64", 1, SET(set_x86_64)},
    {TC_ARCH_X86, "x86", 1, SET(set_x86)},
    {TC_ARCH_ARM, "arm", 1, SET(set_arm)},
    {TC_ARCH_ARM64, "arm64", 1, SET(set_arm64)},
    {TC_ARCH_MIPS, "mips", 1, SET(set_mips)},
    {TC_ARCH_MIPSEL, "mips", 1, SET(set_mips)},
    {TC_ARCH_SPARC, "sparc", 1, SET(set_sparc)},
    {TC_ARCH_SPARC64, "sparc64", 0, NULL, 0},
};
#undef SET

static const uc_arch_row *arch_row(const tc_arch *arch) {
  for (size_t i = 0; i < sizeof uc_arches / sizeof uc_arches[0]; i++)
    if (uc_arches[i].id == arch->id)
      return &uc_arches[i];
  return NULL;
}

enum { WIRE_NONE = 0, WIRE_REG, WIRE_SPREG };

/* How register `reg` goes on the wire by default: usercorn's set where
 * usercorn has one, else every integer GPR/SP/flags register. */
static int default_wire(const tc_arch *arch, int reg) {
  const tc_reg_info *ri = &arch->regs[reg];
  if (reg == arch->pc_reg || ri->uc_id < 0)
    return WIRE_NONE;
  const uc_arch_row *row = arch_row(arch);
  if (row && row->set) {
    for (size_t i = 0; i < row->nset; i++)
      if (row->set[i] == ri->uc_id)
        return ri->size <= 8 ? WIRE_REG : WIRE_SPREG;
    return WIRE_NONE;
  }
  if ((ri->flags & (TC_REG_GPR | TC_REG_SP | TC_REG_FLAGS)) && ri->size <= 8)
    return WIRE_REG;
  return WIRE_NONE;
}

int ucir_holds_reg(const tc_arch *arch, int reg) {
  if (reg >= tc_arch_base(arch)->nregs)
    return 0; /* mips+fpu's FPU registers: not carried */
  return reg == arch->pc_reg || default_wire(arch, reg) != WIRE_NONE;
}

/* ====================================================== syscall arg counts */

/* Parameter counts of Linux syscalls (SYSCALL's argc; usercorn writes the
 * real count, not 6). Names not listed get 6. */
static const char *const argc_lists[7] = {
    /* 0 */
    " rt_sigreturn sigreturn sched_yield pause getpid fork vfork getuid "
    "getgid geteuid getegid getppid getpgrp setsid munlockall vhangup sync "
    "gettid inotify_init restart_syscall idle getuid32 getgid32 geteuid32 "
    "getegid32 sgetmask ",
    /* 1 */
    " close brk pipe dup alarm exit exit_group uname shmdt fsync fdatasync "
    "chdir fchdir rmdir unlink umask sysinfo times setuid setgid getpgid "
    "setfsuid setfsgid getsid personality sched_getscheduler "
    "sched_get_priority_max sched_get_priority_min mlockall _sysctl adjtimex "
    "chroot acct swapoff iopl time set_thread_area get_thread_area "
    "io_destroy epoll_create set_tid_address timer_getoverrun timer_delete "
    "mq_unlink unshare eventfd epoll_create1 inotify_init1 syncfs "
    "olduname oldolduname stime nice ssetmask setuid32 setgid32 setfsuid32 "
    "setfsgid32 userfaultfd memfd_secret umount uselib ",
    /* 2 */
    " munmap stat fstat lstat access dup2 nanosleep getitimer shutdown "
    "listen kill msgget flock truncate ftruncate getcwd rename mkdir creat "
    "link symlink chmod fchmod gettimeofday getrlimit ugetrlimit getrusage "
    "setpgid setreuid setregid getgroups setgroups capget capset "
    "rt_sigpending rt_sigsuspend sigaltstack utime ustat statfs fstatfs "
    "getpriority sched_setparam sched_getparam sched_rr_get_interval mlock "
    "munlock pivot_root arch_prctl setrlimit settimeofday umount2 swapon "
    "sethostname setdomainname create_module delete_module removexattr "
    "lremovexattr fremovexattr tkill io_setup timer_gettime clock_settime "
    "clock_gettime clock_getres utimes mq_notify ioprio_get "
    "inotify_rm_watch set_robust_list timerfd_create timerfd_gettime "
    "eventfd2 pipe2 fanotify_init clock_adjtime memfd_create setreuid32 "
    "setregid32 getgroups32 setgroups32 stat64 lstat64 fstat64 truncate64 "
    "ftruncate64 signal sigpending sigsuspend oldstat oldfstat oldlstat "
    "clock_gettime64 clock_settime64 clock_getres_time64 timer_gettime64 "
    "timerfd_gettime64 clock_adjtime64 socketcall utimes_time64 "
    "sched_rr_get_interval_time64 pkey_free ",
    /* 3 */
    " read write open poll lseek mprotect ioctl readv writev msync mincore "
    "madvise shmget shmat shmctl setitimer socket connect accept sendmsg "
    "recvmsg bind getsockname getpeername execve semget semop msgctl fcntl "
    "getdents readlink chown fchown lchown syslog setresuid getresuid "
    "setresgid getresgid sched_setscheduler modify_ldt ioperm init_module "
    "listxattr llistxattr flistxattr sched_setaffinity sched_getaffinity "
    "io_submit io_cancel lookup_dcookie getdents64 timer_create tgkill "
    "set_mempolicy mq_getsetattr ioprio_set inotify_add_watch mkdirat "
    "futimesat unlinkat symlinkat fchmodat faccessat get_robust_list "
    "signalfd dup3 open_by_handle_at getrandom seccomp finit_module mlock2 "
    "membarrier lchown32 fchown32 chown32 setresuid32 getresuid32 "
    "setresgid32 getresgid32 fcntl64 waitpid sigaction sigprocmask readdir "
    "statfs64 fstatfs64 getcpu rt_sigqueueinfo cacheflush pkey_alloc "
    "close_range pidfd_open pidfd_getfd landlock_create_ruleset "
    "landlock_restrict_self ",
    /* 4 */
    " rt_sigaction rt_sigprocmask pread64 pwrite64 sendfile socketpair "
    "wait4 semctl msgsnd ptrace reboot quotactl getxattr lgetxattr "
    "fgetxattr rt_sigtimedwait epoll_ctl epoll_wait semtimedop fadvise64 "
    "timer_settime clock_nanosleep mq_open kexec_load request_key "
    "migrate_pages openat mknodat newfstatat renameat readlinkat tee "
    "sync_file_range vmsplice utimensat fallocate timerfd_settime accept4 "
    "signalfd4 preadv pwritev rt_tgsigqueueinfo prlimit64 sendmmsg "
    "fstatat64 sendfile64 pkey_mprotect openat2 pidfd_send_signal "
    "faccessat2 clock_nanosleep_time64 timer_settime64 timerfd_settime64 "
    "utimensat_time64 rt_sigtimedwait_time64 semtimedop_time64 "
    "fsconfig quotactl_fd ",
    /* 5 */
    " select mremap setsockopt getsockopt clone prctl mount setxattr "
    "lsetxattr fsetxattr io_getevents remap_file_pages get_mempolicy "
    "mq_timedsend mq_timedreceive waitid add_key keyctl fchownat linkat "
    "ppoll perf_event_open recvmmsg fanotify_mark name_to_handle_at "
    "renameat2 kcmp execveat statx _llseek _newselect fadvise64_64 "
    "move_mount fsmount open_tree mount_setattr ppoll_time64 "
    "mq_timedsend_time64 mq_timedreceive_time64 recvmmsg_time64 "
    "io_getevents_time64 ",
    /* 6 */
    " mmap mmap2 sendto recvfrom futex mbind pselect6 splice move_pages "
    "epoll_pwait process_vm_readv process_vm_writev copy_file_range "
    "preadv2 pwritev2 ipc io_pgetevents epoll_pwait2 futex_time64 "
    "pselect6_time64 sync_file_range2 "};

static uint8_t syscall_argc(const char *name) {
  if (!name || !*name || strlen(name) > 60)
    return 6;
  char key[64];
  snprintf(key, sizeof key, " %s ", name);
  for (int n = 0; n < 7; n++)
    if (strstr(argc_lists[n], key))
      return (uint8_t)n;
  return 6;
}

/* ================================================================ writer */

typedef struct dline {
  uint64_t key; /* line number + 1; 0 = empty */
  uint64_t mask;
  uint8_t data[64];
} dline;

struct tc_writer {
  int fd;
  char *path;
  const tc_arch *arch;
  int layout;
  int failed;
  uint8_t *wire; /* per register: WIRE_* */
  uint64_t pc_mask;
  uint32_t pid;
  /* Ops staged here; everything before frame_at is complete. */
  ubuf st;
  size_t frame_at, jmp_at, sys_at; /* NONE when not open */
  /* The syscall effect op being extended (offset in pend, or NONE) and
   * the address it ends at: contiguous kernel writes become one op. */
  size_t kw_at;
  uint64_t kw_addr, kw_end;
  uint32_t frame_ops, frame_tid;
  uint64_t block_bytes;
  uint32_t sys_ops;
  uint64_t next_pc;
  int have_next, block_end;
  /* output buffer (chunks, or raw ops in the spec layout) */
  uint8_t *out;
  size_t outlen;
  /* MAP/UNMAP/PROTECT events waiting for their SYSCALL */
  ubuf pend;
  uint32_t npend;
  /* initial keyframe */
  ubuf kmap;
  uint32_t nkmap;
  int kf_done;
  uint8_t *init_state;
  /* The register state the file has given so far (keyframes plus each
   * instruction's changes): a later KEYFRAME event that differs (a
   * recording window resumed after unrecorded instructions) is written
   * as a UCIR keyframe. */
  uint8_t *track;
  /* periodic keyframes: maps since the last one, dirty memory lines */
  uint64_t kf_every, last_kf;
  ubuf kops;
  uint32_t nkops;
  dline *dl;
  size_t dcap, dused;
  uint32_t *dslots;
  ubuf tmp;
  int exit_written;
  uint64_t ninsns;
};

enum { OUT_BUF = 1 << 20 };

static int w_fail(tc_writer *w, tc_error *err, const char *what) {
  w->failed = 1;
  tc_error_set(err, "ucir: %s: %s", w->path, what);
  return -1;
}

static int w_oom(tc_writer *w, tc_error *err) {
  return w_fail(w, err, "out of memory");
}

static int out_flush(tc_writer *w, tc_error *err) {
  size_t done = 0;
  while (done < w->outlen) {
    ssize_t n = write(w->fd, w->out + done, w->outlen - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      w->failed = 1;
      tc_error_set(err, "ucir: %s: write failed: %s", w->path,
                   n < 0 ? strerror(errno) : "no progress");
      return -1;
    }
    done += (size_t)n;
  }
  w->outlen = 0;
  return 0;
}

/* Emits n op-stream bytes: one snappy chunk (n <= 65536) or raw bytes. */
static int emit(tc_writer *w, const uint8_t *p, size_t n, tc_error *err) {
  if (w->layout == LAYOUT_USERCORN) {
    if (OUT_BUF - w->outlen < tc_snappy_chunk_bound(n) && out_flush(w, err) < 0)
      return -1;
    w->outlen += tc_snappy_chunk(w->out + w->outlen, p, n, 1);
    return 0;
  }
  while (n) {
    if (w->outlen == OUT_BUF && out_flush(w, err) < 0)
      return -1;
    size_t k = OUT_BUF - w->outlen < n ? OUT_BUF - w->outlen : n;
    memcpy(w->out + w->outlen, p, k);
    w->outlen += k;
    p += k;
    n -= k;
  }
  return 0;
}

/* Emits complete staged bytes: whole 64 KiB chunks, or all if final. */
static int drain(tc_writer *w, int final, tc_error *err) {
  size_t complete = w->frame_at == NONE ? w->st.len : w->frame_at;
  size_t done = 0;
  while (complete - done >= SNAPPY_FRAME_MAX_DATA ||
         (final && complete > done)) {
    size_t n = complete - done;
    if (n > SNAPPY_FRAME_MAX_DATA)
      n = SNAPPY_FRAME_MAX_DATA;
    if (emit(w, w->st.p + done, n, err) < 0)
      return -1;
    done += n;
  }
  if (done) {
    memmove(w->st.p, w->st.p + done, w->st.len - done);
    w->st.len -= done;
    if (w->frame_at != NONE) {
      w->frame_at -= done;
      if (w->jmp_at != NONE)
        w->jmp_at -= done;
      if (w->sys_at != NONE)
        w->sys_at -= done;
    }
  }
  return 0;
}

static size_t sz_map(const tc_writer *w, size_t d, size_t f) {
  return (w->layout == LAYOUT_USERCORN ? 38 : 34) + d + f;
}
static size_t sz_unmap(const tc_writer *w) {
  return w->layout == LAYOUT_USERCORN ? 17 : 13;
}
static size_t sz_prot(const tc_writer *w) {
  return w->layout == LAYOUT_USERCORN ? 18 : 14;
}

static uint8_t *put_size(const tc_writer *w, uint8_t *p, uint64_t v) {
  return w->layout == LAYOUT_USERCORN ? put64(p, v) : put32(p, (uint32_t)v);
}

/* Largest region one MAP/UNMAP/PROT op can carry in this layout. */
static uint64_t max_region(const tc_writer *w) {
  return w->layout == LAYOUT_USERCORN ? UINT64_MAX : 0xFFFFF000u;
}

/* MEM_WRITE ops for n bytes at addr into b (split at 2 GiB); returns the
 * number of ops, or -1 on out-of-memory. Marks the bytes dirty. */
static int dirty_mark(tc_writer *w, uint64_t addr, const uint8_t *p, size_t n);

static long put_writes(tc_writer *w, ubuf *b, uint64_t addr, const uint8_t *p,
                       uint64_t n, int mark) {
  long ops = 0;
  while (n) {
    uint32_t k = n > 0x80000000u ? 0x80000000u : (uint32_t)n;
    if (ub_reserve(b, 13 + (size_t)k) < 0)
      return -1;
    uint8_t *q = b->p + b->len;
    q = put8(q, OP_MEM_WRITE);
    q = put64(q, addr);
    q = put32(q, k);
    memcpy(q, p, k);
    b->len += 13 + (size_t)k;
    if (mark && dirty_mark(w, addr, p, k) < 0)
      return -1;
    addr += k;
    p += k;
    n -= k;
    ops++;
  }
  return ops;
}

/* usercorn's MEM_MAP desc/file for a tracecorn region name. */
static void map_names(const char *name, int initial, const char **desc,
                      size_t *dlen, const char **file, size_t *flen) {
  size_t n = name ? strlen(name) : 0;
  if (n >= 2 && name[0] == '[' && name[n - 1] == ']') {
    if (strcmp(name, "[heap]") == 0) {
      *desc = "brk";
      *dlen = 3;
    } else {
      *desc = name + 1;
      *dlen = n - 2;
    }
    *file = "";
    *flen = 0;
  } else if (n) {
    *desc = initial ? "exe" : "mmap";
    *dlen = strlen(*desc);
    *file = name;
    *flen = n;
  } else {
    *desc = initial ? "" : "mmap";
    *dlen = strlen(*desc);
    *file = "";
    *flen = 0;
  }
  if (*dlen > 0xFFFF)
    *dlen = 0xFFFF;
  if (*flen > 0xFFFF) { /* keep the tail: the file name matters most */
    *file += *flen - 0xFFFF;
    *flen = 0xFFFF;
  }
}

/* MAP/UNMAP/PROTECT event -> ops appended to b; returns the op count. */
static long put_map_event(tc_writer *w, ubuf *b, const tc_event *ev,
                          int initial, int mark) {
  const tc_map_event *m = &ev->u.map;
  long ops = 0;
  uint64_t addr = m->addr, left = m->size, lim = max_region(w);
  do {
    uint64_t k = left > lim ? lim : left;
    if (ev->kind == TC_EV_MAP) {
      const char *desc, *file;
      size_t dlen, flen;
      map_names(m->name, initial, &desc, &dlen, &file, &flen);
      if (ub_reserve(b, sz_map(w, dlen, flen)) < 0)
        return -1;
      uint8_t *q = b->p + b->len;
      q = put8(q, OP_MEM_MAP);
      q = put64(q, addr);
      q = put_size(w, q, k);
      q = put8(q, (uint8_t)(m->prot & 7));
      q = put64(q, flen ? m->file_offset + (addr - m->addr) : 0);
      q = put64(q, flen ? k : 0);
      q = put16(q, (uint16_t)dlen);
      q = put16(q, (uint16_t)flen);
      memcpy(q, desc, dlen);
      memcpy(q + dlen, file, flen);
      b->len += sz_map(w, dlen, flen);
    } else if (ev->kind == TC_EV_UNMAP) {
      if (ub_reserve(b, sz_unmap(w)) < 0)
        return -1;
      uint8_t *q = b->p + b->len;
      q = put8(q, OP_MEM_UNMAP);
      q = put64(q, addr);
      put_size(w, q, k);
      b->len += sz_unmap(w);
    } else {
      if (ub_reserve(b, sz_prot(w)) < 0)
        return -1;
      uint8_t *q = b->p + b->len;
      q = put8(q, OP_MEM_PROT);
      q = put64(q, addr);
      q = put_size(w, q, k);
      put8(q, (uint8_t)(m->prot & 7));
      b->len += sz_prot(w);
    }
    ops++;
    addr += k;
    left -= k;
  } while (left);
  /* The contents: non-zero bytes only (trimmed at both ends, the address
   * moved with them: usercorn's trimming bug is not copied). */
  if (ev->kind == TC_EV_MAP && m->data) {
    uint64_t lo = 0, hi = m->size;
    while (lo < hi && !m->data[lo])
      lo++;
    while (hi > lo && !m->data[hi - 1])
      hi--;
    if (hi > lo) {
      long k = put_writes(w, b, m->addr + lo, m->data + lo, hi - lo, mark);
      if (k < 0)
        return -1;
      ops += k;
    }
  }
  return ops;
}

/* ---- dirty memory since the last keyframe (64-byte lines) */

static size_t dl_hash(uint64_t key, size_t cap) {
  return (size_t)((key * 0x9e3779b97f4a7c15ull) >> 20) & (cap - 1);
}

static dline *dl_get(tc_writer *w, uint64_t line) {
  uint64_t key = line + 1;
  if ((w->dused + 1) * 2 > w->dcap) {
    size_t ncap = w->dcap ? w->dcap * 2 : 1024;
    dline *nd = calloc(ncap, sizeof *nd);
    uint32_t *ns = malloc(ncap / 2 * sizeof *ns);
    if (!nd || !ns) {
      free(nd);
      free(ns);
      return NULL;
    }
    size_t used = 0;
    for (size_t i = 0; i < w->dused; i++) {
      dline *o = &w->dl[w->dslots[i]];
      size_t s = dl_hash(o->key, ncap);
      while (nd[s].key)
        s = (s + 1) & (ncap - 1);
      nd[s] = *o;
      ns[used++] = (uint32_t)s;
    }
    free(w->dl);
    free(w->dslots);
    w->dl = nd;
    w->dslots = ns;
    w->dcap = ncap;
  }
  size_t s = dl_hash(key, w->dcap);
  while (w->dl[s].key && w->dl[s].key != key)
    s = (s + 1) & (w->dcap - 1);
  if (!w->dl[s].key) {
    w->dl[s].key = key;
    w->dl[s].mask = 0;
    w->dslots[w->dused++] = (uint32_t)s;
  }
  return &w->dl[s];
}

static int dirty_mark(tc_writer *w, uint64_t addr, const uint8_t *p, size_t n) {
  if (!w->kf_every)
    return 0;
  while (n) {
    unsigned off = (unsigned)(addr & 63);
    size_t k = 64 - off < n ? 64 - off : n;
    dline *d = dl_get(w, addr >> 6);
    if (!d)
      return -1;
    memcpy(d->data + off, p, k);
    uint64_t bits = k == 64 ? ~0ull : ((1ull << k) - 1) << off;
    d->mask |= bits;
    addr += k;
    p += k;
    n -= k;
  }
  return 0;
}

/* Forgets dirty bytes in [addr, addr+size) (remapped or unmapped). */
static void dirty_drop(tc_writer *w, uint64_t addr, uint64_t size) {
  uint64_t end = addr + size < addr ? UINT64_MAX : addr + size;
  for (size_t i = 0; i < w->dused; i++) {
    dline *d = &w->dl[w->dslots[i]];
    uint64_t base = (d->key - 1) << 6;
    if (base + 64 <= addr || base >= end)
      continue;
    for (unsigned b = 0; b < 64; b++)
      if (base + b >= addr && base + b < end)
        d->mask &= ~(1ull << b);
  }
}

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

/* Appends MEM_WRITE ops for every dirty run to b, then forgets them. */
static long dirty_flush(tc_writer *w, ubuf *b) {
  long ops = 0;
  if (!w->dused)
    return 0;
  uint64_t *lines = malloc(w->dused * sizeof *lines);
  if (!lines)
    return -1;
  size_t n = 0;
  for (size_t i = 0; i < w->dused; i++)
    if (w->dl[w->dslots[i]].mask)
      lines[n++] = w->dl[w->dslots[i]].key;
  qsort(lines, n, sizeof *lines, cmp_u64);
  w->tmp.len = 0;
  uint64_t run = 0;
  for (size_t i = 0; i < n; i++) {
    uint64_t key = lines[i];
    size_t s = dl_hash(key, w->dcap);
    while (w->dl[s].key != key)
      s = (s + 1) & (w->dcap - 1);
    const dline *d = &w->dl[s];
    uint64_t base = (key - 1) << 6;
    for (unsigned bit = 0; bit < 64; bit++) {
      if (!(d->mask >> bit & 1))
        continue;
      if (w->tmp.len && run + w->tmp.len != base + bit) {
        long k = put_writes(w, b, run, w->tmp.p, w->tmp.len, 0);
        if (k < 0)
          goto oom;
        ops += k;
        w->tmp.len = 0;
      }
      if (!w->tmp.len)
        run = base + bit;
      if (ub_append(&w->tmp, &d->data[bit], 1) < 0)
        goto oom;
    }
  }
  if (w->tmp.len) {
    long k = put_writes(w, b, run, w->tmp.p, w->tmp.len, 0);
    if (k < 0)
      goto oom;
    ops += k;
  }
  free(lines);
  for (size_t i = 0; i < w->dused; i++)
    w->dl[w->dslots[i]].key = 0;
  w->dused = 0;
  return ops;
oom:
  free(lines);
  return -1;
}

/* ---- frames */

static int frame_open(tc_writer *w, uint8_t op, uint32_t tid, tc_error *err) {
  if (ub_reserve(&w->st, 13) < 0)
    return w_oom(w, err);
  w->frame_at = w->st.len;
  uint8_t *q = w->st.p + w->st.len;
  q = put8(q, op);
  q = put64(q, tid);
  put32(q, 0);
  w->st.len += 13;
  w->frame_ops = 0;
  w->frame_tid = tid;
  w->jmp_at = w->sys_at = w->kw_at = NONE;
  return 0;
}

static int frame_close(tc_writer *w, tc_error *err) {
  if (w->frame_at == NONE)
    return 0;
  put32(w->st.p + w->frame_at + 9, w->frame_ops);
  if (w->jmp_at != NONE)
    put32(w->st.p + w->jmp_at,
          w->block_bytes > UINT32_MAX ? UINT32_MAX : (uint32_t)w->block_bytes);
  w->frame_at = w->jmp_at = w->sys_at = NONE;
  return drain(w, 0, err);
}

/* Appends one REG/SPREG op for register r of state to b (reserved). */
static uint8_t *put_reg(const tc_writer *w, uint8_t *q, int r,
                        const uint8_t *state) {
  const tc_reg_info *ri = &w->arch->regs[r];
  const uint8_t *v = state + ri->offset;
  if (w->wire[r] == WIRE_REG) {
    q = put8(q, OP_REG);
    q = put16(q, (uint16_t)ri->uc_id);
    return put64(q, get_le(v, ri->size < 8 ? ri->size : 8));
  }
  q = put8(q, OP_SPREG);
  q = put16(q, (uint16_t)ri->uc_id);
  q = put16(q, ri->size);
  /* state images hold host (little-endian) order; SPREG is target order */
  for (unsigned i = 0; i < ri->size; i++)
    q[i] = w->arch->big_endian ? v[ri->size - 1 - i] : v[i];
  return q + ri->size;
}

static size_t reg_op_size(const tc_writer *w, int r) {
  return w->wire[r] == WIRE_REG ? 11 : 5 + (size_t)w->arch->regs[r].size;
}

/* A KEYFRAME: registers (non-zero only in the first), then `extra`. */
static int write_keyframe(tc_writer *w, const uint8_t *state, uint32_t tid,
                          int all_regs, const ubuf *extra, uint32_t nextra,
                          tc_error *err) {
  if (frame_close(w, err) < 0 || frame_open(w, OP_KEYFRAME, tid, err) < 0)
    return -1;
  const tc_arch *a = w->arch;
  for (int r = 0; r < a->nregs; r++) {
    if (w->wire[r] == WIRE_NONE)
      continue;
    const tc_reg_info *ri = &a->regs[r];
    if (!all_regs) {
      int zero = 1;
      for (unsigned i = 0; i < ri->size; i++)
        zero &= state[ri->offset + i] == 0;
      if (zero)
        continue;
    }
    if (ub_reserve(&w->st, reg_op_size(w, r)) < 0)
      return w_oom(w, err);
    uint8_t *q = put_reg(w, w->st.p + w->st.len, r, state);
    w->st.len = (size_t)(q - w->st.p);
    w->frame_ops++;
  }
  if (extra && ub_append(&w->st, extra->p, extra->len) < 0)
    return w_oom(w, err);
  w->frame_ops += nextra;
  w->have_next = 0; /* the next instruction starts a new frame */
  return frame_close(w, err);
}

static int first_keyframe(tc_writer *w, const uint8_t *state, uint32_t tid,
                          tc_error *err) {
  w->kf_done = 1;
  memcpy(w->track, state, w->arch->state_size);
  int rc = write_keyframe(w, state, tid, 0, &w->kmap, w->nkmap, err);
  free(w->kmap.p);
  memset(&w->kmap, 0, sizeof w->kmap);
  return rc;
}

static int periodic_keyframe(tc_writer *w, const uint8_t *state, uint32_t tid,
                             tc_error *err) {
  memcpy(w->track, state, w->arch->state_size);
  long n = dirty_flush(w, &w->kops);
  if (n < 0)
    return w_oom(w, err);
  int rc =
      write_keyframe(w, state, tid, 1, &w->kops, w->nkops + (uint32_t)n, err);
  w->kops.len = 0;
  w->nkops = 0;
  return rc;
}

/* MAP events not followed by a SYSCALL go into the frame itself. */
static int flush_pending_maps(tc_writer *w, uint32_t tid, tc_error *err) {
  if (!w->npend)
    return 0;
  if (w->frame_at == NONE && frame_open(w, OP_FRAME, tid, err) < 0)
    return -1;
  w->sys_at = NONE;
  if (ub_append(&w->st, w->pend.p, w->pend.len) < 0)
    return w_oom(w, err);
  w->frame_ops += w->npend;
  w->pend.len = 0;
  w->npend = 0;
  return 0;
}

/* 1 if an x86 instruction ends a Unicorn translation block: branches,
 * calls, returns, traps and syscalls (taken branches are also seen as a
 * discontinuity; this catches the not-taken ones). */
static int x86_ends_block(const uint8_t *b, unsigned n, int is64) {
  unsigned i = 0;
  while (i < n &&
         (b[i] == 0x66 || b[i] == 0x67 || b[i] == 0xf0 || b[i] == 0xf2 ||
          b[i] == 0xf3 || b[i] == 0x2e || b[i] == 0x36 || b[i] == 0x3e ||
          b[i] == 0x26 || b[i] == 0x64 || b[i] == 0x65))
    i++;
  if (is64 && i < n && (b[i] & 0xf0) == 0x40)
    i++;
  if (i >= n)
    return 0;
  uint8_t op = b[i];
  if ((op >= 0x70 && op <= 0x7f) || (op >= 0xe0 && op <= 0xe3) || op == 0xe8 ||
      op == 0xe9 || op == 0xea || op == 0xeb || op == 0x9a || op == 0xc2 ||
      op == 0xc3 || op == 0xca || op == 0xcb || op == 0xcc || op == 0xcd ||
      op == 0xce || op == 0xcf || op == 0xf4)
    return 1;
  if (op == 0xff && i + 1 < n) {
    unsigned reg = (b[i + 1] >> 3) & 7;
    return reg >= 2 && reg <= 5;
  }
  if (op == 0x0f && i + 1 < n) {
    uint8_t o2 = b[i + 1];
    return (o2 >= 0x80 && o2 <= 0x8f) || o2 == 0x05 || o2 == 0x07 ||
           o2 == 0x34 || o2 == 0x35 || o2 == 0x0b;
  }
  return 0;
}

static int write_insn(tc_writer *w, const tc_insn_event *in, tc_error *err) {
  const tc_arch *a = w->arch;
  if (!in->state_before || !in->state_after) {
    tc_error_set(err, "ucir: instruction %" PRIu64 " has no register state",
                 in->index);
    w->failed = 1;
    return -1;
  }
  if (!w->kf_done && first_keyframe(w, in->state_before, in->tid, err) < 0)
    return -1;
  w->sys_at = NONE;
  if (flush_pending_maps(w, in->tid, err) < 0)
    return -1;
  if (w->kf_every && in->index - w->last_kf >= w->kf_every) {
    w->last_kf = in->index;
    if (periodic_keyframe(w, in->state_before, in->tid, err) < 0)
      return -1;
  }
  int new_block = w->frame_at == NONE || w->jmp_at == NONE || w->block_end ||
                  !w->have_next || in->pc != w->next_pc ||
                  in->tid != w->frame_tid || w->frame_ops > 0xFFFF0000u;
  if (new_block) {
    if (frame_close(w, err) < 0 || frame_open(w, OP_FRAME, in->tid, err) < 0)
      return -1;
    if (ub_reserve(&w->st, 13) < 0)
      return w_oom(w, err);
    uint8_t *q = w->st.p + w->st.len;
    q = put8(q, OP_JMP);
    q = put64(q, in->pc);
    w->jmp_at = (size_t)(q - w->st.p);
    put32(q, 0);
    w->st.len += 13;
    w->frame_ops = 1;
    w->block_bytes = 0;
  }
  size_t need = 2;
  for (uint32_t i = 0; i < in->nmem; i++)
    need += 13 + (in->mem[i].kind == TC_MEM_WRITE ? in->mem[i].size : 0);
  for (uint16_t i = 0; i < in->nregs; i++)
    if (w->wire[in->regs[i]] != WIRE_NONE)
      need += reg_op_size(w, in->regs[i]);
  if (ub_reserve(&w->st, need) < 0)
    return w_oom(w, err);
  uint8_t *q = w->st.p + w->st.len;
  uint32_t ops = 1;
  for (uint32_t i = 0; i < in->nmem; i++) {
    const tc_mem_access *m = &in->mem[i];
    q = put8(q, m->kind == TC_MEM_WRITE ? OP_MEM_WRITE : OP_MEM_READ);
    q = put64(q, m->addr);
    q = put32(q, m->size);
    if (m->kind == TC_MEM_WRITE) {
      if (m->size)
        memcpy(q, m->after, m->size);
      q += m->size;
      if (dirty_mark(w, m->addr, m->after, m->size) < 0)
        return w_oom(w, err);
    }
    ops++;
  }
  for (uint16_t i = 0; i < in->nregs; i++) {
    const tc_reg_info *ri = &a->regs[in->regs[i]];
    memcpy(w->track + ri->offset, in->state_after + ri->offset, ri->size);
    if (w->wire[in->regs[i]] != WIRE_NONE) {
      q = put_reg(w, q, in->regs[i], in->state_after);
      ops++;
    }
  }
  q = put8(q, OP_STEP);
  q = put8(q, in->size);
  w->st.len = (size_t)(q - w->st.p);
  w->frame_ops += ops;
  w->block_bytes += in->size;
  w->next_pc = (in->pc + in->size) & w->pc_mask;
  w->have_next = 1;
  w->block_end = (a->id == TC_ARCH_X86_64 || a->id == TC_ARCH_X86) &&
                 x86_ends_block(in->bytes, in->size < 16 ? in->size : 16,
                                a->id == TC_ARCH_X86_64);
  w->ninsns++;
  return 0;
}

static int write_syscall(tc_writer *w, const tc_syscall_event *s,
                         tc_error *err) {
  if (w->frame_at == NONE && frame_open(w, OP_FRAME, s->tid, err) < 0)
    return -1;
  uint8_t argc = syscall_argc(s->name);
  if (w->layout == LAYOUT_SPEC && s->nr > 0xFFFF) {
    tc_error_set(err,
                 "ucir: %s: syscall number %u does not fit the spec layout's "
                 "u16",
                 w->path, s->nr);
    w->failed = 1;
    return -1;
  }
  /* The kernel's writes after the maps: a mapping zero-fills. Writes
   * that continue the previous one extend its op (a 256 MiB read arrives
   * as 4 KiB pieces; a SYSCALL op holds at most 65535 effects). */
  ubuf *b = &w->pend;
  uint64_t nops = w->npend;
  if (s->part == 0)
    w->kw_at = NONE;
  for (uint32_t i = 0; i < s->nmem; i++) {
    const tc_mem_access *m = &s->mem[i];
    if (w->kw_at != NONE && m->addr == w->kw_end && m->size &&
        w->kw_at + 13 + (w->kw_end - w->kw_addr) == b->len &&
        w->kw_end - w->kw_addr + m->size <= 0x80000000u) {
      if (ub_reserve(b, m->size) < 0 ||
          dirty_mark(w, m->addr, m->after, m->size) < 0)
        return w_oom(w, err);
      memcpy(b->p + b->len, m->after, m->size);
      b->len += m->size;
      w->kw_end += m->size;
      put32(b->p + w->kw_at + 9, (uint32_t)(w->kw_end - w->kw_addr));
      continue;
    }
    size_t at = b->len;
    long k = put_writes(w, b, m->addr, m->after, m->size, 1);
    if (k < 0)
      return w_oom(w, err);
    if (k == 1) {
      w->kw_at = at;
      w->kw_addr = m->addr;
      w->kw_end = m->addr + m->size;
    }
    nops += (uint64_t)k;
  }
  if (s->more) { /* a SYSCALL op holds all its effects: gather the parts */
    w->npend = nops;
    return 0;
  }
  if (nops > 0xFFFF) {
    tc_error_set(err,
                 "ucir: %s: syscall %u has %" PRIu64
                 " effects; a SYSCALL op holds at most 65535",
                 w->path, s->nr, nops);
    w->failed = 1;
    return -1;
  }
  size_t hdr = (w->layout == LAYOUT_USERCORN ? 16 : 14) + 8u * argc;
  if (ub_reserve(&w->st, hdr + b->len) < 0)
    return w_oom(w, err);
  uint8_t *q = w->st.p + w->st.len;
  q = put8(q, OP_SYSCALL);
  q = w->layout == LAYOUT_USERCORN ? put32(q, s->nr)
                                   : put16(q, (uint16_t)s->nr);
  q = put64(q, (uint64_t)s->ret);
  q = put8(q, argc);
  w->sys_at = (size_t)(q - w->st.p);
  q = put16(q, (uint16_t)nops);
  for (unsigned i = 0; i < argc; i++)
    q = put64(q, s->args[i]);
  if (b->len)
    memcpy(q, b->p, b->len);
  q += b->len;
  w->st.len = (size_t)(q - w->st.p);
  w->sys_ops = (uint32_t)nops;
  w->frame_ops++;
  b->len = 0;
  w->npend = 0;
  w->block_end = 1;
  return 0;
}

static int write_exit(tc_writer *w, const tc_exit_event *x, tc_error *err) {
  (void)x;
  if (!w->kf_done && first_keyframe(w, w->init_state, w->pid, err) < 0)
    return -1;
  if (w->npend) {
    w->sys_at = NONE;
    if (flush_pending_maps(w, w->frame_tid, err) < 0)
      return -1;
  }
  if (ub_reserve(&w->st, 1) < 0)
    return w_oom(w, err);
  if (w->sys_at != NONE && w->sys_ops < 0xFFFF) {
    /* exit/exit_group: EXIT goes inside the SYSCALL, as usercorn puts it */
    w->st.p[w->st.len++] = OP_EXIT;
    put16(w->st.p + w->sys_at, (uint16_t)++w->sys_ops);
  } else {
    if (w->frame_at == NONE &&
        frame_open(w, OP_FRAME, w->frame_tid ? w->frame_tid : w->pid, err) < 0)
      return -1;
    w->st.p[w->st.len++] = OP_EXIT;
    w->frame_ops++;
  }
  w->exit_written = 1;
  return frame_close(w, err);
}

int ucir_write_event(tc_writer *w, const tc_event *ev, tc_error *err) {
  if (w->failed) {
    tc_error_set(err, "ucir: %s: an earlier write failed", w->path);
    return -1;
  }
  if (w->exit_written)
    return 0;
  switch (ev->kind) {
  case TC_EV_INSN:
    return write_insn(w, &ev->u.insn, err);
  case TC_EV_SYSCALL:
    return write_syscall(w, &ev->u.sys, err);
  case TC_EV_MAP:
  case TC_EV_UNMAP:
  case TC_EV_PROTECT: {
    if (!w->kf_done) {
      long n = put_map_event(w, &w->kmap, ev, 1, 0);
      if (n < 0)
        return w_oom(w, err);
      w->nkmap += (uint32_t)n;
      return 0;
    }
    if (w->kf_every) {
      if (ev->kind != TC_EV_PROTECT)
        dirty_drop(w, ev->u.map.addr, ev->u.map.size);
      /* the keyframe gets the map ops; its contents come as dirty bytes */
      tc_event bare = *ev;
      bare.u.map.data = NULL;
      long n = put_map_event(w, &w->kops, &bare, 0, 0);
      if (n < 0)
        return w_oom(w, err);
      w->nkops += (uint32_t)n;
    }
    long n = put_map_event(w, &w->pend, ev, 0, 1);
    if (n < 0)
      return w_oom(w, err);
    w->npend += (uint32_t)n;
    return 0;
  }
  case TC_EV_KEYFRAME:
    /* The first one opens the file; later ones come from our own
     * interval (ucir.keyframe-every), at instruction boundaries. */
    if (!w->kf_done)
      return first_keyframe(w, ev->u.key.state, ev->u.key.tid, err);
    if (memcmp(w->track, ev->u.key.state, w->arch->state_size) != 0) {
      if (frame_close(w, err) < 0)
        return -1;
      return periodic_keyframe(w, ev->u.key.state, ev->u.key.tid, err);
    }
    return 0;
  case TC_EV_FAULT:
    return 0; /* UCIR has no fault op; the trace just ends with EXIT */
  case TC_EV_SIGNAL: {
    /* No signal op either: the frame's bytes become MEM_WRITE ops before
     * the handler's first instruction, like maps outside a syscall. */
    const tc_signal_event *g = &ev->u.sig;
    w->kw_at = NONE;
    for (uint32_t i = 0; i < g->nmem; i++) {
      long k = put_writes(w, &w->pend, g->mem[i].addr, g->mem[i].after,
                          g->mem[i].size, 1);
      if (k < 0)
        return w_oom(w, err);
      w->npend += (uint32_t)k;
    }
    return 0;
  }
  case TC_EV_EXIT:
    return write_exit(w, &ev->u.exit, err);
  case TC_EV_TURN: /* usercorn has no record of it (named as a loss) */
    return 0;
  }
  return 0;
}

static void writer_free(tc_writer *w) {
  if (!w)
    return;
  if (w->fd >= 0)
    close(w->fd);
  free(w->path);
  free(w->wire);
  free(w->st.p);
  free(w->out);
  free(w->pend.p);
  free(w->kmap.p);
  free(w->kops.p);
  free(w->tmp.p);
  free(w->dl);
  free(w->dslots);
  free(w->init_state);
  free(w->track);
  free(w);
}

int ucir_close_writer(tc_writer *w, tc_error *err) {
  if (!w)
    return 0;
  int rc = 0;
  if (w->failed) {
    tc_error_set(err, "ucir: %s: an earlier write failed", w->path);
    rc = -1;
  } else {
    if (!w->kf_done)
      rc = first_keyframe(w, w->init_state, w->pid, err);
    if (rc == 0 && w->npend) {
      w->sys_at = NONE;
      rc = flush_pending_maps(w, w->frame_tid, err);
    }
    if (rc == 0)
      rc = frame_close(w, err);
    if (rc == 0)
      rc = drain(w, 1, err);
    if (rc == 0)
      rc = out_flush(w, err);
  }
  if (close(w->fd) < 0 && rc == 0) {
    tc_error_set(err, "ucir: %s: close failed: %s", w->path, strerror(errno));
    rc = -1;
  }
  w->fd = -1;
  writer_free(w);
  return rc;
}

int ucir_supports(const tc_arch *arch, tc_error *err) {
  if (arch)
    return 0;
  tc_error_set(err, "ucir: no arch");
  return -1;
}

const char *ucir_extension(const tc_arch *arch) {
  (void)arch;
  return ".ucir";
}

static int parse_u64(const char *s, uint64_t *out) {
  if (!s || !*s)
    return -1;
  char *end;
  errno = 0;
  unsigned long long v = strtoull(s, &end, 0);
  if (errno || *end || s[0] == '-')
    return -1;
  *out = v;
  return 0;
}

tc_writer *ucir_open_writer(const char *path, const tc_trace_info *info,
                            tc_error *err) {
  static const char *const known[] = {"layout", "regs", "keyframe-every", NULL};
  if (!info || ucir_supports(info->arch, err) < 0)
    return NULL;
  if (tc_writer_options_check(info, "ucir", known, err) < 0)
    return NULL;
  const tc_arch *a = info->arch;
  int layout = LAYOUT_USERCORN, all_regs = 0;
  const char *opt = tc_writer_option(info, "ucir", "layout");
  if (opt && strcmp(opt, "spec") == 0)
    layout = LAYOUT_SPEC;
  else if (opt && strcmp(opt, "usercorn") != 0) {
    tc_error_set(err, "ucir: layout must be usercorn or spec, not '%s'", opt);
    return NULL;
  }
  opt = tc_writer_option(info, "ucir", "regs");
  if (opt && strcmp(opt, "all") == 0)
    all_regs = 1;
  else if (opt && strcmp(opt, "usercorn") != 0) {
    tc_error_set(err, "ucir: regs must be usercorn or all, not '%s'", opt);
    return NULL;
  }
  uint64_t every = info->keyframe_interval ? info->keyframe_interval : 4096;
  opt = tc_writer_option(info, "ucir", "keyframe-every");
  if (opt && parse_u64(opt, &every) < 0) {
    tc_error_set(err,
                 "ucir: keyframe-every must be a number of instructions "
                 "(0 = only the first keyframe), not '%s'",
                 opt);
    return NULL;
  }

  tc_writer *w = calloc(1, sizeof *w);
  if (!w) {
    tc_error_set(err, "ucir: out of memory");
    return NULL;
  }
  w->fd = -1;
  w->arch = a;
  w->layout = layout;
  w->kf_every = every;
  w->pid = info->pid;
  w->frame_at = w->jmp_at = w->sys_at = NONE;
  w->pc_mask =
      a->ptr_size >= 8 ? UINT64_MAX : ((uint64_t)1 << (8 * a->ptr_size)) - 1;
  w->path = strdup(path);
  w->wire = calloc(a->nregs ? a->nregs : 1, 1);
  w->out = malloc(OUT_BUF);
  w->init_state = calloc(1, a->state_size ? a->state_size : 1);
  w->track = calloc(1, a->state_size ? a->state_size : 1);
  if (!w->path || !w->wire || !w->out || !w->init_state) {
    tc_error_set(err, "ucir: out of memory");
    writer_free(w);
    return NULL;
  }
  if (info->initial_state)
    memcpy(w->init_state, info->initial_state, a->state_size);
  for (int r = 0; r < a->nregs; r++) {
    const tc_reg_info *ri = &a->regs[r];
    /* mips+fpu's FPU registers are not carried: the header names the
     * arch only, and a reader takes the arch's own table */
    if (r >= tc_arch_base(a)->nregs)
      w->wire[r] = WIRE_NONE;
    else if (all_regs)
      w->wire[r] = r == a->pc_reg || ri->uc_id < 0 || ri->uc_id > 0xFFFF
                       ? WIRE_NONE
                   : ri->size <= 8 ? WIRE_REG
                                   : WIRE_SPREG;
    else
      w->wire[r] = (uint8_t)default_wire(a, r);
  }

  /* Header: the names usercorn's own loader would write. */
  const uc_arch_row *row = arch_row(a);
  const char *aname = row ? row->name : a->name;
  if (!row || !row->usercorn)
    tc_notice("ucir: warning: usercorn has no arch \"%s\"; `usercorn "
              "trace` will refuse this file (tracecorn reads it)",
              aname); /* path: the temporary name; the summary names it */
  uint8_t hdr[UCIR_HEADER] = {0};
  memcpy(hdr, "UCIR", 4);
  if (layout == LAYOUT_USERCORN)
    hdr[7] = 1; /* big-endian 1, as usercorn's struc packing writes it */
  memcpy(hdr + 8, aname, strlen(aname) < 32 ? strlen(aname) : 32);
  memcpy(hdr + 40, "linux", 5);
  hdr[72] = hdr[73] = a->big_endian ? 1 : 0;
  memcpy(w->out, hdr, UCIR_HEADER);
  w->outlen = UCIR_HEADER;
  if (layout == LAYOUT_USERCORN) {
    memcpy(w->out + w->outlen, tc_snappy_stream_id, SNAPPY_FRAME_ID_LEN);
    w->outlen += SNAPPY_FRAME_ID_LEN;
  }
  w->fd = tc_outfile_open(path, 0644);
  if (w->fd < 0) {
    tc_error_set(err, "ucir: %s: cannot create: %s", path, strerror(errno));
    writer_free(w);
    return NULL;
  }
  if (out_flush(w, err) < 0) {
    writer_free(w);
    return NULL;
  }
  return w;
}
