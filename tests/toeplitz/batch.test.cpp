// SPDX-License-Identifier: MIT
// posenc::fft::batch_plan (width() transforms in the SIMD lanes) and the batched column path of
// toeplitz::product_plan, against long double references: the direct DFT per lane, the exact
// pack/unpack permutation, the conj-pair map evaluated directly, and the dense O(n^2) product.
#include <doctest/doctest.h>

#include <cmath>
#include <complex>
#include <limits>
#include <string>
#include <vector>

#include "toeplitz/common.hpp"

namespace {

using tp_test::cld;
namespace tz = posenc::toeplitz;

template <class T>
long double eps() {
  return static_cast<long double>(std::numeric_limits<T>::epsilon());
}

// Tolerance of one transform: max-norm error <= 10 eps max(1, log2 n) max|X| (see fft_lanes.test.cpp).
template <class T>
void check_batch(std::size_t n) {
  posenc::fft::batch_plan<T> bp(n);
  const std::size_t W = bp.width();
  REQUIRE(bp.size() == n);
  std::vector<std::vector<cld>> x(W, std::vector<cld>(n));
  for (std::size_t l = 0; l < W; ++l)
    for (std::size_t j = 0; j < n; ++j) {
      const T re = tp_test::uniform<T>(), im = tp_test::uniform<T>();
      bp.data_re()[j * W + l] = re;
      bp.data_im()[j * W + l] = im;
      x[l][j] = cld(re, im);
    }
  // A copy on caller arrays, transformed by the pointer overloads (inverse direction).
  std::vector<T> cr(bp.data_re(), bp.data_re() + n * W), ci(bp.data_im(), bp.data_im() + n * W);
  bp.forward();
  bp.inverse(cr.data(), ci.data());
  const long double tol = 10 * eps<T>() * std::max(1.0L, std::log2(static_cast<long double>(n)));
  const auto bins = n <= 300 ? std::vector<std::size_t>{} : tp_test::sample_bins(n, 48);
  for (std::size_t l = 0; l < W; ++l) {
    std::vector<std::complex<T>> y(n), z(n);
    for (std::size_t k = 0; k < n; ++k) {
      y[k] = {bp.data_re()[k * W + l], bp.data_im()[k * W + l]};
      z[k] = {cr[k * W + l], ci[k * W + l]};
    }
    if (n <= 300) {
      CHECK_MESSAGE(tp_test::rel_max_error(y, tp_test::direct_dft(x[l], -1)) <= tol, "forward n=", n, " lane ", l);
      CHECK_MESSAGE(tp_test::rel_max_error(z, tp_test::direct_dft(x[l], +1)) <= tol, "inverse n=", n, " lane ", l);
    } else {
      CHECK_MESSAGE(tp_test::rel_max_error_at(y, tp_test::direct_dft_at(x[l], bins, -1), bins) <= tol, "forward n=", n, " lane ", l);
      CHECK_MESSAGE(tp_test::rel_max_error_at(z, tp_test::direct_dft_at(x[l], bins, +1), bins) <= tol, "inverse n=", n, " lane ", l);
    }
  }
}

const std::vector<std::size_t> batch_sizes = {1, 2, 3, 4, 5, 7, 8, 12, 13, 30, 64, 100, 128, 243, 1000, 4096};

}  // namespace

TEST_CASE("fft batch_plan f64 - every lane matches the long double direct DFT, forward and inverse") {
  for (std::size_t n : batch_sizes) check_batch<double>(n);
}

TEST_CASE("fft batch_plan f32 - every lane matches the long double direct DFT, forward and inverse") {
  for (std::size_t n : batch_sizes) check_batch<float>(n);
}

TEST_CASE("fft batch_plan - sizes with a prime factor > 13 are rejected with invalid_argument") {
  CHECK(posenc::fft::batch_plan<double>::supported(4096));
  CHECK_FALSE(posenc::fft::batch_plan<double>::supported(17));
  CHECK_FALSE(posenc::fft::batch_plan<double>::supported(0));
  CHECK_THROWS_AS(posenc::fft::batch_plan<double>(34), posenc::invalid_argument);
  CHECK(posenc::fft::batch_plan<long double>::width() == 1);
}

TEST_CASE("fft batch_plan pack_real / unpack_real - a column longer than 2 n is rejected, nothing written") {
  // n = 8 complex points hold 16 reals: len = 17 would write past the plan's arrays.
  posenc::fft::batch_plan<double> plan(8);
  std::vector<double> x(17, 1.0);
  const double* src[] = {x.data()};
  double* dst[] = {x.data()};
  const std::size_t step[] = {1};
  plan.pack_real(src, step, 1, 16);  // the largest accepted length
  CHECK_THROWS_AS(plan.pack_real(src, step, 1, 17), posenc::invalid_argument);
  CHECK_THROWS_AS(plan.unpack_real(dst, step, 1, 17), posenc::invalid_argument);
  try {
    plan.pack_real(src, step, 1, 17);
  } catch (const posenc::invalid_argument& e) {
    const std::string m = e.what();
    CHECK(m.find("pack_real") != std::string::npos);
    CHECK(m.find("len must be <= 2 n = 16") != std::string::npos);
    CHECK(m.find("got 17") != std::string::npos);
  }
  CHECK(x[16] == 1.0);
}

TEST_CASE("fft batch_plan pack_real / unpack_real - the exact interleaving, zero padding and empty lanes") {
  // Reference: the definition z_j = x_{2j} + i x_{2j+1} (exact copies, compared with ==).
  const std::size_t n = 10, W = posenc::fft::batch_plan<double>::width();
  posenc::fft::batch_plan<double> bp(n);
  for (std::size_t len : {std::size_t(20), std::size_t(15), std::size_t(7)})
    for (std::size_t used = 1; used <= W; ++used) {
      std::vector<std::vector<double>> cols(used, std::vector<double>(3 * len));
      std::vector<const double*> src(used);
      std::vector<std::size_t> step(used);
      for (std::size_t l = 0; l < used; ++l) {
        for (auto& v : cols[l]) v = tp_test::uniform<double>();
        src[l] = cols[l].data();
        step[l] = 1 + l % 3;  // unit and strided columns
      }
      bp.pack_real(src.data(), step.data(), used, len);
      for (std::size_t j = 0; j < n; ++j)
        for (std::size_t l = 0; l < W; ++l) {
          const double er = (l < used && 2 * j < len) ? cols[l][2 * j * step[l]] : 0.0;
          const double ei = (l < used && 2 * j + 1 < len) ? cols[l][(2 * j + 1) * step[l]] : 0.0;
          CHECK(bp.data_re()[j * W + l] == er);
          CHECK(bp.data_im()[j * W + l] == ei);
        }
      std::vector<std::vector<double>> out(used, std::vector<double>(3 * len, -7.0));
      std::vector<double*> dst(used);
      for (std::size_t l = 0; l < used; ++l) dst[l] = out[l].data();
      bp.unpack_real(dst.data(), step.data(), used, len);
      for (std::size_t l = 0; l < used; ++l)
        for (std::size_t i = 0; i < 3 * len; ++i)
          CHECK(out[l][i] == ((i % step[l] == 0 && i / step[l] < len) ? cols[l][i] : -7.0));
    }
}

TEST_CASE("fft batch_plan conj_pair_map - Z'_k = alpha_k Z_k + beta_k conj Z_{n-k} in every lane") {
  // Reference: the formula in long double; tolerance 4 eps max|Z'| (two complex products and
  // a sum per output).
  for (std::size_t n : {std::size_t(1), std::size_t(2), std::size_t(7), std::size_t(12)}) {
    posenc::fft::batch_plan<double> bp(n);
    const std::size_t W = bp.width();
    std::vector<double> ar(n), ai(n), br(n), bi(n);
    for (std::size_t k = 0; k < n; ++k) {
      ar[k] = tp_test::uniform<double>();
      ai[k] = tp_test::uniform<double>();
      br[k] = tp_test::uniform<double>();
      bi[k] = tp_test::uniform<double>();
    }
    for (std::size_t i = 0; i < n * W; ++i) {
      bp.data_re()[i] = tp_test::uniform<double>();
      bp.data_im()[i] = tp_test::uniform<double>();
    }
    std::vector<cld> z(n * W);
    for (std::size_t i = 0; i < n * W; ++i) z[i] = cld(bp.data_re()[i], bp.data_im()[i]);
    bp.conj_pair_map(ar.data(), ai.data(), br.data(), bi.data());
    for (std::size_t k = 0; k < n; ++k)
      for (std::size_t l = 0; l < W; ++l) {
        const cld ref = cld(ar[k], ai[k]) * z[k * W + l] + cld(br[k], bi[k]) * std::conj(z[((n - k) % n) * W + l]);
        const cld got(bp.data_re()[k * W + l], bp.data_im()[k * W + l]);
        CHECK(std::abs(got - ref) <= 4 * eps<double>() * (std::abs(ref) + 4));
      }
  }
}

namespace {

// B X against the dense O(n^2) product in long double, column by column:
// ||Y_c - R_c||_2 <= 3 eps log2(P) ||b||_1 ||x_c||_2, where ||b||_1 = sum_d |b_d| >= ||B||_2.
// (The FFT's relative error in each transform is O(eps log2 P) in the 2-norm; the spectrum of B
// is bounded by ||b||_1, so the product's error is bounded by the transforms' error times
// ||b||_1 ||x_c||_2.) A wrong lane, a lost column or a mis-paired bin gives O(1) errors.
template <class T, class MX>
void check_against_dense(std::size_t m, std::size_t n, const MX& X, const char* what) {
  const auto B = tz::toeplitz_matrix<T>(m, n, tp_test::random_vector<T>(m + n - 1));
  tz::product_plan<T> plan(B);
  Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic> Y(Eigen::Index(m), X.cols());
  plan.apply(X, Y);
  long double b1 = 0;
  for (Eigen::Index t = 0; t < B.coefficients().size(); ++t) b1 += std::abs(static_cast<long double>(B.coefficients()[t]));
  const long double lg = std::log2(static_cast<long double>(plan.fft_size()));
  for (Eigen::Index c = 0; c < X.cols(); ++c) {
    long double err = 0, xn = 0;
    for (std::size_t j = 0; j < n; ++j) xn += std::pow(static_cast<long double>(X(Eigen::Index(j), c)), 2);
    for (std::size_t i = 0; i < m; ++i) {
      long double acc = 0;
      for (std::size_t j = 0; j < n; ++j) acc += static_cast<long double>(B(i, j)) * static_cast<long double>(X(Eigen::Index(j), c));
      err += std::pow(static_cast<long double>(Y(Eigen::Index(i), c)) - acc, 2);
    }
    const long double bound = 3 * eps<T>() * lg * b1 * std::sqrt(xn);
    CHECK_MESSAGE(std::sqrt(err) <= bound, what, " m=", m, " n=", n, " k=", X.cols(), " column ", c, " err=",
                  static_cast<double>(std::sqrt(err)), " bound=", static_cast<double>(bound));
  }
}

template <class T>
void check_batched_products() {
  const auto W = static_cast<Eigen::Index>(posenc::fft::batch_plan<T>::width());
  // Every column count up to 2W + 1: full batches, a padded remainder (>= W/2 columns) and a
  // per-column remainder; odd and even n, P a power of two (n = 64), 2^a 5^b (n = 100, 97), 2^a 3^b
  // (n = 48 -> P = 96), rectangular m != n.
  for (auto [m, n] : {std::pair<std::size_t, std::size_t>{64, 64}, {100, 100}, {97, 97}, {48, 48}, {37, 90}, {90, 37}, {1, 5}})
    for (Eigen::Index k = 1; k <= 2 * W + 1; ++k) {
      using M = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic>;
      using R = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
      const M X = tp_test::random_matrix<M>(Eigen::Index(n), k);
      check_against_dense<T>(m, n, X, "col-major");
      const R Xr = X;
      check_against_dense<T>(m, n, Xr, "row-major");
    }
  // An expression without direct access takes the per-column path: same bound.
  const Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic> X = tp_test::random_matrix<Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic>>(50, 2 * W);
  check_against_dense<T>(50, 50, (X * T(2)).eval(), "evaluated");
  check_against_dense<T>(50, 50, X * T(2), "expression");
  // A large size: one product with P = 2^14 against the dense product on every row.
  const Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic> Xl = tp_test::random_matrix<Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic>>(4096, W + 1);
  check_against_dense<T>(4096, 4096, Xl, "large");
}

}  // namespace

TEST_CASE("products f64 batched columns - every k <= 2W+1, against the dense long double product") {
  check_batched_products<double>();
}

TEST_CASE("products f32 batched columns - every k <= 2W+1, against the dense long double product") {
  check_batched_products<float>();
}
