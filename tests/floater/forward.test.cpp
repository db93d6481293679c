// SPDX-License-Identifier: MIT
// FLOATER forward tables: against an independent naive reference, the generic ODE engine,
// fresh-vs-extended computations, batched-vs-single blocks, threads, float-vs-double, grids.
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include <posenc/floater.hpp>
#include <posenc/ode.hpp>

#include "floater/common.hpp"

using namespace floater_test;
namespace fl = posenc::floater;

namespace {
std::vector<double> row_vec(const posenc::table<double>& p, Eigen::Index r) {
  return std::vector<double>(p.row(r).data(), p.row(r).data() + p.cols());
}
}  // namespace

TEST_CASE("floater table equals a naive per-block 3/8-rule reference with concatenated time") {
  // Independent reference: scalar loops on the nn.Linear layout [W | w_t] with [p; t] built
  // explicitly, RK 3/8 written by hand. Same arithmetic up to summation order: 1e-12 (double,
  // |P| ~ 1, 40 steps of O(1) work each).
  for (activation act : {activation::relu, activation::tanh, activation::gelu, activation::softplus, activation::identity}) {
    for (bool t1 : {true, false}) {
      const std::size_t d = 6, hidden = 5, N = 3, L = 9;
      const bool t2 = !t1 || act == activation::relu;
      auto m = random_mlp<double>(d, hidden, act, 11, t1, t2);
      auto p0 = random_table<double>(N, d, 12);
      fl::options opt;
      opt.delta = 0.1;  // the paper's value, large enough that h matters
      fl::encoder<double> enc(m, p0, opt);
      const auto tabs = enc.tables(L);
      REQUIRE(tabs.size() == N);
      std::vector<double> times;
      for (std::size_t i = 0; i < L; ++i) times.push_back(0.1 * static_cast<double>(i));
      for (std::size_t n = 0; n < N; ++n) {
        const auto ref = naive_table(m, row_vec(p0, static_cast<Eigen::Index>(n)), times, 5);
        double err = 0;
        for (std::size_t i = 0; i < L; ++i)
          for (std::size_t j = 0; j < d; ++j)
            err = std::max(err, std::abs(ref[i][j] - tabs[n](static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(j))));
        CHECK_MESSAGE(err < 1e-12, "activation ", fl::to_string(act), " time1 ", t1, " block ", n, " err ", err);
        // position 0 is p(0) itself (the reference returns y0 at t_0)
        CHECK((tabs[n].row(0) - p0.row(static_cast<Eigen::Index>(n))).cwiseAbs().maxCoeff() == 0.0);
      }
    }
  }
}

TEST_CASE("floater flow runs in the generic engine and matches the encoder bitwise") {
  // Same stepper, same substep arithmetic (t0 + s h, last step lands on t1): identical bits.
  const std::size_t d = 8, N = 4, L = 12;
  auto m = random_mlp<double>(d, 10, activation::relu, 3);
  auto p0 = random_table<double>(N, d, 4);
  fl::encoder<double> enc(m, p0);  // reference defaults: delta 0.01, 5 substeps, rk4_38
  const auto tabs = enc.tables(L);
  fl::flow<double> f(m);
  posenc::table<double> y = p0;
  std::vector<double> times;
  for (std::size_t i = 0; i < L; ++i) times.push_back(static_cast<double>(i) * 0.01);
  double worst = 0;
  posenc::ode::integrate(posenc::ode::schemes::rk4_38{}, f, y, std::span<const double>(times),
                         posenc::ode::fixed_steps{5}, [&](std::size_t i, double, const posenc::table<double>& s) {
                           for (std::size_t n = 0; n < N; ++n)
                             worst = std::max(worst, (s.row(static_cast<Eigen::Index>(n)) -
                                                      tabs[n].row(static_cast<Eigen::Index>(i)))
                                                         .cwiseAbs()
                                                         .maxCoeff());
                         });
  CHECK(worst == 0.0);
}

TEST_CASE("floater extension integrates only new intervals and equals a fresh computation") {
  // The extension continues from the cached last state with the same steps, so the result is
  // bitwise equal to computing the long table at once (tolerance 0).
  const std::size_t d = 5, N = 2;
  auto m = random_mlp<double>(d, 7, activation::tanh, 21);
  auto p0 = random_table<double>(N, d, 22);
  fl::encoder<double> fresh(m, p0), grown(m, p0), stepped(m, p0);
  const auto full = fresh.tables(40);
  (void)grown.tables(10);
  CHECK(grown.size() == 10);
  const auto ext = grown.tables(40);
  CHECK(grown.size() == 40);
  for (int i = 1; i < 40; ++i) stepped.step();  // incremental decoding, one interval at a time
  for (std::size_t n = 0; n < N; ++n) {
    CHECK(max_abs_diff(full[n], ext[n]) == 0.0);
    CHECK(max_abs_diff(full[n], stepped.block_table(n, 40)) == 0.0);
  }
  // a shorter request is a copy of the cache: nothing is recomputed
  const auto short_tab = grown.block_table(1, 7);
  CHECK(grown.size() == 40);
  CHECK(max_abs_diff(short_tab, full[1].topRows(7)) == 0.0);
}

TEST_CASE("floater batched blocks equal blocks integrated one at a time") {
  // Rows of a batch never mix: N = 5 at once vs five N = 1 encoders. The products run as GEMM
  // vs GEMV, so summation order may differ: 1e-13 (double, O(1) values).
  const std::size_t d = 7, N = 5, L = 15;
  auto m = random_mlp<double>(d, 9, activation::gelu, 31);
  auto p0 = random_table<double>(N, d, 32);
  fl::encoder<double> all(m, p0);
  const auto tabs = all.tables(L);
  for (std::size_t n = 0; n < N; ++n) {
    fl::encoder<double> one(m, p0.row(static_cast<Eigen::Index>(n)));
    CHECK(max_abs_diff(one.block_table(0, L), tabs[n]) < 1e-13);
  }
}

TEST_CASE("floater with two threads equals one thread") {
  // Threads split the output columns of each product; per column the arithmetic is the same up to
  // the BLAS kernel's blocking: 1e-13 (double).
  const std::size_t d = 40, N = 3, L = 10;
  auto m = random_mlp<double>(d, 36, activation::relu, 41);
  auto p0 = random_table<double>(N, d, 42);
  fl::options o1, o2;
  o2.threads = 2;
  fl::encoder<double> a(m, p0, o1), b(m, p0, o2);
  for (std::size_t n = 0; n < N; ++n) CHECK(max_abs_diff(a.block_table(n, L), b.block_table(n, L)) < 1e-13);
  // and one block (GEMV path)
  fl::encoder<double> c(m, p0.topRows(1), o1), e(m, p0.topRows(1), o2);
  CHECK(max_abs_diff(c.block_table(0, L), e.block_table(0, L)) < 1e-13);
  // a copied encoder gets its own pool and the same results
  fl::encoder<double> copy = b;
  CHECK(max_abs_diff(copy.block_table(2, L + 3), a.block_table(2, L + 3)) < 1e-13);
}

TEST_CASE("floater float tables agree with double tables") {
  // float rounding over 5 * 30 steps of O(1) increments: 1e-5 is ~100 float ulps at |P| ~ 1.
  const std::size_t d = 16, N = 2, L = 30;
  auto md = random_mlp<double>(d, 16, activation::relu, 51);
  auto p0d = random_table<double>(N, d, 52);
  fl::mlp<float> mf(d, 16);
  mf.w1 = md.w1.cast<float>(); mf.w1_t = md.w1_t.cast<float>(); mf.b1 = md.b1.cast<float>();
  mf.w2 = md.w2.cast<float>(); mf.w2_t = md.w2_t.cast<float>(); mf.b2 = md.b2.cast<float>();
  fl::options o;
  o.delta = 0.1;
  fl::encoder<double> ed(md, p0d, o);
  fl::encoder<float> ef(mf, p0d.cast<float>(), o);
  for (std::size_t n = 0; n < N; ++n) CHECK(max_abs_diff(ef.block_table(n, L), ed.block_table(n, L)) < 1e-5);
}

TEST_CASE("floater explicit non-equidistant grid matches the naive reference and extends") {
  // Hierarchical/time-series positions: any strictly increasing grid; 1e-12 as above.
  const std::size_t d = 4;
  auto m = random_mlp<double>(d, 6, activation::tanh, 61);
  auto p0 = random_table<double>(1, d, 62);
  const std::vector<double> times{0.0, 0.05, 0.07, 0.2, 0.21, 0.5, 0.8};
  fl::options o;
  o.times = {times.begin(), times.begin() + 4};
  o.substeps = 3;
  fl::encoder<double> enc(m, p0, o);
  CHECK(enc.max_positions() == 4);
  CHECK_THROWS_AS((void)enc.block_table(0, 5), posenc::invalid_argument);
  enc.append_times(std::span<const double>(times.data() + 4, 3));
  const auto tab = enc.block_table(0, times.size());
  const auto ref = naive_table(m, row_vec(p0, 0), times, 3);
  double err = 0;
  for (std::size_t i = 0; i < times.size(); ++i)
    for (std::size_t j = 0; j < d; ++j) err = std::max(err, std::abs(ref[i][j] - tab(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(j))));
  CHECK(err < 1e-12);
  const std::vector<double> bad{0.8};
  CHECK_THROWS_AS(enc.append_times(bad), posenc::grid_error);
}

TEST_CASE("floater activations and their derivatives match closed forms and finite differences") {
  // Values vs the scalar std:: formulas (1e-15 relative); derivatives vs central differences with
  // eps = 1e-6 (truncation ~1e-12, rounding ~1e-10): 1e-8. Points avoid relu's kink at 0.
  const std::vector<double> zs{-25.0, -3.1, -0.7, -1e-3, 2e-3, 0.4, 1.3, 4.0, 19.5, 20.5, 30.0};
  for (activation act : {activation::relu, activation::tanh, activation::gelu, activation::softplus, activation::identity}) {
    posenc::matrix<double> z(1, static_cast<Eigen::Index>(zs.size())), out(1, z.cols());
    for (std::size_t i = 0; i < zs.size(); ++i) z(0, static_cast<Eigen::Index>(i)) = zs[i];
    fl::detail::activate(act, z, out);
    posenc::matrix<double> g = posenc::matrix<double>::Ones(1, z.cols());
    fl::detail::multiply_derivative(act, z, g);
    for (std::size_t i = 0; i < zs.size(); ++i) {
      const double v = sigma(act, zs[i]);
      CHECK(std::abs(out(0, static_cast<Eigen::Index>(i)) - v) <= 1e-15 * std::max(1.0, std::abs(v)));
      if (act == activation::softplus && std::abs(zs[i] - 20.0) < 1) continue;  // PyTorch's threshold switch
      const double e = 1e-6, fd = (sigma(act, zs[i] + e) - sigma(act, zs[i] - e)) / (2 * e);
      CHECK_MESSAGE(std::abs(g(0, static_cast<Eigen::Index>(i)) - fd) < 1e-8, fl::to_string(act), " z = ", zs[i]);
    }
    CHECK(fl::activation_from_string(fl::to_string(act)) == act);
  }
  CHECK_THROWS_AS((void)fl::activation_from_string("selu"), posenc::invalid_argument);
}

TEST_CASE("floater nn.Linear layout round-trips and the initialisers follow PyTorch's fan rules") {
  // Xavier-normal std = sqrt(2 / (fan_in + fan_out)) with fan_in = d + 1 (time column): the
  // sample std over 64 x 65 weights is within 5% (4160 samples: relative sd of the estimate 1.1%).
  const std::size_t d = 64;
  fl::mlp<double> m(d, 64);
  std::mt19937_64 rng(7);
  fl::init_xavier_normal(m, rng);
  const auto W1 = m.linear1_weight();
  CHECK(W1.rows() == 64);
  CHECK(W1.cols() == 65);
  const double sd = std::sqrt(W1.array().square().mean());
  CHECK(std::abs(sd / std::sqrt(2.0 / (65 + 64)) - 1) < 0.05);
  CHECK(m.b1.cwiseAbs().maxCoeff() == 0.0);
  fl::mlp<double> m2(d, 64);
  m2.set_linear1_weight(W1);
  m2.set_linear2_weight(m.linear2_weight());
  CHECK(max_abs_diff(m2.w1, m.w1) == 0.0);
  CHECK(max_abs_diff(m2.w2_t, m.w2_t) == 0.0);
  CHECK_THROWS_AS(m2.set_linear1_weight(m.w1), posenc::shape_error);  // [64, 64] lacks the time column
  // xavier_uniform of the [3, n_layers, d] bank: bound sqrt(6 / (n_layers d + 3 d))
  const auto p0 = fl::xavier_uniform<double>({3, 6, 32}, rng);
  CHECK(p0.rows() == 18);
  CHECK(p0.cols() == 32);
  const double bound = std::sqrt(6.0 / (6 * 32 + 3 * 32));
  CHECK(p0.cwiseAbs().maxCoeff() <= bound);
  CHECK(p0.cwiseAbs().maxCoeff() > 0.9 * bound);
  // small init: scale 1e-2 of Xavier
  fl::mlp<double> ms(d, 64);
  fl::init_small(ms, rng, 1e-2);
  CHECK(std::sqrt(ms.w1.array().square().mean()) < 0.05 * sd);
  // flatten / unflatten
  auto v = fl::flatten(m);
  CHECK(static_cast<std::size_t>(v.size()) == m.parameter_count());
  fl::mlp<double> m3(d, 64);
  fl::unflatten(v, m3);
  CHECK(max_abs_diff(m3.linear2_weight(), m.linear2_weight()) == 0.0);
}
