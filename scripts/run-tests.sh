#!/usr/bin/env bash
# Builds and runs the whole test suite in four stages:
#   1. plain Release, as users build it: CMake's Release flags (-O3 -DNDEBUG: assertions off), g++,
#      -Werror (g++'s -O3 analyses, e.g. -Waggressive-loop-optimizations, see code the -O2 build
#      did not), with the opt-in posenc::blas component (OpenBLAS) built, installed and tested
#      beside the header-only route;
#   2. AddressSanitizer + UndefinedBehaviorSanitizer, clang++, Debug (-O1 -g: assertions checked),
#      -Werror (with the libFuzzer harnesses of tests/fuzz, POSENC_FUZZ, each run for a bounded time);
#   3. ThreadSanitizer, clang++: only the concurrency tests (tests/concurrency) are built and run;
#   4. the PyTorch package (python/): pip install into the pinned torch venv (scripts/torch-venv.sh),
#      then its pytest suite.
# Builds 1 and 2 register every doctest case, every example and the install/packaging tests with CTest.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=${POSENC_JOBS:-$(nproc)}
common=(-DPOSENC_BUILD_TESTS=ON -DPOSENC_BUILD_EXAMPLES=ON -DPOSENC_WARNINGS_AS_ERRORS=ON
        -DCMAKE_CXX_FLAGS="-Wall -Wextra -Wpedantic -Werror")

# The PyTorch stage's venv (scripts/torch-venv.sh: ~11 min of downloads and unpacking on a fresh
# machine, nothing once it exists) is made in the background while stages 1-3 compile; stage 4
# waits for it. Its output goes to build/torch-venv.log.
mkdir -p build
scripts/torch-venv.sh > build/torch-venv.path 2> build/torch-venv.log &
venv_job=$!
start=$SECONDS
stage() { echo "==> [$1/4] $2 (at $((SECONDS - start)) s)"; }

stage 1 "plain Release, -O3 -DNDEBUG (g++)"
# Every public header is also compiled on its own here (CMAKE_VERIFY_INTERFACE_HEADER_SETS). The
# Release flags are CMake's own (-O3 -DNDEBUG), not overridden: the configuration users build.
# CMAKE_CXX_FLAGS_RELEASE is set explicitly so that a build/release cache from an older run of
# this script (which set -O2) is reset.
cmake -S . -B build/release -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER=g++ \
  -DCMAKE_CXX_FLAGS_RELEASE="-O3 -DNDEBUG" -DCMAKE_VERIFY_INTERFACE_HEADER_SETS=ON -DPOSENC_WITH_BLAS=ON "${common[@]}"
cmake --build build/release -j "$jobs"
ctest --test-dir build/release -j "$jobs" --output-on-failure --timeout 600

stage 2 "AddressSanitizer + UndefinedBehaviorSanitizer (clang++)"
cmake -S . -B build/asan -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_COMPILER=clang++ \
  -DCMAKE_CXX_FLAGS_DEBUG="-O1 -g" -DPOSENC_SANITIZE=address,undefined -DPOSENC_CUDA_TESTS=OFF -DPOSENC_FUZZ=ON \
  "${common[@]}"
cmake --build build/asan -j "$jobs"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir build/asan -j "$jobs" --output-on-failure --timeout 900

stage 3 "ThreadSanitizer (clang++): the concurrency tests only"
cmake -S . -B build/tsan -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_COMPILER=clang++ \
  -DCMAKE_CXX_FLAGS_DEBUG="-O1 -g" -DPOSENC_SANITIZE=thread -DPOSENC_CUDA_TESTS=OFF "${common[@]}" \
  -DPOSENC_BUILD_EXAMPLES=OFF -DPOSENC_TEST_PACKAGING=OFF
cmake --build build/tsan -j "$jobs" --target posenc_tests_concurrency
TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 \
  ctest --test-dir build/tsan -L concurrency -j "$jobs" --output-on-failure --timeout 300

stage 4 "PyTorch package (python/): pip install ./python into the pinned torch venv, then pytest"
# The venv (torch and transformers from PyPI, pinned in scripts/torch-venv.sh) lives at a
# machine-level cache path ($POSENC_VENV, default /var/cache/posenc/venv-torch-2.15.0): the first
# run on a machine installs it (~11 min, ~5.7 GB, in the background since the start), later runs
# reuse it. `pip install` without build
# isolation builds libposenc_torch.so against that venv's torch (setuptools keeps its CMake tree in
# python/build, so an unchanged source is not recompiled); the tests import the installed package.
if ! wait "$venv_job"; then
  cat build/torch-venv.log >&2
  echo "posenc: scripts/torch-venv.sh failed (its output is above)" >&2
  exit 1
fi
venv=$(cat build/torch-venv.path)
POSENC_BUILD_JOBS="$jobs" "$venv/bin/python" -m pip install -q --no-build-isolation --no-deps --disable-pip-version-check ./python
(cd build && "$venv/bin/python" -m pytest -q -p no:cacheprovider ../python/tests)
# Debian's torch 1.13 (python3-torch, libtorch-dev) is supported by the same pip route but not
# run by default (a second build and test run, ~5 min): POSENC_TORCH_DEBIAN=1 adds it.
if [ "${POSENC_TORCH_DEBIAN:-0}" = 1 ]; then
  echo "==> [4/4] PyTorch package against Debian's torch (/usr/bin/python3, POSENC_TORCH_DEBIAN=1)"
  /usr/bin/python3 -m venv --system-site-packages build/venv-debian-torch
  build/venv-debian-torch/bin/python -m pip install -q --no-build-isolation --no-deps ./python
  (cd build && venv-debian-torch/bin/python -m pytest -q -p no:cacheprovider ../python/tests)
fi
echo "posenc: all four stages passed in $((SECONDS - start)) s"
