/* STUB: replaced by the tfile format module. */
#include "tracecorn/tracecorn.h"

static int tfile_supports(const tc_arch *arch, tc_error *err) {
  (void)arch;
  tc_error_set(err, "tfile: not implemented yet");
  return -1;
}
static const char *tfile_extension(const tc_arch *arch) {
  (void)arch;
  return ".tfile";
}
const tc_format tc_format_tfile = {
    .name = "tfile",
    .description = "(not implemented)",
    .extension = tfile_extension,
    .supports = tfile_supports,
};
