// SPDX-License-Identifier: MIT
// A 64-bit FNV-1a hash of every entry of a posenc::table, row by row, for the tests that pin a
// table's bits (tests/sinusoidal/table_bits.test.cpp, tests/rotary/table_bits.test.cpp). Each
// entry contributes its value bytes (10 for the x87 long double, whose padding is not part of
// the value).
#pragma once

#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include <posenc/tensor/table.hpp>

namespace posenc_test {

inline constexpr std::uint64_t fnv1a_basis = 0xcbf29ce484222325ULL;

/// Folds every entry of t into h.
template <class T>
void fnv1a_into(std::uint64_t& h, const posenc::table<T>& t) {
  constexpr std::size_t bytes =
      std::is_same_v<T, long double> && std::numeric_limits<long double>::digits == 64 ? 10 : sizeof(T);
  for (Eigen::Index i = 0; i < t.rows(); ++i)
    for (Eigen::Index j = 0; j < t.cols(); ++j) {
      const T v = t(i, j);
      unsigned char b[sizeof(T)];
      std::memcpy(b, &v, sizeof(T));
      for (std::size_t n = 0; n < bytes; ++n) {
        h ^= b[n];
        h *= 0x100000001b3ULL;
      }
    }
}

/// The hash of t alone.
template <class T>
std::uint64_t fnv1a(const posenc::table<T>& t) {
  std::uint64_t h = fnv1a_basis;
  fnv1a_into(h, t);
  return h;
}

}  // namespace posenc_test
