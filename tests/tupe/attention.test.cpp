// SPDX-License-Identifier: MIT
// One TUPE attention layer: logits, masked softmax and the whole layer against a naive
// long-double transcription of fairseq's multi_head_attention_forward (as in guolinke/TUPE).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <vector>

#include "tupe/naive_reference.hpp"

using namespace posenc::tupe;
using tupe_test::ld;

namespace {

/// multi_head_attention_forward for one sequence, eval mode, written as loops.
std::vector<std::vector<ld>> naive_layer(const config& cfg, const attention_parameters<double>& w,
                                         const posenc::matrix<double>& x, const head_stack<double>& bias,
                                         const std::vector<bool>& mask, std::vector<ld>* probs_out) {
  const Index n = x.rows(), d = cfg.d, H = cfg.heads, dh = d / H;
  const ld scaling = 1.0L / std::sqrt(static_cast<ld>(dh) * 2.0L);
  std::vector<std::vector<ld>> qkv(n, std::vector<ld>(3 * d));
  for (Index t = 0; t < n; ++t)
    for (Index o = 0; o < 3 * d; ++o) {
      ld s = w.in_proj_bias[o];
      for (Index c = 0; c < d; ++c) s += ld(x(t, c)) * ld(w.in_proj_weight(o, c));
      qkv[t][o] = s;
    }
  std::vector<std::vector<ld>> ctx(n, std::vector<ld>(d, 0));
  if (probs_out) probs_out->assign(static_cast<std::size_t>(H * n * n), 0);
  for (Index h = 0; h < H; ++h)
    for (Index i = 0; i < n; ++i) {
      std::vector<ld> a(n);
      ld m = -std::numeric_limits<ld>::infinity();
      for (Index j = 0; j < n; ++j) {
        ld s = 0;
        for (Index t = 0; t < dh; ++t) s += qkv[i][h * dh + t] * scaling * qkv[j][d + h * dh + t];
        a[j] = s + ld(bias(h, i, j));
        if (!mask.empty() && mask[j]) a[j] = -std::numeric_limits<ld>::infinity();
        m = std::max(m, a[j]);
      }
      ld z = 0;
      for (Index j = 0; j < n; ++j) z += std::exp(a[j] - m);
      for (Index j = 0; j < n; ++j) {
        const ld pr = std::exp(a[j] - m) / z;
        if (probs_out) (*probs_out)[static_cast<std::size_t>((h * n + i) * n + j)] = pr;
        for (Index t = 0; t < dh; ++t) ctx[i][h * dh + t] += pr * qkv[j][2 * d + h * dh + t];
      }
    }
  std::vector<std::vector<ld>> out(n, std::vector<ld>(d));
  for (Index t = 0; t < n; ++t)
    for (Index o = 0; o < d; ++o) {
      ld s = w.out_proj_bias[o];
      for (Index c = 0; c < d; ++c) s += ctx[t][c] * ld(w.out_proj_weight(o, c));
      out[t][o] = s;
    }
  return out;
}

attention_parameters<double> random_attention(Index d, unsigned seed) {
  auto w = make_attention_parameters<double>(d, seed);
  std::srand(seed);
  w.in_proj_weight = posenc::matrix<double>::Random(3 * d, d) * 0.5;
  w.in_proj_bias = posenc::vector<double>::Random(3 * d);
  w.out_proj_weight = posenc::matrix<double>::Random(d, d);
  w.out_proj_bias = posenc::vector<double>::Random(d);
  return w;
}

}  // namespace

TEST_CASE("tupe attention layer equals the naive multi_head_attention_forward") {
  // TUPE-R with the reference reset, 3 heads, a padding mask on the last two keys. Tolerance
  // 1e-12 relative: double against long double through three d-term products and a softmax.
  config cfg;
  cfg.d = 12;
  cfg.heads = 3;
  const Index n = 10;
  const auto p = tupe_test::random_parameters<double>(cfg, n, 71);
  positional_bias_cache<double> cache(cfg, p);
  const auto& bias = *cache.get(n);
  const auto w = random_attention(cfg.d, 73);
  const posenc::matrix<double> x = posenc::matrix<double>::Random(n, cfg.d);
  std::vector<bool> mask(n, false);
  mask[8] = mask[9] = true;
  std::unique_ptr<bool[]> m(new bool[n]);
  for (Index j = 0; j < n; ++j) m[j] = mask[j];
  head_stack<double> probs;
  const auto out = attention_forward(cfg, w, x, bias, std::span<const bool>(m.get(), n), &probs);
  std::vector<ld> want_probs;
  const auto want = naive_layer(cfg, w, x, bias, mask, &want_probs);
  ld err = 0, scale = 0;
  for (Index t = 0; t < n; ++t)
    for (Index o = 0; o < cfg.d; ++o) {
      err = std::max(err, std::abs(ld(out(t, o)) - want[t][o]));
      scale = std::max(scale, std::abs(want[t][o]));
    }
  CHECK(err <= 1e-12L * (1 + scale));
  for (Index k = 0; k < probs.flat().size(); ++k)
    CHECK(std::abs(ld(probs.flat()[k]) - want_probs[static_cast<std::size_t>(k)]) <= 1e-13L);
  for (Index h = 0; h < cfg.heads; ++h) {
    CHECK(probs.head(h).col(8).cwiseAbs().maxCoeff() == 0.0);  // masked keys get exactly 0
    CHECK((probs.head(h).rowwise().sum().array() - 1.0).abs().maxCoeff() < 1e-14);
  }
  // without a mask: same as the naive layer without a mask
  const auto out2 = attention_forward(cfg, w, x, bias);
  const auto want2 = naive_layer(cfg, w, x, bias, {}, nullptr);
  for (Index t = 0; t < n; ++t)
    for (Index o = 0; o < cfg.d; ++o) CHECK(std::abs(ld(out2(t, o)) - want2[t][o]) <= 1e-12L * (1 + scale));
}

TEST_CASE("tupe attention logits are word logits plus the positional term") {
  // logits - bias = s q_h k_h^T, checked with the bias replaced by zeros (exact: adding 0).
  config cfg;
  cfg.d = 8;
  cfg.heads = 2;
  const Index n = 6;
  const posenc::matrix<double> q = posenc::matrix<double>::Random(n, 8), k = posenc::matrix<double>::Random(n, 8);
  head_stack<double> bias(2, n), zero(2, n), a, b;
  bias.flat().setRandom();
  zero.flat().setZero();
  attention_logits<double>(cfg, q, k, bias, a);
  attention_logits<double>(cfg, q, k, zero, b);
  CHECK((a.flat() - b.flat() - bias.flat()).cwiseAbs().maxCoeff() < 1e-14);
  for (Index h = 0; h < 2; ++h)
    for (Index i = 0; i < n; ++i)
      for (Index j = 0; j < n; ++j) {
        double s = 0;
        for (Index t = 0; t < 4; ++t) s += q(i, h * 4 + t) * k(j, h * 4 + t);
        CHECK(std::abs(b(h, i, j) - s / std::sqrt(8.0)) < 1e-14);
      }
}

TEST_CASE("tupe masked softmax is stable for huge logits and defines fully masked rows as zero") {
  // Logits of +-1e4 (float) and +-1e300 (double) would overflow exp without the max shift; the
  // expected values are closed forms: two equal maxima -> 1/2 each, the rest exp(-huge) = 0.
  head_stack<float> L(1, 4);
  L.head(0) << 1e4f, 1e4f, -1e4f, 0.0f,  //
      -3e4f, 2e4f, 2e4f, 2e4f,           //
      1.0f, 2.0f, 3.0f, 4.0f,            //
      5.0f, 5.0f, 5.0f, 5.0f;
  const bool mask_none[4] = {false, false, false, false};
  masked_softmax(L, std::span<const bool>(mask_none, 4));
  CHECK(L(0, 0, 0) == doctest::Approx(0.5f));
  CHECK(L(0, 0, 1) == doctest::Approx(0.5f));
  CHECK(L(0, 0, 2) == 0.0f);
  CHECK(L(0, 1, 1) == doctest::Approx(1.0f / 3));
  // row 2: softmax(1,2,3,4) closed form
  double z = 0;
  for (int j = 1; j <= 4; ++j) z += std::exp(double(j));
  for (int j = 0; j < 4; ++j) CHECK(L(0, 2, j) == doctest::Approx(std::exp(double(j + 1)) / z).epsilon(1e-6));
  CHECK(L(0, 3, 2) == doctest::Approx(0.25f));

  head_stack<double> D(2, 3);
  D.flat() << 1e300, -1e300, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 1e308, 1e308, -1e308, 0, 0, 0;
  const bool all_masked[3] = {true, true, true};
  auto E = D;
  masked_softmax(E, std::span<const bool>(all_masked, 3));
  CHECK(E.flat().cwiseAbs().maxCoeff() == 0.0);  // defined: all-zero weights, never NaN
  const bool some[3] = {false, true, false};
  masked_softmax(D, std::span<const bool>(some, 3));
  CHECK(D.flat().allFinite());
  CHECK(D(0, 0, 0) == 1.0);
  CHECK(D(0, 0, 1) == 0.0);
  CHECK(D(1, 2, 0) == doctest::Approx(0.5));  // (0, masked, 0)
  // key 1 masked: row (4,5,6) -> softmax over (4, 6)
  CHECK(D(0, 1, 2) == doctest::Approx(std::exp(2.0) / (1 + std::exp(2.0))));
}

TEST_CASE("tupe masked softmax rejects NaN and +inf logits and bad masks") {
  head_stack<double> L(1, 2);
  L.flat() << 0, std::numeric_limits<double>::quiet_NaN(), 0, 0;
  CHECK_THROWS_AS(masked_softmax(L), posenc::non_finite_error);
  L.flat() << 0, std::numeric_limits<double>::infinity(), 0, 0;
  CHECK_THROWS_AS(masked_softmax(L), posenc::non_finite_error);
  L.flat() << 0, std::numeric_limits<double>::quiet_NaN(), 0, 0;
  const bool m[2] = {false, true};  // the NaN sits on a masked key: ignored
  CHECK_NOTHROW(masked_softmax(L, std::span<const bool>(m, 2)));
  CHECK(L(0, 0, 0) == 1.0);
  CHECK_THROWS_AS(masked_softmax(L, std::span<const bool>(m, 1)), posenc::shape_error);
  CHECK_THROWS_AS(masked_softmax(L, std::vector<bool>{true, false, true}), posenc::shape_error);
}

TEST_CASE("tupe attention layer in float agrees with double") {
  // The float layer against the double layer on the same (rounded) inputs: 1e-4 relative,
  // float accuracy through three d-term products and the softmax.
  config cfg;
  cfg.d = 16;
  cfg.heads = 4;
  const Index n = 12;
  const auto pd = tupe_test::random_parameters<double>(cfg, n, 79);
  const auto wd = random_attention(cfg.d, 83);
  const posenc::matrix<double> xd = posenc::matrix<double>::Random(n, cfg.d);
  const auto bd = positional_bias(cfg, pd, n);
  head_stack<float> bf(cfg.heads, n);
  for (Index i = 0; i < bd.flat().size(); ++i) bf.flat()[i] = static_cast<float>(bd.flat()[i]);
  attention_parameters<float> wf{wd.in_proj_weight.cast<float>(), wd.in_proj_bias.cast<float>(),
                                 wd.out_proj_weight.cast<float>(), wd.out_proj_bias.cast<float>()};
  const posenc::matrix<float> xf = xd.cast<float>();
  const auto od = attention_forward(cfg, wd, xd, bd);
  const auto of = attention_forward(cfg, wf, xf, bf);
  CHECK((od - of.cast<double>()).cwiseAbs().maxCoeff() <= 1e-4 * (1 + od.cwiseAbs().maxCoeff()));
}
