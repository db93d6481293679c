// SPDX-License-Identifier: MIT
// Rotary position embedding (RoPE, Su et al. 2021): the sinusoidal encoding's rotation applied to
// query/key vectors. Row i of a [positions x (heads * head_dim)] matrix is rotated, pair by pair,
// by the angle x_i * theta_k, theta_k = base^(-2k / rotary_dim), so that
// <R(m) q, R(n) k> = q^T R(n - m) k depends only on n - m. The angles come from the exact
// sinusoidal tables of posenc/sinusoidal/sinusoidal.hpp (no float32 angle products).
#pragma once

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <span>
#include <string_view>
#include <vector>

#include <posenc/core/error.hpp>
#include <posenc/sinusoidal/sinusoidal.hpp>
#include <posenc/encoding/table.hpp>

namespace posenc::rotary {

/// Which columns of a head form the rotated pairs.
///  - layout::interleaved: (2k, 2k+1) (RoFormer, GPT-J, Meta's LLaMA reference code);
///  - layout::half: (k, k + rotary_dim/2) ("rotate_half": GPT-NeoX, Hugging Face LLaMA).
using layout = sinusoidal::layout;

struct options {
  rotary::layout layout = rotary::layout::interleaved;
  double base = 10000.0;          ///< > 0 and finite
  std::size_t head_dim = 0;       ///< columns per head; 0: the whole row is one head
  std::size_t rotary_dim = 0;     ///< leading columns of each head that are rotated (even); 0: head_dim
  double first_position = 0.0;    ///< position of row 0
  double position_step = 1.0;     ///< row i has position first_position + i * position_step
};

namespace detail {
struct plan {
  std::size_t head_dim, rotary_dim, heads;
};

inline plan make_plan(std::size_t cols, const options& opt, std::string_view where) {
  posenc::detail::require<non_finite_error>(std::isfinite(opt.base), where, "options.base: expected a finite base, got ",
                                            opt.base);
  posenc::detail::require(opt.base > 0, where, "options.base: expected base > 0, got ", opt.base);
  posenc::detail::require<non_finite_error>(std::isfinite(opt.first_position) && std::isfinite(opt.position_step),
                                            where, "options.first_position/position_step: expected finite values, got ",
                                            opt.first_position, " and ", opt.position_step);
  posenc::detail::require(opt.layout == layout::interleaved || opt.layout == layout::half, where,
                          "options.layout: expected layout::interleaved or layout::half");
  const std::size_t hd = opt.head_dim == 0 ? cols : opt.head_dim;
  posenc::detail::require<shape_error>(hd > 0 && cols % hd == 0, where, "x: expected a column count divisible by head_dim = ",
                                       hd, ", got ", cols, " columns");
  const std::size_t rd = opt.rotary_dim == 0 ? hd : opt.rotary_dim;
  posenc::detail::require(rd >= 2 && rd % 2 == 0 && rd <= hd, where,
                          "options.rotary_dim: expected an even rotary_dim with 2 <= rotary_dim <= head_dim = ", hd,
                          ", got ", rd);
  return {hd, rd, cols / hd};
}

inline sinusoidal::options table_options(const options& opt) {
  sinusoidal::options s;
  s.layout = sinusoidal::layout::half;
  s.spacing = sinusoidal::spacing::two_k_over_d;
  s.base = opt.base;
  return s;
}

/// Rotate rows [r0, r0 + n) of x using the half-layout (sin | cos) table sc (n x rotary_dim).
template <class T, class W>
void rotate_rows(T* x, std::size_t stride, std::size_t n, const plan& p, layout lay, const W* sc) {
  const std::size_t h = p.rotary_dim / 2;
  for (std::size_t i = 0; i < n; ++i) {
    const W* s = sc + i * p.rotary_dim;
    const W* c = s + h;
    for (std::size_t head = 0; head < p.heads; ++head) {
      T* v = x + i * stride + head * p.head_dim;
      for (std::size_t k = 0; k < h; ++k) {
        const std::size_t ia = lay == layout::interleaved ? 2 * k : k;
        const std::size_t ib = lay == layout::interleaved ? 2 * k + 1 : k + h;
        const W a = v[ia], b = v[ib];
        v[ia] = static_cast<T>(a * c[k] - b * s[k]);
        v[ib] = static_cast<T>(a * s[k] + b * c[k]);
      }
    }
  }
}

template <class T>
void apply_inplace(T* x, std::size_t rows, std::size_t stride, const plan& p, const options& opt,
                   std::span<const double> positions) {
  using W = sinusoidal::detail::work_t<T>;
  constexpr std::size_t chunk = 256;
  const sinusoidal::options so = table_options(opt);
  std::vector<W> sc(std::min(rows, chunk) * p.rotary_dim);
  for (std::size_t r0 = 0; r0 < rows; r0 += chunk) {
    const std::size_t n = std::min(chunk, rows - r0);
    if (positions.empty()) {
      sinusoidal::options sr = so;
      sr.first_position = opt.first_position + static_cast<double>(r0) * opt.position_step;
      sr.position_step = opt.position_step;
      sinusoidal::detail::fill_unchecked(sc.data(), n, p.rotary_dim, p.rotary_dim, sr);
    } else {
      sinusoidal::detail::fill_at_unchecked(positions.subspan(r0, n), sc.data(), p.rotary_dim, p.rotary_dim, so);
    }
    rotate_rows(x + r0 * stride, stride, n, p, opt.layout, sc.data());
  }
}
}  // namespace detail

namespace detail {
template <class T>
void apply_checked(sinusoidal::table_ref<T> x, std::span<const double> positions, bool explicit_positions,
                   const options& opt) {
  constexpr std::string_view where = "rotary::apply_rotary";
  const auto p = make_plan(static_cast<std::size_t>(x.cols()), opt, where);
  if (explicit_positions) {
    posenc::detail::require<shape_error>(positions.size() == static_cast<std::size_t>(x.rows()), where,
                                         "positions: expected one position per row (", x.rows(), "), got ",
                                         positions.size());
    sinusoidal::detail::require_positions(positions, where);
  }
  posenc::detail::require_finite(x, where, "x");  // NaN/Inf would pass through the rotation
  apply_inplace(x.data(), static_cast<std::size_t>(x.rows()), static_cast<std::size_t>(x.outerStride()), p, opt,
                positions);
}
}  // namespace detail

/// Rotate every row of x in place: row i by the angles of position first_position + i * step.
/// x: rows = positions, columns = heads * head_dim (row-major, contiguous rows).
inline void apply_rotary_inplace(sinusoidal::table_ref<float> x, const options& opt = {}) {
  detail::apply_checked<float>(x, {}, false, opt);
}
inline void apply_rotary_inplace(sinusoidal::table_ref<double> x, const options& opt = {}) {
  detail::apply_checked<double>(x, {}, false, opt);
}

/// Rotate every row of x in place: row i by the angles of positions[i] (any real positions).
inline void apply_rotary_inplace(sinusoidal::table_ref<float> x, std::span<const double> positions,
                                 const options& opt = {}) {
  detail::apply_checked<float>(x, positions, true, opt);
}
inline void apply_rotary_inplace(sinusoidal::table_ref<double> x, std::span<const double> positions,
                                 const options& opt = {}) {
  detail::apply_checked<double>(x, positions, true, opt);
}

/// The rotated copy of x (rows = positions first_position + i * position_step).
template <class Derived>
posenc::table<typename Derived::Scalar> apply_rotary(const Eigen::MatrixBase<Derived>& x, const options& opt = {}) {
  posenc::table<typename Derived::Scalar> y = x;
  apply_rotary_inplace(y, opt);
  return y;
}

/// The rotated copy of x, row i at positions[i].
template <class Derived>
posenc::table<typename Derived::Scalar> apply_rotary(const Eigen::MatrixBase<Derived>& x,
                                                     std::span<const double> positions, const options& opt = {}) {
  posenc::table<typename Derived::Scalar> y = x;
  apply_rotary_inplace(y, positions, opt);
  return y;
}

/// R(x) for one head (head_dim x head_dim, acting on column vectors): the rotation that
/// apply_rotary applies to a row at position x (identity on the columns past rotary_dim).
template <class T = double>
  requires std::floating_point<T>
posenc::matrix<T> rotation_matrix(double position, std::size_t head_dim, const options& opt = {}) {
  constexpr std::string_view where = "rotary::rotation_matrix";
  options o = opt;
  o.head_dim = head_dim;
  posenc::detail::require(head_dim >= 2, where, "head_dim: expected head_dim >= 2, got ", head_dim);
  (void)checked::extent(head_dim, where, "head_dim");
  const auto p = detail::make_plan(head_dim, o, where);
  posenc::detail::require<non_finite_error>(std::isfinite(position), where, "position: expected a finite position, got ",
                                            position);
  const std::size_t h = p.rotary_dim / 2;
  const auto w = sinusoidal::detail::frequencies_wide(h, detail::table_options(o));
  auto R = posenc::detail::allocate_matrix<posenc::matrix<T>>(head_dim, head_dim, where, "head_dim", "head_dim");
  R.setIdentity();
  for (std::size_t k = 0; k < h; ++k) {
    sinusoidal::detail::work_t<T> s, c;
    sinusoidal::detail::sincos_angle(static_cast<sinusoidal::detail::wide>(position) * w[k], s, c);
    const auto ia = static_cast<Eigen::Index>(o.layout == layout::interleaved ? 2 * k : k);
    const auto ib = static_cast<Eigen::Index>(o.layout == layout::interleaved ? 2 * k + 1 : k + h);
    R(ia, ia) = static_cast<T>(c);
    R(ia, ib) = static_cast<T>(-s);
    R(ib, ia) = static_cast<T>(s);
    R(ib, ib) = static_cast<T>(c);
  }
  return R;
}

}  // namespace posenc::rotary
