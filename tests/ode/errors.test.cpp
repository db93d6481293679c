// SPDX-License-Identifier: MIT
// Bad input and runaway integrations end in a posenc::error subclass whose message names the
// function and the argument; nothing hangs, nothing returns a silent NaN.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include <posenc/ode.hpp>

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
