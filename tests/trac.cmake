tc_add_cunit_test(test_trac ${CMAKE_CURRENT_SOURCE_DIR}/test_trac.c)
