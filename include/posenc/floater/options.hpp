// SPDX-License-Identifier: MIT
// FLOATER's settings and the argument checks the host encoder and the device forward share:
//   posenc::floater::options               grid (delta or explicit times), substeps, threads,
//                                          the stage-memory budget of backprop
//   detail::check_options / check_initial_state  the validation of options, theta and p(0)
//                                          (internal: the encoder and the device forward call them)
//   check_length                           the validation of a requested number of positions L
//   reference_options / paper_options      the released code's and the paper's settings
// Each public entry point calls these once, at its boundary (docs/architecture.md, error model).
#pragma once

#include <cstddef>
#include <string_view>
#include <vector>

#include <posenc/core/checked.hpp>
#include <posenc/core/error.hpp>
#include <posenc/core/thread_pool.hpp>
#include <posenc/tensor/table.hpp>
#include <posenc/floater/flow.hpp>
#include <posenc/ode/grid.hpp>

namespace posenc::floater {

/// How positions map to times and how each interval is integrated.
struct options {
  double delta = 0.01;          ///< t_i = i * delta. Reference code: 0.01 (`time_dt`); paper: 0.1.
  std::size_t substeps = 5;     ///< equal steps per interval (reference: step delta / 5).
  std::vector<double> times{};  ///< if not empty: an explicit strictly increasing grid t_0 < t_1 < ...
                                ///< (non-equidistant positions); delta is then unused.
  std::size_t threads = 1;      ///< threads for the matrix products: 0 = all hardware threads, n >= 1 =
                                ///< n (posenc/core/thread_pool.hpp). Default 1: no thread is started.
  /// Bytes of forward stage data the encoder may keep for backprop (default 256 MiB; 0: keep
  /// none). While the table is computed, every stage input Y (N x d) and pre-activation z (N x
  /// hidden) of the first intervals is kept, (d + hidden) * sizeof(T) bytes per block and stage,
  /// i.e. substeps * stages * N * (d + hidden) * sizeof(T) per interval, as long as they fit in
  /// this budget; backprop reads them instead of recomputing the forward. Intervals beyond the
  /// budget are recomputed from the cached table as before. Only for schemes without FSAL.
  std::size_t stage_memory = std::size_t{256} << 20;
};

namespace detail {

/// Validate the options (the one check the host encoder and posenc::device::floater::forward
/// share) and return their grid: invalid_argument for delta <= 0 or not finite, substeps = 0 or
/// threads > posenc::max_threads; grid_error for explicit times that are not finite and strictly
/// increasing. Messages start with `where` and name the option.
[[nodiscard]] inline ode::grid check_options(const options& opt, std::string_view where) {
  posenc::detail::require(opt.substeps >= 1 && opt.substeps <= ode::fixed_steps{}.max_steps, where,
                          "options.substeps: expected 1 <= substeps <= ", ode::fixed_steps{}.max_steps, ", got ",
                          opt.substeps);
  (void)resolve_threads(opt.threads, where);
  if (opt.times.empty()) return ode::grid::uniform(opt.delta, posenc::detail::concat(where, ": options.delta"));
  return ode::grid::explicit_times(opt.times, posenc::detail::concat(where, ": options.times"));
}

/// Validate the dynamics and the initial states together (shared by host and device): theta
/// consistent and finite, p0 with >= 1 block (row), d = theta's d columns, finite.
template <class T>
void check_initial_state(const mlp<T>& theta, const table<T>& p0, std::string_view where) {
  theta.validate(where);
  posenc::detail::require(p0.rows() >= 1, where, "expected p0 with at least one block (row), got ", p0.rows());
  posenc::detail::require<shape_error>(p0.cols() == theta.w1.cols(), where, "expected p0 with d = ", theta.w1.cols(),
                                       " columns (the dynamics' d), got ", p0.cols());
  posenc::detail::require_finite(p0, where, "p0 (initial state)");
}

}  // namespace detail

/// Validate a requested number of positions L for a table of `width` = N d values per position
/// (shared by host and device): size_error for L above posenc::max_extent or L * width above
/// posenc::max_elements, invalid_argument for L = 0, grid_error for L beyond an explicit grid.
inline void check_length(const ode::grid& grid, std::size_t L, std::size_t width, std::string_view where) {
  (void)checked::elements(checked::extent(L, where, "L"), width, where, "L * blocks * d (the cached table)");
  grid.require_points(L, where);
}

/// The released code's settings: Delta = 0.01, 5 substeps.
[[nodiscard]] inline options reference_options() { return options{}; }
/// The paper's settings (section 3.1 and supplementary 2.1): Delta = 0.1, 5 substeps.
[[nodiscard]] inline options paper_options() {
  options o;
  o.delta = 0.1;
  return o;
}

}  // namespace posenc::floater
