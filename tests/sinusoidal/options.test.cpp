// SPDX-License-Identifier: MIT
// posenc/sinusoidal/options.hpp: pair_count (validation of d and the options) and
// frequencies_wide (the long double frequencies the host, device and rotary tables share),
// against the closed forms w_k = base^(-2k/d) and base^(-k/(m-1)) evaluated with std::pow.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <string>

#include <posenc/core/error.hpp>
#include <posenc/sinusoidal/options.hpp>

#include "message_of.hpp"

namespace ps = posenc::sinusoidal;

namespace {
using posenc_test::message_of;
}  // namespace

TEST_CASE("sinusoidal::pair_count: m = d/2, and each bad argument named in the message") {
  CHECK(ps::pair_count(2, {}) == 1);
  CHECK(ps::pair_count(512, {}) == 256);
  ps::options pad;
  pad.odd = ps::odd_dimension::zero_pad;
  CHECK(ps::pair_count(7, pad) == 3);

  const auto odd = message_of<posenc::invalid_argument>([] { (void)ps::pair_count(7, {}, "here"); });
  CHECK(odd.find("here") != std::string::npos);
  CHECK(odd.find("d: expected an even d") != std::string::npos);
  CHECK(odd.find("got 7") != std::string::npos);
  CHECK_THROWS_AS((void)ps::pair_count(1, {}), posenc::invalid_argument);
  ps::options o;
  o.base = -2;
  CHECK(message_of<posenc::invalid_argument>([&] { (void)ps::pair_count(8, o); }).find("options.base") !=
        std::string::npos);
  o.base = std::numeric_limits<double>::quiet_NaN();
  CHECK_THROWS_AS((void)ps::pair_count(8, o), posenc::non_finite_error);
  o = {};
  o.position_step = std::numeric_limits<double>::infinity();
  CHECK(message_of<posenc::non_finite_error>([&] { (void)ps::pair_count(8, o); }).find("options.position_step") !=
        std::string::npos);
}

TEST_CASE("sinusoidal::frequencies_wide against base^(-2k/d) and base^(-k/(m-1))") {
  // exp(-log(base) 2k/d) in long double vs powl: both within a few long double ulps (~1e-19
  // relative); 1e-17 relative leaves a margin and still fails for any error in the exponent.
  for (double base : {10000.0, 500000.0, 2.0}) {
    for (std::size_t m : {1u, 2u, 3u, 64u}) {
      ps::options o;
      o.base = base;
      const auto w = ps::frequencies_wide(m, o);
      REQUIRE(w.size() == m);
      for (std::size_t k = 0; k < m; ++k) {
        const long double ref = std::pow(static_cast<long double>(base), -2.0L * k / (2.0L * m));
        CHECK(std::abs(w[k] - ref) <= 1e-17L * ref);
      }
      o.spacing = ps::spacing::k_over_half_minus_one;
      const auto v = ps::frequencies_wide(m, o);
      for (std::size_t k = 0; k < m; ++k) {
        const long double ref =
            m == 1 ? 1.0L : std::pow(static_cast<long double>(base), -static_cast<long double>(k) / (m - 1.0L));
        CHECK(std::abs(v[k] - ref) <= 1e-17L * ref);
      }
    }
  }
  ps::options bad;
  bad.base = 0;
  CHECK(message_of<posenc::invalid_argument>([&] { (void)ps::frequencies_wide(4, bad); })
            .find("sinusoidal::frequencies_wide") != std::string::npos);
  bad.base = std::numeric_limits<double>::infinity();
  CHECK_THROWS_AS((void)ps::frequencies_wide(4, bad), posenc::non_finite_error);
}
