// SPDX-License-Identifier: MIT
// Fixed steps on a grid of output times (FLOATER-style: k substeps per interval), an observer
// called at every grid point, and the error thrown for a bad grid. The ODE is the harmonic
// oscillator y'' = -y as a first-order system; its solution (cos t, -sin t) checks the result.
// (Adaptive steps, dense output, reverse time: examples/ode_adaptive.cpp.)
#include <cmath>
#include <cstdio>
#include <vector>

#include <posenc/ode.hpp>

int main() {
  using namespace posenc::ode;
  int failures = 0;
  auto expect = [&](bool ok, const char* what) {
    if (!ok) {
      std::printf("FAILED: %s\n", what);
      ++failures;
    }
  };

  // [ode-fixed]
  using state = std::vector<double>;
  auto oscillator = [](double /*t*/, const state& y, state& dydt) {
    dydt[0] = y[1];
    dydt[1] = -y[0];
  };
  std::vector<double> times;  // t_i = i * 0.1, i = 0..10 (the output grid)
  for (int i = 0; i <= 10; ++i) times.push_back(0.1 * i);
  state y{1.0, 0.0};
  std::vector<state> trajectory;
  integrate(schemes::rk4_38{}, oscillator, y, times, fixed_steps{5},  // 5 substeps of 0.02 per interval
            [&](std::size_t i, double t, const state& yi) {
              (void)i;
              (void)t;
              trajectory.push_back(yi);  // called for i = 0..10, exactly at t_i
            });
  // [ode-fixed]
  expect(trajectory.size() == 11, "observer called once per grid point");
  expect(std::abs(trajectory[10][0] - std::cos(1.0)) < 1e-8, "fixed-step result");

  // [ode-errors]
  try {
    state w{1.0, 0.0};
    const std::vector<double> bad{0.0, 1.0, 1.0};  // not strictly increasing
    integrate(schemes::rk4{}, oscillator, w, bad, fixed_steps{4});
    ++failures;  // not reached: the grid is rejected before any step
  } catch (const posenc::grid_error& e) {
    std::printf("caught: %s\n", e.what());  // posenc: integrate(fixed_steps): times: expected strictly ...
  }
  // [ode-errors]
  return failures == 0 ? 0 : 1;
}
