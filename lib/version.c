/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The library's version, for callers that must know which one they loaded
 * (the header's TC_VERSION_STRING is the one they were compiled against). */
#include "tracecorn/tracecorn.h"

const char *tc_version(void) { return TC_VERSION_STRING; }
