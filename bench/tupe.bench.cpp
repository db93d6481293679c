// SPDX-License-Identifier: MIT
// TUPE positional term [H, n, n] at BERT-base width (d = 768, H = 12), n = 512 and 2048, float
// and double, on 1 or 2 threads, beside its roofline in the same binary: the bare GEMMs it needs
// on the same threads (X Wq^T, X Wk^T and the H per-head products Q_h K_h^T, into preallocated
// buffers), a plain fill of the [H, n, n] output (the memory-bandwidth floor) and the FMA peak;
// BM_tupe_breakdown times the phases of the previous unfused pass one by one (where the time
// went). bench/peers/tupe_torch.py runs this binary beside PyTorch's fast path.
//
// Timing: wall time (UseRealTime; rates are per wall second), process CPU time of all threads
// beside it. On the 2-core VM these were taken on, process CPU time under-reports a busy thread
// (BM_fma_peak: about half the wall time), so only wall times are quoted; compare ratios from
// one run.
//
//   bench_tupe --benchmark_min_time=0.1 --benchmark_counters_tabular=true
//   bench_tupe_noomp ...                           (the same program built without OpenMP)
//   OPENBLAS_NUM_THREADS=1 bench_tupe_blas ...     (the same with -DPOSENC_WITH_BLAS=ON)
// The threads are posenc's own (the threads argument) whatever OMP_NUM_THREADS says: every thread
// that runs a posenc job sets its OpenMP count to 1 (posenc/core/thread_pool.hpp), so the two
// programs use the same cores. OpenBLAS's threads are its own: OPENBLAS_NUM_THREADS=1 there.
#include <benchmark/benchmark.h>

// GCC 12 reports a false -Wmaybe-uninitialized inside its own AVX-512 intrinsics when Eigen's
// GEMM kernels are compiled with -march=native (GCC bug 105593); it is not about this code.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>
#include <type_traits>
#include <vector>

#if defined(__AVX512F__) || defined(__AVX2__)
#include <immintrin.h>
#endif

#include <posenc/core/thread_pool.hpp>
#include <posenc/tupe.hpp>

namespace {

using posenc::tupe::Index;

constexpr Index d_model = 768;
constexpr Index n_heads = 12;

posenc::tupe::config bert_config(std::size_t threads = 1) {
  posenc::tupe::config cfg;
  cfg.threads = threads;
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
  if (st.range(1) > 0) st.counters["threads"] = static_cast<double>(st.range(1));
}

/// Full positional term through the public entry point (validation included), buffers reused.
template <class T>
void BM_tupe_bias(benchmark::State& st) {
  const Index n = st.range(0);
  const auto cfg = bert_config(static_cast<std::size_t>(st.range(1)));
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
  const auto cfg = bert_config(static_cast<std::size_t>(st.range(1)));
  const auto p = posenc::tupe::make_parameters<T>(cfg, n, 1);
  posenc::tupe::head_stack<T> out;
  posenc::tupe::workspace<T> ws;
  ws.tile_rows = st.range(2);
  posenc::tupe::detail::compute_bias(cfg, p, p.pos, n, out, ws);
  for (auto _ : st) {
    posenc::tupe::detail::compute_bias(cfg, p, p.pos, n, out, ws);
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  set_counters(st, n);
}

/// Roofline: only the GEMMs the term needs, into preallocated buffers, on the same number of
/// threads (projections split by output columns, one head per job taken dynamically).
template <class T>
void BM_tupe_gemm_only(benchmark::State& st) {
  const Index n = st.range(0), d = d_model, dh = d_model / n_heads;
  const posenc::table<T> x = posenc::table<T>::Random(n + 1, d);
  const posenc::matrix<T> wq = posenc::matrix<T>::Random(d, d), wk = posenc::matrix<T>::Random(d, d);
  posenc::table<T> q(n + 1, d), k(n + 1, d);
  posenc::tupe::head_stack<T> out(n_heads, n);
  out.flat().setZero();
  posenc::pool_handle pool(static_cast<std::size_t>(st.range(1)));
  for (auto _ : st) {
    auto proj = [&](std::size_t part, std::size_t parts) {
      const auto [b, e] = posenc::split_range(d, part, parts);
      q.middleCols(b, e - b).noalias() = x * wq.middleRows(b, e - b).transpose();
      k.middleCols(b, e - b).noalias() = x * wk.middleRows(b, e - b).transpose();
    };
    pool.run(proj);
    std::atomic<Index> next{0};
    auto heads = [&](std::size_t, std::size_t) {
      for (Index h = next++; h < n_heads; h = next++)
        out.head(h).noalias() = q.block(1, h * dh, n, dh) * k.block(1, h * dh, n, dh).transpose();
    };
    pool.run(heads);
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  set_counters(st, n);
}

/// Where the time of the previous (unfused, one-thread) forward pass went, phase by phase, as
/// counters in ms per call: LayerNorm (mean, variance, xhat and x), each projection GEMM with its
/// bias broadcast, the Toeplitz gather of every head into the output, the 12 per-head score
/// GEMMs accumulating onto it, and the [CLS] reset. The GFLOP/s counters are per phase.
template <class T>
void BM_tupe_breakdown(benchmark::State& st) {
  using clock = std::chrono::steady_clock;
  const Index n = st.range(0), d = d_model, dh = d_model / n_heads, H = n_heads;
  const auto cfg = bert_config();
  const auto p = posenc::tupe::make_parameters<T>(cfg, n, 1);
  posenc::tupe::head_stack<T> out(H, n);
  posenc::tupe::workspace<T> ws;
  const auto& buckets = posenc::tupe::detail::cached_buckets(cfg, n, ws);
  posenc::vector<T> toeplitz(2 * n - 1);
  const T s = static_cast<T>(cfg.scaling());
  out.flat().setZero();  // first touch outside the timing
  double t_ln = 0, t_q = 0, t_k = 0, t_gather = 0, t_scores = 0, t_reset = 0;
  auto since = [](clock::time_point t0) { return std::chrono::duration<double, std::milli>(clock::now() - t0).count(); };
  for (auto _ : st) {
    auto t0 = clock::now();
    posenc::tupe::detail::layer_norm(cfg, p, p.pos, n + 1, ws);
    t_ln += since(t0);
    t0 = clock::now();
    ws.q.resize(n + 1, d);
    ws.q.rowwise() = (s * p.pos_q_bias).transpose();
    ws.q.noalias() += (s * ws.x) * p.pos_q_weight.transpose();
    t_q += since(t0);
    t0 = clock::now();
    ws.k.resize(n + 1, d);
    ws.k.rowwise() = p.pos_k_bias.transpose();
    ws.k.noalias() += ws.x * p.pos_k_weight.transpose();
    t_k += since(t0);
    t0 = clock::now();
    for (Index h = 0; h < H; ++h) {
      auto O = out.head(h);
      for (Index k = 0; k < 2 * n - 1; ++k)
        toeplitz[k] = p.relative_attention_bias(buckets[static_cast<std::size_t>(k)], h);
      for (Index i = 0; i < n; ++i) O.row(i) = toeplitz.segment(n - 1 - i, n).transpose();
    }
    t_gather += since(t0);
    t0 = clock::now();
    for (Index h = 0; h < H; ++h)
      out.head(h).noalias() += ws.q.block(1, h * dh, n, dh) * ws.k.block(1, h * dh, n, dh).transpose();
    t_scores += since(t0);
    t0 = clock::now();
    for (Index h = 0; h < H; ++h) {
      auto O = out.head(h);
      const T theta1 = ws.q.row(0).segment(h * dh, dh).dot(ws.k.row(0).segment(h * dh, dh));
      const T theta2 = ws.q.row(1).segment(h * dh, dh).dot(ws.k.row(1).segment(h * dh, dh));
      O.col(0).setConstant(theta2 + p.relative_attention_bias(cfg.buckets.num_buckets, h));
      O.row(0).setConstant(theta1 + p.relative_attention_bias(cfg.buckets.num_buckets / 2, h));
    }
    t_reset += since(t0);
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  const double it = static_cast<double>(st.iterations()), N = static_cast<double>(n), D = static_cast<double>(d);
  const double proj_flops = 2.0 * (N + 1) * D * D, score_flops = 2.0 * N * N * D;
  st.counters["ln_ms"] = t_ln / it;
  st.counters["q_ms"] = t_q / it;
  st.counters["k_ms"] = t_k / it;
  st.counters["gather_ms"] = t_gather / it;
  st.counters["scores_ms"] = t_scores / it;
  st.counters["reset_ms"] = t_reset / it;
  st.counters["q_GFLOPs"] = proj_flops / (t_q / it) * 1e-6;
  st.counters["k_GFLOPs"] = proj_flops / (t_k / it) * 1e-6;
  st.counters["scores_GFLOPs"] = score_flops / (t_scores / it) * 1e-6;
  st.counters["n"] = N;
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

// 12 independent FMA chains per thread: the FLOP peak of one core with the widest vectors.
#define POSENC_FMA_CHAINS(V, SET1, FMA)                                      \
  V a[12];                                                                   \
  for (int i = 0; i < 12; ++i) a[i] = SET1(1.0 + i * 1e-7);                  \
  const V b = SET1(0.9999999), c = SET1(1e-7);                               \
  for (long s = 0; s < steps; ++s)                                           \
    for (int i = 0; i < 12; ++i) a[i] = FMA(a[i], b, c);                     \
  for (int i = 0; i < 12; ++i) benchmark::DoNotOptimize(a[i]);
#if defined(__AVX512F__)
constexpr int fma_bytes = 64;
void fma_chains_f32(long steps) { POSENC_FMA_CHAINS(__m512, _mm512_set1_ps, _mm512_fmadd_ps) }
void fma_chains_f64(long steps) { POSENC_FMA_CHAINS(__m512d, _mm512_set1_pd, _mm512_fmadd_pd) }
#elif defined(__AVX2__) && defined(__FMA__)
constexpr int fma_bytes = 32;
void fma_chains_f32(long steps) { POSENC_FMA_CHAINS(__m256, _mm256_set1_ps, _mm256_fmadd_ps) }
void fma_chains_f64(long steps) { POSENC_FMA_CHAINS(__m256d, _mm256_set1_pd, _mm256_fmadd_pd) }
#endif

/// The machine's FMA peak in the same run: `threads` threads each running 12 independent chains
/// of vector FMAs of the widest width compiled for (AVX-512: 16 floats / 8 doubles; AVX2: 8 / 4),
/// enough chains to cover the FMA latency on two pipes, no memory traffic. Skipped without FMA.
template <class T>
void BM_fma_peak(benchmark::State& st) {
#if defined(__AVX512F__) || (defined(__AVX2__) && defined(__FMA__))
  constexpr int lanes = fma_bytes / static_cast<int>(sizeof(T));
  const auto threads = static_cast<std::size_t>(st.range(0));
  constexpr long steps = 1 << 22;
  auto chain = [] {
    if constexpr (std::is_same_v<T, float>) fma_chains_f32(steps); else fma_chains_f64(steps);
  };
  for (auto _ : st) {
    std::vector<std::thread> pool;
    for (std::size_t t = 1; t < threads; ++t) pool.emplace_back(chain);
    chain();
    for (auto& th : pool) th.join();
  }
  st.counters["GFLOP/s"] = benchmark::Counter(2.0 * 12 * lanes * double(steps) * double(threads),
                                              benchmark::Counter::kIsIterationInvariantRate,
                                              benchmark::Counter::kIs1000);
  st.counters["threads"] = static_cast<double>(threads);
#else
  st.SkipWithError("compiled without FMA");
#endif
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

// Args: n, threads (config::threads), and for bias_unchecked the head tile rows (0 = automatic).
#define POSENC_TUPE_ARGS(T)                                                                              \
  BENCHMARK_TEMPLATE(BM_tupe_gemm_only, T)                                                                \
      ->Args({512, 1})->Args({512, 2})->Args({2048, 1})->Args({2048, 2})                                  \
      ->Unit(benchmark::kMillisecond)->MeasureProcessCPUTime()->UseRealTime();                                            \
  BENCHMARK_TEMPLATE(BM_tupe_bias, T)                                                                     \
      ->Args({512, 1})->Args({512, 2})->Args({2048, 1})->Args({2048, 2})                                  \
      ->Unit(benchmark::kMillisecond)->MeasureProcessCPUTime()->UseRealTime();                                            \
  BENCHMARK_TEMPLATE(BM_tupe_bias_unchecked, T)                                                           \
      ->Args({512, 1, 0})->Args({512, 2, 0})->Args({2048, 1, 0})->Args({2048, 2, 0})                      \
      ->Unit(benchmark::kMillisecond)->MeasureProcessCPUTime()->UseRealTime();                                            \
  BENCHMARK_TEMPLATE(BM_tupe_breakdown, T)->Arg(512)->Arg(2048)->Unit(benchmark::kMillisecond)->MeasureProcessCPUTime()->UseRealTime(); \
  BENCHMARK_TEMPLATE(BM_tupe_output_fill, T)->Arg(512)->Arg(2048)->Unit(benchmark::kMillisecond)->MeasureProcessCPUTime()->UseRealTime()

BENCHMARK_TEMPLATE(BM_fma_peak, float)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_TEMPLATE(BM_fma_peak, double)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();
POSENC_TUPE_ARGS(float);
POSENC_TUPE_ARGS(double);
// Tile sweep (one thread): rows per head tile (n rows = whole heads, the previous pass).
BENCHMARK_TEMPLATE(BM_tupe_bias_unchecked, float)
    ->ArgsProduct({{512}, {1}, {32, 64, 128, 256, 512}})
    ->ArgsProduct({{2048}, {1}, {16, 32, 64, 128, 256, 2048}})
    ->Unit(benchmark::kMillisecond)->MeasureProcessCPUTime()->UseRealTime();
BENCHMARK_TEMPLATE(BM_tupe_bias_unchecked, double)
    ->ArgsProduct({{512}, {1}, {32, 64, 128, 256, 512}})
    ->ArgsProduct({{2048}, {1}, {16, 32, 64, 128, 256, 2048}})
    ->Unit(benchmark::kMillisecond)->MeasureProcessCPUTime()->UseRealTime();
BENCHMARK_TEMPLATE(BM_tupe_backward, float)->Arg(512)->Unit(benchmark::kMillisecond)->MeasureProcessCPUTime()->UseRealTime();
