// SPDX-License-Identifier: MIT
// The frequency spectrum of every RoPE scaling rule in one picture: wavelength 2 pi / inv_freq
// (tokens, log scale) against the pair index, for a Llama-3.1-like head (theta 500000, d = 128,
// factor 8, original length 8192). Writes rope_spectrum.svg (docs/images/rope_spectrum.svg).
#include <cmath>
#include <cstdio>
#include <string>

#include <posenc/rotary/scaling.hpp>

int main() {
  namespace pr = posenc::rotary;
  const char* colours[] = {"#000000", "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b"};
  std::FILE* svg = std::fopen("rope_spectrum.svg", "w");
  if (!svg) return 1;
  std::fprintf(svg, "<svg xmlns='http://www.w3.org/2000/svg' width='640' height='400' font-size='12'>\n"
                    "<rect width='640' height='400' fill='white'/><text x='10' y='395'>pair index k (0..63)"
                    " -> ; y: log10 wavelength in tokens (0..9)</text>\n");
  for (int t = 0; t < 7; ++t) {
    pr::rope_config c{.type = static_cast<pr::rope_type>(t), .theta = 500000.0, .head_dim = 128,
                      .max_position_embeddings = 131072, .original_max_position_embeddings = 8192, .factor = 8};
    for (int k = 0; k < 64; ++k) {  // LongRoPE: illustrative factors rising from 1 to 8 (searched in the paper)
      c.short_factor.push_back(1.0);
      c.long_factor.push_back(std::pow(8.0, k / 63.0));
    }
    const auto f = pr::compute_frequencies(c, 4 * 131072);  // dynamic: a sequence 4x max_position_embeddings
    std::fprintf(svg, "<polyline fill='none' stroke='%s' points='", colours[t]);
    for (int k = 0; k < 64; ++k)
      std::fprintf(svg, "%.1f,%.1f ", 40 + 8.5 * k, 370 - 38 * std::log10(2 * M_PI / static_cast<double>(f.inv_freq[k])));
    std::fprintf(svg, "'/>\n<text x='60' y='%d' fill='%s'>%s</text>\n", 20 + 15 * t, colours[t],
                 std::string(pr::name(c.type)).c_str());
  }
  std::fprintf(svg, "<line x1='40' x2='600' y1='%.1f' y2='%.1f' stroke='gray' stroke-dasharray='4'/>\n</svg>\n",
               370 - 38 * std::log10(8192.0), 370 - 38 * std::log10(8192.0));
  std::printf("wrote rope_spectrum.svg\n");
  return std::fclose(svg) == 0 ? 0 : 1;
}
