/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Output files appear only when complete: a writer writes to a temporary
 * name beside the final one, renamed over it once closed successfully, so
 * a crash or a failed write never leaves a half trace under the final
 * name (the partial one stays readable under its temporary name). */
#ifndef TC_OUTFILE_H
#define TC_OUTFILE_H

#include <stddef.h>
#include <stdio.h>

#include "tracecorn/tracecorn.h"

/* The name to write `final` under: "DIR/NAME.partial.EXT" for a regular
 * file or directory output, `final` itself for a stream
 * (tc_output_is_stream: "-", /dev/stdout, /dev/fd/N, a FIFO, /dev/null),
 * written directly, never renamed or removed. Removes a stale temporary.
 * A .zst output "DIR/NAME.EXT.zst" is written plain under
 * "DIR/NAME.partial.EXT" (writers seek back to patch headers), compressed
 * at commit. */
void tc_outfile_temp(const char *final, char *tmp, size_t max);
/* Opens an output for writing as writers do (created or truncated, with
 * mode; close-on-exec): "-" and a name of one of this process's
 * descriptors (/dev/stdout, /dev/fd/N, /proc/self/fd/N) give a duplicate
 * of that descriptor, so a trace goes where the shell pointed it (at its
 * offset, appending under >>), whatever it is. -1 with errno. */
int tc_outfile_open(const char *path, int mode);
/* The same as a stdio stream (fopen's mode "w"/"wb"). */
FILE *tc_outfile_fopen(const char *path, const char *mode);
/* After the writer opened tmp: -1 with a message if final is a .zst but
 * the format wrote a directory (REVEN's NAME.rvn/), which is refused. */
int tc_outfile_check(const char *tmp, const char *final, tc_error *err);
/* Moves a closed output from tmp to final (replacing an earlier file, or
 * an earlier directory output such as REVEN's NAME.rvn/); for a .zst
 * final, compresses tmp into final (zst.h: streaming, deterministic) and
 * removes tmp. 0, or -1 (tmp is then kept, complete). */
int tc_outfile_commit(const char *tmp, const char *final, tc_error *err);

/* Ends a text output written through stdio: flushes f, closes it if own,
 * and says which write failed (a full disk shows at the flush). 0 or -1. */
int tc_outfile_close_stream(FILE *f, int own, const char *path, tc_error *err);

/* Gives f a 1 MiB stdio buffer, in *buf (NULL without memory: f keeps its
 * own): stdio's default of a few KiB made a write() per 3 KiB of a trace
 * of hundreds of MB. Free *buf after fclose(f). */
void tc_outfile_buffer(FILE *f, char **buf);

/* Removes an output that holds nothing worth keeping (file or directory);
 * a stream is left alone. */
void tc_outfile_discard(const char *tmp);

#endif
