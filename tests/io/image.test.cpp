// SPDX-License-Identifier: MIT
// posenc/io/image.hpp: every PNG written is decoded by an independent minimal reader written here
// from the PNG (ISO 15948) and zlib/deflate (RFC 1950/1951) specifications: chunk CRCs by the
// bitwise CRC-32 definition, the zlib header check, stored-block inflation with LEN/NLEN
// verification, Adler-32 by its definition; pixels are compared exactly with colors computed here
// from the colormaps' definitions (published viridis stops, gray ramp, cool-warm endpoints).
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <posenc/io/image.hpp>

#include "io/helpers.hpp"

namespace pio = posenc::io;
using io_test::bytes;

namespace {

std::uint32_t crc32_bitwise(const std::byte* p, std::size_t n) {
  std::uint32_t c = 0xFFFFFFFFu;
  for (std::size_t i = 0; i < n; ++i) {
    c ^= std::to_integer<std::uint32_t>(p[i]);
    for (int k = 0; k < 8; ++k) c = (c >> 1) ^ (0xEDB88320u & (0u - (c & 1u)));
  }
  return ~c;
}

std::uint32_t adler32_naive(const std::vector<std::uint8_t>& d) {
  std::uint32_t a = 1, b = 0;
  for (auto x : d) {
    a = (a + x) % 65521;
    b = (b + a) % 65521;
  }
  return (b << 16) | a;
}

std::uint32_t be32(const bytes& b, std::size_t at) {
  return (std::to_integer<std::uint32_t>(b[at]) << 24) | (std::to_integer<std::uint32_t>(b[at + 1]) << 16) |
         (std::to_integer<std::uint32_t>(b[at + 2]) << 8) | std::to_integer<std::uint32_t>(b[at + 3]);
}

struct decoded {
  std::size_t width = 0, height = 0;
  std::vector<std::uint8_t> rgb;
  std::size_t idat_chunks = 0;
  std::size_t stored_blocks = 0;
  [[nodiscard]] std::array<std::uint8_t, 3> at(std::size_t x, std::size_t y) const {
    const std::size_t i = 3 * (y * width + x);
    return {rgb[i], rgb[i + 1], rgb[i + 2]};
  }
};

/// Decode an 8-bit RGB, non-interlaced PNG whose zlib stream uses stored blocks only; every
/// structural check is a REQUIRE.
decoded decode_png(const bytes& png) {
  static const unsigned char sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};
  REQUIRE(png.size() >= 8);
  for (int i = 0; i < 8; ++i) REQUIRE(png[static_cast<std::size_t>(i)] == std::byte{sig[i]});
  decoded out;
  std::vector<std::uint8_t> z;
  bool ihdr = false, iend = false;
  std::size_t at = 8;
  while (at < png.size()) {
    REQUIRE(!iend);
    REQUIRE(png.size() - at >= 12);
    const std::uint32_t len = be32(png, at);
    REQUIRE(png.size() - at - 12 >= len);
    const std::string type(reinterpret_cast<const char*>(png.data()) + at + 4, 4);
    const std::byte* data = png.data() + at + 8;
    REQUIRE(be32(png, at + 8 + len) == crc32_bitwise(png.data() + at + 4, 4 + len));
    if (type == "IHDR") {
      REQUIRE(!ihdr);
      REQUIRE(at == 8);  // IHDR first
      REQUIRE(len == 13);
      ihdr = true;
      out.width = be32(png, at + 8);
      out.height = be32(png, at + 12);
      REQUIRE(data[8] == std::byte{8});  // bit depth
      REQUIRE(data[9] == std::byte{2});  // color type RGB
      REQUIRE(data[10] == std::byte{0});
      REQUIRE(data[11] == std::byte{0});
      REQUIRE(data[12] == std::byte{0});  // no interlace
    } else if (type == "IDAT") {
      REQUIRE(ihdr);
      ++out.idat_chunks;
      for (std::uint32_t i = 0; i < len; ++i) z.push_back(std::to_integer<std::uint8_t>(data[i]));
    } else if (type == "IEND") {
      REQUIRE(len == 0);
      iend = true;
    } else {
      FAIL("unexpected chunk ", type);
    }
    at += 12 + len;
  }
  REQUIRE(iend);
  // zlib: CMF/FLG check, no preset dictionary, then deflate blocks, then Adler-32 (big-endian).
  REQUIRE(z.size() >= 6);
  REQUIRE((z[0] & 0x0F) == 8);
  REQUIRE(((z[0] << 8) | z[1]) % 31 == 0);
  REQUIRE((z[1] & 0x20) == 0);
  std::vector<std::uint8_t> raw;
  std::size_t p = 2;
  for (bool final = false; !final;) {
    REQUIRE(p < z.size());
    const std::uint8_t h = z[p++];
    final = (h & 1) != 0;
    REQUIRE(((h >> 1) & 3) == 0);  // stored block
    REQUIRE(z.size() - p >= 4);
    const unsigned blen = z[p] | (z[p + 1] << 8);
    const unsigned nlen = z[p + 2] | (z[p + 3] << 8);
    REQUIRE((blen ^ 0xFFFFu) == nlen);
    p += 4;
    REQUIRE(z.size() - p >= blen);
    raw.insert(raw.end(), z.begin() + static_cast<std::ptrdiff_t>(p), z.begin() + static_cast<std::ptrdiff_t>(p + blen));
    p += blen;
    ++out.stored_blocks;
  }
  REQUIRE(z.size() - p == 4);
  const std::uint32_t adler = (std::uint32_t{z[p]} << 24) | (std::uint32_t{z[p + 1]} << 16) |
                              (std::uint32_t{z[p + 2]} << 8) | z[p + 3];
  REQUIRE(adler == adler32_naive(raw));
  // Scanlines: filter byte (0 = None) + 3 * width bytes.
  REQUIRE(raw.size() == out.height * (1 + 3 * out.width));
  for (std::size_t y = 0; y < out.height; ++y) {
    const std::size_t row = y * (1 + 3 * out.width);
    REQUIRE(raw[row] == 0);
    out.rgb.insert(out.rgb.end(), raw.begin() + static_cast<std::ptrdiff_t>(row + 1),
                   raw.begin() + static_cast<std::ptrdiff_t>(row + 1 + 3 * out.width));
  }
  return out;
}

std::vector<std::uint8_t> pattern(std::size_t w, std::size_t h) {
  std::vector<std::uint8_t> rgb(3 * w * h);
  for (std::size_t y = 0; y < h; ++y)
    for (std::size_t x = 0; x < w; ++x) {
      rgb[3 * (y * w + x)] = static_cast<std::uint8_t>(x * 7);
      rgb[3 * (y * w + x) + 1] = static_cast<std::uint8_t>(y * 13);
      rgb[3 * (y * w + x) + 2] = static_cast<std::uint8_t>(x ^ y);
    }
  return rgb;
}

using rgb3 = std::array<std::uint8_t, 3>;

}  // namespace

TEST_CASE("png checksums match the published check values") {
  // CRC-32/ISO-HDLC("123456789") = 0xCBF43926; Adler-32("Wikipedia") = 0x11E60398 (RFC 1950 example).
  const std::string s = "123456789", w = "Wikipedia";
  posenc::io::detail::crc32 c;
  c.update(reinterpret_cast<const std::byte*>(s.data()), s.size());
  CHECK(c.value() == 0xCBF43926u);
  posenc::io::detail::adler32 a;
  a.update(reinterpret_cast<const std::byte*>(w.data()), w.size());
  CHECK(a.value() == 0x11E60398u);
  // Long input: the deferred modulo agrees with the per-byte definition.
  std::vector<std::uint8_t> big(100000);
  for (std::size_t i = 0; i < big.size(); ++i) big[i] = static_cast<std::uint8_t>(255 - (i * 31) % 256);
  posenc::io::detail::adler32 a2;
  a2.update(reinterpret_cast<const std::byte*>(big.data()), big.size());
  CHECK(a2.value() == adler32_naive(big));
}

TEST_CASE("png RGB images decode to the same pixels, including several stored blocks and IDAT chunks") {
  io_test::scratch_dir dir("png_rgb");
  for (auto [w, h] : {std::pair<std::size_t, std::size_t>{1, 1}, {7, 5}, {200, 120}, {1, 300}}) {
    const auto rgb = pattern(w, h);
    pio::write_png_rgb(dir / "p.png", rgb, w, h);
    const auto d = decode_png(io_test::read_bytes(dir / "p.png"));
    CHECK(d.width == w);
    CHECK(d.height == h);
    CHECK(d.rgb == rgb);
    CHECK(d.stored_blocks == (h * (3 * w + 1) + 65534) / 65535);
    CHECK(pio::png_rgb_bytes(rgb, w, h) == io_test::read_bytes(dir / "p.png"));
  }
  // Small IDAT chunks: the stream split across chunks decodes the same.
  const auto rgb = pattern(50, 40);
  const auto png = posenc::io::detail::png_encode_rgb(rgb, 50, 40, 1000);
  const auto d = decode_png(png);
  CHECK(d.idat_chunks == (2 + 40 * 151 + 5 + 4 + 999) / 1000);
  CHECK(d.rgb == rgb);
}

TEST_CASE("png heatmap gray is the linear ramp from the data range") {
  const std::size_t rows = 3, cols = 4;
  std::vector<double> t(rows * cols);
  for (std::size_t i = 0; i < t.size(); ++i) t[i] = -1.5 + 0.37 * static_cast<double>(i * i % 11);
  const double lo = *std::min_element(t.begin(), t.end()), hi = *std::max_element(t.begin(), t.end());
  io_test::scratch_dir dir("png_gray");
  pio::write_png_heatmap(dir / "g.png", t.data(), rows, cols, {.map = pio::colormap::gray});
  const auto d = decode_png(io_test::read_bytes(dir / "g.png"));
  REQUIRE(d.width == cols);
  REQUIRE(d.height == rows);
  for (std::size_t i = 0; i < rows; ++i)
    for (std::size_t j = 0; j < cols; ++j) {
      const auto g = static_cast<std::uint8_t>(std::lround(255 * (t[i * cols + j] - lo) / (hi - lo)));
      CHECK(d.at(j, i) == rgb3{g, g, g});
    }
  // Fixed range: clamped at both ends; float data.
  const std::vector<float> f{-10.f, 0.f, 0.25f, 1.f, 10.f};
  const auto px = pio::heatmap_rgb(f.data(), 1, 5, {.map = pio::colormap::gray, .range = pio::value_range{0, 1}});
  const std::vector<std::uint8_t> want{0, 0, 0, 0, 0, 0, 64, 64, 64, 255, 255, 255, 255, 255, 255};
  CHECK(px == want);
  // Constant data: the middle color.
  const std::vector<double> c(6, 3.0);
  const auto mid = pio::heatmap_rgb(c.data(), 2, 3, {.map = pio::colormap::gray});
  for (auto v : mid) CHECK(v == 128);
}

TEST_CASE("png viridis passes through the published stops and has increasing lightness") {
  // matplotlib's viridis at t = k/9, as published (viridisLite::viridis(10)).
  const rgb3 stops[10] = {{0x44, 0x01, 0x54}, {0x48, 0x28, 0x78}, {0x3E, 0x4A, 0x89}, {0x31, 0x68, 0x8E},
                          {0x26, 0x82, 0x8E}, {0x1F, 0x9E, 0x89}, {0x35, 0xB7, 0x79}, {0x6D, 0xCD, 0x59},
                          {0xB4, 0xDE, 0x2C}, {0xFD, 0xE7, 0x25}};
  std::vector<double> t(10);
  for (int k = 0; k < 10; ++k) t[static_cast<std::size_t>(k)] = k / 9.0;
  const auto d = decode_png(pio::png_rgb_bytes(pio::heatmap_rgb(t.data(), 1, 10), 10, 1));
  for (std::size_t k = 0; k < 10; ++k) CHECK(d.at(k, 0) == stops[k]);
  // Perceptually ordered: the luminance of 256 samples never drops by more than the 8-bit
  // quantisation (one level of the dominant green channel, 0.72).
  double prev = -1;
  for (int i = 0; i <= 255; ++i) {
    const auto c = pio::colormap_rgb(pio::colormap::viridis, i / 255.0);
    const double lum = 0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2];
    CHECK(lum > prev - 0.72);
    prev = lum;
  }
}

TEST_CASE("png diverging map is symmetric about zero") {
  const std::vector<double> t{-2.0, 0.0, 1.0, 2.0};
  const auto px = pio::heatmap_rgb(t.data(), 2, 2, {.map = pio::colormap::diverging});
  // Auto range [-2, 2]: -2 -> blue end, 0 -> the middle gray, 1 -> halfway to red, 2 -> red end.
  auto pixel = [&](std::size_t i) { return rgb3{px[3 * i], px[3 * i + 1], px[3 * i + 2]}; };
  CHECK(pixel(0) == rgb3{59, 76, 192});
  CHECK(pixel(1) == rgb3{221, 221, 221});
  CHECK(pixel(2) == rgb3{static_cast<std::uint8_t>(std::lround((221 + 180) / 2.0)),
                         static_cast<std::uint8_t>(std::lround((221 + 4) / 2.0)),
                         static_cast<std::uint8_t>(std::lround((221 + 38) / 2.0))});
  CHECK(pixel(3) == rgb3{180, 4, 38});
}

TEST_CASE("png heatmap pixel_size replicates each value into a square") {
  const std::vector<double> t{0, 1, 2, 3, 4, 5};
  const std::size_t ps = 3;
  io_test::scratch_dir dir("png_pixel");
  pio::write_png_heatmap(dir / "h.png", t.data(), 2, 3, {.pixel_size = ps});
  const auto d = decode_png(io_test::read_bytes(dir / "h.png"));
  REQUIRE(d.width == 9);
  REQUIRE(d.height == 6);
  for (std::size_t y = 0; y < d.height; ++y)
    for (std::size_t x = 0; x < d.width; ++x)
      CHECK(d.at(x, y) == pio::colormap_rgb(pio::colormap::viridis, t[(y / ps) * 3 + x / ps] / 5.0));
}

TEST_CASE("png writers validate their arguments") {
  const std::vector<double> t{1, 2, std::numeric_limits<double>::quiet_NaN(), 4};
  io_test::require_error<posenc::non_finite_error>([&] { (void)pio::heatmap_rgb(t.data(), 2, 2); },
                                                   {"heatmap_rgb", "row 1, column 0"});
  const std::vector<double> ok{1, 2, 3, 4};
  io_test::require_error<posenc::invalid_argument>([&] { (void)pio::heatmap_rgb<double>(nullptr, 2, 2); }, {"null"});
  io_test::require_error<posenc::invalid_argument>([&] { (void)pio::heatmap_rgb(ok.data(), 0, 2); }, {"at least 1 x 1"});
  io_test::require_error<posenc::invalid_argument>(
      [&] { (void)pio::heatmap_rgb(ok.data(), 2, 2, {.range = pio::value_range{1, 1}}); }, {"lo < hi"});
  io_test::require_error<posenc::invalid_argument>(
      [&] { (void)pio::heatmap_rgb(ok.data(), 2, 2, {.range = pio::value_range{0, INFINITY}}); }, {"finite"});
  io_test::require_error<posenc::invalid_argument>([&] { (void)pio::heatmap_rgb(ok.data(), 2, 2, {.pixel_size = 0}); },
                                                   {"pixel_size"});
  io_test::require_error<posenc::invalid_argument>(
      [&] { (void)pio::heatmap_rgb(ok.data(), 1, std::size_t{1} << 32, {}); }, {"PNG width and height"});
  const std::vector<std::uint8_t> rgb(11);
  io_test::require_error<posenc::shape_error>([&] { (void)pio::png_rgb_bytes(rgb, 2, 2); }, {"12 bytes, got 11"});
  io_test::require_error<posenc::invalid_argument>([&] { (void)pio::png_rgb_bytes(rgb, 0, 2); }, {"at least 1 x 1"});
  io_test::scratch_dir dir("png_errors");
  io_test::require_error([&] { pio::write_png_heatmap(dir / "no" / "dir.png", ok.data(), 2, 2); },
                         {"cannot open for writing"});
}
