// SPDX-License-Identifier: MIT
// Install-tree consumer of posenc::xtensor: an xtensor container integrated by the ODE toolkit
// with the xtensor backend.
#include <cmath>
#include <cstdio>

#include <posenc/backend/xtensor.hpp>
#include <posenc/ode.hpp>

int main() {
  // y' = -k y, componentwise, on [0, 1] with classic RK4 and 20 steps: reference exp(-k); the
  // global error at h = 0.05 is below 1e-7 for k <= 3, so the bound 1e-6 is safe.
  xt::xtensor<double, 1> y = {1.0, 1.0, 1.0};
  const xt::xtensor<double, 1> k = {1.0, 2.0, 3.0};
  const double times[] = {0.0, 1.0};
  posenc::ode::integrate(posenc::ode::schemes::rk4{},
                         [&](double, const xt::xtensor<double, 1>& x, xt::xtensor<double, 1>& dx) { dx = -k * x; },
                         y, times, posenc::ode::fixed_steps{20});
  double err = 0;
  for (std::size_t i = 0; i < 3; ++i) err = std::max(err, std::abs(y(i) - std::exp(-k(i))));
  std::printf("posenc::xtensor consumer: rk4 error %.2e\n", err);
  return err < 1e-6 ? 0 : 1;
}
