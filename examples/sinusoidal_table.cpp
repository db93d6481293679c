// SPDX-License-Identifier: MIT
// The sinusoidal encoding: build the table (eq. 6) in both layouts and into a caller's buffer,
// and check the offset rotation PE(t + phi) = M(phi) PE(t). (RoPE: examples/rotary_rope.cpp.)
#include <cmath>
#include <cstdio>
#include <vector>

#include <posenc/sinusoidal.hpp>

int main() {
  namespace ps = posenc::sinusoidal;
  bool ok = true;

  // [sinusoidal-table]
  // 1024 positions, d = 512, eq. 6 (interleaved sin/cos, w_k = 10000^(-2k/d)), in float.
  const posenc::table<float> pe = ps::table<float>(1024, 512);
  // The [sin | cos] layout with w_k = 10000^(-k/(d/2 - 1)), positions from 1 (fairseq's table).
  ps::options fairseq;
  fairseq.layout = ps::layout::half;
  fairseq.spacing = ps::spacing::k_over_half_minus_one;
  fairseq.first_position = 1;
  const posenc::table<double> pf = ps::table<double>(100, 64, fairseq);
  // Fill a caller-owned buffer (no allocation of the table): rows 10..19 of a bigger matrix.
  posenc::table<float> buffer = posenc::table<float>::Zero(32, 512);
  ps::fill(buffer.middleRows(10, 10), {.first_position = 500});
  // [sinusoidal-table]
  std::printf("PE(1)[0..3] = %.6f %.6f %.6f %.6f\n", pe(1, 0), pe(1, 1), pe(1, 2), pe(1, 3));
  std::printf("fairseq PE(1)[0], PE(1)[32] = %.6f %.6f\n", pf(0, 0), pf(0, 32));
  ok = ok && std::abs(pe(1, 0) - std::sin(1.0f)) < 1e-6f && std::abs(pe(1, 1) - std::cos(1.0f)) < 1e-6f;
  ok = ok && (buffer.middleRows(10, 10) - pe.middleRows(500, 10)).cwiseAbs().maxCoeff() < 1e-6f;

  // [sinusoidal-rotation]
  // PE(t + phi) = M(phi) PE(t): the same M for every t.
  const double phi = 7.5;
  const posenc::matrix<double> M = ps::rotation<double>(phi, 64);
  double worst = 0;
  for (double t : {0.0, 3.0, 1000.25}) {
    const posenc::vector<double> shifted = M * ps::encode<double>(t, 64);
    worst = std::max(worst, (shifted - ps::encode<double>(t + phi, 64)).cwiseAbs().maxCoeff());
  }
  // PE(t) . PE(t + k) depends only on k: sum_k cos(w_k k).
  const double dot = ps::inner_product<double>(5.0, 64);
  // [sinusoidal-rotation]
  std::printf("max |M(phi) PE(t) - PE(t + phi)| = %.2e, PE(t).PE(t+5) = %.6f\n", worst, dot);
  ok = ok && worst < 1e-13;

  std::printf(ok ? "all checks passed\n" : "CHECK FAILED\n");
  return ok ? 0 : 1;
}
