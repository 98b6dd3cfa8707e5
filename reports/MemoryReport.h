// What a planned program needs in memory per device, by category, and its allreduce buckets:
// the tables `dpc compile` prints.
#pragma once

#include "dialect/Plan/IR/PlanDialect.h"
#include "llvm/Support/raw_ostream.h"

#include <string>
#include <vector>

namespace dp::reports {

/// Bytes of memory a planned program needs, by category.
struct MemoryReport {
  int64_t weights = 0, optimizerState = 0, gradients = 0, inputs = 0;
  int64_t trainActivations = 0, evalActivations = 0, arena = 0;
  int64_t buckets = 0, devices = 1, processes = 1;
  int64_t broadcastBuckets = 0; // buckets of parameters (--shard-optimizer), on device 0
  /// Optimizer state by device (bytes); they differ when it is sharded over the devices
  /// (dpc compile --shard-optimizer), when `optimizerState` is the largest share and
  /// `unshardedState` what each device would hold without sharding. Sharded over the
  /// processes (`acrossProcesses`), one entry per device of the job: device d of process p
  /// at p * devices + d; else one per device of a process (every process holds the same).
  std::vector<int64_t> stateByDevice;
  int64_t unshardedState = 0;
  bool sharded = false, acrossProcesses = false;
  /// "allreduce", "push" (a parameter-server worker's), "received" (a server's).
  std::string bucketKind = "allreduce";
  bool server = false; // a server's program: no inputs, one serve step
  /// The gradients' buckets live in the train step's memory, not the persistent region
  /// (--shard-optimizer 2): `gradients` is then part of `trainActivations`' peak.
  bool transientGradients = false;
};
/// Reads the report off a program that went through plan-memory.
MemoryReport computeMemoryReport(plan::ProgramOp program);
/// Prints the report as an aligned table.
void printMemoryReport(const MemoryReport &report, llvm::raw_ostream &os);
/// "1.50 MiB", "12.0 KiB", "512 B".
std::string humanBytes(int64_t bytes);
/// Prints the allreduce buckets of the train step in the order they are issued: index, bytes
/// per replica, the train kernel after which each starts, and the gradients it carries in
/// the order the backward pass makes them ready. Prints nothing for an undistributed plan.
void printBucketPlan(plan::ProgramOp program, llvm::raw_ostream &os);

} // namespace dp::reports
