// SIGINT and SIGTERM as the runtime records them: the first one is pending until a check
// turns it into an Error whose kind gives dprun's exit code (130, 143).
#include "runtime/base/Error.h"
#include "runtime/base/Interrupt.h"

#include <gtest/gtest.h>

#include <csignal>

namespace dp::rt {
namespace {

TEST(Interrupt, ASignalIsPendingUntilChecked) {
  installInterruptHandlers();
  clearInterrupt();
  EXPECT_EQ(pendingInterrupt(), 0);
  EXPECT_NO_THROW(throwIfInterrupted("nowhere"));
  std::raise(SIGINT);
  EXPECT_EQ(pendingInterrupt(), SIGINT);
  try {
    throwIfInterrupted("in epoch 2");
    FAIL() << "no error";
  } catch (const Error &e) {
    EXPECT_EQ(e.kind(), ErrorKind::Interrupted);
    EXPECT_EQ(e.exitCode(), 130);
    EXPECT_STREQ(e.what(), "interrupted by SIGINT in epoch 2");
  }
  clearInterrupt();
  std::raise(SIGTERM);
  try {
    throwIfInterrupted("while evaluating");
    FAIL() << "no error";
  } catch (const Error &e) {
    EXPECT_EQ(e.kind(), ErrorKind::Terminated);
    EXPECT_EQ(e.exitCode(), 143);
  }
  clearInterrupt();
}

TEST(Interrupt, ASecondSignalEndsTheProcessAtOnce) {
  installInterruptHandlers();
  clearInterrupt();
  EXPECT_EXIT(
      {
        std::raise(SIGTERM);
        std::raise(SIGTERM); // the default action: the process ends by the signal
        std::_Exit(0);
      },
      ::testing::KilledBySignal(SIGTERM), "");
  clearInterrupt();
}

} // namespace
} // namespace dp::rt
