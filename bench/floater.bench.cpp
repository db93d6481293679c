// SPDX-License-Identifier: MIT
// FLOATER table generation and gradients at the paper's sizes: d = 512, hidden = 512, RK 3/8 with
// Delta/5 substeps (the reference settings), float and double:
//   (i) one block, L = 512   (ii) N = 18 blocks (3 x 6 layers), L = 512   (iii) one block, L = 2048
//   forward + backward (discrete backprop) for (i) and (ii).
// In-binary references: the same forward with Boost.Odeint's runge_kutta4 on an Eigen state and
// an Eigen MLP right-hand side written as a user would (time concatenated as in the reference
// code), and the bare matrix products alone (the roofline: the same GEMM/GEMV count, nothing else).
// FLOPs per table: (L - 1) * 5 substeps * 4 stages * N * 4 * d * hidden (two products of
// 2 d hidden flops each per row; bias, activation and stage sums are O(N d) and not counted).
// Arguments: /N/L/threads (and /stage_MiB for the posenc encoder: options::stage_memory in MiB,
// the forward stages kept for backprop; 256 is the default, 0 recomputes them). Eigen's own OpenMP threading is switched off (Eigen::setNbThreads(1))
// so that `threads` is the only parallelism. Run with --benchmark_min_time=0.1.
// GCC 12 reports a false -Wmaybe-uninitialized inside its own AVX-512 intrinsics when Eigen's
// kernels are inlined with -march=native; it is not about this code.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <benchmark/benchmark.h>

#include <Eigen/Core>
#include <boost/numeric/odeint.hpp>
#include <boost/numeric/odeint/external/eigen/eigen.hpp>
#include <random>
#include <vector>

#include <posenc/floater.hpp>

namespace fl = posenc::floater;

namespace {

constexpr std::size_t kD = 512, kHidden = 512, kSub = 5, kStages = 4;

double table_flops(std::size_t N, std::size_t L) {
  return static_cast<double>(L - 1) * kSub * kStages * static_cast<double>(N) * 4.0 * kD * kHidden;
}

template <class T>
fl::mlp<T> bench_mlp() {
  fl::mlp<T> m(kD, kHidden);
  std::mt19937_64 rng(2020);
  fl::init_xavier_normal(m, rng);
  return m;
}

template <class T>
posenc::table<T> bench_p0(std::size_t N) {
  std::mt19937_64 rng(7);
  return fl::xavier_uniform<T>({N, kD}, rng);
}

void set_counters(benchmark::State& state, double flops) {
  state.counters["GFLOP/s"] = benchmark::Counter(flops, benchmark::Counter::kIsIterationInvariantRate,
                                                 benchmark::Counter::kIs1000);
  state.counters["MFLOP/table"] = flops * 1e-6;
}

// ---- posenc ---------------------------------------------------------------------------------------

template <class T>
void BM_floater_forward(benchmark::State& state) {
  Eigen::setNbThreads(1);
  const auto N = static_cast<std::size_t>(state.range(0)), L = static_cast<std::size_t>(state.range(1));
  fl::options opt;  // reference: delta 0.01, 5 substeps, rk4_38
  opt.threads = static_cast<std::size_t>(state.range(2));
  if (state.range(3) >= 0) opt.stage_memory = static_cast<std::size_t>(state.range(3)) << 20;
  const auto p0 = bench_p0<T>(N);
  fl::encoder<T> enc(bench_mlp<T>(), p0, opt);
  for (auto _ : state) {
    enc.set_initial_state(p0);  // drops the cache: a full recomputation
    enc.extend(L);
    benchmark::DoNotOptimize(enc.trajectory().data());
  }
  set_counters(state, table_flops(N, L));
  state.counters["kept_MiB"] = static_cast<double>(enc.kept_stage_bytes()) / (1 << 20);
}

template <class T>
void BM_floater_forward_backward(benchmark::State& state) {
  Eigen::setNbThreads(1);
  const auto N = static_cast<std::size_t>(state.range(0)), L = static_cast<std::size_t>(state.range(1));
  fl::options opt;
  opt.threads = static_cast<std::size_t>(state.range(2));
  if (state.range(3) >= 0) opt.stage_memory = static_cast<std::size_t>(state.range(3)) << 20;
  const auto p0 = bench_p0<T>(N);
  fl::encoder<T> enc(bench_mlp<T>(), p0, opt);
  std::vector<posenc::table<T>> G;
  std::mt19937_64 rng(9);
  for (std::size_t n = 0; n < N; ++n) G.push_back(fl::xavier_uniform<T>({L, kD}, rng));
  for (auto _ : state) {
    enc.set_initial_state(p0);
    enc.extend(L);
    auto g = enc.backprop(G);
    benchmark::DoNotOptimize(g.flow.w1.data());
  }
  // forward + backward products + weight-gradient products: 3x the table's (+ 1x for the
  // recomputation of the intervals whose stages were not kept)
  const double kept = static_cast<double>(enc.kept_intervals()) / static_cast<double>(L - 1);
  set_counters(state, (4 - kept) * table_flops(N, L));
  state.counters["kept_MiB"] = static_cast<double>(enc.kept_stage_bytes()) / (1 << 20);
}

/// The roofline: only the matrix products of a table, split over the same threads and with the
/// same shapes (Y W1^T then H W2^T, 20 per interval), no bias, activation or stage sums.
template <class T>
void BM_gemm_only(benchmark::State& state) {
  Eigen::setNbThreads(1);
  const auto N = static_cast<std::size_t>(state.range(0)), L = static_cast<std::size_t>(state.range(1));
  const auto m = bench_mlp<T>();
  const auto Nr = static_cast<Eigen::Index>(N);
  posenc::matrix<T> y = bench_p0<T>(N), z(Nr, kHidden), out(Nr, kD);
  posenc::pool_handle pool(static_cast<std::size_t>(state.range(2)));
  for (auto _ : state) {
    for (std::size_t e = 0; e < (L - 1) * kSub * kStages; ++e) {
      auto j1 = [&](std::size_t p, std::size_t n) {
        const auto [b, en] = posenc::split_range(m.w1.rows(), p, n);
        z.middleCols(b, en - b).noalias() = y * m.w1.middleRows(b, en - b).transpose();
      };
      pool.run(j1);
      auto j2 = [&](std::size_t p, std::size_t n) {
        const auto [b, en] = posenc::split_range(m.w2.rows(), p, n);
        out.middleCols(b, en - b).noalias() = z * m.w2.middleRows(b, en - b).transpose();
      };
      pool.run(j2);
      benchmark::DoNotOptimize(out.data());
    }
  }
  set_counters(state, table_flops(N, L));
}

// ---- Boost.Odeint peer ----------------------------------------------------------------------------

/// The MLP right-hand side as a user of Eigen + Odeint would write it from the reference module:
/// the state is N x d (one row per block, column-major Eigen default), time is concatenated as the
/// last input column of both layers (x_aug = [x, t]) and the weights are nn.Linear's [out, in+1].
template <class T>
struct odeint_mlp {
  using mat = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic>;
  using vec = Eigen::Matrix<T, Eigen::Dynamic, 1>;
  mat W1, W2;  // [hidden, d+1], [d, hidden+1]
  vec b1, b2;
  void operator()(const mat& y, mat& dydt, T t) const {
    mat x(y.rows(), y.cols() + 1);
    x << y, mat::Constant(y.rows(), 1, t);
    mat h = ((x * W1.transpose()).rowwise() + b1.transpose()).cwiseMax(T(0));
    mat hx(h.rows(), h.cols() + 1);
    hx << h, mat::Constant(h.rows(), 1, t);
    dydt = (hx * W2.transpose()).rowwise() + b2.transpose();
  }
};

template <class T>
void BM_odeint_forward(benchmark::State& state) {
  namespace odeint = boost::numeric::odeint;
  Eigen::setNbThreads(1);
  const auto N = static_cast<std::size_t>(state.range(0)), L = static_cast<std::size_t>(state.range(1));
  const auto m = bench_mlp<T>();
  using mat = typename odeint_mlp<T>::mat;
  odeint_mlp<T> rhs{m.linear1_weight(), m.linear2_weight(), m.b1, m.b2};
  const mat p0 = bench_p0<T>(N);
  odeint::runge_kutta4<mat, T, mat, T, odeint::vector_space_algebra> stepper;
  std::vector<mat> out(L);
  const T delta = T(0.01), h = delta / T(kSub);
  for (auto _ : state) {
    mat y = p0;
    out[0] = y;
    for (std::size_t i = 1; i < L; ++i) {
      for (std::size_t s = 0; s < kSub; ++s)
        stepper.do_step(std::cref(rhs), y, static_cast<T>(i - 1) * delta + static_cast<T>(s) * h, h);
      out[i] = y;
    }
    benchmark::DoNotOptimize(out.back().data());
  }
  set_counters(state, table_flops(N, L));
}

}  // namespace

#define FLOATER_ARGS(fn)                                                                                       \
  BENCHMARK_TEMPLATE(fn, float)->ArgNames({"N", "L", "threads"})->Args({1, 512, 1})->Args({1, 512, 2})      \
      ->Args({18, 512, 1})->Args({18, 512, 2})->Args({1, 2048, 2})->Unit(benchmark::kMillisecond)->UseRealTime(); \
  BENCHMARK_TEMPLATE(fn, double)->ArgNames({"N", "L", "threads"})->Args({1, 512, 1})->Args({1, 512, 2})     \
      ->Args({18, 512, 1})->Args({18, 512, 2})->Args({1, 2048, 2})->Unit(benchmark::kMillisecond)->UseRealTime()

// posenc's encoder: /N/L/threads/stage_MiB (256: the default budget, which keeps every stage for
// one block and about a third for 18 blocks at L = 512; 2048 keeps all for 18 blocks, 1.5 GB in
// f64; 0 keeps none: the recomputing backprop).
#define FLOATER_ENCODER_ARGS(fn)                                                                               \
  BENCHMARK_TEMPLATE(fn, float)->ArgNames({"N", "L", "threads", "stage_MiB"})->Args({1, 512, 1, 256})       \
      ->Args({1, 512, 2, 256})->Args({18, 512, 1, 256})->Args({18, 512, 2, 256})->Args({18, 512, 1, 2048})   \
      ->Args({18, 512, 2, 2048})->Args({1, 512, 1, 0})->Args({18, 512, 1, 0})                                \
      ->Unit(benchmark::kMillisecond)->UseRealTime();                                                        \
  BENCHMARK_TEMPLATE(fn, double)->ArgNames({"N", "L", "threads", "stage_MiB"})->Args({1, 512, 1, 256})      \
      ->Args({1, 512, 2, 256})->Args({18, 512, 1, 256})->Args({18, 512, 2, 256})->Args({18, 512, 1, 2048})   \
      ->Args({18, 512, 2, 2048})->Args({1, 512, 1, 0})->Args({18, 512, 1, 0})                                \
      ->Unit(benchmark::kMillisecond)->UseRealTime()

FLOATER_ENCODER_ARGS(BM_floater_forward);
BENCHMARK_TEMPLATE(BM_floater_forward, float)->ArgNames({"N", "L", "threads", "stage_MiB"})->Args({1, 2048, 2, 256})
    ->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_TEMPLATE(BM_floater_forward, double)->ArgNames({"N", "L", "threads", "stage_MiB"})->Args({1, 2048, 2, 256})
    ->Unit(benchmark::kMillisecond)->UseRealTime();
FLOATER_ARGS(BM_gemm_only);

BENCHMARK_TEMPLATE(BM_odeint_forward, float)->ArgNames({"N", "L"})->Args({1, 512})->Args({18, 512})->Args({1, 2048})
    ->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_TEMPLATE(BM_odeint_forward, double)->ArgNames({"N", "L"})->Args({1, 512})->Args({18, 512})->Args({1, 2048})
    ->Unit(benchmark::kMillisecond)->UseRealTime();

FLOATER_ENCODER_ARGS(BM_floater_forward_backward);
