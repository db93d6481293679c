// SPDX-License-Identifier: MIT
// Install-tree consumer of posenc::blas: linking the target must define EIGEN_USE_BLAS (checked at
// compile time) and link a BLAS (Eigen then calls dgemm_, so a missing BLAS fails at link time),
// and a TUPE call must still give the right numbers.
#include <cmath>
#include <cstdio>

#ifndef EIGEN_USE_BLAS
#error "posenc::blas must define EIGEN_USE_BLAS for its consumers"
#endif

#include <posenc/tupe.hpp>

int main() {
  // TUPE-A, no [CLS] reset, U^Q = U^K = I, zero biases, LayerNorm gamma = 1, beta = 0: head h is
  // s * L_h L_h^T, L_h the head's d/H columns of LN(P), so the heads' diagonals summed at row i are
  // s * ||LN(p_i)||^2 = s * d * var_i / (var_i + eps) (var_i: the biased variance of row p_i), a
  // closed form that needs no product. Tolerance 1e-12 relative: a 64-term sum of squares and a
  // 64-term LayerNorm in double, a few ulps each.
  posenc::tupe::config cfg;
  cfg.d = 64;
  cfg.heads = 4;
  cfg.relative = false;
  cfg.cls = posenc::tupe::cls_reset::off;
  const Eigen::Index n = 48;
  auto params = posenc::tupe::make_parameters<double>(cfg, n, /*seed=*/7);
  params.pos_q_weight.setIdentity();
  params.pos_k_weight.setIdentity();
  const posenc::tupe::head_stack<double> bias = posenc::tupe::positional_bias(cfg, params, n);
  const double s = cfg.scaling();
  double err = 0;
  for (Eigen::Index i = 0; i < n; ++i) {
    const auto row = params.pos.row(i);
    const double mean = row.mean();
    const double var = (row.array() - mean).square().mean();
    const double want = s * static_cast<double>(cfg.d) * var / (var + cfg.ln_eps);
    double got = 0;
    for (Eigen::Index h = 0; h < cfg.heads; ++h) got += bias(h, i, i);
    err = std::max(err, std::abs(got - want) / want);
  }
  std::printf("posenc::blas consumer: EIGEN_USE_BLAS defined, TUPE diagonal vs closed form %.2e\n", err);
  return err < 1e-12 ? 0 : 1;
}
