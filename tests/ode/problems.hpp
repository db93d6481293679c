// SPDX-License-Identifier: MIT
// The test problems with closed-form solutions that torchdiffeq's test suite uses
// (tests/problems.py): every ODE test of this area runs on them.
//   linear: y' = A y, A = U - U^T skew-symmetric 10x10, U = 0.1 * N(0, 1) (fixed seed), y(1) = ones,
//           y(t) = expm(A (t - 1)) ones, the exponential by a long double Taylor series with
//           scaling and squaring (independent of the integrator and of Eigen).
//   exp:    y' = -0.1 exp(-0.1 t), y(t) = exp(-0.1 t) (a pure quadrature problem).
//   sine:   y' = 2y/t + t^4 sin 2t - t^2 + 4t^3 on [1, 8],
//           y = -t^4 cos(2t)/2 + t^3 sin(2t)/2 + t^2 cos(2t)/4 - t^3 + 2t^4 + (pi - 1/4) t^2.
#pragma once

#include <array>
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <numbers>
#include <random>
#include <vector>

namespace posenc_test {

using vec = std::vector<double>;

template <class T>
T sine_exact(T t) {
  const T c = std::cos(2 * t), s = std::sin(2 * t);
  return -t * t * t * t * c / 2 + t * t * t * s / 2 + t * t * c / 4 - t * t * t + 2 * t * t * t * t +
         (std::numbers::pi_v<T> - T(1) / 4) * t * t;
}
template <class T>
T sine_rhs(T t, T y) {
  return 2 * y / t + t * t * t * t * std::sin(2 * t) - t * t + 4 * t * t * t;
}
template <class T>
T exp_exact(T t) {
  return std::exp(-t / 10);
}

struct linear_problem {
  static constexpr std::size_t n = 10;
  std::array<std::array<double, n>, n> a{};

  linear_problem() {
    std::mt19937_64 gen(0);
    std::normal_distribution<double> nd(0.0, 1.0);
    std::array<std::array<double, n>, n> u{};
    for (auto& r : u)
      for (auto& v : r) v = 0.1 * nd(gen);
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = 0; j < n; ++j) a[i][j] = u[i][j] - u[j][i];
  }

  template <class T>
  void rhs(const T* y, T* d) const {
    for (std::size_t i = 0; i < n; ++i) {
      T s = 0;
      for (std::size_t j = 0; j < n; ++j) s += a[i][j] * y[j];
      d[i] = s;
    }
  }

  /// expm(A s) * ones in long double: Taylor series of degree 30 on A s / 2^k, then k squarings.
  template <class T = double>
  [[nodiscard]] std::vector<T> exact(double s) const {
    using M = std::array<std::array<long double, n>, n>;
    long double norm = 0;
    for (const auto& r : a) {
      long double rs = 0;
      for (double v : r) rs += std::fabs(static_cast<long double>(v));
      norm = std::max(norm, rs * std::fabs(static_cast<long double>(s)));
    }
    int k = 0;
    while (norm > 0.125L) {
      norm /= 2;
      ++k;
    }
    const long double scale = static_cast<long double>(s) / std::ldexp(1.0L, k);
    M x{}, term{}, e{};
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = 0; j < n; ++j) x[i][j] = a[i][j] * scale;
    auto mul = [](const M& p, const M& q) {
      M r{};
      for (std::size_t i = 0; i < n; ++i)
        for (std::size_t l = 0; l < n; ++l)
          for (std::size_t j = 0; j < n; ++j) r[i][j] += p[i][l] * q[l][j];
      return r;
    };
    for (std::size_t i = 0; i < n; ++i) term[i][i] = e[i][i] = 1;
    for (int p = 1; p <= 30; ++p) {
      term = mul(term, x);
      for (std::size_t i = 0; i < n; ++i)
        for (std::size_t j = 0; j < n; ++j) {
          term[i][j] /= p;
          e[i][j] += term[i][j];
        }
    }
    for (int q = 0; q < k; ++q) e = mul(e, e);
    std::vector<T> y(n);
    for (std::size_t i = 0; i < n; ++i) {
      long double r = 0;
      for (std::size_t j = 0; j < n; ++j) r += e[i][j];
      y[i] = static_cast<T>(r);
    }
    return y;
  }
};

template <class T>
T max_abs_diff(const std::vector<T>& a, const std::vector<T>& b) {
  T m = 0;
  for (std::size_t i = 0; i < a.size(); ++i) m = std::max(m, std::abs(a[i] - b[i]));
  return m;
}
template <class T>
T max_abs(const std::vector<T>& a) {
  T m = 0;
  for (T v : a) m = std::max(m, std::abs(v));
  return m;
}

}  // namespace posenc_test
