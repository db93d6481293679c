// SPDX-License-Identifier: MIT
// Sinusoidal tables on the Thrust device system (FLOATER paper eq. 6 and 7; both layouts, both
// frequency spacings, zero-padded odd d), with the host's options, validation and accuracy.
//
//   posenc::device::sinusoidal::table<T>(L, d, opt)          -> device_table<T>, L x d
//   posenc::device::sinusoidal::fill(device_table<T>&, opt)  the same into an existing table
//   posenc::device::sinusoidal::block_table<T>(L, d, n, opt) eq. 7: PE(first + i step) + PE(n)
//
// Accuracy (the host's bound, see posenc/sinusoidal/sinusoidal.hpp): the frequencies are the host's
// long double ones (posenc::sinusoidal::frequencies_wide), split into two doubles w = w_hi + w_lo.
// Row r = q B + b (B a power of two ~ sqrt(L)) is the rotation of an "anchor" angle
// (first + q B step) w_k by the offset angle (b step) w_k: both are computed exactly on the
// device in double-double arithmetic (the position as x_hi + x_lo, the product x w with an FMA,
// the reduction modulo 2 pi with a three-part constant and exact products), then
// sin/cos(r_hi) + r_lo cos/-sin(r_hi); the row is one complex product in double. So every entry
// is within a few double ulps of the exact value at every position (no error grows along the
// positions): f32 tables are correctly rounded up to ~1 ulp, f64 within ~3e-16 of exact, both
// for any position up to 2^52.
//
// Work: (L/B + B) m exact phases, then one pass writing L d values (the table's bytes).
#pragma once

#include <thrust/for_each.h>
#include <thrust/iterator/counting_iterator.h>

#include <cmath>
#include <cstddef>
#include <string_view>
#include <vector>

#include <posenc/adapters/thrust.hpp>
#include <posenc/device/table.hpp>
#include <posenc/core/error.hpp>
#include <posenc/core/hd.hpp>
#include <posenc/sinusoidal/options.hpp>

namespace posenc::device {

namespace detail {

// ---- double-double helpers (exact with a fused multiply-add; same code on host and device) ----
using posenc::detail::cos_hd;  // the host/device math of core/hd.hpp
using posenc::detail::fma_hd;
using posenc::detail::nearbyint_hd;
using posenc::detail::sin_hd;

struct dd {
  double hi, lo;
};
/// a + b exactly, as hi + lo (Knuth's TwoSum).
POSENC_HD inline dd two_sum(double a, double b) {
  const double s = a + b;
  const double bb = s - a;
  return {s, (a - (s - bb)) + (b - bb)};
}
/// a + b exactly for |a| >= |b| (Dekker's FastTwoSum).
POSENC_HD inline dd fast_two_sum(double a, double b) {
  const double s = a + b;
  return {s, b - (s - a)};
}
/// a * b exactly, as hi + lo. The product is rounded on its own (mul_rn): contracted by nvcc
/// into a following subtraction (theta - a * b), the error lo would be counted twice.
POSENC_HD inline dd two_prod(double a, double b) {
  const double p = posenc::detail::mul_rn(a, b);
  return {p, fma_hd(a, b, -p)};
}

/// (sin, cos) of the angle (x0 + r dx) * (w_hi + w_lo), r an integer < 2^53, with the position
/// formed and multiplied in double-double and reduced modulo 2 pi exactly (|n| < 2^53).
struct exact_phase {
  double s, c;
};
POSENC_HD inline exact_phase phase_of(double x0, double dx, double r, double w_hi, double w_lo) {
  constexpr double two_pi_1 = 6.283185307179586;         // 0x1.921fb54442d18p+2
  constexpr double two_pi_2 = 2.4492935982947064e-16;    // 0x1.1a62633145c07p-52
  constexpr double two_pi_3 = -5.989539619436679e-33;    // -0x1.f1976b7ed8fbcp-108
  constexpr double inv_two_pi = 0.15915494309189535;
  // x = x0 + r dx
  const dd p = two_prod(r, dx);
  const dd s0 = two_sum(x0, p.hi);
  const dd x = fast_two_sum(s0.hi, s0.lo + p.lo);
  // theta = x w
  const dd t0 = two_prod(x.hi, w_hi);
  const dd theta = fast_two_sum(t0.hi, t0.lo + (x.hi * w_lo + x.lo * w_hi));
  // reduce: theta - n 2 pi; theta.hi - n P1 is exact (Sterbenz) once n P1 is split exactly
  const double n = nearbyint_hd(theta.hi * inv_two_pi);
  const dd a = two_prod(n, two_pi_1);
  const dd b = two_prod(n, two_pi_2);
  const double r_hi0 = theta.hi - a.hi;
  const double r_lo0 = ((theta.lo - a.lo) - b.hi) - (b.lo + n * two_pi_3);
  const dd red = fast_two_sum(r_hi0, r_lo0);
  const double sh = sin_hd(red.hi), ch = cos_hd(red.hi);
  return {sh + red.lo * ch, ch - red.lo * sh};
}

/// Phase table: out_s/out_c[r m + k] = sin/cos((x0 + r dx) w_k), r < rows.
struct phase_table_fn {
  double x0, dx;
  const double* w_hi;
  const double* w_lo;
  std::size_t m;
  double* out_s;
  double* out_c;
  POSENC_HD void operator()(std::size_t e) const {
    const std::size_t r = e / m, k = e % m;
    const exact_phase ph = phase_of(x0, dx, static_cast<double>(r), w_hi[k], w_lo[k]);
    out_s[e] = ph.s;
    out_c[e] = ph.c;
  }
};

/// The anchor/offset phase tables of rows first + i step, i < length, for frequencies w:
/// row i = q B + b is the rotation of anchor q by offset b.
struct row_phases {
  std::size_t m = 0, block = 1, anchors = 0;
  ::thrust::device_vector<double> w_hi, w_lo, anchor_s, anchor_c, offset_s, offset_c;

  row_phases(const std::vector<long double>& w, std::size_t length, double first, double step,
             std::string_view where)
      : m(w.size()) {
    while (block * block < length && block < (std::size_t{1} << 16)) block *= 2;
    anchors = length == 0 ? 0 : (length + block - 1) / block;
    std::vector<double> hi(m), lo(m);
    for (std::size_t k = 0; k < m; ++k) {
      hi[k] = static_cast<double>(w[k]);
      lo[k] = static_cast<double>(w[k] - static_cast<long double>(hi[k]));
    }
    w_hi = posenc::detail::upload<double>(hi.data(), m, where);
    w_lo = posenc::detail::upload<double>(lo.data(), m, where);
    anchor_s = posenc::detail::device_buffer<double>(posenc::detail::checked_elements(anchors, m, where), where);
    anchor_c = posenc::detail::device_buffer<double>(anchors * m, where);
    offset_s = posenc::detail::device_buffer<double>(posenc::detail::checked_elements(block, m, where), where);
    offset_c = posenc::detail::device_buffer<double>(block * m, where);
    // block is a power of two: block * step is exact
    compute(first, step * static_cast<double>(block), anchors, anchor_s, anchor_c);
    compute(0.0, step, block, offset_s, offset_c);
  }

  void compute(double x0, double dx, std::size_t rows, ::thrust::device_vector<double>& s,
               ::thrust::device_vector<double>& c) {
    const phase_table_fn f{x0, dx, posenc::detail::raw_data(w_hi), posenc::detail::raw_data(w_lo), m,
                           posenc::detail::raw_data(s), posenc::detail::raw_data(c)};
    ::thrust::for_each(::thrust::device, ::thrust::counting_iterator<std::size_t>(0),
                       ::thrust::counting_iterator<std::size_t>(rows * m), f);
  }

  static unsigned log2_exact(std::size_t p) {
    unsigned r = 0;
    while ((std::size_t{1} << r) < p) ++r;
    return r;
  }

  /// A POSENC_HD view for kernels.
  struct view {
    const double *as, *ac, *os, *oc;
    std::size_t m, block;
    unsigned block_shift;  // block = 2^block_shift: no integer division per element
    /// (sin, cos) of row i, frequency k, in double.
    POSENC_HD exact_phase at(std::size_t i, std::size_t k) const {
      const std::size_t q = i >> block_shift, b = i & (block - 1);
      const double sa = as[q * m + k], ca = ac[q * m + k], sb = os[b * m + k], cb = oc[b * m + k];
      using posenc::detail::mul_rn;  // each product rounded, as on the host
      return {mul_rn(sa, cb) + mul_rn(ca, sb), mul_rn(ca, cb) - mul_rn(sa, sb)};
    }
  };
  [[nodiscard]] view get() const {
    return {posenc::detail::raw_data(anchor_s), posenc::detail::raw_data(anchor_c),
            posenc::detail::raw_data(offset_s), posenc::detail::raw_data(offset_c), m, block,
            log2_exact(block)};
  }
};

/// Writes the (sin, cos) pair k of row i in the layout, plus an optional per-column addend
/// (eq. 7: PE(block) rounded to T, added in T as the host does) and the zero pad column.
template <class T>
struct sinusoidal_table_fn {
  row_phases::view ph;
  T* out;
  std::size_t d, stride, m;
  bool interleaved, pad;
  const T* add;      // nullptr or d values
  int m_shift;       // m = 2^m_shift, or -1: then one division per work item
  POSENC_HD void operator()(std::size_t e) const {
    const std::size_t i = m_shift >= 0 ? e >> m_shift : e / m;
    const std::size_t k = e - i * m;
    const exact_phase p = ph.at(i, k);
    const std::size_t js = interleaved ? 2 * k : k, jc = interleaved ? 2 * k + 1 : m + k;
    T* row = out + i * stride;
    T vs = static_cast<T>(p.s), vc = static_cast<T>(p.c);
    if (add != nullptr) {
      vs = vs + add[js];
      vc = vc + add[jc];
    }
    row[js] = vs;
    row[jc] = vc;
    if (pad && k == 0) row[d - 1] = add != nullptr ? T(0) + add[d - 1] : T(0);
  }
};

template <class T>
void fill_sinusoidal_unchecked(T* out, std::size_t length, std::size_t d, const posenc::sinusoidal::options& opt, const T* add,
                    std::string_view where) {
  const std::size_t m = d / 2;
  if (length == 0) return;
  const auto w = posenc::sinusoidal::frequencies_wide(m, opt);
  const row_phases ph(w, length, opt.first_position, opt.position_step, where);
  const int m_shift = (m & (m - 1)) == 0 ? static_cast<int>(row_phases::log2_exact(m)) : -1;
  const sinusoidal_table_fn<T> f{ph.get(), out, d, d, m, opt.layout == posenc::sinusoidal::layout::interleaved,
                                 d % 2 != 0, add, m_shift};
  ::thrust::for_each(::thrust::device, ::thrust::counting_iterator<std::size_t>(0),
                     ::thrust::counting_iterator<std::size_t>(length * m), f);
}

}  // namespace detail

namespace sinusoidal {

using posenc::sinusoidal::layout;
using posenc::sinusoidal::odd_dimension;
using posenc::sinusoidal::options;
using posenc::sinusoidal::spacing;

/// Fill every row of `out` (out.rows() positions, out.cols() = d) on the device: row i =
/// PE(first_position + i position_step). Same validation as posenc::sinusoidal::fill;
/// options.threads is ignored (the device system decides).
template <class T>
  requires std::floating_point<T>
void fill(device_table<T>& out, const options& opt = {}) {
  constexpr std::string_view where = "device::sinusoidal::fill";
  posenc::sinusoidal::pair_count(out.cols(), opt, where);
  detail::fill_sinusoidal_unchecked(out.data(), out.rows(), out.cols(), opt, static_cast<const T*>(nullptr), where);
}

/// The length x d table (eq. 6) on the device.
template <class T = double>
  requires std::floating_point<T>
[[nodiscard]] device_table<T> table(std::size_t length, std::size_t d, const options& opt = {}) {
  constexpr std::string_view where = "device::sinusoidal::table";
  posenc::sinusoidal::pair_count(d, opt, where);
  device_table<T> out(length, d);
  detail::fill_sinusoidal_unchecked(out.data(), length, d, opt, static_cast<const T*>(nullptr), where);
  return out;
}

/// Eq. 7 on the device: row i = PE(first + i step) + PE(block) (each rounded to T, then added,
/// as posenc::sinusoidal::block_table does).
template <class T = double>
  requires std::floating_point<T>
[[nodiscard]] device_table<T> block_table(std::size_t length, std::size_t d, double block, const options& opt = {}) {
  constexpr std::string_view where = "device::sinusoidal::block_table";
  posenc::sinusoidal::pair_count(d, opt, where);
  posenc::detail::require<non_finite_error>(std::isfinite(block), where, "block: expected a finite block index, got ",
                                            block);
  options one = opt;
  one.first_position = block;
  one.position_step = 1.0;
  device_table<T> pn(1, d);
  detail::fill_sinusoidal_unchecked(pn.data(), 1, d, one, static_cast<const T*>(nullptr), where);
  device_table<T> out(length, d);
  detail::fill_sinusoidal_unchecked(out.data(), length, d, opt, static_cast<const T*>(pn.data()), where);
  return out;
}

}  // namespace sinusoidal
}  // namespace posenc::device
