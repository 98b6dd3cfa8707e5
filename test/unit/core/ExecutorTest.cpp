// Tests of the executor on the device layer: a step runs as a graph over a device's streams; an
// engine placed on the collectives stream overlaps the compute scheduled between a bucket's
// start and wait, one placed on the compute stream runs in its order; a failing replica releases
// the replicas waiting for its buckets instead of hanging them; a backend registered by a test
// for another device kind runs plans compiled for that kind with no change to the executor.
#include "test/unit/ErrorMatchers.h"
#include "test/unit/PlanBuilder.h"
#include "test/unit/TestBackend.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <future>
#include <mutex>

namespace dp::rt {
namespace {

using testing::PlanBuilder;
using testing::TestBackend;

/// Two devices. Train step on device d: fill a = d + 1; start bucket 0 (a); fill b = 5;
/// wait bucket 0; out = a + b. With a mean over the devices, out = 1.5 + 5 = 6.5 on both.
struct TwoDevicePlan {
  PlanBuilder builder{4};
  uint32_t a[2], b[2], out[2];

  TwoDevicePlan() {
    const StepKind T = StepKind::Train;
    builder.devices(2);
    for (int d = 0; d < 2; ++d) {
      builder.onDevice(d);
      a[d] = builder.buffer({4});
      b[d] = builder.buffer({4});
      out[d] = builder.buffer({4});
    }
    builder.manifestEntry(0, 4, "a");
    for (int d = 0; d < 2; ++d)
      builder.onDevice(d).kernel(T, KernelKind::Fill, {}, {a[d]}).attrF("value", d + 1);
    builder.collective(T, KernelKind::AllReduceStart, 0, {a[0], a[1]});
    for (int d = 0; d < 2; ++d)
      builder.onDevice(d).kernel(T, KernelKind::Fill, {}, {b[d]}).attrF("value", 5);
    builder.collective(T, KernelKind::AllReduceWait, 0, {a[0], a[1]});
    for (int d = 0; d < 2; ++d)
      builder.onDevice(d).kernel(T, KernelKind::Add, {a[d], b[d]}, {out[d]});
  }
};

/// An engine over the replicas of one process that averages a bucket once both replicas have
/// started it. With `lookSeconds` > 0, start() waits up to that long for its replica's compute
/// stream to have run the kernel scheduled between start and wait, and records whether it saw
/// it: it does on the collectives stream, it cannot on the compute stream.
class MeanEngine final : public CollectiveEngine {
public:
  MeanEngine(Placement placement, TestBackend &backend, double lookSeconds)
      : placement_(placement), backend_(backend), look_(lookSeconds) {}
  Placement placement() const override { return placement_; }

  void start(int bucket, int replica, const CollectiveBuffers &buffers) override {
    EXPECT_TRUE(buffers.inPlace());
    EXPECT_EQ(buffers.dtype, DType::F32);
    EXPECT_EQ(buffers.elements, 4);
    auto *data = static_cast<float *>(buffers.receive);
    if (look_ > 0)
      sawBetween[replica] = backend_.waitForRuns(replica, 2, look_);
    std::lock_guard<std::mutex> lock(mutex_);
    data_[replica] = data;
    if (++started_ == 2) {
      for (int i = 0; i < 4; ++i) {
        const float mean = (data_[0][i] + data_[1][i]) / 2;
        data_[0][i] = data_[1][i] = mean;
      }
      done_ = true;
      cv_.notify_all();
    }
  }
  void wait(int bucket, int replica) override {
    std::unique_lock<std::mutex> lock(mutex_);
    if (!cv_.wait_for(lock, std::chrono::seconds(10), [&] { return done_ || aborted_; }))
      throw Error(ErrorKind::Launch, "test engine: timed out");
    if (aborted_)
      throw Error(ErrorKind::Launch, "test engine aborted: " + why_);
  }
  void abort(const std::string &why) override {
    std::lock_guard<std::mutex> lock(mutex_);
    aborted_ = true;
    why_ = why;
    cv_.notify_all();
  }

  bool sawBetween[2] = {false, false};
  bool aborted() {
    std::lock_guard<std::mutex> lock(mutex_);
    return aborted_;
  }

private:
  Placement placement_;
  TestBackend &backend_;
  double look_;
  std::mutex mutex_;
  std::condition_variable cv_;
  float *data_[2] = {nullptr, nullptr};
  int started_ = 0;
  bool done_ = false, aborted_ = false;
  std::string why_;
};

/// An engine whose collectives are device work, as NCCL's are: it gives the executor one
/// kernel per bucket and replica that averages the bucket in place once both replicas' kernels
/// run (each on its device's collectives stream), and never expects start() or wait(). Each
/// kernel first looks (up to 10 s) for its device's compute stream to have run the kernel
/// scheduled between the bucket's start and wait.
class DeviceWorkEngine final : public CollectiveEngine {
public:
  explicit DeviceWorkEngine(TestBackend &backend) : backend_(backend) {}
  Placement placement() const override { return Placement::Collectives; }

  std::unique_ptr<Kernel> collectiveKernel(int bucket, int replica,
                                           const CollectiveBuffers &buffers) override {
    ++kernelsMade;
    return std::make_unique<Averaging>(*this, replica, static_cast<float *>(buffers.receive));
  }
  void stepEnqueued(int replica, Stream &, const StepContext &ctx) override {
    std::lock_guard<std::mutex> lock(mutex_);
    enqueued[replica].push_back(ctx.step);
  }
  void start(int, int, const CollectiveBuffers &) override { ++hostCalls; }
  void wait(int, int) override { ++hostCalls; }
  void abort(const std::string &) override {}

  std::atomic<int> hostCalls{0}, kernelsMade{0};
  bool sawBetween[2] = {false, false};
  std::vector<int64_t> enqueued[2];

private:
  struct Averaging final : Kernel {
    Averaging(DeviceWorkEngine &engine, int replica, float *data)
        : engine(engine), replica(replica), data(data) {}
    void run(const StepContext &) override {
      engine.sawBetween[replica] = engine.backend_.waitForRuns(replica, 2, 10.0);
      std::unique_lock<std::mutex> lock(engine.mutex_);
      engine.data_[replica] = data;
      if (++engine.arrived_ == 2) {
        for (int i = 0; i < 4; ++i)
          engine.data_[0][i] = engine.data_[1][i] = (engine.data_[0][i] + engine.data_[1][i]) / 2;
        engine.arrived_ = 0;
        ++engine.generation_;
        engine.cv_.notify_all();
        return;
      }
      const int64_t generation = engine.generation_;
      engine.cv_.wait_for(lock, std::chrono::seconds(10),
                          [&] { return engine.generation_ != generation; });
    }
    DeviceWorkEngine &engine;
    int replica;
    float *data;
  };

  TestBackend &backend_;
  std::mutex mutex_;
  std::condition_variable cv_;
  float *data_[2] = {nullptr, nullptr};
  int arrived_ = 0;
  int64_t generation_ = 0;
};

/// Enqueues the train step on both replicas.
void enqueueBoth(Program &program) {
  for (int r = 0; r < 2; ++r) {
    StepContext ctx;
    ctx.validRows = 4;
    ctx.replica = r;
    program.enqueue(StepKind::Train, ctx);
  }
}

/// Runs the train step on both replicas (each enqueued, then both awaited), bounded.
void runBoth(Program &program) {
  auto done = std::async(std::launch::async, [&] {
    enqueueBoth(program);
    program.synchronize();
  });
  ASSERT_EQ(done.wait_for(std::chrono::seconds(30)), std::future_status::ready)
      << "the step hung";
  done.get();
}

std::vector<float> read(Program &program, uint32_t id) {
  std::vector<float> v(program.buffer(id).numel);
  program.read(id, v.data());
  return v;
}

TEST(Executor, CollectivesStreamOverlapsTheComputeBetweenStartAndWait) {
  TwoDevicePlan p;
  p.builder.deviceKind(static_cast<uint8_t>(DeviceKind::Cuda));
  TestBackend backend;
  auto program = Program::load(p.builder.plan(), &backend);
  MeanEngine engine(CollectiveEngine::Placement::Collectives, backend, 10.0);
  program->attachCollectives(&engine);
  runBoth(*program);
  EXPECT_TRUE(engine.sawBetween[0]);
  EXPECT_TRUE(engine.sawBetween[1]);
  for (int d = 0; d < 2; ++d)
    EXPECT_EQ(read(*program, p.out[d]), std::vector<float>(4, 6.5f)) << "device " << d;
}

TEST(Executor, ComputePlacementCallsTheEngineInComputeOrder) {
  TwoDevicePlan p;
  p.builder.deviceKind(static_cast<uint8_t>(DeviceKind::Cuda));
  TestBackend backend;
  auto program = Program::load(p.builder.plan(), &backend);
  MeanEngine engine(CollectiveEngine::Placement::Compute, backend, 0.2);
  program->attachCollectives(&engine);
  runBoth(*program);
  // start() runs on the compute stream before the kernel after it: it never sees it run.
  EXPECT_FALSE(engine.sawBetween[0]);
  EXPECT_FALSE(engine.sawBetween[1]);
  for (int d = 0; d < 2; ++d)
    EXPECT_EQ(read(*program, p.out[d]), std::vector<float>(4, 6.5f)) << "device " << d;
}

TEST(Executor, AnEngineOfDeviceWorkHasItsKernelsLaunchedBetweenTheEvents) {
  TwoDevicePlan p;
  p.builder.deviceKind(static_cast<uint8_t>(DeviceKind::Cuda));
  TestBackend backend;
  auto program = Program::load(p.builder.plan(), &backend);
  DeviceWorkEngine engine(backend);
  program->attachCollectives(&engine);
  EXPECT_EQ(engine.kernelsMade, 2) << "one averaging kernel per bucket and replica";
  runBoth(*program);
  // The averaging kernels ran on the collectives stream after the bucket was written (the
  // mean of 1 and 2), overlapping the compute between start and wait, and the compute stream
  // waited for them before out = a + b.
  EXPECT_TRUE(engine.sawBetween[0]);
  EXPECT_TRUE(engine.sawBetween[1]);
  for (int d = 0; d < 2; ++d)
    EXPECT_EQ(read(*program, p.out[d]), std::vector<float>(4, 6.5f)) << "device " << d;
  EXPECT_EQ(engine.hostCalls, 0) << "start() or wait() was called for device work";
  EXPECT_EQ(engine.enqueued[0], std::vector<int64_t>{1});
  EXPECT_EQ(engine.enqueued[1], std::vector<int64_t>{1});
  // Back to a host engine: the step is captured again with host calls.
  MeanEngine host(CollectiveEngine::Placement::Collectives, backend, 0);
  program->attachCollectives(&host);
  runBoth(*program);
  for (int d = 0; d < 2; ++d)
    EXPECT_EQ(read(*program, p.out[d]), std::vector<float>(4, 6.5f)) << "device " << d;
}

TEST(Executor, PlacementCanChangeBetweenEngines) {
  TwoDevicePlan p;
  p.builder.deviceKind(static_cast<uint8_t>(DeviceKind::Cuda));
  TestBackend backend;
  auto program = Program::load(p.builder.plan(), &backend);
  for (auto placement : {CollectiveEngine::Placement::Collectives,
                         CollectiveEngine::Placement::Compute,
                         CollectiveEngine::Placement::Collectives}) {
    MeanEngine engine(placement, backend, 0);
    program->attachCollectives(&engine);
    runBoth(*program);
    for (int d = 0; d < 2; ++d)
      EXPECT_EQ(read(*program, p.out[d]), std::vector<float>(4, 6.5f)) << "device " << d;
  }
  program->attachCollectives(nullptr);
}

TEST(Executor, AFailingReplicaReleasesTheOthers) {
  for (auto placement :
       {CollectiveEngine::Placement::Collectives, CollectiveEngine::Placement::Compute}) {
    TwoDevicePlan p;
    p.builder.deviceKind(static_cast<uint8_t>(DeviceKind::Cuda));
    TestBackend backend;
    auto program = Program::load(p.builder.plan(), &backend);
    MeanEngine engine(placement, backend, 0);
    program->attachCollectives(&engine);
    // Device 0 fails in its first kernel, before it starts the bucket: device 1 would wait
    // for it in wait() forever (here: 10 s) unless the failure releases it.
    backend.failKernel(0, 1);
    const auto began = std::chrono::steady_clock::now();
    auto done = std::async(std::launch::async, [&] {
      enqueueBoth(*program);
      std::string errors[2];
      for (int r = 0; r < 2; ++r)
        try {
          program->synchronize(r);
        } catch (const Error &e) {
          errors[r] = e.what();
        }
      return std::make_pair(errors[0], errors[1]);
    });
    ASSERT_EQ(done.wait_for(std::chrono::seconds(30)), std::future_status::ready);
    auto [first, second] = done.get();
    EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count(),
              5.0)
        << "released by the engine's own timeout, not by the failure";
    EXPECT_NE(first.find("injected failure on device 0"), std::string::npos) << first;
    EXPECT_NE(second.find("replica 0 failed: injected failure on device 0"), std::string::npos)
        << second;
    EXPECT_TRUE(engine.aborted());
  }
}

TEST(Executor, EachKernelRunsOncePerStepAndNoneAtLoad) {
  // Capture at load records the kernels without running them; a step runs each once.
  TwoDevicePlan p;
  p.builder.deviceKind(static_cast<uint8_t>(DeviceKind::Cuda));
  TestBackend backend;
  auto program = Program::load(p.builder.plan(), &backend);
  EXPECT_EQ(backend.runs(0), 0) << "loading ran kernels";
  MeanEngine engine(CollectiveEngine::Placement::Collectives, backend, 0);
  program->attachCollectives(&engine);
  runBoth(*program);
  EXPECT_EQ(backend.runs(0), 3);
  EXPECT_EQ(backend.runs(1), 3);
}

TEST(Executor, UnregisteredDeviceKindIsRefusedNamingWhatThisBuildRuns) {
  PlanBuilder b(4);
  const uint32_t x = b.buffer({4});
  b.kernel(StepKind::Train, KernelKind::Fill, {}, {x}).attrF("value", 1);
  b.deviceKind(static_cast<uint8_t>(DeviceKind::Cuda));
  registerBuiltinBackends();
  if (BackendRegistry::find(DeviceKind::Cuda))
    GTEST_SKIP() << "this build has a CUDA backend";
  EXPECT_DP_ERROR(Program::load(b.plan()), ErrorKind::Plan,
                  "compiled for cuda devices (dpc compile --device), and this dprun has no "
                  "cuda backend; it runs cpu");
}

TEST(Executor, ABackendOfAnotherKindIsRefusedForThePlan) {
  PlanBuilder b(4);
  const uint32_t x = b.buffer({4});
  b.kernel(StepKind::Train, KernelKind::Fill, {}, {x}).attrF("value", 1);
  TestBackend cuda(DeviceKind::Cuda);
  EXPECT_DP_ERROR(Program::load(b.plan(), &cuda), ErrorKind::Plan,
                  "compiled for cpu devices, not cuda");
}

} // namespace
} // namespace dp::rt
