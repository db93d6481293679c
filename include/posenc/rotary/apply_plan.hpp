// SPDX-License-Identifier: MIT
// What one rotary application is, and its validation: the layouts and strided views of q and k,
// apply_options (with xPos), explicit position_ids, and the checks that rotary::apply_inplace and
// apply_ragged_inplace (posenc/rotary/apply.hpp) make before they touch memory: shapes and strides
// of q and k, an even rotary_dim <= head_dim matching the frequencies, cu_seqlens and offsets, the
// positions against 2^53 and opt.max_positions; validate_apply / validate_apply_ragged make them
// alone, for callers that rotate elsewhere (posenc/device/rotary.hpp). Every failure is a
// posenc::error subclass whose message names the argument.
#pragma once

#include <Eigen/Core>
#include <array>
#include <cmath>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include <posenc/core/checked.hpp>
#include <posenc/core/error.hpp>
#include <posenc/tensor/table.hpp>
#include <posenc/tensor/tensor_view.hpp>
#include <posenc/numeric/pair_rotation.hpp>
#include <posenc/numeric/phase.hpp>
#include <posenc/rotary/frequencies.hpp>
#include <posenc/sinusoidal/options.hpp>

namespace posenc::rotary {

/// Which columns of a head form the rotated pairs.
///  - layout::interleaved: (2k, 2k+1) (RoFormer, GPT-J, Meta's LLaMA reference code);
///  - layout::half: (k, k + rotary_dim/2) ("rotate_half": GPT-NeoX, Hugging Face LLaMA).
using layout = sinusoidal::layout;

/// A strided view of a caller's buffer (posenc/tensor/tensor_view.hpp); the apply functions need
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

using numeric::detail::load;  // a stored value in a wider type (numeric/pair_rotation.hpp)

using posenc::detail::is_storage_v;  // float, double, Eigen::half, Eigen::bfloat16 (tensor/table.hpp)

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

/// An offset (cu_seqlens, offsets) as a printable integer of its own sign (an unsigned 2^63 stays
/// 2^63, not INT64_MIN).
template <class I>
auto value_of(I v) {
  if constexpr (std::is_signed_v<I>) return static_cast<std::intmax_t>(v);
  else return static_cast<std::uintmax_t>(v);
}

/// A validated offset (in [0, 2^53]) as int64.
template <class I>
std::int64_t as_i64(I v) {
  return static_cast<std::int64_t>(v);
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

/// The attention factor in the work type of storage T (numeric::rotation_work_t: double for float
/// and double, float for Eigen::half and Eigen::bfloat16), where the coefficients f cos and f sin
/// are formed: f must round to a finite, normal value there. Checked at entry, where T is known
/// (rotary::validate has checked it as a double): a bf16 application with f = 1e39 formed
/// coefficients of Inf and was reported as a non-finite q.
template <class T>
void check_factor_in_work_type(const frequencies& f, std::string_view where) {
  using W = numeric::rotation_work_t<T>;
  const W w = static_cast<W>(f.attention_factor);
  posenc::detail::require(std::isnormal(w), where, "freqs.attention_factor: expected a value that is finite and normal "
                          "in the work type of the storage (", sizeof(W) == sizeof(float) ? "float" : "double",
                          ": ", std::numeric_limits<W>::min(), " .. ", std::numeric_limits<W>::max(), "), got ",
                          f.attention_factor, " (rounds to ", w, ")");
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
  check_factor_in_work_type<T>(f, where);
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
  check_factor_in_work_type<T>(f, where);
  const std::size_t tokens = q.sizes[0];
  posenc::detail::require<shape_error>(!cu_seqlens.empty(), where,
                                       "cu_seqlens: expected batch + 1 >= 1 offsets, got an empty span");
  const std::size_t B = cu_seqlens.size() - 1;
  // Offsets are compared as values (std::cmp_*, any integer type, no conversion that wraps) and
  // differenced only once ordered (checked::distance): INT64_MIN or 2^63 gets the typed error,
  // never a signed overflow.
  posenc::detail::require(cu_seqlens[0] == 0, where, "cu_seqlens[0]: expected 0, got ", value_of(cu_seqlens[0]));
  for (std::size_t b = 0; b < B; ++b)
    posenc::detail::require(std::cmp_greater_equal(cu_seqlens[b + 1], cu_seqlens[b]), where,
                            "cu_seqlens: expected non-decreasing offsets, got cu_seqlens[", b, "] = ",
                            value_of(cu_seqlens[b]), " > cu_seqlens[", b + 1, "] = ", value_of(cu_seqlens[b + 1]));
  posenc::detail::require<shape_error>(std::cmp_equal(cu_seqlens[B], tokens), where,
                                       "cu_seqlens: expected the last offset to equal the token count ", tokens,
                                       ", got ", value_of(cu_seqlens[B]));
  posenc::detail::require<shape_error>(offsets.empty() || offsets.size() == B, where,
                                       "offsets: expected one offset per sequence (batch = ", B, ") or none, got ",
                                       offsets.size());
  constexpr std::int64_t limit = std::int64_t{1} << 53;
  for (std::size_t b = 0; b < B; ++b) {
    // 0 <= cu_seqlens[b] <= cu_seqlens[b + 1] <= tokens <= max_extent: the length fits int64
    const auto len = static_cast<std::int64_t>(checked::distance(cu_seqlens[b], cu_seqlens[b + 1]));
    const I zero{0};
    const I o_raw = offsets.empty() ? zero : offsets[b];
    posenc::detail::require(std::cmp_greater_equal(o_raw, 0), where, "offsets[", b, "]: expected a position >= 0, got ",
                            value_of(o_raw));
    posenc::detail::require(std::cmp_less_equal(o_raw, limit - len), where, "offsets[", b,
                            "] + length: expected <= 2^53, got ", value_of(o_raw), " + ", len);
    const auto o = static_cast<std::int64_t>(o_raw);
    posenc::detail::require(opt.max_positions == 0 || static_cast<std::uint64_t>(o + len) <= opt.max_positions, where,
                            "offsets[", b, "] + length of sequence ", b, ": expected <= max_positions = ",
                            opt.max_positions, ", got ", o, " + ", len);
  }
  return p;
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

}  // namespace detail

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

namespace detail {
/// xPos's decay zeta_k = (2k / rotary_dim + gamma) / (1 + gamma), in long double: the one place it
/// is written (rotary::xpos_zeta, the host coefficients of rotary/coefficients.hpp and the device's
/// of device/rotary.hpp, which take log(zeta_k) / scale_base). Arguments checked by the callers.
inline numeric::wide xpos_zeta_wide(std::size_t k, std::size_t rotary_dim, numeric::wide gamma) noexcept {
  return (static_cast<numeric::wide>(2 * k) / static_cast<numeric::wide>(rotary_dim) + gamma) / (1 + gamma);
}
}  // namespace detail

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
  return static_cast<double>(detail::xpos_zeta_wide(k, rotary_dim, gamma));
}

}  // namespace posenc::rotary
