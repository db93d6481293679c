// SPDX-License-Identifier: MIT
// Bad input -> typed posenc errors; no allocation per product (counting global operator new).
#include <doctest/doctest.h>

#include <atomic>
#include <cmath>
#include <complex>
#include <cstdlib>
#include <limits>
#include <new>
#include <string>

#include "toeplitz/common.hpp"

// ---- counting allocator: counts operator new calls made while g_counting is set ----------------
namespace {
std::atomic<long> g_news{0};
thread_local bool g_counting = false;
void* counted_alloc(std::size_t n) {
  if (g_counting) ++g_news;
  if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
  throw std::bad_alloc();
}
}  // namespace

void* operator new(std::size_t n) { return counted_alloc(n); }
void* operator new[](std::size_t n) { return counted_alloc(n); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }

namespace tz = posenc::toeplitz;

namespace {
template <class F>
long count_news(F&& f) {
  g_news = 0;
  g_counting = true;
  f();
  g_counting = false;
  return g_news.load();
}
}  // namespace

TEST_CASE("no allocation per product - real, paired, complex and Bluestein paths") {
  // Reference: zero operator new calls and an unchanged Y buffer (Eigen allocates through malloc,
  // so a stable Y data pointer shows that Y was not reallocated either).
  const std::size_t n = 100;
  const auto B = tz::toeplitz_matrix<double>::square(n, tp_test::random_vector<double>(2 * n - 1));
  const auto X = tp_test::random_matrix<Eigen::MatrixXd>(Eigen::Index(n), 8);
  for (std::size_t P : {std::size_t(0), 2 * n - 1, std::size_t(211)}) {  // real path, paired, prime (Bluestein)
    tz::product_plan<double> plan(B, P);
    Eigen::MatrixXd Y(Eigen::Index(n), 8);
    const double* before = Y.data();
    CHECK(count_news([&] {
            for (int r = 0; r < 3; ++r) plan.apply(X, Y);
          }) == 0);
    CHECK(Y.data() == before);
    CHECK(count_news([&] { plan.set_coefficients(B); }) == 0);
  }
  const auto Xc = tp_test::random_matrix<Eigen::MatrixXcd>(Eigen::Index(n), 3);
  tz::product_plan<double> plan(B);
  Eigen::MatrixXcd Yc(Eigen::Index(n), 3);
  CHECK(count_news([&] { plan.apply(Xc, Yc); }) == 0);
  // Sanity check that the counter works: building a plan allocates.
  CHECK(count_news([&] { tz::product_plan<double> p2(B); }) > 0);
}

TEST_CASE("bad input - typed posenc errors naming the argument") {
  const Eigen::VectorXd b5 = Eigen::VectorXd::Ones(5);
  // n = 0 / m = 0.
  CHECK_THROWS_AS(tz::toeplitz_matrix<double>(0, 3, Eigen::VectorXd::Ones(2)), posenc::invalid_argument);
  CHECK_THROWS_AS(tz::toeplitz_matrix<double>(3, 0, Eigen::VectorXd::Ones(2)), posenc::invalid_argument);
  // Wrong number of coefficients.
  CHECK_THROWS_AS(tz::toeplitz_matrix<double>::square(3, Eigen::VectorXd::Ones(4)), posenc::shape_error);
  CHECK_THROWS_WITH_AS(tz::toeplitz_matrix<double>(2, 3, Eigen::VectorXd::Ones(5)),
                       doctest::Contains("coefficients must have rows+cols-1 = 4"), posenc::shape_error);
  // Non-finite coefficients.
  Eigen::VectorXd bad = b5;
  bad[2] = std::numeric_limits<double>::quiet_NaN();
  CHECK_THROWS_AS(tz::toeplitz_matrix<double>::square(3, bad), posenc::non_finite_error);
  bad[2] = std::numeric_limits<double>::infinity();
  CHECK_THROWS_AS(tz::toeplitz_matrix<double>::square(3, bad), posenc::non_finite_error);
  // Shape mismatch between B and X.
  const auto B = tz::toeplitz_matrix<double>::square(3, b5);
  tz::product_plan<double> plan(B);
  Eigen::MatrixXd Y;
  CHECK_THROWS_AS(plan.apply(Eigen::MatrixXd::Ones(4, 2), Y), posenc::shape_error);
  // Non-finite X.
  Eigen::MatrixXd X = Eigen::MatrixXd::Ones(3, 2);
  X(1, 1) = std::numeric_limits<double>::quiet_NaN();
  CHECK_THROWS_AS(plan.apply(X, Y), posenc::non_finite_error);
  // Circulant size too small, paper embedding of a non-square B, inconsistent b_0.
  CHECK_THROWS_AS(tz::product_plan<double>(B, 4), posenc::invalid_argument);
  CHECK_THROWS_AS((void)tz::circulant_embedding(B, 4), posenc::invalid_argument);
  const auto R = tz::toeplitz_matrix<double>(2, 3, Eigen::VectorXd::Ones(4));
  CHECK_THROWS_AS((void)tz::paper_embedding(R), posenc::shape_error);
  CHECK_THROWS_AS((void)tz::proposition1_D(R), posenc::shape_error);
  CHECK_THROWS_AS(tz::toeplitz_matrix<double>::from_column_row(Eigen::Vector2d(1, 2), Eigen::Vector2d(3, 4)),
                  posenc::invalid_argument);
  CHECK_THROWS_AS((void)tz::proposition1_G<double>(0), posenc::invalid_argument);
  // Out-of-range offset / index, set_coefficients with another shape.
  CHECK_THROWS_AS((void)B.coefficient(3), posenc::invalid_argument);
  CHECK_THROWS_AS((void)B(0, 3), posenc::invalid_argument);
  CHECK_THROWS_AS(plan.set_coefficients(R), posenc::shape_error);
  // Bucket out of range.
  const Eigen::VectorXd table = Eigen::VectorXd::Ones(3);
  CHECK_THROWS_WITH_AS((void)tz::from_bucketed_bias(4, 4, table, [](std::ptrdiff_t d) { return int(d) + 1; }),
                       doctest::Contains("bucket(-3)"), posenc::invalid_argument);
  // Every error is a posenc::error.
  CHECK_THROWS_AS(tz::toeplitz_matrix<double>::square(0, Eigen::VectorXd()), posenc::error);
}
