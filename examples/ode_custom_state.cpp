// SPDX-License-Identifier: MIT
// Adapting your own container as an ODE state, with its own backend: a 2-D grid type that
// stores its values in a std::vector. posenc needs one state_traits specialisation (shape,
// size, resize) and a backend with five operations; here the backend reuses backend::serial on
// the grid's storage. The program integrates the heat equation's semi-discretisation
// u' = (u_{i-1} - 2 u_i + u_{i+1}) / dx^2 and checks the decay of the first Fourier mode.
#include <cmath>
#include <cstdio>
#include <numbers>
#include <vector>

#include <posenc/ode.hpp>

// [custom-state]
struct grid {
  std::size_t rows = 0, cols = 0;
  std::vector<double> values;  // row-major, rows * cols
};

struct grid_backend;  // defined below

template <>
struct posenc::state_traits<grid> {
  using value_type = double;
  using default_backend = grid_backend;
  static std::size_t size(const grid& g) noexcept { return g.values.size(); }
  static void resize_like(grid& y, const grid& x) {
    y.rows = x.rows;
    y.cols = x.cols;
    y.values.resize(x.values.size());
  }
  static bool same_shape(const grid& a, const grid& b) noexcept { return a.rows == b.rows && a.cols == b.cols; }
};
// [custom-state]

// [custom-backend]
/// Every operation forwards to backend::serial on the storage (one pass each).
struct grid_backend {
  using serial = posenc::backend::serial;
  template <class T, std::size_t N>
  static void linear_combination(grid& out, const std::array<T, N>& c, const std::array<const grid*, N>& x) {
    std::array<const std::vector<double>*, N> v{};
    for (std::size_t n = 0; n < N; ++n) v[n] = &x[n]->values;
    serial::linear_combination(out.values, c, v);
  }
  template <class T>
  static void fill(grid& out, T v) { serial::fill(out.values, static_cast<double>(v)); }
  static double norm_inf(const grid& x) { return serial::norm_inf(x.values); }
  template <class T>
  static T scaled_rms(const grid& e, const grid& y0, const grid& y1, T atol, T rtol) {
    return serial::scaled_rms(e.values, y0.values, y1.values, atol, rtol);
  }
  static bool all_finite(const grid& x) { return serial::all_finite(x.values); }
};
static_assert(posenc::StateSpace<grid>);
static_assert(posenc::BackendFor<grid_backend, grid>);
// [custom-backend]

int main() {
  // Each row is an independent 1-D rod with zero boundary values (a batch of 3 rods).
  const std::size_t rows = 3, cols = 63;
  const double dx = 1.0 / static_cast<double>(cols + 1);
  grid u{rows, cols, std::vector<double>(rows * cols)};
  for (std::size_t r = 0; r < rows; ++r)
    for (std::size_t i = 0; i < cols; ++i)
      u.values[r * cols + i] = static_cast<double>(r + 1) * std::sin(std::numbers::pi * static_cast<double>(i + 1) * dx);
  auto heat = [&](double, const grid& y, grid& d) {
    for (std::size_t r = 0; r < y.rows; ++r)
      for (std::size_t i = 0; i < y.cols; ++i) {
        const double l = i > 0 ? y.values[r * cols + i - 1] : 0.0;
        const double rr = i + 1 < cols ? y.values[r * cols + i + 1] : 0.0;
        d.values[r * cols + i] = (l - 2 * y.values[r * cols + i] + rr) / (dx * dx);
      }
  };
  const std::vector<double> times{0.0, 0.05, 0.1};
  const auto stats = posenc::ode::integrate(posenc::ode::schemes::dopri5{}, heat, u, times,
                                            posenc::ode::adaptive{.rtol = 1e-8, .atol = 1e-10});
  // The sine mode is an eigenvector of the discrete Laplacian with eigenvalue
  // -4 sin^2(pi dx / 2) / dx^2: the exact solution of the semi-discrete system.
  const double lambda = -4 * std::pow(std::sin(std::numbers::pi * dx / 2), 2) / (dx * dx);
  double err = 0;
  for (std::size_t r = 0; r < rows; ++r)
    for (std::size_t i = 0; i < cols; ++i) {
      const double ex = static_cast<double>(r + 1) * std::sin(std::numbers::pi * static_cast<double>(i + 1) * dx) *
                        std::exp(lambda * 0.1);
      err = std::max(err, std::abs(u.values[r * cols + i] - ex));
    }
  std::printf("heat equation on a custom grid state: %zu steps, %zu rejected, max error %.2e\n", stats.steps,
              stats.rejected, err);
  return err < 1e-6 ? 0 : 1;
}
