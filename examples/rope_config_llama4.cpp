// SPDX-License-Identifier: MIT
// Llama 4's config.json (the rope fields of Scout's text_config): llama3 with equal low/high
// factors, interleaved pairs, a NoPE layer every 4th layer, and attention temperature tuning on the
// NoPE layers: rotate q on the RoPE layers, scale it on the NoPE layers.
#include <cstdint>
#include <cstdio>
#include <vector>

#include <posenc/rotary.hpp>

int main() {
  namespace pr = posenc::rotary;
  // [rope-config-llama4]
  const pr::model_config m = pr::load_config(R"({"model_type": "llama4", "text_config": {
    "model_type": "llama4_text", "head_dim": 128, "hidden_size": 5120, "num_attention_heads": 40,
    "num_hidden_layers": 48, "no_rope_layers": [], "attn_temperature_tuning": true, "floor_scale": 8192,
    "attn_scale": 0.1, "rope_theta": 500000.0, "rope_scaling": {"rope_type": "llama3", "factor": 16.0,
    "low_freq_factor": 1.0, "high_freq_factor": 1.0, "original_max_position_embeddings": 8192}}})");
  const std::uint64_t pos = 20000;
  std::vector<float> q(128, 1.0f);  // one head of one token at position pos
  for (std::size_t layer : {std::size_t{0}, std::size_t{3}}) {
    std::vector<float> x = q;
    if (m.uses_rope(layer)) {
      const std::vector<std::int64_t> ids{static_cast<std::int64_t>(pos)};
      pr::apply_ragged_inplace<float>(pr::ragged_view<float>::contiguous(x.data(), {1, 1, 128}), {},
                                      pr::position_ids(ids), m.main_plan().frequencies(), {.layout = pr::layout::interleaved});
    } else {
      for (auto& v : x) v = static_cast<float>(v * m.query_scale_at(layer, pos));
    }
    std::printf("layer %zu: %s, q[0..1] = (%+.6f, %+.6f)\n", layer, m.uses_rope(layer) ? "RoPE" : "NoPE", x[0], x[1]);
  }
  // [rope-config-llama4]
  const bool ok = m.rope_interleave == true && !m.uses_rope(3) && m.query_scale_at(3, pos) > 1.0;
  return ok ? 0 : 1;
}
