// SPDX-License-Identifier: MIT
// Multi-axis rotary position embeddings: the 1-D rotation with a different position per pair.
// Pair k of the rotated part of each head turns by the angle
//
//   theta_k(t) = position[axis[k]][t] * omega_k
//
// where position is an [A, ...] array of signed integer coordinates (A = 1..4 axes: temporal,
// height, width of an M-RoPE model; the axes of a diffusion transformer's grid) and omega_k the
// exact per-pair frequency of rotary::frequencies. What differs between models is only which axis
// turns which pair (rotary/mrope.hpp: Qwen2-VL's contiguous sections, Qwen3-VL's interleaving, ...)
// and how positions are computed from the text/image/video layout; the exact phases, the
// pair-rotation kernels, storage types and layouts are the 1-D path's (rotary/apply.hpp).
//
//   rotary::axis_frequencies af = rotary::mrope(128, 1e6, {16, 24, 24});   // rotary/mrope.hpp
//   rotary::table<float>(af, rotary::axis_positions(ids, 3))                // [tokens] rows
//   rotary::apply_inplace(q, k, af, rotary::axis_positions(ids, 3), opt)    // ids [3, batch, seq] or [3, seq]
//   rotary::apply_ragged_inplace(q, k, rotary::axis_positions(ids, 3), af, opt)  // ids [3, tokens]
//
// Positions: int64, negative allowed (Qwen-Image centres its grids), |p| < 2^53 and, when
// apply_options::max_positions is set, |p| < max_positions. Precision: as the 1-D path states it
// for an explicit position (rotary/apply.hpp, rotary/table.hpp), pair by pair: the phase of
// pair k is p * omega_k for its axis' p.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <posenc/core/checked.hpp>
#include <posenc/core/error.hpp>
#include <posenc/numeric/phase.hpp>
#include <posenc/rotary/frequencies.hpp>
#include <posenc/rotary/table.hpp>

namespace posenc::rotary {

/// The most position axes a multi-axis rotation takes.
inline constexpr std::size_t max_axes = 4;

/// Pair k of the rotated part of each head turns by position[axis[k]] * omega_k.
/// Thread safety: shareable const (a value type).
struct axis_frequencies {
  rotary::frequencies freqs;       ///< one exact frequency per pair (inv_freq + inv_freq_lo), attention_factor
  std::vector<std::uint8_t> axis;  ///< axis[k] < axes: which position coordinate turns pair k; size == freqs.inv_freq.size()
  std::size_t axes = 1;            ///< number of position axes A, 1..max_axes
  /// Empty: pair k rotates by axis[k] (the rotation above). Else split-half (HunYuan-VL's xdrope):
  /// the first column a of pair k takes cos/sin of position[axis[k]] * omega_k (angle A), the
  /// second b those of position[axis_second[k]] * omega_k (angle B), a' = a cos A - b sin A,
  /// b' = b cos B + a sin B; size == freqs.inv_freq.size(), every entry < axes.
  std::vector<std::uint8_t> axis_second;
};

/// Check axis frequencies before use: the frequencies as rotary::validate checks them, 1 <= axes
/// <= max_axes, one axis per pair, every axis[k] < axes. Throws invalid_argument (shape_error for
/// an axis map of another length) naming `what`. Returns the number of pairs.
inline std::size_t validate(const axis_frequencies& f, std::string_view where, std::string_view what = "freqs") {
  const std::size_t pairs = rotary::validate(f.freqs, where, what);
  posenc::detail::require(f.axes >= 1 && f.axes <= max_axes, where, what, ".axes: expected 1..", max_axes,
                          " position axes, got ", f.axes);
  posenc::detail::require<shape_error>(f.axis.size() == pairs, where, what, ".axis: expected one axis per pair (",
                                       pairs, "), got ", f.axis.size());
  for (std::size_t k = 0; k < pairs; ++k)
    posenc::detail::require(f.axis[k] < f.axes, where, what, ".axis[", k, "]: expected an axis < axes = ", f.axes,
                            ", got ", static_cast<unsigned>(f.axis[k]));
  if (!f.axis_second.empty()) {
    posenc::detail::require<shape_error>(f.axis_second.size() == pairs, where, what,
                                         ".axis_second: expected none or one axis per pair (", pairs, "), got ",
                                         f.axis_second.size());
    for (std::size_t k = 0; k < pairs; ++k)
      posenc::detail::require(f.axis_second[k] < f.axes, where, what, ".axis_second[", k,
                              "]: expected an axis < axes = ", f.axes, ", got ",
                              static_cast<unsigned>(f.axis_second[k]));
  }
  return pairs;
}

/// Multi-axis positions, row-major [axes, n]: row a holds coordinate a of every token (n = seq
/// (shared by every sequence) or batch * seq for dense q/k, n = tokens for ragged q/k), as
/// transformers' position_ids [3, batch, seq]. A distinct type so that overloads stay unambiguous.
struct axis_positions {
  axis_positions(std::span<const std::int64_t> v, std::size_t a) noexcept : ids(v), axes(a) {}
  std::span<const std::int64_t> ids;
  std::size_t axes;
};

/// One axis: every pair turned by the same coordinate (the 1-D rotation as a multi-axis one).
inline axis_frequencies single_axis(frequencies f) {
  axis_frequencies a;
  a.axis.assign(f.inv_freq.size(), 0);
  a.freqs = std::move(f);
  a.axes = 1;
  return a;
}

namespace detail {

/// The largest |position| a multi-axis rotation takes: positions p with |p| < 2^53 (exact in double).
inline constexpr std::int64_t max_axis_position = std::int64_t{1} << 53;

/// Check multi-axis positions against the frequencies: pos.axes == f.axes, pos.ids.size() one of
/// A * n for n in `counts` (the accepted per-axis lengths, described by `shape`), every position
/// |p| < 2^53 and |p| < max_positions when max_positions > 0. Returns n.
inline std::size_t check_axis_positions(const axis_positions& pos, const axis_frequencies& f,
                                        std::span<const std::size_t> counts, std::string_view shape,
                                        std::uint64_t max_positions, std::string_view where) {
  posenc::detail::require(pos.axes == f.axes, where, "positions.axes: expected freqs.axes = ", f.axes, ", got ",
                          pos.axes);
  std::size_t n = 0;
  bool found = false;
  for (const std::size_t c : counts)
    if (!found && c <= std::numeric_limits<std::size_t>::max() / f.axes && pos.ids.size() == f.axes * c) {
      n = c;
      found = true;
    }
  if (!found) {
    std::string expected;
    for (std::size_t i = 0; i < counts.size(); ++i)
      expected += (i ? " or " : "") + std::to_string(f.axes) + " * " + std::to_string(counts[i]);
    posenc::detail::fail<shape_error>(where, "positions: expected ", shape, " = ", expected, " values, got ",
                                      pos.ids.size());
  }
  const std::int64_t bound =
      max_positions > 0 && max_positions < static_cast<std::uint64_t>(max_axis_position)
          ? static_cast<std::int64_t>(max_positions)
          : max_axis_position;
  for (std::size_t i = 0; i < pos.ids.size(); ++i) {
    const std::int64_t p = pos.ids[i];
    posenc::detail::require(p > -bound && p < bound, where, "positions[", i / (n == 0 ? 1 : n), ", ",
                            i % (n == 0 ? 1 : n), "]: expected |position| < ",
                            bound == max_axis_position ? std::string("2^53") : std::to_string(bound) + " (max_positions)",
                            ", got ", p);
  }
  return n;
}

}  // namespace detail

/// The cos/sin tables of multi-axis positions ([axes, n] row-major, n = pos.ids.size() / axes):
/// row i, column k (pairs) or k and k + m (duplicated, m pairs) holds attention_factor times
/// cos/sin of pos[axis[k]][i] * omega_k. Every entry is evaluated directly, with the 1-D tables'
/// precision for an explicit position (rotary/table.hpp): double within 0.5 ulp + 2^-9 ulp of the
/// exact phase's value (numeric::sincos_phase, the rule's exact frequency), float the rounding of
/// the double value of the long double phase (<= 0.5 ulp + 2^-28 ulp), the half types that float
/// rounded once more, long double ~1e-17 absolute. Split-half frequencies (axis_second set) give
/// column k + m the cos/sin of pos[axis_second[k]][i] * omega_k (transformers' xdrope tables) and
/// need table_layout::duplicated. Throws invalid_argument naming the argument for bad frequencies
/// or positions (|p| < 2^53).
template <class T>
  requires detail::table_type_v<T>
cos_sin_table<T> table(const axis_frequencies& f, axis_positions pos, table_layout lay = table_layout::pairs) {
  constexpr std::string_view where = "rotary::table";
  const std::size_t m = rotary::validate(f, where, "frequencies");
  posenc::detail::require(lay == table_layout::pairs || lay == table_layout::duplicated, where,
                          "layout: expected table_layout::pairs or table_layout::duplicated");
  const bool split = !f.axis_second.empty();
  posenc::detail::require(!split || lay == table_layout::duplicated, where,
                          "layout: expected table_layout::duplicated for split-half frequencies (axis_second set): "
                          "the two columns of a pair take different angles");
  posenc::detail::require(pos.axes == f.axes && pos.ids.size() % f.axes == 0, where, "positions: expected [",
                          f.axes, ", n] values (frequencies.axes = ", f.axes, "), got ", pos.ids.size(),
                          " values for ", pos.axes, " axes");
  const std::size_t n = pos.ids.size() / f.axes;
  const std::size_t counts[1] = {n};
  (void)detail::check_axis_positions(pos, f, counts, "[axes, n]", 0, where);
  detail::check_factor_fits<T>(f.freqs, where);
  const std::size_t w = table_width(f.freqs, lay);
  cos_sin_table<T> t{posenc::detail::allocate_table<T>(n, w, where, "positions", "table width"),
                     posenc::detail::allocate_table<T>(n, w, where, "positions", "table width")};
  std::vector<numeric::frequency3> w3;
  if constexpr (std::is_same_v<T, double>) {
    w3.resize(m);
    for (std::size_t k = 0; k < m; ++k) w3[k] = frequency3_of(f.freqs, k);
  }
  const long double af = f.freqs.attention_factor;
  for (std::size_t i = 0; i < n; ++i) {
    T* cr = t.cos.data() + i * w;
    T* sr = t.sin.data() + i * w;
    for (std::size_t k = 0; k < m; ++k) {
      const std::int64_t p = pos.ids[f.axis[k] * n + i];
      if constexpr (std::is_same_v<T, double>) {
        numeric::sincos_phase(static_cast<double>(p), 0.0, w3[k], f.freqs.attention_factor, sr[k], cr[k]);
      } else {
        detail::direct_entry(static_cast<numeric::wide>(p) * f.freqs.inv_freq[k], af, sr[k], cr[k]);
      }
    }
    if (!split) {
      detail::duplicate_row(cr, m, lay);
      detail::duplicate_row(sr, m, lay);
      continue;
    }
    for (std::size_t k = 0; k < m; ++k) {
      const std::int64_t p = pos.ids[f.axis_second[k] * n + i];
      if constexpr (std::is_same_v<T, double>) {
        numeric::sincos_phase(static_cast<double>(p), 0.0, w3[k], f.freqs.attention_factor, sr[m + k], cr[m + k]);
      } else {
        detail::direct_entry(static_cast<numeric::wide>(p) * f.freqs.inv_freq[k], af, sr[m + k], cr[m + k]);
      }
    }
  }
  return t;
}

}  // namespace posenc::rotary
