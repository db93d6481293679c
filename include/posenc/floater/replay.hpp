// SPDX-License-Identifier: MIT
// The batched replay of FLOATER's forward stages, the data backprop reverses through: a chunk of
// nc intervals is recomputed from its cached starting rows as ONE batch of nc N rows per stage
// (the intervals are independent given their start states), so every evaluation of h is a
// matrix-matrix product of >= 64 rows even for one block.
//   posenc::floater::stage_replay<T, Scheme>   the buffers of a chunk, recompute(), load_kept()
// The stage sums and stage times are ode/'s (ode::detail::stage_input_weighted / solution_sum_weighted
// with per-row weights, ode::stage_time): each replayed row equals the stepper's forward row bit
// for bit whenever the matrix products do.
#pragma once

#include <Eigen/Core>
#include <algorithm>
#include <array>
#include <cstddef>
#include <utility>
#include <vector>

#include <posenc/tensor/table.hpp>
#include <posenc/floater/flow.hpp>
#include <posenc/floater/kept_stages.hpp>
#include <posenc/floater/table_cache.hpp>
#include <posenc/ode/grid.hpp>
#include <posenc/ode/stepper.hpp>
#include <posenc/ode/tableau.hpp>

namespace posenc::floater {

namespace detail {
/// A weight of a stage sum over a batch of stacked steps: one value per row (the column of the
/// step each row belongs to), or 1 on every row (the base term y).
template <class T>
struct row_weights {
  const vector<T>* column = nullptr;
  explicit constexpr row_weights(int /* 1: the base term */) noexcept {}
  explicit row_weights(const vector<T>& c) noexcept : column(&c) {}
};

/// The backend of a stacked batch (blocks of rows): out = x_0 + (w_1 x_1 + (w_2 x_2 + ...)) with
/// each w_m applied row by row, the fold order of posenc::backend::eigen. The first term is the
/// base with weight 1, as ode::detail::stage_input_weighted / solution_sum_weighted pass it.
struct rows_backend {
  template <class S, class T, std::size_t N>
  static void linear_combination(S& out, const std::array<row_weights<T>, N>& c, const std::array<const S*, N>& x) {
    const Eigen::Index rows = out.rows();
    [&]<std::size_t... J>(std::index_sequence<J...>) {
      auto term = [&]<std::size_t Q>(std::integral_constant<std::size_t, Q>) {
        if constexpr (Q == 0) return x[0]->array();
        else return x[Q]->array().colwise() * c[Q].column->head(rows).array();
      };
      out.array() = (term(std::integral_constant<std::size_t, J>{}) + ...);
    }(std::make_index_sequence<N>{});
  }
};

template <class T, class Scheme>
class stage_replay {
 public:
  static constexpr std::size_t S = ode::stages_v<Scheme>;
  using rows_view = Eigen::Block<matrix<T>, Eigen::Dynamic, Eigen::Dynamic, true>;

  /// Size the buffers for a table of L positions of batch shape b; returns the chunk (intervals
  /// replayed at once): >= 256 stage rows for the weight-gradient products, >= 64 rows per
  /// evaluation, at most 64 intervals and L - 1.
  std::size_t prepare(std::size_t L, const batch_shape& b) {
    m_shape = b;
    const std::size_t Nn = b.blocks, k = b.substeps;
    const std::size_t rows_per_interval = b.rows_per_interval(S);
    std::size_t chunk = std::max<std::size_t>({1, (256 + rows_per_interval - 1) / rows_per_interval, (64 + Nn - 1) / Nn});
    chunk = std::min<std::size_t>({chunk, 64, std::max<std::size_t>(L - 1, 1)});
    const auto D = static_cast<Eigen::Index>(b.dim), Hd = static_cast<Eigen::Index>(b.hidden);
    if (m_chunk != chunk || m_y.cols() != D || m_zs.cols() != Hd || m_y.rows() != static_cast<Eigen::Index>(chunk * Nn)) {
      const auto R = static_cast<Eigen::Index>(chunk * rows_per_interval), B = static_cast<Eigen::Index>(chunk * Nn);
      m_chunk = chunk;
      m_ys.resize(R, D);
      m_zs.resize(R, Hd);
      m_hs.resize(R, Hd);
      m_ts.resize(R);
      for (auto& x : m_k) x.resize(B, D);
      for (auto& x : m_coef) x.resize(B);
      m_y.resize(B, D);
      m_t0.resize(chunk * k);
      m_h.resize(chunk * k);
    }
    return chunk;
  }

  /// Row of (substep s, stage q, interval c) of a recomputed chunk of nc intervals (stacked by
  /// substep, stage, interval, block).
  [[nodiscard]] Eigen::Index row(std::size_t s, std::size_t q, std::size_t c, std::size_t nc) const noexcept {
    return static_cast<Eigen::Index>(((s * S + q) * nc + c) * m_shape.blocks);
  }

  /// Recompute the stages of intervals j0 .. j0 + nc - 1 (nc <= the prepared chunk) from their
  /// cached starting rows, all at once. Afterwards inputs() / preactivations() / activations() /
  /// times() hold every stage's Y, z, sigma(z) and time (layout row()), step(c, s) every substep
  /// size and end_states() the end state of each interval (nc N rows).
  void recompute(flow<T>& f, const ode::grid& grid, const table_cache<T>& cache, std::size_t j0, std::size_t nc) {
    const auto N = static_cast<Eigen::Index>(m_shape.blocks);
    const std::size_t k = m_shape.substeps;
    const auto Bc = static_cast<Eigen::Index>(nc) * N;
    for (std::size_t c = 0; c < nc; ++c) cache.read(j0 + c, N, m_y.middleRows(static_cast<Eigen::Index>(c) * N, N));
    substep_sizes(grid, j0, nc);
    for (std::size_t s = 0; s < k; ++s) {
      [&]<std::size_t... Q>(std::index_sequence<Q...>) { (recompute_stage<Q>(f, s, nc, Bc), ...); }(std::make_index_sequence<S>{});
      for (std::size_t c = 0; c < nc; ++c) set_weights(c, ode::detail::solution_weights<T, Scheme>(m_h[c * k + s]));
      rows_view y = m_y.topRows(Bc);
      ode::detail::solution_sum_weighted<Scheme, detail::rows_backend>(y, y, weights<ode::solution_terms<Scheme>.index.size()>(), stage_views(Bc));
    }
  }

  /// A kept chunk (intervals j0 .. j0 + nc - 1 < keep.intervals()): instead of recompute(), the
  /// stage times and activations sigma(z) in the kept layout (kept_stages::row), from the kept z;
  /// the stage inputs and pre-activations are read from `keep` directly.
  void load_kept(const mlp<T>& theta, const ode::grid& grid, const kept_stages<T, Scheme>& keep, std::size_t j0,
                 std::size_t nc) {
    const auto N = static_cast<Eigen::Index>(m_shape.blocks);
    const std::size_t k = m_shape.substeps;
    substep_sizes(grid, j0, nc);
    for (std::size_t c = 0; c < nc; ++c)
      for (std::size_t s = 0; s < k; ++s)
        [&]<std::size_t... Q>(std::index_sequence<Q...>) {
          ((m_ts.segment(kept_stages<T, Scheme>::row(m_shape, s, Q, c), N).setConstant(stage_time<Q>(c, s))), ...);
        }(std::make_index_sequence<S>{});
    const std::size_t per = m_shape.rows_per_interval(S);
    const auto used = static_cast<Eigen::Index>(nc * per), base = static_cast<Eigen::Index>(j0 * per);
    detail::activate(theta.act, keep.preactivations().middleRows(base, used), m_hs.topRows(used));
  }

  [[nodiscard]] const matrix<T>& inputs() const noexcept { return m_ys; }
  [[nodiscard]] const matrix<T>& preactivations() const noexcept { return m_zs; }
  [[nodiscard]] const matrix<T>& activations() const noexcept { return m_hs; }
  [[nodiscard]] const vector<T>& times() const noexcept { return m_ts; }
  [[nodiscard]] const table<T>& end_states() const noexcept { return m_y; }
  /// Size of substep s of interval c of the last chunk.
  [[nodiscard]] double step(std::size_t c, std::size_t s) const noexcept { return m_h[c * m_shape.substeps + s]; }

 private:
  /// m_t0 / m_h: start time and size of every substep of intervals j0 .. j0 + nc - 1.
  void substep_sizes(const ode::grid& grid, std::size_t j0, std::size_t nc) {
    const std::size_t k = m_shape.substeps;
    for (std::size_t c = 0; c < nc; ++c)
      grid.for_each_substep(j0 + c + 1, k, [&](std::size_t s, double ts, double hs) {
        m_t0[c * k + s] = ts;
        m_h[c * k + s] = hs;
      });
  }

  /// The time of stage Q of substep s of interval c as the stepper forms it: in double
  /// (ode::stage_time), then T (flow::evaluate).
  template <std::size_t Q>
  [[nodiscard]] T stage_time(std::size_t c, std::size_t s) const noexcept {
    const std::size_t i = c * m_shape.substeps + s;
    return static_cast<T>(ode::stage_time<Scheme, Q>(m_t0[i], m_h[i]));
  }

  /// Interval c's rows of the weight columns = w (one weight per term of a stage sum).
  template <class W>
  void set_weights(std::size_t c, const W& w) {
    const auto N = static_cast<Eigen::Index>(m_shape.blocks);
    const auto r = static_cast<Eigen::Index>(c) * N;
    for (std::size_t m = 0; m < w.size(); ++m) m_coef[m].segment(r, N).setConstant(w[m]);
  }
  /// The weight columns of the n terms of a stage sum, as the rows backend takes them.
  template <std::size_t n>
  [[nodiscard]] std::array<detail::row_weights<T>, n> weights() const {
    return [&]<std::size_t... M>(std::index_sequence<M...>) {
      return std::array<detail::row_weights<T>, n>{detail::row_weights<T>(m_coef[M])...};
    }(std::make_index_sequence<n>{});
  }
  /// The first Bc rows of every stage derivative.
  [[nodiscard]] std::array<rows_view, S> stage_views(Eigen::Index Bc) {
    return [&]<std::size_t... Q>(std::index_sequence<Q...>) {
      return std::array<rows_view, S>{m_k[Q].topRows(Bc)...};
    }(std::make_index_sequence<S>{});
  }

  template <std::size_t Q>
  void recompute_stage(flow<T>& f, std::size_t s, std::size_t nc, Eigen::Index Bc) {
    const auto N = static_cast<Eigen::Index>(m_shape.blocks);
    const std::size_t k = m_shape.substeps;
    const Eigen::Index r = row(s, Q, 0, nc);
    for (std::size_t c = 0; c < nc; ++c) {
      set_weights(c, ode::detail::stage_weights<T, Scheme, Q>(m_h[c * k + s]));
      m_ts.segment(r + static_cast<Eigen::Index>(c) * N, N).setConstant(stage_time<Q>(c, s));
    }
    rows_view yq = m_ys.middleRows(r, Bc);
    const rows_view y = m_y.topRows(Bc);
    ode::detail::stage_input_weighted<Scheme, Q, detail::rows_backend>(yq, y, weights<ode::stage_terms<Scheme, Q>.index.size()>(), stage_views(Bc));
    f.evaluate_rows(m_ts.segment(r, Bc), yq, m_zs.middleRows(r, Bc), m_hs.middleRows(r, Bc), m_k[Q].topRows(Bc));
  }

  batch_shape m_shape{};
  std::size_t m_chunk = 0;
  matrix<T> m_ys, m_zs, m_hs;       // R x d stage inputs, R x hidden pre-activations and activations
  vector<T> m_ts;                   // R stage times
  std::array<table<T>, S> m_k;      // B x d stage derivatives of one substep
  std::array<vector<T>, S> m_coef;  // B per-row stage-sum weights (one column per term)
  table<T> m_y;                     // B x d: the chunk's states (start, then end of each substep)
  std::vector<double> m_t0, m_h;    // per (interval, substep): start time and size
};

}  // namespace detail

}  // namespace posenc::floater
