// SPDX-License-Identifier: MIT
// Solver-step microbenchmarks of the ODE engine (one step per iteration).
//
// (a) A cheap right-hand side, dydt = -y, over state sizes 8 ... 2^20, for every shipped scheme
//     on std::vector<double> and Eigen::VectorXd. In-binary references beside them:
//       hand/<scheme>     a hand-written loop doing the same arithmetic in the same passes
//                         (euler, rk4, dopri5): the engine's overhead, goal <= 1.1x;
//       odeint/<scheme>   Boost.Odeint's stepper on the same state type (euler, runge_kutta4,
//                         runge_kutta_dopri5 used as a plain stepper; std::vector with odeint's
//                         range_algebra, Eigen with its vector_space_algebra).
// (c) Small states, n in {1, 4, 16, 64}: euler, rk4 and dopri5 on double, std::array<double, N>,
//     std::vector<double>, Eigen::Matrix<double, N, 1> and Eigen::VectorXd, beside hand loops
//     with a compile-time trip count (hand/fixed: the reference of std::array and fixed-size
//     Eigen), a run-time one (hand/dynamic: std::vector, Eigen::VectorXd) and straight-line
//     scalar code (hand/scalar). The harness is bench/ode_small.hpp; bench/ode_icount.cpp counts
//     the instructions of the same steps under callgrind. Goal: posenc within 1.1x its hand loop.
// (b) An MLP right-hand side dydt = W2 tanh(W1 y + b1) + b2, d = 512 (two GEMVs per evaluation),
//     one rk4 / dopri5 step, posenc vs odeint on Eigen::VectorXd.
//
// Counters: bytes/step (state memory traffic of the step, each stage sum and RHS evaluation
// counted as one pass: reads + writes, 8 bytes per double) and FLOP/step; rates as GB/s and
// GFLOP/s. Run: build-ode/bench/bench_ode --benchmark_min_time=0.1
#include <benchmark/benchmark.h>

#include <cmath>
#include <cstddef>
#include <string>
#include <vector>

#include <boost/numeric/odeint.hpp>
#include <boost/numeric/odeint/external/eigen/eigen.hpp>
#include <posenc/adapters/eigen.hpp>
#include <posenc/ode.hpp>

#include "ode_small.hpp"

namespace {
namespace bo = boost::numeric::odeint;
using namespace posenc::ode;
using vec = std::vector<double>;
using evec = Eigen::VectorXd;

constexpr double dt = 1e-3;

// ---- right-hand sides --------------------------------------------------------------------
struct decay_vec {
  void operator()(double, const vec& y, vec& d) const {
    const std::size_t n = y.size();
    const double* __restrict p = y.data();
    double* __restrict q = d.data();
    for (std::size_t i = 0; i < n; ++i) q[i] = -p[i];
  }
  void operator()(const vec& y, vec& d, double t) const { (*this)(t, y, d); }  // odeint form
};
struct decay_eigen {
  void operator()(double, const evec& y, evec& d) const { d = -y; }
  void operator()(const evec& y, evec& d, double t) const { (*this)(t, y, d); }
};

// ---- work per step, from the tableau ---------------------------------------------------------
template <class Sch>
struct work {
  static constexpr std::size_t s = stages_v<Sch>;
  // stages evaluated by a fixed step (FSAL: the last stage has weight 0 and is skipped)
  static constexpr std::size_t evals = is_fsal<Sch>() ? s - 1 : s;
  static constexpr std::size_t nnz_row(std::size_t i) {
    std::size_t k = 0;
    for (std::size_t j = 0; j < s; ++j) k += Sch::coefficients.a[i][j] != 0;
    return k;
  }
  static constexpr std::size_t nnz_b() {
    std::size_t k = 0;
    for (std::size_t j = 0; j < s; ++j) k += Sch::coefficients.b[j] != 0;
    return k;
  }
  // per scalar: each RHS evaluation reads 1, writes 1 (and costs 1 flop for -y); each stage sum
  // y + sum_j c_j k_j with m terms reads m + 1, writes 1, costs 2m flops.
  static constexpr double doubles_moved() {
    double m = 0;
    for (std::size_t i = 0; i < evals; ++i) {
      m += 2;
      if (i > 0 && nnz_row(i) > 0) m += static_cast<double>(nnz_row(i)) + 2;
    }
    return m + static_cast<double>(nnz_b()) + 2;
  }
  static constexpr double flops() {
    double f = 0;
    for (std::size_t i = 0; i < evals; ++i) f += 1 + (i > 0 ? 2.0 * static_cast<double>(nnz_row(i)) : 0.0);
    return f + 2.0 * static_cast<double>(nnz_b());
  }
};

void set_counters(benchmark::State& state, double doubles_per_scalar, double flops_per_scalar, std::size_t n) {
  const double bytes = 8.0 * doubles_per_scalar * static_cast<double>(n);
  const double flops = flops_per_scalar * static_cast<double>(n);
  state.counters["bytes/step"] = bytes;
  state.counters["FLOP/step"] = flops;
  state.counters["GB/s"] = benchmark::Counter(bytes, benchmark::Counter::kIsIterationInvariantRate,
                                              benchmark::Counter::kIs1000);
  state.counters["GFLOP/s"] = benchmark::Counter(flops, benchmark::Counter::kIsIterationInvariantRate,
                                                 benchmark::Counter::kIs1000);
}

// ---- (a) posenc ---------------------------------------------------------------------------
template <class Sch, class State, class Rhs>
void bm_posenc(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  State y;
  if constexpr (std::is_same_v<State, vec>) y.assign(n, 1.0);
  else y = State::Ones(static_cast<Eigen::Index>(n));
  explicit_rk<Sch, State> st(y);
  Rhs f;
  double t = 0;
  for (auto _ : state) {
    st.step(f, t, y, dt);
    t += dt;
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
  set_counters(state, work<Sch>::doubles_moved(), work<Sch>::flops(), n);
}

// ---- (a) hand-written loops: the same arithmetic in the same passes -------------------------
/// The hand loops of bench/ode_small.hpp (ode_small::hand<Sch>: one pass per stage, restrict
/// pointers, the same arithmetic), here on run-time sizes.
template <class Sch>
void bm_hand(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  vec y(n, 1.0);
  ode_small::hand_buffers<std::size_t> w(n);
  for (auto _ : state) {
    ode_small::hand<Sch>::step(y.data(), w, n);
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
  set_counters(state, work<Sch>::doubles_moved(), work<Sch>::flops(), n);
}

// ---- (a) Boost.Odeint on the same states ------------------------------------------------------
template <class Sch>
struct odeint_peer;
template <>
struct odeint_peer<schemes::euler> {
  template <class S, class A>
  using type = bo::euler<S, double, S, double, A>;
};
template <>
struct odeint_peer<schemes::rk4> {
  template <class S, class A>
  using type = bo::runge_kutta4<S, double, S, double, A>;
};
template <>
struct odeint_peer<schemes::dopri5> {
  template <class S, class A>
  using type = bo::runge_kutta_dopri5<S, double, S, double, A>;
};

template <class Sch, class State, class Rhs>
void bm_odeint(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  State y;
  using A = std::conditional_t<std::is_same_v<State, vec>, bo::range_algebra, bo::vector_space_algebra>;
  if constexpr (std::is_same_v<State, vec>) y.assign(n, 1.0);
  else y = State::Ones(static_cast<Eigen::Index>(n));
  typename odeint_peer<Sch>::template type<State, A> st;
  Rhs f;
  double t = 0;
  for (auto _ : state) {
    st.do_step(f, y, t, dt);
    t += dt;
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
  set_counters(state, work<Sch>::doubles_moved(), work<Sch>::flops(), n);
}

// ---- (b) MLP right-hand side, d = 512 ------------------------------------------------------------
struct mlp {
  Eigen::MatrixXd w1, w2;
  evec b1, b2;
  mutable evec h;
  explicit mlp(Eigen::Index d) : w1(Eigen::MatrixXd::Random(d, d) / std::sqrt(double(d))),
                                 w2(Eigen::MatrixXd::Random(d, d) / std::sqrt(double(d))),
                                 b1(evec::Random(d)), b2(evec::Random(d)), h(d) {}
  void operator()(double, const evec& y, evec& dy) const {
    h.noalias() = w1 * y;
    h = (h + b1).array().tanh().matrix();
    dy.noalias() = w2 * h;
    dy += b2;
  }
  void operator()(const evec& y, evec& dy, double t) const { (*this)(t, y, dy); }
};

constexpr Eigen::Index mlp_d = 512;

template <class Sch>
double mlp_flops() {
  // per evaluation: two GEMVs (2 d^2 each), bias adds and tanh (~ d each, tanh counted as 1)
  const double d = mlp_d;
  return static_cast<double>(work<Sch>::evals) * (4 * d * d + 3 * d) + (work<Sch>::flops() - work<Sch>::evals) * d;
}

template <class Sch>
void bm_posenc_mlp(benchmark::State& state) {
  const mlp f(mlp_d);
  evec y = evec::Random(mlp_d);
  explicit_rk<Sch, evec> st(y);
  double t = 0;
  for (auto _ : state) {
    st.step(f, t, y, dt);
    t += dt;
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
  const double flops = mlp_flops<Sch>();
  state.counters["FLOP/step"] = flops;
  state.counters["bytes/step"] = static_cast<double>(work<Sch>::evals) * 2 * 8.0 * mlp_d * mlp_d;  // W1, W2 reads
  state.counters["GFLOP/s"] = benchmark::Counter(flops, benchmark::Counter::kIsIterationInvariantRate,
                                                 benchmark::Counter::kIs1000);
}

template <class Sch>
void bm_odeint_mlp(benchmark::State& state) {
  const mlp f(mlp_d);
  evec y = evec::Random(mlp_d);
  typename odeint_peer<Sch>::template type<evec, bo::vector_space_algebra> st;
  double t = 0;
  for (auto _ : state) {
    st.do_step(std::cref(f), y, t, dt);
    t += dt;
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
  const double flops = mlp_flops<Sch>();
  state.counters["FLOP/step"] = flops;
  state.counters["bytes/step"] = static_cast<double>(work<Sch>::evals) * 2 * 8.0 * mlp_d * mlp_d;
  state.counters["GFLOP/s"] = benchmark::Counter(flops, benchmark::Counter::kIsIterationInvariantRate,
                                                 benchmark::Counter::kIs1000);
}

// ---- (c) small states -------------------------------------------------------------------------
template <class Runner, class Sch>
void bm_small(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  Runner r(n);
  for (auto _ : state) {
    r.step();
    benchmark::DoNotOptimize(r.data());
    benchmark::ClobberMemory();
  }
  set_counters(state, work<Sch>::doubles_moved(), work<Sch>::flops(), n);
}

template <class Sch, std::size_t N>
void register_small_n() {
  namespace os = ode_small;
  const std::string sch(Sch::name), n = "/" + std::to_string(N);
  auto reg = [&](const std::string& who, auto fn) {
    benchmark::RegisterBenchmark(("small/" + who + "/" + sch + n).c_str(), fn)->Arg(static_cast<long>(N));
  };
  if constexpr (N == 1) {
    reg("posenc/scalar", bm_small<os::posenc_runner<Sch, double>, Sch>);
    reg("hand/scalar", bm_small<os::hand_runner<Sch, 1, true>, Sch>);
  }
  reg("posenc/array", bm_small<os::posenc_runner<Sch, std::array<double, N>>, Sch>);
  reg("posenc/eigen_fixed", bm_small<os::posenc_runner<Sch, Eigen::Matrix<double, static_cast<int>(N), 1>>, Sch>);
  reg("hand/fixed", bm_small<os::hand_runner<Sch, N>, Sch>);
  reg("posenc/vector", bm_small<os::posenc_runner<Sch, vec>, Sch>);
  reg("posenc/eigen_dynamic", bm_small<os::posenc_runner<Sch, evec>, Sch>);
  reg("hand/dynamic", bm_small<os::hand_runner<Sch, 0>, Sch>);
}

template <class Sch>
void register_small() {
  register_small_n<Sch, 1>();
  register_small_n<Sch, 4>();
  register_small_n<Sch, 16>();
  register_small_n<Sch, 64>();
}

void sizes(benchmark::internal::Benchmark* b) {
  for (long n : {8L, 64L, 512L, 4096L, 32768L, 262144L, 1048576L}) b->Arg(n);
}

template <class Sch>
void register_scheme() {
  const std::string name(Sch::name);
  benchmark::RegisterBenchmark(("posenc/vector/" + name).c_str(), bm_posenc<Sch, vec, decay_vec>)->Apply(sizes);
  benchmark::RegisterBenchmark(("posenc/eigen/" + name).c_str(), bm_posenc<Sch, evec, decay_eigen>)->Apply(sizes);
}

template <class Sch>
void register_peer(void (*hand)(benchmark::State&)) {
  const std::string name(Sch::name);
  benchmark::RegisterBenchmark(("hand/vector/" + name).c_str(), hand)->Apply(sizes);
  benchmark::RegisterBenchmark(("odeint/vector/" + name).c_str(), bm_odeint<Sch, vec, decay_vec>)->Apply(sizes);
  benchmark::RegisterBenchmark(("odeint/eigen/" + name).c_str(), bm_odeint<Sch, evec, decay_eigen>)->Apply(sizes);
  benchmark::RegisterBenchmark(("posenc/eigen_mlp512/" + name).c_str(), bm_posenc_mlp<Sch>);
  benchmark::RegisterBenchmark(("odeint/eigen_mlp512/" + name).c_str(), bm_odeint_mlp<Sch>);
}

const bool registered = [] {
  register_scheme<schemes::euler>();
  register_scheme<schemes::midpoint>();
  register_scheme<schemes::heun>();
  register_scheme<schemes::ralston>();
  register_scheme<schemes::kutta3>();
  register_scheme<schemes::rk4>();
  register_scheme<schemes::rk4_38>();
  register_scheme<schemes::heun_euler>();
  register_scheme<schemes::bogacki_shampine>();
  register_scheme<schemes::dopri5>();
  register_scheme<schemes::tsit5>();
  register_peer<schemes::euler>(bm_hand<schemes::euler>);
  register_peer<schemes::rk4>(bm_hand<schemes::rk4>);
  register_peer<schemes::dopri5>(bm_hand<schemes::dopri5>);
  register_small<schemes::euler>();
  register_small<schemes::rk4>();
  register_small<schemes::dopri5>();
  return true;
}();
}  // namespace
