/* STUB: replaced by the trac format module. */
#include "tracecorn/tracecorn.h"

static int trac_supports(const tc_arch *arch, tc_error *err) {
  (void)arch;
  tc_error_set(err, "trac: not implemented yet");
  return -1;
}
static const char *trac_extension(const tc_arch *arch) {
  (void)arch;
  return ".trac";
}
const tc_format tc_format_trac = {
    .name = "trac",
    .description = "(not implemented)",
    .extension = trac_extension,
    .supports = trac_supports,
};
