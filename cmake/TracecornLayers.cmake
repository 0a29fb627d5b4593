# SPDX-License-Identifier: GPL-2.0-or-later
# libtracecorn's layers (docs/architecture.md). Each layer is an object
# library whose include path holds only the folders it may use: its own
# and those of the layers below it, linked under the build tree's
# layers/<name>/ (so `#include "emu/engine/emu.h"` from a format does not
# compile), plus the public header. Layers that may not use Unicorn or
# capstone find a header that stops the build first on their path.
# test_layers (tests/test_layers.c) checks the same arrows on the objects'
# symbols: every symbol a layer uses is its own or a lower layer's.
set(TC_LAYERS "")
set(TC_LAYER_OBJECT_LIST "")

# tc_layer(NAME [DIRS dir...] [TREES dir...] SEES folder... [DEPS target...]
#          [FORBID unicorn|capstone...])
# DIRS: folders whose *.c are the layer; TREES: the same with every
# sub-folder (writers/<format>/, emu/linux/<arch>/), so a new format or
# arch folder needs no CMake line.
function(tc_layer name)
  cmake_parse_arguments(L "" "" "DIRS;TREES;SEES;DEPS;FORBID" ${ARGN})
  set(sources "")
  foreach(dir ${L_DIRS})
    file(GLOB s CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/${dir}/*.c)
    list(APPEND sources ${s})
  endforeach()
  foreach(dir ${L_TREES})
    file(GLOB_RECURSE s CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/${dir}/*.c)
    list(APPEND sources ${s})
  endforeach()
  set(target tc_${name})
  add_library(${target} OBJECT ${sources})
  set_target_properties(${target} PROPERTIES
    POSITION_INDEPENDENT_CODE ON C_VISIBILITY_PRESET hidden)
  foreach(f ${L_FORBID})
    target_include_directories(${target} BEFORE PRIVATE
      ${CMAKE_SOURCE_DIR}/cmake/forbid/${f})
  endforeach()
  set(root ${CMAKE_BINARY_DIR}/layers/${name})
  foreach(dir ${L_SEES})
    get_filename_component(parent ${root}/${dir} DIRECTORY)
    file(MAKE_DIRECTORY ${parent})
    if(NOT EXISTS ${root}/${dir})
      file(CREATE_LINK ${CMAKE_SOURCE_DIR}/${dir} ${root}/${dir} SYMBOLIC)
    endif()
  endforeach()
  target_include_directories(${target}
    PUBLIC ${CMAKE_SOURCE_DIR}/include
    PRIVATE ${root})
  target_compile_definitions(${target} PRIVATE _GNU_SOURCE)
  target_link_libraries(${target} PRIVATE ${L_DEPS})
  tc_strict(${target})
  set(TC_LAYERS ${TC_LAYERS} ${name} PARENT_SCOPE)
endfunction()
