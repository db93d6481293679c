// SPDX-License-Identifier: MIT
// The 2-D RoPE of vision encoders, as transformers 5.23 lays it out: the frequencies
// (rotary::axis_frequencies, rotary/axes.hpp) and int64 positions [2, tokens] of the Qwen2-VL /
// Qwen2.5-VL / Qwen3-VL vision towers (spatial-merge order, Qwen2.5-VL's window order), Pixtral /
// Mistral 3 vision, Llama 4 vision and DINOv3 (docs/diffusion-vision-rope.md, "Vision encoders").
//
// Each splits the head's pairs between a row axis and a column axis:
//  - Qwen-VL (VisionRotaryEmbedding, half layout): pairs j < d/4 turn by row * omega_j, pairs
//    d/4 + j by column * omega_j, omega_j = theta^(-2j / (d/2)) (axes_nd({d/2, d/2}));
//  - Pixtral (half layout): pairs j < d/4 turn by row * omega_{2j}, pairs d/4 + j by
//    column * omega_{2j+1}, omega_k = theta^(-2k/d) (the even frequencies to the rows);
//  - Llama 4 (interleaved): pairs j < d/4 by (column + 1) omega_j, pairs d/4 + j by (row + 1)
//    omega_j, omega_j = theta^(-2j / (d/2)); the class token (last) at (0, 0): angle 0;
//  - DINOv3 (half layout): the patch centre's normalised coordinate c = (2i + 1) / n - 1 times
//    2 pi theta^(-4k/d): posenc writes it exactly as the odd integer p = 2i + 1 - n times the
//    frequency 2 pi theta^(-4k/d) / n (so the frequencies depend on the grid: dinov3_frequencies
//    takes its size). Its training-time augmentations (shift, jitter, rescale of the coordinates)
//    give non-grid coordinates, which integer positions cannot express: posenc covers inference.
// transformers computes all four in float32 (frequencies and phases); posenc's are exact.
#pragma once

#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include <posenc/core/checked.hpp>
#include <posenc/core/error.hpp>
#include <posenc/numeric/extended.hpp>
#include <posenc/rotary/axes/axes.hpp>
#include <posenc/rotary/axes/diffusion.hpp>
#include <posenc/rotary/frequencies.hpp>
#include <posenc/rotary/axes/mrope.hpp>

namespace posenc::rotary {

namespace detail {

/// The (t, h, w) of grids[k] (rotary::vision_grid, rotary/mrope.hpp: transformers' grid_thw row,
/// in patches) as sizes; throws invalid_argument naming grids[k] for a negative one.
inline std::array<std::size_t, 3> grid_dims(std::span<const vision_grid> grids, std::size_t k, std::string_view where) {
  const vision_grid& g = grids[k];
  posenc::detail::require(g.t >= 0 && g.h >= 0 && g.w >= 0, where, "grids[", k,
                          "]: expected (t, h, w) >= 0, got (", g.t, ", ", g.h, ", ", g.w, ")");
  return {static_cast<std::size_t>(g.t), static_cast<std::size_t>(g.h), static_cast<std::size_t>(g.w)};
}

inline void require_vision_head_dim(std::size_t head_dim, std::string_view where) {
  posenc::detail::require(head_dim >= 4 && head_dim % 4 == 0, where,
                          "head_dim: expected a multiple of 4 >= 4 (two axes of (cos, sin) pairs), got ", head_dim);
  (void)checked::extent(head_dim, where, "head_dim");
}

inline void require_theta(double theta, std::string_view where) {
  posenc::detail::require<non_finite_error>(std::isfinite(theta), where, "theta: expected a finite theta > 1, got ",
                                            theta);
  posenc::detail::require(theta > 1, where, "theta: expected a finite theta > 1, got ", theta);
}

/// The token count of the grids (each t h w), checked, and 2 * tokens.
inline std::size_t vision_tokens(std::span<const vision_grid> grids, std::string_view where) {
  std::size_t n = 0;
  for (std::size_t k = 0; k < grids.size(); ++k) {
    const auto [t, h, w] = grid_dims(grids, k, where);
    n = checked::add(n, detail::grid_cells(t, h, w, where), where, "tokens");
  }
  (void)checked::elements(n, 2, where, "2 * tokens");
  return n;
}

/// Each grid's h and w a multiple of the merge size m (after vision_tokens checked them >= 0).
inline void require_merge_multiples(std::span<const vision_grid> grids, std::size_t m, std::string_view where) {
  for (std::size_t k = 0; k < grids.size(); ++k) {
    const auto [t, h, w] = grid_dims(grids, k, where);
    posenc::detail::require(h % m == 0 && w % m == 0, where, "grids[", k,
                            "]: expected h and w multiples of spatial_merge_size = ", m, ", got (", t, ", ", h, ", ", w,
                            ")");
  }
}

}  // namespace detail

/// The Qwen2-VL / Qwen2.5-VL / Qwen3-VL vision towers' frequencies (head_dim = hidden_size /
/// num_heads: 80 for Qwen2/2.5-VL, 72 for Qwen3-VL; theta 10000), for the half layout.
inline axis_frequencies qwen_vl_vision_frequencies(std::size_t head_dim, double theta = 10000.0) {
  constexpr std::string_view where = "rotary::qwen_vl_vision_frequencies";
  detail::require_vision_head_dim(head_dim, where);
  const std::array<std::size_t, 2> dims{head_dim / 2, head_dim / 2};
  return axes_nd(dims, theta, where);
}

/// The (row, column) positions [2, tokens] of Qwen-VL's vision tokens in transformers'
/// get_vision_position_ids order: per grid, the spatial_merge_size x spatial_merge_size blocks
/// row-major, the patches of a block row-major inside it, the whole repeated for each of the t
/// temporal patches; grids concatenated. Throws invalid_argument naming spatial_merge_size (0) or
/// grids[k] (h or w not a multiple of it).
inline std::vector<std::int64_t> qwen_vl_vision_positions(std::span<const vision_grid> grids,
                                                          std::size_t spatial_merge_size = 2) {
  constexpr std::string_view where = "rotary::qwen_vl_vision_positions";
  posenc::detail::require(spatial_merge_size >= 1, where, "spatial_merge_size: expected >= 1, got ", spatial_merge_size);
  const std::size_t m = spatial_merge_size;
  const std::size_t n = detail::vision_tokens(grids, where);
  detail::require_merge_multiples(grids, m, where);
  auto ids = checked::make_vector<std::int64_t>(2 * n, where, "2 * tokens");
  std::size_t c = 0;
  for (std::size_t k = 0; k < grids.size(); ++k) {
    const auto [gt, gh, gw] = detail::grid_dims(grids, k, where);
    for (std::size_t t = 0; t < gt; ++t)
      for (std::size_t bh = 0; bh < gh / m; ++bh)
        for (std::size_t bw = 0; bw < gw / m; ++bw)
          for (std::size_t i = 0; i < m; ++i)
            for (std::size_t j = 0; j < m; ++j, ++c) {
              ids[c] = static_cast<std::int64_t>(bh * m + i);
              ids[n + c] = static_cast<std::int64_t>(bw * m + j);
            }
  }
  return ids;
}

/// Qwen2.5-VL's window attention order (transformers' get_vision_window_index): window_index
/// lists the merged units (spatial_merge_size^2 consecutive tokens) window by window,
/// cu_window_seqlens the windows' token boundaries (repeated boundaries removed), token_order
/// the resulting order of the tokens (token_order[i] = the token at place i).
struct vision_window_order {
  std::vector<std::int64_t> window_index;
  std::vector<std::int32_t> cu_window_seqlens;
  std::vector<std::int64_t> token_order;
};

/// The window order of Qwen2.5-VL's vision tokens for the grids: windows of window_size /
/// spatial_merge_size / patch_size merged units a side (112 / 2 / 14 = 4). Throws
/// invalid_argument naming spatial_merge_size, patch_size or window_size when the window has no
/// unit, and grids[k] as qwen_vl_vision_positions does.
inline vision_window_order qwen2_5_vl_window_order(std::span<const vision_grid> grids, std::size_t spatial_merge_size = 2,
                                                   std::size_t window_size = 112, std::size_t patch_size = 14) {
  constexpr std::string_view where = "rotary::qwen2_5_vl_window_order";
  posenc::detail::require(spatial_merge_size >= 1, where, "spatial_merge_size: expected >= 1, got ", spatial_merge_size);
  posenc::detail::require(patch_size >= 1, where, "patch_size: expected >= 1, got ", patch_size);
  const std::size_t m = spatial_merge_size, v = window_size / m / patch_size;
  posenc::detail::require(v >= 1, where, "window_size: expected at least spatial_merge_size * patch_size = ",
                          m * patch_size, ", got ", window_size);
  const std::size_t n = detail::vision_tokens(grids, where);
  detail::require_merge_multiples(grids, m, where);
  (void)checked::cast<std::int32_t>(n, where, "tokens");
  vision_window_order o;
  o.cu_window_seqlens.push_back(0);
  std::size_t base = 0;
  const std::size_t unit = m * m;
  for (std::size_t k = 0; k < grids.size(); ++k) {
    const auto [g_t, g_h, g_w] = detail::grid_dims(grids, k, where);
    const std::size_t gh = g_h / m, gw = g_w / m;
    const std::size_t nh = gh / v + 1, nw = gw / v + 1;  // transformers pads by v - g % v (a full window when g % v == 0)
    for (std::size_t t = 0; t < g_t; ++t)
      for (std::size_t a = 0; a < nh; ++a)
        for (std::size_t b = 0; b < nw; ++b) {
          std::size_t count = 0;
          for (std::size_t i = a * v; i < std::min(gh, (a + 1) * v); ++i)
            for (std::size_t j = b * v; j < std::min(gw, (b + 1) * v); ++j, ++count)
              o.window_index.push_back(static_cast<std::int64_t>(base + (t * gh + i) * gw + j));
          const std::int32_t end = o.cu_window_seqlens.back() + static_cast<std::int32_t>(count * unit);
          if (end != o.cu_window_seqlens.back()) o.cu_window_seqlens.push_back(end);
        }
    base += g_t * gh * gw;
  }
  o.token_order.reserve(n);
  for (const std::int64_t u : o.window_index)
    for (std::size_t r = 0; r < unit; ++r) o.token_order.push_back(u * static_cast<std::int64_t>(unit) + static_cast<std::int64_t>(r));
  return o;
}

/// positions [axes, n] reordered: column i of the result is column order[i] of positions.
/// Throws shape_error naming positions (not axes x order.size() values) and invalid_argument
/// naming order (an index outside [0, n)).
inline std::vector<std::int64_t> reorder_positions(std::span<const std::int64_t> positions, std::size_t axes,
                                                   std::span<const std::int64_t> order) {
  constexpr std::string_view where = "rotary::reorder_positions";
  posenc::detail::require(axes >= 1 && axes <= max_axes, where, "axes: expected 1..", max_axes, ", got ", axes);
  const std::size_t n = order.size();
  posenc::detail::require<shape_error>(positions.size() == checked::mul(axes, n, where, "axes * order.size()"), where,
                                       "positions: expected axes * order.size() = ", axes * n, " values, got ",
                                       positions.size());
  auto out = checked::make_vector<std::int64_t>(axes * n, where, "axes * order.size()");
  for (std::size_t i = 0; i < n; ++i) {
    posenc::detail::require(order[i] >= 0 && static_cast<std::size_t>(order[i]) < n, where, "order[", i,
                            "]: expected an index in [0, ", n, "), got ", order[i]);
    for (std::size_t a = 0; a < axes; ++a) out[a * n + i] = positions[a * n + static_cast<std::size_t>(order[i])];
  }
  return out;
}

/// Pixtral / Mistral 3 vision (PixtralVisionRotaryEmbedding: head_dim 64, theta 10000): pairs
/// j < d/4 with omega_{2j} (rows), d/4 + j with omega_{2j+1} (columns), omega_k = theta^(-2k/d);
/// the half layout.
inline axis_frequencies pixtral_vision_frequencies(std::size_t head_dim = 64, double theta = 10000.0) {
  constexpr std::string_view where = "rotary::pixtral_vision_frequencies";
  detail::require_vision_head_dim(head_dim, where);
  detail::require_theta(theta, where);
  const auto w = detail::default_omega(head_dim / 2, head_dim, detail::exact_log(static_cast<numeric::wide>(theta)));
  exact_frequencies e;
  axis_frequencies out;
  for (std::size_t a = 0; a < 2; ++a)
    for (std::size_t j = 0; j < head_dim / 4; ++j) {
      e.omega.push_back(w[2 * j + a]);
      out.axis.push_back(static_cast<std::uint8_t>(a));
    }
  out.freqs = to_frequencies(e);
  out.axes = 2;
  return out;
}

/// Pixtral's positions [2, tokens]: each image's (row, column) patches row-major, images
/// concatenated (grids[k].t must be 1).
inline std::vector<std::int64_t> pixtral_vision_positions(std::span<const vision_grid> grids) {
  constexpr std::string_view where = "rotary::pixtral_vision_positions";
  const std::size_t n = detail::vision_tokens(grids, where);
  for (std::size_t k = 0; k < grids.size(); ++k)
    posenc::detail::require(grids[k].t == 1, where, "grids[", k, "].t: expected 1 (images), got ", grids[k].t);
  auto ids = checked::make_vector<std::int64_t>(2 * n, where, "2 * tokens");
  std::size_t c = 0;
  for (std::size_t k = 0; k < grids.size(); ++k) {
    const auto [gt, gh, gw] = detail::grid_dims(grids, k, where);
    (void)gt;
    for (std::size_t i = 0; i < gh; ++i)
      for (std::size_t j = 0; j < gw; ++j, ++c) {
        ids[c] = static_cast<std::int64_t>(i);
        ids[n + c] = static_cast<std::int64_t>(j);
      }
  }
  return ids;
}

/// Llama 4 vision (Llama4VisionRotaryEmbedding: head_dim 88, theta 10000), the interleaved
/// layout: axis 0 the column, axis 1 the row.
inline axis_frequencies llama4_vision_frequencies(std::size_t head_dim = 88, double theta = 10000.0) {
  constexpr std::string_view where = "rotary::llama4_vision_frequencies";
  detail::require_vision_head_dim(head_dim, where);
  const std::array<std::size_t, 2> dims{head_dim / 2, head_dim / 2};
  return axes_nd(dims, theta, where);
}

/// Llama 4's positions [2, side^2 + 1] (side = image_size / patch_size: 336 / 14 = 24): patch
/// (row, column) at (column + 1, row + 1), row-major, then the class token at (0, 0).
inline std::vector<std::int64_t> llama4_vision_positions(std::size_t side = 24) {
  constexpr std::string_view where = "rotary::llama4_vision_positions";
  const std::size_t cells = detail::grid_cells(1, side, side, where);
  const std::size_t n = cells + 1;
  auto ids = checked::make_vector<std::int64_t>(2 * n, where, "2 * tokens");  // the class token: zeros
  for (std::size_t c = 0; c < cells; ++c) {
    ids[c] = static_cast<std::int64_t>(c % side + 1);
    ids[n + c] = static_cast<std::int64_t>(c / side + 1);
  }
  return ids;
}

/// DINOv3 (DINOv3ViTRopePositionEmbedding, rope_theta 100) for a grid_h x grid_w patch grid, the
/// half layout: pairs k < d/4 turn by p_row * 2 pi theta^(-4k/d) / grid_h, pairs d/4 + k by
/// p_col * 2 pi theta^(-4k/d) / grid_w, with the integer positions of dinov3_positions: exactly
/// transformers' angle 2 pi c theta^(-4k/d) at the patch centres c = p / n. Throws
/// invalid_argument naming head_dim, theta, grid_h or grid_w (0).
inline axis_frequencies dinov3_frequencies(std::size_t head_dim, std::size_t grid_h, std::size_t grid_w,
                                           double theta = 100.0) {
  constexpr std::string_view where = "rotary::dinov3_frequencies";
  detail::require_vision_head_dim(head_dim, where);
  detail::require_theta(theta, where);
  posenc::detail::require(grid_h >= 1, where, "grid_h: expected >= 1 patch, got ", grid_h);
  posenc::detail::require(grid_w >= 1, where, "grid_w: expected >= 1 patch, got ", grid_w);
  (void)checked::extent(grid_h, where, "grid_h");
  (void)checked::extent(grid_w, where, "grid_w");
  const auto w = detail::default_omega(head_dim / 4, head_dim / 2, detail::exact_log(static_cast<numeric::wide>(theta)));
  const exact_value two_pi = numeric::two_pi_ff<numeric::wide>();
  exact_frequencies e;
  axis_frequencies out;
  for (std::size_t a = 0; a < 2; ++a) {
    const exact_value scale = two_pi / detail::exact(static_cast<numeric::wide>(a == 0 ? grid_h : grid_w));
    for (std::size_t k = 0; k < head_dim / 4; ++k) {
      e.omega.push_back(w[k] * scale);
      out.axis.push_back(static_cast<std::uint8_t>(a));
    }
  }
  out.freqs = to_frequencies(e);
  out.axes = 2;
  return out;
}

/// DINOv3's positions [2, grid_h grid_w] of the patch tokens (row-major): (2i + 1 - grid_h,
/// 2j + 1 - grid_w), the patch centres times the grid size. The prefix tokens (class and
/// registers) are not rotated.
inline std::vector<std::int64_t> dinov3_positions(std::size_t grid_h, std::size_t grid_w) {
  constexpr std::string_view where = "rotary::dinov3_positions";
  const std::size_t n = detail::grid_cells(1, grid_h, grid_w, where);
  auto ids = checked::make_vector<std::int64_t>(2 * n, where, "2 * tokens");
  for (std::size_t c = 0; c < n; ++c) {
    ids[c] = 2 * static_cast<std::int64_t>(c / grid_w) + 1 - static_cast<std::int64_t>(grid_h);
    ids[n + c] = 2 * static_cast<std::int64_t>(c % grid_w) + 1 - static_cast<std::int64_t>(grid_w);
  }
  return ids;
}

}  // namespace posenc::rotary
