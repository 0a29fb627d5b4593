tc_add_cunit_test(test_syscalls ${CMAKE_CURRENT_SOURCE_DIR}/test_syscalls.c)
