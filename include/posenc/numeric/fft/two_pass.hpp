// SPDX-License-Identifier: MIT
// The two-pass kernel: one transform of size n = n1 n2 as two passes of lane-pack transforms, so
// every butterfly is a full SIMD operation whatever n is. Part of <posenc/numeric/fft.hpp>.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include <posenc/numeric/fft/buffer.hpp>
#include <posenc/numeric/fft/lanes.hpp>
#include <posenc/numeric/fft/stockham.hpp>
#include <posenc/numeric/real_spectrum.hpp>

namespace posenc::fft::detail {

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
    const T* twr = m_twr.data();
    const T* twi = m_twi.data();
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
          const V cr = lanes_load<V>(twr + (g * n1 + k1) * W), ci = lanes_load<V>(twi + (g * n1 + k1) * W);
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

}  // namespace posenc::fft::detail
