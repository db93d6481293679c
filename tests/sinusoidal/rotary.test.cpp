// SPDX-License-Identifier: MIT
// Rotary position embedding: apply_rotary against an explicit long double rotation, the
// relative-position property <R(m) q, R(n) k> = f(m - n), norm preservation, heads, layouts.
#include <doctest/doctest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include <posenc/rotary.hpp>
#include <posenc/sinusoidal.hpp>

namespace pr = posenc::rotary;

namespace {
/// Reference: rotate one head vector v (head_dim) at position x, pairs per layout, angles
/// x * base^(-2k / rotary_dim), all in long double.
std::vector<long double> ref_rotate(const std::vector<long double>& v, long double x, std::size_t rotary_dim,
                                    pr::layout lay, long double base = 10000.0L) {
  std::vector<long double> out = v;
  const std::size_t h = rotary_dim / 2;
  for (std::size_t k = 0; k < h; ++k) {
    const long double th = x / std::pow(base, static_cast<long double>(2 * k) / static_cast<long double>(rotary_dim));
    const std::size_t a = lay == pr::layout::interleaved ? 2 * k : k;
    const std::size_t b = lay == pr::layout::interleaved ? 2 * k + 1 : k + h;
    out[a] = v[a] * std::cos(th) - v[b] * std::sin(th);
    out[b] = v[a] * std::sin(th) + v[b] * std::cos(th);
  }
  return out;
}
}  // namespace

TEST_CASE("apply_rotary matches the explicit rotation for every head and layout") {
  // double: 1e-14 relative to |v| <= 1 (a couple of roundings per entry, positions < 200);
  // float: 1e-6.
  std::mt19937_64 rng(1);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (auto lay : {pr::layout::interleaved, pr::layout::half})
    for (std::size_t rd : {0u, 8u}) {
      const std::size_t hd = 16, heads = 3, L = 300;
      posenc::table<double> x(L, hd * heads);
      for (Eigen::Index i = 0; i < x.size(); ++i) x.data()[i] = u(rng);
      pr::options o;
      o.layout = lay;
      o.head_dim = hd;
      o.rotary_dim = rd;
      o.first_position = -20;
      const auto y = pr::apply_rotary(x, o);
      const posenc::table<float> yf = pr::apply_rotary(posenc::table<float>(x.cast<float>()), o);
      for (std::size_t i = 0; i < L; i += 7)
        for (std::size_t h = 0; h < heads; ++h) {
          std::vector<long double> v(hd);
          for (std::size_t j = 0; j < hd; ++j) v[j] = x(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(h * hd + j));
          const auto r = ref_rotate(v, -20.0L + static_cast<long double>(i), rd == 0 ? hd : rd, lay);
          for (std::size_t j = 0; j < hd; ++j) {
            const auto ij = static_cast<Eigen::Index>(h * hd + j);
            CHECK(std::abs(y(static_cast<Eigen::Index>(i), ij) - r[j]) < 1e-14L);
            CHECK(std::abs(yf(static_cast<Eigen::Index>(i), ij) - r[j]) < 1e-6L);
          }
        }
    }
}

TEST_CASE("<R(m) q, R(n) k> depends only on m - n and norms are preserved") {
  // The same (q, k) placed at position pairs with equal differences: the scores agree to
  // rounding (1e-12 for |positions| up to 5000); norms to 1e-13.
  std::mt19937_64 rng(2);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (auto lay : {pr::layout::interleaved, pr::layout::half}) {
    const std::size_t hd = 64;
    posenc::vector<double> q(hd), k(hd);
    for (std::size_t j = 0; j < hd; ++j) {
      q[static_cast<Eigen::Index>(j)] = u(rng);
      k[static_cast<Eigen::Index>(j)] = u(rng);
    }
    pr::options o;
    o.layout = lay;
    for (double diff : {0.0, 1.0, -3.0, 17.0}) {
      const std::vector<double> ms{0.0, 5.0, 123.0, 4999.0};
      std::vector<double> scores;
      for (double m : ms) {
        posenc::table<double> Q = q.transpose(), K = k.transpose();
        const std::vector<double> pm{m}, pn{m - diff};
        pr::apply_rotary_inplace(Q, pm, o);
        pr::apply_rotary_inplace(K, pn, o);
        scores.push_back(Q.row(0).dot(K.row(0)));
        CHECK(std::abs(Q.norm() - q.norm()) < 1e-13);
        CHECK(std::abs(K.norm() - k.norm()) < 1e-13);
      }
      for (double s : scores) CHECK(std::abs(s - scores[0]) < 1e-12);
      // and it is q^T R(n - m) k with the explicit matrix
      const double expect = q.dot(pr::rotation_matrix<double>(-diff, hd, o) * k);
      CHECK(std::abs(scores[0] - expect) < 1e-12);
    }
  }
}

TEST_CASE("the positions overload equals the first_position/step overload") {
  // Exact equality for integer positions (same exact phases, same products).
  posenc::table<float> x = posenc::table<float>::Random(40, 32);
  std::vector<double> pos;
  for (int i = 0; i < 40; ++i) pos.push_back(10.0 + 2.0 * i);
  pr::options o;
  o.first_position = 10;
  o.position_step = 2;
  o.head_dim = 16;
  const auto a = pr::apply_rotary(x, o);
  pr::options o2 = o;
  o2.first_position = 0;
  o2.position_step = 1;
  const auto b = pr::apply_rotary(x, pos, o2);
  CHECK((a - b).cwiseAbs().maxCoeff() < 1e-7f);
  // rotation_matrix acts like apply_rotary on one row (double)
  posenc::table<double> xd = x.cast<double>();
  const auto yd = pr::apply_rotary(xd, o);
  const posenc::vector<double> r = pr::rotation_matrix<double>(10.0 + 2.0 * 5, 16, o) * xd.row(5).head(16).transpose();
  CHECK((r.transpose() - yd.row(5).head(16)).cwiseAbs().maxCoeff() < 1e-14);
}

TEST_CASE("rotary bad input throws") {
  posenc::table<double> x(4, 12);
  x.setOnes();
  CHECK_THROWS_AS(pr::apply_rotary(x, {.head_dim = 5}), posenc::shape_error);
  CHECK_THROWS_AS(pr::apply_rotary(x, {.head_dim = 6, .rotary_dim = 3}), posenc::invalid_argument);
  CHECK_THROWS_AS(pr::apply_rotary(x, {.head_dim = 6, .rotary_dim = 8}), posenc::invalid_argument);
  CHECK_THROWS_AS(pr::apply_rotary(x, {.base = NAN}), posenc::non_finite_error);
  CHECK_THROWS_AS(pr::apply_rotary(x, {.base = -1}), posenc::invalid_argument);
  CHECK_THROWS_AS(pr::apply_rotary(x, std::vector<double>{1, 2, 3}), posenc::shape_error);
  CHECK_THROWS_AS(pr::apply_rotary(x, std::vector<double>{1, 2, 3, NAN}), posenc::non_finite_error);
  CHECK_THROWS_AS(pr::rotation_matrix<double>(1.0, 7), posenc::invalid_argument);
  posenc::table<double> odd(3, 7);
  odd.setOnes();
  try {
    (void)pr::apply_rotary(odd);
    CHECK(false);
  } catch (const posenc::error& e) {
    CHECK(std::string(e.what()).find("rotary_dim") != std::string::npos);
  }
}
