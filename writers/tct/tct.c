/* SPDX-License-Identifier: GPL-2.0-or-later */
/* tct: tracecorn's own lossless trace format.
 *
 * Layout: the 8-byte magic "TCTRACE4", then zstd frames holding records.
 * Every record is a kind byte followed by LEB128 varints and raw byte
 * strings (see docs/formats/tct.md). Registers are stored as deltas
 * against the previous state, so a reader rebuilds full states; KEYFRAME
 * records carry whole states. Version 4 cuts the records into chunks, each
 * a zstd frame that decodes on its own (every cache starts empty), and
 * ends the file with a footer (a skippable frame: the chunk index, the map
 * log and the summary `info` prints) and a trailer locating it, so seek
 * and info need not read the whole file. Every field a tc_event holds
 * round-trips exactly. */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define TCT_HAVE_AVX2_EQUAL 1
#endif

#include "common/threads.h"
#include "writers/format.h"
#include "writers/io/outfile.h"
#include "writers/io/zst.h"
#include "writers/tct/tct_part.h"

/* Version 4 (TCTRACE4: version 3's records in chunks, a CHUNK record
 * starting each, and the footer) is written; all four are read. Version 2
 * differs
 * from 1 in INSN records (instruction bytes only when the reader's cache
 * lacks them, registers as XOR or difference varints) and in memory
 * access addresses (the delta runs on across lists and records). Version
 * 3 adds an escape to the register XOR form: the new value is that of a
 * memory read of the same instruction (a load's value was stored twice:
 * as the read and as the register) or of another register (moves). */
static const char tct_magic[8] = {'T', 'C', 'T', 'R', 'A', 'C', 'E', '4'};
static const char tct_magic_v3[8] = {'T', 'C', 'T', 'R', 'A', 'C', 'E', '3'};
static const char tct_magic_v2[8] = {'T', 'C', 'T', 'R', 'A', 'C', 'E', '2'};
static const char tct_magic_v1[8] = {'T', 'C', 'T', 'R', 'A', 'C', 'E', '1'};

/* Version 3 register values (up to 8 bytes) as version 2's, plus: an XOR
 * of 0 (never otherwise: the register changed) is followed by a varint t.
 * t = k << 2 | sext << 1: the value read by access k of the same INSN,
 * zero- (sext 0) or sign-extended (sext 1); t = j << 1 | 1: the value
 * register j has at that point (its new value if it came earlier in the
 * list, else its old one), truncated. */

enum {
  REC_HEADER = 0x01,
  REC_STATE = 0x02, /* full state replacing the reader's current state */
  REC_INSN = 0x10,
  /* Version 2: an INSN whose kind byte holds its flags (low 4 bits) and
   * INSN_NOMEM (0x10: no memory accesses, no count): 0x20..0x3f. */
  REC_INSN_COMPACT = 0x20,
  REC_SYSCALL = 0x11,
  REC_MAP = 0x12,
  REC_UNMAP = 0x13,
  REC_PROTECT = 0x14,
  REC_KEYFRAME = 0x15,
  REC_FAULT = 0x16,
  REC_EXIT = 0x17,
  REC_SIGNAL = 0x18,
  /* Version 4: the first record of a zstd frame that starts a chunk: insn
   * index and tid (the implied ones); reader and writer empty their caches,
   * the address delta starts at 0 and the state is the header's initial
   * one (a STATE or KEYFRAME comes before the chunk's first INSN unless
   * that is right). */
  REC_CHUNK = 0x19,
  /* A scheduler turn of a recording of several processes (TC_EV_TURN):
   * turn, insn index, tid. Readers from before it refuse such files. */
  REC_TURN = 0x1a
};

/* Version 4's chunks: a chunk starts (a new zstd frame, every cache
 * emptied) at a KEYFRAME once the last chunk holds TCT_CHUNK_BYTES of
 * records or TCT_CHUNK_INSNS instructions, or before an INSN at twice
 * that where no KEYFRAME comes (keyframes off, a converted stream). A
 * reset costs 15-30 KB on textfmt64 (the zstd window, the instruction and
 * memory caches filled again): 4 MiB chunks cost it 17 %, 16 MiB 4.9 %,
 * 32 MiB 1.4 %, the other bench guests under 0.1 %; a seek decodes at most
 * one chunk (docs/formats/tct.md). */
#define TCT_CHUNK_BYTES (32u << 20)
#define TCT_CHUNK_INSNS (1u << 22)

/* The footer (a zstd skippable frame, magic TCT_SKIP_FOOTER, holding one
 * zstd frame of the index) and the trailer that ends the file (a
 * skippable frame of 16 bytes: the footer's file offset, "TCTINDEX"). */
#define TCT_SKIP_FOOTER 0x184D2A5Eu
#define TCT_SKIP_TRAILER 0x184D2A5Fu
#define TCT_TRAILER_SIZE 24
static const char tct_trailer_tag[8] = {'T', 'C', 'T', 'I', 'N', 'D', 'E', 'X'};
/* Bounds a reader puts on a footer: its compressed and decompressed
 * sizes. */
#define TCT_FOOTER_MAX_Z (256u << 20)
#define TCT_FOOTER_MAX (512u << 20)

/* Chunk memory summaries (issue 33): after the frame of each chunk but
 * the one that holds the EXIT (no chunk follows it), a skippable frame
 * (magic TCT_SKIP_MEM) holding one zstd frame of the bytes the chunk's
 * stores, kernel writes and signal frames left in memory (those written
 * after the last MAP or UNMAP over them in the chunk), then the frame's
 * payload size (u32 LE) and "TCMD", so that a reader finds it from the
 * next chunk's offset backwards. Readers that know nothing of it skip it
 * (zstd skips skippable frames). With the map log, memory at the start
 * of any chunk is rebuilt page by page without decoding the chunks before
 * it (docs/formats/tct.md). A chunk that stores to more than
 * TCT_MD_MAX_PAGES pages says so (flag 1) and lists none. */
#define TCT_SKIP_MEM 0x184D2A5Du
static const char tct_mem_tag[4] = {'T', 'C', 'M', 'D'};
#define TCT_MD_MAX_PAGES 16384u
#define TCT_MD_MAX_Z (256u << 20)

typedef struct md_page {
  uint64_t pn;
  uint8_t known[512]; /* bit i & 7 of byte i >> 3: byte i was written */
  uint8_t data[4096];
} md_page;

/* The pages a chunk wrote (pn -> md_page, open addressing). */
typedef struct md_table {
  md_page **slot;
  size_t cap, n; /* cap a power of two */
  bool over;     /* more than TCT_MD_MAX_PAGES: none kept */
} md_table;

/* Chunk filters (issue 33): before each chunk memory summary, a skippable
 * frame (magic TCT_SKIP_FILT) of the same shape (one zstd frame, its
 * payload size, "TCMF") holding the chunk's exact sets: the pcs of its
 * instructions (their state_before's pc), and the 64-byte lines its
 * instructions loaded and that its stores, kernel writes, signal frames
 * and maps' data wrote. A debugger's run decodes only the chunks whose
 * sets hold a stop. A set of more than TCT_MF_MAX values is not kept
 * (flag: every value may be in it). */
#define TCT_SKIP_FILT 0x184D2A5Cu
static const char tct_filt_tag[4] = {'T', 'C', 'M', 'F'};
#define TCT_MF_MAX (1u << 20)
/* Units of the sets (log2 bytes): stores by 64-byte line (a write watch
 * then asks the memory summary for bytes), loads by 8-byte word since
 * version 2 (version 1, of the first builds that wrote filters: lines),
 * so a read watch beside a hot word skips the chunks that read only it. */
enum { TCT_MF_LINE = 6, TCT_MF_WORD = 3, TCT_MF_VERSION = 2 };
enum { MF_ALL_PC = 1, MF_ALL_W = 2, MF_ALL_R = 4 };

/* An exact set of u64 (slots hold value + 1; open addressing), with a
 * small cache of the values added last (a loop adds the same ones). */
typedef struct mf_set {
  uint64_t *slot;
  size_t cap, n;
  bool over;
  uint64_t recent[256];
} mf_set;

/* One entry of the map log: every MAP, UNMAP and PROTECT of the trace in
 * order, without data (a seek replays those before its point). */
typedef struct tct_maplog {
  uint8_t kind; /* REC_MAP, REC_UNMAP, REC_PROTECT */
  uint32_t prot;
  uint64_t addr, size, file_offset;
  char *name; /* MAP only; owned */
} tct_maplog;

/* One chunk of the index. */
typedef struct tct_chunk {
  uint64_t insn;   /* index of the chunk's first instruction (implied) */
  uint64_t offset; /* file offset of its zstd frame */
  uint64_t nmaps;  /* map log entries before it */
  uint32_t tid;
} tct_chunk;

/* A chunk's memory summary as a reader keeps it. */
typedef struct tct_md {
  int state; /* 0 not read, 1 read, -1 none */
  uint8_t *body;
  size_t n;
  uint64_t *pn;       /* its pages, ascending */
  const uint8_t **at; /* where each one's runs start in body */
  size_t npages;
  uint64_t at_file; /* its frame's file offset */
} tct_md;

/* A chunk's filters as a reader keeps them (TCT_SKIP_FILT). */
typedef struct tct_mf {
  int state; /* 0 not read, 1 read, -1 none */
  uint64_t flags;
  uint64_t *pcs; /* ascending */
  size_t npcs;
  uint64_t *runs[2]; /* stored, loaded units: [first, end) pairs, ascending */
  size_t nruns[2];
  unsigned shift[2]; /* log2 of a unit's bytes: lines (6); v2 loads: words */
} tct_mf;

/* A MAP's data over one page, as md_map_data read it (the part the map
 * covers; j its map log entry). */
#define TCT_MDC 64
typedef struct tct_mdc {
  size_t j;
  uint64_t pn;
  uint8_t *data;
} tct_mdc;

/* What the footer says about the whole trace (tc_trace_summary's
 * counts). */
typedef struct tct_sum {
  uint64_t insns, syscalls, maps, faults, keyframes, first_pc, last_pc;
  int have_exit, exit_status;
  char *exit_message; /* owned, may be NULL */
} tct_sum;

static void maplog_free(tct_maplog *m, size_t n) {
  for (size_t i = 0; i < n; i++)
    free(m[i].name);
  free(m);
}

/* Appends to a growable array of `size`-byte items; 0 or -1. */
static int grow_push(void **arr, size_t *n, size_t *cap, size_t size,
                     const void *item) {
  if (*n == *cap) {
    size_t nc = *cap ? *cap * 2 : 16;
    void *na = realloc(*arr, nc * size);
    if (!na)
      return -1;
    *arr = na;
    *cap = nc;
  }
  memcpy((uint8_t *)*arr + *n * size, item, size);
  (*n)++;
  return 0;
}

/* INSN flags: which implied fields are stored explicitly. INSN_BYTES
 * (version 2): size and bytes follow; without it they are those of the
 * instruction-cache slot of this PC, which must hold this PC. */
enum {
  INSN_INDEX = 1,
  INSN_PC = 2,
  INSN_TID = 4,
  INSN_BYTES = 8,
  INSN_NOMEM = 0x10
};

/* Version 2's instruction cache, kept alike by writer and reader: a
 * direct-mapped table of the last bytes seen per PC (slot: PC hash). */
#define TCT_ICACHE_SLOTS 4096
typedef struct icache_slot {
  uint64_t pc;
  uint8_t valid, size;
  uint8_t bytes[16];
} icache_slot;

/* The first size (<= 16) bytes of a and b are equal: two masked 8-byte
 * compares instead of a memcmp call. */
static inline bool insn_bytes_equal(const uint8_t *a, const uint8_t *b,
                                    unsigned size) {
  uint64_t a0, a1, b0, b1;
  memcpy(&a0, a, 8);
  memcpy(&a1, a + 8, 8);
  memcpy(&b0, b, 8);
  memcpy(&b1, b + 8, 8);
  uint64_t m0 = size >= 8 ? ~0ull : (1ull << (8 * size)) - 1;
  uint64_t m1 = size >= 16  ? ~0ull
                : size <= 8 ? 0
                            : (1ull << (8 * (size - 8))) - 1;
  return ((a0 ^ b0) & m0) == 0 && ((a1 ^ b1) & m1) == 0;
}

static size_t icache_index(uint64_t pc) {
  return (size_t)((pc * 0x9e3779b97f4a7c15ull) >> 52) & (TCT_ICACHE_SLOTS - 1);
}

/* Version 2 register values of up to 8 bytes: a varint of (index delta
 * << 1 | mode), then mode 0: value XOR the previous one, mode 1: zigzag
 * of (value - previous), as a varint, whichever is shorter. Wider
 * registers: mode 0 and their bytes. */
static inline uint64_t reg_load(const uint8_t *p, unsigned size) {
  uint64_t v = 0;
  switch (size) { /* fixed sizes: inlined loads, no memcpy call */
  case 8:
    memcpy(&v, p, 8);
    break;
  case 4: {
    uint32_t x;
    memcpy(&x, p, 4);
    v = x;
    break;
  }
  case 2: {
    uint16_t x;
    memcpy(&x, p, 2);
    v = x;
    break;
  }
  case 1:
    v = *p;
    break;
  default:
    memcpy(&v, p, size); /* little-endian host (docs/event-model.md) */
  }
  return v;
}

/* The value size (1-8) guest bytes at p hold, as a number (the guest's
 * byte order). */
static inline uint64_t mem_value(const uint8_t *p, unsigned size, bool be) {
  if (!be)
    return reg_load(p, size);
  uint64_t v = 0;
  for (unsigned i = 0; i < size; i++)
    v = v << 8 | p[i];
  return v;
}

static inline void reg_store(uint8_t *p, unsigned size, uint64_t v) {
  switch (size) {
  case 8:
    memcpy(p, &v, 8);
    break;
  case 4: {
    uint32_t x = (uint32_t)v;
    memcpy(p, &x, 4);
    break;
  }
  case 2: {
    uint16_t x = (uint16_t)v;
    memcpy(p, &x, 2);
    break;
  }
  case 1:
    *p = (uint8_t)v;
    break;
  default:
    memcpy(p, &v, size);
  }
}

/* LEB128 length of v: one byte per 7 significant bits (a bit scan, no
 * loop). */
static inline unsigned uv_len(uint64_t v) {
  unsigned bits = 64 - (unsigned)__builtin_clzll(v | 1);
  return (bits + 6) / 7;
}

/* Version 2 memory accesses: the kind byte may add MEM_CACHED (the before
 * bytes are omitted: the memory value cache holds them) and, for writes,
 * MEM_AFTER_REG (the after bytes are the low bytes of a register of the
 * after-state, whose index follows instead of them). */
enum { MEM_CACHED = 0x10, MEM_AFTER_REG = 0x20 };

/* The memory value cache, kept alike by writer and reader: the last bytes
 * every access (and kernel write) left, per 4 KiB page, in a direct-mapped
 * table of MVC_SLOTS pages (a page taking a busy slot empties it). A pure
 * dictionary: the writer omits bytes only when the cache holds exactly
 * them, so it is right whatever the trace leaves out. Bounded: about
 * 19 MB at most, touched only as pages are used. */
#define MVC_SLOTS 4096
typedef struct mvc_page {
  uint64_t page;      /* page number + 1; 0 = empty */
  uint64_t known[64]; /* bit i & 63 of word i >> 6: byte i is held */
  uint8_t data[4096];
} mvc_page;

/* The table comes from mmap: zero pages the kernel gives only as they are
 * touched, and which no allocator clears or (under ASan) poisons whole at
 * every open (70 % of a fuzzing run's time went there). NULL on failure. */
static mvc_page *mvc_new(void) {
  void *p = mmap(NULL, MVC_SLOTS * sizeof(mvc_page), PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  return p == MAP_FAILED ? NULL : p;
}

/* Empties the cache: its pages go back to the kernel, which gives zero
 * pages again as they are touched. */
static void mvc_reset(mvc_page *c) {
  if (madvise(c, MVC_SLOTS * sizeof(mvc_page), MADV_DONTNEED) != 0)
    for (size_t i = 0; i < MVC_SLOTS; i++)
      c[i].page = 0;
}

static void mvc_free(mvc_page *c) {
  if (c)
    munmap(c, MVC_SLOTS * sizeof(mvc_page));
}

static mvc_page *mvc_slot(mvc_page *c, uint64_t addr, bool create) {
  uint64_t pg = (addr >> 12) + 1;
  mvc_page *s =
      &c[(size_t)((pg * 0x9e3779b97f4a7c15ull) >> 52) & (MVC_SLOTS - 1)];
  if (s->page == pg)
    return s;
  if (!create)
    return NULL;
  s->page = pg;
  memset(s->known, 0, sizeof s->known);
  return s;
}

/* The known bits of bytes [off, off + n) of a page (off + n <= 4096) as
 * a word mask, a word at a time: an access of up to 8 bytes touches one
 * word, at most two. An empty range is known (a 0-byte access, which
 * only a converted or hand-made stream holds). */
static inline bool mvc_known_all(const mvc_page *s, size_t off, size_t n) {
  if (n == 0)
    return true;
  size_t last = off + n - 1, w0 = off >> 6, w1 = last >> 6;
  uint64_t head = ~0ull << (off & 63), tail = ~0ull >> (63 - (last & 63));
  if (w0 == w1)
    return (s->known[w0] & (head & tail)) == (head & tail);
  if ((s->known[w0] & head) != head)
    return false;
  for (size_t k = w0 + 1; k < w1; k++)
    if (s->known[k] != ~0ull)
      return false;
  return (s->known[w1] & tail) == tail;
}

static inline void mvc_known_set(mvc_page *s, size_t off, size_t n) {
  if (n == 0)
    return;
  size_t last = off + n - 1, w0 = off >> 6, w1 = last >> 6;
  uint64_t head = ~0ull << (off & 63), tail = ~0ull >> (63 - (last & 63));
  if (w0 == w1) {
    s->known[w0] |= head & tail;
    return;
  }
  s->known[w0] |= head;
  for (size_t k = w0 + 1; k < w1; k++)
    s->known[k] = ~0ull;
  s->known[w1] |= tail;
}

/* 1 if the cache holds [addr, addr+size) whole; copies it to out. */
static bool mvc_fetch(mvc_page *c, uint64_t addr, uint64_t size, uint8_t *out) {
  while (size) {
    mvc_page *s = mvc_slot(c, addr, false);
    size_t off = (size_t)(addr & 4095);
    size_t n = 4096 - off < size ? 4096 - off : (size_t)size;
    if (!s || !mvc_known_all(s, off, n))
      return false;
    memcpy(out, s->data + off, n);
    addr += n, size -= n, out += n;
  }
  return true;
}

/* 1 if the cache holds exactly these bytes at addr. */
static bool mvc_match(mvc_page *c, uint64_t addr, uint64_t size,
                      const uint8_t *bytes) {
  size_t off0 = (size_t)(addr & 4095);
  if (size <= 8 && off0 + size <= 4096) { /* the common case, inline */
    mvc_page *s = mvc_slot(c, addr, false);
    return s &&
           reg_load(s->data + off0, (unsigned)size) ==
               reg_load(bytes, (unsigned)size) &&
           mvc_known_all(s, off0, (size_t)size);
  }
  while (size) {
    mvc_page *s = mvc_slot(c, addr, false);
    size_t off = (size_t)(addr & 4095);
    size_t n = 4096 - off < size ? 4096 - off : (size_t)size;
    if (!s || memcmp(s->data + off, bytes, n) != 0 || !mvc_known_all(s, off, n))
      return false;
    addr += n, size -= n, bytes += n;
  }
  return true;
}

static void mvc_store(mvc_page *c, uint64_t addr, uint64_t size,
                      const uint8_t *bytes) {
  while (size) {
    mvc_page *s = mvc_slot(c, addr, true);
    size_t off = (size_t)(addr & 4095);
    size_t n = 4096 - off < size ? 4096 - off : (size_t)size;
    memcpy(s->data + off, bytes, n);
    mvc_known_set(s, off, n);
    addr += n, size -= n, bytes += n;
  }
}

/* One access: 1 if the cache held its before bytes (mvc_match), then its
 * after bytes are stored (mvc_store). Accesses of 1 to 8 bytes within a
 * page (nearly all) look the slot up once and move the bytes as one
 * word. */
static inline bool mvc_access(mvc_page *c, uint64_t addr, uint32_t size,
                              const uint8_t *before, const uint8_t *after) {
  size_t off = (size_t)(addr & 4095);
  if (size - 1 >= 8 || off + size > 4096) {
    bool cached = mvc_match(c, addr, size, before);
    mvc_store(c, addr, size, after);
    return cached;
  }
  uint64_t pg = (addr >> 12) + 1;
  mvc_page *s =
      &c[(size_t)((pg * 0x9e3779b97f4a7c15ull) >> 52) & (MVC_SLOTS - 1)];
  bool cached = false;
  if (s->page == pg) {
    cached = reg_load(s->data + off, size) == reg_load(before, size) &&
             mvc_known_all(s, off, size);
  } else {
    s->page = pg;
    memset(s->known, 0, sizeof s->known);
  }
  reg_store(s->data + off, size, reg_load(after, size));
  mvc_known_set(s, off, size);
  return cached;
}

/* Registers a write's after bytes are looked for in (x86 GPRs and the
 * like: up to 8 bytes, not FPU/segment/vector), ascending. */
#define MAX_AFTER_REGS 40
static int after_reg_candidates(const tc_arch *a, uint16_t *out) {
  int n = 0;
  for (int i = 0; i < a->nregs && n < MAX_AFTER_REGS; i++)
    if (a->regs[i].size <= 8 && i != a->pc_reg && i != a->flags_reg &&
        !(a->regs[i].flags & (TC_REG_FPU | TC_REG_SEGMENT | TC_REG_VECTOR)))
      out[n++] = (uint16_t)i;
  return n;
}

#define TCT_MAX_STR 65536
#define TCT_MAX_BLOB (1ull << 32)

/* ================================================================ writer */

/* The arch's register offsets and sizes, packed for the INSN loop. */
typedef struct tct_reg {
  uint32_t offset;
  uint16_t size;
  uint16_t copy_src; /* a candidate for version 3's register copies */
} tct_reg;

/* Which register last took a value, by the value's hash (256 slots):
 * the value and a register index + 1. A new value is looked up there
 * instead of in every candidate register; the candidates are scanned only
 * when the value was seen but that register has moved on (another may
 * still hold it). */
#define TCT_COPY_SLOTS 256
typedef struct copy_slot_t {
  uint64_t value;
  uint32_t reg;
} copy_slot_t;
static inline unsigned copy_slot(uint64_t v) {
  return (unsigned)((v * 0x9e3779b97f4a7c15ull) >> 56);
}

struct tc_writer {
  FILE *f;
  char *path;
  const tc_arch *arch;
  ZSTD_CCtx *zc;
  uint8_t *buf; /* uncompressed records not yet handed to zstd */
  size_t len, cap;
  uint8_t *zout;
  size_t zcap;

  /* zstd runs on a worker thread (compression costs about as much as
   * recording): the recorder fills buf while the worker compresses the
   * previous chunk. Chunk boundaries depend only on the records, so the
   * output is the same as compressing inline. */
  pthread_t worker;
  bool worker_started;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  uint8_t *job; /* chunk being compressed */
  size_t job_len, job_cap;
  bool job_end;  /* finish the zstd frame after this chunk */
  bool job_busy; /* the worker owns job */
  bool quit;
  bool worker_failed;
  tc_error worker_err;

  uint8_t *state; /* reader-visible state after the last record */
  bool have_state;
  bool continuous; /* tc_trace_info.continuous: no whole-state compare */
  bool failed;
  uint64_t next_index; /* implied index of the next INSN */
  uint32_t tid;        /* implied thread id */
  uint64_t mem_prev;   /* address of the last access written */
  icache_slot *icache;
  mvc_page *mvc;
  uint16_t after_regs[MAX_AFTER_REGS];
  uint32_t after_off[MAX_AFTER_REGS]; /* their offsets and sizes */
  uint16_t after_size[MAX_AFTER_REGS];
  unsigned after_uniform; /* 4 or 8: the size of every one of them */
  int nafter_regs;
  tct_reg *regs; /* arch->nregs */
  bool avx2;     /* the CPU has AVX2 (state_equal) */
  /* The INSN being written: registers given as a read's value (version
   * 3's escape) and that read's index. The reader sets them when it reaches
   * that read, so a write before it must not name them (enc_mem). */
  uint16_t load_reg[8];
  uint32_t load_k[8];
  int nload;
  copy_slot_t copy_tab[TCT_COPY_SLOTS];

  /* Version 4: chunks and the footer. `written`: bytes in the file (the
   * worker's); frame_ends: the file offset where each finished zstd frame
   * ends (the worker appends; read at close). */
  uint64_t written;
  uint64_t *frame_ends;
  size_t nframe_ends, frame_ends_cap;
  uint8_t *initial; /* the header's initial state (zeros if none) */
  bool has_initial;
  uint64_t rec_bytes;   /* record bytes before buf (this chunk and before) */
  uint64_t chunk_bytes; /* rec_bytes + len at the chunk's start */
  uint64_t chunk_insns; /* insns at the chunk's start */
  uint64_t max_insns, max_bytes; /* a chunk's size (-O tct.chunk) */
  tct_chunk *chunks;
  size_t nchunks, chunks_cap;
  tct_maplog *maplog;
  size_t nmaplog, maplog_cap;
  tct_sum sum;
  bool sys_more; /* the last SYSCALL had more parts (counts calls once) */
  uint64_t sys_more_index;
  /* A part of a parallel recording (tc_tct_open_part, record -j): the
   * INSN events before it (the grid counts from the trace's start), and
   * whether its first KEYFRAME still has to start its first chunk (no
   * frame is open before it). */
  uint64_t insn_base;
  bool part, part_first;
  /* Chunk memory summaries: the chunk's stores; the frame that ends the
   * chunk's (tail: the one being made; job_tail: the worker's) */
  md_table md;
  uint8_t *tail, *job_tail;
  size_t tail_len, tail_cap, job_tail_len, job_tail_cap;
  /* Chunk filters: the chunk's pcs, stored and loaded lines. */
  mf_set mf_pc, mf_w, mf_r;
  /* The chunk began at a KEYFRAME and holds no INSN yet: another
   * KEYFRAME (of the same instruction) starts a chunk again. */
  bool key_open;
};

static int w_reserve(tc_writer *w, size_t n) {
  if (w->len + n <= w->cap)
    return 0;
  size_t cap = w->cap ? w->cap : 1 << 16;
  while (cap < w->len + n)
    cap *= 2;
  uint8_t *nb = realloc(w->buf, cap);
  if (!nb)
    return -1;
  w->buf = nb;
  w->cap = cap;
  return 0;
}

/* LEB128 into a buffer known to have room (10 bytes at most). */
static inline uint8_t *enc_uv(uint8_t *p, uint64_t v) {
  while (v >= 0x80) {
    *p++ = (uint8_t)(v | 0x80);
    v >>= 7;
  }
  *p++ = (uint8_t)v;
  return p;
}

static void put_u8(tc_writer *w, uint8_t v) {
  if (w_reserve(w, 1) == 0)
    w->buf[w->len++] = v;
  else
    w->failed = true;
}

static void put_uv(tc_writer *w, uint64_t v) {
  if (w_reserve(w, 10) < 0) {
    w->failed = true;
    return;
  }
  w->len = (size_t)(enc_uv(w->buf + w->len, v) - w->buf);
}

static void put_sv(tc_writer *w, int64_t v) {
  put_uv(w, ((uint64_t)v << 1) ^ (uint64_t)(v >> 63));
}

static void put_bytes(tc_writer *w, const void *p, size_t n) {
  if (n == 0)
    return;
  if (w_reserve(w, n) < 0) {
    w->failed = true;
    return;
  }
  memcpy(w->buf + w->len, p, n);
  w->len += n;
}

static void put_str(tc_writer *w, const char *s) {
  size_t n = s ? strlen(s) : 0;
  if (n > TCT_MAX_STR)
    n = TCT_MAX_STR;
  put_uv(w, n);
  put_bytes(w, s, n);
}

/* --------------------------------------------- chunk memory summaries */

static void put_le32(uint8_t *p, uint32_t v) {
  for (int i = 0; i < 4; i++)
    p[i] = (uint8_t)(v >> (8 * i));
}

static size_t md_hash(uint64_t pn, size_t cap) {
  return (size_t)((pn * 0x9E3779B97F4A7C15ull) >> 20) & (cap - 1);
}

/* Forgets every page (a new chunk). */
static void md_reset(md_table *t) {
  for (size_t i = 0; t->n && i < t->cap; i++)
    if (t->slot[i]) {
      free(t->slot[i]);
      t->slot[i] = NULL;
      t->n--;
    }
  t->n = 0;
  t->over = false;
}

static void md_free(md_table *t) {
  md_reset(t);
  free(t->slot);
  memset(t, 0, sizeof *t);
}

/* The page pn, made if new; NULL past the bound or out of memory (the
 * chunk then lists no page). */
static md_page *md_get(md_table *t, uint64_t pn) {
  if (t->over)
    return NULL;
  if (t->cap) {
    for (size_t i = md_hash(pn, t->cap);; i = (i + 1) & (t->cap - 1)) {
      if (!t->slot[i])
        break;
      if (t->slot[i]->pn == pn)
        return t->slot[i];
    }
  }
  if (t->n >= TCT_MD_MAX_PAGES)
    goto over;
  if ((t->n + 1) * 2 > t->cap) {
    size_t cap = t->cap ? t->cap * 2 : 64;
    md_page **slot = calloc(cap, sizeof *slot);
    if (!slot)
      goto over;
    for (size_t i = 0; i < t->cap; i++)
      if (t->slot[i]) {
        size_t j = md_hash(t->slot[i]->pn, cap);
        while (slot[j])
          j = (j + 1) & (cap - 1);
        slot[j] = t->slot[i];
      }
    free(t->slot);
    t->slot = slot;
    t->cap = cap;
  }
  md_page *pg = calloc(1, sizeof *pg);
  if (!pg)
    goto over;
  pg->pn = pn;
  size_t i = md_hash(pn, t->cap);
  while (t->slot[i])
    i = (i + 1) & (t->cap - 1);
  t->slot[i] = pg;
  t->n++;
  return pg;
over:
  md_reset(t);
  t->over = true;
  return NULL;
}

static void md_bits(uint8_t *known, size_t off, size_t n, bool on) {
  for (size_t i = off; i < off + n; i++) {
    if ((i & 7) == 0 && i + 8 <= off + n) {
      known[i >> 3] = on ? 0xff : 0;
      i += 7;
    } else if (on) {
      known[i >> 3] |= (uint8_t)(1u << (i & 7));
    } else {
      known[i >> 3] &= (uint8_t) ~(1u << (i & 7));
    }
  }
}

/* A store's (or the kernel's) new bytes. */
static void md_write(md_table *t, uint64_t addr, uint64_t size,
                     const uint8_t *data) {
  while (size && !t->over) {
    size_t off = (size_t)(addr & 4095);
    size_t n = 4096 - off < size ? 4096 - off : (size_t)size;
    md_page *pg = md_get(t, addr >> 12);
    if (!pg)
      return;
    memcpy(pg->data + off, data, n);
    md_bits(pg->known, off, n, true);
    addr += n, data += n, size -= n;
  }
}

static void md_clear_page(md_page *pg, uint64_t addr, uint64_t end) {
  uint64_t lo = pg->pn << 12, hi = lo + 4096;
  if (addr > lo)
    lo = addr;
  if (end < hi)
    hi = end;
  if (lo < hi)
    md_bits(pg->known, (size_t)(lo & 4095), (size_t)(hi - lo), false);
}

/* A MAP or UNMAP: the bytes stored before it in the chunk are gone (a
 * reader takes the map log's entries first, then the summary). */
static void md_clear(md_table *t, uint64_t addr, uint64_t size) {
  if (!t->n || !size)
    return;
  uint64_t end = addr + size < addr ? UINT64_MAX : addr + size;
  uint64_t first = addr >> 12, last = (end - 1) >> 12;
  if (last - first < t->cap) {
    for (uint64_t pn = first; pn <= last; pn++)
      for (size_t i = md_hash(pn, t->cap); t->slot[i];
           i = (i + 1) & (t->cap - 1))
        if (t->slot[i]->pn == pn) {
          md_clear_page(t->slot[i], addr, end);
          break;
        }
  } else {
    for (size_t i = 0; i < t->cap; i++)
      if (t->slot[i] && t->slot[i]->pn >= first && t->slot[i]->pn <= last)
        md_clear_page(t->slot[i], addr, end);
  }
}

static void md_accesses(md_table *t, uint32_t n, const tc_mem_access *m) {
  for (uint32_t i = 0; i < n; i++)
    if (m[i].kind == TC_MEM_WRITE && m[i].after)
      md_write(t, m[i].addr, m[i].size, m[i].after);
}

static int md_cmp(const void *a, const void *b) {
  uint64_t x = (*(md_page *const *)a)->pn, y = (*(md_page *const *)b)->pn;
  return x < y ? -1 : x > y;
}

typedef struct md_buf {
  uint8_t *p;
  size_t n, cap;
  bool failed;
} md_buf;

static void mb_need(md_buf *b, size_t more) {
  if (b->failed || b->n + more <= b->cap)
    return;
  size_t cap = b->cap ? b->cap : 4096;
  while (cap < b->n + more)
    cap *= 2;
  uint8_t *p = realloc(b->p, cap);
  if (!p) {
    b->failed = true;
    return;
  }
  b->p = p;
  b->cap = cap;
}

static void mb_uv(md_buf *b, uint64_t v) {
  mb_need(b, 10);
  if (!b->failed)
    b->n = (size_t)(enc_uv(b->p + b->n, v) - b->p);
}

static void mb_bytes(md_buf *b, const void *p, size_t n) {
  mb_need(b, n);
  if (!b->failed && n) {
    memcpy(b->p + b->n, p, n);
    b->n += n;
  }
}

static void mf_clear(mf_set *t) {
  free(t->slot);
  memset(t, 0, sizeof *t);
}

static size_t mf_hash(uint64_t v, size_t cap) {
  return (size_t)((v * 0x9E3779B97F4A7C15ull) >> 17) & (cap - 1);
}

static void mf_add(mf_set *t, uint64_t v) {
  uint64_t key = v + 1;
  size_t r = (size_t)((v * 0x9E3779B97F4A7C15ull) >> 56);
  if (t->over || t->recent[r] == key)
    return;
  if (key == 0 || t->n >= TCT_MF_MAX)
    goto over;
  if ((t->n + 1) * 2 > t->cap) {
    size_t cap = t->cap ? t->cap * 2 : 256;
    uint64_t *slot = calloc(cap, sizeof *slot);
    if (!slot)
      goto over;
    for (size_t i = 0; i < t->cap; i++)
      if (t->slot[i]) {
        size_t j = mf_hash(t->slot[i], cap);
        while (slot[j])
          j = (j + 1) & (cap - 1);
        slot[j] = t->slot[i];
      }
    free(t->slot);
    t->slot = slot;
    t->cap = cap;
  }
  size_t i = mf_hash(key, t->cap);
  for (; t->slot[i]; i = (i + 1) & (t->cap - 1))
    if (t->slot[i] == key) {
      t->recent[r] = key;
      return;
    }
  t->slot[i] = key;
  t->n++;
  t->recent[r] = key;
  return;
over:
  mf_clear(t);
  t->over = true;
}

/* The units of 2^shift bytes of [addr, addr + size): 64-byte lines for
 * stores (the memory summary knows their bytes), 8-byte words for loads. */
static void mf_units(mf_set *t, uint64_t addr, uint64_t size, unsigned shift) {
  if (!size || t->over)
    return;
  uint64_t last = addr + size - 1 < addr ? UINT64_MAX : addr + size - 1;
  if ((last >> shift) - (addr >> shift) >= TCT_MF_MAX) {
    mf_clear(t);
    t->over = true;
    return;
  }
  for (uint64_t l = addr >> shift; l <= last >> shift; l++)
    mf_add(t, l);
}

static void mf_accesses(tc_writer *w, uint32_t n, const tc_mem_access *m,
                        bool reads) {
  for (uint32_t i = 0; i < n; i++)
    if (m[i].kind == TC_MEM_WRITE && m[i].after)
      mf_units(&w->mf_w, m[i].addr, m[i].size, TCT_MF_LINE);
    else if (reads && m[i].kind == TC_MEM_READ)
      mf_units(&w->mf_r, m[i].addr, m[i].size, TCT_MF_WORD);
}

static int u64_cmp(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

/* The set's values ascending (slots hold value + 1); n of them. */
static uint64_t *mf_sorted(const mf_set *t, bool *failed) {
  uint64_t *v = t->n ? malloc(t->n * sizeof *v) : NULL;
  if (t->n && !v) {
    *failed = true;
    return NULL;
  }
  size_t n = 0;
  for (size_t i = 0; i < t->cap; i++)
    if (t->slot[i])
      v[n++] = t->slot[i] - 1;
  if (n)
    qsort(v, n, sizeof *v, u64_cmp);
  return v;
}

/* A set of lines as runs: the count, then per run the lines skipped since
 * the previous run's end (the first: its first line) and its length. */
static void mf_put_runs(md_buf *b, const mf_set *t, bool *failed) {
  uint64_t *v = mf_sorted(t, failed);
  size_t runs = 0;
  for (size_t i = 0; i < t->n; i++)
    if (i == 0 || v[i] != v[i - 1] + 1)
      runs++;
  mb_uv(b, runs);
  uint64_t end = 0;
  for (size_t i = 0; i < t->n;) {
    size_t j = i + 1;
    while (j < t->n && v[j] == v[j - 1] + 1)
      j++;
    mb_uv(b, v[i] - end);
    mb_uv(b, j - i);
    end = v[j - 1] + 1;
    i = j;
  }
  free(v);
}

/* Makes the frame that follows the chunk's (w->tail) from its stores,
 * and forgets them. Its body: version (1), flags (1: more pages than
 * kept: none listed), the page count, then per page in address order: its
 * number (delta from the previous one's), the count of runs of written
 * bytes, and per run the bytes skipped since the previous run's end, its
 * length and its bytes. -1 out of memory. */
static int md_make_tail(tc_writer *w, bool with_md) {
  md_table *t = &w->md;
  md_buf b = {0};
  md_page **v = t->n ? malloc(t->n * sizeof *v) : NULL;
  size_t n = 0;
  for (size_t i = 0; v && i < t->cap; i++)
    if (t->slot[i])
      v[n++] = t->slot[i];
  if (t->n && !v) {
    md_reset(t);
    return -1;
  }
  if (n)
    qsort(v, n, sizeof *v, md_cmp);
  mb_uv(&b, 1);
  mb_uv(&b, t->over ? 1 : 0);
  mb_uv(&b, n);
  uint64_t prev = 0;
  for (size_t k = 0; k < n; k++) {
    const md_page *pg = v[k];
    mb_uv(&b, pg->pn - prev);
    prev = pg->pn;
    size_t runs = 0;
    for (size_t i = 0; i < 4096; i++)
      if ((pg->known[i >> 3] >> (i & 7) & 1) &&
          (i == 0 || !(pg->known[(i - 1) >> 3] >> ((i - 1) & 7) & 1)))
        runs++;
    mb_uv(&b, runs);
    size_t at = 0;
    for (size_t i = 0; i < 4096;) {
      if (!(pg->known[i >> 3] >> (i & 7) & 1)) {
        i++;
        continue;
      }
      size_t j = i;
      while (j < 4096 && (pg->known[j >> 3] >> (j & 7) & 1))
        j++;
      mb_uv(&b, i - at);
      mb_uv(&b, j - i);
      mb_bytes(&b, pg->data + i, j - i);
      at = i = j;
    }
  }
  free(v);
  md_reset(t);
  /* the chunk's filters */
  md_buf fb = {0};
  bool ffail = false;
  mb_uv(&fb, TCT_MF_VERSION);
  mb_uv(&fb, (w->mf_pc.over ? MF_ALL_PC : 0) | (w->mf_w.over ? MF_ALL_W : 0) |
                 (w->mf_r.over ? MF_ALL_R : 0));
  uint64_t *pcs = mf_sorted(&w->mf_pc, &ffail);
  mb_uv(&fb, w->mf_pc.n);
  for (size_t i = 0; i < w->mf_pc.n; i++)
    mb_uv(&fb, pcs[i] - (i ? pcs[i - 1] : 0));
  free(pcs);
  mf_put_runs(&fb, &w->mf_w, &ffail);
  mf_put_runs(&fb, &w->mf_r, &ffail);
  mf_clear(&w->mf_pc);
  mf_clear(&w->mf_w);
  mf_clear(&w->mf_r);
  size_t zcap = ZSTD_compressBound(b.n), fcap = ZSTD_compressBound(fb.n);
  uint8_t *z = b.failed ? NULL : malloc(zcap);
  uint8_t *fz = fb.failed || ffail ? NULL : malloc(fcap);
  size_t zn = z ? ZSTD_compress(z, zcap, b.p, b.n, 3) : 0;
  size_t fzn = fz ? ZSTD_compress(fz, fcap, fb.p, fb.n, 3) : 0;
  free(b.p);
  free(fb.p);
  if (!z || !fz || ZSTD_isError(zn) || zn > TCT_MD_MAX_Z || ZSTD_isError(fzn) ||
      fzn > TCT_MD_MAX_Z) {
    bool oom = !z || !fz;
    free(z);
    free(fz);
    return oom ? -1 : 0; /* too large: no summary, readers decode */
  }
  size_t total = 8 + fzn + 8 + (with_md ? 8 + zn + 8 : 0);
  if (total > w->tail_cap) {
    uint8_t *p = realloc(w->tail, total);
    if (!p) {
      free(z);
      free(fz);
      return -1;
    }
    w->tail = p;
    w->tail_cap = total;
  }
  uint8_t *o = w->tail;
  put_le32(o, TCT_SKIP_FILT);
  put_le32(o + 4, (uint32_t)(fzn + 8));
  memcpy(o + 8, fz, fzn);
  put_le32(o + 8 + fzn, (uint32_t)(fzn + 8));
  memcpy(o + 8 + fzn + 4, tct_filt_tag, 4);
  o += 8 + fzn + 8;
  if (with_md) {
    put_le32(o, TCT_SKIP_MEM);
    put_le32(o + 4, (uint32_t)(zn + 8));
    memcpy(o + 8, z, zn);
    put_le32(o + 8 + zn, (uint32_t)(zn + 8));
    memcpy(o + 8 + zn + 4, tct_mem_tag, 4);
  }
  w->tail_len = total;
  free(z);
  free(fz);
  return 0;
}

/* Compresses one chunk into the file (worker thread). */
static int compress_chunk(tc_writer *w, const uint8_t *data, size_t len,
                          bool end, tc_error *err) {
  ZSTD_inBuffer in = {data, len, 0};
  for (;;) {
    ZSTD_outBuffer out = {w->zout, w->zcap, 0};
    size_t rem = ZSTD_compressStream2(w->zc, &out, &in,
                                      end ? ZSTD_e_end : ZSTD_e_continue);
    if (ZSTD_isError(rem)) {
      tc_error_set(err, "tct: zstd: %s", ZSTD_getErrorName(rem));
      return -1;
    }
    if (out.pos && fwrite(w->zout, 1, out.pos, w->f) != out.pos) {
      tc_error_set(err, "tct: %s: write failed: %s", w->path, strerror(errno));
      return -1;
    }
    w->written += out.pos;
    if (end ? rem == 0 : in.pos == in.size)
      break;
  }
  if (end && w->job_tail_len) { /* the chunk's memory summary */
    if (fwrite(w->job_tail, 1, w->job_tail_len, w->f) != w->job_tail_len) {
      tc_error_set(err, "tct: %s: write failed: %s", w->path, strerror(errno));
      return -1;
    }
    w->written += w->job_tail_len;
  }
  if (end && grow_push((void **)&w->frame_ends, &w->nframe_ends,
                       &w->frame_ends_cap, sizeof(uint64_t), &w->written) < 0) {
    tc_error_set(err, "tct: out of memory");
    return -1;
  }
  return 0;
}

static void *worker_main(void *arg) {
  tc_writer *w = arg;
  pthread_mutex_lock(&w->mu);
  for (;;) {
    while (!w->job_busy && !w->quit)
      pthread_cond_wait(&w->cv, &w->mu);
    if (!w->job_busy)
      break; /* quit with nothing left to do */
    pthread_mutex_unlock(&w->mu);
    tc_error e = {{0}};
    int rc = w->worker_failed
                 ? 0 /* after a failure, chunks are dropped */
                 : compress_chunk(w, w->job, w->job_len, w->job_end, &e);
    pthread_mutex_lock(&w->mu);
    if (rc < 0) {
      w->worker_failed = true;
      w->worker_err = e;
    }
    w->job_busy = false;
    pthread_cond_broadcast(&w->cv);
  }
  pthread_mutex_unlock(&w->mu);
  return NULL;
}

/* Waits for the worker to be idle; -1 with its error if it failed. */
static int worker_wait(tc_writer *w, tc_error *err) {
  pthread_mutex_lock(&w->mu);
  while (w->job_busy)
    pthread_cond_wait(&w->cv, &w->mu);
  bool failed = w->worker_failed;
  if (failed)
    tc_error_set(err, "%s", w->worker_err.msg);
  pthread_mutex_unlock(&w->mu);
  return failed ? -1 : 0;
}

/* Hands what is buffered to the worker; `end` finishes the frame, `wait`
 * waits for it. */
static int w_flush_job(tc_writer *w, bool end, bool wait, tc_error *err) {
  if (worker_wait(w, err) < 0)
    return -1;
  pthread_mutex_lock(&w->mu);
  uint8_t *t = w->job; /* swap buffers: the worker takes the full one */
  size_t tc = w->job_cap;
  w->job = w->buf;
  w->job_cap = w->cap;
  w->job_len = w->len;
  w->job_end = end;
  w->job_tail_len = 0;
  if (end) { /* the summary made for the frame this ends, if any */
    uint8_t *tt = w->job_tail;
    size_t tcap = w->job_tail_cap;
    w->job_tail = w->tail;
    w->job_tail_cap = w->tail_cap;
    w->job_tail_len = w->tail_len;
    w->tail = tt;
    w->tail_cap = tcap;
    w->tail_len = 0;
  }
  w->job_busy = true;
  w->buf = t;
  w->cap = tc;
  w->rec_bytes += w->len;
  w->len = 0;
  pthread_cond_broadcast(&w->cv);
  pthread_mutex_unlock(&w->mu);
  return wait ? worker_wait(w, err) : 0;
}

static int w_flush(tc_writer *w, bool end, tc_error *err) {
  return w_flush_job(w, end, end, err);
}

/* Version 4: ends the zstd frame (without waiting for it) and starts a
 * chunk: a CHUNK record first in a new frame, every cache emptied, the
 * state the header's initial one, as the reader sets them. */
static int start_chunk(tc_writer *w, uint64_t insn, uint32_t tid,
                       tc_error *err) {
  if (w->part_first) {
    w->part_first = false; /* a part's first chunk: no frame before it */
    md_reset(&w->md);
    mf_clear(&w->mf_pc);
    mf_clear(&w->mf_w);
    mf_clear(&w->mf_r);
  } else if (md_make_tail(w, true) < 0) {
    tc_error_set(err, "tct: out of memory");
    return -1;
  } else if (w_flush_job(w, true, false, err) < 0) {
    return -1;
  }
  tct_chunk c = {insn, 0, w->nmaplog, tid};
  if (grow_push((void **)&w->chunks, &w->nchunks, &w->chunks_cap, sizeof c,
                &c) < 0) {
    tc_error_set(err, "tct: out of memory");
    return -1;
  }
  memset(w->icache, 0, TCT_ICACHE_SLOTS * sizeof *w->icache);
  mvc_reset(w->mvc);
  memset(w->copy_tab, 0, sizeof w->copy_tab);
  w->mem_prev = 0;
  w->next_index = insn;
  w->tid = tid;
  memcpy(w->state, w->initial, w->arch->state_size);
  w->have_state = false; /* a KEYFRAME or a STATE comes first */
  w->chunk_bytes = w->rec_bytes + w->len;
  w->chunk_insns = w->insn_base + w->sum.insns;
  put_u8(w, REC_CHUNK);
  put_uv(w, insn);
  put_uv(w, tid);
  if (w->failed) {
    tc_error_set(err, "tct: out of memory");
    return -1;
  }
  return 0;
}

static void worker_stop(tc_writer *w) {
  if (!w->worker_started)
    return;
  pthread_mutex_lock(&w->mu);
  w->quit = true;
  pthread_cond_broadcast(&w->cv);
  pthread_mutex_unlock(&w->mu);
  pthread_join(w->worker, NULL);
  w->worker_started = false;
}

static const char *tct_extension(const tc_arch *arch) {
  (void)arch;
  return ".tct";
}

/* Frees everything but the file and the worker (stopped by then). */
static void writer_free(tc_writer *w) {
  ZSTD_freeCCtx(w->zc);
  pthread_mutex_destroy(&w->mu);
  pthread_cond_destroy(&w->cv);
  free(w->zout);
  free(w->state);
  free(w->icache);
  mvc_free(w->mvc);
  md_free(&w->md);
  mf_clear(&w->mf_pc);
  mf_clear(&w->mf_w);
  mf_clear(&w->mf_r);
  free(w->tail);
  free(w->job_tail);
  free(w->regs);
  free(w->buf);
  free(w->job);
  free(w->path);
  free(w->frame_ends);
  free(w->initial);
  free(w->chunks);
  maplog_free(w->maplog, w->nmaplog);
  free(w->sum.exit_message);
  free(w);
}

/* zstd level: 2 compresses 1.3-2.2x faster than 3 for 3-5 % more bytes
 * (docs/speed.md); -O tct.level=N picks another (1..19). */
#define TCT_DEFAULT_LEVEL 2

/* A writer of the whole trace (part false), or of a part of a parallel
 * recording that starts at instruction first (tc_tct_open_part). */
static tc_writer *tct_open(const char *path, const tc_trace_info *info,
                           bool part, uint64_t first, tc_error *err) {
  static const char *const known[] = {"level", "chunk", NULL};
  if (tc_writer_options_check(info, "tct", known, err) < 0)
    return NULL;
  int level = TCT_DEFAULT_LEVEL;
  const char *opt = tc_writer_option(info, "tct", "level");
  if (opt) {
    char *end;
    long v = strtol(opt, &end, 10);
    if (!*opt || *end || v < 1 || v > 19) {
      tc_error_set(
          err, "tct: level must be a zstd level from 1 to 19, not '%s'", opt);
      return NULL;
    }
    level = (int)v;
  }
  /* -O tct.chunk=N: chunks of N instructions (or 8 N bytes of records);
   * 0: one chunk, no seek but from the start */
  uint64_t chunk = TCT_CHUNK_INSNS;
  opt = tc_writer_option(info, "tct", "chunk");
  if (opt) {
    char *end;
    errno = 0;
    unsigned long long v = strtoull(opt, &end, 10);
    if (!*opt || *end || *opt == '-' || errno || v > (1ull << 40)) {
      tc_error_set(err,
                   "tct: chunk must be a number of instructions (0: no "
                   "chunks), not '%s'",
                   opt);
      return NULL;
    }
    chunk = v;
  }
  tc_writer *w = calloc(1, sizeof *w);
  if (!w) {
    tc_error_set(err, "out of memory");
    return NULL;
  }
  pthread_mutex_init(&w->mu, NULL);
  pthread_cond_init(&w->cv, NULL);
  w->arch = info->arch;
  w->path = strdup(path);
  w->f = tc_outfile_fopen(path, "wb");
  w->zc = ZSTD_createCCtx();
  w->zcap = ZSTD_CStreamOutSize();
  w->zout = malloc(w->zcap);
  w->state = calloc(1, info->arch->state_size);
  w->initial = calloc(1, info->arch->state_size);
  w->icache = calloc(TCT_ICACHE_SLOTS, sizeof *w->icache);
  w->mvc = mvc_new();
  w->regs = calloc((size_t)info->arch->nregs + 1, sizeof *w->regs);
  for (int i = 0; w->regs && i < info->arch->nregs; i++) {
    unsigned size = info->arch->regs[i].size;
    /* wide registers (vectors) are copy candidates among themselves */
    w->regs[i] = (tct_reg){info->arch->regs[i].offset, (uint16_t)size,
                           size > 8 && size <= 64};
  }
#ifdef TCT_HAVE_AVX2_EQUAL
  w->avx2 = __builtin_cpu_supports("avx2");
#endif
  w->nafter_regs = after_reg_candidates(info->arch, w->after_regs);
  for (int k = 0; k < w->nafter_regs; k++) {
    w->after_off[k] = info->arch->regs[w->after_regs[k]].offset;
    w->after_size[k] = info->arch->regs[w->after_regs[k]].size;
    if (w->regs)
      w->regs[w->after_regs[k]].copy_src = 1;
  }
  w->after_uniform = w->nafter_regs ? w->after_size[0] : 0;
  for (int k = 0; k < w->nafter_regs; k++)
    if (w->after_size[k] != w->after_uniform)
      w->after_uniform = 0;
  if (w->after_uniform != 4 && w->after_uniform != 8)
    w->after_uniform = 0;
  if (!w->f || !w->zc || !w->zout || !w->state || !w->path || !w->icache ||
      !w->mvc || !w->regs || !w->initial) {
    tc_error_set(err, "tct: cannot create %s: %s", path,
                 w->f ? "out of memory" : strerror(errno));
    goto fail;
  }
  w->continuous = info->continuous != 0;
  w->max_insns = chunk;
  w->max_bytes = chunk == TCT_CHUNK_INSNS ? TCT_CHUNK_BYTES : chunk * 8;
  ZSTD_CCtx_setParameter(w->zc, ZSTD_c_compressionLevel, level);
  if (tc_thread_create(&w->worker, worker_main, w) != 0) {
    tc_error_set(err, "tct: cannot start the compression thread");
    goto fail;
  }
  w->worker_started = true;
  w->part = part;
  if (part && first > 0) {
    /* a later part: its frames follow the earlier parts' (tc_tct_join);
     * its first KEYFRAME starts its first chunk */
    if (info->initial_state) {
      memcpy(w->state, info->initial_state, info->arch->state_size);
      memcpy(w->initial, info->initial_state, info->arch->state_size);
      w->has_initial = true;
    }
    w->insn_base = w->chunk_insns = first;
    w->part_first = true;
    return w;
  }
  if (fwrite(tct_magic, 1, 8, w->f) != 8) {
    tc_error_set(err, "tct: %s: write failed: %s", path, strerror(errno));
    goto fail;
  }
  w->written = 8;
  put_u8(w, REC_HEADER);
  put_uv(w, (uint64_t)tc_arch_wire_id(info->arch));
  put_uv(w, info->entry);
  put_uv(w, info->load_base);
  put_uv(w, info->pid);
  put_uv(w, info->seed);
  put_uv(w, info->keyframe_interval);
  put_u8(w, info->has_memory);
  put_str(w, info->exe_path);
  put_uv(w, (uint64_t)(info->argc > 0 ? info->argc : 0));
  for (int i = 0; i < info->argc; i++)
    put_str(w, info->argv[i]);
  put_uv(w, info->exe_data ? info->exe_size : 0);
  if (info->exe_data)
    put_bytes(w, info->exe_data, info->exe_size);
  if (info->initial_state) {
    put_u8(w, 1);
    put_bytes(w, info->initial_state, info->arch->state_size);
    memcpy(w->state, info->initial_state, info->arch->state_size);
    memcpy(w->initial, info->initial_state, info->arch->state_size);
    w->have_state = w->has_initial = true;
  } else {
    put_u8(w, 0);
  }
  /* chunk 0 starts at the header (whose program bytes the maps' data
   * compress against) and needs no CHUNK record */
  tct_chunk c0 = {0, 8, 0, 0};
  if (w->failed || grow_push((void **)&w->chunks, &w->nchunks, &w->chunks_cap,
                             sizeof c0, &c0) < 0) {
    tc_error_set(err, "tct: out of memory");
    goto fail;
  }
  if (w_flush(w, false, err) < 0)
    goto fail;
  return w;
fail:
  worker_stop(w);
  if (w->f)
    fclose(w->f);
  writer_free(w);
  return NULL;
}

static tc_writer *tct_open_writer(const char *path, const tc_trace_info *info,
                                  tc_error *err) {
  return tct_open(path, info, false, 0, err);
}

/* The register (index) whose low `size` bytes in state are `bytes`, or
 * -1. */
static int after_reg_find(const tc_writer *w, const uint8_t *state,
                          const uint8_t *bytes, uint32_t size) {
  if (!state || size > 8 || size == 0)
    return -1;
  uint64_t mask = size == 8 ? ~0ull : (1ull << (8 * size)) - 1;
  uint64_t want = reg_load(bytes, size);
  int n = w->nafter_regs;
  /* Every arch's candidates have one size (GPRs): fixed-size loads. */
  if (w->after_uniform == 8) {
    for (int k = 0; k < n; k++) {
      uint64_t v;
      memcpy(&v, state + w->after_off[k], 8);
      if ((v & mask) == want)
        return w->after_regs[k];
    }
    return -1;
  }
  if (w->after_uniform == 4) {
    if (size > 4)
      return -1;
    for (int k = 0; k < n; k++) {
      uint32_t v;
      memcpy(&v, state + w->after_off[k], 4);
      if ((v & mask) == want)
        return w->after_regs[k];
    }
    return -1;
  }
  for (int k = 0; k < n; k++)
    if (w->after_size[k] >= size &&
        (reg_load(state + w->after_off[k], w->after_size[k]) & mask) == want)
      return w->after_regs[k];
  return -1;
}

/* Version 3: register r takes the value of this INSN's read k (the
 * reader sets it only when it reaches that read). */
static inline void load_add(tc_writer *w, int r, uint32_t k) {
  w->load_reg[w->nload] = (uint16_t)r;
  w->load_k[w->nload++] = k;
}

/* The read whose value register r takes in this INSN, or -1. */
static inline int64_t load_of(const tc_writer *w, int r) {
  for (int q = 0; q < w->nload; q++)
    if (w->load_reg[q] == r)
      return w->load_k[q];
  return -1;
}

/* A list of accesses: count, then per access kind, signed address delta,
 * size, before bytes, after bytes for writes. Encodes at p, which has
 * room for the count (10 bytes); each access makes room for itself (21 bytes
 * and twice its size at most): a bound summed over the list beforehand cost a
 * loop whose exit mispredicts. after_state: the INSN's (a write's after bytes
 * may name a register of it), NULL for kernel writes. NULL if out of memory. */
static uint8_t *enc_mem(tc_writer *w, uint8_t *p, uint32_t n,
                        const tc_mem_access *m, const uint8_t *after_state) {
  p = enc_uv(p, n);
  uint64_t prev = w->mem_prev;
  mvc_page *mvc = w->mvc;
  for (uint32_t i = 0; i < n; i++) {
    const tc_mem_access acc = m[i]; /* a local: stores through p alias */
    size_t need = 21 + 2 * (size_t)acc.size;
    if ((size_t)(w->buf + w->cap - p) < need) {
      w->len = (size_t)(p - w->buf);
      if (w_reserve(w, need) < 0)
        return NULL;
      p = w->buf + w->len;
    }
    int64_t d = (int64_t)(acc.addr - prev);
    prev = acc.addr;
    bool write = acc.kind == TC_MEM_WRITE;
    /* The cache is stored to here, before the encoding below: nothing
     * between reads it. */
    bool cached = mvc_access(mvc, acc.addr, acc.size, acc.before, acc.after);
    int reg = write ? after_reg_find(w, after_state, acc.after, acc.size) : -1;
    if (reg >= 0 && load_of(w, reg) > (int64_t)i)
      reg = -1; /* the reader learns its value only at that read */
    *p++ = (uint8_t)(acc.kind | (cached ? MEM_CACHED : 0) |
                     (reg >= 0 ? MEM_AFTER_REG : 0));
    p = enc_uv(p, ((uint64_t)d << 1) ^ (uint64_t)(d >> 63));
    p = enc_uv(p, acc.size);
    if (!cached) {
      memcpy(p, acc.before, acc.size);
      p += acc.size;
    }
    if (reg >= 0) {
      p = enc_uv(p, (uint64_t)reg);
    } else if (write) {
      memcpy(p, acc.after, acc.size);
      p += acc.size;
    }
  }
  w->mem_prev = prev;
  return p;
}

static void put_mem(tc_writer *w, uint32_t n, const tc_mem_access *m) {
  uint8_t *p;
  if (w_reserve(w, 10) < 0 || !(p = enc_mem(w, w->buf + w->len, n, m, NULL))) {
    w->failed = true;
    return;
  }
  w->len = (size_t)(p - w->buf);
}

#ifdef TCT_HAVE_AVX2_EQUAL
/* a[0, n) == b[0, n) for n >= 32: the XORs of 32-byte blocks (the last
 * one overlapping) ORed together, no early exit (states are nearly always
 * equal), no call, no size dispatch. Used only where the CPU has AVX2;
 * not AVX-512, whose 512-bit instructions lower some Xeons' clock for
 * everything else. */
__attribute__((target("avx2"))) static bool
bytes_equal_avx2(const uint8_t *a, const uint8_t *b, size_t n) {
#define TCT_XOR32(o)                                                           \
  _mm256_xor_si256(_mm256_loadu_si256((const __m256i *)(a + (o))),             \
                   _mm256_loadu_si256((const __m256i *)(b + (o))))
  __m256i acc = _mm256_setzero_si256();
  size_t i = 0;
  for (; i + 128 <= n; i += 128)
    acc = _mm256_or_si256(
        _mm256_or_si256(acc, _mm256_or_si256(TCT_XOR32(i), TCT_XOR32(i + 32))),
        _mm256_or_si256(TCT_XOR32(i + 64), TCT_XOR32(i + 96)));
  for (; i + 32 <= n; i += 32)
    acc = _mm256_or_si256(acc, TCT_XOR32(i));
  if (i < n)
    acc = _mm256_or_si256(acc, TCT_XOR32(n - 32));
#undef TCT_XOR32
  return _mm256_testz_si256(acc, acc);
}
#endif

/* The reader's state equals `state` (exactly: a converted or hand-made
 * event stream may change registers no event lists). */
static bool state_equal(const tc_writer *w, const uint8_t *state, size_t n) {
#ifdef TCT_HAVE_AVX2_EQUAL
  if (w->avx2 && n >= 32)
    return bytes_equal_avx2(w->state, state, n);
#endif
  return memcmp(w->state, state, n) == 0;
}

static void put_state_if_needed(tc_writer *w, const uint8_t *state) {
  size_t n = w->arch->state_size;
  /* a continuous stream (tc_trace_info) keeps w->state equal to it */
  if (w->have_state && (w->continuous || state_equal(w, state, n)))
    return;
  put_u8(w, REC_STATE);
  put_bytes(w, state, n);
  memcpy(w->state, state, n);
  w->have_state = true;
}

/* Register j (a copy candidate) holds v in its low `size` bytes. */
static inline bool copy_holds(const tc_writer *w, const uint8_t *state, int j,
                              unsigned size, uint64_t v) {
  const tct_reg *rj = &w->regs[j];
  uint64_t m = size >= 8 ? ~0ull : (1ull << (8 * size)) - 1;
  return rj->copy_src && rj->size >= size && rj->size <= 8 &&
         (reg_load(state + rj->offset, rj->size) & m) == v;
}

/* A copy candidate other than r holding v, or -1. */
static int copy_scan(const tc_writer *w, const uint8_t *state, int r,
                     unsigned size, uint64_t v) {
  for (int c = 0; c < w->nafter_regs; c++) {
    int j = w->after_regs[c];
    if (j != r && copy_holds(w, state, j, size, v))
      return j;
  }
  return -1;
}

/* The copy table's key of a register wider than 8 bytes. */
static inline uint64_t wide_key(const uint8_t *p, unsigned size) {
  uint64_t k = size, x;
  for (unsigned i = 0; i + 8 <= size; i += 8) {
    memcpy(&x, p + i, 8);
    k = (k ^ x) * 0x9e3779b97f4a7c15ull;
  }
  return k;
}

/* Version 3's escape for register r wider than 8 bytes (new bytes nv):
 * t = k << 2 if this INSN's read k loaded them (zero-extended; guests of
 * either byte order keep such registers as memory bytes only on
 * little-endian arches, so only those), t = j << 1 | 1 if register j of
 * the same size holds them; else -1. Keeps the copy table. */
static int64_t wide_escape(tc_writer *w, const tc_insn_event *e, int r,
                           const uint8_t *nv) {
  const tct_reg *ri = &w->regs[r];
  int64_t t = -1;
  if (!w->arch->big_endian && w->nload < 8)
    for (uint32_t k = 0; k < e->nmem && t < 0; k++) {
      const tc_mem_access *m = &e->mem[k];
      if (m->kind != TC_MEM_READ || m->size > ri->size ||
          memcmp(nv, m->after, m->size) != 0)
        continue;
      bool zero = true;
      for (unsigned i = m->size; i < ri->size; i++)
        zero &= nv[i] == 0;
      if (zero) {
        t = (int64_t)k << 2;
        load_add(w, r, k);
      }
    }
  if (!ri->copy_src)
    return t;
  uint64_t key = wide_key(nv, ri->size);
  copy_slot_t *cs = &w->copy_tab[copy_slot(key)];
  if (t < 0 && cs->value == key && cs->reg) {
    int j = (int)cs->reg - 1;
    const tct_reg *rj = &w->regs[j];
    if (j != r && rj->size == ri->size && load_of(w, j) < 0 &&
        memcmp(w->state + rj->offset, nv, ri->size) == 0)
      t = (int64_t)j << 1 | 1;
  }
  if (!(t >= 0 && (t & 1))) /* a copy keeps its source */
    *cs = (copy_slot_t){key, (uint32_t)r + 1};
  return t;
}

/* What the reader would refuse in an event's lists, or NULL. Recordings
 * (tc_trace_info.continuous) come from the recorder, which never makes
 * such events; converted and hand-made streams are checked, so the
 * writer never writes a file its reader rejects. */
static const char *event_invalid(const tc_arch *a, const tc_event *ev) {
  const tc_mem_access *m = NULL;
  uint32_t n = 0;
  if (ev->kind == TC_EV_INSN) {
    const tc_insn_event *e = &ev->u.insn;
    if (e->size > 16)
      return "an instruction over 16 bytes";
    if (e->nregs > a->nregs)
      return "more changed registers than the arch has";
    for (int i = 0; i < e->nregs; i++)
      if (e->regs[i] >= a->nregs || (i && e->regs[i] <= e->regs[i - 1]))
        return "a register list not ascending or out of the arch's";
    m = e->mem, n = e->nmem;
  } else if (ev->kind == TC_EV_SYSCALL) {
    m = ev->u.sys.mem, n = ev->u.sys.nmem;
  } else if (ev->kind == TC_EV_SIGNAL) {
    m = ev->u.sig.mem, n = ev->u.sig.nmem;
  }
  for (uint32_t i = 0; i < n; i++)
    if (m[i].size == 0 || m[i].size > (1u << 24) ||
        (m[i].kind != TC_MEM_READ && m[i].kind != TC_MEM_WRITE))
      return "a memory access of 0 bytes, over 16 MiB or of no kind";
  return NULL;
}

/* The footer's summary and map log: what tc_trace_summarize counts. */
static int note_event(tc_writer *w, const tc_event *ev) {
  tct_sum *s = &w->sum;
  switch (ev->kind) {
  case TC_EV_INSN:
    if (s->insns++ == 0)
      s->first_pc = ev->u.insn.pc;
    s->last_pc = ev->u.insn.pc;
    if (w->max_insns) {
      md_accesses(&w->md, ev->u.insn.nmem, ev->u.insn.mem);
      uint64_t pc = ev->u.insn.pc; /* the state's pc, as a debugger's */
      if (ev->u.insn.state_before) {
        const tc_reg_info *ri = &w->arch->regs[w->arch->pc_reg];
        pc = 0;
        memcpy(&pc, ev->u.insn.state_before + ri->offset,
               ri->size < 8 ? ri->size : 8);
      }
      mf_add(&w->mf_pc, pc);
      mf_accesses(w, ev->u.insn.nmem, ev->u.insn.mem, true);
    }
    break;
  case TC_EV_SIGNAL:
    if (w->max_insns) {
      md_accesses(&w->md, ev->u.sig.nmem, ev->u.sig.mem);
      mf_accesses(w, ev->u.sig.nmem, ev->u.sig.mem, false);
    }
    break;
  case TC_EV_SYSCALL: /* parts of one call count once, as the reader's */
    if (w->max_insns) {
      md_accesses(&w->md, ev->u.sys.nmem, ev->u.sys.mem);
      mf_accesses(w, ev->u.sys.nmem, ev->u.sys.mem, false);
    }
    if (!(w->sys_more && w->sys_more_index == ev->u.sys.insn_index))
      s->syscalls++;
    w->sys_more = ev->u.sys.more != 0;
    w->sys_more_index = ev->u.sys.insn_index;
    break;
  case TC_EV_MAP:
  case TC_EV_UNMAP:
  case TC_EV_PROTECT: {
    const tc_map_event *m = &ev->u.map;
    if (ev->kind != TC_EV_PROTECT && w->max_insns) {
      md_clear(&w->md, m->addr, m->size);
      if (ev->kind == TC_EV_MAP && m->data)
        mf_units(&w->mf_w, m->addr, m->size, TCT_MF_LINE);
    }
    tct_maplog e = {ev->kind == TC_EV_MAP     ? REC_MAP
                    : ev->kind == TC_EV_UNMAP ? REC_UNMAP
                                              : REC_PROTECT,
                    m->prot,
                    m->addr,
                    m->size,
                    0,
                    NULL};
    if (ev->kind == TC_EV_MAP) {
      s->maps++;
      size_t n = m->name ? strlen(m->name) : 0;
      if (n > TCT_MAX_STR)
        n = TCT_MAX_STR;
      if (!(e.name = strndup(m->name ? m->name : "", n)))
        return -1;
      e.file_offset = m->file_offset;
    }
    if (grow_push((void **)&w->maplog, &w->nmaplog, &w->maplog_cap, sizeof e,
                  &e) < 0) {
      free(e.name);
      return -1;
    }
    break;
  }
  case TC_EV_FAULT:
    s->faults++;
    break;
  case TC_EV_KEYFRAME:
    s->keyframes++;
    break;
  case TC_EV_EXIT: {
    const char *msg = ev->u.exit.message ? ev->u.exit.message : "";
    size_t n = strlen(msg);
    char *m = strndup(msg, n > TCT_MAX_STR ? TCT_MAX_STR : n);
    if (!m)
      return -1;
    free(s->exit_message);
    s->exit_message = m;
    s->have_exit = 1;
    s->exit_status = ev->u.exit.status;
    break;
  }
  default:
    break;
  }
  return 0;
}

static int tct_write_event(tc_writer *w, const tc_event *ev, tc_error *err) {
  const tc_arch *a = w->arch;
  const char *bad = w->continuous ? NULL : event_invalid(a, ev);
  if (bad) {
    tc_error_set(err, "tct: %s: refused %s (the reader would not take it)",
                 w->path, bad);
    w->failed = true;
    return -1;
  }
  if (ev->kind == TC_EV_KEYFRAME || ev->kind == TC_EV_INSN) {
    /* a chunk starts at the first KEYFRAME on or past each multiple of
     * max_insns instructions (the grid: where chunks start depends on the
     * instruction count alone, so record -j cuts its work there), at a
     * KEYFRAME once the chunk holds max_bytes of records, or before an
     * INSN at twice the size where no KEYFRAME comes. And at every
     * KEYFRAME that follows a chunk's first KEYFRAME before any INSN (a
     * fault to a handler, a thread switch: the FAULT, the SIGNAL and the
     * handler's KEYFRAME of the same instruction): record -j's segment
     * starts at the last of them, where its checkpoint is, so the chunk
     * must start there whatever the instructions before put in it. */
    bool key = ev->kind == TC_EV_KEYFRAME;
    uint64_t k = key ? 1 : 2;
    uint64_t n = w->insn_base + w->sum.insns;
    bool due = w->max_insns &&
               ((key && w->key_open) ||
                w->rec_bytes + w->len - w->chunk_bytes >= k * w->max_bytes ||
                (key ? n / w->max_insns != w->chunk_insns / w->max_insns
                     : n - w->chunk_insns >= 2 * w->max_insns));
    if (due || (key && w->part_first)) {
      if (start_chunk(w, key ? ev->u.key.insn_index : ev->u.insn.index,
                      key ? ev->u.key.tid : ev->u.insn.tid, err) < 0)
        return -1;
      w->key_open = key;
    } else if (!key) {
      w->key_open = false;
    }
  }
  if (note_event(w, ev) < 0) {
    tc_error_set(err, "tct: out of memory");
    w->failed = true;
    return -1;
  }
  switch (ev->kind) {
  case TC_EV_INSN: {
    const tc_insn_event *e = &ev->u.insn;
    put_state_if_needed(w, e->state_before);
    /* The hot path: one reservation, then unchecked writes. */
    size_t bound =
        48 + (size_t)e->nregs * (10 + 32) + 10; /* + enc_mem's count */
    if (w_reserve(w, bound) < 0) {
      w->failed = true;
      break;
    }
    uint8_t *p = w->buf + w->len;
    /* Locals, not e-> and w-> fields: the byte stores through p may alias
     * anything, so fields would be loaded again after each one. */
    const uint64_t pc = e->pc, index = e->index;
    const uint32_t tid = e->tid;
    const uint8_t isize = e->size;
    const int nregs = e->nregs;
    const uint16_t *regs = e->regs;
    const uint8_t *after = e->state_after;
    uint8_t *state = w->state;
    const tct_reg *rt = w->regs;
    /* Index, PC and tid are implied (sequential, the state's PC, the
     * previous tid) unless a flag says they follow. */
    const tct_reg *pcr = &rt[a->pc_reg];
    uint64_t state_pc = reg_load(state + pcr->offset, pcr->size);
    uint8_t size = isize > 16 ? 16 : isize;
    icache_slot *ic = &w->icache[icache_index(pc)];
    bool cached = ic->valid && ic->pc == pc && ic->size == isize &&
                  insn_bytes_equal(ic->bytes, e->bytes, size);
    uint8_t flags = (index != w->next_index ? INSN_INDEX : 0) |
                    (pc != state_pc ? INSN_PC : 0) |
                    (tid != w->tid ? INSN_TID : 0) | (cached ? 0 : INSN_BYTES);
    w->next_index = index + 1;
    w->tid = tid;
    *p++ = (uint8_t)(REC_INSN_COMPACT | flags | (e->nmem ? 0 : INSN_NOMEM));
    if (flags & INSN_INDEX)
      p = enc_uv(p, index);
    if (flags & INSN_PC)
      p = enc_uv(p, pc);
    if (flags & INSN_TID)
      p = enc_uv(p, tid);
    if (!cached) {
      *p++ = isize;
      memcpy(p, e->bytes, 16); /* bound has room; only size bytes count */
      p += size;
      ic->valid = 1;
      ic->pc = pc;
      ic->size = isize;
      memcpy(ic->bytes, e->bytes, 16);
    }
    p = enc_uv(p, (uint64_t)nregs);
    /* The values this instruction's reads loaded: a register holding one
     * is written as the read's index instead of its value. */
    uint64_t ld[4];
    uint32_t ldk[4];
    uint8_t ldsz[4];
    int nld = 0;
    w->nload = 0;
    for (uint32_t k = 0; k < e->nmem && nld < 4; k++) {
      const tc_mem_access *m = &e->mem[k];
      if (m->kind == TC_MEM_READ && m->size <= 8) {
        ld[nld] = mem_value(m->after, m->size, a->big_endian);
        ldsz[nld] = (uint8_t)m->size;
        ldk[nld++] = k;
      }
    }
    int prev = -1;
    for (int i = 0; i < nregs; i++) {
      int r = regs[i];
      const tct_reg ri = rt[r];
      uint64_t idx = (uint64_t)(r - prev - 1) << 1;
      prev = r;
      uint8_t *cur = state + ri.offset;
      const uint8_t *nv = after + ri.offset;
      if (ri.size <= 8) {
        uint64_t old, v;
        if (ri.size == 8) { /* most registers: no size switch */
          memcpy(&old, cur, 8);
          memcpy(&v, nv, 8);
        } else {
          old = reg_load(cur, ri.size);
          v = reg_load(nv, ri.size);
        }
        uint64_t x = v ^ old, d = v - old;
        uint64_t z = (d << 1) ^ (uint64_t)((int64_t)d >> 63);
        /* uv_len is monotonic: a one-byte XOR or a difference no
         * smaller than it settles the mode without measuring either. */
        bool use_diff = x >= 0x80 && z < x && uv_len(z) < uv_len(x);
        uint64_t val = use_diff ? z : x;
        /* A value a read of this instruction loaded, or (if it takes 3
         * bytes or more) one another register holds: XOR 0 (the escape)
         * and the read's or register's index. Even where the XOR is one byte,
         * this repeats from one run of the code to the next where the value
         * does not, and compresses better (qsort, strsort64, textfmt64
         * 2-4 %; fib, where pops restore near values, 5-10 % worse). */
        bool loaded = false;
        uint64_t t = 0;
        if (nld && w->nload < 8)
          for (int j = 0; j < nld && !loaded; j++) {
            unsigned n = ldsz[j];
            if (n > ri.size)
              continue;
            if (ld[j] == v) {
              t = (uint64_t)ldk[j] << 2;
              loaded = true;
            } else if (n < ri.size && (ld[j] >> (8 * n - 1)) & 1) {
              uint64_t sx = ld[j] | ~0ull << (8 * n);
              if (ri.size < 8)
                sx &= (1ull << (8 * ri.size)) - 1;
              t = (uint64_t)ldk[j] << 2 | 2;
              loaded = sx == v;
            }
            if (loaded)
              load_add(w, r, ldk[j]);
          }
        if (!loaded && val >= 0x4000) {
          copy_slot_t *cs = &w->copy_tab[copy_slot(v)];
          int j = cs->value == v ? (int)cs->reg - 1 : -1;
          if (j >= 0 && (j == r || !copy_holds(w, state, j, ri.size, v)))
            j = copy_scan(w, state, r, ri.size, v);
          if (j >= 0 && load_of(w, j) < 0) {
            loaded = true;
            t = (uint64_t)j << 1 | 1;
          }
        }
        if (ri.copy_src)
          w->copy_tab[copy_slot(v)] = (copy_slot_t){v, (uint32_t)r + 1};
        if (loaded) {
          p = enc_uv(p, idx);
          *p++ = 0;
          p = enc_uv(p, t);
        } else {
          p = enc_uv(p, idx | use_diff);
          p = enc_uv(p, val);
        }
        if (ri.size == 8)
          memcpy(cur, &v, 8);
        else
          reg_store(cur, ri.size, v);
      } else {
        int64_t t = wide_escape(w, e, r, nv);
        if (t >= 0) {
          p = enc_uv(p, idx | 1); /* mode 1: the escape's t follows */
          p = enc_uv(p, (uint64_t)t);
        } else {
          p = enc_uv(p, idx);
          memcpy(p, nv, ri.size);
          p += ri.size;
        }
        memcpy(cur, nv, ri.size);
      }
    }
    /* Registers that changed without being listed still reach the reader
     * through a STATE record before the next instruction. */
    if (e->nmem && !(p = enc_mem(w, p, e->nmem, e->mem, after))) {
      w->failed = true;
      break;
    }
    w->len = (size_t)(p - w->buf);
    break;
  }
  case TC_EV_SYSCALL: {
    const tc_syscall_event *s = &ev->u.sys;
    put_u8(w, REC_SYSCALL);
    put_uv(w, s->insn_index);
    put_uv(w, s->tid);
    put_uv(w, s->nr);
    for (int i = 0; i < 6; i++)
      put_uv(w, s->args[i]);
    put_sv(w, s->ret);
    /* bit 0: not implemented; bit 1: more parts of this syscall follow;
     * bit 2: the compat table's call (older readers ignore the bit) */
    put_u8(w, (uint8_t)((s->unknown ? 1 : 0) | (s->more ? 2 : 0) |
                        (s->compat ? 4 : 0)));
    put_mem(w, s->nmem, s->mem);
    break;
  }
  case TC_EV_MAP:
  case TC_EV_UNMAP:
  case TC_EV_PROTECT: {
    const tc_map_event *m = &ev->u.map;
    put_u8(w, ev->kind == TC_EV_MAP     ? REC_MAP
              : ev->kind == TC_EV_UNMAP ? REC_UNMAP
                                        : REC_PROTECT);
    put_uv(w, m->addr);
    put_uv(w, m->size);
    put_uv(w, m->prot);
    if (ev->kind == TC_EV_MAP) {
      put_str(w, m->name);
      put_uv(w, m->file_offset);
      put_u8(w, m->data != NULL);
      if (m->data)
        put_bytes(w, m->data, m->size);
    }
    break;
  }
  case TC_EV_KEYFRAME:
    put_u8(w, REC_KEYFRAME);
    put_uv(w, ev->u.key.insn_index);
    put_uv(w, ev->u.key.tid);
    put_bytes(w, ev->u.key.state, a->state_size);
    memcpy(w->state, ev->u.key.state, a->state_size);
    w->have_state = true;
    break;
  case TC_EV_FAULT: {
    const tc_fault_event *f = &ev->u.fault;
    put_u8(w, REC_FAULT);
    put_uv(w, f->insn_index);
    put_uv(w, f->pc);
    put_uv(w, f->addr);
    put_uv(w, (uint64_t)f->kind);
    put_uv(w, (uint64_t)f->signal);
    break;
  }
  case TC_EV_SIGNAL: {
    const tc_signal_event *g = &ev->u.sig;
    put_u8(w, REC_SIGNAL);
    put_uv(w, g->insn_index);
    put_uv(w, g->tid);
    put_uv(w, (uint64_t)g->signal);
    put_sv(w, g->code);
    put_uv(w, g->addr);
    put_uv(w, g->pid);
    put_uv(w, g->uid);
    put_uv(w, g->handler);
    put_uv(w, g->frame);
    put_mem(w, g->nmem, g->mem);
    break;
  }
  case TC_EV_EXIT: {
    const tc_exit_event *x = &ev->u.exit;
    put_u8(w, REC_EXIT);
    put_uv(w, (uint64_t)x->reason);
    put_sv(w, x->status);
    put_uv(w, (uint64_t)x->signal);
    put_uv(w, x->insn_count);
    put_str(w, x->message);
    break;
  }
  case TC_EV_TURN:
    put_u8(w, REC_TURN);
    put_uv(w, ev->u.turn.turn);
    put_uv(w, ev->u.turn.insn_index);
    put_uv(w, ev->u.turn.tid);
    break;
  }
  if (w->failed) {
    tc_error_set(err, "tct: out of memory");
    return -1;
  }
  if (w->len >= (1u << 20) && w_flush(w, false, err) < 0)
    return -1;
  return 0;
}

/* The summary info prints and the map log, as the footer and a -j part's
 * meta both hold them. */
static void put_sum_and_maplog(tc_writer *w) {
  const tct_sum *s = &w->sum;
  put_uv(w, s->insns);
  put_uv(w, s->syscalls);
  put_uv(w, s->maps);
  put_uv(w, s->faults);
  put_uv(w, s->keyframes);
  put_uv(w, s->first_pc);
  put_uv(w, s->last_pc);
  put_u8(w, (uint8_t)s->have_exit);
  put_sv(w, s->exit_status);
  put_str(w, s->exit_message);
  put_uv(w, w->nmaplog);
  for (size_t i = 0; i < w->nmaplog; i++) {
    const tct_maplog *m = &w->maplog[i];
    put_u8(w, m->kind);
    put_uv(w, m->addr);
    put_uv(w, m->size);
    put_uv(w, m->prot);
    if (m->kind == REC_MAP) {
      put_str(w, m->name);
      put_uv(w, m->file_offset);
    }
  }
}

/* Version 4's footer, after the last frame: a skippable frame holding
 * the index as one zstd frame, then the trailer (docs/formats/tct.md). */
static int write_footer(tc_writer *w, tc_error *err) {
  if (w->nframe_ends != w->nchunks)
    return 0; /* cannot happen; no footer: readers scan */
  w->len = 0;
  put_uv(w, 1); /* the footer's version */
  put_sum_and_maplog(w);
  put_uv(w, w->nchunks);
  uint64_t insn = 0, off = 0, nmaps = 0;
  for (size_t i = 0; i < w->nchunks; i++) {
    const tct_chunk *c = &w->chunks[i];
    put_sv(w, (int64_t)(c->insn - insn));
    put_uv(w, c->tid);
    uint64_t at = i ? w->frame_ends[i - 1] : 8; /* where chunk i starts */
    put_uv(w, at - off);
    put_uv(w, c->nmaps - nmaps);
    insn = c->insn, off = at, nmaps = c->nmaps;
  }
  if (w->failed) {
    tc_error_set(err, "tct: out of memory");
    return -1;
  }
  size_t zcap = ZSTD_compressBound(w->len);
  uint8_t *z = malloc(8 + zcap);
  if (!z) {
    tc_error_set(err, "tct: out of memory");
    return -1;
  }
  size_t zn = ZSTD_compress(z + 8, zcap, w->buf, w->len, 3);
  if (ZSTD_isError(zn) || zn > TCT_FOOTER_MAX_Z) {
    free(z);
    return 0; /* no footer: readers scan */
  }
  put_le32(z, TCT_SKIP_FOOTER);
  put_le32(z + 4, (uint32_t)zn);
  uint8_t t[TCT_TRAILER_SIZE];
  put_le32(t, TCT_SKIP_TRAILER);
  put_le32(t + 4, 16);
  uint64_t at = w->frame_ends[w->nchunks - 1];
  for (int i = 0; i < 8; i++)
    t[8 + i] = (uint8_t)(at >> (8 * i));
  memcpy(t + 16, tct_trailer_tag, 8);
  int rc = 0;
  if (fwrite(z, 1, 8 + zn, w->f) != 8 + zn ||
      fwrite(t, 1, sizeof t, w->f) != sizeof t) {
    tc_error_set(err, "tct: %s: write failed: %s", w->path, strerror(errno));
    rc = -1;
  }
  free(z);
  w->len = 0;
  return rc;
}

/* A part's trailer: the byte length of its frames (u64 LE), then this. */
static const char tct_part_tag[8] = {'T', 'C', 'T', 'P', 'A', 'R', 'T', '1'};

/* A part of a parallel recording ends with what the footer needs of it
 * (tc_tct_join reads it): its summary, map log, chunks and frame ends,
 * uncompressed, then the frames' length and tct_part_tag. */
static int write_part_meta(tc_writer *w, tc_error *err) {
  w->len = 0;
  put_sum_and_maplog(w);
  put_uv(w, w->nchunks);
  for (size_t i = 0; i < w->nchunks; i++) {
    put_uv(w, w->chunks[i].insn);
    put_uv(w, w->chunks[i].tid);
    put_uv(w, w->chunks[i].offset);
    put_uv(w, w->chunks[i].nmaps);
  }
  put_uv(w, w->nframe_ends);
  for (size_t i = 0; i < w->nframe_ends; i++)
    put_uv(w, w->frame_ends[i]);
  uint8_t t[16];
  for (int i = 0; i < 8; i++)
    t[i] = (uint8_t)(w->written >> (8 * i));
  memcpy(t + 8, tct_part_tag, 8);
  put_bytes(w, t, sizeof t);
  if (w->failed) {
    tc_error_set(err, "tct: out of memory");
    return -1;
  }
  if (fwrite(w->buf, 1, w->len, w->f) != w->len) {
    tc_error_set(err, "tct: %s: write failed: %s", w->path, strerror(errno));
    return -1;
  }
  w->len = 0;
  return 0;
}

static int tct_close_writer(tc_writer *w, tc_error *err) {
  /* a part that never started its chunk has no frame to end; a chunk
   * that the recording's end is not in (a part's last) has its memory
   * summary, as in the whole recording, where another chunk follows it */
  int rc = 0;
  /* the chunk that holds the end has its filters, unless it is the
   * trace's only one (runs there use the index) */
  bool last_sets = w->nchunks && w->chunks[w->nchunks - 1].insn > 0;
  if (!w->part_first && w->max_insns && (!w->sum.have_exit || last_sets) &&
      md_make_tail(w, !w->sum.have_exit) < 0) {
    tc_error_set(err, "tct: out of memory");
    rc = -1;
  }
  if (rc == 0)
    rc = w->part_first ? worker_wait(w, err) : w_flush(w, true, err);
  if (rc == 0 && !w->failed)
    rc = w->part ? write_part_meta(w, err) : write_footer(w, err);
  worker_stop(w);
  if (fclose(w->f) != 0 && rc == 0) {
    tc_error_set(err, "tct: %s: %s", w->path, strerror(errno));
    rc = -1;
  }
  writer_free(w);
  return rc;
}

/* ================================================================ reader */

struct tc_reader {
  FILE *f;
  char *path;
  /* The last SYSCALL event said more parts follow (tc_syscall_event). */
  bool sys_more;
  uint64_t sys_more_index;
  uint32_t sys_part;
  ZSTD_DCtx *zd;
  uint8_t *zin;
  size_t zin_cap;
  ZSTD_inBuffer in;
  bool eof, frame_done;
  /* Decompressed bytes: window [pos, len). */
  uint8_t *buf;
  size_t pos, len, cap;
  uint64_t consumed; /* decompressed offset of buf[0] */

  tc_trace_info info;
  char *exe_path;
  char **argv;
  uint8_t *exe_data;
  uint8_t *state_a, *state_b; /* current and scratch states */
  uint8_t *initial;
  uint16_t regs[512];
  /* Version 3: registers of the INSN being read that take the value of
   * one of its reads (the escape), set when get_mem reaches it. */
  struct {
    uint16_t reg;
    bool sext;
    uint64_t k;
  } load[512];
  int nload;
  tc_mem_access *mem;
  size_t memcap;
  uint8_t *blob; /* memory bytes of the current event */
  size_t blobcap;
  char name[TCT_MAX_STR + 1];
  char msg[TCT_MAX_STR + 1];
  bool saw_exit;
  uint64_t next_index;
  uint32_t tid;
  int version;         /* 1 to 4 (TCTRACE1 ... TCTRACE4) */
  uint64_t mem_prev;   /* version 2: address of the last access read */
  icache_slot *icache; /* version 2 */
  mvc_page *mvc;       /* version 2 */

  /* Random access. header_len: decompressed bytes of the header record
   * (a restart skips them). The index comes from the footer (version 4,
   * a plain file), loaded at the first seek or summary. */
  uint64_t header_len;
  bool index_tried, has_index;
  tct_sum isum;
  tct_maplog *ilog;
  size_t nilog;
  tct_chunk *ichunks;
  size_t nichunks;
  uint64_t ifooter;      /* the footer's offset */
  tct_md *imd;           /* per chunk: its memory summary (read when asked) */
  tct_mf *imf;           /* per chunk: its filters (read when asked) */
  uint8_t *imapdata;     /* per map log entry: 0 not known, 1 no data, 2 data */
  tct_mdc imdc[TCT_MDC]; /* maps' data pages read (md_map_data) */
  size_t imdc_next;
  /* After a seek: the maps before its point (replayed, without data),
   * then a KEYFRAME (seek_state), then the INSN it stopped at. */
  tct_maplog *replay;
  size_t nreplay, replay_cap, replay_i;
  int seek_phase; /* 0 none, 1 maps, 2 keyframe, 3 the INSN */
  tc_event pending;
  uint8_t *seek_state;
};

/* Makes at least n decompressed bytes available; 0 ok, 1 clean EOF at a
 * record boundary (n bytes requested, none available), -1 error. */
static int r_fill(tc_reader *r, size_t n, tc_error *err) {
  while (r->len - r->pos < n) {
    if (r->pos > 0) {
      memmove(r->buf, r->buf + r->pos, r->len - r->pos);
      r->consumed += r->pos;
      r->len -= r->pos;
      r->pos = 0;
    }
    if (r->cap < n || r->cap - r->len < ZSTD_DStreamOutSize()) {
      size_t cap = r->cap ? r->cap * 2 : 1 << 17;
      while (cap < n + ZSTD_DStreamOutSize())
        cap *= 2;
      uint8_t *nb = realloc(r->buf, cap);
      if (!nb) {
        tc_error_set(err, "tct: out of memory");
        return -1;
      }
      r->buf = nb;
      r->cap = cap;
    }
    if (r->in.pos == r->in.size) {
      if (r->eof) {
        if (r->len == 0)
          return 1;
        tc_error_set(err, "tct: %s: truncated (record cut at byte %llu)",
                     r->path, (unsigned long long)(r->consumed + r->len));
        return -1;
      }
      size_t got = fread(r->zin, 1, r->zin_cap, r->f);
      if (got == 0) {
        if (ferror(r->f)) {
          tc_error_set(err, "tct: %s: read error: %s", r->path,
                       tc_infile_strerror(errno));
          return -1;
        }
        r->eof = true;
        if (!r->frame_done && r->len == 0) {
          tc_error_set(err,
                       "tct: %s: truncated (compressed stream ends "
                       "early)",
                       r->path);
          return -1;
        }
        continue;
      }
      r->in = (ZSTD_inBuffer){r->zin, got, 0};
    }
    ZSTD_outBuffer out = {r->buf + r->len, r->cap - r->len, 0};
    size_t ret = ZSTD_decompressStream(r->zd, &out, &r->in);
    if (ZSTD_isError(ret)) {
      tc_error_set(err, "tct: %s: corrupt data: %s", r->path,
                   ZSTD_getErrorName(ret));
      return -1;
    }
    r->frame_done = ret == 0;
    r->len += out.pos;
  }
  return 0;
}

static int get_u8(tc_reader *r, uint8_t *v, tc_error *err) {
  if (r_fill(r, 1, err) != 0) {
    if (!err->msg[0])
      tc_error_set(err, "tct: %s: truncated", r->path);
    return -1;
  }
  *v = r->buf[r->pos++];
  return 0;
}

static int get_uv(tc_reader *r, uint64_t *v, tc_error *err) {
  uint64_t x = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    uint8_t b;
    if (get_u8(r, &b, err) < 0)
      return -1;
    x |= (uint64_t)(b & 0x7f) << shift;
    if (!(b & 0x80)) {
      *v = x;
      return 0;
    }
  }
  tc_error_set(err, "tct: %s: corrupt varint", r->path);
  return -1;
}

static int get_sv(tc_reader *r, int64_t *v, tc_error *err) {
  uint64_t u;
  if (get_uv(r, &u, err) < 0)
    return -1;
  *v = (int64_t)((u >> 1) ^ (~(u & 1) + 1));
  return 0;
}

static int get_bytes(tc_reader *r, void *p, size_t n, tc_error *err) {
  if (n == 0)
    return 0;
  if (r_fill(r, n, err) != 0) {
    if (!err->msg[0])
      tc_error_set(err, "tct: %s: truncated", r->path);
    return -1;
  }
  memcpy(p, r->buf + r->pos, n);
  r->pos += n;
  return 0;
}

/* n bytes into *buf (capacity *cap, grown as needed), in pieces of 64 KiB,
 * the buffer growing only as bytes really arrive: a corrupt size in a
 * small file must not allocate gigabytes before the data runs out (a
 * 334-byte file claiming a 1 GiB program cost 3 GiB, fuzz_tctraw). */
static int get_bytes_grown(tc_reader *r, uint8_t **buf, size_t *cap, size_t n,
                           tc_error *err) {
  for (size_t got = 0, piece; got < n; got += piece) {
    piece = n - got < (1u << 16) ? n - got : (1u << 16);
    if (got + piece > *cap) {
      size_t want = *cap * 2 > got + piece ? *cap * 2 : got + piece;
      if (want > n)
        want = n;
      uint8_t *nb = realloc(*buf, want);
      if (!nb) {
        tc_error_set(err, "tct: out of memory");
        return -1;
      }
      *buf = nb;
      *cap = want;
    }
    if (get_bytes(r, *buf + got, piece, err) < 0)
      return -1;
  }
  return 0;
}

static int get_str(tc_reader *r, char *out, tc_error *err) {
  uint64_t n;
  if (get_uv(r, &n, err) < 0)
    return -1;
  if (n > TCT_MAX_STR) {
    tc_error_set(err, "tct: %s: corrupt string length %llu", r->path,
                 (unsigned long long)n);
    return -1;
  }
  if (get_bytes(r, out, (size_t)n, err) < 0)
    return -1;
  out[n] = 0;
  return 0;
}

static char *get_strdup(tc_reader *r, tc_error *err) {
  if (get_str(r, r->name, err) < 0)
    return NULL;
  char *s = strdup(r->name);
  if (!s)
    tc_error_set(err, "tct: out of memory");
  return s;
}

static int tct_probe(const uint8_t *head, size_t n, const char *path) {
  (void)path;
  return n >= 8 && (memcmp(head, tct_magic, 8) == 0 ||
                    memcmp(head, tct_magic_v3, 8) == 0 ||
                    memcmp(head, tct_magic_v2, 8) == 0 ||
                    memcmp(head, tct_magic_v1, 8) == 0);
}

static void tct_close_reader(tc_reader *r) {
  if (!r)
    return;
  if (r->f)
    fclose(r->f);
  ZSTD_freeDCtx(r->zd);
  free(r->zin);
  free(r->buf);
  free(r->path);
  free(r->exe_path);
  if (r->argv)
    for (int i = 0; i < r->info.argc; i++)
      free(r->argv[i]);
  free(r->argv);
  free(r->exe_data);
  free(r->state_a);
  free(r->state_b);
  free(r->initial);
  free(r->mem);
  free(r->blob);
  free(r->icache);
  mvc_free(r->mvc);
  free(r->isum.exit_message);
  maplog_free(r->ilog, r->nilog);
  for (size_t i = 0; r->imd && i < r->nichunks; i++) {
    free(r->imd[i].body);
    free(r->imd[i].pn);
    free(r->imd[i].at);
  }
  free(r->imd);
  for (size_t i = 0; r->imf && i < r->nichunks; i++) {
    free(r->imf[i].pcs);
    free(r->imf[i].runs[0]);
    free(r->imf[i].runs[1]);
  }
  free(r->imf);
  free(r->imapdata);
  for (size_t i = 0; i < TCT_MDC; i++)
    free(r->imdc[i].data);
  free(r->ichunks);
  maplog_free(r->replay, r->nreplay);
  free(r->seek_state);
  free(r);
}

static int read_header(tc_reader *r, tc_error *err) {
  uint8_t kind;
  uint64_t v[7];
  if (get_u8(r, &kind, err) < 0)
    return -1;
  if (kind != REC_HEADER) {
    tc_error_set(err, "tct: %s: missing header record", r->path);
    return -1;
  }
  for (int i = 0; i < 6; i++)
    if (get_uv(r, &v[i], err) < 0)
      return -1;
  const tc_arch *a = tc_arch_by_wire_id(v[0]);
  if (!a) {
    tc_error_set(err, "tct: %s: unknown arch id %llu", r->path,
                 (unsigned long long)v[0]);
    return -1;
  }
  r->info.arch = a;
  r->info.entry = v[1];
  r->info.load_base = v[2];
  r->info.pid = (uint32_t)v[3];
  r->info.seed = v[4];
  r->info.keyframe_interval = (uint32_t)v[5];
  uint8_t hm;
  if (get_u8(r, &hm, err) < 0)
    return -1;
  r->info.has_memory = hm;
  if (!(r->exe_path = get_strdup(r, err)))
    return -1;
  r->info.exe_path = r->exe_path;
  uint64_t argc;
  if (get_uv(r, &argc, err) < 0)
    return -1;
  if (argc > 65536) {
    tc_error_set(err, "tct: %s: corrupt argc", r->path);
    return -1;
  }
  r->argv = calloc(argc + 1, sizeof *r->argv);
  if (!r->argv) {
    tc_error_set(err, "tct: out of memory");
    return -1;
  }
  for (uint64_t i = 0; i < argc; i++) {
    if (!(r->argv[i] = get_strdup(r, err)))
      return -1;
    r->info.argc = (int)i + 1;
  }
  r->info.argv = (const char *const *)r->argv;
  uint64_t exe_size;
  if (get_uv(r, &exe_size, err) < 0)
    return -1;
  if (exe_size > (1ull << 30)) {
    tc_error_set(err, "tct: %s: corrupt program size", r->path);
    return -1;
  }
  if (exe_size) {
    size_t exe_cap = 0;
    if (get_bytes_grown(r, &r->exe_data, &exe_cap, (size_t)exe_size, err) < 0)
      return -1;
    r->info.exe_data = r->exe_data;
    r->info.exe_size = (size_t)exe_size;
  }
  r->state_a = calloc(1, a->state_size);
  r->state_b = calloc(1, a->state_size);
  r->initial = calloc(1, a->state_size);
  if (!r->state_a || !r->state_b || !r->initial) {
    tc_error_set(err, "tct: out of memory");
    return -1;
  }
  uint8_t has_state;
  if (get_u8(r, &has_state, err) < 0)
    return -1;
  if (has_state) {
    if (get_bytes(r, r->initial, a->state_size, err) < 0)
      return -1;
    memcpy(r->state_a, r->initial, a->state_size);
    r->info.initial_state = r->initial;
  }
  return 0;
}

static tc_reader *tct_open_reader(const char *path, tc_error *err) {
  tc_error local;
  if (!err)
    err = &local;
  tc_reader *r = calloc(1, sizeof *r);
  if (!r) {
    tc_error_set(err, "out of memory");
    return NULL;
  }
  err->msg[0] = 0;
  r->path = strdup(path);
  r->f = tc_infile_open(path, TC_INFILE_STREAM, "tct", err);
  if (!r->f) {
    tct_close_reader(r);
    return NULL;
  }
  char magic[8];
  bool magic_ok = fread(magic, 1, 8, r->f) == 8;
  r->version = !magic_ok                             ? 0
               : memcmp(magic, tct_magic, 8) == 0    ? 4
               : memcmp(magic, tct_magic_v3, 8) == 0 ? 3
               : memcmp(magic, tct_magic_v2, 8) == 0 ? 2
               : memcmp(magic, tct_magic_v1, 8) == 0 ? 1
                                                     : 0;
  if (!r->version) {
    tc_error_set(err, "tct: %s: not a tracecorn trace (bad magic)", path);
    tct_close_reader(r);
    return NULL;
  }
  r->zd = ZSTD_createDCtx();
  r->zin_cap = ZSTD_DStreamInSize();
  r->zin = malloc(r->zin_cap);
  r->icache = calloc(TCT_ICACHE_SLOTS, sizeof *r->icache);
  r->mvc = mvc_new();
  if (!r->zd || !r->zin || !r->path || !r->icache || !r->mvc ||
      read_header(r, err) < 0) {
    if (!err->msg[0])
      tc_error_set(err, "out of memory");
    tct_close_reader(r);
    return NULL;
  }
  r->header_len = r->consumed + r->pos;
  return r;
}

static const tc_trace_info *tct_reader_info(tc_reader *r) { return &r->info; }

/* tct is tracecorn's own format; its files do not store the version. */
static const char *tct_reader_writer(tc_reader *r) {
  (void)r;
  return "tracecorn";
}

/* Version 3's escape t for register reg of the INSN being read: a copy
 * of another register now, or the value of a read (set by get_mem when it
 * reaches that read). */
static int read_escape(tc_reader *r, int reg, uint64_t t, tc_error *err) {
  const tc_arch *a = r->info.arch;
  unsigned rsize = a->regs[reg].size;
  if (t & 1) { /* a copy of register t >> 1 as it is now */
    uint64_t j = t >> 1;
    bool ok = j < (uint64_t)a->nregs && j != (uint64_t)reg;
    for (int q = 0; q < r->nload && ok; q++)
      ok = r->load[q].reg != j;
    unsigned jsize = ok ? a->regs[j].size : 0;
    if (!ok || (rsize <= 8 ? jsize < rsize || jsize > 8 : jsize != rsize)) {
      tc_error_set(err, "tct: %s: corrupt register copy", r->path);
      return -1;
    }
    uint8_t *slot = r->state_b + a->regs[reg].offset;
    const uint8_t *src = r->state_b + a->regs[j].offset;
    if (rsize <= 8)
      reg_store(slot, rsize, reg_load(src, jsize));
    else
      memcpy(slot, src, rsize);
    return 0;
  }
  if (rsize > 8 && ((t >> 1) & 1)) {
    tc_error_set(err, "tct: %s: corrupt register (sign-extended vector)",
                 r->path);
    return -1;
  }
  r->load[r->nload].reg = (uint16_t)reg;
  r->load[r->nload].sext = (t >> 1) & 1;
  r->load[r->nload++].k = t >> 2;
  return 0;
}

/* Version 3: the registers of this INSN given as the value of its access
 * k (just read: kind, size, bytes) get it now, before later accesses may
 * name them. */
static int load_regs(tc_reader *r, uint64_t k, uint8_t kind, uint64_t size,
                     const uint8_t *bytes, tc_error *err) {
  const tc_arch *a = r->info.arch;
  for (int j = 0; j < r->nload; j++) {
    if (r->load[j].k != k)
      continue;
    unsigned rsize = a->regs[r->load[j].reg].size;
    if (kind != TC_MEM_READ || size > rsize ||
        (rsize <= 8 ? r->load[j].sext && size == rsize : a->big_endian)) {
      tc_error_set(err, "tct: %s: corrupt register (from access %llu)", r->path,
                   (unsigned long long)k);
      return -1;
    }
    uint8_t *slot = r->state_b + a->regs[r->load[j].reg].offset;
    if (rsize > 8) { /* a vector: the bytes, zero-extended */
      memset(slot, 0, rsize);
      memcpy(slot, bytes, (size_t)size);
      r->load[j--] = r->load[--r->nload];
      continue;
    }
    uint64_t v = mem_value(bytes, (unsigned)size, a->big_endian);
    if (r->load[j].sext && (v >> (8 * size - 1)) & 1)
      v |= ~0ull << (8 * size);
    reg_store(slot, rsize, v);
    r->load[j--] = r->load[--r->nload];
  }
  return 0;
}

/* after_state: the INSN's (MEM_AFTER_REG), NULL for other records. */
static int get_mem(tc_reader *r, uint32_t *count, const tc_mem_access **out,
                   const uint8_t *after_state, tc_error *err) {
  uint64_t n;
  if (get_uv(r, &n, err) < 0)
    return -1;
  if (n > (1u << 24)) {
    tc_error_set(err, "tct: %s: corrupt access count", r->path);
    return -1;
  }
  if (n > r->memcap) {
    tc_mem_access *nm = realloc(r->mem, n * sizeof *nm);
    if (!nm) {
      tc_error_set(err, "tct: out of memory");
      return -1;
    }
    r->mem = nm;
    r->memcap = n;
  }
  /* First pass: read into a growable blob, remembering offsets. */
  size_t used = 0;
  uint64_t prev = r->version >= 2 ? r->mem_prev : 0;
  size_t *offs = n ? malloc(n * sizeof *offs) : NULL;
  if (n && !offs) {
    tc_error_set(err, "tct: out of memory");
    return -1;
  }
  for (uint64_t i = 0; i < n; i++) {
    uint8_t kind;
    int64_t delta;
    uint64_t size;
    if (get_u8(r, &kind, err) < 0 || get_sv(r, &delta, err) < 0 ||
        get_uv(r, &size, err) < 0)
      goto fail;
    uint8_t how = r->version >= 2 ? kind & (MEM_CACHED | MEM_AFTER_REG) : 0;
    kind = (uint8_t)(kind & ~how);
    if ((kind != TC_MEM_READ && kind != TC_MEM_WRITE) || size == 0 ||
        size > (1u << 24) ||
        ((how & MEM_AFTER_REG) &&
         (kind != TC_MEM_WRITE || !after_state || size > 8))) {
      tc_error_set(err, "tct: %s: corrupt memory access", r->path);
      goto fail;
    }
    size_t need = used + 2 * (size_t)size;
    if (need > r->blobcap) {
      size_t cap = r->blobcap ? r->blobcap : 4096;
      while (cap < need)
        cap *= 2;
      uint8_t *nb = realloc(r->blob, cap);
      if (!nb) {
        tc_error_set(err, "tct: out of memory");
        goto fail;
      }
      r->blob = nb;
      r->blobcap = cap;
    }
    prev += (uint64_t)delta;
    if (how & MEM_CACHED) {
      if (!mvc_fetch(r->mvc, prev, size, r->blob + used)) {
        tc_error_set(err, "tct: %s: corrupt memory access (bytes never given)",
                     r->path);
        goto fail;
      }
    } else if (get_bytes(r, r->blob + used, (size_t)size, err) < 0) {
      goto fail;
    }
    if (how & MEM_AFTER_REG) {
      uint64_t reg;
      if (get_uv(r, &reg, err) < 0)
        goto fail;
      const tc_arch *a = r->info.arch;
      if (reg >= (uint64_t)a->nregs || a->regs[reg].size < size) {
        tc_error_set(err, "tct: %s: corrupt memory access register", r->path);
        goto fail;
      }
      memcpy(r->blob + used + size, after_state + a->regs[reg].offset,
             (size_t)size);
    } else if (kind == TC_MEM_WRITE) {
      if (get_bytes(r, r->blob + used + size, (size_t)size, err) < 0)
        goto fail;
    } else {
      memcpy(r->blob + used + size, r->blob + used, (size_t)size);
    }
    if (r->version >= 2)
      mvc_store(r->mvc, prev, size, r->blob + used + size);
    if (r->nload && after_state &&
        load_regs(r, i, kind, size, r->blob + used + size, err) < 0)
      goto fail;
    r->mem[i] = (tc_mem_access){prev, (uint32_t)size, kind, NULL, NULL};
    offs[i] = used;
    used = need;
  }
  for (uint64_t i = 0; i < n; i++) {
    r->mem[i].before = r->blob + offs[i];
    r->mem[i].after = r->blob + offs[i] + r->mem[i].size;
  }
  free(offs);
  r->mem_prev = prev;
  *count = (uint32_t)n;
  *out = n ? r->mem : NULL;
  return 0;
fail:
  free(offs);
  return -1;
}

/* Version 4: a chunk starts; every cache as the writer empties it. */
static void chunk_reset(tc_reader *r, uint64_t idx, uint32_t tid) {
  memset(r->icache, 0, TCT_ICACHE_SLOTS * sizeof *r->icache);
  mvc_reset(r->mvc);
  r->mem_prev = 0;
  r->next_index = idx;
  r->tid = tid;
  r->sys_more = false;
  memcpy(r->state_a, r->initial, r->info.arch->state_size);
}

static int read_event(tc_reader *r, tc_event *ev, tc_error *err) {
  tc_error local;
  if (!err)
    err = &local;
  const tc_arch *a = r->info.arch;
  err->msg[0] = 0;
  for (;;) {
    int f = r_fill(r, 1, err);
    if (f == 1) {
      if (!r->saw_exit) {
        tc_error_set(err,
                     "tct: %s: truncated (no exit record; the "
                     "recording was cut short)",
                     r->path);
        return -1;
      }
      return 0;
    }
    if (f < 0)
      return -1;
    uint8_t kind = r->buf[r->pos++];
    uint8_t compact = 0; /* a version 2 compact INSN's kind byte */
    if (r->version >= 2 && (kind & 0xe0) == REC_INSN_COMPACT) {
      compact = kind;
      kind = REC_INSN;
    }
    memset(ev, 0, sizeof *ev);
    switch (kind) {
    case REC_STATE:
      if (get_bytes(r, r->state_a, a->state_size, err) < 0)
        return -1;
      continue;
    case REC_CHUNK: {
      uint64_t idx, tid;
      if (r->version < 4) {
        tc_error_set(err, "tct: %s: corrupt record type 0x%02x at byte %llu",
                     r->path, kind,
                     (unsigned long long)(r->consumed + r->pos - 1));
        return -1;
      }
      if (get_uv(r, &idx, err) < 0 || get_uv(r, &tid, err) < 0)
        return -1;
      chunk_reset(r, idx, (uint32_t)tid);
      continue;
    }
    case REC_INSN: {
      tc_insn_event *e = &ev->u.insn;
      uint64_t idx = r->next_index, pc = tc_state_get(a, r->state_a, a->pc_reg),
               tid = r->tid, nregs;
      uint8_t size, flags = compact & 0x0f;
      if (!compact && get_u8(r, &flags, err) < 0)
        return -1;
      uint8_t known =
          INSN_INDEX | INSN_PC | INSN_TID | (r->version >= 2 ? INSN_BYTES : 0);
      if (flags & ~known) {
        tc_error_set(err, "tct: %s: corrupt instruction flags 0x%x", r->path,
                     flags);
        return -1;
      }
      if (((flags & INSN_INDEX) && get_uv(r, &idx, err) < 0) ||
          ((flags & INSN_PC) && get_uv(r, &pc, err) < 0) ||
          ((flags & INSN_TID) && get_uv(r, &tid, err) < 0))
        return -1;
      r->next_index = idx + 1;
      r->tid = (uint32_t)tid;
      icache_slot *ic = &r->icache[icache_index(pc)];
      if (r->version < 2 || (flags & INSN_BYTES)) {
        if (get_u8(r, &size, err) < 0)
          return -1;
        if (size > 16) {
          tc_error_set(err, "tct: %s: corrupt instruction size %u", r->path,
                       size);
          return -1;
        }
        if (get_bytes(r, e->bytes, size, err) < 0)
          return -1;
        ic->valid = 1;
        ic->pc = pc;
        ic->size = size;
        memcpy(ic->bytes, e->bytes, 16);
      } else if (ic->valid && ic->pc == pc) {
        size = ic->size;
        memcpy(e->bytes, ic->bytes, 16);
      } else {
        tc_error_set(err,
                     "tct: %s: corrupt instruction (bytes of 0x%llx "
                     "never given)",
                     r->path, (unsigned long long)pc);
        return -1;
      }
      if (get_uv(r, &nregs, err) < 0)
        return -1;
      if (nregs > a->nregs) {
        tc_error_set(err, "tct: %s: corrupt register count", r->path);
        return -1;
      }
      memcpy(r->state_b, r->state_a, a->state_size);
      r->nload = 0;
      int64_t prev = -1;
      for (uint64_t i = 0; i < nregs; i++) {
        uint64_t d, mode = 0;
        if (get_uv(r, &d, err) < 0)
          return -1;
        if (r->version >= 2) {
          mode = d & 1;
          d >>= 1;
        }
        int64_t reg = prev + 1 + (int64_t)d;
        if (d >= a->nregs || reg >= a->nregs ||
            (mode && a->regs[reg].size > 8 && r->version < 3)) {
          tc_error_set(err, "tct: %s: corrupt register index", r->path);
          return -1;
        }
        uint8_t *slot = r->state_b + a->regs[reg].offset;
        unsigned rsize = a->regs[reg].size;
        uint64_t x = 0;
        if (r->version >= 2 && (rsize <= 8 || mode) && get_uv(r, &x, err) < 0)
          return -1;
        if (rsize > 8 && mode) { /* version 3's escape, x is t */
          if (read_escape(r, (int)reg, x, err) < 0)
            return -1;
        } else if (r->version >= 3 && rsize <= 8 && !mode && !x) {
          /* the escape: t follows */
          uint64_t t;
          if (get_uv(r, &t, err) < 0 || read_escape(r, (int)reg, t, err) < 0)
            return -1;
        } else if (r->version >= 2 && rsize <= 8) {
          uint64_t old = reg_load(slot, rsize);
          uint64_t d2 = (x >> 1) ^ (~(x & 1) + 1);
          reg_store(slot, rsize, mode ? old + d2 : old ^ x);
        } else if (get_bytes(r, slot, rsize, err) < 0) {
          return -1;
        }
        r->regs[i] = (uint16_t)reg;
        prev = reg;
      }
      ev->kind = TC_EV_INSN;
      e->index = idx;
      e->pc = pc;
      e->tid = (uint32_t)tid;
      e->size = size;
      e->nregs = (uint16_t)nregs;
      e->regs = r->regs;
      e->state_before = r->state_a;
      e->state_after = r->state_b;
      if (!(compact & INSN_NOMEM) &&
          get_mem(r, &e->nmem, &e->mem, r->state_b, err) < 0)
        return -1;
      if (r->nload) { /* get_mem set them all, or one names no read */
        tc_error_set(err, "tct: %s: corrupt register (no such read)", r->path);
        return -1;
      }
      /* The next instruction starts from this one's after-state. */
      uint8_t *t = r->state_a;
      r->state_a = r->state_b;
      r->state_b = t;
      e->state_before = r->state_b;
      e->state_after = r->state_a;
      return 1;
    }
    case REC_SYSCALL: {
      tc_syscall_event *s = &ev->u.sys;
      uint64_t v[3];
      for (int i = 0; i < 3; i++)
        if (get_uv(r, &v[i], err) < 0)
          return -1;
      for (int i = 0; i < 6; i++)
        if (get_uv(r, &s->args[i], err) < 0)
          return -1;
      uint8_t unk;
      if (get_sv(r, &s->ret, err) < 0 || get_u8(r, &unk, err) < 0 ||
          get_mem(r, &s->nmem, &s->mem, NULL, err) < 0)
        return -1;
      ev->kind = TC_EV_SYSCALL;
      s->insn_index = v[0];
      s->tid = (uint32_t)v[1];
      s->nr = (uint32_t)v[2];
      s->compat = (unk & 4) != 0;
      s->name =
          tc_arch_syscall_name(s->compat ? tc_arch_compat_table(a) : a, s->nr);
      s->unknown = unk & 1;
      /* Parts of one syscall: the same call, numbered from 0. */
      s->part = r->sys_more && r->sys_more_index == s->insn_index
                    ? r->sys_part + 1
                    : 0;
      s->more = (unk & 2) != 0;
      r->sys_more = s->more;
      r->sys_more_index = s->insn_index;
      r->sys_part = s->part;
      return 1;
    }
    case REC_MAP:
    case REC_UNMAP:
    case REC_PROTECT: {
      tc_map_event *m = &ev->u.map;
      uint64_t prot;
      if (get_uv(r, &m->addr, err) < 0 || get_uv(r, &m->size, err) < 0 ||
          get_uv(r, &prot, err) < 0)
        return -1;
      m->prot = (uint32_t)prot;
      m->name = "";
      ev->kind = kind == REC_MAP     ? TC_EV_MAP
                 : kind == REC_UNMAP ? TC_EV_UNMAP
                                     : TC_EV_PROTECT;
      if (kind == REC_MAP) {
        uint8_t has;
        if (get_str(r, r->name, err) < 0 ||
            get_uv(r, &m->file_offset, err) < 0 || get_u8(r, &has, err) < 0)
          return -1;
        m->name = r->name;
        if (has) {
          if (m->size > TCT_MAX_BLOB) {
            tc_error_set(err, "tct: %s: corrupt map size", r->path);
            return -1;
          }
          if (get_bytes_grown(r, &r->blob, &r->blobcap, (size_t)m->size, err) <
              0)
            return -1;
          m->data = r->blob;
        }
      }
      return 1;
    }
    case REC_KEYFRAME: {
      uint64_t idx, tid;
      if (get_uv(r, &idx, err) < 0 || get_uv(r, &tid, err) < 0 ||
          get_bytes(r, r->state_a, a->state_size, err) < 0)
        return -1;
      ev->kind = TC_EV_KEYFRAME;
      ev->u.key = (tc_keyframe_event){idx, (uint32_t)tid, r->state_a};
      return 1;
    }
    case REC_FAULT: {
      uint64_t v[5];
      for (int i = 0; i < 5; i++)
        if (get_uv(r, &v[i], err) < 0)
          return -1;
      ev->kind = TC_EV_FAULT;
      ev->u.fault =
          (tc_fault_event){v[0], v[1], v[2], (tc_fault_kind)v[3], (int)v[4]};
      return 1;
    }
    case REC_SIGNAL: {
      tc_signal_event *g = &ev->u.sig;
      uint64_t idx, tid, sig, pid, uid;
      int64_t code;
      if (get_uv(r, &idx, err) < 0 || get_uv(r, &tid, err) < 0 ||
          get_uv(r, &sig, err) < 0 || get_sv(r, &code, err) < 0 ||
          get_uv(r, &g->addr, err) < 0 || get_uv(r, &pid, err) < 0 ||
          get_uv(r, &uid, err) < 0 || get_uv(r, &g->handler, err) < 0 ||
          get_uv(r, &g->frame, err) < 0 ||
          get_mem(r, &g->nmem, &g->mem, NULL, err) < 0)
        return -1;
      if (sig < 1 || sig > 64) {
        tc_error_set(err, "tct: %s: corrupt signal record", r->path);
        return -1;
      }
      ev->kind = TC_EV_SIGNAL;
      g->insn_index = idx;
      g->tid = (uint32_t)tid;
      g->signal = (int)sig;
      g->code = (int)code;
      g->pid = (uint32_t)pid;
      g->uid = (uint32_t)uid;
      return 1;
    }
    case REC_EXIT: {
      uint64_t reason, sig, count;
      int64_t status;
      if (get_uv(r, &reason, err) < 0 || get_sv(r, &status, err) < 0 ||
          get_uv(r, &sig, err) < 0 || get_uv(r, &count, err) < 0 ||
          get_str(r, r->msg, err) < 0)
        return -1;
      ev->kind = TC_EV_EXIT;
      ev->u.exit = (tc_exit_event){(tc_exit_reason)reason, (int)status,
                                   (int)sig, count, r->msg[0] ? r->msg : NULL};
      r->saw_exit = true;
      return 1;
    }
    case REC_TURN: {
      uint64_t tid;
      if (get_uv(r, &ev->u.turn.turn, err) < 0 ||
          get_uv(r, &ev->u.turn.insn_index, err) < 0 ||
          get_uv(r, &tid, err) < 0)
        return -1;
      ev->kind = TC_EV_TURN;
      ev->u.turn.tid = (uint32_t)tid;
      return 1;
    }
    default:
      tc_error_set(err, "tct: %s: corrupt record type 0x%02x at byte %llu",
                   r->path, kind,
                   (unsigned long long)(r->consumed + r->pos - 1));
      return -1;
    }
  }
}

/* ============================================================ random access */

/* The footer's bytes, read with bounds: 0 or -1 (corrupt). */
typedef struct fcur {
  const uint8_t *p, *end;
} fcur;

static int f_uv(fcur *c, uint64_t *v) {
  uint64_t x = 0;
  for (int shift = 0; shift < 64 && c->p < c->end; shift += 7) {
    uint8_t b = *c->p++;
    x |= (uint64_t)(b & 0x7f) << shift;
    if (!(b & 0x80)) {
      *v = x;
      return 0;
    }
  }
  return -1;
}

static int f_sv(fcur *c, int64_t *v) {
  uint64_t u;
  if (f_uv(c, &u) < 0)
    return -1;
  *v = (int64_t)((u >> 1) ^ (~(u & 1) + 1));
  return 0;
}

static int f_str(fcur *c, char **out) {
  uint64_t n;
  if (f_uv(c, &n) < 0 || n > TCT_MAX_STR || n > (uint64_t)(c->end - c->p))
    return -1;
  *out = strndup((const char *)c->p, (size_t)n);
  c->p += n;
  return *out ? 0 : -1;
}

static uint64_t le_get(const uint8_t *p, int n) {
  uint64_t v = 0;
  for (int i = n - 1; i >= 0; i--)
    v = v << 8 | p[i];
  return v;
}

/* Parses the footer's body into the reader's index; -1 if corrupt. */
static int parse_footer(tc_reader *r, const uint8_t *body, size_t n,
                        uint64_t footer_off) {
  fcur c = {body, body + n};
  uint64_t v[8], have_exit;
  int64_t status;
  tct_sum *s = &r->isum;
  for (int i = 0; i < 8; i++)
    if (f_uv(&c, &v[i]) < 0)
      return -1;
  if (v[0] != 1 || c.p >= c.end)
    return -1;
  s->insns = v[1], s->syscalls = v[2], s->maps = v[3], s->faults = v[4];
  s->keyframes = v[5], s->first_pc = v[6], s->last_pc = v[7];
  have_exit = *c.p++;
  if (have_exit > 1 || f_sv(&c, &status) < 0 || f_str(&c, &s->exit_message) < 0)
    return -1;
  s->have_exit = (int)have_exit;
  s->exit_status = (int)status;
  uint64_t nlog, nch;
  /* every entry takes 4 bytes or more: a count is bounded by the body */
  if (f_uv(&c, &nlog) < 0 || nlog > (uint64_t)(c.end - c.p) / 4)
    return -1;
  r->ilog = nlog ? calloc((size_t)nlog, sizeof *r->ilog) : NULL;
  if (nlog && !r->ilog)
    return -1;
  for (uint64_t i = 0; i < nlog; i++) {
    tct_maplog *m = &r->ilog[i];
    uint64_t prot;
    if (c.p >= c.end)
      return -1;
    m->kind = *c.p++;
    if ((m->kind != REC_MAP && m->kind != REC_UNMAP &&
         m->kind != REC_PROTECT) ||
        f_uv(&c, &m->addr) < 0 || f_uv(&c, &m->size) < 0 || f_uv(&c, &prot) < 0)
      return -1;
    m->prot = (uint32_t)prot;
    r->nilog = (size_t)i + 1; /* freed with the reader from here */
    if (m->kind == REC_MAP &&
        (f_str(&c, &m->name) < 0 || f_uv(&c, &m->file_offset) < 0))
      return -1;
  }
  if (f_uv(&c, &nch) < 0 || nch == 0 || nch > (uint64_t)(c.end - c.p) / 4)
    return -1;
  r->ichunks = calloc((size_t)nch, sizeof *r->ichunks);
  if (!r->ichunks)
    return -1;
  uint64_t insn = 0, off = 0, nmaps = 0;
  for (uint64_t i = 0; i < nch; i++) {
    int64_t d;
    uint64_t tid, doff, dmaps;
    if (f_sv(&c, &d) < 0 || f_uv(&c, &tid) < 0 || f_uv(&c, &doff) < 0 ||
        f_uv(&c, &dmaps) < 0)
      return -1;
    /* instructions do not go back; frames follow each other before the
     * footer; map counts grow to at most the log's */
    if ((i && d < 0) || (i && doff == 0) || doff > footer_off - off ||
        dmaps > nlog - nmaps)
      return -1;
    insn += (uint64_t)d, off += doff, nmaps += dmaps;
    if (off < 8 || off >= footer_off)
      return -1;
    r->ichunks[i] = (tct_chunk){insn, off, nmaps, (uint32_t)tid};
  }
  r->nichunks = (size_t)nch;
  return c.p == c.end ? 0 : -1;
}

/* Loads the footer once, where there is one: a version 4 file read as a
 * plain file (a .zst one is a stream: no footer, readers scan). A footer
 * that fails any check is ignored: the reader scans, as without one. */
static void load_index(tc_reader *r) {
  if (r->index_tried)
    return;
  r->index_tried = true;
  int fd = r->version >= 4 ? fileno(r->f) : -1;
  struct stat st;
  if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
      st.st_size < 8 + 8 + TCT_TRAILER_SIZE)
    return;
  uint64_t size = (uint64_t)st.st_size;
  uint8_t t[TCT_TRAILER_SIZE], h[8];
  if (pread(fd, t, sizeof t, (off_t)(size - sizeof t)) != (ssize_t)sizeof t ||
      le_get(t, 4) != TCT_SKIP_TRAILER || le_get(t + 4, 4) != 16 ||
      memcmp(t + 16, tct_trailer_tag, 8) != 0)
    return;
  uint64_t foff = le_get(t + 8, 8), end = size - sizeof t;
  if (foff < 8 || foff > end - 8 || pread(fd, h, 8, (off_t)foff) != 8 ||
      le_get(h, 4) != TCT_SKIP_FOOTER || le_get(h + 4, 4) != end - foff - 8 ||
      end - foff - 8 > TCT_FOOTER_MAX_Z)
    return;
  size_t zn = (size_t)(end - foff - 8), n = 0, cap = 0;
  uint8_t *z = malloc(zn ? zn : 1), *body = NULL;
  ZSTD_DCtx *dz = ZSTD_createDCtx();
  bool ok = z && dz && pread(fd, z, zn, (off_t)(foff + 8)) == (ssize_t)zn;
  /* decompressed as the bytes come: a footer's claimed size allocates
   * nothing */
  ZSTD_inBuffer in = {z, zn, 0};
  while (ok) {
    if (cap - n < (1u << 16)) {
      size_t nc = cap ? cap * 2 : 1u << 16;
      uint8_t *nb = nc <= TCT_FOOTER_MAX ? realloc(body, nc) : NULL;
      if (!nb) {
        ok = false;
        break;
      }
      body = nb, cap = nc;
    }
    ZSTD_outBuffer out = {body, cap, n};
    size_t rc = ZSTD_decompressStream(dz, &out, &in);
    n = out.pos;
    if (ZSTD_isError(rc))
      ok = false;
    else if (rc == 0)
      break; /* the frame is whole */
    else if (in.pos == in.size && out.pos < out.size)
      ok = false; /* cut short */
  }
  ok = ok && in.pos == in.size && parse_footer(r, body, n, foff) == 0;
  if (!ok) { /* what was parsed goes */
    free(r->isum.exit_message);
    maplog_free(r->ilog, r->nilog);
    free(r->ichunks);
    r->isum = (tct_sum){0};
    r->ilog = NULL, r->nilog = 0, r->ichunks = NULL, r->nichunks = 0;
  }
  r->has_index = ok;
  r->ifooter = foff;
  ZSTD_freeDCtx(dz);
  free(z);
  free(body);
}

/* Reading starts again at file offset off (a version 4 chunk's frame), or
 * (off 0) at the first record after the header. */
static int r_restart(tc_reader *r, uint64_t off, tc_error *err) {
  if (off == 0 && fileno(r->f) < 0) { /* a stream: opened again */
    FILE *f = tc_infile_open(r->path, TC_INFILE_STREAM, "tct", err);
    char magic[8];
    if (!f)
      return -1;
    if (fread(magic, 1, 8, f) != 8) {
      fclose(f);
      tc_error_set(err, "tct: %s: truncated", r->path);
      return -1;
    }
    fclose(r->f);
    r->f = f;
  } else if (fseeko(r->f, (off_t)(off ? off : 8), SEEK_SET) != 0) {
    tc_error_set(err, "tct: %s: cannot seek: %s", r->path, strerror(errno));
    return -1;
  }
  ZSTD_DCtx_reset(r->zd, ZSTD_reset_session_only);
  r->in = (ZSTD_inBuffer){r->zin, 0, 0};
  r->eof = r->frame_done = false;
  r->pos = r->len = 0;
  r->consumed = 0;
  r->saw_exit = false;
  r->nload = 0;
  if (off == 0) {
    for (uint64_t left = r->header_len; left;) {
      size_t k = left < (1u << 16) ? (size_t)left : (1u << 16);
      if (r_fill(r, k, err) != 0) {
        if (!err->msg[0])
          tc_error_set(err, "tct: %s: truncated", r->path);
        return -1;
      }
      r->pos += k;
      left -= k;
    }
    chunk_reset(r, 0, 0);
  }
  return 0;
}

static int replay_push(tc_reader *r, const tct_maplog *m) {
  tct_maplog e = *m;
  if (e.name && !(e.name = strdup(e.name)))
    return -1;
  if (grow_push((void **)&r->replay, &r->nreplay, &r->replay_cap, sizeof e,
                &e) < 0) {
    free(e.name);
    return -1;
  }
  return 0;
}

/* The index's last chunk that starts at or before instruction n (0 when
 * none does): a binary search of the chunk table, which is in order. */
static size_t last_chunk_at(const tc_reader *r, uint64_t n) {
  size_t lo = 0, hi = r->nichunks;
  while (hi - lo > 1) {
    size_t mid = lo + (hi - lo) / 2;
    if (r->ichunks[mid].insn <= n)
      lo = mid;
    else
      hi = mid;
  }
  return lo;
}

/* Positions the reader at instruction n: the chunk that holds it (the
 * footer's index), else the start, then reads on to it; the maps before it
 * are kept to be replayed (format.h). */
static int tct_seek(tc_reader *r, uint64_t n, tc_error *err) {
  tc_error local;
  if (!err)
    err = &local;
  err->msg[0] = 0;
  maplog_free(r->replay, r->nreplay);
  r->replay = NULL;
  r->nreplay = r->replay_cap = r->replay_i = 0;
  r->seek_phase = 0;
  if (!r->seek_state && !(r->seek_state = malloc(r->info.arch->state_size))) {
    tc_error_set(err, "tct: out of memory");
    return -1;
  }
  load_index(r);
  const tct_chunk *ch = NULL;
  if (r->has_index) {
    size_t lo = last_chunk_at(r, n);
    ch = lo ? &r->ichunks[lo] : NULL; /* chunk 0: from the start */
    for (uint64_t i = 0; ch && i < ch->nmaps; i++)
      if (replay_push(r, &r->ilog[i]) < 0) {
        tc_error_set(err, "tct: out of memory");
        return -1;
      }
  }
  if (r_restart(r, ch ? ch->offset : 0, err) < 0)
    return -1;
  if (ch) { /* the frame must start with the chunk the index names */
    uint64_t idx = 0, tid = 0;
    bool ok = r_fill(r, 1, err) == 0 && r->buf[r->pos] == REC_CHUNK;
    if (ok)
      r->pos++;
    if (!ok || get_uv(r, &idx, err) < 0 || get_uv(r, &tid, err) < 0 ||
        idx != ch->insn || tid != ch->tid) {
      tc_error_set(err, "tct: %s: corrupt index (chunk at offset %llu)",
                   r->path, (unsigned long long)ch->offset);
      return -1;
    }
    chunk_reset(r, idx, (uint32_t)tid);
  }
  tc_event ev;
  for (;;) {
    int rc = read_event(r, &ev, err);
    if (rc < 0)
      return -1;
    if (rc == 0 || (ev.kind == TC_EV_INSN && ev.u.insn.index > n)) {
      tc_error_set(err, "tct: %s: no instruction %llu in the trace", r->path,
                   (unsigned long long)n);
      return -1;
    }
    if (ev.kind == TC_EV_INSN && ev.u.insn.index == n) {
      r->pending = ev;
      memcpy(r->seek_state, ev.u.insn.state_before, r->info.arch->state_size);
      r->seek_phase = 1;
      return 0;
    }
    if (ev.kind == TC_EV_MAP || ev.kind == TC_EV_UNMAP ||
        ev.kind == TC_EV_PROTECT) {
      tct_maplog m = {ev.kind == TC_EV_MAP     ? REC_MAP
                      : ev.kind == TC_EV_UNMAP ? REC_UNMAP
                                               : REC_PROTECT,
                      ev.u.map.prot,
                      ev.u.map.addr,
                      ev.u.map.size,
                      ev.u.map.file_offset,
                      ev.kind == TC_EV_MAP ? (char *)ev.u.map.name : NULL};
      if (replay_push(r, &m) < 0) {
        tc_error_set(err, "tct: out of memory");
        return -1;
      }
    }
  }
}

static int tct_next_event(tc_reader *r, tc_event *ev, tc_error *err) {
  if (r->seek_phase == 1 && r->replay_i < r->nreplay) {
    const tct_maplog *m = &r->replay[r->replay_i++];
    memset(ev, 0, sizeof *ev);
    ev->kind = m->kind == REC_MAP     ? TC_EV_MAP
               : m->kind == REC_UNMAP ? TC_EV_UNMAP
                                      : TC_EV_PROTECT;
    ev->u.map =
        (tc_map_event){m->addr,        m->size, m->prot, m->name ? m->name : "",
                       m->file_offset, NULL};
    return 1;
  }
  if (r->seek_phase == 1 || r->seek_phase == 2) {
    memset(ev, 0, sizeof *ev);
    ev->kind = TC_EV_KEYFRAME;
    ev->u.key = (tc_keyframe_event){r->pending.u.insn.index,
                                    r->pending.u.insn.tid, r->seek_state};
    r->seek_phase = 3;
    return 1;
  }
  if (r->seek_phase == 3) {
    *ev = r->pending;
    r->seek_phase = 0;
    return 1;
  }
  return read_event(r, ev, err);
}

/* The footer's summary: 1 filled, 0 no footer (the caller reads the
 * trace). */
static int tct_summary(tc_reader *r, tc_trace_summary *sum, tc_error *err) {
  (void)err;
  load_index(r);
  if (!r->has_index)
    return 0;
  const tct_sum *s = &r->isum;
  sum->insns = s->insns;
  sum->syscalls = s->syscalls;
  sum->maps = s->maps;
  sum->faults = s->faults;
  sum->keyframes = s->keyframes;
  sum->first_pc = s->first_pc;
  sum->last_pc = s->last_pc;
  sum->have_exit = s->have_exit;
  sum->exit_status = s->exit_status;
  snprintf(sum->exit_message, sizeof sum->exit_message, "%s",
           s->exit_message ? s->exit_message : "");
  for (size_t i = 0; i < r->nilog; i++)
    if (r->ilog[i].kind == REC_MAP)
      tc_summary_note_module(sum, r->ilog[i].name);
  return 1;
}

/* ------------------------------------------ chunk memory summaries (read) */

/* Reads chunk k's memory summary (the frame before the next chunk's, or
 * the footer): 0, or -1 where there is none (a file from before them,
 * the last chunk, a chunk with too many pages) or it is corrupt. */
/* The skippable frame (magic, tag) that ends at file offset end and
 * starts at or after lo: its decompressed body (malloc'd, *n bytes) and
 * its start (*at); -1 where there is none or it is corrupt. */
static int tail_frame(tc_reader *r, uint64_t lo, uint64_t end, uint32_t magic,
                      const char tag[4], uint64_t *at_out, uint8_t **body_out,
                      size_t *n_out) {
  int fd = fileno(r->f);
  uint8_t t[8], h[8];
  if (fd < 0 || end < lo + 16 || pread(fd, t, 8, (off_t)(end - 8)) != 8 ||
      memcmp(t + 4, tag, 4) != 0)
    return -1;
  uint64_t s = le_get(t, 4);
  if (s < 8 || s > TCT_MD_MAX_Z || s + 8 > end - lo)
    return -1;
  uint64_t at = end - 8 - s;
  if (pread(fd, h, 8, (off_t)at) != 8 || le_get(h, 4) != magic ||
      le_get(h + 4, 4) != s)
    return -1;
  size_t zn = (size_t)(s - 8);
  uint8_t *z = malloc(zn ? zn : 1);
  if (!z || pread(fd, z, zn, (off_t)(at + 8)) != (ssize_t)zn) {
    free(z);
    return -1;
  }
  unsigned long long n = ZSTD_getFrameContentSize(z, zn);
  uint8_t *body = n <= TCT_FOOTER_MAX ? malloc(n ? (size_t)n : 1) : NULL;
  size_t got = body ? ZSTD_decompress(body, (size_t)n, z, zn) : 0;
  free(z);
  if (!body || ZSTD_isError(got) || got != n) {
    free(body);
    return -1;
  }
  *at_out = at;
  *body_out = body;
  *n_out = got;
  return 0;
}

static int md_load(tc_reader *r, size_t k) {
  tct_md *m = &r->imd[k];
  if (m->state)
    return m->state > 0 ? 0 : -1;
  m->state = -1;
  uint64_t end = k + 1 < r->nichunks ? r->ichunks[k + 1].offset : r->ifooter;
  uint8_t *body;
  size_t got;
  if (tail_frame(r, r->ichunks[k].offset, end, TCT_SKIP_MEM, tct_mem_tag,
                 &m->at_file, &body, &got) < 0)
    return -1;
  fcur c = {body, body + got};
  uint64_t ver, flags, np;
  if (f_uv(&c, &ver) < 0 || ver != 1 || f_uv(&c, &flags) < 0 || flags ||
      f_uv(&c, &np) < 0 || np > (uint64_t)(c.end - c.p) / 2)
    goto bad;
  m->pn = np ? malloc((size_t)np * sizeof *m->pn) : NULL;
  m->at = np ? malloc((size_t)np * sizeof *m->at) : NULL;
  if (np && (!m->pn || !m->at))
    goto bad;
  uint64_t pn = 0;
  for (uint64_t i = 0; i < np; i++) {
    uint64_t d, runs;
    if (f_uv(&c, &d) < 0 || (i && d == 0) || pn + d < pn)
      goto bad;
    pn += d;
    m->pn[i] = pn;
    m->at[i] = c.p;
    if (f_uv(&c, &runs) < 0 || runs > 2048)
      goto bad;
    uint64_t off = 0;
    for (uint64_t k2 = 0; k2 < runs; k2++) { /* checked once, here */
      uint64_t gap, len;
      if (f_uv(&c, &gap) < 0 || f_uv(&c, &len) < 0 || gap > 4096 - off ||
          len > 4096 - off - gap || len > (uint64_t)(c.end - c.p))
        goto bad;
      off += gap + len;
      c.p += len;
    }
  }
  if (c.p != c.end)
    goto bad;
  m->body = body;
  m->n = got;
  m->npages = (size_t)np;
  m->state = 1;
  return 0;
bad:
  free(body);
  free(m->pn);
  free(m->at);
  m->pn = NULL;
  m->at = NULL;
  return -1;
}

/* The first chunk that starts at instruction base, or SIZE_MAX. Several
 * start at one instruction where the first holds no INSN (the header's
 * maps before the first KEYFRAME; a fault's FAULT and SIGNAL before its
 * handler's KEYFRAME): reading from the first gives every event. */
static size_t md_chunk(tc_reader *r, uint64_t base) {
  load_index(r);
  if (!r->has_index || !r->nichunks)
    return SIZE_MAX;
  size_t lo = last_chunk_at(r, base);
  while (lo && r->ichunks[lo - 1].insn == r->ichunks[lo].insn)
    lo--;
  return r->ichunks[lo].insn == base ? lo : SIZE_MAX;
}

static int tct_mem_base(tc_reader *r, uint64_t insn, uint64_t *base) {
  if (!r->info.has_memory)
    return 0;
  load_index(r);
  if (!r->has_index)
    return 0;
  if (!r->imd && !(r->imd = calloc(r->nichunks, sizeof *r->imd)))
    return 0;
  size_t lo = last_chunk_at(r, insn);
  /* chunks that start at one instruction: from the first of them */
  while (lo && r->ichunks[lo - 1].insn == r->ichunks[lo].insn)
    lo--;
  for (size_t k = 0; k < lo; k++)
    if (md_load(r, k) < 0)
      return 0;
  *base = r->ichunks[lo].insn;
  return 1;
}

/* Starts reading at chunk c's frame (c > 0: its CHUNK record checked). */
static int md_restart(tc_reader *r, size_t c, tc_error *err) {
  r->seek_phase = 0;
  if (r_restart(r, c ? r->ichunks[c].offset : 0, err) < 0)
    return -1;
  if (!c)
    return 0;
  uint64_t idx = 0, tid = 0;
  bool ok = r_fill(r, 1, err) == 0 && r->buf[r->pos] == REC_CHUNK;
  if (ok)
    r->pos++;
  if (!ok || get_uv(r, &idx, err) < 0 || get_uv(r, &tid, err) < 0 ||
      idx != r->ichunks[c].insn || tid != r->ichunks[c].tid) {
    tc_error_set(err, "tct: %s: corrupt index (chunk at offset %llu)", r->path,
                 (unsigned long long)r->ichunks[c].offset);
    return -1;
  }
  chunk_reset(r, idx, (uint32_t)tid);
  return 0;
}

static int tct_chunk_seek(tc_reader *r, uint64_t base, tc_error *err) {
  size_t c = md_chunk(r, base);
  if (c == SIZE_MAX) {
    tc_error_set(err, "tct: %s: no chunk starts at instruction %llu", r->path,
                 (unsigned long long)base);
    return -1;
  }
  return md_restart(r, c, err);
}

/* Reads chunk k's filters (the frame before its memory summary): 0, or
 * -1 where there are none (a file from before them, the last chunk) or
 * they are corrupt. */
static int mf_load(tc_reader *r, size_t k) {
  if (!r->imf && !(r->imf = calloc(r->nichunks, sizeof *r->imf)))
    return -1;
  tct_mf *f = &r->imf[k];
  if (f->state)
    return f->state > 0 ? 0 : -1;
  f->state = -1;
  if (!r->imd && !(r->imd = calloc(r->nichunks, sizeof *r->imd)))
    return -1;
  /* before the chunk's memory summary (a summary that lists no page
   * still says where it is); the last chunk's, which has none, ends where
   * the footer starts */
  uint64_t end = r->ifooter;
  if (md_load(r, k) == 0 || r->imd[k].at_file)
    end = r->imd[k].at_file;
  else if (k + 1 < r->nichunks)
    return -1;
  uint64_t at;
  uint8_t *body;
  size_t n;
  if (tail_frame(r, r->ichunks[k].offset, end, TCT_SKIP_FILT, tct_filt_tag, &at,
                 &body, &n) < 0)
    return -1;
  fcur c = {body, body + n};
  uint64_t ver, np, v = 0;
  if (f_uv(&c, &ver) < 0 || ver < 1 || ver > 2 || f_uv(&c, &f->flags) < 0 ||
      f_uv(&c, &np) < 0 || np > (uint64_t)(c.end - c.p))
    goto bad;
  if (np && !(f->pcs = malloc((size_t)np * sizeof *f->pcs)))
    goto bad;
  for (uint64_t i = 0; i < np; i++) {
    uint64_t d;
    if (f_uv(&c, &d) < 0 || (i && d == 0) || v + d < v)
      goto bad;
    f->pcs[i] = v += d;
  }
  f->npcs = (size_t)np;
  f->shift[0] = TCT_MF_LINE;
  f->shift[1] = ver == 1 ? TCT_MF_LINE : TCT_MF_WORD;
  for (int s = 0; s < 2; s++) {
    uint64_t nr, lend = 0;
    if (f_uv(&c, &nr) < 0 || nr > (uint64_t)(c.end - c.p) / 2)
      goto bad;
    if (nr && !(f->runs[s] = malloc((size_t)nr * 2 * sizeof(uint64_t))))
      goto bad;
    for (uint64_t i = 0; i < nr; i++) {
      uint64_t gap, len;
      if (f_uv(&c, &gap) < 0 || f_uv(&c, &len) < 0 || !len || (i && !gap) ||
          lend + gap < lend || lend + gap + len < lend + gap)
        goto bad;
      f->runs[s][2 * i] = lend + gap;
      f->runs[s][2 * i + 1] = lend = lend + gap + len;
    }
    f->nruns[s] = (size_t)nr;
  }
  if (c.p != c.end)
    goto bad;
  free(body);
  f->state = 1;
  return 0;
bad:
  free(body);
  free(f->pcs);
  free(f->runs[0]);
  free(f->runs[1]);
  memset(f, 0, sizeof *f);
  f->state = -1;
  return -1;
}

static int tct_chunk_span(tc_reader *r, uint64_t insn, uint64_t *first,
                          uint64_t *end) {
  load_index(r);
  if (!r->has_index || !r->nichunks)
    return 0;
  size_t lo = last_chunk_at(r, insn);
  *first = r->ichunks[lo].insn;
  *end = lo + 1 < r->nichunks ? r->ichunks[lo + 1].insn : r->isum.insns;
  return *end > *first || lo + 1 == r->nichunks;
}

/* Does the sorted run list hold a line of [a, b]? */
static bool mf_runs_hit(const uint64_t *runs, size_t n, uint64_t a,
                        uint64_t b) {
  size_t lo = 0, hi = n; /* the first run that ends past a */
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (runs[2 * mid + 1] <= a)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo < n && runs[2 * lo] <= b;
}

static bool mf_may(tc_reader *r, size_t k, const uint64_t *pcs, size_t npcs,
                   const tc_chunk_watch *w, size_t nw);

static int tct_chunk_may_stop(tc_reader *r, uint64_t first, const uint64_t *pcs,
                              size_t npcs, const tc_chunk_watch *w, size_t nw) {
  size_t k0 = md_chunk(r, first);
  if (k0 == SIZE_MAX)
    return 1;
  for (size_t k = k0; k < r->nichunks && r->ichunks[k].insn == first; k++)
    if (mf_may(r, k, pcs, npcs, w, nw))
      return 1;
  return 0;
}

/* Did chunk k write a byte of [a, b]? Its filters know lines; its memory
 * summary knows the bytes its stores, kernel writes and signal frames
 * left, which are every byte it wrote when it has no MAP, UNMAP or
 * PROTECT (those clear bytes from the summary, and a map's data is not in
 * it). 0 no, 1 yes, -1 not known (no summary, maps in the chunk). A watch
 * on a word beside a hot one then skips the chunks that wrote only its
 * neighbour. */
static int md_wrote(tc_reader *r, size_t k, uint64_t a, uint64_t b) {
  if (!r->info.has_memory || k + 1 >= r->nichunks ||
      r->ichunks[k + 1].nmaps != r->ichunks[k].nmaps)
    return -1;
  if (!r->imd && !(r->imd = calloc(r->nichunks, sizeof *r->imd)))
    return -1;
  if (md_load(r, k) < 0)
    return -1;
  const tct_md *m = &r->imd[k];
  size_t lo = 0, hi = m->npages; /* the first page >= a's */
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (m->pn[mid] < a >> 12)
      lo = mid + 1;
    else
      hi = mid;
  }
  for (size_t i = lo; i < m->npages && m->pn[i] <= b >> 12; i++) {
    fcur c = {m->at[i], m->body + m->n}; /* checked by md_load */
    uint64_t runs, off = 0, gap, len;
    if (f_uv(&c, &runs) < 0)
      return -1;
    for (uint64_t j = 0; j < runs; j++) {
      if (f_uv(&c, &gap) < 0 || f_uv(&c, &len) < 0)
        return -1;
      uint64_t first = (m->pn[i] << 12) + off + gap;
      if (len && first <= b && first + len - 1 >= a)
        return 1;
      off += gap + len;
      c.p += len;
    }
  }
  return 0;
}

/* Can chunk k hold a stop (or has it no filters)? */
static bool mf_may(tc_reader *r, size_t k, const uint64_t *pcs, size_t npcs,
                   const tc_chunk_watch *w, size_t nw) {
  if (mf_load(r, k) < 0)
    return true;
  const tct_mf *f = &r->imf[k];
  for (size_t i = 0; i < npcs; i++) {
    if (f->flags & MF_ALL_PC)
      return true;
    size_t lo = 0, hi = f->npcs;
    while (lo < hi) {
      size_t mid = lo + (hi - lo) / 2;
      if (f->pcs[mid] < pcs[i])
        lo = mid + 1;
      else
        hi = mid;
    }
    if (lo < f->npcs && f->pcs[lo] == pcs[i])
      return true;
  }
  for (size_t i = 0; i < nw; i++) {
    if (!w[i].len)
      continue;
    uint64_t first = w[i].addr;
    uint64_t last =
        first + w[i].len - 1 < first ? UINT64_MAX : first + w[i].len - 1;
    for (int s = 0; s < 2; s++) {
      if (!(w[i].kinds & (s ? TC_MEM_READ : TC_MEM_WRITE)))
        continue;
      if (!(f->flags & (s ? MF_ALL_R : MF_ALL_W)) &&
          !mf_runs_hit(f->runs[s], f->nruns[s], first >> f->shift[s],
                       last >> f->shift[s]))
        continue;
      /* a stored line: the bytes themselves, where the summary knows */
      if (!s && md_wrote(r, k, first, last) == 0)
        continue;
      return true;
    }
  }
  return false;
}

static void md_set(uint8_t *out, size_t off, size_t n, bool known) {
  uint8_t *k = out + 4096;
  for (size_t i = off; i < off + n; i++) {
    if (known)
      k[i >> 3] |= (uint8_t)(1u << (i & 7));
    else
      k[i >> 3] &= (uint8_t) ~(1u << (i & 7));
  }
}

/* Map log entry j's data over [lo, hi) of out (a MAP with data), read
 * from its chunk: 1 copied, 0 the MAP has none, -1 error. */
static int md_map_data(tc_reader *r, size_t j, uint64_t lo, uint64_t hi,
                       uint8_t *out, tc_error *err) {
  if (!r->imapdata && !(r->imapdata = calloc(r->nilog, 1)))
    return -1;
  if (r->imapdata[j] == 1)
    return 0;
  for (size_t i = 0; i < TCT_MDC; i++) /* a page read before */
    if (r->imdc[i].data && r->imdc[i].j == j && r->imdc[i].pn == lo >> 12) {
      memcpy(out + (lo & 4095), r->imdc[i].data + (lo & 4095),
             (size_t)(hi - lo));
      return 1;
    }
  size_t c = 0;
  while (c + 1 < r->nichunks && r->ichunks[c + 1].nmaps <= j)
    c++;
  if (md_restart(r, c, err) < 0)
    return -1;
  uint64_t at = r->ichunks[c].nmaps;
  tc_event ev;
  for (;;) {
    int rc = read_event(r, &ev, err);
    if (rc <= 0)
      return -1;
    if (ev.kind != TC_EV_MAP && ev.kind != TC_EV_UNMAP &&
        ev.kind != TC_EV_PROTECT)
      continue;
    if (at++ < j)
      continue;
    const tc_map_event *m = &ev.u.map;
    if (ev.kind != TC_EV_MAP || m->addr != r->ilog[j].addr ||
        m->size != r->ilog[j].size) {
      tc_error_set(err, "tct: %s: the map log does not match the maps",
                   r->path);
      return -1;
    }
    r->imapdata[j] = m->data ? 2 : 1;
    if (!m->data)
      return 0;
    memcpy(out + (lo & 4095), m->data + (lo - m->addr), (size_t)(hi - lo));
    tct_mdc *k = &r->imdc[r->imdc_next++ % TCT_MDC];
    if (k->data || (k->data = malloc(4096))) {
      k->j = j;
      k->pn = lo >> 12;
      memcpy(k->data + (lo & 4095), out + (lo & 4095), (size_t)(hi - lo));
    }
    return 1;
  }
}

static int tct_mem_page(tc_reader *r, uint64_t base, uint64_t pn, uint8_t *out,
                        tc_error *err) {
  load_index(r);
  size_t c = md_chunk(r, base);
  if (c == SIZE_MAX || !r->imd) {
    tc_error_set(err, "tct: %s: no memory summary before instruction %llu",
                 r->path, (unsigned long long)base);
    return -1;
  }
  memset(out, 0, 4096 + 512);
  uint64_t plo = pn << 12, phi = plo + 4096;
  for (size_t k = 0; k < c; k++) {
    /* the chunk's maps in order, then what it stored after them */
    for (size_t j = r->ichunks[k].nmaps; j < r->ichunks[k + 1].nmaps; j++) {
      const tct_maplog *e = &r->ilog[j];
      uint64_t end =
          e->addr + e->size < e->addr ? UINT64_MAX : e->addr + e->size;
      uint64_t lo = e->addr > plo ? e->addr : plo, hi = end < phi ? end : phi;
      if (e->kind == REC_PROTECT || lo >= hi)
        continue;
      memset(out + (lo & 4095), 0, (size_t)(hi - lo));
      md_set(out, (size_t)(lo & 4095), (size_t)(hi - lo), e->kind == REC_MAP);
      if (e->kind == REC_MAP && md_map_data(r, j, lo, hi, out, err) < 0)
        return -1;
    }
    const tct_md *m = &r->imd[k];
    if (md_load(r, k) < 0)
      return -1;
    size_t lo = 0, hi = m->npages;
    while (lo < hi) {
      size_t mid = (lo + hi) / 2;
      if (m->pn[mid] < pn)
        lo = mid + 1;
      else
        hi = mid;
    }
    if (lo == m->npages || m->pn[lo] != pn)
      continue;
    fcur cu = {m->at[lo], m->body + m->n}; /* checked by md_load */
    uint64_t runs = 0, off = 0;
    f_uv(&cu, &runs);
    for (uint64_t i = 0; i < runs; i++) {
      uint64_t gap = 0, len = 0;
      f_uv(&cu, &gap);
      f_uv(&cu, &len);
      off += gap;
      memcpy(out + off, cu.p, (size_t)len);
      md_set(out, (size_t)off, (size_t)len, true);
      off += len;
      cu.p += len;
    }
  }
  return 0;
}

const tc_format tc_format_tct = {
    .name = "tct",
    .description = "tracecorn's lossless native trace (zstd-compressed)",
    .caps = TC_CAP_BLOCKS | TC_CAP_INSN_BYTES | TC_CAP_MEM | TC_CAP_MEM_KIND |
            TC_CAP_MEM_EXACT | TC_CAP_SYSCALLS | TC_CAP_MAPS | TC_CAP_FAULTS |
            TC_CAP_EXIT | TC_CAP_TID | TC_CAP_MEM_OLD | TC_CAP_SYSCALL_MEM |
            TC_CAP_SYSCALL_COMPAT | TC_CAP_MODULES | TC_CAP_MAP_DATA |
            TC_CAP_TURNS | TC_CAP_SIGNALS,
    .holds_reg = NULL,
    .extension = tct_extension,
    .supports = NULL,
    .open_writer = tct_open_writer,
    .write_event = tct_write_event,
    .close_writer = tct_close_writer,
    .probe = tct_probe,
    .open_reader = tct_open_reader,
    .reader_info = tct_reader_info,
    .reader_writer = tct_reader_writer,
    .next_event = tct_next_event,
    .close_reader = tct_close_reader,
    .seek = tct_seek,
    .summary = tct_summary,
    .mem_base = tct_mem_base,
    .mem_page = tct_mem_page,
    .chunk_seek = tct_chunk_seek,
    .chunk_span = tct_chunk_span,
    .chunk_may_stop = tct_chunk_may_stop,
    .own_thread = 1,
};

/* ============================================================ parts */

tc_writer *tc_tct_open_part(const char *path, const tc_trace_info *info,
                            uint64_t first, tc_error *err) {
  return tct_open(path, info, true, first, err);
}

int tc_tct_write_part(tc_writer *w, const tc_event *ev, tc_error *err) {
  return tct_write_event(w, ev, err);
}

int tc_tct_close_part(tc_writer *w, tc_error *err) {
  return tct_close_writer(w, err);
}

uint64_t tc_tct_chunk_insns(const tc_trace_info *info) {
  const char *opt = tc_writer_option(info, "tct", "chunk");
  if (!opt)
    return TCT_CHUNK_INSNS;
  char *end;
  errno = 0;
  unsigned long long v = strtoull(opt, &end, 10);
  return !*opt || *end || *opt == '-' || errno || v > (1ull << 40) ? 0 : v;
}

tc_writer *tc_tct_join_open(const char *path, const tc_trace_info *info,
                            tc_error *err) {
  tc_writer *w = calloc(1, sizeof *w);
  if (!w) {
    tc_error_set(err, "out of memory");
    return NULL;
  }
  pthread_mutex_init(&w->mu, NULL);
  pthread_cond_init(&w->cv, NULL);
  w->arch = info->arch;
  w->path = strdup(path);
  w->f = tc_outfile_fopen(path, "wb");
  if (!w->f || !w->path) {
    tc_error_set(err, "tct: cannot create %s: %s", path,
                 w->f ? "out of memory" : strerror(errno));
    if (w->f)
      fclose(w->f);
    writer_free(w);
    return NULL;
  }
  return w;
}

/* Reads a part's meta (write_part_meta) and merges it into the join. */
static int join_meta(tc_writer *j, const uint8_t *body, size_t n,
                     uint64_t base) {
  fcur c = {body, body + n};
  tct_sum p = {0};
  uint64_t have_exit = 0, v;
  int64_t st = 0;
  char *msg = NULL;
  if (f_uv(&c, &p.insns) < 0 || f_uv(&c, &p.syscalls) < 0 ||
      f_uv(&c, &p.maps) < 0 || f_uv(&c, &p.faults) < 0 ||
      f_uv(&c, &p.keyframes) < 0 || f_uv(&c, &p.first_pc) < 0 ||
      f_uv(&c, &p.last_pc) < 0 || c.p >= c.end)
    return -1;
  have_exit = *c.p++;
  if (f_sv(&c, &st) < 0 || f_str(&c, &msg) < 0)
    return -1;
  if (p.insns && j->sum.insns == 0)
    j->sum.first_pc = p.first_pc;
  if (p.insns)
    j->sum.last_pc = p.last_pc;
  j->sum.insns += p.insns;
  j->sum.syscalls += p.syscalls;
  j->sum.maps += p.maps;
  j->sum.faults += p.faults;
  j->sum.keyframes += p.keyframes;
  if (have_exit) {
    j->sum.have_exit = 1;
    j->sum.exit_status = (int)st;
    free(j->sum.exit_message);
    j->sum.exit_message = msg;
  } else {
    free(msg);
  }
  uint64_t maps_before = j->nmaplog;
  if (f_uv(&c, &v) < 0 || v > n)
    return -1;
  for (uint64_t i = 0; i < v; i++) {
    tct_maplog e = {0};
    uint64_t prot;
    if (c.p >= c.end)
      return -1;
    e.kind = *c.p++;
    if (f_uv(&c, &e.addr) < 0 || f_uv(&c, &e.size) < 0 || f_uv(&c, &prot) < 0)
      return -1;
    e.prot = (uint32_t)prot;
    if (e.kind == REC_MAP &&
        (f_str(&c, &e.name) < 0 || f_uv(&c, &e.file_offset) < 0)) {
      free(e.name);
      return -1;
    }
    if (grow_push((void **)&j->maplog, &j->nmaplog, &j->maplog_cap, sizeof e,
                  &e) < 0) {
      free(e.name);
      return -1;
    }
  }
  if (f_uv(&c, &v) < 0 || v > n)
    return -1;
  for (uint64_t i = 0; i < v; i++) {
    tct_chunk ch;
    uint64_t tid;
    if (f_uv(&c, &ch.insn) < 0 || f_uv(&c, &tid) < 0 ||
        f_uv(&c, &ch.offset) < 0 || f_uv(&c, &ch.nmaps) < 0)
      return -1;
    ch.tid = (uint32_t)tid;
    ch.offset += base;
    ch.nmaps += maps_before;
    if (grow_push((void **)&j->chunks, &j->nchunks, &j->chunks_cap, sizeof ch,
                  &ch) < 0)
      return -1;
  }
  if (f_uv(&c, &v) < 0 || v > n)
    return -1;
  for (uint64_t i = 0; i < v; i++) {
    uint64_t e;
    if (f_uv(&c, &e) < 0)
      return -1;
    e += base;
    if (grow_push((void **)&j->frame_ends, &j->nframe_ends, &j->frame_ends_cap,
                  sizeof e, &e) < 0)
      return -1;
  }
  return 0;
}

int tc_tct_join_add(tc_writer *j, const char *part, tc_error *err) {
  FILE *f = fopen(part, "rb");
  uint8_t t[16];
  long size = -1;
  if (!f || fseek(f, 0, SEEK_END) != 0 || (size = ftell(f)) < 16 ||
      fseek(f, size - 16, SEEK_SET) != 0 || fread(t, 1, 16, f) != 16 ||
      memcmp(t + 8, tct_part_tag, 8) != 0) {
    tc_error_set(err, "tct: %s: not a part of a parallel recording", part);
    if (f)
      fclose(f);
    return -1;
  }
  uint64_t at = le_get(t, 8);
  if (at > (uint64_t)size - 16) {
    fclose(f);
    tc_error_set(err, "tct: %s: a part with a bad trailer", part);
    return -1;
  }
  size_t mn = (size_t)((uint64_t)size - 16 - at);
  uint8_t *meta = malloc(mn ? mn : 1);
  uint8_t *buf = malloc(1 << 20);
  int rc = 0;
  if (!meta || !buf || fseek(f, (long)at, SEEK_SET) != 0 ||
      fread(meta, 1, mn, f) != mn || fseek(f, 0, SEEK_SET) != 0) {
    tc_error_set(err, "tct: %s: cannot read it", part);
    rc = -1;
  }
  uint64_t base = j->written;
  for (uint64_t left = at; rc == 0 && left > 0;) {
    size_t k = left < (1u << 20) ? (size_t)left : (1u << 20);
    if (fread(buf, 1, k, f) != k) {
      tc_error_set(err, "tct: %s: cannot read it", part);
      rc = -1;
    } else if (fwrite(buf, 1, k, j->f) != k) {
      tc_error_set(err, "tct: %s: write failed: %s", j->path, strerror(errno));
      rc = -1;
    }
    left -= k;
  }
  j->written += at;
  if (rc == 0 && join_meta(j, meta, mn, base) < 0) {
    tc_error_set(err, "tct: %s: a part with a corrupt index", part);
    rc = -1;
  }
  free(meta);
  free(buf);
  fclose(f);
  return rc;
}

int tc_tct_join_close(tc_writer *j, bool ok, tc_error *err) {
  int rc = ok ? write_footer(j, err) : 0;
  if (fclose(j->f) != 0 && rc == 0) {
    tc_error_set(err, "tct: %s: %s", j->path, strerror(errno));
    rc = -1;
  }
  writer_free(j);
  return rc;
}
