// dist-split-batch: each replica reads its rows of the global batch through dist.shard, and
// every value that carries the batch is re-typed with the shard's rows.
#include "passes/Dist/Passes.h"
#include "dialect/Graph/IR/GraphDialect.h"
#include "dialect/Interfaces/BatchShardingOpInterface.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseSet.h"

#include <set>

namespace dp::dist {
#define GEN_PASS_DEF_SPLITBATCHPASS
#include "passes/Dist/Passes.h.inc"
} // namespace dp::dist

using namespace mlir;
using namespace dp;
namespace g = dp::graph;

#define DEBUG_TYPE "dist-split-batch"

namespace {

/// Which results of `op` carry the batch in their leading dimension, given which operands
/// do (the op's BatchShardingOpInterface). Fails for an op that reads the batch and cannot be
/// split.
FailureOr<SmallVector<bool>> batchedResults(Operation *op, const llvm::DenseSet<Value> &batched) {
  SmallVector<bool> operands;
  for (Value v : op->getOperands())
    operands.push_back(batched.contains(v));
  if (!llvm::is_contained(operands, true))
    return SmallVector<bool>(op->getNumResults(), false);
  auto sharding = dyn_cast<BatchShardingOpInterface>(op);
  SmallVector<BatchSharding> results;
  if (!sharding || failed(sharding.getResultSharding(operands, results)))
    return failure();
  return llvm::map_to_vector(results, [](BatchSharding s) { return s == BatchSharding::Rows; });
}

LogicalResult splitBatch(func::FuncOp func, dist::MeshAttr mesh) {
  int64_t shards = mesh.microShards();
  OpBuilder b(func.getContext());
  b.setInsertionPointToStart(&func.getBody().front());

  // One shard per (input, replica), created on first use.
  llvm::DenseMap<std::pair<Value, int64_t>, Value> shardOf;
  llvm::DenseSet<Value> batched;
  for (BlockArgument arg : func.getArguments()) {
    auto type = cast<RankedTensorType>(arg.getType());
    StringRef name = func.getArgAttrOfType<StringAttr>(arg.getArgNumber(), g::kInputAttr);
    if (type.getRank() == 0 || type.getDimSize(0) % shards != 0)
      return func.emitError() << "the global batch of input '" << name << "' ("
                              << (type.getRank() ? type.getDimSize(0) : 0)
                              << " rows) cannot be split into " << shards << " equal shards ("
                              << mesh.getDevicesPerProcess() << " per process x "
                              << mesh.getProcesses() << " processes"
                              << (mesh.getAccumulation() > 1
                                      ? " x " + std::to_string(mesh.getAccumulation()) +
                                            " micro-shards"
                                      : std::string())
                              << ")";
    SmallVector<int64_t> shape(type.getShape());
    shape[0] /= shards;
    auto shardType = RankedTensorType::get(shape, type.getElementType());
    // Shards in replica order (use lists are in no useful order), then the uses.
    SmallVector<OpOperand *> uses;
    std::set<int64_t> replicas;
    for (OpOperand &use : arg.getUses())
      if (!isa<func::ReturnOp>(use.getOwner())) {
        uses.push_back(&use);
        replicas.insert(dist::getReplica(use.getOwner()));
      }
    for (int64_t r : replicas) {
      auto op = b.create<dist::ShardOp>(arg.getLoc(), shardType, arg, b.getI64IntegerAttr(r),
                                        b.getI64IntegerAttr(shards));
      if (mesh.getDevicesPerProcess() > 1)
        op->setAttr(dist::DistDialect::kReplicaAttr, b.getI64IntegerAttr(r));
      b.setInsertionPointAfter(op);
      shardOf[{arg, r}] = op;
      batched.insert(op);
    }
    for (OpOperand *use : uses)
      use->set(shardOf.lookup({arg, dist::getReplica(use->getOwner())}));
  }

  for (Operation &op : func.getBody().front().without_terminator()) {
    if (isa<dist::ShardOp>(op))
      continue;
    FailureOr<SmallVector<bool>> rows = batchedResults(&op, batched);
    if (failed(rows))
      return op.emitOpError() << "reads the batch but has no rule to split it across replicas";
    for (auto [result, isBatched] : llvm::zip(op.getResults(), *rows)) {
      if (!isBatched)
        continue;
      auto type = cast<RankedTensorType>(result.getType());
      SmallVector<int64_t> shape(type.getShape());
      if (shape.empty() || shape[0] % shards != 0)
        return op.emitOpError() << "result " << type << " should carry the batch in its rows";
      shape[0] /= shards;
      result.setType(RankedTensorType::get(shape, type.getElementType()));
      batched.insert(result);
    }
  }
  // A step's outputs that carry the batch (the eval step's predictions) are each replica's
  // shard.
  auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
  func.setType(
      FunctionType::get(func.getContext(), func.getArgumentTypes(), ret.getOperandTypes()));
  return success();
}

struct SplitBatchPass : dist::impl::SplitBatchPassBase<SplitBatchPass> {
  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      dist::MeshAttr mesh = dist::getMesh(func);
      if (!mesh || mesh.microShards() == 1)
        continue;
      if (failed(splitBatch(func, mesh)))
        return signalPassFailure();
    }
  }
};

} // namespace
