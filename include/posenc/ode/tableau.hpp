// SPDX-License-Identifier: MIT
// The scheme axis: a scheme is constexpr data, a Butcher tableau, run by one generic
// explicit Runge-Kutta engine (posenc/ode/stepper.hpp). Adding a scheme is adding a struct:
//
//   struct my_scheme {
//     static constexpr std::string_view name = "my_scheme";
//     static constexpr int order = 3;
//     static constexpr posenc::ode::tableau<3> coefficients = {.a = {...}, .b = {...}, .c = {...}};
//   };
//
// An embedded pair (adaptive stepping) also gives `error_order`, the lower-order weights in
// `coefficients.b_low`, and `fsal` (first same as last: the last stage is f(t+h, y_new)).
// A scheme with its own continuous extension gives `dense`: b_i(theta) = sum_p dense[i][p] theta^(p+1);
// others get cubic Hermite dense output. See docs/scheme.md.
#pragma once

#include <posenc/version.hpp>

#include <array>
#include <concepts>
#include <cstddef>
#include <string_view>
#include <type_traits>

namespace posenc::ode {

/// Coefficients of an explicit s-stage Runge-Kutta method; a is strictly lower triangular.
template <std::size_t S>
struct tableau {
  static constexpr std::size_t stages = S;
  std::array<std::array<long double, S>, S> a{};
  std::array<long double, S> b{};
  std::array<long double, S> c{};
  std::array<long double, S> b_low{};  // embedded weights of order error_order (zeros if none)
};

namespace detail {
template <class T>
struct is_tableau : std::false_type {};
template <std::size_t S>
struct is_tableau<tableau<S>> : std::true_type {};
}  // namespace detail

/// A scheme usable by the fixed-step engine.
template <class Sch>
concept ExplicitScheme = requires {
  { Sch::name } -> std::convertible_to<std::string_view>;
  { Sch::order } -> std::convertible_to<int>;
  requires detail::is_tableau<std::remove_cvref_t<decltype(Sch::coefficients)>>::value;
};

/// An embedded pair: usable by adaptive stepping.
template <class Sch>
concept EmbeddedScheme = ExplicitScheme<Sch> && requires {
  { Sch::error_order } -> std::convertible_to<int>;
  { Sch::fsal } -> std::convertible_to<bool>;
};

/// A scheme with its own continuous extension (dense output of the scheme's order).
template <class Sch>
concept SchemeWithDenseOutput = EmbeddedScheme<Sch> && requires {
  Sch::dense[0][0];
  requires std::tuple_size_v<std::remove_cvref_t<decltype(Sch::dense)>> == Sch::coefficients.stages;
};

template <ExplicitScheme Sch>
inline constexpr std::size_t stages_v = std::remove_cvref_t<decltype(Sch::coefficients)>::stages;

/// Is the scheme first-same-as-last (its last stage evaluates f at the new point)?
template <class Sch>
constexpr bool is_fsal() noexcept {
  if constexpr (EmbeddedScheme<Sch>) return Sch::fsal;
  else return false;
}

/// Structural checks any consistent explicit tableau passes: a strictly lower triangular,
/// c_i = sum_j a_ij (row-sum condition), sum b = 1, and for FSAL last row of a = b, c_last = 1.
template <ExplicitScheme Sch>
constexpr bool tableau_is_consistent(long double tol = 1e-15L) noexcept {
  constexpr auto& t = Sch::coefficients;
  constexpr std::size_t s = stages_v<Sch>;
  auto near = [tol](long double x, long double y) { return (x - y) <= tol && (y - x) <= tol; };
  long double sb = 0, sbl = 0;
  for (std::size_t i = 0; i < s; ++i) {
    long double row = 0;
    for (std::size_t j = 0; j < s; ++j) {
      if (j >= i && t.a[i][j] != 0) return false;
      row += t.a[i][j];
    }
    if (!near(row, t.c[i])) return false;
    sb += t.b[i];
    sbl += t.b_low[i];
  }
  if (!near(sb, 1)) return false;
  if constexpr (EmbeddedScheme<Sch>) {
    if (!near(sbl, 1)) return false;
    if constexpr (Sch::fsal) {
      if (!near(t.c[s - 1], 1)) return false;
      for (std::size_t j = 0; j < s; ++j)
        if (!near(t.a[s - 1][j], t.b[j])) return false;
    }
  }
  return true;
}

}  // namespace posenc::ode
