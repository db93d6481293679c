// SPDX-License-Identifier: MIT
// Lanes: W independent transforms advanced together, one SIMD lane each. A "lane pack" V holds W
// scalars; element j of a lanes array is the W scalars at [j*W, j*W+W). Where the compiler
// supports GCC vector extensions (GCC, clang) V is a native vector of the widest width the target
// enables (__AVX512F__: 64 bytes, __AVX__: 32, otherwise 16 bytes); elsewhere, and for long
// double, portable_pack (a plain array whose element-wise loops the compiler may vectorise).
// W = 1 with V = T is the scalar transform. Part of <posenc/numeric/fft.hpp>.
#pragma once

#include <cstddef>
#include <cstring>
#include <type_traits>

// The stage loops read and write distinct buffers; tell GCC's vectoriser so (without it GCC 12
// versions the loops on alias checks that fail and runs them scalar, 3.5x slower). Clang's
// equivalent, vectorize(assume_safety), warns (-Wpass-failed) wherever it cannot vectorise, e.g. at
// -O1, which would break -Werror builds of user code, so clang relies on __restrict alone.
#if defined(__GNUC__) && !defined(__clang__)
#define POSENC_FFT_IVDEP _Pragma("GCC ivdep")
#else
#define POSENC_FFT_IVDEP
#endif

namespace posenc::fft::detail {

/// A lane pack of W scalars as a plain array, with the element-wise operators the butterflies use.
template <class T, std::size_t W>
struct portable_pack {
  T v[W];
#define POSENC_FFT_PACK_OP(op)                                                                   \
  friend portable_pack operator op(const portable_pack& a, const portable_pack& b) {             \
    portable_pack r;                                                                             \
    for (std::size_t l = 0; l < W; ++l) r.v[l] = a.v[l] op b.v[l];                               \
    return r;                                                                                    \
  }                                                                                              \
  friend portable_pack operator op(const portable_pack& a, T b) {                                \
    portable_pack r;                                                                             \
    for (std::size_t l = 0; l < W; ++l) r.v[l] = a.v[l] op b;                                    \
    return r;                                                                                    \
  }                                                                                              \
  friend portable_pack operator op(T a, const portable_pack& b) {                                \
    portable_pack r;                                                                             \
    for (std::size_t l = 0; l < W; ++l) r.v[l] = a op b.v[l];                                    \
    return r;                                                                                    \
  }                                                                                              \
  portable_pack& operator op##=(const portable_pack & b) { return *this = *this op b; }
  POSENC_FFT_PACK_OP(+)
  POSENC_FFT_PACK_OP(-)
  POSENC_FFT_PACK_OP(*)
#undef POSENC_FFT_PACK_OP
  friend portable_pack operator-(const portable_pack& a) {
    portable_pack r;
    for (std::size_t l = 0; l < W; ++l) r.v[l] = -a.v[l];
    return r;
  }
};

#if defined(__AVX512F__)
inline constexpr std::size_t simd_bytes = 64;
#elif defined(__AVX__)
inline constexpr std::size_t simd_bytes = 32;
#else
inline constexpr std::size_t simd_bytes = 16;
#endif

#if (defined(__GNUC__) || defined(__clang__)) && (defined(__SSE2__) || defined(__ARM_NEON) || defined(__AVX__))
#define POSENC_FFT_VECTOR_EXT 1
#endif

/// The lane pack a plan<T> uses: V, and its width W (W = 1, V = T: no lanes, e.g. long double).
template <class T>
struct native_lanes {
  static constexpr std::size_t width = 1;
  using type = T;
};
#if defined(POSENC_FFT_VECTOR_EXT)
template <>
struct native_lanes<float> {
  static constexpr std::size_t width = simd_bytes / sizeof(float);
  typedef float type __attribute__((vector_size(simd_bytes)));
};
template <>
struct native_lanes<double> {
  static constexpr std::size_t width = simd_bytes / sizeof(double);
  typedef double type __attribute__((vector_size(simd_bytes)));
};
#else
template <>
struct native_lanes<float> {
  static constexpr std::size_t width = simd_bytes / sizeof(float);
  using type = portable_pack<float, width>;
};
template <>
struct native_lanes<double> {
  static constexpr std::size_t width = simd_bytes / sizeof(double);
  using type = portable_pack<double, width>;
};
#endif

/// Load / store the W scalars at p as one lane pack (any alignment; memcpy keeps it alias-safe).
template <class V, class T>
inline V lanes_load(const T* p) {
  if constexpr (std::is_same_v<V, T>) {
    return *p;
  } else {
    V v;
    std::memcpy(&v, p, sizeof(V));
    return v;
  }
}
template <class V, class T>
inline void lanes_store(T* p, const V& v) {
  if constexpr (std::is_same_v<V, T>) *p = v;
  else std::memcpy(p, &v, sizeof(V));
}

}  // namespace posenc::fft::detail
