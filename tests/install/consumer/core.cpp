// SPDX-License-Identifier: MIT
// Install-tree consumer, core only (posenc::posenc): the ODE toolkit on std::vector, and the
// version the headers carry against the version the CMake package reported.
#include <cmath>
#include <cstdio>
#include <vector>

#include <posenc/ode.hpp>
#include <posenc/version.hpp>

int main() {
#if defined(POSENC_EXPECTED_VERSION_MAJOR)
  if (posenc::version_major != POSENC_EXPECTED_VERSION_MAJOR || posenc::version_minor != POSENC_EXPECTED_VERSION_MINOR ||
      posenc::version_patch != POSENC_EXPECTED_VERSION_PATCH) {
    std::fprintf(stderr, "version.hpp says %d.%d.%d, the package says %d.%d.%d\n", posenc::version_major,
                 posenc::version_minor, posenc::version_patch, POSENC_EXPECTED_VERSION_MAJOR,
                 POSENC_EXPECTED_VERSION_MINOR, POSENC_EXPECTED_VERSION_PATCH);
    return 1;
  }
#endif
  // y' = -y on [0, 1] with classic RK4 and 10 steps of h = 0.1. On a linear problem one RK4 step
  // multiplies y by the stability polynomial R(-h) = 1 - h + h^2/2 - h^3/6 + h^4/24, so the
  // computed result is R(-h)^10 y0 up to rounding (10 steps: a few ulps each, 1e-14 is ample).
  std::vector<double> y{1.0, 2.0};
  const std::vector<double> times{0.0, 1.0};
  posenc::ode::integrate(posenc::ode::schemes::rk4{},
                         [](double, const std::vector<double>& x, std::vector<double>& dx) {
                           for (std::size_t i = 0; i < x.size(); ++i) dx[i] = -x[i];
                         },
                         y, times, posenc::ode::fixed_steps{10});
  const double h = 0.1, r = std::pow(1 - h + h * h / 2 - h * h * h / 6 + h * h * h * h / 24, 10);
  const double err = std::abs(y[0] - r) + std::abs(y[1] - 2 * r);
  std::printf("posenc %d.%d.%d core consumer: rk4 vs its stability polynomial %.2e\n", posenc::version_major,
              posenc::version_minor, posenc::version_patch, err);
  return err < 1e-14 ? 0 : 1;
}
