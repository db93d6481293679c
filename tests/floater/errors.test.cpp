// SPDX-License-Identifier: MIT
// FLOATER bad input: every case is a typed posenc::error whose message names the function and
// the argument, never UB or a silent NaN table.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include <posenc/floater.hpp>

#include "floater/common.hpp"

using namespace floater_test;
namespace fl = posenc::floater;

namespace {
template <class F>
std::string message_of(F&& f) {
  try {
    f();
  } catch (const posenc::error& e) {
    return e.what();
  }
  return "";
}
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
