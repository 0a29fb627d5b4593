/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The per-arch part of the emulated Linux: the ops table each folder
 * emu/linux/<arch>/ fills (its signal frames, TLS, clone's child registers,
 * its own syscalls and quirks), the registry that maps an arch to it
 * (arches.c, expanding common/arch/arches.def), and what the generic
 * kernel lends the arch code (the delivery description, frame helpers).
 * Generic files ask the ops instead of testing the arch, so an arch is its
 * folders plus its line in common/arch/arches.def. */
#ifndef TC_LINUX_ARCH_H
#define TC_LINUX_ARCH_H

#include <stdbool.h>
#include <stdint.h>

#include "emu/linux/linux_sys.h"

/* sigaction and sigaltstack flags (the same on every arch tracecorn runs;
 * mips' SA_SIGINFO is 8, not 4, which its frame code knows). */
#define TC_SA_SIGINFO 4u
#define TC_SA_ONSTACK 0x08000000u
#define TC_SA_RESTORER 0x04000000u
#define TC_SA_NODEFER 0x40000000u
#define TC_SA_RESETHAND 0x80000000u
#define TC_SS_ONSTACK 1
#define TC_SS_DISABLE 2

/* One signal delivery: what the frame says and where the interrupted code
 * goes on (linux_signal.c fills it, the arch's frame code writes it). */
typedef struct tc_sig_desc {
  int sig, code;   /* host-numbered signal, si_code */
  bool fault;      /* si_addr instead of si_pid/si_uid */
  uint64_t addr;   /* si_addr, cr2 */
  uint32_t trapno; /* x86 exception vector of a fault */
  uint32_t err;    /* its error code (page faults) */
  uint64_t resume; /* the interrupted pc saved in the frame */
  uint64_t mask;   /* the mask the frame saves (sigreturn restores it) */
  uint64_t bias;   /* subtracted from the handler address written to the
                      pc (syscall_resume_skip below) */
  uint32_t pid;    /* si_pid when not the process's own (SIGCHLD: the child) */
  bool has_status; /* SIGCHLD: si_status follows si_uid */
  int32_t status;
} tc_sig_desc;

/* A second syscall table that a compat trap (tc_trap.compat) reaches:
 * x86-64's int $0x80 calls i386's, as Linux does (its arguments are the
 * low 32 bits of ebx, ecx, edx, esi, edi, ebp; the full rax gets the
 * result). */
typedef struct tc_linux_compat {
  tc_arch_id names_of; /* the arch whose numbers and names it uses */
  const char *nr_reg;  /* this arch's registers, by name */
  const char *arg_regs[6];
  const char *ret_reg;
  /* The native call that serves compat call NAME as it is (arguments that
   * need no translation: numbers, paths, byte buffers), or NULL: the call
   * answers -ENOSYS with a notice. */
  const char *(*native)(const char *name);
} tc_linux_compat;

typedef struct tc_linux_arch_ops {
  /* uname's machine field. */
  const char *uname_machine;
  /* TASK_SIZE: the end of user space (mmap, brk, mremap limits). */
  uint64_t task_size;
  /* The unsuffixed uid/gid calls (getresuid, setuid...) take 16-bit ids,
   * the *32 ones 32-bit (i386, arm). */
  bool uid16;
  /* clone(flags, sp, ptid, tls, ctid), Linux's CONFIG_CLONE_BACKWARDS;
   * else (flags, sp, ptid, ctid, tls) (x86-64). */
  bool clone_backwards;
  /* siginfo has si_code before si_errno (mips; but see
   * tc_sigframe_put_siginfo on n64). */
  bool siginfo_swapped;
  /* si_code of the SIGILL for an undefined instruction; SI_KERNEL (0x80)
   * carries no address. */
  int ill_code;
  /* Bytes the engine still adds to the PC after the syscall hook returns
   * (x86-64's `syscall`): a frame made at a syscall saves PC + these and
   * writes the handler address this much short. */
  uint8_t syscall_resume_skip;
  /* The register clone's CLONE_SETTLS sets in the child, by name; NULL
   * when thread_start does it. */
  const char *tls_reg;
  /* Its own syscalls, bound by name like the generic tables (NULL-ended;
   * NULL: none). An entry wins over a generic one of the same name. */
  const tc_sys_entry *syscalls;
  /* At process start and after execve, before the first instruction is
   * recorded (i386's GDT, arm's vectors page); 0 or -errno. NULL: none. */
  int (*process_init)(tc_emu *emu);
  /* clone with CLONE_SETTLS, in the parent before the thread exists: the
   * thread's GDT page (i386), which *gdt is set to. NULL: nothing. */
  int (*clone_settls)(tc_emu *emu, uint64_t tls, uint64_t *gdt);
  /* A cloned thread's first switch-in, after its PC, SP, return value and
   * tls_reg are set; 0 or -1. NULL: nothing more. */
  int (*thread_start)(tc_emu *emu, const tc_thread *t);
  /* Builds d's frame on the guest stack and points the registers at the
   * handler; *frame_at is the frame's address. -1 if it cannot be written.
   * NULL: handlers never run (such a signal is dropped, with a notice).
   * An arch with a frame has rt_sigreturn too. */
  int (*signal_frame)(tc_emu *emu, tc_linux_state *st, const tc_sig_desc *d,
                      uint64_t *frame_at);
  /* The handler returned: registers and mask back from the frame (the
   * frame without siginfo, and the rt one). 0 or -EFAULT (the caller then
   * kills with SIGSEGV). sigreturn NULL: the arch has no such frame. */
  int64_t (*sigreturn)(tc_sys_call *c);
  int64_t (*rt_sigreturn)(tc_sys_call *c);
  /* The compat table, NULL: none. */
  const tc_linux_compat *compat;
} tc_linux_arch_ops;

/* The arch's ops (arches.c, from common/arch/arches.def); an arch without
 * a folder gets defaults. */
const tc_linux_arch_ops *tc_linux_arch_of(const tc_arch *arch);

/* ---- lent to the arch code (linux_signal.c) */
/* A register by name; one the arch lacks reads 0 and ignores writes (one
 * frame code serves x86-64 and i386). */
uint64_t tc_linux_reg(tc_emu *emu, const char *name);
void tc_linux_set_reg(tc_emu *emu, const char *name, uint64_t v);
/* A numbered register bank (arm64 v0..v31, arm d0..d31) saved into or
 * restored from consecutive `width`-byte slots of a frame's FP record; a
 * register the arch lacks is left alone (its slot stays zero). */
void tc_linux_reg_bank(tc_emu *emu, const char *prefix, unsigned width,
                       uint8_t *v, bool save);
/* siginfo in the guest's numbering and byte order (the union at 12, 16 on
 * 64-bit). */
void tc_sigframe_put_siginfo(tc_emu *emu, uint8_t *si, const tc_sig_desc *d);
/* stack_t: {ss_sp, ss_flags, ss_size}; mips {ss_sp, ss_size, ss_flags}. */
void tc_sigframe_put_stack(const tc_arch *a, uint8_t *p,
                           const tc_linux_state *st, bool on_alt);
/* The stack the frame goes on: the alternate one for SA_ONSTACK when it
 * is set up and not already in use (the kernel's sigsp()). */
uint64_t tc_sigframe_sp(const tc_linux_state *st, uint64_t flags, uint64_t sp,
                        bool *on_alt);
/* sigset_t in a frame: the guest's numbering, longs in its byte order;
 * the one read back loses SIGKILL and SIGSTOP. */
void tc_sigframe_put_sigset(const tc_arch *a, uint8_t *p, uint64_t host_set);
uint64_t tc_sigframe_get_sigset(const tc_arch *a, const uint8_t *p);
/* The sigreturn (+0) and rt_sigreturn (+8) trampolines when the guest
 * gave no sa_restorer (mips has none at all): Linux keeps them in the vDSO
 * (arm64, mips) or the sigpage (arm); tracecorn maps one read-only
 * executable "[sigpage]" page on first need, holding `code` (each
 * trampoline two instructions: load the syscall number; trap). 0 if it
 * cannot be mapped. */
uint64_t tc_sigframe_trampoline(tc_emu *emu, tc_linux_state *st, bool rt,
                                const uint32_t code[4]);
/* Where the handler returns to: sa_restorer when the guest set one, else
 * the trampoline. */
uint64_t tc_sigframe_return_address(tc_emu *emu, tc_linux_state *st, int sig,
                                    bool rt, const uint32_t code[4]);

/* ---- lent to the arch code (linux_sys_mm.c) */
/* Whether any mapping overlaps [start, end). */
bool tc_sys_overlaps_any(tc_emu *emu, uint64_t start, uint64_t end);
/* mmap with its arguments decoded (i386's old_mmap reads them from a
 * struct). */
int64_t tc_sys_do_mmap(tc_sys_call *c, uint64_t addr, uint64_t len,
                       uint32_t prot, uint32_t flags, int fd, uint64_t off);

#endif
