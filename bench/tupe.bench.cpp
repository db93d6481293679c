// SPDX-License-Identifier: MIT
// TUPE positional term [H, n, n] at BERT-base width (d = 768, H = 12), n = 512 and 2048, float
// and double, beside its roofline in the same binary: the bare Eigen GEMMs it needs
// (X Wq^T, X Wk^T and the H per-head products Q_h K_h^T, into preallocated buffers) and a plain
// fill of the [H, n, n] output (the memory-bandwidth floor).
//
// Timing: the machine is shared, so every benchmark measures process CPU time (all threads,
// MeasureProcessCPUTime) and the rates are per CPU second; compare ratios from one run.
//
//   OMP_NUM_THREADS=1 bench_tupe --benchmark_min_time=0.1 --benchmark_counters_tabular=true
#include <benchmark/benchmark.h>

// GCC 12 reports a false -Wmaybe-uninitialized inside its own AVX-512 intrinsics when Eigen's
// GEMM kernels are compiled with -march=native (GCC bug 105593); it is not about this code.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#include <cstdint>

#include <posenc/tupe.hpp>

namespace {

using posenc::tupe::Index;

constexpr Index d_model = 768;
constexpr Index n_heads = 12;

posenc::tupe::config bert_config() {
  posenc::tupe::config cfg;
  cfg.d = d_model;
  cfg.heads = n_heads;
  cfg.relative = true;                           // TUPE-R: the Toeplitz gather is included
  cfg.cls = posenc::tupe::cls_reset::reference;  // and the [CLS] reset
  return cfg;
}

/// Floating-point operations of the GEMMs: two (n+1) x d x d projections and H products of
/// n x (d/H) by (d/H) x n.
double gemm_flops(Index n) {
  const double N = static_cast<double>(n), d = static_cast<double>(d_model);
  return 2.0 * 2.0 * (N + 1) * d * d + 2.0 * N * N * d;
}

void set_counters(benchmark::State& st, Index n) {
  st.counters["GFLOP/s"] =
      benchmark::Counter(gemm_flops(n), benchmark::Counter::kIsIterationInvariantRate, benchmark::Counter::kIs1000);
  st.counters["n"] = static_cast<double>(n);
}

/// Full positional term through the public entry point (validation included), buffers reused.
template <class T>
void BM_tupe_bias(benchmark::State& st) {
  const Index n = st.range(0);
  const auto cfg = bert_config();
  const auto p = posenc::tupe::make_parameters<T>(cfg, n, 1);
  posenc::tupe::head_stack<T> out;
  posenc::tupe::workspace<T> ws;
  posenc::tupe::positional_bias(cfg, p, p.pos, n, out, ws);  // first touch outside the timing
  for (auto _ : st) {
    posenc::tupe::positional_bias(cfg, p, p.pos, n, out, ws);
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  set_counters(st, n);
}

/// The same without the boundary validation (what positional_bias_cache runs on a miss).
template <class T>
void BM_tupe_bias_unchecked(benchmark::State& st) {
  const Index n = st.range(0);
  const auto cfg = bert_config();
  const auto p = posenc::tupe::make_parameters<T>(cfg, n, 1);
  posenc::tupe::head_stack<T> out;
  posenc::tupe::workspace<T> ws;
  posenc::tupe::detail::compute_bias(cfg, p, p.pos, n, out, ws);
  for (auto _ : st) {
    posenc::tupe::detail::compute_bias(cfg, p, p.pos, n, out, ws);
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  set_counters(st, n);
}

/// Roofline: only the Eigen GEMMs the term needs, into preallocated buffers.
template <class T>
void BM_tupe_gemm_only(benchmark::State& st) {
  const Index n = st.range(0), d = d_model, dh = d_model / n_heads;
  const posenc::table<T> x = posenc::table<T>::Random(n + 1, d);
  const posenc::matrix<T> wq = posenc::matrix<T>::Random(d, d), wk = posenc::matrix<T>::Random(d, d);
  posenc::table<T> q(n + 1, d), k(n + 1, d);
  posenc::tupe::head_stack<T> out(n_heads, n);
  out.flat().setZero();
  for (auto _ : st) {
    q.noalias() = x * wq.transpose();
    k.noalias() = x * wk.transpose();
    for (Index h = 0; h < n_heads; ++h)
      out.head(h).noalias() = q.block(1, h * dh, n, dh) * k.block(1, h * dh, n, dh).transpose();
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  set_counters(st, n);
}

/// Memory floor: writing the [H, n, n] output once.
template <class T>
void BM_tupe_output_fill(benchmark::State& st) {
  const Index n = st.range(0);
  posenc::tupe::head_stack<T> out(n_heads, n);
  out.flat().setZero();
  T v = 0;
  for (auto _ : st) {
    out.flat().setConstant(v);
    v += T(1);
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  st.counters["GB/s"] = benchmark::Counter(static_cast<double>(n_heads * n * n * Index(sizeof(T))),
                                           benchmark::Counter::kIsIterationInvariantRate, benchmark::Counter::kIs1000);
  st.counters["n"] = static_cast<double>(n);
}

/// Gradient of the term (backward pass, intermediates recomputed), for reference.
template <class T>
void BM_tupe_backward(benchmark::State& st) {
  const Index n = st.range(0);
  const auto cfg = bert_config();
  const auto p = posenc::tupe::make_parameters<T>(cfg, n, 1);
  posenc::tupe::head_stack<T> G(n_heads, n);
  G.flat().setConstant(T(1e-3));
  for (auto _ : st) {
    auto g = posenc::tupe::positional_bias_backward(cfg, p, G);
    benchmark::DoNotOptimize(g.pos.data());
  }
  // forward recompute (projections) + dq, dk per head (2 x 2 n^2 d) + dW (2 x 2 n d^2) + dX (2 x 2 n d^2)
  const double N = static_cast<double>(n), d = static_cast<double>(d_model);
  st.counters["GFLOP/s"] = benchmark::Counter(4.0 * N * d * d + 4.0 * N * N * d + 8.0 * N * d * d,
                                              benchmark::Counter::kIsIterationInvariantRate,
                                              benchmark::Counter::kIs1000);
}

}  // namespace

BENCHMARK_TEMPLATE(BM_tupe_gemm_only, float)->Arg(512)->Arg(2048)->Unit(benchmark::kMillisecond)->MeasureProcessCPUTime();
BENCHMARK_TEMPLATE(BM_tupe_bias, float)->Arg(512)->Arg(2048)->Unit(benchmark::kMillisecond)->MeasureProcessCPUTime();
BENCHMARK_TEMPLATE(BM_tupe_bias_unchecked, float)->Arg(512)->Arg(2048)->Unit(benchmark::kMillisecond)->MeasureProcessCPUTime();
BENCHMARK_TEMPLATE(BM_tupe_output_fill, float)->Arg(512)->Arg(2048)->Unit(benchmark::kMillisecond)->MeasureProcessCPUTime();
BENCHMARK_TEMPLATE(BM_tupe_gemm_only, double)->Arg(512)->Arg(2048)->Unit(benchmark::kMillisecond)->MeasureProcessCPUTime();
BENCHMARK_TEMPLATE(BM_tupe_bias, double)->Arg(512)->Arg(2048)->Unit(benchmark::kMillisecond)->MeasureProcessCPUTime();
BENCHMARK_TEMPLATE(BM_tupe_bias_unchecked, double)->Arg(512)->Arg(2048)->Unit(benchmark::kMillisecond)->MeasureProcessCPUTime();
BENCHMARK_TEMPLATE(BM_tupe_output_fill, double)->Arg(512)->Arg(2048)->Unit(benchmark::kMillisecond)->MeasureProcessCPUTime();
BENCHMARK_TEMPLATE(BM_tupe_backward, float)->Arg(512)->Unit(benchmark::kMillisecond)->MeasureProcessCPUTime();
