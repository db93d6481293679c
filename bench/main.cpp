// SPDX-License-Identifier: MIT
// Shared benchmark main: prints the build configuration, then runs the benchmarks.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <thread>

#include <posenc/version.hpp>

int main(int argc, char** argv) {
  std::printf("posenc %d.%d.%d benchmarks; compiler %s; hardware threads %u\n", posenc::version_major,
              posenc::version_minor, posenc::version_patch, __VERSION__, std::thread::hardware_concurrency());
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
