// SPDX-License-Identifier: MIT
// FLOATER's two gradient drivers, each reading the encoder's cached table:
//   posenc::floater::gradients<T>, gradient_info   what a gradient computation returns
//   posenc::floater::backprop_steps(...)           the exact gradient of the discrete steps:
//                                                  reverse through every stage (ode::reverse_step),
//                                                  chunk by chunk of kept or replayed stages
//   posenc::floater::continuous_adjoint(...)       the continuous adjoint (ode::adjoint), segment by
//                                                  segment from the cached states
// Both are called by posenc::floater::encoder::backprop / adjoint after their arguments are
// validated; see floater/encoder.hpp for the public contract.
#pragma once

#include <Eigen/Core>
#include <algorithm>
#include <array>
#include <cstddef>
#include <span>
#include <vector>

#include <posenc/adapters/eigen.hpp>
#include <posenc/core/backend.hpp>
#include <posenc/tensor/table.hpp>
#include <posenc/floater/flow.hpp>
#include <posenc/floater/kept_stages.hpp>
#include <posenc/floater/replay.hpp>
#include <posenc/floater/table_cache.hpp>
#include <posenc/ode/gradient.hpp>
#include <posenc/ode/grid.hpp>
#include <posenc/ode/stepper.hpp>

namespace posenc::floater {

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

namespace detail {

/// What both drivers read: the dynamics, the grid, the batch shape and the cached table of at
/// least L positions.
template <class T>
struct sweep_source {
  const mlp<T>& theta;
  flow<T>& rhs;  // bound to theta
  const ode::grid& grid;
  batch_shape shape;
  const table_cache<T>& cache;
};

/// The exact gradient of a table of L positions by backpropagation through the discrete steps.
/// upstream(i, lam) adds dL/dP at position i to lam (N x d). Chunks of intervals, from the last,
/// are either read from `keep` (intervals < keep.intervals()) or replayed by `replay` from their
/// checkpoints; each chunk's weight gradient is two matrix products (flow::accumulate).
template <class T, class Scheme, class Upstream>
gradients<T> backprop_steps(const sweep_source<T>& src, const kept_stages<T, Scheme>& keep,
                            stage_replay<T, Scheme>& replay, std::size_t L, Upstream&& upstream, gradient_info* info) {
  constexpr std::size_t S = ode::stages_v<Scheme>;
  using eigen_backend = default_backend_t<table<T>>;
  const batch_shape& b = src.shape;
  const auto N = static_cast<Eigen::Index>(b.blocks), D = static_cast<Eigen::Index>(b.dim),
             Hd = static_cast<Eigen::Index>(b.hidden);
  const std::size_t k = b.substeps, per = b.rows_per_interval(S);
  const std::size_t chunk = replay.prepare(L, b);
  const auto R = static_cast<Eigen::Index>(chunk * per);
  matrix<T> gs(R, D), zb(R, Hd);
  std::array<table<T>, S> ybar;
  for (auto& x : ybar) x.resize(N, D);
  table<T> kbar(N, D), lam = table<T>::Zero(N, D);
  constexpr auto needed = ode::needed_stages<Scheme>();

  gradients<T> out{flow<T>::zero_like(src.theta), table<T>::Zero(N, D)};
  std::size_t nfev = 0, kept = 0;
  const std::size_t kept_to = std::min(keep.intervals(), L - 1);
  src.rhs.prepare_pullback();
  upstream(L - 1, lam);
  for (std::size_t jend = L - 1; jend > 0;) {
    // a chunk is either kept (jend <= kept_to) or recomputed, never both
    const std::size_t lo = jend > kept_to ? kept_to : 0;
    const std::size_t j0 = jend - lo > chunk ? jend - chunk : lo, nc = jend - j0;
    const bool from_kept = jend <= kept_to;
    const auto base = from_kept ? static_cast<Eigen::Index>(j0 * per) : Eigen::Index{0};
    // 1. the stages of intervals j0 .. jend-1: kept by the forward, or replayed from their
    //    checkpoints all at once
    if (from_kept) {
      replay.load_kept(src.theta, src.grid, keep, j0, nc);
      kept += nc;
    } else {
      replay.recompute(src.rhs, src.grid, src.cache, j0, nc);
      nfev += nc * k * S;
    }
    const auto row = [&](std::size_t s, std::size_t q, std::size_t c) {
      return from_kept ? kept_stages<T, Scheme>::row(b, s, q, c) : replay.row(s, q, c, nc);
    };
    const matrix<T>& zsrc = from_kept ? keep.preactivations() : replay.preactivations();
    // 2. reverse through the steps (ode::reverse_step), interval by interval, stacking the
    //    stage cotangents for the weight gradient
    for (std::size_t c = nc; c-- > 0;) {
      for (std::size_t s = k; s-- > 0;) {
        for (std::size_t q = 0; q < S; ++q)
          if (!needed[q]) {  // a stage that does not reach y_new contributes nothing
            gs.middleRows(row(s, q, c), N).setZero();
            zb.middleRows(row(s, q, c), N).setZero();
          }
        ode::reverse_step<Scheme, eigen_backend>(lam, replay.step(c, s), ybar, kbar,
                                                 [&](std::size_t q, const table<T>& kb, table<T>& Yb) {
                                                   const Eigen::Index r = row(s, q, c);
                                                   gs.middleRows(r, N) = kb;
                                                   src.rhs.pullback(kb, zsrc.middleRows(base + r, N), zb.middleRows(r, N), Yb);
                                                 });
      }
      upstream(j0 + c, lam);
    }
    // 3. weight gradients of the whole chunk: two matrix products (the flow's batched VJP)
    const auto used = static_cast<Eigen::Index>(nc * per);
    const matrix<T>& ysrc = from_kept ? keep.inputs() : replay.inputs();
    src.rhs.accumulate(gs.topRows(used), replay.activations().topRows(used), zb.topRows(used),
                       ysrc.middleRows(base, used), replay.times().head(used), out.flow);
    jend = j0;
  }
  out.p0 = lam;
  if (info) *info = gradient_info{L, nfev, static_cast<std::size_t>(R), kept};
  return out;
}

/// The continuous adjoint of a table of L positions with `substeps` steps per interval:
/// ode::adjoint from the cached table, p restarting from p(t_i) at every segment (as torchdiffeq's
/// odeint_adjoint). upstream(i, a) adds dL/dP at position i to a.
template <class T, class Scheme, class Upstream>
gradients<T> continuous_adjoint(const sweep_source<T>& src, std::size_t L, std::size_t substeps, Upstream&& upstream,
                                gradient_info* info) {
  std::vector<double> times(L);
  for (std::size_t i = 0; i < L; ++i) times[i] = src.grid.time(i);
  const auto N = static_cast<Eigen::Index>(src.shape.blocks);
  gradients<T> out{flow<T>::zero_like(src.theta), table<T>()};
  const ode::gradient_stats st = ode::adjoint(
      Scheme{}, src.rhs, std::span<const double>(times), ode::fixed_steps{substeps},
      [&](std::size_t i, table<T>& y) { y = src.cache.checkpoint(i, N); },
      [&](std::size_t i, table<T>& a) { upstream(i, a); }, out.p0, out.flow);
  if (info) *info = gradient_info{L, st.rhs_evaluations + st.vjp_evaluations, src.shape.blocks};
  return out;
}

}  // namespace detail

}  // namespace posenc::floater
