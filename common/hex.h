/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Hex digits as text formats and protocols write them (tfile, tenet, the
 * gdb remote protocol). */
#ifndef TC_HEX_H
#define TC_HEX_H

/* The value of hex digit c (either case), or -1 if c is none. */
static inline int tc_hex_digit(int c) {
  if (c >= '0' && c <= '9')
    return c - '0';
  if (c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  if (c >= 'A' && c <= 'F')
    return c - 'A' + 10;
  return -1;
}

#endif
