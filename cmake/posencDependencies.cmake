# SPDX-License-Identifier: MIT
# Finds posenc's optional dependencies in CONFIG mode and checks their versions against the
# supported ranges. Shared by the build (CMakeLists.txt) and the installed package config.
#   Eigen3  [3.4, 6)     -> posenc::eigen
#   xtensor [0.24, 1)    -> posenc::xtensor
#   Boost   [1.74, 2)    -> posenc::odeint (headers only)
#   CCCL    [2.2, 4)     -> posenc::thrust (from the CUDA toolkit; -DCCCL_DIR=<toolkit>/lib64/cmake/cccl)
#   BLAS    (any)        -> posenc::blas (opt-in: -DPOSENC_WITH_BLAS=ON). The one MODULE-mode find: BLAS
#                           ships no CMake package, CMake's FindBLAS finds it (posenc_find_blas below)
include_guard(GLOBAL)

set(POSENC_EIGEN_RANGE 3.4 6)
set(POSENC_XTENSOR_RANGE 0.24 1)
set(POSENC_BOOST_RANGE 1.74 2)
set(POSENC_CCCL_RANGE 2.2 4)

# posenc_find_one(<pkg> <version-var> <min> <max-exclusive> [REQUIRED] [extra find_package args...])
macro(posenc_find_one pkg vervar lo hi)
  set(_pf_args ${ARGN})
  set(_pf_required FALSE)
  if("REQUIRED" IN_LIST _pf_args)
    set(_pf_required TRUE)
    list(REMOVE_ITEM _pf_args REQUIRED)
  endif()
  if(_pf_required)
    find_package(${pkg} CONFIG REQUIRED ${_pf_args})
  else()
    find_package(${pkg} CONFIG QUIET ${_pf_args})
  endif()
  if(${pkg}_FOUND AND DEFINED ${vervar} AND NOT "${${vervar}}" STREQUAL "")
    if("${${vervar}}" VERSION_LESS ${lo} OR NOT "${${vervar}}" VERSION_LESS ${hi})
      set(_pf_msg "posenc: ${pkg} ${${vervar}} is outside the supported range [${lo}, ${hi})")
      if(_pf_required)
        message(FATAL_ERROR "${_pf_msg}")
      else()
        message(STATUS "${_pf_msg}; the component that needs it is disabled")
        set(${pkg}_FOUND FALSE)
      endif()
    endif()
  endif()
endmacro()

macro(posenc_find_dependencies)
  posenc_find_one(Eigen3 Eigen3_VERSION ${POSENC_EIGEN_RANGE})
  posenc_find_one(xtensor xtensor_VERSION ${POSENC_XTENSOR_RANGE})
  posenc_find_one(boost_headers boost_headers_VERSION ${POSENC_BOOST_RANGE})
  posenc_find_one(CCCL CCCL_VERSION ${POSENC_CCCL_RANGE} COMPONENTS Thrust
                  HINTS /usr/local/cuda/lib64/cmake /usr/local/cuda/lib/cmake)
endmacro()

# posenc_find_blas([REQUIRED]): BLAS::BLAS through CMake's FindBLAS module (MODULE mode: reference
# BLAS, OpenBLAS, MKL... ship no CMake package), OpenBLAS first unless the caller set BLA_VENDOR,
# then any BLAS FindBLAS knows. Not part of posenc_find_dependencies(): only a build with
# -DPOSENC_WITH_BLAS=ON, or a consumer asking for COMPONENTS blas, looks for a BLAS at all.
macro(posenc_find_blas)
  if(NOT TARGET BLAS::BLAS)
    if(NOT DEFINED BLA_VENDOR)
      set(BLA_VENDOR OpenBLAS)
      find_package(BLAS MODULE QUIET)
      unset(BLA_VENDOR)
    endif()
    if(NOT BLAS_FOUND)
      if("REQUIRED" IN_LIST ARGN)
        find_package(BLAS MODULE REQUIRED)
      else()
        find_package(BLAS MODULE QUIET)
      endif()
    endif()
  endif()
  if(TARGET BLAS::BLAS)
    set(BLAS_FOUND TRUE)
  endif()
endmacro()
