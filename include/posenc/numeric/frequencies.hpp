// SPDX-License-Identifier: MIT
// The geometric frequencies of the sinusoidal and rotary encodings, written once:
//   omega_k = base^(-2k / D),  k = 0 .. pairs - 1,
// with D = d (eq. 6 of Vaswani et al.; RoPE's rotary_dim), D = 2 (d/2 - 1) (tensor2tensor's and
// fairseq's spacing base^(-k / (d/2 - 1))), or an axis' width (multi-axis RoPE). The sinusoidal
// tables (posenc/sinusoidal/options.hpp), the rotary rules and options (posenc/rotary/frequencies.hpp)
// and the device tables take their frequencies from here, and check the base here.
//
// omega_k is computed in double-word long double arithmetic (posenc/numeric/extended.hpp,
// ~2^-120 relative; tests/rotary/exact_phase.test.cpp checks the rules' frequencies within
// 2^-124 relative of mpmath): ln(base) as a pair, then with k = 8j + i,
// omega_k = e^(x_8j) e^(x_i) (x_k the exponent): pairs / 8 + 8 pair exponentials and one pair
// product per frequency instead of one exponential each. Standard library only.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <string_view>
#include <vector>

#include <posenc/core/checked.hpp>
#include <posenc/core/error.hpp>
#include <posenc/numeric/extended.hpp>
#include <posenc/numeric/phase.hpp>

namespace posenc::numeric {

/// ln(base) for base > 0, as a double-word pair.
[[nodiscard]] inline ff<wide> log_pair(wide base) { return ff_log(ff<wide>{base, 0}); }

/// omega_k = base^(-2k / exponent_dim) = e^(-(2k / exponent_dim) ln base) for k < pairs, from
/// ln(base) as a pair (log_pair): the one place the geometric frequency of the sinusoidal and
/// rotary encodings is written. Throws invalid_argument for exponent_dim = 0, non_finite_error for
/// a log_base that is not finite (a base checked by check_frequency_base has a finite one), and
/// size_error naming `what` for pairs above posenc::max_elements.
[[nodiscard]] inline std::vector<ff<wide>> geometric_frequencies(
    std::size_t pairs, std::size_t exponent_dim, const ff<wide>& log_base,
    std::string_view where = "numeric::geometric_frequencies", std::string_view what = "pairs") {
  posenc::detail::require(exponent_dim > 0, where, "exponent_dim: expected exponent_dim > 0, got 0");
  posenc::detail::require<non_finite_error>(std::isfinite(log_base.hi) && std::isfinite(log_base.lo), where,
                                            "log_base: expected a finite ln(base), got ", log_base.hi, " + ",
                                            log_base.lo);
  constexpr std::size_t block = 8;
  const ff<wide> d{static_cast<wide>(exponent_dim), 0};
  const auto e = [&](std::size_t k) { return ff_exp(-(ff<wide>{static_cast<wide>(2 * k), 0} / d * log_base)); };
  auto w = checked::make_vector<ff<wide>>(pairs, where, what);
  std::vector<ff<wide>> low(std::min(pairs, block));
  for (std::size_t i = 0; i < low.size(); ++i) low[i] = e(i);
  for (std::size_t j = 0; j * block < pairs; ++j) {
    const ff<wide> high = e(j * block);
    for (std::size_t i = 0; i < block && j * block + i < pairs; ++i) w[j * block + i] = j == 0 ? low[i] : high * low[i];
  }
  return w;
}

/// The check of a frequency base, the same for every encoding: finite (non_finite_error) and
/// > 0 (invalid_argument), the message naming `what` ("options.base", "base", "theta").
inline void check_frequency_base(double base, std::string_view where, std::string_view what) {
  posenc::detail::require<non_finite_error>(std::isfinite(base), where, what, ": expected a finite base, got ", base);
  posenc::detail::require(base > 0, where, what, ": expected base > 0, got ", base);
}

}  // namespace posenc::numeric
