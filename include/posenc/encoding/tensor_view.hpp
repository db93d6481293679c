// SPDX-License-Identifier: MIT
// A strided view of a caller's buffer (pointer, sizes, strides in elements): how the in-place
// attention operations (rotary::apply_inplace, alibi::add_bias) take an inference engine's own
// q/k/score tensors without copying them.
#pragma once

#include <array>
#include <cstddef>

namespace posenc {

/// Element (i0, ..., i{R-1}) is data[i0 strides[0] + ... + i{R-1} strides[R-1]] (strides in
/// elements). Views do not own their data.
template <class T, std::size_t Rank>
struct tensor_view {
  T* data = nullptr;
  std::array<std::size_t, Rank> sizes{};
  std::array<std::ptrdiff_t, Rank> strides{};

  /// A contiguous row-major view of `sizes` at p.
  static tensor_view contiguous(T* p, const std::array<std::size_t, Rank>& sizes) {
    tensor_view v{p, sizes, {}};
    std::ptrdiff_t s = 1;
    for (std::size_t j = Rank; j-- > 0;) {
      v.strides[j] = s;
      s *= static_cast<std::ptrdiff_t>(sizes[j]);
    }
    return v;
  }
  /// The number of elements (the product of the sizes).
  [[nodiscard]] std::size_t elements() const {
    std::size_t n = 1;
    for (auto s : sizes) n *= s;
    return n;
  }
};

}  // namespace posenc
