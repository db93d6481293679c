// SPDX-License-Identifier: MIT
// ALiBi, attention with linear biases (Press, Smith & Lewis, ICLR 2022, "Train Short, Test Long"):
// no position embedding; head h adds -m_h * (i - j) to the score of query position i and key
// position j.
//
//   alibi::slopes(heads)                         m_h, the authors' rule (get_slopes)
//   alibi::add_bias(scores, slopes, q_offsets)   in place on [batch, heads, q_len, k_len] scores
//   alibi::add_bias_ragged(scores, slopes, cu_seqlens_q, cu_seqlens_k)
//                                                in place on [q_tokens, heads, k_max] scores
//   alibi::write_bias(scores, slopes, q_offsets)  the bias written (not added) into such a buffer
//   alibi::bias_table<T>(slopes, q_len, k_len)   the [heads, q_len, k_len] bias itself
//
// Slopes (the authors' get_slopes, ofirpress/attention_with_linear_biases): for n a power of two,
// m_h = 2^(-8 (h+1) / n), h = 0..n-1 (8 heads: 2^-1 .. 2^-8); otherwise, with p the largest power
// of two below n, the p slopes of p heads followed by every other slope (the 1st, 3rd, ...) of the
// 2p-head rule, n - p of them.
//
// Forms (bias_form):
//  - relative:     -m (i - j)   (the paper's definition; for j > i it is +m (j - i): use a causal
//                  mask, or options.causal_mask = true to write -inf there);
//  - key_position: m j          (what the authors' fairseq code and Hugging Face's BLOOM add: the
//                  relative form plus m i, constant along each row, so the softmax is the same);
//  - symmetric:    -m |i - j|   (bidirectional / encoder use).
// Query row r of sequence b sits at position i = q_offsets[b] + r (a KV cache: the queries are
// the last q_len of the k_len keys, q_offsets[b] = k_len - q_len, the default); key column j is at
// position j.
//
// Precision: each bias is m * (j - i) formed in double (integer distances exact below 2^53, one
// rounding) and added in double to the score, then rounded once to the storage type (float,
// double, Eigen::half, Eigen::bfloat16).
#pragma once

#include <Eigen/Core>
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include <posenc/core/checked.hpp>
#include <posenc/core/error.hpp>
#include <posenc/tensor/table.hpp>
#include <posenc/tensor/tensor_view.hpp>

namespace posenc::alibi {

/// The authors' slopes for `heads` heads (see the file comment). heads >= 1.
inline std::vector<double> slopes(std::size_t heads) {
  constexpr std::string_view where = "alibi::slopes";
  posenc::detail::require(heads >= 1 && heads <= (std::size_t{1} << 20), where,
                          "heads: expected 1 <= heads <= 2^20, got ", heads);
  auto power_of_two = [](std::size_t n) {
    std::vector<double> m(n);
    for (std::size_t h = 0; h < n; ++h)
      m[h] = std::exp2(-8.0 * static_cast<double>(h + 1) / static_cast<double>(n));
    return m;
  };
  if (std::has_single_bit(heads)) return power_of_two(heads);
  const std::size_t p = std::bit_floor(heads);
  std::vector<double> m = power_of_two(p);
  const std::vector<double> extra = power_of_two(2 * p);
  for (std::size_t h = 0; m.size() < heads; h += 2) m.push_back(extra[h]);
  return m;
}

enum class bias_form {
  relative,      ///< -m (i - j)
  key_position,  ///< m j (fairseq ALiBi code, HF BLOOM)
  symmetric,     ///< -m |i - j|
};

struct bias_options {
  bias_form form = bias_form::relative;
  bool causal_mask = false;  ///< write -inf (instead of adding a bias) where j > i
};

template <class T>
using scores_view = tensor_view<T, 4>;  ///< [batch, heads, q_len, k_len]
template <class T>
using ragged_scores_view = tensor_view<T, 3>;  ///< [q_tokens, heads, k_max]

namespace detail {

using posenc::detail::is_storage_v;  // float, double, Eigen::half, Eigen::bfloat16 (tensor/table.hpp)

template <class T>
inline double load(const T& v) {
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>)
    return static_cast<double>(v);
  else
    return static_cast<double>(static_cast<float>(v));
}
template <class T>
inline T store(double v) {
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>)
    return static_cast<T>(v);
  else
    return T(static_cast<float>(v));
}

/// row[j] (+)= bias(i, j) for j < k_len; ramp[j] = j as double. The row is split at the query's
/// own column (j <= i, j > i) so that each part is one branch-free (vectorisable) loop.
template <class T, bool Add>
inline void bias_row(T* row, std::size_t k_len, const double* ramp, double m, std::int64_t i, const bias_options& opt) {
  const double di = static_cast<double>(i);
  // columns j <= i: [0, split); columns j > i: [split, k_len)
  const std::size_t split =
      i < 0 ? 0 : static_cast<std::size_t>(std::min<std::int64_t>(i + 1, static_cast<std::int64_t>(k_len)));
  auto put = [&](std::size_t j, double b) { row[j] = store<T>(Add ? load(row[j]) + b : b + 0.0); };
  switch (opt.form) {
    case bias_form::relative:
      for (std::size_t j = 0; j < split; ++j) put(j, m * (ramp[j] - di));
      if (!opt.causal_mask)
        for (std::size_t j = split; j < k_len; ++j) put(j, m * (ramp[j] - di));
      break;
    case bias_form::key_position:
      for (std::size_t j = 0; j < split; ++j) put(j, m * ramp[j]);
      if (!opt.causal_mask)
        for (std::size_t j = split; j < k_len; ++j) put(j, m * ramp[j]);
      break;
    case bias_form::symmetric:
      // -m |i - j| = m (j - i) for j <= i (the sign of zero as -m * |0| = -0)
      for (std::size_t j = 0; j < split; ++j) put(j, -m * (di - ramp[j]));
      if (!opt.causal_mask)
        for (std::size_t j = split; j < k_len; ++j) put(j, -m * (ramp[j] - di));
      break;
  }
  if (opt.causal_mask)
    for (std::size_t j = split; j < k_len; ++j) row[j] = store<T>(-std::numeric_limits<double>::infinity());
}

inline void check_slopes(std::span<const double> m, std::size_t heads, std::string_view where) {
  posenc::detail::require<shape_error>(m.size() == heads, where, "slopes: expected one slope per head (", heads,
                                       "), got ", m.size());
  for (std::size_t h = 0; h < m.size(); ++h)
    posenc::detail::require<non_finite_error>(std::isfinite(m[h]), where, "slopes[", h,
                                              "]: expected a finite slope, got ", m[h]);
}

inline void check_form(const bias_options& opt, std::string_view where) {
  posenc::detail::require(opt.form == bias_form::relative || opt.form == bias_form::key_position ||
                              opt.form == bias_form::symmetric,
                          where, "options.form: expected bias_form::relative, key_position or symmetric");
}

template <class T, std::size_t R>
void check_view(const tensor_view<T, R>& v, std::string_view where) {
  posenc::detail::require<shape_error>(v.data != nullptr || v.elements() == 0, where,
                                       "scores: expected a non-null data pointer for ", v.elements(), " elements");
  posenc::detail::require<shape_error>(v.strides[R - 1] == 1 || v.sizes[R - 1] <= 1, where, "scores.strides[", R - 1,
                                       "]: expected 1 (contiguous key columns), got ", v.strides[R - 1]);
}

inline std::vector<double> ramp(std::size_t n, std::string_view where) {
  (void)checked::extent(n, where, "k_len");
  std::vector<double> r = checked::make_vector<double>(n, where, "k_len");
  for (std::size_t j = 0; j < n; ++j) r[j] = static_cast<double>(j);
  return r;
}

constexpr std::int64_t position_limit = std::int64_t{1} << 53;

/// -(2^53 - len) <= offset <= 2^53 - len, i.e. |offset| + len <= 2^53, without std::abs (whose
/// value at INT64_MIN is undefined). len <= max_extent (checked by the caller), so 2^53 - len
/// does not overflow.
inline void check_offset(std::int64_t offset, std::size_t len, std::string_view where, std::string_view what) {
  const std::int64_t room = position_limit - static_cast<std::int64_t>(len);
  posenc::detail::require(offset >= -room && offset <= room, where, what, ": expected |", what,
                          "| + q_len <= 2^53, got ", offset, " with q_len ", len);
}

/// The largest |i - j| (relative, symmetric) or j (key_position) over the entries a bias row
/// writes (a causal mask writes -inf at j > i instead), for query positions [i0, i1] and keys
/// [0, k_len): the extremes are at the corners of that region. 0 when nothing is written.
inline double max_distance(std::int64_t i0, std::int64_t i1, std::size_t k_len, const bias_options& opt) {
  if (k_len == 0 || i1 < i0) return 0;
  const auto last = static_cast<double>(k_len - 1);
  const double a = static_cast<double>(i0), b = static_cast<double>(i1);
  if (opt.causal_mask) {
    if (i1 < 0) return 0;  // every key is after every query: all masked
    if (opt.form == bias_form::key_position) return std::min(b, last);
    return b;  // j = 0 at the last query
  }
  if (opt.form == bias_form::key_position) return last;
  return std::max({std::abs(a), std::abs(b), std::abs(last - a), std::abs(last - b)});
}

/// Every written bias m[h] * distance must be finite in T (e.g. Eigen::half: |bias| <= 65504):
/// invalid_argument naming slopes[h] otherwise, instead of a silent Inf.
template <class T>
void check_bias_range(std::span<const double> m, double distance, std::string_view where) {
  for (std::size_t h = 0; h < m.size(); ++h) {
    const double big = std::abs(m[h]) * distance;
    posenc::detail::require(std::isfinite(load(store<T>(big))), where, "slopes[", h, "]: the bias |slope| * distance = ",
                            std::abs(m[h]), " * ", distance, " = ", big,
                            " does not fit in the scores' storage type (it would round to Inf)");
  }
}

}  // namespace detail

/// Validate the arguments of a dense add_bias/write_bias, throwing the error the call would throw
/// (shared by the host and the device versions: only sizes, strides and the host-side spans are read).
template <class T>
void validate_dense(const scores_view<T>& scores, std::span<const double> m, std::span<const std::int64_t> q_offsets,
                    const bias_options& opt, std::string_view where) {
  detail::check_view(scores, where);
  detail::check_form(opt, where);
  const auto [B, H, Lq, Lk] = scores.sizes;
  posenc::detail::require(H >= 1, where, "scores: expected heads >= 1 (scores.sizes[1]), got 0");
  detail::check_slopes(m, H, where);
  posenc::detail::require<shape_error>(q_offsets.empty() || q_offsets.size() == B, where,
                                       "q_offsets: expected one offset per sequence (batch = ", B, ") or none, got ",
                                       q_offsets.size());
  for (std::size_t b = 0; b < q_offsets.size(); ++b)
    detail::check_offset(q_offsets[b], Lq, where, posenc::detail::concat("q_offsets[", b, "]"));
  if (B == 0 || Lq == 0 || Lk == 0) return;
  const std::int64_t dflt = static_cast<std::int64_t>(Lk) - static_cast<std::int64_t>(Lq);
  double dist = 0;
  for (std::size_t b = 0; b < (q_offsets.empty() ? 1 : B); ++b) {
    const std::int64_t o = q_offsets.empty() ? dflt : q_offsets[b];
    dist = std::max(dist, detail::max_distance(o, o + static_cast<std::int64_t>(Lq) - 1, Lk, opt));
  }
  detail::check_bias_range<T>(m, dist, where);
}


/// Validate the arguments of a ragged add_bias, as validate_dense (host and device share it).
template <class T, class I>
void validate_ragged(const ragged_scores_view<T>& scores, std::span<const double> m, std::span<const I> cu_seqlens_q,
                     std::span<const I> cu_seqlens_k, const bias_options& opt, std::string_view where) {
  detail::check_view(scores, where);
  detail::check_form(opt, where);
  const auto [Tq, H, Kmax] = scores.sizes;
  posenc::detail::require(H >= 1, where, "scores: expected heads >= 1 (scores.sizes[1]), got 0");
  detail::check_slopes(m, H, where);
  posenc::detail::require<shape_error>(!cu_seqlens_q.empty() && cu_seqlens_q.size() == cu_seqlens_k.size(), where,
                                       "cu_seqlens_q/cu_seqlens_k: expected batch + 1 >= 1 offsets each, got ",
                                       cu_seqlens_q.size(), " and ", cu_seqlens_k.size());
  const std::size_t B = cu_seqlens_q.size() - 1;
  // Offsets are compared as values (std::cmp_*: any integer type, nothing wraps) and differenced
  // only once ordered (checked::distance, in uint64): INT64_MIN or 2^63 reaches the typed error
  // instead of a signed overflow.
  const auto value = [](I v) {
    if constexpr (std::is_signed_v<I>) return static_cast<std::intmax_t>(v);
    else return static_cast<std::uintmax_t>(v);
  };
  posenc::detail::require(cu_seqlens_q[0] == 0 && cu_seqlens_k[0] == 0, where,
                          "cu_seqlens_q[0], cu_seqlens_k[0]: expected 0, got ", value(cu_seqlens_q[0]), " and ",
                          value(cu_seqlens_k[0]));
  for (std::size_t b = 0; b < B; ++b) {
    const bool q_ok = std::cmp_greater_equal(cu_seqlens_q[b + 1], cu_seqlens_q[b]);
    const bool k_ok = std::cmp_greater_equal(cu_seqlens_k[b + 1], cu_seqlens_k[b]);
    if (!q_ok || !k_ok) {  // the negative length -(lo - hi), its magnitude formed in uint64
      const std::uint64_t back = q_ok ? checked::distance(cu_seqlens_k[b + 1], cu_seqlens_k[b])
                                      : checked::distance(cu_seqlens_q[b + 1], cu_seqlens_q[b]);
      posenc::detail::fail(where, "cu_seqlens: expected non-decreasing offsets, got a length of -", back,
                           " for sequence ", b, q_ok ? " in cu_seqlens_k" : " in cu_seqlens_q");
    }
    const std::uint64_t kl = checked::distance(cu_seqlens_k[b], cu_seqlens_k[b + 1]);
    posenc::detail::require<shape_error>(kl <= Kmax, where, "cu_seqlens_k: sequence ", b, " has ", kl,
                                         " keys, expected <= k_max = ", Kmax);
  }
  posenc::detail::require<shape_error>(std::cmp_equal(cu_seqlens_q[B], Tq), where,
                                       "cu_seqlens_q: expected the last offset to equal the query token count ", Tq,
                                       ", got ", value(cu_seqlens_q[B]));
  // now 0 <= cu_seqlens_q[b] <= Tq and every key length <= Kmax (both <= max_extent): int64 below
  double dist = 0;
  for (std::size_t b = 0; b < B; ++b) {
    const auto ql = static_cast<std::int64_t>(checked::distance(cu_seqlens_q[b], cu_seqlens_q[b + 1]));
    const auto kl = static_cast<std::int64_t>(checked::distance(cu_seqlens_k[b], cu_seqlens_k[b + 1]));
    dist = std::max(dist, detail::max_distance(kl - ql, kl - 1, static_cast<std::size_t>(kl), opt));
  }
  detail::check_bias_range<T>(m, dist, where);
}

namespace detail {

template <class T, bool Add>
void dense_bias(scores_view<T> scores, std::span<const double> m, std::span<const std::int64_t> q_offsets,
                const bias_options& opt, std::string_view where) {
  static_assert(detail::is_storage_v<T>, "alibi: storage must be float, double, Eigen::half or Eigen::bfloat16");
  validate_dense(scores, m, q_offsets, opt, where);
  const auto [B, H, Lq, Lk] = scores.sizes;
  if (B == 0 || Lq == 0 || Lk == 0) return;  // nothing to write: no ramp either
  const auto r = detail::ramp(Lk, where);
  const std::int64_t dflt = static_cast<std::int64_t>(Lk) - static_cast<std::int64_t>(Lq);
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t h = 0; h < H; ++h)
      for (std::size_t i = 0; i < Lq; ++i) {
        T* row = scores.data + static_cast<std::ptrdiff_t>(b) * scores.strides[0] +
                 static_cast<std::ptrdiff_t>(h) * scores.strides[1] + static_cast<std::ptrdiff_t>(i) * scores.strides[2];
        const std::int64_t o = q_offsets.empty() ? dflt : q_offsets[b];
        detail::bias_row<T, Add>(row, Lk, r.data(), m[h], o + static_cast<std::int64_t>(i), opt);
      }
}
}  // namespace detail

/// Add the ALiBi bias in place to scores [batch, heads, q_len, k_len]: row r of sequence b is
/// query position q_offsets[b] + r (q_offsets empty: k_len - q_len for every sequence), column j key
/// position j. slopes: one per head (alibi::slopes(heads) for the authors' rule).
template <class T>
void add_bias(scores_view<T> scores, std::span<const double> m, std::span<const std::int64_t> q_offsets = {},
              const bias_options& opt = {}) {
  detail::dense_bias<T, true>(scores, m, q_offsets, opt, "alibi::add_bias");
}

/// Write the ALiBi bias (instead of adding it) into scores [batch, heads, q_len, k_len]: a bias
/// table in the caller's buffer (same positions, forms and options as add_bias).
template <class T>
void write_bias(scores_view<T> scores, std::span<const double> m, std::span<const std::int64_t> q_offsets = {},
                const bias_options& opt = {}) {
  detail::dense_bias<T, false>(scores, m, q_offsets, opt, "alibi::write_bias");
}

/// Add the ALiBi bias in place to ragged scores [q_tokens, heads, k_max]: sequence b has the query
/// tokens [cu_seqlens_q[b], cu_seqlens_q[b+1]) and k_len_b = cu_seqlens_k[b+1] - cu_seqlens_k[b]
/// keys (<= k_max); its queries are the last q_len_b of them (query t at position
/// k_len_b - q_len_b + (t - cu_seqlens_q[b])). Columns j >= k_len_b are left untouched.
template <class T, std::integral I>
void add_bias_ragged(ragged_scores_view<T> scores, std::span<const double> m, std::span<const I> cu_seqlens_q,
                     std::span<const I> cu_seqlens_k, const bias_options& opt = {}) {
  static_assert(detail::is_storage_v<T>,
                "alibi::add_bias_ragged: storage must be float, double, Eigen::half or Eigen::bfloat16");
  constexpr std::string_view where = "alibi::add_bias_ragged";
  validate_ragged(scores, m, cu_seqlens_q, cu_seqlens_k, opt, where);
  const auto [Tq, H, Kmax] = scores.sizes;
  const std::size_t B = cu_seqlens_q.size() - 1;
  // Cost bounded by the work: the entries written are sum_b q_len_b * heads * k_len_b; a
  // sequence with no queries or no keys writes none and costs nothing, and the ramp is as long
  // as the longest written row (not k_max, which may be far larger than any sequence's keys).
  if (Tq == 0 || Kmax == 0) return;  // nothing to write: no ramp either
  std::size_t longest = 0;
  for (std::size_t b = 0; b < B; ++b)  // validated: ordered offsets, lengths <= Tq and <= Kmax
    if (cu_seqlens_q[b + 1] != cu_seqlens_q[b])
      longest = std::max(longest, static_cast<std::size_t>(checked::distance(cu_seqlens_k[b], cu_seqlens_k[b + 1])));
  if (longest == 0) return;
  const auto r = detail::ramp(longest, where);
  for (std::size_t b = 0; b < B; ++b) {
    const auto q0 = static_cast<std::int64_t>(cu_seqlens_q[b]);
    const auto ql = static_cast<std::int64_t>(checked::distance(cu_seqlens_q[b], cu_seqlens_q[b + 1]));
    const auto kl = static_cast<std::int64_t>(checked::distance(cu_seqlens_k[b], cu_seqlens_k[b + 1]));
    if (kl == 0) continue;  // no keys: nothing written (a row of 0 entries per query and head)
    for (std::int64_t t = 0; t < ql; ++t)
      for (std::size_t h = 0; h < H; ++h) {
        T* row = scores.data + static_cast<std::ptrdiff_t>(q0 + t) * scores.strides[0] +
                 static_cast<std::ptrdiff_t>(h) * scores.strides[1];
        detail::bias_row<T, true>(row, static_cast<std::size_t>(kl), r.data(), m[h], kl - ql + t, opt);
      }
  }
}

/// The bias itself, [heads, q_len, k_len] row-major: row i at query position q_offset + i.
template <class T>
std::vector<T> bias_table(std::span<const double> m, std::size_t q_len, std::size_t k_len, std::int64_t q_offset = 0,
                          const bias_options& opt = {}) {
  static_assert(detail::is_storage_v<T>, "alibi::bias_table: storage must be float, double, Eigen::half or Eigen::bfloat16");
  constexpr std::string_view where = "alibi::bias_table";
  detail::check_form(opt, where);
  detail::check_slopes(m, m.size(), where);
  posenc::detail::require(!m.empty(), where, "slopes: expected at least one head, got none");
  (void)checked::extent(q_len, where, "q_len");
  (void)checked::extent(k_len, where, "k_len");
  detail::check_offset(q_offset, q_len, where, "q_offset");
  const std::size_t n = checked::elements(checked::elements(m.size(), q_len, where, "heads * q_len"), k_len, where,
                                          "heads * q_len * k_len");
  if (q_len > 0)
    detail::check_bias_range<T>(
        m, detail::max_distance(q_offset, q_offset + static_cast<std::int64_t>(q_len) - 1, k_len, opt), where);
  std::vector<T> out = checked::allocate(where, "heads * q_len * k_len", n, sizeof(T), [&] { return std::vector<T>(n); });
  if (n == 0) return out;
  const auto r = detail::ramp(k_len, where);
  // The rows per head from the validated element count n (= heads * q_len * k_len, n > 0), not
  // from q_len itself: where a caller passes a constant q_len beyond max_extent (rejected above),
  // g++ -O3 would otherwise still analyse this loop for that constant and warn that a late
  // iteration overflows the row pointer (-Waggressive-loop-optimizations).
  const std::size_t rows = n / (m.size() * k_len);
  for (std::size_t h = 0; h < m.size(); ++h)
    for (std::size_t i = 0; i < rows; ++i)
      detail::bias_row<T, false>(out.data() + (h * rows + i) * k_len, k_len, r.data(), m[h],
                                 q_offset + static_cast<std::int64_t>(i), opt);
  return out;
}

}  // namespace posenc::alibi
