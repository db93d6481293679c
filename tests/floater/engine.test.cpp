// SPDX-License-Identifier: MIT
// FLOATER on the ODE engine: the stages backprop recomputes are the forward's bit for bit, the
// two evaluation entry points of the flow agree bit for bit, the cached table is readable through
// const members, and threads = 0 means all hardware threads.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <posenc/floater.hpp>

#include "floater/common.hpp"

using namespace floater_test;
namespace fl = posenc::floater;

namespace {

/// Parameters whose weight matrices have exactly one non-zero per row: every entry of Y W^T is
/// then one product plus exact zeros, so it is the same whatever order (and whichever Eigen
/// kernel, GEMV or GEMM of any row count) sums it. What remains to differ between the forward and
/// the recomputation is what posenc itself does: stage sums, step sizes, stage times and the
/// order of the bias and time terms - which is what this test pins down.
template <class T>
mlp<T> one_per_row_mlp(std::size_t d, std::size_t hidden, std::uint64_t seed) {
  mlp<T> m(d, hidden, activation::tanh);
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> nd(0.0, 0.7);
  std::uniform_int_distribution<std::size_t> col_d(0, d - 1), col_h(0, hidden - 1);
  for (Eigen::Index j = 0; j < m.w1.rows(); ++j) m.w1(j, static_cast<Eigen::Index>(col_d(rng))) = static_cast<T>(nd(rng));
  for (Eigen::Index j = 0; j < m.w2.rows(); ++j) m.w2(j, static_cast<Eigen::Index>(col_h(rng))) = static_cast<T>(nd(rng));
  for (Eigen::Index j = 0; j < m.b1.size(); ++j) {
    m.b1[j] = static_cast<T>(nd(rng));
    m.w1_t[j] = static_cast<T>(nd(rng));
  }
  for (Eigen::Index j = 0; j < m.b2.size(); ++j) {
    m.b2[j] = static_cast<T>(nd(rng));
    m.w2_t[j] = static_cast<T>(nd(rng));
  }
  return m;
}

template <class T>
void check_replay_bitwise(std::size_t N, const fl::options& opt, std::size_t L) {
  fl::encoder<T> enc(one_per_row_mlp<T>(7, 9, 3), random_table<T>(N, 7, 4), opt);
  enc.extend(L);
  const posenc::matrix<T> traj = enc.trajectory();
  // positions 1 .. L-1 recomputed from their predecessors, in backprop's batches (chunks of up to
  // 64 intervals for these sizes, so L = 150 crosses chunk boundaries)
  const posenc::matrix<T> again = enc.replay(0, L - 1);
  REQUIRE(again.rows() == static_cast<Eigen::Index>(L - 1));
  REQUIRE(again.cols() == traj.cols());
  std::size_t differ = 0;
  for (Eigen::Index i = 0; i + 1 < static_cast<Eigen::Index>(L); ++i)
    if (std::memcmp(again.row(i).eval().data(), traj.row(i + 1).eval().data(), sizeof(T) * static_cast<std::size_t>(traj.cols())) != 0)
      ++differ;
  CHECK(differ == 0);
  // a window in the middle (its first interval is not the grid's first)
  const posenc::matrix<T> mid = enc.replay(37, 20);
  CHECK(std::memcmp(mid.data(), traj.middleRows(38, 20).eval().data(), sizeof(T) * static_cast<std::size_t>(mid.size())) == 0);
}

}  // namespace

TEST_CASE("backprop's recomputed stages equal the forward's bit for bit") {
  // Bitwise (tolerance 0): same stage weights (ode::detail::stage_weights), same step sizes (ode::substep),
  // same stage times (t + c h in double, then T), same bias-then-time order in the flow.
  fl::options uniform;
  uniform.delta = 0.1;
  fl::options irregular;
  irregular.substeps = 3;
  for (std::size_t i = 0; i < 150; ++i) irregular.times.push_back(0.05 * static_cast<double>(i) + 0.01 * std::sin(static_cast<double>(i)));
  for (std::size_t N : {1u, 3u}) {
    check_replay_bitwise<double>(N, uniform, 150);
    check_replay_bitwise<float>(N, uniform, 150);
    check_replay_bitwise<double>(N, irregular, 150);
    check_replay_bitwise<float>(N, irregular, 150);
  }
}

TEST_CASE("the recomputation agrees with the forward to rounding for dense weights") {
  // Dense weights: Eigen sums a 1-row product (GEMV) and a batched one (GEMM) in different orders,
  // so only rounding-level agreement is promised: 1e-12 relative (double; |P| ~ 1, 40 intervals).
  auto m = random_mlp<double>(6, 5, activation::gelu, 21);
  fl::encoder<double> enc(m, random_table<double>(2, 6, 22));
  enc.extend(41);
  const posenc::matrix<double> traj = enc.trajectory();
  const posenc::matrix<double> again = enc.replay(0, 40);
  CHECK((again - traj.bottomRows(40)).cwiseAbs().maxCoeff() <= 1e-12 * (1 + traj.cwiseAbs().maxCoeff()));
}

TEST_CASE("flow::evaluate and flow::evaluate_rows add bias and time in one order") {
  // Bitwise (tolerance 0) for equal rows and times; and against a long-double transcription of
  // W2 sigma(W1 p + b1 + t w1_t) + b2 + t w2_t: 1e-13 relative (double, d = hidden = 8).
  auto m = random_mlp<double>(8, 8, activation::tanh, 5);
  const auto y = random_table<double>(4, 8, 6);
  fl::flow<double> f(m);
  const double t = 0.37;
  posenc::matrix<double> z1(4, 8), h1(4, 8), z2(4, 8), h2(4, 8);
  posenc::table<double> o1(4, 8), o2(4, 8);
  f.evaluate(t, y, z1, h1, o1);
  const posenc::vector<double> tv = posenc::vector<double>::Constant(4, t);
  f.evaluate_rows(tv, y, z2, h2, o2);
  CHECK(std::memcmp(z1.data(), z2.data(), sizeof(double) * 32) == 0);
  CHECK(std::memcmp(o1.data(), o2.data(), sizeof(double) * 32) == 0);
  for (Eigen::Index n = 0; n < 4; ++n)
    for (Eigen::Index c = 0; c < 8; ++c) {
      long double acc = m.b2[c] + static_cast<long double>(t) * m.w2_t[c];
      for (Eigen::Index j = 0; j < 8; ++j) {
        long double zj = m.b1[j] + static_cast<long double>(t) * m.w1_t[j];
        for (Eigen::Index k = 0; k < 8; ++k) zj += static_cast<long double>(m.w1(j, k)) * y(n, k);
        acc += static_cast<long double>(m.w2(c, j)) * std::tanh(zj);
      }
      CHECK(std::abs(static_cast<double>(acc) - o1(n, c)) <= 1e-13 * (1 + std::abs(static_cast<double>(acc))));
    }
}

TEST_CASE("const block_table and tables read the cache without computing") {
  auto m = random_mlp<double>(4, 6, activation::relu, 7);
  fl::encoder<double> enc(m, random_table<double>(3, 4, 8));
  const fl::encoder<double>& ce = enc;
  // nothing beyond p(0) cached yet
  CHECK(ce.block_table(1, 1) == enc.initial_state().row(1));
  CHECK_THROWS_AS((void)ce.block_table(0, 2), posenc::invalid_argument);
  enc.extend(12);
  for (std::size_t n = 0; n < 3; ++n) CHECK(ce.block_table(n, 12) == enc.block_table(n, 12));
  CHECK(ce.tables(5) == enc.tables(5));
  CHECK(ce.size() == 12);  // the const reads computed nothing more
  CHECK_THROWS_AS((void)ce.block_table(0, 13), posenc::invalid_argument);
  CHECK_THROWS_AS((void)ce.tables(0), posenc::invalid_argument);
  CHECK_THROWS_AS((void)ce.block_table(3, 2), posenc::invalid_argument);
  std::string msg;
  try {
    (void)ce.block_table(0, 13);
  } catch (const posenc::error& e) {
    msg = e.what();
  }
  CHECK(msg.find("L") != std::string::npos);
  CHECK(msg.find("size() = 12") != std::string::npos);
  CHECK(msg.find("13") != std::string::npos);
  // two threads reading the cached table at once see the same rows
  posenc::table<double> a, b;
  std::thread t1([&] { a = ce.block_table(2, 12); });
  std::thread t2([&] { b = ce.block_table(2, 12); });
  t1.join();
  t2.join();
  CHECK(a == b);
  CHECK(a == enc.block_table(2, 12));
}

TEST_CASE("L = 0 is rejected by block_table and tables") {
  fl::encoder<double> enc(random_mlp<double>(3, 3, activation::tanh, 1), random_table<double>(1, 3, 2));
  CHECK_THROWS_AS((void)enc.block_table(0, 0), posenc::invalid_argument);
  CHECK_THROWS_AS((void)enc.tables(0), posenc::invalid_argument);
  fl::options o;
  o.times = {0.0, 0.1, 0.3};
  fl::encoder<double> grid(random_mlp<double>(3, 3, activation::tanh, 1), random_table<double>(1, 3, 2), o);
  CHECK_THROWS_AS((void)grid.block_table(0, 4), posenc::grid_error);  // beyond the explicit grid
  CHECK_THROWS_AS(grid.extend(4), posenc::grid_error);
}

TEST_CASE("threads = 0 uses every hardware thread and gives the serial table") {
  // Threads split the products by output columns, each element computed by one thread in the
  // serial order: bitwise equal to threads = 1.
  auto m = random_mlp<double>(40, 48, activation::tanh, 9);
  const auto p0 = random_table<double>(2, 40, 10);
  fl::options serial;
  fl::options all;
  all.threads = 0;
  fl::encoder<double> a(m, p0, serial), b(m, p0, all);
  CHECK(a.block_table(1, 20) == b.block_table(1, 20));
  fl::flow<double> f(m, 0);
  CHECK(f.threads() == posenc::resolve_threads(0, "test"));
}
