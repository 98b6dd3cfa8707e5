// SIGINT, SIGTERM and SIGUSR1 as the runtime records them: the first one is pending until a
// check turns it into an Error whose kind gives dprun's exit code (130, 143, 138); the same
// signal again a second later ends the process, a repeat within a second or another is noted.
#include "runtime/base/Error.h"
#include "runtime/base/Interrupt.h"

#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <thread>

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

TEST(Interrupt, TheSameSignalASecondLaterEndsTheProcessAtOnce) {
  installInterruptHandlers();
  clearInterrupt();
  EXPECT_EXIT(
      {
        std::raise(SIGTERM);
        std::this_thread::sleep_for(std::chrono::milliseconds(1100));
        std::raise(SIGTERM); // the default action: the process ends by the signal
        std::_Exit(0);
      },
      ::testing::KilledBySignal(SIGTERM), "");
  clearInterrupt();
}

TEST(Interrupt, ARepeatWithinASecondOrAnotherSignalIsOnlyNoted) {
  installInterruptHandlers();
  clearInterrupt();
  // mpirun sends its SIGTERM twice at once; a launcher passes a Ctrl-C on as SIGTERM to ranks
  // that saw the SIGINT; a scheduler follows its SIGUSR1 notice with SIGTERM.
  EXPECT_EXIT(
      {
        std::raise(SIGTERM);
        std::raise(SIGTERM);
        std::raise(SIGINT);
        std::raise(SIGUSR1);
        std::_Exit(pendingInterrupt() == SIGTERM ? 7 : 1);
      },
      ::testing::ExitedWithCode(7), "");
  clearInterrupt();
  std::raise(SIGUSR1);
  EXPECT_EQ(pendingInterrupt(), SIGUSR1);
  try {
    throwIfInterrupted("in epoch 3");
    ADD_FAILURE() << "nothing thrown";
  } catch (const Error &e) {
    EXPECT_EQ(e.kind(), ErrorKind::UserSignal1);
    EXPECT_EQ(e.exitCode(), 138);
    EXPECT_STREQ(e.what(), "interrupted by SIGUSR1 in epoch 3");
  }
  EXPECT_TRUE(isSignalStop(ErrorKind::Preempted));
  EXPECT_FALSE(isSignalStop(ErrorKind::Launch));
  clearInterrupt();
  raiseInterrupt(SIGINT);
  raiseInterrupt(SIGTERM); // the first one stays the reason
  EXPECT_EQ(pendingInterrupt(), SIGINT);
  clearInterrupt();
}

} // namespace
} // namespace dp::rt
