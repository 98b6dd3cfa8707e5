// Collectives for data parallelism: the processes of a job (MPI) and the replicas of one
// process (threads), behind one engine that averages gradient buckets over all R x P replicas.
//
// Threading: MPI is initialised with at least MPI_THREAD_SERIALIZED and, after
// ProcessGroup::create, every MPI call is made by the group's own communication thread; the
// other threads hand it work and wait. Nothing here ever blocks without a deadline: a peer that
// dies or hangs turns into an Error(Launch) naming the collective and the missing rank.
#pragma once

#include "runtime/base/Error.h"
#include "runtime/device/Collectives.h"
#include "runtime/format/Enums.h"

#include <cstdint>
#include <memory>
#include <utility>
#include <string>
#include <vector>

namespace dp::rt {

/// Where this process sits in the job, as the launcher and MPI tell it.
struct LaunchInfo {
  int rank = 0, size = 1;           // in the job (MPI_COMM_WORLD)
  int localRank = 0, localSize = 1; // among the ranks of this node
  std::string launcher = "direct";  // "mpirun", "srun" or "direct"
  std::string host;
  /// The SLURM variables seen ("SLURM_JOB_ID=12 SLURM_PROCID=1 SLURM_NTASKS=2 ..."), empty
  /// outside SLURM. Cross-checked against MPI's rank and size at create().
  std::string slurm;
  /// "rank 1 of 2 on node3 (srun, SLURM_JOB_ID=12 ...)".
  std::string describe() const;
};

/// True when the environment shows an MPI launcher (mpirun's OMPI_COMM_WORLD_* or PMIx/PMI
/// variables, as under srun --mpi=pmix).
bool launchedByMpiLauncher();
/// True when the launcher keeps the job running after one of its processes died (`mpirun
/// --enable-recovery`): MPI_Abort then ends no other process, and MPI_Finalize waits for every
/// process, a stopped one too.
bool launcherKeepsJobOnFailure();

/// What every rank must agree on before the first step.
struct Handshake {
  uint64_t planHash = 0;     // hash of the whole plan file
  uint64_t manifestHash = 0; // hash of the plan's collective manifest
  int32_t replicas = 1;      // R the plan was compiled for (devices per process)
  int32_t processes = 1;     // P the plan was compiled for
  uint64_t seed = 0;         // dprun --seed: initial parameters and shuffling must match
  /// dprun --epochs, --steps-per-epoch and --max-steps (0: none): every rank must run the
  /// same number of steps, or the rank that stops first leaves the others waiting in a
  /// collective.
  int64_t epochs = 0, stepsPerEpoch = 0, maxSteps = 0;
  /// dprun --collective-timeout (0: forever): a rank that gives up sooner than the others
  /// would end the job while they still wait, and name the wrong rank.
  double collectiveTimeout = 0;
  /// The options that change what the ranks do together ("--checkpoint-every 200 --resume
  /// --trace"; "" for none): a rank that resumes while another starts afresh would train
  /// other parameters, checkpoints are taken at steps every rank agrees on, and the
  /// timeline's merge is a collective.
  std::string sharedOptions;
  /// How gradient sums cross the ranks: "flat" (one allreduce over every rank),
  /// "hierarchical" (within each host, then across one leader per host, then back) or "auto"
  /// (hierarchical when the ranks span several hosts and some host has several). Every rank
  /// passes the same (dprun --allreduce is part of the shared options).
  std::string allreduce = "auto";
  /// Hosts the plan spreads the processes over (1: not said). With more, the ranks' hosts
  /// must be that many, with P / N ranks each.
  int32_t nodes = 1;
  std::string planPath;      // for messages only
};

/// The processes of the job. Exactly one per process.
class ProcessGroup : public HostGroup {
public:
  /// With `useMpi`, initialises MPI and starts the communication thread; otherwise a group of
  /// one process that never touches MPI. Throws Error(Launch) when SLURM's and MPI's views of
  /// the job disagree.
  static std::unique_ptr<ProcessGroup> create(bool useMpi);
  virtual ~ProcessGroup() = default; // stops the thread, finalises MPI

  const LaunchInfo &launch() const { return launch_; }
  int rank() const override { return launch_.rank; }
  int size() const override { return launch_.size; }

  /// Checks the launch against the plan, then exchanges every rank's Handshake. Throws
  /// Error(Launch) on any difference, on every rank, naming the rank(s) and values at odds
  /// ("rank 1 runs plan b.dpx (hash 0x..), rank 0 runs a.dpx (hash 0x..)"), or when the job's
  /// size is not the plan's P. Bounded by `timeoutSec`.
  virtual void handshake(const Handshake &mine, double timeoutSec) = 0;

  /// How the gradient sums cross the ranks, decided at the handshake: "flat", or
  /// "hierarchical over 2 hosts (2 + 2 ranks)".
  virtual std::string allreduceLayout() const { return "flat"; }

  /// In-place sum over all ranks of `n` doubles (metrics). Bounded by `timeoutSec`; `what`
  /// names the sum in the message of a timeout ("the sum of 3 metrics" when empty).
  virtual void sumDoubles(double *data, int n, double timeoutSec,
                          const std::string &what = "") = 0;

  /// Every rank's value of `x`, indexed by rank. Bounded by `timeoutSec`.
  std::vector<double> gatherDoubles(double x, double timeoutSec) override = 0;

  /// Every rank's `mine` on rank `root`, indexed by rank (empty on the other ranks): a
  /// rank's timeline. Each rank's bytes must fit in an int (MPI's count); the total too.
  /// Bounded by `timeoutSec`.
  virtual std::vector<std::string> gatherBytes(const std::string &mine, int root,
                                               double timeoutSec) = 0;

  /// Rank `root`'s `bytes` bytes at `data`, copied to `data` on every rank (each passes the
  /// same `bytes`): a communication library's unique id. Bounded by `timeoutSec`.
  void broadcast(void *data, size_t bytes, int root, double timeoutSec) override = 0;

  /// Ends every process of the job now (MPI_Abort where MPI is up), after `message` went to
  /// stderr prefixed with this rank. Where the launcher keeps the job running after a process
  /// ends (launcherKeepsJobOnFailure), only this process ends: the others' timeouts end them.
  [[noreturn]] void abortJob(const std::string &message, int exitCode) override = 0;

  /// Rank `rank`'s host name and process id, from the handshake ("" and 0 before it).
  virtual std::string peerHost(int rank) const { return rank == this->rank() ? launch_.host : ""; }
  virtual int peerPid(int rank) const;

  /// Makes the group end without MPI_Finalize, which waits for every process of the job: one
  /// left stopped (where the launcher keeps the job running) would keep it waiting forever.
  virtual void leaveWithoutFinalize() {}

  /// The ranks with this rank's `color` as a group of their own, numbered in rank order, with
  /// its own communication thread: the workers of a parameter-server job merge their timelines
  /// through it. Collective over every rank of this group, bounded by `timeoutSec`. Needs MPI_THREAD_MULTIPLE (two threads make MPI calls).
  virtual std::unique_ptr<ProcessGroup> split(int color, double timeoutSec) = 0;

protected:
  LaunchInfo launch_;
};

/// Averages gradient buckets over R replica threads of this process and the P processes of
/// the group: mean = (sum over all R x P copies) / (R x P), left in every replica's buffer.
/// Each bucket's reduction runs on the group's communication thread, so it overlaps the
/// replicas' compute between start() and wait().
class Collectives {
public:
  /// `buckets` are the plan's manifest, in the order their start kernels run in a step;
  /// `timeoutSec` bounds every wait (0: no bound).
  Collectives(ProcessGroup &group, int replicas, std::vector<BucketInfo> buckets,
              double timeoutSec);
  ~Collectives();

  /// Replica `replica` offers its copy of `bucket` (BucketInfo::elements floats at `data`,
  /// which it must not touch until wait() returns). Returns at once.
  void start(int bucket, int replica, float *data);

  /// Blocks until the mean of `bucket` is in `replica`'s buffer. Throws Error(Launch) when the
  /// collective times out (naming the bucket, its tensors, its location and the ranks or
  /// replicas that never arrived) or the engine was aborted.
  void wait(int bucket, int replica);

  /// Makes every pending and later wait() throw Error(Launch) with `why` (a replica failed).
  void abort(const std::string &why);

  /// Seconds the communication thread spent reducing (local sums and MPI), summed over all
  /// buckets since construction; and seconds replicas spent blocked in wait().
  double reduceSeconds() const;
  double waitSeconds() const;

private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// One bucket of a parameter-server plan, as a worker or a server sees it.
struct PsBucketInfo {
  int index = 0;
  int64_t elements = 0;  // floats: the gradients a worker pushes, the parameters it pulls
  int server = 0;        // the job rank of the server holding its parameters
  std::string tensors;   // "dense1.kernel, dense1.bias", for messages
  /// This process's copies of the bucket's parameters, in bucket order. A reply carries them
  /// where the bucket carries their gradients: each from a 64-byte boundary.
  std::vector<std::pair<float *, int64_t>> params;
  /// On a server: the bucket buffer its updates read the gradients from.
  float *gradients = nullptr;
};

/// What a server did, for its report and for worker 0's questions.
struct ServerReport {
  int64_t updates = 0;      // updates applied (one per bucket and gradient, or mean under sync)
  int64_t gradients = 0;    // gradients received
  double seconds = 0;       // from construction to the last worker's end (or the question)
  double updateSeconds = 0; // spent applying updates
  /// staleness[k]: gradients applied k updates after the parameters they were computed from
  /// (the last of kStalenessBins counts that many or more).
  std::vector<int64_t> staleness;
  /// pullsHeld: replies held back by the staleness bound, and the seconds they waited.
  int64_t pullsHeld = 0;
  double heldSeconds = 0;
  /// By worker: the pushes after which the server left it out (silent past the timeout while
  /// the job keeps going without lost workers); -1 for a worker it did not.
  std::vector<int64_t> lostAfter;
  /// Whether every worker had finished or been left out (a final answer).
  bool final = false;
};

/// Bins of the staleness histogram; the last one counts the gradients that old or older.
constexpr int kStalenessBins = 64;

/// A parameter-server worker's exchanges: each bucket of gradients pushed to its server, the
/// parameters pulled back, on the job group's communication thread.
class PushPull {
public:
  /// `job` is the whole job's group (servers and workers), of which `workers` train;
  /// `timeoutSec` bounds every pull and question (0: no bound).
  PushPull(ProcessGroup &job, int workers, std::vector<PsBucketInfo> buckets, double timeoutSec);
  ~PushPull();
  /// Sends `bucket`'s gradients at `data` (untouched until the pull) to its server.
  void push(int bucket, const float *data);
  /// Waits for the server's answer to the last push of `bucket` and writes the parameters.
  /// Throws Error(Launch) past the timeout, naming the server, or once aborted.
  void pull(int bucket);
  /// Tells every server that this worker has pushed its last gradient (after its last pull).
  void finish(double timeoutSec);
  /// Worker 0 asks every server for its figures (ServerReport, by server), each answering
  /// within the timeout or an Error(Launch) names it. With `final` (after finish()), it asks
  /// until every server has seen every worker finish or left it out, and writes the servers'
  /// last parameters into this process's copies.
  std::vector<ServerReport> ask(bool final);
  /// Shared batches (asynchronous servers): the next of the `units` shards of `epoch` this
  /// worker trains, from the counter on the first server (shard u is rows u % W of batch
  /// u / W), or -1 once every one is taken. The next one is asked for at once, so that its
  /// answer comes while the step runs. Throws Error(Launch) past the timeout.
  int64_t nextUnit(int64_t epoch, int64_t units);
  void abort(const std::string &why);

private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// A parameter server's exchanges with the workers: it receives their pushes, hands the
/// caller each bucket whose gradient is ready for its updates, and answers the pulls as the
/// strategy allows: at once (asynchronous), once the slowest worker is at most `staleness`
/// steps behind, or (sync) once every worker's gradient of the step was averaged and applied.
class ParameterServer {
public:
  /// `job` is the whole job's group; the workers are job ranks firstWorker .. + workers - 1.
  /// `timeoutSec` bounds how long a worker may stay silent (0: no bound). Past it, a silent
  /// worker ends the job; with `keepGoing` one other than worker 0 is left out instead: the
  /// staleness bound and the synchronous mean count the workers still training.
  /// With `sharesBatches` it also hands out the shards of each epoch (PushPull::nextUnit).
  ParameterServer(ProcessGroup &job, int firstWorker, int workers, int64_t staleness, bool sync,
                  std::vector<PsBucketInfo> buckets, double timeoutSec, bool keepGoing,
                  bool sharesBatches);
  ~ParameterServer();
  /// Blocks until some bucket's gradient is in its buffer and returns the bucket's position
  /// in `buckets`, with how many updates it has had; -1 once every worker has finished (or was
  /// left out) and worker 0 has the final parameters. Answers worker 0's questions
  /// (PushPull::ask) meanwhile. Throws Error(Launch) when a worker stays silent past the
  /// timeout, naming it (unless it is left out), and the signal's error when this process got
  /// SIGINT, SIGTERM or SIGUSR1 (base/Interrupt.h).
  int next(int64_t &updates);
  /// After the updates of the bucket at `position` (next()'s), which took `seconds`: the
  /// answers the strategy lets go.
  void updated(int position, double seconds);
  ServerReport report() const;

private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

} // namespace dp::rt
