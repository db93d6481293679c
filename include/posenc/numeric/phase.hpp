// SPDX-License-Identifier: MIT
// Exact-phase sine and cosine.
//  - sincos_angle: (sin, cos) of an angle formed in long double, reduced modulo 2 pi with a
//    three-part Cody-Waite constant. The sinusoidal tables and the rotary float/half/long double
//    paths form their angles position * frequency in long double and evaluate them here, so no
//    float32 phase error enters at large positions.
//  - sincos_phase: (sin, cos)(x w) * a rounded once to double, with the frequency w carried in
//    three doubles (~2^-117 relative) and the phase x w and its reduction in double-double: the
//    rotary double tables and rotations, within 0.5 ulp + 2^-9 ulp of the exact value.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <type_traits>

#include <posenc/numeric/extended.hpp>

namespace posenc::numeric {

/// The type in which phases are formed (x87 extended precision on x86-64: 64-bit significand).
using wide = long double;

/// The working precisions of a storage type T (float, double, long double, or a 16-bit type such
/// as Eigen::half and Eigen::bfloat16), the one place they are chosen:
///  - phase: where phases are evaluated and unit complex numbers e^{i x w} multiplied (the phase
///    tables of numeric/phase_fill.hpp, the sinusoidal and rotary tables' anchors): long double
///    for long double, double for every narrower type;
///  - rotation: where stored values are combined with cos/sin coefficients (a c - b s in the
///    rotary kernels): float for the types narrower than float (binary16, bfloat16), else the
///    phase precision.
template <class T>
struct work_precision {
  using phase = std::conditional_t<std::is_same_v<T, long double>, long double, double>;
  using rotation = std::conditional_t<(sizeof(T) < sizeof(float)), float, phase>;
};
template <class T>
using phase_work_t = typename work_precision<T>::phase;
template <class T>
using rotation_work_t = typename work_precision<T>::rotation;

namespace detail {
/// 2^e as a wide, exactly (constant-evaluated where e is).
constexpr wide pow2_wide(int e) {
  wide r = 1;
  for (; e > 0; --e) r *= 2;
  return r;
}

/// std::floor(y), exactly, without std::floor's cost on x87 (GCC's inline floor switches the x87
/// control word twice, ~100 cycles; nearbyint is slower still): for |y| < 2^(digits - 2) the
/// nearest integer t = (y + C) - C with C = 1.5 2^(digits - 1) (round to nearest, the default
/// mode), less 1 where t > y; std::floor(y) elsewhere (NaN, Inf, huge, zero: its sign), and
/// always under -ffast-math (whose reassociation may fold (y + C) - C to y).
inline wide floor_exact(wide y) {
#if defined(__FAST_MATH__)
  return std::floor(y);
#else
  constexpr int p = std::numeric_limits<wide>::digits;
  constexpr wide C = detail::pow2_wide(p - 1) + detail::pow2_wide(p - 2);
  constexpr wide limit = detail::pow2_wide(p - 2);
  if (!(std::abs(y) < limit) || y == 0) return std::floor(y);
  const wide t = (y + C) - C;
  return t > y ? t - 1 : t;
#endif
}
}  // namespace detail

/// (sin, cos) of a long double angle theta, reduced modulo 2 pi with a three-part Cody-Waite
/// constant (P1 has 35 significant bits, so n * P1 is exact for |n| < 2^(digits - 35)); the
/// reduced angle r = r_hi + r_lo is evaluated as sin(r_hi) + r_lo cos(r_hi) in double. Outside
/// the exact-reduction range the library's long double sin/cos (Payne-Hanek) is used. Total: a
/// NaN or infinite theta gives NaN in s and c, as std::sin and std::cos do.
template <class W>
inline void sincos_angle(wide theta, W& s, W& c) {
  constexpr wide p1 = 0x6.487ED511p0L;
  constexpr wide p2 = 0xB4611A62633145Cp-96L;
  constexpr wide p3 = 0x6E0E68948127044p-160L;
  constexpr wide inv_two_pi = 0.159154943091895335768883763372514362L;
  constexpr int exact_bits = std::numeric_limits<wide>::digits - 35;
  const wide n = detail::floor_exact(theta * inv_two_pi + wide(0.5));  // std::floor, faster on x87
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

/// A frequency carried as three doubles, w = hi + mid + lo (each the double nearest the rest).
struct frequency3 {
  double hi = 0, mid = 0, lo = 0;
};

/// The frequency w + correction (a long double and the long double correction that makes it
/// exact, e.g. rotary::frequencies::inv_freq[k] and inv_freq_lo[k]) as three doubles: exact up to
/// the rounding of the last part (~2^-117 relative with a 64-bit long double; the long double pair
/// itself carries ~2^-125).
inline frequency3 split_frequency(wide w, wide correction = 0) {
  const ff<wide> v = two_sum(w, correction);
  const double hi = static_cast<double>(v.hi);
  const ff<wide> rest = two_sum(v.hi - static_cast<wide>(hi), v.lo);  // v.hi - hi is exact
  const double mid = static_cast<double>(rest.hi);
  const double lo = static_cast<double>((rest.hi - static_cast<wide>(mid)) + rest.lo);
  return {hi, mid, lo};
}

namespace detail {

/// sin(j pi / 128) for j = 0..255 as hi + lo (scripts/phase_constants.py, mpmath; exact 0 and
/// +-1 where they are); cos(j pi / 128) is row (j + 64) mod 256.
inline constexpr double sin_pi_128[256][2] = {
    {0x0.0p+0, 0x0.0p+0},
    {0x1.92155f7a3667ep-6, -0x1.b1d63091a0130p-64},
    {0x1.91f65f10dd814p-5, -0x1.912bd0d569a90p-61},
    {0x1.2d52092ce19f6p-4, -0x1.9a088a8bf6b2cp-59},
    {0x1.917a6bc29b42cp-4, -0x1.e2718d26ed688p-60},
    {0x1.f564e56a9730ep-4, 0x1.a2704729ae56dp-59},
    {0x1.2c8106e8e613ap-3, 0x1.13000a89a11e0p-58},
    {0x1.5e214448b3fc6p-3, 0x1.531ff779ddac6p-57},
    {0x1.8f8b83c69a60bp-3, -0x1.26d19b9ff8d82p-57},
    {0x1.c0b826a7e4f63p-3, -0x1.af1439e521935p-62},
    {0x1.f19f97b215f1bp-3, -0x1.42deef11da2c4p-57},
    {0x1.111d262b1f677p-2, 0x1.824c20ab7aa9ap-56},
    {0x1.294062ed59f06p-2, -0x1.5d28da2c4612dp-56},
    {0x1.4135c94176601p-2, 0x1.0c97c4afa2518p-56},
    {0x1.58f9a75ab1fddp-2, -0x1.efdc0d58cf620p-62},
    {0x1.7088530fa459fp-2, -0x1.44b19e0864c5dp-56},
    {0x1.87de2a6aea963p-2, -0x1.72cedd3d5a610p-57},
    {0x1.9ef7943a8ed8ap-2, 0x1.6da81290bdbabp-57},
    {0x1.b5d1009e15cc0p-2, 0x1.5b362cb974183p-57},
    {0x1.cc66e9931c45ep-2, 0x1.6850e59c37f8fp-58},
    {0x1.e2b5d3806f63bp-2, 0x1.e0d891d3c6841p-58},
    {0x1.f8ba4dbf89abap-2, -0x1.2ec1fc1b776b8p-60},
    {0x1.073879922ffeep-1, -0x1.a5a014347406cp-55},
    {0x1.11eb3541b4b23p-1, -0x1.ef23b69abe4f1p-55},
    {0x1.1c73b39ae68c8p-1, 0x1.b25dd267f6600p-55},
    {0x1.26d054cdd12dfp-1, -0x1.5da743ef3770cp-55},
    {0x1.30ff7fce17035p-1, -0x1.efcc626f74a6fp-57},
    {0x1.3affa292050b9p-1, 0x1.e3e25e3954964p-56},
    {0x1.44cf325091dd6p-1, 0x1.8076a2cfdc6b3p-57},
    {0x1.4e6cabbe3e5e9p-1, 0x1.3c293edceb327p-57},
    {0x1.57d69348ceca0p-1, -0x1.75720992bfbb2p-55},
    {0x1.610b7551d2cdfp-1, -0x1.251b352ff2a37p-56},
    {0x1.6a09e667f3bcdp-1, -0x1.bdd3413b26456p-55},
    {0x1.72d0837efff96p-1, 0x1.0d4ef0f1d915cp-55},
    {0x1.7b5df226aafafp-1, -0x1.0f537acdf0ad7p-56},
    {0x1.83b0e0bff976ep-1, -0x1.6f420f8ea3475p-56},
    {0x1.8bc806b151741p-1, -0x1.2c5e12ed1336dp-55},
    {0x1.93a22499263fbp-1, 0x1.3d419a920df0bp-55},
    {0x1.9b3e047f38741p-1, -0x1.30ee286712474p-55},
    {0x1.a29a7a0462782p-1, -0x1.128bb015df175p-56},
    {0x1.a9b66290ea1a3p-1, 0x1.9f630e8b6dac8p-60},
    {0x1.b090a58150200p-1, -0x1.926da300ffccep-55},
    {0x1.b728345196e3ep-1, -0x1.bc69f324e6d61p-55},
    {0x1.bd7c0ac6f952ap-1, -0x1.825a732ac700ap-55},
    {0x1.c38b2f180bdb1p-1, -0x1.6e0b1757c8d07p-56},
    {0x1.c954b213411f5p-1, -0x1.2fb761e946603p-58},
    {0x1.ced7af43cc773p-1, -0x1.e7b6bb5ab58aep-58},
    {0x1.d4134d14dc93ap-1, -0x1.4ef5295d25af2p-55},
    {0x1.d906bcf328d46p-1, 0x1.457e610231ac2p-56},
    {0x1.ddb13b6ccc23cp-1, 0x1.83c37c6107db3p-55},
    {0x1.e212104f686e5p-1, -0x1.014c76c126527p-55},
    {0x1.e6288ec48e112p-1, -0x1.16b56f2847754p-57},
    {0x1.e9f4156c62ddap-1, 0x1.760b1e2e3f81ep-55},
    {0x1.ed740e7684963p-1, 0x1.e82c791f59cc2p-56},
    {0x1.f0a7efb9230d7p-1, 0x1.52c7adc6b4989p-56},
    {0x1.f38f3ac64e589p-1, -0x1.d7bafb51f72e6p-56},
    {0x1.f6297cff75cb0p-1, 0x1.562172a361fd3p-56},
    {0x1.f8764fa714ba9p-1, 0x1.ab256778ffcb6p-56},
    {0x1.fa7557f08a517p-1, -0x1.7a0a8ca13571fp-55},
    {0x1.fc26470e19fd3p-1, 0x1.1ec8668ecaceep-55},
    {0x1.fd88da3d12526p-1, -0x1.87df6378811c7p-55},
    {0x1.fe9cdad01883ap-1, 0x1.521ecd0c67e35p-57},
    {0x1.ff621e3796d7ep-1, -0x1.c57bc2e24aa15p-57},
    {0x1.ffd886084cd0dp-1, -0x1.1354d4556e4cbp-55},
    {0x1.0000000000000p+0, 0x0.0p+0},
    {0x1.ffd886084cd0dp-1, -0x1.1354d4556e4cbp-55},
    {0x1.ff621e3796d7ep-1, -0x1.c57bc2e24aa15p-57},
    {0x1.fe9cdad01883ap-1, 0x1.521ecd0c67e35p-57},
    {0x1.fd88da3d12526p-1, -0x1.87df6378811c7p-55},
    {0x1.fc26470e19fd3p-1, 0x1.1ec8668ecaceep-55},
    {0x1.fa7557f08a517p-1, -0x1.7a0a8ca13571fp-55},
    {0x1.f8764fa714ba9p-1, 0x1.ab256778ffcb6p-56},
    {0x1.f6297cff75cb0p-1, 0x1.562172a361fd3p-56},
    {0x1.f38f3ac64e589p-1, -0x1.d7bafb51f72e6p-56},
    {0x1.f0a7efb9230d7p-1, 0x1.52c7adc6b4989p-56},
    {0x1.ed740e7684963p-1, 0x1.e82c791f59cc2p-56},
    {0x1.e9f4156c62ddap-1, 0x1.760b1e2e3f81ep-55},
    {0x1.e6288ec48e112p-1, -0x1.16b56f2847754p-57},
    {0x1.e212104f686e5p-1, -0x1.014c76c126527p-55},
    {0x1.ddb13b6ccc23cp-1, 0x1.83c37c6107db3p-55},
    {0x1.d906bcf328d46p-1, 0x1.457e610231ac2p-56},
    {0x1.d4134d14dc93ap-1, -0x1.4ef5295d25af2p-55},
    {0x1.ced7af43cc773p-1, -0x1.e7b6bb5ab58aep-58},
    {0x1.c954b213411f5p-1, -0x1.2fb761e946603p-58},
    {0x1.c38b2f180bdb1p-1, -0x1.6e0b1757c8d07p-56},
    {0x1.bd7c0ac6f952ap-1, -0x1.825a732ac700ap-55},
    {0x1.b728345196e3ep-1, -0x1.bc69f324e6d61p-55},
    {0x1.b090a58150200p-1, -0x1.926da300ffccep-55},
    {0x1.a9b66290ea1a3p-1, 0x1.9f630e8b6dac8p-60},
    {0x1.a29a7a0462782p-1, -0x1.128bb015df175p-56},
    {0x1.9b3e047f38741p-1, -0x1.30ee286712474p-55},
    {0x1.93a22499263fbp-1, 0x1.3d419a920df0bp-55},
    {0x1.8bc806b151741p-1, -0x1.2c5e12ed1336dp-55},
    {0x1.83b0e0bff976ep-1, -0x1.6f420f8ea3475p-56},
    {0x1.7b5df226aafafp-1, -0x1.0f537acdf0ad7p-56},
    {0x1.72d0837efff96p-1, 0x1.0d4ef0f1d915cp-55},
    {0x1.6a09e667f3bcdp-1, -0x1.bdd3413b26456p-55},
    {0x1.610b7551d2cdfp-1, -0x1.251b352ff2a37p-56},
    {0x1.57d69348ceca0p-1, -0x1.75720992bfbb2p-55},
    {0x1.4e6cabbe3e5e9p-1, 0x1.3c293edceb327p-57},
    {0x1.44cf325091dd6p-1, 0x1.8076a2cfdc6b3p-57},
    {0x1.3affa292050b9p-1, 0x1.e3e25e3954964p-56},
    {0x1.30ff7fce17035p-1, -0x1.efcc626f74a6fp-57},
    {0x1.26d054cdd12dfp-1, -0x1.5da743ef3770cp-55},
    {0x1.1c73b39ae68c8p-1, 0x1.b25dd267f6600p-55},
    {0x1.11eb3541b4b23p-1, -0x1.ef23b69abe4f1p-55},
    {0x1.073879922ffeep-1, -0x1.a5a014347406cp-55},
    {0x1.f8ba4dbf89abap-2, -0x1.2ec1fc1b776b8p-60},
    {0x1.e2b5d3806f63bp-2, 0x1.e0d891d3c6841p-58},
    {0x1.cc66e9931c45ep-2, 0x1.6850e59c37f8fp-58},
    {0x1.b5d1009e15cc0p-2, 0x1.5b362cb974183p-57},
    {0x1.9ef7943a8ed8ap-2, 0x1.6da81290bdbabp-57},
    {0x1.87de2a6aea963p-2, -0x1.72cedd3d5a610p-57},
    {0x1.7088530fa459fp-2, -0x1.44b19e0864c5dp-56},
    {0x1.58f9a75ab1fddp-2, -0x1.efdc0d58cf620p-62},
    {0x1.4135c94176601p-2, 0x1.0c97c4afa2518p-56},
    {0x1.294062ed59f06p-2, -0x1.5d28da2c4612dp-56},
    {0x1.111d262b1f677p-2, 0x1.824c20ab7aa9ap-56},
    {0x1.f19f97b215f1bp-3, -0x1.42deef11da2c4p-57},
    {0x1.c0b826a7e4f63p-3, -0x1.af1439e521935p-62},
    {0x1.8f8b83c69a60bp-3, -0x1.26d19b9ff8d82p-57},
    {0x1.5e214448b3fc6p-3, 0x1.531ff779ddac6p-57},
    {0x1.2c8106e8e613ap-3, 0x1.13000a89a11e0p-58},
    {0x1.f564e56a9730ep-4, 0x1.a2704729ae56dp-59},
    {0x1.917a6bc29b42cp-4, -0x1.e2718d26ed688p-60},
    {0x1.2d52092ce19f6p-4, -0x1.9a088a8bf6b2cp-59},
    {0x1.91f65f10dd814p-5, -0x1.912bd0d569a90p-61},
    {0x1.92155f7a3667ep-6, -0x1.b1d63091a0130p-64},
    {0x0.0p+0, 0x0.0p+0},
    {-0x1.92155f7a3667ep-6, 0x1.b1d63091a0130p-64},
    {-0x1.91f65f10dd814p-5, 0x1.912bd0d569a90p-61},
    {-0x1.2d52092ce19f6p-4, 0x1.9a088a8bf6b2cp-59},
    {-0x1.917a6bc29b42cp-4, 0x1.e2718d26ed688p-60},
    {-0x1.f564e56a9730ep-4, -0x1.a2704729ae56dp-59},
    {-0x1.2c8106e8e613ap-3, -0x1.13000a89a11e0p-58},
    {-0x1.5e214448b3fc6p-3, -0x1.531ff779ddac6p-57},
    {-0x1.8f8b83c69a60bp-3, 0x1.26d19b9ff8d82p-57},
    {-0x1.c0b826a7e4f63p-3, 0x1.af1439e521935p-62},
    {-0x1.f19f97b215f1bp-3, 0x1.42deef11da2c4p-57},
    {-0x1.111d262b1f677p-2, -0x1.824c20ab7aa9ap-56},
    {-0x1.294062ed59f06p-2, 0x1.5d28da2c4612dp-56},
    {-0x1.4135c94176601p-2, -0x1.0c97c4afa2518p-56},
    {-0x1.58f9a75ab1fddp-2, 0x1.efdc0d58cf620p-62},
    {-0x1.7088530fa459fp-2, 0x1.44b19e0864c5dp-56},
    {-0x1.87de2a6aea963p-2, 0x1.72cedd3d5a610p-57},
    {-0x1.9ef7943a8ed8ap-2, -0x1.6da81290bdbabp-57},
    {-0x1.b5d1009e15cc0p-2, -0x1.5b362cb974183p-57},
    {-0x1.cc66e9931c45ep-2, -0x1.6850e59c37f8fp-58},
    {-0x1.e2b5d3806f63bp-2, -0x1.e0d891d3c6841p-58},
    {-0x1.f8ba4dbf89abap-2, 0x1.2ec1fc1b776b8p-60},
    {-0x1.073879922ffeep-1, 0x1.a5a014347406cp-55},
    {-0x1.11eb3541b4b23p-1, 0x1.ef23b69abe4f1p-55},
    {-0x1.1c73b39ae68c8p-1, -0x1.b25dd267f6600p-55},
    {-0x1.26d054cdd12dfp-1, 0x1.5da743ef3770cp-55},
    {-0x1.30ff7fce17035p-1, 0x1.efcc626f74a6fp-57},
    {-0x1.3affa292050b9p-1, -0x1.e3e25e3954964p-56},
    {-0x1.44cf325091dd6p-1, -0x1.8076a2cfdc6b3p-57},
    {-0x1.4e6cabbe3e5e9p-1, -0x1.3c293edceb327p-57},
    {-0x1.57d69348ceca0p-1, 0x1.75720992bfbb2p-55},
    {-0x1.610b7551d2cdfp-1, 0x1.251b352ff2a37p-56},
    {-0x1.6a09e667f3bcdp-1, 0x1.bdd3413b26456p-55},
    {-0x1.72d0837efff96p-1, -0x1.0d4ef0f1d915cp-55},
    {-0x1.7b5df226aafafp-1, 0x1.0f537acdf0ad7p-56},
    {-0x1.83b0e0bff976ep-1, 0x1.6f420f8ea3475p-56},
    {-0x1.8bc806b151741p-1, 0x1.2c5e12ed1336dp-55},
    {-0x1.93a22499263fbp-1, -0x1.3d419a920df0bp-55},
    {-0x1.9b3e047f38741p-1, 0x1.30ee286712474p-55},
    {-0x1.a29a7a0462782p-1, 0x1.128bb015df175p-56},
    {-0x1.a9b66290ea1a3p-1, -0x1.9f630e8b6dac8p-60},
    {-0x1.b090a58150200p-1, 0x1.926da300ffccep-55},
    {-0x1.b728345196e3ep-1, 0x1.bc69f324e6d61p-55},
    {-0x1.bd7c0ac6f952ap-1, 0x1.825a732ac700ap-55},
    {-0x1.c38b2f180bdb1p-1, 0x1.6e0b1757c8d07p-56},
    {-0x1.c954b213411f5p-1, 0x1.2fb761e946603p-58},
    {-0x1.ced7af43cc773p-1, 0x1.e7b6bb5ab58aep-58},
    {-0x1.d4134d14dc93ap-1, 0x1.4ef5295d25af2p-55},
    {-0x1.d906bcf328d46p-1, -0x1.457e610231ac2p-56},
    {-0x1.ddb13b6ccc23cp-1, -0x1.83c37c6107db3p-55},
    {-0x1.e212104f686e5p-1, 0x1.014c76c126527p-55},
    {-0x1.e6288ec48e112p-1, 0x1.16b56f2847754p-57},
    {-0x1.e9f4156c62ddap-1, -0x1.760b1e2e3f81ep-55},
    {-0x1.ed740e7684963p-1, -0x1.e82c791f59cc2p-56},
    {-0x1.f0a7efb9230d7p-1, -0x1.52c7adc6b4989p-56},
    {-0x1.f38f3ac64e589p-1, 0x1.d7bafb51f72e6p-56},
    {-0x1.f6297cff75cb0p-1, -0x1.562172a361fd3p-56},
    {-0x1.f8764fa714ba9p-1, -0x1.ab256778ffcb6p-56},
    {-0x1.fa7557f08a517p-1, 0x1.7a0a8ca13571fp-55},
    {-0x1.fc26470e19fd3p-1, -0x1.1ec8668ecaceep-55},
    {-0x1.fd88da3d12526p-1, 0x1.87df6378811c7p-55},
    {-0x1.fe9cdad01883ap-1, -0x1.521ecd0c67e35p-57},
    {-0x1.ff621e3796d7ep-1, 0x1.c57bc2e24aa15p-57},
    {-0x1.ffd886084cd0dp-1, 0x1.1354d4556e4cbp-55},
    {-0x1.0000000000000p+0, 0x0.0p+0},
    {-0x1.ffd886084cd0dp-1, 0x1.1354d4556e4cbp-55},
    {-0x1.ff621e3796d7ep-1, 0x1.c57bc2e24aa15p-57},
    {-0x1.fe9cdad01883ap-1, -0x1.521ecd0c67e35p-57},
    {-0x1.fd88da3d12526p-1, 0x1.87df6378811c7p-55},
    {-0x1.fc26470e19fd3p-1, -0x1.1ec8668ecaceep-55},
    {-0x1.fa7557f08a517p-1, 0x1.7a0a8ca13571fp-55},
    {-0x1.f8764fa714ba9p-1, -0x1.ab256778ffcb6p-56},
    {-0x1.f6297cff75cb0p-1, -0x1.562172a361fd3p-56},
    {-0x1.f38f3ac64e589p-1, 0x1.d7bafb51f72e6p-56},
    {-0x1.f0a7efb9230d7p-1, -0x1.52c7adc6b4989p-56},
    {-0x1.ed740e7684963p-1, -0x1.e82c791f59cc2p-56},
    {-0x1.e9f4156c62ddap-1, -0x1.760b1e2e3f81ep-55},
    {-0x1.e6288ec48e112p-1, 0x1.16b56f2847754p-57},
    {-0x1.e212104f686e5p-1, 0x1.014c76c126527p-55},
    {-0x1.ddb13b6ccc23cp-1, -0x1.83c37c6107db3p-55},
    {-0x1.d906bcf328d46p-1, -0x1.457e610231ac2p-56},
    {-0x1.d4134d14dc93ap-1, 0x1.4ef5295d25af2p-55},
    {-0x1.ced7af43cc773p-1, 0x1.e7b6bb5ab58aep-58},
    {-0x1.c954b213411f5p-1, 0x1.2fb761e946603p-58},
    {-0x1.c38b2f180bdb1p-1, 0x1.6e0b1757c8d07p-56},
    {-0x1.bd7c0ac6f952ap-1, 0x1.825a732ac700ap-55},
    {-0x1.b728345196e3ep-1, 0x1.bc69f324e6d61p-55},
    {-0x1.b090a58150200p-1, 0x1.926da300ffccep-55},
    {-0x1.a9b66290ea1a3p-1, -0x1.9f630e8b6dac8p-60},
    {-0x1.a29a7a0462782p-1, 0x1.128bb015df175p-56},
    {-0x1.9b3e047f38741p-1, 0x1.30ee286712474p-55},
    {-0x1.93a22499263fbp-1, -0x1.3d419a920df0bp-55},
    {-0x1.8bc806b151741p-1, 0x1.2c5e12ed1336dp-55},
    {-0x1.83b0e0bff976ep-1, 0x1.6f420f8ea3475p-56},
    {-0x1.7b5df226aafafp-1, 0x1.0f537acdf0ad7p-56},
    {-0x1.72d0837efff96p-1, -0x1.0d4ef0f1d915cp-55},
    {-0x1.6a09e667f3bcdp-1, 0x1.bdd3413b26456p-55},
    {-0x1.610b7551d2cdfp-1, 0x1.251b352ff2a37p-56},
    {-0x1.57d69348ceca0p-1, 0x1.75720992bfbb2p-55},
    {-0x1.4e6cabbe3e5e9p-1, -0x1.3c293edceb327p-57},
    {-0x1.44cf325091dd6p-1, -0x1.8076a2cfdc6b3p-57},
    {-0x1.3affa292050b9p-1, -0x1.e3e25e3954964p-56},
    {-0x1.30ff7fce17035p-1, 0x1.efcc626f74a6fp-57},
    {-0x1.26d054cdd12dfp-1, 0x1.5da743ef3770cp-55},
    {-0x1.1c73b39ae68c8p-1, -0x1.b25dd267f6600p-55},
    {-0x1.11eb3541b4b23p-1, 0x1.ef23b69abe4f1p-55},
    {-0x1.073879922ffeep-1, 0x1.a5a014347406cp-55},
    {-0x1.f8ba4dbf89abap-2, 0x1.2ec1fc1b776b8p-60},
    {-0x1.e2b5d3806f63bp-2, -0x1.e0d891d3c6841p-58},
    {-0x1.cc66e9931c45ep-2, -0x1.6850e59c37f8fp-58},
    {-0x1.b5d1009e15cc0p-2, -0x1.5b362cb974183p-57},
    {-0x1.9ef7943a8ed8ap-2, -0x1.6da81290bdbabp-57},
    {-0x1.87de2a6aea963p-2, 0x1.72cedd3d5a610p-57},
    {-0x1.7088530fa459fp-2, 0x1.44b19e0864c5dp-56},
    {-0x1.58f9a75ab1fddp-2, 0x1.efdc0d58cf620p-62},
    {-0x1.4135c94176601p-2, -0x1.0c97c4afa2518p-56},
    {-0x1.294062ed59f06p-2, 0x1.5d28da2c4612dp-56},
    {-0x1.111d262b1f677p-2, -0x1.824c20ab7aa9ap-56},
    {-0x1.f19f97b215f1bp-3, 0x1.42deef11da2c4p-57},
    {-0x1.c0b826a7e4f63p-3, 0x1.af1439e521935p-62},
    {-0x1.8f8b83c69a60bp-3, 0x1.26d19b9ff8d82p-57},
    {-0x1.5e214448b3fc6p-3, -0x1.531ff779ddac6p-57},
    {-0x1.2c8106e8e613ap-3, -0x1.13000a89a11e0p-58},
    {-0x1.f564e56a9730ep-4, -0x1.a2704729ae56dp-59},
    {-0x1.917a6bc29b42cp-4, 0x1.e2718d26ed688p-60},
    {-0x1.2d52092ce19f6p-4, 0x1.9a088a8bf6b2cp-59},
    {-0x1.91f65f10dd814p-5, 0x1.912bd0d569a90p-61},
    {-0x1.92155f7a3667ep-6, 0x1.b1d63091a0130p-64}
};

}  // namespace detail

/// (sin, cos)(x w) * a, each rounded once to double, for a position x = x_hi + x_lo (x_lo = 0
/// for double positions; a long double position splits exactly into two doubles) and a
/// frequency w (frequency3). Steps:
///  1. the phase x_hi w = a0 + a1 + b0 + b1 + x_hi w.lo (exact products of x_hi with w.hi and
///     w.mid, the last product rounded: 2^-159 relative) and x_lo w.hi (rounded: 2^-106 of the
///     phase, zero for integer positions);
///  2. n = nearest(a0 128/pi) and r = phase - n pi/128 in double-double, pi/128 in three
///     doubles (n pi/128 exact to 2^-159 relative): |r| <= pi/256 (up to 0.0154 for
///     |a0 128/pi| near 2^50), absolute error ~2^-116 |x w| + 2^-150;
///  3. sin(phase) = S cos r + C sin r and cos(phase) = C cos r - S sin r with S, C = sin, cos of
///     (n mod 256) pi/128 from a double-double table, sin r - r and cos r - 1 by their Taylor
///     polynomials (to r^11 and r^10: truncation below 2^-80), the leading S + C r_hi and
///     C - S r_hi formed exactly (TwoProd, TwoSum) and the small rest (below 2^-12.5 of the
///     result: |r|^2 / 2 against S or C, and |S| <= 2 |result| where S cos r is the small term)
///     added once, its roundings below 2^-63 of the result;
///  4. a times that: a * leading exactly (TwoProd), the rest added, one final rounding.
/// The value before the final rounding is within ~2^-62 |value| + 2^-116 |x w a| of
/// a sin(x w) (a cos(x w)), so each result is within 0.5 ulp + 2^-9 ulp of it wherever
/// |sin(x w)| (|cos(x w)|) >= 2^-60 |x w| (tests/rotary/exact_phase.test.cpp). Phases with
/// |x w| >= 2^50 * pi/128 (x_hi w past ~2.7 10^13) fall back to sincos_angle's long double phase.
/// Total: no throw; a NaN or Inf position or frequency gives NaN results (the long double
/// fallback's sin/cos); the rotary tables and apply validate positions and frequencies first.
inline void sincos_phase(double x_hi, double x_lo, const frequency3& w, double a, double& s, double& c) {
  constexpr double pi128_0 = 0x1.921fb54442d18p-6, pi128_1 = 0x1.1a62633145c07p-60;
  constexpr double pi128_2 = -0x1.f1976b7ed8fbcp-116, inv_pi128 = 0x1.45f306dc9c883p+5;
  constexpr double round_magic = 0x1.8p52;
  const ff<double> a_ = two_prod(x_hi, w.hi);
  const ff<double> b_ = two_prod(x_hi, w.mid);
  const double t = a_.hi * inv_pi128;
  if (!(std::abs(t) < 0x1p50)) {
    double sd, cd;
    sincos_angle((static_cast<wide>(x_hi) + static_cast<wide>(x_lo)) * (static_cast<wide>(w.hi) + static_cast<wide>(w.mid)),
                 sd, cd);
    s = sd * a;
    c = cd * a;
    return;
  }
  const double n = (t + round_magic) - round_magic;  // nearest integer (|t| < 2^50)
  const ff<double> A = two_prod(n, pi128_0);
  const ff<double> B = two_prod(n, pi128_1);
  const ff<double> s0 = two_sum(a_.hi, -A.hi);
  const ff<double> m1 = two_sum(a_.lo, b_.hi);
  const ff<double> m2 = two_sum(-A.lo, -B.hi);
  const ff<double> m = two_sum(m1.hi, m2.hi);
  const double low = ((s0.lo + m.lo) + (m1.lo + m2.lo)) + ((b_.lo - B.lo) + (x_hi * w.lo + x_lo * w.hi - n * pi128_2));
  const ff<double> h = two_sum(s0.hi, m.hi);
  const ff<double> r = fast_two_sum(h.hi, h.lo + low);
  const double rh = r.hi, rl = r.lo, r2 = rh * rh;
  // sin(rh) - rh and cos(rh) - 1 (Taylor; |rh| <= 0.0154)
  const double sp =
      rh * r2 *
      (-0x1.5555555555555p-3 +
       r2 * (0x1.1111111111111p-7 + r2 * (-0x1.a01a01a01a01ap-13 + r2 * (0x1.71de3a556c734p-19 - r2 * 0x1.ae64567f544e4p-26))));
  const double cm =
      r2 * (-0.5 + r2 * (0x1.5555555555555p-5 +
                         r2 * (-0x1.6c16c16c16c17p-10 + r2 * (0x1.a01a01a01a01ap-16 - r2 * 0x1.27e4fb7789f5cp-22))));
  const double sig = sp + rl;       // sin(r) - rh
  const double kap = cm - rl * rh;  // cos(r) - 1
  const auto j = static_cast<std::size_t>(static_cast<std::int64_t>(n) & 255);
  const double* S = detail::sin_pi_128[j];
  const double* C = detail::sin_pi_128[(j + 64) & 255];
  const ff<double> ps = two_prod(C[0], rh);
  const ff<double> us = two_sum(S[0], ps.hi);
  const double ts = ((us.lo + ps.lo) + (S[1] + C[1] * rh)) + (S[0] * kap + C[0] * sig);
  const ff<double> pc = two_prod(S[0], rh);
  const ff<double> uc = two_sum(C[0], -pc.hi);
  const double tc = ((uc.lo - pc.lo) + (C[1] - S[1] * rh)) + (C[0] * kap - S[0] * sig);
  if (a == 1.0) {
    s = us.hi + ts;
    c = uc.hi + tc;
  } else {
    const ff<double> vs = two_prod(a, us.hi), vc = two_prod(a, uc.hi);
    s = vs.hi + (vs.lo + a * ts);
    c = vc.hi + (vc.lo + a * tc);
  }
}

}  // namespace posenc::numeric
