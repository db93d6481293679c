// SPDX-License-Identifier: MIT
// The message of the exception a call throws, for tests that check what an error says.
#pragma once

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

}  // namespace posenc_test
