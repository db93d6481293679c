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
  // y' = -y on [0, 1] with classic RK4, 10 steps: reference exp(-1); RK4's global error at
  // h = 0.1 is about 3e-7 here, so 1e-6 is a safe bound that still catches a wrong scheme.
  std::vector<double> y{1.0, 2.0};
  const std::vector<double> times{0.0, 1.0};
  posenc::ode::integrate(posenc::ode::schemes::rk4{},
                         [](double, const std::vector<double>& x, std::vector<double>& dx) {
                           for (std::size_t i = 0; i < x.size(); ++i) dx[i] = -x[i];
                         },
                         y, times, posenc::ode::fixed_steps{10});
  const double err = std::abs(y[0] - std::exp(-1.0)) + std::abs(y[1] - 2 * std::exp(-1.0));
  std::printf("posenc %d.%d.%d core consumer: rk4 error %.2e\n", posenc::version_major, posenc::version_minor,
              posenc::version_patch, err);
  return err < 1e-6 ? 0 : 1;
}
