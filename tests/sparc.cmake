# SPDX-License-Identifier: GPL-2.0-or-later
tc_add_cunit_test(test_sparc ${CMAKE_CURRENT_SOURCE_DIR}/test_sparc.c)
if(TC_SANITIZE)
  # Unicorn 2.0.1's sparc64 CPU frees neither its TLB tables nor a buffer
  # of an unnamed internal function at uc_close (Debian strips the
  # library: no name to suppress, and suppressing the whole library would
  # hide tracecorn's own leaks). Leak checking is off for this suite only;
  # ASan's and UBSan's other checks stay on.
  set_tests_properties(test_sparc PROPERTIES ENVIRONMENT
    "LSAN_OPTIONS=detect_leaks=0;ASAN_OPTIONS=detect_leaks=0")
endif()
