// SPDX-License-Identifier: MIT
// The state axis: one customisation point, posenc::state_traits<S>, checked as a whole by the
// StateSpace concept. A type is an ODE state once state_traits is specialised for it.
//
// Members of a specialisation (see docs/state.md):
//   using value_type      = ...;   // the scalar the state holds (float, double, long double)
//   using default_backend = ...;   // the backend that runs arithmetic on S unless one is named
//   static std::size_t size(const S&);                 // number of scalars
//   static void resize_like(S& y, const S& x);         // give y the shape of x (may allocate)
//   static bool same_shape(const S& a, const S& b);
//
// The primary template is left undefined on purpose: states opt in.
#pragma once

#include <posenc/version.hpp>

#include <array>
#include <concepts>
#include <cstddef>
#include <type_traits>
#include <vector>

namespace posenc {

template <class S, class Enable = void>
struct state_traits;  // specialise for your state type

template <class S>
struct state_traits<const S> : state_traits<S> {};

/// A type usable as an ODE state (see state_traits).
template <class S>
concept StateSpace = requires(S& y, const S& x) {
  typename state_traits<S>::value_type;
  typename state_traits<S>::default_backend;
  requires std::floating_point<typename state_traits<S>::value_type>;
  { state_traits<S>::size(x) } -> std::convertible_to<std::size_t>;
  { state_traits<S>::same_shape(x, x) } -> std::convertible_to<bool>;
  state_traits<S>::resize_like(y, x);
};

template <class S>
using state_value_t = typename state_traits<std::remove_cvref_t<S>>::value_type;

template <class S>
using default_backend_t = typename state_traits<std::remove_cvref_t<S>>::default_backend;

namespace backend {
struct serial;
}

// ---- shipped: scalars, std::vector, std::array ---------------------------------------------

template <std::floating_point T>
struct state_traits<T> {
  using value_type = T;
  using default_backend = backend::serial;
  static constexpr std::size_t size(const T&) noexcept { return 1; }
  static constexpr void resize_like(T&, const T&) noexcept {}
  static constexpr bool same_shape(const T&, const T&) noexcept { return true; }
};

template <std::floating_point T, class Alloc>
struct state_traits<std::vector<T, Alloc>> {
  using value_type = T;
  using default_backend = backend::serial;
  static std::size_t size(const std::vector<T, Alloc>& x) noexcept { return x.size(); }
  static void resize_like(std::vector<T, Alloc>& y, const std::vector<T, Alloc>& x) { y.resize(x.size()); }
  static bool same_shape(const std::vector<T, Alloc>& a, const std::vector<T, Alloc>& b) noexcept {
    return a.size() == b.size();
  }
};

template <std::floating_point T, std::size_t N>
struct state_traits<std::array<T, N>> {
  using value_type = T;
  using default_backend = backend::serial;
  static constexpr std::size_t size(const std::array<T, N>&) noexcept { return N; }
  static constexpr void resize_like(std::array<T, N>&, const std::array<T, N>&) noexcept {}
  static constexpr bool same_shape(const std::array<T, N>&, const std::array<T, N>&) noexcept { return true; }
};

}  // namespace posenc
