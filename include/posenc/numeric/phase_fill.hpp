// SPDX-License-Identifier: MIT
// Phase fills: rows of unit complex numbers e^{i x w_k} (their sines and cosines) over a grid of
// positions x, formed from exact phases (numeric::sincos_angle) by angle addition. The one home of
// the anchor x offset scheme that the sinusoidal tables (sinusoidal/sinusoidal.hpp), the rotary
// tables (rotary/table.hpp) and the rotary application's runs of positions (rotary/coefficients.hpp)
// share: a row at position a + b is the product of an anchor e^{i a w} and an offset e^{i b w},
// so a table of n rows costs O(sqrt(n)) phase evaluations, and no error accumulates along rows.
//  - angle_sum: (sin, cos)(a + b) from (sin, cos) of a and of b;
//  - phase_row / phase_rows: e^{i (x0 + r dx) w_k} for r < rows, each row exact or by doubling;
//  - anchor_phases: the anchors e^{i (x0 + q block step) w_k} as T2[q / C] * T1[q % C] of two
//    small phase_rows;
//  - round_certified / certified_as: a float rounding decided by an error bound (the float
//    tables' certificate), and its check when an entry is looked at again;
//  - certified_angle_sum: the float tables' hot loop, rows a + b (and a - b) of sines and cosines
//    by angle addition in double, each float rounding certified (AVX2 and FMA where the processor
//    has them, else a portable loop).
// They are building blocks on caller-sized buffers (posenc::numeric::detail: the tables and the
// rotary application validate their inputs first). Each routine does the arithmetic the tables
// did in their own copies (the same operations in the same order), so the tables are bitwise
// what they were (tests/core/phase_fill.test.cpp checks the routines against exact phases;
// tests/sinusoidal/table.test.cpp and tests/rotary/table.test.cpp the tables).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <span>
#include <vector>

#include <posenc/numeric/phase.hpp>

#if (defined(__x86_64__) || defined(_M_X64)) && (defined(__GNUC__) || defined(__clang__)) && !defined(__CUDACC__) && \
    !defined(POSENC_NO_X86_KERNELS)
#define POSENC_PHASE_FILL_X86 1
#include <immintrin.h>
#endif

namespace posenc::numeric::detail {

/// (sin, cos)(a + b) = (sa cb + ca sb, ca cb - sa sb) from (sin, cos) of a and of b: each result
/// two products and one sum in W (a product of unit complex numbers, one rounding per operation).
template <class W>
inline void angle_sum(W sa, W ca, W sb, W cb, W& s, W& c) {
  s = sa * cb + ca * sb;
  c = ca * cb - sa * sb;
}

/// (sin, cos)(x w_k) for every frequency: s[k], c[k], each from the long double phase x * w[k]
/// (numeric::sincos_angle).
template <class W>
inline void phase_row(wide x, std::span<const wide> w, W* s, W* c) {
  for (std::size_t k = 0; k < w.size(); ++k) sincos_angle(x * w[k], s[k], c[k]);
}

/// A rows x m table of e^{i (x0 + r dx) w_k}, r < rows, as sine and cosine arrays (row r at r m).
///  - exact: every row from its phase (sincos_angle);
///  - doubling: row 0 and the rows 2^j exact, row r = row (r - 2^j) * e^{i 2^j dx w} (2^j the
///    highest bit of r): at most log2(rows) rounded products from exact values (absolute error
///    below 2^-48 in double for rows <= 64 from e^{i x0 w} e^{i r dx w}, tests/core/
///    phase_fill.test.cpp), log2(rows) + 1 phase evaluations a column.
template <class W>
struct phase_rows {
  std::vector<W> s, c;
  std::size_t m = 0;

  void exact(std::size_t rows, wide x0, wide dx, std::span<const wide> w) {
    resize(rows, w.size());
    for (std::size_t r = 0; r < rows; ++r) phase_row(x0 + static_cast<wide>(r) * dx, w, &s[r * m], &c[r * m]);
  }
  void doubling(std::size_t rows, wide x0, wide dx, std::span<const wide> w) {
    resize(rows, w.size());
    if (rows == 0) return;
    std::vector<W> ps(m), pc(m);
    if (x0 == 0 && !std::signbit(x0)) {  // e^{i 0} = (0, 1): what phase_row gives at x = +0, without m evaluations
      std::fill(s.begin(), s.begin() + static_cast<std::ptrdiff_t>(m), W(0));
      std::fill(c.begin(), c.begin() + static_cast<std::ptrdiff_t>(m), W(1));
    } else {
      phase_row(x0, w, s.data(), c.data());
    }
    for (std::size_t p = 1; p < rows; p *= 2) {
      phase_row(static_cast<wide>(p) * dx, w, ps.data(), pc.data());
      for (std::size_t r = p; r < std::min(rows, 2 * p); ++r) {
        const W* __restrict as = &s[(r - p) * m];
        const W* __restrict ac = &c[(r - p) * m];
        W* __restrict os = &s[r * m];
        W* __restrict oc = &c[r * m];
        for (std::size_t k = 0; k < m; ++k) angle_sum(as[k], ac[k], ps[k], pc[k], os[k], oc[k]);
      }
    }
  }
  void build(bool every_row_exact, std::size_t rows, wide x0, wide dx, std::span<const wide> w) {
    if (every_row_exact)
      exact(rows, x0, dx, w);
    else
      doubling(rows, x0, dx, w);
  }
  [[nodiscard]] const W* sin_row(std::size_t r) const { return s.data() + r * m; }
  [[nodiscard]] const W* cos_row(std::size_t r) const { return c.data() + r * m; }

 private:
  void resize(std::size_t rows, std::size_t m_) {
    m = m_;
    s.resize(rows * m);
    c.resize(rows * m);
  }
};

/// The phases of `count` anchors, anchor q at x0 + q * block * step: e^{i x w_k} =
/// T2[q / C] * T1[q % C] with T1 = e^{i c (block step) w} (C rows from 0) and
/// T2 = e^{i (x0 + e (block C) step) w} (ceil(count / C) rows), so C + count / C phase rows serve
/// count anchors. Each table is exact or by doubling (phase_rows). The step of T2 is
/// step * (block C), formed once in long double (not (step block) C).
template <class W>
struct anchor_phases {
  phase_rows<W> t1, t2;
  std::size_t C = 1;

  anchor_phases(std::size_t count, std::size_t C_, wide x0, wide step, std::size_t block, std::span<const wide> w,
                bool t1_exact, bool t2_exact)
      : C(C_) {
    t1.build(t1_exact, C, 0, step * static_cast<wide>(block), w);
    t2.build(t2_exact, (count + C - 1) / C, x0, step * static_cast<wide>(block * C), w);
  }
  /// Anchor q: s[k], c[k] = (sin, cos) of its phase as T2[q / C] * T1[q % C] in W, rounded to Out.
  template <class Out>
  void get(std::size_t q, Out* __restrict s, Out* __restrict c) const {
    const W* __restrict s2 = t2.sin_row(q / C);
    const W* __restrict c2 = t2.cos_row(q / C);
    const W* __restrict s1 = t1.sin_row(q % C);
    const W* __restrict c1 = t1.cos_row(q % C);
    for (std::size_t k = 0; k < t1.m; ++k) {
      W sk, ck;
      angle_sum(s2[k], c2[k], s1[k], c1[k], sk, ck);
      s[k] = static_cast<Out>(sk);
      c[k] = static_cast<Out>(ck);
    }
  }
};

/// The float rounding of a value known to within e of v, certified: out = float(v - e), and the
/// result is 1 when float(v - e) != float(v + e) (the rounding is then not decided by v), else 0
/// (rounding is monotone, so every value in [v - e, v + e] rounds to out).
inline int round_certified(double v, double e, float& out) {
  const float lo = static_cast<float>(v - e), hi = static_cast<float>(v + e);
  out = lo;
  return static_cast<int>(lo != hi);
}

/// Whether `stored`, written by round_certified from a value v (rounded to T), is certified by a
/// recomputation v2 of v within e: v2's float rounding is decided and is `stored`. The check
/// that a rare undecided entry makes again: comparing with the stored value keeps the
/// certificate sound where v2 differs from v in its last bits (a compiler may contract a product
/// and a sum into a fused multiply-add in one of the two places and not in the other).
template <class T>
inline bool certified_as(double v2, double e, T stored) {
  float r;
  return round_certified(v2, e, r) == 0 && static_cast<T>(r) == stored;
}

/// Rows a + b and a - b of sines and cosines by angle addition in double, each entry's float
/// rounding certified (round_certified: float(v - E) stored, undecided where float(v + E)
/// differs): sin(a +- b) = sa cb +- ca sb, cos(a +- b) = ca cb -+ sa sb for k < m, the error bound
/// pe[k]. Interleaved (Inter): (sin, cos) of pair k at ps[2k], ps[2k + 1] (and ms); otherwise
/// sines at ps[k], cosines at pc[k] (and ms, mc). Pair: also the row a - b. Returns nonzero when
/// some rounding is undecided (the caller decides that row's entries again). The portable loop:
/// the four products shared by the two rows, each sum rounded once.
template <bool Inter, bool Pair>
inline int certified_angle_sum_portable(std::size_t m, const double* __restrict as, const double* __restrict ac,
                                        const double* __restrict bs, const double* __restrict bc,
                                        const double* __restrict pe, float* __restrict ps, float* __restrict pc,
                                        float* __restrict ms, float* __restrict mc) {
  int undecided = 0;
  for (std::size_t k = 0; k < m; ++k) {
    const double p1 = as[k] * bc[k], p2 = ac[k] * bs[k], p3 = ac[k] * bc[k], p4 = as[k] * bs[k];
    const double e = pe[k];
    undecided |= round_certified(p1 + p2, e, Inter ? ps[2 * k] : ps[k]) |
                 round_certified(p3 - p4, e, Inter ? ps[2 * k + 1] : pc[k]);
    if constexpr (Pair)
      undecided |= round_certified(p1 - p2, e, Inter ? ms[2 * k] : ms[k]) |
                   round_certified(p3 + p4, e, Inter ? ms[2 * k + 1] : mc[k]);
  }
  return undecided;
}

#if defined(POSENC_PHASE_FILL_X86)

/// Whether this processor runs certified_angle_sum_x86 (AVX2 and FMA; checked once).
inline bool certified_x86_available() noexcept {
  static const bool ok = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  }();
  return ok;
}

/// certified_angle_sum_portable with AVX2 and FMA, four pairs at a time: each bound v -+ E as
/// (sa cb -+ E) +- ca sb (sines) and (ca cb -+ E) -+ sa sb (cosines), two FMAs, so each bound is
/// one or two roundings (|values| <= 1: within 2^-52 of v -+ E, well inside the 2^-44 the tables'
/// E keeps for roundings); both float roundings of each entry compared by their bits (a +0 / -0
/// pair counts as undecided). Interleaved rows are stored 8 floats (32 bytes) at a time. The
/// remaining m % 4 pairs by the portable loop.
template <bool Inter, bool Pair>
__attribute__((target("avx2,fma"))) inline int certified_angle_sum_x86(
    std::size_t m, const double* __restrict as, const double* __restrict ac, const double* __restrict bs,
    const double* __restrict bc, const double* __restrict pe, float* __restrict ps, float* __restrict pc,
    float* __restrict ms, float* __restrict mc) {
  const std::size_t mv = m - m % 4;
  __m128i acc = _mm_setzero_si128();
  for (std::size_t k = 0; k < mv; k += 4) {
    const __m256d sa = _mm256_loadu_pd(as + k), ca = _mm256_loadu_pd(ac + k), e = _mm256_loadu_pd(pe + k);
    const __m256d sb = _mm256_loadu_pd(bs + k), cb = _mm256_loadu_pd(bc + k);
    const __m256d s_hi = _mm256_fmadd_pd(sa, cb, e), s_lo = _mm256_fmsub_pd(sa, cb, e);
    const __m256d c_hi = _mm256_fmadd_pd(ca, cb, e), c_lo = _mm256_fmsub_pd(ca, cb, e);
    const __m128 ps_lo = _mm256_cvtpd_ps(_mm256_fmadd_pd(ca, sb, s_lo)), ps_hi = _mm256_cvtpd_ps(_mm256_fmadd_pd(ca, sb, s_hi));
    const __m128 pc_lo = _mm256_cvtpd_ps(_mm256_fnmadd_pd(sa, sb, c_lo)), pc_hi = _mm256_cvtpd_ps(_mm256_fnmadd_pd(sa, sb, c_hi));
    acc = _mm_or_si128(acc, _mm_or_si128(_mm_xor_si128(_mm_castps_si128(ps_lo), _mm_castps_si128(ps_hi)),
                                         _mm_xor_si128(_mm_castps_si128(pc_lo), _mm_castps_si128(pc_hi))));
    if constexpr (Inter) {
      _mm256_storeu_ps(ps + 2 * k, _mm256_set_m128(_mm_unpackhi_ps(ps_lo, pc_lo), _mm_unpacklo_ps(ps_lo, pc_lo)));
    } else {
      _mm_storeu_ps(ps + k, ps_lo);
      _mm_storeu_ps(pc + k, pc_lo);
    }
    if constexpr (Pair) {
      const __m128 ms_lo = _mm256_cvtpd_ps(_mm256_fnmadd_pd(ca, sb, s_lo)), ms_hi = _mm256_cvtpd_ps(_mm256_fnmadd_pd(ca, sb, s_hi));
      const __m128 mc_lo = _mm256_cvtpd_ps(_mm256_fmadd_pd(sa, sb, c_lo)), mc_hi = _mm256_cvtpd_ps(_mm256_fmadd_pd(sa, sb, c_hi));
      acc = _mm_or_si128(acc, _mm_or_si128(_mm_xor_si128(_mm_castps_si128(ms_lo), _mm_castps_si128(ms_hi)),
                                           _mm_xor_si128(_mm_castps_si128(mc_lo), _mm_castps_si128(mc_hi))));
      if constexpr (Inter) {
        _mm256_storeu_ps(ms + 2 * k, _mm256_set_m128(_mm_unpackhi_ps(ms_lo, mc_lo), _mm_unpacklo_ps(ms_lo, mc_lo)));
      } else {
        _mm_storeu_ps(ms + k, ms_lo);
        _mm_storeu_ps(mc + k, mc_lo);
      }
    }
  }
  int undecided = _mm_testz_si128(acc, acc) == 0 ? 1 : 0;
  if (mv < m) {
    const std::size_t o = Inter ? 2 * mv : mv;
    undecided |= certified_angle_sum_portable<Inter, Pair>(m - mv, as + mv, ac + mv, bs + mv, bc + mv, pe + mv, ps + o,
                                                           Inter ? pc : pc + mv, Pair ? ms + o : ms,
                                                           (Pair && !Inter) ? mc + mv : mc);
  }
  return undecided;
}
#endif

/// certified_angle_sum_portable, or its AVX2 and FMA loop where the processor has both: always
/// for interleaved rows (their shuffles; bench_sinusoidal: 0.93 against 1.15 ms for 4096 x 512
/// with -march=native), for split rows only where the translation unit is not itself compiled for
/// AVX2 and FMA (the compiler's own vectors of the portable loop are as fast there:
/// bench_rotary_table, 8192 rows, 0.52 against 0.555 ms). The two store the same floats wherever
/// a rounding is decided (the correctly rounded value: the bounds are rigorous either way); an
/// undecided rounding is decided again by the caller.
template <bool Inter, bool Pair>
inline int certified_angle_sum(std::size_t m, const double* as, const double* ac, const double* bs, const double* bc,
                               const double* pe, float* ps, float* pc, float* ms, float* mc) {
#if defined(POSENC_PHASE_FILL_X86)
#if defined(__AVX2__) && defined(__FMA__)
  constexpr bool use_x86 = Inter;
#else
  constexpr bool use_x86 = true;
#endif
  if constexpr (use_x86)
    if (certified_x86_available())
      return certified_angle_sum_x86<Inter, Pair>(m, as, ac, bs, bc, pe, ps, pc, ms, mc);
#endif
  return certified_angle_sum_portable<Inter, Pair>(m, as, ac, bs, bc, pe, ps, pc, ms, mc);
}

}  // namespace posenc::numeric::detail
