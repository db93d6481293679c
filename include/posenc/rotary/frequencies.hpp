// SPDX-License-Identifier: MIT
// The rotary family's per-pair angular frequencies: what a context-extension rule produces and
// what every rotary table and application consumes. Pair k of a rotary_dim-wide head turns by
// position * omega_k; cos and sin are scaled by attention_factor (YaRN's mscale, LongRoPE's
// factor; 1 for the other rules), as Hugging Face transformers applies it.
//
// A rule computes its exact frequencies omega_k in double-word long double arithmetic
// (posenc/numeric/extended.hpp, ~2^-120 relative): rotary::exact_frequencies. The frequencies the
// tables and rotations take are made from them: inv_freq[k] = omega_k rounded to long double (the
// float, half and long double paths' phase) and inv_freq_lo[k] = omega_k - inv_freq[k] (the double
// paths' exact phase).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <string_view>
#include <utility>
#include <vector>

#include <posenc/core/checked.hpp>
#include <posenc/core/error.hpp>
#include <posenc/numeric/extended.hpp>
#include <posenc/numeric/frequencies.hpp>
#include <posenc/numeric/phase.hpp>

namespace posenc::rotary {

/// inv_freq[k] for k = 0 .. rotary_dim/2 - 1, in long double (the float, half and long double
/// tables form the phase position * inv_freq[k] in long double and reduce it exactly:
/// posenc/numeric/phase.hpp). inv_freq_lo: empty, or the correction that makes each frequency
/// exact, omega_k = inv_freq[k] + inv_freq_lo[k] (a long double pair: ~2^-120 relative); every
/// rule (rotary::plan, compute_frequencies, default_frequencies) fills it. The double tables and
/// rotations use omega_k (numeric::sincos_phase); with inv_freq_lo empty (frequencies built by
/// hand), inv_freq[k] is taken as exact.
/// Thread safety: shareable const (a value type; docs/thread-safety.md).
struct frequencies {
  std::vector<numeric::wide> inv_freq;
  double attention_factor = 1.0;
  std::vector<numeric::wide> inv_freq_lo{};
};

/// A real number as a double-word long double hi + lo (~2^-128 relative).
using exact_value = numeric::ff<numeric::wide>;

/// What a rule computes: each pair's exact frequency omega_k (a frequency of 0: a pair that is
/// not rotated) and the attention factor. to_frequencies makes rotary::frequencies of it.
struct exact_frequencies {
  std::vector<exact_value> omega;
  double attention_factor = 1.0;
};

/// inv_freq[k] = omega_k rounded to long double, inv_freq_lo[k] = the rest, and the attention factor.
inline frequencies to_frequencies(const exact_frequencies& e) {
  frequencies f;
  f.attention_factor = e.attention_factor;
  f.inv_freq = checked::make_vector<numeric::wide>(e.omega.size(), "rotary::frequencies", "rotary_dim / 2");
  f.inv_freq_lo = checked::make_vector<numeric::wide>(e.omega.size(), "rotary::frequencies", "rotary_dim / 2");
  for (std::size_t k = 0; k < e.omega.size(); ++k) {
    const exact_value w = numeric::fast_two_sum(e.omega[k].hi, e.omega[k].lo);  // hi = the rounded sum
    f.inv_freq[k] = w.hi;
    f.inv_freq_lo[k] = w.lo;
  }
  return f;
}

namespace detail {

/// v as a pair (exact).
inline exact_value exact(numeric::wide v) { return {v, 0}; }

/// ln(base) for base > 0, as a pair (numeric::log_pair).
inline exact_value exact_log(numeric::wide base) { return numeric::log_pair(base); }

/// omega_k = base^(-2k / exponent_dim) for k < pairs, from ln(base) as a pair: the geometric
/// frequencies of posenc/numeric/frequencies.hpp (the one place the formula is written; every rule,
/// rotary::options and rotary::default_frequencies call it, as the sinusoidal tables do), with
/// the rotary family's names in its size error. exponent_dim > 0.
inline std::vector<exact_value> default_omega(std::size_t pairs, std::size_t exponent_dim, const exact_value& log_base) {
  return numeric::geometric_frequencies(pairs, exponent_dim, log_base, "rotary::frequencies", "rotary_dim / 2");
}

}  // namespace detail

/// The exact frequency of pair k, inv_freq[k] + inv_freq_lo[k] (inv_freq[k] alone when
/// inv_freq_lo is empty), as three doubles: numeric::sincos_phase's form, which the double tables
/// and rotations and the device path (posenc/device/rotary.hpp) use. Throws invalid_argument for
/// k >= inv_freq.size(), shape_error for an inv_freq_lo that is neither empty nor one value per
/// frequency, non_finite_error for a non-finite frequency (its callers validate the frequencies
/// first; the checks keep a direct call from reading out of bounds or returning NaN).
inline numeric::frequency3 frequency3_of(const frequencies& f, std::size_t k) {
  constexpr std::string_view where = "rotary::frequency3_of";
  posenc::detail::require(k < f.inv_freq.size(), where, "k: expected a pair index < inv_freq.size() = ",
                          f.inv_freq.size(), ", got ", k);
  posenc::detail::require<shape_error>(f.inv_freq_lo.empty() || f.inv_freq_lo.size() == f.inv_freq.size(), where,
                                       "freqs.inv_freq_lo: expected empty or ", f.inv_freq.size(),
                                       " values (one per frequency), got ", f.inv_freq_lo.size());
  const numeric::wide lo = f.inv_freq_lo.empty() ? numeric::wide(0) : f.inv_freq_lo[k];
  posenc::detail::require<non_finite_error>(std::isfinite(f.inv_freq[k]) && std::isfinite(lo), where,
                                            "freqs.inv_freq[", k, "]: expected a finite frequency, got ",
                                            f.inv_freq[k], " + ", lo);
  return numeric::split_frequency(f.inv_freq[k], lo);
}

/// Check frequencies before use (the one validator: tables, apply, plans): at least one
/// inv_freq, every inv_freq finite and >= 0 (0: a pair that is not rotated, as the proportional
/// rule's), attention_factor finite and > 0, inv_freq_lo empty or one finite value per frequency.
///
/// In the precision of use (issue 37): inv_freq is a long double, but the double tables and
/// rotations form every phase from omega_k split into doubles (numeric::split_frequency), and the
/// float and half paths bound their errors in double (rotary/table.hpp), so each inv_freq must
/// also be finite as a double (<= DBL_MAX ~ 1.8e308; a rule's factor of 1e-320 gives 1e320,
/// finite in long double only: the double table was NaN, the float one garbage, silently); the
/// attention factor is used as a double, so it must be a normal double (>= DBL_MIN ~ 2.2e-308,
/// below which its products lose precision or vanish). Checked here, once, so that rotary::plan
/// refuses such a rule at construction and tables and applications refuse hand-made frequencies
/// at entry; the storage types' own limits on the factor are checked where the type is known
/// (rotary/table.hpp check_factor_fits, rotary/apply_plan.hpp check_factor_in_work_type). No
/// path rounds a frequency to float (the float and half types' phases are long double products
/// reduced exactly, their coefficients double or float values of cos and sin), so float's range
/// bounds the attention factor, not the frequencies.
/// Throws invalid_argument (non_finite_error for NaN/Inf, shape_error for an inv_freq_lo of
/// another length) naming `what` (the argument's name) and the index. Returns the number of pairs.
inline std::size_t validate(const frequencies& f, std::string_view where, std::string_view what = "freqs") {
  posenc::detail::require(!f.inv_freq.empty(), where, what, ".inv_freq: expected at least one frequency, got 0");
  for (std::size_t k = 0; k < f.inv_freq.size(); ++k) {
    posenc::detail::require<non_finite_error>(std::isfinite(f.inv_freq[k]), where, what,
                                              ".inv_freq: expected finite values >= 0, got ",
                                              static_cast<double>(f.inv_freq[k]), " at index ", k);
    posenc::detail::require(f.inv_freq[k] >= 0, where, what, ".inv_freq: expected finite values >= 0, got ",
                            static_cast<double>(f.inv_freq[k]), " at index ", k);
    if (!std::isfinite(static_cast<double>(f.inv_freq[k])))  // the message only on failure (long pair lists)
      posenc::detail::fail<non_finite_error>(
          where, what, ".inv_freq[", k, "]: expected a frequency finite in double (<= ",
          std::numeric_limits<double>::max(), "), got ", f.inv_freq[k],
          " (finite in long double only; a scaling factor near 0 divides the frequencies beyond double's range)");
  }
  posenc::detail::require<non_finite_error>(std::isfinite(f.attention_factor), where, what,
                                            ".attention_factor: expected a finite value, got ", f.attention_factor);
  posenc::detail::require(f.attention_factor > 0, where, what, ".attention_factor: expected a value > 0, got ",
                          f.attention_factor);
  posenc::detail::require(std::isnormal(f.attention_factor), where, what,
                          ".attention_factor: expected a normal double (>= ", std::numeric_limits<double>::min(),
                          "), got ", f.attention_factor);
  posenc::detail::require<shape_error>(f.inv_freq_lo.empty() || f.inv_freq_lo.size() == f.inv_freq.size(), where,
                                       what, ".inv_freq_lo: expected none or one per frequency (", f.inv_freq.size(),
                                       "), got ", f.inv_freq_lo.size());
  for (std::size_t k = 0; k < f.inv_freq_lo.size(); ++k)
    posenc::detail::require<non_finite_error>(std::isfinite(f.inv_freq_lo[k]), where, what,
                                              ".inv_freq_lo: expected finite values, got ",
                                              static_cast<double>(f.inv_freq_lo[k]), " at index ", k);
  return f.inv_freq.size();
}

/// The default (unscaled) RoPE frequencies: omega_k = base^(-2k / rotary_dim), with inv_freq_lo.
/// The base is checked as every encoding checks it (numeric::check_frequency_base: finite, > 0;
/// a base below 1 gives frequencies above 1, which rotary::validate bounds).
inline frequencies default_frequencies(std::size_t rotary_dim, double base = 10000.0) {
  constexpr std::string_view where = "rotary::default_frequencies";
  posenc::detail::require(rotary_dim >= 2 && rotary_dim % 2 == 0, where,
                          "rotary_dim: expected an even rotary_dim >= 2, got ", rotary_dim);
  numeric::check_frequency_base(base, where, "base");
  (void)checked::extent(rotary_dim, where, "rotary_dim");
  frequencies f = to_frequencies(
      {detail::default_omega(rotary_dim / 2, rotary_dim, detail::exact_log(static_cast<numeric::wide>(base))), 1.0});
  // in double, as every rotation uses them (a base near 0 gives frequencies beyond double's range)
  (void)rotary::validate(f, where, "base: the frequencies base^(-2k / rotary_dim), freqs");
  return f;
}

}  // namespace posenc::rotary
