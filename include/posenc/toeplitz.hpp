// SPDX-License-Identifier: MIT
// Umbrella header of the Toeplitz/circulant area: posenc::toeplitz (matrices, embeddings,
// Proposition 1, O(n log n) products, relative-bias operators) and the FFT it runs on (posenc::fft).
#pragma once

#include <posenc/numeric/fft.hpp>
#include <posenc/toeplitz/toeplitz.hpp>
