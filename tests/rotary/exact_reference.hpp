// SPDX-License-Identifier: MIT
// A long double reference for cos/sin of the exact rotary phase n * omega (omega = inv_freq[k] +
// inv_freq_lo[k]), independent of numeric::sincos_phase's double-double reduction and table: the
// phase as a pair of long doubles (exact product n * omega_hi, n * omega_lo added), reduced modulo
// pi/2 in long double pairs (pi to 128 bits) to |r| <= pi/4, then sinl/cosl of r_hi plus the
// first-order term of r_lo, placed by the quadrant. Relative error ~2^-62 (sinl/cosl's ~1 ulp of long double) plus
// ~2^-118 n omega absolute: a 2^-9 ulp-of-double reference. exact_phase.test.cpp checks it
// against the mpmath data (tests/rotary/data/).
#pragma once

#include <cmath>
#include <cstddef>
#include <limits>

#include <posenc/numeric/extended.hpp>
#include <posenc/rotary/frequencies.hpp>

namespace posenc_test {

using ld = long double;

/// (cos, sin)(n * (w_hi + w_lo)) for an integer (or long double) position n.
inline void exact_cos_sin(ld n, ld w_hi, ld w_lo, ld& c, ld& s) {
  namespace nu = posenc::numeric;
  const nu::ff<ld> p = nu::two_prod(n, w_hi);
  const nu::ff<ld> phase = nu::fast_two_sum(p.hi, p.lo + n * w_lo);
  const nu::ff<ld> tp = nu::two_pi_ff<ld>();
  const nu::ff<ld> half_pi{tp.hi / 4, tp.lo / 4};
  const ld q = std::nearbyint(phase.hi / half_pi.hi);
  const nu::ff<ld> r = phase - half_pi * nu::ff<ld>{q, 0};  // |r| <= pi/4: sinl/cosl need no reduction
  const ld cr = std::cos(r.hi) - r.lo * std::sin(r.hi);
  const ld sr = std::sin(r.hi) + r.lo * std::cos(r.hi);
  switch (static_cast<long long>(std::fmod(q, 4.0L) + 4) % 4) {
    case 0: c = cr, s = sr; break;
    case 1: c = -sr, s = cr; break;
    case 2: c = -cr, s = -sr; break;
    default: c = sr, s = -cr; break;
  }
}

/// The exact (cos, sin) of pair k at position n, for frequencies f (inv_freq_lo empty: 0).
inline void exact_cos_sin(const posenc::rotary::frequencies& f, std::size_t k, ld n, ld& c, ld& s) {
  exact_cos_sin(n, f.inv_freq[k], f.inv_freq_lo.empty() ? ld(0) : f.inv_freq_lo[k], c, s);
}

/// One ulp of a double at |x| (normal x; the subnormal spacing below).
inline ld ulp_double(ld x) {
  int e = 0;
  (void)std::frexp(std::abs(x), &e);
  if (x == 0 || e < std::numeric_limits<double>::min_exponent) e = std::numeric_limits<double>::min_exponent;
  return std::ldexp(1.0L, e - 53);
}

}  // namespace posenc_test
