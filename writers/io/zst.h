/* SPDX-License-Identifier: GPL-2.0-or-later */
/* zstd-compressed traces: outputs named NAME.EXT.zst are compressed
 * (written plain under the temporary name, then compressed into the final
 * name: see outfile.h), and every reader takes a file whose content is a
 * zstd stream (told by its magic, whatever its name) as if it were the
 * decompressed file. */
#ifndef TC_ZST_H
#define TC_ZST_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "tracecorn/tracecorn.h"

/* The compression level of .zst outputs: fixed, so that one recording
 * always gives the same bytes (single-threaded, no timestamps). */
#define TC_ZST_LEVEL 3

/* How much a compressed input may decompress to, by default: 1000 times
 * its own size (tracecorn's traces compress 1x-130x; a zstd bomb reaches
 * 30000x), but at least 64 MiB and at most 16 GiB. Past it, reading fails
 * ("decompresses to more than ..."): no reader fills $TMPDIR or runs for
 * minutes on a small file. tc_set_max_decompressed (the CLI's
 * TRACECORN_MAX_DECOMPRESSED) replaces the rule with one size. */
#define TC_ZST_MAX_RATIO 1000u
#define TC_ZST_MIN_LIMIT (64ull << 20)
#define TC_ZST_MAX_LIMIT (16ull << 30)
/* The limit for an input of that many compressed bytes. */
uint64_t tc_zst_limit(uint64_t compressed);

/* 1 if the n bytes at p start with a zstd frame's magic (28 B5 2F FD). */
int tc_zst_magic(const uint8_t *p, size_t n);
/* 1 if path names a .zst output ("NAME.zst", NAME not empty). */
int tc_zst_name(const char *path);

/* Compresses the file src into dst (created or truncated) as one zstd
 * frame, streaming with bounded memory. 0, or -1 with a message (dst is
 * then removed). */
int tc_zst_compress_file(const char *src, const char *dst, tc_error *err);

/* The first bytes of a trace file as a reader sees them (decompressed if
 * it is zstd): up to max bytes into head. Returns the count, or -1 with a
 * message (cannot open, corrupt zstd data). */
long tc_infile_head(const char *path, uint8_t *head, size_t max, tc_error *err);

enum {
  TC_INFILE_STREAM = 0, /* the reader only reads forward */
  TC_INFILE_SEEK = 1    /* the reader seeks or needs fstat's size */
};

/* Opens a trace file for a reader: the file itself, or, if its content is
 * zstd, its decompressed bytes: TC_INFILE_STREAM decompresses as the
 * reader reads (a stream with no file descriptor: fileno() is -1);
 * TC_INFILE_SEEK decompresses it first into an unlinked temporary file
 * ($TMPDIR, else /tmp; memory stays bounded), which is a regular file the
 * reader can seek and fstat. NULL with a message "WHO: PATH: ..." on
 * failure (cannot open, corrupt or truncated zstd data, full disk). */
FILE *tc_infile_open(const char *path, int mode, const char *who,
                     tc_error *err);

/* strerror(errnum), except after a read of a TC_INFILE_STREAM stream
 * failed on bad zstd data (errno EBADMSG): what was wrong with it. */
const char *tc_infile_strerror(int errnum);

#endif
