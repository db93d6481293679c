// SPDX-License-Identifier: MIT
// The state conformance suite: one templated set of checks that every shipped state type
// passes (scalars, std::vector, std::array, Eigen, xtensor, ...). Each check compares with a
// naive loop over the scalars (read through data()), or with a closed form.
//
// A state type S joins the suite by providing, in namespace posenc_test,
//   S make(tag<S>, int variant)      variant 0: the main shape, filled with test values;
//                                    variant 1: another shape (only used if resizable<S>)
//   constexpr bool resizable(tag<S>) whether two shapes exist
#pragma once

#include <doctest/doctest.h>

#include <array>
#include <cmath>
#include <concepts>
#include <cstddef>
#include <limits>
#include <type_traits>
#include <vector>

#include <posenc/core/backend.hpp>
#include <posenc/core/state_traits.hpp>
#include <posenc/ode/integrate.hpp>
#include <posenc/ode/schemes.hpp>

namespace posenc_test {

template <class S>
struct tag {};

/// Pointer to the first scalar (every shipped state is contiguous).
template <class S>
auto* data_of(S& s) {
  if constexpr (std::is_arithmetic_v<std::remove_const_t<S>>) return &s;
  else return s.data();
}

/// Deterministic test values: distinct, mixed signs, O(1).
template <class T>
T value_at(std::size_t i, int seed) {
  return static_cast<T>(std::sin(1.3 * static_cast<double>(i) + 0.7 * seed) * (1.0 + 0.1 * static_cast<double>(i % 7)));
}

template <class S>
void fill_values(S& s, int seed) {
  using T = posenc::state_value_t<S>;
  auto* p = data_of(s);
  const std::size_t n = posenc::state_traits<S>::size(s);
  for (std::size_t i = 0; i < n; ++i) p[i] = value_at<T>(i, seed);
}

template <class S>
void run_state_conformance() {
  using traits = posenc::state_traits<S>;
  using T = posenc::state_value_t<S>;
  using B = posenc::default_backend_t<S>;
  // Tolerances: the backend and the naive loop do the same operations per element, but the
  // backend may use FMA or vector reassociation: allow a few ulps of the magnitudes involved.
  const T eps = std::numeric_limits<T>::epsilon();

  // ---- traits members ----
  static_assert(posenc::StateSpace<S>);
  static_assert(std::floating_point<typename traits::value_type>);
  static_assert(posenc::BackendFor<B, S>);

  S x = make(tag<S>{}, 0);
  const std::size_t n = traits::size(x);
  REQUIRE(n > 0);

  // ---- resize_like / same_shape ----
  {
    S y{};
    traits::resize_like(y, x);
    CHECK(traits::same_shape(y, x));
    CHECK(traits::size(y) == n);
    S z = x;
    traits::resize_like(z, x);  // same shape: keeps the values
    CHECK(traits::same_shape(z, x));
    for (std::size_t i = 0; i < n; ++i) CHECK(data_of(z)[i] == data_of(x)[i]);
    if constexpr (resizable(tag<S>{})) {
      S other = make(tag<S>{}, 1);
      CHECK_FALSE(traits::same_shape(other, x));
      traits::resize_like(other, x);
      CHECK(traits::same_shape(other, x));
      CHECK(traits::size(other) == n);
    }
  }

  // ---- backend operations against naive loops ----
  S a = x, b = x, c = x, d = x, e = x, out = x;
  fill_values(a, 1);
  fill_values(b, 2);
  fill_values(c, 3);
  fill_values(d, 4);
  fill_values(e, 5);
  const std::array<const S*, 5> xs{&a, &b, &c, &d, &e};
  const std::array<T, 5> cs{T(0.5), T(-1.25), T(2), T(0.125), T(-3)};
  auto check_lc = [&](auto N) {
    constexpr std::size_t k = decltype(N)::value;
    std::array<T, k> ck{};
    std::array<const S*, k> xk{};
    for (std::size_t j = 0; j < k; ++j) ck[j] = cs[j], xk[j] = xs[j];
    B::linear_combination(out, ck, xk);
    for (std::size_t i = 0; i < n; ++i) {
      T ref = 0, mag = 0;
      for (std::size_t j = 0; j < k; ++j) {
        ref += ck[j] * data_of(*xk[j])[i];
        mag += std::abs(ck[j] * data_of(*xk[j])[i]);
      }
      CHECK(std::abs(data_of(out)[i] - ref) <= 4 * eps * mag);
    }
  };
  check_lc(std::integral_constant<std::size_t, 1>{});
  check_lc(std::integral_constant<std::size_t, 2>{});
  check_lc(std::integral_constant<std::size_t, 3>{});
  check_lc(std::integral_constant<std::size_t, 5>{});

  // out aliasing an input: out = 2 out - b
  {
    S w = a;
    B::linear_combination(w, std::array<T, 2>{T(2), T(-1)}, std::array<const S*, 2>{&w, &b});
    for (std::size_t i = 0; i < n; ++i) {
      const T ref = 2 * data_of(a)[i] - data_of(b)[i];
      CHECK(std::abs(data_of(w)[i] - ref) <= 4 * eps * (2 * std::abs(data_of(a)[i]) + std::abs(data_of(b)[i])));
    }
  }
  // the free function posenc::linear_combination (pairs)
  {
    posenc::linear_combination<B>(out, T(3), a, T(-2), c);
    for (std::size_t i = 0; i < n; ++i) {
      const T ref = 3 * data_of(a)[i] - 2 * data_of(c)[i];
      CHECK(std::abs(data_of(out)[i] - ref) <= 4 * eps * (3 * std::abs(data_of(a)[i]) + 2 * std::abs(data_of(c)[i])));
    }
  }

  // fill
  B::fill(out, T(1.5));
  for (std::size_t i = 0; i < n; ++i) CHECK(data_of(out)[i] == T(1.5));

  // norm_inf: exact (max of |x_i|), and NaN-propagating
  {
    T ref = 0;
    for (std::size_t i = 0; i < n; ++i) ref = std::max(ref, std::abs(data_of(a)[i]));
    CHECK(B::norm_inf(a) == ref);
    S w = a;
    data_of(w)[n - 1] = std::numeric_limits<T>::quiet_NaN();
    CHECK(std::isnan(static_cast<double>(B::norm_inf(w))));
    CHECK_FALSE(B::all_finite(w));
    data_of(w)[n - 1] = std::numeric_limits<T>::infinity();
    CHECK_FALSE(B::all_finite(w));
    CHECK(B::all_finite(a));
  }

  // scaled_rms: sqrt(mean (e_i / (atol + rtol max(|y0_i|, |y1_i|)))^2)
  {
    const T atol = T(1e-3), rtol = T(1e-2);
    long double acc = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const long double s = atol + rtol * std::max(std::abs(static_cast<long double>(data_of(b)[i])),
                                                  std::abs(static_cast<long double>(data_of(c)[i])));
      const long double r = static_cast<long double>(data_of(a)[i]) / s;
      acc += r * r;
    }
    const long double ref = std::sqrt(acc / static_cast<long double>(n));
    // a sum of n terms in T: relative error <= n eps (plus a few ulps for the divisions)
    CHECK(std::abs(static_cast<long double>(B::scaled_rms(a, b, c, atol, rtol)) - ref) <=
          (n + 8) * static_cast<long double>(eps) * ref);
  }

  // ---- an integration against the closed form: y' = -y, y(1) = y(0) e^{-1} ----
  {
    S y = a;
    const std::vector<posenc::ode::time_type_for<T>> times{0, 1};
    posenc::ode::integrate(
        posenc::ode::schemes::rk4{},
        [](auto, const S& v, S& dv) { B::linear_combination(dv, std::array<T, 1>{T(-1)}, std::array<const S*, 1>{&v}); },
        y, times, posenc::ode::fixed_steps{100});
    // rk4 with h = 0.01: global error ~ h^4/120 ~ 1e-10 relative; float: rounding ~1e-6
    const T tol = sizeof(T) >= sizeof(double) ? T(1e-9) : T(2e-5);
    for (std::size_t i = 0; i < n; ++i)
      CHECK(std::abs(data_of(y)[i] - data_of(a)[i] * std::exp(T(-1))) <= tol * (1 + std::abs(data_of(a)[i])));
  }
}

}  // namespace posenc_test
