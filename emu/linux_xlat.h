/* Linux ABI values that differ between guest arches and the host: open
 * flags, and (for the arches that have their own) errno numbers. The
 * syscall layer works in host values; these convert at its edges. */
#ifndef TC_LINUX_XLAT_H
#define TC_LINUX_XLAT_H

#include "tracecorn/tracecorn.h"

/* Guest O_* bits -> host O_* bits, and back. Unknown bits pass through. */
int tc_xlat_open_to_host(const tc_arch *arch, int guest_flags);
int tc_xlat_open_to_guest(const tc_arch *arch, int host_flags);
/* A host errno as the guest numbers it. */
int tc_xlat_errno_to_guest(const tc_arch *arch, int host_errno);

#endif
