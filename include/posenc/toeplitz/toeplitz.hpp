// SPDX-License-Identifier: MIT
// Toeplitz and circulant matrices (TUPE paper, section 3.3, Proposition 1 and Appendix A):
// B_ij = b_{j-i} stored as its coefficients, dense materialisation and exact row/column access,
// circulant embeddings (the paper's eq. 12 of size 2n, the minimal one of size m+n-1, any larger
// size), circulant eigenvalues by FFT, O(k n log n) products B X through a plan that owns the
// spectrum and every buffer, the matrices G and D of Proposition 1, and relative-bias tables
// (per-offset or bucketed, per head) as Toeplitz operators.
//
// The area is a folder of headers by concern, all included here:
//   toeplitz/matrix.hpp        toeplitz_matrix, circulant_matrix, the circulant embeddings, `scalar`
//   toeplitz/proposition1.hpp  Proposition 1: G, D with B = G D G*
//   toeplitz/product.hpp       product_plan, multiply: O(k P log P) products B X
//   toeplitz/bias.hpp          relative-bias tables as Toeplitz operators, per head
#pragma once

#include <posenc/toeplitz/bias.hpp>
#include <posenc/toeplitz/matrix.hpp>
#include <posenc/toeplitz/product.hpp>
#include <posenc/toeplitz/proposition1.hpp>
