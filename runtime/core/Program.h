// The executor: a loaded plan ready to run. Per device of this process it holds the arena (in
// device memory), the kernels of both steps, two streams (compute, and collectives) and each
// step captured once as a graph over them. A step is one graph launch: the compute stream runs
// the kernels in the compiled order. An allreduce_start hands the bucket to the collectives
// engine and an allreduce_wait waits for its mean; the compute scheduled between them overlaps
// the averaging. Where the engine's calls run is the engine's choice (its Placement): on the
// compute stream for the runtime's MPI engine, whose start() only hands the bucket to its own
// thread; on the collectives stream, ordered by an event each way, for an engine whose calls
// do the transfer or enqueue device work. Everything that can fail or allocate happens at load;
// a step allocates nothing and creates nothing.
#pragma once

#include "runtime/device/Collectives.h"
#include "runtime/device/Device.h"
#include "runtime/format/Plan.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace dp::rt {

class Program {
public:
  /// Opens the plan's devices on `backend` (null: the registered backend for the plan's device
  /// kind), allocates each device's arena, creates every kernel of both steps and captures
  /// each step. Throws Error on failure.
  static std::unique_ptr<Program> load(Plan plan, Backend *backend = nullptr);
  /// The checks load makes of the plan itself before it opens a device (checkRunnable in
  /// runtime/train/PlanCheck.h makes them without loading): every parameter f32, with an
  /// initialiser that can be drawn for its size. Throws Error(Plan).
  static void checkPlan(const Plan &plan);
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
  /// The same for `bytes` bytes at byte `offset` of buffer `id` (one element of a parameter).
  void write(uint32_t id, const void *host, size_t offset, size_t bytes);

  /// The buffer of the input with `role` on `device`, or -1.
  int inputBuffer(InputRole role, int device = 0) const {
    const InputDesc *in = plan_.input(role, device);
    return in ? static_cast<int>(in->buffer) : -1;
  }
  /// The buffer of the output of `step` with `role` on `device`, or -1.
  int outputBuffer(StepKind step, OutputRole role, int device = 0) const {
    const OutputDesc *out = plan_.output(step, role, device);
    return out ? static_cast<int>(out->buffer) : -1;
  }
  /// True when the train step has collectives, which need attachCollectives().
  bool hasCollectives() const { return !plan_.collectives.empty(); }
  /// The engine the collective kernels hand their buckets to; it must outlive every step.
  /// Captures the train step again for it (its placement, its averaging kernels).
  void attachCollectives(CollectiveEngine *engine);

  /// Makes the attached engine release every replica waiting for a bucket, with `why`: the
  /// host gives up on a step some replicas were given and others were not.
  void abortCollectives(const std::string &why) {
    if (collectives_)
      collectives_->abort(why);
  }

  /// Enqueues `step` on the streams of replica `ctx.replica`'s device and returns. Under
  /// gradient accumulation a train step is enqueued once per micro-shard (ctx.microShard, 0
  /// to M - 1, in order): the final kernels run with the last.
  void enqueue(StepKind step, const StepContext &ctx);
  /// Waits until device `d`'s enqueued work is done; rethrows its first error.
  void synchronize(int d);
  /// Waits for every device.
  void synchronize();
  /// Runs `step` on replica `ctx.replica` and waits for it.
  void run(StepKind step, const StepContext &ctx);
  /// Runs the compute kernels [first, last) of the train step's list on device 0, on the
  /// calling thread, with the device idle: a parameter server runs a bucket's updates as its
  /// gradient arrives. Host devices only.
  void runKernels(size_t first, size_t last, const StepContext &ctx);

  /// Bytes of each device's arena.
  size_t arenaBytes() const { return plan_.arenaBytes; }

private:
  /// Buffer `id` as a collective's buffers: the in-place exchange of its elements.
  CollectiveBuffers collectiveBuffers(uint32_t id) {
    void *data = bufferData(id);
    return {data, data, buffer(id).dtype, buffer(id).numel};
  }
  Program(Plan plan, Backend &backend);
  struct PerDevice;
  void build(int d);
  /// Captures `step` for device `d`; with `skipFinal`, without its final kernels.
  void captureStep(int d, const StepDesc &step, std::unique_ptr<Graph> &graph,
                   bool skipFinal = false);
  /// Event `use` of collective kernel `k` on device `d`.
  Event &event(PerDevice &d, const KernelDesc *k, int use);

  Plan plan_;
  Backend &backend_;
  std::vector<std::unique_ptr<PerDevice>> devices_;
  std::vector<std::unique_ptr<Kernel>> kernels_;
  /// State that kernels hand to later kernels (KernelSite::sharedState).
  KernelStateMap kernelState_;
  CollectiveEngine *collectives_ = nullptr;
  /// Where the captured steps make the collective calls.
  CollectiveEngine::Placement placement_ = CollectiveEngine::Placement::Compute;
};

} // namespace dp::rt
