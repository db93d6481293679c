// SPDX-License-Identifier: MIT
// Header-only FFT used by the Toeplitz/circulant products: a mixed-radix (8, 4, 2, 3, 5 and generic
// odd radices up to 13) Stockham transform on split (re[], im[]) arrays with twiddles precomputed
// in a plan, Bluestein's chirp-z algorithm for sizes with a larger prime factor, and real-input
// (r2c / c2r) transforms built on a half-length complex transform. No runtime library.
//
// Conventions (the same as FFTW and NumPy):
//   forward:  X_k = sum_j x_j exp(-2 pi i j k / n)
//   inverse:  x_j = sum_k X_k exp(+2 pi i j k / n)      (unnormalised: inverse(forward(x)) = n x)
//
// The FFT is a folder of small headers by concern, all included here:
//   fft/common.hpp       next_fast_size, the null-array check
//   fft/lanes.hpp        lane packs: W transforms at once, one per SIMD lane
//   fft/butterflies.hpp  the radix 2, 3, 4, 5, 8 butterflies
//   fft/stockham.hpp     the Stockham passes, the choice of radices, a pass sequence with its twiddles
//   fft/buffer.hpp       aligned_buffer (64-byte aligned arrays), indirect (an owned heap value)
//   fft/two_pass.hpp     one transform as two passes of lane-pack transforms
//   fft/strategies.hpp   the four ways a plan runs: Stockham, two-pass, four-step, Bluestein
//   fft/plan.hpp         plan: a complex FFT of one size, its strategy chosen once
//   fft/batch.hpp        batch_plan: width() transforms of one size at once, one per lane
//   fft/real_plan.hpp    real_plan: the real-input transform (r2c / c2r)
#pragma once

#include <posenc/numeric/fft/batch.hpp>
#include <posenc/numeric/fft/common.hpp>
#include <posenc/numeric/fft/plan.hpp>
#include <posenc/numeric/fft/real_plan.hpp>
#include <posenc/numeric/real_spectrum.hpp>
