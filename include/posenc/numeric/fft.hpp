// SPDX-License-Identifier: MIT
// Header-only FFT used by the Toeplitz/circulant products: a mixed-radix (8, 4, 2, 3, 5 and generic
// odd radices up to 13) Stockham transform on split (re[], im[]) arrays with twiddles precomputed
// in a plan, Bluestein's chirp-z algorithm for sizes with a larger prime factor, and real-input
// (r2c / c2r) transforms built on a half-length complex transform. No runtime library.
//
// Conventions (the same as FFTW and NumPy):
//   forward:  X_k = sum_j x_j exp(-2 pi i j k / n)
//   inverse:  x_j = sum_k X_k exp(+2 pi i j k / n)      (unnormalised: inverse(forward(x)) = n x)
#pragma once

#include <algorithm>
#include <cmath>
#include <complex>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <numbers>
#include <span>
#include <type_traits>
#include <utility>
#include <vector>

#include <posenc/core/checked.hpp>
#include <posenc/core/error.hpp>
#include <posenc/numeric/real_spectrum.hpp>

namespace posenc::fft {

/// Smallest m >= n whose prime factors are all in {2, 3, 5} (the sizes the plan runs fastest).
[[nodiscard]] inline std::size_t next_fast_size(std::size_t n) {
  posenc::detail::require(n <= (std::size_t{1} << 52), "fft::next_fast_size", "n must be <= 2^52, got ", n);
  if (n <= 1) return 1;
  for (std::size_t m = n;; ++m) {
    std::size_t r = m;
    for (std::size_t p : {2u, 3u, 5u})
      while (r % p == 0) r /= p;
    if (r == 1) return m;
  }
}

namespace detail {

/// A transform's caller arrays must not be null (invalid_argument naming the array).
template <class A, class B>
inline void require_arrays(const char* where, const A* a, const char* a_name, const B* b, const char* b_name) {
  posenc::detail::require(a != nullptr, where, a_name, ": expected a non-null array, got null");
  posenc::detail::require(b != nullptr, where, b_name, ": expected a non-null array, got null");
}

// The stage loops read and write distinct buffers; tell GCC's vectoriser so (without it GCC 12
// versions the loops on alias checks that fail and runs them scalar, 3.5x slower). Clang's
// equivalent, vectorize(assume_safety), warns (-Wpass-failed) wherever it cannot vectorise, e.g. at
// -O1, which would break -Werror builds of user code, so clang relies on __restrict alone.
#if defined(__GNUC__) && !defined(__clang__)
#define POSENC_FFT_IVDEP _Pragma("GCC ivdep")
#else
#define POSENC_FFT_IVDEP
#endif

struct stage {
  unsigned radix;      // R
  std::size_t ns;      // product of the radices of the previous stages
  std::size_t tw;      // offset of this stage's (R-1)*ns twiddles
  std::size_t gen;     // offset of the R roots of unity (generic radices only)
};

constexpr unsigned max_generic_radix = 13;  // generic odd radices: 7, 11, 13

// ---- butterflies (forward sign) on R scalars held in registers ----------------------------
template <class T, class V>
inline void bfly2(V* ar, V* ai) {
  const V r = ar[0] - ar[1], i = ai[0] - ai[1];
  ar[0] += ar[1];
  ai[0] += ai[1];
  ar[1] = r;
  ai[1] = i;
}

template <class T, class V>
inline void bfly3(V* ar, V* ai) {
  constexpr T s = static_cast<T>(0.866025403784438646763723170752936183L);  // sin(2 pi / 3)
  const V t1r = ar[1] + ar[2], t1i = ai[1] + ai[2];
  const V t2r = ar[1] - ar[2], t2i = ai[1] - ai[2];
  const V mr = ar[0] - T(0.5) * t1r, mi = ai[0] - T(0.5) * t1i;
  ar[0] += t1r;
  ai[0] += t1i;
  ar[1] = mr + s * t2i;
  ai[1] = mi - s * t2r;
  ar[2] = mr - s * t2i;
  ai[2] = mi + s * t2r;
}

template <class T, class V>
inline void bfly4(V* ar, V* ai) {
  const V t0r = ar[0] + ar[2], t0i = ai[0] + ai[2];
  const V t1r = ar[0] - ar[2], t1i = ai[0] - ai[2];
  const V t2r = ar[1] + ar[3], t2i = ai[1] + ai[3];
  const V t3r = ar[1] - ar[3], t3i = ai[1] - ai[3];
  ar[0] = t0r + t2r;
  ai[0] = t0i + t2i;
  ar[2] = t0r - t2r;
  ai[2] = t0i - t2i;
  ar[1] = t1r + t3i;  // t1 - i t3
  ai[1] = t1i - t3r;
  ar[3] = t1r - t3i;  // t1 + i t3
  ai[3] = t1i + t3r;
}

template <class T, class V>
inline void bfly5(V* ar, V* ai) {
  constexpr T c1 = static_cast<T>(0.309016994374947424102293417182819059L);   // cos(2 pi / 5)
  constexpr T c2 = static_cast<T>(-0.809016994374947424102293417182819059L);  // cos(4 pi / 5)
  constexpr T s1 = static_cast<T>(0.951056516295153572116439333379382143L);   // sin(2 pi / 5)
  constexpr T s2 = static_cast<T>(0.587785252292473129168705954639072769L);   // sin(4 pi / 5)
  const V t1r = ar[1] + ar[4], t1i = ai[1] + ai[4];
  const V t2r = ar[2] + ar[3], t2i = ai[2] + ai[3];
  const V t3r = ar[1] - ar[4], t3i = ai[1] - ai[4];
  const V t4r = ar[2] - ar[3], t4i = ai[2] - ai[3];
  const V m1r = ar[0] + c1 * t1r + c2 * t2r, m1i = ai[0] + c1 * t1i + c2 * t2i;
  const V m2r = ar[0] + c2 * t1r + c1 * t2r, m2i = ai[0] + c2 * t1i + c1 * t2i;
  const V n1r = s1 * t3r + s2 * t4r, n1i = s1 * t3i + s2 * t4i;
  const V n2r = s2 * t3r - s1 * t4r, n2i = s2 * t3i - s1 * t4i;
  ar[0] += t1r + t2r;
  ai[0] += t1i + t2i;
  ar[1] = m1r + n1i;  // m1 - i n1
  ai[1] = m1i - n1r;
  ar[4] = m1r - n1i;  // m1 + i n1
  ai[4] = m1i + n1r;
  ar[2] = m2r + n2i;  // m2 - i n2
  ai[2] = m2i - n2r;
  ar[3] = m2r - n2i;  // m2 + i n2
  ai[3] = m2i + n2r;
}

// Radix 8 as two radix-4 DFTs (even and odd samples) combined with w8^k = exp(-i pi k / 4).
template <class T, class V>
inline void bfly8(V* ar, V* ai) {
  constexpr T h = static_cast<T>(0.707106781186547524400844362104849039L);  // 1/sqrt(2)
  V er[4] = {ar[0], ar[2], ar[4], ar[6]}, ei[4] = {ai[0], ai[2], ai[4], ai[6]};
  V orr[4] = {ar[1], ar[3], ar[5], ar[7]}, oi[4] = {ai[1], ai[3], ai[5], ai[7]};
  bfly4<T>(er, ei);
  bfly4<T>(orr, oi);
  // o_k <- w8^k o_k
  const V o1r = h * (orr[1] + oi[1]), o1i = h * (oi[1] - orr[1]);
  const V o2r = oi[2], o2i = -orr[2];
  const V o3r = h * (oi[3] - orr[3]), o3i = -h * (orr[3] + oi[3]);
  ar[0] = er[0] + orr[0];
  ai[0] = ei[0] + oi[0];
  ar[4] = er[0] - orr[0];
  ai[4] = ei[0] - oi[0];
  ar[1] = er[1] + o1r;
  ai[1] = ei[1] + o1i;
  ar[5] = er[1] - o1r;
  ai[5] = ei[1] - o1i;
  ar[2] = er[2] + o2r;
  ai[2] = ei[2] + o2i;
  ar[6] = er[2] - o2r;
  ai[6] = ei[2] - o2i;
  ar[3] = er[3] + o3r;
  ai[3] = ei[3] + o3i;
  ar[7] = er[3] - o3r;
  ai[7] = ei[3] - o3i;
}

template <unsigned R, class T, class V>
inline void bfly(V* ar, V* ai) {
  if constexpr (R == 2) bfly2<T>(ar, ai);
  else if constexpr (R == 3) bfly3<T>(ar, ai);
  else if constexpr (R == 4) bfly4<T>(ar, ai);
  else if constexpr (R == 5) bfly5<T>(ar, ai);
  else bfly8<T>(ar, ai);
}

// ---- lanes: W independent transforms advanced together, one SIMD lane each ------------------
// A "lane pack" V holds W scalars; element j of a lanes array is the W scalars at [j*W, j*W+W).
// Where the compiler supports GCC vector extensions (GCC, clang) V is a native vector of the
// widest width the target enables (__AVX512F__: 64 bytes, __AVX__: 32, otherwise 16 bytes);
// elsewhere, and for long double, portable_pack (a plain array whose element-wise loops the
// compiler may vectorise). W = 1 with V = T is the scalar transform.
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

/// One Stockham stage of radix R (Govindaraju et al. 2008 indexing) on W-lane arrays: for
/// j = b*ns + t, load in[j + r*N/R], twiddle by exp(-2 pi i r t / (ns R)), DFT_R, store
/// out[b*ns*R + t + r*ns]. The twiddles are scalars shared by the lanes, (R-1)*ns per stage,
/// stored contiguously in the order the loop reads them.
template <unsigned R, class V, std::size_t W, class T>
inline void stage_fixed(std::size_t n, std::size_t ns, const T* __restrict ir, const T* __restrict ii,
                        T* __restrict orr, T* __restrict oi, const T* __restrict twr, const T* __restrict twi) {
  const std::size_t q = n / R;
  if (ns == 1) {
    POSENC_FFT_IVDEP
    for (std::size_t b = 0; b < q; ++b) {
      V ar[R], ai[R];
      for (unsigned r = 0; r < R; ++r) {
        ar[r] = lanes_load<V>(ir + (b + r * q) * W);
        ai[r] = lanes_load<V>(ii + (b + r * q) * W);
      }
      bfly<R, T>(ar, ai);
      for (unsigned r = 0; r < R; ++r) {
        lanes_store(orr + (b * R + r) * W, ar[r]);
        lanes_store(oi + (b * R + r) * W, ai[r]);
      }
    }
    return;
  }
  const std::size_t nb = q / ns;
  for (std::size_t b = 0; b < nb; ++b) {
    const T* __restrict ir0 = ir + b * ns * W;
    const T* __restrict ii0 = ii + b * ns * W;
    T* __restrict or0 = orr + b * ns * R * W;
    T* __restrict oi0 = oi + b * ns * R * W;
    POSENC_FFT_IVDEP
    for (std::size_t t = 0; t < ns; ++t) {
      V ar[R], ai[R];
      ar[0] = lanes_load<V>(ir0 + t * W);
      ai[0] = lanes_load<V>(ii0 + t * W);
      for (unsigned r = 1; r < R; ++r) {
        const V xr = lanes_load<V>(ir0 + (t + r * q) * W), xi = lanes_load<V>(ii0 + (t + r * q) * W);
        const T wr = twr[(r - 1) * ns + t], wi = twi[(r - 1) * ns + t];
        ar[r] = xr * wr - xi * wi;
        ai[r] = xr * wi + xi * wr;
      }
      bfly<R, T>(ar, ai);
      for (unsigned r = 0; r < R; ++r) {
        lanes_store(or0 + (t + r * ns) * W, ar[r]);
        lanes_store(oi0 + (t + r * ns) * W, ai[r]);
      }
    }
  }
}

/// Generic odd radix R <= max_generic_radix: an O(R^2) DFT per butterfly with tabulated roots.
template <class V, std::size_t W, class T>
inline void stage_generic(unsigned R, std::size_t n, std::size_t ns, const T* ir, const T* ii, T* orr, T* oi,
                          const T* twr, const T* twi, const T* cr, const T* ci) {
  const std::size_t q = n / R;
  const std::size_t nb = q / ns;
  V ar[max_generic_radix], ai[max_generic_radix];
  for (std::size_t b = 0; b < nb; ++b) {
    for (std::size_t t = 0; t < ns; ++t) {
      const std::size_t j = b * ns + t;
      ar[0] = lanes_load<V>(ir + j * W);
      ai[0] = lanes_load<V>(ii + j * W);
      for (unsigned r = 1; r < R; ++r) {
        const V xr = lanes_load<V>(ir + (j + r * q) * W), xi = lanes_load<V>(ii + (j + r * q) * W);
        const T wr = twr[(r - 1) * ns + t], wi = twi[(r - 1) * ns + t];
        ar[r] = xr * wr - xi * wi;
        ai[r] = xr * wi + xi * wr;
      }
      for (unsigned k = 0; k < R; ++k) {
        V sr = ar[0], si = ai[0];
        for (unsigned r = 1; r < R; ++r) {
          const unsigned e = (r * k) % R;
          sr += ar[r] * cr[e] - ai[r] * ci[e];
          si += ar[r] * ci[e] + ai[r] * cr[e];
        }
        lanes_store(orr + (b * ns * R + t + k * ns) * W, sr);
        lanes_store(oi + (b * ns * R + t + k * ns) * W, si);
      }
    }
  }
}

/// The radices of the Stockham passes for n: the powers of two as radix 8 as far as possible
/// (fewest passes), then 4 and 2 (a leftover 2 with an 8 available becomes 4 x 4), then 3, 5, 7,
/// 11, 13. Returns false (radices incomplete) if n has a prime factor > 13.
inline bool stockham_radices(std::size_t n, std::vector<unsigned>& radices) {
  std::size_t rest = n;
  unsigned e2 = 0;
  while (rest % 2 == 0) { ++e2; rest /= 2; }
  unsigned n8 = e2 / 3, n4 = 0, n2 = 0;
  if (e2 % 3 == 2) n4 = 1;
  else if (e2 % 3 == 1) {
    if (n8 > 0) { --n8; n4 = 2; }
    else n2 = 1;
  }
  radices.insert(radices.end(), n8, 8u);
  radices.insert(radices.end(), n4, 4u);
  radices.insert(radices.end(), n2, 2u);
  for (unsigned p : {3u, 5u, 7u, 11u, 13u})
    while (rest % p == 0) { radices.push_back(p); rest /= p; }
  return rest == 1;
}

/// A Stockham pass sequence of one size n (prime factors <= 13) with its twiddles, run on W-lane
/// arrays: W transforms of size n at once (W = 1: one transform).
template <class T>
struct stockham {
  std::size_t n = 0;
  std::vector<stage> stages;
  std::vector<unsigned> factors;
  std::vector<T> twr, twi, genr, geni;

  stockham() = default;
  stockham(std::size_t size, const std::vector<unsigned>& radices) : n(size) {
    std::size_t ns = 1;
    for (unsigned r : radices) {
      stage s{r, ns, twr.size(), genr.size()};
      for (unsigned k = 1; k < r; ++k)
        for (std::size_t t = 0; t < ns; ++t) {
          T wr, wi;
          unit_root(std::uint64_t(k) * t, std::uint64_t(ns) * r, wr, wi);
          twr.push_back(wr);
          twi.push_back(wi);
        }
      if (r != 2 && r != 3 && r != 4 && r != 5 && r != 8)
        for (unsigned e = 0; e < r; ++e) {
          T wr, wi;
          unit_root(e, r, wr, wi);
          genr.push_back(wr);
          geni.push_back(wi);
        }
      stages.push_back(s);
      factors.push_back(r);
      ns *= r;
    }
  }

  /// Forward transforms of the W-lane arrays (re, im) (n * W scalars each), using (wr, wi) of the
  /// same size as the ping-pong buffer. Returns true if the result is in (wr, wi), false if in
  /// (re, im).
  template <class V, std::size_t W>
  bool run(T* re, T* im, T* wr, T* wi) const {
    T* sr = re;
    T* si = im;
    T* dr = wr;
    T* di = wi;
    for (const auto& s : stages) {
      const T* tr = twr.data() + s.tw;
      const T* ti = twi.data() + s.tw;
      switch (s.radix) {
        case 2: stage_fixed<2, V, W>(n, s.ns, sr, si, dr, di, tr, ti); break;
        case 3: stage_fixed<3, V, W>(n, s.ns, sr, si, dr, di, tr, ti); break;
        case 4: stage_fixed<4, V, W>(n, s.ns, sr, si, dr, di, tr, ti); break;
        case 5: stage_fixed<5, V, W>(n, s.ns, sr, si, dr, di, tr, ti); break;
        case 8: stage_fixed<8, V, W>(n, s.ns, sr, si, dr, di, tr, ti); break;
        default:
          stage_generic<V, W>(s.radix, n, s.ns, sr, si, dr, di, tr, ti, genr.data() + s.gen, geni.data() + s.gen);
      }
      std::swap(sr, dr);
      std::swap(si, di);
    }
    return sr != re;
  }
};

/// A buffer whose data() is aligned to 64 bytes (lane packs load whole cache lines).
template <class T>
class aligned_buffer {
 public:
  aligned_buffer() = default;
  aligned_buffer(const aligned_buffer& o) { *this = o; }
  aligned_buffer& operator=(const aligned_buffer& o) {
    if (this != &o) {
      assign(o.m_n);
      std::copy(o.data(), o.data() + o.m_n, data());
    }
    return *this;
  }
  aligned_buffer(aligned_buffer&&) noexcept = default;  // the heap block moves: the offset stays valid
  aligned_buffer& operator=(aligned_buffer&&) noexcept = default;
  ~aligned_buffer() = default;

  void assign(std::size_t n) {
    m_v.assign(n + pad, T(0));
    const auto addr = reinterpret_cast<std::uintptr_t>(m_v.data());
    m_off = ((64 - addr % 64) % 64) / sizeof(T);
    m_n = n;
  }
  [[nodiscard]] T* data() noexcept { return m_v.data() + m_off; }
  [[nodiscard]] const T* data() const noexcept { return m_v.data() + m_off; }
  [[nodiscard]] std::size_t size() const noexcept { return m_n; }

 private:
  static constexpr std::size_t pad = 64 / sizeof(T) + 1;
  std::vector<T> m_v;
  std::size_t m_off = 0, m_n = 0;
};

/// One transform of size n = n1 n2 (W divides n1 and n2) with the lanes spread over the other
/// index, so every butterfly is a lane-pack operation whatever n is. x viewed as x[j1][j2]
/// (j = j1 n2 + j2):
///   pass 1, for each block of W consecutive j2: the W length-n1 DFTs over j1 (lanes = j2),
///           times the twiddles w_n^{j2 k1}  ->  y[k1][j2];
///   pass 2, for each block of W consecutive k1: the W length-n2 DFTs over j2 (lanes = k1),
///           X[k1 + n1 k2] stored as whole lane packs at k2 n1 + k1.
/// Each pass keeps its W transforms (n1 W or n2 W complex values) in L1/L2 whatever n is.
/// V is the lane pack type (native_lanes<T>::type, or portable_pack for the portable build).
template <class T, class V, std::size_t W>
class two_pass {
 public:
  two_pass() = default;
  /// Plan n = n1 * n2; both must be multiples of W with prime factors <= 13.
  two_pass(std::size_t n1, std::size_t n2) : m_n1(n1), m_n2(n2) {
    std::vector<unsigned> r1, r2;
    stockham_radices(n1, r1);
    stockham_radices(n2, r2);
    m_s1 = stockham<T>(n1, r1);
    m_s2 = stockham<T>(n2, r2);
    const std::size_t n = n1 * n2;
    m_twr.assign(n);
    m_twi.assign(n);
    // Layout [j2 block][k1][lane]: the loop after each pass-1 block reads them contiguously.
    for (std::size_t g = 0; g < n2 / W; ++g)
      for (std::size_t k1 = 0; k1 < n1; ++k1)
        for (std::size_t l = 0; l < W; ++l) {
          const std::size_t j2 = g * W + l;
          unit_root(std::uint64_t(j2) * k1, n, m_twr.data()[(g * n1 + k1) * W + l], m_twi.data()[(g * n1 + k1) * W + l]);
        }
    // Pass 1 holds min(group, n2 / W) transforms of n1 W scalars, pass 2 min(group, n1 / W) of n2 W.
    const std::size_t m = std::max(std::min(group, n2 / W) * n1, std::min(group, n1 / W) * n2) * W;
    for (auto* b : {&m_ar, &m_ai, &m_br, &m_bi}) b->assign(m);
  }

  /// Sizes (n1, n2) for n, or (0, 0) if n has no split with W | n1, W | n2 and n1, n2 >= 2 W
  /// (or a prime factor > 13). n1 is the largest such divisor <= sqrt(n).
  static std::pair<std::size_t, std::size_t> split(std::size_t n) {
    if (W < 2 || n % (W * W) != 0) return {0, 0};
    std::vector<unsigned> r;
    if (!stockham_radices(n, r)) return {0, 0};
    const std::size_t m = n / (W * W);  // n1 = W a, n2 = W b, a b = m
    std::size_t best = 0;
    for (std::size_t a = 1; a * a <= m; ++a)
      if (m % a == 0) best = a;
    const std::size_t n1 = W * best, n2 = n / n1;
    if (n1 < 2 * W || n2 < 2 * W) return {0, 0};
    return {n1, n2};
  }

  [[nodiscard]] std::size_t size() const noexcept { return m_n1 * m_n2; }
  [[nodiscard]] std::size_t n1() const noexcept { return m_n1; }

  /// Forward transform of (re, im) in place; (wr, wi) is an n-scalar work buffer.
  /// Each pass handles up to `group` blocks of W lanes per gather, so every row it touches yields
  /// group * W consecutive scalars (several whole cache lines) instead of one lane pack: at large
  /// n the rows lie a power-of-two stride apart, beyond L2, and a lone 64-byte line per row left
  /// the prefetchers idle.
  void forward(T* re, T* im, T* wr, T* wi) {
    const std::size_t n1 = m_n1, n2 = m_n2;
    const std::size_t m1 = n1 * W, m2 = n2 * W;
    T* ar = m_ar.data();
    T* ai = m_ai.data();
    T* br = m_br.data();
    T* bi = m_bi.data();
    // Pass 1: columns j2 in groups of G blocks of W.
    for (std::size_t g0 = 0; g0 < n2 / W; g0 += group) {
      const std::size_t G = std::min(group, n2 / W - g0);
      for (std::size_t j1 = 0; j1 < n1; ++j1)
        for (std::size_t u = 0; u < G; ++u) {
          lanes_store(ar + u * m1 + j1 * W, lanes_load<V>(re + j1 * n2 + (g0 + u) * W));
          lanes_store(ai + u * m1 + j1 * W, lanes_load<V>(im + j1 * n2 + (g0 + u) * W));
        }
      bool in_b = false;
      for (std::size_t u = 0; u < G; ++u)
        in_b = m_s1.template run<V, W>(ar + u * m1, ai + u * m1, br + u * m1, bi + u * m1);
      const T* sr = in_b ? br : ar;
      const T* si = in_b ? bi : ai;
      for (std::size_t k1 = 0; k1 < n1; ++k1)
        for (std::size_t u = 0; u < G; ++u) {
          const std::size_t g = g0 + u;
          const V xr = lanes_load<V>(sr + u * m1 + k1 * W), xi = lanes_load<V>(si + u * m1 + k1 * W);
          const V cr = lanes_load<V>(m_twr.data() + (g * n1 + k1) * W), ci = lanes_load<V>(m_twi.data() + (g * n1 + k1) * W);
          lanes_store(wr + k1 * n2 + g * W, xr * cr - xi * ci);
          lanes_store(wi + k1 * n2 + g * W, xr * ci + xi * cr);
        }
    }
    // Pass 2: rows k1 in groups of G blocks of W, gathered as lanes (a W x n2 transpose each).
    for (std::size_t h0 = 0; h0 < n1 / W; h0 += group) {
      const std::size_t G = std::min(group, n1 / W - h0);
      bool in_b = false;
      for (std::size_t u = 0; u < G; ++u) {
        T* gr = ar + u * m2;
        T* gi = ai + u * m2;
        for (std::size_t l = 0; l < W; ++l) {
          const T* rr = wr + ((h0 + u) * W + l) * n2;
          const T* ri = wi + ((h0 + u) * W + l) * n2;
          for (std::size_t j2 = 0; j2 < n2; ++j2) {
            gr[j2 * W + l] = rr[j2];
            gi[j2 * W + l] = ri[j2];
          }
        }
        in_b = m_s2.template run<V, W>(gr, gi, br + u * m2, bi + u * m2);
      }
      const T* sr = in_b ? br : ar;
      const T* si = in_b ? bi : ai;
      for (std::size_t k2 = 0; k2 < n2; ++k2)
        for (std::size_t u = 0; u < G; ++u) {
          lanes_store(re + k2 * n1 + (h0 + u) * W, lanes_load<V>(sr + u * m2 + k2 * W));
          lanes_store(im + k2 * n1 + (h0 + u) * W, lanes_load<V>(si + u * m2 + k2 * W));
        }
    }
  }

 private:
  // Blocks of W lanes per gather: 256 bytes of each row (four 64-byte lines).
#ifdef POSENC_FFT_TWO_PASS_GROUP
  static constexpr std::size_t group = POSENC_FFT_TWO_PASS_GROUP;
#else
  static constexpr std::size_t group = std::max<std::size_t>(1, 256 / (W * sizeof(T)));
#endif
  std::size_t m_n1 = 0, m_n2 = 0;
  stockham<T> m_s1, m_s2;
  aligned_buffer<T> m_twr, m_twi;     // w_n^{j2 k1}, layout [j2 / W][k1][j2 % W]
  aligned_buffer<T> m_ar, m_ai, m_br, m_bi;  // one block of W transforms, ping-pong
};

/// W independent transforms of one size n, advanced together on a W-lane array (element j of
/// transform l at [j*W + l]), so every operation is a full lane-pack operation and no data moves
/// between lanes: one Stockham pass sequence over the whole array. Each pass streams the arrays
/// sequentially, which the hardware prefetchers follow even when they outgrow L2 (measured
/// faster than a two-pass split of the batch, whose strided gathers defeat them).
template <class T, class V, std::size_t W>
class batch {
 public:
  batch() = default;
  /// n >= 1 with prime factors <= 13 (see supported()).
  explicit batch(std::size_t n) : m_n(n) {
    std::vector<unsigned> r;
    stockham_radices(n, r);
    m_s = stockham<T>(n, r);
  }

  /// True if n can be planned (prime factors <= 13).
  static bool supported(std::size_t n) {
    std::vector<unsigned> r;
    return n >= 1 && stockham_radices(n, r);
  }
  [[nodiscard]] std::size_t size() const noexcept { return m_n; }

  /// Forward transforms of the W-lane arrays (re, im) with (wr, wi) as ping-pong arrays (n*W
  /// scalars each); returns true if the result is in (wr, wi).
  bool run(T* re, T* im, T* wr, T* wi) const { return m_s.template run<V, W>(re, im, wr, wi); }

  /// Forward transforms of the W-lane arrays (re, im), in place; (wr, wi) are n*W-scalar work arrays.
  void forward(T* re, T* im, T* wr, T* wi) const {
    if (m_s.template run<V, W>(re, im, wr, wi)) {
      std::copy(wr, wr + m_n * W, re);
      std::copy(wi, wi + m_n * W, im);
    }
  }

 private:
  std::size_t m_n = 0;
  stockham<T> m_s;
};

}  // namespace detail

/// A complex FFT of one size n >= 1. It owns its twiddles and work buffers, so transforms do
/// not allocate; a plan is therefore not safe to use from two threads at once (use one per thread).
/// Thread safety: one per thread (docs/thread-safety.md).
template <std::floating_point T>
class plan {
 public:
  explicit plan(std::size_t n) : m_n(n) {
    posenc::detail::require(n >= 1, "fft::plan", "size n must be >= 1, got ", n);
    (void)checked::extent(n, "fft::plan", "size n");
    checked::allocate("fft::plan", "size n", n, 4 * sizeof(T), [&] { init(n); });
  }

 private:
  using lanes = detail::native_lanes<T>;
  using two_pass_t = detail::two_pass<T, typename lanes::type, lanes::width>;

  void init(std::size_t n) {
    std::vector<unsigned> radices;
    if (!detail::stockham_radices(n, radices)) {
      init_bluestein();
      return;
    }
    // Two-pass with SIMD lanes whenever n splits into two multiples of the lane width (>= 2 W
    // each): every butterfly is then a full-width lane-pack operation.
    if (const auto [n1, n2] = two_pass_t::split(n); n1 != 0 && n >= two_pass_min) {
      m_two = std::make_unique<two_pass_t>(n1, n2);
      std::vector<unsigned> r2;
      detail::stockham_radices(n1, m_factors);
      detail::stockham_radices(n2, r2);
      m_factors.insert(m_factors.end(), r2.begin(), r2.end());
      m_wr.assign(n, T(0));
      m_wi.assign(n, T(0));
      return;
    }
    // Four-step pays off when the rows are dominated by radix-8/4 passes: measured on powers of
    // two and 2^a * 3 or 5 with 2^a >= 1024; sizes rich in 3s and 5s (6000, 30000) run faster as
    // one Stockham pass sequence.
    if (n >= four_step_min && (n & (~n + 1)) >= 1024) {
      init_four_step();
      return;
    }
    m_st = detail::stockham<T>(n, radices);
    m_factors = radices;
    m_wr.assign(n, T(0));
    m_wi.assign(n, T(0));
    m_ur.assign(n, T(0));
    m_ui.assign(n, T(0));
  }

 public:
  plan(const plan& o) : plan(o.m_n) {}
  plan& operator=(const plan& o) {
    if (this != &o) *this = plan(o.m_n);
    return *this;
  }
  plan(plan&&) noexcept = default;
  plan& operator=(plan&&) noexcept = default;
  ~plan() = default;

  [[nodiscard]] std::size_t size() const noexcept { return m_n; }
  /// Radices of the Stockham stages (empty when the plan uses Bluestein or the four-step
  /// decomposition, or n = 1); for the two-pass decomposition, those of n1 then those of n2.
  [[nodiscard]] const std::vector<unsigned>& factors() const noexcept { return m_factors; }
  /// True when n = n1 n2 runs as two passes of lane-pack transforms (n1, n2 multiples of the
  /// SIMD lane width W >= 2 with n1, n2 >= 2 W, prime factors <= 13; see detail::two_pass).
  [[nodiscard]] bool uses_two_pass() const noexcept { return m_two != nullptr; }
  /// The SIMD lane width of this build for T (1: no lanes, e.g. long double).
  [[nodiscard]] static constexpr std::size_t lane_width() noexcept { return lanes::width; }
  [[nodiscard]] bool uses_bluestein() const noexcept { return m_sub != nullptr; }
  /// True for n >= 4096 without a prime factor > 13, with a power-of-two factor >= 1024 and no
  /// two-pass split: n = n1 n2 by Bailey's four-step algorithm.
  [[nodiscard]] bool uses_four_step() const noexcept { return m_row1 != nullptr; }

  /// In-place forward transform of the split array (re[0..n), im[0..n)). A null array throws
  /// invalid_argument naming it. A NaN or Inf element gives NaN/Inf bins, as IEEE arithmetic does.
  void forward(T* re, T* im) {
    detail::require_arrays("fft::plan::forward", re, "re", im, "im");
    run(re, im);
  }
  /// In-place unnormalised inverse transform (sign +1): the forward transform with re and im swapped.
  void inverse(T* re, T* im) {
    detail::require_arrays("fft::plan::inverse", re, "re", im, "im");
    run(im, re);
  }

  /// Interleaved complex arrays (in == out allowed). Copies through the plan's split buffers.
  void forward(const std::complex<T>* in, std::complex<T>* out) {
    detail::require_arrays("fft::plan::forward", in, "in", out, "out");
    interleaved(in, out, false);
  }
  void inverse(const std::complex<T>* in, std::complex<T>* out) {
    detail::require_arrays("fft::plan::inverse", in, "in", out, "out");
    interleaved(in, out, true);
  }

  /// Convenience (allocates the result).
  [[nodiscard]] std::vector<std::complex<T>> forward(std::span<const std::complex<T>> x) {
    check_size(x.size(), "fft::plan::forward");
    std::vector<std::complex<T>> y(m_n);
    forward(x.data(), y.data());
    return y;
  }
  [[nodiscard]] std::vector<std::complex<T>> inverse(std::span<const std::complex<T>> x) {
    check_size(x.size(), "fft::plan::inverse");
    std::vector<std::complex<T>> y(m_n);
    inverse(x.data(), y.data());
    return y;
  }

 private:
  void check_size(std::size_t got, const char* where) const {
    posenc::detail::require<shape_error>(got == m_n, where, "input length must equal the plan size ", m_n,
                                         ", got ", got);
  }

  void interleaved(const std::complex<T>* in, std::complex<T>* out, bool inv) {
    if (m_ur.size() != m_n) {
      m_ur.assign(m_n, T(0));
      m_ui.assign(m_n, T(0));
    }
    for (std::size_t j = 0; j < m_n; ++j) {
      m_ur[j] = in[j].real();
      m_ui[j] = in[j].imag();
    }
    if (inv) inverse(m_ur.data(), m_ui.data());
    else forward(m_ur.data(), m_ui.data());
    for (std::size_t j = 0; j < m_n; ++j) out[j] = std::complex<T>(m_ur[j], m_ui[j]);
  }

  void run(T* re, T* im) {
    if (m_sub) {
      bluestein(re, im);
      return;
    }
    if (m_row1) {
      four_step(re, im);
      return;
    }
    if (m_two) {
      m_two->forward(re, im, m_wr.data(), m_wi.data());
      return;
    }
    if (m_st.template run<T, 1>(re, im, m_wr.data(), m_wi.data())) {
      std::copy(m_wr.begin(), m_wr.end(), re);
      std::copy(m_wi.begin(), m_wi.end(), im);
    }
  }

  // Four-step (Bailey) for large sizes, so that every pass works on L1/L2-resident rows instead of
  // streaming the whole array at power-of-two strides: n = n1 n2, x viewed as [j1][j2];
  // X[k1 + n1 k2] = sum_j2 w_n2^{j2 k2} w_n^{j2 k1} sum_j1 w_n1^{j1 k1} x[j1][j2].
#ifdef POSENC_FFT_FOUR_STEP_MIN
  static constexpr std::size_t four_step_min = POSENC_FFT_FOUR_STEP_MIN;
#else
  static constexpr std::size_t four_step_min = 4096;
#endif
  static constexpr std::size_t tile = 16;
#ifdef POSENC_FFT_TWO_PASS_MIN
  static constexpr std::size_t two_pass_min = POSENC_FFT_TWO_PASS_MIN;
#else
  static constexpr std::size_t two_pass_min = 1;  // every size (1, not 0: no always-true comparison)
#endif

  void init_four_step() {
    const std::size_t n = m_n;
    std::size_t n1 = 1;
    for (std::size_t d = 1; d * d <= n; ++d)
      if (n % d == 0) n1 = d;
    const std::size_t n2 = n / n1;  // n2 >= n1
    m_n1 = n1;
    m_row1 = std::make_unique<plan>(n1);
    m_row2 = std::make_unique<plan>(n2);
    m_twr.resize(n);
    m_twi.resize(n);
    for (std::size_t j2 = 0; j2 < n2; ++j2)
      for (std::size_t k1 = 0; k1 < n1; ++k1) unit_root(std::uint64_t(j2) * k1, n, m_twr[j2 * n1 + k1], m_twi[j2 * n1 + k1]);
    m_wr.assign(n, T(0));
    m_wi.assign(n, T(0));
    m_br.assign(n, T(0));
    m_bi.assign(n, T(0));
    m_ur.assign(n, T(0));
    m_ui.assign(n, T(0));
  }

  // dst[c][r] = src[r][c] for an r x c row-major source (both arrays of the split pair).
  static void transpose(std::size_t rows, std::size_t cols, const T* sr, const T* si, T* dr, T* di) {
    for (std::size_t r0 = 0; r0 < rows; r0 += tile)
      for (std::size_t c0 = 0; c0 < cols; c0 += tile) {
        const std::size_t r1 = std::min(rows, r0 + tile), c1 = std::min(cols, c0 + tile);
        for (std::size_t c = c0; c < c1; ++c)
          for (std::size_t r = r0; r < r1; ++r) {
            dr[c * rows + r] = sr[r * cols + c];
            di[c * rows + r] = si[r * cols + c];
          }
      }
  }

  void four_step(T* re, T* im) {
    const std::size_t n1 = m_n1, n2 = m_n / n1;
    T* ar = m_wr.data();
    T* ai = m_wi.data();
    T* br = m_br.data();
    T* bi = m_bi.data();
    transpose(n1, n2, re, im, ar, ai);  // [j2][j1]
    for (std::size_t j2 = 0; j2 < n2; ++j2) {
      T* rr = ar + j2 * n1;
      T* ri = ai + j2 * n1;
      m_row1->forward(rr, ri);  // [j2][k1]
      const T* twr = m_twr.data() + j2 * n1;
      const T* twi = m_twi.data() + j2 * n1;
      POSENC_FFT_IVDEP
      for (std::size_t k1 = 0; k1 < n1; ++k1) {
        const T xr = rr[k1], xi = ri[k1];
        rr[k1] = xr * twr[k1] - xi * twi[k1];
        ri[k1] = xr * twi[k1] + xi * twr[k1];
      }
    }
    transpose(n2, n1, ar, ai, br, bi);  // [k1][j2]
    for (std::size_t k1 = 0; k1 < n1; ++k1) m_row2->forward(br + k1 * n2, bi + k1 * n2);  // [k1][k2]
    transpose(n1, n2, br, bi, re, im);  // [k2][k1] = X[k1 + n1 k2]
  }

  // Bluestein: X_k = c_k sum_j (x_j c_j) conj(c_{k-j}), c_k = exp(-i pi k^2 / n), as a cyclic
  // convolution of length m >= 2n - 1 computed with a fast-size plan.
  void init_bluestein() {
    const std::size_t n = m_n;
    const std::size_t m = next_fast_size(2 * n - 1);
    m_sub = std::make_unique<plan>(m);
    m_cr.resize(n);
    m_ci.resize(n);
    for (std::size_t k = 0; k < n; ++k) {
      const std::uint64_t k2 = (std::uint64_t(k) * k) % (2 * std::uint64_t(n));
      unit_root(k2, 2 * std::uint64_t(n), m_cr[k], m_ci[k]);  // exp(-2 pi i k^2 / (2n))
    }
    m_fr.assign(m, T(0));
    m_fi.assign(m, T(0));
    for (std::size_t k = 0; k < n; ++k) {
      m_fr[k] = m_cr[k];
      m_fi[k] = -m_ci[k];
      if (k > 0) {
        m_fr[m - k] = m_cr[k];
        m_fi[m - k] = -m_ci[k];
      }
    }
    m_sub->forward(m_fr.data(), m_fi.data());
    const T scale = T(1) / static_cast<T>(m);
    for (std::size_t k = 0; k < m; ++k) {
      m_fr[k] *= scale;
      m_fi[k] *= scale;
    }
    m_wr.assign(m, T(0));
    m_wi.assign(m, T(0));
  }

  void bluestein(T* re, T* im) {
    const std::size_t n = m_n, m = m_sub->size();
    T* br = m_wr.data();
    T* bi = m_wi.data();
    for (std::size_t k = 0; k < n; ++k) {
      br[k] = re[k] * m_cr[k] - im[k] * m_ci[k];
      bi[k] = re[k] * m_ci[k] + im[k] * m_cr[k];
    }
    std::fill(br + n, br + m, T(0));
    std::fill(bi + n, bi + m, T(0));
    m_sub->forward(br, bi);
    for (std::size_t k = 0; k < m; ++k) {
      const T xr = br[k], xi = bi[k];
      br[k] = xr * m_fr[k] - xi * m_fi[k];
      bi[k] = xr * m_fi[k] + xi * m_fr[k];
    }
    m_sub->inverse(br, bi);
    for (std::size_t k = 0; k < n; ++k) {
      re[k] = br[k] * m_cr[k] - bi[k] * m_ci[k];
      im[k] = br[k] * m_ci[k] + bi[k] * m_cr[k];
    }
  }

  std::size_t m_n;
  detail::stockham<T> m_st;
  std::unique_ptr<two_pass_t> m_two;
  std::vector<unsigned> m_factors;
  std::vector<T> m_twr, m_twi;  // four-step twiddles
  std::vector<T> m_wr, m_wi;  // ping-pong work buffer (Stockham) or Bluestein work array
  std::vector<T> m_ur, m_ui;  // split copies for the interleaved interface
  std::unique_ptr<plan> m_sub;
  std::unique_ptr<plan> m_row1, m_row2;  // four-step row transforms (sizes n1, n / n1)
  std::size_t m_n1 = 0;
  std::vector<T> m_br, m_bi;  // four-step second work buffer
  std::vector<T> m_cr, m_ci, m_fr, m_fi;  // Bluestein chirp and filter spectrum (scaled by 1/m)
};


/// width() complex FFTs of one size n at once, one per SIMD lane: the arrays are lane-interleaved,
/// element j of transform l at [j * width() + l], so every butterfly is one vector operation and
/// the transforms never exchange data. width() is the widest lane count the target enables for T
/// (e.g. 8 doubles with AVX-512, 2 with SSE2; 1 for long double). The plan owns two n * width()
/// arrays (data_re(), data_im(), 64-byte aligned) and its work arrays, so transforms do not allocate.
/// Results equal width() separate plan<T> transforms up to rounding (a different operation order).
/// Thread safety: one per thread (docs/thread-safety.md).
template <std::floating_point T>
class batch_plan {
 public:
  using lanes = detail::native_lanes<T>;

  /// n >= 1 whose prime factors are all <= 13 (supported(n)); throws invalid_argument otherwise.
  explicit batch_plan(std::size_t n) : m_n(n) {
    // Sizes first, before any work: the twiddles below take O(n) time and memory.
    (void)checked::extent(n, "fft::batch_plan", "size n");
    const std::size_t len = checked::elements(n, lanes::width, "fft::batch_plan", "size n times the lane width");
    posenc::detail::require(supported(n), "fft::batch_plan", "size n must be >= 1 with prime factors <= 13, got ", n);
    checked::allocate("fft::batch_plan", "size n", len, 4 * sizeof(T), [&] {
      m_b = detail::batch<T, typename lanes::type, lanes::width>(n);
      for (auto* b : {&m_re, &m_im, &m_wr, &m_wi}) b->assign(len);
    });
  }

  /// True if a batch_plan of size n can be made (n >= 1, prime factors <= 13).
  [[nodiscard]] static bool supported(std::size_t n) { return detail::batch<T, typename lanes::type, lanes::width>::supported(n); }
  /// Transforms per batch (the SIMD lane count for T).
  [[nodiscard]] static constexpr std::size_t width() noexcept { return lanes::width; }
  [[nodiscard]] std::size_t size() const noexcept { return m_n; }
  /// The plan's own lane-interleaved arrays (n * width() scalars each).
  [[nodiscard]] T* data_re() noexcept { return m_re.data(); }
  [[nodiscard]] T* data_im() noexcept { return m_im.data(); }

  /// Forward transforms of the plan's arrays (data_re() and data_im() may point elsewhere after
  /// the call: the plan swaps its arrays instead of copying the result back).
  void forward() {
    if (m_b.run(m_re.data(), m_im.data(), m_wr.data(), m_wi.data())) {
      std::swap(m_re, m_wr);
      std::swap(m_im, m_wi);
    }
  }
  /// Unnormalised inverse transforms of the plan's arrays (same remark as forward()).
  void inverse() {
    if (m_b.run(m_im.data(), m_re.data(), m_wi.data(), m_wr.data())) {
      std::swap(m_re, m_wr);
      std::swap(m_im, m_wi);
    }
  }
  /// In place on caller arrays of n * width() scalars each (any alignment; a null array throws
  /// invalid_argument naming it).
  void forward(T* re, T* im) {
    detail::require_arrays("fft::batch_plan::forward", re, "re", im, "im");
    m_b.forward(re, im, m_wr.data(), m_wi.data());
  }
  void inverse(T* re, T* im) {
    detail::require_arrays("fft::batch_plan::inverse", re, "re", im, "im");
    m_b.forward(im, re, m_wi.data(), m_wr.data());
  }

  /// Pack up to width() real columns for the half-length real transform: lane l of the plan's
  /// arrays gets z_j = x_{2j} + i x_{2j+1}, x_i = src[l][i * step[l]] for i < len, zeros beyond;
  /// lanes l >= lanes_used are all zero. Requires len <= 2 n.
  void pack_real(const T* const* src, const std::size_t* step, std::size_t lanes_used, std::size_t len) {
    check_real_length("fft::batch_plan::pack_real", len);
    check_columns("fft::batch_plan::pack_real", src, step, lanes_used);
    constexpr std::size_t W = lanes::width;
    T* __restrict zr = m_re.data();
    T* __restrict zi = m_im.data();
    const std::size_t used = std::min(lanes_used, W);
    const T* p[W];
    std::size_t st[W];
    for (std::size_t l = 0; l < W; ++l) {
      p[l] = l < used ? src[l] : nullptr;
      st[l] = l < used ? step[l] : 0;
    }
    // j outer, lanes inner: whole lane packs are written in order (W read streams).
    const std::size_t full = len / 2;
    if (used == W) {
      for (std::size_t j = 0; j < full; ++j)
        for (std::size_t l = 0; l < W; ++l) {
          zr[j * W + l] = p[l][2 * j * st[l]];
          zi[j * W + l] = p[l][(2 * j + 1) * st[l]];
        }
    } else {
      for (std::size_t j = 0; j < full; ++j)
        for (std::size_t l = 0; l < W; ++l) {
          zr[j * W + l] = l < used ? p[l][2 * j * st[l]] : T(0);
          zi[j * W + l] = l < used ? p[l][(2 * j + 1) * st[l]] : T(0);
        }
    }
    for (std::size_t j = full; j < m_n; ++j)
      for (std::size_t l = 0; l < W; ++l) {
        zr[j * W + l] = (l < used && 2 * j < len) ? p[l][2 * j * st[l]] : T(0);
        zi[j * W + l] = T(0);
      }
  }

  /// The inverse of pack_real: dst[l][i * step[l]] = (i even ? re : im)[(i / 2) * width() + l] for
  /// i < len and l < lanes_used (len <= 2 n).
  void unpack_real(T* const* dst, const std::size_t* step, std::size_t lanes_used, std::size_t len) const {
    check_real_length("fft::batch_plan::unpack_real", len);
    check_columns("fft::batch_plan::unpack_real", dst, step, lanes_used);
    constexpr std::size_t W = lanes::width;
    const T* __restrict zr = m_re.data();
    const T* __restrict zi = m_im.data();
    const std::size_t used = std::min(lanes_used, W);
    for (std::size_t j = 0; j < len / 2; ++j)
      for (std::size_t l = 0; l < used; ++l) {
        dst[l][2 * j * step[l]] = zr[j * W + l];
        dst[l][(2 * j + 1) * step[l]] = zi[j * W + l];
      }
    if (len % 2)
      for (std::size_t l = 0; l < used; ++l) dst[l][(len - 1) * step[l]] = zr[(len / 2) * W + l];
  }

  /// In place on the plan's arrays, in every lane: Z'_k = alpha_k Z_k + beta_k conj Z_{(n-k) mod n},
  /// with alpha = (ar, ai), beta = (br, bi) of length n (a real-linear map that couples bins k and
  /// n-k only, e.g. the real-input split, a spectral product and the merge composed).
  void conj_pair_map(const T* ar, const T* ai, const T* br, const T* bi) {
    using V = typename lanes::type;
    constexpr std::size_t W = lanes::width;
    T* zr = m_re.data();
    T* zi = m_im.data();
    auto self = [&](std::size_t k) {
      const V ur = detail::lanes_load<V>(zr + k * W), ui = detail::lanes_load<V>(zi + k * W);
      detail::lanes_store(zr + k * W, ur * ar[k] - ui * ai[k] + ur * br[k] + ui * bi[k]);
      detail::lanes_store(zi + k * W, ui * ar[k] + ur * ai[k] - ui * br[k] + ur * bi[k]);
    };
    self(0);
    if (m_n % 2 == 0 && m_n >= 2) self(m_n / 2);
    for (std::size_t k = 1; 2 * k < m_n; ++k) {
      const std::size_t kk = m_n - k;
      const V ur = detail::lanes_load<V>(zr + k * W), ui = detail::lanes_load<V>(zi + k * W);
      const V vr = detail::lanes_load<V>(zr + kk * W), vi = detail::lanes_load<V>(zi + kk * W);
      detail::lanes_store(zr + k * W, ur * ar[k] - ui * ai[k] + vr * br[k] + vi * bi[k]);
      detail::lanes_store(zi + k * W, ui * ar[k] + ur * ai[k] - vi * br[k] + vr * bi[k]);
      detail::lanes_store(zr + kk * W, vr * ar[kk] - vi * ai[kk] + ur * br[kk] + ui * bi[kk]);
      detail::lanes_store(zi + kk * W, vi * ar[kk] + vr * ai[kk] - ui * br[kk] + ur * bi[kk]);
    }
  }

 private:
  // A real column of len values packs into ceil(len / 2) complex points: at most n of them.
  void check_real_length(const char* where, std::size_t len) const {
    posenc::detail::require(len <= 2 * m_n, where, "len must be <= 2 n = ", 2 * m_n, " (two reals per point), got ", len);
  }
  /// pack_real / unpack_real: the column and step arrays of the lanes used must not be null.
  template <class P>
  static void check_columns(const char* where, const P* cols, const std::size_t* step, std::size_t lanes_used) {
    if (lanes_used == 0) return;
    detail::require_arrays(where, cols, "columns (src/dst)", step, "step");
    for (std::size_t l = 0; l < std::min(lanes_used, lanes::width); ++l)
      posenc::detail::require(cols[l] != nullptr, where, "columns (src/dst)[", l, "]: expected a non-null column, got null");
  }
  std::size_t m_n;
  detail::batch<T, typename lanes::type, lanes::width> m_b;
  detail::aligned_buffer<T> m_re, m_im, m_wr, m_wi;
};

/// Real-input transform of size n >= 1: forward maps n reals to the n/2+1 non-redundant bins,
/// inverse maps n/2+1 bins (Hermitian spectrum) to n reals, unnormalised (inverse(forward(x)) = n x).
/// Even n runs a complex transform of size n/2; odd n a complex transform of size n.
/// Thread safety: one per thread (forward/inverse write the plan's buffers; docs/thread-safety.md).
template <std::floating_point T>
class real_plan {
 public:
  explicit real_plan(std::size_t n) : m_n(n), m_fft(n % 2 == 0 ? n / 2 : n) {
    const std::size_t h = n / 2;
    const std::size_t len = m_fft.size();
    m_zr.assign(len, T(0));
    m_zi.assign(len, T(0));
    if (n % 2 == 0) {
      m_wr.resize(h + 1);
      m_wi.resize(h + 1);
      for (std::size_t k = 0; k <= h; ++k) unit_root(k, n, m_wr[k], m_wi[k]);
      m_xr.assign(h + 1, T(0));
      m_xi.assign(h + 1, T(0));
    }
  }

  [[nodiscard]] std::size_t size() const noexcept { return m_n; }
  [[nodiscard]] std::size_t bins() const noexcept { return m_n / 2 + 1; }

  /// out[0 .. n/2] = forward DFT of in[0 .. n) (a null array throws invalid_argument naming it;
  /// a NaN or Inf element gives NaN/Inf bins, as IEEE arithmetic does).
  void forward(const T* in, std::complex<T>* out) {
    detail::require_arrays("fft::real_plan::forward", in, "in", out, "out");
    const std::size_t n = m_n;
    if (n % 2 == 0) {
      const std::size_t h = n / 2;
      for (std::size_t j = 0; j < h; ++j) {
        m_zr[j] = in[2 * j];
        m_zi[j] = in[2 * j + 1];
      }
      m_fft.forward(m_zr.data(), m_zi.data());
      split_half_spectrum(h, m_zr.data(), m_zi.data(), m_wr.data(), m_wi.data(), m_xr.data(), m_xi.data());
      for (std::size_t k = 0; k <= h; ++k) out[k] = std::complex<T>(m_xr[k], m_xi[k]);
    } else {
      for (std::size_t j = 0; j < n; ++j) {
        m_zr[j] = in[j];
        m_zi[j] = T(0);
      }
      m_fft.forward(m_zr.data(), m_zi.data());
      for (std::size_t k = 0; k <= n / 2; ++k) out[k] = std::complex<T>(m_zr[k], m_zi[k]);
    }
  }

  /// out[0 .. n) = unnormalised inverse DFT of the Hermitian spectrum whose first n/2+1 bins are in.
  /// The imaginary parts of in[0] (and of in[n/2] for even n) are ignored.
  void inverse(const std::complex<T>* in, T* out) {
    detail::require_arrays("fft::real_plan::inverse", in, "in", out, "out");
    const std::size_t n = m_n;
    if (n % 2 == 0) {
      const std::size_t h = n / 2;
      for (std::size_t k = 0; k <= h; ++k) {
        m_xr[k] = in[k].real();
        m_xi[k] = (k == 0 || k == h) ? T(0) : in[k].imag();
      }
      merge_half_spectrum(h, m_xr.data(), m_xi.data(), m_wr.data(), m_wi.data(), m_zr.data(), m_zi.data());
      m_fft.inverse(m_zr.data(), m_zi.data());
      for (std::size_t j = 0; j < h; ++j) {
        out[2 * j] = m_zr[j];
        out[2 * j + 1] = m_zi[j];
      }
    } else {
      m_zr[0] = in[0].real();
      m_zi[0] = T(0);
      for (std::size_t k = 1; k <= n / 2; ++k) {
        m_zr[k] = in[k].real();
        m_zi[k] = in[k].imag();
        m_zr[n - k] = in[k].real();
        m_zi[n - k] = -in[k].imag();
      }
      m_fft.inverse(m_zr.data(), m_zi.data());
      for (std::size_t j = 0; j < n; ++j) out[j] = m_zr[j];
    }
  }

 private:
  std::size_t m_n;
  plan<T> m_fft;
  std::vector<T> m_zr, m_zi, m_wr, m_wi, m_xr, m_xi;
};

}  // namespace posenc::fft
