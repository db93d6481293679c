// SPDX-License-Identifier: MIT
// The smallest program that uses posenc (docs/installation.md): one sinusoidal table through
// the umbrella header. Its check is layout-independent: every row holds d/2 (sin, cos) pairs
// of one angle each, so its squared norm is d/2, and row 0 (position 0) is d/2 zeros and d/2 ones.
// [hello-posenc]
#include <algorithm>
#include <cmath>
#include <cstdio>

#include <posenc/posenc.hpp>

int main() {
  const posenc::table<double> p = posenc::sinusoidal::table(128, 64);  // 128 positions, d = 64
  double worst = 0;
  for (Eigen::Index i = 0; i < p.rows(); ++i) worst = std::max(worst, std::abs(p.row(i).squaredNorm() - 32.0));
  const double ones = p.row(0).sum();
  std::printf("posenc %d.%d.%d: %ld x %ld table, max | |row|^2 - d/2 | = %.1e, sum of row 0 = %g\n",
              posenc::version_major, posenc::version_minor, posenc::version_patch, static_cast<long>(p.rows()),
              static_cast<long>(p.cols()), worst, ones);
  return worst < 1e-12 && ones == 32.0 ? 0 : 1;
}
// [hello-posenc]
