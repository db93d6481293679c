// SPDX-License-Identifier: MIT
// The thrust tests compiled by nvcc for THRUST_DEVICE_SYSTEM_CUDA: the same sources as the
// CPP/OMP executables, one translation unit (nvcc is slow; see tests/thrust/CMakeLists.txt).
// Registered as the CTest test thrust_cuda.all with label `gpu`: it needs a GPU to run.
// Its own main: without a CUDA device (CPU-only CI) it exits 77, which CTest reports as skipped
// (SKIP_RETURN_CODE), so a machine without a GPU neither fails nor claims a pass.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>
#include <cuda_runtime.h>

#include <cstdio>

int main(int argc, char** argv) {
  int devices = 0;
  const cudaError_t rc = cudaGetDeviceCount(&devices);
  if (rc != cudaSuccess || devices == 0) {
    std::printf("no usable CUDA device (%s): the device tests are skipped\n",
                rc != cudaSuccess ? cudaGetErrorString(rc) : "0 devices");
    return 77;
  }
  cudaDeviceProp prop{};
  cudaGetDeviceProperties(&prop, 0);
  std::printf("running the device tests on %s (compute capability %d.%d)\n", prop.name, prop.major, prop.minor);
  doctest::Context context(argc, argv);
  return context.run();
}

#include "ode.test.cpp"
#include "encodings.test.cpp"
#include "errors.test.cpp"
#include "usage.test.cpp"
#include "apply.test.cpp"
