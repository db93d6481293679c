// SPDX-License-Identifier: MIT
// ALiBi (posenc/alibi/alibi.hpp) on the Thrust device system: the bias added in place to dense
// [batch, heads, q_len, k_len] or ragged [q_tokens, heads, k_max] scores held in device memory.
//
//   posenc::device::alibi::add_bias(scores, slopes, q_offsets, opt)
//   posenc::device::alibi::add_bias_ragged(scores, slopes, cu_seqlens_q, cu_seqlens_k, opt)
//
// Same views, forms, options, validation and messages as the host; the views hold device
// pointers, slopes / offsets / cu_seqlens are host spans (validated on the host, then uploaded).
// One work item per score: bias m (j - i) formed in double, added in double, rounded once to T
// (float or double on the device; the CUDA half types are not supported yet). Integer distances
// below 2^53 are exact, so on the CPP/OMP systems the results equal the host's bitwise; nvcc may
// fuse the multiply and add (one rounding fewer), so on CUDA they are within 1 ulp of the host's.
#pragma once

#include <thrust/device_vector.h>
#include <thrust/for_each.h>
#include <thrust/iterator/counting_iterator.h>

#include <cmath>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <string_view>
#include <vector>

#include <posenc/adapters/thrust.hpp>
#include <posenc/alibi/alibi.hpp>
#include <posenc/core/hd.hpp>
#include <posenc/device/table.hpp>

namespace posenc::device {

namespace detail {

using posenc::detail::fabs_hd;  // |x| on host and device (core/hd.hpp)

/// One work item per score element.
template <class T>
struct alibi_fn {
  T* s;
  const double* m;
  const std::int64_t* q_offsets;  // dense: per sequence or null (k_len - q_len); ragged: null
  const std::int64_t* cu_q;       // ragged only
  const std::int64_t* cu_k;       // ragged only
  std::size_t batch, heads, q_len, k_len;  // ragged: q_len unused, k_len = k_max
  std::ptrdiff_t s0, s1, s2;
  int form;  // posenc::alibi::bias_form
  bool mask;
  POSENC_HD void operator()(std::size_t e) const {
    const std::size_t j = e % k_len;
    std::size_t rest = e / k_len;
    std::int64_t i = 0;
    std::ptrdiff_t off = 0;
    std::size_t h = 0;
    if (cu_q == nullptr) {
      const std::size_t r = rest % q_len;
      rest /= q_len;
      h = rest % heads;
      const std::size_t b = rest / heads;
      const std::int64_t o =
          q_offsets ? q_offsets[b] : static_cast<std::int64_t>(k_len) - static_cast<std::int64_t>(q_len);
      i = o + static_cast<std::int64_t>(r);
      off = static_cast<std::ptrdiff_t>(b) * s0 + static_cast<std::ptrdiff_t>(h) * s1 +
            static_cast<std::ptrdiff_t>(r) * s2;
    } else {
      h = rest % heads;
      const auto t = static_cast<std::int64_t>(rest / heads);
      std::size_t lo = 0, hi = batch;  // the last sequence with cu_q[lo] <= t
      while (hi - lo > 1) {
        const std::size_t mid = lo + (hi - lo) / 2;
        if (cu_q[mid] <= t)
          lo = mid;
        else
          hi = mid;
      }
      const std::int64_t ql = cu_q[lo + 1] - cu_q[lo], kl = cu_k[lo + 1] - cu_k[lo];
      if (static_cast<std::int64_t>(j) >= kl) return;
      i = kl - ql + (t - cu_q[lo]);
      off = static_cast<std::ptrdiff_t>(t) * s0 + static_cast<std::ptrdiff_t>(h) * s1;
    }
    const double di = static_cast<double>(i), dj = static_cast<double>(j), mh = m[h];
    double b = 0;
    if (form == static_cast<int>(posenc::alibi::bias_form::relative))
      b = mh * (dj - di);
    else if (form == static_cast<int>(posenc::alibi::bias_form::key_position))
      b = mh * dj;
    else
      b = -mh * fabs_hd(dj - di);
    T& x = s[off + static_cast<std::ptrdiff_t>(j)];
    const double v = static_cast<double>(x) + b;
    x = (mask && dj > di) ? -std::numeric_limits<T>::infinity() : static_cast<T>(v);
  }
};

}  // namespace detail

namespace alibi {

using posenc::alibi::bias_form;
using posenc::alibi::bias_options;
using posenc::alibi::ragged_scores_view;
using posenc::alibi::scores_view;
using posenc::alibi::slopes;

/// posenc::alibi::add_bias on the device (scores hold device pointers; slopes, q_offsets on the host).
template <class T>
  requires std::floating_point<T>
void add_bias(scores_view<T> scores, std::span<const double> m, std::span<const std::int64_t> q_offsets = {},
              const bias_options& opt = {}) {
  constexpr std::string_view where = "device::alibi::add_bias";
  posenc::alibi::validate_dense(scores, m, q_offsets, opt, where);
  const std::size_t n = scores.elements();
  if (n == 0) return;
  const auto dm = posenc::detail::upload<double>(m.data(), m.size(), where);
  ::thrust::device_vector<std::int64_t> doff;
  if (!q_offsets.empty()) doff = posenc::detail::upload<std::int64_t>(q_offsets.data(), q_offsets.size(), where);
  const detail::alibi_fn<T> f{scores.data,
                              posenc::detail::raw_data(dm),
                              q_offsets.empty() ? nullptr : posenc::detail::raw_data(doff),
                              nullptr,
                              nullptr,
                              scores.sizes[0],
                              scores.sizes[1],
                              scores.sizes[2],
                              scores.sizes[3],
                              scores.strides[0],
                              scores.strides[1],
                              scores.strides[2],
                              static_cast<int>(opt.form),
                              opt.causal_mask};
  ::thrust::for_each(::thrust::device, ::thrust::counting_iterator<std::size_t>(0),
                     ::thrust::counting_iterator<std::size_t>(n), f);
}

/// posenc::alibi::add_bias_ragged on the device (scores hold device pointers; the rest on the host).
template <class T, std::integral I>
  requires std::floating_point<T>
void add_bias_ragged(ragged_scores_view<T> scores, std::span<const double> m, std::span<const I> cu_seqlens_q,
                     std::span<const I> cu_seqlens_k, const bias_options& opt = {}) {
  constexpr std::string_view where = "device::alibi::add_bias_ragged";
  posenc::alibi::validate_ragged(scores, m, cu_seqlens_q, cu_seqlens_k, opt, where);
  const std::size_t n = scores.elements();
  if (n == 0) return;
  const auto dm = posenc::detail::upload<double>(m.data(), m.size(), where);
  const std::vector<std::int64_t> cq(cu_seqlens_q.begin(), cu_seqlens_q.end()), ck(cu_seqlens_k.begin(), cu_seqlens_k.end());
  const auto dq = posenc::detail::upload<std::int64_t>(cq.data(), cq.size(), where);
  const auto dk = posenc::detail::upload<std::int64_t>(ck.data(), ck.size(), where);
  const detail::alibi_fn<T> f{scores.data,
                              posenc::detail::raw_data(dm),
                              nullptr,
                              posenc::detail::raw_data(dq),
                              posenc::detail::raw_data(dk),
                              cq.size() - 1,
                              scores.sizes[1],
                              0,
                              scores.sizes[2],
                              scores.strides[0],
                              scores.strides[1],
                              0,
                              static_cast<int>(opt.form),
                              opt.causal_mask};
  ::thrust::for_each(::thrust::device, ::thrust::counting_iterator<std::size_t>(0),
                     ::thrust::counting_iterator<std::size_t>(n), f);
}

}  // namespace alibi
}  // namespace posenc::device
