// SPDX-License-Identifier: MIT
// FLOATER (Liu, Yu, Dhillon & Hsieh, "Learning to Encode Position for Transformer with Continuous
// Dynamical Model", ICML 2020): position encodings p_i = p(t_i) of the ODE dp/dt = h(t, p; theta),
// for N blocks that share theta and differ in p(0) (paper eq. 10), integrated together as one
// N x d state so every stage is one matrix-matrix product.
//
//   posenc::floater::encoder<T, Scheme = rk4_38>  the cached, extendable table generator with
//                                                 exact discrete gradients and the continuous adjoint
//   posenc::floater::biased_encoder<T, Scheme>    the bias form (eqs. 11-13): base + FLOATER bias
//
// Defaults reproduce the released reference code: Delta = 0.01, 5 substeps per interval of
// torchdiffeq's `rk4` (Kutta's 3/8 rule), position 0 = p(0). See docs/floater.md.
#pragma once

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <functional>
#include <span>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include <posenc/adapters/eigen.hpp>
#include <posenc/core/checked.hpp>
#include <posenc/core/error.hpp>
#include <posenc/core/thread_pool.hpp>
#include <posenc/floater/flow.hpp>
#include <posenc/encoding/table.hpp>
#include <posenc/ode/gradient.hpp>
#include <posenc/ode/grid.hpp>
#include <posenc/ode/integrate.hpp>
#include <posenc/ode/schemes.hpp>
#include <posenc/ode/stepper.hpp>

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

/// The released code's settings: Delta = 0.01, 5 substeps.
[[nodiscard]] inline options reference_options() { return options{}; }
/// The paper's settings (section 3.1 and supplementary 2.1): Delta = 0.1, 5 substeps.
[[nodiscard]] inline options paper_options() {
  options o;
  o.delta = 0.1;
  return o;
}

/// dL/dtheta and dL/dp(0) of a scalar loss L whose upstream gradient dL/dP was given.
template <class T>
struct gradients {
  mlp<T> flow;  ///< same layout as the parameters (w1, w1_t, b1, w2, w2_t, b2)
  table<T> p0;  ///< N x d: dL/dp^(n)(0), row n = block n
};

/// What a gradient computation did.
struct gradient_info {
  std::size_t positions = 0;        ///< L
  std::size_t rhs_evaluations = 0;  ///< batched evaluations of h (forward recomputation and/or adjoint)
  std::size_t stored_rows = 0;      ///< rows of stage data held at once (the checkpoint memory)
  std::size_t kept_intervals = 0;   ///< intervals whose forward stages were read from the kept
                                    ///< stage data (options::stage_memory) instead of recomputed
};

/// The FLOATER encoder: N blocks sharing theta, each from its own p^(n)(0).
///
/// A table for L positions is computed once and cached (rows L x (N d), row i = all blocks at
/// t_i); asking for more positions integrates only the new intervals from the cached last state,
/// so the result equals a fresh computation (the same steps in the same order: bitwise equal),
/// and lookup of a cached table is a copy.
template <class T, class Scheme = ode::schemes::rk4_38>
class encoder {
 public:
  using value_type = T;
  using scheme_type = Scheme;

  /// theta: the dynamics; p0: N x d initial states (row n = block n); opt: grid and threads.
  /// Throws invalid_argument (d, hidden, delta, substeps), shape_error (theta vs p0),
  /// non_finite_error (NaN/Inf in theta or p0), grid_error (explicit times).
  encoder(mlp<T> theta, table<T> p0, options opt = {})
      : m_theta(std::move(theta)),
        m_p0(std::move(p0)),
        m_opt(std::move(opt)),
        m_grid(check_options(m_opt, "floater::encoder")),
        m_flow(m_theta, m_opt.threads) {
    check_initial_state(m_theta, m_p0, "floater::encoder");
    reset_cache();
  }

  [[nodiscard]] std::size_t dim() const noexcept { return static_cast<std::size_t>(m_p0.cols()); }
  [[nodiscard]] std::size_t hidden() const noexcept { return m_theta.hidden(); }
  [[nodiscard]] std::size_t blocks() const noexcept { return static_cast<std::size_t>(m_p0.rows()); }
  [[nodiscard]] const mlp<T>& parameters() const noexcept { return m_theta; }
  [[nodiscard]] const table<T>& initial_state() const noexcept { return m_p0; }
  [[nodiscard]] const options& settings() const noexcept { return m_opt; }
  /// Positions currently cached.
  [[nodiscard]] std::size_t size() const noexcept { return m_len; }
  /// Largest number of positions the grid allows (unbounded for t_i = i delta).
  [[nodiscard]] std::size_t max_positions() const noexcept { return m_grid.max_points(); }
  /// t_i.
  [[nodiscard]] double time(std::size_t i) const noexcept { return m_grid.time(i); }
  /// The grid (t_i = i delta or the explicit times).
  [[nodiscard]] const ode::grid& time_grid() const noexcept { return m_grid; }
  /// Intervals (from position 0) whose forward stages are kept for backprop (options::stage_memory).
  [[nodiscard]] std::size_t kept_intervals() const noexcept { return m_keep.intervals; }
  /// Bytes of stage data kept now: kept_intervals() * substeps * stages * N * (d + hidden) * sizeof(T).
  [[nodiscard]] std::size_t kept_stage_bytes() const noexcept {
    return m_keep.intervals * keep_rows_per_interval() * static_cast<std::size_t>(m_p0.cols() + m_theta.w1.rows()) * sizeof(T);
  }

  /// Replace theta (same shapes) and drop the cache.
  void set_parameters(mlp<T> theta) {
    constexpr std::string_view where = "floater::encoder::set_parameters";
    theta.validate(where);
    posenc::detail::require<shape_error>(theta.w1.cols() == m_p0.cols(), where, "expected dynamics with d = ",
                                         m_p0.cols(), ", got ", theta.w1.cols());
    m_theta = std::move(theta);
    reset_cache();
  }
  /// Replace p(0) (N x d, any N) and drop the cache.
  void set_initial_state(table<T> p0) {
    constexpr std::string_view where = "floater::encoder::set_initial_state";
    posenc::detail::require(p0.rows() >= 1, where, "expected at least one block, got ", p0.rows());
    posenc::detail::require<shape_error>(p0.cols() == m_p0.cols(), where, "expected d = ", m_p0.cols(),
                                         " columns, got ", p0.cols());
    posenc::detail::require_finite(p0, where, "p0 (initial state)");
    m_p0 = std::move(p0);
    reset_cache();
  }
  /// Append grid points to an explicit grid (they must continue it strictly increasing).
  void append_times(std::span<const double> more) {
    constexpr std::string_view where = "floater::encoder::append_times";
    m_grid.append(more, where);
    m_opt.times.assign(m_grid.times().begin(), m_grid.times().end());
  }
  /// Use `threads` threads for the matrix products from now on (0: all hardware threads).
  void set_threads(std::size_t threads) {
    m_flow.set_threads(threads);  // validates (invalid_argument above posenc::max_threads)
    m_opt.threads = threads;
  }

  /// Make sure positions 0 .. L-1 are cached: integrates only the intervals not yet done.
  void extend(std::size_t L) {
    constexpr std::string_view where = "floater::encoder::extend";
    if (L <= m_len) return;
    (void)checked::elements(checked::extent(L, where, "L"), static_cast<std::size_t>(m_p0.size()), where,
                            "L * blocks * d (the cached table)");
    m_grid.require_points(L, where);
    m_flow.set_parameters(m_theta);
    reserve_rows(L);
    const std::size_t keep_to = reserve_keep(L);  // intervals < keep_to keep their stages
    const Eigen::Index nd = m_p0.size();
    for (std::size_t i = m_len; i < L; ++i) {
      const double t1 = time(i);
      m_stepper.reset();
      if (i - 1 < keep_to && i - 1 == m_keep.intervals) {
        // the same evaluations, writing z and Y into the kept rows of interval i - 1
        keeping_rhs rhs{this, static_cast<Eigen::Index>((i - 1) * keep_rows_per_interval())};
        m_grid.for_each_substep(i, m_opt.substeps, [&](std::size_t, double ts, double hs) { m_stepper.step(rhs, ts, m_y, hs); });
        m_keep.intervals = i;
      } else {
        m_grid.for_each_substep(i, m_opt.substeps, [&](std::size_t, double ts, double hs) { m_stepper.step(m_flow, ts, m_y, hs); });
      }
      if (!m_y.allFinite())
        posenc::detail::fail<non_finite_error>(where, "the solution became non-finite (NaN or Inf) at position ", i,
                                               " (t = ", t1, "); the dynamics or delta are too large");
      m_traj.row(static_cast<Eigen::Index>(i)) = Eigen::Map<const Eigen::Matrix<T, 1, Eigen::Dynamic>>(m_y.data(), nd);
      m_len = i + 1;
    }
  }

  /// Incremental decoding: one more position (one interval), as the reference decoder does.
  void step() { extend(m_len + 1); }

  // Thread safety: the const members (block_table(n, L) const, tables(L) const, trajectory(),
  // size(), time(), the accessors) only read the cache and may be called from several threads at
  // once, as long as no thread calls a non-const member (extend, step, the non-const
  // block_table/tables, backprop, adjoint, set_*, append_times) at the same time. Every non-const
  // member writes the cache or the work buffers: one thread at a time (or one encoder per thread).

  /// The table of block n: L x d (a copy of the cache; computes what is missing). invalid_argument
  /// for n >= blocks() or L = 0; grid_error for L beyond an explicit grid.
  [[nodiscard]] table<T> block_table(std::size_t n, std::size_t L) {
    check_block(n, "floater::encoder::block_table");
    (void)checked::extent(L, "floater::encoder::block_table", "L");
    m_grid.require_points(L, "floater::encoder::block_table");
    extend(L);
    return cached_block(n, L);
  }
  /// The cached table of block n, L x d, without computing: invalid_argument for n >= blocks(),
  /// L = 0 or L > size() (extend(L) first). Safe to call from several threads at once.
  [[nodiscard]] table<T> block_table(std::size_t n, std::size_t L) const {
    check_block(n, "floater::encoder::block_table const");
    check_cached(L, "floater::encoder::block_table const");
    return cached_block(n, L);
  }
  /// All N tables, each L x d.
  [[nodiscard]] std::vector<table<T>> tables(std::size_t L) {
    (void)checked::elements(checked::extent(L, "floater::encoder::tables", "L"), static_cast<std::size_t>(m_p0.size()),
                            "floater::encoder::tables", "L * blocks * d");
    m_grid.require_points(L, "floater::encoder::tables");
    extend(L);
    return std::as_const(*this).tables(L);
  }
  /// All N cached tables, each L x d, without computing (errors as block_table const).
  [[nodiscard]] std::vector<table<T>> tables(std::size_t L) const {
    check_cached(L, "floater::encoder::tables const");
    std::vector<table<T>> out;
    out.reserve(blocks());
    for (std::size_t n = 0; n < blocks(); ++n) out.push_back(cached_block(n, L));
    return out;
  }
  /// The cache itself: size() rows of N d (row i = blocks 0..N-1 at t_i, each d wide).
  [[nodiscard]] auto trajectory() const { return m_traj.topRows(static_cast<Eigen::Index>(m_len)); }

  // ---- gradients ----------------------------------------------------------------------------

  /// Exact gradient of L(P) w.r.t. theta and p(0), by backpropagation through the discrete steps
  /// that produced the table (reverse-mode through every stage). dL_dP: N tables of L x d
  /// (L >= 1; the table is computed or extended to L first). Memory: the cached table (the
  /// checkpoints at the output positions) plus the stage data of a few intervals, recomputed
  /// from their checkpoints; weight gradients are accumulated with one matrix product per chunk
  /// of ~256 stacked stage rows.
  gradients<T> backprop(std::span<const table<T>> dL_dP, gradient_info* info = nullptr) {
    const std::size_t L = check_upstream(dL_dP, "floater::encoder::backprop");
    return backprop_impl(L, [&](std::size_t i, table<T>& lam) { add_upstream(dL_dP, i, lam); }, info);
  }
  gradients<T> backprop(const std::vector<table<T>>& dL_dP, gradient_info* info = nullptr) {
    return backprop(std::span<const table<T>>(dL_dP), info);
  }

  /// The continuous adjoint (supplementary eqs. 2-3), segment by segment as torchdiffeq's
  /// odeint_adjoint: from t_{i+1} back to t_i the augmented system (p, a, dL/dtheta) with
  /// dp/dt = h, da/dt = -a^T dh/dp, dg/dt = -a^T dh/dtheta is integrated backwards with the
  /// encoder's scheme and `substeps` steps per interval (0: the forward substeps); p restarts from
  /// the cached p(t_i) at every segment and a jumps by dL/dp_i. Converges to the exact
  /// continuous gradient as the steps shrink (like backprop, which is the gradient of the table).
  gradients<T> adjoint(std::span<const table<T>> dL_dP, std::size_t substeps = 0, gradient_info* info = nullptr) {
    const std::size_t L = check_upstream(dL_dP, "floater::encoder::adjoint");
    return adjoint_impl(L, substeps, [&](std::size_t i, table<T>& lam) { add_upstream(dL_dP, i, lam); }, info);
  }
  gradients<T> adjoint(const std::vector<table<T>>& dL_dP, std::size_t substeps = 0, gradient_info* info = nullptr) {
    return adjoint(std::span<const table<T>>(dL_dP), substeps, info);
  }

  /// Positions first + 1 .. first + count recomputed from the cached positions first .. first +
  /// count - 1 exactly as backprop recomputes them (intervals batched as independent rows), in the
  /// layout of trajectory(): count x (N d). The stage sums, step sizes and stage times are the
  /// forward's, so the rows equal trajectory() rows bit for bit whenever the matrix products do
  /// (Eigen picks its product kernel by shape; see docs/floater.md). invalid_argument unless
  /// count >= 1 and first + count < size().
  [[nodiscard]] matrix<T> replay(std::size_t first, std::size_t count) {
    constexpr std::string_view where = "floater::encoder::replay";
    posenc::detail::require(count >= 1 && first + count < m_len, where, "expected 1 <= count and first + count < size() = ",
                            m_len, ", got first = ", first, ", count = ", count);
    m_flow.set_parameters(m_theta);
    const std::size_t chunk = prepare_recompute(first + count + 1);
    const Eigen::Index N = m_p0.rows(), D = m_p0.cols();
    matrix<T> out(static_cast<Eigen::Index>(count), N * D);
    for (std::size_t j0 = first; j0 < first + count; j0 += chunk) {
      const std::size_t nc = std::min(chunk, first + count - j0);
      recompute(j0, nc);
      for (std::size_t c = 0; c < nc; ++c)
        for (Eigen::Index n = 0; n < N; ++n)
          out.block(static_cast<Eigen::Index>(j0 - first + c), n * D, 1, D) =
              m_rc.y.row(static_cast<Eigen::Index>(c) * N + n);
    }
    return out;
  }

 private:
  void check_block(std::size_t n, std::string_view where) const {
    posenc::detail::require(n < blocks(), where, "n: expected block < ", blocks(), ", got ", n);
  }
  void check_cached(std::size_t L, std::string_view where) const {
    posenc::detail::require(L >= 1, where, "L: expected at least 1 position, got L = 0");
    posenc::detail::require(L <= m_len, where, "L: expected at most the cached length size() = ", m_len, ", got L = ", L,
                            " (call extend(L) on a non-const encoder first)");
  }
  table<T> cached_block(std::size_t n, std::size_t L) const {
    const auto D = m_p0.cols();
    return m_traj.block(0, static_cast<Eigen::Index>(n) * D, static_cast<Eigen::Index>(L), D);
  }

  void reset_cache() {
    const Eigen::Index nd = m_p0.size();
    m_traj.resize(std::max<Eigen::Index>(m_traj.rows(), 1), nd);
    m_traj.row(0) = Eigen::Map<const Eigen::Matrix<T, 1, Eigen::Dynamic>>(m_p0.data(), nd);
    m_y = m_p0;
    m_len = 1;
    m_stepper.resize_like(m_y);
    m_keep.intervals = 0;
  }

  // ---- kept forward stages (options::stage_memory) ---------------------------------------------

  /// Forward stages are kept only where the stepper evaluates each stage once per step, in order
  /// (no FSAL reuse across steps), so the k-th call of a step is stage k.
  static constexpr bool can_keep = !ode::is_fsal<Scheme>();

  [[nodiscard]] std::size_t keep_rows_per_interval() const noexcept {
    return m_opt.substeps * S * static_cast<std::size_t>(m_p0.rows());
  }
  /// Intervals whose stages fit in options::stage_memory.
  [[nodiscard]] std::size_t keep_capacity() const noexcept {
    if constexpr (!can_keep) return 0;
    // bytes per interval in long double: the product may exceed size_t for absurd sizes (then none fit)
    const long double per = static_cast<long double>(keep_rows_per_interval()) *
                            static_cast<long double>(m_p0.cols() + m_theta.w1.rows()) * sizeof(T);
    if (!(per >= 1) || per > static_cast<long double>(m_opt.stage_memory)) return 0;
    return static_cast<std::size_t>(static_cast<long double>(m_opt.stage_memory) / per);
  }
  /// Size the kept rows for the intervals of a table of L positions (within the budget); returns
  /// the number of intervals that may be kept.
  /// The rows grow geometrically (as the table), so step() after step() copies O(L) rows in total;
  /// if the allocation fails the intervals not yet kept are simply recomputed by backprop.
  std::size_t reserve_keep(std::size_t L) {
    const std::size_t cap = keep_capacity();
    const std::size_t want = std::min(L - 1, cap);
    if (want <= m_keep.intervals) return m_keep.intervals;  // nothing more to keep (budget full or kept)
    const std::size_t per = keep_rows_per_interval();
    const auto D = static_cast<std::size_t>(m_p0.cols()), Hd = static_cast<std::size_t>(m_theta.w1.rows());
    const bool same_cols = static_cast<std::size_t>(m_keep.y.cols()) == D && static_cast<std::size_t>(m_keep.z.cols()) == Hd;
    const std::size_t have = same_cols ? static_cast<std::size_t>(m_keep.y.rows()) / per : 0;
    if (have < want) {
      const std::size_t grown = std::max(want, std::min(2 * have, cap));
      constexpr std::string_view where = "floater::encoder::extend (kept stages)";
      try {
        auto y = posenc::detail::allocate_matrix<matrix<T>>(grown * per, D, where, "kept stage rows", "d");
        auto z = posenc::detail::allocate_matrix<matrix<T>>(grown * per, Hd, where, "kept stage rows", "hidden");
        const auto old = static_cast<Eigen::Index>(m_keep.intervals * per);
        if (old > 0 && same_cols) {
          y.topRows(old) = m_keep.y.topRows(old);
          z.topRows(old) = m_keep.z.topRows(old);
        }
        m_keep.y.swap(y);
        m_keep.z.swap(z);
      } catch (const posenc::error&) {
        return m_keep.intervals;  // no memory for more: recompute the rest
      }
    }
    if (m_keep.h.rows() != m_p0.rows() || static_cast<std::size_t>(m_keep.h.cols()) != Hd) m_keep.h.resize(m_p0.rows(), m_theta.w1.rows());
    return want;
  }

  /// \cond INTERNAL
  /// The right-hand side of a kept interval: h(t, y) exactly as flow::operator() computes it
  /// (flow::evaluate), with z written into the kept rows and Y copied beside it.
  struct keeping_rhs {
    encoder* self;
    Eigen::Index row;
    void operator()(double t, const table<T>& y, table<T>& dydt) {
      if (dydt.rows() != y.rows() || dydt.cols() != y.cols()) dydt.resize(y.rows(), y.cols());
      const Eigen::Index N = y.rows();
      self->m_keep.y.middleRows(row, N) = y;
      self->m_flow.evaluate(t, y, self->m_keep.z.middleRows(row, N), self->m_keep.h, dydt);
      row += N;
    }
  };
  /// \endcond

  void reserve_rows(std::size_t L) {
    constexpr std::string_view where = "floater::encoder::extend";
    const Eigen::Index need = checked::index(L, where, "L");  // never negative: a wrapped L throws
    if (m_traj.rows() >= need) return;
    const auto cols = static_cast<std::size_t>(m_traj.cols());
    const std::size_t most = max_elements / std::max<std::size_t>(cols, 1);  // rows the bound allows
    const auto cap = static_cast<Eigen::Index>(std::max<std::size_t>(L, std::min(2 * static_cast<std::size_t>(m_traj.rows()), most)));
    auto grown = posenc::detail::allocate_matrix<matrix<T>>(static_cast<std::size_t>(cap), cols, where, "L", "blocks * d");
    grown.topRows(static_cast<Eigen::Index>(m_len)) = m_traj.topRows(static_cast<Eigen::Index>(m_len));
    m_traj.swap(grown);
  }

  std::size_t check_upstream(std::span<const table<T>> g, std::string_view where) {
    posenc::detail::require<shape_error>(g.size() == blocks(), where, "expected dL/dP as ", blocks(),
                                         " tables (one per block), got ", g.size());
    const Eigen::Index L = g[0].rows();
    posenc::detail::require<shape_error>(L >= 1, where, "expected dL/dP with at least one position (row), got 0");
    for (std::size_t n = 0; n < g.size(); ++n) {
      posenc::detail::require_shape(g[n], L, m_p0.cols(), where, n == 0 ? "dL/dP[0]" : "dL/dP[n] (block n > 0)");
      posenc::detail::require_finite(g[n], where, "dL/dP");
    }
    return static_cast<std::size_t>(L);
  }

  void add_upstream(std::span<const table<T>> g, std::size_t i, table<T>& lam) const {
    for (std::size_t n = 0; n < g.size(); ++n) lam.row(static_cast<Eigen::Index>(n)) += g[n].row(static_cast<Eigen::Index>(i));
  }

  table<T> checkpoint(std::size_t i) const {
    table<T> y(m_p0.rows(), m_p0.cols());
    Eigen::Map<Eigen::Matrix<T, 1, Eigen::Dynamic>>(y.data(), y.size()) = m_traj.row(static_cast<Eigen::Index>(i));
    return y;
  }

  static constexpr std::size_t S = ode::stages_v<Scheme>;
  using eigen_backend = default_backend_t<table<T>>;

  /// \cond INTERNAL
  /// Buffers of the batched recomputation: a chunk of nc intervals, each N rows, recomputed as one
  /// batch of nc N rows per stage; rows of (substep s, stage q, interval c, block n) are stacked.
  struct recompute_buffers {
    std::size_t chunk = 0;
    matrix<T> ys, zs, hs;           // R x d stage inputs, R x hidden pre-activations and activations
    vector<T> ts;                   // R stage times
    std::array<table<T>, S> k;      // B x d stage derivatives of one substep
    std::array<vector<T>, S> coef;  // B per-row stage-sum weights (one vector per term)
    table<T> y;                     // B x d: the chunk's states (start, then end of each substep)
    std::vector<double> t0, h;      // per (interval, substep): start time and size
  };
  /// \endcond

  /// Chunk size of the recomputation for L positions, and buffers sized for it.
  std::size_t prepare_recompute(std::size_t L) {
    const std::size_t Nn = blocks(), k = m_opt.substeps;
    const std::size_t rows_per_interval = k * S * Nn;
    // A chunk of intervals is recomputed from its checkpoints as ONE batch (the intervals are
    // independent given their starting rows), so the recomputation runs as matrix-matrix products
    // of >= 64 rows even for one block; its stage rows (>= 256) then feed the weight-gradient products.
    std::size_t chunk = std::max<std::size_t>({1, (256 + rows_per_interval - 1) / rows_per_interval, (64 + Nn - 1) / Nn});
    chunk = std::min<std::size_t>({chunk, 64, std::max<std::size_t>(L - 1, 1)});
    if (m_rc.chunk != chunk || m_rc.y.cols() != m_p0.cols() || m_rc.zs.cols() != m_theta.w1.rows() ||
        m_rc.y.rows() != static_cast<Eigen::Index>(chunk * Nn)) {
      const auto R = static_cast<Eigen::Index>(chunk * rows_per_interval), B = static_cast<Eigen::Index>(chunk * Nn);
      const Eigen::Index D = m_p0.cols(), Hd = m_theta.w1.rows();
      m_rc.chunk = chunk;
      m_rc.ys.resize(R, D);
      m_rc.zs.resize(R, Hd);
      m_rc.hs.resize(R, Hd);
      m_rc.ts.resize(R);
      for (auto& x : m_rc.k) x.resize(B, D);
      for (auto& x : m_rc.coef) x.resize(B);
      m_rc.y.resize(B, D);
      m_rc.t0.resize(chunk * k);
      m_rc.h.resize(chunk * k);
    }
    return chunk;
  }

  Eigen::Index stacked_row(std::size_t s, std::size_t q, std::size_t c, std::size_t nc) const {
    return static_cast<Eigen::Index>(((s * S + q) * nc + c) * blocks());
  }

  /// out = y + sum_m diag(w_m) k_m over the terms of a stage (or of the solution): per row the
  /// weights ode::stage_weights / solution_weights give the stepper for that row's step size, summed
  /// in the order Backend::linear_combination sums (1 y + (w_1 k_1 + (w_2 k_2 + ...))), so each row
  /// equals the stepper's stage sum bit for bit.
  template <class Terms, class Out>
  void rows_stage_sum(Out&& out, Eigen::Index Bc, const Terms& terms) {
    auto y = m_rc.y.topRows(Bc);
    [&]<std::size_t... M>(std::index_sequence<M...>) {
      auto term = [&]<std::size_t J>(std::integral_constant<std::size_t, J>) {
        if constexpr (J == 0) return y.array();
        else return m_rc.k[terms.index[J - 1]].topRows(Bc).array().colwise() * m_rc.coef[J - 1].head(Bc).array();
      };
      out.array() = (term(std::integral_constant<std::size_t, M>{}) + ...);
    }(std::make_index_sequence<std::tuple_size_v<decltype(Terms::index)> + 1>{});
  }

  template <std::size_t... M, class W>
  void set_coefficients(std::size_t c, const W& w, std::index_sequence<M...>) {
    [[maybe_unused]] const auto N = m_p0.rows();
    [[maybe_unused]] const auto r = static_cast<Eigen::Index>(c) * N;
    ((m_rc.coef[M].segment(r, N).setConstant(w[M])), ...);
  }

  /// Recompute the stages of intervals j0 .. j0 + nc - 1 from their cached starting rows, all at
  /// once (nc <= the prepared chunk). Afterwards m_rc.ys / zs / hs / ts hold every stage's input,
  /// pre-activation, activation and time, m_rc.h every substep size, m_rc.y the end states.
  void recompute(std::size_t j0, std::size_t nc) {
    const Eigen::Index N = m_p0.rows();
    const std::size_t k = m_opt.substeps;
    const auto Bc = static_cast<Eigen::Index>(nc) * N;
    for (std::size_t c = 0; c < nc; ++c) m_rc.y.middleRows(static_cast<Eigen::Index>(c) * N, N) = checkpoint(j0 + c);
    substep_sizes(j0, nc);
    for (std::size_t s = 0; s < k; ++s) {
      [&]<std::size_t... Q>(std::index_sequence<Q...>) { (recompute_stage<Q>(s, nc, Bc), ...); }(std::make_index_sequence<S>{});
      constexpr auto& terms = ode::solution_terms<Scheme>;
      for (std::size_t c = 0; c < nc; ++c)
        set_coefficients(c, ode::solution_weights<T, Scheme>(m_rc.h[c * k + s]), std::make_index_sequence<terms.index.size()>{});
      rows_stage_sum(m_rc.y.topRows(Bc), Bc, terms);
    }
  }

  /// m_rc.t0 / m_rc.h: start time and size of every substep of intervals j0 .. j0 + nc - 1.
  void substep_sizes(std::size_t j0, std::size_t nc) {
    const std::size_t k = m_opt.substeps;
    for (std::size_t c = 0; c < nc; ++c)
      m_grid.for_each_substep(j0 + c + 1, k, [&](std::size_t s, double ts, double hs) {
        m_rc.t0[c * k + s] = ts;
        m_rc.h[c * k + s] = hs;
      });
  }

  /// Row of (substep s, stage q, interval c) in a kept chunk, relative to its first row: the kept
  /// layout ((c * substeps + s) * S + q) * N.
  Eigen::Index kept_row(std::size_t s, std::size_t q, std::size_t c) const {
    return static_cast<Eigen::Index>(((c * m_opt.substeps + s) * S + q) * blocks());
  }

  /// A kept chunk (intervals j0 .. j0 + nc - 1 < kept_intervals()): instead of recompute(), the
  /// stage times (m_rc.ts) and activations h = sigma(z) (m_rc.hs) in the kept layout, from the
  /// kept z; the stage inputs and pre-activations are read from m_keep directly.
  void load_kept(std::size_t j0, std::size_t nc) {
    const Eigen::Index N = m_p0.rows();
    const std::size_t k = m_opt.substeps;
    substep_sizes(j0, nc);
    for (std::size_t c = 0; c < nc; ++c)
      for (std::size_t s = 0; s < k; ++s)
        [&]<std::size_t... Q>(std::index_sequence<Q...>) {
          ((m_rc.ts.segment(kept_row(s, Q, c), N)
                .setConstant(static_cast<T>(m_rc.t0[c * k + s] + static_cast<double>(Scheme::coefficients.c[Q]) * m_rc.h[c * k + s]))),
           ...);
        }(std::make_index_sequence<S>{});
    const auto used = static_cast<Eigen::Index>(nc * keep_rows_per_interval());
    const auto base = static_cast<Eigen::Index>(j0 * keep_rows_per_interval());
    detail::activate(m_theta.act, m_keep.z.middleRows(base, used), m_rc.hs.topRows(used));
  }

  template <std::size_t Q>
  void recompute_stage(std::size_t s, std::size_t nc, Eigen::Index Bc) {
    const Eigen::Index N = m_p0.rows();
    const std::size_t k = m_opt.substeps;
    constexpr auto& terms = ode::stage_terms<Scheme, Q>;
    const Eigen::Index r = stacked_row(s, Q, 0, nc);
    for (std::size_t c = 0; c < nc; ++c) {
      const double h = m_rc.h[c * k + s];
      set_coefficients(c, ode::stage_weights<T, Scheme, Q>(h), std::make_index_sequence<terms.index.size()>{});
      // the stage time as the stepper forms it: t + c_q h in double, then T (flow::evaluate)
      m_rc.ts.segment(r + static_cast<Eigen::Index>(c) * N, N)
          .setConstant(static_cast<T>(m_rc.t0[c * k + s] + static_cast<double>(Scheme::coefficients.c[Q]) * h));
    }
    auto yq = m_rc.ys.middleRows(r, Bc);
    rows_stage_sum(yq, Bc, terms);
    m_flow.evaluate_rows(m_rc.ts.segment(r, Bc), yq, m_rc.zs.middleRows(r, Bc), m_rc.hs.middleRows(r, Bc),
                         m_rc.k[Q].topRows(Bc));
  }

  template <class Upstream>
  gradients<T> backprop_impl(std::size_t L, Upstream&& upstream, gradient_info* info) {
    extend(L);
    m_flow.set_parameters(m_theta);
    const Eigen::Index N = m_p0.rows(), D = m_p0.cols(), Hd = m_theta.w1.rows();
    const std::size_t k = m_opt.substeps;
    const std::size_t chunk = prepare_recompute(L);
    const auto R = static_cast<Eigen::Index>(chunk * k * S * blocks());
    matrix<T> gs(R, D), zb(R, Hd);
    std::array<table<T>, S> ybar;
    for (auto& x : ybar) x.resize(N, D);
    table<T> kbar(N, D), lam = table<T>::Zero(N, D);
    constexpr auto needed = ode::needed_stages<Scheme>();

    gradients<T> out{flow<T>::zero_like(m_theta), table<T>::Zero(N, D)};
    std::size_t nfev = 0, kept = 0;
    const std::size_t kept_to = std::min(m_keep.intervals, L - 1);
    m_flow.prepare_pullback();
    upstream(L - 1, lam);
    for (std::size_t jend = L - 1; jend > 0;) {
      // a chunk is either kept (jend <= kept_to) or recomputed, never both
      const std::size_t lo = jend > kept_to ? kept_to : 0;
      const std::size_t j0 = jend - lo > chunk ? jend - chunk : lo, nc = jend - j0;
      const bool from_kept = jend <= kept_to;
      const auto base = from_kept ? static_cast<Eigen::Index>(j0 * keep_rows_per_interval()) : Eigen::Index{0};
      // 1. the stages of intervals j0 .. jend-1: kept by the forward, or recomputed from their
      //    checkpoints all at once
      if (from_kept) {
        load_kept(j0, nc);
        kept += nc;
      } else {
        recompute(j0, nc);
        nfev += nc * k * S;
      }
      const auto row = [&](std::size_t s, std::size_t q, std::size_t c) {
        return from_kept ? kept_row(s, q, c) : stacked_row(s, q, c, nc);
      };
      const matrix<T>& zsrc = from_kept ? m_keep.z : m_rc.zs;
      // 2. reverse through the steps (ode::reverse_step), interval by interval, stacking the
      //    stage cotangents for the weight gradient
      for (std::size_t c = nc; c-- > 0;) {
        for (std::size_t s = k; s-- > 0;) {
          for (std::size_t q = 0; q < S; ++q)
            if (!needed[q]) {  // a stage that does not reach y_new contributes nothing
              gs.middleRows(row(s, q, c), N).setZero();
              zb.middleRows(row(s, q, c), N).setZero();
            }
          ode::reverse_step<Scheme, eigen_backend>(lam, m_rc.h[c * k + s], ybar, kbar,
                                                   [&](std::size_t q, const table<T>& kb, table<T>& Yb) {
                                                     const Eigen::Index r = row(s, q, c);
                                                     gs.middleRows(r, N) = kb;
                                                     m_flow.pullback(kb, zsrc.middleRows(base + r, N), zb.middleRows(r, N), Yb);
                                                   });
        }
        upstream(j0 + c, lam);
      }
      // 3. weight gradients of the whole chunk: two matrix products (the flow's batched VJP)
      const auto used = static_cast<Eigen::Index>(nc * k * S * blocks());
      const matrix<T>& ysrc = from_kept ? m_keep.y : m_rc.ys;
      m_flow.accumulate(gs.topRows(used), m_rc.hs.topRows(used), zb.topRows(used), ysrc.middleRows(base, used),
                        m_rc.ts.head(used), out.flow);
      jend = j0;
    }
    out.p0 = lam;
    if (info) *info = gradient_info{L, nfev, static_cast<std::size_t>(R), kept};
    return out;
  }

  template <class Upstream>
  gradients<T> adjoint_impl(std::size_t L, std::size_t substeps, Upstream&& upstream, gradient_info* info) {
    extend(L);
    m_flow.set_parameters(m_theta);
    const std::size_t k = substeps == 0 ? m_opt.substeps : substeps;
    std::vector<double> times(L);
    for (std::size_t i = 0; i < L; ++i) times[i] = time(i);
    gradients<T> out{flow<T>::zero_like(m_theta), table<T>()};
    // ode::adjoint from the cached table: p restarts from p(t_i) at every segment (as torchdiffeq).
    const ode::gradient_stats st = ode::adjoint(
        Scheme{}, m_flow, std::span<const double>(times), ode::fixed_steps{k},
        [&](std::size_t i, table<T>& y) { y = checkpoint(i); },
        [&](std::size_t i, table<T>& a) { upstream(i, a); }, out.p0, out.flow);
    if (info) *info = gradient_info{L, st.rhs_evaluations + st.vjp_evaluations, static_cast<std::size_t>(m_p0.rows())};
    return out;
  }

  mlp<T> m_theta;
  table<T> m_p0;
  options m_opt;
  ode::grid m_grid;
  flow<T> m_flow;
  recompute_buffers m_rc;
  /// \cond INTERNAL
  struct kept_stages {
    matrix<T> y, z;             // rows ((interval * substeps + s) * S + q) * N + n: Y and z of each stage
    matrix<T> h;                // N x hidden scratch activations of the keeping forward
    std::size_t intervals = 0;  // intervals 0 .. intervals-1 are kept
  };
  /// \endcond
  kept_stages m_keep;
  ode::explicit_rk<Scheme, table<T>> m_stepper;
  table<T> m_y;
  matrix<T> m_traj;
  std::size_t m_len = 0;
};

/// Convenience: an encoder with zero dynamics (h == 0) for d, hidden, N blocks and zero p(0).
template <class T, class Scheme = ode::schemes::rk4_38>
[[nodiscard]] encoder<T, Scheme> zero_encoder(std::size_t d, std::size_t hidden = 0, std::size_t blocks = 1,
                                              options opt = {}) {
  posenc::detail::require(blocks >= 1, "floater::zero_encoder", "expected blocks >= 1, got ", blocks);
  mlp<T> m(d, hidden);
  // p(0) through the checked door: blocks beyond max_extent is a size_error, not a negative Index
  table<T> p0 = posenc::detail::allocate_table<T>(blocks, d, "floater::zero_encoder", "blocks", "d");
  p0.setZero();
  return encoder<T, Scheme>(std::move(m), std::move(p0), std::move(opt));
}

// ---- the bias form (paper eqs. 11-13) ----------------------------------------------------------

/// P^(n) = base + b^(n), with b^(n) the FLOATER trajectory of block n (its own p^(n)(0), shared
/// theta). `base(L, d)` returns an L x d table (e.g. the sinusoidal encoding); an empty base
/// means none (zeros). With h == 0 and p(0) == 0 the bias is exactly 0 and P is the base itself,
/// which is how a pretrained Transformer is extended without changing its outputs (warm start).
/// The gradient of the bias form w.r.t. theta and p(0) is that of the encoder: dL/db = dL/dP.
template <class T, class Scheme = ode::schemes::rk4_38>
class biased_encoder {
 public:
  using base_function = std::function<table<T>(std::size_t L, std::size_t d)>;

  explicit biased_encoder(encoder<T, Scheme> bias, base_function base = {})
      : m_bias(std::move(bias)), m_base_fn(std::move(base)) {}

  [[nodiscard]] encoder<T, Scheme>& bias() noexcept { return m_bias; }
  [[nodiscard]] const encoder<T, Scheme>& bias() const noexcept { return m_bias; }

  /// The base table for L positions (cached; zeros when there is no base).
  [[nodiscard]] const table<T>& base(std::size_t L) {
    if (static_cast<std::size_t>(m_base.rows()) < L) {
      const auto D = static_cast<Eigen::Index>(m_bias.dim());
      if (m_base_fn) {
        table<T> b = m_base_fn(L, m_bias.dim());
        posenc::detail::require_shape(b, static_cast<Eigen::Index>(L), D, "floater::biased_encoder", "base(L, d)");
        posenc::detail::require_finite(b, "floater::biased_encoder", "base(L, d)");
        m_base = std::move(b);
      } else {
        m_base = table<T>::Zero(static_cast<Eigen::Index>(L), D);
      }
    }
    return m_base;
  }

  /// base[:L] + bias of block n.
  [[nodiscard]] table<T> block_table(std::size_t n, std::size_t L) {
    const table<T>& b = base(L);
    table<T> out = m_bias.block_table(n, L);
    out += b.topRows(static_cast<Eigen::Index>(L));
    return out;
  }
  [[nodiscard]] std::vector<table<T>> tables(std::size_t L) {
    std::vector<table<T>> out;
    for (std::size_t n = 0; n < m_bias.blocks(); ++n) out.push_back(block_table(n, L));
    return out;
  }

 private:
  encoder<T, Scheme> m_bias;
  base_function m_base_fn;
  table<T> m_base;
};

}  // namespace posenc::floater
