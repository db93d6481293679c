// SPDX-License-Identifier: MIT
// Rotary cos/sin tables (rotary::fill_table) for each scaling rule against a memory fill of the
// same bytes (the cos and sin buffers) in the same binary. Counters: bytes written per second
// (GB/s), so table / fill ratios can be read off directly (goal: <= 2x the fill). rotary_dim 128
// (64 pairs), positions [first, first + L): first = 0 and first = 2^20 (large phases).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <posenc/rotary/axes/axes.hpp>
#include <posenc/rotary/axes/diffusion.hpp>
#include <posenc/rotary/scaling.hpp>
#include <posenc/rotary/table.hpp>

namespace {

namespace pr = posenc::rotary;

pr::frequencies rule(long r) {
  pr::rope_config c;
  c.type = static_cast<pr::rope_type>(r);
  c.head_dim = 128;
  c.theta = 500000.0;
  c.factor = 8;
  c.max_position_embeddings = 131072;
  c.original_max_position_embeddings = 8192;
  c.short_factor.assign(64, 1.1);
  c.long_factor.assign(64, 4.0);
  return pr::compute_frequencies(c, 1 << 20);
}

template <class T>
void set_counters(benchmark::State& state, std::size_t L) {
  const double bytes = static_cast<double>(2 * L * 64 * sizeof(T));  // cos + sin, 64 pairs per row
  state.counters["GB/s"] = benchmark::Counter(bytes, benchmark::Counter::kIsIterationInvariantRate,
                                              benchmark::Counter::kIs1000);
  state.counters["MiB"] = bytes / (1 << 20);
}

// Roofline: write both buffers once (std::fill, vectorised stores).
template <class T>
void BM_fill(benchmark::State& state) {
  const auto L = static_cast<std::size_t>(state.range(0));
  std::vector<T> c(L * 64, T(0)), s(L * 64, T(0));
  float v = 0.5f;
  for (auto _ : state) {
    std::fill(c.begin(), c.end(), T(v));
    std::fill(s.begin(), s.end(), T(v));
    benchmark::DoNotOptimize(c.data());
    benchmark::DoNotOptimize(s.data());
    benchmark::ClobberMemory();
    v += 1.0f;
  }
  set_counters<T>(state, L);
}

template <class T>
void BM_table(benchmark::State& state) {
  const auto L = static_cast<std::size_t>(state.range(0));
  const auto f = rule(state.range(1));
  const auto first = static_cast<std::uint64_t>(state.range(2));
  std::vector<T> c(L * 64, T(0)), s(L * 64, T(0));
  for (auto _ : state) {
    pr::fill_table(f, first, L, c.data(), s.data(), 64);
    benchmark::DoNotOptimize(c.data());
    benchmark::DoNotOptimize(s.data());
    benchmark::ClobberMemory();
  }
  state.SetLabel(std::string(pr::name(static_cast<pr::rope_type>(state.range(1)))));
  set_counters<T>(state, L);
}

void fill_sizes(benchmark::internal::Benchmark* b) {
  for (long L : {8192L, 131072L}) b->Args({L});
  b->ArgNames({"L"});
}
void table_sizes(benchmark::internal::Benchmark* b) {
  for (long L : {8192L, 131072L})
    for (long r = 0; r <= 6; ++r) b->Args({L, r, 0});
  b->Args({131072L, 0, 1L << 20});
  b->ArgNames({"L", "rule", "first"});
}
void wide_sizes(benchmark::internal::Benchmark* b) {
  for (long r = 0; r <= 6; ++r) b->Args({8192L, r, 0});
  b->Args({8192L, 0, 1L << 20});
  b->ArgNames({"L", "rule", "first"});
}

}  // namespace

BENCHMARK(BM_fill<float>)->Apply(fill_sizes)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_table<float>)->Apply(table_sizes)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_fill<Eigen::bfloat16>)->Apply(fill_sizes)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_table<Eigen::bfloat16>)->Apply(table_sizes)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_fill<double>)->Apply(fill_sizes)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_table<double>)->Apply(wide_sizes)->Unit(benchmark::kMillisecond)->UseRealTime();

// FLUX.1's 3-axis table (posenc/rotary/axes/diffusion.hpp, rotary::table of rotary/axes.hpp) for a
// 1024 x 1024 image and 512 text tokens: 4608 rows x 64 pairs, cos + sin: 2.25 MiB of float,
// 4.5 MiB of double. Counters as above (bytes of the two buffers written per second); BM_fill
// at L = 4096 / 16384 is the memory fill of about the same bytes.
namespace {
template <class T>
void BM_flux_table(benchmark::State& state) {
  const auto af = pr::flux_frequencies();
  const auto ids = pr::flux_positions(512, 64, 64);
  for (auto _ : state) {
    auto t = pr::table<T>(af, pr::axis_positions(ids, 3));
    benchmark::DoNotOptimize(t.cos.data());
    benchmark::DoNotOptimize(t.sin.data());
  }
  set_counters<T>(state, 4608);
}
}  // namespace
BENCHMARK(BM_flux_table<float>)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_flux_table<double>)->Unit(benchmark::kMillisecond)->UseRealTime();
