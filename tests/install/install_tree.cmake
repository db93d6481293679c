# SPDX-License-Identifier: MIT
# Installs the configured build tree into a fresh prefix (what `cmake --install` gives a user)
# and checks the layout: every public header, the CMake package under share/cmake/posenc, the
# pkg-config file, the licence, and nothing architecture-specific. Run with cmake -P:
#   -DBUILD_DIR=<posenc build> -DPREFIX=<scratch prefix> -DCONFIG=<config> -DSOURCE_DIR=<posenc source>
#   -DCOMPONENTS=eigen,xtensor,...   the components this build provides
cmake_minimum_required(VERSION 3.24)
string(REPLACE "," ";" COMPONENTS "${COMPONENTS}")
file(REMOVE_RECURSE "${PREFIX}")
execute_process(COMMAND "${CMAKE_COMMAND}" --install "${BUILD_DIR}" --prefix "${PREFIX}" --config "${CONFIG}"
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "cmake --install failed:\n${out}")
endif()

set(errors "")
foreach(f share/cmake/posenc/posencConfig.cmake share/cmake/posenc/posencConfigVersion.cmake
          share/cmake/posenc/posencTargets.cmake share/cmake/posenc/posencDependencies.cmake
          share/pkgconfig/posenc-core.pc share/doc/posenc/LICENSE include/posenc/version.hpp include/posenc/ode.hpp)
  if(NOT EXISTS "${PREFIX}/${f}")
    string(APPEND errors "  missing ${f}\n")
  endif()
endforeach()
foreach(c IN LISTS COMPONENTS)
  if(NOT EXISTS "${PREFIX}/share/cmake/posenc/posenc-${c}Targets.cmake")
    string(APPEND errors "  missing share/cmake/posenc/posenc-${c}Targets.cmake\n")
  endif()
endforeach()
# A header-only package is architecture independent: nothing under lib/ or bin/.
file(GLOB arch "${PREFIX}/lib*" "${PREFIX}/bin")
if(arch)
  string(APPEND errors "  architecture-specific directories installed: ${arch}\n")
endif()
# Every header of the source tree is installed (a header outside every FILE_SET would be missing
# from the package although the in-tree build finds it), unless its component is unavailable.
file(GLOB_RECURSE headers RELATIVE "${SOURCE_DIR}/include" "${SOURCE_DIR}/include/*.hpp" "${SOURCE_DIR}/include/*.h")
foreach(h IN LISTS headers)
  if(EXISTS "${PREFIX}/include/${h}")
    continue()
  endif()
  set(owner "")
  foreach(c xtensor odeint thrust)
    if(h MATCHES "^posenc/adapters/${c}")
      set(owner ${c})
    endif()
  endforeach()
  if(h MATCHES "^posenc/device/")
    set(owner thrust)
  endif()
  if(owner STREQUAL "" AND h MATCHES "^posenc/(encoding/|floater/|sinusoidal/|rotary/|tupe/|toeplitz/|adapters/eigen|[a-z_]+\\.hpp$)" AND NOT h MATCHES "^posenc/(ode|version)\\.hpp$")
    set(owner eigen)
  endif()
  if(owner STREQUAL "" OR owner IN_LIST COMPONENTS)
    string(APPEND errors "  header not installed: include/${h} (add it to a FILE_SET in CMakeLists.txt)\n")
  endif()
endforeach()
if(errors)
  message(FATAL_ERROR "install tree at ${PREFIX} is incomplete:\n${errors}")
endif()
list(LENGTH headers n)
message(STATUS "installed ${n} headers and the package files into ${PREFIX}")
