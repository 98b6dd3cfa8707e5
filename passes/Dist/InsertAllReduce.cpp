// dist-insert-allreduce: one averaged allreduce per parameter's gradient.
#include "dialect/Graph/IR/GraphDialect.h"
#include "dialect/Interfaces/ParameterUpdateOpInterface.h"
#include "passes/Dist/Passes.h"
#include "passes/Pipelines/CompileOptions.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/MapVector.h"

#define DEBUG_TYPE "dist-insert-allreduce"

namespace dp::dist {
#define GEN_PASS_DEF_INSERTALLREDUCEPASS
#include "passes/Dist/Passes.h.inc"
} // namespace dp::dist

using namespace mlir;
using namespace dp;
namespace g = dp::graph;

namespace {

LogicalResult insertAllReduces(func::FuncOp func, dist::MeshAttr mesh) {
  int64_t replicas = mesh.getDevicesPerProcess();
  // The updates of each parameter, by replica, in the order gradients are ready.
  llvm::MapVector<StringRef, SmallVector<ParameterUpdateOpInterface>> byParam;
  for (auto apply : func.getOps<ParameterUpdateOpInterface>()) {
    // Already averaged (dist-sync-batch-norm).
    if (apply.getGradientOperand().get().getDefiningOp<dist::AllReduceOp>())
      continue;
    auto param = apply.getUpdatedParameter().getDefiningOp<g::ParamOp>();
    if (!param)
      return apply->emitOpError("expects its parameter from a graph.param");
    auto &group = byParam[param.getName()];
    if (group.empty())
      group.resize(replicas);
    int64_t r = dist::getReplica(apply);
    if (r < 0 || r >= replicas)
      return apply->emitOpError() << "is on replica " << r << " but the mesh has " << replicas
                                 << " device(s) per process";
    if (group[r])
      return apply->emitOpError() << "is the second update of '" << param.getName()
                                 << "' on replica " << r;
    group[r] = apply;
  }

  OpBuilder b(func.getContext());
  for (auto &[name, group] : byParam) {
    SmallVector<Value> grads;
    Operation *first = nullptr;
    for (int64_t r = 0; r < replicas; ++r) {
      if (!group[r])
        return func.emitError() << "parameter '" << name << "' has no update on replica " << r;
      grads.push_back(group[r].getGradientOperand().get());
      if (!first || group[r]->isBeforeInBlock(first))
        first = group[r];
    }
    // Right before the first update: every replica's gradient is ready there.
    b.setInsertionPoint(first);
    Location loc = group[0].getUpdatedParameter().getLoc();
    auto allreduce = b.create<dist::AllReduceOp>(loc, grads, b.getI64IntegerAttr(replicas),
                                                     IntegerAttr(), b.getStrArrayAttr({name}));
    for (int64_t r = 0; r < replicas; ++r)
      group[r].getGradientOperand().set(allreduce.getResult(r));
  }
  return success();
}

struct InsertAllReducePass : dist::impl::InsertAllReducePassBase<InsertAllReducePass> {
  using InsertAllReducePassBase::InsertAllReducePassBase;
  void runOnOperation() override {
    if (std::string problem = CompileOptions::check("allreduce-precision", allreducePrecision);
        !problem.empty()) {
      getOperation().emitError() << "dist-insert-allreduce: " << problem;
      return signalPassFailure();
    }
    func::FuncOp train = dist::getReplicatedTrainStep(getOperation());
    if (train && failed(insertAllReduces(train, dist::getMesh(train))))
      return signalPassFailure();
    if (train && allreducePrecision == "bf16")
      train->setAttr(dist::kAllReducePrecisionAttr, StringAttr::get(&getContext(), "bf16"));
  }
};

} // namespace
