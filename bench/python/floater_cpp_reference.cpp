// SPDX-License-Identifier: MIT
// The C++ call that torch.ops.posenc.floater_forward + floater_backward make, without Python or
// libtorch: build the encoder from nn.Linear-layout weights, compute the L-row table, backprop an
// upstream gradient. bench/python/floater_torch.py compiles it with the extension's flags (-O2)
// and compares its time with the op's to measure the binding's overhead.
//   usage: floater_cpp_reference <f32|f64> d hidden blocks L threads reps
//   prints the median seconds per rep: wall-clock, then process CPU time (std::clock)
#include <algorithm>
#include <chrono>
#include <ctime>
#include <utility>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include <posenc/floater.hpp>

template <class T>
std::pair<double, double> run(std::size_t d, std::size_t hidden, std::size_t N, std::size_t L, std::size_t threads, int reps) {
  std::mt19937_64 rng(0);
  std::normal_distribution<double> nd(0.0, 1.0 / std::sqrt(static_cast<double>(d)));
  posenc::matrix<T> w1(hidden, d + 1), w2(d, hidden + 1);
  for (Eigen::Index i = 0; i < w1.size(); ++i) w1.data()[i] = static_cast<T>(nd(rng));
  for (Eigen::Index i = 0; i < w2.size(); ++i) w2.data()[i] = static_cast<T>(nd(rng));
  posenc::table<T> p0(N, d);
  for (Eigen::Index i = 0; i < p0.size(); ++i) p0.data()[i] = static_cast<T>(nd(rng));
  std::vector<posenc::table<T>> up(N, posenc::table<T>(L, d));
  for (auto& u : up)
    for (Eigen::Index i = 0; i < u.size(); ++i) u.data()[i] = static_cast<T>(nd(rng));
  std::vector<double> times, cpu;
  for (int r = 0; r < reps; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    const std::clock_t c0 = std::clock();
    posenc::floater::mlp<T> m(d, hidden);
    m.set_linear1_weight(w1);
    m.b1.setZero();
    m.set_linear2_weight(w2);
    m.b2.setZero();
    posenc::floater::options o;
    o.threads = threads;
    posenc::floater::encoder<T> enc(std::move(m), p0, o);
    enc.extend(L);
    auto g = enc.backprop(up);
    const std::clock_t c1 = std::clock();
    const auto t1 = std::chrono::steady_clock::now();
    if (!g.p0.allFinite()) return {-1.0, -1.0};
    times.push_back(std::chrono::duration<double>(t1 - t0).count());
    cpu.push_back(static_cast<double>(c1 - c0) / CLOCKS_PER_SEC);
  }
  std::sort(times.begin(), times.end());
  std::sort(cpu.begin(), cpu.end());
  return {times[times.size() / 2], cpu[cpu.size() / 2]};
}

int main(int argc, char** argv) {
  if (argc != 8) {
    std::fprintf(stderr, "usage: %s <f32|f64> d hidden blocks L threads reps\n", argv[0]);
    return 2;
  }
  const std::string dt = argv[1];
  const auto a = [&](int i) { return static_cast<std::size_t>(std::strtoull(argv[i], nullptr, 10)); };
  const auto [wall, cpu] = dt == "f32" ? run<float>(a(2), a(3), a(4), a(5), a(6), std::atoi(argv[7]))
                                        : run<double>(a(2), a(3), a(4), a(5), a(6), std::atoi(argv[7]));
  std::printf("%.9f %.9f\n", wall, cpu);
  return wall > 0 ? 0 : 1;
}
