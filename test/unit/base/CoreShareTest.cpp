// The pieces of dprun's automatic thread count: /proc/stat parsing, the others' share of the
// cores, and the rule that leaves every core they keep at least half busy to them.
#include "runtime/base/CoreShare.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <unistd.h>

namespace dp::rt {
namespace {

const char *kStat = "cpu  900 10 300 5000 40 1 2 3 0 0\n"
                    "cpu0 100 0 50 1000 10 0 1 0 0 0\n"
                    "cpu1 200 10 30 900 20 1 1 3 0 0\n"
                    "cpu2 300 0 100 800 5 0 0 0 0 0\n"
                    "intr 12345 0 0\n"
                    "ctxt 999\n";

TEST(CoreShare, ParsesTheTicksOfTheAllowedCpusOnly) {
  std::optional<CpuTicks> t = parseCpuTicks(kStat, {0, 2});
  ASSERT_TRUE(t);
  // busy: everything but idle and iowait.
  EXPECT_EQ(t->busy, (100u + 50 + 1) + (300u + 100));
  EXPECT_EQ(t->total, (100u + 50 + 1000 + 10 + 1) + (300u + 100 + 800 + 5));
  std::optional<CpuTicks> one = parseCpuTicks(kStat, {1});
  ASSERT_TRUE(one);
  EXPECT_EQ(one->busy, 200u + 10 + 30 + 1 + 1 + 3); // steal counts as taken by others
}

TEST(CoreShare, OldKernelsWithFourFieldsParse) {
  std::optional<CpuTicks> t = parseCpuTicks("cpu0 10 20 30 40\n", {0});
  ASSERT_TRUE(t);
  EXPECT_EQ(t->busy, 60u);
  EXPECT_EQ(t->total, 100u);
}

TEST(CoreShare, RefusesAMissingCpuOrAMalformedLine) {
  EXPECT_FALSE(parseCpuTicks(kStat, {0, 7}));
  EXPECT_FALSE(parseCpuTicks("cpu0 10 20\n", {0}));
  EXPECT_FALSE(parseCpuTicks("", {0}));
  EXPECT_FALSE(parseCpuTicks("cpu0 x y z w\n", {0}));
}

TEST(CoreShare, LeavesEveryCoreOthersKeepHalfBusy) {
  EXPECT_EQ(threadsBeside(2, 0.0), 2);
  EXPECT_EQ(threadsBeside(2, 0.3), 2);
  EXPECT_EQ(threadsBeside(2, 0.6), 1);
  EXPECT_EQ(threadsBeside(2, 1.0), 1);
  EXPECT_EQ(threadsBeside(2, 2.0), 1); // at least one
  EXPECT_EQ(threadsBeside(8, 2.4), 6);
  EXPECT_EQ(threadsBeside(8, 2.5), 5);
  EXPECT_EQ(threadsBeside(1, 5.0), 1);
  EXPECT_EQ(threadsBeside(0, 0.0), 1);
  EXPECT_EQ(threadsBeside(4, -1.0), 4);
}

TEST(CoreShare, AnUnreadableStatGivesNoMeasurement) {
  EXPECT_FALSE(othersBusyCores({0}, 0.01, "/nonexistent/stat"));
  EXPECT_FALSE(othersBusyCores({}, 0.01));
}

TEST(CoreShare, AStillStatMeansNobodyElseRan) {
  // A file that does not change between the two samples: no ticks, nothing for the others.
  char path[] = "/tmp/dp-stat-XXXXXX";
  const int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  close(fd);
  std::ofstream(path) << kStat;
  std::optional<double> others = othersBusyCores({0, 1}, 0.02, path);
  std::remove(path);
  ASSERT_TRUE(others);
  EXPECT_EQ(*others, 0.0);
}

TEST(CoreShare, TheRequestedCountWinsAndAllLeavesItToOpenMp) {
  ThreadChoice n = chooseComputeThreads(3);
  EXPECT_EQ(n.threads, 3);
  EXPECT_EQ(n.how, "--threads");
  ThreadChoice all = chooseComputeThreads(-1);
  EXPECT_EQ(all.threads, 0);
  EXPECT_EQ(all.how, "all");
  EXPECT_GE(all.allowed, 1);
}

} // namespace
} // namespace dp::rt
