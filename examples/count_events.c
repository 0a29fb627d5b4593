/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Embedding libtracecorn: read a trace in any readable format (detected
 * from the file) and count its events.
 *
 *   count_events TRACE
 *
 * The same reader API reads every format, so this works on tct, trac,
 * tfile, ucir, bap and rvn files alike. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <tracecorn/tracecorn.h>

typedef struct counts {
  uint64_t by_kind[TC_EV_EXIT + 1];
  uint64_t mem_reads, mem_writes;
  int exit_status, have_exit;
} counts;

static int on_event(void *ctx, const tc_event *ev, tc_error *err) {
  counts *c = ctx;
  (void)err;
  if (ev->kind >= TC_EV_INSN && ev->kind <= TC_EV_EXIT)
    c->by_kind[ev->kind]++;
  if (ev->kind == TC_EV_INSN) {
    for (uint32_t i = 0; i < ev->u.insn.nmem; i++) {
      if (ev->u.insn.mem[i].kind == TC_MEM_READ)
        c->mem_reads++;
      else
        c->mem_writes++;
    }
  } else if (ev->kind == TC_EV_EXIT) {
    c->have_exit = 1;
    c->exit_status = ev->u.exit.status;
  }
  return 0;
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: count_events TRACE\n");
    return 2;
  }
  tc_error err;
  const tc_format *fmt = tc_format_detect(argv[1], &err);
  if (!fmt) {
    fprintf(stderr, "count_events: %s\n", err.msg);
    return 1;
  }
  counts c;
  memset(&c, 0, sizeof c);
  int rc = tc_read_trace(argv[1], fmt, on_event, &c, &err);
  printf("format:        %s\n", tc_format_name(fmt));
  printf("instructions:  %" PRIu64 "\n", c.by_kind[TC_EV_INSN]);
  printf("syscalls:      %" PRIu64 "\n", c.by_kind[TC_EV_SYSCALL]);
  printf("maps:          %" PRIu64 "\n", c.by_kind[TC_EV_MAP]);
  printf("unmaps:        %" PRIu64 "\n", c.by_kind[TC_EV_UNMAP]);
  printf("protects:      %" PRIu64 "\n", c.by_kind[TC_EV_PROTECT]);
  printf("keyframes:     %" PRIu64 "\n", c.by_kind[TC_EV_KEYFRAME]);
  printf("faults:        %" PRIu64 "\n", c.by_kind[TC_EV_FAULT]);
  printf("memory reads:  %" PRIu64 "\n", c.mem_reads);
  printf("memory writes: %" PRIu64 "\n", c.mem_writes);
  if (c.have_exit)
    printf("exit:          status %d\n", c.exit_status);
  if (rc < 0) { /* what was read before the error is counted above */
    fprintf(stderr, "count_events: %s\n", err.msg);
    return 1;
  }
  return 0;
}
