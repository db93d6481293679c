// SPDX-License-Identifier: MIT
// A backend of your own: the five static operations the engine calls (see docs/backend.md), here
// for a state type that is not a range (a record holding its values in a std::vector) by
// forwarding each operation to backend::serial on the storage. The program integrates
// u' = -u for a batch of values and checks u(1) = u(0) e^-1.
#include <array>
#include <cmath>
#include <cstdio>
#include <vector>

#include <posenc/ode.hpp>

struct field { std::vector<double> values; };  // a record, not a range
struct field_backend;

template <>
struct posenc::state_traits<field> {
  using value_type = double;
  using default_backend = field_backend;
  static std::size_t size(const field& f) noexcept { return f.values.size(); }
  static void resize_like(field& y, const field& x) { y.values.resize(x.values.size()); }
  static bool same_shape(const field& a, const field& b) noexcept { return a.values.size() == b.values.size(); }
};

// [custom-backend]
/// Every operation forwards to backend::serial on the storage (one pass each).
struct field_backend {
  using serial = posenc::backend::serial;
  template <class T, std::size_t N>
  static void linear_combination(field& out, const std::array<T, N>& c, const std::array<const field*, N>& x) {
    std::array<const std::vector<double>*, N> v{};
    for (std::size_t n = 0; n < N; ++n) v[n] = &x[n]->values;
    serial::linear_combination(out.values, c, v);
  }
  template <class T> static void fill(field& out, T v) { serial::fill(out.values, static_cast<double>(v)); }
  static double norm_inf(const field& x) { return serial::norm_inf(x.values); }
  template <class T> static T scaled_rms(const field& e, const field& y0, const field& y1, T atol, T rtol) {
    return serial::scaled_rms(e.values, y0.values, y1.values, atol, rtol);
  }
  static bool all_finite(const field& x) { return serial::all_finite(x.values); }
};
static_assert(posenc::BackendFor<field_backend, field>);
// [custom-backend]

int main() {
  field u{{1.0, -2.0, 0.5}};
  const std::vector<double> times{0.0, 1.0};
  auto decay = [](double, const field& y, field& d) { for (std::size_t i = 0; i < y.values.size(); ++i) d.values[i] = -y.values[i]; };
  posenc::ode::integrate(posenc::ode::schemes::tsit5{}, decay, u, times, posenc::ode::adaptive{.rtol = 1e-10, .atol = 1e-12});
  const double err = std::abs(u.values[1] + 2 * std::exp(-1.0));  // rtol 1e-10: 1e-8 leaves a margin
  std::printf("u' = -u on a custom backend: u(1) = %.10f, error %.2e\n", u.values[1], err);
  return err < 1e-8 ? 0 : 1;
}
