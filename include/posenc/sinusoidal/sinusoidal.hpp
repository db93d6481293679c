// SPDX-License-Identifier: MIT
// The sinusoidal position encoding (Vaswani et al. 2017; FLOATER paper eq. 6, 7, 9): tables in the
// interleaved and [sin | cos] layouts, both frequency conventions, arbitrary real positions, the
// offset rotation M(phi) with PE(t + phi) = M(phi) PE(t), and the two dynamics that generate the
// table (the time-dependent h(tau) of eq. 9 and the autonomous p' = A p), as right-hand sides for
// posenc::ode::integrate.
//
// Accuracy: every entry is the product of at most three unit complex numbers e^{i x w}, each of
// which is computed from an angle formed in long double and reduced modulo 2 pi with a three-part
// Cody-Waite constant; the outer product is taken in double (long double for long double tables),
// the inner one in the table's type (float tables: in double, each entry's float rounding
// certified by an error bound). No error accumulates along positions: a float table is the
// correctly rounded exact-phase value at every position (tests/sinusoidal/table.test.cpp), a
// double table within a few ulp + |x w| 2^-63 (the 64-bit frequency's own precision).
#pragma once

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <string_view>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include <posenc/core/error.hpp>
#include <posenc/core/thread_pool.hpp>
#include <posenc/tensor/table.hpp>
#include <posenc/numeric/phase.hpp>
#include <posenc/numeric/phase_fill.hpp>
#include <posenc/sinusoidal/options.hpp>

namespace posenc::sinusoidal {

namespace detail {

using wide = numeric::wide;

// Promoted to posenc/sinusoidal/options.hpp; the detail names stay for the rotary family.
using sinusoidal::frequencies_wide;

/// The exact-phase sine and cosine (promoted to posenc/numeric/phase.hpp) and the phase fill
/// (posenc/numeric/phase_fill.hpp).
using numeric::sincos_angle;
using numeric::detail::anchor_phases;
using numeric::detail::phase_row;
using numeric::detail::phase_rows;
using numeric::detail::round_certified;

/// Write the two rows a + b and a - b from one anchor a = (as, ac) and one offset b = (bs, bc):
/// the four products are shared (sin(a +- b) = sa cb +- ca sb, cos(a +- b) = ca cb -+ sa sb).
template <class T>
inline void write_row_pair(T* __restrict plus, T* __restrict minus, const T* __restrict as, const T* __restrict ac,
                           const T* __restrict bs, const T* __restrict bc, std::size_t m, layout lay, bool pad) {
  if (lay == layout::interleaved) {
    for (std::size_t k = 0; k < m; ++k) {
      const T p1 = as[k] * bc[k], p2 = ac[k] * bs[k], p3 = ac[k] * bc[k], p4 = as[k] * bs[k];
      plus[2 * k] = p1 + p2;
      plus[2 * k + 1] = p3 - p4;
      minus[2 * k] = p1 - p2;
      minus[2 * k + 1] = p3 + p4;
    }
  } else {
    T* __restrict pc = plus + m;
    T* __restrict mc = minus + m;
    for (std::size_t k = 0; k < m; ++k) {
      const T p1 = as[k] * bc[k], p2 = ac[k] * bs[k], p3 = ac[k] * bc[k], p4 = as[k] * bs[k];
      plus[k] = p1 + p2;
      pc[k] = p3 - p4;
      minus[k] = p1 - p2;
      mc[k] = p3 + p4;
    }
  }
  if (pad) plus[2 * m] = minus[2 * m] = T(0);
}

/// Write one row directly from (s, c).
template <class T, class W>
inline void write_row(T* __restrict out, const W* __restrict s, const W* __restrict c, std::size_t m, layout lay,
                      bool pad) {
  if (lay == layout::interleaved) {
    for (std::size_t k = 0; k < m; ++k) {
      out[2 * k] = static_cast<T>(s[k]);
      out[2 * k + 1] = static_cast<T>(c[k]);
    }
  } else {
    for (std::size_t k = 0; k < m; ++k) {
      out[k] = static_cast<T>(s[k]);
      out[m + k] = static_cast<T>(c[k]);
    }
  }
  if (pad) out[2 * m] = T(0);
}

/// Float tables: the products of fill_unchecked taken in double and each entry's float rounding
/// certified. Every double value v is within E = 2^-44 + 2^-58 (|x_anchor| + |first| + B |step|) w
/// of sin/cos of the long double phase x w (the doubling tables' and products' roundings stay
/// below 2^-46; the long double phase roundings of x = anchor + b step below 2^-60 |x| w); when
/// float(v - E) == float(v + E) that float is the rounding of the exact-phase value, otherwise
/// (rare) the entry is evaluated directly. So a float table is correctly rounded (<= 0.5 ulp +
/// the 2^-28 ulp of a direct double evaluation), never outside [-1, 1], and PE(0)'s cosine is 1.
/// Rows a +- b: numeric::detail::certified_angle_sum (AVX2 and FMA where the processor has them;
/// the same floats either way). One float row from double (sin, cos) values with error bound pe
/// (the anchor row, b = 0): stores float(v - E) and
/// returns nonzero when float(v - E) != float(v + E) for some entry (then that rounding is undecided).
template <bool Inter>
inline int certified_row(float* __restrict out, const double* __restrict vs, const double* __restrict vc,
                         const double* __restrict pe, std::size_t m) {
  int undecided = 0;
  for (std::size_t k = 0; k < m; ++k)
    undecided |= round_certified(vs[k], pe[k], out[Inter ? 2 * k : k]) |
                 round_certified(vc[k], pe[k], out[Inter ? 2 * k + 1 : m + k]);
  return undecided;
}

inline void fill_float_certified(float* data, std::size_t length, std::size_t d, std::size_t stride,
                                 const options& opt, const std::vector<wide>& w, std::size_t B,
                                 const phase_rows<double>& t0, const anchor_phases<double>& anchor) {
  const std::size_t m = d / 2;
  const bool pad = d % 2 != 0;
  const bool inter = opt.layout == layout::interleaved;
  const std::size_t block = 2 * B;
  const wide step = opt.position_step, first = opt.first_position;
  const std::size_t anchors = (length + block - 1) / block;
  std::vector<double> wd(m);  // the frequencies in double, for the bounds
  for (std::size_t k = 0; k < m; ++k) wd[k] = static_cast<double>(w[k]);
  posenc::parallel_chunks(anchors, posenc::resolve_threads(opt.threads, "sinusoidal"), [&](std::size_t q0, std::size_t q1) {
    std::vector<double> as(m), ac(m), err(m);
    std::vector<float> scratch(d);
    // The entries of a row r = anchor +- offset with an undecided rounding (rare: a value within
    // its bound of a float rounding boundary) are decided again: each pair's two values
    // recomputed (the products of the portable loop), their roundings kept where round_certified
    // decides both, else both evaluated directly: sin/cos of the long double phase, rounded once.
    const auto fix = [&](std::size_t r, float* out, const double* bs, const double* bc, double sign) {
      const wide x = first + static_cast<wide>(r) * step;
      for (std::size_t k = 0; k < m; ++k) {
        const double vs = as[k] * bc[k] + sign * (ac[k] * bs[k]), vc = ac[k] * bc[k] - sign * (as[k] * bs[k]);
        const std::size_t js = inter ? 2 * k : k, jc = inter ? 2 * k + 1 : m + k;
        float rs, rc;
        if ((round_certified(vs, err[k], rs) | round_certified(vc, err[k], rc)) == 0) {
          out[js] = rs;
          out[jc] = rc;
          continue;
        }
        double sd, cd;
        sincos_angle(x * w[k], sd, cd);
        out[js] = static_cast<float>(sd);
        out[jc] = static_cast<float>(cd);
      }
    };
    for (std::size_t q = q0; q < q1; ++q) {
      const std::size_t mid = q * block + B;  // rows mid - B .. mid + B - 1
      const wide xa = first + static_cast<wide>(mid) * step;
      const double reach = static_cast<double>(std::abs(xa) + std::abs(first) + static_cast<wide>(B) * std::abs(step));
      double* __restrict pas = as.data();
      double* __restrict pac = ac.data();
      double* __restrict pe = err.data();
      anchor.get(q, pas, pac);
      for (std::size_t k = 0; k < m; ++k) pe[k] = 0x1p-44 + reach * wd[k] * 0x1p-58;
      if (mid < length) {
        float* out = data + mid * stride;
        const int u = inter ? certified_row<true>(out, pas, pac, pe, m) : certified_row<false>(out, pas, pac, pe, m);
        if (pad) out[2 * m] = 0.0f;
        if (u != 0) fix(mid, out, t0.s.data(), t0.c.data(), 1.0);  // offset row 0 = (0, 1)
      }
      for (std::size_t b = 1; b <= B; ++b) {
        if (mid - b >= length) continue;  // the table ends before this block's lower half
        const bool has_plus = b < B && mid + b < length;
        float* plus = has_plus ? data + (mid + b) * stride : scratch.data();
        float* minus = data + (mid - b) * stride;
        const double* bs = t0.sin_row(b);
        const double* bc = t0.cos_row(b);
        const int u = inter ? numeric::detail::certified_angle_sum<true, true>(m, pas, pac, bs, bc, pe, plus, nullptr,
                                                                               minus, nullptr)
                            : numeric::detail::certified_angle_sum<false, true>(m, pas, pac, bs, bc, pe, plus, plus + m,
                                                                                minus, minus + m);
        if (pad) plus[2 * m] = minus[2 * m] = 0.0f;
        if (u != 0) {
          if (has_plus) fix(mid + b, plus, bs, bc, 1.0);
          fix(mid - b, minus, bs, bc, -1.0);
        }
      }
    }
  });
}

/// The fast fill. Rows come in blocks of 2B around a middle row a: row a + b and row a - b
/// (0 <= b <= B) are e^{i a w} * e^{+-i b w}, sharing the four products. The anchor
/// e^{i a w} = T2[e] * T1[c] (a = first + (B + 2B (c + C e)) step) is formed in the work precision
/// W (double, or long double for long double tables) and rounded once to T; the offsets
/// T0[b] = e^{i b step w} are stored in T, so the hot loop runs at T's SIMD width. No error
/// accumulates along positions: every entry is two rounded products away from exact phases.
/// For double and long double tables every phase-table row is exact; for float tables they are
/// built by doubling in double and the products taken in double (fill_float_certified).
template <class T>
void fill_unchecked(T* data, std::size_t length, std::size_t d, std::size_t stride, const options& opt) {
  using W = numeric::phase_work_t<T>;
  constexpr bool exact_rows = !std::is_same_v<T, float>;
  const std::size_t m = d / 2;
  const bool pad = d % 2 != 0;
  if (length == 0) return;
  const auto w = frequencies_wide(m, opt);
  // B + 1 offset rows of T0 (in T) stay in L2 (<= 256 KiB); C ~ sqrt(L / 2B). Float tables keep
  // T0 in double (16 m bytes a row, <= 512 KiB) and take B up to 64 while the table has 16 blocks:
  // each anchor's setup (its phases and the m bounds) is shared by 2B rows, and T0 costs only
  // log2(B) exact rows (doubling). B changes no float entry (each is the correctly rounded value
  // wherever its bound decides it, the direct evaluation elsewhere: tests/sinusoidal/table_bits).
  std::size_t B = 1;
  if constexpr (std::is_same_v<T, float>) {
    while (B * 2 <= 64 && (B * 2 + 1) * 16 * m <= (std::size_t{512} << 10) && 32 * B * 2 <= length) B *= 2;
  } else {
    const std::size_t budget = (std::size_t{256} << 10) / (2 * sizeof(T) * m);
    while (B * 2 + 1 <= budget && B * 2 <= 64 && 8 * B * B * B < length) B *= 2;
  }
  const std::size_t block = 2 * B;
  std::size_t C = 1;
  while (C * C * block < length) ++C;
  const std::size_t anchors = (length + block - 1) / block;  // anchor q: rows q*2B .. q*2B + 2B - 1
  const wide step = opt.position_step, first = opt.first_position;
  phase_rows<W> t0w;
  t0w.build(exact_rows, B + 1, 0, step, w);
  const anchor_phases<W> anchor(anchors, C, first + step * static_cast<wide>(B), step, block, w, exact_rows,
                                exact_rows);
  if constexpr (std::is_same_v<T, float>) {
    fill_float_certified(data, length, d, stride, opt, w, B, t0w, anchor);
    return;
  }
  std::vector<T> t0s(t0w.s.begin(), t0w.s.end()), t0c(t0w.c.begin(), t0w.c.end());
  posenc::parallel_chunks(anchors, posenc::resolve_threads(opt.threads, "sinusoidal"), [&](std::size_t q0, std::size_t q1) {
    std::vector<T> as(m), ac(m), scratch(d);
    for (std::size_t q = q0; q < q1; ++q) {
      T* __restrict ps = as.data();
      T* __restrict pc = ac.data();
      anchor.get(q, ps, pc);
      const std::size_t mid = q * block + B;  // rows mid - B .. mid + B - 1
      if (mid < length) write_row(data + mid * stride, ps, pc, m, opt.layout, pad);  // b = 0
      for (std::size_t b = 1; b <= B; ++b) {
        if (mid - b >= length) continue;  // the table ends before this block's lower half
        // the row mid + b exists for b < B inside the table; otherwise it goes to scratch
        T* plus = (b < B && mid + b < length) ? data + (mid + b) * stride : scratch.data();
        write_row_pair(plus, data + (mid - b) * stride, ps, pc, &t0s[b * m], &t0c[b * m], m, opt.layout, pad);
      }
    }
  });
}

template <class T>
void fill_at_unchecked(std::span<const double> positions, T* data, std::size_t d, std::size_t stride,
                       const options& opt) {
  using W = numeric::phase_work_t<T>;
  const std::size_t m = d / 2;
  const bool pad = d % 2 != 0;
  const auto w = frequencies_wide(m, opt);
  posenc::parallel_chunks(positions.size(), posenc::resolve_threads(opt.threads, "sinusoidal"), [&](std::size_t i0, std::size_t i1) {
    std::vector<W> s(m), c(m);
    for (std::size_t i = i0; i < i1; ++i) {
      const wide x = positions[i];
      phase_row(x, std::span<const wide>(w), s.data(), c.data());
      write_row(data + i * stride, s.data(), c.data(), m, opt.layout, pad);
    }
  });
}

template <class T>
void require_buffer(const T* data, std::size_t length, std::size_t d, std::size_t stride, std::string_view where) {
  posenc::detail::require(data != nullptr || length == 0, where, "data: expected a non-null buffer for ", length,
                          " rows");
  posenc::detail::require(stride >= d || length <= 1, where, "row_stride: expected row_stride >= d = ", d, ", got ",
                          stride);
  (void)checked::extent(length, where, "length");
  if (length > 1) (void)checked::elements(length, stride, where, "length * row_stride");
}

inline void require_positions(std::span<const double> positions, std::string_view where) {
  for (std::size_t i = 0; i < positions.size(); ++i)
    posenc::detail::require<non_finite_error>(std::isfinite(positions[i]), where,
                                              "positions: expected finite positions, got ", positions[i], " at index ",
                                              i);
}

/// Column of sin(x w_k) and of cos(x w_k) for pair k in the layout.
inline std::pair<std::size_t, std::size_t> columns(std::size_t k, std::size_t m, layout lay) {
  return lay == layout::interleaved ? std::pair{2 * k, 2 * k + 1} : std::pair{k, m + k};
}

}  // namespace detail

/// A mutable view of a row-major table with contiguous rows (a posenc::table<T>, a block of
/// rows/columns of one, or an Eigen::Map with an outer stride).
template <class T>
using table_ref = Eigen::Ref<posenc::table<T>, 0, Eigen::OuterStride<>>;

/// The m = d/2 frequencies w_k (k = 0 .. m-1) of the options' spacing and base.
template <class T = double>
posenc::vector<T> frequencies(std::size_t d, const options& opt = {}) {
  const std::size_t m = pair_count(d, opt, "sinusoidal::frequencies");
  const auto w = detail::frequencies_wide(m, opt);
  auto r = posenc::detail::allocate_vector<posenc::vector<T>>(m, "sinusoidal::frequencies", "d / 2");
  for (std::size_t k = 0; k < m; ++k) r[static_cast<Eigen::Index>(k)] = static_cast<T>(w[k]);
  return r;
}

/// Fill `length` rows of `d` values, row i at data + i * row_stride, with the encoding of
/// position first_position + i * position_step. Allocates only the small phase tables.
template <class T>
  requires std::floating_point<T>
void fill(T* data, std::size_t length, std::size_t d, std::size_t row_stride, const options& opt = {}) {
  constexpr std::string_view where = "sinusoidal::fill";
  pair_count(d, opt, where);
  detail::require_buffer(data, length, d, row_stride, where);
  detail::fill_unchecked(data, length, d, row_stride, opt);
}

/// Fill a caller-owned table view: out.rows() positions, out.cols() = d columns.
inline void fill(table_ref<float> out, const options& opt = {}) {
  fill(out.data(), static_cast<std::size_t>(out.rows()), static_cast<std::size_t>(out.cols()),
       static_cast<std::size_t>(out.outerStride()), opt);
}
inline void fill(table_ref<double> out, const options& opt = {}) {
  fill(out.data(), static_cast<std::size_t>(out.rows()), static_cast<std::size_t>(out.cols()),
       static_cast<std::size_t>(out.outerStride()), opt);
}

/// The length x d table (eq. 6 by default): row i = PE(first_position + i * position_step).
template <class T = double>
  requires std::floating_point<T>
posenc::table<T> table(std::size_t length, std::size_t d, const options& opt = {}) {
  pair_count(d, opt, "sinusoidal::table");
  auto out = posenc::detail::allocate_table<T>(length, d, "sinusoidal::table", "length", "d");
  detail::fill_unchecked(out.data(), length, d, d, opt);
  return out;
}

/// Fill rows with the encoding of arbitrary real positions (e.g. a FLOATER grid); the options'
/// first_position and position_step are not used.
template <class T>
  requires std::floating_point<T>
void fill_at(std::span<const double> positions, T* data, std::size_t d, std::size_t row_stride,
             const options& opt = {}) {
  constexpr std::string_view where = "sinusoidal::fill_at";
  pair_count(d, opt, where);
  detail::require_positions(positions, where);
  detail::require_buffer(data, positions.size(), d, row_stride, where);
  detail::fill_at_unchecked(positions, data, d, row_stride, opt);
}

/// The table of arbitrary real positions: row i = PE(positions[i]).
template <class T = double>
  requires std::floating_point<T>
posenc::table<T> table_at(std::span<const double> positions, std::size_t d, const options& opt = {}) {
  constexpr std::string_view where = "sinusoidal::table_at";
  pair_count(d, opt, where);
  detail::require_positions(positions, where);
  auto out = posenc::detail::allocate_table<T>(positions.size(), d, where, "positions.size()", "d");
  detail::fill_at_unchecked(positions, out.data(), d, d, opt);
  return out;
}

/// PE(x) for one real position, as a column vector.
template <class T = double>
  requires std::floating_point<T>
posenc::vector<T> encode(double x, std::size_t d, const options& opt = {}) {
  const double pos[1] = {x};
  return table_at<T>(std::span<const double>(pos, 1), d, opt).transpose();
}

/// Eq. 7 (Universal Transformer, per block n): row i = PE(first + i * step) + PE(n).
template <class T = double>
  requires std::floating_point<T>
posenc::table<T> block_table(std::size_t length, std::size_t d, double block, const options& opt = {}) {
  constexpr std::string_view where = "sinusoidal::block_table";
  pair_count(d, opt, where);
  posenc::detail::require<non_finite_error>(std::isfinite(block), where, "block: expected a finite block index, got ",
                                            block);
  posenc::table<T> out = table<T>(length, d, opt);
  const posenc::vector<T> pn = encode<T>(block, d, opt);
  out.rowwise() += pn.transpose();
  return out;
}

/// The offset rotation M(phi) (d x d, block-diagonal in the layout's pairs): PE(t + phi) =
/// M(phi) PE(t) for every t, with the block [[cos w phi, sin w phi], [-sin w phi, cos w phi]]
/// acting on (sin, cos). A zero-padded column maps to itself.
template <class T = double>
  requires std::floating_point<T>
posenc::matrix<T> rotation(double phi, std::size_t d, const options& opt = {}) {
  constexpr std::string_view where = "sinusoidal::rotation";
  const std::size_t m = pair_count(d, opt, where);
  posenc::detail::require<non_finite_error>(std::isfinite(phi), where, "phi: expected a finite offset, got ", phi);
  const auto w = detail::frequencies_wide(m, opt);
  auto M = posenc::detail::allocate_matrix<posenc::matrix<T>>(d, d, where, "d", "d");
  M.setZero();
  for (std::size_t k = 0; k < m; ++k) {
    numeric::phase_work_t<T> s, c;
    detail::sincos_angle(static_cast<detail::wide>(phi) * w[k], s, c);
    const auto [js, jc] = detail::columns(k, m, opt.layout);
    const auto is = static_cast<Eigen::Index>(js), ic = static_cast<Eigen::Index>(jc);
    M(is, is) = static_cast<T>(c);
    M(is, ic) = static_cast<T>(s);
    M(ic, is) = static_cast<T>(-s);
    M(ic, ic) = static_cast<T>(c);
  }
  if (d % 2 != 0) M(static_cast<Eigen::Index>(d - 1), static_cast<Eigen::Index>(d - 1)) = T(1);
  return M;
}

/// The generator A of the linear dynamics p' = A p (M(phi) = exp(phi A)): the block
/// [[0, w], [-w, 0]] on each (sin, cos) pair.
template <class T = double>
  requires std::floating_point<T>
posenc::matrix<T> generator(std::size_t d, const options& opt = {}) {
  const std::size_t m = pair_count(d, opt, "sinusoidal::generator");
  const auto w = detail::frequencies_wide(m, opt);
  auto A = posenc::detail::allocate_matrix<posenc::matrix<T>>(d, d, "sinusoidal::generator", "d", "d");
  A.setZero();
  for (std::size_t k = 0; k < m; ++k) {
    const auto [js, jc] = detail::columns(k, m, opt.layout);
    A(static_cast<Eigen::Index>(js), static_cast<Eigen::Index>(jc)) = static_cast<T>(w[k]);
    A(static_cast<Eigen::Index>(jc), static_cast<Eigen::Index>(js)) = static_cast<T>(-w[k]);
  }
  return A;
}

/// PE(t) . PE(t + offset) = sum_k cos(w_k * offset): independent of t.
template <class T = double>
  requires std::floating_point<T>
T inner_product(double offset, std::size_t d, const options& opt = {}) {
  constexpr std::string_view where = "sinusoidal::inner_product";
  const std::size_t m = pair_count(d, opt, where);
  posenc::detail::require<non_finite_error>(std::isfinite(offset), where, "offset: expected a finite offset, got ",
                                            offset);
  const auto w = detail::frequencies_wide(m, opt);
  detail::wide sum = 0;
  for (std::size_t k = 0; k < m; ++k) {
    long double s, c;
    detail::sincos_angle(static_cast<detail::wide>(offset) * w[k], s, c);
    sum += c;
  }
  return static_cast<T>(sum);
}

namespace detail {
/// Shape check shared by the right-hand sides: a state is a d-vector or a batch with d columns.
template <class S>
void require_state(const S& p, const S& dp, std::size_t d, std::string_view where) {
  const auto dd = static_cast<Eigen::Index>(d);
  const bool ok = (p.cols() == dd || (p.cols() == 1 && p.rows() == dd)) && dp.rows() == p.rows() &&
                  dp.cols() == p.cols();
  if (!ok)
    posenc::detail::fail<shape_error>(where, "state: expected a d-vector or a batch with d = ", d,
                                      " columns (and dydt of the same shape), got [", p.rows(), ", ", p.cols(),
                                      "] and [", dp.rows(), ", ", dp.cols(), "]");
}
}  // namespace detail

/// The autonomous linear dynamics p' = A p whose exact flow is M(phi): started from
/// p(0) = PE(first_position) (interleaved, first 0: (0, 1, 0, 1, ...)) it generates the table.
/// The state is an Eigen d-vector or a batch (rows = independent states, d columns).
/// Thread safety: shareable const (operator() is const; docs/thread-safety.md).
template <class T = double>
  requires std::floating_point<T>
class linear_dynamics {
 public:
  explicit linear_dynamics(std::size_t d, const options& opt = {})
      : m_d(d), m_m(pair_count(d, opt, "sinusoidal::linear_dynamics")), m_layout(opt.layout),
        m_w(sinusoidal::frequencies<T>(d, opt)) {}

  template <class Time, class S>
  void operator()(Time, const S& p, S& dp) const {
    detail::require_state(p, dp, m_d, "sinusoidal::linear_dynamics");
    if (p.cols() == 1 && m_d != 1) {
      for (std::size_t k = 0; k < m_m; ++k) {
        const auto [js, jc] = detail::columns(k, m_m, m_layout);
        const auto is = static_cast<Eigen::Index>(js), ic = static_cast<Eigen::Index>(jc);
        const T w = m_w[static_cast<Eigen::Index>(k)];
        dp(is, 0) = w * p(ic, 0);
        dp(ic, 0) = -w * p(is, 0);
      }
    } else {
      for (Eigen::Index r = 0; r < p.rows(); ++r)
        for (std::size_t k = 0; k < m_m; ++k) {
          const auto [js, jc] = detail::columns(k, m_m, m_layout);
          const auto is = static_cast<Eigen::Index>(js), ic = static_cast<Eigen::Index>(jc);
          const T w = m_w[static_cast<Eigen::Index>(k)];
          dp(r, is) = w * p(r, ic);
          dp(r, ic) = -w * p(r, is);
        }
    }
    if (m_d % 2 != 0) {
      if (p.cols() == 1)
        dp(static_cast<Eigen::Index>(m_d - 1), 0) = 0;
      else
        dp.col(static_cast<Eigen::Index>(m_d - 1)).setZero();
    }
  }
  [[nodiscard]] const posenc::vector<T>& frequencies() const noexcept { return m_w; }
  [[nodiscard]] std::size_t dimension() const noexcept { return m_d; }

 private:
  std::size_t m_d, m_m;
  sinusoidal::layout m_layout;
  posenc::vector<T> m_w;
};

/// The time-dependent dynamics of eq. 9 (corrected): h(tau) = d PE / d tau, with
/// d/dtau sin(w tau) = w cos(w tau) and d/dtau cos(w tau) = -w sin(w tau). It does not depend on
/// p; every row of a batch state gets the same h(tau). Started from PE(tau_0) it gives PE(tau).
/// Thread safety: shareable const (operator() is const; docs/thread-safety.md).
template <class T = double>
  requires std::floating_point<T>
class time_dynamics {
 public:
  explicit time_dynamics(std::size_t d, const options& opt = {})
      : m_d(d), m_m(pair_count(d, opt, "sinusoidal::time_dynamics")), m_layout(opt.layout),
        m_w(detail::frequencies_wide(m_m, opt)) {}

  template <class Time, class S>
  void operator()(Time tau, const S& p, S& dp) const {
    detail::require_state(p, dp, m_d, "sinusoidal::time_dynamics");
    const bool column = p.cols() == 1 && m_d != 1;
    for (std::size_t k = 0; k < m_m; ++k) {
      numeric::phase_work_t<T> s, c;
      detail::sincos_angle(static_cast<detail::wide>(tau) * m_w[k], s, c);
      const auto [js, jc] = detail::columns(k, m_m, m_layout);
      const auto is = static_cast<Eigen::Index>(js), ic = static_cast<Eigen::Index>(jc);
      const T hs = static_cast<T>(m_w[k] * c), hc = static_cast<T>(-m_w[k] * s);
      if (column) {
        dp(is, 0) = hs;
        dp(ic, 0) = hc;
      } else {
        dp.col(is).setConstant(hs);
        dp.col(ic).setConstant(hc);
      }
    }
    if (m_d % 2 != 0) {
      if (column)
        dp(static_cast<Eigen::Index>(m_d - 1), 0) = 0;
      else
        dp.col(static_cast<Eigen::Index>(m_d - 1)).setZero();
    }
  }
  [[nodiscard]] std::size_t dimension() const noexcept { return m_d; }

 private:
  std::size_t m_d, m_m;
  sinusoidal::layout m_layout;
  std::vector<detail::wide> m_w;
};

}  // namespace posenc::sinusoidal
