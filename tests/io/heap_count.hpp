// SPDX-License-Identifier: MIT
// The io tests' heap accounting: tests/io/heap_count.test.cpp replaces the global operator new
// and delete of posenc_tests_io (not under AddressSanitizer or ThreadSanitizer, which keep their
// own) and counts allocations, live bytes and the peak of live bytes. The readers' memory budgets
// are checked with it by counting, never by timing.
#pragma once

#include <cstddef>

#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define POSENC_TEST_NO_NEW_COUNT 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define POSENC_TEST_NO_NEW_COUNT 1
#endif

namespace io_test::heap {

/// Whether operator new is counted in this build (false under the sanitizers).
bool counting() noexcept;
/// Allocations made so far by operator new (all threads).
std::size_t allocations() noexcept;
/// Bytes allocated by operator new and not yet deleted.
std::size_t live() noexcept;
/// The largest live() since the last reset_peak().
std::size_t peak() noexcept;
/// Start a new peak at the current live bytes.
void reset_peak() noexcept;

/// The largest number of bytes f held at once beyond what was live when it started.
template <class F>
std::size_t peak_growth(F&& f) {
  const std::size_t base = live();
  reset_peak();
  f();
  return peak() - base;
}

}  // namespace io_test::heap
