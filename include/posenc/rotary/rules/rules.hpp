// SPDX-License-Identifier: MIT
// The RoPE rule table: every rope_type (Hugging Face transformers' ROPE_INIT_FUNCTIONS, plus
// posenc's static "ntk") is one small type in rotary::rule_list that carries its name, the
// rope_parameters keys it accepts, how it reads them from a JSON object, its validation and its
// frequencies / attention factor. The loader (config.hpp), the validator, the name list and the
// legacy rope_config adapter (scaling.hpp) all iterate that one list, so adding a rule is one new
// type and one list entry (docs/architecture.md shows how).
//
// A rotary::plan is the validated result: a rope_context (the model's fields: theta, head_dim,
// partial_rotary_factor, the position lengths, the transformers semantics) and one rule; it owns
// the frequencies at initialisation and recomputes them for a sequence length where the rule
// depends on it (dynamic, longrope).
//
// Each rule's formula is written once, in double-word long double arithmetic
// (posenc/numeric/extended.hpp, exp and log included): compute returns the exact frequencies
// (rotary::exact_frequencies, ~2^-120 relative), from which the plan makes inv_freq (rounded to
// long double: the float and half paths) and inv_freq_lo (the rest: the double paths' exact phase).
// The attention factors are computed in double, as transformers' Python computes them.
//
// Semantics: transformers 5.x's modeling_rope_utils.py by default; transformers 4.46's (yarn's
// correction range from rope_scaling's original_max_position_embeddings or max_position_embeddings,
// longrope's short-regime attention factor 1, no `truncate`, no `proportional`) by
// semantics::transformers_4_46. docs/extrapolation.md has the table of differences.
//
// The rules' inputs (the model context rope_context, semantics, config_error and param_reader,
// the reader of one rope_parameters object) are in posenc/rotary/rules/rule_params.hpp, the exact
// arithmetic they share in posenc/rotary/rules/rule_math.hpp.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include <posenc/core/checked.hpp>
#include <posenc/core/error.hpp>
#include <posenc/numeric/phase.hpp>
#include <posenc/rotary/frequencies.hpp>
#include <posenc/rotary/rules/rule_math.hpp>
#include <posenc/rotary/rules/rule_params.hpp>

namespace posenc::rotary {


namespace rules {

/// What every rule shares: no aliases, rotary_dim = int(head_dim * partial_rotary_factor), and no
/// dependence on the sequence length. A rule type hides what it changes.
struct rule_base {
  static constexpr std::array<std::string_view, 0> aliases{};
  static constexpr bool depends_on_seq_len = false;
  static std::size_t rotary_dim(const rope_context& c) { return detail::scaled_rotary_dim(c); }
  bool operator==(const rule_base&) const = default;
};

/// "default": omega_k = theta^(-2k / rotary_dim).
struct default_rope : rule_base {
  bool operator==(const default_rope&) const = default;
  static constexpr std::string_view name = "default";
  static constexpr std::array<std::string_view, 0> keys{};
  static default_rope parse(const param_reader&) { return {}; }
  void validate(const rope_context&, std::string_view) const {}
  [[nodiscard]] exact_frequencies compute(const rope_context& c, std::size_t) const {
    const std::size_t d = rotary_dim(c);
    return detail::default_freqs(d / 2, d, c.theta);
  }
};

/// "linear" (position interpolation, Chen et al. 2023): default / factor.
struct linear : rule_base {
  bool operator==(const linear&) const = default;
  static constexpr std::string_view name = "linear";
  static constexpr std::array<std::string_view, 1> keys{"factor"};
  double factor = 1.0;
  static linear parse(const param_reader& r) { return {{}, r.required_number("factor")}; }
  void validate(const rope_context&, std::string_view where) const { detail::require_positive(factor, where, "factor"); }
  [[nodiscard]] exact_frequencies compute(const rope_context& c, std::size_t) const {
    const std::size_t d = rotary_dim(c);
    exact_frequencies f = detail::default_freqs(d / 2, d, c.theta);
    for (auto& w : f.omega) w = w / detail::exact(factor);
    return f;
  }
};


/// "ntk" (static NTK-aware base scaling, bloc97; posenc's name, not a transformers rule):
/// theta' = theta * factor^(d / (d - 2)).
struct ntk : rule_base {
  bool operator==(const ntk&) const = default;
  static constexpr std::string_view name = "ntk";
  static constexpr std::array<std::string_view, 1> keys{"factor"};
  double factor = 1.0;
  static ntk parse(const param_reader& r) { return {{}, r.required_number("factor")}; }
  void validate(const rope_context&, std::string_view where) const { detail::require_positive(factor, where, "factor"); }
  [[nodiscard]] exact_frequencies compute(const rope_context& c, std::size_t) const {
    return detail::ntk_scaled(rotary_dim(c), c.theta, detail::exact(factor));
  }
};

/// "dynamic" (dynamic NTK): theta' = theta * s^(d / (d - 2)), s = factor L / L_max - (factor - 1),
/// L = max(seq_len, L_max), L_max = max_position_embeddings. original_max_position_embeddings is
/// accepted and, as in transformers 4.46 and 5, not used.
struct dynamic : rule_base {
  bool operator==(const dynamic&) const = default;
  static constexpr std::string_view name = "dynamic";
  static constexpr std::array<std::string_view, 2> keys{"factor", "original_max_position_embeddings"};
  static constexpr bool depends_on_seq_len = true;
  double factor = 1.0;
  static dynamic parse(const param_reader& r) {
    (void)r.count("original_max_position_embeddings");  // type-checked, not used
    return {{}, r.required_number("factor")};
  }
  void validate(const rope_context& c, std::string_view where) const {
    detail::require_positive(factor, where, "factor");
    posenc::detail::require(c.max_position_embeddings > 0, where,
                            "max_position_embeddings: rope_type 'dynamic' needs max_position_embeddings > 0, got 0");
  }
  [[nodiscard]] exact_frequencies compute(const rope_context& c, std::size_t seq_len) const {
    using W = numeric::wide;
    // s = factor L / L_max - (factor - 1) = factor (L - L_max) / L_max + 1: exactly 1 (the default
    // frequencies, bitwise) for L = L_max
    const std::size_t lmax = c.max_position_embeddings, len = std::max(seq_len, lmax);
    const exact_value s = detail::exact(factor) * detail::exact(static_cast<W>(len - lmax)) /
                              detail::exact(static_cast<W>(lmax)) +
                          detail::exact(1);
    return detail::ntk_scaled(rotary_dim(c), c.theta, s);
  }
};


/// "yarn" (Peng et al. 2023): the ramp between interpolation (omega / factor) and extrapolation
/// over the correction range of beta_fast .. beta_slow rotations within L0, and the attention
/// factor 0.1 mscale ln(factor) + 1 (or attention_factor, or the mscale / mscale_all_dim ratio).
struct yarn : rule_base {
  bool operator==(const yarn&) const = default;
  static constexpr std::string_view name = "yarn";
  static constexpr std::array<std::string_view, 8> keys{
      "factor", "attention_factor", "beta_fast", "beta_slow", "mscale", "mscale_all_dim",
      "original_max_position_embeddings", "truncate"};
  std::optional<double> factor{};  ///< 5.x: absent/null -> max_position_embeddings / L0
  std::optional<double> attention_factor{};
  std::optional<double> beta_fast{}, beta_slow{};  ///< absent (or 0 in 5.x): 32 and 1
  std::optional<double> mscale{}, mscale_all_dim{};
  std::optional<std::size_t> original_max_position_embeddings{};
  std::optional<bool> truncate{};  ///< 5.x: false keeps the fractional correction range (gpt-oss)

  static yarn parse(const param_reader& r) {
    yarn y;
    y.factor = r.number("factor");
    y.attention_factor = r.number("attention_factor");
    y.beta_fast = r.number("beta_fast");
    y.beta_slow = r.number("beta_slow");
    y.mscale = r.number("mscale");
    y.mscale_all_dim = r.number("mscale_all_dim");
    y.original_max_position_embeddings = r.count("original_max_position_embeddings");
    y.truncate = r.boolean("truncate");
    return y;
  }
  /// The length of the correction range: transformers 5: L0; transformers 4.46:
  /// max_position_embeddings (4.46 reads no original_max_position_embeddings for yarn).
  [[nodiscard]] std::size_t length(const rope_context& c) const {
    if (!c.differences().yarn_length_from_original()) return c.max_position_embeddings;
    return detail::pretrained_length(c, original_max_position_embeddings, true, true);
  }
  [[nodiscard]] double resolved_factor(const rope_context& c) const {
    if (factor) return *factor;
    const std::size_t l0 = length(c);
    return l0 > 0 ? static_cast<double>(c.max_position_embeddings) / static_cast<double>(l0) : 0.0;
  }
  [[nodiscard]] double fast(const rope_context& c) const {
    return beta_fast && (*beta_fast != 0 || !c.differences().yarn_zero_beta_is_default()) ? *beta_fast : 32.0;
  }
  [[nodiscard]] double slow(const rope_context& c) const {
    return beta_slow && (*beta_slow != 0 || !c.differences().yarn_zero_beta_is_default()) ? *beta_slow : 1.0;
  }
  void validate(const rope_context& c, std::string_view where) const {
    const semantics_differences v = c.differences();
    posenc::detail::require(v.yarn_factor_may_be_absent() || factor.has_value(), where,
                            "factor: rope_type 'yarn' needs a factor (transformers 4.46)");
    posenc::detail::require(v.yarn_reads_truncate_and_mscale() || (!truncate && !mscale && !mscale_all_dim), where,
                            "truncate/mscale/mscale_all_dim: not transformers 4.46 yarn parameters (4.46 ignores "
                            "them); use semantics::transformers_5");
    posenc::detail::require(length(c) > 0, where,
                            "original_max_position_embeddings: rope_type 'yarn' needs original_max_position_embeddings "
                            "or max_position_embeddings > 0, got neither");
    detail::require_positive(resolved_factor(c), where, "factor");
    detail::require_positive(fast(c), where, "beta_fast");
    detail::require_positive(slow(c), where, "beta_slow");
    // equal betas (Kimi K2) are transformers' too: an empty ramp, widened by 0.001 in compute
    posenc::detail::require(fast(c) >= slow(c), where, "beta_fast: expected beta_fast >= beta_slow, got beta_fast = ",
                            fast(c), " and beta_slow = ", slow(c));
    if (attention_factor) detail::require_positive(*attention_factor, where, "attention_factor");
    if (mscale) detail::require_positive(*mscale, where, "mscale");
    if (mscale_all_dim) detail::require_positive(*mscale_all_dim, where, "mscale_all_dim");
  }
  [[nodiscard]] exact_frequencies compute(const rope_context& c, std::size_t) const {
    using W = numeric::wide;
    using detail::exact;
    const bool by_get_mscale = c.differences().yarn_attention_by_get_mscale();
    const std::size_t dim = rotary_dim(c), h = dim / 2;
    const double fac = resolved_factor(c);
    // the factor as the configuration states it (max_position_embeddings / L0 as a real ratio when absent)
    const exact_value wfac = factor ? exact(*factor)
                                    : exact(static_cast<W>(c.max_position_embeddings)) / exact(static_cast<W>(length(c)));
    const exact_value log_base = detail::exact_log(static_cast<W>(c.theta)), length_w = exact(static_cast<W>(length(c)));
    // find_correction_range: dim ln(L0 / (rotations 2 pi)) / (2 ln theta), floor/ceil unless
    // truncate is false, clamped to [0, dim - 1]
    const auto correction_dim = [&](double rotations) {
      return exact(static_cast<W>(dim)) * numeric::ff_log(length_w / (exact(rotations) * numeric::two_pi_ff<W>())) /
             (exact(2) * log_base);
    };
    exact_value low = correction_dim(fast(c)), high = correction_dim(slow(c));
    if (truncate.value_or(true)) {
      low = detail::exact_floor(low);
      high = detail::exact_ceil(high);
    }
    if (detail::exact_less(low, exact(0))) low = exact(0);
    if (detail::exact_less(exact(static_cast<W>(dim - 1)), high)) high = exact(static_cast<W>(dim - 1));
    if (low.hi == high.hi && low.lo == high.lo) high = high + exact(1) / exact(1000);  // transformers: += 0.001
    exact_frequencies f = detail::default_freqs(h, dim, c.theta);
    for (std::size_t k = 0; k < h; ++k) {
      // ramp 1: interpolated (omega / factor); transformers' extrapolation factor is 1 - ramp
      const exact_value ramp = detail::exact_clamp((exact(static_cast<W>(k)) - low) / (high - low), exact(0), exact(1));
      f.omega[k] = f.omega[k] / wfac * ramp + f.omega[k] * (exact(1) - ramp);
    }
    if (attention_factor) {
      f.attention_factor = *attention_factor;
    } else if (by_get_mscale) {
      // transformers 5, in double as its Python: get_mscale(s, m) = 0.1 * m * log(s) + 1.0 (1 for s <= 1),
      // the mscale / mscale_all_dim ratio when both are given and non-zero
      const auto get_mscale = [](double s, double m) { return s <= 1 ? 1.0 : 0.1 * m * std::log(s) + 1.0; };
      f.attention_factor = mscale && mscale_all_dim && *mscale != 0 && *mscale_all_dim != 0
                               ? get_mscale(fac, *mscale) / get_mscale(fac, *mscale_all_dim)
                               : get_mscale(fac, 1.0);
    } else {
      f.attention_factor = 0.1 * std::log(fac) + 1.0;  // transformers 4.46, in double as its Python
    }
    return f;
  }
};

/// "longrope" (Ding et al. 2024; Phi-3; "su" in the first Phi-3 configs): omega = default /
/// ext[k], ext = long_factor or short_factor by the sequence length, attention factor
/// sqrt(1 + ln(factor) / ln(L0)) (or attention_factor), factor = max_position_embeddings / L0 when
/// not given.
struct longrope : rule_base {
  bool operator==(const longrope&) const = default;
  static constexpr std::string_view name = "longrope";
  static constexpr std::array<std::string_view, 1> aliases{"su"};
  static constexpr std::array<std::string_view, 5> keys{"short_factor", "long_factor", "factor", "attention_factor",
                                                        "original_max_position_embeddings"};
  static constexpr bool depends_on_seq_len = true;
  std::vector<double> short_factor{}, long_factor{};
  std::optional<double> factor{}, attention_factor{};
  std::optional<std::size_t> original_max_position_embeddings{};
  longrope_rule regime = longrope_rule::init_function;  ///< transformers 4.46 only

  static longrope parse(const param_reader& r) {
    longrope l;
    l.short_factor = r.required_numbers("short_factor");
    l.long_factor = r.required_numbers("long_factor");
    l.factor = r.number("factor");
    l.attention_factor = r.number("attention_factor");
    l.original_max_position_embeddings = r.count("original_max_position_embeddings");
    return l;
  }
  [[nodiscard]] std::size_t length(const rope_context& c) const {
    return detail::pretrained_length(c, original_max_position_embeddings, true,
                                     c.differences().longrope_by_factor());
  }
  void validate(const rope_context& c, std::string_view where) const {
    const std::size_t dim = rotary_dim(c);
    if (c.differences().longrope_by_factor()) {
      posenc::detail::require(length(c) > 0, where,
                              "original_max_position_embeddings: rope_type 'longrope' needs "
                              "original_max_position_embeddings or max_position_embeddings > 0, got neither");
      if (!factor)
        posenc::detail::require(c.max_position_embeddings > 0, where,
                                "max_position_embeddings: rope_type 'longrope' without factor needs "
                                "max_position_embeddings > 0, got 0");
      else
        detail::require_positive(*factor, where, "factor");
    } else if (length(c) > 0) {
      posenc::detail::require(c.max_position_embeddings > 0, where,
                              "max_position_embeddings: rope_type 'longrope' with original_max_position_embeddings "
                              "needs max_position_embeddings > 0, got 0");
    } else {
      posenc::detail::require(factor.has_value(), where,
                              "factor: rope_type 'longrope' without original_max_position_embeddings needs a factor");
      detail::require_positive(*factor, where, "factor");
      posenc::detail::require(c.max_position_embeddings > 1, where,
                              "max_position_embeddings: rope_type 'longrope' needs max_position_embeddings > 1, got ",
                              c.max_position_embeddings);
    }
    if (attention_factor) detail::require_positive(*attention_factor, where, "attention_factor");
    posenc::detail::require<shape_error>(short_factor.size() == dim / 2, where, "short_factor: expected rotary_dim / 2 = ",
                                         dim / 2, " values, got ", short_factor.size());
    posenc::detail::require<shape_error>(long_factor.size() == dim / 2, where, "long_factor: expected rotary_dim / 2 = ",
                                         dim / 2, " values, got ", long_factor.size());
    for (std::size_t k = 0; k < dim / 2; ++k) {
      // the item's name is formed only for the error message (10^6-item lists stay cheap)
      if (!(std::isnormal(short_factor[k]) && short_factor[k] > 0))
        detail::require_positive(short_factor[k], where, "short_factor[" + std::to_string(k) + "]");
      if (!(std::isnormal(long_factor[k]) && long_factor[k] > 0))
        detail::require_positive(long_factor[k], where, "long_factor[" + std::to_string(k) + "]");
    }
    posenc::detail::require(regime == longrope_rule::init_function || regime == longrope_rule::phi3_module, where,
                            "longrope_switch: expected longrope_rule::init_function or longrope_rule::phi3_module");
  }
  [[nodiscard]] exact_frequencies compute(const rope_context& c, std::size_t seq_len) const {
    using W = numeric::wide;
    const std::size_t dim = rotary_dim(c), h = dim / 2, l0 = length(c);
    exact_frequencies f = detail::default_freqs(h, dim, c.theta);
    bool use_long = false;
    if (c.differences().longrope_by_factor()) {
      // factor (or max / L0) decides the attention factor in both regimes, in double as transformers 5
      const double fac = factor ? *factor : static_cast<double>(c.max_position_embeddings) / static_cast<double>(l0);
      f.attention_factor = attention_factor ? *attention_factor
                           : fac <= 1.0     ? 1.0
                                            : std::sqrt(1 + std::log(fac) / std::log(static_cast<double>(l0)));
      use_long = seq_len > l0;
    } else {
      W lmax, expanded;
      if (l0 > 0) {
        lmax = static_cast<W>(l0);
        const W full = static_cast<W>(c.max_position_embeddings);
        if (regime == longrope_rule::init_function) {
          // 4.46: expanded = original when seq_len is given and below it, else max_position_embeddings
          expanded = (seq_len > 0 && seq_len < l0) ? lmax : full;
          use_long = expanded > lmax;
        } else {
          expanded = full;  // the module's attention factor does not depend on seq_len
          use_long = seq_len > l0;
        }
      } else {
        lmax = static_cast<W>(c.max_position_embeddings);
        expanded = lmax * static_cast<W>(*factor);
        use_long = expanded > lmax;
      }
      // in double as transformers 4.46: factor = expanded / max, sqrt(1 + log(factor) / log(max))
      const double scale = static_cast<double>(expanded) / static_cast<double>(lmax);
      f.attention_factor = attention_factor ? *attention_factor
                           : scale <= 1.0   ? 1.0
                                            : std::sqrt(1 + std::log(scale) / std::log(static_cast<double>(lmax)));
    }
    const std::vector<double>& ext = use_long ? long_factor : short_factor;
    for (std::size_t k = 0; k < h; ++k) f.omega[k] = f.omega[k] / detail::exact(ext[k]);
    return f;
  }
};

/// "llama3" (Llama 3.1): wavelengths above L0 / low_freq_factor interpolated by factor, below
/// L0 / high_freq_factor kept, a smooth blend between.
struct llama3 : rule_base {
  bool operator==(const llama3&) const = default;
  static constexpr std::string_view name = "llama3";
  static constexpr std::array<std::string_view, 4> keys{"factor", "low_freq_factor", "high_freq_factor",
                                                        "original_max_position_embeddings"};
  double factor = 1.0, low_freq_factor = 1.0, high_freq_factor = 4.0;
  std::optional<std::size_t> original_max_position_embeddings{};

  static llama3 parse(const param_reader& r) {
    llama3 l;
    l.factor = r.required_number("factor");
    l.low_freq_factor = r.required_number("low_freq_factor");
    l.high_freq_factor = r.required_number("high_freq_factor");
    l.original_max_position_embeddings = r.count("original_max_position_embeddings");
    return l;
  }
  [[nodiscard]] std::size_t length(const rope_context& c) const {
    const bool model_level = c.differences().llama3_length_model_level();
    return detail::pretrained_length(c, original_max_position_embeddings, model_level, model_level);
  }
  void validate(const rope_context& c, std::string_view where) const {
    detail::require_positive(factor, where, "factor");
    posenc::detail::require(length(c) > 0, where,
                            "original_max_position_embeddings: rope_type 'llama3' needs original_max_position_embeddings "
                            "> 0, got none");
    detail::require_positive(low_freq_factor, where, "low_freq_factor");
    detail::require_positive(high_freq_factor, where, "high_freq_factor");
    // equal factors (Llama 4) leave no blend: transformers' where() keeps wavelengths up to L0 / lo
    posenc::detail::require(high_freq_factor >= low_freq_factor, where,
                            "high_freq_factor: expected high_freq_factor >= low_freq_factor, got high_freq_factor = ",
                            high_freq_factor, " and low_freq_factor = ", low_freq_factor);
  }
  [[nodiscard]] exact_frequencies compute(const rope_context& c, std::size_t) const {
    using W = numeric::wide;
    using detail::exact;
    const std::size_t dim = rotary_dim(c);
    const exact_value old_len = exact(static_cast<W>(length(c))), fac = exact(factor);
    const exact_value lo = exact(low_freq_factor), hi = exact(high_freq_factor);
    exact_frequencies f = detail::default_freqs(dim / 2, dim, c.theta);
    for (auto& w : f.omega) {
      // smooth = (L0 / wavelen - lo) / (hi - lo), wavelen = 2 pi / omega: below 0 (wavelen > L0 /
      // lo) the frequency is interpolated (omega / factor), above 1 (wavelen < L0 / hi) kept; the
      // blend (1 - smooth) omega / factor + smooth omega meets both branches continuously, so
      // clamping smooth to [0, 1] is the three branches of transformers
      // hi == lo: no blend, smooth is the step at L0 / wavelen = lo (never met exactly: 2 pi is irrational)
      const exact_value x = old_len * w / numeric::two_pi_ff<W>();
      const exact_value smooth = high_freq_factor == low_freq_factor
                                     ? (detail::exact_less(lo, x) ? exact(1) : exact(0))
                                     : detail::exact_clamp((x - lo) / (hi - lo), exact(0), exact(1));
      w = (exact(1) - smooth) * w / fac + smooth * w;
    }
    return f;
  }
};

/// "proportional" (transformers 5, Gemma 4): head_dim / 2 pairs; the first
/// floor(partial_rotary_factor * head_dim / 2) turn at theta^(-2k / head_dim) / factor (the
/// exponent over the whole head), the others have frequency 0 (not rotated).
struct proportional : rule_base {
  bool operator==(const proportional&) const = default;
  static constexpr std::string_view name = "proportional";
  static constexpr std::array<std::string_view, 1> keys{"factor"};
  double factor = 1.0;
  static proportional parse(const param_reader& r) { return {{}, r.number("factor").value_or(1.0)}; }
  static std::size_t rotary_dim(const rope_context& c) { return c.head_dim / 2 * 2; }
  [[nodiscard]] static std::size_t rotated_pairs(const rope_context& c) {
    // Python: int(rope_proportion * head_dim // 2), a float floor division
    return static_cast<std::size_t>(std::floor(c.partial_rotary_factor * static_cast<double>(c.head_dim) / 2));
  }
  void validate(const rope_context& c, std::string_view where) const {
    posenc::detail::require(c.differences().has_proportional(), where,
                            "rope_type: 'proportional' is a transformers 5 rule (not in transformers 4.46)");
    detail::require_positive(factor, where, "factor");
  }
  [[nodiscard]] exact_frequencies compute(const rope_context& c, std::size_t) const {
    exact_frequencies f = detail::default_freqs(c.head_dim / 2, c.head_dim, c.theta);
    const std::size_t rotated = rotated_pairs(c);
    for (std::size_t k = 0; k < f.omega.size(); ++k)
      f.omega[k] = k < rotated ? f.omega[k] / detail::exact(factor) : detail::exact(0);  // exact zeros
    return f;
  }
};

}  // namespace rules

/// What a RoPE rule is (the interface rotary::plan, the loader and the tests call): its
/// `rope_type` name, aliases and accepted keys (ranges of std::string_view), whether its
/// frequencies depend on seq_len, `parse` from a param_reader, `validate` against the model's
/// rope_context (throwing posenc errors), its rotary dim, `compute` of its exact frequencies at a
/// seq_len (0: not given), and equality. A type that misses one of these is refused where the rule
/// list names it, with this concept in the compiler's message, instead of deep inside std::visit.
template <class R>
concept RopeRule = std::regular<R> && requires(const R& r, const rope_context& c, const param_reader& p,
                                               std::string_view where, std::size_t seq_len) {
  { R::name } -> std::convertible_to<std::string_view>;
  { R::keys.size() } -> std::convertible_to<std::size_t>;
  { *R::keys.begin() } -> std::convertible_to<std::string_view>;
  { R::aliases.size() } -> std::convertible_to<std::size_t>;
  { R::depends_on_seq_len } -> std::convertible_to<bool>;
  { R::parse(p) } -> std::same_as<R>;
  r.validate(c, where);
  { R::rotary_dim(c) } -> std::convertible_to<std::size_t>;
  { r.compute(c, seq_len) } -> std::same_as<exact_frequencies>;
};

/// A list of rule types, each a RopeRule.
template <RopeRule... R>
struct rule_types {
  using variant = std::variant<R...>;
  /// Calls f(std::type_identity<R>{}) for each rule type, in order, until f returns true.
  template <class F>
  static constexpr bool any(F&& f) {
    return (f(std::type_identity<R>{}) || ...);
  }
  static constexpr std::array<std::string_view, sizeof...(R)> names{R::name...};
};

/// THE rule table: one entry per rope_type. Adding a rule = one type in rotary::rules + one entry here.
using rule_list = rule_types<rules::default_rope, rules::linear, rules::ntk, rules::dynamic, rules::yarn,
                             rules::longrope, rules::llama3, rules::proportional>;

/// One rule with its parameters.
using rule = rule_list::variant;

/// The names of every rule, in list order ("default", "linear", ...).
constexpr const auto& rule_names() noexcept { return rule_list::names; }

/// Whether rule type R answers to `name` (its name or an alias).
template <class R>
constexpr bool answers_to(std::string_view name) noexcept {
  if (name == R::name) return true;
  for (auto a : R::aliases)
    if (name == a) return true;
  return false;
}

/// The keys rope type `name` accepts in rope_parameters besides rope_type / type / rope_theta /
/// partial_rotary_factor; empty and false if no rule has that name.
inline bool rule_accepts_key(std::string_view name, std::string_view key, bool* known_rule = nullptr) {
  bool found = false, accepts = false;
  rule_list::any([&]<class R>(std::type_identity<R>) {
    if (!answers_to<R>(name)) return false;
    found = true;
    for (auto k : R::keys) accepts = accepts || k == key;
    return true;
  });
  if (known_rule != nullptr) *known_rule = found;
  return accepts;
}

/// The rule named `name` read from a params object (nullopt: no rule of that name).
inline std::optional<rule> parse_rule(std::string_view name, const param_reader& r) {
  std::optional<rule> out;
  rule_list::any([&]<class R>(std::type_identity<R>) {
    if (!answers_to<R>(name)) return false;
    out.emplace(std::in_place_type<R>, R::parse(r));
    return true;
  });
  return out;
}

/// The name of a rule ("default", "linear", ...).
inline std::string_view name(const rule& r) noexcept {
  return std::visit([](const auto& x) { return std::remove_cvref_t<decltype(x)>::name; }, r);
}

/// The validated RoPE of one attention layer type: the model's context, one rule, and the
/// frequencies they give at initialisation (seq_len not given).
/// Thread safety: shareable const (a value type; docs/thread-safety.md).
class plan {
 public:
  /// Validate ctx and r (posenc::invalid_argument naming the field; non_finite_error for NaN/Inf;
  /// shape_error for factor lists of the wrong length) and compute the frequencies.
  plan(const rope_context& ctx, rotary::rule r) : m_ctx(ctx), m_rule(std::move(r)) {
    constexpr std::string_view where = "rotary::plan";
    using posenc::detail::require;
    posenc::detail::require<non_finite_error>(std::isfinite(m_ctx.theta), where,
                                              "theta: expected a finite rope_theta, got ", m_ctx.theta);
    require(m_ctx.theta > 1, where, "theta: expected rope_theta > 1, got ", m_ctx.theta);
    require(m_ctx.head_dim >= 2, where, "head_dim: expected head_dim >= 2, got ", m_ctx.head_dim);
    (void)checked::extent(m_ctx.head_dim, where, "head_dim");
    posenc::detail::require<non_finite_error>(std::isfinite(m_ctx.partial_rotary_factor), where,
                                              "partial_rotary_factor: expected a finite value, got ",
                                              m_ctx.partial_rotary_factor);
    require(m_ctx.partial_rotary_factor > 0 && m_ctx.partial_rotary_factor <= 1, where,
            "partial_rotary_factor: expected a value in (0, 1], got ", m_ctx.partial_rotary_factor);
    require(m_ctx.semantics == semantics::transformers_5 || m_ctx.semantics == semantics::transformers_4_46, where,
            "semantics: expected semantics::transformers_5 or semantics::transformers_4_46");
    std::visit(
        [&](const auto& x) {
          const std::size_t dim = x.rotary_dim(m_ctx);
          require(dim >= 2 && dim % 2 == 0, where,
                  "rotary dim: expected an even rotary_dim = int(head_dim * partial_rotary_factor) >= 2, got ", dim,
                  " (head_dim ", m_ctx.head_dim, ", partial_rotary_factor ", m_ctx.partial_rotary_factor, ")");
          x.validate(m_ctx, where);
          m_freqs = to_frequencies(x.compute(m_ctx, 0));
        },
        m_rule);
    (void)rotary::validate(m_freqs, where, "frequencies");
  }

  [[nodiscard]] const rope_context& context() const noexcept { return m_ctx; }
  [[nodiscard]] const rotary::rule& rule() const noexcept { return m_rule; }
  [[nodiscard]] std::string_view rope_type() const noexcept { return rotary::name(m_rule); }
  /// Rotated channels: 2 * frequencies().inv_freq.size().
  [[nodiscard]] std::size_t rotary_dim() const noexcept { return 2 * m_freqs.inv_freq.size(); }
  /// Whether frequencies(seq_len) depends on seq_len (dynamic, longrope).
  [[nodiscard]] bool depends_on_seq_len() const noexcept {
    return std::visit([](const auto& x) { return std::remove_cvref_t<decltype(x)>::depends_on_seq_len; }, m_rule);
  }
  /// The frequencies at initialisation (transformers' seq_len=None).
  [[nodiscard]] const rotary::frequencies& frequencies() const noexcept { return m_freqs; }
  /// The frequencies for a sequence of seq_len tokens (seq_len = 0: not given, as frequencies()).
  /// transformers' forward uses seq_len = max(position_ids) + 1.
  [[nodiscard]] rotary::frequencies frequencies(std::size_t seq_len) const {
    if (seq_len == 0 || !depends_on_seq_len()) return m_freqs;
    rotary::frequencies f =
        std::visit([&](const auto& x) { return to_frequencies(x.compute(m_ctx, seq_len)); }, m_rule);
    (void)rotary::validate(f, "rotary::plan::frequencies", "frequencies(seq_len)");  // in double, as at construction
    return f;
  }

 private:
  rope_context m_ctx;
  rotary::rule m_rule;
  rotary::frequencies m_freqs;
};

}  // namespace posenc::rotary
