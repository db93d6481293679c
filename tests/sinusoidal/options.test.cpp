// SPDX-License-Identifier: MIT
// posenc/sinusoidal/options.hpp: pair_count (validation of d and the options) and
// frequencies_wide (the long double frequencies the host, device and rotary tables share),
// against the closed forms w_k = base^(-2k/d) and base^(-k/(m-1)) evaluated with std::pow.
#include <doctest/doctest.h>

#include <cmath>
#include <cstddef>
#include <limits>
#include <string>

#include <posenc/core/error.hpp>
#include <posenc/rotary/frequencies.hpp>
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

// One formula (posenc/numeric/frequencies.hpp): the sinusoidal frequencies of spacing
// two_k_over_d and the rotary family's default frequencies are the same long double numbers, bit
// for bit, for the same base and width (no tolerance); and both are base^(-2k/d): within 1e-17
// relative of powl (a few long double ulps of powl's rounded exponent, as the test above).
TEST_CASE("sinusoidal and rotary frequencies are one formula: the same bits for the same base and width") {
  for (double base : {10000.0, 500000.0, 1e6, 2.0, 0.5}) {
    for (std::size_t d : {2u, 8u, 64u, 128u, 1026u}) {
      ps::options o;
      o.base = base;
      const auto w = ps::frequencies_wide(d / 2, o);
      const auto r = posenc::rotary::default_frequencies(d, base);
      REQUIRE(r.inv_freq.size() == w.size());
      for (std::size_t k = 0; k < w.size(); ++k) {
        INFO("base ", base, ", d ", d, ", k ", k);
        CHECK(w[k] == r.inv_freq[k]);
        const long double ref = std::pow(static_cast<long double>(base), -2.0L * static_cast<long double>(k) / d);
        CHECK(std::abs(w[k] - ref) <= 1e-17L * ref);  // powl: a few ulp of its rounded exponent
      }
    }
  }
}

TEST_CASE("one check of a frequency base: sinusoidal and rotary accept and refuse the same bases") {
  // rotary::default_frequencies refused bases in (0, 1] before (> 1), the options > 0: one rule now
  for (double base : {0.5, 1.0, 10000.0}) {
    ps::options o;
    o.base = base;
    CHECK_NOTHROW((void)ps::frequencies_wide(4, o));
    CHECK_NOTHROW((void)posenc::rotary::default_frequencies(8, base));
  }
  for (double base : {0.0, -2.0}) {
    ps::options o;
    o.base = base;
    CHECK(message_of<posenc::invalid_argument>([&] { (void)ps::frequencies_wide(4, o); })
              .find("options.base: expected base > 0") != std::string::npos);
    CHECK(message_of<posenc::invalid_argument>([&] { (void)posenc::rotary::default_frequencies(8, base); })
              .find("base: expected base > 0") != std::string::npos);
  }
  CHECK_THROWS_AS((void)posenc::rotary::default_frequencies(8, std::numeric_limits<double>::quiet_NaN()),
                  posenc::non_finite_error);
}
