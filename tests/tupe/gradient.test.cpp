// SPDX-License-Identifier: MIT
// Gradients of L = sum_{h,i,j} G[h,i,j] bias[h,i,j] (G random) with respect to every parameter,
// against central finite differences of the forward pass in double, for every [CLS] mode, with
// and without the relative term and the projection biases.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "tupe/naive_reference.hpp"

using namespace posenc::tupe;

namespace {

double loss(const config& cfg, const parameters<double>& p, const head_stack<double>& G) {
  const auto b = positional_bias(cfg, p, G.size());
  return b.flat().dot(G.flat());
}

/// Central differences for every entry of the member selected by `get`, compared with `grad`.
/// Step 1e-5: truncation error ~ h^2 |L'''| ~ 1e-10 and cancellation ~ 1e-16 |L| / h ~ 1e-11
/// for the O(1) values here, so 1e-7 (relative to max(1, |g|)) leaves a wide margin.
template <class Get>
void check_member(const char* name, const config& cfg, const parameters<double>& p, const head_stack<double>& G,
                  Get get, const Eigen::Ref<const Eigen::MatrixXd>& grad) {
  auto q = p;
  auto& m = get(q);
  REQUIRE(grad.size() == m.size());
  const double h = 1e-5;
  double worst = 0;
  for (Index r = 0; r < m.rows(); ++r)
    for (Index c = 0; c < m.cols(); ++c) {
      const double keep = m(r, c);
      m(r, c) = keep + h;
      const double lp = loss(cfg, q, G);
      m(r, c) = keep - h;
      const double lm = loss(cfg, q, G);
      m(r, c) = keep;
      const double fd = (lp - lm) / (2 * h);
      const double g = grad(r, c);
      worst = std::max(worst, std::abs(fd - g) / std::max(1.0, std::abs(g)));
    }
  INFO("parameter " << name);
  CHECK(worst < 1e-7);
}

void check_all(const config& cfg, parameters<double> p, Index n, std::uint64_t seed) {
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<double> u(-1, 1);
  head_stack<double> G(cfg.heads, n);
  for (Index i = 0; i < G.flat().size(); ++i) G.flat()[i] = u(gen);
  const auto g = positional_bias_backward(cfg, p, G);
  // only the rows the sequence reads get a gradient: extend with zeros for the unused rows
  Eigen::MatrixXd gpos = Eigen::MatrixXd::Zero(p.pos.rows(), p.pos.cols());
  gpos.topRows(g.pos.rows()) = g.pos;
  REQUIRE(g.pos.rows() == cfg.rows_needed(n));
  check_member("pos", cfg, p, G, [](auto& q) -> auto& { return q.pos; }, gpos);
  check_member("pos_ln_weight", cfg, p, G, [](auto& q) -> auto& { return q.pos_ln_weight; }, g.pos_ln_weight);
  check_member("pos_ln_bias", cfg, p, G, [](auto& q) -> auto& { return q.pos_ln_bias; }, g.pos_ln_bias);
  check_member("pos_q_weight", cfg, p, G, [](auto& q) -> auto& { return q.pos_q_weight; }, g.pos_q_weight);
  check_member("pos_k_weight", cfg, p, G, [](auto& q) -> auto& { return q.pos_k_weight; }, g.pos_k_weight);
  if (p.pos_q_bias.size()) {
    check_member("pos_q_bias", cfg, p, G, [](auto& q) -> auto& { return q.pos_q_bias; }, g.pos_q_bias);
    check_member("pos_k_bias", cfg, p, G, [](auto& q) -> auto& { return q.pos_k_bias; }, g.pos_k_bias);
  } else {
    CHECK(g.pos_q_bias.size() == 0);
    CHECK(g.pos_k_bias.size() == 0);
  }
  if (cfg.relative)
    check_member("relative_attention_bias", cfg, p, G, [](auto& q) -> auto& { return q.relative_attention_bias; },
                 g.relative_attention_bias);
  else
    CHECK(g.relative_attention_bias.size() == 0);
  if (cfg.cls == cls_reset::free) {
    check_member("theta1", cfg, p, G, [](auto& q) -> auto& { return q.theta1; }, g.theta1);
    check_member("theta2", cfg, p, G, [](auto& q) -> auto& { return q.theta2; }, g.theta2);
  }
}

}  // namespace

TEST_CASE("tupe gradients match central finite differences for every parameter") {
  for (const cls_reset cls : {cls_reset::reference, cls_reset::free, cls_reset::off})
    for (const bool rel : {true, false}) {
      config cfg;
      cfg.d = 8;
      cfg.heads = 2;
      cfg.cls = cls;
      cfg.relative = rel;
      cfg.buckets = bucket_spec{8, 4, true};  // distances 0, 1 exact, 2-3 log, >= 4 clipped
      const Index n = 7;
      auto p = tupe_test::random_parameters<double>(cfg, 8, 41);
      INFO("cls " << int(cls) << " relative " << rel);
      check_all(cfg, p, n, 43);
    }
}

TEST_CASE("tupe gradients without projection biases and with the paper scale") {
  config cfg;
  cfg.d = 6;
  cfg.heads = 3;
  cfg.scale = scale_convention::paper;
  auto p = tupe_test::random_parameters<double>(cfg, 5, 47);
  p.pos_q_bias.resize(0);
  p.pos_k_bias.resize(0);
  check_all(cfg, p, 5, 53);
  check_all(cfg, p, 1, 59);  // n = 1: only the [CLS] entry
}

TEST_CASE("tupe gradient with respect to a table passed separately") {
  // The gradient for an external table (e.g. FLOATER output) equals the one computed with that
  // table stored in the parameters (exact: same arithmetic).
  config cfg;
  cfg.d = 8;
  cfg.heads = 2;
  auto p = tupe_test::random_parameters<double>(cfg, 6, 61);
  posenc::table<double> other = posenc::table<double>::Random(7, 8);
  head_stack<double> G(2, 6);
  G.flat().setRandom();
  const auto a = positional_bias_backward(cfg, p, other, G);
  p.pos = other;
  const auto b = positional_bias_backward(cfg, p, G);
  CHECK((a.pos - b.pos).cwiseAbs().maxCoeff() == 0.0);
  CHECK((a.pos_q_weight - b.pos_q_weight).cwiseAbs().maxCoeff() == 0.0);
}

TEST_CASE("tupe float gradients agree with the double gradients") {
  // Same parameters rounded to float: the float backward must agree with the double one to
  // float accuracy (2e-4 relative to the largest entry of each gradient: a few hundred ulps of
  // float through the d-term products of the backward pass).
  config cfg;
  cfg.d = 8;
  cfg.heads = 2;
  cfg.buckets = bucket_spec{8, 4, true};
  const auto pd = tupe_test::random_parameters<double>(cfg, 9, 67);
  parameters<float> pf;
  pf.pos = pd.pos.cast<float>();
  pf.pos_ln_weight = pd.pos_ln_weight.cast<float>();
  pf.pos_ln_bias = pd.pos_ln_bias.cast<float>();
  pf.pos_q_weight = pd.pos_q_weight.cast<float>();
  pf.pos_k_weight = pd.pos_k_weight.cast<float>();
  pf.pos_q_bias = pd.pos_q_bias.cast<float>();
  pf.pos_k_bias = pd.pos_k_bias.cast<float>();
  pf.relative_attention_bias = pd.relative_attention_bias.cast<float>();
  head_stack<double> Gd(2, 9);
  head_stack<float> Gf(2, 9);
  for (Index i = 0; i < Gd.flat().size(); ++i) {
    Gd.flat()[i] = std::sin(double(i));
    Gf.flat()[i] = static_cast<float>(Gd.flat()[i]);
  }
  const auto gd = positional_bias_backward(cfg, pd, Gd);
  const auto gf = positional_bias_backward(cfg, pf, Gf);
  auto close = [](const auto& a, const auto& b) {
    const double scale = a.cwiseAbs().maxCoeff();
    return (a - b.template cast<double>()).cwiseAbs().maxCoeff() <= 2e-4 * (1 + scale);
  };
  CHECK(close(gd.pos, gf.pos));
  CHECK(close(gd.pos_ln_weight, gf.pos_ln_weight));
  CHECK(close(gd.pos_ln_bias, gf.pos_ln_bias));
  CHECK(close(gd.pos_q_weight, gf.pos_q_weight));
  CHECK(close(gd.pos_k_weight, gf.pos_k_weight));
  CHECK(close(gd.pos_q_bias, gf.pos_q_bias));
  CHECK(close(gd.relative_attention_bias, gf.relative_attention_bias));
}
