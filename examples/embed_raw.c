/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Embedding libtracecorn: record a raw x86-64 code blob and print each
 * instruction's address and changed registers from an event sink. */
#include <inttypes.h>
#include <stdio.h>

#include <tracecorn/tracecorn.h>

static int on_event(void *ctx, const tc_event *ev, tc_error *err) {
  const tc_arch *arch = ctx;
  (void)err;
  if (ev->kind == TC_EV_INSN) {
    printf("0x%" PRIx64 ":", ev->u.insn.pc);
    for (int i = 0; i < ev->u.insn.nregs; i++) {
      int r = ev->u.insn.regs[i];
      printf(" %s=0x%" PRIx64, tc_arch_reg_name(arch, r),
             tc_state_get(arch, ev->u.insn.state_after, r));
    }
    printf("\n");
  } else if (ev->kind == TC_EV_EXIT) {
    printf("exit status %d\n", ev->u.exit.status);
  }
  return 0;
}

int main(int argc, char **argv) {
  /* mov eax, 7; add eax, 35; mov edi, eax; mov eax, 60; syscall (exit 42) */
  static const uint8_t code[] = {0xb8, 7,    0,  0, 0, 0x83, 0xc0, 35,  0x89,
                                 0xc7, 0xb8, 60, 0, 0, 0,    0x0f, 0x05};
  tc_options opt;
  tc_options_init(&opt);
  opt.arch = "x86_64";
  tc_error err;
  tc_session *s = tc_session_new(&opt, &err);
  if (!s || tc_session_load_raw(s, code, sizeof code, 0x1000, 0x1000, &err) ||
      tc_session_add_sink(s, on_event, (void *)tc_session_info(s)->arch,
                          &err) ||
      (argc > 1 &&
       tc_session_add_writer(s, tc_format_by_name("tct"), argv[1], &err)) ||
      tc_session_run(s, NULL, &err)) {
    fprintf(stderr, "embed_raw: %s\n", err.msg);
    return 1;
  }
  tc_session_free(s);
  return 0;
}
