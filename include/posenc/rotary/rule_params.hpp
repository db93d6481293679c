// SPDX-License-Identifier: MIT
// Deprecated path, kept so that code written against posenc 0.1 keeps compiling: this header moved
// to <posenc/rotary/rules/rule_params.hpp> (rotary/rules/: the frequency rules). Include that header, or
// <posenc/rotary.hpp>; this one will be removed in a later release. No header of the library
// includes it (tests/layering/check_layers.cmake).
#pragma once

#include <posenc/rotary/rules/rule_params.hpp>  // IWYU pragma: export
