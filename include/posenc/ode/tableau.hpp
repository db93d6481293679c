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

/// The shape of a scheme: a name, an order and a tableau (consistency is checked separately).
template <class Sch>
concept scheme_shape = requires {
  { Sch::name } -> std::convertible_to<std::string_view>;
  { Sch::order } -> std::convertible_to<int>;
  requires is_tableau<std::remove_cvref_t<decltype(Sch::coefficients)>>::value;
};

/// The scheme names an embedded pair (error_order and fsal), consistent or not.
template <class Sch>
concept embedded_shape = scheme_shape<Sch> && requires {
  { Sch::error_order } -> std::convertible_to<int>;
  { Sch::fsal } -> std::convertible_to<bool>;
};

inline constexpr long double tableau_tolerance = 1e-15L;

constexpr bool near(long double x, long double y, long double tol) noexcept { return (x - y) <= tol && (y - x) <= tol; }

// One predicate per condition, so that a compiler's "constraints not satisfied" note names the
// condition a malformed tableau breaks.
template <class Sch>
constexpr bool tableau_strictly_lower_triangular() noexcept {
  constexpr auto& t = Sch::coefficients;
  for (std::size_t i = 0; i < t.stages; ++i)
    for (std::size_t j = i; j < t.stages; ++j)
      if (t.a[i][j] != 0) return false;
  return true;
}
template <class Sch>
constexpr bool tableau_row_sums_equal_c(long double tol) noexcept {
  constexpr auto& t = Sch::coefficients;
  for (std::size_t i = 0; i < t.stages; ++i) {
    long double row = 0;
    for (std::size_t j = 0; j < t.stages; ++j) row += t.a[i][j];
    if (!near(row, t.c[i], tol)) return false;
  }
  return true;
}
template <class Sch>
constexpr bool tableau_weights_sum_to_one(long double tol) noexcept {
  constexpr auto& t = Sch::coefficients;
  long double sb = 0, sbl = 0;
  for (std::size_t i = 0; i < t.stages; ++i) {
    sb += t.b[i];
    sbl += t.b_low[i];
  }
  if (!near(sb, 1, tol)) return false;
  if constexpr (embedded_shape<Sch>) return near(sbl, 1, tol);
  return true;
}
/// FSAL pairs: the last row of a equals b and c_last = 1 (trivially true for other schemes).
template <class Sch>
constexpr bool tableau_fsal_row_is_b(long double tol) noexcept {
  if constexpr (embedded_shape<Sch>) {
    if constexpr (Sch::fsal) {
      constexpr auto& t = Sch::coefficients;
      constexpr std::size_t s = t.stages;
      if (!near(t.c[s - 1], 1, tol)) return false;
      for (std::size_t j = 0; j < s; ++j)
        if (!near(t.a[s - 1][j], t.b[j], tol)) return false;
    }
  }
  return true;
}
}  // namespace detail

/// Structural checks any consistent explicit tableau passes: a strictly lower triangular,
/// c_i = sum_j a_ij (row-sum condition), sum b = 1 (and sum b_low = 1 for an embedded pair),
/// and for FSAL the last row of a = b, c_last = 1. Each comparison is to within `tol` (a NaN tol
/// makes every comparison fail, so the result is false; an infinite one makes every one hold).
template <detail::scheme_shape Sch>
constexpr bool tableau_is_consistent(long double tol = detail::tableau_tolerance) noexcept {
  return detail::tableau_strictly_lower_triangular<Sch>() && detail::tableau_row_sums_equal_c<Sch>(tol) &&
         detail::tableau_weights_sum_to_one<Sch>(tol) && detail::tableau_fsal_row_is_b<Sch>(tol);
}

/// A scheme usable by the fixed-step engine: a name, an order and a consistent tableau (every
/// condition of tableau_is_consistent, to within 1e-15). A malformed tableau is rejected at
/// compile time; the compiler's note names the condition it breaks, e.g.
/// `detail::tableau_row_sums_equal_c<my_scheme>(...)` evaluated to false.
template <class Sch>
concept ExplicitScheme = detail::scheme_shape<Sch> && detail::tableau_strictly_lower_triangular<Sch>() &&
                         detail::tableau_row_sums_equal_c<Sch>(detail::tableau_tolerance) &&
                         detail::tableau_weights_sum_to_one<Sch>(detail::tableau_tolerance) &&
                         detail::tableau_fsal_row_is_b<Sch>(detail::tableau_tolerance);

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

}  // namespace posenc::ode
