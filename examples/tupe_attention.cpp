// SPDX-License-Identifier: MIT
// One TUPE-R self-attention layer from C++: the positional term is computed once per sequence
// length by a cache that every layer shares, then added to the word logits of each layer; a
// padding mask hides the last tokens. A sinusoidal table serves as P (any table works). (The
// positional term itself, its [CLS] reset and a heatmap: examples/tupe_positional.cpp.)
#include <cstdio>
#include <vector>

#include <posenc/sinusoidal.hpp>
#include <posenc/tupe.hpp>

int main() {
  // [config]
  posenc::tupe::config cfg;  // defaults: reference scale 1/sqrt(2 d/H), TUPE-R, reference [CLS] reset
  cfg.d = 64;
  cfg.heads = 4;
  const Eigen::Index max_len = 64, n = 48;

  // Parameters as the reference module names them; P is a sinusoidal table here (max_len + 1
  // rows: the reference reset reads one extra row) and U^Q = U^K = I to make the heads readable.
  auto params = posenc::tupe::make_parameters<double>(cfg, max_len, /*seed=*/42);
  params.pos = posenc::sinusoidal::table<double>(static_cast<std::size_t>(max_len + 1), 64);
  params.pos_q_weight.setIdentity();
  params.pos_k_weight.setIdentity();
  // [config]

  // [layers]
  posenc::tupe::positional_bias_cache<double> cache(cfg, params);
  std::vector<posenc::tupe::attention_parameters<double>> layers;
  for (std::uint64_t l = 0; l < 2; ++l) layers.push_back(posenc::tupe::make_attention_parameters<double>(cfg.d, 7 + l));

  posenc::matrix<double> x = posenc::matrix<double>::Random(n, cfg.d);  // word embeddings
  bool padding[n] = {};
  for (Eigen::Index j = n - 6; j < n; ++j) padding[j] = true;  // the last 6 tokens are padding

  posenc::tupe::head_stack<double> probs;
  for (const auto& w : layers) {
    const auto bias = cache.get(n);  // computed on the first layer, reused afterwards (a snapshot)
    x = posenc::tupe::attention_forward(cfg, w, x, *bias, std::span<const bool>(padding, n), &probs);
  }
  // [layers]

  // Sanity checks: one computation for both layers, finite output, rows of the attention sum
  // to one, padded keys get exactly zero weight.
  bool ok = cache.computations() == 1 && x.allFinite();
  for (Eigen::Index h = 0; h < cfg.heads; ++h) {
    const auto A = probs.head(h);
    ok = ok && ((A.rowwise().sum().array() - 1.0).abs().maxCoeff() < 1e-12);
    ok = ok && (A.rightCols(6).cwiseAbs().maxCoeff() == 0.0);
  }
  std::printf("TUPE-R layer: n = %ld, d = %ld, H = %ld; positional term computed %zu time(s) for %zu layers\n",
              static_cast<long>(n), static_cast<long>(cfg.d), static_cast<long>(cfg.heads), cache.computations(),
              layers.size());
  std::printf("%s\n", ok ? "sanity checks passed" : "SANITY CHECK FAILED");
  return ok ? 0 : 1;
}
