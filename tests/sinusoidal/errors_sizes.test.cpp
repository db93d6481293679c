// SPDX-License-Identifier: MIT
// Regression tests of issue 11, items 3, 8 and 9 (sinusoidal and rotary): sizes that used to
// hang, abort on an Eigen assertion or end in std::bad_alloc throw posenc::size_error naming the
// argument, before anything is allocated; NaN in the rotated input is a non_finite_error.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <posenc/rotary.hpp>
#include <posenc/sinusoidal.hpp>

#include "message_of.hpp"

namespace ps = posenc::sinusoidal;

namespace {
using posenc_test::message_of;
bool has(const std::string& s, const char* part) { return s.find(part) != std::string::npos; }
}  // namespace

TEST_CASE("sinusoidal: huge lengths and widths throw size_error naming the argument (issue 11, items 3, 9)") {
  // used to hang (C * C * block < length never false)
  CHECK(has(message_of<posenc::size_error>([] { (void)ps::table(SIZE_MAX, 8); }),
            "sinusoidal::table: length: expected 0 <= length <= posenc::max_extent"));
  // used to abort on an Eigen assertion (a negative row count)
  CHECK(has(message_of<posenc::size_error>([] { (void)ps::table<double>(std::size_t(-5), 8); }), "length"));
  // used to end in std::bad_alloc / std::length_error
  CHECK(has(message_of<posenc::size_error>([] { (void)ps::table(std::size_t{1} << 40, std::size_t{1} << 40); }),
            "sinusoidal::table: length * d: 1099511627776 * 1099511627776 overflows std::size_t"));
  CHECK(has(message_of<posenc::size_error>([] { (void)ps::table(1, SIZE_MAX - 1); }), "sinusoidal::table: d: expected"));
  CHECK(has(message_of<posenc::size_error>([] { (void)ps::frequencies(SIZE_MAX - 1); }), "sinusoidal::frequencies: d"));
  CHECK(has(message_of<posenc::size_error>([] { (void)ps::rotation(0.5, std::size_t{1} << 22); }),
            "sinusoidal::rotation: d * d"));
  CHECK(has(message_of<posenc::size_error>([] { (void)ps::generator(std::size_t{1} << 22); }), "sinusoidal::generator: d * d"));
  CHECK(has(message_of<posenc::size_error>([] { (void)ps::block_table(SIZE_MAX, 8, 1.0); }), "length"));
  std::vector<double> buf(16);
  CHECK(has(message_of<posenc::size_error>([&] { ps::fill(buf.data(), SIZE_MAX, 8, 8); }), "sinusoidal::fill: length"));
  CHECK(has(message_of<posenc::size_error>([&] { ps::fill(buf.data(), std::size_t{1} << 39, 8, 8); }),
            "length * row_stride"));
  // a table at the ordinary sizes still works and equals the row formula
  const auto t = ps::table(3, 4);
  CHECK(t(2, 0) == doctest::Approx(std::sin(2.0)).epsilon(1e-15));
}

TEST_CASE("rotary: NaN or Inf in x is a non_finite_error (issue 11, item 8), huge head_dim a size_error") {
  posenc::table<double> x = posenc::table<double>::Ones(3, 8);
  x(1, 5) = std::numeric_limits<double>::quiet_NaN();
  CHECK(has(message_of<posenc::non_finite_error>([&] { (void)posenc::rotary::apply_rotary(x); }),
            "rotary::apply_rotary: x contains NaN or Inf"));
  x(1, 5) = std::numeric_limits<double>::infinity();
  const std::vector<double> pos{0.0, 1.0, 2.0};
  CHECK_THROWS_AS((void)posenc::rotary::apply_rotary(x, pos), posenc::non_finite_error);
  posenc::table<float> xf = posenc::table<float>::Ones(2, 4);
  xf(0, 0) = std::numeric_limits<float>::quiet_NaN();
  CHECK_THROWS_AS(posenc::rotary::apply_rotary_inplace(xf), posenc::non_finite_error);
  CHECK(has(message_of<posenc::size_error>([] { (void)posenc::rotary::rotation_matrix(1.0, std::size_t{1} << 22); }),
            "rotary::rotation_matrix: head_dim * head_dim"));
}
