// SPDX-License-Identifier: MIT
// Umbrella header of the sinusoidal family (posenc::sinusoidal): tables (eq. 6, interleaved and
// half layouts), the per-block form (eq. 7), the rotation M(phi), and the eq. 9 and linear
// dynamics that generate the table. Rotary embeddings are in <posenc/rotary.hpp>.
#pragma once

#include <posenc/sinusoidal/grid.hpp>  // IWYU pragma: export
#include <posenc/sinusoidal/sinusoidal.hpp>  // IWYU pragma: export
