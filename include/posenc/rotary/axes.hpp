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
#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include <posenc/core/error.hpp>
#include <posenc/rotary/frequencies.hpp>

namespace posenc::rotary {

/// The most position axes a multi-axis rotation takes.
inline constexpr std::size_t max_axes = 4;

/// Pair k of the rotated part of each head turns by position[axis[k]] * omega_k.
/// Thread safety: shareable const (a value type).
struct axis_frequencies {
  rotary::frequencies freqs;       ///< one exact frequency per pair (inv_freq + inv_freq_lo), attention_factor
  std::vector<std::uint8_t> axis;  ///< axis[k] < axes: which position coordinate turns pair k; size == freqs.inv_freq.size()
  std::size_t axes = 1;            ///< number of position axes A, 1..max_axes
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

}  // namespace posenc::rotary
