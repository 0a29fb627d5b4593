# SPDX-License-Identifier: GPL-2.0-or-later
# Regression tests of the fuzzers' finds: every input in
# tests/fuzz/regress/<harness>/ is replayed through that harness (built
# without libFuzzer, so in every build). Under ASan an allocation above
# 1 GiB fails the test: a corrupt size must not allocate gigabytes.
set(TC_FUZZ_REGRESS ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/regress)
foreach(h elf tct tctraw trac tfile ucir bap rvn drcov tenet gdbrsp)
  if(h STREQUAL "elf")
    add_executable(fuzz_regress_${h} ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/fuzz_elf.c
      ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/regress_main.c)
  elseif(h STREQUAL "gdbrsp")
    add_executable(fuzz_regress_${h}
      ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/fuzz_gdbrsp.c
      ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/regress_main.c)
    target_compile_definitions(fuzz_regress_${h} PRIVATE
      FZ_GUEST="${CMAKE_BINARY_DIR}/examples/guests/hello64")
    add_dependencies(fuzz_regress_${h} tc_guests)
  else()
    add_executable(fuzz_regress_${h}
      ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/fuzz_reader.c
      ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/regress_main.c)
    if(h STREQUAL "tctraw")
      target_compile_definitions(fuzz_regress_${h} PRIVATE FZ_FORMAT="tct"
        FZ_TCT_RAW)
    else()
      target_compile_definitions(fuzz_regress_${h} PRIVATE FZ_FORMAT="${h}")
    endif()
  endif()
  target_include_directories(fuzz_regress_${h} PRIVATE ${CMAKE_SOURCE_DIR})
  target_compile_definitions(fuzz_regress_${h} PRIVATE _GNU_SOURCE)
  target_link_libraries(fuzz_regress_${h} PRIVATE tracecorn)
  tc_strict(fuzz_regress_${h})
  if(EXISTS ${TC_FUZZ_REGRESS}/${h})
    add_test(NAME fuzz_regress_${h}
      COMMAND fuzz_regress_${h} ${TC_FUZZ_REGRESS}/${h})
    set_tests_properties(fuzz_regress_${h} PROPERTIES TIMEOUT 120
      ENVIRONMENT
      "ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:max_allocation_size_mb=1024")
  endif()
endforeach()
