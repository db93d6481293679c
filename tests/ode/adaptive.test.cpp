// SPDX-License-Identifier: MIT
// Adaptive and fixed-grid drivers: tolerance met on the closed-form problems, rejected steps
// happen and are counted (checked against an independent count of right-hand-side calls), dense
// output at interior times, reverse time, exact landing on grid points, observer order.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <numbers>
#include <cstddef>
#include <map>
#include <vector>

#include <posenc/ode.hpp>

#include "ode/problems.hpp"

namespace {
using namespace posenc::ode;
using posenc_test::vec;

/// Largest error at the outputs, in units of the requested tolerance atol + rtol |y_exact|.
template <class Sch>
double tolerance_ratio(int problem_id, double tol, std::vector<double> times, std::size_t* steps = nullptr) {
  adaptive opt{.rtol = tol, .atol = tol};
  double worst = 0;
  std::size_t next = 0;
  bool order_ok = true;
  integration_stats st;
  auto check_index = [&](std::size_t i, double t) {
    order_ok = order_ok && i == next && t == times[i];
    ++next;
  };
  if (problem_id == 0) {
    static const posenc_test::linear_problem lp;
    vec y(lp.n, 1.0);
    st = integrate(Sch{}, [&](double, const vec& x, vec& d) { lp.rhs(x.data(), d.data()); }, y, times, opt,
                   [&](std::size_t i, double t, const vec& v) {
                     check_index(i, t);
                     // the long double expm reference is the costly part: computed once per time
                     static std::map<double, vec> cache;
                     const double key = t - times[0];
                     auto it = cache.find(key);
                     if (it == cache.end()) it = cache.emplace(key, lp.exact(key)).first;
                     const vec& ex = it->second;
                     for (std::size_t j = 0; j < v.size(); ++j)
                       worst = std::max(worst, std::abs(v[j] - ex[j]) / (tol + tol * std::abs(ex[j])));
                   });
  } else if (problem_id == 1) {
    double y = posenc_test::exp_exact(times[0]);
    st = integrate(Sch{}, [](double t, double, double& d) { d = -0.1 * std::exp(-0.1 * t); }, y, times, opt,
                   [&](std::size_t i, double t, double v) {
                     check_index(i, t);
                     const double ex = posenc_test::exp_exact(t);
                     worst = std::max(worst, std::abs(v - ex) / (tol + tol * std::abs(ex)));
                   });
  } else {
    double y = posenc_test::sine_exact(times[0]);
    st = integrate(Sch{}, [](double t, double x, double& d) { d = posenc_test::sine_rhs(t, x); }, y, times, opt,
                   [&](std::size_t i, double t, double v) {
                     check_index(i, t);
                     const double ex = posenc_test::sine_exact(t);
                     worst = std::max(worst, std::abs(v - ex) / (tol + tol * std::abs(ex)));
                   });
  }
  CHECK(order_ok);
  CHECK(next == times.size());
  if (steps) *steps = st.steps;
  return worst;
}

std::vector<double> linspace(double a, double b, std::size_t n) {
  std::vector<double> t(n);
  for (std::size_t i = 0; i < n; ++i) t[i] = a + (b - a) * static_cast<double>(i) / static_cast<double>(n - 1);
  t.back() = b;
  return t;
}
}  // namespace

TEST_CASE_TEMPLATE("adaptive schemes meet their tolerance forward and in reverse time", Sch, schemes::heun_euler,
                   schemes::bogacki_shampine, schemes::dopri5, schemes::tsit5) {
  // The controller bounds the local error per step by the tolerance; the global error at the
  // outputs is the accumulation of local errors over [1, 8] (7 time units, the problems are not
  // contracting: the linear one is norm-preserving, the sine one grows like t^4). C = 20 bounds
  // it with margin for all four pairs (observed worst ratios are printed on failure).
  constexpr double C = 20;
  // 200 interior output times: most of them fall inside steps and come from dense output.
  for (int p = 0; p < 3; ++p) {
    for (double tol : {1e-5, 1e-8}) {
      if (Sch::order < 3 && tol < 1e-6) continue;  // a second-order pair at 1e-8 needs ~10^5 steps
      const double fwd = tolerance_ratio<Sch>(p, tol, linspace(1.0, 8.0, 200));
      const double rev = tolerance_ratio<Sch>(p, tol, linspace(8.0, 1.0, 200));
      INFO(std::string(Sch::name), " problem ", p, " tol ", tol, ": error/tol forward ", fwd, " reverse ", rev);
      CHECK(fwd <= C);
      CHECK(rev <= C);
    }
  }
}

TEST_CASE_TEMPLATE("rejected steps happen and are counted", Sch, schemes::heun_euler, schemes::bogacki_shampine,
                   schemes::dopri5, schemes::tsit5) {
  // y' = exp(-((t - 5) / 0.3)^2): zero (to rounding) far from t = 5, so the error estimate is ~0
  // and the controller grows the step from a tiny first step by max_factor up to max_step; it
  // then runs into the pulse with a long step and must reject. (max_step = 0.5 keeps a stage
  // within 0.25 of the peak, so the pulse cannot be stepped over unseen.)
  // Independent count: the right-hand side counts its own calls. Without the starting
  // heuristic (first_step given), a retry after a rejection reuses f(t, y) (s - 1 calls); a
  // non-FSAL pair makes s calls per accepted step; an FSAL pair makes s - 1 (its first stage is
  // the last stage of the previous step), plus one call at the start. So steps and rejected are
  // both checked against the count.
  std::size_t calls = 0;
  constexpr double w = 0.3;
  auto f = [&](double t, double, double& d) {
    ++calls;
    const double u = (t - 5) / w;
    d = std::exp(-u * u);
  };
  double y = 0;
  const std::vector<double> times{0.0, 10.0};
  const auto st =
      integrate(Sch{}, f, y, times, adaptive{.rtol = 1e-6, .atol = 1e-9, .first_step = 1e-6, .max_step = 0.5});
  constexpr std::size_t s = stages_v<Sch>;
  const std::size_t attempts = st.steps + st.rejected;
  CHECK(st.rejected > 0);
  CHECK(st.rhs_evaluations == calls);
  if constexpr (is_fsal<Sch>()) CHECK(calls == 1 + (s - 1) * attempts);
  else CHECK(calls == s * st.steps + (s - 1) * st.rejected);
  // And the answer: y(10) = int_0^10 exp(-((s - 5)/w)^2) ds = w sqrt(pi) erf(5 / w).
  const double exact = w * std::sqrt(std::numbers::pi) * std::erf(5 / w);
  INFO(std::string(Sch::name), ": ", st.steps, " steps, ", st.rejected, " rejected, error ", y - exact);
  CHECK(std::abs(y - exact) <= 100 * (1e-9 + 1e-6 * exact));  // C = 100: as above, plus the pulse's
                                                               // error accumulates over ~all steps
}

TEST_CASE_TEMPLATE("dense output converges at the order of the continuous extension", Sch, schemes::heun_euler,
                   schemes::bogacki_shampine, schemes::dopri5, schemes::tsit5) {
  // One step from the exact y(2) of the sine problem; the dense value at t0 + theta h against the
  // closed form. Its local error is O(h^(q+1)): q = 4 for the continuous extensions of dopri5 and
  // tsit5; the
  // others use cubic Hermite interpolation (order 3) between y0, y1, f0, f1, limited by the
  // scheme's own local error: q = min(order, 3).
  constexpr int q = SchemeWithDenseOutput<Sch> ? 4 : std::min(Sch::order, 3);
  auto f = [](double t, double x, double& d) { d = posenc_test::sine_rhs(t, x); };
  auto err = [&](double h) {
    explicit_rk<Sch, double> st(0.0);
    const double t0 = 2, y0 = posenc_test::sine_exact(t0);
    double y1 = 0, out = 0, e = 0;
    st.step_with_error(f, t0, y0, y1, h, 1e-9, 1e-9);
    for (double th = 0.1; th < 0.95; th += 0.1) {
      st.dense_output(f, t0, h, th, y0, y1, out);
      e = std::max(e, std::abs(out - posenc_test::sine_exact(t0 + th * h)));
    }
    return e;
  };
  const double e1 = err(0.04), e2 = err(0.02);
  const double p = std::log2(e1 / e2);
  INFO(std::string(Sch::name), ": dense local errors ", e1, " ", e2, " observed local order ", p);
  CHECK(p > q + 1 - 0.3);  // asymptotic band as in convergence.test.cpp
  CHECK(p < q + 1 + 0.5);
}

TEST_CASE_TEMPLATE("fixed steps land exactly on the grid points, forward and reverse", Sch, schemes::euler,
                   schemes::rk4, schemes::rk4_38, schemes::dopri5) {
  // An uneven grid: the observer must see t_i bit-for-bit and i = 0..n-1 in order, and the value
  // at t_i must equal k hand-made steps of the stepper over [t_{i-1}, t_i] (no interpolation).
  for (bool reverse : {false, true}) {
    std::vector<double> times{1.0, 1.3, 2.0, 2.05, 4.7, 8.0};
    if (reverse) std::reverse(times.begin(), times.end());
    const std::size_t k = 40;
    std::vector<double> seen_t, seen_y;
    std::vector<std::size_t> seen_i;
    double y = posenc_test::sine_exact(times[0]);
    auto f = [](double t, double x, double& d) { d = posenc_test::sine_rhs(t, x); };
    integrate(Sch{}, f, y, times, fixed_steps{k}, [&](std::size_t i, double t, double v) {
      seen_i.push_back(i);
      seen_t.push_back(t);
      seen_y.push_back(v);
    });
    REQUIRE(seen_i.size() == times.size());
    double ref = posenc_test::sine_exact(times[0]);
    explicit_rk<Sch, double> st(ref);
    for (std::size_t i = 0; i < times.size(); ++i) {
      CHECK(seen_i[i] == i);
      CHECK(seen_t[i] == times[i]);
      if (i > 0) {
        const double h = (times[i] - times[i - 1]) / k;
        for (std::size_t s = 0; s < k; ++s) {
          const double ts = times[i - 1] + static_cast<double>(s) * h;
          st.step(f, ts, ref, s + 1 == k ? times[i] - ts : h);
        }
      }
      CHECK(seen_y[i] == ref);  // same operations in the same order: bitwise
      // and close to the closed form, relative to max |y| = |y(8)| (steps up to 0.083: loose
      // for euler, whose global error is O(h))
      CHECK(std::abs(seen_y[i] - posenc_test::sine_exact(times[i])) <=
            (Sch::order == 1 ? 0.1 : 1e-5) * std::abs(posenc_test::sine_exact(8.0)));
    }
  }
}
