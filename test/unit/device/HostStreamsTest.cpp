// The device layer's semantics (device/Device.h) as HostStreams implement them: work on a
// stream runs in enqueue order on the stream's thread, after enqueueing returns; events order
// streams against each other and bind to the latest record before a wait; failures are sticky,
// complete the events they record and reach the device's failure handler once; captured work
// runs only when its graph is launched, with each launch's context, as often as it is launched;
// the backend registry finds, replaces and names its backends.
//
// Ordering is controlled with gates (latches) that the test opens, never with sleeps; a short
// bounded wait is used only to give wrongly released work the chance to show itself. Every
// wait is bounded, and a watchdog aborts a test that still runs after 20 s, so a broken
// implementation fails instead of hanging.
#include "runtime/base/Error.h"
#include "runtime/device/HostStreams.h"
#include "test/unit/ErrorMatchers.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace dp::rt {
namespace {

using namespace std::chrono_literals;
using Strings = std::vector<std::string>;

/// How long a test waits for something that should happen at once.
constexpr std::chrono::milliseconds kTimeout = 3s;
/// How long a test gives work that must not run the chance to run wrongly.
constexpr std::chrono::milliseconds kGrace = 100ms;

/// Aborts the process, naming the test, when the test is still running after `limit`.
class Watchdog {
public:
  explicit Watchdog(std::chrono::seconds limit = 20s) {
    const ::testing::TestInfo *info = ::testing::UnitTest::GetInstance()->current_test_info();
    name_ = info ? std::string(info->test_suite_name()) + "." + info->name() : "a test";
    thread_ = std::thread([this, limit] {
      std::unique_lock<std::mutex> lock(mutex_);
      if (!done_cv_.wait_for(lock, limit, [&] { return done_; })) {
        std::fprintf(stderr, "watchdog: %s still runs after %lld s: it hangs; aborting\n",
                     name_.c_str(), static_cast<long long>(limit.count()));
        std::fflush(stderr);
        std::abort();
      }
    });
  }
  ~Watchdog() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      done_ = true;
    }
    done_cv_.notify_all();
    thread_.join();
  }

private:
  std::string name_;
  std::mutex mutex_;
  std::condition_variable done_cv_;
  bool done_ = false;
  std::thread thread_;
};

/// A latch opened once.
class Gate {
public:
  void open() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      open_ = true;
    }
    cv_.notify_all();
  }
  /// True once open; false when `timeout` passed first.
  bool wait(std::chrono::milliseconds timeout = kTimeout) {
    std::unique_lock<std::mutex> lock(mutex_);
    return cv_.wait_for(lock, timeout, [&] { return open_; });
  }
  bool isOpen() {
    std::lock_guard<std::mutex> lock(mutex_);
    return open_;
  }

private:
  std::mutex mutex_;
  std::condition_variable cv_;
  bool open_ = false;
};

/// Opens gates when it goes away: declared after the streams, it releases work blocked on them
/// when a test ends early, before the streams drain their queues.
struct OpenAtExit {
  std::vector<Gate *> gates;
  ~OpenAtExit() {
    for (Gate *gate : gates)
      gate->open();
  }
};

/// What ran, in the order it ran, from any thread.
class Log {
public:
  void add(const std::string &entry) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      entries_.push_back(entry);
    }
    cv_.notify_all();
  }
  Strings entries() {
    std::lock_guard<std::mutex> lock(mutex_);
    return entries_;
  }
  size_t size() {
    std::lock_guard<std::mutex> lock(mutex_);
    return entries_.size();
  }
  bool contains(const std::string &entry) {
    std::lock_guard<std::mutex> lock(mutex_);
    return std::find(entries_.begin(), entries_.end(), entry) != entries_.end();
  }
  /// True once `entry` was added; false when `timeout` passed first.
  bool waitFor(const std::string &entry, std::chrono::milliseconds timeout = kTimeout) {
    std::unique_lock<std::mutex> lock(mutex_);
    return cv_.wait_for(lock, timeout, [&] {
      return std::find(entries_.begin(), entries_.end(), entry) != entries_.end();
    });
  }
  /// True once there are `n` entries; false when `timeout` passed first.
  bool waitForSize(size_t n, std::chrono::milliseconds timeout = kTimeout) {
    std::unique_lock<std::mutex> lock(mutex_);
    return cv_.wait_for(lock, timeout, [&] { return entries_.size() >= n; });
  }

private:
  std::mutex mutex_;
  std::condition_variable cv_;
  Strings entries_;
};

/// Runs `body` on a thread of its own, for host calls that block (and might hang); joined when
/// this goes away.
class Background {
public:
  explicit Background(std::function<void()> body)
      : thread_([this, body = std::move(body)] {
          try {
            body();
          } catch (...) {
            error_ = std::current_exception();
          }
          finished_.open();
        }) {}
  ~Background() { thread_.join(); }
  /// True once `body` returned or threw; false when `timeout` passed first.
  bool finished(std::chrono::milliseconds timeout = kTimeout) { return finished_.wait(timeout); }
  /// What `body` threw; only after finished().
  std::exception_ptr error() const { return error_; }

private:
  Gate finished_;
  std::exception_ptr error_;
  std::thread thread_;
};

/// A HostDevice whose memory is aligned host memory; it records the stream threads it starts.
class TestDevice final : public HostDevice {
public:
  explicit TestDevice(int ordinal = 0) : ordinal_(ordinal) {}

  DeviceKind kind() const override { return DeviceKind::Cpu; }
  int ordinal() const override { return ordinal_; }
  std::string describe() const override { return "test:" + std::to_string(ordinal_); }
  bool hostAccessible() const override { return true; }
  DeviceMemory allocate(size_t bytes) override {
    const size_t rounded = (std::max<size_t>(bytes, 1) + 63) / 64 * 64;
    void *data = std::aligned_alloc(64, rounded);
    if (!data)
      throw Error(ErrorKind::Memory, describe() + ": cannot allocate " + std::to_string(bytes));
    std::memset(data, 0, rounded);
    return DeviceMemory(data, bytes, [](void *p) { std::free(p); });
  }
  DeviceMemory allocateHost(size_t bytes) override { return allocate(bytes); }

  /// The streams whose threads started, with the thread each started on.
  std::vector<std::pair<std::string, std::thread::id>> startedThreads() {
    std::lock_guard<std::mutex> lock(mutex_);
    return started_;
  }

protected:
  void startStreamThread(const std::string &stream) override {
    std::lock_guard<std::mutex> lock(mutex_);
    started_.emplace_back(stream, std::this_thread::get_id());
  }

private:
  int ordinal_;
  std::mutex mutex_;
  std::vector<std::pair<std::string, std::thread::id>> started_;
};

/// A kernel that logs its name and the step of the context it runs with ("k@7").
class LogKernel final : public Kernel {
public:
  LogKernel(Log &log, std::string name) : log_(log), name_(std::move(name)) {}
  void run(const StepContext &ctx) override { log_.add(name_ + "@" + std::to_string(ctx.step)); }

private:
  Log &log_;
  std::string name_;
};

/// A kernel that keeps the steps it ran with; only its stream's thread touches them, the host
/// reads them after synchronizing.
class StepKernel final : public Kernel {
public:
  void run(const StepContext &ctx) override { steps.push_back(ctx.step); }
  std::vector<int64_t> steps;
};

/// A kernel that throws Error(Runtime, "kernel failed").
class ThrowingKernel final : public Kernel {
public:
  void run(const StepContext &) override {
    throw Error(ErrorKind::Runtime, "kernel failed");
  }
};

/// Success when `body()` throws dp::rt::Error of `kind` whose message is exactly `message`.
template <typename Body>
::testing::AssertionResult throwsExactly(Body &&body, ErrorKind kind, const std::string &message) {
  try {
    body();
  } catch (const Error &e) {
    if (e.kind() != kind || e.what() != message)
      return ::testing::AssertionFailure()
             << "threw Error(" << static_cast<int>(e.kind()) << ", \"" << e.what()
             << "\") instead of Error(" << static_cast<int>(kind) << ", \"" << message << "\")";
    return ::testing::AssertionSuccess();
  } catch (const std::exception &e) {
    return ::testing::AssertionFailure() << "threw a non-dp exception: " << e.what();
  }
  return ::testing::AssertionFailure() << "nothing was thrown";
}

StepContext stepContext(int64_t step) {
  StepContext ctx;
  ctx.step = step;
  return ctx;
}

Strings interleaved(int replays) {
  Strings out;
  for (int r = 0; r < replays; ++r) {
    out.push_back("a" + std::to_string(r));
    out.push_back("b" + std::to_string(r));
  }
  return out;
}

/// Tests of streams, events and graphs, each under a watchdog.
class HostStreamsTest : public ::testing::Test {
private:
  Watchdog watchdog_;
};

// ------------------------------------------------------------------ order and asynchrony

TEST_F(HostStreamsTest, WorkOfAllKindsRunsInEnqueueOrderAfterEnqueueReturns) {
  TestDevice device;
  Log log;
  LogKernel kernel(log, "kernel");
  Gate started, release;
  DeviceMemory src = device.allocateHost(sizeof(int)), dst = device.allocate(sizeof(int));
  int *srcInt = static_cast<int *>(src.data());
  int *dstInt = static_cast<int *>(dst.data());
  const std::thread::id testThread = std::this_thread::get_id();
  std::thread::id hostThread;
  auto stream = device.createStream("compute");
  OpenAtExit guard{{&release}};

  stream->host([&] {
    hostThread = std::this_thread::get_id();
    started.open();
    EXPECT_TRUE(release.wait()) << "the first host function was never released";
    log.add("host 1");
  });
  StepContext ctx = stepContext(7);
  stream->launch(kernel, ctx);
  ctx.step = 8; // the launch took the context by value
  stream->host([&] {
    *srcInt = 42;
    log.add("host 2");
  });
  stream->copy(dstInt, srcInt, sizeof(int));
  stream->host([&] { log.add("read " + std::to_string(*dstInt)); });

  // Everything was enqueued while the first function is blocked: enqueueing ran nothing.
  ASSERT_TRUE(started.wait());
  EXPECT_EQ(log.size(), 0u);
  EXPECT_EQ(*dstInt, 0);
  release.open();
  stream->synchronize();
  EXPECT_EQ(log.entries(), (Strings{"host 1", "kernel@7", "host 2", "read 42"}));
  EXPECT_EQ(*dstInt, 42);
  EXPECT_NE(hostThread, testThread);
  EXPECT_NE(hostThread, std::thread::id());
}

TEST_F(HostStreamsTest, KernelsRunOnTheStreamThread) {
  TestDevice device;
  std::thread::id hostThread, kernelThread;
  class ThreadKernel final : public Kernel {
  public:
    explicit ThreadKernel(std::thread::id &id) : id_(id) {}
    void run(const StepContext &) override { id_ = std::this_thread::get_id(); }
    std::thread::id &id_;
  } kernel(kernelThread);
  auto stream = device.createStream("compute");
  stream->host([&] { hostThread = std::this_thread::get_id(); });
  stream->launch(kernel, StepContext{});
  stream->synchronize();
  EXPECT_EQ(kernelThread, hostThread);
  EXPECT_NE(kernelThread, std::this_thread::get_id());
}

TEST_F(HostStreamsTest, ThreadStartHookRunsOnTheStreamThreadBeforeItsWork) {
  TestDevice device;
  std::thread::id workThread;
  size_t startedBeforeWork = 0;
  auto stream = device.createStream("collectives");
  EXPECT_EQ(stream->name(), "collectives");
  stream->host([&] {
    workThread = std::this_thread::get_id();
    startedBeforeWork = device.startedThreads().size();
  });
  stream->synchronize();
  const auto started = device.startedThreads();
  ASSERT_EQ(started.size(), 1u);
  EXPECT_EQ(started[0].first, "collectives");
  EXPECT_EQ(started[0].second, workThread);
  EXPECT_EQ(startedBeforeWork, 1u);
}

TEST_F(HostStreamsTest, ManyQueuedOperationsRunInOrder) {
  // A thousand operations queue up behind a blocked one: the queue grows while full and keeps
  // the order, across kinds.
  TestDevice device;
  Gate release;
  StepKernel kernel;
  std::vector<int> seen; // only the stream thread touches it until synchronize
  DeviceMemory src = device.allocateHost(1000 * sizeof(int));
  DeviceMemory dst = device.allocate(1000 * sizeof(int));
  int *srcInts = static_cast<int *>(src.data()), *dstInts = static_cast<int *>(dst.data());
  auto stream = device.createStream("compute");
  OpenAtExit guard{{&release}};

  stream->host([&] { EXPECT_TRUE(release.wait()); });
  for (int i = 0; i < 1000; ++i) {
    switch (i % 4) {
    case 0:
      stream->host([&seen, i] { seen.push_back(i); });
      break;
    case 1:
      stream->launch(kernel, stepContext(i));
      break;
    case 2:
      stream->host([srcInts, i] { srcInts[i] = i * 3; });
      break;
    default:
      stream->copy(&dstInts[i - 1], &srcInts[i - 1], sizeof(int));
      break;
    }
  }
  release.open();
  stream->synchronize();
  ASSERT_EQ(seen.size(), 250u);
  ASSERT_EQ(kernel.steps.size(), 250u);
  for (int j = 0; j < 250; ++j) {
    EXPECT_EQ(seen[j], 4 * j);
    EXPECT_EQ(kernel.steps[j], 4 * j + 1);
    EXPECT_EQ(dstInts[4 * j + 2], (4 * j + 2) * 3) << "the copy ran before the write it follows";
  }
}

TEST_F(HostStreamsTest, SynchronizeWaitsForEverythingEnqueued) {
  TestDevice device;
  Gate release;
  int counter = 0; // only the stream thread touches it until synchronize
  auto stream = device.createStream("compute");
  OpenAtExit guard{{&release}};

  stream->synchronize(); // an idle stream: returns at once
  stream->host([&] { EXPECT_TRUE(release.wait()); });
  for (int i = 0; i < 50; ++i)
    stream->host([&] {
      std::this_thread::yield();
      ++counter;
    });
  // Opened from elsewhere while the host is in synchronize (or before: either way it must
  // return only once all 50 have run).
  Background opener([&] {
    std::this_thread::sleep_for(20ms);
    release.open();
  });
  stream->synchronize();
  EXPECT_EQ(counter, 50);
  for (int i = 0; i < 50; ++i)
    stream->host([&] { ++counter; });
  stream->synchronize();
  EXPECT_EQ(counter, 100);
}

// ---------------------------------------------------------------------------------- events

TEST_F(HostStreamsTest, WaitOrdersAStreamAfterWorkRecordedOnAnother) {
  TestDevice device;
  Log log;
  Gate release;
  auto event = device.createEvent();
  auto a = device.createStream("a"), b = device.createStream("b");
  OpenAtExit guard{{&release}};

  a->host([&] {
    EXPECT_TRUE(release.wait());
    log.add("a");
  });
  a->record(*event);
  b->wait(*event);
  b->host([&] { log.add("b"); });
  EXPECT_FALSE(log.waitForSize(1, kGrace)) << "b ran while a's recorded work was blocked";
  release.open();
  b->synchronize();
  EXPECT_EQ(log.entries(), (Strings{"a", "b"}));
  a->synchronize();
}

TEST_F(HostStreamsTest, WaitOnANeverRecordedEventDoesNotBlock) {
  TestDevice device;
  Gate ran;
  auto event = device.createEvent();
  auto b = device.createStream("b");
  b->wait(*event);
  b->host([&] { ran.open(); });
  const bool proceeded = ran.wait();
  EXPECT_TRUE(proceeded) << "a wait on an event never recorded blocked the stream";
  if (!proceeded) { // release it so that the stream can be destroyed
    auto a = device.createStream("a");
    a->record(*event);
    a->synchronize();
  }
  b->synchronize();
  // The host does not block on it either.
  Background sync([&] { event->synchronize(); });
  EXPECT_TRUE(sync.finished());
}

TEST_F(HostStreamsTest, WaitBindsToTheLatestRecordEnqueuedBeforeIt) {
  TestDevice device;
  Log log;
  Gate release, bRan;
  auto event = device.createEvent();
  auto a = device.createStream("a"), b = device.createStream("b"), c = device.createStream("c");
  OpenAtExit guard{{&release}};

  a->record(*event); // record 1: nothing before it
  a->host([&] {
    EXPECT_TRUE(release.wait());
    log.add("a");
  });
  b->wait(*event); // bound to record 1
  b->host([&] {
    log.add("b");
    bRan.open();
  });
  a->record(*event); // record 2: after a's blocked work
  c->wait(*event);   // bound to record 2
  c->host([&] { log.add("c"); });

  EXPECT_TRUE(bRan.wait()) << "b's wait was bound to a record after it";
  EXPECT_FALSE(log.waitFor("c", kGrace)) << "c ran before the work before the record it waits for";
  release.open();
  a->synchronize();
  b->synchronize();
  c->synchronize();
  EXPECT_EQ(log.entries(), (Strings{"b", "a", "c"}));
}

TEST_F(HostStreamsTest, EventSynchronizeWaitsForTheWorkBeforeTheLatestRecord) {
  TestDevice device;
  Gate first, second;
  std::atomic<int> done{0};
  auto event = device.createEvent();
  auto a = device.createStream("a");
  OpenAtExit guard{{&first, &second}};

  a->host([&] {
    EXPECT_TRUE(first.wait());
    done = 1;
  });
  a->record(*event);
  a->host([&] {
    EXPECT_TRUE(second.wait());
    done = 2;
  });
  {
    Background sync([&] { event->synchronize(); });
    EXPECT_FALSE(sync.finished(kGrace)) << "returned before the recorded work ran";
    first.open();
    ASSERT_TRUE(sync.finished());
    EXPECT_FALSE(sync.error());
    EXPECT_EQ(done.load(), 1) << "it returned too early, or waited for work after the record";
  }
  // Recorded again after the second blocked function: now the host waits for that one too.
  a->record(*event);
  {
    Background sync([&] { event->synchronize(); });
    EXPECT_FALSE(sync.finished(kGrace)) << "returned before the work before the latest record";
    second.open();
    ASSERT_TRUE(sync.finished());
    EXPECT_EQ(done.load(), 2);
  }
  a->synchronize();
}

// --------------------------------------------------------------------------------- failure

TEST_F(HostStreamsTest, FailureIsStickySkipsLaterWorkAndFailsWaiters) {
  TestDevice device;
  Log logA, logB;
  LogKernel kernel(logA, "kernel");
  DeviceMemory src = device.allocateHost(sizeof(int)), dst = device.allocate(sizeof(int));
  *static_cast<int *>(src.data()) = 5;
  auto before = device.createEvent(), after = device.createEvent();
  auto a = device.createStream("a"), b = device.createStream("b");

  a->host([&] { logA.add("a1"); });
  a->record(*before);
  a->host([] { throw Error(ErrorKind::Data, "boom"); });
  a->host([&] { logA.add("a2"); });
  a->launch(kernel, StepContext{});
  a->copy(dst.data(), src.data(), sizeof(int));
  a->record(*after);
  b->host([&] { logB.add("b1"); });
  b->wait(*after);
  b->host([&] { logB.add("b2"); });

  EXPECT_TRUE(throwsExactly([&] { a->synchronize(); }, ErrorKind::Data, "boom"));
  EXPECT_TRUE(throwsExactly([&] { a->synchronize(); }, ErrorKind::Data, "boom")) << "not sticky";
  // b does not hang on the event recorded after the failure: it fails with a's error.
  EXPECT_TRUE(throwsExactly([&] { b->synchronize(); }, ErrorKind::Data, "boom"));
  EXPECT_TRUE(throwsExactly([&] { b->synchronize(); }, ErrorKind::Data, "boom"));

  // Work enqueued after the failure is skipped too.
  a->host([&] { logA.add("a3"); });
  b->host([&] { logB.add("b3"); });
  EXPECT_TRUE(throwsExactly([&] { a->synchronize(); }, ErrorKind::Data, "boom"));
  EXPECT_TRUE(throwsExactly([&] { b->synchronize(); }, ErrorKind::Data, "boom"));

  EXPECT_EQ(logA.entries(), Strings{"a1"});
  EXPECT_EQ(logB.entries(), Strings{"b1"});
  EXPECT_EQ(*static_cast<int *>(dst.data()), 0) << "the copy after the failure ran";
  // The event recorded before the failure is fine; the one after it is failed.
  EXPECT_NO_THROW(before->synchronize());
  EXPECT_TRUE(throwsExactly([&] { after->synchronize(); }, ErrorKind::Data, "boom"));
}

TEST_F(HostStreamsTest, EventRecordedAfterAFailureThrowsOnSynchronize) {
  TestDevice device;
  auto event = device.createEvent();
  auto a = device.createStream("a");
  a->host([] { throw Error(ErrorKind::Data, "boom"); });
  a->record(*event);
  Background sync([&] { event->synchronize(); });
  ASSERT_TRUE(sync.finished()) << "the event recorded after the failure was never completed";
  ASSERT_TRUE(sync.error()) << "Event::synchronize did not throw";
  EXPECT_TRUE(throwsExactly([&] { std::rethrow_exception(sync.error()); }, ErrorKind::Data,
                            "boom"));
  // Recorded again, later: still failed.
  a->record(*event);
  EXPECT_TRUE(throwsExactly([&] { event->synchronize(); }, ErrorKind::Data, "boom"));
}

TEST_F(HostStreamsTest, AKernelThatThrowsFailsItsStream) {
  TestDevice device;
  Log log;
  ThrowingKernel bad;
  LogKernel good(log, "good");
  auto a = device.createStream("a");
  a->launch(good, stepContext(1));
  a->launch(bad, stepContext(2));
  a->launch(good, stepContext(3));
  EXPECT_TRUE(throwsExactly([&] { a->synchronize(); }, ErrorKind::Runtime, "kernel failed"));
  EXPECT_EQ(log.entries(), Strings{"good@1"});
}

TEST_F(HostStreamsTest, FailureHandlerRunsOnceWithTheFirstMessage) {
  TestDevice device;
  std::mutex mutex;
  Strings messages;
  std::vector<std::thread::id> threads;
  device.setFailureHandler([&](const std::string &message) {
    std::lock_guard<std::mutex> lock(mutex);
    messages.push_back(message);
    threads.push_back(std::this_thread::get_id());
  });
  std::thread::id aThread;
  auto event = device.createEvent();
  auto a = device.createStream("a"), b = device.createStream("b"), c = device.createStream("c");

  a->host([&] {
    aThread = std::this_thread::get_id();
    throw Error(ErrorKind::Data, "first");
  });
  a->record(*event);
  b->wait(*event); // b fails with a's error
  EXPECT_TRUE(throwsExactly([&] { a->synchronize(); }, ErrorKind::Data, "first"));
  EXPECT_TRUE(throwsExactly([&] { b->synchronize(); }, ErrorKind::Data, "first"));
  c->host([] { throw Error(ErrorKind::Runtime, "second"); }); // a second stream fails
  EXPECT_TRUE(throwsExactly([&] { c->synchronize(); }, ErrorKind::Runtime, "second"));

  std::lock_guard<std::mutex> lock(mutex);
  EXPECT_EQ(messages, Strings{"first"});
  EXPECT_EQ(threads, std::vector<std::thread::id>{aThread}) << "not called from the failing thread";
}

TEST_F(HostStreamsTest, FailureHandlerRunsOnceWhenTwoStreamsFailAtOnce) {
  TestDevice device;
  std::mutex mutex;
  Strings messages;
  device.setFailureHandler([&](const std::string &message) {
    std::lock_guard<std::mutex> lock(mutex);
    messages.push_back(message);
  });
  Gate go;
  auto x = device.createStream("x"), y = device.createStream("y");
  OpenAtExit guard{{&go}};
  x->host([&] {
    EXPECT_TRUE(go.wait());
    throw Error(ErrorKind::Data, "x failed");
  });
  y->host([&] {
    EXPECT_TRUE(go.wait());
    throw Error(ErrorKind::Data, "y failed");
  });
  go.open();
  EXPECT_TRUE(throwsExactly([&] { x->synchronize(); }, ErrorKind::Data, "x failed"));
  EXPECT_TRUE(throwsExactly([&] { y->synchronize(); }, ErrorKind::Data, "y failed"));
  std::lock_guard<std::mutex> lock(mutex);
  ASSERT_EQ(messages.size(), 1u);
  EXPECT_TRUE(messages[0] == "x failed" || messages[0] == "y failed") << messages[0];
}

TEST_F(HostStreamsTest, FailureHandlerGetsTheMessageOfAnyException) {
  {
    TestDevice device;
    Strings messages; // the handler runs on the stream thread, before synchronize returns
    device.setFailureHandler([&](const std::string &m) { messages.push_back(m); });
    auto s = device.createStream("s");
    s->host([] { throw std::out_of_range("plain"); });
    EXPECT_THROW(s->synchronize(), std::out_of_range);
    EXPECT_EQ(messages, Strings{"plain"});
  }
  {
    TestDevice device;
    Strings messages;
    device.setFailureHandler([&](const std::string &m) { messages.push_back(m); });
    auto s = device.createStream("s");
    s->host([] { throw 42; });
    EXPECT_THROW(s->synchronize(), int);
    EXPECT_EQ(messages, Strings{"unknown error"});
  }
  {
    // Without a handler a failure is only rethrown.
    TestDevice device;
    auto s = device.createStream("s");
    s->host([] { throw Error(ErrorKind::Data, "boom"); });
    EXPECT_TRUE(throwsExactly([&] { s->synchronize(); }, ErrorKind::Data, "boom"));
  }
}

// ------------------------------------------------------------------------ capture and replay

TEST_F(HostStreamsTest, CapturedWorkRunsOnlyWhenLaunchedWithTheLaunchContext) {
  TestDevice device;
  Log log;
  LogKernel kernel(log, "kernel");
  std::atomic<int> hostRuns{0};
  DeviceMemory src = device.allocateHost(sizeof(int)), dst = device.allocate(sizeof(int));
  int *srcInt = static_cast<int *>(src.data()), *dstInt = static_cast<int *>(dst.data());
  auto a = device.createStream("compute");

  device.beginCapture({a.get()});
  a->host([&] {
    const int run = ++hostRuns;
    *srcInt = run;
    log.add("host " + std::to_string(run));
  });
  a->launch(kernel, stepContext(99));
  a->copy(dstInt, srcInt, sizeof(int));
  a->host([&] { log.add("read " + std::to_string(*dstInt)); });
  std::this_thread::sleep_for(kGrace); // time for wrongly running work to run
  EXPECT_EQ(hostRuns.load(), 0);
  EXPECT_EQ(log.size(), 0u);
  std::unique_ptr<Graph> graph = device.endCapture();
  ASSERT_TRUE(graph);
  EXPECT_EQ(graph->size(), 4u);
  a->synchronize(); // nothing was enqueued for real
  EXPECT_EQ(hostRuns.load(), 0);
  EXPECT_EQ(log.size(), 0u);

  device.launch(*graph, stepContext(1));
  device.launch(*graph, stepContext(2));
  a->synchronize();
  EXPECT_EQ(log.entries(), (Strings{"host 1", "kernel@1", "read 1", "host 2", "kernel@2",
                                    "read 2"}));
  // After the capture the stream runs live work again, after the launches.
  a->host([&] { log.add("live"); });
  device.launch(*graph, stepContext(3));
  a->synchronize();
  EXPECT_EQ(log.entries(), (Strings{"host 1", "kernel@1", "read 1", "host 2", "kernel@2",
                                    "read 2", "live", "host 3", "kernel@3", "read 3"}));
}

TEST_F(HostStreamsTest, GraphSizeCountsTheOperationsOfAllItsStreams) {
  TestDevice device;
  Log log;
  LogKernel kernel(log, "k");
  auto event = device.createEvent();
  auto a = device.createStream("a"), b = device.createStream("b");
  device.beginCapture({a.get(), b.get()});
  a->host([] {});
  a->record(*event);
  b->wait(*event);
  b->launch(kernel, StepContext{});
  b->copy(nullptr, nullptr, 0);
  auto graph = device.endCapture();
  EXPECT_EQ(graph->size(), 5u);

  // An empty capture is an empty graph; launching it does nothing.
  device.beginCapture({a.get(), b.get()});
  auto empty = device.endCapture();
  EXPECT_EQ(empty->size(), 0u);
  device.launch(*empty, StepContext{});
  a->synchronize();
  b->synchronize();
  EXPECT_EQ(log.size(), 0u);
}

TEST_F(HostStreamsTest, EventsInsideAGraphOrderItsStreamsInEveryReplay) {
  constexpr int kReplays = 5;
  TestDevice device;
  Log log;
  Gate gates[kReplays];
  std::atomic<int> aRuns{0}, bRuns{0};
  auto event = device.createEvent();
  auto a = device.createStream("a"), b = device.createStream("b");
  OpenAtExit guard;
  for (Gate &gate : gates)
    guard.gates.push_back(&gate);

  device.beginCapture({a.get(), b.get()});
  a->host([&] {
    const int r = aRuns++;
    if (r >= kReplays) {
      ADD_FAILURE() << "a ran more often than the graph was launched";
      return;
    }
    EXPECT_TRUE(gates[r].wait());
    log.add("a" + std::to_string(r));
  });
  a->record(*event);
  b->wait(*event);
  b->host([&] { log.add("b" + std::to_string(bRuns++)); });
  auto graph = device.endCapture();
  EXPECT_EQ(graph->size(), 4u);

  for (int r = 0; r < kReplays; ++r)
    device.launch(*graph, stepContext(r + 1));
  for (int r = 0; r < kReplays; ++r) {
    const std::string bEntry = "b" + std::to_string(r);
    EXPECT_FALSE(log.waitFor(bEntry, kGrace)) << "replay " << r << ": b ran before a";
    gates[r].open();
    EXPECT_TRUE(log.waitFor(bEntry)) << "replay " << r << ": b did not run after a";
  }
  a->synchronize();
  b->synchronize();
  EXPECT_EQ(log.entries(), interleaved(kReplays));
}

TEST_F(HostStreamsTest, SynchronizingACapturedStreamThrows) {
  TestDevice device;
  auto a = device.createStream("a"), b = device.createStream("b");
  device.beginCapture({a.get()});
  EXPECT_DP_ERROR(a->synchronize(), ErrorKind::Runtime, "stream a is being captured");
  EXPECT_NO_THROW(b->synchronize()) << "a stream outside the capture is not affected";
  device.endCapture();
  EXPECT_NO_THROW(a->synchronize());
}

TEST_F(HostStreamsTest, CaptureIsOneAtATime) {
  TestDevice device;
  auto a = device.createStream("a"), b = device.createStream("b");
  EXPECT_DP_ERROR(device.endCapture(), ErrorKind::Runtime, "test:0: no capture is in progress");
  device.beginCapture({a.get()});
  EXPECT_DP_ERROR(device.beginCapture({b.get()}), ErrorKind::Runtime,
                  "test:0: a capture is already in progress");
  EXPECT_NE(device.endCapture(), nullptr);
  EXPECT_DP_ERROR(device.endCapture(), ErrorKind::Runtime, "no capture is in progress");
}

TEST_F(HostStreamsTest, LaunchingAGraphWhileCapturingItsStreamThrows) {
  TestDevice device;
  std::atomic<int> runs{0};
  auto a = device.createStream("a");
  device.beginCapture({a.get()});
  a->host([&] { ++runs; });
  auto graph = device.endCapture();

  device.beginCapture({a.get()});
  EXPECT_DP_ERROR(device.launch(*graph, StepContext{}), ErrorKind::Runtime,
                  "stream a: a graph cannot be launched while the stream is being captured");
  auto nested = device.endCapture();
  EXPECT_EQ(nested->size(), 0u) << "the refused launch was captured";
  a->synchronize();
  EXPECT_EQ(runs.load(), 0);
  // The graph is still good.
  device.launch(*graph, StepContext{});
  a->synchronize();
  EXPECT_EQ(runs.load(), 1);
}

TEST_F(HostStreamsTest, GraphsAndStreamsStayOnTheirDevice) {
  TestDevice d0(0), d1(1);
  std::atomic<int> runs{0};
  auto s0 = d0.createStream("s0"), s1 = d1.createStream("s1");
  d0.beginCapture({s0.get()});
  s0->host([&] { ++runs; });
  auto graph = d0.endCapture();

  EXPECT_DP_ERROR(d1.launch(*graph, StepContext{}), ErrorKind::Runtime,
                  "test:1: the graph was captured on another device");
  EXPECT_DP_ERROR(d1.beginCapture({s0.get()}), ErrorKind::Runtime,
                  "test:1: cannot capture a stream of another device");
  s0->synchronize();
  s1->synchronize();
  EXPECT_EQ(runs.load(), 0);
  d0.launch(*graph, StepContext{});
  s0->synchronize();
  EXPECT_EQ(runs.load(), 1);
}

// A capture refused for a foreign stream changes nothing: no stream is left captured.
TEST_F(HostStreamsTest, RefusedCaptureLeavesNothingCaptured) {
  TestDevice d0(0), d1(1);
  Gate ran;
  auto foreign = d0.createStream("foreign"), own = d1.createStream("own");
  EXPECT_DP_ERROR(d1.beginCapture({own.get(), foreign.get()}), ErrorKind::Runtime,
                  "cannot capture a stream of another device");
  own->host([&] { ran.open(); });
  EXPECT_NO_THROW(own->synchronize()) << "the stream was left captured";
  EXPECT_TRUE(ran.isOpen()) << "the stream's work was captured, not run";
  EXPECT_NO_THROW(d1.beginCapture({own.get()})) << "the device was left capturing";
  EXPECT_NO_THROW(d1.endCapture());
}

// A launch refused because a stream is being captured binds no record and runs nothing.
TEST_F(HostStreamsTest, RefusedGraphLaunchLeavesNothingBehind) {
  TestDevice device;
  std::atomic<int> aRuns{0}, bRuns{0};
  auto event = device.createEvent();
  auto b = device.createStream("b"), a = device.createStream("a");
  device.beginCapture({b.get(), a.get()});
  b->host([&] { ++bRuns; });
  a->host([&] { ++aRuns; });
  a->record(*event);
  auto graph = device.endCapture();

  device.beginCapture({a.get()});
  EXPECT_DP_ERROR(device.launch(*graph, StepContext{}), ErrorKind::Runtime,
                  "a graph cannot be launched while the stream is being captured");
  device.endCapture();
  a->synchronize();
  b->synchronize();
  EXPECT_EQ(bRuns.load(), 0) << "the refused launch ran b's share";
  EXPECT_EQ(aRuns.load(), 0);
  Background sync([&] { event->synchronize(); });
  const bool finished = sync.finished();
  EXPECT_TRUE(finished) << "the refused launch left a record of the event that never completes";
  if (!finished) { // release the host thread blocked on it
    auto &hostEvent = static_cast<HostEvent &>(*event);
    hostEvent.complete(hostEvent.latestRecord(), nullptr);
  }
}

TEST_F(HostStreamsTest, ManyReplaysInARowAllRunWithTheirOwnContext) {
  // The host launches a thousand times without waiting, first with stream a held (everything
  // queues: the queues grow), then with b held (a's shares finish, b's do not: a launch must
  // not be reused before all its streams ran it).
  constexpr int kReplays = 1000;
  TestDevice device;
  StepKernel aKernel, bKernel;
  std::atomic<int> aCount{0};
  std::vector<int> aCountSeenByB; // only b's thread touches it until synchronize
  Gate holdA, holdB;
  auto event = device.createEvent();
  auto a = device.createStream("a"), b = device.createStream("b");
  OpenAtExit guard{{&holdA, &holdB}};

  device.beginCapture({a.get(), b.get()});
  a->launch(aKernel, StepContext{});
  a->host([&] { ++aCount; });
  a->record(*event);
  b->wait(*event);
  b->host([&] { aCountSeenByB.push_back(aCount.load()); });
  b->launch(bKernel, StepContext{});
  auto graph = device.endCapture();
  EXPECT_EQ(graph->size(), 6u);

  a->host([&] { EXPECT_TRUE(holdA.wait()); });
  for (int i = 1; i <= kReplays; ++i)
    device.launch(*graph, stepContext(i));
  holdA.open();
  a->synchronize();
  b->synchronize();

  b->host([&] { EXPECT_TRUE(holdB.wait()); });
  for (int i = kReplays + 1; i <= 2 * kReplays; ++i)
    device.launch(*graph, stepContext(i));
  a->synchronize(); // a runs ahead of the held b
  EXPECT_EQ(aCount.load(), 2 * kReplays);
  holdB.open();
  b->synchronize();

  ASSERT_EQ(aKernel.steps.size(), 2u * kReplays);
  ASSERT_EQ(bKernel.steps.size(), 2u * kReplays);
  ASSERT_EQ(aCountSeenByB.size(), 2u * kReplays);
  for (int i = 0; i < 2 * kReplays; ++i) {
    ASSERT_EQ(aKernel.steps[i], i + 1) << "a's share of replay " << i;
    ASSERT_EQ(bKernel.steps[i], i + 1) << "b's share of replay " << i;
    ASSERT_GE(aCountSeenByB[i], i + 1) << "b's share of replay " << i << " ran before a's";
  }
}

// An event recorded on two streams: a wait bound to the first record is not released by
// the second completing first.
TEST_F(HostStreamsTest, AWaitIsNotReleasedByALaterRecordOnAnotherStream) {
  TestDevice device;
  Gate release, cRan;
  std::atomic<bool> aDone{false};
  std::atomic<int> aDoneSeenByC{-1};
  auto event = device.createEvent();
  auto a = device.createStream("a"), b = device.createStream("b"), c = device.createStream("c");
  OpenAtExit guard{{&release}};

  a->host([&] {
    EXPECT_TRUE(release.wait());
    aDone = true;
  });
  a->record(*event); // record 1, after a's blocked work
  c->wait(*event);   // bound to record 1
  c->host([&] {
    aDoneSeenByC = aDone ? 1 : 0;
    cRan.open();
  });
  b->record(*event); // record 2, on another stream, nothing before it
  b->synchronize();
  EXPECT_FALSE(cRan.wait(kGrace)) << "c was released by b's record while a's work is blocked";
  release.open();
  a->synchronize();
  c->synchronize();
  EXPECT_EQ(aDoneSeenByC.load(), 1);
}

// A wait for a record made before a stream failed does not fail.
TEST_F(HostStreamsTest, AWaitForARecordBeforeAFailureDoesNotFail) {
  TestDevice device;
  Gate hold;
  auto event = device.createEvent();
  auto a = device.createStream("a"), c = device.createStream("c");
  OpenAtExit guard{{&hold}};

  a->record(*event); // record 1: before the failure
  c->host([&] { EXPECT_TRUE(hold.wait()); });
  c->wait(*event); // bound to record 1
  a->host([] { throw Error(ErrorKind::Data, "boom"); });
  a->record(*event); // record 2: failed
  EXPECT_TRUE(throwsExactly([&] { a->synchronize(); }, ErrorKind::Data, "boom"));
  hold.open();
  EXPECT_NO_THROW(c->synchronize()) << "c failed although the record it waits for did not";
}

// ------------------------------------------------------------------------------ destruction

TEST_F(HostStreamsTest, DestroyingAStreamRunsWhatIsQueuedFirst) {
  TestDevice device;
  Gate release;
  std::vector<int> seen; // the stream's thread is joined before the host reads it
  DeviceMemory src = device.allocateHost(sizeof(int)), dst = device.allocate(sizeof(int));
  *static_cast<int *>(src.data()) = 17;
  auto stream = device.createStream("s");
  stream->host([&] { EXPECT_TRUE(release.wait()); });
  for (int i = 0; i < 100; ++i)
    stream->host([&seen, i] { seen.push_back(i); });
  stream->copy(dst.data(), src.data(), sizeof(int));
  {
    // Opened while (most likely) the stream is being destroyed; correct either way.
    Background opener([&] {
      std::this_thread::sleep_for(20ms);
      release.open();
    });
    stream.reset();
  }
  ASSERT_EQ(seen.size(), 100u);
  for (int i = 0; i < 100; ++i)
    EXPECT_EQ(seen[i], i);
  EXPECT_EQ(*static_cast<int *>(dst.data()), 17);
}

TEST_F(HostStreamsTest, DestroyingAFailedStreamDoesNotThrowOrHang) {
  TestDevice device;
  auto stream = device.createStream("s");
  stream->host([] { throw Error(ErrorKind::Data, "boom"); });
  stream->host([] {});
  EXPECT_NO_THROW(stream.reset());
}

// ---------------------------------------------------------------------------- device memory

TEST(DeviceMemoryTest, ReleasesOnceAndMovesOwnership) {
  int storage = 0, other = 0;
  std::vector<void *> released;
  auto release = [&](void *p) { released.push_back(p); };
  {
    DeviceMemory m(&storage, 4, release);
    DeviceMemory n(std::move(m));
    EXPECT_EQ(m.data(), nullptr);
    EXPECT_EQ(m.bytes(), 0u);
    EXPECT_EQ(n.data(), &storage);
    EXPECT_EQ(n.bytes(), 4u);
    DeviceMemory o(&other, 8, release);
    o = std::move(n); // releases what o held
    EXPECT_EQ(released, std::vector<void *>{&other});
    EXPECT_EQ(o.data(), &storage);
    o.reset();
    o.reset();
    EXPECT_EQ(released, (std::vector<void *>{&other, &storage}));
    EXPECT_EQ(o.data(), nullptr);
  }
  EXPECT_EQ(released.size(), 2u) << "released twice";
  DeviceMemory empty; // nothing to release
  EXPECT_EQ(empty.data(), nullptr);
}

// -------------------------------------------------------------------------------- registry

/// A backend that only has a kind and a name; it counts its destruction. Registered only for
/// DeviceKind::Cpu: no test of this binary registers a cuda backend, so that a missing kind
/// stays missing whatever order the tests run in.
class FakeBackend final : public Backend {
public:
  FakeBackend(DeviceKind kind, std::string name,
              std::shared_ptr<std::atomic<int>> destroyed = nullptr)
      : kind_(kind), name_(std::move(name)), destroyed_(std::move(destroyed)) {}
  ~FakeBackend() override {
    if (destroyed_)
      ++*destroyed_;
  }
  DeviceKind kind() const override { return kind_; }
  std::string describe() const override { return name_; }
  std::vector<std::unique_ptr<Device>> openDevices(int) override { return {}; }
  void checkMemory(uint64_t, int, const std::string &) override {}
  std::unique_ptr<Kernel> makeKernel(Device &, const KernelSite &) override { return nullptr; }

private:
  DeviceKind kind_;
  std::string name_;
  std::shared_ptr<std::atomic<int>> destroyed_;
};

TEST(BackendRegistryDeathTest, AnEmptyRegistrySaysItRunsNone) {
  // In a fresh process (the test re-executed alone), before anything is registered.
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        if (!BackendRegistry::all().empty() || BackendRegistry::find(DeviceKind::Cpu))
          std::_Exit(3);
        try {
          BackendRegistry::get(DeviceKind::Cuda);
        } catch (const Error &e) {
          std::fprintf(stderr, "%s\n", e.what());
          std::fflush(stderr);
          std::_Exit(e.kind() == ErrorKind::Plan ? 0 : 2);
        }
        std::_Exit(1);
      },
      ::testing::ExitedWithCode(0), "no cuda backend; it runs none: recompile with --device cpu");
}

TEST(BackendRegistryTest, GetForAMissingKindNamesItAndTheKindsRegistered) {
  BackendRegistry::add(std::make_unique<FakeBackend>(DeviceKind::Cpu, "fake cpu"));
  ASSERT_EQ(BackendRegistry::find(DeviceKind::Cuda), nullptr);
  EXPECT_DP_ERROR(BackendRegistry::get(DeviceKind::Cuda), ErrorKind::Plan,
                  "the plan was compiled for cuda devices");
  EXPECT_DP_ERROR(BackendRegistry::get(DeviceKind::Cuda), ErrorKind::Plan,
                  "no cuda backend; it runs cpu: recompile with --device cpu");
}

TEST(BackendRegistryTest, AddReplacesTheBackendOfTheSameKind) {
  auto destroyed = std::make_shared<std::atomic<int>>(0);
  BackendRegistry::add(std::make_unique<FakeBackend>(DeviceKind::Cpu, "first", destroyed));
  const size_t count = BackendRegistry::all().size();
  Backend *first = BackendRegistry::find(DeviceKind::Cpu);
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(first->describe(), "first");

  BackendRegistry::add(std::make_unique<FakeBackend>(DeviceKind::Cpu, "second"));
  Backend *second = BackendRegistry::find(DeviceKind::Cpu);
  ASSERT_NE(second, nullptr);
  EXPECT_EQ(second->describe(), "second");
  EXPECT_EQ(&BackendRegistry::get(DeviceKind::Cpu), second);
  EXPECT_EQ(BackendRegistry::all().size(), count) << "the replacement was added beside the first";
  EXPECT_EQ(destroyed->load(), 1) << "the replaced backend was not released";
  int cpus = 0;
  for (Backend *backend : BackendRegistry::all())
    cpus += backend->kind() == DeviceKind::Cpu ? 1 : 0;
  EXPECT_EQ(cpus, 1);
}

TEST(BackendRegistryTest, FindAndAllSeeWhatWasAdded) {
  BackendRegistry::add(std::make_unique<FakeBackend>(DeviceKind::Cpu, "listed"));
  Backend *cpu = BackendRegistry::find(DeviceKind::Cpu);
  ASSERT_NE(cpu, nullptr);
  EXPECT_EQ(cpu->describe(), "listed");
  EXPECT_EQ(cpu->kind(), DeviceKind::Cpu);
  EXPECT_EQ(&BackendRegistry::get(DeviceKind::Cpu), cpu);
  EXPECT_EQ(BackendRegistry::find(DeviceKind::Cuda), nullptr);
  const std::vector<Backend *> all = BackendRegistry::all();
  EXPECT_NE(std::find(all.begin(), all.end(), cpu), all.end());
  for (Backend *backend : all)
    EXPECT_NE(backend->kind(), DeviceKind::Cuda);
}

} // namespace
} // namespace dp::rt
