// What a collectives engine is to the executor and to the backend that may provide one: the
// engine interface the executor calls from its collective kernels, the buckets of a plan's
// manifest, and the processes of the job as an engine sees them (HostGroup, which the process
// group implements). A backend with its own engine (NCCL on GPUs) makes it through
// Backend::makeCollectives from these alone, so it depends on nothing above the device layer.
#pragma once

#include "runtime/device/Kernel.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace dp::rt {

class Device;
class Stream;

/// One entry of a plan's collective manifest: what is done to a bucket (today an averaged
/// allreduce of gradients over the world, or a parameter server's exchange), and with whom.
struct BucketInfo {
  int index = 0;
  CollectiveKind kind = CollectiveKind::AllReduceMean;
  GroupKind group = GroupKind::World;
  int groupId = -1;     // which group of the kind (a server's index), else -1
  int root = -1;        // a broadcast's replica, whose copy the others receive; else -1
  int64_t elements = 0; // f32 elements
  /// How the bucket crosses the processes: F32, or BF16 (rounded before the sum across
  /// processes, which adds in f32 and rounds each partial sum; the replicas of a process are
  /// summed in f32 first, and the mean is f32 again).
  DType wire = DType::F32;
  /// A reduce-scattered allreduce (sharded optimizer state): where each owner's gradients
  /// begin, in elements, and the end (CollectiveDesc::segments); owner o, replica o % R of
  /// process o / R, alone needs elements segments[o] to segments[o + 1] averaged. Empty:
  /// every replica needs every mean.
  std::vector<int64_t> segments;
  std::string tensors; // "dense1.kernel, dense1.bias"
  std::string loc;     // source location of the collective
};

/// The processes of the job, as a collectives engine sees them: its rank, how many there are,
/// a broadcast and a gather over the host network (MPI), and the end of the whole job.
/// runtime/comm's ProcessGroup implements it.
class HostGroup {
public:
  virtual ~HostGroup() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  /// Copies `bytes` at `data` from `root` to every rank, within `timeoutSec`.
  virtual void broadcast(void *data, size_t bytes, int root, double timeoutSec) = 0;
  /// Every rank's `x`, in rank order, on every rank, within `timeoutSec`.
  virtual std::vector<double> gatherDoubles(double x, double timeoutSec) = 0;
  /// Ends every process of the job with `message` and `exitCode`.
  [[noreturn]] virtual void abortJob(const std::string &message, int exitCode) = 0;
};

/// One replica's buffers of a collective: what it sends and where its result lands (the same
/// buffer for an in-place allreduce), their element type and count.
struct CollectiveBuffers {
  const void *send = nullptr;
  void *receive = nullptr;
  DType dtype = DType::F32;
  int64_t elements = 0;
  bool inPlace() const { return send == receive; }
};

/// Throws Error(Plan) unless every bucket is of `kind` over `group`: what `engine` runs.
inline void requireCollectives(const std::vector<BucketInfo> &buckets, CollectiveKind kind,
                               GroupKind group, const std::string &engine) {
  for (const BucketInfo &b : buckets)
    if (b.kind != kind || b.group != group)
      throw Error(ErrorKind::Plan,
                  "bucket " + std::to_string(b.index) + " is " + collectiveKindName(b.kind) +
                      " over " + groupName(b.group, b.groupId) + ", but " + engine + " runs " +
                      collectiveKindName(kind) + " over " + groupName(group, -1) + " only");
}

/// What the collective kernels of a plan call: start a replica's part of a bucket's collective
/// (today: averaging its copy of the bucket), and wait for the result, in the plan's order.
/// Implemented over the runtime's MPI engine (runtime/comm) for devices the host can address, or by
/// a backend (Backend::makeCollectives: NCCL on GPUs).
class CollectiveEngine {
public:
  /// Which stream of a device the engine's calls are made from.
  enum class Placement {
    /// The compute stream: start() only hands the bucket to the engine's own progress thread
    /// and returns, so a stream of its own would only add a hand-off between threads (the
    /// runtime's MPI engine).
    Compute,
    /// The collectives stream, ordered against the compute stream by events: an engine whose
    /// calls do the transfer or enqueue device work (NCCL on a GPU).
    Collectives,
  };
  virtual ~CollectiveEngine() = default;
  virtual Placement placement() const { return Placement::Compute; }
  /// An engine whose collectives are device work (NCCL) returns, once per bucket and replica
  /// when it is attached, the kernel that runs `bucket`'s collective on replica `replica`'s
  /// `buffers` (the allreduce: their mean in `buffers.receive`). The executor launches it on the
  /// collectives stream after an event from the compute stream (the bucket is written) and makes
  /// the compute stream wait for it at the bucket's allreduce_wait; start() and wait() are then
  /// never called. Null (the default): start() and wait() are called from host functions of
  /// placement()'s stream.
  virtual std::unique_ptr<Kernel> collectiveKernel(int bucket, int replica,
                                                   const CollectiveBuffers &buffers) {
    return nullptr;
  }
  /// Called after a train step was enqueued on `replica`'s compute stream, with that stream:
  /// an engine that watches its device work for hangs records the step's progress there.
  virtual void stepEnqueued(int replica, Stream &compute, const StepContext &ctx) {}
  virtual void start(int bucket, int replica, const CollectiveBuffers &buffers) = 0;
  virtual void wait(int bucket, int replica) = 0;
  /// Releases every replica waiting in wait() with an error: replica work failed and they
  /// would wait for it forever.
  virtual void abort(const std::string &why) = 0;
};

/// What a backend needs to make the collectives engine of a process's devices.
struct CollectivesSetup {
  /// This process's devices, replica r on devices[r], opened by the backend.
  std::vector<Device *> devices;
  HostGroup *group = nullptr;
  /// The plan's manifest, in order.
  std::vector<BucketInfo> buckets;
  /// Seconds a collective may take before the job ends (0: no limit).
  double timeoutSec = 0;
};

} // namespace dp::rt
