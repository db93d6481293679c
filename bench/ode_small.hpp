// SPDX-License-Identifier: MIT
// Small-state harness shared by bench/ode.bench.cpp (timings) and bench/ode_icount.cpp
// (instruction counts under callgrind): one explicit step of euler, rk4 or dopri5 on dydt = -y
// for the state types a user would integrate at n <= 64 (double, std::array<double, N>,
// std::vector<double>, Eigen::Matrix<double, N, 1>, Eigen::VectorXd), beside hand-written loops
// doing the same arithmetic in the same passes: with a compile-time trip count (the reference of
// std::array and fixed-size Eigen states), a run-time trip count (std::vector, Eigen::VectorXd),
// and straight-line scalar code (double). Both runners inline their step into the timing loop
// (always_inline), so neither pays a call per step.
#pragma once

#include <array>
#include <cstddef>
#include <string>
#include <type_traits>
#include <vector>

#include <Eigen/Core>
#include <posenc/adapters/eigen.hpp>
#include <posenc/ode.hpp>

namespace ode_small {
using namespace posenc::ode;

inline constexpr double dt = 1e-3;

// ---- states and their right-hand side dydt = -y ------------------------------------------------
template <class S>
struct state_kind;

template <>
struct state_kind<double> {
  static constexpr const char* name = "scalar";
  static double make(std::size_t) { return 1.0; }
  static double* data(double& y) { return &y; }
};
template <std::size_t N>
struct state_kind<std::array<double, N>> {
  static constexpr const char* name = "array";
  static std::array<double, N> make(std::size_t) {
    std::array<double, N> y{};
    y.fill(1.0);
    return y;
  }
  static double* data(std::array<double, N>& y) { return y.data(); }
};
template <>
struct state_kind<std::vector<double>> {
  static constexpr const char* name = "vector";
  static std::vector<double> make(std::size_t n) { return std::vector<double>(n, 1.0); }
  static double* data(std::vector<double>& y) { return y.data(); }
};
template <int N>
struct state_kind<Eigen::Matrix<double, N, 1>> {
  static constexpr const char* name = N == Eigen::Dynamic ? "eigen_dynamic" : "eigen_fixed";
  static Eigen::Matrix<double, N, 1> make(std::size_t n) {
    return Eigen::Matrix<double, N, 1>::Ones(static_cast<Eigen::Index>(n));
  }
  static double* data(Eigen::Matrix<double, N, 1>& y) { return y.data(); }
};

struct decay {
  void operator()(double, const double& y, double& d) const { d = -y; }
  template <std::size_t N>
  void operator()(double, const std::array<double, N>& y, std::array<double, N>& d) const {
    for (std::size_t i = 0; i < N; ++i) d[i] = -y[i];
  }
  void operator()(double, const std::vector<double>& y, std::vector<double>& d) const {
    const std::size_t n = y.size();
    const double* __restrict p = y.data();
    double* __restrict q = d.data();
    for (std::size_t i = 0; i < n; ++i) q[i] = -p[i];
  }
  // The same loop as for std::array / std::vector (not d = -y): the right-hand side is the
  // user's code, identical in the engine's step and in the hand loop it is compared with.
  template <int N>
  void operator()(double, const Eigen::Matrix<double, N, 1>& y, Eigen::Matrix<double, N, 1>& d) const {
    const std::size_t n = N == Eigen::Dynamic ? static_cast<std::size_t>(y.size()) : static_cast<std::size_t>(N);
    const double* __restrict p = y.data();
    double* __restrict q = d.data();
    for (std::size_t i = 0; i < n; ++i) q[i] = -p[i];
  }
};

// ---- the hand-written references ----------------------------------------------------------------
// Size is std::integral_constant<std::size_t, N> (compile-time trip count) or std::size_t.
// Each loop is one right-hand-side evaluation or one stage sum, as in the engine.
template <class Size>
inline constexpr std::size_t extent = 1;
template <std::size_t N>
inline constexpr std::size_t extent<std::integral_constant<std::size_t, N>> = N;

template <class Size>
struct hand_buffers {
  static constexpr bool fixed = !std::is_same_v<Size, std::size_t>;
  using buf = std::conditional_t<fixed, std::array<double, extent<Size>>, std::vector<double>>;
  std::array<buf, 7> k{};
  buf x{};
  explicit hand_buffers(std::size_t n) {
    if constexpr (!fixed) {
      for (auto& b : k) b.assign(n, 0.0);
      x.assign(n, 0.0);
    }
  }
};

template <class Sch>
struct hand;

template <>
struct hand<schemes::euler> {
  template <class Size>
  [[gnu::always_inline]] static void step(double* __restrict py, hand_buffers<Size>& w, Size n) {
    double* __restrict a = w.k[0].data();
    for (std::size_t i = 0; i < n; ++i) a[i] = -py[i];
    for (std::size_t i = 0; i < n; ++i) py[i] = py[i] + dt * a[i];
  }
  [[gnu::always_inline]] static void step(double& y) {
    const double a = -y;
    y = y + dt * a;
  }
};

template <>
struct hand<schemes::rk4> {
  static constexpr double h2 = dt / 2, h3 = dt / 3, h6 = dt / 6;
  template <class Size>
  [[gnu::always_inline]] static void step(double* __restrict py, hand_buffers<Size>& w, Size n) {
    double* __restrict a = w.k[0].data();
    double* __restrict b = w.k[1].data();
    double* __restrict c = w.k[2].data();
    double* __restrict d = w.k[3].data();
    double* __restrict x = w.x.data();
    for (std::size_t i = 0; i < n; ++i) a[i] = -py[i];
    for (std::size_t i = 0; i < n; ++i) x[i] = py[i] + h2 * a[i];
    for (std::size_t i = 0; i < n; ++i) b[i] = -x[i];
    for (std::size_t i = 0; i < n; ++i) x[i] = py[i] + h2 * b[i];
    for (std::size_t i = 0; i < n; ++i) c[i] = -x[i];
    for (std::size_t i = 0; i < n; ++i) x[i] = py[i] + dt * c[i];
    for (std::size_t i = 0; i < n; ++i) d[i] = -x[i];
    for (std::size_t i = 0; i < n; ++i) py[i] = py[i] + h6 * a[i] + h3 * b[i] + h3 * c[i] + h6 * d[i];
  }
  [[gnu::always_inline]] static void step(double& y) {
    const double a = -y;
    const double b = -(y + h2 * a);
    const double c = -(y + h2 * b);
    const double d = -(y + dt * c);
    y = y + h6 * a + h3 * b + h3 * c + h6 * d;
  }
};

template <>
struct hand<schemes::dopri5> {
  static constexpr double h = dt;
  static constexpr double a21 = h / 5, a31 = h * 3 / 40, a32 = h * 9 / 40, a41 = h * 44 / 45, a42 = h * -56 / 15,
                          a43 = h * 32 / 9, a51 = h * 19372 / 6561, a52 = h * -25360 / 2187,
                          a53 = h * 64448 / 6561, a54 = h * -212 / 729, a61 = h * 9017 / 3168,
                          a62 = h * -355 / 33, a63 = h * 46732 / 5247, a64 = h * 49 / 176,
                          a65 = h * -5103 / 18656, b1 = h * 35 / 384, b3 = h * 500 / 1113, b4 = h * 125 / 192,
                          b5 = h * -2187 / 6784, b6 = h * 11 / 84;
  template <class Size>
  [[gnu::always_inline]] static void step(double* __restrict py, hand_buffers<Size>& w, Size n) {
    double* __restrict a = w.k[0].data();
    double* __restrict b = w.k[1].data();
    double* __restrict c = w.k[2].data();
    double* __restrict d = w.k[3].data();
    double* __restrict e = w.k[4].data();
    double* __restrict f = w.k[5].data();
    double* __restrict t = w.x.data();
    for (std::size_t i = 0; i < n; ++i) a[i] = -py[i];
    for (std::size_t i = 0; i < n; ++i) t[i] = py[i] + a21 * a[i];
    for (std::size_t i = 0; i < n; ++i) b[i] = -t[i];
    for (std::size_t i = 0; i < n; ++i) t[i] = py[i] + a31 * a[i] + a32 * b[i];
    for (std::size_t i = 0; i < n; ++i) c[i] = -t[i];
    for (std::size_t i = 0; i < n; ++i) t[i] = py[i] + a41 * a[i] + a42 * b[i] + a43 * c[i];
    for (std::size_t i = 0; i < n; ++i) d[i] = -t[i];
    for (std::size_t i = 0; i < n; ++i) t[i] = py[i] + a51 * a[i] + a52 * b[i] + a53 * c[i] + a54 * d[i];
    for (std::size_t i = 0; i < n; ++i) e[i] = -t[i];
    for (std::size_t i = 0; i < n; ++i)
      t[i] = py[i] + a61 * a[i] + a62 * b[i] + a63 * c[i] + a64 * d[i] + a65 * e[i];
    for (std::size_t i = 0; i < n; ++i) f[i] = -t[i];
    for (std::size_t i = 0; i < n; ++i)
      py[i] = py[i] + b1 * a[i] + b3 * c[i] + b4 * d[i] + b5 * e[i] + b6 * f[i];
  }
  [[gnu::always_inline]] static void step(double& y) {
    const double a = -y;
    const double b = -(y + a21 * a);
    const double c = -(y + a31 * a + a32 * b);
    const double d = -(y + a41 * a + a42 * b + a43 * c);
    const double e = -(y + a51 * a + a52 * b + a53 * c + a54 * d);
    const double f = -(y + a61 * a + a62 * b + a63 * c + a64 * d + a65 * e);
    y = y + b1 * a + b3 * c + b4 * d + b5 * e + b6 * f;
  }
};

/// The hand reference's flavour for a state type: "scalar", "fixed" or "dynamic".
template <class S>
constexpr const char* hand_kind() {
  if constexpr (std::is_same_v<S, double>) return "scalar";
  else if constexpr (std::is_same_v<S, std::vector<double>> || std::is_same_v<S, Eigen::VectorXd>) return "dynamic";
  else return "fixed";
}

/// Runs `steps` steps of the engine on state S of n scalars; returns a value depending on y.
template <class Sch, class S>
struct posenc_runner {
  S y;
  explicit_rk<Sch, S> st;
  decay f;
  double t = 0;
  explicit posenc_runner(std::size_t n) : y(state_kind<S>::make(n)), st(y) {}
  [[gnu::always_inline]] void step() {
    st.step(f, t, y, dt);
    t += dt;
  }
  double* data() { return state_kind<S>::data(y); }
};

/// Runs the hand loop; N = 0: run-time n, N > 0: compile-time n; scalar: straight-line code.
template <class Sch, std::size_t N, bool Scalar = false>
struct hand_runner {
  using size_type = std::conditional_t<N == 0, std::size_t, std::integral_constant<std::size_t, N>>;
  std::conditional_t<N == 0, std::vector<double>, std::array<double, N == 0 ? 1 : N>> y{};
  hand_buffers<size_type> w;
  std::size_t n;
  explicit hand_runner(std::size_t n_) : w(n_), n(n_) {
    if constexpr (N == 0) y.assign(n, 1.0);
    else y.fill(1.0);
  }
  [[gnu::always_inline]] void step() {
    if constexpr (Scalar) hand<Sch>::step(y[0]);
    else if constexpr (N == 0) hand<Sch>::step(y.data(), w, n);
    else hand<Sch>::step(y.data(), w, size_type{});
  }
  double* data() { return y.data(); }
};

}  // namespace ode_small
