/* SPDX-License-Identifier: GPL-2.0-or-later */
/* tracecorn: record Linux programs under Unicorn and write real trace formats.
 *
 * This header is libtracecorn's public API, and all of it (docs/api.md).
 * Its centre is the EVENT MODEL (tc_event): a session records a program
 * into events that go to trace files and to your callbacks; a reader
 * yields the same events back from a file of any readable format. See
 * docs/event-model.md for the prose version of the contract.
 *
 * Three kinds of types, so that the library can grow without breaking
 * programs built against an older header:
 *  - handles (tc_arch, tc_format, tc_session) are opaque: use the
 *    functions that take them;
 *  - structs you allocate (tc_options, tc_run_result, tc_filter and the
 *    reports) start with `size`: call their init function first, which
 *    sets it, and the library reads and writes only that much;
 *  - events and tc_trace_info are the library's, read through pointers. */
#ifndef TRACECORN_H
#define TRACECORN_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ----------------------------------------------------------------- version
 * The version of this header. tc_version() gives the library's own, which
 * may be newer (same SONAME, see docs/api.md "ABI policy"). CMakeLists.txt
 * reads the project version from these three lines. */
#define TC_VERSION_MAJOR 0
#define TC_VERSION_MINOR 2
#define TC_VERSION_PATCH 0
#define TC_VERSION_STRING "0.2.0"
/* One comparable number: 0x00MMmmpp. */
#define TC_VERSION_NUMBER                                                      \
  ((TC_VERSION_MAJOR << 16) | (TC_VERSION_MINOR << 8) | TC_VERSION_PATCH)

/* Marks the public API: libtracecorn.so is built with -fvisibility=hidden
 * and exports exactly the TC_API functions (lib/libtracecorn.map). */
#if defined(__GNUC__) || defined(__clang__)
#define TC_API __attribute__((visibility("default")))
#else
#define TC_API
#endif

/* The version of the library actually loaded, "MAJOR.MINOR.PATCH" (a
 * static string). Compare with TC_VERSION_STRING to detect a header/library
 * mismatch. */
TC_API const char *tc_version(void);

/* ------------------------------------------------------------------ errors */

/* Every fallible call takes a tc_error* (may be NULL) and returns -1 / NULL
 * on failure with a one-line human message in err->msg. Its layout is
 * fixed. */
typedef struct tc_error {
  char msg[512];
} tc_error;

/* Formats a message into err->msg (truncated to fit; err may be NULL).
 * For sinks that report their own errors. */
TC_API void tc_error_set(tc_error *err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* A notice handler (tc_set_notice_handler). */
typedef void (*tc_notice_fn)(const char *line, void *user);

/* Notices: what the library tells while it records (a syscall it does not
 * implement, a signal it drops, an output that stops, a partial trace
 * kept), one line each. By default each goes to stderr as "tracecorn:
 * LINE\n"; a handler receives LINE (no prefix, no newline) instead, as a
 * program with its own display wants (the tracecorn command clears its
 * progress line first). Process-wide; fn NULL restores stderr. The
 * library calls it from its recording and writer threads, one call at a
 * time. tc_options.quiet still silences a session's notices. */
TC_API void tc_set_notice_handler(tc_notice_fn fn, void *user);

/* ------------------------------------------------------------------ arches
 * An arch is a static, immutable table (never freed): its registers and
 * the layout of a "state image", the byte buffer of
 * tc_arch_state_size(arch) bytes that holds every register's value (a
 * KEYFRAME's state, an INSN's state_before/state_after). Register r
 * occupies [tc_arch_reg_offset(r), + tc_arch_reg_size(r)), stored as
 * Unicorn reports it, i.e. in HOST (little-endian) byte order: integers as
 * little-endian integers, x87 registers as their 10-byte extended format,
 * vectors as little-endian byte arrays. Registers are named by their index,
 * 0 to tc_arch_reg_count(arch) - 1. */

typedef enum tc_arch_id {
  TC_ARCH_NONE = 0,
  TC_ARCH_X86,     /* i386, 32-bit protected mode */
  TC_ARCH_X86_64,  /* amd64 */
  TC_ARCH_ARM,     /* arm (A32 + Thumb), little-endian */
  TC_ARCH_ARM64,   /* aarch64, little-endian */
  TC_ARCH_MIPS,    /* mips o32, big-endian */
  TC_ARCH_MIPSEL,  /* mips o32, little-endian */
  TC_ARCH_SPARC,   /* sparc v8, big-endian */
  TC_ARCH_SPARC64, /* sparc v9, big-endian */
  TC_ARCH_MIPS64EL /* mips64 n64, little-endian */
} tc_arch_id;

/* Register flags (tc_arch_reg_flags). */
enum {
  TC_REG_PC = 1u << 0,      /* the program counter */
  TC_REG_SP = 1u << 1,      /* the stack pointer */
  TC_REG_FLAGS = 1u << 2,   /* condition flags (eflags, cpsr, ...) */
  TC_REG_GPR = 1u << 3,     /* general-purpose integer register */
  TC_REG_SEGMENT = 1u << 4, /* segment selector or segment base */
  TC_REG_FPU = 1u << 5,     /* x87 / FP data or control register */
  TC_REG_VECTOR = 1u << 6,  /* SIMD register (xmm, v0..) or its control */
  TC_REG_SYSTEM = 1u << 7   /* anything else (coprocessor, TLS base...) */
};

typedef struct tc_arch tc_arch;

/* The arch table of an id, or NULL. */
TC_API const tc_arch *tc_arch_by_id(tc_arch_id id);
/* The arch table of a name, case-insensitive, with the usual aliases
 * ("amd64", "i386", "aarch64", "armhf"...), or NULL. */
TC_API const tc_arch *tc_arch_by_name(const char *name);
/* Its name: "x86_64", "x86", "arm", "arm64", "mips", "mipsel"... */
TC_API const char *tc_arch_name(const tc_arch *arch);
/* Its id. */
TC_API tc_arch_id tc_arch_id_of(const tc_arch *arch);
/* Bytes of a guest pointer: 4 or 8. */
TC_API unsigned tc_arch_ptr_size(const tc_arch *arch);
/* 1 if the guest is big-endian (mips, sparc), else 0. */
TC_API int tc_arch_big_endian(const tc_arch *arch);
/* Bytes of a state image. */
TC_API size_t tc_arch_state_size(const tc_arch *arch);
/* How many registers the table has. */
TC_API int tc_arch_reg_count(const tc_arch *arch);
/* Register reg's name, lower-case as GDB and capstone spell it ("rax",
 * "st0"), or NULL if there is no register reg. */
TC_API const char *tc_arch_reg_name(const tc_arch *arch, int reg);
/* Its size in bytes (1..32), or 0 if there is no register reg. */
TC_API unsigned tc_arch_reg_size(const tc_arch *arch, int reg);
/* Its TC_REG_* flags, or 0 if there is no register reg. */
TC_API unsigned tc_arch_reg_flags(const tc_arch *arch, int reg);
/* Its offset in the state image, or 0 if there is no register reg. */
TC_API size_t tc_arch_reg_offset(const tc_arch *arch, int reg);
/* The index of the program counter. */
TC_API int tc_arch_pc_reg(const tc_arch *arch);
/* The index of the stack pointer. */
TC_API int tc_arch_sp_reg(const tc_arch *arch);
/* The index of the register named exactly `name` ("rax"), or -1 if none. */
TC_API int tc_arch_reg_index(const tc_arch *arch, const char *name);
/* The Linux name of syscall number nr on this arch ("write"), or NULL. */
TC_API const char *tc_arch_syscall_name(const tc_arch *arch, uint32_t nr);
/* Reads a register (size <= 8) out of a state image as an integer. */
TC_API uint64_t tc_state_get(const tc_arch *arch, const uint8_t *state,
                             int reg);
/* Stores v into register reg (size <= 8, zero-extended) of a state image. */
TC_API void tc_state_set(const tc_arch *arch, uint8_t *state, int reg,
                         uint64_t v);

/* ------------------------------------------------------------ event model
 * The library makes the events and hands them out by pointer (sinks,
 * tc_read_trace), valid during the call. A later version may add event
 * kinds (skip the kinds you do not know) and fields at the end of an
 * event's struct, so never make these structs for the library or rely on
 * their size; tc_mem_access, read as an array, stays as it is. */

typedef enum tc_event_kind {
  TC_EV_INSN = 1, /* one executed instruction with all its effects */
  TC_EV_SYSCALL,  /* a syscall made by the last INSN event; MAP/UNMAP/
                     PROTECT events it caused come just before it */
  TC_EV_MAP,      /* memory mapped (initial image or mmap/brk/...) */
  TC_EV_UNMAP,    /* memory unmapped */
  TC_EV_PROTECT,  /* protection changed */
  TC_EV_KEYFRAME, /* full register state (random-access point) */
  TC_EV_FAULT,    /* the guest faulted (follows the faulting INSN) */
  TC_EV_EXIT,     /* the recording ends; always the last event */
  TC_EV_SIGNAL,   /* a signal delivered to a guest handler (its frame) */
  TC_EV_TURN      /* a process's scheduler turn begins (several processes) */
} tc_event_kind;

enum { TC_MEM_READ = 1, TC_MEM_WRITE = 2 };
enum { TC_PROT_READ = 1, TC_PROT_WRITE = 2, TC_PROT_EXEC = 4 };

/* One memory access by an instruction (or, in a syscall event, one region
 * the kernel wrote). Accesses are merged: adjacent same-kind accesses of one
 * instruction become one, duplicates are dropped, a `rep` instruction's
 * iterations each become an instruction of their own (as single-stepping
 * shows them). */
typedef struct tc_mem_access {
  uint64_t addr;
  uint32_t size;
  uint8_t kind;          /* TC_MEM_READ or TC_MEM_WRITE */
  const uint8_t *before; /* READ: bytes read. WRITE: bytes before the write */
  const uint8_t *after;  /* READ: == before. WRITE: bytes written */
} tc_mem_access;

/* TC_EV_INSN: instruction number `index` (0-based, per recording) executed
 * at `pc`. state_before is the full register state before it (PC == pc),
 * state_after the state after it (PC == next instruction). regs[] lists the
 * indices of every register whose value differs between the two, ascending.
 * A syscall instruction's kernel effects (return register) are part of it;
 * its kernel memory writes come in the following TC_EV_SYSCALL.
 *
 * Block events: a coverage format's reader (TC_CAP_COVERAGE: drcov) holds
 * basic blocks, not instructions, and yields one INSN event per block with
 * tid TC_TID_BLOCK and size 0: pc is the block's start and the PC in
 * state_after its end (start + length in bytes; the PC is its changed
 * register); no bytes, other register values or memory. */
/* The tid of a block event (no Linux thread has it). */
#define TC_TID_BLOCK 0xFFFFFFFFu

typedef struct tc_insn_event {
  uint64_t index;
  uint64_t pc;
  uint32_t tid;
  uint8_t size;
  uint8_t bytes[16];
  uint16_t nregs;
  const uint16_t *regs;
  const uint8_t *state_before;
  const uint8_t *state_after;
  uint32_t nmem;
  const tc_mem_access *mem;
} tc_insn_event;

typedef struct tc_syscall_event {
  uint64_t insn_index; /* the INSN event that trapped */
  uint32_t tid;
  uint32_t nr;
  const char *name; /* NULL if unknown to tracecorn */
  uint64_t args[6];
  int64_t ret;     /* as the guest sees it: -errno on failure */
  uint8_t unknown; /* 1: not implemented, answered -ENOSYS */
  uint32_t nmem;   /* memory the kernel wrote (kind WRITE) */
  const tc_mem_access *mem;
  /* A syscall whose kernel writes exceed a few MiB (a 256 MiB read) comes
   * as several SYSCALL events in a row, so no one holds it all in memory:
   * the same call (insn_index, nr, args, ret) with part = 0, 1, 2... and
   * more = 1 on every part but the last. Each part's mem holds the next
   * writes. A consumer writing one record per syscall does so at part 0
   * and takes only the memory of later parts. */
  uint32_t part;
  uint8_t more;
  /* 1: made through the arch's compat table, so nr and name are that
   * table's: x86-64 code's `int $0x80` calls i386's (TC_CAP_SYSCALL_COMPAT
   * formats keep it; others read such a call back with its i386 number). */
  uint8_t compat;
} tc_syscall_event;

typedef struct tc_map_event {
  uint64_t addr, size;
  uint32_t prot;        /* TC_PROT_* */
  const char *name;     /* "[stack]", "[heap]", "/bin/prog", "" */
  uint64_t file_offset; /* for file-backed maps */
  const uint8_t *data;  /* initial contents (size bytes), or NULL = zeros */
} tc_map_event;

typedef struct tc_keyframe_event {
  uint64_t insn_index; /* the next instruction to execute */
  uint32_t tid;
  const uint8_t *state; /* tc_arch_state_size(arch) bytes */
} tc_keyframe_event;

typedef enum tc_fault_kind {
  TC_FAULT_UNMAPPED_READ = 1,
  TC_FAULT_UNMAPPED_WRITE,
  TC_FAULT_UNMAPPED_FETCH,
  TC_FAULT_PROT_READ,
  TC_FAULT_PROT_WRITE,
  TC_FAULT_PROT_FETCH,
  TC_FAULT_INVALID_INSN,
  TC_FAULT_DIVIDE,
  TC_FAULT_OTHER
} tc_fault_kind;

typedef struct tc_fault_event {
  uint64_t insn_index; /* the faulting instruction (it did not complete) */
  uint64_t pc;
  uint64_t addr; /* faulting data address, or pc (icebp: the next pc) */
  tc_fault_kind kind;
  int signal; /* SIGSEGV, SIGILL, SIGFPE, SIGBUS */
} tc_fault_event;

typedef enum tc_exit_reason {
  TC_EXIT_EXITED = 1,  /* exit/exit_group: status = code */
  TC_EXIT_SIGNALED,    /* fault or kill: signal set, status = 128+signal */
  TC_EXIT_MAX_INSNS,   /* --max-insns reached */
  TC_EXIT_INTERRUPTED, /* Ctrl-C / tc_session_stop() */
  TC_EXIT_ERROR        /* tracecorn itself failed (message in `message`) */
} tc_exit_reason;

typedef struct tc_exit_event {
  tc_exit_reason reason;
  int status; /* the process exit status tracecorn exits with */
  int signal;
  uint64_t insn_count;
  const char *message; /* may be NULL */
} tc_exit_event;

/* TC_EV_SIGNAL: the kernel delivered a signal to a handler the guest
 * installed. It follows the SYSCALL that sent it (kill, tgkill...) or the
 * FAULT that raised it. `mem` is the signal frame as the kernel wrote it
 * (kind WRITE, old and new bytes), applied like a syscall's kernel writes.
 * The handler's entry state is the next state: the syscall INSN's
 * state_after, or, after a fault, a KEYFRAME that comes next. The return
 * is the guest's rt_sigreturn/sigreturn SYSCALL. */
typedef struct tc_signal_event {
  uint64_t insn_index; /* the INSN it was delivered after */
  uint32_t tid;
  int signal;
  int code;          /* si_code: SI_USER 0, SI_TKILL -6, SEGV_MAPERR 1... */
  uint64_t addr;     /* si_addr (faults), else 0 */
  uint32_t pid, uid; /* si_pid, si_uid of a sent signal (code <= 0) */
  uint64_t handler;  /* the handler's address */
  uint64_t frame;    /* the frame's address: the handler's stack pointer */
  uint32_t nmem;
  const tc_mem_access *mem;
} tc_signal_event;

/* TC_EV_TURN: in a recording of several processes (fork), each process's
 * stream says where its scheduler turns begin. Processes run one at a time
 * in turns numbered across the whole recording, so the events of turn t of
 * one process all happened after those of every turn < t of the others:
 * that is how their files merge in time order (`tracecorn strace -f`). A
 * process's events before its first TURN happened before any other
 * process's turn (the first process, before its first fork). Recordings of
 * one process have none. */
typedef struct tc_turn_event {
  uint64_t turn;       /* 0, 1, 2... across every process of the recording */
  uint64_t insn_index; /* the process's next instruction */
  uint32_t tid;        /* the thread that runs it */
} tc_turn_event;

typedef struct tc_event {
  tc_event_kind kind;
  union {
    tc_insn_event insn;
    tc_syscall_event sys;
    tc_map_event map; /* MAP, UNMAP (data/name unused), PROTECT */
    tc_keyframe_event key;
    tc_fault_event fault;
    tc_exit_event exit;
    tc_signal_event sig;
    tc_turn_event turn;
  } u;
} tc_event;

/* What a trace file knows about its recording: tc_session_info() gives the
 * recording's. The library's, read through the pointer; fields a format
 * cannot hold come back zero/NULL. */
typedef struct tc_trace_info {
  const tc_arch *arch;
  uint64_t entry;     /* first PC */
  uint64_t load_base; /* 0 for ET_EXEC */
  uint32_t pid;
  const char *exe_path;    /* guest-visible path of the program */
  const uint8_t *exe_data; /* the program file's bytes (hashes), or NULL */
  size_t exe_size;
  int argc;
  const char *const *argv;
  uint64_t seed;
  uint32_t keyframe_interval; /* instructions between KEYFRAME events */
  uint8_t has_memory;         /* memory accesses were recorded */
  /* 1: the events come from tracecorn's recorder, whose stream is
   * continuous: every INSN's state_before is the previous INSN's
   * state_after, or the state of the KEYFRAME since, and its state_after
   * differs from state_before in regs[] only; a consumer may then skip
   * comparing whole states. 0 (readers, converted streams): no promise. */
  uint8_t continuous;
  const uint8_t *initial_state; /* state image before instruction 0 */
  /* The writer options the recording was given (tc_options), NULL-
   * terminated; NULL from readers. */
  const char *const *writer_options;
} tc_trace_info;

/* ----------------------------------------------------------------- formats
 * A format is an entry of the library's registry, static and never freed:
 * the writer, the reader or both of one trace format. */

typedef struct tc_format tc_format;

/* What a format can hold (tc_format_caps), so round-trip checks compare
 * only that. */
enum {
  TC_CAP_INSN_BYTES = 1u << 0, /* instruction bytes */
  TC_CAP_MEM = 1u << 1,        /* memory accesses with values */
  TC_CAP_MEM_KIND = 1u << 2,   /* read vs write is recorded (else inferred) */
  TC_CAP_MEM_EXACT = 1u << 3,  /* exact sizes (else split/widened, e.g. TRAC
                                  pointer-sized words) */
  TC_CAP_SYSCALLS = 1u << 4,   /* syscall events */
  TC_CAP_MAPS = 1u << 5,       /* map/unmap/protect events */
  TC_CAP_FAULTS = 1u << 6,     /* fault events */
  TC_CAP_EXIT = 1u << 7,       /* exit event with status */
  TC_CAP_TID = 1u << 8,        /* thread ids */
  TC_CAP_MEM_OLD = 1u << 9,    /* memory before the instruction (else only
                                  the values after it) */
  TC_CAP_MEM_WRITES_ONLY = 1u << 10, /* with TC_CAP_MEM: only writes are
                                        recorded, reads are not (REVEN) */
  TC_CAP_COVERAGE = 1u << 11,       /* coverage, not an execution: each distinct
                                       basic block once, as a block event (see
                                       tc_insn_event); verify compares the code
                                       covered, not a sequence */
  TC_CAP_SYSCALL_MEM = 1u << 12,    /* with TC_CAP_SYSCALLS: the memory the
                                       kernel wrote (tc_syscall_event.mem) */
  TC_CAP_MODULES = 1u << 13,        /* the names and ranges of file-backed maps
                                       (modules), even without TC_CAP_MAPS */
  TC_CAP_MAP_DATA = 1u << 14,       /* the initial contents of mapped memory */
  TC_CAP_SIGNALS = 1u << 15,        /* signal delivery events (TC_EV_SIGNAL) */
  TC_CAP_BLOCKS = 1u << 16,         /* coverage blocks (tid TC_TID_BLOCK) are
                                       kept as blocks, not as instructions */
  TC_CAP_MEM_BOUNDED = 1u << 17,    /* with TC_CAP_MEM: at most
                                       TC_MEM_BOUND_WORDS memory entries per
                                       instruction (TRAC: x64dbg reads 32); an
                                       instruction's accesses past them (fxsave,
                                       rep movs) are dropped */
  TC_CAP_SYSCALL_COMPAT = 1u << 18, /* with TC_CAP_SYSCALLS: which calls
                                       went through the compat table
                                       (tc_syscall_event.compat) */
  TC_CAP_TURNS = 1u << 19,          /* the processes' scheduler turns
                                       (TC_EV_TURN) */
};
enum { TC_MEM_BOUND_WORDS = 32 };

/* The format registered as `name` ("tct", "trac"...), or NULL. */
TC_API const tc_format *tc_format_by_name(const char *name);
/* The writable format whose file extension (for some arch) ends `path`, a
 * trailing ".zst" and "/" aside ("x.trace64", "x.tf.zst", "x.rvn/"), or
 * NULL when none or more than one does. */
TC_API const tc_format *tc_format_by_extension(const char *path);
/* NULL-terminated list of every registered format. */
TC_API const tc_format *const *tc_formats(void);
/* Finds the format of an existing file by content (then extension). */
TC_API const tc_format *tc_format_detect(const char *path, tc_error *err);
/* Its name: "text", "tct", "trac", "tfile", ... */
TC_API const char *tc_format_name(const tc_format *fmt);
/* One line saying what it is. */
TC_API const char *tc_format_description(const tc_format *fmt);
/* The file extension its writer gives a trace of arch (NULL: x86_64):
 * ".tct", ".trace64" or ".trace32" for trac...; NULL if it has no
 * writer. */
TC_API const char *tc_format_extension(const tc_format *fmt,
                                       const tc_arch *arch);
/* What it holds: TC_CAP_* bits. */
TC_API uint32_t tc_format_caps(const tc_format *fmt);
/* 1 if it has a writer (tc_session_add_writer, tc_convert's output). */
TC_API int tc_format_can_write(const tc_format *fmt);
/* 1 if it has a reader (tc_read_trace, tc_convert's input). */
TC_API int tc_format_can_read(const tc_format *fmt);
/* Readers take zstd-compressed files as they are. By default such a file
 * may decompress to at most 1000 times its own size, but at least 64 MiB
 * and at most 16 GiB: past that, reading it fails ("decompresses to more
 * than ..."), so a small hostile file cannot fill $TMPDIR. This sets one
 * limit in bytes instead, for the whole process (0: back to the default,
 * UINT64_MAX: none). The CLI sets it from TRACECORN_MAX_DECOMPRESSED. */
TC_API void tc_set_max_decompressed(uint64_t bytes);

/* ---------------------------------------------------------------- sessions */

#define TC_DEFAULT_MAX_MEMORY (4ull << 30) /* 4 GiB */
#define TC_DEFAULT_MAX_PROCS 4096          /* processes made in a recording */

typedef struct tc_options {
  size_t size; /* set by tc_options_init() */
  /* Program. */
  const char *arch;       /* raw mode: arch name; ELF: NULL = from file */
  uint64_t seed;          /* AT_RANDOM / getrandom seed */
  const char *const *env; /* NULL-terminated "K=V" list, NULL = empty */
  const char *fs_root;    /* guest filesystem root, NULL = host "/" */
  const char *cwd;        /* guest cwd, NULL = host cwd */
  uint64_t stack_size;    /* 0 = 8 MiB */
  /* Guest address-space cap, for the whole recording: a map (or a fork's
   * copy) that would take all the guest's processes together past it
   * fails with -ENOMEM, as under a Linux RLIMIT_AS, before Unicorn sees
   * it (Unicorn 2.0.1 is left unusable by one huge failed map).
   * 0 = TC_DEFAULT_MAX_MEMORY. */
  uint64_t max_memory;
  int stdin_fd, stdout_fd, stderr_fd; /* host fds behind guest 0/1/2 */
  /* Recording. */
  uint64_t max_insns; /* instructions of all processes together; 0 = no
                         limit */
  /* Processes the guest may create in the whole recording (forks that
   * succeeded); past it fork fails with EAGAIN. 0 = TC_DEFAULT_MAX_PROCS. */
  uint64_t max_procs;
  uint32_t keyframe_interval; /* 0 = 4096 */
  int record_memory;          /* record memory accesses (default on) */
  int exact;                  /* read every register every instruction */
  int quiet;                  /* no notices on stderr */
  /* Pass host stat results through unchanged. By default the ones that
   * vary between runs are normalised so recordings are deterministic:
   * st_atime = st_mtime, st_dev fixed, st_ino a hash of the path. */
  int host_stat;
  /* Format-specific writer options, "FORMAT.KEY=VALUE", NULL-terminated
   * (docs/formats/); a writer refuses keys of its format it does not
   * know. */
  const char *const *writer_options;
  /* What to record (the whole program still runs), NULL-terminated lists;
   * both NULL = everything. trace_ranges: instructions whose pc is in
   * "A-B" (hex, B excluded), in a function NAME (of the program, its
   * interpreter or any library it loads), MODULE:NAME (that module's
   * only) or in a MODULE's code; trace_funcs: every instruction from a
   * call of the named function (or hex entry address) until it returns,
   * callees included. Names are resolved as each module is mapped; a
   * static program's unknown name fails tc_session_run. At most 16 each.
   * Each return into the selection after a gap starts with a KEYFRAME. */
  const char *const *trace_ranges;
  const char *const *trace_funcs;
  /* Guest threads: instructions a thread runs before the next runnable one
   * takes its turn (it also gives way when it blocks, yields or exits).
   * 0 = 10000. */
  uint64_t sched_quantum;
  /* execve/execveat that would succeed are not followed: the run ends
   * there (EXIT of reason TC_EXIT_INTERRUPTED, status 0, with a message)
   * instead of the new program replacing the recorded one. Failing calls
   * (a missing file...) still return their error to the program. */
  int no_follow_exec;
  /* Writer threads for the trace files of the first process (standard
   * output, sinks and formats with a thread of their own excepted; the
   * files are the same bytes either way): TC_WRITER_THREADS_AUTO when
   * the host has two CPUs or more, TC_WRITER_THREADS_OFF never,
   * TC_WRITER_THREADS_ON always. The tracecorn command sets it from
   * TRACECORN_WRITER_THREADS (0: off, 1: on). */
  int writer_threads;
  /* A forked child's output PREFIX.PID.EXT may replace an existing file
   * that is not a trace (tc_output_clobbers), as `record --force` lets
   * the first outputs do. Without it such a child output is not written:
   * said on stderr, the process still runs and is recorded in the other
   * files, and tc_session_run fails at the end (the CLI's status 125). */
  int force;
  /* The guest's fds that are the host's terminals answer as terminals:
   * their queries (TCGETS, TIOCGWINSZ) and mode changes (TCSETS, TCSETSW,
   * TCSETSF) go to the host's terminal, on the arches with Linux's generic
   * termios (x86, arm, arm64). Off (the default), no fd of the guest is a
   * terminal (ENOTTY), so a recording does not depend on where it ran. The
   * library does not restore a terminal's modes the program changed: the
   * caller does (the tracecorn command's --tty does). */
  int tty;
} tc_options;

/* tc_options.writer_threads */
enum {
  TC_WRITER_THREADS_AUTO = 0,
  TC_WRITER_THREADS_OFF = 1,
  TC_WRITER_THREADS_ON = 2
};

/* Fills the first `size` bytes of *o with the defaults and sets o->size to
 * size: every field 0/NULL except record_memory = 1, keyframe_interval =
 * 4096, stack_size = 8 MiB and the guest fds 0/1/2 = the host's 0/1/2.
 * Call it through tc_options_init(). */
TC_API void tc_options_defaults(tc_options *o, size_t size);
/* Always call it first, then set the fields you need, so that fields
 * added later get their defaults. */
static inline void tc_options_init(tc_options *o) {
  tc_options_defaults(o, sizeof *o);
}

typedef struct tc_session tc_session;

/* Receives every recorded event, like a writer. */
typedef int (*tc_event_sink)(void *ctx, const tc_event *ev, tc_error *err);

/* A new session with a copy of *opt (NULL = the defaults), or NULL (also
 * when opt was not initialised with tc_options_init(), or sets fields
 * this library does not know). One session records one program once:
 * new, load, add outputs, run, free. */
TC_API tc_session *tc_session_new(const tc_options *opt, tc_error *err);
/* Frees a session and closes any writer it still holds; NULL is ignored. */
TC_API void tc_session_free(tc_session *s);
/* Loads an ELF of any supported arch (ET_EXEC, static-pie, or dynamically
 * linked: its PT_INTERP is loaded from the guest's root and runs first), with
 * argv (NULL-terminated, argv[0] included; NULL = {path}) and the
 * environment of the options. 0, or -1 with a message. */
TC_API int tc_session_load_elf(tc_session *s, const char *path,
                               const char *const *argv, tc_error *err);
/* Loads raw code of opt->arch at base (mapped RWX, a stack is mapped too)
 * to start at entry. 0, or -1 with a message. */
TC_API int tc_session_load_raw(tc_session *s, const uint8_t *code, size_t size,
                               uint64_t base, uint64_t entry, tc_error *err);
/* What was loaded (arch, entry, argv...), valid until tc_session_free(),
 * or NULL before a successful load. */
TC_API const tc_trace_info *tc_session_info(tc_session *s);
/* Adds an output (after a load): fmt (tc_format_by_name()) writing the
 * file path (full name, extension included). 0, or -1 if the format has
 * no writer or cannot hold the arch (the message names those that can). */
TC_API int tc_session_add_writer(tc_session *s, const tc_format *fmt,
                                 const char *path, tc_error *err);
/* Adds a callback output (after a load): sink(ctx, ev, err) receives every
 * event as a writer would; event pointers are valid only during the call.
 * A sink that returns -1 gets no more events (its message is printed on
 * stderr); the recording goes on. Returns 0, or -1 (too many outputs). */
TC_API int tc_session_add_sink(tc_session *s, tc_event_sink sink, void *ctx,
                               tc_error *err);

typedef struct tc_run_result {
  size_t size; /* set by tc_run_result_init() */
  tc_exit_reason reason;
  int status; /* what a shell would see: code, or 128+signal */
  int signal;
  uint64_t insns;
  uint64_t syscalls;
  uint64_t mem_accesses;
} tc_run_result;

/* Call it before tc_session_run() fills *r. */
static inline void tc_run_result_init(tc_run_result *r) {
  memset(r, 0, sizeof *r);
  r->size = sizeof *r;
}

/* Runs to the end, writing events to every writer; always closes them.
 * Returns 0 if the recording was written (the guest may still have failed:
 * see res, NULL if not wanted), -1 if tracecorn itself failed (e.g. out of
 * memory for the writer threads' queue: every process stops there with
 * reason TC_EXIT_ERROR, status 125, and the files keep every event up to
 * it) or res was not initialised (nothing runs then). */
TC_API int tc_session_run(tc_session *s, tc_run_result *res, tc_error *err);
/* After run: 1 if the output written to path is complete, 0 if writing
 * it failed (full disk...) or no such output exists. */
TC_API int tc_session_output_ok(tc_session *s, const char *path);
/* After run: the pids of the processes the run had, the first then each
 * child made by fork in creation order (each recorded into the outputs'
 * PREFIX.PID.EXT files); fills up to max, returns how many there were. */
TC_API size_t tc_session_pids(tc_session *s, uint32_t *pids, size_t max);
/* Instructions recorded so far by a running session: callable from any
 * thread (a progress display), the value at most a moment old. */
TC_API uint64_t tc_session_progress(tc_session *s);
/* Bytes the session's outputs hold on disk so far (any thread). */
TC_API uint64_t tc_session_output_bytes(tc_session *s);
/* Size of a trace output: a file, or the files of a directory output
 * (REVEN's NAME.rvn/); 0 if there is none. */
TC_API uint64_t tc_output_size(const char *path);
/* 1 if an output named path is a stream, written directly (no temporary
 * name, no rename): "-" (standard output), a name of one of this
 * process's descriptors (/dev/stdout, /dev/fd/N, /proc/self/fd/N), or an
 * existing file that is neither regular nor a directory (a FIFO,
 * /dev/null). 0 for a file or directory, existing or not. */
TC_API int tc_output_is_stream(const char *path);
/* 1 if writing a trace of fmt (NULL: any) to path would replace a file
 * that is not a trace: an existing non-empty file or directory that no
 * reader takes (nor, for text and json, that writer's own first bytes).
 * Streams, missing and empty files: 0. The CLI's outputs, and a forked
 * child's (tc_options.force), are refused then. */
TC_API int tc_output_clobbers(const char *path, const tc_format *fmt);
/* Async-signal-safe: asks a running session to stop (Ctrl-C); the run
 * ends with an INTERRUPTED exit event and status 130. */
TC_API void tc_session_stop(tc_session *s);
/* The same for a given signal: status 128 + signal (143 for SIGTERM). */
TC_API void tc_session_interrupt(tc_session *s, int signal);
/* Async-signal-safe, for a signal handler on the thread running
 * tc_session_run, some time after a stop that the engine did not honour
 * (a stall inside Unicorn): abandons the engine; tc_session_run then
 * returns at once, with every writer closed validly after the events
 * already written. Returns -1 if it cannot now (the run is not inside the
 * engine, or is handing an event to a writer): call again later. The
 * session must only be freed afterwards (Unicorn is not closed). */
TC_API int tc_session_escape(tc_session *s);

/* --------------------------------------------------------------- helpers */

/* 1 if an instruction ran in arm's Thumb state (CPSR.T in state_before);
 * 0 on every other arch. */
TC_API int tc_insn_thumb(const tc_arch *arch, const tc_insn_event *e);
/* Disassembles one instruction to text ("mov rax, qword ptr [rbp - 8]");
 * returns its length, or 0 with "(bad)" in out. On arm an odd pc means
 * Thumb (pass pc | tc_insn_thumb()). Not thread-safe. */
TC_API int tc_disasm(const tc_arch *arch, uint64_t pc, const uint8_t *bytes,
                     size_t n, char *out, size_t outmax);

/* Copies a string a trace or guest chose (a path, a module name, a
 * message) into out so that it cannot drive a terminal: C0 and C1
 * controls, DEL and bytes that are not UTF-8 become \xNN, backslash is
 * doubled; cut to max - 1 bytes. Returns out. */
TC_API const char *tc_escape_text(const char *in, char *out, size_t max);

/* Reads a whole trace through its format's reader (fmt NULL = detected),
 * calling sink per event. Stops at the first sink that returns -1. 0 at
 * the end of the trace, or -1 with a message. */
TC_API int tc_read_trace(const char *path, const tc_format *fmt,
                         tc_event_sink sink, void *ctx, tc_error *err);

/* ------------------------------------------------------ reading step by step
 * tc_read_trace pushes events into a callback; a tc_trace is the same
 * reader pulled one event at a time, with random access (the Python
 * binding, python/, is built on it). Not thread-safe: one thread per
 * handle. */
typedef struct tc_trace tc_trace;

/* Opens a trace of any readable format (fmt NULL = detected; zstd files
 * as they are). NULL with a message when it cannot be read. */
TC_API tc_trace *tc_trace_open(const char *path, const tc_format *fmt,
                               tc_error *err);
/* Closes it; NULL is ignored. */
TC_API void tc_trace_close(tc_trace *t);
/* What the file says about its recording, valid until tc_trace_close or
 * tc_trace_seek. */
TC_API const tc_trace_info *tc_trace_get_info(tc_trace *t);
/* The format it is read with. */
TC_API const tc_format *tc_trace_format(tc_trace *t);
/* The next event: 1 with *ev set (valid until the next call on t), 0 at the
 * end, -1 with a message (a corrupt or truncated file; every later call
 * fails the same way). A file without an exit record (TRAC, tfile...)
 * ends with an EXIT of reason TC_EXIT_ERROR that says so, as tc_convert
 * writes it, so the stream always ends with an EXIT. */
TC_API int tc_trace_next(tc_trace *t, const tc_event **ev, tc_error *err);
/* Positions t so that the next events are a KEYFRAME holding the state
 * before instruction insn, then INSN insn and the rest of the trace:
 * through the format's own seek when it has one (tct: MAP, UNMAP and
 * PROTECT events without data may come first), else by reading the file
 * again from its start. 0, or -1 with a message (no such instruction). */
TC_API int tc_trace_seek(tc_trace *t, uint64_t insn, tc_error *err);

/* The next events as self-contained records of little-endian fields (the
 * layout version is TC_PACK_VERSION; docs/python.md gives it), for
 * bindings that would rather not mirror tc_event and cross into C once
 * per many events: each record is a uint32_t little-endian length then
 * the record. Packs as many whole events as fit in cap bytes, at most max
 * (0: no limit), and sets *n to how many and *len to the bytes used.
 * When even the next event does not fit, packs none: *n = 0 and *len =
 * the bytes it needs (its length included; call again with that much).
 * Returns 1 (events packed, or the room asked for), 0 at the end, -1 with
 * a message (events packed before an error come first; the error at the
 * next call). */
TC_API int tc_trace_read_packed(tc_trace *t, void *buf, size_t cap, size_t max,
                                size_t *n, size_t *len, tc_error *err);
/* The layout of tc_trace_read_packed's records. */
#define TC_PACK_VERSION 1
/* tc_trace_columns' kind bit of a write the kernel made (a syscall's
 * writes, a signal frame), counted as its instruction's. */
enum { TC_MEM_KERNEL = 4 };

/* Columns of tc_trace_columns: what each element is. Instruction table:
 * one row per INSN event; memory table: one row per access of those
 * instructions, then their syscall's and signal frame's kernel writes. */
typedef enum tc_column {
  TC_COL_INDEX = 0, /* uint64_t: the instruction's index */
  TC_COL_PC,        /* uint64_t */
  TC_COL_TID,       /* uint32_t */
  TC_COL_SIZE,      /* uint8_t: its length in bytes */
  TC_COL_NMEM,      /* uint32_t: its memory table rows */
  TC_COL_MEM_INDEX, /* uint64_t: the instruction a memory row belongs to */
  TC_COL_MEM_ADDR,  /* uint64_t */
  TC_COL_MEM_SIZE,  /* uint32_t */
  TC_COL_MEM_KIND,  /* uint8_t: TC_MEM_READ or TC_MEM_WRITE, | TC_MEM_KERNEL */
  TC_COL_COUNT
} tc_column;

/* Reads on from where t is, filling arrays of instruction fields instead
 * of handing out events (the other events are skipped): cols[c] points at
 * an array for column c, or is NULL (not wanted); ncols is how many
 * entries cols has (columns past it are not wanted). Stops before the
 * instruction that would overflow max_insns rows or max_mem memory rows
 * (it stays next; one with more than max_mem accesses is an error) and
 * sets *n_insns, *n_mem to the rows filled. Returns 1 when it stopped
 * there (call again), 0 at the end of the trace, -1 with a message (the
 * rows filled before are valid). */
TC_API int tc_trace_columns(tc_trace *t, void *const *cols, int ncols,
                            size_t max_insns, size_t max_mem, size_t *n_insns,
                            size_t *n_mem, tc_error *err);

/* The state of a recording at any instruction, as `tracecorn gdbserver`
 * sees it: opening reads the trace once and keeps an index (checkpoints
 * and an effect log in an unlinked temporary file), so that any position
 * is rebuilt quickly. A trace that ends early (truncated, corrupt) is kept
 * up to its last whole instruction (tc_timeline_truncated says why). */
typedef struct tc_timeline tc_timeline;

/* NULL with a message if nothing of the trace is usable. */
TC_API tc_timeline *tc_timeline_open(const char *path, const tc_format *fmt,
                                     tc_error *err);
/* NULL is ignored. */
TC_API void tc_timeline_free(tc_timeline *tl);
/* Instructions in the recording: positions are 0 .. tc_timeline_insns. */
TC_API uint64_t tc_timeline_insns(const tc_timeline *tl);
/* NULL when the trace was read to its end, else the reader's message. */
TC_API const char *tc_timeline_truncated(const tc_timeline *tl);
/* The whole register state before instruction pos (position insns: after
 * the last one), a state image of the trace's arch valid until the next
 * call on tl, and its thread in *tid (may be NULL). Registers the format
 * does not hold read as zero. NULL with a message past the end. */
TC_API const uint8_t *tc_timeline_state(tc_timeline *tl, uint64_t pos,
                                        uint32_t *tid, tc_error *err);
/* Memory at position pos: copies [addr, addr + len) into out up to the
 * first byte the recording does not hold (outside every map then, or a
 * recording without memory) and returns how many bytes it copied, or -1
 * with a message past the end. */
TC_API int64_t tc_timeline_read(tc_timeline *tl, uint64_t pos, uint64_t addr,
                                size_t len, uint8_t *out, tc_error *err);

/* -------------------------------------------------- summary, verify, convert
 * Each report is filled as far as its size (set by its init function)
 * holds; a call given one that was not initialised fails. */

/* What a trace file holds (`tracecorn info`), read through its format's
 * reader. Fields a format cannot hold stay zero. */
typedef struct tc_trace_summary {
  size_t size;             /* set by tc_trace_summary_init() */
  const tc_format *format; /* NULL if the file could not be opened */
  const tc_arch *arch;
  char exe_path[512];
  uint64_t entry;
  uint64_t insns, syscalls, maps, faults, keyframes;
  uint64_t first_pc, last_pc;
  int have_exit, exit_status;
  char exit_message[256];
  char modules[8][160]; /* file-backed maps, first seen first */
  int nmodules, more_modules;
} tc_trace_summary;

/* Call it before tc_trace_summarize() fills *s. */
static inline void tc_trace_summary_init(tc_trace_summary *s) {
  memset(s, 0, sizeof *s);
  s->size = sizeof *s;
}

/* 0, or -1 with a message (what was read before an error stays in sum). */
TC_API int tc_trace_summarize(const char *path, tc_trace_summary *sum,
                              tc_error *err);

/* Compares a trace in any readable format with the lossless tct recording
 * of the same run, within what the format holds (its caps and the
 * registers it keeps): every instruction's pc, bytes, tid, registers
 * before it, and the memory its accesses touched (values after, and
 * before where held). */
typedef struct tc_verify_report {
  size_t size;         /* set by tc_verify_report_init() */
  uint64_t insns;      /* instructions compared */
  uint64_t mismatches; /* instructions that differ */
  uint16_t regs_held, regs_total;
  char first[512]; /* the first difference, readable */
} tc_verify_report;

/* Call it before tc_verify() fills *r. */
static inline void tc_verify_report_init(tc_verify_report *r) {
  memset(r, 0, sizeof *r);
  r->size = sizeof *r;
}

/* 0 with *rep filled (rep->mismatches == 0: equal), or -1 with a message
 * if a file cannot be read. */
TC_API int tc_verify(const char *ref_tct, const char *path,
                     const tc_format *fmt, tc_verify_report *rep,
                     tc_error *err);

/* The checks of tc_verify_checks, one column each in `tracecorn verify`'s
 * table. */
typedef enum tc_verify_check {
  TC_VCHK_PC = 0,   /* the instruction sequence: pc, and the count */
  TC_VCHK_BYTES,    /* instruction bytes (TC_CAP_INSN_BYTES) */
  TC_VCHK_TID,      /* thread ids (TC_CAP_TID) */
  TC_VCHK_REGS,     /* every held register before each instruction */
  TC_VCHK_MEM,      /* memory values after each instruction (TC_CAP_MEM) */
  TC_VCHK_MEM_OLD,  /* memory values before it (TC_CAP_MEM_OLD) */
  TC_VCHK_SYSCALLS, /* syscall number, arguments, return (TC_CAP_SYSCALLS) */
  TC_VCHK_SYSMEM,   /* the memory each syscall wrote (TC_CAP_SYSCALL_MEM) */
  TC_VCHK_MAPS,     /* map/unmap/protect: address, size, protection, name */
  TC_VCHK_FAULTS,   /* fault instruction, pc and signal (TC_CAP_FAULTS) */
  TC_VCHK_EXIT,     /* exit reason and status (held or rebuilt) */
  TC_VCHK_COUNT
} tc_verify_check;

/* The short name of a check ("pc", "registers", "syscalls"...), or NULL. */
TC_API const char *tc_verify_check_name(int check);

/* One check's result: an element of tc_verify_table.checks, so its layout
 * is fixed (a check added later is a new element at the end). */
typedef struct tc_verify_result {
  uint8_t held;        /* 0: the format cannot hold it, not compared */
  uint64_t mismatches; /* events that differ in this check */
  /* The first difference: the instruction (the one it belongs to, or the
   * last one before a syscall/map/fault/exit), the field, the values in
   * the recording and in the file. */
  uint64_t insn;
  char field[64];
  char expected[96], found[96];
} tc_verify_result;

typedef struct tc_verify_table {
  size_t size;    /* set by tc_verify_table_init() */
  uint64_t insns; /* instructions compared */
  uint16_t regs_held, regs_total;
  int coverage; /* a coverage format: only TC_VCHK_PC, as code covered */
  tc_verify_result checks[TC_VCHK_COUNT];
} tc_verify_table;

/* Call it before tc_verify_checks() fills *t. */
static inline void tc_verify_table_init(tc_verify_table *t) {
  memset(t, 0, sizeof *t);
  t->size = sizeof *t;
}

/* tc_verify check by check: 0 with *t filled (no check with mismatches:
 * equal), or -1 with a message if a file cannot be read. */
TC_API int tc_verify_checks(const char *ref_tct, const char *path,
                            const tc_format *fmt, tc_verify_table *t,
                            tc_error *err);

/* Reads in_path (in_fmt, or detected when NULL) and writes every event to
 * out_path in out_fmt ("-" = stdout for text/json). What was read before a
 * read error is still written and closed validly; returns -1 then. */
TC_API int tc_convert(const char *in_path, const tc_format *in_fmt,
                      const tc_format *out_fmt, const char *out_path,
                      tc_error *err);
/* The same from instruction from_insn on (0 = the whole trace): a
 * KEYFRAME with the state there, then the events from that instruction,
 * through the input format's seek when it has one, else by reading
 * forward (see tc_filter.from). */
TC_API int tc_convert_from(const char *in_path, const tc_format *in_fmt,
                           const tc_format *out_fmt, const char *out_path,
                           uint64_t from_insn, tc_error *err);
/* The same with writer options for the output ("FORMAT.KEY=VALUE",
 * NULL-terminated; see tc_options.writer_options). */
TC_API int tc_convert_opts(const char *in_path, const tc_format *in_fmt,
                           const tc_format *out_fmt, const char *out_path,
                           uint64_t from_insn,
                           const char *const *writer_options, tc_error *err);

/* What `tracecorn dump` / `strace` select from a trace: one filter layer
 * between any reader and any writer. A filter fresh from tc_filter_init()
 * selects everything. A "record" is an instruction, or a syscall with
 * syscalls_only; skip and count window the records that pass the other
 * tests. */
typedef struct tc_filter {
  size_t size; /* set by tc_filter_init() */
  /* Instructions whose pc is in any of these (NULL-terminated; NULL =
   * anywhere): "A-B" (hex addresses, B excluded), NAME (every function
   * of that name in the program or a module it maps: libraries' symbols
   * are read from the files the maps name), MODULE:NAME (in that module
   * only), or MODULE (the regions mapped from a file of that path, base
   * name, or base name up to ".so": "libc.so.6", "libc"). */
  const char *const *ranges;
  const uint64_t *pcs; /* and at one of these pcs (npcs == 0: any) */
  size_t npcs;
  /* Only syscalls of these names (NULL-terminated; NULL = all). */
  const char *const *syscalls;
  /* Records are the syscalls (made by instructions that pass the pc
   * tests), not instructions; faults and the exit still show. */
  int syscalls_only;
  /* Start at instruction `from`: through the reader's seek when the
   * format has one, else by reading forward (the output then starts with
   * a keyframe holding the state there, as a seek gives). */
  uint64_t from;
  uint64_t skip;  /* leave out the first `skip` records */
  uint64_t count; /* then stop after `count` records (0 = no limit) */
  /* Instructions whose memory accesses touch any of these byte ranges
   * (NULL-terminated; NULL = no memory test): "A" (one byte), "A-B" (B
   * excluded) or "A:LEN", addresses in hex, LEN decimal or 0x-hex. A
   * syscall instruction's kernel writes (tc_syscall_event.mem) count as
   * its writes. */
  const char *const *mem;
  /* Which accesses the memory test looks at: TC_MEM_READ, TC_MEM_WRITE or
   * both (0 = both). */
  int mem_kind;
  /* Instructions that change any of these registers (their names as
   * tc_arch_reg_name gives them, any case; NULL-terminated; NULL = no
   * register test). */
  const char *const *regs;
  /* Stop before instruction `to` (0 = no limit): with `from`, the window
   * [from, to). */
  uint64_t to;
  /* Only the last `last` records that pass (0 = all), found by reading
   * the input twice: "who last wrote this" is mem + TC_MEM_WRITE + to +
   * last = 1. */
  uint64_t last;
  /* Where the module paths the trace names are found (NULL = as they
   * are): the --root of a recording, to read its libraries' symbols. */
  const char *root;
  /* 1: `from` never goes through the index beside the trace (TRACE.tcidx:
   * `tracecorn index`); the trace itself is read. */
  int no_index;
} tc_filter;

/* Call it first, then set the tests you need. */
static inline void tc_filter_init(tc_filter *f) {
  memset(f, 0, sizeof *f);
  f->size = sizeof *f;
}

/* tc_convert_opts through a filter (NULL = everything). With instruction
 * or syscall tests only the selected records and what they did (their
 * syscalls, faults) are written, plus the exit; a window alone (from,
 * skip, count) keeps maps and keyframes inside it. Stopping at `count`
 * writes no exit. */
TC_API int tc_convert_filtered(const char *in_path, const tc_format *in_fmt,
                               const tc_format *out_fmt, const char *out_path,
                               const tc_filter *filter,
                               const char *const *writer_options,
                               tc_error *err);

/* What a conversion could not carry over, from the two formats'
 * capabilities (tc_format_caps, the registers each keeps) and what the
 * input really held: a recording without syscalls loses none to a format
 * without them. */
typedef struct tc_convert_report {
  size_t size;       /* set by tc_convert_report_init() */
  int dropped_kinds; /* kinds of data the output lost; 0 = lossless */
  /* Each lost kind, readable: "12 syscalls, maps, 42 of 59 registers
   * (rflags, fs_base, ...), memory read values"; "" if none. */
  char dropped[1024];
  /* What the conversion made up because the output needs it: "an exit
   * record (the trac input has none)"; "" if nothing. */
  char rebuilt[256];
} tc_convert_report;

/* Call it before tc_convert_checked() fills *r. */
static inline void tc_convert_report_init(tc_convert_report *r) {
  memset(r, 0, sizeof *r);
  r->size = sizeof *r;
}

/* tc_convert_filtered that fills *rep (may be NULL). With strict, an
 * output that would lose data is not written (nothing is left under
 * out_path or its temporary name) and -1 is returned, the message naming
 * what it drops. */
TC_API int tc_convert_checked(const char *in_path, const tc_format *in_fmt,
                              const tc_format *out_fmt, const char *out_path,
                              const tc_filter *filter,
                              const char *const *writer_options, int strict,
                              tc_convert_report *rep, tc_error *err);

#ifdef __cplusplus
}
#endif
#endif
