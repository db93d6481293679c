// SPDX-License-Identifier: MIT
// Initialisers of FLOATER's parameters and position banks, as the reference code (PyTorch's
// nn.init) defines them: init_xavier_normal, init_small, xavier_uniform.
#pragma once

#include <Eigen/Core>
#include <cmath>
#include <cstddef>
#include <random>
#include <string_view>
#include <vector>

#include <posenc/core/checked.hpp>
#include <posenc/core/error.hpp>
#include <posenc/tensor/table.hpp>
#include <posenc/floater/flow.hpp>

namespace posenc::floater {

// ---- initialisation ------------------------------------------------------------------------------

/// The reference initialisation of h: nn.init.xavier_normal_ on each nn.Linear weight (the time
/// column included: fan_in = in + 1, std = gain sqrt(2 / (fan_in + fan_out))) and zero biases.
template <class T>
void init_xavier_normal(mlp<T>& m, std::mt19937_64& rng, double gain = 1.0) {
  m.check_shapes("floater::init_xavier_normal");
  posenc::detail::require<non_finite_error>(std::isfinite(gain), "floater::init_xavier_normal",
                                            "gain: expected a finite gain, got ", gain);
  posenc::detail::require(gain > 0, "floater::init_xavier_normal", "gain: expected gain > 0, got ", gain);
  auto fill = [&](matrix<T>& w, vector<T>& wt, bool has_t) {
    const double fan_in = static_cast<double>(w.cols() + (has_t ? 1 : 0)), fan_out = static_cast<double>(w.rows());
    std::normal_distribution<double> nd(0.0, gain * std::sqrt(2.0 / (fan_in + fan_out)));
    for (Eigen::Index i = 0; i < w.rows(); ++i) {
      for (Eigen::Index j = 0; j < w.cols(); ++j) w(i, j) = static_cast<T>(nd(rng));
      wt[i] = has_t ? static_cast<T>(nd(rng)) : T(0);
    }
  };
  fill(m.w1, m.w1_t, m.time1);
  fill(m.w2, m.w2_t, m.time2);
  m.b1.setZero();
  m.b2.setZero();
}

/// Small-scale initialisation (paper section 4.4): Xavier-normal scaled by `scale`, zero biases,
/// so that h starts near 0 and the encoder near its base (bias form) or near p(0).
template <class T>
void init_small(mlp<T>& m, std::mt19937_64& rng, double scale = 1e-2) {
  init_xavier_normal(m, rng, scale);
}

/// nn.init.xavier_uniform_ of a tensor of shape `shape` (PyTorch's fan rule: fan_in = shape[1] *
/// receptive, fan_out = shape[0] * receptive, receptive = product of shape[2:]), returned as rows
/// of the last dimension: prod(shape[:-1]) rows x shape[-1] columns. For the reference bank
/// [3, n_layers, d] row g * n_layers + l is (q/k/v = g, layer l).
template <class T>
[[nodiscard]] table<T> xavier_uniform(const std::vector<std::size_t>& shape, std::mt19937_64& rng, double gain = 1.0) {
  constexpr std::string_view where = "floater::xavier_uniform";
  posenc::detail::require<non_finite_error>(std::isfinite(gain), where, "gain: expected a finite gain, got ", gain);
  posenc::detail::require(gain >= 0, where, "gain: expected gain >= 0, got ", gain);
  posenc::detail::require<shape_error>(shape.size() >= 2, where, "expected a shape with at least 2 dimensions, got ",
                                       shape.size());
  for (std::size_t s : shape) posenc::detail::require<shape_error>(s >= 1, where, "shape: expected extents >= 1");
  std::size_t rows = 1, receptive = 1;
  for (std::size_t i = 0; i + 1 < shape.size(); ++i) rows = checked::mul(rows, shape[i], where, "shape: rows = prod(shape[:-1])");
  for (std::size_t i = 2; i < shape.size(); ++i)
    receptive = checked::mul(receptive, shape[i], where, "shape: receptive field = prod(shape[2:])");
  const double fan_in = static_cast<double>(shape[1]) * static_cast<double>(receptive),
               fan_out = static_cast<double>(shape[0]) * static_cast<double>(receptive);
  const double a = gain * std::sqrt(6.0 / (fan_in + fan_out));
  std::uniform_real_distribution<double> ud(-a, a);
  auto p = posenc::detail::allocate_table<T>(rows, shape.back(), where, "shape: rows = prod(shape[:-1])", "shape[-1]");
  for (Eigen::Index i = 0; i < p.rows(); ++i)
    for (Eigen::Index j = 0; j < p.cols(); ++j) p(i, j) = static_cast<T>(ud(rng));
  return p;
}

}  // namespace posenc::floater
