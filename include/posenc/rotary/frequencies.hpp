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

#include <posenc/core/checked.hpp>
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

/// The default (unscaled) RoPE frequencies: inv_freq[k] = base^(-2k / rotary_dim).
inline frequencies default_frequencies(std::size_t rotary_dim, double base = 10000.0) {
  constexpr std::string_view where = "rotary::default_frequencies";
  posenc::detail::require(rotary_dim >= 2 && rotary_dim % 2 == 0, where,
                          "rotary_dim: expected an even rotary_dim >= 2, got ", rotary_dim);
  posenc::detail::require<non_finite_error>(std::isfinite(base), where, "base: expected a finite base, got ", base);
  posenc::detail::require(base > 1, where, "base: expected base > 1, got ", base);
  (void)checked::extent(rotary_dim, where, "rotary_dim");
  frequencies f;
  f.inv_freq = checked::make_vector<numeric::wide>(rotary_dim / 2, where, "rotary_dim / 2");
  const numeric::wide lb = std::log(static_cast<numeric::wide>(base));
  for (std::size_t k = 0; k < f.inv_freq.size(); ++k)
    f.inv_freq[k] = std::exp(-lb * static_cast<numeric::wide>(2 * k) / static_cast<numeric::wide>(rotary_dim));
  return f;
}

}  // namespace posenc::rotary
