# SPDX-License-Identifier: GPL-2.0-or-later
tc_add_cunit_test(test_parallel ${CMAKE_CURRENT_SOURCE_DIR}/test_parallel.c)
target_compile_definitions(test_parallel PRIVATE
  TC_SANITIZED=$<BOOL:${TC_SANITIZE}>)
