// SPDX-License-Identifier: MIT
// The options that select one sinusoidal table, their validation, and the m = d/2 frequencies in
// long double (posenc/numeric/frequencies.hpp's, rounded): what the host tables (posenc/sinusoidal/sinusoidal.hpp), the device tables
// (posenc/device/sinusoidal.hpp) and the rotary family share.
#pragma once

#include <cmath>
#include <cstddef>
#include <string_view>
#include <vector>

#include <posenc/core/checked.hpp>
#include <posenc/core/error.hpp>
#include <posenc/core/thread_pool.hpp>
#include <posenc/numeric/frequencies.hpp>
#include <posenc/numeric/phase.hpp>

namespace posenc::sinusoidal {

/// Where the sine and cosine of frequency k go in a row of d = 2m columns.
enum class layout {
  interleaved,  ///< eq. 6: column 2k = sin(x w_k), column 2k+1 = cos(x w_k)
  half,         ///< [sin | cos]: column k = sin(x w_k), column m + k = cos(x w_k) (tensor2tensor, fairseq)
};

/// How the m = d/2 frequencies are spaced.
enum class spacing {
  two_k_over_d,           ///< w_k = base^(-2k/d) (eq. 6 with c = 1/base; Vaswani et al.)
  k_over_half_minus_one,  ///< w_k = base^(-k/(d/2 - 1)) (tensor2tensor, fairseq); d = 2: w_0 = 1
};

/// What an odd d means.
enum class odd_dimension {
  reject,    ///< throw invalid_argument
  zero_pad,  ///< the table of d - 1 columns, then one zero column (fairseq's rule)
};

/// Everything that selects one sinusoidal table. Row i of a table holds position
/// first_position + i * position_step (taken exactly, in long double, not rounded to double).
struct options {
  sinusoidal::layout layout = sinusoidal::layout::interleaved;
  sinusoidal::spacing spacing = sinusoidal::spacing::two_k_over_d;
  double base = 10000.0;          ///< > 0 and finite (eq. 6: c = 1/base)
  double first_position = 0.0;    ///< position of row 0 (eq. 6: 0; fairseq: padding_idx + 1)
  double position_step = 1.0;     ///< spacing of the rows (FLOATER grids t_i = i * Delta)
  odd_dimension odd = odd_dimension::reject;
  unsigned threads = 1;           ///< worker threads for fill/table (1: serial; 0: hardware concurrency;
                                  ///< at most posenc::max_threads; see posenc/core/thread_pool.hpp)
};

/// Validate (d, opt) and return m = floor(d / 2), the number of (sin, cos) pairs of a d-column
/// table. Throws posenc::invalid_argument for d < 2, an odd d unless opt.odd is zero_pad, a base
/// <= 0 or an unknown layout/spacing, and posenc::non_finite_error for a non-finite base,
/// first_position or position_step; every message starts with `where`.
inline std::size_t pair_count(std::size_t d, const options& opt, std::string_view where = "sinusoidal::pair_count") {
  posenc::detail::require(d >= 2, where, "d: expected d >= 2, got ", d);
  (void)checked::extent(d, where, "d");
  posenc::detail::require(d % 2 == 0 || opt.odd == odd_dimension::zero_pad, where,
                          "d: expected an even d (or options.odd = odd_dimension::zero_pad), got ", d);
  numeric::check_frequency_base(opt.base, where, "options.base");
  posenc::detail::require<non_finite_error>(std::isfinite(opt.first_position), where,
                                            "options.first_position: expected a finite position, got ",
                                            opt.first_position);
  posenc::detail::require<non_finite_error>(std::isfinite(opt.position_step), where,
                                            "options.position_step: expected a finite step, got ", opt.position_step);
  posenc::detail::require(opt.layout == layout::interleaved || opt.layout == layout::half, where,
                          "options.layout: expected layout::interleaved or layout::half");
  posenc::detail::require(opt.spacing == spacing::two_k_over_d || opt.spacing == spacing::k_over_half_minus_one, where,
                          "options.spacing: expected spacing::two_k_over_d or spacing::k_over_half_minus_one");
  (void)posenc::resolve_threads(opt.threads, where);  // options.threads <= max_threads
  return d / 2;
}

/// The m frequencies w_k (k = 0 .. m-1) of opt.spacing and opt.base, in long double (the
/// precision in which the tables form their phases x w_k; posenc/numeric/phase.hpp). m is the
/// number of pairs (pair_count(d, opt)), not d. Only opt.base and opt.spacing are read; they are
/// checked (posenc::invalid_argument / non_finite_error naming options.base or options.spacing).
inline std::vector<numeric::wide> frequencies_wide(std::size_t m, const options& opt) {
  constexpr std::string_view where = "sinusoidal::frequencies_wide";
  numeric::check_frequency_base(opt.base, where, "options.base");
  posenc::detail::require(opt.spacing == spacing::two_k_over_d || opt.spacing == spacing::k_over_half_minus_one, where,
                          "options.spacing: expected spacing::two_k_over_d or spacing::k_over_half_minus_one");
  using wide = numeric::wide;
  // base^(-2k / D) with D = 2m (eq. 6) or 2 (m - 1) (k / (m - 1) = 2k / (2 (m - 1))): the geometric
  // frequencies of posenc/numeric/frequencies.hpp, the rotary family's formula, rounded once to
  // long double (correctly rounded but for the pair's ~2^-120 relative error).
  if (m == 0) return {};
  const std::size_t denom = opt.spacing == spacing::two_k_over_d ? 2 * m : 2 * (m > 1 ? m - 1 : 1);
  const auto exact = numeric::geometric_frequencies(m, denom, numeric::log_pair(static_cast<wide>(opt.base)), where,
                                                    "d / 2 frequencies");
  std::vector<wide> w = checked::make_vector<wide>(m, where, "d / 2 frequencies");
  for (std::size_t k = 0; k < m; ++k) w[k] = exact[k].hi + exact[k].lo;
  return w;
}

}  // namespace posenc::sinusoidal
