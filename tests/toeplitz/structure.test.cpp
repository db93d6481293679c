// SPDX-License-Identifier: MIT
// Toeplitz indexing, circulant embeddings (eq. 12, minimal, arbitrary), circulant eigenvalues and
// Proposition 1 (B = G D G*), each against an independent construction.
#include <doctest/doctest.h>

#include <cmath>
#include <complex>
#include <vector>

#include "toeplitz/common.hpp"

namespace tz = posenc::toeplitz;
using tp_test::cld;

TEST_CASE("toeplitz indexing - dense, row, col, coefficient agree with scipy.linalg.toeplitz(c, r)") {
  // Reference: scipy's definition T[i, j] = c[i - j] if i >= j else r[j - i], built from the first
  // column c and first row r, independently of the coefficient layout. Exact (copies only).
  for (std::size_t m : {1u, 2u, 5u, 9u})
    for (std::size_t n : {1u, 3u, 5u, 12u}) {
      const auto c = tp_test::random_vector<double>(m);
      auto r = tp_test::random_vector<double>(n);
      r[0] = c[0];
      const auto B = tz::toeplitz_matrix<double>::from_column_row(c, r);
      REQUIRE(B.rows() == m);
      REQUIRE(B.cols() == n);
      const auto D = B.dense();
      for (std::size_t i = 0; i < m; ++i)
        for (std::size_t j = 0; j < n; ++j) {
          const double ref = i >= j ? c[Eigen::Index(i - j)] : r[Eigen::Index(j - i)];
          CHECK(D(Eigen::Index(i), Eigen::Index(j)) == ref);
          CHECK(B(i, j) == ref);
          CHECK(B.coefficient(std::ptrdiff_t(j) - std::ptrdiff_t(i)) == ref);
        }
      for (std::size_t i = 0; i < m; ++i) CHECK(B.row(i) == D.row(Eigen::Index(i)).transpose());
      for (std::size_t j = 0; j < n; ++j) CHECK(B.col(j) == D.col(Eigen::Index(j)));
      // Layout: coefficients()[d + m - 1] = b_d.
      for (std::ptrdiff_t d = -std::ptrdiff_t(m - 1); d < std::ptrdiff_t(n); ++d)
        CHECK(B.coefficients()[Eigen::Index(d + std::ptrdiff_t(m) - 1)] == (d >= 0 ? r[d] : c[-d]));
    }
}

TEST_CASE("circulant embeddings - eq. 12 piecewise definition, top-left block, circulant structure") {
  // Reference for eq. (12): the paper's piecewise formula written out literally with b_{+-n} = b_0.
  for (std::size_t n : {1u, 2u, 3u, 6u, 11u}) {
    const auto b = tp_test::random_vector<double>(2 * n - 1);
    const auto B = tz::toeplitz_matrix<double>::square(n, b);
    auto bb = [&](std::ptrdiff_t d) {  // b_d with b_{-n} = b_n = b_0
      if (d == std::ptrdiff_t(n) || d == -std::ptrdiff_t(n)) d = 0;
      return b[Eigen::Index(d + std::ptrdiff_t(n) - 1)];
    };
    const auto C = tz::paper_embedding(B).dense();
    const std::ptrdiff_t N = 2 * std::ptrdiff_t(n);
    REQUIRE(C.rows() == N);
    for (std::ptrdiff_t j = 0; j < N; ++j)
      for (std::ptrdiff_t k = 0; k < N; ++k) {
        const std::ptrdiff_t d = k - j;
        const double ref = (d >= -std::ptrdiff_t(n) && d <= std::ptrdiff_t(n)) ? bb(d)
                           : d > std::ptrdiff_t(n)                              ? bb(d - N)
                                                                                : bb(d + N);
        CHECK(C(j, k) == ref);
      }
  }
  // Any size >= m+n-1, rectangular B: top-left block is B and C is circulant (exact).
  for (std::size_t m : {1u, 4u, 7u})
    for (std::size_t n : {1u, 3u, 8u}) {
      const auto B = tz::toeplitz_matrix<double>(m, n, tp_test::random_vector<double>(m + n - 1));
      for (std::size_t extra : {0u, 1u, 5u}) {
        const auto C = tz::circulant_embedding(B, m + n - 1 + extra, 0.25).dense();
        CHECK(C.topLeftCorner(Eigen::Index(m), Eigen::Index(n)) == B.dense());
        const Eigen::Index N = C.rows();
        for (Eigen::Index j = 0; j < N; ++j)
          for (Eigen::Index k = 0; k < N; ++k) CHECK(C(j, k) == C((j + 1) % N, (k + 1) % N));
      }
      CHECK(tz::minimal_embedding(B).size() == m + n - 1);
    }
}

TEST_CASE("circulant eigenvalues - against a direct DFT and against C f_k = lambda_k f_k") {
  // (1) FFT eigenvalues vs a long double direct DFT of the first column (tol 1e-13, FFT rounding).
  // (2) Definition check with the dense matrix: ||C f_k - lambda_k f_k|| <= 1e-12 ||C|| ||f_k||.
  for (std::size_t N : {1u, 2u, 7u, 16u, 17u, 30u, 63u}) {
    const auto c = tp_test::random_vector<std::complex<double>>(N);
    const tz::circulant_matrix<std::complex<double>> C(c);
    const auto lam = C.eigenvalues();
    std::vector<cld> cl(N);
    for (std::size_t j = 0; j < N; ++j) cl[j] = cld(c[Eigen::Index(j)].real(), c[Eigen::Index(j)].imag());
    CHECK(tp_test::rel_max_error(lam, tp_test::direct_dft(cl, -1)) <= 1e-13L);
    const auto Cd = C.dense();
    for (std::size_t k = 0; k < N; ++k) {
      Eigen::VectorXcd f(static_cast<Eigen::Index>(N));
      for (std::size_t j = 0; j < N; ++j)
        f[Eigen::Index(j)] = std::polar(1.0, 2 * std::numbers::pi * double((j * k) % N) / double(N));
      const Eigen::VectorXcd res = Cd * f - lam[Eigen::Index(k)] * f;
      CHECK(res.norm() <= 1e-12 * Cd.norm() * f.norm());
    }
    // First row / first column relation of the stored convention C_jk = c_{(j-k) mod N}.
    CHECK(C.first_row().transpose() == Cd.row(0));
  }
}

TEST_CASE("Proposition 1 - B = G D G* to rounding, both index conventions, real and complex B") {
  // D is derived in docs/toeplitz.md: D = 2n lambda (printed G) or 2n lambda shifted by one
  // (Appendix A's G). Tolerance: ||G D G* - B||_max <= 1e-12 max|b| (an O(n) sum of O(1) terms
  // with eps rounding each, n <= 64).
  for (std::size_t n : {1u, 2u, 3u, 5u, 8u, 17u, 32u, 64u}) {
    for (auto conv : {tz::prop1_convention::proposition, tz::prop1_convention::appendix}) {
      const auto G = tz::proposition1_G<double>(n, conv);
      REQUIRE(G.rows() == Eigen::Index(n));
      REQUIRE(G.cols() == Eigen::Index(2 * n));
      // G against its printed formula, entry by entry.
      for (std::size_t j = 0; j < n; ++j)
        for (std::size_t k = 0; k < 2 * n; ++k) {
          const double e = conv == tz::prop1_convention::proposition ? double((j + 1) * k) : double(j * (k + 1));
          const auto ref = std::polar(1.0 / double(2 * n), std::numbers::pi * e / double(n));
          CHECK(std::abs(G(Eigen::Index(j), Eigen::Index(k)) - ref) <= 1e-12);
        }
      {
        const auto B = tz::toeplitz_matrix<double>::square(n, tp_test::random_vector<double>(2 * n - 1));
        const auto D = tz::proposition1_D(B, conv);
        const Eigen::MatrixXcd R = G * D.asDiagonal() * G.adjoint();
        const double scale = B.coefficients().cwiseAbs().maxCoeff();
        CHECK((R - B.dense().cast<std::complex<double>>()).cwiseAbs().maxCoeff() <= 1e-12 * scale);
        // The eigenvalues "as they stand" give B / (2n): the normalisation erratum.
        const auto lam = tz::paper_embedding(B).eigenvalues();
        if (conv == tz::prop1_convention::proposition) {
          const Eigen::MatrixXcd R2 = G * lam.asDiagonal() * G.adjoint();
          CHECK((R2 * double(2 * n) - B.dense().cast<std::complex<double>>()).cwiseAbs().maxCoeff() <= 1e-12 * scale);
        }
      }
      {
        const auto B = tz::toeplitz_matrix<std::complex<double>>::square(
            n, tp_test::random_vector<std::complex<double>>(2 * n - 1));
        const auto D = tz::proposition1_D(B, conv);
        const Eigen::MatrixXcd R = G * D.asDiagonal() * G.adjoint();
        CHECK((R - B.dense()).cwiseAbs().maxCoeff() <= 1e-12 * B.coefficients().cwiseAbs().maxCoeff());
      }
    }
  }
}

TEST_CASE("Proposition 1 - D is unique up to the alternating vector, the wrap slot b_n moves D along it") {
  // Independent facts derived in docs/toeplitz.md: G diag((-1)^k) G* = 0 (so D + c (-1)^k gives the
  // same B), and changing the eq. (12) slot b_{+-n} by t changes D by 2n t (-1)^k.
  for (std::size_t n : {1u, 3u, 8u}) {
    const auto G = tz::proposition1_G<double>(n);
    Eigen::VectorXcd alt(static_cast<Eigen::Index>(2 * n));
    for (Eigen::Index k = 0; k < alt.size(); ++k) alt[k] = (k % 2 == 0) ? 1.0 : -1.0;
    const Eigen::MatrixXcd Z = G * alt.asDiagonal() * G.adjoint();
    CHECK(Z.cwiseAbs().maxCoeff() <= 1e-15);
    const auto B = tz::toeplitz_matrix<double>::square(n, tp_test::random_vector<double>(2 * n - 1));
    const double t = 0.75;
    const auto lam0 = tz::paper_embedding(B).eigenvalues();
    const auto lam1 = tz::circulant_embedding(B, 2 * n, B.coefficient(0) + t).eigenvalues();
    CHECK(((lam1 - lam0) * double(2 * n) - double(2 * n) * t * alt).cwiseAbs().maxCoeff() <= 1e-12);
  }
}

TEST_CASE("Appendix A - Q D Q* is the whole eq. 12 circulant") {
  // Q (2n x 2n), Q_kj = w^{(j+1)k}/(2n) with row k as printed; with D_j = 2n lambda_{(j+1) mod 2n}
  // (the appendix convention of proposition1_D) Q D Q* reproduces the full circulant B-hat.
  for (std::size_t n : {1u, 4u, 9u}) {
    const auto B = tz::toeplitz_matrix<double>::square(n, tp_test::random_vector<double>(2 * n - 1));
    const std::size_t N = 2 * n;
    Eigen::MatrixXcd Q(static_cast<Eigen::Index>(N), static_cast<Eigen::Index>(N));
    for (std::size_t k = 0; k < N; ++k)
      for (std::size_t j = 0; j < N; ++j)
        Q(Eigen::Index(k), Eigen::Index(j)) =
            std::polar(1.0 / double(N), std::numbers::pi * double(((j + 1) * k) % N) / double(n));
    const auto D = tz::proposition1_D(B, tz::prop1_convention::appendix);
    const Eigen::MatrixXcd R = Q * D.asDiagonal() * Q.adjoint();
    const auto C = tz::paper_embedding(B).dense();
    CHECK((R - C.cast<std::complex<double>>()).cwiseAbs().maxCoeff() <= 1e-12 * B.coefficients().cwiseAbs().maxCoeff());
  }
}
