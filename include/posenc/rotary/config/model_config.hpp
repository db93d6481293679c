// SPDX-License-Identifier: MIT
// What rotary::load_config (posenc/rotary/config/config.hpp) returns: model_config, one shared plan per
// distinct rule of the config's layer types, the per-layer RoPE flags (NoPE layers) and the
// model's position-dependent query scale; load_options; and the bounds a config.json is held to.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <posenc/core/error.hpp>
#include <posenc/rotary/config/model_rules.hpp>
#include <posenc/rotary/rules/rules.hpp>

namespace posenc::rotary {

/// The widest head a config.json may give (head_dim, qk_rope_head_dim, global_head_dim, a
/// per_layer_config head_dim, or hidden_size / num_attention_heads): 65536, 128 times the widest
/// head of any published model (Gemma 4's 512). A wider value is a config_error naming its key, so a
/// few bytes of config can never make the loader allocate its frequencies by the gigabyte
/// (rotary::plan computes them when the config loads). rotary::plan built in code has no such bound.
inline constexpr std::size_t max_config_head_dim = std::size_t{1} << 16;

/// The most layers a config.json may give (num_hidden_layers, the length of layer_types): 65536,
/// over 500 times the deepest published model. A larger count is a config_error naming its key.
inline constexpr std::size_t max_config_layers = std::size_t{1} << 16;

/// The most frequencies (rotary pairs) the distinct plans of one config may hold together: 65536,
/// two plans of the widest head (max_config_head_dim). Layer types with equal rules share one plan,
/// so this bounds the loader's work and memory whatever the number of layer types; a config whose
/// distinct rules need more is a config_error naming the layer type that crosses the bound.
inline constexpr std::size_t max_config_frequencies = std::size_t{1} << 16;

/// How to read a config.json.
struct load_options {
  rotary::semantics semantics = semantics::transformers_5;
  /// transformers 4.46 only: which LongRoPE regime rule (the init function's or the Phi-3 module's).
  longrope_rule longrope = longrope_rule::init_function;
};

/// One attention layer type's RoPE ("default" when the config is not per layer type). Layer types
/// whose rule and model fields are equal share one plan object.
struct layer_plan {
  std::string layer_type;
  std::shared_ptr<const rotary::plan> plan;
};

/// What a config.json says about positions.
struct model_config {
  std::string model_type;                 ///< "" if absent
  std::vector<layer_plan> layers;         ///< one per layer type, in file order ("default" when flat)
  std::vector<std::string> layer_types;   ///< the config's per-layer `layer_types` (empty if absent)
  std::size_t num_hidden_layers = 0;      ///< 0 if absent
  std::optional<bool> rope_interleave{};  ///< DeepSeek's rope_interleave (true: interleaved pairs)
  std::size_t num_attention_heads = 0;    ///< 0 if absent
  std::size_t num_key_value_heads = 0;    ///< 0 if absent (then equal to num_attention_heads in HF)
  bool alibi = false;                     ///< "alibi": true (BLOOM-style) or attn_config.alibi (MPT)
  /// Per layer index, whether the layer applies RoPE: false for Llama 4's and SmolLM3's NoPE
  /// layers and for linear-attention layers (layer_types); empty: every layer does.
  std::vector<bool> rope_layers;
  /// The position-dependent scale of the queries (Llama 4's attention temperature tuning,
  /// Ministral 3's llama_4_scaling_beta); rule none: 1 everywhere. Prefer query_scale_at.
  rotary::query_scale query_scale;
  bool query_scale_nope_only = false;  ///< Llama 4: the scale applies on the NoPE layers only

  /// Whether layer `layer` applies RoPE; throws invalid_argument for a layer index at or past
  /// num_hidden_layers (or layer_types' length) when the config gives it.
  [[nodiscard]] bool uses_rope(std::size_t layer) const {
    const std::size_t n = num_hidden_layers > 0 ? num_hidden_layers : layer_types.size();
    if (n > 0 && layer >= n)
      posenc::detail::fail("rotary::model_config::uses_rope", "layer: expected a layer index below ", n, ", got ",
                           layer);
    return rope_layers.empty() || rope_layers[layer];
  }
  /// The scale the model multiplies the queries of layer `layer` by at position `position` (the
  /// token's absolute position: the cache position for Llama 4, the position id for Ministral 3).
  [[nodiscard]] double query_scale_at(std::size_t layer, std::uint64_t position) const {
    if (query_scale.rule == query_scale_rule::none || (query_scale_nope_only && uses_rope(layer))) return 1.0;
    return query_scale.at(position);
  }

  /// The plan of a layer type; throws invalid_argument naming the known layer types if none.
  [[nodiscard]] const rotary::plan& plan_for(std::string_view layer_type) const {
    for (const auto& l : layers)
      if (l.layer_type == layer_type) return *l.plan;
    std::string known;
    for (const auto& l : layers) known += (known.empty() ? "" : ", ") + l.layer_type;
    posenc::detail::fail("rotary::model_config::plan_for", "layer_type: expected one of ", known, ", got \"",
                         layer_type, "\"");
  }
  /// The single plan of a config that is not per layer type, else the full_attention layers' plan.
  [[nodiscard]] const rotary::plan& main_plan() const {
    if (layers.size() == 1) return *layers.front().plan;
    return plan_for("full_attention");
  }
};

}  // namespace posenc::rotary
