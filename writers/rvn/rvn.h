/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Private helpers of the REVEN binary trace format module (rvnbintrace
 * 1.0: trace.bin + trace.cache). Facts: /work/shared/specs/rvnbintrace.md;
 * user notes: docs/formats/rvn.md.
 *
 * rvn_machine.c: the amd64 ("x641") machine tracecorn declares (REVEN's
 * register names, sizes and ids, the 41 register operations, the static
 * cpuid registers) and the mapping between it and a tracecorn state image.
 * rvn_mem.c: a page store (4 KiB pages in a hash table), interval sets,
 * and the rvnbinresource container header both sides share.
 * rvn.c: the writer; rvn_read.c: the reader (with seek). */
#ifndef TC_RVN_H
#define TC_RVN_H

#include <stddef.h>
#include <stdint.h>

#include "writers/format.h"

enum {
  RVN_HEADER_SIZE = 3640,    /* rvnbinresource header, metadata version 1 */
  RVN_HEADER_SIZE_V0 = 3120, /* metadata version 0: no tool_version */
  RVN_TYPE_TRACE = 1,
  RVN_TYPE_CACHE = 2,
  RVN_PHY_SIZE = 6, /* physical addresses: 48 bits */
  RVN_PAGE = 4096,
  RVN_SLOT = 64,        /* bytes of one register slot (the largest is zmm) */
  RVN_MAX_ENTRIES = 14, /* entries of one kind per diff chunk */
  RVN_NOPS = 41,
  RVN_OP_FIRST = 18, /* the first register-operation id */
  RVN_NSTATIC = 5
};
#define RVN_MAGIC 0x72766e62696e7273ull    /* "srnibnvr" on disk */
#define RVN_MAGIC_V0 0x7262696e72737263ull /* legacy: metadata v0 */
#define RVN_ARCH_X64 0x31343678u           /* 'x641' */
#define RVN_ARCH_ARM64 0x316d7261u         /* 'arm1' */
/* The synthetic page tables live here: above every user address and below
 * 2^48 (PHY_SIZE 6). cr3 points at the PML4, the region's first page. */
#define RVN_PT_BASE (1ull << 47)
#define RVN_DEFAULT_CACHE_EVERY 1000000u /* REVEN's producers */
/* The generation date of every file tracecorn writes: the guest's virtual
 * clock at process start (emu/engine/emu.h TC_EPOCH_NS, 2024-01-01 UTC). Every
 * recording is deterministic, so its files are byte-identical. */
#define RVN_GENERATION_DATE 1704067200ull
#define RVN_FORMAT_VERSION "1.0.1"
/* tracecorn's extension of the cache header section (which Tetrane's
 * reader skips to its end): the instruction index of every cache point,
 * so seek(n) finds its point without a scan. */
#define RVN_IX_MAGIC "tcrninsnidx1"
#define RVN_IX_MAGIC_LEN 12

/* ------------------------------------------------------------ machine */

/* Canonical register indices (the order of rvn_regs[], which is also id
 * order: hot registers on 1-byte ids, cold ones from 0x100). */
enum {
  RV_RAX = 0,
  RV_R15 = 14,
  RV_RSP = 15,
  RV_EFLAGS = 16,
  RV_RIP = 17,
  RV_TOP = 18,
  RV_X87R0 = 19, /* .. RV_X87R0 + 7: physical x87 registers */
  RV_X87LASTIP = 27,
  RV_X87LASTDP,
  RV_X87OPCODE,
  RV_X87STATUS,
  RV_X87CONTROL,
  RV_X87TAGS,
  RV_X87LASTCS,
  RV_X87LASTDS,
  RV_ZMM0 = 35, /* .. zmm15 = 50 */
  RV_MXCSR = 51,
  RV_CS = 52, /* cs ds es ss fs gs */
  RV_GS = 57,
  RV_CS_SHADOW = 58, /* cs ds es ss fs gs shadows */
  RV_DS_SHADOW,
  RV_ES_SHADOW,
  RV_SS_SHADOW,
  RV_FS_SHADOW,
  RV_GS_SHADOW,
  RV_PKRU = 64,
  RV_GDTR_BASE,
  RV_LDTR_BASE,
  RV_IDTR_BASE,
  RV_TR_BASE,
  RV_GDTR_LIMIT,
  RV_LDTR_LIMIT,
  RV_IDTR_LIMIT,
  RV_TR_LIMIT,
  RV_CR0 = 73,
  RV_CR2,
  RV_CR3,
  RV_CR4,
  RV_CR8,
  RV_DR0 = 78,
  RV_DR6 = 82,
  RV_DR7 = 83,
  RV_ZMM16 = 84, /* .. zmm31 = 99 */
  RV_MSR_SYSENTER_CS = 100,
  RV_MSR_SYSENTER_ESP,
  RV_MSR_SYSENTER_EIP,
  RV_MSR_APICBASE,
  RV_MSR_EFER,
  RV_MSR_STAR,
  RV_MSR_PAT,
  RV_MSR_LSTAR,
  RV_MSR_CSTAR,
  RV_MSR_FMASK,
  RV_MSR_FSBASE,
  RV_MSR_GSBASE,
  RV_MSR_KGSBASE,
  RV_MSR_TSC_AUX,
  RVN_NREGS /* 114 */
};

typedef struct rvn_reg_def {
  const char *name;
  uint16_t id;
  uint16_t size;
} rvn_reg_def;

extern const rvn_reg_def rvn_regs[RVN_NREGS];

enum { RVN_OP_SET = 0, RVN_OP_ADD = 1, RVN_OP_AND = 2, RVN_OP_OR = 3 };

typedef struct rvn_op_def {
  uint8_t id;
  uint8_t reg; /* canonical index of the destination */
  uint8_t oper;
  uint64_t value; /* little-endian operand, the destination's size */
} rvn_op_def;

extern const rvn_op_def rvn_ops[RVN_NOPS];

typedef struct rvn_static_def {
  const char *name;
  uint8_t value;
} rvn_static_def;

extern const rvn_static_def rvn_statics[RVN_NSTATIC];

/* The canonical index of a register name, or -1. */
int rvn_reg_by_name(const char *name, size_t len);
/* Eflags bits REVEN's producers have operations for (CF PF AF ZF SF TF IF
 * DF OF), and the op ids: OR (set) and AND (clear) for bit index k of
 * rvn_flag_bits, rip ADD n (1..15), rsp ADD +-n (2, 4, 8, 16). */
extern const uint8_t rvn_flag_bits[9];
#define RVN_FLAG_MASK 0x0fd5u
static inline uint8_t rvn_op_rip(unsigned n) { return (uint8_t)(17 + n); }
static inline uint8_t rvn_op_flag_set(unsigned k) { return (uint8_t)(33 + k); }
static inline uint8_t rvn_op_flag_clr(unsigned k) { return (uint8_t)(42 + k); }
/* rsp ADD delta for delta in {2,4,8,16,-2,-4,-8,-16}, else 0. */
uint8_t rvn_op_rsp(int64_t delta);

/* How a tracecorn arch maps onto the machine. Only x86 and x86_64. */
typedef struct rvn_map {
  const tc_arch *arch;
  int compat; /* i386 guest: a compatibility-mode process */
  /* canonical register -> where its value comes from */
  uint8_t kind[RVN_NREGS];
  int16_t src[RVN_NREGS]; /* tc register index (RVN_SRC_DIRECT) */
  uint64_t konst[RVN_NREGS];
  /* tc register -> canonical registers it feeds (at most 10) */
  uint8_t ndeps[64];
  uint8_t deps[64][10];
  int8_t inv[64]; /* tc register -> its canonical source (direct), or -1 */
  int fpsw, st0;  /* tc indices (st0..st7 consecutive) */
  int fs_base, gs_base;
} rvn_map;

enum {
  RVN_SRC_CONST = 0,
  RVN_SRC_DIRECT, /* tc register, zero-extended */
  RVN_SRC_X87R,   /* x87r[k] = st[(k - top) & 7] */
  RVN_SRC_TOP,    /* (fpsw >> 11) & 7 */
  RVN_SRC_STATUS, /* fpsw without TOP */
  RVN_SRC_FS_SHADOW,
  RVN_SRC_GS_SHADOW
};

/* 0, or -1 if the arch cannot be written as x641. */
int rvn_map_init(rvn_map *m, const tc_arch *arch);
/* Canonical register r's value for a tracecorn state (RVN_SLOT bytes,
 * zero beyond the register's size). */
void rvn_value(const rvn_map *m, int r, const uint8_t *state, uint8_t *out);
/* Sets tracecorn register t of `state` from canonical values (vals[r] is
 * NULL when the file lacks register r: the value is then 0). */
void rvn_tc_value(const rvn_map *m, int t, const uint8_t *const *vals,
                  uint8_t *state);
/* 1 if tracecorn register t round-trips. */
int rvn_map_holds(const rvn_map *m, int t);
/* A flat 32-bit DPL3 data descriptor with this base, REVEN's shadow form. */
uint64_t rvn_data_descriptor(uint64_t base);
/* The size REVEN's producers give a register name, 0 if unknown; -1 for a
 * name REVEN forbids (rflags). */
int rvn_expected_size(const char *name, size_t len);

/* ------------------------------------------------------------- memory */

typedef struct rvn_page {
  uint64_t pn;    /* page number + 1; 0 = free slot */
  uint64_t epoch; /* writer: the cache epoch that last dirtied it */
  uint8_t data[RVN_PAGE];
} rvn_page;

typedef struct rvn_pages {
  rvn_page **slots;
  size_t cap, used;
  rvn_page *last; /* the last page looked up */
} rvn_pages;

int rvn_pages_init(rvn_pages *p);
void rvn_pages_free(rvn_pages *p);
void rvn_pages_clear(rvn_pages *p);
rvn_page *rvn_pages_get(rvn_pages *p, uint64_t pn);
/* Finds or adds (zero-filled) the page; NULL on out-of-memory. *created
 * tells whether it was added. */
rvn_page *rvn_pages_add(rvn_pages *p, uint64_t pn, int *created);

/* A set of half-open intervals, merged (sorted, disjoint, adjacent ones
 * joined) on demand. */
typedef struct rvn_iv {
  uint64_t start, end;
} rvn_iv;

typedef struct rvn_ivset {
  rvn_iv *v;
  size_t n, cap;
  int merged;
  size_t hint;
} rvn_ivset;

int rvn_ivset_add(rvn_ivset *s, uint64_t start, uint64_t end);
void rvn_ivset_merge(rvn_ivset *s);
/* 1 if [addr, addr + size) lies inside one interval (merges first). */
int rvn_ivset_covers(rvn_ivset *s, uint64_t addr, uint64_t size);
void rvn_ivset_free(rvn_ivset *s);

/* ---------------------------------------------------- container header */

typedef struct rvn_meta {
  uint32_t metadata_version;
  uint32_t type;
  char format_version[513];
  char tool_name[513];
  char tool_version[513];
  char tool_info[2049];
  uint64_t generation_date;
  size_t size; /* header bytes: 3640 (v1) or 3120 (v0) */
} rvn_meta;

/* Writes the 3640-byte header into out. */
void rvn_header_build(uint8_t *out, uint32_t type, const char *tool_info);
/* Parses and checks a header (magic, metadata version, type, versions,
 * non-empty strings); -1 with a one-line reason in why. */
int rvn_header_parse(const uint8_t *p, size_t n, uint32_t want_type,
                     rvn_meta *m, char *why, size_t whylen);
/* 1 if s is a semver X.Y.Z[-pre][+build]; *major gets X. */
int rvn_semver(const char *s, uint64_t *major);

/* ------------------------------------------------------------ reader */

/* Memory of a reader at its current position (tests compare it with a
 * replay). Returns 0, or -1 if a byte lies outside every region. */
int rvn_reader_read_mem(tc_reader *r, uint64_t addr, uint8_t *out, size_t n);
/* Statistics of an open reader, for tests and the bench. */
typedef struct rvn_reader_stats {
  uint64_t events, cache_points, insns_replayed_by_last_seek;
  int cache_index_extension; /* the tracecorn insn index was used */
} rvn_reader_stats;
void rvn_reader_get_stats(tc_reader *r, rvn_reader_stats *st);

#endif
