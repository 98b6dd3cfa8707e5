// The per-call facts a kernel may need, as plain data: backends that replay a captured step
// (the CUDA backend) copy it to device memory, where their kernels read it.
#pragma once

#include <cstdint>

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
  /// The learning-rate schedule's factor for this step (LrSchedule.h): optimizer updates use
  /// their compiled rate times this.
  double lrScale = 1.0;
  /// Under gradient accumulation (a plan's accumulation M > 1), which of the step's M
  /// micro-shards this run is, 0 to M - 1: the accumulate kernels read it. 0 otherwise.
  int64_t microShard = 0;
};

} // namespace dp::rt
