// SPDX-License-Identifier: MIT
// Adding a scheme is adding a tableau: the third-order strong-stability-preserving Runge-Kutta
// method of Shu and Osher (SSPRK3), run by posenc's generic engine. The program checks the new
// scheme's structure and its observed order of convergence on y' = -y + sin t.
#include <cmath>
#include <cstdio>
#include <string_view>
#include <vector>

#include <posenc/ode.hpp>

// [custom-scheme]
/// SSPRK3 (Shu & Osher 1988): c = (0, 1, 1/2), b = (1/6, 1/6, 2/3).
struct ssprk3 {
  static constexpr std::string_view name = "ssprk3";
  static constexpr int order = 3;
  static constexpr posenc::ode::tableau<3> coefficients = {
      .a = {{{0, 0, 0}, {1, 0, 0}, {0.25L, 0.25L, 0}}},
      .b = {1.0L / 6, 1.0L / 6, 2.0L / 3},
      .c = {0, 1, 0.5L}};
};
static_assert(posenc::ode::ExplicitScheme<ssprk3>);
static_assert(posenc::ode::tableau_is_consistent<ssprk3>());
// [custom-scheme]

int main() {
  // y' = -y + sin t, y(0) = 1: y = 1.5 e^{-t} + (sin t - cos t) / 2
  auto exact = [](double t) { return 1.5 * std::exp(-t) + 0.5 * (std::sin(t) - std::cos(t)); };
  // [custom-scheme-use]
  auto f = [](double t, double y, double& dydt) { dydt = -y + std::sin(t); };
  auto error = [&](std::size_t steps) {
    double y = 1.0;
    const std::vector<double> times{0.0, 2.0};
    posenc::ode::integrate(ssprk3{}, f, y, times, posenc::ode::fixed_steps{steps});
    return std::abs(y - exact(2.0));
  };
  // [custom-scheme-use]
  const double e1 = error(40), e2 = error(80);
  const double order = std::log2(e1 / e2);
  std::printf("ssprk3: error %.3e (h = 0.05), %.3e (h = 0.025), observed order %.3f\n", e1, e2, order);
  return std::abs(order - 3.0) < 0.2 ? 0 : 1;
}
