// SPDX-License-Identifier: MIT
// Shared helpers of the toeplitz tests: random data and long-double reference transforms.
#pragma once

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstddef>
#include <numbers>
#include <random>
#include <vector>

#include <posenc/toeplitz.hpp>

namespace tp_test {

using cld = std::complex<long double>;

inline std::mt19937_64& rng() {
  static std::mt19937_64 g(20201122);
  return g;
}

template <class T>
T uniform() {
  std::uniform_real_distribution<double> d(-1.0, 1.0);
  if constexpr (posenc::toeplitz::is_complex_v<T>) {
    using R = typename T::value_type;
    const R re = static_cast<R>(d(rng()));
    const R im = static_cast<R>(d(rng()));
    return T(re, im);
  } else {
    return static_cast<T>(d(rng()));
  }
}

template <class T>
posenc::toeplitz::coeff_vector<T> random_vector(std::size_t n) {
  posenc::toeplitz::coeff_vector<T> v(static_cast<Eigen::Index>(n));
  for (auto& x : v) x = uniform<T>();
  return v;
}

template <class M>
M random_matrix(Eigen::Index r, Eigen::Index c) {
  M m(r, c);
  for (Eigen::Index i = 0; i < r; ++i)
    for (Eigen::Index j = 0; j < c; ++j) m(i, j) = uniform<typename M::Scalar>();
  return m;
}

/// Direct O(n^2) DFT in long double with exactly reduced angles (sign -1 forward, +1 inverse).
inline std::vector<cld> direct_dft(const std::vector<cld>& x, int sign = -1) {
  const std::size_t n = x.size();
  std::vector<long double> c(n), s(n);
  for (std::size_t e = 0; e < n; ++e) {
    const long double a = 2.0L * std::numbers::pi_v<long double> * static_cast<long double>(e) / static_cast<long double>(n);
    c[e] = std::cos(a);
    s[e] = sign * std::sin(a);
  }
  std::vector<cld> y(n);
  for (std::size_t k = 0; k < n; ++k) {
    long double re = 0, im = 0;
    for (std::size_t j = 0; j < n; ++j) {
      const std::size_t e = (j * k) % n;
      re += x[j].real() * c[e] - x[j].imag() * s[e];
      im += x[j].real() * s[e] + x[j].imag() * c[e];
    }
    y[k] = cld(re, im);
  }
  return y;
}

/// The direct DFT at the given bins only: y[t] = X_{bins[t]}.
inline std::vector<cld> direct_dft_at(const std::vector<cld>& x, const std::vector<std::size_t>& bins, int sign = -1) {
  const std::size_t n = x.size();
  std::vector<long double> c(n), s(n);
  for (std::size_t e = 0; e < n; ++e) {
    const long double a = 2.0L * std::numbers::pi_v<long double> * static_cast<long double>(e) / static_cast<long double>(n);
    c[e] = std::cos(a);
    s[e] = sign * std::sin(a);
  }
  std::vector<cld> y;
  for (std::size_t k : bins) {
    long double re = 0, im = 0;
    for (std::size_t j = 0; j < n; ++j) {
      const std::size_t e = (j * k) % n;
      re += x[j].real() * c[e] - x[j].imag() * s[e];
      im += x[j].real() * s[e] + x[j].imag() * c[e];
    }
    y.emplace_back(re, im);
  }
  return y;
}

/// count bins in [0, n): 0, 1, n-1, n/2 and random ones.
inline std::vector<std::size_t> sample_bins(std::size_t n, std::size_t count) {
  std::vector<std::size_t> b = {0, 1 % n, n - 1, n / 2};
  while (b.size() < count) b.push_back(static_cast<std::size_t>(rng()() % n));
  return b;
}

/// Like rel_max_error, comparing a[bins[t]] with b[t].
template <class A>
long double rel_max_error_at(const A& a, const std::vector<cld>& b, const std::vector<std::size_t>& bins) {
  long double num = 0, den = 0;
  for (std::size_t t = 0; t < bins.size(); ++t) {
    const auto& v = a[bins[t]];
    const cld ak(static_cast<long double>(std::real(v)), static_cast<long double>(std::imag(v)));
    num = std::max(num, std::abs(ak - b[t]));
    den = std::max(den, std::abs(b[t]));
  }
  return den == 0 ? num : num / den;
}

/// max_k |a_k - b_k| / max_k |b_k| (b the reference).
template <class A>
long double rel_max_error(const A& a, const std::vector<cld>& b) {
  long double num = 0, den = 0;
  for (std::size_t k = 0; k < b.size(); ++k) {
    const cld ak(static_cast<long double>(std::real(a[k])), static_cast<long double>(std::imag(a[k])));
    num = std::max(num, std::abs(ak - b[k]));
    den = std::max(den, std::abs(b[k]));
  }
  return den == 0 ? num : num / den;
}

}  // namespace tp_test
