/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The snappy framing format (github.com/google/snappy framing_format.txt,
 * as golang/snappy reads and writes it): stream identifier, chunks of at
 * most 65536 decoded bytes, masked CRC-32C of each chunk's decoded data.
 * The block codec is Debian's libsnappy; framing and CRC are here. Used
 * by the UCIR module (usercorn's trace body). */
#ifndef TC_SNAPPY_FRAME_H
#define TC_SNAPPY_FRAME_H

#include <stddef.h>
#include <stdint.h>

enum {
  SNAPPY_FRAME_MAX_DATA = 65536, /* decoded bytes per chunk */
  /* Largest chunk golang/snappy accepts: CRC + MaxEncodedLen(65536). */
  SNAPPY_FRAME_MAX_CHUNK = 4 + 76490,
  SNAPPY_FRAME_ID_LEN = 10 /* ff 06 00 00 "sNaPpY" */
};

extern const uint8_t tc_snappy_stream_id[SNAPPY_FRAME_ID_LEN];

/* CRC-32C (Castagnoli), reflected, init/xorout ~0: crc32c("123456789") =
 * 0xe3069283. */
uint32_t tc_crc32c(const void *data, size_t n);
/* The framing format's masked CRC: ((c >> 15) | (c << 17)) + 0xa282ead8. */
uint32_t tc_snappy_mask(uint32_t crc);

/* Bytes a chunk of n <= 65536 data bytes can take (header included). */
size_t tc_snappy_chunk_bound(size_t n);
/* Encodes data (n <= 65536 bytes) as one chunk into out (room for
 * tc_snappy_chunk_bound(n)); returns its length. compress = 0 always
 * writes an uncompressed chunk; otherwise a compressed chunk is written
 * when it saves at least 1/8 (golang/snappy's rule). */
size_t tc_snappy_chunk(uint8_t *out, const uint8_t *data, size_t n,
                       int compress);

/* Decodes the payload of one chunk of the given type (length plen, at most
 * SNAPPY_FRAME_MAX_CHUNK) into out (room for 65536 bytes).
 * Returns 1 with *outlen set for a data chunk, 0 for a chunk without data
 * (stream identifier, skippable, padding), -1 with *why set if the chunk
 * is corrupt or of a reserved type. */
int tc_snappy_unchunk(uint8_t type, const uint8_t *payload, size_t plen,
                      uint8_t *out, size_t *outlen, const char **why);

#endif
