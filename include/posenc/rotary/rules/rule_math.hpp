// SPDX-License-Identifier: MIT
// The exact (double-word long double) arithmetic the RoPE rules of posenc/rotary/rules/rules.hpp share:
// the default frequencies, NTK base scaling, comparisons, clamping, floor and ceil of pairs, and
// the pretrained length L0 of llama3, yarn and longrope.
#pragma once

#include <cmath>
#include <cstddef>
#include <limits>
#include <optional>
#include <string_view>

#include <posenc/core/error.hpp>
#include <posenc/numeric/phase.hpp>
#include <posenc/rotary/frequencies.hpp>
#include <posenc/rotary/rules/rule_params.hpp>

namespace posenc::rotary {

namespace detail {

/// A rule parameter: finite, > 0 and a normal double (>= DBL_MIN ~ 2.2e-308). A subnormal factor
/// (1e-320) divides the frequencies beyond double's range while they stay finite in the long
/// double the rules compute in (issue 37): refused here under the parameter's name; what
/// parameters combine to beyond double is refused by rotary::validate on the plan's frequencies.
inline void require_positive(double v, std::string_view where, std::string_view what) {
  posenc::detail::require<non_finite_error>(std::isfinite(v), where, what, ": expected a finite value, got ", v);
  posenc::detail::require(v > 0, where, what, ": expected a value > 0, got ", v);
  posenc::detail::require(std::isnormal(v), where, what, ": expected a normal double (>= ",
                          std::numeric_limits<double>::min(), "), got ", v);
}

/// int(head_dim * partial_rotary_factor), truncated toward zero as Python's int().
inline std::size_t scaled_rotary_dim(const rope_context& c) {
  // HF: int(head_dim * partial_rotary_factor), truncated toward zero. A product outside
  // [0, 2^64) (or NaN) has no size_t value: 0, which the plan rejects.
  const double x = static_cast<double>(c.head_dim) * c.partial_rotary_factor;
  return x >= 0 && x < 18446744073709551616.0 ? static_cast<std::size_t>(x) : 0;
}

/// omega_k = base^(-2k / exponent_dim) for k < pairs, exact (a pair per frequency).
inline exact_frequencies default_freqs(std::size_t pairs, std::size_t exponent_dim, double base) {
  return {default_omega(pairs, exponent_dim, exact_log(static_cast<numeric::wide>(base))), 1.0};
}

/// theta * s^(d / (d - 2)) (NTK-aware base scaling) as the exact ln(base') = ln(theta) + d / (d - 2)
/// ln(s); d = 2 has one pair with frequency 1 whatever the base. s > 0.
inline exact_frequencies ntk_scaled(std::size_t d, double theta, const exact_value& s) {
  exact_value lb = exact_log(static_cast<numeric::wide>(theta));
  if (d > 2)
    lb = lb + exact(static_cast<numeric::wide>(d)) / exact(static_cast<numeric::wide>(d - 2)) * numeric::ff_log(s);
  return {default_omega(d / 2, d, lb), 1.0};
}

/// a < b for normalised pairs.
inline bool exact_less(const exact_value& a, const exact_value& b) {
  return a.hi < b.hi || (a.hi == b.hi && a.lo < b.lo);
}
/// min(max(x, lo), hi) for normalised pairs.
inline exact_value exact_clamp(const exact_value& x, const exact_value& lo, const exact_value& hi) {
  return exact_less(x, lo) ? lo : exact_less(hi, x) ? hi : x;
}
/// floor / ceil of a pair of moderate size (|x| < 2^63): hi's unless hi is an integer, then lo decides.
inline exact_value exact_floor(const exact_value& x) {
  const numeric::wide f = std::floor(x.hi);
  return f != x.hi ? exact(f) : numeric::two_sum(f, std::floor(x.lo));
}
inline exact_value exact_ceil(const exact_value& x) {
  const numeric::wide f = std::ceil(x.hi);
  return f != x.hi ? exact(f) : numeric::two_sum(f, std::ceil(x.lo));
}

/// The pretrained length L0 of llama3, yarn and longrope. transformers 5: the model-level field
/// (Phi-3) if any, else rope_parameters', else max_position_embeddings (standardize_rope_params);
/// transformers 4.46: the model-level field (longrope only), else rope_scaling's, else (yarn)
/// max_position_embeddings.
inline std::size_t pretrained_length(const rope_context& c, std::optional<std::size_t> own, bool model_level,
                                     bool fall_back_to_max) {
  if (model_level && c.original_max_position_embeddings > 0) return c.original_max_position_embeddings;
  if (own && *own > 0) return *own;
  return fall_back_to_max ? c.max_position_embeddings : 0;
}

}  // namespace detail

}  // namespace posenc::rotary
