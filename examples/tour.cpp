// SPDX-License-Identifier: MIT
// The three template axes of posenc's ODE toolkit, each extended by user code: a new scheme
// (a Butcher tableau), a new state type (a state_traits specialisation) and a new backend (a
// class of static kernels). Quoted by docs/tour.md. Its sanity check: on y' = -y the scheme's
// result is exactly its stability polynomial to the power of the step count.
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <string_view>

#include <posenc/ode.hpp>

// [tour-scheme]
// Axis 1, the scheme: Heun's third-order method (three stages; Hairer, Norsett & Wanner,
// Table II.1.1) is data, nothing else.
struct heun3 {
  static constexpr std::string_view name = "heun3";
  static constexpr int order = 3;
  static constexpr posenc::ode::tableau<3> coefficients = {
      .a = {{{0, 0, 0}, {1.0L / 3, 0, 0}, {0, 2.0L / 3, 0}}},
      .b = {0.25L, 0, 0.75L},
      .c = {0, 1.0L / 3, 2.0L / 3}};
};
static_assert(posenc::ode::ExplicitScheme<heun3>);
static_assert(posenc::ode::tableau_is_consistent<heun3>());
// [tour-scheme]

// [tour-state]
// Axis 2, the state: a user type becomes an ODE state by specialising posenc::state_traits.
// (It is a contiguous range of doubles, so the shipped serial backend can run on it.)
struct particle {
  std::array<double, 2> xv{};  // position, velocity
  double* begin() { return xv.data(); }
  double* end() { return xv.data() + 2; }
  const double* begin() const { return xv.data(); }
  const double* end() const { return xv.data() + 2; }
};

template <>
struct posenc::state_traits<particle> {
  using value_type = double;
  using default_backend = posenc::backend::serial;
  static std::size_t size(const particle&) { return 2; }
  static void resize_like(particle&, const particle&) {}  // fixed size: nothing to allocate
  static bool same_shape(const particle&, const particle&) { return true; }
};
static_assert(posenc::StateSpace<particle>);
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
static_assert(posenc::BackendFor<counting_backend, particle>);
// [tour-backend]

int main() {
  // [tour-together]
  // Scheme x state x backend: one stepper type; integrate() drives it over a time grid.
  posenc::ode::explicit_rk<heun3, particle, counting_backend> stepper;
  particle p{{1.0, 0.0}};
  auto damped = [](double, const particle& y, particle& dy) {  // x' = v, v' = -x - 0.5 v
    dy.xv = {y.xv[1], -y.xv[0] - 0.5 * y.xv[1]};
  };
  const double times[] = {0.0, 0.5, 1.0};
  posenc::ode::integrate(stepper, damped, p, times, posenc::ode::fixed_steps{10});
  std::printf("heun3 on a particle: x(1) = %.10f, v(1) = %.10f, %zu fused passes\n", p.xv[0], p.xv[1],
              counting_backend::passes);
  // [tour-together]

  // Check: y' = -y, 20 steps of h = 0.05: one step of a 3-stage, order-3 method multiplies y by
  // R(-h) = 1 - h + h^2/2 - h^3/6, so y(1) = R(-h)^20 up to rounding (tolerance 1e-14).
  posenc::ode::explicit_rk<heun3, particle, counting_backend> decay;
  particle q{{1.0, 2.0}};
  const double unit[] = {0.0, 1.0};
  posenc::ode::integrate(decay, [](double, const particle& y, particle& dy) { dy.xv = {-y.xv[0], -y.xv[1]}; }, q,
                         unit, posenc::ode::fixed_steps{20});
  const double h = 0.05, r = std::pow(1 - h + h * h / 2 - h * h * h / 6, 20);
  const double err = std::abs(q.xv[0] - r) + std::abs(q.xv[1] - 2 * r);
  std::printf("heun3 vs its stability polynomial: %.2e\n", err);
  return err < 1e-14 ? 0 : 1;
}
