// dist-replicate: R interleaved copies of each step, one per device of a process.
#include "passes/Dist/Passes.h"
#include "dialect/Graph/IR/Model.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"

#define DEBUG_TYPE "dist-replicate"

namespace dp::dist {
#define GEN_PASS_DEF_REPLICATEPASS
#include "passes/Dist/Passes.h.inc"
} // namespace dp::dist

using namespace mlir;
using namespace dp;

namespace {

/// Replaces the body of `func` by `replicas` copies, op by op, and returns every copy's
/// results.
void replicate(func::FuncOp func, int64_t replicas) {
  Block &body = func.getBody().front();
  auto ret = cast<func::ReturnOp>(body.getTerminator());
  OpBuilder b(func.getContext());
  auto tag = [&](Operation *op, int64_t r) {
    op->setAttr(dist::DistDialect::kReplicaAttr, b.getI64IntegerAttr(r));
  };
  SmallVector<IRMapping> maps(replicas);
  for (Operation &op : llvm::make_early_inc_range(body.without_terminator())) {
    b.setInsertionPointAfter(&op);
    for (int64_t r = 1; r < replicas; ++r) {
      Operation *copy = b.clone(op, maps[r]);
      tag(copy, r);
      b.setInsertionPointAfter(copy);
    }
    tag(&op, 0);
  }

  // Every replica's outputs, replica by replica, named as before and tagged.
  SmallVector<Value> results;
  SmallVector<DictionaryAttr> resultAttrs;
  for (int64_t r = 0; r < replicas; ++r)
    for (unsigned i = 0, e = ret.getNumOperands(); i < e; ++i) {
      results.push_back(maps[r].lookupOrDefault(ret.getOperand(i)));
      NamedAttrList attrs(func.getResultAttrDict(i));
      attrs.set(dist::DistDialect::kReplicaAttr, b.getI64IntegerAttr(r));
      resultAttrs.push_back(attrs.getDictionary(func.getContext()));
    }
  b.setInsertionPoint(ret);
  b.create<func::ReturnOp>(ret.getLoc(), results);
  ret.erase();
  func.setType(FunctionType::get(func.getContext(), func.getArgumentTypes(),
                                 ValueRange(results).getTypes()));
  func.setAllResultAttrs(resultAttrs);
}

struct ReplicatePass : dist::impl::ReplicatePassBase<ReplicatePass> {
  using ReplicatePassBase::ReplicatePassBase;

  /// The micro-shards each device runs a step on (M = rows per device / micro-batch), 1
  /// without a micro-batch.
  FailureOr<int64_t> accumulationSteps(func::FuncOp train) {
    if (microBatch == 0)
      return 1;
    auto type = train.getNumArguments()
                    ? dyn_cast<RankedTensorType>(train.getArgument(0).getType())
                    : RankedTensorType();
    const int64_t replicas = devicesPerProcess * processes;
    const int64_t batch = type && type.getRank() ? type.getDimSize(0) : 0;
    if (microBatch < 0 || batch % replicas != 0 || (batch / replicas) % microBatch != 0) {
      train.emitError() << "the micro-batch (" << int64_t(microBatch)
                        << " rows) must divide each device's rows of the global batch ("
                        << batch << " rows over " << replicas << " device(s)"
                        << (batch % replicas ? ", which do not divide it either" : "") << ")";
      return failure();
    }
    return batch / replicas / microBatch;
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto emitError = [&] { return module.emitError(); };
    if (failed(dist::MeshAttr::verify(emitError, devicesPerProcess, processes, device, nodes,
                                      1)))
      return signalPassFailure();
    for (StringRef step : {"train", "eval"})
      if (!graph::getStepFunction(module, step)) {
        module.emitError() << "expected a '" << step
                           << "' step function (run graph-derive-steps first)";
        return signalPassFailure();
      }
    FailureOr<int64_t> accumulation = accumulationSteps(graph::getStepFunction(module, "train"));
    if (failed(accumulation))
      return signalPassFailure();
    auto mesh = dist::MeshAttr::get(&getContext(), devicesPerProcess, processes, device, nodes,
                                    *accumulation);
    for (StringRef step : {"train", "eval"}) {
      func::FuncOp func = graph::getStepFunction(module, step);
      if (dist::getMesh(func)) {
        func.emitError("is already distributed (it has a dist.mesh)");
        return signalPassFailure();
      }
      func->setAttr(dist::DistDialect::kMeshAttr, mesh);
      if (devicesPerProcess > 1)
        replicate(func, devicesPerProcess);
    }
  }
};

} // namespace
