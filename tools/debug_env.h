/* tools/debug_env.h: the TRACECORN_* environment variables that switch
 * the library's speed paths and self-checks, mapped onto tc_options (the
 * library itself reads no environment for them). For the tracecorn
 * command and the benchmarks; header-only, not installed.
 *
 *   TRACECORN_REGFILE=off|check   tc_options.regfile
 *   TRACECORN_REGFILE_DEBUG       regfile_debug (set, any value)
 *   TRACECORN_WRITER_THREADS=0|1  writer_threads OFF | ON (else AUTO)
 *   TRACECORN_PIPE_CHECK=1        writer_threads_check
 *   TRACECORN_CONTINUOUS=0        not_continuous
 *
 * Unknown values leave the default, as the library did when it read
 * them. */
#ifndef TC_TOOLS_DEBUG_ENV_H
#define TC_TOOLS_DEBUG_ENV_H

#include <stdlib.h>
#include <string.h>

#include "tracecorn/tracecorn.h"

static inline int tc_env_is(const char *name, const char *value) {
  const char *v = getenv(name);
  return v && strcmp(v, value) == 0;
}

/* Sets the fields above in *o (after tc_options_init) from the
 * environment. */
static inline void tc_options_from_debug_env(tc_options *o) {
  if (tc_env_is("TRACECORN_REGFILE", "off"))
    o->regfile = TC_REGFILE_OFF;
  else if (tc_env_is("TRACECORN_REGFILE", "check"))
    o->regfile = TC_REGFILE_CHECK;
  if (getenv("TRACECORN_REGFILE_DEBUG"))
    o->regfile_debug = 1;
  if (tc_env_is("TRACECORN_WRITER_THREADS", "0"))
    o->writer_threads = TC_WRITER_THREADS_OFF;
  else if (tc_env_is("TRACECORN_WRITER_THREADS", "1"))
    o->writer_threads = TC_WRITER_THREADS_ON;
  if (tc_env_is("TRACECORN_PIPE_CHECK", "1"))
    o->writer_threads_check = 1;
  if (tc_env_is("TRACECORN_CONTINUOUS", "0"))
    o->not_continuous = 1;
}

#endif
