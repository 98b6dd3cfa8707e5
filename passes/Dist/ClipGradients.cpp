// dist-clip-gradients: every replica scales its updates' gradients by one factor, from the
// global norm of the gradients it updates with: after the allreduce, so that all replicas hold
// the same averaged gradients and compute the same factor (see Passes.td).
#include "dialect/Dist/IR/DistDialect.h"
#include "dialect/Graph/IR/GraphDialect.h"
#include "dialect/Graph/IR/Model.h"
#include "dialect/Interfaces/ParameterUpdateOpInterface.h"
#include "passes/Dist/Passes.h"

#include "mlir/IR/Builders.h"

#include <map>

#define DEBUG_TYPE "dist-clip-gradients"

namespace dp::dist {
#define GEN_PASS_DEF_CLIPGRADIENTSPASS
#include "passes/Dist/Passes.h.inc"
} // namespace dp::dist

using namespace mlir;
using namespace dp;
namespace g = dp::graph;

namespace {

/// The name of the parameter an update writes.
StringRef paramName(ParameterUpdateOpInterface update) {
  auto param = update.getUpdatedParameter().getDefiningOp<g::ParamOp>();
  return param ? param.getName() : StringRef("?");
}

/// Moves `update` from before `factor` to right after `after`, unless an op between them reads
/// a value the update writes (it would then read the value after the update).
LogicalResult moveAfter(Operation *update, Operation *factor, Operation *after) {
  for (OpOperand &operand : update->getOpOperands()) {
    if (&operand == &cast<ParameterUpdateOpInterface>(update).getGradientOperand())
      continue;
    for (Operation *user : operand.get().getUsers())
      if (user != update && user->getBlock() == update->getBlock() &&
          update->isBeforeInBlock(user) && user->isBeforeInBlock(factor) &&
          !isa<ParameterUpdateOpInterface>(user))
        return update->emitOpError()
               << "writes a value that '" << user->getName()
               << "' reads later in the step; the update cannot wait for the global norm";
  }
  update->moveAfter(after);
  return success();
}

LogicalResult clip(func::FuncOp train, double maxNorm) {
  if (dist::getParameterServer(train))
    return train.emitError(
        "gradients cannot be clipped by their global norm under the parameter-server "
        "strategy: each server updates its own parameters, and none sees the whole gradient");
  // The updates of each replica, in step order.
  std::map<int64_t, SmallVector<Operation *>> byReplica;
  WalkResult walk = train.walk([&](ParameterUpdateOpInterface update) {
    std::optional<MutableOperandRange> scale = g::updateScaleOperand(update);
    if (!scale) {
      update->emitOpError("is not an optimizer update (run graph-expand-optimizer first)");
      return WalkResult::interrupt();
    }
    if (!scale->empty()) {
      update->emitOpError() << "of '" << paramName(update) << "' already has a scale";
      return WalkResult::interrupt();
    }
    byReplica[dist::getReplica(update)].push_back(update);
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return failure();

  OpBuilder b(train.getContext());
  auto scalar = RankedTensorType::get({}, b.getF32Type());
  Operation *previous = nullptr;
  for (auto &[replica, updates] : byReplica) {
    // The factor comes after the last gradient (the last allreduce's wait), ...
    SmallVector<Value> gradients;
    Operation *last = nullptr;
    Block *block = updates.front()->getBlock();
    for (Operation *op : updates) {
      if (op->getBlock() != block)
        return op->emitOpError("is in another block than the step's other updates");
      Value gradient = cast<ParameterUpdateOpInterface>(op).getGradientOperand().get();
      gradients.push_back(gradient);
      if (Operation *def = gradient.getDefiningOp())
        if (def->getBlock() == block && (!last || last->isBeforeInBlock(def)))
          last = def;
    }
    // (The replicas' factors in replica order.)
    if (previous && (!last || last->isBeforeInBlock(previous)))
      last = previous;
    if (last)
      b.setInsertionPointAfter(last);
    else
      b.setInsertionPointToStart(block);
    auto factor = b.create<g::ClipFactorOp>(updates.front()->getLoc(), scalar, gradients,
                                            b.getF64FloatAttr(maxNorm));
    if (Attribute attr = updates.front()->getAttr(dist::DistDialect::kReplicaAttr))
      factor->setAttr(dist::DistDialect::kReplicaAttr, attr);
    previous = factor;
    // ... and every update after it, reading it as its scale.
    Operation *after = factor;
    for (Operation *op : updates) {
      if (op->isBeforeInBlock(factor)) {
        if (failed(moveAfter(op, factor, after)))
          return failure();
        after = op;
      }
      g::updateScaleOperand(op)->assign(factor.getResult());
    }
  }
  return success();
}

struct ClipGradientsPass : dist::impl::ClipGradientsPassBase<ClipGradientsPass> {
  using ClipGradientsPassBase::ClipGradientsPassBase;
  void runOnOperation() override {
    if (clipNorm == 0)
      return;
    if (!(clipNorm > 0) || !std::isfinite(clipNorm)) {
      getOperation().emitError() << "dist-clip-gradients: clip-norm must be finite and >= 0, got "
                                 << clipNorm.getValue();
      return signalPassFailure();
    }
    if (func::FuncOp train = g::getStepFunction(getOperation(), "train"))
      if (failed(clip(train, clipNorm)))
        return signalPassFailure();
  }
};

} // namespace
