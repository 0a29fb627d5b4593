# SPDX-License-Identifier: GPL-2.0-or-later
# Installation, the examples against the installed copy, the man page, the
# completions and (in a non-sanitizer build) the Debian packages.
tc_add_cunit_test(test_packaging ${CMAKE_CURRENT_SOURCE_DIR}/test_packaging.c)
if(TC_SANITIZE)
  set(TC_EXAMPLE_SAN_FLAGS "-fsanitize=address,undefined -fno-omit-frame-pointer")
else()
  set(TC_EXAMPLE_SAN_FLAGS "")
endif()
target_compile_definitions(test_packaging PRIVATE
  TC_SOVERSION="${TC_SOVERSION}"
  TC_PROJECT_VERSION="${PROJECT_VERSION}"
  TC_C_COMPILER="${CMAKE_C_COMPILER}"
  TC_EXAMPLE_SAN_FLAGS="${TC_EXAMPLE_SAN_FLAGS}"
  TC_SANITIZED=$<BOOL:${TC_SANITIZE}>)
# It installs the build tree, so everything must be built first.
add_dependencies(test_packaging tracecorn_shared record_elf count_events)
