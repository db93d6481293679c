// SPDX-License-Identifier: MIT
// Rotary position embedding (RoPE) applied on the Thrust device system: the rows of a device table
// (rows = positions, columns = heads * head_dim) are rotated in place, pair by pair, by the angles
// x_i theta_k, theta_k = base^(-2k / rotary_dim), with posenc::rotary's options, validation and
// pair layouts (interleaved (2k, 2k+1) or half (k, k + rotary_dim/2)).
//
//   posenc::device::rotary::apply_rotary_inplace(device_table<T>& x, opt)
//   posenc::device::rotary::apply_rotary(const device_table<T>& x, opt) -> device_table<T>
//   posenc::device::rotary::apply_inplace(q, k, freqs, offsets, opt)        dense [batch, heads, seq, head_dim]
//   posenc::device::rotary::apply_ragged_inplace(q, k, cu_seqlens, offsets, freqs, opt)
//                                                           ragged [tokens, heads, head_dim]
//
// apply_inplace / apply_ragged_inplace are posenc::rotary's (posenc/rotary/apply.hpp) with the same
// views, options, validation and messages: the views hold device pointers (raw pointers of the
// device system's memory), cu_seqlens and offsets are host spans (validated on the host, then
// uploaded). One work item per (token, pair): the exact phase of its position (double-double,
// as below) is computed once and every head of q and k at that token is rotated with it (one pass
// over q and k). Storage float or double on the device (math in double); the CUDA half types
// are not supported yet. The NaN/Inf check (options.check_finite) is a separate read pass on the
// device, before the rotation (so a failing call leaves q and k untouched).
//
// The angles are the exact phases of posenc/device/sinusoidal.hpp (double-double
// position x frequency, exact reduction), the rotation is done in double and rounded to T once,
// as on the host. One pass: one work item per (row, head, pair).
#pragma once

#include <thrust/copy.h>
#include <thrust/functional.h>
#include <thrust/transform_reduce.h>
#include <thrust/for_each.h>
#include <thrust/iterator/counting_iterator.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include <posenc/core/hd.hpp>
#include <posenc/device/sinusoidal.hpp>
#include <posenc/device/table.hpp>
#include <posenc/rotary/apply.hpp>
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
    using posenc::detail::mul_rn;  // each product rounded, as the host kernels do
    v[ia] = static_cast<T>(mul_rn(a, p.c) - mul_rn(b, p.s));
    v[ib] = static_cast<T>(mul_rn(a, p.s) + mul_rn(b, p.c));
  }
};

using posenc::detail::exp_hd;  // exp on host and device (core/hd.hpp)

/// The rows of an application: row r of `rows` is either (dense) sequence r / seq, index r % seq,
/// at position offsets[r / seq] + r % seq, or (ragged) token r of the sequence b with
/// cu[b] <= r < cu[b + 1], at position offsets[b] + r - cu[b].
struct row_map {
  const std::int64_t* offsets;  // per sequence (device), or null: 0
  const std::int64_t* cu;       // ragged: batch + 1 (device); dense: null
  std::size_t batch, seq;
  std::ptrdiff_t q0, q2, k0, k2;  // dense: strides of batch and seq; ragged: token stride in q0/k0
  POSENC_HD void locate(std::size_t r, std::ptrdiff_t& qoff, std::ptrdiff_t& koff, std::int64_t& pos) const {
    if (cu == nullptr) {
      const std::size_t b = r / seq, s = r % seq;
      qoff = static_cast<std::ptrdiff_t>(b) * q0 + static_cast<std::ptrdiff_t>(s) * q2;
      koff = static_cast<std::ptrdiff_t>(b) * k0 + static_cast<std::ptrdiff_t>(s) * k2;
      pos = (offsets ? offsets[b] : 0) + static_cast<std::int64_t>(s);
    } else {
      // the last b with cu[b] <= r (empty sequences skipped)
      std::size_t lo = 0, hi = batch;  // cu[lo] <= r < cu[hi]
      const auto t = static_cast<std::int64_t>(r);
      while (hi - lo > 1) {
        const std::size_t mid = lo + (hi - lo) / 2;
        if (cu[mid] <= t)
          lo = mid;
        else
          hi = mid;
      }
      qoff = static_cast<std::ptrdiff_t>(r) * q0;
      koff = static_cast<std::ptrdiff_t>(r) * k0;
      pos = (offsets ? offsets[lo] : 0) + (t - cu[lo]);
    }
  }
};

/// One work item per (row, pair): the exact phase once, then every head of q and k.
template <class T>
struct apply_fn {
  row_map rows;
  T* q;
  T* k;
  std::size_t qh, kh, half;
  std::ptrdiff_t q1, k1;  // head strides
  bool interleaved;
  const double* w_hi;
  const double* w_lo;
  const double* logzeta;  // xPos: log(zeta_k) / scale_base, or null
  double factor, center;
  POSENC_HD void operator()(std::size_t e) const {
    const std::size_t r = e / half, kk = e % half;
    std::ptrdiff_t qo = 0, ko = 0;
    std::int64_t pos = 0;
    rows.locate(r, qo, ko, pos);
    const exact_phase ph = phase_of(0.0, 1.0, static_cast<double>(pos), w_hi[kk], w_lo[kk]);
    double up = factor, down = factor;
    if (logzeta != nullptr) {
      const double x = (static_cast<double>(pos) - center) * logzeta[kk];
      up = factor * exp_hd(x);
      down = factor * exp_hd(-x);
    }
    const std::size_t ia = interleaved ? 2 * kk : kk, ib = interleaved ? 2 * kk + 1 : kk + half;
    const double cq = ph.c * up, sq = ph.s * up, ck = ph.c * down, sk = ph.s * down;
    for (std::size_t h = 0; h < qh; ++h) {
      T* v = q + qo + static_cast<std::ptrdiff_t>(h) * q1;
      const double a = static_cast<double>(v[ia]), b = static_cast<double>(v[ib]);
      v[ia] = static_cast<T>(posenc::detail::mul_rn(a, cq) - posenc::detail::mul_rn(b, sq));
      v[ib] = static_cast<T>(posenc::detail::mul_rn(a, sq) + posenc::detail::mul_rn(b, cq));
    }
    for (std::size_t h = 0; h < kh; ++h) {
      T* v = k + ko + static_cast<std::ptrdiff_t>(h) * k1;
      const double a = static_cast<double>(v[ia]), b = static_cast<double>(v[ib]);
      v[ia] = static_cast<T>(posenc::detail::mul_rn(a, ck) - posenc::detail::mul_rn(b, sk));
      v[ib] = static_cast<T>(posenc::detail::mul_rn(a, sk) + posenc::detail::mul_rn(b, ck));
    }
  }
};

/// 1 if an input pair of row/pair e (any head of q or k) is NaN or Inf.
template <class T>
struct non_finite_fn {
  apply_fn<T> f;
  POSENC_HD int operator()(std::size_t e) const {
    const std::size_t r = e / f.half, kk = e % f.half;
    std::ptrdiff_t qo = 0, ko = 0;
    std::int64_t pos = 0;
    f.rows.locate(r, qo, ko, pos);
    const std::size_t ia = f.interleaved ? 2 * kk : kk, ib = f.interleaved ? 2 * kk + 1 : kk + f.half;
    int bad = 0;
    for (std::size_t h = 0; h < f.qh; ++h) {
      const T* v = f.q + qo + static_cast<std::ptrdiff_t>(h) * f.q1;
      bad |= !(v[ia] - v[ia] == T(0)) || !(v[ib] - v[ib] == T(0));
    }
    for (std::size_t h = 0; h < f.kh; ++h) {
      const T* v = f.k + ko + static_cast<std::ptrdiff_t>(h) * f.k1;
      bad |= !(v[ia] - v[ia] == T(0)) || !(v[ib] - v[ib] == T(0));
    }
    return bad;
  }
};

/// Device copies of the frequencies (double-double) and xPos exponents, kept alive for a launch.
struct apply_buffers {
  ::thrust::device_vector<double> w_hi, w_lo, logzeta;
  ::thrust::device_vector<std::int64_t> offsets, cu;
};

template <class T>
void launch_apply(apply_fn<T> f, std::size_t rows, const posenc::rotary::frequencies& freqs,
                  const posenc::rotary::apply_options& opt, apply_buffers& buf, std::string_view where) {
  const std::size_t half = freqs.inv_freq.size();
  std::vector<double> hi(half), lo(half), lz;
  for (std::size_t k = 0; k < half; ++k) {  // the exact frequency (inv_freq + inv_freq_lo) as hi + lo
    const posenc::numeric::frequency3 w = posenc::rotary::frequency3_of(freqs, k);
    hi[k] = w.hi;
    lo[k] = w.mid;
  }
  buf.w_hi = posenc::detail::upload<double>(hi.data(), half, where);
  buf.w_lo = posenc::detail::upload<double>(lo.data(), half, where);
  f.w_hi = posenc::detail::raw_data(buf.w_hi);
  f.w_lo = posenc::detail::raw_data(buf.w_lo);
  f.logzeta = nullptr;
  if (opt.xpos.enabled) {
    for (std::size_t k = 0; k < half; ++k)  // zeta_k written once: rotary/apply_plan.hpp
      lz.push_back(static_cast<double>(std::log(posenc::rotary::detail::xpos_zeta_wide(k, 2 * half, opt.xpos.gamma)) /
                                       static_cast<long double>(opt.xpos.scale_base)));
    buf.logzeta = posenc::detail::upload<double>(lz.data(), half, where);
    f.logzeta = posenc::detail::raw_data(buf.logzeta);
  }
  f.factor = freqs.attention_factor;
  f.center = opt.xpos.center;
  f.half = half;
  f.interleaved = opt.layout == posenc::rotary::layout::interleaved;
  const std::size_t n = rows * half;
  if (n == 0) return;
  const ::thrust::counting_iterator<std::size_t> first(0), last(n);
  if (opt.check_finite) {
    const int bad = ::thrust::transform_reduce(::thrust::device, first, last, non_finite_fn<T>{f}, 0,
                                               ::thrust::maximum<int>());
    posenc::detail::require<non_finite_error>(bad == 0, where,
                                              "q/k: expected finite values, found NaN or Inf (q and k are unchanged)");
  }
  ::thrust::for_each(::thrust::device, first, last, f);
}
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
  const auto p = posenc::rotary::validate(x.cols(), opt, where);
  const std::size_t half = p.rotary_dim / 2;
  if (x.rows() == 0) return;
  const auto w = posenc::rotary::options_frequencies(opt, p.rotary_dim).inv_freq;
  const detail::row_phases ph(w, x.rows(), opt.first_position, opt.position_step, where);
  const detail::rotary_fn<T> f{ph.get(), x.data(), x.cols(), p.heads, p.head_dim, half,
                               opt.layout == layout::interleaved};
  ::thrust::for_each(::thrust::device, ::thrust::counting_iterator<std::size_t>(0),
                     ::thrust::counting_iterator<std::size_t>(x.rows() * p.heads * half), f);
}

using posenc::rotary::apply_options;
using posenc::rotary::dense_view;
using posenc::rotary::frequencies;
using posenc::rotary::ragged_view;
using posenc::rotary::xpos_options;

/// posenc::rotary::apply_inplace on the device: q and k ([batch, heads, seq, head_dim]) hold device
/// pointers; offsets (one per sequence, or none) is a host span. Storage float or double.
template <class T>
  requires std::floating_point<T>
void apply_inplace(dense_view<T> q, dense_view<T> k, const frequencies& freqs,
                   std::span<const std::int64_t> offsets = {}, const apply_options& opt = {}) {
  constexpr std::string_view where = "device::rotary::apply_inplace";
  posenc::rotary::validate_apply(q, k, freqs, offsets, opt, where);
  if (q.elements() == 0 && k.elements() == 0) return;  // nothing to touch: no batch x seq launch (zero heads)
  const bool has_k = k.data != nullptr || k.elements() != 0;
  detail::apply_buffers buf;
  if (!offsets.empty()) buf.offsets = posenc::detail::upload<std::int64_t>(offsets.data(), offsets.size(), where);
  detail::apply_fn<T> f{};
  f.rows = {offsets.empty() ? nullptr : posenc::detail::raw_data(buf.offsets), nullptr, q.sizes[0], q.sizes[2],
            q.strides[0], q.strides[2], has_k ? k.strides[0] : 0, has_k ? k.strides[2] : 0};
  f.q = q.data;
  f.k = has_k ? k.data : nullptr;
  f.qh = q.sizes[1];
  f.kh = has_k ? k.sizes[1] : 0;
  f.q1 = q.strides[1];
  f.k1 = has_k ? k.strides[1] : 0;
  if (q.sizes[2] == 0) return;
  detail::launch_apply(f, q.sizes[0] * q.sizes[2], freqs, opt, buf, where);
}

/// posenc::rotary::apply_ragged_inplace on the device: q and k ([tokens, heads, head_dim]) hold
/// device pointers; cu_seqlens and offsets are host spans. Storage float or double.
template <class T, std::integral I>
  requires std::floating_point<T>
void apply_ragged_inplace(ragged_view<T> q, ragged_view<T> k, std::span<const I> cu_seqlens,
                          std::span<const I> offsets, const frequencies& freqs, const apply_options& opt = {}) {
  constexpr std::string_view where = "device::rotary::apply_ragged_inplace";
  posenc::rotary::validate_apply_ragged(q, k, cu_seqlens, offsets, freqs, opt, where);
  if (q.elements() == 0 && k.elements() == 0) return;  // nothing to touch: no launch over the tokens (zero heads)
  const bool has_k = k.data != nullptr || k.elements() != 0;
  detail::apply_buffers buf;
  const std::vector<std::int64_t> cu(cu_seqlens.begin(), cu_seqlens.end()), off(offsets.begin(), offsets.end());
  buf.cu = posenc::detail::upload<std::int64_t>(cu.data(), cu.size(), where);
  if (!off.empty()) buf.offsets = posenc::detail::upload<std::int64_t>(off.data(), off.size(), where);
  detail::apply_fn<T> f{};
  f.rows = {off.empty() ? nullptr : posenc::detail::raw_data(buf.offsets), posenc::detail::raw_data(buf.cu),
            cu.size() - 1, 0, q.strides[0], 0, has_k ? k.strides[0] : 0, 0};
  f.q = q.data;
  f.k = has_k ? k.data : nullptr;
  f.qh = q.sizes[1];
  f.kh = has_k ? k.sizes[1] : 0;
  f.q1 = q.strides[1];
  f.k1 = has_k ? k.strides[1] : 0;
  detail::launch_apply(f, q.sizes[0], freqs, opt, buf, where);
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
