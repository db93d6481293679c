// SPDX-License-Identifier: MIT
// Eigen adapter: dense Eigen::Matrix and Eigen::Array (vectors and matrices; a matrix state is a
// batch, e.g. N blocks x d) are ODE states, with backend::eigen as their default backend: every
// stage sum is one Eigen expression, evaluated in one vectorised pass. An Eigen expression
// (a + b, A * x, ...) is not a state; a right-hand side dydt = f(t, y) may return one: it is
// assigned into the stage buffer.
#pragma once

#include <Eigen/Core>
#include <array>
#include <cmath>
#include <cstddef>
#include <type_traits>
#include <utility>

#include <posenc/core/backend.hpp>
#include <posenc/core/hd.hpp>
#include <posenc/core/state_traits.hpp>

namespace posenc {
namespace backend {
struct eigen;
}

namespace detail {
template <class S>
concept eigen_plain = std::is_base_of_v<Eigen::PlainObjectBase<S>, S>;

}  // namespace detail

/// Eigen::Matrix and Eigen::Array of float, double or long double, any shape.
template <detail::eigen_plain S>
  requires std::floating_point<typename S::Scalar>
struct state_traits<S> {
  using value_type = typename S::Scalar;
  using default_backend = backend::eigen;
  static std::size_t size(const S& x) noexcept { return static_cast<std::size_t>(x.size()); }
  static void resize_like(S& y, const S& x) { y.resize(x.rows(), x.cols()); }
  static bool same_shape(const S& a, const S& b) noexcept { return a.rows() == b.rows() && a.cols() == b.cols(); }
};

namespace backend {

/// Eigen expressions: one fused, vectorised pass per operation.
struct eigen {
  // A fixed-size state: the stage sum is the serial backend's element-wise loop over the
  // contiguous storage (data(), size()), c0 x0 + (c1 x1 + (...)) per scalar exactly as the Eigen
  // expression computes it, with a compile-time trip count. A dynamic-size state keeps the Eigen
  // expression: its loop set-up is shorter than the generic vectorised loop's at n <= 64
  // (callgrind counts in docs/performance/ode.md), and both are equal on large states.
  template <class S, class T, std::size_t N>
  POSENC_ALWAYS_INLINE static void linear_combination(S& out, const std::array<T, N>& c,
                                                      const std::array<const S*, N>& x) {
    if constexpr (S::SizeAtCompileTime != Eigen::Dynamic) {
      using V = typename S::Scalar;
      std::array<V, N> cc{};
      std::array<const V*, N> p{};
      for (std::size_t j = 0; j < N; ++j) {
        cc[j] = static_cast<V>(c[j]);
        p[j] = x[j]->data();
      }
      posenc::detail::sum_products(out.data(), static_cast<std::size_t>(S::SizeAtCompileTime), cc, p,
                                   std::make_index_sequence<N>{});
    } else {
      expression_sum(out, c, x, std::make_index_sequence<N>{});
    }
  }
  template <class S, class T>
  static void fill(S& out, T v) {
    out.setConstant(static_cast<typename S::Scalar>(v));
  }
  template <class S>
  static typename S::Scalar norm_inf(const S& x) {
    if (x.size() == 0) return 0;
    return x.array().abs().template maxCoeff<Eigen::PropagateNaN>();
  }
  template <class S, class T>
  static T scaled_rms(const S& e, const S& y0, const S& y1, T atol, T rtol) {
    if (e.size() == 0) return T(0);
    using V = typename S::Scalar;
    const auto scale = static_cast<V>(atol) + static_cast<V>(rtol) * y0.array().abs().max(y1.array().abs());
    return static_cast<T>(std::sqrt((e.array() / scale).square().mean()));
  }
  template <class S>
  static bool all_finite(const S& x) {
    return x.allFinite();
  }

 private:
  template <class S, class T, std::size_t N, std::size_t... J>
  POSENC_ALWAYS_INLINE static void expression_sum(S& out, const std::array<T, N>& c, const std::array<const S*, N>& x,
                                                  std::index_sequence<J...>) {
    using V = typename S::Scalar;
    out.array() = ((static_cast<V>(c[J]) * x[J]->array()) + ...);
  }
};

}  // namespace backend
}  // namespace posenc
