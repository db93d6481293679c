// SPDX-License-Identifier: MIT
// Every encoding on the Thrust device system, in one include: device tables and explicit
// transfers, sinusoidal (eq. 6/7), rotary, TUPE (buckets, relative bias, positional term with the
// [CLS] reset), Toeplitz materialisation and the FLOATER forward pass. See docs/device.md.
#pragma once

#include <posenc/backend/thrust.hpp>
#include <posenc/backend/thrust/floater.hpp>
#include <posenc/backend/thrust/rotary.hpp>
#include <posenc/backend/thrust/sinusoidal.hpp>
#include <posenc/backend/thrust/table.hpp>
#include <posenc/backend/thrust/toeplitz.hpp>
#include <posenc/backend/thrust/tupe.hpp>
