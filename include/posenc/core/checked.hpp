// SPDX-License-Identifier: MIT
// Checked size arithmetic. Every length, width, count and element count that posenc computes
// from a caller's arguments goes through these functions, so an argument near the limits of its
// integer type becomes a posenc::size_error naming the argument and the values, never a wrapped
// size, a negative Eigen::Index, signed overflow (undefined behaviour) or a huge allocation.
//
//   checked::mul / add / sub (a, b, where, what)   exact integer arithmetic or size_error
//   checked::cast<To>(v, where, what)              value-preserving conversion or size_error
//   checked::extent(n, where, what)                0 <= n <= max_extent (a length, width, count)
//   checked::elements(rows, cols, where, what)     rows * cols <= max_elements (one array)
//   checked::index(n, where, what)                 extent(n) as Eigen::Index / std::ptrdiff_t
//   checked::allocate(where, what, count, bytes, make)
//                                                  runs make(); std::bad_alloc / std::length_error
//                                                  become posenc::allocation_error
//   checked::make_vector<T>(n, where, what)        a std::vector of n values, both checks applied
//   checked::distance(lo, hi)                      hi - lo (lo <= hi) as std::uint64_t: offsets
//                                                  differenced without signed overflow
//
// `where` is the entry point (e.g. "sinusoidal::table"), `what` the argument or quantity
// (e.g. "length * d"); both appear in the message.
#pragma once

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <new>
#include <stdexcept>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include <posenc/core/error.hpp>

namespace posenc {

/// Upper bound on every length, width and count an entry point accepts (positions, columns,
/// blocks, heads, FFT sizes, ...): 2^40 (about 1.1e12).
inline constexpr std::size_t max_extent = std::size_t{1} << 40;

/// Upper bound on the number of elements of one array posenc allocates: 2^40 (8 TiB of double).
/// max_elements * 32 (the largest element, std::complex<long double>) fits in std::ptrdiff_t, so
/// byte counts of validated arrays cannot overflow.
inline constexpr std::size_t max_elements = std::size_t{1} << 40;

static_assert(max_elements <= static_cast<std::size_t>(std::numeric_limits<std::ptrdiff_t>::max()) / 32);
static_assert(max_extent <= static_cast<std::size_t>(std::numeric_limits<std::int64_t>::max()));

namespace checked {
namespace detail {

template <class T>
constexpr const char* type_name() {
  if constexpr (std::is_same_v<T, std::size_t>) return "std::size_t";
  else if constexpr (std::is_same_v<T, std::ptrdiff_t>) return "std::ptrdiff_t";
  else if constexpr (std::is_same_v<T, std::int64_t>) return "std::int64_t";
  else if constexpr (std::is_same_v<T, std::uint64_t>) return "std::uint64_t";
  else if constexpr (std::is_signed_v<T>) return "a signed integer type";
  else return "an unsigned integer type";
}

// Integers are printed through (u)intmax_t so that char-sized types print as numbers.
template <std::integral T>
auto printable(T v) {
  if constexpr (std::is_signed_v<T>) return static_cast<std::intmax_t>(v);
  else return static_cast<std::uintmax_t>(v);
}

template <std::integral T>
constexpr bool mul_overflows(T a, T b, T& out) noexcept {
#if defined(__GNUC__) || defined(__clang__)
  return __builtin_mul_overflow(a, b, &out);
#else
  using L = std::numeric_limits<T>;
  if constexpr (std::is_unsigned_v<T>) {
    if (a != 0 && b > L::max() / a) return true;
  } else {
    if (a > 0) {
      if (b > 0 ? a > L::max() / b : b < L::min() / a) return true;
    } else if (a < 0) {
      if (b > 0 ? a < L::min() / b : (b != 0 && a < L::max() / b)) return true;
    }
  }
  out = static_cast<T>(a * b);
  return false;
#endif
}

template <std::integral T>
constexpr bool add_overflows(T a, T b, T& out) noexcept {
#if defined(__GNUC__) || defined(__clang__)
  return __builtin_add_overflow(a, b, &out);
#else
  using L = std::numeric_limits<T>;
  if constexpr (std::is_unsigned_v<T>) {
    if (a > L::max() - b) return true;
  } else {
    if ((b > 0 && a > L::max() - b) || (b < 0 && a < L::min() - b)) return true;
  }
  out = static_cast<T>(a + b);
  return false;
#endif
}

template <std::integral T>
constexpr bool sub_overflows(T a, T b, T& out) noexcept {
#if defined(__GNUC__) || defined(__clang__)
  return __builtin_sub_overflow(a, b, &out);
#else
  using L = std::numeric_limits<T>;
  if constexpr (std::is_unsigned_v<T>) {
    if (a < b) return true;
  } else {
    if ((b < 0 && a > L::max() + b) || (b > 0 && a < L::min() + b)) return true;
  }
  out = static_cast<T>(a - b);
  return false;
#endif
}

}  // namespace detail

/// a * b, or size_error "<where>: <what>: a * b overflows <type>".
template <std::integral T>
[[nodiscard]] T mul(T a, T b, std::string_view where, std::string_view what) {
  T out{};
  if (detail::mul_overflows(a, b, out))
    posenc::detail::fail<size_error>(where, what, ": ", detail::printable(a), " * ", detail::printable(b), " overflows ",
                                     detail::type_name<T>());
  return out;
}

/// a + b, or size_error.
template <std::integral T>
[[nodiscard]] T add(T a, T b, std::string_view where, std::string_view what) {
  T out{};
  if (detail::add_overflows(a, b, out))
    posenc::detail::fail<size_error>(where, what, ": ", detail::printable(a), " + ", detail::printable(b), " overflows ",
                                     detail::type_name<T>());
  return out;
}

/// a - b, or size_error (for unsigned types: when b > a).
template <std::integral T>
[[nodiscard]] T sub(T a, T b, std::string_view where, std::string_view what) {
  T out{};
  if (detail::sub_overflows(a, b, out))
    posenc::detail::fail<size_error>(where, what, ": ", detail::printable(a), " - ", detail::printable(b),
                                     std::is_unsigned_v<T> ? " is negative in " : " overflows ", detail::type_name<T>());
  return out;
}

/// v converted to To when To represents it exactly, else size_error.
template <std::integral To, std::integral From>
[[nodiscard]] To cast(From v, std::string_view where, std::string_view what) {
  if (!std::in_range<To>(v))
    posenc::detail::fail<size_error>(where, what, ": ", detail::printable(v), " does not fit in ", detail::type_name<To>(),
                                     " (range ", detail::printable(std::numeric_limits<To>::min()), " .. ",
                                     detail::printable(std::numeric_limits<To>::max()), ")");
  return static_cast<To>(v);
}

/// n itself when 0 <= n <= max_extent, else size_error (a length, width or count).
template <std::integral T>
[[nodiscard]] T extent(T n, std::string_view where, std::string_view what) {
  if (!std::in_range<std::size_t>(n) || static_cast<std::size_t>(n) > max_extent)
    posenc::detail::fail<size_error>(where, what, ": expected 0 <= ", what, " <= posenc::max_extent = ", max_extent,
                                     ", got ", detail::printable(n));
  return n;
}

/// extent(n) as an Eigen::Index (std::ptrdiff_t).
template <std::integral T>
[[nodiscard]] std::ptrdiff_t index(T n, std::string_view where, std::string_view what) {
  return static_cast<std::ptrdiff_t>(extent(n, where, what));
}

/// rows * cols, the element count of one array: each factor a valid extent, the product at most
/// max_elements; else size_error.
[[nodiscard]] inline std::size_t elements(std::size_t rows, std::size_t cols, std::string_view where,
                                          std::string_view what) {
  const std::size_t n = mul(rows, cols, where, what);
  if (n > max_elements)
    posenc::detail::fail<size_error>(where, what, ": ", rows, " * ", cols, " = ", n,
                                     " elements, expected at most posenc::max_elements = ", max_elements);
  return n;
}

/// Runs make() (which allocates `count` elements of `bytes` bytes each, already validated) and
/// reports std::bad_alloc / std::length_error as allocation_error naming `what` and the size.
template <class Make>
decltype(auto) allocate(std::string_view where, std::string_view what, std::size_t count, std::size_t bytes,
                        Make&& make) {
  try {
    return std::forward<Make>(make)();
  } catch (const std::bad_alloc&) {
    posenc::detail::fail<allocation_error>(where, what, ": could not allocate ", count, " elements of ", bytes,
                                           " bytes (out of memory)");
  } catch (const std::length_error& e) {
    posenc::detail::fail<allocation_error>(where, what, ": could not allocate ", count, " elements of ", bytes,
                                           " bytes (", e.what(), ")");
  }
}

/// hi - lo for integers lo <= hi of one integral type of at most 64 bits, as std::uint64_t:
/// exact for every such pair (INT64_MAX - INT64_MIN = 2^64 - 1) and never a signed overflow,
/// because the subtraction is done modulo 2^64. The caller compares first (lo <= hi as values,
/// e.g. std::cmp_less_equal): cu_seqlens and offsets arrays are differenced this way, so a
/// hostile INT64_MIN or 2^63 reaches the typed error instead of undefined behaviour.
template <std::integral I>
  requires(sizeof(I) <= sizeof(std::uint64_t))
[[nodiscard]] constexpr std::uint64_t distance(I lo, I hi) noexcept {
  return static_cast<std::uint64_t>(hi) - static_cast<std::uint64_t>(lo);
}

/// A std::vector of n copies of `value`: n checked against max_elements, allocation failure as
/// allocation_error.
template <class T>
[[nodiscard]] std::vector<T> make_vector(std::size_t n, std::string_view where, std::string_view what,
                                         const T& value = T{}) {
  (void)elements(n, 1, where, what);
  return allocate(where, what, n, sizeof(T), [&] { return std::vector<T>(n, value); });
}

}  // namespace checked
}  // namespace posenc
