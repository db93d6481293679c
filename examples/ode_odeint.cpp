// SPDX-License-Identifier: MIT
// Boost.Odeint interop both ways: a posenc right-hand side driven by odeint's runge_kutta4
// (with posenc's algebra, on an xtensor state odeint does not know), and a posenc scheme used
// as an odeint stepper inside boost::numeric::odeint::integrate_const. Both are checked against
// posenc's own integrate().
#include <cmath>
#include <cstdio>
#include <vector>

#include <boost/numeric/odeint.hpp>
#include <posenc/adapters/odeint.hpp>
#include <posenc/adapters/xtensor.hpp>
#include <posenc/ode.hpp>

int main() {
  namespace bo = boost::numeric::odeint;
  using state = xt::xarray<double>;
  // [odeint-interop]
  auto rotation = [](double, const state& y, state& dydt) {  // a posenc right-hand side
    dydt(0) = -y(1);
    dydt(1) = y(0);
  };
  // (a) odeint's stepper on a posenc right-hand side and state
  state a = {1.0, 0.0};
  bo::runge_kutta4<state, double, state, double, posenc::odeint::algebra<>, posenc::odeint::operations<>> rk4;
  bo::integrate_const(rk4, posenc::odeint::to_odeint(rotation), a, 0.0, 1.0, 0.01);

  // (b) a posenc scheme as an odeint stepper, on an odeint system (x, dxdt, t)
  auto odeint_system = [](const state& x, state& dxdt, double) {
    dxdt(0) = -x(1);
    dxdt(1) = x(0);
  };
  state b = {1.0, 0.0};
  bo::integrate_const(posenc::odeint::stepper<posenc::ode::schemes::rk4, state>{}, odeint_system, b, 0.0, 1.0, 0.01);

  // (c) posenc's own integrate, on the odeint system
  state c = {1.0, 0.0};
  const std::vector<double> times{0.0, 1.0};
  posenc::ode::integrate(posenc::ode::schemes::rk4{}, posenc::odeint::from_odeint(odeint_system), c, times,
                         posenc::ode::fixed_steps{100});
  // [odeint-interop]
  const double dab = std::max(std::abs(a(0) - c(0)), std::abs(a(1) - c(1)));
  const double dbc = std::max(std::abs(b(0) - c(0)), std::abs(b(1) - c(1)));
  const double err = std::max(std::abs(c(0) - std::cos(1.0)), std::abs(c(1) - std::sin(1.0)));
  std::printf("odeint vs posenc: %.1e, posenc stepper in odeint vs posenc: %.1e, error vs closed form %.1e\n", dab,
              dbc, err);
  return (dab < 1e-13 && dbc < 1e-13 && err < 1e-9) ? 0 : 1;
}
