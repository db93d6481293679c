// SPDX-License-Identifier: MIT
// M-RoPE of vision-language models (Hugging Face transformers 5.23): which of the three position
// axes (temporal, height, width) turns each pair, and the position ids these models compute for
// text + image + video inputs (docs/multi-axis-rope.md has the table).
//
//   style            models (model_type)                 pair k's axis                     layout
//   sections         Qwen2-VL, Qwen2.5-VL (qwen2_vl,     chunk i of mrope_section -> i % 3   half
//                    qwen2_5_vl); GLM-4.1V/4.5V (glm4v,                                      interleaved
//                    glm4v_moe: partial rotary)
//   interleaved      Qwen3-VL (qwen3_vl, qwen3_vl_moe:   k % 3 == 1, k < 3 s[1]: h;         half
//                    mrope_interleaved)                  k % 3 == 2, k < 3 s[2]: w; else t
//   ernie            ERNIE 4.5-VL (ernie4_5_vl_moe)      k < s[0] + s[1]: h (k even), w     interleaved
//                                                        (k odd); else t
//
// The frequencies are every pair's own omega_k (the rule's, e.g. theta^(-2k / rotary_dim)): the
// models' recomposition only chooses which axis' position multiplies it (ERNIE's pre-rotated
// inv_freq and its h/w interleaving cancel to this).
//
//   xdrope           HunYuan-VL (hunyuan_vl)             split-half: column c of [c | c]       half
//                                                        (c < 2m) takes axis i of the chunk i
//                                                        of 2 * mrope_section holding c; 1..4 axes
//
// xdrope is not a rotation of pairs: the two halves of a rotate_half pair take cos/sin from
// different axes (axis_frequencies::axis_second; rotary/axes_apply.hpp has the map).
// hunyuan_rope_index is its get_rope_index (below).
//
// rope_index: transformers' get_rope_index, from mm_token_type_ids (0 text, 1 image, 2 video):
// text runs continue one counter on all three axes; an image or video grid (t, h, w) after
// spatial (and, for ERNIE's videos, temporal) merging takes positions start + (t_i * interval,
// h_i, w_i) and advances the counter by max(h, w) / spatial_merge_size; interval is 1, or
// tokens_per_second * second_per_grid_ts[v] for Qwen2.5-VL's videos (in float32, truncated, as
// torch computes it). Qwen3-VL and GLM-4V split each video into one grid per frame (the frames are
// separate groups of video tokens between timestamp text).
#pragma once

#include <algorithm>
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

/// How an M-RoPE model assigns pairs to the temporal, height and width axes (see the file comment).
enum class mrope_style { sections, interleaved, ernie, xdrope };

/// Axis frequencies of an M-RoPE model from its per-pair frequencies f and mrope_section (sum ==
/// f.inv_freq.size(); interleaved and ernie: 3 entries, ernie with section[0] == section[1]).
/// Three axes: 0 temporal, 1 height, 2 width; xdrope: one axis per section entry (1..4), split-half.
/// Throws invalid_argument naming "section".
inline axis_frequencies mrope_axes(frequencies f, std::span<const std::size_t> section, mrope_style style) {
  constexpr std::string_view where = "rotary::mrope_axes";
  const std::size_t pairs = rotary::validate(f, where, "freqs");
  posenc::detail::require(!section.empty(), where, "section: expected at least one mrope_section entry, got none");
  std::size_t sum = 0;
  for (const std::size_t s : section) sum = checked::add(sum, s, where, "section sum");
  posenc::detail::require(sum == pairs, where, "section: expected entries summing to the pair count rotary_dim / 2 = ",
                          pairs, ", got ", sum);
  posenc::detail::require(style != mrope_style::xdrope || section.size() <= max_axes, where,
                          "section: expected 1 .. ", max_axes, " entries (one per axis) for xdrope, got ", section.size());
  posenc::detail::require(style == mrope_style::sections || style == mrope_style::xdrope || section.size() == 3, where,
                          "section: expected 3 entries (t, h, w) for this style, got ", section.size());
  posenc::detail::require(style != mrope_style::ernie || section[0] == section[1], where,
                          "section: expected section[0] == section[1] (ERNIE interleaves h and w), got ", section[0],
                          " and ", section[1]);
  posenc::detail::require(style == mrope_style::sections || style == mrope_style::interleaved ||
                              style == mrope_style::ernie || style == mrope_style::xdrope,
                          where, "style: expected mrope_style::sections, interleaved, ernie or xdrope");
  axis_frequencies a;
  a.axes = 3;
  a.axis.resize(pairs);
  std::size_t k = 0;
  switch (style) {
    case mrope_style::sections:
      for (std::size_t i = 0; i < section.size(); ++i)
        for (std::size_t j = 0; j < section[i]; ++j) a.axis[k++] = static_cast<std::uint8_t>(i % 3);
      break;
    case mrope_style::interleaved:
      for (k = 0; k < pairs; ++k)
        a.axis[k] = k % 3 == 1 && k < 3 * section[1] ? 1 : k % 3 == 2 && k < 3 * section[2] ? 2 : 0;
      break;
    case mrope_style::ernie:
      for (k = 0; k < pairs; ++k) a.axis[k] = k < section[0] + section[1] ? (k % 2 == 0 ? 1 : 2) : 0;
      break;
    case mrope_style::xdrope: {  // column c of [c | c] (0 <= c < 2 pairs): the chunk of 2 * section holding it
      a.axes = section.size();
      a.axis_second.resize(pairs);
      std::size_t c = 0;
      for (std::size_t i = 0; i < section.size(); ++i)
        for (std::size_t j = 0; j < 2 * section[i]; ++j, ++c)
          (c < pairs ? a.axis[c] : a.axis_second[c - pairs]) = static_cast<std::uint8_t>(i);
      break;
    }
  }
  a.freqs = std::move(f);
  return a;
}

/// M-RoPE with the default frequencies theta^(-2k / rotary_dim) (transformers' default rope type
/// of these models; rotary_dim = head_dim, or head_dim * partial_rotary_factor for GLM-4V) and
/// mrope_section; interleaved: Qwen3-VL's mrope_interleaved. Throws invalid_argument naming the
/// argument.
inline axis_frequencies mrope(std::size_t rotary_dim, double theta, std::span<const std::size_t> section,
                              bool interleaved = false) {
  constexpr std::string_view where = "rotary::mrope";
  posenc::detail::require<non_finite_error>(std::isfinite(theta), where, "theta: expected a finite rope_theta, got ",
                                            theta);
  posenc::detail::require(theta > 1, where, "theta: expected rope_theta > 1, got ", theta);
  return mrope_axes(default_frequencies(rotary_dim, theta), section,
                    interleaved ? mrope_style::interleaved : mrope_style::sections);
}

/// An image or video grid as image_grid_thw / video_grid_thw hold it: patches before merging.
struct vision_grid {
  std::int64_t t = 1, h = 1, w = 1;
};

/// The model-specific parts of get_rope_index (the vision_config fields).
struct rope_index_options {
  std::size_t spatial_merge_size = 2;   ///< vision_config.spatial_merge_size (>= 1)
  std::size_t temporal_merge_size = 1;  ///< videos' temporal merge (ERNIE 4.5-VL's vision_config.temporal_merge_size)
  bool split_video_frames = false;      ///< Qwen3-VL, GLM-4V: each video is t grids of one frame
  double tokens_per_second = 0;         ///< Qwen2.5-VL: > 0 spaces video frames by tokens_per_second * second_per_grid_ts
};

/// What get_rope_index returns: position_ids [3, batch, seq] row-major (masked tokens 0) and
/// rope_deltas [batch] (max position + 1 - valid tokens: the offset of the positions that follow).
struct rope_index {
  std::vector<std::int64_t> position_ids;
  std::vector<std::int64_t> deltas;
  std::size_t batch = 0, seq = 0;
};

namespace detail {

inline std::int64_t positive_grid(std::int64_t v, std::string_view where, std::string_view what, std::size_t i) {
  posenc::detail::require(v >= 1 && v <= (std::int64_t{1} << 31), where, what, "[", i, "]: expected sizes in 1 .. 2^31, got ", v);
  return v;
}

}  // namespace detail

/// transformers' get_rope_index of the M-RoPE models (see the file comment): mm_token_type_ids
/// [batch, seq] (0 text, 1 image, 2 video), attention_mask [batch, seq] (empty: all valid; 0
/// masks a token out), the grids in the order their groups appear (across the batch),
/// second_per_grid_ts one per video (empty: 1) as float32. Throws invalid_argument (shape_error
/// for sizes) naming the argument: a token type outside 0..2, a group without a grid or of
/// another length than its grid's merged size, a sequence with every token masked (where
/// transformers fails). Grids left over are ignored, as transformers ignores them.
inline rope_index get_rope_index(std::span<const std::int64_t> mm_token_type_ids, std::size_t batch, std::size_t seq,
                                 std::span<const vision_grid> image_grid_thw,
                                 std::span<const vision_grid> video_grid_thw,
                                 std::span<const std::int64_t> attention_mask = {},
                                 std::span<const float> second_per_grid_ts = {}, const rope_index_options& opt = {}) {
  constexpr std::string_view where = "rotary::get_rope_index";
  const std::size_t n = checked::mul(batch, seq, where, "batch * seq");
  const std::size_t total = checked::mul(n, std::size_t{3}, where, "3 * batch * seq");
  posenc::detail::require<shape_error>(mm_token_type_ids.size() == n, where,
                                       "mm_token_type_ids: expected [batch, seq] = ", n, " values, got ",
                                       mm_token_type_ids.size());
  posenc::detail::require<shape_error>(attention_mask.empty() || attention_mask.size() == n, where,
                                       "attention_mask: expected none or [batch, seq] = ", n, " values, got ",
                                       attention_mask.size());
  posenc::detail::require(opt.spatial_merge_size >= 1 && opt.temporal_merge_size >= 1, where,
                          "options.spatial_merge_size/temporal_merge_size: expected >= 1, got ",
                          opt.spatial_merge_size, " and ", opt.temporal_merge_size);
  posenc::detail::require<non_finite_error>(std::isfinite(opt.tokens_per_second) && opt.tokens_per_second >= 0, where,
                                            "options.tokens_per_second: expected a finite value >= 0, got ",
                                            opt.tokens_per_second);
  posenc::detail::require<shape_error>(second_per_grid_ts.empty() || second_per_grid_ts.size() == video_grid_thw.size(),
                                       where, "second_per_grid_ts: expected none or one per video (",
                                       video_grid_thw.size(), "), got ", second_per_grid_ts.size());
  for (std::size_t i = 0; i < second_per_grid_ts.size(); ++i)
    posenc::detail::require<non_finite_error>(std::isfinite(second_per_grid_ts[i]) && second_per_grid_ts[i] >= 0, where,
                                              "second_per_grid_ts[", i, "]: expected a finite value >= 0, got ",
                                              second_per_grid_ts[i]);
  // the grids each group consumes: images as given; videos as given or split into frames
  struct grid_use {
    vision_grid g;
    float seconds;
  };
  std::vector<grid_use> images, videos;
  const auto m = static_cast<std::int64_t>(opt.spatial_merge_size);
  for (std::size_t i = 0; i < image_grid_thw.size(); ++i) {
    const vision_grid& g = image_grid_thw[i];
    detail::positive_grid(g.t, where, "image_grid_thw", i);
    detail::positive_grid(g.h, where, "image_grid_thw", i);
    detail::positive_grid(g.w, where, "image_grid_thw", i);
    images.push_back({g, 1.0f});
  }
  for (std::size_t i = 0; i < video_grid_thw.size(); ++i) {
    const vision_grid& g = video_grid_thw[i];
    detail::positive_grid(g.t, where, "video_grid_thw", i);
    detail::positive_grid(g.h, where, "video_grid_thw", i);
    detail::positive_grid(g.w, where, "video_grid_thw", i);
    const float s = second_per_grid_ts.empty() ? 1.0f : second_per_grid_ts[i];
    if (opt.split_video_frames) {
      posenc::detail::require(static_cast<std::size_t>(g.t) <= n, where, "video_grid_thw[", i, "]: ", g.t,
                              " frames, more than the ", n, " tokens");
      for (std::int64_t f = 0; f < g.t; ++f) videos.push_back({{1, g.h, g.w}, s});
    } else {
      videos.push_back({g, s});
    }
  }
  rope_index out;
  out.batch = batch;
  out.seq = seq;
  out.position_ids = checked::make_vector<std::int64_t>(total, where, "3 * batch * seq");
  out.deltas.assign(batch, 0);
  std::size_t next_image = 0, next_video = 0;
  std::vector<std::size_t> valid;  // the unmasked token indices of one sequence
  std::vector<std::int64_t> pt, ph, pw;
  for (std::size_t b = 0; b < batch; ++b) {
    valid.clear();
    for (std::size_t s = 0; s < seq; ++s)
      if (attention_mask.empty() || attention_mask[b * seq + s] != 0) valid.push_back(s);
    posenc::detail::require(!valid.empty(), where, "attention_mask: sequence ", b,
                            " has no unmasked token (transformers' get_rope_index fails on it)");
    pt.clear();
    ph.clear();
    pw.clear();
    std::int64_t current = 0;
    for (std::size_t i = 0; i < valid.size();) {
      const std::int64_t type = mm_token_type_ids[b * seq + valid[i]];
      posenc::detail::require(type >= 0 && type <= 2, where, "mm_token_type_ids[", b, ", ", valid[i],
                              "]: expected 0 (text), 1 (image) or 2 (video), got ", type);
      std::size_t e = i + 1;
      while (e < valid.size() && mm_token_type_ids[b * seq + valid[e]] == type) ++e;
      const std::size_t len = e - i;
      if (type == 0) {
        for (std::size_t j = 0; j < len; ++j) {
          const std::int64_t p = current + static_cast<std::int64_t>(j);
          pt.push_back(p);
          ph.push_back(p);
          pw.push_back(p);
        }
        current += static_cast<std::int64_t>(len);
      } else {
        std::vector<grid_use>& grids = type == 1 ? images : videos;
        std::size_t& next = type == 1 ? next_image : next_video;
        const std::string_view name = type == 1 ? "image_grid_thw" : "video_grid_thw";
        posenc::detail::require(next < grids.size(), where, name, ": expected a grid for the ",
                                type == 1 ? "image" : "video", " tokens at sequence ", b, ", token ", valid[i],
                                ", got only ", grids.size(), " grids");
        const grid_use u = grids[next++];
        const std::int64_t tm = type == 2 ? static_cast<std::int64_t>(opt.temporal_merge_size) : 1;
        const std::int64_t gt = u.g.t / tm, gh = u.g.h / m, gw = u.g.w / m;
        posenc::detail::require<shape_error>(
            gt >= 1 && gh >= 1 && gw >= 1 && static_cast<std::size_t>(gt * gh * gw) == len, where, name,
            ": the grid (", u.g.t, ", ", u.g.h, ", ", u.g.w, ") merges to ", gt, " x ", gh, " x ", gw, " = ",
            gt * gh * gw, " tokens, but its group at sequence ", b, ", token ", valid[i], " has ", len);
        // time_interval: 1 (images, and videos without tokens_per_second), else
        // tokens_per_second * second_per_grid_ts in float32; (arange(t) * interval).long()
        const bool spaced = type == 2 && opt.tokens_per_second > 0;
        const float interval = spaced ? static_cast<float>(opt.tokens_per_second) * u.seconds : 1.0f;
        for (std::int64_t a = 0; a < gt; ++a) {
          const auto ta = static_cast<std::int64_t>(static_cast<float>(a) * interval) + current;
          for (std::int64_t y = 0; y < gh; ++y)
            for (std::int64_t x = 0; x < gw; ++x) {
              pt.push_back(ta);
              ph.push_back(y + current);
              pw.push_back(x + current);
            }
        }
        current += std::max(u.g.h, u.g.w) / m;
      }
      i = e;
    }
    std::int64_t mx = pt[0];
    for (std::size_t j = 0; j < pt.size(); ++j) {
      const std::size_t at = b * seq + valid[j];
      out.position_ids[at] = pt[j];
      out.position_ids[n + at] = ph[j];
      out.position_ids[2 * n + at] = pw[j];
      mx = std::max({mx, pt[j], ph[j], pw[j]});
    }
    out.deltas[b] = mx + 1 - static_cast<std::int64_t>(valid.size());
  }
  return out;
}

/// HunYuan-VL's get_rope_index (transformers 5.23's HunYuanVLModel.get_rope_index):
/// position_ids [axes, batch, seq] row-major and deltas [batch]. Each sequence's valid tokens
/// (attention_mask != 0; empty: all) count 0, 1, ... on every axis; each run of image tokens
/// (mm_token_type_ids == 1; other types are text) takes the next grid of image_grid_thw (across the
/// batch; t unused): with h' = h / spatial_merge_size, w' = w / spatial_merge_size, a run of
/// h' (w' + 1) tokens, or of h' (w' + 1) + 2 whose first and last keep their text positions, gets
/// (width, height, image index) = (x, y, i) on the last three axes for x in 0..w', y in 0..h'-1 row
/// by row, i counting images from 0 across the batch; the axes before them keep the text count.
/// Masked tokens get 0; deltas = max position + 1 - valid tokens. image_grid_thw empty: runs keep
/// their text positions (transformers without image_grid_thw). Throws invalid_argument
/// (shape_error for sizes) naming the argument: axes outside 3..4, a run whose length is neither,
/// more runs than grids or fewer (when grids are given), a sequence with every token masked.
inline rope_index hunyuan_rope_index(std::span<const std::int64_t> mm_token_type_ids, std::size_t batch,
                                     std::size_t seq, std::span<const vision_grid> image_grid_thw,
                                     std::span<const std::int64_t> attention_mask = {}, std::size_t axes = 4,
                                     std::size_t spatial_merge_size = 2) {
  constexpr std::string_view where = "rotary::hunyuan_rope_index";
  const std::size_t n = checked::mul(batch, seq, where, "batch * seq");
  posenc::detail::require(axes >= 3 && axes <= max_axes, where, "axes: expected 3 .. ", max_axes,
                          " (len(mrope_section)), got ", axes);
  const std::size_t total = checked::mul(n, axes, where, "axes * batch * seq");
  posenc::detail::require<shape_error>(mm_token_type_ids.size() == n, where,
                                       "mm_token_type_ids: expected [batch, seq] = ", n, " values, got ",
                                       mm_token_type_ids.size());
  posenc::detail::require<shape_error>(attention_mask.empty() || attention_mask.size() == n, where,
                                       "attention_mask: expected none or [batch, seq] = ", n, " values, got ",
                                       attention_mask.size());
  posenc::detail::require(spatial_merge_size >= 1, where, "spatial_merge_size: expected >= 1, got ",
                          spatial_merge_size);
  for (std::size_t i = 0; i < image_grid_thw.size(); ++i) {
    detail::positive_grid(image_grid_thw[i].t, where, "image_grid_thw", i);
    detail::positive_grid(image_grid_thw[i].h, where, "image_grid_thw", i);
    detail::positive_grid(image_grid_thw[i].w, where, "image_grid_thw", i);
  }
  rope_index out;
  out.batch = batch;
  out.seq = seq;
  out.position_ids.assign(total, 0);
  out.deltas.assign(batch, 0);
  const auto sm = static_cast<std::int64_t>(spatial_merge_size);
  std::size_t next = 0;
  std::int64_t image = 0;
  std::vector<std::size_t> valid;
  std::vector<std::int64_t> cur;  // [axes, valid]
  for (std::size_t b = 0; b < batch; ++b) {
    valid.clear();
    for (std::size_t s = 0; s < seq; ++s)
      if (attention_mask.empty() || attention_mask[b * seq + s] != 0) valid.push_back(s);
    posenc::detail::require(!valid.empty(), where, "attention_mask[", b,
                            "]: expected at least one valid token per sequence, got none");
    const std::size_t v = valid.size();
    cur.assign(axes * v, 0);
    for (std::size_t a = 0; a < axes; ++a)
      for (std::size_t j = 0; j < v; ++j) cur[a * v + j] = static_cast<std::int64_t>(j);
    for (std::size_t j = 0; j < v && !image_grid_thw.empty();) {
      const std::int64_t type = mm_token_type_ids[b * seq + valid[j]];
      std::size_t e = j + 1;
      while (e < v && mm_token_type_ids[b * seq + valid[e]] == type) ++e;
      if (type == 1) {
        posenc::detail::require(next < image_grid_thw.size(), where, "image_grid_thw: expected a grid for every image ",
                                "run, got ", image_grid_thw.size(), " grids for more runs (sequence ", b, ", token ",
                                valid[j], ")");
        const vision_grid& g = image_grid_thw[next++];
        const std::int64_t gh = g.h / sm, gw = g.w / sm;
        const auto tokens = static_cast<std::size_t>(gh * (gw + 1));
        const std::size_t len = e - j;
        posenc::detail::require<shape_error>(len == tokens || len == tokens + 2, where, "mm_token_type_ids: image run at "
                                             "sequence ", b, ", token ", valid[j], ": expected ", tokens, " or ",
                                             tokens + 2, " tokens (image_grid_thw[", next - 1, "]), got ", len);
        const std::size_t start = len == tokens ? j : j + 1;
        const std::size_t off = axes - 3;
        for (std::size_t r = 0; r < tokens; ++r) {
          const auto y = static_cast<std::int64_t>(r) / (gw + 1), x = static_cast<std::int64_t>(r) % (gw + 1);
          cur[off * v + start + r] = x;
          cur[(off + 1) * v + start + r] = y;
          cur[(off + 2) * v + start + r] = image;
        }
        ++image;
      }
      j = e;
    }
    std::int64_t mx = cur[0];
    for (std::size_t a = 0; a < axes; ++a)
      for (std::size_t j = 0; j < v; ++j) {
        out.position_ids[a * n + b * seq + valid[j]] = cur[a * v + j];
        mx = std::max(mx, cur[a * v + j]);
      }
    out.deltas[b] = mx + 1 - static_cast<std::int64_t>(v);
  }
  posenc::detail::require(image_grid_thw.empty() || next == image_grid_thw.size(), where,
                          "image_grid_thw: expected one image run per grid, got ", next, " runs for ",
                          image_grid_thw.size(), " grids");
  return out;
}

}  // namespace posenc::rotary
