tc_add_cunit_test(test_bap ${CMAKE_CURRENT_SOURCE_DIR}/test_bap.c
  ${CMAKE_CURRENT_SOURCE_DIR}/evlog.c)
