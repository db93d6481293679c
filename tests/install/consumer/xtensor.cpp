// SPDX-License-Identifier: MIT
// Install-tree consumer of posenc::xtensor: an xtensor container integrated by the ODE toolkit
// with the xtensor backend.
#include <cmath>
#include <cstdio>

#include <posenc/adapters/xtensor.hpp>
#include <posenc/ode.hpp>

int main() {
  // y' = -k y, componentwise, on [0, 1] with classic RK4 and 20 steps of h = 0.05: each step
  // multiplies y_i by the stability polynomial R(-k_i h) = 1 - z + z^2/2 - z^3/6 + z^4/24 (z = k_i h),
  // so the result is R^20 up to rounding (1e-14 bounds 20 steps of a few ulps).
  xt::xtensor<double, 1> y = {1.0, 1.0, 1.0};
  const xt::xtensor<double, 1> k = {1.0, 2.0, 3.0};
  const double times[] = {0.0, 1.0};
  posenc::ode::integrate(posenc::ode::schemes::rk4{},
                         [&](double, const xt::xtensor<double, 1>& x, xt::xtensor<double, 1>& dx) { dx = -k * x; },
                         y, times, posenc::ode::fixed_steps{20});
  double err = 0;
  for (std::size_t i = 0; i < 3; ++i) {
    const double z = k(i) * 0.05;
    err = std::max(err, std::abs(y(i) - std::pow(1 - z + z * z / 2 - z * z * z / 6 + z * z * z * z / 24, 20)));
  }
  std::printf("posenc::xtensor consumer: rk4 vs its stability polynomial %.2e\n", err);
  return err < 1e-14 ? 0 : 1;
}
