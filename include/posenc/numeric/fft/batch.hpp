// SPDX-License-Identifier: MIT
// Batched transforms: `batch_plan`, width() complex FFTs of one size at once, one per SIMD lane,
// on the engine `detail::batch` (one Stockham pass sequence over a lane-interleaved array).
// Part of <posenc/numeric/fft.hpp>.
#pragma once

#include <algorithm>
#include <concepts>
#include <cstddef>
#include <utility>
#include <vector>

#include <posenc/core/checked.hpp>
#include <posenc/core/error.hpp>
#include <posenc/numeric/fft/buffer.hpp>
#include <posenc/numeric/fft/common.hpp>
#include <posenc/numeric/fft/lanes.hpp>
#include <posenc/numeric/fft/stockham.hpp>

namespace posenc::fft {

namespace detail {

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

}  // namespace posenc::fft
