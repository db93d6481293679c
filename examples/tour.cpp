// SPDX-License-Identifier: MIT
// The three template axes of posenc's ODE toolkit, each extended by user code: a new scheme
// (a Butcher tableau), a new state type (a state_traits specialisation) and a new backend (a
// class of static kernels). Quoted by docs/tour.md. Its check: on y' = -y the scheme's result is
// exactly its stability polynomial to the power of the step count, and every step makes three
// fused passes over memory.
#include <array>
#include <cmath>
#include <cstdio>
#include <string_view>

#include <posenc/ode.hpp>

// [tour-scheme]
// Axis 1, the scheme: Heun's third-order method (three stages; Hairer, Norsett & Wanner,
// Table II.1.1) is data, nothing else. ExplicitScheme checks the tableau's consistency.
struct heun3 {
  static constexpr std::string_view name = "heun3";
  static constexpr int order = 3;
  static constexpr posenc::ode::tableau<3> coefficients = {
      .a = {{{0, 0, 0}, {1.0L / 3, 0, 0}, {0, 2.0L / 3, 0}}}, .b = {0.25L, 0, 0.75L}, .c = {0, 1.0L / 3, 2.0L / 3}};
};
// [tour-scheme]

// [tour-state]
// Axis 2, the state: a user type becomes an ODE state by specialising posenc::state_traits.
// (It is a contiguous range of doubles, so the shipped serial backend can run on it.)
struct particle : std::array<double, 2> {};  // position, velocity

template <>
struct posenc::state_traits<particle> {
  using value_type = double;
  using default_backend = posenc::backend::serial;
  static std::size_t size(const particle&) { return 2; }
  static void resize_like(particle&, const particle&) {}  // fixed size: nothing to allocate
  static bool same_shape(const particle&, const particle&) { return true; }
};
// [tour-state]

// [tour-backend]
// Axis 3, the backend: where and how the arithmetic runs. This one reuses the serial kernels
// and counts the fused passes over memory the stepper makes.
struct counting_backend : posenc::backend::serial {
  static inline std::size_t passes = 0;
  template <class S, class T, std::size_t N>
  static void linear_combination(S& out, const std::array<T, N>& c, const std::array<const S*, N>& x) {
    ++passes;
    posenc::backend::serial::linear_combination(out, c, x);
  }
};
// [tour-backend]

int main() {
  // [tour-together]
  // Scheme x state x backend: one stepper type (its template head checks the three concepts);
  // integrate() drives it over a time grid, here 2 intervals of 10 steps of y' = -y.
  posenc::ode::explicit_rk<heun3, particle, counting_backend> stepper;
  particle p{{1.0, 2.0}};
  const double times[] = {0.0, 0.5, 1.0};
  posenc::ode::integrate(stepper, [](double, const particle& y, particle& dy) { dy = {{-y[0], -y[1]}}; }, p, times,
                         posenc::ode::fixed_steps{10});
  // [tour-together]
  // One step of a 3-stage, order-3 method multiplies y by R(-h) = 1 - h + h^2/2 - h^3/6, so
  // y(1) = R(-h)^20 y(0) up to rounding (tolerance 1e-14: 20 steps of a few ulps each).
  const double h = 0.05, r = std::pow(1 - h + h * h / 2 - h * h * h / 6, 20);
  const double err = std::abs(p[0] - r) + std::abs(p[1] - 2 * r);
  std::printf("heun3 on a particle: %zu fused passes; vs its stability polynomial: %.2e\n", counting_backend::passes, err);
  return err < 1e-14 && counting_backend::passes == 60 ? 0 : 1;
}
