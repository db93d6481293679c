// SPDX-License-Identifier: MIT
// The 16-bit floating-point formats as bits, converted to and from binary32: IEEE 754 binary16
// ("half", f16) and bfloat16 (bf16). The one home of these conversions: the readers of posenc::io
// (npy and safetensors tensors stored as f16/bf16) and the rotary kernels (Eigen::half and
// Eigen::bfloat16 storage) call them.
//
// Every function is branch-free (selects only), so a loop over it vectorises, and total: it
// returns a value for every input.
//  - binary16 -> float and bf16 -> float are exact (every 16-bit value is a float); Inf and NaN are
//    kept (the NaN payload too).
//  - float -> binary16 and float -> bf16 round to nearest, ties to even, as IEEE 754 and the
//    hardware conversions (F16C's vcvtps2ph with rounding mode 0, AVX-512 BF16's vcvtneps2bf16):
//    overflow gives Inf, subnormal results are rounded correctly, and a NaN stays a quiet NaN of
//    the same sign (binary16: 0x7e00; bf16: the float's upper half with the quiet bit set).
// tests/core/half.test.cpp compares them with Eigen's conversions (exhaustively from 16 bits; at
// every binary16 value, midpoint and a float ulp either side of it, and on 2^20 random floats).
#pragma once

#include <cstdint>
#include <cstring>

namespace posenc::numeric {

/// IEEE binary16 bits -> float, exact: normal numbers re-biased, subnormals renormalised by one
/// exact float subtraction, Inf and NaN kept.
[[nodiscard]] inline float half_bits_to_float(std::uint16_t h) noexcept {
  const std::uint32_t em = static_cast<std::uint32_t>(h & 0x7fffu) << 13;  // exponent and mantissa
  const std::uint32_t e = em & (0x7c00u << 13);
  const std::uint32_t normal = em + (std::uint32_t{127 - 15} << 23);
  const std::uint32_t special = normal + (std::uint32_t{128 - 16} << 23);  // Inf/NaN: exponent all ones
  float sub;                                                               // zero/subnormal: m 2^-24
  const std::uint32_t sub_bits = normal + (1u << 23);
  std::memcpy(&sub, &sub_bits, 4);
  sub -= 6.103515625e-05f;  // 2^-14
  std::uint32_t sub_u;
  std::memcpy(&sub_u, &sub, 4);
  std::uint32_t u = e == (0x7c00u << 13) ? special : (e == 0 ? sub_u : normal);
  u |= static_cast<std::uint32_t>(h & 0x8000u) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

/// float -> IEEE binary16 bits, rounded to nearest even (overflow to Inf, subnormals rounded by a
/// float addition, NaN -> the quiet NaN 0x7e00 with the float's sign).
[[nodiscard]] inline std::uint16_t float_to_half_bits(float f) noexcept {
  std::uint32_t u;
  std::memcpy(&u, &f, 4);
  const std::uint32_t sign = (u >> 16) & 0x8000u;
  const std::uint32_t a = u & 0x7fffffffu;
  // normal range: re-bias the exponent, round the 13 dropped bits to nearest even
  const std::uint32_t normal = (a + (static_cast<std::uint32_t>(15 - 127) << 23) + 0xfffu + ((a >> 13) & 1u)) >> 13;
  // subnormal range (|f| < 2^-14): adding 0.5 aligns the mantissa so the float addition rounds
  float af;
  std::memcpy(&af, &a, 4);
  const float aligned = af + 0.5f;
  std::uint32_t al;
  std::memcpy(&al, &aligned, 4);
  const std::uint32_t sub = al - 0x3f000000u;  // the bits of 0.5
  const std::uint32_t inf_nan = a > 0x7f800000u ? 0x7e00u : 0x7c00u;
  const std::uint32_t r = a >= (static_cast<std::uint32_t>(127 + 16) << 23) ? inf_nan
                          : a < (static_cast<std::uint32_t>(127 - 14) << 23) ? sub
                                                                              : normal;
  return static_cast<std::uint16_t>(r | sign);
}

/// bfloat16 bits -> float, exact: the 16 bits are the upper half of the float.
[[nodiscard]] inline float bf16_bits_to_float(std::uint16_t h) noexcept {
  const std::uint32_t u = static_cast<std::uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

/// float -> bfloat16 bits, rounded to nearest even (overflow to Inf); a NaN keeps its sign and
/// upper payload and is made quiet.
[[nodiscard]] inline std::uint16_t float_to_bf16_bits(float f) noexcept {
  std::uint32_t u;
  std::memcpy(&u, &f, 4);
  const std::uint32_t rounded = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
  const bool nan = (u & 0x7fffffffu) > 0x7f800000u;
  return static_cast<std::uint16_t>(nan ? ((u >> 16) | 0x40u) : rounded);
}

}  // namespace posenc::numeric
