/* SPDX-License-Identifier: GPL-2.0-or-later */
/* BAP "frames" traces (.frames): writer and reader. Facts and rules:
 * /work/shared/specs/bap-frames.md; user notes: docs/formats/bap.md.
 *
 * File = 48-byte header (magic, version 3, BFD arch, BFD mach, n frames,
 * TOC offset T), the meta_frame (u64 size + bytes, not counted in n), n
 * frames (u64 size + a serialized `frame`), then at T: m (frames per TOC
 * entry) and ceil(n/m) u64 offsets (frames m, 2m, ... then T as padding),
 * ending at EOF. Frames are protobuf messages (proto2) packed and unpacked
 * with protobuf-c, generated at build time from writers/bap/bap_frame.proto,
 * except the per-instruction std_frame, which writers/bap/bap_pack.c encodes
 * directly into the output buffer (same bytes, several times faster).
 *
 * What tracecorn writes per event:
 *   MAP of a file      modload_frame (consecutive maps of one file merged:
 *                      name, lowest address, highest address inclusive)
 *   KEYFRAME           key_frame: every register (also written before the
 *                      first instruction and whenever the stream's state
 *                      differs from what the frames so far rebuild)
 *   INSN               std_frame: address, tid, bytes; pre list = every
 *                      register read (capstone) and memory load with its
 *                      value; post list = every register written (capstone
 *                      + every changed one) and memory store with its new
 *                      value; the PC only where it does not fall through
 *   SYSCALL            syscall_frame: pc, tid, number, 6 arguments
 *   FAULT              exception_frame: signal number, tid, pc
 * BAP ignores key_frames; the reader uses them to rebuild full states. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pwd.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/byteorder.h"
#include "common/isa/insn_access.h"
#include "common/md5.h"
#include "common/memimage.h"
#include "common/notice.h"
#include "writers/bap/bap.h"
#include "writers/bap/bap_frame.pb-c.h"
#include "writers/bap/bap_pack.h"
#include "writers/io/outfile.h"
#include "writers/io/zst.h"

enum {
  BAP_OUT_BUF = 1 << 20,
  BAP_META_OFF = BAP_HEADER_SIZE,
  BAP_FIXED_TIME = 1704067200 /* 2024-01-01 UTC: the guest's clock */
};

/* ================================================================ arches */

typedef struct bap_arch_num {
  tc_arch_id id;
  uint64_t arch, mach;
} bap_arch_num;

/* bap-frames.md section 3 (BFD numbering, frozen in libtrace). */
static const bap_arch_num bap_arches[] = {
    {TC_ARCH_X86, 9, 1},
    {TC_ARCH_X86_64, 9, 64},
    {TC_ARCH_ARM, 35, 0},
    {TC_ARCH_ARM64, 78, 0},
    {TC_ARCH_MIPS, 8, 32},
    {TC_ARCH_SPARC, 6, 0},
    {TC_ARCH_SPARC64, 6, 7},
    /* BAP's mips is big-endian: see bap_le_mips_marker */
    {TC_ARCH_MIPSEL, 8, 32},
    {TC_ARCH_MIPS64EL, 8, 64},
};

const char *bap_le_mips_marker(const tc_arch *arch) {
  if (arch && arch->id == TC_ARCH_MIPSEL)
    return "arch=mipsel";
  if (arch && arch->id == TC_ARCH_MIPS64EL)
    return "arch=mips64el";
  return NULL;
}

int bap_values_big_endian(const tc_arch *arch) {
  return arch->big_endian || bap_le_mips_marker(arch) != NULL;
}

int bap_arch_numbers(const tc_arch *arch, uint64_t *bfd_arch,
                     uint64_t *bfd_mach, tc_error *err) {
  for (size_t i = 0; arch && i < sizeof bap_arches / sizeof bap_arches[0]; i++)
    if (bap_arches[i].id == arch->id) {
      *bfd_arch = bap_arches[i].arch;
      *bfd_mach = bap_arches[i].mach;
      return 0;
    }
  tc_error_set(err, "bap: BAP frames have no architecture number for %s",
               arch ? arch->name : "an unknown arch");
  return -1;
}

const tc_arch *bap_arch_from_numbers(uint64_t a, uint64_t m) {
  tc_arch_id id = TC_ARCH_NONE;
  if (a == 9)
    id = (m == 64 || m == 65) ? TC_ARCH_X86_64
         : m <= 3             ? TC_ARCH_X86
                              : TC_ARCH_NONE;
  else if (a == 35)
    id = TC_ARCH_ARM;
  else if (a == 78 && m == 0)
    id = TC_ARCH_ARM64;
  else if (a == 8)
    id = (m == 0 || m == 32 || m == 33) ? TC_ARCH_MIPS : TC_ARCH_NONE;
  else if (a == 6)
    id = m == 7 ? TC_ARCH_SPARC64 : m <= 1 ? TC_ARCH_SPARC : TC_ARCH_NONE;
  return id == TC_ARCH_NONE ? NULL : tc_arch_by_id(id);
}

void bap_reg_name(const tc_arch *arch, int reg, char *out, size_t max) {
  const char *s = arch->regs[reg].name;
  size_t i = 0;
  for (; s[i] && i + 1 < max; i++)
    out[i] = (char)(s[i] >= 'a' && s[i] <= 'z' ? s[i] - 'a' + 'A' : s[i]);
  if (max)
    out[i] = 0;
}

static int bap_supports(const tc_arch *arch, tc_error *err) {
  uint64_t a, m;
  return bap_arch_numbers(arch, &a, &m, err);
}

static const char *bap_extension(const tc_arch *arch) {
  (void)arch;
  return ".frames"; /* the only suffix BAP's frame plugin probes */
}

/* Register values go into frames in the byte order BAP decodes them with
 * (the target's; big-endian for every mips); state images hold them in
 * host (little-endian) order. Integers of up to 8 bytes are swapped
 * there; vectors stay byte arrays. */
static int needs_swap(const tc_arch *arch, int reg) {
  const tc_reg_info *ri = &arch->regs[reg];
  return bap_values_big_endian(arch) && ri->size <= 8 &&
         !(ri->flags & TC_REG_VECTOR);
}

static void swap_copy(uint8_t *dst, const uint8_t *src, size_t n) {
  for (size_t i = 0; i < n; i++)
    dst[i] = src[n - 1 - i];
}

/* Instruction bytes with each whole 32-bit word reversed (little-endian
 * mips <-> the big-endian words BAP disassembles); dst may be src. */
static void swap_words(uint8_t *dst, const uint8_t *src, size_t n) {
  size_t i = 0;
  for (; i + 4 <= n; i += 4) {
    uint8_t t[4] = {src[i + 3], src[i + 2], src[i + 1], src[i]};
    memcpy(dst + i, t, 4);
  }
  if (dst != src)
    memcpy(dst + i, src + i, n - i);
}

static uint64_t get_le64(const uint8_t *p) { return get_le(p, 8); }

static void put_le64(uint8_t *p, uint64_t v) { put_le(p, v, 8); }

static uint64_t pc_mask(const tc_arch *arch) {
  return arch->ptr_size == 8 ? ~0ull : 0xFFFFFFFFull;
}

/* ========================================================= message checks
 * A descriptor-driven walk over the wire bytes, enforcing what piqirun
 * (BAP's OCaml reader) and libtrace's proto2 parser reject. protobuf-c
 * alone would accept packed lists, bools other than 0/1, extra variant
 * options and unknown list codes, and would not say which field is
 * missing. */

typedef struct pb_walk {
  char path[256];
  size_t plen;
  tc_error *err;
} pb_walk;

static int is_variant(const ProtobufCMessageDescriptor *d) {
  return d == &tcbap__frame__descriptor ||
         d == &tcbap__operand_info_specific__descriptor ||
         d == &tcbap__taint_info__descriptor ||
         d == &tcbap__value_source_tag__descriptor;
}

static int is_list(const ProtobufCMessageDescriptor *d) {
  return d == &tcbap__operand_value_list__descriptor ||
         d == &tcbap__argument_list__descriptor ||
         d == &tcbap__taint_intro_list__descriptor ||
         d == &tcbap__tagged_value_lists__descriptor ||
         d == &tcbap__value_list__descriptor;
}

/* The schema's field name (operand_usage.base is base_ in our copy). */
static void field_name(const ProtobufCFieldDescriptor *f, char *out,
                       size_t max) {
  size_t n = strlen(f->name);
  if (n && f->name[n - 1] == '_')
    n--;
  snprintf(out, max, "%.*s", (int)n, f->name);
}

static int walk_fail(pb_walk *w, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static int walk_fail(pb_walk *w, const char *fmt, ...) {
  char msg[200];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  tc_error_set(w->err, "%s: %s", w->path, msg);
  return -1;
}

static int get_varint(const uint8_t *p, size_t n, size_t *i, uint64_t *out) {
  uint64_t v = 0;
  for (unsigned k = 0; k < 10; k++) {
    if (*i >= n)
      return -1;
    uint8_t b = p[(*i)++];
    if (k == 9 && b > 1)
      return -1;
    v |= (uint64_t)(b & 0x7F) << (7 * k);
    if (!(b & 0x80)) {
      *out = v;
      return 0;
    }
  }
  return -1;
}

static int wire_type_of(ProtobufCType t) {
  switch (t) {
  case PROTOBUF_C_TYPE_DOUBLE:
  case PROTOBUF_C_TYPE_FIXED64:
  case PROTOBUF_C_TYPE_SFIXED64:
    return 1;
  case PROTOBUF_C_TYPE_FLOAT:
  case PROTOBUF_C_TYPE_FIXED32:
  case PROTOBUF_C_TYPE_SFIXED32:
    return 5;
  case PROTOBUF_C_TYPE_STRING:
  case PROTOBUF_C_TYPE_BYTES:
  case PROTOBUF_C_TYPE_MESSAGE:
    return 2;
  default:
    return 0;
  }
}

static int walk_msg(pb_walk *w, const ProtobufCMessageDescriptor *d,
                    const uint8_t *p, size_t n) {
  unsigned count[16] = {0};
  size_t i = 0;
  while (i < n) {
    uint64_t tag;
    if (get_varint(p, n, &i, &tag) < 0 || tag > 0xFFFFFFFFu || tag >> 3 == 0)
      return walk_fail(w, "malformed field key");
    uint32_t num = (uint32_t)(tag >> 3);
    int wt = (int)(tag & 7);
    uint64_t v = 0, len = 0;
    size_t start = i;
    switch (wt) {
    case 0:
      if (get_varint(p, n, &i, &v) < 0)
        return walk_fail(w, "malformed varint in field %" PRIu32, num);
      break;
    case 1:
    case 5:
      if (n - i < (wt == 1 ? 8u : 4u))
        return walk_fail(w, "field %" PRIu32 " runs past its message", num);
      i += wt == 1 ? 8 : 4;
      break;
    case 2:
      if (get_varint(p, n, &i, &len) < 0 || len > n - i)
        return walk_fail(w, "field %" PRIu32 " runs past its message", num);
      start = i;
      i += (size_t)len;
      break;
    default:
      return walk_fail(w, "wire type %d is not allowed", wt);
    }
    const ProtobufCFieldDescriptor *f =
        protobuf_c_message_descriptor_get_field(d, num);
    if (!f) {
      if (is_variant(d))
        return walk_fail(w, "unknown option code %" PRIu32 " in a variant",
                         num);
      if (is_list(d))
        return walk_fail(w, "list element with code %" PRIu32 " (must be 1)",
                         num);
      continue; /* records: unknown fields are ignored by both readers */
    }
    char fname[64];
    field_name(f, fname, sizeof fname);
    if (wt != wire_type_of(f->type))
      return walk_fail(w, "field %s has wire type %d (packed or mistyped)",
                       fname, wt);
    if (f->type == PROTOBUF_C_TYPE_BOOL && v > 1)
      return walk_fail(w, "bool %s is %" PRIu64 " (only 0 or 1)", fname, v);
    if (f->type == PROTOBUF_C_TYPE_BOOL && is_variant(d) && v != 1)
      return walk_fail(w, "flag option %s is %" PRIu64 " (must be 1)", fname,
                       v);
    if (f->type == PROTOBUF_C_TYPE_SINT32 && v > 0xFFFFFFFFu)
      return walk_fail(w, "sint32 %s out of range (%" PRIu64 ")", fname, v);
    if (f->type == PROTOBUF_C_TYPE_MESSAGE) {
      size_t save = w->plen;
      int k =
          snprintf(w->path + w->plen, sizeof w->path - w->plen, ".%s", fname);
      if (f->label == PROTOBUF_C_LABEL_REPEATED && k > 0)
        k += snprintf(w->path + w->plen + (size_t)k,
                      sizeof w->path - w->plen - (size_t)k, "[%u]",
                      count[f - d->fields]);
      if (k > 0 && w->plen + (size_t)k < sizeof w->path)
        w->plen += (size_t)k;
      if (walk_msg(w, f->descriptor, p + start, (size_t)len) < 0)
        return -1;
      w->plen = save;
      w->path[save] = 0;
    }
    size_t idx = (size_t)(f - d->fields);
    if (idx < 16)
      count[idx]++;
  }
  unsigned options = 0;
  for (unsigned k = 0; k < d->n_fields && k < 16; k++) {
    const ProtobufCFieldDescriptor *f = &d->fields[k];
    char fname[64];
    field_name(f, fname, sizeof fname);
    if (f->label == PROTOBUF_C_LABEL_REQUIRED && count[k] == 0) {
      tc_error_set(w->err, "%s: missing required field %s", w->path, fname);
      return -1;
    }
    options += count[k];
  }
  if (is_variant(d) && options != 1)
    return walk_fail(w, "a variant with %u options (exactly one is allowed)",
                     options);
  return 0;
}

int bap_check_message(const char *type, const uint8_t *data, size_t len,
                      tc_error *err) {
  pb_walk w = {.err = err};
  const ProtobufCMessageDescriptor *d = strcmp(type, "meta_frame") == 0
                                            ? &tcbap__meta_frame__descriptor
                                            : &tcbap__frame__descriptor;
  w.plen = (size_t)snprintf(w.path, sizeof w.path, "%s", type);
  return walk_msg(&w, d, data, len);
}

/* ================================================================ writer */

struct tc_writer {
  int fd;
  char *path;
  const tc_arch *arch;
  uint8_t *buf; /* frames not yet written */
  size_t len, cap;
  uint64_t written; /* bytes of the file already written */
  uint64_t nframes, m;
  uint64_t *toc; /* offsets of frames m, 2m, ... */
  size_t ntoc, captoc;
  int failed;
  tc_insn_access_cache *acc;
  /* Per register: its name, its operand_info_specific (key frames), the
   * packed head of its operand read [0] and written [1] (std frames),
   * and whether its value is byte-swapped. */
  char (*names)[BAP_NAME_MAX];
  Tcbap__RegOperand *regop;
  Tcbap__OperandInfoSpecific *regspec;
  uint8_t (*reghead)[2][BAP_HEAD_MAX];
  uint8_t (*reghead_len)[2];
  uint8_t *regswap;
  /* Per-instruction scratch. */
  bap_operand *pre, *post;
  uint8_t *memhead; /* BAP_HEAD_MAX bytes per operand */
  uint8_t *swapbuf; /* 16 bytes per operand, big-endian targets */
  size_t capops;
  uint16_t *post_regs; /* nregs: the registers a post list holds */
  /* Little-endian mips: instruction words and memory values reversed. */
  int le_mips;
  uint8_t *memswap;
  size_t capmemswap;
  uint8_t *mark; /* nregs, all 0 between instructions */
  /* The state the frames so far rebuild, and where it is valid. */
  uint8_t *state;
  int have_state;
  int continuous; /* tc_trace_info.continuous: no whole-state compare */
  uint64_t last_pc;
  uint32_t last_tid;
  int cpsr; /* ARM: the T bit gives std_frame.mode; -1 elsewhere */
  /* A modload being merged from consecutive maps of one file. */
  char *mod_name;
  uint64_t mod_lo, mod_hi;
};

static void writer_fail(tc_writer *w, tc_error *err, const char *what, int e) {
  tc_error_set(err, "bap: %s: %s: %s", w->path, what,
               e ? strerror(e) : "no progress");
  w->failed = 1;
}

static int write_all(tc_writer *w, const uint8_t *p, size_t n, tc_error *err) {
  while (n) {
    ssize_t k = write(w->fd, p, n);
    if (k < 0 && errno == EINTR)
      continue;
    if (k <= 0) {
      writer_fail(w, err, "write failed", k < 0 ? errno : 0);
      return -1;
    }
    p += k;
    n -= (size_t)k;
    w->written += (uint64_t)k;
  }
  return 0;
}

static int writer_flush(tc_writer *w, tc_error *err) {
  if (w->len && write_all(w, w->buf, w->len, err) < 0)
    return -1;
  w->len = 0;
  return 0;
}

/* Room for n more bytes in the buffer (flushing or growing it). */
static int reserve(tc_writer *w, size_t n, tc_error *err) {
  if (w->cap - w->len >= n)
    return 0;
  if (writer_flush(w, err) < 0)
    return -1;
  if (w->cap >= n)
    return 0;
  uint8_t *nb = realloc(w->buf, n);
  if (!nb) {
    tc_error_set(err, "bap: out of memory");
    w->failed = 1;
    return -1;
  }
  w->buf = nb;
  w->cap = n;
  return 0;
}

/* Room for a message of `size` bytes after its u64 size, which it writes:
 * where the message goes, or NULL. Counts the message as a frame (and
 * notes it in the TOC) unless it is the meta frame; frame_end ends it. */
static uint8_t *frame_begin(tc_writer *w, size_t size, int is_frame,
                            tc_error *err) {
  if (reserve(w, size + 8 + BAP_PACK_SLACK, err) < 0)
    return NULL;
  if (is_frame && w->nframes && w->nframes % w->m == 0) {
    if (w->ntoc == w->captoc) {
      size_t nc = w->captoc ? 2 * w->captoc : 256;
      uint64_t *nt = realloc(w->toc, nc * sizeof *nt);
      if (!nt) {
        tc_error_set(err, "bap: out of memory");
        w->failed = 1;
        return NULL;
      }
      w->toc = nt;
      w->captoc = nc;
    }
    w->toc[w->ntoc++] = w->written + w->len;
  }
  put_le64(w->buf + w->len, size);
  return w->buf + w->len + 8;
}

static int frame_end(tc_writer *w, size_t size, int is_frame, tc_error *err) {
  w->len += size + 8;
  if (is_frame)
    w->nframes++;
  if (w->len >= BAP_OUT_BUF)
    return writer_flush(w, err);
  return 0;
}

/* Appends u64 size + the message packed by protobuf-c. */
static int emit(tc_writer *w, const ProtobufCMessage *msg, int is_frame,
                tc_error *err) {
  size_t size = protobuf_c_message_get_packed_size(msg);
  uint8_t *out = frame_begin(w, size, is_frame, err);
  if (!out)
    return -1;
  size_t packed = protobuf_c_message_pack(msg, out);
  if (packed != size) {
    tc_error_set(err, "bap: protobuf-c packed %zu bytes, expected %zu", packed,
                 size);
    w->failed = 1;
    return -1;
  }
  return frame_end(w, size, is_frame, err);
}

static int emit_frame(tc_writer *w, Tcbap__Frame *f, tc_error *err) {
  return emit(w, &f->base, 1, err);
}

/* ------------------------------------------------------------ meta frame */

typedef struct meta_strings {
  char *cmdline; /* host mode: /proc/self/cmdline, NUL-separated */
  char **tracer_args;
  size_t ntracer_args;
  char *path;
  char user[256], host[256];
} meta_strings;

static void meta_free(meta_strings *s) {
  free(s->cmdline);
  free(s->tracer_args);
  free(s->path);
}

static double ts_seconds(struct timespec t) {
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Splits /proc/self/cmdline into s->tracer_args. */
static void read_cmdline(meta_strings *s) {
  FILE *f = fopen("/proc/self/cmdline", "rb");
  if (!f)
    return;
  size_t cap = 4096, n = 0;
  char *buf = malloc(cap + 1);
  size_t got;
  while (buf && (got = fread(buf + n, 1, cap - n, f)) > 0) {
    n += got;
    if (n == cap) {
      char *nb = realloc(buf, 2 * cap + 1);
      if (!nb)
        break;
      buf = nb;
      cap *= 2;
    }
  }
  fclose(f);
  if (!buf)
    return;
  buf[n] = 0;
  size_t count = 0;
  for (size_t i = 0; i < n; i++)
    count += buf[i] == 0;
  s->tracer_args = calloc(count + 1, sizeof *s->tracer_args);
  if (!s->tracer_args) {
    free(buf);
    return;
  }
  for (size_t i = 0; i < n; i += strlen(buf + i) + 1)
    s->tracer_args[s->ntracer_args++] = buf + i;
  s->cmdline = buf;
}

static int write_meta(tc_writer *w, const tc_trace_info *info, int host,
                      tc_error *err) {
  meta_strings s;
  memset(&s, 0, sizeof s);
  Tcbap__Tracer tracer = TCBAP__TRACER__INIT;
  Tcbap__Target target = TCBAP__TARGET__INIT;
  Tcbap__Fstats fstats = TCBAP__FSTATS__INIT;
  Tcbap__MetaFrame meta = TCBAP__META_FRAME__INIT;
  uint8_t md5[16] = {0};
  tracer.name = "tracecorn";
  tracer.version = TC_VERSION_STRING;
  const char *exe = info->exe_path ? info->exe_path : "";
  target.path = (char *)exe;
  size_t argc = 0;
  while (info->argv && info->argv[argc])
    argc++;
  target.n_args = argc;
  target.args = (char **)info->argv;
  if (info->exe_data)
    tc_md5(info->exe_data, info->exe_size, md5);
  target.md5sum.len = 16;
  target.md5sum.data = md5;
  fstats.size =
      info->exe_size > INT32_MAX ? INT32_MAX : (int32_t)info->exe_size;
  fstats.atime = fstats.mtime = fstats.ctime = BAP_FIXED_TIME;
  meta.user = "tracecorn";
  meta.host = "tracecorn";
  meta.time = BAP_FIXED_TIME;
  if (host) {
    /* The real tracer command line, user, host, time and file stats.
     * tracecorn's own environment is never written (it may hold
     * secrets); the guest's is not in the event stream. */
    read_cmdline(&s);
    tracer.n_args = s.ntracer_args;
    tracer.args = s.tracer_args;
    char *rp = exe[0] ? realpath(exe, NULL) : NULL;
    if (rp) {
      s.path = rp;
      target.path = rp;
    }
    struct stat st;
    if (exe[0] && stat(exe, &st) == 0) {
      fstats.size = st.st_size > INT32_MAX ? INT32_MAX : (int32_t)st.st_size;
      fstats.atime = ts_seconds(st.st_atim);
      fstats.mtime = ts_seconds(st.st_mtim);
      fstats.ctime = ts_seconds(st.st_ctim);
    }
    struct passwd *pw = getpwuid(geteuid());
    snprintf(s.user, sizeof s.user, "%s",
             pw && pw->pw_name ? pw->pw_name
             : getenv("USER")  ? getenv("USER")
                               : "");
    if (gethostname(s.host, sizeof s.host) != 0)
      s.host[0] = 0;
    s.host[sizeof s.host - 1] = 0;
    meta.user = s.user;
    meta.host = s.host;
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    meta.time = ts_seconds(now);
  }
  /* Little-endian mips says so in the last tracer argument: the header's
   * numbers (BAP's big-endian mips) cannot. */
  char *marker[1] = {(char *)bap_le_mips_marker(w->arch)};
  if (marker[0] && s.tracer_args) { /* read_cmdline left a free slot */
    s.tracer_args[s.ntracer_args++] = marker[0];
    tracer.n_args = s.ntracer_args;
  } else if (marker[0]) {
    tracer.n_args = 1;
    tracer.args = marker;
  }
  meta.tracer = &tracer;
  meta.target = &target;
  meta.fstats = &fstats;
  int rc = emit(w, &meta.base, 0, err);
  meta_free(&s);
  return rc;
}

/* --------------------------------------------------------------- options */

static int parse_options(const tc_trace_info *info, int *host, uint64_t *m,
                         int *force_le_mips, tc_error *err) {
  static const char *const known[] = {"meta", "toc", "mipsel", NULL};
  if (tc_writer_options_check(info, "bap", known, err) < 0)
    return -1;
  *host = 0;
  *m = BAP_TOC_DEFAULT;
  const char *f = tc_writer_option(info, "bap", "mipsel");
  *force_le_mips = f && strcmp(f, "force") == 0;
  if (f && !*force_le_mips) {
    tc_error_set(err, "bap: -O bap.mipsel=%s: expected force", f);
    return -1;
  }
  const char *v = tc_writer_option(info, "bap", "meta");
  if (v && strcmp(v, "host") == 0)
    *host = 1;
  else if (v && strcmp(v, "fixed") != 0) {
    tc_error_set(err, "bap: -O bap.meta=%s: expected fixed or host", v);
    return -1;
  }
  v = tc_writer_option(info, "bap", "toc");
  if (v) {
    char *end;
    errno = 0;
    unsigned long long n = strtoull(v, &end, 10);
    if (errno || end == v || *end || v[0] == '-' || n == 0 ||
        n > 0xFFFFFFFFull) {
      tc_error_set(err,
                   "bap: -O bap.toc=%s: expected frames per TOC entry, "
                   "1 to 4294967295",
                   v);
      return -1;
    }
    *m = n;
  }
  return 0;
}

/* ------------------------------------------------------------ open/close */

static void writer_free(tc_writer *w) {
  if (!w)
    return;
  if (w->fd >= 0)
    close(w->fd);
  tc_insn_access_free(w->acc);
  free(w->buf);
  free(w->toc);
  free(w->names);
  free(w->regop);
  free(w->regspec);
  free(w->reghead);
  free(w->reghead_len);
  free(w->regswap);
  free(w->pre);
  free(w->post);
  free(w->memhead);
  free(w->swapbuf);
  free(w->post_regs);
  free(w->memswap);
  free(w->mark);
  free(w->state);
  free(w->mod_name);
  free(w->path);
  free(w);
}

/* Room for n operands in the per-instruction scratch. */
static int ensure_ops(tc_writer *w, size_t n) {
  if (n <= w->capops)
    return 0;
  size_t c = w->capops ? w->capops : 64;
  while (c < n)
    c *= 2;
  bap_operand *pre = realloc(w->pre, c * sizeof *pre);
  if (pre)
    w->pre = pre;
  bap_operand *post = realloc(w->post, c * sizeof *post);
  if (post)
    w->post = post;
  uint8_t *mh = realloc(w->memhead, c * BAP_HEAD_MAX);
  if (mh)
    w->memhead = mh;
  uint8_t *sb = realloc(w->swapbuf, c * 16);
  if (sb)
    w->swapbuf = sb;
  if (!pre || !post || !mh || !sb)
    return -1;
  w->capops = c;
  return 0;
}

static tc_writer *bap_open_writer(const char *path, const tc_trace_info *info,
                                  tc_error *err) {
  uint64_t bfd_arch, bfd_mach, m;
  int host, force_le_mips;
  if (!info || bap_arch_numbers(info->arch, &bfd_arch, &bfd_mach, err) < 0 ||
      parse_options(info, &host, &m, &force_le_mips, err) < 0)
    return NULL;
  const tc_arch *arch = info->arch;
  /* bap-frames.md: BAP's mips is big-endian and decodes values with the
   * arch's byte order, so a little-endian mips trace cannot be expressed
   * faithfully; written only when forced, with a warning. */
  if (bap_le_mips_marker(arch) && !force_le_mips) {
    tc_error_set(err,
                 "bap: BAP's mips is big-endian and cannot express a %s "
                 "trace; -O bap.mipsel=force writes one with values "
                 "big-endian (see docs/formats/bap.md)",
                 arch->name);
    return NULL;
  }
  tc_writer *w = calloc(1, sizeof *w);
  if (!w) {
    tc_error_set(err, "bap: out of memory");
    return NULL;
  }
  w->fd = -1;
  w->arch = arch;
  w->continuous = info->continuous != 0;
  w->m = m;
  w->cpsr = arch->id == TC_ARCH_ARM ? tc_arch_reg_index(arch, "cpsr") : -1;
  w->le_mips = bap_le_mips_marker(arch) != NULL;
  /* path is the temporary name (NAME.partial.frames, or verify's scratch
   * file): the summary names the file */
  if (w->le_mips)
    tc_notice("bap: warning: BAP's mips is big-endian: this %s trace "
              "holds instruction words, registers and memory values "
              "big-endian, as BAP decodes them (see docs/formats/bap.md)",
              arch->name);
  size_t nr = arch->nregs;
  w->path = strdup(path);
  w->cap = BAP_OUT_BUF + (BAP_OUT_BUF >> 2);
  w->buf = malloc(w->cap);
  w->names = calloc(nr, sizeof *w->names);
  w->regop = calloc(nr, sizeof *w->regop);
  w->regspec = calloc(nr, sizeof *w->regspec);
  w->reghead = calloc(nr, sizeof *w->reghead);
  w->reghead_len = calloc(nr, sizeof *w->reghead_len);
  w->regswap = calloc(nr, 1);
  w->post_regs = calloc(nr, sizeof *w->post_regs);
  w->mark = calloc(nr, 1);
  w->state = calloc(1, arch->state_size);
  if (!w->path || !w->buf || !w->names || !w->regop || !w->regspec ||
      !w->reghead || !w->reghead_len || !w->regswap || !w->post_regs ||
      !w->mark || !w->state || ensure_ops(w, nr + 16) < 0) {
    tc_error_set(err, "bap: out of memory");
    goto fail;
  }
  if (!(w->acc = tc_insn_access_new(arch, err)))
    goto fail;
  for (size_t r = 0; r < nr; r++) {
    bap_reg_name(arch, (int)r, w->names[r], sizeof w->names[r]);
    Tcbap__RegOperand ro = TCBAP__REG_OPERAND__INIT;
    ro.name = w->names[r];
    w->regop[r] = ro;
    Tcbap__OperandInfoSpecific sp = TCBAP__OPERAND_INFO_SPECIFIC__INIT;
    sp.reg_operand = &w->regop[r];
    w->regspec[r] = sp;
    const tc_reg_info *ri = &arch->regs[r];
    for (int written = 0; written < 2; written++)
      w->reghead_len[r][written] =
          (uint8_t)bap_operand_head(w->reghead[r][written], w->names[r], 0,
                                    (int32_t)ri->size * 8, written, ri->size);
    w->regswap[r] = (uint8_t)needs_swap(arch, (int)r);
  }

  w->fd = tc_outfile_open(path, 0644);
  if (w->fd < 0) {
    tc_error_set(err, "bap: %s: cannot create: %s", path, strerror(errno));
    goto fail;
  }
  /* The header is completed at close, at offset 32, and the TOC holds
   * offsets from the file's start: a stream must be a file at its start
   * (`> FILE`), not a pipe, a terminal or an output appended to. */
  int fl = fcntl(w->fd, F_GETFL);
  if (lseek(w->fd, 0, SEEK_CUR) != 0 || fl < 0 || (fl & O_APPEND)) {
    tc_error_set(err,
                 "bap: %s: cannot write a bap trace to a stream that cannot "
                 "seek back to its start (a pipe, a terminal, >>): write it "
                 "to a file",
                 path);
    goto fail;
  }
  /* n and T stay 0 until close: a reader then knows the trace is not
   * finished. */
  uint8_t *h = w->buf;
  put_le64(h, BAP_MAGIC);
  put_le64(h + 8, BAP_VERSION);
  put_le64(h + 16, bfd_arch);
  put_le64(h + 24, bfd_mach);
  put_le64(h + 32, 0);
  put_le64(h + 40, 0);
  w->len = BAP_HEADER_SIZE;
  if (write_meta(w, info, host, err) < 0 || writer_flush(w, err) < 0)
    goto fail;
  return w;
fail:
  writer_free(w);
  return NULL;
}

/* ---------------------------------------------------------------- frames */

static int flush_modload(tc_writer *w, tc_error *err) {
  if (!w->mod_name)
    return 0;
  Tcbap__ModloadFrame mf = TCBAP__MODLOAD_FRAME__INIT;
  mf.module_name = w->mod_name;
  mf.low_address = w->mod_lo;
  mf.high_address = w->mod_hi;
  Tcbap__Frame f = TCBAP__FRAME__INIT;
  f.modload_frame = &mf;
  int rc = emit_frame(w, &f, err);
  free(w->mod_name);
  w->mod_name = NULL;
  return rc;
}

/* A file-backed map: extends the pending module or starts one. */
static int on_map(tc_writer *w, const tc_map_event *m, tc_error *err) {
  const char *name = m->name ? m->name : "";
  if (!name[0] || name[0] == '[' || m->size == 0)
    return flush_modload(w, err); /* stack, heap, anonymous */
  uint64_t hi = m->addr + m->size - 1;
  if (w->mod_name && strcmp(w->mod_name, name) == 0) {
    if (m->addr < w->mod_lo)
      w->mod_lo = m->addr;
    if (hi > w->mod_hi)
      w->mod_hi = hi;
    return 0;
  }
  if (flush_modload(w, err) < 0)
    return -1;
  if (!(w->mod_name = strdup(name))) {
    tc_error_set(err, "bap: out of memory");
    return -1;
  }
  w->mod_lo = m->addr;
  w->mod_hi = hi;
  return 0;
}

/* A register operand of `state` (written: in the post list). */
static inline void reg_operand(tc_writer *w, bap_operand *op, size_t slot,
                               int reg, const uint8_t *state, int written) {
  const tc_reg_info *ri = &w->arch->regs[reg];
  op->head = w->reghead[reg][written];
  op->head_len = w->reghead_len[reg][written];
  op->value = state + ri->offset;
  op->value_len = ri->size;
  if (w->regswap[reg]) {
    uint8_t *d = w->swapbuf + slot * 16;
    swap_copy(d, state + ri->offset, ri->size);
    op->value = d;
  }
}

static void mem_operand(tc_writer *w, bap_operand *op, size_t slot,
                        const tc_mem_access *ma, const uint8_t *bytes,
                        int written) {
  uint8_t *h = w->memhead + slot * BAP_HEAD_MAX;
  int32_t bits = (int32_t)(ma->size > INT32_MAX / 8 ? 0 : ma->size * 8);
  op->head = h;
  op->head_len =
      (uint32_t)bap_operand_head(h, NULL, ma->addr, bits, written, ma->size);
  op->value = bytes;
  op->value_len = ma->size;
}

/* key_frame: every register of `state`, tagged with the thread. */
static int emit_keyframe(tc_writer *w, const uint8_t *state, uint32_t tid,
                         tc_error *err) {
  const tc_arch *a = w->arch;
  size_t nr = a->nregs;
  Tcbap__ValueInfo *vi = calloc(nr, sizeof *vi);
  Tcbap__ValueInfo **vp = calloc(nr, sizeof *vp);
  uint8_t *sw = calloc(nr, 16);
  if (!vi || !vp || !sw) {
    free(vi);
    free(vp);
    free(sw);
    tc_error_set(err, "bap: out of memory");
    return -1;
  }
  for (size_t r = 0; r < nr; r++) {
    const tc_reg_info *ri = &a->regs[r];
    Tcbap__ValueInfo init = TCBAP__VALUE_INFO__INIT;
    vi[r] = init;
    vi[r].operand_info_specific = &w->regspec[r];
    vi[r].bit_length = ri->size * 8;
    vi[r].value.len = ri->size;
    vi[r].value.data = (uint8_t *)state + ri->offset;
    if (needs_swap(a, (int)r)) {
      swap_copy(sw + 16 * r, state + ri->offset, ri->size);
      vi[r].value.data = sw + 16 * r;
    }
    vp[r] = &vi[r];
  }
  Tcbap__ValueList vl = TCBAP__VALUE_LIST__INIT;
  vl.n_elem = nr;
  vl.elem = vp;
  Tcbap__ValueSourceTag tag = TCBAP__VALUE_SOURCE_TAG__INIT;
  tag.has_thread_id = 1;
  tag.thread_id = tid;
  Tcbap__TaggedValueList tvl = TCBAP__TAGGED_VALUE_LIST__INIT;
  tvl.value_source_tag = &tag;
  tvl.value_list = &vl;
  Tcbap__TaggedValueList *tvlp = &tvl;
  Tcbap__TaggedValueLists lists = TCBAP__TAGGED_VALUE_LISTS__INIT;
  lists.n_elem = 1;
  lists.elem = &tvlp;
  Tcbap__KeyFrame kf = TCBAP__KEY_FRAME__INIT;
  kf.tagged_value_lists = &lists;
  Tcbap__Frame f = TCBAP__FRAME__INIT;
  f.key_frame = &kf;
  int rc = emit_frame(w, &f, err);
  free(vi);
  free(vp);
  free(sw);
  if (rc == 0) {
    memcpy(w->state, state, a->state_size);
    w->have_state = 1;
  }
  return rc;
}

/* A memory operand's value: the bytes as in memory, or on little-endian
 * mips reversed (the value big-endian) into w->memswap at *used. */
static const uint8_t *mem_value(tc_writer *w, const tc_mem_access *ma,
                                const uint8_t *bytes, size_t *used) {
  if (!w->le_mips)
    return bytes;
  uint8_t *d = w->memswap + *used;
  swap_copy(d, bytes, ma->size);
  *used += ma->size;
  return d;
}

static int write_insn(tc_writer *w, const tc_insn_event *in, tc_error *err) {
  const tc_arch *a = w->arch;
  if (!in->state_before || !in->state_after) {
    tc_error_set(err, "bap: instruction %" PRIu64 " has no register state",
                 in->index);
    return -1;
  }
  /* The reader rebuilds each state from the last key_frame and the post
   * lists; where the stream says otherwise, a key_frame puts it right. */
  if (!w->have_state || (!w->continuous && memcmp(w->state, in->state_before,
                                                  a->state_size) != 0)) {
    if (emit_keyframe(w, in->state_before, in->tid, err) < 0)
      return -1;
  }
  uint8_t size = in->size > 16 ? 16 : in->size;
  int thumb =
      w->cpsr >= 0 && (tc_state_get(a, in->state_before, w->cpsr) & 0x20);
  const tc_insn_access *acc =
      tc_insn_access_get(w->acc, in->pc | (uint64_t)thumb, in->bytes, size);
  if (ensure_ops(w, (size_t)acc->nread + a->nregs + in->nmem + 1) < 0) {
    tc_error_set(err, "bap: out of memory");
    return -1;
  }
  const uint8_t *raw = in->bytes;
  uint8_t rawswap[16];
  size_t memswap = 0; /* bytes of w->memswap used */
  if (w->le_mips) {
    /* As BAP decodes them: each instruction word and each access's value
     * big-endian. */
    swap_words(rawswap, in->bytes, size);
    raw = rawswap;
    size_t need = 0;
    for (uint32_t i = 0; i < in->nmem; i++)
      need += in->mem[i].size;
    if (need > w->capmemswap) {
      uint8_t *nb = realloc(w->memswap, need);
      if (!nb) {
        tc_error_set(err, "bap: out of memory");
        return -1;
      }
      w->memswap = nb;
      w->capmemswap = need;
    }
  }
  size_t slot = 0, npre = 0, npost = 0;
  for (unsigned i = 0; i < acc->nread; i++)
    reg_operand(w, &w->pre[npre++], slot++, acc->read[i], in->state_before, 0);
  for (uint32_t i = 0; i < in->nmem; i++)
    if (in->mem[i].kind == TC_MEM_READ)
      mem_operand(w, &w->pre[npre++], slot++, &in->mem[i],
                  mem_value(w, &in->mem[i], in->mem[i].before, &memswap), 0);
  /* Written: capstone's list, every changed register, and the PC when it
   * does not simply fall through (branches, rep iterations, faults), in
   * register order. A handful each: gathered, not found by a pass over
   * every register. */
  const tc_reg_info *pc = &a->regs[a->pc_reg];
  uint64_t pc_after = 0; /* tc_state_get, minus its libc call */
  if (pc->size == 8)
    memcpy(&pc_after, in->state_after + pc->offset, 8);
  else if (pc->size == 4) {
    uint32_t v;
    memcpy(&v, in->state_after + pc->offset, 4);
    pc_after = v;
  } else
    pc_after = tc_state_get(a, in->state_after, a->pc_reg);
  uint64_t fall = (in->pc + in->size) & pc_mask(a);
  uint16_t *written = w->post_regs;
  size_t nwritten = 0;
  for (unsigned i = 0; i < acc->nwrite; i++)
    if (!w->mark[acc->write[i]]) {
      w->mark[acc->write[i]] = 1;
      written[nwritten++] = acc->write[i];
    }
  for (unsigned i = 0; i < in->nregs; i++)
    if (in->regs[i] < a->nregs && !w->mark[in->regs[i]]) {
      w->mark[in->regs[i]] = 1;
      written[nwritten++] = in->regs[i];
    }
  if (pc_after != fall && !w->mark[a->pc_reg])
    written[nwritten++] = (uint16_t)a->pc_reg;
  else if (pc_after == fall && w->mark[a->pc_reg])
    for (size_t i = 0; i < nwritten; i++)
      if (written[i] == a->pc_reg) {
        written[i] = written[--nwritten];
        break;
      }
  for (size_t i = 1; i < nwritten; i++) { /* nearly sorted: insertion */
    uint16_t r = written[i];
    size_t j = i;
    for (; j > 0 && written[j - 1] > r; j--)
      written[j] = written[j - 1];
    written[j] = r;
  }
  for (size_t i = 0; i < nwritten; i++) {
    int r = written[i];
    w->mark[r] = 0;
    reg_operand(w, &w->post[npost++], slot++, r, in->state_after, 1);
    const tc_reg_info *ri = &a->regs[r];
    if (ri->size == 8) /* most: a constant-size copy, not a libc call */
      memcpy(w->state + ri->offset, in->state_after + ri->offset, 8);
    else
      memcpy(w->state + ri->offset, in->state_after + ri->offset, ri->size);
  }
  w->mark[a->pc_reg] = 0;
  for (uint32_t i = 0; i < in->nmem; i++)
    if (in->mem[i].kind == TC_MEM_WRITE)
      mem_operand(w, &w->post[npost++], slot++, &in->mem[i],
                  mem_value(w, &in->mem[i], in->mem[i].after, &memswap), 1);
  /* What the reader will make of it: the PC falls through unless given
   * (either way, its value after). */
  if (pc->size == 8)
    memcpy(w->state + pc->offset, in->state_after + pc->offset, 8);
  else
    tc_state_set(a, w->state, a->pc_reg, pc_after);
  w->last_pc = in->pc;
  w->last_tid = in->tid;

  bap_std_frame sf = {.address = in->pc,
                      .thread_id = in->tid,
                      .rawbytes = raw,
                      .nraw = size,
                      .pre = w->pre,
                      .npre = npre,
                      .post = w->post,
                      .npost = npost,
                      .mode = w->cpsr < 0 ? NULL
                              : thumb     ? "arm:t32"
                                          : "arm:a32"};
  size_t fsize = bap_std_frame_size(&sf);
  uint8_t *out = frame_begin(w, fsize, 1, err);
  if (!out)
    return -1;
  uint8_t *end = bap_pack_std_frame(&sf, out);
  if ((size_t)(end - out) !=
      fsize) { /* cannot happen: sized and packed alike */
    tc_error_set(err, "bap: packed %zu bytes, expected %zu",
                 (size_t)(end - out), fsize);
    w->failed = 1;
    return -1;
  }
  return frame_end(w, fsize, 1, err);
}

static int write_syscall(tc_writer *w, const tc_syscall_event *s,
                         tc_error *err) {
  int64_t args[6];
  for (int i = 0; i < 6; i++)
    args[i] = (int64_t)s->args[i];
  Tcbap__ArgumentList al = TCBAP__ARGUMENT_LIST__INIT;
  al.n_elem = 6;
  al.elem = args;
  Tcbap__SyscallFrame sf = TCBAP__SYSCALL_FRAME__INIT;
  sf.address = w->last_pc;
  sf.thread_id = s->tid;
  sf.number = s->nr;
  sf.argument_list = &al;
  Tcbap__Frame f = TCBAP__FRAME__INIT;
  f.syscall_frame = &sf;
  return emit_frame(w, &f, err);
}

static int write_fault(tc_writer *w, const tc_fault_event *ft, tc_error *err) {
  Tcbap__ExceptionFrame ef = TCBAP__EXCEPTION_FRAME__INIT;
  ef.exception_number = (uint64_t)ft->signal;
  ef.has_thread_id = 1;
  ef.thread_id = w->last_tid;
  ef.has_from_addr = 1;
  ef.from_addr = ft->pc;
  Tcbap__Frame f = TCBAP__FRAME__INIT;
  f.exception_frame = &ef;
  return emit_frame(w, &f, err);
}

static int bap_write_event(tc_writer *w, const tc_event *ev, tc_error *err) {
  if (w->failed) {
    tc_error_set(err, "bap: %s: an earlier write failed", w->path);
    return -1;
  }
  int rc = 0;
  if (ev->kind == TC_EV_MAP)
    rc = on_map(w, &ev->u.map, err);
  else if (flush_modload(w, err) < 0)
    rc = -1;
  else if (ev->kind == TC_EV_INSN && ev->u.insn.size > 16) {
    /* the reader takes at most 16 (a converted or hand-made stream) */
    tc_error_set(err,
                 "bap: %s: refused an instruction of %u bytes (the reader "
                 "takes at most 16)",
                 w->path, ev->u.insn.size);
    rc = -1;
  } else if (ev->kind == TC_EV_INSN)
    rc = write_insn(w, &ev->u.insn, err);
  else if (ev->kind == TC_EV_KEYFRAME)
    rc = emit_keyframe(w, ev->u.key.state, ev->u.key.tid, err);
  else if (ev->kind == TC_EV_SYSCALL && ev->u.sys.part == 0)
    rc = write_syscall(w, &ev->u.sys, err); /* BAP keeps no kernel writes */
  else if (ev->kind == TC_EV_FAULT)
    rc = write_fault(w, &ev->u.fault, err);
  /* UNMAP, PROTECT and EXIT have no frame. */
  if (rc < 0)
    w->failed = 1;
  return rc;
}

static int bap_close_writer(tc_writer *w, tc_error *err) {
  if (!w)
    return 0;
  int rc = 0;
  if (w->failed) {
    tc_error_set(err, "bap: %s: an earlier write failed", w->path);
    rc = -1;
  }
  if (rc == 0 && flush_modload(w, err) < 0)
    rc = -1;
  if (rc == 0 && writer_flush(w, err) < 0)
    rc = -1;
  if (rc == 0) {
    /* The TOC: m, frames m, 2m, ... below n, then T up to ceil(n/m). */
    uint64_t T = w->written, n = w->nframes;
    uint64_t entries = (n + w->m - 1) / w->m;
    uint8_t b[8];
    put_le64(b, w->m);
    if (reserve(w, 8, err) < 0)
      rc = -1;
    else {
      memcpy(w->buf + w->len, b, 8);
      w->len += 8;
    }
    for (uint64_t j = 0; rc == 0 && j < entries; j++) {
      if (reserve(w, 8, err) < 0) {
        rc = -1;
        break;
      }
      put_le64(w->buf + w->len, j < w->ntoc ? w->toc[j] : T);
      w->len += 8;
    }
    if (rc == 0 && writer_flush(w, err) < 0)
      rc = -1;
    if (rc == 0) {
      uint8_t nt[16];
      put_le64(nt, n);
      put_le64(nt + 8, T);
      if (pwrite(w->fd, nt, 16, 32) != 16) {
        writer_fail(w, err, "cannot finish the header", errno);
        rc = -1;
      }
    }
  }
  if (close(w->fd) < 0 && rc == 0) {
    tc_error_set(err, "bap: %s: close failed: %s", w->path, strerror(errno));
    rc = -1;
  }
  w->fd = -1;
  writer_free(w);
  return rc;
}

/* ================================================================ reader */

/* protobuf-c allocations of one frame come from a bump arena, reset per
 * frame. */
typedef struct arena_chunk {
  struct arena_chunk *next;
  size_t size, used;
  max_align_t data[];
} arena_chunk;

typedef struct arena {
  arena_chunk *head;
} arena;

static void *arena_alloc(void *ctx, size_t n) {
  arena *a = ctx;
  n = (n + 15) & ~(size_t)15;
  arena_chunk *c = a->head;
  if (!c || c->size - c->used < n) {
    size_t size = 1 << 16;
    while (size < n)
      size *= 2;
    arena_chunk *nc = malloc(sizeof *nc + size);
    if (!nc)
      return NULL;
    nc->next = c;
    nc->size = size;
    nc->used = 0;
    a->head = nc;
    c = nc;
  }
  void *p = (uint8_t *)c->data + c->used;
  c->used += n;
  return p;
}

static void arena_free(void *ctx, void *p) {
  (void)ctx;
  (void)p;
}

/* Keeps one chunk (the largest needed so far) for the next frame. */
static void arena_reset(arena *a) {
  arena_chunk *c = a->head;
  if (!c)
    return;
  size_t total = 0;
  for (arena_chunk *x = c; x; x = x->next)
    total += x->size;
  if (c->next) {
    while (c) {
      arena_chunk *nx = c->next;
      free(c);
      c = nx;
    }
    a->head = NULL;
    arena_chunk *nc = malloc(sizeof *nc + total);
    if (nc) {
      nc->next = NULL;
      nc->size = total;
      nc->used = 0;
      a->head = nc;
    }
    return;
  }
  c->used = 0;
}

static void arena_destroy(arena *a) {
  while (a->head) {
    arena_chunk *nx = a->head->next;
    free(a->head);
    a->head = nx;
  }
}

typedef struct reg_slot {
  char name[24]; /* upper case */
  int reg;
} reg_slot;

enum { RMAP_SIZE = 256 };

struct tc_reader {
  FILE *fp;
  char *path;
  uint64_t fsize;
  uint64_t fpos; /* where fp is */
  uint64_t version, bfd_arch, bfd_mach, n, T, m;
  uint64_t *toc;
  uint64_t ntoc;
  uint64_t first; /* offset of frame 0's size field */
  const tc_arch *arch;
  int le_mips; /* instruction words and memory values come big-endian */
  tc_trace_info info;
  char *exe_path;
  char **argv;
  char writer[160]; /* the meta frame's tracer name and version */
  /* Frame iteration. */
  uint64_t pos, k; /* next frame: offset, index */
  uint8_t *fbuf;   /* the current frame's bytes */
  size_t fcap;
  uint8_t *abuf; /* bap_reader_frame_at's bytes */
  size_t acap;
  arena ar;
  ProtobufCAllocator alloc;
  Tcbap__Frame *cur;
  /* Event state. */
  reg_slot rmap[RMAP_SIZE];
  uint8_t *state, *before, *after, *key, *initial;
  uint16_t *changed;
  uint8_t *mark;
  tc_mem_access *mem;
  size_t capmem;
  uint8_t *membuf; /* before-bytes of stores */
  size_t capmembuf;
  tc_memimage *image;
  uint64_t insns;
  uint32_t tid;
  bool last_compat; /* the last instruction was x86-64's int $0x80 */
  uint64_t last_pc;
  int faulted, fault_signal;
  int exited, exit_status;
  int done;
};

static uint32_t name_hash(const char *s) {
  uint32_t h = 2166136261u;
  for (; *s; s++) {
    char c = *s >= 'a' && *s <= 'z' ? (char)(*s - 'a' + 'A') : *s;
    h = (h ^ (uint8_t)c) * 16777619u;
  }
  return h;
}

static void rmap_init(tc_reader *r) {
  for (int i = 0; i < RMAP_SIZE; i++)
    r->rmap[i].reg = -1;
  for (int reg = 0; reg < r->arch->nregs && reg < RMAP_SIZE / 2; reg++) {
    char nm[24];
    bap_reg_name(r->arch, reg, nm, sizeof nm);
    uint32_t h = name_hash(nm) & (RMAP_SIZE - 1);
    while (r->rmap[h].reg >= 0)
      h = (h + 1) & (RMAP_SIZE - 1);
    memcpy(r->rmap[h].name, nm, sizeof nm);
    r->rmap[h].reg = reg;
  }
}

/* Register index for a frame's name (any case), -1 if unknown. */
static int rmap_find(const tc_reader *r, const char *name) {
  if (!name)
    return -1;
  for (uint32_t h = name_hash(name) & (RMAP_SIZE - 1); r->rmap[h].reg >= 0;
       h = (h + 1) & (RMAP_SIZE - 1))
    if (strcasecmp(r->rmap[h].name, name) == 0)
      return r->rmap[h].reg;
  return -1;
}

/* Stores a frame value (target byte order, maybe of another width) into a
 * state image. */
static void set_reg_value(const tc_arch *a, uint8_t *state, int reg,
                          const ProtobufCBinaryData *v) {
  const tc_reg_info *ri = &a->regs[reg];
  uint8_t tmp[32] = {0};
  size_t n = v->len < ri->size ? v->len : ri->size;
  if (n == 0 || !v->data) {
    /* an empty value (a corrupt file may have one): the register is 0 */
    memset(state + ri->offset, 0, ri->size);
    return;
  }
  if (needs_swap(a, reg)) {
    /* big-endian: the low-order bytes are the last ones */
    uint8_t be[32] = {0};
    memcpy(be + ri->size - n, v->data + v->len - n, n);
    swap_copy(tmp, be, ri->size);
  } else
    memcpy(tmp, v->data, n);
  memcpy(state + ri->offset, tmp, ri->size);
}

static int rd_fail(tc_reader *r, tc_error *err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int rd_fail(tc_reader *r, tc_error *err, const char *fmt, ...) {
  char msg[400];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  tc_error_set(err, "bap: %s: %s", r->path, msg);
  return -1;
}

static int read_at(tc_reader *r, uint64_t off, void *buf, size_t n,
                   tc_error *err) {
  if (off > r->fsize || r->fsize - off < n)
    return rd_fail(
        r, err, "truncated: %zu bytes at offset 0x%" PRIx64 " are past the end",
        n, off);
  if (off != r->fpos && fseeko(r->fp, (off_t)off, SEEK_SET) != 0) {
    r->fpos = UINT64_MAX;
    return rd_fail(r, err, "cannot seek to 0x%" PRIx64 ": %s", off,
                   strerror(errno));
  }
  r->fpos = off;
  if (fread(buf, 1, n, r->fp) != n) {
    r->fpos = UINT64_MAX;
    return rd_fail(r, err, "read failed at offset 0x%" PRIx64 ": %s", off,
                   ferror(r->fp) ? strerror(errno) : "unexpected end");
  }
  r->fpos += n;
  return 0;
}

/* Reads the size-prefixed message at *off (which must end by `limit`)
 * into *buf; advances *off. */
static int read_sized(tc_reader *r, uint64_t *off, uint64_t limit,
                      uint8_t **buf, size_t *cap, size_t *len, const char *what,
                      uint64_t idx, tc_error *err) {
  uint8_t b[8];
  if (limit < *off || limit - *off < 8)
    return rd_fail(r, err,
                   "%s %" PRIu64 " at offset 0x%" PRIx64
                   " runs into the TOC at 0x%" PRIx64,
                   what, idx, *off, limit);
  if (read_at(r, *off, b, 8, err) < 0)
    return -1;
  uint64_t size = get_le64(b);
  if (size == 0)
    return rd_fail(r, err,
                   "%s %" PRIu64 " at offset 0x%" PRIx64
                   " has length 0 (readers refuse empty frames)",
                   what, idx, *off);
  if (size > limit - *off - 8)
    return rd_fail(r, err,
                   "%s %" PRIu64 " at offset 0x%" PRIx64 " claims %" PRIu64
                   " bytes, past the TOC at 0x%" PRIx64,
                   what, idx, *off, size, limit);
  if (size > *cap) {
    uint8_t *nb = realloc(*buf, (size_t)size);
    if (!nb)
      return rd_fail(r, err, "out of memory for a %" PRIu64 "-byte frame",
                     size);
    *buf = nb;
    *cap = (size_t)size;
  }
  if (read_at(r, *off + 8, *buf, (size_t)size, err) < 0)
    return -1;
  *len = (size_t)size;
  *off += 8 + size;
  return 0;
}

/* Reads, checks and unpacks the next frame into r->cur. 1: a frame, 0:
 * the last frame was read, -1: error. */
static int next_frame(tc_reader *r, tc_error *err) {
  r->cur = NULL;
  arena_reset(&r->ar);
  if (r->k >= r->n) {
    if (r->pos != r->T)
      return rd_fail(r, err,
                     "%" PRIu64 " frames end at offset 0x%" PRIx64
                     ", but the TOC is at 0x%" PRIx64,
                     r->n, r->pos, r->T);
    return 0;
  }
  if (r->k && r->k % r->m == 0 && r->k / r->m - 1 < r->ntoc &&
      r->toc[r->k / r->m - 1] != r->pos)
    return rd_fail(r, err,
                   "TOC entry %" PRIu64 " says frame %" PRIu64
                   " is at 0x%" PRIx64 ", it is at 0x%" PRIx64,
                   r->k / r->m - 1, r->k, r->toc[r->k / r->m - 1], r->pos);
  uint64_t at = r->pos;
  size_t len;
  if (read_sized(r, &r->pos, r->T, &r->fbuf, &r->fcap, &len, "frame", r->k,
                 err) < 0)
    return -1;
  tc_error why = {{0}};
  if (bap_check_message("frame", r->fbuf, len, &why) < 0)
    return rd_fail(r, err, "frame %" PRIu64 " at offset 0x%" PRIx64 ": %s",
                   r->k, at, why.msg);
  r->cur = tcbap__frame__unpack(&r->alloc, len, r->fbuf);
  if (!r->cur)
    return rd_fail(r, err,
                   "frame %" PRIu64 " at offset 0x%" PRIx64
                   ": protobuf-c cannot unpack it",
                   r->k, at);
  r->k++;
  return 1;
}

static int grow_mem(tc_reader *r, size_t nmem, size_t bytes) {
  if (nmem > r->capmem) {
    size_t c = r->capmem ? r->capmem : 16;
    while (c < nmem)
      c *= 2;
    tc_mem_access *nm = realloc(r->mem, c * sizeof *nm);
    if (!nm)
      return -1;
    r->mem = nm;
    r->capmem = c;
  }
  if (bytes > r->capmembuf) {
    size_t c = r->capmembuf ? r->capmembuf : 256;
    while (c < bytes)
      c *= 2;
    uint8_t *nb = realloc(r->membuf, c);
    if (!nb)
      return -1;
    r->membuf = nb;
    r->capmembuf = c;
  }
  return 0;
}

static void apply_keyframe(tc_reader *r, const Tcbap__KeyFrame *kf) {
  const Tcbap__TaggedValueLists *ls = kf->tagged_value_lists;
  for (size_t i = 0; i < ls->n_elem; i++) {
    const Tcbap__TaggedValueList *t = ls->elem[i];
    if (t->value_source_tag->has_thread_id)
      r->tid = (uint32_t)t->value_source_tag->thread_id;
    for (size_t j = 0; j < t->value_list->n_elem; j++) {
      const Tcbap__ValueInfo *v = t->value_list->elem[j];
      const Tcbap__RegOperand *ro = v->operand_info_specific->reg_operand;
      int reg = ro ? rmap_find(r, ro->name) : -1;
      if (reg >= 0)
        set_reg_value(r->arch, r->state, reg, &v->value);
    }
  }
}

/* Register values a std_frame's operands give: read ones into `before`,
 * written ones into `after` (by usage flags, as BAP classifies them). */
static void apply_regs(tc_reader *r, const Tcbap__OperandValueList *l,
                       uint8_t *before, uint8_t *after) {
  for (size_t i = 0; l && i < l->n_elem; i++) {
    const Tcbap__OperandInfo *op = l->elem[i];
    const Tcbap__RegOperand *ro = op->operand_info_specific->reg_operand;
    if (!ro)
      continue;
    int reg = rmap_find(r, ro->name);
    if (reg < 0)
      continue; /* a register tracecorn does not record */
    if (before && op->operand_usage->read)
      set_reg_value(r->arch, before, reg, &op->value);
    if (after && op->operand_usage->written) {
      set_reg_value(r->arch, after, reg, &op->value);
      r->mark[reg] = 1;
    }
  }
}

static int collect_mem(tc_reader *r, const Tcbap__OperandValueList *l,
                       size_t *nmem, tc_error *err) {
  for (size_t i = 0; l && i < l->n_elem; i++) {
    const Tcbap__OperandInfo *op = l->elem[i];
    const Tcbap__MemOperand *mo = op->operand_info_specific->mem_operand;
    if (!mo)
      continue;
    if (r->le_mips) /* the value big-endian: back to memory order */
      for (size_t a = 0, b = op->value.len; a + 1 < b; a++, b--) {
        uint8_t t = op->value.data[a];
        op->value.data[a] = op->value.data[b - 1];
        op->value.data[b - 1] = t;
      }
    for (int kind = TC_MEM_READ; kind <= TC_MEM_WRITE; kind++) {
      if (kind == TC_MEM_READ ? !op->operand_usage->read
                              : !op->operand_usage->written)
        continue;
      if (op->value.len > UINT32_MAX)
        return rd_fail(r, err, "a %zu-byte memory operand", op->value.len);
      if (grow_mem(r, *nmem + 1, 0) < 0)
        return rd_fail(r, err, "out of memory");
      tc_mem_access *ma = &r->mem[(*nmem)++];
      ma->addr = mo->address & pc_mask(r->arch);
      ma->size = (uint32_t)op->value.len;
      ma->kind = (uint8_t)kind;
      ma->before = op->value.data;
      ma->after = op->value.data;
    }
  }
  return 0;
}

static int insn_event(tc_reader *r, const Tcbap__StdFrame *sf, tc_event *ev,
                      tc_error *err) {
  const tc_arch *a = r->arch;
  if (sf->rawbytes.len > 16)
    return rd_fail(r, err,
                   "frame %" PRIu64 ": %zu instruction bytes (at most 16)",
                   r->k - 1, sf->rawbytes.len);
  uint64_t pc = sf->address & pc_mask(a);
  memcpy(r->before, r->state, a->state_size);
  apply_regs(r, sf->operand_pre_list, r->before, NULL);
  apply_regs(r, sf->operand_post_list, r->before, NULL);
  tc_state_set(a, r->before, a->pc_reg, pc);
  memcpy(r->after, r->before, a->state_size);
  /* Falls through unless the PC is among the registers written. */
  tc_state_set(a, r->after, a->pc_reg, (pc + sf->rawbytes.len) & pc_mask(a));
  apply_regs(r, sf->operand_pre_list, NULL, r->after);
  apply_regs(r, sf->operand_post_list, NULL, r->after);
  r->mark[a->pc_reg] = 1;
  uint16_t nch = 0;
  for (int reg = 0; reg < a->nregs; reg++)
    if (r->mark[reg]) {
      r->mark[reg] = 0;
      const tc_reg_info *ri = &a->regs[reg];
      if (memcmp(r->before + ri->offset, r->after + ri->offset, ri->size))
        r->changed[nch++] = (uint16_t)reg;
    }
  memcpy(r->state, r->after, a->state_size);

  size_t nmem = 0;
  if (collect_mem(r, sf->operand_pre_list, &nmem, err) < 0 ||
      collect_mem(r, sf->operand_post_list, &nmem, err) < 0)
    return -1;
  /* A store's old bytes are not in the frame: they come from the memory
   * the trace has shown so far (zeros where it has not). */
  size_t need = 0;
  for (size_t i = 0; i < nmem; i++)
    if (r->mem[i].kind == TC_MEM_WRITE)
      need += r->mem[i].size;
  if (grow_mem(r, nmem, need) < 0)
    return rd_fail(r, err, "out of memory");
  size_t used = 0;
  for (size_t i = 0; i < nmem; i++)
    if (r->mem[i].kind == TC_MEM_WRITE) {
      tc_memimage_read(r->image, r->mem[i].addr, r->membuf + used,
                       r->mem[i].size);
      r->mem[i].before = r->membuf + used;
      used += r->mem[i].size;
    }

  memset(ev, 0, sizeof *ev);
  ev->kind = TC_EV_INSN;
  tc_insn_event *in = &ev->u.insn;
  in->index = r->insns++;
  in->pc = pc;
  in->tid = (uint32_t)sf->thread_id;
  in->size = (uint8_t)sf->rawbytes.len;
  if (sf->rawbytes.len)
    memcpy(in->bytes, sf->rawbytes.data, sf->rawbytes.len);
  if (r->le_mips)
    swap_words(in->bytes, in->bytes, in->size);
  in->nregs = nch;
  in->regs = r->changed;
  in->state_before = r->before;
  in->state_after = r->after;
  in->nmem = (uint32_t)nmem;
  in->mem = r->mem;
  r->tid = in->tid;
  r->last_pc = pc;
  r->last_compat = tc_arch_compat_trap(a, in->bytes, in->size);
  if (tc_memimage_apply(r->image, ev) < 0)
    return rd_fail(r, err, "out of memory");
  return 1;
}

static int64_t sign_extend(uint64_t v, unsigned bytes) {
  if (bytes >= 8)
    return (int64_t)v;
  unsigned sh = 64 - 8 * bytes;
  return (int64_t)(v << sh) >> sh;
}

/* Turns r->cur into an event. 1: *ev filled, 0: a frame without event. */
static int frame_event(tc_reader *r, tc_event *ev, tc_error *err) {
  const Tcbap__Frame *f = r->cur;
  const tc_arch *a = r->arch;
  if (f->std_frame)
    return insn_event(r, f->std_frame, ev, err);
  memset(ev, 0, sizeof *ev);
  if (f->key_frame) {
    apply_keyframe(r, f->key_frame);
    memcpy(r->key, r->state, a->state_size);
    ev->kind = TC_EV_KEYFRAME;
    ev->u.key.insn_index = r->insns;
    ev->u.key.tid = r->tid;
    ev->u.key.state = r->key;
    return 1;
  }
  if (f->modload_frame) {
    const Tcbap__ModloadFrame *m = f->modload_frame;
    ev->kind = TC_EV_MAP;
    ev->u.map.addr = m->low_address;
    ev->u.map.size = m->high_address >= m->low_address
                         ? m->high_address - m->low_address + 1
                         : 0;
    ev->u.map.name = m->module_name;
    ev->u.map.prot = 0; /* not held */
    return 1;
  }
  if (f->syscall_frame) {
    const Tcbap__SyscallFrame *s = f->syscall_frame;
    ev->kind = TC_EV_SYSCALL;
    tc_syscall_event *sy = &ev->u.sys;
    sy->insn_index = r->insns ? r->insns - 1 : 0;
    sy->tid = (uint32_t)s->thread_id;
    sy->nr = (uint32_t)s->number;
    sy->compat = r->last_compat; /* i386's number and name */
    sy->name =
        tc_arch_syscall_name(sy->compat ? tc_arch_compat_table(a) : a, sy->nr);
    for (size_t i = 0; i < s->argument_list->n_elem && i < 6; i++)
      sy->args[i] = (uint64_t)s->argument_list->elem[i];
    /* The return value is the trapping instruction's post list. */
    sy->ret = sign_extend(tc_state_get(a, r->state, a->sys.ret_reg),
                          a->regs[a->sys.ret_reg].size);
    /* mips: a3 set means the positive v0 is an errno */
    if (a->sys.err_reg >= 0 && tc_state_get(a, r->state, a->sys.err_reg))
      sy->ret = -sy->ret;
    if (sy->name && (strcmp(sy->name, "exit") == 0 ||
                     strcmp(sy->name, "exit_group") == 0)) {
      sy->ret = 0; /* it never returns */
      r->exited = 1;
      r->exit_status = (int)(sy->args[0] & 0xFF);
      r->faulted = 0; /* a fault before it was handled (icebp, int3) */
    }
    return 1;
  }
  if (f->exception_frame) {
    const Tcbap__ExceptionFrame *x = f->exception_frame;
    ev->kind = TC_EV_FAULT;
    tc_fault_event *ft = &ev->u.fault;
    ft->insn_index = r->insns ? r->insns - 1 : 0;
    ft->pc = x->has_from_addr ? x->from_addr : r->last_pc;
    ft->addr = ft->pc; /* the data address is not held */
    ft->signal = x->exception_number < 128 ? (int)x->exception_number : 0;
    ft->kind = ft->signal == SIGILL   ? TC_FAULT_INVALID_INSN
               : ft->signal == SIGFPE ? TC_FAULT_DIVIDE
                                      : TC_FAULT_OTHER;
    r->faulted = 1;
    r->fault_signal = ft->signal;
    return 1;
  }
  return 0; /* taint_intro_frame: nothing tracecorn models */
}

static int bap_next_event(tc_reader *r, tc_event *ev, tc_error *err) {
  for (;;) {
    if (r->done)
      return 0;
    int rc = next_frame(r, err);
    if (rc < 0) {
      r->done = 1;
      return -1;
    }
    if (rc == 0) {
      r->done = 1;
      memset(ev, 0, sizeof *ev);
      ev->kind = TC_EV_EXIT;
      tc_exit_event *x = &ev->u.exit;
      x->insn_count = r->insns;
      if (r->faulted) {
        x->reason = TC_EXIT_SIGNALED;
        x->signal = r->fault_signal;
        x->status = 128 + r->fault_signal;
      } else if (r->exited) {
        x->reason = TC_EXIT_EXITED;
        x->status = r->exit_status;
      } else {
        x->reason = TC_EXIT_MAX_INSNS;
        x->message = "the trace ends without an exit or a fault";
      }
      return 1;
    }
    rc = frame_event(r, ev, err);
    if (rc != 0) {
      if (rc < 0)
        r->done = 1;
      return rc;
    }
  }
}

static int bap_probe(const uint8_t *head, size_t n, const char *path) {
  (void)path;
  return n >= 8 && get_le64(head) == BAP_MAGIC;
}

static void bap_close_reader(tc_reader *r) {
  if (!r)
    return;
  if (r->fp)
    fclose(r->fp);
  arena_destroy(&r->ar);
  tc_memimage_free(r->image);
  for (size_t i = 0; r->argv && r->argv[i]; i++)
    free(r->argv[i]);
  free(r->argv);
  free(r->exe_path);
  free(r->toc);
  free(r->fbuf);
  free(r->abuf);
  free(r->state);
  free(r->before);
  free(r->after);
  free(r->key);
  free(r->initial);
  free(r->changed);
  free(r->mark);
  free(r->mem);
  free(r->membuf);
  free(r->path);
  free(r);
}

/* A trace whose writer never finished it (killed: the header's frame
 * count and TOC offset are still 0) holds whole frames up to the cut: the
 * reader takes them as the trace, with no TOC to check them against, and
 * says so. Sets r->n and r->T as if the file had ended there. */
static int recover_unfinished(tc_reader *r, tc_error *err) {
  uint64_t off = BAP_META_OFF, frames = 0;
  uint8_t b[8];
  for (;;) {
    if (r->fsize - off < 8 || read_at(r, off, b, 8, err) < 0)
      break;
    uint64_t size = get_le64(b);
    if (size > r->fsize - off - 8)
      break; /* the frame the cut went through */
    off += 8 + size;
    frames++;
  }
  if (frames == 0)
    return rd_fail(r, err,
                   "the trace was not finished (its TOC offset is 0) and "
                   "holds no whole meta frame");
  r->n = frames - 1; /* the meta frame is not one of them */
  r->T = off;
  r->m = UINT64_MAX; /* no TOC entries */
  r->ntoc = 0;
  r->toc = calloc(1, sizeof *r->toc);
  if (!r->toc)
    return rd_fail(r, err, "out of memory");
  /* said once for a file, though a command may open it several times */
  static char said[4096];
  if (strcmp(said, r->path) != 0) {
    snprintf(said, sizeof said, "%s", r->path);
    tc_notice("bap: %s: not finished (no TOC; killed?): read the %" PRIu64
              " whole frames before the cut at 0x%" PRIx64,
              r->path, r->n, r->fsize);
  }
  return 0;
}

/* Header, TOC and meta frame. */
static int read_container(tc_reader *r, tc_error *err) {
  uint8_t h[BAP_HEADER_SIZE];
  if (r->fsize < BAP_HEADER_SIZE)
    return rd_fail(r, err,
                   "%" PRIu64 " bytes: too short for the 48-byte "
                   "header",
                   r->fsize);
  if (read_at(r, 0, h, sizeof h, err) < 0)
    return -1;
  if (get_le64(h) != BAP_MAGIC)
    return rd_fail(r, err,
                   "bad magic 0x%016" PRIx64 " (not a BAP frames "
                   "trace)",
                   get_le64(h));
  r->version = get_le64(h + 8);
  r->bfd_arch = get_le64(h + 16);
  r->bfd_mach = get_le64(h + 24);
  r->n = get_le64(h + 32);
  r->T = get_le64(h + 40);
  if (r->version < 2 || r->version > 3)
    return rd_fail(r, err, "trace version %" PRIu64 " (readers take 2 or 3)",
                   r->version);
  r->arch = bap_arch_from_numbers(r->bfd_arch, r->bfd_mach);
  /* mips64 is tracecorn's only if the meta frame says little-endian */
  int mips64 = r->bfd_arch == 8 && (r->bfd_mach == 64 || r->bfd_mach == 65);
  if (!r->arch && !mips64)
    return rd_fail(r, err,
                   "BFD arch %" PRIu64 " mach %" PRIu64
                   " is no architecture tracecorn knows",
                   r->bfd_arch, r->bfd_mach);
  if (r->T == 0 && r->n == 0) {
    if (recover_unfinished(r, err) < 0)
      return -1;
  } else if (r->T == 0) {
    return rd_fail(r, err, "the TOC offset is 0: the trace was not finished");
  } else {
    if (r->T < BAP_META_OFF + 9 || r->T > r->fsize - 8)
      return rd_fail(r, err,
                     "TOC offset 0x%" PRIx64 " is outside the file (%" PRIu64
                     " bytes)",
                     r->T, r->fsize);
    uint8_t b[8];
    if (read_at(r, r->T, b, 8, err) < 0)
      return -1;
    r->m = get_le64(b);
    if (r->m == 0)
      return rd_fail(r, err, "the TOC says 0 frames per entry");
    /* Every frame takes at least 9 bytes. */
    if (r->n > (r->T - BAP_META_OFF) / 9)
      return rd_fail(r, err, "%" PRIu64 " frames cannot fit before the TOC",
                     r->n);
    uint64_t tail = r->fsize - r->T - 8;
    uint64_t ceil_n = r->n / r->m + (r->n % r->m != 0);
    uint64_t cnt = tail / 8;
    /* ceil(n/m) entries (the current C++ reader, TCG plugin, tracecorn);
     * one fewer is what libtrace's writer and qemu tracewrap wrote. */
    if (tail % 8 != 0 || (cnt != ceil_n && (ceil_n == 0 || cnt != ceil_n - 1)))
      return rd_fail(r, err,
                     "the TOC does not end at EOF: %" PRIu64
                     " bytes after it for n=%" PRIu64 ", m=%" PRIu64
                     " (expected %" PRIu64 " entries of 8 bytes)",
                     tail, r->n, r->m, ceil_n);
    r->ntoc = cnt;
    r->toc = calloc(cnt ? cnt : 1, sizeof *r->toc);
    if (!r->toc)
      return rd_fail(r, err, "out of memory");
    for (uint64_t j = 0; j < cnt; j++) {
      if (read_at(r, r->T + 8 + 8 * j, b, 8, err) < 0)
        return -1;
      r->toc[j] = get_le64(b);
      uint64_t frame = (j + 1) * r->m;
      int ok = frame < r->n ? r->toc[j] > BAP_META_OFF && r->toc[j] < r->T &&
                                  (j == 0 || r->toc[j] > r->toc[j - 1])
                            : r->toc[j] == r->T;
      if (!ok)
        return rd_fail(r, err,
                       "TOC entry %" PRIu64 " (frame %" PRIu64
                       ") is offset 0x%" PRIx64 ", not a frame before the TOC",
                       j, frame, r->toc[j]);
    }
  }
  /* The meta frame. */
  uint64_t off = BAP_META_OFF;
  uint8_t *mb = NULL;
  size_t mcap = 0, mlen = 0;
  if (read_sized(r, &off, r->T, &mb, &mcap, &mlen, "meta frame", 0, err) < 0) {
    free(mb);
    return -1;
  }
  tc_error why = {{0}};
  Tcbap__MetaFrame *meta = NULL;
  if (bap_check_message("meta_frame", mb, mlen, &why) < 0 ||
      !(meta = tcbap__meta_frame__unpack(NULL, mlen, mb))) {
    free(mb);
    return rd_fail(r, err, "meta frame: %s",
                   why.msg[0] ? why.msg : "protobuf-c cannot unpack it");
  }
  free(mb);
  int rc = 0;
  r->exe_path = strdup(meta->target->path);
  r->argv = calloc(meta->target->n_args + 1, sizeof *r->argv);
  if (!r->exe_path || !r->argv)
    rc = rd_fail(r, err, "out of memory");
  for (size_t i = 0; rc == 0 && i < meta->target->n_args; i++)
    if (!(r->argv[i] = strdup(meta->target->args[i])))
      rc = rd_fail(r, err, "out of memory");
  r->info.argc = (int)meta->target->n_args;
  /* BAP's mips is big-endian; tracecorn's little-endian mips traces say
   * what they are in the last tracer argument. */
  const Tcbap__Tracer *tr = meta->tracer;
  snprintf(r->writer, sizeof r->writer, "%s%s%s", tr->name ? tr->name : "",
           tr->version && tr->version[0] ? " " : "",
           tr->version ? tr->version : "");
  const char *last = tr->n_args ? tr->args[tr->n_args - 1] : "";
  if (rc == 0 && r->bfd_arch == 8) {
    const tc_arch *le =
        tc_arch_by_id(mips64 ? TC_ARCH_MIPS64EL : TC_ARCH_MIPSEL);
    if (le && strcmp(last, bap_le_mips_marker(le)) == 0) {
      r->arch = le;
      r->le_mips = 1;
    } else if (mips64)
      rc = rd_fail(r, err,
                   "BFD arch 8 mach %" PRIu64
                   " is big-endian mips64, which tracecorn has no arch for",
                   r->bfd_mach);
  }
  tcbap__meta_frame__free_unpacked(meta, NULL);
  r->first = off;
  r->pos = off;
  if (rc == 0 && r->n && r->ntoc && r->toc[0] != r->T && r->toc[0] <= off)
    rc = rd_fail(r, err, "TOC entry 0 points into the meta frame");
  return rc;
}

/* The entry point and initial state: the frames up to the first
 * std_frame, then back to frame 0. */
static int prescan(tc_reader *r, tc_error *err) {
  const tc_arch *a = r->arch;
  for (uint64_t i = 0; i < 65536; i++) {
    int rc = next_frame(r, err);
    if (rc < 0)
      return -1;
    if (rc == 0)
      break;
    if (r->cur->key_frame)
      apply_keyframe(r, r->cur->key_frame);
    if (r->cur->std_frame) {
      const Tcbap__StdFrame *sf = r->cur->std_frame;
      apply_regs(r, sf->operand_pre_list, r->state, NULL);
      apply_regs(r, sf->operand_post_list, r->state, NULL);
      r->info.entry = sf->address & pc_mask(a);
      tc_state_set(a, r->state, a->pc_reg, r->info.entry);
      break;
    }
  }
  memcpy(r->initial, r->state, a->state_size);
  memset(r->state, 0, a->state_size);
  r->cur = NULL;
  arena_reset(&r->ar);
  r->pos = r->first;
  r->k = 0;
  r->tid = 0;
  return 0;
}

static tc_reader *bap_open_reader(const char *path, tc_error *err) {
  tc_reader *r = calloc(1, sizeof *r);
  if (!r || !(r->path = strdup(path))) {
    free(r);
    tc_error_set(err, "bap: out of memory");
    return NULL;
  }
  r->alloc.alloc = arena_alloc;
  r->alloc.free = arena_free;
  r->alloc.allocator_data = &r->ar;
  r->fp = tc_infile_open(path, TC_INFILE_SEEK, "bap", err);
  if (!r->fp)
    goto fail;
  setvbuf(r->fp, NULL, _IOFBF, 1 << 20);
  struct stat st;
  if (fstat(fileno(r->fp), &st) != 0 || !S_ISREG(st.st_mode)) {
    tc_error_set(err, "bap: %s: not a regular file", path);
    goto fail;
  }
  r->fsize = (uint64_t)st.st_size;
  if (read_container(r, err) < 0)
    goto fail;
  const tc_arch *a = r->arch;
  size_t ss = a->state_size;
  r->state = calloc(1, ss);
  r->before = calloc(1, ss);
  r->after = calloc(1, ss);
  r->key = calloc(1, ss);
  r->initial = calloc(1, ss);
  r->changed = calloc(a->nregs, sizeof *r->changed);
  r->mark = calloc(a->nregs, 1);
  r->image = tc_memimage_new();
  if (!r->state || !r->before || !r->after || !r->key || !r->initial ||
      !r->changed || !r->mark || !r->image) {
    tc_error_set(err, "bap: out of memory");
    goto fail;
  }
  rmap_init(r);
  if (prescan(r, err) < 0)
    goto fail;
  r->info.arch = a;
  r->info.exe_path = r->exe_path;
  r->info.argv = (const char *const *)r->argv;
  r->info.has_memory = 1;
  r->info.initial_state = r->initial;
  return r;
fail:
  bap_close_reader(r);
  return NULL;
}

static const tc_trace_info *bap_reader_info(tc_reader *r) { return &r->info; }

static const char *bap_reader_writer(tc_reader *r) {
  return r->writer[0] ? r->writer : NULL;
}

uint64_t bap_reader_frame_count(tc_reader *r) { return r->n; }

int bap_reader_frame_at(tc_reader *r, uint64_t k, const uint8_t **data,
                        size_t *len, tc_error *err) {
  if (k >= r->n)
    return rd_fail(r, err, "no frame %" PRIu64 " (the trace has %" PRIu64 ")",
                   k, r->n);
  uint64_t j = k / r->m;
  if (j && j - 1 >= r->ntoc)
    return rd_fail(r, err, "the TOC has no entry for frame %" PRIu64, j * r->m);
  uint64_t off = j ? r->toc[j - 1] : r->first;
  size_t n = 0;
  for (uint64_t i = j * r->m; i <= k; i++)
    if (read_sized(r, &off, r->T, &r->abuf, &r->acap, &n, "frame", i, err) < 0)
      return -1;
  tc_error why = {{0}};
  if (bap_check_message("frame", r->abuf, n, &why) < 0)
    return rd_fail(r, err, "frame %" PRIu64 ": %s", k, why.msg);
  *data = r->abuf;
  *len = n;
  return 0;
}

const tc_format tc_format_bap = {
    .name = "bap",
    .description = "BAP frames trace (.frames): protobuf frames with a TOC",
    .caps = TC_CAP_INSN_BYTES | TC_CAP_MEM | TC_CAP_MEM_KIND |
            TC_CAP_MEM_EXACT | TC_CAP_SYSCALLS | TC_CAP_FAULTS | TC_CAP_TID |
            TC_CAP_SYSCALL_COMPAT | TC_CAP_MODULES,
    .holds_reg = NULL,
    .extension = bap_extension,
    .supports = bap_supports,
    .open_writer = bap_open_writer,
    .write_event = bap_write_event,
    .close_writer = bap_close_writer,
    .probe = bap_probe,
    .open_reader = bap_open_reader,
    .reader_info = bap_reader_info,
    .reader_writer = bap_reader_writer,
    .next_event = bap_next_event,
    .close_reader = bap_close_reader,
};
