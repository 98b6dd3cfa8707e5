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

TEST(CoreShare, CpuListsReadAsTheKernelWritesThem) {
  EXPECT_EQ(parseCpuList("0-3,8,10-11\n"), (std::vector<int>{0, 1, 2, 3, 8, 10, 11}));
  EXPECT_EQ(parseCpuList("1"), (std::vector<int>{1}));
  EXPECT_EQ(parseCpuList("2,0-1"), (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(parseCpuList(""), (std::vector<int>{}));
  EXPECT_FALSE(parseCpuList("3-1"));
  EXPECT_FALSE(parseCpuList("a"));
  EXPECT_FALSE(parseCpuList("1-x"));
  EXPECT_FALSE(parseCpuList("-1"));
}

TEST(CoreShare, SlurmTasksPerNodeExpandsItsRepeats) {
  EXPECT_EQ(slurmTasksOnNode("2(x3),1", 0), 2);
  EXPECT_EQ(slurmTasksOnNode("2(x3),1", 2), 2);
  EXPECT_EQ(slurmTasksOnNode("2(x3),1", 3), 1);
  EXPECT_EQ(slurmTasksOnNode("2(x3),1", 4), 0);
  EXPECT_EQ(slurmTasksOnNode("4", 0), 4);
  EXPECT_EQ(slurmTasksOnNode("4", -1), 0);
  EXPECT_EQ(slurmTasksOnNode("2(y3)", 0), 0);
  EXPECT_EQ(slurmTasksOnNode("", 0), 0);
}

TEST(CoreShare, LocalRanksShareTheNodeOnlyWhereTheirCoresMustOverlap) {
  // mpirun --bind-to none: 2 ranks, each allowed both cores of a 2-core node: one each.
  EXPECT_EQ(threadsForLocalRanks(2, 2, 2), 1);
  // 3 ranks on 2 cores (bound to the socket): still one each, never none.
  EXPECT_EQ(threadsForLocalRanks(2, 2, 3), 1);
  // 4 unbound ranks on a 16-core node: 4 each.
  EXPECT_EQ(threadsForLocalRanks(16, 16, 4), 4);
  // Bound to disjoint cores (2 x 4 of 8): each keeps its own.
  EXPECT_EQ(threadsForLocalRanks(4, 8, 2), 4);
  // Alone, or the launcher does not say.
  EXPECT_EQ(threadsForLocalRanks(8, 8, 1), 8);
  EXPECT_EQ(threadsForLocalRanks(0, 8, 2), 1);
}

TEST(CoreShare, TheReportSaysWhyCoresWereLeftOut) {
  ThreadChoice c;
  c.how = "auto";
  c.allowed = 2;
  c.nodeCores = 2;
  c.localRanks = 2;
  c.threads = 1;
  EXPECT_EQ(c.why(), "2 ranks of this job share this node's 2 cores");
  c.othersBusy = 1.0;
  EXPECT_EQ(c.why(), "2 ranks of this job share this node's 2 cores; other processes kept 1.0 "
                     "cores busy as it started");
  c.localRanks = 1;
  EXPECT_EQ(c.why(), "other processes kept 1.0 cores busy as it started");
}

} // namespace
} // namespace dp::rt
