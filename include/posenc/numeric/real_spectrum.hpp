// SPDX-License-Identifier: MIT
// The pieces of a real-input FFT that other transforms reuse (posenc/numeric/fft.hpp's real_plan,
// the Toeplitz/circulant products in posenc/toeplitz/): roots of unity rounded once from long
// double, and the split/merge between the n/2 + 1 bins of a real length-n signal and the
// half-length complex transform of z_j = x_{2j} + i x_{2j+1}. Arrays are split (re[], im[]).
// Conventions as in fft.hpp: forward uses exp(-2 pi i j k / n), transforms are unnormalised.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <numbers>

#include <posenc/core/checked.hpp>
#include <posenc/core/error.hpp>

namespace posenc::fft {

namespace detail {
/// The arguments of split_half_spectrum / merge_half_spectrum: h >= 1 (a real signal of even
/// length n = 2h >= 2), h <= checked::max_extent (the loops run to h inclusive: h = SIZE_MAX
/// never ended) and no null array; invalid_argument / size_error naming the argument.
template <class T>
void check_half_spectrum(const char* where, std::size_t h, const T* const (&arrays)[6], const char* const (&names)[6]) {
  posenc::detail::require(h >= 1, where, "h: expected the half length h >= 1 (n = 2h >= 2), got h = 0");
  (void)checked::extent(h, where, "h (half length)");
  for (std::size_t a = 0; a < 6; ++a)
    posenc::detail::require(arrays[a] != nullptr, where, names[a], ": expected a non-null array, got null");
}
}  // namespace detail

/// (re, im) = exp(-2 pi i num / den), computed in long double and rounded once to T; num is
/// reduced modulo den first, so unit_root(num + den, den) == unit_root(num, den) bit for bit.
/// den must be > 0 (invalid_argument naming den: num % 0 was a division by zero).
template <class T>
inline void unit_root(std::uint64_t num, std::uint64_t den, T& re, T& im) {
  posenc::detail::require(den >= 1, "fft::unit_root", "den: expected a denominator >= 1, got 0");
  num %= den;
  const long double a = -2.0L * std::numbers::pi_v<long double> * static_cast<long double>(num) /
                        static_cast<long double>(den);
  re = static_cast<T>(std::cos(a));
  im = static_cast<T>(std::sin(a));
}

/// The n/2 + 1 = h + 1 non-redundant bins X_k of a real signal x of even length n = 2h, from the
/// length-h complex transform Z of z_j = x_{2j} + i x_{2j+1}:
/// X_k = E_k + w^k O_k, E_k = (Z_k + conj Z_{h-k})/2, O_k = -i (Z_k - conj Z_{h-k})/2, k = 0..h,
/// with (wr[k], wi[k]) = w^k = unit_root(k, n) for k = 0..h. Reads zr/zi[0..h-1], writes
/// xr/xi[0..h]; the outputs must not alias the inputs (a NaN/Inf input gives NaN/Inf bins, as
/// IEEE arithmetic does). h >= 1 and non-null arrays
/// (invalid_argument), h <= checked::max_extent (size_error).
template <class T>
inline void split_half_spectrum(std::size_t h, const T* zr, const T* zi, const T* wr, const T* wi, T* xr, T* xi) {
  detail::check_half_spectrum<T>("fft::split_half_spectrum", h, {zr, zi, wr, wi, xr, xi}, {"zr", "zi", "wr", "wi", "xr", "xi"});
  for (std::size_t k = 0; k <= h; ++k) {
    const std::size_t a = (k == h) ? 0 : k;
    const std::size_t b = (k == 0) ? 0 : h - k;
    const T ar = zr[a], ai = zi[a], br = zr[b], bi = -zi[b];
    const T er = T(0.5) * (ar + br), ei = T(0.5) * (ai + bi);
    const T orr = T(0.5) * (ai - bi), oi = T(-0.5) * (ar - br);
    xr[k] = er + wr[k] * orr - wi[k] * oi;
    xi[k] = ei + wr[k] * oi + wi[k] * orr;
  }
}

/// The inverse of split_half_spectrum without its 1/2 factors: from the h + 1 bins X of a
/// Hermitian spectrum of length n = 2h, the h values
/// Z_k = (X_k + conj X_{h-k}) + i (X_k - conj X_{h-k}) conj(w^k), k < h,
/// whose unnormalised length-h inverse transform is n z_j = n (x_{2j} + i x_{2j+1}), x being the
/// real signal with spectrum X (so the unnormalised real inverse, n x, is read off interleaved).
/// Reads xr/xi[0..h], writes zr/zi[0..h-1]; the outputs must not alias the inputs. Arguments as
/// split_half_spectrum's.
template <class T>
inline void merge_half_spectrum(std::size_t h, const T* xr, const T* xi, const T* wr, const T* wi, T* zr, T* zi) {
  detail::check_half_spectrum<T>("fft::merge_half_spectrum", h, {xr, xi, wr, wi, zr, zi}, {"xr", "xi", "wr", "wi", "zr", "zi"});
  for (std::size_t k = 0; k < h; ++k) {
    const T ar = xr[k], ai = xi[k], br = xr[h - k], bi = -xi[h - k];
    const T er = ar + br, ei = ai + bi;
    const T dr = ar - br, di = ai - bi;
    const T orr = dr * wr[k] + di * wi[k], oi = di * wr[k] - dr * wi[k];  // d * conj(w)
    zr[k] = er - oi;
    zi[k] = ei + orr;
  }
}

}  // namespace posenc::fft
