# SPDX-License-Identifier: MIT
# pkg-config route, against a directory of posenc's .pc files: <prefix>/share/pkgconfig of the CMake
# install tree or of the vcpkg-style tree of the port, or the folder Conan's PkgConfigDeps wrote:
#   - the .pc files present are exactly NAMES (the names CMake, Conan and vcpkg all use);
#   - every one reports the project's version and has no -std in its Cflags;
#   - posenc-core works with nothing else on the pkg-config path (no eigen3), posenc needs eigen3;
#   - consumers compiled with `pkg-config --cflags <pc>` and -std=c++20 / -std=c++23 print the
#     __cplusplus of a plain program at that -std (the .pc does not change the standard);
#   - compiling below C++20 stops with posenc's #error;
#   - the core consumer (ODE toolkit) runs with posenc-core's flags, the minimal encodings
#     program with posenc's;
#   - posenc-blas (only where NAMES has it: POSENC_WITH_BLAS=ON, Conan's with_blas, vcpkg's
#     "blas"): its Cflags define EIGEN_USE_BLAS, its Libs link a BLAS, and the posenc::blas
#     consumer (TUPE, #error without EIGEN_USE_BLAS) builds and runs with nothing but those flags.
# Run with cmake -P:
#   -DPREFIX=<prefix> (or -DPC_DIR=<directory of .pc files>) -DCXX=<compiler> -DSOURCE_DIR=<posenc source>
#   -DWORK_DIR=<scratch> -DVERSION=<x.y.z> -DNAMES=posenc-core,posenc,...
#   -DOTHERS=ON   other packages' .pc files are in PC_DIR too (Conan): only posenc*.pc are compared,
#                 and posenc is not expected to fail there without the system's eigen3
cmake_minimum_required(VERSION 3.24)
find_program(PKG_CONFIG NAMES pkg-config pkgconf REQUIRED)
if(NOT PC_DIR)
  set(PC_DIR "${PREFIX}/share/pkgconfig")
endif()
set(ENV{PKG_CONFIG_PATH} "${PC_DIR}")
file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")
string(REPLACE "," ";" NAMES "${NAMES}")
set(errors "")

# ---- the names ---------------------------------------------------------------------------------
if(OTHERS)
  file(GLOB pcs RELATIVE "${PC_DIR}" "${PC_DIR}/posenc*.pc")
else()
  file(GLOB pcs RELATIVE "${PC_DIR}" "${PC_DIR}/*.pc")
endif()
if(PREFIX)
  file(GLOB libpcs "${PREFIX}/lib/pkgconfig/posenc*.pc")
endif()
if(libpcs)
  string(APPEND errors "  .pc files under lib/pkgconfig (a header-only package installs them in share/): ${libpcs}\n")
endif()
list(TRANSFORM pcs REPLACE "\\.pc$" "")
list(SORT pcs)
set(want ${NAMES})
list(SORT want)
if(NOT pcs STREQUAL want)
  string(APPEND errors "  ${PC_DIR} has {${pcs}}, expected {${want}}\n")
endif()

function(pc_query out)
  execute_process(COMMAND "${PKG_CONFIG}" ${ARGN} OUTPUT_VARIABLE o ERROR_VARIABLE e RESULT_VARIABLE rc
                  OUTPUT_STRIP_TRAILING_WHITESPACE)
  set(${out} "${o}" PARENT_SCOPE)
  set(${out}_RC "${rc}" PARENT_SCOPE)
  set(${out}_ERR "${e}" PARENT_SCOPE)
endfunction()

foreach(pc IN LISTS NAMES)
  pc_query(ver --modversion ${pc})
  if(NOT ver_RC EQUAL 0 OR NOT ver STREQUAL VERSION)
    string(APPEND errors "  pkg-config --modversion ${pc}: '${ver}' (expected ${VERSION}) ${ver_ERR}\n")
  endif()
  file(STRINGS "${PC_DIR}/${pc}.pc" cflags_line REGEX "^Cflags:")
  if(cflags_line MATCHES "-std")
    string(APPEND errors "  ${pc}.pc: Cflags chooses the standard: ${cflags_line}\n")
  endif()
endforeach()
if(errors)
  message(FATAL_ERROR "the pkg-config files are not as expected:\n${errors}")
endif()

# ---- posenc-core needs nothing else; posenc needs eigen3 ---------------------------------------
set(ENV{PKG_CONFIG_LIBDIR} "${PC_DIR}")  # only this directory: no system eigen3.pc
pc_query(core_alone --cflags posenc-core)
if(NOT core_alone_RC EQUAL 0)
  message(FATAL_ERROR "posenc-core is not usable on its own: ${core_alone_ERR}")
endif()
if("posenc" IN_LIST NAMES AND NOT OTHERS)
  pc_query(eigen_alone --cflags posenc)
  if(eigen_alone_RC EQUAL 0 OR NOT eigen_alone_ERR MATCHES "eigen3")
    message(FATAL_ERROR "posenc without eigen3 on the pkg-config path should fail naming eigen3: ${eigen_alone_ERR}")
  endif()
endif()
unset(ENV{PKG_CONFIG_LIBDIR})

# ---- consumers ---------------------------------------------------------------------------------
function(compile_run name out)
  cmake_parse_arguments(A "" "" "ARGS" ${ARGN})
  execute_process(COMMAND "${CXX}" ${A_ARGS} -o "${WORK_DIR}/${name}" RESULT_VARIABLE rc OUTPUT_VARIABLE o
                  ERROR_VARIABLE o)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "compiling ${name} failed: ${CXX} ${A_ARGS}\n${o}")
  endif()
  execute_process(COMMAND "${WORK_DIR}/${name}" RESULT_VARIABLE rc OUTPUT_VARIABLE o ERROR_VARIABLE o
                  OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${name} failed (exit ${rc}): ${o}")
  endif()
  set(${out} "${o}" PARENT_SCOPE)
endfunction()

set(checked "")
set(pc_programs posenc-core)
if("posenc" IN_LIST NAMES)
  list(APPEND pc_programs posenc)
endif()
foreach(std c++20 c++23)
  compile_run(reference_${std} ref ARGS -std=${std} "${SOURCE_DIR}/tests/packaging/pkgconfig/reference.cpp")
  string(REGEX MATCH "__cplusplus=([0-9]+)" _ "${ref}")
  set(want "${CMAKE_MATCH_1}")
  if(std STREQUAL "c++20" AND NOT want EQUAL 202002)
    message(FATAL_ERROR "${CXX} -std=c++20 gives __cplusplus ${want}, not 202002")
  elseif(std STREQUAL "c++23" AND NOT want GREATER 202002)
    message(FATAL_ERROR "${CXX} -std=c++23 gives __cplusplus ${want}, not above C++20's 202002")
  endif()
  foreach(pc IN LISTS pc_programs)
    pc_query(cflags --cflags ${pc})
    if(NOT cflags_RC EQUAL 0)
      message(FATAL_ERROR "pkg-config --cflags ${pc} failed: ${cflags_ERR}")
    endif()
    separate_arguments(flags UNIX_COMMAND "${cflags}")
    set(defs "")
    if(pc STREQUAL "posenc")
      set(defs -DPOSENC_PC_EIGEN)
    endif()
    # The user's -std first, then the .pc flags: a -std in them would win (the last one counts).
    compile_run(std_${pc}_${std} got ARGS -std=${std} ${flags} ${defs} "${SOURCE_DIR}/tests/packaging/pkgconfig/std.cpp")
    if(NOT got MATCHES "__cplusplus=${want} posenc=${VERSION}$")
      message(FATAL_ERROR "with -std=${std} $(pkg-config --cflags ${pc}) the consumer reports '${got}', expected __cplusplus=${want} posenc=${VERSION}")
    endif()
    list(APPEND checked "${pc} -std=${std}: __cplusplus=${want}")
  endforeach()
endforeach()

# Below C++20: posenc's #error, not a cascade of template errors.
pc_query(cflags --cflags posenc-core)
separate_arguments(flags UNIX_COMMAND "${cflags}")
execute_process(COMMAND "${CXX}" -std=c++17 ${flags} -fsyntax-only "${SOURCE_DIR}/tests/packaging/pkgconfig/std.cpp"
                RESULT_VARIABLE rc OUTPUT_VARIABLE o ERROR_VARIABLE o)
if(rc EQUAL 0 OR NOT o MATCHES "posenc needs C\\+\\+20 or later")
  message(FATAL_ERROR "compiling with -std=c++17 should stop at posenc's #error:\n${o}")
endif()

# What the consumers do: the ODE toolkit with posenc-core only, an encoding with posenc.
compile_run(core ran ARGS -std=c++20 ${flags} -O1 "${SOURCE_DIR}/tests/install/consumer/core.cpp")
list(APPEND checked "${ran}")
if("posenc" IN_LIST NAMES)
  pc_query(cflags --cflags posenc)
  separate_arguments(flags UNIX_COMMAND "${cflags}")
  compile_run(minimal ran ARGS -std=c++20 ${flags} -O1 "${SOURCE_DIR}/tests/install/minimal/main.cpp")
  list(APPEND checked "${ran}")
endif()
if("posenc-blas" IN_LIST NAMES)
  pc_query(cflags --cflags posenc-blas)
  pc_query(libs --libs posenc-blas)
  if(NOT cflags_RC EQUAL 0 OR NOT libs_RC EQUAL 0)
    message(FATAL_ERROR "pkg-config --cflags/--libs posenc-blas failed: ${cflags_ERR} ${libs_ERR}")
  endif()
  if(NOT cflags MATCHES "-DEIGEN_USE_BLAS")
    message(FATAL_ERROR "posenc-blas: Cflags '${cflags}' do not define EIGEN_USE_BLAS")
  endif()
  if(NOT libs MATCHES "-l[a-z]*blas")
    message(FATAL_ERROR "posenc-blas: Libs '${libs}' link no BLAS")
  endif()
  separate_arguments(flags UNIX_COMMAND "${cflags}")
  separate_arguments(lflags UNIX_COMMAND "${libs}")
  # The Libs' -L directories are also the run-time search path (Conan's libraries are not on the
  # loader's default path).
  set(rpaths "")
  foreach(l IN LISTS lflags)
    if(l MATCHES "^-L(.+)$")
      list(APPEND rpaths "-Wl,-rpath,${CMAKE_MATCH_1}")
    endif()
  endforeach()
  compile_run(blas ran ARGS -std=c++20 ${flags} -O1 "${SOURCE_DIR}/tests/install/consumer/blas.cpp" ${lflags} ${rpaths})
  list(APPEND checked "${ran}")
endif()
list(JOIN checked "\n  " checked)
message(STATUS "pkg-config files {${NAMES}} in ${PC_DIR}:\n  ${checked}")
