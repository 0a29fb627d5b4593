/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Snappy framing format and CRC-32C: see snappy_frame.h. */
#include "writers/io/snappy_frame.h"

#include <pthread.h>
#include <snappy-c.h>
#include <string.h>

const uint8_t tc_snappy_stream_id[SNAPPY_FRAME_ID_LEN] = {
    0xff, 0x06, 0x00, 0x00, 's', 'N', 'a', 'P', 'p', 'Y'};

/* Slicing-by-8 tables for the reflected Castagnoli polynomial. */
static uint32_t crc_tab[8][256];
static pthread_once_t crc_once = PTHREAD_ONCE_INIT;

static void crc_init(void) {
  for (uint32_t i = 0; i < 256; i++) {
    uint32_t c = i;
    for (int k = 0; k < 8; k++)
      c = (c >> 1) ^ (0x82f63b78u & (0u - (c & 1)));
    crc_tab[0][i] = c;
  }
  for (uint32_t i = 0; i < 256; i++)
    for (int t = 1; t < 8; t++)
      crc_tab[t][i] =
          (crc_tab[t - 1][i] >> 8) ^ crc_tab[0][crc_tab[t - 1][i] & 0xff];
}

uint32_t tc_crc32c(const void *data, size_t n) {
  pthread_once(&crc_once, crc_init);
  const uint8_t *p = data;
  uint32_t c = 0xffffffffu;
  while (n >= 8) {
    uint32_t lo = c ^ ((uint32_t)p[0] | (uint32_t)p[1] << 8 |
                       (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24);
    c = crc_tab[7][lo & 0xff] ^ crc_tab[6][(lo >> 8) & 0xff] ^
        crc_tab[5][(lo >> 16) & 0xff] ^ crc_tab[4][lo >> 24] ^
        crc_tab[3][p[4]] ^ crc_tab[2][p[5]] ^ crc_tab[1][p[6]] ^
        crc_tab[0][p[7]];
    p += 8;
    n -= 8;
  }
  while (n--)
    c = (c >> 8) ^ crc_tab[0][(c ^ *p++) & 0xff];
  return ~c;
}

uint32_t tc_snappy_mask(uint32_t crc) {
  return ((crc >> 15) | (crc << 17)) + 0xa282ead8u;
}

static void put_u24(uint8_t *p, size_t v) {
  p[0] = (uint8_t)v;
  p[1] = (uint8_t)(v >> 8);
  p[2] = (uint8_t)(v >> 16);
}

static void put_u32(uint8_t *p, uint32_t v) {
  for (int i = 0; i < 4; i++)
    p[i] = (uint8_t)(v >> (8 * i));
}

static uint32_t get_u32(const uint8_t *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
         (uint32_t)p[3] << 24;
}

size_t tc_snappy_chunk_bound(size_t n) {
  size_t c = snappy_max_compressed_length(n);
  return 8 + (c > n ? c : n);
}

size_t tc_snappy_chunk(uint8_t *out, const uint8_t *data, size_t n,
                       int compress) {
  uint32_t crc = tc_snappy_mask(tc_crc32c(data, n));
  put_u32(out + 4, crc);
  if (compress) {
    size_t clen = snappy_max_compressed_length(n);
    if (snappy_compress((const char *)data, n, (char *)out + 8, &clen) ==
            SNAPPY_OK &&
        clen < n - n / 8) {
      out[0] = 0x00;
      put_u24(out + 1, clen + 4);
      return 8 + clen;
    }
  }
  out[0] = 0x01;
  put_u24(out + 1, n + 4);
  memcpy(out + 8, data, n);
  return 8 + n;
}

int tc_snappy_unchunk(uint8_t type, const uint8_t *payload, size_t plen,
                      uint8_t *out, size_t *outlen, const char **why) {
  if (plen > SNAPPY_FRAME_MAX_CHUNK) {
    *why = "chunk too large";
    return -1;
  }
  if (type == 0xff) {
    if (plen != 6 || memcmp(payload, tc_snappy_stream_id + 4, 6) != 0) {
      *why = "bad stream identifier";
      return -1;
    }
    return 0;
  }
  if (type >= 0x80)
    return 0; /* skippable (0xfe: padding) */
  if (type > 0x01) {
    *why = "reserved unskippable chunk type";
    return -1;
  }
  if (plen < 4) {
    *why = "chunk shorter than its checksum";
    return -1;
  }
  size_t n;
  if (type == 0x00) {
    if (snappy_uncompressed_length((const char *)payload + 4, plen - 4, &n) !=
        SNAPPY_OK) {
      *why = "corrupt snappy block";
      return -1;
    }
    if (n > SNAPPY_FRAME_MAX_DATA) {
      *why = "chunk decodes to more than 65536 bytes";
      return -1;
    }
    if (snappy_uncompress((const char *)payload + 4, plen - 4, (char *)out,
                          &n) != SNAPPY_OK) {
      *why = "corrupt snappy block";
      return -1;
    }
  } else {
    n = plen - 4;
    if (n > SNAPPY_FRAME_MAX_DATA) {
      *why = "uncompressed chunk of more than 65536 bytes";
      return -1;
    }
    memcpy(out, payload + 4, n);
  }
  if (tc_snappy_mask(tc_crc32c(out, n)) != get_u32(payload)) {
    *why = "checksum mismatch";
    return -1;
  }
  *outlen = n;
  return 1;
}
