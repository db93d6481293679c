// SPDX-License-Identifier: MIT
// The message of the exception a call throws, for tests that check what an error says.
#pragma once

#include <doctest/doctest.h>

#include <exception>
#include <string>

#include <posenc/core/error.hpp>

namespace posenc_test {

/// what() of the E that f() throws; "(wrong exception: ...)" for any other std::exception and
/// "(no exception)" when f returns, so a check for a substring of the expected message fails then.
template <class E = posenc::error, class F>
std::string message_of(F&& f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  } catch (const std::exception& e) {
    return std::string("(wrong exception: ") + e.what() + ")";
  }
  return "(no exception)";
}

/// Checks that f() throws an E whose message contains `needle` (fails the test case otherwise; an
/// exception of another type propagates and fails it too).
template <class E, class F>
void expect_error(F&& f, const std::string& needle) {
  try {
    f();
    FAIL_CHECK("no exception; expected one mentioning '" << needle << "'");
  } catch (const E& e) {
    const std::string what = e.what();
    CHECK_MESSAGE(what.find(needle) != std::string::npos, what);
  }
}

}  // namespace posenc_test
