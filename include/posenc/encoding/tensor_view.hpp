// SPDX-License-Identifier: MIT
// Deprecated path, kept so that code written against posenc 0.1 keeps compiling: the library's
// view and table types moved to <posenc/tensor/tensor_view.hpp> (include/posenc/tensor/: what the folder
// holds, the tensor types the families share). Include that header instead; this one will be
// removed in a later release. No header of the library includes it (tests/layering/check_layers.cmake).
#pragma once

#include <posenc/tensor/tensor_view.hpp>  // IWYU pragma: export
