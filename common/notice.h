/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The library's notices (tc_set_notice_handler): every layer says what it
 * has to say through tc_notice, never by writing to stderr itself. */
#ifndef TC_COMMON_NOTICE_H
#define TC_COMMON_NOTICE_H

/* One line, without the "tracecorn: " prefix or a newline. */
void tc_notice(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
