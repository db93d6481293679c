// SPDX-License-Identifier: MIT
// A strided view of a caller's buffer (pointer, sizes, strides in elements): how the in-place
// attention operations (rotary::apply_inplace, alibi::add_bias) take an inference engine's own
// q/k/score tensors without copying them.
//
// Safe by construction: a view is made only through its constructors, which check every size
// against posenc::max_extent, the element count (the product of the sizes) against
// posenc::max_elements and the span the strides address (1 + sum |strides[j]| (sizes[j] - 1)
// elements) against posenc::max_elements, all through core/checked.hpp. The members are const,
// so a view that passed these checks cannot be changed into one that does not (assignment
// replaces the whole view by another checked one): every offset i0 strides[0] + ... of a valid
// index, and its byte offset, fits in std::ptrdiff_t.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>

#include <posenc/core/checked.hpp>
#include <posenc/core/error.hpp>

namespace posenc {

/// Element (i0, ..., i{R-1}) is data[i0 strides[0] + ... + i{R-1} strides[R-1]] (strides in
/// elements). Views do not own their data. Throws size_error (naming sizes[j] or strides[j])
/// when made with sizes or strides outside the bounds above.
template <class T, std::size_t Rank>
struct tensor_view {
  T* const data = nullptr;
  const std::array<std::size_t, Rank> sizes{};
  const std::array<std::ptrdiff_t, Rank> strides{};

  /// The empty view (null data, all sizes 0).
  tensor_view() = default;
  /// A view of p with the given sizes and strides (in elements), checked as the file comment says.
  tensor_view(T* p, const std::array<std::size_t, Rank>& sz, const std::array<std::ptrdiff_t, Rank>& st)
      : data(p), sizes(check_sizes(sz)), strides(check_strides(sz, st)) {}

  tensor_view(const tensor_view&) = default;
  /// Replaces the whole view by a copy of another (valid) one: the const members are never
  /// changed one by one (C++20 transparent replacement of the object).
  tensor_view& operator=(const tensor_view& o) noexcept {
    if (this != &o) {
      std::destroy_at(this);
      std::construct_at(this, o);
    }
    return *this;
  }

  /// A contiguous row-major view of `sizes` at p.
  static tensor_view contiguous(T* p, const std::array<std::size_t, Rank>& sz) {
    return tensor_view(p, sz, row_major_strides(check_sizes(sz)));
  }
  /// The number of elements (the product of the sizes; at most posenc::max_elements).
  [[nodiscard]] std::size_t elements() const noexcept {
    std::size_t n = 1;
    for (auto s : sizes) n *= s;  // cannot overflow: checked when the view was made
    return n;
  }

 private:
  static constexpr std::string_view where = "tensor_view";

  static std::string name(std::string_view what, std::size_t j) { return detail::concat(what, "[", j, "]"); }

  /// Each size <= max_extent, the product <= max_elements.
  static const std::array<std::size_t, Rank>& check_sizes(const std::array<std::size_t, Rank>& sz) {
    for (std::size_t j = 0; j < Rank; ++j) (void)checked::extent(sz[j], where, name("sizes", j));
    std::size_t n = 1;
    for (std::size_t j = 0; j < Rank; ++j) n = checked::elements(n, sz[j], where, "sizes (the element count)");
    return sz;
  }

  static std::array<std::ptrdiff_t, Rank> row_major_strides(const std::array<std::size_t, Rank>& sz) {
    std::array<std::ptrdiff_t, Rank> st{};
    std::ptrdiff_t s = 1;
    for (std::size_t j = Rank; j-- > 0;) {
      st[j] = s;
      s = checked::mul(s, static_cast<std::ptrdiff_t>(sz[j]), where, name("strides", j));
    }
    return st;
  }

  /// 1 + sum |strides[j]| (sizes[j] - 1) <= max_elements when the view has elements (an empty view
  /// addresses nothing, whatever its strides).
  static const std::array<std::ptrdiff_t, Rank>& check_strides(const std::array<std::size_t, Rank>& sz,
                                                               const std::array<std::ptrdiff_t, Rank>& st) {
    for (std::size_t j = 0; j < Rank; ++j)
      if (sz[j] == 0) return st;
    std::size_t span = 1;
    for (std::size_t j = 0; j < Rank; ++j) {
      if (sz[j] <= 1) continue;
      if (st[j] == std::numeric_limits<std::ptrdiff_t>::min())
        detail::fail<size_error>(where, name("strides", j), ": expected |", name("strides", j),
                                 "| (sizes - 1) within posenc::max_elements = ", max_elements, ", got ", st[j]);
      const auto a = static_cast<std::size_t>(st[j] < 0 ? -st[j] : st[j]);
      span = checked::add(span, checked::mul(a, sz[j] - 1, where, name("strides", j)), where, name("strides", j));
      if (span > max_elements)
        detail::fail<size_error>(where, name("strides", j), ": the view spans ", span,
                                 " elements or more (strides ", st[j], " over ", sz[j],
                                 " entries), expected at most posenc::max_elements = ", max_elements);
    }
    return st;
  }
};

}  // namespace posenc
