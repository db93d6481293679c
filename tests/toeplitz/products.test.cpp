// SPDX-License-Identifier: MIT
// FFT products B X against the dense product (or, for large n, against exact naive row sums),
// real and complex, f64 and f32, row- and column-major X, square and rectangular B, every
// circulant size policy; relative-bias operators against their naive sums.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <vector>

#include "toeplitz/common.hpp"

namespace tz = posenc::toeplitz;

namespace {

template <class S>
using cmat = Eigen::Matrix<S, Eigen::Dynamic, Eigen::Dynamic>;
template <class S>
using rmat = Eigen::Matrix<S, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// Relative error ||Y - R||_F / ||R||_F with the reference R computed in long double from the same
// (rounded) inputs: the dense product for small n, naive sums for a sample of rows for large n.
template <class S, class U, class MX>
double product_error(const tz::toeplitz_matrix<S>& B, const MX& X, const auto& Y, bool sample_rows) {
  using LS = std::conditional_t<tz::is_complex_v<S> || tz::is_complex_v<U>, std::complex<long double>, long double>;
  const std::size_t m = B.rows(), n = B.cols();
  std::vector<std::size_t> rows;
  if (!sample_rows) {
    for (std::size_t i = 0; i < m; ++i) rows.push_back(i);
  } else {
    for (std::size_t i : {std::size_t(0), std::size_t(1), m / 2, m - 2, m - 1}) rows.push_back(std::min(i, m - 1));
    for (int t = 0; t < 24; ++t) rows.push_back(static_cast<std::size_t>(tp_test::rng()() % m));
  }
  long double num = 0, den = 0;
  for (std::size_t i : rows)
    for (Eigen::Index c = 0; c < X.cols(); ++c) {
      LS acc = 0;
      for (std::size_t j = 0; j < n; ++j)
        acc += static_cast<LS>(B(i, j)) * static_cast<LS>(X(Eigen::Index(j), c));
      const LS y = static_cast<LS>(Y(Eigen::Index(i), c));
      num += std::norm(y - acc);
      den += std::norm(acc);
    }
  return static_cast<double>(std::sqrt(num / den));
}

template <class S, class U>
void check_products(std::size_t m, std::size_t n, Eigen::Index k, double tol, std::size_t fft_size = 0) {
  using Y = tz::product_scalar<S, U>;
  const auto B = tz::toeplitz_matrix<S>(m, n, tp_test::random_vector<S>(m + n - 1));
  tz::product_plan<S> plan(B, fft_size);
  const bool sample = m * n > 300 * 300;
  // Column-major X.
  const auto Xc = tp_test::random_matrix<cmat<U>>(Eigen::Index(n), k);
  cmat<Y> Yc(Eigen::Index(m), k);
  plan.apply(Xc, Yc);
  const double ec = product_error<S, U>(B, Xc, Yc, sample);
  CHECK_MESSAGE(ec <= tol, "col-major m=", m, " n=", n, " k=", k, " P=", plan.fft_size(), " err=", ec);
  // Row-major X (same values), row-major Y: must agree with the column-major result exactly
  // (same operations in the same order).
  const rmat<U> Xr = Xc;
  rmat<Y> Yr(Eigen::Index(m), k);
  plan.apply(Xr, Yr);
  CHECK(Yr == Yc);
  // Small sizes: also against Eigen's dense product (tolerance tol, relative Frobenius).
  if (!sample) {
    const cmat<Y> Rd = B.dense().template cast<Y>() * Xc.template cast<Y>();
    const double ed = static_cast<double>((Yc - Rd).norm() / Rd.norm());
    CHECK_MESSAGE(ed <= tol, "dense m=", m, " n=", n, " err=", ed);
  }
}

}  // namespace

TEST_CASE("products f64 square - all n <= 64, k = 1 and 64, against the dense product") {
  // Tolerance 1e-12 (the issue's): the FFT product's error is ~ eps log2(P) ||B|| ||X|| / ||BX||,
  // about 1e-15 for random data.
  for (std::size_t n = 1; n <= 64; ++n) {
    check_products<double, double>(n, n, 1, 1e-12);
    check_products<double, double>(n, n, 64, 1e-12);
  }
}

TEST_CASE("products f64 square - large and awkward n (primes, non powers of two, 4096)") {
  // Large n: exact long double sums on 29 sampled rows (the dense product of n = 4096, k = 64 is
  // too slow for a unit test under sanitizers); tolerance 1e-12 as above.
  for (std::size_t n : {97u, 100u, 127u, 128u, 257u, 500u, 511u, 512u, 1000u, 1009u, 2047u, 3001u, 4096u})
    check_products<double, double>(n, n, 1, 1e-12);
  for (std::size_t n : {257u, 1009u, 4096u}) check_products<double, double>(n, n, 64, 1e-12);
}

TEST_CASE("products f32 - tolerance 1e-5 against a long double reference") {
  // f32: eps = 6e-8, so eps log2(P) with P <= 8192 is ~1e-6; the bound is 1e-5.
  for (std::size_t n : {1u, 2u, 3u, 7u, 16u, 31u, 64u, 100u, 1009u, 4096u}) {
    check_products<float, float>(n, n, 1, 1e-5);
    check_products<float, float>(n, n, 7, 1e-5);
  }
  check_products<std::complex<float>, std::complex<float>>(300, 300, 3, 1e-5);
}

TEST_CASE("products complex - complex B, complex X, and the mixed cases") {
  // Complex paths: same 1e-12 bound as the real f64 products.
  for (std::size_t n : {1u, 2u, 5u, 17u, 64u, 243u, 1000u}) {
    check_products<std::complex<double>, std::complex<double>>(n, n, 3, 1e-12);
    check_products<std::complex<double>, double>(n, n, 2, 1e-12);
    check_products<double, std::complex<double>>(n, n, 2, 1e-12);
  }
}

TEST_CASE("products rectangular and explicit circulant sizes (2n, 2n-1, odd, prime)") {
  // Rectangular m x n, and every size policy: paper (2n), scipy (m+n-1, odd -> paired columns,
  // with an odd k so the last column runs alone), prime P (Bluestein inside the plan).
  for (std::size_t m : {1u, 2u, 9u, 40u})
    for (std::size_t n : {1u, 3u, 10u, 33u}) {
      check_products<double, double>(m, n, 5, 1e-12);
      check_products<double, double>(m, n, 5, 1e-12, m + n - 1);
      check_products<double, double>(m, n, 3, 1e-12, m + n + 4);
      check_products<std::complex<double>, double>(m, n, 3, 1e-12, m + n - 1);
    }
  for (std::size_t n : {4u, 16u, 50u}) check_products<double, double>(n, n, 4, 1e-12, 2 * n);
  check_products<double, double>(30, 30, 3, 1e-12, 61);  // prime P -> Bluestein
  check_products<double, std::complex<double>>(30, 30, 3, 1e-12, 61);
}

TEST_CASE("products - set_coefficients reuses the plan, vector convenience overloads") {
  // Reference: a fresh plan on the new coefficients (must agree bit for bit: same operations).
  const std::size_t n = 77;
  auto B1 = tz::toeplitz_matrix<double>::square(n, tp_test::random_vector<double>(2 * n - 1));
  auto B2 = tz::toeplitz_matrix<double>::square(n, tp_test::random_vector<double>(2 * n - 1));
  tz::product_plan<double> p(B1);
  p.set_coefficients(B2);
  tz::product_plan<double> q(B2);
  const auto x = tp_test::random_vector<double>(n);
  const Eigen::VectorXd y1 = p.apply(x), y2 = q.apply(x);
  CHECK(y1 == y2);
  const Eigen::VectorXd yd = B2.dense() * x;
  CHECK((y1 - yd).norm() <= 1e-12 * yd.norm());
  const Eigen::VectorXd y3 = tz::multiply(B2, x);
  CHECK(y3 == y2);
  // The plan's spectrum is the DFT of its embedding's first column (eigenvalues, first P/2+1 bins).
  const auto lam = tz::circulant_embedding(B2, p.fft_size()).eigenvalues();
  const auto s = p.spectrum();
  REQUIRE(s.size() == Eigen::Index(p.fft_size() / 2 + 1));
  CHECK((s - lam.head(s.size())).cwiseAbs().maxCoeff() <= 1e-12 * lam.cwiseAbs().maxCoeff());
}

TEST_CASE("relative bias - per-offset and bucketed tables as Toeplitz operators, per head") {
  // Reference: the naive relative term sum_j b_{j-i} v_j with b read from the table through the
  // caller's bucket function. Tolerance 1e-12 relative (FFT rounding).
  const std::size_t n = 50;
  const Eigen::Index dv = 4;
  const auto V = tp_test::random_matrix<rmat<double>>(Eigen::Index(n), dv);
  // Per offset.
  const auto b = tp_test::random_vector<double>(2 * n - 1);
  auto plan = tz::product_plan<double>(tz::from_relative_bias(n, n, b));
  const rmat<double> Y = plan.apply(V);
  for (std::size_t i = 0; i < n; ++i)
    for (Eigen::Index c = 0; c < dv; ++c) {
      double ref = 0, mag = 0;
      for (std::size_t j = 0; j < n; ++j) {
        ref += b[Eigen::Index(j + n - 1 - i)] * V(Eigen::Index(j), c);
        mag += std::abs(b[Eigen::Index(j + n - 1 - i)] * V(Eigen::Index(j), c));
      }
      CHECK(std::abs(Y(Eigen::Index(i), c) - ref) <= 1e-12 * mag);
    }
  // Bucketed, 3 heads, a clipped-distance bucket (offsets beyond +-5 share a bucket).
  constexpr int K = 5;
  auto bucket = [](std::ptrdiff_t d) { return static_cast<int>(std::clamp<std::ptrdiff_t>(d, -K, K) + K); };
  const auto table = tp_test::random_matrix<rmat<double>>(3, 2 * K + 1);
  auto heads = tz::head_operators(n, n, table, bucket);
  REQUIRE(heads.size() == 3);
  for (std::size_t h = 0; h < 3; ++h) {
    const rmat<double> Yh = heads[h].apply(V);
    for (std::size_t i = 0; i < n; ++i)
      for (Eigen::Index c = 0; c < dv; ++c) {
        double ref = 0, mag = 0;
        for (std::size_t j = 0; j < n; ++j) {
          const double bij = table(Eigen::Index(h), bucket(std::ptrdiff_t(j) - std::ptrdiff_t(i)));
          ref += bij * V(Eigen::Index(j), c);
          mag += std::abs(bij * V(Eigen::Index(j), c));
        }
        CHECK(std::abs(Yh(Eigen::Index(i), c) - ref) <= 1e-12 * mag);
      }
  }
}
