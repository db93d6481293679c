# SPDX-License-Identifier: MIT
# pkg-config route: the installed posenc.pc is found through PKG_CONFIG_PATH, reports the
# project's version, and `pkg-config --cflags posenc` is enough to compile and run a program that
# uses the encodings' headers and Eigen. Run with cmake -P:
#   -DPREFIX=<install prefix> -DCXX=<compiler> -DSOURCE=<program.cpp> -DWORK_DIR=<scratch> -DVERSION=<x.y.z>
cmake_minimum_required(VERSION 3.24)
find_program(PKG_CONFIG NAMES pkg-config pkgconf REQUIRED)
set(ENV{PKG_CONFIG_PATH} "${PREFIX}/share/pkgconfig")
file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")

execute_process(COMMAND "${PKG_CONFIG}" --modversion posenc OUTPUT_VARIABLE ver RESULT_VARIABLE rc
                ERROR_VARIABLE err OUTPUT_STRIP_TRAILING_WHITESPACE)
if(NOT rc EQUAL 0 OR NOT ver STREQUAL VERSION)
  message(FATAL_ERROR "pkg-config --modversion posenc: '${ver}' (expected ${VERSION}) ${err}")
endif()
execute_process(COMMAND "${PKG_CONFIG}" --exists "posenc >= ${VERSION}" RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "pkg-config --exists 'posenc >= ${VERSION}' failed")
endif()
execute_process(COMMAND "${PKG_CONFIG}" --cflags posenc OUTPUT_VARIABLE cflags RESULT_VARIABLE rc
                ERROR_VARIABLE err OUTPUT_STRIP_TRAILING_WHITESPACE)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "pkg-config --cflags posenc failed: ${err}")
endif()
message(STATUS "pkg-config --cflags posenc: ${cflags}")
separate_arguments(flags UNIX_COMMAND "${cflags}")
# The include directory must be the install prefix's (relocated), not the configure-time prefix.
set(inc_ok FALSE)
foreach(f IN LISTS flags)
  if(f MATCHES "^-I(.*)$")
    file(REAL_PATH "${CMAKE_MATCH_1}" got)
    file(REAL_PATH "${PREFIX}/include" want)
    if(got STREQUAL want AND EXISTS "${got}/posenc/version.hpp")
      set(inc_ok TRUE)
    endif()
  endif()
endforeach()
if(NOT inc_ok)
  message(FATAL_ERROR "pkg-config --cflags posenc does not point at ${PREFIX}/include: ${cflags}")
endif()

execute_process(COMMAND "${CXX}" ${flags} -O1 "${SOURCE}" -o "${WORK_DIR}/consumer"
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "compiling with the pkg-config flags failed:\n${out}")
endif()
execute_process(COMMAND "${WORK_DIR}/consumer" RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
message(STATUS "${out}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the pkg-config consumer failed (exit ${rc})")
endif()
