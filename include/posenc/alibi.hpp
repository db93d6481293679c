// SPDX-License-Identifier: MIT
// Umbrella header of ALiBi (posenc::alibi): attention with linear biases (Press et al. 2022), the
// authors' per-head slopes and the bias added in place to attention scores. See docs/attention-bias.md.
#pragma once

#include <posenc/alibi/alibi.hpp>  // IWYU pragma: export
