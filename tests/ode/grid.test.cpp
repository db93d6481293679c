// SPDX-License-Identifier: MIT
// posenc/ode/grid.hpp: the one grid check and the one substep loop.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include <posenc/ode/grid.hpp>

#include "message_of.hpp"

namespace ode = posenc::ode;

namespace {
using posenc_test::message_of;
}  // namespace

TEST_CASE("grid: uniform and explicit grids are validated on construction") {
  for (double delta : {0.0, -0.5, std::nan(""), std::numeric_limits<double>::infinity()})
    CHECK_THROWS_AS((void)ode::grid::uniform(delta, "opt.delta"), posenc::invalid_argument);
  CHECK(message_of([] { (void)ode::grid::uniform(-0.5, "opt.delta"); }).find("opt.delta") != std::string::npos);
  const auto u = ode::grid::uniform(0.25);
  CHECK(u.is_uniform());
  CHECK(u.time(3) == 0.75);
  CHECK(u.max_points() == std::numeric_limits<std::size_t>::max());
  CHECK_THROWS_AS((void)ode::grid::explicit_times({}, "opt.times"), posenc::grid_error);
  CHECK_THROWS_AS((void)ode::grid::explicit_times({0.0, std::nan("")}, "opt.times"), posenc::grid_error);
  CHECK_THROWS_AS((void)ode::grid::explicit_times({0.0, 1.0, 1.0}, "opt.times"), posenc::grid_error);
  CHECK_THROWS_AS((void)ode::grid::explicit_times({1.0, 0.0}, "opt.times"), posenc::grid_error);  // increasing only
  const std::string m = message_of([] { (void)ode::grid::explicit_times({0.0, 2.0, 1.0}, "opt.times"); });
  CHECK(m.find("opt.times") != std::string::npos);
  CHECK(m.find("t[2] = 1") != std::string::npos);
  auto g = ode::grid::explicit_times({0.0, 0.5});
  CHECK(g.max_points() == 2);
  const std::vector<double> more{0.7, 1.0};
  g.append(more);
  CHECK(g.max_points() == 4);
  CHECK(g.time(3) == 1.0);
  const std::vector<double> bad{0.9};
  CHECK_THROWS_AS(g.append(bad), posenc::grid_error);
  CHECK(g.max_points() == 4);  // a failed append leaves the grid as it was
  auto uu = ode::grid::uniform(0.1);
  CHECK_THROWS_AS(uu.append(more), posenc::invalid_argument);
}

TEST_CASE("grid::require_points: L = 0 and L beyond the grid") {
  const auto g = ode::grid::explicit_times({0.0, 0.5, 1.0});
  CHECK_NOTHROW(g.require_points(3, "f"));
  CHECK_THROWS_AS(g.require_points(0, "f"), posenc::invalid_argument);
  CHECK_THROWS_AS(g.require_points(4, "f"), posenc::grid_error);
  const std::string m = message_of([&] { g.require_points(4, "f"); });
  CHECK(m.find("L = 4") != std::string::npos);
  CHECK(m.find("3 times") != std::string::npos);
  CHECK_NOTHROW(ode::grid::uniform(0.1).require_points(1000000, "f"));
}

TEST_CASE("for_each_substep: k steps of (t1 - t0) / k, the last landing exactly on t1") {
  for (double t1 : {0.3, 1.0 / 3.0, -0.7}) {
    for (std::size_t k : {1u, 3u, 5u, 7u}) {
      std::size_t count = 0;
      double t = 0, end = 0;
      ode::for_each_substep(0.0, t1, k, [&](std::size_t s, double ts, double hs) {
        CHECK(s == count);
        CHECK(ts == doctest::Approx(t).epsilon(1e-15));
        CHECK(hs == doctest::Approx(t1 / static_cast<double>(k)).epsilon(1e-14));
        t = ts + hs;
        end = ts + hs;
        ++count;
      });
      CHECK(count == k);
      CHECK(end == t1);  // exact: the last substep is t1 - t_s
    }
  }
  const auto g = ode::grid::explicit_times({0.0, 0.5, 1.25});
  double last = 0;
  g.for_each_substep(2, 4, [&](std::size_t, double ts, double hs) { last = ts + hs; });
  CHECK(last == 1.25);
}

TEST_CASE("validate_grid: direction") {
  const std::vector<double> dec{1.0, 0.5, 0.0};
  CHECK(ode::validate_grid(std::span<const double>(dec)) == -1);
  CHECK_THROWS_AS(ode::validate_grid(std::span<const double>(dec), "t", +1), posenc::grid_error);
  const std::vector<double> one{2.0};
  CHECK(ode::validate_grid(std::span<const double>(one), "t", -1) == -1);
}
