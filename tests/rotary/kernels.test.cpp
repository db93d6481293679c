// SPDX-License-Identifier: MIT
// The x86 kernels of rotary::apply_inplace (AVX2 for float, AVX2 + F16C for Eigen::half, AVX2 for
// Eigen::bfloat16; include/posenc/numeric/pair_rotation.hpp) against the portable kernel, which the rest
// of tests/rotary checks against long double references: the same rotation must come out bit for
// bit (the kernels round each product, the sum and the store exactly as the portable code does),
// for both layouts, every head width from 1 to 70 pairs (the vector bodies and their scalar tails),
// wide heads up to 300 pairs, several heads a stride apart, values spanning the storage type's range (subnormals, values that
// overflow when rotated, Inf and NaN), and the fused finite check must report exactly what the
// portable check reports. A NaN only has to stay a NaN (payloads may differ).
//
// Where the compiler may contract the portable code's a*c - b*s into a fused multiply-add (FMA
// enabled by the build flags), the two may differ by the rounding of that one product; the
// comparison then allows one unit in the last place of the storage type.
#include <doctest/doctest.h>

#include <Eigen/Core>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <posenc/rotary.hpp>

namespace {

namespace rd = posenc::numeric::detail;  // the kernels (numeric/pair_rotation.hpp)

template <class T>
using bits_t = std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint16_t>;

template <class T>
bits_t<T> bits(T v) {
  bits_t<T> u;
  std::memcpy(&u, &v, sizeof(u));
  return u;
}

template <class T>
bool is_nan(T v) {
  return std::isnan(static_cast<double>(rd::load<T, double>(v)));
}

/// Equal bits, NaN to NaN; with contraction possible, within one unit in the last place.
template <class T>
bool same(T a, T b) {
  if (is_nan(a) || is_nan(b)) return is_nan(a) && is_nan(b);
#if defined(__FMA__)
  const auto x = static_cast<std::int64_t>(bits(a)), y = static_cast<std::int64_t>(bits(b));
  const bool same_sign = ((x ^ y) >> (8 * sizeof(T) - 1)) == 0;
  return x == y || (same_sign && x - y <= 1 && y - x <= 1);
#else
  return bits(a) == bits(b);
#endif
}

template <class T, class W>
void compare_kernels(bool interleaved, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> unit(-1.0, 1.0), angle(-10.0, 10.0);
  const double big = std::is_same_v<T, Eigen::half> ? 6.0e4 : 3.0e38;  // rotated, may overflow
  const double tiny = std::is_same_v<T, Eigen::half> ? 3.0e-6 : 1.0e-39;  // subnormal
  std::size_t compared = 0, mismatched = 0, flag_mismatched = 0;
  std::vector<std::size_t> halves;
  for (std::size_t half = 1; half <= 70; ++half) halves.push_back(half);
  // wide heads: the 16-bit kernels spread the interleaved coefficients once per call up to 256
  // pairs in whole vector pairs (half 263: 256 of them) and per head beyond (264, 300)
  for (std::size_t half : {256, 263, 264, 300}) halves.push_back(half);
  for (std::size_t half : halves) {
    for (int special : {0, 1, 2}) {  // 0: ordinary values; 1: with subnormals and overflow; 2: with a NaN or Inf
      const std::size_t heads = 3, stride = 2 * half + 5;
      std::vector<T> a(heads * stride);
      for (auto& x : a) {
        double v = unit(rng);
        if (special == 1) {
          const auto pick = rng() % 8;
          v = pick == 0 ? v * big : pick == 1 ? v * tiny : v;
        }
        x = rd::store<T, double>(v);
      }
      if (special == 2) {
        const std::size_t at = rng() % a.size();
        a[at] = rd::store<T, double>(rng() % 2 ? std::numeric_limits<double>::infinity()
                                               : std::numeric_limits<double>::quiet_NaN());
      }
      std::vector<W> cs(2 * half);
      for (std::size_t k = 0; k < half; ++k) {
        const double t = angle(rng);
        cs[k] = static_cast<W>(std::cos(t));
        cs[half + k] = static_cast<W>(std::sin(t));
      }
      std::vector<T> p = a, x = a;
      const bool bad_p = rd::rotate_heads_portable<T, W>(p.data(), static_cast<std::ptrdiff_t>(stride), heads, cs.data(),
                                                         half, interleaved, true);
      const bool bad_x = rd::rotate_heads<T, W>(x.data(), static_cast<std::ptrdiff_t>(stride), heads, cs.data(), half,
                                                interleaved, true);
      flag_mismatched += bad_p != bad_x;
      for (std::size_t i = 0; i < a.size(); ++i) {
        ++compared;
        mismatched += !same(p[i], x[i]);
      }
    }
  }
  INFO("compared ", compared, " values");
  CHECK(mismatched == 0);
  CHECK(flag_mismatched == 0);
}

}  // namespace

TEST_CASE("the x86 rotation kernels equal the portable kernel bit for bit, with the same finite check") {
  INFO("x86 kernels available on this machine: ", rd::x86_kernels_available());
  for (bool interleaved : {false, true}) {
    CAPTURE(interleaved);
    compare_kernels<float, double>(interleaved, 1);
    compare_kernels<Eigen::half, float>(interleaved, 2);
    compare_kernels<Eigen::bfloat16, float>(interleaved, 3);
  }
}

TEST_CASE("the fused finite check sees a NaN or Inf in every lane and in the tail") {
  // one non-finite input at each position of a head in turn: the check must report it wherever
  // it falls (the vector lanes of either half of the pair, and the scalar tail)
  auto run = [](auto tag, bool interleaved) {
    using T = decltype(tag);
    using W = std::conditional_t<std::is_same_v<T, float>, double, float>;
    const std::size_t half = 13;  // a vector body and a tail in every kernel
    std::vector<W> cs(2 * half);
    for (std::size_t k = 0; k < half; ++k) {
      cs[k] = static_cast<W>(std::cos(0.1 * static_cast<double>(k)));
      cs[half + k] = static_cast<W>(std::sin(0.1 * static_cast<double>(k)));
    }
    std::size_t missed = 0, false_alarms = 0;
    for (std::size_t at = 0; at < 2 * half; ++at) {
      std::vector<T> v(2 * half, rd::store<T, double>(0.5));
      false_alarms += rd::rotate_heads<T, W>(v.data(), 0, 1, cs.data(), half, interleaved, true);
      std::vector<T> w(2 * half, rd::store<T, double>(0.5));
      w[at] = rd::store<T, double>(at % 2 ? std::numeric_limits<double>::infinity()
                                          : -std::numeric_limits<double>::quiet_NaN());
      missed += !rd::rotate_heads<T, W>(w.data(), 0, 1, cs.data(), half, interleaved, true);
    }
    CHECK(missed == 0);
    CHECK(false_alarms == 0);
  };
  for (bool interleaved : {false, true}) {
    CAPTURE(interleaved);
    run(float{}, interleaved);
    run(Eigen::half{}, interleaved);
    run(Eigen::bfloat16{}, interleaved);
  }
}
