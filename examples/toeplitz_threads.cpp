// SPDX-License-Identifier: MIT
// One Toeplitz product plan on two threads: product_plan::set_threads spreads the columns of X
// over the caller and one worker the plan keeps; the result is bitwise the one-thread product.
// Exits non-zero if they differ or the product disagrees with a few rows of the dense one.
#include <cmath>
#include <cstdio>

#include <posenc/toeplitz.hpp>

int main() {
  namespace tz = posenc::toeplitz;
  const std::size_t n = 4096;
  const Eigen::Index k = 64;  // e.g. 64 value columns of one attention head
  Eigen::VectorXd b(2 * n - 1);
  for (Eigen::Index i = 0; i < b.size(); ++i) b[i] = std::exp(-std::abs(double(i) - double(n - 1)) / 64.0);
  const auto B = tz::toeplitz_matrix<double>::square(n, b);
  Eigen::MatrixXd X(Eigen::Index(n), k);
  for (Eigen::Index i = 0; i < X.size(); ++i) X.data()[i] = std::sin(0.001 * double(i));

  // [toeplitz-threads]
  tz::product_plan<double> plan(B);
  plan.set_threads(2);  // allocates the worker's buffers here, not in apply()
  Eigen::MatrixXd Y(Eigen::Index(n), k);
  plan.apply(X, Y);     // columns 0..31 on this thread, 32..63 on the worker
  // [toeplitz-threads]

  tz::product_plan<double> serial(B);
  Eigen::MatrixXd Y1(Eigen::Index(n), k);
  serial.apply(X, Y1);
  const bool same = (Y.array() == Y1.array()).all();
  double err = 0;
  for (Eigen::Index i : {Eigen::Index(0), Eigen::Index(n / 2), Eigen::Index(n - 1)})
    err = std::max(err, (Y.row(i) - B.dense().row(i) * X).cwiseAbs().maxCoeff());
  std::printf("B X on %zu threads, %td columns: %s the one-thread product; max error vs dense %.1e\n", plan.threads(),
              k, same ? "bitwise" : "NOT", err);
  return same && err < 1e-10 ? 0 : 1;
}
