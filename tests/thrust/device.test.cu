// SPDX-License-Identifier: MIT
// The thrust tests compiled by nvcc for THRUST_DEVICE_SYSTEM_CUDA: the same sources as the
// CPP/OMP executables, one translation unit (nvcc is slow; see tests/thrust/CMakeLists.txt).
// Registered as the CTest test thrust_cuda.all with label `gpu`: it needs a GPU to run.
#include "ode.test.cpp"
#include "encodings.test.cpp"
#include "errors.test.cpp"
#include "usage.test.cpp"
