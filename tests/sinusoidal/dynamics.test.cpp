// SPDX-License-Identifier: MIT
// The dynamical view (FLOATER eq. 9, corrected): the time-dependent h(tau) and the autonomous
// p' = A p, integrated by posenc::ode with every fixed scheme, converge to the closed-form table
// at the expected order.
#include <doctest/doctest.h>

#include <array>
#include <cmath>
#include <string>
#include <vector>

#include <posenc/adapters/eigen.hpp>
#include <posenc/ode.hpp>
#include <posenc/sinusoidal.hpp>

#include "sinusoidal/reference.hpp"

namespace ps = posenc::sinusoidal;
namespace ode = posenc::ode;
using posenc_test::ref_entry;

namespace {

constexpr std::size_t d = 8;      // w = 1, 0.1, 0.01, 0.001
constexpr double delta = 0.5;     // grid t_i = i * delta, i = 0..8 (t_end = 4, not a period)
constexpr std::size_t rows = 9;

/// Max error over the grid of integrating f from PE(0) with k substeps per interval.
template <class Scheme, class Rhs>
long double grid_error(const Rhs& f, std::size_t k, const ps::options& o) {
  posenc::table<double> y = ps::table<double>(1, d, o);  // PE(0) as a 1 x d batch state
  std::vector<double> times;
  for (std::size_t i = 0; i < rows; ++i) times.push_back(static_cast<double>(i) * delta);
  long double worst = 0;
  ode::integrate(Scheme{}, f, y, std::span<const double>(times), ode::fixed_steps{k},
                 [&](std::size_t, double t, const posenc::table<double>& p) {
                   for (std::size_t j = 0; j < d; ++j)
                     worst = std::max(worst, std::abs(static_cast<long double>(p(0, static_cast<Eigen::Index>(j))) -
                                                      ref_entry(t, j, d, o)));
                 });
  return worst;
}

/// The quadrature order of a tableau: the largest q with sum_i b_i c_i^(j-1) = 1/j for j <= q.
/// An RK scheme applied to y' = h(t) is exactly this quadrature rule.
template <class Scheme>
int quadrature_order() {
  const auto& t = Scheme::coefficients;
  int q = 0;
  for (int j = 1; j <= 8; ++j) {
    long double s = 0;
    for (std::size_t i = 0; i < t.stages; ++i) s += t.b[i] * std::pow(t.c[i], static_cast<long double>(j - 1));
    if (std::abs(s - 1.0L / j) > 1e-15L) break;
    q = j;
  }
  return q;
}

template <class Scheme, class Rhs>
double observed_order(const Rhs& f, const ps::options& o, std::size_t k0) {
  const long double e1 = grid_error<Scheme>(f, k0, o), e2 = grid_error<Scheme>(f, 2 * k0, o);
  return static_cast<double>(std::log2(e1 / e2));
}

template <class Scheme>
void check_scheme(std::size_t k0) {
  for (auto lay : {ps::layout::interleaved, ps::layout::half}) {
    ps::options o;
    o.layout = lay;
    CAPTURE(std::string(Scheme::name));
    // Autonomous linear system: R(hA) is the order-p Taylor polynomial of exp(hA) for these
    // s = p schemes, so the nominal order shows (tolerance 0.3, as asked).
    const double p_lin = observed_order<Scheme>(ps::linear_dynamics<double>(d, o), o, k0);
    CHECK(std::abs(p_lin - Scheme::order) < 0.3);
    // Time-dependent h(tau) of eq. 9: a pure quadrature, so the order is the tableau's
    // quadrature order (Ralston 3, Kutta-3 4: they superconverge here; the others = nominal).
    const double p_time = observed_order<Scheme>(ps::time_dynamics<double>(d, o), o, k0);
    CHECK(std::abs(p_time - quadrature_order<Scheme>()) < 0.3);
    // and both converge: the finest error is small
    CHECK(grid_error<Scheme>(ps::linear_dynamics<double>(d, o), 4 * k0, o) < 5e-3L);
  }
}

}  // namespace

TEST_CASE("the quadrature orders used below are those of the rules the tableaux encode") {
  // Independent: left rectangle 1, midpoint 2, trapezoid 2, Radau-left (0, 2/3) 3,
  // Simpson 4, Simpson 4, Simpson 3/8 4.
  CHECK(quadrature_order<ode::schemes::euler>() == 1);
  CHECK(quadrature_order<ode::schemes::midpoint>() == 2);
  CHECK(quadrature_order<ode::schemes::heun>() == 2);
  CHECK(quadrature_order<ode::schemes::ralston>() == 3);
  CHECK(quadrature_order<ode::schemes::kutta3>() == 4);
  CHECK(quadrature_order<ode::schemes::rk4>() == 4);
  CHECK(quadrature_order<ode::schemes::rk4_38>() == 4);
}

TEST_CASE("euler converges to the table at its order") { check_scheme<ode::schemes::euler>(64); }
TEST_CASE("midpoint converges to the table at its order") { check_scheme<ode::schemes::midpoint>(16); }
TEST_CASE("heun converges to the table at its order") { check_scheme<ode::schemes::heun>(16); }
TEST_CASE("ralston converges to the table at its order") { check_scheme<ode::schemes::ralston>(16); }
TEST_CASE("kutta3 converges to the table at its order") { check_scheme<ode::schemes::kutta3>(8); }
TEST_CASE("rk4 converges to the table at its order") { check_scheme<ode::schemes::rk4>(4); }
TEST_CASE("rk4_38 converges to the table at its order") { check_scheme<ode::schemes::rk4_38>(4); }

TEST_CASE("linear dynamics starts from (0, 1, 0, 1, ...) and integrates batches and vectors") {
  // p(0) of the interleaved layout at position 0 is (0, 1, 0, 1, ...), exactly.
  const auto p0 = ps::table<double>(1, d);
  for (Eigen::Index j = 0; j < static_cast<Eigen::Index>(d); ++j) CHECK(p0(0, j) == (j % 2 == 0 ? 0.0 : 1.0));
  // A batch of 5 states started at PE(s_r) reaches PE(s_r + 3) (rk4, h = 0.01: error ~ 1e-10).
  const std::vector<double> starts{0.0, 1.0, 2.5, -4.0, 100.0};
  posenc::table<double> y = ps::table_at<double>(starts, d);
  const std::array<double, 2> times{0.0, 3.0};
  ode::integrate(ode::schemes::rk4{}, ps::linear_dynamics<double>(d), y, std::span<const double>(times),
                 ode::fixed_steps{300});
  for (std::size_t r = 0; r < starts.size(); ++r)
    for (std::size_t j = 0; j < d; ++j)
      CHECK(std::abs(y(static_cast<Eigen::Index>(r), static_cast<Eigen::Index>(j)) - ref_entry(starts[r] + 3.0, j, d, {})) <
            1e-9L);
  // a column d-vector state, and float
  posenc::vector<float> v = ps::encode<float>(0.0, d);
  ode::integrate(ode::schemes::rk4_38{}, ps::linear_dynamics<float>(d), v, std::span<const double>(times),
                 ode::fixed_steps{300});
  for (std::size_t j = 0; j < d; ++j)
    CHECK(std::abs(v[static_cast<Eigen::Index>(j)] - ref_entry(3.0, j, d, {})) < 1e-5L);  // float rounding over 300 steps
  // eq. 9 dynamics with zero-padded odd d keeps the zero column
  ps::options o;
  o.odd = ps::odd_dimension::zero_pad;
  posenc::table<double> z = ps::table<double>(1, 7, o);
  ode::integrate(ode::schemes::rk4{}, ps::time_dynamics<double>(7, o), z, std::span<const double>(times),
                 ode::fixed_steps{300});
  CHECK(z(0, 6) == 0.0);
  CHECK(std::abs(z(0, 0) - std::sin(3.0)) < 1e-9);
}

TEST_CASE("the generator A is the derivative of M(phi) at 0 and matches linear_dynamics") {
  // Central difference (M(h) - M(-h)) / 2h with h = 1e-5: truncation h^2/6 ~ 2e-11.
  for (auto lay : {ps::layout::interleaved, ps::layout::half}) {
    ps::options o;
    o.layout = lay;
    const auto A = ps::generator<double>(d, o);
    const double h = 1e-5;
    const posenc::matrix<double> D = (ps::rotation<double>(h, d, o) - ps::rotation<double>(-h, d, o)) / (2 * h);
    CHECK((D - A).cwiseAbs().maxCoeff() < 1e-9);
    posenc::table<double> p = posenc::table<double>::Random(3, d), dp(3, d);
    ps::linear_dynamics<double>(d, o)(0.0, p, dp);
    CHECK((dp - p * A.transpose()).cwiseAbs().maxCoeff() < 1e-15);
  }
}

TEST_CASE("the right-hand sides reject states of the wrong shape") {
  posenc::table<double> p(2, 6), dp(2, 6);
  CHECK_THROWS_AS(ps::linear_dynamics<double>(8)(0.0, p, dp), posenc::shape_error);
  CHECK_THROWS_AS(ps::time_dynamics<double>(8)(0.0, p, dp), posenc::shape_error);
  CHECK_THROWS_AS(ps::linear_dynamics<double>(7), posenc::invalid_argument);
}
