// SPDX-License-Identifier: MIT
// Toeplitz products in O(n log n): a plain Toeplitz product with a reusable plan, and a bucketed
// relative-bias table (TUPE-R's b_{j-i}) applied to values, one operator per head. Exits non-zero
// if a result disagrees with the dense computation. (Proposition 1: examples/toeplitz_proposition1.cpp.)
#include <algorithm>
#include <cstdio>
#include <random>

#include <posenc/toeplitz.hpp>

int main() {
  namespace tz = posenc::toeplitz;
  std::mt19937 gen(1);
  std::uniform_real_distribution<double> u(-1, 1);
  int failures = 0;

  // [toeplitz-basic]
  // B (5 x 5) from its 2n-1 coefficients ordered by offset d = j - i: [b_-4, ..., b_0, ..., b_4].
  Eigen::VectorXd b(9);
  b << -4, -3, -2, -1, 0, 1, 2, 3, 4;  // b_d = d
  const auto B = tz::toeplitz_matrix<double>::square(5, b);
  // B(i, j) = b_{j-i}: B(0, 4) = b_4 = 4, B(4, 0) = b_-4 = -4.
  tz::product_plan<double> plan(B);  // owns the spectrum and every buffer
  Eigen::MatrixXd X = Eigen::MatrixXd::Ones(5, 2), Y(5, 2);
  plan.apply(X, Y);  // Y = B X, no allocation
  // [toeplitz-basic]
  if ((Y - B.dense() * X).norm() > 1e-12) ++failures;
  std::printf("B(0, 4) = %.0f, B(4, 0) = %.0f, (B X)(0, 0) = %.0f\n", B(0, 4), B(4, 0), Y(0, 0));

  // [toeplitz-relative-bias]
  // TUPE-R's per-head relative bias b^{(h)}_{j-i} = table(h, bucket(j - i)), as Toeplitz operators:
  // sum_j b_{j-i} v_j (the relative term of linear attention) in O(n log n) per head and column.
  const std::size_t n = 512, heads = 4, dv = 16;
  const int max_distance = 8;
  auto bucket = [&](std::ptrdiff_t d) {  // clipped relative distance: 2 * max_distance + 1 buckets
    return static_cast<int>(std::clamp<std::ptrdiff_t>(d, -max_distance, max_distance) + max_distance);
  };
  posenc::matrix<double> table(heads, 2 * max_distance + 1);
  for (Eigen::Index i = 0; i < table.size(); ++i) table.data()[i] = u(gen);
  auto ops = tz::head_operators(n, n, table, bucket);  // one product_plan per head
  posenc::table<double> V(n, dv);                      // values, row i = position i
  for (Eigen::Index i = 0; i < V.size(); ++i) V.data()[i] = u(gen);
  posenc::table<double> R(n, dv);
  ops[0].apply(V, R);  // R_i = sum_j b^{(0)}_{j-i} V_j
  // [toeplitz-relative-bias]
  {
    const auto B0 = tz::from_bucketed_bias(n, n, Eigen::VectorXd(table.row(0).transpose()), bucket);
    const posenc::table<double> ref = B0.dense() * V;
    const double err = (R - ref).norm() / ref.norm();
    std::printf("relative-bias operator, n = %zu, %zu heads: relative error vs dense %.2e (P = %zu)\n", n, heads, err,
                ops[0].fft_size());
    if (err > 1e-12) ++failures;
  }

  if (failures != 0) std::printf("FAILED: %d checks\n", failures);
  return failures == 0 ? 0 : 1;
}
