/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Private helpers of the BAP frames format module (writers/bap/bap.c), for
 * its tests. See docs/formats/bap.md. */
#ifndef TC_BAP_H
#define TC_BAP_H

#include <stddef.h>
#include <stdint.h>

#include "writers/format.h"

#define BAP_MAGIC 7456879624156307493ull /* 0x677C28828AAF6025 */

enum {
  BAP_VERSION = 3,      /* std_frame.mode exists */
  BAP_HEADER_SIZE = 48, /* magic, version, arch, mach, n, T */
  BAP_TOC_DEFAULT = 64  /* frames per TOC entry (qemu, TCG plugin) */
};

/* BFD arch / mach numbers of a tracecorn arch: 0, or -1 with a message
 * if BAP frames cannot hold it. */
int bap_arch_numbers(const tc_arch *arch, uint64_t *bfd_arch,
                     uint64_t *bfd_mach, tc_error *err);
/* BAP's mips is big-endian. tracecorn writes little-endian mips (mipsel,
 * mips64el) as BAP's mips 8/32 and 8/64 with every value big-endian, as
 * BAP decodes it: instruction words, registers and each memory access's
 * value (its bytes reversed). The meta frame's last tracer argument says
 * so; this returns it ("arch=mipsel"), or NULL for other arches. */
const char *bap_le_mips_marker(const tc_arch *arch);
/* 1 if register values in frames are big-endian: big-endian targets and
 * little-endian mips. */
int bap_values_big_endian(const tc_arch *arch);
/* The tracecorn arch a header's numbers name, or NULL. Little-endian mips
 * is told by the meta frame (bap_le_mips_marker), not by these. */
const tc_arch *bap_arch_from_numbers(uint64_t bfd_arch, uint64_t bfd_mach);
/* The name a register has in a frame: upper case, as BAP's QEMU and Pin
 * tracers spell it ("RAX", "RFLAGS", "FS_BASE", "XMM0", "ST0"). */
void bap_reg_name(const tc_arch *arch, int reg, char *out, size_t max);

/* Checks one serialized message against the rules of BAP's readers
 * (piqirun and libtrace): wire types, bools 0/1, required fields present,
 * variants with exactly one option, flag options = 1, list elements with
 * code 1 only, no packed lists. type is "frame" or "meta_frame". 0, or -1
 * with the first violation in err (a field path). */
int bap_check_message(const char *type, const uint8_t *data, size_t len,
                      tc_error *err);

/* Reader extras. The number of frames the header announces (the meta
 * frame not counted), and frame k's serialized bytes found through the
 * TOC (entry k / m, then k % m frames on), checked with
 * bap_check_message. *data stays valid until the next call on r. Does not
 * disturb next_event's position. */
uint64_t bap_reader_frame_count(tc_reader *r);
int bap_reader_frame_at(tc_reader *r, uint64_t k, const uint8_t **data,
                        size_t *len, tc_error *err);

#endif
