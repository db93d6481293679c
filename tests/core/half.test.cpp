// SPDX-License-Identifier: MIT
// The 16-bit float conversions of posenc/numeric/half.hpp against Eigen's (Eigen::half and
// Eigen::bfloat16: a second, independent implementation), bit for bit: exhaustively from the 16-bit
// formats, and into them at every binary16 value, every midpoint between neighbours (ties to even)
// and one float ulp either side of it, beyond the ranges, and on 2^20 random float bit patterns.
// A NaN only has to stay a NaN of the same sign (Eigen and the hardware keep payloads differently);
// posenc's NaN results are quiet.
#include <doctest/doctest.h>

#include <Eigen/Core>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>

#include <posenc/numeric/half.hpp>

TEST_CASE("the branch-free binary16 conversions equal Eigen::half's bitwise (NaN to NaN)") {
  namespace d = posenc::numeric;
  auto half_bits = [](Eigen::half h) {
    std::uint16_t b;
    std::memcpy(&b, &h, 2);
    return b;
  };
  auto from_bits = [](std::uint16_t b) {
    Eigen::half h;
    std::memcpy(static_cast<void*>(&h), &b, 2);
    return h;
  };
  // every half -> float (exhaustive)
  std::size_t bad = 0;
  for (std::uint32_t b = 0; b < 65536; ++b) {
    const float ref = static_cast<float>(from_bits(static_cast<std::uint16_t>(b)));
    const float got = d::half_bits_to_float(static_cast<std::uint16_t>(b));
    if (std::isnan(ref) ? !std::isnan(got) : std::memcmp(&ref, &got, 4) != 0) ++bad;
  }
  CHECK(bad == 0);
  // float -> half: every half value, the midpoints between neighbours (ties to even) and one float
  // ulp either side of them, values beyond the half range, and 2^20 random bit patterns
  auto check = [&](float f) {
    const std::uint16_t ref = half_bits(Eigen::half(f)), got = d::float_to_half_bits(f);
    const bool ref_nan = (ref & 0x7c00u) == 0x7c00u && (ref & 0x3ffu) != 0;
    const bool got_nan = (got & 0x7c00u) == 0x7c00u && (got & 0x3ffu) != 0;
    if (ref_nan ? !got_nan : ref != got) ++bad;
  };
  for (std::uint32_t b = 0; b < 65535; ++b) {
    const float x = d::half_bits_to_float(static_cast<std::uint16_t>(b));
    const float y = d::half_bits_to_float(static_cast<std::uint16_t>(b + 1));
    check(x);
    if (std::isfinite(x) && std::isfinite(y) && (b & 0x7fffu) != 0x7fffu && b != 0x7bffu && b != 0xfbffu) {
      const float mid = static_cast<float>((static_cast<double>(x) + y) / 2);
      check(mid);
      check(std::nextafter(mid, 0.0f));
      check(std::nextafter(mid, std::copysign(1e30f, mid)));
    }
  }
  for (float f : {65504.0f, 65519.99f, 65520.0f, 65536.0f, 1e30f, -65520.0f, 5.9604645e-08f, 2.9802322e-08f,
                  2.9802326e-08f, 6.097555e-05f, 6.1035156e-05f})
    check(f);
  std::mt19937 rng(17);
  for (int i = 0; i < (1 << 20); ++i) {
    const std::uint32_t u = rng();
    float f;
    std::memcpy(&f, &u, 4);
    check(f);
  }
  CHECK(bad == 0);
}

TEST_CASE("the branch-free bfloat16 conversions equal Eigen::bfloat16's bitwise (NaN to quiet NaN)") {
  namespace d = posenc::numeric;
  auto bits = [](Eigen::bfloat16 h) {
    std::uint16_t b;
    std::memcpy(&b, &h, 2);
    return b;
  };
  auto from_bits = [](std::uint16_t b) {
    Eigen::bfloat16 h;
    std::memcpy(static_cast<void*>(&h), &b, 2);
    return h;
  };
  std::size_t bad = 0;
  for (std::uint32_t b = 0; b < 65536; ++b) {
    const float ref = static_cast<float>(from_bits(static_cast<std::uint16_t>(b)));
    const float got = d::bf16_bits_to_float(static_cast<std::uint16_t>(b));
    if (std::isnan(ref) ? !std::isnan(got) : std::memcmp(&ref, &got, 4) != 0) ++bad;
  }
  CHECK(bad == 0);
  auto is_nan = [](std::uint16_t h) { return (h & 0x7f80u) == 0x7f80u && (h & 0x7fu) != 0; };
  auto check = [&](float f) {
    const std::uint16_t ref = bits(Eigen::bfloat16(f)), got = d::float_to_bf16_bits(f);
    if (is_nan(ref)) {
      // a quiet NaN (bit 6 of the mantissa) of the float's sign
      if (!is_nan(got) || (got & 0x40u) == 0 || (got & 0x8000u) != (ref & 0x8000u)) ++bad;
    } else if (ref != got) {
      ++bad;
    }
  };
  for (std::uint32_t b = 0; b < 65535; ++b) {
    const float x = d::bf16_bits_to_float(static_cast<std::uint16_t>(b));
    const float y = d::bf16_bits_to_float(static_cast<std::uint16_t>(b + 1));
    check(x);
    if (std::isfinite(x) && std::isfinite(y) && (b & 0x7fffu) != 0x7fffu) {
      std::uint32_t u;
      std::memcpy(&u, &x, 4);
      for (std::uint32_t low : {0x7fffu, 0x8000u, 0x8001u, 0x0001u, 0xffffu}) {  // below, at and above the midpoint
        const std::uint32_t v = u | low;
        float f;
        std::memcpy(&f, &v, 4);
        check(f);
      }
    }
  }
  for (float f : {3.3895314e38f, 3.4028235e38f, -3.4028235e38f, 1e-40f, 1e-45f})
    check(f);
  std::mt19937 rng(23);
  for (int i = 0; i < (1 << 20); ++i) {
    const std::uint32_t u = rng();
    float f;
    std::memcpy(&f, &u, 4);
    check(f);
  }
  CHECK(bad == 0);
  // a signalling NaN float becomes a quiet NaN, sign kept
  const std::uint32_t snan = 0xff800001u;
  float f;
  std::memcpy(&f, &snan, 4);
  CHECK(d::float_to_bf16_bits(f) == 0xffc0u);
}
