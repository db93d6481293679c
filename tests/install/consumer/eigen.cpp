// SPDX-License-Identifier: MIT
// Install-tree consumer of posenc::eigen: an Eigen matrix state (a batch of rows) integrated by
// the ODE toolkit with the Eigen backend.
#include <cmath>
#include <cstdio>

#include <Eigen/Core>
#include <posenc/adapters/eigen.hpp>
#include <posenc/ode.hpp>

int main() {
  // Each row (a, b) rotates: a' = w b, b' = -w a, so (a, b)(t) = (sin(w t + phi), cos(w t + phi))
  // for the initial phase phi of the row. Dormand-Prince 5(4) at rtol 1e-10: the error after
  // t = 2 is below 1e-8 (a margin of 100 over the tolerance for error accumulation).
  const double w = 0.75;
  Eigen::MatrixXd y(3, 2);
  for (int r = 0; r < 3; ++r) y.row(r) << std::sin(0.5 * r), std::cos(0.5 * r);
  const Eigen::Matrix2d a{{0.0, -w}, {w, 0.0}};  // y' = y A (rows are states)
  const double times[] = {0.0, 2.0};
  posenc::ode::integrate(posenc::ode::schemes::dopri5{},
                         [&](double, const Eigen::MatrixXd& x, Eigen::MatrixXd& dx) { dx.noalias() = x * a; },
                         y, times, posenc::ode::adaptive{.rtol = 1e-10, .atol = 1e-12});
  double err = 0;
  for (int r = 0; r < 3; ++r)
    err = std::max(err, std::abs(y(r, 0) - std::sin(w * 2.0 + 0.5 * r)) + std::abs(y(r, 1) - std::cos(w * 2.0 + 0.5 * r)));
  std::printf("posenc::eigen consumer: dopri5 error %.2e\n", err);
  return err < 1e-8 ? 0 : 1;
}
