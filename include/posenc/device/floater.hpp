// SPDX-License-Identifier: MIT
// FLOATER's forward pass on the Thrust device system: the N x d batch of block states (one row per
// block, all sharing theta) integrated with the ODE core on a thrust::device_vector state
// (backend::thrust: each stage sum one pass), the MLP right-hand side h(t, p) = W2 [sigma(W1 [p; t]
// + b1); t] + b2 written for the device as two batched passes per evaluation:
//   pass 1: z[n, j] = sigma(b1_j + t w1_t,j + sum_k W1[j, k] p[n, k])    (N * hidden work items)
//   pass 2: dp[n, c] = b2_c + t w2_t,c + sum_j W2[c, j] z[n, j]         (N * d work items)
// Correctness first: each work item is a plain dot product (no tiling, no tensor cores); see
// docs/device.md for the cost model.
//
//   posenc::device::floater::flow<T>            the right-hand side (parameters uploaded once)
//   posenc::device::floater::forward<T, Scheme>(theta, p0, L, opt) -> device_table<T>, L x (N d):
//       row i = all blocks at t_i (the layout of posenc::floater::encoder::trajectory()),
//       with the host encoder's grid, substeps, validation and non-finite check.
#pragma once

#include <thrust/copy.h>
#include <thrust/device_vector.h>
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
#include <posenc/floater/encoder.hpp>  // the host encoder, whose trajectory() this reproduces
#include <posenc/floater/flow.hpp>
#include <posenc/floater/forward.hpp>
#include <posenc/floater/options.hpp>
#include <posenc/ode/grid.hpp>
#include <posenc/ode/schemes.hpp>
#include <posenc/ode/stepper.hpp>

namespace posenc::device {

namespace detail {

/// out[n, o] = act(sum_i W[o, i] in[n, i] + (b[o] + t wt[o])) (no activation when `activate` is false).
template <class T>
struct dense_layer_fn {
  const T* in;
  const T* w;
  const T* b;
  const T* wt;  // nullptr: no time input
  T* out;
  std::size_t in_dim, out_dim;
  T t;
  posenc::floater::activation act;
  bool activate;
  POSENC_HD void operator()(std::size_t e) const {
    const std::size_t r = e / out_dim, o = e % out_dim;
    const T* x = in + r * in_dim;
    const T* wo = w + o * in_dim;
    T acc = 0;
    for (std::size_t i = 0; i < in_dim; ++i) acc += x[i] * wo[i];
    const T c = wt != nullptr ? b[o] + t * wt[o] : b[o];
    const T z = acc + c;
    out[e] = activate ? posenc::floater::activate(act, z) : z;
  }
};

}  // namespace detail

namespace floater {

using posenc::floater::activation;
using posenc::floater::mlp;
using posenc::floater::options;

/// FLOATER's dynamics on the device for a batch state (N blocks x d, row-major, in one
/// thrust::device_vector<T>). Parameters are uploaded once, at construction.
template <class T>
class flow {
 public:
  using state_type = ::thrust::device_vector<T>;

  flow() = default;
  explicit flow(const mlp<T>& theta) {
    constexpr std::string_view where = "device::floater::flow";
    theta.validate(where);
    m_d = theta.dim();
    m_hidden = theta.hidden();
    m_act = theta.act;
    m_time1 = theta.time1;
    m_time2 = theta.time2;
    const posenc::matrix<T> w1 = theta.w1, w2 = theta.w2;
    m_w1 = posenc::detail::upload<T>(w1.data(), m_hidden * m_d, where);
    m_w2 = posenc::detail::upload<T>(w2.data(), m_d * m_hidden, where);
    m_w1_t = posenc::detail::upload<T>(theta.w1_t.data(), m_hidden, where);
    m_w2_t = posenc::detail::upload<T>(theta.w2_t.data(), m_d, where);
    m_b1 = posenc::detail::upload<T>(theta.b1.data(), m_hidden, where);
    m_b2 = posenc::detail::upload<T>(theta.b2.data(), m_d, where);
  }

  [[nodiscard]] std::size_t dim() const noexcept { return m_d; }
  [[nodiscard]] std::size_t hidden() const noexcept { return m_hidden; }

  /// dydt = h(t, y) for every block (row) of y; y.size() must be a multiple of d.
  void operator()(double t, const state_type& y, state_type& dydt) {
    constexpr std::string_view where = "device::floater::flow";
    posenc::detail::require<shape_error>(m_d != 0 && y.size() % m_d == 0 && dydt.size() == y.size(), where,
                                         "state: expected N blocks of d = ", m_d, " values (and dydt alike), got ",
                                         y.size(), " and ", dydt.size());
    const std::size_t N = y.size() / m_d;
    posenc::detail::guarded_resize(m_z, N * m_hidden, where);
    const T tt = static_cast<T>(t);
    auto raw = [](const auto& v) { return posenc::detail::raw_data(v); };
    const auto cit = [](std::size_t v) { return ::thrust::counting_iterator<std::size_t>(v); };
    ::thrust::for_each(::thrust::device, cit(0), cit(N * m_hidden),
                       detail::dense_layer_fn<T>{raw(y), raw(m_w1), raw(m_b1), m_time1 ? raw(m_w1_t) : nullptr,
                                                 posenc::detail::raw_data(m_z), m_d, m_hidden, tt, m_act, true});
    ::thrust::for_each(::thrust::device, cit(0), cit(N * m_d),
                       detail::dense_layer_fn<T>{posenc::detail::raw_data(m_z), raw(m_w2), raw(m_b2),
                                                 m_time2 ? raw(m_w2_t) : nullptr,
                                                 posenc::detail::raw_data(dydt), m_hidden, m_d, tt, m_act, false});
  }

 private:
  std::size_t m_d = 0, m_hidden = 0;
  activation m_act = activation::relu;
  bool m_time1 = true, m_time2 = true;
  ::thrust::device_vector<T> m_w1, m_w2, m_w1_t, m_w2_t, m_b1, m_b2, m_z;
};

/// The FLOATER table of L positions for the N blocks of p0 (N x d), on the device: row i of the
/// result is p(t_i) of every block (N d values, block n at columns n d .. n d + d - 1), row 0 =
/// p0. The grid (t_i = i delta or opt.times), the substeps per interval (the last one landing
/// exactly on t_i), the scheme and the interval loop (posenc::floater::detail::integrate_intervals) are
/// those of posenc::floater::encoder, as is the validation: posenc::floater::detail::check_initial_state,
/// detail::check_options and check_length, the functions the host encoder calls, so both reject the same
/// input with the same error type and message. opt.threads is validated like the host's and
/// otherwise ignored (the device system decides).
template <class T, class Scheme = ode::schemes::rk4_38>
[[nodiscard]] device_table<T> forward(const mlp<T>& theta, const posenc::table<T>& p0, std::size_t L,
                                      const options& opt = {}) {
  constexpr std::string_view where = "device::floater::forward";
  // the host encoder's checks, by the same functions: same error types and messages
  posenc::floater::detail::check_initial_state(theta, p0, where);
  const ode::grid grid = posenc::floater::detail::check_options(opt, where);
  const std::size_t nd = static_cast<std::size_t>(p0.size());
  posenc::floater::check_length(grid, L, nd, where);
  flow<T> f(theta);
  using state = ::thrust::device_vector<T>;
  state y = posenc::detail::upload<T>(p0.data(), nd, where);  // row-major N x d
  device_table<T> out(L, nd);
  const T* py = posenc::detail::raw_data(y);
  ::thrust::copy(::thrust::device, py, py + nd, out.data());
  ode::explicit_rk<Scheme, state> stepper(y);
  posenc::floater::detail::integrate_intervals(
      grid, opt.substeps, 1, L, stepper, y, [&](std::size_t, auto&& run) { run(f); },
      [](const state& s) { return posenc::backend::thrust::all_finite(s); },
      [&](std::size_t i, const state& s) {
        const T* yi = posenc::detail::raw_data(s);  // y may have been swapped: re-read
        ::thrust::copy(::thrust::device, yi, yi + nd, out.data() + i * nd);
      },
      where);
  return out;
}

}  // namespace floater
}  // namespace posenc::device
