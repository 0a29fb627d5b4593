/* UCIR: usercorn's trace format (.ucir), writer and reader.
 * Facts: /work/shared/specs/ucir.md (what usercorn really writes and reads)
 * and ucir-usercorn.spec.txt (its PROTOCOL.md); user notes:
 * docs/formats/ucir.md.
 *
 * File = 74-byte header ("UCIR", version, arch[32], os[32], corder,
 * dorder), then the op stream: in usercorn's layout (the default) as one
 * snappy framing stream, in the spec layout raw. Ops are little-endian
 * packed records; FRAME/KEYFRAME and SYSCALL carry counted op lists.
 *
 * Writer: a KEYFRAME first (registers, mappings and their contents), one
 * FRAME per basic block (JMP, then each instruction's memory ops and
 * register changes before its STEP), a SYSCALL op after a syscall
 * instruction with the kernel's effects, EXIT, and periodic KEYFRAMEs
 * that collapse everything since the previous one.
 *
 * Reader: replays the ops (registers, PC from JMP/STEP, memory from the
 * keyframe and every write) and yields the event stream. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/byteorder.h"
#include "common/memimage.h"
#include "writers/format.h"
#include "writers/io/outfile.h"
#include "writers/io/snappy_frame.h"
#include "writers/io/zst.h"
#include "writers/ucir/ucir.h"

enum {
  OP_NOP = 0,
  OP_FRAME,
  OP_KEYFRAME,
  OP_JMP,
  OP_STEP,
  OP_REG,
  OP_SPREG,
  OP_MEM_READ,
  OP_MEM_WRITE,
  OP_MEM_MAP,
  OP_MEM_UNMAP,
  OP_MEM_PROT,
  OP_SYSCALL,
  OP_EXIT,
  OP_COUNT
};

static const char *const op_names[OP_COUNT] = {
    "NOP",       "FRAME",    "KEYFRAME", "JMP",       "STEP",
    "REG",       "SPREG",    "MEM_READ", "MEM_WRITE", "MEM_MAP",
    "MEM_UNMAP", "MEM_PROT", "SYSCALL",  "EXIT"};

enum { LAYOUT_USERCORN = 0, LAYOUT_SPEC = 1 };
enum { UCIR_HEADER = 74 };
#define NONE ((size_t)-1)

/* ============================================================ utilities */

typedef struct ubuf {
  uint8_t *p;
  size_t len, cap;
} ubuf;

static int ub_reserve(ubuf *b, size_t more) {
  if (b->cap - b->len >= more)
    return 0;
  if (more > SIZE_MAX / 2 - b->len)
    return -1;
  size_t cap = b->cap ? b->cap : 256;
  while (cap - b->len < more)
    cap *= 2;
  uint8_t *p = realloc(b->p, cap);
  if (!p)
    return -1;
  b->p = p;
  b->cap = cap;
  return 0;
}

static int ub_append(ubuf *b, const void *p, size_t n) {
  if (ub_reserve(b, n) < 0)
    return -1;
  if (n)
    memcpy(b->p + b->len, p, n);
  b->len += n;
  return 0;
}

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

/* The arch/os pairs `usercorn trace` accepts (arch.GetArch). */
static int usercorn_accepts(const char *arch, const char *os) {
  static const char *const pairs[][2] = {
      {"x86", "linux"},   {"x86_64", "linux"},  {"arm", "linux"},
      {"arm64", "linux"}, {"mips", "linux"},    {"sparc", "linux"},
      {"x86", "darwin"},  {"x86_64", "darwin"}, {"x86", "cgc"},
      {"x86_16", "DOS"}};
  for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++)
    if (strcmp(pairs[i][0], arch) == 0 && strcmp(pairs[i][1], os) == 0)
      return 1;
  return 0;
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

static int ucir_holds_reg(const tc_arch *arch, int reg) {
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

static int ucir_write_event(tc_writer *w, const tc_event *ev, tc_error *err) {
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

static int ucir_close_writer(tc_writer *w, tc_error *err) {
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

static int ucir_supports(const tc_arch *arch, tc_error *err) {
  if (arch)
    return 0;
  tc_error_set(err, "ucir: no arch");
  return -1;
}

static const char *ucir_extension(const tc_arch *arch) {
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

static tc_writer *ucir_open_writer(const char *path, const tc_trace_info *info,
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
    if (all_regs)
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
    fprintf(stderr,
            "ucir: warning: %s: usercorn has no arch \"%s\"; `usercorn "
            "trace` will refuse this file (tracecorn reads it)\n",
            path, aname);
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

/* ================================================================ reader */

/* Limits that keep a hostile file from asking for huge allocations. */
enum {
  MAX_READ_VALUE = 1 << 20, /* a MEM_READ whose value is rebuilt */
  MAX_MAP_DATA = 64 << 20,  /* keyframe mapping contents in one event */
  MAX_SYS_DEPTH = 256,      /* nested SYSCALL ops */
  SPEC_READ = 1 << 16
};

enum {
  W_ARCH = 1u << 0,
  W_FIRST_NOT_KF = 1u << 1,
  W_TOPLEVEL = 1u << 2,
  W_STEP0 = 1u << 3,
  W_PROT = 1u << 4,
  W_UNKNOWN_REG = 1u << 5,
  W_KF_REG = 1u << 6,
  W_KF_MEM = 1u << 7,
  W_BIG_READ = 1u << 8,
  W_BIG_STEP = 1u << 9,
  W_SPREG = 1u << 10,
  W_ARGC = 1u << 11
};

typedef struct racc {
  uint64_t addr;
  uint32_t size;
  uint8_t kind;
  size_t ob, oa; /* offsets of before/after in the entry's bytes */
} racc;

typedef struct qent {
  tc_event ev;
  int final;
  ubuf bytes;
  racc *acc;
  size_t nacc, capacc;
  tc_mem_access *mem;
  size_t capmem;
  uint8_t *before, *after;
  uint16_t *regs;
  int fresh; /* building: `before` not taken yet */
} qent;

typedef struct lvl {
  uint8_t op;
  uint32_t left;
  qent *sys;
  uint64_t arg0;
} lvl;

typedef struct kmap {
  uint64_t addr, size;
  uint32_t prot;
  size_t name_off;
} kmap;

/* One parsed op (pointers into the source buffer, valid until the next). */
typedef struct uop {
  uint8_t op;
  uint64_t a, b, off, len; /* addr/pid/num, size/count/value, map fields */
  uint32_t count;
  uint8_t prot, argc;
  const uint8_t *data; /* MEM_WRITE/SPREG bytes, SYSCALL args, MAP desc */
  size_t dlen;
  const uint8_t *file;
  size_t flen;
} uop;

struct tc_reader {
  char *path;
  FILE *fp;
  uint64_t fsize, foff;
  int layout;
  /* decoded op stream */
  uint8_t *chunk, *dec;
  ubuf in;
  size_t pos;
  uint64_t in_base; /* decoded offset of in.p[0] */
  int src_eof, seen_id;
  /* header */
  char arch_name[33], os_name[33];
  uint8_t dorder;
  const tc_arch *arch;
  int16_t *regmap;
  size_t nregmap;
  uint64_t pc_mask;
  tc_trace_info info;
  uint8_t *initial_state;
  char *exe_path;
  /* replay */
  uint8_t *cur;
  tc_memimage *mem;
  uint64_t nsteps;
  uint32_t tid;
  qent *build, *stepped, *kfpend, *popped;
  qent **q;
  size_t qhead, qlen, qcap;
  qent **pool;
  size_t npool, cappool;
  lvl lv[MAX_SYS_DEPTH + 2];
  int depth;
  int nkeyframes, kf_first, kf_mapped, ops_seen, resolved;
  /* The current KEYFRAME is another thread's (guest threads): its
   * registers are that thread's, not a check of the replay. */
  int kf_switch;
  kmap *kmaps;
  size_t nkmaps, capkmaps;
  ubuf knames;
  uint64_t *kw; /* keyframe write ranges [lo, hi) pairs */
  size_t nkw, capkw;
  int have_exit;
  tc_exit_event exit;
  unsigned warned;
  int done;
  tc_ucir_stats *stats; /* counts ops when set */
  /* pre-scan (arches without a register table) */
  int scanning;
  uint32_t *scan_size; /* per register number: 0 unseen, else bytes */
};

static void r_warn(tc_reader *r, unsigned kind, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void r_warn(tc_reader *r, unsigned kind, const char *fmt, ...) {
  if (r->warned & kind || r->scanning)
    return;
  r->warned |= kind;
  va_list ap;
  va_start(ap, fmt);
  char msg[400];
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  fprintf(stderr, "ucir: warning: %s: %s\n", r->path, msg);
}

/* ---- source: the decoded op stream */

static int file_read(tc_reader *r, void *p, size_t n, tc_error *err) {
  size_t got = fread(p, 1, n, r->fp);
  r->foff += got;
  if (got == n)
    return 0;
  if (ferror(r->fp))
    tc_error_set(err, "ucir: %s: read failed: %s", r->path, strerror(errno));
  return -1;
}

/* Appends the next piece of decoded data; 0 at the end of the file. */
static int src_fill(tc_reader *r, tc_error *err) {
  if (r->src_eof)
    return 0;
  if (r->pos && (r->pos == r->in.len || r->pos >= (1u << 20))) {
    memmove(r->in.p, r->in.p + r->pos, r->in.len - r->pos);
    r->in.len -= r->pos;
    r->in_base += r->pos;
    r->pos = 0;
  }
  if (r->layout == LAYOUT_SPEC) {
    if (ub_reserve(&r->in, SPEC_READ) < 0)
      goto oom;
    size_t got = fread(r->in.p + r->in.len, 1, SPEC_READ, r->fp);
    r->foff += got;
    r->in.len += got;
    if (got == 0) {
      if (ferror(r->fp)) {
        tc_error_set(err, "ucir: %s: read failed: %s", r->path,
                     strerror(errno));
        return -1;
      }
      r->src_eof = 1;
      return 0;
    }
    return 1;
  }
  for (;;) {
    uint64_t at = r->foff;
    uint8_t h[4];
    size_t got = fread(h, 1, 4, r->fp);
    r->foff += got;
    if (got == 0 && !ferror(r->fp)) {
      r->src_eof = 1;
      return 0;
    }
    if (got < 4) {
      if (ferror(r->fp))
        tc_error_set(err, "ucir: %s: read failed: %s", r->path,
                     strerror(errno));
      else
        tc_error_set(err,
                     "ucir: %s: truncated snappy chunk header at offset "
                     "0x%" PRIx64,
                     r->path, at);
      return -1;
    }
    size_t len = (size_t)get_le(h + 1, 3);
    if (len > SNAPPY_FRAME_MAX_CHUNK) {
      tc_error_set(err,
                   "ucir: %s: snappy chunk of %zu bytes at offset 0x%" PRIx64
                   " (at most %d)",
                   r->path, len, at, SNAPPY_FRAME_MAX_CHUNK);
      return -1;
    }
    if (r->fsize - r->foff < len || file_read(r, r->chunk, len, err) < 0) {
      if (!ferror(r->fp))
        tc_error_set(err,
                     "ucir: %s: truncated snappy chunk at offset 0x%" PRIx64,
                     r->path, at);
      return -1;
    }
    if (!r->seen_id && h[0] != 0xff) {
      tc_error_set(err,
                   "ucir: %s: the snappy stream does not start with its "
                   "identifier",
                   r->path);
      return -1;
    }
    r->seen_id = 1;
    size_t n = 0;
    const char *why = NULL;
    int rc = tc_snappy_unchunk(h[0], r->chunk, len, r->dec, &n, &why);
    if (rc < 0) {
      tc_error_set(err, "ucir: %s: snappy chunk at offset 0x%" PRIx64 ": %s",
                   r->path, at, why);
      return -1;
    }
    if (rc == 0 || n == 0)
      continue;
    if (ub_append(&r->in, r->dec, n) < 0)
      goto oom;
    return 1;
  }
oom:
  tc_error_set(err, "ucir: out of memory");
  return -1;
}

/* 1 if n bytes are available at pos, 0 if the stream ends first. */
static int src_need(tc_reader *r, size_t n, tc_error *err) {
  while (r->in.len - r->pos < n) {
    int rc = src_fill(r, err);
    if (rc <= 0)
      return rc;
  }
  return 1;
}

/* ---- op parsing */

static int truncated(tc_reader *r, uint8_t op, tc_error *err) {
  tc_error_set(err, "ucir: %s: truncated %s op at %s offset 0x%" PRIx64,
               r->path, op < OP_COUNT ? op_names[op] : "?",
               r->layout == LAYOUT_USERCORN ? "decoded" : "file",
               r->in_base + r->pos +
                   (r->layout == LAYOUT_SPEC ? UCIR_HEADER : 0));
  return -1;
}

/* Parses the op at pos into o and consumes it: 1, 0 at a clean end, -1. */
static int parse_op(tc_reader *r, uop *o, tc_error *err) {
  int rc = src_need(r, 1, err);
  if (rc <= 0)
    return rc;
  const int uc = r->layout == LAYOUT_USERCORN;
  uint8_t op = r->in.p[r->pos];
  static const uint8_t fixed_uc[OP_COUNT] = {1,  13, 13, 13, 2,  11, 5,
                                             13, 13, 38, 17, 18, 16, 1};
  static const uint8_t fixed_spec[OP_COUNT] = {1,  13, 13, 13, 2,  11, 5,
                                               13, 13, 34, 13, 14, 14, 1};
  if (op >= OP_COUNT) {
    tc_error_set(err, "ucir: %s: unknown op %u at %s offset 0x%" PRIx64,
                 r->path, op, uc ? "decoded" : "file",
                 r->in_base + r->pos + (uc ? 0 : UCIR_HEADER));
    return -1;
  }
  size_t fixed = uc ? fixed_uc[op] : fixed_spec[op];
  if ((rc = src_need(r, fixed, err)) <= 0)
    return rc < 0 ? -1 : truncated(r, op, err);
  const uint8_t *p = r->in.p + r->pos + 1;
  size_t var = 0;
  memset(o, 0, sizeof *o);
  o->op = op;
  switch (op) {
  case OP_FRAME:
  case OP_KEYFRAME:
    o->a = get_le(p, 8);
    o->count = (uint32_t)get_le(p + 8, 4);
    break;
  case OP_JMP:
  case OP_MEM_READ:
    o->a = get_le(p, 8);
    o->b = get_le(p + 8, 4);
    break;
  case OP_MEM_WRITE:
    o->a = get_le(p, 8);
    o->b = get_le(p + 8, 4);
    var = (size_t)o->b;
    break;
  case OP_STEP:
    o->b = p[0];
    break;
  case OP_REG:
    o->a = get_le(p, 2);
    o->b = get_le(p + 2, 8);
    break;
  case OP_SPREG:
    o->a = get_le(p, 2);
    var = (size_t)get_le(p + 2, 2);
    break;
  case OP_MEM_MAP: {
    unsigned sz = uc ? 8 : 4;
    o->a = get_le(p, 8);
    o->b = get_le(p + 8, sz);
    o->prot = p[8 + sz];
    o->off = get_le(p + 9 + sz, 8);
    o->len = get_le(p + 17 + sz, 8);
    o->dlen = (size_t)get_le(p + 25 + sz, 2);
    o->flen = (size_t)get_le(p + 27 + sz, 2);
    var = o->dlen + o->flen;
    break;
  }
  case OP_MEM_UNMAP:
  case OP_MEM_PROT: {
    unsigned sz = uc ? 8 : 4;
    o->a = get_le(p, 8);
    o->b = get_le(p + 8, sz);
    if (op == OP_MEM_PROT)
      o->prot = p[8 + sz];
    break;
  }
  case OP_SYSCALL: {
    unsigned nsz = uc ? 4 : 2;
    o->a = get_le(p, nsz);
    o->b = get_le(p + nsz, 8);
    o->argc = p[nsz + 8];
    o->count = (uint32_t)get_le(p + nsz + 9, 2);
    var = 8u * o->argc;
    break;
  }
  default:
    break;
  }
  if (var) {
    /* src_need grows the buffer only as decoded data really arrives */
    if ((rc = src_need(r, fixed + var, err)) <= 0)
      return rc < 0 ? -1 : truncated(r, op, err);
    o->data = r->in.p + r->pos + fixed;
    if (op == OP_MEM_WRITE)
      o->dlen = var;
    else if (op == OP_SPREG)
      o->dlen = var;
    else if (op == OP_MEM_MAP)
      o->file = o->data + o->dlen;
  }
  r->pos += fixed + var;
  return 1;
}

/* ---- queue entries */

static qent *ent_get(tc_reader *r) {
  qent *e;
  if (r->npool)
    e = r->pool[--r->npool];
  else {
    e = calloc(1, sizeof *e);
    size_t ss = r->arch->state_size ? r->arch->state_size : 1;
    if (e) {
      e->before = malloc(ss);
      e->after = malloc(ss);
      e->regs = malloc((r->arch->nregs ? r->arch->nregs : 1) * sizeof *e->regs);
    }
    if (!e || !e->before || !e->after || !e->regs) {
      if (e) {
        free(e->before);
        free(e->after);
        free(e->regs);
        free(e);
      }
      return NULL;
    }
  }
  memset(&e->ev, 0, sizeof e->ev);
  e->final = 0;
  e->bytes.len = 0;
  e->nacc = 0;
  e->fresh = 1;
  return e;
}

static void ent_free(qent *e) {
  if (!e)
    return;
  free(e->bytes.p);
  free(e->acc);
  free(e->mem);
  free(e->before);
  free(e->after);
  free(e->regs);
  free(e);
}

static int ent_put(tc_reader *r, qent *e) {
  if (!e)
    return 0;
  if (r->npool == r->cappool) {
    size_t cap = r->cappool ? r->cappool * 2 : 16;
    qent **np = realloc(r->pool, cap * sizeof *np);
    if (!np) {
      ent_free(e);
      return 0;
    }
    r->pool = np;
    r->cappool = cap;
  }
  /* keep big buffers from one huge event from living forever */
  if (e->bytes.cap > (4u << 20)) {
    free(e->bytes.p);
    memset(&e->bytes, 0, sizeof e->bytes);
  }
  r->pool[r->npool++] = e;
  return 0;
}

static int q_push(tc_reader *r, qent *e) {
  if (r->qhead && r->qhead + r->qlen == r->qcap) {
    memmove(r->q, r->q + r->qhead, r->qlen * sizeof *r->q);
    r->qhead = 0;
  }
  if (r->qhead + r->qlen == r->qcap) {
    size_t cap = r->qcap ? r->qcap * 2 : 16;
    qent **nq = realloc(r->q, cap * sizeof *nq);
    if (!nq)
      return -1;
    r->q = nq;
    r->qcap = cap;
  }
  r->q[r->qhead + r->qlen++] = e;
  return 0;
}

static int acc_add(qent *e, uint64_t addr, uint32_t size, uint8_t kind,
                   size_t ob, size_t oa) {
  if (e->nacc == e->capacc) {
    size_t cap = e->capacc ? e->capacc * 2 : 8;
    racc *na = realloc(e->acc, cap * sizeof *na);
    if (!na)
      return -1;
    e->acc = na;
    e->capacc = cap;
  }
  e->acc[e->nacc++] = (racc){addr, size, kind, ob, oa};
  return 0;
}

/* Fills e->mem from e->acc (pointers into e->bytes, now stable). */
static int acc_publish(qent *e, const tc_mem_access **mem, uint32_t *n) {
  if (e->nacc > e->capmem) {
    tc_mem_access *nm = realloc(e->mem, e->nacc * sizeof *nm);
    if (!nm)
      return -1;
    e->mem = nm;
    e->capmem = e->nacc;
  }
  uint32_t k = 0;
  for (size_t i = 0; i < e->nacc; i++) {
    const racc *a = &e->acc[i];
    if (a->ob == NONE)
      continue; /* a read too large to carry its value */
    e->mem[k++] = (tc_mem_access){a->addr, a->size, a->kind, e->bytes.p + a->ob,
                                  e->bytes.p + a->oa};
  }
  *mem = e->mem;
  *n = k;
  return 0;
}

/* ---- replay */

static int oom(tc_error *err) {
  tc_error_set(err, "ucir: out of memory");
  return -1;
}

static void set_pc(tc_reader *r, uint8_t *state, uint64_t pc) {
  tc_state_set(r->arch, state, r->arch->pc_reg, pc & r->pc_mask);
}

static uint64_t get_pc(tc_reader *r, const uint8_t *state) {
  return tc_state_get(r->arch, state, r->arch->pc_reg);
}

/* The keyframe waiting for the PC of the next instruction gets it. */
static void resolve_kf(tc_reader *r) {
  if (r->kfpend) {
    set_pc(r, r->kfpend->after, get_pc(r, r->cur));
    r->kfpend->final = 1;
    if (!r->resolved) {
      memcpy(r->initial_state, r->kfpend->after, r->arch->state_size);
      r->info.entry = get_pc(r, r->cur);
    }
    r->kfpend = NULL;
  }
  if (!r->resolved && r->nkeyframes == 0)
    memcpy(r->initial_state, r->cur, r->arch->state_size);
  r->resolved = 1;
}

/* Before the building instruction's first effect: its state before. */
static void build_touch(tc_reader *r) {
  if (r->build->fresh) {
    memcpy(r->build->before, r->cur, r->arch->state_size);
    r->build->fresh = 0;
  }
}

static int finalize_stepped(tc_reader *r, tc_error *err) {
  qent *e = r->stepped;
  if (!e)
    return 0;
  const tc_arch *a = r->arch;
  memcpy(e->after, r->cur, a->state_size);
  tc_insn_event *in = &e->ev.u.insn;
  uint16_t n = 0;
  for (uint16_t i = 0; i < a->nregs; i++) {
    const tc_reg_info *ri = &a->regs[i];
    if (memcmp(e->before + ri->offset, e->after + ri->offset, ri->size))
      e->regs[n++] = i;
  }
  in->nregs = n;
  in->regs = e->regs;
  in->state_before = e->before;
  in->state_after = e->after;
  if (acc_publish(e, &in->mem, &in->nmem) < 0)
    return oom(err);
  e->final = 1;
  r->stepped = NULL;
  r->build->fresh = 1;
  return 0;
}

/* Copies n image bytes at addr into e->bytes; returns the offset. */
static size_t img_copy(tc_reader *r, qent *e, uint64_t addr, size_t n) {
  /* At least one byte, so e->bytes.p is not NULL even for a zero-size
   * access (callers add the offset to it). */
  if (ub_reserve(&e->bytes, n ? n : 1) < 0)
    return NONE;
  size_t off = e->bytes.len;
  tc_memimage_read(r->mem, addr, e->bytes.p + off, n);
  e->bytes.len += n;
  return off;
}

/* Undoes the writes of e after access `from` on buf = [addr, addr+n). */
static void undo_writes(qent *e, size_t from, uint64_t addr, uint8_t *buf,
                        size_t n) {
  for (size_t j = e->nacc; j-- > from;) {
    const racc *w = &e->acc[j];
    if (w->kind != TC_MEM_WRITE)
      continue;
    for (uint32_t k = 0; k < w->size; k++) {
      uint64_t x = w->addr + k;
      if (x >= addr && x - addr < n)
        buf[x - addr] = e->bytes.p[w->ob + k];
    }
  }
}

static int do_step(tc_reader *r, uint64_t size, tc_error *err) {
  if (finalize_stepped(r, err) < 0)
    return -1;
  resolve_kf(r);
  if (size == 0)
    r_warn(r, W_STEP0, "STEP of size 0");
  build_touch(r);
  qent *e = r->build;
  tc_insn_event *in = &e->ev.u.insn;
  e->ev.kind = TC_EV_INSN;
  in->index = r->nsteps++;
  in->pc = get_pc(r, r->cur);
  in->tid = r->tid;
  if (size > sizeof in->bytes)
    r_warn(r, W_BIG_STEP,
           "STEP of %u bytes: longer than any instruction; the event "
           "carries the first 16",
           (unsigned)size);
  in->size = (uint8_t)(size > sizeof in->bytes ? sizeof in->bytes : size);
  /* Values of reads: the image now, with this instruction's later writes
   * undone. */
  size_t nacc = e->nacc;
  for (size_t i = 0; i < nacc; i++) {
    racc *a = &e->acc[i];
    if (a->kind != TC_MEM_READ)
      continue;
    if (a->size > MAX_READ_VALUE) {
      r_warn(r, W_BIG_READ,
             "MEM_READ of %u bytes at 0x%" PRIx64
             " is not given to its instruction (values are rebuilt for "
             "reads up to 1 MiB)",
             a->size, a->addr);
      continue;
    }
    size_t off = img_copy(r, e, a->addr, a->size);
    if (off == NONE)
      return oom(err);
    undo_writes(e, i + 1, a->addr, e->bytes.p + off, a->size);
    a->ob = a->oa = off;
  }
  /* Instruction bytes: memory before the instruction's own writes. */
  tc_memimage_read(r->mem, in->pc, in->bytes, in->size);
  undo_writes(e, 0, in->pc, in->bytes, in->size);
  if (q_push(r, e) < 0)
    return oom(err);
  r->stepped = e;
  set_pc(r, r->cur, in->pc + size);
  if (!(r->build = ent_get(r)))
    return oom(err);
  return 0;
}

static int reg_index(tc_reader *r, uint64_t num) {
  return num < r->nregmap ? r->regmap[num] : -1;
}

static int set_reg(tc_reader *r, const uop *o, int check) {
  int idx = reg_index(r, o->a);
  if (idx < 0) {
    r_warn(r, W_UNKNOWN_REG,
           "register number %u is not a register of %s; ignored",
           (unsigned)o->a, r->arch->name);
    return 0;
  }
  const tc_reg_info *ri = &r->arch->regs[idx];
  uint8_t v[64] = {0};
  size_t n = ri->size < sizeof v ? ri->size : sizeof v;
  if (o->op == OP_REG) {
    for (size_t i = 0; i < n && i < 8; i++)
      v[i] = (uint8_t)(o->b >> (8 * i));
  } else {
    if (o->dlen != ri->size)
      r_warn(r, W_SPREG, "SPREG of %zu bytes for %s (%u bytes)", o->dlen,
             ri->name, ri->size);
    for (size_t i = 0; i < n && i < o->dlen; i++)
      v[i] = r->arch->big_endian ? o->data[o->dlen - 1 - i] : o->data[i];
  }
  uint8_t *dst = r->cur + ri->offset;
  if (check && memcmp(dst, v, n) != 0)
    r_warn(r, W_KF_REG,
           "a later KEYFRAME's %s differs from the value replayed so far",
           ri->name);
  memcpy(dst, v, n);
  return 0;
}

static char *map_name(const uop *o, char *buf, size_t max) {
  if (o->flen) {
    snprintf(buf, max, "%.*s", (int)o->flen, (const char *)o->file);
  } else if (o->dlen == 3 && memcmp(o->data, "brk", 3) == 0) {
    snprintf(buf, max, "[heap]");
  } else if (o->dlen == 0 || (o->dlen == 4 && !memcmp(o->data, "mmap", 4)) ||
             (o->dlen == 3 && !memcmp(o->data, "exe", 3)) ||
             (o->dlen == 6 && !memcmp(o->data, "interp", 6))) {
    buf[0] = 0;
  } else {
    snprintf(buf, max, "[%.*s]", (int)o->dlen, (const char *)o->data);
  }
  return buf;
}

static int push_map_event(tc_reader *r, tc_event_kind kind, uint64_t addr,
                          uint64_t size, uint32_t prot, const char *name,
                          const uint8_t *data, size_t dlen, tc_error *err) {
  qent *e = ent_get(r);
  if (!e)
    return oom(err);
  e->ev.kind = kind;
  size_t nlen = name ? strlen(name) + 1 : 1;
  if (ub_reserve(&e->bytes, nlen + dlen) < 0) {
    ent_put(r, e);
    return oom(err);
  }
  memcpy(e->bytes.p, name ? name : "", nlen);
  if (data)
    memcpy(e->bytes.p + nlen, data, dlen);
  e->ev.u.map = (tc_map_event){addr, size,
                               prot, (const char *)e->bytes.p,
                               0,    data ? e->bytes.p + nlen : NULL};
  e->final = 1;
  if (q_push(r, e) < 0) {
    ent_put(r, e);
    return oom(err);
  }
  return 0;
}

static int apply_map(tc_reader *r, uint8_t op, uint64_t addr, uint64_t size) {
  tc_event ev = {.kind = op == OP_MEM_MAP ? TC_EV_MAP : TC_EV_UNMAP};
  ev.u.map.addr = addr;
  ev.u.map.size = size;
  return tc_memimage_apply(r->mem, &ev);
}

/* The first KEYFRAME has been read: MAP events with their contents, then
 * the KEYFRAME event (its PC comes with the first JMP). */
/* One MAP event for [addr, addr+size) of keyframe mapping m, carrying the
 * replayed contents (NULL when all zero). size <= MAX_MAP_DATA if data. */
static int kf_map_event(tc_reader *r, const kmap *m, uint64_t addr,
                        uint64_t size, int with_data, tc_error *err) {
  const char *name = (const char *)r->knames.p + m->name_off;
  uint8_t *buf = NULL;
  const uint8_t *data = NULL;
  if (with_data && size) {
    buf = malloc((size_t)size);
    if (!buf)
      return oom(err);
    tc_memimage_read(r->mem, addr, buf, (size_t)size);
    for (size_t k = 0; k < size; k++)
      if (buf[k]) {
        data = buf;
        break;
      }
  }
  int rc = push_map_event(r, TC_EV_MAP, addr, size, m->prot, name, data,
                          data ? (size_t)size : 0, err);
  free(buf);
  return rc;
}

static int cmp_range(const void *a, const void *b) {
  const uint64_t *x = a, *y = b;
  return x[0] < y[0] ? -1 : x[0] > y[0];
}

/* The first KEYFRAME has been read: MAP events with their contents, then
 * the KEYFRAME event (its PC comes with the first JMP). A mapping larger
 * than MAX_MAP_DATA is given as several MAP events: zero gaps, and pieces
 * of at most MAX_MAP_DATA around the bytes the keyframe wrote. */
static int close_first_keyframe(tc_reader *r, tc_error *err) {
  uint64_t *rg = NULL;
  for (size_t i = 0; i < r->nkmaps; i++) {
    const kmap *m = &r->kmaps[i];
    uint64_t end = m->addr + m->size < m->addr ? UINT64_MAX : m->addr + m->size;
    size_t n = 0;
    for (size_t k = 0; k < r->nkw; k++)
      if (r->kw[2 * k + 1] > m->addr && r->kw[2 * k] < end)
        n++;
    if (m->size <= MAX_MAP_DATA || n == 0) {
      if (kf_map_event(r, m, m->addr, m->size, n > 0 && m->size <= MAX_MAP_DATA,
                       err) < 0)
        goto fail;
      continue;
    }
    free(rg);
    rg = malloc(n * 2 * sizeof *rg);
    if (!rg) {
      oom(err);
      goto fail;
    }
    n = 0;
    for (size_t k = 0; k < r->nkw; k++) {
      uint64_t lo = r->kw[2 * k], hi = r->kw[2 * k + 1];
      if (hi > m->addr && lo < end) {
        rg[2 * n] = lo < m->addr ? m->addr : lo;
        rg[2 * n + 1] = hi > end ? end : hi;
        n++;
      }
    }
    qsort(rg, n, 2 * sizeof *rg, cmp_range);
    uint64_t at = m->addr;
    for (size_t k = 0; k < n;) {
      if (rg[2 * k + 1] <= at) {
        k++;
        continue;
      }
      uint64_t lo = rg[2 * k] < at ? at : rg[2 * k] & ~(uint64_t)4095;
      if (lo < at)
        lo = at;
      uint64_t hi = lo + MAX_MAP_DATA > end || lo + MAX_MAP_DATA < lo
                        ? end
                        : lo + MAX_MAP_DATA;
      /* end the piece after the last write that starts within it */
      uint64_t last = rg[2 * k + 1];
      for (size_t q = k; q < n && rg[2 * q] < hi; q++)
        if (rg[2 * q + 1] > last)
          last = rg[2 * q + 1];
      uint64_t pe = ((last - m->addr + 4095) & ~(uint64_t)4095) + m->addr;
      if (pe > hi || pe < last)
        pe = hi;
      if (lo > at && kf_map_event(r, m, at, lo - at, 0, err) < 0)
        goto fail;
      if (kf_map_event(r, m, lo, pe - lo, 1, err) < 0)
        goto fail;
      at = pe;
    }
    if (at < end && kf_map_event(r, m, at, end - at, 0, err) < 0)
      goto fail;
  }
  free(rg);
  r->nkmaps = r->nkw = 0;
  r->knames.len = 0;
  return 0;
fail:
  free(rg);
  return -1;
}

static int push_keyframe(tc_reader *r, tc_error *err) {
  qent *e = ent_get(r);
  if (!e)
    return oom(err);
  if (r->kfpend)
    resolve_kf(r); /* an earlier one without a JMP since */
  e->ev.kind = TC_EV_KEYFRAME;
  memcpy(e->after, r->cur, r->arch->state_size);
  e->ev.u.key = (tc_keyframe_event){r->nsteps, r->tid, e->after};
  if (q_push(r, e) < 0) {
    ent_put(r, e);
    return oom(err);
  }
  r->kfpend = e;
  return 0;
}

static int close_level(tc_reader *r, tc_error *err) {
  lvl *l = &r->lv[--r->depth];
  if (l->op == OP_SYSCALL) {
    qent *e = l->sys;
    if (acc_publish(e, &e->ev.u.sys.mem, &e->ev.u.sys.nmem) < 0)
      return oom(err);
    e->final = 1;
    if (q_push(r, e) < 0)
      return oom(err);
    return 0;
  }
  if (l->op == OP_KEYFRAME && r->kf_first) {
    if (close_first_keyframe(r, err) < 0 || push_keyframe(r, err) < 0)
      return -1;
    r->build->fresh = 1;
  } else if (l->op == OP_KEYFRAME) {
    return push_keyframe(r, err);
  }
  return 0;
}

/* Applies one op to the replay state, queuing the events it makes. */
static int apply_op(tc_reader *r, const uop *o, tc_error *err) {
  qent *sys = NULL;
  for (int d = r->depth - 1; d >= 0 && !sys; d--)
    if (r->lv[d].op == OP_SYSCALL)
      sys = r->lv[d].sys;
  int in_kf = r->depth > 0 && r->lv[0].op == OP_KEYFRAME;
  int later_kf = in_kf && !r->kf_first;
  int frame_level = !sys && !in_kf;

  if (r->depth == 0 && o->op != OP_FRAME && o->op != OP_KEYFRAME)
    r_warn(r, W_TOPLEVEL, "a %s op outside any FRAME", op_names[o->op]);
  if (!r->ops_seen++ && o->op != OP_KEYFRAME)
    r_warn(r, W_FIRST_NOT_KF, "the first op is a %s, not a KEYFRAME",
           op_names[o->op]);
  if (frame_level && r->stepped &&
      (o->op == OP_REG || o->op == OP_SPREG || o->op == OP_MEM_READ ||
       o->op == OP_MEM_WRITE) &&
      finalize_stepped(r, err) < 0)
    return -1;

  switch (o->op) {
  case OP_NOP:
    return 0;
  case OP_FRAME:
  case OP_KEYFRAME:
    if (r->depth > 0) {
      tc_error_set(err, "ucir: %s: nested frame (a %s inside a %s)", r->path,
                   op_names[o->op], op_names[r->lv[r->depth - 1].op]);
      return -1;
    }
    r->kf_switch = o->op == OP_KEYFRAME && (uint32_t)o->a != r->tid;
    r->tid = (uint32_t)o->a;
    r->kf_mapped = 0;
    if (o->op == OP_KEYFRAME)
      r->kf_first = r->nkeyframes++ == 0;
    return 0;
  case OP_JMP:
    set_pc(r, r->cur, o->a);
    if (r->stepped) {
      if (finalize_stepped(r, err) < 0)
        return -1;
    } else {
      /* effects with no STEP (usercorn's keyframe reads) stay unowned */
      r->build->nacc = 0;
      r->build->bytes.len = 0;
      r->build->fresh = 1;
    }
    resolve_kf(r);
    return 0;
  case OP_STEP:
    return do_step(r, o->b, err);
  case OP_REG:
  case OP_SPREG:
    if (frame_level)
      build_touch(r);
    return set_reg(r, o, later_kf && !r->kf_switch);
  case OP_MEM_READ:
    if (!frame_level)
      return 0; /* the kernel's (or strace's) reads carry nothing */
    build_touch(r);
    if (acc_add(r->build, o->a, (uint32_t)o->b, TC_MEM_READ, NONE, NONE) < 0)
      return oom(err);
    return 0;
  case OP_MEM_WRITE: {
    qent *e = frame_level ? r->build : sys;
    if (in_kf) {
      if (later_kf && !r->kf_mapped) {
        /* (after a MEM_MAP in this keyframe the image was zero-filled) */
        uint8_t tmp[256];
        for (size_t k = 0; k < o->dlen; k += sizeof tmp) {
          size_t n = o->dlen - k < sizeof tmp ? o->dlen - k : sizeof tmp;
          tc_memimage_read(r->mem, o->a + k, tmp, n);
          if (memcmp(tmp, o->data + k, n) != 0) {
            r_warn(r, W_KF_MEM,
                   "a later KEYFRAME's memory at 0x%" PRIx64
                   " differs from the replayed memory",
                   o->a + k);
            break;
          }
        }
      } else if (o->dlen) {
        if (r->nkw == r->capkw) {
          size_t cap = r->capkw ? r->capkw * 2 : 16;
          uint64_t *nk = realloc(r->kw, cap * 2 * sizeof *nk);
          if (!nk)
            return oom(err);
          r->kw = nk;
          r->capkw = cap;
        }
        r->kw[2 * r->nkw] = o->a;
        r->kw[2 * r->nkw + 1] =
            o->a + o->dlen < o->a ? UINT64_MAX : o->a + o->dlen;
        r->nkw++;
      }
    } else {
      if (frame_level)
        build_touch(r);
      size_t ob = img_copy(r, e, o->a, o->dlen);
      if (ob == NONE || ub_append(&e->bytes, o->data, o->dlen) < 0 ||
          acc_add(e, o->a, (uint32_t)o->dlen, TC_MEM_WRITE, ob, ob + o->dlen) <
              0)
        return oom(err);
    }
    tc_event ev = {.kind = TC_EV_SYSCALL};
    tc_mem_access acc = {o->a, (uint32_t)o->dlen, TC_MEM_WRITE, o->data,
                         o->data};
    ev.u.sys.nmem = 1;
    ev.u.sys.mem = &acc;
    if (o->dlen && tc_memimage_apply(r->mem, &ev) < 0)
      return oom(err);
    return 0;
  }
  case OP_MEM_MAP:
  case OP_MEM_UNMAP:
  case OP_MEM_PROT: {
    if (o->prot & ~7u)
      r_warn(r, W_PROT, "protection bits 0x%x beyond RWX", o->prot);
    if (o->op != OP_MEM_PROT && apply_map(r, o->op, o->a, o->b) < 0)
      return oom(err);
    char name[512] = "";
    if (o->op == OP_MEM_MAP)
      map_name(o, name, sizeof name);
    if (o->op == OP_MEM_MAP && !r->exe_path && o->flen && o->dlen == 3 &&
        memcmp(o->data, "exe", 3) == 0) {
      r->exe_path = strdup(name);
      r->info.exe_path = r->exe_path;
    }
    if (in_kf && r->kf_first) {
      if (o->op != OP_MEM_MAP)
        return 0;
      if (r->nkmaps == r->capkmaps) {
        size_t cap = r->capkmaps ? r->capkmaps * 2 : 16;
        kmap *nk = realloc(r->kmaps, cap * sizeof *nk);
        if (!nk)
          return oom(err);
        r->kmaps = nk;
        r->capkmaps = cap;
      }
      r->kmaps[r->nkmaps++] = (kmap){o->a, o->b, o->prot & 7u, r->knames.len};
      if (ub_append(&r->knames, name, strlen(name) + 1) < 0)
        return oom(err);
      return 0;
    }
    if (later_kf) {
      r->kf_mapped = 1;
      return 0;
    }
    resolve_kf(r);
    return push_map_event(r,
                          o->op == OP_MEM_MAP     ? TC_EV_MAP
                          : o->op == OP_MEM_UNMAP ? TC_EV_UNMAP
                                                  : TC_EV_PROTECT,
                          o->a, o->b, o->prot & 7u, name, NULL, 0, err);
  }
  case OP_SYSCALL: {
    int nsys = r->depth - (r->depth > 0 && r->lv[0].op != OP_SYSCALL);
    if (nsys >= MAX_SYS_DEPTH) {
      tc_error_set(err, "ucir: %s: SYSCALL ops nested more than %d deep",
                   r->path, MAX_SYS_DEPTH);
      return -1;
    }
    resolve_kf(r);
    qent *e = ent_get(r);
    if (!e)
      return oom(err);
    e->ev.kind = TC_EV_SYSCALL;
    tc_syscall_event *s = &e->ev.u.sys;
    s->insn_index = r->nsteps ? r->nsteps - 1 : 0;
    s->tid = r->tid;
    s->nr = (uint32_t)o->a;
    s->name = tc_arch_syscall_name(r->arch, s->nr);
    s->ret = (int64_t)o->b;
    if (o->argc > 6)
      r_warn(r, W_ARGC, "a SYSCALL with %u arguments (the events keep 6)",
             o->argc);
    for (unsigned i = 0; i < o->argc && i < 6; i++)
      s->args[i] = get_le(o->data + 8 * i, 8);
    r->lv[r->depth++] = (lvl){OP_SYSCALL, o->count, e, s->args[0]};
    return 0;
  }
  case OP_EXIT: {
    memset(&r->exit, 0, sizeof r->exit);
    r->exit.reason = TC_EXIT_EXITED;
    int found = 0;
    for (int d = r->depth - 1; d >= 0; d--)
      if (r->lv[d].op == OP_SYSCALL) {
        r->exit.status = (int)(r->lv[d].arg0 & 0xff);
        found = 1;
        break;
      }
    if (!found)
      r->exit.message = "stopped; UCIR does not record why";
    r->have_exit = 1;
    return 0;
  }
  }
  return 0;
}

/* Records which register numbers a file uses (arches with no table). */
static void scan_op(tc_reader *r, const uop *o) {
  if (o->op != OP_REG && o->op != OP_SPREG)
    return;
  uint32_t n = o->op == OP_REG ? 8 : (uint32_t)o->dlen;
  if (n == 0)
    n = 1;
  if (n > r->scan_size[o->a])
    r->scan_size[o->a] = n;
}

static int finish(tc_reader *r, tc_error *err) {
  if (r->depth > 0) {
    const lvl *l = &r->lv[r->depth - 1];
    tc_error_set(err,
                 "ucir: %s: the file ends inside a %s (%u more ops "
                 "announced)",
                 r->path, op_names[l->op], l->left);
    return -1;
  }
  r->done = 1;
  if (r->scanning)
    return 0;
  if (finalize_stepped(r, err) < 0)
    return -1;
  resolve_kf(r);
  if (r->have_exit) {
    qent *e = ent_get(r);
    if (!e)
      return oom(err);
    e->ev.kind = TC_EV_EXIT;
    e->ev.u.exit = r->exit;
    e->ev.u.exit.insn_count = r->nsteps;
    e->final = 1;
    if (q_push(r, e) < 0)
      return oom(err);
  }
  return 0;
}

/* Reads and applies one op. 1: progress, 0: the end, -1: error. */
static int pump(tc_reader *r, tc_error *err) {
  if (r->done)
    return 0;
  uop o;
  int rc = parse_op(r, &o, err);
  if (rc < 0)
    return -1;
  if (rc == 0)
    return finish(r, err) < 0 ? -1 : 0;
  if (r->depth > 0 && r->lv[r->depth - 1].left == 0) {
    /* cannot happen: levels close when their count runs out */
    tc_error_set(err, "ucir: %s: internal nesting error", r->path);
    return -1;
  }
  if (r->stats && !r->scanning) {
    r->stats->ops[o.op]++;
    r->stats->toplevel += r->depth == 0;
  }
  if (r->depth > 0)
    r->lv[r->depth - 1].left--;
  if (r->scanning) {
    if ((o.op == OP_FRAME || o.op == OP_KEYFRAME) && r->depth > 0) {
      tc_error_set(err, "ucir: %s: nested frame (a %s inside a %s)", r->path,
                   op_names[o.op], op_names[r->lv[r->depth - 1].op]);
      return -1;
    }
    if (o.op == OP_SYSCALL && r->depth > MAX_SYS_DEPTH) {
      tc_error_set(err, "ucir: %s: SYSCALL ops nested more than %d deep",
                   r->path, MAX_SYS_DEPTH);
      return -1;
    }
    scan_op(r, &o);
    if (o.op == OP_SYSCALL)
      r->lv[r->depth++] = (lvl){OP_SYSCALL, o.count, NULL, 0};
  } else if (apply_op(r, &o, err) < 0) {
    return -1;
  }
  if (o.op == OP_FRAME || o.op == OP_KEYFRAME)
    r->lv[r->depth++] = (lvl){o.op, o.count, NULL, 0};
  while (r->depth > 0 && r->lv[r->depth - 1].left == 0) {
    if (r->scanning)
      r->depth--;
    else if (close_level(r, err) < 0)
      return -1;
  }
  return 1;
}

/* ---- arches the reader builds itself */

typedef struct fb_reg {
  const char *name;
  int uc_id;
  uint16_t flags;
} fb_reg;

static const fb_reg fb_arm[] = {{"r0", 66, TC_REG_GPR},
                                {"r1", 67, TC_REG_GPR},
                                {"r2", 68, TC_REG_GPR},
                                {"r3", 69, TC_REG_GPR},
                                {"r4", 70, TC_REG_GPR},
                                {"r5", 71, TC_REG_GPR},
                                {"r6", 72, TC_REG_GPR},
                                {"r7", 73, TC_REG_GPR},
                                {"r8", 74, TC_REG_GPR},
                                {"r9", 75, TC_REG_GPR},
                                {"r10", 76, TC_REG_GPR},
                                {"r11", 77, TC_REG_GPR},
                                {"r12", 78, TC_REG_GPR},
                                {"sp", 12, TC_REG_SP},
                                {"lr", 10, TC_REG_GPR},
                                {"pc", 11, TC_REG_PC},
                                {NULL, 0, 0}};
static const fb_reg fb_mips[] = {
    {"at", 3, TC_REG_GPR},  {"v0", 4, TC_REG_GPR},  {"v1", 5, TC_REG_GPR},
    {"a0", 6, TC_REG_GPR},  {"a1", 7, TC_REG_GPR},  {"a2", 8, TC_REG_GPR},
    {"a3", 9, TC_REG_GPR},  {"t0", 10, TC_REG_GPR}, {"t1", 11, TC_REG_GPR},
    {"t2", 12, TC_REG_GPR}, {"t3", 13, TC_REG_GPR}, {"t4", 14, TC_REG_GPR},
    {"t5", 15, TC_REG_GPR}, {"t6", 16, TC_REG_GPR}, {"t7", 17, TC_REG_GPR},
    {"s0", 18, TC_REG_GPR}, {"s1", 19, TC_REG_GPR}, {"s2", 20, TC_REG_GPR},
    {"s3", 21, TC_REG_GPR}, {"s4", 22, TC_REG_GPR}, {"s5", 23, TC_REG_GPR},
    {"s6", 24, TC_REG_GPR}, {"s7", 25, TC_REG_GPR}, {"t8", 26, TC_REG_GPR},
    {"t9", 27, TC_REG_GPR}, {"k0", 28, TC_REG_GPR}, {"k1", 29, TC_REG_GPR},
    {"gp", 30, TC_REG_GPR}, {"sp", 31, TC_REG_SP},  {"fp", 32, TC_REG_GPR},
    {"ra", 33, TC_REG_GPR}, {"pc", 1, TC_REG_PC},   {NULL, 0, 0}};
static const fb_reg fb_arm64[] = {
    {"x0", 199, TC_REG_GPR},  {"x1", 200, TC_REG_GPR},
    {"x2", 201, TC_REG_GPR},  {"x3", 202, TC_REG_GPR},
    {"x4", 203, TC_REG_GPR},  {"x5", 204, TC_REG_GPR},
    {"x6", 205, TC_REG_GPR},  {"x7", 206, TC_REG_GPR},
    {"x8", 207, TC_REG_GPR},  {"x9", 208, TC_REG_GPR},
    {"x10", 209, TC_REG_GPR}, {"x11", 210, TC_REG_GPR},
    {"x12", 211, TC_REG_GPR}, {"x13", 212, TC_REG_GPR},
    {"x14", 213, TC_REG_GPR}, {"x15", 214, TC_REG_GPR},
    {"x16", 215, TC_REG_GPR}, {"x17", 216, TC_REG_GPR},
    {"x18", 217, TC_REG_GPR}, {"x19", 218, TC_REG_GPR},
    {"x20", 219, TC_REG_GPR}, {"x21", 220, TC_REG_GPR},
    {"x22", 221, TC_REG_GPR}, {"x23", 222, TC_REG_GPR},
    {"x24", 223, TC_REG_GPR}, {"x25", 224, TC_REG_GPR},
    {"x26", 225, TC_REG_GPR}, {"x27", 226, TC_REG_GPR},
    {"x28", 227, TC_REG_GPR}, {"fp", 1, TC_REG_GPR},
    {"lr", 2, TC_REG_GPR},    {"sp", 4, TC_REG_SP},
    {"pc", 260, TC_REG_PC},   {NULL, 0, 0}};
static const fb_reg fb_sparc[] = {
    {"g1", 54, TC_REG_GPR}, {"g2", 55, TC_REG_GPR}, {"g3", 56, TC_REG_GPR},
    {"g4", 57, TC_REG_GPR}, {"g5", 58, TC_REG_GPR}, {"g6", 59, TC_REG_GPR},
    {"g7", 60, TC_REG_GPR}, {"o0", 78, TC_REG_GPR}, {"o1", 79, TC_REG_GPR},
    {"o2", 80, TC_REG_GPR}, {"o3", 81, TC_REG_GPR}, {"o4", 82, TC_REG_GPR},
    {"o5", 83, TC_REG_GPR}, {"sp", 84, TC_REG_SP},  {"o7", 85, TC_REG_GPR},
    {"l0", 70, TC_REG_GPR}, {"l1", 71, TC_REG_GPR}, {"l2", 72, TC_REG_GPR},
    {"l3", 73, TC_REG_GPR}, {"l4", 74, TC_REG_GPR}, {"l5", 75, TC_REG_GPR},
    {"l6", 76, TC_REG_GPR}, {"l7", 77, TC_REG_GPR}, {"i0", 61, TC_REG_GPR},
    {"i1", 62, TC_REG_GPR}, {"i2", 63, TC_REG_GPR}, {"i3", 64, TC_REG_GPR},
    {"i4", 65, TC_REG_GPR}, {"i5", 66, TC_REG_GPR}, {"fp", 67, TC_REG_GPR},
    {"i7", 68, TC_REG_GPR}, {"pc", 88, TC_REG_PC},  {NULL, 0, 0}};

typedef struct fb_arch {
  const char *name;
  tc_arch_id id;
  const fb_reg *regs;
  uint8_t ptr;
} fb_arch;

static const fb_arch fb_arches[] = {
    {"arm", TC_ARCH_ARM, fb_arm, 4},
    {"arm64", TC_ARCH_ARM64, fb_arm64, 8},
    {"mips", TC_ARCH_MIPSEL, fb_mips, 4},
    {"sparc", TC_ARCH_SPARC, fb_sparc, 4},
};

/* Arches the reader builds live as long as the process: events and the
 * trace info point at them after the reader is closed (evlog, convert).
 * Identical ones are shared, so reading many files does not grow this. */
typedef struct built_arch {
  struct built_arch *next;
  tc_arch arch;
  tc_reg_info *regs;
  char *names;
} built_arch;

static built_arch *built_arches;
static pthread_mutex_t built_lock = PTHREAD_MUTEX_INITIALIZER;

static int same_arch(const tc_arch *a, const tc_arch *b) {
  if (strcmp(a->name, b->name) != 0 || a->id != b->id ||
      a->big_endian != b->big_endian || a->nregs != b->nregs)
    return 0;
  for (int i = 0; i < a->nregs; i++)
    if (strcmp(a->regs[i].name, b->regs[i].name) != 0 ||
        a->regs[i].size != b->regs[i].size ||
        a->regs[i].uc_id != b->regs[i].uc_id)
      return 0;
  return 1;
}

/* Builds the reader's arch: from a table (fb) or the registers the
 * pre-scan saw (fb == NULL). Every register takes its pointer size (8 for
 * unknown arches, more for wider SPREG values). */
static int build_arch(tc_reader *r, const fb_arch *fb, tc_error *err) {
  size_t n = 1, names = 8 + strlen(r->arch_name) + 1;
  if (fb) {
    n = 0;
    for (const fb_reg *g = fb->regs; g->name; g++)
      n++;
  } else {
    for (size_t i = 0; i < 65536; i++)
      if (r->scan_size[i]) {
        n++;
        names += 8;
      }
  }
  built_arch *b = calloc(1, sizeof *b);
  tc_reg_info *regs = calloc(n, sizeof *regs);
  char *nb = malloc(names);
  if (!b || !regs || !nb) {
    free(b);
    free(regs);
    free(nb);
    return oom(err);
  }
  tc_arch *a = &b->arch;
  b->regs = regs;
  b->names = nb;
  uint8_t ptr = fb ? fb->ptr : 8;
  uint32_t off = 0;
  size_t k = 0, o = 0;
  if (fb) {
    for (const fb_reg *g = fb->regs; g->name; g++, k++) {
      regs[k] = (tc_reg_info){g->name, ptr, g->flags, off, g->uc_id};
      if (g->flags & TC_REG_PC)
        a->pc_reg = (uint16_t)k;
      if (g->flags & TC_REG_SP)
        a->sp_reg = a->flags_reg = (uint16_t)k;
      off += ptr;
    }
  } else {
    regs[k++] = (tc_reg_info){"pc", 8, TC_REG_PC, off, -1};
    off += 8;
    for (size_t i = 0; i < 65536 && k < n && k < 0xFFFF; i++) {
      if (!r->scan_size[i])
        continue;
      uint32_t sz = r->scan_size[i] < 8 ? 8 : r->scan_size[i];
      int w = snprintf(nb + o, 8, "r%zu", i);
      regs[k++] = (tc_reg_info){nb + o, (uint16_t)sz, TC_REG_GPR, off, (int)i};
      o += (size_t)w + 1;
      off += sz;
    }
  }
  snprintf(nb + o, names - o, "%s", fb ? fb->name : r->arch_name);
  a->name = nb + o;
  a->id = fb ? (r->dorder && fb->id == TC_ARCH_MIPSEL ? TC_ARCH_MIPS : fb->id)
             : TC_ARCH_NONE;
  a->big_endian = r->dorder;
  a->ptr_size = ptr;
  a->page_size = 4096;
  a->max_insn_size = 16;
  a->regs = regs;
  a->nregs = (uint16_t)k;
  a->state_size = off ? off : 1;
  a->sys.ret_reg = a->sys.nr_reg = a->sys.err_reg = -1;
  for (int i = 0; i < 6; i++)
    a->sys.arg_regs[i] = -1;
  pthread_mutex_lock(&built_lock);
  for (built_arch *e = built_arches; e; e = e->next)
    if (same_arch(&e->arch, a)) {
      r->arch = &e->arch;
      pthread_mutex_unlock(&built_lock);
      free(b);
      free(regs);
      free(nb);
      return 0;
    }
  b->next = built_arches;
  built_arches = b;
  r->arch = &b->arch;
  pthread_mutex_unlock(&built_lock);
  return 0;
}

/* ---- open / next / close */

static void ucir_close_reader(tc_reader *r) {
  if (!r)
    return;
  if (r->fp)
    fclose(r->fp);
  ent_put(r, r->popped);
  ent_put(r, r->build);
  for (size_t i = 0; i < r->qlen; i++)
    ent_free(r->q[r->qhead + i]);
  for (int d = 0; d < r->depth; d++)
    if (r->lv[d].op == OP_SYSCALL)
      ent_free(r->lv[d].sys);
  for (size_t i = 0; i < r->npool; i++)
    ent_free(r->pool[i]);
  free(r->pool);
  free(r->q);
  tc_memimage_free(r->mem);
  free(r->chunk);
  free(r->dec);
  free(r->in.p);
  free(r->regmap);
  free(r->cur);
  free(r->initial_state);
  free(r->exe_path);
  free(r->kmaps);
  free(r->knames.p);
  free(r->kw);
  free(r->scan_size);
  free(r->path);
  free(r);
}

static int ucir_probe(const uint8_t *head, size_t n, const char *path) {
  (void)path;
  return n >= 4 && memcmp(head, "UCIR", 4) == 0;
}

static int read_header(tc_reader *r, tc_error *err) {
  uint8_t h[UCIR_HEADER + SNAPPY_FRAME_ID_LEN];
  size_t got = fread(h, 1, sizeof h, r->fp);
  if (got < 4 || memcmp(h, "UCIR", 4) != 0) {
    tc_error_set(err, "ucir: %s: not a UCIR file (bad magic)", r->path);
    return -1;
  }
  if (got < UCIR_HEADER) {
    tc_error_set(err, "ucir: %s: truncated header (%zu of 74 bytes)", r->path,
                 got);
    return -1;
  }
  if (h[72] > 1 || h[73] > 1) {
    tc_error_set(err,
                 "ucir: %s: bad byte order in the header (corder %u, dorder "
                 "%u; 0 or 1 expected)",
                 r->path, h[72], h[73]);
    return -1;
  }
  memcpy(r->arch_name, h + 8, 32);
  memcpy(r->os_name, h + 40, 32);
  r->dorder = h[73];
  size_t rest = got - UCIR_HEADER;
  /* Layout: the snappy stream identifier (a prefix of it in a truncated
   * file) means usercorn's; a header-only file goes by the version. */
  if (rest == 0)
    r->layout = get_le(h + 4, 4) == 0x01000000u ? LAYOUT_USERCORN : LAYOUT_SPEC;
  else
    r->layout = memcmp(h + UCIR_HEADER, tc_snappy_stream_id, rest) == 0
                    ? LAYOUT_USERCORN
                    : LAYOUT_SPEC;
  if (fseeko(r->fp, UCIR_HEADER, SEEK_SET) != 0) {
    tc_error_set(err, "ucir: %s: cannot seek: %s", r->path, strerror(errno));
    return -1;
  }
  r->foff = UCIR_HEADER;
  return 0;
}

static int resolve_arch(tc_reader *r, tc_error *err) {
  const char *n = r->arch_name;
  static const struct {
    const char *name;
    tc_arch_id le, be;
  } names[] = {{"x86_64", TC_ARCH_X86_64, TC_ARCH_X86_64},
               {"x86", TC_ARCH_X86, TC_ARCH_X86},
               {"arm", TC_ARCH_ARM, TC_ARCH_ARM},
               {"arm64", TC_ARCH_ARM64, TC_ARCH_ARM64},
               {"mips", TC_ARCH_MIPSEL, TC_ARCH_MIPS},
               {"mipsel", TC_ARCH_MIPSEL, TC_ARCH_MIPSEL},
               {"sparc", TC_ARCH_SPARC, TC_ARCH_SPARC},
               {"sparc64", TC_ARCH_SPARC64, TC_ARCH_SPARC64},
               /* the descriptive name tracecorn writes (usercorn has none);
                * big-endian mips64 is no tracecorn arch */
               {"mips64el", TC_ARCH_MIPS64EL, TC_ARCH_NONE}};
  if (!usercorn_accepts(r->arch_name, r->os_name))
    r_warn(r, W_ARCH,
           "arch \"%s\" / os \"%s\" is not a pair usercorn accepts "
           "(reading it anyway)",
           r->arch_name, r->os_name);
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (strcmp(names[i].name, n) == 0) {
      const tc_arch *a = tc_arch_by_id(r->dorder ? names[i].be : names[i].le);
      if (a) {
        r->arch = a;
        return 0;
      }
    }
  for (size_t i = 0; i < sizeof fb_arches / sizeof fb_arches[0]; i++)
    if (strcmp(fb_arches[i].name, n) == 0 ||
        (strcmp(n, "mipsel") == 0 && fb_arches[i].id == TC_ARCH_MIPSEL))
      return build_arch(r, &fb_arches[i], err);
  /* No table: the registers are the numbers the file uses. */
  r->scan_size = calloc(65536, sizeof *r->scan_size);
  if (!r->scan_size)
    return oom(err);
  r->scanning = 1;
  int rc;
  while ((rc = pump(r, err)) == 1)
    ;
  r->scanning = 0;
  if (rc < 0)
    return -1;
  r->done = 0;
  r->depth = 0;
  r->in.len = r->pos = 0;
  r->in_base = 0;
  r->src_eof = r->seen_id = 0;
  clearerr(r->fp);
  if (fseeko(r->fp, UCIR_HEADER, SEEK_SET) != 0) {
    tc_error_set(err, "ucir: %s: cannot seek: %s", r->path, strerror(errno));
    return -1;
  }
  r->foff = UCIR_HEADER;
  return build_arch(r, NULL, err);
}

static tc_reader *open_reader(const char *path, tc_ucir_stats *stats,
                              tc_error *err) {
  tc_reader *r = calloc(1, sizeof *r);
  if (!r || !(r->path = strdup(path))) {
    free(r);
    tc_error_set(err, "ucir: out of memory");
    return NULL;
  }
  r->stats = stats;
  r->fp = tc_infile_open(path, TC_INFILE_SEEK, "ucir", err);
  if (!r->fp)
    goto fail;
  setvbuf(r->fp, NULL, _IOFBF, 1 << 20);
  struct stat st;
  if (fstat(fileno(r->fp), &st) != 0 || !S_ISREG(st.st_mode)) {
    tc_error_set(err, "ucir: %s: not a regular file", path);
    goto fail;
  }
  r->fsize = (uint64_t)st.st_size;
  if (read_header(r, err) < 0)
    goto fail;
  r->chunk = malloc(SNAPPY_FRAME_MAX_CHUNK);
  r->dec = malloc(SNAPPY_FRAME_MAX_DATA);
  if (!r->chunk || !r->dec) {
    oom(err);
    goto fail;
  }
  if (resolve_arch(r, err) < 0)
    goto fail;
  const tc_arch *a = r->arch;
  int maxid = 0;
  for (int i = 0; i < a->nregs; i++)
    if (a->regs[i].uc_id > maxid && a->regs[i].uc_id <= 0xFFFF)
      maxid = a->regs[i].uc_id;
  r->nregmap = (size_t)maxid + 1;
  r->regmap = malloc(r->nregmap * sizeof *r->regmap);
  r->cur = calloc(1, a->state_size);
  r->initial_state = calloc(1, a->state_size);
  r->mem = tc_memimage_new();
  if (!r->regmap || !r->cur || !r->initial_state || !r->mem) {
    oom(err);
    goto fail;
  }
  for (size_t i = 0; i < r->nregmap; i++)
    r->regmap[i] = -1;
  for (int i = 0; i < a->nregs; i++)
    if (a->regs[i].uc_id >= 0 && a->regs[i].uc_id <= 0xFFFF &&
        r->regmap[a->regs[i].uc_id] < 0)
      r->regmap[a->regs[i].uc_id] = (int16_t)i;
  r->pc_mask =
      a->ptr_size >= 8 ? UINT64_MAX : ((uint64_t)1 << (8 * a->ptr_size)) - 1;
  if (!(r->build = ent_get(r))) {
    oom(err);
    goto fail;
  }
  r->info.arch = a;
  r->info.has_memory = 1;
  r->info.initial_state = r->initial_state;
  r->info.keyframe_interval = 0;
  /* Read up to the first instruction: the entry PC and the initial state
   * come with its JMP. */
  while (!r->resolved) {
    int rc = pump(r, err);
    if (rc < 0)
      goto fail;
    if (rc == 0)
      break;
  }
  r->info.pid = r->tid;
  if (stats)
    stats->spec_layout = r->layout == LAYOUT_SPEC;
  return r;
fail:
  ucir_close_reader(r);
  return NULL;
}

static tc_reader *ucir_open_reader(const char *path, tc_error *err) {
  return open_reader(path, NULL, err);
}

static const tc_trace_info *ucir_reader_info(tc_reader *r) { return &r->info; }

static int ucir_next_event(tc_reader *r, tc_event *ev, tc_error *err) {
  if (r->popped) {
    ent_put(r, r->popped);
    r->popped = NULL;
  }
  for (;;) {
    if (r->qlen && r->q[r->qhead]->final) {
      qent *e = r->q[r->qhead++];
      if (--r->qlen == 0)
        r->qhead = 0;
      *ev = e->ev;
      r->popped = e;
      return 1;
    }
    int rc = pump(r, err);
    if (rc < 0) {
      r->done = 1; /* queued entries are freed at close */
      return -1;
    }
    if (rc == 0 && !(r->qlen && r->q[r->qhead]->final))
      return 0;
  }
}

const char *tc_ucir_op_name(unsigned op) {
  return op < OP_COUNT ? op_names[op] : NULL;
}

int tc_ucir_stats_read(const char *path, tc_ucir_stats *st, tc_error *err) {
  memset(st, 0, sizeof *st);
  tc_reader *r = open_reader(path, st, err);
  if (!r)
    return -1;
  tc_event ev;
  int rc;
  while ((rc = ucir_next_event(r, &ev, err)) == 1)
    st->events++;
  ucir_close_reader(r);
  return rc;
}

const tc_format tc_format_ucir = {
    .name = "ucir",
    .description = "usercorn trace (UCIR, .ucir): snappy-framed op stream "
                   "that usercorn trace reads; the reader replays it",
    .caps = TC_CAP_INSN_BYTES | TC_CAP_MEM | TC_CAP_MEM_KIND |
            TC_CAP_MEM_EXACT | TC_CAP_MEM_OLD | TC_CAP_SYSCALLS | TC_CAP_MAPS |
            TC_CAP_TID | TC_CAP_SYSCALL_MEM | TC_CAP_MODULES | TC_CAP_MAP_DATA,
    .holds_reg = ucir_holds_reg,
    .extension = ucir_extension,
    .supports = ucir_supports,
    .open_writer = ucir_open_writer,
    .write_event = ucir_write_event,
    .close_writer = ucir_close_writer,
    .probe = ucir_probe,
    .open_reader = ucir_open_reader,
    .reader_info = ucir_reader_info,
    .next_event = ucir_next_event,
    .close_reader = ucir_close_reader,
};
