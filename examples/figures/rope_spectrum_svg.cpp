// SPDX-License-Identifier: MIT
// The figure of docs/extrapolation.md: the wavelength 2 pi / omega_k (tokens, log scale) of every
// pair k under each of the eight RoPE scaling rules, for a Llama-3.1-like head (theta 500000,
// head_dim 128, factor 8, original length 8192), computed through the library and written as
// rope_spectrum.svg (the docs build runs this program and puts the picture in the site).
//  - dynamic: at a sequence 4x max_position_embeddings (131072);
//  - longrope: illustrative long factors rising linearly from 1 to 8 over the pairs (the paper
//    searches them per model);
//  - proportional (Gemma 4's rule): partial_rotary_factor 0.25, so pairs 16..63 have omega = 0
//    (not rotated, infinite wavelength) and are not drawn.
#include <cmath>
#include <cstdio>
#include <numbers>
#include <string>

#include <posenc/rotary.hpp>

#include "svg_plot.hpp"

int main() {
  namespace pr = posenc::rotary;
  figure::panel p{"RoPE wavelength per pair, theta 500000, head_dim 128, factor 8",
                  {"pair index k", 0, 63, false, {0, 8, 16, 24, 32, 40, 48, 56, 63}},
                  {"wavelength 2\u03c0/\u03c9 (tokens)", 1, 1e9, true, {}},
                  {},
                  {{8192, "original length 8192"}}};
  auto add = [&](const std::string& name, const pr::frequencies& f) {
    figure::series s{name, {}, {}};
    for (std::size_t k = 0; k < f.inv_freq.size(); ++k)
      if (f.inv_freq[k] > 0) {
        s.x.push_back(static_cast<double>(k));
        s.y.push_back(2 * std::numbers::pi / static_cast<double>(f.inv_freq[k]));
      }
    p.data.push_back(std::move(s));
  };
  for (int t = 0; t < 7; ++t) {
    pr::rope_config c{.type = static_cast<pr::rope_type>(t), .theta = 500000.0, .head_dim = 128,
                      .max_position_embeddings = 131072, .original_max_position_embeddings = 8192, .factor = 8};
    for (int k = 0; k < 64; ++k) {
      c.short_factor.push_back(1.0);
      c.long_factor.push_back(1.0 + 7.0 * k / 63.0);
    }
    add(std::string(pr::name(c.type)), pr::compute_frequencies(c, 4 * 131072));
  }
  pr::rules::proportional prop;
  prop.factor = 8;
  const pr::plan gemma({.theta = 500000.0, .head_dim = 128, .partial_rotary_factor = 0.25}, prop);
  add("proportional (p = 0.25)", gemma.frequencies());
  if (!figure::write("rope_spectrum.svg", figure::svg({p}, 520, 320))) return 1;
  // checks: pair 0 turns at 2 pi under the default rule; linear divides every omega by 8
  const double w0 = p.data[0].y[0], lin = p.data[1].y[40] / p.data[0].y[40];
  std::printf("wrote rope_spectrum.svg: %zu rules; default pair 0: %.6f tokens; linear / default at pair 40: %.12f\n",
              p.data.size(), w0, lin);
  return p.data.size() == 8 && std::abs(w0 - 2 * std::numbers::pi) < 1e-12 && std::abs(lin - 8) < 1e-9 ? 0 : 1;
}
