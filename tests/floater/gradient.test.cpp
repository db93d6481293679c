// SPDX-License-Identifier: MIT
// FLOATER gradients: discrete backprop and the continuous adjoint against central finite
// differences of the table, against each other as the step shrinks, and against the generic
// drivers of posenc/ode/gradient.hpp running the same right-hand side.
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include <posenc/floater.hpp>
#include <posenc/ode/gradient.hpp>

#include "floater/common.hpp"

using namespace floater_test;
namespace fl = posenc::floater;

namespace {

/// L(P) = sum_n sum_i <G_n[i], P_n[i]>, so dL/dP = G.
double loss(fl::encoder<double>& enc, const std::vector<posenc::table<double>>& G) {
  const auto L = static_cast<std::size_t>(G[0].rows());
  double s = 0;
  for (std::size_t n = 0; n < G.size(); ++n) s += (enc.block_table(n, L).array() * G[n].array()).sum();
  return s;
}

/// Central differences of loss w.r.t. every parameter in flattened order and every p0 entry.
std::pair<posenc::vector<double>, posenc::table<double>> finite_differences(const fl::mlp<double>& m,
                                                                            const posenc::table<double>& p0,
                                                                            const fl::options& opt,
                                                                            const std::vector<posenc::table<double>>& G,
                                                                            double eps) {
  const posenc::vector<double> v = fl::flatten(m);
  posenc::vector<double> g(v.size());
  for (Eigen::Index i = 0; i < v.size(); ++i) {
    auto vp = v, vm = v;
    vp[i] += eps;
    vm[i] -= eps;
    fl::mlp<double> mp = m, mm = m;
    fl::unflatten(vp, mp);
    fl::unflatten(vm, mm);
    fl::encoder<double> ep(mp, p0, opt), em(mm, p0, opt);
    g[i] = (loss(ep, G) - loss(em, G)) / (2 * eps);
  }
  posenc::table<double> gp(p0.rows(), p0.cols());
  for (Eigen::Index i = 0; i < p0.rows(); ++i)
    for (Eigen::Index j = 0; j < p0.cols(); ++j) {
      auto pp = p0, pm = p0;
      pp(i, j) += eps;
      pm(i, j) -= eps;
      fl::encoder<double> ep(m, pp, opt), em(m, pm, opt);
      gp(i, j) = (loss(ep, G) - loss(em, G)) / (2 * eps);
    }
  return {g, gp};
}

std::vector<posenc::table<double>> upstream(std::size_t N, std::size_t L, std::size_t d, std::uint64_t seed) {
  std::vector<posenc::table<double>> G;
  for (std::size_t n = 0; n < N; ++n) G.push_back(random_table<double>(L, d, seed + n));
  return G;
}

}  // namespace

TEST_CASE("floater backprop equals central finite differences of the table") {
  // The discrete gradient is exact for the computed table, so the only error is the finite
  // difference's: eps = 1e-5 gives truncation ~eps^2 |L'''| ~ 1e-10 and rounding ~1e-16/eps ~
  // 1e-11 (|L| ~ 10): tolerance 1e-7 absolute on gradients of size ~1-10. Includes relu (no kink
  // is crossed within +-eps for these random points), time inputs on/off, several blocks.
  struct cfg {
    activation act;
    bool t1, t2;
  };
  for (cfg c : {cfg{activation::tanh, true, true}, cfg{activation::relu, true, true}, cfg{activation::gelu, false, true},
                cfg{activation::softplus, true, false}, cfg{activation::identity, false, false}}) {
    const std::size_t d = 3, hidden = 4, N = 2, L = 5;
    auto m = random_mlp<double>(d, hidden, c.act, 101, c.t1, c.t2, 2.0);
    auto p0 = random_table<double>(N, d, 102);
    fl::options opt;
    opt.delta = 0.1;
    opt.substeps = 2;
    const auto G = upstream(N, L, d, 103);
    fl::encoder<double> enc(m, p0, opt);
    fl::gradient_info info;
    const auto gr = enc.backprop(G, &info);
    CHECK(info.positions == L);
    const auto fdr = finite_differences(m, p0, opt, G, 1e-5);
  const posenc::vector<double>& fd = fdr.first;
  const posenc::table<double>& fdp = fdr.second;
    const auto got = fl::flatten(gr.flow);
    CHECK_MESSAGE(max_abs_diff(got, fd) < 1e-7, fl::to_string(c.act), " theta err ", max_abs_diff(got, fd));
    CHECK_MESSAGE(max_abs_diff(gr.p0, fdp) < 1e-7, fl::to_string(c.act), " p0 err ", max_abs_diff(gr.p0, fdp));
  }
}

TEST_CASE("floater backprop chunks many intervals and still equals finite differences") {
  // L = 100 positions at 5 substeps x 4 stages x 1 block = 20 rows per interval: the stages are
  // recomputed and the weight gradient accumulated in chunks of 64 intervals (1280 stacked
  // rows), so a chunk boundary is crossed. Tolerance as above (1e-7; here |L| ~ 60).
  const std::size_t d = 3, N = 1, L = 100;
  auto m = random_mlp<double>(d, 3, activation::tanh, 111, true, true, 1.5);
  auto p0 = random_table<double>(N, d, 112);
  const auto G = upstream(N, L, d, 113);
  fl::encoder<double> enc(m, p0);
  fl::gradient_info info;
  const auto gr = enc.backprop(G, &info);
  CHECK(info.stored_rows == 1280);
  const auto fdr = finite_differences(m, p0, fl::options{}, G, 1e-5);
  const posenc::vector<double>& fd = fdr.first;
  const posenc::table<double>& fdp = fdr.second;
  CHECK(max_abs_diff(fl::flatten(gr.flow), fd) < 1e-7);
  CHECK(max_abs_diff(gr.p0, fdp) < 1e-7);
}

TEST_CASE("floater continuous adjoint converges to backprop as the step shrinks") {
  // Both approximate the exact continuous gradient with O(h^4) error (4th-order scheme), so
  // their difference falls ~16x per halving of h. Checked: differences decrease monotonically
  // and fall by > 8x per halving (observed 16-36x); with 16 substeps (h = 0.0125, gradients of
  // size ~10) the two agree to 1e-6.
  const std::size_t d = 4, hidden = 5, N = 2, L = 6;
  auto m = random_mlp<double>(d, hidden, activation::tanh, 121, true, true, 3.0);
  auto p0 = random_table<double>(N, d, 122);
  const auto G = upstream(N, L, d, 123);
  std::vector<double> diffs;
  for (std::size_t k : {1, 2, 4, 8, 16}) {
    fl::options opt;
    opt.delta = 0.2;
    opt.substeps = k;
    fl::encoder<double> enc(m, p0, opt);
    const auto a = enc.backprop(G);
    const auto b = enc.adjoint(G);
    diffs.push_back(std::max(max_abs_diff(fl::flatten(a.flow), fl::flatten(b.flow)), max_abs_diff(a.p0, b.p0)));
    MESSAGE("substeps ", k, ": |backprop - adjoint| = ", diffs.back());
  }
  for (std::size_t i = 1; i < diffs.size(); ++i) CHECK(diffs[i] * 8 < diffs[i - 1]);
  CHECK(diffs.back() < 1e-6);
}

TEST_CASE("floater continuous adjoint equals finite differences of a finely integrated table") {
  // With 64 substeps the discretisation error (h^4 ~ 1e-10 relative) is below the finite
  // difference's own error: tolerance 1e-6 absolute. Also checks finer adjoint substeps on a
  // coarse forward grid (adjoint substeps are independent of the forward ones).
  const std::size_t d = 3, hidden = 3, N = 1, L = 4;
  auto m = random_mlp<double>(d, hidden, activation::gelu, 131, true, true, 2.0);
  auto p0 = random_table<double>(N, d, 132);
  const auto G = upstream(N, L, d, 133);
  fl::options opt;
  opt.delta = 0.1;
  opt.substeps = 64;
  fl::encoder<double> enc(m, p0, opt);
  const auto b = enc.adjoint(G);
  const auto fdr = finite_differences(m, p0, opt, G, 1e-5);
  const posenc::vector<double>& fd = fdr.first;
  const posenc::table<double>& fdp = fdr.second;
  CHECK(max_abs_diff(fl::flatten(b.flow), fd) < 1e-6);
  CHECK(max_abs_diff(b.p0, fdp) < 1e-6);
  fl::options coarse = opt;
  coarse.substeps = 2;
  fl::encoder<double> enc2(m, p0, coarse);
  const auto b2 = enc2.adjoint(G, 64);
  // the forward checkpoints are now O(h^4) = (0.05)^4 off, which limits the agreement: 1e-5
  CHECK(max_abs_diff(fl::flatten(b2.flow), fd) < 1e-5);
}

TEST_CASE("floater gradients agree with the generic ode backprop and adjoint drivers") {
  // The generic drivers run flow<T> through its vjp (flattened parameters): a second,
  // independently written discrete backprop (to rounding, 1e-12) and adjoint (same scheme and
  // steps, different stage bookkeeping: 1e-12).
  const std::size_t d = 4, hidden = 6, N = 3, L = 7;
  auto m = random_mlp<double>(d, hidden, activation::relu, 141);
  auto p0 = random_table<double>(N, d, 142);
  const auto G = upstream(N, L, d, 143);
  fl::options opt;
  opt.delta = 0.1;
  fl::encoder<double> enc(m, p0, opt);
  const auto a = enc.backprop(G);
  const auto b = enc.adjoint(G);

  std::vector<double> times;
  for (std::size_t i = 0; i < L; ++i) times.push_back(0.1 * static_cast<double>(i));
  std::vector<posenc::table<double>> dLdy(L, posenc::table<double>(N, d));
  for (std::size_t i = 0; i < L; ++i)
    for (std::size_t n = 0; n < N; ++n) dLdy[i].row(static_cast<Eigen::Index>(n)) = G[n].row(static_cast<Eigen::Index>(i));
  fl::flow<double> f(m);
  posenc::table<double> dy0;
  posenc::vector<double> dth = posenc::vector<double>::Zero(static_cast<Eigen::Index>(m.parameter_count()));
  posenc::ode::backprop(posenc::ode::schemes::rk4_38{}, f, p0, std::span<const double>(times),
                        posenc::ode::fixed_steps{5}, std::span<const posenc::table<double>>(dLdy), dy0, dth);
  CHECK(max_abs_diff(fl::flatten(a.flow), dth) < 1e-12);
  CHECK(max_abs_diff(a.p0, dy0) < 1e-12);
  posenc::vector<double> dth2 = posenc::vector<double>::Zero(dth.size());
  posenc::table<double> dy02;
  posenc::ode::adjoint(posenc::ode::schemes::rk4_38{}, f, p0, std::span<const double>(times),
                       posenc::ode::fixed_steps{5}, std::span<const posenc::table<double>>(dLdy), dy02, dth2);
  CHECK(max_abs_diff(fl::flatten(b.flow), dth2) < 1e-12);
  CHECK(max_abs_diff(b.p0, dy02) < 1e-12);
}

TEST_CASE("floater float gradients agree with double gradients") {
  // float accumulates ~1e-7 relative rounding per operation over a few hundred stage products:
  // 1e-4 relative to the gradient's max.
  const std::size_t d = 16, N = 2, L = 20;
  auto md = random_mlp<double>(d, 12, activation::relu, 151);
  auto p0 = random_table<double>(N, d, 152);
  fl::mlp<float> mf(d, 12);
  fl::unflatten<float>(fl::flatten(md).cast<float>(), mf);
  std::vector<posenc::table<float>> Gf;
  const auto G = upstream(N, L, d, 153);
  for (const auto& g : G) Gf.push_back(g.cast<float>());
  fl::encoder<double> ed(md, p0);
  fl::encoder<float> ef(mf, p0.cast<float>());
  const auto a = ed.backprop(G);
  const auto b = ef.backprop(Gf);
  const auto fa = fl::flatten(a.flow);
  CHECK(max_abs_diff(fa, fl::flatten(b.flow)) < 1e-4 * fa.cwiseAbs().maxCoeff());
  CHECK(max_abs_diff(a.p0, b.p0) < 1e-4 * a.p0.cwiseAbs().maxCoeff());
  // threads: same gradient to rounding
  fl::options o2;
  o2.threads = 2;
  fl::encoder<double> e2(md, p0, o2);
  const auto c = e2.backprop(G);
  CHECK(max_abs_diff(fa, fl::flatten(c.flow)) < 1e-12 * fa.cwiseAbs().maxCoeff());
}

TEST_CASE("floater gradient of a single position is the upstream gradient itself") {
  // L = 1: P = p(0), so dL/dp0 = G[0] and dL/dtheta = 0 (exactly).
  auto m = random_mlp<double>(3, 3, activation::relu, 161);
  auto p0 = random_table<double>(2, 3, 162);
  fl::encoder<double> enc(m, p0);
  const auto G = upstream(2, 1, 3, 163);
  const auto a = enc.backprop(G);
  CHECK(a.p0.row(0) == G[0].row(0));
  CHECK(a.p0.row(1) == G[1].row(0));
  CHECK(fl::flatten(a.flow).cwiseAbs().maxCoeff() == 0.0);
  const auto b = enc.adjoint(G);
  CHECK(b.p0.row(1) == G[1].row(0));
}
