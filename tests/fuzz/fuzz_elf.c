/* SPDX-License-Identifier: GPL-2.0-or-later */
/* libFuzzer harness for the ELF loader: tc_elf_parse on the input, then,
 * when it parses and its segments span at most 16 MiB (the fuzzer's memory
 * budget, not a loader limit), tc_load_elf into a fresh emulator. */
#include <stdint.h>
#include <stdlib.h>

#include <tracecorn/tracecorn.h>

#include "emu/engine/emu.h"
#include "loaders/loader.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  tc_elf_image img;
  tc_error err;
  if (tc_elf_parse(data, size, &img, &err) < 0)
    return 0;
  if (img.nsegs > TC_ELF_MAX_SEGMENTS || !img.arch)
    abort();
  uint64_t total = 0;
  for (size_t i = 0; i < img.nsegs; i++) {
    if (img.segs[i].filesz > img.segs[i].memsz ||
        (img.segs[i].filesz &&
         (img.segs[i].offset > size ||
          img.segs[i].filesz > size - img.segs[i].offset)))
      abort(); /* the parser promises both (bss-only may point anywhere) */
    total += img.segs[i].memsz;
  }
  if (img.max_vaddr - img.min_vaddr > (16u << 20) || total > (16u << 20))
    return 0;
  tc_options opt;
  tc_options_init(&opt);
  opt.quiet = 1;
  opt.stack_size = 64 * 1024;
  tc_emu *emu = tc_emu_new(img.arch, &opt, &err);
  if (!emu)
    return 0;
  const char *argv[] = {"/fuzz", "a", NULL};
  const char *envp[] = {"A=b", NULL};
  tc_load_result res;
  tc_load_elf(emu, &img, data, size, "/fuzz", argv, envp, &res, &err);
  tc_emu_free(emu);
  return 0;
}
