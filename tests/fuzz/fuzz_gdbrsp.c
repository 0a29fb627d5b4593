/* SPDX-License-Identifier: GPL-2.0-or-later */
/* libFuzzer harness for tracecorn gdbserver's protocol, the library module
 * analysis/gdbserver.c: the input is the byte stream a client sends (packets,
 * acks, noise), fed to one session over a recording of FZ_GUEST made once
 * (tc_session into /dev/shm) and indexed once (analysis/replay.h); every
 * input starts at position 0. Replies are formed and dropped. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <tracecorn/tracecorn.h>

#include "analysis/gdbserver.h"
#include "analysis/replay.h"

#ifndef FZ_GUEST
#error "build with -DFZ_GUEST=\"path of a guest program\""
#endif

static tc_replay *rp;

static int drop(void *ctx, const char *buf, size_t n) {
  (void)ctx;
  volatile char x = 0;
  for (size_t i = 0; i < n; i++)
    x ^= buf[i]; /* every reply byte must be readable */
  (void)x;
  return 0;
}

static void setup(void) {
  char path[256];
  snprintf(path, sizeof path, "/dev/shm/fuzz_gdbrsp-%d.tct", (int)getpid());
  tc_options o;
  tc_options_init(&o);
  o.quiet = 1;
  FILE *null = fopen("/dev/null", "w");
  if (!null)
    abort();
  o.stdout_fd = o.stderr_fd = fileno(null);
  tc_error err = {{0}};
  tc_session *s = tc_session_new(&o, &err);
  tc_run_result res;
  tc_run_result_init(&res);
  if (!s || tc_session_load_elf(s, FZ_GUEST, NULL, &err) ||
      tc_session_add_writer(s, tc_format_by_name("tct"), path, &err) ||
      tc_session_run(s, &res, &err)) {
    fprintf(stderr, "fuzz_gdbrsp: recording %s: %s\n", FZ_GUEST, err.msg);
    abort();
  }
  tc_session_free(s);
  fclose(null);
  rp = tc_replay_open(path, NULL, 64, &err);
  unlink(path);
  if (!rp) {
    fprintf(stderr, "fuzz_gdbrsp: %s\n", err.msg);
    abort();
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (!rp)
    setup();
  tc_error err = {{0}};
  if (tc_replay_seek(rp, 0, &err))
    abort();
  gs_session *s = gs_new(rp, drop, NULL, &err);
  if (!s)
    abort();
  gs_feed(s, data, size);
  gs_free(s);
  return 0;
}
