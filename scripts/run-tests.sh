#!/usr/bin/env bash
# Builds and runs the whole test suite twice:
#   1. Release with assertions on (-O2, no NDEBUG), g++, -Werror;
#   2. AddressSanitizer + UndefinedBehaviorSanitizer, clang++, -Werror.
# Each build registers every doctest case, every example and the install/packaging tests with CTest.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=${POSENC_JOBS:-$(nproc)}
common=(-DPOSENC_BUILD_TESTS=ON -DPOSENC_BUILD_EXAMPLES=ON -DPOSENC_WARNINGS_AS_ERRORS=ON
        -DCMAKE_CXX_FLAGS="-Wall -Wextra -Wpedantic -Werror")

echo "==> [1/2] Release + assertions (g++)"
# Every public header is also compiled on its own here (CMAKE_VERIFY_INTERFACE_HEADER_SETS).
cmake -S . -B build/release -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER=g++ \
  -DCMAKE_CXX_FLAGS_RELEASE="-O2" -DCMAKE_VERIFY_INTERFACE_HEADER_SETS=ON "${common[@]}"
cmake --build build/release -j "$jobs"
ctest --test-dir build/release -j "$jobs" --output-on-failure --timeout 600

echo "==> [2/2] AddressSanitizer + UndefinedBehaviorSanitizer (clang++)"
cmake -S . -B build/asan -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_COMPILER=clang++ \
  -DCMAKE_CXX_FLAGS_DEBUG="-O1 -g" -DPOSENC_SANITIZE=address,undefined -DPOSENC_CUDA_TESTS=OFF "${common[@]}"
cmake --build build/asan -j "$jobs"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir build/asan -j "$jobs" --output-on-failure --timeout 900
