/* recorder/: Unicorn hooks -> delta encoder -> tc_event stream.
 * The recorder knows the emulator and the event model, never a format. */
#ifndef TC_RECORDER_H
#define TC_RECORDER_H

#include "emu/emu.h"
#include "tracecorn/tracecorn.h"

typedef struct tc_recorder tc_recorder;

/* Receives each event; returning -1 does not stop the recording (the
 * session decides what a failed output means). */
typedef void (*tc_emit_fn)(void *ctx, const tc_event *ev);

tc_recorder *tc_recorder_new(tc_emu *emu, tc_emit_fn emit, void *ctx,
                             tc_error *err);
void tc_recorder_free(tc_recorder *r);
/* Emits the initial MAP events and keyframe, runs the guest to its end
 * (exit, fault, --max-insns, stop request), emits the final events.
 * Returns -1 only if the emulator itself failed. */
int tc_recorder_run(tc_recorder *r, tc_run_result *res, tc_error *err);
/* Async-signal-safe stop request. */
void tc_recorder_stop(tc_recorder *r);

#endif
