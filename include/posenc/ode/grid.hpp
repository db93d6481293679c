// SPDX-License-Identifier: MIT
// Time grids and fixed substepping: the one place a grid is checked and the one "k substeps
// landing exactly on t1" loop, used by integrate(), the gradient drivers, the FLOATER encoder
// and the FLOATER device path alike.
//
//   validate_grid(times, what, direction)   finite and strictly monotone (grid_error otherwise)
//   substep(t0, t1, k, s)                   start and size of substep s of k on [t0, t1]
//   for_each_substep(t0, t1, k, f)          f(s, t_s, h_s) for s = 0 .. k-1 (the last lands on t1)
//   fixed_steps, substeps_for, validate_fixed_steps
//   grid                                    t_i = i delta (unbounded) or an explicit increasing grid,
//                                           validated on construction, extendable, with
//                                           require_points(L) for a requested number of points
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include <posenc/core/error.hpp>

namespace posenc::ode {

/// Check a time grid: at least one point, all finite, strictly monotone. `direction` +1 requires
/// increasing times, -1 decreasing, 0 accepts either. Returns +1 or -1 (the direction; +1 for a
/// single point). Throws grid_error naming `what` (the argument) with the offending index.
template <class T>
int validate_grid(std::span<const T> times, std::string_view what = "times", int direction = 0) {
  posenc::detail::require<grid_error>(!times.empty(), what, "expected at least one time point, got none");
  for (std::size_t i = 0; i < times.size(); ++i)
    posenc::detail::require<grid_error>(std::isfinite(times[i]), what, "expected finite times, got ", times[i],
                                        " at index ", i);
  if (times.size() < 2) return direction < 0 ? -1 : 1;
  const int dir = direction != 0 ? direction : (times[1] > times[0] ? 1 : -1);
  for (std::size_t i = 1; i < times.size(); ++i) {
    const bool ok = dir > 0 ? times[i] > times[i - 1] : times[i] < times[i - 1];
    posenc::detail::require<grid_error>(ok, what, "expected strictly ", dir > 0 ? "increasing" : "decreasing",
                                        " times, got t[", i - 1, "] = ", times[i - 1], " then t[", i, "] = ", times[i]);
  }
  return dir;
}

/// Start time and size of substep s of k on [t0, t1] (t1 < t0 steps backwards); the last one
/// lands exactly on t1.
template <class T>
[[nodiscard]] std::pair<T, T> substep(T t0, T t1, std::size_t k, std::size_t s) {
  // a public helper: k = 0 would divide by zero, s >= k step past t1, a non-finite end a NaN step
  posenc::detail::require(k >= 1, "ode::substep", "k: expected k >= 1 substeps, got ", k);
  posenc::detail::require(s < k, "ode::substep", "s: expected s < k = ", k, ", got ", s);
  posenc::detail::require<non_finite_error>(std::isfinite(t0) && std::isfinite(t1), "ode::substep",
                                            "t0, t1: expected finite ends, got ", t0, " and ", t1);
  const T h = (t1 - t0) / static_cast<T>(k);
  const T ts = t0 + static_cast<T>(s) * h;
  return {ts, (s + 1 == k) ? t1 - ts : h};
}

/// f(s, t_s, h_s) for the k substeps of [t0, t1], in order.
template <class T, class F>
void for_each_substep(T t0, T t1, std::size_t k, F&& f) {
  for (std::size_t s = 0; s < k; ++s) {
    const auto [ts, hs] = substep(t0, t1, k, s);
    f(s, ts, hs);
  }
}

/// Fixed stepping: `substeps` equal steps per grid interval (at least), or as many as make
/// each step at most `max_step` long when max_step > 0.
struct fixed_steps {
  std::size_t substeps = 1;
  double max_step = 0;
  std::size_t max_steps = 10000000;  ///< steps over the whole grid before step_budget_exceeded
};

/// Validate a fixed_steps policy (invalid_argument naming substeps / max_step / max_steps).
inline void validate_fixed_steps(const fixed_steps& policy, std::string_view where) {
  posenc::detail::require(policy.substeps >= 1, where, "expected substeps >= 1, got ", policy.substeps);
  posenc::detail::require(policy.max_step >= 0 && std::isfinite(policy.max_step), where,
                          "expected max_step >= 0 (0: unused), got ", policy.max_step);
  posenc::detail::require(policy.max_steps >= 1, where, "expected max_steps >= 1, got ", policy.max_steps);
}

/// Number of substeps fixed_steps takes on [t0, t1] (at most policy.max_steps: more throws
/// step_budget_exceeded before the count is converted to an integer).
template <class T>
[[nodiscard]] std::size_t substeps_for(const fixed_steps& policy, T t0, T t1, std::string_view where = "fixed_steps") {
  validate_fixed_steps(policy, where);  // substeps = 0 would make a zero-substep interval
  std::size_t k = policy.substeps;
  if (policy.max_step > 0) {
    const double need = std::ceil(std::abs(static_cast<double>(t1 - t0)) / policy.max_step * (1 - 1e-12));
    if (!(need <= static_cast<double>(policy.max_steps)))
      posenc::detail::fail<step_budget_exceeded>(where, "max_step = ", policy.max_step, " needs ", need,
                                                 " steps on [", t0, ", ", t1, "], more than max_steps = ",
                                                 policy.max_steps);
    k = std::max(k, static_cast<std::size_t>(std::max(1.0, need)));
  }
  return k;
}

/// Total steps fixed_steps takes over the grid; step_budget_exceeded (naming max_step /
/// substeps and max_steps) when above policy.max_steps, before any step is taken or stored.
template <class T>
std::size_t count_fixed_steps(const fixed_steps& policy, std::span<const T> times, std::string_view where) {
  std::size_t total = 0;
  for (std::size_t i = 0; i + 1 < times.size(); ++i) {
    const std::size_t k = substeps_for(policy, times[i], times[i + 1], where);
    if (k > policy.max_steps - total)
      posenc::detail::fail<step_budget_exceeded>(where, "substeps = ", policy.substeps, ", max_step = ", policy.max_step,
                                                 " need more than max_steps = ", policy.max_steps,
                                                 " steps over the grid (", times.size() - 1, " intervals)");
    total += k;
  }
  return total;
}

/// The output grid of a position encoding: t_i = i delta (unbounded) or an explicit strictly
/// increasing list of times. Every constructor and append validates; a grid object is always
/// valid. Const member functions are safe to call from several threads.
class grid {
 public:
  /// t_i = i delta. invalid_argument (naming `what`) unless delta > 0 and finite.
  [[nodiscard]] static grid uniform(double delta, std::string_view what = "delta") {
    posenc::detail::require(std::isfinite(delta) && delta > 0, what, "expected delta > 0 and finite, got ", delta);
    grid g;
    g.m_delta = delta;
    return g;
  }
  /// An explicit grid. grid_error (naming `what`) unless non-empty, finite, strictly increasing.
  [[nodiscard]] static grid explicit_times(std::vector<double> times, std::string_view what = "times") {
    validate_grid(std::span<const double>(times), what, +1);
    grid g;
    g.m_times = std::move(times);
    return g;
  }

  [[nodiscard]] bool is_uniform() const noexcept { return m_times.empty(); }
  /// Delta of a uniform grid (0 for an explicit one).
  [[nodiscard]] double delta() const noexcept { return m_delta; }
  /// The explicit times (empty for a uniform grid).
  [[nodiscard]] std::span<const double> times() const noexcept { return m_times; }
  /// Number of points (unbounded: SIZE_MAX for a uniform grid).
  [[nodiscard]] std::size_t max_points() const noexcept {
    return is_uniform() ? std::numeric_limits<std::size_t>::max() : m_times.size();
  }
  /// t_i; invalid_argument naming i when i >= max_points() (an explicit grid was read past its
  /// end before).
  [[nodiscard]] double time(std::size_t i) const {
    if (is_uniform()) return static_cast<double>(i) * m_delta;
    posenc::detail::require(i < m_times.size(), "ode::grid::time", "i: expected an index < ", m_times.size(),
                            " (the explicit grid's points), got ", i);
    return m_times[i];
  }

  /// Continue an explicit grid (the result must be strictly increasing: grid_error naming
  /// `what`); invalid_argument for a uniform grid.
  void append(std::span<const double> more, std::string_view what = "times") {
    posenc::detail::require(!is_uniform(), what, "the grid is t_i = i delta; there is no explicit grid to extend");
    std::vector<double> all = m_times;
    all.insert(all.end(), more.begin(), more.end());
    validate_grid(std::span<const double>(all), what, +1);
    m_times = std::move(all);
  }

  /// A request for L points (positions 0 .. L-1): invalid_argument if L = 0, grid_error if the
  /// grid has fewer than L points. Both messages name `where` and L.
  void require_points(std::size_t L, std::string_view where) const {
    posenc::detail::require(L >= 1, where, "L: expected at least 1 position (position 0 is p(0)), got L = 0");
    posenc::detail::require<grid_error>(L <= max_points(), where, "L: the explicit grid has ", max_points(),
                                        " times, asked for L = ", L, " positions (append times first)");
  }

  /// f(s, t_s, h_s) for the k substeps of interval i: [t_{i-1}, t_i] (1 <= i < max_points():
  /// invalid_argument naming i otherwise; i = 0 read t_{SIZE_MAX}).
  template <class F>
  void for_each_substep(std::size_t i, std::size_t k, F&& f) const {
    posenc::detail::require(i >= 1, "ode::grid::for_each_substep", "i: expected an interval i >= 1 ([t_{i-1}, t_i]), got 0");
    ode::for_each_substep(time(i - 1), time(i), k, std::forward<F>(f));
  }

 private:
  grid() = default;
  double m_delta = 0;
  std::vector<double> m_times;
};

}  // namespace posenc::ode
