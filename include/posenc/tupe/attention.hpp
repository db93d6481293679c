// SPDX-License-Identifier: MIT
// One TUPE self-attention layer from C++: word logits s (x W^Q)(x W^K)^T plus the shared
// positional term, a numerically stable softmax with an optional key-padding mask, the value
// projection and the output projection, with the semantics of the reference code's
// `multi_head_attention_forward` (fairseq fork in guolinke/TUPE; dropout is not applied: this is
// the evaluation-mode forward).
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <random>
#include <span>
#include <string_view>
#include <vector>

#include <Eigen/Core>

#include <posenc/core/error.hpp>
#include <posenc/tensor/table.hpp>
#include <posenc/tupe/tupe.hpp>

namespace posenc::tupe {

/// Word-attention weights of one layer, named and shaped as fairseq's MultiheadAttention:
/// in_proj_weight [3d, d] (rows: queries, keys, values), in_proj_bias [3d] (or empty),
/// out_proj_weight [d, d] ([out, in]), out_proj_bias [d] (or empty).
template <class T>
struct attention_parameters {
  matrix<T> in_proj_weight;
  vector<T> in_proj_bias;
  matrix<T> out_proj_weight;
  vector<T> out_proj_bias;
};

/// BERT initialisation (N(0, 0.02) weights, zero biases) for width d.
template <class T>
[[nodiscard]] attention_parameters<T> make_attention_parameters(Index d, std::uint64_t seed = 1) {
  constexpr std::string_view where = "tupe::make_attention_parameters";
  posenc::detail::require(d >= 1, where, "d: expected >= 1, got ", d);
  const auto D = static_cast<std::size_t>(checked::extent(d, where, "d"));
  std::mt19937_64 gen(seed);
  std::normal_distribution<double> normal(0.0, 0.02);
  attention_parameters<T> w;
  w.in_proj_weight = posenc::detail::allocate_matrix<matrix<T>>(3 * D, D, where, "3 d", "d");
  for (Index i = 0; i < w.in_proj_weight.size(); ++i) w.in_proj_weight.data()[i] = static_cast<T>(normal(gen));
  w.in_proj_bias = vector<T>::Zero(3 * d);
  w.out_proj_weight.resize(d, d);
  for (Index i = 0; i < w.out_proj_weight.size(); ++i) w.out_proj_weight.data()[i] = static_cast<T>(normal(gen));
  w.out_proj_bias = vector<T>::Zero(d);
  return w;
}

namespace detail {
template <class T>
void check_logit_inputs(const config& cfg, mat_ref<T> q, mat_ref<T> k, const head_stack<T>& bias, std::string_view where) {
  validate(cfg, where);
  const Index n = bias.size();
  posenc::detail::require<shape_error>(bias.heads() == cfg.heads, where, "bias: expected ", cfg.heads,
                               " heads (config.heads), got ", bias.heads());
  posenc::detail::require_shape(q, n, cfg.d, where, "q (sequence length of the bias x d)");
  posenc::detail::require_shape(k, n, cfg.d, where, "k (sequence length of the bias x d)");
}

/// attention_logits after its checks (attention_forward checks its own inputs once).
template <class T>
void attention_logits_unchecked(const config& cfg, mat_ref<T> q, mat_ref<T> k, const head_stack<T>& bias,
                                head_stack<T>& logits) {
  const Index n = bias.size();
  const Index dh = cfg.head_dim();
  const T s = static_cast<T>(cfg.scaling());
  logits.resize(cfg.heads, n);
  if (n == 0) return;  // no words: no column block of the empty q and k to form
  logits.flat() = bias.flat();
  for (Index h = 0; h < cfg.heads; ++h)
    logits.head(h).noalias() += (s * q.middleCols(h * dh, dh)) * k.middleCols(h * dh, dh).transpose();
}
}  // namespace detail

/// logits_h = (q_h)(k_h)^T s + bias_h for every head, where q = x W^Q + b^Q and k = x W^K + b^K
/// are the projected words ([n, d], head h = columns [h d/H, (h+1) d/H)) and s = cfg.scaling()
/// (the reference scales the queries: `q = q * scaling`). `logits` is resized to [H, n, n]. The
/// bias is copied in first and the per-head GEMM accumulates onto it.
/// q, k and bias must be finite (non_finite_error naming them: a NaN gave NaN logits silently).
template <class T>
void attention_logits(const config& cfg, detail::mat_ref<T> q, detail::mat_ref<T> k,
                      const head_stack<T>& bias, head_stack<T>& logits) {
  constexpr std::string_view where = "tupe::attention_logits";
  detail::check_logit_inputs<T>(cfg, q, k, bias, where);
  posenc::detail::require_finite(q, where, "q");
  posenc::detail::require_finite(k, where, "k");
  posenc::detail::require_finite(bias.flat(), where, "bias");
  detail::attention_logits_unchecked<T>(cfg, q, k, bias, logits);
}

/// Row-wise softmax of every head in place. `key_padding_mask` (size n, or empty for none):
/// true marks a padded key, whose weight is exactly 0 in every row (the reference fills it with
/// -inf). Each row subtracts its maximum over the unmasked keys before exponentiating, so no
/// overflow for any finite logits. A row whose keys are all masked becomes all zeros (the
/// reference's softmax of an all -inf row gives NaN); its attention output is then the output
/// bias alone. Throws non_finite_error if an unmasked logit is NaN or +inf.
template <class T>
void masked_softmax(head_stack<T>& logits, std::span<const bool> key_padding_mask = {}) {
  constexpr std::string_view where = "tupe::masked_softmax";
  const Index n = logits.size();
  const bool masked = !key_padding_mask.empty();
  posenc::detail::require<shape_error>(!masked || static_cast<Index>(key_padding_mask.size()) == n, where,
                               "key_padding_mask: expected size ", n, " (or empty), got ", key_padding_mask.size());
  for (Index h = 0; h < logits.heads(); ++h) {
    auto L = logits.head(h);
    for (Index i = 0; i < n; ++i) {
      auto row = L.row(i);
      T m = -std::numeric_limits<T>::infinity();
      bool any = false;
      for (Index j = 0; j < n; ++j) {
        if (masked && key_padding_mask[static_cast<std::size_t>(j)]) continue;
        const T v = row[j];
        posenc::detail::require<non_finite_error>(!std::isnan(v) && v != std::numeric_limits<T>::infinity(), where,
                                          "logit (head ", h, ", row ", i, ", key ", j, ") is ", v);
        any = true;
        if (v > m) m = v;
      }
      if (!any || m == -std::numeric_limits<T>::infinity()) {  // nothing to attend to
        row.setZero();
        continue;
      }
      T sum = 0;
      for (Index j = 0; j < n; ++j) {
        const T e = (masked && key_padding_mask[static_cast<std::size_t>(j)]) ? T(0) : std::exp(row[j] - m);
        row[j] = e;
        sum += e;
      }
      row /= sum;  // sum >= 1: the maximum contributes exp(0)
    }
  }
}

/// Convenience overload for std::vector<bool> masks.
template <class T>
void masked_softmax(head_stack<T>& logits, const std::vector<bool>& key_padding_mask) {
  const std::unique_ptr<bool[]> buf(new bool[key_padding_mask.size()]);
  for (std::size_t i = 0; i < key_padding_mask.size(); ++i) buf[i] = key_padding_mask[i];
  masked_softmax(logits, std::span<const bool>(buf.get(), key_padding_mask.size()));
}

/// One TUPE self-attention layer for one sequence x [n, d] (evaluation mode):
///   q, k, v = x in_proj_weight^T + in_proj_bias (split in three)
///   A_h = softmax_masked(s q_h k_h^T + bias_h)          (bias: the shared positional term)
///   out = concat_h(A_h v_h) out_proj_weight^T + out_proj_bias
/// Returns out [n, d]; when `probabilities` is given, it receives A [H, n, n].
template <class T>
[[nodiscard]] matrix<T> attention_forward(const config& cfg, const attention_parameters<T>& w,
                                          detail::mat_ref<T> x, const head_stack<T>& bias,
                                          std::span<const bool> key_padding_mask = {},
                                          head_stack<T>* probabilities = nullptr) {
  constexpr std::string_view where = "tupe::attention_forward";
  validate(cfg, where);
  const Index d = cfg.d, n = x.rows(), dh = cfg.head_dim();
  posenc::detail::require_shape(x, bias.size(), d, where, "x (sequence length of the bias x d)");
  posenc::detail::require_shape(w.in_proj_weight, 3 * d, d, where, "in_proj_weight");
  posenc::detail::require_shape(w.out_proj_weight, d, d, where, "out_proj_weight");
  posenc::detail::require<shape_error>(w.in_proj_bias.size() == 0 || w.in_proj_bias.size() == 3 * d, where,
                               "in_proj_bias: expected size ", 3 * d, " or 0, got ", w.in_proj_bias.size());
  posenc::detail::require<shape_error>(w.out_proj_bias.size() == 0 || w.out_proj_bias.size() == d, where,
                               "out_proj_bias: expected size ", d, " or 0, got ", w.out_proj_bias.size());
  posenc::detail::require_finite(x, where, "x");
  posenc::detail::require_finite(w.in_proj_weight, where, "in_proj_weight");
  posenc::detail::require_finite(w.out_proj_weight, where, "out_proj_weight");
  posenc::detail::require_finite(w.in_proj_bias, where, "in_proj_bias");
  posenc::detail::require_finite(w.out_proj_bias, where, "out_proj_bias");
  posenc::detail::require_finite(bias.flat(), where, "bias");
  if (n == 0) {  // an empty sequence: nothing to attend (and no column block of an empty matrix to form)
    if (probabilities) *probabilities = head_stack<T>(cfg.heads, 0);
    return matrix<T>(0, d);
  }

  matrix<T> qkv(n, 3 * d);
  if (w.in_proj_bias.size() != 0)
    qkv.rowwise() = w.in_proj_bias.transpose();
  else
    qkv.setZero();
  qkv.noalias() += x * w.in_proj_weight.transpose();

  head_stack<T> local;
  head_stack<T>& A = probabilities ? *probabilities : local;
  // qkv is finite for finite x and weights up to overflow, which masked_softmax reports
  detail::check_logit_inputs<T>(cfg, qkv.leftCols(d), qkv.middleCols(d, d), bias, where);
  detail::attention_logits_unchecked<T>(cfg, qkv.leftCols(d), qkv.middleCols(d, d), bias, A);
  masked_softmax(A, key_padding_mask);

  matrix<T> ctx(n, d);
  for (Index h = 0; h < cfg.heads; ++h)
    ctx.middleCols(h * dh, dh).noalias() = A.head(h) * qkv.middleCols(2 * d + h * dh, dh);
  matrix<T> out(n, d);
  if (w.out_proj_bias.size() != 0)
    out.rowwise() = w.out_proj_bias.transpose();
  else
    out.setZero();
  out.noalias() += ctx * w.out_proj_weight.transpose();
  return out;
}

}  // namespace posenc::tupe
