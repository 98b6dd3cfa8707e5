// The dist-phase passes (declared in Passes.td).
#pragma once

#include "dialect/Dist/IR/DistDialect.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

#include <vector>

namespace dp::dist {
#define GEN_PASS_DECL
#include "passes/Dist/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "passes/Dist/Passes.h.inc"

/// Fails, at the offending op, unless every user of the allreduces is an update (an op without
/// results): fusion and scheduling move those users later in the step.
mlir::LogicalResult verifyOnlyUpdatesUseMeans(llvm::ArrayRef<AllReduceOp> allreduces);

/// The server of each tensor of `bytes` bytes among `servers`: largest first, each onto the
/// server holding the fewest bytes so far (the lowest index on a tie). Also the owner replica
/// of each parameter's optimizer state under dist-shard-optimizer.
std::vector<int64_t> placeByBytes(llvm::ArrayRef<int64_t> bytes, int64_t servers);
} // namespace dp::dist
