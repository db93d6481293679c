// SPDX-License-Identifier: MIT
// The forward stages an encoder keeps for backprop (options::stage_memory): while the table is
// computed, the stage input Y (N x d) and pre-activation z (N x hidden) of every stage of the
// first intervals are recorded, within a byte budget; backprop reads them instead of recomputing
// those intervals.
//   posenc::floater::batch_shape          N, d, hidden and substeps: the shape of the stage rows
//   posenc::floater::kept_stages<T, S>    the budget, the rows (grown geometrically), the
//                                         recording right-hand side, the row layout
#pragma once

#include <Eigen/Core>
#include <algorithm>
#include <cstddef>
#include <string_view>

#include <posenc/core/error.hpp>
#include <posenc/tensor/table.hpp>
#include <posenc/floater/flow.hpp>
#include <posenc/ode/tableau.hpp>

namespace posenc::floater::detail {

/// The shape of a batch of FLOATER stage rows: N blocks of width d, hidden units, substeps per
/// interval; an interval has substeps * stages * N rows of stage data.
struct batch_shape {
  std::size_t blocks = 0, dim = 0, hidden = 0, substeps = 0;
  [[nodiscard]] std::size_t rows_per_interval(std::size_t stages) const noexcept { return substeps * stages * blocks; }
};

template <class T, class Scheme>
class kept_stages {
 public:
  static constexpr std::size_t S = ode::stages_v<Scheme>;
  /// Forward stages are kept only where the stepper evaluates each stage once per step, in order
  /// (no FSAL reuse across steps), so the k-th call of a step is stage k.
  static constexpr bool possible = !ode::is_fsal<Scheme>();

  /// Intervals 0 .. intervals()-1 are kept.
  [[nodiscard]] std::size_t intervals() const noexcept { return m_intervals; }
  /// Forget the kept intervals (the rows stay allocated).
  void clear() noexcept { m_intervals = 0; }
  /// Bytes of stage data kept now.
  [[nodiscard]] std::size_t bytes(const batch_shape& b) const noexcept {
    return m_intervals * b.rows_per_interval(S) * (b.dim + b.hidden) * sizeof(T);
  }
  /// Row of (substep s, stage q, interval c) relative to the first row of interval 0 of a chunk:
  /// the kept layout ((c * substeps + s) * S + q) * N.
  [[nodiscard]] static Eigen::Index row(const batch_shape& b, std::size_t s, std::size_t q, std::size_t c) noexcept {
    return static_cast<Eigen::Index>(((c * b.substeps + s) * S + q) * b.blocks);
  }
  [[nodiscard]] const matrix<T>& inputs() const noexcept { return m_y; }           ///< Y rows (d wide)
  [[nodiscard]] const matrix<T>& preactivations() const noexcept { return m_z; }   ///< z rows (hidden wide)

  /// Size the rows for the intervals of a table of L positions within `budget` bytes; returns
  /// the number of intervals that may be kept (intervals < it are recorded by the forward).
  /// The rows grow geometrically (as the table), so step() after step() copies O(L) rows in
  /// total; if the allocation fails the intervals not yet kept are simply recomputed by backprop.
  std::size_t reserve(std::size_t L, const batch_shape& b, std::size_t budget) {
    const std::size_t cap = capacity(b, budget);
    const std::size_t want = std::min(L - 1, cap);
    if (want <= m_intervals) return m_intervals;  // nothing more to keep (budget full or kept)
    const std::size_t per = b.rows_per_interval(S);
    const bool same_cols = static_cast<std::size_t>(m_y.cols()) == b.dim && static_cast<std::size_t>(m_z.cols()) == b.hidden;
    const std::size_t have = same_cols ? static_cast<std::size_t>(m_y.rows()) / per : 0;
    if (have < want) {
      const std::size_t grown = std::max(want, std::min(2 * have, cap));
      constexpr std::string_view where = "floater::encoder::extend (kept stages)";
      try {
        auto y = posenc::detail::allocate_matrix<matrix<T>>(grown * per, b.dim, where, "kept stage rows", "d");
        auto z = posenc::detail::allocate_matrix<matrix<T>>(grown * per, b.hidden, where, "kept stage rows", "hidden");
        const auto old = static_cast<Eigen::Index>(m_intervals * per);
        if (old > 0 && same_cols) {
          y.topRows(old) = m_y.topRows(old);
          z.topRows(old) = m_z.topRows(old);
        }
        m_y.swap(y);
        m_z.swap(z);
      } catch (const posenc::error&) {
        return m_intervals;  // no memory for more: recompute the rest
      }
    }
    const auto N = static_cast<Eigen::Index>(b.blocks), Hd = static_cast<Eigen::Index>(b.hidden);
    if (m_h.rows() != N || m_h.cols() != Hd) m_h.resize(N, Hd);
    return want;
  }

  /// The right-hand side of a recorded interval: h(t, y) exactly as flow::operator() computes it
  /// (flow::evaluate), with z written into the kept rows and Y copied beside it, stage by stage.
  class recorder {
   public:
    recorder(kept_stages& keep, flow<T>& f, Eigen::Index first_row) : m_keep(&keep), m_flow(&f), m_row(first_row) {}
    void operator()(double t, const table<T>& y, table<T>& dydt) {
      if (dydt.rows() != y.rows() || dydt.cols() != y.cols()) dydt.resize(y.rows(), y.cols());
      const Eigen::Index N = y.rows();
      m_keep->m_y.middleRows(m_row, N) = y;
      m_flow->evaluate(t, y, m_keep->m_z.middleRows(m_row, N), m_keep->m_h, dydt);
      m_row += N;
    }

   private:
    kept_stages* m_keep;
    flow<T>* m_flow;
    Eigen::Index m_row;
  };

  /// Record interval i (>= 1, the next one: i - 1 == intervals()) through run(recorder); then it
  /// counts as kept.
  template <class Run>
  void record(std::size_t i, const batch_shape& b, flow<T>& f, Run&& run) {
    recorder r(*this, f, static_cast<Eigen::Index>((i - 1) * b.rows_per_interval(S)));
    run(r);
    m_intervals = i;
  }

 private:
  /// Intervals whose stages fit in the budget.
  [[nodiscard]] static std::size_t capacity(const batch_shape& b, std::size_t budget) noexcept {
    if constexpr (!possible) return 0;
    // bytes per interval in long double: the product may exceed size_t for absurd sizes (then none fit)
    const long double per = static_cast<long double>(b.rows_per_interval(S)) *
                            static_cast<long double>(b.dim + b.hidden) * sizeof(T);
    if (!(per >= 1) || per > static_cast<long double>(budget)) return 0;
    return static_cast<std::size_t>(static_cast<long double>(budget) / per);
  }

  matrix<T> m_y, m_z;  // rows ((interval * substeps + s) * S + q) * N + n: Y and z of each stage
  matrix<T> m_h;       // N x hidden scratch activations of the recording forward
  std::size_t m_intervals = 0;
};

}  // namespace posenc::floater::detail
