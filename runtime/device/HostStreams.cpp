// Host streams, events and graphs; see HostStreams.h.
#include "runtime/device/HostStreams.h"

#include "runtime/base/Error.h"
#include "runtime/base/Heartbeat.h"
#include "runtime/base/Trace.h"

#include <atomic>
#include <cstring>

namespace dp::rt {

/// The work captured from a set of streams.
class HostGraph final : public Graph {
public:
  /// The streams captured, and each one's work in its order.
  std::vector<HostStream *> lanes;
  std::vector<std::vector<HostWork>> work;
  /// The event operations in the order the host enqueued them: a launch binds their record
  /// numbers in this order, as if the host enqueued the work again.
  struct EventOp {
    HostEvent *event;
    bool record;
  };
  std::vector<EventOp> eventOps;
  /// Launches, in flight or free for reuse (host thread).
  std::vector<std::unique_ptr<HostGraphLaunch>> launches;

  size_t size() const override {
    size_t n = 0;
    for (const auto &lane : work)
      n += lane.size();
    return n;
  }
};

/// One launch of a graph: its context and the record numbers bound to its event operations.
/// Launches are reused once every stream has run its share, so a launch allocates nothing.
struct HostGraphLaunch {
  const HostGraph *graph = nullptr;
  StepContext ctx;
  std::vector<uint64_t> records;
  /// Streams that have yet to run their share.
  std::atomic<int> pending{0};
};

// ---------------------------------------------------------------------------------- events

uint64_t HostEvent::nextRecord() {
  std::lock_guard<std::mutex> lock(mutex_);
  return ++recorded_;
}

uint64_t HostEvent::latestRecord() {
  std::lock_guard<std::mutex> lock(mutex_);
  return recorded_;
}

void HostEvent::complete(uint64_t n, std::exception_ptr failure) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (completeLocked(n))
      return;
    if (failure)
      failures_[n] = std::move(failure);
    if (n == done_ + 1) {
      done_ = n;
      while (early_.erase(done_ + 1))
        ++done_;
    } else {
      early_.insert(n);
    }
  }
  completed_.notify_all();
}

std::exception_ptr HostEvent::waitFor(uint64_t n) {
  if (n == 0)
    return nullptr;
  std::unique_lock<std::mutex> lock(mutex_);
  completed_.wait(lock, [&] { return completeLocked(n); });
  auto failed = failures_.find(n);
  return failed == failures_.end() ? nullptr : failed->second;
}

void HostEvent::synchronize() {
  if (std::exception_ptr failure = waitFor(latestRecord()))
    std::rethrow_exception(failure);
}

// --------------------------------------------------------------------------------- streams

HostStream::HostStream(HostDevice &device, std::string name,
                       const std::function<void()> &threadStart)
    : device_(device), name_(std::move(name)) {
  thread_ = std::thread([this, threadStart] {
    trace::nameThread("device " + std::to_string(device_.ordinal()) + " " + name_);
    if (threadStart)
      threadStart();
    {
      std::lock_guard<std::mutex> lock(mutex_);
      running_ = true;
    }
    idle_.notify_all();
    loop();
  });
  // What a thread does as it starts (its name in the timeline, threadStart's setup) is done
  // when the stream is: never later, beside the first steps (a loaded machine may start it late).
  std::unique_lock<std::mutex> lock(mutex_);
  idle_.wait(lock, [this] { return running_; });
}

HostStream::~HostStream() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  wake_.notify_one();
  thread_.join();
}

void HostStream::enqueue(HostWork work) {
  if (capture_) {
    if (work.kind == HostWork::Kind::Graph)
      throw Error(ErrorKind::Runtime, "stream " + name_ + ": a graph cannot be launched while "
                                                          "the stream is being captured");
    if (work.kind == HostWork::Kind::Record || work.kind == HostWork::Kind::Wait) {
      work.record = capture_->eventOps.size();
      capture_->eventOps.push_back({work.event, work.kind == HostWork::Kind::Record});
    }
    capture_->work[lane_].push_back(std::move(work));
    return;
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (count_ == ring_.size()) {
      // Full: unroll into a ring twice the size.
      std::vector<HostWork> grown(std::max<size_t>(16, 2 * ring_.size()));
      for (size_t i = 0; i < count_; ++i)
        grown[i] = std::move(ring_[(head_ + i) % ring_.size()]);
      ring_ = std::move(grown);
      head_ = 0;
    }
    ring_[(head_ + count_) % ring_.size()] = std::move(work);
    ++count_;
    ++enqueued_;
  }
  wake_.notify_one();
}

void HostStream::launch(Kernel &kernel, const StepContext &ctx) {
  HostWork work;
  work.kind = HostWork::Kind::Kernel;
  work.kernel = &kernel;
  work.ctx = ctx;
  enqueue(std::move(work));
}

void HostStream::host(std::function<void()> fn) {
  HostWork work;
  work.kind = HostWork::Kind::Host;
  work.fn = std::move(fn);
  enqueue(std::move(work));
}

void HostStream::copy(void *dst, const void *src, size_t bytes) {
  HostWork work;
  work.kind = HostWork::Kind::Copy;
  work.dst = dst;
  work.src = src;
  work.bytes = bytes;
  enqueue(std::move(work));
}

void HostStream::record(Event &event) {
  HostWork work;
  work.kind = HostWork::Kind::Record;
  work.event = &static_cast<HostEvent &>(event);
  if (!capture_)
    work.record = work.event->nextRecord();
  enqueue(std::move(work));
}

void HostStream::wait(Event &event) {
  HostWork work;
  work.kind = HostWork::Kind::Wait;
  work.event = &static_cast<HostEvent &>(event);
  if (!capture_)
    work.record = work.event->latestRecord();
  enqueue(std::move(work));
}

void HostStream::synchronize() {
  if (capture_)
    throw Error(ErrorKind::Runtime, "stream " + name_ + " is being captured: it cannot be "
                                                        "synchronized");
  std::unique_lock<std::mutex> lock(mutex_);
  const uint64_t target = enqueued_;
  idle_.wait(lock, [&] { return done_ >= target; });
  if (failure_)
    std::rethrow_exception(failure_);
}

void HostStream::loop() {
  for (;;) {
    HostWork work;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [&] { return stop_ || count_ > 0; });
      if (count_ == 0)
        return; // stopped, and everything queued has run
      work = std::move(ring_[head_]);
      head_ = (head_ + 1) % ring_.size();
      --count_;
    }
    execute(work);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      ++done_;
    }
    idle_.notify_all();
  }
}

void HostStream::execute(const HostWork &work) {
  if (work.kind != HostWork::Kind::Graph) {
    runOne(work, work.ctx, work.record);
    return;
  }
  HostGraphLaunch &launch = *work.launch;
  for (const HostWork &op : launch.graph->work[work.lane]) {
    const bool eventOp = op.kind == HostWork::Kind::Record || op.kind == HostWork::Kind::Wait;
    runOne(op, launch.ctx, eventOp ? launch.records[op.record] : 0);
  }
  launch.pending.fetch_sub(1, std::memory_order_acq_rel);
}

void HostStream::runOne(const HostWork &work, const StepContext &ctx, uint64_t record) {
  // Only this thread writes failure_, so it reads it without the lock.
  switch (work.kind) {
  case HostWork::Kind::Record:
    // Completed even after a failure, marked failed, so that no waiter hangs.
    work.event->complete(record, failure_);
    return;
  case HostWork::Kind::Wait:
    if (failure_)
      return;
    if (std::exception_ptr failure = work.event->waitFor(record))
      fail(failure);
    return;
  default:
    break;
  }
  if (failure_)
    return;
  try {
    switch (work.kind) {
    case HostWork::Kind::Kernel:
      work.kernel->run(ctx);
      heartbeat::beat();
      break;
    case HostWork::Kind::Host:
      work.fn();
      break;
    case HostWork::Kind::Copy:
      std::memcpy(work.dst, work.src, work.bytes);
      break;
    default:
      break;
    }
  } catch (...) {
    fail(std::current_exception());
  }
}

void HostStream::fail(std::exception_ptr error) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (failure_)
      return;
    failure_ = error;
  }
  device_.streamFailed(error);
}

// --------------------------------------------------------------------------------- devices

HostDevice::HostDevice() = default;
HostDevice::~HostDevice() = default;

std::unique_ptr<Stream> HostDevice::createStream(const std::string &name) {
  return std::make_unique<HostStream>(*this, name, [this, name] { startStreamThread(name); });
}

std::unique_ptr<Event> HostDevice::createEvent() { return std::make_unique<HostEvent>(); }

void HostDevice::beginCapture(const std::vector<Stream *> &streams) {
  if (capturing_)
    throw Error(ErrorKind::Runtime, describe() + ": a capture is already in progress");
  // Every stream is checked before any is captured, so a refused capture changes nothing.
  std::vector<HostStream *> lanes;
  for (Stream *s : streams) {
    auto *stream = dynamic_cast<HostStream *>(s);
    if (!stream || &stream->device_ != this)
      throw Error(ErrorKind::Runtime, describe() + ": cannot capture a stream of another device");
    lanes.push_back(stream);
  }
  auto graph = std::make_unique<HostGraph>();
  for (HostStream *stream : lanes) {
    stream->capture_ = graph.get();
    stream->lane_ = static_cast<int>(graph->lanes.size());
    graph->lanes.push_back(stream);
    graph->work.emplace_back();
  }
  capturing_ = std::move(graph);
}

std::unique_ptr<Graph> HostDevice::endCapture() {
  if (!capturing_)
    throw Error(ErrorKind::Runtime, describe() + ": no capture is in progress");
  for (HostStream *stream : capturing_->lanes)
    stream->capture_ = nullptr;
  return std::move(capturing_);
}

void HostDevice::launch(Graph &g, const StepContext &ctx) {
  auto *graph = dynamic_cast<HostGraph *>(&g);
  if (!graph || (!graph->lanes.empty() && &graph->lanes.front()->device_ != this))
    throw Error(ErrorKind::Runtime, describe() + ": the graph was captured on another device");
  // Refused before anything is bound or enqueued, so a refused launch leaves nothing behind.
  for (HostStream *stream : graph->lanes)
    if (stream->capture_)
      throw Error(ErrorKind::Runtime, "stream " + stream->name() +
                                          ": a graph cannot be launched while the stream is "
                                          "being captured");
  HostGraphLaunch *launch = nullptr;
  for (auto &candidate : graph->launches)
    if (candidate->pending.load(std::memory_order_acquire) == 0) {
      launch = candidate.get();
      break;
    }
  if (!launch) {
    graph->launches.push_back(std::make_unique<HostGraphLaunch>());
    launch = graph->launches.back().get();
    launch->graph = graph;
    launch->records.resize(graph->eventOps.size());
  }
  launch->ctx = ctx;
  for (size_t i = 0; i < graph->eventOps.size(); ++i) {
    const HostGraph::EventOp &op = graph->eventOps[i];
    launch->records[i] = op.record ? op.event->nextRecord() : op.event->latestRecord();
  }
  int lanes = 0;
  for (const auto &work : graph->work)
    lanes += work.empty() ? 0 : 1;
  launch->pending.store(lanes, std::memory_order_release);
  for (size_t lane = 0; lane < graph->lanes.size(); ++lane) {
    if (graph->work[lane].empty())
      continue;
    HostWork work;
    work.kind = HostWork::Kind::Graph;
    work.launch = launch;
    work.lane = static_cast<int>(lane);
    graph->lanes[lane]->enqueue(std::move(work));
  }
}

void HostDevice::setFailureHandler(std::function<void(const std::string &)> handler) {
  std::lock_guard<std::mutex> lock(failureMutex_);
  onFailure_ = std::move(handler);
}

void HostDevice::streamFailed(const std::exception_ptr &error) {
  std::function<void(const std::string &)> handler;
  {
    std::lock_guard<std::mutex> lock(failureMutex_);
    if (failed_)
      return;
    failed_ = true;
    handler = onFailure_;
  }
  if (!handler)
    return;
  try {
    std::rethrow_exception(error);
  } catch (const std::exception &e) {
    handler(e.what());
  } catch (...) {
    handler("unknown error");
  }
}

} // namespace dp::rt
