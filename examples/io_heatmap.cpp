// SPDX-License-Identifier: MIT
// Render a position table as a PNG heatmap (row = position, column = feature): the sinusoidal
// table of Vaswani et al., P[i, 2k] = sin(i w_k), P[i, 2k+1] = cos(i w_k), w_k = 10000^(-2k/d),
// written with posenc's own PNG encoder. Standard library only (posenc::posenc).
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <vector>

#include <posenc_figures/png.hpp>

int main() {
  namespace fig = posenc::figures;
  const std::size_t L = 128, d = 64;
  std::vector<double> table(L * d);
  for (std::size_t i = 0; i < L; ++i)
    for (std::size_t k = 0; k < d / 2; ++k) {
      const double w = std::pow(10000.0, -2.0 * static_cast<double>(k) / static_cast<double>(d));
      table[i * d + 2 * k] = std::sin(static_cast<double>(i) * w);
      table[i * d + 2 * k + 1] = std::cos(static_cast<double>(i) * w);
    }
  // [io-heatmap]
  fig::write_png_heatmap("table.png", table.data(), L, d,
                         {.map = fig::colormap::diverging, .range = fig::value_range{-1, 1}, .pixel_size = 4});
  // [io-heatmap]
  // 128 x 64 values at 4 x 4 pixels each: the IHDR chunk (bytes 16..23) says 256 wide, 512 high.
  unsigned char head[24] = {};
  std::ifstream("table.png", std::ios::binary).read(reinterpret_cast<char*>(head), sizeof head);
  auto be32 = [&](int at) { return (head[at] << 24) | (head[at + 1] << 16) | (head[at + 2] << 8) | head[at + 3]; };
  const bool ok = head[1] == 'P' && head[2] == 'N' && head[3] == 'G' && be32(16) == 256 && be32(20) == 512;
  std::printf("table.png: %llu bytes, %d x %d pixels: %s\n",
              static_cast<unsigned long long>(std::filesystem::file_size("table.png")), be32(16), be32(20), ok ? "ok" : "FAILED");
  return ok ? 0 : 1;
}
