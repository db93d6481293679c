// SPDX-License-Identifier: MIT
// Install-tree consumer of posenc::odeint: a posenc right-hand side driven by Boost.Odeint's
// classic RK4, compared with posenc's own RK4 on the same grid.
#include <cmath>
#include <cstdio>
#include <vector>

#include <boost/numeric/odeint/integrate/integrate_const.hpp>
#include <boost/numeric/odeint/stepper/runge_kutta4.hpp>
#include <posenc/adapters/odeint.hpp>
#include <posenc/ode.hpp>

int main() {
  auto f = [](double t, const std::vector<double>& x, std::vector<double>& dx) {
    dx[0] = x[1];
    dx[1] = -x[0] + 0.1 * std::cos(t);
  };
  std::vector<double> a{1.0, 0.0}, b{1.0, 0.0};
  boost::numeric::odeint::integrate_const(boost::numeric::odeint::runge_kutta4<std::vector<double>>{},
                                          posenc::odeint::to_odeint(f), a, 0.0, 1.0, 0.1);
  const double times[] = {0.0, 1.0};
  posenc::ode::integrate(posenc::ode::schemes::rk4{}, f, b, times, posenc::ode::fixed_steps{10});
  // Same scheme, same steps: the two differ only by rounding (a few ulps per step).
  const double diff = std::abs(a[0] - b[0]) + std::abs(a[1] - b[1]);
  std::printf("posenc::odeint consumer: odeint vs posenc rk4 difference %.2e\n", diff);
  return diff < 1e-13 ? 0 : 1;
}
