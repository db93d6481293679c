// SPDX-License-Identifier: MIT
// POSENC_HD marks functions that may run on a GPU: __host__ __device__ under nvcc (or clang
// CUDA), nothing otherwise. Functors handed to a Thrust backend carry it.
#pragma once

#include <posenc/version.hpp>

#if defined(__CUDACC__) || defined(__HIPCC__)
#define POSENC_HD __host__ __device__
#define POSENC_DEVICE_COMPILER 1
#else
#define POSENC_HD
#define POSENC_DEVICE_COMPILER 0
#endif
