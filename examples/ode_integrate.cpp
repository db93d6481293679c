// SPDX-License-Identifier: MIT
// The integration API in one program: fixed steps on a grid (FLOATER-style, k substeps per
// interval), adaptive steps with dense output, an observer, statistics, reverse time, and the
// errors thrown on bad input. The ODE is the harmonic oscillator y'' = -y as a first-order
// system; its solution (cos t, -sin t) checks every result.
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

  // [ode-adaptive]
  state z{1.0, 0.0};
  const std::vector<double> out{0.0, 0.25, 0.5, 2.0, 10.0};  // requested outputs (dense output between steps)
  double worst = 0;
  const integration_stats stats =
      integrate(schemes::dopri5{}, oscillator, z, out, adaptive{.rtol = 1e-9, .atol = 1e-12},
                [&](std::size_t, double t, const state& zi) { worst = std::max(worst, std::abs(zi[0] - std::cos(t))); });
  std::printf("dopri5: %zu steps, %zu rejected, %zu evaluations, max error %.2e\n", stats.steps, stats.rejected,
              stats.rhs_evaluations, worst);
  // [ode-adaptive]
  expect(worst < 1e-7, "adaptive result");

  // [ode-reverse]
  state back = z;  // y(10)
  const std::vector<double> reverse{10.0, 0.0};  // a decreasing grid integrates backwards
  integrate(schemes::tsit5{}, oscillator, back, reverse, adaptive{.rtol = 1e-10, .atol = 1e-12});
  // back is y(0) again: (1, 0) up to the tolerances
  // [ode-reverse]
  expect(std::abs(back[0] - 1.0) < 1e-7 && std::abs(back[1]) < 1e-7, "reverse time");

  // [ode-errors]
  try {
    state w{1.0, 0.0};
    const std::vector<double> bad{0.0, 1.0, 1.0};  // not strictly increasing
    integrate(schemes::rk4{}, oscillator, w, bad, fixed_steps{4});
  } catch (const posenc::grid_error& e) {
    std::printf("caught: %s\n", e.what());  // posenc: integrate(fixed_steps): times: expected strictly ...
  }
  // [ode-errors]
  return failures == 0 ? 0 : 1;
}
