// SPDX-License-Identifier: MIT
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include <posenc/ode.hpp>

TEST_CASE("rk4 integrates y' = -y to its closed form") {
  using namespace posenc::ode;
  std::vector<double> y{1.0};
  const std::vector<double> times{0.0, 1.0};
  integrate(schemes::rk4{}, [](double, const std::vector<double>& x, std::vector<double>& d) { d[0] = -x[0]; }, y,
            times, fixed_steps{100});
  CHECK(std::abs(y[0] - std::exp(-1.0)) < 1e-9);
}
