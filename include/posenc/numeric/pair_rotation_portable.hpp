// SPDX-License-Identifier: MIT
// Pair rotation, the portable level and what every level shares: the kernel levels and the test
// hook that caps them, the storage <-> work conversions, the fused finite check, and
// rotate_heads_portable (plain C++). The arithmetic and the levels are described in
// posenc/numeric/pair_rotation.hpp, which is the header to include.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include <posenc/numeric/half.hpp>

// The 16-bit storage types are Eigen's, named here only: declared, not included (numeric/ does not
// depend on Eigen; the code that instantiates the kernels for them, rotary/, includes Eigen).
namespace Eigen {
struct half;
struct bfloat16;
}  // namespace Eigen

namespace posenc::numeric::detail {


/// The implementations of rotate_heads, lowest first (see the top of this file).
enum class kernel_level : int { portable = 0, avx2 = 1, avx512 = 2, avx512_bf16 = 3 };

/// Test hook: the highest kernel level rotate_heads may choose (-1, the default: no cap). The
/// levels give the same results bit for bit; tests and benchmarks set it to run each one
/// (kernel_level_scope). A level above the processor's is capped to the processor's.
inline std::atomic<int>& kernel_override() noexcept {
  static std::atomic<int> cap{-1};
  return cap;
}

/// Sets kernel_override for its lifetime, then restores the previous value.
class kernel_level_scope {
 public:
  explicit kernel_level_scope(kernel_level l) noexcept : previous_(kernel_override().exchange(static_cast<int>(l))) {}
  ~kernel_level_scope() { kernel_override().store(previous_); }
  kernel_level_scope(const kernel_level_scope&) = delete;
  kernel_level_scope& operator=(const kernel_level_scope&) = delete;

 private:
  int previous_;
};

/// 1 if any of the n values at p is NaN or Inf (a bit test on the storage type's exponent field).
template <class T>
inline bool any_non_finite(const T* p, std::size_t n) {
  using U = std::conditional_t<sizeof(T) == 8, std::uint64_t, std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint16_t>>;
  constexpr U mask = std::is_same_v<T, double>  ? U(0x7ff0000000000000ull)
                     : std::is_same_v<T, float> ? U(0x7f800000u)
                     : std::is_same_v<T, Eigen::half> ? U(0x7c00u)
                                                      : U(0x7f80u);
  unsigned bad = 0;
  for (std::size_t i = 0; i < n; ++i) {
    U u;
    std::memcpy(&u, p + i, sizeof(U));
    bad |= static_cast<unsigned>((u & mask) == mask);
  }
  return bad != 0;
}

template <class T, class W>
inline W load(const T& v) {
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
    return static_cast<W>(v);
  } else {
    std::uint16_t h;
    std::memcpy(&h, &v, 2);
    if constexpr (std::is_same_v<T, Eigen::bfloat16>)
      return static_cast<W>(numeric::bf16_bits_to_float(h));
    else
      return static_cast<W>(numeric::half_bits_to_float(h));
  }
}
template <class T, class W>
inline T store(W v) {
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
    return static_cast<T>(v);
  } else {
    const std::uint16_t h = std::is_same_v<T, Eigen::bfloat16> ? numeric::float_to_bf16_bits(static_cast<float>(v))
                                                               : numeric::float_to_half_bits(static_cast<float>(v));
    T out;
    std::memcpy(static_cast<void*>(&out), &h, 2);
    return out;
  }
}

/// Hint that the `bytes` bytes at p will be read and written soon (a prefetch of each cache line
/// on GCC and Clang; nothing elsewhere). Never faults, whatever p.
inline void prefetch_for_write([[maybe_unused]] const void* p, [[maybe_unused]] std::size_t bytes) {
#if defined(__GNUC__) || defined(__clang__)
  const char* c = static_cast<const char*>(p);
  for (std::size_t i = 0; i < bytes; i += 64) __builtin_prefetch(c + i, 1);
#endif
}

/// The rotation of pairs [k0, k1) of one head vector v (layout by `interleaved`), portable.
template <class T, class W>
inline void rotate_pairs(T* v, const W* c, const W* s, std::size_t half, std::size_t k0, std::size_t k1,
                         bool interleaved) {
  if (interleaved) {
    for (std::size_t k = k0; k < k1; ++k) {
      const W a = load<T, W>(v[2 * k]), b = load<T, W>(v[2 * k + 1]);
      const W ac = a * c[k], bs = b * s[k], as = a * s[k], bc = b * c[k];
      v[2 * k] = store<T, W>(ac - bs);
      v[2 * k + 1] = store<T, W>(as + bc);
    }
  } else {
    T* va = v;
    T* vb = v + half;
    for (std::size_t k = k0; k < k1; ++k) {
      const W a = load<T, W>(va[k]), b = load<T, W>(vb[k]);
      const W ac = a * c[k], bs = b * s[k], as = a * s[k], bc = b * c[k];
      va[k] = store<T, W>(ac - bs);
      vb[k] = store<T, W>(as + bc);
    }
  }
}

/// Rotate `heads` head vectors starting at base (head h at base + h * head_stride) by the
/// coefficients cs = (c[0..half), s[0..half)), portable C++. Returns true if a rotated value is
/// NaN or Inf (when checking: an input NaN/Inf makes its pair's outputs non-finite; the head is
/// still in L1 when it is tested).
template <class T, class W>
inline bool rotate_heads_portable(T* base, std::ptrdiff_t head_stride, std::size_t heads, const W* cs, std::size_t half,
                                  bool interleaved, bool check) {
  bool bad = false;
  for (std::size_t h = 0; h < heads; ++h) {
    T* v = base + static_cast<std::ptrdiff_t>(h) * head_stride;
    rotate_pairs<T, W>(v, cs, cs + half, half, 0, half, interleaved);
    if (check) bad |= any_non_finite(v, 2 * half);
  }
  return bad;
}

/// The pairs [body, half) of one head vector v that a vector kernel leaves (fewer than a
/// vector), rotated portably; true if one of the values written is NaN or Inf (when `check`).
template <class T, class W>
inline bool rotate_tail(T* v, const W* c, const W* s, std::size_t half, std::size_t body, bool interleaved, bool check) {
  if (body >= half) return false;
  rotate_pairs<T, W>(v, c, s, half, body, half, interleaved);
  if (!check) return false;
  return interleaved ? any_non_finite(v + 2 * body, 2 * (half - body))
                     : any_non_finite(v + body, half - body) || any_non_finite(v + half + body, half - body);
}

}  // namespace posenc::numeric::detail
