// SPDX-License-Identifier: MIT
// The rotary (and ALiBi) configuration of a model from its Hugging Face config.json, as
// transformers 5 reads it (or transformers 4.46, by load_options::semantics):
//  - `rope_parameters`, flat or keyed by layer type (full_attention, sliding_attention, ...: one
//    plan per layer type), or the legacy `rope_scaling` (`rope_type` or `type`) with the top-level
//    `rope_theta` and `partial_rotary_factor`;
//  - the fields that decide the rotary width or theta: head_dim (else hidden_size /
//    num_attention_heads), qk_rope_head_dim (DeepSeek-V2/V3: the rotated part of the head),
//    partial_rotary_factor (top level or inside rope_parameters; Phi-2), rope_local_base_freq (the
//    theta of Gemma 3's sliding layers in legacy configs), global_head_dim (Gemma 4's full-attention
//    layers), max_position_embeddings and Phi-3's top-level original_max_position_embeddings;
//  - a multimodal config's `text_config` (Gemma 3/4) when present.
// Every rule comes from the rule table (posenc/rotary/rules/rules.hpp). A key that can change a frequency
// and is not understood is a rotary::config_error naming it: an unknown key inside rope_parameters
// / rope_scaling, a top-level key whose name contains "rope" or "rotary" that the loader does not
// read (rotary_pct, rotary_emb_base, rope_ratio, ...), a missing head_dim or rope_theta of a
// model type whose transformers default is not the generic one. Other keys cannot change a
// frequency and are ignored (docs/extrapolation.md lists what is read).
#pragma once

#include <algorithm>
#include <array>
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include <posenc/core/error.hpp>
#include <posenc/io/json.hpp>
#include <posenc/rotary/config/model_config.hpp>
#include <posenc/rotary/config/model_rules.hpp>
#include <posenc/rotary/rules/rules.hpp>
#include <posenc/rotary/rules/scaling.hpp>

namespace posenc::rotary {

namespace detail {

using json_value = posenc::io::json::value;
using json_kind = posenc::io::json::kind;

inline bool present(const std::optional<json_value>& v) { return v.has_value() && v->type() != json_kind::null; }

template <std::size_t N>
constexpr bool one_of(std::string_view s, const std::array<std::string_view, N>& set) {
  return std::find(set.begin(), set.end(), s) != set.end();
}

/// Top-level keys that the loader reads and whose names contain "rope" or "rotary".
inline constexpr std::array<std::string_view, 7> understood_rope_keys{
    "rope_theta", "rope_scaling", "rope_parameters", "partial_rotary_factor", "rope_local_base_freq",
    "qk_rope_head_dim", "rope_interleave"};

/// Whether the default rule of model_type applies partial_rotary_factor (transformers 5.23).
inline bool default_rule_applies_partial(std::string_view model_type) {
  const model_rule* r = find_model_rule(model_type);
  return r != nullptr && r->default_rule_applies_partial;
}
/// Whether the default rule of model_type rotates the whole head whatever partial_rotary_factor says.
inline bool default_rule_drops_partial(std::string_view model_type) {
  const model_rule* r = find_model_rule(model_type);
  return r != nullptr && !r->default_rule_applies_partial;
}

/// The attention layer types transformers 5.23 allows in layer_types (ALLOWED_ATTN_LAYER_TYPES),
/// and the legacy names it maps to them.
inline constexpr std::array<std::string_view, 14> attention_layer_types{
    "full_attention", "sliding_attention", "chunked_attention", "window_attention", "indexed_attention",
    "compressed_sparse_attention", "heavily_compressed_attention", "minimax_m3_sparse", "conv", "moe", "hybrid",
    "hybrid_sliding", "reference_sliding_attention", "linear_attention"};

/// A layer_types entry as transformers 5.23 reads it (legacy names mapped: mamba, attention,
/// deepseek_sparse_attention, qwen_sparse_attention); another name is a config_error.
inline std::string_view layer_type_name(std::string_view t, const std::string& key) {
  if (t == "mamba") return "linear_attention";
  if (t == "attention") return "full_attention";
  if (t == "deepseek_sparse_attention" || t == "qwen_sparse_attention") return "indexed_attention";
  if (!one_of(t, attention_layer_types)) {
    std::string names;
    for (auto n : attention_layer_types) names += (names.empty() ? "" : ", ") + std::string(n);
    config_fail(key, ": expected layer types among ", names, " (transformers 5.23's), got \"", t, "\"");
  }
  return t;
}

/// A width (head_dim, qk_rope_head_dim, global_head_dim, a per_layer_config head_dim) read from
/// a config: a non-negative integer no larger than max_config_head_dim.
inline std::size_t json_width(const io::json::value& v, std::string_view key) {
  const std::size_t d = json_count(v, key);
  if (d > max_config_head_dim)
    config_fail(key, ": expected a head width of at most ", max_config_head_dim, " (rotary::max_config_head_dim), got ", d);
  return d;
}

inline bool is_gemma3(std::string_view t) {
  return t == "gemma3" || t == "gemma3_text" || t == "gemma3n" || t == "gemma3n_text";  // Gemma 3n: the same defaults
}
inline bool is_gemma4(std::string_view t) { return t == "gemma4" || t == "gemma4_text"; }

/// Keys a model type's own code reads from its rope dict besides the rule's: Ministral 3's
/// llama_4_scaling_beta (a query scale) and max_position_embeddings (unused by its rules), and
/// Hunyuan's alpha with the keys its ntk_alpha leaves unused.
inline bool model_param_key(std::string_view model_type, std::string_view rope_type, std::string_view k,
                            bool has_alpha) {
  if (model_type == "ministral3") return k == "llama_4_scaling_beta" || k == "max_position_embeddings";
  if ((model_type == "hunyuan_v1_dense" || model_type == "hunyuan_v1_moe") && rope_type == "dynamic")
    return k == "alpha" ||
           (has_alpha && (k == "beta_fast" || k == "beta_slow" || k == "mscale" || k == "mscale_all_dim"));
  return false;
}

/// One layer type's validated-to-be inputs: the model context and the rule (a plan is built from
/// them once per distinct pair, plan_pool).
struct layer_spec {
  rope_context ctx;
  rotary::rule rule;
};

/// A partial_rotary_factor read from key: in (0, 1] (a fraction of the head), else a config_error
/// naming the key, whether or not the model type applies it.
inline void check_partial(double p, std::string_view key) {
  if (!(p > 0 && p <= 1)) config_fail(key, ": expected a fraction of the head in (0, 1], got ", p);
}

/// Read one layer type's rule from its params object (rope_parameters, one of its layer entries,
/// or rope_scaling); `params` absent: the default rule.
inline layer_spec layer_from(const std::optional<json_value>& params, const std::string& prefix, rope_context ctx,
                             const std::optional<double>& theta_fallback, bool type_required, const load_options& opt,
                             const std::optional<double>& top_partial, std::string_view model_type, bool nested_layer) {
  std::string type_name = "default";
  if (params) {
    if (!params->is_object()) config_fail(prefix, ": expected an object or null");
    auto rt = params->find("rope_type");
    if (!present(rt)) rt = params->find("type");  // legacy key
    if (present(rt)) {
      if (!rt->is_string()) config_fail(prefix, ".rope_type: expected a string");
      type_name = std::string(rt->text());
    } else if (type_required) {
      config_fail(prefix, ".rope_type: missing (neither \"rope_type\" nor the legacy \"type\" is given)");
    }
    bool known = false;
    (void)rule_accepts_key(type_name, "", &known);
    if (!known) {
      std::string names;
      for (auto n : rule_names()) names += (names.empty() ? "" : ", ") + std::string(n);
      config_fail(prefix, ".rope_type: unknown rope_type \"", type_name, "\" (expected one of ", names, ", or su)");
    }
    const bool has_alpha = present(params->find("alpha"));
    params->for_each_member([&](std::string_view k, const json_value&) {
      if (k == "rope_type" || k == "type" || k == "rope_theta" || k == "partial_rotary_factor") return;
      if (model_param_key(model_type, type_name, k, has_alpha)) return;
      if (!rule_accepts_key(type_name, k))
        config_fail(prefix, ".", k, ": unknown key for rope_type '", type_name,
                    "' (a key that may change the frequencies is never ignored)");
    });
  }
  const param_reader reader(params, prefix, type_name);
  // 0 is no pretrained length: transformers divides by it (yarn, longrope) or compares every
  // wavelength with 0 (llama3); it is never "absent"
  if (const auto o = reader.count("original_max_position_embeddings"); o && *o == 0)
    config_fail(prefix, ".original_max_position_embeddings: expected a positive integer, got 0");
  std::optional<double> theta = params ? reader.number("rope_theta") : std::nullopt;
  if (!theta) theta = theta_fallback;
  if (!theta)
    config_fail(params ? prefix + ".rope_theta" : std::string("rope_theta"),
                ": missing, and the model type's default rope_theta is not known");
  ctx.theta = *theta;
  std::optional<double> partial = params ? reader.number("partial_rotary_factor") : std::nullopt;
  if (partial) check_partial(*partial, prefix + ".partial_rotary_factor");
  if (!partial) partial = top_partial;
  if (partial) ctx.partial_rotary_factor = *partial;
  ctx.semantics = opt.semantics;
  rule r = params ? *parse_rule(type_name, reader) : rule(rules::default_rope{});
  if (const auto alpha = reader.number("alpha"); alpha && model_param_key(model_type, type_name, "alpha", true)) {
    // Hunyuan: "dynamic" with alpha is ntk_alpha, theta * alpha^(d / (d - 2)) (static), factor unused
    if (!(*alpha > 0)) config_fail(prefix, ".alpha: expected a value > 0, got ", *alpha);
    r = rules::ntk{{}, *alpha};
  }
  if (std::holds_alternative<rules::default_rope>(r) && partial && *partial != 1.0 &&
      opt.semantics == semantics::transformers_5 && !model_type.empty() &&
      !default_rule_applies_partial(model_type)) {
    // transformers 5: the default rule of these models rotates the whole head whatever the factor
    if (!default_rule_drops_partial(model_type))
      config_fail(prefix, ".partial_rotary_factor: whether model_type \"", model_type,
                  "\" applies it to the default rule is not known");
    ctx.partial_rotary_factor = 1.0;
  }
  if (nested_layer && params && params->find("truncate"))
    config_fail(prefix, ".truncate: transformers 5.23 reads truncate only from a flat rope_parameters (it ignores it "
                        "in a layer type's entry)");
  if (auto* l = std::get_if<rules::longrope>(&r)) l->regime = opt.longrope;
  return {ctx, std::move(r)};
}

/// The distinct plans of one config: equal (context, rule) pairs give one shared plan, and the
/// frequencies of all distinct plans together are bounded by max_config_frequencies.
class plan_pool {
 public:
  std::shared_ptr<const rotary::plan> get(layer_spec spec, std::string_view where) {
    for (const auto& p : m_plans)
      if (p->context() == spec.ctx && p->rule() == spec.rule) return p;
    const std::size_t pairs = std::visit([&](const auto& x) { return x.rotary_dim(spec.ctx) / 2; }, spec.rule);
    if (pairs > max_config_frequencies - m_pairs)
      config_fail(where, ": the distinct rules of this config need more than ", max_config_frequencies,
                  " frequencies together (rotary::max_config_frequencies; ", m_plans.size(),
                  " distinct plans hold ", m_pairs, ", this one adds ", pairs, ")");
    m_plans.push_back(std::make_shared<const rotary::plan>(spec.ctx, std::move(spec.rule)));
    m_pairs += pairs;
    return m_plans.back();
  }

 private:
  std::vector<std::shared_ptr<const rotary::plan>> m_plans;
  std::size_t m_pairs = 0;
};

/// NoPE layers and query scales of a model type (model_rules.hpp), from the config's root and its
/// rope dict (rope_parameters or rope_scaling), once the plans are built.
inline void read_model_fields(const json_value& root, const std::string& prefix, const model_rule& r,
                              const std::optional<json_value>& rope, std::string_view rope_key, model_config& m) {
  const auto key = [&](std::string_view k) { return prefix + std::string(k); };
  if (r.pairs == pair_layout::interleaved_by_default && !m.rope_interleave) m.rope_interleave = true;
  if ((r.pairs == pair_layout::interleaved && m.rope_interleave == false) ||
      (r.pairs == pair_layout::halves_always && m.rope_interleave == true))
    config_fail(key("rope_interleave"), ": ", *m.rope_interleave ? "true" : "false", ", which model_type \"",
                m.model_type, "\" does not read (its attention always pairs the channels ",
                r.pairs == pair_layout::interleaved ? "(2i, 2i + 1)" : "(i, i + d/2)", ")");
  if (r.pairs == pair_layout::interleaved) m.rope_interleave = true;
  if (r.nope != nope_rule::none) {
    const auto nl = root.find("no_rope_layers");
    if (m.num_hidden_layers == 0)
      config_fail(key("num_hidden_layers"), ": missing or 0, which model_type \"", m.model_type,
                  "\" needs for its NoPE layers");
    // Llama 4 falls back to the interval for an empty list too; SmolLM3 only for an absent one
    if (present(nl) && (r.nope == nope_rule::smollm3 || !nl->is_array() || nl->size() > 0)) {
      if (!nl->is_array()) config_fail(key("no_rope_layers"), ": expected an array of 0 and 1 (1: the layer uses RoPE)");
      if (nl->size() < m.num_hidden_layers)
        config_fail(key("no_rope_layers"), ": expected at least num_hidden_layers = ", m.num_hidden_layers,
                    " entries, got ", nl->size());
      m.rope_layers.reserve(m.num_hidden_layers);
      nl->for_each_item([&](const json_value& v) {
        const std::size_t x = json_count(v, key("no_rope_layers"));
        if (x > 1) config_fail(key("no_rope_layers"), ": expected entries 0 or 1, got ", x);
        if (m.rope_layers.size() < m.num_hidden_layers) m.rope_layers.push_back(x == 1);
      });
    } else {
      std::size_t interval = 4;  // the classes' default no_rope_layer_interval
      if (const auto iv = root.find("no_rope_layer_interval"); present(iv))
        interval = json_count(*iv, key("no_rope_layer_interval"));
      if (interval == 0) config_fail(key("no_rope_layer_interval"), ": expected a positive integer, got 0");
      for (std::size_t i = 0; i < m.num_hidden_layers; ++i) m.rope_layers.push_back((i + 1) % interval != 0);
    }
  }
  if (r.query_scale == query_scale_rule::llama4_temperature) {
    bool on = true;  // Llama4TextConfig's default
    if (const auto t = root.find("attn_temperature_tuning"); present(t)) {
      if (t->type() != json_kind::boolean) config_fail(key("attn_temperature_tuning"), ": expected true or false");
      on = t->boolean();
    }
    if (on) {
      m.query_scale.rule = query_scale_rule::llama4_temperature;
      m.query_scale_nope_only = true;
      m.query_scale.scale = 0.1;  // the class defaults: attn_scale 0.1, floor_scale 8192
      m.query_scale.length = 8192;
      if (const auto a = root.find("attn_scale"); present(a)) m.query_scale.scale = json_number(*a, key("attn_scale"));
      if (const auto f = root.find("floor_scale"); present(f)) m.query_scale.length = json_count(*f, key("floor_scale"));
      if (m.query_scale.length == 0) config_fail(key("floor_scale"), ": expected a positive integer, got 0");
    }
  } else if (r.query_scale == query_scale_rule::llama4_scaling_beta) {
    const std::string where = key(rope_key);
    if (m.layers.size() != 1 || m.layers.front().layer_type != "default" || !rope)
      config_fail(where, ": model_type \"", m.model_type,
                  "\" needs one flat rope dict with llama_4_scaling_beta (its attention reads it)");
    const param_reader rd(rope, where, m.layers.front().plan->rope_type());
    const plan& p = *m.layers.front().plan;
    m.query_scale.rule = query_scale_rule::llama4_scaling_beta;
    m.query_scale.scale = rd.required_number("llama_4_scaling_beta");
    if (const auto mp = rd.count("max_position_embeddings"); mp && *mp != p.context().max_position_embeddings)
      config_fail(where, ".max_position_embeddings: expected the model's max_position_embeddings = ",
                  p.context().max_position_embeddings, " (transformers does not read it), got ", *mp);
    // the pretrained length transformers' standardisation leaves in the dict
    std::size_t l0 = 0;
    std::visit(
        [&](const auto& x) {
          using R = std::remove_cvref_t<decltype(x)>;
          if constexpr (std::is_same_v<R, rules::yarn> || std::is_same_v<R, rules::llama3> ||
                        std::is_same_v<R, rules::longrope>)
            l0 = x.length(p.context());
          else
            l0 = rd.count("original_max_position_embeddings").value_or(0);
        },
        p.rule());
    if (l0 == 0)
      config_fail(where, ".original_max_position_embeddings: missing, which llama_4_scaling_beta divides the position by");
    m.query_scale.length = l0;
  }
}

}  // namespace detail

/// The positional configuration of a config.json text. Throws config_error (bad JSON, a missing
/// key, a key that may change a frequency and is not understood, a wrong type) or the
/// invalid_argument of rotary::plan (a value out of range).
inline model_config load_config(std::string_view json_text, const load_options& opt = {}) {
  using detail::config_fail;
  using detail::present;
  using detail::json_value;
  const auto doc = posenc::io::json::parse(
      json_text, [](std::size_t off, std::string_view msg) { config_fail("bad JSON at offset ", off, ": ", msg); },
      std::size_t{1} << 20);
  json_value root = doc.root();
  if (!root.is_object()) config_fail("config.json: expected a JSON object at the top level");
  model_config m;
  if (const auto mt = root.find("model_type"); present(mt) && mt->is_string()) m.model_type = std::string(mt->text());
  std::string prefix;
  if (const auto tc = root.find("text_config"); present(tc)) {
    if (!tc->is_object()) config_fail("text_config: expected an object");
    root = *tc;  // multimodal: the language model's fields
    prefix = "text_config.";
    if (const auto mt = root.find("model_type"); present(mt) && mt->is_string()) m.model_type = std::string(mt->text());
  }
  const auto key = [&](std::string_view k) { return prefix + std::string(k); };
  const std::string& mt = m.model_type;
  const model_rule* const mrule = find_model_rule(mt);
  if (const refused_model_type* const refused = find_refused_model_type(mt))
    config_fail(key("model_type"), ": \"", mt, "\" is a transformers 5.23 model type whose RoPE rules posenc has not ",
                "transcribed (", refused->source, "); refused rather than read by the generic rule");

  // every top-level key that names RoPE must be one the loader reads
  root.for_each_member([&](std::string_view k, const json_value&) {
    const bool ropey = k.find("rope") != std::string_view::npos || k.find("rotary") != std::string_view::npos;
    const bool nope_key = (k == "no_rope_layers" || k == "no_rope_layer_interval") && mrule != nullptr &&
                          mrule->nope != nope_rule::none;
    if (ropey && !nope_key && !detail::one_of(k, detail::understood_rope_keys))
      config_fail(key(k), ": not understood (a key that may change the RoPE frequencies is never ignored)");
  });

  const auto heads = root.find("num_attention_heads");
  if (present(heads)) m.num_attention_heads = detail::json_count(*heads, key("num_attention_heads"));
  if (const auto kv = root.find("num_key_value_heads"); present(kv))
    m.num_key_value_heads = detail::json_count(*kv, key("num_key_value_heads"));
  if (const auto a = root.find("alibi"); a && a->type() == detail::json_kind::boolean) m.alibi = a->boolean();
  if (const auto ac = root.find("attn_config"); ac && ac->is_object())
    if (const auto a = ac->find("alibi"); a && a->type() == detail::json_kind::boolean) m.alibi = a->boolean();
  if (const auto ri = root.find("rope_interleave"); present(ri)) {
    if (ri->type() != detail::json_kind::boolean) config_fail(key("rope_interleave"), ": expected true or false");
    m.rope_interleave = ri->boolean();
  }
  if (const auto nl = root.find("num_hidden_layers"); present(nl)) {
    m.num_hidden_layers = detail::json_count(*nl, key("num_hidden_layers"));
    if (m.num_hidden_layers > max_config_layers)
      config_fail(key("num_hidden_layers"), ": expected at most ", max_config_layers,
                  " layers (rotary::max_config_layers), got ", m.num_hidden_layers);
  }
  if (const auto lt = root.find("layer_types"); present(lt)) {
    if (!lt->is_array()) config_fail(key("layer_types"), ": expected an array of strings");
    if (lt->size() > max_config_layers)
      config_fail(key("layer_types"), ": expected at most ", max_config_layers,
                  " entries (rotary::max_config_layers), got ", lt->size());
    m.layer_types.reserve(lt->size());
    lt->for_each_item([&](const json_value& v) {
      if (!v.is_string()) config_fail(key("layer_types"), ": expected an array of strings");
      m.layer_types.emplace_back(detail::layer_type_name(v.text(), key("layer_types")));
    });
    if (m.num_hidden_layers > 0 && m.num_hidden_layers != m.layer_types.size())
      config_fail(key("layer_types"), ": expected num_hidden_layers = ", m.num_hidden_layers, " entries, got ",
                  m.layer_types.size());
  } else if (mt == "qwen3_next" && m.num_hidden_layers > 0) {
    // Qwen3NextConfig: every full_attention_interval-th layer full attention, the others linear
    std::size_t interval = 4;
    if (const auto fi = root.find("full_attention_interval"); present(fi))
      interval = detail::json_count(*fi, key("full_attention_interval"));
    if (interval == 0) config_fail(key("full_attention_interval"), ": expected a positive integer, got 0");
    for (std::size_t i = 0; i < m.num_hidden_layers; ++i)
      m.layer_types.emplace_back((i + 1) % interval != 0 ? "linear_attention" : "full_attention");
  } else if (mt == "olmo_hybrid" && m.num_hidden_layers > 0) {
    // OlmoHybridConfig.__post_init__: layer i % 4 == 3 full attention (under 4 layers: the last one)
    for (std::size_t i = 0; i < m.num_hidden_layers; ++i)
      m.layer_types.emplace_back(i % 4 == 3 || (m.num_hidden_layers < 4 && i + 1 == m.num_hidden_layers)
                                     ? "full_attention"
                                     : "linear_attention");
  }
  if (mt == "olmo_hybrid") {  // OlmoHybridConfig.validate_architecture
    if (m.layer_types.empty())
      config_fail(key("num_hidden_layers"), ": missing or 0 (and layer_types absent), which OlmoHybridConfig's ",
                  "default layer_types (every 4th layer full attention) need");
    const auto linear = std::count(m.layer_types.begin(), m.layer_types.end(), "linear_attention");
    if (linear == 0 || static_cast<std::size_t>(linear) == m.layer_types.size())
      config_fail(key("layer_types"), ": expected both linear_attention and attention layers (OlmoHybridConfig), got ",
                  linear, " linear_attention of ", m.layer_types.size());
  }

  rope_context ctx;
  ctx.semantics = opt.semantics;
  if (const auto q = root.find("qk_rope_head_dim"); present(q)) {
    ctx.head_dim = detail::json_width(*q, key("qk_rope_head_dim"));  // DeepSeek: head_dim = qk_rope_head_dim
  } else if (mt == "glm_moe_dsa") {
    // GlmMoeDsaConfig: head_dim = qk_rope_head_dim (default 64) whatever head_dim says; a null one it rejects
    if (root.find("qk_rope_head_dim"))
      config_fail(key("qk_rope_head_dim"), ": expected an integer, got null (which GlmMoeDsaConfig rejects)");
    ctx.head_dim = mrule->default_head_dim;
  } else if (const auto hd = root.find("head_dim"); present(hd) && detail::json_width(*hd, key("head_dim")) > 0) {
    ctx.head_dim = detail::json_width(*hd, key("head_dim"));
  } else if (mrule != nullptr && mrule->head_dim == head_dim_source::class_default && !root.find("head_dim")) {
    ctx.head_dim = mrule->default_head_dim;  // absent: the configuration class's default (null: derived)
  } else {
    if (!mt.empty() && (mrule == nullptr || mrule->head_dim == head_dim_source::required))
      config_fail(key("head_dim"), ": missing, and model_type \"", mt,
                  "\" does not derive it as hidden_size / num_attention_heads in transformers");
    const auto hidden = root.find("hidden_size");
    if (!present(hidden))
      config_fail(key("head_dim"), ": missing (and hidden_size is missing too, so it cannot be derived)");
    if (!present(heads))
      config_fail(key("head_dim"), ": missing (and num_attention_heads is missing too, so it cannot be derived)");
    const std::size_t hs = detail::json_count(*hidden, key("hidden_size"));
    if (m.num_attention_heads == 0) config_fail(key("num_attention_heads"), ": expected a positive integer, got 0");
    ctx.head_dim = hs / m.num_attention_heads;  // HF: hidden_size // num_attention_heads
    if (ctx.head_dim > max_config_head_dim)
      config_fail(key("hidden_size"), " / ", key("num_attention_heads"), ": expected a head width of at most ",
                  max_config_head_dim, " (rotary::max_config_head_dim), got ", hs, " / ", m.num_attention_heads, " = ",
                  ctx.head_dim);
  }
  if (const auto mp = root.find("max_position_embeddings"); present(mp))
    ctx.max_position_embeddings = detail::json_count(*mp, key("max_position_embeddings"));
  std::size_t top_original = 0;
  if (const auto o = root.find("original_max_position_embeddings"); present(o)) {
    top_original = detail::json_count(*o, key("original_max_position_embeddings"));
    if (top_original == 0)
      config_fail(key("original_max_position_embeddings"), ": expected a positive integer, got 0");
  }
  std::optional<double> top_theta, top_partial, local_theta;
  if (const auto t = root.find("rope_theta"); present(t)) top_theta = detail::json_number(*t, key("rope_theta"));
  if (const auto p = root.find("partial_rotary_factor"); present(p)) {
    top_partial = detail::json_number(*p, key("partial_rotary_factor"));
    detail::check_partial(*top_partial, key("partial_rotary_factor"));
  }
  if (mt == "phi3" && top_original == 0) top_original = 4096;  // Phi3Config's default, which transformers 5 applies
  // the class's default partial_rotary_factor (PhiConfig: absent or null; Glm4MoeConfig,
  // Qwen3NextConfig: absent, by kwargs.setdefault)
  if (mrule != nullptr && mrule->default_partial > 0 && !top_partial && (mt == "phi" || !root.find("partial_rotary_factor")))
    top_partial = mrule->default_partial;
  if (const auto l = root.find("rope_local_base_freq"); present(l))
    local_theta = detail::json_number(*l, key("rope_local_base_freq"));

  // the model type's default theta (transformers' default_theta) for the layers that give none
  const auto default_theta = [&](std::string_view layer_type) -> std::optional<double> {
    if (detail::is_gemma3(mt)) return layer_type == "sliding_attention" ? 10000.0 : 1000000.0;
    if (mt.empty()) return 10000.0;
    if (mrule != nullptr && mrule->default_theta > 0) return mrule->default_theta;
    return std::nullopt;
  };
  // per_layer_config (transformers 5: {"05": {"head_dim": 512}, ...}, keyed by layer index): the
  // head_dim of a layer type, which every layer of that type must agree on
  std::unordered_map<std::string_view, std::size_t> type_head_dim;
  if (const auto plc = root.find("per_layer_config"); present(plc)) {
    if (!plc->is_object()) config_fail(key("per_layer_config"), ": expected an object");
    plc->for_each_member([&](std::string_view idx, const json_value& v) {
      const std::string where = key("per_layer_config.") + std::string(idx);
      if (!v.is_object()) config_fail(where, ": expected an object");
      v.for_each_member([&](std::string_view k, const json_value&) {
        const bool ropey = k.find("rope") != std::string_view::npos || k.find("rotary") != std::string_view::npos ||
                           k.find("position") != std::string_view::npos || k == "hidden_size" ||
                           k == "num_attention_heads";
        if (ropey) config_fail(where, ".", k, ": a per-layer override of a RoPE field is not understood");
      });
      const auto hd = v.find("head_dim");
      if (!present(hd)) return;
      std::size_t layer = 0;
      const auto [p, ec] = std::from_chars(idx.data(), idx.data() + idx.size(), layer);
      if (ec != std::errc() || p != idx.data() + idx.size() || layer >= m.layer_types.size())
        config_fail(where, ": expected a layer index below the ", m.layer_types.size(), " entries of layer_types");
      const std::string& lt = m.layer_types[layer];
      const std::size_t d = detail::json_width(*hd, where + ".head_dim");
      const auto [it, added] = type_head_dim.try_emplace(lt, d);
      if (!added && it->second != d)
        config_fail(where, ".head_dim: layers of type ", lt, " disagree (", it->second, " and ", d, ")");
    });
  }
  const auto head_dim_of = [&](std::string_view layer_type) -> std::size_t {
    if (const auto it = type_head_dim.find(layer_type); it != type_head_dim.end()) return it->second;
    if (detail::is_gemma4(mt) && layer_type == "full_attention") {
      if (const auto g = root.find("global_head_dim"); present(g)) return detail::json_width(*g, key("global_head_dim"));
      return 512;  // Gemma4TextConfig's default
    }
    return ctx.head_dim;
  };

  const auto rp = root.find("rope_parameters");
  const auto rs = root.find("rope_scaling");
  if (present(rp) && present(rs))
    config_fail(key("rope_scaling"), ": given together with rope_parameters (transformers 5 would use rope_scaling "
                                     "and drop rope_parameters); keep one");
  detail::plan_pool pool;
  if (present(rp)) {
    if (!rp->is_object()) config_fail(key("rope_parameters"), ": expected an object or null");
    // keyed by layer type (transformers 5.23: when a key is one of the model's layer types, the
    // entries of layer_types; without layer_types, the two a config class derives): then every key
    // must be a layer type of the model, each at most once
    std::unordered_set<std::string_view> model_types(m.layer_types.begin(), m.layer_types.end());
    if (m.layer_types.empty()) model_types = {"full_attention", "sliding_attention"};
    std::vector<std::pair<std::string, json_value>> nested;
    std::string flat_key;
    rp->for_each_member([&](std::string_view k, const json_value& v) {
      if (model_types.count(k) != 0 && (v.is_object() || v.type() == detail::json_kind::null))
        nested.emplace_back(std::string(k), v);
      else if (flat_key.empty())
        flat_key = std::string(k);
    });
    if (!nested.empty() && !flat_key.empty())
      config_fail(key("rope_parameters"), ".", flat_key, ": not a layer type of the model (",
                  m.layer_types.empty() ? "without layer_types: full_attention or sliding_attention"
                                        : "the entries of layer_types",
                  "), in a rope_parameters keyed by layer type (", nested.front().first, ", ...)");
    if (nested.empty()) {
      ctx.original_max_position_embeddings = top_original;  // transformers 5: the model-level field overrides
      rope_context c = ctx;
      c.head_dim = head_dim_of("default");
      m.layers.push_back({"default", pool.get(detail::layer_from(*rp, key("rope_parameters"), c,
                                                                 top_theta ? top_theta : default_theta("default"), false,
                                                                 opt, top_partial, mt, false),
                                              key("rope_parameters"))});
    } else {
      for (const auto& [lt, v] : nested) {
        for (const auto& l : m.layers)
          if (l.layer_type == lt) config_fail(key("rope_parameters"), ".", lt, ": given twice");
        rope_context c = ctx;
        c.head_dim = head_dim_of(lt);
        const std::optional<json_value> params = v.type() == detail::json_kind::null ? std::nullopt
                                                                                     : std::optional<json_value>(v);
        std::optional<double> fallback = top_theta ? top_theta : default_theta(lt);
        if (lt == "sliding_attention" && local_theta) fallback = local_theta;
        const std::string where = key("rope_parameters") + "." + lt;
        m.layers.push_back(
            {lt, pool.get(detail::layer_from(params, where, c, fallback, false, opt, top_partial, mt, true), where)});
      }
    }
  } else {
    // legacy: rope_scaling + rope_theta (+ Gemma 3's rope_local_base_freq for its sliding layers)
    ctx.original_max_position_embeddings = top_original;
    // Olmo3Config turns the legacy form into per-layer-type dicts: rope_scaling on the full-attention
    // layers only, and rope_theta too, the sliding layers keeping default_theta (docs/errata.md)
    if (mt == "olmo3" && (present(rs) || (top_theta && *top_theta != 500000.0)))
      config_fail(key(present(rs) ? "rope_scaling" : "rope_theta"), ": model_type \"olmo3\" applies it to its "
                  "full-attention layers only (transformers 5.23's Olmo3Config); give rope_parameters keyed by layer type");
    const std::optional<json_value> scaling = present(rs) ? rs : std::nullopt;
    const bool per_type = detail::is_gemma3(mt) || local_theta.has_value();
    const std::string main_type = per_type ? "full_attention" : "default";
    rope_context c = ctx;
    c.head_dim = head_dim_of(main_type);
    m.layers.push_back({main_type, pool.get(detail::layer_from(scaling, key("rope_scaling"), c,
                                                               top_theta ? top_theta : default_theta(main_type), true,
                                                               opt, top_partial, mt, false),
                                            key("rope_scaling"))});
    if (per_type) {
      rope_context sc = ctx;
      sc.head_dim = head_dim_of("sliding_attention");
      m.layers.push_back({"sliding_attention",
                          pool.get(detail::layer_from(std::nullopt, key("rope_local_base_freq"), sc,
                                                      local_theta ? local_theta : default_theta("sliding_attention"),
                                                      false, opt, top_partial, mt, false),
                                   key("rope_local_base_freq"))});
    }
  }
  if (mrule != nullptr) detail::read_model_fields(root, prefix, *mrule, present(rp) ? rp : rs,
                                                   present(rp) ? "rope_parameters" : "rope_scaling", m);
  if (mt.starts_with("hunyuan_v1") && !present(root.find("head_dim")))
    for (const auto& l : m.layers)
      if (std::holds_alternative<rules::ntk>(l.plan->rule()))
        config_fail(key("head_dim"), ": missing, which Hunyuan's ntk_alpha (dynamic with alpha) reads as config.head_dim");
  for (std::size_t i = 0; i < m.layer_types.size(); ++i)
    if (m.layer_types[i] == "linear_attention") {  // Mamba / Gated DeltaNet / lightning layers: no RoPE
      if (m.rope_layers.empty()) m.rope_layers.assign(m.layer_types.size(), true);
      if (i < m.rope_layers.size()) m.rope_layers[i] = false;
    }
  // transformers 5's dynamic, yarn and longrope read getattr(config, "head_dim", ...): a null
  // head_dim is no width for them (transformers raises TypeError), not hidden_size / heads
  if (const auto hd = root.find("head_dim"); opt.semantics == semantics::transformers_5 && hd &&
                                             hd->type() == detail::json_kind::null && !present(root.find("qk_rope_head_dim")))
    for (const auto& l : m.layers)
      if (std::holds_alternative<rules::dynamic>(l.plan->rule()) || std::holds_alternative<rules::yarn>(l.plan->rule()) ||
          std::holds_alternative<rules::longrope>(l.plan->rule()))
        config_fail(key("head_dim"), ": null, which transformers 5 cannot use for rope_type '", l.plan->rope_type(),
                    "' (it reads head_dim without the hidden_size / num_attention_heads fallback); give head_dim");
  return m;
}

/// load_config with transformers 4.46 semantics and the given LongRoPE regime rule.
inline model_config load_config(std::string_view json_text, longrope_rule rule) {
  return load_config(json_text, load_options{semantics::transformers_4_46, rule});
}

}  // namespace posenc::rotary
