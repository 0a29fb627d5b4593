tc_add_cunit_test(test_sparc ${CMAKE_CURRENT_SOURCE_DIR}/test_sparc.c)
