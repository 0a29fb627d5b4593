# SPDX-License-Identifier: GPL-2.0-or-later
tc_add_cunit_test(test_bap ${CMAKE_CURRENT_SOURCE_DIR}/test_bap.c
  ${CMAKE_CURRENT_SOURCE_DIR}/evlog.c)
# The std_frame encoder's test packs frames with protobuf-c too.
target_include_directories(test_bap PRIVATE ${CMAKE_BINARY_DIR}/gen)
