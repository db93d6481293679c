// SPDX-License-Identifier: MIT
// Independent long double references for the sinusoidal tests: the textbook formulas, evaluated
// entry by entry with sinl/cosl (no angle-addition, no phase tables).
#pragma once

#include <cmath>
#include <cstddef>

#include <posenc/sinusoidal/sinusoidal.hpp>

namespace posenc_test {

/// w_k of the given spacing, from its textbook definition.
inline long double ref_frequency(std::size_t k, std::size_t m, posenc::sinusoidal::spacing sp, long double base) {
  if (sp == posenc::sinusoidal::spacing::two_k_over_d)
    return 1.0L / std::pow(base, static_cast<long double>(2 * k) / static_cast<long double>(2 * m));
  // tensor2tensor: exp(k * -log(max/min) / max(m - 1, 1))
  const long double denom = m > 1 ? static_cast<long double>(m - 1) : 1.0L;
  return std::exp(static_cast<long double>(k) * -std::log(base) / denom);
}

/// Entry (x, j) of the table in the given options (zero_pad: last column of odd d is 0).
inline long double ref_entry(long double x, std::size_t j, std::size_t d, const posenc::sinusoidal::options& o) {
  const std::size_t m = d / 2;
  if (j >= 2 * m) return 0.0L;
  std::size_t k;
  bool is_sin;
  if (o.layout == posenc::sinusoidal::layout::interleaved) {
    k = j / 2;
    is_sin = j % 2 == 0;
  } else {
    k = j < m ? j : j - m;
    is_sin = j < m;
  }
  const long double a = x * ref_frequency(k, m, o.spacing, o.base);
  return is_sin ? std::sin(a) : std::cos(a);
}

}  // namespace posenc_test
