// SPDX-License-Identifier: MIT
// Adaptive stepping: an embedded pair (Dormand-Prince 5(4)) with rtol/atol, dense output at the
// requested times between steps, the step statistics, and integration backwards in time. The
// ODE is the harmonic oscillator y'' = -y as a first-order system; its solution (cos t, -sin t)
// checks every result.
#include <cmath>
#include <cstdio>
#include <vector>

#include <posenc/ode.hpp>

int main() {
  using namespace posenc::ode;
  using state = std::vector<double>;
  auto oscillator = [](double /*t*/, const state& y, state& dydt) {
    dydt[0] = y[1];
    dydt[1] = -y[0];
  };

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

  // [ode-reverse]
  state back = z;  // y(10)
  const std::vector<double> reverse{10.0, 0.0};  // a decreasing grid integrates backwards
  integrate(schemes::tsit5{}, oscillator, back, reverse, adaptive{.rtol = 1e-10, .atol = 1e-12});
  // back is y(0) again: (1, 0) up to the tolerances
  // [ode-reverse]
  // Tolerances: rtol 1e-9 / 1e-10 over 10 time units of a bounded oscillation: 1e-7 leaves a margin.
  const bool ok = worst < 1e-7 && std::abs(back[0] - 1.0) < 1e-7 && std::abs(back[1]) < 1e-7;
  std::printf("backwards to t = 0: (%.9f, %.9f): %s\n", back[0], back[1], ok ? "ok" : "FAILED");
  return ok ? 0 : 1;
}
