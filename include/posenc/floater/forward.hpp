// SPDX-License-Identifier: MIT
// FLOATER's forward interval loop, written once for the host encoder (Eigen states,
// posenc::floater::encoder) and the device forward (Thrust states, posenc::device::floater):
//
//   posenc::floater::detail::integrate_intervals(grid, substeps, first, L, stepper, y, with_rhs,
//                                        all_finite, store, where)
//
// For each interval i = first .. L-1 (from t_{i-1} to t_i): `substeps` equal steps of the stepper,
// reset at the start of the interval (so an interval is a function of its start state alone,
// which the batched replay of backprop relies on), then the non-finite check, then store(i, y).
// The arguments are validated by the caller, once, at its public boundary.
#pragma once

#include <cstddef>
#include <string_view>

#include <posenc/core/error.hpp>
#include <posenc/ode/grid.hpp>

namespace posenc::floater::detail {

/// Integrate intervals first .. L-1 of `grid` (first >= 1) from y = p(t_{first-1}), in place.
///   with_rhs(i, run)   calls run(f) with the right-hand side f of interval i (the host passes a
///                      recording right-hand side for the intervals whose stages it keeps)
///   all_finite(y)      true when every value of y is finite
///   store(i, y)        y = p(t_i), to be copied out (y may be a different buffer each time)
/// Throws non_finite_error (naming `where`, the position and its time) when the solution stops
/// being finite; intervals before it have been stored.
template <class Stepper, class State, class WithRhs, class AllFinite, class Store>
void integrate_intervals(const ode::grid& grid, std::size_t substeps, std::size_t first, std::size_t L,
                         Stepper& stepper, State& y, WithRhs&& with_rhs, AllFinite&& all_finite, Store&& store,
                         std::string_view where) {
  for (std::size_t i = first; i < L; ++i) {
    stepper.reset();
    with_rhs(i, [&](auto& f) {
      grid.for_each_substep(i, substeps, [&](std::size_t, double ts, double hs) { stepper.step(f, ts, y, hs); });
    });
    if (!all_finite(y))
      posenc::detail::fail<non_finite_error>(where, "the solution became non-finite (NaN or Inf) at position ", i,
                                             " (t = ", grid.time(i), "); the dynamics or delta are too large");
    store(i, y);
  }
}

}  // namespace posenc::floater::detail
