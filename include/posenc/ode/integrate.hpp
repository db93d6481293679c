// SPDX-License-Identifier: MIT
// Integration over a time grid t0, t1, ..., t_{n-1} (strictly increasing or strictly
// decreasing). The observer is called as obs(i, t_i, y(t_i)) at every grid point, i = 0 first.
//
//   integrate(scheme_or_stepper, f, y, times, fixed_steps{k}, obs)
//       k substeps of equal size per interval, landing exactly on each t_i (no interpolation);
//       fixed_steps{.max_step = h} instead takes ceil(|t_{i+1} - t_i| / h) substeps.
//   integrate(scheme_or_stepper, f, y, times, adaptive{...}, obs)
//       embedded error control (PI controller, rtol/atol, first-step heuristic, min/max step,
//       max_steps guard); values at the t_i come from the scheme's dense output.
//
// Grids, substeps and their validation live in posenc/ode/grid.hpp.
// On return y holds y(t_{n-1}). Errors: grid_error (grid not strictly monotone or not finite),
// invalid_argument (zero substeps, bad tolerances), shape_error (y does not fit the stepper),
// non_finite_error (y0 or the solution not finite), step_budget_exceeded (max_steps, min_step
// or step-size underflow).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <span>
#include <string_view>
#include <type_traits>
#include <utility>

#include <posenc/core/error.hpp>
#include <posenc/ode/grid.hpp>
#include <posenc/ode/stepper.hpp>

namespace posenc::ode {

/// Adaptive stepping options (Hairer, Norsett & Wanner, Solving ODEs I, II.4).
struct adaptive {
  double rtol = 1e-6;
  double atol = 1e-9;
  double first_step = 0;  // 0: chosen by the starting-step heuristic
  double min_step = 0;    // a step that must shrink below this throws step_budget_exceeded
  double max_step = std::numeric_limits<double>::infinity();
  std::size_t max_steps = 100000;  // accepted + rejected steps before step_budget_exceeded
  double safety = 0.9;
  double min_factor = 0.2;
  double max_factor = 10.0;
};

struct integration_stats {
  std::size_t steps = 0;            // accepted steps
  std::size_t rejected = 0;         // rejected steps (adaptive only)
  std::size_t rhs_evaluations = 0;  // calls of f
};

/// An observer that does nothing.
struct no_observer {
  template <class... A>
  constexpr void operator()(A&&...) const noexcept {}
};

namespace detail {
template <class X>
struct is_explicit_rk : std::false_type {};
template <class Sc, class St, class B>
struct is_explicit_rk<explicit_rk<Sc, St, B>> : std::true_type {};

template <class Stepper, class State>
void prepare(Stepper& st, const State& y, std::string_view where) {
  using B = typename Stepper::backend_type;
  if (!st.fits(y)) st.resize_like(y);
  st.reset();
  posenc::detail::require<non_finite_error>(B::all_finite(y), where, "the initial state y0 contains NaN or Inf");
}

template <class B, class State, class T>
void check_finite(const State& y, T t, std::string_view where) {
  posenc::detail::require<non_finite_error>(B::all_finite(y), where, "the solution became non-finite (NaN or Inf) at t = ", t,
                            "; the right-hand side or the step size is at fault");
}
}  // namespace detail

// ---- fixed steps --------------------------------------------------------------------------------

template <class Scheme, class State, class Backend, class Rhs, class Observer = no_observer>
integration_stats integrate(explicit_rk<Scheme, State, Backend>& st, Rhs&& f, State& y,
                            std::span<const typename explicit_rk<Scheme, State, Backend>::time_type> times,
                            fixed_steps policy, Observer&& obs = {}) {
  using T = typename explicit_rk<Scheme, State, Backend>::time_type;
  constexpr std::string_view where = "integrate(fixed_steps)";
  validate_grid(times, "integrate(fixed_steps): times");
  validate_fixed_steps(policy, where);
  (void)count_fixed_steps(policy, times, where);
  detail::prepare(st, y, where);
  st.reset_counters();
  integration_stats stats;
  obs(std::size_t{0}, times[0], std::as_const(y));
  for (std::size_t i = 0; i + 1 < times.size(); ++i) {
    const T t0 = times[i], t1 = times[i + 1];
    const std::size_t k = substeps_for(policy, t0, t1);
    for_each_substep(t0, t1, k, [&](std::size_t, T ts, T hs) { st.step(f, ts, y, hs); });
    stats.steps += k;
    detail::check_finite<Backend>(y, t1, where);
    obs(i + 1, t1, std::as_const(y));
  }
  stats.rhs_evaluations = st.rhs_evaluations();
  return stats;
}

// ---- adaptive -----------------------------------------------------------------------------------

template <class Scheme, class State, class Backend, class Rhs, class Observer = no_observer>
  requires EmbeddedScheme<Scheme>
integration_stats integrate(explicit_rk<Scheme, State, Backend>& st, Rhs&& f, State& y,
                            std::span<const typename explicit_rk<Scheme, State, Backend>::time_type> times,
                            const adaptive& opt, Observer&& obs = {}) {
  using T = typename explicit_rk<Scheme, State, Backend>::time_type;
  using V = state_value_t<State>;
  constexpr std::string_view where = "integrate(adaptive)";
  const int dir = validate_grid(times, "integrate(adaptive): times");
  posenc::detail::require(opt.rtol >= 0 && opt.atol >= 0 && (opt.rtol > 0 || opt.atol > 0) && std::isfinite(opt.rtol) &&
                      std::isfinite(opt.atol),
                  where, "expected rtol >= 0, atol >= 0, not both 0, got rtol = ", opt.rtol, ", atol = ", opt.atol);
  posenc::detail::require(opt.min_step >= 0 && opt.max_step > 0 && opt.min_step <= opt.max_step, where,
                  "expected 0 <= min_step <= max_step, max_step > 0, got min_step = ", opt.min_step,
                  ", max_step = ", opt.max_step);
  posenc::detail::require(opt.first_step >= 0 && std::isfinite(opt.first_step), where,
                  "expected first_step >= 0 (0: automatic), got ", opt.first_step);
  posenc::detail::require(opt.safety > 0 && opt.safety <= 1 && opt.min_factor > 0 && opt.min_factor < 1 &&
                      opt.max_factor > 1,
                  where, "expected 0 < safety <= 1, 0 < min_factor < 1 < max_factor");
  posenc::detail::require(opt.max_steps >= 1, where, "expected max_steps >= 1, got ", opt.max_steps);
  detail::prepare(st, y, where);
  st.reset_counters();

  integration_stats stats;
  obs(std::size_t{0}, times[0], std::as_const(y));
  if (times.size() < 2) return stats;

  const V atol = static_cast<V>(opt.atol), rtol = static_cast<V>(opt.rtol);
  State y1, out;
  state_traits<State>::resize_like(y1, y);
  state_traits<State>::resize_like(out, y);

  T t = times[0];
  const T t_end = times.back();
  const T span = std::abs(t_end - t);
  const double q = static_cast<double>(std::min(Scheme::order, Scheme::error_order));
  const double alpha = 0.7 / (q + 1), beta = 0.4 / (q + 1);

  // Starting step (Hairer, Norsett & Wanner, II.4, "automatic step size selection").
  T h;
  if (opt.first_step > 0) {
    h = static_cast<T>(opt.first_step);
  } else {
    call_rhs(f, t, y, out);  // f0 (one extra evaluation, counted below)
    ++stats.rhs_evaluations;
    const double d0 = Backend::scaled_rms(y, y, y, atol, rtol);
    const double d1 = Backend::scaled_rms(out, y, y, atol, rtol);
    double h0 = (d0 < 1e-5 || d1 < 1e-5) ? 1e-6 : 0.01 * d0 / d1;
    h0 = std::min<double>(h0, static_cast<double>(span));
    Backend::linear_combination(y1, std::array<V, 2>{V(1), static_cast<V>(dir * h0)}, std::array<const State*, 2>{&y, &out});
    State f1;
    state_traits<State>::resize_like(f1, y);
    call_rhs(f, t + dir * static_cast<T>(h0), y1, f1);
    ++stats.rhs_evaluations;
    Backend::linear_combination(f1, std::array<V, 2>{V(1), V(-1)}, std::array<const State*, 2>{&f1, &out});
    const double d2 = Backend::scaled_rms(f1, y, y, atol, rtol) / h0;
    const double dm = std::max(d1, d2);
    const double h1 = dm <= 1e-15 ? std::max(1e-6, h0 * 1e-3) : std::pow(0.01 / dm, 1.0 / (Scheme::order + 1));
    h = static_cast<T>(std::min(100 * h0, h1));
  }
  if (!(h > 0) || !std::isfinite(static_cast<double>(h))) h = static_cast<T>(span * 1e-6);
  h = std::clamp<T>(h, static_cast<T>(std::max(opt.min_step, 0.0)), static_cast<T>(std::min<double>(opt.max_step, static_cast<double>(span))));

  double err_prev = 1e-4;
  bool last_rejected = false;
  std::size_t next = 1;
  const T eps = std::numeric_limits<T>::epsilon();
  while (next < times.size()) {
    if (stats.steps + stats.rejected >= opt.max_steps)
      posenc::detail::fail<step_budget_exceeded>(where, "max_steps = ", opt.max_steps, " reached at t = ", t,
                                         " before t_end = ", t_end, " (", stats.steps, " accepted, ",
                                         stats.rejected, " rejected)");
    T hs = dir * h;
    bool hits_end = false;
    if (dir * (t + hs - t_end) >= 0) {
      hs = t_end - t;
      hits_end = true;
    }
    if (std::abs(hs) <= 16 * eps * std::max<T>(std::abs(t), 1) && !hits_end)
      posenc::detail::fail<step_budget_exceeded>(where, "step size underflow at t = ", t, " (h = ", hs, ")");
    const V err = st.step_with_error(f, t, y, y1, hs, atol, rtol);
    if (err <= V(1)) {
      const T tn = hits_end ? t_end : t + hs;
      while (next < times.size() && dir * (times[next] - tn) <= 0) {
        if (times[next] == tn) {
          obs(next, times[next], std::as_const(y1));
        } else {
          // in [0, 1] but for rounding (t + hs is rounded): dense_output refuses theta outside it
          const V theta = std::clamp(static_cast<V>((times[next] - t) / hs), V(0), V(1));
          st.dense_output(f, t, hs, theta, y, y1, out);
          obs(next, times[next], std::as_const(out));
        }
        ++next;
      }
      using std::swap;
      swap(y, y1);
      t = tn;
      st.accept();
      ++stats.steps;
      double fac = opt.safety * std::pow(std::max<double>(err, 1e-10), -alpha) * std::pow(err_prev, beta);
      fac = std::clamp(fac, opt.min_factor, last_rejected ? 1.0 : opt.max_factor);
      err_prev = std::max<double>(err, 1e-4);
      last_rejected = false;
      h = std::min<T>(std::abs(hs) * static_cast<T>(fac), static_cast<T>(opt.max_step));
    } else {
      ++stats.rejected;
      const double fac = std::isfinite(static_cast<double>(err))
                             ? std::max(opt.min_factor, opt.safety * std::pow(static_cast<double>(err), -1.0 / (q + 1)))
                             : opt.min_factor;
      if (opt.min_step > 0 && std::abs(hs) <= static_cast<T>(opt.min_step) * (1 + 1e-12))
        posenc::detail::fail<step_budget_exceeded>(where, "the error test failed at the minimum step size min_step = ",
                                           opt.min_step, " at t = ", t, " (scaled error ", err, ")");
      h = std::max<T>(std::abs(hs) * static_cast<T>(fac), static_cast<T>(opt.min_step));
      last_rejected = true;
      st.reject();  // y is unchanged: keep f(t, y) for the retry
    }
  }
  detail::check_finite<Backend>(y, t, where);
  stats.rhs_evaluations += st.rhs_evaluations();
  return stats;
}

// ---- convenience: pass a scheme instead of a stepper ------------------------------------------

template <ExplicitScheme Scheme, class Rhs, StateSpace State, class Policy, class Observer = no_observer>
  requires(!detail::is_explicit_rk<Scheme>::value)
integration_stats integrate(Scheme, Rhs&& f, State& y,
                            std::span<const time_type_for<state_value_t<State>>> times, const Policy& policy,
                            Observer&& obs = {}) {
  explicit_rk<Scheme, State> st(y);
  return integrate(st, std::forward<Rhs>(f), y, times, policy, std::forward<Observer>(obs));
}

}  // namespace posenc::ode
