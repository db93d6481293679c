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
// the inner one in the table's type. No error accumulates along positions: a float table is
// within ~1.5e-7 of the exact value at every position (measured 1.2e-7 up to 2^20), a double
// table within a few ulp + |x w| 2^-63 (the 64-bit frequency's own precision).
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
#include <posenc/encoding/table.hpp>
#include <posenc/numeric/phase.hpp>

namespace posenc::sinusoidal {

/// Where the sine and cosine of frequency k go in a row of d = 2m columns.
enum class layout {
  interleaved,  ///< eq. 6: column 2k = sin(x w_k), column 2k+1 = cos(x w_k)
  half,         ///< [sin | cos]: column k = sin(x w_k), column m + k = cos(x w_k) (tensor2tensor, fairseq)
};

/// How the m = d/2 frequencies are spaced.
enum class spacing {
  two_k_over_d,           ///< w_k = base^(-2k/d) (eq. 6 with c = 1/base; Vaswani et al.)
  k_over_half_minus_one,  ///< w_k = base^(-k/(d/2 - 1)) (tensor2tensor, fairseq); d = 2: w_0 = 1
};

/// What an odd d means.
enum class odd_dimension {
  reject,    ///< throw invalid_argument
  zero_pad,  ///< the table of d - 1 columns, then one zero column (fairseq's rule)
};

/// Everything that selects one sinusoidal table. Row i of a table holds position
/// first_position + i * position_step (taken exactly, in long double, not rounded to double).
struct options {
  sinusoidal::layout layout = sinusoidal::layout::interleaved;
  sinusoidal::spacing spacing = sinusoidal::spacing::two_k_over_d;
  double base = 10000.0;          ///< > 0 and finite (eq. 6: c = 1/base)
  double first_position = 0.0;    ///< position of row 0 (eq. 6: 0; fairseq: padding_idx + 1)
  double position_step = 1.0;     ///< spacing of the rows (FLOATER grids t_i = i * Delta)
  odd_dimension odd = odd_dimension::reject;
  unsigned threads = 1;           ///< worker threads for fill/table (1: serial; 0: hardware concurrency;
                                  ///< at most posenc::max_threads; see posenc/core/thread_pool.hpp)
};

namespace detail {

using wide = numeric::wide;

/// Validate (d, options) and return m, the number of (sin, cos) pairs.
inline std::size_t pairs(std::size_t d, const options& opt, std::string_view where) {
  posenc::detail::require(d >= 2, where, "d: expected d >= 2, got ", d);
  posenc::detail::require(d % 2 == 0 || opt.odd == odd_dimension::zero_pad, where,
                          "d: expected an even d (or options.odd = odd_dimension::zero_pad), got ", d);
  posenc::detail::require<non_finite_error>(std::isfinite(opt.base), where, "options.base: expected a finite base, got ",
                                            opt.base);
  posenc::detail::require(opt.base > 0, where, "options.base: expected base > 0, got ", opt.base);
  posenc::detail::require<non_finite_error>(std::isfinite(opt.first_position), where,
                                            "options.first_position: expected a finite position, got ",
                                            opt.first_position);
  posenc::detail::require<non_finite_error>(std::isfinite(opt.position_step), where,
                                            "options.position_step: expected a finite step, got ", opt.position_step);
  posenc::detail::require(opt.layout == layout::interleaved || opt.layout == layout::half, where,
                          "options.layout: expected layout::interleaved or layout::half");
  posenc::detail::require(opt.spacing == spacing::two_k_over_d || opt.spacing == spacing::k_over_half_minus_one, where,
                          "options.spacing: expected spacing::two_k_over_d or spacing::k_over_half_minus_one");
  (void)posenc::resolve_threads(opt.threads, where);  // options.threads <= max_threads
  return d / 2;
}

/// The m frequencies in long double (no validation).
inline std::vector<wide> frequencies_wide(std::size_t m, const options& opt) {
  std::vector<wide> w(m);
  const wide lb = std::log(static_cast<wide>(opt.base));
  const wide denom = opt.spacing == spacing::two_k_over_d
                         ? static_cast<wide>(2 * m)
                         : static_cast<wide>(2 * (m > 1 ? m - 1 : 1));  // k/(m-1) = 2k/(2(m-1))
  for (std::size_t k = 0; k < m; ++k) w[k] = std::exp(-lb * static_cast<wide>(2 * k) / denom);
  return w;
}

/// The exact-phase sine and cosine (promoted to posenc/numeric/phase.hpp).
using numeric::sincos_angle;

/// rows x m table of e^{i (x0 + r dx) w_k}, r < rows, split into sine and cosine arrays.
/// compute(): every row exact (sincos_angle). compute_by_doubling(): only row 0 and the rows
/// 2^j are exact; row r = row (r - 2^j) * row 2^j (2^j the highest bit of r), so each entry is
/// at most log2(rows) rounded complex products away from exact values (a few 1e-16 in double).
template <class W>
struct phase_table {
  std::vector<W> s, c;
  std::size_t m = 0;
  void compute(std::size_t rows, std::size_t m_, wide x0, wide dx, const std::vector<wide>& w) {
    m = m_;
    s.resize(rows * m);
    c.resize(rows * m);
    for (std::size_t r = 0; r < rows; ++r) {
      const wide x = x0 + static_cast<wide>(r) * dx;
      for (std::size_t k = 0; k < m; ++k) sincos_angle(x * w[k], s[r * m + k], c[r * m + k]);
    }
  }
  void compute_by_doubling(std::size_t rows, std::size_t m_, wide x0, wide dx, const std::vector<wide>& w) {
    m = m_;
    s.resize(rows * m);
    c.resize(rows * m);
    std::vector<W> ps(m), pc(m);
    for (std::size_t k = 0; k < m; ++k) sincos_angle(x0 * w[k], s[k], c[k]);
    for (std::size_t p = 1; p < rows; p *= 2) {
      for (std::size_t k = 0; k < m; ++k) sincos_angle(static_cast<wide>(p) * dx * w[k], ps[k], pc[k]);
      for (std::size_t r = p; r < std::min(rows, 2 * p); ++r) {
        const W* __restrict as = &s[(r - p) * m];
        const W* __restrict ac = &c[(r - p) * m];
        W* __restrict os = &s[r * m];
        W* __restrict oc = &c[r * m];
        for (std::size_t k = 0; k < m; ++k) {
          os[k] = as[k] * pc[k] + ac[k] * ps[k];
          oc[k] = ac[k] * pc[k] - as[k] * ps[k];
        }
      }
    }
  }
  void build(bool exact, std::size_t rows, std::size_t m_, wide x0, wide dx, const std::vector<wide>& w) {
    if (exact)
      compute(rows, m_, x0, dx, w);
    else
      compute_by_doubling(rows, m_, x0, dx, w);
  }
};

/// Write one output row: the rotation (as, ac) * (bs, bc), rounded to T, in the layout.
template <class T, class W>
inline void write_row(T* __restrict out, const W* __restrict as, const W* __restrict ac, const W* __restrict bs,
                      const W* __restrict bc, std::size_t m, layout lay, bool pad) {
  if (lay == layout::interleaved) {
    for (std::size_t k = 0; k < m; ++k) {
      out[2 * k] = static_cast<T>(as[k] * bc[k] + ac[k] * bs[k]);
      out[2 * k + 1] = static_cast<T>(ac[k] * bc[k] - as[k] * bs[k]);
    }
  } else {
    T* __restrict oc = out + m;
    for (std::size_t k = 0; k < m; ++k) {
      out[k] = static_cast<T>(as[k] * bc[k] + ac[k] * bs[k]);
      oc[k] = static_cast<T>(ac[k] * bc[k] - as[k] * bs[k]);
    }
  }
  if (pad) out[2 * m] = T(0);
}

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

template <class T>
using work_t = std::conditional_t<std::is_same_v<T, long double>, long double, double>;

/// The fast fill. Rows come in blocks of 2B around a middle row a: row a + b and row a - b
/// (0 <= b <= B) are e^{i a w} * e^{+-i b w}, sharing the four products. The anchor
/// e^{i a w} = T2[e] * T1[c] (a = first + (B + 2B (c + C e)) step) is formed in the work precision
/// W (double, or long double for long double tables) and rounded once to T; the offsets
/// T0[b] = e^{i b step w} are stored in T, so the hot loop runs at T's SIMD width. No error
/// accumulates along positions: every entry is two rounded products away from exact phases.
/// For double and long double tables every phase-table row is exact; for float tables they are
/// built by doubling in double (error ~1e-15, far below float's rounding).
template <class T>
void fill_unchecked(T* data, std::size_t length, std::size_t d, std::size_t stride, const options& opt) {
  using W = work_t<T>;
  constexpr bool exact_rows = !std::is_same_v<T, float>;
  const std::size_t m = d / 2;
  const bool pad = d % 2 != 0;
  if (length == 0) return;
  const auto w = frequencies_wide(m, opt);
  // B + 1 offset rows of T0 (in T) stay in L2 (<= 256 KiB); C ~ sqrt(L / 2B).
  const std::size_t budget = (std::size_t{256} << 10) / (2 * sizeof(T) * m);
  std::size_t B = 1;
  while (B * 2 + 1 <= budget && B * 2 <= 64 && 8 * B * B * B < length) B *= 2;
  const std::size_t block = 2 * B;
  std::size_t C = 1;
  while (C * C * block < length) ++C;
  const std::size_t E = (length + block * C - 1) / (block * C);
  const wide step = opt.position_step, first = opt.first_position;
  phase_table<W> t0w, t1, t2;
  t0w.build(exact_rows, B + 1, m, 0, step, w);
  t1.build(exact_rows, C, m, 0, step * static_cast<wide>(block), w);
  t2.build(exact_rows, E, m, first + step * static_cast<wide>(B), step * static_cast<wide>(block * C), w);
  std::vector<T> t0s(t0w.s.begin(), t0w.s.end()), t0c(t0w.c.begin(), t0w.c.end());
  const std::size_t anchors = (length + block - 1) / block;  // anchor q: rows q*2B .. q*2B + 2B - 1
  posenc::parallel_chunks(anchors, posenc::resolve_threads(opt.threads, "sinusoidal"), [&](std::size_t q0, std::size_t q1) {
    std::vector<T> as(m), ac(m), scratch(d);
    for (std::size_t q = q0; q < q1; ++q) {
      const std::size_t e = q / C, c = q % C;
      const W* __restrict s2 = &t2.s[e * m];
      const W* __restrict c2 = &t2.c[e * m];
      const W* __restrict s1 = &t1.s[c * m];
      const W* __restrict c1 = &t1.c[c * m];
      T* __restrict ps = as.data();
      T* __restrict pc = ac.data();
      for (std::size_t k = 0; k < m; ++k) {
        ps[k] = static_cast<T>(s2[k] * c1[k] + c2[k] * s1[k]);
        pc[k] = static_cast<T>(c2[k] * c1[k] - s2[k] * s1[k]);
      }
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
  using W = work_t<T>;
  const std::size_t m = d / 2;
  const bool pad = d % 2 != 0;
  const auto w = frequencies_wide(m, opt);
  posenc::parallel_chunks(positions.size(), posenc::resolve_threads(opt.threads, "sinusoidal"), [&](std::size_t i0, std::size_t i1) {
    std::vector<W> s(m), c(m);
    for (std::size_t i = i0; i < i1; ++i) {
      const wide x = positions[i];
      for (std::size_t k = 0; k < m; ++k) sincos_angle(x * w[k], s[k], c[k]);
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
  const std::size_t m = detail::pairs(d, opt, "sinusoidal::frequencies");
  const auto w = detail::frequencies_wide(m, opt);
  posenc::vector<T> r(static_cast<Eigen::Index>(m));
  for (std::size_t k = 0; k < m; ++k) r[static_cast<Eigen::Index>(k)] = static_cast<T>(w[k]);
  return r;
}

/// Fill `length` rows of `d` values, row i at data + i * row_stride, with the encoding of
/// position first_position + i * position_step. Allocates only the small phase tables.
template <class T>
  requires std::floating_point<T>
void fill(T* data, std::size_t length, std::size_t d, std::size_t row_stride, const options& opt = {}) {
  constexpr std::string_view where = "sinusoidal::fill";
  detail::pairs(d, opt, where);
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
  detail::pairs(d, opt, "sinusoidal::table");
  posenc::table<T> out(static_cast<Eigen::Index>(length), static_cast<Eigen::Index>(d));
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
  detail::pairs(d, opt, where);
  detail::require_positions(positions, where);
  detail::require_buffer(data, positions.size(), d, row_stride, where);
  detail::fill_at_unchecked(positions, data, d, row_stride, opt);
}

/// The table of arbitrary real positions: row i = PE(positions[i]).
template <class T = double>
  requires std::floating_point<T>
posenc::table<T> table_at(std::span<const double> positions, std::size_t d, const options& opt = {}) {
  constexpr std::string_view where = "sinusoidal::table_at";
  detail::pairs(d, opt, where);
  detail::require_positions(positions, where);
  posenc::table<T> out(static_cast<Eigen::Index>(positions.size()), static_cast<Eigen::Index>(d));
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
  detail::pairs(d, opt, where);
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
  const std::size_t m = detail::pairs(d, opt, where);
  posenc::detail::require<non_finite_error>(std::isfinite(phi), where, "phi: expected a finite offset, got ", phi);
  const auto w = detail::frequencies_wide(m, opt);
  posenc::matrix<T> M = posenc::matrix<T>::Zero(static_cast<Eigen::Index>(d), static_cast<Eigen::Index>(d));
  for (std::size_t k = 0; k < m; ++k) {
    detail::work_t<T> s, c;
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
  const std::size_t m = detail::pairs(d, opt, "sinusoidal::generator");
  const auto w = detail::frequencies_wide(m, opt);
  posenc::matrix<T> A = posenc::matrix<T>::Zero(static_cast<Eigen::Index>(d), static_cast<Eigen::Index>(d));
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
  const std::size_t m = detail::pairs(d, opt, where);
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
template <class T = double>
  requires std::floating_point<T>
class linear_dynamics {
 public:
  explicit linear_dynamics(std::size_t d, const options& opt = {})
      : m_d(d), m_m(detail::pairs(d, opt, "sinusoidal::linear_dynamics")), m_layout(opt.layout),
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
template <class T = double>
  requires std::floating_point<T>
class time_dynamics {
 public:
  explicit time_dynamics(std::size_t d, const options& opt = {})
      : m_d(d), m_m(detail::pairs(d, opt, "sinusoidal::time_dynamics")), m_layout(opt.layout),
        m_w(detail::frequencies_wide(m_m, opt)) {}

  template <class Time, class S>
  void operator()(Time tau, const S& p, S& dp) const {
    detail::require_state(p, dp, m_d, "sinusoidal::time_dynamics");
    const bool column = p.cols() == 1 && m_d != 1;
    for (std::size_t k = 0; k < m_m; ++k) {
      detail::work_t<T> s, c;
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
