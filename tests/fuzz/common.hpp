// SPDX-License-Identifier: MIT
// Shared by the libFuzzer harnesses: run a reader on the fuzzer's bytes; a posenc::error is the
// promised outcome for a bad file, anything else that escapes (std::bad_alloc, std::length_error,
// a non-posenc exception) is a finding and aborts, as do the sanitizers' reports.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <span>

#include <posenc/core/error.hpp>

namespace posenc_fuzz {

template <class F>
int guarded(const std::uint8_t* data, std::size_t size, F&& f) {
  const std::span<const std::byte> bytes(reinterpret_cast<const std::byte*>(data), size);
  try {
    f(bytes);
  } catch (const posenc::error&) {
    // the promised outcome for a malformed file
  } catch (const std::exception& e) {
    std::fprintf(stderr, "non-posenc exception escaped: %s\n", e.what());
    std::abort();
  }
  return 0;
}

/// A property the harness checks on an accepted file; a violation aborts (a finding).
inline void expect(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "property violated: %s\n", what);
    std::abort();
  }
}

}  // namespace posenc_fuzz
