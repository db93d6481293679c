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
#include <posenc/numeric/extended.hpp>
#include <posenc/numeric/phase.hpp>

namespace posenc::rotary {

/// inv_freq[k] for k = 0 .. rotary_dim/2 - 1, in long double (the float, half and long double
/// tables form the phase position * inv_freq[k] in long double and reduce it exactly:
/// posenc/numeric/phase.hpp). inv_freq_lo: empty, or the correction that makes each frequency
/// exact, omega_k = inv_freq[k] + inv_freq_lo[k] (a long double pair: ~2^-125 relative); the
/// rules (compute_frequencies, default_frequencies) fill it. The double tables and rotations use
/// omega_k (numeric::sincos_phase); with inv_freq_lo empty, inv_freq[k] is taken as exact.
/// Thread safety: shareable const (a value type; docs/thread-safety.md).
struct frequencies {
  std::vector<numeric::wide> inv_freq;
  double attention_factor = 1.0;
  std::vector<numeric::wide> inv_freq_lo{};
};

namespace detail {

/// Record exact frequencies computed in double-word arithmetic: inv_freq_lo[k] = exact[k] -
/// inv_freq[k] (inv_freq itself unchanged, so the long double paths keep their values).
inline void set_exact_frequencies(frequencies& f, const std::vector<numeric::ff<numeric::wide>>& exact) {
  f.inv_freq_lo.resize(exact.size());
  for (std::size_t k = 0; k < exact.size(); ++k) {
    const numeric::ff<numeric::wide> d = exact[k] - numeric::ff<numeric::wide>{f.inv_freq[k], 0};
    f.inv_freq_lo[k] = d.hi + d.lo;
  }
}

/// base^(-2k / dim) for k = 0 .. dim/2 - 1, in double-word long double (~2^-120 relative).
inline std::vector<numeric::ff<numeric::wide>> exact_default_frequencies(std::size_t dim, double base) {
  std::vector<numeric::ff<numeric::wide>> w(dim / 2);
  const numeric::ff<numeric::wide> b{static_cast<numeric::wide>(base), 0};
  for (std::size_t k = 0; k < w.size(); ++k) w[k] = numeric::inverse_power(b, 2 * k, dim);
  return w;
}

/// The frequency of pair k as three doubles (numeric::sincos_phase's form).
inline numeric::frequency3 frequency3_of(const frequencies& f, std::size_t k) {
  return numeric::split_frequency(f.inv_freq[k], f.inv_freq_lo.empty() ? numeric::wide(0) : f.inv_freq_lo[k]);
}

/// inv_freq_lo: empty or one finite value per frequency (shared by the validators of the table
/// and apply entry points).
inline void check_frequency_corrections(const frequencies& f, std::string_view where) {
  posenc::detail::require<shape_error>(f.inv_freq_lo.empty() || f.inv_freq_lo.size() == f.inv_freq.size(), where,
                                       "frequencies.inv_freq_lo: expected none or one per frequency (",
                                       f.inv_freq.size(), "), got ", f.inv_freq_lo.size());
  for (std::size_t k = 0; k < f.inv_freq_lo.size(); ++k)
    posenc::detail::require<non_finite_error>(std::isfinite(f.inv_freq_lo[k]), where,
                                              "frequencies.inv_freq_lo: expected finite values, got ",
                                              static_cast<double>(f.inv_freq_lo[k]), " at index ", k);
}

}  // namespace detail

/// The default (unscaled) RoPE frequencies: inv_freq[k] = base^(-2k / rotary_dim).
inline frequencies default_frequencies(std::size_t rotary_dim, double base = 10000.0) {
  constexpr std::string_view where = "rotary::default_frequencies";
  posenc::detail::require(rotary_dim >= 2 && rotary_dim % 2 == 0, where,
                          "rotary_dim: expected an even rotary_dim >= 2, got ", rotary_dim);
  posenc::detail::require<non_finite_error>(std::isfinite(base), where, "base: expected a finite base, got ", base);
  posenc::detail::require(base > 1, where, "base: expected base > 1, got ", base);
  frequencies f;
  f.inv_freq.resize(rotary_dim / 2);
  const numeric::wide lb = std::log(static_cast<numeric::wide>(base));
  for (std::size_t k = 0; k < f.inv_freq.size(); ++k)
    f.inv_freq[k] = std::exp(-lb * static_cast<numeric::wide>(2 * k) / static_cast<numeric::wide>(rotary_dim));
  detail::set_exact_frequencies(f, detail::exact_default_frequencies(rotary_dim, base));
  return f;
}

}  // namespace posenc::rotary
