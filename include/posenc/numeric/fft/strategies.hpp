// SPDX-License-Identifier: MIT
// The four ways a plan of size n runs its transform, one type each, all with the same face:
// made for n (validated by the plan), run(re, im) in place on split arrays (the forward
// transform; the inverse is the forward one with re and im swapped), and factors(), the radices
// the plan reports:
//   stockham_strategy   one Stockham pass sequence (prime factors <= 13);
//   two_pass_strategy   n = n1 n2 as two passes of lane-pack transforms (detail::two_pass);
//   four_step_strategy  n = n1 n2 by Bailey's four-step algorithm (rows by two sub-plans);
//   bluestein_strategy  Bluestein's chirp-z algorithm (a prime factor > 13; one fast-size sub-plan).
// Each owns its twiddles and work buffers, so run() does not allocate. plan.hpp chooses one.
// Part of <posenc/numeric/fft.hpp>.
#pragma once

#include <algorithm>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include <posenc/numeric/fft/buffer.hpp>
#include <posenc/numeric/fft/common.hpp>
#include <posenc/numeric/fft/lanes.hpp>
#include <posenc/numeric/fft/stockham.hpp>
#include <posenc/numeric/fft/two_pass.hpp>
#include <posenc/numeric/real_spectrum.hpp>

namespace posenc::fft {

template <std::floating_point T>
class plan;

namespace detail {

/// One Stockham pass sequence of size n, ping-ponging with a work array of n.
template <class T>
class stockham_strategy {
 public:
  stockham_strategy() = default;
  /// radices: stockham_radices(n) (complete: n has no prime factor > 13).
  stockham_strategy(std::size_t n, const std::vector<unsigned>& radices)
      : m_st(n, radices), m_wr(n, T(0)), m_wi(n, T(0)) {}

  void run(T* re, T* im) {
    if (m_st.template run<T, 1>(re, im, m_wr.data(), m_wi.data())) {
      std::copy(m_wr.begin(), m_wr.end(), re);
      std::copy(m_wi.begin(), m_wi.end(), im);
    }
  }
  [[nodiscard]] const std::vector<unsigned>& factors() const noexcept { return m_st.factors; }

 private:
  stockham<T> m_st;
  std::vector<T> m_wr, m_wi;  // ping-pong work array
};

/// n = n1 n2 (two_pass<T, V, W>::split(n)) as two passes of W-lane transforms.
template <class T, class V, std::size_t W>
class two_pass_strategy {
 public:
  two_pass_strategy(std::size_t n1, std::size_t n2) : m_tp(n1, n2), m_wr(n1 * n2, T(0)), m_wi(n1 * n2, T(0)) {
    stockham_radices(n1, m_factors);
    stockham_radices(n2, m_factors);
  }

  void run(T* re, T* im) { m_tp.forward(re, im, m_wr.data(), m_wi.data()); }
  /// The radices of n1, then those of n2.
  [[nodiscard]] const std::vector<unsigned>& factors() const noexcept { return m_factors; }

 private:
  two_pass<T, V, W> m_tp;
  std::vector<T> m_wr, m_wi;  // the n-scalar work array between the passes
  std::vector<unsigned> m_factors;
};

/// Four-step (Bailey) for large sizes, so that every pass works on L1/L2-resident rows instead of
/// streaming the whole array at power-of-two strides: n = n1 n2 (n1 the largest divisor
/// <= sqrt(n)), x viewed as [j1][j2];
/// X[k1 + n1 k2] = sum_j2 w_n2^{j2 k2} w_n^{j2 k1} sum_j1 w_n1^{j1 k1} x[j1][j2].
template <class T>
class four_step_strategy {
 public:
  explicit four_step_strategy(std::size_t n)
      : m_n(n), m_n1(row_size(n)), m_row1(std::in_place, m_n1), m_row2(std::in_place, n / m_n1) {
    const std::size_t n1 = m_n1, n2 = n / n1;  // n2 >= n1
    m_twr.resize(n);
    m_twi.resize(n);
    for (std::size_t j2 = 0; j2 < n2; ++j2)
      for (std::size_t k1 = 0; k1 < n1; ++k1) unit_root(std::uint64_t(j2) * k1, n, m_twr[j2 * n1 + k1], m_twi[j2 * n1 + k1]);
    m_wr.assign(n, T(0));
    m_wi.assign(n, T(0));
    m_br.assign(n, T(0));
    m_bi.assign(n, T(0));
  }

  void run(T* re, T* im) {
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
  /// None: the rows are the sub-plans' business.
  [[nodiscard]] const std::vector<unsigned>& factors() const noexcept { return m_none; }

 private:
  static constexpr std::size_t tile = 16;

  /// n1: the largest divisor of n that is <= sqrt(n).
  static std::size_t row_size(std::size_t n) {
    std::size_t n1 = 1;
    for (std::size_t d = 1; d * d <= n; ++d)
      if (n % d == 0) n1 = d;
    return n1;
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

  std::size_t m_n, m_n1;
  indirect<plan<T>> m_row1, m_row2;  // the row transforms, sizes n1 and n / n1
  std::vector<T> m_twr, m_twi;       // w_n^{j2 k1}, layout [j2][k1]
  std::vector<T> m_wr, m_wi, m_br, m_bi;  // the two work arrays of n
  std::vector<unsigned> m_none;
};

/// Bluestein: X_k = c_k sum_j (x_j c_j) conj(c_{k-j}), c_k = exp(-i pi k^2 / n), as a cyclic
/// convolution of length m = next_fast_size(2n - 1) computed with a plan of size m.
template <class T>
class bluestein_strategy {
 public:
  explicit bluestein_strategy(std::size_t n) : m_n(n), m_sub(std::in_place, next_fast_size(2 * n - 1)) {
    const std::size_t m = m_sub->size();
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

  void run(T* re, T* im) {
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
  /// None: the convolution's radices are the sub-plan's business.
  [[nodiscard]] const std::vector<unsigned>& factors() const noexcept { return m_none; }

 private:
  std::size_t m_n;
  indirect<plan<T>> m_sub;                // the fast-size plan of the convolution
  std::vector<T> m_cr, m_ci, m_fr, m_fi;  // the chirp, and the filter spectrum (scaled by 1/m)
  std::vector<T> m_wr, m_wi;              // the work array of m
  std::vector<unsigned> m_none;
};

}  // namespace detail

}  // namespace posenc::fft
