// SPDX-License-Identifier: MIT
// Host backend vs the Thrust device backend on the three workloads, and RoPE, in one binary:
//   sinusoidal table   L = 65536, d = 1024, f32  (output 256 MiB)
//   TUPE bias          n = 2048, H = 12, d = 768 (BERT-base), f32, TUPE-R, reference [CLS] reset
//   FLOATER forward    N = 18 blocks, d = 512 (hidden 512), L = 512, rk4_38 x 5 substeps, f32
// Built as bench_thrust_omp (THRUST_DEVICE_SYSTEM_OMP, g++) and, with nvcc, bench_thrust_cuda
// (THRUST_DEVICE_SYSTEM_CUDA, for a GPU). Device timings cover the work up to a result in device
// memory (the device system synchronises at the end of each Thrust algorithm); "+to_host" adds
// the explicit copy back. Counters: bytes of the result (bytes_per_second) and FLOPs (GFLOP/s).
// The in-binary references: a memory fill of the table's bytes (the roofline of a write-only
// table) on host and device, and the host implementation itself.
#include <benchmark/benchmark.h>

#include <posenc/device/encodings.hpp>
#include <posenc/floater.hpp>
#include <posenc/rotary.hpp>
#include <posenc/sinusoidal.hpp>
#include <posenc/tupe.hpp>

#include <thrust/copy.h>
#include <thrust/fill.h>

#include <algorithm>
#include <cstddef>
#include <random>
#include <vector>

namespace {

constexpr std::size_t sin_L = 65536, sin_d = 1024;
constexpr double sin_bytes = double(sin_L) * double(sin_d) * sizeof(float);

void counters(benchmark::State& st, double bytes, double flops) {
  st.counters["bytes_per_second"] = benchmark::Counter(bytes, benchmark::Counter::kIsIterationInvariantRate,
                                                       benchmark::Counter::kIs1024);
  if (flops > 0)
    st.counters["GFLOP/s"] = benchmark::Counter(flops * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}

// ---- sinusoidal --------------------------------------------------------------------------------
void BM_sinusoidal_host(benchmark::State& st) {
  posenc::sinusoidal::options o;
  o.threads = static_cast<unsigned>(st.range(0));
  posenc::table<float> t(sin_L, sin_d);
  t.setZero();  // first touch outside the timing (every benchmark here does the same)
  for (auto _ : st) {
    posenc::sinusoidal::fill(t, o);
    benchmark::DoNotOptimize(t.data());
  }
  counters(st, sin_bytes, 0);
}
void BM_sinusoidal_device(benchmark::State& st) {
  posenc::device_table<float> t(sin_L, sin_d);
  thrust::fill(thrust::device, t.values().begin(), t.values().end(), 0.0f);
  for (auto _ : st) {
    posenc::device::sinusoidal::fill(t);
    benchmark::DoNotOptimize(t.data());
  }
  counters(st, sin_bytes, 0);
}
void BM_sinusoidal_device_to_host(benchmark::State& st) {
  posenc::device_table<float> t(sin_L, sin_d);
  posenc::table<float> h(sin_L, sin_d);
  thrust::fill(thrust::device, t.values().begin(), t.values().end(), 0.0f);
  h.setZero();
  for (auto _ : st) {
    posenc::device::sinusoidal::fill(t);
    posenc::copy_to_host(t, h);
    benchmark::DoNotOptimize(h.data());
  }
  counters(st, sin_bytes, 0);
}
// roofline references: write the table's bytes once
void BM_fill_host(benchmark::State& st) {
  posenc::table<float> t(sin_L, sin_d);
  t.setZero();
  for (auto _ : st) {
    std::fill(t.data(), t.data() + t.size(), 0.5f);
    benchmark::DoNotOptimize(t.data());
  }
  counters(st, sin_bytes, 0);
}
void BM_fill_device(benchmark::State& st) {
  thrust::device_vector<float> v(sin_L * sin_d);  // value-initialised: touched
  for (auto _ : st) {
    thrust::fill(thrust::device, v.begin(), v.end(), 0.5f);
    benchmark::DoNotOptimize(thrust::raw_pointer_cast(v.data()));
  }
  counters(st, sin_bytes, 0);
}

// ---- TUPE --------------------------------------------------------------------------------------
constexpr Eigen::Index tupe_n = 2048;
posenc::tupe::config tupe_cfg() {
  posenc::tupe::config c;  // BERT-base TUPE-R: d = 768, H = 12, reference reset
  return c;
}
const posenc::tupe::parameters<float>& tupe_params() {
  static const auto p = posenc::tupe::make_parameters<float>(tupe_cfg(), tupe_n, 1);
  return p;
}
double tupe_flops() {
  const double rows = tupe_n + 1, d = 768, n = tupe_n;
  return 2 * (2 * rows * d * d) + 2 * n * n * d + 8 * rows * d;  // projections, H n^2 dots of d/H, LN
}
double tupe_bytes() { return 12.0 * tupe_n * tupe_n * sizeof(float); }
void BM_tupe_host(benchmark::State& st) {
  posenc::tupe::head_stack<float> out;
  posenc::tupe::workspace<float> ws;
  for (auto _ : st) {
    posenc::tupe::positional_bias(tupe_cfg(), tupe_params(), tupe_params().pos, tupe_n, out, ws);
    benchmark::DoNotOptimize(out.data());
  }
  counters(st, tupe_bytes(), tupe_flops());
}
void BM_tupe_device(benchmark::State& st) {
  for (auto _ : st) {
    auto out = posenc::device::tupe::positional_bias(tupe_cfg(), tupe_params(), tupe_n);
    benchmark::DoNotOptimize(out.data());
  }
  counters(st, tupe_bytes(), tupe_flops());
}

// ---- FLOATER -----------------------------------------------------------------------------------
constexpr std::size_t fl_N = 18, fl_d = 512;  // L is the benchmark argument (512: the size)
struct floater_setup {
  posenc::floater::mlp<float> theta{fl_d};
  posenc::table<float> p0;
  floater_setup() {
    std::mt19937_64 rng(3);
    posenc::floater::init_xavier_normal(theta, rng);
    p0 = posenc::floater::xavier_uniform<float>({3, 6, fl_d}, rng);  // 18 x 512 (q/k/v x 6 layers)
  }
};
const floater_setup& fl() {
  static const floater_setup s;
  return s;
}
double floater_flops(std::size_t L) {
  // (L - 1) intervals x 5 substeps x 4 stages, each 2 layers of N x d x d multiply-adds
  return double(L - 1) * 5 * 4 * (2.0 * 2.0 * fl_N * fl_d * fl_d);
}
double floater_bytes(std::size_t L) { return double(L) * fl_N * fl_d * sizeof(float); }
void BM_floater_host(benchmark::State& st) {
  const auto L = static_cast<std::size_t>(st.range(0));
  posenc::floater::options o;
  o.threads = static_cast<std::size_t>(st.range(1));
  for (auto _ : st) {
    posenc::floater::encoder<float> enc(fl().theta, fl().p0, o);
    enc.extend(L);
    benchmark::DoNotOptimize(enc.trajectory().data());
  }
  counters(st, floater_bytes(L), floater_flops(L));
}
void BM_floater_device(benchmark::State& st) {
  const auto L = static_cast<std::size_t>(st.range(0));
  for (auto _ : st) {
    auto out = posenc::device::floater::forward<float>(fl().theta, fl().p0, L);
    benchmark::DoNotOptimize(out.data());
  }
  counters(st, floater_bytes(L), floater_flops(L));
}

// ---- RoPE in place on q and k -------------------------------------------------------------------
// q and k [B, 32, 4096, 128] f32, half layout, the default frequencies, position = index (B = 8 on a
// GPU: 512 MiB each; B = 1 on CPU threads). The roofline is a device copy of the same bytes (q to
// q2, k to k2: each element read once and written once, as the rotation in place does).
#if defined(__CUDACC__)
constexpr std::size_t rope_B = 8;
#else
constexpr std::size_t rope_B = 1;
#endif
constexpr std::size_t rope_H = 32, rope_S = 4096, rope_D = 128;
constexpr std::size_t rope_n = rope_B * rope_H * rope_S * rope_D;
constexpr double rope_bytes = 2.0 * 2.0 * double(rope_n) * sizeof(float);  // q and k, read and written
constexpr double rope_flops = 2.0 * 6.0 * double(rope_n) / 2;                // 4 mul + 2 add per pair
void BM_rope_device(benchmark::State& st) {
  thrust::device_vector<float> q(rope_n, 0.5f), k(rope_n, 0.25f);
  const auto f = posenc::rotary::default_frequencies(rope_D);
  posenc::rotary::apply_options o;
  o.check_finite = st.range(0) != 0;
  using view = posenc::rotary::dense_view<float>;
  for (auto _ : st) {
    posenc::device::rotary::apply_inplace<float>(
        view::contiguous(thrust::raw_pointer_cast(q.data()), {rope_B, rope_H, rope_S, rope_D}),
        view::contiguous(thrust::raw_pointer_cast(k.data()), {rope_B, rope_H, rope_S, rope_D}), f, {}, o);
    benchmark::DoNotOptimize(thrust::raw_pointer_cast(q.data()));
  }
  counters(st, rope_bytes, rope_flops);
}
void BM_copy_device(benchmark::State& st) {
  thrust::device_vector<float> q(rope_n, 0.5f), k(rope_n, 0.25f), q2(rope_n), k2(rope_n);
  for (auto _ : st) {
    thrust::copy(thrust::device, q.begin(), q.end(), q2.begin());
    thrust::copy(thrust::device, k.begin(), k.end(), k2.begin());
    benchmark::DoNotOptimize(thrust::raw_pointer_cast(q2.data()));
  }
  counters(st, rope_bytes, 0);
}

}  // namespace

BENCHMARK(BM_copy_device)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_rope_device)->ArgNames({"check"})->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_fill_host)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_fill_device)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_sinusoidal_host)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_sinusoidal_device)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_sinusoidal_device_to_host)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_tupe_host)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(1);
BENCHMARK(BM_tupe_device)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(1);
// L = 512 is the size (~193 GFLOP); L = 32 (~11.7 GFLOP, the same per-interval work)
// gives the same ratios in a fraction of the time on a small CPU.
BENCHMARK(BM_floater_host)->Args({32, 1})->Args({32, 2})->Args({512, 1})->Args({512, 2})
    ->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(1);
BENCHMARK(BM_floater_device)->Arg(32)->Arg(512)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(1);
