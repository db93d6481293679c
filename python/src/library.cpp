// SPDX-License-Identifier: MIT
// TORCH_LIBRARY(posenc, m): the operator namespace, once, with the library-wide op
// build_torch_version (the torch release the library was compiled against). The families register
// their own ops with TORCH_LIBRARY_FRAGMENT(posenc, m) in their files (see common.hpp).
#include "common.hpp"

namespace {

std::string build_torch_version() { return POSENC_TORCH_BUILD_VERSION; }

}  // namespace

TORCH_LIBRARY(posenc, m) {
  m.def("build_torch_version() -> str");
}

TORCH_LIBRARY_IMPL(posenc, CompositeExplicitAutograd, m) { m.impl("build_torch_version", TORCH_FN(build_torch_version)); }
