// SPDX-License-Identifier: MIT
// xtensor adapter: xt::xarray, xt::xtensor<T, N> and xt::xtensor_fixed containers of float,
// double or long double are ODE states (any shape: a matrix state is a batch of rows), with
// backend::xtensor as their default backend. Every stage sum is one xtensor expression assigned
// with xt::noalias (one pass over memory, no temporary); the reductions are single passes over
// the contiguous storage. An xtensor expression (a + b, xt::sin(a), ...) is not a state; a
// right-hand side dydt = f(t, y) may return one: it is assigned into the stage buffer.
//
// Supported xtensor versions: 0.24 and 0.25 (headers <xtensor/xarray.hpp>, ...; tested with
// 0.24.3). xtensor 0.26 moved its headers to <xtensor/containers/...> and <xtensor/core/...>;
// those paths are used when present (not tested here).
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <concepts>
#include <cstddef>
#include <type_traits>
#include <utility>

#if __has_include(<xtensor/containers/xarray.hpp>)
#include <xtensor/containers/xarray.hpp>
#include <xtensor/containers/xfixed.hpp>
#include <xtensor/containers/xtensor.hpp>
#include <xtensor/core/xnoalias.hpp>
#else
#include <xtensor/xarray.hpp>
#include <xtensor/xfixed.hpp>
#include <xtensor/xnoalias.hpp>
#include <xtensor/xtensor.hpp>
#endif

#include <posenc/core/backend.hpp>
#include <posenc/core/state_traits.hpp>

namespace posenc {
namespace backend {
struct xtensor;
}

namespace detail {
template <class S>
struct is_xtensor_container : std::false_type {};
template <class EC, xt::layout_type L, class SC, class Tag>
struct is_xtensor_container<xt::xarray_container<EC, L, SC, Tag>> : std::true_type {};
template <class EC, std::size_t N, xt::layout_type L, class Tag>
struct is_xtensor_container<xt::xtensor_container<EC, N, L, Tag>> : std::true_type {};
template <class ET, class S, xt::layout_type L, bool SH, class Tag>
struct is_xtensor_container<xt::xfixed_container<ET, S, L, SH, Tag>> : std::true_type {};

/// An xtensor container of floating-point scalars (the states this adapter ships).
template <class S>
concept xtensor_state = is_xtensor_container<S>::value && std::floating_point<typename S::value_type>;
}  // namespace detail

/// xt::xarray, xt::xtensor<T, N>, xt::xtensor_fixed: value_type is the element type; shapes are
/// compared dimension by dimension; resize_like copies the shape (a no-op for fixed shapes).
template <detail::xtensor_state S>
struct state_traits<S> {
  using value_type = typename S::value_type;
  using default_backend = backend::xtensor;
  static std::size_t size(const S& x) noexcept { return static_cast<std::size_t>(x.size()); }
  static void resize_like(S& y, const S& x) {
    if (!same_shape(y, x)) y.resize(x.shape());
  }
  static bool same_shape(const S& a, const S& b) noexcept {
    const auto& sa = a.shape();
    const auto& sb = b.shape();
    return sa.size() == sb.size() && std::equal(sa.begin(), sa.end(), sb.begin());
  }
};

namespace backend {

/// xtensor expressions: each operation is one pass (an xt::noalias assignment of one fused
/// expression, or one loop over the contiguous storage for the reductions).
struct xtensor {
  template <detail::xtensor_state S, class T, std::size_t N>
  static void linear_combination(S& out, const std::array<T, N>& c, const std::array<const S*, N>& x) {
    using V = typename S::value_type;
    // Element-wise over operands of one shape: out may alias any x[n] (element i is read before
    // it is written), so xt::noalias is safe and skips xtensor's temporary.
    [&]<std::size_t... J>(std::index_sequence<J...>) {
      xt::noalias(out) = ((static_cast<V>(c[J]) * (*x[J])) + ...);
    }(std::make_index_sequence<N>{});
  }

  template <detail::xtensor_state S, class T>
  static void fill(S& out, T v) {
    out.fill(static_cast<typename S::value_type>(v));
  }

  template <detail::xtensor_state S>
  static typename S::value_type norm_inf(const S& x) noexcept {
    typename S::value_type m = 0;
    for (const auto& v : x.storage()) m = detail::nan_propagating_max(m, std::abs(v));
    return m;
  }

  template <detail::xtensor_state S, class T>
  static T scaled_rms(const S& e, const S& y0, const S& y1, T atol, T rtol) noexcept {
    const std::size_t m = static_cast<std::size_t>(e.size());
    if (m == 0) return T(0);
    const auto* pe = e.data();
    const auto* p0 = y0.data();
    const auto* p1 = y1.data();
    T acc = 0;
    for (std::size_t i = 0; i < m; ++i) {
      const T s = atol + rtol * std::max<T>(std::abs(p0[i]), std::abs(p1[i]));
      const T r = static_cast<T>(pe[i]) / s;
      acc += r * r;
    }
    return std::sqrt(acc / static_cast<T>(m));
  }

  template <detail::xtensor_state S>
  static bool all_finite(const S& x) noexcept {
    for (const auto& v : x.storage())
      if (!std::isfinite(v)) return false;
    return true;
  }
};

}  // namespace backend
}  // namespace posenc
