// SPDX-License-Identifier: MIT
// Every host backend sums a stage right to left, c0 x0 + (c1 x1 + (... + c_{N-1} x_{N-1})), so
// one problem integrated as a double, a std::vector<double>{1}, a std::array<double, 1> and an
// Eigen::VectorXd of size 1 takes bitwise the same steps (the comment of posenc/adapters/thrust.hpp
// states this; backend::thrust's order is checked against backend::serial in tests/thrust/).
// Before the scalar overload summed left to right, dopri5 on y' = -y + sin 3t gave different
// bits at 192 of these 201 outputs.
#include <doctest/doctest.h>

#include <array>
#include <cmath>
#include <vector>

#include <posenc/adapters/eigen.hpp>
#include <posenc/ode.hpp>

namespace {
using namespace posenc::ode;

std::vector<double> grid() {
  std::vector<double> t;
  for (int i = 0; i <= 200; ++i) t.push_back(0.05 * i);
  return t;
}

template <class State, class Scheme, class Policy>
std::vector<double> run(State y, Scheme, const Policy& policy) {
  std::vector<double> out;
  const auto times = grid();
  auto f = [](double t, const State& s, State& ds) {
    if constexpr (std::is_same_v<State, double>)
      ds = -s + std::sin(3 * t);
    else
      ds[0] = -s[0] + std::sin(3 * t);
  };
  integrate(Scheme{}, f, y, times, policy, [&](std::size_t, double, const State& s) {
    if constexpr (std::is_same_v<State, double>)
      out.push_back(s);
    else
      out.push_back(s[0]);
  });
  return out;
}

template <class Scheme, class Policy>
void same_bits(const Policy& policy) {
  const auto scalar = run<double>(1.0, Scheme{}, policy);
  const auto vec = run<std::vector<double>>({1.0}, Scheme{}, policy);
  const auto arr = run<std::array<double, 1>>({1.0}, Scheme{}, policy);
  const auto eig = run<Eigen::VectorXd>(Eigen::VectorXd::Ones(1), Scheme{}, policy);
  REQUIRE(scalar.size() == 201);
  REQUIRE(vec.size() == 201);
  REQUIRE(arr.size() == 201);
  REQUIRE(eig.size() == 201);
  int differ = 0;
  for (std::size_t i = 0; i < scalar.size(); ++i)
    differ += (scalar[i] != vec[i]) + (scalar[i] != arr[i]) + (scalar[i] != eig[i]);
  CHECK(differ == 0);  // bitwise: no tolerance
}
}  // namespace

TEST_CASE("backend::serial sums right to left for scalars as for ranges") {
  // 1e16 + (-1e16 + 1) = 0 in double (the 1 is absorbed), (1e16 + -1e16) + 1 = 1: the two
  // orders differ, so this pins the order.
  const double a = 1e16, b = -1e16, c = 1;
  double out = -1;
  posenc::backend::serial::linear_combination(out, std::array<double, 3>{1, 1, 1},
                                              std::array<const double*, 3>{&a, &b, &c});
  CHECK(out == 0.0);
  std::vector<double> va{a}, vb{b}, vc{c}, vo{-1};
  posenc::backend::serial::linear_combination(vo, std::array<double, 3>{1, 1, 1},
                                              std::array<const std::vector<double>*, 3>{&va, &vb, &vc});
  CHECK(vo[0] == 0.0);
  Eigen::VectorXd ea(1), eb(1), ec(1), eo(1);
  ea << a;
  eb << b;
  ec << c;
  posenc::backend::eigen::linear_combination(eo, std::array<double, 3>{1, 1, 1},
                                             std::array<const Eigen::VectorXd*, 3>{&ea, &eb, &ec});
  CHECK(eo[0] == 0.0);
}

TEST_CASE("a scalar, std::vector, std::array and Eigen state take bitwise the same steps") {
  same_bits<schemes::rk4>(fixed_steps{3});
  same_bits<schemes::rk4_38>(fixed_steps{5});
  same_bits<schemes::dopri5>(adaptive{.rtol = 1e-8, .atol = 1e-10});
  same_bits<schemes::tsit5>(adaptive{.rtol = 1e-6, .atol = 1e-9});
}
