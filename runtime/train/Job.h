// A launched job: everything that happens before the first step. The plan read and checked
// against the memory its devices can have, loaded on the backend it was compiled for, this
// process's place in the process group agreed with every other rank (same plan, manifest and
// seed), and the collectives engine that averages the plan's buckets attached to it. The
// training loop (Trainer) gets a ready Job and only runs steps.
#pragma once

#include "runtime/base/CoreShare.h"
#include "runtime/base/Interrupt.h"
#include "runtime/comm/Comm.h"
#include "runtime/core/Program.h"

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>

namespace dp::rt {

struct JobOptions {
  /// dprun --seed: every rank must use the same.
  uint64_t seed = 1;
  /// Seconds the handshake and each collective may wait for the other ranks (0: forever).
  double collectiveTimeout = 20;
  /// dprun --epochs and --max-steps (0: none): checked by the handshake, so that no rank
  /// stops before the others.
  int64_t epochs = 0, stepsPerEpoch = 0, maxSteps = 0;
  /// The options every rank must share, as text for the handshake (Handshake::sharedOptions).
  std::string sharedOptions;
  /// Whether the run writes or resumes checkpoints (--checkpoint-dir), and stops early
  /// (--early-stop): what a parameter-server job cannot do yet.
  bool checkpoints = false, earlyStop = false;
  /// dprun --allreduce (Handshake::allreduce).
  std::string allreduce = "auto";
  /// dprun --reproducible: kernels whose sums do not depend on the thread count
  /// (Backend::setReproducible); the ranks' sums in the tree come with --allreduce tree.
  bool reproducible = false;
  /// dprun --threads: compute threads of a CPU plan's process (0: auto, chooseComputeThreads).
  int threads = 0;
  /// dprun --on-worker-loss: what parameter servers do with a worker silent past the timeout:
  /// "end" the job, "continue" without it, or "" (auto): continue under `mpirun
  /// --enable-recovery` (which keeps the job alive when a process dies), else end.
  std::string onWorkerLoss;
};

class Job {
public:
  /// Reads and verifies `planPath`, refuses it (Error(Memory)) when its arenas do not fit
  /// what the devices can give this process, loads it on its backend, joins the process group
  /// (MPI when an MPI launcher started this process or the plan has several processes),
  /// checks that every rank runs the same plan with the same seed, and attaches the
  /// collectives engine. Throws Error; nothing is allocated for the plan before the memory
  /// check.
  static std::unique_ptr<Job> launch(const std::string &planPath, const JobOptions &options);
  ~Job();

  const std::string &planPath() const { return planPath_; }
  Program &program() { return *program_; }
  ProcessGroup &group() { return *group_; }
  /// The host engine averaging the plan's buckets (MPI and replica threads); null when the
  /// plan has no collectives or its devices average them themselves (NCCL).
  Collectives *collectives() { return engine_.get(); }
  /// Under the parameter-server strategy: this worker's exchanges with the servers, or this
  /// server's with the workers (null otherwise); the server's index (-1 on a worker). A
  /// worker's group() is the workers', a server's the servers'.
  PushPull *pushPull() { return pushPull_.get(); }
  ParameterServer *server() { return server_.get(); }
  int serverIndex() const { return serverIndex_; }
  /// Under asynchronous parameter servers: whether the workers share each epoch's batches
  /// (Plan::sharesBatches of the job's plan; a worker's own plan has no servers).
  bool sharesBatches() const { return sharesBatches_; }
  /// This process's rank and the ranks of the whole job (under the parameter-server strategy
  /// group() holds only the workers or the servers).
  int jobRank() const { return world_ ? world_->rank() : group_->rank(); }
  int jobSize() const { return world_ ? world_->size() : group_->size(); }
  /// How many compute threads this process uses on a CPU plan, and why.
  const ThreadChoice &threads() const { return threads_; }
  /// True on the rank that prints (rank 0).
  bool printer() const { return group_->rank() == 0; }

  /// Runs `body`. When it throws and the job has several processes, the job ends on every rank
  /// (the others would wait for this one in a collective); with one process, and for a stop
  /// for a signal (which every rank agreed on), the error is rethrown.
  template <typename Body> auto run(Body &&body) -> decltype(body()) {
    if (jobSize() == 1)
      return body();
    try {
      return body();
    } catch (const Error &e) {
      // A stop for a signal is agreed by every rank at the same step: each ends on its own.
      if (isSignalStop(e.kind()))
        throw;
      // Through the whole job's group: its message names the rank the launcher knows.
      (world_ ? *world_ : *group_).abortJob(e.what(), e.exitCode());
    } catch (const std::exception &e) {
      (world_ ? *world_ : *group_).abortJob(e.what(), static_cast<int>(ErrorKind::Runtime));
    }
    std::abort(); // abortJob does not return
  }

private:
  Job() = default;
  /// Job::launch for a parameter-server plan: the whole job's group and handshake, this rank's
  /// role and its plan (a server's or the workers'), the workers' or servers' own group, and
  /// the exchanges.
  void launchParameterServer(Plan plan, const JobOptions &options);
  std::string planPath_;
  /// The whole job (servers and workers) under the parameter-server strategy; destroyed last.
  std::unique_ptr<ProcessGroup> world_;
  std::unique_ptr<Program> program_;
  std::unique_ptr<ProcessGroup> group_;
  std::unique_ptr<PushPull> pushPull_;
  std::unique_ptr<ParameterServer> server_;
  int serverIndex_ = -1;
  bool sharesBatches_ = false;
  std::unique_ptr<Collectives> engine_;
  std::unique_ptr<CollectiveEngine> adapter_;
  ThreadChoice threads_;
};

} // namespace dp::rt
