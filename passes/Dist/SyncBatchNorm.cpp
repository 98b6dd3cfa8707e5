// dist-sync-batch-norm: the statistics that ops need over the global batch (batch
// normalisation's) are averaged across replicas where they are computed (see Passes.td). The
// pass knows no op by name: it asks each op's BatchShardingOpInterface.
#include "dialect/Dist/IR/DistDialect.h"
#include "dialect/Graph/IR/GraphDialect.h"
#include "dialect/Interfaces/BatchShardingOpInterface.h"
#include "dialect/Interfaces/ParameterUpdateOpInterface.h"
#include "passes/Dist/Passes.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/MapVector.h"

#define DEBUG_TYPE "dist-sync-batch-norm"

namespace dp::dist {
#define GEN_PASS_DEF_SYNCBATCHNORMPASS
#include "passes/Dist/Passes.h.inc"
} // namespace dp::dist

using namespace mlir;
using namespace dp;
namespace g = dp::graph;

namespace {

/// The results of `op` that are global statistics, in order.
SmallVector<Value> globalStatistics(BatchShardingOpInterface op) {
  SmallVector<Value> stats;
  for (OpResult r : op->getResults())
    if (op.isGlobalStatistic(r.getResultNumber()))
      stats.push_back(r);
  return stats;
}

/// The ops computing global statistics, grouped across replicas: group k of an op name holds
/// the k-th such op of every replica, indexed by replica.
FailureOr<SmallVector<SmallVector<Operation *>>> replicaGroups(func::FuncOp func,
                                                                int64_t replicas) {
  llvm::MapVector<OperationName, SmallVector<SmallVector<Operation *>>> byName;
  llvm::DenseMap<std::pair<OperationName, int64_t>, unsigned> seen;
  WalkResult walk = func.walk([&](BatchShardingOpInterface op) {
    if (globalStatistics(op).empty())
      return WalkResult::advance();
    int64_t r = dist::getReplica(op);
    if (r < 0 || r >= replicas) {
      op->emitOpError() << "is on replica " << r << " but the mesh has " << replicas
                        << " device(s) per process";
      return WalkResult::interrupt();
    }
    auto &groups = byName[op->getName()];
    unsigned k = seen[{op->getName(), r}]++;
    if (groups.size() <= k)
      groups.emplace_back(replicas);
    groups[k][r] = op;
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return failure();
  SmallVector<SmallVector<Operation *>> all;
  for (auto &[name, groups] : byName)
    for (auto &group : groups) {
      for (int64_t r = 0; r < replicas; ++r)
        if (!group[r])
          return func.emitError() << "replica " << r << " has fewer " << name
                                  << " ops than replica 0";
      all.push_back(group);
    }
  return all;
}

/// The name a statistic travels under: the parameter whose update reads it, else the op's.
std::string statisticName(BatchShardingOpInterface op, OpResult stat) {
  for (Operation *user : stat.getUsers())
    if (auto update = dyn_cast<ParameterUpdateOpInterface>(user))
      if (auto param = update.getUpdatedParameter().getDefiningOp<g::ParamOp>())
        return param.getName().str();
  return op.getStatisticName(stat.getResultNumber());
}

/// Averages the global statistics of one group (replica-major) over every replica of the job
/// right after the last op of the group, and makes every user but the allreduce read the
/// means.
void average(ArrayRef<Operation *> group, int64_t replicas) {
  Operation *last = group.front();
  SmallVector<Value> values;
  for (Operation *op : group) {
    if (last->isBeforeInBlock(op))
      last = op;
    llvm::append_range(values, globalStatistics(cast<BatchShardingOpInterface>(op)));
  }
  SmallVector<std::string> names;
  auto first = cast<BatchShardingOpInterface>(group.front());
  for (Value stat : globalStatistics(first))
    names.push_back(statisticName(first, cast<OpResult>(stat)));
  OpBuilder b(last->getContext());
  b.setInsertionPointAfter(last);
  SmallVector<StringRef> refs(names.begin(), names.end());
  auto allreduce = b.create<dist::AllReduceOp>(last->getLoc(), values,
                                               b.getI64IntegerAttr(replicas), IntegerAttr(),
                                               b.getStrArrayAttr(refs));
  allreduce->setAttr(dist::kSyncAttr, b.getUnitAttr());
  for (auto [value, mean] : llvm::zip(values, allreduce.getResults()))
    Value(value).replaceAllUsesExcept(mean, allreduce);
}

struct SyncBatchNormPass : dist::impl::SyncBatchNormPassBase<SyncBatchNormPass> {
  void runOnOperation() override {
    func::FuncOp train = dist::getReplicatedTrainStep(getOperation());
    if (!train)
      return;
    int64_t replicas = dist::getMesh(train).getDevicesPerProcess();
    auto groups = replicaGroups(train, replicas);
    if (failed(groups))
      return signalPassFailure();
    for (auto &group : *groups)
      average(group, replicas);
  }
};

} // namespace
