// SPDX-License-Identifier: MIT
// posenc's exceptions. Every public entry point validates its arguments once, at the boundary,
// and throws a type derived from posenc::error whose message names the argument, what was
// expected and what was given. Catch posenc::error to catch them all.
#pragma once

#include <posenc/version.hpp>

#include <cmath>
#include <cstddef>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

namespace posenc {

/// Base of every exception posenc throws.
class error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// An argument has a value outside its documented range (d = 0, a non-positive step, ...).
class invalid_argument : public error {
 public:
  using error::error;
};

/// A length, width, count or size product exceeds its stated upper bound (posenc::max_extent,
/// posenc::max_elements) or overflows its integer type (see core/checked.hpp).
class size_error : public invalid_argument {
 public:
  using invalid_argument::invalid_argument;
};

/// Two arguments' shapes do not fit together.
class shape_error : public invalid_argument {
 public:
  using invalid_argument::invalid_argument;
};

/// A time grid is not strictly monotone, or not in the direction asked for.
class grid_error : public invalid_argument {
 public:
  using invalid_argument::invalid_argument;
};

/// NaN or Inf in an input (or produced by the integration and caught before it spreads).
class non_finite_error : public invalid_argument {
 public:
  using invalid_argument::invalid_argument;
};

/// An adaptive integration needed more steps than allowed, or its step fell below min_step.
class step_budget_exceeded : public error {
 public:
  using error::error;
};

/// A file could not be read or does not have the expected format, shape or contents.
class io_error : public error {
 public:
  using error::error;
};

/// Memory for a size that passed validation could not be allocated (std::bad_alloc or
/// std::length_error from the allocator, reported with the argument and the size asked for).
class allocation_error : public error {
 public:
  using error::error;
};

/// An object that one thread at a time may use (a toeplitz::product_plan: its buffers are the
/// call's workspace) was entered by a second thread while a call was still running in it. The
/// second call is refused before it reads or writes anything of the object; the first call is
/// not disturbed (docs/thread-safety.md).
class concurrent_use_error : public error {
 public:
  using error::error;
};

/// A device (backend) operation failed, e.g. an allocation on the GPU.
class device_error : public error {
 public:
  using error::error;
};

namespace detail {

template <class... Parts>
[[nodiscard]] std::string concat(const Parts&... parts) {
  std::ostringstream os;
  os.precision(17);
  (os << ... << parts);
  return os.str();
}

/// Throw E with "posenc: <where>: <parts...>".
template <class E = invalid_argument, class... Parts>
[[noreturn]] void fail(std::string_view where, const Parts&... parts) {
  throw E(concat("posenc: ", where, ": ", parts...));
}

template <class E = invalid_argument, class... Parts>
void require(bool ok, std::string_view where, const Parts&... parts) {
  if (!ok) fail<E>(where, parts...);
}

}  // namespace detail
}  // namespace posenc
