# SPDX-License-Identifier: MIT
# `conan create` of the in-repo recipe against a private Conan cache, with no remote: Eigen,
# xtensor and Boost are the system's, packaged under Conan Center's names by conan/system_package.py
# (a [platform_requires] profile cannot be used: CMakeDeps rejects component requirements on
# platform packages), the compiler is the build's, and test_package must build and run. Prints "posenc-test-skipped:" (CTest reports
# SKIPPED) when Conan 2 is not installed. Run with cmake -P:
#   -DSOURCE_DIR=<posenc source> -DWORK_DIR=<scratch> -DCXX=<compiler>
#   -DOPTIONS=with_eigen,with_xtensor,...   options to switch on
#   -DSYSTEM=eigen/3.4.0=/usr/include/eigen3,...   system packages standing in for Conan Center's
#   -DSYSTEM_LIBS=openblas/0.3.21=/usr/lib/x86_64-linux-gnu/libopenblas.so,...   the same for shared
#                                   libraries (conan/system_library.py; with_blas needs openblas)
#   -DNAMES=posenc-core,posenc,...   the .pc names PkgConfigDeps must write (those of cmake --install)
#   -DVERSION=<x.y.z>
cmake_minimum_required(VERSION 3.24)
find_program(CONAN conan HINTS "$ENV{HOME}/.local/bin")
if(CONAN)
  execute_process(COMMAND "${CONAN}" --version OUTPUT_VARIABLE ver RESULT_VARIABLE rc)
endif()
if(NOT CONAN OR NOT rc EQUAL 0 OR NOT ver MATCHES "Conan version 2\\.")
  message("posenc-test-skipped: Conan 2 is not installed (scripts/install-deps.sh installs it with pip)")
  return()
endif()
string(STRIP "${ver}" ver)
message(STATUS "${ver} at ${CONAN}")

function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed: ${ARGN}\n${out}")
  endif()
  set(out "${out}" PARENT_SCOPE)
endfunction()

# A copy of what the recipe exports, plus test_package and the consumer it builds, so that
# test_package/build lands in the scratch directory and not in the source tree.
set(src "${WORK_DIR}/src")
file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${src}/tests/install")
file(COPY "${SOURCE_DIR}/conanfile.py" "${SOURCE_DIR}/LICENSE" "${SOURCE_DIR}/include" "${SOURCE_DIR}/test_package"
     DESTINATION "${src}" PATTERN build EXCLUDE)
file(COPY "${SOURCE_DIR}/tests/install/consumer" DESTINATION "${src}/tests/install")

set(ENV{CONAN_HOME} "${WORK_DIR}/home")
set(ENV{CXX} "${CXX}")
run("${CONAN}" profile detect --force)
execute_process(COMMAND "${CONAN}" remote disable "*" OUTPUT_QUIET ERROR_QUIET)

string(REPLACE "," ";" SYSTEM "${SYSTEM}")
foreach(entry IN LISTS SYSTEM)
  string(REGEX MATCH "^([a-z0-9_]+)/([^=]+)=(.*)$" _ "${entry}")
  string(TOUPPER "${CMAKE_MATCH_1}" up)
  set(ENV{POSENC_SYSTEM_INCLUDEDIR_${up}} "${CMAKE_MATCH_3}")
  run("${CONAN}" export "${CMAKE_CURRENT_LIST_DIR}/conan/system_package.py" --name "${CMAKE_MATCH_1}"
      --version "${CMAKE_MATCH_2}")
endforeach()
string(REPLACE "," ";" SYSTEM_LIBS "${SYSTEM_LIBS}")
foreach(entry IN LISTS SYSTEM_LIBS)
  string(REGEX MATCH "^([a-z0-9_]+)/([^=]+)=(.*)$" _ "${entry}")
  string(TOUPPER "${CMAKE_MATCH_1}" up)
  set(ENV{POSENC_SYSTEM_LIBRARY_${up}} "${CMAKE_MATCH_3}")
  run("${CONAN}" export "${CMAKE_CURRENT_LIST_DIR}/conan/system_library.py" --name "${CMAKE_MATCH_1}"
      --version "${CMAKE_MATCH_2}")
endforeach()
file(WRITE "${WORK_DIR}/posenc.profile" "include(default)
[settings]
compiler.cppstd=20
build_type=Release
[conf]
tools.build:compiler_executables={\"cpp\": \"${CXX}\"}
tools.build:jobs=2
tools.cmake.cmaketoolchain:generator=Unix Makefiles
")
set(opts "")
string(REPLACE "," ";" OPTIONS "${OPTIONS}")
foreach(o with_eigen with_xtensor with_odeint with_thrust with_blas)
  if(o IN_LIST OPTIONS)
    list(APPEND opts -o "posenc/*:${o}=True")
  else()
    list(APPEND opts -o "posenc/*:${o}=False")
  endif()
endforeach()
run("${CONAN}" create "${src}" -pr:h "${WORK_DIR}/posenc.profile" -pr:b "${WORK_DIR}/posenc.profile"
    ${opts} --build=missing -c tools.build:skip_test=False)
message(STATUS "${out}")
string(REGEX MATCHALL "consumer: [^\n]*" ran "${out}")
list(LENGTH ran n)
list(LENGTH OPTIONS m)
math(EXPR m "${m} + 1")
if(NOT n EQUAL m)
  message(FATAL_ERROR "test_package ran ${n} consumer programs, expected ${m}")
endif()

# PkgConfigDeps: the same .pc names as `cmake --install` and the vcpkg port, and consumers built
# with them (tests/packaging/pkgconfig.cmake against the generated folder).
if(NAMES)
  run("${CONAN}" install --requires=posenc/${VERSION} -pr:h "${WORK_DIR}/posenc.profile" -pr:b "${WORK_DIR}/posenc.profile"
      ${opts} -g PkgConfigDeps --output-folder "${WORK_DIR}/pkgconfig")
  execute_process(COMMAND "${CMAKE_COMMAND}" -DPC_DIR=${WORK_DIR}/pkgconfig -DOTHERS=ON -DCXX=${CXX}
                          -DSOURCE_DIR=${SOURCE_DIR} -DWORK_DIR=${WORK_DIR}/pkgconfig-consumers -DVERSION=${VERSION}
                          -DNAMES=${NAMES} -P "${CMAKE_CURRENT_LIST_DIR}/pkgconfig.cmake"
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  message(STATUS "${out}")
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "Conan's pkg-config files do not match the CMake install's")
  endif()
endif()
