// SPDX-License-Identifier: MIT
// The engine's fixed step against a straightforward reference implementation of the same
// tableau, bit for bit. The reference below is written from the published Butcher coefficients
// (double literals in this file, not the engine's long-double tableaux) and computes, for one
// state component at a time,
//
//   Y_i = y + (h a_i,j1 k_j1 + (h a_i,j2 k_j2 + (...)))   over the non-zero a_ij, right to left,
//   k_i = f(t + c_i h, Y_i),          y_new = y + (h b_j1 k_j1 + (...))   likewise over b_j != 0,
//
// which is the operation order the backends document (posenc/core/backend.hpp: every
// linear_combination sums right to left; tests/core/backend_order.test.cpp). Every rounding is a
// double operation in the same order, so the comparison has no tolerance: any change the
// engine's optimisations made to the arithmetic (a dropped or reordered term, a coefficient
// folded differently, a weight not rounded as h * double(a_ij)) shows as differing bits.
//
// Sources of the coefficients: Butcher, Numerical Methods for ODEs (2016), 23x (Euler, midpoint,
// Heun, Ralston, Kutta's third order, classic RK4, the 3/8 rule); Hairer, Norsett & Wanner I,
// II.4-II.5 (Heun-Euler, Bogacki-Shampine 3(2), Dormand-Prince 5(4)); Tsitouras, Comput. Math.
// Appl. 62 (2011) 770-775, Table 1 (as 40-digit decimals).
#include <doctest/doctest.h>

#include <array>
#include <cmath>
#include <cstddef>
#include <string>
#include <vector>

#include <posenc/adapters/eigen.hpp>
#include <posenc/ode.hpp>

namespace {
using namespace posenc::ode;

template <std::size_t S>
struct published {
  std::array<std::array<double, S>, S> a{};
  std::array<double, S> b{};
  std::array<double, S> c{};
};

// clang-format off
constexpr published<1> euler_tab{{{{0}}}, {1}, {0}};
constexpr published<2> midpoint_tab{{{{0, 0}, {0.5, 0}}}, {0, 1}, {0, 0.5}};
constexpr published<2> heun_tab{{{{0, 0}, {1, 0}}}, {0.5, 0.5}, {0, 1}};
constexpr published<2> ralston_tab{{{{0, 0}, {2.0 / 3, 0}}}, {0.25, 0.75}, {0, 2.0 / 3}};
constexpr published<3> kutta3_tab{{{{0, 0, 0}, {0.5, 0, 0}, {-1, 2, 0}}}, {1.0 / 6, 2.0 / 3, 1.0 / 6}, {0, 0.5, 1}};
constexpr published<4> rk4_tab{{{{0, 0, 0, 0}, {0.5, 0, 0, 0}, {0, 0.5, 0, 0}, {0, 0, 1, 0}}},
                               {1.0 / 6, 1.0 / 3, 1.0 / 3, 1.0 / 6}, {0, 0.5, 0.5, 1}};
constexpr published<4> rk4_38_tab{{{{0, 0, 0, 0}, {1.0 / 3, 0, 0, 0}, {-1.0 / 3, 1, 0, 0}, {1, -1, 1, 0}}},
                                  {0.125, 0.375, 0.375, 0.125}, {0, 1.0 / 3, 2.0 / 3, 1}};
constexpr published<2> heun_euler_tab = heun_tab;
constexpr published<4> bs32_tab{{{{0, 0, 0, 0}, {0.5, 0, 0, 0}, {0, 0.75, 0, 0}, {2.0 / 9, 1.0 / 3, 4.0 / 9, 0}}},
                                {2.0 / 9, 1.0 / 3, 4.0 / 9, 0}, {0, 0.5, 0.75, 1}};
constexpr published<7> dopri5_tab{{{{0, 0, 0, 0, 0, 0, 0},
                                    {1.0 / 5, 0, 0, 0, 0, 0, 0},
                                    {3.0 / 40, 9.0 / 40, 0, 0, 0, 0, 0},
                                    {44.0 / 45, -56.0 / 15, 32.0 / 9, 0, 0, 0, 0},
                                    {19372.0 / 6561, -25360.0 / 2187, 64448.0 / 6561, -212.0 / 729, 0, 0, 0},
                                    {9017.0 / 3168, -355.0 / 33, 46732.0 / 5247, 49.0 / 176, -5103.0 / 18656, 0, 0},
                                    {35.0 / 384, 0, 500.0 / 1113, 125.0 / 192, -2187.0 / 6784, 11.0 / 84, 0}}},
                                  {35.0 / 384, 0, 500.0 / 1113, 125.0 / 192, -2187.0 / 6784, 11.0 / 84, 0},
                                  {0, 1.0 / 5, 3.0 / 10, 4.0 / 5, 8.0 / 9, 1, 1}};
constexpr published<7> tsit5_tab{
    {{{0, 0, 0, 0, 0, 0, 0},
      {0.161, 0, 0, 0, 0, 0, 0},
      {-0.008480655492356988544426874250230774675, 0.3354806554923569885444268742502307746751, 0, 0, 0, 0, 0},
      {2.897153057105493432130432594192938764925, -6.359448489975074843148159912383825625953,
       4.362295432869581411017727318190886861028, 0, 0, 0, 0},
      {5.325864828439256604428877920840511317836, -11.74888356406282787774717033978577296189,
       7.495539342889836208304604784564358155659, -0.09249506636175524925650207933207191611350, 0, 0, 0},
      {5.861455442946420028659251486982647890394, -12.92096931784710929170611868178335939542,
       8.159367898576158643180400794539253485182, -0.07158497328140099722453054252582973869127,
       -0.02826905039406838290900305721271224146718, 0, 0},
      {0.09646076681806522951816731316512876333712, 0.01, 0.4798896504144995747752495322905965199130,
       1.379008574103741893192274821856872770756, -3.290069515436080679901047585711363850116,
       2.324710524099773982415355918398765796109, 0}}},
    {0.09646076681806522951816731316512876333712, 0.01, 0.4798896504144995747752495322905965199130,
     1.379008574103741893192274821856872770756, -3.290069515436080679901047585711363850116,
     2.324710524099773982415355918398765796109, 0},
    {0, 0.161, 0.327, 0.9, 0.9800255409045096857298102862870245954942, 1, 1}};
// clang-format on

/// A nonlinear, coupled right-hand side with explicit time dependence, on n components (bounded
/// on the 40 steps taken here from y_i(0.1) in [0.3, 1.1]):
/// dy_i/dt = -y_i + sin(t) y_{i+1 mod n} + 0.1 y_i^2 + 0.01 i.
double rhs_component(double t, const double* y, std::size_t n, std::size_t i) {
  return -y[i] + std::sin(t) * y[(i + 1) % n] + 0.1 * y[i] * y[i] + 0.01 * static_cast<double>(i);
}

/// The reference step on raw components: the published tableau, summed right to left over the
/// non-zero coefficients, with weights h * a_ij rounded as doubles.
template <std::size_t S>
void reference_step(const published<S>& tab, double t, std::vector<double>& y, double h) {
  const std::size_t n = y.size();
  std::array<std::vector<double>, S> k;
  std::vector<double> stage(n);
  auto sum_right_to_left = [&](const std::array<double, S>& row, std::size_t upto, std::size_t i, double base) {
    bool any = false;
    double acc = 0;
    for (std::size_t j = upto; j-- > 0;) {
      if (row[j] == 0) continue;
      const double term = (h * row[j]) * k[j][i];
      acc = any ? term + acc : term;
      any = true;
    }
    return any ? base + acc : base;
  };
  for (std::size_t s = 0; s < S; ++s) {
    for (std::size_t i = 0; i < n; ++i) stage[i] = sum_right_to_left(tab.a[s], s, i, y[i]);
    k[s].resize(n);
    const double ts = t + tab.c[s] * h;
    for (std::size_t i = 0; i < n; ++i) k[s][i] = rhs_component(ts, stage.data(), n, i);
  }
  std::vector<double> out(n);
  for (std::size_t i = 0; i < n; ++i) out[i] = sum_right_to_left(tab.b, S, i, y[i]);
  y = out;
}

// ---- the engine on several state types, same right-hand side ----------------------------------
template <class State>
std::size_t size_of(const State& y) {
  if constexpr (std::is_same_v<State, double>) return 1;
  else return static_cast<std::size_t>(y.size());
}
template <class State>
const double* data_of(const State& y) {
  if constexpr (std::is_same_v<State, double>) return &y;
  else return y.data();
}
template <class State>
double* data_of(State& y) {
  if constexpr (std::is_same_v<State, double>) return &y;
  else return y.data();
}

struct engine_rhs {
  template <class State>
  void operator()(double t, const State& y, State& dy) const {
    const std::size_t n = size_of(y);
    const double* p = data_of(y);
    double* q = data_of(dy);
    for (std::size_t i = 0; i < n; ++i) q[i] = rhs_component(t, p, n, i);
  }
};

template <class State>
State make_state(std::size_t n) {
  State y{};
  if constexpr (requires { State::SizeAtCompileTime; }) {
    if constexpr (State::SizeAtCompileTime == Eigen::Dynamic) y.resize(static_cast<Eigen::Index>(n));
  } else if constexpr (requires { y.resize(n); }) {
    y.resize(n);
  }
  double* p = data_of(y);
  for (std::size_t i = 0; i < size_of(y); ++i) p[i] = 0.3 + 0.2 * static_cast<double>(i % 5);
  return y;
}

/// 40 steps of h = 0.07 from t = 0.1 with the engine and with the reference: every step equal.
template <class Scheme, class State, std::size_t S>
void check_bitwise(const published<S>& tab, std::size_t n, const std::string& state_name) {
  CAPTURE(Scheme::name);
  CAPTURE(state_name);
  State y = make_state<State>(n);
  const std::size_t m = size_of(y);
  std::vector<double> r(data_of(y), data_of(y) + m);
  explicit_rk<Scheme, State> st(y);
  engine_rhs f;
  const double h = 0.07;
  double t = 0.1;
  int differ = 0;
  for (int step = 0; step < 40; ++step, t += h) {
    st.step(f, t, y, h);
    reference_step(tab, t, r, h);
    for (std::size_t i = 0; i < m; ++i) differ += data_of(y)[i] != r[i];
  }
  CHECK(differ == 0);  // bitwise: no tolerance
  CHECK(std::isfinite(r[0]));
}

template <class Scheme, std::size_t S>
void check_all_states(const published<S>& tab) {
  check_bitwise<Scheme, double>(tab, 1, "double");
  check_bitwise<Scheme, std::array<double, 3>>(tab, 3, "std::array<double, 3>");
  check_bitwise<Scheme, std::vector<double>>(tab, 5, "std::vector<double>(5)");
  check_bitwise<Scheme, std::vector<double>>(tab, 64, "std::vector<double>(64)");
  check_bitwise<Scheme, Eigen::Vector4d>(tab, 4, "Eigen::Vector4d");
  check_bitwise<Scheme, Eigen::Matrix<double, 16, 1>>(tab, 16, "Eigen::Matrix<double, 16, 1>");
  check_bitwise<Scheme, Eigen::VectorXd>(tab, 7, "Eigen::VectorXd(7)");
}
}  // namespace

TEST_CASE("a fixed step equals a reference implementation of the published tableau bit for bit") {
  check_all_states<schemes::euler>(euler_tab);
  check_all_states<schemes::midpoint>(midpoint_tab);
  check_all_states<schemes::heun>(heun_tab);
  check_all_states<schemes::ralston>(ralston_tab);
  check_all_states<schemes::kutta3>(kutta3_tab);
  check_all_states<schemes::rk4>(rk4_tab);
  check_all_states<schemes::rk4_38>(rk4_38_tab);
  check_all_states<schemes::heun_euler>(heun_euler_tab);
  check_all_states<schemes::bogacki_shampine>(bs32_tab);
  check_all_states<schemes::dopri5>(dopri5_tab);
  check_all_states<schemes::tsit5>(tsit5_tab);
}

TEST_CASE("the reference step detects a one-ulp change of a coefficient") {
  // The comparison above can fail: the same run with one coefficient of rk4 moved by one ulp
  // differs from the engine somewhere in 40 steps.
  published<4> moved = rk4_tab;
  moved.b[1] = std::nextafter(moved.b[1], 1.0);
  std::vector<double> y = make_state<std::vector<double>>(5), r = y;
  explicit_rk<schemes::rk4, std::vector<double>> st(y);
  engine_rhs f;
  int differ = 0;
  double t = 0.1;
  for (int step = 0; step < 40; ++step, t += 0.07) {
    st.step(f, t, y, 0.07);
    reference_step(moved, t, r, 0.07);
    for (std::size_t i = 0; i < y.size(); ++i) differ += y[i] != r[i];
  }
  CHECK(differ > 0);
}
