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
    {"flex_olmo", 500000.0, detail::der, 0, false, 0, nope_rule::none, query_scale_rule::none, pair_layout::halves, "FlexOlmoConfig"},
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
    {"glm", 0, detail::req, 0, true, 0, nope_rule::none, query_scale_rule::none, pair_layout::interleaved,
     "GlmConfig (rotate_half on (2i, 2i + 1))"},
    {"glm4", 0, detail::req, 0, true, 0, nope_rule::none, query_scale_rule::none, pair_layout::interleaved,
     "Glm4Config (rotate_half on (2i, 2i + 1))"},
    {"glm4_moe", 10000.0, detail::der, 0, true, 0.5, nope_rule::none, query_scale_rule::none, pair_layout::halves,
     "Glm4MoeConfig, Glm4MoeRotaryEmbedding"},
    {"glm4_moe_lite", 10000.0, detail::cls, 64, true, 0, nope_rule::none, query_scale_rule::none, pair_layout::interleaved_by_default,
     "Glm4MoeLiteConfig (head_dim = qk_rope_head_dim, default 64)"},
    {"glm_moe_dsa", 10000.0, detail::cls, 64, false, 0, nope_rule::none, query_scale_rule::none, pair_layout::interleaved,
     "GlmMoeDsaConfig (head_dim = qk_rope_head_dim, default 64, whatever head_dim says)"},
    {"gpt_neox", 0, detail::req, 0, true, 0, nope_rule::none, query_scale_rule::none, pair_layout::halves, "GPTNeoXConfig"},
    {"gpt_oss", 150000.0, detail::cls, 64, false, 0, nope_rule::none, query_scale_rule::none, pair_layout::halves, "GptOssConfig"},
    {"granite", 10000.0, detail::der, 0, false, 0, nope_rule::none, query_scale_rule::none, pair_layout::halves, "GraniteConfig"},
    {"granitemoe", 10000.0, detail::der, 0, false, 0, nope_rule::none, query_scale_rule::none, pair_layout::halves,
     "GraniteMoeConfig"},
    {"helium", 100000.0, detail::cls, 128, false, 0, nope_rule::none, query_scale_rule::none, pair_layout::interleaved,
     "HeliumConfig (rotate_half on (2i, 2i + 1))"},
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
    {"mixtral", 1000000.0, detail::der, 0, false, 0, nope_rule::none, query_scale_rule::none, pair_layout::halves, "MixtralConfig"},
    {"nemotron", 0, detail::req, 0, true, 0, nope_rule::none, query_scale_rule::none, pair_layout::halves, "NemotronConfig"},
    {"olmo", 10000.0, detail::der, 0, false, 0, nope_rule::none, query_scale_rule::none, pair_layout::halves, "OlmoConfig"},
    {"olmo2", 10000.0, detail::der, 0, false, 0, nope_rule::none, query_scale_rule::none, pair_layout::halves, "Olmo2Config"},
    {"olmo3", 500000.0, detail::der, 0, false, 0, nope_rule::none, query_scale_rule::none, pair_layout::halves, "Olmo3Config"},
    {"olmo_hybrid", 10000.0, detail::der, 0, false, 0, nope_rule::none, query_scale_rule::none, pair_layout::halves,
     "OlmoHybridConfig (linear_attention layers: no RoPE)"},
    {"olmoe", 10000.0, detail::der, 0, false, 0, nope_rule::none, query_scale_rule::none, pair_layout::halves, "OlmoeConfig"},
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

/// A model type transformers 5.23 knows (its configuration carries rope_parameters and its
/// attention applies RoPE along one axis: tests/rotary/hf/model_types.txt, category text) whose
/// rules posenc has not transcribed into model_rules. load_config refuses it with a config_error
/// naming model_type rather than read it by the generic rule, since the class decides defaults
/// (rope_theta, head_dim, partial rotary, NoPE layers, pairs) the generic rule does not vouch for.
struct refused_model_type {
  std::string_view model_type;  ///< the model_type key of config.json
  std::string_view source;  ///< the configuration class, its models/ directory, what it decides
};

/// The refused model types, in the census's order (`scripts/gen_rope_model_reference.py --census`;
/// the features after the colon were read from the class defaults and modeling files).
inline constexpr auto refused_model_types = std::to_array<refused_model_type>({
    {"EvollaModel", "EvollaConfig (models/evolla: rope_theta default 500000)"},
    {"afmoe", "AfmoeConfig (models/afmoe: head_dim default 128; rope_theta default 10000)"},
    {"arcee", "ArceeConfig (models/arcee: head_dim default 80; rope_theta default 10000)"},
    {"aria_text", "AriaTextConfig (models/aria: head_dim default 128; rope_theta default 10000)"},
    {"axk1", "AXK1Config (models/axk1: interleaved pairs; rope_theta default 10000)"},
    {"axk2", "AXK2Config (models/axk2: interleaved pairs; head_dim default 32; rope_theta default 10000)"},
    {"bailing_hybrid", "BailingHybridConfig (models/bailing_hybrid: interleaved pairs; head_dim default 64; rope_theta default 6e+06)"},
    {"bamba", "BambaConfig (models/bamba: partial_rotary_factor under the default rule; rope_theta default 10000)"},
    {"beam", "BeamConfig (models/beam: head_dim default 128; rope_parameters per layer type)"},
    {"bitnet", "BitNetConfig (models/bitnet: rope_theta default 500000)"},
    {"blt", "BltConfig (models/blt: rope_theta default 500000)"},
    {"blt_global_transformer", "BltGlobalTransformerConfig (models/blt: rope_theta default 500000)"},
    {"blt_local_decoder", "BltLocalDecoderConfig (models/blt: rope_theta default 500000)"},
    {"chameleon", "ChameleonConfig (models/chameleon: rope_theta default 10000)"},
    {"cohere", "CohereConfig (models/cohere: rope_theta default 500000)"},
    {"cohere2", "Cohere2Config (models/cohere2: rope_theta default 10000)"},
    {"cohere2_moe", "Cohere2MoeConfig (models/cohere2_moe: head_dim default 128; rope_theta default 10000)"},
    {"csm", "CsmConfig (models/csm: head_dim default 64; rope_theta default 500000)"},
    {"cwm", "CwmConfig (models/cwm: head_dim default 128; rope_theta default 1e+06)"},
    {"dbrx", "DbrxConfig (models/dbrx: rope_theta default 10000)"},
    {"deepseek_ocr2_text", "DeepseekOcr2TextConfig (models/deepseek_ocr2: head_dim default 128; rope_theta default 10000)"},
    {"deepseek_v4", "DeepseekV4Config (models/deepseek_v4: partial_rotary_factor under the default rule; head_dim default 512; rope_parameters per layer type)"},
    {"dia_decoder", "DiaDecoderConfig (models/dia: head_dim default 128; rope_theta default 10000)"},
    {"diffllama", "DiffLlamaConfig (models/diffllama: head_dim default 64; rope_theta default 10000)"},
    {"diffusion_gemma_text", "DiffusionGemmaTextConfig (models/diffusion_gemma: partial_rotary_factor under the default rule; head_dim per layer; rope_parameters per layer type)"},
    {"doge", "DogeConfig (models/doge: rope_theta default 10000)"},
    {"dots1", "Dots1Config (models/dots1: rope_theta default 10000)"},
    {"dots3_note_text", "Dots3NoteTextConfig (models/dots3_note: partial_rotary_factor under the default rule; interleaved pairs; head_dim default 256; rope_parameters per layer type)"},
    {"embedding_gemma2_text", "EmbeddingGemma2TextConfig (models/embedding_gemma2: head_dim per layer; rope_parameters per layer type)"},
    {"emu3_text_model", "Emu3TextConfig (models/emu3: rope_theta default 1e+06)"},
    {"ernie4_5", "Ernie4_5Config (models/ernie4_5: head_dim default 128; rope_theta default 500000)"},
    {"ernie4_5_moe", "Ernie4_5_MoeConfig (models/ernie4_5_moe: rope_theta default 500000)"},
    {"eurobert", "EuroBertConfig (models/eurobert: head_dim default 64; rope_theta default 10000)"},
    {"evolla", "EvollaConfig (models/evolla: rope_theta default 500000)"},
    {"exaone4", "Exaone4Config (models/exaone4: rope_theta default 10000)"},
    {"exaone_moe", "ExaoneMoeConfig (models/exaone_moe: rope_theta default 10000)"},
    {"falcon_h1", "FalconH1Config (models/falcon_h1: rope_theta default 10000)"},
    {"flint", "FlintConfig (models/flint: head_dim default 128; rope_theta default 10000)"},
    {"gemma4_unified_text", "Gemma4UnifiedTextConfig (models/gemma4_unified: head_dim per layer; rope_parameters per layer type)"},
    {"gpt_neox_japanese", "GPTNeoXJapaneseConfig (models/gpt_neox_japanese: partial_rotary_factor under the default rule; rope_theta default 10000)"},
    {"granite_docling_text", "GraniteDoclingTextConfig (models/granite_docling: rope_theta default 10000)"},
    {"granite_swa", "GraniteSWAConfig (models/granite_swa: rope_theta default 10000)"},
    {"granitemoe_swa", "GraniteMoeSWAConfig (models/granitemoe_swa: rope_theta default 10000)"},
    {"granitemoehybrid", "GraniteMoeHybridConfig (models/granitemoehybrid: rope_theta default 10000)"},
    {"granitemoeshared", "GraniteMoeSharedConfig (models/granitemoeshared: rope_theta default 10000)"},
    {"gte", "GteConfig (models/gte: rope_theta default 160000)"},
    {"hrm_text", "HrmTextConfig (models/hrm_text: head_dim default 128; rope_theta default 10000)"},
    {"hy_v3", "HYV3Config (models/hy_v3: head_dim default 128; rope_theta default 1.11588e+07)"},
    {"hy_v4", "HYV4Config (models/hy_v4: head_dim default 64; rope_theta default 10000)"},
    {"hyperclovax", "HyperCLOVAXConfig (models/hyperclovax: head_dim default 128; rope_theta default 10000)"},
    {"idefics", "IdeficsConfig (models/idefics: rope_theta default 10000)"},
    {"internlm3", "InternLM3Config (models/internlm3: head_dim default 128; rope_theta default 10000)"},
    {"iquestcoder", "IQuestCoderConfig (models/iquestcoder: head_dim default 128; rope_theta default 10000)"},
    {"jais2", "Jais2Config (models/jais2: head_dim default 128; rope_theta default 10000)"},
    {"jetmoe", "JetMoeConfig (models/jetmoe: rope_theta default 10000)"},
    {"jina_embeddings_v3", "JinaEmbeddingsV3Config (models/jina_embeddings_v3: rope_theta default 20000)"},
    {"kolibri1", "Kolibri1Config (models/kolibri1: head_dim default 128; rope_theta default 10000)"},
    {"laguna", "LagunaConfig (models/laguna: partial_rotary_factor under the default rule; head_dim default 128; rope_parameters per layer type)"},
    {"lfm2", "Lfm2Config (models/lfm2: rope_theta default 1e+06)"},
    {"lfm2_moe", "Lfm2MoeConfig (models/lfm2_moe: rope_theta default 1e+06)"},
    {"lfm3", "Lfm3Config (models/lfm3: head_dim default 128; rope_parameters per layer type)"},
    {"longcat_flash", "LongcatFlashConfig (models/longcat_flash: interleaved pairs; head_dim default 64; rope_theta default 1e+07)"},
    {"mellum", "MellumConfig (models/mellum: partial_rotary_factor under the default rule; head_dim default 128; rope_parameters per layer type)"},
    {"mimo_v2_flash", "MiMoV2FlashConfig (models/mimo_v2_flash: partial_rotary_factor under the default rule; head_dim default 192; rope_parameters per layer type)"},
    {"minicpm3", "MiniCPM3Config (models/minicpm3: head_dim default 32; rope_theta default 10000)"},
    {"minimax", "MiniMaxConfig (models/minimax: rope_theta default 1e+06)"},
    {"minimax_m2", "MiniMaxM2Config (models/minimax_m2: partial_rotary_factor under the default rule; head_dim default 128; rope_theta default 5e+06)"},
    {"minimax_m3_vl_text", "MiniMaxM3VLTextConfig (models/minimax_m3_vl: partial_rotary_factor under the default rule; head_dim default 128; rope_theta default 5e+06)"},
    {"mistral4", "Mistral4Config (models/mistral4: interleaved pairs; rope_theta default 10000)"},
    {"mistral_large4_text", "MistralLarge4TextConfig (models/mistral_large4: NoPE layers; interleaved pairs; head_dim default 64; rope_theta default 10000)"},
    {"mllama_text_model", "MllamaTextConfig (models/mllama: rope_theta default 500000)"},
    {"modernbert", "ModernBertConfig (models/modernbert: rope_parameters per layer type)"},
    {"modernbert-decoder", "ModernBertDecoderConfig (models/modernbert_decoder: rope_parameters per layer type)"},
    {"molmo2_text", "Molmo2TextConfig (models/molmo2: head_dim default 128; rope_theta default 10000)"},
    {"moshi", "MoshiConfig (models/moshi: NoPE layers; head_dim default 128; rope_theta default 10000)"},
    {"muse_glimmer_assistant", "MuseGlimmerAssistantConfig (models/muse_glimmer_assistant: head_dim default 128; rope_theta default 500000)"},
    {"muse_glimmer_text", "MuseGlimmerTextConfig (models/muse_glimmer: head_dim default 128; rope_theta default 10000)"},
    {"muse_spark_text", "MuseSparkTextConfig (models/muse_spark: head_dim default 64; rope_theta default 500000)"},
    {"musicflamingo", "MusicFlamingoConfig (models/musicflamingo: partial_rotary_factor under the default rule; rope_theta default 1200)"},
    {"nanochat", "NanoChatConfig (models/nanochat: rope_theta default 10000)"},
    {"nomic_bert", "NomicBertConfig (models/nomic_bert: head_dim default 64; rope_theta default 1000)"},
    {"openai_privacy_filter", "OpenAIPrivacyFilterConfig (models/openai_privacy_filter: head_dim default 64; rope_theta default 150000)"},
    {"phi4_multimodal", "Phi4MultimodalConfig (models/phi4_multimodal: partial_rotary_factor under the default rule; rope_theta default 10000)"},
    {"phimoe", "PhimoeConfig (models/phimoe: rope_theta default 1e+06)"},
    {"recurrent_gemma", "RecurrentGemmaConfig (models/recurrent_gemma: partial_rotary_factor under the default rule; rope_theta default 10000)"},
    {"solar_open", "SolarOpenConfig (models/solar_open: partial_rotary_factor under the default rule; head_dim default 128; rope_theta default 1e+06)"},
    {"step3p5", "Step3p7TextConfig (models/step3p7: partial_rotary_factor under the default rule; head_dim default 128; rope_parameters per layer type)"},
    {"t5_gemma_module", "T5GemmaModuleConfig (models/t5gemma: head_dim default 256; rope_theta default 10000)"},
    {"t5gemma2_decoder", "T5Gemma2DecoderConfig (models/t5gemma2: head_dim default 256; rope_parameters per layer type)"},
    {"t5gemma2_text", "T5Gemma2TextConfig (models/t5gemma2: head_dim default 256; rope_parameters per layer type)"},
    {"ultrabert", "UltrabertConfig (models/ultrabert: head_dim default 128; rope_parameters per layer type)"},
    {"unlimited_ocr_text", "UnlimitedOcrTextConfig (models/unlimited_ocr: head_dim default 128; rope_theta default 10000)"},
    {"vaultgemma", "VaultGemmaConfig (models/vaultgemma: head_dim default 256; rope_theta default 10000)"},
    {"voxtral_realtime_text", "VoxtralRealtimeTextConfig (models/voxtral_realtime: head_dim default 128; rope_theta default 10000)"},
    {"youtu", "YoutuConfig (models/youtu: interleaved pairs; rope_theta default 10000)"},
    {"zamba2", "Zamba2Config (models/zamba2: rope_theta default 10000)"},
    {"zaya", "ZayaConfig (models/zaya: partial_rotary_factor under the default rule; head_dim default 128; rope_parameters per layer type)"},
});

/// The refused_model_types entry of a model type; nullptr if it is not refused.
inline const refused_model_type* find_refused_model_type(std::string_view model_type) noexcept {
  for (const auto& r : refused_model_types)
    if (r.model_type == model_type) return &r;
  return nullptr;
}

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
