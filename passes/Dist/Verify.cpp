// dist-verify: the contract of the dist phase, checked on its output (see Passes.td). Every
// later phase relies on it: the conversion to plan buffers, the collective manifest and the
// runtime's replica engine assume each gradient is averaged once, on the right replica, and
// that each bucket leaves as soon as it is ready.
#include "dialect/Dist/IR/DistDialect.h"
#include "dialect/Graph/IR/GraphDialect.h"
#include "dialect/Graph/IR/Model.h"
#include "dialect/Interfaces/ParameterUpdateOpInterface.h"
#include "passes/Dist/Passes.h"

#include "llvm/ADT/DenseSet.h"

#define DEBUG_TYPE "dist-verify"

namespace dp::dist {
#define GEN_PASS_DEF_VERIFYPASS
#include "passes/Dist/Passes.h.inc"
} // namespace dp::dist

using namespace mlir;
using namespace dp;
namespace g = dp::graph;

namespace {

/// Every input is read through shards, one per replica of this process.
LogicalResult verifyShards(func::FuncOp func, dist::MeshAttr mesh) {
  for (BlockArgument arg : func.getArguments()) {
    for (Operation *user : arg.getUsers()) {
      auto shard = dyn_cast<dist::ShardOp>(user);
      if (!shard && !isa<func::ReturnOp>(user))
        return user->emitOpError() << "reads input #" << arg.getArgNumber()
                                   << " whole; a replicated step reads inputs through "
                                      "dist.shard (run dist-split-batch)";
      if (shard && shard.getShards() != mesh.replicas())
        return shard.emitOpError() << "splits the batch into " << shard.getShards()
                                   << " shards but the mesh has " << mesh.replicas()
                                   << " replicas";
    }
  }
  return success();
}

/// The collective that averages `mean`, with the operand it averages; null when `mean` is not
/// an allreduce's result.
std::pair<Operation *, Value> averaged(Value mean) {
  auto result = dyn_cast<OpResult>(mean);
  if (!result)
    return {};
  if (auto a = dyn_cast<dist::AllReduceOp>(result.getOwner()))
    return {a, a.getGradients()[result.getResultNumber()]};
  if (auto w = dyn_cast<dist::AllReduceWaitOp>(result.getOwner()))
    if (auto start = w.getStart())
      return {start, start.getGradients()[result.getResultNumber()]};
  return {};
}

/// Every update of a trainable parameter reads the mean of its own replica's gradient over
/// the R x P replicas, averaged once.
LogicalResult verifyUpdates(func::FuncOp func, dist::MeshAttr mesh) {
  llvm::DenseSet<Value> reduced;
  WalkResult walk = func.walk([&](ParameterUpdateOpInterface update) {
    // The update's own verifier has checked that it changes a trainable graph.param.
    auto param = update.getUpdatedParameter().getDefiningOp<g::ParamOp>();
    auto [collective, gradient] = averaged(update.getGradientOperand().get());
    if (!collective) {
      update->emitOpError() << "updates '" << param.getName()
                            << "' from a gradient that is not averaged across replicas "
                               "(run dist-insert-allreduce)";
      return WalkResult::interrupt();
    }
    auto replicas = collective->getAttrOfType<IntegerAttr>("replicas");
    if (!replicas || replicas.getInt() != mesh.getDevicesPerProcess()) {
      update->emitOpError() << "reads a mean over " << (replicas ? replicas.getInt() : 0)
                            << " device(s) per process, but the mesh has "
                            << mesh.getDevicesPerProcess();
      return WalkResult::interrupt();
    }
    Operation *def = gradient.getDefiningOp();
    if (def && (isa<dist::AllReduceOp, dist::AllReduceWaitOp>(def))) {
      update->emitOpError() << "reads the gradient of '" << param.getName()
                            << "' averaged twice";
      return WalkResult::interrupt();
    }
    int64_t from = def ? dist::getReplica(def) : 0;
    if (from != dist::getReplica(update)) {
      update->emitOpError() << "on replica " << dist::getReplica(update)
                            << " reads the mean of replica " << from << "'s gradient of '"
                            << param.getName() << "'";
      return WalkResult::interrupt();
    }
    reduced.insert(gradient);
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return failure();
  // A gradient travels in one bucket only.
  llvm::DenseSet<Value> seen;
  walk = func.walk([&](Operation *op) {
    if (!isa<dist::AllReduceOp, dist::AllReduceStartOp>(op))
      return WalkResult::advance();
    for (Value v : op->getOperands())
      if (reduced.contains(v) && !seen.insert(v).second) {
        op->emitOpError("averages a gradient that another allreduce already averages");
        return WalkResult::interrupt();
      }
    return WalkResult::advance();
  });
  return failure(walk.wasInterrupted());
}

/// Every allreduce is bucketed and scheduled; each bucket starts as soon as its last tensor is
/// computed (only other starts in between) and has an index of its own.
LogicalResult verifyBuckets(func::FuncOp func) {
  llvm::DenseSet<int64_t> buckets;
  WalkResult walk = func.walk([&](Operation *op) {
    if (isa<dist::AllReduceOp>(op)) {
      op->emitOpError("is not scheduled (run dist-fuse-allreduce and dist-schedule)");
      return WalkResult::interrupt();
    }
    auto start = dyn_cast<dist::AllReduceStartOp>(op);
    if (!start)
      return WalkResult::advance();
    if (!buckets.insert(start.getBucket()).second) {
      start.emitOpError() << "reuses bucket " << start.getBucket();
      return WalkResult::interrupt();
    }
    for (Operation *prev = start->getPrevNode(); prev; prev = prev->getPrevNode()) {
      if (llvm::any_of(prev->getResults(),
                       [&](Value r) { return llvm::is_contained(start->getOperands(), r); }))
        break;
      if (!isa<dist::AllReduceStartOp>(prev)) {
        start.emitOpError() << "of bucket " << start.getBucket()
                            << " waits behind '" << prev->getName()
                            << "', which none of its tensors needs; it should start right "
                               "after its last tensor is computed";
        return WalkResult::interrupt();
      }
    }
    return WalkResult::advance();
  });
  return failure(walk.wasInterrupted());
}

struct VerifyPass : dist::impl::VerifyPassBase<VerifyPass> {
  void runOnOperation() override {
    for (StringRef step : {"train", "eval"}) {
      func::FuncOp func = g::requireStepFunction(getOperation(), step);
      if (!func)
        return signalPassFailure();
      dist::MeshAttr mesh = dist::getMesh(func);
      if (!mesh) {
        func.emitError() << "the " << step << " step has no mesh (run dist-replicate first)";
        return signalPassFailure();
      }
      if (mesh.replicas() == 1)
        continue;
      if (failed(verifyShards(func, mesh)) ||
          (step == "train" && (failed(verifyUpdates(func, mesh)) || failed(verifyBuckets(func)))))
        return signalPassFailure();
    }
  }
};

} // namespace
