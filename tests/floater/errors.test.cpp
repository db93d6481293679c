// SPDX-License-Identifier: MIT
// FLOATER bad input: every case is a typed posenc::error whose message names the function and
// the argument, never UB or a silent NaN table.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <posenc/floater.hpp>

#include "message_of.hpp"

#include "floater/common.hpp"

using namespace floater_test;
namespace fl = posenc::floater;

namespace {
using posenc_test::message_of;
}  // namespace

TEST_CASE("floater rejects zero sizes and mismatched shapes") {
  CHECK_THROWS_AS(fl::mlp<double>(0), posenc::invalid_argument);
  CHECK(message_of([] { fl::mlp<double> m(0); }).find("d >= 1") != std::string::npos);
  fl::mlp<double> m(4, 3);
  // hidden = 0 after construction (a user-built mlp with empty matrices)
  fl::mlp<double> empty = m;
  empty.w1.resize(0, 4);
  CHECK_THROWS_AS(fl::encoder<double>(empty, posenc::table<double>::Zero(1, 4)), posenc::invalid_argument);
  // p0 of the wrong width, no blocks
  CHECK_THROWS_AS(fl::encoder<double>(m, posenc::table<double>::Zero(2, 5)), posenc::shape_error);
  CHECK_THROWS_AS(fl::encoder<double>(m, posenc::table<double>::Zero(0, 4)), posenc::invalid_argument);
  // inconsistent parameter shapes
  fl::mlp<double> bad = m;
  bad.b2.resize(3);
  CHECK_THROWS_AS(fl::encoder<double>(bad, posenc::table<double>::Zero(1, 4)), posenc::shape_error);
  CHECK(message_of([&] { fl::encoder<double>(bad, posenc::table<double>::Zero(1, 4)); }).find("b2") != std::string::npos);
  // zero blocks in the zero encoder
  CHECK_THROWS_AS((void)fl::zero_encoder<double>(4, 0, 0), posenc::invalid_argument);
  // a block index out of range
  fl::encoder<double> enc(m, posenc::table<double>::Zero(2, 4));
  CHECK_THROWS_AS((void)enc.block_table(2, 3), posenc::invalid_argument);
  // set_parameters / set_initial_state validate too
  fl::mlp<double> other(5, 3);
  CHECK_THROWS_AS(enc.set_parameters(other), posenc::shape_error);
  CHECK_THROWS_AS(enc.set_initial_state(posenc::table<double>::Zero(2, 3)), posenc::shape_error);
  // threads: 0 = all hardware threads (accepted), above posenc::max_threads rejected
  CHECK_NOTHROW(enc.set_threads(0));
  CHECK(enc.settings().threads == 0);
  CHECK_THROWS_AS(enc.set_threads(posenc::max_threads + 1), posenc::invalid_argument);
  CHECK(message_of([&] { enc.set_threads(posenc::max_threads + 1); }).find("threads") != std::string::npos);
}

TEST_CASE("floater rejects bad grids and step settings") {
  fl::mlp<double> m(3);
  const auto p0 = posenc::table<double>::Zero(1, 3);
  for (double delta : {0.0, -0.1, std::numeric_limits<double>::infinity(), std::nan("")}) {
    fl::options o;
    o.delta = delta;
    CHECK_THROWS_AS(fl::encoder<double>(m, p0, o), posenc::invalid_argument);
  }
  fl::options o;
  o.substeps = 0;
  CHECK_THROWS_AS(fl::encoder<double>(m, p0, o), posenc::invalid_argument);
  o = {};
  o.threads = posenc::max_threads + 1;
  CHECK_THROWS_AS(fl::encoder<double>(m, p0, o), posenc::invalid_argument);
  for (const std::vector<double>& g : {std::vector<double>{0.0, 0.1, 0.1}, std::vector<double>{0.0, -1.0},
                                       std::vector<double>{0.0, std::nan("")}}) {
    o = {};
    o.times = g;
    CHECK_THROWS_AS(fl::encoder<double>(m, p0, o), posenc::grid_error);
  }
  o = {};
  o.times = {0.0, 0.1, 0.1};
  CHECK(message_of([&] { fl::encoder<double>(m, p0, o); }).find("strictly increasing") != std::string::npos);
  // appending to an equidistant grid is not possible
  fl::encoder<double> enc(m, p0);
  const std::vector<double> more{1.0};
  CHECK_THROWS_AS(enc.append_times(more), posenc::invalid_argument);
}

TEST_CASE("floater rejects non-finite weights and initial states and catches a diverging solution") {
  fl::mlp<double> m(3);
  auto p0 = posenc::table<double>::Zero(1, 3).eval();
  fl::mlp<double> nan_w = m;
  nan_w.w1(1, 2) = std::nan("");
  CHECK_THROWS_AS(fl::encoder<double>(nan_w, p0), posenc::non_finite_error);
  CHECK(message_of([&] { fl::encoder<double>(nan_w, p0); }).find("w1") != std::string::npos);
  fl::mlp<double> inf_t = m;
  inf_t.w2_t[0] = std::numeric_limits<double>::infinity();
  CHECK_THROWS_AS(fl::encoder<double>(inf_t, p0), posenc::non_finite_error);
  p0(0, 1) = std::nan("");
  CHECK_THROWS_AS(fl::encoder<double>(m, p0), posenc::non_finite_error);
  // h = 1e200 * p blows up to Inf: non_finite_error naming the position, no Inf table returned
  fl::mlp<double> big(2, 2, activation::identity, false, false);
  big.w1 = 1e150 * posenc::matrix<double>::Identity(2, 2);
  big.w2 = 1e150 * posenc::matrix<double>::Identity(2, 2);
  fl::encoder<double> enc(big, posenc::table<double>::Ones(1, 2));
  CHECK_THROWS_AS((void)enc.block_table(0, 5), posenc::non_finite_error);
  CHECK(message_of([&] { (void)enc.block_table(0, 5); }).find("position") != std::string::npos);
}

TEST_CASE("floater rejects upstream gradients of the wrong shape") {
  auto m = random_mlp<double>(3, 4, activation::tanh, 1);
  auto p0 = random_table<double>(2, 3, 2);
  fl::encoder<double> enc(m, p0);
  std::vector<posenc::table<double>> one{posenc::table<double>::Zero(4, 3)};
  CHECK_THROWS_AS((void)enc.backprop(one), posenc::shape_error);  // one table for two blocks
  std::vector<posenc::table<double>> wide{posenc::table<double>::Zero(4, 3), posenc::table<double>::Zero(4, 4)};
  CHECK_THROWS_AS((void)enc.backprop(wide), posenc::shape_error);
  CHECK(message_of([&] { (void)enc.backprop(wide); }).find("dL/dP") != std::string::npos);
  std::vector<posenc::table<double>> ragged{posenc::table<double>::Zero(4, 3), posenc::table<double>::Zero(5, 3)};
  CHECK_THROWS_AS((void)enc.adjoint(ragged), posenc::shape_error);
  std::vector<posenc::table<double>> empty{posenc::table<double>::Zero(0, 3), posenc::table<double>::Zero(0, 3)};
  CHECK_THROWS_AS((void)enc.backprop(empty), posenc::shape_error);
  std::vector<posenc::table<double>> nan{posenc::table<double>::Zero(4, 3), posenc::table<double>::Zero(4, 3)};
  nan[1](2, 1) = std::nan("");
  CHECK_THROWS_AS((void)enc.backprop(nan), posenc::non_finite_error);
  // a base function returning the wrong shape in the bias form
  fl::biased_encoder<double> be(enc, [](std::size_t L, std::size_t) { return posenc::table<double>::Zero(static_cast<Eigen::Index>(L), 2); });
  CHECK_THROWS_AS((void)be.block_table(0, 3), posenc::shape_error);
}

// Regression tests of issue 11: sizes near the type limits, activations outside the enum.
TEST_CASE("floater: lengths above PTRDIFF_MAX or max_extent throw size_error before any allocation (issue 11, items 1, 7, 9)") {
  auto enc = fl::zero_encoder<double>(4, 3, 2);
  const std::size_t n = 0;
  // n - 1 with n = 0: used to become a negative Eigen::Index and write past the cache
  const std::string m1 = message_of([&] { enc.extend(n - 1); });
  CHECK(m1.find("floater::encoder::extend: L: expected 0 <= L <= posenc::max_extent") != std::string::npos);
  CHECK_THROWS_AS(enc.extend(n - 1), posenc::size_error);
  CHECK_THROWS_AS((void)enc.block_table(0, n - 1), posenc::size_error);
  CHECK_THROWS_AS((void)enc.tables(n - 1), posenc::size_error);
  CHECK_THROWS_AS(enc.extend(std::size_t{1} << 62), posenc::size_error);
  CHECK_THROWS_AS(enc.extend(static_cast<std::size_t>(PTRDIFF_MAX) + 1), posenc::size_error);
  // within max_extent but L * N * d (= L * 8) above max_elements
  const std::string m2 = message_of([&] { enc.extend(posenc::max_extent); });
  CHECK(m2.find("L * blocks * d") != std::string::npos);
  CHECK_THROWS_AS(enc.extend(posenc::max_extent), posenc::size_error);
  // the encoder is untouched and still works
  CHECK(enc.size() == 1);
  CHECK(enc.block_table(1, 3).rows() == 3);
  CHECK(message_of([&] { (void)enc.block_table(2, 3); }).find("n: expected block < 2") != std::string::npos);

  // xavier_uniform({2^32, 2^32, 3}): the row product used to wrap to 0 and return a 0 x 3 table
  std::mt19937_64 rng(1);
  const std::vector<std::size_t> shape{std::size_t{1} << 32, std::size_t{1} << 32, 3};
  CHECK_THROWS_AS((void)fl::xavier_uniform<double>(shape, rng), posenc::size_error);
  CHECK(message_of([&] { (void)fl::xavier_uniform<double>(shape, rng); }).find("shape: rows = prod(shape[:-1])") !=
        std::string::npos);
  // a product that fits but exceeds max_elements
  CHECK_THROWS_AS((void)fl::xavier_uniform<double>({std::size_t{1} << 21, std::size_t{1} << 20, 2}, rng),
                  posenc::size_error);
  // mlp sizes
  CHECK_THROWS_AS(fl::mlp<double>(std::size_t{1} << 41), posenc::size_error);
  CHECK_THROWS_AS(fl::mlp<double>(std::size_t{1} << 30, std::size_t{1} << 30), posenc::size_error);
}

TEST_CASE("floater: an activation outside the enum is rejected by mlp::validate (issue 11, item 6)") {
  fl::mlp<double> m(4, 3);
  m.act = static_cast<fl::activation>(99);
  const std::string msg = message_of([&] { m.validate("test"); });
  CHECK(msg.find("act: expected relu, tanh, gelu, softplus or identity, got activation(99)") != std::string::npos);
  CHECK_THROWS_AS(fl::encoder<double>(m, posenc::table<double>::Zero(1, 4)), posenc::invalid_argument);
  m.act = static_cast<fl::activation>(-1);
  CHECK_THROWS_AS(m.validate("test"), posenc::invalid_argument);
  auto enc = fl::zero_encoder<double>(4, 3);
  CHECK_THROWS_AS(enc.set_parameters(m), posenc::invalid_argument);
}

TEST_CASE("floater: backprop and adjoint check L against the grid on entry, under their own names") {
  // dL/dP with more positions than an explicit grid has: grid_error from the gradient call itself
  // (the table is not touched), as block_table reports it for the forward
  auto m = random_mlp<double>(3, 4, activation::tanh, 1);
  auto p0 = random_table<double>(2, 3, 2);
  fl::options o;
  o.times = {0.0, 0.1, 0.25};
  fl::encoder<double> enc(m, p0, o);
  std::vector<posenc::table<double>> four{posenc::table<double>::Zero(4, 3), posenc::table<double>::Zero(4, 3)};
  CHECK_THROWS_AS((void)enc.backprop(four), posenc::grid_error);
  CHECK(message_of([&] { (void)enc.backprop(four); }).find("floater::encoder::backprop: L: the explicit grid has 3 times") !=
        std::string::npos);
  CHECK(message_of([&] { (void)enc.adjoint(four); }).find("floater::encoder::adjoint: L: the explicit grid has 3 times") !=
        std::string::npos);
  CHECK(message_of([&] { (void)enc.block_table(0, 4); }).find("floater::encoder::block_table: L: the explicit grid has 3 times") !=
        std::string::npos);
  CHECK(enc.size() == 1);
  // three positions are within the grid
  std::vector<posenc::table<double>> three{posenc::table<double>::Ones(3, 3), posenc::table<double>::Ones(3, 3)};
  CHECK(enc.backprop(three).p0.allFinite());
  CHECK(enc.size() == 3);
}
