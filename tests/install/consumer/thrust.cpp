// SPDX-License-Identifier: MIT
// Install-tree consumer of posenc::thrust, compiled as plain C++ with Thrust's serial CPP device
// system (THRUST_DEVICE_SYSTEM=THRUST_DEVICE_SYSTEM_CPP): a thrust::device_vector state
// integrated by the ODE toolkit with the Thrust backend.
#include <cmath>
#include <cstdio>

#include <thrust/device_vector.h>
#include <thrust/functional.h>
#include <thrust/host_vector.h>
#include <thrust/transform.h>
#include <posenc/adapters/thrust.hpp>
#include <posenc/ode.hpp>

int main() {
  using vec = thrust::device_vector<double>;
  vec y(3);
  y[0] = 1.0;
  y[1] = 2.0;
  y[2] = 3.0;
  const double times[] = {0.0, 1.0};
  posenc::ode::integrate(
      posenc::ode::schemes::rk4{},
      [](double, const vec& x, vec& dx) { thrust::transform(x.begin(), x.end(), dx.begin(), thrust::negate<double>()); },
      y, times, posenc::ode::fixed_steps{10});
  // RK4 on y' = -y, 10 steps of h = 0.1: y = R(-h)^10 y0 with R the stability polynomial
  // 1 - h + h^2/2 - h^3/6 + h^4/24, to rounding (1e-14 bounds 10 steps of a few ulps).
  const double h = 0.1, r = std::pow(1 - h + h * h / 2 - h * h * h / 6 + h * h * h * h / 24, 10);
  const thrust::host_vector<double> out = y;
  double err = 0;
  for (int i = 0; i < 3; ++i) err = std::max(err, std::abs(out[i] - (i + 1) * r));
  std::printf("posenc::thrust consumer: rk4 vs its stability polynomial %.2e\n", err);
  return err < 1e-14 ? 0 : 1;
}
