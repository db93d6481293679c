// SPDX-License-Identifier: MIT
// core/checked.hpp: checked size arithmetic against a 128-bit reference at the limits of each
// type (every pair from a set of edge values: 0, 1, 2, max/2 +- 1, sqrt(max) +- 1, max - 1, max
// and the negative counterparts), the stated bounds, and allocation failure as allocation_error.
#include <doctest/doctest.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <new>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include <posenc/core/checked.hpp>

namespace {

__extension__ typedef __int128 i128;  // the wide reference (GCC and Clang)
__extension__ typedef unsigned __int128 u128;

template <class T>
std::vector<T> edge_values() {
  using L = std::numeric_limits<T>;
  std::vector<T> v{T(0), T(1), T(2), T(3), T(L::max()), T(L::max() - 1), T(L::max() / 2), T(L::max() / 2 + 1),
                   T(L::max() / 2 - 1)};
  // floor(sqrt(max)) and its neighbours: products around max
  T r = static_cast<T>(std::sqrt(static_cast<long double>(L::max())));
  while (r > L::max() / r) --r;
  while (r + 1 <= L::max() / (r + 1)) ++r;  // r = floor(sqrt(max))
  for (T x : {T(r - 1), r, T(r + 1), T(r + 2)}) v.push_back(x);
  v.push_back(T(posenc::max_extent));
  v.push_back(T(posenc::max_extent + 1));
  if constexpr (L::is_signed) {
    const std::size_t n = v.size();
    for (std::size_t i = 0; i < n; ++i) v.push_back(T(-v[i]));
    v.push_back(L::min());
    v.push_back(T(L::min() + 1));
    v.push_back(T(L::min() / 2));
  }
  return v;
}

template <class T>
bool fits(i128 x) {
  return x >= static_cast<i128>(std::numeric_limits<T>::min()) && x <= static_cast<i128>(std::numeric_limits<T>::max());
}

template <class F>
std::string size_error_message(F&& f) {
  try {
    f();
  } catch (const posenc::size_error& e) {
    return e.what();
  }
  return "(no size_error)";
}

template <class T>
void check_type_exhaustively() {
  const auto v = edge_values<T>();
  std::size_t overflow = 0, exact = 0;
  for (T a : v)
    for (T b : v) {
      const i128 A = a, B = b;
      // |a b| <= 2^128 - 2^65 + 1 fits in u128 (not always in i128): multiply the magnitudes
      const u128 ma = A < 0 ? static_cast<u128>(-A) : static_cast<u128>(A);
      const u128 mb = B < 0 ? static_cast<u128>(-B) : static_cast<u128>(B);
      const u128 mag = ma * mb;
      const bool negative = (A < 0) != (B < 0) && mag != 0;
      const u128 limit = negative ? static_cast<u128>(-static_cast<i128>(std::numeric_limits<T>::min()))
                                  : static_cast<u128>(std::numeric_limits<T>::max());
      const bool product_fits = mag <= limit;
      const i128 product = product_fits ? (negative ? -static_cast<i128>(mag) : static_cast<i128>(mag)) : 0;
      const i128 results[3] = {product, A + B, A - B};
      const bool in_range[3] = {product_fits, fits<T>(A + B), fits<T>(A - B)};
      for (int op = 0; op < 3; ++op) {
        const i128 want = results[op];
        auto call = [&] {
          return op == 0 ? posenc::checked::mul(a, b, "test", "x") : op == 1 ? posenc::checked::add(a, b, "test", "x")
                                                                               : posenc::checked::sub(a, b, "test", "x");
        };
        if (in_range[op]) {
          ++exact;
          CHECK(static_cast<i128>(call()) == want);
        } else {
          ++overflow;
          const std::string msg = size_error_message(call);
          CHECK_MESSAGE(msg.find("test: x: ") != std::string::npos, msg);
        }
      }
    }
  // both outcomes are exercised for every type
  CHECK(overflow > 0);
  CHECK(exact > 0);
}

template <class To, class From>
void check_casts() {
  for (From v : edge_values<From>()) {
    const i128 x = v;
    if (fits<To>(x)) {
      CHECK(static_cast<i128>(posenc::checked::cast<To>(v, "test", "n")) == x);
    } else {
      CHECK_THROWS_AS((void)posenc::checked::cast<To>(v, "test", "n"), posenc::size_error);
    }
  }
}

}  // namespace

TEST_CASE("checked mul/add/sub equal the 128-bit result or throw size_error at the type limits") {
  check_type_exhaustively<std::size_t>();
  check_type_exhaustively<std::ptrdiff_t>();
  check_type_exhaustively<std::int64_t>();
  check_type_exhaustively<std::uint32_t>();
  check_type_exhaustively<std::int32_t>();
}

TEST_CASE("checked casts between size_t, ptrdiff_t, int64 and int32 preserve the value or throw size_error") {
  check_casts<std::ptrdiff_t, std::size_t>();
  check_casts<std::size_t, std::ptrdiff_t>();
  check_casts<std::int64_t, std::size_t>();
  check_casts<std::size_t, std::int64_t>();
  check_casts<std::int32_t, std::int64_t>();
  check_casts<std::uint32_t, std::ptrdiff_t>();
}

TEST_CASE("size_error messages name the entry point, the argument and the values") {
  const std::string m = size_error_message([] {
    return posenc::checked::mul(std::size_t{1} << 33, std::size_t{1} << 33, "tupe::head_stack", "heads * n * n");
  });
  CHECK(m.find("posenc: tupe::head_stack: heads * n * n: 8589934592 * 8589934592 overflows std::size_t") !=
        std::string::npos);
  const std::string c = size_error_message([] { return posenc::checked::cast<std::ptrdiff_t>(SIZE_MAX, "f", "L"); });
  CHECK(c.find("L: 18446744073709551615 does not fit in std::ptrdiff_t") != std::string::npos);
  const std::string u = size_error_message([] { return posenc::checked::sub(std::size_t{0}, std::size_t{1}, "f", "n - 1"); });
  CHECK(u.find("n - 1: 0 - 1 is negative in std::size_t") != std::string::npos);
}

TEST_CASE("extent and elements enforce max_extent and max_elements exactly at the bound") {
  using posenc::max_elements;
  using posenc::max_extent;
  CHECK(posenc::checked::extent(max_extent, "f", "n") == max_extent);
  CHECK(posenc::checked::extent(std::int64_t{0}, "f", "n") == 0);
  CHECK_THROWS_AS((void)posenc::checked::extent(max_extent + 1, "f", "n"), posenc::size_error);
  CHECK_THROWS_AS((void)posenc::checked::extent(std::int64_t{-1}, "f", "n"), posenc::size_error);
  CHECK_THROWS_AS((void)posenc::checked::extent(std::numeric_limits<std::int64_t>::max(), "f", "n"), posenc::size_error);
  CHECK(posenc::checked::index(std::size_t{7}, "f", "n") == 7);
  CHECK_THROWS_AS((void)posenc::checked::index(SIZE_MAX, "f", "n"), posenc::size_error);
  const std::string m = size_error_message([] { return posenc::checked::extent(SIZE_MAX, "sinusoidal::table", "length"); });
  CHECK(m.find("sinusoidal::table: length: expected 0 <= length <= posenc::max_extent = 1099511627776, got "
               "18446744073709551615") != std::string::npos);

  CHECK(posenc::checked::elements(max_elements, 1, "f", "n") == max_elements);
  CHECK(posenc::checked::elements(std::size_t{1} << 20, std::size_t{1} << 20, "f", "n") == max_elements);
  CHECK_THROWS_AS((void)posenc::checked::elements((std::size_t{1} << 20) + 1, std::size_t{1} << 20, "f", "n"),
                  posenc::size_error);
  CHECK_THROWS_AS((void)posenc::checked::elements(std::size_t{1} << 40, std::size_t{1} << 40, "f", "n"),
                  posenc::size_error);
  // byte counts of a validated array fit in ptrdiff_t even for the widest element
  CHECK(static_cast<i128>(max_elements) * 32 <= static_cast<i128>(std::numeric_limits<std::ptrdiff_t>::max()));
}

TEST_CASE("allocation failure of a validated size is an allocation_error naming the argument") {
  auto bad = [] { return posenc::checked::allocate("f", "length * d", 10, 8, []() -> int { throw std::bad_alloc(); }); };
  CHECK_THROWS_AS(bad(), posenc::allocation_error);
  try {
    bad();
  } catch (const posenc::error& e) {
    CHECK(std::string(e.what()).find("f: length * d: could not allocate 10 elements of 8 bytes") != std::string::npos);
  }
  auto len = [] {
    posenc::checked::allocate("f", "n", 3, 4, [] { throw std::length_error("vector::_M_default_append"); });
  };
  CHECK_THROWS_AS(len(), posenc::allocation_error);
  // a successful allocation passes its value through
  const auto v = posenc::checked::make_vector<int>(5, "f", "n", 7);
  CHECK(v == std::vector<int>(5, 7));
  CHECK_THROWS_AS((void)posenc::checked::make_vector<int>(posenc::max_elements + 1, "f", "n"), posenc::size_error);
  // allocation_error is a posenc::error but not an invalid_argument (the argument was valid)
  static_assert(std::is_base_of_v<posenc::error, posenc::allocation_error>);
  static_assert(!std::is_base_of_v<posenc::invalid_argument, posenc::allocation_error>);
  static_assert(std::is_base_of_v<posenc::invalid_argument, posenc::size_error>);
}
