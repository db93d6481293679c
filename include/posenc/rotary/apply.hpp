// SPDX-License-Identifier: MIT
// Rotary position embeddings applied in place to the queries and keys of an attention layer, in
// the layouts inference engines keep them:
//
//   dense  [batch, heads, seq, head_dim]   sequence b at positions offsets[b] + s
//   ragged [tokens, heads, head_dim]       sequence b = tokens [cu_seqlens[b], cu_seqlens[b+1]),
//                                          at positions offsets[b] + (t - cu_seqlens[b])
//                                          (a KV cache appending token by token)
//
//   rotary::apply_inplace(q, k, freqs, offsets, opt)
//   rotary::apply_ragged_inplace(q, k, cu_seqlens, offsets, freqs, opt)
//   rotary::apply_inplace(q, k, freqs, rotary::position_ids(ids), opt)      ids [seq] or [batch, seq]
//   rotary::apply_ragged_inplace(q, k, rotary::position_ids(ids), freqs, opt)  ids [tokens]
//
// q and k are strided views of the caller's buffers (rotary::tensor_view: pointer, sizes, strides
// in elements; head_dim contiguous); q and k may have different head counts (grouped-query
// attention), and k may be empty (data == nullptr) to rotate q alone. Pair k of the first
// rotary_dim = 2 * freqs.inv_freq.size() columns of each head turns by the angle
// position * omega_k (see Precision below: no float32 phase error at any position), its cos and
// sin scaled by freqs.attention_factor as Hugging Face transformers does; the columns past
// rotary_dim are untouched. Layouts: interleaved
// pairs (2k, 2k+1) (GPT-J, RoFormer) or half (k, k + rotary_dim/2) (GPT-NeoX, HF LLaMA).
//
// One pass over memory: the cos/sin of a position are computed once (in chunks of positions, shared
// by every sequence of a dense batch at the same offset) and every head of q and of k at that
// position is read once and written once.
//
// Precision: the storage types float, double, Eigen::half and Eigen::bfloat16.
//  - double: each coefficient f cos, f sin is formed from the rule's exact frequency omega_k =
//    inv_freq[k] + inv_freq_lo[k] by numeric::sincos_phase (the phase n omega_k and its reduction
//    in double-double), within (0.5 + 2^-9) ulp of its exact value; each output is a*c -/+ b*s in
//    double, so |y - y_exact| <= 0.5 ulp(y) + 2^-51 (|a| + |b|) |f|, y_exact the rotation by the
//    exact angle n omega_k (with xPos, 2^-50: the scale's two more roundings).
//  - float and the half types: the angle is position * inv_freq[k] rounded once to long double,
//    reduced exactly; its cos/sin are rounded to the work type W (double for float, float for the
//    half types); each output is a*c -/+ b*s in W, rounded once to the storage type:
//    |y - y_ld| <= 0.5 ulp_T(y) + 2^-50 (|a| + |b|) |f| (float), 0.5 ulp_T(y) + 2^-22 (|a| + |b|) |f|
//    (half types), y_ld the rotation by the long double angle, itself within 2^-63 n omega_k of
//    the exact angle (inv_freq is omega_k rounded to long double, and the product one more
//    rounding; tests/rotary/exact_phase.test.cpp): invisible at float's and the half types' resolution.
// (f = attention_factor, times the xPos scale; tests/rotary/apply.test.cpp and
// tests/rotary/exact_phase.test.cpp check the bounds entry by entry.)
//
// xPos (Sun et al. 2023, "A Length-Extrapolatable Transformer"): with opt.xpos.enabled the rotation
// of pair k is fused with the scale zeta_k^((n - center) / scale_base) on q and its inverse on k,
// zeta_k = (2k / rotary_dim + gamma) / (1 + gamma), so <q_m, k_n> decays like zeta^((m - n)/B).
//
// Validation (posenc::error subclasses, messages naming the argument): shapes of q and k, a
// contiguous head_dim, an even rotary_dim <= head_dim matching the frequencies, cu_seqlens starting
// at 0, non-decreasing and ending at the token count, offsets >= 0 and offsets + length within
// opt.max_positions (when set), NaN/Inf in q or k (opt.check_finite, checked in the same pass: the
// error is thrown after the pass, the contents of q and k are then unspecified).
#pragma once

#include <Eigen/Core>
#include <algorithm>
#include <array>
#include <cmath>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <span>
#include <string_view>
#include <type_traits>
#include <vector>

#include <posenc/core/checked.hpp>
#include <posenc/core/error.hpp>
#include <posenc/core/thread_pool.hpp>
#include <posenc/encoding/tensor_view.hpp>
#include <posenc/numeric/phase.hpp>
#include <posenc/numeric/phase_fill.hpp>
#include <posenc/rotary/frequencies.hpp>
#include <posenc/rotary/kernels.hpp>
#include <posenc/sinusoidal/sinusoidal.hpp>

namespace posenc::rotary {

/// Which columns of a head form the rotated pairs.
///  - layout::interleaved: (2k, 2k+1) (RoFormer, GPT-J, Meta's LLaMA reference code);
///  - layout::half: (k, k + rotary_dim/2) ("rotate_half": GPT-NeoX, Hugging Face LLaMA).
using layout = sinusoidal::layout;

/// A strided view of a caller's buffer (posenc/encoding/tensor_view.hpp); the apply functions need
/// the last stride to be 1 (head_dim contiguous).
using posenc::tensor_view;

/// [batch, heads, seq, head_dim]
template <class T>
using dense_view = tensor_view<T, 4>;
/// [tokens, heads, head_dim]
template <class T>
using ragged_view = tensor_view<T, 3>;

/// xPos (Sun et al. 2023): per-pair decay zeta_k = (2k / rotary_dim + gamma) / (1 + gamma); q at
/// position n is scaled by zeta_k^((n - center) / scale_base), k by zeta_k^(-(n - center) / scale_base).
/// torchscale's XPOS uses gamma = 0.4, scale_base = 512 and centers the exponent on the middle of
/// the sequence (center = (length + offset) / 2 rounded toward -inf, negated); the center cancels in
/// every q-k product and only keeps the scales in range.
struct xpos_options {
  bool enabled = false;
  double gamma = 0.4;         ///< > 0
  double scale_base = 512.0;  ///< > 0
  double center = 0.0;        ///< position subtracted in the exponent
};

struct apply_options {
  rotary::layout layout = rotary::layout::interleaved;
  std::size_t rotary_dim = 0;     ///< 0: 2 * freqs.inv_freq.size(); else must equal it (even, <= head_dim)
  std::uint64_t max_positions = 0;  ///< > 0: every position must be < max_positions (a table length)
  bool check_finite = true;       ///< NaN/Inf in q or k -> non_finite_error (same pass)
  xpos_options xpos{};
  /// Cores the call uses: 1 (default) the calling thread only, 0 all hardware threads, n <= 1024
  /// (posenc::max_threads) at most n; the rotation is memory-bound, so a second core moves more
  /// bytes. The result is bitwise the same for every count (each thread rotates whole chunks of
  /// positions exactly as one thread would). OpenMP regions inside are limited to one thread.
  std::size_t threads = 1;
};

namespace detail {

template <class T>
inline constexpr bool is_storage_v = std::is_same_v<T, float> || std::is_same_v<T, double> ||
                                     std::is_same_v<T, Eigen::half> || std::is_same_v<T, Eigen::bfloat16>;

using wide = numeric::wide;

/// Validated plan of one application.
struct apply_plan {
  std::size_t half;       // pairs
  std::size_t head_dim;
  bool interleaved;
  bool xpos;
  bool check_finite;
};

/// The frequencies' validator (rotary::validate in frequencies.hpp: finite inv_freq >= 0 and an
/// attention factor > 0, as tables require).
inline void check_frequencies(const frequencies& f, std::string_view where) { (void)rotary::validate(f, where); }

inline apply_plan make_apply_plan(std::size_t head_dim, const frequencies& f, const apply_options& opt, std::string_view where) {
  check_frequencies(f, where);
  const std::size_t rd = opt.rotary_dim == 0 ? 2 * f.inv_freq.size() : opt.rotary_dim;
  posenc::detail::require(rd % 2 == 0, where, "options.rotary_dim: expected an even rotary_dim, got ", rd);
  posenc::detail::require<shape_error>(rd == 2 * f.inv_freq.size(), where,
                                       "options.rotary_dim: expected 2 * freqs.inv_freq.size() = ",
                                       2 * f.inv_freq.size(), ", got ", rd);
  posenc::detail::require<shape_error>(rd <= head_dim, where, "rotary_dim: expected rotary_dim <= head_dim = ", head_dim,
                                       ", got ", rd);
  posenc::detail::require(opt.layout == layout::interleaved || opt.layout == layout::half, where,
                          "options.layout: expected layout::interleaved or layout::half");
  if (opt.xpos.enabled) {
    posenc::detail::require<non_finite_error>(
        std::isfinite(opt.xpos.gamma) && std::isfinite(opt.xpos.scale_base) && std::isfinite(opt.xpos.center), where,
        "options.xpos: expected finite gamma, scale_base and center, got ", opt.xpos.gamma, ", ", opt.xpos.scale_base,
        ", ", opt.xpos.center);
    posenc::detail::require(opt.xpos.gamma > 0 && opt.xpos.scale_base > 0, where,
                            "options.xpos: expected gamma > 0 and scale_base > 0, got ", opt.xpos.gamma, " and ",
                            opt.xpos.scale_base);
  }
  return {rd / 2, head_dim, opt.layout == layout::interleaved, opt.xpos.enabled, opt.check_finite};
}

/// Per-position coefficients for a chunk of positions: for row r, cq/sq (for q) and ck/sk (for k;
/// the same as q's unless xPos) of every pair. Rows are either set one by one (set: the exact
/// phase of each position) or as a run of consecutive integer positions x0, x0 + 1, ...
/// (set_run): with `exact` every row is an exact phase; otherwise (float and half storage) the
/// run's first row is an exact phase e^{i x0 w} and row r is its product with the exact offset
/// phase e^{i r w} (tabulated once), in double: within ~2^-52 of the exact cos/sin, far below
/// the rounding to float that follows, and 64 times fewer sin/cos evaluations.
template <class W>
class coefficients {
 public:
  coefficients(const frequencies& f, const apply_options& opt, std::size_t rows, bool exact, bool f64 = false)
      : m_half(f.inv_freq.size()),
        m_w(f.inv_freq),
        m_factor(f.attention_factor),
        m_xpos(opt.xpos.enabled),
        m_exact(exact || opt.xpos.enabled || f64),
        m_f64(f64),
        m_c(rows * m_half * (m_xpos ? 4 : 2)) {
    if (m_f64) {
      m_w3.resize(m_half);
      for (std::size_t k = 0; k < m_half; ++k) m_w3[k] = frequency3_of(f, k);
    }
    if (m_xpos) {
      m_logzeta.resize(m_half);
      const wide g = opt.xpos.gamma, d = static_cast<wide>(2 * m_half);
      for (std::size_t k = 0; k < m_half; ++k)
        m_logzeta[k] = std::log((static_cast<wide>(2 * k) / d + g) / (1 + g)) / static_cast<wide>(opt.xpos.scale_base);
      m_center = opt.xpos.center;
    }
    if (!m_exact) {
      m_offset.exact(rows, 0, 1, m_w);
      m_as.resize(m_half);
      m_ac.resize(m_half);
    }
  }
  /// Fill row r for position x (exact phase).
  void set(std::size_t r, wide x) {
    W* cq = row(r);
    W* sq = cq + m_half;
    if (m_f64 && !m_xpos) {  // double storage: the exact phase, the attention factor in one rounding
      const double xh = static_cast<double>(x), xl = static_cast<double>(x - static_cast<wide>(xh));
      for (std::size_t k = 0; k < m_half; ++k) {
        double s, c;
        numeric::sincos_phase(xh, xl, m_w3[k], m_factor, s, c);
        cq[k] = static_cast<W>(c);
        sq[k] = static_cast<W>(s);
      }
      return;
    }
    for (std::size_t k = 0; k < m_half; ++k) {
      double s, c;
      if (m_f64) {
        const double xh = static_cast<double>(x), xl = static_cast<double>(x - static_cast<wide>(xh));
        numeric::sincos_phase(xh, xl, m_w3[k], 1.0, s, c);
      } else {
        numeric::sincos_angle(x * m_w[k], s, c);
      }
      if (!m_xpos) {
        cq[k] = static_cast<W>(c * m_factor);
        sq[k] = static_cast<W>(s * m_factor);
      } else {
        const wide e = (x - m_center) * m_logzeta[k];
        const double up = static_cast<double>(std::exp(e)), down = static_cast<double>(std::exp(-e));
        W* ck = sq + m_half;
        W* sk = ck + m_half;
        cq[k] = static_cast<W>(c * m_factor * up);
        sq[k] = static_cast<W>(s * m_factor * up);
        ck[k] = static_cast<W>(c * m_factor * down);
        sk[k] = static_cast<W>(s * m_factor * down);
      }
    }
  }
  /// Fill rows 0..n-1 for the positions x0, x0 + 1, ..., x0 + n - 1 (n <= rows).
  void set_run(std::size_t n, wide x0) {
    if (m_exact) {
      for (std::size_t r = 0; r < n; ++r) set(r, x0 + static_cast<wide>(r));
      return;
    }
    numeric::detail::phase_row(x0, m_w, m_as.data(), m_ac.data());
    for (std::size_t r = 0; r < n; ++r) {
      W* cq = row(r);
      W* sq = cq + m_half;
      const double* os = m_offset.sin_row(r);
      const double* oc = m_offset.cos_row(r);
      for (std::size_t k = 0; k < m_half; ++k) {
        double s, c;
        numeric::detail::angle_sum(m_as[k], m_ac[k], os[k], oc[k], s, c);
        cq[k] = static_cast<W>(c * m_factor);
        sq[k] = static_cast<W>(s * m_factor);
      }
    }
  }
  [[nodiscard]] const W* q(std::size_t r) const { return m_c.data() + r * m_half * (m_xpos ? 4 : 2); }
  [[nodiscard]] const W* k(std::size_t r) const { return q(r) + (m_xpos ? 2 * m_half : 0); }
  [[nodiscard]] std::size_t half() const { return m_half; }

 private:
  W* row(std::size_t r) { return m_c.data() + r * m_half * (m_xpos ? 4 : 2); }
  std::size_t m_half;
  const std::vector<wide>& m_w;
  double m_factor;
  bool m_xpos, m_exact, m_f64;
  std::vector<W> m_c;
  std::vector<numeric::frequency3> m_w3;  // double storage: the exact frequencies
  std::vector<wide> m_logzeta;
  wide m_center = 0;
  numeric::detail::phase_rows<double> m_offset;  // the offset phases e^{i r w} (rows x half)
  std::vector<double> m_as, m_ac;                 // the run's anchor phase e^{i x0 w}
};

template <class T, std::size_t R>
void check_view(const tensor_view<T, R>& v, std::string_view name, std::string_view where) {
  posenc::detail::require<shape_error>(v.data != nullptr || v.elements() == 0, where, name,
                                       ": expected a non-null data pointer for ", v.elements(), " elements");
  posenc::detail::require<shape_error>(v.strides[R - 1] == 1 || v.sizes[R - 1] <= 1, where, name, ".strides[", R - 1,
                                       "]: expected 1 (a contiguous head_dim), got ", v.strides[R - 1]);
  for (std::size_t j = 0; j < R; ++j)
    posenc::detail::require<shape_error>(v.strides[j] >= 0, where, name, ".strides[", j,
                                         "]: expected a non-negative stride, got ", v.strides[j]);
}

/// Index of the first non-finite entry of a view (for the error message), as "[i0, i1, ...]".
template <class T, std::size_t R>
std::string first_non_finite(const tensor_view<T, R>& v) {
  std::array<std::size_t, R> idx{};
  const std::size_t n = v.elements();
  for (std::size_t e = 0; e < n; ++e) {
    std::size_t rest = e;
    std::ptrdiff_t off = 0;
    for (std::size_t j = R; j-- > 0;) {
      idx[j] = rest % v.sizes[j];
      rest /= v.sizes[j];
      off += static_cast<std::ptrdiff_t>(idx[j]) * v.strides[j];
    }
    if (!std::isfinite(static_cast<double>(load<T, double>(v.data[off])))) {
      std::string s = "[";
      for (std::size_t j = 0; j < R; ++j) s += (j ? ", " : "") + std::to_string(idx[j]);
      return s + "]";
    }
  }
  return "(none)";
}

template <class I>
std::int64_t as_i64(I v) {
  return static_cast<std::int64_t>(v);
}

/// The shared core: rotate rows r = 0..rows-1 of q (row r at q_row(r), heads of q at q_head_stride) and of k,
/// row r at position pos(r) (consecutive: pos(r) = pos(0) + r, integers), with the coefficients co
/// (made for chunks of 64 rows: exact = true when !consecutive). Rows go in chunks of 64 from the
/// first. Throws nothing.
template <class T, class W, class Qrow, class Krow, class Pos>
bool rotate_rows_with(coefficients<W>& co, std::size_t rows, Qrow q_row, std::size_t q_heads,
                      std::ptrdiff_t q_head_stride, Krow k_row, std::size_t k_heads, std::ptrdiff_t k_head_stride, Pos pos,
                      bool consecutive, const apply_plan& p) {
  constexpr std::size_t chunk = 64;
  bool bad = false;
  for (std::size_t r0 = 0; r0 < rows; r0 += chunk) {
    const std::size_t n = std::min(chunk, rows - r0);
    if (consecutive)
      co.set_run(n, pos(r0));
    else
      for (std::size_t r = 0; r < n; ++r) co.set(r, pos(r0 + r));
    for (std::size_t r = 0; r < n; ++r) {
      bad |= rotate_heads<T, W>(q_row(r0 + r), q_head_stride, q_heads, co.q(r), p.half, p.interleaved, p.check_finite);
      if (k_heads != 0)
        bad |= rotate_heads<T, W>(k_row(r0 + r), k_head_stride, k_heads, co.k(r), p.half, p.interleaved, p.check_finite);
    }
  }
  return bad;
}

/// rotate_rows_with on coefficients made for this call.
template <class T, class W, class Qrow, class Krow, class Pos>
bool rotate_rows(std::size_t rows, Qrow q_row, std::size_t q_heads, std::ptrdiff_t q_head_stride, Krow k_row,
                 std::size_t k_heads, std::ptrdiff_t k_head_stride, Pos pos, bool consecutive, const frequencies& f,
                 const apply_options& opt, const apply_plan& p) {
  coefficients<W> co(f, opt, std::min<std::size_t>(rows, 64), consecutive ? std::is_same_v<T, double> : true,
                     std::is_same_v<T, double>);
  return rotate_rows_with<T, W>(co, rows, q_row, q_heads, q_head_stride, k_row, k_heads, k_head_stride, pos,
                                consecutive, p);
}

/// A block of at most 64 ragged rows (tokens first .. first + rows - 1): at positions pos0 + r
/// (consecutive) or ids[first + r] (not consecutive).
struct row_block {
  std::size_t first;
  std::size_t rows;
  std::int64_t pos0;
  bool consecutive;
};

/// Rotate the ragged rows of `blocks` (tokens of q and k, [tokens, heads, head_dim]) on
/// min(opt.threads, blocks) threads, each with its own coefficients (made before any thread
/// starts), blocks in one contiguous range per thread. A block is rotated exactly as one thread
/// rotates it, so the result does not depend on the thread count. Returns true if a rotated value
/// is NaN or Inf.
template <class T, class W>
bool rotate_blocks(const std::vector<row_block>& blocks, const ragged_view<T>& q, const ragged_view<T>& k, bool has_k,
                   std::span<const std::int64_t> ids, const frequencies& f, const apply_options& opt,
                   const apply_plan& p, std::string_view where) {
  if (blocks.empty()) return false;
  const std::size_t parts = std::min(posenc::resolve_threads(opt.threads, where), blocks.size());
  const std::size_t rows = std::min<std::size_t>(64, q.sizes[0]);
  constexpr bool f64 = std::is_same_v<T, double>;
  std::vector<coefficients<W>> runs, isolated;
  runs.reserve(parts);
  isolated.reserve(parts);
  runs.emplace_back(f, opt, rows, f64, f64);
  if (!ids.empty()) isolated.emplace_back(f, opt, rows, true, f64);
  for (std::size_t t = 1; t < parts; ++t) {
    runs.push_back(runs.front());
    if (!ids.empty()) isolated.push_back(isolated.front());
  }
  std::vector<char> bad(parts, 0);
  const std::size_t qh = q.sizes[1], kh = has_k ? k.sizes[1] : 0;
  auto run_part = [&](std::size_t part) {
    const auto [b0, b1] = posenc::split_range(static_cast<std::ptrdiff_t>(blocks.size()), part, parts, 1);
    for (auto i = static_cast<std::size_t>(b0); i < static_cast<std::size_t>(b1); ++i) {
      const row_block& blk = blocks[i];
      const auto q_row = [&](std::size_t r) { return q.data + static_cast<std::ptrdiff_t>(blk.first + r) * q.strides[0]; };
      const auto k_row = [&](std::size_t r) { return k.data + static_cast<std::ptrdiff_t>(blk.first + r) * k.strides[0]; };
      const auto pos = [&](std::size_t r) {
        return blk.consecutive ? static_cast<wide>(blk.pos0 + static_cast<std::int64_t>(r))
                               : static_cast<wide>(ids[blk.first + r]);
      };
      bad[part] |= static_cast<char>(rotate_rows_with<T, W>(blk.consecutive ? runs[part] : isolated[part], blk.rows,
                                                            q_row, qh, q.strides[1], k_row, kh,
                                                            has_k ? k.strides[1] : 0, pos, blk.consecutive, p));
    }
  };
  posenc::parallel_chunks(parts, parts, [&](std::size_t p0, std::size_t p1) {
    for (std::size_t part = p0; part < p1; ++part) run_part(part);
  });
  return std::find(bad.begin(), bad.end(), char{1}) != bad.end();
}

/// Append the blocks of `rows` rows from token `first` in chunks of 64 (the chunks rotate_rows
/// forms): consecutive from position pos0, or at explicit positions.
inline void add_blocks(std::vector<row_block>& blocks, std::size_t first, std::size_t rows, std::int64_t pos0,
                       bool consecutive) {
  for (std::size_t r0 = 0; r0 < rows; r0 += 64)
    blocks.push_back({first + r0, std::min<std::size_t>(64, rows - r0), pos0 + static_cast<std::int64_t>(r0), consecutive});
}

template <class T, std::size_t R>
[[noreturn]] void fail_non_finite(const tensor_view<T, R>& q, const tensor_view<T, R>& k, std::string_view where) {
  std::string at = first_non_finite(q);
  std::string name = "q";
  if (at == "(none)" && k.data != nullptr) {
    at = first_non_finite(k);
    name = "k";
  }
  posenc::detail::fail<non_finite_error>(where, "q/k: expected finite values, found NaN or Inf (first non-finite entry after "
                                                "the rotation: ", name, at, "; q and k are left partly rotated)");
}

/// Validate a dense application (host or device: only sizes, strides and the host-side offsets are read).
template <class T>
apply_plan validate_dense(const dense_view<T>& q, const dense_view<T>& k, const frequencies& f,
                          std::span<const std::int64_t> offsets, const apply_options& opt, std::string_view where) {
  check_view(q, "q", where);
  const bool has_k = k.data != nullptr || k.elements() != 0;
  if (has_k) {
    check_view(k, "k", where);
    posenc::detail::require<shape_error>(k.sizes[0] == q.sizes[0] && k.sizes[2] == q.sizes[2] && k.sizes[3] == q.sizes[3],
                                         where, "k: expected [batch, heads, seq, head_dim] = [", q.sizes[0], ", *, ",
                                         q.sizes[2], ", ", q.sizes[3], "] as q, got [", k.sizes[0], ", ", k.sizes[1],
                                         ", ", k.sizes[2], ", ", k.sizes[3], "]");
  }
  const apply_plan p = make_apply_plan(q.sizes[3], f, opt, where);
  const std::size_t B = q.sizes[0], S = q.sizes[2];
  posenc::detail::require<shape_error>(offsets.empty() || offsets.size() == B, where,
                                       "offsets: expected one offset per sequence (batch = ", B, ") or none, got ",
                                       offsets.size());
  for (std::size_t b = 0; b < offsets.size(); ++b) {
    posenc::detail::require(offsets[b] >= 0, where, "offsets[", b, "]: expected a position >= 0, got ", offsets[b]);
    posenc::detail::require(offsets[b] <= (std::int64_t{1} << 53) - static_cast<std::int64_t>(S), where, "offsets[", b,
                            "] + seq: expected <= 2^53, got ", offsets[b], " + ", S);
    posenc::detail::require(opt.max_positions == 0 || static_cast<std::uint64_t>(offsets[b]) + S <= opt.max_positions,
                            where, "offsets[", b, "] + seq: expected <= max_positions = ", opt.max_positions, ", got ",
                            offsets[b], " + ", S);
  }
  posenc::detail::require(offsets.size() == B || opt.max_positions == 0 || S <= opt.max_positions, where,
                          "seq: expected <= max_positions = ", opt.max_positions, ", got ", S);
  return p;
}

/// The dense application with positions offsets[b] + s (offsets as int64).
template <class T>
void apply_dense(dense_view<T> q, dense_view<T> k, const frequencies& f, std::span<const std::int64_t> offsets,
                 const apply_options& opt, std::span<const std::int64_t> ids = {}) {
  static_assert(is_storage_v<T>, "rotary::apply_inplace: storage must be float, double, Eigen::half or Eigen::bfloat16");
  constexpr std::string_view where = "rotary::apply_inplace";
  apply_plan p{};
  if (ids.empty()) {
    p = validate_dense(q, k, f, offsets, opt, where);
  } else {  // explicit positions (apply_dense_ids): checked there, not seq against max_positions
    apply_options shape_opt = opt;
    shape_opt.max_positions = 0;
    p = validate_dense(q, k, f, {}, shape_opt, where);
  }
  const bool has_k = k.data != nullptr || k.elements() != 0;
  const std::size_t B = q.sizes[0], S = q.sizes[2];
  if (B == 0 || S == 0 || q.sizes[3] == 0) return;
  using W = numeric::rotation_work_t<T>;
  // Chunks of 256 positions: their coefficients (256 KiB for head_dim 128 in double) are formed
  // once per chunk (shared by consecutive sequences at the same offset) and stay in L2. Within a
  // chunk, groups of `group` heads go through the chunk's rows together: a row's coefficients are
  // read once per group, not once per head (they outweigh the row itself: a double per float
  // entry), while each head of the group streams its rows (contiguous along seq in the usual
  // [batch, heads, seq, head_dim] layout). The heads are a sequence length apart, so the
  // hardware prefetchers do not keep up with these short streams: the rows `ahead` rows on are
  // prefetched explicitly (bench/rotary_apply.bench.cpp: about 1.9x faster in the half layout).
  // Only the order of the rows changes, not the arithmetic of an entry.
  // Threads (opt.threads): the (chunk, sequence) items are split into one contiguous range per
  // thread, each with its own coefficients (copied before any thread starts); an item is rotated
  // exactly as on one thread, so the result does not depend on the thread count.
  constexpr std::size_t chunk = 256, group = 4, ahead = 8;
  const std::size_t chunks = (S + chunk - 1) / chunk;
  const std::size_t items = chunks * B;  // <= S * B, a product already bounded by q's element count
  const std::size_t parts = std::min(posenc::resolve_threads(opt.threads, where), items);
  std::vector<coefficients<W>> coeffs;  // one per thread
  coeffs.reserve(parts);
  coeffs.emplace_back(f, opt, std::min(S, chunk), std::is_same_v<T, double>, std::is_same_v<T, double>);
  for (std::size_t t = 1; t < parts; ++t) coeffs.push_back(coeffs.front());
  std::vector<char> bad(parts, 0);
  const std::size_t qh = q.sizes[1], kh = has_k ? k.sizes[1] : 0;
  const std::size_t row_bytes = p.head_dim * sizeof(T);
  const bool shared_ids = !ids.empty() && ids.size() == S;
  auto run_part = [&](std::size_t part) {
    coefficients<W>& co = coeffs[part];
    const auto [i0, i1] = posenc::split_range(static_cast<std::ptrdiff_t>(items), part, parts, 1);
    // heads [h0, h0 + g) of the chunk's n rows, base at the chunk's first row of head h0 of q or k
    auto rotate_group = [&](T* base, std::ptrdiff_t s_stride, std::ptrdiff_t h_stride, std::size_t g, std::size_t n,
                            bool use_k) {
      for (std::size_t r = 0; r < n; ++r) {
        if (r + ahead < n)
          for (std::size_t h = 0; h < g; ++h)
            prefetch_for_write(base + static_cast<std::ptrdiff_t>(r + ahead) * s_stride + static_cast<std::ptrdiff_t>(h) * h_stride,
                               row_bytes);
        bad[part] |= static_cast<char>(rotate_heads<T, W>(base + static_cast<std::ptrdiff_t>(r) * s_stride, h_stride, g,
                                                          use_k ? co.k(r) : co.q(r), p.half, p.interleaved,
                                                          p.check_finite));
      }
    };
    // the coefficients now in co: (chunk, offset) for the offsets path, (chunk, sequence or -1
    // when shared) for explicit positions; none yet
    std::int64_t have_chunk = -1, have = -1;
    for (auto i = static_cast<std::size_t>(i0); i < static_cast<std::size_t>(i1); ++i) {
      const std::size_t c = i / B, b = i % B, s0 = c * chunk;
      const std::size_t n = std::min(chunk, S - s0);
      const auto ci = static_cast<std::int64_t>(c);
      if (!ids.empty()) {
        // explicit positions: [seq] (shared, formed once per chunk) or [batch, seq]; a consecutive
        // chunk as the offsets path forms it, any other position by position
        const std::int64_t key = shared_ids ? -1 : static_cast<std::int64_t>(b);
        if (ci != have_chunk || key != have) {
          const std::int64_t* x = ids.data() + (shared_ids ? 0 : b * S) + s0;
          bool run = true;
          for (std::size_t r = 1; r < n && run; ++r) run = x[r] == x[0] + static_cast<std::int64_t>(r);
          if (run)
            co.set_run(n, static_cast<wide>(x[0]));
          else
            for (std::size_t r = 0; r < n; ++r) co.set(r, static_cast<wide>(x[r]));
          have_chunk = ci;
          have = key;
        }
      } else if (const std::int64_t o = offsets.empty() ? 0 : offsets[b]; ci != have_chunk || o != have) {
        co.set_run(n, static_cast<wide>(o + static_cast<std::int64_t>(s0)));
        have_chunk = ci;
        have = o;
      }
      const auto sb = static_cast<std::ptrdiff_t>(b), ss = static_cast<std::ptrdiff_t>(s0);
      for (std::size_t h = 0; h < qh; h += group)
        rotate_group(q.data + sb * q.strides[0] + static_cast<std::ptrdiff_t>(h) * q.strides[1] + ss * q.strides[2],
                     q.strides[2], q.strides[1], std::min(group, qh - h), n, false);
      for (std::size_t h = 0; h < kh; h += group)
        rotate_group(k.data + sb * k.strides[0] + static_cast<std::ptrdiff_t>(h) * k.strides[1] + ss * k.strides[2],
                     k.strides[2], k.strides[1], std::min(group, kh - h), n, true);
    }
  };
  posenc::parallel_chunks(parts, parts, [&](std::size_t p0, std::size_t p1) {
    for (std::size_t part = p0; part < p1; ++part) run_part(part);
  });
  if (std::find(bad.begin(), bad.end(), char{1}) != bad.end()) fail_non_finite(q, k, where);
}

/// Validate a ragged application (host or device: only sizes, strides and the host-side spans are read).
template <class T, class I>
apply_plan validate_ragged(const ragged_view<T>& q, const ragged_view<T>& k, std::span<const I> cu_seqlens,
                           std::span<const I> offsets, const frequencies& f, const apply_options& opt,
                           std::string_view where) {
  check_view(q, "q", where);
  const bool has_k = k.data != nullptr || k.elements() != 0;
  if (has_k) {
    check_view(k, "k", where);
    posenc::detail::require<shape_error>(k.sizes[0] == q.sizes[0] && k.sizes[2] == q.sizes[2], where,
                                         "k: expected [tokens, heads, head_dim] = [", q.sizes[0], ", *, ", q.sizes[2],
                                         "] as q, got [", k.sizes[0], ", ", k.sizes[1], ", ", k.sizes[2], "]");
  }
  const apply_plan p = make_apply_plan(q.sizes[2], f, opt, where);
  const std::size_t tokens = q.sizes[0];
  posenc::detail::require<shape_error>(!cu_seqlens.empty(), where,
                                       "cu_seqlens: expected batch + 1 >= 1 offsets, got an empty span");
  const std::size_t B = cu_seqlens.size() - 1;
  posenc::detail::require(as_i64(cu_seqlens[0]) == 0, where, "cu_seqlens[0]: expected 0, got ", as_i64(cu_seqlens[0]));
  for (std::size_t b = 0; b < B; ++b)
    posenc::detail::require(as_i64(cu_seqlens[b + 1]) >= as_i64(cu_seqlens[b]), where,
                            "cu_seqlens: expected non-decreasing offsets, got cu_seqlens[", b, "] = ",
                            as_i64(cu_seqlens[b]), " > cu_seqlens[", b + 1, "] = ", as_i64(cu_seqlens[b + 1]));
  posenc::detail::require<shape_error>(as_i64(cu_seqlens[B]) == static_cast<std::int64_t>(tokens), where,
                                       "cu_seqlens: expected the last offset to equal the token count ", tokens,
                                       ", got ", as_i64(cu_seqlens[B]));
  posenc::detail::require<shape_error>(offsets.empty() || offsets.size() == B, where,
                                       "offsets: expected one offset per sequence (batch = ", B, ") or none, got ",
                                       offsets.size());
  for (std::size_t b = 0; b < B; ++b) {
    const std::int64_t o = offsets.empty() ? 0 : as_i64(offsets[b]);
    const std::int64_t len = as_i64(cu_seqlens[b + 1]) - as_i64(cu_seqlens[b]);
    posenc::detail::require(o >= 0, where, "offsets[", b, "]: expected a position >= 0, got ", o);
    posenc::detail::require(o <= (std::int64_t{1} << 53) - len, where, "offsets[", b,
                            "] + length: expected <= 2^53, got ", o, " + ", len);
    posenc::detail::require(opt.max_positions == 0 || static_cast<std::uint64_t>(o + len) <= opt.max_positions, where,
                            "offsets[", b, "] + length of sequence ", b, ": expected <= max_positions = ",
                            opt.max_positions, ", got ", o, " + ", len);
  }
  return p;
}

template <class T, class I>
void apply_ragged(ragged_view<T> q, ragged_view<T> k, std::span<const I> cu_seqlens, std::span<const I> offsets,
                  const frequencies& f, const apply_options& opt) {
  static_assert(is_storage_v<T>,
                "rotary::apply_ragged_inplace: storage must be float, double, Eigen::half or Eigen::bfloat16");
  constexpr std::string_view where = "rotary::apply_ragged_inplace";
  const apply_plan p = validate_ragged(q, k, cu_seqlens, offsets, f, opt, where);
  const bool has_k = k.data != nullptr || k.elements() != 0;
  const std::size_t tokens = q.sizes[0];
  const std::size_t B = cu_seqlens.size() - 1;
  if (tokens == 0 || q.sizes[2] == 0) return;
  using W = numeric::rotation_work_t<T>;
  // blocks of at most 64 tokens of one sequence: tokens / 64 + B of them, at most 2 * tokens
  std::vector<row_block> blocks;
  blocks.reserve(std::min(checked::add(tokens / 64, B, where, "tokens / 64 + batch"), 2 * tokens));
  for (std::size_t b = 0; b < B; ++b) {
    const auto t0 = static_cast<std::size_t>(as_i64(cu_seqlens[b]));
    const auto len = static_cast<std::size_t>(as_i64(cu_seqlens[b + 1])) - t0;
    add_blocks(blocks, t0, len, offsets.empty() ? 0 : as_i64(offsets[b]), true);
  }
  if (rotate_blocks<T, W>(blocks, q, k, has_k, {}, f, opt, p, where)) fail_non_finite(q, k, where);
}

/// Check explicit positions: each in [0, 2^53) and below opt.max_positions when set (no std::abs:
/// INT64_MIN is rejected as negative like any other).
inline void check_position_ids(std::span<const std::int64_t> ids, const apply_options& opt, std::string_view where) {
  for (std::size_t i = 0; i < ids.size(); ++i) {
    posenc::detail::require(ids[i] >= 0, where, "position_ids[", i, "]: expected a position >= 0, got ", ids[i]);
    posenc::detail::require(ids[i] < (std::int64_t{1} << 53), where, "position_ids[", i,
                            "]: expected a position < 2^53, got ", ids[i]);
    posenc::detail::require(opt.max_positions == 0 || static_cast<std::uint64_t>(ids[i]) < opt.max_positions, where,
                            "position_ids[", i, "]: expected a position < max_positions = ", opt.max_positions, ", got ",
                            ids[i]);
  }
}

/// The blocks of rows [0, n) whose positions are ids[0..n): maximal runs of consecutive positions
/// as runs (the arithmetic of the offsets path for a run starting at its first position), isolated
/// positions together, each evaluated exactly; both in blocks of 64 rows from their first.
inline std::vector<row_block> position_blocks(std::span<const std::int64_t> ids) {
  const std::size_t n = ids.size();
  std::vector<row_block> blocks;
  blocks.reserve(n / 32 + 1);
  const auto continues = [&](std::size_t j) { return ids[j] == ids[j - 1] + 1; };
  std::size_t i = 0;
  while (i < n) {
    std::size_t j = i + 1;
    while (j < n && continues(j)) ++j;
    bool consecutive = true;
    if (j - i == 1) {  // isolated positions: up to the next run of two or more
      while (j < n && !(j + 1 < n && continues(j + 1))) ++j;
      consecutive = false;
    }
    add_blocks(blocks, i, j - i, ids[i], consecutive);
    i = j;
  }
  return blocks;
}

/// The dense application with explicit positions: ids [seq] (shared by every sequence) or
/// [batch, seq] row-major. A chunk of 256 positions that are consecutive is formed as the offsets
/// path forms it (so positions offsets[b] + s give bitwise the offsets path's result), others
/// position by position (exact phases).
template <class T>
void apply_dense_ids(dense_view<T> q, dense_view<T> k, const frequencies& f, std::span<const std::int64_t> ids,
                     const apply_options& opt) {
  constexpr std::string_view where = "rotary::apply_inplace";
  check_view(q, "q", where);
  const std::size_t B = q.sizes[0], S = q.sizes[2];
  posenc::detail::require<shape_error>(ids.size() == S || ids.size() == B * S, where,
                                       "position_ids: expected seq = ", S, " or batch * seq = ", B * S,
                                       " positions ([seq] or [batch, seq]), got ", ids.size());
  check_position_ids(ids, opt, where);
  if (ids.empty()) {  // no positions (seq = 0): the shapes are still checked
    apply_options shape_opt = opt;
    shape_opt.max_positions = 0;
    (void)validate_dense(q, k, f, {}, shape_opt, where);
    return;
  }
  apply_dense<T>(q, k, f, {}, opt, ids);
}

/// The ragged application with explicit positions: ids [tokens].
template <class T>
void apply_ragged_ids(ragged_view<T> q, ragged_view<T> k, std::span<const std::int64_t> ids, const frequencies& f,
                      const apply_options& opt) {
  static_assert(is_storage_v<T>,
                "rotary::apply_ragged_inplace: storage must be float, double, Eigen::half or Eigen::bfloat16");
  constexpr std::string_view where = "rotary::apply_ragged_inplace";
  const std::int64_t cu[2] = {0, static_cast<std::int64_t>(q.sizes[0])};
  apply_options shape_opt = opt;
  shape_opt.max_positions = 0;
  const apply_plan p =
      validate_ragged<T, std::int64_t>(q, k, std::span<const std::int64_t>(cu, 2), {}, f, shape_opt, where);
  const bool has_k = k.data != nullptr || k.elements() != 0;
  posenc::detail::require<shape_error>(ids.size() == q.sizes[0], where, "position_ids: expected one position per token (",
                                       q.sizes[0], "), got ", ids.size());
  check_position_ids(ids, opt, where);
  if (q.sizes[0] == 0 || q.sizes[2] == 0) return;
  using W = numeric::rotation_work_t<T>;
  if (rotate_blocks<T, W>(position_blocks(ids), q, k, has_k, ids, f, opt, p, where)) fail_non_finite(q, k, where);
}

}  // namespace detail

/// Rotate q and k ([batch, heads, seq, head_dim], heads may differ between q and k) in place:
/// sequence b at positions offsets[b] + s (offsets empty: all 0). k.data == nullptr with zero
/// sizes: q only. See the file comment for precision, xPos and validation.
template <class T>
void apply_inplace(dense_view<T> q, dense_view<T> k, const frequencies& freqs,
                   std::span<const std::int64_t> offsets = {}, const apply_options& opt = {}) {
  detail::apply_dense<T>(q, k, freqs, offsets, opt);
}

/// Rotate ragged q and k ([tokens, heads, head_dim]) in place: sequence b is tokens
/// [cu_seqlens[b], cu_seqlens[b+1]) at positions offsets[b] + (t - cu_seqlens[b]) (offsets empty:
/// all 0). I: any integer type (int32 as flash-attention's cu_seqlens, int64).
template <class T, std::integral I>
void apply_ragged_inplace(ragged_view<T> q, ragged_view<T> k, std::span<const I> cu_seqlens,
                          std::span<const I> offsets, const frequencies& freqs, const apply_options& opt = {}) {
  detail::apply_ragged<T, I>(q, k, cu_seqlens, offsets, freqs, opt);
}

/// The validation of apply_inplace (shapes, strides, frequencies, options, offsets) without the
/// application: for callers that rotate elsewhere (posenc/device/rotary.hpp).
template <class T>
void validate_apply(const dense_view<T>& q, const dense_view<T>& k, const frequencies& freqs,
                    std::span<const std::int64_t> offsets, const apply_options& opt, std::string_view where) {
  (void)detail::validate_dense(q, k, freqs, offsets, opt, where);
}

/// The validation of apply_ragged_inplace without the application.
template <class T, std::integral I>
void validate_apply_ragged(const ragged_view<T>& q, const ragged_view<T>& k, std::span<const I> cu_seqlens,
                     std::span<const I> offsets, const frequencies& freqs, const apply_options& opt,
                     std::string_view where) {
  (void)detail::validate_ragged(q, k, cu_seqlens, offsets, freqs, opt, where);
}

/// Explicit per-token positions (transformers' position_ids: left padding, packed sequences,
/// speculative decoding), int64, each in [0, 2^53) and below apply_options::max_positions when set.
/// A distinct type so that the offsets overloads stay unambiguous.
struct position_ids {
  explicit position_ids(std::span<const std::int64_t> v) noexcept : ids(v) {}
  std::span<const std::int64_t> ids;
};

/// Rotate q and k ([batch, heads, seq, head_dim]) in place at explicit positions: pos.ids holds
/// seq positions (shared by every sequence, transformers' [1, seq]) or batch * seq ([batch, seq],
/// row-major). Positions offsets[b] + s give bitwise the result of the offsets overload.
template <class T>
void apply_inplace(dense_view<T> q, dense_view<T> k, const frequencies& freqs, position_ids pos,
                   const apply_options& opt = {}) {
  detail::apply_dense_ids<T>(q, k, freqs, pos.ids, opt);
}

/// Rotate ragged q and k ([tokens, heads, head_dim]) in place, token t at position pos.ids[t]
/// (packed sequences need no cu_seqlens: each token carries its position). Runs of consecutive
/// positions are rotated as the offsets overload rotates a sequence starting at the run's first
/// position (bitwise the same when the runs are the sequences).
template <class T>
void apply_ragged_inplace(ragged_view<T> q, ragged_view<T> k, position_ids pos, const frequencies& freqs,
                          const apply_options& opt = {}) {
  detail::apply_ragged_ids<T>(q, k, pos.ids, freqs, opt);
}

/// The xPos decay of pair k of a rotary_dim-wide head: zeta_k = (2k / rotary_dim + gamma) / (1 + gamma).
/// Throws invalid_argument unless rotary_dim is even and >= 2, k < rotary_dim / 2 and gamma > 0.
inline double xpos_zeta(std::size_t k, std::size_t rotary_dim, double gamma = 0.4) {
  constexpr std::string_view where = "rotary::xpos_zeta";
  posenc::detail::require(rotary_dim >= 2 && rotary_dim % 2 == 0, where,
                          "rotary_dim: expected an even rotary_dim >= 2, got ", rotary_dim);
  posenc::detail::require(k < rotary_dim / 2, where, "k: expected a pair index k < rotary_dim / 2 = ", rotary_dim / 2,
                          ", got ", k);
  posenc::detail::require<non_finite_error>(std::isfinite(gamma), where, "gamma: expected a finite value, got ", gamma);
  posenc::detail::require(gamma > 0, where, "gamma: expected gamma > 0, got ", gamma);
  return (static_cast<double>(2 * k) / static_cast<double>(rotary_dim) + gamma) / (1.0 + gamma);
}

}  // namespace posenc::rotary
