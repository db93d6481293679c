// SPDX-License-Identifier: MIT
// Umbrella header of the rotary family (posenc::rotary): rotary position embeddings (RoPE),
// their context-extension rules, config.json loading, cos/sin tables and their application to
// query/key rows.
#pragma once

#include <posenc/rotary/rotary.hpp>  // IWYU pragma: export
#include <posenc/rotary/frequencies.hpp>
#include <posenc/rotary/apply.hpp>    // IWYU pragma: export
#include <posenc/rotary/decode_cache.hpp>  // IWYU pragma: export
#include <posenc/rotary/rules/rules.hpp>    // IWYU pragma: export
#include <posenc/rotary/rules/scaling.hpp>  // IWYU pragma: export
#include <posenc/rotary/table.hpp>    // IWYU pragma: export
#include <posenc/rotary/config/config.hpp>   // IWYU pragma: export
#include <posenc/rotary/axes/axes.hpp>     // IWYU pragma: export
#include <posenc/rotary/axes/axes_apply.hpp>  // IWYU pragma: export
#include <posenc/rotary/axes/mrope.hpp>    // IWYU pragma: export
#include <posenc/rotary/axes/mrope_config.hpp>  // IWYU pragma: export
#include <posenc/rotary/axes/diffusion.hpp>  // IWYU pragma: export
#include <posenc/rotary/axes/vision.hpp>     // IWYU pragma: export
