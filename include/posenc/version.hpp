// SPDX-License-Identifier: MIT
// posenc: the library version, in one place (CMake reads these three lines).
#pragma once

#define POSENC_VERSION_MAJOR 0
#define POSENC_VERSION_MINOR 1
#define POSENC_VERSION_PATCH 0
#define POSENC_VERSION (POSENC_VERSION_MAJOR * 10000 + POSENC_VERSION_MINOR * 100 + POSENC_VERSION_PATCH)

namespace posenc {
inline constexpr int version_major = POSENC_VERSION_MAJOR;
inline constexpr int version_minor = POSENC_VERSION_MINOR;
inline constexpr int version_patch = POSENC_VERSION_PATCH;
}  // namespace posenc
