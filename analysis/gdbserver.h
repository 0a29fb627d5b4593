/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The GDB remote serial protocol over a recording (tracecorn gdbserver,
 * docs/gdbserver.md): a session takes the client's bytes (gs_feed) and
 * writes its replies through a callback; gs_serve_fds runs one over a
 * client's descriptors. The transports (socket, stdio) and the options are
 * tools/cmd_gdbserver.c's; the fuzz harness gdbrsp feeds gs_feed directly. */
#ifndef TC_GDBSERVER_H
#define TC_GDBSERVER_H

#include <stddef.h>
#include <stdint.h>

#include "analysis/replay.h"
#include "tracecorn/tracecorn.h"

typedef struct gs_session gs_session;

/* A session at rp's position; replies go to write(wctx, ...) (non-zero:
 * the client is gone). NULL with err set where the arch has no GDB
 * register layout. */
gs_session *gs_new(tc_replay *rp,
                   int (*write)(void *ctx, const char *buf, size_t n),
                   void *wctx, tc_error *err);
/* Bytes from the client; 1 when the session is over, else 0. */
int gs_feed(gs_session *s, const uint8_t *buf, size_t n);
/* Runs (continue) ask fn(wctx) now and then whether the client sent a
 * Ctrl-C, and stop with SIGINT where they got to if so. */
void gs_set_interrupt(gs_session *s, int (*fn)(void *ctx));
void gs_free(gs_session *s);

/* Serves one client reading in and writing out until it leaves (or k, D,
 * vKill): 0, a clean end; -1 with err set if the session could not start. */
int gs_serve_fds(tc_replay *rp, int in, int out, tc_error *err);

#endif
