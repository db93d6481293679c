// SPDX-License-Identifier: MIT
// Heatmaps of the sinusoidal table (the blog's figure 2) and of its positional-correlation
// matrix PE PE^T (figure 3), written as PNG files in the working directory.
#include <cmath>
#include <cstdio>
#include <vector>

#include <posenc_figures/png.hpp>
#include <posenc/sinusoidal.hpp>

int main() {
  namespace ps = posenc::sinusoidal;
  // [sinusoidal-heatmap]
  const posenc::table<double> pe = ps::table<double>(50, 128);  // 50 positions, d = 128
  posenc::figures::write_png_heatmap("sinusoidal_table.png", pe.data(), 50, 128,
                                     {.map = posenc::figures::colormap::diverging, .pixel_size = 4});
  const posenc::table<double> big = ps::table<double>(256, 128);
  const posenc::table<double> corr = big * big.transpose();  // (i, j) = sum_k cos(w_k (i - j))
  posenc::figures::write_png_heatmap("sinusoidal_correlation.png", corr.data(), 256, 256,
                                     {.map = posenc::figures::colormap::viridis, .pixel_size = 2});
  // [sinusoidal-heatmap]
  // Toeplitz check: every diagonal is constant and equals inner_product(offset).
  std::vector<double> by_offset(511);
  for (int k = -255; k <= 255; ++k) by_offset[static_cast<std::size_t>(k + 255)] = ps::inner_product<double>(k, 128);
  double worst = 0;
  for (int i = 0; i < 256; ++i)
    for (int j = 0; j < 256; ++j)
      worst = std::max(worst, std::abs(corr(i, j) - by_offset[static_cast<std::size_t>(j - i + 255)]));
  std::printf("wrote sinusoidal_table.png and sinusoidal_correlation.png; max |PE PE^T - toeplitz| = %.2e\n", worst);
  return worst < 1e-11 ? 0 : 1;
}
