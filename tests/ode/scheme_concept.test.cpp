// SPDX-License-Identifier: MIT
// The tableau's consistency is part of the scheme concept (posenc/ode/tableau.hpp): a user
// tableau that breaks one condition (strictly lower a, row sums c_i = sum_j a_ij, sum b = 1,
// sum b_low = 1 for a pair, FSAL last row = b) is not an ExplicitScheme, so the engine and
// integrate() reject it at compile time. Each malformed variant below differs from a correct
// scheme in exactly one coefficient, so each assertion isolates one condition.
#include <doctest/doctest.h>

#include <cmath>
#include <span>
#include <string_view>
#include <vector>

#include <posenc/ode.hpp>

namespace {
using posenc::ode::tableau;

// Shu-Osher SSPRK3: consistent, third order.
struct ssprk3 {
  static constexpr std::string_view name = "ssprk3";
  static constexpr int order = 3;
  static constexpr tableau<3> coefficients = {
      .a = {{{0, 0, 0}, {1, 0, 0}, {0.25L, 0.25L, 0}}}, .b = {1.0L / 6, 1.0L / 6, 2.0L / 3}, .c = {0, 1, 0.5L}};
};
// c_3 = 0.75, but a_31 + a_32 = 0.5.
struct bad_row_sum {
  static constexpr std::string_view name = "bad_row_sum";
  static constexpr int order = 3;
  static constexpr tableau<3> coefficients = {
      .a = {{{0, 0, 0}, {1, 0, 0}, {0.25L, 0.25L, 0}}}, .b = {1.0L / 6, 1.0L / 6, 2.0L / 3}, .c = {0, 1, 0.75L}};
};
// sum b = 1 + 1/6.
struct bad_weights {
  static constexpr std::string_view name = "bad_weights";
  static constexpr int order = 3;
  static constexpr tableau<3> coefficients = {
      .a = {{{0, 0, 0}, {1, 0, 0}, {0.25L, 0.25L, 0}}}, .b = {1.0L / 6, 1.0L / 3, 2.0L / 3}, .c = {0, 1, 0.5L}};
};
// a_23 != 0: implicit (row sums and weights still fine).
struct not_explicit {
  static constexpr std::string_view name = "not_explicit";
  static constexpr int order = 3;
  static constexpr tableau<3> coefficients = {
      .a = {{{0, 0, 0}, {0.5L, 0, 0.5L}, {0.25L, 0.25L, 0}}}, .b = {1.0L / 6, 1.0L / 6, 2.0L / 3}, .c = {0, 1, 0.5L}};
};
// Heun-Euler 2(1) declared FSAL: its last row (1, 0) is not b = (1/2, 1/2).
struct bad_fsal {
  static constexpr std::string_view name = "bad_fsal";
  static constexpr int order = 2;
  static constexpr int error_order = 1;
  static constexpr bool fsal = true;
  static constexpr tableau<2> coefficients = {
      .a = {{{0, 0}, {1, 0}}}, .b = {0.5L, 0.5L}, .c = {0, 1}, .b_low = {1, 0}};
};
// The same pair without the FSAL claim is consistent; with b_low summing to 2 it is not.
struct heun_euler_pair {
  static constexpr std::string_view name = "heun_euler_pair";
  static constexpr int order = 2;
  static constexpr int error_order = 1;
  static constexpr bool fsal = false;
  static constexpr tableau<2> coefficients = {
      .a = {{{0, 0}, {1, 0}}}, .b = {0.5L, 0.5L}, .c = {0, 1}, .b_low = {1, 0}};
};
struct bad_low_weights {
  static constexpr std::string_view name = "bad_low_weights";
  static constexpr int order = 2;
  static constexpr int error_order = 1;
  static constexpr bool fsal = false;
  static constexpr tableau<2> coefficients = {
      .a = {{{0, 0}, {1, 0}}}, .b = {0.5L, 0.5L}, .c = {0, 1}, .b_low = {1, 1}};
};

struct growth {  // y' = y
  std::vector<double> operator()(double, const std::vector<double>& v) const { return v; }
};

// Usable by the engine: the stepper type exists and integrate() accepts the scheme.
template <class Sch>
constexpr bool runs = requires(std::vector<double>& y, std::span<const double> times) {
  typename posenc::ode::explicit_rk<Sch, std::vector<double>>;
  posenc::ode::integrate(Sch{}, growth{}, y, times, posenc::ode::fixed_steps{});
};

static_assert(posenc::ode::ExplicitScheme<ssprk3> && posenc::ode::tableau_is_consistent<ssprk3>());
static_assert(runs<ssprk3>);
static_assert(posenc::ode::EmbeddedScheme<heun_euler_pair> && runs<heun_euler_pair>);

static_assert(!posenc::ode::ExplicitScheme<bad_row_sum> && !runs<bad_row_sum>);
static_assert(!posenc::ode::ExplicitScheme<bad_weights> && !runs<bad_weights>);
static_assert(!posenc::ode::ExplicitScheme<not_explicit> && !runs<not_explicit>);
static_assert(!posenc::ode::ExplicitScheme<bad_fsal> && !runs<bad_fsal>);
static_assert(!posenc::ode::ExplicitScheme<bad_low_weights> && !runs<bad_low_weights>);
static_assert(!posenc::ode::tableau_is_consistent<bad_row_sum>() && !posenc::ode::tableau_is_consistent<bad_fsal>());

// The tolerance is 1e-15: a row sum off by 1e-14 is rejected, one off by 1e-17 (below the
// rounding of a long double literal like 1/3) is accepted.
struct off_by_1e14 {
  static constexpr std::string_view name = "off_by_1e14";
  static constexpr int order = 1;
  static constexpr tableau<2> coefficients = {.a = {{{0, 0}, {0.5L, 0}}}, .b = {0, 1}, .c = {0, 0.5L + 1e-14L}};
};
struct off_by_1e17 {
  static constexpr std::string_view name = "off_by_1e17";
  static constexpr int order = 1;
  static constexpr tableau<2> coefficients = {.a = {{{0, 0}, {0.5L, 0}}}, .b = {0, 1}, .c = {0, 0.5L + 1e-17L}};
};
static_assert(!posenc::ode::ExplicitScheme<off_by_1e14>);
static_assert(posenc::ode::ExplicitScheme<off_by_1e17>);
}  // namespace

TEST_CASE("a consistent user tableau runs: SSPRK3 converges at order 3 on y' = y") {
  // Independent reference: exp(1). Error of an order-3 scheme with n steps on [0, 1] ~ C n^-3;
  // doubling n must divide it by 2^3 = 8 up to the asymptotic regime (accept 6.5 .. 9.5).
  auto err = [](std::size_t n) {
    std::vector<double> y{1.0};
    const std::vector<double> times{0.0, 1.0};
    posenc::ode::integrate(ssprk3{}, growth{}, y, times, posenc::ode::fixed_steps{.substeps = n});
    return std::abs(y[0] - std::exp(1.0));
  };
  const double ratio = err(32) / err(64);
  CHECK(ratio > 6.5);
  CHECK(ratio < 9.5);
}
