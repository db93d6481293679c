// SPDX-License-Identifier: MIT
// The RoPE context-extension rules with the semantics of the `ROPE_INIT_FUNCTIONS` of Hugging Face
// transformers' modeling_rope_utils.py (4.46): default, linear (position interpolation, Chen et
// al. 2023), static NTK-aware base scaling (bloc97), dynamic NTK, YaRN (Peng et al. 2023),
// LongRoPE (Ding et al. 2024; Phi-3) and Llama 3. A rope_config is validated once; then
// compute_frequencies(config, seq_len) forms every inv_freq in long double (HF forms them in
// float32) and returns them with the attention factor (the cos/sin multiplier).
// docs/extrapolation.md states each formula and where HF's model classes deviate.
#pragma once

#include <cmath>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <posenc/core/checked.hpp>
#include <posenc/core/error.hpp>
#include <posenc/numeric/phase.hpp>
#include <posenc/rotary/frequencies.hpp>

namespace posenc::rotary {

/// The rule (HF's `rope_scaling["rope_type"]`; `ntk` is the static NTK-aware rule, which HF 4.46
/// does not register).
enum class rope_type { default_rope, linear, ntk, dynamic, yarn, longrope, llama3 };

/// HF's name of a rope_type ("default", "linear", "ntk", "dynamic", "yarn", "longrope", "llama3").
constexpr std::string_view name(rope_type t) noexcept {
  switch (t) {
    case rope_type::default_rope: return "default";
    case rope_type::linear: return "linear";
    case rope_type::ntk: return "ntk";
    case rope_type::dynamic: return "dynamic";
    case rope_type::yarn: return "yarn";
    case rope_type::longrope: return "longrope";
    case rope_type::llama3: return "llama3";
  }
  return "?";
}

/// The rope_type of a name; "su" (the first Phi-3 configs) is LongRoPE. nullopt if unknown.
constexpr std::optional<rope_type> parse_rope_type(std::string_view s) noexcept {
  for (auto t : {rope_type::default_rope, rope_type::linear, rope_type::ntk, rope_type::dynamic, rope_type::yarn,
                 rope_type::longrope, rope_type::llama3})
    if (s == name(t)) return t;
  if (s == "su") return rope_type::longrope;
  return std::nullopt;
}

/// How LongRoPE picks its factors and attention factor from the sequence length L0 =
/// original_max_position_embeddings:
///  - init_function (HF's _compute_longrope_parameters): short factors and attention factor 1
///    when seq_len < L0, long factors and the scaled attention factor otherwise;
///  - phi3_module (the Phi-3 modelling code's LongRoPE rotary module): long factors only when
///    seq_len > L0; the attention factor of the long regime always, also for short sequences.
enum class longrope_rule { init_function, phi3_module };

/// One model's rotary configuration. Fields that a rule does not use are ignored by it.
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


namespace detail {

inline std::size_t rotary_dim_of(const rope_config& c) {
  // HF: int(head_dim * partial_rotary_factor), truncated toward zero. A product outside
  // [0, 2^64) (or NaN) has no size_t value: 0, which validate() rejects.
  const double x = static_cast<double>(c.head_dim) * c.partial_rotary_factor;
  return x >= 0 && x < 18446744073709551616.0 ? static_cast<std::size_t>(x) : 0;
}

inline void require_positive(double v, std::string_view where, std::string_view what) {
  posenc::detail::require<non_finite_error>(std::isfinite(v), where, what, ": expected a finite value, got ", v);
  posenc::detail::require(v > 0, where, what, ": expected a value > 0, got ", v);
}

/// base^(-2k/dim) in long double.
inline numeric::wide default_inv_freq(std::size_t k, std::size_t dim, numeric::wide base) {
  return std::exp(-std::log(base) * static_cast<numeric::wide>(2 * k) / static_cast<numeric::wide>(dim));
}

}  // namespace detail

/// The rotated width: int(head_dim * partial_rotary_factor) (not validated).
inline std::size_t rotary_dim(const rope_config& c) { return detail::rotary_dim_of(c); }

/// Validate c once; throws posenc::invalid_argument (non_finite_error for NaN/Inf, shape_error for
/// factor lists of the wrong length) naming the field, the expected range and the value.
inline void validate(const rope_config& c) {
  constexpr std::string_view where = "rotary::rope_config";
  using posenc::detail::require;
  require(c.type == rope_type::default_rope || c.type == rope_type::linear || c.type == rope_type::ntk ||
              c.type == rope_type::dynamic || c.type == rope_type::yarn || c.type == rope_type::longrope ||
              c.type == rope_type::llama3,
          where, "type: unknown rope_type (", static_cast<int>(c.type), ")");
  posenc::detail::require<non_finite_error>(std::isfinite(c.theta), where, "theta: expected a finite rope_theta, got ",
                                            c.theta);
  require(c.theta > 1, where, "theta: expected rope_theta > 1, got ", c.theta);
  require(c.head_dim >= 2, where, "head_dim: expected head_dim >= 2, got ", c.head_dim);
  (void)checked::extent(c.head_dim, where, "head_dim");
  posenc::detail::require<non_finite_error>(std::isfinite(c.partial_rotary_factor), where,
                                            "partial_rotary_factor: expected a finite value, got ",
                                            c.partial_rotary_factor);
  require(c.partial_rotary_factor > 0 && c.partial_rotary_factor <= 1, where,
          "partial_rotary_factor: expected a value in (0, 1], got ", c.partial_rotary_factor);
  const std::size_t dim = rotary_dim(c);
  require(dim >= 2 && dim % 2 == 0, where,
          "rotary dim: expected an even rotary_dim = int(head_dim * partial_rotary_factor) >= 2, got ", dim,
          " (head_dim ", c.head_dim, ", partial_rotary_factor ", c.partial_rotary_factor, ")");
  const std::string_view rule = name(c.type);
  switch (c.type) {
    case rope_type::default_rope: break;
    case rope_type::linear:
    case rope_type::ntk: detail::require_positive(c.factor, where, "factor"); break;
    case rope_type::dynamic:
      detail::require_positive(c.factor, where, "factor");
      require(c.max_position_embeddings > 0, where, "max_position_embeddings: rope_type '", rule,
              "' needs max_position_embeddings > 0, got 0");
      break;
    case rope_type::yarn:
      detail::require_positive(c.factor, where, "factor");
      require(c.max_position_embeddings > 0 || c.original_max_position_embeddings > 0, where,
              "max_position_embeddings: rope_type 'yarn' needs max_position_embeddings (or "
              "original_max_position_embeddings) > 0, got 0");
      detail::require_positive(c.beta_fast, where, "beta_fast");
      detail::require_positive(c.beta_slow, where, "beta_slow");
      require(c.beta_fast > c.beta_slow, where, "beta_fast: expected beta_fast > beta_slow, got beta_fast = ",
              c.beta_fast, " and beta_slow = ", c.beta_slow);
      if (c.attention_factor) detail::require_positive(*c.attention_factor, where, "attention_factor");
      if (c.mscale) detail::require_positive(*c.mscale, where, "mscale");
      if (c.mscale_all_dim) detail::require_positive(*c.mscale_all_dim, where, "mscale_all_dim");
      break;
    case rope_type::longrope: {
      if (c.original_max_position_embeddings > 0) {
        require(c.max_position_embeddings > 0, where,
                "max_position_embeddings: rope_type 'longrope' with original_max_position_embeddings needs "
                "max_position_embeddings > 0, got 0");
      } else {
        detail::require_positive(c.factor, where, "factor");
        require(c.max_position_embeddings > 1, where,
                "max_position_embeddings: rope_type 'longrope' needs max_position_embeddings > 1, got ",
                c.max_position_embeddings);
      }
      if (c.attention_factor) detail::require_positive(*c.attention_factor, where, "attention_factor");
      require<shape_error>(c.short_factor.size() == dim / 2, where, "short_factor: expected rotary_dim / 2 = ",
                           dim / 2, " values, got ", c.short_factor.size());
      require<shape_error>(c.long_factor.size() == dim / 2, where, "long_factor: expected rotary_dim / 2 = ", dim / 2,
                           " values, got ", c.long_factor.size());
      for (std::size_t k = 0; k < dim / 2; ++k) {
        // the item's name is formed only for the error message (10^6-item lists stay cheap)
        if (!(std::isfinite(c.short_factor[k]) && c.short_factor[k] > 0))
          detail::require_positive(c.short_factor[k], where, "short_factor[" + std::to_string(k) + "]");
        if (!(std::isfinite(c.long_factor[k]) && c.long_factor[k] > 0))
          detail::require_positive(c.long_factor[k], where, "long_factor[" + std::to_string(k) + "]");
      }
      require(c.longrope_switch == longrope_rule::init_function || c.longrope_switch == longrope_rule::phi3_module,
              where, "longrope_switch: expected longrope_rule::init_function or longrope_rule::phi3_module");
      break;
    }
    case rope_type::llama3:
      detail::require_positive(c.factor, where, "factor");
      require(c.original_max_position_embeddings > 0, where,
              "original_max_position_embeddings: rope_type 'llama3' needs original_max_position_embeddings > 0, got 0");
      detail::require_positive(c.low_freq_factor, where, "low_freq_factor");
      detail::require_positive(c.high_freq_factor, where, "high_freq_factor");
      require(c.high_freq_factor > c.low_freq_factor, where,
              "high_freq_factor: expected high_freq_factor > low_freq_factor, got high_freq_factor = ",
              c.high_freq_factor, " and low_freq_factor = ", c.low_freq_factor);
      break;
  }
}

namespace detail {

/// YaRN's (low, high) dimension range (HF's find_correction_range), in long double.
inline std::pair<numeric::wide, numeric::wide> yarn_range(numeric::wide beta_fast, numeric::wide beta_slow,
                                                          std::size_t dim, numeric::wide base, numeric::wide length) {
  constexpr numeric::wide two_pi = 6.283185307179586476925286766559005768L;
  const auto correction_dim = [&](numeric::wide rotations) {
    return static_cast<numeric::wide>(dim) * std::log(length / (rotations * two_pi)) / (2 * std::log(base));
  };
  numeric::wide low = std::floor(correction_dim(beta_fast));
  numeric::wide high = std::ceil(correction_dim(beta_slow));
  if (low < 0) low = 0;
  if (high > static_cast<numeric::wide>(dim - 1)) high = static_cast<numeric::wide>(dim - 1);
  return {low, high};
}

/// YaRN's get_mscale: 1 for scale <= 1, else 0.1 m ln(scale) + 1.
inline numeric::wide yarn_mscale(numeric::wide scale, numeric::wide m) {
  return scale <= 1 ? numeric::wide(1) : numeric::wide(0.1L) * m * std::log(scale) + 1;
}

}  // namespace detail

/// The inverse frequencies and attention factor of c's rule for a sequence of seq_len tokens
/// (seq_len = 0: "not given", HF's seq_len=None: the rule's value at initialisation). Only the
/// dynamic and longrope rules depend on seq_len.
inline frequencies compute_frequencies(const rope_config& c, std::size_t seq_len = 0) {
  using W = numeric::wide;
  validate(c);
  const std::size_t dim = rotary_dim(c), h = dim / 2;
  const W base = static_cast<W>(c.theta), factor = static_cast<W>(c.factor);
  frequencies f;
  f.inv_freq = checked::make_vector<W>(h, "rotary::compute_frequencies", "rotary_dim / 2");
  f.attention_factor = 1.0;
  const auto fill_default = [&](W b) {
    for (std::size_t k = 0; k < h; ++k) f.inv_freq[k] = detail::default_inv_freq(k, dim, b);
  };
  const W expo = static_cast<W>(dim) / static_cast<W>(dim - 2);  // dim / (dim - 2); dim = 2: see ntk below
  switch (c.type) {
    case rope_type::default_rope: fill_default(base); break;
    case rope_type::linear:
      fill_default(base);
      for (auto& w : f.inv_freq) w /= factor;
      break;
    case rope_type::ntk:
    case rope_type::dynamic: {
      // base' = base * s^(dim / (dim - 2)); ntk: s = factor; dynamic: s = factor L / L_max - (factor - 1)
      // with L = max(seq_len, L_max). dim = 2 has a single pair with inv_freq 1 whatever the base.
      W s = factor;
      if (c.type == rope_type::dynamic) {
        const W lmax = static_cast<W>(c.max_position_embeddings);
        const W len = seq_len > c.max_position_embeddings ? static_cast<W>(seq_len) : lmax;
        s = factor * len / lmax - (factor - 1);
      }
      fill_default(dim == 2 ? base : base * std::pow(s, expo));
      break;
    }
    case rope_type::yarn: {
      const W length = static_cast<W>(c.original_max_position_embeddings > 0 ? c.original_max_position_embeddings
                                                                             : c.max_position_embeddings);
      auto [low, high] = detail::yarn_range(c.beta_fast, c.beta_slow, dim, base, length);
      if (low == high) high += W(0.001L);  // HF: prevent the singularity
      for (std::size_t k = 0; k < h; ++k) {
        const W extrapolated = detail::default_inv_freq(k, dim, base);
        const W interpolated = extrapolated / factor;
        W ramp = (static_cast<W>(k) - low) / (high - low);
        ramp = ramp < 0 ? W(0) : (ramp > 1 ? W(1) : ramp);
        // HF: inv_freq_extrapolation_factor = 1 - ramp
        f.inv_freq[k] = interpolated * ramp + extrapolated * (1 - ramp);
      }
      if (c.attention_factor)
        f.attention_factor = *c.attention_factor;
      else if (c.mscale && c.mscale_all_dim)
        f.attention_factor = static_cast<double>(detail::yarn_mscale(factor, static_cast<W>(*c.mscale)) /
                                                 detail::yarn_mscale(factor, static_cast<W>(*c.mscale_all_dim)));
      else
        f.attention_factor = static_cast<double>(W(0.1L) * std::log(factor) + 1);
      break;
    }
    case rope_type::longrope: {
      W lmax, expanded;
      bool use_long;
      if (c.original_max_position_embeddings > 0) {
        lmax = static_cast<W>(c.original_max_position_embeddings);
        const W full = static_cast<W>(c.max_position_embeddings);
        if (c.longrope_switch == longrope_rule::init_function) {
          // HF: expanded = original when seq_len is given and below it, else max_position_embeddings
          expanded = (seq_len > 0 && seq_len < c.original_max_position_embeddings) ? lmax : full;
          use_long = expanded > lmax;
        } else {
          expanded = full;  // the module's attention factor does not depend on seq_len
          use_long = seq_len > c.original_max_position_embeddings;
        }
      } else {
        lmax = static_cast<W>(c.max_position_embeddings);
        expanded = lmax * factor;
        use_long = expanded > lmax;
      }
      const W scale = expanded / lmax;
      if (c.attention_factor)
        f.attention_factor = *c.attention_factor;
      else
        f.attention_factor = scale <= 1 ? 1.0 : static_cast<double>(std::sqrt(1 + std::log(scale) / std::log(lmax)));
      const std::vector<double>& ext = use_long ? c.long_factor : c.short_factor;
      for (std::size_t k = 0; k < h; ++k) f.inv_freq[k] = detail::default_inv_freq(k, dim, base) / static_cast<W>(ext[k]);
      break;
    }
    case rope_type::llama3: {
      constexpr W two_pi = 6.283185307179586476925286766559005768L;
      const W old_len = static_cast<W>(c.original_max_position_embeddings);
      const W lo = static_cast<W>(c.low_freq_factor), hi = static_cast<W>(c.high_freq_factor);
      const W low_freq_wavelen = old_len / lo, high_freq_wavelen = old_len / hi;
      for (std::size_t k = 0; k < h; ++k) {
        const W w = detail::default_inv_freq(k, dim, base);
        const W wavelen = two_pi / w;
        if (wavelen < high_freq_wavelen) {
          f.inv_freq[k] = w;  // high frequencies: unchanged
        } else if (wavelen > low_freq_wavelen) {
          f.inv_freq[k] = w / factor;  // low frequencies: interpolated
        } else {
          const W smooth = (old_len / wavelen - lo) / (hi - lo);
          f.inv_freq[k] = (1 - smooth) * w / factor + smooth * w;
        }
      }
      break;
    }
  }
  return f;
}

}  // namespace posenc::rotary
