// Internals of the collectives library, shared by its sources and its tests (not part of the
// public interface in Comm.h): the communication thread that every group owns, the hooks the
// replica engine drives it through, and pure helpers (launch environment, handshake records and
// their comparison, message formatting) that can be tested without MPI.
#pragma once

#include "runtime/comm/Comm.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace dp::rt::comm {

using Clock = std::chrono::steady_clock;

/// Seconds from `from` to now.
inline double secondsSince(Clock::time_point from) {
  return std::chrono::duration<double>(Clock::now() - from).count();
}

/// `seconds` after `from`, saturated: a timeout of up to 30 years (what "for ever" becomes) never
/// overflows the clock's 64-bit nanoseconds, whatever the caller passed.
inline Clock::time_point after(Clock::time_point from, double seconds) {
  constexpr double kLongest = 1e9;
  const double s = seconds > 0 ? (seconds < kLongest ? seconds : kLongest) : 0.0;
  const auto step = std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s));
  return from > Clock::time_point::max() - step ? Clock::time_point::max() : from + step;
}

/// "20 s", "0.5 s": a timeout in messages.
std::string secondsText(double seconds);

/// How long a rank that diagnoses a timeout waits for the other ranks' status answers.
constexpr double kQueryGraceSeconds = 2.0;

/// What the other ranks answered to a status query (GroupImpl::diagnose()).
struct Diagnosis {
  /// "rank 1 did not answer (dead, hung or cut off); rank 2 is at collective #41 (computing)".
  std::string text;
  /// Per rank: its work count (heartbeat::count()) when it answered, else -1; this rank's own
  /// entry is -1 too. Empty for a group of one process.
  std::vector<int64_t> work;
};

/// Decides, each time a wait for the other ranks passes its deadline, whether to wait on. The
/// deadline (--collective-timeout) bounds the time in which no other rank makes progress, not
/// the length of a step: a rank that is behind but working (a long step, a loaded machine, a
/// checkpoint being written) is waited for; one that does not answer, or whose work count
/// stands still between two looks, ends the wait.
///
/// The first look, at the deadline, takes the counts; the second, recheckSeconds() later,
/// compares them. While some rank's count grows, the wait goes on and the ranks are looked at
/// again a whole timeout later.
class StallWatch {
public:
  /// Seconds to wait before the next look, or 0 to give up now.
  double next(const Diagnosis &diagnosis, double timeoutSec);
  /// When the last look compared work counts, ", with no progress on the other ranks in the
  /// last 5 s" (for the failure's message), else "".
  std::string stalled() const;
  /// The time between the first look and the one that compares.
  static double recheckSeconds(double timeoutSec);

private:
  std::vector<int64_t> last_;
  int looks_ = 0;
  double waited_ = 0; // seconds waited past the deadline before the last look
};

// ---------------------------------------------------------------------------------------------
// The launch environment (Launch.cpp).

/// The launcher as the environment shows it: "mpirun" (OMPI_COMM_WORLD_* or PMI variables of a
/// non-SLURM launcher), "srun" (a SLURM job step) or "direct".
std::string detectLauncher();

/// The SLURM variables that are set, in a fixed order ("SLURM_JOB_ID=12 SLURM_PROCID=1 ..."),
/// empty outside SLURM.
std::string slurmVariables();

/// Empty when SLURM and MPI agree on this process's rank and the job's size (or when the job
/// was not started by srun); otherwise the message of the Error(Launch) to raise, with both
/// views of the job.
std::string slurmMismatch(int mpiRank, int mpiSize);

/// This machine's host name.
std::string hostName();

/// "rank 1" or "ranks 0, 2-5": a sorted list of ranks (or replicas, with another `noun`).
std::string rankList(std::vector<int> ranks, const std::string &noun = "rank");

// ---------------------------------------------------------------------------------------------
// Handshakes (Group.cpp).

/// Fixed-size copy of a Handshake, exchanged between ranks as bytes.
struct HandshakeRecord {
  uint64_t planHash = 0;
  uint64_t manifestHash = 0;
  uint64_t seed = 0;
  int64_t epochs = 0, stepsPerEpoch = 0, maxSteps = 0;
  double collectiveTimeout = 0;
  int32_t replicas = 0;
  int32_t processes = 0;
  /// The shared options (Handshake::sharedOptions), NUL-terminated, cut to fit.
  char sharedOptions[256] = {};
  /// The plan's path, NUL-terminated; a longer path keeps its end behind "...".
  char planPath[240] = {};
  /// The rank's host name, cut to fit (not compared: messages name a rank's node with it).
  char host[64] = {};
  /// The rank's process id (not compared: a lost worker is named, or ended, with it).
  int32_t pid = 0;
};

/// The record of `h`.
HandshakeRecord toRecord(const Handshake &h);

/// Empty when every rank's record (indexed by rank) agrees; otherwise a message naming each
/// disagreement, the odd rank(s) and the values on both sides. Deterministic, so every rank
/// raises the same message.
std::string compareHandshakes(const std::vector<HandshakeRecord> &records);

/// The message for a job whose number of ranks is not the plan's P (`launch.size` != P).
std::string sizeMismatch(const Handshake &mine, const LaunchInfo &launch);

// ---------------------------------------------------------------------------------------------
// The communication thread and the engine's hooks (Group.cpp, MpiGroup.cpp).

/// What one poll of a client did.
enum class Progress {
  Idle = 0,     // nothing in flight
  Waiting = 1,  // operations in flight, none finished, while the replicas compute
  Urgent = 2,   // operations in flight, none finished, and a replica is blocked on them
  Advanced = 3, // something was started or finished
};

/// Work that the communication thread polls (the replica engine). Its methods run on that thread.
class CommClient {
public:
  virtual ~CommClient() = default;
  /// Makes progress without blocking.
  virtual Progress progress() = 0;
  /// What it is doing, for status queries ("waiting in allreduce of bucket 2, step 57"), or
  /// empty when it is idle. Sets `collective` to the number of the collective it waits in.
  virtual std::string state(int64_t &collective) = 0;
};

/// Base of both process groups: owns the communication thread, which runs calls handed to it and
/// polls its clients. A subclass adds the MPI operations.
class GroupImpl : public ProcessGroup {
public:
  GroupImpl() = default;
  GroupImpl(const GroupImpl &) = delete;
  GroupImpl &operator=(const GroupImpl &) = delete;
  ~GroupImpl() override;

  // Any thread. -------------------------------------------------------------------------------

  /// Runs `fn` on the communication thread and returns when it has run, rethrowing what it
  /// threw. Runs it inline when there is no thread or the caller is that thread.
  void call(const std::function<void()> &fn);

  /// Answers the other ranks' status queries (diagnose()): what a wait of its own on the
  /// communication thread calls while it polls, so that a rank asking about this one is not
  /// left without an answer. Communication thread only.
  void answerQueries() { service(); }

  /// Starts polling `client` (starting the thread if it was not running) / stops polling it.
  /// detach() returns once the thread no longer touches `client`.
  void attach(CommClient *client);
  void detach(CommClient *client);

  /// Wakes the thread from its idle wait (new work is ready).
  void wake();

  /// Whether the calling thread is the communication thread.
  bool onCommThread() const { return std::this_thread::get_id() == threadId_.load(); }

  // The communication thread only. -----------------------------------------------------------

  /// Starts an in-place sum of `n` elements of `dtype` (F32, or BF16: each addition in f32,
  /// rounded to bf16) at `data` over all processes; returns a token for testSum(). Counts as
  /// one collective. Only for groups of more than one process.
  virtual int64_t postSum(void *data, int64_t n, DType dtype) = 0;
  /// A sum of which each process needs only its segment (a reduce-scatter): `counts[p]`
  /// elements for process p, one after another from `data`. When testSum() says done, this
  /// process's segment holds the sum there; the other bytes are unspecified. Tested and
  /// abandoned as a sum is. The default runs postSum (every segment summed).
  virtual int64_t postScatterSum(void *data, int64_t n, DType dtype,
                                 const std::vector<int64_t> &counts);
  /// Whether the sum of `token` has finished (its token is then forgotten). Throws
  /// Error(Launch) when MPI reports an error.
  virtual bool testSum(int64_t token) = 0;
  /// Gives up on a sum that will never be tested again: the group is unusable afterwards (it
  /// will not finalise MPI, which could hang on the operation).
  virtual void abandonSum(int64_t token) = 0;
  /// Starts copying rank `root`'s `bytes` bytes at `data` into `data` on every other rank (a
  /// parameter from the process that updated it); tested and abandoned as a sum is, and counts
  /// as one collective, in the order of the sums. Only for groups of more than one process.
  virtual int64_t postBroadcast(void *data, int64_t bytes, int root);

  /// After an operation passed its deadline: asks every other rank what it is doing and how
  /// much work it has done, waits up to kQueryGraceSeconds for the answers while answering
  /// others, and describes the job. Never blocks on a peer.
  virtual Diagnosis diagnose() = 0;

  /// Point-to-point messages on a communicator of their own (the parameter-server engines):
  /// a send or receive of `bytes` bytes at `data` to or from rank `peer` with
  /// `tag`, returning a token for testMessage(). The buffer must stay until the test says done.
  virtual int64_t postSend(const void *data, int64_t bytes, int peer, int tag);
  virtual int64_t postReceive(void *data, int64_t bytes, int peer, int tag);
  /// Whether the operation of `token` finished (then forgotten). Throws Error(Launch) when
  /// MPI reports an error.
  virtual bool testMessage(int64_t token);
  /// Cancels a receive that will never be matched (the group is ending).
  virtual void cancelMessage(int64_t token);

  /// Number of collectives this rank has started so far (the last one's sequence number).
  int64_t collectiveSeq() const { return seq_; }

protected:
  /// Starts the thread (idempotent) / stops and joins it (idempotent).
  void startThread();
  void stopThread();
  bool threadRunning() const { return thread_.joinable(); }

  /// Called by the thread on every turn of its loop, before polling the clients (answers
  /// status queries).
  virtual void service() {}
  /// Longest idle wait of the thread between two turns; zero for "until woken".
  virtual std::chrono::microseconds idlePoll() const { return std::chrono::microseconds(0); }

  /// What this rank is doing, for status queries: the running call's activity, else the
  /// clients' states, else "computing, no collective in progress"; and the number of the
  /// collective it waits in (else of the last one it started). Communication thread only.
  std::string currentState(int64_t &collective);

  /// What the call now running on the thread does ("in the handshake"); empty between calls.
  std::string activity_;
  /// Collectives started (communication thread only).
  int64_t seq_ = 0;

private:
  struct Job {
    std::function<void()> fn;
    bool done = false;
    std::exception_ptr error;
  };
  void loop();

  std::thread thread_;
  std::atomic<std::thread::id> threadId_{};
  std::mutex mu_;
  std::condition_variable wakeCv_, doneCv_;
  std::deque<Job *> jobs_;
  bool stop_ = false, woken_ = false;
  std::vector<CommClient *> clients_; // communication thread only
};

/// Paces a thread that polls operations that someone is blocked on: spins (yielding) for a
/// while, then sleeps in growing steps, so that fast operations finish with little latency and
/// slow ones do not take a core from the replicas.
class Backoff {
public:
  void reset() { since_ = Clock::time_point(); }
  /// Waits a little before the next poll.
  void pause();

private:
  Clock::time_point since_;
};

} // namespace dp::rt::comm
