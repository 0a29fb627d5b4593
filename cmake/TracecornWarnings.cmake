# SPDX-License-Identifier: GPL-2.0-or-later
# Strict warnings (and optionally sanitizers) for tracecorn's own targets.
# Guest programs in examples/guests are built without these: they are
# freestanding or static binaries for the emulator, not host code.
function(tc_strict target)
  target_compile_options(${target} PRIVATE -Wall -Wextra
    -Wno-unused-parameter -Wshadow -Wformat=2)
  if(TC_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
  if(TC_SANITIZE)
    target_compile_options(${target} PRIVATE -fsanitize=address,undefined
      -fno-sanitize-recover=undefined -fno-omit-frame-pointer)
    target_link_options(${target} PRIVATE -fsanitize=address,undefined)
  endif()
  if(TC_FUZZ)
    # Coverage for libFuzzer; the harnesses link the fuzzer runtime.
    target_compile_options(${target} PRIVATE
      -fsanitize=fuzzer-no-link,address,undefined
      -fno-sanitize-recover=undefined -fno-omit-frame-pointer)
    target_link_options(${target} PRIVATE -fsanitize=address,undefined)
  endif()
endfunction()
