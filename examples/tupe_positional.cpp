// SPDX-License-Identifier: MIT
// TUPE's positional term for one sequence: per head, the untied positional correlation
// (P U^Q)(P U^K)^T / sqrt(2 d/H) plus the T5-bucketed relative bias, with the [CLS] reset of row
// and column 0 as the reference code computes it; head 0 is written as a heatmap (tupe_head0.png).
#include <cstdio>

#include <posenc_figures/png.hpp>
#include <posenc/sinusoidal.hpp>
#include <posenc/tupe.hpp>

int main() {
  posenc::tupe::config cfg;  // defaults: reference scale 1/sqrt(2 d/H), TUPE-R, reference [CLS] reset
  cfg.d = 64;
  cfg.heads = 4;
  const Eigen::Index max_len = 64, n = 48;
  // P: a sinusoidal table (max_len + 1 rows: the reference reset reads one extra row); U^Q = U^K = I.
  auto params = posenc::tupe::make_parameters<double>(cfg, max_len, /*seed=*/42);
  params.pos = posenc::sinusoidal::table<double>(static_cast<std::size_t>(max_len + 1), 64);
  params.pos_q_weight.setIdentity();
  params.pos_k_weight.setIdentity();
  const posenc::tupe::head_stack<double> bias = posenc::tupe::positional_bias(cfg, params, n);
  // [CLS] reset: row 0 of every head is one value (theta1 + b_16), column 0 another (theta2 + b_32).
  bool ok = true;
  for (Eigen::Index h = 0; h < cfg.heads; ++h) {
    const auto B = bias.head(h);
    ok = ok && (B.row(0).array() == B(0, 0)).all() && (B.col(0).tail(n - 1).array() == B(1, 0)).all();
  }
  // [heatmap]
  posenc::figures::heatmap_options opt;
  opt.map = posenc::figures::colormap::diverging;
  opt.pixel_size = 4;
  posenc::figures::write_png_heatmap("tupe_head0.png", bias.head(0).data(), static_cast<std::size_t>(n),
                                     static_cast<std::size_t>(n), opt);
  // [heatmap]
  std::printf("head 0: theta1 + b16 = %.6f, theta2 + b32 = %.6f, v(5,5) = %.6f, v(5,30) = %.6f\n", bias(0, 0, 0),
              bias(0, 1, 0), bias(0, 5, 5), bias(0, 5, 30));
  std::printf("%s\n", ok ? "[CLS] reset checked; wrote tupe_head0.png" : "CHECK FAILED");
  return ok ? 0 : 1;
}
