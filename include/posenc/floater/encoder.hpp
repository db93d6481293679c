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
#include <utility>
#include <vector>

#include <posenc/adapters/eigen.hpp>
#include <posenc/core/checked.hpp>
#include <posenc/core/error.hpp>
#include <posenc/floater/flow.hpp>
#include <posenc/encoding/table.hpp>
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
  std::size_t threads = 1;      ///< threads for the matrix products (1: serial; 2 uses both cores
                                ///< of a 2-core machine). Opt-in: the default never starts a thread.
};

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
      : m_theta(std::move(theta)), m_p0(std::move(p0)), m_opt(std::move(opt)), m_flow(m_theta, m_opt.threads) {
    constexpr std::string_view where = "floater::encoder";
    m_theta.validate(where);
    posenc::detail::require(m_p0.rows() >= 1, where, "expected p0 with at least one block (row), got ", m_p0.rows());
    posenc::detail::require<shape_error>(m_p0.cols() == m_theta.w1.cols(), where, "expected p0 with d = ",
                                         m_theta.w1.cols(), " columns (the dynamics' d), got ", m_p0.cols());
    posenc::detail::require_finite(m_p0, where, "p0 (initial state)");
    posenc::detail::require(m_opt.substeps >= 1 && m_opt.substeps <= ode::fixed_steps{}.max_steps, where,
                            "substeps: expected 1 <= substeps <= ", ode::fixed_steps{}.max_steps, ", got ", m_opt.substeps);
    posenc::detail::require(m_opt.threads >= 1, where, "expected threads >= 1, got ", m_opt.threads);
    if (m_opt.times.empty()) {
      posenc::detail::require(std::isfinite(m_opt.delta) && m_opt.delta > 0, where, "expected delta > 0 and finite, got ",
                              m_opt.delta);
    } else {
      check_grid(m_opt.times, 0, where);
    }
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
  [[nodiscard]] std::size_t max_positions() const noexcept {
    return m_opt.times.empty() ? static_cast<std::size_t>(-1) : m_opt.times.size();
  }
  /// t_i.
  [[nodiscard]] double time(std::size_t i) const noexcept {
    return m_opt.times.empty() ? static_cast<double>(i) * m_opt.delta : m_opt.times[i];
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
    posenc::detail::require(!m_opt.times.empty(), where, "the encoder uses t_i = i delta; there is no explicit grid to extend");
    std::vector<double> all = m_opt.times;
    all.insert(all.end(), more.begin(), more.end());
    check_grid(all, m_opt.times.size(), where);
    m_opt.times = std::move(all);
  }
  /// Use `threads` threads for the matrix products from now on.
  void set_threads(std::size_t threads) {
    posenc::detail::require(threads >= 1, "floater::encoder::set_threads", "expected threads >= 1, got ", threads);
    m_opt.threads = threads;
    m_flow.set_threads(threads);
  }

  /// Make sure positions 0 .. L-1 are cached: integrates only the intervals not yet done.
  void extend(std::size_t L) {
    constexpr std::string_view where = "floater::encoder::extend";
    if (L <= m_len) return;
    (void)checked::elements(checked::extent(L, where, "L"), static_cast<std::size_t>(m_p0.size()), where,
                            "L * blocks * d (the cached table)");
    posenc::detail::require(L <= max_positions(), where, "the explicit grid has ", max_positions(),
                            " times, asked for L = ", L, " positions (append_times first)");
    m_flow.set_parameters(m_theta);
    reserve_rows(L);
    const Eigen::Index nd = m_p0.size();
    for (std::size_t i = m_len; i < L; ++i) {
      const double t0 = time(i - 1), t1 = time(i);
      const std::size_t k = m_opt.substeps;
      m_stepper.reset();
      for (std::size_t s = 0; s < k; ++s) {
        const auto [ts, hs] = ode::detail::substep(t0, t1, k, s);  // the last one lands exactly on t1
        m_stepper.step(m_flow, ts, m_y, hs);
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

  /// The table of block n: L x d (a copy of the cache; computes what is missing).
  [[nodiscard]] table<T> block_table(std::size_t n, std::size_t L) {
    posenc::detail::require(n < blocks(), "floater::encoder::block_table", "n: expected block < ", blocks(), ", got ", n);
    (void)checked::extent(L, "floater::encoder::block_table", "L");
    extend(L);
    const auto D = m_p0.cols();
    return m_traj.block(0, static_cast<Eigen::Index>(n) * D, static_cast<Eigen::Index>(L), D);
  }
  /// All N tables, each L x d.
  [[nodiscard]] std::vector<table<T>> tables(std::size_t L) {
    (void)checked::elements(checked::extent(L, "floater::encoder::tables", "L"), static_cast<std::size_t>(m_p0.size()),
                            "floater::encoder::tables", "L * blocks * d");
    extend(L);
    std::vector<table<T>> out;
    out.reserve(blocks());
    for (std::size_t n = 0; n < blocks(); ++n) out.push_back(block_table(n, L));
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

 private:
  static void check_grid(const std::vector<double>& t, std::size_t from, std::string_view where) {
    posenc::detail::require<grid_error>(!t.empty(), where, "expected at least one time");
    for (std::size_t i = from; i < t.size(); ++i) {
      posenc::detail::require<grid_error>(std::isfinite(t[i]), where, "expected finite times, got t[", i, "] = ", t[i]);
      if (i > 0)
        posenc::detail::require<grid_error>(t[i] > t[i - 1], where, "expected strictly increasing times, got t[", i - 1,
                                            "] = ", t[i - 1], " then t[", i, "] = ", t[i]);
    }
  }

  void reset_cache() {
    const Eigen::Index nd = m_p0.size();
    m_traj.resize(std::max<Eigen::Index>(m_traj.rows(), 1), nd);
    m_traj.row(0) = Eigen::Map<const Eigen::Matrix<T, 1, Eigen::Dynamic>>(m_p0.data(), nd);
    m_y = m_p0;
    m_len = 1;
    m_stepper.resize_like(m_y);
  }

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
  static T a_(std::size_t i, std::size_t j) { return static_cast<T>(Scheme::coefficients.a[i][j]); }
  static T b_(std::size_t i) { return static_cast<T>(Scheme::coefficients.b[i]); }
  static double c_(std::size_t i) { return static_cast<double>(Scheme::coefficients.c[i]); }

  template <class Upstream>
  gradients<T> backprop_impl(std::size_t L, Upstream&& upstream, gradient_info* info) {
    extend(L);
    m_flow.set_parameters(m_theta);
    const Eigen::Index N = m_p0.rows(), D = m_p0.cols(), Hd = m_theta.w1.rows();
    const std::size_t k = m_opt.substeps, Nn = static_cast<std::size_t>(N);
    const std::size_t rows_per_interval = k * S * Nn;
    // A chunk of intervals is recomputed from its checkpoints as ONE batch (the intervals are
    // independent given their starting rows), so the recomputation runs as matrix-matrix products
    // of >= 64 rows even for one block; its stage rows (>= 256) then feed the weight-gradient products.
    std::size_t chunk = std::max<std::size_t>({1, (256 + rows_per_interval - 1) / rows_per_interval, (64 + Nn - 1) / Nn});
    chunk = std::min<std::size_t>({chunk, 64, std::max<std::size_t>(L - 1, 1)});
    const auto R = static_cast<Eigen::Index>(chunk * rows_per_interval);
    const auto B = static_cast<Eigen::Index>(chunk * Nn);
    matrix<T> ys(R, D), zs(R, Hd), hs(R, Hd), gs(R, D), zb(R, Hd);
    vector<T> ts(R), hrow(B), trow(B);
    std::vector<double> steps(chunk * k);  // substep sizes per (interval, substep)
    std::array<table<T>, S> kk, ybar;
    for (auto& x : kk) x.resize(B, D);
    for (auto& x : ybar) x.resize(N, D);
    table<T> ycur(B, D), lam = table<T>::Zero(N, D);

    gradients<T> out{flow<T>::zero_like(m_theta), table<T>::Zero(N, D)};
    std::size_t nfev = 0;
    upstream(L - 1, lam);
    for (std::size_t jend = L - 1; jend > 0;) {
      const std::size_t j0 = jend > chunk ? jend - chunk : 0, nc = jend - j0;
      const auto Bc = static_cast<Eigen::Index>(nc * Nn);
      const auto ncI = static_cast<Eigen::Index>(nc);
      // row of (substep s, stage q, interval c, block n) in the stacked buffers
      auto row = [&](std::size_t s, std::size_t q, std::size_t c) {
        return static_cast<Eigen::Index>(((s * S + q) * nc + c) * Nn);
      };
      // 1. recompute the stages of intervals j0 .. jend-1 from their checkpoints, all at once
      for (std::size_t c = 0; c < nc; ++c)
        ycur.middleRows(static_cast<Eigen::Index>(c * Nn), N) = checkpoint(j0 + c);
      auto yb = ycur.topRows(Bc);
      for (std::size_t s = 0; s < k; ++s) {
        for (std::size_t c = 0; c < nc; ++c) {
          const auto [tsub, hsub] = ode::detail::substep(time(j0 + c), time(j0 + c + 1), k, s);
          steps[c * k + s] = hsub;
          hrow.segment(static_cast<Eigen::Index>(c * Nn), N).setConstant(static_cast<T>(hsub));
          trow.segment(static_cast<Eigen::Index>(c * Nn), N).setConstant(static_cast<T>(tsub));
        }
        const auto hb = hrow.head(Bc);
        for (std::size_t q = 0; q < S; ++q) {
          const Eigen::Index r = row(s, q, 0);
          auto yq = ys.middleRows(r, Bc);
          yq = yb;
          for (std::size_t m = 0; m < q; ++m)
            if (a_(q, m) != T(0)) yq.noalias() += (a_(q, m) * hb).asDiagonal() * kk[m].topRows(Bc);
          ts.segment(r, Bc) = trow.head(Bc) + static_cast<T>(c_(q)) * hb;
          m_flow.evaluate_rows(ts.segment(r, Bc), yq, zs.middleRows(r, Bc), hs.middleRows(r, Bc), kk[q].topRows(Bc));
          nfev += nc;
        }
        for (std::size_t q = 0; q < S; ++q)
          if (b_(q) != T(0)) yb.noalias() += (b_(q) * hb).asDiagonal() * kk[q].topRows(Bc);
      }
      (void)ncI;
      // 2. reverse through the stages, interval by interval, stacking the cotangents
      for (std::size_t c = nc; c-- > 0;) {
        for (std::size_t s = k; s-- > 0;) {
          const T hv = static_cast<T>(steps[c * k + s]);
          for (std::size_t q = S; q-- > 0;) {
            const Eigen::Index r = row(s, q, c);
            auto g = gs.middleRows(r, N);
            g = (hv * b_(q)) * lam;
            for (std::size_t m = q + 1; m < S; ++m)
              if (a_(m, q) != T(0)) g += (hv * a_(m, q)) * ybar[m];
            m_flow.pullback(g, zs.middleRows(r, N), zb.middleRows(r, N), ybar[q]);
          }
          for (std::size_t q = 0; q < S; ++q) lam += ybar[q];
        }
        upstream(j0 + c, lam);
      }
      // 3. weight gradients of the whole chunk: two matrix products
      const auto used = static_cast<Eigen::Index>(nc * rows_per_interval);
      m_flow.accumulate(gs.topRows(used), hs.topRows(used), zb.topRows(used), ys.topRows(used), ts.head(used), out.flow);
      jend = j0;
    }
    out.p0 = lam;
    if (info) *info = gradient_info{L, nfev, static_cast<std::size_t>(R)};
    return out;
  }

  template <class Upstream>
  gradients<T> adjoint_impl(std::size_t L, std::size_t substeps, Upstream&& upstream, gradient_info* info) {
    extend(L);
    m_flow.set_parameters(m_theta);
    const Eigen::Index N = m_p0.rows(), D = m_p0.cols();
    const std::size_t k = substeps == 0 ? m_opt.substeps : substeps;
    std::array<table<T>, S> ky, ka;
    for (auto& x : ky) x.resize(N, D);
    for (auto& x : ka) x.resize(N, D);
    table<T> y(N, D), a = table<T>::Zero(N, D), ys(N, D), as(N, D), jta(N, D);
    gradients<T> out{flow<T>::zero_like(m_theta), table<T>::Zero(N, D)};
    std::size_t nfev = 0;
    upstream(L - 1, a);
    for (std::size_t j = L - 1; j-- > 0;) {
      y = checkpoint(j + 1);  // restart p from the forward checkpoint (torchdiffeq does the same)
      for (std::size_t s = 0; s < k; ++s) {
        const auto [tsub, hsub] = ode::detail::substep(time(j + 1), time(j), k, s);  // backwards: hsub < 0
        const T hv = static_cast<T>(hsub);
        for (std::size_t q = 0; q < S; ++q) {
          ys = y;
          as = a;
          for (std::size_t m = 0; m < q; ++m)
            if (a_(q, m) != T(0)) {
              ys += (hv * a_(q, m)) * ky[m];
              as += (hv * a_(q, m)) * ka[m];
            }
          const double tq = tsub + c_(q) * hsub;
          m_flow(tq, ys, ky[q]);
          // dg/dt = -a^T dh/dtheta: the step adds hv * b_q * (-(dh/dtheta)^T a_q)
          m_flow.vjp(tq, ys, as, jta, out.flow, -hv * b_(q));
          ka[q] = -jta;
          nfev += 2;
        }
        for (std::size_t q = 0; q < S; ++q)
          if (b_(q) != T(0)) {
            y += (hv * b_(q)) * ky[q];
            a += (hv * b_(q)) * ka[q];
          }
      }
      upstream(j, a);
    }
    out.p0 = a;
    if (info) *info = gradient_info{L, nfev, static_cast<std::size_t>(N)};
    return out;
  }

  mlp<T> m_theta;
  table<T> m_p0;
  options m_opt;
  flow<T> m_flow;
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
  return encoder<T, Scheme>(std::move(m), table<T>::Zero(static_cast<Eigen::Index>(blocks), static_cast<Eigen::Index>(d)),
                            std::move(opt));
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
