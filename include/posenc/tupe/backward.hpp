// SPDX-License-Identifier: MIT
// TUPE, the gradients of a scalar loss with respect to every parameter of the positional term
// (and the position table): positional_bias_backward, the forward of tupe/forward.hpp recomputed.
#pragma once

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include <Eigen/Core>

#include <posenc/core/checked.hpp>
#include <posenc/core/error.hpp>
#include <posenc/core/thread_pool.hpp>
#include <posenc/tupe/relative_bucket.hpp>
#include <posenc/tensor/table.hpp>
#include <posenc/tupe/forward.hpp>

namespace posenc::tupe {

/// Gradients of L with respect to the parameters and the table `pos`, given
/// `upstream` = dL/d(bias) of shape [H, n, n] (n is read from it). The forward intermediates are
/// recomputed. Entries overwritten by the [CLS] reset route their gradient to what produced the
/// value kept: theta1/theta2 (free), p_0 / p_1 and buckets num_buckets/2, num_buckets (reference).
template <class T>
[[nodiscard]] gradients<T> positional_bias_backward(const config& cfg, const parameters<T>& p, detail::pos_ref<T> pos,
                                                    const head_stack<T>& upstream) {
  constexpr std::string_view where = "tupe::positional_bias_backward";
  const Index n = upstream.size();
  posenc::detail::require<shape_error>(upstream.heads() == cfg.heads, where, "upstream: expected ", cfg.heads,
                               " heads (config.heads), got ", upstream.heads());
  validate_parameters(cfg, p, pos, n, where);
  posenc::detail::require_finite(upstream.flat(), where, "upstream");
  // The products below run on the calling thread; in a program built with OpenMP, Eigen spreads
  // them over exactly config::threads threads (posenc/core/thread_pool.hpp: one thread budget).
  const openmp_thread_scope budget(resolve_threads(cfg.threads, where));

  const Index H = cfg.heads, dh = cfg.head_dim(), d = cfg.d;
  const Index first = cfg.first_row();
  const Index rows = cfg.rows_needed(n);
  workspace<T> ws;
  detail::layer_norm(cfg, p, pos, rows, ws);
  detail::project(cfg, p, ws);

  gradients<T> g;
  table<T> dq = table<T>::Zero(rows, d);  // dL/dq for q = s (x Wq^T + bq)
  table<T> dk = table<T>::Zero(rows, d);
  if (cfg.relative) g.relative_attention_bias = matrix<T>::Zero(cfg.buckets.num_buckets + 1, H);
  if (cfg.cls == cls_reset::free) {
    g.theta1 = vector<T>::Zero(H);
    g.theta2 = vector<T>::Zero(H);
  }
  const std::vector<int>* buckets = cfg.relative ? &detail::cached_buckets(cfg, n, ws) : nullptr;
  vector<T> diag(2 * n - 1);
  // With a reset, row 0 and column 0 are replaced: the untied product and the Toeplitz term
  // only reach the "core" entries i, j >= 1.
  const Index c0 = cfg.cls == cls_reset::off ? 0 : 1;
  const Index nc = n - c0;
  for (Index h = 0; h < H; ++h) {
    const auto G = upstream.head(h);
    const auto Gc = G.bottomRightCorner(nc, nc);
    if (nc > 0) {
      dq.block(first + c0, h * dh, nc, dh).noalias() += Gc * ws.k.block(first + c0, h * dh, nc, dh);
      dk.block(first + c0, h * dh, nc, dh).noalias() += Gc.transpose() * ws.q.block(first + c0, h * dh, nc, dh);
    }
    const T c1 = G.row(0).sum();                          // [CLS] -> others
    const T c2 = n > 1 ? G.col(0).tail(n - 1).sum() : T(0);  // others -> [CLS]
    if (cfg.cls == cls_reset::reference) {
      dq.row(0).segment(h * dh, dh) += c1 * ws.k.row(0).segment(h * dh, dh);
      dk.row(0).segment(h * dh, dh) += c1 * ws.q.row(0).segment(h * dh, dh);
      dq.row(1).segment(h * dh, dh) += c2 * ws.k.row(1).segment(h * dh, dh);
      dk.row(1).segment(h * dh, dh) += c2 * ws.q.row(1).segment(h * dh, dh);
    } else if (cfg.cls == cls_reset::free) {
      g.theta1[h] = c1;
      g.theta2[h] = c2;
    }
    if (cfg.relative) {
      diag.setZero();
      for (Index i = c0; i < n; ++i)
        for (Index j = c0; j < n; ++j) diag[j - i + n - 1] += G(i, j);
      for (Index k = 0; k < 2 * n - 1; ++k)
        g.relative_attention_bias((*buckets)[static_cast<std::size_t>(k)], h) += diag[k];
      if (cfg.cls == cls_reset::reference) {
        g.relative_attention_bias(cfg.buckets.num_buckets / 2, h) += c1;
        g.relative_attention_bias(cfg.buckets.num_buckets, h) += c2;
      }
    }
  }
  // q = s (x Wq^T + bq):  dWq = s dq^T x, dbq = s colsum(dq), dx += s dq Wq
  const T s = static_cast<T>(cfg.scaling());
  dq *= s;
  g.pos_q_weight.noalias() = dq.transpose() * ws.x;
  g.pos_k_weight.noalias() = dk.transpose() * ws.x;
  if (p.pos_q_bias.size() != 0) g.pos_q_bias = dq.colwise().sum().transpose();
  if (p.pos_k_bias.size() != 0) g.pos_k_bias = dk.colwise().sum().transpose();
  table<T> dx(rows, d);
  dx.noalias() = dq * p.pos_q_weight;
  dx.noalias() += dk * p.pos_k_weight;
  // LayerNorm: x = gamma xhat + beta, xhat = (p - mean) rstd
  g.pos_ln_bias = dx.colwise().sum().transpose();
  g.pos_ln_weight = (dx.array() * ws.xhat.array()).colwise().sum().transpose();
  g.pos.resize(rows, d);
  for (Index r = 0; r < rows; ++r) {
    const auto dxhat = (dx.row(r).array() * p.pos_ln_weight.transpose().array()).eval();
    const T m1 = dxhat.sum() / static_cast<T>(d);
    const T m2 = (dxhat * ws.xhat.row(r).array()).sum() / static_cast<T>(d);
    g.pos.row(r) = ws.rstd[r] * (dxhat - m1 - ws.xhat.row(r).array() * m2);
  }
  return g;
}

/// Gradients with the table p.pos.
template <class T>
[[nodiscard]] gradients<T> positional_bias_backward(const config& cfg, const parameters<T>& p,
                                                    const head_stack<T>& upstream) {
  return positional_bias_backward(cfg, p, p.pos, upstream);
}

}  // namespace posenc::tupe
