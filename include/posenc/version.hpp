// SPDX-License-Identifier: MIT
// posenc: the library version, in one place (CMake reads these three lines), and the language
// check: every public header includes this one (through posenc/core), so a translation unit
// compiled below C++20 stops here with one clear message.
#pragma once

#if defined(_MSVC_LANG) && !defined(__clang__)
#define POSENC_CPLUSPLUS _MSVC_LANG
#else
#define POSENC_CPLUSPLUS __cplusplus
#endif
#if POSENC_CPLUSPLUS < 202002L
#error "posenc needs C++20 or later: compile with -std=c++20 (or -std=c++23, /std:c++20); the pkg-config files and CMake's posenc::posenc do not choose the standard for you"
#endif

#define POSENC_VERSION_MAJOR 0
#define POSENC_VERSION_MINOR 2
#define POSENC_VERSION_PATCH 0
#define POSENC_VERSION (POSENC_VERSION_MAJOR * 10000 + POSENC_VERSION_MINOR * 100 + POSENC_VERSION_PATCH)

namespace posenc {
inline constexpr int version_major = POSENC_VERSION_MAJOR;
inline constexpr int version_minor = POSENC_VERSION_MINOR;
inline constexpr int version_patch = POSENC_VERSION_PATCH;
}  // namespace posenc
