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
// The encoder validates its arguments and composes one type per job: the cached table
// (floater/table_cache.hpp), the kept forward stages (floater/kept_stages.hpp), the batched
// replay (floater/replay.hpp), the gradient drivers (floater/gradients.hpp) and the forward
// interval loop it shares with the device (floater/forward.hpp).
//
// Defaults reproduce the released reference code: Delta = 0.01, 5 substeps per interval of
// torchdiffeq's `rk4` (Kutta's 3/8 rule), position 0 = p(0). See docs/floater.md.
#pragma once

#include <Eigen/Core>
#include <algorithm>
#include <cstddef>
#include <functional>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include <posenc/adapters/eigen.hpp>
#include <posenc/core/checked.hpp>
#include <posenc/core/error.hpp>
#include <posenc/tensor/table.hpp>
#include <posenc/floater/flow.hpp>
#include <posenc/floater/forward.hpp>
#include <posenc/floater/gradients.hpp>
#include <posenc/floater/kept_stages.hpp>
#include <posenc/floater/options.hpp>
#include <posenc/floater/replay.hpp>
#include <posenc/floater/table_cache.hpp>
#include <posenc/ode/grid.hpp>
#include <posenc/ode/schemes.hpp>
#include <posenc/ode/stepper.hpp>

namespace posenc::floater {

/// The FLOATER encoder: N blocks sharing theta, each from its own p^(n)(0).
///
/// A table for L positions is computed once and cached (rows L x (N d), row i = all blocks at
/// t_i); asking for more positions integrates only the new intervals from the cached last state,
/// so the result equals a fresh computation (the same steps in the same order: bitwise equal),
/// and lookup of a cached table is a copy.
///
/// Every public member validates its arguments once, on entry; the members it calls do not
/// validate again.
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
        m_grid(detail::check_options(m_opt, "floater::encoder")),
        m_flow(checked_theta(m_theta, m_p0), m_opt.threads) {
    reset_cache();
  }

  [[nodiscard]] std::size_t dim() const noexcept { return static_cast<std::size_t>(m_p0.cols()); }
  [[nodiscard]] std::size_t hidden() const noexcept { return m_theta.hidden(); }
  [[nodiscard]] std::size_t blocks() const noexcept { return static_cast<std::size_t>(m_p0.rows()); }
  [[nodiscard]] const mlp<T>& parameters() const noexcept { return m_theta; }
  [[nodiscard]] const table<T>& initial_state() const noexcept { return m_p0; }
  [[nodiscard]] const options& settings() const noexcept { return m_opt; }
  /// Positions currently cached.
  [[nodiscard]] std::size_t size() const noexcept { return m_cache.size(); }
  /// Largest number of positions the grid allows (unbounded for t_i = i delta).
  [[nodiscard]] std::size_t max_positions() const noexcept { return m_grid.max_points(); }
  /// t_i.
  [[nodiscard]] double time(std::size_t i) const { return m_grid.time(i); }
  /// The grid (t_i = i delta or the explicit times).
  [[nodiscard]] const ode::grid& time_grid() const noexcept { return m_grid; }
  /// Intervals (from position 0) whose forward stages are kept for backprop (options::stage_memory).
  [[nodiscard]] std::size_t kept_intervals() const noexcept { return m_keep.intervals(); }
  /// Bytes of stage data kept now: kept_intervals() * substeps * stages * N * (d + hidden) * sizeof(T).
  [[nodiscard]] std::size_t kept_stage_bytes() const noexcept { return m_keep.bytes(shape()); }

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
    if (L <= size()) return;
    check_length(L, "floater::encoder::extend");
    compute(L);
  }

  /// Incremental decoding: one more position (one interval), as the reference decoder does.
  void step() { extend(size() + 1); }

  // Thread safety: the const members (block_table(n, L) const, tables(L) const, trajectory(),
  // size(), time(), the accessors) only read the cache and may be called from several threads at
  // once, as long as no thread calls a non-const member (extend, step, the non-const
  // block_table/tables, backprop, adjoint, set_*, append_times) at the same time. Every non-const
  // member writes the cache or the work buffers: one thread at a time (or one encoder per thread).

  /// The table of block n: L x d (a copy of the cache; computes what is missing). invalid_argument
  /// for n >= blocks() or L = 0; grid_error for L beyond an explicit grid.
  [[nodiscard]] table<T> block_table(std::size_t n, std::size_t L) {
    constexpr std::string_view where = "floater::encoder::block_table";
    check_block(n, where);
    check_length(L, where);
    compute(L);
    return m_cache.block(n, L, m_p0.cols());
  }
  /// The cached table of block n, L x d, without computing: invalid_argument for n >= blocks(),
  /// L = 0 or L > size() (extend(L) first). Safe to call from several threads at once.
  [[nodiscard]] table<T> block_table(std::size_t n, std::size_t L) const {
    check_block(n, "floater::encoder::block_table const");
    check_cached(L, "floater::encoder::block_table const");
    return m_cache.block(n, L, m_p0.cols());
  }
  /// All N tables, each L x d.
  [[nodiscard]] std::vector<table<T>> tables(std::size_t L) {
    check_length(L, "floater::encoder::tables");
    compute(L);
    return cached_tables(L);
  }
  /// All N cached tables, each L x d, without computing (errors as block_table const).
  [[nodiscard]] std::vector<table<T>> tables(std::size_t L) const {
    check_cached(L, "floater::encoder::tables const");
    return cached_tables(L);
  }
  /// The cache itself: size() rows of N d (row i = blocks 0..N-1 at t_i, each d wide).
  [[nodiscard]] auto trajectory() const { return m_cache.rows(); }

  // ---- gradients ----------------------------------------------------------------------------

  /// Exact gradient of L(P) w.r.t. theta and p(0), by backpropagation through the discrete steps
  /// that produced the table (reverse-mode through every stage). dL_dP: N tables of L x d
  /// (L >= 1; the table is computed or extended to L first). Memory: the cached table (the
  /// checkpoints at the output positions) plus the stage data of a few intervals, recomputed
  /// from their checkpoints; weight gradients are accumulated with one matrix product per chunk
  /// of ~256 stacked stage rows.
  gradients<T> backprop(std::span<const table<T>> dL_dP, gradient_info* info = nullptr) {
    const std::size_t L = check_upstream(dL_dP, "floater::encoder::backprop");
    compute(L);
    return detail::backprop_steps(source(), m_keep, m_replay, L, upstream(dL_dP), info);
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
    compute(L);
    return detail::continuous_adjoint<T, Scheme>(source(), L, substeps == 0 ? m_opt.substeps : substeps, upstream(dL_dP), info);
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
    posenc::detail::require(count >= 1 && first + count < size(), where,
                            "expected 1 <= count and first + count < size() = ", size(), ", got first = ", first,
                            ", count = ", count);
    m_flow.set_parameters(m_theta);
    const std::size_t chunk = m_replay.prepare(first + count + 1, shape());
    const Eigen::Index N = m_p0.rows(), D = m_p0.cols();
    matrix<T> out(static_cast<Eigen::Index>(count), N * D);
    for (std::size_t j0 = first; j0 < first + count; j0 += chunk) {
      const std::size_t nc = std::min(chunk, first + count - j0);
      m_replay.recompute(m_flow, m_grid, m_cache, j0, nc);
      for (std::size_t c = 0; c < nc; ++c)
        for (Eigen::Index n = 0; n < N; ++n)
          out.block(static_cast<Eigen::Index>(j0 - first + c), n * D, 1, D) =
              m_replay.end_states().row(static_cast<Eigen::Index>(c) * N + n);
    }
    return out;
  }

 private:
  // theta and p0 checked (errors naming "floater::encoder") before the flow is built on theta
  static const mlp<T>& checked_theta(const mlp<T>& theta, const table<T>& p0) {
    detail::check_initial_state(theta, p0, "floater::encoder");
    return theta;
  }
  // ---- argument checks (once per public call) ----
  void check_block(std::size_t n, std::string_view where) const {
    posenc::detail::require(n < blocks(), where, "n: expected block < ", blocks(), ", got ", n);
  }
  void check_length(std::size_t L, std::string_view where) const {
    floater::check_length(m_grid, L, static_cast<std::size_t>(m_p0.size()), where);
  }
  void check_cached(std::size_t L, std::string_view where) const {
    posenc::detail::require(L >= 1, where, "L: expected at least 1 position, got L = 0");
    posenc::detail::require(L <= size(), where, "L: expected at most the cached length size() = ", size(), ", got L = ",
                            L, " (call extend(L) on a non-const encoder first)");
  }
  /// dL/dP: one L x d table per block, finite, L >= 1 and within the grid; returns L.
  std::size_t check_upstream(std::span<const table<T>> g, std::string_view where) const {
    posenc::detail::require<shape_error>(g.size() == blocks(), where, "expected dL/dP as ", blocks(),
                                         " tables (one per block), got ", g.size());
    const Eigen::Index L = g[0].rows();
    posenc::detail::require<shape_error>(L >= 1, where, "expected dL/dP with at least one position (row), got 0");
    for (std::size_t n = 0; n < g.size(); ++n) {
      posenc::detail::require_shape(g[n], L, m_p0.cols(), where, n == 0 ? "dL/dP[0]" : "dL/dP[n] (block n > 0)");
      posenc::detail::require_finite(g[n], where, "dL/dP");
    }
    check_length(static_cast<std::size_t>(L), where);
    return static_cast<std::size_t>(L);
  }

  // ---- the forward (arguments already checked) ----
  [[nodiscard]] detail::batch_shape shape() const noexcept { return {blocks(), dim(), hidden(), m_opt.substeps}; }

  void reset_cache() {
    m_cache.reset(m_p0);
    m_y = m_p0;
    m_stepper.resize_like(m_y);
    m_keep.clear();
  }

  /// Positions size() .. L-1, by the forward interval loop shared with the device.
  void compute(std::size_t L) {
    if (L <= size()) return;
    m_flow.set_parameters(m_theta);
    m_cache.reserve(L, "floater::encoder::extend");
    const detail::batch_shape b = shape();
    const std::size_t keep_to = m_keep.reserve(L, b, m_opt.stage_memory);  // intervals < keep_to keep their stages
    detail::integrate_intervals(
        m_grid, m_opt.substeps, size(), L, m_stepper, m_y,
        [&](std::size_t i, auto&& run) {
          if (i - 1 < keep_to && i - 1 == m_keep.intervals()) m_keep.record(i, b, m_flow, run);
          else run(m_flow);
        },
        [](const table<T>& y) { return y.allFinite(); }, [&](std::size_t i, const table<T>& y) { m_cache.store(i, y); },
        "floater::encoder::extend");
  }

  std::vector<table<T>> cached_tables(std::size_t L) const {
    std::vector<table<T>> out;
    out.reserve(blocks());
    for (std::size_t n = 0; n < blocks(); ++n) out.push_back(m_cache.block(n, L, m_p0.cols()));
    return out;
  }

  // ---- the gradients (arguments already checked, table computed) ----
  detail::sweep_source<T> source() {
    m_flow.set_parameters(m_theta);
    return {m_theta, m_flow, m_grid, shape(), m_cache};
  }
  static auto upstream(std::span<const table<T>> g) {
    return [g](std::size_t i, table<T>& lam) {
      for (std::size_t n = 0; n < g.size(); ++n) lam.row(static_cast<Eigen::Index>(n)) += g[n].row(static_cast<Eigen::Index>(i));
    };
  }

  mlp<T> m_theta;
  table<T> m_p0;
  options m_opt;
  ode::grid m_grid;
  flow<T> m_flow;
  detail::table_cache<T> m_cache;
  detail::kept_stages<T, Scheme> m_keep;
  detail::stage_replay<T, Scheme> m_replay;
  ode::explicit_rk<Scheme, table<T>> m_stepper;
  table<T> m_y;
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

  /// The base table for L positions (cached; zeros when there is no base). size_error for L
  /// above posenc::max_extent or L * d above posenc::max_elements, before base(L, d) is called.
  [[nodiscard]] const table<T>& base(std::size_t L) {
    constexpr std::string_view where = "floater::biased_encoder::base";
    (void)checked::elements(checked::extent(L, where, "L"), m_bias.dim(), where, "L * d (the base table)");
    if (static_cast<std::size_t>(m_base.rows()) < L) {
      const auto D = static_cast<Eigen::Index>(m_bias.dim());
      if (m_base_fn) {
        table<T> b = m_base_fn(L, m_bias.dim());
        posenc::detail::require_shape(b, static_cast<Eigen::Index>(L), D, "floater::biased_encoder", "base(L, d)");
        posenc::detail::require_finite(b, "floater::biased_encoder", "base(L, d)");
        m_base = std::move(b);
      } else {
        m_base = posenc::detail::allocate_table<T>(L, m_bias.dim(), where, "L", "d");
        m_base.setZero();
      }
    }
    return m_base;
  }

  /// base[:L] + bias of block n. n and L are checked by the bias encoder's block_table (before
  /// the base is made).
  [[nodiscard]] table<T> block_table(std::size_t n, std::size_t L) {
    table<T> out = m_bias.block_table(n, L);
    out += base(L).topRows(static_cast<Eigen::Index>(L));
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
