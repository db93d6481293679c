// SPDX-License-Identifier: MIT
// The Stockham engine: one pass of radix R on W-lane arrays (fixed radices 2, 3, 4, 5, 8 through
// the butterflies, generic odd radices 7, 11, 13 as an O(R^2) DFT), the choice of radices for a
// size n, and `stockham`, a pass sequence of one size with its twiddles. Part of
// <posenc/numeric/fft.hpp>.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include <posenc/numeric/fft/butterflies.hpp>
#include <posenc/numeric/fft/lanes.hpp>
#include <posenc/numeric/real_spectrum.hpp>

namespace posenc::fft::detail {

/// One pass of a `stockham` sequence: its radix, its place, and where its twiddles are.
struct stage {
  unsigned radix;      // R
  std::size_t ns;      // product of the radices of the previous stages
  std::size_t tw;      // offset of this stage's (R-1)*ns twiddles
  std::size_t gen;     // offset of the R roots of unity (generic radices only)
};

constexpr unsigned max_generic_radix = 13;  // generic odd radices: 7, 11, 13

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

}  // namespace posenc::fft::detail
