# SPDX-License-Identifier: GPL-2.0-or-later
tc_add_cunit_test(test_ucir ${CMAKE_CURRENT_SOURCE_DIR}/test_ucir.c
  ${CMAKE_CURRENT_SOURCE_DIR}/evlog.c)
target_compile_definitions(test_ucir PRIVATE
  TC_SANITIZED=$<BOOL:${TC_SANITIZE}>)
