// The launch environment and the handshake without MPI: launcher detection, SLURM against MPI,
// describe(), rank lists, handshake records and their comparison, and the single-process group.
#include "runtime/comm/Internal.h"

#include "test/unit/ErrorMatchers.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <optional>
#include <string>

namespace dp::rt {
namespace {

/// Sets environment variables for one test and restores their previous values after it.
class ScopedEnv {
public:
  ScopedEnv() {
    // Start from a clean launch environment whatever ran the tests.
    for (const char *name :
         {"OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "PMI_SIZE",
          "MPI_LOCALRANKID", "SLURM_JOB_ID", "SLURM_STEP_ID", "SLURM_PROCID", "SLURM_NTASKS",
          "SLURM_LOCALID", "SLURM_NODEID", "SLURM_STEP_NUM_TASKS"})
      unset(name);
  }
  ~ScopedEnv() {
    for (const auto &[name, value] : saved_)
      if (value)
        ::setenv(name.c_str(), value->c_str(), 1);
      else
        ::unsetenv(name.c_str());
  }
  void set(const std::string &name, const std::string &value) {
    save(name);
    ::setenv(name.c_str(), value.c_str(), 1);
  }
  void unset(const std::string &name) {
    save(name);
    ::unsetenv(name.c_str());
  }

private:
  void save(const std::string &name) {
    if (saved_.count(name))
      return;
    const char *value = std::getenv(name.c_str());
    saved_[name] = value ? std::optional<std::string>(value) : std::nullopt;
  }
  std::map<std::string, std::optional<std::string>> saved_;
};

TEST(CommLaunch, DetectsTheLauncher) {
  ScopedEnv env;
  EXPECT_FALSE(launchedByMpiLauncher());
  EXPECT_EQ(comm::detectLauncher(), "direct");
  env.set("OMPI_COMM_WORLD_SIZE", "2");
  EXPECT_TRUE(launchedByMpiLauncher());
  EXPECT_EQ(comm::detectLauncher(), "mpirun");
  env.unset("OMPI_COMM_WORLD_SIZE");
  env.set("SLURM_JOB_ID", "12");
  env.set("SLURM_STEP_ID", "0");
  env.set("SLURM_PROCID", "1");
  EXPECT_FALSE(launchedByMpiLauncher()); // srun without --mpi=pmix
  EXPECT_EQ(comm::detectLauncher(), "srun");
  env.set("PMIX_RANK", "1");
  EXPECT_TRUE(launchedByMpiLauncher());
  EXPECT_EQ(comm::detectLauncher(), "srun");
}

TEST(CommLaunch, SlurmVariablesAndDescribe) {
  ScopedEnv env;
  EXPECT_EQ(comm::slurmVariables(), "");
  env.set("SLURM_JOB_ID", "12");
  env.set("SLURM_PROCID", "1");
  env.set("SLURM_NTASKS", "2");
  env.set("SLURM_STEP_NUM_TASKS", "2");
  EXPECT_EQ(comm::slurmVariables(), "SLURM_JOB_ID=12 SLURM_PROCID=1 SLURM_NTASKS=2");
  LaunchInfo info;
  info.rank = 1;
  info.size = 2;
  info.launcher = "srun";
  info.host = "node3";
  info.slurm = comm::slurmVariables();
  EXPECT_EQ(info.describe(), "rank 1 of 2 on node3 (srun, SLURM_JOB_ID=12 SLURM_PROCID=1 SLURM_NTASKS=2)");
  info.slurm.clear();
  info.launcher = "mpirun";
  EXPECT_EQ(info.describe(), "rank 1 of 2 on node3 (mpirun)");
}

TEST(CommLaunch, SlurmIsCrossCheckedAgainstMpi) {
  ScopedEnv env;
  EXPECT_EQ(comm::slurmMismatch(0, 1), ""); // not under SLURM
  env.set("SLURM_JOB_ID", "12");
  env.set("SLURM_STEP_ID", "0");
  env.set("SLURM_PROCID", "1");
  env.set("SLURM_NTASKS", "2");
  EXPECT_EQ(comm::slurmMismatch(1, 2), "");
  // srun without an MPI plugin: every task is a world of one.
  std::string text = comm::slurmMismatch(0, 1);
  EXPECT_NE(text.find("SLURM says task 1 of 2"), std::string::npos) << text;
  EXPECT_NE(text.find("MPI says rank 0 of 1"), std::string::npos) << text;
  EXPECT_NE(text.find("SLURM_JOB_ID=12"), std::string::npos) << text;
  EXPECT_NE(text.find("srun --mpi=pmix"), std::string::npos) << text;
  text = comm::slurmMismatch(1, 3);
  EXPECT_NE(text.find("MPI says rank 1 of 3"), std::string::npos) << text;
  // Under mpirun in an allocation the variables describe mpirun's daemons: no check.
  env.set("OMPI_COMM_WORLD_SIZE", "4");
  EXPECT_EQ(comm::slurmMismatch(3, 4), "");
}

TEST(CommLaunch, RankLists) {
  EXPECT_EQ(comm::rankList({1}), "rank 1");
  EXPECT_EQ(comm::rankList({2, 0}), "ranks 0, 2");
  EXPECT_EQ(comm::rankList({0, 1}), "ranks 0, 1");
  EXPECT_EQ(comm::rankList({5, 0, 2, 3, 4, 9, 8}), "ranks 0, 2-5, 8, 9");
  EXPECT_EQ(comm::rankList({3}, "replica"), "replica 3");
}

Handshake handshakeOf(const std::string &path, uint64_t hash) {
  Handshake h;
  h.planHash = hash;
  h.manifestHash = hash * 3;
  h.replicas = 2;
  h.processes = 3;
  h.seed = 42;
  h.planPath = path;
  return h;
}

TEST(CommHandshake, EqualRecordsAgree) {
  auto record = comm::toRecord(handshakeOf("/tmp/a.dpx", 0xabcd));
  EXPECT_EQ(comm::compareHandshakes({record, record, record}), "");
  EXPECT_EQ(comm::compareHandshakes({record}), "");
}

TEST(CommHandshake, OddRankIsNamedWithBothValues) {
  auto a = comm::toRecord(handshakeOf("/tmp/a.dpx", 0xabcd));
  auto b = comm::toRecord(handshakeOf("/tmp/b.dpx", 0x1234));
  std::string text = comm::compareHandshakes({a, b, a});
  EXPECT_NE(text.find("ranks disagree on the plan: rank 1 runs plan /tmp/b.dpx (plan hash "
                      "0x0000000000001234), ranks 0, 2 run /tmp/a.dpx (plan hash 0x000000000000abcd)"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("ranks disagree on the collective manifest: rank 1 has manifest hash "
                      "0x000000000000369c"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("seed"), std::string::npos) << text;
}

TEST(CommHandshake, SeedReplicasAndProcesses) {
  Handshake h = handshakeOf("/tmp/a.dpx", 1);
  auto a = comm::toRecord(h);
  h.seed = 7;
  auto seed = comm::toRecord(h);
  EXPECT_EQ(comm::compareHandshakes({a, seed}),
            "ranks disagree on the seed: rank 1 has --seed 7, rank 0 has --seed 42");
  h = handshakeOf("/tmp/a.dpx", 1);
  h.replicas = 4;
  std::string text = comm::compareHandshakes({comm::toRecord(h), a, a, a});
  EXPECT_NE(text.find("rank 0 runs a plan for R=4 replicas per process, ranks 1-3 run one for R=2"),
            std::string::npos)
      << text;
  h = handshakeOf("/tmp/a.dpx", 1);
  h.processes = 2;
  text = comm::compareHandshakes({a, comm::toRecord(h)});
  // A tie: rank 0's value is the norm.
  EXPECT_NE(text.find("rank 1 runs a plan for P=2 processes, rank 0 runs one for P=3"),
            std::string::npos)
      << text;
}

TEST(CommHandshake, StepCountsMustAgree) {
  // A rank that would stop first leaves the others waiting in a collective.
  Handshake h = handshakeOf("/tmp/a.dpx", 1);
  h.epochs = 2;
  auto twoEpochs = comm::toRecord(h);
  h.maxSteps = 50;
  auto runCapped = comm::toRecord(h);
  h.maxSteps = 0;
  h.stepsPerEpoch = 50;
  EXPECT_EQ(comm::compareHandshakes({runCapped, comm::toRecord(h)}),
            "ranks disagree on the number of steps: rank 1 runs --epochs 2 --steps-per-epoch 50, "
            "rank 0 runs --epochs 2 --max-steps 50");
  h.stepsPerEpoch = 0;
  h.maxSteps = 50;
  auto capped = comm::toRecord(h);
  h.maxSteps = 0;
  h.epochs = 3;
  auto threeEpochs = comm::toRecord(h);
  EXPECT_EQ(comm::compareHandshakes({twoEpochs, twoEpochs, capped}),
            "ranks disagree on the number of steps: rank 2 runs --epochs 2 --max-steps 50, "
            "ranks 0, 1 run --epochs 2 without step limits");
  EXPECT_EQ(comm::compareHandshakes({twoEpochs, threeEpochs}),
            "ranks disagree on the number of steps: rank 1 runs --epochs 3 without step limits, "
            "rank 0 runs --epochs 2 without step limits");
  EXPECT_EQ(comm::compareHandshakes({capped, capped}), "");
}

TEST(CommHandshake, LongPathsKeepTheirEnd) {
  std::string path = "/" + std::string(400, 'd') + "/model.dpx";
  auto record = comm::toRecord(handshakeOf(path, 1));
  std::string kept = record.planPath;
  EXPECT_LT(kept.size(), sizeof(record.planPath));
  EXPECT_EQ(kept.substr(0, 3), "...");
  EXPECT_EQ(kept.substr(kept.size() - 10), "/model.dpx");
}

TEST(CommSingleProcess, HandshakeChecksProcesses) {
  ScopedEnv env;
  auto group = ProcessGroup::create(false);
  EXPECT_EQ(group->rank(), 0);
  EXPECT_EQ(group->size(), 1);
  EXPECT_EQ(group->launch().launcher, "direct");
  Handshake h = handshakeOf("/tmp/a.dpx", 1);
  h.processes = 1;
  group->handshake(h, 1.0);
  h.processes = 2;
  EXPECT_DP_ERROR(group->handshake(h, 1.0), ErrorKind::Launch,
                  "plan /tmp/a.dpx compiled for 2 processes but dprun was started directly as a "
                  "single process; launch it with `mpirun -n 2` or `srun -n 2 --mpi=pmix`");
}

TEST(CommSingleProcess, MetricsAreLocal) {
  auto group = ProcessGroup::create(false);
  double values[2] = {1.5, 2.5};
  group->sumDoubles(values, 2, 1.0);
  EXPECT_EQ(values[0], 1.5);
  EXPECT_EQ(values[1], 2.5);
  EXPECT_EQ(group->gatherDoubles(3.0, 1.0), std::vector<double>{3.0});
}

TEST(CommSingleProcess, AbortJobPrintsAndExits) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        auto group = ProcessGroup::create(false);
        group->abortJob("replica 0 failed: boom", 6);
      },
      ::testing::ExitedWithCode(6), "dprun: \\[rank 0\\] replica 0 failed: boom");
}

} // namespace
} // namespace dp::rt

TEST(Deadline, SaturatesInsteadOfOverflowing) {
  using Clock = dp::rt::comm::Clock;
  const Clock::time_point now = Clock::now();
  // 9223372036 s is 2^63 ns: added to the clock it wrapped to the past (a false timeout at once).
  EXPECT_GT(dp::rt::comm::after(now, 9223372036.0), now + std::chrono::hours(24 * 365));
  EXPECT_GT(dp::rt::comm::after(now, 1e300), now);
  EXPECT_GE(dp::rt::comm::after(Clock::time_point::max() - std::chrono::seconds(1), 1e9), now);
  EXPECT_EQ(dp::rt::comm::after(now, 0), now);
  EXPECT_EQ(dp::rt::comm::after(now, -5), now);
  EXPECT_EQ(dp::rt::comm::after(now, 2.5), now + std::chrono::milliseconds(2500));
}
