// SPDX-License-Identifier: MIT
// What every FFT header shares: the fast sizes (next_fast_size) and the check that a transform's
// caller arrays are not null. Part of <posenc/numeric/fft.hpp>.
#pragma once

#include <cstddef>

#include <posenc/core/error.hpp>

namespace posenc::fft {

/// Smallest m >= n whose prime factors are all in {2, 3, 5} (the sizes the plan runs fastest).
[[nodiscard]] inline std::size_t next_fast_size(std::size_t n) {
  posenc::detail::require(n <= (std::size_t{1} << 52), "fft::next_fast_size", "n must be <= 2^52, got ", n);
  if (n <= 1) return 1;
  for (std::size_t m = n;; ++m) {
    std::size_t r = m;
    for (std::size_t p : {2u, 3u, 5u})
      while (r % p == 0) r /= p;
    if (r == 1) return m;
  }
}

namespace detail {

/// A transform's caller arrays must not be null (invalid_argument naming the array).
template <class A, class B>
inline void require_arrays(const char* where, const A* a, const char* a_name, const B* b, const char* b_name) {
  posenc::detail::require(a != nullptr, where, a_name, ": expected a non-null array, got null");
  posenc::detail::require(b != nullptr, where, b_name, ": expected a non-null array, got null");
}

}  // namespace detail

}  // namespace posenc::fft
