// SPDX-License-Identifier: MIT
// The N-axis RoPE of diffusion transformers, as diffusers 0.42 lays it out: the frequencies
// (rotary::axis_frequencies, rotary/axes.hpp) and the int64 position grids [A, tokens] of FLUX,
// Wan 2.x, HunyuanVideo and Qwen-Image (docs/diffusion-vision-rope.md).
//
// Every model splits the rotated head into A = 3 consecutive blocks, axis a owning axes_dim[a]
// columns (axes_dim[a] / 2 pairs), and turns pair j of block a by p_a * omega_{a,j} with
//
//   omega_{a,j} = theta^(-2j / axes_dim[a]),  j < axes_dim[a] / 2,
//
// on interleaved (real, imag) pairs (columns 2k, 2k + 1): diffusers' get_1d_rotary_pos_embed with
// repeat_interleave_real (FLUX, HunyuanVideo), Wan's unflatten(-1, (-1, 2)) and Qwen-Image's
// view_as_complex all pair neighbouring columns. The frequencies are exact (rotary/frequencies.hpp:
// inv_freq + inv_freq_lo, detail::default_omega). diffusers forms FLUX's and Wan's in float64 from
// the same exponent 2j / axes_dim (torch.arange(0, dim, 2) / dim): within a few ulp of these.
// HunyuanVideo's and Qwen-Image's are computed in float32 by diffusers (docs/errata.md).
//
// Positions [A, tokens] (row a = coordinate a of every token, rotary::axis_positions' layout;
// diffusers' ids are the transpose, [tokens, A]):
//  - FLUX: text tokens at (0, 0, 0), then the image's patches (0, i, j) row-major (FluxPipeline's
//    txt_ids and _prepare_latent_image_ids, concatenated as FluxTransformer2DModel does);
//  - Wan, HunyuanVideo: (f, i, j) over the frames x height x width patch grid, row-major;
//  - Qwen-Image (MSRoPE): each image's patches (idx + f, i - ceil(h / 2), j - ceil(w / 2)) with
//    scale_rope (centred, negative above and left of the centre) or (idx + f, i, j) without; then
//    the text tokens at (m + t, m + t, m + t), m = max over the images of max(h / 2, w / 2)
//    (scale_rope; max(h, w) without).
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include <posenc/core/checked.hpp>
#include <posenc/core/error.hpp>
#include <posenc/rotary/axes/axes.hpp>
#include <posenc/rotary/frequencies.hpp>

namespace posenc::rotary {

/// Concatenated per-axis frequencies: axis a owns the next axes_dim[a] / 2 pairs, with
/// omega_{a,j} = theta^(-2j / axes_dim[a]) (diffusers' EmbedND / FluxPosEmbed, and the 3-D
/// RoPE of Wan, HunyuanVideo, Qwen-Image). Throws invalid_argument naming axes_dim (1..max_axes
/// entries, each even and >= 2) or theta (finite and > 1; non_finite_error for NaN/Inf).
inline axis_frequencies axes_nd(std::span<const std::size_t> axes_dim, double theta,
                                std::string_view where = "rotary::axes_nd") {
  posenc::detail::require(!axes_dim.empty() && axes_dim.size() <= max_axes, where, "axes_dim: expected 1..", max_axes,
                          " axes, got ", axes_dim.size());
  posenc::detail::require<non_finite_error>(std::isfinite(theta), where, "theta: expected a finite theta > 1, got ",
                                            theta);
  posenc::detail::require(theta > 1, where, "theta: expected a finite theta > 1, got ", theta);
  std::size_t pairs = 0;
  for (std::size_t a = 0; a < axes_dim.size(); ++a) {
    posenc::detail::require(axes_dim[a] >= 2 && axes_dim[a] % 2 == 0, where, "axes_dim[", a,
                            "]: expected an even dimension >= 2, got ", axes_dim[a]);
    (void)checked::extent(axes_dim[a], where, "axes_dim");
    pairs = checked::add(pairs, axes_dim[a] / 2, where, "sum of axes_dim / 2");
  }
  (void)checked::extent(pairs, where, "sum of axes_dim / 2");
  exact_frequencies e;
  e.omega.reserve(pairs);
  axis_frequencies out;
  out.axis.reserve(pairs);
  const exact_value log_theta = detail::exact_log(static_cast<numeric::wide>(theta));
  for (std::size_t a = 0; a < axes_dim.size(); ++a) {
    const auto w = detail::default_omega(axes_dim[a] / 2, axes_dim[a], log_theta);
    e.omega.insert(e.omega.end(), w.begin(), w.end());
    out.axis.insert(out.axis.end(), w.size(), static_cast<std::uint8_t>(a));
  }
  out.freqs = to_frequencies(e);
  out.axes = axes_dim.size();
  return out;
}

/// FLUX.1 (FluxTransformer2DModel: axes_dims_rope (16, 56, 56), theta 10000; head_dim 128).
inline axis_frequencies flux_frequencies(std::span<const std::size_t> axes_dim = std::array<std::size_t, 3>{16, 56, 56},
                                         double theta = 10000.0) {
  return axes_nd(axes_dim, theta, "rotary::flux_frequencies");
}

/// Wan 2.x (WanRotaryPosEmbed): h_dim = w_dim = 2 (head_dim / 6), t_dim = head_dim - h_dim - w_dim,
/// theta 10000 (head_dim 128: 44, 42, 42). Throws invalid_argument naming head_dim when it is
/// odd or below 6.
inline axis_frequencies wan_frequencies(std::size_t head_dim, double theta = 10000.0) {
  constexpr std::string_view where = "rotary::wan_frequencies";
  posenc::detail::require(head_dim >= 6 && head_dim % 2 == 0, where, "head_dim: expected an even head_dim >= 6, got ",
                          head_dim);
  (void)checked::extent(head_dim, where, "head_dim");
  const std::size_t hw = 2 * (head_dim / 6);
  const std::array<std::size_t, 3> dims{head_dim - 2 * hw, hw, hw};
  return axes_nd(dims, theta, where);
}

/// HunyuanVideo (HunyuanVideoRotaryPosEmbed: rope_axes_dim (16, 56, 56), theta 256).
inline axis_frequencies hunyuan_video_frequencies(
    std::span<const std::size_t> rope_dim = std::array<std::size_t, 3>{16, 56, 56}, double theta = 256.0) {
  return axes_nd(rope_dim, theta, "rotary::hunyuan_video_frequencies");
}

/// Qwen-Image (QwenEmbedRope: axes_dims_rope (16, 56, 56), theta 10000).
inline axis_frequencies qwen_image_frequencies(
    std::span<const std::size_t> axes_dim = std::array<std::size_t, 3>{16, 56, 56}, double theta = 10000.0) {
  return axes_nd(axes_dim, theta, "rotary::qwen_image_frequencies");
}

namespace detail {

/// Writes the (f, i, j) coordinates of a frames x height x width grid, row-major, at column
/// `at` of a [3, n] array, each coordinate plus its offset.
inline void write_grid3(std::vector<std::int64_t>& ids, std::size_t n, std::size_t at, std::size_t frames,
                        std::size_t height, std::size_t width, std::array<std::int64_t, 3> offset) {
  // frames * height * width <= n - at (grid_cells checked the product); bounded by the array's
  // own size as well, so that g++ -O3 does not analyse this loop for the constant arguments of a
  // call that the checks above rejected (-Waggressive-loop-optimizations)
  const std::size_t cells = std::min(frames * height * width, ids.size() / 3 - std::min(at, ids.size() / 3));
  std::int64_t* pf = ids.data() + at;
  std::int64_t* ph = pf + n;
  std::int64_t* pw = ph + n;
  std::size_t f = 0, i = 0, j = 0;
  for (std::size_t c = 0; c < cells; ++c) {
    pf[c] = static_cast<std::int64_t>(f) + offset[0];
    ph[c] = static_cast<std::int64_t>(i) + offset[1];
    pw[c] = static_cast<std::int64_t>(j) + offset[2];
    if (++j == width) {
      j = 0;
      if (++i == height) {
        i = 0;
        ++f;
      }
    }
  }
}

inline std::size_t grid_cells(std::size_t frames, std::size_t height, std::size_t width, std::string_view where) {
  (void)checked::extent(frames, where, "frames");
  (void)checked::extent(height, where, "height");
  (void)checked::extent(width, where, "width");
  const std::size_t n = checked::elements(checked::mul(frames, height, where, "frames * height"), width, where,
                                          "frames * height * width");
  (void)checked::elements(n, 3, where, "3 * tokens");
  return n;
}

}  // namespace detail

/// The (f, i, j) positions [3, frames height width] of a patch grid, row-major (Wan's and
/// HunyuanVideo's RoPE grid; frames, height, width in patches).
inline std::vector<std::int64_t> grid_positions_3d(std::size_t frames, std::size_t height, std::size_t width) {
  constexpr std::string_view where = "rotary::grid_positions_3d";
  const std::size_t n = detail::grid_cells(frames, height, width, where);
  auto ids = checked::make_vector<std::int64_t>(3 * n, where, "3 * tokens");
  detail::write_grid3(ids, n, 0, frames, height, width, {0, 0, 0});
  return ids;
}

/// FLUX's ids [3, text_tokens + height width]: text_tokens rows of (0, 0, 0) (txt_ids), then
/// (0, i, j) for the height x width patches, row-major (img_ids). height and width in patches:
/// flux_patches(pixels) of the image (1024 x 1024: 64 x 64).
inline std::vector<std::int64_t> flux_positions(std::size_t text_tokens, std::size_t height, std::size_t width) {
  constexpr std::string_view where = "rotary::flux_positions";
  (void)checked::extent(text_tokens, where, "text_tokens");
  const std::size_t img = detail::grid_cells(1, height, width, where);
  const std::size_t n = checked::add(text_tokens, img, where, "text_tokens + height * width");
  (void)checked::elements(n, 3, where, "3 * tokens");
  auto ids = checked::make_vector<std::int64_t>(3 * n, where, "3 * tokens");  // zeros: the text tokens
  detail::write_grid3(ids, n, text_tokens, 1, height, width, {0, 0, 0});
  return ids;
}

/// The patches along one side of a FLUX image of `pixels` pixels (FluxPipeline:
/// 2 (pixels / (2 vae_scale_factor)) latent rows, packed 2 x 2): pixels / (2 vae_scale_factor).
/// Throws invalid_argument naming vae_scale_factor when it is 0.
inline std::size_t flux_patches(std::size_t pixels, std::size_t vae_scale_factor = 8) {
  constexpr std::string_view where = "rotary::flux_patches";
  posenc::detail::require(vae_scale_factor >= 1, where, "vae_scale_factor: expected >= 1, got ", vae_scale_factor);
  return pixels / checked::mul(vae_scale_factor, std::size_t{2}, where, "2 * vae_scale_factor");
}

/// Wan's positions [3, tokens] for latents of latent_frames x latent_height x latent_width and
/// patch_size (p_t, p_h, p_w) (Wan 2.1/2.2: (1, 2, 2)): the grid of (latent_frames / p_t,
/// latent_height / p_h, latent_width / p_w) patches (WanRotaryPosEmbed.forward). Throws
/// invalid_argument naming patch_size for a zero patch, and naming the latent size whose patch
/// count reaches max_seq_len (1024: the module's precomputed table has no row for it).
inline std::vector<std::int64_t> wan_positions(std::size_t latent_frames, std::size_t latent_height,
                                               std::size_t latent_width,
                                               std::array<std::size_t, 3> patch_size = {1, 2, 2},
                                               std::size_t max_seq_len = 1024) {
  constexpr std::string_view where = "rotary::wan_positions";
  posenc::detail::require(patch_size[0] >= 1 && patch_size[1] >= 1 && patch_size[2] >= 1, where,
                          "patch_size: expected patches >= 1, got (", patch_size[0], ", ", patch_size[1], ", ",
                          patch_size[2], ")");
  const std::array<std::size_t, 3> n{latent_frames / patch_size[0], latent_height / patch_size[1],
                                     latent_width / patch_size[2]};
  constexpr std::array<const char*, 3> names{"latent_frames", "latent_height", "latent_width"};
  for (std::size_t a = 0; a < 3; ++a)
    posenc::detail::require(n[a] <= max_seq_len, where, names[a], ": expected at most max_seq_len = ", max_seq_len,
                            " patches, got ", n[a]);
  const std::size_t cells = detail::grid_cells(n[0], n[1], n[2], where);
  auto ids = checked::make_vector<std::int64_t>(3 * cells, where, "3 * tokens");
  detail::write_grid3(ids, cells, 0, n[0], n[1], n[2], {0, 0, 0});
  return ids;
}

/// HunyuanVideo's positions [3, tokens] for latents of latent_frames x latent_height x
/// latent_width: the grid of (latent_frames / patch_size_t, latent_height / patch_size,
/// latent_width / patch_size) patches (HunyuanVideoRotaryPosEmbed.forward; patch_size 2,
/// patch_size_t 1). Only the video tokens are rotated (the text tokens are not). Throws
/// invalid_argument naming patch_size or patch_size_t when 0.
inline std::vector<std::int64_t> hunyuan_video_positions(std::size_t latent_frames, std::size_t latent_height,
                                                         std::size_t latent_width, std::size_t patch_size = 2,
                                                         std::size_t patch_size_t = 1) {
  constexpr std::string_view where = "rotary::hunyuan_video_positions";
  posenc::detail::require(patch_size >= 1, where, "patch_size: expected >= 1, got ", patch_size);
  posenc::detail::require(patch_size_t >= 1, where, "patch_size_t: expected >= 1, got ", patch_size_t);
  const std::size_t f = latent_frames / patch_size_t, h = latent_height / patch_size, w = latent_width / patch_size;
  const std::size_t cells = detail::grid_cells(f, h, w, where);
  auto ids = checked::make_vector<std::int64_t>(3 * cells, where, "3 * tokens");
  detail::write_grid3(ids, cells, 0, f, h, w, {0, 0, 0});
  return ids;
}

/// One image (or video) of a Qwen-Image call, in patches: frames x height x width
/// (QwenImagePipeline's img_shapes: (1, latent_height / 2, latent_width / 2)).
struct qwen_image_shape {
  std::size_t frames = 1, height = 0, width = 0;
};

/// Qwen-Image's positions (QwenEmbedRope.forward): `image` [3, sum of the images' tokens] and
/// `text` [3, text_tokens]. The transformer rotates the image stream with the first and the
/// text stream with the second (then attends over [text, image]).
struct qwen_image_ids {
  std::vector<std::int64_t> image;
  std::vector<std::int64_t> text;
};

/// Qwen-Image's MSRoPE positions for the images of one sample (several: Qwen-Image-Edit's
/// inputs, image k's frame axis starting at k) and text_tokens text tokens (max_txt_seq_len).
/// scale_rope (Qwen-Image's config: true) centres each image: rows i - ceil(h / 2), columns
/// j - ceil(w / 2). Throws invalid_argument naming images for an empty list, and the positions'
/// limit 4096 (QwenEmbedRope's table: |position| < 4096) naming images[k] or text_tokens.
inline qwen_image_ids qwen_image_positions(std::span<const qwen_image_shape> images, std::size_t text_tokens,
                                           bool scale_rope = true) {
  constexpr std::string_view where = "rotary::qwen_image_positions";
  constexpr std::size_t table = 4096;  // QwenEmbedRope's pos_index / neg_index: arange(4096)
  posenc::detail::require(!images.empty(), where, "images: expected at least one image, got 0");
  std::size_t cells = 0, max_index = 0;
  for (std::size_t k = 0; k < images.size(); ++k) {
    const auto& s = images[k];
    const std::size_t c = detail::grid_cells(s.frames, s.height, s.width, where);
    const std::size_t side = scale_rope ? 2 * table : table;  // centred: ceil(h / 2) <= 4096 below, h / 2 above
    posenc::detail::require(s.height <= side && s.width <= side && s.frames <= table - std::min(k, table), where,
                            "images[", k, "]: expected (frames, height, width) with |positions| <= ", table,
                            " (height, width <= ", side, ", ", k, " + frames <= ", table, "), got (", s.frames, ", ",
                            s.height, ", ", s.width, ")");
    cells = checked::add(cells, c, where, "image tokens");
    max_index = std::max(max_index, scale_rope ? std::max(s.height / 2, s.width / 2) : std::max(s.height, s.width));
  }
  (void)checked::elements(cells, 3, where, "3 * image tokens");
  posenc::detail::require(text_tokens <= table - max_index, where, "text_tokens: expected at most ",
                          table - max_index, " (positions from ", max_index, " below ", table, "), got ", text_tokens);
  qwen_image_ids out;
  out.image = checked::make_vector<std::int64_t>(3 * cells, where, "3 * image tokens");
  std::size_t at = 0;
  for (std::size_t k = 0; k < images.size(); ++k) {
    const auto& s = images[k];
    const auto hh = static_cast<std::int64_t>(scale_rope ? s.height - s.height / 2 : 0);
    const auto ww = static_cast<std::int64_t>(scale_rope ? s.width - s.width / 2 : 0);
    detail::write_grid3(out.image, cells, at, s.frames, s.height, s.width, {static_cast<std::int64_t>(k), -hh, -ww});
    at += s.frames * s.height * s.width;
  }
  out.text = checked::make_vector<std::int64_t>(3 * text_tokens, where, "3 * text_tokens");
  for (std::size_t a = 0; a < 3; ++a)
    for (std::size_t t = 0; t < text_tokens; ++t) out.text[a * text_tokens + t] = static_cast<std::int64_t>(max_index + t);
  return out;
}

}  // namespace posenc::rotary
