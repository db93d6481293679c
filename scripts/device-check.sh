#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The GPU run of docs/device.md and docs/performance/device.md, as one script: the nvcc-built
# device tests (thrust_cuda.all) and the device benchmarks (bench_thrust_cuda), on a machine
# with an NVIDIA GPU. The binaries are built elsewhere (nvcc needs no GPU) with
#   cmake -S . -B build/gpu -DCMAKE_BUILD_TYPE=Release -DPOSENC_BUILD_BENCHMARKS=ON \
#         -DPOSENC_BENCH_MARCH=x86-64-v3 -DPOSENC_CUDA_TESTS=ON -DPOSENC_CUDA_BENCHMARKS=ON
#   cmake --build build/gpu --target posenc_tests_thrust_cuda bench_thrust_cuda
# (x86-64-v3: the host part of the benchmark must run on the GPU machine's CPU, not only this one).
# Usage: scripts/device-check.sh DIR OUT_DIR [BENCHMARK_FILTER]
#   DIR: the build folder (binaries in DIR/tests/thrust and DIR/bench/thrust) or a folder holding both.
# Writes OUT_DIR/{gpu.txt, cpu.txt, tests.txt, bench.txt, bench.json}; exits with the tests' status.
set -u
bin=${1:?usage: device-check.sh DIR OUT_DIR [BENCHMARK_FILTER]}
out=${2:?usage: device-check.sh DIR OUT_DIR [BENCHMARK_FILTER]}
find_bin() {  # $1: the program's name
  for d in "$bin" "$bin/tests/thrust" "$bin/bench/thrust"; do
    if [ -x "$d/$1" ]; then echo "$d/$1"; return; fi
  done
  echo "$bin/$1"
}
tests_bin=$(find_bin posenc_tests_thrust_cuda)
bench_bin=$(find_bin bench_thrust_cuda)
filter=${3:-.}
mkdir -p "$out"
{
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.memory,power.limit --format=csv
  nvidia-smi
} > "$out/gpu.txt" 2>&1
{ lscpu; nproc; } > "$out/cpu.txt" 2>&1
"$tests_bin" > "$out/tests.txt" 2>&1
tests=$?
echo "thrust_cuda.all: exit $tests (0 = passed, 77 = no device)"
tail -n 4 "$out/tests.txt"
# (shared libraries the GPU machine may lack, e.g. Google Benchmark's, can be put beside the binaries)
LD_LIBRARY_PATH="$(dirname "$bench_bin")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" OMP_NUM_THREADS=${OMP_NUM_THREADS:-2} "$bench_bin" --benchmark_filter="$filter" --benchmark_min_time=0.1 \
  --benchmark_out="$out/bench.json" --benchmark_out_format=json > "$out/bench.txt" 2>&1
echo "bench_thrust_cuda: exit $?"
cat "$out/bench.txt"
exit "$tests"
