// SPDX-License-Identifier: MIT
// The faster routes of FLOATER's backprop against the plain ones: the forward's kept stages
// (options::stage_memory) against the recomputing backprop (stage_memory = 0), against finite
// differences, with a budget that keeps only some intervals, and with a table extended in pieces;
// the fused sparse relu pullback (flow::prepare_pullback) against the two dense products.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <vector>

#include <posenc/floater.hpp>

#include "floater/common.hpp"

using namespace floater_test;
namespace fl = posenc::floater;

namespace {

template <class T>
std::vector<posenc::table<T>> upstream(std::size_t N, std::size_t L, std::size_t d, std::uint64_t seed) {
  std::vector<posenc::table<T>> G;
  for (std::size_t n = 0; n < N; ++n) G.push_back(random_table<T>(L, d, seed + n));
  return G;
}

template <class T>
fl::options with_budget(std::size_t bytes) {
  fl::options o;
  o.stage_memory = bytes;
  return o;
}

/// The two backprops differ only in rounding: the weight-gradient products sum the S = (L - 1) *
/// substeps * 4 stacked stage rows in another order (kept: interval-major; recomputed: stage-major
/// within a chunk), and reordering a sum of S terms moves it by at most 2 (S - 1) eps times the sum
/// of their magnitudes; the bound is 2 eps S max|g|. The stage values themselves may also differ by
/// an ulp where Eigen picks another kernel for the chunk-stacked recomputation than for the
/// forward's N-row products (at the sizes below they are equal: dL/dp0 agrees bit for bit).
/// Measured: 25-80x below the bound.
template <class T>
double rounding_bound(std::size_t L, std::size_t substeps, double scale) {
  return 2.0 * std::numeric_limits<T>::epsilon() * static_cast<double>((L - 1) * substeps * 4) * scale;
}

template <class T>
void check_kept_equals_recomputed(std::size_t d, std::size_t hidden, std::size_t N, std::size_t L, activation act) {
  auto m = random_mlp<T>(d, hidden, act, 201, true, true, 1.5);
  auto p0 = random_table<T>(N, d, 202);
  const auto G = upstream<T>(N, L, d, 203);
  fl::encoder<T> kept(m, p0, with_budget<T>(std::size_t{1} << 30)), recomputed(m, p0, with_budget<T>(0));
  fl::gradient_info ik, ir;
  const auto a = kept.backprop(G, &ik);
  const auto b = recomputed.backprop(G, &ir);
  CHECK(ik.kept_intervals == L - 1);
  CHECK(ik.rhs_evaluations == 0);  // nothing recomputed
  CHECK(ir.kept_intervals == 0);
  CHECK(ir.rhs_evaluations == (L - 1) * 5 * 4);
  CHECK(kept.kept_stage_bytes() == (L - 1) * 5 * 4 * N * (d + hidden) * sizeof(T));
  CHECK(recomputed.kept_stage_bytes() == 0);
  // keeping the stages does not change the table: the same evaluations, bit for bit
  CHECK(kept.trajectory() == recomputed.trajectory());
  const auto fa = fl::flatten(a.flow), fb = fl::flatten(b.flow);
  const double tol = rounding_bound<T>(L, 5, static_cast<double>(fb.cwiseAbs().maxCoeff()));
  const double tolp = rounding_bound<T>(L, 5, static_cast<double>(b.p0.cwiseAbs().maxCoeff()));
  CHECK_MESSAGE(max_abs_diff(fa, fb) <= tol, "theta diff ", max_abs_diff(fa, fb), " bound ", tol);
  CHECK_MESSAGE(max_abs_diff(a.p0, b.p0) <= tolp, "p0 diff ", max_abs_diff(a.p0, b.p0), " bound ", tolp);
}

/// Largest |central difference - gradient| over every weight and every entry of p0, for the
/// loss sum_n <block_table(n, L), G[n]> of an encoder with options opt (eps = 1e-5 in double).
double worst_fd_error(const fl::mlp<double>& m, const posenc::table<double>& p0, const std::vector<posenc::table<double>>& G,
                      const fl::options& opt, const fl::gradients<double>& gr, std::size_t L) {
  const double eps = 1e-5;
  auto loss = [&](const fl::mlp<double>& mm, const posenc::table<double>& pp) {
    fl::encoder<double> e(mm, pp, opt);
    double s = 0;
    for (std::size_t n = 0; n < G.size(); ++n) s += (e.block_table(n, L).array() * G[n].array()).sum();
    return s;
  };
  const posenc::vector<double> v = fl::flatten(m), got = fl::flatten(gr.flow);
  double worst = 0;
  for (Eigen::Index i = 0; i < v.size(); ++i) {
    auto vp = v, vm = v;
    vp[i] += eps;
    vm[i] -= eps;
    fl::mlp<double> mp = m, mn = m;
    fl::unflatten(vp, mp);
    fl::unflatten(vm, mn);
    worst = std::max(worst, std::abs((loss(mp, p0) - loss(mn, p0)) / (2 * eps) - got[i]));
  }
  for (Eigen::Index i = 0; i < p0.rows(); ++i)
    for (Eigen::Index j = 0; j < p0.cols(); ++j) {
      auto pp = p0, pm = p0;
      pp(i, j) += eps;
      pm(i, j) -= eps;
      worst = std::max(worst, std::abs((loss(m, pp) - loss(m, pm)) / (2 * eps) - gr.p0(i, j)));
    }
  return worst;
}

}  // namespace

TEST_CASE("floater backprop from kept stages equals the recomputing backprop") {
  check_kept_equals_recomputed<double>(24, 20, 1, 40, activation::relu);
  check_kept_equals_recomputed<double>(16, 24, 3, 30, activation::tanh);
  check_kept_equals_recomputed<double>(8, 8, 18, 12, activation::gelu);
  check_kept_equals_recomputed<float>(24, 20, 1, 40, activation::relu);
  check_kept_equals_recomputed<float>(16, 24, 3, 30, activation::softplus);
}

TEST_CASE("floater backprop from kept stages equals finite differences") {
  // As gradient.test.cpp: central differences with eps = 1e-5 in double, truncation ~1e-10 and
  // rounding ~1e-11, tolerance 1e-7 absolute. Every interval is kept (default budget).
  const std::size_t d = 3, hidden = 4, N = 2, L = 6;
  auto m = random_mlp<double>(d, hidden, activation::tanh, 211, true, true, 2.0);
  auto p0 = random_table<double>(N, d, 212);
  const auto G = upstream<double>(N, L, d, 213);
  fl::options opt;
  opt.delta = 0.1;
  opt.substeps = 2;
  fl::encoder<double> enc(m, p0, opt);
  fl::gradient_info info;
  const auto gr = enc.backprop(G, &info);
  REQUIRE(info.kept_intervals == L - 1);
  const double worst = worst_fd_error(m, p0, G, opt, gr, L);
  CHECK_MESSAGE(worst < 1e-7, "worst finite-difference error ", worst);
}

TEST_CASE("floater backprop with a budget that keeps only the first intervals") {
  // Budget for 7 intervals of 5 substeps x 4 stages x N rows of (d + hidden) doubles: intervals
  // 0..6 are kept, the rest recomputed, and the gradient equals the all-recomputed one to the
  // rounding bound above (and the all-kept one likewise).
  const std::size_t d = 12, hidden = 10, N = 2, L = 50;
  const std::size_t per = 5 * 4 * N * (d + hidden) * sizeof(double);
  auto m = random_mlp<double>(d, hidden, activation::relu, 221, true, false, 1.5);
  auto p0 = random_table<double>(N, d, 222);
  const auto G = upstream<double>(N, L, d, 223);
  fl::encoder<double> part(m, p0, with_budget<double>(7 * per + per / 2)), none(m, p0, with_budget<double>(0));
  fl::gradient_info info;
  const auto a = part.backprop(G, &info);
  const auto b = none.backprop(G);
  CHECK(info.kept_intervals == 7);
  CHECK(part.kept_intervals() == 7);
  CHECK(part.kept_stage_bytes() == 7 * per);
  CHECK(info.rhs_evaluations == (L - 1 - 7) * 5 * 4);
  const auto fa = fl::flatten(a.flow), fb = fl::flatten(b.flow);
  CHECK(max_abs_diff(fa, fb) <= rounding_bound<double>(L, 5, fb.cwiseAbs().maxCoeff()));
  CHECK(max_abs_diff(a.p0, b.p0) <= rounding_bound<double>(L, 5, b.p0.cwiseAbs().maxCoeff()));
}

TEST_CASE("floater kept stages of a table extended in pieces equal those of one extension") {
  // extend(9), extend(20), step(), then backprop to 21 positions: the kept rows grow with the
  // table (reallocated and copied), the evaluations are the same, so the gradient equals the one
  // of an encoder that computed 21 positions at once, bit for bit.
  const std::size_t d = 10, hidden = 14, N = 2, L = 21;
  auto m = random_mlp<double>(d, hidden, activation::gelu, 231);
  auto p0 = random_table<double>(N, d, 232);
  const auto G = upstream<double>(N, L, d, 233);
  fl::encoder<double> pieces(m, p0), once(m, p0);
  pieces.extend(9);
  CHECK(pieces.kept_intervals() == 8);
  pieces.extend(20);
  pieces.step();
  CHECK(pieces.kept_intervals() == L - 1);
  once.extend(L);
  const auto a = pieces.backprop(G);
  const auto b = once.backprop(G);
  CHECK(fl::flatten(a.flow) == fl::flatten(b.flow));
  CHECK(a.p0 == b.p0);
  // dropping the cache drops the kept stages
  pieces.set_initial_state(p0);
  CHECK(pieces.kept_intervals() == 0);
  CHECK(pieces.kept_stage_bytes() == 0);
}

namespace {
template <class T>
void check_sparse_pullback(std::size_t d, std::size_t hidden, std::size_t N, std::size_t threads) {
  auto m = random_mlp<T>(d, hidden, activation::relu, 241 + N, true, true, 1.0);
  fl::flow<T> f(m, threads);
  const posenc::matrix<T> g = random_table<T>(N, d, 242), y = random_table<T>(N, d, 243);
  posenc::matrix<T> z(N, hidden), h(N, hidden), out(N, d);
  f.evaluate(0.3, y, z, h, out);  // pre-activations of a real evaluation (about half positive)
  posenc::matrix<T> zd(N, hidden), yd(N, d), zs(N, hidden), ys(N, d);
  f.pullback(g, z, zd, yd);  // dense: not prepared
  f.prepare_pullback();
  f.pullback(g, z, zs, ys);  // fused sparse
  // zbar: both are the same d-term dot products summed in another order, so they differ by at
  // most 2 gamma_d sum_i |g_i W2_ij| (gamma_d = d eps); zero where z <= 0 in both, exactly.
  const double eps = std::numeric_limits<T>::epsilon();
  const Eigen::MatrixXd ga = g.template cast<double>().cwiseAbs(), w2a = m.w2.template cast<double>().cwiseAbs(),
                        w1a = m.w1.template cast<double>().cwiseAbs();
  const Eigen::MatrixXd s2 = ga * w2a;  // N x hidden: sum_i |g_i| |W2_ij|
  const Eigen::MatrixXd dz = (zs.template cast<double>() - zd.template cast<double>()).cwiseAbs();
  CHECK((dz.array() <= 2.0 * static_cast<double>(d) * eps * s2.array()).all());
  for (Eigen::Index r = 0; r < z.rows(); ++r)
    for (Eigen::Index j = 0; j < z.cols(); ++j)
      if (!(z(r, j) > T(0))) CHECK((zs(r, j) == T(0) && zd(r, j) == T(0)));
  // ybar = sum_j zbar_j W1_jk: the reordering of the hidden-unit sum (2 gamma_hidden sum_j |zbar_j
  // W1_jk|) plus the zbar differences carried through W1 (2 gamma_d sum_j s2_j |W1_jk|).
  const Eigen::MatrixXd bound = 2.0 * static_cast<double>(hidden) * eps * (zd.template cast<double>().cwiseAbs() * w1a) +
                                2.0 * static_cast<double>(d) * eps * (s2 * w1a);
  const Eigen::MatrixXd dy = (ys.template cast<double>() - yd.template cast<double>()).cwiseAbs();
  CHECK((dy.array() <= bound.array()).all());
  // the sparse route ran: some hidden unit is inactive in every row (else this tests nothing new)
  bool some_inactive = false;
  for (Eigen::Index j = 0; j < z.cols(); ++j) some_inactive = some_inactive || (z.col(j).array() <= T(0)).all();
  CHECK(some_inactive);
}
}  // namespace

TEST_CASE("floater fused sparse relu pullback equals the two dense products") {
  for (std::size_t threads : {1, 2}) {
    check_sparse_pullback<double>(64, 96, 1, threads);
    check_sparse_pullback<double>(64, 96, 2, threads);
    check_sparse_pullback<float>(512, 512, 1, threads);
    check_sparse_pullback<float>(40, 70, 2, threads);
  }
}

TEST_CASE("floater backprop of one relu block through the sparse pullback equals finite differences") {
  // N = 1, relu: every stage's pullback takes the fused sparse route. Central differences in
  // double as above (eps = 1e-5, tolerance 1e-7; no relu kink lies within +-eps of these points).
  const std::size_t d = 4, hidden = 6, N = 1, L = 5;
  auto m = random_mlp<double>(d, hidden, activation::relu, 251, true, true, 2.0);
  auto p0 = random_table<double>(N, d, 252);
  const auto G = upstream<double>(N, L, d, 253);
  fl::options opt;
  opt.delta = 0.1;
  opt.substeps = 2;
  fl::encoder<double> enc(m, p0, opt);
  const auto gr = enc.backprop(G);
  const double worst = worst_fd_error(m, p0, G, opt, gr, L);
  CHECK_MESSAGE(worst < 1e-7, "worst finite-difference error ", worst);
}
