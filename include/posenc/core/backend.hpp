// SPDX-License-Identifier: MIT
// The backend axis: where and how the arithmetic on a state runs. A backend is a class with
// static member functions; BackendFor<B, S> checks it for a state type S. One pass over memory
// per call: the stepper's stage sums are a single fused linear_combination each.
//
//   B::linear_combination(out, c, x)   out = sum_n c[n] * (*x[n])      (c: std::array<T, N>,
//                                      x: std::array<const S*, N>; out may alias any x[n])
//   B::fill(out, v)                    every scalar of out = v
//   B::norm_inf(x)                     max_i |x_i|, NaN if any x_i is NaN
//   B::scaled_rms(e, y0, y1, atol, rtol)
//                                      sqrt(mean_i (e_i / (atol + rtol max(|y0_i|, |y1_i|)))^2),
//                                      the error norm of adaptive stepping (Hairer, Norsett & Wanner)
//   B::all_finite(x)                   no NaN or Inf in x
//
// The default backend of a state comes from state_traits<S>::default_backend.
#pragma once

#include <posenc/version.hpp>

#include <array>
#include <cmath>
#include <concepts>
#include <cstddef>
#include <ranges>
#include <type_traits>
#include <tuple>
#include <utility>

#include <posenc/core/error.hpp>
#include <posenc/core/hd.hpp>
#include <posenc/core/state_traits.hpp>

namespace posenc {

template <class B, class S>
concept BackendFor = StateSpace<S> && requires(S& out, const S& a, state_value_t<S> c) {
  B::linear_combination(out, std::array<state_value_t<S>, 2>{c, c}, std::array<const S*, 2>{&a, &a});
  B::fill(out, c);
  { B::norm_inf(a) } -> std::convertible_to<state_value_t<S>>;
  { B::scaled_rms(a, a, a, c, c) } -> std::convertible_to<state_value_t<S>>;
  { B::all_finite(a) } -> std::convertible_to<bool>;
};

namespace detail {
/// Contiguous storage of floating-point scalars (std::vector, std::array, ...).
template <class S>
concept contiguous_float_range =
    std::ranges::contiguous_range<S> && std::ranges::sized_range<S> &&
    std::floating_point<std::remove_cvref_t<std::ranges::range_value_t<S>>>;

/// out[i] = c0 p0[i] + (c1 p1[i] + (...)) over m scalars; coefficients and pointers are locals
/// (by value), so a store to out[i] cannot (in the compiler's view) change them and the loop
/// vectorises without reloads. out is one of the inputs element for element, or disjoint from
/// them (the contract of linear_combination), so no iteration depends on another and the loop
/// is vectorised without run-time overlap checks.
template <class V, std::size_t N, std::size_t... J>
POSENC_ALWAYS_INLINE inline void sum_products(V* o, std::size_t m, std::array<V, N> cc, std::array<const V*, N> p,
                                              std::index_sequence<J...>) noexcept {
  POSENC_INDEPENDENT_ITERATIONS
  for (std::size_t i = 0; i < m; ++i) o[i] = ((cc[J] * p[J][i]) + ...);
}

/// c0 *x0 + (c1 *x1 + (... + c_{N-1} *x_{N-1})) for scalars.
template <class T, std::size_t N, std::size_t... J>
POSENC_ALWAYS_INLINE constexpr T fold_products(const std::array<T, N>& c, const std::array<const T*, N>& x,
                                               std::index_sequence<J...>) noexcept {
  return ((c[J] * *x[J]) + ...);
}

template <class T>
constexpr T nan_propagating_max(T m, T v) noexcept {
  return (v > m || v != v) ? v : m;  // once NaN, stays NaN: NaN > x is false, NaN != NaN is true
}
}  // namespace detail

namespace backend {

/// Plain loops on the host, for scalars and contiguous ranges of scalars.
struct serial {
  // Every linear_combination sums right to left, c0 x0 + (c1 x1 + (... + c_{N-1} x_{N-1})), as the
  // contiguous overload's fold, backend::eigen and backend::thrust do: a scalar state and a
  // one-element range take bitwise the same fixed steps (tests/core/concepts.test.cpp).
  template <std::floating_point T, std::size_t N>
  POSENC_ALWAYS_INLINE static constexpr void linear_combination(T& out, const std::array<T, N>& c,
                                                                const std::array<const T*, N>& x) noexcept {
    // A right fold of the N products, written out (a loop over the pointer array was gathered
    // into vector registers by g++'s SLP vectoriser: ~2x the instructions of a hand-written step).
    out = detail::fold_products(c, x, std::make_index_sequence<N>{});
  }

  template <detail::contiguous_float_range S, class T, std::size_t N>
  POSENC_ALWAYS_INLINE static void linear_combination(S& out, const std::array<T, N>& c,
                                                      const std::array<const S*, N>& x) noexcept {
    using V = std::ranges::range_value_t<S>;
    std::array<V, N> cc{};
    std::array<const V*, N> p{};
    for (std::size_t j = 0; j < N; ++j) {
      cc[j] = static_cast<V>(c[j]);
      p[j] = std::ranges::data(*x[j]);
    }
    detail::sum_products(std::ranges::data(out), std::ranges::size(out), cc, p, std::make_index_sequence<N>{});
  }

  template <std::floating_point T>
  static constexpr void fill(T& out, T v) noexcept { out = v; }
  template <detail::contiguous_float_range S, class T>
  static void fill(S& out, T v) noexcept {
    for (auto& o : out) o = v;
  }

  template <std::floating_point T>
  static T norm_inf(const T& x) noexcept { return std::abs(x); }
  template <detail::contiguous_float_range S>
  static auto norm_inf(const S& x) noexcept {
    std::remove_cvref_t<std::ranges::range_value_t<S>> m = 0;
    for (const auto& v : x) m = detail::nan_propagating_max(m, std::abs(v));
    return m;
  }

  template <std::floating_point T>
  static T scaled_rms(const T& e, const T& y0, const T& y1, T atol, T rtol) noexcept {
    return std::abs(e) / (atol + rtol * std::max(std::abs(y0), std::abs(y1)));
  }
  template <detail::contiguous_float_range S, class T>
  static T scaled_rms(const S& e, const S& y0, const S& y1, T atol, T rtol) noexcept {
    const std::size_t m = std::ranges::size(e);
    if (m == 0) return T(0);
    const auto* pe = std::ranges::data(e);
    const auto* p0 = std::ranges::data(y0);
    const auto* p1 = std::ranges::data(y1);
    T acc = 0;
    for (std::size_t i = 0; i < m; ++i) {
      const T s = atol + rtol * std::max(std::abs(p0[i]), std::abs(p1[i]));
      const T r = pe[i] / s;
      acc += r * r;
    }
    return std::sqrt(acc / static_cast<T>(m));
  }

  template <std::floating_point T>
  static bool all_finite(const T& x) noexcept { return std::isfinite(x); }
  template <detail::contiguous_float_range S>
  static bool all_finite(const S& x) noexcept {
    for (const auto& v : x)
      if (!std::isfinite(v)) return false;
    return true;
  }
};

}  // namespace backend

// ---- free functions: the public spelling of the backend operations ----------------------------

/// out = c0*x0 + c1*x1 + ... (pairs of coefficient and state), one fused pass, with backend B.
/// Every state must have the shape of out (shape_error naming the pair: a shorter state was read
/// past its end); the backend's own linear_combination is the unchecked kernel. A NaN or Inf
/// coefficient or element gives NaN/Inf in out, as IEEE arithmetic does.
template <class B, class S, class... Rest>
void linear_combination(S& out, Rest&&... pairs) {
  static_assert(sizeof...(Rest) % 2 == 0 && sizeof...(Rest) > 0,
                "posenc::linear_combination: pass (coefficient, state) pairs");
  constexpr std::size_t N = sizeof...(Rest) / 2;
  using T = state_value_t<S>;
  std::array<T, N> c{};
  std::array<const S*, N> x{};
  auto args = std::forward_as_tuple(pairs...);
  [&]<std::size_t... J>(std::index_sequence<J...>) {
    ((c[J] = static_cast<T>(std::get<2 * J>(args)), x[J] = &std::get<2 * J + 1>(args)), ...);
  }(std::make_index_sequence<N>{});
  if constexpr (requires { state_traits<S>::same_shape(out, out); }) {
    for (std::size_t j = 0; j < N; ++j)
      if (!state_traits<S>::same_shape(out, *x[j]))
        detail::fail<shape_error>("posenc::linear_combination", "state x", j, " (pair ", j, ": ",
                                  state_traits<S>::size(*x[j]), " scalars) does not have the shape of out (",
                                  state_traits<S>::size(out), " scalars)");
  }
  B::linear_combination(out, c, x);
}

}  // namespace posenc
