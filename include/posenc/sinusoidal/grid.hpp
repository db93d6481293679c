// SPDX-License-Identifier: MIT
// The 2-D sinusoidal tables of vision transformers: the sinusoidal family's multi-axis form.
// MAE / ViT (get_2d_sincos_pos_embed) and Stable Diffusion 3 (diffusers' get_2d_sincos_pos_embed
// with base_size and interpolation_scale, PatchEmbed's cropped_pos_embed) encode a patch at row h,
// column w of a grid_h x grid_w grid as
//
//   PE2(h, w) = [ PE_{d/2}(x_w(w)) | PE_{d/2}(x_h(h)) ]         (d columns; w first, then h)
//
// where PE_{d/2}(x) is the 1-D table of d/2 columns in the [sin | cos] layout with the
// frequencies w_k = base^(-2k / (d/2)), k < d/4 (options{layout::half}, spacing two_k_over_d), and
// the rows run over the grid row-major (row h grid_w + w). The positions of one axis of n cells:
//  - MAE (base_size = 0): x(i) = i;
//  - diffusers (base_size > 0): x(i) = float32(float32(i / float32(n / base_size)) / float32(s))
//    with s = interpolation_scale: each division in float32, as torch runs them on a float32
//    arange. The table encodes those float32 values exactly (SD3's 192-cell grid: i / 3 in float32).
// extra_tokens zero rows come first (MAE's cls_token: 1; diffusers: extra_tokens with cls_token).
//
// Accuracy: each half is the 1-D sinusoidal table at those positions (sinusoidal::fill_at): every
// entry from the exact phase x w_k (posenc/numeric/phase.hpp), so a double table is within a few
// ulp of sin/cos of the exact phase and a float table its rounding (<= 0.5 ulp + the 2^-29 ulp of
// rounding a double evaluation). diffusers forms x * w_k and 10000^(k / (d/4)) in float64: its
// entries differ from these by up to ~|x w_k| 2^-52 (tests/sinusoidal/grid.test.cpp).
// Cost: (grid_h + grid_w) d/2 phase evaluations, then a copy of the rows.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstring>
#include <span>
#include <string_view>
#include <vector>

#include <posenc/core/checked.hpp>
#include <posenc/core/error.hpp>
#include <posenc/tensor/table.hpp>
#include <posenc/sinusoidal/options.hpp>
#include <posenc/sinusoidal/sinusoidal.hpp>

namespace posenc::sinusoidal {

/// What selects one 2-D sincos table (besides its grid and width).
struct grid_options {
  double base = 10000.0;             ///< > 0 and finite: w_k = base^(-2k / (d/2))
  double base_size = 0.0;            ///< 0: positions are the cell indices (MAE); > 0: diffusers' rule
  double interpolation_scale = 1.0;  ///< > 0 and finite; used only with base_size > 0
  std::size_t extra_tokens = 0;      ///< zero rows before the grid (MAE cls_token: 1)
  unsigned threads = 1;              ///< as options::threads
};

namespace detail {

inline void require_grid_options(const grid_options& opt, std::string_view where) {
  posenc::detail::require<non_finite_error>(std::isfinite(opt.base_size), where,
                                            "options.base_size: expected a finite value >= 0, got ", opt.base_size);
  posenc::detail::require(opt.base_size >= 0, where, "options.base_size: expected a finite value >= 0, got ",
                          opt.base_size);
  posenc::detail::require<non_finite_error>(std::isfinite(opt.interpolation_scale), where,
                                            "options.interpolation_scale: expected a finite value > 0, got ",
                                            opt.interpolation_scale);
  posenc::detail::require(opt.interpolation_scale > 0, where,
                          "options.interpolation_scale: expected a finite value > 0, got ", opt.interpolation_scale);
  (void)checked::extent(opt.extra_tokens, where, "options.extra_tokens");
}

/// The 1-D options of each half: [sin | cos], w_k = base^(-2k / (d/2)).
inline options half_options(const grid_options& opt) {
  options o;
  o.layout = layout::half;
  o.spacing = spacing::two_k_over_d;
  o.base = opt.base;
  o.threads = opt.threads;
  return o;
}

/// d >= 4 and d % 4 == 0 (each half an even 1-D table), and the 1-D options; returns d / 2.
inline std::size_t grid_half_width(std::size_t d, const grid_options& opt, std::string_view where) {
  posenc::detail::require(d >= 4 && d % 4 == 0, where,
                          "d: expected a multiple of 4 >= 4 (two halves of (sin, cos) pairs), got ", d);
  require_grid_options(opt, where);
  (void)pair_count(d / 2, half_options(opt), where);
  return d / 2;
}

template <class T>
posenc::table<T> grid_table_unchecked(std::span<const double> h_pos, std::span<const double> w_pos, std::size_t d,
                                      const grid_options& opt, std::string_view where) {
  const std::size_t half = d / 2;
  const std::size_t cells = checked::elements(h_pos.size(), w_pos.size(), where, "grid_h * grid_w");
  const std::size_t rows = checked::add(opt.extra_tokens, cells, where, "options.extra_tokens + grid_h * grid_w");
  auto out = posenc::detail::allocate_table<T>(rows, d, where, "rows", "d");
  const options o = half_options(opt);
  auto eh = posenc::detail::allocate_table<T>(h_pos.size(), half, where, "grid_h", "d / 2");
  auto ew = posenc::detail::allocate_table<T>(w_pos.size(), half, where, "grid_w", "d / 2");
  detail::fill_at_unchecked(h_pos, eh.data(), half, half, o);
  detail::fill_at_unchecked(w_pos, ew.data(), half, half, o);
  // The copies below take their width from the allocated half tables, not from d: where a caller
  // passes a constant d beyond the size bounds (rejected above), g++ -O3 would otherwise still
  // analyse them for that constant and warn that the copy exceeds any object (-Wstringop-overflow).
  const std::size_t width = static_cast<std::size_t>(eh.cols());
  T* data = out.data();
  if (opt.extra_tokens != 0) std::memset(static_cast<void*>(data), 0, opt.extra_tokens * d * sizeof(T));
  for (std::size_t h = 0; h < h_pos.size(); ++h)
    for (std::size_t w = 0; w < w_pos.size(); ++w) {
      T* row = data + (opt.extra_tokens + h * w_pos.size() + w) * d;
      std::memcpy(row, ew.data() + w * width, width * sizeof(T));
      std::memcpy(row + width, eh.data() + h * width, width * sizeof(T));
    }
  return out;
}

}  // namespace detail

/// The positions of one axis of n cells: i (base_size 0, MAE), or diffusers'
/// float32(float32(i / float32(n / base_size)) / float32(interpolation_scale)), as doubles
/// (exactly the float32 values). Throws invalid_argument / non_finite_error naming
/// options.base_size or options.interpolation_scale.
inline std::vector<double> grid_positions(std::size_t n, const grid_options& opt = {}) {
  constexpr std::string_view where = "sinusoidal::grid_positions";
  detail::require_grid_options(opt, where);
  auto x = checked::make_vector<double>(n, where, "n");
  const std::size_t size = x.size();  // n (the loops run to the vector's own size)
  if (opt.base_size == 0) {
    for (std::size_t i = 0; i < size; ++i) x[i] = static_cast<double>(i);
    return x;
  }
  const auto q = static_cast<float>(static_cast<double>(n) / opt.base_size);  // Python's n / base_size, then float32
  const auto s = static_cast<float>(opt.interpolation_scale);
  for (std::size_t i = 0; i < size; ++i) {
    const float a = static_cast<float>(i) / q;  // each division rounded to float32, as torch's
    x[i] = static_cast<double>(a / s);
  }
  return x;
}

/// The table of a grid with the given positions along h (rows) and w (columns): row
/// extra_tokens + h * w_pos.size() + w = [PE_{d/2}(w_pos[w]) | PE_{d/2}(h_pos[h])]. Throws
/// invalid_argument naming d (a multiple of 4 >= 4) or an option, non_finite_error naming
/// h_positions / w_positions for a NaN or Inf, and checked's errors for sizes too large.
template <class T = double>
  requires std::floating_point<T>
posenc::table<T> grid_table_at(std::span<const double> h_positions, std::span<const double> w_positions,
                               std::size_t d, const grid_options& opt = {}) {
  constexpr std::string_view where = "sinusoidal::grid_table_at";
  (void)detail::grid_half_width(d, opt, where);
  for (std::size_t i = 0; i < h_positions.size(); ++i)
    posenc::detail::require<non_finite_error>(std::isfinite(h_positions[i]), where,
                                              "h_positions: expected finite positions, got ", h_positions[i],
                                              " at index ", i);
  for (std::size_t i = 0; i < w_positions.size(); ++i)
    posenc::detail::require<non_finite_error>(std::isfinite(w_positions[i]), where,
                                              "w_positions: expected finite positions, got ", w_positions[i],
                                              " at index ", i);
  return detail::grid_table_unchecked<T>(h_positions, w_positions, d, opt, where);
}

/// MAE's / diffusers' get_2d_sincos_pos_embed(d, (grid_h, grid_w), base_size, interpolation_scale):
/// (extra_tokens + grid_h grid_w) x d, the positions of grid_positions(grid_h) and (grid_w).
template <class T = double>
  requires std::floating_point<T>
posenc::table<T> grid_table(std::size_t grid_h, std::size_t grid_w, std::size_t d, const grid_options& opt = {}) {
  constexpr std::string_view where = "sinusoidal::grid_table";
  (void)detail::grid_half_width(d, opt, where);
  (void)checked::extent(grid_h, where, "grid_h");
  (void)checked::extent(grid_w, where, "grid_w");
  (void)checked::elements(grid_h, grid_w, where, "grid_h * grid_w");  // before the positions are allocated
  const auto h = grid_positions(grid_h, opt), w = grid_positions(grid_w, opt);
  return detail::grid_table_unchecked<T>(h, w, d, opt, where);
}

/// Stable Diffusion 3's PatchEmbed.cropped_pos_embed(height, width): the height x width block at
/// the centre of the max_size x max_size table (top = (max_size - height) / 2, left =
/// (max_size - width) / 2, rounded down), with options.extra_tokens zero rows first (SD3: 0).
/// height and width are in patches. Throws invalid_argument naming height or width when one
/// exceeds max_size.
template <class T = double>
  requires std::floating_point<T>
posenc::table<T> grid_table_cropped(std::size_t max_size, std::size_t height, std::size_t width, std::size_t d,
                                    const grid_options& opt = {}) {
  constexpr std::string_view where = "sinusoidal::grid_table_cropped";
  (void)detail::grid_half_width(d, opt, where);
  (void)checked::extent(max_size, where, "max_size");
  posenc::detail::require(height <= max_size, where, "height: expected height <= max_size = ", max_size, ", got ",
                          height);
  posenc::detail::require(width <= max_size, where, "width: expected width <= max_size = ", max_size, ", got ", width);
  const auto x = grid_positions(max_size, opt);
  const std::size_t top = (max_size - height) / 2, left = (max_size - width) / 2;
  return detail::grid_table_unchecked<T>(std::span<const double>(x).subspan(top, height),
                                         std::span<const double>(x).subspan(left, width), d, opt, where);
}

}  // namespace posenc::sinusoidal
