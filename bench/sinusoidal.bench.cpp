// SPDX-License-Identifier: MIT
// Sinusoidal table generation against the write-bandwidth roofline: a plain fill of the same
// L x d buffer, in the same binary, serial and with 2 threads. Counters: bytes written per
// second (GB/s) for every row, so table / fill time ratios can be read off directly. A naive
// per-element table (angle formed in T, std::sin/std::cos), the way many frameworks build it, is
// measured beside them for reference (it is also the inaccurate one in float).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

#include <posenc/sinusoidal.hpp>

namespace {

template <class T>
void set_counters(benchmark::State& state, std::size_t L, std::size_t d) {
  const double bytes = static_cast<double>(L * d * sizeof(T));
  state.counters["GB/s"] = benchmark::Counter(bytes, benchmark::Counter::kIsIterationInvariantRate,
                                              benchmark::Counter::kIs1000);
  state.counters["MiB"] = bytes / (1 << 20);
}

// Roofline: write every element of the buffer once (std::fill, vectorised stores).
template <class T>
void BM_fill(benchmark::State& state) {
  const auto L = static_cast<std::size_t>(state.range(0)), d = static_cast<std::size_t>(state.range(1));
  const int threads = static_cast<int>(state.range(2));
  posenc::table<T> out(static_cast<Eigen::Index>(L), static_cast<Eigen::Index>(d));
  out.setZero();  // touch the pages before timing: every variant writes to resident memory
  T v = T(0.5);
  for (auto _ : state) {
    T* p = out.data();
#pragma omp parallel for num_threads(threads) schedule(static)
    for (long i = 0; i < static_cast<long>(L); ++i) std::fill(p + i * d, p + (i + 1) * d, v);
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
    v += T(1);
  }
  set_counters<T>(state, L, d);
}

// posenc::sinusoidal::fill into the same kind of pre-allocated buffer.
template <class T>
void BM_table(benchmark::State& state) {
  const auto L = static_cast<std::size_t>(state.range(0)), d = static_cast<std::size_t>(state.range(1));
  posenc::table<T> out(static_cast<Eigen::Index>(L), static_cast<Eigen::Index>(d));
  out.setZero();  // touch the pages before timing: every variant writes to resident memory
  posenc::sinusoidal::options opt;
  opt.threads = static_cast<unsigned>(state.range(2));
  opt.layout = state.range(3) == 0 ? posenc::sinusoidal::layout::interleaved : posenc::sinusoidal::layout::half;
  for (auto _ : state) {
    posenc::sinusoidal::fill(out.data(), L, d, d, opt);
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  set_counters<T>(state, L, d);
}

// The arithmetic floor of a float table by angle addition in double: rows a + b and a - b of
// (sin, cos) from an anchor and 64 offsets (unit complex numbers in double, in cache), the four
// products shared, each value rounded once to float and stored interleaved: what the float table
// does per entry without the certificate of its rounding (the second rounding of v +- E and the
// comparison) and without its phases. Same buffer, same binary as BM_fill and BM_table.
void BM_round_floor(benchmark::State& state) {
  const auto L = static_cast<std::size_t>(state.range(0)), d = static_cast<std::size_t>(state.range(1));
  const std::size_t m = d / 2, B = 64;
  posenc::table<float> out(static_cast<Eigen::Index>(L), static_cast<Eigen::Index>(d));
  out.setZero();
  std::vector<double> as(m), ac(m), bs(B * m), bc(B * m);
  for (std::size_t k = 0; k < m; ++k) {
    as[k] = std::sin(0.37 * static_cast<double>(k));
    ac[k] = std::cos(0.37 * static_cast<double>(k));
  }
  for (std::size_t i = 0; i < B * m; ++i) {
    bs[i] = std::sin(0.011 * static_cast<double>(i));
    bc[i] = std::cos(0.011 * static_cast<double>(i));
  }
  for (auto _ : state) {
    for (std::size_t r = 0; r + 1 < L; r += 2) {
      float* __restrict plus = out.data() + r * d;
      float* __restrict minus = plus + d;
      const double* __restrict sb = bs.data() + (r / 2 % B) * m;
      const double* __restrict cb = bc.data() + (r / 2 % B) * m;
      for (std::size_t k = 0; k < m; ++k) {
        const double p1 = as[k] * cb[k], p2 = ac[k] * sb[k], p3 = ac[k] * cb[k], p4 = as[k] * sb[k];
        plus[2 * k] = static_cast<float>(p1 + p2);
        plus[2 * k + 1] = static_cast<float>(p3 - p4);
        minus[2 * k] = static_cast<float>(p1 - p2);
        minus[2 * k + 1] = static_cast<float>(p3 + p4);
      }
    }
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  set_counters<float>(state, L, d);
}

// The naive table: angle i * w formed in T, std::sin and std::cos per element.
template <class T>
void BM_naive(benchmark::State& state) {
  const auto L = static_cast<std::size_t>(state.range(0)), d = static_cast<std::size_t>(state.range(1));
  const int threads = static_cast<int>(state.range(2));
  posenc::table<T> out(static_cast<Eigen::Index>(L), static_cast<Eigen::Index>(d));
  out.setZero();  // touch the pages before timing: every variant writes to resident memory
  const posenc::vector<T> w = posenc::sinusoidal::frequencies<T>(d);
  for (auto _ : state) {
    T* p = out.data();
#pragma omp parallel for num_threads(threads) schedule(static)
    for (long i = 0; i < static_cast<long>(L); ++i)
      for (std::size_t k = 0; k < d / 2; ++k) {
        const T a = static_cast<T>(i) * w[static_cast<Eigen::Index>(k)];
        p[i * d + 2 * k] = std::sin(a);
        p[i * d + 2 * k + 1] = std::cos(a);
      }
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  set_counters<T>(state, L, d);
}

void sizes(benchmark::internal::Benchmark* b) {
  for (long L : {4096L, 16384L, 65536L})
    for (long d : {512L, 1024L, 4096L})
      for (long t : {1L, 2L}) b->Args({L, d, t});
  b->ArgNames({"L", "d", "threads"});
}
void table_sizes(benchmark::internal::Benchmark* b) {
  for (long L : {4096L, 16384L, 65536L})
    for (long d : {512L, 1024L, 4096L})
      for (long t : {1L, 2L}) b->Args({L, d, t, 0});
  for (long t : {1L, 2L}) b->Args({16384, 1024, t, 1});  // half layout
  b->ArgNames({"L", "d", "threads", "half"});
}
void floor_sizes(benchmark::internal::Benchmark* b) {
  for (long L : {4096L, 16384L}) b->Args({L, 512});
  b->Args({16384, 1024});
  b->ArgNames({"L", "d"});
}
void naive_sizes(benchmark::internal::Benchmark* b) {
  for (long t : {1L, 2L}) b->Args({4096, 512, t});
  b->ArgNames({"L", "d", "threads"});
}

}  // namespace

BENCHMARK(BM_fill<float>)->Apply(sizes)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_table<float>)->Apply(table_sizes)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_fill<double>)->Apply(sizes)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_table<double>)->Apply(table_sizes)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_round_floor)->Apply(floor_sizes)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_naive<float>)->Apply(naive_sizes)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_naive<double>)->Apply(naive_sizes)->Unit(benchmark::kMillisecond)->UseRealTime();

// The 2-D sincos tables (posenc/sinusoidal/grid.hpp): MAE ViT-B/16 (14 x 14 patches + a cls row,
// d 768: 0.6 MB of float), SD3's cropped 64 x 64 block of its 192 x 192 table (d 1536: 25 MB)
// and the whole 192 x 192 table (226 MB). Counters: bytes of the table written per second.
namespace {
void BM_sincos_grid(benchmark::State& state) {
  const auto H = static_cast<std::size_t>(state.range(0)), d = static_cast<std::size_t>(state.range(1));
  const bool sd3 = state.range(2) != 0;
  posenc::sinusoidal::grid_options o;
  if (sd3) o.base_size = 64;
  else o.extra_tokens = 1;
  for (auto _ : state) {
    auto t = sd3 && H < 192 ? posenc::sinusoidal::grid_table_cropped<float>(192, H, H, d, o)
                            : posenc::sinusoidal::grid_table<float>(H, H, d, o);
    benchmark::DoNotOptimize(t.data());
  }
  set_counters<float>(state, H * H + o.extra_tokens, d);
}
}  // namespace
BENCHMARK(BM_sincos_grid)->Args({14, 768, 0})->Args({64, 1536, 1})->Args({192, 1536, 1})->ArgNames({"side", "d", "sd3"})->Unit(benchmark::kMillisecond)->UseRealTime();
