// Streams, events and step graphs on host threads: the device layer's semantics (Device.h)
// implemented for devices whose memory is host memory. Each stream is a thread that runs its
// queue in order; an event is a counter of records enqueued and records completed; a graph is
// the work captured from a set of streams, replayed as one queue entry per stream. The CPU
// backend's devices are HostDevices, and the executor's ordering, overlap and replay are tested
// through them without a GPU.
#pragma once

#include "runtime/device/Device.h"

#include <condition_variable>
#include <exception>
#include <map>
#include <mutex>
#include <set>
#include <thread>

namespace dp::rt {

class HostDevice;
class HostGraph;

/// An event of a HostDevice: the host counts the records it enqueues, streams count the
/// records they complete; a wait enqueued after the n-th record waits for completion n.
class HostEvent final : public Event {
public:
  void synchronize() override;

  /// The number of the record being enqueued now (host thread).
  uint64_t nextRecord();
  /// The number of the latest record enqueued so far (host thread).
  uint64_t latestRecord();
  /// Marks record `n` complete; `failure` is set when the work before it failed.
  void complete(uint64_t n, std::exception_ptr failure);
  /// Blocks until record `n` is complete; returns the failure of the work before it, if any.
  std::exception_ptr waitFor(uint64_t n);

private:
  bool completeLocked(uint64_t n) const { return n <= done_ || early_.count(n) > 0; }

  std::mutex mutex_;
  std::condition_variable completed_;
  uint64_t recorded_ = 0;
  /// Every record up to done_ is complete; early_ holds those above it that completed first
  /// (an event recorded on several streams completes out of order).
  uint64_t done_ = 0;
  std::set<uint64_t> early_;
  /// The records whose work failed.
  std::map<uint64_t, std::exception_ptr> failures_;
};

/// One unit of stream work: a kernel call, a host function, a copy, an event record or wait,
/// or a stream's share of a graph launch.
struct HostWork {
  enum class Kind : uint8_t { Kernel, Host, Copy, Record, Wait, Graph };
  Kind kind = Kind::Host;
  Kernel *kernel = nullptr;
  StepContext ctx;
  std::function<void()> fn;
  void *dst = nullptr;
  const void *src = nullptr;
  size_t bytes = 0;
  HostEvent *event = nullptr;
  /// Record/Wait: the record number (live work), or the index of the event operation in its
  /// graph (captured work), whose number is bound at each launch.
  uint64_t record = 0;
  /// Graph: the launch, and which of its streams this is.
  struct HostGraphLaunch *launch = nullptr;
  int lane = 0;
};

/// A stream of a HostDevice: a thread running its queue in order.
class HostStream final : public Stream {
public:
  /// `threadStart` runs first on the stream's thread (pinning, thread counts).
  HostStream(HostDevice &device, std::string name, const std::function<void()> &threadStart);
  /// Runs what is queued, then stops the thread.
  ~HostStream() override;

  const std::string &name() const override { return name_; }
  void launch(Kernel &kernel, const StepContext &ctx) override;
  void host(std::function<void()> fn) override;
  void copy(void *dst, const void *src, size_t bytes) override;
  void record(Event &event) override;
  void wait(Event &event) override;
  void synchronize() override;

private:
  friend class HostDevice;
  void enqueue(HostWork work);
  void loop();
  void execute(const HostWork &work);
  /// Runs one operation with the record numbers and context it was bound to.
  void runOne(const HostWork &work, const StepContext &ctx, uint64_t record);
  void fail(std::exception_ptr error);

  HostDevice &device_;
  std::string name_;
  std::mutex mutex_;
  std::condition_variable wake_, idle_;
  /// A ring of queued work, grown (never shrunk) when full: enqueueing a step allocates
  /// nothing once the ring is large enough.
  std::vector<HostWork> ring_;
  size_t head_ = 0, count_ = 0;
  uint64_t enqueued_ = 0, done_ = 0;
  bool stop_ = false;
  bool running_ = false; // the thread has started (named itself, run threadStart)
  /// The first failure; later work is skipped (stream thread, read under mutex_ by the host).
  std::exception_ptr failure_;
  /// While captured: the graph being recorded and this stream's lane in it (host thread).
  HostGraph *capture_ = nullptr;
  int lane_ = 0;
  std::thread thread_;
};

/// A device whose streams, events and graphs are HostStreams, HostEvents and HostGraphs;
/// subclasses say what its memory is and how its stream threads start.
class HostDevice : public Device {
public:
  HostDevice();
  ~HostDevice() override;

  std::unique_ptr<Stream> createStream(const std::string &name) override;
  std::unique_ptr<Event> createEvent() override;
  void beginCapture(const std::vector<Stream *> &streams) override;
  std::unique_ptr<Graph> endCapture() override;
  void launch(Graph &graph, const StepContext &ctx) override;
  void setFailureHandler(std::function<void(const std::string &)> handler) override;

protected:
  /// Runs first on the thread of each new stream, called `stream`.
  virtual void startStreamThread(const std::string &stream) {}

private:
  friend class HostStream;
  /// Called by a stream when its work first fails: the device's handler runs once.
  void streamFailed(const std::exception_ptr &error);

  std::unique_ptr<HostGraph> capturing_;
  std::vector<HostStream *> captured_;
  std::mutex failureMutex_;
  std::function<void(const std::string &)> onFailure_;
  bool failed_ = false;
};

} // namespace dp::rt
