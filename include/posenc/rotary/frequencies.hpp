// SPDX-License-Identifier: MIT
// The rotary family's per-pair angular frequencies: what a context-extension rule produces and
// what every rotary table and application consumes. Pair k of a rotary_dim-wide head turns by
// position * inv_freq[k]; cos and sin are scaled by attention_factor (YaRN's mscale, LongRoPE's
// factor; 1 for the other rules), as Hugging Face transformers applies it.
#pragma once

#include <cmath>
#include <cstddef>
#include <string_view>
#include <vector>

#include <posenc/core/error.hpp>
#include <posenc/numeric/phase.hpp>

namespace posenc::rotary {

/// inv_freq[k] for k = 0 .. rotary_dim/2 - 1, in long double (the phase position * inv_freq[k] is
/// formed in long double and reduced exactly: posenc/numeric/phase.hpp).
/// Thread safety: shareable const (a value type; docs/thread-safety.md).
struct frequencies {
  std::vector<numeric::wide> inv_freq;
  double attention_factor = 1.0;
};

namespace detail {

/// base^(-2k / dim) in long double: the one place the default RoPE frequency is written (every
/// rule, rotary::options and rotary::default_frequencies call it). base > 0, dim > 0 (not checked).
inline numeric::wide default_inv_freq(std::size_t k, std::size_t dim, numeric::wide base) {
  return std::exp(-std::log(base) * static_cast<numeric::wide>(2 * k) / static_cast<numeric::wide>(dim));
}

}  // namespace detail

/// Check frequencies before use (the one validator: tables, apply, plans): at least one
/// inv_freq, every inv_freq finite and >= 0 (0: a pair that is not rotated, as the proportional
/// rule's), attention_factor finite and > 0. Throws invalid_argument (non_finite_error for NaN/Inf)
/// naming `what` (the argument's name) and the index. Returns the number of pairs.
inline std::size_t validate(const frequencies& f, std::string_view where, std::string_view what = "freqs") {
  posenc::detail::require(!f.inv_freq.empty(), where, what, ".inv_freq: expected at least one frequency, got 0");
  for (std::size_t k = 0; k < f.inv_freq.size(); ++k) {
    posenc::detail::require<non_finite_error>(std::isfinite(f.inv_freq[k]), where, what,
                                              ".inv_freq: expected finite values >= 0, got ",
                                              static_cast<double>(f.inv_freq[k]), " at index ", k);
    posenc::detail::require(f.inv_freq[k] >= 0, where, what, ".inv_freq: expected finite values >= 0, got ",
                            static_cast<double>(f.inv_freq[k]), " at index ", k);
  }
  posenc::detail::require<non_finite_error>(std::isfinite(f.attention_factor), where, what,
                                            ".attention_factor: expected a finite value, got ", f.attention_factor);
  posenc::detail::require(f.attention_factor > 0, where, what, ".attention_factor: expected a value > 0, got ",
                          f.attention_factor);
  return f.inv_freq.size();
}

/// The default (unscaled) RoPE frequencies: inv_freq[k] = base^(-2k / rotary_dim).
inline frequencies default_frequencies(std::size_t rotary_dim, double base = 10000.0) {
  constexpr std::string_view where = "rotary::default_frequencies";
  posenc::detail::require(rotary_dim >= 2 && rotary_dim % 2 == 0, where,
                          "rotary_dim: expected an even rotary_dim >= 2, got ", rotary_dim);
  posenc::detail::require<non_finite_error>(std::isfinite(base), where, "base: expected a finite base, got ", base);
  posenc::detail::require(base > 1, where, "base: expected base > 1, got ", base);
  frequencies f;
  f.inv_freq.resize(rotary_dim / 2);
  for (std::size_t k = 0; k < f.inv_freq.size(); ++k)
    f.inv_freq[k] = detail::default_inv_freq(k, rotary_dim, static_cast<numeric::wide>(base));
  return f;
}

}  // namespace posenc::rotary
