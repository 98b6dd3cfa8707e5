// The NCCL collectives engine; see NcclEngine.h.
#include "runtime/backends/cuda/NcclEngine.h"

#include "runtime/backends/cuda/Internal.h"
#include "runtime/backends/cuda/Libraries.h"
#include "runtime/backends/cuda/StepWatch.h"
#include "runtime/base/Error.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <thread>

namespace dp::rt::cuda {
namespace {

using Clock = std::chrono::steady_clock;

/// Events per replica that mark the end of a watched step (the trainer runs at most two
/// steps ahead of the one it reads).
constexpr int kWatchSlots = 8;
/// How often the watchdog looks.
constexpr auto kWatchPeriod = std::chrono::milliseconds(20);

class NcclEngine final : public CollectiveEngine {
public:
  explicit NcclEngine(const CollectivesSetup &setup)
      : api_(nccl()), group_(*setup.group), buckets_(setup.buckets), timeout_(setup.timeoutSec),
        replicas_(static_cast<int>(setup.devices.size())), watch_(replicas_, kWatchSlots),
        began_(Clock::now()) {
    // Allreduces over the job, and broadcasts over the job's communicator: from replica
    // p * R + r of the job (group World), or from replica r of a one-process job (group
    // Replicas; the engine has no communicator of a process alone).
    for (const BucketInfo &b : buckets_) {
      const int members = replicas_ * group_.size();
      // A reduce-scattered one has an offset per owner of the job and the end (the loader
      // checked their order).
      const bool allreduce = b.kind == CollectiveKind::AllReduceMean &&
                             b.group == GroupKind::World &&
                             (b.segments.empty() || int64_t(b.segments.size()) == members + 1);
      const bool broadcast =
          b.kind == CollectiveKind::Broadcast &&
          (b.group == GroupKind::World || (b.group == GroupKind::Replicas && group_.size() == 1));
      if (!(allreduce || (broadcast && b.root >= 0 && b.root < members)))
        throw Error(ErrorKind::Plan,
                    "bucket " + std::to_string(b.index) + " is " + collectiveKindName(b.kind) +
                        (b.kind == CollectiveKind::Broadcast
                             ? " from replica " + std::to_string(b.root)
                             : std::string()) +
                        " over " + groupName(b.group, b.groupId) + " in a job of " +
                        std::to_string(group_.size()) + " process(es) x " +
                        std::to_string(replicas_) + " replica(s)" +
                        (b.segments.empty()
                             ? std::string()
                             : " (reduce-scattered over " +
                                   std::to_string(int64_t(b.segments.size()) - 1) + " owners)") +
                        ": the NCCL engine runs allreduces over the job and "
                        "broadcasts over the job (or the replicas of a job of one process)");
    }
    for (Device *device : setup.devices)
      ordinals_.push_back(nativeOrdinal(*device));
    events_.resize(replicas_);
    for (int r = 0; r < replicas_; ++r) {
      check(cudaSetDevice(ordinals_[r]), "cudaSetDevice", ErrorKind::Launch);
      for (cudaEvent_t &event : events_[r].slots)
        check(cudaEventCreateWithFlags(&event, cudaEventDisableTiming), "cudaEventCreate");
    }
    watchdog_ = std::thread([this] { watch(); });
    try {
      setUp();
      warmUp();
    } catch (...) {
      stopWatchdog();
      releaseCommunicators(true);
      destroyEvents();
      throw;
    }
    std::lock_guard<std::mutex> lock(mutex_);
    ready_ = true;
  }

  ~NcclEngine() override {
    stopWatchdog();
    releaseCommunicators(aborted_);
    destroyEvents();
  }

  Placement placement() const override { return Placement::Collectives; }

  std::unique_ptr<Kernel> collectiveKernel(int bucket, int replica,
                                           const CollectiveBuffers &buffers) override {
    const BucketInfo &info = bucketInfo(bucket);
    if (buffers.dtype != DType::F32 || buffers.elements != info.elements)
      throw Error(ErrorKind::Plan, "the NCCL engine exchanges f32 buckets; bucket " +
                                       std::to_string(bucket) + " on replica " +
                                       std::to_string(replica) + " is not the manifest's");
    return std::make_unique<Exchange>(*this, replica, buffers, info);
  }

  void stepEnqueued(int replica, Stream &compute, const StepContext &ctx) override {
    std::lock_guard<std::mutex> lock(mutex_);
    const int slot = watch_.enqueued(replica, ctx.step, now());
    if (slot >= 0)
      check(cudaEventRecord(events_[replica].slots[slot], nativeStream(compute)),
            "cudaEventRecord (step watch)");
  }

  void start(int bucket, int, const CollectiveBuffers &) override { misuse("start", bucket); }
  void wait(int bucket, int) override { misuse("wait", bucket); }

  /// A replica failed: the communicators are aborted so that the other ranks' collectives
  /// fail instead of waiting (on a thread of its own: an abort may wait for the device).
  void abort(const std::string &why) override {
    std::lock_guard<std::mutex> lock(mutex_);
    abortLocked(why);
  }

private:
  struct Events {
    cudaEvent_t slots[kWatchSlots] = {};
  };

  /// One replica's part of a bucket's collective, on the stream it is launched (captured) on:
  /// ncclAllReduce(ncclAvg) from its send to its receive buffer (the same one in place), or,
  /// for a broadcast bucket (sharded optimizer state), ncclBroadcast in place from the root's
  /// copy (call()).
  class Exchange final : public Kernel {
  public:
    Exchange(NcclEngine &engine, int replica, const CollectiveBuffers &buffers,
             const BucketInfo &info)
        : engine_(engine), replica_(replica), buffers_(buffers), info_(info) {}
    void run(const StepContext &) override {
      ncclComm_t comm = nullptr;
      std::string aborted;
      {
        std::lock_guard<std::mutex> lock(engine_.mutex_);
        comm = engine_.comms_.empty() ? nullptr : engine_.comms_.at(replica_);
        aborted = engine_.abortReason_;
      }
      if (!comm)
        throw Error(ErrorKind::Launch,
                    engine_.describe(info_) + ": the NCCL engine was aborted: " + aborted);
      const ncclResult_t rc =
          engine_.call(info_, replica_, buffers_.send, buffers_.receive, comm, launchStream());
      if (rc != ncclSuccess)
        throw Error(ErrorKind::Launch, engine_.describe(info_) + " on replica " +
                                           std::to_string(replica_) + ": " +
                                           engine_.api_.errorString(rc));
    }

  private:
    NcclEngine &engine_;
    int replica_;
    CollectiveBuffers buffers_;
    const BucketInfo &info_;
  };

  double now() const { return std::chrono::duration<double>(Clock::now() - began_).count(); }

  const BucketInfo &bucketInfo(int bucket) const {
    for (const BucketInfo &b : buckets_)
      if (b.index == bucket)
        return b;
    throw Error(ErrorKind::Plan,
                "bucket " + std::to_string(bucket) + " is not in the plan's collective manifest");
  }

  /// "allreduce of bucket 1 (dense1.kernel, dense1.bias; mlp.mlir:12:8)".
  std::string describe(const BucketInfo &b) const {
    return std::string(b.kind == CollectiveKind::Broadcast ? "broadcast"
                       : b.segments.empty()                ? "allreduce"
                                                           : "reduce-scatter") +
           " of bucket " + std::to_string(b.index) + " (" + b.tensors +
           (b.loc.empty() ? "" : "; " + b.loc) + ")";
  }

  /// The bucket's collective on replica `replica`'s communicator, enqueued on `stream`. A
  /// broadcast's root is the NCCL rank of replica p * R + r of the job (group World); over the
  /// replicas of a one-process job (group Replicas) its root replica is that rank too.
  ///
  /// A reduce-scattered bucket (sharded optimizer state: segments) leaves each owner its own
  /// segment's mean (owner o is NCCL rank o): with equal segments one ncclReduceScatter, else
  /// one ncclReduce to each owner of a segment, in one group (NCCL's reduce-scatter takes equal
  /// counts only).
  ncclResult_t call(const BucketInfo &b, int replica, const void *send, void *receive,
                    ncclComm_t comm, cudaStream_t stream) const {
    const size_t count = static_cast<size_t>(b.elements);
    if (b.kind == CollectiveKind::Broadcast)
      return api_.broadcast(send, receive, count, ncclFloat, b.root, comm, stream);
    if (b.segments.size() < 2)
      return api_.allReduce(send, receive, count, ncclFloat, ncclAvg, comm, stream);
    const std::vector<int64_t> &s = b.segments;
    const int owners = static_cast<int>(s.size()) - 1;
    const int owner = group_.rank() * replicas_ + replica;
    const auto *from = static_cast<const float *>(send);
    auto *to = static_cast<float *>(receive);
    bool equal = true;
    for (int o = 0; o < owners; ++o)
      equal = equal && s[o + 1] - s[o] == s[1] - s[0];
    if (equal)
      return s[1] == 0 ? ncclSuccess
                       : api_.reduceScatter(from, to + s[owner], static_cast<size_t>(s[1]),
                                            ncclFloat, ncclAvg, comm, stream);
    ncclResult_t rc = api_.groupStart();
    for (int o = 0; o < owners && rc == ncclSuccess; ++o)
      if (s[o + 1] > s[o])
        rc = api_.reduce(from + s[o], to + s[o], static_cast<size_t>(s[o + 1] - s[o]), ncclFloat,
                         ncclAvg, o, comm, stream);
    const ncclResult_t end = api_.groupEnd();
    return rc == ncclSuccess ? end : rc;
  }

  [[noreturn]] void misuse(const char *call, int bucket) const {
    throw Error(ErrorKind::Runtime, std::string("the NCCL engine's ") + call +
                                        "() was called for bucket " + std::to_string(bucket) +
                                        ": its buckets are exchanged by kernels on the device");
  }

  /// The unique id from rank 0, then this process's communicators in one group.
  void setUp() {
    ncclUniqueId id{};
    if (group_.rank() == 0) {
      const ncclResult_t rc = api_.uniqueId(&id);
      if (rc != ncclSuccess)
        throw Error(ErrorKind::Launch, std::string("ncclGetUniqueId: ") + api_.errorString(rc));
    }
    group_.broadcast(&id, sizeof(id), 0, timeout_ > 0 ? timeout_ : 1e9);
    const int ranks = replicas_ * group_.size();
    // One thread drives this process's R communicators, and each step's collectives are
    // captured per device, outside any group: connections made lazily at a first collective
    // could wait for a communicator this thread has not reached. Connect them all at setup
    // (unless the user chose otherwise).
    if (replicas_ > 1)
      setenv("NCCL_RUNTIME_CONNECT", "0", 0);
    comms_.assign(replicas_, nullptr);
    ncclResult_t rc = api_.groupStart();
    for (int r = 0; r < replicas_ && rc == ncclSuccess; ++r) {
      check(cudaSetDevice(ordinals_[r]), "cudaSetDevice", ErrorKind::Launch);
      rc = api_.initRank(&comms_[r], ranks, id, group_.rank() * replicas_ + r);
    }
    const ncclResult_t end = api_.groupEnd();
    if (rc == ncclSuccess)
      rc = end;
    if (rc != ncclSuccess)
      throw Error(ErrorKind::Launch,
                  "setting up NCCL (" + std::to_string(ranks) + " ranks, this process's first is " +
                      std::to_string(group_.rank() * replicas_) + "): " + api_.errorString(rc));
  }

  /// Each bucket's collective (an allreduce, a broadcast) over every communicator, in one group
  /// and eagerly, before any is captured: whatever NCCL sets up at a first call happens here, where
  /// the calls are grouped and the watchdog bounds them, not inside a capture.
  void warmUp() {
    int64_t largest = 1;
    for (const BucketInfo &b : buckets_)
      largest = std::max(largest, b.elements);
    std::vector<float *> buffers(replicas_, nullptr);
    std::vector<cudaStream_t> streams(replicas_, nullptr);
    cudaError_t status = cudaSuccess;
    for (int r = 0; r < replicas_ && status == cudaSuccess; ++r) {
      status = cudaSetDevice(ordinals_[r]);
      if (status == cudaSuccess)
        status = cudaMalloc(&buffers[r], size_t(largest) * sizeof(float));
      if (status == cudaSuccess)
        status = cudaMemset(buffers[r], 0, size_t(largest) * sizeof(float));
      if (status == cudaSuccess)
        status = cudaStreamCreateWithFlags(&streams[r], cudaStreamNonBlocking);
    }
    ncclResult_t rc = ncclSuccess;
    for (const BucketInfo &b : buckets_) {
      if (status != cudaSuccess || rc != ncclSuccess)
        break;
      rc = api_.groupStart();
      for (int r = 0; r < replicas_ && rc == ncclSuccess; ++r)
        rc = call(b, r, buffers[r], buffers[r], comms_[r], streams[r]);
      const ncclResult_t end = api_.groupEnd();
      rc = rc == ncclSuccess ? end : rc;
    }
    for (int r = 0; r < replicas_; ++r) {
      cudaSetDevice(ordinals_[r]);
      if (streams[r]) {
        const cudaError_t synced = cudaStreamSynchronize(streams[r]);
        status = status == cudaSuccess ? synced : status;
        cudaStreamDestroy(streams[r]);
      }
      if (buffers[r])
        cudaFree(buffers[r]);
    }
    check(status, "warming up NCCL", ErrorKind::Launch);
    if (rc != ncclSuccess)
      throw Error(ErrorKind::Launch, std::string("warming up NCCL: ") + api_.errorString(rc));
  }

  /// Destroys (or, after a failure, aborts) the communicators, grouped: one thread finalising
  /// several ranks must group the calls.
  void releaseCommunicators(bool abort) {
    std::vector<ncclComm_t> comms;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      comms.swap(comms_);
    }
    api_.groupStart();
    for (ncclComm_t comm : comms)
      if (comm)
        abort ? api_.abort(comm) : api_.destroy(comm);
    api_.groupEnd();
  }

  void destroyEvents() {
    for (Events &e : events_)
      for (cudaEvent_t &event : e.slots)
        if (event) {
          cudaEventDestroy(event);
          event = nullptr;
        }
  }

  void stopWatchdog() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopping_ = true;
    }
    wake_.notify_all();
    if (watchdog_.joinable())
      watchdog_.join();
  }

  /// Marks the engine aborted and aborts its communicators, grouped, on a thread of its own:
  /// an abort may wait for the device, and whoever calls this (the watchdog, a failing
  /// replica) must go on to end the job.
  void abortLocked(const std::string &why) {
    if (aborted_)
      return;
    aborted_ = true;
    abortReason_ = why;
    std::vector<ncclComm_t> comms(comms_.size(), nullptr);
    comms.swap(comms_);
    const NcclApi &api = api_;
    std::thread([comms, &api] {
      api.groupStart();
      for (ncclComm_t comm : comms)
        if (comm)
          api.abort(comm);
      api.groupEnd();
    }).detach();
  }

  /// The watchdog: setup bounded, asynchronous errors polled, every step watched.
  void watch() {
    // The events and communicators it polls are this process's devices': without this the
    // thread's first CUDA call would make a context on GPU 0 of every process.
    cudaSetDevice(ordinals_.empty() ? 0 : ordinals_[0]);
    std::unique_lock<std::mutex> lock(mutex_);
    while (!stopping_) {
      wake_.wait_for(lock, kWatchPeriod);
      if (stopping_ || aborted_)
        continue;
      std::string failure;
      if (!ready_) {
        if (timeout_ > 0 && now() > timeout_)
          failure = "setting up NCCL (the communicators and a first collective of each "
                    "bucket) did not finish within " +
                    seconds(timeout_) + ": a rank of the job never joined";
      } else {
        failure = pollLocked();
      }
      if (failure.empty())
        continue;
      // Communicators still being created or warmed up by the main thread are left to the
      // job's end.
      if (ready_)
        abortLocked(failure);
      else
        aborted_ = true, abortReason_ = failure;
      lock.unlock();
      endJob(failure);
    }
  }

  /// An NCCL error, a failed step or an overdue step, described; empty when all is well.
  std::string pollLocked() {
    for (int r = 0; r < replicas_; ++r) {
      ncclResult_t async = ncclSuccess;
      if (comms_[r] && api_.asyncError(comms_[r], &async) == ncclSuccess && async != ncclSuccess &&
          async != ncclInProgress)
        return "NCCL reports an error on replica " + std::to_string(r) + " (GPU " +
               std::to_string(ordinals_[r]) + "): " + api_.errorString(async);
    }
    for (int r = 0; r < replicas_; ++r)
      while (const StepWatch::Pending *p = watch_.oldest(r)) {
        const cudaError_t status = cudaEventQuery(events_[r].slots[p->slot]);
        if (status == cudaErrorNotReady)
          break;
        if (status != cudaSuccess)
          return "train step " + std::to_string(p->step) + " failed on replica " +
                 std::to_string(r) + ": " + cudaGetErrorName(status) + ": " +
                 cudaGetErrorString(status);
        watch_.finished(r, now());
      }
    if (auto late = watch_.overdue(now(), timeout_)) {
      std::string buckets;
      for (const BucketInfo &b : buckets_)
        buckets += "\n  " + describe(b);
      return "train step " + std::to_string(late->step) + " on replica " +
             std::to_string(late->replica) + " has not finished after " + seconds(late->seconds) +
             " (collective timeout " + seconds(timeout_) +
             "): one of its collectives waits for a rank that never joined it:" + buckets;
    }
    return {};
  }

  static std::string seconds(double s) {
    char text[32];
    std::snprintf(text, sizeof(text), "%.3g s", s);
    return text;
  }

  /// Ends the job after `failure`, with what the other ranks say: the last step each finished,
  /// or which of them did not answer.
  [[noreturn]] void endJob(const std::string &failure) {
    std::string peers;
    try {
      const double wait = timeout_ > 0 && timeout_ < 5 ? timeout_ : 5;
      std::vector<double> steps;
      {
        std::lock_guard<std::mutex> lock(mutex_);
        steps.push_back(static_cast<double>(watch_.lastFinished()));
      }
      const std::vector<double> all = group_.gatherDoubles(steps[0], wait);
      peers = "\nthe last train step each rank finished:";
      for (size_t r = 0; r < all.size(); ++r)
        peers += " rank " + std::to_string(r) + ": " + std::to_string(int64_t(all[r])) +
                 (r + 1 < all.size() ? "," : "");
    } catch (const Error &e) {
      peers = std::string("\n") + e.what();
    }
    group_.abortJob(failure + peers, static_cast<int>(ErrorKind::Launch));
    std::abort(); // abortJob does not return
  }

  const NcclApi &api_;
  HostGroup &group_;
  std::vector<BucketInfo> buckets_;
  double timeout_;
  int replicas_;
  std::vector<int> ordinals_;
  std::vector<ncclComm_t> comms_;
  std::vector<Events> events_;

  std::mutex mutex_;
  std::condition_variable wake_;
  StepWatch watch_;
  Clock::time_point began_;
  bool ready_ = false, stopping_ = false, aborted_ = false;
  std::string abortReason_;
  std::thread watchdog_;
};

} // namespace

std::unique_ptr<CollectiveEngine> makeNcclEngine(const CollectivesSetup &setup) {
  return std::make_unique<NcclEngine>(setup);
}

} // namespace dp::rt::cuda
