// SPDX-License-Identifier: MIT
// Adapting your own container as an ODE state: a 2-D grid type. posenc needs one state_traits
// specialisation (scalar type, default backend, size, resize, shape); because the grid is a
// contiguous range of doubles (begin/end), the shipped backend::serial runs on it as is. (A
// backend of your own: examples/ode_custom_backend.cpp.) The program integrates the heat
// equation's semi-discretisation u' = (u_{i-1} - 2 u_i + u_{i+1}) / dx^2 on a batch of rods and
// checks the decay of the first Fourier mode.
#include <cmath>
#include <cstdio>
#include <numbers>
#include <vector>

#include <posenc/ode.hpp>

// [custom-state]
struct grid {
  std::size_t rows = 0, cols = 0;
  std::vector<double> values;  // row-major, rows * cols
  double* begin() { return values.data(); }
  double* end() { return values.data() + values.size(); }
  const double* begin() const { return values.data(); }
  const double* end() const { return values.data() + values.size(); }
};

template <>
struct posenc::state_traits<grid> {
  using value_type = double;
  using default_backend = posenc::backend::serial;  // works on any contiguous range of doubles
  static std::size_t size(const grid& g) noexcept { return g.values.size(); }
  static void resize_like(grid& y, const grid& x) { y = {x.rows, x.cols, std::vector<double>(x.values.size())}; }
  static bool same_shape(const grid& a, const grid& b) noexcept { return a.rows == b.rows && a.cols == b.cols; }
};
// [custom-state]

int main() {
  const std::size_t rows = 3, cols = 63;  // 3 independent rods, zero boundary values
  const double dx = 1.0 / static_cast<double>(cols + 1), pi = std::numbers::pi;
  auto mode = [&](std::size_t r, std::size_t i) { return (r + 1.0) * std::sin(pi * (i + 1.0) * dx); };
  grid u{rows, cols, std::vector<double>(rows * cols)};
  for (std::size_t e = 0; e < rows * cols; ++e) u.values[e] = mode(e / cols, e % cols);
  auto heat = [&](double, const grid& y, grid& d) {  // i = e % cols: the position along the rod
    for (std::size_t e = 0, i = 0; e < rows * cols; ++e, i = e % cols)
      d.values[e] = ((i > 0 ? y.values[e - 1] : 0.0) - 2 * y.values[e] + (i + 1 < cols ? y.values[e + 1] : 0.0)) / (dx * dx);
  };
  const std::vector<double> times{0.0, 0.05, 0.1};
  const auto stats = posenc::ode::integrate(posenc::ode::schemes::dopri5{}, heat, u, times,
                                            posenc::ode::adaptive{.rtol = 1e-8, .atol = 1e-10});
  // The sine mode is an eigenvector of the discrete Laplacian with eigenvalue -4 sin^2(pi dx/2)/dx^2.
  const double decay = std::exp(-4 * std::pow(std::sin(pi * dx / 2), 2) / (dx * dx) * 0.1);
  double err = 0;
  for (std::size_t e = 0; e < rows * cols; ++e) err = std::max(err, std::abs(u.values[e] - mode(e / cols, e % cols) * decay));
  std::printf("heat equation on a custom grid state: %zu steps, max error %.2e\n", stats.steps, err);
  return err < 1e-6 ? 0 : 1;
}
