// SPDX-License-Identifier: MIT
// FLOATER reproduces the sinusoidal encoding (paper section 3.2 and eq. 9): through the bias
// form with h == 0 (exactly), and as the flow of an MLP whose h equals A p exactly (identity
// activation, or relu(x) - relu(-x) with hidden = 2d), compared with the closed-form table.
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include <posenc/floater.hpp>
#include <posenc/sinusoidal.hpp>

#include "floater/common.hpp"

using namespace floater_test;
namespace fl = posenc::floater;
namespace sn = posenc::sinusoidal;

TEST_CASE("floater bias form with zero dynamics and zero p0 is the base table bitwise") {
  // h == 0 and p(0) == 0 give a bias of exact zeros (every stage is 0 * h), so base + 0 = base
  // bit for bit: the warm start of a pretrained Transformer (eqs. 11-13) changes nothing.
  const std::size_t d = 32, N = 18, L = 50;
  for (auto lay : {sn::layout::interleaved, sn::layout::half}) {
    sn::options so;
    so.layout = lay;
    fl::biased_encoder<double> enc(fl::zero_encoder<double>(d, 0, N),
                                   [so](std::size_t len, std::size_t dd) { return sn::table<double>(len, dd, so); });
    const auto ref = sn::table<double>(L, d, so);
    for (std::size_t n = 0; n < N; n += 5) CHECK(max_abs_diff(enc.block_table(n, L), ref) == 0.0);
    // with no base the table is all zeros
    fl::biased_encoder<float> none(fl::zero_encoder<float>(d, 7, 2));
    CHECK(none.block_table(1, 9).cwiseAbs().maxCoeff() == 0.0f);
  }
  // small-scale init (paper 4.4) starts near the base. From p = 0 the bias is dominated by the
  // time column of layer 2: b(t) ~ t^2/2 * w2_t, with |w2_t| < 4 sigma = 4e-3 * sqrt(2/(2d+1)) ~
  // 7e-4 and t <= 0.49: |bias| < 1e-4.
  std::mt19937_64 rng(5);
  fl::mlp<double> m(d);
  fl::init_small(m, rng, 1e-3);
  fl::biased_encoder<double> warm(fl::encoder<double>(m, posenc::table<double>::Zero(2, d)),
                                  [](std::size_t len, std::size_t dd) { return sn::table<double>(len, dd); });
  CHECK(max_abs_diff(warm.block_table(0, L), sn::table<double>(L, d)) < 1e-4);
}

TEST_CASE("floater with h = A p by an identity MLP reproduces the sinusoidal table") {
  // dp/dt = A p with A the generator of the rotations (sinusoidal::generator) and p(0) = PE(0)
  // has the exact solution PE(t); positions t_i = i * Delta and the closed-form table at the same
  // positions (position_step = Delta). RK 3/8 with Delta = 0.1, 20 substeps: the largest angle per
  // step is 0.005 rad, local error ~ (0.005)^5 / 120, over 63 * 20 steps: far below 1e-9.
  const std::size_t d = 16, L = 64;
  const double delta = 0.1;
  sn::options so;
  so.position_step = delta;
  const auto A = sn::generator<double>(d, so);
  fl::mlp<double> m(d, d, activation::identity, false, false);
  m.w1 = A;
  m.w2 = posenc::matrix<double>::Identity(d, d);
  fl::options opt;
  opt.delta = delta;
  opt.substeps = 20;
  const auto ref = sn::table<double>(L, d, so);
  fl::encoder<double> enc(m, ref.topRows(1), opt);
  CHECK(max_abs_diff(enc.block_table(0, L), ref) < 1e-9);
}

TEST_CASE("floater with h = relu(A p) - relu(-A p) (hidden = 2d) reproduces the sinusoidal table") {
  // W1 = [A; -A], W2 = [I, -I]: h = relu(Ap) - relu(-Ap) = Ap exactly, so the same ODE as above.
  // Also in the [sin | cos] layout and in float (float rounding over 63 * 20 steps: 1e-5).
  const std::size_t d = 12, L = 40;
  const double delta = 0.1;
  for (auto lay : {sn::layout::interleaved, sn::layout::half}) {
    sn::options so;
    so.position_step = delta;
    so.layout = lay;
    const auto A = sn::generator<double>(d, so);
    fl::mlp<double> m(d, 2 * d, activation::relu, false, false);
    m.w1.topRows(d) = A;
    m.w1.bottomRows(d) = -A;
    m.w2.leftCols(d) = posenc::matrix<double>::Identity(d, d);
    m.w2.rightCols(d) = -posenc::matrix<double>::Identity(d, d);
    fl::options opt;
    opt.delta = delta;
    opt.substeps = 20;
    const auto ref = sn::table<double>(L, d, so);
    fl::encoder<double> enc(m, ref.topRows(1), opt);
    CHECK(max_abs_diff(enc.block_table(0, L), ref) < 1e-9);
    fl::mlp<float> mf(d, 2 * d, activation::relu, false, false);
    fl::unflatten<float>(fl::flatten(m).cast<float>(), mf);
    fl::encoder<float> ef(mf, ref.topRows(1).cast<float>(), opt);
    CHECK(max_abs_diff(ef.block_table(0, L), ref) < 1e-5);
  }
}
