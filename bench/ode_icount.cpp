// SPDX-License-Identifier: MIT
// Instruction counts of one small-state step (bench/ode_small.hpp), for callgrind:
//
//   valgrind --tool=callgrind --callgrind-out-file=/dev/null bench/ode_icount rk4 vector 16 posenc 1000
//
// runs `steps` steps of `who` (posenc or hand) for scheme (euler, rk4, dopri5), state (scalar,
// array, vector, eigen_fixed, eigen_dynamic) and n (1, 4, 16, 64). Per-step counts are the
// difference of two runs with different step counts divided by the difference of the counts
// (setup and teardown cancel): scripts in docs/performance/ode.md.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "ode_small.hpp"

namespace {
namespace os = ode_small;
using namespace posenc::ode;

double sink = 0;

// One function per runner (not inlined into main): each step loop is optimised on its own, as in
// the benchmark functions of bench/ode.bench.cpp.

template <class Runner>
[[gnu::noinline]] int run(std::size_t n, long steps) {
  Runner r(n);
  for (long i = 0; i < steps; ++i) {
    r.step();
    asm volatile("" : : "r"(r.data()) : "memory");  // as benchmark::DoNotOptimize + ClobberMemory
  }
  sink += r.data()[0];
  return 0;
}

template <class Sch, std::size_t N>
int dispatch_n(const std::string& state, bool posenc, long steps) {
  using fixed_eigen = Eigen::Matrix<double, static_cast<int>(N), 1>;
  if (state == "scalar") {
    if constexpr (N == 1) return posenc ? run<os::posenc_runner<Sch, double>>(N, steps) : run<os::hand_runner<Sch, 1, true>>(N, steps);
    return 2;
  }
  if (state == "array") return posenc ? run<os::posenc_runner<Sch, std::array<double, N>>>(N, steps) : run<os::hand_runner<Sch, N>>(N, steps);
  if (state == "eigen_fixed") return posenc ? run<os::posenc_runner<Sch, fixed_eigen>>(N, steps) : run<os::hand_runner<Sch, N>>(N, steps);
  if (state == "vector") return posenc ? run<os::posenc_runner<Sch, std::vector<double>>>(N, steps) : run<os::hand_runner<Sch, 0>>(N, steps);
  if (state == "eigen_dynamic") return posenc ? run<os::posenc_runner<Sch, Eigen::VectorXd>>(N, steps) : run<os::hand_runner<Sch, 0>>(N, steps);
  return 2;
}

template <class Sch>
int dispatch(const std::string& state, long n, bool posenc, long steps) {
  switch (n) {
    case 1: return dispatch_n<Sch, 1>(state, posenc, steps);
    case 4: return dispatch_n<Sch, 4>(state, posenc, steps);
    case 16: return dispatch_n<Sch, 16>(state, posenc, steps);
    case 64: return dispatch_n<Sch, 64>(state, posenc, steps);
    default: return 2;
  }
}
}  // namespace

int main(int argc, char** argv) {
  if (argc != 6) {
    std::fprintf(stderr, "usage: %s euler|rk4|dopri5 scalar|array|vector|eigen_fixed|eigen_dynamic 1|4|16|64 posenc|hand steps\n", argv[0]);
    return 2;
  }
  const std::string sch = argv[1], state = argv[2], who = argv[4];
  const long n = std::strtol(argv[3], nullptr, 10), steps = std::strtol(argv[5], nullptr, 10);
  const bool posenc = who == "posenc";
  int rc = 2;
  if (sch == "euler") rc = dispatch<schemes::euler>(state, n, posenc, steps);
  else if (sch == "rk4") rc = dispatch<schemes::rk4>(state, n, posenc, steps);
  else if (sch == "dopri5") rc = dispatch<schemes::dopri5>(state, n, posenc, steps);
  if (rc != 0) std::fprintf(stderr, "unknown combination\n");
  return rc == 0 && sink == sink ? 0 : rc;
}
