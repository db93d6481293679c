// SPDX-License-Identifier: MIT
// Rotary position embedding (RoPE): rotate query and key rows so that the attention score of
// positions (m, n) depends only on the offset m - n.
#include <cmath>
#include <cstdio>

#include <posenc/rotary.hpp>

int main() {
  // [rotary-rope]
  // Rotary embedding of 8 query/key rows with 2 heads of 32 columns each.
  posenc::table<double> q = posenc::table<double>::Ones(8, 64), k = posenc::table<double>::Ones(8, 64);
  posenc::rotary::options rope;
  rope.head_dim = 32;
  const posenc::table<double> rq = posenc::rotary::apply_rotary(q, rope);
  const posenc::table<double> rk = posenc::rotary::apply_rotary(k, rope);
  // The score of (m, n) depends only on m - n: rows (5, 3) and (7, 5) give the same score.
  const double s53 = rq.row(5).dot(rk.row(3)), s75 = rq.row(7).dot(rk.row(5));
  // [rotary-rope]
  std::printf("RoPE scores <q5,k3> = %.12f, <q7,k5> = %.12f\n", s53, s75);
  const bool ok = std::abs(s53 - s75) < 1e-12;
  std::printf(ok ? "all checks passed\n" : "CHECK FAILED\n");
  return ok ? 0 : 1;
}
