// SPDX-License-Identifier: MIT
// Double-word arithmetic: a value as the unevaluated sum hi + lo of two floating-point numbers of
// type F (Dekker 1971; Knuth's TwoSum; the algorithms of Joldes, Muller and Popescu, "Tight and
// rigorous error bounds for basic building blocks of double-word arithmetic", 2017). With
// F = long double (64-bit significand on x86-64) a pair carries 128 bits, with F = double 106.
// The rotary frequencies are computed in it (exp and log included), so a rule's exact frequency
// is known to ~2^-120 relative, beyond the long double the tables were formed in.
#pragma once

#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <type_traits>

namespace posenc::numeric {

/// hi + lo, |lo| <= ulp(hi) / 2 once normalised.
template <class F>
struct ff {
  F hi = 0, lo = 0;
};

/// a + b exactly, as hi + lo (Knuth's TwoSum; any magnitudes). The double-word primitives below
/// are total over finite F: error-free transformations that throw nothing; a NaN or Inf operand
/// gives NaN/Inf parts as IEEE arithmetic does (tests/core/census_registry.txt: n/a:total).
template <class F>
inline ff<F> two_sum(F a, F b) {
  const F s = a + b;
  const F bb = s - a;
  return {s, (a - (s - bb)) + (b - bb)};
}

/// a + b exactly for |a| >= |b| or a == 0 (Dekker's FastTwoSum).
template <class F>
inline ff<F> fast_two_sum(F a, F b) {
  const F s = a + b;
  return {s, b - (s - a)};
}

/// a * b exactly, as hi + lo (a fused multiply-add when the compiler targets one for double,
/// else Veltkamp's splitting and Dekker's product; both exact, so both give the same bits).
template <class F>
inline ff<F> two_prod(F a, F b) {
  const F p = a * b;
#if defined(__FMA__) || defined(__ARM_FEATURE_FMA)
  if constexpr (std::is_same_v<F, double>) return {p, __builtin_fma(a, b, -p)};
#endif
  constexpr int half = (std::numeric_limits<F>::digits + 1) / 2;
  constexpr F split = static_cast<F>((std::uint64_t{1} << half) + 1);
  const F ta = split * a, tb = split * b;
  const F ah = ta - (ta - a), bh = tb - (tb - b);
  const F al = a - ah, bl = b - bh;
  return {p, ((ah * bh - p) + ah * bl + al * bh) + al * bl};
}

template <class F>
inline ff<F> operator+(ff<F> a, ff<F> b) {  // AccurateDWPlusDW
  ff<F> s = two_sum(a.hi, b.hi);
  const ff<F> t = two_sum(a.lo, b.lo);
  s = fast_two_sum(s.hi, s.lo + t.hi);
  return fast_two_sum(s.hi, s.lo + t.lo);
}
template <class F>
inline ff<F> operator-(ff<F> a) {
  return {-a.hi, -a.lo};
}
template <class F>
inline ff<F> operator-(ff<F> a, ff<F> b) {
  return a + (-b);
}
template <class F>
inline ff<F> operator*(ff<F> a, ff<F> b) {  // DWTimesDW
  ff<F> p = two_prod(a.hi, b.hi);
  p.lo += a.hi * b.lo + a.lo * b.hi;
  return fast_two_sum(p.hi, p.lo);
}
template <class F>
inline ff<F> operator/(ff<F> a, ff<F> b) {  // three quotient digits
  const F q1 = a.hi / b.hi;
  ff<F> r = a - b * ff<F>{q1, 0};
  const F q2 = r.hi / b.hi;
  r = r - b * ff<F>{q2, 0};
  const F q3 = r.hi / b.hi;
  return fast_two_sum(q1, q2) + ff<F>{q3, 0};
}

/// The value hi + mid + lo of three doubles (the constants below), as a pair of F.
template <class F>
inline ff<F> from_doubles(double hi, double mid, double lo) {
  return (ff<F>{static_cast<F>(hi), 0} + ff<F>{static_cast<F>(mid), 0}) + ff<F>{static_cast<F>(lo), 0};
}

/// ln 2 and 2 pi to 159 bits (scripts/phase_constants.py).
template <class F>
inline ff<F> ln2_ff() {
  return from_doubles<F>(0x1.62e42fefa39efp-1, 0x1.abc9e3b39803fp-56, 0x1.7b57a079a1934p-111);
}
template <class F>
inline ff<F> two_pi_ff() {
  return from_doubles<F>(0x1.921fb54442d18p+2, 0x1.1a62633145c07p-52, -0x1.f1976b7ed8fbcp-108);
}

/// e^x: x = k ln 2 + r, e^(r / 2^8) - 1 by its Taylor series (12 terms: the next is below
/// 2^-130 of it), doubled back by e^(2y) - 1 = (e^y - 1)(e^y + 1) (no cancellation), times 2^k.
/// Relative error ~2^-120 with F = long double (x87), ~2^-100 with F = double.
/// Total: NaN gives NaN; x.hi above 2^17 (beyond the exponent range of every F) gives +Inf, below
/// -2^17 gives 0 (the reduction's k = x / ln 2 then stays far inside int: no conversion overflow).
template <class F>
inline ff<F> ff_exp(ff<F> x) {
  if (x.hi == 0) return {1, 0};
  if (std::isnan(x.hi)) return {x.hi, 0};
  constexpr F limit = 131072;  // 2^17 > ln(max long double) ~ 11356.5
  if (x.hi > limit) return {std::numeric_limits<F>::infinity(), 0};
  if (x.hi < -limit) return {0, 0};
  const F k = std::nearbyint(x.hi / static_cast<F>(0.693147180559945309417232121458176568L));
  ff<F> r = x - ln2_ff<F>() * ff<F>{k, 0};
  constexpr int halvings = 8;
  r = {std::ldexp(r.hi, -halvings), std::ldexp(r.lo, -halvings)};
  // 1/n as pairs, formed once (a division per term would cost ~4x the multiplications)
  static const std::array<ff<F>, 13> inverse = [] {
    std::array<ff<F>, 13> a{};
    for (int n = 1; n <= 12; ++n) a[static_cast<std::size_t>(n)] = ff<F>{1, 0} / ff<F>{static_cast<F>(n), 0};
    return a;
  }();
  ff<F> term = r, sum = r;
  for (std::size_t n = 2; n <= 12; ++n) {
    term = term * r * inverse[n];
    sum = sum + term;
  }
  for (int i = 0; i < halvings; ++i) sum = sum * (sum + ff<F>{2, 0});
  sum = sum + ff<F>{1, 0};
  const int e = static_cast<int>(k);
  return {std::ldexp(sum.hi, e), std::ldexp(sum.lo, e)};
}

/// ln x for x > 0: two Newton steps y <- y + x e^-y - 1 from the F logarithm. Total: outside the
/// domain (x <= 0, NaN) the result is NaN or -Inf as std::log's, never undefined behaviour.
template <class F>
inline ff<F> ff_log(ff<F> x) {
  if (!std::isfinite(x.hi) || !(x.hi > 0)) return {std::log(x.hi), 0};  // Inf, -Inf (x = 0), NaN: std::log's
  ff<F> y{std::log(x.hi), 0};
  for (int i = 0; i < 2; ++i) y = y + x * ff_exp(-y) - ff<F>{1, 0};
  return y;
}

/// base^(-num / den) (the default RoPE frequency base^(-2k/d) with num = 2k, den = d), for
/// base > 0, den > 0. Total: outside that domain (base <= 0 or NaN, den = 0) the result is NaN
/// or 0 (IEEE propagation through ff_log / ff_exp); the rotary validators reject such input first.
template <class F>
inline ff<F> inverse_power(ff<F> base, std::uint64_t num, std::uint64_t den) {
  if (num == 0) return {1, 0};
  const ff<F> e = ff<F>{static_cast<F>(num), 0} / ff<F>{static_cast<F>(den), 0};
  return ff_exp(-(e * ff_log(base)));
}

}  // namespace posenc::numeric
