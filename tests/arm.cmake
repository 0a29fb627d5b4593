tc_add_cunit_test(test_arm ${CMAKE_CURRENT_SOURCE_DIR}/test_arm.c
  ${CMAKE_CURRENT_SOURCE_DIR}/evlog.c)
