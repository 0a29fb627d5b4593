/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Private to the UCIR module (ucir_write.c, ucir_read.c): the file layout
 * both sides share, the op numbers, and a growable byte buffer.
 * Facts: /work/shared/specs/ucir.md (what usercorn really writes and reads)
 * and ucir-usercorn.spec.txt (its PROTOCOL.md); user notes:
 * docs/formats/ucir.md.
 *
 * File = 74-byte header ("UCIR", version, arch[32], os[32], corder,
 * dorder), then the op stream: in usercorn's layout (the default) as one
 * snappy framing stream, in the spec layout raw. Ops are little-endian
 * packed records; FRAME/KEYFRAME and SYSCALL carry counted op lists. */
#ifndef TC_UCIR_INTERNAL_H
#define TC_UCIR_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "writers/format.h"

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

enum { LAYOUT_USERCORN = 0, LAYOUT_SPEC = 1 };
enum { UCIR_HEADER = 74 };
#define NONE ((size_t)-1)

/* A growable byte buffer. */
typedef struct ubuf {
  uint8_t *p;
  size_t len, cap;
} ubuf;

static inline int ub_reserve(ubuf *b, size_t more) {
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

static inline int ub_append(ubuf *b, const void *p, size_t n) {
  if (ub_reserve(b, n) < 0)
    return -1;
  if (n)
    memcpy(b->p + b->len, p, n);
  b->len += n;
  return 0;
}

/* The writer's entries of tc_format_ucir (defined in ucir_read.c). */
int ucir_holds_reg(const tc_arch *arch, int reg);
const char *ucir_extension(const tc_arch *arch);
int ucir_supports(const tc_arch *arch, tc_error *err);
tc_writer *ucir_open_writer(const char *path, const tc_trace_info *info,
                            tc_error *err);
int ucir_write_event(tc_writer *w, const tc_event *ev, tc_error *err);
int ucir_close_writer(tc_writer *w, tc_error *err);

#endif
