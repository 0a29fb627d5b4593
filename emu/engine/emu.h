/* SPDX-License-Identifier: GPL-2.0-or-later */
/* emu/: the emulated Linux process (internal to libtracecorn).
 *
 * tc_emu owns the Unicorn engine, the guest memory map, and the emulated
 * kernel state (fds, brk, mmap, time, random). Other parts of the library
 * talk to guest memory and registers only through these functions, so that
 * every change the "kernel" makes is reported to the observer (the
 * recorder) and ends up in the trace. */
#ifndef TC_EMU_H
#define TC_EMU_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>
#include <unicorn/unicorn.h>

#include "common/arch.h"
#include "common/debug_options.h"
#include "regfile.h"
#include "tracecorn/tracecorn.h"

#define TC_MAX_FDS 256
#define TC_PATH_MAX 4096

/* One mapped guest region, page aligned, sorted by start. */
typedef struct tc_region {
  uint64_t start, end; /* [start, end) */
  uint32_t prot;       /* TC_PROT_* */
  uint64_t file_offset;
  char name[128];
} tc_region;

/* A syscall as the kernel layer reports it to the observer. */
typedef struct tc_syscall_record {
  uint32_t nr;
  const char *name;
  uint64_t args[6];
  int64_t ret;
  bool unknown;
  bool compat; /* nr and name are of the compat table (x86-64 int $0x80) */
} tc_syscall_record;

/* Callbacks by which the emulated kernel reports what it did. All optional.
 * on_kernel_write is called for every guest memory write done by the
 * kernel (syscall results, not instructions) with the old and new bytes. */
typedef struct tc_emu_observer {
  void *ctx;
  void (*on_map)(void *ctx, const tc_region *r, const uint8_t *data);
  void (*on_unmap)(void *ctx, uint64_t addr, uint64_t size);
  void (*on_protect)(void *ctx, uint64_t addr, uint64_t size, uint32_t prot);
  void (*on_kernel_write)(void *ctx, uint64_t addr, const uint8_t *old_bytes,
                          const uint8_t *new_bytes, size_t size);
  void (*on_syscall)(void *ctx, const tc_syscall_record *rec);
  /* Signal delivery to a guest handler: on_signal_frame before the frame
   * is written (the kernel writes after it are the frame), on_signal once
   * the handler's registers are set (rec->nmem/mem unused). */
  void (*on_signal_frame)(void *ctx);
  void (*on_signal)(void *ctx, const tc_signal_event *rec);
} tc_emu_observer;

typedef enum tc_fd_kind {
  TC_FD_CLOSED = 0,
  TC_FD_HOST, /* backed by a host fd */
  TC_FD_DIR   /* a directory opened for getdents64 (host fd, O_DIRECTORY) */
} tc_fd_kind;

typedef struct tc_fd {
  tc_fd_kind kind;
  int host_fd;
  int flags; /* O_* status flags as the guest set them */
  bool cloexec;
  bool owned; /* close host_fd when the guest closes it */
  /* TC_FD_DIR: entries read so far. The guest's d_off cookies are these
   * ordinals, not the host's 64-bit hashes: deterministic, and they fit the
   * 32-bit off_t of 32-bit guests (glibc's readdir fails on overflow). */
  uint64_t dir_pos;
  /* FNV-1a state of the host path it was opened by (0: none), for the
   * deterministic inode numbers of normalised stat (tc_options.host_stat). */
  uint64_t path_hash;
  /* A pipe the guest made: only guest threads write (read) its other
   * end, so a read (write) that would block waits for them. */
  bool guest_pipe;
} tc_fd;

/* A guest thread (CLONE_THREAD). The table exists from the first clone
 * on; a single-threaded program never has one (nothing per instruction
 * then). The running thread's registers are the engine's; the others'
 * wait in ctx. Per-thread kernel state lives in the emu/linux_state
 * fields while the thread runs and is swapped here on a switch. */
typedef enum tc_thread_state {
  TC_THREAD_RUNNABLE = 0,
  TC_THREAD_FUTEX,   /* blocked in FUTEX_WAIT on futex_addr */
  TC_THREAD_FD,      /* blocked in read/write of a guest pipe (wait_fd) */
  TC_THREAD_SIGWAIT, /* in pause, sigsuspend or rt_sigtimedwait, while other
                        threads or processes could send a signal */
  TC_THREAD_CHILD,   /* blocked in wait4/waitid for a child (wait_pid) */
  TC_THREAD_VFORK,   /* vfork's parent: until child wait_pid execs or exits */
  TC_THREAD_POLL,    /* poll/ppoll of guest pipes (wait_set, deadline) */
  TC_THREAD_EXITED
} tc_thread_state;

typedef struct tc_thread {
  uint32_t tid;
  tc_thread_state state;
  uc_context *ctx; /* registers while not running */
  /* Not run yet: ctx is the parent's at clone; these are set on first
   * switch-in (return value 0, stack, pc after the trap, TLS). */
  bool fresh, set_tls;
  uint64_t start_pc, start_sp, tls;
  /* swapped with the emu / linux_state fields of the running thread */
  uint64_t clear_child_tid, robust_list, sigmask;
  uint64_t altstack_sp, altstack_size;
  int altstack_flags;
  uint64_t gdt_addr; /* i386: this thread's GDT page (its TLS entries) */
  /* Signals aimed at this thread (tgkill from another one), bit sig-1:
   * delivered when it next runs and does not block them. */
  uint64_t sig_pending;
  uint64_t sig_user; /* of those, sent by kill() (SI_USER), not tgkill */
  /* TC_THREAD_SIGWAIT: the signals it blocks while it waits (sigsuspend's
   * mask; rt_sigtimedwait unblocks the ones it waits for). */
  uint64_t sigwait_mask;
  /* Woken from TC_THREAD_SIGWAIT: the wait runs again and finds the
   * signal, so nothing is delivered on the switch to it. */
  bool sig_woken;
  /* FUTEX_WAIT: address, bitset, absolute deadline on emu->clock_ns
   * (UINT64_MAX: none), arrival order (wake is FIFO). */
  uint64_t futex_addr, deadline, wait_seq;
  uint32_t futex_bitset;
  int wait_fd; /* TC_THREAD_FD: the host fd and the poll events awaited */
  short wait_events;
  int64_t wait_pid; /* TC_THREAD_CHILD: wait4's pid argument; _VFORK: child */
  int wait_options; /* TC_THREAD_CHILD: what it reports (WEXITED, WUNTRACED..)
                     */
  struct pollfd *wait_set; /* TC_THREAD_POLL: host fds and events (owned) */
  size_t wait_nfds;
  /* Woken: the restarted wait returns restart_ret (0, or -ETIMEDOUT). */
  bool restart;
  int64_t restart_ret;
  /* Woken by a signal for a handler: the call runs again only to return
   * -EINTR (the handler then runs, as Linux interrupts a wait). */
  bool eintr;
} tc_thread;

/* What the scheduler is asked to do when the engine stops (tc_emu.resched). */
enum {
  TC_RESCHED_NONE = 0,
  TC_RESCHED_KEEP,  /* threads changed (clone): the current one goes on */
  TC_RESCHED_YIELD, /* the current thread yields (sched_yield, sleeps) */
  TC_RESCHED_BLOCK  /* the current thread blocked or exited */
};

/* A piece of guest memory and the host memory behind it: tracecorn maps
 * it (uc_mem_map_ptr), so reading it needs no call into Unicorn. */
typedef struct tc_hostmem {
  uint64_t start, end; /* guest [start, end) */
  uint8_t *host;
} tc_hostmem;

/* What the engine asks of the operating system it runs under (the emulated
 * Linux of emu/linux/ installs it: tc_linux_emu_new), so the engine calls
 * no layer above it. */
struct tc_emu;
typedef struct tc_os_ops {
  /* A syscall trap: the arch's ABI registers hold the call. */
  void (*syscall)(struct tc_emu *emu);
  /* The process is being freed: release the OS's state of it. */
  void (*release)(struct tc_emu *emu);
  /* Bytes mapped by the recording's other processes (--max-memory). */
  uint64_t (*others_mapped)(const struct tc_emu *emu);
} tc_os_ops;

typedef struct tc_emu {
  const tc_os_ops *os; /* NULL: bare engine, syscalls end the run */
  uc_engine *uc;
  tc_regfile *regfile; /* direct register reads (tc_emu_regfile), or NULL */
  bool regfile_tried;
  tc_hostmem *hostmem; /* sorted by start */
  size_t nhostmem, caphostmem, hostmem_hint;
  const tc_arch *arch;
  tc_options opt;
  /* Speed-path checks and test hooks; the session sets them in each of
   * its processes (lib/session_internal.h), 0 elsewhere. */
  tc_debug_options debug;

  /* Memory map. */
  tc_region *regions;
  size_t nregions, cap_regions;
  uint64_t mmap_top;  /* next non-fixed mmap goes below this */
  uint64_t brk_start; /* initial program break (page aligned end of bss) */
  uint64_t brk_cur;   /* current break */
  uint64_t stack_top; /* highest stack address (exclusive) */

  /* Process. procs is the table of every guest process of the run,
   * shared by their emus (emu/linux/linux_process.c). */
  uint32_t pid, tid, ppid, pgid;
  struct tc_procs *procs;
  uint64_t clear_child_tid;
  char exe_host_path[TC_PATH_MAX]; /* the file we loaded (host path), for
                                      names only: files are never reopened
                                      by it (--root: a guest can swap a
                                      directory on it for a symlink out) */
  int exe_fd; /* the program, held open: /proc/self/exe acts on it */
  char exe_guest_path[TC_PATH_MAX]; /* what /proc/self/exe reads */
  char cwd[TC_PATH_MAX];            /* guest cwd (absolute guest path) */
  tc_fd fds[TC_MAX_FDS];

  /* Determinism. */
  uint64_t rng_state; /* splitmix64 state seeded from opt.seed */
  uint64_t clock_ns;  /* fixed virtual time; advanced by nanosleep */
  /* stat shows virtual times for files the guest opened for writing
   * (their path hashes) and files changed after host_start: they carry
   * this run's host times otherwise */
  struct timespec host_start; /* CLOCK_REALTIME at start */
  uint64_t *written_files;
  size_t nwritten_files, capwritten_files;

  /* i386 TLS: GDT in guest memory for set_thread_area. */
  uint64_t gdt_addr;
  bool flat_segments; /* i386: CS/SS/DS/ES loaded with flat segments */

  /* The registers a process starts with (a state image read when the
   * engine was made), which execve restores (tc_emu_reset_regs). */
  uint8_t *start_state;
  /* execve replaced the image: the engine was stopped, the new PC waits
   * in restart_pc; the recorder flushes the engine's translated code
   * (tc_emu_exec_done) and gives a KEYFRAME after the SYSCALL. */
  bool execed;
  /* --no-follow: an execve ended the run (exited is set too); why. */
  bool exec_stopped;
  char exec_notice[320];

  /* Outcome. Set by exit/exit_group/kill or a fault; the run loop stops. */
  bool exited;
  int exit_code;   /* exit status for TC_EXIT_EXITED */
  int exit_signal; /* signal number for TC_EXIT_SIGNALED (0 otherwise) */
  /* Job control: stopped by this (host-numbered) stop signal, none of its
   * threads runs until a SIGCONT; 0 while it runs. */
  int job_stop_sig;

  /* Set when the guest faulted (the run loop then ends the process). */
  bool faulted;
  tc_fault_event fault;
  /* A trap (x86 int3, icebp): the signal frame resumes here, after the
   * instruction, not at fault.pc; 0 for a fault. fault_debug: the trap was
   * icebp's #DB (vector 1, TRAP_BRKPT, si_addr after it), not int3. */
  uint64_t fault_resume;
  bool fault_debug;
  /* The PC of the instruction being executed (kept by the recorder's code
   * hook, since Unicorn's PC is stale inside memory hooks). */
  uint64_t cur_pc;

  /* Threads (emu/linux/linux_thread.c): empty until the first clone. */
  tc_thread *threads;
  size_t nthreads, cap_threads, cur_thread;
  uint64_t wait_seq;
  int resched; /* TC_RESCHED_*: set by a syscall, which stops the engine */
  /* A blocked syscall's trap instruction, where the PC goes once the
   * engine has stopped (tc_emu_restart_pc). */
  uint64_t restart_pc;
  bool restart_pending;
  /* Bytes the engine adds to the PC after the trap hook returns: 2 for
   * x86's syscall/sysenter hooks, 0 for interrupt-style traps. */
  uint8_t trap_insn_size;
  /* The syscall being made came through a compat trap (tc_trap.compat). */
  uint8_t sys_compat;

  /* The arch's engine table (tc_engine_arch_ops_of). */
  const struct tc_engine_arch_ops *engine_ops;

  /* SPARC (emu/engine/sparc/sparc.c): the private page of the carry-flag stubs
   * is mapped; the last instruction run (a delay slot's branch); the
   * instruction where the engine stops to go on at redirect_to instead. */
  bool sparc_private, sparc_started;
  uint64_t sparc_prev_pc, sparc_cur_pc;
  uint64_t sparc_redirect_at, sparc_redirect_to;
  /* mips64el on an engine with the delay-slot defect (upstream #2272:
   * a memory access in a taken branch's delay slot, under a memory hook or
   * the virtual TLB's fill, leaves the delay-slot flags set, so the
   * engine runs the target's first instruction as a delay slot and again
   * after it, or raises a reserved instruction if it is a branch) and the
   * ll/lld defect (#2345: an address error at 0x80000000 and above).
   * The recorder handles them at run time (recorder.c, mips.c):
   * mips_fads_pc is the instruction after such a delay slot that made a
   * memory access, ~0 elsewhere. */
  bool mips_ds_guard, mips_ll_guard;
  uint64_t mips_fads_pc;
  /* What the engine cannot run (set by a hook, which stops the engine):
   * the recording ends there with this error; empty while it runs. */
  char unsupported[240];
  /* Where the run loop resumes instead of the PC (set by a hook that
   * stopped the engine to redirect it). */
  uint64_t resume_override;
  bool has_resume_override;

  /* Unknown syscall numbers already reported (bitmap of the first 4096). */
  uint8_t unknown_reported[512];
  uint64_t syscall_count;

  tc_emu_observer obs;

  /* Kernel-private state (emu/linux/linux_syscalls.c), freed with the emu. */
  struct tc_linux_state *linux_state;
} tc_emu;

/* What differs per arch in the engine: each arch folder (emu/engine/x86/,
 * arm/ (arm and arm64), mips/, sparc/) defines its table, which
 * emu/engine/arches.c maps from the arch's id by the list of arches
 * (common/arch/arches.def); every entry may be NULL or 0. */
typedef struct tc_engine_arch_ops {
  /* After uc_open: the CPU model and engine modes (x86's Haswell,
   * mips64el's MIPS64r2 and virtual TLB). */
  void (*cpu_model)(tc_emu *emu);
  /* The CPU state Linux starts a process with, where Unicorn's reset
   * differs (FPU enabled, user mode, control registers). */
  void (*start_state)(tc_emu *emu);
  /* Hooks of its own (x86's cpuid and syscall/sysenter, SPARC's stubs). */
  int (*install)(tc_emu *emu, tc_error *err);
  /* The signal (and fault kind) an interrupt that is not a syscall
   * raises; 0: handled, the program goes on. NULL: SIGSEGV. */
  int (*intr_signal)(tc_emu *emu, uint32_t intno, tc_fault_kind *kind);
  /* Before any other handling of an interrupt: true if it comes from an
   * engine defect the arch detected (emu->unsupported is then set and the
   * engine stopped; mips64el's ll/lld and delay-slot defects). */
  bool (*intr_defect)(tc_emu *emu, uint32_t intno);
  /* An instruction Unicorn calls invalid that the arch makes a trap of
   * (x86's icebp): true if it raised it. */
  bool (*insn_invalid)(tc_emu *emu);
  /* Makes the OS's syscall (emu->os->syscall) with the arch's additions
   * (SPARC's carry flag); NULL: the OS's call as it is. */
  void (*syscall)(tc_emu *emu);
  /* Before the engine runs (SPARC: the condition codes of a new program). */
  void (*before_run)(tc_emu *emu);
  /* The guest's view of a state image read from the engine (i386's segment
   * bases from the GDT, RPL 3). */
  void (*fix_state)(tc_emu *emu, uint8_t *state);
  /* A register of the table the engine's mode lacks (tc_emu_reg_absent). */
  bool (*reg_absent)(const tc_arch *arch, int reg);
  /* Whether the CPU runs Thumb code now (arm's CPSR.T). */
  bool (*thumb)(tc_emu *emu);
  /* Registers tc_emu_reset_regs leaves as they are (x86's segments). */
  const char *const *reset_keeps;
  /* Mappings end below this address (0: no limit beyond the arch's). */
  uint64_t addr_limit;
} tc_engine_arch_ops;

/* The arch's table (emu/engine/arches.c); an empty one (tc_engine_none) if
 * it has none. */
const tc_engine_arch_ops *tc_engine_arch_ops_of(const tc_arch *arch);
/* A syscall trap, as the arch folders' hooks report it: the OS's call
 * (or SIGSYS on a bare engine). */
void tc_emu_os_syscall(tc_emu *emu);

/* Creates the engine for an arch, sets the Linux process-start CPU state
 * (x87 control word, MXCSR, tag word), installs the CPUID and syscall
 * hooks. opt is copied (its strings must outlive the emu). */
tc_emu *tc_emu_new(const tc_arch *arch, const tc_options *opt, tc_error *err);
/* A register of the arch table that the engine's mode lacks, never read
 * or written through Unicorn: i386's fs_base and gs_base (32-bit mode does
 * nothing with them: a read gives 0 or leaves the buffer as it was, a
 * write is ignored, and Unicorn 2.1.x prints a deprecation warning for
 * each access). It reads as 0; tc_emu_fix_state sets them from the GDT. */
bool tc_emu_reg_absent(const tc_arch *arch, int reg);
/* mips64el: Unicorn's virtual TLB (uc_ctl_tlb_mode, 2.1.x headers): n64
 * programs live at 0x120000000, which the MIPS64 CPU's own TLB refuses
 * from user mode. false where this build's Unicorn headers lack it. */
bool tc_emu_virtual_tlb(uc_engine *uc);
/* Engine probes (emu/engine/probes.c), each run once per process: the
 * Unicorn version ("2.1.4"); NULL if this engine records arch correctly
 * (with memory hooks when memory_hooks), else buf filled with one line
 * naming the defect and the version; whether the MIPS FPU registers can be
 * read (false on 2.0.1 and 2.1.1: they read as 0). */
const char *tc_engine_version(void);
const char *tc_engine_refusal(const tc_arch *arch, bool memory_hooks, char *buf,
                              size_t size);
bool tc_engine_mips_fpu_readable(void);
/* mips64el engine defects handled at run time instead of refused (probes.c):
 * the delay-slot flags left behind (upstream #2272) and ll/lld's address
 * error above 0x80000000 (#2345). */
bool tc_engine_mips64_ds_defect(void);
bool tc_engine_mips64_ll_defect(void);
/* Whether the mips instruction at insn (4 bytes, the arch's byte order)
 * loads or stores: what can leave the delay-slot flags behind (#2272). */
bool tc_engine_mips_memory_insn(const tc_arch *arch, const uint8_t *insn);
/* SPARC (emu/engine/sparc/sparc.c): sets up the carry-flag stubs and the code
 * hook; a window trap (save, restore, return, flushw), false if intno is
 * none; whether pc is in the private page (never recorded); after a
 * syscall, sets the carry flag and goes on after the trap. */
int tc_sparc_install(tc_emu *emu, tc_error *err);
/* Unicorn 2.0.1's sparc64 addresses 41 bits: every mapping stays below. */
#define TC_SPARC64_ADDR_LIMIT 0x20000000000ull
bool tc_sparc_window_trap(tc_emu *emu, uint32_t intno);
bool tc_sparc_hidden(const tc_emu *emu, uint64_t pc);
void tc_sparc_syscall_done(tc_emu *emu, bool failed);
/* Before the first instruction: the condition codes cleared, as Linux
 * starts a program (and as Unicorn needs: its flag state is undefined
 * until an instruction sets it, and a branch on it crashes). */
void tc_sparc_first_run(tc_emu *emu);
/* Unicorn's uc_arch and uc_mode (byte order included) for an arch; false
 * if Unicorn does not run it (emu/engine/uc_arch.c). */
bool tc_uc_arch_mode(const tc_arch *arch, int *uc_arch, int *uc_mode);
void tc_emu_free(tc_emu *emu);

/* x87 instructions Unicorn 2.0.1 computes on doubles (fyl2x, f2xm1,
 * fpatan, fsin, fprem...; emu/engine/x86/x87_host.c): true if insn is one that
 * tc_x87_host_run runs on the host's FPU instead (x86 hosts only). */
bool tc_x87_host_can(const uint8_t *insn, size_t n);
/* Runs it on the guest's x87 state (registers, TOP, tags and condition
 * codes updated; the PC is the caller's). 0, or -1 if it cannot. */
int tc_x87_host_run(tc_emu *emu, const uint8_t *insn, size_t n);

/* The program /proc/self/exe stands for: the emu keeps its own copy of fd
 * (any open descriptor of the file) and host_path as its name. 0 or
 * -errno. */
int tc_emu_set_exe(tc_emu *emu, int fd, const char *host_path);
/* A new open file description of the program (flags as open(2)), through
 * the held descriptor, never its path: -1 with errno when none is held. */
int tc_emu_exe_open(const tc_emu *emu, int flags);

/* Memory. Addresses/sizes are rounded out to pages. Return 0 or -errno. */
int tc_emu_map(tc_emu *emu, uint64_t addr, uint64_t size, uint32_t prot,
               const char *name, uint64_t file_offset);
int tc_emu_unmap(tc_emu *emu, uint64_t addr, uint64_t size);
int tc_emu_protect(tc_emu *emu, uint64_t addr, uint64_t size, uint32_t prot);
/* A free range of `size` bytes for mmap (below mmap_top), 0 if none. */
uint64_t tc_emu_find_free(tc_emu *emu, uint64_t size);
bool tc_emu_is_mapped(tc_emu *emu, uint64_t addr, uint64_t size);
const tc_region *tc_emu_region_at(tc_emu *emu, uint64_t addr);

/* Guest memory access by the kernel/loader (ignores guest protections).
 * tc_emu_write reports old/new bytes to obs.on_kernel_write.
 * Return 0 or -EFAULT. */
int tc_emu_read(tc_emu *emu, uint64_t addr, void *buf, size_t n);
int tc_emu_write(tc_emu *emu, uint64_t addr, const void *buf, size_t n);
/* Reads a NUL-terminated string; -EFAULT, or -ENAMETOOLONG if no NUL in max. */
int tc_emu_read_str(tc_emu *emu, uint64_t addr, char *buf, size_t max);

/* Registers by index into arch->regs (integers up to 8 bytes). */
uint64_t tc_emu_reg(tc_emu *emu, int reg);
void tc_emu_set_reg(tc_emu *emu, int reg, uint64_t value);
/* A register's first n bytes (x87, vector registers), in and out. */
void tc_emu_read_reg_bytes(tc_emu *emu, int reg, uint8_t *out, size_t n);
void tc_emu_write_reg_bytes(tc_emu *emu, int reg, const uint8_t *in, size_t n);
/* arm: 1 when the CPU is in Thumb state (CPSR.T); 0 on other arches. */
bool tc_emu_thumb(tc_emu *emu);
/* The address to (re)start emulation at: the PC, with bit 0 set in Thumb
 * state (Unicorn's uc_emu_start takes the ISA state from it). */
uint64_t tc_emu_resume_pc(tc_emu *emu);
/* Corrects what Unicorn reports wrongly in a state image just read: on
 * i386, fs_base/gs_base come from the GDT descriptors the selectors name
 * (Unicorn 2.0.1 reports 0 in 32-bit mode). */
void tc_emu_fix_state(tc_emu *emu, uint8_t *state);
/* Whole state image (arch->state_size bytes). */
void tc_emu_read_state(tc_emu *emu, uint8_t *state);

/* Every register back to its value at process start (start_state),
 * except the PC, the stack pointer and, on x86, the code, stack and data
 * selectors (flat segments stay loaded): what execve leaves. */
void tc_emu_reset_regs(tc_emu *emu);

/* Before execve unmaps the old image (the kernel's, and record -j N's
 * replay of it): drops the translated blocks of its code (the new image
 * may put other code at the old addresses). */
void tc_emu_drop_code(tc_emu *emu);

/* After an execve, with the engine stopped: clears emu->execed. */
void tc_emu_exec_done(tc_emu *emu);

/* Deterministic random bytes (AT_RANDOM, getrandom). */
void tc_emu_random(tc_emu *emu, void *buf, size_t n);

/* Ends the process: exit status or fatal signal. Stops the engine. */
void tc_emu_exit(tc_emu *emu, int code);
void tc_emu_kill(tc_emu *emu, int sig);
/* Records a guest fault (signal sig) and stops the engine. */
void tc_emu_fault(tc_emu *emu, tc_fault_kind kind, uint64_t addr, int sig);

#define TC_GUEST_PID 1000
#define TC_GUEST_UID 1000
#define TC_EPOCH_NS (1704067200ull * 1000000000ull) /* 2024-01-01 UTC */

/* Processes (emu/linux/linux_process.c). fork/vfork/clone without
 * CLONE_THREAD make a child emu (its own engine, a copy of the memory,
 * registers, fds, signal dispositions) entered in the shared table; the
 * session attaches a recorder to it (tc_procs_take_new) and schedules
 * the processes round-robin. At most TC_MAX_PROCS live at once (fork
 * fails with EAGAIN beyond). */
#define TC_MAX_PROCS 64
/* Memory regions (maps) of one process at most; see regions_full. */
#define TC_MAX_REGIONS 1024
/* The next pid or tid (one counter for both, shared by every process). */
uint32_t tc_procs_new_id(tc_emu *emu);
/* Drops emu's reference to the table (tc_emu_free). */
void tc_procs_release(tc_emu *emu);
/* Processes other than emu's own whose end the session has not yet
 * handled (tc_proc_exited); 0 before the first fork. */
size_t tc_procs_others_live(const tc_emu *emu);
/* Bytes mapped by the live processes other than emu's own: --max-memory
 * is a budget for all of them together. */
uint64_t tc_procs_others_mapped(const tc_emu *emu);
/* Bytes emu has mapped. */
uint64_t tc_emu_mapped(const tc_emu *emu);
/* A child made since the last call and not yet handed out, or NULL. */
tc_emu *tc_procs_take_new(tc_emu *emu);
/* The process ended (emu->exited): its fds are closed (pipe readers see
 * EOF), it becomes a zombie its parent can wait for (or is reaped at once
 * when nobody will), its parent gets SIGCHLD, its children are orphaned.
 * Call once, before tc_emu_free. */
void tc_proc_exited(tc_emu *emu);
/* Whether a process whose every thread waited can go on now (a child
 * exited, a pipe is ready, a signal came). Runs the waking checks. */
bool tc_emu_can_run(tc_emu *emu);
/* Whether the process is stopped (SIGSTOP and co.) until a SIGCONT. */
bool tc_emu_job_stopped(const tc_emu *emu);
/* The earliest deadline of a timed wait in the process (UINT64_MAX: none). */
uint64_t tc_emu_next_deadline(const tc_emu *emu);
/* What the process waits for, for a deadlock message. */
void tc_emu_describe_wait(const tc_emu *emu, char *out, size_t max);
/* A vfork child has released its parent (exec; exit does it itself). */
void tc_proc_vfork_release(tc_emu *emu);

/* Threads (emu/linux/linux_thread.c). Live (not exited) threads; 1 when the
 * program never cloned. */
size_t tc_emu_live_threads(const tc_emu *emu);
/* Picks the thread to run next, as emu->resched asks (round-robin over
 * the runnable ones; waits that time out on the virtual clock are woken,
 * and when nobody can run the clock jumps to the earliest deadline).
 * Saves the current thread's registers and loads the next one's. 0, or -1
 * with a message when every live thread is blocked for good (deadlock).
 * With other guest processes alive, a process whose threads all wait
 * returns 1 instead (they may wake it; the session decides). */
int tc_emu_schedule(tc_emu *emu, tc_error *err);
/* With the engine stopped: moves the PC of a thread whose syscall blocked
 * back to its trap instruction. Call before reading the thread's state. */
void tc_emu_restart_pc(tc_emu *emu);
/* Frees the thread table (tc_emu_free). */
void tc_linux_threads_free(tc_emu *emu);

/* Kernel (emu/linux/linux_syscalls.c): handles the syscall the guest just
 * trapped into. Reads number/args via arch->sys, writes the return
 * register, reports on_syscall. */
void tc_linux_syscall(tc_emu *emu);
/* After a fault (emu->faulted): if the guest has a handler for its signal
 * (installed, not blocked), builds the signal frame, points the registers
 * at the handler, clears the fault and returns true; else false and the
 * fault ends the process. */
bool tc_linux_deliver_fault(tc_emu *emu);
/* Whether tc_linux_deliver_fault would run a handler. */
bool tc_linux_fault_handled(tc_emu *emu);
/* Process-start kernel setup done by exec after loading (i386: the GDT
 * with flat 32-bit segments). Returns 0 or -errno. */
int tc_linux_process_init(tc_emu *emu);
/* Frees the kernel-private state. */
void tc_linux_forget(tc_emu *emu);

/* Guest filesystem (emu/linux/guestfs.c): the host path a guest path (relative
 * to dirfd's directory or cwd) stands for, symlinks resolved inside the
 * guest view. Syscall handlers act through tc_guestfs_walk (linux_sys.h),
 * which every path argument goes through. Returns 0 or -errno. */
int tc_guestfs_resolve(tc_emu *emu, int dirfd, const char *guest_path,
                       char *host_path, size_t host_max);

/* The engine's registers for direct reads, calibrated at the first call
 * (a recorder's); NULL when disabled or not possible. */
tc_regfile *tc_emu_regfile(tc_emu *emu);

/* The host address of guest bytes [addr, addr+size) when they lie in
 * one piece of guest memory, else NULL (read them through tc_emu_read). */
const uint8_t *tc_emu_host_lookup(tc_emu *emu, uint64_t addr, uint64_t size);
static inline const uint8_t *tc_emu_host(tc_emu *emu, uint64_t addr,
                                         uint64_t size) {
  const tc_hostmem *h = emu->hostmem + emu->hostmem_hint;
  if (emu->hostmem_hint < emu->nhostmem && addr >= h->start &&
      addr - h->start + size <= h->end - h->start)
    return h->host + (addr - h->start);
  return tc_emu_host_lookup(emu, addr, size);
}

#endif
