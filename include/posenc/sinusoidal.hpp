// SPDX-License-Identifier: MIT
// Umbrella header of the sinusoidal family: posenc::sinusoidal (tables, eq. 7, the rotation
// M(phi), the eq. 9 and linear dynamics) and posenc::rotary (rotary position embedding).
#pragma once

#include <posenc/encoding/rotary.hpp>
#include <posenc/encoding/sinusoidal.hpp>
