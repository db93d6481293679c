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
//    tables' certificate), and its check when an entry is looked at again.
// They are building blocks on caller-sized buffers (posenc::numeric::detail: the tables and the
// rotary application validate their inputs first). Each routine does the arithmetic the tables
// did in their own copies (the same operations in the same order), so the tables are bitwise
// what they were (tests/core/phase_fill.test.cpp checks the routines against exact phases;
// tests/sinusoidal/table.test.cpp and tests/rotary/table.test.cpp the tables).
#pragma once

#include <algorithm>
#include <cstddef>
#include <span>
#include <vector>

#include <posenc/numeric/phase.hpp>

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
    phase_row(x0, w, s.data(), c.data());
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

}  // namespace posenc::numeric::detail
