/* SPDX-License-Identifier: GPL-2.0-or-later */
/* emu/linux_sys*.c: private interface of the emulated Linux kernel.
 *
 * Handlers are arch-independent and looked up BY NAME in the arch's
 * syscall name table (arch->sys.names), so a new arch only needs its name
 * table and, where its struct layouts differ, entries in linux_abi.c; its
 * own calls and frames live in emu/linux/<arch>/ (linux_arch.h). */
#ifndef TC_LINUX_SYS_H
#define TC_LINUX_SYS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <poll.h>

#include "common/linux/linux_abi.h"
#include "emu/engine/emu.h"
#include "loaders/loader.h"

/* Largest host buffer a single kernel step allocates for guest data. */
#define TC_SYS_CHUNK 65536u

/* Linux numbers used by more than one file (asm-generic values). */
#define TC_AT_FDCWD (-100)
#define TC_AT_SYMLINK_NOFOLLOW 0x100
#define TC_AT_REMOVEDIR 0x200
#define TC_AT_EACCESS 0x200
#define TC_AT_SYMLINK_FOLLOW 0x400
#define TC_AT_EMPTY_PATH 0x1000

#define TC_NSIG 64
#define TC_RLIM_NLIMITS 16

/* Per-emu kernel state (signal dispositions, masks, limits...), at
 * emu->linux_state. Owned by linux_syscalls.c. */
typedef struct tc_linux_state {
  tc_emu *emu;
  uc_engine *uc;
  struct {
    uint64_t handler, flags, restorer, mask;
  } sigact[TC_NSIG + 1];
  uint64_t sigmask;
  uint64_t altstack_sp, altstack_size;
  int altstack_flags;
  uint64_t rlim_cur[TC_RLIM_NLIMITS], rlim_max[TC_RLIM_NLIMITS];
  uint32_t umask;
  char comm[16];
  uint64_t robust_list;
  bool futex_reported;
  bool clone_reported;   /* a fork-like clone was refused */
  bool tkill_reported;   /* a signal for another thread was dropped */
  bool handler_reported; /* a signal for a guest handler was dropped */
  int pending_sig;       /* delivered when the current syscall returns */
  int pending_code;      /* its si_code: SI_USER (kill) or SI_TKILL */
  /* Raised while blocked: delivered once unblocked (bit sig-1). */
  uint64_t pending_set;
  int pending_set_code[TC_NSIG + 1];
  /* SIGCHLD's siginfo while one is pending (Linux keeps the first child's):
   * CLD_EXITED/KILLED (0: none), the child's pid, its status or signal. */
  int chld_code;
  uint32_t chld_pid;
  int32_t chld_status;
  /* ITIMER_REAL (alarm, setitimer) on the virtual clock: 0 = disarmed. */
  uint64_t timer_deadline, timer_interval;
  /* rt_sigsuspend in progress: the mask to restore after it. */
  bool suspend_active;
  uint64_t suspend_saved;
  bool high_unknown_reported;
  uint8_t compat_unknown_reported[64]; /* bit nr: compat call nr noticed */
  /* arm, arm64, mips: the page holding the sigreturn trampolines
   * ("[sigpage]"), mapped at the first delivery that needs one; 0 until
   * then. */
  uint64_t sigpage;
  /* Signals sent to the running thread itself by another thread
   * (tgkill/tkill, bit sig-1), swapped with tc_thread.sig_pending. */
  uint64_t thread_pending;
  uint64_t thread_pending_user; /* of those, SI_USER (kill), not SI_TKILL */
} tc_linux_state;

/* One syscall in flight. Handlers return the value the guest sees
 * (-errno on failure). Actions that end the process are deferred until
 * the syscall has been reported to the observer. */
enum {
  TC_SYS_ACT_NONE = 0,
  TC_SYS_ACT_EXIT,
  TC_SYS_ACT_KILL,
  TC_SYS_ACT_THREAD_EXIT, /* exit(2) ended the calling thread only */
  TC_SYS_ACT_EXEC_STOP    /* execve not followed (--no-follow): run ends */
};

typedef struct tc_sys_call {
  tc_emu *emu;
  tc_linux_state *st;
  uint32_t nr;
  const char *name;
  uint64_t a[6]; /* arguments, truncated to the pointer size */
  int action;    /* TC_SYS_ACT_* */
  int action_arg;
  bool no_return; /* the syscall does not return (ret reg untouched) */
  /* The thread blocked: the PC goes back to the trap instruction, which
   * runs again when the thread is woken (then returning its result);
   * nothing is written or reported now. */
  bool restart;
  /* Not a call of the process's own: a signal another process sent
   * (tc_signal_post); the target's engine is not running. */
  bool posted;
} tc_sys_call;

typedef int64_t (*tc_sys_fn)(tc_sys_call *c);

typedef struct tc_sys_entry {
  const char *name;
  tc_sys_fn fn;
} tc_sys_entry;

/* Handler tables, each terminated by {NULL, NULL}. */
extern const tc_sys_entry tc_sys_fs_table[];
extern const tc_sys_entry tc_sys_mm_table[];
extern const tc_sys_entry tc_sys_misc_table[];
extern const tc_sys_entry tc_sys_thread_table[];
extern const tc_sys_entry tc_sys_exec_table[];

/* State lookup (created on first use). */
tc_linux_state *tc_linux_state_of(tc_emu *emu);
/* linux_signal.c: delivery to guest handlers (on the arches with frames). */
bool tc_signal_can_deliver(const tc_emu *emu);
int tc_signal_deliver(tc_sys_call *c);
/* At the end of every syscall: fires an expired timer, picks a pending
 * signal the mask now allows, delivers it (tc_signal_deliver) and ends a
 * sigsuspend. */
void tc_signal_syscall_end(tc_sys_call *c);
int64_t tc_sys_alarm(tc_sys_call *c);
int64_t tc_sys_setitimer(tc_sys_call *c);
int64_t tc_sys_getitimer(tc_sys_call *c);
int64_t tc_sys_pause(tc_sys_call *c);
/* Waits for a signal (pause, ppoll without fds): the virtual clock jumps
 * to the armed timer; -EINTR. `what` names the call in a notice. */
int64_t tc_signal_wait(tc_sys_call *c, const char *what);
int64_t tc_sys_rt_sigsuspend(tc_sys_call *c);
int64_t tc_sys_rt_sigpending(tc_sys_call *c);
int64_t tc_sys_rt_sigtimedwait(tc_sys_call *c);
int64_t tc_sys_rt_sigtimedwait_time64(tc_sys_call *c);
/* nanosleep & co.: how long a sleep of ns really lasts before the timer
 * interrupts it (ns itself if it does not). */
uint64_t tc_signal_sleep_ns(tc_sys_call *c, uint64_t ns, bool *interrupted);
int64_t tc_sys_rt_sigreturn(tc_sys_call *c);
/* Whether sig's default action ends the process (not ignore or stop). */
bool tc_signal_default_kills(int sig);
/* The scheduler switched to a thread: a signal aimed at it that it does
 * not block runs its handler now (the frame saves the PC it was at). */
void tc_signal_thread_resumed(tc_emu *emu);
int64_t tc_sys_sigreturn(tc_sys_call *c);

/* ---- argument helpers */
static inline int tc_sys_int(const tc_sys_call *c, int i) {
  return (int)(int32_t)(uint32_t)c->a[i];
}
/* A C `long` argument, sign-extended from the guest's long size. */
static inline int64_t tc_sys_long(const tc_sys_call *c, int i) {
  if (c->emu->arch->ptr_size == 4)
    return (int64_t)(int32_t)(uint32_t)c->a[i];
  return (int64_t)c->a[i];
}
/* A 64-bit value passed in one register (64-bit guests) or in two
 * consecutive registers, low word first (i386). */
static inline uint64_t tc_sys_arg64(const tc_sys_call *c, int i) {
  if (c->emu->arch->ptr_size == 4)
    return (c->a[i] & 0xffffffffu) | (i < 5 ? c->a[i + 1] << 32 : 0);
  return c->a[i];
}

/* ---- guest memory as the kernel sees it: like a user access, it honours
 * the guest's page protections (a read() into a read-only buffer is
 * -EFAULT). All writes go through tc_emu_write, so they are recorded. */
bool tc_sys_range_ok(tc_emu *emu, uint64_t addr, uint64_t len, uint32_t prot);
int tc_sys_read(tc_emu *emu, uint64_t addr, void *buf, size_t n);
int tc_sys_write(tc_emu *emu, uint64_t addr, const void *buf, size_t n);
/* A NUL-terminated path argument: -EFAULT, -ENAMETOOLONG, or its length. */
int tc_sys_read_path(tc_emu *emu, uint64_t addr, char *buf, size_t max);

/* ---- guest integer access in target byte order */
int tc_sys_get_uint(tc_emu *emu, uint64_t addr, unsigned size, uint64_t *v);
int tc_sys_put_uint(tc_emu *emu, uint64_t addr, unsigned size, uint64_t v);

/* ---- fd table (linux_sys_fs.c) */
/* The guest fd's entry, or NULL if it is not open. */
tc_fd *tc_sys_fd(tc_emu *emu, int fd);
/* Lowest free guest fd >= min, or -EMFILE. */
int tc_sys_fd_alloc(tc_emu *emu, int min);

/* ---- guest filesystem (guestfs.c) */
/* Absolute, lexically normalised guest path for (dirfd, path). Returns the
 * length or -errno. */
int tc_guestfs_guest_abs(tc_emu *emu, int dirfd, const char *guest_path,
                         char *out, size_t max);
/* The guest path of an open guest fd (for dirfd-relative lookups and map
 * names), or -errno. */
int tc_guestfs_fd_path(tc_emu *emu, int fd, char *out, size_t max);
/* What a guest path names once every component has been walked inside the
 * guest view (see guestfs.c). */
typedef enum tc_gfs_kind {
  TC_GFS_REAL,  /* host entry `name` in directory `dirfd` (may not exist) */
  TC_GFS_VDIR,  /* synthesised /proc/self or /proc/self/fd directory */
  TC_GFS_VLINK, /* synthesised /proc symlink (not followed): text in `link` */
  TC_GFS_EXE,   /* /proc/self/exe followed: the program, emu->exe_host_path */
  TC_GFS_FD,    /* /proc/self/fd/N followed: guest fd `fd` itself */
  TC_GFS_MAPS,  /* /proc/self/maps: the guest's own memory map, as text */
} tc_gfs_kind;

typedef struct tc_gfs_loc {
  tc_gfs_kind kind;
  int dirfd;      /* TC_GFS_REAL: O_PATH fd of the parent (close it), or -1 */
  char name[256]; /* last component, "" = the directory dirfd itself */
  bool must_dir;  /* the path ended in "/" or "/.": a directory is required */
  int fd;         /* TC_GFS_FD: the guest fd */
  char guest[TC_PATH_MAX]; /* absolute guest path of the result */
  char link[TC_PATH_MAX];  /* TC_GFS_VLINK: the link text */
} tc_gfs_loc;

#define TC_GFS_FOLLOW 1  /* follow a symlink in the last component */
#define TC_GFS_LENIENT 2 /* missing directories continue lexically */

/* Walks (dirfd, path) component by component from the guest root:
 * symlinks re-rooted, ".." clamped at the root, 40 links at most (ELOOP),
 * /proc filtered and /proc/self synthesised. The caller acts on
 * (loc->dirfd, loc->name) without following symlinks, so nothing swapped
 * in meanwhile can lead outside. Returns 0 or -errno; on 0 the caller
 * calls tc_guestfs_loc_done. */
int tc_guestfs_walk(tc_emu *emu, int dirfd, const char *path, int flags,
                    tc_gfs_loc *loc);
void tc_guestfs_loc_done(tc_gfs_loc *loc);
/* loc->name, or "." for the directory itself (for *at calls). */
const char *tc_guestfs_loc_name(const tc_gfs_loc *loc);
/* 1 if a directory entry `name` of host directory fd is hidden from the
 * guest (the host /proc: pids and anything not on the allow-list). */
int tc_guestfs_dir_is_proc(int host_fd);
int tc_guestfs_proc_hidden(tc_emu *emu, const char *name);
/* Opens a guest path read-only for tracecorn itself (a program
 * interpreter), walked like the guest's own opens: a host fd, or -errno. */
int tc_guestfs_open_read(tc_emu *emu, const char *path);
/* The absolute guest path /proc/self/exe reads. */
int tc_guestfs_exe_path(tc_emu *emu, char *out, size_t max);

/* ---- time (linux_sys_misc.c) */
uint64_t tc_sys_now_ns(tc_emu *emu, int clockid);
/* A timespec argument in nanoseconds (time64: the 64-bit layout on 32-bit
 * guests); 0 or -errno. */
int tc_sys_read_timespec_ns(tc_sys_call *c, uint64_t addr, bool time64,
                            uint64_t *ns);

/* ---- threads (linux_thread.c) */
/* exit(2) with other live threads: ends the calling thread only (clear
 * its child tid, wake a joiner). Returns false if it is the last one (the
 * caller then ends the process). */
bool tc_thread_exit(tc_sys_call *c);
/* read/write of a guest pipe that would block (poll events `events` not
 * ready on host_fd) while other threads live: the thread waits for them
 * (the call restarts once the fd is ready) and true is returned; the
 * handler then returns at once. */
bool tc_thread_wait_fd(tc_sys_call *c, int host_fd, short events);
/* The calling thread waits (state TC_THREAD_CHILD, _VFORK, _SIGNAL with
 * wait_pid) while other processes run: the call restarts once it is
 * woken. The thread table is made if there is none. False when nobody
 * else lives (the caller then decides without waiting). */
bool tc_thread_block(tc_sys_call *c, tc_thread_state state, int64_t wait_pid);
/* The running thread of a restarted call (woken from a wait that stored
 * its result): true and *ret set once; the handler returns *ret. */
bool tc_thread_restarted(tc_sys_call *c, int64_t *ret);
/* record -j's replay of the run's threads (lib/parallel.c; the
 * segment's kernel is never called): a thread the run's clone made, from
 * proto's tid, start, TLS, GDT, clear-tid and mask, its registers the
 * engine's now; and the run's switch to thread tid (a fresh one started
 * as the scheduler starts it). 0, or -1. */
int tc_thread_replay_add(tc_emu *emu, const tc_thread *proto);
int tc_thread_replay_switch(tc_emu *emu, uint32_t tid);
/* The running thread was woken from a wait by a signal for a handler:
 * true once (tc_linux_syscall then returns -EINTR without the handler). */
bool tc_thread_take_eintr(tc_emu *emu);
/* Processes (linux_process.c). */
int64_t tc_proc_fork(tc_sys_call *c, uint64_t flags, uint64_t stack,
                     uint64_t ptid, uint64_t ctid);
/* Sends (host-numbered) sig to another guest process pid: -ESRCH if none. */
int64_t tc_proc_kill(tc_sys_call *c, int64_t pid, int sig);
/* send_self's decision for a process that is not running: applied to its
 * state (terminate, or pending for its handler). linux_sys_misc.c. */
void tc_signal_post(tc_emu *target, int sig);
/* SIGCHLD for a child's end: its siginfo (CLD_*, pid, status) goes with it. */
void tc_signal_post_chld(tc_emu *target, int code, uint32_t pid,
                         int32_t status);
/* A stop signal's default action: the whole process stops (job control),
 * after the call when it is the caller's own (linux_sys_misc.c). */
void tc_signal_job_stop(tc_sys_call *c, int sig);
extern const tc_sys_entry tc_sys_process_table[];
/* Wake checks for TC_THREAD_CHILD (a child to report, or none at all)
 * and TC_THREAD_VFORK (the child exec'd or exited). */
bool tc_proc_wait_ready(tc_emu *emu, int64_t pid, int options);
/* Job control (linux_process.c): the process stops on (host) sig, or a
 * SIGCONT continues it; its parent can wait for either and gets SIGCHLD
 * unless it asked SA_NOCLDSTOP. */
void tc_proc_job_stop(tc_emu *emu, int sig);
void tc_proc_job_continue(tc_emu *emu);
bool tc_proc_vfork_ready(tc_emu *emu, int64_t pid);
/* poll/ppoll of guest pipes only, none ready: the thread waits (a copy of
 * the n host pollfds, a virtual-clock deadline or UINT64_MAX) while other
 * threads or processes run, and true is returned. Woken when one is
 * ready (the call runs again) or at the deadline (the call runs again
 * and tc_thread_restarted gives 0: poll without waiting). */
bool tc_thread_wait_poll(tc_sys_call *c, const struct pollfd *set, size_t n,
                         uint64_t deadline);
/* The running thread gives way after this syscall (no-op when alone). */
void tc_thread_yield(tc_sys_call *c);
/* tid names a live thread of the process. */
bool tc_thread_exists(const tc_emu *emu, uint32_t tid);
/* Queues sig for another live thread (tid): it runs the handler when it
 * next runs; a wait it is blocked in (futex, pipe) is interrupted and
 * runs again after the handler, as with SA_RESTART. user: sent by kill()
 * (SI_USER) rather than tgkill (SI_TKILL). 0 or -ESRCH. */
int tc_thread_queue_signal(tc_emu *emu, uint32_t tid, int sig, bool user);
/* The thread that takes a process-directed signal, as Linux's
 * complete_signal() picks it: the main thread unless it blocks sig, else
 * the running one, else the first other one that does not block it. 0
 * means the running thread. */
uint32_t tc_thread_pick_for_signal(tc_emu *emu, int sig);
/* The calling thread waits for a signal (pause, sigsuspend,
 * rt_sigtimedwait) while other threads live: it blocks with `mask`
 * blocked, the call restarts once a signal it does not block is queued
 * for it or the process, and true is returned; false when it is alone. */
bool tc_thread_wait_signal(tc_sys_call *c, uint64_t mask);
/* A signal went to the process pending set: threads waiting for a signal
 * that do not block it wake up to look. */
void tc_thread_wake_sigwaiters(tc_emu *emu, int sig);

/* Opens, reads and checks prog->interp through the guest's view of the
 * filesystem: 0, or -errno with a message: the open's error (-ENOENT...),
 * -ELIBBAD when the file is no program interpreter of prog's arch (as
 * binfmt_elf answers). Release with tc_loader_interp_free (also after a
 * failure). */
int tc_linux_open_interp(tc_emu *emu, const tc_elf_image *prog,
                         tc_interp_file *f, tc_error *err);

/* A process of the emulated Linux: an engine with this kernel installed
 * as its OS (tc_os_ops). Every process is made with it. */
tc_emu *tc_linux_emu_new(const tc_arch *arch, const tc_options *opt,
                         tc_error *err);

#endif
