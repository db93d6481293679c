// SPDX-License-Identifier: MIT
// bench/thrust/device.bench.cpp compiled by nvcc for THRUST_DEVICE_SYSTEM_CUDA (run it on a GPU).
#include "device.bench.cpp"
