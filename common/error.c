/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <stdarg.h>
#include <stdio.h>

#include "tracecorn/tracecorn.h"

void tc_error_set(tc_error *err, const char *fmt, ...) {
  if (!err)
    return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err->msg, sizeof err->msg, fmt, ap);
  va_end(ap);
}
