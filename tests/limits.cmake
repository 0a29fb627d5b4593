# SPDX-License-Identifier: GPL-2.0-or-later
tc_add_cunit_test(test_limits ${CMAKE_CURRENT_SOURCE_DIR}/test_limits.c
  ${CMAKE_CURRENT_SOURCE_DIR}/evlog.c)
