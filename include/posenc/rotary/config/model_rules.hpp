// SPDX-License-Identifier: MIT
// The per-model rules of the config.json loader (posenc/rotary/config/config.hpp): what transformers
// 5.23's configuration and modelling code of each model_type decides besides the rope dicts — the
// default rope_theta, where head_dim comes from when absent, whether the default rule applies
// partial_rotary_factor, which layers use no RoPE (NoPE), a position-dependent scale of the
// queries, and the pair layout. One row per model type (rotary::model_rules); a model type
// without a row loads only where the generic rule provably applies (docs/extrapolation.md, "Model
// types", is checked against this table by tests/rotary/models.test.cpp).
#pragma once

#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include <posenc/core/error.hpp>

namespace posenc::rotary {

/// Which layers a model type runs without RoPE (NoPE) besides its linear-attention layers.
enum class nope_rule {
  none,     ///< every attention layer uses RoPE
  llama4,   ///< Llama 4: no_rope_layers (1 = RoPE) when non-empty, else every no_rope_layer_interval-th layer is NoPE
  smollm3,  ///< SmolLM3: no_rope_layers (1 = RoPE) when given (null: absent), else as Llama 4
};

/// A position-dependent scale some models apply to the queries besides RoPE.
enum class query_scale_rule {
  none,
  /// Llama 4's attention temperature tuning, on its NoPE layers only (attn_temperature_tuning):
  /// log1p(floor((p + 1) / floor_scale)) * attn_scale + 1, p the token's position in the cache.
  llama4_temperature,
  /// Ministral 3's llama_4_scaling_beta, on every layer:
  /// 1 + beta * log(1 + floor(p / original_max_position_embeddings)), p the position id.
  llama4_scaling_beta,
};

/// How a model type pairs the rotated channels (rotary::model_config::rope_interleave).
enum class pair_layout {
  halves,                 ///< (i, i + d/2), rotate_half; a rope_interleave key is reported as given
  interleaved,            ///< always (2i, 2i + 1) (complex RoPE): rope_interleave false is refused
  interleaved_by_default, ///< rope_interleave, default true (the class default)
  halves_always,          ///< always rotate_half: rope_interleave true is refused
};

/// Where a model type's head_dim comes from when config.json does not give it.
enum class head_dim_source {
  required,       ///< no derivation in transformers posenc can vouch for: head_dim must be given
  derived,        ///< hidden_size / num_attention_heads
  class_default,  ///< the configuration class's default (model_rule::default_head_dim); null: derived
};

/// One model type's rules (transformers 5.23).
struct model_rule {
  std::string_view model_type;
  double default_theta = 0;  ///< the class's default_theta; 0: none known (rope_theta required)
  head_dim_source head_dim = head_dim_source::required;
  std::size_t default_head_dim = 0;        ///< head_dim_source::class_default only
  bool default_rule_applies_partial = false;  ///< the default rule honours partial_rotary_factor
  double default_partial = 0;              ///< the class's default partial_rotary_factor; 0: none
  nope_rule nope = nope_rule::none;
  query_scale_rule query_scale = query_scale_rule::none;
  pair_layout pairs = pair_layout::halves;
  std::string_view source;   ///< where transformers decides it (the doc table's last column)
};

namespace detail {
inline constexpr auto req = head_dim_source::required;
inline constexpr auto der = head_dim_source::derived;
inline constexpr auto cls = head_dim_source::class_default;
}  // namespace detail

/// THE table of model types, in alphabetical order. Sources: `models/TYPE/configuration_TYPE.py`
/// (default_theta, head_dim, partial_rotary_factor defaults, no_rope_layers) and
/// `modeling_TYPE.py` (compute_default_rope_parameters: whether it reads partial_rotary_factor;
/// the attention's NoPE and query scales) of transformers 5.23.
inline constexpr auto model_rules = std::to_array<model_rule>({
    {"apertus", 12000000.0, detail::der, 0, false, 0, nope_rule::none, query_scale_rule::none, pair_layout::halves, "ApertusConfig"},
    {"deepseek_v2", 10000.0, detail::req, 0, false, 0, nope_rule::none, query_scale_rule::none, pair_layout::interleaved,
     "DeepseekV2Config (head_dim = qk_rope_head_dim)"},
    {"deepseek_v3", 10000.0, detail::req, 0, false, 0, nope_rule::none, query_scale_rule::none, pair_layout::interleaved_by_default,
     "DeepseekV3Config (head_dim = qk_rope_head_dim)"},
    {"deepseek_v32", 10000.0, detail::req, 0, false, 0, nope_rule::none, query_scale_rule::none, pair_layout::halves_always,
     "DeepseekV32Config (head_dim = qk_rope_head_dim)"},
    {"falcon", 10000.0, detail::der, 0, false, 0, nope_rule::none, query_scale_rule::none, pair_layout::halves, "FalconConfig"},
    {"gemma", 0, detail::req, 0, false, 0, nope_rule::none, query_scale_rule::none, pair_layout::halves, "GemmaConfig"},
    {"gemma2", 0, detail::req, 0, false, 0, nope_rule::none, query_scale_rule::none, pair_layout::halves, "Gemma2Config"},
    {"gemma3", 1000000.0, detail::cls, 256, false, 0, nope_rule::none, query_scale_rule::none, pair_layout::halves,
     "Gemma3TextConfig (sliding layers: rope_local_base_freq, 10000)"},
    {"gemma3_text", 1000000.0, detail::cls, 256, false, 0, nope_rule::none, query_scale_rule::none, pair_layout::halves,
     "Gemma3TextConfig (sliding layers: rope_local_base_freq, 10000)"},
    {"gemma3n", 1000000.0, detail::cls, 256, false, 0, nope_rule::none, query_scale_rule::none, pair_layout::halves,
     "Gemma3nTextConfig (sliding layers: rope_local_base_freq, 10000)"},
    {"gemma3n_text", 1000000.0, detail::cls, 256, false, 0, nope_rule::none, query_scale_rule::none, pair_layout::halves,
     "Gemma3nTextConfig (sliding layers: rope_local_base_freq, 10000)"},
    {"gemma4", 0, detail::cls, 256, false, 0, nope_rule::none, query_scale_rule::none, pair_layout::halves,
     "Gemma4TextConfig (full layers: global_head_dim, 512)"},
    {"gemma4_text", 0, detail::cls, 256, false, 0, nope_rule::none, query_scale_rule::none, pair_layout::halves,
     "Gemma4TextConfig (full layers: global_head_dim, 512)"},
    {"glm", 0, detail::req, 0, true, 0, nope_rule::none, query_scale_rule::none, pair_layout::halves, "GlmConfig"},
    {"glm4", 0, detail::req, 0, true, 0, nope_rule::none, query_scale_rule::none, pair_layout::halves, "Glm4Config"},
    {"glm4_moe", 10000.0, detail::der, 0, true, 0.5, nope_rule::none, query_scale_rule::none, pair_layout::halves,
     "Glm4MoeConfig, Glm4MoeRotaryEmbedding"},
    {"gpt_neox", 0, detail::req, 0, true, 0, nope_rule::none, query_scale_rule::none, pair_layout::halves, "GPTNeoXConfig"},
    {"gpt_oss", 150000.0, detail::cls, 64, false, 0, nope_rule::none, query_scale_rule::none, pair_layout::halves, "GptOssConfig"},
    {"granite", 10000.0, detail::der, 0, false, 0, nope_rule::none, query_scale_rule::none, pair_layout::halves, "GraniteConfig"},
    {"granitemoe", 10000.0, detail::der, 0, false, 0, nope_rule::none, query_scale_rule::none, pair_layout::halves,
     "GraniteMoeConfig"},
    {"hunyuan_v1_dense", 10000.0, detail::der, 0, false, 0, nope_rule::none, query_scale_rule::none, pair_layout::halves,
     "HunYuanDenseV1RotaryEmbedding (dynamic + alpha: ntk_alpha)"},
    {"hunyuan_v1_moe", 10000.0, detail::der, 0, false, 0, nope_rule::none, query_scale_rule::none, pair_layout::halves,
     "HunYuanMoEV1RotaryEmbedding (dynamic + alpha: ntk_alpha)"},
    {"internlm2", 10000.0, detail::der, 0, false, 0, nope_rule::none, query_scale_rule::none, pair_layout::halves,
     "InternLM2 (remote code, Llama rules)"},
    {"kimi_k2", 10000.0, detail::req, 0, false, 0, nope_rule::none, query_scale_rule::none, pair_layout::interleaved_by_default,
     "read as deepseek_v3 (Kimi_K25Config maps it)"},
    {"llama", 10000.0, detail::der, 0, false, 0, nope_rule::none, query_scale_rule::none, pair_layout::halves, "LlamaConfig"},
    {"llama4", 500000.0, detail::cls, 128, false, 0, nope_rule::llama4, query_scale_rule::llama4_temperature, pair_layout::interleaved,
     "Llama4Config (text_config: llama4_text)"},
    {"llama4_text", 500000.0, detail::cls, 128, false, 0, nope_rule::llama4, query_scale_rule::llama4_temperature, pair_layout::interleaved,
     "Llama4TextConfig, Llama4TextAttention"},
    {"ministral", 10000.0, detail::der, 0, false, 0, nope_rule::none, query_scale_rule::none, pair_layout::halves,
     "MinistralConfig"},
    {"ministral3", 10000.0, detail::cls, 128, false, 0, nope_rule::none, query_scale_rule::llama4_scaling_beta, pair_layout::halves,
     "Ministral3Config, Ministral3Attention"},
    {"mistral", 10000.0, detail::der, 0, false, 0, nope_rule::none, query_scale_rule::none, pair_layout::halves, "MistralConfig"},
    {"nemotron", 0, detail::req, 0, true, 0, nope_rule::none, query_scale_rule::none, pair_layout::halves, "NemotronConfig"},
    {"olmo", 10000.0, detail::der, 0, false, 0, nope_rule::none, query_scale_rule::none, pair_layout::halves, "OlmoConfig"},
    {"olmo2", 10000.0, detail::der, 0, false, 0, nope_rule::none, query_scale_rule::none, pair_layout::halves, "Olmo2Config"},
    {"olmo3", 500000.0, detail::der, 0, false, 0, nope_rule::none, query_scale_rule::none, pair_layout::halves, "Olmo3Config"},
    {"persimmon", 0, detail::req, 0, true, 0, nope_rule::none, query_scale_rule::none, pair_layout::halves, "PersimmonConfig"},
    {"phi", 10000.0, detail::der, 0, true, 0.5, nope_rule::none, query_scale_rule::none, pair_layout::halves, "PhiConfig"},
    {"phi3", 10000.0, detail::der, 0, true, 0, nope_rule::none, query_scale_rule::none, pair_layout::halves,
     "Phi3Config (original_max_position_embeddings 4096)"},
    {"qwen2", 10000.0, detail::der, 0, false, 0, nope_rule::none, query_scale_rule::none, pair_layout::halves, "Qwen2Config"},
    {"qwen2_moe", 10000.0, detail::der, 0, false, 0, nope_rule::none, query_scale_rule::none, pair_layout::halves,
     "Qwen2MoeConfig"},
    {"qwen3", 10000.0, detail::req, 0, false, 0, nope_rule::none, query_scale_rule::none, pair_layout::halves, "Qwen3Config"},
    {"qwen3_moe", 10000.0, detail::req, 0, false, 0, nope_rule::none, query_scale_rule::none, pair_layout::halves,
     "Qwen3MoeConfig"},
    {"qwen3_next", 10000.0, detail::cls, 256, true, 0.25, nope_rule::none, query_scale_rule::none, pair_layout::halves,
     "Qwen3NextConfig, Qwen3NextRotaryEmbedding (linear_attention layers: no RoPE)"},
    {"seed_oss", 10000.0, detail::cls, 128, false, 0, nope_rule::none, query_scale_rule::none, pair_layout::halves,
     "SeedOssConfig"},
    {"smollm3", 2000000.0, detail::der, 0, false, 0, nope_rule::smollm3, query_scale_rule::none, pair_layout::halves,
     "SmolLM3Config, SmolLM3Attention"},
    {"stablelm", 10000.0, detail::der, 0, true, 0, nope_rule::none, query_scale_rule::none, pair_layout::halves,
     "StableLmConfig"},
    {"starcoder2", 10000.0, detail::der, 0, false, 0, nope_rule::none, query_scale_rule::none, pair_layout::halves,
     "Starcoder2Config"},
});

/// The row of a model type; nullptr if posenc has none.
inline const model_rule* find_model_rule(std::string_view model_type) noexcept {
  for (const auto& r : model_rules)
    if (r.model_type == model_type) return &r;
  return nullptr;
}

/// The scale a model multiplies its queries by at a position (query_scale_rule). `scale` is
/// attn_scale or llama_4_scaling_beta, `length` floor_scale or original_max_position_embeddings.
/// Computed in double from the exact integer floor: transformers evaluates the same formula in
/// float32 (tests/rotary/models.test.cpp compares within 2 float32 ulp).
struct query_scale {
  query_scale_rule rule = query_scale_rule::none;
  double scale = 0;
  std::uint64_t length = 1;
  /// The scale at position `position` (1 for query_scale_rule::none).
  [[nodiscard]] double at(std::uint64_t position) const noexcept {
    switch (rule) {
      case query_scale_rule::llama4_temperature:
        // floor((p + 1) / floor_scale) as an integer quotient (exact for every p; p + 1 wraps only at 2^64 - 1)
        return std::log1p(static_cast<double>(position / length + (position % length + 1) / length)) * scale + 1.0;
      case query_scale_rule::llama4_scaling_beta:
        return 1.0 + scale * std::log1p(static_cast<double>(position / length));
      case query_scale_rule::none: break;
    }
    return 1.0;
  }
};

}  // namespace posenc::rotary
