// The executor: a loaded plan ready to run. Per device of this process it holds the arena (in
// device memory), the kernels of both steps, two streams (compute, and collectives) and each
// step captured once as a graph over them. A step is one graph launch: the compute stream runs
// the kernels in the compiled order; at an allreduce_start the collectives stream waits for the
// compute stream to reach it (an event) and hands the bucket to the collectives engine; at the
// matching allreduce_wait the compute stream waits for the collectives stream to have the mean
// (another event), so the averaging overlaps the compute scheduled between them. Everything that
// can fail or allocate happens at load; a step allocates nothing and creates nothing.
#pragma once

#include "runtime/device/Device.h"
#include "runtime/format/Plan.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace dp::rt {

/// What the collective kernels of a plan call: start averaging a replica's copy of a bucket,
/// and wait for the mean. Called from the replica's collectives stream, in the plan's order.
/// Implemented over the runtime's collectives engine (runtime/comm).
class CollectiveEngine {
public:
  virtual ~CollectiveEngine() = default;
  virtual void start(int bucket, int replica, float *data) = 0;
  virtual void wait(int bucket, int replica) = 0;
  /// Releases every replica waiting in wait() with an error: replica work failed and they
  /// would wait for it forever.
  virtual void abort(const std::string &why) = 0;
};

class Program {
public:
  /// Opens the plan's devices on `backend` (null: the registered backend for the plan's device
  /// kind), allocates each device's arena, creates every kernel of both steps and captures
  /// each step. Throws Error on failure.
  static std::unique_ptr<Program> load(Plan plan, Backend *backend = nullptr);
  /// Waits for the work still enqueued, then releases everything.
  ~Program();

  const Plan &plan() const { return plan_; }
  Backend &backend() const { return backend_; }
  /// Replicas (devices) of this process: R.
  int devices() const { return plan_.devicesPerProcess; }
  /// Processes the plan was compiled for: P.
  int processes() const { return plan_.processes; }
  Device &device(int d) const;
  /// Device `d`'s compute stream: its steps run there, and work the host orders against its
  /// steps (filling inputs, reading outputs) goes there.
  Stream &stream(int d) const;

  /// Draws every parameter from its initialiser; `seed` makes the draw reproducible and the
  /// value of a parameter depends only on (seed, its name), not on the order of parameters.
  void initParams(uint64_t seed);

  const BufferDesc &buffer(uint32_t id) const { return plan_.buffers[id]; }
  /// Where buffer `id` lives in its device's memory (host memory on the CPU).
  void *bufferData(uint32_t id);
  /// Copies buffer `id` to `host` once its device's enqueued work is done.
  void read(uint32_t id, void *host);
  /// Copies `host` into buffer `id` once its device's enqueued work is done, and waits for it.
  void write(uint32_t id, const void *host);

  /// The buffer bound to the named input on `device`, or -1.
  int inputBuffer(const std::string &name, int device = 0) const {
    return plan_.input(name, device);
  }
  /// The buffer of the named output of a step ("loss", "correct") on `device`, or -1.
  int outputBuffer(StepKind step, const std::string &name, int device = 0) const {
    return plan_.output(step, name, device);
  }
  /// True when the train step has collectives, which need attachCollectives().
  bool hasCollectives() const { return !plan_.collectives.empty(); }
  /// The engine the collective kernels hand their buckets to; it must outlive every step.
  void attachCollectives(CollectiveEngine *engine) { collectives_ = engine; }

  /// Enqueues `step` on the streams of replica `ctx.replica`'s device and returns.
  void enqueue(StepKind step, const StepContext &ctx);
  /// Waits until device `d`'s enqueued work is done; rethrows its first error.
  void synchronize(int d);
  /// Waits for every device.
  void synchronize();
  /// Runs `step` on replica `ctx.replica` and waits for it.
  void run(StepKind step, const StepContext &ctx);

  /// Bytes of each device's arena.
  size_t arenaBytes() const { return plan_.arenaBytes; }

private:
  Program(Plan plan, Backend &backend);
  struct PerDevice;
  void build(int d);
  void captureStep(int d, const StepDesc &step, std::unique_ptr<Graph> &graph);

  Plan plan_;
  Backend &backend_;
  std::vector<std::unique_ptr<PerDevice>> devices_;
  std::vector<std::unique_ptr<Kernel>> kernels_;
  /// State that kernels hand to later kernels (KernelSite::sharedState).
  KernelStateMap kernelState_;
  CollectiveEngine *collectives_ = nullptr;
};

} // namespace dp::rt
