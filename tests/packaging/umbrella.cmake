# SPDX-License-Identifier: MIT
# <posenc/posenc.hpp> includes every host-side public header: every header under include/posenc
# except the adapters whose dependencies are optional (adapters/xtensor, adapters/odeint,
# adapters/thrust, device/), which the umbrella documents instead, and the deprecated forwarding
# headers ("Deprecated path" in their opening comment: former paths such as encoding/*.hpp, which
# no header of the library includes). Run with cmake -P:
#   -DSOURCE_DIR=<posenc source> -DCXX=<compiler> -DEIGEN_INCLUDE=<Eigen include dirs, comma-separated>
cmake_minimum_required(VERSION 3.24)
set(inc "${SOURCE_DIR}/include")
string(REPLACE "," ";" EIGEN_INCLUDE "${EIGEN_INCLUDE}")
set(flags -std=c++20 -MM "-I${inc}")
foreach(d IN LISTS EIGEN_INCLUDE)
  list(APPEND flags "-isystem" "${d}")
endforeach()
execute_process(COMMAND "${CXX}" ${flags} -x c++ "${inc}/posenc/posenc.hpp"
                RESULT_VARIABLE rc OUTPUT_VARIABLE deps ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "preprocessing <posenc/posenc.hpp> failed:\n${err}")
endif()
string(REPLACE "\\\n" " " deps "${deps}")
file(GLOB_RECURSE headers RELATIVE "${inc}" "${inc}/posenc/*.hpp")
set(missing "")
foreach(h IN LISTS headers)
  if(h MATCHES "^posenc/(adapters/(xtensor|odeint|thrust)|device/)")
    continue()
  endif()
  file(STRINGS "${inc}/${h}" opening LIMIT_COUNT 3)
  string(FIND "${opening}" "Deprecated path" deprecated)
  if(NOT deprecated EQUAL -1)
    continue()
  endif()
  string(FIND "${deps}" "${inc}/${h}" at)
  if(at LESS 0 AND NOT h STREQUAL "posenc/posenc.hpp")
    string(APPEND missing "  ${h}\n")
  endif()
endforeach()
if(missing)
  message(FATAL_ERROR "<posenc/posenc.hpp> does not include (directly or not):\n${missing}"
                      "Add the header (or the area's umbrella header) to include/posenc/posenc.hpp.")
endif()
list(LENGTH headers n)
message(STATUS "<posenc/posenc.hpp> reaches every host-side header (${n} headers in include/posenc)")
