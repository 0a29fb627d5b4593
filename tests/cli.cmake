# SPDX-License-Identifier: GPL-2.0-or-later
tc_add_cunit_test(test_cli ${CMAKE_CURRENT_SOURCE_DIR}/test_cli.c)
target_link_libraries(test_cli PRIVATE util)
