// SPDX-License-Identifier: MIT
// `real_plan`: the real-input transform (r2c / c2r) of size n on a complex plan of size n/2 (even
// n) or n (odd n). Part of <posenc/numeric/fft.hpp>.
#pragma once

#include <complex>
#include <concepts>
#include <cstddef>
#include <vector>

#include <posenc/numeric/fft/common.hpp>
#include <posenc/numeric/fft/plan.hpp>
#include <posenc/numeric/real_spectrum.hpp>

namespace posenc::fft {

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
