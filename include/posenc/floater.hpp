// SPDX-License-Identifier: MIT
// FLOATER: position encodings from a learned dynamical system (Liu et al., ICML 2020).
// Includes the encoder (posenc::floater::encoder, biased_encoder; floater/encoder.hpp and the
// headers of its parts: options, forward, table_cache, kept_stages, replay, gradients), its
// dynamics (floater/flow.hpp: the right-hand side h and its parameters), the initialisers
// (floater/init.hpp), and the weight files (posenc::floater::load_* / save_*). See docs/floater.md
// and docs/architecture.md (FLOATER's rooms).
#pragma once

#include <posenc/floater/encoder.hpp>
#include <posenc/floater/flow.hpp>
#include <posenc/floater/init.hpp>
#include <posenc/floater/io.hpp>
