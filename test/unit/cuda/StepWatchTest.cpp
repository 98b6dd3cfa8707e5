// The NCCL engine's watchdog bookkeeping, checked on the host with a made-up clock.
#include "runtime/backends/cuda/StepWatch.h"

#include <gtest/gtest.h>

namespace dp::rt::cuda {
namespace {

TEST(StepWatch, NothingIsOverdueWithinTheTimeoutOrWithoutOne) {
  StepWatch w(2, 4);
  EXPECT_EQ(w.enqueued(0, 1, 0.0), 0);
  EXPECT_EQ(w.enqueued(1, 1, 0.5), 0);
  EXPECT_FALSE(w.overdue(10.0, 20.0));
  EXPECT_FALSE(w.overdue(1000.0, 0.0)) << "a timeout of 0 means no bound";
}

TEST(StepWatch, TheLongestWaitingStepIsOverdue) {
  StepWatch w(2, 4);
  w.enqueued(0, 7, 1.0);
  w.enqueued(1, 7, 0.0);
  const auto late = w.overdue(25.0, 20.0);
  ASSERT_TRUE(late);
  EXPECT_EQ(late->replica, 1);
  EXPECT_EQ(late->step, 7);
  EXPECT_DOUBLE_EQ(late->seconds, 25.0);
}

TEST(StepWatch, AStepQueuedBehindASlowOneCountsFromWhenItCouldStart) {
  StepWatch w(1, 4);
  w.enqueued(0, 1, 0.0);
  w.enqueued(0, 2, 0.1); // pipelined: enqueued while step 1 runs
  w.finished(0, 19.0);   // step 1 took 19 s
  ASSERT_NE(w.oldest(0), nullptr);
  EXPECT_EQ(w.oldest(0)->step, 2);
  EXPECT_FALSE(w.overdue(30.0, 20.0)) << "step 2 has run 11 s, not 29.9";
  EXPECT_TRUE(w.overdue(40.0, 20.0));
  EXPECT_EQ(w.lastFinished(), 1);
}

TEST(StepWatch, SlotsCycleAndAFullRingSkipsWatchingTheNewest) {
  StepWatch w(1, 2);
  EXPECT_EQ(w.enqueued(0, 1, 0), 0);
  EXPECT_EQ(w.enqueued(0, 2, 0), 1);
  EXPECT_EQ(w.enqueued(0, 3, 0), -1) << "both slots hold running steps";
  w.finished(0, 1);
  EXPECT_EQ(w.enqueued(0, 4, 1), 0) << "the freed slot is reused";
  w.finished(0, 2);
  w.finished(0, 3);
  EXPECT_EQ(w.oldest(0), nullptr);
  EXPECT_EQ(w.lastFinished(), 4);
  w.finished(0, 4); // nothing pending: no effect
  EXPECT_EQ(w.lastFinished(), 4);
}

} // namespace
} // namespace dp::rt::cuda
