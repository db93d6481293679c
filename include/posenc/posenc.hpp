// SPDX-License-Identifier: MIT
// posenc: everything that runs on the host with Eigen, in one include (CMake target posenc::eigen).
// The ODE toolkit, the Eigen state adapter, the encodings (sinusoidal and rotary, FLOATER, TUPE,
// Toeplitz/circulant relative positions) and the tensor I/O (.npy, safetensors). The adapters whose
// dependencies are optional are not included: <posenc/adapters/xtensor.hpp> (posenc::xtensor),
// <posenc/adapters/odeint.hpp> (posenc::odeint), <posenc/adapters/thrust.hpp> (posenc::thrust).
#pragma once

#include <posenc/version.hpp>  // IWYU pragma: export

#include <posenc/adapters/eigen.hpp>  // IWYU pragma: export
#include <posenc/ode.hpp>            // IWYU pragma: export

#include <posenc/alibi.hpp>       // IWYU pragma: export
#include <posenc/floater.hpp>     // IWYU pragma: export
#include <posenc/rotary.hpp>      // IWYU pragma: export
#include <posenc/sinusoidal.hpp>  // IWYU pragma: export
#include <posenc/toeplitz.hpp>    // IWYU pragma: export
#include <posenc/tupe.hpp>        // IWYU pragma: export

#include <posenc/io/array.hpp>        // IWYU pragma: export
#include <posenc/io/npy.hpp>          // IWYU pragma: export
#include <posenc/io/safetensors.hpp>  // IWYU pragma: export
