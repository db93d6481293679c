// SPDX-License-Identifier: MIT
// A config.json as transformers 5 writes it (Gemma 3: rope_parameters keyed by layer type, linear
// x8 on the full-attention layers, theta 1e4 on the sliding ones): one plan per layer type, whose
// frequencies rotate q at explicit per-token positions (left padding: 0 0 0 1 2 ...).
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include <posenc/rotary.hpp>

int main() {
  namespace pr = posenc::rotary;
  // [rope-config-v5]
  const pr::model_config m = pr::load_config(R"({
    "model_type": "gemma3_text", "head_dim": 256, "hidden_size": 2560, "num_attention_heads": 8,
    "max_position_embeddings": 131072, "layer_types": ["sliding_attention", "full_attention"],
    "rope_parameters": {
      "full_attention": {"rope_type": "linear", "factor": 8.0, "rope_theta": 1000000.0},
      "sliding_attention": {"rope_type": "default", "rope_theta": 10000.0}}})");
  const pr::plan& full = m.plan_for("full_attention");
  std::vector<float> q(6 * 1 * 256, 1.0f);  // [tokens, heads, head_dim]
  const std::vector<std::int64_t> ids{0, 0, 0, 1, 2, 3};
  pr::apply_ragged_inplace<float>(pr::ragged_view<float>::contiguous(q.data(), {6, 1, 256}), {},
                                  pr::position_ids(ids), full.frequencies(), {.layout = pr::layout::half});
  // [rope-config-v5]
  for (const auto& l : m.layers)
    std::printf("%-17s rope_type %-7s rotary_dim %zu  inv_freq[1] %.9Le\n", l.layer_type.c_str(),
                std::string(l.plan->rope_type()).c_str(), l.plan->rotary_dim(), l.plan->frequencies().inv_freq[1]);
  std::printf("q[token 5, pair 0] = (%+.6f, %+.6f)\n", q[5 * 256], q[5 * 256 + 128]);
  const bool ok = m.layers.size() == 2 && full.rotary_dim() == 256 && q[0] == 1.0f && q[5 * 256] != 1.0f;
  return ok ? 0 : 1;
}
