# SPDX-License-Identifier: GPL-2.0-or-later
# The Python package (python/): its pytest suites, run against this build's
# shared library and CLI. A sanitizer build's library cannot be loaded into
# an uninstrumented python3, so those builds leave it out (test_api reads
# traces through the same C functions, tc_trace and tc_timeline, there).
set(TC_TEST_PYTHON /usr/bin/python3 CACHE FILEPATH
  "The python3 that runs the Python package's tests (with python3-pytest)")
if(NOT TC_SANITIZE)
  tc_add_cunit_test(test_python ${CMAKE_CURRENT_SOURCE_DIR}/test_python.c)
  target_compile_definitions(test_python PRIVATE
    TC_PYTHON3="${TC_TEST_PYTHON}"
    TC_SHARED_LIB="$<TARGET_SONAME_FILE:tracecorn_shared>")
  add_dependencies(test_python tracecorn_shared)
endif()
