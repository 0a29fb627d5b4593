/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Hand-written protobuf encoding of frame{std_frame} for the BAP writer:
 * see writers/bap/bap_pack.h. Field keys are (number << 3) | wire type:
 * 0 varint, 2 length-delimited. */
#include "writers/bap/bap_pack.h"

#include "common/small_copy.h"

#include <string.h>

static inline size_t varint_size(uint64_t v) {
  size_t n = 1;
  while (v >= 0x80) {
    v >>= 7;
    n++;
  }
  return n;
}

static inline uint8_t *put_varint(uint8_t *p, uint64_t v) {
  while (v >= 0x80) {
    *p++ = (uint8_t)(v | 0x80);
    v >>= 7;
  }
  *p++ = (uint8_t)v;
  return p;
}

/* A length-delimited field of n bytes, key and length included. */
static inline size_t delimited_size(size_t n) { return 1 + varint_size(n) + n; }

size_t bap_operand_head(uint8_t *out, const char *reg_name, uint64_t addr,
                        int32_t bit_length, int written, uint32_t value_len) {
  /* operand_info_specific {reg_operand {name}} or {mem_operand {address}} */
  size_t name_len = reg_name ? strlen(reg_name) : 0;
  size_t inner = reg_name ? delimited_size(name_len) : 1 + varint_size(addr);
  size_t spec = delimited_size(inner);
  uint32_t zz = ((uint32_t)bit_length << 1) ^ (uint32_t)(bit_length >> 31);
  size_t info = delimited_size(spec) + 1 + varint_size(zz) +
                10 /* operand_usage */ + 4 /* taint_info */ +
                delimited_size(value_len);
  uint8_t *p = out;
  *p++ = 0x0a; /* elem = 1 */
  p = put_varint(p, info);
  *p++ = 0x0a; /* operand_info_specific = 1 */
  p = put_varint(p, spec);
  if (reg_name) {
    *p++ = 0x12; /* reg_operand = 2 */
    p = put_varint(p, inner);
    *p++ = 0x0a; /* name = 1 */
    p = put_varint(p, name_len);
    memcpy(p, reg_name, name_len);
    p += name_len;
  } else {
    *p++ = 0x0a; /* mem_operand = 1 */
    p = put_varint(p, inner);
    *p++ = 0x08; /* address = 1 */
    p = put_varint(p, addr);
  }
  *p++ = 0x10; /* bit_length = 2, sint32 */
  p = put_varint(p, zz);
  /* operand_usage = 3 {read, written, index = 0, base = 0} */
  const uint8_t usage[10] = {0x1a,      8,    0x08, !written, 0x10,
                             !!written, 0x18, 0,    0x20,     0};
  memcpy(p, usage, sizeof usage);
  p += sizeof usage;
  /* taint_info = 4 {no_taint = 1: true} */
  const uint8_t taint[4] = {0x22, 2, 0x08, 1};
  memcpy(p, taint, sizeof taint);
  p += sizeof taint;
  *p++ = 0x2a; /* value = 5 */
  p = put_varint(p, value_len);
  return (size_t)(p - out);
}

static size_t list_len(const bap_operand *ops, size_t n) {
  size_t len = 0;
  for (size_t i = 0; i < n; i++)
    len += ops[i].head_len + ops[i].value_len;
  return len;
}

size_t bap_std_frame_size(bap_std_frame *f) {
  f->pre_len = list_len(f->pre, f->npre);
  f->post_len = list_len(f->post, f->npost);
  f->sf_len = 1 + varint_size(f->address) + 1 + varint_size(f->thread_id) +
              delimited_size(f->nraw) + delimited_size(f->pre_len) +
              delimited_size(f->post_len) +
              (f->mode ? delimited_size(strlen(f->mode)) : 0);
  return delimited_size(f->sf_len);
}

static uint8_t *put_list(uint8_t *p, const bap_operand *ops, size_t n) {
  for (size_t i = 0; i < n; i++) {
    memcpy(p, ops[i].head, BAP_HEAD_MAX); /* whole: see BAP_PACK_SLACK */
    p += ops[i].head_len;
    /* inline by size (common/small_copy.h): a libc call per head and
     * value was a tenth of the writer's time */
    tc_copy_small(p, ops[i].value, ops[i].value_len);
    p += ops[i].value_len;
  }
  return p;
}

uint8_t *bap_pack_std_frame(const bap_std_frame *f, uint8_t *p) {
  *p++ = 0x0a; /* frame.std_frame = 1 */
  p = put_varint(p, f->sf_len);
  *p++ = 0x08; /* address = 1 */
  p = put_varint(p, f->address);
  *p++ = 0x10; /* thread_id = 2 */
  p = put_varint(p, f->thread_id);
  *p++ = 0x1a; /* rawbytes = 3 */
  p = put_varint(p, f->nraw);
  memcpy(p, f->rawbytes, f->nraw);
  p += f->nraw;
  *p++ = 0x22; /* operand_pre_list = 4 */
  p = put_varint(p, f->pre_len);
  p = put_list(p, f->pre, f->npre);
  *p++ = 0x2a; /* operand_post_list = 5 */
  p = put_varint(p, f->post_len);
  p = put_list(p, f->post, f->npost);
  if (f->mode) {
    size_t n = strlen(f->mode);
    *p++ = 0x32; /* mode = 6 */
    p = put_varint(p, n);
    memcpy(p, f->mode, n);
    p += n;
  }
  return p;
}
