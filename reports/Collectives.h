// What the dist passes did to the collectives, for the headers of the per-pass IR dumps:
// which allreduces a pass added, fused into buckets, or split and moved to overlap compute.
#pragma once

#include "mlir/IR/BuiltinOps.h"

#include <string>
#include <vector>

namespace dp::reports {

/// One collective of a module, as the dumps describe it.
struct CollectiveRecord {
  /// "allreduce", "allreduce_start", "kernel" (a collective kernel of a plan), "push" (a
  /// parameter-server worker's push, with its pull), "receive" (a server's), "placed" (a
  /// parameter a server holds: tensors has its name, bytes its size), "broadcast" (a
  /// parameter copied from its owner replica, `server`, under sharded optimizer state),
  /// "broadcast_kernel" (its start kernel in a plan).
  std::string kind;
  int64_t bucket = -1;              // -1: not bucketed yet
  std::vector<std::string> tensors; // parameters whose gradients it carries
  int64_t position = 0;             // index of the op in its block
  int64_t waitPosition = -1;        // for a start: index of its wait (a push: its pull)
  int64_t server = -1;              // push, receive, placed: the server; broadcast: its root
  int64_t bytes = 0;                // push, placed
  int64_t process = -1;             // broadcast across processes: its root's process
};

/// The collectives of `module` in op order.
std::vector<CollectiveRecord> collectCollectives(mlir::ModuleOp module);

/// Lines (without comment markers) saying what changed from `before` to `after`; empty when
/// nothing did.
std::vector<std::string> describeCollectiveChanges(const std::vector<CollectiveRecord> &before,
                                                   const std::vector<CollectiveRecord> &after);

} // namespace dp::reports
