// Whole MPI jobs through mpirun: dprt_comm_mpi_check averages buckets over 2 and 3 processes,
// and fails fast and clearly on a handshake mismatch, on a job of the wrong size, and when a
// rank dies, hangs or stops in the middle of a series of allreduces. Every job runs under
// `timeout 60`, so a hang fails the test instead of hanging the suite.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <regex>
#include <string>

namespace {

struct Job {
  int exitCode = -1;
  std::string output; // stdout and stderr of every rank and of mpirun
  double seconds = 0;
};

/// Runs `ranks` copies of the check program with `args` under mpirun (with `mpirunOptions`).
Job runJob(int ranks, const std::string &args, const std::string &mpirunOptions = "") {
  // Shared memory between the ranks of this machine; no network probing. Single-copy (CMA)
  // transfers need ptrace rights that containers often lack.
  std::string command = "OMPI_MCA_btl_vader_single_copy_mechanism=none timeout 60 " MPIEXEC_PATH
                        " --allow-run-as-root --oversubscribe --mca btl self,vader " +
                        mpirunOptions + " -n " + std::to_string(ranks) + " " MPI_CHECK_PATH " " +
                        args + " 2>&1";
  Job job;
  auto begin = std::chrono::steady_clock::now();
  FILE *pipe = popen(command.c_str(), "r");
  if (!pipe) {
    job.output = "cannot run " + command;
    return job;
  }
  char buffer[4096];
  size_t got;
  while ((got = fread(buffer, 1, sizeof(buffer), pipe)) > 0)
    job.output.append(buffer, got);
  int status = pclose(pipe);
  job.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  job.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return job;
}

/// The line of `output` that rank `rank` printed with prefix "dprun: [rank N] ", or "".
std::string rankMessage(const std::string &output, int rank) {
  std::string prefix = "dprun: [rank " + std::to_string(rank) + "] ";
  size_t at = output.find(prefix);
  if (at == std::string::npos)
    return "";
  size_t end = output.find('\n', at);
  return output.substr(at, end == std::string::npos ? std::string::npos : end - at);
}

bool contains(const std::string &text, const std::string &part) {
  return text.find(part) != std::string::npos;
}

TEST(MpiJob, AllreduceOverTwoProcesses) {
  Job job = runJob(2, "allreduce --replicas 2 --steps 6");
  EXPECT_EQ(job.exitCode, 0) << job.output;
  EXPECT_TRUE(contains(job.output, "rank 0: allreduce ok (R=2, P=2")) << job.output;
  EXPECT_TRUE(contains(job.output, "rank 1: allreduce ok (R=2, P=2")) << job.output;
}

TEST(MpiJob, AllreduceOverThreeProcesses) {
  Job job = runJob(3, "allreduce --replicas 2 --steps 6");
  EXPECT_EQ(job.exitCode, 0) << job.output;
  for (int rank = 0; rank < 3; ++rank)
    EXPECT_TRUE(contains(job.output, "rank " + std::to_string(rank) + ": allreduce ok (R=2, P=3"))
        << job.output;
}

TEST(MpiJob, AllreduceWithOneReplicaPerProcess) {
  Job job = runJob(2, "allreduce --replicas 1 --steps 3");
  EXPECT_EQ(job.exitCode, 0) << job.output;
  EXPECT_TRUE(contains(job.output, "rank 1: allreduce ok (R=1, P=2")) << job.output;
}

/// Runs the check's `args` over `ranks` processes, which must all say "allreduce ok (`what`".
void expectAveraged(int ranks, const std::string &args, const std::string &what) {
  Job job = runJob(ranks, args);
  EXPECT_EQ(job.exitCode, 0) << job.output;
  for (int rank = 0; rank < ranks; ++rank)
    EXPECT_TRUE(contains(job.output, "rank " + std::to_string(rank) + ": allreduce ok (" + what))
        << job.output;
}

TEST(MpiJob, ShardedStateBroadcastsReachEveryReplicaOfTheJob) {
  // Buckets 1 and 4 are copied from one replica of one process to every replica of every
  // process, between allreduces, step after step; bucket 2 is reduce-scattered to the job's
  // replicas in segments of uneven sizes (MPI_Ireduce_scatter, each process's segment moved
  // into place), and each replica checks its own means.
  expectAveraged(3, "shard --replicas 2 --steps 4", "R=2, P=3, 4 steps, flat)");
  expectAveraged(2, "shard --replicas 1 --steps 3", "R=1, P=2, 3 steps, flat)");
  // Under tree sums the reduce-scatter goes up the tree and back down it in each subtree's
  // segments (owner 0's is empty): over 3 ranks, and over 5 (rank 0 sends rank 4's, ranks 2
  // and 3's, then rank 1's; rank 2 forwards rank 3's).
  expectAveraged(3, "shard --replicas 2 --steps 4 --allreduce tree",
                 "R=2, P=3, 4 steps, tree over 3 ranks)");
  expectAveraged(5, "shard --replicas 1 --steps 3 --allreduce tree",
                 "R=1, P=5, 3 steps, tree over 5 ranks)");
  // Hierarchical sums on one host: reduced to the host's leader, which scatters each rank its
  // segment (MPI_Iscatterv). (Across hosts the leaders reduce-scatter first:
  // test/launch/cluster-dprun.sh.)
  expectAveraged(3, "shard --replicas 2 --steps 4 --allreduce hierarchical",
                 "R=2, P=3, 4 steps, hierarchical over 1 host (3 ranks))");
}

TEST(MpiJob, BroadcastReachesEveryRank) {
  Job job = runJob(3, "broadcast");
  EXPECT_EQ(job.exitCode, 0) << job.output;
  for (int rank = 0; rank < 3; ++rank)
    EXPECT_TRUE(contains(job.output, "rank " + std::to_string(rank) + ": broadcast ok (from rank 2)"))
        << job.output;
}

TEST(MpiJob, HandshakeMismatchNamesTheOddRankOnEveryRank) {
  Job job = runJob(3, "handshake-mismatch --timeout 10");
  EXPECT_NE(job.exitCode, 0) << job.output;
  EXPECT_LT(job.seconds, 20) << job.output;
  for (int rank = 0; rank < 3; ++rank) {
    std::string message = rankMessage(job.output, rank);
    EXPECT_TRUE(contains(message, "ranks disagree on the plan: rank 1 runs plan /tmp/b.dpx (plan "
                                  "hash 0x0000000000001234), ranks 0, 2 run /tmp/a.dpx (plan hash "
                                  "0x000000000000abcd)"))
        << "rank " << rank << ":\n" << job.output;
    EXPECT_TRUE(contains(job.output, "rank " + std::to_string(rank) + " exits with code 6"))
        << job.output;
  }
}

TEST(MpiJob, WrongNumberOfProcessesIsReportedOnEveryRank) {
  Job job = runJob(3, "size-mismatch --compiled-p 2 --timeout 10");
  EXPECT_NE(job.exitCode, 0) << job.output;
  EXPECT_LT(job.seconds, 20) << job.output;
  for (int rank = 0; rank < 3; ++rank) {
    std::string message = rankMessage(job.output, rank);
    EXPECT_TRUE(contains(message, "plan /tmp/a.dpx was compiled for 2 processes (R=2 replicas "
                                  "each) but the job has 3 ranks (rank " +
                                      std::to_string(rank) + " of 3 on "))
        << "rank " << rank << ":\n" << job.output;
    EXPECT_TRUE(contains(message, "launch it with `mpirun -n 2` or `srun -n 2 --mpi=pmix`"))
        << job.output;
  }
}

/// Seconds within which a job whose ranks called MPI_Abort must be gone. (These jobs time out in
/// seconds: they must not share the cores with other heavy tests, see RESOURCE_LOCK cores.)
constexpr double kTeardownBound = 30;

TEST(MpiJob, KilledRankIsNamedBySurvivors) {
  // --enable-recovery: mpirun leaves the survivors running (as srun may), so that they must
  // find out for themselves.
  Job job = runJob(3, "kill --replicas 2 --steps 100000 --timeout 3", "--enable-recovery");
  EXPECT_LT(job.seconds, kTeardownBound) << job.output;
  std::regex survivor("dprun: \\[rank [02]\\] allreduce of bucket [0-9] \\(layer[0-9]\\.kernel, "
                      "layer[0-9]\\.bias; check\\.mlir:[0-9]:3\\) timed out after 3 s on rank [02] "
                      "\\(collective #[0-9]+, step 3\\): [^\\n]*rank 1 did not answer \\(dead, hung or "
                      "cut off\\)");
  EXPECT_TRUE(std::regex_search(job.output, survivor)) << job.output;
  // The other survivor answered the status query.
  EXPECT_TRUE(std::regex_search(job.output, std::regex("rank [02] is at collective #[0-9]+ "
                                                       "\\(waiting in allreduce of bucket")))
      << job.output;
}

TEST(MpiJob, KilledRankEndsTheJobUnderPlainMpirun) {
  Job job = runJob(2, "kill --replicas 1 --steps 100000 --timeout 3");
  EXPECT_NE(job.exitCode, 0) << job.output;
  EXPECT_LT(job.seconds, 30) << job.output;
}

TEST(MpiJob, HungRankIsReportedWithItsState) {
  // Rank 1's replica 0 sleeps; its communication thread still answers queries.
  Job job = runJob(2, "hang --replicas 2 --steps 100000 --timeout 3");
  EXPECT_NE(job.exitCode, 0) << job.output;
  EXPECT_LT(job.seconds, kTeardownBound) << job.output; // see KilledRankIsNamedBySurvivors
  std::string message = rankMessage(job.output, 0);
  EXPECT_TRUE(contains(message, "timed out after 3 s on rank 0")) << job.output;
  // Rank 1 says where its replicas are, or (when its own wait timed out first) why it failed.
  EXPECT_TRUE(std::regex_search(
      message, std::regex("rank 1 is at collective #[0-9]+ \\((computing; bucket 1, step 3 waits "
                          "for replica 0 to start it|failed: .*replica 0 never started it)")))
      << job.output;
}

TEST(MpiJob, RankThatIsBehindButWorksIsWaitedFor) {
  // Rank 1's replica 0 works for 4 s before its step 3 (its heartbeat grows); the timeout is 1 s.
  // Rank 0 asks rank 1 at its deadline, again a second later, sees the work, and waits on.
  Job job = runJob(2, "slow --replicas 2 --steps 6 --timeout 1");
  EXPECT_EQ(job.exitCode, 0) << job.output;
  EXPECT_TRUE(contains(job.output, "rank 0: allreduce ok (R=2, P=2, 6 steps, flat)")) << job.output;
  EXPECT_TRUE(contains(job.output, "rank 1: allreduce ok (R=2, P=2, 6 steps, flat)")) << job.output;
}

/// Runs a parameter-server check of `args` (a server and two workers, 6 steps) that must end
/// well: every gradient applied once (`updates`: 12, or 6 means of two under sync).
void expectServed(const std::string &args, int updates = 12) {
  Job job = runJob(3, args + " --steps 6");
  EXPECT_EQ(job.exitCode, 0) << job.output;
  EXPECT_TRUE(contains(job.output, "rank 0: served " + std::to_string(updates) + " updates"))
      << job.output;
  for (int rank : {1, 2})
    EXPECT_TRUE(contains(job.output, "rank " + std::to_string(rank) + ": pushed 6 gradients"))
        << job.output;
}

TEST(MpiJob, ParameterServerServesItsWorkers) { expectServed("ps --timeout 5"); }

TEST(MpiJob, ParameterServerWaitsForAWorkerThatIsBehindButWorks) {
  // Worker 0 (rank 1) works for 4 s before its second push; the timeout is 1 s. The server
  // asks it at its deadline, again a second later, sees the work, and waits on: it used to
  // end the job at 1 s ("no push from worker 0 ... dead, hung or cut off").
  expectServed("ps-slow --timeout 1");
}

TEST(MpiJob, AWorkerWhosePullIsHeldForAWorkingWorkerWaits) {
  // Synchronous: worker 1's pull of step 1 waits for worker 0's gradient, which comes after 8 s
  // of work; the timeout is 1 s. Worker 1 asks the job's ranks at its deadline (4 s: the
  // timeout, the server's time to look, a second), sees worker 0 work, and waits on; it used to
  // blame the server.
  expectServed("ps-slow-sync --timeout 1", 6);
}

TEST(MpiJob, ParameterServerEndsTheJobForAStoppedWorker) {
  // Worker 1 (rank 2) stops before its second push: it does not answer the server's question,
  // so the server ends the job after the timeout and the question's grace (3 s), naming it;
  // worker 0, whose question for the final parameters the server answers only then, would
  // blame the server a second later (on a machine starved past that second it may be first).
  Job job = runJob(3, "ps-stop --steps 6 --timeout 1");
  EXPECT_NE(job.exitCode, 0) << job.output;
  EXPECT_TRUE(std::regex_search(job.output,
                                std::regex("no push from worker 1 \\(rank 2\\) for [0-9.]+ s, past "
                                           "the 1 s timeout, and not finished: dead, hung or cut "
                                           "off|server 0 \\(rank 0\\) did not answer the question "
                                           "for the final parameters for 4 s")))
      << job.output;
  EXPECT_LT(job.seconds, 30) << job.output;
}

TEST(MpiJob, StoppedRankDidNotAnswer) {
  Job job = runJob(2, "stop --replicas 1 --steps 100000 --timeout 3");
  EXPECT_NE(job.exitCode, 0) << job.output;
  EXPECT_LT(job.seconds, 30) << job.output;
  EXPECT_TRUE(contains(rankMessage(job.output, 0), "rank 1 did not answer (dead, hung or cut off)"))
      << job.output;
}

} // namespace
