// SPDX-License-Identifier: MIT
// Install-tree consumer of posenc::thrust, compiled as plain C++ with Thrust's serial CPP device
// system (THRUST_DEVICE_SYSTEM=THRUST_DEVICE_SYSTEM_CPP): CCCL is found and usable alongside posenc.
#include <cmath>
#include <cstdio>
#include <vector>

#include <thrust/device_vector.h>
#include <thrust/reduce.h>
#include <posenc/ode.hpp>

int main() {
  std::vector<double> y{1.0, 2.0, 3.0};
  const double times[] = {0.0, 1.0};
  posenc::ode::integrate(posenc::ode::schemes::rk4{},
                         [](double, const std::vector<double>& x, std::vector<double>& dx) {
                           for (std::size_t i = 0; i < x.size(); ++i) dx[i] = -x[i];
                         },
                         y, times, posenc::ode::fixed_steps{10});
  thrust::device_vector<double> d(y.begin(), y.end());
  const double sum = thrust::reduce(d.begin(), d.end(), 0.0);
  // RK4 on y' = -y, 10 steps of h = 0.1: y = R(-h)^10 y0 with R the stability polynomial.
  const double h = 0.1, r = std::pow(1 - h + h * h / 2 - h * h * h / 6 + h * h * h * h / 24, 10);
  const double err = std::abs(sum - 6.0 * r);
  std::printf("posenc::thrust consumer: rk4 vs its stability polynomial %.2e\n", err);
  return err < 1e-14 ? 0 : 1;
}
