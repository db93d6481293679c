// SPDX-License-Identifier: MIT
// A dependency-free PNG writer: 8-bit RGB images, and heatmaps of a row-major table through a
// colormap (viridis, gray, or a blue-white-red diverging map for signed data). Each scanline gets
// the PNG filter (None, Sub, Up, Average, Paeth) with the smallest sum of absolute residuals, and
// the filtered lines are compressed by posenc_figures/deflate.hpp (LZ77 + Huffman); CRC-32 is computed
// here. Standard library and posenc's core only (errors, checked sizes, the checked file writer).
// Figure-making, not positional encoding: this is the posenc_figures target of the project's own
// examples, tests and docs (CMakeLists.txt), never installed with posenc's headers.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <optional>
#include <span>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include <posenc/core/checked.hpp>
#include <posenc/core/error.hpp>
#include <posenc_figures/deflate.hpp>
#include <posenc/io/detail/bytes.hpp>

namespace posenc::figures {

/// Colormaps of write_png_heatmap.
enum class colormap : std::uint8_t {
  viridis,    ///< perceptually uniform dark blue -> green -> yellow (matplotlib's default)
  gray,       ///< black (low) -> white (high)
  diverging,  ///< blue (low) -> light gray (middle) -> red (high): Moreland's cool-warm, for signed data
};

/// A closed value range [lo, hi] mapped onto the colormap.
struct value_range {
  double lo = 0;
  double hi = 1;
};

struct heatmap_options {
  colormap map = colormap::viridis;
  /// Fixed range (values outside are clamped); if empty, the data's [min, max], or for the
  /// diverging map the symmetric [-max|x|, max|x|] so that zero is the middle color.
  std::optional<value_range> range = std::nullopt;
  /// Each value becomes a pixel_size x pixel_size square (for small tables).
  std::size_t pixel_size = 1;
};

namespace detail {

/// CRC-32 (ISO-HDLC: reflected polynomial 0xEDB88320, init and xorout 0xFFFFFFFF), as PNG uses.
class crc32 {
 public:
  void update(const std::byte* p, std::size_t n) noexcept {
    static constexpr auto table = [] {
      std::array<std::uint32_t, 256> t{};
      for (std::uint32_t i = 0; i < 256; ++i) {
        std::uint32_t c = i;
        for (int k = 0; k < 8; ++k) c = (c & 1u) ? (0xEDB88320u ^ (c >> 1)) : (c >> 1);
        t[i] = c;
      }
      return t;
    }();
    std::uint32_t c = m_c;
    for (std::size_t i = 0; i < n; ++i) c = table[(c ^ std::to_integer<std::uint32_t>(p[i])) & 0xFFu] ^ (c >> 8);
    m_c = c;
  }
  [[nodiscard]] std::uint32_t value() const noexcept { return m_c ^ 0xFFFFFFFFu; }

 private:
  std::uint32_t m_c = 0xFFFFFFFFu;
};

inline void append_be32(std::vector<std::byte>& out, std::uint32_t v) {
  for (int s = 24; s >= 0; s -= 8) out.push_back(static_cast<std::byte>((v >> s) & 0xFFu));
}

inline void png_chunk(std::vector<std::byte>& out, std::string_view type, const std::byte* data, std::size_t n) {
  append_be32(out, static_cast<std::uint32_t>(n));
  const std::size_t type_at = out.size();
  io::detail::append_bytes(out, type);
  out.insert(out.end(), data, data + n);
  crc32 c;
  c.update(out.data() + type_at, 4 + n);
  append_be32(out, c.value());
}

/// The filtered scanlines of 8-bit RGB pixels: per row, a filter-type byte and the residuals of
/// the filter (PNG spec 9.2, bpp = 3). adaptive: per row the filter that minimises the sum of
/// |residual| as signed bytes (libpng's heuristic); otherwise filter None on every row.
inline std::vector<std::byte> png_filter_rgb(std::span<const std::uint8_t> rgb, std::size_t width, std::size_t height,
                                             bool adaptive = true) {
  const std::size_t stride = 3 * width, row = stride + 1;
  std::vector<std::byte> out(row * height);
  std::array<std::vector<std::uint8_t>, 5> cand;
  for (auto& c : cand) c.resize(stride);
  auto paeth = [](int a, int b, int c) {
    const int p = a + b - c, pa = std::abs(p - a), pb = std::abs(p - b), pc = std::abs(p - c);
    return pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
  };
  for (std::size_t y = 0; y < height; ++y) {
    const std::uint8_t* cur = rgb.data() + y * stride;
    const std::uint8_t* up = y > 0 ? cur - stride : nullptr;
    for (std::size_t k = 0; k < stride; ++k) {
      const int x = cur[k], a = k >= 3 ? cur[k - 3] : 0, b = up ? up[k] : 0, c = (up && k >= 3) ? up[k - 3] : 0;
      cand[0][k] = static_cast<std::uint8_t>(x);
      cand[1][k] = static_cast<std::uint8_t>(x - a);
      cand[2][k] = static_cast<std::uint8_t>(x - b);
      cand[3][k] = static_cast<std::uint8_t>(x - (a + b) / 2);
      cand[4][k] = static_cast<std::uint8_t>(x - paeth(a, b, c));
    }
    std::size_t best = 0;
    std::uint64_t best_cost = std::numeric_limits<std::uint64_t>::max();
    for (std::size_t f = 0; f < (adaptive ? 5u : 1u); ++f) {
      std::uint64_t cost = 0;
      for (auto v : cand[f]) cost += static_cast<std::uint64_t>(v < 128 ? v : 256 - v);
      if (cost < best_cost) {
        best_cost = cost;
        best = f;
      }
    }
    std::byte* line = out.data() + y * row;
    line[0] = static_cast<std::byte>(best);
    for (std::size_t k = 0; k < stride; ++k) line[1 + k] = static_cast<std::byte>(cand[best][k]);
  }
  return out;
}

/// Encode 8-bit RGB pixels (row-major, 3 bytes per pixel). IDAT chunks hold at most max_idat bytes.
inline std::vector<std::byte> png_encode_rgb(std::span<const std::uint8_t> rgb, std::size_t width,
                                             std::size_t height, std::size_t max_idat = std::size_t{1} << 20) {
  // Adaptive filtering suits smooth images; unfiltered rows compress better where the image is
  // made of repeated rows and runs (heatmaps with pixel_size > 1, high-frequency tables): both
  // are compressed and the smaller kept.
  auto z = zlib_bytes(png_filter_rgb(rgb, width, height, true));
  if (auto none = zlib_bytes(png_filter_rgb(rgb, width, height, false)); none.size() < z.size()) z = std::move(none);
  std::vector<std::byte> out;
  out.reserve(z.size() + 64 + 12 * (z.size() / max_idat + 1));
  for (int c : {0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A}) out.push_back(static_cast<std::byte>(c));
  std::vector<std::byte> ihdr;
  append_be32(ihdr, static_cast<std::uint32_t>(width));
  append_be32(ihdr, static_cast<std::uint32_t>(height));
  for (int c : {8, 2, 0, 0, 0}) ihdr.push_back(static_cast<std::byte>(c));  // depth 8, RGB, deflate, filter 0, no interlace
  png_chunk(out, "IHDR", ihdr.data(), ihdr.size());
  for (std::size_t at = 0; at < z.size(); at += max_idat)
    png_chunk(out, "IDAT", z.data() + at, std::min(max_idat, z.size() - at));
  png_chunk(out, "IEND", nullptr, 0);
  return out;
}

inline void check_png_size(std::size_t width, std::size_t height, std::string_view where) {
  constexpr std::size_t png_max = 0x7FFFFFFF;  // PNG: width and height fit in 31 bits
  posenc::detail::require(width > 0 && height > 0, where, "width, height: expected an image of at least 1 x 1, got width = ",
                          width, ", height = ", height);
  posenc::detail::require(width <= png_max && height <= png_max, where, "PNG width and height are at most ", png_max,
                          ", got ", width, " x ", height);
  // keep the raw scanlines (and the RGB buffer) addressable
  const std::size_t max = std::numeric_limits<std::size_t>::max() / 4;
  posenc::detail::require(width <= (max - 1) / 3 && height <= max / (3 * width + 1), where, "width * height: image of ", width, " x ",
                          height, " pixels is too large");
}

}  // namespace detail

/// The color of t in [0, 1] (clamped) under a colormap, as 8-bit RGB.
/// viridis: matplotlib's viridis, exact at t = k/9 (k = 0..9) and within a few levels between;
/// gray: round(255 t); diverging: (59, 76, 192) -> (221, 221, 221) at t = 1/2 -> (180, 4, 38).
[[nodiscard]] inline std::array<std::uint8_t, 3> colormap_rgb(colormap map, double t) noexcept {
  if (!(t >= 0)) t = 0;  // also maps NaN to 0
  if (t > 1) t = 1;
  using stop = std::array<double, 3>;
  auto lerp = [](const stop& a, const stop& b, double s) {
    std::array<std::uint8_t, 3> c{};
    for (std::size_t k = 0; k < 3; ++k) c[k] = static_cast<std::uint8_t>(std::lround(a[k] + (b[k] - a[k]) * s));
    return c;
  };
  switch (map) {
    case colormap::gray: {
      const auto g = static_cast<std::uint8_t>(std::lround(255.0 * t));
      return {g, g, g};
    }
    case colormap::diverging: {
      static constexpr stop lo{59, 76, 192}, mid{221, 221, 221}, hi{180, 4, 38};
      return t <= 0.5 ? lerp(lo, mid, 2 * t) : lerp(mid, hi, 2 * t - 1);
    }
    case colormap::viridis:
    default: {
      // matplotlib's viridis at t = k/9 (as published, e.g. viridisLite::viridis(10)) ...
      static constexpr stop v[10] = {{0x44, 0x01, 0x54}, {0x48, 0x28, 0x78}, {0x3E, 0x4A, 0x89}, {0x31, 0x68, 0x8E},
                                     {0x26, 0x82, 0x8E}, {0x1F, 0x9E, 0x89}, {0x35, 0xB7, 0x79}, {0x6D, 0xCD, 0x59},
                                     {0xB4, 0xDE, 0x2C}, {0xFD, 0xE7, 0x25}};
      // ... and between the stops the curvature of a degree-6 polynomial fit of viridis: the map is
      // poly(t) + (piecewise-linear interpolation of stop_k - poly(k/9)), exact at the stops.
      static constexpr double c[7][3] = {{0.2777273272234177, 0.005407344544966578, 0.3340998053353061},
                                         {0.1050930431085774, 1.404613529898575, 1.384590162594685},
                                         {-0.3308618287255563, 0.214847559468213, 0.09509516302823659},
                                         {-4.634230498983486, -5.799100973351585, -19.33244095627987},
                                         {6.228269936347081, 14.17993336680509, 56.69055260068105},
                                         {4.776384997670288, -13.74514537774601, -65.35303263337234},
                                         {-5.435455855934631, 4.645852612178535, 26.3124352495832}};
      auto poly = [](double x, std::size_t k) {
        double r = 0;
        for (std::size_t p = 7; p-- > 0;) r = r * x + c[p][k];
        return 255.0 * r;
      };
      const double x = 9 * t;
      const auto i = std::min<std::size_t>(static_cast<std::size_t>(x), 8);
      const double s = x - static_cast<double>(i);
      const double t0 = static_cast<double>(i) / 9, t1 = static_cast<double>(i + 1) / 9;
      std::array<std::uint8_t, 3> out{};
      for (std::size_t k = 0; k < 3; ++k) {
        const double e0 = v[i][k] - poly(t0, k), e1 = v[i + 1][k] - poly(t1, k);
        const double y = poly(t, k) + e0 + (e1 - e0) * s;
        out[k] = static_cast<std::uint8_t>(std::lround(std::clamp(y, 0.0, 255.0)));
      }
      return out;
    }
  }
}

/// The bytes of a PNG file of 8-bit RGB pixels (rgb: row-major, 3 bytes per pixel, top row first).
/// Throws posenc::invalid_argument for an empty or oversized image, posenc::shape_error if
/// rgb.size() != 3 * width * height.
[[nodiscard]] inline std::vector<std::byte> png_rgb_bytes(std::span<const std::uint8_t> rgb, std::size_t width,
                                                          std::size_t height) {
  detail::check_png_size(width, height, "png_rgb_bytes");
  posenc::detail::require<shape_error>(rgb.size() == 3 * width * height, "png_rgb_bytes", "rgb must hold 3 * ",
                                       width, " * ", height, " = ", 3 * width * height, " bytes, got ", rgb.size());
  return detail::png_encode_rgb(rgb, width, height);
}

/// Write 8-bit RGB pixels as a PNG file. Errors as png_rgb_bytes, plus posenc::io_error on write failure.
inline void write_png_rgb(const std::filesystem::path& path, std::span<const std::uint8_t> rgb, std::size_t width,
                          std::size_t height) {
  detail::check_png_size(width, height, "write_png_rgb");
  posenc::detail::require<shape_error>(rgb.size() == 3 * width * height, "write_png_rgb", "rgb must hold 3 * ",
                                       width, " * ", height, " = ", 3 * width * height, " bytes, got ", rgb.size());
  const auto png = detail::png_encode_rgb(rgb, width, height);
  io::detail::write_file(path, png, {}, "write_png_rgb");  // the library's checked file writer
}

/// The RGB pixels of a heatmap of a row-major rows x cols table (row i = image row i, top first):
/// (rows * pixel_size) x (cols * pixel_size) pixels.
/// Throws posenc::invalid_argument (null data, empty table, bad range or pixel_size, too large) and
/// posenc::non_finite_error naming the first NaN/Inf entry.
template <class T>
[[nodiscard]] std::vector<std::uint8_t> heatmap_rgb(const T* data, std::size_t rows, std::size_t cols,
                                                    const heatmap_options& opt = {}) {
  static_assert(std::is_arithmetic_v<T>, "posenc::figures::heatmap_rgb: T must be arithmetic");
  constexpr std::string_view where = "heatmap_rgb";
  posenc::detail::require(data != nullptr, where, "data must not be null");
  posenc::detail::require(rows > 0 && cols > 0, where, "table must be at least 1 x 1, got ", rows, " x ", cols);
  posenc::detail::require(opt.pixel_size > 0 && opt.pixel_size <= 4096, where, "pixel_size must be in [1, 4096], got ",
                          opt.pixel_size);
  posenc::detail::require(cols <= std::numeric_limits<std::size_t>::max() / opt.pixel_size &&
                              rows <= std::numeric_limits<std::size_t>::max() / opt.pixel_size,
                          where, "image of ", rows, " x ", cols, " values at pixel_size ", opt.pixel_size, " is too large");
  const std::size_t w = cols * opt.pixel_size, h = rows * opt.pixel_size;
  detail::check_png_size(w, h, where);
  // the table and the image through the checked door, before a value is read
  (void)checked::elements(rows, cols, where, "rows * cols (the table)");
  (void)checked::elements(checked::mul(w, h, where, "image width * height"), 3, where, "3 * width * height (the RGB image)");
  double lo = 0, hi = 0;
  bool first = true;
  for (std::size_t i = 0; i < rows; ++i)
    for (std::size_t j = 0; j < cols; ++j) {
      const auto x = static_cast<double>(data[i * cols + j]);
      if (!std::isfinite(x))
        posenc::detail::fail<non_finite_error>(where, "value at row ", i, ", column ", j, " is ", x);
      if (first || x < lo) lo = x;
      if (first || x > hi) hi = x;
      first = false;
    }
  if (opt.range) {
    lo = opt.range->lo;
    hi = opt.range->hi;
    posenc::detail::require(std::isfinite(lo) && std::isfinite(hi) && lo < hi, where,
                            "range must be finite with lo < hi, got [", lo, ", ", hi, "]");
  } else if (opt.map == colormap::diverging) {
    const double m = std::max(std::abs(lo), std::abs(hi));
    lo = -m;
    hi = m;
  }
  const double span = hi - lo;
  std::vector<std::uint8_t> rgb = checked::make_vector<std::uint8_t>(3 * w * h, where, "3 * width * height (the RGB image)");
  const std::size_t ps = opt.pixel_size;
  for (std::size_t i = 0; i < rows; ++i) {
    std::uint8_t* line = rgb.data() + 3 * w * (i * ps);
    for (std::size_t j = 0; j < cols; ++j) {
      const auto x = static_cast<double>(data[i * cols + j]);
      const double t = span > 0 ? (x - lo) / span : 0.5;  // a constant table gets the middle color
      const auto c = colormap_rgb(opt.map, t);
      for (std::size_t q = 0; q < ps; ++q) std::copy(c.begin(), c.end(), line + 3 * (j * ps + q));
    }
    for (std::size_t r = 1; r < ps; ++r) std::copy(line, line + 3 * w, line + 3 * w * r);
  }
  return rgb;
}

/// Write a heatmap of a row-major rows x cols table as a PNG file (see heatmap_rgb).
template <class T>
void write_png_heatmap(const std::filesystem::path& path, const T* data, std::size_t rows, std::size_t cols,
                       const heatmap_options& opt = {}) {
  const auto rgb = heatmap_rgb(data, rows, cols, opt);
  write_png_rgb(path, rgb, cols * opt.pixel_size, rows * opt.pixel_size);
}

}  // namespace posenc::figures
