// SPDX-License-Identifier: MIT
// toeplitz::product_plan::set_threads: apply() with the columns of X spread over n threads gives
// Y bitwise equal to the serial product (the parts start on the serial column groups: whole lane
// batches, column pairs), on every path (real B with even P in batches and column by column, odd
// P with paired columns, complex B, complex X), for column- and row-major storage, column counts
// around the lane width, and more threads than columns; plus the serial product's accuracy against
// a long double dense product, and the argument check.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstddef>
#include <cstring>
#include <limits>
#include <vector>

#include "toeplitz/common.hpp"

namespace {

namespace tz = posenc::toeplitz;

template <class S, int Order>
using mat = Eigen::Matrix<S, Eigen::Dynamic, Eigen::Dynamic, Order>;

template <class A, class B>
bool bitwise_equal(const A& a, const B& b) {
  if (a.rows() != b.rows() || a.cols() != b.cols()) return false;
  for (Eigen::Index j = 0; j < a.cols(); ++j)
    for (Eigen::Index i = 0; i < a.rows(); ++i) {
      const auto x = a(i, j), y = b(i, j);
      if (std::memcmp(&x, &y, sizeof(x)) != 0) return false;
    }
  return true;
}

// Max-norm of Y - B X relative to max |B X|, B X in long double (dense), for small products.
template <class S, class X, class Y>
long double dense_error(const tz::toeplitz_matrix<S>& B, const X& x, const Y& y) {
  using L = std::complex<long double>;
  long double num = 0, den = 0;
  for (Eigen::Index c = 0; c < x.cols(); ++c)
    for (std::size_t i = 0; i < B.rows(); ++i) {
      L acc = 0;
      for (std::size_t j = 0; j < B.cols(); ++j) {
        const std::complex<long double> b(B(i, j)), v(x(static_cast<Eigen::Index>(j), c));
        acc += b * v;
      }
      const std::complex<long double> got(y(static_cast<Eigen::Index>(i), c));
      num = std::max(num, std::abs(got - acc));
      den = std::max(den, std::abs(acc));
    }
  return num / den;
}

template <class S, class U, int Order>
void check_threads(std::size_t m, std::size_t n, std::size_t fft_size, std::vector<Eigen::Index> ks) {
  using Y = tz::product_scalar<S, U>;
  const auto B = tz::toeplitz_matrix<S>(m, n, tp_test::random_vector<S>(m + n - 1));
  tz::product_plan<S> serial(B, fft_size);
  REQUIRE(serial.threads() == 1);
  for (Eigen::Index k : ks) {
    const auto X = tp_test::random_matrix<mat<U, Order>>(static_cast<Eigen::Index>(n), k);
    mat<Y, Order> Y1;
    serial.apply(X, Y1);
    // The serial product against the dense one: log2 P rounding steps of the transforms, each
    // within a few eps; 64 eps log2 P leaves an order of magnitude above what the transforms give.
    const long double eps = std::numeric_limits<typename tz::product_plan<S>::real>::epsilon();
    if (m * n * static_cast<std::size_t>(k) <= 400 * 400 * 8)
      CHECK_MESSAGE(dense_error(B, X, Y1) <= 64 * eps * std::log2(static_cast<long double>(serial.fft_size())),
                    "m=", m, " n=", n, " k=", k);
    for (std::size_t t : {2u, 3u, 5u}) {
      tz::product_plan<S> plan(B, fft_size);
      plan.set_threads(t);
      REQUIRE(plan.threads() == t);
      mat<Y, Order> Yt;
      plan.apply(X, Yt);
      CHECK_MESSAGE(bitwise_equal(Y1, Yt), "threads=", t, " m=", m, " n=", n, " k=", k, " P=", plan.fft_size(),
                    " real path=", plan.uses_real_path());
      // again, after a copy (its workers and buffers are its own) and after going back to one thread
      tz::product_plan<S> copy = plan;
      REQUIRE(copy.threads() == t);
      mat<Y, Order> Yc;
      copy.apply(X, Yc);
      CHECK(bitwise_equal(Y1, Yc));
      plan.set_threads(1);
      plan.apply(X, Yt);
      CHECK(bitwise_equal(Y1, Yt));
    }
  }
}

const std::vector<Eigen::Index> column_counts = {1, 2, 3, 7, 8, 9, 15, 16, 17, 24, 33, 64};

}  // namespace

TEST_CASE("toeplitz product_plan threads - real B, real X, even P: bitwise the serial product (batches and columns)") {
  check_threads<double, double, Eigen::ColMajor>(300, 257, 0, column_counts);
  check_threads<float, float, Eigen::ColMajor>(300, 257, 0, column_counts);
  check_threads<double, double, Eigen::RowMajor>(64, 80, 0, column_counts);
  check_threads<float, float, Eigen::RowMajor>(4096, 4096, 0, {16, 40});
  check_threads<double, double, Eigen::ColMajor>(16384, 16384, 0, {5, 16});
}

TEST_CASE("toeplitz product_plan threads - odd P (paired columns), complex B, complex X: bitwise the serial product") {
  check_threads<double, double, Eigen::ColMajor>(100, 90, 225, column_counts);  // odd P: two columns per vector
  check_threads<float, float, Eigen::RowMajor>(100, 90, 225, {1, 2, 3, 9});
  check_threads<std::complex<double>, double, Eigen::ColMajor>(120, 70, 0, {1, 3, 8, 17});
  check_threads<double, std::complex<double>, Eigen::ColMajor>(120, 70, 0, {1, 3, 8, 17});
  check_threads<std::complex<float>, std::complex<float>, Eigen::RowMajor>(64, 64, 0, {2, 9});
}

TEST_CASE("toeplitz product_plan threads - set_threads(0) is the hardware's count; above max_threads is invalid_argument") {
  const auto B = tz::toeplitz_matrix<double>::square(16, tp_test::random_vector<double>(31));
  tz::product_plan<double> plan(B);
  plan.set_threads(0);
  CHECK(plan.threads() >= 1);
  CHECK_THROWS_WITH_AS(plan.set_threads(posenc::max_threads + 1),
                       doctest::Contains("toeplitz::product_plan::set_threads: threads: expected 0 (all hardware threads) .. 1024, got 1025"),
                       posenc::invalid_argument);
  CHECK(plan.threads() >= 1);  // unchanged by the failed call
}

TEST_CASE("toeplitz product_plan - a moved-from plan is refused by apply, set_coefficients and set_threads, usable once assigned") {
  const auto B = tz::toeplitz_matrix<double>::square(16, tp_test::random_vector<double>(31));
  tz::product_plan<double> plan(B);
  plan.set_threads(2);
  tz::product_plan<double> taken(std::move(plan));
  const Eigen::MatrixXd X = Eigen::MatrixXd::Ones(16, 3);
  Eigen::MatrixXd Y;
  // NOLINTBEGIN(bugprone-use-after-move): the moved-from state is what is tested
  CHECK_THROWS_WITH_AS(plan.apply(X, Y), doctest::Contains("toeplitz::product_plan::apply: the plan was moved from"),
                       posenc::invalid_argument);
  CHECK_THROWS_WITH_AS(plan.set_coefficients(B), doctest::Contains("toeplitz::product_plan::set_coefficients: the plan was moved from"),
                       posenc::invalid_argument);
  CHECK_THROWS_WITH_AS(plan.set_threads(2), doctest::Contains("toeplitz::product_plan::set_threads: the plan was moved from"),
                       posenc::invalid_argument);
  plan = taken;  // a copy: its own buffers and workers
  // NOLINTEND(bugprone-use-after-move)
  Eigen::MatrixXd Y1, Y2;
  plan.apply(X, Y1);
  taken.apply(X, Y2);
  CHECK(plan.threads() == 2);
  CHECK((Y1.array() == Y2.array()).all());
  CHECK((Y1 - B.dense() * X).cwiseAbs().maxCoeff() <= 1e-13);  // 16 terms of size <= 1, a few eps each
}
