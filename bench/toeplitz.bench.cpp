// SPDX-License-Identifier: MIT
// Toeplitz products B X (n x n, k columns) by FFT beside the dense Eigen product and beside the
// same algorithm on FFTW; the FFT itself beside FFTW (FFTW_MEASURE plans, made outside the timed
// loop) and Eigen's unsupported FFT module (kissfft). FFTW is linked by this program only.
// BM_product_fft_threads: the product with its columns spread over 1 or 2 threads
// (product_plan::set_threads), wall-clock time.
//
// Counters: "GFLOP/s" uses the nominal FFT count (5 N log2 N per complex transform of size N,
// half that for a real one) or 2 n^2 k for the dense product; "dense_equiv_GFLOP/s" is 2 n^2 k over
// the time, i.e. the rate the dense product would need to match.
#include <benchmark/benchmark.h>

// GCC 12 reports a false -Wmaybe-uninitialized inside its own AVX-512 intrinsics when Eigen's
// GEMM kernels are compiled with -march=native (GCC bug 105593); it is not about this code.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#include <Eigen/Core>
#include <cmath>
#include <complex>
#include <cstring>
#include <random>
#include <unsupported/Eigen/FFT>
#include <vector>

#include <posenc/toeplitz.hpp>

#if defined(POSENC_BENCH_HAVE_FFTW)
#include <fftw3.h>
#endif

namespace {

namespace tz = posenc::toeplitz;

template <class T>
std::vector<T> random_values(std::size_t n, unsigned seed = 7) {
  std::mt19937_64 g(seed);
  std::uniform_real_distribution<double> d(-1, 1);
  std::vector<T> v(n);
  for (auto& x : v) x = static_cast<T>(d(g));
  return v;
}

template <class T>
tz::toeplitz_matrix<T> random_toeplitz(std::size_t n, unsigned seed = 11) {
  const auto b = random_values<T>(2 * n - 1, seed);
  return tz::toeplitz_matrix<T>::square(n, Eigen::Map<const Eigen::Matrix<T, Eigen::Dynamic, 1>>(b.data(), Eigen::Index(b.size())));
}

template <class T>
using cmat = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic>;

double fft_flops(double n) { return 5.0 * n * std::log2(n); }

// Work of one FFT product column: r2c + c2r of size P (real path) plus the pointwise product.
double product_flops(std::size_t P) { return 2 * 0.5 * fft_flops(double(P)) + 6.0 * double(P / 2 + 1); }

void set_rate(benchmark::State& state, const char* name, double flops) {
  state.counters[name] = benchmark::Counter(flops, benchmark::Counter::kIsIterationInvariantRate, benchmark::Counter::kIs1000);
}

// ------------------------------------------------------------------------------------------
// Products
// ------------------------------------------------------------------------------------------

// The product B X, n x n, k columns (args n, k), the columns on `threads` threads.
template <class T>
void product_loop(benchmark::State& state, std::size_t threads) {
  const std::size_t n = std::size_t(state.range(0));
  const Eigen::Index k = state.range(1);
  const auto B = random_toeplitz<T>(n);
  tz::product_plan<T> plan(B);
  plan.set_threads(threads);
  const auto xv = random_values<T>(n * std::size_t(k), 3);
  const Eigen::Map<const cmat<T>> X(xv.data(), Eigen::Index(n), k);
  cmat<T> Y(Eigen::Index(n), k);
  for (auto _ : state) {
    plan.apply(X, Y);
    benchmark::DoNotOptimize(Y.data());
    benchmark::ClobberMemory();
  }
  state.counters["P"] = double(plan.fft_size());
  set_rate(state, "GFLOP/s", double(k) * product_flops(plan.fft_size()) * 1e-9);
  set_rate(state, "dense_equiv_GFLOP/s", 2.0 * double(n) * double(n) * double(k) * 1e-9);
}

template <class T>
void BM_product_fft(benchmark::State& state) {
  product_loop<T>(state, 1);
}

// The same product with the columns spread over `threads` threads (product_plan::set_threads,
// third argument), wall-clock time: against threads = 1 of the same benchmark in the same run.
template <class T>
void BM_product_fft_threads(benchmark::State& state) {
  product_loop<T>(state, static_cast<std::size_t>(state.range(2)));
}

template <class T>
void BM_product_fft_with_spectrum(benchmark::State& state) {
  const std::size_t n = std::size_t(state.range(0));
  const Eigen::Index k = state.range(1);
  const auto B = random_toeplitz<T>(n);
  tz::product_plan<T> plan(B);
  const auto xv = random_values<T>(n * std::size_t(k), 3);
  const Eigen::Map<const cmat<T>> X(xv.data(), Eigen::Index(n), k);
  cmat<T> Y(Eigen::Index(n), k);
  for (auto _ : state) {
    plan.set_coefficients(B);  // the spectrum of B: one more r2c of size P
    plan.apply(X, Y);
    benchmark::DoNotOptimize(Y.data());
    benchmark::ClobberMemory();
  }
  set_rate(state, "GFLOP/s", (double(k) * product_flops(plan.fft_size()) + 0.5 * fft_flops(double(plan.fft_size()))) * 1e-9);
  set_rate(state, "dense_equiv_GFLOP/s", 2.0 * double(n) * double(n) * double(k) * 1e-9);
}

template <class T>
void BM_product_dense(benchmark::State& state) {
  const std::size_t n = std::size_t(state.range(0));
  const Eigen::Index k = state.range(1);
  Eigen::setNbThreads(1);  // the FFT product is single-threaded
  const cmat<T> D = random_toeplitz<T>(n).dense();
  const auto xv = random_values<T>(n * std::size_t(k), 3);
  const Eigen::Map<const cmat<T>> X(xv.data(), Eigen::Index(n), k);
  cmat<T> Y(Eigen::Index(n), k);
  for (auto _ : state) {
    Y.noalias() = D * X;
    benchmark::DoNotOptimize(Y.data());
    benchmark::ClobberMemory();
  }
  set_rate(state, "GFLOP/s", 2.0 * double(n) * double(n) * double(k) * 1e-9);
  set_rate(state, "dense_equiv_GFLOP/s", 2.0 * double(n) * double(n) * double(k) * 1e-9);
}

#if defined(POSENC_BENCH_HAVE_FFTW)
template <class T>
struct fftw;
template <>
struct fftw<double> {
  using plan = fftw_plan;
  using cplx = fftw_complex;
  static void* alloc(std::size_t b) { return fftw_malloc(b); }
  static void free(void* p) { fftw_free(p); }
  static plan r2c(int n, double* in, cplx* out) { return fftw_plan_dft_r2c_1d(n, in, out, FFTW_MEASURE); }
  static plan c2r(int n, cplx* in, double* out) { return fftw_plan_dft_c2r_1d(n, in, out, FFTW_MEASURE); }
  static plan c2c(int n, cplx* in, cplx* out) { return fftw_plan_dft_1d(n, in, out, FFTW_FORWARD, FFTW_MEASURE); }
  static void exec(plan p) { fftw_execute(p); }
  static void destroy(plan p) { fftw_destroy_plan(p); }
};
template <>
struct fftw<float> {
  using plan = fftwf_plan;
  using cplx = fftwf_complex;
  static void* alloc(std::size_t b) { return fftwf_malloc(b); }
  static void free(void* p) { fftwf_free(p); }
  static plan r2c(int n, float* in, cplx* out) { return fftwf_plan_dft_r2c_1d(n, in, out, FFTW_MEASURE); }
  static plan c2r(int n, cplx* in, float* out) { return fftwf_plan_dft_c2r_1d(n, in, out, FFTW_MEASURE); }
  static plan c2c(int n, cplx* in, cplx* out) { return fftwf_plan_dft_1d(n, in, out, FFTW_FORWARD, FFTW_MEASURE); }
  static void exec(plan p) { fftwf_execute(p); }
  static void destroy(plan p) { fftwf_destroy_plan(p); }
};

// The same product on FFTW: r2c of each zero-padded column, pointwise product with the
// precomputed spectrum of the size-P embedding, c2r (P = the posenc plan's size).
template <class T>
void BM_product_fftw(benchmark::State& state) {
  using F = fftw<T>;
  const std::size_t n = std::size_t(state.range(0));
  const Eigen::Index k = state.range(1);
  const auto B = random_toeplitz<T>(n);
  const std::size_t P = tz::product_plan<T>(B).fft_size(), H = P / 2 + 1;
  T* buf = static_cast<T*>(F::alloc(sizeof(T) * P));
  auto* spec = static_cast<typename F::cplx*>(F::alloc(sizeof(typename F::cplx) * H));
  auto* S = static_cast<typename F::cplx*>(F::alloc(sizeof(typename F::cplx) * H));
  auto fwd = F::r2c(int(P), buf, spec);
  auto inv = F::c2r(int(P), spec, buf);
  const auto col = tz::circulant_embedding(B, P).first_column();
  for (std::size_t t = 0; t < P; ++t) buf[t] = col[Eigen::Index(t)] / T(P);
  F::exec(fwd);
  std::memcpy(S, spec, sizeof(typename F::cplx) * H);
  const auto xv = random_values<T>(n * std::size_t(k), 3);
  cmat<T> Y(Eigen::Index(n), k);
  for (auto _ : state) {
    for (Eigen::Index c = 0; c < k; ++c) {
      std::memcpy(buf, xv.data() + std::size_t(c) * n, sizeof(T) * n);
      std::memset(buf + n, 0, sizeof(T) * (P - n));
      F::exec(fwd);
      for (std::size_t q = 0; q < H; ++q) {
        const T a = spec[q][0], b = spec[q][1];
        spec[q][0] = a * S[q][0] - b * S[q][1];
        spec[q][1] = a * S[q][1] + b * S[q][0];
      }
      F::exec(inv);
      std::memcpy(Y.data() + std::size_t(c) * n, buf, sizeof(T) * n);
    }
    benchmark::DoNotOptimize(Y.data());
    benchmark::ClobberMemory();
  }
  F::destroy(fwd);
  F::destroy(inv);
  F::free(buf);
  F::free(spec);
  F::free(S);
  set_rate(state, "GFLOP/s", double(k) * product_flops(P) * 1e-9);
  set_rate(state, "dense_equiv_GFLOP/s", 2.0 * double(n) * double(n) * double(k) * 1e-9);
}
#endif

// ------------------------------------------------------------------------------------------
// The FFT alone (sizes N = 2n, the product's P): complex c2c and real r2c
// ------------------------------------------------------------------------------------------

template <class T>
void BM_fft_c2c_posenc(benchmark::State& state) {
  const std::size_t N = std::size_t(state.range(0));
  posenc::fft::plan<T> p(N);
  auto re = random_values<T>(N, 1), im = random_values<T>(N, 2);
  for (auto _ : state) {
    p.forward(re.data(), im.data());
    benchmark::DoNotOptimize(re.data());
    benchmark::ClobberMemory();
  }
  set_rate(state, "GFLOP/s", fft_flops(double(N)) * 1e-9);
}

template <class T>
void BM_fft_c2c_eigen(benchmark::State& state) {
  const std::size_t N = std::size_t(state.range(0));
  Eigen::FFT<T> f;
  std::vector<std::complex<T>> x(N), y(N);
  const auto re = random_values<T>(N, 1);
  for (std::size_t j = 0; j < N; ++j) x[j] = std::complex<T>(re[j], T(0.5));
  f.fwd(y.data(), x.data(), int(N));  // kissfft builds its twiddles on first use
  for (auto _ : state) {
    f.fwd(y.data(), x.data(), int(N));
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
  set_rate(state, "GFLOP/s", fft_flops(double(N)) * 1e-9);
}

template <class T>
void BM_fft_r2c_posenc(benchmark::State& state) {
  const std::size_t N = std::size_t(state.range(0));
  posenc::fft::real_plan<T> p(N);
  const auto x = random_values<T>(N, 1);
  std::vector<std::complex<T>> y(p.bins());
  for (auto _ : state) {
    p.forward(x.data(), y.data());
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
  set_rate(state, "GFLOP/s", 0.5 * fft_flops(double(N)) * 1e-9);
}

template <class T>
void BM_fft_r2c_eigen(benchmark::State& state) {
  const std::size_t N = std::size_t(state.range(0));
  Eigen::FFT<T> f;
  f.SetFlag(Eigen::FFT<T>::HalfSpectrum);
  const auto x = random_values<T>(N, 1);
  std::vector<std::complex<T>> y(N);
  f.fwd(y.data(), x.data(), int(N));
  for (auto _ : state) {
    f.fwd(y.data(), x.data(), int(N));
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
  set_rate(state, "GFLOP/s", 0.5 * fft_flops(double(N)) * 1e-9);
}

#if defined(POSENC_BENCH_HAVE_FFTW)
template <class T>
void BM_fft_c2c_fftw(benchmark::State& state) {
  using F = fftw<T>;
  const std::size_t N = std::size_t(state.range(0));
  auto* in = static_cast<typename F::cplx*>(F::alloc(sizeof(typename F::cplx) * N));
  auto* out = static_cast<typename F::cplx*>(F::alloc(sizeof(typename F::cplx) * N));
  auto p = F::c2c(int(N), in, out);
  const auto re = random_values<T>(N, 1);
  for (std::size_t j = 0; j < N; ++j) {
    in[j][0] = re[j];
    in[j][1] = T(0.5);
  }
  for (auto _ : state) {
    F::exec(p);
    benchmark::DoNotOptimize(out);
    benchmark::ClobberMemory();
  }
  F::destroy(p);
  F::free(in);
  F::free(out);
  set_rate(state, "GFLOP/s", fft_flops(double(N)) * 1e-9);
}

template <class T>
void BM_fft_r2c_fftw(benchmark::State& state) {
  using F = fftw<T>;
  const std::size_t N = std::size_t(state.range(0));
  T* in = static_cast<T*>(F::alloc(sizeof(T) * N));
  auto* out = static_cast<typename F::cplx*>(F::alloc(sizeof(typename F::cplx) * (N / 2 + 1)));
  auto p = F::r2c(int(N), in, out);
  const auto x = random_values<T>(N, 1);
  std::memcpy(in, x.data(), sizeof(T) * N);
  for (auto _ : state) {
    F::exec(p);
    benchmark::DoNotOptimize(out);
    benchmark::ClobberMemory();
  }
  F::destroy(p);
  F::free(in);
  F::free(out);
  set_rate(state, "GFLOP/s", 0.5 * fft_flops(double(N)) * 1e-9);
}
#endif

void product_args(benchmark::internal::Benchmark* b) {
  for (long n = 256; n <= 65536; n *= 2)
    for (long k : {1L, 16L, 64L}) b->Args({n, k});
  b->Unit(benchmark::kMicrosecond);
}
void thread_args(benchmark::internal::Benchmark* b) {
  b->ArgNames({"n", "k", "threads"});
  for (long n : {512L, 4096L, 16384L, 65536L})
    for (long k : {16L, 64L})
      for (long t : {1L, 2L}) b->Args({n, k, t});
  b->Unit(benchmark::kMicrosecond)->UseRealTime();
}
// Dense: the matrix alone is 8 n^2 bytes (2 GiB at n = 16384 in f64), so stop at 16384, and run
// the large sizes once (one n = 16384, k = 64 product is ~34 GFLOP).
void dense_args(benchmark::internal::Benchmark* b) {
  for (long n = 256; n <= 16384; n *= 2)
    for (long k : {1L, 64L}) b->Args({n, k});
  b->Unit(benchmark::kMicrosecond);
}
void fft_args(benchmark::internal::Benchmark* b) {
  for (long n = 512; n <= 131072; n *= 2) b->Arg(n);
  for (long n : {1000L, 6000L, 3 * 4096L, 5 * 8192L}) b->Arg(n);  // mixed radix
  for (long n : {1021L, 4099L}) b->Arg(n);                      // primes: Bluestein
  b->Unit(benchmark::kMicrosecond);
}

}  // namespace

BENCHMARK(BM_product_fft<double>)->Apply(product_args);
BENCHMARK(BM_product_fft<float>)->Apply(product_args);
BENCHMARK(BM_product_fft_threads<double>)->Apply(thread_args);
BENCHMARK(BM_product_fft_threads<float>)->Apply(thread_args);
BENCHMARK(BM_product_fft_with_spectrum<double>)->Apply(product_args);
BENCHMARK(BM_product_fft_with_spectrum<float>)->Apply(product_args);
BENCHMARK(BM_product_dense<double>)->Apply(dense_args);
BENCHMARK(BM_product_dense<float>)->Apply(dense_args);
#if defined(POSENC_BENCH_HAVE_FFTW)
BENCHMARK(BM_product_fftw<double>)->Apply(product_args);
BENCHMARK(BM_product_fftw<float>)->Apply(product_args);
BENCHMARK(BM_fft_c2c_fftw<double>)->Apply(fft_args);
BENCHMARK(BM_fft_c2c_fftw<float>)->Apply(fft_args);
BENCHMARK(BM_fft_r2c_fftw<double>)->Apply(fft_args);
BENCHMARK(BM_fft_r2c_fftw<float>)->Apply(fft_args);
#endif
BENCHMARK(BM_fft_c2c_posenc<double>)->Apply(fft_args);
BENCHMARK(BM_fft_c2c_posenc<float>)->Apply(fft_args);
BENCHMARK(BM_fft_c2c_eigen<double>)->Apply(fft_args);
BENCHMARK(BM_fft_c2c_eigen<float>)->Apply(fft_args);
BENCHMARK(BM_fft_r2c_posenc<double>)->Apply(fft_args);
BENCHMARK(BM_fft_r2c_posenc<float>)->Apply(fft_args);
BENCHMARK(BM_fft_r2c_eigen<double>)->Apply(fft_args);
BENCHMARK(BM_fft_r2c_eigen<float>)->Apply(fft_args);
