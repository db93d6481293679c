// SPDX-License-Identifier: MIT
// TUPE's positional attention terms on the Thrust device system, with the host's configuration,
// parameters, validation and semantics (posenc/tupe/tupe.hpp: the reference code's LayerNorm,
// biased projections, per-head scale, T5 buckets and [CLS] reset).
//
//   posenc::device_head_stack<T>                        [H, n, n] in device memory
//   posenc::to_host(device_head_stack<T>)               -> posenc::tupe::head_stack<T> (explicit copy)
//   posenc::device::tupe::bucket_matrix(n, spec)        -> device_table<int>, B_ij = bucket(j - i)
//   posenc::device::tupe::relative_bias(n, spec, rab)   -> [H, n, n], b_h(j - i) = rab(bucket(j - i), h)
//   posenc::device::tupe::positional_bias(cfg, p, n)    -> [H, n, n], the full term (TUPE-A / TUPE-R,
//                                                          any cls_reset), from p.pos or a given table
//
// Each stage is one batched pass: LayerNorm (one work item per position row), the two projections
// (one per output element), the 2n - 1 relative values per head, the [H, n, n] term (one per
// element: a d/H dot product, the relative value, the [CLS] reset). Correctness first: the
// products are plain per-element dot products, not a tiled GEMM (see docs/device.md).
// The bucket function is the host's posenc::tupe::detail::bucket_unchecked (POSENC_HD).
#pragma once

#include <thrust/copy.h>
#include <thrust/for_each.h>
#include <thrust/iterator/counting_iterator.h>

#include <Eigen/Core>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include <posenc/adapters/thrust.hpp>
#include <posenc/device/table.hpp>
#include <posenc/core/error.hpp>
#include <posenc/core/hd.hpp>
#include <posenc/tupe/relative_bucket.hpp>
#include <posenc/tupe/tupe.hpp>

namespace posenc {

/// H stacked row-major n x n matrices in device memory; element (h, i, j) at h n^2 + i n + j
/// (the layout of posenc::tupe::head_stack and of a contiguous [H, n, n] tensor).
template <class T>
class device_head_stack {
 public:
  using value_type = T;
  device_head_stack() = default;
  device_head_stack(std::size_t heads, std::size_t n) { resize(heads, n); }
  void resize(std::size_t heads, std::size_t n) {
    constexpr std::string_view where = "device_head_stack::resize";
    const std::size_t nn = detail::checked_elements(n, n, where);
    detail::guarded_resize(m_values, detail::checked_elements(heads, nn, where), where);
    m_heads = heads;
    m_n = n;
  }
  [[nodiscard]] std::size_t heads() const noexcept { return m_heads; }
  /// The sequence length n.
  [[nodiscard]] std::size_t size() const noexcept { return m_n; }
  [[nodiscard]] ::thrust::device_vector<T>& values() noexcept { return m_values; }
  [[nodiscard]] const ::thrust::device_vector<T>& values() const noexcept { return m_values; }
  [[nodiscard]] T* data() noexcept { return posenc::detail::raw_data(m_values); }
  [[nodiscard]] const T* data() const noexcept { return posenc::detail::raw_data(m_values); }

 private:
  ::thrust::device_vector<T> m_values;
  std::size_t m_heads = 0, m_n = 0;
};

/// Copy a device [H, n, n] stack into a host posenc::tupe::head_stack<T>.
template <class T>
[[nodiscard]] tupe::head_stack<T> to_host(const device_head_stack<T>& dev) {
  tupe::head_stack<T> host(static_cast<Eigen::Index>(dev.heads()), static_cast<Eigen::Index>(dev.size()));
  if (!dev.values().empty()) ::thrust::copy(dev.values().begin(), dev.values().end(), host.data());
  return host;
}

namespace device {
namespace detail {

struct bucket_matrix_fn {
  posenc::tupe::bucket_spec spec;
  int* out;
  std::size_t n;
  POSENC_HD void operator()(std::size_t e) const {
    const std::size_t i = e / n, j = e % n;
    out[e] = posenc::tupe::detail::bucket_unchecked(static_cast<std::int64_t>(j) - static_cast<std::int64_t>(i), spec);
  }
};

/// toe[h (2n-1) + k] = rab[bucket(k - (n-1)) * H + h]: the 2n - 1 relative values of each head.
template <class T>
struct relative_values_fn {
  posenc::tupe::bucket_spec spec;
  const T* rab;
  T* toe;
  std::size_t n, heads;
  POSENC_HD void operator()(std::size_t e) const {
    const std::size_t len = 2 * n - 1;
    const std::size_t h = e / len, k = e % len;
    const int b = posenc::tupe::detail::bucket_unchecked(static_cast<std::int64_t>(k) - static_cast<std::int64_t>(n - 1),
                                                         spec);
    toe[e] = rab[static_cast<std::size_t>(b) * heads + h];
  }
};

/// out[h, i, j] = toe[h, j - i + n - 1] (Toeplitz expansion of each head).
template <class T>
struct expand_relative_fn {
  const T* toe;
  T* out;
  std::size_t n;
  POSENC_HD void operator()(std::size_t e) const {
    const std::size_t nn = n * n;
    const std::size_t h = e / nn, r = e % nn, i = r / n, j = r % n;
    out[e] = toe[h * (2 * n - 1) + (j + n - 1 - i)];
  }
};

/// LayerNorm of row r (biased variance, eps inside the root, as torch.nn.LayerNorm and the host).
template <class T>
struct layer_norm_fn {
  const T* pos;
  const T* gamma;
  const T* beta;
  T* x;
  std::size_t d;
  T eps;
  POSENC_HD void operator()(std::size_t r) const {
    const T* p = pos + r * d;
    T sum = 0;
    for (std::size_t c = 0; c < d; ++c) sum += p[c];
    const T mean = sum / static_cast<T>(d);
    T var = 0;
    for (std::size_t c = 0; c < d; ++c) var += (p[c] - mean) * (p[c] - mean);
    var = var / static_cast<T>(d);
    const T rstd = T(1) / posenc::detail::sqrt_hd(var + eps);
    for (std::size_t c = 0; c < d; ++c) x[r * d + c] = ((p[c] - mean) * rstd) * gamma[c] + beta[c];
  }
};

/// out[r, c] = s b[c] + sum_k (s x[r, k]) W[c, k] (nn.Linear, the host's order of scaling).
template <class T>
struct project_fn {
  const T* x;
  const T* w;
  const T* b;  // nullptr: no bias
  T* out;
  std::size_t d;
  T s;
  POSENC_HD void operator()(std::size_t e) const {
    const std::size_t r = e / d, c = e % d;
    const T* xr = x + r * d;
    const T* wc = w + c * d;
    T acc = b != nullptr ? s * b[c] : T(0);
    for (std::size_t k = 0; k < d; ++k) acc += (s * xr[k]) * wc[k];
    out[e] = acc;
  }
};

/// The [H, n, n] term: relative value (if any) + q_{first+i, h} . k_{first+j, h}, then the
/// [CLS] reset of row 0 (wins at (0, 0)) and column 0.
template <class T>
struct positional_bias_fn {
  const T* q;
  const T* k;
  const T* toe;  // nullptr: TUPE-A
  T* out;
  std::size_t n, d, dh, first;
  int cls;  // 0 off, 1 reference, 2 free
  const T* rab;
  std::size_t heads, bucket_row0, bucket_col0;  // reference reset: rab rows nb/2 and nb
  const T* theta1;                              // free reset: [H]
  const T* theta2;
  POSENC_HD T dot(std::size_t h, std::size_t qi, std::size_t kj) const {
    const T* a = q + qi * d + h * dh;
    const T* b = k + kj * d + h * dh;
    T acc = 0;
    for (std::size_t c = 0; c < dh; ++c) acc += a[c] * b[c];
    return acc;
  }
  POSENC_HD void operator()(std::size_t e) const {
    const std::size_t nn = n * n;
    const std::size_t h = e / nn, r = e % nn, i = r / n, j = r % n;
    if (cls == 1 && (i == 0 || j == 0)) {
      // theta1 = v(p_0, p_0) (row 0), theta2 = v(p_1, p_1) (column 0), plus their buckets
      const std::size_t row = i == 0 ? 0 : 1;
      const T rel = rab != nullptr ? rab[(i == 0 ? bucket_row0 : bucket_col0) * heads + h] : T(0);
      out[e] = dot(h, row, row) + rel;
      return;
    }
    if (cls == 2 && (i == 0 || j == 0)) {
      out[e] = i == 0 ? theta1[h] : theta2[h];
      return;
    }
    const T rel = toe != nullptr ? toe[h * (2 * n - 1) + (j + n - 1 - i)] : T(0);
    out[e] = rel + dot(h, first + i, first + j);
  }
};

inline std::size_t as_size(Eigen::Index v) { return static_cast<std::size_t>(v); }

template <class T>
::thrust::device_vector<T> upload_matrix(const Eigen::Ref<const posenc::matrix<T>>& m, std::string_view where) {
  const posenc::matrix<T> rm = m;
  return posenc::detail::upload<T>(rm.data(), as_size(rm.size()), where);
}

}  // namespace detail

namespace tupe {

using posenc::tupe::bucket_spec;
using posenc::tupe::cls_reset;
using posenc::tupe::config;
using posenc::tupe::parameters;

/// The n x n bucket matrix B_ij = bucket(j - i) on the device (the host's bucket function).
[[nodiscard]] inline device_table<int> bucket_matrix(Eigen::Index n, const bucket_spec& spec = {}) {
  constexpr std::string_view where = "device::tupe::bucket_matrix";
  posenc::tupe::validate(spec, where);
  posenc::detail::require(n >= 1, where, "n: expected a sequence length >= 1, got ", n);
  const std::size_t un = detail::as_size(n);
  device_table<int> out(un, un);
  ::thrust::for_each(::thrust::device, ::thrust::counting_iterator<std::size_t>(0),
                     ::thrust::counting_iterator<std::size_t>(un * un), detail::bucket_matrix_fn{spec, out.data(), un});
  return out;
}

/// The relative term [H, n, n]: out(h, i, j) = rab(bucket(j - i), h), with
/// rab = relative_attention_bias ([num_buckets + 1, H] or [num_buckets, H], as nn.Embedding stores it).
template <class T>
[[nodiscard]] device_head_stack<T> relative_bias(Eigen::Index n, const bucket_spec& spec,
                                                 const Eigen::Ref<const posenc::matrix<T>>& rab) {
  constexpr std::string_view where = "device::tupe::relative_bias";
  posenc::tupe::validate(spec, where);
  posenc::detail::require(n >= 1, where, "n: expected a sequence length >= 1, got ", n);
  posenc::detail::require<shape_error>(rab.rows() >= spec.num_buckets && rab.cols() >= 1, where,
                                       "relative_attention_bias: expected at least ", spec.num_buckets,
                                       " rows (num_buckets) and one column per head, got [", rab.rows(), ", ",
                                       rab.cols(), "]");
  posenc::detail::require_finite(rab, where, "relative_attention_bias");
  const std::size_t un = detail::as_size(n), H = detail::as_size(rab.cols());
  const auto d_rab = detail::upload_matrix<T>(rab, where);
  auto toe = posenc::detail::device_buffer<T>(H * (2 * un - 1), where);
  ::thrust::for_each(::thrust::device, ::thrust::counting_iterator<std::size_t>(0),
                     ::thrust::counting_iterator<std::size_t>(H * (2 * un - 1)),
                     detail::relative_values_fn<T>{spec, posenc::detail::raw_data(d_rab),
                                                   posenc::detail::raw_data(toe), un, H});
  device_head_stack<T> out(H, un);
  ::thrust::for_each(::thrust::device, ::thrust::counting_iterator<std::size_t>(0),
                     ::thrust::counting_iterator<std::size_t>(out.values().size()),
                     detail::expand_relative_fn<T>{posenc::detail::raw_data(toe), out.data(), un});
  return out;
}

/// The positional term [H, n, n] of a length-n sequence on the device, reading the position
/// table `pos` (config::rows_needed(n) rows are used). Same validation and semantics as
/// posenc::tupe::positional_bias; the result stays on the device (to_host() brings it back).
template <class T>
[[nodiscard]] device_head_stack<T> positional_bias(const config& cfg, const parameters<T>& p,
                                                   const Eigen::Ref<const posenc::table<T>>& pos, Eigen::Index n) {
  constexpr std::string_view where = "device::tupe::positional_bias";
  posenc::tupe::validate_parameters(cfg, p, pos, n, where);
  const std::size_t un = detail::as_size(n), d = detail::as_size(cfg.d), H = detail::as_size(cfg.heads);
  const std::size_t dh = detail::as_size(cfg.head_dim()), rows = detail::as_size(cfg.rows_needed(n));
  const std::size_t first = detail::as_size(cfg.first_row());

  // uploads (explicit, once per call)
  const posenc::table<T> prows = pos.topRows(cfg.rows_needed(n));
  const auto d_pos = posenc::detail::upload<T>(prows.data(), rows * d, where);
  const auto d_gamma = posenc::detail::upload<T>(p.pos_ln_weight.data(), d, where);
  const auto d_beta = posenc::detail::upload<T>(p.pos_ln_bias.data(), d, where);
  const auto d_wq = detail::upload_matrix<T>(p.pos_q_weight, where);
  const auto d_wk = detail::upload_matrix<T>(p.pos_k_weight, where);
  const auto d_bq = posenc::detail::upload<T>(p.pos_q_bias.data(), detail::as_size(p.pos_q_bias.size()), where);
  const auto d_bk = posenc::detail::upload<T>(p.pos_k_bias.data(), detail::as_size(p.pos_k_bias.size()), where);

  // LayerNorm, then the two projections (queries carry the scale s)
  auto x = posenc::detail::device_buffer<T>(rows * d, where);
  auto q = posenc::detail::device_buffer<T>(rows * d, where);
  auto k = posenc::detail::device_buffer<T>(rows * d, where);
  auto raw = [](auto& v) { return posenc::detail::raw_data(v); };
  const auto cit = [](std::size_t v) { return ::thrust::counting_iterator<std::size_t>(v); };
  ::thrust::for_each(::thrust::device, cit(0), cit(rows),
                     detail::layer_norm_fn<T>{raw(d_pos), raw(d_gamma), raw(d_beta), raw(x), d,
                                              static_cast<T>(cfg.ln_eps)});
  const T s = static_cast<T>(cfg.scaling());
  ::thrust::for_each(::thrust::device, cit(0), cit(rows * d),
                     detail::project_fn<T>{raw(x), raw(d_wq), d_bq.empty() ? nullptr : raw(d_bq), raw(q), d, s});
  ::thrust::for_each(::thrust::device, cit(0), cit(rows * d),
                     detail::project_fn<T>{raw(x), raw(d_wk), d_bk.empty() ? nullptr : raw(d_bk), raw(k), d, T(1)});

  // relative values per head (TUPE-R)
  ::thrust::device_vector<T> d_rab, toe;
  if (cfg.relative) {
    d_rab = detail::upload_matrix<T>(p.relative_attention_bias, where);
    toe = posenc::detail::device_buffer<T>(H * (2 * un - 1), where);
    ::thrust::for_each(::thrust::device, cit(0), cit(H * (2 * un - 1)),
                       detail::relative_values_fn<T>{cfg.buckets, raw(d_rab), raw(toe), un, H});
  }
  ::thrust::device_vector<T> th1, th2;
  if (cfg.cls == cls_reset::free) {
    th1 = posenc::detail::upload<T>(p.theta1.data(), H, where);
    th2 = posenc::detail::upload<T>(p.theta2.data(), H, where);
  }

  device_head_stack<T> out(H, un);
  detail::positional_bias_fn<T> f{};
  f.q = raw(q);
  f.k = raw(k);
  f.toe = cfg.relative ? raw(toe) : nullptr;
  f.out = out.data();
  f.n = un;
  f.d = d;
  f.dh = dh;
  f.first = first;
  f.cls = cfg.cls == cls_reset::off ? 0 : (cfg.cls == cls_reset::reference ? 1 : 2);
  f.rab = cfg.relative ? raw(d_rab) : nullptr;
  f.heads = H;
  f.bucket_row0 = static_cast<std::size_t>(cfg.buckets.num_buckets / 2);
  f.bucket_col0 = static_cast<std::size_t>(cfg.buckets.num_buckets);
  f.theta1 = cfg.cls == cls_reset::free ? raw(th1) : nullptr;
  f.theta2 = cfg.cls == cls_reset::free ? raw(th2) : nullptr;
  ::thrust::for_each(::thrust::device, cit(0), cit(out.values().size()), f);
  return out;
}

/// The positional term [H, n, n] from the parameters' own table p.pos.
template <class T>
[[nodiscard]] device_head_stack<T> positional_bias(const config& cfg, const parameters<T>& p, Eigen::Index n) {
  return positional_bias<T>(cfg, p, p.pos, n);
}

}  // namespace tupe
}  // namespace device
}  // namespace posenc
