// SPDX-License-Identifier: MIT
// Rotary position embedding (RoPE, Su et al. 2021): the sinusoidal encoding's rotation applied to
// query/key vectors. Row i of a [positions x (heads * head_dim)] matrix is rotated, pair by pair,
// by the angle x_i * theta_k, theta_k = base^(-2k / rotary_dim), so that
// <R(m) q, R(n) k> = q^T R(n - m) k depends only on n - m. The rotation is the one of
// posenc/rotary/apply.hpp (exact phases, no float32 angle products); these are its row-matrix
// entry points.
#pragma once

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <span>
#include <string_view>
#include <vector>

#include <posenc/core/error.hpp>
#include <posenc/tensor/table.hpp>
#include <posenc/rotary/apply.hpp>
#include <posenc/rotary/frequencies.hpp>
#include <posenc/sinusoidal/sinusoidal.hpp>

namespace posenc::rotary {

struct options {
  rotary::layout layout = rotary::layout::interleaved;
  double base = 10000.0;          ///< > 0 and finite
  std::size_t head_dim = 0;       ///< columns per head; 0: the whole row is one head
  std::size_t rotary_dim = 0;     ///< leading columns of each head that are rotated (even); 0: head_dim
  double first_position = 0.0;    ///< position of row 0
  double position_step = 1.0;     ///< row i has position first_position + i * position_step
};

/// The heads of a row of `cols` columns under an options: head_dim, rotary_dim and heads.
struct row_heads {
  std::size_t head_dim, rotary_dim, heads;
};

/// Validate opt for rows of `cols` columns (base, positions, layout, head_dim dividing cols, an
/// even rotary_dim <= head_dim); throws invalid_argument / shape_error / non_finite_error naming the
/// field, with `where` as the caller.
inline row_heads validate(std::size_t cols, const options& opt, std::string_view where = "rotary::options") {
  numeric::check_frequency_base(opt.base, where, "options.base");
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

/// The frequencies of an options, omega_k = base^(-2k / rotary_dim) with inv_freq_lo (rotary_dim
/// from rotary::validate; any base > 0). Throws non_finite_error / invalid_argument for a base that
/// is not finite and > 0, invalid_argument for a rotary_dim that is not even and >= 2, size_error
/// for a rotary_dim above posenc::max_extent (the checks rotary::validate makes, for a direct call).
inline frequencies options_frequencies(const options& opt, std::size_t rotary_dim) {
  constexpr std::string_view where = "rotary::options_frequencies";
  numeric::check_frequency_base(opt.base, where, "options.base");
  posenc::detail::require(rotary_dim >= 2 && rotary_dim % 2 == 0, where,
                          "rotary_dim: expected an even rotary_dim >= 2, got ", rotary_dim);
  (void)checked::extent(rotary_dim, where, "rotary_dim");
  frequencies f = to_frequencies(
      {detail::default_omega(rotary_dim / 2, rotary_dim, detail::exact_log(static_cast<numeric::wide>(opt.base))), 1.0});
  // in double, as every rotation uses them (a base near 0 gives frequencies beyond double's range)
  (void)rotary::validate(f, where, "options.base: the frequencies base^(-2k / rotary_dim), freqs");
  return f;
}

namespace detail {
inline row_heads make_plan(std::size_t cols, const options& opt, std::string_view where) {
  return rotary::validate(cols, opt, where);
}
inline frequencies options_frequencies(const row_heads& p, const options& opt) {
  return rotary::options_frequencies(opt, p.rotary_dim);
}

/// Rotate the rows of x (rows x heads*head_dim, row stride `stride`) with the apply.hpp core.
template <class T>
void apply_inplace(T* x, std::size_t rows, std::size_t stride, const row_heads& p, const options& opt,
                   std::span<const double> positions) {
  using W = numeric::rotation_work_t<T>;
  const frequencies f = options_frequencies(p, opt);
  apply_options ao;
  ao.layout = opt.layout;
  ao.check_finite = false;
  const rotary::detail::apply_plan rp{p.rotary_dim / 2, p.head_dim, opt.layout == layout::interleaved, false, false};
  const numeric::wide x0 = opt.first_position, dx = opt.position_step;
  auto row = [&](std::size_t r) { return x + r * stride; };
  auto pos = [&](std::size_t r) {
    return positions.empty() ? x0 + static_cast<numeric::wide>(r) * dx : static_cast<numeric::wide>(positions[r]);
  };
  (void)rotary::detail::rotate_rows<T, W>(rows, row, p.heads, static_cast<std::ptrdiff_t>(p.head_dim), row, 0, 0, pos,
                                          false, f, ao, rp);
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
    for (std::size_t i = 0; i < positions.size(); ++i)
      posenc::detail::require<non_finite_error>(std::isfinite(positions[i]), where,
                                                "positions: expected finite positions, got ", positions[i],
                                                " at index ", i);
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
  // the head_dim x head_dim result through the checked door before any frequency is computed
  auto R = posenc::detail::allocate_matrix<posenc::matrix<T>>(head_dim, head_dim, where, "head_dim", "head_dim");
  const frequencies f = detail::options_frequencies(p, o);
  R.setIdentity();
  for (std::size_t k = 0; k < h; ++k) {
    std::conditional_t<std::is_same_v<T, long double>, long double, double> s, c;
    if constexpr (std::is_same_v<T, long double>)
      numeric::sincos_angle(static_cast<numeric::wide>(position) * f.inv_freq[k], s, c);
    else  // the exact phase, as apply_rotary's double path
      numeric::sincos_phase(position, 0.0, rotary::frequency3_of(f, k), 1.0, s, c);
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
