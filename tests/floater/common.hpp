// SPDX-License-Identifier: MIT
// Shared helpers of the FLOATER tests: random parameters and an independent, naive reference
// (one block at a time, nn.Linear weights with the time column concatenated as the reference code
// does, Kutta's 3/8 rule written out by hand).
#pragma once

#include <cmath>
#include <random>
#include <vector>

#include <posenc/floater.hpp>

namespace floater_test {

using posenc::floater::activation;
using posenc::floater::mlp;

template <class T>
mlp<T> random_mlp(std::size_t d, std::size_t hidden, activation act, std::uint64_t seed, bool t1 = true, bool t2 = true,
                  double gain = 1.0) {
  mlp<T> m(d, hidden, act, t1, t2);
  std::mt19937_64 rng(seed);
  posenc::floater::init_xavier_normal(m, rng, gain);
  std::normal_distribution<double> nd(0.0, 0.1);
  for (auto i = 0; i < m.b1.size(); ++i) m.b1[i] = static_cast<T>(nd(rng));
  for (auto i = 0; i < m.b2.size(); ++i) m.b2[i] = static_cast<T>(nd(rng));
  return m;
}

template <class T>
posenc::table<T> random_table(std::size_t rows, std::size_t cols, std::uint64_t seed, double scale = 1.0) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> nd(0.0, scale);
  posenc::table<T> p(static_cast<Eigen::Index>(rows), static_cast<Eigen::Index>(cols));
  for (Eigen::Index i = 0; i < p.rows(); ++i)
    for (Eigen::Index j = 0; j < p.cols(); ++j) p(i, j) = static_cast<T>(nd(rng));
  return p;
}

/// sigma(z), written independently of the library (std:: functions, one scalar at a time).
inline double sigma(activation a, double z) {
  switch (a) {
    case activation::relu: return z > 0 ? z : 0;
    case activation::tanh: return std::tanh(z);
    case activation::gelu: return 0.5 * z * (1 + std::erf(z / std::sqrt(2.0)));
    case activation::softplus: return z > 20 ? z : std::log1p(std::exp(z));
    case activation::identity: return z;
  }
  return 0;
}

/// h(t, p) for one block from the nn.Linear layout: W1 [p; t] + b1, sigma, W2 [h; t] + b2.
inline std::vector<double> naive_h(const mlp<double>& m, double t, const std::vector<double>& p) {
  const posenc::matrix<double> W1 = m.linear1_weight(), W2 = m.linear2_weight();
  std::vector<double> x(p);
  if (m.time1) x.push_back(t);
  std::vector<double> hid(static_cast<std::size_t>(W1.rows()));
  for (Eigen::Index i = 0; i < W1.rows(); ++i) {
    double s = m.b1[i];
    for (Eigen::Index j = 0; j < W1.cols(); ++j) s += W1(i, j) * x[static_cast<std::size_t>(j)];
    hid[static_cast<std::size_t>(i)] = sigma(m.act, s);
  }
  if (m.time2) hid.push_back(t);
  std::vector<double> out(static_cast<std::size_t>(W2.rows()));
  for (Eigen::Index i = 0; i < W2.rows(); ++i) {
    double s = m.b2[i];
    for (Eigen::Index j = 0; j < W2.cols(); ++j) s += W2(i, j) * hid[static_cast<std::size_t>(j)];
    out[static_cast<std::size_t>(i)] = s;
  }
  return out;
}

/// The table of one block: Kutta's 3/8 rule (torchdiffeq's rk4_alt_step_func), k steps per interval.
inline std::vector<std::vector<double>> naive_table(const mlp<double>& m, std::vector<double> p,
                                                    const std::vector<double>& times, std::size_t k) {
  std::vector<std::vector<double>> rows{p};
  const std::size_t d = p.size();
  auto axpy = [d](const std::vector<double>& y, std::initializer_list<std::pair<double, const std::vector<double>*>> terms) {
    std::vector<double> r(y);
    for (auto [c, v] : terms)
      for (std::size_t j = 0; j < d; ++j) r[j] += c * (*v)[j];
    return r;
  };
  for (std::size_t i = 0; i + 1 < times.size(); ++i) {
    const double t0 = times[i], t1 = times[i + 1], h = (t1 - t0) / static_cast<double>(k);
    for (std::size_t s = 0; s < k; ++s) {
      const double t = t0 + static_cast<double>(s) * h, dt = (s + 1 == k) ? t1 - t : h;
      const auto k1 = naive_h(m, t, p);
      const auto k2 = naive_h(m, t + dt / 3, axpy(p, {{dt / 3, &k1}}));
      const auto k3 = naive_h(m, t + 2 * dt / 3, axpy(p, {{-dt / 3, &k1}, {dt, &k2}}));
      const auto k4 = naive_h(m, t + dt, axpy(p, {{dt, &k1}, {-dt, &k2}, {dt, &k3}}));
      p = axpy(p, {{dt / 8, &k1}, {3 * dt / 8, &k2}, {3 * dt / 8, &k3}, {dt / 8, &k4}});
    }
    rows.push_back(p);
  }
  return rows;
}

template <class A, class B>
double max_abs_diff(const A& a, const B& b) {
  return (a.template cast<double>() - b.template cast<double>()).cwiseAbs().maxCoeff();
}

}  // namespace floater_test
