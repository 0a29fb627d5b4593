# SPDX-License-Identifier: GPL-2.0-or-later
# Dynamically linked programs of the distribution and dynamic guests,
# recorded and compared with their reference runs on five arches (issue 29).
# A sanitized build leaves the slowest runs (python3 on the 32-bit arches)
# to the normal one.
tc_add_cunit_test(test_differential ${CMAKE_CURRENT_SOURCE_DIR}/test_differential.c)
target_compile_definitions(test_differential PRIVATE
  TC_SANITIZED=$<BOOL:${TC_SANITIZE}>)
