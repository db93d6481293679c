// SPDX-License-Identifier: MIT
// Bad input and runaway integrations end in a posenc::error subclass whose message names the
// function and the argument; nothing hangs, nothing returns a silent NaN.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include <posenc/ode.hpp>
#include <posenc/ode/gradient.hpp>

namespace {
using namespace posenc::ode;
using vec = std::vector<double>;
constexpr double qnan = std::numeric_limits<double>::quiet_NaN();

auto decay = [](double, const vec& y, vec& d) {
  for (std::size_t i = 0; i < y.size(); ++i) d[i] = -y[i];
};

/// Run f, expect exception E whose message contains every one of `parts`.
template <class E, class F>
void expect_error(F&& f, std::initializer_list<std::string> parts) {
  bool thrown = false;
  try {
    f();
  } catch (const E& e) {
    thrown = true;
    const std::string msg = e.what();
    for (const auto& p : parts) {
      INFO("message: ", msg, " | expected to contain: ", p);
      CHECK(msg.find(p) != std::string::npos);
    }
    // every posenc exception is catchable as posenc::error
    CHECK(dynamic_cast<const posenc::error*>(&e) != nullptr);
  }
  CHECK(thrown);
}
}  // namespace

TEST_CASE("a bad time grid throws grid_error naming times") {
  for (const vec& times : {vec{0.0, 1.0, 1.0}, vec{0.0, 1.0, 0.5}, vec{1.0, 0.0, 0.5}, vec{0.0, qnan, 1.0},
                           vec{0.0, std::numeric_limits<double>::infinity()}, vec{}}) {
    vec y{1.0, 2.0};
    expect_error<posenc::grid_error>([&] { integrate(schemes::rk4{}, decay, y, times, fixed_steps{4}); },
                                     {"integrate(fixed_steps)", "times"});
    expect_error<posenc::grid_error>([&] { integrate(schemes::dopri5{}, decay, y, times, adaptive{}); },
                                     {"integrate(adaptive)", "times"});
  }
}

TEST_CASE("fixed_steps: zero substeps and a negative or NaN max_step throw invalid_argument") {
  vec y{1.0};
  const vec times{0.0, 1.0};
  expect_error<posenc::invalid_argument>([&] { integrate(schemes::rk4{}, decay, y, times, fixed_steps{0}); },
                                         {"integrate(fixed_steps)", "substeps", "0"});
  expect_error<posenc::invalid_argument>(
      [&] { integrate(schemes::rk4{}, decay, y, times, fixed_steps{.substeps = 1, .max_step = -0.1}); },
      {"max_step", "-0.1"});
  expect_error<posenc::invalid_argument>(
      [&] { integrate(schemes::rk4{}, decay, y, times, fixed_steps{.substeps = 1, .max_step = qnan}); }, {"max_step"});
}

TEST_CASE("adaptive: invalid rtol, atol, max_step, min_step, first_step, max_steps throw invalid_argument") {
  vec y{1.0};
  const vec times{0.0, 1.0};
  auto run = [&](adaptive o) { return [&, o] { integrate(schemes::dopri5{}, decay, y, times, o); }; };
  expect_error<posenc::invalid_argument>(run({.rtol = -1e-6}), {"integrate(adaptive)", "rtol"});
  expect_error<posenc::invalid_argument>(run({.rtol = qnan}), {"rtol"});
  expect_error<posenc::invalid_argument>(run({.atol = -1}), {"atol"});
  expect_error<posenc::invalid_argument>(run({.rtol = 0, .atol = 0}), {"rtol", "atol"});
  expect_error<posenc::invalid_argument>(run({.max_step = -1}), {"max_step"});
  expect_error<posenc::invalid_argument>(run({.min_step = 0.5, .max_step = 0.1}), {"min_step"});
  expect_error<posenc::invalid_argument>(run({.first_step = -1}), {"first_step"});
  expect_error<posenc::invalid_argument>(run({.max_steps = 0}), {"max_steps"});
}

TEST_CASE("NaN or Inf in y0 throws non_finite_error naming y0") {
  const vec times{0.0, 1.0};
  for (double bad : {qnan, std::numeric_limits<double>::infinity()}) {
    vec y{1.0, bad};
    expect_error<posenc::non_finite_error>([&] { integrate(schemes::rk4{}, decay, y, times, fixed_steps{2}); },
                                           {"integrate(fixed_steps)", "y0"});
    expect_error<posenc::non_finite_error>([&] { integrate(schemes::tsit5{}, decay, y, times, adaptive{}); },
                                           {"integrate(adaptive)", "y0"});
  }
}

TEST_CASE("a right-hand side that produces NaN is caught") {
  auto f = [](double t, const vec& y, vec& d) { d[0] = t > 0.5 ? qnan : -y[0]; };
  vec y{1.0};
  const vec times{0.0, 1.0};
  // fixed: checked at every grid point
  expect_error<posenc::non_finite_error>([&] { integrate(schemes::rk4{}, f, y, times, fixed_steps{10}); },
                                         {"non-finite"});
  // adaptive: a NaN error estimate rejects the step; the step shrinks until the driver gives up
  // (step-size underflow or max_steps), it does not loop forever.
  y = {1.0};
  CHECK_THROWS_AS(integrate(schemes::dopri5{}, f, y, times, adaptive{}), posenc::step_budget_exceeded);
}

TEST_CASE("the max_steps guard throws step_budget_exceeded instead of hanging") {
  // y' = -1000 (y - cos t) on [0, 100] at rtol 1e-10 needs far more than 50 steps.
  auto f = [](double t, double y, double& d) { d = -1000 * (y - std::cos(t)); };
  double y = 0;
  const vec times{0.0, 100.0};
  expect_error<posenc::step_budget_exceeded>(
      [&] { integrate(schemes::dopri5{}, f, y, times, adaptive{.rtol = 1e-10, .atol = 1e-12, .max_steps = 50}); },
      {"integrate(adaptive)", "max_steps", "50"});
}

TEST_CASE("min_step: an error test failing at the minimum step throws step_budget_exceeded") {
  // A jump of f at t = 0.5 cannot be resolved by steps >= 0.01 at rtol 1e-12.
  auto f = [](double t, double, double& d) { d = t < 0.5 ? 0.0 : 1e3; };
  double y = 0;
  const vec times{0.0, 1.0};
  expect_error<posenc::step_budget_exceeded>(
      [&] {
        integrate(schemes::bogacki_shampine{}, f, y, times,
                  adaptive{.rtol = 1e-12, .atol = 1e-12, .min_step = 0.01, .max_step = 0.1});
      },
      {"integrate(adaptive)", "min_step"});
}

TEST_CASE("a state of another shape than the stepper workspace") {
  // Decision: the integrate() drivers resize the workspace (one allocation, then reuse);
  // explicit_rk::step itself refuses it with shape_error (reading the workspace out of bounds
  // would be undefined behaviour).
  const vec times{0.0, 1.0};
  explicit_rk<schemes::rk4, vec> st(vec(3));
  vec y{1.0, 2.0, 3.0, 4.0, 5.0};
  integrate(st, decay, y, times, fixed_steps{50});
  for (std::size_t i = 0; i < y.size(); ++i)
    CHECK(std::abs(y[i] - (i + 1.0) * std::exp(-1.0)) < 1e-8 * (i + 1.0));  // rk4, h = 0.02: error ~1e-9
  CHECK(st.fits(y));

  explicit_rk<schemes::rk4, vec> small(vec(3));
  vec z{1.0, 2.0};
  expect_error<posenc::shape_error>([&] { small.step(decay, 0.0, z, 0.1); }, {"explicit_rk::step", "shape"});
  explicit_rk<schemes::dopri5, vec> emb(vec(2));
  vec z1(3);
  expect_error<posenc::shape_error>([&] { emb.step_with_error(decay, 0.0, z, z1, 0.1, 1e-6, 1e-6); },
                                    {"explicit_rk::step_with_error"});
}

// Regression tests of issue 11, item 4: a fixed-step count has a cap, like the adaptive max_steps.
namespace {
// y' = -k y, theta = [k]; the vector-Jacobian product for backprop.
struct decay_k {
  double k = 1.0;
  void operator()(double, const vec& y, vec& d) const {
    for (std::size_t i = 0; i < y.size(); ++i) d[i] = -k * y[i];
  }
  void vjp(double, const vec& y, const vec& a, vec& ay, vec& g) const {
    for (std::size_t i = 0; i < y.size(); ++i) {
      ay[i] = -k * a[i];
      g[0] += -a[i] * y[i];
    }
  }
};
}  // namespace

TEST_CASE("fixed_steps: a step count above max_steps throws step_budget_exceeded before stepping (issue 11, item 4)") {
  vec y{1.0};
  const vec times{0.0, 1.0};
  // max_step = 1e-300: the substep count 1e300 used to be converted to size_t (undefined behaviour)
  expect_error<posenc::step_budget_exceeded>(
      [&] { integrate(schemes::rk4{}, decay, y, times, fixed_steps{.substeps = 1, .max_step = 1e-300}); },
      {"integrate(fixed_steps): max_step = 1e-300", "max_steps = 10000000"});
  CHECK(y[0] == 1.0);  // nothing was integrated
  // the cap counts the whole grid: 3 intervals of 4e6 steps each
  const vec grid{0.0, 1.0, 2.0, 3.0};
  expect_error<posenc::step_budget_exceeded>(
      [&] { integrate(schemes::euler{}, decay, y, grid, fixed_steps{.substeps = 4000000}); },
      {"integrate(fixed_steps)", "substeps = 4000000", "max_steps = 10000000", "3 intervals"});
  expect_error<posenc::step_budget_exceeded>(
      [&] { integrate(schemes::euler{}, decay, y, times, fixed_steps{.substeps = SIZE_MAX}); }, {"substeps"});
  // a caller-chosen cap applies, and max_steps = 0 is rejected
  expect_error<posenc::step_budget_exceeded>(
      [&] { integrate(schemes::euler{}, decay, y, times, fixed_steps{.substeps = 11, .max_step = 0, .max_steps = 10}); },
      {"max_steps = 10"});
  expect_error<posenc::invalid_argument>(
      [&] { integrate(schemes::euler{}, decay, y, times, fixed_steps{.substeps = 1, .max_step = 0, .max_steps = 0}); },
      {"max_steps >= 1"});
  // exactly at the cap runs (10 Euler steps of y' = -y: (1 - 0.1)^10, exact to rounding)
  vec z{1.0};
  const auto st = integrate(schemes::euler{}, decay, z, times, fixed_steps{.substeps = 10, .max_step = 0, .max_steps = 10});
  CHECK(st.steps == 10);
  CHECK(z[0] == doctest::Approx(std::pow(0.9, 10)).epsilon(1e-14));

  // backprop with max_step = 1e-9 used to store 1e9 steps (a hang, then out of memory)
  decay_k f;
  const vec y0{1.0};
  const std::vector<vec> up{vec{0.0}, vec{1.0}};
  vec gy0, gth{0.0};
  expect_error<posenc::step_budget_exceeded>(
      [&] {
        backprop(schemes::rk4{}, f, y0, std::span<const double>(times), fixed_steps{.substeps = 1, .max_step = 1e-9},
                 std::span<const vec>(up), gy0, gth);
      },
      {"backprop: max_step = ", "needs 1000000000 steps on [0, 1]", "max_steps = 10000000"});
  expect_error<posenc::step_budget_exceeded>(
      [&] {
        adjoint(schemes::rk4{}, f, y0, std::span<const double>(times), fixed_steps{.substeps = 1, .max_step = 1e-9},
                std::span<const vec>(up), gy0, gth);
      },
      {"max_steps"});
}
