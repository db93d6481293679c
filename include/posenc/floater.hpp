// SPDX-License-Identifier: MIT
// FLOATER: position encodings from a learned dynamical system (Liu et al., ICML 2020).
// Includes the encoder (posenc::floater::encoder, biased_encoder), its dynamics and gradients,
// and the weight files (posenc::floater::load_* / save_*). See docs/floater.md.
#pragma once

#include <posenc/encoding/floater.hpp>
#include <posenc/encoding/floater_flow.hpp>
#include <posenc/encoding/floater_io.hpp>
