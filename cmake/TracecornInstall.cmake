# SPDX-License-Identifier: GPL-2.0-or-later
# `cmake --install BUILD [--prefix P]`, laid out by GNUInstallDirs: the CLI,
# libtracecorn.so.N and libtracecorn.a, the header, tracecorn.pc, the CMake
# package (find_package(tracecorn) -> tracecorn::tracecorn), the man page,
# bash and zsh completion, the examples and the API guide. The tree works
# wherever it is installed (the .pc and CMake files find their prefix from
# their own place), so --prefix at install time is enough.
include(CMakePackageConfigHelpers)

set(TC_BASH_COMPLETION_DIR ${CMAKE_INSTALL_DATADIR}/bash-completion/completions
  CACHE STRING "Where the bash completion goes (relative: under the prefix)")
set(TC_ZSH_COMPLETION_DIR ${CMAKE_INSTALL_DATADIR}/zsh/site-functions
  CACHE STRING "Where _tracecorn goes (Debian: share/zsh/vendor-completions)")
option(TC_PKGCONFIG_RELOCATABLE
  "tracecorn.pc finds its prefix from its own place (else: the configured prefix)"
  ON)
set(TC_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/tracecorn)

install(TARGETS tracecorn-cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(TARGETS tracecorn_shared tracecorn EXPORT tracecornTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(FILES ${CMAKE_SOURCE_DIR}/include/tracecorn/tracecorn.h
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/tracecorn)

# The CMake package.
install(EXPORT tracecornTargets NAMESPACE tracecorn::
  DESTINATION ${TC_CMAKE_DIR})
configure_package_config_file(${CMAKE_SOURCE_DIR}/cmake/tracecornConfig.cmake.in
  ${CMAKE_BINARY_DIR}/tracecornConfig.cmake INSTALL_DESTINATION ${TC_CMAKE_DIR})
# 0.x: a new minor version may change the API (docs/api.md).
write_basic_package_version_file(${CMAKE_BINARY_DIR}/tracecornConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/tracecornConfig.cmake
  ${CMAKE_BINARY_DIR}/tracecornConfigVersion.cmake DESTINATION ${TC_CMAKE_DIR})

# tracecorn.pc: the dependencies are Requires.private, so `pkg-config --libs
# tracecorn` is just -ltracecorn and `--static` adds them.
set(TC_PC_DIR ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
if(TC_PKGCONFIG_RELOCATABLE AND NOT IS_ABSOLUTE "${TC_PC_DIR}")
  file(RELATIVE_PATH TC_PC_UP /prefix/${TC_PC_DIR} /prefix)
  string(REGEX REPLACE "/$" "" TC_PC_UP "${TC_PC_UP}")
  set(TC_PC_PREFIX "\${pcfiledir}/${TC_PC_UP}")
else()
  set(TC_PC_PREFIX "${CMAKE_INSTALL_PREFIX}")
endif()
foreach(d LIBDIR INCLUDEDIR)
  if(IS_ABSOLUTE "${CMAKE_INSTALL_${d}}")
    set(TC_PC_${d} "${CMAKE_INSTALL_${d}}")
  else()
    set(TC_PC_${d} "\${prefix}/${CMAKE_INSTALL_${d}}")
  endif()
endforeach()
configure_file(${CMAKE_SOURCE_DIR}/cmake/tracecorn.pc.in
  ${CMAKE_BINARY_DIR}/tracecorn.pc @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/tracecorn.pc DESTINATION ${TC_PC_DIR})

# The man page (man/tracecorn.1.in, the version filled in) and completion.
configure_file(${CMAKE_SOURCE_DIR}/man/tracecorn.1.in
  ${CMAKE_BINARY_DIR}/man/tracecorn.1 @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/man/tracecorn.1
  DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
install(FILES ${CMAKE_SOURCE_DIR}/completions/tracecorn.bash
  DESTINATION ${TC_BASH_COMPLETION_DIR} RENAME tracecorn)
install(FILES ${CMAKE_SOURCE_DIR}/completions/_tracecorn
  DESTINATION ${TC_ZSH_COMPLETION_DIR})

# The examples build against the installed copy (make, or cmake -S).
install(FILES
  ${CMAKE_SOURCE_DIR}/examples/embed_raw.c
  ${CMAKE_SOURCE_DIR}/examples/record_elf.c
  ${CMAKE_SOURCE_DIR}/examples/count_events.c
  ${CMAKE_SOURCE_DIR}/examples/Makefile
  ${CMAKE_SOURCE_DIR}/examples/CMakeLists.txt
  DESTINATION ${CMAKE_INSTALL_DOCDIR}/examples)
install(FILES ${CMAKE_SOURCE_DIR}/docs/api.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
