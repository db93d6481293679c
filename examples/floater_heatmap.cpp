// SPDX-License-Identifier: MIT
// Figure 3 of the FLOATER paper, reproduced for a (randomly initialised) encoder: the position
// table as an image (rows = positions, columns = dimensions), next to the sinusoidal table, and
// the position-position cosine-similarity matrices of both. Writes four PNG files:
//   floater_table.png, sinusoidal_table.png, floater_similarity.png, sinusoidal_similarity.png
//
// Usage: floater_heatmap [d] [L]   (defaults 128 and 256)
#include <cstdio>
#include <cstdlib>
#include <random>

#include <posenc/floater.hpp>
#include <posenc_figures/png.hpp>
#include <posenc/sinusoidal.hpp>

int main(int argc, char** argv) {
  namespace fl = posenc::floater;
  const std::size_t d = argc > 1 ? std::strtoul(argv[1], nullptr, 10) : 128;
  const std::size_t L = argc > 2 ? std::strtoul(argv[2], nullptr, 10) : 256;
  try {
    // [floater-heatmap]
    std::mt19937_64 rng(3);
    fl::mlp<double> h(d);
    fl::init_xavier_normal(h, rng);
    fl::encoder<double> enc(h, fl::xavier_uniform<double>({1, d}, rng));  // reference: Delta = 0.01
    const posenc::table<double> P = enc.block_table(0, L);
    const posenc::table<double> S = posenc::sinusoidal::table<double>(L, d);

    auto similarity = [](const posenc::table<double>& X) {  // cos(p_i, p_j)
      posenc::table<double> Xn = X.rowwise().normalized();
      return posenc::table<double>(Xn * Xn.transpose());
    };
    posenc::figures::heatmap_options signed_map;
    signed_map.map = posenc::figures::colormap::diverging;  // symmetric range: 0 is the middle color
    signed_map.pixel_size = 2;
    posenc::figures::write_png_heatmap("floater_table.png", P.data(), L, d, signed_map);
    posenc::figures::write_png_heatmap("sinusoidal_table.png", S.data(), L, d, signed_map);
    const auto CP = similarity(P), CS = similarity(S);
    posenc::figures::write_png_heatmap("floater_similarity.png", CP.data(), L, L, signed_map);
    posenc::figures::write_png_heatmap("sinusoidal_similarity.png", CS.data(), L, L, signed_map);
    // [floater-heatmap]

    // sanity: finite tables, unit diagonals, symmetric similarity matrices
    const bool ok = P.allFinite() && (CP.diagonal().array() - 1).abs().maxCoeff() < 1e-12 &&
                    (CP - CP.transpose()).cwiseAbs().maxCoeff() < 1e-12 && (CS.diagonal().array() - 1).abs().maxCoeff() < 1e-12;
    std::printf("floater_heatmap: wrote 4 PNGs (%zu positions x %zu dims); mean cos(p_0, p_i) FLOATER %.3f, "
                "sinusoidal %.3f; %s\n",
                L, d, CP.row(0).mean(), CS.row(0).mean(), ok ? "ok" : "FAILED");
    return ok ? 0 : 1;
  } catch (const posenc::error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
}
