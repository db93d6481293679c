// SPDX-License-Identifier: MIT
// Rotary position embedding (RoPE) applied on the Thrust device system: the rows of a device table
// (rows = positions, columns = heads * head_dim) are rotated in place, pair by pair, by the angles
// x_i theta_k, theta_k = base^(-2k / rotary_dim), with posenc::rotary's options, validation and
// pair layouts (interleaved (2k, 2k+1) or half (k, k + rotary_dim/2)).
//
//   posenc::device::rotary::apply_rotary_inplace(device_table<T>& x, opt)
//   posenc::device::rotary::apply_rotary(const device_table<T>& x, opt) -> device_table<T>
//
// The angles are the exact phases of posenc/device/sinusoidal.hpp (double-double
// position x frequency, exact reduction), the rotation is done in double and rounded to T once,
// as on the host. One pass: one work item per (row, head, pair).
#pragma once

#include <thrust/copy.h>
#include <thrust/for_each.h>
#include <thrust/iterator/counting_iterator.h>

#include <cstddef>
#include <string_view>

#include <posenc/device/sinusoidal.hpp>
#include <posenc/device/table.hpp>
#include <posenc/rotary/rotary.hpp>

namespace posenc::device {

namespace detail {
template <class T>
struct rotary_fn {
  row_phases::view ph;
  T* x;
  std::size_t cols, heads, head_dim, half;
  bool interleaved;
  POSENC_HD void operator()(std::size_t e) const {
    const std::size_t k = e % half;
    const std::size_t rest = e / half;
    const std::size_t head = rest % heads, i = rest / heads;
    const exact_phase p = ph.at(i, k);
    T* v = x + i * cols + head * head_dim;
    const std::size_t ia = interleaved ? 2 * k : k, ib = interleaved ? 2 * k + 1 : k + half;
    const double a = static_cast<double>(v[ia]), b = static_cast<double>(v[ib]);
    v[ia] = static_cast<T>(a * p.c - b * p.s);
    v[ib] = static_cast<T>(a * p.s + b * p.c);
  }
};
}  // namespace detail

namespace rotary {

using posenc::rotary::layout;
using posenc::rotary::options;

/// Rotate every row of x in place on the device: row i by the angles of position
/// first_position + i * position_step. Same validation as posenc::rotary::apply_rotary_inplace.
template <class T>
  requires std::floating_point<T>
void apply_rotary_inplace(device_table<T>& x, const options& opt = {}) {
  constexpr std::string_view where = "device::rotary::apply_rotary";
  const auto p = posenc::rotary::detail::make_plan(x.cols(), opt, where);
  const std::size_t half = p.rotary_dim / 2;
  if (x.rows() == 0) return;
  const auto w = posenc::rotary::detail::options_frequencies(p, opt).inv_freq;
  const detail::row_phases ph(w, x.rows(), opt.first_position, opt.position_step, where);
  const detail::rotary_fn<T> f{ph.get(), x.data(), x.cols(), p.heads, p.head_dim, half,
                               opt.layout == layout::interleaved};
  ::thrust::for_each(::thrust::device, ::thrust::counting_iterator<std::size_t>(0),
                     ::thrust::counting_iterator<std::size_t>(x.rows() * p.heads * half), f);
}

/// The rotated copy of x (a new device table).
template <class T>
  requires std::floating_point<T>
[[nodiscard]] device_table<T> apply_rotary(const device_table<T>& x, const options& opt = {}) {
  device_table<T> y(x.rows(), x.cols());
  if (x.size() != 0) ::thrust::copy(::thrust::device, x.data(), x.data() + x.size(), y.data());
  apply_rotary_inplace(y, opt);
  return y;
}

}  // namespace rotary
}  // namespace posenc::device
