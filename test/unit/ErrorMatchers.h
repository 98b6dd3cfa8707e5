// GoogleTest helpers for the runtime's errors: assert both the ErrorKind and that the message
// names the problem.
#pragma once

#include "runtime/base/Error.h"

#include <gtest/gtest.h>

#include <string>

namespace dp::rt::testing {

/// Success when `body()` throws dp::rt::Error of `kind` whose message contains `substring`.
template <typename Body>
::testing::AssertionResult throwsError(Body &&body, ErrorKind kind, const std::string &substring) {
  try {
    body();
  } catch (const Error &e) {
    const std::string message = e.what();
    if (e.kind() != kind)
      return ::testing::AssertionFailure()
             << "threw ErrorKind " << static_cast<int>(e.kind()) << " instead of "
             << static_cast<int>(kind) << ": " << message;
    if (message.find(substring) == std::string::npos)
      return ::testing::AssertionFailure()
             << "message \"" << message << "\" does not contain \"" << substring << "\"";
    return ::testing::AssertionSuccess() << message;
  } catch (const std::exception &e) {
    return ::testing::AssertionFailure() << "threw a non-dp exception: " << e.what();
  }
  return ::testing::AssertionFailure() << "nothing was thrown";
}

} // namespace dp::rt::testing

/// EXPECT that `statement` throws Error(kind) with `substring` in its message.
#define EXPECT_DP_ERROR(statement, kind, substring)                                                \
  EXPECT_TRUE(::dp::rt::testing::throwsError([&] { statement; }, kind, substring))
