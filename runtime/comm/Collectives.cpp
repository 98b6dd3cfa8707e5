// The replica engine: averages gradient buckets over the R replica threads of this process and
// the P processes of the group, on the group's communication thread; see Comm.h.
//
// Per bucket, once all R replicas have started it: the thread sums the R buffers into replica
// 0's (in a fixed binary tree over the replicas' indices), sums that across processes with an
// in-place MPI_Iallreduce when P > 1 (polled against the deadline), multiplies by 1/(R*P) and
// copies the result to the other replicas' buffers. With R = P = 1 there is nothing to average and
// start/wait only return. A bucket whose wire type is bf16 crosses the processes as a bf16 copy of
// replica 0's f32 sum (half the bytes), which is widened back before the scaling.
//
// A reduce-scattered bucket (sharded optimizer state: segments) is summed the same way, but
// each replica needs only its own segment's means: the processes exchange it with
// postScatterSum (MPI_Ireduce_scatter on flat sums; on hierarchical ones the leaders'
// reduce-scatter across the hosts and each leader's scatter within its host; under tree sums
// the tree's sum, sent back down the tree in the segments of each subtree), and finish()
// scales and copies each replica's segment alone.
//
// A broadcast bucket (sharded optimizer state) copies the root replica's parameters (one
// buffer holds them all) to the others: within the process (group Replicas) by memcpy on the
// thread; over the job (group World, root p * R + r) the root's process first sends its copy to
// every other process (postBroadcast, into replica 0's buffer there), then each process copies it
// to its others.
//
// Buckets are reduced in the order of the constructor's list, cycling once per step, so that
// every rank posts its collectives in the same order whatever order its replicas finish in.
#include "runtime/comm/Internal.h"

#include "runtime/base/Bf16.h"
#include "runtime/base/Heartbeat.h"
#include "runtime/base/Trace.h"


#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>

namespace dp::rt {

using comm::Clock;
using comm::Progress;
using comm::secondsSince;
using comm::secondsText;

namespace {

/// dst[i] += src[i]: the loop the compiler vectorises.
void addInto(float *__restrict dst, const float *__restrict src, int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    dst[i] += src[i];
}

void scaleInPlace(float *__restrict data, float factor, int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    data[i] *= factor;
}

} // namespace

struct Collectives::Impl final : comm::CommClient {
  /// One bucket of the manifest.
  struct Slot {
    BucketInfo info;
    // Under mu:
    std::vector<float *> data;     // each replica's buffer of its latest start
    std::vector<int64_t> started;  // how often each replica started this bucket
    int64_t done = 0;              // reductions finished (the current step of this bucket)
    // Communication thread only:
    std::vector<float *> reducing; // the buffers of the reduction in progress
    std::vector<uint16_t> wire;    // the bf16 copy that crosses the processes (bf16 wire)
    Clock::time_point readyAt;     // when the last replica started it
    Clock::time_point deadline;    // when to look at the other ranks (its MPI sum's deadline)
    comm::StallWatch watch;        // what they said at the earlier looks
    int64_t token = 0;             // the group's token of that sum
    int64_t seq = 0;               // its collective number
    int64_t posted = 0;            // reductions started (done, or done + 1 while one runs)
    int source = 0;                // a broadcast's replica of this process that others copy
    std::vector<int64_t> counts;   // a reduce-scattered bucket's elements per process
  };

  Impl(ProcessGroup &group, int replicas, std::vector<BucketInfo> buckets, double timeoutSec);

  int positionOf(int bucket) const;
  void checkReplica(int replica) const;
  /// "allreduce of bucket 1 (dense1.kernel, dense1.bias; mlp.mlir:12:8)".
  std::string describe(const Slot &slot) const;
  bool readyLocked(const Slot &slot) const;
  /// Records the engine's first error and wakes every waiter.
  void failLocked(const std::string &message);
  void fail(const std::string &message);
  /// Averages the reduced sum of `slot` into every replica's buffer and marks it done.
  void finish(Slot &slot);

  void start(int bucket, int replica, float *data);
  void wait(int bucket, int replica);
  void abort(const std::string &why);
  /// Stops the thread polling this engine; gives up sums still in flight.
  void shutdown();

  Progress progress() override;
  std::string state(int64_t &collective) override;

  comm::GroupImpl *group = nullptr;
  const int replicas, processes, rank;
  const double timeoutSec;
  /// Whether anything must be averaged at all (R x P > 1); else start and wait only return.
  const bool active;
  std::vector<Slot> slots;
  std::vector<int> positions; // BucketInfo::index -> position in slots, -1 for none

  mutable std::mutex mu;
  std::condition_variable cv;
  bool failed = false;
  std::string error;
  std::atomic<bool> failedFlag{false}; // `failed`, readable without the lock
  double reduceSec = 0, waitSec = 0;
  int waiters = 0; // replicas blocked in wait()
  /// The latest deadline the communication thread moved an MPI sum to, because the ranks it
  /// waits for are working: the replicas' own deadlines follow it.
  Clock::time_point commDeadline;

  // Communication thread only.
  size_t cursor = 0;           // the next bucket to reduce
  std::vector<size_t> inFlight; // positions whose MPI sums are in flight, oldest first
};

Collectives::Impl::Impl(ProcessGroup &g, int replicas, std::vector<BucketInfo> buckets,
                        double timeoutSec)
    : group(dynamic_cast<comm::GroupImpl *>(&g)), replicas(replicas), processes(g.size()),
      rank(g.rank()), timeoutSec(timeoutSec), active(replicas * g.size() > 1) {
  if (!group)
    throw Error(ErrorKind::Runtime, "Collectives need a process group made by ProcessGroup::create");
  if (replicas < 1)
    throw Error(ErrorKind::Runtime, "Collectives: " + std::to_string(replicas) +
                                        " replicas; there must be at least one");
  for (size_t i = 0; i < buckets.size(); ++i) {
    const BucketInfo &b = buckets[i];
    // Gradient means over the job, and (sharded optimizer state) a parameter copied from the
    // replica that updated it to the others of the process.
    // Over the job (state sharded over the processes), replica r of process p is p * R + r.
    if (b.kind == CollectiveKind::Broadcast &&
        (b.group == GroupKind::Replicas || b.group == GroupKind::World)) {
      const int members = b.group == GroupKind::World ? replicas * processes : replicas;
      if (b.root < 0 || b.root >= members)
        throw Error(ErrorKind::Plan, "bucket " + std::to_string(b.index) +
                                         " is a broadcast from replica " + std::to_string(b.root) +
                                         ", but the " +
                                         (b.group == GroupKind::World ? "job" : "process") +
                                         " has " + std::to_string(members) + " replica(s)");
    } else {
      requireCollectives({b}, CollectiveKind::AllReduceMean, GroupKind::World, "the MPI engine");
    }
    // A reduce-scattered bucket: an offset an owner of the job, and its end, in order.
    if (!b.segments.empty()) {
      bool ordered = int64_t(b.segments.size()) == int64_t(replicas) * processes + 1 &&
                     b.segments.front() == 0 && b.segments.back() == b.elements;
      for (size_t s = 1; ordered && s < b.segments.size(); ++s)
        ordered = b.segments[s - 1] <= b.segments[s];
      if (b.kind != CollectiveKind::AllReduceMean || !ordered)
        throw Error(ErrorKind::Plan, "bucket " + std::to_string(b.index) +
                                         " is reduce-scattered "
                                         "over " +
                                         std::to_string(b.segments.size()) +
                                         " offsets; an allreduce over the job's " +
                                         std::to_string(replicas * processes) +
                                         " replicas needs one an owner and its end, in order");
    }
    if (b.index < 0 || b.elements < 0)
      throw Error(ErrorKind::Runtime, "Collectives: bucket " + std::to_string(b.index) + " has " +
                                          std::to_string(b.elements) + " elements");
    if (b.wire != DType::F32 && b.wire != DType::BF16)
      throw Error(ErrorKind::Runtime, "Collectives: bucket " + std::to_string(b.index) +
                                          " crosses the processes as " + dtypeName(b.wire) +
                                          "; f32 and bf16 are built");
    if (static_cast<size_t>(b.index) >= positions.size())
      positions.resize(b.index + 1, -1);
    if (positions[b.index] >= 0)
      throw Error(ErrorKind::Runtime,
                  "Collectives: bucket " + std::to_string(b.index) + " is listed twice");
    positions[b.index] = static_cast<int>(i);
    Slot slot;
    slot.info = b;
    // The replica whose buffer the others of this process copy: the root, where it is one of
    // this process's; else replica 0, into which the root's process copies it.
    if (b.kind == CollectiveKind::Broadcast)
      slot.source = b.group == GroupKind::Replicas ? b.root
                    : b.root / replicas == rank    ? b.root % replicas
                                                   : 0;
    // Each process's segment of a reduce-scattered bucket: those of its R replicas.
    for (int p = 0; !b.segments.empty() && p < processes; ++p)
      slot.counts.push_back(b.segments[(p + 1) * replicas] - b.segments[p * replicas]);
    slot.data.assign(replicas, nullptr);
    slot.started.assign(replicas, 0);
    slots.push_back(std::move(slot));
  }
}

int Collectives::Impl::positionOf(int bucket) const {
  if (bucket < 0 || static_cast<size_t>(bucket) >= positions.size() || positions[bucket] < 0)
    throw Error(ErrorKind::Runtime,
                "Collectives: bucket " + std::to_string(bucket) + " is not in the manifest");
  return positions[bucket];
}

void Collectives::Impl::checkReplica(int replica) const {
  if (replica < 0 || replica >= replicas)
    throw Error(ErrorKind::Runtime, "Collectives: replica " + std::to_string(replica) +
                                        " is outside 0.." + std::to_string(replicas - 1));
}

std::string Collectives::Impl::describe(const Slot &slot) const {
  std::string text = std::string(slot.info.kind == CollectiveKind::Broadcast ? "broadcast"
                                 : slot.info.segments.empty()                ? "allreduce"
                                                                             : "reduce-scatter") +
                     " of bucket " + std::to_string(slot.info.index);
  std::string detail = slot.info.tensors;
  if (!slot.info.loc.empty())
    detail += (detail.empty() ? "" : "; ") + slot.info.loc;
  return detail.empty() ? text : text + " (" + detail + ")";
}

bool Collectives::Impl::readyLocked(const Slot &slot) const {
  for (int64_t started : slot.started)
    if (started != slot.done + 1)
      return false;
  return true;
}

void Collectives::Impl::failLocked(const std::string &message) {
  if (!failed) {
    failed = true;
    error = message;
    failedFlag.store(true);
  }
  cv.notify_all();
}

void Collectives::Impl::fail(const std::string &message) {
  std::lock_guard<std::mutex> lock(mu);
  failLocked(message);
}

void Collectives::Impl::start(int bucket, int replica, float *data) {
  Slot &slot = slots[positionOf(bucket)];
  checkReplica(replica);
  if (!active)
    return;
  if (!data && slot.info.elements > 0)
    throw Error(ErrorKind::Runtime, "Collectives: replica " + std::to_string(replica) +
                                        " started bucket " + std::to_string(bucket) +
                                        " without a buffer");
  bool ready;
  {
    std::lock_guard<std::mutex> lock(mu);
    if (slot.started[replica] != slot.done)
      throw Error(ErrorKind::Runtime,
                  "Collectives: replica " + std::to_string(replica) + " started bucket " +
                      std::to_string(bucket) + " again before its previous average was done");
    slot.data[replica] = data;
    ++slot.started[replica];
    ready = readyLocked(slot);
  }
  if (ready)
    group->wake();
}

void Collectives::Impl::wait(int bucket, int replica) {
  Slot &slot = slots[positionOf(bucket)];
  checkReplica(replica);
  if (!active) {
    if (failedFlag.load()) {
      std::lock_guard<std::mutex> lock(mu);
      throw Error(ErrorKind::Launch, error);
    }
    return;
  }
  const Clock::time_point begin = Clock::now();
  std::unique_lock<std::mutex> lock(mu);
  const int64_t generation = slot.started[replica];
  if (generation == 0)
    throw Error(ErrorKind::Runtime, "Collectives: replica " + std::to_string(replica) +
                                        " waits for bucket " + std::to_string(bucket) +
                                        " that it never started");
  // While blocked, this replica makes the communication thread poll its sums eagerly.
  struct Blocked {
    Impl &engine;
    bool counted = false;
    void enter() {
      if (!counted) {
        counted = true;
        ++engine.waiters;
        engine.group->wake();
      }
    }
    ~Blocked() {
      if (counted)
        --engine.waiters;
    }
  } blocked{*this};
  const bool bounded = timeoutSec > 0;
  Clock::time_point deadline = comm::after(begin, timeoutSec);
  int looks = 0;         // at the replicas of this process that never started the bucket
  uint64_t lastWork = 0; // the process's work count at the last look
  while (slot.done < generation) {
    if (failed) {
      waitSec += secondsSince(begin);
      throw Error(ErrorKind::Launch, error);
    }
    if (bounded && Clock::now() >= deadline) {
      std::string what = describe(slot) + " timed out after " + secondsText(timeoutSec) +
                         " on rank " + std::to_string(rank) + " at step " +
                         std::to_string(generation - 1) + ": ";
      std::vector<int> missing, arrived;
      for (int r = 0; r < replicas; ++r)
        (slot.started[r] < generation ? missing : arrived).push_back(r);
      if (!missing.empty()) {
        // A replica of this process that is behind but working (its kernels count in the
        // process's heartbeat) is waited for, as a rank that works is (comm::StallWatch).
        const uint64_t work = heartbeat::count();
        if (looks == 0 || work > lastWork) {
          deadline =
              comm::after(Clock::now(),
                          looks++ == 0 ? comm::StallWatch::recheckSeconds(timeoutSec) : timeoutSec);
          lastWork = work;
          continue;
        }
        failLocked(what + comm::rankList(missing, "replica") + " never started it (" +
                   comm::rankList(arrived, "replica") + (arrived.size() > 1 ? " did)" : " did)"));
        continue; // throws above
      }
      // All replicas are in: the communication thread owns the deadline of the MPI sum and
      // names the missing ranks after asking them (twice, when they answer). Follow its
      // deadline, which it moves while the ranks it waits for work, with room for its looks;
      // give up when it has not come back by then.
      const double room =
          comm::StallWatch::recheckSeconds(timeoutSec) + 2 * comm::kQueryGraceSeconds + 5;
      const Clock::time_point follow =
          comm::after(std::max(comm::after(begin, timeoutSec), commDeadline), room);
      if (follow > Clock::now()) {
        deadline = follow;
        continue;
      }
      failLocked(what + "the communication thread did not finish it");
      continue;
    }
    // A signal does not end the wait: the step finishes on every replica and rank, and the
    // training loop stops at the boundary after it, where the ranks agree on the stop.
    blocked.enter();
    // Woken by the engine, or every 100 ms to look at the deadline.
    Clock::time_point until = Clock::now() + std::chrono::milliseconds(100);
    if (bounded && deadline < until)
      until = deadline;
    cv.wait_until(lock, until);
  }
  waitSec += secondsSince(begin);
}

void Collectives::Impl::abort(const std::string &why) { fail(why); }

void Collectives::Impl::finish(Slot &slot) {
  const int64_t n = slot.info.elements;
  float *first = slot.reducing.empty() ? nullptr : slot.reducing[0];
  if (slot.info.kind == CollectiveKind::Broadcast) {
    // The root's copy, as it is (or as it came from the root's process), into every other
    // replica's.
    for (int r = 0; n > 0 && r < replicas; ++r)
      if (r != slot.source)
        std::memcpy(slot.reducing[r], slot.reducing[slot.source], n * sizeof(float));
  } else if (n > 0 && !slot.info.segments.empty()) {
    // Reduce-scattered: each replica's own segment (replica r of this process owns segment
    // rank * R + r), which the sum left in replica 0's buffer.
    const std::vector<int64_t> &s = slot.info.segments;
    const int64_t mine = static_cast<int64_t>(rank) * replicas;
    scaleInPlace(first + s[mine], 1.0f / static_cast<float>(replicas * processes),
                 s[mine + replicas] - s[mine]);
    for (int r = 1; r < replicas; ++r)
      std::memcpy(slot.reducing[r] + s[mine + r], first + s[mine + r],
                  (s[mine + r + 1] - s[mine + r]) * sizeof(float));
  } else if (n > 0) {
    scaleInPlace(first, 1.0f / static_cast<float>(replicas * processes), n);
    for (int r = 1; r < replicas; ++r)
      std::memcpy(slot.reducing[r], first, n * sizeof(float));
  }
  if (trace::enabled())
    trace::recordAsync(
        trace::Category::Collective,
        slot.info.kind == CollectiveKind::Broadcast ? "broadcast bucket" : "average bucket",
        slot.info.index,
        std::chrono::duration_cast<std::chrono::nanoseconds>(slot.readyAt.time_since_epoch())
            .count(),
        trace::now());
  std::lock_guard<std::mutex> lock(mu);
  ++slot.done;
  reduceSec += secondsSince(slot.readyAt);
  cv.notify_all();
}

Progress Collectives::Impl::progress() {
  Progress result = Progress::Idle;
  // Start the buckets whose replicas are all in, in manifest order.
  while (!slots.empty()) {
    Slot &slot = slots[cursor];
    {
      std::lock_guard<std::mutex> lock(mu);
      if (failed || slot.posted != slot.done || !readyLocked(slot))
        break;
      slot.reducing = slot.data;
    }
    ++slot.posted;
    slot.readyAt = Clock::now();
    const int64_t n = slot.info.elements;
    if (slot.info.kind == CollectiveKind::Broadcast &&
        (slot.info.group == GroupKind::Replicas || processes == 1)) {
      // Within the process: every process's root computed the same update from the same
      // mean, so nothing crosses the processes.
      finish(slot);
      cursor = (cursor + 1) % slots.size();
      result = Progress::Advanced;
      continue;
    }
    // The replicas' sum in a fixed binary tree over their indices, ((0 + 1) + (2 + 3)) + ...:
    // with a power-of-two count of replicas and micro-shards it is the tree the micro-shards'
    // sums form whatever the layout, so the same bits (docs/micro-shards.md). Partial sums go
    // to the even replicas' buffers, which finish() overwrites with the mean. (A broadcast
    // over the job sums nothing: the root's process sends its copy to every other process,
    // into replica 0's buffer there, and finish() copies it to the process's other replicas.)
    if (slot.info.kind != CollectiveKind::Broadcast)
      for (int stride = 1; stride < replicas; stride *= 2)
        for (int r = 0; r + stride < replicas; r += 2 * stride)
          addInto(slot.reducing[r], slot.reducing[r + stride], n);
    if (processes > 1) {
      try {
        if (slot.info.kind == CollectiveKind::Broadcast) {
          slot.token = group->postBroadcast(slot.reducing[slot.source], n * int64_t(sizeof(float)),
                                            slot.info.root / replicas);
        } else {
          void *data = slot.reducing[0];
          if (slot.info.wire == DType::BF16) {
            slot.wire.resize(static_cast<size_t>(n));
            toBf16(slot.reducing[0], slot.wire.data(), n);
            data = slot.wire.data();
          }
          if (slot.info.segments.empty()) {
            slot.token = group->postSum(data, n, slot.info.wire);
          } else {
            slot.token = group->postScatterSum(data, n, slot.info.wire, slot.counts);
          }
        }
      } catch (const Error &e) {
        fail(describe(slot) + ": " + e.what());
        return Progress::Advanced;
      }
      slot.deadline = comm::after(Clock::now(), timeoutSec);
      slot.watch = comm::StallWatch();
      slot.seq = group->collectiveSeq();
      inFlight.push_back(cursor);
    } else {
      finish(slot);
    }
    cursor = (cursor + 1) % slots.size();
    result = Progress::Advanced;
  }

  // Finish the sums that MPI completed; diagnose one that passed its deadline.
  for (size_t i = 0; i < inFlight.size();) {
    Slot &slot = slots[inFlight[i]];
    bool done;
    try {
      done = group->testSum(slot.token);
    } catch (const Error &e) {
      fail(describe(slot) + ": " + e.what());
      done = true;
    }
    if (done) {
      if (!failedFlag.load()) {
        if (slot.info.wire == DType::BF16)
          fromBf16(slot.wire.data(), slot.reducing[0], slot.info.elements);
        finish(slot);
      }
      inFlight.erase(inFlight.begin() + i);
      result = Progress::Advanced;
      continue;
    }
    if (timeoutSec > 0 && Clock::now() > slot.deadline) {
      comm::Diagnosis diagnosis = group->diagnose();
      if (double more = slot.watch.next(diagnosis, timeoutSec); more > 0) {
        // The ranks it waits for are working: wait on, and so do this process's replicas.
        slot.deadline = comm::after(Clock::now(), more);
        {
          std::lock_guard<std::mutex> lock(mu);
          commDeadline = slot.deadline;
        }
        result = std::max(result, Progress::Waiting);
        ++i;
        continue;
      }
      std::string message = describe(slot) + " timed out after " + secondsText(timeoutSec) +
                            " on rank " + std::to_string(rank) + " (collective #" +
                            std::to_string(slot.seq) + ", step " + std::to_string(slot.done) + ")" +
                            slot.watch.stalled() + ": " + diagnosis.text;
      for (size_t position : inFlight)
        group->abandonSum(slots[position].token);
      inFlight.clear();
      fail(message);
      return Progress::Advanced;
    }
    result = std::max(result, Progress::Waiting);
    ++i;
  }
  if (result == Progress::Waiting) {
    std::lock_guard<std::mutex> lock(mu);
    if (waiters > 0)
      result = Progress::Urgent;
  }
  return result;
}

std::string Collectives::Impl::state(int64_t &collective) {
  if (!inFlight.empty()) {
    const Slot &slot = slots[inFlight.front()];
    collective = slot.seq;
    return "waiting in " +
           std::string(slot.info.kind == CollectiveKind::Broadcast ? "broadcast" : "allreduce") +
           " of bucket " + std::to_string(slot.info.index) + ", step " + std::to_string(slot.done);
  }
  if (slots.empty())
    return "";
  std::lock_guard<std::mutex> lock(mu);
  if (failed)
    return "failed: " + error.substr(0, 200);
  const Slot &slot = slots[cursor];
  std::vector<int> missing;
  for (int r = 0; r < replicas; ++r)
    if (slot.started[r] <= slot.done)
      missing.push_back(r);
  if (missing.empty() || static_cast<int>(missing.size()) == replicas)
    return "";
  return "computing; bucket " + std::to_string(slot.info.index) + ", step " +
         std::to_string(slot.done) + " waits for " + comm::rankList(missing, "replica") +
         " to start it";
}

void Collectives::Impl::shutdown() {
  if (!active)
    return;
  group->detach(this);
  group->call([&] {
    for (size_t position : inFlight)
      group->abandonSum(slots[position].token);
    inFlight.clear();
  });
}

// ---------------------------------------------------------------------------------------------

Collectives::Collectives(ProcessGroup &group, int replicas, std::vector<BucketInfo> buckets,
                         double timeoutSec)
    : impl_(std::make_unique<Impl>(group, replicas, std::move(buckets), timeoutSec)) {
  if (impl_->active)
    impl_->group->attach(impl_.get());
}

Collectives::~Collectives() { impl_->shutdown(); }

void Collectives::start(int bucket, int replica, float *data) { impl_->start(bucket, replica, data); }

void Collectives::wait(int bucket, int replica) { impl_->wait(bucket, replica); }

void Collectives::abort(const std::string &why) { impl_->abort(why); }

double Collectives::reduceSeconds() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->reduceSec;
}

double Collectives::waitSeconds() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->waitSec;
}

} // namespace dp::rt
