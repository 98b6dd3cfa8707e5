// A loaded plan ready to run: the arena, the parameters, and for each step (train, eval) the
// list of kernels with their backend primitives, all created once at load time so that a step
// does no allocation and no primitive creation.
#pragma once

#include "runtime/core/Tensor.h"
#include "runtime/format/Plan.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace dp::rt {

/// Per-call facts a kernel may need.
struct StepContext {
  /// Rows of the batch that hold real samples (the rest is padding in a short last batch).
  int64_t validRows = 0;
  /// Rows of this replica's batch, real and padding (0: unknown, a loss's rows are the
  /// batch). A loss over a multiple of them (the batch stacked along its axis) sees the valid
  /// rows first in each block of batchRows.
  int64_t batchRows = 0;
  /// 1-based count of train steps run so far including this one (Adam's bias correction).
  int64_t step = 1;
  /// The replica (device of this process) running the step.
  int replica = 0;
  /// The run's seed (`dprun --seed`): random kernels (dropout) draw from it.
  uint64_t seed = 0;
  /// The row of the global batch that this replica's first row is: draws per sample row
  /// depend on the global row, so that any split of the batch draws the same numbers.
  int64_t firstRow = 0;
};

/// What the collective kernels of a plan call: start averaging a replica's copy of a bucket,
/// and wait for the mean. Implemented over the runtime's collectives engine (runtime/comm).
class CollectiveEngine {
public:
  virtual ~CollectiveEngine() = default;
  virtual void start(int bucket, int replica, float *data) = 0;
  virtual void wait(int bucket, int replica) = 0;
};

/// One kernel of a step, bound to its buffers. Backends implement it.
class Kernel {
public:
  virtual ~Kernel() = default;
  virtual void run(const StepContext &ctx) = 0;
};

class Program {
public:
  /// Allocates one arena per device and creates every kernel of both steps. Throws Error on
  /// failure.
  static std::unique_ptr<Program> load(Plan plan);
  ~Program();

  const Plan &plan() const { return plan_; }

  /// Draws every parameter from its initialiser; `seed` makes the draw reproducible and the
  /// value of a parameter depends only on (seed, its name), not on the order of parameters.
  void initParams(uint64_t seed);

  void *bufferData(uint32_t id);
  const BufferDesc &buffer(uint32_t id) const { return plan_.buffers[id]; }
  /// Replicas (devices) of this process: R.
  int devices() const { return plan_.devicesPerProcess; }
  /// Processes the plan was compiled for: P.
  int processes() const { return plan_.processes; }
  /// The buffer bound to the named input on `device`, or -1.
  int inputBuffer(const std::string &name, int device = 0) const;
  /// The buffer of the named output of a step ("loss", "correct") on `device`, or -1.
  int outputBuffer(StepKind step, const std::string &name, int device = 0) const;
  /// True when the train step has collectives, which need attachCollectives().
  bool hasCollectives() const;
  /// The engine the collective kernels hand their buckets to; it must outlive every run().
  void attachCollectives(CollectiveEngine *engine) { collectives_ = engine; }

  /// Runs, in order, the kernels of the step that belong to replica `ctx.replica` (its own
  /// and the collectives). Replicas run concurrently, each on its own thread.
  void run(StepKind step, const StepContext &ctx);

  /// Bytes of each device's arena.
  size_t arenaBytes() const { return plan_.arenaBytes; }

private:
  explicit Program(Plan plan);
  Plan plan_;
  struct Arena;
  std::vector<std::unique_ptr<Arena>> arenas_;
  std::vector<uint8_t *> arenaData_;
  std::vector<std::unique_ptr<Kernel>> kernels_;
  /// State that kernels hand to later kernels (KernelSite::sharedState).
  KernelStateMap kernelState_;
  /// Per step, per device: the kernels that device's replica runs, in order.
  std::vector<std::vector<Kernel *>> train_, eval_;
  void buildStep(const StepDesc &step, std::vector<std::vector<Kernel *>> &perDevice);
  CollectiveEngine *collectives_ = nullptr;
  friend class CollectiveKernel;
};

} // namespace dp::rt
