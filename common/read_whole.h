/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A whole small file in memory (the CLI's --raw code, strace -f's
 * per-process listings). */
#ifndef TC_COMMON_READ_WHOLE_H
#define TC_COMMON_READ_WHOLE_H

#include <stddef.h>

/* The bytes of path (malloc'ed, one byte of room after them) and their
 * count in *n, or NULL with errno set (EFBIG past 1 GiB). */
void *tc_read_whole(const char *path, size_t *n);

#endif
