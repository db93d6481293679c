// SPDX-License-Identifier: MIT
// Observed order of convergence of every shipped tableau used as a fixed-step scheme, on the
// three closed-form problems of tests/ode/problems.hpp, t in [1, 8]. Halving h divides the error
// by about 2^p; the reference order p is the scheme's declared order, except on the pure
// quadrature problem y' = g(t), where an RK method is the quadrature rule (b, c) and converges
// with the rule's own order, computed here from the moment conditions sum_i b_i c_i^k = 1/(k+1).
#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <posenc/ode.hpp>

#include "ode/problems.hpp"

namespace {
using namespace posenc::ode;

/// Quadrature order of the rule (b, c): the largest q with sum_i b_i c_i^k = 1/(k+1), k < q.
template <class Sch>
int quadrature_order() {
  const auto& t = Sch::coefficients;
  int q = 0;
  for (int k = 0; k < 12; ++k) {
    long double s = 0;
    for (std::size_t i = 0; i < t.stages; ++i) s += t.b[i] * std::pow(t.c[i], static_cast<long double>(k));
    if (std::fabs(s - 1.0L / (k + 1)) > 1e-15L) break;
    q = k + 1;
  }
  return q;
}

enum class problem { linear, exp, sine };

using L = long double;
using lvec = std::vector<L>;

/// Maximum relative error over the outputs at t = 1, 2, ..., 8, with k substeps per unit interval.
/// Computed in long double (rounding floor ~1e-18), so that fifth-order schemes reach their
/// asymptotic range before rounding (in double, tsit5's small error constants leave no clean
/// range on the sine problem).
template <class Sch>
L max_error(problem p, std::size_t k) {
  const std::vector<L> times{1, 2, 3, 4, 5, 6, 7, 8};
  L err = 0;
  if (p == problem::linear) {
    static const posenc_test::linear_problem lp;
    static const std::vector<lvec> exact = [] {
      std::vector<lvec> e;
      for (int i = 0; i < 8; ++i) e.push_back(lp.exact<L>(i));
      return e;
    }();
    lvec y(lp.n, 1.0L);
    integrate(Sch{}, [&](L, const lvec& x, lvec& d) { lp.rhs(x.data(), d.data()); }, y, times, fixed_steps{k},
              [&](std::size_t i, L, const lvec& v) { err = std::max(err, posenc_test::max_abs_diff(v, exact[i])); });
    return err;  // |expm(A t) 1| is O(1) (A skew-symmetric: the norm of y is preserved)
  }
  if (p == problem::exp) {
    L y = posenc_test::exp_exact(1.0L);
    integrate(Sch{}, [](L t, L, L& d) { d = -std::exp(-t / 10) / 10; }, y, times, fixed_steps{k},
              [&](std::size_t, L t, L v) { err = std::max(err, std::abs(v - posenc_test::exp_exact(t))); });
    return err / posenc_test::exp_exact(8.0L);
  }
  L y = posenc_test::sine_exact(1.0L);
  integrate(Sch{}, [](L t, L x, L& d) { d = posenc_test::sine_rhs(t, x); }, y, times, fixed_steps{k},
            [&](std::size_t, L t, L v) { err = std::max(err, std::abs(v - posenc_test::sine_exact(t))); });
  return err / std::abs(posenc_test::sine_exact(8.0L));
}

/// The observed order log2(e(h) / e(h/2)) from the finest pair whose finer error is still well
/// above rounding (relative error > 1e-15, about 1000x the long double floor).
template <class Sch>
double observed_order(problem p) {
  double best = -1;
  L e_prev = max_error<Sch>(p, 1);
  for (std::size_t k = 2; k <= 1024; k *= 2) {
    const L e = max_error<Sch>(p, k);
    if (e < 1e-15L) break;
    best = static_cast<double>(std::log2(e_prev / e));
    e_prev = e;
  }
  return best;
}

const char* name(problem p) { return p == problem::linear ? "linear" : p == problem::exp ? "exp" : "sine"; }

template <class Sch>
void check_scheme() {
  for (problem p : {problem::linear, problem::exp, problem::sine}) {
    const int expected = p == problem::exp ? quadrature_order<Sch>() : Sch::order;
    const double got = observed_order<Sch>(p);
    if (std::getenv("POSENC_TEST_VERBOSE"))
      std::printf("%-18s %-7s expected %d observed %.3f\n", std::string(Sch::name).c_str(), name(p), expected, got);
    INFO(std::string(Sch::name), " on ", std::string(name(p)), ": expected order ", expected, ", observed ", got);
    // Band: the ratio of two consecutive errors carries the next term of the error expansion,
    // O(h) relative to the leading one; |observed - p| <= 0.3 holds once h is in the asymptotic
    // range (and fails for an order off by one).
    CHECK(got > expected - 0.3);
    CHECK(got < expected + 0.3);
  }
}
}  // namespace

TEST_CASE_TEMPLATE("observed order of convergence of every fixed scheme", Sch, schemes::euler, schemes::midpoint,
                   schemes::heun, schemes::ralston, schemes::kutta3, schemes::rk4, schemes::rk4_38,
                   schemes::heun_euler, schemes::bogacki_shampine, schemes::dopri5, schemes::tsit5) {
  check_scheme<Sch>();
}

TEST_CASE_TEMPLATE("a scheme is exact on y' = polynomial of degree below its quadrature order", Sch, schemes::euler,
                   schemes::midpoint, schemes::heun, schemes::ralston, schemes::kutta3, schemes::rk4, schemes::rk4_38,
                   schemes::heun_euler, schemes::bogacki_shampine, schemes::dopri5, schemes::tsit5) {
  // y' = (q) t^(q-1) has y = t^q: integrated exactly (to rounding) by a rule of order q,
  // and not by one of lower order (checked for q + 1, whose error is O(h^(q+1)) > rounding).
  const int q = quadrature_order<Sch>();
  const std::vector<double> times{0.0, 1.0, 2.0};
  for (int deg : {q, q + 1}) {
    double y = 0;
    integrate(Sch{}, [deg](double t, double, double& d) { d = deg * std::pow(t, deg - 1); }, y, times, fixed_steps{3});
    const double exact = std::pow(2.0, deg);
    INFO(Sch::name, ": degree ", deg, " error ", y - exact);
    if (deg == q) CHECK(std::abs(y - exact) <= 64 * 2.2e-16 * exact);  // a few ulps per step
    else CHECK(std::abs(y - exact) > 1e-9 * exact);
  }
}
