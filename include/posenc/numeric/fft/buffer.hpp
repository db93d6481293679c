// SPDX-License-Identifier: MIT
// The FFT's storage: `aligned_buffer`, an array whose data() starts on a 64-byte boundary, and
// `indirect`, an owned value on the heap that copies deeply (how a plan holds the plans it runs
// on: a plan's strategy may itself hold plans). Part of <posenc/numeric/fft.hpp>.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

namespace posenc::fft::detail {

/// A buffer whose data() is aligned to 64 bytes (lane packs load whole cache lines).
template <class T>
class aligned_buffer {
 public:
  aligned_buffer() = default;
  aligned_buffer(const aligned_buffer& o) { *this = o; }
  aligned_buffer& operator=(const aligned_buffer& o) {
    if (this != &o) {
      assign(o.m_n);
      std::copy(o.data(), o.data() + o.m_n, data());
    }
    return *this;
  }
  aligned_buffer(aligned_buffer&&) noexcept = default;  // the heap block moves: the offset stays valid
  aligned_buffer& operator=(aligned_buffer&&) noexcept = default;
  ~aligned_buffer() = default;

  void assign(std::size_t n) {
    m_v.assign(n + pad, T(0));
    const auto addr = reinterpret_cast<std::uintptr_t>(m_v.data());
    m_off = ((64 - addr % 64) % 64) / sizeof(T);
    m_n = n;
  }
  [[nodiscard]] T* data() noexcept { return m_v.data() + m_off; }
  [[nodiscard]] const T* data() const noexcept { return m_v.data() + m_off; }
  [[nodiscard]] std::size_t size() const noexcept { return m_n; }

 private:
  static constexpr std::size_t pad = 64 / sizeof(T) + 1;
  std::vector<T> m_v;
  std::size_t m_off = 0, m_n = 0;
};

/// An owned U on the heap with value semantics (C++26's std::indirect): never null once made,
/// copied deeply, moved by pointer. It lets a type hold values of a type that is still incomplete
/// where it is declared, e.g. a plan strategy holding the plans of its sub-transforms. A moved-from
/// indirect holds nothing and may only be assigned to or destroyed.
template <class U>
class indirect {
 public:
  template <class... Args>
  explicit indirect(std::in_place_t, Args&&... args) : m_p(std::make_unique<U>(std::forward<Args>(args)...)) {}
  indirect(const indirect& o) : m_p(std::make_unique<U>(*o.m_p)) {}
  indirect& operator=(const indirect& o) {
    if (this != &o) m_p = std::make_unique<U>(*o.m_p);
    return *this;
  }
  indirect(indirect&&) noexcept = default;
  indirect& operator=(indirect&&) noexcept = default;
  ~indirect() = default;

  [[nodiscard]] U& operator*() noexcept { return *m_p; }
  [[nodiscard]] const U& operator*() const noexcept { return *m_p; }
  [[nodiscard]] U* operator->() noexcept { return m_p.get(); }
  [[nodiscard]] const U* operator->() const noexcept { return m_p.get(); }

 private:
  std::unique_ptr<U> m_p;
};

}  // namespace posenc::fft::detail
