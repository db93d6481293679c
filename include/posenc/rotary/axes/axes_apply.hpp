// SPDX-License-Identifier: MIT
// Multi-axis rotary embeddings applied in place to q and k (rotary/axes.hpp for the mathematics):
//
//   rotary::apply_inplace(q, k, af, rotary::axis_positions(ids, A), opt)
//       q, k [batch, heads, seq, head_dim]; ids [A, batch, seq] or [A, seq] (shared by the batch)
//   rotary::apply_ragged_inplace(q, k, rotary::axis_positions(ids, A), af, opt)
//       q, k [tokens, heads, head_dim]; ids [A, tokens] (each token carries its coordinates)
//
// The passes and kernels are the 1-D path's (rotary/apply.hpp: rotate_heads, the dense pass with
// its head groups and prefetch; any layout, f32/f64/f16/bf16 storage, GQA head counts, k empty
// to rotate q alone, opt.threads). Only the coefficients differ: those of a chunk of tokens are
// formed per axis, each axis' pairs as the 1-D coefficients form a set of explicit positions
// (a run of consecutive coordinates as one exact anchor times exact offsets in float/half
// storage, every row exactly in double storage; a coordinate equal to the previous row's is
// copied), then gathered into every pair's place. So each rotated value has the precision
// rotary/apply.hpp states for the 1-D rotation at its pair's coordinate.
// Options: layout, rotary_dim (2 * pairs or 0), check_finite, threads as for the 1-D rotation;
// max_positions bounds |p|; xPos is refused (invalid_argument).
//
// Split-half frequencies (axis_frequencies::axis_second set: HunYuan-VL's xdrope) take a separate
// path, leaving the one above as it is: the columns a, b of pair k (k and k + m in layout::half,
// 2k and 2k + 1 in layout::interleaved) become
//
//   a' = a cos A - b sin A,   b' = b cos B + a sin B,   A = p[axis[k]] omega_k, B = p[axis_second[k]] omega_k
//
// (a per-pair linear map with two angles, a rotation only where A == B). cos/sin of every token's
// angles are the tables' double entries (rotary::table<double>: the exact phase, rounded once),
// the map is evaluated in double and each output rounded once to the storage type (half types:
// through float).
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include <posenc/core/checked.hpp>
#include <posenc/core/error.hpp>
#include <posenc/core/thread_pool.hpp>
#include <posenc/numeric/pair_rotation.hpp>
#include <posenc/rotary/apply.hpp>
#include <posenc/rotary/axes/axes.hpp>
#include <posenc/rotary/coefficients.hpp>

namespace posenc::rotary {

namespace detail {

/// The coefficients of up to `rows` tokens for multi-axis frequencies, in the 1-D coefficients'
/// row layout (q(r): cos of every pair, then sin; k(r) == q(r)): one 1-D coefficients object per
/// axis over that axis' pairs, gathered. Copies share the per-axis frequencies.
template <class W>
class axis_coefficients {
 public:
  axis_coefficients(const axis_frequencies& f, const apply_options& opt, std::size_t rows, bool exact, bool f64)
      : m_half(f.freqs.inv_freq.size()), m_axes(f.axes), m_c(rows * m_half * 2) {
    auto subs = std::make_shared<std::vector<frequencies>>(f.axes);
    m_pairs.resize(f.axes);
    for (std::size_t k = 0; k < m_half; ++k) m_pairs[f.axis[k]].push_back(k);
    for (std::size_t a = 0; a < f.axes; ++a) {
      frequencies& s = (*subs)[a];
      s.attention_factor = f.freqs.attention_factor;
      for (const std::size_t k : m_pairs[a]) {
        s.inv_freq.push_back(f.freqs.inv_freq[k]);
        if (!f.freqs.inv_freq_lo.empty()) s.inv_freq_lo.push_back(f.freqs.inv_freq_lo[k]);
      }
    }
    m_subs = subs;
    apply_options o = opt;
    o.xpos.enabled = false;
    for (std::size_t a = 0; a < f.axes; ++a) {
      m_slot[a] = m_co.size();
      if (!m_pairs[a].empty()) m_co.emplace_back((*m_subs)[a], o, rows, exact, f64);
      m_src[a].resize(rows);
    }
  }
  /// Fill rows 0 .. n-1 (n <= rows): row r at coordinates x[a][r] of every axis a.
  void fill(std::size_t n, const std::array<const std::int64_t*, max_axes>& x) {
    for (std::size_t a = 0; a < m_axes; ++a) {
      if (m_pairs[a].empty()) continue;
      coefficients<W>& co = m_co[m_slot[a]];
      const std::int64_t* xa = x[a];
      std::size_t* src = m_src[a].data();
      for (std::size_t r = 0; r < n;) {
        std::size_t e = r + 1;
        while (e < n && xa[e] == xa[e - 1] + 1) ++e;
        if (e - r >= 2) {  // a run of consecutive coordinates
          co.set_run(e - r, static_cast<wide>(xa[r]), r);
          for (std::size_t j = r; j < e; ++j) src[j] = j;
          r = e;
        } else {
          if (r > 0 && xa[r] == xa[r - 1]) {
            src[r] = src[r - 1];
          } else {
            co.set(r, static_cast<wide>(xa[r]));
            src[r] = r;
          }
          ++r;
        }
      }
    }
    for (std::size_t r = 0; r < n; ++r) {
      W* __restrict cq = m_c.data() + r * 2 * m_half;
      W* __restrict sq = cq + m_half;
      for (std::size_t a = 0; a < m_axes; ++a) {
        const std::vector<std::size_t>& ks = m_pairs[a];
        if (ks.empty()) continue;
        const W* __restrict from = m_co[m_slot[a]].q(m_src[a][r]);
        const std::size_t h = ks.size();
        for (std::size_t j = 0; j < h; ++j) {
          cq[ks[j]] = from[j];
          sq[ks[j]] = from[h + j];
        }
      }
    }
  }
  [[nodiscard]] const W* q(std::size_t r) const { return m_c.data() + r * 2 * m_half; }
  [[nodiscard]] const W* k(std::size_t r) const { return q(r); }

 private:
  std::size_t m_half, m_axes;
  std::shared_ptr<const std::vector<frequencies>> m_subs;  // per axis: its pairs' frequencies
  std::vector<std::vector<std::size_t>> m_pairs;           // per axis: its pairs, in order
  std::vector<coefficients<W>> m_co;                       // per axis with pairs
  std::array<std::size_t, max_axes> m_slot{};
  std::array<std::vector<std::size_t>, max_axes> m_src;  // per axis: the row of m_co holding row r
  std::vector<W> m_c;
};

/// The checks every multi-axis application makes: the axis frequencies, no xPos.
inline void check_axis_apply(const axis_frequencies& f, const apply_options& opt, std::string_view where) {
  (void)rotary::validate(f, where);
  posenc::detail::require(!opt.xpos.enabled, where,
                          "options.xpos: expected xPos disabled (a multi-axis rotation has no xPos form)");
}

/// The double cos/sin of token positions x[a] (one coordinate per axis) for split-half
/// frequencies: out[k], out[m + k] cos A, sin A; out[2m + k], out[3m + k] cos B, sin B.
inline void split_half_row(const axis_frequencies& f, const std::vector<numeric::frequency3>& w3,
                           const std::array<std::int64_t, max_axes>& x, double* out) {
  const std::size_t m = f.axis.size();
  for (std::size_t k = 0; k < m; ++k) {
    numeric::sincos_phase(static_cast<double>(x[f.axis[k]]), 0.0, w3[k], f.freqs.attention_factor, out[m + k], out[k]);
    numeric::sincos_phase(static_cast<double>(x[f.axis_second[k]]), 0.0, w3[k], f.freqs.attention_factor,
                          out[3 * m + k], out[2 * m + k]);
  }
}

template <class T>
double split_load(const T& v) {
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
    return static_cast<double>(v);
  } else {
    return static_cast<double>(static_cast<float>(v));
  }
}

template <class T>
T split_store(double v) {
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
    return static_cast<T>(v);
  } else {
    return T(static_cast<float>(v));
  }
}

/// Apply the split-half map of one token's coefficients c (split_half_row) to `heads` heads at
/// x (head stride hs, column stride cs). Returns true when an output is not finite.
template <class T>
bool split_half_heads(T* x, std::ptrdiff_t hs, std::ptrdiff_t cs, std::size_t heads, const double* c, std::size_t m,
                      bool interleaved) {
  bool bad = false;
  for (std::size_t h = 0; h < heads; ++h) {
    T* row = x + static_cast<std::ptrdiff_t>(h) * hs;
    for (std::size_t k = 0; k < m; ++k) {
      const std::size_t ia = interleaved ? 2 * k : k, ib = interleaved ? 2 * k + 1 : k + m;
      T& ra = row[static_cast<std::ptrdiff_t>(ia) * cs];
      T& rb = row[static_cast<std::ptrdiff_t>(ib) * cs];
      const double a = split_load(ra), b = split_load(rb);
      const double na = a * c[k] - b * c[m + k];
      const double nb = b * c[2 * m + k] + a * c[3 * m + k];
      bad |= !std::isfinite(na) || !std::isfinite(nb);
      ra = split_store<T>(na);
      rb = split_store<T>(nb);
    }
  }
  return bad;
}

/// The split-half path over `tokens` tokens: token t's positions from pos_of(t), its q and k head
/// rows from rows_of(t) -> (q pointer, k pointer or null).
template <class T, class PosOf, class RowsOf>
bool split_half_pass(const axis_frequencies& f, const apply_plan& p, std::size_t tokens, std::size_t threads,
                     std::ptrdiff_t qhs, std::size_t qh, std::ptrdiff_t khs, std::size_t kh, std::ptrdiff_t cs,
                     PosOf pos_of, RowsOf rows_of) {
  const std::size_t m = f.axis.size();
  std::vector<numeric::frequency3> w3(m);
  for (std::size_t k = 0; k < m; ++k) w3[k] = frequency3_of(f.freqs, k);
  const std::size_t parts = std::max<std::size_t>(1, std::min(threads, tokens));
  std::vector<char> bad(parts, 0);
  posenc::parallel_chunks(parts, parts, [&](std::size_t p0, std::size_t p1) {
    std::vector<double> c(4 * m);
    for (std::size_t part = p0; part < p1; ++part) {
      const auto [t0, t1] = posenc::split_range(static_cast<std::ptrdiff_t>(tokens), part, parts, 1);
      for (auto t = static_cast<std::size_t>(t0); t < static_cast<std::size_t>(t1); ++t) {
        split_half_row(f, w3, pos_of(t), c.data());
        const auto [qp, kp] = rows_of(t);
        bool b = split_half_heads<T>(qp, qhs, cs, qh, c.data(), m, p.interleaved);
        if (kp != nullptr) b |= split_half_heads<T>(kp, khs, cs, kh, c.data(), m, p.interleaved);
        bad[part] |= static_cast<char>(b && p.check_finite);
      }
    }
  });
  return std::find(bad.begin(), bad.end(), char{1}) != bad.end();
}

}  // namespace detail

/// Rotate q and k ([batch, heads, seq, head_dim], heads may differ) in place with multi-axis
/// positions pos ([A, batch, seq] or [A, seq] shared by the batch, row-major): pair k of token
/// (b, s) turns by pos[axis[k]][b][s] * omega_k. See the file comment.
template <class T>
void apply_inplace(dense_view<T> q, dense_view<T> k, const axis_frequencies& freqs, axis_positions pos,
                   const apply_options& opt = {}) {
  static_assert(detail::is_storage_v<T>, "rotary::apply_inplace: storage must be float, double, Eigen::half or Eigen::bfloat16");
  constexpr std::string_view where = "rotary::apply_inplace";
  detail::check_axis_apply(freqs, opt, where);
  apply_options shape_opt = opt;
  shape_opt.max_positions = 0;
  const detail::apply_plan p = detail::validate_dense(q, k, freqs.freqs, {}, shape_opt, where);
  const std::size_t B = q.sizes[0], S = q.sizes[2];
  const std::size_t counts[2] = {S, checked::mul(B, S, where, "batch * seq")};
  const std::size_t n = detail::check_axis_positions(pos, freqs, counts, "[axes, seq] or [axes, batch, seq]",
                                                     opt.max_positions, where);
  const bool has_k = k.data != nullptr || k.elements() != 0;
  if (B == 0 || S == 0 || q.sizes[3] == 0) return;
  if (!freqs.axis_second.empty()) {  // split-half (xdrope): its own pass, see the file comment
    const bool shared_ids = n == S;
    const bool bad = detail::split_half_pass<T>(
        freqs, p, B * S, posenc::resolve_threads(opt.threads, where), q.strides[1], q.sizes[1],
        has_k ? k.strides[1] : 0, has_k ? k.sizes[1] : 0, q.strides[3],
        [&](std::size_t t) {
          std::array<std::int64_t, max_axes> x{};
          const std::size_t i = shared_ids ? t % S : t;
          for (std::size_t a = 0; a < freqs.axes; ++a) x[a] = pos.ids[a * n + i];
          return x;
        },
        [&](std::size_t t) {
          const auto b = static_cast<std::ptrdiff_t>(t / S), s = static_cast<std::ptrdiff_t>(t % S);
          T* kp = has_k ? k.data + b * k.strides[0] + s * k.strides[2] : nullptr;
          return std::pair<T*, T*>(q.data + b * q.strides[0] + s * q.strides[2], kp);
        });
    if (bad) detail::fail_non_finite(q, k, where);
    return;
  }
  using W = numeric::rotation_work_t<T>;
  constexpr std::size_t chunk = detail::dense_chunk;
  const std::size_t items = (S + chunk - 1) / chunk * B;
  const std::size_t parts = std::min(posenc::resolve_threads(opt.threads, where), items);
  std::vector<detail::axis_coefficients<W>> coeffs;  // one per thread
  coeffs.reserve(parts);
  coeffs.emplace_back(freqs, opt, std::min(S, chunk), std::is_same_v<T, double>, std::is_same_v<T, double>);
  for (std::size_t t = 1; t < parts; ++t) coeffs.push_back(coeffs.front());
  const bool shared = n == S;
  auto prepare = [&](detail::axis_coefficients<W>& co, detail::chunk_cache& have, std::size_t b, std::size_t c,
                     std::size_t s0, std::size_t rows) {
    const auto ci = static_cast<std::int64_t>(c);
    const std::int64_t key = shared ? -1 : static_cast<std::int64_t>(b);
    if (ci == have.chunk && key == have.key) return;
    std::array<const std::int64_t*, max_axes> x{};
    for (std::size_t a = 0; a < freqs.axes; ++a) x[a] = pos.ids.data() + a * n + (shared ? 0 : b * S) + s0;
    co.fill(rows, x);
    have = {ci, key};
  };
  if (detail::dense_pass<T, W>(q, k, has_k, p, coeffs, prepare)) detail::fail_non_finite(q, k, where);
}

/// Rotate ragged q and k ([tokens, heads, head_dim]) in place, token t at coordinates
/// pos[a][t] ([A, tokens], row-major): packed sequences need no cu_seqlens, each token carries
/// its coordinates. See the file comment.
template <class T>
void apply_ragged_inplace(ragged_view<T> q, ragged_view<T> k, axis_positions pos, const axis_frequencies& freqs,
                          const apply_options& opt = {}) {
  static_assert(detail::is_storage_v<T>,
                "rotary::apply_ragged_inplace: storage must be float, double, Eigen::half or Eigen::bfloat16");
  constexpr std::string_view where = "rotary::apply_ragged_inplace";
  detail::check_axis_apply(freqs, opt, where);
  const std::int64_t cu[2] = {0, static_cast<std::int64_t>(q.sizes[0])};
  apply_options shape_opt = opt;
  shape_opt.max_positions = 0;
  const detail::apply_plan p =
      detail::validate_ragged<T, std::int64_t>(q, k, std::span<const std::int64_t>(cu, 2), {}, freqs.freqs, shape_opt, where);
  const std::size_t tokens = q.sizes[0];
  const std::size_t counts[1] = {tokens};
  (void)detail::check_axis_positions(pos, freqs, counts, "[axes, tokens]", opt.max_positions, where);
  const bool has_k = k.data != nullptr || k.elements() != 0;
  if (tokens == 0 || q.sizes[2] == 0) return;
  if (!freqs.axis_second.empty()) {  // split-half (xdrope): its own pass, see the file comment
    const bool bad = detail::split_half_pass<T>(
        freqs, p, tokens, posenc::resolve_threads(opt.threads, where), q.strides[1], q.sizes[1],
        has_k ? k.strides[1] : 0, has_k ? k.sizes[1] : 0, q.strides[2],
        [&](std::size_t t) {
          std::array<std::int64_t, max_axes> x{};
          for (std::size_t a = 0; a < freqs.axes; ++a) x[a] = pos.ids[a * tokens + t];
          return x;
        },
        [&](std::size_t t) {
          const auto ti = static_cast<std::ptrdiff_t>(t);
          T* kp = has_k ? k.data + ti * k.strides[0] : nullptr;
          return std::pair<T*, T*>(q.data + ti * q.strides[0], kp);
        });
    if (bad) detail::fail_non_finite(q, k, where);
    return;
  }
  using W = numeric::rotation_work_t<T>;
  constexpr std::size_t block = 64;
  const std::size_t blocks = (tokens + block - 1) / block;
  const std::size_t parts = std::min(posenc::resolve_threads(opt.threads, where), blocks);
  std::vector<detail::axis_coefficients<W>> coeffs;
  coeffs.reserve(parts);
  coeffs.emplace_back(freqs, opt, std::min(tokens, block), std::is_same_v<T, double>, std::is_same_v<T, double>);
  for (std::size_t t = 1; t < parts; ++t) coeffs.push_back(coeffs.front());
  std::vector<char> bad(parts, 0);
  const std::size_t qh = q.sizes[1], kh = has_k ? k.sizes[1] : 0;
  auto run_part = [&](std::size_t part) {
    detail::axis_coefficients<W>& co = coeffs[part];
    const auto [b0, b1] = posenc::split_range(static_cast<std::ptrdiff_t>(blocks), part, parts, 1);
    for (auto i = static_cast<std::size_t>(b0); i < static_cast<std::size_t>(b1); ++i) {
      const std::size_t t0 = i * block, rows = std::min(block, tokens - t0);
      std::array<const std::int64_t*, max_axes> x{};
      for (std::size_t a = 0; a < freqs.axes; ++a) x[a] = pos.ids.data() + a * tokens + t0;
      co.fill(rows, x);
      for (std::size_t r = 0; r < rows; ++r) {
        const auto t = static_cast<std::ptrdiff_t>(t0 + r);
        bad[part] |= static_cast<char>(detail::rotate_heads<T, W>(
            q.data + t * q.strides[0], q.strides[1], qh, co.q(r), p.half, p.interleaved, p.check_finite));
        if (kh != 0)
          bad[part] |= static_cast<char>(detail::rotate_heads<T, W>(
              k.data + t * k.strides[0], k.strides[1], kh, co.k(r), p.half, p.interleaved, p.check_finite));
      }
    }
  };
  posenc::parallel_chunks(parts, parts, [&](std::size_t p0, std::size_t p1) {
    for (std::size_t part = p0; part < p1; ++part) run_part(part);
  });
  if (std::find(bad.begin(), bad.end(), char{1}) != bad.end()) detail::fail_non_finite(q, k, where);
}

}  // namespace posenc::rotary
