// SPDX-License-Identifier: MIT
// Pair rotation: rotate a group of vectors in place, pair k of each by the same coefficients
// (c_k, s_k), in the storage type T and the work type W (double for float and double storage,
// float for Eigen::half and Eigen::bfloat16), with the finite check fused into the same pass (the
// check tests the exponent bits of each value written, while it is in a register). It is the inner
// kernel of rotary::apply_inplace (one position's coefficients, every head of q or k), and knows
// nothing of positions or frequencies: the arithmetic floor, like numeric/half.hpp.
//
// Each output is a*c - b*s or a*s + b*c evaluated in W (two products and one sum, each rounded
// once in W: never contracted into a fused multiply-add by the kernels below), then rounded once
// to T to nearest even (numeric/half.hpp for the 16-bit types).
//
// Implementations of the same arithmetic, one per kernel level (numeric::detail::kernel_level):
//  - portable: rotate_heads_portable, plain C++ (vectorised by the compiler where it can);
//  - on x86-64 with GCC or Clang (not under nvcc), compiled for their instruction sets with
//    function target attributes whatever the flags of the including program:
//    - avx2: AVX2 kernels for float, Eigen::half (with F16C's conversions) and Eigen::bfloat16;
//    - avx512: AVX-512 F/BW/VL kernels for the same types (16 lanes of float work, 8 of double;
//      the tail of a head in one masked vector);
//    - avx512_bf16: the avx512 kernel with AVX512_BF16's vcvtneps2bf16 for the bfloat16 stores (a
//      subnormal float, which the instruction flushes to zero, is rounded in software instead).
//    Each product of a vector kernel passes through an empty asm statement (opaque) so that no
//    compiler contracts it with its sum into an FMA, which would change the result: AVX-512F
//    implies FMA, and a target attribute adds to the program's flags (-mfma, -march=native).
// rotate_heads chooses the highest level the processor has (detected_kernel_level), capped by
// the test hook kernel_override. Define POSENC_NO_X86_KERNELS to compile only the portable path.
// The levels give bit-identical results (NaN payloads aside), the portable one wherever it is not
// contracted into FMAs by the compiler's flags (tests/rotary/kernels.test.cpp forces each level).
// bench/rotary_apply.bench.cpp measures each level against an in-place floor of the same bytes.
#pragma once

#include <atomic>
#include <cstddef>
#include <type_traits>

#include <posenc/numeric/pair_rotation_portable.hpp>
#include <posenc/numeric/pair_rotation_x86.hpp>

namespace posenc::numeric::detail {

/// The level rotate_heads runs: the processor's, capped by kernel_override.
inline kernel_level active_kernel_level() noexcept {
  const kernel_level best = detected_kernel_level();
  const int cap = kernel_override().load(std::memory_order_relaxed);
  return cap >= 0 && cap < static_cast<int>(best) ? static_cast<kernel_level>(cap) : best;
}

/// Rotate `heads` head vectors starting at base (head h at base + h * head_stride) by the
/// coefficients cs = (c[0..half), s[0..half)): the kernel of active_kernel_level for float,
/// Eigen::half and Eigen::bfloat16 storage (AVX-512, AVX2 or portable), the portable one for the
/// other types. Returns true if a rotated value is NaN or Inf (checked when `check`).
template <class T, class W>
inline bool rotate_heads(T* base, std::ptrdiff_t head_stride, std::size_t heads, const W* cs, std::size_t half,
                         bool interleaved, bool check) {
#if POSENC_NUMERIC_X86_KERNELS
  if constexpr (std::is_same_v<T, float> && std::is_same_v<W, double>) {
    const kernel_level l = active_kernel_level();
    if (l >= kernel_level::avx512) return rotate_heads_x86_512(base, head_stride, heads, cs, half, interleaved, check);
    if (l >= kernel_level::avx2) return rotate_heads_x86(base, head_stride, heads, cs, half, interleaved, check);
  } else if constexpr ((std::is_same_v<T, Eigen::half> || std::is_same_v<T, Eigen::bfloat16>) &&
                       std::is_same_v<W, float>) {
    const kernel_level l = active_kernel_level();
    if constexpr (std::is_same_v<T, Eigen::bfloat16>) {
      if (l >= kernel_level::avx512_bf16)
        return rotate_heads_x86_512_16<T, true>(base, head_stride, heads, cs, half, interleaved, check);
    }
    if (l >= kernel_level::avx512)
      return rotate_heads_x86_512_16<T, false>(base, head_stride, heads, cs, half, interleaved, check);
    if (l >= kernel_level::avx2) return rotate_heads_x86_16<T>(base, head_stride, heads, cs, half, interleaved, check);
  }
#endif
  return rotate_heads_portable<T, W>(base, head_stride, heads, cs, half, interleaved, check);
}

}  // namespace posenc::numeric::detail
