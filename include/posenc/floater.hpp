// SPDX-License-Identifier: MIT
// FLOATER: position encodings from a learned dynamical system (Liu et al., ICML 2020).
// Includes the encoder (posenc::floater::encoder, biased_encoder), its dynamics (floater/flow.hpp:
// the right-hand side h and its parameters) and gradients, the initialisers (floater/init.hpp),
// and the weight files (posenc::floater::load_* / save_*). See docs/floater.md.
#pragma once

#include <posenc/floater/encoder.hpp>
#include <posenc/floater/flow.hpp>
#include <posenc/floater/init.hpp>
#include <posenc/floater/io.hpp>
