// SPDX-License-Identifier: MIT
// TUPE (Ke, He & Liu, ICLR 2021), the forward positional term: the untied positional correlation
//   v_h = s (LN(P) U_h^Q + c_h^Q)(LN(P) U_h^K + c_h^K)^T  (+ b_{j-i} for TUPE-R)
// with the [CLS] reset, computed with the semantics of the reference code (guolinke/TUPE,
// TransformerSentenceEncoder): LayerNorm with affine on P, nn.Linear projections with bias,
// per-head scale 1/sqrt(2 d/H) applied to the queries, one extra position row whose (0,0)
// correlation resets the [CLS] row, T5 buckets with the extra buckets num_buckets/2 and
// num_buckets for the [CLS] row and column. The configuration, the parameters and
// positional_bias; the gradients are in tupe/backward.hpp, the per-length cache in tupe/cache.hpp.
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

namespace posenc::tupe {

using Eigen::Index;

namespace detail {
/// Non-deduced reference parameters: T is deduced from the other arguments, and any Eigen
/// expression with matching scalar binds (row-major tables without a copy).
template <class T>
using pos_ref = std::type_identity_t<Eigen::Ref<const table<T>>>;
template <class T>
using mat_ref = std::type_identity_t<Eigen::Ref<const matrix<T>>>;
template <class T>
using vec_ref = std::type_identity_t<Eigen::Ref<const vector<T>>>;
}  // namespace detail

/// Scale s of the positional (and word) correlation.
enum class scale_convention {
  reference,  ///< 1/sqrt(2 d/H) per head: the released code (`pos_scaling`, `attn_scale_factor = 2`)
  paper,      ///< 1/sqrt(2 d): eq. (7) of the paper, written for a single head
};

/// What happens to the [CLS] row 0 and column 0 of the positional term (paper eq. 9).
enum class cls_reset {
  reference,  ///< the released code: theta1 = v(p_0, p_0), theta2 = v(p_1, p_1) from an extra
              ///< position row; token i uses row i + 1; relative buckets num_buckets/2 (row 0)
              ///< and num_buckets (column 0) are added on top.
  free,       ///< the paper's eq. (9): row 0 = theta1[h], column 0 (i > 0) = theta2[h], free
              ///< per-head scalars replacing the whole term (absolute + relative).
  off,        ///< no reset (TUPE-A^{tie-cls}); token i uses position row i.
};

/// Hyper-parameters of the positional term. Defaults: BERT-base TUPE-R as released.
/// Thread safety: shareable const (a value type; docs/thread-safety.md).
struct config {
  Index d = 768;                                          ///< model width (P has d columns)
  Index heads = 12;                                       ///< H; d must be divisible by H
  scale_convention scale = scale_convention::reference;   ///< s = 1/sqrt(2 d/H) or 1/sqrt(2 d)
  double ln_eps = 1e-5;                                   ///< LayerNorm epsilon (torch default)
  bool relative = true;                                   ///< TUPE-R (true) or TUPE-A (false)
  bucket_spec buckets{};                                  ///< T5 buckets (TUPE-R only)
  cls_reset cls = cls_reset::reference;                   ///< [CLS] handling
  /// Threads of the forward pass (LayerNorm rows, projection columns, head tiles): 0 = all
  /// hardware threads, n >= 1 = n (posenc/core/thread_pool.hpp). Default 1: no thread started.
  /// With an OpenMP-enabled Eigen (or EIGEN_USE_BLAS with a threaded BLAS) keep 1 and let the
  /// products thread themselves, or limit those to one thread: both at once oversubscribe.
  std::size_t threads = 1;

  [[nodiscard]] Index head_dim() const noexcept { return heads > 0 ? d / heads : 0; }
  /// The scale s of the convention chosen.
  [[nodiscard]] double scaling() const noexcept {
    return scale == scale_convention::reference ? 1.0 / std::sqrt(2.0 * static_cast<double>(d / heads))
                                                : 1.0 / std::sqrt(2.0 * static_cast<double>(d));
  }
  /// Position row used by token 0 (1 with the reference [CLS] reset, else 0).
  [[nodiscard]] Index first_row() const noexcept { return cls == cls_reset::reference ? 1 : 0; }
  /// Number of position rows a length-n sequence reads (n + 1 with the reference reset).
  [[nodiscard]] Index rows_needed(Index n) const noexcept { return n + first_row(); }
};

/// Throws posenc::invalid_argument unless cfg is usable (d, H > 0, d % H == 0, eps > 0 finite,
/// bucket spec valid when relative).
inline void validate(const config& cfg, std::string_view where) {
  posenc::detail::require(cfg.d >= 1, where, "config.d: expected >= 1, got ", cfg.d);
  posenc::detail::require(cfg.heads >= 1, where, "config.heads: expected >= 1, got ", cfg.heads);
  (void)checked::elements(static_cast<std::size_t>(checked::extent(cfg.d, where, "config.d")),
                          static_cast<std::size_t>(cfg.d), where, "config.d * config.d (the projection weights)");
  (void)checked::extent(cfg.heads, where, "config.heads");
  posenc::detail::require(cfg.d % cfg.heads == 0, where, "config.d: expected a multiple of config.heads = ", cfg.heads,
                  ", got d = ", cfg.d);
  posenc::detail::require(std::isfinite(cfg.ln_eps) && cfg.ln_eps > 0, where,
                  "config.ln_eps: expected a finite value > 0, got ", cfg.ln_eps);
  if (cfg.relative) validate(cfg.buckets, where);
  posenc::detail::require(cfg.threads <= max_threads, where, "config.threads: expected 0 (all hardware threads) .. ",
                          max_threads, ", got ", cfg.threads);
}

/// Learnable parameters, named and shaped as the reference module stores them
/// (`TransformerSentenceEncoder`): nn.Linear weights are [out, in]; nn.Embedding is [rows, dim].
/// Thread safety: shareable const (a value type; docs/thread-safety.md).
template <class T>
struct parameters {
  table<T> pos;                      ///< `pos.weight`: [max_len + 1, d] (reference reset) or [max_len, d]
  vector<T> pos_ln_weight;           ///< `pos_ln.weight` (gamma): [d]
  vector<T> pos_ln_bias;             ///< `pos_ln.bias` (beta): [d]
  matrix<T> pos_q_weight;            ///< `pos_q_linear.weight` (U^Q transposed): [d, d]
  vector<T> pos_q_bias;              ///< `pos_q_linear.bias`: [d], or empty for no bias
  matrix<T> pos_k_weight;            ///< `pos_k_linear.weight` (U^K transposed): [d, d]
  vector<T> pos_k_bias;              ///< `pos_k_linear.bias`: [d], or empty for no bias
  matrix<T> relative_attention_bias; ///< `relative_attention_bias.weight`: [num_buckets + 1, H] (TUPE-R)
  vector<T> theta1;                  ///< [H]: cls_reset::free only ([CLS] -> others)
  vector<T> theta2;                  ///< [H]: cls_reset::free only (others -> [CLS])
};

/// Gradients of a scalar loss with respect to parameters<T>, same names. `pos` has the rows the
/// sequence read (config::rows_needed(n)); rows past them have zero gradient. Empty members
/// correspond to parameters that are absent or unused by the configuration.
template <class T>
struct gradients {
  table<T> pos;
  vector<T> pos_ln_weight, pos_ln_bias;
  matrix<T> pos_q_weight;
  vector<T> pos_q_bias;
  matrix<T> pos_k_weight;
  vector<T> pos_k_bias;
  matrix<T> relative_attention_bias;
  vector<T> theta1, theta2;
};

/// Parameters initialised as the reference does (`init_bert_params`): embeddings and linear
/// weights N(0, 0.02), linear biases 0, LayerNorm gamma 1 and beta 0, theta 0. `max_len` is the
/// longest sequence; pos gets config::rows_needed(max_len) rows.
template <class T>
[[nodiscard]] parameters<T> make_parameters(const config& cfg, Index max_len, std::uint64_t seed = 0) {
  constexpr std::string_view where = "tupe::make_parameters";
  validate(cfg, where);
  posenc::detail::require(max_len >= 1, where, "max_len: expected >= 1, got ", max_len);
  (void)checked::extent(max_len, where, "max_len");  // so rows_needed(max_len) cannot overflow
  std::mt19937_64 gen(seed);
  std::normal_distribution<double> normal(0.0, 0.02);
  auto fill = [&](auto& m) {
    for (Index i = 0; i < m.size(); ++i) m.data()[i] = static_cast<T>(normal(gen));
  };
  parameters<T> p;
  p.pos = posenc::detail::allocate_table<T>(static_cast<std::size_t>(cfg.rows_needed(max_len)),
                                           static_cast<std::size_t>(cfg.d), where, "max_len rows", "config.d");
  fill(p.pos);
  p.pos_ln_weight = vector<T>::Ones(cfg.d);
  p.pos_ln_bias = vector<T>::Zero(cfg.d);
  p.pos_q_weight.resize(cfg.d, cfg.d);
  fill(p.pos_q_weight);
  p.pos_q_bias = vector<T>::Zero(cfg.d);
  p.pos_k_weight.resize(cfg.d, cfg.d);
  fill(p.pos_k_weight);
  p.pos_k_bias = vector<T>::Zero(cfg.d);
  if (cfg.relative) {
    p.relative_attention_bias.resize(cfg.buckets.num_buckets + 1, cfg.heads);
    fill(p.relative_attention_bias);
  }
  if (cfg.cls == cls_reset::free) {
    p.theta1 = vector<T>::Zero(cfg.heads);
    p.theta2 = vector<T>::Zero(cfg.heads);
  }
  return p;
}

/// Splits the fused projection of another revision of the reference code
/// (`pos_proj = nn.Linear(d, 2d)`, outputs reshaped to (2, H, d/H): the first d outputs are the
/// queries, the last d the keys) into pos_q_* and pos_k_* of `p`. `bias` may be empty. A weight
/// of another shape than [2d, d] with d >= 1 throws shape_error, a NaN/Inf entry non_finite_error.
template <class T>
void set_fused_projection(parameters<T>& p, detail::mat_ref<T> weight,
                          detail::vec_ref<T> bias) {
  constexpr std::string_view where = "tupe::set_fused_projection";
  posenc::detail::require<shape_error>(weight.rows() % 2 == 0 && weight.rows() == 2 * weight.cols(), where,
                               "weight: expected shape [2d, d], got [", weight.rows(), ", ", weight.cols(), "]");
  const Index d = weight.cols();
  // an empty weight passed (d = 0 parameters) and NaN/Inf were copied into p silently
  posenc::detail::require<shape_error>(d >= 1, where, "weight: expected d >= 1 columns, got shape [", weight.rows(), ", ",
                                       weight.cols(), "]");
  posenc::detail::require<shape_error>(bias.size() == 0 || bias.size() == 2 * d, where, "bias: expected size 0 or ", 2 * d,
                               ", got ", bias.size());
  posenc::detail::require_finite(weight, where, "weight");
  posenc::detail::require_finite(bias, where, "bias");
  p.pos_q_weight = weight.topRows(d);
  p.pos_k_weight = weight.bottomRows(d);
  if (bias.size() == 0) {
    p.pos_q_bias.resize(0);
    p.pos_k_bias.resize(0);
  } else {
    p.pos_q_bias = bias.head(d);
    p.pos_k_bias = bias.tail(d);
  }
}

// ---------------------------------------------------------------------------------------------
/// H stacked row-major n x n matrices in one contiguous buffer: element (h, i, j) is at
/// h n^2 + i n + j, exactly the memory of a contiguous PyTorch tensor of shape [H, n, n]. One
/// allocation, heads viewed in place as Eigen maps (no copies), and data() can be handed to other
/// code as is.
/// Thread safety: shareable const (a value type; docs/thread-safety.md).
template <class T>
class head_stack {
 public:
  using map_type = Eigen::Map<matrix<T>>;
  using const_map_type = Eigen::Map<const matrix<T>>;

  head_stack() = default;
  head_stack(Index heads, Index n) { resize(heads, n); }

  /// Reshapes to [heads, n, n]; keeps the allocation when the total size is unchanged. Contents
  /// are unspecified afterwards.
  void resize(Index heads, Index n) {
    constexpr std::string_view where = "tupe::head_stack::resize";
    posenc::detail::require(heads >= 0 && n >= 0, where, "expected heads, n >= 0, got heads = ", heads, ", n = ", n);
    const auto H = static_cast<std::size_t>(checked::extent(heads, where, "heads")),
               N = static_cast<std::size_t>(checked::extent(n, where, "n"));
    const auto total = static_cast<Index>(checked::elements(checked::mul(H, N, where, "heads * n * n"), N, where, "heads * n * n"));
    if (m_data.size() != total)
      checked::allocate(where, "heads * n * n", static_cast<std::size_t>(total), sizeof(T), [&] { m_data.resize(total); });
    m_heads = heads;
    m_n = n;
  }
  [[nodiscard]] Index heads() const noexcept { return m_heads; }
  /// The sequence length n.
  [[nodiscard]] Index size() const noexcept { return m_n; }
  [[nodiscard]] map_type head(Index h) noexcept { return map_type(m_data.data() + h * m_n * m_n, m_n, m_n); }
  [[nodiscard]] const_map_type head(Index h) const noexcept {
    return const_map_type(m_data.data() + h * m_n * m_n, m_n, m_n);
  }
  [[nodiscard]] T& operator()(Index h, Index i, Index j) noexcept { return m_data[(h * m_n + i) * m_n + j]; }
  [[nodiscard]] T operator()(Index h, Index i, Index j) const noexcept { return m_data[(h * m_n + i) * m_n + j]; }
  [[nodiscard]] T* data() noexcept { return m_data.data(); }
  [[nodiscard]] const T* data() const noexcept { return m_data.data(); }
  /// All H n^2 values as one vector (e.g. for norms or setZero()).
  [[nodiscard]] Eigen::Map<vector<T>> flat() noexcept { return Eigen::Map<vector<T>>(m_data.data(), m_data.size()); }
  [[nodiscard]] Eigen::Map<const vector<T>> flat() const noexcept {
    return Eigen::Map<const vector<T>>(m_data.data(), m_data.size());
  }

 private:
  Index m_heads = 0;
  Index m_n = 0;
  vector<T> m_data;  // Eigen storage: aligned for vectorised fills
};

/// Scratch buffers of the forward and backward passes; reuse one to avoid allocating per call.
/// Thread safety: one per thread (docs/thread-safety.md).
template <class T>
struct workspace {
  table<T> xhat;  ///< (P - mean) * rstd, rows_needed(n) x d
  table<T> x;     ///< LN(P) = gamma * xhat + beta
  table<T> q;     ///< s (x W_q^T + b_q)
  table<T> k;     ///< x W_k^T + b_k
  vector<T> rstd; ///< 1 / sqrt(var + eps) per row
  std::vector<int> buckets;
  bucket_spec buckets_spec{};
  Index buckets_n = -1;
  table<T> toeplitz;  ///< H x (2n - 1): the relative values of every head, row h = head h
  Index tile_rows = 0; ///< rows per head tile of the forward pass; 0 = automatic (about 512 KiB)
  pool_handle pool;   ///< config::threads - 1 workers plus the caller (resized when threads changes)
};

/// Checks shapes and finiteness of everything `cfg` reads for a length-n sequence: cfg itself
/// (validate(cfg)), the rows of the position table `pos` that it uses, and the parameters `p`.
/// Throws posenc::shape_error / non_finite_error / invalid_argument naming the argument; every
/// message starts with `where`. The host and device positional_bias call it once at entry.
template <class T>
void validate_parameters(const config& cfg, const parameters<T>& p, detail::pos_ref<T> pos, Index n,
                         std::string_view where) {
  validate(cfg, where);
  posenc::detail::require<shape_error>(pos.cols() == cfg.d, where, "position table: expected ", cfg.d,
                               " columns (config.d), got ", pos.cols());
  posenc::detail::require(n >= 1, where, "n: expected a sequence length >= 1, got ", n);
  (void)checked::extent(n, where, "n");  // so rows_needed(n), 2n - 1 and H n^2 cannot overflow
  (void)checked::elements(checked::mul(static_cast<std::size_t>(cfg.heads), static_cast<std::size_t>(n), where,
                                       "config.heads * n * n"),
                          static_cast<std::size_t>(n), where, "config.heads * n * n");
  posenc::detail::require<shape_error>(cfg.rows_needed(n) <= pos.rows(), where, "n = ", n, ": the position table has ",
                                       pos.rows(), " rows but the sequence needs ", cfg.rows_needed(n),
                                       cfg.cls == cls_reset::reference ? " (n + 1: reference [CLS] reset)" : " (n)");
  posenc::detail::require_finite(pos.topRows(cfg.rows_needed(n)), where, "position table");
  posenc::detail::require_shape(p.pos_ln_weight, cfg.d, 1, where, "pos_ln_weight");
  posenc::detail::require_shape(p.pos_ln_bias, cfg.d, 1, where, "pos_ln_bias");
  posenc::detail::require_shape(p.pos_q_weight, cfg.d, cfg.d, where, "pos_q_weight");
  posenc::detail::require_shape(p.pos_k_weight, cfg.d, cfg.d, where, "pos_k_weight");
  posenc::detail::require<shape_error>(p.pos_q_bias.size() == 0 || p.pos_q_bias.size() == cfg.d, where,
                               "pos_q_bias: expected size ", cfg.d, " or 0 (no bias), got ", p.pos_q_bias.size());
  posenc::detail::require<shape_error>(p.pos_k_bias.size() == 0 || p.pos_k_bias.size() == cfg.d, where,
                               "pos_k_bias: expected size ", cfg.d, " or 0 (no bias), got ", p.pos_k_bias.size());
  posenc::detail::require_finite(p.pos_ln_weight, where, "pos_ln_weight");
  posenc::detail::require_finite(p.pos_ln_bias, where, "pos_ln_bias");
  posenc::detail::require_finite(p.pos_q_weight, where, "pos_q_weight");
  posenc::detail::require_finite(p.pos_k_weight, where, "pos_k_weight");
  posenc::detail::require_finite(p.pos_q_bias, where, "pos_q_bias");
  posenc::detail::require_finite(p.pos_k_bias, where, "pos_k_bias");
  if (cfg.relative) {
    posenc::detail::require_shape(p.relative_attention_bias, cfg.buckets.num_buckets + 1, cfg.heads, where,
                  "relative_attention_bias (num_buckets + 1, heads)");
    posenc::detail::require_finite(p.relative_attention_bias, where, "relative_attention_bias");
  }
  if (cfg.cls == cls_reset::free) {
    posenc::detail::require_shape(p.theta1, cfg.heads, 1, where, "theta1 (cls_reset::free)");
    posenc::detail::require_shape(p.theta2, cfg.heads, 1, where, "theta2 (cls_reset::free)");
    posenc::detail::require_finite(p.theta1, where, "theta1");
    posenc::detail::require_finite(p.theta2, where, "theta2");
  }
}

namespace detail {

/// LayerNorm of rows [r0, r1) of pos into ws.x (and ws.xhat, ws.rstd when keep_xhat; the
/// forward pass needs only x). ws.x (ws.xhat, ws.rstd) already have their size. Biased variance,
/// eps inside the square root, as torch.nn.LayerNorm; two passes per row for accuracy.
template <class T>
void layer_norm_rows(const config& cfg, const parameters<T>& p, detail::pos_ref<T> pos, Index r0, Index r1,
                     workspace<T>& ws, bool keep_xhat) {
  const Index d = cfg.d;
  const T eps = static_cast<T>(cfg.ln_eps);
  for (Index r = r0; r < r1; ++r) {
    const auto row = pos.row(r);
    const T mean = row.sum() / static_cast<T>(d);
    const T var = (row.array() - mean).square().sum() / static_cast<T>(d);
    const T rstd = T(1) / std::sqrt(var + eps);
    if (keep_xhat) {
      ws.rstd[r] = rstd;
      ws.xhat.row(r) = (row.array() - mean) * rstd;
      ws.x.row(r) = ws.xhat.row(r).array() * p.pos_ln_weight.transpose().array() + p.pos_ln_bias.transpose().array();
    } else {
      ws.x.row(r) =
          ((row.array() - mean) * rstd) * p.pos_ln_weight.transpose().array() + p.pos_ln_bias.transpose().array();
    }
  }
}

/// LayerNorm of the first `rows` rows of pos into ws.xhat, ws.x, ws.rstd (the backward pass).
template <class T>
void layer_norm(const config& cfg, const parameters<T>& p, detail::pos_ref<T> pos, Index rows,
                workspace<T>& ws) {
  ws.xhat.resize(rows, cfg.d);
  ws.x.resize(rows, cfg.d);
  ws.rstd.resize(rows);
  layer_norm_rows(cfg, p, pos, 0, rows, ws, true);
}

/// Columns [c0, c1) of ws.q = s (x W_q^T + b_q) and ws.k = x W_k^T + b_k (q, k already sized).
/// The bias is written first and the GEMM accumulates onto it, the scale s is the GEMM's alpha
/// (Eigen extracts the scalar factor of `(s * x)`): no extra pass over memory.
template <class T>
void project_cols(const config& cfg, const parameters<T>& p, Index c0, Index c1, workspace<T>& ws) {
  const T s = static_cast<T>(cfg.scaling());
  const Index w = c1 - c0;
  auto q = ws.q.middleCols(c0, w);
  auto k = ws.k.middleCols(c0, w);
  if (p.pos_q_bias.size() != 0)
    q.rowwise() = (s * p.pos_q_bias.segment(c0, w)).transpose();
  else
    q.setZero();
  if (p.pos_k_bias.size() != 0)
    k.rowwise() = p.pos_k_bias.segment(c0, w).transpose();
  else
    k.setZero();
  q.noalias() += (s * ws.x) * p.pos_q_weight.middleRows(c0, w).transpose();
  k.noalias() += ws.x * p.pos_k_weight.middleRows(c0, w).transpose();
}

/// ws.q = s (x W_q^T + b_q), ws.k = x W_k^T + b_k for every row of ws.x (the backward pass).
template <class T>
void project(const config& cfg, const parameters<T>& p, workspace<T>& ws) {
  ws.q.resize(ws.x.rows(), cfg.d);
  ws.k.resize(ws.x.rows(), cfg.d);
  project_cols(cfg, p, 0, cfg.d, ws);
}

template <class T>
const std::vector<int>& cached_buckets(const config& cfg, Index n, workspace<T>& ws) {
  if (ws.buckets_n != n || ws.buckets_spec.num_buckets != cfg.buckets.num_buckets ||
      ws.buckets_spec.max_distance != cfg.buckets.max_distance ||
      ws.buckets_spec.bidirectional != cfg.buckets.bidirectional) {
    ws.buckets.resize(static_cast<std::size_t>(2 * n - 1));
    for (Index k = 0; k < 2 * n - 1; ++k)
      ws.buckets[static_cast<std::size_t>(k)] = detail::bucket_unchecked(static_cast<std::int64_t>(k - (n - 1)), cfg.buckets);
    ws.buckets_n = n;
    ws.buckets_spec = cfg.buckets;
  }
  return ws.buckets;
}

/// Rows per tile of one head's n x n output in the forward pass: a tile of about 512 KiB (half
/// a 1 MiB L2; whole heads up to that size), so the relative term written first is still in
/// cache when the product accumulates onto it, and the [CLS] column is reset in the same pass.
/// At least 32 rows, so the product's packing of K_h (n x d_h, repeated per tile) stays a small
/// part of the tile's 2 r n d_h flops.
template <class T>
[[nodiscard]] Index head_tile_rows(Index n, Index requested) noexcept {
  if (requested > 0) return std::min(requested, n);
  constexpr Index tile_bytes = Index(1) << 19;
  const Index r = tile_bytes / (n * static_cast<Index>(sizeof(T)));
  return std::min(n, std::max<Index>(32, r));
}

/// The forward pass for validated inputs. Three passes, each spread over config::threads
/// threads: LayerNorm (rows), both projections (output columns), then the heads in row tiles
/// taken dynamically (a descheduled thread never holds the others up): per tile the Toeplitz
/// relative rows are written, the product Q_h K_h^T accumulates onto them while they are in
/// cache, and the [CLS] column and row are reset, so every output entry is written once from
/// memory's point of view.
template <class T>
void compute_bias(const config& cfg, const parameters<T>& p, detail::pos_ref<T> pos, Index n,
                  head_stack<T>& out, workspace<T>& ws) {
  const Index H = cfg.heads;
  const Index dh = cfg.head_dim();
  const Index d = cfg.d;
  const Index first = cfg.first_row();
  const Index rows = cfg.rows_needed(n);
  const std::size_t threads = resolve_threads(cfg.threads, "tupe::positional_bias");
  if (ws.pool.size() != threads) ws.pool.reset(threads);
  ws.x.resize(rows, d);
  ws.q.resize(rows, d);
  ws.k.resize(rows, d);
  out.resize(H, n);

  auto ln_job = [&](std::size_t part, std::size_t parts) {
    const auto [b, e] = split_range(rows, part, parts, 1);
    layer_norm_rows(cfg, p, pos, b, e, ws, false);
  };
  ws.pool.run(ln_job);
  auto proj_job = [&](std::size_t part, std::size_t parts) {
    const auto [b, e] = split_range(d, part, parts);
    if (e > b) project_cols(cfg, p, b, e, ws);
  };
  ws.pool.run(proj_job);

  if (cfg.relative) {
    const std::vector<int>& buckets = cached_buckets(cfg, n, ws);
    ws.toeplitz.resize(H, 2 * n - 1);
    for (Index h = 0; h < H; ++h)
      for (Index k = 0; k < 2 * n - 1; ++k)
        ws.toeplitz(h, k) = p.relative_attention_bias(buckets[static_cast<std::size_t>(k)], h);
  }
  const Index R = head_tile_rows<T>(n, ws.tile_rows);
  const Index tiles = (n + R - 1) / R;
  std::atomic<Index> next{0};
  auto head_job = [&](std::size_t, std::size_t) {
    for (Index t = next.fetch_add(1, std::memory_order_relaxed); t < H * tiles;
         t = next.fetch_add(1, std::memory_order_relaxed)) {
      const Index h = t / tiles, r0 = (t % tiles) * R, r = std::min(R, n - r0);
      auto O = out.head(h).middleRows(r0, r);
      const auto Qh = ws.q.block(first + r0, h * dh, r, dh);
      const auto Kh = ws.k.block(first, h * dh, n, dh);
      if (cfg.relative) {
        // Row i of the Toeplitz relative term is the slice [n-1-i, 2n-1-i) of the 2n-1 values.
        for (Index i = 0; i < r; ++i) O.row(i) = ws.toeplitz.row(h).segment(n - 1 - (r0 + i), n);
        O.noalias() += Qh * Kh.transpose();
      } else {
        O.noalias() = Qh * Kh.transpose();
      }
      if (cfg.cls == cls_reset::reference) {
        const T theta1 = ws.q.row(0).segment(h * dh, dh).dot(ws.k.row(0).segment(h * dh, dh));
        const T theta2 = ws.q.row(1).segment(h * dh, dh).dot(ws.k.row(1).segment(h * dh, dh));
        const T r1 = cfg.relative ? p.relative_attention_bias(cfg.buckets.num_buckets / 2, h) : T(0);
        const T r2 = cfg.relative ? p.relative_attention_bias(cfg.buckets.num_buckets, h) : T(0);
        // column 0 first, then row 0 (which overwrites (0,0)), in the reference's order
        O.col(0).setConstant(theta2 + r2);
        if (r0 == 0) O.row(0).setConstant(theta1 + r1);
      } else if (cfg.cls == cls_reset::free) {
        O.col(0).setConstant(p.theta2[h]);
        if (r0 == 0) O.row(0).setConstant(p.theta1[h]);
      }
    }
  };
  ws.pool.run(head_job);
}

}  // namespace detail

/// The positional term [H, n, n] of a length-n sequence into `out` (resized), reading the
/// position table `pos` (any table: learned, sinusoidal, FLOATER output, a block of a longer
/// one) instead of p.pos. `ws` holds the scratch buffers; reuse both to avoid allocations.
/// Throws posenc::invalid_argument / shape_error / non_finite_error for bad inputs.
template <class T>
void positional_bias(const config& cfg, const parameters<T>& p, detail::pos_ref<T> pos, Index n, head_stack<T>& out,
                     workspace<T>& ws) {
  validate_parameters(cfg, p, pos, n, "tupe::positional_bias");
  posenc::detail::require(ws.tile_rows >= 0, "tupe::positional_bias",
                          "workspace.tile_rows: expected 0 (automatic) or a row count > 0, got ", ws.tile_rows);
  detail::compute_bias(cfg, p, pos, n, out, ws);
}

/// The positional term [H, n, n] from the table p.pos.
template <class T>
[[nodiscard]] head_stack<T> positional_bias(const config& cfg, const parameters<T>& p, Index n) {
  head_stack<T> out;
  workspace<T> ws;
  positional_bias(cfg, p, p.pos, n, out, ws);
  return out;
}

/// The positional term [H, n, n] from the table `pos`.
template <class T>
[[nodiscard]] head_stack<T> positional_bias(const config& cfg, const parameters<T>& p, detail::pos_ref<T> pos,
                                            Index n) {
  head_stack<T> out;
  workspace<T> ws;
  positional_bias(cfg, p, pos, n, out, ws);
  return out;
}

}  // namespace posenc::tupe
