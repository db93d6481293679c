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
  const double err = std::abs(sum - 6.0 * std::exp(-1.0));  // RK4 at h = 0.1: ~1e-6 at most
  std::printf("posenc::thrust consumer: error %.2e\n", err);
  return err < 1e-5 ? 0 : 1;
}
