// SPDX-License-Identifier: MIT
// Every encoding on the Thrust device system, in one include: device tables and explicit
// transfers, sinusoidal (eq. 6/7), rotary (tables, in-place q/k application), ALiBi, TUPE (buckets,
// relative bias, positional term with the [CLS] reset), Toeplitz materialisation and the FLOATER
// forward pass. See docs/device.md.
#pragma once

#include <posenc/adapters/thrust.hpp>
#include <posenc/device/alibi.hpp>
#include <posenc/device/floater.hpp>
#include <posenc/device/rotary.hpp>
#include <posenc/device/sinusoidal.hpp>
#include <posenc/device/table.hpp>
#include <posenc/device/toeplitz.hpp>
#include <posenc/device/tupe.hpp>
