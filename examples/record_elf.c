/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Embedding libtracecorn: record a static Linux program (any supported
 * arch) with a callback sink that prints each syscall and counts what
 * happened, and optionally write a trace file beside it.
 *
 *   record_elf [-o FILE.tct] PROGRAM [ARGS...]
 *
 * The guest's stdin/stdout/stderr are this process's; the report goes to
 * stderr. Exits with the guest's exit status, like `tracecorn record`. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <tracecorn/tracecorn.h>

typedef struct counts {
  uint64_t insns, syscalls, mem_reads, mem_writes;
} counts;

/* Called for every event, in recording order; ev and everything it points
 * to are valid only during the call. */
static int on_event(void *ctx, const tc_event *ev, tc_error *err) {
  counts *c = ctx;
  (void)err;
  if (ev->kind == TC_EV_INSN) {
    c->insns++;
    for (uint32_t i = 0; i < ev->u.insn.nmem; i++) {
      if (ev->u.insn.mem[i].kind == TC_MEM_READ)
        c->mem_reads++;
      else
        c->mem_writes++;
    }
  } else if (ev->kind == TC_EV_SYSCALL) {
    const tc_syscall_event *sc = &ev->u.sys;
    c->syscalls++;
    fprintf(stderr,
            "record_elf: syscall %s(0x%" PRIx64 ", 0x%" PRIx64 ", 0x%" PRIx64
            ") = %" PRId64 "\n",
            sc->name ? sc->name : "?", sc->args[0], sc->args[1], sc->args[2],
            sc->ret);
  }
  return 0;
}

int main(int argc, char **argv) {
  const char *out = NULL;
  int first = 1;
  if (argc > 2 && strcmp(argv[1], "-o") == 0) {
    out = argv[2];
    first = 3;
  }
  if (first >= argc) {
    fprintf(stderr, "usage: record_elf [-o FILE.tct] PROGRAM [ARGS...]\n");
    return 2;
  }
  fprintf(stderr, "record_elf: libtracecorn %s (built with %s)\n", tc_version(),
          TC_VERSION_STRING);

  tc_options opt;
  tc_options_init(&opt); /* defaults first: empty environment, seed 0... */
  tc_error err;
  counts c = {0};
  tc_run_result res;
  tc_run_result_init(&res); /* the library fills what this header knows */
  tc_session *s = tc_session_new(&opt, &err);
  if (!s ||
      tc_session_load_elf(s, argv[first], (const char *const *)argv + first,
                          &err) < 0 ||
      tc_session_add_sink(s, on_event, &c, &err) < 0 ||
      (out &&
       tc_session_add_writer(s, tc_format_by_name("tct"), out, &err) < 0) ||
      tc_session_run(s, &res, &err) < 0) {
    fprintf(stderr, "record_elf: %s\n", err.msg);
    tc_session_free(s);
    return 125;
  }
  fprintf(stderr,
          "record_elf: %s: %" PRIu64 " instructions, %" PRIu64
          " syscalls, %" PRIu64 " memory reads, %" PRIu64
          " memory writes, exit status %d\n",
          tc_arch_name(tc_session_info(s)->arch), c.insns, c.syscalls,
          c.mem_reads, c.mem_writes, res.status);
  tc_session_free(s);
  return res.status;
}
