// dist-accumulate: gradient accumulation over a device's micro-shards (see Passes.td).
#include "dialect/Graph/IR/GraphDialect.h"
#include "dialect/Graph/IR/Model.h"
#include "dialect/Interfaces/ParameterUpdateOpInterface.h"
#include "passes/Dist/Passes.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"

#define DEBUG_TYPE "dist-accumulate"

namespace dp::dist {
#define GEN_PASS_DEF_ACCUMULATEPASS
#include "passes/Dist/Passes.h.inc"
} // namespace dp::dist

using namespace mlir;
using namespace dp;

namespace {

LogicalResult accumulate(func::FuncOp func, dist::MeshAttr mesh) {
  const int64_t count = mesh.getAccumulation();
  // Statistics averaged across replicas inside the step (dist-sync-batch-norm) would need every
  // micro-shard's forward pass before any backward pass.
  for (Operation &op : func.getBody().front())
    if (isa<dist::AllReduceOp, dist::AllReduceStartOp>(op))
      return op.emitOpError()
             << "averages batch statistics across replicas inside the step, which micro-shards "
                "cannot do yet: compile with --batch-norm-stats local (each micro-shard "
                "normalises with its own statistics)";
  OpBuilder b(func.getContext());
  // One sum per gradient, right after it is computed, on its replica.
  llvm::DenseMap<Value, Value> summed;
  WalkResult walk = func.walk([&](ParameterUpdateOpInterface update) {
    OpOperand &operand = update.getGradientOperand();
    Value gradient = operand.get();
    Value &sum = summed[gradient];
    if (!sum) {
      Operation *def = gradient.getDefiningOp();
      if (!def) {
        update->emitOpError("reads a gradient that is an input of the step");
        return WalkResult::interrupt();
      }
      b.setInsertionPointAfter(def);
      auto op = b.create<dist::AccumulateOp>(gradient.getLoc(), gradient,
                                             b.getI64IntegerAttr(count));
      if (Attribute replica = def->getAttr(dist::DistDialect::kReplicaAttr))
        op->setAttr(dist::DistDialect::kReplicaAttr, replica);
      sum = op;
    }
    operand.set(sum);
    return WalkResult::advance();
  });
  return failure(walk.wasInterrupted());
}

struct AccumulatePass : dist::impl::AccumulatePassBase<AccumulatePass> {
  void runOnOperation() override {
    func::FuncOp train = graph::getStepFunction(getOperation(), "train");
    dist::MeshAttr mesh = train ? dist::getMesh(train) : dist::MeshAttr();
    if (!mesh || mesh.getAccumulation() == 1)
      return;
    if (dist::getParameterServer(train)) {
      train.emitError("gradient accumulation is not built for the parameter-server strategy");
      return signalPassFailure();
    }
    if (failed(accumulate(train, mesh)))
      signalPassFailure();
  }
};

} // namespace
