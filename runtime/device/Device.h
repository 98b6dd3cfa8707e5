// The device layer: what the executor asks of a device, whatever it is. A device has memory
// (the plan's arena lives there), streams (ordered queues of work that run asynchronously to the
// host), events (points in a stream that other streams and the host can wait for), and step
// capture (the work a step enqueues, recorded once as a graph and replayed each step). Backends
// implement these for their hardware and register with the BackendRegistry; the executor
// (core/) knows no backend and picks the one the plan was compiled for.
//
// Semantics follow CUDA's, so that a GPU backend maps them one to one:
//  * Work on one stream runs in the order it was enqueued. Work on different streams is
//    ordered only by events: wait(e) on stream B makes B's later work wait for the work that
//    was enqueued on e's stream before the latest record(e) the host issued before the wait.
//  * A failure on a stream is sticky: the stream skips its later work (still completing the
//    events it records, marked failed, so no waiter hangs), a stream that waits for a failed
//    event fails too, and synchronize() rethrows the first error.
//  * Between beginCapture() and endCapture(), work enqueued on the captured streams is recorded
//    instead of run. launch(graph, ctx) enqueues all of it again, in the captured order, with
//    `ctx` as the context of its kernels; events recorded and waited for inside the graph
//    order its streams against each other exactly as they did when captured.
#pragma once

#include "runtime/device/Collectives.h"
#include "runtime/device/Kernel.h"
#include "runtime/format/Enums.h"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace dp::rt {

/// A point in a stream's work that other streams and the host can wait for.
class Event {
public:
  virtual ~Event() = default;
  /// Blocks the host until the work before the latest record of this event has run. Throws
  /// the error of the stream if that work failed.
  virtual void synchronize() = 0;
};

/// An ordered queue of work on one device.
class Stream {
public:
  virtual ~Stream() = default;
  virtual const std::string &name() const = 0;

  /// Runs `kernel` with `ctx` after everything enqueued before it.
  virtual void launch(Kernel &kernel, const StepContext &ctx) = 0;
  /// Runs `fn` on the host after everything enqueued before it, in the stream's order (CUDA:
  /// a host function). `fn` may throw: the stream fails with its error.
  virtual void host(std::function<void()> fn) = 0;
  /// Copies `bytes` from `src` to `dst` in the stream's order; either may be device memory or
  /// host memory from Device::allocateHost (CUDA: cudaMemcpyAsync with cudaMemcpyDefault).
  virtual void copy(void *dst, const void *src, size_t bytes) = 0;
  /// Marks this point of the stream in `event`.
  virtual void record(Event &event) = 0;
  /// Makes the stream's later work wait for the latest record of `event`.
  virtual void wait(Event &event) = 0;
  /// Blocks the host until everything enqueued so far has run; rethrows the stream's first
  /// error. Not allowed while the stream is being captured.
  virtual void synchronize() = 0;
};

/// Recorded work of one or more streams of a device, replayed with Device::launch.
class Graph {
public:
  virtual ~Graph() = default;
  /// Operations recorded, over all streams.
  virtual size_t size() const = 0;
};

/// Device memory that is released when this goes away.
class DeviceMemory {
public:
  DeviceMemory() = default;
  DeviceMemory(void *data, size_t bytes, std::function<void(void *)> release)
      : data_(data), bytes_(bytes), release_(std::move(release)) {}
  ~DeviceMemory() { reset(); }
  DeviceMemory(DeviceMemory &&o) noexcept { *this = std::move(o); }
  DeviceMemory &operator=(DeviceMemory &&o) noexcept {
    if (this != &o) {
      reset();
      data_ = o.data_, bytes_ = o.bytes_, release_ = std::move(o.release_);
      o.data_ = nullptr, o.bytes_ = 0;
    }
    return *this;
  }
  DeviceMemory(const DeviceMemory &) = delete;
  DeviceMemory &operator=(const DeviceMemory &) = delete;

  void *data() const { return data_; }
  size_t bytes() const { return bytes_; }
  void reset() {
    if (data_ && release_)
      release_(data_);
    data_ = nullptr, bytes_ = 0;
  }

private:
  void *data_ = nullptr;
  size_t bytes_ = 0;
  std::function<void(void *)> release_;
};

/// One device of this process: a replica of the plan runs on it.
class Device {
public:
  virtual ~Device() = default;
  virtual DeviceKind kind() const = 0;
  /// Its index among the devices of this process.
  virtual int ordinal() const = 0;
  /// For messages: "cpu:1 (cores 1)", "cuda:0 (NVIDIA H100, 80 GB)".
  virtual std::string describe() const = 0;
  /// True when device memory is plain host memory the host may read and write directly (the
  /// CPU); false when only copies reach it (a GPU).
  virtual bool hostAccessible() const = 0;
  /// Host cores its compute keeps busy: its thread count on the CPU, 0 for a device that
  /// computes on its own (a GPU). What is left of the process's cores may gather input.
  virtual int hostCores() const { return 0; }

  /// `bytes` of device memory, zeroed and 64-byte aligned. Throws Error(Memory) naming the
  /// device when it cannot.
  virtual DeviceMemory allocate(size_t bytes) = 0;
  /// `bytes` of host memory the device copies from and to fastest (CUDA: pinned).
  virtual DeviceMemory allocateHost(size_t bytes) = 0;

  /// A new stream; `name` says what it is for in messages ("compute", "collectives").
  virtual std::unique_ptr<Stream> createStream(const std::string &name) = 0;
  virtual std::unique_ptr<Event> createEvent() = 0;

  /// Starts recording the work enqueued on `streams` (streams of this device) instead of
  /// running it.
  virtual void beginCapture(const std::vector<Stream *> &streams) = 0;
  /// Stops recording and returns what was recorded.
  virtual std::unique_ptr<Graph> endCapture() = 0;
  /// Enqueues the work of `graph` on the streams it was captured from, its kernels run with
  /// `ctx`.
  virtual void launch(Graph &graph, const StepContext &ctx) = 0;

  /// Called once, with the message, when work on one of the device's streams first fails (from
  /// the thread that saw it), so that peers blocked on this device can be released.
  virtual void setFailureHandler(std::function<void(const std::string &)> handler) = 0;
};

/// A kind of device and its kernels: the CPU on oneDNN, NVIDIA GPUs on CUDA.
class Backend {
public:
  virtual ~Backend() = default;
  virtual DeviceKind kind() const = 0;
  /// "cpu (oneDNN 2.6.3, 2 cores)".
  virtual std::string describe() const = 0;
  /// Opens `count` devices for the replicas of this process. Throws Error(Launch) when the
  /// machine has fewer.
  virtual std::vector<std::unique_ptr<Device>> openDevices(int count) = 0;
  /// Checks that `bytes` of device memory on each of `count` devices fit what the machine
  /// can give this process, before anything is allocated; throws Error(Memory) naming both
  /// numbers and what set the limit. `what` names the memory ("the plan's arena").
  virtual void checkMemory(uint64_t bytes, int count, const std::string &what) = 0;
  /// Validates one kernel of the plan and creates its implementation on `device`, bound to
  /// the buffers `site` names. Throws Error(Plan) for an inconsistent kernel.
  virtual std::unique_ptr<Kernel> makeKernel(Device &device, const KernelSite &site) = 0;
  /// Caps the threads this process computes with on the host, over all its devices (0: the
  /// backend's own choice). Takes effect for the devices opened and kernels made after it.
  virtual void setComputeThreads(int threads) { (void)threads; }
  /// dprun --reproducible: kernels made from now on give the same bits whatever the thread
  /// count (CPU: ChunkedSum). Throws Error(Usage) on a backend that cannot.
  virtual void setReproducible(bool on) {
    if (on)
      throw Error(ErrorKind::Usage,
                  "--reproducible: the " + describe() +
                      " backend's kernels and collectives do not sum in a fixed order yet; "
                      "it holds for CPU plans");
  }
  /// The collectives engine of `setup.devices` (opened by this backend), where the backend has
  /// its own: NCCL on GPUs. Null (the default): the runtime's MPI engine averages the buckets
  /// in host memory, which needs devices the host can address. Throws Error(Launch) when the
  /// engine cannot be set up.
  virtual std::unique_ptr<CollectiveEngine> makeCollectives(const CollectivesSetup &setup) {
    return nullptr;
  }
};

/// The backends this build has, by the device kind they run.
class BackendRegistry {
public:
  /// Adds `backend`, replacing one of the same kind.
  static void add(std::unique_ptr<Backend> backend);
  /// The backend for `kind`, or null.
  static Backend *find(DeviceKind kind);
  /// The backend for `kind`; throws Error(Plan) saying which kinds this build runs.
  static Backend &get(DeviceKind kind);
  /// Every registered backend.
  static std::vector<Backend *> all();
};

} // namespace dp::rt
