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
#include <memory>
#include <numbers>
#include <span>
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
template <class T>
inline void bfly2(T* ar, T* ai) {
  const T r = ar[0] - ar[1], i = ai[0] - ai[1];
  ar[0] += ar[1];
  ai[0] += ai[1];
  ar[1] = r;
  ai[1] = i;
}

template <class T>
inline void bfly3(T* ar, T* ai) {
  constexpr T s = static_cast<T>(0.866025403784438646763723170752936183L);  // sin(2 pi / 3)
  const T t1r = ar[1] + ar[2], t1i = ai[1] + ai[2];
  const T t2r = ar[1] - ar[2], t2i = ai[1] - ai[2];
  const T mr = ar[0] - T(0.5) * t1r, mi = ai[0] - T(0.5) * t1i;
  ar[0] += t1r;
  ai[0] += t1i;
  ar[1] = mr + s * t2i;
  ai[1] = mi - s * t2r;
  ar[2] = mr - s * t2i;
  ai[2] = mi + s * t2r;
}

template <class T>
inline void bfly4(T* ar, T* ai) {
  const T t0r = ar[0] + ar[2], t0i = ai[0] + ai[2];
  const T t1r = ar[0] - ar[2], t1i = ai[0] - ai[2];
  const T t2r = ar[1] + ar[3], t2i = ai[1] + ai[3];
  const T t3r = ar[1] - ar[3], t3i = ai[1] - ai[3];
  ar[0] = t0r + t2r;
  ai[0] = t0i + t2i;
  ar[2] = t0r - t2r;
  ai[2] = t0i - t2i;
  ar[1] = t1r + t3i;  // t1 - i t3
  ai[1] = t1i - t3r;
  ar[3] = t1r - t3i;  // t1 + i t3
  ai[3] = t1i + t3r;
}

template <class T>
inline void bfly5(T* ar, T* ai) {
  constexpr T c1 = static_cast<T>(0.309016994374947424102293417182819059L);   // cos(2 pi / 5)
  constexpr T c2 = static_cast<T>(-0.809016994374947424102293417182819059L);  // cos(4 pi / 5)
  constexpr T s1 = static_cast<T>(0.951056516295153572116439333379382143L);   // sin(2 pi / 5)
  constexpr T s2 = static_cast<T>(0.587785252292473129168705954639072769L);   // sin(4 pi / 5)
  const T t1r = ar[1] + ar[4], t1i = ai[1] + ai[4];
  const T t2r = ar[2] + ar[3], t2i = ai[2] + ai[3];
  const T t3r = ar[1] - ar[4], t3i = ai[1] - ai[4];
  const T t4r = ar[2] - ar[3], t4i = ai[2] - ai[3];
  const T m1r = ar[0] + c1 * t1r + c2 * t2r, m1i = ai[0] + c1 * t1i + c2 * t2i;
  const T m2r = ar[0] + c2 * t1r + c1 * t2r, m2i = ai[0] + c2 * t1i + c1 * t2i;
  const T n1r = s1 * t3r + s2 * t4r, n1i = s1 * t3i + s2 * t4i;
  const T n2r = s2 * t3r - s1 * t4r, n2i = s2 * t3i - s1 * t4i;
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
template <class T>
inline void bfly8(T* ar, T* ai) {
  constexpr T h = static_cast<T>(0.707106781186547524400844362104849039L);  // 1/sqrt(2)
  T er[4] = {ar[0], ar[2], ar[4], ar[6]}, ei[4] = {ai[0], ai[2], ai[4], ai[6]};
  T orr[4] = {ar[1], ar[3], ar[5], ar[7]}, oi[4] = {ai[1], ai[3], ai[5], ai[7]};
  bfly4(er, ei);
  bfly4(orr, oi);
  // o_k <- w8^k o_k
  const T o1r = h * (orr[1] + oi[1]), o1i = h * (oi[1] - orr[1]);
  const T o2r = oi[2], o2i = -orr[2];
  const T o3r = h * (oi[3] - orr[3]), o3i = -h * (orr[3] + oi[3]);
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

template <unsigned R, class T>
inline void bfly(T* ar, T* ai) {
  if constexpr (R == 2) bfly2(ar, ai);
  else if constexpr (R == 3) bfly3(ar, ai);
  else if constexpr (R == 4) bfly4(ar, ai);
  else if constexpr (R == 5) bfly5(ar, ai);
  else bfly8(ar, ai);
}

/// One Stockham stage of radix R (Govindaraju et al. 2008 indexing): for j = b*ns + t,
/// load in[j + r*N/R], twiddle by exp(-2 pi i r t / (ns R)), DFT_R, store out[b*ns*R + t + r*ns].
template <unsigned R, class T>
inline void stage_fixed(std::size_t n, std::size_t ns, const T* __restrict ir, const T* __restrict ii,
                        T* __restrict orr, T* __restrict oi, const T* __restrict twr, const T* __restrict twi) {
  const std::size_t q = n / R;
  if (ns == 1) {
    POSENC_FFT_IVDEP
    for (std::size_t b = 0; b < q; ++b) {
      T ar[R], ai[R];
      for (unsigned r = 0; r < R; ++r) {
        ar[r] = ir[b + r * q];
        ai[r] = ii[b + r * q];
      }
      bfly<R>(ar, ai);
      for (unsigned r = 0; r < R; ++r) {
        orr[b * R + r] = ar[r];
        oi[b * R + r] = ai[r];
      }
    }
    return;
  }
  const std::size_t nb = q / ns;
  for (std::size_t b = 0; b < nb; ++b) {
    const T* __restrict ir0 = ir + b * ns;
    const T* __restrict ii0 = ii + b * ns;
    T* __restrict or0 = orr + b * ns * R;
    T* __restrict oi0 = oi + b * ns * R;
    POSENC_FFT_IVDEP
    for (std::size_t t = 0; t < ns; ++t) {
      T ar[R], ai[R];
      ar[0] = ir0[t];
      ai[0] = ii0[t];
      for (unsigned r = 1; r < R; ++r) {
        const T xr = ir0[t + r * q], xi = ii0[t + r * q];
        const T wr = twr[(r - 1) * ns + t], wi = twi[(r - 1) * ns + t];
        ar[r] = xr * wr - xi * wi;
        ai[r] = xr * wi + xi * wr;
      }
      bfly<R>(ar, ai);
      for (unsigned r = 0; r < R; ++r) {
        or0[t + r * ns] = ar[r];
        oi0[t + r * ns] = ai[r];
      }
    }
  }
}

/// Generic odd radix R <= max_generic_radix: an O(R^2) DFT per butterfly with tabulated roots.
template <class T>
inline void stage_generic(unsigned R, std::size_t n, std::size_t ns, const T* ir, const T* ii, T* orr, T* oi,
                          const T* twr, const T* twi, const T* cr, const T* ci) {
  const std::size_t q = n / R;
  const std::size_t nb = q / ns;
  T ar[max_generic_radix], ai[max_generic_radix];
  for (std::size_t b = 0; b < nb; ++b) {
    for (std::size_t t = 0; t < ns; ++t) {
      const std::size_t j = b * ns + t;
      ar[0] = ir[j];
      ai[0] = ii[j];
      for (unsigned r = 1; r < R; ++r) {
        const T xr = ir[j + r * q], xi = ii[j + r * q];
        const T wr = twr[(r - 1) * ns + t], wi = twi[(r - 1) * ns + t];
        ar[r] = xr * wr - xi * wi;
        ai[r] = xr * wi + xi * wr;
      }
      for (unsigned k = 0; k < R; ++k) {
        T sr = 0, si = 0;
        for (unsigned r = 0; r < R; ++r) {
          const unsigned e = (r * k) % R;
          sr += ar[r] * cr[e] - ai[r] * ci[e];
          si += ar[r] * ci[e] + ai[r] * cr[e];
        }
        orr[b * ns * R + t + k * ns] = sr;
        oi[b * ns * R + t + k * ns] = si;
      }
    }
  }
}

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
  void init(std::size_t n) {
    std::size_t rest = n;
    std::vector<unsigned> radices;
    // Powers of two: radix 8 as far as possible (fewest passes), then 4 and 2 (a leftover 2 with
    // an 8 available becomes 4 x 4).
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
    if (rest != 1) {
      init_bluestein();
      return;
    }
    // Four-step pays off when the rows are dominated by radix-8/4 passes: measured on powers of
    // two and 2^a * 3 or 5 with 2^a >= 1024; sizes rich in 3s and 5s (6000, 30000) run faster as
    // one Stockham pass sequence.
    if (n >= four_step_min && (n & (~n + 1)) >= 1024) {
      init_four_step();
      return;
    }
    std::size_t ns = 1;
    for (unsigned r : radices) {
      detail::stage s{r, ns, m_twr.size(), m_genr.size()};
      for (unsigned k = 1; k < r; ++k)
        for (std::size_t t = 0; t < ns; ++t) {
          T wr, wi;
          unit_root(std::uint64_t(k) * t, std::uint64_t(ns) * r, wr, wi);
          m_twr.push_back(wr);
          m_twi.push_back(wi);
        }
      if (r != 2 && r != 3 && r != 4 && r != 5 && r != 8)
        for (unsigned e = 0; e < r; ++e) {
          T wr, wi;
          unit_root(e, r, wr, wi);
          m_genr.push_back(wr);
          m_geni.push_back(wi);
        }
      m_stages.push_back(s);
      m_factors.push_back(r);
      ns *= r;
    }
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
  /// decomposition, or n = 1).
  [[nodiscard]] const std::vector<unsigned>& factors() const noexcept { return m_factors; }
  [[nodiscard]] bool uses_bluestein() const noexcept { return m_sub != nullptr; }
  /// True for n >= 4096 without a prime factor > 13 and with a power-of-two factor >= 1024:
  /// n = n1 n2 by Bailey's four-step algorithm.
  [[nodiscard]] bool uses_four_step() const noexcept { return m_row1 != nullptr; }

  /// In-place forward transform of the split array (re[0..n), im[0..n)).
  void forward(T* re, T* im) { run(re, im); }
  /// In-place unnormalised inverse transform (sign +1): the forward transform with re and im swapped.
  void inverse(T* re, T* im) { run(im, re); }

  /// Interleaved complex arrays (in == out allowed). Copies through the plan's split buffers.
  void forward(const std::complex<T>* in, std::complex<T>* out) { interleaved(in, out, false); }
  void inverse(const std::complex<T>* in, std::complex<T>* out) { interleaved(in, out, true); }

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
    T* sr = re;
    T* si = im;
    T* dr = m_wr.data();
    T* di = m_wi.data();
    for (const auto& s : m_stages) {
      const T* twr = m_twr.data() + s.tw;
      const T* twi = m_twi.data() + s.tw;
      switch (s.radix) {
        case 2: detail::stage_fixed<2>(m_n, s.ns, sr, si, dr, di, twr, twi); break;
        case 3: detail::stage_fixed<3>(m_n, s.ns, sr, si, dr, di, twr, twi); break;
        case 4: detail::stage_fixed<4>(m_n, s.ns, sr, si, dr, di, twr, twi); break;
        case 5: detail::stage_fixed<5>(m_n, s.ns, sr, si, dr, di, twr, twi); break;
        case 8: detail::stage_fixed<8>(m_n, s.ns, sr, si, dr, di, twr, twi); break;
        default:
          detail::stage_generic(s.radix, m_n, s.ns, sr, si, dr, di, twr, twi, m_genr.data() + s.gen,
                                m_geni.data() + s.gen);
      }
      std::swap(sr, dr);
      std::swap(si, di);
    }
    if (sr != re) {
      std::copy(sr, sr + m_n, re);
      std::copy(si, si + m_n, im);
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
  std::vector<detail::stage> m_stages;
  std::vector<unsigned> m_factors;
  std::vector<T> m_twr, m_twi, m_genr, m_geni;
  std::vector<T> m_wr, m_wi;  // ping-pong work buffer (Stockham) or Bluestein work array
  std::vector<T> m_ur, m_ui;  // split copies for the interleaved interface
  std::unique_ptr<plan> m_sub;
  std::unique_ptr<plan> m_row1, m_row2;  // four-step row transforms (sizes n1, n / n1)
  std::size_t m_n1 = 0;
  std::vector<T> m_br, m_bi;  // four-step second work buffer
  std::vector<T> m_cr, m_ci, m_fr, m_fi;  // Bluestein chirp and filter spectrum (scaled by 1/m)
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

  /// out[0 .. n/2] = forward DFT of in[0 .. n).
  void forward(const T* in, std::complex<T>* out) {
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
