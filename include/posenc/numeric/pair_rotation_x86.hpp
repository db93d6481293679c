// SPDX-License-Identifier: MIT
// Pair rotation, the x86-64 levels (GCC or Clang, not nvcc; not under POSENC_NO_X86_KERNELS):
// the AVX2 + F16C kernels and the AVX-512 F/BW/VL (and AVX512_BF16) kernels, compiled with
// function target attributes, and the detection of the levels the processor runs. Elsewhere the
// detection answers "portable". The arithmetic and the levels are described in
// posenc/numeric/pair_rotation.hpp, which is the header to include.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include <posenc/numeric/pair_rotation_portable.hpp>

#if (defined(__x86_64__) || defined(_M_X64)) && (defined(__GNUC__) || defined(__clang__)) && !defined(__CUDACC__) && \
    !defined(POSENC_NO_X86_KERNELS)
#define POSENC_NUMERIC_X86_KERNELS 1
#include <cpuid.h>
#include <immintrin.h>
#else
#define POSENC_NUMERIC_X86_KERNELS 0
#endif

namespace posenc::numeric::detail {

#if POSENC_NUMERIC_X86_KERNELS

/// Whether this processor runs the AVX2 + F16C kernels below (checked once): AVX2 as the compiler's
/// runtime reports it (which includes the operating system's support of the AVX state), F16C from
/// CPUID leaf 1, ECX bit 29 (Clang's __builtin_cpu_supports does not know "f16c").
inline bool x86_kernels_available() noexcept {
  static const bool ok = [] {
    __builtin_cpu_init();
    unsigned a = 0, b = 0, c = 0, d = 0;
    const bool f16c = __get_cpuid(1, &a, &b, &c, &d) != 0 && (c & (1u << 29)) != 0;
    return __builtin_cpu_supports("avx2") && f16c;
  }();
  return ok;
}

/// x, opaque to the optimiser (no instruction): a product passed through it is never contracted
/// with the sum that uses it into a fused multiply-add, whatever the flags (the kernels' target
/// adds to the program's instruction sets: with -mfma or -march=native, GCC would contract them).
__attribute__((target("avx"))) inline __m256d opaque(__m256d x) {
  asm("" : "+x"(x));
  return x;
}
__attribute__((target("avx"))) inline __m256 opaque(__m256 x) {
  asm("" : "+x"(x));
  return x;
}

// ---- float storage, double work: 4 pairs (half layout) or 2 pairs (interleaved) per vector ----

/// p[k], p[k + 1] each in two adjacent lanes, xor'ed with `sign` (zero, or the sign bit of the
/// even lanes: -s s for the interleaved layout's sines).
__attribute__((target("avx2"))) inline __m256d spread2(const double* p, __m256d sign) {
  return _mm256_xor_pd(_mm256_permute4x64_pd(_mm256_castpd128_pd256(_mm_loadu_pd(p)), 0x50), sign);
}

__attribute__((target("avx2"))) inline bool rotate_heads_x86(float* base, std::ptrdiff_t head_stride,
                                                             std::size_t heads, const double* cs, std::size_t half,
                                                             bool interleaved, bool check) {
  const double* c = cs;
  const double* s = cs + half;
  const __m128i exp_mask = _mm_set1_epi32(0x7f800000);
  const __m256d sign_even = _mm256_castsi256_pd(_mm256_set_epi64x(0, std::int64_t(0x8000000000000000ull), 0,
                                                                  std::int64_t(0x8000000000000000ull)));
  const std::size_t body = half - half % (interleaved ? 2 : 4);  // pairs in whole vectors
  // Interleaved layout: every head of the call uses the same coefficients, so each is spread to
  // its two lanes (c0 c0 c1 c1, -s0 s0 -s1 s1) once here rather than once per head (up to 256
  // pairs; wider heads spread them per head).
  constexpr std::size_t spread_max = 256;
  alignas(32) double cd[2 * spread_max], sd[2 * spread_max];
  const bool spread = interleaved && body <= spread_max;
  const __m256d no_sign = _mm256_setzero_pd();
  if (spread) {
    for (std::size_t k = 0; k < body; k += 2) {
      _mm256_store_pd(cd + 2 * k, spread2(c + k, no_sign));
      _mm256_store_pd(sd + 2 * k, spread2(s + k, sign_even));
    }
  }
  bool bad = false;
  for (std::size_t h = 0; h < heads; ++h) {
    float* v = base + static_cast<std::ptrdiff_t>(h) * head_stride;
    __m128i acc = _mm_setzero_si128();
    if (interleaved) {
      for (std::size_t k = 0; k < body; k += 2) {
        const __m256d x = _mm256_cvtps_pd(_mm_loadu_ps(v + 2 * k));  // a0 b0 a1 b1
        const __m256d cc = spread ? _mm256_load_pd(cd + 2 * k) : spread2(c + k, no_sign);     // c0 c0 c1 c1
        const __m256d ss = spread ? _mm256_load_pd(sd + 2 * k) : spread2(s + k, sign_even);  // -s0 s0 -s1 s1
        const __m256d xs = _mm256_permute_pd(x, 0x5);            // b0 a0 b1 a1
        const __m256d r = _mm256_add_pd(opaque(_mm256_mul_pd(x, cc)), opaque(_mm256_mul_pd(xs, ss)));
        const __m128 o = _mm256_cvtpd_ps(r);
        _mm_storeu_ps(v + 2 * k, o);
        acc = _mm_or_si128(acc, _mm_cmpeq_epi32(_mm_and_si128(_mm_castps_si128(o), exp_mask), exp_mask));
      }
    } else {
      float* vb = v + half;
      for (std::size_t k = 0; k < body; k += 4) {
        const __m256d a = _mm256_cvtps_pd(_mm_loadu_ps(v + k)), b = _mm256_cvtps_pd(_mm_loadu_ps(vb + k));
        const __m256d cc = _mm256_loadu_pd(c + k), ss = _mm256_loadu_pd(s + k);
        const __m128 oa = _mm256_cvtpd_ps(_mm256_sub_pd(opaque(_mm256_mul_pd(a, cc)), opaque(_mm256_mul_pd(b, ss))));
        const __m128 ob = _mm256_cvtpd_ps(_mm256_add_pd(opaque(_mm256_mul_pd(a, ss)), opaque(_mm256_mul_pd(b, cc))));
        _mm_storeu_ps(v + k, oa);
        _mm_storeu_ps(vb + k, ob);
        acc = _mm_or_si128(acc, _mm_cmpeq_epi32(_mm_and_si128(_mm_castps_si128(oa), exp_mask), exp_mask));
        acc = _mm_or_si128(acc, _mm_cmpeq_epi32(_mm_and_si128(_mm_castps_si128(ob), exp_mask), exp_mask));
      }
    }
    bad |= rotate_tail<float, double>(v, c, s, half, body, interleaved, check);
    if (check) bad |= _mm_testz_si128(acc, acc) == 0;
  }
  return bad;
}

// ---- 16-bit storage, float work: 8 lanes ----

/// 8 binary16 or bfloat16 values at p as floats.
template <class T>
__attribute__((target("avx2,f16c"))) inline __m256 load8(const T* p) {
  const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  if constexpr (std::is_same_v<T, Eigen::half>)
    return _mm256_cvtph_ps(h);
  else
    return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
}

/// 8 floats rounded to nearest even to bfloat16 bits, one per 32-bit lane (as
/// numeric::float_to_bf16_bits: a NaN keeps its sign and high payload and is made quiet).
__attribute__((target("avx2"))) inline __m256i bf16_round8(__m256 x) {
  const __m256i u = _mm256_castps_si256(x);
  const __m256i hi = _mm256_srli_epi32(u, 16);
  const __m256i lsb = _mm256_and_si256(hi, _mm256_set1_epi32(1));
  const __m256i rounded = _mm256_srli_epi32(_mm256_add_epi32(_mm256_add_epi32(u, _mm256_set1_epi32(0x7fff)), lsb), 16);
  const __m256i nan = _mm256_castps_si256(_mm256_cmp_ps(x, x, _CMP_UNORD_Q));
  return _mm256_blendv_epi8(rounded, _mm256_or_si256(hi, _mm256_set1_epi32(0x40)), nan);  // each lane < 2^16
}

/// 8 floats rounded to nearest even to binary16 or bfloat16 (as numeric::float_to_half_bits /
/// float_to_bf16_bits), stored at p; returns the 8 results (for the finite check).
template <class T>
__attribute__((target("avx2,f16c"))) inline __m128i store8(T* p, __m256 x) {
  __m128i h;
  if constexpr (std::is_same_v<T, Eigen::half>) {
    h = _mm256_cvtps_ph(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  } else {
    const __m256i r = bf16_round8(x);
    h = _mm256_castsi256_si128(_mm256_permute4x64_epi64(_mm256_packus_epi32(r, r), 0x08));
  }
  _mm_storeu_si128(reinterpret_cast<__m128i*>(p), h);
  return h;
}

/// 16 floats (x0 then x1) rounded to nearest even to binary16 or bfloat16, stored at p with one
/// 32-byte store; returns the 16 results (for the finite check). Two vectors share the pack.
template <class T>
__attribute__((target("avx2,f16c"))) inline __m256i store16(T* p, __m256 x0, __m256 x1) {
  __m256i h;
  if constexpr (std::is_same_v<T, Eigen::half>) {
    h = _mm256_set_m128i(_mm256_cvtps_ph(x1, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC),
                         _mm256_cvtps_ph(x0, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
  } else {
    // packus interleaves the 128-bit halves (x0 lo, x1 lo, x0 hi, x1 hi); 0xd8 puts them in order
    h = _mm256_permute4x64_epi64(_mm256_packus_epi32(bf16_round8(x0), bf16_round8(x1)), 0xd8);
  }
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), h);
  return h;
}

/// p[k..k+4) each in two adjacent lanes, xor'ed with `sign` (zero, or the sign bit of the even
/// lanes: -s s for the interleaved layout's sines).
__attribute__((target("avx2"))) inline __m256 spread4(const float* p, __m256 sign) {
  const __m256i dup = _mm256_setr_epi32(0, 0, 1, 1, 2, 2, 3, 3);
  return _mm256_xor_ps(_mm256_permutevar8x32_ps(_mm256_castps128_ps256(_mm_loadu_ps(p)), dup), sign);
}

template <class T>
__attribute__((target("avx2,f16c"))) inline bool rotate_heads_x86_16(T* base, std::ptrdiff_t head_stride,
                                                                     std::size_t heads, const float* cs,
                                                                     std::size_t half, bool interleaved, bool check) {
  const float* c = cs;
  const float* s = cs + half;
  const __m128i exp_mask = _mm_set1_epi16(static_cast<short>(std::is_same_v<T, Eigen::half> ? 0x7c00 : 0x7f80));
  const __m256i dup = _mm256_setr_epi32(0, 0, 1, 1, 2, 2, 3, 3);
  const __m256 sign_even = _mm256_castsi256_ps(_mm256_setr_epi32(int(0x80000000u), 0, int(0x80000000u), 0,
                                                                 int(0x80000000u), 0, int(0x80000000u), 0));
  const __m256i exp_mask16 = _mm256_set1_epi16(static_cast<short>(std::is_same_v<T, Eigen::half> ? 0x7c00 : 0x7f80));
  const std::size_t body = half - half % (interleaved ? 4 : 8);  // pairs in whole vectors
  // pairs in whole pairs of vectors: 16 values a store
  const std::size_t body2 = half - half % (interleaved ? 8 : 16);
  // Interleaved layout: every head of the call uses the same coefficients, so each is spread to
  // its two lanes (c c, -s s) once here rather than once per head (up to 256 pairs; wider heads
  // spread them per head below).
  constexpr std::size_t spread_max = 256;
  alignas(32) float cd[2 * spread_max], sd[2 * spread_max];
  const bool spread = interleaved && body2 <= spread_max;
  const __m256 no_sign = _mm256_setzero_ps();
  if (spread) {
    for (std::size_t k = 0; k < body2; k += 4) {
      _mm256_store_ps(cd + 2 * k, spread4(c + k, no_sign));
      _mm256_store_ps(sd + 2 * k, spread4(s + k, sign_even));
    }
  }
  bool bad = false;
  for (std::size_t h = 0; h < heads; ++h) {
    T* v = base + static_cast<std::ptrdiff_t>(h) * head_stride;
    __m128i acc = _mm_setzero_si128();
    __m256i acc16 = _mm256_setzero_si256();
    if (interleaved) {
      for (std::size_t k = 0; k < body2; k += 8) {
        const __m256 x0 = load8(v + 2 * k), x1 = load8(v + 2 * k + 8);
        const __m256 c0 = spread ? _mm256_load_ps(cd + 2 * k) : spread4(c + k, no_sign);
        const __m256 c1 = spread ? _mm256_load_ps(cd + 2 * k + 8) : spread4(c + k + 4, no_sign);
        const __m256 s0 = spread ? _mm256_load_ps(sd + 2 * k) : spread4(s + k, sign_even);
        const __m256 s1 = spread ? _mm256_load_ps(sd + 2 * k + 8) : spread4(s + k + 4, sign_even);
        const __m256 y0 =
            _mm256_add_ps(opaque(_mm256_mul_ps(x0, c0)), opaque(_mm256_mul_ps(_mm256_permute_ps(x0, 0xb1), s0)));
        const __m256 y1 =
            _mm256_add_ps(opaque(_mm256_mul_ps(x1, c1)), opaque(_mm256_mul_ps(_mm256_permute_ps(x1, 0xb1), s1)));
        const __m256i o = store16(v + 2 * k, y0, y1);
        acc16 = _mm256_or_si256(acc16, _mm256_cmpeq_epi16(_mm256_and_si256(o, exp_mask16), exp_mask16));
      }
      for (std::size_t k = body2; k < body; k += 4) {
        const __m256 x = load8(v + 2 * k);  // a0 b0 a1 b1 a2 b2 a3 b3
        const __m256 cc = _mm256_permutevar8x32_ps(_mm256_castps128_ps256(_mm_loadu_ps(c + k)), dup);
        const __m256 ss =
            _mm256_xor_ps(_mm256_permutevar8x32_ps(_mm256_castps128_ps256(_mm_loadu_ps(s + k)), dup), sign_even);
        const __m256 xs = _mm256_permute_ps(x, 0xb1);  // b0 a0 b1 a1 ...
        const __m128i o = store8(v + 2 * k, _mm256_add_ps(opaque(_mm256_mul_ps(x, cc)), opaque(_mm256_mul_ps(xs, ss))));
        acc = _mm_or_si128(acc, _mm_cmpeq_epi16(_mm_and_si128(o, exp_mask), exp_mask));
      }
    } else {
      T* vb = v + half;
      for (std::size_t k = 0; k < body2; k += 16) {
        const __m256 a0 = load8(v + k), a1 = load8(v + k + 8), b0 = load8(vb + k), b1 = load8(vb + k + 8);
        const __m256 c0 = _mm256_loadu_ps(c + k), c1 = _mm256_loadu_ps(c + k + 8);
        const __m256 s0 = _mm256_loadu_ps(s + k), s1 = _mm256_loadu_ps(s + k + 8);
        const __m256i oa = store16(v + k, _mm256_sub_ps(opaque(_mm256_mul_ps(a0, c0)), opaque(_mm256_mul_ps(b0, s0))),
                                   _mm256_sub_ps(opaque(_mm256_mul_ps(a1, c1)), opaque(_mm256_mul_ps(b1, s1))));
        const __m256i ob = store16(vb + k, _mm256_add_ps(opaque(_mm256_mul_ps(a0, s0)), opaque(_mm256_mul_ps(b0, c0))),
                                   _mm256_add_ps(opaque(_mm256_mul_ps(a1, s1)), opaque(_mm256_mul_ps(b1, c1))));
        acc16 = _mm256_or_si256(acc16, _mm256_cmpeq_epi16(_mm256_and_si256(oa, exp_mask16), exp_mask16));
        acc16 = _mm256_or_si256(acc16, _mm256_cmpeq_epi16(_mm256_and_si256(ob, exp_mask16), exp_mask16));
      }
      for (std::size_t k = body2; k < body; k += 8) {
        const __m256 a = load8(v + k), b = load8(vb + k);
        const __m256 cc = _mm256_loadu_ps(c + k), ss = _mm256_loadu_ps(s + k);
        const __m128i oa = store8(v + k, _mm256_sub_ps(opaque(_mm256_mul_ps(a, cc)), opaque(_mm256_mul_ps(b, ss))));
        const __m128i ob = store8(vb + k, _mm256_add_ps(opaque(_mm256_mul_ps(a, ss)), opaque(_mm256_mul_ps(b, cc))));
        acc = _mm_or_si128(acc, _mm_cmpeq_epi16(_mm_and_si128(oa, exp_mask), exp_mask));
        acc = _mm_or_si128(acc, _mm_cmpeq_epi16(_mm_and_si128(ob, exp_mask), exp_mask));
      }
    }
    bad |= rotate_tail<T, float>(v, c, s, half, body, interleaved, check);
    if (check) bad |= _mm_testz_si128(acc, acc) == 0 || _mm256_testz_si256(acc16, acc16) == 0;
  }
  return bad;
}

// ---- AVX-512 F/BW/VL (and AVX512_BF16): the same arithmetic, twice as wide ----

// GCC 12's AVX-512 intrinsics start from _mm512_undefined_*() (`__m512 __Y = __Y;`), which
// -Wmaybe-uninitialized reports once they are inlined here (GCC bug 105593, fixed in GCC 13).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

/// Whether this processor runs the AVX-512 kernels below (AVX-512 F, BW and VL, with the operating
/// system's support of their state as the compiler's runtime reports it; checked once).
inline bool x86_avx512_available() noexcept {
  static const bool ok = [] {
    __builtin_cpu_init();
    return x86_kernels_available() && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
           __builtin_cpu_supports("avx512vl");
  }();
  return ok;
}

/// Whether it also has AVX512_BF16 (CPUID leaf 7, subleaf 1, EAX bit 5; checked once).
inline bool x86_avx512_bf16_available() noexcept {
  static const bool ok = [] {
    unsigned a = 0, b = 0, c = 0, d = 0;
    return x86_avx512_available() && __get_cpuid_count(7, 1, &a, &b, &c, &d) != 0 && (a & (1u << 5)) != 0;
  }();
  return ok;
}

/// x, opaque to the optimiser (no instruction): a product passed through it is never contracted
/// with the sum that uses it into a fused multiply-add (AVX-512F implies FMA; GCC contracts
/// across intrinsics by default, Clang under -ffp-contract=fast).
__attribute__((target("avx512f"))) inline __m512d opaque(__m512d x) {
  asm("" : "+v"(x));
  return x;
}
__attribute__((target("avx512f"))) inline __m512 opaque(__m512 x) {
  asm("" : "+v"(x));
  return x;
}

/// The n <= 4 doubles at p (lanes beyond: zero), each in two adjacent lanes, xor'ed with `sign`.
__attribute__((target("avx512f,avx512bw,avx512vl"))) inline __m512d spread4_512(const double* p, std::size_t n,
                                                                                 __m512i sign) {
  const __m512i dup = _mm512_setr_epi64(0, 0, 1, 1, 2, 2, 3, 3);
  const __m256d x = _mm256_maskz_loadu_pd(static_cast<__mmask8>((1u << n) - 1), p);
  return _mm512_castsi512_pd(
      _mm512_xor_si512(_mm512_castpd_si512(_mm512_permutexvar_pd(dup, _mm512_castpd256_pd512(x))), sign));
}

/// The n <= 8 floats at p (lanes beyond: zero), each in two adjacent lanes, xor'ed with `sign`.
__attribute__((target("avx512f,avx512bw,avx512vl"))) inline __m512 spread8_512(const float* p, std::size_t n,
                                                                                __m512i sign) {
  const __m512i dup = _mm512_setr_epi32(0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7);
  const __m256 x = _mm256_maskz_loadu_ps(static_cast<__mmask8>((1u << n) - 1), p);
  return _mm512_castsi512_ps(
      _mm512_xor_si512(_mm512_castps_si512(_mm512_permutexvar_ps(dup, _mm512_castps256_ps512(x))), sign));
}

/// 8 floats at p (the lanes of m when not `full`; the others zero).
__attribute__((target("avx512f,avx512bw,avx512vl"))) inline __m256 load8_512(const float* p, __mmask8 m, bool full) {
  return full ? _mm256_loadu_ps(p) : _mm256_maskz_loadu_ps(m, p);
}

/// o stored at p (the lanes of m when not `full`); their finite-check mask (lanes of m).
__attribute__((target("avx512f,avx512bw,avx512vl"))) inline unsigned store8_512(float* p, __m256 o, __mmask8 m,
                                                                                 bool full) {
  if (full)
    _mm256_storeu_ps(p, o);
  else
    _mm256_mask_storeu_ps(p, m, o);
  const __m256i e = _mm256_set1_epi32(0x7f800000);
  return _mm256_mask_cmpeq_epi32_mask(m, _mm256_and_si256(_mm256_castps_si256(o), e), e);
}

__attribute__((target("avx512f,avx512bw,avx512vl"))) inline bool rotate_heads_x86_512(
    float* base, std::ptrdiff_t head_stride, std::size_t heads, const double* cs, std::size_t half, bool interleaved,
    bool check) {
  const double* c = cs;
  const double* s = cs + half;
  const __m512i no_sign = _mm512_setzero_si512();
  const __m512i sign_even = _mm512_setr_epi64(INT64_MIN, 0, INT64_MIN, 0, INT64_MIN, 0, INT64_MIN, 0);
  // Interleaved layout: 4 pairs a vector, the coefficients spread to their two lanes (c c, -s s)
  // once per call up to 256 pairs (per head beyond). Half layout: 8 pairs a vector.
  constexpr std::size_t spread_max = 256;
  alignas(64) double cd[2 * spread_max], sd[2 * spread_max];
  const bool spread = interleaved && half <= spread_max;
  if (spread) {
    for (std::size_t k = 0; k < half; k += 4) {
      const std::size_t n = half - k < 4 ? half - k : 4;
      _mm512_store_pd(cd + 2 * k, spread4_512(c + k, n, no_sign));
      _mm512_store_pd(sd + 2 * k, spread4_512(s + k, n, sign_even));
    }
  }
  unsigned bad = 0;
  for (std::size_t h = 0; h < heads; ++h) {
    float* v = base + static_cast<std::ptrdiff_t>(h) * head_stride;
    if (interleaved) {
      for (std::size_t k = 0; k < half; k += 4) {
        const std::size_t n = half - k < 4 ? half - k : 4;
        const bool full = n == 4;
        const auto m = static_cast<__mmask8>((1u << (2 * n)) - 1);
        const __m512d x = _mm512_cvtps_pd(load8_512(v + 2 * k, m, full));  // a0 b0 a1 b1 ...
        const __m512d cc = spread ? _mm512_load_pd(cd + 2 * k) : spread4_512(c + k, n, no_sign);
        const __m512d ss = spread ? _mm512_load_pd(sd + 2 * k) : spread4_512(s + k, n, sign_even);
        const __m512d xs = _mm512_permute_pd(x, 0x55);  // b0 a0 b1 a1 ...
        const __m512d r = _mm512_add_pd(opaque(_mm512_mul_pd(x, cc)), opaque(_mm512_mul_pd(xs, ss)));
        bad |= store8_512(v + 2 * k, _mm512_cvtpd_ps(r), m, full);
      }
    } else {
      float* vb = v + half;
      for (std::size_t k = 0; k < half; k += 8) {
        const std::size_t n = half - k < 8 ? half - k : 8;
        const bool full = n == 8;
        const auto m = static_cast<__mmask8>((1u << n) - 1);
        const __m512d a = _mm512_cvtps_pd(load8_512(v + k, m, full)), b = _mm512_cvtps_pd(load8_512(vb + k, m, full));
        const __m512d cc = full ? _mm512_loadu_pd(c + k) : _mm512_maskz_loadu_pd(m, c + k);
        const __m512d ss = full ? _mm512_loadu_pd(s + k) : _mm512_maskz_loadu_pd(m, s + k);
        const __m512d ra = _mm512_sub_pd(opaque(_mm512_mul_pd(a, cc)), opaque(_mm512_mul_pd(b, ss)));
        const __m512d rb = _mm512_add_pd(opaque(_mm512_mul_pd(a, ss)), opaque(_mm512_mul_pd(b, cc)));
        bad |= store8_512(v + k, _mm512_cvtpd_ps(ra), m, full);
        bad |= store8_512(vb + k, _mm512_cvtpd_ps(rb), m, full);
      }
    }
  }
  return check && bad != 0;
}

/// 16 binary16 or bfloat16 values at p (the lanes of m when not `full`; the others zero) as floats.
template <class T>
__attribute__((target("avx512f,avx512bw,avx512vl"))) inline __m512 load16_512(const T* p, __mmask16 m, bool full) {
  const __m256i h = full ? _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)) : _mm256_maskz_loadu_epi16(m, p);
  if constexpr (std::is_same_v<T, Eigen::half>)
    return _mm512_cvtph_ps(h);
  else
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
}

/// 16 floats rounded to nearest even to bfloat16 bits in software (bf16_round8, 16 lanes).
__attribute__((target("avx512f,avx512bw,avx512vl"))) inline __m256i bf16_round16(__m512 x) {
  const __m512i u = _mm512_castps_si512(x);
  const __m512i hi = _mm512_srli_epi32(u, 16);
  const __m512i lsb = _mm512_and_si512(hi, _mm512_set1_epi32(1));
  const __m512i rounded = _mm512_srli_epi32(_mm512_add_epi32(_mm512_add_epi32(u, _mm512_set1_epi32(0x7fff)), lsb), 16);
  const __mmask16 nan = _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q);
  return _mm512_cvtepi32_epi16(_mm512_mask_mov_epi32(rounded, nan, _mm512_or_si512(hi, _mm512_set1_epi32(0x40))));
}

/// 16 floats rounded to nearest even to binary16 or bfloat16 (as numeric::float_to_half_bits /
/// float_to_bf16_bits). Bf16Hw: bfloat16 with vcvtneps2bf16 (AVX512_BF16; named in an asm
/// statement, so the kernel's target need not include it), which rounds as float_to_bf16_bits
/// (to nearest even, a NaN made quiet with its sign and upper payload) but flushes a subnormal
/// float to a zero of its sign: those lanes are rounded in software.
template <class T, bool Bf16Hw>
__attribute__((target("avx512f,avx512bw,avx512vl"))) inline __m256i round16_512(__m512 x) {
  if constexpr (std::is_same_v<T, Eigen::half>) {
    return _mm512_cvtps_ph(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  } else if constexpr (Bf16Hw) {
    __m256i h;
    asm("vcvtneps2bf16 %1, %0" : "=v"(h) : "v"(x));
    const __m512i u = _mm512_castps_si512(x);
    const __mmask16 subnormal = _mm512_testn_epi32_mask(u, _mm512_set1_epi32(0x7f800000)) &
                                _mm512_test_epi32_mask(u, _mm512_set1_epi32(0x007fffff));
    if (subnormal != 0) h = _mm256_mask_mov_epi16(h, subnormal, bf16_round16(x));
    return h;
  } else {
    return bf16_round16(x);
  }
}

/// 16 floats rounded (round16_512) and stored at p (the lanes of m when not `full`); their
/// finite-check mask (lanes of m).
template <class T, bool Bf16Hw>
__attribute__((target("avx512f,avx512bw,avx512vl"))) inline unsigned store16_512(T* p, __m512 x, __mmask16 m,
                                                                                  bool full) {
  const __m256i h = round16_512<T, Bf16Hw>(x);
  if (full)
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), h);
  else
    _mm256_mask_storeu_epi16(p, m, h);
  const __m256i e = _mm256_set1_epi16(static_cast<short>(std::is_same_v<T, Eigen::half> ? 0x7c00 : 0x7f80));
  return _mm256_mask_cmpeq_epi16_mask(m, _mm256_and_si256(h, e), e);
}

template <class T, bool Bf16Hw>
__attribute__((target("avx512f,avx512bw,avx512vl"))) inline bool rotate_heads_x86_512_16(
    T* base, std::ptrdiff_t head_stride, std::size_t heads, const float* cs, std::size_t half, bool interleaved,
    bool check) {
  const float* c = cs;
  const float* s = cs + half;
  const __m512i no_sign = _mm512_setzero_si512();
  const __m512i sign_even = _mm512_set1_epi64(0x80000000);  // the sign bit of each even 32-bit lane
  // Interleaved layout: 8 pairs a vector, the coefficients spread to their two lanes (c c, -s s)
  // once per call up to 256 pairs (per head beyond). Half layout: 16 pairs a vector.
  constexpr std::size_t spread_max = 256;
  alignas(64) float cd[2 * spread_max], sd[2 * spread_max];
  const bool spread = interleaved && half <= spread_max;
  if (spread) {
    for (std::size_t k = 0; k < half; k += 8) {
      const std::size_t n = half - k < 8 ? half - k : 8;
      _mm512_store_ps(cd + 2 * k, spread8_512(c + k, n, no_sign));
      _mm512_store_ps(sd + 2 * k, spread8_512(s + k, n, sign_even));
    }
  }
  unsigned bad = 0;
  for (std::size_t h = 0; h < heads; ++h) {
    T* v = base + static_cast<std::ptrdiff_t>(h) * head_stride;
    if (interleaved) {
      for (std::size_t k = 0; k < half; k += 8) {
        const std::size_t n = half - k < 8 ? half - k : 8;
        const bool full = n == 8;
        const auto m = static_cast<__mmask16>((1u << (2 * n)) - 1);
        const __m512 x = load16_512(v + 2 * k, m, full);  // a0 b0 a1 b1 ...
        const __m512 cc = spread ? _mm512_load_ps(cd + 2 * k) : spread8_512(c + k, n, no_sign);
        const __m512 ss = spread ? _mm512_load_ps(sd + 2 * k) : spread8_512(s + k, n, sign_even);
        const __m512 xs = _mm512_permute_ps(x, 0xb1);  // b0 a0 b1 a1 ...
        const __m512 y = _mm512_add_ps(opaque(_mm512_mul_ps(x, cc)), opaque(_mm512_mul_ps(xs, ss)));
        bad |= store16_512<T, Bf16Hw>(v + 2 * k, y, m, full);
      }
    } else {
      T* vb = v + half;
      for (std::size_t k = 0; k < half; k += 16) {
        const std::size_t n = half - k < 16 ? half - k : 16;
        const bool full = n == 16;
        const auto m = static_cast<__mmask16>((1u << n) - 1);
        const __m512 a = load16_512(v + k, m, full), b = load16_512(vb + k, m, full);
        const __m512 cc = full ? _mm512_loadu_ps(c + k) : _mm512_maskz_loadu_ps(m, c + k);
        const __m512 ss = full ? _mm512_loadu_ps(s + k) : _mm512_maskz_loadu_ps(m, s + k);
        const __m512 ya = _mm512_sub_ps(opaque(_mm512_mul_ps(a, cc)), opaque(_mm512_mul_ps(b, ss)));
        const __m512 yb = _mm512_add_ps(opaque(_mm512_mul_ps(a, ss)), opaque(_mm512_mul_ps(b, cc)));
        bad |= store16_512<T, Bf16Hw>(v + k, ya, m, full);
        bad |= store16_512<T, Bf16Hw>(vb + k, yb, m, full);
      }
    }
  }
  return check && bad != 0;
}

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

/// The highest kernel level this processor runs (checked once).
inline kernel_level detected_kernel_level() noexcept {
  if (x86_avx512_bf16_available()) return kernel_level::avx512_bf16;
  if (x86_avx512_available()) return kernel_level::avx512;
  return x86_kernels_available() ? kernel_level::avx2 : kernel_level::portable;
}

#else

inline bool x86_kernels_available() noexcept { return false; }
inline bool x86_avx512_available() noexcept { return false; }
inline bool x86_avx512_bf16_available() noexcept { return false; }
inline kernel_level detected_kernel_level() noexcept { return kernel_level::portable; }

#endif  // POSENC_NUMERIC_X86_KERNELS

}  // namespace posenc::numeric::detail
