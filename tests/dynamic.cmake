# SPDX-License-Identifier: GPL-2.0-or-later
tc_add_cunit_test(test_dynamic ${CMAKE_CURRENT_SOURCE_DIR}/test_dynamic.c
  ${CMAKE_CURRENT_SOURCE_DIR}/evlog.c)
