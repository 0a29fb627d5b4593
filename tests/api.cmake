# SPDX-License-Identifier: GPL-2.0-or-later
# The public API: exported symbols = lib/libtracecorn.map = the header's
# TC_API functions; the examples against the header alone; size fields.
tc_add_cunit_test(test_api ${CMAKE_CURRENT_SOURCE_DIR}/test_api.c)
if(TC_SANITIZE)
  # The shared library is instrumented: so are the programs linking it.
  set(TC_API_SAN_FLAGS "-fsanitize=address,undefined -fno-omit-frame-pointer")
else()
  set(TC_API_SAN_FLAGS "")
endif()
target_compile_definitions(test_api PRIVATE
  TC_C_COMPILER="${CMAKE_C_COMPILER} ${TC_API_SAN_FLAGS}")
add_dependencies(test_api tracecorn_shared)
