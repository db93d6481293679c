# SPDX-License-Identifier: MIT
# Configures, builds and runs the consumer project (tests/install/consumer) against one posenc
# package (install tree, build tree or a packager's tree). Run with cmake -P:
#   -DSOURCE_DIR=<consumer>  -DBINARY_DIR=<scratch>  -DCXX=<compiler>  -DGENERATOR=<generator>
#   [-DPREFIX_PATH=<prefix>] [-Dposenc_DIR=<dir>]   where to look for posenc
#   [-DCOMPONENTS=eigen,xtensor] [-DVERSION=0.1] [-DEXPECT_DIR=<dir>]
#   [-DEXPECT_FAILURE_REGEX=<regex>]  configuring must fail with output matching <regex>
#   [-DEXTRA_ARGS=a,b]                more -D arguments for the consumer's configure step
#   [-DPROGRAMS=core,eigen]           build and run only these programs (default: all configured)
#   [-DRUN=prog]                      for another project: the programs (in BINARY_DIR) to run
cmake_minimum_required(VERSION 3.24)
foreach(v SOURCE_DIR BINARY_DIR CXX GENERATOR)
  if(NOT DEFINED ${v})
    message(FATAL_ERROR "run_consumer.cmake: -D${v}=... is required")
  endif()
endforeach()
# COMPONENTS stays comma-separated on the consumer's command line (a ';' would split the
# argument list here); the consumer project splits it.
string(REPLACE "," ";" EXTRA_ARGS "${EXTRA_ARGS}")
string(REPLACE "," ";" PROGRAMS "${PROGRAMS}")

file(REMOVE_RECURSE "${BINARY_DIR}")
set(args -S "${SOURCE_DIR}" -B "${BINARY_DIR}" -G "${GENERATOR}"
    -DCMAKE_BUILD_TYPE=Release "-DCMAKE_CXX_COMPILER=${CXX}"
    -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF -DCMAKE_FIND_USE_SYSTEM_PACKAGE_REGISTRY=OFF
    "-DPOSENC_CONSUMER_COMPONENTS=${COMPONENTS}" "-DPOSENC_CONSUMER_VERSION=${VERSION}"
    "-DPOSENC_CONSUMER_EXPECT_DIR=${EXPECT_DIR}" ${EXTRA_ARGS})
if(PREFIX_PATH)
  list(APPEND args "-DCMAKE_PREFIX_PATH=${PREFIX_PATH}")
endif()
if(posenc_DIR)
  list(APPEND args "-Dposenc_DIR=${posenc_DIR}")
endif()

execute_process(COMMAND "${CMAKE_COMMAND}" ${args} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
if(DEFINED EXPECT_FAILURE_REGEX)
  if(rc EQUAL 0)
    message(FATAL_ERROR "configuring the consumer succeeded but was expected to fail:\n${out}")
  endif()
  if(NOT out MATCHES "${EXPECT_FAILURE_REGEX}")
    message(FATAL_ERROR "configuring failed, but not with /${EXPECT_FAILURE_REGEX}/:\n${out}")
  endif()
  message(STATUS "configuring failed as expected")
  return()
endif()
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "configuring the consumer failed:\n${out}")
endif()
string(REGEX MATCH "posenc [^\n]* from [^\n]*" found "${out}")
if(found)
  message(STATUS "${found}")
endif()

set(targets "")
foreach(p IN LISTS PROGRAMS)
  list(APPEND targets --target consumer_${p})
endforeach()
execute_process(COMMAND "${CMAKE_COMMAND}" --build "${BINARY_DIR}" -j 2 ${targets}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "building the consumer failed:\n${out}")
endif()

if(DEFINED RUN)
  string(REPLACE "," ";" programs "${RUN}")
  list(TRANSFORM programs PREPEND "${BINARY_DIR}/")
else()
  file(STRINGS "${BINARY_DIR}/programs.txt" programs)
endif()
foreach(p IN LISTS programs)
  get_filename_component(name "${p}" NAME_WE)
  string(REGEX REPLACE "^consumer_" "" name "${name}")
  if(PROGRAMS AND NOT name IN_LIST PROGRAMS)
    continue()
  endif()
  execute_process(COMMAND "${p}" RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  message(STATUS "${p}: ${out}")
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${p} failed (exit ${rc})")
  endif()
endforeach()
