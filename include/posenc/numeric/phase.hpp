// SPDX-License-Identifier: MIT
// Exact-phase sine and cosine: (sin, cos) of an angle formed in long double, reduced modulo 2 pi
// with a three-part Cody-Waite constant. The sinusoidal tables and the rotary family form their
// angles position * frequency in long double and evaluate them here, so no float32 phase error
// enters at large positions.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

namespace posenc::numeric {

/// The type in which phases are formed (x87 extended precision on x86-64: 64-bit significand).
using wide = long double;

/// The precision in which the products of unit complex numbers of a T table are formed:
/// long double for long double tables, double otherwise.
template <class T>
using work_t = std::conditional_t<std::is_same_v<T, long double>, long double, double>;

/// (sin, cos) of a long double angle theta, reduced modulo 2 pi with a three-part Cody-Waite
/// constant (P1 has 35 significant bits, so n * P1 is exact for |n| < 2^(digits - 35)); the
/// reduced angle r = r_hi + r_lo is evaluated as sin(r_hi) + r_lo cos(r_hi) in double. Outside
/// the exact-reduction range the library's long double sin/cos (Payne-Hanek) is used.
template <class W>
inline void sincos_angle(wide theta, W& s, W& c) {
  constexpr wide p1 = 0x6.487ED511p0L;
  constexpr wide p2 = 0xB4611A62633145Cp-96L;
  constexpr wide p3 = 0x6E0E68948127044p-160L;
  constexpr wide inv_two_pi = 0.159154943091895335768883763372514362L;
  constexpr int exact_bits = std::numeric_limits<wide>::digits - 35;
  const wide n = std::floor(theta * inv_two_pi + wide(0.5));  // (nearbyint is ~50x slower on x87)
  if (std::abs(n) < static_cast<wide>(std::int64_t{1} << exact_bits)) {
    const wide r = ((theta - n * p1) - n * p2) - n * p3;
    if constexpr (std::is_same_v<W, long double>) {
      s = std::sin(r);
      c = std::cos(r);
    } else {
      const double rh = static_cast<double>(r);
      const double rl = static_cast<double>(r - static_cast<wide>(rh));
      const double sh = std::sin(rh), ch = std::cos(rh);
      s = static_cast<W>(sh + rl * ch);
      c = static_cast<W>(ch - rl * sh);
    }
  } else {
    s = static_cast<W>(std::sin(theta));
    c = static_cast<W>(std::cos(theta));
  }
}

}  // namespace posenc::numeric
