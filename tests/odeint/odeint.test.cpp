// SPDX-License-Identifier: MIT
// Boost.Odeint as an independent reference for posenc's schemes, and the interop both ways:
// odeint steppers on posenc right-hand sides and states, posenc schemes inside odeint's
// integrate functions, odeint systems as posenc right-hand sides.
//
// Agreement "to rounding": odeint and posenc evaluate the same Runge-Kutta formulas, but the
// coefficients reach double through different expressions (odeint: value_type constants such
// as 1.0/6 or a[i]*dt; posenc: long double tableau entries rounded once, times h), and the
// compiler may contract a*b+c into FMA differently in the two code paths. Each step therefore
// differs by a few ulps, with no systematic sign, so over 200 steps the difference grows like a
// random walk: ~sqrt(200) x 4 ulps ~ 1.3e-14 relative. The tests use 2e-14 (observed: <= 1.6e-15
// with g++ 12 -O3).
#include <doctest/doctest.h>

#include <array>
#include <cmath>
#include <vector>

#include <boost/numeric/odeint.hpp>
#include <posenc/adapters/eigen.hpp>
#include <posenc/adapters/odeint.hpp>
#include <posenc/adapters/xtensor.hpp>
#include <posenc/ode.hpp>

#include "ode/problems.hpp"

namespace {
namespace bo = boost::numeric::odeint;
using namespace posenc::ode;
using vec = std::vector<double>;

constexpr double rel_tol = 2e-14;
constexpr std::size_t n_steps = 200;
constexpr double dt = 7.0 / n_steps;

const posenc_test::linear_problem& lp() {
  static const posenc_test::linear_problem p;
  return p;
}

/// The linear problem as an odeint system on std::vector (odeint's own range_algebra).
struct linear_system {
  void operator()(const vec& x, vec& dxdt, double) const { lp().rhs(x.data(), dxdt.data()); }
};
/// ... and as a posenc right-hand side.
auto linear_rhs = [](double, const vec& y, vec& d) { lp().rhs(y.data(), d.data()); };

/// The sine problem (non-autonomous, nonlinear in t): on the linear autonomous problem every
/// 4-stage 4th-order method gives the same stability polynomial, so rk4 and rk4_38 agree there;
/// this one tells them apart.
struct sine_system {
  void operator()(const vec& x, vec& dxdt, double t) const { dxdt[0] = posenc_test::sine_rhs(t, x[0]); }
};
auto sine_rhs = [](double t, const vec& y, vec& d) { d[0] = posenc_test::sine_rhs(t, y[0]); };

vec start(bool sine) { return sine ? vec{posenc_test::sine_exact(1.0)} : vec(lp().n, 1.0); }

template <class Stepper>
vec odeint_fixed(Stepper st, bool sine = false) {
  vec x = start(sine);
  for (std::size_t i = 0; i < n_steps; ++i) {
    const double t = 1.0 + static_cast<double>(i) * dt;
    if (sine) st.do_step(sine_system{}, x, t, dt);
    else st.do_step(linear_system{}, x, t, dt);
  }
  return x;
}

template <class Sch>
vec posenc_fixed(bool sine = false) {
  vec y = start(sine);
  explicit_rk<Sch, vec> st(y);
  for (std::size_t i = 0; i < n_steps; ++i) {
    const double t = 1.0 + static_cast<double>(i) * dt;
    if (sine) st.step(sine_rhs, t, y, dt);
    else st.step(linear_rhs, t, y, dt);
  }
  return y;
}

double rel_diff(const vec& a, const vec& b) { return posenc_test::max_abs_diff(a, b) / posenc_test::max_abs(b); }
}  // namespace

TEST_CASE("odeint reference: classic rk4, euler, dopri5 (fixed) agree with posenc to rounding") {
  const vec exact = lp().exact(7.0);
  for (bool sine : {false, true}) {
    INFO("sine problem: ", sine);
    CHECK(rel_diff(posenc_fixed<schemes::rk4>(sine), odeint_fixed(bo::runge_kutta4<vec>{}, sine)) <= rel_tol);
    CHECK(rel_diff(posenc_fixed<schemes::euler>(sine), odeint_fixed(bo::euler<vec>{}, sine)) <= rel_tol);
    CHECK(rel_diff(posenc_fixed<schemes::dopri5>(sine), odeint_fixed(bo::runge_kutta_dopri5<vec>{}, sine)) <=
          rel_tol);
  }
  {
    const vec ref = odeint_fixed(bo::runge_kutta4<vec>{});
    const vec got = posenc_fixed<schemes::rk4>();
    INFO("rk4: relative difference ", rel_diff(got, ref));
    CHECK(rel_diff(got, ref) <= rel_tol);
    CHECK(rel_diff(got, exact) <= 1e-6);  // and both solve the problem (h = 0.035, 4th order)
  }
  {
    const vec ref = odeint_fixed(bo::euler<vec>{});
    const vec got = posenc_fixed<schemes::euler>();
    INFO("euler: relative difference ", rel_diff(got, ref));
    CHECK(rel_diff(got, ref) <= rel_tol);
  }
  {
    // odeint's dopri5 used as a plain stepper (do_step with a fixed dt, no error control)
    const vec ref = odeint_fixed(bo::runge_kutta_dopri5<vec>{});
    const vec got = posenc_fixed<schemes::dopri5>();
    INFO("dopri5: relative difference ", rel_diff(got, ref));
    CHECK(rel_diff(got, ref) <= rel_tol);
    CHECK(rel_diff(got, exact) <= 1e-9);
  }
}

TEST_CASE("odeint reference: the 3/8 rule through explicit_generic_rk agrees with schemes::rk4_38") {
  // Coefficients typed in from Kutta's 3/8 rule (not read from posenc's tableau).
  using rk38 = bo::explicit_generic_rk<4, 4, vec, double, vec, double>;
  const boost::array<double, 1> a1{{1.0 / 3}};
  const boost::array<double, 2> a2{{-1.0 / 3, 1.0}};
  const boost::array<double, 3> a3{{1.0, -1.0, 1.0}};
  const rk38::coef_a_type a = boost::fusion::make_vector(a1, a2, a3);
  const rk38::coef_b_type b{{1.0 / 8, 3.0 / 8, 3.0 / 8, 1.0 / 8}};
  const rk38::coef_c_type c{{0.0, 1.0 / 3, 2.0 / 3, 1.0}};
  for (bool sine : {false, true}) {
    const vec ref = odeint_fixed(rk38(a, b, c), sine);
    const vec got = posenc_fixed<schemes::rk4_38>(sine);
    INFO("rk4_38, sine problem: ", sine, ", relative difference ", rel_diff(got, ref));
    CHECK(rel_diff(got, ref) <= rel_tol);
  }
  // on the sine problem it is a different method from the classic rk4 (differences O(h^4))
  CHECK(rel_diff(posenc_fixed<schemes::rk4_38>(true), posenc_fixed<schemes::rk4>(true)) > 1e-10);
}

TEST_CASE("odeint reference on Eigen states: runge_kutta4 with posenc's odeint algebra") {
  using V = Eigen::VectorXd;
  Eigen::MatrixXd A(lp().n, lp().n);
  for (std::size_t i = 0; i < lp().n; ++i)
    for (std::size_t j = 0; j < lp().n; ++j) A(i, j) = lp().a[i][j];
  auto f = [&](double, const V& y, V& d) { d.noalias() = A * y; };
  V x = V::Ones(lp().n), y = x;
  bo::runge_kutta4<V, double, V, double, posenc::odeint::algebra<>, posenc::odeint::operations<>> rk;
  double t = 1.0;
  for (std::size_t i = 0; i < n_steps; ++i, t += dt) rk.do_step(posenc::odeint::to_odeint(f), x, t, dt);
  explicit_rk<schemes::rk4, V> st(y);
  t = 1.0;
  for (std::size_t i = 0; i < n_steps; ++i, t += dt) st.step(f, t, y, dt);
  const double d = (x - y).cwiseAbs().maxCoeff() / y.cwiseAbs().maxCoeff();
  INFO("relative difference ", d);
  CHECK(d <= rel_tol);
}

TEST_CASE("odeint drives posenc right-hand sides and states, posenc schemes run inside integrate_const") {
  // Reference: posenc's own integrate (fixed_steps) on the same problem.
  const std::vector<double> times{1.0, 8.0};
  vec ref(lp().n, 1.0);
  integrate(schemes::rk4{}, linear_rhs, ref, times, fixed_steps{n_steps});

  SUBCASE("odeint's runge_kutta4 on a posenc right-hand side (to_odeint)") {
    vec x(lp().n, 1.0);
    bo::integrate_const(bo::runge_kutta4<vec>{}, posenc::odeint::to_odeint(linear_rhs), x, 1.0, 8.0, dt);
    CHECK(rel_diff(x, ref) <= rel_tol);
  }
  SUBCASE("a posenc scheme as an odeint stepper in integrate_const, on an odeint system") {
    vec x(lp().n, 1.0);
    std::size_t observed = 0;
    bo::integrate_const(posenc::odeint::stepper<schemes::rk4, vec>{}, linear_system{}, x, 1.0, 8.0, dt,
                        [&](const vec&, double) { ++observed; });
    CHECK(observed == n_steps + 1);
    CHECK(rel_diff(x, ref) <= rel_tol);
  }
  SUBCASE("every scheme as an odeint stepper: order() and one do_step match explicit_rk") {
    auto one = [](auto scheme) {
      using Sch = decltype(scheme);
      posenc::odeint::stepper<Sch, vec> st;
      CHECK(st.order() == Sch::order);
      vec x(lp().n, 1.0), y = x, out;
      st.do_step(linear_system{}, x, 1.0, 0.1);
      explicit_rk<Sch, vec> rk(y);
      rk.step(linear_rhs, 1.0, y, 0.1);
      CHECK(x == y);  // the same engine: bitwise
      st.do_step(linear_system{}, y, 1.0, out, 0.1);  // out-of-place form
      rk.step(linear_rhs, 1.0, y, 0.1);
      CHECK(out == y);
    };
    one(schemes::euler{});
    one(schemes::midpoint{});
    one(schemes::heun{});
    one(schemes::ralston{});
    one(schemes::kutta3{});
    one(schemes::rk4{});
    one(schemes::rk4_38{});
    one(schemes::heun_euler{});
    one(schemes::bogacki_shampine{});
    one(schemes::dopri5{});
    one(schemes::tsit5{});
  }
  SUBCASE("an odeint system as a posenc right-hand side (from_odeint)") {
    vec y(lp().n, 1.0);
    integrate(schemes::rk4{}, posenc::odeint::from_odeint(linear_system{}), y, times, fixed_steps{n_steps});
    CHECK(y == ref);  // the same computation
  }
  SUBCASE("odeint steppers on xtensor states through posenc's algebra and resizing") {
    using X = xt::xarray<double>;
    auto fx = [](double, const X& v, X& d) {
      std::vector<double> a(v.begin(), v.end()), b(a.size());
      lp().rhs(a.data(), b.data());
      std::copy(b.begin(), b.end(), d.begin());
    };
    X x = xt::ones<double>({lp().n});
    bo::runge_kutta4<X, double, X, double, posenc::odeint::algebra<>, posenc::odeint::operations<>> rk;
    bo::integrate_const(rk, posenc::odeint::to_odeint(fx), x, 1.0, 8.0, dt);
    for (std::size_t i = 0; i < lp().n; ++i) CHECK(std::abs(x(i) - ref[i]) <= rel_tol * posenc_test::max_abs(ref));
    X z = xt::ones<double>({lp().n});
    bo::integrate_const(bo::runge_kutta_dopri5<X, double, X, double, posenc::odeint::algebra<>,
                                               posenc::odeint::operations<>>{},
                        posenc::odeint::to_odeint(fx), z, 1.0, 8.0, dt);
    vec zref(lp().n, 1.0);
    integrate(schemes::dopri5{}, linear_rhs, zref, times, fixed_steps{n_steps});
    for (std::size_t i = 0; i < lp().n; ++i) CHECK(std::abs(z(i) - zref[i]) <= rel_tol * posenc_test::max_abs(zref));
  }
}
