// SPDX-License-Identifier: MIT
// The legacy description of a model's RoPE: rope_config (one struct with every rule's fields and
// a rope_type enum), with the semantics of transformers 4.46. It is a thin adapter of the rule
// table (posenc/rotary/rules/rules.hpp): to_rule / to_plan turn it into a rotary::rule and a validated
// rotary::plan, and validate / compute_frequencies are the plan's. New rules (proportional, ...)
// are only in the rule table; rope_config keeps the seven rules it always had.
// docs/extrapolation.md states each formula and where HF's model classes deviate.
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>
#include <vector>

#include <posenc/core/error.hpp>
#include <posenc/rotary/frequencies.hpp>
#include <posenc/rotary/rules/rules.hpp>

namespace posenc::rotary {

/// The rules a rope_config can name (HF's `rope_scaling["rope_type"]`; `ntk` is the static
/// NTK-aware rule, which HF does not register).
enum class rope_type { default_rope, linear, ntk, dynamic, yarn, longrope, llama3 };

namespace detail {
// the rope_config rules, in enum order, as rule-table types
using legacy_rules = rule_types<rules::default_rope, rules::linear, rules::ntk, rules::dynamic, rules::yarn,
                                rules::longrope, rules::llama3>;
}  // namespace detail

/// HF's name of a rope_type ("default", "linear", "ntk", "dynamic", "yarn", "longrope", "llama3").
constexpr std::string_view name(rope_type t) noexcept {
  const auto i = static_cast<std::size_t>(t);
  return i < detail::legacy_rules::names.size() ? detail::legacy_rules::names[i] : std::string_view("?");
}

/// The rope_type of a name; "su" (the first Phi-3 configs) is LongRoPE. nullopt if unknown.
constexpr std::optional<rope_type> parse_rope_type(std::string_view s) noexcept {
  for (std::size_t i = 0; i < detail::legacy_rules::names.size(); ++i)
    if (s == detail::legacy_rules::names[i]) return static_cast<rope_type>(i);
  if (s == "su") return rope_type::longrope;
  return std::nullopt;
}

/// One model's rotary configuration (transformers 4.46 semantics). Fields that a rule does not
/// use are ignored by it.
struct rope_config {
  rope_type type = rope_type::default_rope;
  double theta = 10000.0;                      ///< rope_theta (> 1)
  std::size_t head_dim = 0;                    ///< head_dim, or hidden_size / num_attention_heads
  double partial_rotary_factor = 1.0;          ///< rotary_dim = int(head_dim * partial_rotary_factor), in (0, 1]
  std::size_t max_position_embeddings = 0;     ///< dynamic, yarn and longrope need it (> 0)
  /// llama3: required; yarn: the pretrained length of the correction range (0: max_position_embeddings);
  /// longrope: Phi-3's top-level field (0: absent, then `factor` is used).
  std::size_t original_max_position_embeddings = 0;
  double factor = 1.0;                         ///< linear, ntk, dynamic, yarn, llama3 (> 0); longrope without original_max
  double beta_fast = 32.0, beta_slow = 1.0;    ///< yarn ramp (rotations; beta_fast > beta_slow > 0)
  std::optional<double> attention_factor{};    ///< yarn, longrope: overrides the derived factor (> 0)
  std::optional<double> mscale{}, mscale_all_dim{};  ///< yarn (DeepSeek-V2/V3 configs): attention factor ratio
  std::vector<double> short_factor{}, long_factor{}; ///< longrope: rotary_dim / 2 positive values each
  longrope_rule longrope_switch = longrope_rule::init_function;
  double low_freq_factor = 1.0, high_freq_factor = 4.0;  ///< llama3 (0 < low < high)
};

/// The rotated width: int(head_dim * partial_rotary_factor) (not validated).
inline std::size_t rotary_dim(const rope_config& c) {
  return detail::scaled_rotary_dim({c.theta, c.head_dim, c.partial_rotary_factor, 0, 0, semantics::transformers_4_46});
}

/// The model fields of c. A rope_config follows transformers 4.46 (its LongRoPE regime rule
/// selectable), except yarn, which follows transformers 5 as rope_config always computed it (the
/// correction range from original_max_position_embeddings when given, the mscale ratio).
inline rope_context to_context(const rope_config& c) {
  return {c.theta, c.head_dim, c.partial_rotary_factor, c.max_position_embeddings, 0,
          c.type == rope_type::yarn ? semantics::transformers_5 : semantics::transformers_4_46};
}

/// c's rule with its parameters. Throws invalid_argument for a rope_type outside the enum.
inline rule to_rule(const rope_config& c) {
  const auto original = [&]() -> std::optional<std::size_t> {
    return c.original_max_position_embeddings > 0 ? std::optional<std::size_t>(c.original_max_position_embeddings)
                                                  : std::nullopt;
  };
  switch (c.type) {
    case rope_type::default_rope: return rules::default_rope{};
    case rope_type::linear: return rules::linear{{}, c.factor};
    case rope_type::ntk: return rules::ntk{{}, c.factor};
    case rope_type::dynamic: return rules::dynamic{{}, c.factor};
    case rope_type::yarn: {
      rules::yarn y;
      y.factor = c.factor;
      y.attention_factor = c.attention_factor;
      y.beta_fast = c.beta_fast;
      y.beta_slow = c.beta_slow;
      y.mscale = c.mscale;
      y.mscale_all_dim = c.mscale_all_dim;
      y.original_max_position_embeddings = original();
      return y;
    }
    case rope_type::longrope: {
      rules::longrope l;
      l.short_factor = c.short_factor;
      l.long_factor = c.long_factor;
      l.factor = c.factor;
      l.attention_factor = c.attention_factor;
      l.original_max_position_embeddings = original();
      l.regime = c.longrope_switch;
      return l;
    }
    case rope_type::llama3: {
      rules::llama3 l;
      l.factor = c.factor;
      l.low_freq_factor = c.low_freq_factor;
      l.high_freq_factor = c.high_freq_factor;
      l.original_max_position_embeddings = original();
      return l;
    }
  }
  posenc::detail::fail("rotary::rope_config", "type: unknown rope_type (", static_cast<int>(c.type), ")");
}

/// The validated plan of c (transformers 4.46 semantics).
inline plan to_plan(const rope_config& c) { return plan(to_context(c), to_rule(c)); }

/// Validate c once; throws posenc::invalid_argument (non_finite_error for NaN/Inf, shape_error for
/// factor lists of the wrong length) naming the field, the expected range and the value.
inline void validate(const rope_config& c) { (void)to_plan(c); }

/// The inverse frequencies and attention factor of c's rule for a sequence of seq_len tokens
/// (seq_len = 0: "not given", HF's seq_len=None: the rule's value at initialisation). Only the
/// dynamic and longrope rules depend on seq_len.
inline frequencies compute_frequencies(const rope_config& c, std::size_t seq_len = 0) {
  return to_plan(c).frequencies(seq_len);
}

}  // namespace posenc::rotary
