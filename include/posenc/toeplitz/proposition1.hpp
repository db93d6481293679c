// SPDX-License-Identifier: MIT
// Proposition 1 of the TUPE paper (and Appendix A): a square Toeplitz B = G D G*, with G the
// n x 2n matrix of roots of unity and D the diagonal from the eigenvalues of the eq. (12)
// circulant. Part of <posenc/toeplitz/toeplitz.hpp>.
#pragma once

#include <Eigen/Core>
#include <complex>
#include <concepts>
#include <cstddef>
#include <cstdint>

#include <posenc/core/checked.hpp>
#include <posenc/core/error.hpp>
#include <posenc/numeric/real_spectrum.hpp>
#include <posenc/tensor/table.hpp>
#include <posenc/toeplitz/matrix.hpp>

namespace posenc::toeplitz {

/// Index convention of G. `proposition` is Proposition 1 as printed, G_jk = w^{(j+1)k} / (2n);
/// `appendix` is the first n rows of Appendix A's Q (Q_kj = w^{(j+1)k}/(2n), row k), i.e.
/// G_jk = w^{j(k+1)} / (2n). Here w = exp(i pi / n), 0 <= j < n, 0 <= k < 2n.
enum class prop1_convention { proposition, appendix };

/// G (n x 2n, complex) of Proposition 1.
template <std::floating_point T>
[[nodiscard]] posenc::matrix<std::complex<T>> proposition1_G(std::size_t n,
                                                             prop1_convention conv = prop1_convention::proposition) {
  posenc::detail::require(n >= 1, "toeplitz::proposition1_G", "n must be >= 1, got ", n);
  (void)checked::extent(n, "toeplitz::proposition1_G", "n");
  const std::uint64_t N = 2 * std::uint64_t(n);
  auto G = posenc::detail::allocate_matrix<posenc::matrix<std::complex<T>>>(n, static_cast<std::size_t>(N),
                                                                            "toeplitz::proposition1_G", "n", "2n");
  const T scale = T(1) / static_cast<T>(N);
  for (std::uint64_t j = 0; j < n; ++j)
    for (std::uint64_t k = 0; k < N; ++k) {
      const std::uint64_t e = conv == prop1_convention::proposition ? ((j + 1) * k) % N : (j * (k + 1)) % N;
      T re, im;
      fft::unit_root(N - e, N, re, im);  // exp(+2 pi i e / N) = w^e
      G(static_cast<Eigen::Index>(j), static_cast<Eigen::Index>(k)) = std::complex<T>(re * scale, im * scale);
    }
  return G;
}

/// The diagonal of D (length 2n) with B = G D G* for the G of `conv`: with lambda the eigenvalues
/// of the eq. (12) circulant (circulant_matrix::eigenvalues, the DFT of its first column),
///   proposition:  D_k = 2n lambda_k,          appendix:  D_k = 2n lambda_{(k+1) mod 2n}.
/// The factor 2n is the normalisation: G's columns carry 1/(2n), not 1/sqrt(2n).
template <scalar S>
[[nodiscard]] coeff_vector<std::complex<real_of<S>>> proposition1_D(const toeplitz_matrix<S>& B,
                                                                  prop1_convention conv = prop1_convention::proposition) {
  using R = real_of<S>;
  posenc::detail::require<shape_error>(B.is_square(), "toeplitz::proposition1_D",
                                       "Proposition 1 is stated for a square n x n matrix, got ", B.rows(), " x ",
                                       B.cols());
  const auto lambda = paper_embedding(B).eigenvalues();
  const Eigen::Index N = lambda.size();
  coeff_vector<std::complex<R>> D(N);
  for (Eigen::Index k = 0; k < N; ++k)
    D[k] = static_cast<R>(N) * lambda[conv == prop1_convention::proposition ? k : (k + 1) % N];
  return D;
}

}  // namespace posenc::toeplitz
