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
std::atomic<std::size_t> g_largest{0};  // largest request while g_counting is set
void* counted_alloc(std::size_t n) {
  if (g_counting) {
    ++g_news;
    if (n > g_largest) g_largest = n;
  }
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

// Regression tests of issue 11: sizes whose arithmetic used to wrap are rejected, naming the
// argument, before anything is allocated (the largest allocation made during the call is below
// 64 KiB: the message strings).
namespace {
template <class F>
std::string size_error_of(F&& f, std::size_t& largest) {
  g_largest = 0;
  g_counting = true;
  std::string msg = "(no size_error)";
  try {
    f();
  } catch (const posenc::size_error& e) {
    msg = e.what();
  } catch (...) {
    msg = "(another exception)";
  }
  g_counting = false;
  largest = g_largest;
  return msg;
}
bool has(const std::string& s, const char* part) { return s.find(part) != std::string::npos; }
}  // namespace

TEST_CASE("huge sizes - size_error naming the argument, nothing large allocated (issue 11, items 2 and 9)") {
  const Eigen::VectorXd two = Eigen::VectorXd::Ones(2);
  std::size_t largest = 0;
  // rows + cols - 1 used to wrap to 0: a matrix with no coefficients, read through a null pointer
  CHECK(has(size_error_of([&] { (void)tz::toeplitz_matrix<double>(SIZE_MAX, 2, Eigen::VectorXd()); }, largest),
            "toeplitz::toeplitz_matrix: rows: expected 0 <= rows <= posenc::max_extent"));
  CHECK(largest < (std::size_t{64} << 10));
  CHECK(has(size_error_of([&] { (void)tz::toeplitz_matrix<double>(2, SIZE_MAX, two); }, largest), "cols"));
  CHECK(has(size_error_of([&] { (void)tz::from_relative_bias(SIZE_MAX, 2, two); }, largest),
            "toeplitz::from_relative_bias: rows"));
  CHECK(has(size_error_of([&] { (void)tz::from_bucketed_bias(2, SIZE_MAX, two, [](std::ptrdiff_t) { return 0; }); },
                          largest),
            "toeplitz::from_bucketed_bias: cols"));
  CHECK(largest < (std::size_t{64} << 10));
  // Proposition 1's G for n = 2^62 (n x 2n complex) used to end in std::bad_alloc
  CHECK(has(size_error_of([] { (void)tz::proposition1_G<double>(std::size_t{1} << 62); }, largest),
            "toeplitz::proposition1_G: n"));
  CHECK(has(size_error_of([] { (void)tz::proposition1_G<double>(std::size_t{1} << 21); }, largest), "n * 2n"));
  CHECK(largest < (std::size_t{64} << 10));
  const auto B = tz::toeplitz_matrix<double>(2, 2, Eigen::VectorXd::Ones(3));
  CHECK(has(size_error_of([&] { (void)tz::circulant_embedding(B, SIZE_MAX); }, largest),
            "toeplitz::circulant_embedding: size"));
  CHECK(has(size_error_of([&] { (void)tz::product_plan<double>(B, SIZE_MAX); }, largest),
            "toeplitz::product_plan: fft_size"));
  CHECK(has(size_error_of([] { (void)posenc::fft::plan<double>(std::size_t{1} << 41); }, largest), "fft::plan: size n"));
  CHECK(has(size_error_of([] { (void)posenc::fft::real_plan<double>(SIZE_MAX); }, largest), "fft::plan: size n"));
  CHECK(largest < (std::size_t{64} << 10));
}
