// SPDX-License-Identifier: MIT
// The offset rotation M(phi) of the blog: PE(t + phi) = M(phi) PE(t) for every t and phi, its
// group property, and the inner product PE(t) . PE(t + k) depending only on k.
#include <doctest/doctest.h>

#include <cmath>
#include <random>
#include <vector>

#include <posenc/sinusoidal.hpp>

#include "sinusoidal/reference.hpp"

namespace ps = posenc::sinusoidal;

TEST_CASE("PE(t + phi) = M(phi) PE(t) for every t and phi") {
  // Against the long double reference of PE(t + phi); M PE(t) sums two products of entries
  // each within ~1e-16 of exact: tolerance 1e-14 for |t|, |phi| < 1000.
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> u(-1000.0, 1000.0);
  for (auto lay : {ps::layout::interleaved, ps::layout::half})
    for (auto sp : {ps::spacing::two_k_over_d, ps::spacing::k_over_half_minus_one}) {
      ps::options o;
      o.layout = lay;
      o.spacing = sp;
      for (int trial = 0; trial < 20; ++trial) {
        const double t = u(rng), phi = u(rng);
        const auto M = ps::rotation<double>(phi, 32, o);
        const posenc::vector<double> q = M * ps::encode<double>(t, 32, o);
        for (std::size_t j = 0; j < 32; ++j)
          CHECK(std::abs(q[static_cast<Eigen::Index>(j)] - posenc_test::ref_entry(static_cast<long double>(t) + phi, j, 32, o)) <
                1e-14L);
      }
    }
}

TEST_CASE("M(phi) is orthogonal and M(a) M(b) = M(a + b)") {
  // Rounding of a handful of products: 1e-15.
  for (auto lay : {ps::layout::interleaved, ps::layout::half}) {
    ps::options o;
    o.layout = lay;
    const auto Ma = ps::rotation<double>(1.7, 16, o), Mb = ps::rotation<double>(-40.25, 16, o);
    CHECK((Ma * Ma.transpose() - posenc::matrix<double>::Identity(16, 16)).cwiseAbs().maxCoeff() < 1e-15);
    CHECK((Ma * Mb - ps::rotation<double>(1.7 - 40.25, 16, o)).cwiseAbs().maxCoeff() < 1e-14);
    CHECK((ps::rotation<double>(0.0, 16, o) - posenc::matrix<double>::Identity(16, 16)).cwiseAbs().maxCoeff() == 0.0);
  }
  // padded odd d: the zero column maps to itself
  ps::options o;
  o.odd = ps::odd_dimension::zero_pad;
  const auto M = ps::rotation<double>(2.0, 9, o);
  CHECK(M(8, 8) == 1.0);
  const posenc::vector<double> q = M * ps::encode<double>(1.0, 9, o);
  CHECK((q - ps::encode<double>(3.0, 9, o)).cwiseAbs().maxCoeff() < 1e-15);
}

TEST_CASE("M(phi) is exp(phi A): the table rows follow the generator") {
  // Scaling and squaring with a 20-term Taylor series as the independent matrix exponential.
  const std::size_t d = 12;
  const auto A = ps::generator<double>(d);
  const double phi = 2.5;
  posenc::matrix<double> X = A * (phi / 64), E = posenc::matrix<double>::Identity(d, d), term = E;
  for (int n = 1; n <= 20; ++n) {
    term = term * X / n;
    E += term;
  }
  for (int s = 0; s < 6; ++s) E = E * E;
  CHECK((E - ps::rotation<double>(phi, d)).cwiseAbs().maxCoeff() < 1e-13);
}

TEST_CASE("PE(t) . PE(t + k) depends only on k") {
  // Dot products of rows of the table against sum_k cos(w_k k) from the reference frequencies;
  // d = 64 terms of size <= 1 each with ~1e-16 error: tolerance 1e-13 (double), 1e-4 (float).
  const std::size_t d = 64, L = 400;
  const auto t = ps::table<double>(L, d);
  const auto tf = ps::table<float>(L, d);
  for (std::size_t k : {0u, 1u, 5u, 37u, 200u}) {
    long double expect = 0;
    for (std::size_t i = 0; i < d / 2; ++i)
      expect += std::cos(static_cast<long double>(k) * posenc_test::ref_frequency(i, d / 2, ps::spacing::two_k_over_d, 10000.0L));
    CHECK(std::abs(ps::inner_product<double>(static_cast<double>(k), d) - expect) < 1e-13L);
    for (std::size_t s : {0u, 3u, 99u, 150u}) {
      const double dot = t.row(static_cast<Eigen::Index>(s)).dot(t.row(static_cast<Eigen::Index>(s + k)));
      CHECK(std::abs(dot - expect) < 1e-13L);
      const float dotf = tf.row(static_cast<Eigen::Index>(s)).dot(tf.row(static_cast<Eigen::Index>(s + k)));
      CHECK(std::abs(dotf - expect) < 1e-4L);
    }
  }
}
