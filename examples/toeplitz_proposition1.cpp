// SPDX-License-Identifier: MIT
// TUPE's Proposition 1: a Toeplitz matrix B factors as B = G D G*, with D from the eigenvalues of
// the 2n x 2n circulant embedding of eq. (12). Checked against the dense B.
#include <complex>
#include <cstdio>

#include <posenc/toeplitz.hpp>

int main() {
  namespace tz = posenc::toeplitz;
  // B (5 x 5) from its 2n-1 coefficients ordered by offset d = j - i: [b_-4, ..., b_4], b_d = d.
  Eigen::VectorXd b(9);
  b << -4, -3, -2, -1, 0, 1, 2, 3, 4;
  const auto B = tz::toeplitz_matrix<double>::square(5, b);
  // [toeplitz-proposition1]
  // Proposition 1: B = G D G* with G_jk = exp(i pi (j+1) k / n) / (2n) and D = 2n * eigenvalues of
  // the eq. (12) circulant (the factor 2n is the normalisation the paper leaves implicit).
  const auto G = tz::proposition1_G<double>(5);
  const auto D = tz::proposition1_D(B);
  const Eigen::MatrixXcd GDG = G * D.asDiagonal() * G.adjoint();
  // [toeplitz-proposition1]
  // Entries of size <= 4 through O(n) products of unit-modulus terms: 1e-12 is ~1e3 ulps.
  const double err = (GDG - B.dense().cast<std::complex<double>>()).cwiseAbs().maxCoeff();
  std::printf("Proposition 1: max |G D G* - B| = %.2e: %s\n", err, err <= 1e-12 ? "ok" : "FAILED");
  return err <= 1e-12 ? 0 : 1;
}
