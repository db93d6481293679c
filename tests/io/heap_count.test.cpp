// SPDX-License-Identifier: MIT
// The global operator new and delete of posenc_tests_io, counting allocations and live bytes for
// tests/io/heap_count.hpp. Each block carries its size in a 16-byte prefix (malloc's alignment,
// so the pointer handed out keeps it). Not under the sanitizers, which keep their own operator new.
#include "io/heap_count.hpp"

#include <atomic>
#include <cstdlib>
#include <new>

#ifndef POSENC_TEST_NO_NEW_COUNT
namespace {
std::atomic<std::size_t> g_allocations{0}, g_live{0}, g_peak{0};
constexpr std::size_t prefix = 16;
}  // namespace

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"  // these delete what this new made with malloc
#endif
void* operator new(std::size_t n) {
  auto* p = static_cast<unsigned char*>(std::malloc(n + prefix));
  if (!p) throw std::bad_alloc();
  *reinterpret_cast<std::size_t*>(p) = n;
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  const std::size_t now = g_live.fetch_add(n, std::memory_order_relaxed) + n;
  std::size_t peak = g_peak.load(std::memory_order_relaxed);
  while (now > peak && !g_peak.compare_exchange_weak(peak, now, std::memory_order_relaxed)) {
  }
  return p + prefix;
}
void* operator new[](std::size_t n) { return operator new(n); }
void operator delete(void* q) noexcept {
  if (!q) return;
  auto* p = static_cast<unsigned char*>(q) - prefix;
  g_live.fetch_sub(*reinterpret_cast<std::size_t*>(p), std::memory_order_relaxed);
  std::free(p);
}
void operator delete[](void* p) noexcept { operator delete(p); }
void operator delete(void* p, std::size_t) noexcept { operator delete(p); }
void operator delete[](void* p, std::size_t) noexcept { operator delete(p); }
#endif

namespace io_test::heap {
#ifndef POSENC_TEST_NO_NEW_COUNT
bool counting() noexcept { return true; }
std::size_t allocations() noexcept { return g_allocations.load(); }
std::size_t live() noexcept { return g_live.load(); }
std::size_t peak() noexcept { return g_peak.load(); }
void reset_peak() noexcept { g_peak.store(g_live.load()); }
#else
bool counting() noexcept { return false; }
std::size_t allocations() noexcept { return 0; }
std::size_t live() noexcept { return 0; }
std::size_t peak() noexcept { return 0; }
void reset_peak() noexcept {}
#endif
}  // namespace io_test::heap
