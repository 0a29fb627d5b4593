/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A hand-written protobuf encoder for the BAP writer's per-instruction
 * frame (frame{std_frame}), the hot path of writers/bap/bap.c. It produces
 * exactly the bytes protobuf-c's generic packer gives for the same
 * message as writers/bap/bap.c builds it: fields in field-number order,
 * minimal varints, required fields always, operand_post_list always,
 * mode only when given; every operand_info has its usage's two flags set
 * and taint_info {no_taint: true}. tests/test_bap.c packs frames both ways
 * and compares. The rare frames (meta, key, syscall, exception, modload)
 * stay with protobuf-c. */
#ifndef TC_BAP_PACK_H
#define TC_BAP_PACK_H

#include <stddef.h>
#include <stdint.h>

/* Room for an operand head (bap_operand_head) with a register name of up
 * to BAP_NAME_MAX - 1 bytes. */
enum { BAP_NAME_MAX = 24, BAP_HEAD_MAX = 64 };
/* bap_pack_std_frame may write up to this many bytes past the frame's
 * end (it copies every head whole). */
enum { BAP_PACK_SLACK = BAP_HEAD_MAX };

/* One element of an operand_value_list: head is its bytes up to the
 * value (the element's key and length, operand_info fields 1-4, field 5's
 * key and length), head_len of them, in a buffer of BAP_HEAD_MAX bytes;
 * value the value's bytes. */
typedef struct bap_operand {
  const uint8_t *head;
  const uint8_t *value;
  uint32_t head_len, value_len;
} bap_operand;

/* Writes the head of an operand: a register (reg_name, shorter than
 * BAP_NAME_MAX) or, if reg_name is NULL, memory at addr. usage is
 * read or written (the other flag, index and base false); taint_info is
 * {no_taint: true}. Returns its length (<= BAP_HEAD_MAX). */
size_t bap_operand_head(uint8_t *out, const char *reg_name, uint64_t addr,
                        int32_t bit_length, int written, uint32_t value_len);

typedef struct bap_std_frame {
  uint64_t address, thread_id;
  const uint8_t *rawbytes;
  size_t nraw;
  const bap_operand *pre, *post;
  size_t npre, npost;
  const char *mode; /* NULL: no mode field */
  /* Set by bap_std_frame_size. */
  size_t pre_len, post_len, sf_len;
} bap_std_frame;

/* The packed size of frame{std_frame: f}; fills f's lengths. */
size_t bap_std_frame_size(bap_std_frame *f);
/* Packs frame{std_frame: f} (after bap_std_frame_size) at out, which has
 * room for its size + BAP_PACK_SLACK bytes; returns the frame's end. */
uint8_t *bap_pack_std_frame(const bap_std_frame *f, uint8_t *out);

#endif
